//===- Formats.h - Names and properties of spec formats and policies ------===//
//
// The spelling of every enum of KernelSpec.h in the spec language (and in
// the canonical JSON), and the few properties of formats that validation and
// later stages need (which are MX, which are FP8 1x128, their block sizes).
//
//===----------------------------------------------------------------------===//

#ifndef QCT_SPEC_FORMATS_H
#define QCT_SPEC_FORMATS_H

#include "qct/Spec/KernelSpec.h"

#include "llvm/ADT/StringRef.h"

#include <optional>

namespace qct {

llvm::StringRef formatName(Format format);
llvm::StringRef layoutName(Layout layout);
/// "none" for ScalePolicy::None (never written to JSON: that is `null`).
llvm::StringRef scalePolicyName(ScalePolicy policy);
llvm::StringRef scaleLayoutName(ScaleLayout layout);
/// "int32" / "int64", the spelling of ragged.offsets_dtype.
llvm::StringRef offsetsTypeName(OffsetsType type);

std::optional<Format> parseFormat(llvm::StringRef name);
std::optional<Layout> parseLayout(llvm::StringRef name);
std::optional<ScalePolicy> parseScalePolicy(llvm::StringRef name);
std::optional<ScaleLayout> parseScaleLayout(llvm::StringRef name);
std::optional<OffsetsType> parseOffsetsType(llvm::StringRef name);

/// mxfp4, mxfp8_e4m3, mxfp8_e5m2: 32-element blocks, e8m0 scales.
bool isMXFormat(Format format);
/// fp8_e4m3, fp8_e5m2: 1x128 (row) / 128x1 (col) blocks, f32 scale_inv.
bool isFP8BlockFormat(Format format);
/// Formats that carry block scales (MX or FP8 1x128).
inline bool isQuantizedFormat(Format format) {
  return isMXFormat(format) || isFP8BlockFormat(format);
}
/// The block size of a quantized format (32 or 128); 0 for bf16/fp16/fp32.
int formatBlockSize(Format format);

} // namespace qct

#endif // QCT_SPEC_FORMATS_H
