"""`python -m qct.bench.ceiling`: how fast a plain byte transpose runs on this GPU, as a ceiling for
qct's col kernels.

The col kernels read token rows and write feature rows (128-byte runs of 128 tokens, one per output
row, M bytes apart). Whether that write pattern itself costs bandwidth, or qct's per-tile chain
does, is settled by timing the data movement alone, without scales or numerics, in Triton kernels
swept over their block shapes:

- `nibble_row`: packed nibbles [M, K/2] -> one byte per nibble [M, K] (the row kernel's bytes);
- `nibble_col`: the same bytes written transposed, [K, M] (the mxfp4 -> fp8 col kernel's bytes);
- `byte_col`: bytes [M, K] -> [K, M];
- `nibble_col_ragged G`: nibble_col over the bench's G ragged groups (the same offsets, from the
  same seed), each group padded to 128 columns with zeros: the ragged col kernel's bytes, from a
  tile list computed on the host (no group lookup on the GPU). Its GB/s against nibble_col's is
  how far the ragged data movement alone stays from the dense one (the target compares the two
  kernels' GB/s).

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
from typing import Any, Callable

import numpy as np

from qct import verify
from qct.bench import floor, suite, timing

# Block shapes swept for every kernel: tokens per tile, source bytes per token row, warps. (256
# source bytes at 16 warps joined in session 15: nibble_col's best, 64 x 256 at 16 warps, is 1%
# faster than the best of the narrower shapes.) Only those that tile the kernel's shape run.
SHAPES = list(itertools.product((64, 128, 256), (32, 64, 128, 256), (4, 8, 16)))

# Groups are padded to this many columns, as in the bundled ragged specs.
PAD = 128
# What verify.make_offsets reads of a ragged kernel's metadata (the bundled specs' int32 offsets).
RAGGED_META = {"spec": {"ragged": {"offsets_dtype": "int32", "pad_groups_to": PAD}}}


def tiling(shapes: list[tuple[int, int, int]], rows: int, cols: int) -> list[tuple[int, int, int]]:
    """The block shapes whose tiles cover a [rows, cols] source exactly (the kernels have no
    masks: a shape that does not divide it would leave bytes unmoved)."""
    return [s for s in shapes if rows % s[0] == 0 and cols % s[1] == 0]


def ragged_tiles(offsets: np.ndarray, bm: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """The tile list of nibble_col_tiles for groups at `offsets` padded to PAD columns, in tiles of
    `bm` columns (bm divides PAD): each tile's first token, its tokens (0..bm) and its index (its
    first column / bm); and the padded columns in all."""
    token, tokens, index = [], [], []
    col = 0
    for g in range(len(offsets) - 1):
        o, n = int(offsets[g]), int(offsets[g + 1] - offsets[g])
        padded = floor.rup(n, PAD)
        for s in range(0, padded, bm):
            token.append(o + s)
            tokens.append(min(max(n - s, 0), bm))
            index.append((col + s) // bm)
        col += padded
    return (np.asarray(token, dtype=np.int32), np.asarray(tokens, dtype=np.int32),
            np.asarray(index, dtype=np.int32), col)


def parse_groups(text: str) -> list[int]:
    """--groups: group counts, comma-separated; empty for none."""
    try:
        groups = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"--groups takes group counts like 32,256; got {text!r}")
    if any(g < 1 for g in groups):
        raise argparse.ArgumentTypeError(f"--groups takes positive group counts; got {text!r}")
    return groups


def sweep(torch: Any, spin: timing.SpinCalibration, name: str, nbytes: int, copy_gbps: float,
          launcher: Callable[[int, int, int], Callable[[int], None]],
          shapes: list[tuple[int, int, int]] = SHAPES) -> tuple[float, str] | None:
    """Times `launcher(bm, bk, warps)` at every block shape, prints each, and returns the best
    (µs, label), or None if none ran."""
    best: tuple[float, str] | None = None
    for bm, bk, warps in shapes:
        label = f"BM={bm} BK={bk} warps={warps}"
        try:
            t = timing.time_launches(torch, spin, launcher(bm, bk, warps), iters=30)
        except Exception as e:  # a block shape Triton cannot lower: skip it, say so
            print(f"  {name} {label}: skipped ({type(e).__name__})")
            continue
        gb = timing.gbps(nbytes, t.median_us)
        print(f"  {name:<11} {label:<26} {t.median_us:8.1f} us {gb:6.0f} GB/s "
              f"{100 * gb / copy_gbps:5.1f}% copy", flush=True)
        if best is None or t.median_us < best[0]:
            best = (t.median_us, label)
    if best is None:
        print(f"{name}: no block shape ran")
    else:
        gb = timing.gbps(nbytes, best[0])
        print(f"{name:<11} best {best[1]:<21} {best[0]:8.1f} us {gb:6.0f} GB/s "
              f"{100 * gb / copy_gbps:5.1f}% copy", flush=True)
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m qct.bench.ceiling", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--m", type=int, default=32768, help="tokens (default 32768)")
    parser.add_argument("--k", type=int, default=7168, help="features (default 7168)")
    parser.add_argument("--groups", type=parse_groups, default=[32, 256],
                        help="ragged group counts for nibble_col_ragged, comma-separated "
                             "(default 32,256; '' for none)")
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

    l2 = timing.l2_bytes(torch)
    dense_gbps = None
    for name, kern in ceiling_kernels.KERNELS.items():
        nibbles = name.startswith("nibble")
        in_shape = (M, K // 2) if nibbles else (M, K)
        out_shape = (M, K) if name == "nibble_row" else (K, M)
        nbytes = in_shape[0] * in_shape[1] + out_shape[0] * out_shape[1]
        sets = timing.rotation_sets(nbytes, l2)
        srcs = [torch.randint(0, 256, in_shape, dtype=torch.uint8, device="cuda")
                for _ in range(sets)]
        dsts = [torch.empty(out_shape, dtype=torch.uint8, device="cuda") for _ in range(sets)]

        def launcher(bm: int, bk: int, warps: int, kern: Any = kern, nibbles: bool = nibbles,
                     in_shape: tuple[int, int] = in_shape) -> Callable[[int], None]:
            grid = (M // bm, in_shape[1] // bk)
            blocks = {"BM": bm, ("BK2" if nibbles else "BK"): bk}
            return lambda i: kern[grid](srcs[i % sets], dsts[i % sets], M, in_shape[1],
                                        **blocks, num_warps=warps)

        best = sweep(torch, spin, name, nbytes, copy_gbps, launcher,
                     tiling(SHAPES, M, in_shape[1]))
        if name == "nibble_col" and best is not None:
            dense_gbps = timing.gbps(nbytes, best[0])
        del srcs, dsts
        torch.cuda.empty_cache()

    for groups in args.groups:
        # The bench's offsets for this shape (suite.shape_inputs), from the same seed.
        offsets = verify.make_offsets(RAGGED_META, M, groups, suite.SEED)
        name = f"nibble_col_ragged {groups}"
        columns = ragged_tiles(offsets, PAD)[3]
        nbytes = M * (K // 2) + K * columns
        sets = timing.rotation_sets(nbytes, l2)
        srcs = [torch.randint(0, 256, (M, K // 2), dtype=torch.uint8, device="cuda")
                for _ in range(sets)]
        dsts = [torch.empty((K, columns), dtype=torch.uint8, device="cuda") for _ in range(sets)]
        print(f"{name}: {columns} padded columns ({columns / M:.3f} M), "
              f"{K * columns / nbytes:.0%} of the bytes written")

        def ragged_launcher(bm: int, bk: int, warps: int) -> Callable[[int], None]:
            tiles = [torch.from_numpy(a).cuda() for a in ragged_tiles(offsets, bm)[:3]]
            grid = (len(tiles[0]), (K // 2) // bk)
            return lambda i: ceiling_kernels.nibble_col_tiles[grid](
                srcs[i % sets], dsts[i % sets], *tiles, columns, K // 2, BM=bm, BK2=bk,
                num_warps=warps)

        # A tile must not straddle two groups: BM divides the padding.
        best = sweep(torch, spin, name, nbytes, copy_gbps, ragged_launcher,
                     [s for s in tiling(SHAPES, M, K // 2) if PAD % s[0] == 0])
        if best is not None and dense_gbps:
            print(f"{name}: {timing.gbps(nbytes, best[0]) / dense_gbps:.3f}x nibble_col's GB/s")
        del srcs, dsts
        torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main())
