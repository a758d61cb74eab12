"""The schedule space (qct.knobs): the knobs' product less the schedules that break a rule, as the
runtime (runtime/lib/Metadata.cpp) and the tuner (tuning.is_legal) read it."""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path
from typing import Any

from qct import knobs, tuning

REPO = Path(__file__).resolve().parents[2]


def _meta(name: str) -> dict[str, Any]:
    return json.loads((REPO / "generated" / f"{name}.json").read_text())


def test_rules_exclude_exactly_the_schedules_that_break_them() -> None:
    meta = _meta("bf16_to_fp8_e4m3_row_col")
    assert meta["schedule"]["rules"], "the bf16 pass pairs 512 threads with 256-feature tiles"
    every = [dict(s) for s in knobs.legal_schedules({"schedule": {"knobs": meta["schedule"]["knobs"]}})]
    legal = [dict(s) for s in knobs.legal_schedules(meta)]
    assert len(every) == math.prod(len(k["values"]) for k in meta["schedule"]["knobs"])
    assert legal == [s for s in every if knobs.broken_rule(meta, s) is None]
    # 512 threads exactly with 256 features, and then one M tile.
    assert all((s["QCT_THREADS"] == 512) == (s["QCT_TILE_K"] == 256) for s in legal)
    assert all(s["QCT_M_TILES"] == 1 for s in legal if s["QCT_THREADS"] == 512)
    assert any(s["QCT_THREADS"] == 512 for s in legal)
    assert knobs.default_schedule(meta) in legal


def test_broken_rule_names_the_rule_and_the_value() -> None:
    meta = _meta("bf16_to_fp8_e4m3_row_col")
    schedule = {k["name"]: k["default"] for k in meta["schedule"]["knobs"]}
    assert knobs.broken_rule(meta, schedule) is None
    schedule["QCT_THREADS"] = 512
    assert knobs.broken_rule(meta, schedule) == "QCT_THREADS=512 needs QCT_TILE_K in [256] (got 128)"
    assert not tuning.is_legal(meta, schedule)
    schedule["QCT_TILE_K"] = 256
    assert tuning.is_legal(meta, schedule)


def test_kernels_without_rules_keep_the_whole_product() -> None:
    meta = _meta("mxfp4_to_fp8_e4m3_col")
    assert "rules" not in meta["schedule"]
    assert len(list(knobs.legal_schedules(meta))) == math.prod(
        len(k["values"]) for k in meta["schedule"]["knobs"])


def test_the_heuristic_never_shrinks_into_a_broken_rule() -> None:
    # A default at 512 threads and 256 features: shrinking the tile alone would break a rule, so a
    # small grid leaves the tile as it is rather than pick an illegal schedule.
    meta = copy.deepcopy(_meta("bf16_to_fp8_e4m3_row_col"))
    for k in meta["schedule"]["knobs"]:
        if k["name"] == "QCT_THREADS":
            k["default"] = 512
        if k["name"] == "QCT_TILE_K":
            k["default"] = 256
    for M, K in ((128, 256), (2048, 7168), (32768, 7168)):
        assert tuning.is_legal(meta, tuning.heuristic_schedule(meta, M, K))


def test_default_schedule_is_each_knob_at_its_default() -> None:
    meta = {"schedule": {"knobs": [{"name": "QCT_A", "values": [1, 2], "default": 2},
                                   {"name": "QCT_B", "values": [4, 8], "default": 4}]}}
    assert knobs.default_schedule(meta) == {"QCT_A": 2, "QCT_B": 4}


def test_split_last_span_only_where_a_cta_holds_several_wide_tiles() -> None:
    # The aligned ragged kernels list QCT_SPLIT_LAST_SPAN; 1 needs CTAs of 2 or 4 256-feature
    # tiles without clusters (the device library static_asserts it); the dense twin does not list it.
    meta = _meta("mxfp4_to_fp8_e4m3_col_ragged")
    legal = [dict(s) for s in knobs.legal_schedules(meta)]
    split = [s for s in legal if s["QCT_SPLIT_LAST_SPAN"] == 1]
    assert split and knobs.default_schedule(meta)["QCT_SPLIT_LAST_SPAN"] == 0
    assert all(s["QCT_K_TILES"] in (2, 4) and s["QCT_TILE_K"] == 256 and s["QCT_CLUSTER_M"] == 1
               and s["QCT_TILE_M"] == 128 for s in split)
    assert all("QCT_SPLIT_LAST_SPAN" not in (k["name"] for k in _meta(name)["schedule"]["knobs"])
               for name in ("mxfp4_to_fp8_e4m3_col", "bf16_to_fp8_e4m3_row_col"))


def test_split_last_span_grid_rows() -> None:
    # Grid y (metadata) against raster.cuh's k_span_rows: spans of QCT_K_TILES tiles, and with
    # QCT_SPLIT_LAST_SPAN 1 one row per tile of the last span; none for K = 0.
    from qct.bench.floor import eval_shape

    for name in ("mxfp4_to_fp8_e4m3_col_ragged", "mxfp4_to_fp8_e4m3_col_ragged_mn"):
        grid_y = _meta(name)["launch"]["grid"][1]
        for kt in (1, 2, 4):
            for K in range(0, 4096 + 1, 32):
                tiles = -(-K // 256)
                spans = -(-tiles // kt)
                for split in (0, 1):
                    rows = eval_shape(grid_y, 1024, K, 8, {"QCT_TILE_K": 256, "QCT_K_TILES": kt,
                                                            "QCT_SPLIT_LAST_SPAN": split})
                    last = tiles - (spans - 1) * kt
                    assert rows == (spans + last - 1 if split and tiles else spans), (name, kt, K)
