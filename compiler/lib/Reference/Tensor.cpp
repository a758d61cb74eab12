//===- Tensor.cpp - Whole-tensor conversions of the reference -------------===//
//
// Plan first (validate every argument, size every buffer, place every ragged
// group), write second: nothing is stored until the whole plan is known to be
// in bounds. The work is straight loops over plain arrays: a row output
// decodes one source row at a time; a col output gathers the raw codes of a
// panel of kTile features for all M tokens into a small transposed buffer,
// then decodes and writes one feature at a time, so the source is read once
// and the quantizer's lines are sequential.
//
//===----------------------------------------------------------------------===//

#include "qct/Reference/Tensor.h"

#include "qct/Reference/Block.h"

#include <algorithm>
#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

namespace qct::ref {

namespace {

constexpr int64_t kMaxExtent = int64_t(1) << 50;
constexpr int64_t kMaxElements = int64_t(1) << 56;
constexpr int64_t kTile = 32; // features per col panel

std::string format(const char *fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return buf;
}

const char *formatName(int f) {
  static const char *const names[] = {"bf16",     "fp16",       "fp32",
                                      "mxfp4",    "mxfp8_e4m3", "mxfp8_e5m2",
                                      "fp8_e4m3", "fp8_e5m2"};
  return (f >= 0 && f <= QCT_REF_FP8_E5M2) ? names[f] : "?";
}

const char *scaleName(int s) {
  static const char *const names[] = {"none", "floor", "rceil",
                                      "amax", "pow2",  "aligned"};
  return (s >= 0 && s <= QCT_REF_SCALE_ALIGNED) ? names[s] : "?";
}

bool isMx(int f) {
  return f == QCT_REF_MXFP4 || f == QCT_REF_MXFP8_E4M3 ||
         f == QCT_REF_MXFP8_E5M2;
}
bool isFp8(int f) { return f == QCT_REF_FP8_E4M3 || f == QCT_REF_FP8_E5M2; }
bool isIeee(int f) { return f >= QCT_REF_BF16 && f <= QCT_REF_FP32; }
int64_t blockOf(int f) { return isMx(f) ? 32 : isFp8(f) ? 128 : 0; }

const FloatFormat &elemOf(int f) {
  switch (f) {
  case QCT_REF_BF16:
    return kBF16;
  case QCT_REF_FP16:
    return kFP16;
  case QCT_REF_FP32:
    return kFP32;
  case QCT_REF_MXFP4:
    return kE2M1;
  case QCT_REF_MXFP8_E4M3:
  case QCT_REF_FP8_E4M3:
    return kE4M3;
  default:
    return kE5M2;
  }
}

/// Bytes of one output element (mxfp4 is handled by nibbles, reported as 1).
int64_t elemBytes(int f) {
  return f == QCT_REF_FP32                          ? 4
         : (f == QCT_REF_BF16 || f == QCT_REF_FP16) ? 2
                                                    : 1;
}

int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// A run of source rows placed into a col output row: tokens
/// [srcStart, srcStart + n) go to columns [dstCol, dstCol + n), then padded -
/// n zero columns; its blocks use scale columns from scaleCol on.
struct Group {
  int64_t srcStart, n, dstCol, padded, scaleCol;
};

struct Plan {
  int64_t B = 0; // block size, 0 for bf16/fp16/fp32 outputs
  bool col = false;
  int64_t lines = 0;     // output data rows: M (row) or K (col)
  int64_t lineLen = 0;   // elements per output row: K, M, or C (ragged col)
  int64_t rowBytes = 0;  // bytes per output data row
  int64_t scaleCols = 0; // logical row_major scale array [lines, scaleCols]
  int64_t scaleLd = 0;   // mn_major: rup(lines, 4)
  // The prefix of each output row, and of the scale columns, that is written:
  // all of it, or up to the capacity tail when that is left untouched.
  int64_t writtenRowBytes = 0, writtenScaleCols = 0;
  bool mnMajor = false;
  size_t dataBytes = 0, scalesBytes = 0;
  std::vector<Group> groups;
  std::vector<int64_t> padded; // p[0..G] when ragged
};

int64_t offsetAt(const qct_ref_ragged &r, int64_t i) {
  return r.offsets_i64 ? static_cast<const int64_t *>(r.offsets)[i]
                       : int64_t(static_cast<const int32_t *>(r.offsets)[i]);
}

std::string plan(const qct_ref_source &src, const qct_ref_output &out,
                 const qct_ref_ragged *ragged, Plan &p) {
  if (src.format < QCT_REF_BF16 || src.format > QCT_REF_FP8_E5M2)
    return format("source.format: %d is not a qct_ref_format", src.format);
  if (out.format < QCT_REF_BF16 || out.format > QCT_REF_FP8_E5M2)
    return format("output.format: %d is not a qct_ref_format", out.format);
  if (out.layout != QCT_REF_ROW && out.layout != QCT_REF_COL)
    return format("output.layout: %d is not row (0) or col (1)", out.layout);
  if (out.scale < QCT_REF_SCALE_NONE || out.scale > QCT_REF_SCALE_ALIGNED)
    return format("output.scale: %d is not a qct_ref_scale", out.scale);
  if (out.scale_layout != QCT_REF_ROW_MAJOR &&
      out.scale_layout != QCT_REF_MN_MAJOR)
    return format("output.scale_layout: %d is not row_major (0) or mn_major "
                  "(1)",
                  out.scale_layout);
  const int64_t M = src.M, K = src.K;
  if (M < 0 || M > kMaxExtent)
    return format("source.M = %lld: must be in [0, 2^50]", (long long)M);
  if (K < 0 || K > kMaxExtent)
    return format("source.K = %lld: must be in [0, 2^50]", (long long)K);
  if (M != 0 && K > kMaxElements / M)
    return format("source: M * K = %lld * %lld exceeds 2^56 elements",
                  (long long)M, (long long)K);
  int64_t srcBlock = blockOf(src.format);
  if (srcBlock && K % srcBlock != 0)
    return format("source.K = %lld: a %s source has blocks of %lld along K, "
                  "so K must be a multiple of %lld",
                  (long long)K, formatName(src.format), (long long)srcBlock,
                  (long long)srcBlock);

  // Which scale policy the contract allows for this source and output.
  const char *outName = formatName(out.format);
  const char *scName = scaleName(out.scale);
  if (isIeee(out.format) && out.scale != QCT_REF_SCALE_NONE)
    return format("output.scale: '%s' is not allowed for a %s output (it has "
                  "no scales; use 'none')",
                  scName, outName);
  if (isMx(out.format) && out.scale != QCT_REF_SCALE_FLOOR &&
      out.scale != QCT_REF_SCALE_RCEIL)
    return format("output.scale: '%s' is not allowed for an %s output (MX "
                  "outputs take 'floor' or 'rceil')",
                  scName, outName);
  if (isFp8(out.format) && out.scale != QCT_REF_SCALE_AMAX &&
      out.scale != QCT_REF_SCALE_POW2 && out.scale != QCT_REF_SCALE_ALIGNED)
    return format("output.scale: '%s' is not allowed for an %s output (FP8 "
                  "1x128 outputs take 'amax', 'pow2' or 'aligned')",
                  scName, outName);
  if (out.scale == QCT_REF_SCALE_ALIGNED && !isMx(src.format))
    return format("output.scale: 'aligned' needs an MX source, got %s",
                  formatName(src.format));

  p.B = blockOf(out.format);
  p.col = out.layout == QCT_REF_COL;
  if (!p.col && p.B && K % p.B != 0)
    return format("output.layout: row blocks of %lld run along K, but K = "
                  "%lld is not a multiple of %lld",
                  (long long)p.B, (long long)K, (long long)p.B);

  int64_t G = 0, C = M;
  int64_t ownedScaleCols = 0; // the groups' scale columns
  if (ragged) {
    const qct_ref_ragged &r = *ragged;
    G = r.G;
    if (G < 0 || G > (int64_t(1) << 31))
      return format("ragged.G = %lld: must be in [0, 2^31]", (long long)G);
    if (r.pad_groups_to < 1 || r.pad_groups_to > (int64_t(1) << 31))
      return format("ragged.pad_groups_to = %lld: must be in [1, 2^31]",
                    (long long)r.pad_groups_to);
    if (r.offsets_i64 != 0 && r.offsets_i64 != 1)
      return format("ragged.offsets_i64 = %d: must be 0 (int32) or 1 (int64)",
                    r.offsets_i64);
    if (r.untouched_tail != 0 && r.untouched_tail != 1)
      return format("ragged.untouched_tail = %d: must be 0 or 1",
                    r.untouched_tail);
    if (!r.offsets)
      return "ragged.offsets is NULL: it must hold G + 1 offsets";
    if (offsetAt(r, 0) != 0)
      return format("ragged.offsets[0] = %lld: offsets must start at 0",
                    (long long)offsetAt(r, 0));
    for (int64_t g = 1; g <= G; ++g) {
      int64_t prev = offsetAt(r, g - 1), cur = offsetAt(r, g);
      if (cur < prev)
        return format("ragged.offsets[%lld] = %lld < offsets[%lld] = %lld: "
                      "offsets must be nondecreasing",
                      (long long)g, (long long)cur, (long long)(g - 1),
                      (long long)prev);
      if (cur > M)
        return format("ragged.offsets[%lld] = %lld > M = %lld: offsets must "
                      "stay within the rows",
                      (long long)g, (long long)cur, (long long)M);
    }
    if (offsetAt(r, G) != M)
      return format("ragged.offsets[G = %lld] = %lld: offsets must end at M "
                    "= %lld",
                    (long long)G, (long long)offsetAt(r, G), (long long)M);
    const int64_t P = r.pad_groups_to;
    // The capacity (kernel-abi.md): rows 16-byte aligned for P > 1.
    C = P == 1 ? M : cdiv(M + G * (P - 1), 128) * 128;
    if (C > kMaxExtent || (K != 0 && C > kMaxElements / K))
      return format("ragged: capacity C = rup(M + G*(P-1), 128) = %lld is too "
                    "large",
                    (long long)C);
    p.padded.assign(size_t(G) + 1, 0);
    int64_t col = 0, scol = 0;
    for (int64_t g = 0; g < G; ++g) {
      int64_t start = offsetAt(r, g), n = offsetAt(r, g + 1) - start;
      int64_t padded = cdiv(n, P) * P;
      p.groups.push_back({start, n, col, padded, scol});
      col += padded;
      scol += p.B ? cdiv(padded, p.B) : 0;
      p.padded[size_t(g) + 1] = col;
    }
    ownedScaleCols = scol;
  } else {
    p.groups.push_back({0, M, 0, M, 0});
  }

  int64_t eb = elemBytes(out.format);
  bool fp4 = out.format == QCT_REF_MXFP4;
  if (!p.col) {
    p.lines = M;
    p.lineLen = K;
    p.groups.assign(1, Group{0, K, 0, K, 0}); // row outputs ignore groups
    p.scaleCols = p.B ? K / p.B : 0;
  } else {
    p.lines = K;
    p.lineLen = C;
    p.scaleCols = !p.B ? 0 : ragged ? cdiv(C, p.B) + G : cdiv(M, p.B);
  }
  p.rowBytes = fp4 ? cdiv(p.lineLen, 2) : p.lineLen * eb;
  p.dataBytes = size_t(p.lines) * size_t(p.rowBytes);
  p.writtenRowBytes = p.rowBytes;
  p.writtenScaleCols = p.scaleCols;
  if (ragged && ragged->untouched_tail && p.col) {
    // A byte that holds column p[G] - 1 is written whole (its other nibble
    // the zero of a trailing odd nibble); the bytes after it are not.
    const int64_t pG = p.padded.back();
    p.writtenRowBytes = fp4 ? cdiv(pG, 2) : pG * eb;
    p.writtenScaleCols = ownedScaleCols;
  }
  p.mnMajor = out.scale_layout == QCT_REF_MN_MAJOR;
  p.scaleLd = cdiv(p.lines, 4) * 4;
  if (p.B) {
    int64_t entries =
        p.mnMajor ? p.scaleCols * p.scaleLd : p.scaleCols * p.lines;
    p.scalesBytes = size_t(entries) * (isMx(out.format) ? 1 : 4);
  }
  return "";
}

/// Exact values of every code of the 8-bit element formats and of fp16.
struct Tables {
  double e2m1[16], e4m3[256], e5m2[256], e8m0[256];
  std::vector<double> fp16;
  Tables() : fp16(65536) {
    for (uint32_t c = 0; c < 16; ++c)
      e2m1[c] = decode(c, kE2M1);
    for (uint32_t c = 0; c < 256; ++c) {
      e4m3[c] = decode(c, kE4M3);
      e5m2[c] = decode(c, kE5M2);
      e8m0[c] = decodeE8M0(uint8_t(c));
    }
    for (uint32_t c = 0; c < 65536; ++c)
      fp16[c] = decode(c, kFP16);
  }
};

const Tables &tables() {
  static const Tables t;
  return t;
}

/// Element times an MX scale, exactly; a 0xFF scale makes the element the
/// positive NaN whatever its code, an element NaN keeps its sign.
inline double mxValue(double elem, uint8_t b, const double *pow2Table) {
  if (b == 0xFF)
    return nanWithSign(false);
  return std::isnan(elem) ? elem : elem * pow2Table[b];
}

/// Element times an fp32 scale_inv, exactly (4 by 24 significant bits). A NaN
/// scale, 0 * Inf and Inf * 0 give the positive NaN; an element NaN keeps its
/// sign.
inline double fp8Value(double elem, float s) {
  double sd = s;
  if (std::isnan(sd) || (elem == 0 && std::isinf(sd)) ||
      (std::isinf(elem) && sd == 0))
    return nanWithSign(false);
  return std::isnan(elem) ? elem : elem * sd;
}

/// Decodes source row m, columns [k0, k0 + n), to out[i * os]; for MX
/// sources also each element's scale byte to sb[i * os] (sb may be null).
void decodeRange(const qct_ref_source &src, int64_t m, int64_t k0, int64_t n,
                 double *out, int64_t os, uint8_t *sb) {
  const Tables &t = tables();
  const int64_t K = src.K;
  switch (src.format) {
  case QCT_REF_BF16: {
    const uint16_t *p = static_cast<const uint16_t *>(src.data) + m * K + k0;
    for (int64_t i = 0; i < n; ++i)
      out[i * os] = decodeBF16(p[i]);
    return;
  }
  case QCT_REF_FP16: {
    const uint16_t *p = static_cast<const uint16_t *>(src.data) + m * K + k0;
    for (int64_t i = 0; i < n; ++i)
      out[i * os] = t.fp16[p[i]];
    return;
  }
  case QCT_REF_FP32: {
    const float *p = static_cast<const float *>(src.data) + m * K + k0;
    for (int64_t i = 0; i < n; ++i)
      out[i * os] = p[i];
    return;
  }
  case QCT_REF_MXFP4: {
    const uint8_t *row = static_cast<const uint8_t *>(src.data) + m * (K / 2);
    const uint8_t *sc = static_cast<const uint8_t *>(src.scales) + m * (K / 32);
    for (int64_t i = 0; i < n; ++i) {
      int64_t k = k0 + i;
      uint8_t code = (row[k >> 1] >> ((k & 1) * 4)) & 0xF;
      uint8_t b = sc[k >> 5];
      out[i * os] = mxValue(t.e2m1[code], b, t.e8m0);
      if (sb)
        sb[i * os] = b;
    }
    return;
  }
  case QCT_REF_MXFP8_E4M3:
  case QCT_REF_MXFP8_E5M2: {
    const double *tab = src.format == QCT_REF_MXFP8_E4M3 ? t.e4m3 : t.e5m2;
    const uint8_t *row = static_cast<const uint8_t *>(src.data) + m * K;
    const uint8_t *sc = static_cast<const uint8_t *>(src.scales) + m * (K / 32);
    for (int64_t i = 0; i < n; ++i) {
      int64_t k = k0 + i;
      uint8_t b = sc[k >> 5];
      out[i * os] = mxValue(tab[row[k]], b, t.e8m0);
      if (sb)
        sb[i * os] = b;
    }
    return;
  }
  default: { // FP8 1x128 with f32 scale_inv
    const double *tab = src.format == QCT_REF_FP8_E4M3 ? t.e4m3 : t.e5m2;
    const uint8_t *row = static_cast<const uint8_t *>(src.data) + m * K;
    const float *sc = static_cast<const float *>(src.scales) + m * (K / 128);
    for (int64_t i = 0; i < n; ++i) {
      int64_t k = k0 + i;
      out[i * os] = fp8Value(tab[row[k]], sc[k >> 7]);
    }
    return;
  }
  }
}

/// Col panels: the source's raw codes of features [k0, k0 + t), transposed
/// to [t][ld] (so the strided stores are 2 or 4 bytes, and a 32-feature panel
/// of a 32768-token tensor stays in L2), and each token's block scale (MX byte
/// or f32 bits). k0 is a multiple of t = 32, so a panel row lies in one source
/// block (32 for MX, 128 for FP8).
template <class Raw>
void gatherPanel(const qct_ref_source &src, int64_t k0, int64_t t, Raw *tile,
                 int64_t ld, uint32_t *scaleLine) {
  const int64_t M = src.M, K = src.K;
  const uint8_t *bytes = static_cast<const uint8_t *>(src.data);
  switch (src.format) {
  case QCT_REF_BF16:
  case QCT_REF_FP16:
    for (int64_t m = 0; m < M; ++m) {
      const uint16_t *p = static_cast<const uint16_t *>(src.data) + m * K + k0;
      for (int64_t j = 0; j < t; ++j)
        tile[j * ld + m] = p[j];
    }
    return;
  case QCT_REF_FP32:
    for (int64_t m = 0; m < M; ++m) {
      const uint32_t *p = static_cast<const uint32_t *>(src.data) + m * K + k0;
      for (int64_t j = 0; j < t; ++j)
        tile[j * ld + m] = Raw(p[j]);
    }
    return;
  case QCT_REF_MXFP4:
    for (int64_t m = 0; m < M; ++m) {
      const uint8_t *row = bytes + m * (K / 2);
      for (int64_t j = 0; j < t; ++j) {
        int64_t k = k0 + j;
        tile[j * ld + m] = (row[k >> 1] >> ((k & 1) * 4)) & 0xF;
      }
      scaleLine[m] =
          static_cast<const uint8_t *>(src.scales)[m * (K / 32) + k0 / 32];
    }
    return;
  case QCT_REF_MXFP8_E4M3:
  case QCT_REF_MXFP8_E5M2:
    for (int64_t m = 0; m < M; ++m) {
      for (int64_t j = 0; j < t; ++j)
        tile[j * ld + m] = bytes[m * K + k0 + j];
      scaleLine[m] =
          static_cast<const uint8_t *>(src.scales)[m * (K / 32) + k0 / 32];
    }
    return;
  default: // FP8 1x128
    for (int64_t m = 0; m < M; ++m) {
      for (int64_t j = 0; j < t; ++j)
        tile[j * ld + m] = bytes[m * K + k0 + j];
      float sc =
          static_cast<const float *>(src.scales)[m * (K / 128) + k0 / 128];
      scaleLine[m] = bitsOfF32(sc);
    }
    return;
  }
}

/// Decodes one panel row (feature) of raw codes to exact values, and for MX
/// sources each token's scale byte to sb (may be null); the same values as
/// decodeRange.
template <class Raw>
void decodePanelRow(const qct_ref_source &src, const Raw *codes,
                    const uint32_t *scaleLine, int64_t M, double *out,
                    uint8_t *sb) {
  const Tables &t = tables();
  switch (src.format) {
  case QCT_REF_BF16:
    for (int64_t m = 0; m < M; ++m)
      out[m] = decodeBF16(uint16_t(codes[m]));
    return;
  case QCT_REF_FP16:
    for (int64_t m = 0; m < M; ++m)
      out[m] = t.fp16[codes[m]];
    return;
  case QCT_REF_FP32:
    for (int64_t m = 0; m < M; ++m)
      out[m] = decodeFP32(uint32_t(codes[m]));
    return;
  case QCT_REF_MXFP4:
  case QCT_REF_MXFP8_E4M3:
  case QCT_REF_MXFP8_E5M2: {
    const double *tab = src.format == QCT_REF_MXFP4        ? t.e2m1
                        : src.format == QCT_REF_MXFP8_E4M3 ? t.e4m3
                                                           : t.e5m2;
    for (int64_t m = 0; m < M; ++m) {
      uint8_t b = uint8_t(scaleLine[m]);
      out[m] = mxValue(tab[codes[m]], b, t.e8m0);
      if (sb)
        sb[m] = b;
    }
    return;
  }
  default: {
    const double *tab = src.format == QCT_REF_FP8_E4M3 ? t.e4m3 : t.e5m2;
    for (int64_t m = 0; m < M; ++m)
      out[m] = fp8Value(tab[codes[m]], f32FromBits(scaleLine[m]));
    return;
  }
  }
}

/// Writes one output row (a source row for `row`, a feature for `col`).
class LineWriter {
public:
  LineWriter(const qct_ref_source &src, const qct_ref_output &out,
             const Plan &p)
      : src_(src), out_(out), p_(p), F_(elemOf(out.format)),
        srcF_(elemOf(src.format)), codes_(size_t(p.B ? p.B : 1)) {}

  void write(int64_t line, const double *x, const uint8_t *sb) {
    uint8_t *row = static_cast<uint8_t *>(out_.data) + line * p_.rowBytes;
    for (const Group &g : p_.groups) {
      const double *xs = x + g.srcStart;
      if (!p_.B) {
        writeIeee(row, g.dstCol, xs, g.n);
        continue;
      }
      int64_t blocks = cdiv(g.padded, p_.B);
      for (int64_t kb = 0; kb < blocks; ++kb) {
        int64_t start = kb * p_.B;
        int64_t n = std::min(p_.B, g.n - start);
        if (n <= 0)
          continue; // padding only: codes 0 and the padding scale, prefilled
        const uint8_t *bs = sb ? sb + g.srcStart + start : nullptr;
        quantize(xs + start, n, bs, line, g.scaleCol + kb);
        storeCodes(row, g.dstCol + start, n);
      }
    }
  }

private:
  void quantize(const double *x, int64_t n, const uint8_t *sb, int64_t line,
                int64_t scol) {
    uint8_t *codes = codes_.data();
    size_t idx = p_.mnMajor ? size_t(scol * p_.scaleLd + line)
                            : size_t(line * p_.scaleCols + scol);
    if (isMx(out_.format)) {
      static_cast<uint8_t *>(out_.scales)[idx] =
          quantizeMxBlock(x, n, F_, out_.scale == QCT_REF_SCALE_RCEIL, codes);
      return;
    }
    float s;
    if (out_.scale == QCT_REF_SCALE_AMAX) {
      s = quantizeFp8AmaxBlock(x, n, F_, codes);
    } else if (out_.scale == QCT_REF_SCALE_POW2) {
      s = quantizeFp8Pow2Block(x, n, F_, codes);
    } else { // aligned: from the source scale bytes alone
      int bmax = -1;
      for (int64_t i = 0; i < n; ++i)
        if (sb[i] != 0xFF && int(sb[i]) > bmax)
          bmax = sb[i];
      int e = alignedScaleExponent(bmax, srcF_, F_);
      quantizeFp8FixedBlock(x, n, F_, e, codes);
      s = float(pow2(e));
    }
    static_cast<float *>(out_.scales)[idx] = s;
  }

  void storeCodes(uint8_t *row, int64_t col, int64_t n) {
    const uint8_t *codes = codes_.data();
    if (out_.format == QCT_REF_MXFP4) {
      // Element 2i in the low nibble; the row was zero-filled, so OR places
      // a nibble without disturbing its neighbour (maybe another group's).
      for (int64_t i = 0; i < n; ++i) {
        int64_t c = col + i;
        row[c >> 1] |= uint8_t((codes[i] & 0xF) << ((c & 1) * 4));
      }
      return;
    }
    std::memcpy(row + col, codes, size_t(n));
  }

  void writeIeee(uint8_t *row, int64_t col, const double *x, int64_t n) {
    if (out_.format == QCT_REF_FP32) {
      for (int64_t i = 0; i < n; ++i) {
        uint32_t c = encodeFast<kFP32>(x[i]);
        std::memcpy(row + 4 * (col + i), &c, 4);
      }
      return;
    }
    for (int64_t i = 0; i < n; ++i) {
      uint16_t c =
          uint16_t(out_.format == QCT_REF_BF16 ? encodeFast<kBF16>(x[i])
                                               : encodeFast<kFP16>(x[i]));
      std::memcpy(row + 2 * (col + i), &c, 2);
    }
  }

  const qct_ref_source &src_;
  const qct_ref_output &out_;
  const Plan &p_;
  const FloatFormat &F_;
  const FloatFormat &srcF_;
  std::vector<uint8_t> codes_;
};

std::atomic<int> gThreads{1};

/// Runs fn over [0, n) split into contiguous ranges, one per thread. Every
/// output line is computed alone and written to bytes no other line touches,
/// so the result does not depend on the thread count.
template <class Fn> void parallelFor(int64_t n, Fn &&fn) {
  int64_t threads = std::min<int64_t>(gThreads.load(), n);
  if (threads <= 1) {
    fn(int64_t(0), n);
    return;
  }
  std::vector<std::thread> pool;
  int64_t chunk = cdiv(n, threads);
  for (int64_t i = 1; i < threads; ++i) {
    int64_t begin = i * chunk, end = std::min(n, begin + chunk);
    if (begin < end)
      pool.emplace_back([&fn, begin, end] { fn(begin, end); });
  }
  fn(int64_t(0), std::min(n, chunk));
  for (std::thread &t : pool)
    t.join();
}

/// The unfused chain: every decoded value rounded to bf16 first (IEEE RNE,
/// overflow to Inf, NaN to the canonical NaN).
void roundThroughBf16(double *x, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    x[i] = decodeBF16(uint16_t(encodeFast<kBF16>(x[i])));
}

void fillPadding(const qct_ref_output &out, const Plan &p) {
  uint8_t *data = static_cast<uint8_t *>(out.data);
  for (int64_t line = 0; line < p.lines; ++line)
    std::memset(data + line * p.rowBytes, 0, size_t(p.writtenRowBytes));
  if (!p.B)
    return;
  // Scale entries [first, first + n), in the layout's order.
  auto pad = [&](int64_t first, int64_t n) {
    if (isMx(out.format)) {
      std::memset(static_cast<uint8_t *>(out.scales) + first, 127,
                  size_t(n)); // e8m0 1.0
    } else {
      float *s = static_cast<float *>(out.scales) + first;
      std::fill(s, s + n, 1.0f);
    }
  };
  if (p.mnMajor)
    pad(0, p.writtenScaleCols * p.scaleLd);
  else
    for (int64_t line = 0; line < p.lines; ++line)
      pad(line * p.scaleCols, p.writtenScaleCols);
}

/// The col path: panels of T features, each gathered once from the source
/// and then written one feature (output row) at a time.
template <class Raw>
void convertCol(const qct_ref_source &src, const qct_ref_output &out,
                const Plan &p, int64_t T, bool needSb) {
  const int64_t M = src.M, K = src.K;
  // Panel rows 64 bytes apart modulo 4 KiB: with a stride of exactly M codes
  // (M a multiple of 2048) the gather's 32 store streams would all map to the
  // same L1 set and evict each other.
  const int64_t ld = M + 64 / int64_t(sizeof(Raw));
  parallelFor(cdiv(K, T), [&](int64_t begin, int64_t end) {
    LineWriter writer(src, out, p);
    std::vector<Raw> tile(size_t(T * ld));
    std::vector<uint32_t> scaleLine(static_cast<size_t>(M));
    std::vector<double> x(static_cast<size_t>(M));
    std::vector<uint8_t> sb(needSb ? size_t(M) : 0);
    for (int64_t k0 = begin * T; k0 < std::min(K, end * T); k0 += T) {
      int64_t t = std::min(T, K - k0);
      gatherPanel(src, k0, t, tile.data(), ld, scaleLine.data());
      for (int64_t j = 0; j < t; ++j) {
        decodePanelRow(src, tile.data() + j * ld, scaleLine.data(), M, x.data(),
                       needSb ? sb.data() : nullptr);
        if (out.via_bf16)
          roundThroughBf16(x.data(), M);
        writer.write(k0 + j, x.data(), needSb ? sb.data() : nullptr);
      }
    }
  });
}

} // namespace

std::string outputSizes(const qct_ref_source &src, const qct_ref_output &out,
                        const qct_ref_ragged *ragged, OutputSizes &sizes) {
  Plan p;
  std::string err = plan(src, out, ragged, p);
  if (!err.empty())
    return err;
  sizes.dataBytes = p.dataBytes;
  sizes.scalesBytes = p.scalesBytes;
  return "";
}

std::string convert(const qct_ref_source &src, const qct_ref_output &out,
                    const qct_ref_ragged *ragged) {
  Plan p;
  std::string err = plan(src, out, ragged, p);
  if (!err.empty())
    return err;
  const int64_t M = src.M, K = src.K;
  if (M * K > 0) {
    if (!src.data)
      return "source.data is NULL";
    if (!isIeee(src.format) && !src.scales)
      return format("source.scales is NULL: a %s source needs its scales",
                    formatName(src.format));
  }
  if (p.dataBytes > 0 && !out.data)
    return "output.data is NULL";
  if (out.data_bytes < p.dataBytes)
    return format("output.data_bytes = %zu: the output needs %zu bytes",
                  out.data_bytes, p.dataBytes);
  if (p.scalesBytes > 0 && !out.scales)
    return "output.scales is NULL";
  if (out.scales_bytes < p.scalesBytes)
    return format("output.scales_bytes = %zu: the output needs %zu bytes",
                  out.scales_bytes, p.scalesBytes);

  fillPadding(out, p);
  if (ragged && ragged->padded_offsets) {
    for (size_t g = 0; g < p.padded.size(); ++g) {
      if (ragged->offsets_i64)
        static_cast<int64_t *>(ragged->padded_offsets)[g] = p.padded[g];
      else
        static_cast<int32_t *>(ragged->padded_offsets)[g] =
            int32_t(p.padded[g]);
    }
  }
  if (M == 0 || K == 0)
    return "";

  const bool needSb = out.scale == QCT_REF_SCALE_ALIGNED;
  if (!p.col) {
    parallelFor(M, [&](int64_t begin, int64_t end) {
      LineWriter writer(src, out, p);
      std::vector<double> x(static_cast<size_t>(K));
      std::vector<uint8_t> sb(needSb ? size_t(K) : 0);
      for (int64_t m = begin; m < end; ++m) {
        decodeRange(src, m, 0, K, x.data(), 1, needSb ? sb.data() : nullptr);
        if (out.via_bf16)
          roundThroughBf16(x.data(), K);
        writer.write(m, x.data(), needSb ? sb.data() : nullptr);
      }
    });
    return "";
  }
  const int64_t T = std::min(kTile, K);
  if (src.format == QCT_REF_FP32)
    convertCol<uint32_t>(src, out, p, T, needSb);
  else
    convertCol<uint16_t>(src, out, p, T, needSb);
  return "";
}

int setThreads(int n) { return gThreads.exchange(n < 1 ? 1 : n); }

} // namespace qct::ref
