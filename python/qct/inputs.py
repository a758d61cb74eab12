"""Adversarial random inputs for qct kernels, as plain numpy arrays of raw bits.

Used by `qct run`, the GPU tier and the benchmarks, so every consumer stresses the
same corners of the numerics contract: wide exponent spreads within a block,
NaN/Inf blocks, all-zero blocks, subnormals, MX scale bytes at 0 and 254, scale
gaps over 14 within one 128-block, and ragged groups that are empty, one row
long or not a multiple of 128.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# Raw storage of each source format: (numpy dtype of the element bits, elements per byte-unit).
HIGH_PRECISION = {"bf16": (np.uint16, 8, 7), "fp16": (np.uint16, 5, 10), "fp32": (np.uint32, 8, 23)}
MX_FORMATS = ("mxfp4", "mxfp8_e4m3", "mxfp8_e5m2")
FP8_BLOCK_FORMATS = ("fp8_e4m3", "fp8_e5m2")


@dataclass
class SourceTensor:
    """A source in the kernel's storage: data [M, K] (packed for fp4) and optional scales."""

    format: str
    data: np.ndarray
    scales: np.ndarray | None
    M: int
    K: int


def _special_blocks(rng: np.random.Generator, M: int, K: int, block: int, rate: float) -> dict[str, np.ndarray]:
    """Boolean element masks choosing whole blocks (along K) to overwrite with specials."""
    nb = K // block
    kinds = ("nan", "inf", "zero", "subnormal")
    pick = rng.random((M, nb))
    masks = {}
    for i, kind in enumerate(kinds):
        chosen = (pick >= i * rate) & (pick < (i + 1) * rate)
        masks[kind] = np.repeat(chosen, block, axis=1)
    return masks


def high_precision(rng: np.random.Generator, fmt: str, M: int, K: int, special_rate: float = 0.02) -> SourceTensor:
    """bf16/fp16/fp32 bits: per 32-block a random base exponent, elements spread about 24 binades
    around it, random signs and mantissas; some blocks NaN, +-Inf, zero or subnormal only."""
    dtype, ebits, mbits = HIGH_PRECISION[fmt]
    emax = (1 << ebits) - 2
    base = rng.integers(1, emax + 1, size=(M, max(K // 32, 1)))
    base = np.repeat(base, 32, axis=1)[:, :K] if K >= 32 else base[:, :1].repeat(K, axis=1)
    exp = np.clip(base + rng.integers(-24, 4, size=(M, K)), 0, emax)
    mant = rng.integers(0, 1 << mbits, size=(M, K), dtype=np.uint64)
    sign = rng.integers(0, 2, size=(M, K), dtype=np.uint64)
    bits = (sign << (ebits + mbits)) | (exp.astype(np.uint64) << mbits) | mant
    if K % 32 == 0 and K > 0:
        masks = _special_blocks(rng, M, K, 32, special_rate)
        expmask = ((1 << ebits) - 1) << mbits
        signbit = 1 << (ebits + mbits)
        # One special element in a NaN/Inf block is enough to poison it; keep the rest random.
        first = np.zeros((M, K), dtype=bool)
        first[:, rng.integers(0, 32)::32] = True
        bits = np.where(masks["nan"] & first, expmask | 1, bits)
        bits = np.where(masks["inf"] & first, expmask | (sign * signbit), bits)
        bits = np.where(masks["zero"], sign * signbit, bits)
        bits = np.where(masks["subnormal"], (sign * signbit) | (mant & ((1 << mbits) - 1)), bits)
    return SourceTensor(fmt, bits.astype(dtype), None, M, K)


def mx(rng: np.random.Generator, fmt: str, M: int, K: int) -> SourceTensor:
    """MX source: random element codes and e8m0 scales spread over the whole range, with 0, 254 and
    0xFF (NaN) bytes, and 128-element groups whose four scales differ by more than 14."""
    nb = K // 32
    scales = rng.integers(100, 160, size=(M, nb)).astype(np.int64)
    r = rng.random((M, nb))
    scales = np.where(r < 0.02, 0, scales)
    scales = np.where((r >= 0.02) & (r < 0.04), 254, scales)
    scales = np.where((r >= 0.04) & (r < 0.05), 255, scales)
    wide = (r >= 0.05) & (r < 0.15)  # scale gap beyond 14 within a 128-block
    scales = np.where(wide, np.clip(scales - rng.integers(15, 41, size=(M, nb)), 0, 254), scales)
    scales = np.where((r >= 0.15) & (r < 0.2), rng.integers(0, 255, size=(M, nb)), scales)
    if fmt == "mxfp4":
        codes = rng.integers(0, 16, size=(M, K), dtype=np.uint8)
        data = (codes[:, 0::2] | (codes[:, 1::2] << 4)).astype(np.uint8)
    else:
        data = rng.integers(0, 256, size=(M, K), dtype=np.uint8)
    return SourceTensor(fmt, data, scales.astype(np.uint8), M, K)


def fp8_block(rng: np.random.Generator, fmt: str, M: int, K: int) -> SourceTensor:
    """FP8 1x128 source with power-of-two f32 scale_inv over the whole e8m0 range (2^-127 is an fp32
    subnormal and must survive)."""
    data = rng.integers(0, 256, size=(M, K), dtype=np.uint8)
    e = rng.integers(-127, 128, size=(M, K // 128))
    e = np.where(rng.random(e.shape) < 0.5, rng.integers(-10, 10, size=e.shape), e)
    scales = np.ldexp(np.float64(1.0), e).astype(np.float32)
    return SourceTensor(fmt, data, scales, M, K)


def source(rng: np.random.Generator, fmt: str, M: int, K: int) -> SourceTensor:
    if fmt in HIGH_PRECISION:
        return high_precision(rng, fmt, M, K)
    if fmt in MX_FORMATS:
        return mx(rng, fmt, M, K)
    if fmt in FP8_BLOCK_FORMATS:
        return fp8_block(rng, fmt, M, K)
    raise ValueError(f"unknown source format {fmt!r}")


def ragged_offsets(rng: np.random.Generator, M: int, G: int, dtype: type = np.int32) -> np.ndarray:
    """G+1 offsets summing to M with the shapes that break kernels: empty groups, one-row groups,
    groups not a multiple of 128, and a skew (a few large groups, many small)."""
    if G < 1:
        raise ValueError("G must be at least 1")
    weights = rng.pareto(1.2, size=G) + 0.05
    weights[rng.random(G) < 0.15] = 0.0  # empty groups
    if weights.sum() == 0:
        weights[0] = 1.0
    sizes = np.floor(weights / weights.sum() * M).astype(np.int64)
    ones = np.flatnonzero(rng.random(G) < 0.1)
    sizes[ones[sizes[ones] > 0]] = 1  # one-row groups
    sizes[int(np.argmax(sizes))] += M - int(sizes.sum())  # exact total
    if sizes.min() < 0:  # the one-row groups took rows from the largest: rebalance simply
        sizes = np.maximum(sizes, 0)
        sizes[int(np.argmax(sizes))] += M - int(sizes.sum())
    return np.concatenate([[0], np.cumsum(sizes)]).astype(dtype)


def realistic(rng: np.random.Generator, fmt: str, M: int, K: int) -> SourceTensor:
    """Inputs shaped like real activations, for timing (correctness uses `source`): values from a
    normal distribution with a per-row spread of a few binades and a few outlier channels; MX scale
    bytes in a narrow band around 2^-2..2^2 with no 0, 254 or NaN blocks; FP8 1x128 codes without
    NaN and power-of-two scales near 1. No NaN, no Inf, no subnormal-only blocks."""
    if fmt in HIGH_PRECISION:
        row_scale = np.exp2(rng.normal(0.0, 2.0, size=(M, 1))).astype(np.float32)
        values = rng.standard_normal((M, K), dtype=np.float32) * row_scale
        outliers = rng.random(K) < 0.01  # LLM activations carry a few large channels
        values[:, outliers] *= 30.0
        if fmt == "fp32":
            bits = values.view(np.uint32)
        elif fmt == "fp16":
            bits = values.astype(np.float16).view(np.uint16)
        else:
            import ml_dtypes

            bits = values.astype(ml_dtypes.bfloat16).view(np.uint16)
        return SourceTensor(fmt, np.ascontiguousarray(bits), None, M, K)
    if fmt in MX_FORMATS:
        nb = K // 32
        scales = np.clip(np.rint(rng.normal(125.0, 2.0, size=(M, nb))), 115, 135).astype(np.uint8)
        if fmt == "mxfp4":
            codes = rng.integers(0, 16, size=(M, K), dtype=np.uint8)
            data = (codes[:, 0::2] | (codes[:, 1::2] << 4)).astype(np.uint8)
        else:
            data = _finite_fp8_codes(rng, fmt, M, K)
        return SourceTensor(fmt, data, scales, M, K)
    if fmt in FP8_BLOCK_FORMATS:
        data = _finite_fp8_codes(rng, fmt, M, K)
        scales = np.ldexp(np.float32(1.0), rng.integers(-8, 9, size=(M, K // 128))).astype(np.float32)
        return SourceTensor(fmt, data, scales, M, K)
    raise ValueError(f"unknown source format {fmt!r}")


def _finite_fp8_codes(rng: np.random.Generator, fmt: str, M: int, K: int) -> np.ndarray:
    """Random e4m3 / e5m2 codes with the non-finite ones replaced by zero."""
    data = rng.integers(0, 256, size=(M, K), dtype=np.uint8)
    if fmt.endswith("e4m3"):
        nonfinite = (data & 0x7F) == 0x7F
    else:
        nonfinite = (data & 0x7C) == 0x7C
    data[nonfinite] = 0
    return data
