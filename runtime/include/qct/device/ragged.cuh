//===- qct/device/ragged.cuh - Ragged groups along M, on the device
//--------===//
//
// The offsets never leave the device (docs/kernel-abi.md), so every CTA that
// needs them reads the G+1 offsets itself, validates them and scans the
// per-group sizes. That keeps the whole thing one launch with no host
// synchronization. The row family's one CTA that writes the padded offsets
// scans with a block-wide prefix sum (scan_groups); a tile-family CTA, whose
// loads wait for the scan, has every warp scan on its own (locate_tile: no
// block barrier, no shared memory) and keeps nothing but its own group.
//
//===----------------------------------------------------------------------===//
#ifndef QCT_DEVICE_RAGGED_CUH
#define QCT_DEVICE_RAGGED_CUH

#include "qct/device/quant.cuh"
#include "qct/kernel_args.h"

namespace qct {
namespace dev {

/// Prefix sums over groups, index 0..G: padded positions p (numerics.md 6),
/// tiles of 128 padded tokens (= owned 128-blocks), owned 32-blocks.
struct GroupSums {
  i64 p, t128, s32;
};

QCT_HD i64 cdiv64(i64 a, i64 b) { return (a + b - 1) / b; }

/// Block-wide exclusive prefix sums of v, and their total.
template <int THREADS>
QCT_DEV GroupSums block_exclusive_scan(GroupSums v, GroupSums &total) {
  static_assert(THREADS % 32 == 0 && THREADS <= 1024, "threads per block");
  constexpr int W = THREADS / 32;
  __shared__ GroupSums s_warp[W];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  GroupSums inc = v;
#pragma unroll
  for (int o = 1; o < 32; o <<= 1) {
    const i64 a = __shfl_up_sync(0xFFFFFFFFu, inc.p, o);
    const i64 b = __shfl_up_sync(0xFFFFFFFFu, inc.t128, o);
    const i64 c = __shfl_up_sync(0xFFFFFFFFu, inc.s32, o);
    if (lane >= o) {
      inc.p += a;
      inc.t128 += b;
      inc.s32 += c;
    }
  }
  if (lane == 31)
    s_warp[warp] = inc;
  __syncthreads();
  GroupSums before = {0, 0, 0};
  total = {0, 0, 0};
#pragma unroll
  for (int w = 0; w < W; ++w) {
    const GroupSums x = s_warp[w];
    if (w < warp) {
      before.p += x.p;
      before.t128 += x.t128;
      before.s32 += x.s32;
    }
    total.p += x.p;
    total.t128 += x.t128;
    total.s32 += x.s32;
  }
  __syncthreads(); // s_warp is reused by the next call
  return {before.p + inc.p - v.p, before.t128 + inc.t128 - v.t128,
          before.s32 + inc.s32 - v.s32};
}

/// Reads and validates the offsets and writes the padded offsets p[0..G] if
/// the config asks: the row family's ragged work, done by one CTA (the tile
/// family's is locate_tile). Returns false for bad offsets, after raising
/// QCT_ERROR_BAD_OFFSETS; the caller then writes nothing.
template <typename Rag, int THREADS>
QCT_DEV bool scan_groups(const qct_kernel_args &args, i64 M) {
  using OffT = typename Rag::offset_t;
  const OffT *off = static_cast<const OffT *>(args.offsets);
  OffT *poff = static_cast<OffT *>(args.padded_offsets);
  const i64 G = args.G;
  constexpr i64 P = Rag::pad;
  bool bad = G < 0 || off == nullptr;
  GroupSums carry = {0, 0, 0};
  if (!bad) {
    for (i64 base = 0; base < G; base += THREADS) {
      const i64 g = base + threadIdx.x;
      GroupSums v = {0, 0, 0};
      i64 lo = 0;
      if (g < G) {
        lo = (i64)off[g];
        const i64 hi = (i64)off[g + 1];
        const i64 n = hi - lo;
        if (n < 0 || lo < 0 || hi > M)
          bad = true;
        const i64 np = n > 0 && !bad ? cdiv64(n, P) * P : 0;
        v = {np, cdiv64(np, 128), cdiv64(np, 32)};
      }
      GroupSums tot;
      const GroupSums ex = block_exclusive_scan<THREADS>(v, tot);
      if (Rag::write_padded && g < G && poff)
        poff[g] = (OffT)(carry.p + ex.p);
      carry.p += tot.p;
      carry.t128 += tot.t128;
      carry.s32 += tot.s32;
    }
    if (threadIdx.x == 0) {
      if ((i64)off[0] != 0 || (i64)off[G] != M)
        bad = true;
      if (Rag::write_padded && poff)
        poff[G] = (OffT)carry.p;
    }
  }
  bad = __syncthreads_or(bad) != 0;
  if (bad && threadIdx.x == 0 && args.error_flag)
    atomicOr(args.error_flag, (unsigned int)QCT_ERROR_BAD_OFFSETS);
  return !bad;
}

/// What a tile-family CTA needs to know about its group: the group's first
/// token, padded position, first tile and first 32-block, its tokens and
/// padded tokens; and the totals p[G], t[G], s[G] (capacity tail).
struct TileHit {
  i64 o, p, t, s, n, np;
  GroupSums total;
  bool found;
};

/// scan_groups for one tile, every warp on its own: validates the offsets,
/// writes the padded offsets if asked (`write`, warp 0) and finds the group
/// that holds tile index `tile`. Each lane takes 8 consecutive groups of a
/// chunk of 256 (their 9 offsets loaded together), sums them, and one warp
/// scan of the lane totals places them; the lane whose group holds the tile
/// hands it to the others by shuffles. Every warp reads the same offsets (L1
/// hits after the first) and reaches the same result, so there is no block
/// barrier and no shared memory: each warp goes on to its loads as soon as
/// it knows its tile. Returns false for bad offsets (in every warp), after
/// raising QCT_ERROR_BAD_OFFSETS; the caller then writes nothing.
template <typename Rag, int THREADS>
QCT_DEV bool locate_tile(const qct_kernel_args &args, i64 M, i64 tile,
                         bool write, TileHit &hit) {
  using OffT = typename Rag::offset_t;
  constexpr int GPL = 4; // groups per lane and chunk (of 128)
  constexpr i64 P = Rag::pad;
  // Groups padded to a multiple of 128: p = 128 t and s = 4 t, so only the
  // tile counts are summed and shuffled.
  constexpr bool kTiles = P % 128 == 0;
  const OffT *off = static_cast<const OffT *>(args.offsets);
  OffT *poff = static_cast<OffT *>(args.padded_offsets);
  const i64 G = args.G;
  const int lane = threadIdx.x & 31;
  const bool writer = write && Rag::write_padded && poff && threadIdx.x < 32;
  __shared__ TileHit s_hit; // the same values from every warp's hit lane
  bool bad = G < 0 || off == nullptr;
  bool found = false;
  GroupSums carry = {0, 0, 0};
  if (!bad) {
    if ((i64)off[0] != 0 || (i64)off[G] != M)
      bad = true;
#pragma unroll 1
    for (i64 base = 0; base < G; base += 32 * GPL) {
      const i64 g0 = base + (i64)lane * GPL;
      OffT o[GPL + 1]; // raw offsets: registers only for the prologue
#pragma unroll
      for (int i = 0; i <= GPL; ++i)
        o[i] = g0 + i <= G ? off[g0 + i] : OffT(0);
      // Group i of the lane: its padded size (0 past G or when bad).
      auto group = [&](int i) -> GroupSums {
        if (g0 + i >= G)
          return {0, 0, 0};
        const i64 lo = (i64)o[i], hi = (i64)o[i + 1], n = hi - lo;
        if (n < 0 || lo < 0 || hi > M)
          bad = true;
        const i64 np = n > 0 ? cdiv64(n, P) * P : 0;
        if constexpr (kTiles)
          return {0, np / 128, 0};
        else
          return {np, cdiv64(np, 128), cdiv64(np, 32)};
      };
      GroupSums sum = {0, 0, 0};
#pragma unroll
      for (int i = 0; i < GPL; ++i) {
        const GroupSums v = group(i);
        sum = {sum.p + v.p, sum.t128 + v.t128, sum.s32 + v.s32};
      }
      // Warp scan of the lane sums (inclusive).
      GroupSums inc = sum;
#pragma unroll
      for (int d = 1; d < 32; d <<= 1) {
        const i64 b = __shfl_up_sync(0xFFFFFFFFu, inc.t128, d);
        if constexpr (kTiles) {
          if (lane >= d)
            inc.t128 += b;
        } else {
          const i64 a = __shfl_up_sync(0xFFFFFFFFu, inc.p, d);
          const i64 c = __shfl_up_sync(0xFFFFFFFFu, inc.s32, d);
          if (lane >= d) {
            inc.p += a;
            inc.t128 += b;
            inc.s32 += c;
          }
        }
      }
      GroupSums at = {carry.p + inc.p - sum.p, carry.t128 + inc.t128 - sum.t128,
                      carry.s32 + inc.s32 - sum.s32};
#pragma unroll
      for (int i = 0; i < GPL; ++i) {
        const GroupSums v = group(i); // recomputed: no per-group registers
        if (g0 + i < G) {
          const i64 p = kTiles ? 128 * at.t128 : at.p;
          if (tile >= at.t128 && tile < at.t128 + v.t128) {
            // Exactly one group holds a tile below t[G] (its tiles are
            // [t, t + tiles)).
            s_hit = {(i64)o[i],
                     p,
                     at.t128,
                     kTiles ? 4 * at.t128 : at.s32,
                     (i64)o[i + 1] - (i64)o[i],
                     kTiles ? 128 * v.t128 : v.p,
                     {0, 0, 0},
                     true};
            found = true;
          }
          if (writer)
            poff[g0 + i] = (OffT)p;
        }
        at = {at.p + v.p, at.t128 + v.t128, at.s32 + v.s32};
      }
      carry.t128 += __shfl_sync(0xFFFFFFFFu, inc.t128, 31);
      if constexpr (!kTiles) {
        carry.p += __shfl_sync(0xFFFFFFFFu, inc.p, 31);
        carry.s32 += __shfl_sync(0xFFFFFFFFu, inc.s32, 31);
      }
    }
    if constexpr (kTiles)
      carry = {128 * carry.t128, carry.t128, 4 * carry.t128};
    if (writer && lane == 0)
      poff[G] = (OffT)carry.p;
  }
  bad = __any_sync(0xFFFFFFFFu, bad);
  found = __any_sync(0xFFFFFFFFu, found);
  __syncwarp(); // the hit lane's s_hit is visible to its warp
  if (bad && threadIdx.x == 0 && args.error_flag)
    atomicOr(args.error_flag, (unsigned int)QCT_ERROR_BAD_OFFSETS);
  if (found) {
    hit = s_hit;
  } else {
    hit.found = false;
  }
  hit.total = carry;
  return !bad;
}

} // namespace dev
} // namespace qct

#endif // QCT_DEVICE_RAGGED_CUH
