//===- ReferenceBench.cpp - Time the reference on GPU-test-sized tensors --===//
//
// Not a test: prints the single-threaded time of one output for an
// M x K bf16 source (default 32768 x 7168, the GPU tests' size) for the
// outputs the GPU tests use most, so a slow path shows up before it makes
// the GPU suite crawl.   qct_reference_bench [M K [threads]]
//
//===----------------------------------------------------------------------===//

#include "qct/Reference/qct_ref.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

int main(int argc, char **argv) {
  int64_t M = argc > 2 ? std::atoll(argv[1]) : 32768;
  int64_t K = argc > 2 ? std::atoll(argv[2]) : 7168;
  std::vector<uint16_t> x(size_t(M * K));
  std::mt19937 rng(1);
  std::normal_distribution<float> dist;
  for (auto &v : x) {
    float f = dist(rng);
    uint32_t u;
    static_assert(sizeof u == sizeof f, "");
    __builtin_memcpy(&u, &f, 4);
    v = uint16_t(u >> 16);
  }
  if (argc > 3)
    qct_ref_set_threads(std::atoi(argv[3]));
  qct_ref_source src{QCT_REF_BF16, x.data(), nullptr, M, K};
  struct Case {
    const char *name;
    int format, layout, scale;
  } cases[] = {
      {"mxfp4 row floor", QCT_REF_MXFP4, QCT_REF_ROW, QCT_REF_SCALE_FLOOR},
      {"mxfp4 col rceil", QCT_REF_MXFP4, QCT_REF_COL, QCT_REF_SCALE_RCEIL},
      {"fp8_e4m3 row amax", QCT_REF_FP8_E4M3, QCT_REF_ROW, QCT_REF_SCALE_AMAX},
      {"fp8_e4m3 col amax", QCT_REF_FP8_E4M3, QCT_REF_COL, QCT_REF_SCALE_AMAX},
      {"fp8_e4m3 col pow2", QCT_REF_FP8_E4M3, QCT_REF_COL, QCT_REF_SCALE_POW2},
      {"bf16 col", QCT_REF_BF16, QCT_REF_COL, QCT_REF_SCALE_NONE},
  };
  char err[256];
  for (const Case &c : cases) {
    qct_ref_output out{c.format, c.layout, c.scale, QCT_REF_ROW_MAJOR,
                       0,        nullptr,  0,       nullptr,
                       0};
    if (qct_ref_output_sizes(&src, &out, nullptr, &out.data_bytes,
                             &out.scales_bytes, err, sizeof err)) {
      std::fprintf(stderr, "%s: %s\n", c.name, err);
      return 1;
    }
    std::vector<uint8_t> data(out.data_bytes), scales(out.scales_bytes + 1);
    out.data = data.data();
    out.scales = scales.data();
    auto t0 = std::chrono::steady_clock::now();
    if (qct_ref_convert(&src, &out, nullptr, err, sizeof err)) {
      std::fprintf(stderr, "%s: %s\n", c.name, err);
      return 1;
    }
    double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
            .count();
    std::printf("%-20s M=%lld K=%lld  %.2f s\n", c.name, (long long)M,
                (long long)K, s);
  }
  return 0;
}
