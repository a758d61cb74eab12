//===- DynLib.cpp - dlopen helpers
//-----------------------------------------===//
#include "qct/runtime/DynLib.h"

#include <dlfcn.h>

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

void *symbol(void *handle, const char *name) { return dlsym(handle, name); }

} // namespace qct::rt
