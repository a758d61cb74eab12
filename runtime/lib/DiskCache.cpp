//===- DiskCache.cpp - The on-disk kernel cache
//----------------------------===//
#include "qct/runtime/DiskCache.h"

#include "qct/runtime/Env.h"
#include "qct/runtime/Sha256.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <dirent.h>
#include <fcntl.h>
#include <mutex>
#include <random>
#include <sys/stat.h>
#include <unistd.h>

namespace qct::rt {

namespace {
constexpr char kMagic[8] = {'Q', 'C', 'T', 'C', 'A', 'C', 'H', 'E'};
constexpr const char *kSuffix = ".qct";
constexpr const char *kTempPrefix = ".tmp-";

void putLE(std::string &s, std::uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i)
    s.push_back(char((v >> (8 * i)) & 0xff));
}
std::uint64_t getLE(const std::string &s, std::size_t at, int bytes) {
  std::uint64_t v = 0;
  for (int i = 0; i < bytes; ++i)
    v |= std::uint64_t(static_cast<unsigned char>(s[at + i])) << (8 * i);
  return v;
}

bool readFile(const std::string &path, std::string &out) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return false;
  out.clear();
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      ::close(fd);
      return n == 0;
    }
    out.append(buf, std::size_t(n));
  }
}

bool writeAll(int fd, const std::string &data) {
  std::size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    done += std::size_t(n);
  }
  return true;
}

bool makeDirs(const std::string &path) {
  std::string cur;
  std::size_t pos = 0;
  while (pos != std::string::npos) {
    pos = path.find('/', pos + 1);
    cur = path.substr(0, pos);
    if (cur.empty())
      continue;
    if (::mkdir(cur.c_str(), 0755) != 0 && errno != EEXIST)
      return false;
  }
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool endsWith(const std::string &s, const char *suffix) {
  std::size_t n = std::strlen(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

std::int64_t mtimeNs(const struct stat &st) {
  return std::int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
}

void warnOnce(const std::string &message) {
  static std::once_flag once;
  std::call_once(once, [&] {
    std::fprintf(stderr, "qct: warning: %s; running without the disk cache\n",
                 message.c_str());
  });
}

bool verbose() {
  try {
    return env::getInt("QCT_VERBOSE") > 0;
  } catch (...) {
    return false;
  }
}
} // namespace

DiskCache::DiskCache(std::string root, std::uint64_t maxBytes)
    : root_(std::move(root)), dir_(root_ + "/v1"), maxBytes_(maxBytes) {}

DiskCache DiskCache::fromEnv() {
  return DiskCache(env::get("QCT_CACHE_DIR"),
                   env::getBytes("QCT_CACHE_MAX_BYTES"));
}

std::string DiskCache::pathFor(const std::string &key) const {
  return dir_ + "/" + key + kSuffix;
}

std::string DiskCache::encode(const std::string &key, const CacheEntry &entry) {
  std::string out(kMagic, sizeof kMagic);
  putLE(out, kFormatVersion, 4);
  putLE(out, 0, 4);
  putLE(out, entry.info.size(), 8);
  putLE(out, entry.cubin.size(), 8);
  std::string keyField = key;
  keyField.resize(64, '\0');
  out += keyField;
  auto sum = Sha256().update(entry.info).update(entry.cubin).digest();
  out.append(reinterpret_cast<const char *>(sum.data()), sum.size());
  out += entry.info;
  out += entry.cubin;
  return out;
}

bool DiskCache::decode(const std::string &key, const std::string &bytes,
                       CacheEntry &out) {
  if (bytes.size() < kHeaderBytes ||
      std::memcmp(bytes.data(), kMagic, 8) != 0 ||
      getLE(bytes, 8, 4) != kFormatVersion)
    return false;
  std::uint64_t infoBytes = getLE(bytes, 16, 8),
                cubinBytes = getLE(bytes, 24, 8);
  if (infoBytes > bytes.size() || cubinBytes > bytes.size() ||
      kHeaderBytes + infoBytes + cubinBytes != bytes.size())
    return false;
  std::string keyField = key;
  keyField.resize(64, '\0');
  if (bytes.compare(32, 64, keyField) != 0)
    return false;
  auto sum = Sha256()
                 .update(bytes.data() + kHeaderBytes, infoBytes + cubinBytes)
                 .digest();
  if (std::memcmp(sum.data(), bytes.data() + 96, 32) != 0)
    return false;
  out.info = bytes.substr(kHeaderBytes, infoBytes);
  out.cubin = bytes.substr(kHeaderBytes + infoBytes);
  return true;
}

bool DiskCache::load(const std::string &key, CacheEntry &out) const {
  std::string path = pathFor(key), bytes;
  if (!readFile(path, bytes))
    return false;
  if (!decode(key, bytes, out)) {
    if (verbose())
      std::fprintf(stderr,
                   "qct: cache entry %s is corrupt or truncated; recompiling\n",
                   path.c_str());
    return false;
  }
  ::utimensat(AT_FDCWD, path.c_str(), nullptr, 0); // last-used stamp for LRU
  return true;
}

bool DiskCache::store(const std::string &key, const CacheEntry &entry) const {
  if (!makeDirs(dir_)) {
    warnOnce("kernel cache folder " + dir_ + " cannot be created (" +
             std::strerror(errno) + ")");
    return false;
  }
  static std::atomic<unsigned> counter{0};
  std::random_device rd;
  std::string temp = dir_ + "/" + kTempPrefix + key + "-" +
                     std::to_string(::getpid()) + "-" + std::to_string(rd()) +
                     "-" + std::to_string(counter++);
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    warnOnce("kernel cache folder " + dir_ + " is not writable (" +
             std::strerror(errno) + ")");
    return false;
  }
  bool ok = writeAll(fd, encode(key, entry));
  ok = (::close(fd) == 0) && ok;
  if (!ok || ::rename(temp.c_str(), pathFor(key).c_str()) != 0) {
    int err = errno;
    ::unlink(temp.c_str());
    warnOnce("writing kernel cache entry " + pathFor(key) + " failed (" +
             std::strerror(err) + ")");
    return false;
  }
  evict(key);
  return true;
}

std::vector<ListedEntry> DiskCache::list(bool verify) const {
  std::vector<ListedEntry> out;
  DIR *d = ::opendir(dir_.c_str());
  if (!d)
    return out;
  while (struct dirent *e = ::readdir(d)) {
    std::string name = e->d_name;
    if (!endsWith(name, kSuffix) || name[0] == '.')
      continue;
    ListedEntry le;
    le.file = dir_ + "/" + name;
    le.key = name.substr(0, name.size() - std::strlen(kSuffix));
    struct stat st;
    if (::stat(le.file.c_str(), &st) != 0)
      continue; // evicted meanwhile
    le.bytes = std::uint64_t(st.st_size);
    le.lastUsedNs = mtimeNs(st);
    if (verify) {
      std::string bytes;
      CacheEntry entry;
      le.valid = readFile(le.file, bytes) && decode(le.key, bytes, entry);
      if (le.valid)
        le.info = entry.info;
    }
    out.push_back(std::move(le));
  }
  ::closedir(d);
  std::sort(out.begin(), out.end(),
            [](const ListedEntry &a, const ListedEntry &b) {
              return a.lastUsedNs != b.lastUsedNs ? a.lastUsedNs < b.lastUsedNs
                                                  : a.key < b.key;
            });
  return out;
}

void DiskCache::evict(const std::string &keep) const {
  std::vector<ListedEntry> entries = list(false);
  std::uint64_t total = 0;
  for (const auto &e : entries)
    total += e.bytes;
  // Oldest first (list() sorts by last use).
  for (const auto &e : entries) {
    if (total <= maxBytes_)
      break;
    if (e.key == keep)
      continue;
    if (::unlink(e.file.c_str()) == 0 && verbose())
      std::fprintf(stderr, "qct: cache evicted %s\n", e.file.c_str());
    total -= e.bytes; // also when another process removed it first
  }
  // Temp files older than an hour belong to writers that died.
  if (DIR *d = ::opendir(dir_.c_str())) {
    std::int64_t now = std::int64_t(::time(nullptr)) * 1000000000;
    while (struct dirent *e = ::readdir(d)) {
      std::string name = e->d_name;
      if (name.rfind(kTempPrefix, 0) != 0)
        continue;
      struct stat st;
      std::string path = dir_ + "/" + name;
      if (::stat(path.c_str(), &st) == 0 &&
          now - mtimeNs(st) > 3600LL * 1000000000)
        ::unlink(path.c_str());
    }
    ::closedir(d);
  }
}

std::uint64_t DiskCache::clear() const {
  std::uint64_t removed = 0;
  DIR *d = ::opendir(dir_.c_str());
  if (!d)
    return 0;
  while (struct dirent *e = ::readdir(d)) {
    std::string name = e->d_name;
    bool entry = endsWith(name, kSuffix) && name[0] != '.';
    if (!entry && name.rfind(kTempPrefix, 0) != 0)
      continue;
    if (::unlink((dir_ + "/" + name).c_str()) == 0 && entry)
      ++removed;
  }
  ::closedir(d);
  return removed;
}

} // namespace qct::rt
