//===- qct/runtime/Metadata.h - The kernel metadata JSON -------*- C++ -*-===//
//
// The parsed form of generated/<name>.json (docs/kernel-abi.md), with the
// schedule resolved and every expression parsed, so a launch only evaluates.
//
//===----------------------------------------------------------------------===//
#ifndef QCT_RUNTIME_METADATA_H
#define QCT_RUNTIME_METADATA_H

#include "qct/runtime/ShapeExpr.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace qct::rt {

/// Which qct_kernel_args field a buffer binds to.
enum class ArgField { Src, SrcScales, Out, OutScales, Offsets, PaddedOffsets };

struct BufferMeta {
  std::string name, fieldText, dtype;
  std::string element; ///< metadata "element" of a u8 buffer, else empty
  ArgField field = ArgField::Src;
  int index = 0; ///< for Out / OutScales
  bool isOutput = false;
  /// Bit d set: a tensor of qct_dtype d fits. u8 / u16 buffers hold raw bits
  /// (fp8 codes, packed fp4, e8m0, bf16 bits): any dtype of that size fits,
  /// unless the metadata names the codes' `element`: then that type or u8.
  /// Typed buffers want their type (bf16 / f16 also take u16 bit tensors).
  std::uint32_t acceptedDtypes = 0;
  std::vector<std::string> shapeText;
  std::vector<ShapeExpr> shape;
};

struct ConstraintMeta {
  ShapeExpr expr;
  std::int64_t multipleOf = 0; ///< 0: none
  bool hasEquals = false;
  std::int64_t equals = 0;
  std::string why;
};

struct KnobMeta {
  std::string name;
  std::vector<std::int64_t> values;
  std::int64_t defaultValue = 0;
};

/// schedule.rules[]: a schedule with ifName = ifValue must give thenName one
/// of thenValues.
struct KnobRuleMeta {
  std::string ifName;
  std::int64_t ifValue = 0;
  std::string thenName;
  std::vector<std::int64_t> thenValues;
};

struct KernelMeta {
  std::string json; ///< the text it was parsed from
  int formatVersion = 0;
  std::string name, entry, specHash, compilerVersion;
  int kernelArgsVersion = 0;
  std::vector<BufferMeta> buffers;
  std::vector<ConstraintMeta> constraints;
  std::vector<KnobMeta> knobs;
  std::vector<KnobRuleMeta> rules;
  bool errorFlag = false;
  /// Resolved schedule: every knob, overrides applied (sorted by name).
  std::map<std::string, std::int64_t> schedule;
  ShapeExpr grid[3], block[3], dynamicSmem;
  int srcIndex = -1;     ///< buffer bound to "src"
  int offsetsIndex = -1; ///< buffer bound to "offsets" (ragged)
};

/// Parses `json` and resolves the schedule with `overrides` ("NAME=VALUE").
/// Throws RuntimeError: QCT_ERR_METADATA for malformed metadata,
/// QCT_ERR_SCHEDULE for an unknown knob, a value not listed, or a schedule
/// that breaks one of the rules.
KernelMeta parseMetadata(const std::string &json,
                         const std::vector<std::string> &overrides);

} // namespace qct::rt

#endif // QCT_RUNTIME_METADATA_H
