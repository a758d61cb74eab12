//===- DeviceTestUtil.h - Shared helpers of the device-library CPU tests --===//
//
// Bit casts, and the reference's answer for one block of an output, shared
// by CodecTest.cpp and ColPassTest.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef QCT_TESTS_UNIT_DEVICE_DEVICETESTUTIL_H
#define QCT_TESTS_UNIT_DEVICE_DEVICETESTUTIL_H

#include "qct/device/quant.cuh"

#include "qct/Reference/Block.h"
#include "qct/Reference/Scalar.h"

#include <cstdint>
#include <cstring>

namespace qct::test {

inline float f32(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
inline uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline uint64_t bits(double d) {
  uint64_t u;
  std::memcpy(&u, &d, 8);
  return u;
}

/// Byte i of packed codes, four per word, the lowest byte first (the device
/// library's fp8 code words).
inline uint32_t packedByte(const uint32_t *w, int i) {
  return (w[i / 4] >> (8 * (i % 4))) & 0xFF;
}

/// The reference's element format of output O.
template <typename O> const ref::FloatFormat &refElementFormat() {
  return O::fmt == dev::Fmt::mxfp4 ? ref::kE2M1
                                   : (O::e5m2 ? ref::kE5M2 : ref::kE4M3);
}

/// The reference's codes (want) and scale bits for one block of N exact
/// values into output O (MX floor/rceil, FP8 amax or pow2).
template <typename O, int N>
uint32_t referenceBlock(const double (&x)[N], uint8_t (&want)[N]) {
  const ref::FloatFormat &F = refElementFormat<O>();
  if constexpr (O::T::mx)
    return ref::quantizeMxBlock(x, N, F, O::scale == dev::Scale::rceil, want);
  else if constexpr (O::scale == dev::Scale::amax)
    return bits(ref::quantizeFp8AmaxBlock(x, N, F, want));
  else
    return bits(ref::quantizeFp8Pow2Block(x, N, F, want));
}

} // namespace qct::test

#endif // QCT_TESTS_UNIT_DEVICE_DEVICETESTUTIL_H
