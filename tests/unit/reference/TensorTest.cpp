//===- TensorTest.cpp - Layouts, ragged placement and argument checks -----===//
//
// Through the C ABI, as the GPU tests and Python use it.
//
//===----------------------------------------------------------------------===//

#include "qct/Reference/qct_ref.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

uint16_t bf16Bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return uint16_t(u >> 16); // test inputs are exact in bf16
}

/// n bf16 codes of the small integers (i % period) - offset: exact, with
/// zeros and both signs.
std::vector<uint16_t> bf16Ramp(int n, int period, float offset) {
  std::vector<uint16_t> x(size_t(n), 0);
  for (int i = 0; i < n; ++i)
    x[size_t(i)] = bf16Bits(float(i % period) - offset);
  return x;
}

struct Buffers {
  std::vector<uint8_t> data;
  std::vector<uint8_t> scales;
};

qct_ref_output makeOutput(int format, int layout, int scale,
                          int sl = QCT_REF_ROW_MAJOR) {
  qct_ref_output o{};
  o.format = format;
  o.layout = layout;
  o.scale = scale;
  o.scale_layout = sl;
  return o;
}

// Sizes, allocates, converts; fails the test on an error.
Buffers run(const qct_ref_source &src, qct_ref_output out,
            const qct_ref_ragged *rg = nullptr) {
  size_t db = 0, sb = 0;
  char err[256];
  EXPECT_EQ(qct_ref_output_sizes(&src, &out, rg, &db, &sb, err, sizeof err), 0)
      << err;
  Buffers b{std::vector<uint8_t>(db, 0xAB), std::vector<uint8_t>(sb, 0xAB)};
  out.data = b.data.data();
  out.data_bytes = db;
  out.scales = sb ? b.scales.data() : nullptr;
  out.scales_bytes = sb;
  EXPECT_EQ(qct_ref_convert(&src, &out, rg, err, sizeof err), 0) << err;
  return b;
}

std::string failure(const qct_ref_source &src, qct_ref_output out,
                    const qct_ref_ragged *rg, size_t dataBytes = 1 << 20,
                    size_t scaleBytes = 1 << 20) {
  static std::vector<uint8_t> data, scales;
  data.assign(dataBytes, 0xCD);
  scales.assign(scaleBytes, 0xCD);
  out.data = data.data();
  out.data_bytes = dataBytes;
  out.scales = scales.data();
  out.scales_bytes = scaleBytes;
  char err[256] = "";
  int rc = qct_ref_convert(&src, &out, rg, err, sizeof err);
  EXPECT_NE(rc, 0);
  for (uint8_t v : data) // nothing written on error
    if (v != 0xCD) {
      ADD_FAILURE() << "data written despite error: " << err;
      break;
    }
  for (uint8_t v : scales)
    if (v != 0xCD) {
      ADD_FAILURE() << "scales written despite error: " << err;
      break;
    }
  return err;
}

float f32At(const Buffers &b, size_t i) {
  float f;
  std::memcpy(&f, b.scales.data() + 4 * i, 4);
  return f;
}

TEST(Tensor, SizesFollowTheKernelAbi) {
  std::vector<uint16_t> x(16);
  qct_ref_source src{QCT_REF_BF16, x.data(), nullptr, 70, 256};
  size_t db, sb;
  char err[256];
  auto sizes = [&](qct_ref_output o, const qct_ref_ragged *r = nullptr) {
    EXPECT_EQ(qct_ref_output_sizes(&src, &o, r, &db, &sb, err, sizeof err), 0)
        << err;
    return std::make_pair(db, sb);
  };
  using P = std::pair<size_t, size_t>;
  EXPECT_EQ(sizes(makeOutput(QCT_REF_MXFP4, QCT_REF_ROW, QCT_REF_SCALE_FLOOR)),
            P(70 * 128, 70 * 8));
  EXPECT_EQ(sizes(makeOutput(QCT_REF_MXFP4, QCT_REF_ROW, QCT_REF_SCALE_FLOOR,
                             QCT_REF_MN_MAJOR)),
            P(70 * 128, 8 * 72));
  EXPECT_EQ(
      sizes(makeOutput(QCT_REF_FP8_E4M3, QCT_REF_COL, QCT_REF_SCALE_AMAX)),
      P(256 * 70, 256 * 1 * 4));
  EXPECT_EQ(sizes(makeOutput(QCT_REF_MXFP4, QCT_REF_COL, QCT_REF_SCALE_RCEIL)),
            P(256 * 35, 256 * 3));
  EXPECT_EQ(sizes(makeOutput(QCT_REF_BF16, QCT_REF_COL, QCT_REF_SCALE_NONE)),
            P(256 * 70 * 2, 0));
  int32_t offs[4] = {0, 10, 10, 70};
  qct_ref_ragged rg{offs, 0, 3, 128, nullptr};
  // C = rup(70 + 3 * 127, 128) = rup(451, 128) = 512 (16-byte-aligned rows),
  // S = cdiv(512, 128) + 3 = 7.
  EXPECT_EQ(
      sizes(makeOutput(QCT_REF_FP8_E4M3, QCT_REF_COL, QCT_REF_SCALE_AMAX), &rg),
      P(256 * 512, 256 * 7 * 4));
  EXPECT_EQ(sizes(makeOutput(QCT_REF_FP8_E4M3, QCT_REF_COL, QCT_REF_SCALE_AMAX,
                             QCT_REF_MN_MAJOR),
                  &rg),
            P(256 * 512, 7 * 256 * 4));
  EXPECT_EQ(
      sizes(makeOutput(QCT_REF_MXFP4, QCT_REF_COL, QCT_REF_SCALE_FLOOR), &rg),
      P(256 * 256, 256 * (16 + 3)));
  // Row outputs do not change with groups.
  EXPECT_EQ(
      sizes(makeOutput(QCT_REF_MXFP4, QCT_REF_ROW, QCT_REF_SCALE_FLOOR), &rg),
      P(70 * 128, 70 * 8));
}

TEST(Tensor, ColIsTheTranspose) {
  const int M = 5, K = 64;
  std::vector<uint16_t> x = bf16Ramp(M * K, 97, 40.0f);
  qct_ref_source src{QCT_REF_BF16, x.data(), nullptr, M, K};
  Buffers b =
      run(src, makeOutput(QCT_REF_BF16, QCT_REF_COL, QCT_REF_SCALE_NONE));
  for (int k = 0; k < K; ++k)
    for (int m = 0; m < M; ++m) {
      uint16_t v;
      std::memcpy(&v, b.data.data() + 2 * (size_t(k) * M + m), 2);
      ASSERT_EQ(v, x[size_t(m) * K + k]);
    }
}

TEST(Tensor, MxColPartialBlocksAndOddPacking) {
  const int M = 33, K = 32;
  std::vector<uint16_t> x(M * K, bf16Bits(1.0f));
  x[32 * K + 0] = bf16Bits(12.0f); // token 32 of feature 0: alone in block 1
  qct_ref_source src{QCT_REF_BF16, x.data(), nullptr, M, K};
  Buffers b =
      run(src, makeOutput(QCT_REF_MXFP4, QCT_REF_COL, QCT_REF_SCALE_FLOOR));
  ASSERT_EQ(b.data.size(), size_t(K * 17));
  ASSERT_EQ(b.scales.size(), size_t(K * 2));
  EXPECT_EQ(b.scales[0], 125); // feature 0, block 0: amax 1 -> e = 0 - 2
  EXPECT_EQ(b.scales[1], 128); // block 1 is token 32 alone: 12 -> e = 3 - 2
  EXPECT_EQ(b.data[16], 0x07); // token 32 -> 6 in the low nibble, odd nibble 0
  EXPECT_EQ(b.scales[2], 125); // feature 1, block 0: amax 1 -> e = 0 - 2
}

TEST(Tensor, RaggedPlacementPaddingAndCapacity) {
  const int M = 7, K = 4;
  std::vector<float> x(M * K);
  for (int i = 0; i < M * K; ++i)
    x[size_t(i)] = float(i + 1);
  qct_ref_source src{QCT_REF_FP32, x.data(), nullptr, M, K};
  int64_t offs[5] = {0, 3, 3, 4, 7}; // groups of 3, 0, 1, 3 rows
  int64_t padded[5];
  qct_ref_ragged rg{offs, 1, 4, 4, padded};
  Buffers b = run(
      src, makeOutput(QCT_REF_FP8_E4M3, QCT_REF_COL, QCT_REF_SCALE_POW2), &rg);
  int64_t want[5] = {0, 4, 4, 8, 12};
  for (int g = 0; g < 5; ++g)
    EXPECT_EQ(padded[g], want[g]);
  // C = rup(7 + 4 * 3, 128) = 128, S = cdiv(128, 128) + 4 = 5.
  const size_t C = 128, S = (C + 127) / 128 + 4;
  ASSERT_EQ(b.data.size(), K * C);
  ASSERT_EQ(b.scales.size(), K * S * 4);
  // Feature 0: tokens 0,1,2 -> cols 0..2; token 3 -> col 4; tokens 4..6 ->
  // cols 8..10.
  const uint8_t *row = b.data.data();
  EXPECT_NE(row[0], 0);
  EXPECT_EQ(row[3], 0); // padding
  EXPECT_NE(row[4], 0);
  EXPECT_EQ(row[5], 0);
  EXPECT_NE(row[10], 0);
  for (size_t c = 11; c < C; ++c)
    EXPECT_EQ(row[c], 0) << c; // past p[G]
  // Scale columns: group 0 -> 0, group 1 (empty) owns none, 2 -> 1, 3 -> 2;
  // entries past the last owned column hold 1.0.
  EXPECT_EQ(f32At(b, 3), 1.0f);
  EXPECT_EQ(f32At(b, 4), 1.0f);
  // Group 3 of feature 0 holds tokens 4..6, x = 17, 21, 25: 25/448 -> 2^-4.
  EXPECT_EQ(f32At(b, 2), std::ldexp(1.0f, -4));
  EXPECT_EQ(f32At(b, 0),
            std::ldexp(1.0f, -5)); // group 0: 1, 5, 9 -> 9/448 -> 2^-5
  EXPECT_EQ(f32At(b, 1), std::ldexp(1.0f, -5)); // group 2: 13 -> 2^-5
}

// "capacity_tail": "untouched": the written prefix is bit for bit the zero
// tail's, and nothing after it changes (the buffers start as 0xAB).
TEST(Tensor, UntouchedCapacityTail) {
  const int M = 7, K = 32;
  std::vector<uint16_t> x = bf16Ramp(M * K, 13, 6.0f);
  qct_ref_source src{QCT_REF_BF16, x.data(), nullptr, M, K};
  int32_t offs[5] = {0, 3, 3, 4, 7}; // groups of 3, 0, 1, 3 rows
  struct Case {
    qct_ref_output out;
    int64_t P;
    size_t rowBytes, writtenRowBytes;               // per feature
    size_t scaleEntry, scaleCols, writtenScaleCols; // row_major or mn_major
    bool mnMajor;
  };
  const Case cases[] = {
      // fp8 pow2: P 4 -> p = 0, 4, 4, 8, 12; C = rup(7 + 4 * 3, 128) = 128;
      // scale columns cdiv(128, 128) + 4 = 5, the groups own 3.
      {makeOutput(QCT_REF_FP8_E4M3, QCT_REF_COL, QCT_REF_SCALE_POW2), 4, 128,
       12, 4, 5, 3, false},
      // mxfp4 mn_major, P 3 -> p[G] = 9, odd: byte 4 holds column 8 and the
      // tail's column 9, so it is written (high nibble 0), bytes 5..7 not;
      // C = rup(15, 128) = 128 (64 bytes), scale columns cdiv(128, 32) + 4 =
      // 8, the groups own 3.
      {makeOutput(QCT_REF_MXFP4, QCT_REF_COL, QCT_REF_SCALE_FLOOR,
                  QCT_REF_MN_MAJOR),
       3, 64, 5, 1, 8, 3, true},
      // bf16 (no scales), P 4: 2 bytes per column.
      {makeOutput(QCT_REF_BF16, QCT_REF_COL, QCT_REF_SCALE_NONE), 4, 256, 24, 0,
       0, 0, false},
  };
  for (const Case &c : cases) {
    qct_ref_ragged zero{offs, 0, 4, c.P, nullptr, 0};
    qct_ref_ragged keep{offs, 0, 4, c.P, nullptr, 1};
    Buffers z = run(src, c.out, &zero), u = run(src, c.out, &keep);
    ASSERT_EQ(z.data.size(), K * c.rowBytes);
    ASSERT_EQ(u.data.size(), z.data.size());
    for (size_t f = 0; f < K; ++f)
      for (size_t i = 0; i < c.rowBytes; ++i) {
        const size_t at = f * c.rowBytes + i;
        if (i < c.writtenRowBytes)
          EXPECT_EQ(u.data[at], z.data[at]) << "feature " << f << " byte " << i;
        else
          EXPECT_EQ(u.data[at], 0xAB) << "feature " << f << " byte " << i;
      }
    if (c.out.format == QCT_REF_MXFP4)
      EXPECT_EQ(u.data[4] >> 4, 0); // column 9, past p[G]: the zero nibble
    ASSERT_EQ(u.scales.size(), z.scales.size());
    const size_t lines = c.mnMajor ? (K + 3) / 4 * 4 : K;
    ASSERT_EQ(u.scales.size(), lines * c.scaleCols * c.scaleEntry);
    for (size_t line = 0; line < lines; ++line)
      for (size_t col = 0; col < c.scaleCols; ++col) {
        const size_t entry =
            c.mnMajor ? col * lines + line : line * c.scaleCols + col;
        for (size_t b = 0; b < c.scaleEntry; ++b) {
          const size_t at = entry * c.scaleEntry + b;
          if (col < c.writtenScaleCols)
            EXPECT_EQ(u.scales[at], z.scales[at]) << line << ", " << col;
          else
            EXPECT_EQ(u.scales[at], 0xAB) << line << ", " << col;
        }
      }
  }
  qct_ref_ragged bad{offs, 0, 4, 4, nullptr, 2};
  EXPECT_NE(
      failure(src,
              makeOutput(QCT_REF_FP8_E4M3, QCT_REF_COL, QCT_REF_SCALE_POW2),
              &bad)
          .find("ragged.untouched_tail = 2"),
      std::string::npos);
}

TEST(Tensor, PaddingOnlyBlocksAndMnMajorPadding) {
  const int M = 3, K = 32;
  std::vector<uint16_t> x(M * K, bf16Bits(2.0f));
  qct_ref_source src{QCT_REF_BF16, x.data(), nullptr, M, K};
  int32_t offs[3] = {0, 1, 3};
  qct_ref_ragged rg{offs, 0, 2, 128, nullptr};
  // Group 0: 1 token padded to 128 -> 4 MX blocks, 3 of them padding only.
  Buffers b = run(src,
                  makeOutput(QCT_REF_MXFP8_E4M3, QCT_REF_COL,
                             QCT_REF_SCALE_FLOOR, QCT_REF_MN_MAJOR),
                  &rg);
  const size_t C = 384, S = (C + 31) / 32 + 2; // rup(3 + 2 * 127, 128); 14
  ASSERT_EQ(b.scales.size(), S * 32);          // rup(32, 4) = 32
  EXPECT_EQ(b.scales[0 * 32 + 0], 127 - 7);    // 2 = 2^1 -> 1 - 8
  EXPECT_EQ(b.scales[1 * 32 + 0], 127);        // padding-only block
  EXPECT_EQ(b.scales[4 * 32 + 5], 127 - 7);    // group 1 starts at scale col 4
  EXPECT_EQ(b.scales[10 * 32 + 5], 127);       // past the groups
  // Dense row output, mn_major: rows padded from 3 to 4 with 1.0.
  Buffers r = run(src, makeOutput(QCT_REF_FP8_E4M3, QCT_REF_COL,
                                  QCT_REF_SCALE_AMAX, QCT_REF_MN_MAJOR));
  ASSERT_EQ(r.scales.size(), 1 * 32 * 4u);
  EXPECT_EQ(f32At(r, 0), 2.0f / 448.0f);
  std::vector<uint16_t> y(4 * 128, bf16Bits(1.0f));
  qct_ref_source s2{QCT_REF_BF16, y.data(), nullptr, 3, 128};
  Buffers rr = run(s2, makeOutput(QCT_REF_FP8_E4M3, QCT_REF_ROW,
                                  QCT_REF_SCALE_AMAX, QCT_REF_MN_MAJOR));
  ASSERT_EQ(rr.scales.size(), 4 * 4u);
  EXPECT_EQ(f32At(rr, 3), 1.0f);
  EXPECT_EQ(f32At(rr, 2), 1.0f / 448.0f);
}

TEST(Tensor, AlignedFromMxfp4AndViaBf16) {
  const int M = 1, K = 128;
  std::vector<uint8_t> data(K / 2, 0x77); // every element 6
  std::vector<uint8_t> scales = {200, 190, 0xFF, 150};
  qct_ref_source src{QCT_REF_MXFP4, data.data(), scales.data(), M, K};
  Buffers b = run(
      src, makeOutput(QCT_REF_FP8_E4M3, QCT_REF_ROW, QCT_REF_SCALE_ALIGNED));
  EXPECT_EQ(f32At(b, 0), std::ldexp(1.0f, 200 - 133));
  EXPECT_EQ(b.data[0], 0x7C);  // 6 * 2^73 / 2^67 = 384
  EXPECT_EQ(b.data[32], 0x2C); // 6 * 2^63 / 2^67 = 0.375: 10 binades lower
  EXPECT_EQ(b.data[64], 0x7F); // 0xFF block -> positive NaN
  EXPECT_EQ(b.data[96], 0x00); // 6 * 2^-50 -> +0
  // Through bf16: 6 * 2^73 is exact in bf16, so nothing changes here.
  qct_ref_output o =
      makeOutput(QCT_REF_FP8_E4M3, QCT_REF_ROW, QCT_REF_SCALE_ALIGNED);
  o.via_bf16 = 1;
  Buffers v = run(src, o);
  EXPECT_EQ(v.data, b.data);
  EXPECT_EQ(v.scales, b.scales);
  // mxfp4 -> bf16: a 0xFF block decodes to the canonical NaN.
  Buffers d =
      run(src, makeOutput(QCT_REF_BF16, QCT_REF_ROW, QCT_REF_SCALE_NONE));
  uint16_t h;
  std::memcpy(&h, d.data.data() + 2 * 64, 2);
  EXPECT_EQ(h, 0x7FFF);
  std::memcpy(&h, d.data.data(), 2);
  EXPECT_EQ(h, 0x6540); // 6 * 2^73 = 1.5 * 2^75, exact in bf16
}

TEST(Tensor, ErrorsNameTheArgumentAndWriteNothing) {
  std::vector<uint16_t> x(64 * 128, bf16Bits(1.0f));
  qct_ref_source src{QCT_REF_BF16, x.data(), nullptr, 64, 100};
  auto mx = makeOutput(QCT_REF_MXFP4, QCT_REF_ROW, QCT_REF_SCALE_FLOOR);
  EXPECT_NE(failure(src, mx, nullptr).find("K = 100 is not a multiple of 32"),
            std::string::npos);
  src.K = 128;
  EXPECT_EQ(
      failure(src,
              makeOutput(QCT_REF_FP8_E4M3, QCT_REF_ROW, QCT_REF_SCALE_ALIGNED),
              nullptr),
      "output.scale: 'aligned' needs an MX source, got bf16");
  EXPECT_NE(
      failure(src,
              makeOutput(QCT_REF_FP8_E4M3, QCT_REF_ROW, QCT_REF_SCALE_FLOOR),
              nullptr)
          .find("output.scale: 'floor' is not allowed for an fp8_e4m3 output"),
      std::string::npos);
  EXPECT_NE(
      failure(src, makeOutput(QCT_REF_MXFP4, QCT_REF_ROW, QCT_REF_SCALE_AMAX),
              nullptr)
          .find("output.scale: 'amax' is not allowed for an mxfp4 output"),
      std::string::npos);
  int32_t bad[4] = {0, 12, 10, 64};
  qct_ref_ragged rg{bad, 0, 3, 1, nullptr};
  auto col = makeOutput(QCT_REF_MXFP4, QCT_REF_COL, QCT_REF_SCALE_FLOOR);
  EXPECT_EQ(failure(src, col, &rg), "ragged.offsets[2] = 10 < offsets[1] = 12: "
                                    "offsets must be nondecreasing");
  int32_t start[3] = {1, 2, 64};
  rg = {start, 0, 2, 1, nullptr};
  EXPECT_EQ(failure(src, col, &rg),
            "ragged.offsets[0] = 1: offsets must start at 0");
  int32_t end[3] = {0, 2, 63};
  rg = {end, 0, 2, 1, nullptr};
  EXPECT_EQ(failure(src, col, &rg),
            "ragged.offsets[G = 2] = 63: offsets must end at M = 64");
  int32_t over[3] = {0, 65, 64};
  rg = {over, 0, 2, 1, nullptr};
  EXPECT_NE(failure(src, col, &rg).find("> M = 64"), std::string::npos);
  EXPECT_EQ(failure(src, mx, nullptr, 64 * 64 - 1),
            "output.data_bytes = 4095: the output needs 4096 bytes");
  EXPECT_EQ(failure(src, mx, nullptr, 64 * 64, 64 * 4 - 1),
            "output.scales_bytes = 255: the output needs 256 bytes");
  qct_ref_source mxsrc{QCT_REF_MXFP4, x.data(), nullptr, 64, 128};
  EXPECT_EQ(failure(mxsrc,
                    makeOutput(QCT_REF_BF16, QCT_REF_ROW, QCT_REF_SCALE_NONE),
                    nullptr),
            "source.scales is NULL: a mxfp4 source needs its scales");
  mxsrc.K = 48;
  EXPECT_NE(failure(mxsrc, mx, nullptr).find("source.K = 48"),
            std::string::npos);
  char err[128];
  EXPECT_NE(qct_ref_convert(nullptr, &mx, nullptr, err, sizeof err), 0);
  EXPECT_STREQ(err, "source is NULL");
}

TEST(Scalars, CEntryPoints) {
  uint8_t codes[3] = {0x7E, 0x7F, 0x01};
  double v[3];
  char err[128];
  ASSERT_EQ(qct_ref_decode(QCT_REF_S_E4M3, codes, v, 3, err, sizeof err), 0);
  EXPECT_EQ(v[0], 448.0);
  EXPECT_TRUE(std::isnan(v[1]));
  uint8_t back[3];
  ASSERT_EQ(qct_ref_encode(QCT_REF_S_E4M3, v, back, 3, err, sizeof err), 0);
  EXPECT_EQ(std::memcmp(back, codes, 3), 0);
  EXPECT_NE(qct_ref_encode(QCT_REF_S_E8M0, v, back, 3, err, sizeof err), 0);
  EXPECT_NE(qct_ref_decode(42, codes, v, 3, err, sizeof err), 0);
}

} // namespace

namespace {

// Decisions D2 of docs/numerics.md: how FP8 1x128 sources decode special
// scale_inv values, observed through an fp32 decode output.
TEST(Tensor, Fp8SourceSpecialScales) {
  const int M = 4, K = 128;
  std::vector<uint8_t> data(M * K, 0x38); // e4m3 1.0
  data[0 * K + 1] = 0x00;                 // +0 in the Inf-scaled row
  data[1 * K + 1] = 0xFF;                 // -NaN element, finite scale
  float nan = std::nanf(""), inf = HUGE_VALF;
  std::vector<float> scales = {inf, -0.5f, nan, 0.0f};
  qct_ref_source src{QCT_REF_FP8_E4M3, data.data(), scales.data(), M, K};
  Buffers b =
      run(src, makeOutput(QCT_REF_FP32, QCT_REF_ROW, QCT_REF_SCALE_NONE));
  auto at = [&](int m, int k) {
    uint32_t u;
    std::memcpy(&u, b.data.data() + 4 * (size_t(m) * K + k), 4);
    return u;
  };
  EXPECT_EQ(at(0, 0), 0x7F800000u); // 1 * Inf
  EXPECT_EQ(at(0, 1), 0x7FFFFFFFu); // 0 * Inf: NaN, canonical in fp32 (D1)
  EXPECT_EQ(at(1, 0), 0xBF000000u); // 1 * -0.5 exactly
  EXPECT_EQ(at(2, 0), 0x7FFFFFFFu); // NaN scale
  EXPECT_EQ(at(3, 0), 0x00000000u); // 1 * 0
  // The element NaN keeps its sign into an fp8 output (contract: fp8 NaN
  // keeps the sign); a NaN scale gives the positive NaN.
  Buffers q =
      run(src, makeOutput(QCT_REF_FP8_E4M3, QCT_REF_ROW, QCT_REF_SCALE_POW2));
  EXPECT_EQ(q.data[1 * K + 1], 0xFF);
  EXPECT_EQ(q.data[2 * K + 5], 0x7F);
  EXPECT_EQ(q.data[0 * K + 0], 0x7E); // Inf counts as max_F and saturates
}

} // namespace

namespace {

// qct_ref_set_threads only changes speed: outputs are bitwise identical for
// any thread count, row and col, ragged, mn_major, aligned.
TEST(Tensor, ThreadCountDoesNotChangeBits) {
  const int M = 301, K = 256;
  std::vector<uint8_t> data(M * K / 2), scales(M * K / 32);
  std::mt19937 rng(9);
  for (auto &v : data)
    v = uint8_t(rng());
  for (auto &v : scales)
    v = uint8_t(100 + rng() % 60);
  qct_ref_source src{QCT_REF_MXFP4, data.data(), scales.data(), M, K};
  int64_t offs[4] = {0, 5, 5, M};
  qct_ref_ragged rg{offs, 1, 3, 128, nullptr};
  const qct_ref_output outs[] = {
      makeOutput(QCT_REF_FP8_E4M3, QCT_REF_COL, QCT_REF_SCALE_ALIGNED),
      makeOutput(QCT_REF_MXFP4, QCT_REF_COL, QCT_REF_SCALE_RCEIL,
                 QCT_REF_MN_MAJOR),
      makeOutput(QCT_REF_FP8_E5M2, QCT_REF_ROW, QCT_REF_SCALE_AMAX),
      makeOutput(QCT_REF_BF16, QCT_REF_COL, QCT_REF_SCALE_NONE)};
  for (const qct_ref_output &o : outs) {
    for (const qct_ref_ragged *r :
         {(const qct_ref_ragged *)nullptr, (const qct_ref_ragged *)&rg}) {
      EXPECT_EQ(qct_ref_set_threads(1), 1);
      Buffers one = run(src, o, r);
      EXPECT_EQ(qct_ref_set_threads(7), 1);
      Buffers seven = run(src, o, r);
      EXPECT_EQ(qct_ref_set_threads(1), 7);
      EXPECT_EQ(one.data, seven.data);
      EXPECT_EQ(one.scales, seven.scales);
    }
  }
}

} // namespace
