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

/// dlopen(file, RTLD_NOW | RTLD_LOCAL); on failure nullptr with `error` set to
/// dlerror's text.
void *openLibrary(const std::string &file, std::string &error);

/// The handle of a library the process has already loaded under `soname` (by
/// any path: the loader matches sonames too), else nullptr. Never loads.
void *openIfLoaded(const std::string &soname);

/// The file the loader mapped for `handle` (the path it found when given a
/// bare soname), "" if it cannot tell.
std::string loadedPath(void *handle);

/// The folder part of a path ("" for a bare name).
std::string folderOf(const std::string &path);

/// The folder of the library (or program) this code was linked into.
std::string ownFolder();

void *symbol(void *handle, const char *name);

} // namespace qct::rt

#endif // QCT_RUNTIME_DYNLIB_H
