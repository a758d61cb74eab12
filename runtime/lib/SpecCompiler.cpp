//===- SpecCompiler.cpp - Specs through libqct_compiler -------------------===//

#include "qct/runtime/SpecCompiler.h"

#include "qct/runtime/DynLib.h"
#include "qct/runtime/Env.h"
#include "qct/runtime/Error.h"

#include <dlfcn.h>

#include <mutex>
#include <vector>

namespace qct::rt {

namespace {
// The C ABI of compiler/include/qct/CAPI/qct_compiler.h (version 1), spelled
// here so the runtime needs none of the compiler's headers.
constexpr int kCompilerAbiVersion = 1;
using AbiVersionFn = int (*)();
using CompileFn = int (*)(const char *, char **, char **, char **);
using FreeFn = void (*)(char *);

struct CompilerLibrary {
  CompileFn compile = nullptr;
  FreeFn release = nullptr;
  std::string path;
};

/// Where libqct_runtime.so itself lives: the build and an install put
/// libqct_compiler.so beside it.
std::string ownDirectory() {
  Dl_info info{};
  if (!dladdr(reinterpret_cast<void *>(&ownDirectory), &info) ||
      !info.dli_fname)
    return "";
  std::string self = info.dli_fname;
  std::size_t slash = self.rfind('/');
  return slash == std::string::npos ? "" : self.substr(0, slash);
}

const CompilerLibrary &library() {
  static std::once_flag once;
  static CompilerLibrary lib;
  static std::string failure;
  std::call_once(once, [] {
    std::vector<std::string> candidates;
    std::string named = env::get("QCT_COMPILER_LIBRARY");
    if (!named.empty()) {
      candidates.push_back(named);
    } else {
      std::string dir = ownDirectory();
      if (!dir.empty())
        candidates.push_back(dir + "/libqct_compiler.so");
      candidates.push_back("libqct_compiler.so");
    }
    std::string tried;
    void *handle = openFirst(candidates, lib.path, tried);
    if (!handle && named.empty() && !QCT_RUNTIME_HAS_COMPILER) {
      // Not a broken install but one without the compiler: say that, in one
      // line, rather than list the paths tried.
      failure = "this qct was built without its compiler (LLVM/MLIR 22 was "
                "not found, or QCT_BUILD_COMPILER was OFF), so specs cannot be "
                "compiled; "
                "rebuild or reinstall where llvm-22-dev and libmlir-22-dev are "
                "installed, or load a generated kernel (KERNEL.cu with its "
                ".json)";
      return;
    }
    if (!handle) {
      failure = "the qct compiler library (libqct_compiler.so) could not be "
                "loaded, so specs cannot be compiled at run time; load a "
                "generated kernel (qct compile SPEC -o DIR) or set "
                "QCT_COMPILER_LIBRARY. Tried:\n" +
                tried;
      return;
    }
    auto version = reinterpret_cast<AbiVersionFn>(
        symbol(handle, "qct_compiler_abi_version"));
    lib.compile =
        reinterpret_cast<CompileFn>(symbol(handle, "qct_compiler_compile_spec"));
    lib.release = reinterpret_cast<FreeFn>(symbol(handle, "qct_compiler_free"));
    if (!version || !lib.compile || !lib.release) {
      failure = lib.path + " is not a qct compiler library (missing symbols)";
      lib.compile = nullptr;
    } else if (version() != kCompilerAbiVersion) {
      failure = lib.path + " has compiler ABI version " +
                std::to_string(version()) + ", this runtime needs " +
                std::to_string(kCompilerAbiVersion);
      lib.compile = nullptr;
    }
  });
  if (!lib.compile)
    fail(QCT_ERR_COMPILER_UNAVAILABLE, failure);
  return lib;
}
} // namespace

CompiledSpec compileSpec(const std::string &specPath) {
  const CompilerLibrary &lib = library();
  char *source = nullptr, *metadata = nullptr, *error = nullptr;
  int rc = lib.compile(specPath.c_str(), &source, &metadata, &error);
  CompiledSpec out;
  std::string message = error ? error : "";
  if (rc == 0 && source && metadata) {
    out.cudaSource = source;
    out.metadataJson = metadata;
  }
  lib.release(source);
  lib.release(metadata);
  lib.release(error);
  if (rc != 0 || out.cudaSource.empty())
    fail(QCT_ERR_SPEC, "the compiler rejected " + specPath + ":\n" + message);
  return out;
}

} // namespace qct::rt
