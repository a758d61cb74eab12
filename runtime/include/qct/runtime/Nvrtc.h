//===- qct/runtime/Nvrtc.h - NVRTC, loaded at run time ---------*- C++ -*-===//
//
// NVRTC is dlopened (never linked) so the runtime library loads anywhere; it
// is searched in $QCT_NVRTC_PATH, the loader path, $CUDA_HOME/lib64,
// $CUDA_PATH/lib64 and /usr/local/cuda/lib64; its builtins library is
// preloaded from the same folder.
//
//===----------------------------------------------------------------------===//
#ifndef QCT_RUNTIME_NVRTC_H
#define QCT_RUNTIME_NVRTC_H

#include "qct/qct.h"

#include <string>
#include <utility>
#include <vector>

namespace qct::rt {

struct NvrtcResult {
  std::string cubin;
  std::string log;
};

/// A named header passed to NVRTC (name as #included, contents).
using NamedHeader = std::pair<std::string, std::string>;

class Nvrtc {
public:
  /// The process-wide instance; throws RuntimeError(QCT_ERR_NVRTC_UNAVAILABLE)
  /// with every path tried when NVRTC cannot be loaded.
  static Nvrtc &get();

  int major() const { return major_; }
  int minor() const { return minor_; }
  std::string version() const;
  const std::string &path() const { return path_; }

  /// Compiles to a cubin. On an NVRTC error throws
  /// RuntimeError(QCT_ERR_COMPILE) with the log, options and the numbered
  /// source attached.
  NvrtcResult compile(const std::string &source, const std::string &fileName,
                      const std::vector<NamedHeader> &headers,
                      const std::vector<std::string> &options) const;

private:
  Nvrtc() = default;
  void load();
  void preloadBuiltins();
  std::string path_;
  int major_ = 0, minor_ = 0;
  void *handle_ = nullptr;
  void *builtinsHandle_ = nullptr;
  // Function pointers (types in Nvrtc.cpp).
  void *createProgram_, *compileProgram_, *destroyProgram_, *getLogSize_,
      *getLog_, *getCubinSize_, *getCubin_, *getErrorString_;
};

} // namespace qct::rt

#endif // QCT_RUNTIME_NVRTC_H
