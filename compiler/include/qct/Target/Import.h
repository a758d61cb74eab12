//===- Import.h - KernelSpec -> qct IR ------------------------------------===//

#ifndef QCT_TARGET_IMPORT_H
#define QCT_TARGET_IMPORT_H

#include "qct/Spec/KernelSpec.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/Error.h"

namespace qct {

/// Builds a module holding one qct.kernel for `spec`: one qct.load_source and,
/// per output, decode (quantized source) -> transpose (col) -> quantize
/// (quantized output) -> qct.store_output. With `fuse: false` the decode
/// rounds to bf16 and the kernel is marked `fuse = false`; otherwise it
/// decodes to `exact` values, which qct-fuse-convert may turn into
/// qct.convert. The context must have the qct dialect loaded.
llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>
importSpec(mlir::MLIRContext &context, const KernelSpec &spec);

} // namespace qct

#endif // QCT_TARGET_IMPORT_H
