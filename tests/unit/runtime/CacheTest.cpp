//===- CacheTest.cpp - Cache key, disk format, concurrency, LRU, fallback
//--===//
//
// Needs NVRTC but no GPU (compiles for sm_90).
//
//===----------------------------------------------------------------------===//
#include "TestKernel.h"

#include "qct/qct.hpp"
#include "qct/runtime/CacheKey.h"
#include "qct/runtime/DiskCache.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace qct::rt;
using qct::test::freshDir;
using qct::test::kTinySource;
using qct::test::tinyMetadata;
using qct::test::useFreshCache;

namespace {
qct::LoadOptions sm90(std::vector<std::string> schedule = {}) {
  qct::LoadOptions o;
  o.arch = "sm_90";
  o.schedule = std::move(schedule);
  return o;
}

std::vector<std::string> filesIn(const std::string &dir) {
  std::vector<std::string> out;
  if (DIR *d = ::opendir(dir.c_str())) {
    while (dirent *e = ::readdir(d))
      if (std::string(e->d_name) != "." && std::string(e->d_name) != "..")
        out.push_back(e->d_name);
    ::closedir(d);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string readAll(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void writeAll(const std::string &path, const std::string &data) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << data;
}

void setMtime(const std::string &path, long seconds) {
  struct timespec ts[2] = {{seconds, 0}, {seconds, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), ts, 0), 0);
}
} // namespace

TEST(CacheKey, EveryInputChangesTheKey) {
  CacheKeyInputs base;
  base.specHash = "spec";
  base.entry = "qct_k";
  base.sourceHash = "src";
  base.schedule = "QCT_THREADS=256\n";
  base.arch = "sm_90a";
  base.nvrtcVersion = "13.0";
  base.deviceHeadersHash = "hdr";
  base.compilerVersion = "0.1.0";
  base.runtimeVersion = "0.1.0";
  base.kernelArgsVersion = 1;
  base.options = "-std=c++17\n";
  base.env = "QCT_ARCH=\n";
  std::vector<std::function<void(CacheKeyInputs &)>> changes = {
      [](auto &i) { i.specHash = "spec2"; },
      [](auto &i) { i.entry = "qct_k2"; },
      [](auto &i) { i.sourceHash = "src2"; },
      [](auto &i) { i.schedule = "QCT_THREADS=128\n"; },
      [](auto &i) { i.arch = "sm_90"; },
      [](auto &i) { i.nvrtcVersion = "13.1"; },
      [](auto &i) { i.deviceHeadersHash = "hdr2"; },
      [](auto &i) { i.compilerVersion = "0.1.1"; },
      [](auto &i) { i.runtimeVersion = "0.2.0"; },
      [](auto &i) { i.kernelArgsVersion = 2; },
      [](auto &i) { i.options = "-std=c++20\n"; },
      [](auto &i) { i.env = "QCT_ARCH=sm_90\n"; },
      // Moving text between fields must not collide (length-prefixed fields).
      [](auto &i) {
        i.specHash = "spe";
        i.entry = "cqct_k";
      },
  };
  std::set<std::string> keys = {computeCacheKey(base)};
  EXPECT_EQ(computeCacheKey(base), computeCacheKey(base)); // deterministic
  for (auto &change : changes) {
    CacheKeyInputs in = base;
    change(in);
    EXPECT_TRUE(keys.insert(computeCacheKey(in)).second);
  }
}

TEST(CacheKey, LoadedKernelsKeyOnTheirInputs) {
  useFreshCache("keys");
  std::string meta = tinyMetadata();
  std::set<std::string> keys;
  keys.insert(qct::Kernel(kTinySource, meta, sm90()).cacheKey());
  // The same inputs give the same key.
  EXPECT_FALSE(
      keys.insert(qct::Kernel(kTinySource, meta, sm90()).cacheKey()).second);
  EXPECT_TRUE(
      keys.insert(qct::Kernel(kTinySource, meta, sm90({"QCT_THREADS=128"}))
                      .cacheKey())
          .second);
  qct::LoadOptions a = sm90();
  a.arch = "sm_90a";
  EXPECT_TRUE(keys.insert(qct::Kernel(kTinySource, meta, a).cacheKey()).second);
  EXPECT_TRUE(keys.insert(qct::Kernel(std::string(kTinySource) + "// edit\n",
                                      meta, sm90())
                              .cacheKey())
                  .second);
  std::string meta2 = meta;
  meta2.replace(meta2.find("\"compiler_version\": \"test\""), 26,
                "\"compiler_version\": \"tst2\"");
  EXPECT_TRUE(
      keys.insert(qct::Kernel(kTinySource, meta2, sm90()).cacheKey()).second);
  std::string meta3 = meta;
  meta3.replace(meta3.find("0000001\""), 8, "0000002\"");
  EXPECT_TRUE(
      keys.insert(qct::Kernel(kTinySource, meta3, sm90()).cacheKey()).second);
  qct::LoadOptions extra = sm90();
  extra.extraNvrtcOptions = {"-lineinfo"};
  EXPECT_TRUE(
      keys.insert(qct::Kernel(kTinySource, meta, extra).cacheKey()).second);
  // An output-affecting environment variable (declared with affects_output).
  ::setenv("CUDA_PATH", "/nonexistent-cuda", 1);
  EXPECT_TRUE(
      keys.insert(qct::Kernel(kTinySource, meta, sm90()).cacheKey()).second);
  ::unsetenv("CUDA_PATH");
}

TEST(DiskCache, MemoryThenDiskThenCompile) {
  std::string dir = useFreshCache("layers");
  std::string meta = tinyMetadata();
  qct::Kernel first(kTinySource, meta, sm90());
  EXPECT_EQ(first.origin(), QCT_ORIGIN_COMPILED);
  EXPECT_EQ(filesIn(dir + "/v1"),
            std::vector<std::string>{first.cacheKey() + ".qct"});
  EXPECT_EQ(qct::Kernel(kTinySource, meta, sm90()).origin(), QCT_ORIGIN_MEMORY);
  qct_cache_clear_memory();
  qct::Kernel fromDisk(kTinySource, meta, sm90());
  EXPECT_EQ(fromDisk.origin(), QCT_ORIGIN_DISK);
  EXPECT_EQ(fromDisk.compileLog(),
            first.compileLog()); // the log is kept in the entry
  EXPECT_EQ(fromDisk.stats().registers, first.stats().registers);
  const void *a, *b;
  size_t na, nb;
  qct::check(qct_kernel_cubin(first.get(), &a, &na));
  qct::check(qct_kernel_cubin(fromDisk.get(), &b, &nb));
  ASSERT_EQ(na, nb);
  EXPECT_EQ(std::memcmp(a, b, na), 0);
}

TEST(DiskCache, DisableBypassesBothCaches) {
  std::string dir = useFreshCache("disable");
  ::setenv("QCT_CACHE_DISABLE", "1", 1);
  std::string meta = tinyMetadata();
  EXPECT_EQ(qct::Kernel(kTinySource, meta, sm90()).origin(),
            QCT_ORIGIN_COMPILED);
  EXPECT_EQ(qct::Kernel(kTinySource, meta, sm90()).origin(),
            QCT_ORIGIN_COMPILED);
  EXPECT_TRUE(filesIn(dir + "/v1").empty());
  ::unsetenv("QCT_CACHE_DISABLE");
  qct::LoadOptions o = sm90();
  o.disableCache = true; // the per-load switch
  EXPECT_EQ(qct::Kernel(kTinySource, meta, o).origin(), QCT_ORIGIN_COMPILED);
  EXPECT_TRUE(filesIn(dir + "/v1").empty());
}

TEST(DiskCache, EntryFormatRoundTripsAndRejectsDamage) {
  CacheEntry e{R"({"name":"k"})", std::string("\x7f"
                                              "ELF\0\1\2",
                                              7)};
  std::string key(64, 'a');
  std::string bytes = DiskCache::encode(key, e);
  ASSERT_EQ(bytes.size(),
            DiskCache::kHeaderBytes + e.info.size() + e.cubin.size());
  EXPECT_EQ(bytes.substr(0, 8), "QCTCACHE");
  CacheEntry out;
  ASSERT_TRUE(DiskCache::decode(key, bytes, out));
  EXPECT_EQ(out.info, e.info);
  EXPECT_EQ(out.cubin, e.cubin);
  EXPECT_FALSE(
      DiskCache::decode(std::string(64, 'b'), bytes, out)); // another key
  for (size_t n :
       {size_t(0), size_t(7), DiskCache::kHeaderBytes, bytes.size() - 1})
    EXPECT_FALSE(DiskCache::decode(key, bytes.substr(0, n), out))
        << "truncated to " << n;
  for (size_t at :
       {size_t(0), size_t(8), size_t(20), size_t(100), bytes.size() - 1}) {
    std::string damaged = bytes;
    damaged[at] ^= 0x40;
    EXPECT_FALSE(DiskCache::decode(key, damaged, out)) << "flipped byte " << at;
  }
  EXPECT_FALSE(DiskCache::decode(key, bytes + "x", out)); // trailing garbage
}

TEST(DiskCache, TruncatedOrCorruptEntryRecompilesAndIsRewritten) {
  std::string dir = useFreshCache("corrupt");
  std::string meta = tinyMetadata();
  std::string key = qct::Kernel(kTinySource, meta, sm90()).cacheKey();
  std::string path = dir + "/v1/" + key + ".qct";
  std::string good = readAll(path);
  ASSERT_GT(good.size(), DiskCache::kHeaderBytes);
  for (int damage = 0; damage < 3; ++damage) {
    std::string bad = good;
    if (damage == 0)
      bad.resize(good.size() / 2); // truncated
    if (damage == 1)
      bad[good.size() - 5] ^= 1; // bit flip in the cubin
    if (damage == 2)
      bad = ""; // empty file
    writeAll(path, bad);
    qct_cache_clear_memory();
    qct::Kernel k(kTinySource, meta, sm90());
    EXPECT_EQ(k.origin(), QCT_ORIGIN_COMPILED) << "damage " << damage;
    CacheEntry entry;
    EXPECT_TRUE(DiskCache::decode(key, readAll(path), entry))
        << "rewritten, damage " << damage;
    qct_cache_clear_memory();
    EXPECT_EQ(qct::Kernel(kTinySource, meta, sm90()).origin(), QCT_ORIGIN_DISK);
  }
}

TEST(DiskCache, ConcurrentProcessesLeaveOneValidEntry) {
  std::string dir = useFreshCache("fork");
  std::string meta = tinyMetadata();
  const int kProcs = 8;
  int gate[2];
  ASSERT_EQ(::pipe(gate), 0);
  std::vector<pid_t> children;
  for (int i = 0; i < kProcs; ++i) {
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::close(gate[1]);
      char c;
      (void)::read(
          gate[0], &c,
          1); // returns when the parent closes the pipe: all start at once
      qct_cache_clear_memory();
      qct_load_options o{};
      o.arch = "sm_90";
      qct_kernel *k = nullptr;
      qct_status s = qct_kernel_load(kTinySource, meta.c_str(), &o, &k);
      bool ok = s == QCT_OK && qct_kernel_origin(k) != QCT_ORIGIN_MEMORY;
      ::_exit(ok ? 0 : 1);
    }
    children.push_back(pid);
  }
  ::close(gate[0]);
  ::close(gate[1]);
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  std::vector<std::string> files = filesIn(dir + "/v1");
  ASSERT_EQ(files.size(), 1u) << "temp files or duplicates left behind";
  std::string key = files[0].substr(0, 64);
  CacheEntry entry;
  EXPECT_TRUE(DiskCache::decode(key, readAll(dir + "/v1/" + files[0]), entry));
  qct_cache_clear_memory();
  qct::Kernel k(kTinySource, meta, sm90());
  EXPECT_EQ(k.origin(), QCT_ORIGIN_DISK);
  EXPECT_EQ(k.cacheKey(), key);
}

TEST(DiskCache, UnwritableFolderRunsUncachedWithOneWarning) {
  // A folder under a regular file cannot be created, even by root.
  std::string dir = freshDir("unwritable");
  writeAll(dir + "/file", "x");
  std::string meta = tinyMetadata();
  std::string log = dir + "/stderr.txt";
  pid_t pid = ::fork(); // a fresh process: the warning is once per process
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    FILE *f = std::freopen(log.c_str(), "w", stderr);
    (void)f;
    ::setenv("QCT_CACHE_DIR", (dir + "/file/cache").c_str(), 1);
    qct_cache_clear_memory();
    qct_load_options o{};
    o.arch = "sm_90";
    o.disable_cache = 0;
    int failures = 0;
    for (int i = 0; i < 3; ++i) {
      qct_kernel *k = nullptr;
      qct_cache_clear_memory(); // force the disk path every time
      failures += qct_kernel_load(kTinySource, meta.c_str(), &o, &k) != QCT_OK;
      failures += k && qct_kernel_origin(k) != QCT_ORIGIN_COMPILED;
      qct_kernel_free(k);
    }
    std::fflush(stderr);
    ::_exit(failures);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "loads failed";
  std::string err = readAll(log);
  size_t first = err.find("qct: warning:");
  ASSERT_NE(first, std::string::npos) << err;
  EXPECT_NE(err.find("running without the disk cache"), std::string::npos)
      << err;
  EXPECT_EQ(err.find("qct: warning:", first + 1), std::string::npos)
      << "warned twice:\n"
      << err;
}

TEST(DiskCache, LruEvictionDropsLeastRecentlyUsed) {
  std::string root = freshDir("lru");
  std::string payload(1000, 'c');
  DiskCache cache(root, 2500); // room for two 1128-byte entries
  std::string a(64, 'a'), b(64, 'b'), c(64, 'c'), d(64, 'd');
  ASSERT_TRUE(cache.store(a, {"{}", payload}));
  ASSERT_TRUE(cache.store(b, {"{}", payload}));
  setMtime(cache.pathFor(a), 1000);
  setMtime(cache.pathFor(b), 2000);
  CacheEntry e;
  ASSERT_TRUE(
      cache.load(a, e)); // a hit refreshes a's last-used stamp: b is now oldest
  ASSERT_TRUE(cache.store(c, {"{}", payload}));
  EXPECT_TRUE(cache.load(a, e));
  EXPECT_FALSE(cache.load(b, e)) << "b should have been evicted";
  EXPECT_TRUE(cache.load(c, e));
  // The entry just written survives even if it alone is over the bound.
  DiskCache tiny(root, 10);
  ASSERT_TRUE(tiny.store(d, {"{}", payload}));
  EXPECT_TRUE(tiny.load(d, e));
  EXPECT_EQ(tiny.list(false).size(), 1u);
}

TEST(DiskCache, MaxBytesFromEnvironmentBoundsTheFolder) {
  std::string dir = useFreshCache("lru-env");
  std::string meta = tinyMetadata();
  qct::Kernel k1(kTinySource, meta, sm90());
  std::string entry1 = dir + "/v1/" + k1.cacheKey() + ".qct";
  struct stat st;
  ASSERT_EQ(::stat(entry1.c_str(), &st), 0);
  setMtime(entry1, 1000);
  ::setenv("QCT_CACHE_MAX_BYTES", std::to_string(st.st_size + 100).c_str(), 1);
  qct::Kernel k2(kTinySource, meta, sm90({"QCT_THREADS=128"}));
  ::unsetenv("QCT_CACHE_MAX_BYTES");
  EXPECT_EQ(filesIn(dir + "/v1"),
            std::vector<std::string>{k2.cacheKey() + ".qct"});
}

TEST(DiskCache, ListInfoAndClearThroughTheCAbi) {
  std::string dir = useFreshCache("cabi");
  std::string meta = tinyMetadata();
  std::string key = qct::Kernel(kTinySource, meta, sm90()).cacheKey();
  EXPECT_EQ(std::string(qct_cache_dir()), dir + "/v1");
  std::string list = qct_cache_list_json();
  EXPECT_NE(list.find("\"key\":\"" + key + "\""), std::string::npos) << list;
  EXPECT_NE(list.find("\"name\":\"tiny_transpose\""), std::string::npos)
      << list;
  EXPECT_NE(list.find("\"valid\":true"), std::string::npos) << list;
  std::string info = qct_cache_info_json();
  EXPECT_NE(info.find("\"entries\":1"), std::string::npos) << info;
  EXPECT_NE(info.find("\"writable\":true"), std::string::npos) << info;
  uint64_t removed = 0;
  ASSERT_EQ(qct_cache_clear(&removed), QCT_OK);
  EXPECT_EQ(removed, 1u);
  EXPECT_TRUE(filesIn(dir + "/v1").empty());
}
