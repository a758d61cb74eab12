//===- qct/device/memory.cuh - Global loads and stores --------------------===//
//
// 16-byte accesses on the main path. Every buffer a kernel touches is assumed
// 16-byte aligned at its base (cudaMalloc gives 256); offsets that the layout
// makes misaligned (a col row stride that is not a multiple of 16 bytes) take
// the narrower stores below.
//
//===----------------------------------------------------------------------===//
#ifndef QCT_DEVICE_MEMORY_CUH
#define QCT_DEVICE_MEMORY_CUH

#include "qct/device/quant.cuh"

namespace qct {
namespace dev {

struct V4 {
  u32 w[4];
};

/// Read-only 16-byte load through the non-coherent path (the source is never
/// written by the kernel).
QCT_DEV V4 load16(const void *p) {
  const uint4 v = __ldg(static_cast<const uint4 *>(p));
  return {{v.x, v.y, v.z, v.w}};
}

/// Stores `Bytes` bytes (2, 4, 8 or a multiple of 16) from words at an
/// address aligned to min(Bytes, 16). Streaming hint: outputs are not re-read.
template <int Bytes> QCT_DEV void store_words(void *p, const u32 *w) {
  if constexpr (Bytes >= 16) {
#pragma unroll
    for (int i = 0; i < Bytes / 16; ++i)
      __stcs(static_cast<uint4 *>(p) + i,
             make_uint4(w[4 * i], w[4 * i + 1], w[4 * i + 2], w[4 * i + 3]));
  } else if constexpr (Bytes == 8) {
    __stcs(static_cast<uint2 *>(p), make_uint2(w[0], w[1]));
  } else if constexpr (Bytes == 4) {
    __stcs(static_cast<unsigned int *>(p), w[0]);
  } else {
    static_assert(Bytes == 2, "store size");
    *static_cast<unsigned short *>(p) = (unsigned short)w[0];
  }
}

/// Stores `n` bytes (n <= Bytes) from words with the widest accesses the
/// address allows: the fallback for misaligned or partial runs.
template <int Bytes> QCT_DEV void store_bytes(u8 *p, const u32 *w, int n) {
  if (n == Bytes && ((unsigned long long)p % (Bytes >= 16 ? 16 : Bytes)) == 0) {
    store_words<Bytes>(p, w);
    return;
  }
  // Compile-time word indices only, so the codes stay in registers.
  const bool a4 = ((unsigned long long)p & 3) == 0;
#pragma unroll
  for (int i = 0; i < Bytes; i += 4) {
    if (a4 && i + 4 <= n) {
      *reinterpret_cast<u32 *>(p + i) = w[i / 4];
    } else {
#pragma unroll
      for (int b = 0; b < 4 && i + b < Bytes; ++b)
        if (i + b < n)
          p[i + b] = (u8)(w[i / 4] >> (8 * b));
    }
  }
}

/// Sets nibble `hi` (0: bits 0..3, 1: bits 4..7) of the byte at p to v without
/// touching the other nibble, which another CTA may own (a ragged group
/// boundary at an odd column of an mxfp4 col output).
QCT_DEV void store_nibble(u8 *p, int hi, u32 v) {
  unsigned int *word =
      reinterpret_cast<unsigned int *>((unsigned long long)p & ~3ull);
  const int sh = 8 * (int)((unsigned long long)p & 3) + 4 * hi;
  const unsigned int mask = 0xFu << sh;
  unsigned int old = *word, assumed;
  do {
    assumed = old;
    old = atomicCAS(word, assumed, (assumed & ~mask) | ((v & 0xFu) << sh));
  } while (old != assumed);
}

} // namespace dev
} // namespace qct

#endif // QCT_DEVICE_MEMORY_CUH
