"""`qct run SPEC --m M --k K [--groups G]`: one kernel on the GPU, verified and timed."""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path

from qct.cli import QctError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("run", help="run one kernel on the GPU on adversarial input, verify bitwise, time it",
                       description="Compile (or load) SPEC, run it on adversarial random input of shape "
                       "[M, K] on the GPU, compare every output byte with the CPU reference, and print "
                       "bytes moved, time, GB/s and the match. Exit 0 on a match, 1 otherwise.")
    p.add_argument("spec", type=Path, metavar="SPEC",
                   help="a spec (.json with comments) or a generated kernel (.cu or metadata .json)")
    p.add_argument("--m", type=int, required=True, metavar="M", help="rows (tokens)")
    p.add_argument("--k", type=int, required=True, metavar="K", help="columns (features)")
    p.add_argument("--groups", type=int, default=0, metavar="G", help="ragged groups (ragged specs)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--schedule", action="append", default=[], metavar="NAME=VALUE",
                   help="bind a schedule knob (repeatable); default: the tuned schedule for this shape, "
                   "else the heuristic (docs/performance.md)")
    p.add_argument("--iters", type=int, default=50, help="timed launches (default 50)")
    p.set_defaults(func=run)


def parse_schedule(items: list[str]) -> dict[str, int]:
    out = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not value.lstrip("-").isdigit():
            raise QctError(f"--schedule {item!r}: expected NAME=INTEGER, e.g. QCT_THREADS=256")
        out[name] = int(value)
    return out


def run(args: argparse.Namespace) -> int:
    from qct import runtime, verify
    from qct.gpu import require_gpu, time_launches

    # Before the GPU checks: a typo in SPEC should not be reported as a missing torch or GPU.
    if not args.spec.is_file() and runtime._bundled(str(args.spec)) is None:
        raise QctError(f"SPEC {args.spec}: no such file (nor a bundled kernel of that name)")
    if args.m < 0 or args.k <= 0:
        raise QctError(f"--m must be >= 0 and --k > 0, found M={args.m}, K={args.k}")
    require_gpu()
    # No --schedule: the tuned schedule for this shape on this GPU, else the heuristic.
    kernel = runtime.load(args.spec, schedule=parse_schedule(args.schedule) or None,
                          shape=(args.m, args.k, args.groups))
    meta = kernel.metadata
    if verify.is_ragged(meta) and args.groups <= 0:
        args.groups = 8
    case = verify.Case(args.m, args.k, args.groups, args.seed, tuple(sorted(kernel.schedule.items())))
    # Timed on the verified launch's own tensors.
    result = verify.run_case(kernel, meta, case, keep_tensors=True)
    tensors = result.tensors
    times = time_launches(lambda i: kernel(**tensors), args.iters)
    med = statistics.median(times)
    gbps = result.bytes_moved / (med * 1e-6) / 1e9 if med > 0 else 0.0
    print(f"kernel   {kernel.name}  ({kernel.origin}, {kernel.arch}, schedule {kernel.schedule})")
    print(f"shape    M={args.m} K={args.k}" + (f" G={args.groups}" if verify.is_ragged(meta) else ""))
    print(f"bytes    {result.bytes_moved / 1e6:.2f} MB (inputs read + output buffers written)")
    print(f"time     {med:.2f} us median of {args.iters} (min {min(times):.2f})")
    print(f"speed    {gbps:.1f} GB/s")
    print(f"match    {'bitwise equal to the reference' if result.ok else 'MISMATCH'}")
    for line in result.problems:
        print(f"         {line}")
    return 0 if result.ok else 1
