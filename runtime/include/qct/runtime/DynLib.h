//===- qct/runtime/DynLib.h - dlopen helpers -------------------*- C++ -*-===//
#ifndef QCT_RUNTIME_DYNLIB_H
#define QCT_RUNTIME_DYNLIB_H

#include <string>
#include <vector>

namespace qct::rt {

/// dlopens the first loadable candidate (RTLD_NOW | RTLD_LOCAL). `tried`
/// collects "path: dlerror" for each failure, for the error message.
void *openFirst(const std::vector<std::string> &candidates, std::string &loaded,
                std::string &tried);

void *symbol(void *handle, const char *name);

} // namespace qct::rt

#endif // QCT_RUNTIME_DYNLIB_H
