"""Every (e2m1 code, scale gap 0..40) through the aligned mxfp4 -> fp8_e4m3 conversion.

Row r of the source holds, in its first 32-block, the block maximum 6 at scale byte bmax and in
its second block all 16 e2m1 codes (twice) at scale byte bmax - gap. The contract: s = 2^(bmax -
133), each element is e2m1 * 2^(6 - gap) rounded once into e4m3; for gap <= 14 that is exact."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from model import E2M1, E4M3, V, decode_code, encode

GAPS = range(0, 41)


@pytest.mark.parametrize("layout", ["row", "col"])
@pytest.mark.parametrize("bmax", [6, 133, 254])
def test_every_code_and_gap(ref, layout: str, bmax: int) -> None:
    M, K = len(GAPS), 128
    codes = np.tile(np.arange(16, dtype=np.uint8), 2)
    data = np.zeros((M, K // 2), np.uint8)
    data[:, :16] = 0x77  # block 0: all 6
    data[:, 16:32] = (codes[0::2] | (codes[1::2] << 4))
    scales = np.zeros((M, K // 32), np.uint8)
    scales[:, 0] = bmax
    for r, gap in enumerate(GAPS):
        scales[r, 1] = max(bmax - gap, 0)
    scales[:, 2:] = 0xFF  # blocks that do not raise bmax and decode to NaN
    src = ref.Source("mxfp4", data, scales, M, K)
    out = ref.convert(src, ref.Output("fp8_e4m3", layout, "aligned"))
    s = np.float32(np.ldexp(1.0, bmax - 133))
    if layout == "row":
        assert (out.scales == s).all()
        q = out.data.reshape(M, K)
        for r, gap in enumerate(GAPS):
            b1 = max(bmax - gap, 0)
            for i, c in enumerate(codes):
                e = decode_code(E2M1, int(c))
                x = V(e.neg, "fin", e.mag * Fraction(2) ** (b1 - 127) / Fraction(2) ** (bmax - 133))
                want = encode(E4M3, x)
                assert q[r, 32 + i] == want, (gap, c)
                if bmax - b1 <= 14:  # exact: decoded value is the element value
                    assert decode_code(E4M3, want).mag == x.mag
            assert (q[r, :32] == 0x7C).all()  # 384
            assert (q[r, 64:] == 0x7F).all()  # 0xFF blocks: positive NaN
    else:
        # Column k: one 128x1 block over all M rows; bmax over the rows' scale bytes.
        q = out.data.reshape(K, M)
        b1s = [max(bmax - g, 0) for g in GAPS]
        col_bmax = max(b1s)
        s_col = np.ldexp(1.0, col_bmax - 133)
        sc = out.scales.reshape(K, 1)
        assert (sc[:32, 0] == np.float32(np.ldexp(1.0, bmax - 133))).all()
        assert (sc[32:64, 0] == np.float32(s_col)).all()
        assert (sc[64:, 0] == 1.0).all()  # every covered block is 0xFF
        for i, c in enumerate(codes):
            e = decode_code(E2M1, int(c))
            for r, b1 in enumerate(b1s):
                x = V(e.neg, "fin", e.mag * Fraction(2) ** (b1 - 127) / Fraction(s_col))
                assert q[32 + i, r] == encode(E4M3, x), (r, c)
