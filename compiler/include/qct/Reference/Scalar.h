//===- Scalar.h - Exact codecs for the element and scale formats -*- C++
//-*-===//
//
// Values are carried as double: every value the contract produces is exact
// there (quantized values from 2^-165 up to 57344 * 2^127; fp32 and below
// widen exactly). Rounding into a format is computed from the bits of the
// exact value (an integer significand, a power-of-two exponent and a sticky
// bit), never through a narrower floating type, so it is one correct rounding.
//
//===----------------------------------------------------------------------===//

#ifndef QCT_REFERENCE_SCALAR_H
#define QCT_REFERENCE_SCALAR_H

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace qct::ref {

/// Layout of a binary float format. `ieee` formats overflow to Inf and have a
/// canonical NaN; the others saturate ("satfinite") and keep the NaN's sign.
struct FloatFormat {
  int mbits;        ///< stored mantissa bits
  int emin;         ///< exponent of the smallest normal (1 - bias)
  int emax;         ///< exponent of the largest normal
  uint32_t maxCode; ///< largest finite magnitude code
  uint32_t signBit;
  bool ieee;
  uint32_t infCode; ///< ieee: +Inf
  uint32_t nanCode; ///< positive NaN code (e2m1: 0, it has none)
  bool hasNan;
};

inline constexpr FloatFormat kE2M1{1, 0, 2, 0x7, 0x8, false, 0, 0, false};
inline constexpr FloatFormat kE4M3{3, -6, 8, 0x7E, 0x80, false, 0, 0x7F, true};
inline constexpr FloatFormat kE5M2{2,     -14, 15,   0x7B, 0x80,
                                   false, 0,   0x7F, true};
inline constexpr FloatFormat kBF16{7,    -126,   127,    0x7F7F, 0x8000,
                                   true, 0x7F80, 0x7FFF, true};
inline constexpr FloatFormat kFP16{10,   -14,    15,     0x7BFF, 0x8000,
                                   true, 0x7C00, 0x7FFF, true};
inline constexpr FloatFormat kFP32{
    23, -126, 127, 0x7F7FFFFF, 0x80000000, true, 0x7F800000, 0x7FFFFFFF, true};

inline uint64_t bitsOf(double v) {
  uint64_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}
inline double fromBits(uint64_t b) {
  double v;
  std::memcpy(&v, &b, sizeof v);
  return v;
}
inline float f32FromBits(uint32_t b) {
  float v;
  std::memcpy(&v, &b, sizeof v);
  return v;
}
inline uint32_t bitsOfF32(float v) {
  uint32_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

inline double nanWithSign(bool negative) {
  return std::copysign(std::numeric_limits<double>::quiet_NaN(),
                       negative ? -1.0 : 1.0);
}

/// 2^e as a double, exact for -1074 <= e <= 1023 (built from bits).
inline double pow2(int e) {
  if (e >= -1022)
    return fromBits(uint64_t(e + 1023) << 52);
  return fromBits(uint64_t(1) << (e + 1074));
}

/// floor(log2(|v|)) of a finite nonzero double, from its bits.
inline int floorLog2(double v) {
  uint64_t b = bitsOf(v) & 0x7FFFFFFFFFFFFFFFull;
  int field = int(b >> 52);
  if (field != 0)
    return field - 1023;
  return -1074 + (63 - __builtin_clzll(b)); // double subnormal
}

/// Rounds (sig + d) * 2^exp2, 0 <= d < 1 with d > 0 iff sticky, to format F:
/// one round to nearest, ties to even. sig must be below 2^63, and when sticky
/// is set it must carry at least two bits below F's quantum (callers pass 53+
/// bit significands). Returns the magnitude code; overflow gives maxCode
/// (satfinite) or infCode (ieee).
inline uint32_t roundMagnitude(uint64_t sig, int exp2, bool sticky,
                               const FloatFormat &F) {
  if (sig == 0)
    return 0;
  int e = (63 - __builtin_clzll(sig)) + exp2; // floor(log2(value))
  if (e > F.emax)
    return F.ieee ? F.infCode : F.maxCode;
  int qe = (e < F.emin ? F.emin : e) - F.mbits; // exponent of the quantum
  int shift = qe - exp2;
  uint64_t n;
  if (shift <= 0) {
    n = sig << -shift; // exact: value is a multiple of the quantum
  } else if (shift > 63) {
    return 0; // value < 2^(qe-1): below half a quantum
  } else {
    n = sig >> shift;
    uint64_t rem = sig & ((uint64_t(1) << shift) - 1);
    uint64_t half = uint64_t(1) << (shift - 1);
    if (rem > half || (rem == half && (sticky || (n & 1))))
      ++n;
  }
  // Normal codes are ((e - emin) << mbits) + n with n in [2^mbits,
  // 2^(mbits+1)], so a carry out of the mantissa bumps the exponent field and
  // a subnormal that rounds up to 2^mbits becomes the smallest normal.
  uint64_t code = (uint64_t(e < F.emin ? 0 : e - F.emin) << F.mbits) + n;
  if (code > F.maxCode)
    return F.ieee ? F.infCode : F.maxCode;
  return uint32_t(code);
}

/// round_F(v) of the contract for an exact double v.
inline uint32_t encode(double v, const FloatFormat &F) {
  uint64_t b = bitsOf(v);
  uint32_t sign = (b >> 63) ? F.signBit : 0;
  uint64_t mag = b & 0x7FFFFFFFFFFFFFFFull;
  int field = int(mag >> 52);
  uint64_t frac = mag & ((uint64_t(1) << 52) - 1);
  if (field == 0x7FF) {
    if (frac != 0) // NaN
      return F.ieee ? F.nanCode : (F.hasNan ? (F.nanCode | sign) : 0);
    return (F.ieee ? F.infCode : F.maxCode) | sign;
  }
  if (field == 0) // zero or double subnormal: below every quantum here
    return sign;
  return roundMagnitude(frac | (uint64_t(1) << 52), field - 1075, false, F) |
         sign;
}

/// encode() with the format fixed at compile time: the hot loops' version.
/// A normal double has its leading bit at 52, so the quantum's position is
/// known without a count of leading zeros, and the rounding is branch-free
/// (data-dependent branches between normal and subnormal results mispredict
/// on real data): adding half a quantum minus one plus the kept lsb, then
/// shifting, rounds to nearest with ties to even.
template <const FloatFormat &F> inline uint32_t encodeFast(double v) {
  uint64_t b = bitsOf(v);
  uint64_t mag = b & 0x7FFFFFFFFFFFFFFFull;
  int field = int(mag >> 52);
  if (__builtin_expect(field == 0x7FF || field == 0, 0))
    return encode(v, F); // NaN, Inf, zero, double subnormal
  uint32_t sign = (b >> 63) ? F.signBit : 0;
  int e = field - 1023;
  int ec = e < F.emin ? F.emin : e; // exponent of the result's binade
  int shift = 52 - F.mbits + (ec - e);
  shift = shift > 63 ? 63 : shift; // value < 2^-1 quantum still rounds to 0
  uint64_t sig = (mag & ((uint64_t(1) << 52) - 1)) | (uint64_t(1) << 52);
  uint64_t n =
      (sig + ((uint64_t(1) << (shift - 1)) - 1) + ((sig >> shift) & 1)) >>
      shift;
  // e <= 1023, so this cannot wrap; any e > emax lands above maxCode.
  uint64_t code = (uint64_t(ec - F.emin) << F.mbits) + n;
  uint64_t over = F.ieee ? F.infCode : F.maxCode;
  return uint32_t(code > F.maxCode ? over : code) | sign;
}

/// The hot loops' rounding into the small element formats (e2m1, e4m3,
/// e5m2): one table lookup. A normal double's rounding into a format with at
/// most 3 mantissa bits depends only on its binade, the top 4 fraction bits
/// (kept bits and round bit, for subnormal results too) and whether any lower
/// bit is set (sticky); binades below half the smallest subnormal all round to
/// zero and those above max all saturate, so a clamped binade index covers
/// every double. The table is filled by encode() itself, so both agree by
/// construction (and a test checks it on random inputs).
template <const FloatFormat &F> struct SmallEncodeTable {
  static constexpr int kLo = F.emin - F.mbits - 2; // rounds to zero
  static constexpr int kHi = F.emax + 1;           // saturates
  uint8_t code[(kHi - kLo + 1) * 32];
  SmallEncodeTable() {
    for (int e = kLo; e <= kHi; ++e)
      for (int top = 0; top < 16; ++top)
        for (int sticky = 0; sticky < 2; ++sticky)
          code[((e - kLo) << 5) | (top << 1) | sticky] = uint8_t(
              encode(std::ldexp(16.0 + top + (sticky ? 0.5 : 0.0), e - 4), F));
  }
};
template <const FloatFormat &F>
inline const SmallEncodeTable<F> kSmallEncodeTable{};

template <const FloatFormat &F> inline uint32_t encodeSmall(double v) {
  static_assert(F.mbits <= 3 && !F.ieee, "for e2m1, e4m3, e5m2");
  using T = SmallEncodeTable<F>;
  uint64_t b = bitsOf(v);
  uint64_t mag = b & 0x7FFFFFFFFFFFFFFFull;
  int field = int(mag >> 52);
  if (__builtin_expect(field == 0x7FF || field == 0, 0))
    return encode(v, F); // NaN, Inf, zero, double subnormal
  int e = field - 1023;
  e = e < T::kLo ? T::kLo : (e > T::kHi ? T::kHi : e);
  uint32_t top = uint32_t(mag >> 48) & 0xF;
  uint32_t sticky = (mag & ((uint64_t(1) << 48) - 1)) != 0;
  uint32_t code =
      kSmallEncodeTable<F>.code[((e - T::kLo) << 5) | (top << 1) | sticky];
  return code | ((b >> 63) ? F.signBit : 0);
}

/// Rounding into fp32 for the hot loops: for a normal fp32 result the double's
/// bits round at bit 29 with one add (a carry moves into the exponent, as it
/// must) and the exponent is rebiased; the rest takes encode().
inline uint32_t encodeF32Fast(double v) {
  uint64_t b = bitsOf(v);
  uint64_t mag = b & 0x7FFFFFFFFFFFFFFFull;
  int field = int(mag >> 52);
  uint32_t sign = uint32_t(b >> 32) & 0x80000000u;
  if (__builtin_expect(field == 0x7FF || field < 1023 - 126, 0))
    return encode(v, kFP32); // NaN, Inf, zero, fp32 subnormal or underflow
  if (field > 1023 + 127)
    return sign | kFP32.infCode;
  uint64_t r = mag + 0x0FFFFFFFull + ((mag >> 29) & 1);
  uint64_t bits = (r >> 29) - (uint64_t(1023 - 127) << 23);
  return uint32_t(bits > kFP32.maxCode ? kFP32.infCode : bits) | sign;
}

/// Exact value of a code of an 8-bit-or-smaller or 16-bit format.
inline double decode(uint32_t code, const FloatFormat &F) {
  bool neg = (code & F.signBit) != 0;
  uint32_t mag = code & (F.signBit - 1);
  uint32_t field = mag >> F.mbits;
  uint32_t man = mag & ((1u << F.mbits) - 1);
  if (F.ieee && mag >= F.infCode)
    return man ? nanWithSign(neg)
               : (neg ? -std::numeric_limits<double>::infinity()
                      : std::numeric_limits<double>::infinity());
  if (!F.ieee && F.hasNan && mag > F.maxCode) {
    // e4m3: only S.1111.111 lies above max (NaN). e5m2: S.11111.00 is Inf,
    // S.11111.{01,10,11} NaN.
    if (man == 0)
      return neg ? -std::numeric_limits<double>::infinity()
                 : std::numeric_limits<double>::infinity();
    return nanWithSign(neg);
  }
  double v = field == 0 ? std::ldexp(double(man), F.emin - F.mbits)
                        : std::ldexp(double(man | (1u << F.mbits)),
                                     int(field) - 1 + F.emin - F.mbits);
  return neg ? -v : v;
}

inline double decodeBF16(uint16_t bits) {
  return double(f32FromBits(uint32_t(bits) << 16));
}
inline double decodeFP32(uint32_t bits) { return double(f32FromBits(bits)); }

/// e8m0: 2^(b-127), 0xFF is NaN.
inline double decodeE8M0(uint8_t b) {
  return b == 0xFF ? nanWithSign(false) : pow2(int(b) - 127);
}

/// fl32(a / b): the exact quotient of two finite doubles (b != 0), rounded
/// once to fp32 (overflow to Inf, as IEEE division does), as an exact double.
double divRoundF32(double a, double b);

} // namespace qct::ref

#endif // QCT_REFERENCE_SCALAR_H
