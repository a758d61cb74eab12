"""`qct tune SPEC_OR_KERNEL --m M --k K [--groups G]`: sweep the legal schedules, verify each
bitwise, time the ones that pass, keep the fastest per (spec, shape bucket, GPU) (qct.tuning)."""

from __future__ import annotations

import argparse
import statistics
import sys
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

from qct.cli import QctError

if TYPE_CHECKING:
    from qct import tuning

# Every config is verified on a shape of this many rows at most (same K and groups): bitwise
# correctness does not depend on M past a few tiles, and the CPU reference at M=131072 would
# take longer than the timing itself.
VERIFY_MAX_M = 4096 + 77


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "tune", help="find the fastest legal schedule of a kernel for a shape on this GPU",
        description="For every legal schedule of SPEC_OR_KERNEL: compile, verify bitwise against "
        "the CPU reference, then time at [M, K] (CUDA events, rotated buffers). Configs that fail "
        "to compile or verify are reported and never chosen. Results go to the tuning cache "
        "(QCT_CACHE_DIR/tuning/tuning.json) as each config completes; a rerun skips configs "
        "already measured for the same key unless --force. --export copies the cache's entries "
        "into a repository file (e.g. specs/tuning/h200.json).")
    p.add_argument("spec", type=Path, nargs="?", metavar="SPEC_OR_KERNEL",
                   help="a spec, or a generated kernel (.cu or metadata .json)")
    p.add_argument("--m", type=int, metavar="M", help="rows (tokens)")
    p.add_argument("--k", type=int, metavar="K", help="columns (features)")
    p.add_argument("--groups", type=int, default=0, metavar="G",
                   help="ragged groups (ragged kernels; default 32)")
    p.add_argument("--force", action="store_true", help="re-measure configs already measured")
    p.add_argument("--iters", type=int, default=0, help="timed launches per config (default: by size)")
    p.add_argument("--export", type=Path, metavar="PATH",
                   help="merge the tuning cache into this repository file (after tuning, if any)")
    p.add_argument("--seed", type=Path, metavar="PATH",
                   help="before tuning, copy into the cache the entries of this repository file "
                        "(e.g. specs/tuning/h200.json) that the cache lacks, so that a tune "
                        "resumes from them: configs timed on the same device library, or that "
                        "compile to the machine code they were timed with, are not measured again")
    p.add_argument("--show", action="store_true",
                   help="print the tuning cache's and the repository's entries, marking the "
                        "stale ones: best schedule now compiles to other machine code, or tuned "
                        "on another device library where no code was recorded")
    p.set_defaults(func=run)


def first_line(e: Exception) -> str:
    """An error's first line, for a config's recorded result (a compile error's full text carries
    the NVRTC log and the source)."""
    text = str(e)
    return text.splitlines()[0] if text else ""


def warn(message: str) -> None:
    print(f"qct tune: warning: {message}", file=sys.stderr, flush=True)


def run(args: argparse.Namespace) -> int:
    from qct import tuning

    if args.spec is None and args.export is None and not args.show and args.seed is None:
        raise QctError("give SPEC_OR_KERNEL with --m and --k, or --seed, --export or --show")
    if args.spec is not None and (args.m is None or args.k is None):
        raise QctError("--m and --k are required to tune a kernel")
    if args.seed is not None:
        if not args.seed.is_file():
            raise QctError(f"--seed {args.seed}: no such file")
        try:
            source = tuning.TuningFile.read(args.seed)
        except ValueError as e:  # not a tuning document (TuningFile.read says why)
            raise QctError(f"--seed: {e}") from e
        n = tuning.seed(tuning.open_cache(warn), source)
        print(f"seeded {n} entries from {args.seed} into {tuning.cache_file()}")
    if args.spec is not None:
        if args.m <= 0 or args.k <= 0:
            raise QctError(f"--m and --k must be positive, found M={args.m}, K={args.k}")
        tune_one(args)
    cache = tuning.open_cache(warn)
    if args.show:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            show(cache)
        for w in caught:
            warn(str(w.message))
    if args.export is not None:
        try:
            n = tuning.export(cache, args.export)
        except ValueError as e:  # the destination is not a tuning file: never overwritten
            raise QctError(f"--export: {e}; fix or remove it") from e
        print(f"exported {n} entries from {cache.path} to {args.export}")
    return 0


def current_best_code(entry: dict[str, Any], device_headers: str) -> str | None:
    """code_hash of the entry's best schedule as this runtime compiles it (NVRTC, for the arch the
    entry was tuned for; no GPU needed), or None, when the library's hash decides instead: the
    entry recorded no code, was tuned on this device library (device_headers), or was compiled by
    another NVRTC than this process loaded (which makes other code: a process that imports torch
    first may load torch's, as `qct tune` and `qct bench` do), or its generated source is missing
    or does not compile here."""
    from qct import runtime, tuning
    from qct.layout import generated_dir

    if tuning.best_code(entry) is None or entry.get("device_headers") == device_headers:
        return None
    if entry.get("nvrtc") and entry["nvrtc"] != runtime.nvrtc_version():
        return None
    source = generated_dir() / f"{entry.get('kernel', '')}.cu"
    if not source.is_file():
        return None
    try:
        return tuning.code_hash(runtime.compile_to_cubin(
            source, arch=entry.get("arch") or "sm_90a", schedule=entry["best"]["schedule"]))
    except QctError:
        return None


def show(cache: tuning.TuningFile) -> None:
    """The cache's entries, then the repository's, each marked stale where its timings may not be
    of the code this runtime runs: its best schedule compiles to other machine code than it
    recorded, or (entries without a recorded code) it was tuned on another device library.
    Re-run `qct tune` for those."""
    from qct import runtime, tuning

    current = runtime.device_headers_hash()
    print(f"device library of this runtime: {current[:12]}")
    for store in [cache] + tuning.repository_files():
        print(f"{store.path}: {len(store.entries)} entries")
        for text, entry in sorted(store.entries.items()):
            best = entry.get("best")
            why = tuning.stale_reason(entry, current, current_best_code(entry, current))
            print(f"  {text}  {entry.get('kernel', '?')}: " +
                  (f"best {tuning.schedule_label(best['schedule'])} {best['median_us']:.1f} us"
                   if best else "no config passed") + f" ({len(entry['configs'])} configs)" +
                  (f"; stale: {why}" if why else ""))


def tune_one(args: argparse.Namespace) -> None:
    from qct import runtime, tuning, verify
    from qct.bench import floor, timing
    from qct.bench.suite import SourceBank, rejects
    from qct.gpu import require_gpu

    torch = require_gpu()
    default = runtime.load(args.spec)
    meta = default.metadata
    ragged = verify.is_ragged(meta)
    groups = (args.groups or 32) if ragged else 0
    why = rejects(meta, args.m, args.k)
    if why:
        raise QctError(f"{meta['name']} rejects M={args.m}, K={args.k}: {why}")
    gpu = torch.cuda.get_device_name(torch.cuda.current_device())
    key = tuning.TuningKey.of(meta, args.m, args.k, groups, gpu)
    store = tuning.open_cache(warn)
    schedules = list(verify.schedules(meta))
    print(f"tuning {meta['name']} at M={args.m} K={args.k}" + (f" G={groups}" if ragged else "") +
          f" on {gpu}: {len(schedules)} legal schedules; key {key.text()}; cache {store.path}",
          flush=True)

    offsets_np = verify.make_offsets(meta, args.m, groups, 0) if ragged else None
    offsets = None if offsets_np is None else torch.from_numpy(offsets_np).to("cuda")
    nbytes = floor.floor_bytes(meta["spec"], args.m, args.k,
                               None if offsets_np is None else offsets_np.tolist()).total
    l2 = timing.l2_bytes(torch)
    bank = SourceBank(torch, args.m)
    base = bank.sources(meta, args.m, args.k)
    spin = timing.SpinCalibration(torch)
    offsets_name = next((b["name"] for b in meta["buffers"] if b["field"] == "offsets"), None)
    inputs = [SourceBank.rolled(base, i, torch) for i in range(timing.rotation_sets(nbytes, l2))]
    if offsets_name:
        for s in inputs:
            s[offsets_name] = offsets
    verify_case_m = min(args.m, VERIFY_MAX_M)

    def code_of(schedule: dict[str, int]) -> str | None:
        try:
            return tuning.code_hash(runtime.load(args.spec, schedule=schedule).cubin)
        except QctError:
            return None

    def measure(schedule: dict[str, int]) -> tuning.ConfigResult:
        try:
            kernel = runtime.load(args.spec, schedule=schedule)
        except QctError as e:
            return tuning.ConfigResult("compile_failed", error=first_line(e))
        code = tuning.code_hash(kernel.cubin)
        case = verify.Case(verify_case_m, args.k, groups, seed=7,
                           schedule=tuple(sorted(schedule.items())), label="tune")
        try:
            result = verify.run_case(kernel, meta, case)
        except QctError as e:
            return tuning.ConfigResult("launch_failed", error=first_line(e), code=code)
        if not result.ok:
            return tuning.ConfigResult("verify_failed", error="; ".join(result.problems[:3]),
                                       code=code)
        sets: list[dict[str, Any]] = []
        for s in inputs:
            tensors = dict(s)
            tensors.update(kernel.allocate_outputs(args.m, args.k, offsets))
            sets.append(tensors)
        iters = args.iters or timing.iterations_for(nbytes / 3.4e3 / 1e3 + 2.0)
        t = timing.time_launches(torch, spin, lambda i: kernel(**sets[i % len(sets)]), iters)
        kernel.check_errors()
        return tuning.ConfigResult("ok", t.median_us, t.min_us, t.iters, code=code)

    entry = tuning.tune(store, key, meta["name"], schedules, measure, force=args.force,
                        device_headers=runtime.device_headers_hash(), arch=default.arch,
                        nvrtc=runtime.nvrtc_version(), code_of=code_of,
                        progress=lambda line: print(line, flush=True))
    ok = {label: r for label, r in entry["configs"].items() if r["status"] == "ok"}
    failed = {label: r for label, r in entry["configs"].items() if r["status"] != "ok"}
    for label, r in sorted(ok.items(), key=lambda item: item[1]["median_us"]):
        gbps = timing.gbps(nbytes, r["median_us"])
        print(f"  {label:<32} {r['median_us']:9.1f} us {gbps:7.0f} GB/s")
    for label, r in sorted(failed.items()):
        print(f"  {label:<32} {r['status']}: {r.get('error', '')[:160]}")
    best = entry["best"]
    if best is None:
        raise QctError(f"no schedule of {meta['name']} compiled and verified; nothing chosen")
    medians = [r["median_us"] for r in ok.values()]
    print(f"best {tuning.schedule_label(best['schedule'])}: {best['median_us']:.1f} us "
          f"(median of configs {statistics.median(medians):.1f} us); written to {store.path}")
