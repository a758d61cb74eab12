"""`qct compile SPEC... -o DIR`: ahead-of-time compilation to CUDA source + metadata (+ cubin)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from qct.cli import QctError
from qct.compiler import path_arg, run_compiler


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("compile", help="compile specs to CUDA C++ and metadata JSON (ahead of time)",
                       description="Compile each SPEC to DIR/<name>.cu and DIR/<name>.json; with "
                       "--cubin also compile each kernel with NVRTC (runtime library) to DIR/<name>.cubin.")
    p.add_argument("specs", nargs="+", metavar="SPEC", type=Path, help="spec files (JSON with comments)")
    p.add_argument("-o", "--output", required=True, type=Path, metavar="DIR", help="output folder")
    p.add_argument("--cubin", action="store_true", help="also write an NVRTC-compiled cubin per kernel")
    p.add_argument("--arch", default="sm_90a", help="GPU arch for --cubin (default sm_90a)")
    p.set_defaults(func=run)


# A file name holds 255 bytes; the compiler writes <name>.json through a temporary file named
# after it, so longer names fail halfway (the .cu written, its .json not). docs/spec-language.md.
MAX_NAME = 200


def run(args: argparse.Namespace) -> int:
    for spec in args.specs:
        if not spec.is_file():
            raise QctError(f"SPEC {spec}: no such file")
    names = {}
    for spec in args.specs:  # every spec's diagnostics, then stop: nothing is written yet
        names[spec] = _name_of(spec)
    if None in names.values():
        return 1
    for spec, name in names.items():
        if len(name) > MAX_NAME:
            raise QctError(f"SPEC {spec}: name '{name[:16]}...' is {len(name)} characters; names "
                           f"are limited to {MAX_NAME} (they become the file names <name>.cu and "
                           "<name>.json); shorten it")
    _make_output_dir(args.output)
    result = run_compiler(["-o", path_arg(args.output), "--", *map(path_arg, args.specs)])
    if result.returncode != 0:
        return result.returncode
    if args.cubin:
        from qct.runtime import compile_to_cubin  # needs only NVRTC, no GPU

        for spec in args.specs:
            source = args.output / f"{names[spec]}.cu"
            cubin = compile_to_cubin(source, arch=args.arch)
            out = source.with_suffix(".cubin")
            out.write_bytes(cubin)
            print(f"wrote {out}", file=sys.stderr)
    return 0


def _make_output_dir(out: Path) -> None:
    """-o DIR, created if needed; a one-line error where it is a file or cannot be made."""
    if out.exists() and not out.is_dir():
        raise QctError(f"-o {out}: is a file, not a folder; give a folder for the .cu/.json files")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise QctError(f"-o {out}: cannot create the output folder: {e.strerror or e}") from None


def _name_of(spec: Path) -> str | None:
    """The spec's name from the compiler's normalized spec; None where the spec is invalid (the
    compiler has printed why)."""
    result = run_compiler(["--stage=spec", "--", path_arg(spec)], capture=True)
    if result.returncode != 0:
        return None
    return str(json.loads(result.stdout)["name"])
