//===- BlockTest.cpp - MX and FP8 1x128 block rules -----------------------===//

#include "qct/Reference/Block.h"

#include <gtest/gtest.h>

#include <cfloat>
#include <random>
#include <vector>

using namespace qct::ref;

namespace {

std::vector<double> block(int n, double fill,
                          std::vector<std::pair<int, double>> set) {
  std::vector<double> x(size_t(n), fill);
  for (auto &[i, v] : set)
    x[size_t(i)] = v;
  return x;
}

TEST(MxBlock, FloorExponentAndSaturation) {
  uint8_t codes[32];
  auto x = block(32, 0.5, {{3, 6.0}});
  EXPECT_EQ(quantizeMxBlock(x.data(), 32, kE2M1, false, codes), 127);
  EXPECT_EQ(codes[3], 0x7);
  EXPECT_EQ(codes[0], 0x1);
  // amax/2^e in [6, 8) saturates to 6 under floor.
  x = block(32, 0.0, {{0, 7.5}, {1, -7.0}});
  EXPECT_EQ(quantizeMxBlock(x.data(), 32, kE2M1, false, codes), 127);
  EXPECT_EQ(codes[0], 0x7);
  EXPECT_EQ(codes[1], 0xF);
  // amax = 2^n exactly: floor picks n - emax.
  x = block(32, 0.0, {{5, 1024.0}});
  EXPECT_EQ(quantizeMxBlock(x.data(), 32, kE2M1, false, codes), 127 + 8);
  EXPECT_EQ(codes[5], 0x6); // 1024 / 2^8 = 4
  EXPECT_EQ(quantizeMxBlock(x.data(), 32, kE4M3, false, codes), 127 + 2);
  EXPECT_EQ(quantizeMxBlock(x.data(), 32, kE5M2, false, codes), 127 - 5);
}

TEST(MxBlock, RceilNeverSaturates) {
  uint8_t codes[32];
  auto x = block(32, 0.0, {{0, 6.0}});
  EXPECT_EQ(quantizeMxBlock(x.data(), 32, kE2M1, true, codes), 127);
  x = block(32, 0.0, {{0, std::nextafter(6.0, 7.0)}});
  EXPECT_EQ(quantizeMxBlock(x.data(), 32, kE2M1, true, codes), 128);
  x = block(32, 0.0, {{0, 7.0}});
  EXPECT_EQ(quantizeMxBlock(x.data(), 32, kE2M1, true, codes), 128);
  EXPECT_EQ(codes[0], 0x6); // 3.5 ties to 4 (even mantissa)
  x = block(32, 0.0, {{0, 448.0}});
  EXPECT_EQ(quantizeMxBlock(x.data(), 32, kE4M3, true, codes), 127);
  x = block(32, 0.0, {{0, 449.0}});
  EXPECT_EQ(quantizeMxBlock(x.data(), 32, kE4M3, true, codes), 128);
}

TEST(MxBlock, NonFiniteZeroAndClamps) {
  uint8_t codes[32];
  for (double bad : {std::nan(""), HUGE_VAL, -HUGE_VAL}) {
    auto x = block(32, 1.0, {{7, bad}});
    EXPECT_EQ(quantizeMxBlock(x.data(), 32, kE4M3, false, codes), 0xFF);
    for (uint8_t c : codes)
      EXPECT_EQ(c, 0);
  }
  auto z = block(32, 0.0, {{2, -0.0}});
  EXPECT_EQ(quantizeMxBlock(z.data(), 32, kE2M1, false, codes), 0);
  EXPECT_EQ(codes[2], 0x8);
  EXPECT_EQ(codes[0], 0x0);
  // Tiny amax clamps to byte 0 and its elements round from the exact quotient.
  auto t =
      block(32, 0.0, {{0, std::ldexp(1.0, -133)}, {1, std::ldexp(1.0, -128)}});
  EXPECT_EQ(quantizeMxBlock(t.data(), 32, kE2M1, false, codes), 0);
  EXPECT_EQ(codes[0], 0x0); // 2^-6 -> 0
  EXPECT_EQ(codes[1], 0x1); // 2^-1 -> 0.5
  auto h = block(32, 0.0, {{0, std::ldexp(1.75, 142)}});
  EXPECT_EQ(quantizeMxBlock(h.data(), 32, kE2M1, false, codes), 254);
  EXPECT_EQ(codes[0], 0x7); // saturates
}

TEST(Fp8Block, AmaxScale) {
  uint8_t codes[128];
  auto x = block(128, 1.0, {{9, -448.0}});
  EXPECT_EQ(quantizeFp8AmaxBlock(x.data(), 128, kE4M3, codes), 1.0f);
  EXPECT_EQ(codes[9], 0xFE);
  EXPECT_EQ(codes[0], 0x38);
  // s = fl32(amax / 448), elements fl32(x / s) then e4m3.
  x = block(128, 0.0, {{0, 1.0}, {1, 0.3}});
  float s = quantizeFp8AmaxBlock(x.data(), 128, kE4M3, codes);
  EXPECT_EQ(s, 1.0f / 448.0f);
  EXPECT_EQ(codes[0], 0x7E);
  EXPECT_EQ(codes[1], encode(double(float(0.3 / double(s))), kE4M3));
  // Zero and underflowing quotients give s = 1.
  auto z = block(128, 0.0, {{4, -0.0}});
  EXPECT_EQ(quantizeFp8AmaxBlock(z.data(), 128, kE4M3, codes), 1.0f);
  EXPECT_EQ(codes[4], 0x80);
  auto u = block(128, 0.0, {{0, double(std::ldexp(1.0f, -149))}});
  EXPECT_EQ(quantizeFp8AmaxBlock(u.data(), 128, kE4M3, codes), 1.0f);
  // A subnormal s is kept, never flushed.
  auto sub = block(128, 0.0, {{0, std::ldexp(448.0, -130)}});
  EXPECT_EQ(quantizeFp8AmaxBlock(sub.data(), 128, kE4M3, codes),
            std::ldexp(1.0f, -130));
  EXPECT_EQ(codes[0], 0x7E);
}

TEST(Fp8Block, AmaxNaNAndInf) {
  uint8_t codes[128];
  auto x =
      block(128, 2.0, {{0, std::nan("")}, {1, -std::nan("")}, {2, -HUGE_VAL}});
  // NaN ignored, Inf counts as max_F: amax = 448, s = 1.
  EXPECT_EQ(quantizeFp8AmaxBlock(x.data(), 128, kE4M3, codes), 1.0f);
  EXPECT_EQ(codes[0], 0x7F);
  EXPECT_EQ(codes[1], 0xFF);
  EXPECT_EQ(codes[2], 0xFE);
  EXPECT_EQ(codes[3], 0x40);
  auto e = block(128, 2.0, {{0, HUGE_VAL}});
  EXPECT_EQ(quantizeFp8AmaxBlock(e.data(), 128, kE5M2, codes), 1.0f);
  EXPECT_EQ(codes[0], 0x7B);
}

TEST(Fp8Block, Pow2Scale) {
  uint8_t codes[128];
  auto x = block(128, 0.0, {{0, 448.0}});
  EXPECT_EQ(quantizeFp8Pow2Block(x.data(), 128, kE4M3, codes), 1.0f);
  x = block(128, 0.0, {{0, 449.0}});
  EXPECT_EQ(quantizeFp8Pow2Block(x.data(), 128, kE4M3, codes), 2.0f);
  EXPECT_EQ(codes[0], encode(224.5, kE4M3));
  x = block(128, 0.0, {{0, std::ldexp(1.0, -200)}});
  EXPECT_EQ(quantizeFp8Pow2Block(x.data(), 128, kE4M3, codes),
            std::ldexp(1.0f, -127));
  x = block(128, 0.0, {{0, std::ldexp(1.0, 140)}});
  EXPECT_EQ(quantizeFp8Pow2Block(x.data(), 128, kE5M2, codes),
            std::ldexp(1.0f, 125));
  auto z = block(128, 0.0, {});
  EXPECT_EQ(quantizeFp8Pow2Block(z.data(), 128, kE5M2, codes), 1.0f);
}

TEST(Fp8Block, AlignedExponent) {
  EXPECT_EQ(alignedScaleExponent(127, kE2M1, kE4M3), -6);
  EXPECT_EQ(alignedScaleExponent(0, kE2M1, kE4M3), -133);
  EXPECT_EQ(alignedScaleExponent(-1, kE2M1, kE4M3), 0); // all 0xFF
  EXPECT_EQ(alignedScaleExponent(127, kE4M3, kE4M3), 0);
  EXPECT_EQ(alignedScaleExponent(127, kE2M1, kE5M2), -13);
  EXPECT_EQ(alignedScaleExponent(254, kE5M2, kE4M3), 127); // clamped
  EXPECT_EQ(alignedScaleExponent(0, kE2M1, kE5M2), -140);
  // The largest mxfp4 element lands on 384 <= 448.
  uint8_t code;
  double six = 6.0 * std::ldexp(1.0, 200 - 127);
  quantizeFp8FixedBlock(&six, 1, kE4M3, alignedScaleExponent(200, kE2M1, kE4M3),
                        &code);
  EXPECT_EQ(decode(code, kE4M3), 384.0);
}

// The fast fl32(x / s) path (double quotient, then fp32) equals the exact
// integer division whenever x has at most 24 significant bits.
TEST(Fp8Block, Fp32QuotientFastPathIsExact) {
  std::mt19937_64 rng(4);
  for (int i = 0; i < 1000000; ++i) {
    double x = std::ldexp(double((rng() & ((1u << 24) - 1)) | 1u),
                          int(rng() % 300) - 150);
    float s = std::ldexp(float((rng() & ((1u << 24) - 1)) | (1u << 23)),
                         int(rng() % 250) - 150);
    if (i & 1)
      x = -x;
    ASSERT_EQ(fp32Quotient(x, double(s)), divRoundF32(x, double(s)))
        << x << " " << s;
  }
}

} // namespace
