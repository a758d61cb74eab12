//===- Scalar.cpp - Exact fp32 division for the FP8 amax policy -----------===//

#include "qct/Reference/Scalar.h"

namespace qct::ref {

namespace {
/// Splits a finite nonzero double into sig * 2^exp with sig in [2^52, 2^53).
void split(double v, uint64_t &sig, int &exp) {
  uint64_t b = bitsOf(v) & 0x7FFFFFFFFFFFFFFFull;
  int field = int(b >> 52);
  uint64_t frac = b & ((uint64_t(1) << 52) - 1);
  if (field != 0) {
    sig = frac | (uint64_t(1) << 52);
    exp = field - 1075;
    return;
  }
  int lead = 63 - __builtin_clzll(frac); // double subnormal: normalize
  sig = frac << (52 - lead);
  exp = -1074 - (52 - lead);
}
} // namespace

double divRoundF32(double a, double b) {
  bool neg = std::signbit(a) != std::signbit(b);
  if (a == 0)
    return neg ? -0.0 : 0.0;
  uint64_t sa, sb;
  int ea, eb;
  split(a, sa, ea);
  split(b, sb, eb);
  // (sa * 2^64) / sb lies in (2^63, 2^65): 63+ quotient bits, far more than
  // fp32's 24 plus the guard bits the rounding needs; the remainder is sticky.
  unsigned __int128 num = static_cast<unsigned __int128>(sa) << 64;
  unsigned __int128 q = num / sb;
  bool sticky = (num % sb) != 0;
  sticky |= (q & 3) != 0;
  uint64_t sig = uint64_t(q >> 2);
  uint32_t code = roundMagnitude(sig, ea - eb - 64 + 2, sticky, kFP32);
  return double(f32FromBits(code | (neg ? 0x80000000u : 0u)));
}

} // namespace qct::ref
