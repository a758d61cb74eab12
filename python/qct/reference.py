"""ctypes binding of the numerics reference (libqct_reference.so, C ABI in
compiler/include/qct/Reference/qct_ref.h).

numpy arrays in, numpy arrays out; a failed call raises ReferenceError carrying the library's
message. The library is the installed package's qct/lib/libqct_reference.so, else
$QCT_BUILD_DIR/lib's (qct.layout.library_dir()).
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import numpy as np

from qct import layout

FORMATS = ("bf16", "fp16", "fp32", "mxfp4", "mxfp8_e4m3", "mxfp8_e5m2", "fp8_e4m3", "fp8_e5m2")
LAYOUTS = ("row", "col")
SCALES = ("none", "floor", "rceil", "amax", "pow2", "aligned")
SCALE_LAYOUTS = ("row_major", "mn_major")
# Scalar codecs: name -> (enum value, numpy dtype of one code).
SCALARS = {
    "e2m1": (0, np.uint8), "e4m3": (1, np.uint8), "e5m2": (2, np.uint8), "e8m0": (3, np.uint8),
    "bf16": (4, np.uint16), "fp16": (5, np.uint16), "fp32": (6, np.uint32),
}


class ReferenceError(RuntimeError):
    """A call into the reference failed; the message is the library's."""


class ReferenceUnavailable(ReferenceError):
    """libqct_reference.so is not there (not built or installed) or not loadable."""


class _Source(ctypes.Structure):
    _fields_ = [("format", ctypes.c_int), ("data", ctypes.c_void_p), ("scales", ctypes.c_void_p),
                ("M", ctypes.c_int64), ("K", ctypes.c_int64)]


class _Output(ctypes.Structure):
    _fields_ = [("format", ctypes.c_int), ("layout", ctypes.c_int), ("scale", ctypes.c_int),
                ("scale_layout", ctypes.c_int), ("via_bf16", ctypes.c_int),
                ("data", ctypes.c_void_p), ("data_bytes", ctypes.c_size_t),
                ("scales", ctypes.c_void_p), ("scales_bytes", ctypes.c_size_t)]


class _Ragged(ctypes.Structure):
    _fields_ = [("offsets", ctypes.c_void_p), ("offsets_i64", ctypes.c_int),
                ("G", ctypes.c_int64), ("pad_groups_to", ctypes.c_int64),
                ("padded_offsets", ctypes.c_void_p), ("untouched_tail", ctypes.c_int)]


_lib: Optional[ctypes.CDLL] = None


def library_path() -> Path:
    return layout.library_dir() / "libqct_reference.so"


def library() -> ctypes.CDLL:
    """The loaded library; raises ReferenceUnavailable with the path it tried."""
    global _lib
    if _lib is None:
        path = library_path()
        if not path.exists():
            raise ReferenceUnavailable(
                f"the qct reference library: {layout.missing_library(path, 'qct_reference')}")
        try:
            lib = ctypes.CDLL(str(path))
        except OSError as e:
            raise ReferenceUnavailable(f"{path}: {e}") from e
        for name in ("qct_ref_output_sizes", "qct_ref_convert", "qct_ref_decode",
                     "qct_ref_encode", "qct_ref_div_f32", "qct_ref_set_threads"):
            if not hasattr(lib, name):
                raise ReferenceUnavailable(
                    f"{path} lacks {name}: it is older than this binding; rebuild `qct_reference`")
        err = (ctypes.c_char_p, ctypes.c_size_t)
        vp, sz = ctypes.c_void_p, ctypes.c_size_t
        lib.qct_ref_output_sizes.argtypes = (ctypes.POINTER(_Source), ctypes.POINTER(_Output),
                                             ctypes.POINTER(_Ragged), ctypes.POINTER(sz),
                                             ctypes.POINTER(sz)) + err
        lib.qct_ref_convert.argtypes = (ctypes.POINTER(_Source), ctypes.POINTER(_Output),
                                        ctypes.POINTER(_Ragged)) + err
        lib.qct_ref_decode.argtypes = (ctypes.c_int, vp, vp, sz) + err
        lib.qct_ref_encode.argtypes = (ctypes.c_int, vp, vp, sz) + err
        lib.qct_ref_div_f32.argtypes = (vp, vp, vp, sz) + err
        lib.qct_ref_set_threads.argtypes = (ctypes.c_int,)
        lib.qct_ref_set_threads.restype = ctypes.c_int
        _lib = lib
    return _lib


def _check(rc: int, buf: ctypes.Array) -> None:
    if rc != 0:
        raise ReferenceError(buf.value.decode(errors="replace"))


def _ptr(a: Optional[np.ndarray]) -> Optional[int]:
    return None if a is None else a.ctypes.data


def set_threads(n: int) -> int:
    """Threads convert() may use (process-wide, default 1); returns the previous value. The
    output bits never depend on it."""
    return int(library().qct_ref_set_threads(n))


def decode(scalar: str, codes: np.ndarray) -> np.ndarray:
    """Exact float64 values of codes (dtype per SCALARS)."""
    enum, dtype = SCALARS[scalar]
    codes = np.ascontiguousarray(codes, dtype=dtype)
    out = np.empty(codes.shape, np.float64)
    buf = ctypes.create_string_buffer(512)
    _check(library().qct_ref_decode(enum, _ptr(codes), _ptr(out), codes.size, buf, 512), buf)
    return out


def encode(scalar: str, values: np.ndarray) -> np.ndarray:
    """round_F of exact float64 values, as codes (dtype per SCALARS)."""
    enum, dtype = SCALARS[scalar]
    values = np.ascontiguousarray(values, dtype=np.float64)
    out = np.empty(values.shape, dtype)
    buf = ctypes.create_string_buffer(512)
    _check(library().qct_ref_encode(enum, _ptr(values), _ptr(out), values.size, buf, 512), buf)
    return out


def div_f32(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """fl32(a / b) of exact doubles, as float32."""
    a = np.ascontiguousarray(a, np.float64)
    b = np.ascontiguousarray(b, np.float64)
    out = np.empty(a.shape, np.uint32)
    buf = ctypes.create_string_buffer(512)
    _check(library().qct_ref_div_f32(_ptr(a), _ptr(b), _ptr(out), a.size, buf, 512), buf)
    return out.view(np.float32)


@dataclass
class Source:
    """A row-major [M, K] source: data and scales as the C ABI lays them out."""
    format: str
    data: np.ndarray
    scales: Optional[np.ndarray]
    M: int
    K: int


@dataclass
class Output:
    format: str
    layout: str = "row"
    scale: str = "none"
    scale_layout: str = "row_major"
    via_bf16: bool = False


@dataclass
class Ragged:
    offsets: np.ndarray  # int32 or int64, G + 1 entries
    pad_groups_to: int = 1
    # The spec's "capacity_tail": "untouched": col outputs leave their capacity tail as it was.
    untouched_tail: bool = False


@dataclass
class Result:
    data: np.ndarray               # raw bytes (uint8) of the data buffer
    scales: Optional[np.ndarray]   # uint8 (e8m0) or float32, flat; None without scales
    padded_offsets: Optional[np.ndarray]


def _structs(src: Source, out: Output, ragged: Optional[Ragged]):
    data = np.ascontiguousarray(src.data)
    scales = None if src.scales is None else np.ascontiguousarray(src.scales)
    s = _Source(FORMATS.index(src.format), _ptr(data), _ptr(scales), src.M, src.K)
    o = _Output(FORMATS.index(out.format), LAYOUTS.index(out.layout), SCALES.index(out.scale),
                SCALE_LAYOUTS.index(out.scale_layout), int(out.via_bf16), None, 0, None, 0)
    r = None
    keep = [data, scales]
    if ragged is not None:
        offs = np.ascontiguousarray(ragged.offsets)
        if offs.dtype not in (np.int32, np.int64):
            raise TypeError("ragged.offsets must be int32 or int64")
        keep.append(offs)
        r = _Ragged(_ptr(offs), int(offs.dtype == np.int64), offs.size - 1, ragged.pad_groups_to,
                    None, int(ragged.untouched_tail))
    return s, o, r, keep


def output_sizes(src: Source, out: Output, ragged: Optional[Ragged] = None) -> tuple[int, int]:
    s, o, r, _keep = _structs(src, out, ragged)
    d, sc = ctypes.c_size_t(), ctypes.c_size_t()
    buf = ctypes.create_string_buffer(512)
    rp = ctypes.byref(r) if r is not None else None
    _check(library().qct_ref_output_sizes(ctypes.byref(s), ctypes.byref(o), rp, ctypes.byref(d),
                                          ctypes.byref(sc), buf, 512), buf)
    return d.value, sc.value


def convert(src: Source, out: Output, ragged: Optional[Ragged] = None,
            fill: int = 0) -> Result:
    """One output of the reference; buffers sized by output_sizes, every byte defined: the
    buffers start as the byte `fill`, which only an untouched capacity tail keeps."""
    data_bytes, scales_bytes = output_sizes(src, out, ragged)
    s, o, r, _keep = _structs(src, out, ragged)
    data = np.full(data_bytes, fill, np.uint8)
    scale_dtype = np.uint8 if out.format.startswith("mx") else np.float32
    scales = np.full(scales_bytes, fill, np.uint8).view(scale_dtype) if scales_bytes else None
    o.data, o.data_bytes = _ptr(data), data_bytes
    o.scales, o.scales_bytes = _ptr(scales), scales_bytes
    padded = None
    if r is not None:
        padded = np.empty(r.G + 1, np.int64 if r.offsets_i64 else np.int32)
        r.padded_offsets = _ptr(padded)
    buf = ctypes.create_string_buffer(512)
    rp = ctypes.byref(r) if r is not None else None
    _check(library().qct_ref_convert(ctypes.byref(s), ctypes.byref(o), rp, buf, 512), buf)
    return Result(data, scales, padded)


def convert_raw(src: Source, out: Output, ragged: Optional[Ragged], data_bytes: int,
                scales_bytes: int) -> None:
    """convert with caller-chosen capacities (for testing the size checks); raises on error."""
    s, o, r, _keep = _structs(src, out, ragged)
    data = np.zeros(max(data_bytes, 1), np.uint8)
    scales = np.zeros(max(scales_bytes, 1), np.uint8)
    o.data, o.data_bytes = _ptr(data), data_bytes
    o.scales, o.scales_bytes = _ptr(scales), scales_bytes
    buf = ctypes.create_string_buffer(512)
    rp = ctypes.byref(r) if r is not None else None
    _check(library().qct_ref_convert(ctypes.byref(s), ctypes.byref(o), rp, buf, 512), buf)
