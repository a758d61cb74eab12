//===- DeviceHeaders.cpp - Access to the embedded device headers
//-----------===//
#include "qct/runtime/DeviceHeaders.h"

#include "qct/runtime/Sha256.h"

#include <algorithm>

namespace qct::rt {

const std::vector<NamedHeader> &deviceHeaders() {
  static const std::vector<NamedHeader> headers = [] {
    std::vector<NamedHeader> v;
    for (std::size_t i = 0; i < kNumEmbeddedHeaders; ++i)
      v.emplace_back(
          kEmbeddedHeaders[i].name,
          std::string(kEmbeddedHeaders[i].text, kEmbeddedHeaders[i].size));
    std::sort(v.begin(), v.end());
    return v;
  }();
  return headers;
}

const std::string &deviceHeadersHash() {
  static const std::string hash = [] {
    Sha256 h;
    for (const auto &[name, text] : deviceHeaders()) {
      h.update(name).update("\0", 1);
      std::string size = std::to_string(text.size());
      h.update(size).update("\0", 1).update(text);
    }
    auto d = h.digest();
    return toHex(d.data(), d.size());
  }();
  return hash;
}

} // namespace qct::rt
