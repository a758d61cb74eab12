//===- qct/runtime/CacheKey.h - What a compiled kernel depends on -*- C++
//-*-===//
//
// The key is a hash of inputs only (never of emitted PTX or cubin, which
// carry random identifiers): change any field and the key changes.
//
//===----------------------------------------------------------------------===//
#ifndef QCT_RUNTIME_CACHEKEY_H
#define QCT_RUNTIME_CACHEKEY_H

#include <string>

namespace qct::rt {

struct CacheKeyInputs {
  std::string specHash;          ///< metadata spec_hash
  std::string entry;             ///< metadata entry
  std::string sourceHash;        ///< SHA-256 of the CUDA source text
  std::string schedule;          ///< resolved knobs, "NAME=VALUE\n" sorted
  std::string arch;              ///< full arch, e.g. sm_90a
  std::string nvrtcVersion;      ///< "13.0"
  std::string deviceHeadersHash; ///< embedded device headers
  std::string compilerVersion;   ///< metadata compiler_version
  std::string runtimeVersion;    ///< this library
  int kernelArgsVersion = 0;
  std::string options; ///< every NVRTC option, one per line
  std::string env;     ///< output-affecting environment variables
};

/// SHA-256 hex over a canonical, field-named serialization.
std::string computeCacheKey(const CacheKeyInputs &in);

} // namespace qct::rt

#endif // QCT_RUNTIME_CACHEKEY_H
