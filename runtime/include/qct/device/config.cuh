//===- qct/device/config.cuh - The vocabulary generated kernels are built from
//-===//
//
// Emitted code names its spec with these types (docs/device-library.md):
//   using Config = KernelConfig<Src<Fmt::mxfp4>, Ragged<int, 128, true>, 0,
//                               Out<Fmt::fp8_e4m3, Layout::col, 128,
//                               Scale::aligned>>;
// The traits below derive everything else (vector widths, block sizes, which
// value path an output takes) at compile time, and static_asserts reject
// combinations the numerics contract does not define.
//
//===----------------------------------------------------------------------===//
#ifndef QCT_DEVICE_CONFIG_CUH
#define QCT_DEVICE_CONFIG_CUH

#include "qct/device/codecs.cuh"

namespace qct {
namespace dev {

enum class Fmt {
  bf16,
  fp16,
  fp32,
  mxfp4,
  mxfp8_e4m3,
  mxfp8_e5m2,
  fp8_e4m3,
  fp8_e5m2
};
enum class Layout { row, col };
enum class Scale { none, floor, rceil, amax, pow2, aligned };
enum class ScaleLayout { row_major, mn_major };
enum class Path { direct, via_bf16 };

/// Compile-time facts about a format.
template <Fmt F> struct FmtTraits;
template <> struct FmtTraits<Fmt::bf16> {
  static constexpr int elem_bits = 16, block = 0;
  static constexpr bool hp = true, mx = false, fp8 = false;
  static QCT_HD constexpr FloatFmt elem() { return kBF16(); }
};
template <> struct FmtTraits<Fmt::fp16> {
  static constexpr int elem_bits = 16, block = 0;
  static constexpr bool hp = true, mx = false, fp8 = false;
  static QCT_HD constexpr FloatFmt elem() { return kFP16(); }
};
template <> struct FmtTraits<Fmt::fp32> {
  static constexpr int elem_bits = 32, block = 0;
  static constexpr bool hp = true, mx = false, fp8 = false;
  static QCT_HD constexpr FloatFmt elem() { return kF32(); }
};
template <> struct FmtTraits<Fmt::mxfp4> {
  static constexpr int elem_bits = 4, block = 32;
  static constexpr bool hp = false, mx = true, fp8 = false;
  static QCT_HD constexpr FloatFmt elem() { return kE2M1(); }
};
template <> struct FmtTraits<Fmt::mxfp8_e4m3> {
  static constexpr int elem_bits = 8, block = 32;
  static constexpr bool hp = false, mx = true, fp8 = false;
  static QCT_HD constexpr FloatFmt elem() { return kE4M3(); }
};
template <> struct FmtTraits<Fmt::mxfp8_e5m2> {
  static constexpr int elem_bits = 8, block = 32;
  static constexpr bool hp = false, mx = true, fp8 = false;
  static QCT_HD constexpr FloatFmt elem() { return kE5M2(); }
};
template <> struct FmtTraits<Fmt::fp8_e4m3> {
  static constexpr int elem_bits = 8, block = 128;
  static constexpr bool hp = false, mx = false, fp8 = true;
  static QCT_HD constexpr FloatFmt elem() { return kE4M3(); }
};
template <> struct FmtTraits<Fmt::fp8_e5m2> {
  static constexpr int elem_bits = 8, block = 128;
  static constexpr bool hp = false, mx = false, fp8 = true;
  static QCT_HD constexpr FloatFmt elem() { return kE5M2(); }
};

/// The source tensor, [M, K] row-major; MX sources carry e8m0 scales
/// [M, K/32], FP8 sources f32 scale_inv [M, K/128] in args.src_scales.
template <Fmt F> struct Src {
  static constexpr Fmt fmt = F;
  using T = FmtTraits<F>;
  /// Elements in one 16-byte vector: the unit every load moves.
  static constexpr int vec = 128 / T::elem_bits;
  static constexpr int block = T::block;
  static constexpr bool quantized = !T::hp;
  static constexpr bool e5m2 = F == Fmt::mxfp8_e5m2 || F == Fmt::fp8_e5m2;
};

/// How an output's values are computed from the source.
enum class ValuePath {
  hp,    ///< fp32 values: a high-precision source, or a quantized one via bf16
  exact, ///< exact decoded values of a quantized source (double)
  aligned, ///< the direct bit-level MX -> FP8 conversion (no element values)
};

template <Fmt F, Layout L, int Block, Scale S,
          ScaleLayout SL = ScaleLayout::row_major, Path P = Path::direct>
struct Out {
  static constexpr Fmt fmt = F;
  static constexpr Layout layout = L;
  static constexpr int block = Block;
  static constexpr Scale scale = S;
  static constexpr ScaleLayout scale_layout = SL;
  static constexpr Path path = P;
  using T = FmtTraits<F>;
  static constexpr bool col = L == Layout::col;
  static constexpr bool has_scales = !T::hp;
  static constexpr bool e5m2 = F == Fmt::mxfp8_e5m2 || F == Fmt::fp8_e5m2;
  static_assert(Block == T::block,
                "block must be 32 for MX, 128 for FP8, 0 for bf16/fp16/fp32");
  static_assert(!T::mx || S == Scale::floor || S == Scale::rceil,
                "MX outputs take scale floor or rceil");
  static_assert(!T::fp8 || S == Scale::amax || S == Scale::pow2 ||
                    S == Scale::aligned,
                "FP8 outputs take scale amax, pow2 or aligned");
  static_assert(!T::hp || S == Scale::none,
                "bf16/fp16/fp32 outputs have no scale");
};

struct NotRagged {
  static constexpr bool enabled = false;
  static constexpr long long pad = 1;
  static constexpr bool write_padded = false;
  static constexpr bool zero_tail = true;
  using offset_t = long long;
};

/// Ragged groups along M: OffsetT is int (int32) or long long (int64).
/// ZeroTail false ("capacity_tail": "untouched"): the col outputs' capacity
/// tail, the data columns at or past p[G] and the scale columns past the
/// groups' own, is not written (docs/kernel-abi.md).
template <typename OffsetT, long long PadTo, bool WritePaddedOffsets,
          bool ZeroTail = true>
struct Ragged {
  static constexpr bool enabled = true;
  static constexpr long long pad = PadTo;
  static constexpr bool write_padded = WritePaddedOffsets;
  static constexpr bool zero_tail = ZeroTail;
  using offset_t = OffsetT;
  static_assert(PadTo >= 1, "pad_groups_to must be >= 1");
  static_assert(sizeof(OffsetT) == 4 || sizeof(OffsetT) == 8,
                "offsets are int32 or int64");
};

/// Compile-time type list access (no <tuple> under NVRTC).
template <int I, typename... Ts> struct Nth;
template <typename T0, typename... Ts> struct Nth<0, T0, Ts...> {
  using type = T0;
};
template <int I, typename T0, typename... Ts> struct Nth<I, T0, Ts...> {
  using type = typename Nth<I - 1, Ts...>::type;
};

template <typename Source, typename RaggedT, long long StaticK,
          typename... Outs>
struct KernelConfig {
  using src = Source;
  using ragged = RaggedT;
  static constexpr long long static_k = StaticK;
  static constexpr int num_outputs = sizeof...(Outs);
  template <int I> using out = typename Nth<I, Outs...>::type;
  static constexpr bool any_col = (false || ... || Outs::col);
  static constexpr bool any_row = (false || ... || !Outs::col);
  /// Some col output has row_major block scales. (A function: a new static
  /// constexpr member would be emitted as a device global into every
  /// kernel's module and change every cubin.)
  static constexpr bool any_row_major_col() {
    return (false || ... ||
            (Outs::col && Outs::scale_layout == ScaleLayout::row_major));
  }
  /// Largest block of any row output (the tile family needs TILE_K >= it).
  static constexpr int max_row_block = [] {
    int m = 0;
    ((m = (!Outs::col && Outs::block > m) ? Outs::block : m), ...);
    return m;
  }();
  static_assert(sizeof...(Outs) >= 1 && sizeof...(Outs) <= 3, "1 to 3 outputs");
  static_assert((true && ... &&
                 (Outs::scale != Scale::aligned || Source::T::mx)),
                "scale aligned needs an MX source");
  static_assert((true && ... &&
                 (Outs::scale != Scale::aligned || Outs::path == Path::direct)),
                "scale aligned is the direct conversion (fuse true)");

  /// Which value path output O takes from this source.
  template <typename O> QCT_HD static constexpr ValuePath path_of() {
    if (!Source::quantized || O::path == Path::via_bf16)
      return ValuePath::hp;
    if (O::scale == Scale::aligned)
      return ValuePath::aligned;
    return ValuePath::exact;
  }
  static constexpr bool needs_hp =
      (false || ... || (path_of<Outs>() == ValuePath::hp));
  static constexpr bool needs_exact =
      (false || ... || (path_of<Outs>() == ValuePath::exact));
};

} // namespace dev
} // namespace qct

#endif // QCT_DEVICE_CONFIG_CUH
