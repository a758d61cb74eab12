"""`python -m qct.bench.probe`: a developer's probe of generated kernels on the GPU.

Times every legal schedule of the chosen kernels at one shape on activation-like inputs (rotated
buffers, CUDA events, median) and prints one line per schedule with % of copy bandwidth; or, with
--launches N, only launches each kernel N times (for a profiler such as ncu to attach to). It does
not verify: the GPU tier and `qct tune` do that. Use it to see which schedule a change helps before
committing to it; `qct bench` is the benchmark of record.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from pathlib import Path
from typing import Any

import qct
from qct.bench import floor, suite, timing


def schedules(meta: dict[str, Any]) -> list[dict[str, int]]:
    knobs = meta["schedule"]["knobs"]
    names = [k["name"] for k in knobs]
    return [dict(zip(names, values)) for values in itertools.product(*(k["values"] for k in knobs))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m qct.bench.probe", description=__doc__)
    parser.add_argument("kernels", nargs="*", help="generated kernel names (default: all dense)")
    parser.add_argument("--generated", type=Path, default=Path("generated"))
    parser.add_argument("--m", type=int, default=suite.HEADLINE[0])
    parser.add_argument("--k", type=int, default=suite.HEADLINE[1])
    parser.add_argument("--groups", type=int, default=32, help="groups for ragged kernels")
    parser.add_argument("--launches", type=int, default=0,
                        help="only launch each kernel (default schedule) this many times")
    parser.add_argument("--json", type=Path, help="also write the timings here")
    opts = parser.parse_args(argv)
    import torch

    metas = suite.load_metas(opts.generated)
    names = opts.kernels or sorted(n for n, m in metas.items() if not m["spec"].get("ragged"))
    spin = timing.SpinCalibration(torch)
    copy_gbps = None if opts.launches else timing.copy_bandwidth(torch, spin)[0]
    l2 = timing.l2_bytes(torch)
    bank = suite.SourceBank(torch, opts.m, realistic=True)
    M, K = opts.m, opts.k
    rows = []
    for name in names:
        meta = metas[name]
        groups = opts.groups if meta["spec"].get("ragged") else 0
        offsets_np = suite.verify.make_offsets(meta, M, groups, suite.SEED) if groups else None
        offsets = None if offsets_np is None else torch.from_numpy(offsets_np).to("cuda")
        nbytes = floor.floor_bytes(meta["spec"], M, K,
                                   None if offsets_np is None else offsets_np.tolist()).total
        cu = opts.generated / meta["cuda_source"]
        for sched in ([None] if opts.launches else schedules(meta)):
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
            print(f"{name:<34} {json.dumps(kernel.schedule):<44} {t.median_us:9.1f} us "
                  f"{gbps:7.0f} GB/s{pct}", flush=True)
            rows.append({"kernel": name, "schedule": kernel.schedule, "M": M, "K": K,
                         "groups": groups, "median_us": t.median_us, "gbps": gbps})
            del sets
    if opts.json:
        opts.json.write_text(json.dumps({"copy_gbps": copy_gbps, "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
