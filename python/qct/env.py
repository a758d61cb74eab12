"""Every environment variable qct reads, declared once with its type, default and meaning.

`qct env` prints this table; code reads variables only through `get`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from qct.layout import CHECKOUT


@dataclass(frozen=True)
class EnvVar:
    name: str
    type: str
    default: str
    doc: str


# The checkout's root when the package runs from one (qct.layout.CHECKOUT). An installed package
# has none: what it needs it finds through qct.layout, which code should use instead.
REPO_ROOT = CHECKOUT if CHECKOUT is not None else Path(__file__).resolve().parents[2]

VARIABLES: tuple[EnvVar, ...] = (
    EnvVar("QCT_BUILD_DIR", "path", str(CHECKOUT / "build") if CHECKOUT is not None else "",
           "CMake build folder holding bin/qct-compile and lib/libqct_*.so (an installed qct "
           "uses its own qct/lib and qct/bin first)"),
    EnvVar("QCT_TORCH_KERNELS", "string", "cpp",
           "qct.ops' CUDA kernels: cpp (built once with torch.utils.cpp_extension where torch's "
           "toolchain is there, else python) or python"),
    EnvVar("QCT_COMMIT", "string", "",
           "commit recorded in benchmark and GPU-tier results where the tree has no .git"),
)
# The runtime's own variables (cache folder, cache switches, dump folder, verbosity) are declared in
# the runtime library and read from it through its C ABI, so each is declared once.

_BY_NAME = {v.name: v for v in VARIABLES}


def get(name: str) -> str:
    """The variable's value, or its default (a declared name only)."""
    var = _BY_NAME[name]
    value = os.environ.get(name)
    return value if value not in (None, "") else var.default


def build_dir() -> Path:
    return Path(get("QCT_BUILD_DIR"))
