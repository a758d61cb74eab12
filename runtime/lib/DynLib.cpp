//===- DynLib.cpp - dlopen helpers
//-----------------------------------------===//
#include "qct/runtime/DynLib.h"

#include <dlfcn.h>
#include <link.h>

namespace qct::rt {

void *openFirst(const std::vector<std::string> &candidates, std::string &loaded,
                std::string &tried) {
  for (const std::string &c : candidates) {
    if (c.empty())
      continue;
    if (void *h = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL)) {
      loaded = c;
      return h;
    }
    const char *err = dlerror();
    tried += "  " + c + ": " + (err ? err : "not loadable") + "\n";
  }
  return nullptr;
}

void *openLibrary(const std::string &file, std::string &error) {
  if (void *h = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL))
    return h;
  const char *err = dlerror();
  error = err ? err : file + ": not loadable";
  return nullptr;
}

void *openIfLoaded(const std::string &soname) {
  void *h = dlopen(soname.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  if (!h)
    dlerror(); // a miss is not an error for the next caller of dlerror
  return h;
}

std::string loadedPath(void *handle) {
  struct link_map *map = nullptr;
  if (!handle || dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || !map ||
      !map->l_name)
    return "";
  return map->l_name;
}

std::string folderOf(const std::string &path) {
  std::size_t slash = path.find_last_of('/');
  if (slash == std::string::npos)
    return "";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string ownFolder() {
  Dl_info info{};
  if (!dladdr(reinterpret_cast<void *>(&ownFolder), &info) || !info.dli_fname)
    return "";
  return folderOf(info.dli_fname);
}

void *symbol(void *handle, const char *name) { return dlsym(handle, name); }

} // namespace qct::rt
