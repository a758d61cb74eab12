//===- KernelSpec.h - The normalized, validated form of a qct spec --------===//
//
// A spec file (JSON with comments, docs/spec-language.md) is parsed and
// validated into this structure. Everything downstream (the MLIR import, the
// emitter, the metadata) reads this form only, never the JSON, so defaults are
// filled in here and every field holds a value the numerics contract allows.
//
//===----------------------------------------------------------------------===//

#ifndef QCT_SPEC_KERNELSPEC_H
#define QCT_SPEC_KERNELSPEC_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace qct {

/// Tensor formats of numerics.md. Fp8E4M3/Fp8E5M2 are the 1x128 block
/// formats with f32 scale_inv; Mx* are the 32-element e8m0 block formats.
enum class Format {
  BF16,
  FP16,
  FP32,
  MXFP4,
  MXFP8_E4M3,
  MXFP8_E5M2,
  FP8_E4M3,
  FP8_E5M2,
};

/// `row`: blocks along K, shape [M, K]. `col`: the transpose, shape [K, M'].
enum class Layout { Row, Col };

/// Floor/Rceil are the MX scale roundings; Amax/Pow2/Aligned the FP8 1x128
/// scale policies; None for outputs without scales (bf16 decode).
enum class ScalePolicy { None, Floor, Rceil, Amax, Pow2, Aligned };

enum class ScaleLayout { RowMajor, MnMajor };

enum class OffsetsType { I32, I64 };

struct SourceSpec {
  Format format = Format::BF16;
  /// Source scale layout (quantized sources only; row_major in v1).
  ScaleLayout scaleLayout = ScaleLayout::RowMajor;
  /// For an FP8 1x128 source: how its scales were made (Amax or Pow2).
  ScalePolicy scalePolicy = ScalePolicy::None;
};

struct OutputSpec {
  std::string name;
  Format format = Format::BF16;
  Layout layout = Layout::Row;
  /// Block size along the block axis: 32 for MX, 128 for FP8, 0 for bf16.
  int block = 0;
  ScalePolicy scale = ScalePolicy::None;
  ScaleLayout scaleLayout = ScaleLayout::RowMajor;
};

struct RaggedSpec {
  OffsetsType offsetsType = OffsetsType::I32;
  int64_t padGroupsTo = 1;
  bool writePaddedOffsets = false;
  /// Col outputs' capacity tail (data columns at or past p[G], scale columns
  /// past the groups' own): written as zeros and padding scales (true, the
  /// default), or left untouched ("capacity_tail": "untouched").
  bool zeroCapacityTail = true;
};

struct KernelSpec {
  /// A C identifier; the kernel entry point is "qct_" + name.
  std::string name;
  std::string description;
  SourceSpec source;
  /// One to three outputs, all computed from one read of the source.
  std::vector<OutputSpec> outputs;
  std::optional<RaggedSpec> ragged;
  /// Static specialization: K fixed at compile time (M stays dynamic).
  std::optional<int64_t> staticK;
  /// false keeps decode -> quantize unfused (through bf16), see numerics.md 7.
  bool fuse = true;
  /// Hex SHA-256 of the canonical JSON of this normalized spec (not of the
  /// file text, so comments and whitespace do not change it).
  std::string hash;
  /// Where it came from, for diagnostics and banners.
  std::string path;
};

} // namespace qct

#endif // QCT_SPEC_KERNELSPEC_H
