"""The contract names torchao's `to_mx` (FLOOR and RCEIL) as an outside reference that must agree
with us exactly. Runs where torch and torchao import; skips with a message elsewhere.

Compared on finite bf16 inputs with wide exponent spreads: scale bytes and element codes of
mxfp4 / mxfp8_e4m3 / mxfp8_e5m2, row layout (torchao blocks along the last dimension). Blocks with
NaN/Inf are excluded for elements: torchao's RCEIL path writes NaN elements there, where the
contract writes code 0; and blocks whose scale byte is 0, see below (docs/numerics.md, known
differences)."""

from __future__ import annotations

import numpy as np
import pytest

import sources

torch = pytest.importorskip("torch", reason="torch is not installed: torchao comparison skipped")
mx_tensor = pytest.importorskip("torchao.prototype.mx_formats.mx_tensor",
                                reason="torchao is not installed: to_mx comparison skipped")


def _scaling_mode(name: str):
    try:
        from torchao.prototype.mx_formats.config import ScaleCalculationMode
    except ImportError:  # older layouts
        from torchao.prototype.mx_formats.mx_tensor import ScaleCalculationMode
    return getattr(ScaleCalculationMode, name)


def _elem_dtype(fmt: str):
    if fmt == "mxfp8_e4m3":
        return torch.float8_e4m3fn
    if fmt == "mxfp8_e5m2":
        return torch.float8_e5m2
    fp4 = getattr(torch, "float4_e2m1fn_x2", None)
    if fp4 is not None:
        return fp4
    from torchao.prototype.mx_formats.constants import DTYPE_FP4
    return DTYPE_FP4


@pytest.mark.parametrize("mode", ["FLOOR", "RCEIL"])
@pytest.mark.parametrize("fmt", ["mxfp4", "mxfp8_e4m3", "mxfp8_e5m2"])
def test_to_mx_agrees(ref, fmt: str, mode: str) -> None:
    M, K = 256, 256
    src = sources.bf16_source(M, K, 99)
    bits = src.data.copy()
    bits[(bits & 0x7FFF) >= 0x7F80] = 0x3F80  # finite inputs only
    src = ref.Source("bf16", bits, None, M, K)
    x = torch.from_numpy(bits.view(np.int16)).view(torch.bfloat16)
    scale, data = mx_tensor.to_mx(x, _elem_dtype(fmt), 32, _scaling_mode(mode))
    ours = ref.convert(src, ref.Output(fmt, "row", mode.lower()))
    np.testing.assert_array_equal(ours.scales, scale.view(torch.uint8).reshape(-1).numpy())
    theirs = data.view(torch.uint8).reshape(-1).numpy()
    # Known difference: for a block whose scale byte clamps to 0 (amax below max_elem * 2^-127)
    # torchao, like Transformer Engine's exp2f_rcp, multiplies the elements by 1.0 instead of by
    # 2^127; the contract divides by the block scale 2^-127 exactly. Compare every other block.
    bytes_per_block = 16 if fmt == "mxfp4" else 32
    block_scale = np.repeat(ours.scales, bytes_per_block)
    agree = block_scale != 0
    assert agree.mean() > 0.8
    np.testing.assert_array_equal(ours.data[agree], theirs[agree])
