//===- CodecTest.cpp - The device codecs on the CPU, against qct_reference
//--===//
//
// The device headers' scalar codecs and block quantizers compile as plain C++
// (__host__ __device__ expand to nothing; a block is one "lane", L = 1), so
// they are checked here exhaustively against the numerics reference
// (compiler/lib/Reference), which is an independent implementation of
// docs/numerics.md. On the host the fp8 hardware conversion is replaced by the
// exact encoder; that the GPU's cvt.rn.satfinite agrees on exact fp32 inputs
// is checked on the GPU by the GPU tier (tests/gpu) on every generated kernel.
//
//===----------------------------------------------------------------------===//

#include "DeviceTestUtil.h"

#include "qct/Reference/Block.h"
#include "qct/Reference/Scalar.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

namespace dev = qct::dev;
namespace ref = qct::ref;

namespace {

using qct::test::bits;
using qct::test::f32;
using qct::test::packedByte;

struct Pair {
  dev::FloatFmt d;
  const ref::FloatFormat *r;
  const char *name;
};
const Pair kFormats[] = {
    {dev::kE2M1(), &ref::kE2M1, "e2m1"}, {dev::kE4M3(), &ref::kE4M3, "e4m3"},
    {dev::kE5M2(), &ref::kE5M2, "e5m2"}, {dev::kBF16(), &ref::kBF16, "bf16"},
    {dev::kFP16(), &ref::kFP16, "fp16"}, {dev::kF32(), &ref::kFP32, "fp32"}};

/// Every bf16 pattern, every fp16 pattern, and every 251st fp32 pattern.
std::vector<float> allInputs() {
  std::vector<float> v;
  for (uint32_t b = 0; b < 65536; ++b)
    v.push_back(f32(b << 16));
  for (uint32_t h = 0; h < 65536; ++h)
    v.push_back((float)ref::decode(h, ref::kFP16));
  for (uint64_t u = 0; u < (1ull << 32); u += 251)
    v.push_back(f32(uint32_t(u)));
  return v;
}
const std::vector<float> &inputs() {
  static const std::vector<float> v = allInputs();
  return v;
}

TEST(DeviceCodec, EncodeMatchesReference) {
  long long n = 0;
  for (const Pair &p : kFormats) {
    for (float x : inputs()) {
      if (std::isnan(x) && p.d.bits == 4)
        continue; // e2m1 has no NaN; the MX block rule never lets one through
      ASSERT_EQ(dev::encode(p.d, x), ref::encode(double(x), *p.r))
          << p.name << " x bits " << std::hex << bits(x);
      ++n;
    }
  }
  RecordProperty("checked", std::to_string(n));
}

TEST(DeviceCodec, EncodeScaledMatchesReference) {
  // round_F(x / 2^e) from the exact quotient: x * 2^-e is exact in double.
  long long n = 0;
  for (int fi = 0; fi < 3; ++fi) {
    const Pair &p = kFormats[fi];
    for (uint32_t b = 0; b < 65536; b += 3) {
      const float x = f32(b << 16);
      if (!std::isfinite(x))
        continue;
      for (int e = -170; e <= 150; e += 1) {
        ASSERT_EQ(dev::encode(p.d, x, e),
                  ref::encode(std::ldexp(double(x), -e), *p.r))
            << p.name << " x bits " << std::hex << bits(x) << std::dec << " e "
            << e;
        ++n;
      }
    }
  }
  RecordProperty("checked", std::to_string(n));
}

TEST(DeviceCodec, FastE2M1AndBf16) {
  long long n = 0;
  for (float x : inputs()) {
    if (std::isfinite(x)) {
      ASSERT_EQ(dev::e2m1_from_f32(x), ref::encode(double(x), ref::kE2M1))
          << std::hex << bits(x);
      ++n;
    }
    ASSERT_EQ(dev::bf16_from_f32(x), ref::encode(double(x), ref::kBF16))
        << std::hex << bits(x);
    ++n;
  }
  RecordProperty("checked", std::to_string(n));
}

void expectSameValue(double got, double want, const char *what, uint32_t code) {
  if (std::isnan(want)) {
    EXPECT_TRUE(std::isnan(got)) << what << " code " << code;
    EXPECT_EQ(std::signbit(got), std::signbit(want))
        << what << " code " << code;
  } else {
    EXPECT_EQ(bits(got), bits(want)) << what << " code " << code;
  }
}

TEST(DeviceCodec, DecodersExact) {
  for (uint32_t c = 0; c < 16; ++c)
    expectSameValue(dev::e2m1_to_f32(c), ref::decode(c, ref::kE2M1), "e2m1", c);
  for (uint32_t c = 0; c < 256; ++c) {
    expectSameValue(dev::e4m3_to_f32(c), ref::decode(c, ref::kE4M3), "e4m3", c);
    expectSameValue(dev::e5m2_to_f32(c), ref::decode(c, ref::kE5M2), "e5m2", c);
  }
  for (uint32_t c = 0; c < 65536; ++c) {
    expectSameValue(dev::fp16_to_f32(c), ref::decode(c, ref::kFP16), "fp16", c);
    expectSameValue(dev::bf16_to_f32(c), ref::decodeBF16(uint16_t(c)), "bf16",
                    c);
  }
}

/// Positive finite amax candidates: every bf16/fp16 value, the fp32 sweep,
/// and the exact values of quantized sources beyond fp32 (elem * 2^k).
std::vector<double> amaxInputs() {
  std::vector<double> v;
  for (float x : inputs())
    if (std::isfinite(x) && x > 0)
      v.push_back(x);
  for (uint32_t c = 1; c < 0x7F; ++c)
    for (int k = -127; k <= 127; ++k)
      for (const ref::FloatFormat *F : {&ref::kE4M3, &ref::kE5M2}) {
        const double e = ref::decode(c, *F);
        if (std::isfinite(e)) // e5m2 0x7C.. are Inf/NaN
          v.push_back(std::ldexp(e, k));
      }
  return v;
}

TEST(DeviceCodec, ScaleExponentsFromBits) {
  long long n = 0;
  for (double a : amaxInputs()) {
    const dev::Parts pd = dev::parts_f64(a);
    for (int fi = 0; fi < 3; ++fi) {
      const Pair &p = kFormats[fi];
      int bf = ref::floorScaleExponent(a, *p.r) + 127,
          bc = ref::ceilScaleExponent(a, *p.r) + 127;
      bf = bf < 0 ? 0 : (bf > 254 ? 254 : bf);
      bc = bc < 0 ? 0 : (bc > 254 ? 254 : bc);
      ASSERT_EQ((int)dev::mx_scale_byte<false>(p.d, pd.m, pd.E), bf)
          << p.name << " " << a;
      ASSERT_EQ((int)dev::mx_scale_byte<true>(p.d, pd.m, pd.E), bc)
          << p.name << " " << a;
      if (fi > 0) {
        int e = ref::ceilScaleExponent(a, *p.r);
        e = e < -127 ? -127 : (e > 127 ? 127 : e);
        ASSERT_EQ(dev::pow2_scale_exp(p.d, pd.m, pd.E), e)
            << p.name << " " << a;
      }
      if (float(a) == a) { // the fp32 fast path
        ASSERT_EQ((int)dev::mx_scale_byte_f32<false>(p.d, bits(float(a))), bf);
        ASSERT_EQ((int)dev::mx_scale_byte_f32<true>(p.d, bits(float(a))), bc);
      }
      n += 3;
    }
  }
  RecordProperty("checked", std::to_string(n));
}

TEST(DeviceCodec, DivisionRoundsOnce) {
  std::mt19937_64 rng(7);
  long long n = 0;
  for (int i = 0; i < 2000000; ++i) {
    // a: up to 28 significant bits (fp8 element times an fp32 scale), any
    // exponent a quantized source reaches; b: an fp32, normal or subnormal.
    const int abits = 1 + int(rng() % 28);
    const double a = std::ldexp(
        double((rng() & ((1ull << abits) - 1)) | (1ull << (abits - 1))),
        int(rng() % 320) - 180 - abits);
    uint32_t bb = uint32_t(rng()) & 0x7F7FFFFFu;
    if (bb == 0)
      bb = 1;
    const double b = f32(bb);
    const dev::Parts pa = dev::parts_f64(a), pb = dev::parts_f32(f32(bb));
    const double want = ref::divRoundF32(a, b);
    ASSERT_EQ(f32(dev::div_f32_bits(false, pa.m, pa.E, pb.m, pb.E)),
              (float)want)
        << a << " / " << b;
    ++n;
  }
  RecordProperty("checked", std::to_string(n));
}

//===----------------------------------------------------------------------===//
// The aligned conversion, exhaustively
//===----------------------------------------------------------------------===//

template <dev::Fmt SF, dev::Fmt DF>
void alignedExhaustive(const ref::FloatFormat &srcF,
                       const ref::FloatFormat &dstF, int codes, long long &n) {
  using O = dev::Out<DF, dev::Layout::row, 128, dev::Scale::aligned>;
  for (int bmax = 0; bmax <= 254; ++bmax) {
    const int e = ref::alignedScaleExponent(bmax, srcF, dstF);
    for (int bj = 0; bj <= bmax; ++bj) {
      for (int c = 0; c < codes; ++c) {
        // Element 0 sets bmax; element 1 is the one under test.
        const uint32_t code[2] = {0, uint32_t(c)};
        const int b[2] = {bmax, bj};
        const dev::QBlock<2> q = dev::quantize_aligned<O, SF, 2, 1>(code, b);
        const double ev = ref::decode(uint32_t(c), srcF);
        const double x = std::isnan(ev) ? ev : ev * ref::pow2(bj - 127);
        uint8_t want;
        ref::quantizeFp8FixedBlock(&x, 1, dstF, e, &want);
        ASSERT_EQ(q.q[1], want)
            << "code " << c << " b_j " << bj << " bmax " << bmax;
        ASSERT_EQ(q.scale, bits(float(ref::pow2(e)))) << "bmax " << bmax;
        ++n;
      }
    }
  }
  // NaN source blocks: their elements are the positive NaN; with every
  // covered block NaN the scale is 1.
  const uint32_t code[2] = {3, 11};
  const int b[2] = {0xFF, 0xFF};
  const dev::QBlock<2> q = dev::quantize_aligned<O, SF, 2, 1>(code, b);
  EXPECT_EQ(q.q[0], 0x7Fu);
  EXPECT_EQ(q.q[1], 0x7Fu);
  EXPECT_EQ(q.scale, 0x3F800000u);
}

TEST(DeviceCodec, AlignedEveryCodeGapAndScale) {
  long long n = 0;
  using F = dev::Fmt;
  alignedExhaustive<F::mxfp4, F::fp8_e4m3>(ref::kE2M1, ref::kE4M3, 16, n);
  alignedExhaustive<F::mxfp4, F::fp8_e5m2>(ref::kE2M1, ref::kE5M2, 16, n);
  alignedExhaustive<F::mxfp8_e4m3, F::fp8_e4m3>(ref::kE4M3, ref::kE4M3, 256, n);
  alignedExhaustive<F::mxfp8_e5m2, F::fp8_e4m3>(ref::kE5M2, ref::kE4M3, 256, n);
  alignedExhaustive<F::mxfp8_e4m3, F::fp8_e5m2>(ref::kE4M3, ref::kE5M2, 256, n);
  RecordProperty("checked", std::to_string(n));
}

TEST(DeviceCodec, AlignedE2M1GapTable) {
  // The paper's direct conversion: e2m1 * 2^(6 - gap) into e4m3, gap 0..40.
  using O =
      dev::Out<dev::Fmt::fp8_e4m3, dev::Layout::row, 128, dev::Scale::aligned>;
  for (int c = 0; c < 16; ++c)
    for (int gap = 0; gap <= 40; ++gap) {
      const uint32_t code[2] = {0, uint32_t(c)};
      const int b[2] = {200, 200 - gap};
      const dev::QBlock<2> q =
          dev::quantize_aligned<O, dev::Fmt::mxfp4, 2, 1>(code, b);
      const double x =
          ref::decode(uint32_t(c), ref::kE2M1) * std::ldexp(1.0, 6 - gap);
      EXPECT_EQ(q.q[1], ref::encode(x, ref::kE4M3))
          << "code " << c << " gap " << gap;
      if (gap <= 14) // exact: decoding gives the value back
        EXPECT_EQ(ref::decode(q.q[1], ref::kE4M3), x)
            << "code " << c << " gap " << gap;
    }
}

TEST(DeviceCodec, AlignedE2M1ByteTableBlock) {
  // The row kernel's table path (prmt emulated on the host from the PTX ISA
  // text): every code in every position, every b_j <= bmax, every bmax, both
  // fp8 targets, against the reference element by element.
  long long n = 0;
  std::mt19937_64 rng(5);
  for (int e5 = 0; e5 < 2; ++e5) {
    const ref::FloatFormat &F = e5 ? ref::kE5M2 : ref::kE4M3;
    for (int bmax = 0; bmax <= 254; ++bmax) {
      const int se = ref::alignedScaleExponent(bmax, ref::kE2M1, F);
      for (int bj = 0; bj <= bmax + 1; ++bj) {
        const uint32_t b =
            bj > bmax ? 0xFF : uint32_t(bj); // one NaN block per bmax
        uint32_t codes[4];
        uint8_t c[32];
        for (int i = 0; i < 32; ++i)
          c[i] = uint8_t(i < 16 ? i : rng() & 0xF); // every code at least once
        for (int w = 0; w < 4; ++w) {
          codes[w] = 0;
          for (int j = 0; j < 8; ++j)
            codes[w] |= uint32_t(c[8 * w + j]) << (4 * j);
        }
        uint32_t out[8];
        if (e5)
          dev::aligned_e2m1_block<true>(codes, b, se, out);
        else
          dev::aligned_e2m1_block<false>(codes, b, se, out);
        for (int i = 0; i < 32; ++i) {
          const double x = b == 0xFF ? std::nan("")
                                     : ref::decode(c[i], ref::kE2M1) *
                                           ref::pow2(int(b) - 127);
          uint8_t want;
          ref::quantizeFp8FixedBlock(&x, 1, F, se, &want);
          ASSERT_EQ(packedByte(out, i), want)
              << "e5m2 " << e5 << " bmax " << bmax << " b " << b << " code "
              << int(c[i]);
          ++n;
        }
      }
    }
  }
  RecordProperty("checked", std::to_string(n));
}

//===----------------------------------------------------------------------===//
// Block quantizers on random and adversarial blocks
//===----------------------------------------------------------------------===//

/// A block of N values: random bf16 bits in several regimes.
template <int N>
void makeBlock(std::mt19937_64 &rng, int regime, float (&v)[N]) {
  const int base = int(rng() % 254);
  for (int i = 0; i < N; ++i) {
    uint32_t u;
    switch (regime) {
    case 0: // any bits (NaN/Inf appear)
      u = uint32_t(rng()) << 16;
      break;
    case 1: // one binade neighbourhood, no specials
      u = (uint32_t(std::max(0, std::min(254, base - int(rng() % 12)))) << 23) |
          (uint32_t(rng()) & 0x807F0000u);
      break;
    case 2: // subnormal bf16 and zeros
      u = (rng() % 4 ? uint32_t(rng() % 0x80) << 16 : 0) |
          (uint32_t(rng()) & 0x80000000u);
      break;
    default: // one NaN or Inf in a tame block
      u = (uint32_t(120 + rng() % 10) << 23) | (uint32_t(rng()) & 0x807F0000u);
      if (i == int(rng() % N))
        u = rng() % 2 ? 0x7F800000u : 0xFFC00000u;
      break;
    }
    v[i] = f32(u);
  }
}

/// A device block equals the reference's codes and scale (block t).
template <int N>
void expectBlock(const dev::QBlock<N> &q, const uint8_t (&want)[N],
                 uint32_t wantScale, int t) {
  ASSERT_EQ(q.scale, wantScale) << "block " << t;
  for (int i = 0; i < N; ++i)
    ASSERT_EQ(q.q[i], want[i]) << "block " << t << " element " << i;
}

template <typename O, int N> void checkHpBlocks(long long &n) {
  std::mt19937_64 rng(11 + N);
  for (int t = 0; t < 40000; ++t) {
    float v[N];
    makeBlock<N>(rng, t % 4, v);
    double x[N];
    for (int i = 0; i < N; ++i)
      x[i] = v[i];
    uint8_t want[N];
    const uint32_t wantScale = qct::test::referenceBlock<O, N>(x, want);
    ASSERT_NO_FATAL_FAILURE(
        expectBlock(dev::quantize_hp<O, N, 1>(v), want, wantScale, t));
    // The exact (double) path must agree on the same values.
    const dev::QBlock<N> qe = dev::quantize_exact<O, N, 1>(x);
    ASSERT_EQ(qe.scale, wantScale) << "exact block " << t;
    for (int i = 0; i < N; ++i)
      ASSERT_EQ(qe.q[i], want[i]) << "exact block " << t << " element " << i;
    ++n;
  }
}

/// Blocks of exact values of quantized sources, beyond fp32's range too.
template <typename O, int N> void checkExactBlocks(long long &n) {
  std::mt19937_64 rng(23 + N);
  for (int t = 0; t < 40000; ++t) {
    double x[N];
    const int k0 = int(rng() % 255) - 127;
    for (int i = 0; i < N; ++i) {
      const uint32_t c = uint32_t(rng() & 0xFF);
      double e = ref::decode(c, t % 2 ? ref::kE5M2 : ref::kE4M3);
      if (t % 7 == 0 && std::isnan(e))
        e = 1.0;
      // fp8 element times an fp32 scale: 28 significant bits.
      const double s = double(
          f32((uint32_t(std::max(1, std::min(254, k0 + 127 - int(rng() % 8))))
               << 23) |
              (uint32_t(rng()) & 0x7FFFFF)));
      x[i] = (t % 3 == 0) ? std::ldexp(e, k0) : e * s;
    }
    uint8_t want[N];
    const uint32_t wantScale = qct::test::referenceBlock<O, N>(x, want);
    const dev::QBlock<N> q = dev::quantize_exact<O, N, 1>(x);
    ASSERT_EQ(q.scale, wantScale) << "block " << t;
    for (int i = 0; i < N; ++i)
      ASSERT_EQ(q.q[i], want[i])
          << "block " << t << " element " << i << " x " << x[i];
    ++n;
  }
}

/// The row kernel's fast path for quantized sources with power-of-two scales:
/// decoded values as exact fp32 (pow2_scaled_value), then the fp32 quantizer,
/// against the reference on the exact values. Every element code, scales over
/// the whole accepted range and beyond it (which must be refused).
template <dev::Fmt SF, typename O, int N> void checkPow2SourceBlocks(long long &n) {
  std::mt19937_64 rng(31 + N + int(SF));
  constexpr bool srcMx = dev::FmtTraits<SF>::mx;
  const ref::FloatFormat &E =
      SF == dev::Fmt::fp8_e5m2 || SF == dev::Fmt::mxfp8_e5m2 ? ref::kE5M2
                                                             : ref::kE4M3;
  for (int t = 0; t < 60000; ++t) {
    const int k = int(rng() % 261) - 130;
    const uint32_t scale =
        srcMx ? uint32_t(std::max(0, std::min(254, k + 127)))
              : (t % 11 == 0 ? bits(float(std::ldexp(1.5, k)))
                             : (uint32_t(std::max(1, std::min(254, k + 127)))
                                << 23));
    int kk = 0, frexpExp = 0;
    const bool fast = dev::pow2_source_scale<SF>(scale, kk);
    const double sv = srcMx ? ref::pow2(int(scale) - 127) : double(f32(scale));
    const bool isPow2 = std::frexp(sv, &frexpExp) == 0.5;
    if (!fast) {
      ASSERT_TRUE(!isPow2 || std::abs(std::ilogb(sv)) > 100) << scale;
      continue;
    }
    ASSERT_TRUE(isPow2) << scale;
    float v[N];
    double x[N];
    for (int i = 0; i < N; ++i) {
      uint32_t c = uint32_t(i < 256 && t % 2 ? i : rng()) & 0xFF;
      if (t % 5 != 0 && std::isnan(ref::decode(c, E)))
        c = 0x38; // most blocks without NaN
      v[i] = dev::pow2_scaled_value<SF>(c, kk);
      x[i] = ref::decode(c, E) * sv;
      if (!std::isnan(x[i]))
        ASSERT_EQ(double(v[i]), x[i]) << "code " << c << " scale " << scale;
    }
    uint8_t want[N];
    const uint32_t wantScale = qct::test::referenceBlock<O, N>(x, want);
    ASSERT_NO_FATAL_FAILURE(
        expectBlock(dev::quantize_hp<O, N, 1>(v), want, wantScale, t));
    ++n;
  }
}

TEST(DeviceCodec, Pow2SourceFastPath) {
  using F = dev::Fmt;
  using L = dev::Layout;
  using S = dev::Scale;
  long long n = 0;
  checkPow2SourceBlocks<F::fp8_e4m3, dev::Out<F::mxfp4, L::row, 32, S::floor>, 32>(n);
  checkPow2SourceBlocks<F::fp8_e5m2, dev::Out<F::mxfp4, L::row, 32, S::rceil>, 32>(n);
  checkPow2SourceBlocks<F::fp8_e4m3, dev::Out<F::mxfp8_e5m2, L::row, 32, S::floor>, 32>(n);
  checkPow2SourceBlocks<F::mxfp8_e4m3, dev::Out<F::mxfp4, L::row, 32, S::floor>, 32>(n);
  checkPow2SourceBlocks<F::mxfp8_e5m2, dev::Out<F::fp8_e4m3, L::row, 128, S::amax>, 128>(n);
  checkPow2SourceBlocks<F::fp8_e5m2, dev::Out<F::fp8_e4m3, L::row, 128, S::pow2>, 128>(n);
  RecordProperty("blocks", std::to_string(n));
}

TEST(DeviceCodec, BlocksMatchReference) {
  using F = dev::Fmt;
  using L = dev::Layout;
  using S = dev::Scale;
  long long n = 0;
  checkHpBlocks<dev::Out<F::mxfp4, L::row, 32, S::floor>, 32>(n);
  checkHpBlocks<dev::Out<F::mxfp4, L::row, 32, S::rceil>, 32>(n);
  checkHpBlocks<dev::Out<F::mxfp8_e4m3, L::row, 32, S::floor>, 32>(n);
  checkHpBlocks<dev::Out<F::mxfp8_e5m2, L::row, 32, S::rceil>, 32>(n);
  checkHpBlocks<dev::Out<F::fp8_e4m3, L::row, 128, S::amax>, 128>(n);
  checkHpBlocks<dev::Out<F::fp8_e5m2, L::row, 128, S::amax>, 128>(n);
  checkHpBlocks<dev::Out<F::fp8_e4m3, L::row, 128, S::pow2>, 128>(n);
  checkHpBlocks<dev::Out<F::fp8_e5m2, L::row, 128, S::pow2>, 128>(n);
  checkExactBlocks<dev::Out<F::mxfp4, L::row, 32, S::floor>, 32>(n);
  checkExactBlocks<dev::Out<F::mxfp8_e4m3, L::row, 32, S::rceil>, 32>(n);
  checkExactBlocks<dev::Out<F::fp8_e4m3, L::row, 128, S::amax>, 128>(n);
  checkExactBlocks<dev::Out<F::fp8_e4m3, L::row, 128, S::pow2>, 128>(n);
  checkExactBlocks<dev::Out<F::fp8_e5m2, L::row, 128, S::amax>, 128>(n);
  RecordProperty("blocks", std::to_string(n));
}

//===----------------------------------------------------------------------===//
// The bf16 raw-code fast paths (quant.cuh): every bf16 pattern at every scale
//===----------------------------------------------------------------------===//

TEST(DeviceCodec, Bf16x2FmaRoundsOnce) {
  // The host version of fma.rn.bf16x2 against the reference's rounding of
  // the exact a * b + c. Double holds the product exactly (16 bits); where
  // the sum is not exact in double, the TwoSum error says on which side of
  // the double sum s the exact value lies. That matters only if s is a bf16
  // tie: then the exact value rounds like s's double neighbour on that side.
  auto want = [](uint32_t a, uint32_t b, uint32_t c) -> uint32_t {
    const double x = double(f32(a << 16)), y = double(f32(b << 16)),
                 z = double(f32(c << 16));
    const double p = x * y, s = p + z;
    if (std::isnan(s))
      return 0x7FFFu;
    const double bb = s - p, err = (p - (s - bb)) + (z - bb);
    if (s == 0 && err == 0) // exact zero: -0 only for (-0) + (-0)
      return std::signbit(p) && std::signbit(z) ? 0x8000u : 0u;
    if (err != 0 && std::isfinite(s) && s != 0) {
      const double q = std::ldexp(1.0, std::max(std::ilogb(s) - 7, -133));
      if (std::fmod(std::fabs(s), q) == q / 2) // a tie: exact fmod
        return ref::encode(std::nextafter(s, err > 0 ? INFINITY : -INFINITY),
                           ref::kBF16);
    }
    return ref::encode(s, ref::kBF16);
  };
  std::mt19937_64 rng(5);
  long long n = 0;
  for (int t = 0; t < 4000000; ++t) {
    uint32_t a = uint32_t(rng()) & 0xFFFF, b = uint32_t(rng()) & 0xFFFF,
             c = uint32_t(rng()) & 0xFFFF;
    if (t % 3 == 0) // exponents close together: cancellation, carries, ties
      c = (c & 0x807F) |
          (uint32_t(std::min(254, std::max(0, int((a >> 7) & 0xFF) +
                                                  int((b >> 7) & 0xFF) - 127 +
                                                  int(rng() % 17) - 8)))
           << 7);
    ASSERT_EQ(dev::bf16_fma_rn(a, b, c), want(a, b, c))
        << std::hex << a << " " << b << " " << c;
    ++n;
  }
  // The products the mxfp4 path forms: every |x| * 2^-6 + 2^k.
  for (uint32_t a = 0; a < 0x8000; ++a)
    for (uint32_t k = 1; k < 255; ++k) {
      ASSERT_EQ(dev::bf16_fma_rn(a, 0x3C80, k << 7), want(a, 0x3C80, k << 7))
          << std::hex << a << " " << k;
      ++n;
    }
  const uint32_t x2 = dev::bf16x2_fma_rn(0x3F80BF80u, 0x40004000u, 0x3F800000u);
  EXPECT_EQ(x2, 0x4040C000u); // lanes independent: -1*2+0 and 1*2+1
  RecordProperty("checked", std::to_string(n));
}

/// Blocks that sweep every bf16 pattern under every reachable block maximum:
/// for each anchor |x| (every exponent, mantissas around the rounding and
/// saturation thresholds, signs alternating) the other B-1 elements take,
/// block after block, every pattern whose magnitude does not exceed it, so
/// each pattern meets each scale at varying positions. Calls
/// f(block, anchor) for each block.
template <int B, typename F> void sweepBlocks(const uint32_t (&mants)[4], F f) {
  std::vector<uint16_t> pats;
  int ai = 0;
  for (uint32_t e = 0; e < 256; ++e)
    for (uint32_t m : mants) {
      const uint32_t anchor = (e << 7) | m;
      pats.clear();
      for (uint32_t p = 0; p < 65536; ++p)
        if ((p & 0x7FFF) <= anchor || (anchor > 0x7F80 && p % 97 == 0))
          pats.push_back(uint16_t(p));
      const int apos = ai % B;
      size_t k = size_t(ai) * 7 % pats.size();
      for (size_t done = 0; done < pats.size(); done += B - 1) {
        uint16_t x[B];
        for (int i = 0; i < B; ++i)
          x[i] = i == apos ? uint16_t(anchor | (ai % 2 ? 0x8000 : 0))
                           : pats[k++ % pats.size()];
        f(x);
      }
      ++ai;
    }
}

/// `count` random blocks of N bf16 codes in makeBlock's regimes, to `check`.
template <int N, typename Check>
void randomBf16Blocks(unsigned seed, int count, Check &&check) {
  std::mt19937_64 rng(seed);
  for (int t = 0; t < count; ++t) {
    float vf[N];
    makeBlock<N>(rng, t % 4, vf);
    uint16_t x[N];
    for (int i = 0; i < N; ++i)
      x[i] = uint16_t(bits(vf[i]) >> 16);
    check(x);
  }
}

TEST(DeviceCodec, Mxfp4FloorFromBf16Codes) {
  long long n = 0, fast = 0;
  const uint32_t mants[4] = {0x00, 0x20, 0x5F, 0x60};
  auto check = [&](const uint16_t(&x)[32]) {
    uint32_t w[16], nib[16], scale = 0x1234;
    for (int j = 0; j < 16; ++j)
      w[j] = x[2 * j] | (uint32_t(x[2 * j + 1]) << 16);
    double v[32];
    float vf[32];
    bool special = false;
    uint32_t amax = 0;
    for (int i = 0; i < 32; ++i) {
      vf[i] = f32(uint32_t(x[i]) << 16);
      v[i] = vf[i];
      special |= !std::isfinite(v[i]);
      amax = std::max(amax, uint32_t(x[i] & 0x7FFF));
    }
    uint8_t want[32];
    using O = dev::Out<dev::Fmt::mxfp4, dev::Layout::row, 32, dev::Scale::floor>;
    const uint32_t wantScale = qct::test::referenceBlock<O, 32>(v, want);
    const bool ok = dev::mxfp4_floor_bf16<16, 1>(w, nib, scale);
    // Taken exactly when finite with amax 0 or amax >= 2^-122.
    ASSERT_EQ(ok, !special && (amax == 0 || amax >= 0x0280))
        << std::hex << amax;
    ++n;
    if (!ok) {
      ASSERT_EQ(scale, 0x1234u); // touched nothing
      return;
    }
    ++fast;
    ASSERT_EQ(scale, wantScale) << "amax " << std::hex << amax;
    // The general path the device falls back to agrees as well.
    const dev::QBlock<32> q = dev::quantize_hp<
        dev::Out<dev::Fmt::mxfp4, dev::Layout::row, 32, dev::Scale::floor>, 32,
        1>(vf);
    ASSERT_EQ(q.scale, wantScale);
    for (int g = 0; g < 4; ++g) {
      const uint32_t p = dev::pack_e2m1_nibbles(nib[4 * g], nib[4 * g + 1],
                                                nib[4 * g + 2], nib[4 * g + 3]);
      for (int i = 0; i < 8; ++i) {
        ASSERT_EQ((p >> (4 * i)) & 0xF, want[8 * g + i])
            << "element " << 8 * g + i << " bits " << std::hex << x[8 * g + i]
            << " amax " << amax;
        ASSERT_EQ(q.q[8 * g + i], want[8 * g + i]);
      }
    }
  };
  sweepBlocks<32>(mants, check);
  // Random blocks in the regimes of BlocksMatchReference (NaN/Inf, subnormal
  // bf16 and zeros, one binade).
  randomBf16Blocks<32>(17, 200000, check);
  RecordProperty("blocks", std::to_string(n));
  RecordProperty("fast", std::to_string(fast));
}

/// An fp8 row output with 1x128 pow2 scales (the bf16 -> fp8 raw-code path).
template <bool E5M2>
using Fp8Pow2Row = dev::Out<E5M2 ? dev::Fmt::fp8_e5m2 : dev::Fmt::fp8_e4m3,
                            dev::Layout::row, 128, dev::Scale::pow2>;

template <bool E5M2> void checkFp8Pow2FromBf16Codes(long long &n) {
  const ref::FloatFormat &F = E5M2 ? ref::kE5M2 : ref::kE4M3;
  const uint32_t mants[4] = {0x00, 0x60, 0x61, 0x7F};
  auto check = [&](const uint16_t(&x)[128]) {
    uint32_t w[64], q[32], scale = 0x1234;
    double v[128];
    float vf[128];
    bool special = false;
    for (int j = 0; j < 64; ++j)
      w[j] = x[2 * j] | (uint32_t(x[2 * j + 1]) << 16);
    for (int i = 0; i < 128; ++i) {
      vf[i] = f32(uint32_t(x[i]) << 16);
      v[i] = vf[i];
      special |= !std::isfinite(v[i]);
    }
    uint8_t want[128];
    const uint32_t wantScale =
        qct::test::referenceBlock<Fp8Pow2Row<E5M2>, 128>(v, want);
    // With kSpecials (the unfused mxfp4 -> fp8 kernel) every block, NaN and
    // Inf included, as the reference has it.
    uint32_t qs[32], scaleS = 0x1234;
    ASSERT_TRUE((dev::fp8_pow2_bf16<E5M2, 64, 1, true>(w, qs, scaleS)));
    ASSERT_EQ(scaleS, wantScale);
    for (int i = 0; i < 128; ++i)
      ASSERT_EQ(packedByte(qs, i), want[i])
          << "kSpecials, e5m2 " << E5M2 << " element " << i << " bits "
          << std::hex << x[i] << " scale " << wantScale;
    const bool ok = dev::fp8_pow2_bf16<E5M2, 64, 1>(w, q, scale);
    ASSERT_EQ(ok, !special);
    ++n;
    if (!ok) {
      ASSERT_EQ(scale, 0x1234u);
      return;
    }
    ASSERT_EQ(scale, wantScale);
    const dev::QBlock<128> qh = dev::quantize_hp<Fp8Pow2Row<E5M2>, 128, 1>(vf);
    ASSERT_EQ(qh.scale, wantScale);
    for (int i = 0; i < 128; ++i) {
      ASSERT_EQ(packedByte(q, i), want[i])
          << "e5m2 " << E5M2 << " element " << i << " bits " << std::hex << x[i]
          << " scale " << wantScale;
      ASSERT_EQ(qh.q[i], want[i]);
    }
  };
  sweepBlocks<128>(mants, check);
  randomBf16Blocks<128>(19, 40000, check);
}

TEST(DeviceCodec, Fp8Pow2FromBf16Codes) {
  long long n = 0;
  checkFp8Pow2FromBf16Codes<false>(n);
  checkFp8Pow2FromBf16Codes<true>(n);
  RecordProperty("blocks", std::to_string(n));
}

template <bool E5M2> void checkMxfp4ViaBf16ToFp8(long long &n) {
  // The unfused mxfp4 -> fp8 pow2 row kernel's path (row_output): four
  // source blocks decoded to bf16 codes (mxfp4_block_to_bf16_codes: the
  // byte table for scale bytes 2..252, the exact path for the others, NaN
  // blocks included), then fp8_pow2_bf16 with kSpecials, against the
  // reference on the bf16-rounded values (numerics.md 7).
  using O = Fp8Pow2Row<E5M2>;
  const uint32_t edge[] = {0,   1,   2,   3,   126, 127, 128,
                           200, 251, 252, 253, 254, 255};
  std::mt19937_64 rng(23);
  for (int t = 0; t < 60000; ++t) {
    uint32_t codes[16], sb[4];
    for (uint32_t &c : codes)
      c = uint32_t(rng());
    for (int b = 0; b < 4; ++b)
      sb[b] =
          t % 3 ? edge[rng() % 13]
                : (t % 2 ? uint32_t(rng() % 256) : 100 + uint32_t(rng() % 40));
    uint32_t w[64];
    double v[128];
    for (int b = 0; b < 4; ++b) {
      const uint32_t(&blk)[4] =
          *reinterpret_cast<const uint32_t(*)[4]>(codes + 4 * b);
      uint32_t wb[16];
      dev::mxfp4_block_to_bf16_codes(blk, sb[b], wb);
      for (int j = 0; j < 16; ++j)
        w[16 * b + j] = wb[j];
      for (int i = 0; i < 32; ++i) {
        const uint32_t c = (codes[4 * b + i / 8] >> (4 * (i % 8))) & 15;
        const double x = sb[b] == 0xFF ? std::nan("")
                                       : ref::decode(c, ref::kE2M1) *
                                             ref::pow2(int(sb[b]) - 127);
        const uint32_t h = ref::encode(x, ref::kBF16);
        ASSERT_EQ((wb[i / 2] >> (16 * (i % 2))) & 0xFFFF, h)
            << "scale byte " << sb[b] << " code " << c;
        v[32 * b + i] = ref::decode(h, ref::kBF16);
      }
    }
    uint8_t want[128];
    const uint32_t wantScale = qct::test::referenceBlock<O, 128>(v, want);
    uint32_t q[32], scale = 0;
    ASSERT_TRUE((dev::fp8_pow2_bf16<E5M2, 64, 1, true>(w, q, scale)));
    ASSERT_EQ(scale, wantScale);
    for (int i = 0; i < 128; ++i)
      ASSERT_EQ(packedByte(q, i), want[i])
          << "element " << i << " scale byte " << sb[i / 32];
    ++n;
  }
}

TEST(DeviceCodec, Mxfp4ViaBf16ToFp8Pow2) {
  long long n = 0;
  checkMxfp4ViaBf16ToFp8<false>(n);
  checkMxfp4ViaBf16ToFp8<true>(n);
  RecordProperty("blocks", std::to_string(n));
}

//===----------------------------------------------------------------------===//
// fp8 sources with power-of-two scales into mxfp4 on raw codes (quant.cuh)
//===----------------------------------------------------------------------===//

/// One 32-element block through mxfp4_from_fp8_codes (host: prmt and
/// fma.rn.bf16x2 emulated from the PTX ISA text) against the reference on the
/// exact values code * 2^(sfield - 127). Expects the fast path to take the
/// block exactly when it is finite, the scale field valid, and the maximum
/// zero or of exponent field >= 5 with an unclamped MX scale byte; checks
/// the scale byte and every code of a taken block. Returns whether taken.
template <bool E5M2, bool Rceil>
bool checkFp8Mxfp4Block(const uint8_t (&c)[32], uint32_t sfield) {
  const ref::FloatFormat &F = E5M2 ? ref::kE5M2 : ref::kE4M3;
  uint32_t w[8];
  for (int j = 0; j < 8; ++j)
    w[j] = c[4 * j] | (c[4 * j + 1] << 8) | (c[4 * j + 2] << 16) |
           (uint32_t(c[4 * j + 3]) << 24);
  double x[32];
  bool special = false;
  uint32_t amaxCode = 0;
  double amax = 0;
  for (int i = 0; i < 32; ++i) {
    const double e = ref::decode(c[i], F);
    special |= !std::isfinite(e);
    x[i] = e * ref::pow2(int(sfield) - 127); // exact: a few bits, in range
    amaxCode = std::max(amaxCode, uint32_t(c[i] & 0x7F));
    if (std::isfinite(e))
      amax = std::max(amax, std::fabs(e));
  }
  // The scale byte before the MX clamp, from the exact maximum.
  int unclamped = 0;
  if (amax > 0) {
    const int fl = std::ilogb(amax);
    const double frac = std::ldexp(amax, -fl);
    unclamped =
        fl + int(sfield) - 127 - 2 + 127 + (Rceil && frac > 1.5 ? 1 : 0);
  }
  const int expField = int(amaxCode >> (E5M2 ? 2 : 3));
  const bool wantFast =
      !special && sfield <= 254 &&
      (amax == 0 || (expField >= 5 && unclamped >= 0 && unclamped <= 254));
  uint32_t out[4], scale = 0;
  const bool fast =
      dev::mxfp4_from_fp8_codes<E5M2, Rceil, 8, 1>(w, sfield, out, scale);
  EXPECT_EQ(fast, wantFast)
      << "e5m2 " << E5M2 << " rceil " << Rceil << " amax code " << amaxCode
      << " sfield " << sfield;
  if (!fast || !wantFast)
    return false;
  uint8_t want[32];
  using O = dev::Out<dev::Fmt::mxfp4, dev::Layout::row, 32,
                     Rceil ? dev::Scale::rceil : dev::Scale::floor>;
  const uint32_t wantScale = qct::test::referenceBlock<O, 32>(x, want);
  EXPECT_EQ(scale, wantScale)
      << "amax code " << amaxCode << " sfield " << sfield;
  for (int i = 0; i < 32; ++i) {
    const uint32_t got = (out[i / 8] >> (4 * (i % 8))) & 0xF;
    if (got != want[i]) {
      ADD_FAILURE() << "e5m2 " << E5M2 << " rceil " << Rceil << " element " << i
                    << " code 0x" << std::hex << int(c[i]) << " amax code 0x"
                    << amaxCode << std::dec << " sfield " << sfield << ": got "
                    << got << " want " << int(want[i]);
      return true;
    }
  }
  return true;
}

template <bool E5M2, bool Rceil>
void checkFp8Mxfp4(long long &n, long long &fast) {
  // (1) Every block maximum (each magnitude code, NaN/Inf included, signs
  // alternating) with every code of magnitude <= it in every position: for
  // the n codes allowed, block t puts code (t + 7i) % n at position i, so
  // each code meets each position once over t, and a second pass with the
  // maximum half a block further on covers the positions the first gave it.
  // The source scale is irrelevant to the codes (it cancels), so one field.
  std::mt19937_64 rng(41 + 2 * E5M2 + Rceil);
  for (uint32_t a = 0; a < 0x80; ++a) {
    std::vector<uint8_t> codes;
    for (uint32_t v = 0; v < 256; ++v)
      if ((v & 0x7F) <= a)
        codes.push_back(uint8_t(v));
    const size_t nc = codes.size();
    for (int pass = 0; pass < 2; ++pass)
      for (size_t t = 0; t < nc; ++t) {
        uint8_t c[32];
        const int pa = int((t + 16 * pass) % 32);
        for (int i = 0; i < 32; ++i)
          c[i] = i == pa ? uint8_t(a | (t % 2 ? 0x80 : 0))
                         : codes[(t + 7 * size_t(i)) % nc];
        fast += checkFp8Mxfp4Block<E5M2, Rceil>(c, 127);
        ++n;
        if (::testing::Test::HasFailure())
          return;
      }
  }
  // (2) Every source scale field (and invalid ones) under every block
  // maximum, with random codes below it: the scale byte, the MX clamp and
  // the decline conditions.
  for (uint32_t sfield = 0; sfield <= 256; ++sfield)
    for (uint32_t a = 0; a < 0x80; ++a)
      for (int r = 0; r < 2; ++r) {
        uint8_t c[32];
        for (int i = 0; i < 32; ++i) {
          uint32_t v = uint32_t(rng()) & 0xFF;
          while ((v & 0x7F) > a)
            v = (v & 0x80) | ((v & 0x7F) % (a + 1));
          c[i] = uint8_t(v);
        }
        c[rng() % 32] = uint8_t(a | (r ? 0x80 : 0));
        fast += checkFp8Mxfp4Block<E5M2, Rceil>(c, sfield == 256 ? 0xFFFFFFFFu
                                                                 : sfield);
        ++n;
        if (::testing::Test::HasFailure())
          return;
      }
}

TEST(DeviceCodec, Mxfp4FromFp8Codes) {
  long long n = 0, fast = 0;
  checkFp8Mxfp4<false, false>(n, fast);
  checkFp8Mxfp4<false, true>(n, fast);
  checkFp8Mxfp4<true, false>(n, fast);
  checkFp8Mxfp4<true, true>(n, fast);
  RecordProperty("blocks", std::to_string(n));
  RecordProperty("fast", std::to_string(fast));
  // Most blocks are the fast path's (the rest are NaN/Inf, tiny maxima,
  // clamped scale bytes and bad scale fields).
  EXPECT_GT(fast, n * 3 / 4);
}

TEST(DeviceCodec, Pow2ScaleField) {
  using F = dev::Fmt;
  // Every e8m0 byte: its own field, 0xFF (a NaN block) declined.
  for (uint32_t b = 0; b < 256; ++b)
    EXPECT_EQ(dev::pow2_scale_field<F::mxfp8_e4m3>(b),
              b < 255 ? b : 0xFFFFFFFFu);
  // f32 scale_inv: exactly the positive normal powers of two; zero,
  // subnormals, negatives, Inf, NaN and other mantissas declined.
  std::mt19937_64 rng(3);
  for (uint32_t e = 0; e < 256; ++e)
    for (uint32_t sign = 0; sign < 2; ++sign)
      for (int r = 0; r < 64; ++r) {
        const uint32_t mant =
            r == 0 ? 0 : (r == 1 ? 1 : uint32_t(rng()) & 0x7FFFFF);
        const uint32_t bitsS = (sign << 31) | (e << 23) | mant;
        const float v = f32(bitsS);
        int ex = 0;
        const bool pow2 = std::isfinite(v) && v > 0 &&
                          std::fpclassify(v) == FP_NORMAL &&
                          std::frexp(v, &ex) == 0.5f;
        EXPECT_EQ(dev::pow2_scale_field<F::fp8_e4m3>(bitsS),
                  pow2 ? e : 0xFFFFFFFFu)
            << std::hex << bitsS;
      }
}

TEST(DeviceCodec, Fp8Mxfp4FmaOperands) {
  // The fma.rn.bf16x2 operands the fp8 -> mxfp4 path forms, every one: the
  // widened magnitude of every e4m3/e5m2 code, S = 2^(3 - E) and M2 =
  // 64 * max(x, B) * S for every block exponent E, then z - M2. The host
  // emulation against the exactly rounded value (double holds these sums
  // exactly: a product of <= 8 + 8 bits and an addend within 2^40 of it).
  long long n = 0;
  for (int e5 = 0; e5 < 2; ++e5)
    for (int E = 5; E <= (e5 ? 31 : 16); ++E)
      for (uint32_t m = 0; m < 0x80; ++m) {
        const uint32_t x = e5 ? m << 5 : m << 4;
        const uint32_t bb = uint32_t(E - 2) << 7, s = uint32_t(130 - E) << 7;
        const uint32_t m2 = std::max(x, bb) + uint32_t((9 - E) * 128);
        const double xs = double(f32(x << 16)) * double(f32(s << 16));
        const uint32_t z = dev::bf16_fma_rn(x, s, m2);
        ASSERT_EQ(z, ref::encode(xs + double(f32(m2 << 16)), ref::kBF16))
            << e5 << " " << E << " " << m;
        const uint32_t d = dev::bf16_fma_rn(m2, 0xBF80, z);
        ASSERT_EQ(d, ref::encode(double(f32(z << 16)) - double(f32(m2 << 16)),
                                 ref::kBF16));
        n += 2;
      }
  RecordProperty("checked", std::to_string(n));
}

TEST(DeviceCodec, DecodeToBf16AndExactValues) {
  // Every mxfp4 code under every scale byte: the exact value and its bf16.
  for (uint32_t c = 0; c < 16; ++c)
    for (uint32_t b = 0; b < 256; ++b) {
      const double want =
          b == 0xFF ? std::nan("")
                    : ref::decode(c, ref::kE2M1) * ref::pow2(int(b) - 127);
      const double got = dev::exact_value<dev::Fmt::mxfp4>(c, b);
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(got));
        EXPECT_FALSE(std::signbit(got));
      } else {
        EXPECT_EQ(bits(got), bits(want)) << c << " " << b;
      }
      const float bv = dev::bf16_value<dev::Fmt::mxfp4>(c, b);
      EXPECT_EQ(bits(bv) >> 16, ref::encode(want, ref::kBF16)) << c << " " << b;
      EXPECT_EQ(bits(bv) & 0xFFFF, 0u);
    }
}

TEST(DeviceCodec, E2M1BlockToBf16Table) {
  // The row kernel's byte-table decode (prmt emulated on the host from the
  // PTX ISA text): every code in every position of a block, every scale byte
  // the table path takes, against the reference.
  long long n = 0;
  for (uint32_t b = 2; b <= 252; ++b)
    for (uint32_t c = 0; c < 16; ++c)
      for (int shift = 0; shift < 16; ++shift) {
        // Code c at position `shift` of each word, its neighbours varying.
        uint32_t codes[4];
        for (int w = 0; w < 4; ++w) {
          codes[w] = 0;
          for (int k = 0; k < 8; ++k)
            codes[w] |= ((k == shift % 8 ? c : (c + 3 * k + w + shift) & 15)
                         << (4 * k));
        }
        uint32_t out[16];
        dev::e2m1_block_to_bf16(codes, b, out);
        for (int i = 0; i < 32; ++i) {
          const uint32_t code = (codes[i / 8] >> (4 * (i % 8))) & 15;
          const double x = ref::decode(code, ref::kE2M1) * ref::pow2(int(b) - 127);
          const uint32_t got = (out[i / 2] >> (16 * (i % 2))) & 0xFFFF;
          ASSERT_EQ(got, ref::encode(x, ref::kBF16))
              << "b " << b << " element " << i << " code " << code;
          ++n;
        }
      }
  RecordProperty("checked", std::to_string(n));
}

} // namespace
