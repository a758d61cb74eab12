"""qct.bench.ceiling's argument checks (the timing itself needs a GPU and Triton)."""

from __future__ import annotations

import importlib
import sys

import pytest

from qct.bench import ceiling


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
