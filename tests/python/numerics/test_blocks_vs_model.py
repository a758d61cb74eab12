"""Whole conversions of the C++ reference against the independent Python model (model.py,
model_layout.py): every source format, every output format and scale policy, row and col,
row_major and mn_major, fused and via bf16. Bitwise equality of every output byte."""

from __future__ import annotations

import functools

import numpy as np
import pytest

import sources
from model_layout import model_convert

M, K = 130, 128  # col blocks: one full 128 block and a partial one; 4 MX blocks per row


@functools.lru_cache(maxsize=None)
def source(kind: str):
    seed = abs(hash(kind)) % 1000
    if kind == "bf16":
        return sources.bf16_source(M, K, 11)
    if kind == "fp16":
        return sources.fp16_source(M, K, 12)
    if kind == "fp32":
        return sources.fp32_source(M, K, 13)
    if kind.startswith("mx"):
        return sources.mx_source(kind, M, K, 14 + len(kind))
    return sources.fp8_source(kind, M, K, 20 + len(kind) + seed % 1)


OUTPUTS = [
    ("mxfp4", "floor"), ("mxfp4", "rceil"), ("mxfp8_e4m3", "floor"), ("mxfp8_e5m2", "rceil"),
    ("fp8_e4m3", "amax"), ("fp8_e5m2", "amax"), ("fp8_e4m3", "pow2"), ("fp8_e5m2", "pow2"),
    ("bf16", "none"), ("fp32", "none"),
]
CASES = []
for src in ["bf16", "fp16", "fp32", "mxfp4", "mxfp8_e4m3", "mxfp8_e5m2", "fp8_e4m3", "fp8_e5m2"]:
    outs = list(OUTPUTS)
    if src.startswith("mx"):
        outs += [("fp8_e4m3", "aligned"), ("fp8_e5m2", "aligned")]
    for i, (fmt, scale) in enumerate(outs):
        layout = "col" if i % 2 == 0 else "row"
        CASES.append((src, fmt, scale, layout, "row_major", False))
    # A second layout for the main paths, mn_major scales, and the unfused chain.
    CASES.append((src, "mxfp4", "floor", "row", "mn_major", False))
    CASES.append((src, "fp8_e4m3", "amax", "col", "mn_major", src not in ("bf16",)))
    CASES.append((src, "fp8_e4m3", "pow2", "row", "row_major", True))
for src in ["mxfp4", "mxfp8_e5m2"]:
    CASES.append((src, "fp8_e4m3", "aligned", "col", "row_major", True))
    CASES.append((src, "fp8_e4m3", "aligned", "row", "mn_major", False))
    CASES.append((src, "mxfp8_e4m3", "rceil", "col", "row_major", True))


@pytest.mark.parametrize("src_kind,fmt,scale,layout,scale_layout,via", CASES,
                         ids=["-".join(map(str, c)) for c in CASES])
def test_matches_model(ref, src_kind, fmt, scale, layout, scale_layout, via) -> None:
    src = source(src_kind)
    got = ref.convert(src, ref.Output(fmt, layout, scale, scale_layout, via))
    data, scales, _ = model_convert(src.format, src.data, src.scales, M, K, fmt, layout, scale,
                                    scale_layout, via)
    np.testing.assert_array_equal(got.data, data)
    if scales is None:
        assert got.scales is None
    else:
        np.testing.assert_array_equal(got.scales.view(np.uint8), scales.view(np.uint8))
