//===- Passes.h - qct passes and the qct-pipeline -------------------------===//
//
// The pipeline every spec goes through (compileSpec and `qct-opt
// --qct-pipeline` run the same one):
//   canonicalize, cse        one read, one decode per source, transposes
//                            moved next to the load
//   qct-fuse-convert         decode(MX) -> quantize(fp8, aligned) => convert
//   qct-stage-transposes     transposes through a shared-memory tile
//   qct-lower-to-kernel      kernel family + symbolic schedule knobs
//
//===----------------------------------------------------------------------===//

#ifndef QCT_TRANSFORMS_PASSES_H
#define QCT_TRANSFORMS_PASSES_H

#include "qct/Dialect/QCTOps.h"

#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

namespace mlir::qct {

#define GEN_PASS_DECL
#include "qct/Transforms/Passes.h.inc"

/// Adds the passes of `qct-pipeline` to a module-level pass manager.
void buildQCTPipeline(OpPassManager &pm);

/// Registers `qct-pipeline` (the passes register with registerQCTPasses()).
void registerQCTPipeline();

#define GEN_PASS_REGISTRATION
#include "qct/Transforms/Passes.h.inc"

} // namespace mlir::qct

#endif // QCT_TRANSFORMS_PASSES_H
