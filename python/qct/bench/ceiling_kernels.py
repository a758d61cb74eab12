"""The Triton kernels of `python -m qct.bench.ceiling` (imported only there: it needs Triton).
Each moves one tile of bytes, without scales or numerics: program (i, j) takes tokens
i*BM.. and source bytes j*BK.. (nibble kernels: j*BK2.., two features per byte); the ragged
kernel's program i takes the i-th tile of a tile list instead."""

from __future__ import annotations

import triton
import triton.language as tl


@triton.jit
def load_nibbles(src, K2, BM: tl.constexpr, BK2: tl.constexpr):
    """The tile's token indices and its nibbles as bytes [BM, 2 * BK2], low nibble first."""
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rk = tl.program_id(1) * BK2 + tl.arange(0, BK2)
    x = tl.load(src + rm[:, None] * K2 + rk[None, :])
    return rm, tl.join(x & 0xF, x >> 4).reshape(BM, 2 * BK2)


@triton.jit
def nibble_row(src, dst, M, K2, BM: tl.constexpr, BK2: tl.constexpr):
    """Packed nibbles [M, K2] -> one byte each [M, 2 * K2] (the row kernel's bytes)."""
    rm, y = load_nibbles(src, K2, BM, BK2)
    rf = tl.program_id(1) * 2 * BK2 + tl.arange(0, 2 * BK2)
    tl.store(dst + rm[:, None] * (2 * K2) + rf[None, :], y)


@triton.jit
def nibble_col(src, dst, M, K2, BM: tl.constexpr, BK2: tl.constexpr):
    """The same bytes written transposed, [2 * K2, M] (the mxfp4 -> fp8 col kernel's bytes)."""
    rm, y = load_nibbles(src, K2, BM, BK2)
    rf = tl.program_id(1) * 2 * BK2 + tl.arange(0, 2 * BK2)
    tl.store(dst + rf[:, None] * M + rm[None, :], tl.trans(y))


@triton.jit
def byte_col(src, dst, M, K, BM: tl.constexpr, BK: tl.constexpr):
    """Bytes [M, K] -> [K, M]."""
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rk = tl.program_id(1) * BK + tl.arange(0, BK)
    x = tl.load(src + rm[:, None] * K + rk[None, :])
    tl.store(dst + rk[:, None] * M + rm[None, :], tl.trans(x))


@triton.jit
def nibble_col_tiles(src, dst, tile_token, tile_tokens, tile_index, C, K2, BM: tl.constexpr,
                     BK2: tl.constexpr):
    """nibble_col over ragged groups (the ragged col kernel's bytes): tile i reads
    tile_tokens[i] <= BM token rows from tile_token[i] and writes columns tile_index[i] * BM..
    of [2 * K2, C], the columns past its tokens zero (a group's padding). The column is a
    multiple of BM by construction, so Triton knows the stores' alignment and vectorizes them,
    as it does nibble_col's (a column loaded as such made them byte stores: 0.84x nibble_col's
    GB/s at 256 groups instead of 0.99x)."""
    i = tl.program_id(0)
    t0 = tl.load(tile_token + i)
    n = tl.load(tile_tokens + i)
    c0 = tl.load(tile_index + i) * BM
    r = tl.arange(0, BM)
    rk = tl.program_id(1) * BK2 + tl.arange(0, BK2)
    x = tl.load(src + (t0 + r)[:, None] * K2 + rk[None, :], mask=(r < n)[:, None], other=0)
    y = tl.join(x & 0xF, x >> 4).reshape(BM, 2 * BK2)
    rf = tl.program_id(1) * 2 * BK2 + tl.arange(0, 2 * BK2)
    tl.store(dst + rf[:, None] * C + (c0 + r)[None, :], tl.trans(y))


KERNELS = {"nibble_row": nibble_row, "nibble_col": nibble_col, "byte_col": byte_col}
