//===- CompileTest.cpp - NVRTC compile, stats, errors, through the C ABI
//---===//
//
// Needs NVRTC (libnvrtc.so.13) but no GPU: compiles for an explicit arch.
//
//===----------------------------------------------------------------------===//
#include "TestKernel.h"

#include "qct/qct.hpp"
#include "qct/runtime/CubinInfo.h"
#include "qct/runtime/DeviceHeaders.h"
#include "qct/runtime/PtxasStats.h"

#include <gtest/gtest.h>

#include <cstring>
#include <set>
#include <unistd.h>

using qct::test::kTinySource;
using qct::test::tinyMetadata;
using qct::test::useFreshCache;

#define EXPECT_HAS(text, part)                                                 \
  EXPECT_NE(std::string(text).find(part), std::string::npos) << (text)

namespace {
qct::LoadOptions sm90(std::vector<std::string> schedule = {}) {
  qct::LoadOptions o;
  o.arch = "sm_90";
  o.schedule = std::move(schedule);
  return o;
}
} // namespace

TEST(Compile, TinyKernelCompilesWithoutAGpu) {
  useFreshCache("compile");
  qct::Kernel k(kTinySource, tinyMetadata(), sm90());
  EXPECT_EQ(k.name(), "tiny_transpose");
  EXPECT_EQ(k.arch(), "sm_90");
  EXPECT_EQ(k.origin(), QCT_ORIGIN_COMPILED);
  EXPECT_EQ(k.cacheKey().size(), 64u);
  const void *cubin = nullptr;
  size_t size = 0;
  qct::check(qct_kernel_cubin(k.get(), &cubin, &size));
  ASSERT_GT(size, 4u);
  EXPECT_EQ(std::memcmp(cubin,
                        "\x7f"
                        "ELF",
                        4),
            0); // a cubin is an ELF file
  // Options: the arch, C++17, -default-device, the schedule, never fast math.
  std::string opts = k.options();
  EXPECT_HAS(opts, "--gpu-architecture=sm_90\n");
  EXPECT_HAS(opts, "-std=c++17\n");
  EXPECT_HAS(opts, "-default-device\n");
  EXPECT_HAS(opts, "-DQCT_THREADS=256\n");
  EXPECT_HAS(opts, "--ptxas-options=-v\n");
  EXPECT_EQ(opts.find("fast_math"), std::string::npos);
  EXPECT_EQ(k.schedule(), "QCT_THREADS=256\n");
}

TEST(Compile, StatsAreExposed) {
  useFreshCache("stats");
  qct::Kernel k(kTinySource, tinyMetadata(), sm90());
  qct_kernel_stats s = k.stats();
  EXPECT_EQ(s.found, 1);
  EXPECT_GT(s.registers, 0);
  EXPECT_EQ(s.local_memory_bytes, 0);
  // Spill counts come from the ptxas log, which NVRTC may leave empty when it
  // reuses an earlier compile (then -1); they are never positive here.
  EXPECT_LE(s.spill_store_bytes, 0);
  EXPECT_LE(s.spill_load_bytes, 0);
  if (!k.compileLog().empty()) {
    EXPECT_HAS(k.compileLog(), "qct_tiny_transpose");
    EXPECT_EQ(s.spill_store_bytes, 0);
  }
}

TEST(Compile, CubinStatsAgreeWithPtxas) {
  useFreshCache("cubin-stats");
  qct::LoadOptions o = sm90();
  o.extraNvrtcOptions = {
      "-DQCT_UNIQUE_FOR_CUBIN_STATS_TEST=" +
      std::to_string(::getpid())}; // a compile NVRTC has not seen
  qct::Kernel k(kTinySource, tinyMetadata(), o);
  const void *data = nullptr;
  size_t size = 0;
  qct::check(qct_kernel_cubin(k.get(), &data, &size));
  std::string cubin(static_cast<const char *>(data), size);
  qct_kernel_stats fromCubin =
      qct::rt::readCubinStats(cubin, "qct_tiny_transpose");
  EXPECT_EQ(fromCubin.found, 1);
  EXPECT_GT(fromCubin.registers, 0);
  EXPECT_EQ(fromCubin.spill_store_bytes, -1); // not recorded in a cubin
  qct_kernel_stats fromLog =
      qct::rt::parsePtxasStats(k.compileLog(), "qct_tiny_transpose");
  if (fromLog.found) {
    EXPECT_EQ(fromCubin.registers, fromLog.registers);
    EXPECT_EQ(fromCubin.stack_frame_bytes, fromLog.stack_frame_bytes);
  }
  EXPECT_EQ(qct::rt::readCubinStats(cubin, "no_such_kernel").found, 0);
  EXPECT_EQ(qct::rt::readCubinStats("not an elf", "qct_tiny_transpose").found,
            0);
  // Truncated cubins never read out of bounds.
  for (size_t n : {size_t(10), size_t(64), size / 2})
    qct::rt::readCubinStats(cubin.substr(0, n), "qct_tiny_transpose");
}

TEST(Compile, PtxasStatsParser) {
  const char *log =
      "ptxas info    : 0 bytes gmem\n"
      "ptxas info    : Compiling entry function 'other' for 'sm_90a'\n"
      "ptxas info    : Function properties for other\n"
      "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes "
      "spill loads\n"
      "ptxas info    : Used 10 registers, used 0 barriers\n"
      "ptxas info    : Compiling entry function 'k' for 'sm_90a'\n"
      "ptxas info    : Function properties for k\n"
      "ptxas         .     1024 bytes stack frame, 8 bytes spill stores, 12 "
      "bytes spill loads\n"
      "ptxas info    : Used 32 registers, used 1 barriers, 4096 bytes smem, "
      "1024 bytes cumulative stack size\n";
  qct_kernel_stats s = qct::rt::parsePtxasStats(log, "k");
  EXPECT_EQ(s.found, 1);
  EXPECT_EQ(s.registers, 32);
  EXPECT_EQ(s.stack_frame_bytes, 1024);
  EXPECT_EQ(s.spill_store_bytes, 8);
  EXPECT_EQ(s.spill_load_bytes, 12);
  EXPECT_EQ(s.local_memory_bytes, 1024);
  EXPECT_EQ(s.shared_memory_bytes, 4096);
  EXPECT_EQ(qct::rt::parsePtxasStats(log, "missing").found, 0);
}

// A device function kept as a call spills apart from its kernel: the kernel's
// stats count it (the entry's own line says 0).
TEST(Compile, PtxasStatsCountCalleeSpills) {
  const char *log =
      "ptxas info    : Compiling entry function 'k' for 'sm_90a'\n"
      "ptxas info    : Function properties for k\n"
      "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes "
      "spill loads\n"
      "ptxas info    : Used 64 registers, used 1 barriers, 16 bytes smem\n"
      "ptxas info    : Function properties for _Z6helperv\n"
      "ptxas         .     8 bytes stack frame, 4 bytes spill stores, 12 "
      "bytes spill loads\n";
  qct_kernel_stats s = qct::rt::parsePtxasStats(log, "k");
  EXPECT_EQ(s.found, 1);
  EXPECT_EQ(s.stack_frame_bytes, 0);
  EXPECT_EQ(s.spill_store_bytes, 4);
  EXPECT_EQ(s.spill_load_bytes, 12);
  EXPECT_EQ(s.local_memory_bytes, 8);
}

TEST(Compile, LocalMemoryIsReported) {
  useFreshCache("lmem");
  // A dynamically indexed 1 KiB array lives in local memory.
  std::string src =
      std::string(kTinySource) +
      "extern \"C\" __global__ void qct_local(qct_kernel_args a) {\n"
      "  float l[256]; unsigned char *p = (unsigned char *)a.out[0];\n"
      "  for (int i = 0; i < 256; ++i) l[i] = p[i * a.K];\n"
      "  p[threadIdx.x] = (unsigned char)l[p[1] & 255];\n}\n";
  std::string meta = tinyMetadata();
  meta.replace(meta.find("\"qct_tiny_transpose\""), 20, "\"qct_local\"");
  qct::Kernel k(src, meta, sm90());
  EXPECT_GE(k.stats().local_memory_bytes, 1024);
}

TEST(Compile, DeviceHeadersAreEmbedded) {
  const auto &headers = qct::rt::deviceHeaders();
  bool hasArgs = false;
  for (const auto &[name, text] : headers)
    hasArgs |= name == "qct/kernel_args.h" &&
               text.find("QCT_KERNEL_ARGS_VERSION") != std::string::npos;
  EXPECT_TRUE(hasArgs);
  EXPECT_EQ(qct::rt::deviceHeadersHash().size(), 64u);
}

TEST(Compile, ErrorCarriesLogOptionsSourceVersions) {
  useFreshCache("error");
  std::string src = std::string(kTinySource) + "this is not C++;\n";
  qct_load_options o{};
  o.arch = "sm_90";
  std::string meta = tinyMetadata();
  qct_kernel *k = nullptr;
  ASSERT_EQ(qct_kernel_load(src.c_str(), meta.c_str(), &o, &k),
            QCT_ERR_COMPILE);
  EXPECT_EQ(k, nullptr);
  EXPECT_EQ(qct_last_status(), QCT_ERR_COMPILE);
  EXPECT_HAS(qct_last_error_field(QCT_ERROR_FIELD_MESSAGE),
             "NVRTC failed to compile tiny_transpose.cu");
  EXPECT_HAS(qct_last_error_field(QCT_ERROR_FIELD_LOG), "error");
  EXPECT_HAS(qct_last_error_field(QCT_ERROR_FIELD_OPTIONS),
             "--gpu-architecture=sm_90");
  EXPECT_HAS(qct_last_error_field(QCT_ERROR_FIELD_SOURCE),
             "   25 | this is not C++;");
  EXPECT_HAS(qct_last_error_field(QCT_ERROR_FIELD_VERSIONS), "NVRTC 13.");
  EXPECT_HAS(qct_last_error_field(QCT_ERROR_FIELD_VERSIONS),
             "qct compiler test");
  // The formatted error has every section, for C callers that print one string.
  std::string all = qct_last_error();
  for (const char *part :
       {"--- versions ---", "--- NVRTC options ---", "--- NVRTC log ---",
        "--- source ---", "this is not C++;"})
    EXPECT_HAS(all, part);
  // The C++ API throws the same, as qct::Error.
  try {
    qct::Kernel bad(src, meta, sm90());
    FAIL();
  } catch (const qct::Error &e) {
    EXPECT_EQ(e.status(), QCT_ERR_COMPILE);
    EXPECT_HAS(e.log(), "error");
    EXPECT_HAS(e.what(), "--- source ---");
  }
}

TEST(Compile, BadArgumentsAreClearErrors) {
  qct_kernel *k = nullptr;
  EXPECT_EQ(qct_kernel_load(nullptr, nullptr, nullptr, &k),
            QCT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(qct_kernel_load("/nonexistent/k.cu", nullptr, nullptr, &k),
            QCT_ERR_INVALID_ARGUMENT);
  EXPECT_HAS(qct_last_error(), "cannot read CUDA source '/nonexistent/k.cu'");
  const char *sched[] = {"QCT_THREADS=7"};
  qct_load_options o{};
  o.arch = "sm_90";
  o.schedule = sched;
  o.num_schedule = 1;
  std::string meta = tinyMetadata();
  EXPECT_EQ(qct_kernel_load(kTinySource, meta.c_str(), &o, &k),
            QCT_ERR_SCHEDULE);
  EXPECT_HAS(qct_last_error(), "QCT_THREADS=7 is not a legal value");
}

TEST(Compile, SourceAndMetadataFromFiles) {
  std::string dir = useFreshCache("files");
  std::string cu = dir + "/tiny_transpose.cu";
  FILE *f = std::fopen(cu.c_str(), "w");
  std::fputs(kTinySource, f);
  std::fclose(f);
  f = std::fopen((dir + "/tiny_transpose.json").c_str(), "w");
  std::fputs(tinyMetadata().c_str(), f);
  std::fclose(f);
  qct::Kernel k(cu, "", sm90()); // metadata found beside the source
  EXPECT_EQ(k.entry(), "qct_tiny_transpose");
  qct::Kernel k2(cu, dir + "/tiny_transpose.json", sm90());
  EXPECT_EQ(k2.cacheKey(), k.cacheKey());
}

TEST(Env, TableIsDeclaredOnceAndExposed) {
  size_t n = qct_env_count();
  ASSERT_GE(n, 5u);
  std::set<std::string> names;
  for (size_t i = 0; i < n; ++i) {
    const qct_env_var *v = qct_env_at(i);
    ASSERT_NE(v, nullptr);
    EXPECT_TRUE(names.insert(v->name).second) << "declared twice: " << v->name;
    EXPECT_GT(std::strlen(v->doc), 10u) << v->name;
    EXPECT_GT(std::strlen(v->type), 2u) << v->name;
  }
  for (const char *required :
       {"QCT_CACHE_DIR", "QCT_CACHE_DISABLE", "QCT_CACHE_MAX_BYTES", "QCT_ARCH",
        "QCT_DUMP_DIR", "QCT_VERBOSE"})
    EXPECT_TRUE(names.count(required)) << required;
  EXPECT_EQ(qct_env_at(n), nullptr);
  ::setenv("QCT_CACHE_MAX_BYTES", "12345", 1);
  EXPECT_STREQ(qct_env_value("QCT_CACHE_MAX_BYTES"), "12345");
  ::unsetenv("QCT_CACHE_MAX_BYTES");
  EXPECT_STREQ(qct_env_value("QCT_CACHE_MAX_BYTES"), "1073741824");
}

TEST(Expr, CAbiEvaluatesWithKnobs) {
  const char *knobs[] = {"QCT_TILE_K=128"};
  int64_t v = 0;
  ASSERT_EQ(qct_eval_expr("cdiv(K,QCT_TILE_K)+G", 0, 7168, 2, knobs, 1, &v),
            QCT_OK);
  EXPECT_EQ(v, 58);
  EXPECT_EQ(qct_eval_expr("K/3", 0, 7168, 0, nullptr, 0, &v),
            QCT_ERR_VALIDATION);
  EXPECT_HAS(qct_last_error(), "inexact division 7168/3");
}
