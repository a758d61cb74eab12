"""The `qct` command line: one subcommand per module in qct.commands.

Each module exposes `register(subparsers)`, which adds its parser and sets
`func(args) -> int` on it. Errors are one line on stderr and a non-zero exit; output into a
closed pipe (`qct cache list | head`) ends the command quietly with exit code 141 (128 + SIGPIPE,
what a shell reports for a tool SIGPIPE ended).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from qct.errors import QctError

# Order is the order of `qct --help`.
EXIT_BROKEN_PIPE = 141

COMMAND_MODULES = ("compile", "emit", "check", "run", "verify", "bench", "tune", "cache", "env")

__all__ = ["QctError", "build_parser", "main"]  # QctError lives in qct.errors; kept here for callers


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="qct",
        description="qct: compile declarative quantize-convert-transpose specs into CUDA kernels, "
        "then run, verify, benchmark and tune them.",
    )
    from qct.version import __version__

    parser.add_argument("--version", action="version", version=f"qct {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(f"qct.commands.{name}")
        except ModuleNotFoundError as e:
            if e.name == f"qct.commands.{name}":
                continue  # not built into this version
            raise
        module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    try:
        return _main(argv)
    except BrokenPipeError:
        # The reader went away (`qct cache list | head`): stop quietly, as a tool killed by
        # SIGPIPE would. stdout goes to /dev/null so the interpreter's final flush of what is
        # still buffered does not raise again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_BROKEN_PIPE


def _main(argv: list[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        code = int(args.func(args) or 0)
        sys.stdout.flush()  # inside the try: a closed pipe is seen here, not at exit
        return code
    except QctError as e:
        print(f"qct {args.command}: error: {e}", file=sys.stderr)
        return e.exit_code
    except KeyboardInterrupt:
        print(f"qct {args.command}: interrupted", file=sys.stderr)
        return 130

if __name__ == "__main__":
    sys.exit(main())
