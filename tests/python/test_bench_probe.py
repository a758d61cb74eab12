"""The developer's probe (python -m qct.bench.probe) without a GPU: the schedules it sweeps are
exactly the metadata's legal ones, and its command line parses."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from qct.bench import probe

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("name", ["mxfp4_to_fp8_e4m3_col", "bf16_to_mxfp4_row"])
def test_schedules_are_the_knob_product(name: str) -> None:
    meta = json.loads((REPO / "generated" / f"{name}.json").read_text())
    knobs = meta["schedule"]["knobs"]
    found = probe.schedules(meta)
    assert len(found) == math.prod(len(k["values"]) for k in knobs)
    assert len({tuple(sorted(s.items())) for s in found}) == len(found)
    for s in found:
        assert set(s) == {k["name"] for k in knobs}
        assert all(s[k["name"]] in k["values"] for k in knobs)


def test_help_exits_cleanly(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        probe.main(["--help"])
    assert exit_info.value.code == 0
    assert "--launches" in capsys.readouterr().out
