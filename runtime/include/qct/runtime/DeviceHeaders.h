//===- qct/runtime/DeviceHeaders.h - Headers embedded for NVRTC -*- C++ -*-===//
//
// Every runtime/include/qct/device/*.cuh and qct/kernel_args.h are embedded
// at build time (lib/EmbedDeviceHeaders.cmake), handed to NVRTC as named
// headers (so kernels need no include path on the machine that runs them) and
// hashed into the cache key.
//
//===----------------------------------------------------------------------===//
#ifndef QCT_RUNTIME_DEVICEHEADERS_H
#define QCT_RUNTIME_DEVICEHEADERS_H

#include "qct/runtime/Nvrtc.h"

#include <cstddef>
#include <string>
#include <vector>

namespace qct::rt {

struct EmbeddedHeader {
  const char *name; ///< as #included, e.g. "qct/device/qct_device.cuh"
  const char *text;
  std::size_t size;
};

// Defined in the generated DeviceHeaders.gen.cpp.
extern const EmbeddedHeader kEmbeddedHeaders[];
extern const std::size_t kNumEmbeddedHeaders;

const std::vector<NamedHeader> &deviceHeaders();
/// SHA-256 over every header's name and contents, in name order.
const std::string &deviceHeadersHash();

} // namespace qct::rt

#endif // QCT_RUNTIME_DEVICEHEADERS_H
