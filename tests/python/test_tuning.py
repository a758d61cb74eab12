"""qct.tuning without a GPU: bucket keys, the cache folder, persistence and resume, failed configs
never chosen, best selection, export, best_schedule's lookup order and the heuristic. Timings are
injected fakes; nothing here measures anything."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from qct import knobs, tuning

REPO = Path(__file__).resolve().parents[2]
GPU = "NVIDIA H200"


def _meta(name: str = "bf16_to_mxfp4_row") -> dict:
    path = REPO / "generated" / f"{name}.json"
    if not path.is_file():
        pytest.skip(f"{path} not generated")
    return json.loads(path.read_text())


def _schedules(meta: dict) -> list[tuple[tuple[str, int], ...]]:
    from qct import verify

    return list(verify.schedules(meta))


def _fake(times: dict[str, float], failing: dict[str, str] | None = None, calls: list | None = None,
          codes: dict[str, str] | None = None):
    """A measure function: median from `times` by label, or a failure status from `failing`; the
    config's machine code from `codes` where given."""
    def measure(schedule: dict[str, int]) -> tuning.ConfigResult:
        label = tuning.schedule_label(schedule)
        if calls is not None:
            calls.append(label)
        code = (codes or {}).get(label, "")
        if failing and label in failing:
            return tuning.ConfigResult(failing[label], error=f"fake {failing[label]}", code=code)
        return tuning.ConfigResult("ok", times[label], times[label] * 0.98, 20, code=code)
    return measure


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("QCT_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


# --- keys -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("n,bucket", [(0, 0), (1, 1), (2, 2), (3, 4), (2048, 2048), (2049, 4096),
                                      (20000, 32768), (32768, 32768), (131071, 131072)])
def test_pow2_bucket(n: int, bucket: int) -> None:
    assert tuning.pow2_bucket(n) == bucket


def test_key_buckets_m_keeps_k_exact_and_groups_only_for_ragged() -> None:
    dense = _meta()
    a = tuning.TuningKey.of(dense, 20000, 7168, 0, GPU)
    b = tuning.TuningKey.of(dense, 32768, 7168, 8, GPU)
    assert a == b and a.m_bucket == 32768 and a.groups_bucket == 0
    assert tuning.TuningKey.of(dense, 20000, 7040, 0, GPU) != a           # K exact
    assert tuning.TuningKey.of(dense, 20000, 7168, 0, "NVIDIA H100") != a  # GPU
    ragged = _meta("mxfp4_to_fp8_e4m3_col_ragged")
    g = tuning.TuningKey.of(ragged, 32768, 7168, 200, GPU)
    assert g.groups_bucket == 256 and g.spec_hash == ragged["spec_hash"]
    assert a.text().startswith(dense["spec_hash"][:16])


def test_cache_dir_resolves_like_the_runtime(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("QCT_CACHE_DIR", str(tmp_path / "explicit"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert tuning.cache_dir() == tmp_path / "explicit"
    monkeypatch.delenv("QCT_CACHE_DIR")
    assert tuning.cache_dir() == tmp_path / "xdg" / "qct"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert tuning.cache_dir() == tmp_path / "home" / ".cache" / "qct"
    assert tuning.cache_file() == tmp_path / "home" / ".cache" / "qct" / "tuning" / "tuning.json"


# --- tuning, persistence, resume -------------------------------------------------------------------

def test_best_is_fastest_that_passed_and_failures_are_kept(cache_dir: Path) -> None:
    meta = _meta()
    schedules = _schedules(meta)
    labels = [tuning.schedule_label(s) for s in schedules]
    times = {label: 100.0 + i for i, label in enumerate(labels)}
    # The two fastest fail: one does not compile, one does not verify. Neither may be chosen.
    failing = {labels[0]: "compile_failed", labels[1]: "verify_failed"}
    store = tuning.TuningFile.read(tuning.cache_file())
    key = tuning.TuningKey.of(meta, 32768, 7168, 0, GPU)
    entry = tuning.tune(store, key, meta["name"], schedules, _fake(times, failing))
    assert entry["best"]["schedule"] == tuning.parse_label(labels[2])
    assert entry["best"]["median_us"] == times[labels[2]]
    assert entry["configs"][labels[0]]["status"] == "compile_failed"
    assert entry["configs"][labels[1]]["status"] == "verify_failed"
    assert len(entry["configs"]) == len(labels)
    # Written to disk, readable back, and best_schedule finds it there.
    again = tuning.TuningFile.read(tuning.cache_file())
    assert again.best(key) == tuning.parse_label(labels[2])
    assert tuning.best_schedule(meta, 30000, 7168, GPU, repository=[]) == tuning.parse_label(labels[2])


def test_resume_after_interrupt_skips_measured_configs(cache_dir: Path) -> None:
    meta = _meta()
    schedules = _schedules(meta)
    labels = [tuning.schedule_label(s) for s in schedules]
    times = {label: 50.0 + (i * 7) % 5 for i, label in enumerate(labels)}
    key = tuning.TuningKey.of(meta, 2048, 2048, 0, GPU)

    class Interrupt(Exception):
        pass

    calls: list[str] = []
    inner = _fake(times, calls=calls)

    def interrupted(schedule: dict[str, int]) -> tuning.ConfigResult:
        if len(calls) == 3:
            raise Interrupt  # as if Ctrl-C arrived during the fourth config
        return inner(schedule)

    with pytest.raises(Interrupt):
        tuning.tune(tuning.TuningFile.read(tuning.cache_file()), key, meta["name"], schedules,
                    interrupted)
    saved = tuning.TuningFile.read(tuning.cache_file()).entries[key.text()]["configs"]
    assert sorted(saved) == sorted(labels[:3])  # each finished config was written as it completed

    calls.clear()
    entry = tuning.tune(tuning.TuningFile.read(tuning.cache_file()), key, meta["name"], schedules,
                        _fake(times, calls=calls))
    assert calls == labels[3:]  # only the missing ones were measured
    assert len(entry["configs"]) == len(labels)
    best_label = min(labels, key=lambda lab: (times[lab], times[lab] * 0.98, lab))
    assert entry["best"]["schedule"] == tuning.parse_label(best_label)

    calls.clear()
    tuning.tune(tuning.TuningFile.read(tuning.cache_file()), key, meta["name"], schedules,
                _fake(times, calls=calls), force=True)
    assert calls == labels  # --force measures everything again


def test_configs_of_another_device_library_are_measured_again(cache_dir: Path) -> None:
    # A resumed tune never mixes timings of two versions of the device code in one entry: those
    # measured on another library (or on one not recorded) are dropped and measured again.
    meta = _meta()
    schedules = _schedules(meta)
    labels = [tuning.schedule_label(s) for s in schedules]
    times = {label: 10.0 + i for i, label in enumerate(labels)}
    key = tuning.TuningKey.of(meta, 32768, 7168, 0, GPU)
    old, new = "a" * 64, "b" * 64
    calls: list[str] = []
    lines: list[str] = []

    def run(headers: str) -> dict:
        calls.clear()
        return tuning.tune(tuning.TuningFile.read(tuning.cache_file()), key, meta["name"],
                           schedules, _fake(times, calls=calls), device_headers=headers,
                           progress=lines.append)

    assert run(old)["device_headers"] == old and calls == labels
    run(old)
    assert calls == []  # the same library: resumed, nothing to measure
    entry = run(new)
    assert calls == labels and entry["device_headers"] == new
    assert any("tuned on device library aaaaaaaaaaaa, this runtime has bbbbbbbbbbbb" in line
               for line in lines)
    assert tuning.stale_reason(entry, new) is None
    assert tuning.stale_reason(entry, old).startswith("tuned on device library bbbbbbbbbbbb")
    del entry["device_headers"]
    assert tuning.stale_reason(entry, new).startswith("device library not recorded")


def test_configs_whose_machine_code_is_unchanged_are_kept(cache_dir: Path) -> None:
    # After a device library change, a resumed tune keeps the configs that compile to the same
    # cubin as the one they were timed with (the same code, so the same timing) and measures the
    # others again; configs without a recorded code are measured again too.
    meta = _meta()
    schedules = _schedules(meta)
    labels = [tuning.schedule_label(s) for s in schedules]
    assert len(labels) >= 3
    times = {label: 10.0 + i for i, label in enumerate(labels)}
    codes = {label: f"{i:016x}" for i, label in enumerate(labels)}
    key = tuning.TuningKey.of(meta, 32768, 7168, 0, GPU)
    old, new = "a" * 64, "b" * 64
    calls: list[str] = []
    lines: list[str] = []
    store = tuning.TuningFile.read(tuning.cache_file())
    entry = tuning.tune(store, key, meta["name"], schedules, _fake(times, calls=calls, codes=codes),
                        device_headers=old, arch="sm_90a", nvrtc="13.2")
    assert entry["arch"] == "sm_90a" and entry["nvrtc"] == "13.2"
    assert entry["configs"][labels[0]]["code"] == codes[labels[0]]
    del entry["configs"][labels[2]]["code"]  # as if timed before codes were recorded
    store.write()

    changed = labels[1]
    now = dict(codes, **{changed: "f" * 16})
    asked: list[str] = []

    def code_of(schedule: dict[str, int]) -> str | None:
        asked.append(tuning.schedule_label(schedule))
        return now[tuning.schedule_label(schedule)]

    times_now = dict(times, **{label: 100.0 for label in labels})  # what a re-measure would give
    calls.clear()
    entry = tuning.tune(tuning.TuningFile.read(tuning.cache_file()), key, meta["name"], schedules,
                        _fake(times_now, calls=calls, codes=now), device_headers=new,
                        code_of=code_of, progress=lines.append)
    assert sorted(calls) == sorted([changed, labels[2]])
    assert labels[2] not in asked  # no recorded code: nothing to compare
    assert entry["configs"][labels[0]]["median_us"] == times[labels[0]]  # kept
    assert entry["configs"][changed]["median_us"] == 100.0 and entry["configs"][changed]["code"] == "f" * 16
    assert entry["device_headers"] == new
    assert entry["best"]["schedule"] == tuning.parse_label(labels[0])
    assert any(f"{len(labels) - 2} compile to the same machine code and are kept" in line
               for line in lines)


def test_machine_code_decides_staleness_where_recorded() -> None:
    label = tuning.schedule_label({"QCT_THREADS": 256})
    entry = {"device_headers": "a" * 64, "best": {"schedule": {"QCT_THREADS": 256}, "median_us": 1.0},
             "configs": {label: {"status": "ok", "median_us": 1.0, "code": "c" * 16}}}
    # The same machine code on another library: fresh. Other code, even on the same library
    # (another NVRTC, say): stale. No current code to compare: the library's hash decides.
    assert tuning.stale_reason(entry, "b" * 64, "c" * 16) is None
    why = tuning.stale_reason(entry, "a" * 64, "d" * 16)
    assert why is not None and "machine code changed" in why and "cccccccccccccccc" in why
    assert tuning.stale_reason(entry, "b" * 64).startswith("tuned on device library aaaaaaaaaaaa")
    assert tuning.stale_reason(entry, "a" * 64) is None
    del entry["configs"][label]["code"]  # tuned before codes were recorded
    assert tuning.best_code(entry) is None
    assert tuning.stale_reason(entry, "b" * 64, "c" * 16).startswith("tuned on device library")


def test_config_results_record_their_machine_code() -> None:
    assert tuning.ConfigResult("ok", 1.0, 0.9, 5, code="ab" * 8).to_json()["code"] == "ab" * 8
    assert tuning.ConfigResult("verify_failed", error="x", code="cd" * 8).to_json()["code"] == "cd" * 8
    assert "code" not in tuning.ConfigResult("compile_failed", error="x").to_json()
    assert tuning.code_hash(b"cubin") == tuning.code_hash(b"cubin") != tuning.code_hash(b"cubin2")
    assert len(tuning.code_hash(b"")) == 16


def test_seed_copies_missing_entries_and_tune_resumes_from_them(cache_dir: Path,
                                                                 tmp_path: Path) -> None:
    # A GPU session starts with an empty cache; seeding it from the repository file lets a re-tune
    # skip what is still valid instead of measuring every config again.
    meta = _meta()
    schedules = _schedules(meta)
    labels = [tuning.schedule_label(s) for s in schedules]
    times = {label: 10.0 + i for i, label in enumerate(labels)}
    key = tuning.TuningKey.of(meta, 32768, 7168, 0, GPU)
    repo = tuning.TuningFile(tmp_path / "h200.json")
    tuning.tune(repo, key, meta["name"], schedules, _fake(times), device_headers="a" * 64)
    repo.entries["other/key"] = {"kernel": "x", "configs": {}, "best": None}
    repo.write()
    cache = tuning.TuningFile.read(tuning.cache_file())
    cache.entries["other/key"] = {"kernel": "mine", "configs": {}, "best": None}
    assert tuning.seed(cache, tuning.TuningFile.read(repo.path)) == 1
    cache = tuning.TuningFile.read(tuning.cache_file())
    assert cache.entries["other/key"]["kernel"] == "mine"  # the cache's own entry is kept
    calls: list[str] = []
    tuning.tune(cache, key, meta["name"], schedules, _fake(times, calls=calls),
                device_headers="a" * 64)
    assert calls == []  # the same library: every config resumed from the seed
    assert tuning.seed(cache, tuning.TuningFile.read(repo.path)) == 0


@pytest.mark.parametrize("text,problem", [
    ("{not json", "not JSON"),
    ("[1, 2]", "expected a JSON object, found list"),
    ('{"format_version": 7, "entries": {}}', "tuning format_version 7, expected 1"),
    ('{"format_version": 1, "entries": []}', '"entries" must be an object'),
    ('{"format_version": 1, "entries": {"k": {"best": null}}}', 'entries.k must be an object'),
])
def test_a_file_that_is_not_a_tuning_document_is_named(tmp_path: Path, text: str,
                                                        problem: str) -> None:
    path = tmp_path / "t.json"
    path.write_text(text)
    with pytest.raises(ValueError, match=problem) as e:
        tuning.TuningFile.read(path)
    assert str(path) in str(e.value)


def test_a_broken_cache_is_moved_aside_and_started_afresh(cache_dir: Path) -> None:
    # A broken cache costs measuring again, never a failed tune or launch.
    tuning.cache_file().parent.mkdir(parents=True)
    tuning.cache_file().write_text("{not json")
    assert tuning.read_cache() is None
    warnings_seen: list[str] = []
    cache = tuning.open_cache(warnings_seen.append)
    assert cache.entries == {} and cache.path == tuning.cache_file()
    assert len(warnings_seen) == 1 and "moved it to" in warnings_seen[0]
    assert (tuning.cache_file().parent / "tuning.json.broken").read_text() == "{not json"
    assert not tuning.cache_file().exists()
    meta = _meta()
    schedules = _schedules(meta)
    times = {tuning.schedule_label(s): 10.0 + i for i, s in enumerate(schedules)}
    key = tuning.TuningKey.of(meta, 32768, 7168, 0, GPU)
    tuning.tune(cache, key, meta["name"], schedules, _fake(times))
    assert tuning.read_cache().best(key) is not None


def test_a_broken_repository_file_is_skipped_with_a_warning(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text('{"format_version": 1, "entries": {}}')
    (tmp_path / "b.json").write_text("{oops")
    with pytest.warns(RuntimeWarning, match=r"tuning file ignored: .*b\.json: not JSON"):
        files = tuning.repository_files(tmp_path)
    assert [f.path.name for f in files] == ["a.json"]


def test_no_passing_config_means_no_best(cache_dir: Path) -> None:
    meta = _meta()
    schedules = _schedules(meta)
    failing = {tuning.schedule_label(s): "verify_failed" for s in schedules}
    key = tuning.TuningKey.of(meta, 4096, 2048, 0, GPU)
    entry = tuning.tune(tuning.TuningFile.read(tuning.cache_file()), key, meta["name"], schedules,
                        _fake({}, failing))
    assert entry["best"] is None
    assert tuning.best_schedule(meta, 4096, 2048, GPU, repository=[]) == \
        tuning.heuristic_schedule(meta, 4096, 2048)


# --- export and lookup order ------------------------------------------------------------------------

def test_export_format_and_merge(cache_dir: Path, tmp_path: Path) -> None:
    meta = _meta()
    schedules = _schedules(meta)
    times = {tuning.schedule_label(s): 10.0 + i for i, s in enumerate(schedules)}
    key = tuning.TuningKey.of(meta, 32768, 7168, 0, GPU)
    tuning.tune(tuning.TuningFile.read(tuning.cache_file()), key, meta["name"], schedules, _fake(times))
    destination = tmp_path / "repo" / "specs" / "tuning" / "h200.json"
    destination.parent.mkdir(parents=True)
    other = {"format_version": 1, "entries": {"someone/else": {"best": None, "configs": {}}}}
    destination.write_text(json.dumps(other))
    n = tuning.export(tuning.TuningFile.read(tuning.cache_file()), destination)
    assert n == 1
    text = destination.read_text()
    document = json.loads(text)
    assert document["format_version"] == tuning.FORMAT_VERSION
    assert set(document["entries"]) == {"someone/else", key.text()}  # merged, not replaced
    entry = document["entries"][key.text()]
    for field in ("kernel", "spec_hash", "gpu", "m_bucket", "K", "groups_bucket", "configs", "best"):
        assert field in entry
    assert entry["kernel"] == meta["name"] and entry["gpu"] == GPU
    assert text == json.dumps(document, indent=2, sort_keys=True) + "\n"  # stable, reviewable
    # The repository file is consulted when the cache has nothing for the key.
    repo = tuning.TuningFile.read(destination)
    empty = tuning.TuningFile(tmp_path / "none.json")
    assert tuning.best_schedule(meta, 32768, 7168, GPU, cache=empty, repository=[repo]) == \
        entry["best"]["schedule"]


def test_cache_wins_over_repository_and_illegal_schedules_are_ignored(tmp_path: Path) -> None:
    meta = _meta()
    key = tuning.TuningKey.of(meta, 32768, 7168, 0, GPU)

    def file_with(schedule: dict[str, int], name: str) -> tuning.TuningFile:
        f = tuning.TuningFile(tmp_path / name)
        f.entry(key, meta["name"])["best"] = {"schedule": schedule, "median_us": 1.0}
        return f

    cached = file_with({"QCT_THREADS": 512, "QCT_UNROLL": 4}, "cache.json")
    repo = file_with({"QCT_THREADS": 128, "QCT_UNROLL": 1}, "repo.json")
    assert tuning.best_schedule(meta, 32768, 7168, GPU, cache=cached, repository=[repo]) == \
        {"QCT_THREADS": 512, "QCT_UNROLL": 4}
    stale = file_with({"QCT_THREADS": 1024, "QCT_UNROLL": 4}, "stale.json")  # not a legal value
    assert tuning.best_schedule(meta, 32768, 7168, GPU, cache=stale, repository=[repo]) == \
        {"QCT_THREADS": 128, "QCT_UNROLL": 1}
    # Another GPU, or no GPU known: the heuristic.
    assert tuning.best_schedule(meta, 32768, 7168, "NVIDIA H100", cache=cached, repository=[repo]) \
        == tuning.heuristic_schedule(meta, 32768, 7168)
    assert tuning.best_schedule(meta, 32768, 7168, None, cache=cached, repository=[repo]) == \
        tuning.heuristic_schedule(meta, 32768, 7168)


def test_heuristic_keeps_defaults_for_large_shapes_and_adds_ctas_for_small() -> None:
    row = _meta()
    defaults = knobs.default_schedule(row)
    assert tuning.heuristic_schedule(row, 32768, 7168) == defaults
    small = tuning.heuristic_schedule(row, 16, 2048)
    assert tuning.is_legal(row, small)
    assert small["QCT_UNROLL"] < defaults["QCT_UNROLL"]
    tile = _meta("mxfp4_to_fp8_e4m3_col")
    # Small M: less work per CTA (its defaults are one tile of 256 features, so narrower
    # tiles; more CTAs, more loads in flight).
    small_tile = tuning.heuristic_schedule(tile, 128, 7168)
    assert tuning.is_legal(tile, small_tile)
    assert small_tile["QCT_TILE_K"] < \
        knobs.default_schedule(tile)["QCT_TILE_K"]
    # QCT_THREADS does not change a tile kernel's grid, so the heuristic leaves it alone.
    assert tuning.heuristic_schedule(tile, 1, 2048)["QCT_THREADS"] == \
        knobs.default_schedule(tile)["QCT_THREADS"]


def test_heuristic_shrinks_m_tiles_first() -> None:
    # A dense kernel whose col pass buffers the scales of several M tiles: with QCT_M_TILES
    # defaulting to 4 (the col kernel's defaults at TILE_K 128 before 256 became its default,
    # set here), a grid of under two CTAs per SM gives up M tiles before K tiles.
    tile = _meta("mxfp4_to_fp8_e4m3_col")
    by_name = {k["name"]: k for k in tile["schedule"]["knobs"]}
    assert by_name["QCT_M_TILES"]["values"] == [1, 2, 4]
    by_name["QCT_M_TILES"]["default"], by_name["QCT_K_TILES"]["default"] = 4, 2
    by_name["QCT_TILE_K"]["default"] = 128
    defaults = knobs.default_schedule(tile)
    # 2048 tokens x 7168 features: 4 x 28 = 112 CTAs at the defaults (M_TILES 4, K_TILES 2).
    small = tuning.heuristic_schedule(tile, 2048, 7168)
    assert tuning.is_legal(tile, small)
    assert small["QCT_M_TILES"] == 1
    assert small["QCT_K_TILES"] == defaults["QCT_K_TILES"]
    # Large M keeps the defaults.
    assert tuning.heuristic_schedule(tile, 32768, 7168) == defaults


def test_heuristic_counts_only_ctas_with_work_under_clusters() -> None:
    # The col kernels' grid is rounded up to whole clusters of QCT_CLUSTER_M CTAs along M; the
    # CTAs past the last tile do no work, so they must not count towards the two per SM. At
    # 1152 x 7168 (9 tiles, a grid of 16 along M): at K_TILES 1 the grid has 16 x 28 = 448 CTAs
    # but only 9 x 28 = 252 with work, under 264, so the tiles narrow to 128 features too.
    tile = _meta("mxfp4_to_fp8_e4m3_col")
    defaults = knobs.default_schedule(tile)
    assert defaults["QCT_CLUSTER_M"] == 8 and defaults["QCT_TILE_K"] == 256
    small = tuning.heuristic_schedule(tile, 1152, 7168)
    assert tuning.is_legal(tile, small)
    assert small["QCT_CLUSTER_M"] == 8
    assert (small["QCT_K_TILES"], small["QCT_TILE_K"]) == (1, 128)


def test_heuristic_takes_scale_jobs_between_32_and_one_per_sm() -> None:
    # Jobs of 4096 tokens x 1024 features: M = 32768, K = 7168 has 8 x 7 = 56 of them, M =
    # 131072, K = 2048 32 x 2 = 64: jobs (no cluster; a dense kernel one K tile per CTA). M =
    # 32768, K = 2048 has 16 (too few, each a long serial piece of a short launch) and M = 131072,
    # K = 7168 224 (more than one per SM): the defaults' clusters.
    dense = _meta("mxfp4_to_fp8_e4m3_col")
    defaults = knobs.default_schedule(dense)
    jobs = {**defaults, "QCT_CLUSTER_M": 1, "QCT_K_TILES": 1}
    assert tuning.heuristic_schedule(dense, 32768, 7168) == jobs
    assert tuning.heuristic_schedule(dense, 131072, 2048) == jobs
    assert tuning.heuristic_schedule(dense, 32768, 2048) == defaults
    assert tuning.heuristic_schedule(dense, 131072, 7168) == defaults
    assert tuning.heuristic_schedule(dense, 32768, 7168, sm_count=48) == defaults
    # Ragged: the jobs run along the grid's capacity tiles, cdiv(M + 127 G, 128): at M = 32768,
    # K = 2048 that is 288 tiles (9 jobs along them, 18 in all) at 32 groups, 512 (32 jobs) at 256.
    ragged = _meta("mxfp4_to_fp8_e4m3_col_ragged")
    assert ragged["spec"]["ragged"]["capacity_tail"] == "untouched"
    assert tuning.heuristic_schedule(ragged, 32768, 2048, 32)["QCT_CLUSTER_M"] == 8
    on = tuning.heuristic_schedule(ragged, 32768, 2048, 256)
    assert (on["QCT_CLUSTER_M"], on["QCT_K_TILES"]) == (1, 1)
    assert tuning.is_legal(ragged, on)
    # Two K tiles per ragged CTA where the grid keeps 24 CTAs per SM at two: at K = 7168, 512 x 14
    # CTAs; at K = 2048 above, 512 x 4 = 2048, under 24 x 132.
    wide = tuning.heuristic_schedule(ragged, 32768, 7168, 256)
    assert (wide["QCT_CLUSTER_M"], wide["QCT_K_TILES"]) == (1, 2)
    assert tuning.is_legal(ragged, wide)
    # A ragged kernel that zeroes the capacity tail stores its own scales without a cluster.
    zeroing = json.loads(json.dumps(ragged))
    zeroing["spec"]["ragged"]["capacity_tail"] = "zero"
    assert tuning.heuristic_schedule(zeroing, 32768, 2048, 256)["QCT_CLUSTER_M"] == 8
    # Kernels without clusters (mn_major col scales) are not touched.
    mn = _meta("mxfp4_to_fp8_e4m3_col_mn")
    assert tuning.scale_job_schedule(
        mn, knobs.default_schedule(mn), 32768, 7168) is None


def test_heuristic_gives_ragged_clusters_fewer_k_tiles_on_small_grids() -> None:
    # Where the ragged kernel keeps its clusters it gives up K tiles (default 4) until its grid
    # has 8 CTAs per SM: at M = 32768, K = 2048 and 32 groups, 288 x 2 CTAs at 4, 288 x 4 at 2.
    ragged = _meta("mxfp4_to_fp8_e4m3_col_ragged")
    defaults = knobs.default_schedule(ragged)
    assert (defaults["QCT_CLUSTER_M"], defaults["QCT_K_TILES"]) == (8, 4)
    few = tuning.heuristic_schedule(ragged, 32768, 2048, 32)
    assert (few["QCT_CLUSTER_M"], few["QCT_K_TILES"]) == (8, 2)
    # Large enough grids keep the default: M = 131072, K = 7168 (231 jobs: clusters), 1056 x 7.
    assert tuning.heuristic_schedule(ragged, 131072, 7168, 32) == defaults
    # A dense kernel keeps its K tiles (its default of 2 at M = 32768, K = 2048: 16 jobs).
    dense = _meta("mxfp4_to_fp8_e4m3_col")
    assert tuning.heuristic_schedule(dense, 32768, 2048)["QCT_K_TILES"] == 2


def test_heuristic_picks_k_tiles_of_the_aligned_col_pass_without_clusters() -> None:
    # Two K tiles where the grid at two keeps 64 CTAs per SM (dense) or 24 (ragged), else one.
    mn = _meta("mxfp4_to_fp8_e4m3_col_mn")
    # Dense: 256 x 14 = 3584 CTAs at M = 32768, K = 7168 (27 per SM): one; 1024 x 14 at M = 131072
    # (108 per SM): two.
    assert tuning.heuristic_schedule(mn, 32768, 7168)["QCT_K_TILES"] == 1
    assert tuning.heuristic_schedule(mn, 131072, 7168)["QCT_K_TILES"] == 2
    ragged_mn = _meta("mxfp4_to_fp8_e4m3_col_ragged_mn")
    # Ragged, 32 groups: 288 x 4 CTAs at M = 32768, K = 2048 (9 per SM): one; 288 x 14 at K = 7168
    # (31 per SM): two.
    assert tuning.heuristic_schedule(ragged_mn, 32768, 2048, 32)["QCT_K_TILES"] == 1
    assert tuning.heuristic_schedule(ragged_mn, 32768, 7168, 32)["QCT_K_TILES"] == 2
    # Only the aligned pass: an amax-scaled mxfp4 -> fp8 col kernel is another pass.
    amax = _meta("coverage/mxfp4_to_fp8_e4m3_col_amax_ragged")
    assert not tuning.aligned_col_pass(amax)
    assert tuning.aligned_col_pass(mn) and tuning.aligned_col_pass(ragged_mn)


def test_heuristic_splits_the_ragged_last_k_span_where_the_rules_allow() -> None:
    # QCT_SPLIT_LAST_SPAN 1 needs CTAs of 2 or 4 K tiles without a cluster (the knob's rules).
    for name in ("mxfp4_to_fp8_e4m3_col_ragged", "mxfp4_to_fp8_e4m3_col_ragged_mn"):
        meta = _meta(name)
        assert knobs.default_schedule(meta)["QCT_SPLIT_LAST_SPAN"] == 0
        two = tuning.heuristic_schedule(meta, 32768, 7168, 32)
        assert (two["QCT_CLUSTER_M"], two["QCT_K_TILES"], two["QCT_SPLIT_LAST_SPAN"]) == (1, 2, 1)
        assert tuning.is_legal(meta, two)
    # One K tile per CTA (the mn_major kernel at M = 32768, K = 2048) has no span to split, and
    # the row_major kernel's clusters there (18 scale jobs, too few) rule it out.
    one = tuning.heuristic_schedule(_meta("mxfp4_to_fp8_e4m3_col_ragged_mn"), 32768, 2048, 32)
    assert (one["QCT_K_TILES"], one["QCT_SPLIT_LAST_SPAN"]) == (1, 0)
    clustered = tuning.heuristic_schedule(_meta("mxfp4_to_fp8_e4m3_col_ragged"), 32768, 2048, 32)
    assert (clustered["QCT_CLUSTER_M"], clustered["QCT_SPLIT_LAST_SPAN"]) == (8, 0)
    # Kernels that do not list the knob are left as they were.
    dense = _meta("mxfp4_to_fp8_e4m3_col_mn")
    assert "QCT_SPLIT_LAST_SPAN" not in tuning.heuristic_schedule(dense, 32768, 7168)
