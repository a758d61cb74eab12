"""Tuned schedules: which legal schedule (docs/kernel-abi.md, "Schedule knobs") runs a kernel
fastest, per spec, shape bucket and GPU; where `qct tune` keeps its measurements; and
`best_schedule`, which picks a schedule for a launch (qct.runtime.load(..., shape=(M, K)) uses it).

Key: (spec hash, M bucket, exact K, group bucket, GPU name). M is rounded up to a power of two
(M = 20000 and M = 32768 share the bucket 32768), because the knobs trade CTA count against work
per CTA and that trade moves with the order of magnitude of M, not with its exact value. K is kept
exact: it fixes the row length, so alignment and the tile-K split. Groups (ragged kernels) are
rounded up to a power of two the same way; 0 for dense kernels.

Files (the same JSON format for both, reviewable, keys sorted):
- the cache: <cache folder>/tuning/tuning.json, the cache folder resolved as the runtime resolves
  it: QCT_CACHE_DIR, else $XDG_CACHE_HOME/qct, else ~/.cache/qct (docs/runtime.md). `qct tune`
  writes every config's result there as soon as it is measured, so an interrupted run resumes.
- the repository: specs/tuning/*.json, written by `qct tune --export specs/tuning/h200.json` and
  reviewed like code.

Lookup order in best_schedule: the cache, then the repository's files, then `heuristic_schedule`.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import math
import os
import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

from qct import knobs
from qct.layout import tuning_dir

FORMAT_VERSION = 1
# specs/tuning in a checkout; installed, the wheel's copy (qct/share/qct/tuning).
REPO_TUNING_DIR = tuning_dir()
# Hopper H100/H200 have 132 SMs; the heuristic wants at least two CTAs per SM in flight.
DEFAULT_SM_COUNT = 132
MIN_CTAS_PER_SM = 2
# Scale jobs (runtime/include/qct/device/scale_jobs.cuh): the tokens and features of one, and the
# fewest jobs at which the heuristic takes them over clusters (heuristic_schedule).
SCALE_JOB_TOKENS = 4096
SCALE_JOB_FEATURES = 1024
MIN_SCALE_JOBS = 32
# The aligned col pass without a cluster takes two K tiles per CTA where its grid keeps this many
# CTAs per SM at two, ragged or dense (aligned_col_k_tiles); else one.
RAGGED_TWO_K_TILES_MIN_CTAS_PER_SM = 24
DENSE_TWO_K_TILES_MIN_CTAS_PER_SM = 64
# A ragged kernel that keeps clusters takes fewer K tiles per CTA until its grid has this many
# CTAs per SM (heuristic_schedule).
RAGGED_CLUSTER_MIN_CTAS_PER_SM = 8

Schedule = dict[str, int]


# --- Keys -----------------------------------------------------------------------------------------

def pow2_bucket(n: int) -> int:
    """n rounded up to a power of two (0 stays 0: dense kernels have no groups)."""
    if n <= 0:
        return 0
    return 1 << max(0, math.ceil(math.log2(n)))


@dataclass(frozen=True)
class TuningKey:
    spec_hash: str
    m_bucket: int
    K: int
    groups_bucket: int
    gpu: str

    @staticmethod
    def of(meta: Mapping[str, Any], M: int, K: int, groups: int, gpu: str) -> "TuningKey":
        ragged = meta["spec"].get("ragged") is not None
        return TuningKey(meta["spec_hash"], pow2_bucket(max(M, 1)), K,
                         pow2_bucket(max(groups, 1)) if ragged else 0, gpu)

    def text(self) -> str:
        return f"{self.spec_hash[:16]}/{self.gpu}/M<={self.m_bucket}/K={self.K}/G<={self.groups_bucket}"


def schedule_label(schedule: Iterable[tuple[str, int]] | Mapping[str, int]) -> str:
    items = schedule.items() if isinstance(schedule, Mapping) else schedule
    return ",".join(f"{k}={v}" for k, v in sorted(items))


def parse_label(label: str) -> Schedule:
    if not label:
        return {}
    return {k: int(v) for k, v in (item.split("=", 1) for item in label.split(","))}


def is_legal(meta: Mapping[str, Any], schedule: Mapping[str, int]) -> bool:
    values = {k["name"]: k["values"] for k in meta["schedule"]["knobs"]}
    return (set(schedule) == set(values) and all(schedule[k] in values[k] for k in values)
            and knobs.broken_rule(meta, schedule) is None)


# --- The file -------------------------------------------------------------------------------------

def cache_dir() -> Path:
    """The runtime's cache folder (runtime/lib/Env.cpp defaultCacheDir, same order)."""
    for name, suffix in (("QCT_CACHE_DIR", ""), ("XDG_CACHE_HOME", "qct")):
        value = os.environ.get(name)
        if value:
            return Path(value) / suffix if suffix else Path(value)
    home = os.environ.get("HOME")
    return Path(home) / ".cache" / "qct" if home else Path("/tmp/qct-cache")


def cache_file() -> Path:
    return cache_dir() / "tuning" / "tuning.json"


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


class TuningFile:
    """One tuning JSON document: {"format_version", "entries": {key text: entry}}.

    An entry: kernel, key fields, "configs" {schedule label: result}, "best" (the fastest config
    that compiled and verified, or null), "device_headers" (the SHA-256 of the device library
    its configs ran with, runtime.device_headers_hash; absent in entries tuned before it was
    recorded), "arch" and "nvrtc" (the GPU arch and NVRTC version they were compiled with). A
    result is {"status": "ok", "median_us", "min_us", "iters"} or {"status": "compile_failed" |
    "verify_failed" | "launch_failed", "error"}, and "code" (code_hash of the cubin that ran)
    where it compiled."""

    def __init__(self, path: Path, document: dict[str, Any] | None = None):
        self.path = path
        self.document = document or {"format_version": FORMAT_VERSION, "entries": {}}

    @staticmethod
    def read(path: Path) -> "TuningFile":
        """The file at path (empty if there is none); ValueError naming the path and the problem
        where it is not a tuning document (not JSON, another format_version, entries that are
        not objects with a "configs" object)."""
        if not path.is_file():
            return TuningFile(path)
        try:
            document = json.loads(path.read_text())
        except json.JSONDecodeError as e:
            raise ValueError(f"{path}: not JSON ({e})") from e
        if not isinstance(document, dict):
            raise ValueError(f"{path}: expected a JSON object, found {type(document).__name__}")
        if document.get("format_version") != FORMAT_VERSION:
            raise ValueError(f"{path}: tuning format_version {document.get('format_version')}, "
                             f"expected {FORMAT_VERSION}")
        entries = document.setdefault("entries", {})
        if not isinstance(entries, dict):
            raise ValueError(f"{path}: \"entries\" must be an object, found "
                             f"{type(entries).__name__}")
        for text, entry in entries.items():
            if not isinstance(entry, dict) or not isinstance(entry.get("configs"), dict):
                raise ValueError(f"{path}: entries.{text} must be an object with a \"configs\" "
                                 "object")
        return TuningFile(path, document)

    @property
    def entries(self) -> dict[str, dict[str, Any]]:
        return self.document["entries"]

    def entry(self, key: TuningKey, kernel: str = "") -> dict[str, Any]:
        return self.entries.setdefault(key.text(), {
            "kernel": kernel, "spec_hash": key.spec_hash, "gpu": key.gpu,
            "m_bucket": key.m_bucket, "K": key.K, "groups_bucket": key.groups_bucket,
            "configs": {}, "best": None})

    def write(self) -> None:
        """Atomic replace, so an interrupt never leaves half a file."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        text = json.dumps(self.document, indent=2, sort_keys=True) + "\n"
        fd, tmp = tempfile.mkstemp(prefix=".tuning-", dir=self.path.parent)
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, self.path)

    def best(self, key: TuningKey) -> Schedule | None:
        entry = self.entries.get(key.text())
        if not entry or not entry.get("best"):
            return None
        return dict(entry["best"]["schedule"])


def choose_best(configs: Mapping[str, Mapping[str, Any]]) -> dict[str, Any] | None:
    """The fastest config by median among those that compiled and verified (ties: lower min)."""
    ok = [(r["median_us"], r.get("min_us", r["median_us"]), label)
          for label, r in configs.items() if r.get("status") == "ok"]
    if not ok:
        return None
    median, _min, label = min(ok)
    return {"schedule": parse_label(label), "median_us": median}


# --- Tuning (the measuring itself is injected: the command passes GPU timing, tests fakes) --------

def code_hash(cubin: bytes) -> str:
    """What identifies the machine code a config ran: the first 16 hex digits of the SHA-256 of its
    cubin. NVRTC output is deterministic for a source, options, arch and NVRTC version, so two
    device libraries that compile a schedule to the same cubin ran the same code."""
    return hashlib.sha256(cubin).hexdigest()[:16]


@dataclass
class ConfigResult:
    status: str                   # ok | compile_failed | verify_failed | launch_failed
    median_us: float = 0.0
    min_us: float = 0.0
    iters: int = 0
    error: str = ""
    code: str = ""                # code_hash of the cubin, where it compiled

    def to_json(self) -> dict[str, Any]:
        if self.status == "ok":
            result: dict[str, Any] = {"status": "ok", "median_us": round(self.median_us, 3),
                                      "min_us": round(self.min_us, 3), "iters": self.iters,
                                      "measured": _now()}
        else:
            result = {"status": self.status, "error": self.error[:500], "measured": _now()}
        if self.code:
            result["code"] = self.code
        return result


def best_code(entry: Mapping[str, Any]) -> str | None:
    """The recorded code_hash of the entry's best config, or None (no best, or tuned before qct
    recorded it)."""
    best = entry.get("best")
    if not best:
        return None
    return entry.get("configs", {}).get(schedule_label(best["schedule"]), {}).get("code") or None


def stale_reason(entry: Mapping[str, Any], device_headers: str,
                 current_code: str | None = None) -> str | None:
    """Why an entry's timings may not be of the code this runtime runs, or None when they are. The
    kernels' bits do not depend on it (every legal schedule is exact); which schedule is fastest
    may. With current_code (code_hash of the entry's best schedule as this runtime compiles it)
    and a recorded code for that config, the machine code decides: a change elsewhere in the
    device library that leaves this kernel's cubin alone leaves its timing valid. Without them,
    the device library's hash does."""
    recorded = entry.get("device_headers")
    code = best_code(entry)
    if current_code is not None and code is not None:
        if code == current_code:
            return None
        return (f"the best schedule's machine code changed (code {code}, now {current_code}; "
                f"tuned on device library {(recorded or '?')[:12]})")
    if recorded == device_headers:
        return None
    if not recorded:
        return "device library not recorded (tuned before qct kept it)"
    return f"tuned on device library {recorded[:12]}, this runtime has {device_headers[:12]}"


def tune(store: TuningFile, key: TuningKey, kernel: str, schedules: Iterable[tuple[tuple[str, int], ...]],
         measure: Callable[[Schedule], ConfigResult], *, force: bool = False,
         device_headers: str = "", arch: str = "", nvrtc: str = "",
         code_of: Callable[[Schedule], str | None] | None = None,
         progress: Callable[[str], None] = lambda s: None) -> dict[str, Any]:
    """Measures every schedule not yet measured for this key (all of them with force), writing the
    file after each one; returns the entry with its best. Failed configs are kept, never chosen.
    With device_headers (runtime.device_headers_hash), configs measured on another device library
    are not resumed but measured again, so that one entry's timings all come from the same code;
    with code_of (a schedule -> code_hash of its cubin as compiled now, None if it does not
    compile), those whose recorded code is what they compile to now are kept: the same code."""
    entry = store.entry(key, kernel)
    entry["kernel"] = kernel or entry.get("kernel", "")
    if device_headers:
        why = stale_reason(entry, device_headers) if entry["configs"] else None
        if why:
            kept = {label: r for label, r in entry["configs"].items()
                    if code_of is not None and r.get("code")
                    and code_of(parse_label(label)) == r["code"]}
            progress(f"{len(entry['configs'])} configs measured before ({why}): " +
                     (f"{len(kept)} compile to the same machine code and are kept, the others "
                      "measured again" if code_of is not None else "measuring again"))
            entry["configs"] = kept
            entry["best"] = choose_best(kept)
        entry["device_headers"] = device_headers
    if arch:
        entry["arch"] = arch
    if nvrtc:
        entry["nvrtc"] = nvrtc
    all_schedules = list(schedules)
    for i, schedule in enumerate(all_schedules, 1):
        label = schedule_label(schedule)
        prefix = f"[{i}/{len(all_schedules)}] {label or 'default'}"
        if label in entry["configs"] and not force:
            progress(f"{prefix}: measured before ({_describe(entry['configs'][label])}), skipped")
            continue
        result = measure(dict(schedule))
        entry["configs"][label] = result.to_json()
        entry["best"] = choose_best(entry["configs"])
        entry["updated"] = _now()
        store.write()
        progress(f"{prefix}: {_describe(entry['configs'][label])}")
    entry["best"] = choose_best(entry["configs"])
    store.write()
    return entry


def _describe(result: Mapping[str, Any]) -> str:
    if result.get("status") == "ok":
        return f"{result['median_us']:.1f} us"
    return f"{result.get('status')}: {result.get('error', '')[:120]}"


def seed(cache: TuningFile, source: TuningFile) -> int:
    """Copies into the cache the entries of source (a repository file) whose keys it lacks, so that
    `qct tune` resumes from them (tune: the same device library, or the same machine code, is
    not measured again); returns how many were copied. Entries the cache has are left alone."""
    missing = {text: entry for text, entry in source.entries.items() if text not in cache.entries}
    if missing:
        cache.entries.update(missing)
        cache.write()
    return len(missing)


def export(cache: TuningFile, destination: Path) -> int:
    """Merges the cache's entries into a repository file (entries of other keys there are kept);
    returns how many entries were written."""
    target = TuningFile.read(destination)
    for text, entry in cache.entries.items():
        target.entries[text] = entry
    target.document["exported"] = _now()
    target.write()
    return len(cache.entries)


# --- Choosing a schedule for a launch -------------------------------------------------------------

def repository_files(directory: Path = REPO_TUNING_DIR) -> list[TuningFile]:
    """specs/tuning/*.json; one that cannot be read is skipped with a RuntimeWarning naming it
    (a launch then takes the other files' schedules or the heuristic, never an error)."""
    files = []
    for path in sorted(directory.glob("*.json")) if directory.is_dir() else []:
        try:
            files.append(TuningFile.read(path))
        except (OSError, ValueError) as e:
            warnings.warn(f"tuning file ignored: {e}", RuntimeWarning, stacklevel=2)
    return files


def heuristic_schedule(meta: Mapping[str, Any], M: int, K: int, groups: int = 0,
                       sm_count: int = DEFAULT_SM_COUNT) -> Schedule:
    """The untuned choice: the knobs' defaults (chosen by the device library for large shapes),
    with scale jobs instead of clusters where there would be enough of them
    (scale_job_schedule), except that when the grid would give fewer than two CTAs per SM, less
    work per CTA is taken (smaller QCT_M_TILES / QCT_UNROLL / QCT_K_TILES / QCT_TILE_K first,
    then fewer QCT_THREADS) until it does or nothing smaller is legal. Small tensors are
    latency-bound: more CTAs put more loads in flight. QCT_M_TILES goes first: it was worth 3% at
    M = 32768 on the H200 (docs/device-library.md), less than the CTAs it costs a small grid.
    Before that, the aligned col pass picks its K tiles: without a cluster, aligned_col_k_tiles;
    a ragged kernel keeping clusters gives up K tiles until its grid has
    RAGGED_CLUSTER_MIN_CTAS_PER_SM CTAs per SM: its default of 4 K tiles, the best at M = 32768
    and 131072, K = 7168, ran 44.4 us at M = 32768, K = 2048 with 32 groups (4 CTAs per SM)
    against 40.0 at two (docs/perf/probe-2026-11-30-session18.log, call 2). Last, the ragged
    kernels' last K span is split where it can be (split_last_span)."""
    from qct.bench.floor import eval_shape

    schedule = knobs.default_schedule(meta)
    grid = meta.get("launch", {}).get("grid")
    if not grid:
        return schedule
    jobs = scale_job_schedule(meta, schedule, M, K, groups, sm_count)
    if jobs is not None:
        schedule = jobs

    def ctas(s: Schedule) -> int:
        # CTAs with work: a grid rounded up to whole clusters (QCT_CLUSTER_M) has idle ones.
        s = {**s, "QCT_CLUSTER_M": 1} if "QCT_CLUSTER_M" in s else s
        try:
            return math.prod(eval_shape(g, M, K, groups, s) for g in grid)
        except (ValueError, KeyError):
            return 0

    values = {k["name"]: sorted(k["values"]) for k in meta["schedule"]["knobs"]}

    def shrink(schedule: Schedule, name: str, min_ctas: int) -> Schedule:
        # Smaller values of one knob while the grid has fewer than min_ctas CTAs.
        while ctas(schedule) < min_ctas:
            smaller = [v for v in values[name] if v < schedule[name]]
            if not smaller:
                break
            trial = {**schedule, name: smaller[-1]}
            if ctas(trial) <= ctas(schedule) or knobs.broken_rule(meta, trial):
                break  # this knob does not shape the grid, or may not shrink here
            schedule = trial
        return schedule

    if aligned_col_pass(meta) and "QCT_K_TILES" in schedule:
        if schedule.get("QCT_CLUSTER_M", 1) == 1:
            schedule = aligned_col_k_tiles(meta, schedule, ctas, sm_count)
        elif meta["spec"].get("ragged"):
            schedule = shrink(schedule, "QCT_K_TILES", RAGGED_CLUSTER_MIN_CTAS_PER_SM * sm_count)
    for name in ("QCT_M_TILES", "QCT_UNROLL", "QCT_K_TILES", "QCT_TILE_K", "QCT_THREADS"):
        if name in schedule:
            schedule = shrink(schedule, name, MIN_CTAS_PER_SM * sm_count)
    return split_last_span(meta, schedule)


def split_last_span(meta: Mapping[str, Any], schedule: Schedule) -> Schedule:
    """QCT_SPLIT_LAST_SPAN 1 wherever the kernel lists it and its rules allow it (an aligned
    ragged col kernel's CTAs of 2 or 4 256-feature K tiles, no cluster): the grid's last span of
    K tiles runs as single-tile CTAs, so the launch drains on short CTAs (docs/device-library.md).
    On the H200 the tunes of session 23 timed it against 0 at the same other knobs for both
    ragged kernels at the bench's four large shapes, 32 and 256 groups: faster in 62 of 64 pairs
    (median 1.8%, up to 15%), at most 0.5% slower in the other two."""
    if "QCT_SPLIT_LAST_SPAN" not in schedule:
        return schedule
    trial = {**schedule, "QCT_SPLIT_LAST_SPAN": 1}
    return schedule if knobs.broken_rule(meta, trial) else trial


def aligned_col_pass(meta: Mapping[str, Any]) -> bool:
    """Whether the kernel is the mxfp4 source's aligned col pass alone (every output an aligned
    col output of a fused spec): the kernels of scale jobs, clusters and 256-feature tiles."""
    spec = meta["spec"]
    return spec["source"]["format"] == "mxfp4" and bool(spec.get("fuse")) and all(
        out["layout"] == "col" and out.get("scale") == "aligned" for out in spec["outputs"])


def aligned_col_k_tiles(meta: Mapping[str, Any], schedule: Schedule,
                        ctas: Callable[[Schedule], int], sm_count: int) -> Schedule:
    """The aligned col pass without a cluster (mn_major scales, or scale jobs): two K tiles per
    CTA where the grid at two keeps RAGGED_ / DENSE_TWO_K_TILES_MIN_CTAS_PER_SM CTAs per SM, else
    one. More tiles per CTA amortize its fixed work (a ragged CTA's group lookup above all) but
    leave fewer CTAs to hide each tile's load latency. On the H200 (`qct tune`, M = 32768 and
    131072, K = 2048 and 7168; docs/performance.md, "Tuned schedules", Heuristic) one K tile was
    the faster at 3 of 4 dense mn_major shapes (2-3%), two at M = 131072, K = 7168 (426.4 against
    437.1 us, 109 CTAs per SM); the ragged kernels mostly took two from ~30 CTAs per SM (up to 5%
    faster) and always one at 16 or fewer (5-16%)."""
    ragged = bool(meta["spec"].get("ragged"))
    enough = (RAGGED_TWO_K_TILES_MIN_CTAS_PER_SM if ragged
              else DENSE_TWO_K_TILES_MIN_CTAS_PER_SM) * sm_count
    legal = next(k["values"] for k in meta["schedule"]["knobs"] if k["name"] == "QCT_K_TILES")
    for kt in (2, 1):
        trial = {**schedule, "QCT_K_TILES": kt}
        if kt in legal and not knobs.broken_rule(meta, trial) and \
                (kt == 1 or ctas(trial) >= enough):
            return trial
    return schedule


def scale_job_schedule(meta: Mapping[str, Any], schedule: Schedule, M: int, K: int,
                       groups: int = 0, sm_count: int = DEFAULT_SM_COUNT) -> Schedule | None:
    """The schedule with scale jobs instead of clusters (QCT_CLUSTER_M 1), where a kernel that
    offers both would run between MIN_SCALE_JOBS and one per SM; else None. (Its K tiles per
    CTA: aligned_col_k_tiles.)

    Without a cluster, a kernel whose row_major col scales come from the source scale bytes
    alone (the aligned pass; one 128-token tile per CTA; ragged only with the capacity tail
    untouched) writes them from scale jobs in its first CTAs, one per 4096 tokens x 1024 features
    (scale_jobs.cuh). A job's length does not shrink with the shape, so the jobs pay where there
    are enough of them to spread and no more than one per SM; docs/performance.md ("Tuned
    schedules", Heuristic) has the H200 timings this rests on."""
    knob_values = {k["name"]: k["values"] for k in meta["schedule"]["knobs"]}
    if 1 not in knob_values.get("QCT_CLUSTER_M", []) or schedule.get("QCT_CLUSTER_M", 1) == 1:
        return None  # no clusters to trade, or none in the schedule
    if schedule.get("QCT_M_TILES", 1) != 1 or schedule.get("QCT_TILE_M", 128) != 128:
        return None  # scale jobs need one 128-token tile per CTA
    ragged = meta["spec"].get("ragged")
    if ragged and ragged.get("capacity_tail", "zero") != "untouched":
        return None  # such ragged kernels store their own scales without a cluster
    jobs_schedule = {**schedule, "QCT_CLUSTER_M": 1}
    if knobs.broken_rule(meta, jobs_schedule):
        return None
    from qct.bench.floor import eval_shape

    try:
        # 128-token tiles along the grid's x (a ragged grid's capacity). (The jobs'
        # sector-aligned windows add at most one along the tiles: not counted.)
        tiles = eval_shape(meta["launch"]["grid"][0], M, K, groups, jobs_schedule)
    except (ValueError, KeyError):
        return None
    jobs = math.ceil(tiles * 128 / SCALE_JOB_TOKENS) * math.ceil(K / SCALE_JOB_FEATURES)
    return jobs_schedule if MIN_SCALE_JOBS <= jobs <= sm_count else None


def tuned_entry(meta: Mapping[str, Any], M: int, K: int, gpu_name: str | None, groups: int = 0,
                *, cache: TuningFile | None = None,
                repository: list[TuningFile] | None = None) -> dict[str, Any] | None:
    """The tuned entry whose best schedule a launch at [M, K] on this GPU takes: the cache's, else
    the first of specs/tuning/*.json's, skipping entries whose best is no longer legal for the
    metadata; None where there is none."""
    if not gpu_name or not meta["schedule"]["knobs"]:
        return None
    key = TuningKey.of(meta, M, K, groups, gpu_name)
    sources = [cache if cache is not None else read_cache()] + \
        (repository if repository is not None else repository_files())
    for source in sources:
        found = source.best(key) if source is not None else None
        if found is not None and is_legal(meta, found):
            return source.entries[key.text()]
    return None


def best_schedule(meta: Mapping[str, Any], M: int, K: int, gpu_name: str | None, groups: int = 0,
                  *, cache: TuningFile | None = None,
                  repository: list[TuningFile] | None = None) -> Schedule | None:
    """The schedule to launch this kernel with at [M, K] on this GPU: tuned in the cache, else
    tuned in specs/tuning/*.json (tuned_entry), else heuristic_schedule. None only for a kernel
    without knobs. A stored schedule that is no longer legal for the metadata is ignored."""
    entry = tuned_entry(meta, M, K, gpu_name, groups, cache=cache, repository=repository)
    return schedule_from(meta, M, K, groups, entry)


def schedule_from(meta: Mapping[str, Any], M: int, K: int, groups: int,
                  entry: Mapping[str, Any] | None) -> Schedule | None:
    """best_schedule once tuned_entry has answered: the entry's best, else the heuristic's (None
    for a kernel without knobs)."""
    if not meta["schedule"]["knobs"]:
        return None
    if entry is not None:
        return dict(entry["best"]["schedule"])
    return heuristic_schedule(meta, M, K, groups)


def read_cache() -> TuningFile | None:
    """The tuning cache file, or None where it cannot be read."""
    try:
        return TuningFile.read(cache_file())
    except (OSError, ValueError):
        return None  # an unreadable cache never stops a launch


def open_cache(warn: Callable[[str], None]) -> TuningFile:
    """The tuning cache for `qct tune` to read and update. One that cannot be read (a crash
    mid-write cannot make one, TuningFile.write replaces atomically, but an edit or a disk error
    can) is moved aside to tuning.json.broken, reported through warn, and started afresh: a
    broken cache costs measuring again, never a failed tune."""
    path = cache_file()
    try:
        return TuningFile.read(path)
    except (OSError, ValueError) as e:
        aside = path.with_name(path.name + ".broken")
        try:
            os.replace(path, aside)
            where = f"moved it to {aside}"
        except OSError:
            where = "it will be overwritten"
        warn(f"the tuning cache could not be read ({e}); {where} and started a new one")
        return TuningFile(path)


def current_gpu_name() -> str | None:
    try:
        import torch

        if torch.cuda.is_available():
            return str(torch.cuda.get_device_name(torch.cuda.current_device()))
    except ImportError:
        pass
    return None
