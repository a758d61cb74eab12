//===- ScalarTest.cpp - Codecs of the element and scale formats -----------===//

#include "qct/Reference/Scalar.h"

#include <gtest/gtest.h>

#include <cfloat>
#include <random>

using namespace qct::ref;

namespace {

TEST(Scalar, E2M1DecodesToTheContractTable) {
  const double mags[8] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
  for (uint32_t c = 0; c < 16; ++c) {
    double v = decode(c, kE2M1);
    EXPECT_EQ(std::fabs(v), mags[c & 7]) << c;
    EXPECT_EQ(std::signbit(v), (c & 8) != 0) << c;
  }
}

TEST(Scalar, Fp8SpecialCodes) {
  EXPECT_EQ(decode(0x7E, kE4M3), 448.0);
  EXPECT_TRUE(std::isnan(decode(0x7F, kE4M3)));
  EXPECT_TRUE(std::isnan(decode(0xFF, kE4M3)));
  EXPECT_TRUE(std::signbit(decode(0xFF, kE4M3)));
  EXPECT_EQ(decode(0x01, kE4M3), std::ldexp(1.0, -9));
  EXPECT_EQ(decode(0x08, kE4M3), std::ldexp(1.0, -6));
  EXPECT_EQ(decode(0x7B, kE5M2), 57344.0);
  EXPECT_EQ(decode(0x7C, kE5M2), HUGE_VAL);
  EXPECT_EQ(decode(0xFC, kE5M2), -HUGE_VAL);
  for (uint32_t c : {0x7Du, 0x7Eu, 0x7Fu, 0xFDu})
    EXPECT_TRUE(std::isnan(decode(c, kE5M2))) << c;
  EXPECT_EQ(decode(0x01, kE5M2), std::ldexp(1.0, -16));
}

TEST(Scalar, E8M0IsAPowerOfTwoOrNaN) {
  for (int b = 0; b < 255; ++b)
    EXPECT_EQ(decodeE8M0(uint8_t(b)), std::ldexp(1.0, b - 127)) << b;
  EXPECT_TRUE(std::isnan(decodeE8M0(0xFF)));
}

// decode then encode is the identity on every non-NaN code; NaN codes map to
// the format's NaN (sign kept for fp8, canonical for IEEE).
void expectRoundTrip(const FloatFormat &F, uint32_t codes) {
  for (uint32_t c = 0; c < codes; ++c) {
    double v = decode(c, F);
    uint32_t back = encode(v, F);
    if (std::isnan(v)) {
      uint32_t want = F.ieee ? F.nanCode : (F.nanCode | (c & F.signBit));
      EXPECT_EQ(back, want) << c;
    } else if (std::isinf(v) && !F.ieee) {
      EXPECT_EQ(back, F.maxCode | (c & F.signBit)) << c; // satfinite
    } else {
      EXPECT_EQ(back, c) << c;
    }
  }
}

TEST(Scalar, EveryCodeRoundTrips) {
  expectRoundTrip(kE2M1, 16);
  expectRoundTrip(kE4M3, 256);
  expectRoundTrip(kE5M2, 256);
  expectRoundTrip(kBF16, 65536);
  expectRoundTrip(kFP16, 65536);
}

TEST(Scalar, RoundsToNearestEvenAndSaturates) {
  EXPECT_EQ(encode(5.0, kE2M1), 0x6u);  // tie 4|6 -> 4 (even mantissa)
  EXPECT_EQ(encode(2.5, kE2M1), 0x4u);  // tie 2|3 -> 2
  EXPECT_EQ(encode(0.25, kE2M1), 0x0u); // tie 0|0.5 -> 0
  EXPECT_EQ(encode(0.75, kE2M1), 0x2u); // tie 0.5|1 -> 1
  EXPECT_EQ(encode(-0.1, kE2M1), 0x8u); // -0 keeps its sign
  EXPECT_EQ(encode(1e30, kE2M1), 0x7u);
  EXPECT_EQ(encode(-HUGE_VAL, kE2M1), 0xFu);
  EXPECT_EQ(encode(464.0, kE4M3), 0x7Eu); // tie 448|480 -> 448
  EXPECT_EQ(encode(10000.0, kE4M3), 0x7Eu);
  EXPECT_EQ(encode(HUGE_VAL, kE5M2), 0x7Bu); // e5m2 saturates too
  EXPECT_EQ(encode(61440.0, kE5M2), 0x7Bu);
  EXPECT_EQ(encode(std::ldexp(1.0, -10), kE4M3), 0x00u); // half min subnormal
  EXPECT_EQ(encode(std::ldexp(1.5, -10), kE4M3), 0x01u);
  EXPECT_EQ(encode(std::nan(""), kE4M3), 0x7Fu);
  EXPECT_EQ(encode(-std::nan(""), kE4M3), 0xFFu);
  EXPECT_EQ(encode(-std::nan(""), kE5M2), 0xFFu);
  EXPECT_EQ(encode(std::nan(""), kE2M1), 0x0u);
  // IEEE targets overflow to Inf at max + half an ulp, NaN is canonical.
  EXPECT_EQ(encode(double(FLT_MAX), kBF16), 0x7F80u); // above bf16 max + ulp/2
  EXPECT_EQ(encode(std::ldexp(255.0, 120), kBF16), 0x7F7Fu);
  EXPECT_EQ(encode(std::ldexp(511.0, 119), kBF16),
            0x7F80u); // exact tie -> even
  EXPECT_EQ(encode(65520.0, kFP16), 0x7C00u);
  EXPECT_EQ(encode(65519.0, kFP16), 0x7BFFu);
  EXPECT_EQ(encode(-std::nan(""), kBF16), 0x7FFFu);
  EXPECT_EQ(encode(std::nan(""), kFP32), 0x7FFFFFFFu);
}

// fp32 rounding from bits agrees with the hardware's double -> float cast
// (one IEEE rounding) across normal, subnormal and overflowing exponents.
TEST(Scalar, Fp32RoundingMatchesHardwareCast) {
  std::mt19937_64 rng(1);
  for (int i = 0; i < 2000000; ++i) {
    uint64_t bits = rng();
    int exp = int(rng() % 330) - 160 + 1023; // 2^-160 .. 2^170
    bits = (bits & 0x800FFFFFFFFFFFFFull) | (uint64_t(exp) << 52);
    if (i % 3 == 0) // exercise ties: clear low bits, set the round bit
      bits = (bits & ~((uint64_t(1) << 29) - 1)) | (uint64_t(1) << 28);
    double v = fromBits(bits);
    uint32_t hw = bitsOfF32(float(v));
    ASSERT_EQ(encode(v, kFP32), hw) << v;
    ASSERT_EQ(encodeFast<kFP32>(v), hw) << v;
    ASSERT_EQ(encodeF32Fast(v), hw) << v;
  }
}

TEST(Scalar, FastAndGenericEncodeAgree) {
  std::mt19937_64 rng(2);
  for (int i = 0; i < 1000000; ++i) {
    uint64_t bits = rng();
    int exp = int(rng() % 80) - 40 + 1023;
    bits = (bits & 0x800FFFFFFFFFFFFFull) | (uint64_t(exp) << 52);
    if (i & 1)
      bits &= ~((uint64_t(1) << 48) - 1); // short significands: many ties
    double v = fromBits(bits);
    ASSERT_EQ(encodeSmall<kE2M1>(v), encode(v, kE2M1)) << v;
    ASSERT_EQ(encodeSmall<kE4M3>(v), encode(v, kE4M3)) << v;
    ASSERT_EQ(encodeSmall<kE5M2>(v), encode(v, kE5M2)) << v;
    ASSERT_EQ(encodeFast<kE2M1>(v), encode(v, kE2M1)) << v;
    ASSERT_EQ(encodeFast<kE4M3>(v), encode(v, kE4M3)) << v;
    ASSERT_EQ(encodeFast<kE5M2>(v), encode(v, kE5M2)) << v;
    ASSERT_EQ(encodeFast<kBF16>(v), encode(v, kBF16)) << v;
    ASSERT_EQ(encodeFast<kFP16>(v), encode(v, kFP16)) << v;
  }
}

// The table-driven rounding at every representable value, every midpoint
// between neighbours and one ulp either side of it, over all binades.
TEST(Scalar, SmallTableAtEveryMidpoint) {
  for (const FloatFormat *F : {&kE2M1, &kE4M3, &kE5M2}) {
    uint32_t n = F == &kE2M1 ? 8 : 128;
    for (uint32_t c = 0; c + 1 < n; ++c) {
      double a = decode(c, *F), b = decode(c + 1, *F);
      if (!std::isfinite(b))
        b = 2 * a; // past max: any value saturates
      double mid = (a + b) / 2;
      for (double v :
           {a, mid, std::nextafter(mid, 0.0), std::nextafter(mid, 1e300), -mid,
            std::ldexp(mid, -3), std::ldexp(mid, 3)}) {
        uint32_t want = encode(v, *F);
        uint32_t got = F == &kE2M1   ? encodeSmall<kE2M1>(v)
                       : F == &kE4M3 ? encodeSmall<kE4M3>(v)
                                     : encodeSmall<kE5M2>(v);
        ASSERT_EQ(got, want) << v;
      }
    }
  }
}

// divRoundF32 is the correctly rounded quotient: for positive a, b with b an
// fp32 and a of up to 28 significant bits, the result r satisfies
// lo * b <= a <= hi * b for the midpoints lo, hi around r (ties to even), and
// those products are exact in double (25 + 24 bits).
TEST(Scalar, DivRoundF32IsCorrectlyRounded) {
  std::mt19937_64 rng(3);
  for (int i = 0; i < 300000; ++i) {
    double a = std::ldexp(double((rng() & ((1u << 28) - 1)) | (1u << 27)),
                          int(rng() % 80) - 60);
    double b = std::ldexp(double((rng() & ((1u << 24) - 1)) | (1u << 23)),
                          int(rng() % 80) - 60);
    if (i % 4 == 0) // exact quotients and ties
      a = b * double(rng() % 4096) * 0.5;
    if (a == 0)
      continue;
    double r = divRoundF32(a, b);
    float rf = float(r);
    ASSERT_EQ(double(rf), r);
    float up = std::nextafter(rf, FLT_MAX), down = std::nextafter(rf, 0.0f);
    double hi = (double(rf) + double(up)) / 2,
           lo = (double(rf) + double(down)) / 2;
    bool even = (bitsOfF32(rf) & 1) == 0;
    if (even) {
      ASSERT_LE(lo * b, a);
      ASSERT_LE(a, hi * b);
    } else {
      ASSERT_LT(lo * b, a);
      ASSERT_LT(a, hi * b);
    }
  }
}

} // namespace
