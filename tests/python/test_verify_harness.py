"""The GPU tier's CPU half, run here: for every generated kernel the reference produces exactly
the buffers the kernel's metadata declares (names, byte sizes from the shape expressions, ragged
capacities included). A disagreement between compiler metadata and reference would otherwise
first show up on the GPU."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from qct import runtime, verify

REPO = Path(__file__).resolve().parents[2]
GENERATED = sorted((REPO / "generated").glob("**/*.json"))
ITEMSIZE = {"u8": 1, "u16": 2, "bf16": 2, "f16": 2, "f32": 4, "i32": 4, "i64": 8}


@pytest.mark.parametrize("meta_path", GENERATED, ids=lambda p: p.stem)
@pytest.mark.parametrize("M,groups", [(1, 1), (300, 7), (0, 3)])
def test_reference_fills_every_declared_output_buffer(meta_path: Path, M: int, groups: int) -> None:
    meta = verify.load_metadata(meta_path)
    K = (meta["spec"].get("static") or {}).get("K") or 256
    G = groups if verify.is_ragged(meta) else 0
    src = verify.make_source(meta, M, K, seed=M + groups)
    offsets = verify.make_offsets(meta, M, G, seed=M + groups)
    expected = verify.reference_outputs(meta, src, offsets)
    declared = {b["name"]: b for b in meta["buffers"] if b["dir"] == "out"}
    assert set(expected) == set(declared)
    for name, buf in declared.items():
        elements = int(np.prod([runtime.eval_expr(e, M, K, G) for e in buf["shape"]]))
        assert expected[name].size == elements * ITEMSIZE[buf["dtype"]], \
            f"{name}: reference {expected[name].size} bytes, metadata {buf['shape']} ({buf['dtype']})"


def test_default_schedule_with_overrides_only_listed_non_default_legal_values() -> None:
    meta = {"schedule": {
        "knobs": [{"name": "QCT_THREADS", "values": [128, 256], "default": 256},
                  {"name": "QCT_CLUSTER_M", "values": [1, 8], "default": 8}],
        "rules": [{"if": {"QCT_THREADS": 128}, "then": {"QCT_CLUSTER_M": [8]}}]}}
    assert verify.default_schedule_with(meta, {"QCT_CLUSTER_M": 1}) == \
        (("QCT_THREADS", 256), ("QCT_CLUSTER_M", 1))
    assert verify.default_schedule_with(meta, {"QCT_CLUSTER_M": 8}) is None  # the default
    assert verify.default_schedule_with(meta, {"QCT_CLUSTER_M": 4}) is None  # not listed
    assert verify.default_schedule_with(meta, {"QCT_TILE_M": 64}) is None  # no such knob
    # Breaks the rule: THREADS 128 needs CLUSTER_M 8.
    assert verify.default_schedule_with(meta, {"QCT_CLUSTER_M": 1, "QCT_THREADS": 128}) is None


def test_scale_job_cases_reach_the_dense_col_kernel_without_a_cluster() -> None:
    """The byte-load path of the scale jobs (K / 32 not a multiple of 16) runs where they exist:
    the dense mxfp4 -> fp8 col kernel at QCT_CLUSTER_M 1, at both thread counts."""
    meta = verify.load_metadata(REPO / "generated" / "mxfp4_to_fp8_e4m3_col.json")
    odd_k = [dict(c.schedule) for c in verify.standard_cases(meta) if c.K % 512]
    assert {(s.get("QCT_CLUSTER_M"), s.get("QCT_THREADS")) for s in odd_k if s} == \
        {(1, 256), (1, 128)}


def test_scale_job_cases_reach_the_ragged_col_kernel_without_a_cluster() -> None:
    """The ragged kernel's scale jobs run without a cluster: its GPU cases there take both load
    paths (K = 1056: byte loads; K = 2048: two 16-byte chunks per row) at both thread counts,
    with groups."""
    meta = verify.load_metadata(REPO / "generated" / "mxfp4_to_fp8_e4m3_col_ragged.json")
    no_cluster = [c for c in verify.standard_cases(meta)
                  if c.schedule and dict(c.schedule).get("QCT_CLUSTER_M") == 1
                  and c.label != "schedule sweep" and not c.label.startswith("schedule sweep,")
                  and c.label != "last K span split"]
    assert {(c.K, dict(c.schedule)["QCT_THREADS"]) for c in no_cluster} == \
        {(1056, 256), (1056, 128), (2048, 256), (2048, 128)}
    assert all(c.groups > 0 for c in no_cluster)


def test_split_last_span_cases_mix_whole_spans_and_single_tile_rows() -> None:
    """QCT_SPLIT_LAST_SPAN 1 (raster.cuh, k_span) runs on a K of 7 256-feature tiles at each of
    its schedules: whole spans of 2 or 4 tiles first, then the last span's tiles one per row."""
    for name in ("mxfp4_to_fp8_e4m3_col_ragged", "mxfp4_to_fp8_e4m3_col_ragged_mn"):
        meta = verify.load_metadata(REPO / "generated" / f"{name}.json")
        split = [c for c in verify.standard_cases(meta) if c.label == "last K span split"]
        schedules = [s for s in verify.schedules(meta) if dict(s)["QCT_SPLIT_LAST_SPAN"] == 1]
        assert schedules and [c.schedule for c in split] == schedules
        assert all(c.K == 7 * 256 and c.groups > 0 for c in split)
        assert {dict(c.schedule)["QCT_K_TILES"] for c in split} == {2, 4}
