"""qct's FP8 outputs in torch's own FP8 GEMM (F.scaled_mm, blockwise 1x128 x 1x128 on sm_90):
the forward GEMM (row outputs of activations and weights), the weight-gradient GEMM (col outputs,
contracting over tokens), dense and per ragged expert group, each against a float64 GEMM of the
dequantized operands; and the layouts torch would refuse or misread refused by qct first.

Bound: every element within 2^-7 of |C_ref| plus 2^-11 of (|A| |B|^T), the sum of the products'
magnitudes: the bf16 output rounds to 2^-9 relative; Hopper's FP8 tensor cores accumulate with
about 14 mantissa bits between cuBLASLt's promotions to fp32, so cancelling sums keep an error of
that order of the magnitudes summed. The tests print the median relative error.

Needs torch and an sm_90 GPU (the GPU machine); skips elsewhere.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available() or torch.cuda.get_device_capability()[0] != 9:
    pytest.skip("blockwise F.scaled_mm needs an sm_90 GPU", allow_module_level=True)

import qct.ops  # noqa: E402
from qct import gemm, verify  # noqa: E402
from qct.errors import QctError  # noqa: E402

GEN = Path(__file__).resolve().parents[2] / "generated"


def _op(name: str) -> qct.ops.KernelOp:
    return qct.ops.register(GEN / f"{name}.cu")


def _check(c: torch.Tensor, a: torch.Tensor, a_s: torch.Tensor, b: torch.Tensor,
           b_s: torch.Tensor) -> float:
    """Asserts the bound of the module docstring; returns the largest relative error."""
    A, B = gemm.dequantize(a, a_s), gemm.dequantize(b, b_s)
    ref = A @ B.t()
    magnitude = A.abs() @ B.abs().t()
    bound = ref.abs() * 2.0**-7 + magnitude * 2.0**-11
    err = (c.to(torch.float64) - ref).abs()
    worst = (err - bound).max().item()
    relative = (err / ref.abs().clamp_min(1e-30)).median().item()
    print(f"GEMM {list(a.shape)} x {list(b.shape)}^T: median relative error {relative:.3g}, "
          f"largest error / magnitude {(err / magnitude.clamp_min(1e-30)).max().item():.3g}")
    assert worst <= 0, f"max excess over the bound {worst:.3g} (max err {err.max().item():.3g})"
    return relative


def _bf16(rows: int, cols: int, seed: int) -> torch.Tensor:
    g = torch.Generator(device="cuda").manual_seed(seed)
    return torch.randn(rows, cols, generator=g, device="cuda").to(torch.bfloat16)


def test_forward_gemm_dense() -> None:
    quantize = _op("bf16_to_fp8_e4m3_row_col_mn")
    x, w = _bf16(512, 1024, 1), _bf16(384, 1024, 2) * 0.05
    y, ys, _, _ = quantize(x)
    wq, wqs, _, _ = quantize(w)
    c = gemm.mm(y, ys, wq, wqs)
    assert c.shape == (512, 384) and c.dtype == torch.bfloat16
    _check(c, y, ys, wq, wqs)


def test_weight_gradient_gemm_dense() -> None:
    """dW = dY^T X with both operands the col (transposed) outputs, contracting over tokens."""
    quantize = _op("bf16_to_fp8_e4m3_row_col_mn")
    dy, x = _bf16(1024, 256, 3), _bf16(1024, 512, 4)
    _, _, dyt, dyts = quantize(dy)
    _, _, xt, xts = quantize(x)
    dw = gemm.mm(dyt, dyts, xt, xts)
    assert dw.shape == (256, 512)
    _check(dw, dyt, dyts, xt, xts)


def test_forward_gemm_from_mxfp4_cache() -> None:
    """The paper's forward: the MXFP4 copy converted straight to the FP8 row operand."""
    to_fp8 = _op("mxfp4_to_fp8_e4m3_row_mn")
    meta = verify.load_metadata(GEN / "mxfp4_to_fp8_e4m3_row_mn.json")
    src = verify.make_source(meta, 256, 1024, seed=5, realistic=True)  # finite values
    inputs = verify.kernel_inputs(meta, src, None, torch.device("cuda"))
    y, ys = to_fp8(inputs["src"], inputs["src_scales"])
    wq, wqs, _, _ = _op("bf16_to_fp8_e4m3_row_col_mn")(_bf16(128, 1024, 6))
    _check(gemm.mm(y, ys, wq, wqs), y, ys, wq, wqs)


def _ragged_col(seed: int, M: int, K: int, offsets: Any) -> tuple[Any, Any, Any]:
    name = "mxfp4_to_fp8_e4m3_col_ragged_mn"
    op = _op(name)
    meta = verify.load_metadata(GEN / f"{name}.json")
    src = verify.make_source(meta, M, K, seed=seed, realistic=True)  # finite values
    inputs = verify.kernel_inputs(meta, src, offsets, torch.device("cuda"))
    y, ys, padded = op(inputs["src"], inputs["src_scales"], inputs["offsets"])
    return y, ys, padded


def test_weight_gradient_gemm_per_ragged_expert() -> None:
    """Per expert, F.scaled_mm of the group's columns and scale rows: views of the ragged col
    outputs, no copies; empty groups give zeros."""
    import numpy as np

    M = 1500
    offsets = np.array([0, 300, 300, 1000, 1129, 1500], dtype=np.int32)  # one empty group
    dyt, dyts, padded = _ragged_col(7, M, 256, offsets)
    xt, xts, padded_x = _ragged_col(8, M, 512, offsets)
    assert torch.equal(padded, padded_x)
    bounds = padded.cpu().tolist()  # the one host sync of the layer
    pairs = zip(gemm.expert_operands(dyt, dyts, bounds), gemm.expert_operands(xt, xts, bounds))
    for g, ((a, a_s), (b, b_s)) in enumerate(pairs):
        if a.shape[1] == 0:
            continue
        assert a.data_ptr() == dyt[:, bounds[g]:].data_ptr()  # a view
        dw = gemm.mm(a, a_s, b, b_s)
        assert dw.shape == (256, 512)
        _check(dw, a, a_s, b, b_s)


def test_unpadded_rows_are_refused_before_torch() -> None:
    quantize = _op("bf16_to_fp8_e4m3_row_col_mn")
    y, ys, _, _ = quantize(_bf16(510, 256, 9))   # scales [2, 512]: rows padded to 4
    wq, wqs, _, _ = quantize(_bf16(128, 256, 10))
    with pytest.raises(QctError, match="rows must be a multiple of 4; found 510"):
        gemm.mm(y, ys, wq, wqs)


def test_wrong_strides_and_layouts_are_refused() -> None:
    quantize = _op("bf16_to_fp8_e4m3_row_col_mn")
    y, ys, _, _ = quantize(_bf16(256, 512, 11))
    wq, wqs, _, _ = quantize(_bf16(128, 512, 12))
    with pytest.raises(QctError, match=r"a_scales: expected the mn_major shape"):
        gemm.mm(y, ys.t().contiguous(), wq, wqs)  # a row_major-shaped scale buffer
    with pytest.raises(QctError, match=r"a_scales: expected strides"):
        gemm.mm(y, ys.t().contiguous().t(), wq, wqs)  # right shape, transposed strides
    with pytest.raises(QctError, match=r"a: rows must be contiguous"):
        gemm.mm(y.t().contiguous().t(), ys, wq, wqs)
    with pytest.raises(QctError, match=r"b: expected fp8 data"):
        gemm.mm(y, ys, wq.view(torch.uint8), wqs)


def test_torch_accepts_exactly_the_views_qct_builds() -> None:
    """The contract qct relies on, checked against torch itself: the transposed mn_major view
    passes, the same values in a contiguous [rows, L/128] tensor do not."""
    from torch.nn.functional import ScalingType, scaled_mm

    quantize = _op("bf16_to_fp8_e4m3_row_col_mn")
    y, ys, _, _ = quantize(_bf16(256, 512, 13))
    wq, wqs, _, _ = quantize(_bf16(128, 512, 14))
    ok = scaled_mm(y, wq.t(), ys.t(), ScalingType.BlockWise1x128, wqs.t(),
                   ScalingType.BlockWise1x128, output_dtype=torch.bfloat16)
    assert ok.shape == (256, 128)
    with pytest.raises((RuntimeError, ValueError)):
        scaled_mm(y, wq.t(), ys.t().contiguous(), ScalingType.BlockWise1x128, wqs.t(),
                  ScalingType.BlockWise1x128, output_dtype=torch.bfloat16)
    # Rows not a multiple of 4: the buffer's padded stride rup(M,4) is not the (1, M) torch reads.
    y2, ys2, _, _ = quantize(_bf16(254, 512, 15))
    assert ys2.shape == (4, 256)
    with pytest.raises((RuntimeError, ValueError)):
        scaled_mm(y2, wq.t(), ys2.t()[:254], ScalingType.BlockWise1x128, wqs.t(),
                  ScalingType.BlockWise1x128, output_dtype=torch.bfloat16)


def test_readme_torch_example_runs() -> None:
    """README's torch example, as written there."""
    import re

    readme = (GEN.parent / "README.md").read_text()
    block = re.search(r"From torch, a kernel is a torch op.*?```python\n(.*?)```", readme, re.S)
    assert block, "README's torch example is gone"
    scope: dict[str, Any] = {}
    exec(compile(block.group(1), "README.md", "exec"), scope)
    y = scope["y"]
    assert y.shape == (8192, 4096) and y.dtype == torch.bfloat16
    _check(y[:256], scope["xq"][:256], scope["xs"][:, :256], scope["wq"], scope["ws"])
