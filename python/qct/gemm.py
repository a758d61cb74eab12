"""qct's FP8 outputs as operands of torch's blockwise FP8 GEMM (`torch.nn.functional.scaled_mm`,
cuBLASLt 1x128 x 1x128 on sm_90). docs/feeding-a-gemm.md has the recipes.

Both operands of `mm(a, a_scales, b, b_scales)` are qct fp8_e4m3 outputs laid out [rows, L], L the
contraction, with `mn_major` 1x128 scales [cdiv(L,128), rup(rows,4)] (f32 scale_inv): a row output
[M, K] (activations, or weights [N, K]), or a col output [K, M] (the transposed operand of a
weight-gradient GEMM, contracting over tokens). The result is a @ b^T.

torch reads 1x128 scales as a [rows, cdiv(L,128)] tensor with strides (1, rows), which is the
mn_major buffer viewed transposed exactly when rows is a multiple of 4 (the buffer pads its rows
to 4); everything torch would refuse, or read wrong, is refused here first with the rule.
"""

from __future__ import annotations

from typing import Sequence

import torch

from qct.errors import QctError

BLOCK = 128
FP8_TYPES = (torch.float8_e4m3fn, torch.float8_e5m2)


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def scale_view(data: torch.Tensor, scales: torch.Tensor, name: str = "a") -> torch.Tensor:
    """The [rows, cdiv(L,128)] view of an mn_major scale buffer that F.scaled_mm takes."""
    if data.dtype not in FP8_TYPES:
        raise QctError(f"{name}: expected fp8 data (torch.float8_e4m3fn), found {data.dtype}")
    if data.dim() != 2:
        raise QctError(f"{name}: expected 2 dims [rows, L], found {tuple(data.shape)}")
    rows, length = data.shape
    if data.stride(1) != 1 or data.stride(0) < length or data.stride(0) % 16:
        raise QctError(f"{name}: rows must be contiguous with a row stride that is a multiple of "
                       f"16 bytes and at least {length}; found strides {data.stride()}")
    if data.data_ptr() % 16:
        raise QctError(f"{name}: data must start 16-byte aligned")
    if rows % 4:
        raise QctError(f"{name}: F.scaled_mm reads 1x128 scales with strides (1, rows), so rows "
                       f"must be a multiple of 4; found {rows} (pad the tokens to a multiple of 4)")
    if scales.dtype != torch.float32:
        raise QctError(f"{name}_scales: expected float32 1x128 scales, found {scales.dtype}")
    want = (_cdiv(length, BLOCK), rows)
    if scales.dim() != 2 or tuple(scales.shape) != want:
        raise QctError(f"{name}_scales: expected the mn_major shape [cdiv(L,128), rows] = "
                       f"{list(want)} for {name} of shape {[rows, length]}, found "
                       f"{list(scales.shape)} (a row_major scale buffer is [rows, L/128]: compile "
                       "the spec with \"scale_layout\": \"mn_major\")")
    if scales.stride(1) != 1 or scales.stride(0) != rows:
        raise QctError(f"{name}_scales: expected strides ({rows}, 1), found {scales.stride()}")
    if scales.data_ptr() % 16:
        raise QctError(f"{name}_scales: must start 16-byte aligned")
    return scales.t()


def mm(a: torch.Tensor, a_scales: torch.Tensor, b: torch.Tensor, b_scales: torch.Tensor,
       out_dtype: torch.dtype = torch.bfloat16) -> torch.Tensor:
    """a @ b^T through F.scaled_mm's 1x128 x 1x128 recipe; a and b as the module says."""
    from torch.nn.functional import ScalingType, scaled_mm

    if a.shape[1:] != b.shape[1:]:
        raise QctError(f"a and b must share the contraction length: a {list(a.shape)}, "
                       f"b {list(b.shape)}")
    sa = scale_view(a, a_scales, "a")
    sb = scale_view(b, b_scales, "b")
    return scaled_mm(a, b.t(), sa, ScalingType.BlockWise1x128, sb, ScalingType.BlockWise1x128,
                     output_dtype=out_dtype)


def expert_operands(data: torch.Tensor, scales: torch.Tensor,
                    padded_offsets: Sequence[int]) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """Per expert group, the (data, scales) operand pair of a ragged col output (pad_groups_to
    128, mn_major): group g's columns [p[g], p[g+1]) of data [K, C] and its scale rows
    [p[g]/128, p[g+1]/128) of scales [S, rup(K,4)]; views, no copies. `padded_offsets` are the
    kernel's padded offsets on the host (one sync per layer)."""
    K = data.shape[0]
    if scales.shape[1] != K:
        raise QctError(f"scales: a ragged mn_major buffer [S, rup(K,4)] = [S, {K}] is needed "
                       f"(K a multiple of 4), found {list(scales.shape)}")
    pairs = []
    for g in range(len(padded_offsets) - 1):
        start, stop = int(padded_offsets[g]), int(padded_offsets[g + 1])
        if start % BLOCK or stop % BLOCK or stop < start or stop > data.shape[1]:
            raise QctError(f"padded_offsets[{g}:{g + 2}] = [{start}, {stop}]: group bounds must "
                           f"be multiples of {BLOCK} within the {data.shape[1]} columns "
                           "(a spec with pad_groups_to 128)")
        pairs.append((data[:, start:stop], scales[start // BLOCK:stop // BLOCK]))
    return pairs


def dequantize(data: torch.Tensor, scales: torch.Tensor) -> torch.Tensor:
    """float64 values of an operand [rows, L] with mn_major 1x128 scales (for checking)."""
    rows, length = data.shape
    s = scales[:, :rows].t().to(torch.float64)  # [rows, cdiv(L,128)]
    expanded = s.repeat_interleave(BLOCK, dim=1)[:, :length]
    return data.to(torch.float64) * expanded

