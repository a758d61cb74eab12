"""Layouts and ragged placement against the model: empty groups, one-row groups, groups not a
multiple of 128, pad_groups_to 1, 32 and 128, int32/int64 offsets, mn_major padding, capacity
fill; plus the argument checks as Python sees them."""

from __future__ import annotations

import numpy as np
import pytest

import sources
from model_layout import model_convert

M, K = 300, 64

GROUPINGS = {
    "empty-first-and-last": [0, 0, 130, 131, 300, 300],
    "one-row-groups": [0, 1, 2, 3, 300],
    "single-group": [0, 300],
    "ragged-sizes": [0, 37, 37, 165, 200, 300],
}


@pytest.fixture(scope="module")
def bf16_src():
    return sources.bf16_source(M, K, 5)


CASES = [(g, P, fmt, scale, sl)
         for g in GROUPINGS
         for P, fmt, scale, sl in [(1, "fp8_e4m3", "amax", "row_major"),
                                   (128, "mxfp4", "floor", "mn_major"),
                                   (32, "fp8_e5m2", "pow2", "mn_major"),
                                   (128, "fp8_e4m3", "amax", "row_major"),
                                   (1, "mxfp4", "rceil", "row_major"),
                                   (3, "bf16", "none", "row_major")]]


@pytest.mark.parametrize("grouping,P,fmt,scale,sl", CASES,
                         ids=[f"{c[0]}-P{c[1]}-{c[2]}-{c[4]}" for c in CASES])
def test_ragged_col_matches_model(ref, bf16_src, grouping, P, fmt, scale, sl) -> None:
    offs = GROUPINGS[grouping]
    dtype = np.int64 if P == 32 else np.int32
    rg = ref.Ragged(np.array(offs, dtype), P)
    got = ref.convert(bf16_src, ref.Output(fmt, "col", scale, sl), rg)
    data, scales, padded = model_convert("bf16", bf16_src.data, None, M, K, fmt, "col", scale, sl,
                                         offsets=offs, P=P)
    G = len(offs) - 1
    C = M if P == 1 else -(-(M + G * (P - 1)) // 128) * 128  # docs/kernel-abi.md
    assert got.data.size == data.size
    np.testing.assert_array_equal(got.data, data)
    np.testing.assert_array_equal(got.padded_offsets, np.array(padded, dtype))
    assert got.padded_offsets.dtype == dtype
    if scales is not None:
        np.testing.assert_array_equal(got.scales.view(np.uint8), scales.view(np.uint8))
        B = 32 if fmt.startswith("mx") else 128
        S = -(-C // B) + G
        assert got.scales.size == (S * K if sl == "row_major" else S * (-(-K // 4) * 4))


UNTOUCHED = 0x5A  # what the buffers hold before an untouched-tail convert


@pytest.mark.parametrize("grouping,P,fmt,scale,sl", CASES,
                         ids=[f"{c[0]}-P{c[1]}-{c[2]}-{c[4]}" for c in CASES])
def test_untouched_tail_keeps_the_tail(ref, bf16_src, grouping, P, fmt, scale, sl) -> None:
    """capacity_tail "untouched": the model's bytes up to the tail, the buffers' own after it."""
    offs = GROUPINGS[grouping]
    rg = ref.Ragged(np.array(offs, np.int32), P, untouched_tail=True)
    got = ref.convert(bf16_src, ref.Output(fmt, "col", scale, sl), rg, fill=UNTOUCHED)
    data, scales, padded = model_convert("bf16", bf16_src.data, None, M, K, fmt, "col", scale, sl,
                                         offsets=offs, P=P)
    G = len(offs) - 1
    C = M if P == 1 else -(-(M + G * (P - 1)) // 128) * 128  # docs/kernel-abi.md
    # Data rows: a byte holding only columns at or past p[G] is the tail.
    width = {"mxfp4": 0.5, "bf16": 2}.get(fmt, 1)
    row_bytes, kept = int(-(-C * width // 1)), int(-(-padded[-1] * width // 1))
    want = data.reshape(K, row_bytes).copy()
    want[:, kept:] = UNTOUCHED
    np.testing.assert_array_equal(got.data.reshape(K, row_bytes), want)
    np.testing.assert_array_equal(got.padded_offsets, np.array(padded, np.int32))
    if scales is not None:
        B = 32 if fmt.startswith("mx") else 128
        owned = sum(-(-(padded[g + 1] - padded[g]) // B) for g in range(G))
        S = -(-C // B) + G
        entry = 1 if fmt.startswith("mx") else 4
        lines = K if sl == "row_major" else -(-K // 4) * 4
        want_s = scales.view(np.uint8).reshape(-1).copy()
        if sl == "row_major":
            want_s.reshape(K, S * entry)[:, owned * entry:] = UNTOUCHED
        else:
            want_s.reshape(S, lines * entry)[owned:, :] = UNTOUCHED
        np.testing.assert_array_equal(got.scales.view(np.uint8).reshape(-1), want_s)


def test_row_output_ignores_groups(ref, bf16_src) -> None:
    dense = ref.convert(bf16_src, ref.Output("mxfp4", "row", "floor"))
    rg = ref.Ragged(np.array([0, 10, 10, 300], np.int32), 128)
    ragged = ref.convert(bf16_src, ref.Output("mxfp4", "row", "floor"), rg)
    np.testing.assert_array_equal(dense.data, ragged.data)
    np.testing.assert_array_equal(dense.scales, ragged.scales)
    np.testing.assert_array_equal(ragged.padded_offsets, [0, 128, 128, 512])  # 290 rows -> 384


def test_col_padding_groups_and_p1_equal_dense(ref, bf16_src) -> None:
    """With P = 1 each group is a dense col output of its rows, blocks restarting per group."""
    offs = [0, 100, 300]
    rg = ref.Ragged(np.array(offs, np.int32), 1)
    got = ref.convert(bf16_src, ref.Output("fp8_e4m3", "col", "amax"), rg)
    C, S = M + 0, -(-M // 128) + 2
    data = got.data.reshape(K, C)
    scales = got.scales.reshape(K, S)
    for g in range(2):
        rows = bf16_src.data[offs[g]:offs[g + 1]]
        part = ref.convert(ref.Source("bf16", rows, None, rows.shape[0], K),
                           ref.Output("fp8_e4m3", "col", "amax"))
        n = offs[g + 1] - offs[g]
        np.testing.assert_array_equal(data[:, offs[g]:offs[g + 1]], part.data.reshape(K, n))
        nb = -(-n // 128)
        first = 0 if g == 0 else 1
        np.testing.assert_array_equal(scales[:, first:first + nb], part.scales.reshape(K, nb))
    assert (scales[:, 3:] == 1.0).all()


@pytest.mark.parametrize("offs,message", [
    ([0, 12, 10, 300], "ragged.offsets[2] = 10 < offsets[1] = 12: offsets must be nondecreasing"),
    ([3, 10, 300], "ragged.offsets[0] = 3: offsets must start at 0"),
    ([0, 10, 299], "ragged.offsets[G = 2] = 299: offsets must end at M = 300"),
])
def test_bad_offsets_raise_with_the_rule(ref, bf16_src, offs, message) -> None:
    with pytest.raises(ref.ReferenceError) as e:
        ref.convert(bf16_src, ref.Output("mxfp4", "col", "floor"),
                    ref.Ragged(np.array(offs, np.int32), 1))
    assert str(e.value) == message


def test_policy_and_size_errors(ref, bf16_src) -> None:
    with pytest.raises(ref.ReferenceError, match="'aligned' needs an MX source, got bf16"):
        ref.convert(bf16_src, ref.Output("fp8_e4m3", "row", "aligned"))
    with pytest.raises(ref.ReferenceError, match="'floor' is not allowed for an fp8_e5m2"):
        ref.convert(bf16_src, ref.Output("fp8_e5m2", "row", "floor"))
    with pytest.raises(ref.ReferenceError, match="'amax' is not allowed for an mxfp8_e4m3"):
        ref.convert(bf16_src, ref.Output("mxfp8_e4m3", "row", "amax"))
    odd = ref.Source("bf16", bf16_src.data[:, :48].copy(), None, M, 48)
    with pytest.raises(ref.ReferenceError, match="K = 48 is not a multiple of 32"):
        ref.convert(odd, ref.Output("mxfp4", "row", "floor"))
    out = ref.Output("mxfp4", "row", "floor")
    d, s = ref.output_sizes(bf16_src, out)
    assert (d, s) == (M * K // 2, M * K // 32)
    with pytest.raises(ref.ReferenceError, match="output.data_bytes = 9599: the output needs 9600"):
        ref.convert_raw(bf16_src, out, None, d - 1, s)
    with pytest.raises(ref.ReferenceError, match="output.scales_bytes"):
        ref.convert_raw(bf16_src, out, None, d, s - 1)


def test_threads_do_not_change_bits(ref, bf16_src) -> None:
    rg = ref.Ragged(np.array([0, 37, 37, 165, 200, 300], np.int32), 128)
    out = ref.Output("fp8_e4m3", "col", "amax", "mn_major")
    one = ref.convert(bf16_src, out, rg)
    previous = ref.set_threads(4)
    try:
        four = ref.convert(bf16_src, out, rg)
    finally:
        ref.set_threads(previous)
    np.testing.assert_array_equal(one.data, four.data)
    np.testing.assert_array_equal(one.scales, four.scales)
