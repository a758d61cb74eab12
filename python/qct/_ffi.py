"""ctypes declarations of the runtime's C ABI (runtime/include/qct/qct.h).

The runtime is reached through its C ABI rather than an extension module, so the
same package works under any Python (3.11 on the development machine, 3.12 on
the GPU machine). Keep this file in step with qct.h (QCT_RUNTIME_ABI_VERSION).
"""

from __future__ import annotations

import ctypes
import functools
from ctypes import POINTER, c_char_p, c_int, c_int32, c_int64, c_size_t, c_uint32, c_uint64, c_void_p
from pathlib import Path

from qct import layout
from qct.cli import QctError
from qct.env import build_dir  # noqa: F401  (qct._ffi.build_dir, for callers that predate qct.layout)

ABI_VERSION = 1
MAX_DIMS = 4

# qct_status
OK = 0
STATUS_NAMES = {
    0: "QCT_OK", 1: "QCT_ERR_INVALID_ARGUMENT", 2: "QCT_ERR_METADATA", 3: "QCT_ERR_SCHEDULE",
    4: "QCT_ERR_NVRTC_UNAVAILABLE", 5: "QCT_ERR_COMPILE", 6: "QCT_ERR_NO_DRIVER",
    7: "QCT_ERR_NO_DEVICE", 8: "QCT_ERR_VALIDATION", 9: "QCT_ERR_CUDA", 10: "QCT_ERR_BAD_OFFSETS",
    11: "QCT_ERR_IO", 12: "QCT_ERR_INTERNAL", 13: "QCT_ERR_COMPILER_UNAVAILABLE", 14: "QCT_ERR_SPEC",
}

# qct_dtype
DTYPES = {
    "u8": 1, "i8": 2, "u16": 3, "i16": 4, "bf16": 5, "f16": 6, "f32": 7, "i32": 8, "i64": 9,
    "fp8_e4m3": 10, "fp8_e5m2": 11, "e8m0": 12, "fp4_e2m1_x2": 13, "u32": 14, "f64": 15,
}

# qct_error_field
FIELD_MESSAGE, FIELD_LOG, FIELD_OPTIONS, FIELD_SOURCE, FIELD_VERSIONS = range(5)

ORIGINS = {0: "compiled", 1: "memory", 2: "disk"}


class Tensor(ctypes.Structure):
    _fields_ = [("data", c_void_p), ("ndim", c_int32), ("dtype", c_int32),
                ("shape", c_int64 * MAX_DIMS), ("strides", c_int64 * MAX_DIMS)]


class LoadOptions(ctypes.Structure):
    _fields_ = [("arch", c_char_p), ("schedule", POINTER(c_char_p)), ("num_schedule", c_size_t),
                ("extra_nvrtc_options", POINTER(c_char_p)), ("num_extra_nvrtc_options", c_size_t),
                ("disable_cache", c_int32)]


class KernelStats(ctypes.Structure):
    _fields_ = [("found", c_int32), ("registers", c_int32), ("stack_frame_bytes", c_int64),
                ("spill_store_bytes", c_int64), ("spill_load_bytes", c_int64),
                ("local_memory_bytes", c_int64), ("shared_memory_bytes", c_int64)]


class BufferInfo(ctypes.Structure):
    _fields_ = [("name", c_char_p), ("field", c_char_p), ("dtype", c_char_p),
                ("is_output", c_int32), ("ndim", c_int32)]


class LaunchPlan(ctypes.Structure):
    _fields_ = [("M", c_int64), ("K", c_int64), ("G", c_int64), ("grid", c_uint32 * 3),
                ("block", c_uint32 * 3), ("dynamic_smem_bytes", c_uint32)]


class EnvVar(ctypes.Structure):
    _fields_ = [("name", c_char_p), ("type", c_char_p), ("default_value", c_char_p),
                ("doc", c_char_p), ("affects_output", c_int32)]


_KERNEL = c_void_p  # qct_kernel *

_SIGNATURES: dict[str, tuple[object, list[object]]] = {
    "qct_version": (c_char_p, []),
    "qct_abi_version": (c_int, []),
    "qct_device_headers_hash": (c_char_p, []),
    "qct_status_name": (c_char_p, [c_int]),
    "qct_last_status": (c_int, []),
    "qct_last_error": (c_char_p, []),
    "qct_last_error_field": (c_char_p, [c_int]),
    "qct_clear_error": (None, []),
    "qct_kernel_load": (c_int, [c_char_p, c_char_p, POINTER(LoadOptions), POINTER(_KERNEL)]),
    "qct_spec_compile": (c_int, [c_char_p, POINTER(c_char_p), POINTER(c_char_p)]),
    "qct_kernel_free": (None, [_KERNEL]),
    "qct_kernel_name": (c_char_p, [_KERNEL]),
    "qct_kernel_entry": (c_char_p, [_KERNEL]),
    "qct_kernel_metadata_json": (c_char_p, [_KERNEL]),
    "qct_kernel_arch": (c_char_p, [_KERNEL]),
    "qct_kernel_cache_key": (c_char_p, [_KERNEL]),
    "qct_kernel_compile_log": (c_char_p, [_KERNEL]),
    "qct_kernel_options": (c_char_p, [_KERNEL]),
    "qct_kernel_schedule": (c_char_p, [_KERNEL]),
    "qct_kernel_origin": (c_int, [_KERNEL]),
    "qct_kernel_stats_get": (c_int, [_KERNEL, POINTER(KernelStats)]),
    "qct_kernel_cubin": (c_int, [_KERNEL, POINTER(c_void_p), POINTER(c_size_t)]),
    "qct_kernel_num_buffers": (c_size_t, [_KERNEL]),
    "qct_kernel_buffer_info": (c_int, [_KERNEL, c_size_t, POINTER(BufferInfo)]),
    "qct_kernel_buffer_shape": (c_int, [_KERNEL, c_size_t, c_int64, c_int64, c_int64,
                                        POINTER(c_int64), POINTER(c_int32)]),
    "qct_eval_expr": (c_int, [c_char_p, c_int64, c_int64, c_int64, POINTER(c_char_p), c_size_t,
                              POINTER(c_int64)]),
    "qct_kernel_validate": (c_int, [_KERNEL, POINTER(Tensor), c_size_t, POINTER(LaunchPlan)]),
    "qct_kernel_prepare": (c_int, [_KERNEL]),
    "qct_kernel_launch": (c_int, [_KERNEL, POINTER(Tensor), c_size_t, c_void_p]),
    "qct_kernel_check_errors": (c_int, [_KERNEL, c_void_p, POINTER(c_uint32)]),
    "qct_kernel_function": (c_int, [_KERNEL, POINTER(c_void_p)]),
    "qct_env_count": (c_size_t, []),
    "qct_env_at": (POINTER(EnvVar), [c_size_t]),
    "qct_env_value": (c_char_p, [c_char_p]),
    "qct_cache_dir": (c_char_p, []),
    "qct_cache_info_json": (c_char_p, []),
    "qct_cache_list_json": (c_char_p, []),
    "qct_cache_clear": (c_int, [POINTER(c_uint64)]),
    "qct_cache_clear_memory": (None, []),
    "qct_nvrtc_version": (c_int, [POINTER(c_int), POINTER(c_int)]),
    "qct_default_arch": (c_int, [POINTER(c_char_p)]),
    "qct_driver_proc": (c_void_p, [c_char_p]),
    "qct_toolchain_info_json": (c_char_p, []),
}


class LibraryNotFound(QctError):
    """libqct_runtime.so is not there: not built, not installed, or QCT_BUILD_DIR points elsewhere."""


def library_path() -> Path:
    """The installed package's qct/lib/libqct_runtime.so, else QCT_BUILD_DIR's (qct.layout)."""
    return layout.library_dir() / "libqct_runtime.so"


@functools.lru_cache(maxsize=None)
def lib() -> ctypes.CDLL:
    """The runtime library with every function's signature declared (loaded once)."""
    path = library_path()
    if not path.is_file():
        raise LibraryNotFound(f"the qct runtime library: {layout.missing_library(path, 'qct_runtime')}")
    handle = ctypes.CDLL(str(path))
    for name, (restype, argtypes) in _SIGNATURES.items():
        fn = getattr(handle, name)
        fn.restype = restype
        fn.argtypes = argtypes
    abi = handle.qct_abi_version()
    if abi != ABI_VERSION:
        raise LibraryNotFound(f"{path} has C ABI version {abi}, this package expects {ABI_VERSION}; "
                              "rebuild the runtime or update the package")
    return handle


def text(value: bytes | None) -> str:
    return value.decode("utf-8", "replace") if value else ""


def string_array(items: list[str]) -> ctypes.Array[c_char_p]:
    return (c_char_p * max(1, len(items)))(*[s.encode() for s in items])


# The runtime cannot see site-packages: before anything loads NVRTC, name the folder where the pip
# wheel nvidia-cuda-nvrtc put libnvrtc.so.13 (QCT_NVRTC_WHEEL_DIR, see qct.toolchain).
from qct import toolchain as _toolchain  # noqa: E402

_toolchain.export_nvrtc_wheel_dir()
