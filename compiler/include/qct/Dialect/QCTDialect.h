//===- QCTDialect.h - The qct dialect, its enums, attributes and types ----===//

#ifndef QCT_DIALECT_QCTDIALECT_H
#define QCT_DIALECT_QCTDIALECT_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/DialectImplementation.h"

#include "qct/Dialect/QCTDialect.h.inc"
#include "qct/Dialect/QCTEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "qct/Dialect/QCTAttrs.h.inc"

#define GET_TYPEDEF_CLASSES
#include "qct/Dialect/QCTTypes.h.inc"

namespace mlir::qct {

/// The MX block formats (32-element blocks, e8m0 scales).
inline bool isMXFormat(Format f) {
  return f == Format::mxfp4 || f == Format::mxfp8_e4m3 ||
         f == Format::mxfp8_e5m2;
}
/// The FP8 1x128 block formats (f32 scale_inv).
inline bool isFP8Format(Format f) {
  return f == Format::fp8_e4m3 || f == Format::fp8_e5m2;
}
inline bool isQuantizedFormat(Format f) {
  return isMXFormat(f) || isFP8Format(f);
}
/// The block size the numerics contract fixes for a quantized format.
inline int64_t blockSizeOf(Format f) {
  return isMXFormat(f) ? 32 : isFP8Format(f) ? 128 : 0;
}

} // namespace mlir::qct

#endif // QCT_DIALECT_QCTDIALECT_H
