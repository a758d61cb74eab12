//===- Block.cpp - One block of the MX and FP8 1x128 formats --------------===//

#include "qct/Reference/Block.h"

#include <cfloat>

namespace qct::ref {

namespace {
constexpr uint64_t kFracMask = (uint64_t(1) << 52) - 1;

/// Magnitude of an element code with its sign bit cleared, as the contract's
/// "signed zero" for a value that is -0.
inline uint8_t signedZero(double v, const FloatFormat &F) {
  return std::signbit(v) ? uint8_t(F.signBit) : 0;
}
} // namespace

int floorScaleExponent(double amax, const FloatFormat &F) {
  return floorLog2(amax) - F.emax;
}

int ceilScaleExponent(double amax, const FloatFormat &F) {
  // amax = 1.f * 2^E and max_F = 1.g * 2^emax: e = E - emax fits exactly when
  // 1.f <= 1.g, otherwise one more (1.f < 2 <= 2 * 1.g). Both values are
  // normal doubles, so their fraction bits compare as the significands do.
  int e = floorLog2(amax) - F.emax;
  uint64_t fa = bitsOf(amax) & kFracMask;
  uint64_t fm = bitsOf(maxValue(F)) & kFracMask;
  return fa > fm ? e + 1 : e;
}

template <const FloatFormat &F>
uint8_t mxBlock(const double *x, int64_t n, bool rceil, uint8_t *codes) {
  double amax = 0;
  for (int64_t i = 0; i < n; ++i) {
    double a = std::fabs(x[i]);
    if (!std::isfinite(a)) { // rule 1: NaN or Inf anywhere
      for (int64_t j = 0; j < n; ++j)
        codes[j] = 0;
      return 0xFF;
    }
    amax = a > amax ? a : amax;
  }
  if (amax == 0) { // rule 3: scale 2^-127, signed zeros
    for (int64_t i = 0; i < n; ++i)
      codes[i] = signedZero(x[i], F);
    return 0;
  }
  int e = rceil ? ceilScaleExponent(amax, F) : floorScaleExponent(amax, F);
  int b = e + 127;
  b = b < 0 ? 0 : (b > 254 ? 254 : b);
  // x * 2^(127-b) is exact in double: |x| <= 2^144 and >= 2^-165, and the
  // factor is 2^-127 .. 2^127. So round_F sees the exact quotient.
  double inv = pow2(127 - b);
  for (int64_t i = 0; i < n; ++i)
    codes[i] = uint8_t(encodeSmall<F>(x[i] * inv));
  return uint8_t(b);
}

uint8_t quantizeMxBlock(const double *x, int64_t n, const FloatFormat &F,
                        bool rceil, uint8_t *codes) {
  if (&F == &kE2M1)
    return mxBlock<kE2M1>(x, n, rceil, codes);
  if (&F == &kE4M3)
    return mxBlock<kE4M3>(x, n, rceil, codes);
  return mxBlock<kE5M2>(x, n, rceil, codes);
}

double fp32Quotient(double x, double s) {
  if (std::isnan(x))
    return x;
  if (std::isinf(x))
    return std::signbit(x) != std::signbit(s)
               ? -std::numeric_limits<double>::infinity()
               : std::numeric_limits<double>::infinity();
  // x with <= 24 significant bits and s an fp32: the double quotient is the
  // exact one rounded to 53 bits, and rounding that to fp32 (24 bits, fewer
  // in the subnormal range) equals rounding the exact quotient once, because
  // 53 >= 2*24 + 2 (Figueroa, "When is double rounding innocuous?", 1995).
  // Beyond 24 bits (fp8 1x128 sources: 4-bit element times a 24-bit scale)
  // use the exact integer division.
  if ((bitsOf(x) & ((uint64_t(1) << 29) - 1)) == 0)
    return double(f32FromBits(encodeF32Fast(x / s)));
  return divRoundF32(x, s);
}

namespace {
template <const FloatFormat &F>
void amaxElements(const double *x, int64_t n, double s, uint8_t *codes) {
  for (int64_t i = 0; i < n; ++i) {
    // The common case inline: a finite x of <= 24 significant bits (every
    // bf16/fp16/fp32 and MX source value); see fp32Quotient for why.
    uint64_t b = bitsOf(x[i]);
    int field = int((b >> 52) & 0x7FF);
    double q = (field != 0x7FF && (b & ((uint64_t(1) << 29) - 1)) == 0)
                   ? double(f32FromBits(encodeF32Fast(x[i] / s)))
                   : fp32Quotient(x[i], s);
    codes[i] = uint8_t(encodeSmall<F>(q));
  }
}
} // namespace

float quantizeFp8AmaxBlock(const double *x, int64_t n, const FloatFormat &F,
                           uint8_t *codes) {
  double maxF = maxValue(F);
  double amax = 0;
  for (int64_t i = 0; i < n; ++i) {
    double a = std::fabs(x[i]);
    if (std::isnan(a))
      continue;        // NaN does not take part in amax
    if (std::isinf(a)) // Inf counts as max_F, so the scale stays finite
      a = maxF;
    amax = a > amax ? a : amax;
  }
  double s = amax == 0 ? 0.0 : divRoundF32(amax, maxF);
  if (s == 0)
    s = 1.0; // amax == 0, or the quotient underflowed fp32
  else if (std::isinf(s))
    s = double(FLT_MAX); // only MX/fp8 sources beyond fp32's range (Decisions)
  if (&F == &kE4M3)
    amaxElements<kE4M3>(x, n, s, codes);
  else
    amaxElements<kE5M2>(x, n, s, codes);
  return float(s);
}

float quantizeFp8Pow2Block(const double *x, int64_t n, const FloatFormat &F,
                           uint8_t *codes) {
  double maxF = maxValue(F);
  double amax = 0;
  for (int64_t i = 0; i < n; ++i) {
    double a = std::fabs(x[i]);
    if (std::isnan(a))
      continue;
    if (std::isinf(a))
      a = maxF;
    amax = a > amax ? a : amax;
  }
  int e = amax == 0 ? 0 : ceilScaleExponent(amax, F);
  e = e < -127 ? -127 : (e > 127 ? 127 : e);
  quantizeFp8FixedBlock(x, n, F, e, codes);
  return float(pow2(e)); // 2^-127 is an fp32 subnormal: exact
}

int alignedScaleExponent(int bmax, const FloatFormat &src,
                         const FloatFormat &F) {
  if (bmax < 0)
    return 0;
  int e = bmax - 127 + src.emax - F.emax;
  return e < -149 ? -149 : (e > 127 ? 127 : e);
}

namespace {
template <const FloatFormat &F>
void fixedBlock(const double *x, int64_t n, int sExp, uint8_t *codes) {
  double inv = pow2(-sExp);       // exact scaling: one rounding into F
  for (int64_t i = 0; i < n; ++i) // NaN passes unscaled, its sign explicit
    codes[i] = uint8_t(encodeSmall<F>(std::isnan(x[i]) ? x[i] : x[i] * inv));
}
} // namespace

void quantizeFp8FixedBlock(const double *x, int64_t n, const FloatFormat &F,
                           int sExp, uint8_t *codes) {
  if (&F == &kE4M3)
    fixedBlock<kE4M3>(x, n, sExp, codes);
  else
    fixedBlock<kE5M2>(x, n, sExp, codes);
}

} // namespace qct::ref
