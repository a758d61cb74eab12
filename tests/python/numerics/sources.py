"""Random and adversarial source tensors for the block and layout tests (deterministic seeds)."""

from __future__ import annotations

import ml_dtypes
import numpy as np

from qct.reference import Source


def _bf16_bits(v: np.ndarray) -> np.ndarray:
    return v.astype(np.float32).astype(ml_dtypes.bfloat16).view(np.uint16)


def bf16_source(M: int, K: int, seed: int) -> Source:
    """Blocks with wide exponent spreads (each 32-run draws its own centre and spread) and
    adversarial rows: NaN, +-Inf, all zero, amax at 2^n, 6*2^n, 448*2^n and their bf16
    neighbours, bf16 subnormals, the largest finite values."""
    rng = np.random.default_rng(seed)
    exps = np.empty((M, K), np.int64)
    for m in range(M):
        for k0 in range(0, K, 32):
            centre = rng.integers(1, 254)
            spread = rng.choice([0, 3, 12, 40, 250])
            exps[m, k0:k0 + 32] = np.clip(centre + rng.integers(-spread, spread + 1, 32), 0, 254)
    bits = ((rng.integers(0, 2, (M, K)) << 15) | (exps << 7) | rng.integers(0, 128, (M, K)))
    bits = bits.astype(np.uint16)
    bits[(bits & 0x7FFF) >= 0x7F80] &= 0xBFFF  # non-finite only where placed below
    specials = [np.nan, np.inf, -np.inf]
    for m in range(0, M, 7):
        kind = (m // 7) % 8
        row = bits[m]
        if kind == 0:
            row[rng.integers(0, K)] = _bf16_bits(np.array([rng.choice(specials)]))[0]
        elif kind == 1:
            row[:] = 0x8000 if m % 2 else 0
        elif kind in (2, 3, 4):
            n = int(rng.integers(-130, 120))
            base = {2: 1.0, 3: 6.0, 4: 448.0}[kind] * 2.0 ** n
            v = int(_bf16_bits(np.array([base]))[0])  # the value and its bf16 neighbours
            near = np.array([v, v + 1, v - 1], np.int64)[np.arange(len(row[::5])) % 3]
            row[::5] = near.astype(np.uint16)
            row[1::5] = (v & 0x7FFF) - 300 if (v & 0x7FFF) > 300 else 1
        elif kind == 5:
            row[:] = rng.integers(0, 128, K).astype(np.uint16) | (rng.integers(0, 2, K) << 15)
        elif kind == 6:
            row[:] = 0x7F7F - rng.integers(0, 4, K).astype(np.uint16)
        else:
            row[rng.integers(0, K, 3)] = 0x7FC0
    return Source("bf16", bits, None, M, K)


def fp16_source(M: int, K: int, seed: int) -> Source:
    rng = np.random.default_rng(seed)
    bits = rng.integers(0, 1 << 16, (M, K)).astype(np.uint16)
    nan_inf = (bits & 0x7C00) == 0x7C00
    bits[nan_inf & (rng.random((M, K)) < 0.9)] &= 0xBFFF  # keep only a few non-finite
    return Source("fp16", bits, None, M, K)


def fp32_source(M: int, K: int, seed: int) -> Source:
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((M, K)) * np.exp2(rng.integers(-140, 125, (M, 1)))).astype(np.float32)
    x[3, 5] = np.float32(3.4e38)
    x[5, :] = np.float32(1e-45) * rng.integers(0, 4, K)  # fp32 subnormals
    return Source("fp32", x, None, M, K)


def mx_source(fmt: str, M: int, K: int, seed: int) -> Source:
    """Random codes; scale bytes drawn around a centre, with 0, 254 and 0xFF blocks."""
    rng = np.random.default_rng(seed)
    if fmt == "mxfp4":
        data = rng.integers(0, 256, (M, K // 2)).astype(np.uint8)
    else:
        data = rng.integers(0, 256, (M, K)).astype(np.uint8)
        nan = (data & 0x7F) == 0x7F if fmt == "mxfp8_e4m3" else (data & 0x7C) == 0x7C
        data[nan & (rng.random(data.shape) < 0.95)] &= 0xBB
    centre = rng.integers(20, 230, (M, 1))
    scales = np.clip(centre + rng.integers(-20, 21, (M, K // 32)), 0, 254).astype(np.uint8)
    scales[rng.random(scales.shape) < 0.03] = 0xFF
    scales[rng.random(scales.shape) < 0.03] = 0
    scales[rng.random(scales.shape) < 0.03] = 254
    return Source(fmt, data, scales, M, K)


def fp8_source(fmt: str, M: int, K: int, seed: int) -> Source:
    rng = np.random.default_rng(seed)
    data = rng.integers(0, 256, (M, K)).astype(np.uint8)
    s = (np.abs(rng.standard_normal((M, K // 128))) *
         np.exp2(rng.integers(-140, 120, (M, K // 128)))).astype(np.float32)
    s.reshape(-1)[:3] = [np.float32(1e-42), np.float32(3e38), np.float32(2.0 ** -126)]
    return Source(fmt, data, s, M, K)
