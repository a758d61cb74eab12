"""`python -m qct.bench.ceiling`: how fast a plain byte transpose runs on this GPU, as a ceiling for
qct's col kernels.

The col kernels read token rows and write feature rows (128-byte runs of 128 tokens, one per output
row, M bytes apart). Whether that write pattern itself costs bandwidth, or qct's per-tile chain
does, is settled by timing the data movement alone, without scales or numerics, in Triton kernels
swept over their block shapes:

- `nibble_row`: packed nibbles [M, K/2] -> one byte per nibble [M, K] (the row kernel's bytes);
- `nibble_col`: the same bytes written transposed, [K, M] (the mxfp4 -> fp8 col kernel's bytes);
- `byte_col`: bytes [M, K] -> [K, M].

It prints every block shape's µs, GB/s and % of the copy bandwidth of the same run (timing.py:
CUDA events, median, rotated inputs), then each kernel's best. BM is a tile's tokens, BK its
source bytes per token row (the nibble kernels' BK2: 2·BK features). The kernels are in
ceiling_kernels.py. GPU machine only; a developer's probe, not the benchmark of record;
docs/perf/ceiling-*.log keeps the runs.
"""

from __future__ import annotations

import argparse
import itertools
import sys

from qct.bench import timing


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m qct.bench.ceiling", description=__doc__)
    parser.add_argument("--m", type=int, default=32768, help="tokens (default 32768)")
    parser.add_argument("--k", type=int, default=7168, help="features (default 7168)")
    args = parser.parse_args(argv)
    if args.m <= 0 or args.k <= 0 or args.m % 256 or args.k % 256:
        print(f"ceiling: --m and --k must be positive multiples of 256; got {args.m}, {args.k}",
              file=sys.stderr)
        return 2
    try:
        import torch
        import triton  # noqa: F401  (ceiling_kernels needs it)
    except ImportError as e:
        print(f"ceiling: needs torch and triton ({e})", file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("ceiling: no CUDA GPU", file=sys.stderr)
        return 2
    M, K = args.m, args.k
    spin = timing.SpinCalibration(torch)
    copy_gbps, _ = timing.copy_bandwidth(torch, spin)
    print(f"copy {copy_gbps:.0f} GB/s; M={M} K={K}")
    from qct.bench import ceiling_kernels

    kernels = ceiling_kernels.KERNELS
    l2 = timing.l2_bytes(torch)
    for name, kern in kernels.items():
        nibbles = name.startswith("nibble")
        in_shape = (M, K // 2) if nibbles else (M, K)
        out_shape = (M, K) if name == "nibble_row" else (K, M)
        nbytes = in_shape[0] * in_shape[1] + out_shape[0] * out_shape[1]
        sets = timing.rotation_sets(nbytes, l2)
        srcs = [torch.randint(0, 256, in_shape, dtype=torch.uint8, device="cuda")
                for _ in range(sets)]
        dsts = [torch.empty(out_shape, dtype=torch.uint8, device="cuda") for _ in range(sets)]
        best: tuple[float, str] | None = None
        for bm, bk, warps in itertools.product((64, 128, 256), (32, 64, 128), (4, 8)):
            grid = (M // bm, in_shape[1] // bk)

            blocks = {"BM": bm, ("BK2" if nibbles else "BK"): bk}

            def launch(i: int, grid: tuple[int, int] = grid, blocks: dict = blocks,
                       warps: int = warps) -> None:
                kern[grid](srcs[i % sets], dsts[i % sets], M, in_shape[1], **blocks,
                           num_warps=warps)

            try:
                t = timing.time_launches(torch, spin, launch, iters=30)
            except Exception as e:  # a block shape Triton cannot lower: skip it, say so
                print(f"  {name} BM={bm} BK={bk} warps={warps}: skipped ({type(e).__name__})")
                continue
            label = f"BM={bm} BK={bk} warps={warps}"
            gb = timing.gbps(nbytes, t.median_us)
            print(f"  {name:<11} {label:<26} {t.median_us:8.1f} us {gb:6.0f} GB/s "
                  f"{100 * gb / copy_gbps:5.1f}% copy")
            if best is None or t.median_us < best[0]:
                best = (t.median_us, label)
        if best is None:
            print(f"{name}: no block shape ran")
        else:
            gb = timing.gbps(nbytes, best[0])
            print(f"{name:<11} best {best[1]:<21} {best[0]:8.1f} us {gb:6.0f} GB/s "
                  f"{100 * gb / copy_gbps:5.1f}% copy")
        del srcs, dsts
        torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main())
