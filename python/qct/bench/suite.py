"""What `qct bench` measures, in what order, within a bounded time.

Order (cheapest and most important first, so a run cut short still has the headline numbers):
copy bandwidth; every generated kernel at every shape its constraints accept; ragged kernels at
32 and 256 groups beside their dense twin; qct's unfused chain beside the fused kernel; PyTorch
eager peers; torch.compile peers (the slow part: one Inductor compile each). The JSON is rewritten
after every section, so an interrupted run keeps what it measured.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

from qct import tuning, verify
from qct.bench import floor, peers, sass, timing
from qct.provenance import git_commit

M_VALUES = (2048, 32768, 131072)
K_VALUES = (2048, 7168)
HEADLINE = (32768, 7168)            # the shape of performance.md's tables; peers run only here
RAGGED_GROUPS = (32, 256)           # group counts; a ragged kernel and its peers run at each
SLAB_ROWS = 1031                    # rows generated on the host (a prime), tiled on the GPU
SEED = 2026
DEVICE = "cuda"                     # where tensors live (a CPU dry run of this module sets "cpu")
# Peers in this order, so a run cut short by its time budget still has the paper's kernels
# (torch.compile took 3-14 s per peer on an H200 with torch 2.11, cold).
PEER_PRIORITY = ("bf16_to_mxfp4_row", "mxfp4_to_fp8_e4m3_row", "mxfp4_to_fp8_e4m3_col",
                 "bf16_to_fp8_e4m3_row_col")
CHAIN = ("mxfp4_to_bf16_row", "bf16_to_fp8_e4m3_row")   # qct's unfused form of ...
FUSED = "mxfp4_to_fp8_e4m3_row"                          # ... this fused kernel
# Rough costs for the up-front estimate (seconds; a full run took 39 s on an H200, torch 2.11).
EST_ROW_OVERHEAD_S = 0.2
EST_COMPILE_S = 6.0
EST_EAGER_S = 1.5
EST_LOAD_S = 0.8


@dataclass
class Options:
    generated: Path
    out_dir: Path
    quick: bool = False
    only: tuple[str, ...] = ()
    with_sass: bool = False
    peers: bool = True
    compiled_peers: bool = True
    commit: str = ""
    budget_s: float = 280.0
    realistic_inputs: bool = True  # activation-like timing data (qct.inputs.realistic)


@dataclass
class Row:
    kind: str                  # qct | qct-ragged | qct-chain | torch-eager | torch-compile
    kernel: str
    M: int
    K: int
    groups: int = 0
    floor_bytes: int = 0
    median_us: float | None = None
    min_us: float | None = None
    iters: int = 0
    host_us: float | None = None
    gbps: float | None = None
    pct_copy: float | None = None
    schedule: dict[str, int] = field(default_factory=dict)
    verified: str = ""
    note: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    def record(self, t: timing.Timing, copy_gbps: float) -> None:
        self.median_us, self.min_us, self.iters, self.host_us = \
            t.median_us, t.min_us, t.iters, t.host_us
        self.gbps = timing.gbps(self.floor_bytes, t.median_us)
        self.pct_copy = 100.0 * self.gbps / copy_gbps if copy_gbps else None

    def to_json(self) -> dict[str, Any]:
        out = dict(self.__dict__)
        for key in ("median_us", "min_us", "host_us", "gbps", "pct_copy"):
            if out[key] is not None:
                out[key] = round(out[key], 3)
        return out


@dataclass
class Results:
    header: dict[str, Any]
    rows: list[Row] = field(default_factory=list)
    kernels: dict[str, Any] = field(default_factory=dict)   # per kernel: stats, SASS counts

    def to_json(self) -> dict[str, Any]:
        return {**self.header, "rows": [r.to_json() for r in self.rows], "kernels": self.kernels}


class Clock:
    def __init__(self, budget_s: float):
        self.start = time.perf_counter()
        self.budget_s = budget_s

    def elapsed(self) -> float:
        return time.perf_counter() - self.start

    def left(self) -> float:
        return self.budget_s - self.elapsed()


def log(message: str) -> None:
    print(message, flush=True)


# --- Plan -------------------------------------------------------------------------------------------

def rejects(meta: dict[str, Any], M: int, K: int) -> str | None:
    """Why the kernel's constraints reject this shape (None: accepted)."""
    for c in meta.get("constraints", []):
        value = floor.eval_shape(c["expr"], M, K)
        if "multiple_of" in c and value % int(c["multiple_of"]):
            return c.get("why", f"{c['expr']} % {c['multiple_of']}")
        if "equals" in c and value != int(c["equals"]):
            return c.get("why", f"{c['expr']} == {c['equals']}")
    return None


def shapes_for(meta: dict[str, Any], quick: bool) -> list[tuple[int, int]]:
    static_k = (meta["spec"].get("static") or {}).get("K")
    ks = (int(static_k),) if static_k else K_VALUES
    candidates = [(HEADLINE[0], k) for k in ks[-1:]] if quick else \
        [(m, k) for k in ks for m in M_VALUES]
    return [(m, k) for m, k in candidates if rejects(meta, m, k) is None]


def dense_twin(meta: dict[str, Any], metas: dict[str, dict[str, Any]]) -> str | None:
    """The dense kernel of the same conversion as a ragged one (its spec without `ragged`)."""
    ignored = ("ragged", "name", "description")
    want = {k: v for k, v in meta["spec"].items() if k not in ignored}
    for name, other in metas.items():
        if other["spec"].get("ragged") is None and \
                {k: v for k, v in other["spec"].items() if k not in ignored} == want:
            return name
    return None


def select(metas: dict[str, dict[str, Any]], only: tuple[str, ...]) -> list[str]:
    if not only:
        return sorted(metas)
    unknown = [n for n in only if n not in metas]
    if unknown:
        raise ValueError(f"unknown kernel(s) {', '.join(unknown)}; generated: {', '.join(sorted(metas))}")
    chosen = set(only)
    for name in only:  # a ragged kernel is compared with its dense twin; the chain with the fused
        twin = dense_twin(metas[name], metas) if metas[name]["spec"].get("ragged") else None
        if twin:
            chosen.add(twin)
        if name == FUSED:
            chosen.update(n for n in CHAIN if n in metas)
    return sorted(chosen)


def estimate_seconds(metas: dict[str, dict[str, Any]], names: list[str], opts: Options) -> float:
    total = EST_LOAD_S * len(names) + 5.0  # + copy bandwidth and spin calibration
    for name in names:
        meta = metas[name]
        n_shapes = len(shapes_for(meta, opts.quick))
        groups = len(RAGGED_GROUPS) if meta["spec"].get("ragged") else 1
        total += n_shapes * groups * EST_ROW_OVERHEAD_S
        if opts.peers and peers.peer_for(meta) is not None:
            total += groups * (EST_EAGER_S + (EST_COMPILE_S if opts.compiled_peers else 0.0))
    if FUSED in names and all(n in names for n in CHAIN):
        total += EST_ROW_OVERHEAD_S * (1 if opts.quick else len(M_VALUES) * len(K_VALUES))
    return total


# --- Inputs ---------------------------------------------------------------------------------------

class SourceBank:
    """Source tensors on the GPU: a slab of SLAB_ROWS rows made by qct.verify.make_source on the
    host (activation-like by default, or the GPU tier's adversarial data; never zeros), tiled on the
    GPU up to the largest M of the run and sliced for smaller M. Rotated buffer sets are row-rolled
    copies, so each set has its own addresses and contents."""

    def __init__(self, torch: Any, max_m: int, realistic: bool = True):
        self.torch = torch
        self.max_m = max_m
        self.realistic = realistic
        self.base: dict[tuple[str, int], dict[str, Any]] = {}

    def _tile(self, slab: Any) -> Any:
        out = self.torch.empty((self.max_m,) + tuple(slab.shape[1:]), dtype=slab.dtype,
                               device=slab.device)
        n = min(slab.shape[0], self.max_m)
        out[:n].copy_(slab[:n])
        while n < self.max_m:  # doubling copies: log2(M / SLAB_ROWS) launches
            step = min(n, self.max_m - n)
            out[n:n + step].copy_(out[:step])
            n += step
        return out

    def sources(self, meta: dict[str, Any], M: int, K: int) -> dict[str, Any]:
        """The input tensors (src, src_scales) by the kernel's buffer names, M rows."""
        fmt = meta["spec"]["source"]["format"]
        source_buffers = [b for b in meta["buffers"] if b["field"] in ("src", "src_scales")]
        key = (fmt, K)
        if key not in self.base:  # kept by field, so kernels naming buffers differently share it
            src = verify.make_source(meta, SLAB_ROWS, K, SEED + K, realistic=self.realistic)
            slab = verify.kernel_inputs({**meta, "buffers": source_buffers}, src, None,
                                        self.torch.device(DEVICE))
            self.base[key] = {b["field"]: self._tile(slab[b["name"]]) for b in source_buffers}
        return {b["name"]: self.base[key][b["field"]][:M] for b in source_buffers}

    @staticmethod
    def rolled(tensors: dict[str, Any], i: int, torch: Any) -> dict[str, Any]:
        if i == 0:
            return dict(tensors)
        return {name: torch.roll(t, shifts=37 * i, dims=0) for name, t in tensors.items()}


def shape_inputs(torch: Any, meta: dict[str, Any], M: int, K: int,
                 groups: int) -> tuple[np.ndarray | None, Any, floor.FloorBytes]:
    """A shape's offsets (host and device; None when dense) and its floor bytes. The offsets come
    from one seed, so a kernel, its peer and the probe see the same groups at the same shape."""
    offsets_np = verify.make_offsets(meta, M, groups, SEED) if groups else None
    fb = floor.floor_bytes(meta["spec"], M, K, None if offsets_np is None else offsets_np.tolist())
    offsets = None if offsets_np is None else torch.from_numpy(offsets_np).to(DEVICE)
    return offsets_np, offsets, fb


def buffer_sets(torch: Any, bank: SourceBank, meta: dict[str, Any], kernel: Any, M: int, K: int,
                count: int, offsets: Any = None) -> list[dict[str, Any]]:
    """`count` launch argument sets for `kernel`: rotated sources (bank), the offsets if ragged,
    and freshly allocated outputs."""
    base = bank.sources(meta, M, K)
    sets = []
    for i in range(count):
        tensors = SourceBank.rolled(base, i, torch)
        if offsets is not None:
            name = next(b["name"] for b in meta["buffers"] if b["field"] == "offsets")
            tensors[name] = offsets
        tensors.update(kernel.allocate_outputs(M, K, offsets, device=DEVICE))
        sets.append(tensors)
    return sets


# --- Measurements ---------------------------------------------------------------------------------

class Bench:
    def __init__(self, torch: Any, opts: Options, results: Results, kernels: dict[str, Any],
                 metas: dict[str, dict[str, Any]], copy_gbps: float, spin: timing.SpinCalibration,
                 clock: Clock):
        self.torch, self.opts, self.results = torch, opts, results
        self.kernels, self.metas = kernels, metas
        self.copy_gbps, self.spin, self.clock = copy_gbps, spin, clock
        self.l2 = timing.l2_bytes(torch)
        self.by_schedule: dict[tuple[str, tuple[tuple[str, int], ...]], Any] = {}
        # What qct.load(shape=) consults, read once for the run (bench never tunes).
        self.gpu_name = tuning.current_gpu_name()
        self.tuned_cache = tuning.read_cache() or tuning.TuningFile(tuning.cache_file())
        self.tuned_repository = tuning.repository_files()
        self.device_headers = results.header["device_headers"]
        self.bank = SourceBank(torch, max(M_VALUES) if not opts.quick else HEADLINE[0],
                               opts.realistic_inputs)

    def kernel_at(self, name: str, M: int, K: int, groups: int = 0) -> tuple[Any, str]:
        """The kernel with the schedule a user gets for this shape (qct.load(..., shape=...): the
        tuned one for this GPU, else the heuristic), loaded once per distinct schedule, and where
        that schedule comes from: "tuned", "tuned, stale" (its timing may be of other machine
        code: docs/performance.md, "Tuned schedules") or "heuristic"."""
        from qct import runtime

        meta = self.metas[name]
        entry = tuning.tuned_entry(meta, M, K, self.gpu_name, groups, cache=self.tuned_cache,
                                   repository=self.tuned_repository)
        schedule = tuning.schedule_from(meta, M, K, groups, entry)
        if schedule is None or schedule == self.kernels[name].schedule:
            kernel = self.kernels[name]
        else:
            key = (name, tuple(sorted(schedule.items())))
            if key not in self.by_schedule:
                self.by_schedule[key] = runtime.load(meta["_path"], schedule=schedule)
            kernel = self.by_schedule[key]
        if entry is None:
            return kernel, "heuristic"
        # The machine code decides where the entry recorded it (tuning.stale_reason).
        code = tuning.code_hash(kernel.cubin) if tuning.best_code(entry) else None
        stale = tuning.stale_reason(entry, self.device_headers, code)
        return kernel, "tuned, stale" if stale else "tuned"

    def expected_us(self, nbytes: int) -> float:
        return nbytes / (self.copy_gbps * 1e9 * 0.8) * 1e6 + 2.0

    def sets_for(self, meta: dict[str, Any], M: int, K: int, nbytes: int,
                 offsets: Any = None, kernel: Any = None) -> list[dict[str, Any]]:
        kernel = kernel if kernel is not None else self.kernels[meta["name"]]
        return buffer_sets(self.torch, self.bank, meta, kernel, M, K,
                           timing.rotation_sets(nbytes, self.l2), offsets)

    def out_of_time(self, row: Row, needs_s: float = 1.0) -> bool:
        if self.clock.left() < needs_s:
            row.note = f"skipped: time budget ({self.opts.budget_s:.0f} s) spent"
            self.results.rows.append(row)
            log(f"  skip {row.kind} {row.kernel} M={row.M} K={row.K}: time budget spent")
            return True
        return False

    def time_kernel(self, name: str, M: int, K: int, groups: int = 0) -> Row | None:
        meta = self.metas[name]
        kernel, origin = self.kernel_at(name, M, K, groups)
        offsets_np, offsets, fb = shape_inputs(self.torch, meta, M, K, groups)
        row = Row("qct-ragged" if groups else "qct", name, M, K, groups, fb.total,
                  schedule=kernel.schedule)
        row.extra["schedule_origin"] = origin
        if self.out_of_time(row):
            return None
        if groups:
            capacity = sum(floor.buffer_bytes(meta, M, K, groups).values())
            row.extra["capacity_bytes"] = capacity
            sizes = np.diff(offsets_np)
            row.extra["group_sizes"] = {"empty": int((sizes == 0).sum()), "max": int(sizes.max()),
                                        "median": float(np.median(sizes))}
        sets = self.sets_for(meta, M, K, fb.total, offsets, kernel)
        t = timing.time_launches(self.torch, self.spin, lambda i: kernel(**sets[i % len(sets)]),
                                 timing.iterations_for(self.expected_us(fb.total)))
        kernel.check_errors()
        row.record(t, self.copy_gbps)
        row.extra["rotation_sets"] = len(sets)
        # The capacity buffer's bytes, what a kernel with a zero tail writes: show that view too
        # (a kernel that leaves the tail untouched never moves them).
        if groups and not verify.untouched_tail(meta["spec"]):
            row.extra["capacity_gbps"] = round(timing.gbps(row.extra["capacity_bytes"], t.median_us), 1)
        del sets
        self.results.rows.append(row)
        log(f"  {row.kind:<10} {name:<32} M={M:<6} K={K:<5}" + (f" G={groups:<3}" if groups else "")
            + f" {row.median_us:9.1f} us {row.gbps:7.0f} GB/s {row.pct_copy:5.1f}% copy")
        return row

    def time_chain(self, M: int, K: int, fused: Row | None) -> None:
        first, second = (self.kernels[n] for n in CHAIN)
        meta1, meta2 = (self.metas[n] for n in CHAIN)
        fb = floor.floor_bytes(self.metas[FUSED]["spec"], M, K)
        chain_bytes = floor.floor_bytes(meta1["spec"], M, K).total + \
            floor.floor_bytes(meta2["spec"], M, K).total
        row = Row("qct-chain", f"{CHAIN[0]} + {CHAIN[1]}", M, K, 0, fb.total,
                  note="two launches timed together; GB/s counts the fused floor. The chain's "
                  "bf16 -> fp8 step takes pow2 scales from the bf16 values, the fused kernel "
                  "aligned scales from the source scale bytes: different scale rule, same "
                  "bytes-moved class")
        if self.out_of_time(row):
            return
        names1 = {b.name for b in first.buffers}
        names2 = {b.name for b in second.buffers}
        if not ({"src", "src_scales", "y"} <= names1 and {"src", "y", "y_scales"} <= names2):
            row.note = "skipped: chain kernels' buffer names changed"
            self.results.rows.append(row)
            return
        base = self.bank.sources(meta1, M, K)
        sets = []
        for i in range(timing.rotation_sets(chain_bytes, self.l2)):
            s = SourceBank.rolled(base, i, self.torch)
            s["mid"] = first.allocate_outputs(M, K, device=DEVICE)["y"]
            s.update(second.allocate_outputs(M, K, device=DEVICE))
            sets.append(s)

        def launch(i: int) -> None:
            s = sets[i % len(sets)]
            first(src=s["src"], src_scales=s["src_scales"], y=s["mid"])
            second(src=s["mid"], y=s["y"], y_scales=s["y_scales"])

        t = timing.time_launches(self.torch, self.spin, launch,
                                 timing.iterations_for(self.expected_us(chain_bytes)))
        row.record(t, self.copy_gbps)
        row.extra["chain_floor_bytes"] = chain_bytes
        if fused is not None and fused.median_us:
            row.extra["fused_us"] = round(fused.median_us, 3)
            row.extra["fused_speedup"] = round(row.median_us / fused.median_us, 3)
        del sets
        self.results.rows.append(row)
        speed = f" fused {row.extra['fused_speedup']:.2f}x faster" if "fused_speedup" in row.extra else ""
        log(f"  qct-chain  {'mxfp4->bf16->fp8 row':<32} M={M:<6} K={K:<5} {row.median_us:9.1f} us"
            f" ({chain_bytes / 1e6:.0f} MB moved by the two launches){speed}")

    def time_peer(self, name: str, compiled: bool, groups: int, qct_row: Row | None) -> None:
        """The peer of `name` at the headline shape; a ragged kernel's at `groups` groups, on the
        offsets its qct row had (same seed)."""
        M, K = HEADLINE
        meta = self.metas[name]
        kernel, _ = self.kernel_at(name, M, K, groups)
        peer = peers.peer_for(meta)
        offsets_np, offsets, fb = shape_inputs(self.torch, meta, M, K, groups)
        prefixes = floor.written_prefixes(meta, M, K, offsets_np) if groups else {}
        row = Row("torch-compile" if compiled else "torch-eager", name, M, K, groups, fb.total)
        if self.out_of_time(row, EST_COMPILE_S if compiled else 2.0) or peer is None:
            return
        sets = self.sets_for(meta, M, K, fb.total, offsets, kernel)
        inputs = [peers.peer_inputs(meta, s) for s in sets]
        fn: Callable[..., Any] = peer
        try:
            if compiled:
                t0 = time.perf_counter()
                fn = self.torch.compile(peer, dynamic=False)
                fn(**inputs[0])
                self.torch.cuda.synchronize()
                row.extra["compile_s"] = round(time.perf_counter() - t0, 1)
            row.verified = self.compare(kernel, sets[0], fn(**inputs[0]), prefixes)
            t = timing.time_launches(self.torch, self.spin, lambda i: fn(**inputs[i % len(inputs)]),
                                     timing.iterations_for(self.expected_us(fb.total) * 20,
                                                           gpu_ms_budget=150.0, lo=5, hi=30),
                                     warmup=2)
        except Exception as e:  # a peer that fails to run is reported, never fatal
            row.note = f"failed: {type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}"
            self.results.rows.append(row)
            log(f"  {row.kind:<13} {name}: {row.note}")
            return
        finally:
            del sets
        row.record(t, self.copy_gbps)
        if qct_row is not None and qct_row.median_us:
            row.extra["qct_us"] = round(qct_row.median_us, 3)
            row.extra["qct_speedup"] = round(row.median_us / qct_row.median_us, 2)
        self.results.rows.append(row)
        speed = f", qct {row.extra['qct_speedup']:.1f}x faster" if "qct_speedup" in row.extra else ""
        log(f"  {row.kind:<13} {name:<29} M={M} K={K}" + (f" G={groups}" if groups else "")
            + f" {row.median_us:9.1f} us {row.gbps:7.0f} GB/s"
            f" {row.pct_copy:5.1f}% copy{speed}; {row.verified}")

    def compare(self, kernel: Any, tensors: dict[str, Any], peer_out: dict[str, Any],
                prefixes: dict[str, floor.Prefix] | None = None) -> str:
        """Bitwise comparison of a peer's outputs with the kernel's on the same input; where the
        kernel leaves a ragged capacity tail untouched, of the bytes before it (`prefixes`)."""
        kernel(**tensors)
        self.torch.cuda.synchronize()
        problems = []
        for name, theirs in peer_out.items():
            ours = tensors[name].contiguous().view(self.torch.uint8).reshape(-1)
            theirs = theirs.contiguous().view(self.torch.uint8).reshape(-1)
            if ours.numel() != theirs.numel():
                problems.append(f"{name}: {theirs.numel()} bytes vs qct {ours.numel()}")
                continue
            prefix = (prefixes or {}).get(name)
            if prefix is not None:
                def written(t: Any) -> Any:
                    rows = t.view(prefix.rows, prefix.row_bytes)
                    return rows[:prefix.keep_rows, :prefix.keep_bytes].reshape(-1)
                ours, theirs = written(ours), written(theirs)
            bad = int((ours != theirs).sum().item())
            if bad:
                problems.append(f"{name}: {bad} of {ours.numel()} bytes differ")
        return "bitwise equal to qct" if not problems else "MISMATCH: " + "; ".join(problems)


def write_json(results: Results, out_dir: Path) -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "bench.json"
    path.write_text(json.dumps(results.to_json(), indent=1) + "\n")
    return path


# --- The whole run -----------------------------------------------------------------------------------

def load_metas(generated: Path) -> dict[str, dict[str, Any]]:
    metas = {}
    for path in sorted(generated.glob("*.json")):
        meta = verify.load_metadata(path)
        if "entry" in meta and "buffers" in meta:
            meta["_path"] = str(path)
            metas[meta["name"]] = meta
    return metas


def run(opts: Options) -> Results:
    import datetime
    import platform

    from qct import runtime
    from qct.bench import report
    from qct.gpu import require_gpu

    torch = require_gpu()
    clock = Clock(opts.budget_s)
    metas = load_metas(opts.generated)
    names = select(metas, opts.only)
    log(f"qct bench: {len(names)} kernels, {'quick (one shape each)' if opts.quick else 'full'}; "
        f"estimated {estimate_seconds(metas, names, opts):.0f} s (time budget {opts.budget_s:.0f} s)")
    device = torch.cuda.current_device()
    header: dict[str, Any] = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "commit": opts.commit or git_commit(),
        "gpu": torch.cuda.get_device_name(device),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "device_headers": runtime.device_headers_hash(),
        "host": platform.node(),
        "options": {"quick": opts.quick, "only": list(opts.only), "peers": opts.peers,
                    "compiled_peers": opts.compiled_peers,
                    "budget_s": opts.budget_s},
        "method": "CUDA events per launch, launches queued behind a GPU spin, median after "
                  "warm-up; input/output buffer sets rotated over >= 4x L2; inputs from "
                  + ("qct.inputs.realistic (activation-like, never zeros)" if opts.realistic_inputs
                     else "qct.verify.make_source (adversarial, never zeros)"),
    }
    results = Results(header)
    spin = timing.SpinCalibration(torch)
    copy_gbps, copy_t = timing.copy_bandwidth(torch, spin, device=DEVICE)
    header["copy_gbps"] = round(copy_gbps, 1)
    header["copy"] = copy_t.to_json()
    header["l2_bytes"] = timing.l2_bytes(torch)
    log(f"copy bandwidth {copy_gbps:.0f} GB/s (1 GiB device-to-device, read + write, median of "
        f"{copy_t.iters}); {clock.elapsed():.0f} s")

    kernels: dict[str, Any] = {}
    for name in names:
        t0 = time.perf_counter()
        kernels[name] = runtime.load(metas[name]["_path"])
        info: dict[str, Any] = {"schedule": kernels[name].schedule, "origin": kernels[name].origin}
        try:
            info["stats"] = kernels[name].stats
        except Exception as e:  # stats are informative only
            info["stats_error"] = str(e)
        if opts.with_sass:
            info["sass"] = sass.kernel_sass_summary(kernels[name])
        results.kernels[name] = info
        log(f"loaded {name} ({kernels[name].origin}, {time.perf_counter() - t0:.1f} s)")
    if opts.with_sass and sass.cuobjdump() is None:
        log("SASS counts skipped: cuobjdump is not on PATH")
    bench = Bench(torch, opts, results, kernels, metas, copy_gbps, spin, clock)

    def checkpoint(section: str) -> None:
        write_json(results, opts.out_dir)
        report.write_all(results.to_json(), opts.out_dir, with_plot=False)
        log(f"-- {section} done at {clock.elapsed():.0f} s")

    try:
        measure_all(bench, names, metas, kernels, opts, results, checkpoint)
    finally:  # also on Ctrl-C / SIGTERM: what was measured is written
        header["wall_s"] = round(clock.elapsed(), 1)
        path = write_json(results, opts.out_dir)
        log(f"results written to {path}")
        for message in report.write_all(results.to_json(), opts.out_dir):
            log(message)
    return results


def measure_all(bench: Bench, names: list[str], metas: dict[str, dict[str, Any]],
                kernels: dict[str, Any], opts: Options, results: Results,
                checkpoint: Callable[[str], None]) -> None:
    """The sections in order: dense kernels, ragged, chain, eager peers, compiled peers."""
    log("qct kernels:")
    by_shape: dict[tuple[str, int, int, int], Row] = {}  # (kernel, M, K, groups; 0: dense)
    for name in names:
        if metas[name]["spec"].get("ragged") is None:
            for M, K in shapes_for(metas[name], opts.quick):
                row = bench.time_kernel(name, M, K)
                if row is not None:
                    by_shape[(name, M, K, 0)] = row
    checkpoint("dense kernels")

    ragged = [n for n in names if metas[n]["spec"].get("ragged") is not None]
    if ragged:
        log("ragged kernels (vs the dense kernel of the same conversion, same total M):")
    for name in ragged:
        twin = dense_twin(metas[name], metas)
        for M, K in shapes_for(metas[name], opts.quick):
            for groups in RAGGED_GROUPS:
                row = bench.time_kernel(name, M, K, groups)
                if row is not None:
                    by_shape[(name, M, K, groups)] = row  # what its peer is compared with
                dense = by_shape.get((twin or "", M, K, 0))
                if row is not None and dense is not None and dense.gbps and row.gbps:
                    row.extra["dense_kernel"] = twin
                    row.extra["dense_us"] = round(dense.median_us or 0, 3)
                    row.extra["vs_dense"] = round(row.gbps / dense.gbps, 3)
    if ragged:
        checkpoint("ragged kernels")

    if FUSED in names and all(n in kernels for n in CHAIN):
        log("fusion: qct's unfused chain vs the fused kernel:")
        for M, K in shapes_for(metas[FUSED], opts.quick):
            bench.time_chain(M, K, by_shape.get((FUSED, M, K, 0)))
        checkpoint("chain")

    if opts.peers:
        with_peer = sorted((n for n in names if peers.peer_for(metas[n]) is not None),
                           key=lambda n: (PEER_PRIORITY + (n,)).index(n))
        # (kernel, groups) pairs: a ragged kernel's peer at each group count its qct rows ran at.
        peer_runs = [(n, g) for n in with_peer
                     for g in (RAGGED_GROUPS if metas[n]["spec"].get("ragged") is not None else (0,))]
        log(f"PyTorch peers at M={HEADLINE[0]}, K={HEADLINE[1]} (eager):")
        for name, groups in peer_runs:
            bench.time_peer(name, False, groups, by_shape.get((name,) + HEADLINE + (groups,)))
        checkpoint("eager peers")
        if opts.compiled_peers:
            log("PyTorch peers (torch.compile, one Inductor compile each):")
            for name, groups in peer_runs:
                bench.time_peer(name, True, groups, by_shape.get((name,) + HEADLINE + (groups,)))
                write_json(results, opts.out_dir)
            checkpoint("compiled peers")

