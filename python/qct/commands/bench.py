"""`qct bench`: qct's generated kernels timed against the copy bandwidth, the PyTorch peers and
qct's own unfused chain, in one process (docs/performance.md)."""

from __future__ import annotations

import argparse
import signal
from pathlib import Path

from qct.cli import QctError
from qct import layout


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "bench", help="benchmark the generated kernels on the GPU (JSON, table, plot)",
        description="Measure the copy bandwidth, then every generated kernel at M in "
        "{2048, 32768, 131072} x K in {2048, 7168} (ragged kernels at 32 and 256 groups), qct's "
        "unfused chain vs the fused kernel, and PyTorch eager / torch.compile implementations of "
        "the same contract at M=32768, K=7168 (checked bitwise against qct). Writes bench.json, "
        "bench.md and bench.png to --out. Needs torch with CUDA and the runtime library; no "
        "compiler.")
    # The record lives in the checkout's docs/perf; an installed qct writes where it runs.
    out = layout.CHECKOUT / "docs" / "perf" if layout.CHECKOUT is not None else Path("qct-bench")
    p.add_argument("--out", type=Path, default=out, metavar="DIR",
                   help="output folder (default docs/perf/ in a checkout, else ./qct-bench)")
    p.add_argument("--generated", type=Path, default=layout.generated_dir(), metavar="DIR",
                   help="folder of generated kernels (metadata .json + .cu; default generated/, "
                   "installed: the package's copy)")
    p.add_argument("--quick", action="store_true", help="one shape per kernel (M=32768, K=7168)")
    p.add_argument("--only", action="append", default=[], metavar="NAME",
                   help="benchmark only this kernel (repeatable, or comma-separated); a ragged "
                   "kernel brings its dense twin, the fused mxfp4->fp8 row kernel the chain")
    p.add_argument("--sass", action="store_true",
                   help="count 16-byte global loads/stores in each kernel's SASS (needs cuobjdump)")
    p.add_argument("--no-peers", action="store_true", help="skip the PyTorch peers")
    p.add_argument("--no-compile", action="store_true",
                   help="skip the torch.compile peers (eager peers only)")
    p.add_argument("--commit", default="", metavar="SHA",
                   help="the commit to record (default: git rev-parse HEAD, where .git exists)")
    p.add_argument("--inputs", choices=("realistic", "adversarial"), default="realistic",
                   help="timing data: activation-like (default: narrow MX scale bands, no NaN/Inf) "
                   "or the GPU tier's adversarial data (edge-case scale bytes in ~10%% of blocks, "
                   "which sends most warps down the slow exact paths)")
    p.add_argument("--budget", type=float, default=280.0, metavar="SECONDS",
                   help="stop starting new measurements after this long (default 280)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from qct.bench import suite

    only = tuple(n for item in args.only for n in item.split(",") if n)
    if not args.generated.is_dir():
        raise QctError(f"{args.generated}: no such folder of generated kernels")
    opts = suite.Options(generated=args.generated, out_dir=args.out, quick=args.quick, only=only,
                         with_sass=args.sass, peers=not args.no_peers,
                         compiled_peers=not args.no_compile, commit=args.commit,
                         budget_s=args.budget, realistic_inputs=args.inputs == "realistic")
    # `timeout` (tools/gpu-session) stops a step with SIGTERM: turn it into KeyboardInterrupt so
    # the run writes what it measured before it exits.
    def interrupted(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, interrupted)
    try:
        suite.run(opts)
    except ValueError as e:
        raise QctError(str(e)) from e
    return 0
