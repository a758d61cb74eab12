"""qct: fused quantize-convert-transpose kernels for MXFP4/FP8 on Hopper GPUs.

The package is the CLI and a thin binding: the compiler is the `qct-compile`
binary, the runtime and the numerics reference are shared libraries reached
through their C ABIs (ctypes), so the same package works under any Python.
"""

from qct.version import __version__  # noqa: F401  (one source: the VERSION file)
from qct.runtime import load  # noqa: E402,F401  (the runtime binding; needs no torch to import)
