"""qct kernels as torch ops: `torch.library` registrations with fake implementations.

    import qct.ops
    quantize = qct.ops.register("generated/bf16_to_fp8_e4m3_row_col_mn.cu")
    y, y_scales, yt, yt_scales = quantize(x)       # torch.ops.qct.bf16_to_fp8_e4m3_row_col_mn
    quantize.out(x, y=y, y_scales=ys, yt=yt, yt_scales=yts)  # the _out op: writes given tensors

Each kernel becomes two ops in the `qct` namespace: a functional one, which allocates its outputs
(torch's own dtypes: float8_e4m3fn / float8_e5m2 data, float8_e8m0fnu MX scales,
float4_e2m1fn_x2 packed e2m1, float32 FP8 block scales) and returns them in metadata order, and
`<name>_out`, which writes tensors the caller owns. Both have fake implementations that give every
output's shape from the metadata's expressions (SymInts included), so `torch.compile(fullgraph=True)`
traces through them, and both launch on the current stream, inside compiled regions and CUDA-graph
capture too. Inputs are checked by the runtime before the launch: dtype (a uint8 view of codes is
accepted), shape, contiguity, device, alignment, each error naming the argument.
"""

from __future__ import annotations

import ctypes
import functools
import re
import sys
import warnings
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import torch

from qct import _ffi, env, layout, runtime, shape_expr
from qct.errors import QctError

NAMESPACE = "qct"
CPP_SOURCE = Path(__file__).resolve().parent / "csrc" / "torch_kernels.cpp"

_RAW_VIEW_TYPES = (torch.float4_e2m1fn_x2, torch.float8_e8m0fnu)

_library: torch.library.Library | None = None
_registered: dict[str, "KernelOp"] = {}


@functools.lru_cache(maxsize=None)
def cpp_kernels() -> ctypes.CDLL | None:
    """The C++ CUDA kernels of the ops (csrc/torch_kernels.cpp), built once per torch version
    into the JIT cache folder with torch.utils.cpp_extension; None where QCT_TORCH_KERNELS is
    'python' or the build is not possible (no compiler), and the ops keep Python kernels."""
    if env.get("QCT_TORCH_KERNELS") != "cpp" or not torch.cuda.is_available():
        return None
    from torch.utils import cpp_extension

    tag = f"torch{torch.__version__}-py{sys.version_info[0]}{sys.version_info[1]}"
    cache = Path(_ffi.text(_ffi.lib().qct_cache_dir()))
    build = cache / "torch-kernels" / re.sub(r"[^\w.]", "_", tag)
    try:
        build.mkdir(parents=True, exist_ok=True)
        cpp_extension.load(name="qct_torch_kernels", sources=[str(CPP_SOURCE)],
                           extra_include_paths=[str(layout.include_dir())], with_cuda=True,
                           extra_cflags=["-O2"], build_directory=str(build),
                           is_python_module=False, verbose=False)
        lib = ctypes.CDLL(str(build / "qct_torch_kernels.so"))
    except Exception as e:  # no compiler, no headers: the Python kernels serve
        warnings.warn(f"qct.ops: C++ kernels not built ({str(e).splitlines()[0] if str(e) else e!r}); "
                      "using Python kernels (set QCT_TORCH_KERNELS=python to skip the attempt)")
        return None
    rt = _ffi.lib()
    lib.qct_torch_bind_runtime(*(ctypes.cast(f, ctypes.c_void_p) for f in (
        rt.qct_kernel_launch, rt.qct_kernel_buffer_shape, rt.qct_last_error_field)))
    lib.qct_torch_register.restype = ctypes.c_int
    lib.qct_torch_register.argtypes = [
        ctypes.c_char_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_char_p,
        ctypes.POINTER(ctypes.c_int64), ctypes.c_int64, ctypes.c_int64, ctypes.c_char_p,
        ctypes.c_size_t]
    return lib


def _lib() -> torch.library.Library:
    global _library
    if _library is None:
        _library = torch.library.Library(NAMESPACE, "FRAGMENT")
    return _library


def _source_dims(kernel: runtime.Kernel) -> list[tuple[str, int]]:
    """How each dimension of `src` gives M or K: ("M", 1), ("K", 1) or ("K", n) for K/n."""
    src = next(b for b in kernel.metadata["buffers"] if b["field"] == "src")
    dims = []
    for expr in src["shape"]:
        if expr in ("M", "K"):
            dims.append((expr, 1))
            continue
        packed = re.fullmatch(r"K/(\d+)", expr)
        if not packed:
            raise QctError(f"kernel {kernel.name}: cannot read M and K from src shape "
                           f"{src['shape']} (expected M, K or K/n per dimension)")
        dims.append(("K", int(packed.group(1))))
    return dims


class KernelOp:
    """A loaded kernel registered as torch.ops.qct.<name> and torch.ops.qct.<name>_out."""

    def __init__(self, kernel: runtime.Kernel, name: str):
        self.kernel = kernel
        self.name = name
        buffers = kernel.buffers
        self.inputs = [b for b in buffers if not b.is_output]
        self.outputs = [b for b in buffers if b.is_output]
        if buffers != self.inputs + self.outputs:
            raise QctError(f"kernel {kernel.name}: inputs must precede outputs in the metadata")
        self._dims = _source_dims(kernel)
        self._ragged = any(b.field == "offsets" for b in self.inputs)
        self._offsets_index = next((i for i, b in enumerate(self.inputs) if b.field == "offsets"), -1)
        self._dtypes = [runtime.torch_dtype(b) for b in self.outputs]
        exprs = {b["name"]: b["shape"] for b in kernel.metadata["buffers"]}
        self._shape_exprs = [exprs[b.name] for b in self.outputs]
        self._knobs = dict(kernel.schedule)
        self._shapes: dict[tuple[int, int, int], list[tuple[int, ...]]] = {}
        self._define()
        namespace = getattr(torch.ops, NAMESPACE)
        self.op = getattr(namespace, name).default
        self.out_op = getattr(namespace, name + "_out").default
        if torch.cuda.is_available():
            kernel.prepare()  # the module and error flag exist before any graph capture

    # -- schema and registration -------------------------------------------------------------
    def _define(self) -> None:
        lib = _lib()
        ins = ", ".join(f"Tensor {b.name}" for b in self.inputs)
        outs = ", ".join("Tensor" for _ in self.outputs)
        returns = outs if len(self.outputs) == 1 else f"({outs})"
        lib.define(f"{self.name}({ins}) -> {returns}")
        mutated = ", ".join(f"Tensor({chr(97 + i)}!) {b.name}" for i, b in enumerate(self.outputs))
        lib.define(f"{self.name}_out({ins}, {mutated}) -> ()")
        self.kernels = "cpp" if self._register_cpp() else "python"
        if self.kernels == "python":
            lib.impl(self.name, self._run, "CUDA")
            lib.impl(self.name + "_out", self._run_out, "CUDA")
        # Without these the dispatcher's own error would name no argument.
        lib.impl(self.name, self._not_cuda, "CPU")
        lib.impl(self.name + "_out", self._not_cuda, "CPU")
        torch.library.register_fake(f"{NAMESPACE}::{self.name}", self._fake, lib=lib)
        torch.library.register_fake(f"{NAMESPACE}::{self.name}_out", self._fake_out, lib=lib)

    def _register_cpp(self) -> bool:
        cpp = cpp_kernels()
        if cpp is None:
            return False
        outputs = ",".join(f"{b.dtype}:{b.element}" for b in self.outputs)
        dims = (ctypes.c_int64 * len(self._dims))(*(0 if w == "M" else n for w, n in self._dims))
        error = ctypes.create_string_buffer(1024)
        if cpp.qct_torch_register(self.name.encode(), self.kernel._handle_value, len(self.inputs),
                                  outputs.encode(), dims, len(self._dims), self._offsets_index,
                                  error, len(error)):
            raise QctError(f"torch.ops.{NAMESPACE}.{self.name}: {error.value.decode()}")
        return True

    # -- shapes ------------------------------------------------------------------------------
    def dims(self, inputs: Sequence[torch.Tensor]) -> tuple[Any, Any, Any]:
        """M, K, G from the source shape and the offsets length (ints or SymInts)."""
        src = inputs[0]
        if src.dim() != len(self._dims):
            raise QctError(f"argument '{self.inputs[0].name}': expected {len(self._dims)} dims, "
                           f"found {src.dim()}")
        M = K = 0
        for (which, times), size in zip(self._dims, src.shape):
            if which == "M":
                M = size
            else:
                K = size * times
        G = inputs[self._offsets_index].shape[0] - 1 if self._ragged else 0
        return M, K, G

    def output_shapes(self, M: Any, K: Any, G: Any) -> list[tuple[Any, ...]]:
        names = {"M": M, "K": K, "G": G, **self._knobs}
        return [tuple(shape_expr.evaluate(e, names) for e in exprs) for exprs in self._shape_exprs]

    def _concrete_shapes(self, M: int, K: int, G: int) -> list[tuple[int, ...]]:
        key = (M, K, G)
        shapes = self._shapes.get(key)
        if shapes is None:
            shapes = [self.kernel.buffer_shape(b.name, M, K, G) for b in self.outputs]
            if len(self._shapes) > 256:
                self._shapes.clear()
            self._shapes[key] = shapes
        return shapes

    # -- implementations ---------------------------------------------------------------------
    def _run(self, *inputs: torch.Tensor) -> Any:
        M, K, G = self.dims(inputs)
        device = inputs[0].device
        outs = [torch.empty(shape, dtype=dtype, device=device)
                for shape, dtype in zip(self._concrete_shapes(M, K, G), self._dtypes)]
        self.kernel(*inputs, *outs)
        return outs[0] if len(outs) == 1 else tuple(outs)

    def _run_out(self, *tensors: torch.Tensor) -> None:
        self.kernel(*tensors)

    def _not_cuda(self, *tensors: torch.Tensor) -> Any:
        names = [b.name for b in self.inputs + self.outputs]
        for name, t in zip(names, tensors):
            if not t.is_cuda:
                raise QctError(f"argument '{name}': a CUDA tensor is required, found one on "
                               f"{t.device}")
        raise QctError(f"qct.{self.name}: every tensor must be on one CUDA device")

    def _fake(self, *inputs: torch.Tensor) -> Any:
        M, K, G = self.dims(inputs)
        outs = [inputs[0].new_empty(shape, dtype=dtype)
                for shape, dtype in zip(self.output_shapes(M, K, G), self._dtypes)]
        return outs[0] if len(outs) == 1 else tuple(outs)

    def _fake_out(self, *tensors: torch.Tensor) -> None:
        return None

    # -- calling -----------------------------------------------------------------------------
    def __call__(self, *inputs: torch.Tensor, **named: torch.Tensor) -> tuple[torch.Tensor, ...]:
        """The outputs, in metadata order (always a tuple)."""
        args = self._ordered(self.inputs, inputs, named)
        result = self.op(*args)
        return result if isinstance(result, tuple) else (result,)

    def out(self, *tensors: torch.Tensor, **named: torch.Tensor) -> None:
        """Writes the outputs into given tensors (inputs then outputs, by position or name)."""
        args = self._ordered(self.inputs + self.outputs, tensors, named)
        if torch.compiler.is_compiling():
            # Inductor fails to functionalize a mutating op whose inputs are float4_e2m1fn_x2 or
            # float8_e8m0fnu ("auto_functionalized_v2 was not removed"); a uint8 view of the
            # same bytes, which the kernel takes as well, compiles.
            args = [t.view(torch.uint8) if i < len(self.inputs) and t.dtype in _RAW_VIEW_TYPES
                    else t for i, t in enumerate(args)]
        self.out_op(*args)

    def allocate_outputs(self, M: int, K: int, offsets: torch.Tensor | None = None,
                         device: Any = None) -> dict[str, torch.Tensor]:
        """Empty outputs for `out`, in torch's own dtypes (Kernel.allocate_outputs)."""
        return self.kernel.allocate_outputs(M, K, offsets, device=device)

    def _ordered(self, buffers: list[runtime.Buffer], args: Sequence[torch.Tensor],
                 named: Mapping[str, torch.Tensor]) -> list[torch.Tensor]:
        if not named:
            if len(args) != len(buffers):
                raise QctError(f"qct.{self.name} takes {len(buffers)} tensors "
                               f"({', '.join(b.name for b in buffers)}), found {len(args)}")
            return list(args)
        values = dict(zip((b.name for b in buffers), args))
        for key, value in named.items():
            if key in values:
                raise QctError(f"qct.{self.name}: '{key}' given twice")
            values[key] = value
        unknown = sorted(set(values) - {b.name for b in buffers})
        missing = [b.name for b in buffers if b.name not in values]
        if unknown or missing:
            raise QctError(f"qct.{self.name} takes {', '.join(b.name for b in buffers)}"
                           + (f"; unknown: {', '.join(unknown)}" if unknown else "")
                           + (f"; missing: {', '.join(missing)}" if missing else ""))
        return [values[b.name] for b in buffers]

    def __repr__(self) -> str:
        return f"<qct.ops.KernelOp torch.ops.{NAMESPACE}.{self.name} ({self.kernel.name})>"


def register(kernel: runtime.Kernel | str | Path,
             schedule: Mapping[str, int] | Iterable[str] | None = None, *,
             shape: tuple[int, ...] | None = None, name: str | None = None) -> KernelOp:
    """The torch ops of a kernel: a loaded qct.Kernel, or a path qct.load takes (with its
    schedule / shape arguments). The op is named after the kernel, with the cache key's head
    appended where another build of the same kernel (another schedule) holds the name; `name`
    picks one. Registering the same build again returns the op it has."""
    if not isinstance(kernel, runtime.Kernel):
        kernel = runtime.load(kernel, schedule, shape=shape)
    key = kernel.cache_key
    for op in _registered.values():
        if op.kernel.cache_key == key and (name is None or op.name == name):
            return op
    op_name = name or kernel.name
    if op_name in _registered:
        if name is not None:
            raise QctError(f"torch.ops.{NAMESPACE}.{name} is registered for another kernel build")
        op_name = f"{kernel.name}_{key[:12]}"
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", op_name):
        raise QctError(f"op name '{op_name}' is not an identifier")
    op = KernelOp(kernel, op_name)
    _registered[op_name] = op
    return op


def registered() -> dict[str, KernelOp]:
    """Every op registered in this process, by name."""
    return dict(_registered)
