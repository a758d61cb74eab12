//===- CacheKey.cpp - The cache key
//----------------------------------------===//
#include "qct/runtime/CacheKey.h"

#include "qct/runtime/Sha256.h"

namespace qct::rt {

std::string computeCacheKey(const CacheKeyInputs &in) {
  // Each field is named and length-prefixed so no two different inputs can
  // serialize to the same bytes.
  std::string text = "qct-cache-key v1\n";
  auto field = [&](const char *name, const std::string &value) {
    text += name;
    text += ' ';
    text += std::to_string(value.size());
    text += '\n';
    text += value;
    text += '\n';
  };
  field("spec_hash", in.specHash);
  field("entry", in.entry);
  field("source_sha256", in.sourceHash);
  field("schedule", in.schedule);
  field("arch", in.arch);
  field("nvrtc", in.nvrtcVersion);
  field("device_headers", in.deviceHeadersHash);
  field("compiler", in.compilerVersion);
  field("runtime", in.runtimeVersion);
  field("kernel_args", std::to_string(in.kernelArgsVersion));
  field("options", in.options);
  field("env", in.env);
  return sha256Hex(text);
}

} // namespace qct::rt
