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
/// address aligned to min(Bytes, 16). Streaming hint (Stream): outputs are not
/// re-read. The fast col passes' fp8 runs (store_fp8_col_run) store without
/// it: 8 lanes' runs make one 128-byte line of a feature row, and on the
/// H200 the mxfp4 -> fp8 col kernel ran 2-4% faster with plain write-back
/// stores (2026-11-29).
template <int Bytes, bool Stream = true>
QCT_DEV void store_words(void *p, const u32 *w) {
  if constexpr (Bytes >= 16) {
#pragma unroll
    for (int i = 0; i < Bytes / 16; ++i) {
      const uint4 v =
          make_uint4(w[4 * i], w[4 * i + 1], w[4 * i + 2], w[4 * i + 3]);
      if constexpr (Stream)
        __stcs(static_cast<uint4 *>(p) + i, v);
      else
        static_cast<uint4 *>(p)[i] = v;
    }
  } else if constexpr (Bytes == 8) {
    if constexpr (Stream)
      __stcs(static_cast<uint2 *>(p), make_uint2(w[0], w[1]));
    else
      *static_cast<uint2 *>(p) = make_uint2(w[0], w[1]);
  } else if constexpr (Bytes == 4) {
    if constexpr (Stream)
      __stcs(static_cast<unsigned int *>(p), w[0]);
    else
      *static_cast<unsigned int *>(p) = w[0];
  } else {
    static_assert(Bytes == 2, "store size");
    *static_cast<unsigned short *>(p) = (unsigned short)w[0];
  }
}

// Block scales that fill part of a 32-byte L2 sector whose other parts other
// CTAs write: with row_major scales a tile writes one scale per token row
// (1x128 or MX row outputs: 4 bytes of a row's sector, the other 28 from the
// next 7 K tiles' CTAs) and one per feature (128x1 col outputs: the other 28
// bytes from the next 7 M tiles'). Stored plainly, such a sector goes to DRAM
// in pieces when its line is evicted before its last writer comes (nothing is
// read back: on the H200 the DRAM reads were the same with and without these
// stores, docs/performance.md); with L2 eviction priority evict_last the line
// waits in L2 for the rest. On the H200 (M = 32768, K = 7168) bf16 -> fp8
// row + col ran 263-266 us against 277-281, bf16 -> mxfp4 row + fp8 col
// 236-239 against 242-244, the mxfp4 -> fp8 col kernel without clusters 116
// against 120; whole-sector stores (a cluster's, mn_major scales) gain
// nothing from it (the GEMM-ready bf16 -> fp8 row + col ran 262.5 against
// 254.6 with its mn_major scales hinted), so they store plainly.
// The lines keep that priority after the kernel (until evicted; the GEMMs
// that read these scales next find them in L2). QCT_L2_SCALE_HINT=0 (an
// NVRTC option, e.g. extra_nvrtc_options) stores them plainly.
#ifndef QCT_L2_SCALE_HINT
#define QCT_L2_SCALE_HINT 1
#endif

/// The L2 evict_last cache policy of store_partial_scale(s) and
/// load_shared_scale.
QCT_DEV unsigned long long l2_evict_last_policy() {
  unsigned long long pol;
  asm("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(pol));
  return pol;
}

// Source scales that CTAs of other K tiles read too. A tile family CTA reads,
// for each token row of its tile, the MX scale bytes of its K span: part of a
// 32-byte sector whose other parts the CTAs of the next K tiles read (4 tiles
// of 256 features, 8 of 128). In the hardware order those CTAs start a grid
// row (cdiv(M, 128) CTAs) apart, and the sector was often evicted from L2
// before its last reader came: Nsight Compute counted 129.6 MB of DRAM reads
// for the mn_major mxfp4 -> fp8 col kernel against the 124.7 MB of its source
// and scales. Loaded with L2 eviction priority evict_last, the line waits for
// the other readers. On the H200 (M = 32768, K = 7168, tuned schedule) that
// kernel ran 101.1 against 103.9 us, its ragged twin 148.7 against 151.0 at
// 256 groups (docs/perf/probe-2026-11-30-session15.log section 6). Walking
// the CTAs so that a sector's readers run together instead cost more than it
// saved (section 5 there): the hardware order keeps the output rows' writes
// together. As with the scale stores above, the lines keep their priority
// after the kernel until evicted. QCT_L2_SRC_SCALE_HINT=0 (an NVRTC option)
// loads them plainly.
#ifndef QCT_L2_SRC_SCALE_HINT
#define QCT_L2_SRC_SCALE_HINT 1
#endif

/// Loads a source scale word of 1, 2 or 4 bytes (zero-extended) that the
/// CTAs of other K tiles read too (above). The asm is volatile: otherwise the
/// compiler treats it as a pure function of its operands and may issue it
/// where its guard is false (both sides of a conditional load, past the last
/// row), an illegal address for an empty or short tensor.
template <typename T> QCT_DEV u32 load_shared_scale(const T *p) {
  static_assert(sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4,
                "a scale byte, or 2 or 4 of them");
#if QCT_L2_SRC_SCALE_HINT
  u32 v;
  if constexpr (sizeof(T) == 1)
    asm volatile("ld.global.nc.L2::cache_hint.u8 %0, [%1], %2;"
                 : "=r"(v)
                 : "l"(p), "l"(l2_evict_last_policy()));
  else if constexpr (sizeof(T) == 2)
    asm volatile("ld.global.nc.L2::cache_hint.u16 %0, [%1], %2;"
                 : "=r"(v)
                 : "l"(p), "l"(l2_evict_last_policy()));
  else
    asm volatile("ld.global.nc.L2::cache_hint.u32 %0, [%1], %2;"
                 : "=r"(v)
                 : "l"(p), "l"(l2_evict_last_policy()));
  return v;
#else
  return (u32)__ldg(p);
#endif
}

/// load_shared_scale for 16 scale bytes at once (scale_jobs.cuh: a row's
/// bytes of 16 MX blocks, which the data CTAs of the same tokens read again).
QCT_DEV uint4 load_shared_scale16(const uint4 *p) {
#if QCT_L2_SRC_SCALE_HINT
  uint4 v;
  asm volatile("ld.global.nc.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p), "l"(l2_evict_last_policy()));
  return v;
#else
  return __ldg(p);
#endif
}

/// Stores a block scale (an e8m0 byte or f32 bits) that fills part of an L2
/// sector other CTAs complete (above).
template <typename T> QCT_DEV void store_partial_scale(T *p, u32 v) {
  static_assert(sizeof(T) == 1 || sizeof(T) == 4, "e8m0 byte or f32 bits");
#if QCT_L2_SCALE_HINT
  if constexpr (sizeof(T) == 4)
    asm volatile("st.global.L2::cache_hint.b32 [%0], %1, %2;" ::"l"(p), "r"(v),
                 "l"(l2_evict_last_policy())
                 : "memory");
  else
    asm volatile("st.global.L2::cache_hint.b8 [%0], %1, %2;" ::"l"(p), "r"(v),
                 "l"(l2_evict_last_policy())
                 : "memory");
#else
  *p = (T)v;
#endif
}

/// store_partial_scale for 2 or 4 consecutive f32 scales (8- or 16-byte
/// aligned at p).
template <int N> QCT_DEV void store_partial_scales(u32 *p, const u32 *v) {
  static_assert(N == 2 || N == 4, "a pair or a quad");
#if QCT_L2_SCALE_HINT
  if constexpr (N == 2)
    asm volatile("st.global.L2::cache_hint.v2.b32 [%0], {%1, %2}, %3;" ::"l"(p),
                 "r"(v[0]), "r"(v[1]), "l"(l2_evict_last_policy())
                 : "memory");
  else
    asm volatile(
        "st.global.L2::cache_hint.v4.b32 [%0], {%1, %2, %3, %4}, %5;" ::"l"(p),
        "r"(v[0]), "r"(v[1]), "r"(v[2]), "r"(v[3]), "l"(l2_evict_last_policy())
        : "memory");
#else
  if constexpr (N == 2)
    *reinterpret_cast<uint2 *>(p) = make_uint2(v[0], v[1]);
  else
    *reinterpret_cast<uint4 *>(p) = make_uint4(v[0], v[1], v[2], v[3]);
#endif
}

/// Stores block scale s at element idx of an output's scales: an e8m0 byte
/// (MX) or f32 bits; Partial: part of an L2 sector that other CTAs complete
/// (store_partial_scale), else a plain store.
template <bool MX, bool Partial>
QCT_DEV void store_block_scale(void *scales, i64 idx, u32 s) {
  if constexpr (MX) {
    u8 *p = static_cast<u8 *>(scales) + idx;
    if constexpr (Partial)
      store_partial_scale(p, s);
    else
      *p = (u8)s;
  } else {
    u32 *p = static_cast<u32 *>(scales) + idx;
    if constexpr (Partial)
      store_partial_scale(p, s);
    else
      *p = s;
  }
}

/// Stores `n` bytes (n <= Bytes) from words with the widest accesses the
/// address allows: the fallback for misaligned or partial runs.
template <int Bytes, bool Stream = true>
QCT_DEV void store_bytes(u8 *p, const u32 *w, int n) {
  if (n == Bytes && ((unsigned long long)p % (Bytes >= 16 ? 16 : Bytes)) == 0) {
    store_words<Bytes, Stream>(p, w);
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

/// Stores a warp's row outputs when each lane holds Bytes > 16 contiguous
/// bytes (lane l's at warp_out + l * Bytes; the first `nvalid` lanes valid).
/// Stored straight, every warp-wide 16-byte store covers 16 of each Bytes
/// bytes: partial L2 sectors, and Nsight Compute showed the L2 saturated at
/// 38% of DRAM bandwidth (mxfp4 -> bf16). Through shared memory instead, store
/// j of the warp writes its 512 contiguous bytes j. The 16-byte chunk c of a
/// lane's row is placed at c ^ ((lane / P) & (Q - 1)) (P lanes per 128-byte
/// bank window), so both the row writes and the chunk reads are free of bank
/// conflicts. Every lane of the warp must call this. THREADS sizes the CTA's
/// buffer (one slice per warp).
template <int Bytes, int THREADS>
QCT_DEV void store_warp_rows(u8 *warp_out, const u32 *w, int nvalid) {
  static_assert(Bytes > 16 && Bytes % 16 == 0 && Bytes <= 128, "row bytes");
  constexpr int Q = Bytes / 16;
  constexpr int P = Bytes >= 128 ? 1 : 128 / Bytes;
  __shared__ uint4 buf[THREADS * Q];
  const int lane = threadIdx.x & 31;
  uint4 *mine = buf + (threadIdx.x - lane) * Q;
#pragma unroll
  for (int j = 0; j < Q; ++j)
    mine[lane * Q + (j ^ ((lane / P) & (Q - 1)))] =
        make_uint4(w[4 * j], w[4 * j + 1], w[4 * j + 2], w[4 * j + 3]);
  __syncwarp();
#pragma unroll
  for (int j = 0; j < Q; ++j) {
    const int g = j * 32 + lane, r = g / Q, c = g % Q;
    const uint4 v = mine[r * Q + (c ^ ((r / P) & (Q - 1)))];
    if (r < nvalid)
      __stcs(reinterpret_cast<uint4 *>(warp_out) + g, v);
  }
  __syncwarp(); // the slice is reused by the next vector
}

/// Lanes of the warp that pass `valid` (a prefix where valid lanes come first).
QCT_DEV int warp_count(bool valid) {
  return __popc(__ballot_sync(0xFFFFFFFFu, valid));
}

/// Stores one lane's Bytes of row output at `out`: through store_warp_rows
/// when CoopThreads > 0 and the lane's share is wider than 16 bytes (every
/// lane of the warp must then call this, valid or not), else directly and only
/// if `valid`.
template <int Bytes, int CoopThreads>
QCT_DEV void store_lane_row(u8 *out, const u32 *w, bool valid) {
  if constexpr (CoopThreads > 0 && Bytes > 16)
    store_warp_rows<Bytes, CoopThreads>(out - (threadIdx.x & 31) * Bytes, w,
                                        warp_count(valid));
  else if (valid)
    store_words<Bytes>(out, w);
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
