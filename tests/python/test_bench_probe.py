"""The developer's probe (python -m qct.bench.probe) without a GPU: the schedules it sweeps are
exactly the metadata's legal ones, and its command line parses."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from qct import tuning
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


def test_fix_and_defaults_narrow_the_sweep() -> None:
    meta = json.loads((REPO / "generated" / "mxfp4_to_fp8_e4m3_col.json").read_text())
    knobs = {k["name"]: k for k in meta["schedule"]["knobs"]}
    every = probe.schedules(meta)
    fixed = probe.schedules(meta, {"QCT_THREADS": 256, "QCT_NOT_A_KNOB_HERE": 1})
    assert fixed and all(s["QCT_THREADS"] == 256 for s in fixed)
    assert len(fixed) == len(every) // len(knobs["QCT_THREADS"]["values"])
    assert probe.schedules(meta, defaults_only=True) == [{n: k["default"] for n, k in knobs.items()}]


def test_m_and_fix_arguments_parse_or_explain() -> None:
    assert probe.parse_ms("32768") == [32768]
    assert probe.parse_ms("32768,34816, 36352") == [32768, 34816, 36352]
    assert probe.parse_fix("QCT_M_TILES=4") == ("QCT_M_TILES", 4)
    for bad in ("0", "x", "32768,-1", ""):
        with pytest.raises(Exception, match="--m"):
            probe.parse_ms(bad)
    for bad in ("THREADS=256", "QCT_THREADS", "QCT_THREADS=many"):
        with pytest.raises(Exception, match="--fix"):
            probe.parse_fix(bad)


def test_launches_take_the_fixed_schedule_or_the_default() -> None:
    meta = json.loads((REPO / "generated" / "mxfp4_to_fp8_e4m3_col_ragged.json").read_text())
    assert probe.launch_schedules(meta, {}) == [None]
    fix = {"QCT_CLUSTER_M": 1, "QCT_K_TILES": 2, "QCT_THREADS": 256, "QCT_TILE_K": 256}
    (one,) = probe.launch_schedules(meta, fix)
    assert one is not None and all(one[k] == v for k, v in fix.items())
    with pytest.raises(SystemExit, match="QCT_K_TILES=3"):
        probe.launch_schedules(meta, {"QCT_K_TILES": 3})


def test_launched_is_the_runtime_choice(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # --launched times what a launch without a schedule runs: on the H200 at the headline shape the
    # repository's tuned entry (bf16 -> mxfp4 row + fp8 col with row_major scales took QCT_GROUP_M
    # 0 there, not the default 4), on a GPU without entries the heuristic's schedule.
    monkeypatch.setenv("QCT_CACHE_DIR", str(tmp_path / "cache"))  # no cached tunes
    meta = json.loads((REPO / "generated" / "bf16_to_mxfp4_row_fp8_col.json").read_text())
    tuned = json.loads((REPO / "specs" / "tuning" / "h200.json").read_text())["entries"]
    (entry,) = [e for key, e in tuned.items()
                if e["kernel"] == "bf16_to_mxfp4_row_fp8_col" and "M<=32768/K=7168/" in key]
    chosen = probe.launched_schedule(meta, 32768, 7168, 0, "NVIDIA H200")
    assert chosen == entry["best"]["schedule"]
    assert chosen != probe.schedules(meta, defaults_only=True)[0]
    assert probe.launched_schedule(meta, 32768, 7168, 0, "No Such GPU") == \
        tuning.heuristic_schedule(meta, 32768, 7168)


def test_launched_refuses_fix() -> None:
    with pytest.raises(SystemExit) as exit_info:
        probe.main(["--launched", "--fix", "QCT_THREADS=256"])
    assert exit_info.value.code == 2
    with pytest.raises(SystemExit):
        probe.main(["--launched", "--defaults"])
