"""The input generators: adversarial data hits the contract's corners, realistic data avoids them."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from qct import inputs

FORMATS = ("bf16", "fp16", "fp32", "mxfp4", "mxfp8_e4m3", "mxfp8_e5m2", "fp8_e4m3", "fp8_e5m2")


def _values(src: inputs.SourceTensor) -> np.ndarray:
    if src.format == "bf16":
        with np.errstate(invalid="ignore"):  # NaN payloads widen with a warning
            return src.data.view(ml_dtypes.bfloat16).astype(np.float64)
    if src.format == "fp16":
        return src.data.view(np.float16).astype(np.float64)
    if src.format == "fp32":
        return src.data.view(np.float32).astype(np.float64)
    raise ValueError(src.format)


@pytest.mark.parametrize("fmt", FORMATS)
def test_realistic_inputs_are_finite_and_not_zero(fmt: str) -> None:
    src = inputs.realistic(np.random.default_rng(0), fmt, 64, 512)
    if fmt in inputs.HIGH_PRECISION:
        v = _values(src)
        assert np.isfinite(v).all() and (v != 0).mean() > 0.99
    elif fmt in inputs.MX_FORMATS:
        assert src.scales.min() >= 115 and src.scales.max() <= 135  # no 0, 254 or NaN blocks
        assert src.data.any()
    else:
        assert np.isfinite(src.scales).all() and (src.scales > 0).all()
        nan = (src.data & 0x7F) == 0x7F if fmt.endswith("e4m3") else (src.data & 0x7C) == 0x7C
        assert not nan.any()


def test_adversarial_mx_inputs_hit_the_scale_corners() -> None:
    src = inputs.source(np.random.default_rng(0), "mxfp4", 512, 1024)
    for byte in (0, 254, 255):
        assert (src.scales == byte).any(), f"no block with scale byte {byte}"


def test_adversarial_bf16_inputs_hold_nan_inf_zero_and_subnormal_blocks() -> None:
    v = _values(inputs.source(np.random.default_rng(0), "bf16", 512, 1024))
    assert np.isnan(v).any() and np.isinf(v).any() and (v == 0).any()
    tiny = (v != 0) & (np.abs(v) < 2.0 ** -126)
    assert tiny.any()


def test_ragged_offsets_have_empty_and_one_row_groups() -> None:
    o = inputs.ragged_offsets(np.random.default_rng(5), 100000, 256)
    sizes = np.diff(o)
    assert o[0] == 0 and o[-1] == 100000 and (sizes >= 0).all()
    assert (sizes == 0).any() and (sizes == 1).any() and (sizes % 128 != 0).any()
