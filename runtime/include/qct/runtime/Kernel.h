//===- qct/runtime/Kernel.h - A loaded, compiled kernel --------*- C++ -*-===//
//
// Loading resolves the schedule, computes the cache key and finds the cubin
// in the in-memory cache, the disk cache or by compiling with NVRTC. Modules
// are loaded per CUDA context on first use (or by prepare()), each with its
// own device error flag, and shared by every handle with the same key.
//
//===----------------------------------------------------------------------===//
#ifndef QCT_RUNTIME_KERNEL_H
#define QCT_RUNTIME_KERNEL_H

#include "qct/kernel_args.h"
#include "qct/qct.h"
#include "qct/runtime/CacheKey.h"
#include "qct/runtime/Driver.h"
#include "qct/runtime/Metadata.h"
#include "qct/runtime/Validate.h"

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace qct::rt {

struct LoadOptions {
  std::string arch; ///< empty: $QCT_ARCH, else the current device's
  std::vector<std::string> schedule;
  std::vector<std::string> extraOptions;
  bool disableCache = false;
};

struct ContextState {
  CUmodule module = nullptr;
  CUfunction function = nullptr;
  CUdeviceptr errorFlag = 0;
  std::uint32_t smemLimit = 48 * 1024; ///< dynamic smem allowed so far
};

/// One compiled binary; shared through the in-memory cache.
struct CompiledBinary {
  std::string key, arch, cubin, log;
  qct_kernel_stats stats{};
  std::mutex mu;
  std::map<CUcontext, ContextState> contexts; // never unloaded: see docs
};

class Kernel {
public:
  /// `source`: a path or the text (a string with a newline is text).
  /// `metadata`: JSON text, a path, or empty for "<source stem>.json".
  static std::unique_ptr<Kernel> load(const std::string &source,
                                      const std::string &metadata,
                                      const LoadOptions &options);

  KernelMeta meta;
  std::string source, sourceName, arch, optionsText, scheduleText;
  std::vector<std::string> options;
  CacheKeyInputs keyInputs;
  std::string key;
  qct_cache_origin origin = QCT_ORIGIN_COMPILED;
  std::shared_ptr<CompiledBinary> binary;
  /// Sizes derived for the last launch's shapes (guarded by memoMu).
  mutable std::mutex memoMu;
  mutable ShapeMemo memo;

  void validate(const qct_tensor *tensors, std::size_t count,
                qct_launch_plan &plan, qct_kernel_args &args) const;
  /// The module, function and error flag of the current context.
  ContextState &prepare();
  void launch(const qct_tensor *tensors, std::size_t count, void *stream);
  std::uint32_t checkErrors(void *stream);
};

/// The NVRTC options for `arch`, the resolved schedule and extra options.
std::vector<std::string>
nvrtcOptions(const std::string &arch,
             const std::map<std::string, std::int64_t> &schedule,
             const std::vector<std::string> &extra);

/// The arch used when none is given: $QCT_ARCH, else the current device's.
std::string defaultArch();

void clearMemoryCache();

} // namespace qct::rt

#endif // QCT_RUNTIME_KERNEL_H
