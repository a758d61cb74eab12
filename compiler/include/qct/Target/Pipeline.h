//===- Pipeline.h - From a validated spec to IR, CUDA and metadata --------===//
//
// The one entry point the driver (qct-compile) calls after the front end has
// produced a KernelSpec: import into the qct dialect, run the named pass
// pipeline, emit CUDA C++ and the metadata JSON (docs/kernel-abi.md).
//
//===----------------------------------------------------------------------===//

#ifndef QCT_TARGET_PIPELINE_H
#define QCT_TARGET_PIPELINE_H

#include "qct/Spec/KernelSpec.h"

#include "llvm/Support/Error.h"

#include <string>

namespace qct {

/// How far to run: the imported qct IR, the IR after the pass pipeline, or
/// all the way to CUDA C++ and metadata.
enum class Stage { Qct, Lowered, Cuda };

struct CompileResult {
  std::string qctIR;        ///< after import (always set)
  std::string loweredIR;    ///< after the pipeline (Stage >= Lowered)
  std::string cudaSource;   ///< Stage == Cuda
  std::string metadataJson; ///< Stage == Cuda
};

llvm::Expected<CompileResult> compileSpec(const KernelSpec &spec, Stage upTo);

} // namespace qct

#endif // QCT_TARGET_PIPELINE_H
