//===- qct/device/quant.cuh - Block quantization shared by both families --===//
//
// One block of an output is spread over L consecutive lanes of a warp, each
// holding N elements (a 16-byte source vector in the row direction, 16 tokens
// of one feature in the column direction). The block's amax (or bmax) is a
// butterfly of L lanes; every lane of the warp executes the shuffles, so
// callers keep inactive lanes in step and only skip their stores.
//
//===----------------------------------------------------------------------===//
#ifndef QCT_DEVICE_QUANT_CUH
#define QCT_DEVICE_QUANT_CUH

#include "qct/device/config.cuh"

namespace qct {
namespace dev {

template <int I> struct Int { static constexpr int value = I; };

template <int I, int N, typename F> QCT_HD void static_for(F &&f) {
  if constexpr (I < N) {
    f(Int<I>{});
    static_for<I + 1, N>(f);
  }
}

//===----------------------------------------------------------------------===//
// Lane-group reductions (device only)
//===----------------------------------------------------------------------===//

// On the host (CPU tests) a block is one "lane" (L == 1): no shuffles.
template <int L, typename T> QCT_HD T group_max(T v) {
#ifdef __CUDA_ARCH__
#pragma unroll
  for (int o = L / 2; o >= 1; o >>= 1) {
    const T w = __shfl_xor_sync(0xFFFFFFFFu, v, o);
    v = w > v ? w : v;
  }
#endif
  return v;
}

//===----------------------------------------------------------------------===//
// Element decoding of a source code
//===----------------------------------------------------------------------===//

/// Exact fp32 bits of a quantized source element code (without its scale).
template <Fmt F> QCT_HD u32 elem_f32_bits(u32 c) {
  if constexpr (F == Fmt::mxfp4)
    return e2m1_f32_bits(c);
  else if constexpr (F == Fmt::mxfp8_e4m3 || F == Fmt::fp8_e4m3)
    return f32_bits(e4m3_to_f32(c));
  else
    return f32_bits(e5m2_to_f32(c));
}

/// The fp32 value of a high-precision source element (exact).
template <Fmt F> QCT_HD float hp_value(u32 c) {
  if constexpr (F == Fmt::bf16)
    return bf16_to_f32(c);
  else if constexpr (F == Fmt::fp16)
    return fp16_to_f32(c);
  else
    return bits_f32(c);
}

/// Source scale of one element: MX e8m0 byte or FP8 f32 scale_inv bits.
/// The exact decoded value element * scale as a double (exact: at most 28
/// significant bits, exponents in range); an MX block with scale 0xFF is NaN.
template <Fmt F> QCT_HD double exact_value(u32 c, u32 scale) {
  const u32 eb = elem_f32_bits<F>(c);
  const double pnan = bits_f64(0x7FF8000000000000ull);
  // NaN signs are set explicitly: GPU arithmetic returns canonical NaNs.
  const double enan = bits_f64(((u64)(eb >> 31) << 63) | 0x7FF8000000000000ull);
  const bool e_nan = (eb & 0x7FFFFFFFu) > 0x7F800000u;
  const double e = (double)bits_f32(eb);
  if constexpr (FmtTraits<F>::mx) {
    if (scale == 0xFFu)
      return pnan; // a NaN block: every element the positive NaN
    return e_nan ? enan : e * pow2_f64((int)scale - 127);
  } else {
    const u32 sa = scale & 0x7FFFFFFFu, ea = eb & 0x7FFFFFFFu;
    if (sa > 0x7F800000u || (ea == 0 && sa == 0x7F800000u) ||
        (ea == 0x7F800000u && sa == 0))
      return pnan; // NaN scale, 0 * Inf, Inf * 0
    return e_nan ? enan : e * (double)bits_f32(scale);
  }
}

/// Whether every lane of the warp passes p (host: p). Branches that contain
/// lane-group shuffles must be warp-uniform.
QCT_HD bool warp_all(bool p) {
#ifdef __CUDA_ARCH__
  return __all_sync(0xFFFFFFFFu, p) != 0;
#else
  return p;
#endif
}

/// The biased exponent of a power-of-two source scale (f32 scale_inv bits of
/// an FP8 1x128 source, e8m0 byte of an MX source), or 0xFFFFFFFF when the
/// scale is no normal positive power of two (then mxfp4_from_fp8_codes
/// declines). Zero, subnormal, negative, Inf and NaN scales (contract D2) all
/// take the general path.
template <Fmt F> QCT_HD u32 pow2_scale_field(u32 scale) {
  if constexpr (FmtTraits<F>::mx) {
    return scale <= 254 ? scale : 0xFFFFFFFFu;
  } else {
    const u32 e = scale >> 23;
    return (scale & 0x807FFFFFu) == 0 && e - 1 < 254 ? e : 0xFFFFFFFFu;
  }
}

/// Whether a quantized source's scale is 2^k with |k| <= 100 (every MX scale
/// byte in [27, 227]; an FP8 1x128 scale_inv that is a positive power of two
/// in that range, as `pow2` sources have). Then element * scale is an exact
/// normal fp32 for every nonzero finite element (magnitudes 2^-16..57344):
/// the element's fp32 bits plus k in the exponent field.
template <Fmt F> QCT_HD bool pow2_source_scale(u32 scale, int &k) {
  // pow2_scale_field's "not a power of two" (all ones) gives k = -128.
  k = (int)pow2_scale_field<F>(scale) - 127;
  return k >= -100 && k <= 100;
}

/// The exact decoded value element * 2^k as fp32 (pow2_source_scale held):
/// zeros, NaN and Inf are the element's own.
template <Fmt F> QCT_HD float pow2_scaled_value(u32 c, int k) {
  const u32 eb = elem_f32_bits<F>(c);
  const u32 a = eb & 0x7FFFFFFFu;
  return bits_f32(a == 0 || a >= 0x7F800000u ? eb : eb + ((u32)k << 23));
}

/// encode(OutF, exact_value<F>(c, scale)) out of line: the rare exact path of
/// a decode (MX scale bytes outside [2, 252], fp8 sources), which unrolled over
/// a 32-element vector made NVRTC take over a second.
template <Fmt F, Fmt OutF>
QCT_HD_OUTLINE u32 encode_exact_value(u32 c, u32 scale) {
  return encode(FmtTraits<OutF>::elem(), exact_value<F>(c, scale));
}

/// The decoded value rounded to bf16 (fuse: false), returned as the fp32 it
/// equals. For e2m1 with 2 <= b <= 252 the product is a normal fp32 with a
/// 2-bit significand, so it is exact in bf16: an exponent add. Elsewhere the
/// exact double is rounded once.
template <Fmt F> QCT_HD float bf16_value(u32 c, u32 scale) {
  if constexpr (F == Fmt::mxfp4) {
    if (scale >= 2 && scale <= 252) {
      const u32 b = e2m1_f32_bits(c);
      return bits_f32((b & 0x7FFFFFFFu) ? b + ((scale - 127) << 23) : b);
    }
  }
  return bf16_to_f32(encode_exact_value<F, Fmt::bf16>(c, scale));
}

/// One mxfp4 source block (32 codes in 4 words, scale byte b) as the bf16
/// codes of its values, element 2i in the low half of word i, as
/// bf16_value rounds them: a scale byte in [2, 252] takes the byte-table
/// decode, others (rare: NaN blocks, extreme scales) the exact path element
/// by element. The mxfp4 -> bf16 row kernel stores these words; the unfused
/// mxfp4 -> fp8 one quantizes them (row_output).
QCT_HD void mxfp4_block_to_bf16_codes(const u32 (&codes)[4], u32 b,
                                      u32 (&w)[16]) {
  if (b >= 2 && b <= 252) {
    e2m1_block_to_bf16(codes, b, w);
    return;
  }
#pragma unroll
  for (int i = 0; i < 16; ++i) {
    const u32 pair = codes[i / 4] >> (8 * (i % 4));
    w[i] =
        encode_exact_value<Fmt::mxfp4, Fmt::bf16>(pair & 0xF, b) |
        (encode_exact_value<Fmt::mxfp4, Fmt::bf16>((pair >> 4) & 0xF, b) << 16);
  }
}

//===----------------------------------------------------------------------===//
// Block quantizers: N elements per lane, L lanes per block
//===----------------------------------------------------------------------===//

/// Output codes and scale of one lane's share of a block.
template <int N> struct QBlock {
  u32 q[N];
  u32 scale; // e8m0 byte or f32 bits; unused for bf16/fp16/fp32 outputs
};

/// Round fp32 values already divided by their scale (y) into an fp8 format,
/// pairwise through the hardware conversion. NaN and Inf are taken from the
/// undivided values v: GPU arithmetic turns every NaN into the canonical
/// positive one, and the contract keeps the sign (Inf -> +-max).
template <bool E5M2, int N>
QCT_HD void fp8_round_pairs(const float (&y)[N], const float (&v)[N],
                            u32 (&q)[N]) {
  constexpr FloatFmt F = E5M2 ? kE5M2() : kE4M3();
#pragma unroll
  for (int i = 0; i < N; i += 2) {
    const u32 two = fp8x2_from_f32<E5M2>(y[i], i + 1 < N ? y[i + 1] : 0.0f);
    q[i] = two & 0xFF;
    if (i + 1 < N)
      q[i + 1] = two >> 8;
  }
#pragma unroll
  for (int i = 0; i < N; ++i) {
    const u32 u = f32_bits(v[i]), a = u & 0x7FFFFFFFu, s = (u >> 24) & 0x80u;
    if (a >= 0x7F800000u)
      q[i] = s | (a == 0x7F800000u ? F.maxcode : F.nancode);
  }
}

/// From exact fp32 values (high-precision source, or decoded via bf16).
template <typename O, int N, int L>
QCT_HD QBlock<N> quantize_hp(const float (&v)[N]) {
  QBlock<N> r;
  r.scale = 0;
  constexpr FloatFmt F = O::T::elem();
  if constexpr (O::T::hp) {
#pragma unroll
    for (int i = 0; i < N; ++i) {
      if constexpr (O::fmt == Fmt::bf16)
        r.q[i] = bf16_from_f32(v[i]);
      else
        r.q[i] = encode(F, v[i]);
    }
  } else if constexpr (O::T::mx) {
    // NaN/Inf have the largest magnitude bits, so one max finds them too.
    u32 amax = 0;
#pragma unroll
    for (int i = 0; i < N; ++i) {
      const u32 a = f32_bits(v[i]) & 0x7FFFFFFFu;
      amax = a > amax ? a : amax;
    }
    amax = group_max<L>(amax);
    if (amax >= 0x7F800000u) {
      r.scale = 0xFF;
#pragma unroll
      for (int i = 0; i < N; ++i)
        r.q[i] = 0;
      return r;
    }
    const u32 b = mx_scale_byte_f32<O::scale == Scale::rceil>(F, amax);
    r.scale = b;
    // x * 2^(127-b) is exact, or underflows below 2^-126 where every target
    // rounds to a signed zero anyway (docs/device-library.md).
    const float f = pow2_f32(127 - (int)b);
    float y[N];
#pragma unroll
    for (int i = 0; i < N; ++i)
      y[i] = v[i] * f;
    if constexpr (O::fmt == Fmt::mxfp4) {
#pragma unroll
      for (int i = 0; i < N; ++i)
        r.q[i] = e2m1_from_f32(y[i]);
    } else {
      fp8_round_pairs<O::e5m2>(y, v, r.q);
    }
  } else { // FP8 1x128: amax ignores NaN, counts Inf as max_F
    const u32 maxf = round_mag(kF32(), 7, F.emax - 2, false);
    u32 amax = 0;
#pragma unroll
    for (int i = 0; i < N; ++i) {
      u32 a = f32_bits(v[i]) & 0x7FFFFFFFu;
      a = a > 0x7F800000u ? 0u : (a == 0x7F800000u ? maxf : a);
      amax = a > amax ? a : amax;
    }
    amax = group_max<L>(amax);
    float y[N];
    if constexpr (O::scale == Scale::pow2) {
      const Parts p = parts_f32(bits_f32(amax));
      const int e = pow2_scale_exp(F, p.m, p.E);
      r.scale = pow2_f32_bits(e);
      const float f = pow2_f32(-e);
#pragma unroll
      for (int i = 0; i < N; ++i)
        y[i] = v[i] * f;
    } else {
      float s = div_rn(bits_f32(amax), bits_f32(maxf));
      if (amax == 0 || f32_bits(s) == 0)
        s = 1.0f;
      r.scale = f32_bits(s);
#pragma unroll
      for (int i = 0; i < N; ++i)
        y[i] = div_rn(v[i], s);
    }
    fp8_round_pairs<O::e5m2>(y, v, r.q);
  }
  return r;
}

/// encode(OutF, v, e) out of line, for quantize_exact's unrolled loops (the
/// exact path is the rare one where the fp32 path exists, and unrolled inline
/// copies of the 64-bit rounding dominate NVRTC's compile time).
template <Fmt OutF> QCT_HD_OUTLINE u32 encode_scaled(double v, int e) {
  return encode(FmtTraits<OutF>::elem(), v, e);
}

/// encode(OutF, fl32(v / s)) for an exact v and an fp32 scale s > 0 (bits),
/// out of line like encode_scaled: NaN keeps its sign, Inf saturates.
template <Fmt OutF> QCT_HD_OUTLINE u32 encode_quotient(double v, u32 s) {
  constexpr FloatFmt F = FmtTraits<OutF>::elem();
  const Parts px = parts_f64(v);
  if (px.nan || px.inf)
    return encode_parts(F, px, 0);
  const Parts ps = parts_f32(bits_f32(s));
  return encode(F, bits_f32(div_f32_bits(px.neg, px.m, px.E, ps.m, ps.E)));
}

//===----------------------------------------------------------------------===//
// bf16 sources on their raw codes (two per 32-bit word, both halves at once)
//===----------------------------------------------------------------------===//
//
// The row outputs of a bf16 source spend most of their instructions on the
// ALU pipe when every element is widened to fp32 and rounded in integers.
// These paths work on the 16-bit codes in place: |x| is a mask, the block
// amax a max.u16x2, and the rounding into e2m1 one bf16x2 fma (FMA pipe) per
// two elements. They cover every block except the rare ones whose bits make
// the shortcut unsafe (NaN/Inf, a tiny amax), which take quantize_hp: the
// caller asks the whole warp (warp_all) so that its shuffles stay uniform.

/// The largest 16-bit half of a block of words (NW per lane, L lanes), in
/// both halves of the result. Given bf16 magnitude codes it is the code of
/// amax: for finite values their integer order is the numeric order, and a
/// NaN or Inf code is above every finite one.
template <int NW, int L> QCT_HD u32 bf16_block_amax(const u32 (&a)[NW]) {
  u32 m = a[0];
#pragma unroll
  for (int j = 1; j < NW; ++j)
    m = vmax_u16x2(m, a[j]);
  m = vmax_u16x2(m, prmt(m, 0, 0x1032)); // both halves: the max of the two
  return group_max<L>(m); // equal halves: u32 order is the halves' order
}

/// bf16 -> mxfp4 with `floor` scales on raw codes: NW words (2*NW elements)
/// per lane, L lanes per 32-element block. Returns false, touching nothing,
/// for a block this path does not take: any NaN/Inf, or a nonzero amax below
/// 2^-122 (biased exponent < 5).
///
/// With E the largest biased exponent in the block, the scale byte is
/// b = E - 2 (numerics.md 3.4: floor(log2 amax) - emax_e2m1 + 127). An element
/// x = 2^(Ex-127) * 1.m (Ex >= 1) scaled by 2^(127-b) rounds to e2m1 on a grid
/// of step T/2 in x units, T = 2^(max(Ex, b) - 127): 0.5 below 1.0 after
/// scaling, then one mantissa bit. So with T as a bf16 power of two,
///   z = fma(|x|, 2^-6, T) = T + n * T/128,   n = round_even(|x| / (T/2)),
/// one rounding of the exact value, and z's code minus T's is n (0..4). The
/// e2m1 code is n + 2*(max(Ex, b) - b). The result stays a normal bf16 below
/// 2^128, and the subnormal x (only possible when b >= 3) are below a quarter
/// of the grid step, so n = 0 whether or not the fma flushed them. Elements
/// that would round to 8 (|x| >= 7 * 2^(b-127)) are clamped first to the
/// largest code below that, which rounds to 6 (code 7), the saturated value.
///
/// Output word j holds element 2j's code in bits 12..15 and element 2j+1's
/// in bits 28..31, sign included (pack_e2m1_nibbles puts them in order).
template <int NW, int L>
QCT_HD bool mxfp4_floor_bf16(const u32 (&w)[NW], u32 (&nib)[NW], u32 &scale) {
  u32 a[NW];
#pragma unroll
  for (int j = 0; j < NW; ++j)
    a[j] = w[j] & 0x7FFF7FFFu;
  const u32 amax = bf16_block_amax<NW, L>(a);
  // amax == 0, or 5 <= E <= 254 (the halves are equal: compare the word).
  if (amax != 0 && amax - 0x02800280u > 0x7F7F7F7Fu - 0x02800280u)
    return false;
  // b << 7 in both halves (0 for an all-zero block, where every code is a
  // signed zero whatever b is).
  const u32 bb = amax ? (amax & 0x7F807F80u) - 0x01000100u : 0u;
  const u32 lim = bb + 0x015F015Fu; // (E << 7) | 0x5F: just below 7 * 2^(b-127)
#pragma unroll
  for (int j = 0; j < NW; ++j) {
    const u32 t = vmax_u16x2(a[j] & 0x7F807F80u, bb);
    const u32 z = bf16x2_fma_rn(vmin_u16x2(a[j], lim), 0x3C803C80u, t);
    // Per half: code << 12 = (z - t) << 12 + 2 * ((t - bb) >> 7) << 12, and
    // t, bb have no bits below 7, so all of it is one linear combination of
    // the words (each half's result is in range, so no carry crosses).
    nib[j] = (z * 4096u - t * 4032u - bb * 64u) | (w[j] & 0x80008000u);
  }
  scale = bb >> 23; // the high half's b << 7
  return true;
}

/// Packs the nibble words of mxfp4_floor_bf16 (4 words: 8 codes) into one
/// word, element 2i in bits 0..3 of byte i.
QCT_HD u32 pack_e2m1_nibbles(u32 n0, u32 n1, u32 n2, u32 n3) {
  // p01 bytes: [e2, e0, e3, e1] in their high nibbles; p23 likewise. The
  // bits are disjoint, so + (one shift-and-add) is |.
  const u32 p01 = n0 + (n1 >> 8), p23 = n2 + (n3 >> 8);
  const u32 lo = prmt(p01, p23, 0x4501); // e0, e2, e4, e6 in high nibbles
  const u32 hi = prmt(p01, p23, 0x6723); // e1, e3, e5, e7 in high nibbles
  return (lo >> 4) + hi;
}

/// The bf16 bits of fp8 max_F (448 for e4m3, 57344 for e5m2): what an Inf
/// counts as in a pow2 amax on bf16 codes.
template <bool E5M2> QCT_HD constexpr u32 bf16_bits_of_fp8_max() {
  return E5M2 ? 0x4760u : 0x43E0u;
}

/// pow2_scale_exp from the fp32 bits A of a finite amax >= 0: the smallest e
/// with amax <= max_F * 2^e is the smallest e with A <= bits(max_F) + e * 2^23
/// (fp32 bits are monotonic and adding e * 2^23 multiplies by 2^e while the
/// result stays normal, which holds for every e > -127 here), so e =
/// ceil((A - bits(max_F)) / 2^23). Amax below 2^-126 gives e <= -128, which
/// clamps to -127 as the exact rule does; amax 0 gives 0.
template <bool E5M2> QCT_HD int pow2_exp_from_bits(u32 A) {
  constexpr int maxbits = (int)(bf16_bits_of_fp8_max<E5M2>() << 16);
  const int e = ((int)A - maxbits + 0x7FFFFF) >> 23;      // arithmetic shift
  const int c = e < -127 ? -127 : (e > 127 ? 127 : e);
  return A == 0 ? 0 : c;
}

/// quantize_hp's amax rule on one bf16 magnitude (code & 0x7FFF): NaN counts
/// 0, Inf max_F (bf16 bits maxf16), a finite value itself.
QCT_HD u32 bf16_amax_operand(u32 mag, u32 maxf16) {
  return mag > 0x7F80u ? 0u : (mag == 0x7F80u ? maxf16 : mag);
}

/// The fp8 code of a bf16 NaN or Inf x (16-bit code, magnitude mag = x &
/// 0x7FFF), as fp8_round_pairs writes it: NaN keeps its sign (the hardware's
/// cvt gives the positive canonical NaN), Inf saturates to sign | maxcode.
template <bool E5M2> QCT_HD u32 fp8_code_of_bf16_special(u32 x, u32 mag) {
  constexpr FloatFmt F = E5M2 ? kE5M2() : kE4M3();
  return ((x >> 8) & 0x80u) | (mag == 0x7F80u ? F.maxcode : F.nancode);
}

/// Where bf16 code x is NaN or Inf, overwrites fp8 code i of the packed
/// words q (four codes per word, the lowest byte first) with
/// fp8_code_of_bf16_special; leaves it otherwise.
template <bool E5M2, int N>
QCT_HD void put_fp8_code_of_bf16_special(u32 (&q)[N], int i, u32 x) {
  const u32 mag = x & 0x7FFFu;
  if (mag >= 0x7F80u) {
    const u32 c = fp8_code_of_bf16_special<E5M2>(x, mag);
    const int sh = 8 * (i % 4);
    q[i / 4] = (q[i / 4] & ~(0xFFu << sh)) | (c << sh);
  }
}

/// bf16 -> fp8 (e4m3 or e5m2) with `pow2` scales on raw codes, NW words per
/// lane, L lanes per 128-element block. Returns false, touching nothing, if
/// the block holds a NaN or Inf (their amax and element rules take
/// quantize_hp), unless kSpecials: then it takes every block, with
/// quantize_hp's rules for those (the amax ignores NaN and counts Inf as
/// max_F; an element NaN or Inf becomes sign | nancode or sign | maxcode).
///
/// The scale exponent is pow2_exp_from_bits of amax's bf16 code widened to
/// fp32 (at most 120 for e4m3, 113 for e5m2; clamped at -127 for the
/// smallest amax). x * 2^-e is exact in fp32
/// except below 2^-126, where fp8 has only signed zeros, so the hardware's
/// cvt.rn.satfinite rounds once, as the contract says.
template <bool E5M2, int NW, int L, bool kSpecials = false>
QCT_HD bool fp8_pow2_bf16(const u32 (&w)[NW], u32 (&q)[NW / 2], u32 &scale) {
  static_assert(NW % 2 == 0, "fp8 codes are stored as whole words");
  // Only the amax needs |x|: doubling a word (a multiply, off the ALU pipe)
  // drops the high half's sign and puts the low half's sign in the high
  // half's bit 0, below everything that orders |x|, so halving the largest
  // doubled code gives amax exactly.
  u32 d[NW];
#pragma unroll
  for (int j = 0; j < NW; ++j)
    d[j] = w[j] * 2u;
  u32 amax = (bf16_block_amax<NW, L>(d) & 0xFFFFu) >> 1;
  bool special = false; // this lane holds a NaN or Inf (kSpecials)
  if constexpr (!kSpecials) {
    if (amax >= 0x7F80u)
      return false;
  } else if (!warp_all(amax < 0x7F80u)) {
    // A NaN or Inf in the warp (rare; warp-uniform for the shuffles): the
    // amax again with quantize_hp's rule (bf16_amax_operand).
#pragma unroll
    for (int j = 0; j < NW; ++j) {
      u32 m = 0;
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        u32 a = (w[j] >> (16 * h)) & 0x7FFFu;
        special |= a >= 0x7F80u;
        a = bf16_amax_operand(a, bf16_bits_of_fp8_max<E5M2>());
        m |= a << (16 * h);
      }
      d[j] = m;
    }
    amax = bf16_block_amax<NW, L>(d) & 0xFFFFu;
  }
  const int e = pow2_exp_from_bits<E5M2>(amax << 16);
  scale = pow2_f32_bits(e);
  const float f = bits_f32((u32)(127 - e) << 23); // 2^-e, normal
#pragma unroll
  for (int j = 0; j < NW; j += 2) {
    const u32 c0 = fp8x2_from_f32<E5M2>(bits_f32(w[j] << 16) * f,
                                        bits_f32(w[j] & 0xFFFF0000u) * f);
    const u32 c1 = fp8x2_from_f32<E5M2>(bits_f32(w[j + 1] << 16) * f,
                                        bits_f32(w[j + 1] & 0xFFFF0000u) * f);
    q[j / 2] = c0 | (c1 << 16);
  }
  if (kSpecials && special) {
#pragma unroll
    for (int i = 0; i < 2 * NW; ++i)
      put_fp8_code_of_bf16_special<E5M2>(
          q, i, (w[i / 2] >> (16 * (i % 2))) & 0xFFFFu);
  }
  return true;
}

//===----------------------------------------------------------------------===//
// fp8 sources on their raw codes (mxfp4 outputs)
//===----------------------------------------------------------------------===//
//
// An fp8 element (e4m3 or e5m2) times a power-of-two source scale 2^k, in an
// MX block whose scale is not clamped, gives y = x * 2^(127 - b) = e * 2^(2 -
// floor(log2 emax)) (floor; rceil one less when emax's fraction is above
// 1.5): k cancels, and each element's e2m1 code depends only on its own code
// and the block maximum's. The elements are widened to bf16 magnitude codes
// (an fp8 magnitude is a bf16 code shifted: e4m3 << 4 is e * 2^-120, e5m2
// << 5 is e * 2^-112, subnormals included), two per word, and rounded on the
// FMA pipe, two elements per bf16x2 fma, into bf16 values whose codes are the
// e2m1 codes shifted left by 6 (see mxfp4_from_fp8_codes).

/// The magnitudes of the four fp8 codes of word w as bf16 codes, elements 0
/// and 2 in `ev`, 1 and 3 in `od` (low half first). The masks drop the signs.
template <bool E5M2> QCT_HD void fp8_mags_bf16(u32 w, u32 &ev, u32 &od) {
  if constexpr (E5M2) {
    ev = (w * 32u) & 0x0FE00FE0u; // IMAD on the FMA pipe, then one LOP3
    od = (w >> 3) & 0x0FE00FE0u;
  } else {
    ev = (w * 16u) & 0x07F007F0u;
    od = (w >> 4) & 0x07F007F0u;
  }
}

/// fp8 (e4m3 / e5m2) codes with a power-of-two source scale into mxfp4
/// (floor or rceil) on raw codes: NW words (4 * NW elements) per lane, L
/// lanes per 32-element block; `sfield` is pow2_scale_field of the source
/// scale. Writes NW / 2 words of packed e2m1 codes (element 2i in the low
/// nibble of byte i) and the scale byte. Returns false (the outputs then
/// hold garbage) for a block it does not take: a NaN/Inf element, a bad source
/// scale, a scale byte that the MX rule would clamp, or a nonzero maximum whose
/// exponent field is below 5 (the only blocks where fp8 subnormals could round
/// to a nonzero code, so the fma never needs subnormal inputs).
///
/// With x the bf16 magnitude code of an element, E the block maximum's
/// exponent field (plus one for rceil above 1.5) and u = 2^-126, the scaling
/// S = 2^(3 - E) maps x to y * u, y the element's value in units of the MX
/// scale (y < 8). e2m1 rounds y on a grid of 0.5 below 2 and of
/// 2^(floor(log2 y) - 1) above, and scaled by u the rounded values are the
/// bf16 numbers whose codes are the e2m1 codes << 6 (0.5 u is the subnormal
/// 0x40, u the smallest normal 0x80, 6 u is 0x1C0). With B the code of y = 1
/// ((E - 2) << 7) and M = max(x, B) (a u16 max on codes), the addend
/// M2 = 64 * M * S (a code add) has a bf16 ulp equal to that grid at x, so
///   z = fma(x, S, M2) = M2 + round_grid(y * u),  d = fma(M2, -1, z)
/// give d = round_grid(y * u) exactly: z stays in M2's binade (M2 + y u <
/// 65 * 1.875 M S), M2 has no bits at or below the grid step (so ties go to
/// the even e2m1 code), and d is exact. d = 8 u (y >= 7) is clamped to 6 u,
/// the saturated maximum. fma.rn.bf16x2 supports subnormal results (PTX ISA);
/// d is one (0.5 u) for the code 1.
///
/// The signs are copied from the source bytes: packing the word of elements
/// (1, 3) * 64 + (0, 2) * 4 puts the four codes in the high and low nibbles
/// of bytes 1 and 3, where the sign bits s * 17 (s = w & 0x80808080) land at
/// the nibbles' bit 3; a prmt then keeps bytes 1 and 3 of two words.
template <bool SrcE5M2, bool Rceil, int NW, int L>
QCT_HD bool mxfp4_from_fp8_codes(const u32 (&w)[NW], u32 sfield,
                                 u32 (&out)[NW / 2], u32 &scale) {
  static_assert(NW % 2 == 0, "output words pair up source words");
  u32 ev[NW], od[NW];
#pragma unroll
  for (int j = 0; j < NW; ++j)
    fp8_mags_bf16<SrcE5M2>(w[j], ev[j], od[j]);
  u32 pair_max[NW];
#pragma unroll
  for (int j = 0; j < NW; ++j)
    pair_max[j] = vmax_u16x2(ev[j], od[j]);
  // the block maximum's bf16 magnitude code
  const u32 a = bf16_block_amax<NW, L>(pair_max) & 0xFFFFu;
  // The largest finite magnitude: e4m3 0x7E (0x7F is NaN), e5m2 0x7B (0x7C
  // Inf, above NaN).
  constexpr u32 amax_finite = SrcE5M2 ? 0x7Bu << 5 : 0x7Eu << 4;
  // Element values are e * 2^-120 (e4m3) or e * 2^-112 (e5m2) in bf16; the
  // scale byte is floor(log2 amax) + k - 2 + 127.
  constexpr int bias_shift = SrcE5M2 ? 112 : 120;
  const int E = (int)(a >> 7) + (Rceil && (a & 0x7Fu) > 0x40u ? 1 : 0);
  const int b = E + (int)sfield + bias_shift - 129;
  // Decided without a branch: the element work below is cheap, harmless for a
  // declined block, and straight-line code schedules better.
  const bool ok =
      sfield <= 254 &&
      (a == 0 || (a - (5u << 7) <= amax_finite - (5u << 7) && (u32)b <= 254u));
  // An all-zero block (scale byte 0, signed zeros) takes any constants: use
  // those of E = 5.
  const int Ee = a != 0 ? E : 5;
  const u32 bb = (u32)(Ee - 2) * 0x00800080u;     // B in both halves
  const u32 s = (u32)(130 - Ee) * 0x00800080u;    // S = 2^(3 - E)
  const u32 c = (u32)((9 - Ee) * 128) * 0x10001u; // M2 - M: * 64 * S
  u32 x[NW];
#pragma unroll
  for (int j = 0; j < NW; ++j) {
    u32 dd[2];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const u32 v = h ? od[j] : ev[j];
      // Each half of M2 = M + c is in [0x380, 0x500) (exponent field 7..9),
      // so the word add carries nothing between the halves.
      const u32 m2 = vmax_u16x2(v, bb) + c;
      const u32 z = bf16x2_fma_rn(v, s, m2);
      dd[h] = vmin_u16x2(bf16x2_fma_rn(m2, 0xBF80BF80u, z), 0x01C001C0u);
    }
    x[j] = dd[1] * 64u + dd[0] * 4u + (w[j] & 0x80808080u) * 17u;
  }
#pragma unroll
  for (int i = 0; i < NW / 2; ++i)
    out[i] = prmt(x[2 * i], x[2 * i + 1], 0x7531);
  scale = a != 0 ? (u32)b : 0u;
  return ok;
}

/// From exact decoded values of a quantized source (double), all rounding in
/// integers (encode/div_f32_bits), so no double rounding anywhere.
template <typename O, int N, int L>
QCT_HD QBlock<N> quantize_exact(const double (&v)[N]) {
  QBlock<N> r;
  r.scale = 0;
  constexpr FloatFmt F = O::T::elem();
  if constexpr (O::T::hp) {
#pragma unroll
    for (int i = 0; i < N; ++i)
      r.q[i] = encode(F, v[i]);
  } else if constexpr (O::T::mx) {
    u64 amax = 0;
#pragma unroll
    for (int i = 0; i < N; ++i) {
      const u64 a = f64_bits(v[i]) & 0x7FFFFFFFFFFFFFFFull;
      amax = a > amax ? a : amax;
    }
    amax = group_max<L>(amax);
    if (amax >= 0x7FF0000000000000ull) {
      r.scale = 0xFF;
#pragma unroll
      for (int i = 0; i < N; ++i)
        r.q[i] = 0;
      return r;
    }
    const Parts p = parts_f64(bits_f64(amax));
    const u32 b = mx_scale_byte<O::scale == Scale::rceil>(F, p.m, p.E);
    r.scale = b;
#pragma unroll
    for (int i = 0; i < N; ++i)
      r.q[i] = encode_scaled<O::fmt>(v[i], (int)b - 127);
  } else {
    const u64 maxf = f64_bits(7.0 * pow2_f64(F.emax - 2));
    u64 amax = 0;
#pragma unroll
    for (int i = 0; i < N; ++i) {
      u64 a = f64_bits(v[i]) & 0x7FFFFFFFFFFFFFFFull;
      a = a > 0x7FF0000000000000ull ? 0ull
                                    : (a == 0x7FF0000000000000ull ? maxf : a);
      amax = a > amax ? a : amax;
    }
    amax = group_max<L>(amax);
    const Parts pa = parts_f64(bits_f64(amax));
    if constexpr (O::scale == Scale::pow2) {
      const int e = pow2_scale_exp(F, pa.m, pa.E);
      r.scale = pow2_f32_bits(e);
#pragma unroll
      for (int i = 0; i < N; ++i)
        r.q[i] = encode_scaled<O::fmt>(v[i], e);
    } else {
      u32 s = amax == 0 ? 0u : div_f32_bits(false, pa.m, pa.E, 7, F.emax - 2);
      if (s == 0)
        s = 0x3F800000u; // amax == 0 or the quotient underflowed
      else if (s == 0x7F800000u)
        s = 0x7F7FFFFFu; // beyond fp32 (quantized sources only): FLT_MAX

      r.scale = s;
#pragma unroll
      for (int i = 0; i < N; ++i)
        r.q[i] = encode_quotient<O::fmt>(v[i], s);
    }
  }
  return r;
}

/// The direct aligned conversion from an MX source: b[i] is the source scale
/// byte of element i (0xFF: NaN block), or -1 for an absent element (outside
/// a partial column block), which neither counts for bmax nor is converted.
template <typename O, Fmt SF, int N, int L>
QCT_HD QBlock<N> quantize_aligned(const u32 (&code)[N], const int (&b)[N]) {
  QBlock<N> r;
  constexpr FloatFmt F = O::T::elem();
  constexpr int emax_src = FmtTraits<SF>::elem().emax;
  int bmax = -1;
#pragma unroll
  for (int i = 0; i < N; ++i) {
    const int bi = b[i] <= 254 ? b[i] : -1;
    bmax = bi > bmax ? bi : bmax;
  }
  bmax = group_max<L>(bmax);
  const int se = aligned_scale_exp(bmax, emax_src, F.emax);
  r.scale = pow2_f32_bits(se);
  float y[N];
#pragma unroll
  for (int i = 0; i < N; ++i) {
    // Exact element value times 2^(b_j - 127 - se), which is
    // 2^(emax_F - emax_src - gap) unless se was clamped: an exponent add.
    const u32 eb = elem_f32_bits<SF>(code[i]);
    const bool special = (eb & 0x7FFFFFFFu) >= 0x7F800000u;
    const int k = b[i] - 127 - se;
    y[i] = bits_f32(special ? eb : scale_bits_exp(eb, k));
  }
  fp8_round_pairs<O::e5m2>(y, y, r.q);
#pragma unroll
  for (int i = 0; i < N; ++i) {
    if (b[i] == 0xFF)
      r.q[i] = 0x7F; // elements of a NaN source block: positive NaN
    if (b[i] < 0)
      r.q[i] = 0;
  }
  return r;
}

//===----------------------------------------------------------------------===//
// Packing codes into words
//===----------------------------------------------------------------------===//

/// N codes of OB bits each, element 0 in the lowest bits (mxfp4: element 2i in
/// bits 0..3 of byte i).
template <int OB, int N> struct Packed {
  static constexpr int bytes = N * OB / 8;
  static constexpr int words = bytes < 4 ? 1 : bytes / 4;
  u32 w[words];
};

template <int OB, int N> QCT_HD Packed<OB, N> pack_codes(const u32 (&q)[N]) {
  Packed<OB, N> p;
#pragma unroll
  for (int i = 0; i < Packed<OB, N>::words; ++i)
    p.w[i] = 0;
#pragma unroll
  for (int i = 0; i < N; ++i)
    p.w[(i * OB) / 32] |= (q[i] & (OB == 32 ? 0xFFFFFFFFu : ((1u << OB) - 1)))
                          << ((i * OB) % 32);
  return p;
}

} // namespace dev
} // namespace qct

#endif // QCT_DEVICE_QUANT_CUH
