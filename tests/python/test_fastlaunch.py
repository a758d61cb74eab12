"""The compiled launch path (python/ext/qct_launch.c) without torch or a GPU: objects shaped like
torch tensors go through it into the runtime's validation, so every argument check and every
error it raises is exercised here; only the final cuLaunchKernel needs the GPU machine (there,
tests/python/test_torch_ops.py)."""

from __future__ import annotations

import ctypes
from pathlib import Path
from types import ModuleType

import pytest

from qct import _fastlaunch, _ffi, runtime
from qct.errors import QctError

GEN = Path(__file__).resolve().parents[2] / "generated"


class FakeDtype:
    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"torch.{self.name}"


BF16, UINT8, F32, E5M2 = (FakeDtype(n) for n in ("bfloat16", "uint8", "float32", "float8_e5m2"))
CODES = {BF16: _ffi.DTYPES["bf16"], UINT8: _ffi.DTYPES["u8"], F32: _ffi.DTYPES["f32"],
         E5M2: _ffi.DTYPES["fp8_e5m2"]}


class FakeTensor:
    """What the extension reads of a torch tensor: data_ptr(), shape, stride(), dtype,
    get_device()."""

    def __init__(self, shape: tuple[int, ...], dtype: FakeDtype, device: int = 0,
                 strides: tuple[int, ...] | None = None, ptr: int = 0x7F0000000000):
        self.shape = tuple(shape)
        self.dtype = dtype
        self._device = device
        self._ptr = ptr
        if strides is None:
            strides, step = [], 1
            for d in reversed(shape):
                strides.insert(0, step)
                step *= d
        self._strides = tuple(strides)

    def data_ptr(self) -> int:
        return self._ptr

    def stride(self) -> tuple[int, ...]:
        return self._strides

    def get_device(self) -> int:
        return self._device


@pytest.fixture(scope="module")
def ext() -> ModuleType:
    module = _fastlaunch._load_extension()
    if module is None:
        pytest.skip(f"{_fastlaunch.extension_path()} is not built (no Python headers at build)")
    fn = ctypes.cast(_ffi.lib().qct_kernel_launch, ctypes.c_void_p).value
    module.init(fn, FakeTensor, CODES, lambda device: 0, lambda: 0, QctError)
    return module


@pytest.fixture(scope="module")
def kernel() -> runtime.Kernel:
    return runtime.Kernel(GEN / "bf16_to_mxfp4_row.cu", arch="sm_90a")  # src, y, y_scales


def _good(M: int = 256, K: int = 512) -> list[FakeTensor]:
    return [FakeTensor((M, K), BF16, ptr=0x7F0000000000),
            FakeTensor((M, K // 2), UINT8, ptr=0x7F0010000000),
            FakeTensor((M, K // 32), UINT8, ptr=0x7F0020000000)]


def _last_error() -> str:
    return _ffi.text(_ffi.lib().qct_last_error_field(_ffi.FIELD_MESSAGE))


def test_validation_errors_come_back_as_the_runtime_status(ext: ModuleType,
                                                           kernel: runtime.Kernel) -> None:
    ts = _good()
    ts[1] = FakeTensor((256, 255), UINT8)
    status = ext.launch(kernel._handle_value, kernel._names, None, *ts)
    assert _ffi.STATUS_NAMES[status] == "QCT_ERR_VALIDATION"
    assert "argument 'y' (out[0]): expected shape [256, 256]" in _last_error()


def test_wrong_8bit_type_is_refused(ext: ModuleType, kernel: runtime.Kernel) -> None:
    ts = _good()
    ts[1] = FakeTensor((256, 256), E5M2)  # packed e2m1 expected
    status = ext.launch(kernel._handle_value, kernel._names, None, *ts)
    assert _ffi.STATUS_NAMES[status] == "QCT_ERR_VALIDATION"
    assert "expected dtype fp4_e2m1_x2 (or a u8 view), found fp8_e5m2" in _last_error()


def test_non_contiguous_is_refused(ext: ModuleType, kernel: runtime.Kernel) -> None:
    ts = _good()
    ts[0] = FakeTensor((256, 512), BF16, strides=(1024, 1))
    status = ext.launch(kernel._handle_value, kernel._names, None, *ts)
    assert _ffi.STATUS_NAMES[status] == "QCT_ERR_VALIDATION"
    assert "argument 'src'" in _last_error() and "contiguous" in _last_error()


def test_good_arguments_reach_the_driver(ext: ModuleType, kernel: runtime.Kernel) -> None:
    status = ext.launch(kernel._handle_value, kernel._names, 0, *_good())
    name = _ffi.STATUS_NAMES[status]
    if name == "QCT_OK":
        pytest.skip("a GPU is present: fake pointers must not be launched here")
    assert name in ("QCT_ERR_NO_DRIVER", "QCT_ERR_NO_DEVICE", "QCT_ERR_CUDA")


def test_cpu_tensor_names_the_argument(ext: ModuleType, kernel: runtime.Kernel) -> None:
    ts = _good()
    ts[2] = FakeTensor((256, 16), UINT8, device=-1)
    with pytest.raises(QctError, match="argument 'y_scales': a CUDA tensor is required"):
        ext.launch(kernel._handle_value, kernel._names, None, *ts)


def test_another_device_names_the_argument(ext: ModuleType, kernel: runtime.Kernel) -> None:
    ts = _good()
    ts[1] = FakeTensor((256, 256), UINT8, device=1)
    with pytest.raises(QctError, match="argument 'y': on cuda:1, but the first tensor is on cuda:0"):
        ext.launch(kernel._handle_value, kernel._names, None, *ts)


def test_current_device_must_be_the_tensors(ext: ModuleType, kernel: runtime.Kernel) -> None:
    ts = [FakeTensor(t.shape, t.dtype, device=2, ptr=t.data_ptr()) for t in _good()]
    with pytest.raises(QctError, match="tensors are on cuda:2 but the current device is cuda:0"):
        ext.launch(kernel._handle_value, kernel._names, None, *ts)


def test_unknown_dtype_and_rank(ext: ModuleType, kernel: runtime.Kernel) -> None:
    ts = _good()
    ts[0] = FakeTensor((256, 512), FakeDtype("complex64"))
    with pytest.raises(QctError, match="argument 'src': unsupported torch dtype torch.complex64"):
        ext.launch(kernel._handle_value, kernel._names, None, *ts)
    ts = _good()
    ts[0] = FakeTensor((1, 1, 1, 256, 512), BF16)
    with pytest.raises(QctError, match="argument 'src': 5 dims"):
        ext.launch(kernel._handle_value, kernel._names, None, *ts)


def test_broadcast_is_refused(ext: ModuleType, kernel: runtime.Kernel) -> None:
    ts = _good()
    ts[0] = FakeTensor((256, 512), BF16, strides=(0, 0))
    with pytest.raises(QctError, match="argument 'src': broadcast"):
        ext.launch(kernel._handle_value, kernel._names, None, *ts)


def test_empty_tensors_with_zero_strides_pass(ext: ModuleType, kernel: runtime.Kernel) -> None:
    """torch may report zero strides for an empty tensor: that is no broadcast."""
    ts = [FakeTensor((0, 512), BF16, strides=(0, 0), ptr=0),
          FakeTensor((0, 256), UINT8, strides=(0, 0), ptr=0),
          FakeTensor((0, 16), UINT8, strides=(0, 0), ptr=0)]
    status = ext.launch(kernel._handle_value, kernel._names, 0, *ts)
    assert _ffi.STATUS_NAMES[status] != "QCT_ERR_VALIDATION", _last_error()


def test_other_objects_take_the_general_path(ext: ModuleType, kernel: runtime.Kernel) -> None:
    ts: list[object] = list(_good())
    ts[1] = object()
    assert ext.launch(kernel._handle_value, kernel._names, None, *ts) == _fastlaunch.NOT_TORCH


def test_closed_kernel_is_refused(ext: ModuleType) -> None:
    k = runtime.Kernel(GEN / "bf16_to_mxfp4_row.cu", arch="sm_90a")
    names = k._names
    k.close()
    with pytest.raises(QctError, match="closed"):
        ext.launch(k._handle_value, names, None, *_good())
