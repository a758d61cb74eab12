//===- Nvrtc.cpp - NVRTC through dlopen
//------------------------------------===//
#include "qct/runtime/Nvrtc.h"

#include "qct/runtime/DynLib.h"
#include "qct/runtime/Env.h"
#include "qct/runtime/Error.h"

#include <dlfcn.h>
#include <mutex>

namespace qct::rt {

namespace {
// NVRTC's C API, declared here so the runtime builds without CUDA headers.
using nvrtcResult = int;
using nvrtcProgram = void *;
using CreateFn = nvrtcResult (*)(nvrtcProgram *, const char *, const char *,
                                 int, const char *const *, const char *const *);
using CompileFn = nvrtcResult (*)(nvrtcProgram, int, const char *const *);
using DestroyFn = nvrtcResult (*)(nvrtcProgram *);
using SizeFn = nvrtcResult (*)(nvrtcProgram, size_t *);
using GetFn = nvrtcResult (*)(nvrtcProgram, char *);
using VersionFn = nvrtcResult (*)(int *, int *);
using ErrStrFn = const char *(*)(nvrtcResult);
} // namespace

Nvrtc &Nvrtc::get() {
  static Nvrtc instance;
  static std::once_flag once;
  static std::string loadError;
  std::call_once(once, [] {
    try {
      instance.load();
    } catch (const RuntimeError &e) {
      loadError = e.what();
    }
  });
  if (!instance.handle_)
    fail(QCT_ERR_NVRTC_UNAVAILABLE, loadError);
  return instance;
}

void Nvrtc::load() {
  std::vector<std::string> candidates;
  std::string explicitPath = env::get("QCT_NVRTC_PATH");
  if (!explicitPath.empty())
    candidates.push_back(explicitPath);
  candidates.push_back("libnvrtc.so.13");
  for (const char *root : {"CUDA_HOME", "CUDA_PATH"}) {
    std::string r = env::get(root);
    if (!r.empty())
      candidates.push_back(r + "/lib64/libnvrtc.so.13");
  }
  candidates.push_back("/usr/local/cuda/lib64/libnvrtc.so.13");
  candidates.push_back("/usr/local/cuda-13/lib64/libnvrtc.so.13");
  candidates.push_back("/usr/lib/x86_64-linux-gnu/libnvrtc.so.13");
  std::string tried;
  handle_ = openFirst(candidates, path_, tried);
  if (!handle_)
    fail(QCT_ERR_NVRTC_UNAVAILABLE,
         "NVRTC (libnvrtc.so.13) could not be loaded; set QCT_NVRTC_PATH or "
         "CUDA_HOME. Tried:\n" +
             tried);
  auto need = [&](const char *name) {
    void *p = symbol(handle_, name);
    if (!p)
      fail(QCT_ERR_NVRTC_UNAVAILABLE, path_ + " lacks " + name);
    return p;
  };
  createProgram_ = need("nvrtcCreateProgram");
  compileProgram_ = need("nvrtcCompileProgram");
  destroyProgram_ = need("nvrtcDestroyProgram");
  getLogSize_ = need("nvrtcGetProgramLogSize");
  getLog_ = need("nvrtcGetProgramLog");
  getCubinSize_ = need("nvrtcGetCUBINSize");
  getCubin_ = need("nvrtcGetCUBIN");
  getErrorString_ = need("nvrtcGetErrorString");
  if (reinterpret_cast<VersionFn>(need("nvrtcVersion"))(&major_, &minor_) != 0)
    fail(QCT_ERR_NVRTC_UNAVAILABLE, path_ + ": nvrtcVersion failed");
  preloadBuiltins();
}

// NVRTC dlopens libnvrtc-builtins.so.<major>.<minor> by soname when it
// compiles; if NVRTC itself came from a folder outside the loader path (e.g.
// $CUDA_HOME/lib64), that lookup could fail. Loading the builtins from NVRTC's
// own folder first makes the soname resolve to the already loaded library.
void Nvrtc::preloadBuiltins() {
  Dl_info info;
  if (!dladdr(createProgram_, &info) || !info.dli_fname)
    return;
  std::string self = info.dli_fname;
  std::size_t slash = self.find_last_of('/');
  if (slash == std::string::npos)
    return;
  std::string builtins = self.substr(0, slash) + "/libnvrtc-builtins.so." +
                         std::to_string(major_) + "." + std::to_string(minor_);
  builtinsHandle_ = dlopen(builtins.c_str(), RTLD_NOW | RTLD_GLOBAL);
}

std::string Nvrtc::version() const {
  return std::to_string(major_) + "." + std::to_string(minor_);
}

NvrtcResult Nvrtc::compile(const std::string &source,
                           const std::string &fileName,
                           const std::vector<NamedHeader> &headers,
                           const std::vector<std::string> &options) const {
  auto errStr = reinterpret_cast<ErrStrFn>(getErrorString_);
  std::vector<const char *> hdrText, hdrName, opts;
  for (const auto &h : headers) {
    hdrName.push_back(h.first.c_str());
    hdrText.push_back(h.second.c_str());
  }
  for (const auto &o : options)
    opts.push_back(o.c_str());
  nvrtcProgram prog = nullptr;
  nvrtcResult rc = reinterpret_cast<CreateFn>(createProgram_)(
      &prog, source.c_str(), fileName.c_str(), int(headers.size()),
      hdrText.data(), hdrName.data());
  if (rc != 0)
    fail(QCT_ERR_COMPILE, std::string("nvrtcCreateProgram: ") + errStr(rc));
  struct Destroy {
    void *fn;
    nvrtcProgram *p;
    ~Destroy() { reinterpret_cast<DestroyFn>(fn)(p); }
  } destroy{destroyProgram_, &prog};

  rc = reinterpret_cast<CompileFn>(compileProgram_)(prog, int(opts.size()),
                                                    opts.data());
  NvrtcResult result;
  size_t logSize = 0;
  reinterpret_cast<SizeFn>(getLogSize_)(prog, &logSize);
  if (logSize > 1) {
    result.log.resize(logSize);
    reinterpret_cast<GetFn>(getLog_)(prog, &result.log[0]);
    result.log.resize(logSize - 1); // drop the terminating NUL
  }
  if (rc != 0) {
    RuntimeError e(QCT_ERR_COMPILE,
                   "NVRTC failed to compile " + fileName + ": " + errStr(rc));
    e.log = result.log;
    for (const auto &o : options)
      e.options += o + "\n";
    e.source = numberLines(source);
    throw e;
  }
  size_t cubinSize = 0;
  reinterpret_cast<SizeFn>(getCubinSize_)(prog, &cubinSize);
  result.cubin.resize(cubinSize);
  if (cubinSize)
    reinterpret_cast<GetFn>(getCubin_)(prog, &result.cubin[0]);
  return result;
}

} // namespace qct::rt
