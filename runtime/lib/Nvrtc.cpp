//===- Nvrtc.cpp - NVRTC through dlopen
//------------------------------------===//
#include "qct/runtime/Nvrtc.h"

#include "qct/runtime/DynLib.h"
#include "qct/runtime/Error.h"
#include "qct/runtime/NvrtcSearch.h"

#include <cstdlib>
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

Nvrtc &Nvrtc::instance() {
  static Nvrtc nvrtc;
  static std::once_flag once;
  std::call_once(once, [] {
    try {
      nvrtc.load();
    } catch (const RuntimeError &e) {
      nvrtc.error_ = e.what();
    }
  });
  return nvrtc;
}

Nvrtc &Nvrtc::get() {
  Nvrtc &nvrtc = instance();
  if (!nvrtc.loaded())
    fail(QCT_ERR_NVRTC_UNAVAILABLE, nvrtc.error_);
  return nvrtc;
}

const Nvrtc &Nvrtc::probe() { return instance(); }

void Nvrtc::load() {
  NvrtcLocation at = findNvrtc(nvrtcSearchOrder());
  tried_ = at.tried;
  if (!at.handle)
    fail(QCT_ERR_NVRTC_UNAVAILABLE, at.error);
  handle_ = at.handle;
  path_ = at.path;
  foundBy_ = at.foundBy;
  auto need = [&](const char *name) {
    void *p = symbol(handle_, name);
    if (!p)
      fail(QCT_ERR_NVRTC_UNAVAILABLE,
           path_ + " (" + foundBy_ + ") lacks " + name);
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
    fail(QCT_ERR_NVRTC_UNAVAILABLE,
         path_ + " (" + foundBy_ + "): nvrtcVersion failed");
  preloadBuiltins();
}

// NVRTC dlopens libnvrtc-builtins.so.<major>.<minor> by soname when it
// compiles, and neither the toolkit's nor the pip wheel's libnvrtc carries a
// RUNPATH: from a folder outside the loader path ($CUDA_HOME/lib64, the
// wheel's nvidia/cu13/lib) that lookup fails ("failed to open
// libnvrtc-builtins.so.13.0"). Loading the builtins from NVRTC's own folder
// first makes the soname resolve to the library already loaded.
void Nvrtc::preloadBuiltins() {
  // The folder of the file opened first (a CUDA_HOME of symlinks may carry
  // the builtins too), then that of the file it resolves to.
  std::vector<std::string> folders = {folderOf(path_)};
  if (char *real = ::realpath(path_.c_str(), nullptr)) {
    folders.push_back(folderOf(real));
    std::free(real);
  }
  Dl_info info;
  if (dladdr(createProgram_, &info) && info.dli_fname)
    folders.push_back(folderOf(info.dli_fname));
  std::string name = "libnvrtc-builtins.so." + std::to_string(major_) + "." +
                     std::to_string(minor_);
  for (const std::string &folder : folders) {
    if (folder.empty())
      continue;
    std::string builtins = folder + "/" + name;
    builtinsHandle_ = dlopen(builtins.c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (builtinsHandle_) {
      builtinsPath_ = builtins;
      return;
    }
    dlerror();
  }
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
