//===- qct/device/row_kernel.cuh - The row family -------------------------===//
//
// Every output is row-layout (blocks along K), so no data moves between
// threads except block maxima: the source is a stream of 16-byte vectors,
// thread i of a step converts vectors base + u*THREADS + i for u < UNROLL (all
// loads issued before the first use), and the lanes sharing an output block
// (4 for a 32-element block of bf16, 16 for a 1x128 block) reduce through
// shuffles. Since K is a multiple of every block, the linear vector index
// gives every address: element lin = i*VEC, scale lin/B (row_major).
//
//===----------------------------------------------------------------------===//
#ifndef QCT_DEVICE_ROW_KERNEL_CUH
#define QCT_DEVICE_ROW_KERNEL_CUH

#include "qct/device/memory.cuh"
#include "qct/device/ragged.cuh"

namespace qct {
namespace dev {

/// One 16-byte source vector and the scale of its block.
struct SrcVec {
  V4 raw;
  u32 scale; // MX e8m0 byte, FP8 f32 bits, 0 for high-precision sources
};

/// Code i of a raw vector of EB-bit elements (i a compile-time constant after
/// unrolling, so the words stay in registers).
template <int EB> QCT_DEV u32 code_at(const V4 &v, int i) {
  if constexpr (EB == 32)
    return v.w[i];
  else
    return (v.w[(i * EB) / 32] >> ((i * EB) % 32)) & ((1u << EB) - 1);
}

/// Loads source vector vi and its scale (an absent one if !valid). With
/// kSharedScales (the tile family, whose CTAs of neighbouring K tiles read
/// the same scale sectors) MX scale bytes take load_shared_scale.
template <typename Cfg, bool kSharedScales = false>
QCT_DEV SrcVec load_src_vec(const qct_kernel_args &args, i64 vi, bool valid) {
  using S = typename Cfg::src;
  SrcVec s;
  s.scale = 0;
  if (!valid) {
    s.raw = {{0, 0, 0, 0}};
    if constexpr (S::T::mx)
      s.scale = 127;
    else if constexpr (S::T::fp8)
      s.scale = 0x3F800000u;
    return s;
  }
  s.raw = load16(static_cast<const u8 *>(args.src) + vi * 16);
  const i64 lin = vi * S::vec;
  if constexpr (S::T::mx) {
    const u8 *p =
        static_cast<const u8 *>(args.src_scales) + div_nonneg<32>(lin);
    if constexpr (kSharedScales)
      s.scale = load_shared_scale(p);
    else
      s.scale = (u32)__ldg(p);
  } else if constexpr (S::T::fp8)
    s.scale = __ldg(static_cast<const u32 *>(args.src_scales) +
                    div_nonneg<128>(lin));
  return s;
}

/// A row output's codes and block scale for one source vector.
template <int OB, int N> struct RowCodes {
  Packed<OB, N> pk;
  u32 scale;
};

/// The general path of row_output: decode each element (or take its code),
/// then the output's quantizer. Every lane of the warp calls it together
/// (the quantizers shuffle).
template <typename Cfg, int OI>
QCT_DEV RowCodes<Cfg::template out<OI>::T::elem_bits, Cfg::src::vec>
general_row_codes(const SrcVec &sv) {
  using S = typename Cfg::src;
  using O = typename Cfg::template out<OI>;
  constexpr int N = S::vec;
  constexpr int EB = S::T::elem_bits;
  constexpr int OB = O::T::elem_bits;
  constexpr int L = O::block ? O::block / N : 1;
  constexpr ValuePath path = Cfg::template path_of<O>();
  QBlock<N> qb;
  if constexpr (path == ValuePath::hp) {
    float v[N];
#pragma unroll
    for (int i = 0; i < N; ++i) {
      if constexpr (S::quantized)
        v[i] = bf16_value<S::fmt>(code_at<EB>(sv.raw, i), sv.scale);
      else
        v[i] = hp_value<S::fmt>(code_at<EB>(sv.raw, i));
    }
    qb = quantize_hp<O, N, L>(v);
  } else if constexpr (path == ValuePath::exact && O::T::hp) {
    // Decoding (bf16/fp16/fp32 output): element by element, no value array.
    // e2m1 * 2^(b-127) with 2 <= b <= 252 is a normal fp32 with a 2-bit
    // significand: exact in bf16 and fp32, an exponent add.
    const bool fast = S::fmt == Fmt::mxfp4 && O::fmt != Fmt::fp16 &&
                      sv.scale >= 2 && sv.scale <= 252;
#pragma unroll
    for (int i = 0; i < N; ++i) {
      const u32 c = code_at<EB>(sv.raw, i);
      if (fast) {
        const u32 b = e2m1_f32_bits(c);
        const u32 f = (b & 0x7FFFFFFFu) ? b + ((sv.scale - 127) << 23) : b;
        qb.q[i] = O::fmt == Fmt::bf16 ? f >> 16 : f;
      } else {
        qb.q[i] = encode_exact_value<S::fmt, O::fmt>(c, sv.scale);
      }
    }
  } else if constexpr (path == ValuePath::exact) {
    // With a power-of-two source scale (every MX block but extreme ones;
    // FP8 blocks with pow2 scales) the decoded values are exact fp32, and
    // the fp32 quantizer gives the contract's bits on exact values: no
    // doubles. The branch is warp-uniform because the quantizers shuffle.
    int k = 0;
    if (warp_all(pow2_source_scale<S::fmt>(sv.scale, k))) {
      float v[N];
#pragma unroll
      for (int i = 0; i < N; ++i)
        v[i] = pow2_scaled_value<S::fmt>(code_at<EB>(sv.raw, i), k);
      qb = quantize_hp<O, N, L>(v);
    } else {
      double v[N];
#pragma unroll
      for (int i = 0; i < N; ++i)
        v[i] = exact_value<S::fmt>(code_at<EB>(sv.raw, i), sv.scale);
      qb = quantize_exact<O, N, L>(v);
    }
  } else {
    u32 c[N];
    int b[N];
#pragma unroll
    for (int i = 0; i < N; ++i) {
      c[i] = code_at<EB>(sv.raw, i);
      b[i] = (int)sv.scale;
    }
    qb = quantize_aligned<O, S::fmt, N, L>(c, b);
  }
  return {pack_codes<OB, N>(qb.q), qb.scale};
}

/// general_row_codes as a call: compiled once per kernel instead of once
/// per inlined vector.
template <typename Cfg, int OI>
QCT_DEV_OUTLINE RowCodes<Cfg::template out<OI>::T::elem_bits, Cfg::src::vec>
general_row_codes_outlined(SrcVec sv) {
  return general_row_codes<Cfg, OI>(sv);
}

/// Writes one row-layout output for the VEC elements starting at element
/// `lin` (= row r, column lin - r*K) of the source. All lanes call this
/// together (the block reduction); `valid` gates the stores.
/// Wide per-lane results (over 16 bytes) go out through store_warp_rows
/// when Coop (the row family: a warp's lanes hold consecutive vectors and all
/// reach this call); the tile family stores them directly.
///
/// KnownRow (the tile family): `row` is the row of element lin, which spares
/// mn_major scales a 64-bit division by K per vector.
template <typename Cfg, int OI, int CoopThreads = 0, bool KnownRow = false>
QCT_DEV void row_output(const qct_kernel_args &args, const SrcVec &sv, i64 lin,
                        bool valid, i64 M, i64 K, i64 row = -1) {
  using S = typename Cfg::src;
  using O = typename Cfg::template out<OI>;
  constexpr int N = S::vec;
  constexpr int EB = S::T::elem_bits;
  constexpr int OB = O::T::elem_bits;
  constexpr int L = O::block ? O::block / N : 1;
  constexpr ValuePath path = Cfg::template path_of<O>();
  static_assert(O::block == 0 || O::block % N == 0,
                "a block spans whole source vectors");
  if constexpr (path == ValuePath::exact && S::fmt == Fmt::mxfp4 &&
                O::fmt == Fmt::bf16) {
    // Decoding mxfp4 to bf16: a thread's 32 codes are one source block.
    if (CoopThreads == 0 && !valid)
      return;
    u32 w[16];
    mxfp4_block_to_bf16_codes(sv.raw.w, sv.scale, w);
    store_lane_row<64, CoopThreads>(static_cast<u8 *>(args.out[OI]) + lin * 2,
                                    w, valid);
    return;
  }
  Packed<OB, N> pk;
  u32 scale = 0;
  // bf16 -> mxfp4 floor and bf16 -> fp8 pow2 on the raw codes
  // (quant.cuh); a warp with a block they do not take runs the general path.
  constexpr bool fast_mx = S::fmt == Fmt::bf16 && path == ValuePath::hp &&
                           O::fmt == Fmt::mxfp4 && O::scale == Scale::floor;
  constexpr bool fast_fp8 = S::fmt == Fmt::bf16 && path == ValuePath::hp &&
                            O::T::fp8 && O::scale == Scale::pow2;
  // The unfused mxfp4 -> (bf16) -> fp8 pow2 conversion on the raw codes: the
  // block decoded to bf16 codes as the mxfp4 -> bf16 kernel stores them,
  // then bf16 -> fp8's path on those, NaN and Inf included, so bit for bit
  // the two kernels in a row, with no general path (which held 32 floats
  // per lane: 127 registers, ALU-bound at 18% of copy bandwidth).
  constexpr bool fast_fp8_via_bf16 = S::fmt == Fmt::mxfp4 &&
                                     path == ValuePath::hp && O::T::fp8 &&
                                     O::scale == Scale::pow2;
  // fp8 sources (1x128 or MX) with power-of-two scales -> mxfp4 on the raw
  // codes (quant.cuh, "fp8 sources on their raw codes").
  constexpr bool fast_fp8_src = EB == 8 && S::quantized &&
                                path == ValuePath::exact &&
                                O::fmt == Fmt::mxfp4;
  // The paper's direct FP4 -> FP8 row conversion: a thread's 32 codes are
  // one source block, converted through a byte table (aligned_e2m1_block).
  constexpr bool aligned_mx =
      path == ValuePath::aligned && S::fmt == Fmt::mxfp4;
  bool done = false;
  if constexpr (aligned_mx) {
    const int b = (int)sv.scale;
    const int se = aligned_scale_exp(group_max<L>(b <= 254 ? b : -1), 2,
                                     O::T::elem().emax);
    aligned_e2m1_block<O::e5m2>(sv.raw.w, sv.scale, se, pk.w);
    scale = pow2_f32_bits(se);
  } else if constexpr (fast_mx) {
    u32 nib[4];
    done = warp_all(mxfp4_floor_bf16<4, L>(sv.raw.w, nib, scale));
    pk.w[0] = pack_e2m1_nibbles(nib[0], nib[1], nib[2], nib[3]);
  } else if constexpr (fast_fp8) {
    done = warp_all(fp8_pow2_bf16<O::e5m2, 4, L>(sv.raw.w, pk.w, scale));
  } else if constexpr (fast_fp8_via_bf16) {
    u32 w[16];
    mxfp4_block_to_bf16_codes(sv.raw.w, sv.scale, w);
    fp8_pow2_bf16<O::e5m2, 16, L, true>(w, pk.w, scale);
  } else if constexpr (fast_fp8_src) {
    done =
        warp_all(mxfp4_from_fp8_codes<S::e5m2, O::scale == Scale::rceil, 4, L>(
            sv.raw.w, pow2_scale_field<S::fmt>(sv.scale), pk.w, scale));
  }
  if constexpr (!aligned_mx && !fast_fp8_via_bf16) {
    if (!done) {
      // Outlined where a fast path exists: that path takes nearly every
      // block, and the general one, inlined once per vector a thread holds
      // (QCT_UNROLL, or 8 per tile), was most of NVRTC's time (fp8 -> mxfp4
      // row at QCT_UNROLL 4 on the H200: 1.2-1.6 s cold inlined, 0.3 s
      // outlined; docs/performance.md).
      RowCodes<OB, N> rc;
      if constexpr (fast_mx || fast_fp8 || fast_fp8_src)
        rc = general_row_codes_outlined<Cfg, OI>(sv);
      else
        rc = general_row_codes<Cfg, OI>(sv);
      pk = rc.pk;
      scale = rc.scale;
    }
  }
  constexpr int PB = Packed<OB, N>::bytes;
  u8 *out = static_cast<u8 *>(args.out[OI]);
  const i64 ob = OB % 8 == 0 ? lin * (OB / 8) : div_nonneg<8>(lin * OB);
  store_lane_row<PB, CoopThreads>(out + ob, pk.w, valid);
  if (!valid)
    return;
  if constexpr (O::has_scales) {
    if ((threadIdx.x & (L - 1)) != 0)
      return;
    constexpr int B = O::block;
    i64 idx;
    i64 r = 0, j = 0, rpad = 0;
    if constexpr (O::scale_layout == ScaleLayout::row_major) {
      idx = div_nonneg<B>(lin);
    } else {
      if constexpr (KnownRow)
        r = row;
      else
        r = lin / K;
      j = div_nonneg<B>(lin - r * K);
      rpad = (M + 3) / 4 * 4;
      idx = j * rpad + r;
    }
    constexpr u32 pad = O::T::mx ? 127u : 0x3F800000u;
    // The tile family writes a token row's row_major scales of one K tile:
    // part of a sector the next K tiles' CTAs complete (memory.cuh). The row
    // family's CTAs cover whole rows, so their sectors are whole.
    constexpr bool partial =
        Cfg::any_col && O::scale_layout == ScaleLayout::row_major;
    store_block_scale<O::T::mx, partial>(args.out_scales[OI], idx, scale);
    if (O::scale_layout == ScaleLayout::mn_major && r == M - 1)
      for (i64 rr = M; rr < rpad; ++rr)
        store_block_scale<O::T::mx, false>(args.out_scales[OI], j * rpad + rr,
                                           pad);
  }
}

template <typename Cfg, int CoopThreads = 0, bool KnownRow = false>
QCT_DEV void row_outputs(const qct_kernel_args &args, const SrcVec &sv, i64 lin,
                         bool valid, i64 M, i64 K, i64 row = -1) {
  static_for<0, Cfg::num_outputs>([&](auto oi) {
    using O = typename Cfg::template out<decltype(oi)::value>;
    if constexpr (!O::col)
      row_output<Cfg, decltype(oi)::value, CoopThreads, KnownRow>(
          args, sv, lin, valid, M, K, row);
  });
}

/// The row-family kernel body. Launch: block (THREADS), grid
/// (max(cdiv(M*K, VEC*THREADS*UNROLL), 1)), no dynamic shared memory.
template <typename Cfg, int THREADS, int UNROLL>
QCT_DEV void row_kernel(const qct_kernel_args &args) {
  using S = typename Cfg::src;
  static_assert(!Cfg::any_col, "a col output needs the tile family");
  static_assert(THREADS == 128 || THREADS == 256 || THREADS == 512,
                "QCT_THREADS: 128, 256, 512");
  static_assert(UNROLL == 1 || UNROLL == 2 || UNROLL == 4,
                "QCT_UNROLL: 1, 2, 4");
  constexpr int N = S::vec;
  const i64 K = Cfg::static_k ? Cfg::static_k : args.K;
  const i64 M = args.M;
  if constexpr (Cfg::ragged::enabled) {
    // Row outputs ignore the groups; one CTA still checks the offsets and
    // writes the padded offsets the spec asks for.
    if (blockIdx.x == 0)
      scan_groups<typename Cfg::ragged, THREADS>(args, M);
  }
  const i64 nvec = M * K / N;
  const i64 base = (i64)blockIdx.x * (THREADS * UNROLL) + threadIdx.x;
  SrcVec sv[UNROLL];
#pragma unroll
  for (int u = 0; u < UNROLL; ++u) {
    const i64 vi = base + (i64)u * THREADS;
    sv[u] = load_src_vec<Cfg>(args, vi, vi < nvec);
  }
#pragma unroll
  for (int u = 0; u < UNROLL; ++u) {
    const i64 vi = base + (i64)u * THREADS;
    row_outputs<Cfg, THREADS>(args, sv[u], vi * N, vi < nvec, M, K);
  }
}

} // namespace dev
} // namespace qct

#endif // QCT_DEVICE_ROW_KERNEL_CUH
