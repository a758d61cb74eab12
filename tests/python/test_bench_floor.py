"""`qct bench` pieces that need no GPU: floor bytes against the metadata, the ragged floor, shape
selection, rotation, SASS parsing and the report writers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from qct.bench import floor, report, sass, suite, timing

REPO = Path(__file__).resolve().parents[2]
METAS = suite.load_metas(REPO / "generated") if (REPO / "generated").is_dir() else {}


@pytest.mark.parametrize("name", sorted(n for n, m in METAS.items() if not m["spec"].get("ragged")))
@pytest.mark.parametrize("M,K", [(2048, 2048), (1000, 7168), (32768, 7168)])
def test_dense_floor_is_the_metadata_buffers(name: str, M: int, K: int) -> None:
    meta = METAS[name]
    if suite.rejects(meta, M, K):
        pytest.skip("shape rejected by the kernel's constraints")
    assert floor.floor_bytes(meta["spec"], M, K).total == sum(floor.buffer_bytes(meta, M, K).values())


def test_floor_matches_performance_md() -> None:
    # docs/performance.md: bf16 -> mxfp4 row moves 2.53·M·K, mxfp4 -> fp8 row/col 1.56·M·K.
    M, K = 32768, 7168
    assert floor.floor_bytes(METAS["bf16_to_mxfp4_row"]["spec"], M, K).total == 594_542_592
    assert floor.floor_bytes(METAS["mxfp4_to_fp8_e4m3_row"]["spec"], M, K).total == 367_001_600
    assert floor.floor_bytes(METAS["mxfp4_to_fp8_e4m3_col"]["spec"], M, K).total == 367_001_600


def test_ragged_floor_counts_what_groups_own() -> None:
    meta = METAS["mxfp4_to_fp8_e4m3_col_ragged"]
    offsets = [0, 100, 100, 300, 1000]        # groups of 100, 0, 200, 700 rows; pad to 128
    M, K = 1000, 256
    got = floor.floor_bytes(meta["spec"], M, K, offsets)
    padded = 128 + 0 + 256 + 768               # p[G]
    scale_cols = 1 + 0 + 2 + 6                 # Σ ceil(n'_g / 128)
    src = M * K // 2 + M * K // 32
    assert got.read == src + 5 * 4
    assert got.written == K * padded + K * scale_cols * 4 + 5 * 4
    capacity = sum(floor.buffer_bytes(meta, M, K, 4).values())
    assert got.total < capacity


def test_shapes_and_twins() -> None:
    for name, meta in METAS.items():
        shapes = suite.shapes_for(meta, quick=False)
        assert shapes and all(suite.rejects(meta, m, k) is None for m, k in shapes)
        assert suite.shapes_for(meta, quick=True) == [suite.HEADLINE]
    assert suite.dense_twin(METAS["mxfp4_to_fp8_e4m3_col_ragged"], METAS) == "mxfp4_to_fp8_e4m3_col"
    chosen = suite.select(METAS, ("mxfp4_to_fp8_e4m3_col_ragged", "mxfp4_to_fp8_e4m3_row"))
    assert {"mxfp4_to_fp8_e4m3_col", "mxfp4_to_bf16_row", "bf16_to_fp8_e4m3_row"} <= set(chosen)
    with pytest.raises(ValueError):
        suite.select(METAS, ("no_such_kernel",))


def test_static_k_constraint_rejects_other_k() -> None:
    meta = {"constraints": [{"expr": "K", "equals": 7168, "why": "static.K"}]}
    assert suite.rejects(meta, 2048, 2048) == "static.K"
    assert suite.rejects(meta, 2048, 7168) is None


def test_rotation_covers_the_l2() -> None:
    l2 = 60 << 20
    assert timing.rotation_sets(10 << 20, l2) * (10 << 20) >= 4 * l2
    assert timing.rotation_sets(6 << 20, l2) * (6 << 20) >= 3 * l2  # capped at MAX_SETS
    assert timing.rotation_sets(3 << 30, l2) == 2
    assert timing.rotation_sets(1, l2) == timing.MAX_SETS


def test_sass_counts_16_byte_accesses() -> None:
    text = """
        /*0070*/                   LDG.E.128.CONSTANT R4, desc[UR4][R2.64] ;
        /*0080*/              @!P0 STG.E.EF.128 desc[UR4][R6.64], R8 ;
        /*0090*/                   STG.E.U8 desc[UR4][R6.64], R8 ;
        /*00a0*/                   LDS.128 R8, [R3] ;
        /*00b0*/                   FMUL R1, R2, R3 ;
    """
    summary = sass.memory_summary(text)
    assert summary["ldg_128"] == 1 and summary["stg_128"] == 1
    assert summary["STG"] == {"8": 1, "128": 1} and summary["LDS"] == {"128": 1}
    assert summary["instructions"] == 5


def test_report_writes_table_and_plot(tmp_path: Path) -> None:
    doc = {"date": "today", "gpu": "GPU", "torch": "x", "commit": "abc", "copy_gbps": 4000.0,
           "rows": [
               {"kind": "qct", "kernel": "k", "M": 32768, "K": 7168, "groups": 0,
                "floor_bytes": 4_000_000, "median_us": 1.5, "gbps": 2666.0, "pct_copy": 66.6,
                "host_us": 20.0, "schedule": {"QCT_THREADS": 256}, "verified": "", "note": "",
                "extra": {}},
               {"kind": "torch-compile", "kernel": "k", "M": 32768, "K": 7168, "groups": 0,
                "floor_bytes": 4_000_000, "median_us": None, "gbps": None, "pct_copy": None,
                "host_us": None, "schedule": {}, "verified": "", "note": "failed: x | y",
                "extra": {}}],
           "kernels": {"k": {"stats": {"registers": 32, "spill_store_bytes": 0,
                                       "spill_load_bytes": 0, "local_memory_bytes": 0},
                             "sass": {"skipped": "cuobjdump is not on PATH"}}}}
    messages = report.write_all(doc, tmp_path)
    table = (tmp_path / "bench.md").read_text()
    assert "| qct | k | 32768 | 7168 |" in table and "launch-bound" in table
    assert "failed: x / y" in table  # a pipe in a note does not break the table
    assert "cuobjdump is not on PATH" in table
    assert any("plot" in m for m in messages)
    json.dumps(doc)


def test_report_spills_from_log_frame_or_unknown() -> None:
    # ptxas' log (compiled in this run) gives the spills; a kernel from the disk cache has only
    # its cubin: a zero stack frame means no spills, a nonzero one leaves them unknown.
    def kernels_row(stats: dict) -> str:
        doc = {"date": "today", "gpu": "GPU", "torch": "x", "commit": "abc", "copy_gbps": 1.0,
               "rows": [], "kernels": {"k": {"stats": stats, "sass": {"skipped": "no"}}}}
        return next(line for line in report.markdown(doc).splitlines() if line.startswith("| k |"))

    logged = {"registers": 32, "spill_store_bytes": 8, "spill_load_bytes": 4, "local_memory_bytes": 16}
    assert kernels_row(logged).startswith("| k | 32 | 12 | 16 |")
    cached = {"registers": 32, "spill_store_bytes": -1, "spill_load_bytes": -1, "local_memory_bytes": 0}
    assert kernels_row(cached).startswith("| k | 32 | 0 (no frame) | 0 |")
    framed = dict(cached, local_memory_bytes=24)
    assert kernels_row(framed).startswith("| k | 32 | ? | 24 |")


def test_report_names_the_device_library_and_stale_tuned_schedules() -> None:
    # A row whose schedule came from a stale entry (timed on other device code) says so, and the
    # header names the run's library (docs/performance.md, "Tuned schedules").
    def row(origin: str) -> dict:
        return {"kind": "qct", "kernel": "k", "M": 1, "K": 1, "groups": 0, "floor_bytes": 1,
                "median_us": 1.0, "gbps": 1.0, "pct_copy": 1.0, "schedule": {"QCT_THREADS": 256},
                "extra": {"schedule_origin": origin}}

    doc = {"date": "today", "gpu": "GPU", "torch": "x", "commit": "abc", "copy_gbps": 1.0,
           "device_headers": "0123456789abcdef" * 4, "rows": [row("tuned, stale")]}
    text = report.markdown(doc)
    assert "device library `0123456789ab`" in text
    assert "tuned schedule stale: timed on other device code" in text
    doc["rows"] = [row("tuned"), row("heuristic")]
    assert "stale" not in report.markdown(doc)


def _padded_ragged(meta: dict) -> bool:
    return int((meta["spec"].get("ragged") or {}).get("pad_groups_to", 1)) > 1


@pytest.mark.parametrize("name", sorted(n for n, m in METAS.items() if _padded_ragged(m)))
def test_ragged_col_rows_are_16_byte_aligned(name: str) -> None:
    # docs/kernel-abi.md: the capacity C = rup(M + G·(P−1), 128) keeps every data row of a ragged
    # col output 16-byte aligned whatever M and G are (before, 8 groups at M = 32768 left fp8 rows
    # 8-byte aligned and the kernel ran 2.1x slower); the metadata's data shape says so, and the
    # Python floor's capacity agrees with it.
    meta = METAS[name]
    P = int(meta["spec"]["ragged"]["pad_groups_to"])
    col_data = [b for b in meta["buffers"] if b["dir"] == "out" and b.get("output") is not None
                and b["shape"][0] == "K" and not b["name"].endswith("_scales")]
    assert col_data, "a ragged kernel with a col output"
    for M in (1, 1000, 2048, 32768, 32769):
        for G in (1, 2, 3, 8, 15, 16, 17, 256):
            C = floor.ragged_capacity(M, G, P)
            assert C % 128 == 0 and M + G * (P - 1) <= C < M + G * (P - 1) + 128
            for b in col_data:
                assert floor.eval_shape(b["shape"][1], M, 128, G) % 16 == 0, (b["name"], M, G)
