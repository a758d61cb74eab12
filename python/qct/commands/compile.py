"""`qct compile SPEC... -o DIR`: ahead-of-time compilation to CUDA source + metadata (+ cubin)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from qct.cli import QctError
from qct.compiler import run_compiler


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("compile", help="compile specs to CUDA C++ and metadata JSON (ahead of time)",
                       description="Compile each SPEC to DIR/<name>.cu and DIR/<name>.json; with "
                       "--cubin also compile each kernel with NVRTC (runtime library) to DIR/<name>.cubin.")
    p.add_argument("specs", nargs="+", metavar="SPEC", type=Path, help="spec files (JSON with comments)")
    p.add_argument("-o", "--output", required=True, type=Path, metavar="DIR", help="output folder")
    p.add_argument("--cubin", action="store_true", help="also write an NVRTC-compiled cubin per kernel")
    p.add_argument("--arch", default="sm_90a", help="GPU arch for --cubin (default sm_90a)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    for spec in args.specs:
        if not spec.is_file():
            raise QctError(f"SPEC {spec}: no such file")
    args.output.mkdir(parents=True, exist_ok=True)
    result = run_compiler([*map(str, args.specs), "-o", str(args.output)])
    if result.returncode != 0:
        return result.returncode
    if args.cubin:
        from qct.runtime import compile_to_cubin  # needs only NVRTC, no GPU

        for spec in args.specs:
            metadata = _metadata_for(spec, args.output)
            cubin = compile_to_cubin(metadata.with_suffix(".cu"), arch=args.arch)
            out = metadata.with_suffix(".cubin")
            out.write_bytes(cubin)
            print(f"wrote {out}", file=sys.stderr)
    return 0


def _metadata_for(spec: Path, out_dir: Path) -> Path:
    """DIR/<name>.json for SPEC, the name taken from the compiler's normalized spec."""
    import json

    result = run_compiler(["--stage=spec", str(spec)], capture=True)
    if result.returncode != 0:
        raise QctError(f"SPEC {spec}: could not read its normalized form")
    return out_dir / f"{json.loads(result.stdout)['name']}.json"
