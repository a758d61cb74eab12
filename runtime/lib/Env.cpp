//===- Env.cpp - The runtime's environment variable table
//------------------===//
#include "qct/runtime/Env.h"

#include "qct/runtime/Error.h"

#include <cstdlib>
#include <cstring>

namespace qct::rt::env {

namespace {
// Defaults that depend on other variables are spelled as text here and
// resolved in get(): "@cache" means defaultCacheDir().
const qct_env_var kTable[] = {
    {"QCT_CACHE_DIR", "path", "$XDG_CACHE_HOME/qct or ~/.cache/qct",
     "Folder of the on-disk kernel cache (entries under v1/).", 0},
    {"QCT_CACHE_DISABLE", "bool", "0",
     "1: bypass the in-memory and the disk cache (always compile).", 0},
    {"QCT_CACHE_MAX_BYTES", "int", "1073741824",
     "Size bound of the disk cache; least recently used entries are evicted.",
     0},
    {"QCT_ARCH", "string", "",
     "GPU arch to compile for (e.g. sm_90a, sm_90) instead of the current "
     "device's; lets compile-only machines (CI) use NVRTC without a GPU.",
     1},
    {"QCT_NVRTC_PATH", "path", "",
     "Explicit libnvrtc.so.13 (or its folder), used instead of any other and "
     "an error if it does not load; empty: a libnvrtc.so.13 already loaded, "
     "$CUDA_HOME, $CUDA_PATH, the pip wheel, /usr/local/cuda, the loader "
     "path (docs/runtime.md).",
     1},
    {"QCT_CUDA_DRIVER_PATH", "path", "libcuda.so.1",
     "The CUDA driver library to dlopen (the default: one already loaded, "
     "else the loader path).",
     0},
    {"CUDA_HOME", "path", "",
     "CUDA toolkit root searched for lib64/ and lib/libnvrtc.so.13, after a "
     "libnvrtc already loaded.",
     1},
    {"CUDA_PATH", "path", "",
     "Alternative CUDA toolkit root searched after CUDA_HOME.", 1},
    {"QCT_NVRTC_WHEEL_DIR", "path", "",
     "The lib folder of the pip wheel nvidia-cuda-nvrtc "
     "(site-packages/nvidia/cu13/lib), searched after CUDA_PATH. The runtime "
     "cannot see Python's site-packages: the Python binding sets it when "
     "unset and the wheel is installed; set it by hand for a C++ program.",
     1},
    {"QCT_COMPILER_LIBRARY", "path", "",
     "The compiler library qct_kernel_load_spec dlopens to compile a spec at "
     "run time (the runtime itself links no LLVM/MLIR); empty: "
     "libqct_compiler.so beside libqct_runtime.so, then the loader path.",
     0},
    {"QCT_DUMP_DIR", "path", "",
     "If set, every NVRTC compile writes its source, options, log and cubin "
     "here (named by cache key).",
     0},
    {"QCT_VERBOSE", "int", "0",
     "1: print compile and cache events (hit, miss, eviction) on stderr.", 0},
};
} // namespace

const qct_env_var *table(std::size_t &count) {
  count = sizeof kTable / sizeof kTable[0];
  return kTable;
}

const qct_env_var &declared(const char *name) {
  for (const auto &v : kTable)
    if (std::strcmp(v.name, name) == 0)
      return v;
  fail(QCT_ERR_INTERNAL,
       std::string("undeclared environment variable ") + name);
}

std::string defaultCacheDir() {
  const char *xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg && *xdg)
    return std::string(xdg) + "/qct";
  const char *home = std::getenv("HOME");
  if (home && *home)
    return std::string(home) + "/.cache/qct";
  return "/tmp/qct-cache";
}

std::string get(const char *name) {
  const qct_env_var &var = declared(name);
  const char *value = std::getenv(name);
  if (value && *value)
    return value;
  if (std::strcmp(name, "QCT_CACHE_DIR") == 0)
    return defaultCacheDir();
  return var.default_value;
}

bool getBool(const char *name) {
  std::string v = get(name);
  return !(v.empty() || v == "0" || v == "false" || v == "no" || v == "off");
}

std::int64_t getInt(const char *name) {
  std::string v = get(name);
  char *end = nullptr;
  long long n = std::strtoll(v.c_str(), &end, 10);
  if (end == v.c_str() || *end != '\0')
    fail(QCT_ERR_INVALID_ARGUMENT,
         std::string(name) + "=" + v + " is not an integer");
  return n;
}

std::string outputAffectingValues() {
  std::string out;
  for (const auto &v : kTable)
    if (v.affects_output) {
      const char *value = std::getenv(v.name);
      out += v.name;
      out += '=';
      out += value ? value : "";
      out += '\n';
    }
  return out;
}

} // namespace qct::rt::env
