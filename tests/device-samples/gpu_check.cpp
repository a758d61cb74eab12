//===- gpu_check.cpp - Run the sample kernels, compare with the reference -===//
//
// A development check for the device library on a GPU machine (no GTest, no
// runtime library needed): loads each sample's cubin (compiled by
// run_gpu_check.sh for several schedules), launches it with the launch
// formulas of docs/device-library.md on random and adversarial inputs, and
// compares every byte of every output buffer (prefilled with garbage, so an
// unwritten byte shows) with qct_ref_convert.
//
//   gpu_check <cubin>...      (file names: <sample>.T<threads>.<U|K><n>.cubin)
//
//===----------------------------------------------------------------------===//

#include "qct/Reference/qct_ref.h"
#include "qct/kernel_args.h"

#include <cuda.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

#define CK(x)                                                                  \
  do {                                                                         \
    CUresult r_ = (x);                                                         \
    if (r_ != CUDA_SUCCESS) {                                                  \
      const char *s_ = nullptr;                                                \
      cuGetErrorString(r_, &s_);                                               \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x,          \
                   s_ ? s_ : "?");                                             \
      std::exit(2);                                                            \
    }                                                                          \
  } while (0)

struct OutDesc {
  int fmt, layout, scale, scaleLayout, viaBf16;
};

struct Sample {
  const char *name;
  bool tile;
  int src;
  std::vector<OutDesc> outs;
  bool ragged, i64;
  long long P;
  bool writePadded;
};

const int B16 = QCT_REF_BF16, MXFP4 = QCT_REF_MXFP4, FP8 = QCT_REF_FP8_E4M3;
const int ROW = QCT_REF_ROW, COL = QCT_REF_COL, RM = QCT_REF_ROW_MAJOR,
          MN = QCT_REF_MN_MAJOR;

const std::vector<Sample> kSamples = {
    {"bf16_to_mxfp4_row",
     false,
     B16,
     {{MXFP4, ROW, QCT_REF_SCALE_FLOOR, RM, 0}},
     false,
     false,
     1,
     false},
    {"mxfp4_row_to_fp8_e4m3_row_aligned",
     false,
     MXFP4,
     {{FP8, ROW, QCT_REF_SCALE_ALIGNED, RM, 0}},
     false,
     false,
     1,
     false},
    {"mxfp4_row_to_fp8_e4m3_col_ragged",
     true,
     MXFP4,
     {{FP8, COL, QCT_REF_SCALE_ALIGNED, RM, 0}},
     true,
     false,
     128,
     true},
    {"bf16_to_mxfp4_row_fp8_e4m3_col",
     true,
     B16,
     {{MXFP4, ROW, QCT_REF_SCALE_FLOOR, RM, 0},
      {FP8, COL, QCT_REF_SCALE_AMAX, RM, 0}},
     false,
     false,
     1,
     false},
    {"bf16_to_fp8_e4m3_rowcol_pow2",
     true,
     B16,
     {{FP8, ROW, QCT_REF_SCALE_POW2, MN, 0},
      {FP8, COL, QCT_REF_SCALE_POW2, MN, 0}},
     false,
     false,
     1,
     false},
    {"fp8_e4m3_to_mxfp4_row",
     false,
     FP8,
     {{MXFP4, ROW, QCT_REF_SCALE_FLOOR, RM, 0}},
     false,
     false,
     1,
     false},
    {"mxfp4_to_bf16_row",
     false,
     MXFP4,
     {{B16, ROW, QCT_REF_SCALE_NONE, RM, 0}},
     false,
     false,
     1,
     false},
    {"mxfp4_to_fp8_e4m3_row_unfused",
     false,
     MXFP4,
     {{FP8, ROW, QCT_REF_SCALE_AMAX, RM, 1}},
     false,
     false,
     1,
     false},
    {"bf16_to_mxfp4_col_ragged_i64_p1",
     true,
     B16,
     {{MXFP4, COL, QCT_REF_SCALE_RCEIL, MN, 0}},
     true,
     true,
     1,
     true},
    {"mxfp4_to_fp8_e4m3_col_exact_amax",
     true,
     MXFP4,
     {{FP8, COL, QCT_REF_SCALE_AMAX, RM, 0}},
     true,
     false,
     16,
     false},
    {"fp32_to_mxfp8_e4m3_row_rceil_mn",
     false,
     QCT_REF_FP32,
     {{QCT_REF_MXFP8_E4M3, ROW, QCT_REF_SCALE_RCEIL, MN, 0}},
     false,
     false,
     1,
     false},
    {"fp16_to_fp8_e5m2_col_ragged",
     true,
     QCT_REF_FP16,
     {{QCT_REF_FP8_E5M2, COL, QCT_REF_SCALE_AMAX, RM, 0}},
     true,
     false,
     1,
     false},
    {"mxfp8_e5m2_to_fp8_e4m3_rowcol_aligned",
     true,
     QCT_REF_MXFP8_E5M2,
     {{FP8, ROW, QCT_REF_SCALE_ALIGNED, RM, 0},
      {FP8, COL, QCT_REF_SCALE_ALIGNED, MN, 0}},
     false,
     false,
     1,
     false},
    {"mxfp4_to_bf16_mxfp4_col_ragged_p3",
     true,
     MXFP4,
     {{B16, COL, QCT_REF_SCALE_NONE, RM, 0},
      {MXFP4, COL, QCT_REF_SCALE_RCEIL, RM, 0}},
     true,
     false,
     3,
     true},
    {"bf16_to_three_outputs",
     true,
     B16,
     {{MXFP4, ROW, QCT_REF_SCALE_FLOOR, RM, 0},
      {FP8, ROW, QCT_REF_SCALE_AMAX, RM, 0},
      {QCT_REF_MXFP8_E5M2, COL, QCT_REF_SCALE_FLOOR, MN, 0}},
     false,
     false,
     1,
     false},
    {"fp8_e5m2_to_fp8_e4m3_col_unfused",
     true,
     QCT_REF_FP8_E5M2,
     {{FP8, COL, QCT_REF_SCALE_POW2, RM, 1}},
     false,
     false,
     1,
     false},
};

int elemBits(int f) {
  return f == QCT_REF_FP32
             ? 32
             : (f <= QCT_REF_FP16 ? 16 : (f == QCT_REF_MXFP4 ? 4 : 8));
}
int vecOf(int f) { return 128 / elemBits(f); }
bool isMx(int f) { return f >= QCT_REF_MXFP4 && f <= QCT_REF_MXFP8_E5M2; }
bool isFp8(int f) { return f >= QCT_REF_FP8_E4M3; }

/// Random source data: mode 0 random bits (NaN/Inf/subnormal-rich), mode 1
/// tame values with zero blocks and wide per-block scale spreads.
void makeSource(int f, long long M, long long K, int mode, std::mt19937_64 &rng,
                std::vector<uint8_t> &data, std::vector<uint8_t> &scales) {
  data.assign(size_t(M * K * elemBits(f) / 8), 0);
  for (auto &b : data)
    b = uint8_t(rng());
  if ((f == B16 || f == QCT_REF_FP16) && mode >= 1) {
    std::normal_distribution<float> nd(0.f, 1.f);
    uint16_t *p = reinterpret_cast<uint16_t *>(data.data());
    for (long long i = 0; i < M * K; ++i) {
      float x = nd(rng) * std::ldexp(1.0f, int(rng() % 40) - 20);
      uint32_t u;
      std::memcpy(&u, &x, 4);
      p[i] = uint16_t(u >> 16);
      if ((i / 32) % 17 == 3) // zero blocks
        p[i] = (i & 1) ? 0x8000 : 0;
      if ((i / 32) % 29 == 5 && i % 32 == 7) // subnormals
        p[i] = uint16_t(rng() % 0x80);
    }
  }
  scales.clear();
  if (isMx(f)) {
    scales.resize(size_t(M * K / 32));
    for (size_t i = 0; i < scales.size(); ++i) {
      if (mode == 0)
        scales[i] = uint8_t(rng());
      else if (mode == 2) // realistic: clustered, no special bytes
        scales[i] = uint8_t(120 + int(rng() % 8));
      else { // clustered around a row base, gaps up to 40, some 0xFF / 0 / 254
        int base = 100 + int(rng() % 60), r = int(rng() % 100);
        int b = r < 3 ? 0xFF
                      : (r < 5 ? 0
                               : (r < 7 ? 254
                                        : (r < 10 ? int(rng() % 8)
                                                  : base - int(rng() % 41))));
        scales[i] = uint8_t(b < 0 ? 0 : b);
      }
    }
  } else if (isFp8(f)) {
    scales.resize(size_t(M * K / 128) * 4);
    float *s = reinterpret_cast<float *>(scales.data());
    for (size_t i = 0; i < scales.size() / 4; ++i) {
      uint32_t e = mode == 0 ? uint32_t(rng() % 255)
                             : (mode == 2 ? 118 : 90) +
                                   uint32_t(rng() % (mode == 2 ? 8 : 70));
      uint32_t u = (e << 23) | uint32_t(rng() & 0x7FFFFF);
      std::memcpy(&s[i], &u, 4);
    }
  }
}

std::vector<long long> makeOffsets(long long M, long long G,
                                   std::mt19937_64 &rng) {
  std::vector<long long> cut(size_t(G - 1));
  for (auto &c : cut)
    c = M ? (long long)(rng() % uint64_t(M + 1)) : 0;
  if (G > 2)
    cut[0] = cut.size() > 1 ? cut[1] : 0; // an empty group
  std::sort(cut.begin(), cut.end());
  std::vector<long long> o(size_t(G + 1));
  o[0] = 0;
  for (long long g = 1; g < G; ++g)
    o[size_t(g)] = cut[size_t(g - 1)];
  o[size_t(G)] = M;
  return o;
}

long long cdiv(long long a, long long b) { return (a + b - 1) / b; }

struct Variant {
  std::string path, sample;
  int threads = 256, knob = 0; // UNROLL or TILE_K
};

int failures = 0, checks = 0;

void runCase(CUfunction fn, const Sample &s, const Variant &v, long long M,
             long long K, long long G, int mode, uint64_t seed,
             bool badOffsets = false) {
  std::mt19937_64 rng(seed);
  std::vector<uint8_t> data, scales;
  makeSource(s.src, M, K, mode, rng, data, scales);
  std::vector<long long> off;
  std::vector<uint8_t> offBytes;
  if (s.ragged) {
    off = makeOffsets(M, G, rng);
    if (badOffsets)
      off[size_t(G / 2)] = M + 5;
    for (long long x : off) {
      if (s.i64)
        offBytes.insert(offBytes.end(), (uint8_t *)&x, (uint8_t *)&x + 8);
      else {
        int32_t y = int32_t(x);
        offBytes.insert(offBytes.end(), (uint8_t *)&y, (uint8_t *)&y + 4);
      }
    }
  }
  qct_ref_source src{s.src, data.data(),
                     scales.empty() ? nullptr : scales.data(), M, K};
  std::vector<uint8_t> padRef(size_t((G + 1) * (s.i64 ? 8 : 4)), 0);
  qct_ref_ragged rg{offBytes.data(), s.i64 ? 1 : 0, G, s.P,
                    s.writePadded ? padRef.data() : nullptr};

  qct_kernel_args a;
  std::memset(&a, 0, sizeof a);
  a.M = M;
  a.K = K;
  a.G = s.ragged ? G : 0;
  CUdeviceptr dsrc = 0, dsc = 0, doff = 0, dpad = 0, derr = 0;
  CK(cuMemAlloc(&dsrc, data.size() + 16));
  CK(cuMemcpyHtoD(dsrc, data.data(), data.size()));
  a.src = (const void *)dsrc;
  if (!scales.empty()) {
    CK(cuMemAlloc(&dsc, scales.size()));
    CK(cuMemcpyHtoD(dsc, scales.data(), scales.size()));
    a.src_scales = (const void *)dsc;
  }
  CK(cuMemAlloc(&derr, 4));
  CK(cuMemsetD8(derr, 0, 4));
  a.error_flag = (unsigned int *)derr;
  if (s.ragged) {
    CK(cuMemAlloc(&doff, offBytes.size()));
    CK(cuMemcpyHtoD(doff, offBytes.data(), offBytes.size()));
    a.offsets = (const void *)doff;
    CK(cuMemAlloc(&dpad, padRef.size()));
    CK(cuMemsetD8(dpad, 0xCD, padRef.size()));
    a.padded_offsets = (void *)dpad;
  }
  size_t nout = s.outs.size();
  std::vector<std::vector<uint8_t>> refD(nout), refS(nout);
  std::vector<CUdeviceptr> dD(nout), dS(nout);
  char err[512];
  bool refOk = true;
  for (size_t i = 0; i < nout; ++i) {
    const OutDesc &o = s.outs[i];
    qct_ref_output ro{o.fmt,     o.layout, o.scale, o.scaleLayout,
                      o.viaBf16, nullptr,  0,       nullptr,
                      0};
    size_t db = 0, sb = 0;
    if (qct_ref_output_sizes(&src, &ro, s.ragged ? &rg : nullptr, &db, &sb, err,
                             sizeof err)) {
      if (!badOffsets)
        std::printf("reference sizes: %s\n", err);
      refOk = false;
      db = 1 << 20;
      sb = 1 << 20;
    }
    refD[i].assign(db, 0);
    refS[i].assign(sb, 0);
    ro.data = refD[i].data();
    ro.data_bytes = db;
    ro.scales = sb ? refS[i].data() : nullptr;
    ro.scales_bytes = sb;
    if (refOk &&
        qct_ref_convert(&src, &ro, s.ragged ? &rg : nullptr, err, sizeof err)) {
      std::printf("reference: %s\n", err);
      refOk = false;
    }
    CK(cuMemAlloc(&dD[i], db + 16));
    CK(cuMemsetD8(dD[i], 0xCD, db + 16));
    a.out[i] = (void *)dD[i];
    if (sb) {
      CK(cuMemAlloc(&dS[i], sb + 16));
      CK(cuMemsetD8(dS[i], 0xCD, sb + 16));
      a.out_scales[i] = (void *)dS[i];
    }
  }
  // Launch formulas of docs/device-library.md.
  unsigned gx, gy = 1, smem = 0;
  const int VEC = vecOf(s.src);
  if (!s.tile) {
    gx = unsigned(
        std::max(cdiv(M * K, (long long)VEC * v.threads * v.knob), 1LL));
  } else {
    const long long TK = v.knob;
    gx = unsigned(s.ragged ? cdiv(M + G * (s.P - 1), 128) + G : cdiv(M, 128));
    gy = unsigned(cdiv(K, TK));
    long long rowb = TK * elemBits(s.src) / 8;
    long long scb = isMx(s.src) ? 4 * TK : (isFp8(s.src) ? 512 : 0);
    smem =
        unsigned(128 * (rowb + 16) + scb + (s.ragged ? 32 * (G + 1) + 16 : 0));
    if (smem > 48 * 1024)
      CK(cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                            int(smem)));
  }
  void *params[] = {&a};
  if (gx > 0 && gy > 0) {
    CK(cuLaunchKernel(fn, gx, gy, 1, unsigned(v.threads), 1, 1, smem, 0, params,
                      nullptr));
  }
  CK(cuCtxSynchronize());
  unsigned flag = 0;
  CK(cuMemcpyDtoH(&flag, derr, 4));
  ++checks;
  char what[256];
  std::snprintf(what, sizeof what, "%s T%d/%d M=%lld K=%lld G=%lld mode=%d%s",
                v.sample.c_str(), v.threads, v.knob, M, K, G, mode,
                badOffsets ? " bad-offsets" : "");
  if (badOffsets) {
    if (!(flag & QCT_ERROR_BAD_OFFSETS)) {
      std::printf("FAIL %s: error flag not raised\n", what);
      ++failures;
    }
  } else if (!refOk || flag) {
    std::printf("FAIL %s: reference failed or flag %u\n", what, flag);
    ++failures;
  } else {
    bool bad = false;
    for (size_t i = 0; i < nout && !bad; ++i) {
      for (int part = 0; part < 2 && !bad; ++part) {
        const std::vector<uint8_t> &ref = part ? refS[i] : refD[i];
        if (ref.empty())
          continue;
        std::vector<uint8_t> got(ref.size() + 16);
        CK(cuMemcpyDtoH(got.data(), part ? dS[i] : dD[i], got.size()));
        for (size_t b = 0; b < ref.size(); ++b) {
          if (got[b] != ref[b]) {
            std::printf(
                "FAIL %s: out[%zu] %s byte %zu of %zu: got %02x want %02x\n",
                what, i, part ? "scales" : "data", b, ref.size(), got[b],
                ref[b]);
            bad = true;
            break;
          }
        }
        for (size_t b = ref.size(); b < got.size() && !bad; ++b)
          if (got[b] != 0xCD) {
            std::printf("FAIL %s: out[%zu] %s wrote past the end (byte %zu)\n",
                        what, i, part ? "scales" : "data", b);
            bad = true;
          }
      }
    }
    if (s.ragged && s.writePadded && !bad) {
      std::vector<uint8_t> got(padRef.size());
      CK(cuMemcpyDtoH(got.data(), dpad, got.size()));
      if (got != padRef) {
        std::printf("FAIL %s: padded offsets differ\n", what);
        bad = true;
      }
    }
    if (bad)
      ++failures;
  }
  cuMemFree(dsrc);
  if (dsc)
    cuMemFree(dsc);
  cuMemFree(derr);
  if (doff)
    cuMemFree(doff);
  if (dpad)
    cuMemFree(dpad);
  for (size_t i = 0; i < nout; ++i) {
    cuMemFree(dD[i]);
    if (dS[i])
      cuMemFree(dS[i]);
  }
}

/// Times one sample at M x K (ragged: G equal groups) and returns GB/s of the
/// fewest bytes it must move (source, its scales, every output byte).
double benchCase(CUfunction fn, const Sample &s, const Variant &v, long long M,
                 long long K, long long G, double &usOut) {
  std::mt19937_64 rng(99);
  std::vector<uint8_t> data, scales;
  makeSource(s.src, M, K, 2, rng, data, scales); // realistic data
  std::vector<uint8_t> offBytes;
  if (s.ragged)
    for (long long g = 0; g <= G; ++g) {
      long long x = M * g / G;
      if (s.i64)
        offBytes.insert(offBytes.end(), (uint8_t *)&x, (uint8_t *)&x + 8);
      else {
        int32_t y = int32_t(x);
        offBytes.insert(offBytes.end(), (uint8_t *)&y, (uint8_t *)&y + 4);
      }
    }
  qct_ref_source src{s.src, data.data(),
                     scales.empty() ? nullptr : scales.data(), M, K};
  qct_ref_ragged rg{offBytes.data(), s.i64 ? 1 : 0, G, s.P, nullptr};
  qct_kernel_args a;
  std::memset(&a, 0, sizeof a);
  a.M = M;
  a.K = K;
  a.G = s.ragged ? G : 0;
  std::vector<CUdeviceptr> ptrs;
  auto alloc = [&](size_t n) {
    CUdeviceptr p;
    CK(cuMemAlloc(&p, n + 16));
    ptrs.push_back(p);
    return p;
  };
  CUdeviceptr d = alloc(data.size());
  CK(cuMemcpyHtoD(d, data.data(), data.size()));
  a.src = (const void *)d;
  double bytes = double(data.size() + scales.size());
  if (!scales.empty()) {
    CUdeviceptr ds = alloc(scales.size());
    CK(cuMemcpyHtoD(ds, scales.data(), scales.size()));
    a.src_scales = (const void *)ds;
  }
  CUdeviceptr de = alloc(4);
  CK(cuMemsetD8(de, 0, 4));
  a.error_flag = (unsigned int *)de;
  if (s.ragged) {
    CUdeviceptr doff = alloc(offBytes.size());
    CK(cuMemcpyHtoD(doff, offBytes.data(), offBytes.size()));
    a.offsets = (const void *)doff;
    a.padded_offsets = (void *)alloc(offBytes.size());
  }
  char err[512];
  for (size_t i = 0; i < s.outs.size(); ++i) {
    const OutDesc &o = s.outs[i];
    qct_ref_output ro{o.fmt,     o.layout, o.scale, o.scaleLayout,
                      o.viaBf16, nullptr,  0,       nullptr,
                      0};
    size_t db = 0, sb = 0;
    if (qct_ref_output_sizes(&src, &ro, s.ragged ? &rg : nullptr, &db, &sb, err,
                             sizeof err)) {
      std::printf("sizes: %s\n", err);
      std::exit(2);
    }
    a.out[i] = (void *)alloc(db);
    if (sb)
      a.out_scales[i] = (void *)alloc(sb);
    bytes += double(db + sb);
  }
  unsigned gx, gy = 1, smem = 0;
  if (!s.tile) {
    gx = unsigned(std::max(
        cdiv(M * K, (long long)vecOf(s.src) * v.threads * v.knob), 1LL));
  } else {
    const long long TK = v.knob;
    gx = unsigned(s.ragged ? cdiv(M + G * (s.P - 1), 128) + G : cdiv(M, 128));
    gy = unsigned(cdiv(K, TK));
    long long rowb = TK * elemBits(s.src) / 8;
    long long scb = isMx(s.src) ? 4 * TK : (isFp8(s.src) ? 512 : 0);
    smem =
        unsigned(128 * (rowb + 16) + scb + (s.ragged ? 32 * (G + 1) + 16 : 0));
    if (smem > 48 * 1024)
      CK(cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                            int(smem)));
  }
  void *params[] = {&a};
  CUevent e0, e1;
  CK(cuEventCreate(&e0, 0));
  CK(cuEventCreate(&e1, 0));
  std::vector<float> ts;
  for (int it = 0; it < 25; ++it) {
    CK(cuEventRecord(e0, 0));
    CK(cuLaunchKernel(fn, gx, gy, 1, unsigned(v.threads), 1, 1, smem, 0, params,
                      nullptr));
    CK(cuEventRecord(e1, 0));
    CK(cuEventSynchronize(e1));
    float ms;
    CK(cuEventElapsedTime(&ms, e0, e1));
    if (it >= 5)
      ts.push_back(ms);
  }
  std::sort(ts.begin(), ts.end());
  usOut = ts[ts.size() / 2] * 1e3;
  for (CUdeviceptr p : ptrs)
    cuMemFree(p);
  return bytes / (usOut * 1e-6) / 1e9;
}

double copyBandwidth() {
  const size_t n = size_t(1) << 30;
  CUdeviceptr a, b;
  CK(cuMemAlloc(&a, n));
  CK(cuMemAlloc(&b, n));
  CK(cuMemsetD8(a, 1, n));
  CUevent e0, e1;
  CK(cuEventCreate(&e0, 0));
  CK(cuEventCreate(&e1, 0));
  std::vector<float> ts;
  for (int it = 0; it < 15; ++it) {
    CK(cuEventRecord(e0, 0));
    CK(cuMemcpyDtoD(b, a, n));
    CK(cuEventRecord(e1, 0));
    CK(cuEventSynchronize(e1));
    float ms;
    CK(cuEventElapsedTime(&ms, e0, e1));
    if (it >= 3)
      ts.push_back(ms);
  }
  std::sort(ts.begin(), ts.end());
  cuMemFree(a);
  cuMemFree(b);
  return 2.0 * double(n) / (ts[ts.size() / 2] * 1e-3) / 1e9;
}

} // namespace

int main(int argc, char **argv) {
  CK(cuInit(0));
  CUdevice dev;
  CK(cuDeviceGet(&dev, 0));
  CUcontext ctx;
  CK(cuDevicePrimaryCtxRetain(&ctx, dev));
  CK(cuCtxSetCurrent(ctx));
  const bool bench = argc > 1 && std::string(argv[1]) == "--bench";
  const double copyGBs = bench ? copyBandwidth() : 0;
  if (bench)
    std::printf("copy bandwidth (1 GiB D2D, read+write): %.0f GB/s\n", copyGBs);
  for (int i = bench ? 2 : 1; i < argc; ++i) {
    Variant v;
    v.path = argv[i];
    std::string base = v.path.substr(v.path.rfind('/') + 1);
    size_t d1 = base.find('.');
    v.sample = base.substr(0, d1);
    std::sscanf(base.c_str() + d1, ".T%d.%*c%d", &v.threads, &v.knob);
    const Sample *s = nullptr;
    for (const Sample &x : kSamples)
      if (v.sample == x.name)
        s = &x;
    if (!s) {
      std::printf("skip %s: unknown sample\n", base.c_str());
      continue;
    }
    CUmodule mod;
    CK(cuModuleLoad(&mod, v.path.c_str()));
    CUfunction fn;
    CK(cuModuleGetFunction(&fn, mod, ("qct_" + v.sample).c_str()));
    if (bench) {
      double us;
      const long long G = s->ragged ? 32 : 0;
      const double gbs = benchCase(fn, *s, v, 32768, 7168, G, us);
      std::printf("%-48s T%d/%-4d M=32768 K=7168%s: %8.1f us %6.0f GB/s "
                  "%5.1f%% of copy\n",
                  v.sample.c_str(), v.threads, v.knob, G ? " G=32" : "     ",
                  us, gbs, 100.0 * gbs / copyGBs);
      std::fflush(stdout);
      CK(cuModuleUnload(mod));
      continue;
    }
    const int before = failures;
    uint64_t seed = 1;
    // K multiple of 128 (every sample's blocks); M odd, 1, exact tiles.
    const long long shapes[][2] = {{1, 128},   {3, 256},    {128, 384},
                                   {257, 512}, {1000, 640}, {515, 7168}};
    for (auto &sh : shapes)
      for (int mode = 0; mode < 2; ++mode) {
        const long long Gs[] = {1, 5, 37};
        if (s->ragged) {
          for (long long G : Gs)
            runCase(fn, *s, v, sh[0], sh[1], G, mode, seed++);
        } else {
          runCase(fn, *s, v, sh[0], sh[1], 0, mode, seed++);
        }
      }
    if (s->ragged) {
      runCase(fn, *s, v, 0, 256, 3, 0, seed++);         // all groups empty
      runCase(fn, *s, v, 300, 256, 7, 1, seed++, true); // bad offsets
    }
    std::printf("%s %s\n", failures == before ? "ok  " : "FAIL", base.c_str());
    std::fflush(stdout);
    CK(cuModuleUnload(mod));
  }
  std::printf("%d checks, %d failures\n", checks, failures);
  return failures ? 1 : 0;
}
