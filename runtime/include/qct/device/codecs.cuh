//===- qct/device/codecs.cuh - Scalar codecs of the numerics contract -----===//
//
// Every scalar rule of docs/numerics.md: rounding into e2m1/e4m3/e5m2 and into
// bf16/fp16/fp32, the MX and FP8 scale rules, and the direct (aligned)
// e2m1/e4m3/e5m2 -> fp8 conversion. All functions are __host__ __device__:
// under g++ (CPU tests) the CUDA qualifiers expand to nothing and the
// intrinsics have host fallbacks computing the same bits.
//
// The one exact primitive is round_mag(): round m * 2^E (plus a sticky bit)
// once into a format, from integers only. Everything else either reduces to it
// or is a fast path that the CPU tests prove bit-identical to it.
//
//===----------------------------------------------------------------------===//
#ifndef QCT_DEVICE_CODECS_CUH
#define QCT_DEVICE_CODECS_CUH

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define QCT_HD __host__ __device__ __forceinline__
#define QCT_DEV __device__ __forceinline__
// Rare exact paths called from unrolled loops: one out-of-line copy instead of
// one inlined copy per element keeps NVRTC's cold compile short.
#define QCT_HD_OUTLINE __host__ __device__ __noinline__
#define QCT_DEV_OUTLINE __device__ __noinline__
#else
#define QCT_HD inline
#define QCT_DEV inline
#define QCT_HD_OUTLINE inline
#define QCT_DEV_OUTLINE inline
#endif

namespace qct {
namespace dev {

// NVRTC has no <cstdint>: our own fixed-width names.
typedef unsigned char u8;
typedef unsigned short u16;
typedef unsigned int u32;
typedef unsigned long long u64;
typedef int i32;
typedef long long i64;

/// x / D for x >= 0 (an index or byte offset) as an unsigned division: a
/// shift for a power of two, without the signed form's rounding fix-up.
template <u64 D> QCT_HD i64 div_nonneg(i64 x) { return (i64)((u64)x / D); }

//===----------------------------------------------------------------------===//
// Bit casts and counting
//===----------------------------------------------------------------------===//

QCT_HD u32 f32_bits(float x) {
#ifdef __CUDA_ARCH__
  return __float_as_uint(x);
#else
  u32 u;
  __builtin_memcpy(&u, &x, 4);
  return u;
#endif
}
QCT_HD float bits_f32(u32 u) {
#ifdef __CUDA_ARCH__
  return __uint_as_float(u);
#else
  float x;
  __builtin_memcpy(&x, &u, 4);
  return x;
#endif
}
QCT_HD u64 f64_bits(double x) {
#ifdef __CUDA_ARCH__
  return (u64)__double_as_longlong(x);
#else
  u64 u;
  __builtin_memcpy(&u, &x, 8);
  return u;
#endif
}
QCT_HD double bits_f64(u64 u) {
#ifdef __CUDA_ARCH__
  return __longlong_as_double((long long)u);
#else
  double x;
  __builtin_memcpy(&x, &u, 8);
  return x;
#endif
}
/// Index of the highest set bit (x != 0).
QCT_HD int msb64(u64 x) {
#ifdef __CUDA_ARCH__
  return 63 - __clzll((long long)x);
#else
  return 63 - __builtin_clzll(x);
#endif
}
QCT_HD int msb32(u32 x) {
#ifdef __CUDA_ARCH__
  return 31 - __clz((int)x);
#else
  return 31 - __builtin_clz(x);
#endif
}
/// fp32 division rounded to nearest even (what the FP8 `amax` policy names).
QCT_HD float div_rn(float a, float b) {
#ifdef __CUDA_ARCH__
  return __fdiv_rn(a, b);
#else
  return a / b; // IEEE binary32 division on the host (SSE), no fast-math
#endif
}

//===----------------------------------------------------------------------===//
// Format descriptors
//===----------------------------------------------------------------------===//

/// A binary floating-point element format. maxcode is the magnitude code of
/// the largest finite value; sat selects satfinite (fp8/fp4) over IEEE
/// overflow to Inf (bf16/fp16/fp32).
struct FloatFmt {
  int mbits;
  int ebits;
  int bias;
  int bits;
  bool sat;
  u32 maxcode;
  u32 infcode;
  u32 nancode;
  int emax; // exponent of the largest normal binade (numerics.md emax_elem)
};

QCT_HD constexpr FloatFmt kE2M1() {
  return {1, 2, 1, 4, true, 0x7u, 0u, 0u, 2};
}
QCT_HD constexpr FloatFmt kE4M3() {
  return {3, 4, 7, 8, true, 0x7Eu, 0u, 0x7Fu, 8};
}
QCT_HD constexpr FloatFmt kE5M2() {
  return {2, 5, 15, 8, true, 0x7Bu, 0x7Cu, 0x7Fu, 15};
}
QCT_HD constexpr FloatFmt kBF16() {
  return {7, 8, 127, 16, false, 0x7F7Fu, 0x7F80u, 0x7FFFu, 127};
}
QCT_HD constexpr FloatFmt kFP16() {
  return {10, 5, 15, 16, false, 0x7BFFu, 0x7C00u, 0x7FFFu, 15};
}
QCT_HD constexpr FloatFmt kF32() {
  return {23, 8, 127, 32, false, 0x7F7FFFFFu, 0x7F800000u, 0x7FFFFFFFu, 127};
}

//===----------------------------------------------------------------------===//
// The exact rounding primitive
//===----------------------------------------------------------------------===//

/// Magnitude code of round_F(m * 2^E + tiny), where `sticky` says a nonzero
/// amount below m's last bit was dropped. One rounding to nearest, ties to
/// even; finite overflow saturates (F.sat) or gives Inf.
QCT_HD u32 round_mag(const FloatFmt &F, u64 m, int E, bool sticky) {
  if (m == 0)
    return 0;
  const int p = msb64(m);
  const int e = p + E; // floor(log2(value))
  const int emin = 1 - F.bias;
  int te = e < emin ? emin : e;
  const int shift = te - F.mbits - E; // low bits of m below the quantum
  u64 q;
  if (shift <= 0) {
    q = m << (-shift); // exact; -shift <= mbits since te >= e
  } else if (shift > 64) {
    q = 0; // value < 2^(E+64) <= half a quantum
  } else {
    const u64 kept = shift == 64 ? 0 : m >> shift;
    const u64 rem = shift == 64 ? m : m & ((1ull << shift) - 1);
    const u64 half = 1ull << (shift - 1);
    const bool up = rem > half || (rem == half && (sticky || (kept & 1)));
    q = kept + (up ? 1 : 0);
  }
  if (q >> (F.mbits + 1)) { // carry into the next binade
    q >>= 1;
    te += 1;
  }
  if (q < (1ull << F.mbits))
    return (u32)q; // subnormal or zero
  const int ef = te + F.bias;
  const u32 code =
      ef > (1 << F.ebits) - 1
          ? 0xFFFFFFFFu
          : ((u32)ef << F.mbits) | ((u32)q & ((1u << F.mbits) - 1));
  if (code > F.maxcode)
    return F.sat ? F.maxcode : F.infcode;
  return code;
}

/// A finite or special value split into sign, integer significand and
/// exponent: value = (-1)^neg * m * 2^E.
struct Parts {
  u64 m;
  int E;
  bool neg;
  bool nan;
  bool inf;
};

QCT_HD Parts parts_f32(float x) {
  const u32 u = f32_bits(x);
  const u32 ef = (u >> 23) & 0xFF, mf = u & 0x7FFFFF;
  Parts r;
  r.neg = (u >> 31) != 0;
  r.nan = ef == 0xFF && mf != 0;
  r.inf = ef == 0xFF && mf == 0;
  r.m = ef ? (mf | 0x800000u) : mf;
  r.E = ef ? (int)ef - 150 : -149;
  return r;
}

QCT_HD Parts parts_f64(double x) {
  const u64 u = f64_bits(x);
  const u32 ef = (u32)((u >> 52) & 0x7FF);
  const u64 mf = u & 0xFFFFFFFFFFFFFull;
  Parts r;
  r.neg = (u >> 63) != 0;
  r.nan = ef == 0x7FF && mf != 0;
  r.inf = ef == 0x7FF && mf == 0;
  r.m = ef ? (mf | (1ull << 52)) : mf;
  r.E = ef ? (int)ef - 1075 : -1074;
  return r;
}

QCT_HD Parts parts(float x) { return parts_f32(x); }
QCT_HD Parts parts(double x) { return parts_f64(x); }

/// Full code of round_F(v / 2^scale_exp): sign kept (also for zero); NaN to
/// the fp8 NaN keeping the sign, or to the canonical positive NaN of
/// bf16/fp16/fp32 (0x7FFF, 0x7FFF, 0x7FFFFFFF; e2m1 has none: 0); Inf
/// saturated (fp8/fp4) or kept.
QCT_HD u32 encode_parts(const FloatFmt &F, const Parts &p, int scale_exp) {
  const u32 sign = p.neg ? (1u << (F.bits - 1)) : 0u;
  if (p.nan)
    return F.sat ? sign | F.nancode : F.nancode;
  if (p.inf)
    return sign | (F.sat ? F.maxcode : F.infcode);
  return sign | round_mag(F, p.m, p.E - scale_exp, false);
}

template <typename T>
QCT_HD u32 encode(const FloatFmt &F, T v, int scale_exp = 0) {
  return encode_parts(F, parts(v), scale_exp);
}

//===----------------------------------------------------------------------===//
// Decoding (exact)
//===----------------------------------------------------------------------===//

/// fp32 bits of an e2m1 code (bit 3 sign): magnitudes 0, .5, 1, 1.5, 2, 3,
/// 4, 6.
QCT_HD u32 e2m1_f32_bits(u32 c) {
  const u32 m = c & 7;
  const u32 mag = m >= 2 ? (m << 22) + (126u << 23) : (m ? 0x3F000000u : 0u);
  return mag | ((c & 8u) << 28);
}
QCT_HD float e2m1_to_f32(u32 c) { return bits_f32(e2m1_f32_bits(c)); }

/// e4m3 ("fn"): S.1111.111 is NaN (quiet, sign kept), no Inf.
QCT_HD float e4m3_to_f32(u32 c) {
  const u32 s = (c & 0x80u) << 24, ef = (c >> 3) & 0xF, mf = c & 7;
  if (ef == 0xF && mf == 7)
    return bits_f32(s | 0x7FC00000u);
  if (ef == 0) { // subnormal mf * 2^-9: normalize in integers (fp32 normal)
    if (mf == 0)
      return bits_f32(s);
    const int p = msb32(mf); // 0..2
    return bits_f32(s | ((u32)(p + 118) << 23) |
                    ((mf - (1u << p)) << (23 - p)));
  }
  return bits_f32(s | ((ef + 120) << 23) | (mf << 20));
}

/// fp16 -> fp32, exact; NaN stays quiet NaN with its sign.
QCT_HD float fp16_to_f32(u32 h) {
  const u32 s = (h & 0x8000u) << 16, ef = (h >> 10) & 0x1F, mf = h & 0x3FF;
  if (ef == 0x1F)
    return bits_f32(s | (mf ? 0x7FC00000u | (mf << 13) : 0x7F800000u));
  if (ef == 0) { // subnormal mf * 2^-24: normalize in integers (fp32 normal)
    if (mf == 0)
      return bits_f32(s);
    const int p = msb32(mf); // 0..9
    return bits_f32(s | ((u32)(p + 103) << 23) |
                    ((mf - (1u << p)) << (23 - p)));
  }
  return bits_f32(s | ((ef + 112) << 23) | (mf << 13));
}

/// e5m2 is the high byte of an fp16.
QCT_HD float e5m2_to_f32(u32 c) { return fp16_to_f32((c & 0xFFu) << 8); }

QCT_HD float bf16_to_f32(u32 b) { return bits_f32((b & 0xFFFFu) << 16); }

/// 2^k as fp32 bits, k in [-149, 127] (subnormal powers exact).
QCT_HD u32 pow2_f32_bits(int k) {
  return k >= -126 ? (u32)(k + 127) << 23 : 1u << (k + 149);
}
QCT_HD float pow2_f32(int k) { return bits_f32(pow2_f32_bits(k)); }
/// 2^k as double, k in [-1022, 1023].
QCT_HD double pow2_f64(int k) { return bits_f64((u64)(k + 1023) << 52); }

//===----------------------------------------------------------------------===//
// Fast encoders from an exact fp32 value (bit-identical to encode(); the CPU
// tests check every bf16/fp16 pattern and a dense fp32 sweep)
//===----------------------------------------------------------------------===//

/// round_e2m1(y) for finite y (NaN never reaches an MX element: the block
/// rule zeroes it), in integers: from 1.0 up, keep one mantissa bit with
/// round-to-nearest-even on the bits (a carry bumps the exponent; 7 is the
/// saturated maximum 6); below 1.0 the steps are 0.5: 0, 0.5, 1 with the
/// ties 0.25 -> 0 and 0.75 -> 1.
QCT_HD u32 e2m1_from_f32(float y) {
  const u32 u = f32_bits(y);
  const u32 a = u & 0x7FFFFFFFu;
  const u32 r = (a + 0x1FFFFFu + ((a >> 22) & 1u)) >>
                22; // (exponent << 1) | mantissa bit
  const u32 big = r - 252u < 7u ? r - 252u : 7u;
  const u32 small = (a > 0x3E800000u ? 1u : 0u) + (a >= 0x3F400000u ? 1u : 0u);
  return (a >= 0x3F800000u ? big : small) | ((u >> 28) & 8u);
}

/// bf16 RNE from fp32, overflow to Inf, NaN -> the canonical NaN 0x7FFF.
QCT_HD u32 bf16_from_f32(float y) {
  const u32 u = f32_bits(y);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u)
    return 0x7FFFu;
  return (u + 0x7FFFu + ((u >> 16) & 1u)) >> 16;
}

/// Two fp32 values to two fp8 codes (lo in bits 0..7), satfinite, RNE, for
/// finite or infinite inputs (Inf saturates); NaN must be handled by the
/// caller. On sm_90 one cvt instruction: it rounds an exact fp32 input once,
/// which is the contract's round_F.
template <bool E5M2> QCT_HD u32 fp8x2_from_f32(float lo, float hi) {
#ifdef __CUDA_ARCH__
  unsigned short r;
  if (E5M2)
    asm("cvt.rn.satfinite.e5m2x2.f32 %0, %1, %2;" : "=h"(r) : "f"(hi), "f"(lo));
  else
    asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(r) : "f"(hi), "f"(lo));
  return r;
#else
  constexpr FloatFmt F = E5M2 ? kE5M2() : kE4M3();
  return encode(F, lo) | (encode(F, hi) << 8);
#endif
}

//===----------------------------------------------------------------------===//
// Scale rules
//===----------------------------------------------------------------------===//

/// Smallest e with a <= maxval(F) * 2^e, for a = m * 2^E > 0, computed from
/// the bits (numerics.md 3.4 rceil, 4 pow2). The two candidates are
/// floor(log2 a) - emax and that plus one.
QCT_HD int ceil_log2_over_max(const FloatFmt &F, u64 m, int E) {
  const int p = msb64(m);
  const int fl = p + E - F.emax;
  const u64 norm = m << (63 - p); // 1.f in 1.63 fixed point
  const u64 maxsig =
      (u64)((1u << F.mbits) | (F.maxcode & ((1u << F.mbits) - 1)))
      << (63 - F.mbits);
  return norm <= maxsig ? fl : fl + 1;
}

/// MX scale byte from a positive finite amax (as parts), numerics.md 3.4-3.5.
template <bool Rceil>
QCT_HD u32 mx_scale_byte(const FloatFmt &F, u64 m, int E) {
  if (m == 0)
    return 0;
  const int e = Rceil ? ceil_log2_over_max(F, m, E) : msb64(m) + E - F.emax;
  const int b = e + 127;
  return b < 0 ? 0u : (b > 254 ? 254u : (u32)b);
}

/// Fast MX scale byte from fp32 amax bits (positive, finite).
template <bool Rceil>
QCT_HD u32 mx_scale_byte_f32(const FloatFmt &F, u32 amax_bits) {
  const Parts p = parts_f32(bits_f32(amax_bits));
  return mx_scale_byte<Rceil>(F, p.m, p.E);
}

/// FP8 `pow2` exponent, numerics.md 4: clamp(ceil(log2(amax/max_F)), -127,
/// 127); amax == 0 gives 0 (s = 1).
QCT_HD int pow2_scale_exp(const FloatFmt &F, u64 m, int E) {
  if (m == 0)
    return 0;
  const int e = ceil_log2_over_max(F, m, E);
  return e < -127 ? -127 : (e > 127 ? 127 : e);
}

/// fl32(a / b) for a = (-1)^neg * ma * 2^ea (ma < 2^63) and a finite fp32
/// b = mb * 2^eb > 0, rounded once (an exact integer quotient with sticky).
/// Used where an operand is wider than fp32 (quantized sources), so double
/// rounding through a double division is never an issue.
QCT_HD u32 div_f32_bits(bool neg, u64 ma, int ea, u64 mb, int eb) {
  const u32 sign = neg ? 0x80000000u : 0u;
  if (ma == 0)
    return sign;
  const int sh = 62 - msb64(ma); // ma << sh has its top bit at 62
  const u64 num = ma << sh;
  const u64 q = num / mb, r = num % mb; // mb < 2^24: q has >= 38 bits
  return sign | round_mag(kF32(), q, ea - sh - eb, r != 0);
}

//===----------------------------------------------------------------------===//
// The direct aligned conversion (numerics.md 4 `aligned`)
//===----------------------------------------------------------------------===//

/// Exponent of the fp32 scale_inv of an aligned FP8 block:
/// bmax - 127 + emax_src - emax_F (exact also where 2^it is an fp32
/// subnormal), 0 (s = 1) if no covered block is finite (bmax < 0), clamped to
/// fp32's [-149, 127] (only an mxfp8_e5m2 source with bmax >= 248 into e4m3
/// reaches the clamp; the elements then divide by the clamped s, as the
/// reference does).
QCT_HD int aligned_scale_exp(int bmax, int emax_src, int emax_dst) {
  if (bmax < 0)
    return 0;
  const int k = bmax - 127 + emax_src - emax_dst;
  return k > 127 ? 127 : (k < -149 ? -149 : k);
}

/// fp32 bits of an exact source element value times 2^k, for a nonzero
/// element whose fp32 value v satisfies 2^-16 <= |v| <= 57344 and k >= -100:
/// an exponent-field add, exact (the result stays a normal fp32). Smaller k
/// are clamped: every such value rounds to a signed zero in e4m3/e5m2 anyway.
QCT_HD u32 scale_bits_exp(u32 vbits, int k) {
  if ((vbits & 0x7FFFFFFFu) == 0)
    return vbits;
  const int kk = k < -100 ? -100 : k;
  return (u32)((int)vbits + (kk << 23));
}

/// PTX prmt.b32 in its default mode: result byte i is byte (s >> 4i) & 7 of
/// {b, a} (a = bytes 0..3); if bit 3 of that selector nibble is set, the
/// selected byte's bit 7 is replicated instead. The host version is written
/// from the PTX ISA description.
QCT_HD u32 prmt(u32 a, u32 b, u32 s) {
#ifdef __CUDA_ARCH__
  u32 d;
  asm("prmt.b32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(s));
  return d;
#else
  const u64 v = (u64)a | ((u64)b << 32);
  u32 d = 0;
  for (int i = 0; i < 4; ++i) {
    const u32 n = (s >> (4 * i)) & 0xF;
    u32 byte = (u32)(v >> (8 * (n & 7))) & 0xFF;
    if (n & 8)
      byte = (byte & 0x80) ? 0xFF : 0x00;
    d |= byte << (8 * i);
  }
  return d;
#endif
}

//===----------------------------------------------------------------------===//
// Packed 16-bit lanes (two bf16 codes per 32-bit word)
//===----------------------------------------------------------------------===//

/// PTX max.u16x2 / min.u16x2 (sm_90): each 16-bit half separately, unsigned.
QCT_HD u32 vmax_u16x2(u32 a, u32 b) {
#ifdef __CUDA_ARCH__
  u32 d;
  asm("max.u16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));
  return d;
#else
  const u32 lo = (a & 0xFFFFu) > (b & 0xFFFFu) ? a & 0xFFFFu : b & 0xFFFFu;
  const u32 hi = (a >> 16) > (b >> 16) ? a >> 16 : b >> 16;
  return lo | (hi << 16);
#endif
}
QCT_HD u32 vmin_u16x2(u32 a, u32 b) {
#ifdef __CUDA_ARCH__
  u32 d;
  asm("min.u16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));
  return d;
#else
  const u32 lo = (a & 0xFFFFu) < (b & 0xFFFFu) ? a & 0xFFFFu : b & 0xFFFFu;
  const u32 hi = (a >> 16) < (b >> 16) ? a >> 16 : b >> 16;
  return lo | (hi << 16);
#endif
}

/// One half of fma.rn.bf16x2 as the PTX ISA defines it: the exact a * b + c
/// rounded once to nearest even, IEEE overflow to Inf, subnormals kept, an
/// exact zero sum +0 unless both addends are -0, NaN the canonical 0x7FFF.
/// The exact sum is formed in integers: bf16 significands have 8 bits, so
/// aligned terms fit in 64 bits unless the exponents are more than 40 apart,
/// and then the smaller term only decides a sticky bit (and, subtracted, a
/// borrow of one unit).
QCT_HD u32 bf16_fma_rn(u32 a, u32 b, u32 c) {
  const float fa = bf16_to_f32(a), fb = bf16_to_f32(b), fc = bf16_to_f32(c);
  Parts pa = parts_f32(fa), pb = parts_f32(fb), pc = parts_f32(fc);
  // bf16 values as fp32: the low 16 significand bits are zero; drop them.
  pa.m >>= 16, pb.m >>= 16, pc.m >>= 16;
  pa.E += 16, pb.E += 16, pc.E += 16;
  if (pa.nan || pb.nan || pc.nan)
    return 0x7FFFu;
  if (pa.inf || pb.inf || pc.inf) // Inf * 0, Inf - Inf: NaN; else +-Inf
    return encode(kBF16(), (double)fa * fb + fc); // the product is exact
  const bool np = pa.neg != pb.neg;
  const u64 mp = pa.m * pb.m; // < 2^16
  const int ep = pa.E + pb.E;
  if (mp == 0 && pc.m == 0)
    return np && pc.neg ? 0x8000u : 0u;
  if (mp == 0)
    return c & 0xFFFFu;
  if (pc.m == 0)
    return (np ? 0x8000u : 0u) | round_mag(kBF16(), mp, ep, false);
  u64 big = mp, small = pc.m;
  int eb = ep, es = pc.E;
  bool nb = np, ns = pc.neg;
  if (es > eb) {
    big = pc.m, small = mp, eb = pc.E, es = ep, nb = pc.neg, ns = np;
  }
  if (eb - es > 40) { // small < 2^(eb - 24): below big's last bit by far
    const u64 m = (big << 20) - (nb != ns ? 1u : 0u);
    return (nb ? 0x8000u : 0u) | round_mag(kBF16(), m, eb - 20, true);
  }
  const long long sb = (long long)(big << (eb - es));
  const long long sum =
      (nb ? -sb : sb) + (ns ? -(long long)small : (long long)small);
  if (sum == 0)
    return 0u;
  const bool neg = sum < 0;
  return (neg ? 0x8000u : 0u) |
         round_mag(kBF16(), (u64)(neg ? -sum : sum), es, false);
}

/// PTX fma.rn.bf16x2 (sm_80): two bf16 lanes, low half and high half.
QCT_HD u32 bf16x2_fma_rn(u32 a, u32 b, u32 c) {
#ifdef __CUDA_ARCH__
  u32 d;
  asm("fma.rn.bf16x2 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
  return d;
#else
  return bf16_fma_rn(a & 0xFFFFu, b & 0xFFFFu, c & 0xFFFFu) |
         (bf16_fma_rn(a >> 16, b >> 16, c >> 16) << 16);
#endif
}

/// The signs of the 8 e2m1 codes of word w (one code per nibble) as bit 7 of
/// the bytes of two words: lo for codes 0..3, hi for codes 4..7; the other
/// bits are garbage (mask with 0x80808080). Code i's sign is bit 4i + 3:
/// bit 7 of byte i/2 of (w << 4) for even i, of byte i/2 of w for odd i, so
/// one prmt per half interleaves the two: a shift and two prmt for 8 codes,
/// and no constant operand to keep in a register.
QCT_HD void e2m1_sign_bytes(u32 w, u32 &lo, u32 &hi) {
  const u32 t = w << 4;
  lo = prmt(t, w, 0x5140u);
  hi = prmt(t, w, 0x7362u);
}

/// The direct mxfp4 -> fp8 row conversion of one source block (32 codes in
/// 4 words, scale byte b) given the FP8 block's scale exponent se: all codes
/// share the shift k = b - 127 - se, so the 8 positive results (e2m1
/// magnitude * 2^k, rounded once from the exact fp32) form a byte table and
/// prmt converts 4 codes at a time; the code's sign bit becomes bit 7. A NaN
/// block (b = 0xFF) gives 0x7F everywhere. Writes 8 words (32 fp8 bytes).
template <bool E5M2>
QCT_HD void aligned_e2m1_block(const u32 (&codes)[4], u32 b, int se,
                               u32 (&out)[8]) {
  u32 lo = 0x7F7F7F7Fu, hi = 0x7F7F7F7Fu, signmask = 0;
  if (b != 0xFF) {
    const int k = (int)b - 127 - se;
    float t[8];
#pragma unroll
    for (int m = 0; m < 8; ++m)
      t[m] = bits_f32(scale_bits_exp(e2m1_f32_bits((u32)m), k));
    lo = fp8x2_from_f32<E5M2>(t[0], t[1]) |
         (fp8x2_from_f32<E5M2>(t[2], t[3]) << 16);
    hi = fp8x2_from_f32<E5M2>(t[4], t[5]) |
         (fp8x2_from_f32<E5M2>(t[6], t[7]) << 16);
    signmask = 0x80808080u;
  }
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    // prmt reads the low 16 bits of its selector: 4 codes.
    const u32 m = codes[i] & 0x77777777u;
    u32 slo, shi;
    e2m1_sign_bytes(codes[i], slo, shi);
    out[2 * i] = prmt(lo, hi, m) | (slo & signmask);
    out[2 * i + 1] = prmt(lo, hi, m >> 16) | (shi & signmask);
  }
}

/// The mxfp4 -> bf16 decode of one source block (32 codes in 4 words) for a
/// scale byte 2 <= b <= 252, where every value e2m1 * 2^(b-127) is a normal
/// bf16 (an exponent add, exact). The 8 positive results form a table of
/// 16-bit values built with two packed adds (IMAD: the FMA pipe), split into
/// a low-byte and a high-byte table; prmt then decodes 4 codes per table and
/// two more prmt interleave the bytes into bf16 pairs, about 2.5 ALU
/// instructions per element instead of ~8. Writes 16 words (32 bf16).
QCT_HD void e2m1_block_to_bf16(const u32 (&codes)[4], u32 b, u32 (&out)[16]) {
  // bf16 bits of the e2m1 magnitudes 0, .5, 1, 1.5, 2, 3, 4, 6, two per word;
  // D = (b - 127) << 7 added to both halves (no borrow crosses: every nonzero
  // half stays within [0x80, 0x7F40]); magnitude 0 (the low half of w01)
  // stays 0, so D goes into w01's high half only.
  const u32 dh = (u32)(((int)b - 127) * 128) << 16;
  const u32 d = dh + (u32)(((int)b - 127) * 128);
  const u32 w01 = 0x3F000000u + dh;
  const u32 w23 = 0x3FC03F80u + d;
  const u32 w45 = 0x40404000u + d;
  const u32 w67 = 0x40C04080u + d;
  const u32 lo_a = prmt(w01, w23, 0x6420), lo_b = prmt(w45, w67, 0x6420);
  const u32 hi_a = prmt(w01, w23, 0x7531), hi_b = prmt(w45, w67, 0x7531);
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const u32 m = codes[i] & 0x77777777u;
    u32 s[2];
    e2m1_sign_bytes(codes[i], s[0], s[1]);
#pragma unroll
    for (int h = 0; h < 2; ++h) { // prmt reads 16 selector bits: 4 codes
      const u32 x = h ? m >> 16 : m;
      const u32 lo = prmt(lo_a, lo_b, x);
      const u32 hi = prmt(hi_a, hi_b, x) | (s[h] & 0x80808080u);
      out[4 * i + 2 * h] = prmt(lo, hi, 0x5140);
      out[4 * i + 2 * h + 1] = prmt(lo, hi, 0x7362);
    }
  }
}

} // namespace dev
} // namespace qct

#endif // QCT_DEVICE_CODECS_CUH
