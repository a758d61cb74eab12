"""`qct verify [KERNEL...]`: the GPU tier over generated kernels, every legal schedule."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from qct.layout import generated_dir


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("verify", help="verify generated kernels bitwise on the GPU (every schedule)",
                       description="For each generated kernel (metadata .json; default: every one "
                       "under generated/, coverage/ included) run the GPU tier's cases — every legal "
                       "schedule, M=1, M not a multiple of 128, ragged groups that are empty or one "
                       "row — and compare with the CPU reference.")
    p.add_argument("kernels", nargs="*", type=Path, metavar="KERNEL")
    p.add_argument("--quick", action="store_true", help="one case per kernel")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from qct import runtime, verify
    from qct.gpu import require_gpu

    require_gpu()
    paths = args.kernels or sorted(generated_dir().glob("**/*.json"))
    passed = failed = 0
    for path in paths:
        meta = verify.load_metadata(path)
        kernels: dict[tuple, object] = {}
        for case in verify.standard_cases(meta, quick=args.quick):
            t0 = time.perf_counter()
            if case.schedule not in kernels:
                kernels[case.schedule] = runtime.load(path, schedule=dict(case.schedule))
            result = verify.run_case(kernels[case.schedule], meta, case)
            status = "ok  " if result.ok else "FAIL"
            print(f"{status} {meta['name']}: {case.describe()} ({time.perf_counter() - t0:.1f} s)",
                  flush=True)
            for line in result.problems:
                print(f"     {line}", flush=True)
            passed += result.ok
            failed += not result.ok
    print(f"{passed} passed, {failed} failed")
    sys.stdout.flush()
    return 0 if failed == 0 else 1
