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
/// capacity rup(M + G * (P - 1), 128) when P > 1 (docs/kernel-abi.md: every
/// data row 16-byte aligned, so a 16-token run is one vector store).
template <typename Rag> QCT_HD i64 col_columns(i64 M, i64 G) {
  return Rag::enabled && Rag::pad > 1
             ? (M + G * (Rag::pad - 1) + 127) / 128 * 128
             : M;
}

/// Scale columns of blocks of B along those C columns (the row_major
/// stride): cdiv(C, B), plus one per group for a ragged kernel.
template <typename Rag, int B> QCT_HD i64 scale_columns(i64 C, i64 G) {
  return (C + B - 1) / B + (Rag::enabled ? G : 0);
}

/// The tokens of one 128-token tile: its first source row and how many
/// (0: a tile of group padding, or past the groups' tiles).
struct TileTokens {
  i64 t0;
  int nt;
};

/// For a lookup that also collects the tokens of N consecutive tiles from
/// `first` (a scale job's, scale_jobs.cuh): the group of first token lo, n
/// tokens and tiles [t, t + tiles) writes those of its tiles in the range
/// to s_tiles[tile - first]. (A group padded to a multiple of 128 has tokens
/// in tile i up to n - 128 i, as tile_kernel_body's own tile.)
template <int N>
QCT_HD void collect_job_tiles(TileTokens *s_tiles, i64 first, i64 lo, i64 n,
                              i64 t, i64 tiles) {
  const i64 from = t > first ? t : first;
  const i64 to = t + tiles < first + N ? t + tiles : first + N;
#pragma unroll 1
  for (i64 tt = from; tt < to; ++tt) {
    const i64 left = n - 128 * (tt - t);
    s_tiles[tt - first] = {lo + 128 * (tt - t),
                           left <= 0 ? 0 : (left < 128 ? (int)left : 128)};
  }
}

/// What a tile-family CTA needs to know about its group: the group's first
/// token, padded position, first tile and first 32-block, its tokens and
/// padded tokens; and the totals p[G], t[G], s[G] (capacity tail).
struct TileHit {
  i64 o, p, t, s, n, np;
  GroupSums total;
  bool found;
};

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
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

/// block_exclusive_scan of one 32-bit count (locate_tile_u32's tile counts,
/// when the offsets are int32 and groups are padded to a multiple of 128): one
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

/// The end of an offsets scan (scan_groups, locate_tile): true when any
/// thread of the CTA saw bad offsets (a CTA barrier, which also publishes
/// what the lookup stored in shared memory), after thread 0 has raised
/// QCT_ERROR_BAD_OFFSETS.
QCT_DEV bool agree_on_offsets(const qct_kernel_args &args, bool bad) {
  bad = __syncthreads_or(bad) != 0;
  if (bad && threadIdx.x == 0 && args.error_flag)
    atomicOr(args.error_flag, (unsigned int)QCT_ERROR_BAD_OFFSETS);
  return bad;
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
  return !agree_on_offsets(args, bad);
}

/// locate_tile where the offsets are int32 and groups are padded to a
/// multiple of 128 (both bundled ragged specs): a group's tiles say it all
/// (p = 128 t, s = 4 t, np = 128 tiles), so everything up to the result is
/// 32-bit: one shuffle per scan step (block_exclusive_scan_u32), 32-bit
/// validation and tile counts, and the hit published as one 16-byte shared
/// store that every thread reads back with one load. The scan sits on every
/// ragged CTA's critical path (its loads wait for the tile's tokens, and
/// there is one CTA per tile and K span) and its instructions issue beside
/// the other resident CTAs' conversions: a second lookup per CTA cost 7 us
/// of 112 at 32 groups and 17 of 152 at 256 (docs/performance.md).
template <typename Rag, int THREADS, int JOB_TILES = 0>
QCT_DEV bool locate_tile_u32(const qct_kernel_args &args, i64 M, i64 tile,
                             bool write, TileHit &hit, bool collect = false,
                             i64 jfirst = 0, TileTokens *s_tiles = nullptr) {
  static_assert(Rag::pad % 128 == 0 && sizeof(typename Rag::offset_t) == 4,
                "int32 offsets, groups padded to a multiple of 128");
  constexpr u32 P = (u32)Rag::pad;
  const int *off = static_cast<const int *>(args.offsets);
  int *poff = static_cast<int *>(args.padded_offsets);
  const i64 G = args.G;
  // The tile's group: first token, tokens, first tile, tiles (0: no group
  // holds the tile, the capacity tail).
  __shared__ int4 s_hit;
  __shared__ u32 s_part[2][THREADS / 32];
  bool bad = G < 0 || off == nullptr;
  u32 carry = 0;
  if (threadIdx.x == 0)
    s_hit = make_int4(0, 0, 0, 0);
  if constexpr (JOB_TILES > 0) // (the scan's first barrier orders these)
    if (collect && threadIdx.x < JOB_TILES)
      s_tiles[threadIdx.x] = {0, 0};
  if (!bad) {
    // Thread 0's end checks load both ends with the first groups' offsets
    // and test them after the scan: one global round trip per CTA. (Tested
    // where they were loaded, with ||, they were three in a row for warp 0,
    // which the whole CTA waits for at the scan's barrier.)
    int first = 0, last = 0;
    if (threadIdx.x == 0) {
      first = off[0];
      last = off[G];
    }
    int parity = 0;
    for (i64 base = 0; base < G; base += THREADS, parity ^= 1) {
      const i64 g = base + threadIdx.x;
      int lo = 0, hi = 0;
      if (g < G) {
        lo = off[g];
        hi = off[g + 1];
        if (lo < 0 || hi < lo || (i64)hi > M)
          bad = true;
      }
      // A thread that saw bad offsets counts nothing (as the 64-bit path).
      const u32 n = bad ? 0u : (u32)(hi - lo);
      const u32 tiles = (n + P - 1) / P * (P / 128);
      u32 total;
      const u32 t = carry + block_exclusive_scan_u32<THREADS>(tiles, total,
                                                              s_part[parity]);
      if (g < G) {
        // Exactly one group holds a tile below t[G] (its tiles are
        // [t, t + tiles)).
        if (tile >= (i64)t && tile < (i64)t + tiles)
          s_hit = make_int4(lo, (int)n, (int)t, (int)tiles);
        if constexpr (JOB_TILES > 0)
          if (collect)
            collect_job_tiles<JOB_TILES>(s_tiles, jfirst, lo, n, t, tiles);
        if (Rag::write_padded && write && poff)
          poff[g] = (int)(128 * t);
      }
      carry += total;
    }
    if (threadIdx.x == 0) {
      if ((first != 0) | ((i64)last != M))
        bad = true;
      if (Rag::write_padded && write && poff)
        poff[G] = (int)(128 * carry);
    }
  }
  bad = agree_on_offsets(args, bad); // also publishes s_hit
  const int4 h = s_hit;
  const i64 t = (u32)h.z, tiles = (u32)h.w;
  hit.o = h.x;
  hit.n = h.y;
  hit.t = t;
  hit.p = 128 * t;
  hit.s = 4 * t;
  hit.np = 128 * tiles;
  hit.found = tiles != 0;
  hit.total = {128 * (i64)carry, (i64)carry, 4 * (i64)carry};
  return !bad;
}

/// scan_groups for one tile: validates the offsets, writes the padded
/// offsets if asked (`write`), and instead of keeping the G+1 prefix sums in
/// shared memory and binary-searching them, the thread whose group holds
/// tile index `tile` publishes that group (the scan already passes every
/// group through some thread). Returns false for bad offsets, after raising
/// QCT_ERROR_BAD_OFFSETS; the caller then writes nothing. With int32 offsets
/// and groups padded to a multiple of 128: locate_tile_u32. With JOB_TILES
/// and `collect`, the same scan also publishes the tokens of tiles
/// jfirst..jfirst+JOB_TILES-1 in s_tiles (shared, JOB_TILES <= THREADS entries;
/// collect_job_tiles).
template <typename Rag, int THREADS, int JOB_TILES = 0>
QCT_DEV bool locate_tile(const qct_kernel_args &args, i64 M, i64 tile,
                         bool write, TileHit &hit, bool collect = false,
                         i64 jfirst = 0, TileTokens *s_tiles = nullptr) {
  using OffT = typename Rag::offset_t;
  constexpr i64 P = Rag::pad;
  if constexpr (P % 128 == 0 && sizeof(OffT) == 4) {
    return locate_tile_u32<Rag, THREADS, JOB_TILES>(args, M, tile, write, hit,
                                                    collect, jfirst, s_tiles);
  } else {
    const OffT *off = static_cast<const OffT *>(args.offsets);
    OffT *poff = static_cast<OffT *>(args.padded_offsets);
    const i64 G = args.G;
    __shared__ TileHit s_hit;
    bool bad = G < 0 || off == nullptr;
    GroupSums carry = {0, 0, 0};
    if (threadIdx.x == 0)
      s_hit.found = false;
    if constexpr (JOB_TILES > 0) // (the scan's first barrier orders these)
      if (collect && threadIdx.x < JOB_TILES)
        s_tiles[threadIdx.x] = {0, 0};
    if (!bad) {
      OffT first = 0, last = 0; // thread 0's end checks, as locate_tile_u32
      if (threadIdx.x == 0) {
        first = off[0];
        last = off[G];
      }
      for (i64 base = 0; base < G; base += THREADS) {
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
        GroupSums tot;
        const GroupSums ex =
            block_exclusive_scan<THREADS, P % 128 == 0>(v, tot);
        if (g < G) {
          const i64 p = carry.p + ex.p, t = carry.t128 + ex.t128;
          if (tile >= t && tile < t + v.t128) {
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
          if constexpr (JOB_TILES > 0)
            if (collect)
              collect_job_tiles<JOB_TILES>(s_tiles, jfirst, lo, n, t, v.t128);
        }
        carry.p += tot.p;
        carry.t128 += tot.t128;
        carry.s32 += tot.s32;
      }
      if (threadIdx.x == 0) {
        if (((i64)first != 0) | ((i64)last != M))
          bad = true;
        if (Rag::write_padded && write && poff)
          poff[G] = (OffT)carry.p;
      }
    }
    bad = agree_on_offsets(args, bad); // also publishes s_hit
    hit = s_hit;
    hit.total = carry;
    return !bad;
  }
}

#endif // CUDA

} // namespace dev
} // namespace qct

#endif // QCT_DEVICE_RAGGED_CUH
