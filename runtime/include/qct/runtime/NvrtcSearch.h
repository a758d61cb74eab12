//===- qct/runtime/NvrtcSearch.h - Where NVRTC is looked for ----*- C++ -*-===//
//
// libnvrtc.so.13 is searched in one order, so every machine finds it the same
// way and `qct env` can say which one was loaded and why:
//
//   1. $QCT_NVRTC_PATH (the library, or its folder): an explicit choice, so a
//      failure there ends the search instead of loading another NVRTC;
//   2. a libnvrtc.so.13 the process has already loaded (torch's, a host
//      application's): qct then compiles with the NVRTC torch uses, and a
//      second copy is not mapped beside it;
//   3. $CUDA_HOME/lib64, $CUDA_HOME/lib, then 4. $CUDA_PATH likewise: the
//      toolkit the user named (lib/ for conda-style prefixes);
//   5. the pip wheel nvidia-cuda-nvrtc (what torch's CUDA 13 wheels pull
//      in): $QCT_NVRTC_WHEEL_DIR, which the Python binding sets to the
//      wheel's site-packages/nvidia/cu13/lib before anything loads NVRTC (the
//      runtime cannot see Python's sys.path); unset, the site-packages of an
//      installed qct (libqct_runtime.so in site-packages/qct/lib), so a C++
//      program linking that library finds the wheel too;
//   6. /usr/local/cuda/lib64, /usr/local/cuda-13/lib64: the toolkit's default
//      install;
//   7. the loader path (LD_LIBRARY_PATH, the ldconfig cache) last: it is set
//      for other programs too, and "the loader path" is all found_by could say
//      of it; every source above names the folder and why it was chosen.
//
// Each source may be absent (a variable unset); the search records why each
// one before the hit was passed over, for qct_toolchain_info_json and for the
// one-line error when none has NVRTC.
//
//===----------------------------------------------------------------------===//
#ifndef QCT_RUNTIME_NVRTCSEARCH_H
#define QCT_RUNTIME_NVRTCSEARCH_H

#include "qct/runtime/DynLib.h"

#include <string>
#include <vector>

namespace qct::rt {

/// One place NVRTC may be.
struct NvrtcSource {
  /// How `tried` names it ("CUDA_HOME=/opt/cuda", "/usr/local/cuda/lib64").
  std::string label;
  /// What found_by says when NVRTC came from here.
  std::string foundBy;
  /// Non-empty: nothing to try here, and why ("unset").
  std::string absent;
  /// Why it was passed over when none of `files` exists.
  std::string missing;
  /// Tried in order; a bare soname is the loader's own search.
  std::vector<std::string> files;
  /// Only a library already in the process counts (RTLD_NOLOAD); such a
  /// source is never listed in `tried`.
  bool alreadyLoaded = false;
  /// An explicit choice: a failure here ends the search.
  bool exclusive = false;
};

/// The fixed part of the order; tests replace it to search nowhere real.
struct NvrtcSearchDefaults {
  std::string soname = "libnvrtc.so.13";
  std::vector<std::string> toolkits = {"/usr/local/cuda", "/usr/local/cuda-13"};
  /// Where libqct_runtime.so is: <site-packages>/qct/lib when installed.
  std::string runtimeFolder = ownFolder();
};

/// The search order for the current environment (QCT_NVRTC_PATH, CUDA_HOME,
/// CUDA_PATH, QCT_NVRTC_WHEEL_DIR), as documented above.
std::vector<NvrtcSource>
nvrtcSearchOrder(const NvrtcSearchDefaults &defaults = {});

/// Where the search ended.
struct NvrtcLocation {
  void *handle = nullptr; ///< dlopen handle; nullptr if not found
  std::string path;       ///< the file loaded
  std::string foundBy;    ///< the source's foundBy
  /// Every source passed over before the hit, "<label> (<why>)".
  std::vector<std::string> tried;
  /// Not found: one line naming every source tried and what to install.
  std::string error;
};

/// Tries each source in order (never throws).
NvrtcLocation findNvrtc(const std::vector<NvrtcSource> &order,
                        const std::string &soname = "libnvrtc.so.13");

} // namespace qct::rt

#endif // QCT_RUNTIME_NVRTCSEARCH_H
