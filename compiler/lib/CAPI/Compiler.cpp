//===- Compiler.cpp - The compiler's C ABI (libqct_compiler.so) -----------===//
//
// Front end + qct::compileSpec behind three C functions, so the runtime can
// compile specs at run time by dlopen without linking LLVM/MLIR itself.
//
//===----------------------------------------------------------------------===//

#include "qct/CAPI/qct_compiler.h"

#include "qct/Spec/Diagnostics.h"
#include "qct/Spec/SpecParser.h"
#include "qct/Target/Pipeline.h"

#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <cstring>
#include <string>

namespace {
char *copyOut(const std::string &text) {
  char *out = static_cast<char *>(std::malloc(text.size() + 1));
  if (out)
    std::memcpy(out, text.c_str(), text.size() + 1);
  return out;
}
} // namespace

extern "C" {

int qct_compiler_abi_version(void) { return QCT_COMPILER_ABI_VERSION; }

const char *qct_compiler_version(void) { return QCT_VERSION_STRING; }

int qct_compiler_compile_spec(const char *spec_path, char **cuda_source,
                              char **metadata_json, char **error) {
  if (!cuda_source || !metadata_json || !error)
    return 2;
  *cuda_source = *metadata_json = *error = nullptr;
  if (!spec_path) {
    *error = copyOut("qct_compiler_compile_spec: spec_path is NULL");
    return 2;
  }
  qct::CollectingDiagnosticSink diags;
  std::optional<qct::KernelSpec> spec = qct::parseSpecFile(spec_path, diags);
  if (!spec) {
    std::string text;
    llvm::raw_string_ostream os(text);
    for (const qct::Diagnostic &d : diags.diagnostics())
      qct::printDiagnostic(os, d, /*showSourceLine=*/false);
    *error = copyOut(text.empty() ? std::string(spec_path) + ": invalid spec"
                                  : text);
    return 1;
  }
  llvm::Expected<qct::CompileResult> result =
      qct::compileSpec(*spec, qct::Stage::Cuda);
  if (!result) {
    *error = copyOut(std::string(spec_path) + ": " +
                     llvm::toString(result.takeError()));
    return 1;
  }
  *cuda_source = copyOut(result->cudaSource);
  *metadata_json = copyOut(result->metadataJson);
  return 0;
}

void qct_compiler_free(char *text) { std::free(text); }

} // extern "C"
