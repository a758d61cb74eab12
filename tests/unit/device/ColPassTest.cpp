//===- ColPassTest.cpp - The fast column passes' helpers on the CPU -------===//
//
// The tile family's fast column passes (runtime/include/qct/device/
// col_pass.cuh) are built from host-callable pieces; these tests hold each
// piece, and the decomposition each pass relies on, to the generic block
// quantizers (themselves checked against qct_reference in CodecTest.cpp):
//  - the 4x4 byte transpose and the 16x2 maximum (prmt emulated on the host
//    from the PTX ISA text);
//  - the pow2 exponent from fp32 bits against pow2_scale_exp, every bf16
//    amax and a dense fp32 sweep;
//  - bf16 pow2 col: 128 tokens x 2 features split into 8 lanes of 16 words,
//    amax combined as the shuffles do, against quantize_hp on each feature;
//  - aligned mxfp4 col: bmax over the tile, the row-orientation byte table
//    per token, then the transpose, against quantize_aligned on each feature
//    (NaN blocks, absent tokens, every scale spread);
//  - realigned column runs (the rows of a dense col output that are not
//    16-byte aligned): the chunks write a run's bytes and no others, at every
//    misalignment and run length, and the bf16 pass's chunks convert each
//    token as its aligned run does.
//
//===----------------------------------------------------------------------===//

#include "qct/device/col_pass.cuh"
#include "qct/device/raster.cuh"

#include "DeviceTestUtil.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

namespace dev = qct::dev;

namespace {

using qct::test::bits;
using qct::test::f32;

TEST(ColPass, Transpose4x4Bytes) {
  std::mt19937 rng(1);
  for (int it = 0; it < 100000; ++it) {
    uint32_t x[4], y[4];
    for (int i = 0; i < 4; ++i)
      x[i] = y[i] = rng();
    dev::transpose4x4_bytes(y);
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 4; ++j)
        ASSERT_EQ((y[j] >> (8 * i)) & 0xFF, (x[i] >> (8 * j)) & 0xFF);
  }
}

// The scale stores of a CTA with MT M tiles (store_scale_run): every run
// start alignment and length writes exactly positions [0, n), each once,
// every store aligned to its width, with the fewest stores that alignment
// allows (brute force over all splits into aligned 1/2/4-element stores).
template <int MT> int fewestAlignedStores(uint64_t a, int n) {
  if (n == 0)
    return 0;
  int best = 1 << 20;
  for (int w : {1, 2, 4})
    if (w <= MT && w <= n && a % w == 0)
      best = std::min(best, 1 + fewestAlignedStores<MT>(a + w, n - w));
  return best;
}

template <int MT> void checkScaleRunPlan() {
  for (uint64_t a = 0; a < 16; ++a)
    for (int n = 1; n <= MT; ++n) {
      const dev::ScaleRunPlan p = dev::scale_run_plan<MT>(a, n);
      int cover[8] = {}, stores = 0;
      if (p.quad) {
        ASSERT_EQ(a % 4, 0u);
        ASSERT_EQ(n, 4);
        for (int i = 0; i < 4; ++i)
          ++cover[i];
        ++stores;
      }
      for (int i = 0; i < 8; ++i) {
        if ((p.pairs >> i) & 1) {
          ASSERT_FALSE(p.quad);
          ASSERT_EQ((a + i) % 2, 0u) << a << " " << n << " " << i;
          ++cover[i];
          ++cover[i + 1];
          ++stores;
        }
        if ((p.singles >> i) & 1) {
          ++cover[i];
          ++stores;
        }
      }
      for (int i = 0; i < 8; ++i)
        ASSERT_EQ(cover[i], i < n ? 1 : 0) << "a " << a << " n " << n;
      ASSERT_EQ(stores, fewestAlignedStores<MT>(a, n)) << a << " " << n;
      if (MT == 4 && n == 4)
        ASSERT_EQ(stores, a % 4 == 0 ? 1 : (a % 2 == 0 ? 2 : 3));
    }
}

TEST(ColPass, ScaleRunPlan) {
  checkScaleRunPlan<1>();
  checkScaleRunPlan<2>();
  checkScaleRunPlan<4>();
}

TEST(ColPass, StoreScaleRunWritesOnlyItsColumns) {
  // Row-major [K, scols] scales, CTAs of MT tiles along M: each feature's
  // run starts at kf * scols + tile0 and the last CTA has scols % MT
  // columns. Every element is written once, by the right CTA and value.
  for (int mt : {2, 4})
    for (int scols = 1; scols <= 11; ++scols) {
      const int K = 7;
      std::vector<uint32_t> out(K * scols + 8, 0xDEADBEEFu);
      for (int kf = 0; kf < K; ++kf)
        for (int tile0 = 0; tile0 < scols; tile0 += mt) {
          const int n = std::min(mt, scols - tile0);
          uint32_t *dst = out.data() + (size_t)kf * scols + tile0;
          if (mt == 2) {
            const uint32_t s[2] = {uint32_t(kf * 100 + tile0),
                                   uint32_t(kf * 100 + tile0 + 1)};
            dev::store_scale_run<2>(dst, s, n);
          } else {
            uint32_t s[4];
            for (int i = 0; i < 4; ++i)
              s[i] = uint32_t(kf * 100 + tile0 + i);
            dev::store_scale_run<4>(dst, s, n);
          }
        }
      for (int kf = 0; kf < K; ++kf)
        for (int c = 0; c < scols; ++c)
          ASSERT_EQ(out[(size_t)kf * scols + c], uint32_t(kf * 100 + c))
              << "MT " << mt << " scols " << scols;
      for (size_t i = (size_t)K * scols; i < out.size(); ++i)
        ASSERT_EQ(out[i], 0xDEADBEEFu);
    }
}

// Realigned column runs: the chunks 0..TILE_M/16 of a run that starts mis
// bytes past a 16-byte boundary (store_realigned_chunk with make_chunk)
// write want[0..n) at the run's columns and no other byte, for every mis.
template <int TILE_M, typename MakeChunk>
void checkRealignedRun(const MakeChunk &make_chunk, const uint8_t *want, int n,
                       std::mt19937 &rng) {
  constexpr int RUNS = TILE_M / 16;
  alignas(16) uint8_t buf[16 * (RUNS + 3)];
  for (int mis = 1; mis < 16; ++mis) {
    for (uint8_t &b : buf)
      b = uint8_t(rng());
    uint8_t before[sizeof buf];
    std::memcpy(before, buf, sizeof buf);
    uint8_t *run = buf + 16 + mis;
    for (int t = 0; t <= RUNS; ++t)
      dev::store_realigned_chunk<TILE_M>(run, n, t, make_chunk);
    for (int i = 0; i < int(sizeof buf); ++i) {
      const int r = i - (16 + mis);
      ASSERT_EQ(buf[i], r >= 0 && r < n ? want[r] : before[i])
          << "TILE_M " << TILE_M << " mis " << mis << " n " << n << " byte "
          << r;
    }
  }
}

// The aligned pass's realigned chunks gather a feature's codes from the
// tile rows (gather_codes): every run length of a 128- and a 64-token tile.
TEST(ColPass, RealignedCodeRunsWriteOnlyTheirColumns) {
  std::mt19937 rng(9);
  uint8_t codes[128];
  for (uint8_t &c : codes)
    c = uint8_t(rng());
  auto code_of = [&](int r) { return uint32_t(codes[r]) | 0xABCD00u; };
  for (int n = 0; n <= 128; ++n)
    checkRealignedRun<128>(dev::gather_codes(code_of), codes, n, rng);
  for (int n = 0; n <= 64; ++n)
    checkRealignedRun<64>(dev::gather_codes(code_of), codes, n, rng);
}

// A whole chunk is one store and a run of a full tile has RUNS - 1 of them:
// only its first and last chunks are partial.
TEST(ColPass, RealignedChunkSpans) {
  for (int runs : {4, 8})
    for (int mis = 1; mis < 16; ++mis)
      for (int t = 0; t <= runs; ++t) {
        const dev::ChunkSpan s = dev::realigned_chunk_span(t, mis, 16 * runs);
        const bool whole = s.lo == 0 && s.hi == 16;
        ASSERT_EQ(whole, t > 0 && t < runs) << "runs " << runs << " t " << t;
        if (t == 0)
          ASSERT_EQ(s.lo, mis);
        if (t == runs)
          ASSERT_EQ(s.hi, mis);
      }
}

TEST(ColPass, MaxU16x2) {
  std::mt19937 rng(2);
  for (int it = 0; it < 1000000; ++it) {
    const uint32_t a = rng(), b = it % 7 == 0 ? a ^ 0x80008000u : rng();
    const uint32_t m = dev::vmax_u16x2(a, b);
    const uint32_t lo = std::max(a & 0xFFFF, b & 0xFFFF),
                   hi = std::max(a >> 16, b >> 16);
    ASSERT_EQ(m, lo | (hi << 16));
  }
}

template <bool E5M2> void checkPow2Exp(uint32_t A) {
  const dev::FloatFmt F = E5M2 ? dev::kE5M2() : dev::kE4M3();
  const dev::Parts p = dev::parts_f32(f32(A));
  ASSERT_EQ(dev::pow2_exp_from_bits<E5M2>(A), dev::pow2_scale_exp(F, p.m, p.E))
      << std::hex << A;
}

TEST(ColPass, Pow2ExponentFromBits) {
  for (uint32_t b = 0; b < 0x7F80; ++b) { // every finite bf16 amax
    checkPow2Exp<false>(b << 16);
    checkPow2Exp<true>(b << 16);
  }
  for (uint64_t u = 0; u < 0x7F800000u; u += 13) { // finite fp32
    checkPow2Exp<false>(uint32_t(u));
    checkPow2Exp<true>(uint32_t(u));
  }
}

using E4 = dev::Out<dev::Fmt::fp8_e4m3, dev::Layout::col, 128,
                    dev::Scale::pow2>;
using E5 = dev::Out<dev::Fmt::fp8_e5m2, dev::Layout::col, 128,
                    dev::Scale::pow2>;

/// A bf16 pattern drawn to hit the rules: zeros of both signs, subnormals,
/// values around max_F * 2^e, NaN and Inf of both signs, wide spreads.
uint16_t drawBf16(std::mt19937 &rng, int mode) {
  const uint32_t r = rng();
  switch (mode) {
  case 0:
    return uint16_t(r);
  case 1: // one binade spread around 1.0
    return uint16_t(((r & 0x8000u) | (0x3C00u + (r >> 16) % 0x0800u)));
  case 2: { // a few specials in a normal block
    const uint32_t k = r % 64;
    if (k == 0)
      return uint16_t(0x7F80u | (r & 0x8000u));
    if (k == 1)
      return uint16_t(0x7FC1u | (r & 0x8000u));
    if (k == 2)
      return uint16_t(r & 0x807Fu); // subnormal or zero
    return uint16_t(((r & 0x8000u) | (0x3000u + (r >> 16) % 0x1800u)));
  }
  default: // tiny values (exponent clamp at -127)
    return uint16_t((r & 0x8000u) | ((r >> 16) % 0x0300u));
  }
}

template <typename O>
void checkBf16Pow2Block(const uint16_t (&v)[2][128], bool realigned,
                        std::mt19937 &rng) {
  constexpr bool E5M2 = O::e5m2;
  constexpr uint32_t maxf16 = E5M2 ? 0x4760u : 0x43E0u;
  // 8 lanes of 16 tokens, 2 features per word.
  uint32_t x[8][16];
  bool special[8];
  uint32_t a = 0;
  for (int c = 0; c < 8; ++c) {
    for (int i = 0; i < 16; ++i)
      x[c][i] = v[0][16 * c + i] | (uint32_t(v[1][16 * c + i]) << 16);
    a = dev::vmax_u16x2(a, dev::bf16x2_amax(x[c], maxf16, special[c]));
  }
  const int e[2] = {dev::pow2_exp_from_bits<E5M2>(a << 16),
                    dev::pow2_exp_from_bits<E5M2>(a & 0xFFFF0000u)};
  for (int h = 0; h < 2; ++h) {
    float fv[128];
    for (int t = 0; t < 128; ++t)
      fv[t] = f32(uint32_t(v[h][t]) << 16);
    const dev::QBlock<128> want = dev::quantize_hp<O, 128, 1>(fv);
    ASSERT_EQ(dev::pow2_f32_bits(e[h]), want.scale);
    for (int c = 0; c < 8; ++c) {
      uint32_t q[4];
      const float f = dev::pow2_f32(-e[h]);
      if (h)
        dev::bf16_pow2_fp8_run<E5M2, 1>(x[c], f, special[c], q);
      else
        dev::bf16_pow2_fp8_run<E5M2, 0>(x[c], f, special[c], q);
      for (int i = 0; i < 16; ++i)
        ASSERT_EQ((q[i / 4] >> (8 * (i % 4))) & 0xFF, want.q[16 * c + i])
            << "feature " << h << " token " << 16 * c + i << " value "
            << std::hex << v[h][16 * c + i];
    }
    if (!realigned)
      continue;
    // The same codes from realigned chunks, each token converted from the
    // pair word of its row wherever its chunk starts.
    uint8_t codes[128];
    for (int t = 0; t < 128; ++t)
      codes[t] = uint8_t(want.q[t]);
    auto word_of = [&](int r) { return x[r / 16][r % 16]; };
    const float f = dev::pow2_f32(-e[h]);
    for (int n : {128, 77, 1})
      checkRealignedRun<128>(dev::bf16_pow2_chunk<E5M2>(word_of, h, f), codes,
                             n, rng);
  }
}

TEST(ColPass, Bf16Pow2ColMatchesQuantizeHp) {
  std::mt19937 rng(3);
  for (int it = 0; it < 20000; ++it) {
    uint16_t v[2][128];
    const int mode = it % 4;
    for (int h = 0; h < 2; ++h)
      for (int t = 0; t < 128; ++t)
        v[h][t] = drawBf16(rng, mode);
    if (it % 16 == 5) // absent tokens: zeros at the end
      for (int h = 0; h < 2; ++h)
        for (int t = 128 - it % 128; t < 128; ++t)
          v[h][t] = 0;
    if (it % 32 == 7) // all zero / all NaN feature
      for (int t = 0; t < 128; ++t)
        v[1][t] = it % 64 == 7 ? 0 : 0xFFC0u;
    // 8 blocks in 256, two of each mode, also through realigned chunks (at
    // every mis).
    const bool realigned = it % 256 < 8;
    checkBf16Pow2Block<E4>(v, realigned, rng);
    checkBf16Pow2Block<E5>(v, realigned, rng);
  }
}

using A4 = dev::Out<dev::Fmt::fp8_e4m3, dev::Layout::col, 128,
                    dev::Scale::aligned>;
using A5 = dev::Out<dev::Fmt::fp8_e5m2, dev::Layout::col, 128,
                    dev::Scale::aligned>;

/// The aligned pass on one MX block column of a tile: 128 tokens (nt
/// present) x 32 features, token scale bytes b[t].
template <typename O>
void checkAlignedCol(const uint32_t (&codes)[128][4], const uint32_t (&b)[128],
                     int nt) {
  constexpr dev::FloatFmt F = O::T::elem();
  int bmax = -1; // the kernel's block reduction
  for (int t = 0; t < 128; ++t)
    if (t < nt && b[t] != 0xFF)
      bmax = std::max(bmax, int(b[t]));
  const int se = dev::aligned_scale_exp(bmax, 2, F.emax);
  uint32_t rows[128][8];
  for (int t = 0; t < 128; ++t) {
    dev::aligned_e2m1_block<O::e5m2>(codes[t], b[t], se, rows[t]);
    if (t >= nt)
      for (int i = 0; i < 8; ++i)
        rows[t][i] = 0;
  }
  for (int f = 0; f < 32; ++f) {
    uint32_t cc[128];
    int bb[128];
    for (int t = 0; t < 128; ++t) {
      cc[t] = t < nt ? (codes[t][f / 8] >> (4 * (f % 8))) & 0xF : 0;
      bb[t] = t < nt ? int(b[t]) : -1;
    }
    const dev::QBlock<128> want =
        dev::quantize_aligned<O, dev::Fmt::mxfp4, 128, 1>(cc, bb);
    ASSERT_EQ(dev::pow2_f32_bits(se), want.scale);
    // Column reads: word f/4 of 4 tokens, transposed.
    for (int t0 = 0; t0 < 128; t0 += 4) {
      uint32_t x[4] = {rows[t0][f / 4], rows[t0 + 1][f / 4],
                       rows[t0 + 2][f / 4], rows[t0 + 3][f / 4]};
      dev::transpose4x4_bytes(x);
      for (int i = 0; i < 4; ++i)
        ASSERT_EQ((x[f % 4] >> (8 * i)) & 0xFF, want.q[t0 + i])
            << "feature " << f << " token " << t0 + i << " b " << b[t0 + i]
            << " bmax " << bmax << " nt " << nt;
    }
  }
}

TEST(ColPass, AlignedE2M1ColMatchesQuantizeAligned) {
  std::mt19937 rng(4);
  for (int it = 0; it < 4000; ++it) {
    uint32_t codes[128][4], b[128];
    const int top = int(rng() % 255), spread = int(rng() % 40);
    for (int t = 0; t < 128; ++t) {
      for (int w = 0; w < 4; ++w)
        codes[t][w] = rng();
      const int lo = std::max(0, top - spread);
      b[t] = uint32_t(lo + int(rng() % uint32_t(top - lo + 1)));
      if (rng() % 17 == 0)
        b[t] = 0xFF; // NaN source block
    }
    if (it % 50 == 3)
      for (int t = 0; t < 128; ++t)
        b[t] = 0xFF; // every block NaN: s = 1
    const int nt = it % 5 == 0 ? int(rng() % 129) : 128;
    checkAlignedCol<A4>(codes, b, nt);
    checkAlignedCol<A5>(codes, b, nt);
  }
}

// QCT_GROUP_M's renumbering (raster.cuh): every CTA of the grid gets one
// tile and every tile one CTA; in hardware (linear) order the CTAs walk
// bands of `group` tiles along x, each band through all of y (group 0:
// bands of one tile, y fastest); group 1 and grids of 2^31 CTAs or more keep
// the hardware order.
TEST(Raster, BandsAreABijectionInBandOrder) {
  for (int group : {0, 1, 2, 4, 8})
    for (unsigned nx = 1; nx <= 19; ++nx)
      for (unsigned ny = 1; ny <= 7; ++ny) {
        std::vector<int> seen(nx * ny, 0);
        int prevBand = 0, prevBx = -1, prevBy = 0;
        for (unsigned lin = 0; lin < nx * ny; ++lin) {
          int bx = int(lin % nx), by = int(lin / nx);
          dev::raster_band(bx, by, nx, ny, group);
          ASSERT_TRUE(bx >= 0 && bx < int(nx) && by >= 0 && by < int(ny))
              << "group " << group << " grid " << nx << "x" << ny;
          ++seen[by * nx + bx];
          if (group == 1) {
            EXPECT_EQ(bx, int(lin % nx));
            EXPECT_EQ(by, int(lin / nx));
            continue;
          }
          if (group == 0) {
            EXPECT_EQ(bx, int(lin / ny));
            EXPECT_EQ(by, int(lin % ny));
            continue;
          }
          // Bands never go back, and within a band x cycles fastest.
          const int band = bx / group;
          EXPECT_GE(band, prevBand);
          if (band == prevBand && lin > 0)
            EXPECT_TRUE(by > prevBy || (by == prevBy && bx == prevBx + 1));
          prevBand = band, prevBx = bx, prevBy = by;
        }
        for (int n : seen)
          EXPECT_EQ(n, 1) << "group " << group << " grid " << nx << "x" << ny;
      }
  int bx = 5, by = 3;
  dev::raster_band(bx, by, 1u << 20, 1u << 12, 4); // 2^32 CTAs: unchanged
  EXPECT_EQ(bx, 5);
  EXPECT_EQ(by, 3);
  dev::raster_band(bx, by, 1u << 20, 1u << 12, 0);
  EXPECT_EQ(bx, 5);
  EXPECT_EQ(by, 3);
}

// The K tiles of a grid row (raster.cuh, k_span): the k_span_rows rows
// cover every tile once, rows of k_tiles tiles first; with split_last the
// last row's tiles take one row each, and no row is empty.
TEST(Raster, KSpansCoverEveryTileOnce) {
  for (int kTiles : {1, 2, 4})
    for (bool split : {false, true})
      for (int tiles = 0; tiles <= 23; ++tiles) {
        const int rows = int(dev::k_span_rows(tiles, kTiles, split));
        std::vector<int> seen(tiles, 0);
        for (int by = 0; by < rows; ++by) {
          const dev::KSpan s = dev::k_span(by, tiles, kTiles, split);
          const int end = std::min<int>(int(s.first) + s.count, tiles);
          ASSERT_LT(s.first, end) << "row " << by << " of " << tiles
                                  << " tiles, " << kTiles << " per span";
          for (int t = int(s.first); t < end; ++t)
            ++seen[t];
          const bool last = by >= (tiles + kTiles - 1) / kTiles - 1;
          EXPECT_EQ(s.count, split && last ? 1 : kTiles);
        }
        for (int n : seen)
          EXPECT_EQ(n, 1) << tiles << " tiles, " << kTiles << " per span";
        // Rows: cdiv(tiles, kTiles), plus the last span's tiles past its
        // first (the launch's grid y, Metadata.cpp).
        const int spans = (tiles + kTiles - 1) / kTiles;
        const int lastTiles = tiles - (spans - 1) * kTiles;
        EXPECT_EQ(rows, split && tiles ? spans + lastTiles - 1 : spans);
      }
}

} // namespace
