"""`qct emit --stage=STAGE SPEC`: print one stage of the compiler's flow."""

from __future__ import annotations

import argparse
from pathlib import Path

from qct.cli import QctError
from qct.compiler import path_arg, run_compiler

STAGES = ("spec", "qct", "lowered", "cuda")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("emit", help="print one stage: the normalized spec, qct IR, lowered IR or CUDA",
                       description="Print SPEC at one stage of the flow: spec (normalized JSON), qct "
                       "(MLIR after import), lowered (MLIR after the pass pipeline), cuda (emitted source).")
    p.add_argument("--stage", choices=STAGES, default="cuda", help="which stage (default: cuda)")
    p.add_argument("spec", type=Path, metavar="SPEC")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if not args.spec.is_file():
        raise QctError(f"SPEC {args.spec}: no such file")
    return run_compiler([f"--stage={args.stage}", "--", path_arg(args.spec)]).returncode
