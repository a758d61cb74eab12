//===- PipelineUnavailable.cpp - compileSpec when QCTTarget is not built --===//
//
// Compiled into qct-compile only when the build has no QCTTarget library
// (see CMakeLists.txt). It is not a fallback implementation: every call fails,
// saying why, so the front end and the driver can be built and tested on
// their own while the pipeline is developed.
//
//===----------------------------------------------------------------------===//

#include "qct/Target/Pipeline.h"

llvm::Expected<qct::CompileResult> qct::compileSpec(const KernelSpec &spec,
                                                    Stage) {
  return llvm::createStringError(
      llvm::inconvertibleErrorCode(),
      "spec '%s': the qct pipeline (import, passes, CUDA emission) is not "
      "available yet: this qct-compile was built without the QCTTarget "
      "library",
      spec.name.c_str());
}
