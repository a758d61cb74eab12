"""`qct check SPEC...`: validate specs only (diagnostics with file, JSON path and position)."""

from __future__ import annotations

import argparse
from pathlib import Path

from qct.cli import QctError
from qct.compiler import path_arg, run_compiler


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("check", help="validate specs without compiling them",
                       description="Validate each SPEC; print every error with its file, JSON path and "
                       "line:column. Exit 0 when all are valid, 1 otherwise.")
    p.add_argument("specs", nargs="+", metavar="SPEC", type=Path)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    for spec in args.specs:
        if not spec.is_file():
            raise QctError(f"SPEC {spec}: no such file")
    return run_compiler(["--check", "--", *map(path_arg, args.specs)]).returncode
