//===- QCTDialect.cpp - qct dialect, attributes and types -----------------===//

#include "qct/Dialect/QCTDialect.h"
#include "qct/Dialect/QCTOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::qct;

#include "qct/Dialect/QCTDialect.cpp.inc"
#include "qct/Dialect/QCTEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "qct/Dialect/QCTAttrs.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "qct/Dialect/QCTTypes.cpp.inc"

void QCTDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "qct/Dialect/QCTAttrs.cpp.inc"
      >();
  addTypes<
#define GET_TYPEDEF_LIST
#include "qct/Dialect/QCTTypes.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "qct/Dialect/QCTOps.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// TileType
//===----------------------------------------------------------------------===//

bool TileType::isQuantized() const { return isQuantizedFormat(getFormat()); }
bool TileType::isMX() const { return isMXFormat(getFormat()); }
bool TileType::isFP8() const { return isFP8Format(getFormat()); }

//===----------------------------------------------------------------------===//
// BlockScaleAttr
//===----------------------------------------------------------------------===//

LogicalResult
BlockScaleAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                       int64_t block, ScalePolicy policy, ScaleLayout layout) {
  // numerics.md fixes two block sizes: 32 (MX) and 128 (FP8 1x128).
  if (block != 32 && block != 128)
    return emitError() << "block size must be 32 (MX) or 128 (FP8), got "
                       << block;
  bool mxPolicy = policy == ScalePolicy::floor || policy == ScalePolicy::rceil;
  bool fp8Policy = policy == ScalePolicy::amax || policy == ScalePolicy::pow2 ||
                   policy == ScalePolicy::aligned;
  if (block == 32 && fp8Policy)
    return emitError() << "scale policy '" << stringifyScalePolicy(policy)
                       << "' is an FP8 policy; 32-element blocks are MX";
  if (block == 128 && mxPolicy)
    return emitError() << "scale policy '" << stringifyScalePolicy(policy)
                       << "' is an MX rounding; 128-element blocks are FP8";
  return success();
}

//===----------------------------------------------------------------------===//
// RaggedAttr
//===----------------------------------------------------------------------===//

// #qct.ragged<i32, pad_to = 128[, write_padded_offsets][, untouched_tail]>
Attribute RaggedAttr::parse(AsmParser &parser, Type) {
  Type offsetsType;
  int64_t padTo = 1;
  bool writePadded = false, zeroTail = true;
  if (parser.parseLess() || parser.parseType(offsetsType) ||
      parser.parseComma() || parser.parseKeyword("pad_to") ||
      parser.parseEqual() || parser.parseInteger(padTo))
    return {};
  // The flags, each at most once, in the printer's order.
  if (succeeded(parser.parseOptionalComma())) {
    if (succeeded(parser.parseOptionalKeyword("write_padded_offsets"))) {
      writePadded = true;
      if (succeeded(parser.parseOptionalComma())) {
        if (parser.parseKeyword("untouched_tail"))
          return {};
        zeroTail = false;
      }
    } else {
      if (parser.parseKeyword("untouched_tail"))
        return {};
      zeroTail = false;
    }
  }
  if (parser.parseGreater())
    return {};
  return parser.getChecked<RaggedAttr>(parser.getContext(), offsetsType, padTo,
                                       writePadded, zeroTail);
}

void RaggedAttr::print(AsmPrinter &printer) const {
  printer << "<" << getOffsetsType() << ", pad_to = " << getPadGroupsTo();
  if (getWritePaddedOffsets())
    printer << ", write_padded_offsets";
  if (!getZeroCapacityTail())
    printer << ", untouched_tail";
  printer << ">";
}

LogicalResult RaggedAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 Type offsetsType, int64_t padGroupsTo, bool,
                                 bool) {
  if (!offsetsType.isSignlessInteger(32) && !offsetsType.isSignlessInteger(64))
    return emitError() << "ragged offsets must be i32 or i64, got "
                       << offsetsType;
  if (padGroupsTo < 1)
    return emitError() << "pad_to must be at least 1, got " << padGroupsTo;
  return success();
}

//===----------------------------------------------------------------------===//
// KnobAttr
//===----------------------------------------------------------------------===//

LogicalResult KnobAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               StringRef name, ArrayRef<int64_t> values,
                               int64_t defaultValue) {
  // The name becomes a preprocessor macro in the emitted source.
  if (name.empty() || !(isalpha(name[0]) || name[0] == '_') ||
      !llvm::all_of(name, [](char c) { return isalnum(c) || c == '_'; }))
    return emitError() << "knob name '" << name << "' is not a C identifier";
  if (values.empty())
    return emitError() << "knob '" << name << "' has no legal values";
  if (!llvm::is_contained(values, defaultValue))
    return emitError() << "knob '" << name << "' default " << defaultValue
                       << " is not one of its legal values";
  return success();
}

//===----------------------------------------------------------------------===//
// KnobRuleAttr
//===----------------------------------------------------------------------===//

LogicalResult KnobRuleAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                   StringRef ifName, int64_t ifValue,
                                   StringRef thenName,
                                   ArrayRef<int64_t> thenValues) {
  if (ifName.empty() || thenName.empty())
    return emitError() << "a knob rule names two knobs";
  if (ifName == thenName)
    return emitError() << "knob rule on '" << ifName << "' constrains itself";
  if (thenValues.empty())
    return emitError() << "knob rule '" << ifName << "' = " << ifValue
                       << " leaves '" << thenName << "' no values";
  return success();
}
