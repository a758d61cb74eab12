//===- QCTOps.h - qct operations ------------------------------------------===//

#ifndef QCT_DIALECT_QCTOPS_H
#define QCT_DIALECT_QCTOPS_H

#include "qct/Dialect/QCTDialect.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/RegionKindInterface.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "qct/Dialect/QCTOps.h.inc"

namespace mlir::qct {

/// The first qct.load_source of a kernel (null if the body has none).
LoadSourceOp getKernelSource(KernelOp kernel);

/// The qct.store_output ops of a kernel, ordered by output index.
llvm::SmallVector<StoreOutputOp> getKernelOutputs(KernelOp kernel);

} // namespace mlir::qct

#endif // QCT_DIALECT_QCTOPS_H
