//===- TestKernel.cpp - The tiny test kernel
//-------------------------------===//
#include "TestKernel.h"

#include "qct/qct.h"

#include <atomic>
#include <cstdlib>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

namespace qct::test {

const char *const kTinySource =
    R"cuda(// tiny_transpose: a test kernel for the qct runtime.
#include "qct/kernel_args.h"
#ifndef QCT_THREADS
#define QCT_THREADS 256
#endif

extern "C" __global__ void qct_tiny_transpose(qct_kernel_args args) {
  const long long M = args.M, K = args.K, G = args.G;
  const unsigned char *src = (const unsigned char *)args.src;
  unsigned char *dst = (unsigned char *)args.out[0];
  const long long i = (long long)blockIdx.x * QCT_THREADS + threadIdx.x;
  if (i == 0 && args.offsets) {
    const int *o = (const int *)args.offsets;
    bool bad = o[0] != 0 || o[G] != M;
    for (long long g = 0; g < G; ++g)
      bad |= o[g + 1] < o[g];
    if (bad)
      atomicOr(args.error_flag, QCT_ERROR_BAD_OFFSETS);
  }
  if (i < M * K) {
    const long long r = i / K, c = i % K;
    dst[c * M + r] = (unsigned char)(src[i] + 1);
  }
}
)cuda";

std::string tinyMetadata(const std::string &extra) {
  return R"json({
  "format_version": 1,
  "name": "tiny_transpose",
  "entry": "qct_tiny_transpose",
  "cuda_source": "tiny_transpose.cu",
  "spec_hash": "0000000000000000000000000000000000000000000000000000000000000001",
  "compiler_version": "test",
  "kernel_args_version": 1,
  "device_headers": [],
  "constraints": [{"expr": "K", "multiple_of": 16, "why": "test: 16-column rows"}],
  "buffers": [
    {"name": "src",     "field": "src",     "dir": "in",  "dtype": "u8",  "shape": ["M", "K"]},
    {"name": "offsets", "field": "offsets", "dir": "in",  "dtype": "i32", "shape": ["G+1"]},
    {"name": "y",       "field": "out[0]",  "dir": "out", "dtype": "u8",  "shape": ["K", "M"], "output": 0}
  ],
  "error_flag": true,
  "schedule": {"knobs": [{"name": "QCT_THREADS", "values": [128, 256], "default": 256}],
               "passed_as": "-D<name>=<value>"},
  "launch": {"block": ["QCT_THREADS", "1", "1"],
             "grid": ["cdiv(M*K,QCT_THREADS)", "1", "1"],
             "dynamic_smem_bytes": "0"})json" +
         extra + "\n}\n";
}

std::string freshDir(const std::string &tag) {
  static std::atomic<int> counter{0};
  const char *base = std::getenv("TMPDIR");
  std::string dir = std::string(base && *base ? base : "/tmp") +
                    "/qct-rt-test-" + std::to_string(::getpid()) + "-" + tag +
                    "-" + std::to_string(counter++);
  std::string cmd = "rm -rf '" + dir + "'";
  (void)std::system(cmd.c_str());
  ::mkdir(dir.c_str(), 0755);
  return dir;
}

std::string useFreshCache(const std::string &tag) {
  std::string dir = freshDir(tag);
  ::setenv("QCT_CACHE_DIR", dir.c_str(), 1);
  ::unsetenv("QCT_CACHE_DISABLE");
  qct_cache_clear_memory();
  return dir;
}

} // namespace qct::test
