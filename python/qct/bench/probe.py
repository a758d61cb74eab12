"""`python -m qct.bench.probe`: a developer's probe of generated kernels on the GPU.

Times every legal schedule of the chosen kernels (or those matching --fix, only the defaults, or
with --launched only the schedule a launch without one takes: tuned, else the heuristic's) at one
or more shapes on activation-like inputs (rotated buffers, CUDA events, median) and prints
one line per schedule and shape with % of copy bandwidth; or, with --launches N, only launches each
kernel N times (for a profiler such as ncu to attach to). It does not verify: the GPU tier and
`qct tune` do that. Use it to see which schedule a change helps before committing to it; `qct
bench` is the benchmark of record. Example, the default schedule at three token counts:
`python -m qct.bench.probe mxfp4_to_fp8_e4m3_col --m 32768,34816,36352 --defaults`. To A/B a
device-header change, time `--launched` against two builds (QCT_BUILD_DIR).
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from pathlib import Path
from collections.abc import Sequence
from typing import Any

import qct
from qct import tuning
from qct.bench import suite, timing
from qct.knobs import default_schedule


def schedules(meta: dict[str, Any], fixed: dict[str, int] | None = None,
              defaults_only: bool = False) -> list[dict[str, int]]:
    """The legal schedules of a kernel: all, those with the `fixed` knob values (knobs the kernel
    does not have are ignored, so one --fix serves several kernels), or only the defaults."""
    knobs = meta["schedule"]["knobs"]
    if defaults_only:
        return [default_schedule(meta)]
    every = [dict(s) for s in suite.verify.schedules(meta)]
    names = {k["name"] for k in knobs}
    fixed = {n: v for n, v in (fixed or {}).items() if n in names}
    return [s for s in every if all(s[n] == v for n, v in fixed.items())]


def launched_schedule(meta: dict[str, Any], M: int, K: int, groups: int,
                      gpu_name: str | None) -> dict[str, int] | None:
    """--launched: the schedule a launch at [M, K] (and `groups`) without one takes on this GPU,
    as the runtime chooses it (qct.tuning.best_schedule: the tuning cache, specs/tuning/*.json,
    else the heuristic); None for a kernel without knobs."""
    return tuning.best_schedule(meta, M, K, gpu_name, groups)


def launch_schedules(meta: dict[str, Any],
                     fixed: dict[str, int] | None) -> list[dict[str, int] | None]:
    """--launches: the one schedule to launch (for a profiler): the default (None), or with --fix
    the first legal schedule that has those knob values."""
    if not fixed:
        return [None]
    matching = schedules(meta, fixed)
    if not matching:
        raise SystemExit(f"probe: no legal schedule of {meta['name']} has "
                         + ", ".join(f"{k}={v}" for k, v in fixed.items()))
    return matching[:1]


def parse_ms(text: str) -> list[int]:
    """--m: one token count or several, comma-separated."""
    try:
        ms = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"--m takes token counts like 32768 or 32768,36352; got {text!r}")
    if not ms or any(m <= 0 for m in ms):
        raise argparse.ArgumentTypeError(f"--m takes positive token counts; got {text!r}")
    return ms


def parse_fix(text: str) -> tuple[str, int]:
    """--fix NAME=VALUE: a knob value the swept schedules must have."""
    name, sep, value = text.partition("=")
    if not sep or not name.startswith("QCT_") or not value.lstrip("-").isdigit():
        raise argparse.ArgumentTypeError(f"--fix takes NAME=VALUE with a QCT_ knob, like "
                                         f"QCT_THREADS=256; got {text!r}")
    return name, int(value)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m qct.bench.probe", description=__doc__)
    parser.add_argument("kernels", nargs="*", help="generated kernel names (default: all dense)")
    parser.add_argument("--generated", type=Path, default=Path("generated"))
    parser.add_argument("--m", type=parse_ms, default=[suite.HEADLINE[0]],
                        help="token count(s), comma-separated (default 32768)")
    parser.add_argument("--k", type=int, default=suite.HEADLINE[1])
    parser.add_argument("--groups", type=int, default=32, help="groups for ragged kernels")
    parser.add_argument("--launches", type=int, default=0,
                        help="only launch each kernel this many times (its default schedule, or "
                             "with --fix the first legal schedule that has those knob values)")
    parser.add_argument("--fix", type=parse_fix, action="append", default=[], metavar="NAME=VALUE",
                        help="sweep only schedules with this knob value (repeatable)")
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--defaults", action="store_true",
                       help="time only each kernel's default schedule (the metadata's)")
    which.add_argument("--launched", action="store_true",
                       help="time only the schedule a launch without one takes at each shape on "
                            "this GPU: the tuned one (tuning cache, then specs/tuning), else the "
                            "heuristic's")
    parser.add_argument("--json", type=Path, help="also write the timings here")
    opts = parser.parse_args(argv)
    fixed = dict(opts.fix)
    if opts.launched and (fixed or opts.launches):
        parser.error("--launched times the one schedule a launch takes; it does not combine with "
                     "--fix or --launches")
    import torch

    metas = suite.load_metas(opts.generated)
    gpu_name = tuning.current_gpu_name() if opts.launched else None  # what the runtime keys on
    names = opts.kernels or sorted(n for n, m in metas.items() if not m["spec"].get("ragged"))
    spin = timing.SpinCalibration(torch)
    copy_gbps = None if opts.launches else timing.copy_bandwidth(torch, spin)[0]
    l2 = timing.l2_bytes(torch)
    bank = suite.SourceBank(torch, max(opts.m), realistic=True)
    K = opts.k
    rows = []
    for name, M in itertools.product(names, opts.m):
        meta = metas[name]
        groups = opts.groups if meta["spec"].get("ragged") else 0
        _, offsets, fb = suite.shape_inputs(torch, meta, M, K, groups)
        nbytes = fb.total
        cu = opts.generated / meta["cuda_source"]
        chosen: Sequence[dict[str, int] | None]
        if opts.launches:
            chosen = launch_schedules(meta, fixed)
        elif opts.launched:
            chosen = [launched_schedule(meta, M, K, groups, gpu_name)]
        else:
            chosen = schedules(meta, fixed, opts.defaults)
        for sched in chosen:
            kernel = qct.load(cu, schedule=sched)
            count = 1 if opts.launches else timing.rotation_sets(nbytes, l2)
            sets = suite.buffer_sets(torch, bank, meta, kernel, M, K, count, offsets)
            if opts.launches:
                for _ in range(opts.launches):
                    kernel(**sets[0])
                torch.cuda.synchronize()
                print(f"{name}: {opts.launches} launches", flush=True)
                continue
            t = timing.time_launches(torch, spin, lambda i: kernel(**sets[i % len(sets)]), 200)
            gbps = nbytes / t.median_us / 1e3
            pct = f" {100 * gbps / copy_gbps:5.1f}% copy" if copy_gbps else ""
            shape = f" M={M}" if len(opts.m) > 1 else ""
            print(f"{name:<34}{shape} {json.dumps(kernel.schedule):<44} {t.median_us:9.1f} us "
                  f"{gbps:7.0f} GB/s{pct}", flush=True)
            rows.append({"kernel": name, "schedule": kernel.schedule, "M": M, "K": K,
                         "groups": groups, "median_us": t.median_us, "gbps": gbps})
            del sets
    if opts.json:
        opts.json.write_text(json.dumps({"copy_gbps": copy_gbps, "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
