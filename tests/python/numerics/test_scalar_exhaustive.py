"""Scalar codecs of the reference against ml_dtypes, exhaustively where the input space allows.

The contract rounds with satfinite (overflow and +-Inf to +-max) and keeps the NaN's sign for fp8;
ml_dtypes casts overflow to NaN (e4m3) or Inf (e5m2). Bits are compared wherever the two
definitions agree (finite input whose rounded value is within range), and the contract's own rules
are asserted separately everywhere else.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

TARGETS = {
    "e2m1": (ml_dtypes.float4_e2m1fn, 6.0, 0x7, 0x8),
    "e4m3": (ml_dtypes.float8_e4m3fn, 448.0, 0x7E, 0x80),
    "e5m2": (ml_dtypes.float8_e5m2, 57344.0, 0x7B, 0x80),
}


def all_bf16() -> np.ndarray:
    return np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)


def fp32_sweep() -> np.ndarray:
    """~16.7M fp32 patterns over every exponent (stride 257 keeps low bits varied) plus every
    pattern with the low 15 bits clear and their neighbours (all fp8/fp4 ties)."""
    dense = np.arange(0, 1 << 32, 257, dtype=np.uint64).astype(np.uint32)
    ties = (np.arange(1 << 17, dtype=np.uint32) << np.uint32(15))
    return np.concatenate([dense, ties, ties + np.uint32(1), ties - np.uint32(1)])


def values_of(bits: np.ndarray, kind: str) -> np.ndarray:
    with np.errstate(invalid="ignore"):  # signalling NaN patterns widen to quiet NaNs
        if kind == "bf16":
            return bits.view(ml_dtypes.bfloat16).astype(np.float64)
        if kind == "fp16":
            return bits.view(np.float16).astype(np.float64)
        return bits.view(np.float32).astype(np.float64)


def check_against_ml_dtypes(ref, x: np.ndarray, target: str) -> None:
    ml_type, maxv, max_code, sign_bit = TARGETS[target]
    ours = ref.encode(target, x)
    with np.errstate(invalid="ignore", over="ignore"):
        theirs = x.astype(np.float32).astype(ml_type).view(np.uint8) if target != "e2m1" \
            else x.astype(ml_type).view(np.uint8)
        back = theirs.view(ml_type).astype(np.float64)
    finite = np.isfinite(x) & np.isfinite(back)
    assert finite.sum() > 0.5 * x.size
    np.testing.assert_array_equal(ours[finite], theirs[finite])
    # The contract where ml_dtypes differs: saturation and NaN with its sign.
    neg = np.signbit(x)
    over = ~np.isnan(x) & ~finite
    want = np.where(neg, sign_bit | max_code, max_code).astype(np.uint8)
    np.testing.assert_array_equal(ours[over], want[over])
    nan = np.isnan(x)
    nan_code = 0 if target == "e2m1" else 0x7F
    want_nan = np.where(neg, nan_code | (0 if target == "e2m1" else 0x80), nan_code)
    np.testing.assert_array_equal(ours[nan], want_nan[nan].astype(np.uint8))


@pytest.mark.parametrize("target", sorted(TARGETS))
@pytest.mark.parametrize("source", ["bf16", "fp16"])
def test_every_16bit_pattern(ref, source: str, target: str) -> None:
    bits = all_bf16()
    x = values_of(bits, source)
    decoded = ref.decode(source, bits)
    np.testing.assert_array_equal(np.isnan(decoded), np.isnan(x))
    ok = ~np.isnan(x)
    np.testing.assert_array_equal(decoded[ok], x[ok])
    assert (np.signbit(decoded[ok]) == np.signbit(x[ok])).all()
    check_against_ml_dtypes(ref, x, target)


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_fp32_sweep(ref, target: str) -> None:
    x = values_of(fp32_sweep(), "fp32")
    check_against_ml_dtypes(ref, x, target)


def test_16bit_encoders_against_ml_dtypes(ref) -> None:
    """bf16/fp16 rounding from fp32 values (IEEE RNE, overflow to Inf) agrees with ml_dtypes /
    numpy on every finite input; NaN becomes the canonical 0x7FFF."""
    x = values_of(fp32_sweep(), "fp32")
    fin = np.isfinite(x)
    with np.errstate(over="ignore", invalid="ignore"):
        bf = x.astype(np.float32).astype(ml_dtypes.bfloat16).view(np.uint16)
        hf = x.astype(np.float32).astype(np.float16).view(np.uint16)
    np.testing.assert_array_equal(ref.encode("bf16", x)[fin], bf[fin])
    np.testing.assert_array_equal(ref.encode("fp16", x)[fin], hf[fin])
    assert (ref.encode("bf16", x)[np.isnan(x)] == 0x7FFF).all()
    assert (ref.encode("fp32", x)[fin] == x[fin].astype(np.float32).view(np.uint32)).all()


@pytest.mark.parametrize("fmt", ["e2m1", "e4m3", "e5m2"])
def test_every_code_decodes_like_ml_dtypes(ref, fmt: str) -> None:
    ml_type = TARGETS[fmt][0]
    n = 16 if fmt == "e2m1" else 256
    codes = np.arange(n, dtype=np.uint8)
    ours = ref.decode(fmt, codes)
    theirs = codes.view(ml_type).astype(np.float64)
    np.testing.assert_array_equal(np.isnan(ours), np.isnan(theirs))
    ok = ~np.isnan(ours)
    np.testing.assert_array_equal(ours[ok], theirs[ok])
    assert (np.signbit(ours[ok]) == np.signbit(theirs[ok])).all()


def test_every_e8m0_code(ref) -> None:
    codes = np.arange(256, dtype=np.uint8)
    ours = ref.decode("e8m0", codes)
    assert np.isnan(ours[255])
    np.testing.assert_array_equal(ours[:255], np.ldexp(1.0, np.arange(255) - 127))
    theirs = codes.view(ml_dtypes.float8_e8m0fnu).astype(np.float64)
    np.testing.assert_array_equal(ours[:255], theirs[:255])
    assert np.isnan(theirs[255])


def test_div_f32_matches_fp32_division(ref) -> None:
    """fl32(a / b) for fp32 operands equals numpy's fp32 division (one IEEE rounding)."""
    rng = np.random.default_rng(7)
    a = (rng.standard_normal(200000) * np.exp2(rng.integers(-60, 60, 200000))).astype(np.float32)
    b = np.abs(rng.standard_normal(200000)).astype(np.float32) + np.float32(1e-30)
    with np.errstate(over="ignore", under="ignore"):
        want = a / b
    got = ref.div_f32(a.astype(np.float64), b.astype(np.float64))
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))
