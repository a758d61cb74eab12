//===- qct/runtime/Sha256.h - SHA-256 for cache keys and checksums -*- C++
//-*-===//
//
// The runtime links no crypto library; cache keys and entry checksums need a
// stable, collision-resistant hash, so this is a small FIPS 180-4 SHA-256.
//
//===----------------------------------------------------------------------===//
#ifndef QCT_RUNTIME_SHA256_H
#define QCT_RUNTIME_SHA256_H

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

namespace qct::rt {

class Sha256 {
public:
  Sha256();
  Sha256 &update(const void *data, std::size_t size);
  Sha256 &update(const std::string &s) { return update(s.data(), s.size()); }
  std::array<std::uint8_t, 32> digest();

private:
  void block(const std::uint8_t *p);
  std::uint32_t h_[8];
  std::uint8_t buf_[64];
  std::size_t bufLen_ = 0;
  std::uint64_t total_ = 0;
};

std::string toHex(const std::uint8_t *data, std::size_t size);
std::string sha256Hex(const void *data, std::size_t size);
inline std::string sha256Hex(const std::string &s) {
  return sha256Hex(s.data(), s.size());
}

} // namespace qct::rt

#endif // QCT_RUNTIME_SHA256_H
