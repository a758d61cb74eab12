"""The qct runtime from Python: load a generated kernel, allocate its outputs, launch it.

    import qct
    k = qct.load("generated/mxfp4_row_to_fp8_e4m3_col_ragged.cu", schedule={"QCT_THREADS": 128})
    outs = k.allocate_outputs(M, K, offsets=offsets)       # torch tensors, by buffer name
    k(src=x, src_scales=s, offsets=offsets, **outs)         # or positionally, in metadata order
    k.check_errors()                                        # synchronizes; raises on bad offsets

Tensors may be torch tensors, or any object with `__cuda_array_interface__` or
`__dlpack__`. torch is imported only when a kernel meets a torch tensor or
allocates outputs. Everything goes through the runtime's C ABI (qct._ffi).
"""

from __future__ import annotations

import ctypes
import json
import operator
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping

from qct import _fastlaunch, _ffi
from qct.errors import QctError


class RuntimeError_(QctError):
    """A runtime failure, with the C ABI's status and structured fields.

    str(e) is the full report: for compile errors the NVRTC log, the options,
    the numbered source and the versions.
    """

    def __init__(self, status: int, message: str, *, log: str = "", options: str = "",
                 source: str = "", versions: str = "", summary: str = ""):
        super().__init__(message)
        self.status = status
        self.status_name = _ffi.STATUS_NAMES.get(status, f"status {status}")
        self.summary = summary or message.splitlines()[0] if message else ""
        self.log = log
        self.options = options
        self.source = source
        self.versions = versions


# The name users see; `qct.runtime.RuntimeError` would shadow the builtin inside this module.
QctRuntimeError = RuntimeError_


def _raise_last(status: int) -> None:
    lib = _ffi.lib()
    raise RuntimeError_(
        status, _ffi.text(lib.qct_last_error()),
        summary=_ffi.text(lib.qct_last_error_field(_ffi.FIELD_MESSAGE)),
        log=_ffi.text(lib.qct_last_error_field(_ffi.FIELD_LOG)),
        options=_ffi.text(lib.qct_last_error_field(_ffi.FIELD_OPTIONS)),
        source=_ffi.text(lib.qct_last_error_field(_ffi.FIELD_SOURCE)),
        versions=_ffi.text(lib.qct_last_error_field(_ffi.FIELD_VERSIONS)))


def _check(status: int) -> None:
    if status != _ffi.OK:
        _raise_last(status)


# --- Tensors ------------------------------------------------------------------------------------

TORCH_DTYPES = {
    "torch.uint8": "u8", "torch.int8": "i8", "torch.uint16": "u16", "torch.int16": "i16",
    "torch.bfloat16": "bf16", "torch.float16": "f16", "torch.float32": "f32", "torch.int32": "i32",
    "torch.int64": "i64", "torch.float8_e4m3fn": "fp8_e4m3", "torch.float8_e5m2": "fp8_e5m2",
    "torch.float8_e8m0fnu": "e8m0", "torch.float4_e2m1fn_x2": "fp4_e2m1_x2",
    "torch.uint32": "u32", "torch.float64": "f64",
}
_TYPESTRS = {"u1": "u8", "i1": "i8", "u2": "u16", "i2": "i16", "f2": "f16", "f4": "f32",
             "i4": "i32", "u4": "u32", "i8": "i64", "f8": "f64"}
_DLPACK = {(0, 8): "i8", (0, 16): "i16", (0, 32): "i32", (0, 64): "i64", (1, 8): "u8",
           (1, 16): "u16", (1, 32): "u32", (2, 16): "f16", (2, 32): "f32", (2, 64): "f64",
           (4, 16): "bf16"}
_KDLCUDA = 2


def _is_torch(x: object) -> bool:
    return type(x).__module__.startswith("torch") and hasattr(x, "data_ptr")


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


def _describe(name: str, x: object, keep: list[object], is_output: bool = False) -> _ffi.Tensor:
    """A qct_tensor for x (strides in elements). `keep` holds objects that must outlive the call;
    `is_output`: the kernel writes x, so a read-only array is refused."""
    if _is_torch(x):
        if not x.is_cuda:  # type: ignore[attr-defined]
            raise QctError(f"argument '{name}': a CUDA tensor is required, found one on {x.device}")  # type: ignore[attr-defined]
        dtype = TORCH_DTYPES.get(str(x.dtype))  # type: ignore[attr-defined]
        if dtype is None:
            raise QctError(f"argument '{name}': unsupported torch dtype {x.dtype}")  # type: ignore[attr-defined]
        return _tensor(name, x.data_ptr(), dtype, tuple(x.shape), tuple(x.stride()))  # type: ignore[attr-defined]
    cai = getattr(x, "__cuda_array_interface__", None)
    if cai is not None:
        return _tensor(name, *_from_cuda_array_interface(name, cai, is_output))
    if hasattr(x, "__dlpack__"):
        capsule = x.__dlpack__()
        keep.append(capsule)  # unconsumed: the capsule's destructor frees it after the call
        get = ctypes.pythonapi.PyCapsule_GetPointer
        get.restype = ctypes.c_void_p
        get.argtypes = [ctypes.py_object, ctypes.c_char_p]
        # DLManagedTensor starts with its DLTensor.
        t = _DLTensor.from_address(get(capsule, b"dltensor"))
        if t.device.device_type != _KDLCUDA:
            raise QctError(f"argument '{name}': a CUDA (kDLCUDA) tensor is required, found "
                           f"device type {t.device.device_type}")
        key = (t.dtype.code, t.dtype.bits)
        dtype = _DLPACK.get(key) or ("u8" if t.dtype.bits == 8 else None)
        if dtype is None or t.dtype.lanes != 1:
            raise QctError(f"argument '{name}': unsupported DLPack dtype code {key[0]} bits {key[1]}")
        shape = tuple(t.shape[i] for i in range(t.ndim))
        strides = tuple(t.strides[i] for i in range(t.ndim)) if t.strides else None
        return _tensor(name, (t.data or 0) + t.byte_offset, dtype, shape, strides)
    raise QctError(f"argument '{name}': {type(x).__name__} is not a tensor (need torch, "
                   "__cuda_array_interface__ or __dlpack__)")


def _int_tuple(name: str, what: str, value: object) -> tuple[int, ...]:
    """value as a tuple of Python ints (a tuple or list of integers, numpy's included)."""
    if not isinstance(value, (tuple, list)):
        raise QctError(f"argument '{name}': __cuda_array_interface__ {what} must be a tuple of "
                       f"integers, found {type(value).__name__}")
    try:
        # operator.index takes every integer type (numpy's too) and refuses floats and strings.
        return tuple(operator.index(v) for v in value)
    except TypeError:
        raise QctError(f"argument '{name}': __cuda_array_interface__ {what} must be a tuple of "
                       f"integers, found {value!r}") from None


def _from_cuda_array_interface(name: str, cai: object, is_output: bool
                               ) -> tuple[int, str, tuple[int, ...], tuple[int, ...] | None]:
    """(pointer, dtype, shape, element strides) from a __cuda_array_interface__ dict; every rule
    of the protocol qct relies on is checked here, so a malformed dict is one QctError naming the
    argument, never a KeyError or a silently wrong launch."""
    where = f"argument '{name}': __cuda_array_interface__"
    if not isinstance(cai, dict):
        raise QctError(f"{where} must be a dict, found {type(cai).__name__}")
    missing = [k for k in ("shape", "typestr", "data") if k not in cai]
    if missing:
        raise QctError(f"{where} lacks the required key(s) {', '.join(missing)}")
    if cai.get("mask") is not None:
        raise QctError(f"{where} has a mask; masked arrays are not supported (pass the data "
                       "without the mask)")
    shape = _int_tuple(name, "shape", cai["shape"])
    typestr = cai["typestr"]
    dtype = _TYPESTRS.get(typestr[1:]) if isinstance(typestr, str) else None
    if dtype is None or typestr[0] not in "<>|=":
        raise QctError(f"{where} typestr {typestr!r} is not supported (supported: "
                       f"{', '.join('<' + t for t in _TYPESTRS)})")
    itemsize = int(typestr[2:])
    # The kernels read and write little-endian data; '=' is the host's order.
    big = typestr[0] == ">" or (typestr[0] == "=" and sys.byteorder == "big")
    if big and itemsize > 1:
        raise QctError(f"{where} typestr {typestr!r} is big-endian; the kernels need little-endian "
                       f"data ('<{typestr[1:]}')")
    data = cai["data"]
    if not (isinstance(data, (tuple, list)) and len(data) == 2):
        raise QctError(f"{where} data must be a (pointer, read_only) pair, found {data!r}")
    try:
        ptr = operator.index(data[0] or 0)  # a pointer of None: an empty array
    except TypeError:
        raise QctError(f"{where} data pointer must be an integer, found {data[0]!r}") from None
    if is_output and data[1]:
        raise QctError(f"{where} marks the array read-only, but '{name}' is an output the kernel "
                       "writes; pass a writable array")
    strides = cai.get("strides")
    if strides is not None:
        strides = _int_tuple(name, "strides", strides)
        if len(strides) != len(shape):
            raise QctError(f"{where} has {len(strides)} strides for {len(shape)} dims; give one "
                           "stride per dim (or None for contiguous)")
        if any(s % itemsize for s in strides):
            raise QctError(f"argument '{name}': byte strides {strides} are not a multiple of "
                           f"the element size {itemsize}")
        strides = tuple(s // itemsize for s in strides)
    return ptr, dtype, shape, strides


# What the C fields hold (void*, int64_t): a Python int outside these would be stored truncated,
# so a dimension of 2^64 + 64 would be validated as 64.
_POINTER_RANGE = (0, 1 << 64, "[0, 2^64)")
_DIM_RANGE = (0, 1 << 63, "[0, 2^63)")
_STRIDE_RANGE = (-(1 << 63), 1 << 63, "[-2^63, 2^63)")


def _in_range(name: str, what: str, value: int, bounds: tuple[int, int, str]) -> int:
    lo, hi, text = bounds
    if not lo <= value < hi:
        raise QctError(f"argument '{name}': {what} {value} is out of range (must be in {text})")
    return value


def _tensor(name: str, ptr: int, dtype: str, shape: tuple[int, ...],
            strides: tuple[int, ...] | None) -> _ffi.Tensor:
    if len(shape) > _ffi.MAX_DIMS:
        raise QctError(f"argument '{name}': {len(shape)} dims (at most {_ffi.MAX_DIMS})")
    if strides is not None and len(strides) != len(shape):
        raise QctError(f"argument '{name}': {len(strides)} strides for {len(shape)} dims")
    t = _ffi.Tensor()
    t.data = _in_range(name, "pointer", ptr, _POINTER_RANGE) or None
    t.ndim = len(shape)
    t.dtype = _ffi.DTYPES[dtype]
    for i, d in enumerate(shape):
        t.shape[i] = _in_range(name, f"dim {i}", d, _DIM_RANGE)
    if strides is not None:
        if strides == (0,) * len(shape) and len(shape):
            # All-zero means "contiguous" in the C ABI; only a broadcast gives zeros here (an
            # empty tensor's strides say nothing: torch may report zeros for it).
            if any(d > 1 for d in shape) and all(d > 0 for d in shape):
                raise QctError(f"argument '{name}': broadcast (zero-stride) tensors are not supported")
        for i, s in enumerate(strides):
            t.strides[i] = _in_range(name, f"stride {i}", s, _STRIDE_RANGE)
    return t


def _stream_handle(stream: object, tensors: Iterable[object]) -> int:
    if stream is None:
        for x in tensors:
            if _is_torch(x):
                return _torch_current_stream(x.device.index)  # type: ignore[attr-defined]
        return 0
    if isinstance(stream, int):
        return stream
    for attr in ("cuda_stream", "handle", "ptr"):
        value = getattr(stream, attr, None)
        if value is not None:
            return int(value)
    raise QctError(f"stream: cannot get a CUstream from {type(stream).__name__}")


def _torch_current_stream(device_index: int | None = None) -> int:
    """torch's current CUstream for a device (the current one by default). Read through torch's
    raw-stream call, which also answers inside a compiled region, where current_stream() is a
    torch.Stream without a cuda_stream."""
    import torch

    index = torch.cuda.current_device() if device_index is None else device_index
    return int(torch._C._cuda_getCurrentRawStream(index))


# --- Kernels -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Buffer:
    name: str
    field: str
    dtype: str
    is_output: bool
    ndim: int
    element: str = ""  # the codes of a u8 buffer (metadata "element"), e.g. "fp8_e4m3"


@dataclass(frozen=True)
class LaunchPlan:
    M: int
    K: int
    G: int
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    dynamic_smem_bytes: int


_TORCH_ALLOC = {"u8": "uint8", "u16": "int16", "bf16": "bfloat16", "f16": "float16",
                "f32": "float32", "i32": "int32", "i64": "int64"}
# A raw-byte buffer's codes ("element" in the metadata) as torch's own 8-bit types.
TORCH_ELEMENTS = {"fp8_e4m3": "float8_e4m3fn", "fp8_e5m2": "float8_e5m2",
                  "e8m0": "float8_e8m0fnu", "fp4_e2m1_x2": "float4_e2m1fn_x2"}


def torch_dtype(buffer: "Buffer", native: bool = True) -> Any:
    """The torch dtype of a buffer: its codes' own type (float8_e4m3fn, float8_e8m0fnu,
    float4_e2m1fn_x2, ...) with `native`, else the raw storage type (uint8 for codes)."""
    import torch

    if native and buffer.element:
        return getattr(torch, TORCH_ELEMENTS[buffer.element])
    return getattr(torch, _TORCH_ALLOC[buffer.dtype])


class Kernel:
    """A loaded kernel (compiled through the runtime's caches). Call it to launch."""

    def __init__(self, cuda_source: str | Path, metadata: str | Path | None = None, *,
                 schedule: Mapping[str, int] | Iterable[str] | None = None,
                 arch: str | None = None, disable_cache: bool = False,
                 extra_nvrtc_options: Iterable[str] = ()):
        """From generated CUDA source (a path or the text) and metadata (text, a path, or None
        for the .json beside the source)."""
        lib = _ffi.lib()
        sched = [f"{k}={v}" for k, v in schedule.items()] if isinstance(schedule, Mapping) \
            else list(schedule or [])
        extra = list(extra_nvrtc_options)
        self._keep = (_ffi.string_array(sched), _ffi.string_array(extra))
        opts = _ffi.LoadOptions(arch.encode() if arch else None, self._keep[0], len(sched),
                                self._keep[1], len(extra), int(disable_cache))
        handle = ctypes.c_void_p()
        meta = None if metadata is None else (str(metadata) if isinstance(metadata, Path)
                                              else metadata).encode()
        _check(lib.qct_kernel_load(str(cuda_source).encode(), meta, ctypes.byref(opts),
                                   ctypes.byref(handle)))
        self._lib = lib
        self._handle = handle
        self.metadata: dict[str, Any] = json.loads(_ffi.text(lib.qct_kernel_metadata_json(handle)))
        elements = {b["name"]: b.get("element", "") for b in self.metadata["buffers"]}
        self.buffers: list[Buffer] = []
        for i in range(lib.qct_kernel_num_buffers(handle)):
            info = _ffi.BufferInfo()
            _check(lib.qct_kernel_buffer_info(handle, i, ctypes.byref(info)))
            name = _ffi.text(info.name)
            self.buffers.append(Buffer(name, _ffi.text(info.field), _ffi.text(info.dtype),
                                       bool(info.is_output), info.ndim, elements.get(name, "")))
        self._names = tuple(b.name for b in self.buffers)
        self._handle_value = handle.value

    # Properties read through the C ABI.
    @property
    def name(self) -> str:
        return _ffi.text(self._lib.qct_kernel_name(self._handle))

    @property
    def entry(self) -> str:
        return _ffi.text(self._lib.qct_kernel_entry(self._handle))

    @property
    def arch(self) -> str:
        return _ffi.text(self._lib.qct_kernel_arch(self._handle))

    @property
    def cache_key(self) -> str:
        return _ffi.text(self._lib.qct_kernel_cache_key(self._handle))

    @property
    def compile_log(self) -> str:
        return _ffi.text(self._lib.qct_kernel_compile_log(self._handle))

    @property
    def options(self) -> list[str]:
        return _ffi.text(self._lib.qct_kernel_options(self._handle)).splitlines()

    @property
    def schedule(self) -> dict[str, int]:
        lines = _ffi.text(self._lib.qct_kernel_schedule(self._handle)).splitlines()
        return {k: int(v) for k, v in (line.split("=", 1) for line in lines)}

    @property
    def origin(self) -> str:
        """Where the binary came from: 'compiled', 'memory' or 'disk'."""
        return _ffi.ORIGINS[self._lib.qct_kernel_origin(self._handle)]

    @property
    def stats(self) -> dict[str, int]:
        """ptxas -v numbers: registers, spills, local and shared memory bytes."""
        s = _ffi.KernelStats()
        _check(self._lib.qct_kernel_stats_get(self._handle, ctypes.byref(s)))
        return {f: int(getattr(s, f)) for f, _ in _ffi.KernelStats._fields_}

    @property
    def cubin(self) -> bytes:
        data, size = ctypes.c_void_p(), ctypes.c_size_t()
        _check(self._lib.qct_kernel_cubin(self._handle, ctypes.byref(data), ctypes.byref(size)))
        return ctypes.string_at(data, size.value)

    def buffer_shape(self, name: str, M: int, K: int, G: int = 0) -> tuple[int, ...]:
        index = self._index(name)
        shape = (ctypes.c_int64 * _ffi.MAX_DIMS)()
        ndim = ctypes.c_int32()
        _check(self._lib.qct_kernel_buffer_shape(self._handle, index, M, K, G, shape,
                                                 ctypes.byref(ndim)))
        return tuple(shape[i] for i in range(ndim.value))

    def output_shapes(self, M: int, K: int, G: int = 0) -> dict[str, tuple[int, ...]]:
        return {b.name: self.buffer_shape(b.name, M, K, G) for b in self.buffers if b.is_output}

    def allocate_outputs(self, M: int, K: int, offsets: object = None,
                         device: object = None, native: bool = True) -> dict[str, Any]:
        """Empty torch tensors for every output, by buffer name (G = len(offsets) - 1), in torch's
        own types (float8_e4m3fn data, float8_e8m0fnu MX scales, float4_e2m1fn_x2 packed e2m1;
        `native=False`: uint8 for every buffer of codes). Ragged col outputs are capacity-sized; a
        spec with `"capacity_tail": "untouched"` leaves their tail past p[G] as allocated
        (uninitialized here), which a consumer that reads p[G] never sees."""
        import torch

        G = 0
        if offsets is not None:
            G = int(offsets.shape[0]) - 1  # type: ignore[attr-defined]
            if device is None and _is_torch(offsets):
                device = offsets.device  # type: ignore[attr-defined]
        if device is None:
            device = torch.device("cuda", torch.cuda.current_device())
        outs = {}
        for b in self.buffers:
            if b.is_output:
                outs[b.name] = torch.empty(self.buffer_shape(b.name, M, K, G),
                                           dtype=torch_dtype(b, native), device=device)
        return outs

    def _index(self, name: str) -> int:
        for i, b in enumerate(self.buffers):
            if b.name == name:
                return i
        raise QctError(f"kernel {self.name} has no buffer '{name}' "
                       f"(buffers: {', '.join(b.name for b in self.buffers)})")

    def _arguments(self, args: tuple[object, ...], named: Mapping[str, object]) -> list[object]:
        if args and named:
            raise QctError("pass tensors either positionally (metadata order) or by name, not both")
        if named:
            unknown = set(named) - {b.name for b in self.buffers}
            if unknown:
                self._index(sorted(unknown)[0])
            missing = [b.name for b in self.buffers if b.name not in named]
            if missing:
                raise QctError(f"kernel {self.name}: missing tensors {', '.join(missing)}")
            return [named[b.name] for b in self.buffers]
        if len(args) != len(self.buffers):
            raise QctError(f"kernel {self.name} takes {len(self.buffers)} tensors "
                           f"({', '.join(b.name for b in self.buffers)}), found {len(args)}")
        return list(args)

    def _descriptors(self, tensors: list[object], keep: list[object]) -> ctypes.Array[_ffi.Tensor]:
        array = (_ffi.Tensor * max(1, len(tensors)))()
        for i, (b, x) in enumerate(zip(self.buffers, tensors)):
            array[i] = _describe(b.name, x, keep, is_output=b.is_output)
        return array

    def validate(self, *args: object, **named: object) -> LaunchPlan:
        """Checks the tensors against the metadata (no GPU needed) and returns the launch sizes."""
        tensors = self._arguments(args, named)
        keep: list[object] = []
        descs = self._descriptors(tensors, keep)
        plan = _ffi.LaunchPlan()
        _check(self._lib.qct_kernel_validate(self._handle, descs, len(tensors), ctypes.byref(plan)))
        return LaunchPlan(plan.M, plan.K, plan.G, tuple(plan.grid), tuple(plan.block),  # type: ignore[arg-type]
                          plan.dynamic_smem_bytes)

    def __call__(self, *args: object, stream: object = None, **named: object) -> None:
        """Launches on `stream` (torch's current stream for torch tensors, else the default
        stream). Never synchronizes; call check_errors() to see the kernel's error flag."""
        if named and not args and len(named) == len(self._names):
            try:
                tensors: Any = [named[n] for n in self._names]
            except KeyError:
                tensors = self._arguments(args, named)
        else:
            tensors = self._arguments(args, named)
        fast = _fastlaunch.launcher()
        if fast is not None and (stream is None or isinstance(stream, int)):
            status = fast(self._handle_value, self._names, stream, *tensors)
            if status == _ffi.OK:
                return
            if status != _fastlaunch.NOT_TORCH:
                _raise_last(status)
        self._launch_general(tensors, stream)

    def _launch_general(self, tensors: list[object], stream: object) -> None:
        """Any tensor kind (torch, __cuda_array_interface__, DLPack) through ctypes."""
        keep: list[object] = []
        descs = self._descriptors(tensors, keep)
        _check(self._lib.qct_kernel_launch(self._handle, descs, len(tensors),
                                           ctypes.c_void_p(_stream_handle(stream, tensors))))

    def prepare(self) -> None:
        """Loads the module into the current context (do it before CUDA graph capture)."""
        _check(self._lib.qct_kernel_prepare(self._handle))

    def check_errors(self, stream: object = None) -> None:
        """Synchronizes the stream; raises QctRuntimeError (QCT_ERR_BAD_OFFSETS) if flagged."""
        handle = _stream_handle(stream, [])
        if stream is None:
            torch = sys.modules.get("torch")
            if torch is not None and torch.cuda.is_initialized():
                handle = _torch_current_stream()
        flags = ctypes.c_uint32()
        _check(self._lib.qct_kernel_check_errors(self._handle, ctypes.c_void_p(handle),
                                                 ctypes.byref(flags)))

    def close(self) -> None:
        if getattr(self, "_handle", None):
            self._handle_value = 0  # the fast path refuses a closed kernel
            self._lib.qct_kernel_free(self._handle)
            self._handle = None

    def __del__(self) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<qct.Kernel {self.name} {self.arch} schedule={self.schedule} ({self.origin})>"


# --- Loading ------------------------------------------------------------------------------------

def _is_metadata(obj: object) -> bool:
    return isinstance(obj, dict) and "entry" in obj and "buffers" in obj


def load(spec_or_generated: str | Path, schedule: Mapping[str, int] | Iterable[str] | None = None,
         *, shape: tuple[int, ...] | None = None, arch: str | None = None,
         disable_cache: bool = False) -> Kernel:
    """A kernel from a generated .cu (metadata .json beside it), a metadata .json, a spec .json
    (compiled through the compiler library), or the name of a bundled kernel
    ("mxfp4_to_fp8_e4m3_row": generated/, or the installed package's copy of it).

    The schedule is `schedule` when given; else, with `shape=(M, K)` or `(M, K, G)`, the tuned one
    for that shape on this GPU (qct tune's cache, then specs/tuning/*.json) or the documented
    heuristic (qct.tuning); else the kernel's defaults."""
    path = Path(spec_or_generated)
    if not path.is_file():
        bundled = _bundled(str(spec_or_generated))
        if bundled is None:
            raise QctError(f"{path}: no such file (nor a bundled kernel of that name)")
        path = bundled
    if path.suffix == ".cu":
        return _load_resolved(path, path.with_suffix(".json").read_text(), schedule, shape, arch,
                              disable_cache)
    try:
        document = json.loads(path.read_text())
    except json.JSONDecodeError:
        document = None  # specs may carry comments: let the compiler read them
    if _is_metadata(document):
        source = path.parent / document.get("cuda_source", path.with_suffix(".cu").name)
        return _load_resolved(source, path.read_text(), schedule, shape, arch, disable_cache)
    # A spec: the runtime compiles it through the compiler library (libqct_compiler.so).
    source, metadata = compile_spec(path)
    return _load_resolved(source, metadata, schedule, shape, arch, disable_cache)


def _bundled(name: str) -> Path | None:
    """The generated source of a bundled kernel named `name`, if there is one."""
    from qct import layout

    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        return None
    source = layout.generated_dir() / f"{name}.cu"
    return source if source.is_file() else None


def _load_resolved(source: Path | str, metadata: str,
                   schedule: Mapping[str, int] | Iterable[str] | None,
                   shape: tuple[int, ...] | None, arch: str | None, disable_cache: bool) -> Kernel:
    if schedule is None and shape is not None:
        from qct import tuning

        if len(shape) not in (2, 3):
            raise QctError(f"shape must be (M, K) or (M, K, G), found {shape!r}")
        M, K, G = (*shape, 0)[:3]
        schedule = tuning.best_schedule(json.loads(metadata), M, K, tuning.current_gpu_name(), G)
    return Kernel(source, metadata, schedule=schedule, arch=arch, disable_cache=disable_cache)


def compile_spec(spec: str | Path) -> tuple[str, str]:
    """The CUDA source and metadata JSON the compiler emits for a spec, through the runtime's
    qct_spec_compile (the compiler library, dlopened; no subprocess)."""
    lib = _ffi.lib()
    source, metadata = ctypes.c_char_p(), ctypes.c_char_p()
    _check(lib.qct_spec_compile(str(spec).encode(), ctypes.byref(source), ctypes.byref(metadata)))
    return _ffi.text(source.value), _ffi.text(metadata.value)


def compile_to_cubin(cuda_source: str | Path, arch: str = "sm_90a",
                     schedule: Mapping[str, int] | Iterable[str] | None = None) -> bytes:
    """NVRTC-compiles a generated kernel (metadata beside it) to a cubin; needs no GPU."""
    return Kernel(cuda_source, None, schedule=schedule, arch=arch).cubin


def eval_expr(expr: str, M: int = 0, K: int = 0, G: int = 0,
              knobs: Mapping[str, int] | None = None) -> int:
    """Evaluates a metadata shape expression with the runtime's evaluator."""
    lib = _ffi.lib()
    items = [f"{k}={v}" for k, v in (knobs or {}).items()]
    out = ctypes.c_int64()
    _check(lib.qct_eval_expr(expr.encode(), M, K, G, _ffi.string_array(items), len(items),
                             ctypes.byref(out)))
    return out.value


def nvrtc_version() -> str:
    major, minor = ctypes.c_int(), ctypes.c_int()
    _check(_ffi.lib().qct_nvrtc_version(ctypes.byref(major), ctypes.byref(minor)))
    return f"{major.value}.{minor.value}"


def version() -> str:
    return _ffi.text(_ffi.lib().qct_version())


def device_headers_hash() -> str:
    """SHA-256 (hex) of the device library this runtime compiles kernels with."""
    return _ffi.text(_ffi.lib().qct_device_headers_hash())
