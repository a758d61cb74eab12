"""qct.bench.ceiling's argument checks (the timing itself needs a GPU and Triton)."""

from __future__ import annotations

import importlib
import sys

import numpy as np
import pytest

from qct.bench import ceiling, floor


@pytest.mark.parametrize("argv", [["--m", "1000"], ["--k", "7000"], ["--m", "0"]])
def test_shapes_must_be_positive_multiples_of_256(argv: list[str],
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    assert ceiling.main(argv) == 2
    assert "multiples of 256" in capsys.readouterr().err


def test_kernels_move_the_bytes_they_claim(monkeypatch: pytest.MonkeyPatch) -> None:
    """The Triton kernels on the CPU (Triton's interpreter): nibbles to bytes in row and col
    order, and the byte transpose, against torch."""
    monkeypatch.setenv("TRITON_INTERPRET", "1")  # read when the kernels are decorated
    torch = pytest.importorskip("torch")
    pytest.importorskip("triton")
    # A fresh import under the interpreter; monkeypatch puts back whatever was there (or nothing).
    monkeypatch.setitem(sys.modules, "qct.bench.ceiling_kernels", None)
    del sys.modules["qct.bench.ceiling_kernels"]
    kernels = importlib.import_module("qct.bench.ceiling_kernels").KERNELS
    M, K = 64, 256
    src = torch.randint(0, 256, (M, K // 2), dtype=torch.uint8)
    codes = torch.stack((src & 0xF, src >> 4), dim=-1).reshape(M, K)  # low nibble first
    row = torch.empty((M, K), dtype=torch.uint8)
    col = torch.empty((K, M), dtype=torch.uint8)
    kernels["nibble_row"][(M // 32, K // 2 // 64)](src, row, M, K // 2, BM=32, BK2=64)
    kernels["nibble_col"][(M // 32, K // 2 // 64)](src, col, M, K // 2, BM=32, BK2=64)
    assert torch.equal(row, codes)
    assert torch.equal(col, codes.t())
    full = torch.randint(0, 256, (M, K), dtype=torch.uint8)
    out = torch.empty((K, M), dtype=torch.uint8)
    kernels["byte_col"][(M // 32, K // 64)](full, out, M, K, BM=32, BK=64)
    assert torch.equal(out, full.t())


def test_ragged_tiles_pad_each_group() -> None:
    """Groups of 0, 1, 128 and 130 tokens: tiles of 64 columns, each group padded to 128."""
    token, tokens, index, columns = ceiling.ragged_tiles(np.array([0, 0, 1, 129, 259]), 64)
    assert columns == 0 + 128 + 128 + 256
    assert token.tolist() == [0, 64, 1, 65, 129, 193, 257, 321]
    assert tokens.tolist() == [1, 0, 64, 64, 64, 64, 2, 0]
    assert index.tolist() == [0, 1, 2, 3, 4, 5, 6, 7]


def test_ragged_kernel_pads_with_zeros(monkeypatch: pytest.MonkeyPatch) -> None:
    """nibble_col_tiles under Triton's interpreter against torch: each group's tokens transposed
    to its padded columns, the padding zero."""
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    torch = pytest.importorskip("torch")
    pytest.importorskip("triton")
    monkeypatch.setitem(sys.modules, "qct.bench.ceiling_kernels", None)
    del sys.modules["qct.bench.ceiling_kernels"]
    kernels = importlib.import_module("qct.bench.ceiling_kernels")
    K = 128
    offsets = np.array([0, 3, 3, 40, 64])
    M = int(offsets[-1])
    src = torch.randint(0, 256, (M, K // 2), dtype=torch.uint8)
    codes = torch.stack((src & 0xF, src >> 4), dim=-1).reshape(M, K)
    token, tokens, index, columns = ceiling.ragged_tiles(offsets, 32)
    out = torch.full((K, columns), 0xAB, dtype=torch.uint8)
    kernels.nibble_col_tiles[(len(token), K // 2 // 64)](
        src, out, torch.from_numpy(token), torch.from_numpy(tokens), torch.from_numpy(index),
        columns, K // 2, BM=32, BK2=64)
    want = torch.zeros((K, columns), dtype=torch.uint8)
    col = 0
    for g in range(len(offsets) - 1):
        o, n = int(offsets[g]), int(offsets[g + 1] - offsets[g])
        want[:, col:col + n] = codes[o:o + n].t()
        col += floor.rup(n, ceiling.PAD)
    assert torch.equal(out, want)


def test_only_shapes_that_tile_the_source_run() -> None:
    """A block shape runs only where its tiles cover the source exactly (the kernels have no
    masks): at K = 7168 nibbles (3584 source bytes per row) 256-byte tiles fit, at K = 6912
    (3456 bytes) they do not, and 256-token tiles need M to be a multiple of 256."""
    assert (64, 256, 16) in ceiling.tiling(ceiling.SHAPES, 32768, 7168 // 2)
    narrow = ceiling.tiling(ceiling.SHAPES, 32768, 6912 // 2)
    assert narrow and all(bk <= 128 for _, bk, _ in narrow)
    assert (64, 128, 8) in narrow
    assert all(bm < 256 for bm, _, _ in ceiling.tiling(ceiling.SHAPES, 128 * 3, 7168 // 2))
