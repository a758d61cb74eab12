//===- qct-opt.cpp - mlir-opt for the qct dialect -------------------------===//
//
// Parses, verifies and transforms qct IR: every pass of the qct-pipeline and
// the pipeline itself are reachable from the command line, so each has its
// own FileCheck tests (tests/lit/dialect, tests/lit/passes).
//
//===----------------------------------------------------------------------===//

#include "qct/Dialect/QCTDialect.h"
#include "qct/Transforms/Passes.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  mlir::qct::registerQCTPasses();
  mlir::qct::registerQCTPipeline();

  mlir::DialectRegistry registry;
  registry.insert<mlir::qct::QCTDialect>();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "qct optimizer driver\n", registry));
}
