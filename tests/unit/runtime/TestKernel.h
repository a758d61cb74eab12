//===- TestKernel.h - A tiny hand-written kernel for runtime tests -*- C++
//-*-===//
//
// Not a generated kernel (those are written in parallel and change): a ragged
// byte transpose out[c][r] = src[r][c] + 1 with an offsets check, one schedule
// knob, and metadata in the docs/kernel-abi.md format.
//
//===----------------------------------------------------------------------===//
#ifndef QCT_TESTS_TESTKERNEL_H
#define QCT_TESTS_TESTKERNEL_H

#include <string>

namespace qct::test {

extern const char *const kTinySource;
/// Metadata for kTinySource; `extra` is spliced in before the closing brace.
std::string tinyMetadata(const std::string &extra = "");

/// A fresh empty folder under the test temp dir.
std::string freshDir(const std::string &tag);

/// Sets QCT_CACHE_DIR to a fresh folder and drops the in-memory cache.
std::string useFreshCache(const std::string &tag);

} // namespace qct::test

#endif // QCT_TESTS_TESTKERNEL_H
