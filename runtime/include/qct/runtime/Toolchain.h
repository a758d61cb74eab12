//===- qct/runtime/Toolchain.h - The NVRTC and driver loaded ----*- C++ -*-===//
//
// One report of the two libraries the runtime dlopens: which file, which
// version, and which source of the search order had it (or why none did),
// for qct_toolchain_info_json and `qct env`.
//
//===----------------------------------------------------------------------===//
#ifndef QCT_RUNTIME_TOOLCHAIN_H
#define QCT_RUNTIME_TOOLCHAIN_H

#include <string>

namespace qct::rt {

/// {"nvrtc": {...}, "driver": {...}} (fields in qct.h). Loads both libraries
/// if not yet loaded; never throws for a library that is missing.
std::string toolchainInfoJson();

} // namespace qct::rt

#endif // QCT_RUNTIME_TOOLCHAIN_H
