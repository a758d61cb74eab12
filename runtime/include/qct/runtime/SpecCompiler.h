//===- qct/runtime/SpecCompiler.h - Specs through libqct_compiler -*- C++ -*-===//
//
// The runtime links no LLVM/MLIR; to load a kernel straight from a spec it
// dlopens the compiler's C library (compiler/include/qct/CAPI/qct_compiler.h)
// and asks it for the CUDA source and metadata.
//
//===----------------------------------------------------------------------===//
#ifndef QCT_RUNTIME_SPECCOMPILER_H
#define QCT_RUNTIME_SPECCOMPILER_H

#include <string>

namespace qct::rt {

struct CompiledSpec {
  std::string cudaSource;
  std::string metadataJson;
};

/// Compiles the spec at `specPath`; fails with QCT_ERR_COMPILER_UNAVAILABLE
/// when the library cannot be loaded and QCT_ERR_SPEC when the spec is
/// invalid (the compiler's diagnostics in the message).
CompiledSpec compileSpec(const std::string &specPath);

} // namespace qct::rt

#endif // QCT_RUNTIME_SPECCOMPILER_H
