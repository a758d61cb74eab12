//===- Pipeline.cpp - The qct-pipeline ------------------------------------===//
//
// One pipeline, defined here only: compileSpec runs it and qct-opt exposes it
// as --qct-pipeline, so the FileCheck tests see exactly what the driver does.
//
//===----------------------------------------------------------------------===//

#include "qct/Transforms/Passes.h"

#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void mlir::qct::buildQCTPipeline(OpPassManager &pm) {
  // One read, one decode and one transpose per source whatever the number of
  // outputs; transposes move next to the load so the staged tile holds codes.
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  OpPassManager &kernel = pm.nest<KernelOp>();
  kernel.addPass(createQCTFuseConvert());
  kernel.addPass(createQCTStageTransposes());
  kernel.addPass(createQCTLowerToKernel());
}

void mlir::qct::registerQCTPipeline() {
  PassPipelineRegistration<>(
      "qct-pipeline",
      "canonicalize, cse, qct-fuse-convert, qct-stage-transposes, "
      "qct-lower-to-kernel: the pipeline qct-compile runs",
      buildQCTPipeline);
}
