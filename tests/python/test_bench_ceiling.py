"""qct.bench.ceiling's argument checks (the timing itself needs a GPU and Triton)."""

from __future__ import annotations

import pytest

from qct.bench import ceiling


@pytest.mark.parametrize("argv", [["--m", "1000"], ["--k", "7000"], ["--m", "0"]])
def test_shapes_must_be_positive_multiples_of_256(argv: list[str],
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    assert ceiling.main(argv) == 2
    assert "multiples of 256" in capsys.readouterr().err
