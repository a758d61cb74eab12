//===- qct/device/scale_jobs.cuh - Row_major col scales from scale bytes --===//
//
// The aligned pass's 1x128 block scale of (feature k, 128-token tile) needs
// only the source scale bytes: the largest finite scale byte of k's MX block
// over the tile's tokens (bmax), then aligned_scale_exp. A dense tile's
// row_major scales are 4 bytes in each of 128 L2 sectors that 8 CTAs share
// (cluster.cuh), which cost the mxfp4 -> fp8 col kernel ~15% when each CTA
// stored its own. Without a cluster (QCT_CLUSTER_M 1) a dense kernel of
// one 128-token tile per CTA gives that work to scale jobs instead, and its
// data CTAs store no row_major scales. A job is 4096 tokens x 1024
// features: 32 tiles x 32 MX blocks, one 32-byte source scale sector per
// token row. The first scale_jobs(tiles, K, stride) CTAs of the grid each
// run one before their own tiles: they reduce the rows' scale bytes to the
// 32 x 32 bmax and write each feature's 32 tile scales, 128 bytes. The
// jobs read the source scales a second time (1/17 of the source's bytes)
// with evict_last, so that the data CTAs of the same tokens, which come
// later, find them in L2.
// H200, M = 32768, K = 7168: 100.8 us tuned against 108.4 with clusters;
// at M = 131072 clusters stay faster, 424.9 against 435.1 us
// (docs/perf/tune-2026-11-30-session16.log; docs/performance.md).
//
// Ragged (untouched capacity tail): a job is 32 consecutive tiles (scale
// columns) x 1024 features. Its tiles' tokens come from the CTA's group
// lookup, which collects them in the same scan (locate_tile); tiles past
// the groups' own are not written.
//
// Whole sectors: where the row_major stride is not a multiple of 8 scale
// columns (ragged, or cdiv(M, 128) % 8 != 0), a feature's 32 scales from
// the job's first tile would start inside an L2 sector whose other part the
// previous job writes, and partly written sectors cost DRAM reads: at 256
// groups (stride 766) the jobs' scale stores took 8.6 us of 155, 4.0 more
// than with sector-aligned rows (docs/perf/probe-2026-11-30-session17.log).
// So each feature's window of 32 scales starts at the sector boundary at or
// before the job's first tile, up to 7 tiles back, and a job also reduces
// the 8 tiles before its own (kJobLead) for them.
//
//===----------------------------------------------------------------------===//
#ifndef QCT_DEVICE_SCALE_JOBS_CUH
#define QCT_DEVICE_SCALE_JOBS_CUH

#include "qct/device/col_pass.cuh"
#include "qct/device/ragged.cuh"

namespace qct {
namespace dev {

/// Tokens (32 tiles) and features (32 MX blocks) of one scale job, and the
/// tiles before its own that it reduces for sector-aligned stores (see the
/// header). (An enum: a namespace-scope constexpr variable is emitted as a
/// device global into every kernel's module, which changes every cubin.)
enum : int { kJobTokens = 4096, kJobFeatures = 1024, kJobLead = 8 };

/// Whether a tile-family kernel writes its row_major col scales with scale
/// jobs: the aligned pass, no cluster, and CTAs of one 128-token M tile.
/// (Under the register caps of several M tiles or half tiles,
/// tile_min_blocks, the job's loads in flight spilled; those schedules keep
/// their own stores.) Ragged only with the capacity tail untouched: no
/// bundled or coverage spec has an aligned ragged kernel that zeroes it, so
/// the tail tiles' scales keep their own stores there.
template <typename Cfg, int CLUSTER_M, int M_TILES, int TILE_M>
QCT_HD constexpr bool uses_scale_jobs() {
  return CLUSTER_M == 1 && M_TILES == 1 && TILE_M == 128 &&
         (!Cfg::ragged::enabled || !Cfg::ragged::zero_tail) &&
         ColPlan<Cfg>::aligned_e2m1 && Cfg::any_row_major_col();
}

/// Whether a job's feature windows reach back into the tiles before its own:
/// the row_major stride (scale columns) is not a multiple of a sector's 8.
QCT_HD bool jobs_lead(i64 stride) { return stride % 8 != 0; }

/// The scale jobs along the tiles of a kernel of `tiles` 128-token tiles
/// (dense: cdiv(M, 128); ragged: the grid's) and row_major stride `stride`.
/// With a lead, one more where the last job's windows end before `tiles`
/// (the next job's lead writes the rest). At most `tiles`: every job has a
/// CTA.
QCT_HD i64 scale_jobs_along(i64 tiles, i64 stride) {
  return (tiles + (jobs_lead(stride) ? kJobLead : 0) + 31) / 32;
}

/// The scale jobs of such a kernel with K features; jobs along the tiles
/// vary fastest.
QCT_HD i64 scale_jobs(i64 tiles, i64 K, i64 stride) {
  return scale_jobs_along(tiles, stride) *
         ((K + kJobFeatures - 1) / kJobFeatures);
}

/// The job tile (0..31) whose tokens this thread reduces: a tile's
/// THREADS / 32 threads are consecutive lanes.
template <int THREADS> QCT_HD int job_tile_of(int thread) {
  return thread / (THREADS / 32);
}

/// The lead tile (0..7: the job's first tile - 8 + that) whose tokens this
/// thread reduces: THREADS / 8 consecutive threads each.
template <int THREADS> QCT_HD int job_lead_tile_of(int thread) {
  return thread / (THREADS / kJobLead);
}

/// How many tiles before the job's first tile its window of 32 scales in
/// scale row `row` (a feature) of `stride` columns starts: back to the
/// sector boundary at or before it, 0 to 7 (0 without a lead).
QCT_HD int job_window_back(i64 row, i64 stride) {
  return (int)((row * stride) & 7);
}

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
/// This CTA's scale job, if it has one. The first scale_jobs(tiles, K,
/// stride) CTAs of the grid in launch order (x fastest) each run one, jobs
/// along the tiles varying fastest.
struct ScaleJob {
  bool has; // this CTA runs a job
  i64 j;    // the CTA's index in launch order (its job's, if it has one)
  i64 jm;   // jobs along the tiles
  /// The job's first tile (row_major scale column).
  QCT_DEV i64 tile0() const { return j % jm * 32; }
  /// Its MX blocks from 32 * fb() (features from 1024 * fb()).
  QCT_DEV i64 fb() const { return j / jm; }
};

QCT_DEV ScaleJob scale_job_of_cta(i64 tiles, i64 K, i64 stride) {
  const i64 j = (i64)blockIdx.y * gridDim.x + blockIdx.x;
  return {j < scale_jobs(tiles, K, stride), j, scale_jobs_along(tiles, stride)};
}

/// Folds the source scale bytes of `rows` token rows from row0, MX blocks
/// b0..b0+nb-1 (nb <= 32), into mx: per block, the unsigned byte maximum of
/// (byte + 1). Adding 1 wraps 0xFF (no finite scale, which bmax skips) to 0,
/// so the maximum is bmax + 1, and 0 where no row has a finite scale.
template <int UNROLL>
QCT_DEV void fold_scale_rows(const u8 *sc, i64 KB, i64 b0, int nb, i64 row0,
                             int rows, u32 (&mx)[8]) {
  if (KB % 16 == 0 && nb % 16 == 0) {
    // Every row's bytes are 16-byte aligned and the job takes 1 or 2 whole
    // 16-byte chunks of each (K a multiple of 512).
#pragma unroll UNROLL
    for (int r = 0; r < rows; ++r) {
      const uint4 *p =
          reinterpret_cast<const uint4 *>(sc + (row0 + r) * KB + b0);
#pragma unroll
      for (int c = 0; c < 2; ++c) {
        if (16 * c < nb) {
          const uint4 v = load_shared_scale16(p + c);
          mx[4 * c] = __vmaxu4(mx[4 * c], __vadd4(v.x, 0x01010101u));
          mx[4 * c + 1] = __vmaxu4(mx[4 * c + 1], __vadd4(v.y, 0x01010101u));
          mx[4 * c + 2] = __vmaxu4(mx[4 * c + 2], __vadd4(v.z, 0x01010101u));
          mx[4 * c + 3] = __vmaxu4(mx[4 * c + 3], __vadd4(v.w, 0x01010101u));
        }
      }
    }
  } else {
    // Other K: byte loads.
#pragma unroll 1
    for (int r = 0; r < rows; ++r) {
      const u8 *p = sc + (row0 + r) * KB + b0;
#pragma unroll
      for (int b = 0; b < 32; ++b)
        if (b < nb)
          mx[b / 4] =
              __vmaxu4(mx[b / 4], ((load_shared_scale(p + b) + 1u) & 0xFFu)
                                      << (8 * (b % 4)));
    }
  }
}

/// Folds the scale bytes of this thread's R rows of tile `tt` (its
/// threadIdx.x % (128 / R)-th run of R rows) into mx, reduces them over the
/// tile's 128 / R consecutive lanes, and has the first of those lanes store
/// them at s_b[slot * SW ..] (8 words).
template <int R, int UNROLL, int SW>
QCT_DEV void reduce_job_tile(const u8 *sc, i64 KB, i64 b0, int nb,
                             TileTokens tt, u32 *s_b, int slot) {
  constexpr int TPT = 128 / R; // threads per tile
  u32 mx[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  const int sub = (int)(threadIdx.x % TPT) * R; // first row in the tile
  const int left = tt.nt - sub; // rows of this thread's R in the tile
  const int rows = left <= 0 ? 0 : (left < R ? left : R);
  fold_scale_rows<UNROLL>(sc, KB, b0, nb, tt.t0 + sub, rows, mx);
#pragma unroll
  for (int o = 1; o < TPT; o <<= 1)
#pragma unroll
    for (int i = 0; i < 8; ++i)
      mx[i] = __vmaxu4(mx[i], __shfl_xor_sync(0xFFFFFFFFu, mx[i], o));
  if (threadIdx.x % TPT == 0)
#pragma unroll
    for (int i = 0; i < 8; ++i)
      s_b[slot * SW + i] = mx[i];
}

/// One scale job of a kernel with THREADS threads: feature blocks of 32
/// from 32 * fb, tiles (row_major scale columns) tile0..tile0+31, of which
/// those below tile_end are written, `stride` columns per scale row; with a
/// lead (jobs_lead(stride)), each feature's window of 32 starts at the sector
/// boundary at or before tile0 (see the header). `mine` is the tokens of this
/// thread's tile, tile0 + job_tile_of<THREADS>, and `lead` of its lead tile,
/// tile0 - 8 + job_lead_tile_of<THREADS> (read only with a lead and tile0 >
/// 0). It uses the first 1440 bytes of the dynamic shared memory and ends
/// with a barrier, after which the CTA's tiles may use it.
template <typename Cfg, int THREADS>
QCT_DEV void run_scale_job(const qct_kernel_args &args, i64 K, i64 fb,
                           i64 tile0, i64 tile_end, i64 stride, TileTokens mine,
                           TileTokens lead) {
  static_assert(THREADS == 128 || THREADS == 256,
                "scale jobs: 128 or 256 threads");
  constexpr int NW = THREADS / 32;
  constexpr int SW = 9;  // shared words per tile: 8, padded (no conflicts)
  const i64 KB = K / 32; // scale bytes per token row
  const i64 b0 = fb * 32;
  const int nb = KB - b0 < 32 ? (int)(KB - b0) : 32; // the job's MX blocks
  const u8 *sc = static_cast<const u8 *>(args.src_scales);
  extern __shared__ __align__(16) u8 smem[];
  // Per tile, bmax + 1 per MX block as bytes: [8 lead + 32 tiles][SW words].
  u32 *s_b = reinterpret_cast<u32 *>(smem);
  reduce_job_tile<kJobTokens / THREADS, 4, SW>(
      sc, KB, b0, nb, mine, s_b, kJobLead + job_tile_of<THREADS>(threadIdx.x));
  const bool lead_in = jobs_lead(stride) && tile0 > 0; // uniform
  if (lead_in)
    reduce_job_tile<kJobLead * 128 / THREADS, 4, SW>(
        sc, KB, b0, nb, lead, s_b, job_lead_tile_of<THREADS>(threadIdx.x));
  __syncthreads();
  // Each warp store is one feature's 32 tile scales: 128 bytes from a
  // sector boundary (a whole line where the stride is a multiple of 32).
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
#pragma unroll 1
  for (int blk = 0; blk < nb; ++blk) {
    static_for<0, Cfg::num_outputs>([&](auto oi) {
      using O = typename Cfg::template out<decltype(oi)::value>;
      if constexpr (O::col && O::scale_layout == ScaleLayout::row_major) {
        u32 *out = static_cast<u32 *>(args.out_scales[decltype(oi)::value]);
#pragma unroll
        for (int f = warp; f < 32; f += NW) {
          const i64 row = (b0 + blk) * 32 + f;
          const int back = job_window_back(row, stride);
          const i64 tile = tile0 - back + lane;
          const u8 *sb =
              reinterpret_cast<const u8 *>(s_b + (kJobLead - back + lane) * SW);
          const int bm = (int)sb[blk] - 1;
          if (tile >= 0 && tile < tile_end)
            out[row * stride + tile] =
                pow2_f32_bits(aligned_scale_exp(bm, 2, O::T::elem().emax));
        }
      }
    });
  }
  __syncthreads(); // the CTA's tiles reuse the shared memory
}
#endif // CUDA

} // namespace dev
} // namespace qct

#endif // QCT_DEVICE_SCALE_JOBS_CUH
