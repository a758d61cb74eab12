//===- Env.cpp - The runtime's environment variable table
//------------------===//
#include "qct/runtime/Env.h"

#include "qct/runtime/Error.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <limits>

namespace qct::rt::env {

namespace {
// Defaults that depend on other variables are spelled as text here and
// resolved in get(): "@cache" means defaultCacheDir().
const qct_env_var kTable[] = {
    {"QCT_CACHE_DIR", "path", "$XDG_CACHE_HOME/qct or ~/.cache/qct",
     "Folder of the on-disk kernel cache (entries under v1/).", 0},
    {"QCT_CACHE_DISABLE", "bool", "0",
     "1/true/yes/on: bypass the in-memory and the disk cache (always "
     "compile); 0/false/no/off or empty: use them.",
     0},
    {"QCT_CACHE_MAX_BYTES", "bytes", "1073741824",
     "Size bound of the disk cache (a byte count, optionally with a K, M or G "
     "suffix: powers of 1024); least recently used entries are evicted.",
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
  std::string lower;
  for (char c : v)
    lower += char(std::tolower(static_cast<unsigned char>(c)));
  if (lower.empty() || lower == "0" || lower == "false" || lower == "no" ||
      lower == "off")
    return false;
  if (lower == "1" || lower == "true" || lower == "yes" || lower == "on")
    return true;
  // Guessing would turn a typo into the opposite of what was meant.
  fail(QCT_ERR_INVALID_ARGUMENT,
       std::string(name) + "=" + v +
           " is not a boolean; set it to 1, true, yes or on (or 0, false, no, "
           "off, or leave it empty)");
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

std::uint64_t getBytes(const char *name) {
  std::string v = get(name);
  auto bad = [&]() -> std::uint64_t {
    fail(QCT_ERR_INVALID_ARGUMENT,
         std::string(name) + "=" + v +
             " is not a size; set it to a byte count, optionally with a K, M "
             "or G suffix (powers of 1024), e.g. 1073741824 or 1G");
  };
  std::size_t digits = 0;
  while (digits < v.size() &&
         std::isdigit(static_cast<unsigned char>(v[digits])))
    ++digits;
  if (digits == 0 || v.size() - digits > 1)
    return bad();
  int shift = 0;
  if (digits < v.size()) {
    switch (std::toupper(static_cast<unsigned char>(v[digits]))) {
    case 'K':
      shift = 10;
      break;
    case 'M':
      shift = 20;
      break;
    case 'G':
      shift = 30;
      break;
    default:
      return bad();
    }
  }
  errno = 0;
  unsigned long long n =
      std::strtoull(v.substr(0, digits).c_str(), nullptr, 10);
  if (errno == ERANGE ||
      n > (std::numeric_limits<std::uint64_t>::max() >> shift))
    return bad();
  return std::uint64_t(n) << shift;
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
