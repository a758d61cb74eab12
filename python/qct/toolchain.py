"""The NVRTC and CUDA driver the runtime loads: where the pip wheel's NVRTC is, and what was loaded.

The runtime (libqct_runtime.so) searches libnvrtc.so.13 in one order (docs/runtime.md):
QCT_NVRTC_PATH, a libnvrtc.so.13 already in the process (torch's), CUDA_HOME, CUDA_PATH, the pip
wheel nvidia-cuda-nvrtc, /usr/local/cuda, the loader path. The wheel (which torch's CUDA 13 builds
pull in) lives in site-packages, which the C++ runtime cannot see, so the binding names its folder
in QCT_NVRTC_WHEEL_DIR before anything can load NVRTC: qct._ffi calls `export_nvrtc_wheel_dir` on
import. The driver, libcuda.so.1, comes with the NVIDIA driver; no wheel ships it.

This module imports nothing of qct at import time (qct._ffi imports it).
"""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path
from typing import Any

WHEEL = "nvidia-cuda-nvrtc"
WHEEL_ENV = "QCT_NVRTC_WHEEL_DIR"
SONAME = "libnvrtc.so.13"
# Where the CUDA 13 wheels put their libraries: site-packages/nvidia/cu13/lib (the CUDA 12 ones
# used nvidia/cuda_nvrtc/lib and libnvrtc.so.12, which this runtime does not load).
_WHEEL_LIB = ("cu13", "lib")

# Whether export_nvrtc_wheel_dir set WHEEL_ENV in this process (rather than the user).
exported = False


def nvrtc_wheel_dir() -> Path | None:
    """The lib folder holding the nvidia-cuda-nvrtc wheel's libnvrtc.so.13, in the first
    site-packages on sys.path that has one (the `nvidia` namespace package's order), or None."""
    try:
        spec = importlib.util.find_spec("nvidia")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for root in spec.submodule_search_locations:
        folder = Path(root, *_WHEEL_LIB)
        if (folder / SONAME).is_file():
            return folder.absolute()
    return None


def export_nvrtc_wheel_dir() -> None:
    """Sets QCT_NVRTC_WHEEL_DIR to the wheel's folder where the wheel is installed and the
    variable unset (child processes inherit it, so a qct host program started from here finds
    the same NVRTC)."""
    global exported
    if os.environ.get(WHEEL_ENV):
        return
    folder = nvrtc_wheel_dir()
    if folder is not None:
        os.environ[WHEEL_ENV] = str(folder)
        exported = True


def info() -> dict[str, Any]:
    """qct_toolchain_info_json: {"nvrtc": {...}, "driver": {...}}; loads both if not yet loaded
    (a missing one is reported in its "error", not raised)."""
    from qct import _ffi

    raw = _ffi.lib().qct_toolchain_info_json()
    if raw is None:
        from qct.runtime import _raise_last

        _raise_last(_ffi.lib().qct_last_status())
    return json.loads(raw)
