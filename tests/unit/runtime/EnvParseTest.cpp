//===- EnvParseTest.cpp - Bool and byte-size environment values ----------===//
//
// One parse per kind of value (runtime/lib/Env.cpp); a malformed cache
// setting fails only loads that use the cache.
//
//===----------------------------------------------------------------------===//
#include "TestKernel.h"

#include "qct/qct.hpp"
#include "qct/runtime/Env.h"
#include "qct/runtime/Error.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

using namespace qct::rt;
using qct::test::kTinySource;
using qct::test::tinyMetadata;
using qct::test::useFreshCache;

namespace {
qct::LoadOptions sm90() {
  qct::LoadOptions o;
  o.arch = "sm_90";
  return o;
}

/// The message of the RuntimeError `fn` throws, or "" if it throws none.
template <typename Fn> std::string errorOf(Fn fn) {
  try {
    fn();
  } catch (const RuntimeError &e) {
    return e.what();
  }
  return "";
}

/// Restores the variables the tests set, whatever the outcome.
struct CleanEnv {
  ~CleanEnv() {
    ::unsetenv("QCT_CACHE_DISABLE");
    ::unsetenv("QCT_CACHE_MAX_BYTES");
  }
};
} // namespace

TEST(EnvParse, BooleansAcceptTheUsualSpellingsInAnyCase) {
  CleanEnv clean;
  for (const char *v :
       {"1", "true", "True", "TRUE", "yes", "Yes", "on", "ON"}) {
    ::setenv("QCT_CACHE_DISABLE", v, 1);
    EXPECT_TRUE(env::getBool("QCT_CACHE_DISABLE")) << v;
  }
  for (const char *v :
       {"0", "false", "False", "FALSE", "no", "No", "off", "Off", ""}) {
    ::setenv("QCT_CACHE_DISABLE", v, 1);
    EXPECT_FALSE(env::getBool("QCT_CACHE_DISABLE")) << v;
  }
  ::unsetenv("QCT_CACHE_DISABLE");
  EXPECT_FALSE(env::getBool("QCT_CACHE_DISABLE"));
  for (const char *v : {"2", "maybe", "disable", " 1"}) {
    ::setenv("QCT_CACHE_DISABLE", v, 1);
    std::string err = errorOf([] { env::getBool("QCT_CACHE_DISABLE"); });
    EXPECT_NE(err.find(std::string("QCT_CACHE_DISABLE=") + v),
              std::string::npos)
        << err;
    EXPECT_NE(err.find("1, true, yes or on"), std::string::npos) << err;
  }
}

TEST(EnvParse, CacheDisableFalseKeepsTheCache) {
  CleanEnv clean;
  useFreshCache("disable-false");
  ::setenv("QCT_CACHE_DISABLE", "False", 1);
  std::string meta = tinyMetadata();
  (void)qct::Kernel(kTinySource, meta, sm90());
  EXPECT_EQ(qct::Kernel(kTinySource, meta, sm90()).origin(), QCT_ORIGIN_MEMORY);
  ::setenv("QCT_CACHE_DISABLE", "Yes", 1);
  EXPECT_EQ(qct::Kernel(kTinySource, meta, sm90()).origin(),
            QCT_ORIGIN_COMPILED);
  ::setenv("QCT_CACHE_DISABLE", "maybe", 1);
  qct_load_options o{};
  o.arch = "sm_90";
  qct_kernel *k = nullptr;
  EXPECT_EQ(qct_kernel_load(kTinySource, meta.c_str(), &o, &k),
            QCT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(qct_last_error()).find("QCT_CACHE_DISABLE=maybe"),
            std::string::npos)
      << qct_last_error();
}

TEST(EnvParse, ByteSizesTakeKMGSuffixes) {
  CleanEnv clean;
  std::pair<const char *, std::uint64_t> ok[] = {{"0", 0},
                                                 {"12345", 12345},
                                                 {"1K", 1024},
                                                 {"2k", 2048},
                                                 {"3M", 3 << 20},
                                                 {"1G", 1ull << 30},
                                                 {"16g", 16ull << 30},
                                                 {"1073741824", 1ull << 30}};
  for (auto [text, bytes] : ok) {
    ::setenv("QCT_CACHE_MAX_BYTES", text, 1);
    EXPECT_EQ(env::getBytes("QCT_CACHE_MAX_BYTES"), bytes) << text;
  }
  ::unsetenv("QCT_CACHE_MAX_BYTES");
  EXPECT_EQ(env::getBytes("QCT_CACHE_MAX_BYTES"), 1ull << 30); // the default
  for (const char *v : {"1GB", "1T", "-1", "G", "1.5G", " 1", "lots",
                        "99999999999999999999", "17179869184G"}) {
    ::setenv("QCT_CACHE_MAX_BYTES", v, 1);
    std::string err = errorOf([] { env::getBytes("QCT_CACHE_MAX_BYTES"); });
    EXPECT_NE(err.find(std::string("QCT_CACHE_MAX_BYTES=") + v),
              std::string::npos)
        << err;
    EXPECT_NE(err.find("K, M or G suffix"), std::string::npos) << err;
  }
}

TEST(EnvParse, MalformedMaxBytesFailsOnlyCachedLoads) {
  CleanEnv clean;
  useFreshCache("max-bytes");
  std::string meta = tinyMetadata();
  qct_load_options o{};
  o.arch = "sm_90";
  ::setenv("QCT_CACHE_MAX_BYTES", "1G", 1);
  EXPECT_EQ(qct::Kernel(kTinySource, meta, sm90()).origin(),
            QCT_ORIGIN_COMPILED);
  ::setenv("QCT_CACHE_MAX_BYTES", "lots", 1);
  // With the cache off, its bound is never read.
  ::setenv("QCT_CACHE_DISABLE", "1", 1);
  qct_kernel *k = nullptr;
  EXPECT_EQ(qct_kernel_load(kTinySource, meta.c_str(), &o, &k), QCT_OK)
      << qct_last_error();
  qct_kernel_free(k);
  ::unsetenv("QCT_CACHE_DISABLE");
  o.disable_cache = 1;
  k = nullptr;
  EXPECT_EQ(qct_kernel_load(kTinySource, meta.c_str(), &o, &k), QCT_OK)
      << qct_last_error();
  qct_kernel_free(k);
  // A cached load reports the setting (the memory cache does not hide it).
  qct_cache_clear_memory();
  o.disable_cache = 0;
  k = nullptr;
  EXPECT_EQ(qct_kernel_load(kTinySource, meta.c_str(), &o, &k),
            QCT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(qct_last_error()).find("QCT_CACHE_MAX_BYTES=lots"),
            std::string::npos)
      << qct_last_error();
  EXPECT_NE(qct_cache_dir(), nullptr) << qct_last_error();
}
