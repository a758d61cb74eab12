//===- qct/device/ragged.cuh - Ragged groups along M, on the device
//--------===//
//
// The offsets never leave the device (docs/kernel-abi.md), so every CTA that
// needs them reads the G+1 offsets itself, validates them and scans the
// per-group sizes with a block-wide prefix sum (one pass of THREADS groups
// per step, L2 reads; 32-bit tile counts only where they say it all,
// locate_tile). That keeps the whole thing one launch with no host
// synchronization. A tile-family CTA keeps nothing of the scan but its own
// group (locate_tile): no per-group shared memory, no search.
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

/// Columns of a kernel's col outputs: M, or for a ragged kernel its
/// capacity M + G * (P - 1) (docs/kernel-abi.md).
template <typename Rag> QCT_HD i64 col_columns(i64 M, i64 G) {
  return Rag::enabled ? M + G * (Rag::pad - 1) : M;
}

/// Scale columns of blocks of B along those C columns (the row_major
/// stride): cdiv(C, B), plus one per group for a ragged kernel.
template <typename Rag, int B> QCT_HD i64 scale_columns(i64 C, i64 G) {
  return (C + B - 1) / B + (Rag::enabled ? G : 0);
}

/// Block-wide exclusive prefix sums of v, and their total. TILES_ONLY: the
/// caller guarantees p = 128 * t128 and s32 = 4 * t128 (groups padded to a
/// multiple of 128), so only t128 is shuffled (a third of the shuffles).
template <int THREADS, bool TILES_ONLY = false>
QCT_DEV GroupSums block_exclusive_scan(GroupSums v, GroupSums &total) {
  static_assert(THREADS % 32 == 0 && THREADS <= 1024, "threads per block");
  constexpr int W = THREADS / 32;
  __shared__ GroupSums s_warp[W];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  GroupSums inc = v;
#pragma unroll
  for (int o = 1; o < 32; o <<= 1) {
    if constexpr (TILES_ONLY) {
      const i64 b = __shfl_up_sync(0xFFFFFFFFu, inc.t128, o);
      if (lane >= o)
        inc.t128 += b;
    } else {
      const i64 a = __shfl_up_sync(0xFFFFFFFFu, inc.p, o);
      const i64 b = __shfl_up_sync(0xFFFFFFFFu, inc.t128, o);
      const i64 c = __shfl_up_sync(0xFFFFFFFFu, inc.s32, o);
      if (lane >= o) {
        inc.p += a;
        inc.t128 += b;
        inc.s32 += c;
      }
    }
  }
  if constexpr (TILES_ONLY) {
    inc.p = 128 * inc.t128;
    inc.s32 = 4 * inc.t128;
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

/// block_exclusive_scan of one 32-bit count (locate_tile's tile counts when
/// the offsets are int32 and groups are padded to a multiple of 128): one
/// shuffle per step instead of two per 64-bit field, one shared word per
/// warp, and no second barrier: the caller alternates `s_part` between two
/// buffers on successive passes, and a warp rewrites a buffer only two passes
/// later, past the next pass's barrier, which every warp reaches only when
/// done reading it.
template <int THREADS>
QCT_DEV u32 block_exclusive_scan_u32(u32 v, u32 &total, u32 *s_part) {
  static_assert(THREADS % 32 == 0 && THREADS <= 1024, "threads per block");
  constexpr int W = THREADS / 32;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  u32 inc = v;
#pragma unroll
  for (int o = 1; o < 32; o <<= 1) {
    const u32 b = __shfl_up_sync(0xFFFFFFFFu, inc, o);
    if (lane >= o)
      inc += b;
  }
  if (lane == 31)
    s_part[warp] = inc;
  __syncthreads();
  u32 before = 0;
  total = 0;
#pragma unroll
  for (int w = 0; w < W; ++w) {
    const u32 x = s_part[w];
    before += w < warp ? x : 0u;
    total += x;
  }
  return before + inc - v;
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

/// scan_groups for one tile: validates the offsets, writes the padded
/// offsets if asked (`write`), and instead of keeping the G+1 prefix sums in
/// shared memory and binary-searching them, the thread whose group holds
/// tile index `tile` publishes that group (the scan already passes every
/// group through some thread). Returns false for bad offsets, after raising
/// QCT_ERROR_BAD_OFFSETS; the caller then writes nothing.
template <typename Rag, int THREADS>
QCT_DEV bool locate_tile(const qct_kernel_args &args, i64 M, i64 tile,
                         bool write, TileHit &hit) {
  using OffT = typename Rag::offset_t;
  const OffT *off = static_cast<const OffT *>(args.offsets);
  OffT *poff = static_cast<OffT *>(args.padded_offsets);
  const i64 G = args.G;
  constexpr i64 P = Rag::pad;
  // The scan is on the critical path of every CTA (its loads wait for the
  // tile's tokens), and a ragged kernel runs one CTA per tile and K span:
  // with int32 offsets padded to a multiple of 128 (both bundled ragged
  // specs) only 32-bit tile counts are scanned (p = 128 t, s = 4 t), with one
  // barrier per pass instead of two (block_exclusive_scan_u32).
  constexpr bool kTiles32 = P % 128 == 0 && sizeof(OffT) == 4;
  __shared__ TileHit s_hit;
  __shared__ u32 s_part[2][kTiles32 ? THREADS / 32 : 1];
  bool bad = G < 0 || off == nullptr;
  GroupSums carry = {0, 0, 0};
  if (threadIdx.x == 0)
    s_hit.found = false;
  if (!bad) {
    // The end checks' loads go out with the first groups' (not after the
    // scan's barriers: one global round trip per CTA, not two).
    if (threadIdx.x == 0 && ((i64)off[0] != 0 || (i64)off[G] != M))
      bad = true;
    int parity = 0;
    for (i64 base = 0; base < G; base += THREADS, parity ^= 1) {
      const i64 g = base + threadIdx.x;
      GroupSums v = {0, 0, 0};
      i64 lo = 0, n = 0;
      if (g < G) {
        lo = (i64)off[g];
        const i64 hi = (i64)off[g + 1];
        n = hi - lo;
        if (n < 0 || lo < 0 || hi > M)
          bad = true;
        const i64 np = n > 0 && !bad ? cdiv64(n, P) * P : 0;
        v = {np, cdiv64(np, 128), cdiv64(np, 32)};
      }
      GroupSums tot, ex;
      if constexpr (kTiles32) {
        u32 t32;
        const u32 e32 =
            block_exclusive_scan_u32<THREADS>((u32)v.t128, t32, s_part[parity]);
        ex = {128 * (i64)e32, (i64)e32, 4 * (i64)e32};
        tot = {128 * (i64)t32, (i64)t32, 4 * (i64)t32};
      } else {
        ex = block_exclusive_scan<THREADS, P % 128 == 0>(v, tot);
      }
      if (g < G) {
        const i64 p = carry.p + ex.p, t = carry.t128 + ex.t128;
        if (tile >= t && tile < t + v.t128) {
          // Exactly one group holds a tile below t[G] (its tiles are
          // [t, t + tiles)); shared memory was zeroed by nobody else.
          s_hit.o = lo;
          s_hit.p = p;
          s_hit.t = t;
          s_hit.s = carry.s32 + ex.s32;
          s_hit.n = n;
          s_hit.np = v.p;
          s_hit.found = true;
        }
        if (Rag::write_padded && write && poff)
          poff[g] = (OffT)p;
      }
      carry.p += tot.p;
      carry.t128 += tot.t128;
      carry.s32 += tot.s32;
    }
    if (threadIdx.x == 0 && Rag::write_padded && write && poff)
      poff[G] = (OffT)carry.p;
  }
  bad = __syncthreads_or(bad) != 0; // also publishes s_hit
  if (bad && threadIdx.x == 0 && args.error_flag)
    atomicOr(args.error_flag, (unsigned int)QCT_ERROR_BAD_OFFSETS);
  hit = s_hit;
  hit.total = carry;
  return !bad;
}

} // namespace dev
} // namespace qct

#endif // QCT_DEVICE_RAGGED_CUH
