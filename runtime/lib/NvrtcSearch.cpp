//===- NvrtcSearch.cpp - Where NVRTC is looked for ------------------------===//
#include "qct/runtime/NvrtcSearch.h"

#include "qct/runtime/DynLib.h"
#include "qct/runtime/Env.h"

#include <cstdlib>
#include <sys/stat.h>

namespace qct::rt {

namespace {
bool exists(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

bool isFolder(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::string withoutTrailingSlash(std::string path) {
  while (path.size() > 1 && path.back() == '/')
    path.pop_back();
  return path;
}

NvrtcSource toolkitRoot(const char *var, const std::string &soname) {
  NvrtcSource s;
  std::string root = withoutTrailingSlash(env::get(var));
  if (root.empty()) {
    s.label = var;
    s.absent = "unset";
    return s;
  }
  s.label = s.foundBy = std::string(var) + "=" + root;
  s.missing = "no lib64/ or lib/" + soname;
  s.files = {root + "/lib64/" + soname, root + "/lib/" + soname};
  return s;
}

/// The wheel's nvidia/cu13/lib: named by QCT_NVRTC_WHEEL_DIR, else in the
/// site-packages that holds this library (qct/lib/libqct_runtime.so).
NvrtcSource wheelSource(const NvrtcSearchDefaults &defaults) {
  const std::string &soname = defaults.soname;
  NvrtcSource s;
  std::string dir = withoutTrailingSlash(env::get("QCT_NVRTC_WHEEL_DIR"));
  if (!dir.empty()) {
    s.label = "pip wheel nvidia-cuda-nvrtc in " + dir;
    s.missing = "no " + soname;
  } else if (!defaults.runtimeFolder.empty()) {
    std::string sitePackages = defaults.runtimeFolder + "/../..";
    if (char *real = ::realpath(sitePackages.c_str(), nullptr)) {
      std::string beside = std::string(real) + "/nvidia/cu13/lib";
      std::free(real);
      if (exists(beside + "/" + soname)) {
        dir = beside;
        s.label = "pip wheel nvidia-cuda-nvrtc beside qct in " + dir;
      }
    }
  }
  if (dir.empty()) {
    s.label = "pip wheel nvidia-cuda-nvrtc";
    s.absent = "not installed; QCT_NVRTC_WHEEL_DIR unset";
    return s;
  }
  s.foundBy = "pip wheel nvidia-cuda-nvrtc (" + dir + ")";
  s.files = {dir + "/" + soname};
  return s;
}

std::string joined(const std::vector<std::string> &items) {
  std::string out;
  for (const std::string &item : items)
    out += (out.empty() ? "" : ", ") + item;
  return out;
}
} // namespace

std::vector<NvrtcSource> nvrtcSearchOrder(const NvrtcSearchDefaults &defaults) {
  const std::string &soname = defaults.soname;
  std::vector<NvrtcSource> order;

  std::string named = env::get("QCT_NVRTC_PATH");
  if (!named.empty()) {
    NvrtcSource s;
    s.label = s.foundBy = "QCT_NVRTC_PATH=" + named;
    s.files = {isFolder(named) ? withoutTrailingSlash(named) + "/" + soname
                               : named};
    s.missing = "no such file";
    s.exclusive = true;
    order.push_back(s);
  }

  NvrtcSource loaded;
  loaded.label = "a " + soname + " already loaded";
  loaded.foundBy = "already loaded";
  loaded.files = {soname};
  loaded.alreadyLoaded = true;
  order.push_back(loaded);

  order.push_back(toolkitRoot("CUDA_HOME", soname));
  order.push_back(toolkitRoot("CUDA_PATH", soname));

  order.push_back(wheelSource(defaults));

  for (const std::string &root : defaults.toolkits) {
    NvrtcSource s;
    s.label = root + "/lib64";
    s.foundBy = "CUDA toolkit " + root;
    s.missing = "none";
    s.files = {root + "/lib64/" + soname};
    order.push_back(s);
  }

  NvrtcSource path;
  path.label = "the loader path";
  path.foundBy = "loader path";
  path.missing = "not in LD_LIBRARY_PATH or the ldconfig cache";
  path.files = {soname};
  order.push_back(path);
  return order;
}

NvrtcLocation findNvrtc(const std::vector<NvrtcSource> &order,
                        const std::string &soname) {
  NvrtcLocation at;
  for (const NvrtcSource &source : order) {
    if (source.alreadyLoaded) {
      for (const std::string &file : source.files)
        if (void *h = openIfLoaded(file)) {
          at.handle = h;
          at.path = loadedPath(h);
          at.foundBy = source.foundBy;
          return at;
        }
      continue;
    }
    if (!source.absent.empty()) {
      at.tried.push_back(source.label + " (" + source.absent + ")");
      continue;
    }
    std::string why;
    for (const std::string &file : source.files) {
      bool bare = file.find('/') == std::string::npos;
      if (!bare && !exists(file))
        continue;
      std::string error;
      if (void *h = openLibrary(file, error)) {
        at.handle = h;
        std::string mapped = loadedPath(h);
        at.path = bare && !mapped.empty() ? mapped : file;
        at.foundBy = source.foundBy;
        return at;
      }
      // A bare soname the loader did not find is missing, not broken.
      if (bare && error.find("No such file") != std::string::npos)
        continue;
      if (why.empty())
        why = error;
    }
    at.tried.push_back(source.label + " (" +
                       (why.empty() ? source.missing : why) + ")");
    if (source.exclusive) {
      at.error = "NVRTC (" + soname + ") not loaded: " + at.tried.back() +
                 "; point QCT_NVRTC_PATH at a CUDA 13 " + soname +
                 " (or its folder), or unset it to search CUDA_HOME, "
                 "CUDA_PATH, the pip wheel nvidia-cuda-nvrtc, "
                 "/usr/local/cuda and the loader path";
      return at;
    }
  }
  at.error = "NVRTC (" + soname + ") not found: tried " + joined(at.tried) +
             "; install the CUDA 13 toolkit or `pip install "
             "nvidia-cuda-nvrtc` (CUDA 13), or set CUDA_HOME to a CUDA 13 "
             "toolkit";
  return at;
}

} // namespace qct::rt
