//===- qct/runtime/DiskCache.h - The on-disk kernel cache ------*- C++ -*-===//
//
// Layout: <QCT_CACHE_DIR>/v1/<key>.qct, one file per compiled kernel:
//
//   offset size
//        0    8  magic "QCTCACHE"
//        8    4  format version (1), little endian
//       12    4  reserved (0)
//       16    8  info bytes I (little endian)
//       24    8  cubin bytes C
//       32   64  key, lowercase hex
//       96   32  SHA-256 of the payload (info + cubin)
//      128    I  info: JSON (name, entry, arch, nvrtc, log, stats, created)
//    128+I    C  cubin
//
// Entries are written to a temp file in the same folder and renamed into
// place, so readers never see a partial entry and never lock; anything that
// fails the size, magic, key or checksum test is a miss (and is rewritten).
// A hit touches the file's mtime: eviction drops the oldest mtimes first
// until the folder is under QCT_CACHE_MAX_BYTES.
//
//===----------------------------------------------------------------------===//
#ifndef QCT_RUNTIME_DISKCACHE_H
#define QCT_RUNTIME_DISKCACHE_H

#include <cstdint>
#include <string>
#include <vector>

namespace qct::rt {

struct CacheEntry {
  std::string info; ///< JSON object text
  std::string cubin;
};

struct ListedEntry {
  std::string file, key, info;
  std::uint64_t bytes = 0;
  std::int64_t lastUsedNs = 0; ///< mtime
  bool valid = false;
};

class DiskCache {
public:
  static constexpr std::uint32_t kFormatVersion = 1;
  static constexpr std::size_t kHeaderBytes = 128;

  DiskCache(std::string root, std::uint64_t maxBytes);
  /// QCT_CACHE_DIR and QCT_CACHE_MAX_BYTES.
  static DiskCache fromEnv();

  const std::string &root() const { return root_; }
  /// root/v1: where entries live.
  const std::string &dir() const { return dir_; }
  std::string pathFor(const std::string &key) const;

  /// A valid entry for `key`, touching its last-used stamp; false on a miss
  /// or an invalid entry.
  bool load(const std::string &key, CacheEntry &out) const;
  /// Publishes atomically, then evicts down to the bound. False (after a
  /// one-time warning on stderr) when the folder cannot be written.
  bool store(const std::string &key, const CacheEntry &entry) const;
  /// Drops least recently used entries (never `keep`) until under the bound.
  void evict(const std::string &keep) const;

  std::vector<ListedEntry> list(bool verify) const;
  /// Removes every entry and temp file; returns the number of entries.
  std::uint64_t clear() const;

  /// Encodes / decodes one entry (exposed for tests).
  static std::string encode(const std::string &key, const CacheEntry &entry);
  static bool decode(const std::string &key, const std::string &bytes,
                     CacheEntry &out);

private:
  std::string root_, dir_;
  std::uint64_t maxBytes_;
};

} // namespace qct::rt

#endif // QCT_RUNTIME_DISKCACHE_H
