//===- qct/runtime/Nvrtc.h - NVRTC, loaded at run time ---------*- C++ -*-===//
//
// NVRTC is dlopened (never linked) so the runtime library loads anywhere; it
// is searched in the order of NvrtcSearch.h, and its builtins library is
// preloaded from the folder it came from.
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
  /// with one line naming every source tried when NVRTC cannot be loaded.
  static Nvrtc &get();
  /// The same instance, loaded or not (never throws): for reports of what
  /// was found, where and why (qct_toolchain_info_json).
  static const Nvrtc &probe();

  bool loaded() const { return error_.empty() && handle_; }
  /// Why NVRTC is not loaded (one line); empty when it is.
  const std::string &error() const { return error_; }
  /// The source that had it (NvrtcSearch.h), e.g. "CUDA_HOME=/opt/cuda".
  const std::string &foundBy() const { return foundBy_; }
  /// Each source passed over before it, with why.
  const std::vector<std::string> &tried() const { return tried_; }
  /// The builtins library preloaded beside it; empty when NVRTC is left to
  /// find it itself.
  const std::string &builtinsPath() const { return builtinsPath_; }

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
  static Nvrtc &instance();
  void load();
  void preloadBuiltins();
  std::string path_, foundBy_, builtinsPath_, error_;
  std::vector<std::string> tried_;
  int major_ = 0, minor_ = 0;
  void *handle_ = nullptr;
  void *builtinsHandle_ = nullptr;
  // Function pointers (types in Nvrtc.cpp).
  void *createProgram_, *compileProgram_, *destroyProgram_, *getLogSize_,
      *getLog_, *getCubinSize_, *getCubin_, *getErrorString_;
};

} // namespace qct::rt

#endif // QCT_RUNTIME_NVRTC_H
