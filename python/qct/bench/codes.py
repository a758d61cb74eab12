"""`python -m qct.bench.codes`: which schedules of which kernels build different machine code.

Compiles every legal schedule of the chosen generated kernels with NVRTC (no GPU; the runtime's
embedded device headers, so build the runtime at the tree you mean first: the tool refuses a
runtime whose embedded headers are not the ones under --headers, this tree's by default) and
records the `tuning.code_hash` of each cubin in a JSON file. With `--against FILE` (a file written
the same way from another tree) it lists the schedules whose code differs. NVRTC output is
deterministic for a source, its options, arch and NVRTC version, so a schedule whose cubin is
byte-identical to one the GPU tier verified runs verified code: that is how a device-library edit
shows which kernels it touched before any device time is spent (docs/performance.md, "Method").
Examples: `python -m qct.bench.codes mxfp4_to_fp8_e4m3_col_ragged --out /tmp/new.json --against
/tmp/old.json`; `python -m qct.bench.codes --all --against docs/perf/verified-codes.json` (every
kernel under generated/, coverage kernels included, as the GPU tier runs them). Exit status 1 when
--against finds a difference, 0 when none, 2 on bad input.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

from qct import layout, runtime, tuning, verify


def device_headers_hash(include_dir: Path) -> str:
    """The device-library hash (runtime.device_headers_hash) of the headers under include_dir as
    they are now: qct/kernel_args.h and every qct/device/*.cuh, each as name, NUL, size, NUL,
    text, in name order (runtime/lib/DeviceHeaders.cpp)."""
    names = ["qct/kernel_args.h"] + [p.relative_to(include_dir).as_posix()
                                     for p in (include_dir / "qct" / "device").rglob("*.cuh")]
    digest = hashlib.sha256()
    for name in sorted(names):
        text = (include_dir / name).read_bytes()
        digest.update(name.encode() + b"\0" + str(len(text)).encode() + b"\0" + text)
    return digest.hexdigest()


def stale_runtime(include_dir: Path) -> str | None:
    """Why the runtime's codes would not be those of the headers under include_dir (it was built
    from other ones), or None. A tree without them (an installed qct) is not checked."""
    if not (include_dir / "qct" / "kernel_args.h").is_file():
        return None
    tree, built = device_headers_hash(include_dir), runtime.device_headers_hash()
    if tree == built:
        return None
    return (f"the runtime library embeds device library {built[:12]}, but {include_dir} holds "
            f"{tree[:12]}: rebuild the runtime (tools/build) so that the codes are of these "
            "headers, or pass --headers with the include folder it was built from")


def generated_kernels(generated: Path) -> dict[str, Path]:
    """Kernel name -> its metadata file, for every kernel under `generated` (subfolders such as
    generated/coverage/ included)."""
    return {p.stem: p for p in sorted(generated.glob("**/*.json"))}


def schedule_codes(kernels: dict[str, Path], arch: str) -> dict[str, str]:
    """'<kernel> <schedule label>' -> code hash, for every legal schedule of each kernel (name ->
    metadata file, the CUDA source beside it)."""
    codes: dict[str, str] = {}
    for name, meta_path in kernels.items():
        meta = verify.load_metadata(meta_path)
        for schedule in verify.schedules(meta):
            cubin = runtime.compile_to_cubin(meta_path.with_suffix(".cu"), arch=arch,
                                             schedule=dict(schedule))
            codes[f"{name} {tuning.schedule_label(schedule)}"] = tuning.code_hash(cubin)
    return codes


def differences(new: dict[str, str], old: dict[str, str]) -> list[str]:
    """The schedules of `new` whose code is not the one `old` recorded (or that `old` lacks)."""
    return sorted(key for key, code in new.items() if old.get(key) != code)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m qct.bench.codes", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("kernels", nargs="*", help="generated kernel names")
    parser.add_argument("--all", action="store_true", help="every kernel under --generated")
    parser.add_argument("--generated", type=Path, default=Path("generated"))
    parser.add_argument("--arch", default="sm_90a")
    parser.add_argument("--out", type=Path, help="write the codes here (JSON)")
    parser.add_argument("--against", type=Path, help="codes written from another tree")
    parser.add_argument("--headers", type=Path, default=layout.include_dir(),
                        help="the include folder whose device headers the runtime must embed "
                             "(default: this tree's runtime/include; installed, the package's "
                             "include/)")
    args = parser.parse_args(argv)
    available = generated_kernels(args.generated)
    if args.all == bool(args.kernels):
        print("qct.bench.codes: name kernels or pass --all (not both)", file=sys.stderr)
        return 2
    unknown = [name for name in args.kernels if name not in available]
    if unknown:
        print(f"qct.bench.codes: no kernel {', '.join(repr(n) for n in unknown)} under "
              f"{args.generated} (a <name>.json there or in a subfolder)", file=sys.stderr)
        return 2
    kernels = available if args.all else {name: available[name] for name in args.kernels}
    why = stale_runtime(args.headers)
    if why:
        print(f"qct.bench.codes: {why}", file=sys.stderr)
        return 2
    old: dict[str, str] = {}
    if args.against:
        try:
            old = json.loads(args.against.read_text())
        except (OSError, ValueError) as e:
            print(f"qct.bench.codes: --against {args.against}: {e}", file=sys.stderr)
            return 2
    codes = schedule_codes(kernels, args.arch)
    if args.out:
        args.out.write_text(json.dumps(codes, indent=0, sort_keys=True) + "\n")
    print(f"{len(codes)} schedules of {len(kernels)} kernel(s) compiled for {args.arch}")
    if not args.against:
        return 0
    changed = differences(codes, old)
    for key in changed:
        print(f"  different code: {key}")
    print(f"{len(codes) - len(changed)} the same as {args.against}, {len(changed)} different")
    return 1 if changed else 0


if __name__ == "__main__":
    sys.exit(main())
