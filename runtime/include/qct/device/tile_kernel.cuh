//===- qct/device/tile_kernel.cuh - The tile family (col outputs) ---------===//
//
// A tile is 128 tokens x TILE_K features: 128 consecutive output columns of
// every col output (one 1x128 FP8 block or four 32-element MX blocks per
// feature) and the same tokens' row-output blocks. A CTA takes M_TILES x
// K_TILES consecutive tiles (dense; ragged: one along M), in the order of
// raster.cuh (QCT_GROUP_M).
//
//  1. Load: 16-byte vectors, all issued before use; row outputs are produced
//     straight from the registers (row_output, shared with the row family);
//     the raw vectors go to shared memory, rows padded by 16 bytes and the
//     vector index XOR-swizzled with (row / 16) so that the column pass's 8
//     token-runs of a feature hit distinct banks.
//  2. Column pass: task (feature f, token run c) = 16 consecutive tokens of f;
//     8 consecutive lanes hold the 128 tokens of f, so a 1x128 block is an
//     8-lane reduction and an MX block a 2-lane one; each lane stores its 16
//     codes as one access (16 bytes for fp8): a feature's 128 tokens are one
//     128-byte line.
//
// Fast column passes (col_pass.cuh) replace step 2 for mxfp4 -> aligned fp8
// col outputs (converted in row orientation from the load registers, then
// transposed as fp8 bytes) and bf16 -> pow2 fp8 col outputs (32-bit reads of
// feature pairs), when every col output of the kernel qualifies.
//
// Ragged: every CTA scans the group sizes and the thread whose group holds
// the CTA's tile publishes it (locate_tile, ragged.cuh); CTAs past the last
// group tile write the capacity tail (zeros, padding scales) with the same
// column pass, since a tail tile is a tile without tokens; under the aligned
// pass they store it straight from registers (aligned_tail_tile). With the
// tail left untouched (Rag::zero_tail false) they exit after the scan.
//
// Clusters (QCT_CLUSTER_M > 1, aligned pass): the CTAs of consecutive tiles
// exchange their bmax and write the row_major block scales together, whole
// L2 sectors at a time, after their tiles (cluster.cuh, tile_kernel).
// Without one, an aligned pass of one 128-token tile per CTA leaves those
// scales to scale jobs in the grid's first CTAs (scale_jobs.cuh: dense in
// tile_kernel, ragged after the group lookup in tile_kernel_body).
//
//===----------------------------------------------------------------------===//
#ifndef QCT_DEVICE_TILE_KERNEL_CUH
#define QCT_DEVICE_TILE_KERNEL_CUH

#include "qct/device/cluster.cuh"
#include "qct/device/col_pass.cuh"
#include "qct/device/raster.cuh"
#include "qct/device/row_kernel.cuh"
#include "qct/device/scale_jobs.cuh"

namespace qct {
namespace dev {

/// Bytes per tile row that the data area of shared memory holds: the raw
/// source row, or for an mxfp4 source the fp8 row of the aligned column pass
/// (col_pass.cuh), which is twice as wide.
template <typename Cfg, int TILE_K> QCT_HD constexpr int tile_row_bytes() {
  using S = typename Cfg::src;
  return S::fmt == Fmt::mxfp4 ? TILE_K : TILE_K * S::T::elem_bits / 8;
}

/// x clamped to [0, hi]: how many of hi rows, columns or blocks of a tile
/// remain when x of them are left past its start.
QCT_HD int clamp_count(i64 x, int hi) {
  return x <= 0 ? 0 : (x < hi ? (int)x : hi);
}

/// The geometry of one CTA's tile.
struct TileGeom {
  i64 t0;    // first source row (token)
  int nt;    // tokens present (0 for a tail or padding-only tile)
  i64 col0;  // first output column
  int ncols; // output columns this tile owns (tokens + group padding)
  i64 sb[2]; // first scale column, for blocks of 32 [0] and 128 [1]
  int nb[2]; // scale columns owned, for blocks of 32 [0] and 128 [1]
};

/// What the fast column passes' stores need of tile tg (col outputs of C
/// columns, K features, scols128 scale columns of 128-blocks).
QCT_DEV ColStoreGeom col_store_geom(const TileGeom &tg, i64 C, i64 K,
                                    i64 scols128) {
  return {tg.col0, tg.ncols, tg.nt, C, K, scols128, tg.sb[1], tg.nb[1]};
}

/// Stores the n <= 16 mxfp4 codes q of columns x0.. of one col-output row.
/// Bytes whose other nibble belongs to a column outside [x0, x0+n) that is
/// written (< cend: the row's C columns, or p[G] when the capacity tail is
/// left untouched) are shared with another CTA and set nibble-wise.
QCT_DEV void store_fp4_run(u8 *rowp, i64 x0, int n, const u32 (&q)[16],
                           i64 cend) {
  const Packed<4, 16> pk = pack_codes<4, 16>(q);
  if ((x0 & 1) == 0 && (n == 16 || x0 + n == cend || (n & 1) == 0)) {
    // Whole bytes (a trailing half byte past cend is the defined zero
    // nibble).
    store_bytes<8>(rowp + x0 / 2, pk.w, (n + 1) / 2);
    return;
  }
#pragma unroll
  for (int j = 0; j < 16; ++j) {
    if (j >= n)
      break;
    const i64 x = x0 + j;
    const i64 other = x ^ 1;
    const bool mine = other >= x0 && other < x0 + n;
    if (mine) {
      if ((x & 1) == 0) // write the pair once, from its low nibble
        rowp[x / 2] =
            (u8)((q[j] & 0xF) | ((q[j + 1 < 16 ? j + 1 : 15] & 0xF) << 4));
    } else if (other >= cend) {
      rowp[x / 2] = (u8)(q[j] & 0xF); // trailing odd nibble: 0
    } else {
      store_nibble(rowp + x / 2, (int)(x & 1), q[j]);
    }
  }
}

/// 16-byte source vectors per thread per tile (of TILE_M tokens).
template <typename Cfg, int THREADS, int TILE_K, int TILE_M = 128>
QCT_HD constexpr int tile_loads() {
  return TILE_M * (TILE_K * Cfg::src::T::elem_bits / 8 / 16) / THREADS;
}

/// The tile row and the 16-byte vector within it of load u of this thread,
/// for tile rows of NV vectors: THREADS is a multiple of NV, so a thread
/// keeps its vector and steps THREADS / NV rows per load. Unsigned: from
/// int (threadIdx.x + u * THREADS) / NV cost a signed-division fix-up per
/// load (~20 SASS instructions per vector in the bf16 col kernels).
template <int THREADS, int NV> QCT_DEV int load_row(int u) {
  static_assert(THREADS % NV == 0, "a thread keeps its vector");
  return (int)(threadIdx.x / (unsigned)NV) + u * (THREADS / NV);
}
template <int NV> QCT_DEV int load_vec() {
  return (int)(threadIdx.x % (unsigned)NV);
}

/// Half h (TILE_M 64) of 128-token tile t: its tokens, columns and, for the
/// first half only, the tile's 1x128 block scale (nb[1]; the second half's
/// CTA converts with the same block exponent but does not store it). A
/// half of padding or past the tile's last column has nt or ncols 0.
QCT_HD TileGeom half_tile(const TileGeom &t, int h) {
  TileGeom g = t;
  g.t0 = t.t0 + 64 * h;
  g.nt = clamp_count(t.nt - 64 * h, 64);
  g.col0 = t.col0 + 64 * h;
  g.ncols = clamp_count(t.ncols - 64 * h, 64);
  g.sb[0] = t.sb[0] + 2 * h; // 32-blocks
  g.nb[0] = clamp_count(t.nb[0] - 2 * h, 2);
  g.nb[1] = h == 0 ? t.nb[1] : 0;
  return g;
}

/// Stages load u of a tile (its raw vector, and its scale for MX and FP8
/// sources) in shared memory for the column pass: rows RS = row bytes + 16
/// apart, the vector index swizzled with (row / 16) (see the header).
template <typename Cfg, int THREADS, int TILE_K>
QCT_DEV void stage_vec(const SrcVec &v, int u, u8 *s_data, u8 *s_sc) {
  using S = typename Cfg::src;
  constexpr int N = S::vec;
  constexpr int ROWB = TILE_K * S::T::elem_bits / 8;
  constexpr int RS = ROWB + 16;
  constexpr int NV = ROWB / 16;
  constexpr int SWZ = (NV < 8 ? NV : 8) - 1;
  const int r = load_row<THREADS, NV>(u), vi = load_vec<NV>();
  const int pv = vi ^ ((r >> 4) & SWZ);
  *reinterpret_cast<uint4 *>(s_data + r * RS + pv * 16) =
      make_uint4(v.raw.w[0], v.raw.w[1], v.raw.w[2], v.raw.w[3]);
  if constexpr (S::T::mx) {
    if ((vi * N) % 32 == 0)
      s_sc[((vi * N) / 32) * 128 + r] = (u8)v.scale;
  } else if constexpr (S::T::fp8) {
    if (vi == 0)
      reinterpret_cast<u32 *>(s_sc)[r] = v.scale;
  }
}

/// Row outputs of one tile, from the load registers.
/// With s_data (STAGE), each vector is also staged for the column pass
/// (stage_vec) right after its row outputs, so that it dies there instead
/// of staying live across the whole row pass.
template <typename Cfg, int THREADS, int TILE_K, bool STAGE = false>
QCT_DEV void tile_row_outputs(const qct_kernel_args &args,
                              const SrcVec (&sv)[tile_loads<Cfg, THREADS, TILE_K>()],
                              const TileGeom &tg, i64 k0, i64 M, i64 K,
                              u8 *s_data = nullptr, u8 *s_sc = nullptr) {
  using S = typename Cfg::src;
  constexpr int N = S::vec;
  constexpr int NV = TILE_K * S::T::elem_bits / 8 / 16;
  constexpr int LOADS = tile_loads<Cfg, THREADS, TILE_K>();
  if (tg.nt <= 0) {
    if constexpr (STAGE) {
#pragma unroll
      for (int u = 0; u < LOADS; ++u)
        stage_vec<Cfg, THREADS, TILE_K>(sv[u], u, s_data, s_sc);
    }
    return;
  }
  // The thread's vector is the same in every load, its row steps by
  // THREADS / NV: one element index, stepped.
  const int r0 = load_row<THREADS, NV>(0);
  const i64 kf = k0 + (i64)load_vec<NV>() * N;
  const bool kin = kf < K;
  const i64 lin0 = (tg.t0 + r0) * K + kf;
#pragma unroll
  for (int u = 0; u < LOADS; ++u) {
    const int r = r0 + u * (THREADS / NV);
    row_outputs<Cfg, 0, true>(args, sv[u], lin0 + (i64)(u * (THREADS / NV)) * K,
                              kin && r < tg.nt, M, K, tg.t0 + r);
    if constexpr (STAGE)
      stage_vec<Cfg, THREADS, TILE_K>(sv[u], u, s_data, s_sc);
  }
}

/// The column pass of one tile for kernels without the aligned pass: stages
/// the raw tile in shared memory, then runs the bf16 pow2 pass (MBUF, s_e,
/// ostride: its buffered scales, see bf16_pow2_col_pass) or the generic one.
/// C: the col outputs' columns; cend: the columns written (store_fp4_run).
template <typename Cfg, int THREADS, int TILE_K, bool MBUF = false,
          bool STAGED = false>
QCT_DEV void
tile_col_pass(const qct_kernel_args &args,
              const SrcVec (&sv)[tile_loads<Cfg, THREADS, TILE_K>()],
              const TileGeom &tg, i64 k0, i64 C, i64 cend,
              const i64 (&scols)[2], u8 *s_data, u8 *s_sc,
              signed char *s_e = nullptr, int ostride = 0) {
  using S = typename Cfg::src;
  constexpr int N = S::vec;
  constexpr int EB = S::T::elem_bits;
  constexpr int ROWB = TILE_K * EB / 8;
  constexpr int RS = ROWB + 16;
  constexpr int NV = ROWB / 16;
  constexpr int SWZ = (NV < 8 ? NV : 8) - 1;
  constexpr int LOADS = tile_loads<Cfg, THREADS, TILE_K>();
  constexpr int TASKS = TILE_K * 8 / THREADS;
  using Plan = ColPlan<Cfg>;
  const i64 K = Cfg::static_k ? Cfg::static_k : args.K;

  // Tiles without tokens are skipped, but for the bf16 pass, which reads
  // absent rows as values: load_tile gave them zero vectors.
  if (!STAGED && (tg.nt > 0 || Plan::bf16_pow2)) {
#pragma unroll
    for (int u = 0; u < LOADS; ++u)
      stage_vec<Cfg, THREADS, TILE_K>(sv[u], u, s_data, s_sc);
  }

  if constexpr (Plan::bf16_pow2) {
    const ColStoreGeom g = col_store_geom(tg, C, K, scols[1]);
    __syncthreads();
    bf16_pow2_col_pass<Cfg, THREADS, TILE_K, MBUF>(args, g, k0, s_data, s_e,
                                                   ostride);
    return;
  }
  __syncthreads();
#pragma unroll 1
  for (int u = 0; u < TASKS; ++u) {
    const int task = threadIdx.x + u * THREADS;
    const int fl = task >> 3, c = task & 7, r0 = 16 * c;
    const i64 kf = k0 + fl;
    const bool fvalid = kf < K;
    // Gather the 16 tokens of this run (swizzled vector, see the header).
    const int pv = (fl / N) ^ (c & SWZ);
    const u8 *colp = s_data + r0 * RS + pv * 16 + ((fl % N) * EB) / 8;
    u32 code[16];
    u32 sc[16]; // FP8 sources: f32 scale bits per token
    u32 scw[4]; // MX sources: the 16 tokens' scale bytes, packed (fewer live
                // registers)
#pragma unroll
    for (int j = 0; j < 16; ++j) {
      const u8 *p = colp + j * RS;
      if constexpr (EB == 4)
        code[j] = (*p >> (4 * (fl & 1))) & 0xF;
      else if constexpr (EB == 8)
        code[j] = *p;
      else if constexpr (EB == 16)
        code[j] = *reinterpret_cast<const unsigned short *>(p);
      else
        code[j] = *reinterpret_cast<const u32 *>(p);
      sc[j] = 0;
    }
    if constexpr (S::T::mx) {
      const uint4 b =
          *reinterpret_cast<const uint4 *>(s_sc + (fl / 32) * 128 + r0);
      scw[0] = b.x;
      scw[1] = b.y;
      scw[2] = b.z;
      scw[3] = b.w;
    } else if constexpr (S::T::fp8) {
#pragma unroll
      for (int j = 0; j < 16; ++j)
        sc[j] = reinterpret_cast<const u32 *>(s_sc)[r0 + j];
    }

    auto scale_at = [&](int j) -> u32 {
      if constexpr (S::T::mx)
        return (scw[j / 4] >> (8 * (j % 4))) & 0xFF;
      else
        return sc[j];
    };
    static_for<0, Cfg::num_outputs>([&](auto oi) {
      constexpr int OI = decltype(oi)::value;
      using O = typename Cfg::template out<OI>;
      if constexpr (O::col) {
        constexpr int OB = O::T::elem_bits;
        constexpr int B = O::block;
        constexpr int L = B ? B / 16 : 1;
        constexpr ValuePath path = Cfg::template path_of<O>();
        QBlock<16> qb;
        if constexpr (path == ValuePath::hp) {
          float v[16];
#pragma unroll
          for (int j = 0; j < 16; ++j) {
            float x;
            if constexpr (S::quantized)
              x = bf16_value<S::fmt>(code[j], scale_at(j));
            else
              x = hp_value<S::fmt>(code[j]);
            v[j] = r0 + j < tg.nt ? x : 0.0f;
          }
          qb = quantize_hp<O, 16, L>(v);
        } else if constexpr (path == ValuePath::exact) {
          double v[16];
#pragma unroll
          for (int j = 0; j < 16; ++j)
            v[j] = r0 + j < tg.nt ? exact_value<S::fmt>(code[j], scale_at(j))
                                  : 0.0;
          qb = quantize_exact<O, 16, L>(v);
        } else {
          u32 cc[16];
          int bb[16];
#pragma unroll
          for (int j = 0; j < 16; ++j) {
            const bool present = r0 + j < tg.nt;
            cc[j] = present ? code[j] : 0u;
            bb[j] = present ? (int)scale_at(j) : -1;
          }
          qb = quantize_aligned<O, S::fmt, 16, L>(cc, bb);
        }
#pragma unroll
        for (int j = 0; j < 16; ++j)
          if (r0 + j >= tg.nt)
            qb.q[j] = 0; // group padding and tail columns are zero
        if (!fvalid)
          return;
        // Data: columns col0 + r0 .. of output row kf.
        const int n = clamp_count(tg.ncols - r0, 16);
        const i64 rowbytes = (C * OB + 7) / 8;
        u8 *rowp = static_cast<u8 *>(args.out[OI]) + kf * rowbytes;
        const i64 x0 = tg.col0 + r0;
        if (n > 0) {
          if constexpr (OB == 4) {
            store_fp4_run(rowp, x0, n, qb.q, cend);
          } else {
            const Packed<OB, 16> pk = pack_codes<OB, 16>(qb.q);
            store_bytes<Packed<OB, 16>::bytes>(rowp + x0 * OB / 8, pk.w,
                                               n * OB / 8);
          }
        }
        // Scales: the first lane of each block.
        if constexpr (O::has_scales) {
          constexpr int bi = B == 32 ? 0 : 1;
          if ((c & (L - 1)) == 0) {
            const int kk = B == 32 ? c / 2 : 0;
            if (kk < tg.nb[bi]) {
              constexpr u32 pad = O::T::mx ? 127u : 0x3F800000u;
              const u32 s = kk * B < tg.nt ? qb.scale : pad;
              const i64 col = tg.sb[bi] + kk;
              const i64 idx = O::scale_layout == ScaleLayout::row_major
                                  ? kf * scols[bi] + col
                                  : col * ((K + 3) / 4 * 4) + kf;
              // row_major: a feature's scale of one tile, part of a sector
              // (memory.cuh, store_partial_scale).
              store_block_scale<O::T::mx,
                                O::scale_layout == ScaleLayout::row_major>(
                  args.out_scales[OI], idx, s);
            }
          }
        }
      }
    });
  }
}

/// The minimum resident CTAs per SM that the emitted entry asks of ptxas
/// (`__launch_bounds__(QCT_THREADS, tile_min_blocks<...>())`), which caps
/// its registers. The aligned pass is latency-bound: left alone, ptxas
/// spends 72 registers (128 at 128 threads) on the prefetched tile and
/// unrolled addresses, which leaves 3 CTAs of 256 threads per SM; capped at
/// 48 (64 at 128 threads) it needs no spills and 5 CTAs (8 of 128) fit, each
/// with a tile of loads in flight (ragged: 64 and 4, 80 and 6 at 128
/// threads; the group geometry stays live across the tiles). The bf16 pass
/// at 256 threads asks for 4 CTAs with one M tile (64 registers, no spills
/// since its vectors are staged right after their row outputs; uncapped it
/// took 72-80, 3 CTAs per SM: on the H200 279.1 against 287.2 us for bf16
/// -> fp8 row + col, 262.7 against 281.4 for bf16 -> mxfp4 row + fp8 col at
/// TILE_K 128, docs/perf/probe-2026-11-30-session8.log; 5 CTAs spilled and
/// ran slower), for 3 with M_TILES 2 (80 registers, which it needs without
/// spills) and for 2 with M_TILES 4 (at 80, bf16 -> mxfp4 row + fp8 col
/// spilled in the rarely called general row quantizer; M_TILES > 1 ran
/// slower than 1 there anyway). At 512 threads (256-feature tiles: the same
/// 8 vectors per thread, 66 KiB of shared memory) it asks for 2, the same
/// 64 registers.
/// TILE_K 256 (36 KiB of shared memory per CTA) fits 6 CTAs per SM at most,
/// so at 128 threads it asks for 6 (80 registers for its 8 vectors); at 256
/// threads, dense, for 4 (64 registers: the next K tile's 4 vectors are
/// prefetched, below; on the H200 109.7 against 111.1 us with clusters,
/// 117.6 against 119.6 without, docs/perf/probe-2026-11-29-session6.log).
/// TILE_M 64 (half the vectors per thread) asks for the most that ptxas
/// (nvcc 13, sm_90a) fits without spills at every K_TILES and M_TILES: 6
/// at 256 threads (40 registers; ragged 5, 48), 12 / 10 at 128 threads
/// (40 / 48).
/// A ragged cluster (CLUSTER_M > 1) of several K tiles keeps its bmax
/// buffer and the cluster's geometry live as well: it asks for 5 CTAs of
/// 128 threads at TILE_M 128, 8 of 128 or 4 of 256 at TILE_M 64 (no spills).
/// Every other pass keeps 1: ptxas may use the whole register file (their
/// quantization would spill under a cap).
template <typename Cfg, int THREADS, int TILE_K, int K_TILES, int M_TILES = 1,
          int TILE_M = 128, int CLUSTER_M = 1>
QCT_HD constexpr int tile_min_blocks() {
  if (ColPlan<Cfg>::bf16_pow2 && THREADS == 512)
    return 2;
  if (ColPlan<Cfg>::bf16_pow2 && THREADS == 256)
    return M_TILES == 1 ? 4 : (M_TILES == 2 ? 3 : 2);
  if (!ColPlan<Cfg>::aligned_e2m1 || Cfg::any_row)
    return 1;
  if (Cfg::ragged::enabled && CLUSTER_M > 1 && K_TILES > 1) {
    if (TILE_M == 64)
      return THREADS == 256 ? 4 : 8;
    if (THREADS == 128)
      return 5;
  }
  if (TILE_M == 64) { // 18-19 KiB of shared memory: up to 11 CTAs per SM
    if (THREADS == 256)
      return Cfg::ragged::enabled ? 5 : 6;
    if (TILE_K == 128)
      return Cfg::ragged::enabled ? 10 : 12;
    return M_TILES > 1 ? 8 : 10;
  }
  if (THREADS == 128)
    return Cfg::ragged::enabled || TILE_K == 256 ? 6 : 8;
  return Cfg::ragged::enabled || TILE_K == 256 ? 4 : 5;
}

/// The geometry of dense tile `tile` (128 tokens from 128 * tile).
QCT_DEV TileGeom dense_tile(i64 M, i64 tile) {
  TileGeom tg;
  tg.t0 = tile * 128;
  const i64 left = M - tg.t0;
  tg.nt = left < 128 ? (int)left : 128;
  tg.col0 = tg.t0;
  tg.ncols = tg.nt;
  tg.sb[0] = tg.t0 / 32;
  tg.nb[0] = (tg.nt + 31) / 32;
  tg.sb[1] = tile;
  tg.nb[1] = 1;
  return tg;
}

/// Whether a CTA keeps its tiles' row_major block scales in shared memory
/// and writes them after its loops: with several M tiles (store_m_scales)
/// or, for the aligned pass, in a cluster (store_cluster_scales).
template <typename Cfg, int M_TILES, int CLUSTER_M>
QCT_HD constexpr bool buffers_scales() {
  using Plan = ColPlan<Cfg>;
  return (M_TILES > 1 && (Plan::aligned_e2m1 || Plan::bf16_pow2)) ||
         (CLUSTER_M > 1 && Plan::aligned_e2m1);
}

/// The entries of the aligned pass's buffered bmax (s_mbm): per M tile, K
/// tile and MX block.
template <typename Cfg, int TILE_K, int K_TILES, int M_TILES, int CLUSTER_M>
QCT_HD constexpr int buffered_bmax_entries() {
  return buffers_scales<Cfg, M_TILES, CLUSTER_M>() &&
                 ColPlan<Cfg>::aligned_e2m1
             ? M_TILES * K_TILES * (TILE_K / 32)
             : 1;
}

/// The tile-family kernel body (tile_kernel); returns false when it wrote
/// nothing (bad ragged offsets). Launch (docs/device-library.md): block
/// (THREADS), grid (dense: cdiv(M, 128 * M_TILES), ragged: tiles; times
/// 128 / TILE_M, rounded up to whole clusters; cdiv(K, TILE_K * K_TILES)),
/// dynamic smem TILE_M * (tile_row_bytes + 16) + the source scale bytes
/// (the metadata's expression, Metadata.cpp). A CTA
/// owns M_TILES consecutive tiles of 128 tokens (ragged: one, its group lookup
/// done once) and, for each of them, K_TILES consecutive tiles of TILE_K
/// features: M outer, K inner, so the source scales of a token row's K
/// span are read once per M tile.
///
/// M_TILES > 1 exists for the col scale stores: with row_major scales a
/// feature's scales of consecutive M tiles are consecutive f32 elements,
/// while consecutive features are cdiv(M,128) * 4 bytes apart, so one tile
/// writes 128 4-byte scales to 128 distinct L2 sectors. The fast passes
/// leave them in shared memory and the CTA writes each feature's M_TILES
/// scales with one 8- or 16-byte store after its loops (store_scale_run).
/// mn_major scales are contiguous along features already and the generic
/// pass keeps its per-tile stores.
///
/// scol_end receives the row_major 128-block scale columns the kernel
/// writes (the cluster's stores, tile_kernel): all of them, or the groups'
/// own when the ragged capacity tail stays untouched; unset for bad offsets.
template <typename Cfg, int THREADS, int TILE_K, int K_TILES, int M_TILES,
          int GROUP_M, int TILE_M, int CLUSTER_M, int SPLIT_LAST_SPAN,
          int UNROLL_M, typename ClusterT>
QCT_DEV bool tile_kernel_body(const qct_kernel_args &args, int *s_mbm,
                              ClusterT &cluster, i64 &scol_end) {
  using S = typename Cfg::src;
  using Rag = typename Cfg::ragged;
  static_assert(Cfg::any_col, "without a col output use the row family");
  static_assert(THREADS == 128 || THREADS == 256 ||
                    (THREADS == 512 && ColPlan<Cfg>::bf16_pow2 &&
                     TILE_K == 256 && M_TILES == 1),
                "QCT_THREADS: 128, 256 (512: the bf16 pass on 256-feature "
                "tiles, one M tile)");
  static_assert(TILE_K >= Cfg::max_row_block,
                "QCT_TILE_K must cover a row output block");
  constexpr int N = S::vec;
  constexpr int NV = TILE_K * S::T::elem_bits / 8 / 16;
  constexpr int DATA = TILE_M * (tile_row_bytes<Cfg, TILE_K>() + 16);
  using Plan = ColPlan<Cfg>;
  constexpr bool kMScales = buffers_scales<Cfg, M_TILES, CLUSTER_M>();
  // Row_major col scales from the kernel's scale jobs (tile_kernel): the
  // tiles store none.
  constexpr bool kJobs = uses_scale_jobs<Cfg, CLUSTER_M, M_TILES, TILE_M>();
  // The grid has at least scale_jobs(tiles, K, stride) CTAs: a CTA's tiles
  // span 128 tokens and at most 1024 features, a job 1024 features and 32
  // tiles, and there are at most as many jobs along the tiles as tiles.
  static_assert(!kJobs || TILE_K * K_TILES <= kJobFeatures,
                "every scale job has a CTA");
  // TILE_M 64: two CTAs (x = 2 * tile + half) share a 128-token tile, each
  // loading, converting and storing 64 of its tokens (half the bytes per
  // CTA: more CTAs resident, shorter load -> store chains). The 1x128 block
  // exponent needs the bmax of all 128 tokens, so each also reads the other
  // half's source scale bytes (1/32 of the half's data bytes, an L2 hit
  // once its sibling has read them). Only for the aligned pass, which
  // converts with a per-token shift known from the scales alone.
  constexpr bool kHalf = TILE_M == 64;
  static_assert(TILE_M == 128 ||
                    (TILE_M == 64 && Plan::aligned_e2m1 && !Cfg::any_row &&
                     TILE_K >= 128),
                "QCT_TILE_M 64: the aligned pass without row outputs, "
                "TILE_K >= 128");
  // 256 features (a whole 128-byte line of each mxfp4 token row per tile)
  // only for the aligned pass without row outputs, where it was measured:
  // 16- and 32-bit source rows of 256 features would not fit the 48 KiB of
  // shared memory a launch gets without an opt-in, and 8-bit sources and
  // row outputs beside the pass are untested at that width.
  static_assert(TILE_K == 64 || TILE_K == 128 ||
                    (TILE_K == 256 && Plan::aligned_e2m1 && !Cfg::any_row) ||
                    (TILE_K == 256 && Plan::bf16_pow2 && THREADS == 512),
                "QCT_TILE_K: 64, 128 (256: mxfp4 -> aligned fp8 col, or the "
                "bf16 pass at 512 threads)");
  constexpr int LOADS = tile_loads<Cfg, THREADS, TILE_K, TILE_M>();
  static_assert(LOADS >= 1 && (TILE_M * NV) % THREADS == 0,
                "tile load split");
  static_assert(K_TILES == 1 || K_TILES == 2 || K_TILES == 4,
                "QCT_K_TILES: 1, 2, 4");
  static_assert(M_TILES == 1 || M_TILES == 2 || M_TILES == 4,
                "QCT_M_TILES: 1, 2, 4");
  static_assert(M_TILES == 1 || !Rag::enabled,
                "QCT_M_TILES > 1: dense kernels only");

  extern __shared__ __align__(16) u8 smem[];
  u8 *s_data = smem;
  u8 *s_sc = smem + DATA;

  const i64 M = args.M;
  const i64 K = Cfg::static_k ? Cfg::static_k : args.K;
  TileGeom tg;
  i64 C = M;    // columns of every col output
  i64 cend = M; // of those, the columns written (see the capacity tail)
  i64 scols[2] = {(M + 31) / 32,
                  (M + 127) / 128}; // scale columns (row_major stride)
  // The CTA's tile: dense grids walked in bands of GROUP_M CTAs along M (0:
  // every K span of an M tile first; raster.cuh); ragged grids in order (x
  // is the tile list).
  int bx = blockIdx.x, by = blockIdx.y;
  const int half = kHalf ? bx & 1 : 0;
  if constexpr (kHalf)
    bx >>= 1;
  if constexpr (!Rag::enabled)
    raster_band(bx, by, gridDim.x / (kHalf ? 2 : 1), gridDim.y, GROUP_M);
  // Dense: the CTA's first tile and how many of its M_TILES exist (>= 1:
  // the grid has cdiv(M, 128 * M_TILES) CTAs along x).
  const i64 tile0 = (i64)bx * M_TILES;
  int nm = 1;

  if constexpr (!Rag::enabled) {
    scol_end = scols[1];
    // Past the last tile: the grid's rounding up to whole clusters (tested
    // only there: without clusters it cannot happen, and it cost spills).
    if constexpr (CLUSTER_M > 1)
      if (tile0 >= scols[1])
        return true;
    const i64 mleft = scols[1] - tile0;
    nm = mleft < M_TILES ? (int)mleft : M_TILES;
    tg = dense_tile(M, tile0);
  } else {
    const i64 G = args.G;
    const i64 t = bx;
    // A CTA with a scale job (the first scale_jobs(grid tiles, K, stride) of
    // the grid) has its lookup collect the tokens of the job's lead and own
    // tiles.
    constexpr int kJobTiles = kJobs ? kJobLead + 32 : 0;
    i64 jt0 = 0, jfb = 0;
    bool job = false;
    __shared__ TileTokens s_jtiles[kJobs ? kJobTiles : 1];
    if constexpr (kJobs) {
      const i64 stride =
          scale_columns<Rag, 128>(col_columns<Rag>(M, G), G); // scols[1]
      const ScaleJob sj = scale_job_of_cta(gridDim.x, K, stride);
      job = sj.has;
      jt0 = sj.tile0();
      jfb = sj.fb();
    }
    TileHit h;
    if (!locate_tile<Rag, THREADS, kJobTiles>(
            args, M, t, blockIdx.x == 0 && blockIdx.y == 0, h, job,
            jt0 - kJobLead, s_jtiles))
      return false;
    C = col_columns<Rag>(M, G);
    scols[0] = scale_columns<Rag, 32>(C, G);
    scols[1] = scale_columns<Rag, 128>(C, G);
    cend = C;
    if constexpr (kJobs) {
      // The groups' tiles of the job (the tail is untouched: uses_scale_jobs).
      if (job)
        run_scale_job<Cfg, THREADS>(
            args, K, jfb, jt0, h.total.t128, scols[1],
            s_jtiles[kJobLead + job_tile_of<THREADS>(threadIdx.x)],
            s_jtiles[job_lead_tile_of<THREADS>(threadIdx.x)]);
    }
    // (scol_end: one write per thread, the same value in every thread.)
    if constexpr (!Rag::zero_tail) {
      // "capacity_tail": "untouched": nothing at or past p[G] is written,
      // no scale column past the groups' own; a tail CTA is done.
      cend = h.total.p;
      scol_end = h.total.t128;
      if (!h.found)
        return true;
    } else {
      scol_end = scols[1];
    }
    if (h.found) {
      const i64 i = t - h.t;
      const i64 nl = h.n - 128 * i, cl = h.np - 128 * i;
      tg.t0 = h.o + 128 * i;
      tg.nt = clamp_count(nl, 128);
      tg.col0 = h.p + 128 * i;
      tg.ncols = cl < 128 ? (int)cl : 128;
      tg.sb[1] = h.t + i;
      tg.nb[1] = 1;
      tg.sb[0] = h.s + 4 * i;
      const i64 b32 = (h.np + 31) / 32 - 4 * i; // the group's 32-blocks left
      tg.nb[0] = b32 < 4 ? (int)b32 : 4;
    } else { // capacity tail
      const i64 k = t - h.total.t128;
      tg.t0 = 0;
      tg.nt = 0;
      tg.col0 = h.total.p + 128 * k;
      const i64 cl = C - tg.col0;
      tg.ncols = clamp_count(cl, 128);
      tg.sb[1] = h.total.t128 + k;
      const i64 b128 = scols[1] - tg.sb[1];
      tg.nb[1] = b128 <= 0 ? 0 : 1;
      tg.sb[0] = h.total.s32 + 4 * k;
      const i64 b32 = scols[0] - tg.sb[0];
      tg.nb[0] = clamp_count(b32, 4);
    }
  }
  // The geometry of the CTA's M tile mi (ragged: its one tile), whole; with
  // TILE_M 64 the CTA's half of it is tg (below) and geom(mi, half).
  const TileGeom whole = tg;
  auto geom = [&](int mi, int h) -> TileGeom {
    TileGeom w;
    if constexpr (Rag::enabled)
      w = whole;
    else
      w = dense_tile(M, tile0 + mi);
    return kHalf ? half_tile(w, h) : w;
  };
  if constexpr (kHalf)
    tg = half_tile(whole, half);

  // The CTA's K tiles: nk from kt0 (raster.cuh, k_span; with
  // SPLIT_LAST_SPAN the grid's last rows take one tile each).
  const KSpan span =
      k_span(by, (K + TILE_K - 1) / TILE_K, K_TILES, SPLIT_LAST_SPAN != 0);
  const i64 kt0 = span.first;
  const int nk = span.count;

  // A ragged tile without tokens (capacity tail or group padding), or a
  // half tile without tokens (TILE_M 64, one M tile: ragged padding or a
  // dense partial last tile), under the aligned pass: zeros and padding
  // scales straight from registers (uniform over the CTA: no barrier).
  if constexpr ((Rag::enabled || (kHalf && M_TILES == 1)) &&
                Plan::aligned_e2m1 && !Cfg::any_row) {
    if (tg.nt == 0) {
      const ColStoreGeom g = col_store_geom(tg, C, K, scols[1]);
#pragma unroll 1
      for (int j = 0; j < nk && (kt0 + j) * TILE_K < K; ++j)
        aligned_tail_tile<Cfg, THREADS, TILE_K, TILE_M, kMScales || kJobs>(
            args, g, (kt0 + j) * TILE_K);
      return true;
    }
  }

  // mxfp4 source scales of the CTA's K span. Per vector they are one byte
  // load each, a sector per row per tile that L1 does not keep until the
  // next tile: 128 of the tile's ~1000 L2 sectors. A token row's span
  // (SPAN = K_TILES * NV bytes) is contiguous and the row's NV vectors of a
  // tile are NV consecutive lanes, so each of those lanes loads K_TILES bytes
  // of the span once per M tile (one access when aligned: (K / 32) %
  // K_TILES == 0, which also puts a chunk wholly inside or wholly past the
  // row; else byte by byte), one sector per row per M tile. The chunks go
  // to shared memory before the M tile's first K tile is converted (only
  // the row's own lanes, in the same warp, read them: __syncwarp
  // suffices), so they hold no registers across the K tiles, and every
  // tile reads its scale bytes from there. At TILE_K 256 a tile's 8 scale
  // bytes of a row are one sector already, and the span's registers spilled:
  // each vector loads its own byte there.
  constexpr bool kSpanScales =
      S::fmt == Fmt::mxfp4 && K_TILES > 1 && TILE_K <= 128;
  constexpr int SPAN = K_TILES * NV;
  __shared__ __align__(16) u8 s_span[kSpanScales ? 128 * SPAN : 1];
  u32 scw[kSpanScales ? LOADS : 1];
  // Loads the chunks of M tile g's rows into scw.
  auto load_span = [&](const TileGeom &g) {
    if constexpr (kSpanScales) {
      const int vi = threadIdx.x % NV;             // the same for every u
      const i64 b0 = kt0 * NV + (i64)vi * K_TILES; // first block of the chunk
      const i64 KB = K / 32;
      const bool wide = KB % K_TILES == 0;
#pragma unroll
      for (int u = 0; u < LOADS; ++u) {
        const int r = (threadIdx.x + u * THREADS) / NV;
        const bool row = r < g.nt;
        const u8 *p = static_cast<const u8 *>(args.src_scales) +
                      (row ? (g.t0 + r) * KB + b0 : 0);
        if (wide) {
          scw[u] = K_TILES == 4 ? 0x7F7F7F7Fu : 0x7F7Fu; // absent: 127
          if (row && b0 < KB) {
            if constexpr (K_TILES == 4)
              scw[u] = load_shared_scale(reinterpret_cast<const u32 *>(p));
            else
              scw[u] = load_shared_scale(
                  reinterpret_cast<const unsigned short *>(p));
          }
        } else {
          scw[u] = 0;
#pragma unroll
          for (int i = 0; i < K_TILES; ++i)
            scw[u] |= (row && b0 + i < KB ? load_shared_scale(p + i) : 127u)
                      << (8 * i);
        }
      }
    }
  };
  // Publishes the chunks (first K tile of an M tile) and sets tile j's
  // vectors' scales: block j * NV + vi of row r's span.
  auto span_scales = [&](SrcVec(&v)[LOADS], int j) {
    if constexpr (kSpanScales) {
      const int vi = threadIdx.x % NV;
      if (j == 0) {
        if (M_TILES > 1)
          __syncwarp(); // the previous M tile's chunks have been read
#pragma unroll
        for (int u = 0; u < LOADS; ++u) {
          const int r = (threadIdx.x + u * THREADS) / NV;
          u8 *q = s_span + r * SPAN + vi * K_TILES;
          if constexpr (K_TILES == 4)
            *reinterpret_cast<unsigned int *>(q) = scw[u];
          else
            *reinterpret_cast<unsigned short *>(q) = (unsigned short)scw[u];
        }
        __syncwarp();
      }
#pragma unroll
      for (int u = 0; u < LOADS; ++u) {
        const int r = (threadIdx.x + u * THREADS) / NV;
        v[u].scale = s_span[r * SPAN + j * NV + vi];
      }
    }
  };

  // Loads the vectors of tile (g, k0) into v (all issued before any use;
  // with span scales, their scales come later from span_scales); a tile
  // without tokens gets all-absent vectors.
  auto load_tile = [&](SrcVec(&v)[LOADS], const TileGeom &g, i64 k0) {
    if (g.nt > 0) {
      // One vector index, stepped (see tile_row_outputs); rows are whole
      // vectors (K % N == 0, the spec's constraints).
      const int r0 = load_row<THREADS, NV>(0);
      const i64 kf = k0 + (i64)load_vec<NV>() * N;
      const bool kin = kf < K;
      const i64 vx0 = div_nonneg<N>((g.t0 + r0) * K + kf);
      const i64 vstep = (i64)(THREADS / NV) * div_nonneg<N>(K);
#pragma unroll
      for (int u = 0; u < LOADS; ++u) {
        const bool valid = kin && r0 + u * (THREADS / NV) < g.nt;
        const i64 vx = vx0 + u * vstep;
        if constexpr (kSpanScales) // scales: span_scales
          v[u].raw = valid ? load16(static_cast<const u8 *>(args.src) + vx * 16)
                           : V4{{0, 0, 0, 0}};
        else
          v[u] = load_src_vec<Cfg, /*kSharedScales=*/true>(args, vx, valid);
      }
    } else {
#pragma unroll
      for (int u = 0; u < LOADS; ++u)
        v[u] = {{{0, 0, 0, 0}}, 0};
    }
  };

  // TILE_M 64: this thread's share of the bmax of its MX block over the
  // other half o of the 128-token tile: the largest of its scale bytes for
  // the rows this thread's vectors have in its own half (0xFF excluded, -1
  // if none), one byte load per vector, issued with the tile's loads.
  auto other_half_bmax = [&](const TileGeom &o, i64 k0) -> int {
    int m = -1;
    const int vi = threadIdx.x % NV; // the same for every u
    const i64 kb = (k0 >> 5) + vi;   // MX block
    if (o.nt > 0 && kb < (K >> 5)) {
#pragma unroll
      for (int u = 0; u < LOADS; ++u) {
        const int r = (threadIdx.x + u * THREADS) / NV;
        if (r < o.nt) {
          const int b =
              (int)load_shared_scale(static_cast<const u8 *>(args.src_scales) +
                                     (o.t0 + r) * (K >> 5) + kb);
          m = b != 0xFF && b > m ? b : m;
        }
      }
    }
    return m;
  };

  // Scales of several M tiles or a cluster's, kept for the stores after the
  // loops (see above): per tile, the aligned pass's bmax per MX block (in
  // s_mbm, the caller's), the bf16 pass's exponent per feature and output.
  constexpr int NF = K_TILES * TILE_K; // features of the CTA
  __shared__ signed char
      s_mexp[kMScales && Plan::bf16_pow2 ? Cfg::num_outputs * M_TILES * NF
                                         : 1];

  // The CTA's tiles: M_TILES x K_TILES, M outer (the last CTA along M or K
  // may have fewer). With the aligned pass the next tile's loads (the next
  // K tile; with K_TILES 1 the next M tile's) are issued before this tile
  // is converted and stored, so a CTA keeps a tile of loads in flight for
  // most of its life instead of only at its start; the other passes keep
  // more registers per tile and load at the top of each iteration (their
  // gain is the amortized ragged lookup and the scale stores).
  // (K_TILES 1 loads the source scales with the vectors: at 4 vectors per
  // thread, 128 threads, two tiles of them do not fit the 64 registers of
  // tile_min_blocks without spills, so that schedule does not prefetch.
  // Nor does TILE_K 256, for the same reason, except at 256 threads, dense,
  // one M tile, where tile_min_blocks leaves 64 registers for it: a second
  // tile of 8 vectors at 128 threads spilled under the cap, and so did the
  // ragged cluster's and the buffered scales of several M tiles at 64.)
  constexpr bool kPrefetch =
      Plan::aligned_e2m1 && !kHalf &&
      (TILE_K <= 128 || (THREADS == 256 && !Rag::enabled && M_TILES == 1)) &&
      (K_TILES > 1 || (M_TILES > 1 && LOADS <= 2));
  // Whether the prefetch crosses M tiles. Only with K_TILES 1 (no span
  // scales): with K_TILES > 1 the next M tile's first vectors and span
  // scales, live across this tile's pass, spilled under the 48 / 64
  // register cap (NVRTC 13, sm_90a), so each M tile then starts with its
  // loads, like a CTA of one M tile.
  constexpr bool kCrossM = kPrefetch && M_TILES > 1 && K_TILES == 1;
  // A CTA of one tile in a span of K_TILES: neither the span's source
  // scales nor the next tile's prefetch would be its own.
  static_assert(!SPLIT_LAST_SPAN || (Rag::enabled && CLUSTER_M == 1 &&
                                     K_TILES > 1 && !kSpanScales && !kPrefetch),
                "QCT_SPLIT_LAST_SPAN 1: a ragged kernel without clusters, "
                "QCT_K_TILES > 1, QCT_TILE_K 256");
  SrcVec sv[LOADS];
  if constexpr (kPrefetch) {
    load_span(tg);
    load_tile(sv, tg, kt0 * TILE_K);
  }
  // `done` counts the tiles converted so far: the aligned pass alternates
  // its bmax buffers by its parity (the last CTA along K may have an odd
  // number of K tiles per M tile, so j would not alternate; with one M
  // tile, j is that count).
  int done = 0;
  // UNROLL_M: the bf16 pass runs its M tiles unrolled; as a loop, ptxas
  // keeps more loop-invariant state live across the iterations (123-128
  // registers instead of 72-78 at 256 threads, two CTAs per SM instead of
  // three). The aligned pass is capped by tile_min_blocks and stays a loop
  // (unrolled, it spilled). The body is written once, inline: as a lambda
  // called from two loop nests, NVRTC spilled the one-M-tile aligned pass
  // at 128 threads.
#pragma unroll UNROLL_M
  for (int mi = 0; mi < M_TILES; ++mi) {
    if (M_TILES > 1 && mi >= nm) { // uniform over the CTA
      if (UNROLL_M > 1) // no break: only a loop with one exit unrolls fully
        continue;
      break;
    }
    if constexpr (M_TILES > 1)
      tg = geom(mi, half);
#pragma unroll 1
    for (int j = 0; j < nk; ++j) {
      const i64 k0 = (kt0 + j) * TILE_K;
      if (k0 >= K) // uniform over the CTA; the next M tile starts at j = 0
        break;
      SrcVec nx[LOADS];
      if constexpr (kPrefetch) {
        const bool knext = j + 1 < K_TILES && k0 + TILE_K < K;
        if constexpr (M_TILES == 1) {
          if (knext)
            load_tile(nx, tg, k0 + TILE_K);
          span_scales(sv, j);
        } else if constexpr (!kCrossM) {
          if (mi > 0 && j == 0) { // not prefetched: see kCrossM
            load_span(tg);
            load_tile(sv, tg, k0);
          }
          if (knext)
            load_tile(nx, tg, k0 + TILE_K);
          span_scales(sv, j);
        } else { // K_TILES 1: the next tile is the next M tile's
          if (mi + 1 < nm)
            load_tile(nx, geom(mi + 1, half), kt0 * TILE_K);
        }
      } else {
        if (j == 0)
          load_span(tg);
        load_tile(sv, tg, k0);
        span_scales(sv, j);
      }
      if constexpr (Plan::aligned_e2m1) {
        // No barrier between tiles: the pass's first barrier comes after its
        // double-buffered bmax partials and before its shared tile writes.
        const ColStoreGeom g = col_store_geom(tg, C, K, scols[1]);
        const int m_other =
            kHalf ? other_half_bmax(geom(mi, 1 - half), k0) : -1;
        // Where the tile's bmax go (kMScales): s_mbm, or the cluster's
        // copies (at TILE_M 64 the first half's CTA stores them).
        const int entry0 = bmax_entry<TILE_K, K_TILES>(mi, j * TILE_K);
        auto bmax_sink = [&](int bm) {
          if constexpr (CLUSTER_M > 1)
            cluster.publish(entry0, bm);
          else if (threadIdx.x < TILE_K / 32)
            s_mbm[entry0 + threadIdx.x] = bm;
        };
        aligned_e2m1_col_pass<Cfg, THREADS, TILE_K, TILE_M, kMScales, kJobs>(
            args, sv, g, k0, s_data, (M_TILES == 1 ? j : done) & 1, m_other,
            bmax_sink);
        if constexpr (Cfg::any_row)
          tile_row_outputs<Cfg, THREADS, TILE_K>(args, sv, tg, k0, M, K);
      } else {
        if ((M_TILES == 1 ? j : done) > 0)
          __syncthreads(); // the previous tile's column pass read s_data
        // With row outputs and one M tile each vector is staged right after
        // them: the tile's vectors are not all live across the row pass
        // (72-80 registers at 256 threads for the bf16 pass, 64 without
        // spills; several M tiles keep their 80).
        constexpr bool kStage = Cfg::any_row && M_TILES == 1;
        // The column pass's k0 comes back from shared memory (every thread
        // writes the same value): across the row pass's calls of the general
        // quantizer it was the one value that spilled at 64 registers.
        __shared__ i64 s_k0;
        if constexpr (kStage)
          s_k0 = k0;
        if constexpr (Cfg::any_row)
          tile_row_outputs<Cfg, THREADS, TILE_K, kStage>(args, sv, tg, k0, M,
                                                         K, s_data, s_sc);
        const i64 k0c = kStage ? *static_cast<volatile i64 *>(&s_k0) : k0;
        tile_col_pass<Cfg, THREADS, TILE_K, kMScales, kStage>(
            args, sv, tg, k0c, C, cend, scols, s_data, s_sc,
            s_mexp + (kMScales ? mi * NF + j * TILE_K : 0), M_TILES * NF);
      }
      if constexpr (kPrefetch) {
#pragma unroll
        for (int u = 0; u < LOADS; ++u)
          sv[u] = nx[u];
      }
      if constexpr (M_TILES > 1)
        ++done;
    }
  }

  if constexpr (kMScales && CLUSTER_M == 1) {
    if (half != 0)
      return true; // the first half's CTA stores the tiles' scales
    __syncthreads(); // the last tile's scales are in shared memory
    // The scale exponent of output oi, feature f of the CTA's span, M tile
    // mi: from the aligned pass's bmax per MX block or the bf16 pass's
    // exponents (their layouts are at the declarations above).
    auto exp_of = [&](auto oi, int f, int mi) -> int {
      using O = typename Cfg::template out<decltype(oi)::value>;
      if constexpr (Plan::aligned_e2m1)
        return aligned_scale_exp(s_mbm[bmax_entry<TILE_K, K_TILES>(mi, f)], 2,
                                 O::T::elem().emax);
      else
        return s_mexp[decltype(oi)::value * (M_TILES * NF) + mi * NF + f];
    };
    store_m_scales<Cfg, THREADS, NF, M_TILES>(
        args, exp_of, kt0 * TILE_K, K, scols[1], tile0, nm);
  }
  return true;
}

/// The tile-family kernel (the emitted entry's body): tile_kernel_body,
/// after a scale job in the first CTAs of a dense kernel that uses them
/// (scale_jobs.cuh), and with CLUSTER_M > 1 (an entry declared
/// __cluster_dims__(CLUSTER_M, 1, 1), a grid rounded up to whole clusters along
/// x) the cluster's block scales after it (cluster.cuh). Every CTA of a cluster
/// reaches the cluster barriers, those past the last tile included.
template <typename Cfg, int THREADS, int TILE_K, int K_TILES = 1,
          int M_TILES = 1, int GROUP_M = 1, int TILE_M = 128, int CLUSTER_M = 1,
          int SPLIT_LAST_SPAN = 0,
          int UNROLL_M = ColPlan<Cfg>::bf16_pow2 ? M_TILES : 1 /* body */>
QCT_DEV void tile_kernel(const qct_kernel_args &args) {
  constexpr int NBM =
      buffered_bmax_entries<Cfg, TILE_K, K_TILES, M_TILES, CLUSTER_M>();
  using Cluster = ClusterBmax<CLUSTER_M, TILE_K / 32, NBM, TILE_M>;
  // The cluster's bmax (a copy per CTA, and scratch ints) and its mbarrier.
  __shared__ int s_mbm[CLUSTER_M > 1 ? CLUSTER_M * NBM + TILE_K / 32 : NBM];
  __shared__ unsigned long long s_cbar; // (unused without a cluster)
  Cluster cluster;
  if constexpr (CLUSTER_M == 1) {
    // Dense scale jobs run here; ragged ones need the group lookup, in the
    // body.
    if constexpr (uses_scale_jobs<Cfg, CLUSTER_M, M_TILES, TILE_M>() &&
                  !Cfg::ragged::enabled) {
      const i64 K = Cfg::static_k ? Cfg::static_k : args.K;
      const i64 M = args.M;
      const i64 tiles = (M + 127) / 128; // also the row_major stride
      const ScaleJob sj = scale_job_of_cta(tiles, K, tiles);
      if (sj.has) {
        const i64 tile0 = sj.tile0();
        const i64 t0 = (tile0 + job_tile_of<THREADS>(threadIdx.x)) * 128;
        const i64 l0 =
            (tile0 - kJobLead + job_lead_tile_of<THREADS>(threadIdx.x)) * 128;
        run_scale_job<Cfg, THREADS>(args, K, sj.fb(), tile0, tiles, tiles,
                                    {t0, clamp_count(M - t0, 128)},
                                    {l0, clamp_count(M - l0, 128)});
      }
    }
    i64 scol_end; // (only the cluster's scale stores use it)
    tile_kernel_body<Cfg, THREADS, TILE_K, K_TILES, M_TILES, GROUP_M, TILE_M,
                     CLUSTER_M, SPLIT_LAST_SPAN, UNROLL_M>(args, s_mbm, cluster,
                                                           scol_end);
  } else {
    using Rag = typename Cfg::ragged;
    static_assert(ColPlan<Cfg>::aligned_e2m1 && !Cfg::any_row && GROUP_M == 1,
                  "QCT_CLUSTER_M > 1: the aligned pass without row outputs, "
                  "QCT_GROUP_M 1 (clusters are consecutive CTAs along x)");
    cluster.template begin<THREADS>(s_mbm, &s_cbar);
    // The scale columns written (all, or the groups' own for an untouched
    // tail), set by the body. Every thread writes the same value: shared
    // memory, not a register live across the body (one more spilled at 128
    // threads).
    __shared__ i64 scol_end;
    const bool ok =
        tile_kernel_body<Cfg, THREADS, TILE_K, K_TILES, M_TILES, GROUP_M,
                         TILE_M, CLUSTER_M, SPLIT_LAST_SPAN, UNROLL_M>(
            args, s_mbm, cluster, scol_end);
    cluster.end();
    const i64 K = Cfg::static_k ? Cfg::static_k : args.K;
    const i64 scols = scale_columns<Rag, 128>(
        col_columns<Rag>(args.M, args.G), args.G);
    store_cluster_scales<Cfg, THREADS, TILE_K, K_TILES, M_TILES, TILE_M,
                         CLUSTER_M>(args, s_mbm, cluster.rank, ok, scols,
                                    scol_end, K);
  }
}

} // namespace dev
} // namespace qct

#endif // QCT_DEVICE_TILE_KERNEL_CUH
