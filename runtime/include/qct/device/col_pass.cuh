//===- qct/device/col_pass.cuh - Fast column passes of the tile family ----===//
//
// The generic column pass (tile_kernel.cuh) gathers 16 tokens of one feature
// with 16 narrow shared-memory loads and quantizes them element by element;
// at 20+ ALU instructions per element it makes the tile family compute-bound.
// Two common col outputs get a pass of their own, used when every col output
// of the kernel qualifies (ColPlan):
//
//  - aligned e2m1 -> fp8 (mxfp4 source, `aligned` scale). A col FP8 block is
//    128 tokens of one feature; its scale exponent comes from bmax, the
//    largest source scale byte of those tokens in the feature's MX block, so
//    all 32 features of an MX block share it, and token t's shift
//    k_t = b_t - 127 - se is shared by its 32 features. So the tile is
//    converted in the ROW orientation, straight from the load registers, with
//    the row path's byte table (aligned_e2m1_block: 8 table bytes, one prmt
//    per 4 codes), after a block-wide bmax per MX block; the fp8 bytes go to
//    shared memory and are transposed there: each lane reads 16 tokens x 4
//    features as 16 32-bit words and transposes 4x4 byte blocks with prmt
//    (transpose4x4_bytes), then stores one 16-byte run per feature.
//  - bf16 -> fp8 `pow2` col. A lane reads 32-bit words (2 features) of 16
//    tokens, takes the packed |x| maximum with a 16x2 SIMD max, reduces over
//    the 8 lanes of the 128 tokens, derives the pow2 exponent with one integer
//    add (pow2_exp_from_bits) and converts token pairs of each feature with
//    one cvt. NaN/Inf (rare) take a slow branch with the exact rules of
//    quantize_hp (amax ignores NaN and counts Inf as max_F; NaN keeps its
//    sign, Inf saturates).
//
// Shared-memory layouts and their bank behaviour are in docs/device-library.md.
//
//===----------------------------------------------------------------------===//
#ifndef QCT_DEVICE_COL_PASS_CUH
#define QCT_DEVICE_COL_PASS_CUH

#include "qct/device/quant.cuh"
#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#include "qct/device/memory.cuh" // (the device stores of store_scale_run
                                 // and store_piece)
#endif

namespace qct {
namespace dev {

//===----------------------------------------------------------------------===//
// Host-testable helpers
//===----------------------------------------------------------------------===//

/// Transposes a 4x4 byte matrix: x[i] holds row i (byte j = column j); on
/// return x[j] holds column j (byte i = row i). Eight prmt.
QCT_HD void transpose4x4_bytes(u32 (&x)[4]) {
  const u32 t0 = prmt(x[0], x[1], 0x5140u); // x0.b0 x1.b0 x0.b1 x1.b1
  const u32 t1 = prmt(x[0], x[1], 0x7362u); // x0.b2 x1.b2 x0.b3 x1.b3
  const u32 t2 = prmt(x[2], x[3], 0x5140u);
  const u32 t3 = prmt(x[2], x[3], 0x7362u);
  x[0] = prmt(t0, t2, 0x5410u);
  x[1] = prmt(t0, t2, 0x7632u);
  x[2] = prmt(t1, t3, 0x5410u);
  x[3] = prmt(t1, t3, 0x7632u);
}

// vmax_u16x2 (per-halfword unsigned maximum) is in codecs.cuh.

/// One lane's share of the bf16 pow2 amax: the per-feature (low/high half)
/// maximum of |x| over 16 words of 2 bf16 features; `special` says an Inf
/// or NaN was among them, in which case NaN counts 0 and Inf max_F (bf16
/// bits maxf16), the rule of quantize_hp. The lanes' results combine with
/// vmax_u16x2.
QCT_HD u32 bf16x2_amax(const u32 (&x)[16], u32 maxf16, bool &special) {
  u32 a = 0;
#pragma unroll
  for (int i = 0; i < 16; ++i)
    a = vmax_u16x2(a, x[i] & 0x7FFF7FFFu);
  special = (a & 0xFFFFu) >= 0x7F80u || (a >> 16) >= 0x7F80u;
  if (special) {
    a = 0;
#pragma unroll
    for (int i = 0; i < 16; ++i) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const u32 e = bf16_amax_operand((x[i] >> (16 * h)) & 0x7FFFu, maxf16);
        a = vmax_u16x2(a, e << (16 * h));
      }
    }
  }
  return a;
}

/// The fp8 codes of feature H (0: low halves, 1: high halves) of 16 words
/// of bf16 pairs, scaled by f = 2^-e: token pairs through one cvt each, and
/// if `special`, NaN -> NaN code with its sign and Inf -> +-max (the rules
/// of fp8_round_pairs). q[k] holds tokens 4k..4k+3.
template <bool E5M2, int H>
QCT_HD void bf16_pow2_fp8_run(const u32 (&x)[16], float f, bool special,
                              u32 (&q)[4]) {
  auto val = [&](u32 w) {
    return bits_f32(H ? (w & 0xFFFF0000u) : (w << 16)) * f;
  };
#pragma unroll
  for (int k = 0; k < 4; ++k)
    q[k] = fp8x2_from_f32<E5M2>(val(x[4 * k]), val(x[4 * k + 1])) |
           (fp8x2_from_f32<E5M2>(val(x[4 * k + 2]), val(x[4 * k + 3])) << 16);
  if (special) {
#pragma unroll
    for (int i = 0; i < 16; ++i)
      put_fp8_code_of_bf16_special<E5M2>(q, i, (x[i] >> (16 * H)) & 0xFFFFu);
  }
}

/// How a CTA that owns MT consecutive 128-token tiles (QCT_M_TILES) writes
/// one feature's n <= MT row_major f32 scales, which are consecutive
/// elements from address element index a (byte address / 4): as few stores
/// as their alignment allows, since the L2 handles each store of a lane as
/// its own request (a feature's scales are cdiv(M,128)*4 bytes from the
/// next feature's). `quad`: one 16-byte store; else bit p of `pairs` is an
/// 8-byte store of positions p, p+1 and bit p of `singles` a 4-byte store
/// of position p. Pairs start where a + p is even, so the positions that a
/// pair does not cover are the first (a odd) and the last (n - p odd).
struct ScaleRunPlan {
  bool quad;
  u32 pairs;
  u32 singles;
};

template <int MT> QCT_HD ScaleRunPlan scale_run_plan(u64 a, int n) {
  static_assert(MT == 1 || MT == 2 || MT == 4, "QCT_M_TILES: 1, 2, 4");
  ScaleRunPlan p = {MT == 4 && n == 4 && (a & 3) == 0, 0u, 0u};
  if (p.quad)
    return p;
#pragma unroll
  for (int i = 0; i + 1 < MT; ++i)
    if (i + 2 <= n && ((a + i) & 1) == 0)
      p.pairs |= 1u << i;
  p.singles = ((1u << n) - 1) & ~(p.pairs | (p.pairs << 1));
  return p;
}

/// Writes s[0..n) to the consecutive f32 scales at dst (n <= MT) with the
/// stores of scale_run_plan: vector stores on the device, word by word on
/// the host (where the tests check which positions the plan writes).
template <int MT>
QCT_HD void store_scale_run(u32 *dst, const u32 (&s)[MT], int n) {
  const ScaleRunPlan p = scale_run_plan<MT>(reinterpret_cast<u64>(dst) >> 2, n);
#if defined(__CUDA_ARCH__)
  // A feature's scales of MT M tiles: part of a sector that the next M
  // tiles' CTAs complete (memory.cuh, store_partial_scale).
  if constexpr (MT == 4) {
    if (p.quad) {
      store_partial_scales<4>(dst, s);
      return;
    }
  }
#pragma unroll
  for (int i = 0; i + 1 < MT; ++i)
    if ((p.pairs >> i) & 1)
      store_partial_scales<2>(dst + i, s + i);
#pragma unroll
  for (int i = 0; i < MT; ++i)
    if ((p.singles >> i) & 1)
      store_partial_scale(dst + i, s[i]);
#else
  const u32 cover =
      p.quad ? 0xFu : p.pairs | (p.pairs << 1) | p.singles; // positions
  for (int i = 0; i < MT; ++i)
    if ((cover >> i) & 1)
      dst[i] = s[i];
#endif
}

/// Realigned column runs. A lane of a fast column pass stores a feature's 16
/// codes of tokens 16c.. (its run c) as one 16-byte store; in a dense [K, M]
/// col output a feature row starts at f * M bytes, so where M is not a
/// multiple of 16 those stores are misaligned and fall back to 4- and 1-byte
/// pieces (10x the time at M odd on the H200, docs/performance.md). There
/// the pass stores aligned chunks instead: the run of a tile's RUNS * 16
/// columns of one feature (its first byte mis = 1..15 bytes past a 16-byte
/// boundary) spans the aligned chunks 0..RUNS, chunk t holding tokens
/// 16t - mis .. 16t - mis + 15 (the tokens outside the tile, which other CTAs
/// own, not stored), so that only chunks 0 and RUNS are partial. A lane
/// gathers its chunk's codes from the tile in shared memory
/// (realigned_chunk_row), which costs registers only for the 4 words it
/// stores: the fast passes run at register caps.
///
/// The tile row that holds byte k of chunk t, clamped to the tile (a byte of
/// a clamped row lies outside realigned_chunk_span and is not stored).
template <int TILE_M> QCT_HD int realigned_chunk_row(int t, int mis, int k) {
  const int r = 16 * t - mis + k;
  return r < 0 ? 0 : (r >= TILE_M ? TILE_M - 1 : r);
}

/// The bytes [lo, hi) of aligned chunk t of a realigned run that starts mis
/// bytes into chunk 0 and has n owned bytes (the tile's columns): the run's
/// bytes [16t - mis, 16t - mis + 16) within [0, n). Empty (lo == hi) when
/// the chunk holds none of them; mis 0 gives the lanes' own runs.
struct ChunkSpan {
  int lo;
  int hi;
};

QCT_HD ChunkSpan realigned_chunk_span(int t, int mis, int n) {
  const int first = 16 * t - mis; // the run byte at the chunk's byte 0
  const int lo = first < 0 ? -first : 0;
  const int hi = n - first < 16 ? n - first : 16;
  return {lo, hi < lo ? lo : hi};
}

/// One aligned store of Bytes (1, 2, 4, 8 or 16) from words w at p: on the
/// device memory.cuh's plain stores, on the host a byte copy (little-endian,
/// as the device), where the tests check what a chunk's stores write.
template <int Bytes> QCT_HD void store_piece(u8 *p, const u32 *w) {
#if defined(__CUDA_ARCH__)
  if constexpr (Bytes == 1)
    *p = (u8)w[0];
  else
    store_words<Bytes, /*Stream=*/false>(p, w);
#else
  const u8 *b = reinterpret_cast<const u8 *>(w);
  for (int i = 0; i < Bytes; ++i)
    p[i] = b[i];
#endif
}

/// Stores bytes [lo, hi) of the 16-byte chunk w at the 16-byte-aligned p
/// with the widest aligned stores that cover exactly those bytes (one
/// 16-byte store for a whole chunk, else pieces of 8, 4, 2 and 1 bytes: at
/// most 4 for a run's head or tail chunk, 6 for a run shorter than a chunk):
/// the bytes outside, which another CTA may own, are not written.
/// A loop, not unrolled: the partial chunks are two of a run's RUNS + 1, and
/// the code is part of every fast col pass's compile time.
QCT_HD void store_chunk_bytes(u8 *p, const u32 (&w)[4], int lo, int hi) {
  if (lo == 0 && hi == 16) {
    store_piece<16>(p, w);
    return;
  }
  const u64 half[2] = {(u64)w[0] | ((u64)w[1] << 32),
                       (u64)w[2] | ((u64)w[3] << 32)};
#pragma unroll 1
  for (int b = lo; b < hi;) {
    const u64 v = (b < 8 ? half[0] : half[1]) >> (8 * (b & 7));
    const u32 piece[2] = {(u32)v, (u32)(v >> 32)};
    if ((b & 7) == 0 && b + 8 <= hi) {
      store_piece<8>(p + b, piece);
      b += 8;
    } else if ((b & 3) == 0 && b + 4 <= hi) {
      store_piece<4>(p + b, piece);
      b += 4;
    } else if ((b & 1) == 0 && b + 2 <= hi) {
      store_piece<2>(p + b, piece);
      b += 2;
    } else {
      store_piece<1>(p + b, piece);
      b += 1;
    }
  }
}

/// Makes and stores chunk t of a realigned run (run: its first byte, n
/// owned bytes), unless it holds none of them: make_chunk(row_of, w) writes
/// the chunk's 16 fp8 codes to w, byte k the code of tile row row_of(k).
/// Shared by the host tests and the device passes.
template <int TILE_M, typename MakeChunk>
QCT_HD void store_realigned_chunk(u8 *run, int n, int t,
                                  const MakeChunk &make_chunk) {
  const int mis = (int)(reinterpret_cast<u64>(run) & 15);
  const ChunkSpan span = realigned_chunk_span(t, mis, n);
  if (span.hi <= span.lo)
    return;
  u32 w[4];
  make_chunk([&](int k) { return realigned_chunk_row<TILE_M>(t, mis, k); }, w);
  store_chunk_bytes(run - mis + 16 * t, w, span.lo, span.hi);
}

/// A make_chunk of store_realigned_chunk for codes already in a tile:
/// code_of(row) has the code of tile row `row` in its low byte.
template <typename CodeOf> struct GatherCodes {
  const CodeOf &code_of;
  template <typename RowOf>
  QCT_HD void operator()(const RowOf &row_of, u32 (&w)[4]) const {
#pragma unroll
    for (int i = 0; i < 4; ++i)
      w[i] = 0;
#pragma unroll
    for (int k = 0; k < 16; ++k)
      w[k / 4] |= (code_of(row_of(k)) & 0xFFu) << (8 * (k % 4));
  }
};

template <typename CodeOf>
QCT_HD GatherCodes<CodeOf> gather_codes(const CodeOf &code_of) {
  return {code_of};
}

/// A make_chunk of store_realigned_chunk for the bf16 pow2 pass: the fp8
/// codes of feature h (0: the low halves) of the tile rows' bf16 pairs,
/// word_of(row), scaled by f, with bf16_pow2_fp8_run's NaN/Inf rules where
/// the chunk holds one. h is a run-time value, so that one copy of the code
/// serves both features of a pair.
template <bool E5M2, typename WordOf> struct Bf16Pow2Chunk {
  const WordOf &word_of;
  int h;
  float f;
  template <typename RowOf>
  QCT_HD void operator()(const RowOf &row_of, u32 (&q)[4]) const {
    u32 x[16]; // feature h's code in the low half
    bool special = false;
#pragma unroll
    for (int k = 0; k < 16; ++k) {
      x[k] = word_of(row_of(k)) >> (16 * h);
      special |= (x[k] & 0x7FFFu) >= 0x7F80u;
    }
    bf16_pow2_fp8_run<E5M2, 0>(x, f, special, q);
  }
};

template <bool E5M2, typename WordOf>
QCT_HD Bf16Pow2Chunk<E5M2, WordOf> bf16_pow2_chunk(const WordOf &word_of, int h,
                                                   float f) {
  return {word_of, h, f};
}

//===----------------------------------------------------------------------===//
// Which col outputs take a fast pass
//===----------------------------------------------------------------------===//

template <typename Cfg, int I> struct ColKind {
  using O = typename Cfg::template out<I>;
  static constexpr bool aligned_e2m1 =
      O::col && Cfg::src::fmt == Fmt::mxfp4 &&
      Cfg::template path_of<O>() == ValuePath::aligned;
  static constexpr bool bf16_pow2 = O::col && Cfg::src::fmt == Fmt::bf16 &&
                                    O::T::fp8 && O::scale == Scale::pow2;
};

/// The column pass a kernel takes: a fast one when every col output
/// qualifies for it, else the generic one for all.
template <typename Cfg> struct ColPlan {
  template <int I = 0> static constexpr bool all_aligned_e2m1() {
    if constexpr (I == Cfg::num_outputs)
      return true;
    else
      return (!Cfg::template out<I>::col || ColKind<Cfg, I>::aligned_e2m1) &&
             all_aligned_e2m1<I + 1>();
  }
  template <int I = 0> static constexpr bool all_bf16_pow2() {
    if constexpr (I == Cfg::num_outputs)
      return true;
    else
      return (!Cfg::template out<I>::col || ColKind<Cfg, I>::bf16_pow2) &&
             all_bf16_pow2<I + 1>();
  }
  static constexpr bool aligned_e2m1 = Cfg::any_col && all_aligned_e2m1();
  static constexpr bool bf16_pow2 = Cfg::any_col && all_bf16_pow2();
};

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
} // namespace dev
} // namespace qct

#include "qct/device/memory.cuh"
#include "qct/kernel_args.h"

namespace qct {
namespace dev {

//===----------------------------------------------------------------------===//
// Stores shared by the fast passes
//===----------------------------------------------------------------------===//

/// Geometry the column stores need (a subset of TileGeom, plus the output
/// extents).
struct ColStoreGeom {
  i64 col0;   // first output column of the tile
  int ncols;  // columns owned by the tile (tokens + padding)
  int nt;     // tokens present
  i64 C;      // columns of the col outputs
  i64 K;      // features
  i64 scols;  // 128-block scale columns (row_major stride)
  i64 sb;     // first owned 128-block scale column
  int nb;     // 128-block scale columns owned (0 or 1)
};

/// The first byte of feature kf's run in col output OI.
QCT_DEV u8 *col_run_start(const qct_kernel_args &args, int OI,
                          const ColStoreGeom &g, i64 kf) {
  return static_cast<u8 *>(args.out[OI]) + kf * g.C + g.col0;
}

/// Feature kf's block scale, from the lane of run 0, unless the CTA buffers
/// the scales of several M tiles (kScale false: the caller writes them after
/// its loops).
template <typename O, bool kScale = true>
QCT_DEV void store_fp8_col_scale(const qct_kernel_args &args, int OI,
                                 const ColStoreGeom &g, i64 kf, int c,
                                 u32 scale) {
  if (kScale && c == 0 && g.nb > 0) {
    constexpr bool row_major = O::scale_layout == ScaleLayout::row_major;
    const i64 idx =
        row_major ? kf * g.scols + g.sb : g.sb * ((g.K + 3) / 4 * 4) + kf;
    // row_major: part of a sector (memory.cuh, store_partial_scale).
    store_block_scale<false, row_major>(args.out_scales[OI], idx,
                                        g.nt > 0 ? scale : 0x3F800000u);
  }
}

/// Stores the 16 fp8 codes w (tokens 16c.., 4 per word) of feature kf and
/// its block scale (store_fp8_col_scale).
template <typename O, bool kScale = true>
QCT_DEV void store_fp8_col_run(const qct_kernel_args &args, int OI,
                               const ColStoreGeom &g, i64 kf, int c,
                               const u32 (&w)[4], u32 scale) {
  const int r0 = 16 * c;
  const int left = g.ncols - r0;
  const int n = left < 0 ? 0 : (left < 16 ? left : 16);
  if (n > 0)
    store_bytes<16, /*Stream=*/false>(col_run_start(args, OI, g, kf) + r0, w,
                                      n);
  store_fp8_col_scale<O, kScale>(args, OI, g, kf, c, scale);
}

/// Whether some run of the tile's features may start off a 16-byte boundary
/// (a col output of C columns, C % 16 != 0, or a ragged tile at a column
/// that is not a multiple of 16): the fast passes then store realigned
/// chunks (store_realigned_chunk).
QCT_DEV bool col_runs_misaligned(const ColStoreGeom &g) {
  return ((g.C | g.col0) & 15) != 0;
}

//===----------------------------------------------------------------------===//
// aligned e2m1 -> fp8 col
//===----------------------------------------------------------------------===//

/// Stores the mn_major block scales of an aligned col output for the tile's
/// features k0..k0+TILE_K (g owns the 128-block: g.nb > 0). They are
/// contiguous (element g.sb * rup(K, 4) + kf), and all 32 features of an MX
/// block share one scale (its bmax, bmax_of(block)), so TILE_K / 4 lanes
/// each write 4 features' scales as soon as the block exponents are known,
/// instead of one 4-byte store per feature from the lanes of the column runs.
/// NVRTC (and nvcc) compile the uint4 store of four equal words as four
/// 4-byte stores. On the H200 the width did not matter: two 8-byte PTX
/// stores, streaming stores or one 4-byte store per lane ran within 0.6 us,
/// and a 16-byte PTX store with a "memory" clobber 4% slower in the ragged
/// kernel (docs/perf/probe-2026-11-30-session14.log sections 3 and 5).
template <int EMAX, int THREADS, int TILE_K, typename BmaxOf>
QCT_DEV void store_aligned_scale_quads(void *scales, const ColStoreGeom &g,
                                       i64 k0, const BmaxOf &bmax_of) {
  const i64 row = g.sb * ((g.K + 3) / 4 * 4);
#pragma unroll 1
  for (int i = threadIdx.x; i < TILE_K / 4; i += THREADS) {
    const i64 kf = k0 + 4 * i;
    if (kf >= g.K)
      break; // K is a multiple of 32: a quad is valid or not
    const u32 s = g.nt > 0 ? pow2_f32_bits(aligned_scale_exp(
                                 bmax_of((4 * i) / 32), 2, EMAX))
                           : 0x3F800000u;
    *reinterpret_cast<uint4 *>(static_cast<u32 *>(scales) + row + kf) =
        make_uint4(s, s, s, s);
  }
}

/// The fast pass for an mxfp4 source whose col outputs are all `aligned`
/// fp8, on TILE_M (128 or 64) tokens of a 128-token tile. sv[u] are the
/// tile's load registers (vector u of the thread: row (tid + u*THREADS) /
/// NV, MX block (tid + u*THREADS) % NV); s_f8 is the fp8 tile in shared
/// memory, TILE_M rows of TILE_K + 16 bytes whose 16-byte chunks are
/// XOR-swizzled with (row / 16) << (QS - 2) (conflict-free 32-bit column
/// reads and 16-byte row writes; docs/device-library.md). A CTA that runs
/// the pass on several tiles passes their index parity as `slot`: the
/// per-warp bmax words are double-buffered, so the next tile's partials may
/// be written while slow warps still read this tile's (its first barrier
/// orders everything else). With MBUF (a CTA of several M tiles or of a
/// cluster, docs/device-library.md) every thread passes the bmax of its MX
/// block (threadIdx.x % (TILE_K / 32)) to bmax_sink, after the pass's first
/// barrier, and row_major scales are not stored here (store_m_scales or
/// store_cluster_scales write them after the CTA's loops). With JOBS
/// neither: the kernel's scale jobs write them (scale_jobs.cuh). With TILE_M 64
/// the 1x128 block's other 64 tokens belong to the sibling CTA: `m_other` is
/// this thread's share of their bmax (the largest of their scale bytes of
/// its MX block, as the caller read them; -1 if none), and g is the half's
/// geometry (its own block scale only in the first half's: g.nb).
template <typename Cfg, int THREADS, int TILE_K, int TILE_M = 128,
          bool MBUF = false, bool JOBS = false, typename Vec,
          typename BmaxSink = int>
QCT_DEV void
aligned_e2m1_col_pass(const qct_kernel_args &args,
                      const Vec (&sv)[TILE_M * (TILE_K / 32) / THREADS],
                      const ColStoreGeom &g, i64 k0, u8 *s_f8, int slot = 0,
                      int m_other = -1, const BmaxSink &bmax_sink = 0) {
  static_assert(TILE_M == 128 || TILE_M == 64, "QCT_TILE_M: 128, 64");
  constexpr int NV = TILE_K / 32;            // MX blocks (16-byte vectors)
  constexpr int LOADS = TILE_M * NV / THREADS; // vectors per thread
  constexpr int RSF = TILE_K + 16;           // fp8 row stride (bytes)
  constexpr int CM = TILE_K / 16 - 1;        // chunk swizzle mask
  constexpr int NW = THREADS / 32;
  constexpr int NQ = TILE_K / 4;             // feature quads
  constexpr int RUNS = TILE_M / 16;          // 16-token runs of a feature
  // A warp's column reads cover 32 / RUNS quads x RUNS runs; run c's word
  // index is XORed with c << QS so that they hit 32 distinct banks.
  constexpr int QS = RUNS == 8 ? 2 : 3;
  static_assert(THREADS % NV == 0, "a thread's vectors share one MX block");
  static_assert(TILE_M == 128 || (RUNS - 1) << (QS - 2) <= CM,
                "QCT_TILE_M 64 needs 8 chunks per row (TILE_K >= 128)");
  __shared__ int s_bmax2[2][NW][NV];
  int(*s_bmax)[NV] = s_bmax2[slot];

  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int v = threadIdx.x % NV;
  const bool kvalid = k0 + v * 32 < g.K; // K is a multiple of 32

  // bmax of MX block v over the tile's tokens (0xFF and absent rows
  // excluded): lanes with the same v, then warps.
  int m = m_other;
#pragma unroll
  for (int u = 0; u < LOADS; ++u) {
    const int r = (threadIdx.x + u * THREADS) / NV;
    const int b = (int)sv[u].scale;
    const int bi = r < g.nt && kvalid && b != 0xFF ? b : -1;
    m = bi > m ? bi : m;
  }
#pragma unroll
  for (int o = NV; o < 32; o <<= 1) {
    const int w = __shfl_xor_sync(0xFFFFFFFFu, m, o);
    m = w > m ? w : m;
  }
  if (lane < NV)
    s_bmax[warp][lane] = m;
  __syncthreads();
  auto bmax_of = [&](int vb) {
    int bm = -1;
#pragma unroll
    for (int w = 0; w < NW; ++w) {
      const int x = s_bmax[w][vb];
      bm = x > bm ? x : bm;
    }
    return bm;
  };
  const int bmax_mine = bmax_of(v);
  if constexpr (MBUF)
    bmax_sink(bmax_mine);

  bool first = true;
  static_for<0, Cfg::num_outputs>([&](auto oi) {
    constexpr int OI = decltype(oi)::value;
    using O = typename Cfg::template out<OI>;
    if constexpr (O::col) {
      constexpr FloatFmt F = O::T::elem();
      if (!first)
        __syncthreads(); // the previous output's reads are done
      first = false;
      // mn_major scales: from a quarter of the lanes, before the
      // conversion (store_aligned_scale_quads); row_major ones below,
      // with the column runs, or after the CTA's tiles (MBUF).
      constexpr bool kQuads = O::scale_layout == ScaleLayout::mn_major;
      if constexpr (kQuads)
        if (g.nb > 0)
          store_aligned_scale_quads<F.emax, THREADS, TILE_K>(
              args.out_scales[OI], g, k0, bmax_of);
      // Row orientation: token r's 32 codes of block v -> 32 fp8 bytes.
      const int se = aligned_scale_exp(bmax_mine, 2, F.emax);
#pragma unroll
      for (int u = 0; u < LOADS; ++u) {
        const int r = (threadIdx.x + u * THREADS) / NV;
        // Absent tokens (group padding, a partial last tile) are zero codes;
        // a warp whose rows are all absent skips the conversion (most of a
        // ragged kernel's partial tiles).
        u32 w[8] = {0, 0, 0, 0, 0, 0, 0, 0};
        if (r < g.nt) {
          aligned_e2m1_block<O::e5m2>(sv[u].raw.w, sv[u].scale, se, w);
        }
        // 16-byte chunks 2v, 2v+1 of row r; a store instruction's phase is
        // one row's 8 lanes, whose chunks 2v at TILE_K 256 would meet
        // chunk 2v + 8's banks: lanes v >= 4 store their halves in the
        // other order (conflict-free).
        const int sw = ((r >> 4) & CM) << (QS - 2);
        const int hi = NV == 8 ? (v >> 2) & 1 : 0;
        u8 *rowp = s_f8 + r * RSF;
        *reinterpret_cast<uint4 *>(rowp + (((2 * v + hi) ^ sw) * 16)) =
            hi ? make_uint4(w[4], w[5], w[6], w[7])
               : make_uint4(w[0], w[1], w[2], w[3]);
        *reinterpret_cast<uint4 *>(rowp + (((2 * v + 1 - hi) ^ sw) * 16)) =
            hi ? make_uint4(w[0], w[1], w[2], w[3])
               : make_uint4(w[4], w[5], w[6], w[7]);
      }
      __syncthreads();
      // Column orientation: task (feature quad q, run c of 16 tokens); the
      // RUNS runs of a quad are consecutive lanes, so each store instruction
      // writes whole 128-byte lines (TILE_M 64: halves, the sibling CTA
      // writes the other halves). Rows that are not 16-byte aligned take
      // realigned chunks instead, in a loop of their own chosen once per
      // pass: inline beside the aligned loop they changed its code, but it
      // ran as before on the H200 (mxfp4 -> fp8 col and its twins within
      // 0.3 us at M = 32768), unlike the bf16 pass's (below).
      constexpr bool kScale =
          !kQuads &&
          !((MBUF || JOBS) && O::scale_layout == ScaleLayout::row_major);
      auto column_tasks = [&](auto realign) {
#pragma unroll 1
        for (int task = threadIdx.x; task < NQ * RUNS; task += THREADS) {
          const int c = task % RUNS, q = task / RUNS;
          const i64 kf = k0 + 4 * q;
          if (kf >= g.K)
            continue; // K is a multiple of 32: a quad is valid or not
          auto scale_of_quad = [&] {
            return pow2_f32_bits(
                aligned_scale_exp(bmax_of((4 * q) / 32), 2, F.emax));
          };
          if constexpr (decltype(realign)::value) {
            const u32 scale = scale_of_quad();
            // Chunk c of each of the quad's 4 features (jobs 0..3, with
            // their block scales), and from lanes c < 4 the tail chunk RUNS
            // of feature c (job 4).
            const u32 *s32 = reinterpret_cast<const u32 *>(s_f8);
#pragma unroll 1
            for (int job = 0; job < (c < 4 ? 5 : 4); ++job) {
              const int j = job < 4 ? job : c;
              auto code_of = [&](int r) {
                return s32[r * (RSF / 4) + (q ^ (((r >> 4) & CM) << QS))] >>
                       (8 * j);
              };
              store_realigned_chunk<TILE_M>(col_run_start(args, OI, g, kf + j),
                                            g.ncols, job < 4 ? c : RUNS,
                                            gather_codes(code_of));
              if (job < 4)
                store_fp8_col_scale<O, kScale>(args, OI, g, kf + j, c, scale);
            }
          } else {
            const u32 *base = reinterpret_cast<const u32 *>(s_f8) +
                              (16 * c) * (RSF / 4) + (q ^ ((c & CM) << QS));
            u32 x[4][4];
#pragma unroll
            for (int i = 0; i < 16; ++i)
              x[i / 4][i % 4] = base[i * (RSF / 4)];
#pragma unroll
            for (int b = 0; b < 4; ++b)
              transpose4x4_bytes(x[b]);
            const u32 scale = scale_of_quad();
#pragma unroll
            for (int j = 0; j < 4; ++j) {
              const u32 w[4] = {x[0][j], x[1][j], x[2][j], x[3][j]};
              store_fp8_col_run<O, kScale>(args, OI, g, kf + j, c, w, scale);
            }
          }
        }
      };
      if (col_runs_misaligned(g))
        column_tasks(Int<1>{});
      else
        column_tasks(Int<0>{});
    }
  });
}

/// A tile without tokens of a kernel that takes the aligned pass (ragged:
/// the capacity tail, or group padding where pad_groups_to exceeds 128; at
/// TILE_M 64 also a half of padding): what that pass makes of absent rows
/// (zero codes for g's columns of features k0..k0+TILE_K, scale 1.0 for its
/// block, if g owns it), stored straight from registers: no loads, no shared
/// memory, no barrier. At 256 groups a sixth of the ragged kernel's tiles
/// are tail tiles (docs/performance.md). With MBUF the row_major block
/// scales are written elsewhere (store_cluster_scales, store_m_scales or the
/// scale jobs).
template <typename Cfg, int THREADS, int TILE_K, int TILE_M = 128,
          bool MBUF = false>
QCT_DEV void aligned_tail_tile(const qct_kernel_args &args,
                               const ColStoreGeom &g, i64 k0) {
  constexpr int RUNS = TILE_M / 16;
  const u32 zero[4] = {0, 0, 0, 0};
#pragma unroll 1
  for (int task = threadIdx.x; task < TILE_K * RUNS; task += THREADS) {
    const int c = task % RUNS;
    const i64 kf = k0 + task / RUNS;
    if (kf >= g.K)
      break; // tasks grow with kf
    static_for<0, Cfg::num_outputs>([&](auto oi) {
      constexpr int OI = decltype(oi)::value;
      using O = typename Cfg::template out<OI>;
      if constexpr (O::col)
        store_fp8_col_run<O, !(MBUF && O::scale_layout ==
                                          ScaleLayout::row_major)>(
            args, OI, g, kf, c, zero, 0x3F800000u);
    });
  }
}

//===----------------------------------------------------------------------===//
// bf16 -> fp8 pow2 col
//===----------------------------------------------------------------------===//

/// One task loop of bf16_pow2_col_pass, for 16-byte-aligned rows or
/// (REALIGN) realigned chunks.
template <typename Cfg, int THREADS, int TILE_K, bool MBUF, bool REALIGN>
QCT_DEV void
bf16_pow2_col_tasks(const qct_kernel_args &args, const ColStoreGeom &g, i64 k0,
                    const u8 *s_data, signed char *s_e, int ostride) {
  constexpr int RS = TILE_K * 2 + 16;
  constexpr int NV = TILE_K / 8;
  constexpr int SWZ = (NV < 8 ? NV : 8) - 1;
  constexpr int NP = TILE_K / 2; // feature pairs (32-bit words)
  static_assert(SWZ == 7, "the bank analysis assumes 8 swizzled vectors");

#pragma unroll 1
  for (int task = threadIdx.x; task < NP * 8; task += THREADS) {
    const int c = task & 7, p = task >> 3;
    const i64 kf = k0 + 2 * p;
    // All lanes stay for the shuffles; features past K only skip stores.
    const bool fvalid = kf < g.K;
    const u32 *base = reinterpret_cast<const u32 *>(
        s_data + (16 * c) * RS + (((p >> 2) ^ (c & SWZ)) * 16) + (p & 3) * 4);
    u32 x[16];
#pragma unroll
    for (int i = 0; i < 16; ++i)
      x[i] = base[i * (RS / 4)];
    static_for<0, Cfg::num_outputs>([&](auto oi) {
      constexpr int OI = decltype(oi)::value;
      using O = typename Cfg::template out<OI>;
      if constexpr (O::col) {
        bool special;
        u32 a = bf16x2_amax(x, bf16_bits_of_fp8_max<O::e5m2>(), special);
#pragma unroll
        for (int o = 1; o < 8; o <<= 1)
          a = vmax_u16x2(a, __shfl_xor_sync(0xFFFFFFFFu, a, o));
        const int elo = pow2_exp_from_bits<O::e5m2>(a << 16);
        const int ehi = pow2_exp_from_bits<O::e5m2>(a & 0xFFFF0000u);
        constexpr bool buf = MBUF && O::scale_layout == ScaleLayout::row_major;
        if constexpr (REALIGN) {
          if (fvalid) {
            // Chunk c of both features (jobs 0, 1: feature kf + job),
            // converted from the tile rows they hold, and from lanes
            // c < 2 the tail chunk 8 of feature kf + c (job 2).
            auto pair_word = [&](int r) {
              return *reinterpret_cast<const u32 *>(
                  s_data + r * RS + (((p >> 2) ^ ((r >> 4) & SWZ)) * 16) +
                  (p & 3) * 4);
            };
#pragma unroll 1
            for (int job = 0; job < (c < 2 ? 3 : 2); ++job) {
              const int h = job < 2 ? job : c;
              store_realigned_chunk<128>(
                  col_run_start(args, OI, g, kf + h), g.ncols, job < 2 ? c : 8,
                  bf16_pow2_chunk<O::e5m2>(pair_word, h,
                                           pow2_f32(-(h ? ehi : elo))));
            }
            store_fp8_col_scale<O, !buf>(args, OI, g, kf, c,
                                         pow2_f32_bits(elo));
            store_fp8_col_scale<O, !buf>(args, OI, g, kf + 1, c,
                                         pow2_f32_bits(ehi));
          }
        } else {
          u32 qlo[4], qhi[4];
          bf16_pow2_fp8_run<O::e5m2, 0>(x, pow2_f32(-elo), special, qlo);
          bf16_pow2_fp8_run<O::e5m2, 1>(x, pow2_f32(-ehi), special, qhi);
          if (fvalid) {
            store_fp8_col_run<O, !buf>(args, OI, g, kf, c, qlo,
                                       pow2_f32_bits(elo));
            store_fp8_col_run<O, !buf>(args, OI, g, kf + 1, c, qhi,
                                       pow2_f32_bits(ehi));
          }
        }
        if constexpr (buf) {
          if (fvalid && c == 0) { // K is a multiple of 8: kf + 1 < K
            s_e[OI * ostride + 2 * p] = (signed char)elo;
            s_e[OI * ostride + 2 * p + 1] = (signed char)ehi;
          }
        }
      }
    });
  }
}

/// The output pointers a col pass stores through, for a call out of line
/// (the kernel's parameter block itself would be copied to local memory).
struct ColOutPointers {
  void *out[QCT_MAX_OUTPUTS];
  void *scales[QCT_MAX_OUTPUTS];
  static QCT_DEV ColOutPointers of(const qct_kernel_args &args) {
    ColOutPointers p;
#pragma unroll
    for (int i = 0; i < QCT_MAX_OUTPUTS; ++i) {
      p.out[i] = args.out[i];
      p.scales[i] = args.out_scales[i];
    }
    return p;
  }
};

/// bf16_pow2_col_tasks for realigned chunks, as a call.
template <typename Cfg, int THREADS, int TILE_K, bool MBUF>
QCT_DEV_OUTLINE void
bf16_pow2_col_pass_realigned(ColOutPointers p, ColStoreGeom g, i64 k0,
                             const u8 *s_data, signed char *s_e, int ostride) {
  qct_kernel_args args = {};
#pragma unroll
  for (int i = 0; i < QCT_MAX_OUTPUTS; ++i) {
    args.out[i] = p.out[i];
    args.out_scales[i] = p.scales[i];
  }
  bf16_pow2_col_tasks<Cfg, THREADS, TILE_K, MBUF, true>(args, g, k0, s_data,
                                                        s_e, ostride);
}

/// The fast pass for a bf16 source whose col outputs are all fp8 `pow2`.
/// s_data is the raw tile (tile_kernel.cuh layout: rows of RS bytes, 16-byte
/// vectors XOR-swizzled with (row / 16) & SWZ); rows of absent tokens hold
/// zeros, which change neither amax nor the (zero) codes. With MBUF (a CTA
/// of several M tiles) the exponents of row_major outputs go to
/// s_e[OI * ostride + feature of the tile] instead of global memory
/// (store_m_scales writes them after the CTA's loops).
template <typename Cfg, int THREADS, int TILE_K, bool MBUF = false>
QCT_DEV void bf16_pow2_col_pass(const qct_kernel_args &args,
                                const ColStoreGeom &g, i64 k0,
                                const u8 *s_data, signed char *s_e = nullptr,
                                int ostride = 0) {
  // Rows that are not 16-byte aligned take realigned chunks, out of line:
  // with their loop beside the aligned one in the kernel, even as a branch
  // around it, the aligned loop compiled to other code and bf16 -> mxfp4
  // row + fp8 col ran 238.9 (241.4 with the branch inside it) against 236.1
  // us on the H200.
  if (col_runs_misaligned(g))
    bf16_pow2_col_pass_realigned<Cfg, THREADS, TILE_K, MBUF>(
        ColOutPointers::of(args), g, k0, s_data, s_e, ostride);
  else
    bf16_pow2_col_tasks<Cfg, THREADS, TILE_K, MBUF, false>(args, g, k0, s_data,
                                                           s_e, ostride);
}

//===----------------------------------------------------------------------===//
// Scales of a CTA's M tiles (QCT_M_TILES)
//===----------------------------------------------------------------------===//

/// Writes the row_major scales of a CTA that ran a fast column pass on MT
/// consecutive M tiles (tile0.., nm of them exist) x NF features from kbase:
/// feature kf's scales are the nm consecutive elements kf * scols + tile0..,
/// one store_scale_run per feature instead of a 4-byte store (its own L2
/// sector) per feature and tile. exp_of(oi, f, mi) is the pow2 exponent of
/// output oi (an integral constant), feature f of the span and M tile mi,
/// as the pass left it in shared memory. Call after a barrier that follows
/// the last tile's pass.
template <typename Cfg, int THREADS, int NF, int MT, typename ExpOf>
QCT_DEV void store_m_scales(const qct_kernel_args &args, const ExpOf &exp_of,
                            i64 kbase, i64 K, i64 scols, i64 tile0, int nm) {
#pragma unroll 1
  for (int f = threadIdx.x; f < NF; f += THREADS) {
    const i64 kf = kbase + f;
    if (kf >= K)
      break;
    static_for<0, Cfg::num_outputs>([&](auto oi) {
      using O = typename Cfg::template out<decltype(oi)::value>;
      if constexpr (O::col && O::scale_layout == ScaleLayout::row_major) {
        u32 sc[MT];
#pragma unroll
        for (int mi = 0; mi < MT; ++mi)
          sc[mi] = mi < nm ? pow2_f32_bits(exp_of(oi, f, mi)) : 0u;
        store_scale_run<MT>(
            static_cast<u32 *>(args.out_scales[decltype(oi)::value]) +
                kf * scols + tile0,
            sc, nm);
      }
    });
  }
}

#endif // CUDA

} // namespace dev
} // namespace qct

#endif // QCT_DEVICE_COL_PASS_CUH
