// Session 26 (docs/perf/probe-2026-12-01-session26.log, calls 4-6 and 8): a data-movement model
// of bf16 -> mxfp4 row + fp8 col (row_major scales, L2 evict_last on scale stores), K span
// first, and what the row scales' stores cost: wider tiles (128 tokens x TK features on T
// threads, TK/32 scale bytes per token row), whole-sector stores to a scratch order (ROWS 2),
// scales computed but not stored (ROWS 3), stored after the column pass (RLATE), with or without
// the hint (RH, CH 0/1), by atom.exch (2) or red.or (3, wrong values: timing only). main() lists
// call 8's variants; calls 4-6 listed the others (the log has each call's rows).
// Build: nvcc -O3 -arch=sm_90a -std=c++17 FILE.
#include <cstdio>
#include <cstdint>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); exit(1);} } while (0)
typedef long long i64;
struct Args { const uint4 *x; uint32_t *q; uint8_t *rs; uint8_t *y; float *cs; i64 M, K; };
__device__ __forceinline__ uint64_t pol() { uint64_t p; asm("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(p)); return p; }
__device__ __forceinline__ void st4h(void *a, uint32_t v, uint64_t p) { asm volatile("st.global.L2::cache_hint.b32 [%0], %1, %2;" ::"l"(a), "r"(v), "l"(p) : "memory"); }
__device__ __forceinline__ void st8h(void *a, uint32_t v0, uint32_t v1, uint64_t p) { asm volatile("st.global.L2::cache_hint.v2.b32 [%0], {%1, %2}, %3;" ::"l"(a), "r"(v0), "r"(v1), "l"(p) : "memory"); }
__device__ __forceinline__ uint32_t vexp(uint4 v) { uint32_t a = max(max(v.x, v.y), max(v.z, v.w)); return (a >> 23) & 0xFF; }
__device__ __forceinline__ uint32_t vq(uint4 v) {
  return ((v.x >> 12) & 0xF) | ((v.x >> 24) & 0xF0) | (((v.y >> 12) & 0xF) << 8) | ((v.y >> 24) & 0xF0) << 8 |
         (((v.z >> 12) & 0xF) << 16) | (((v.z >> 24) & 0xF0) << 16) | (((v.w >> 12) & 0xF) << 24) | (((v.w >> 24) & 0xF0) << 24);
}
__device__ __forceinline__ void ax4(void *a, uint32_t v) { uint32_t o; asm volatile("atom.global.exch.b32 %0, [%1], %2;" : "=r"(o) : "l"(a), "r"(v) : "memory"); }
__device__ __forceinline__ void rd4(void *a, uint32_t v) { asm volatile("red.global.or.b32 [%0], %1;" ::"l"(a), "r"(v) : "memory"); }
__device__ __forceinline__ void st4(void *a, uint32_t v) { asm volatile("st.global.b32 [%0], %1;" ::"l"(a), "r"(v) : "memory"); }
template <int ROWS, int COLS, int TK, int T, int MINB, int RH = 1, int RLATE = 0, int CH = 1>
__global__ void __launch_bounds__(T, MINB) kW(Args a) {
  constexpr int NV = TK / 8, STEP = T / NV, LOADS = 128 * NV / T, RS = TK * 2 + 16;
  extern __shared__ __align__(16) uint8_t s[];
  const uint64_t p = pol();
  const i64 KT = a.K / TK, m = blockIdx.x / KT, kt = blockIdx.x % KT, k0 = kt * TK;
  const int vi = threadIdx.x % NV, r0 = threadIdx.x / NV, lane = threadIdx.x % 32;
  uint4 v[LOADS];
  uint32_t late[LOADS];
#pragma unroll
  for (int u = 0; u < LOADS; ++u) { i64 row = m * 128 + r0 + STEP * u; v[u] = a.x[(row * a.K + k0) / 8 + vi]; }
#pragma unroll
  for (int u = 0; u < LOADS; ++u) {
    int r = r0 + STEP * u; i64 row = m * 128 + r;
    a.q[(row * a.K + k0 + vi * 8) / 8] = vq(v[u]);
    uint32_t e = vexp(v[u]);
    e = max(e, __shfl_xor_sync(0xffffffff, e, 1)); e = max(e, __shfl_xor_sync(0xffffffff, e, 2));
    const int base = lane & ~(NV - 1);
    uint32_t w0 = 0, w1 = 0;
#pragma unroll
    for (int j = 0; j < TK / 32; ++j) {
      uint32_t b = __shfl_sync(0xffffffff, e, base + 4 * j);
      if (j < 4) w0 |= b << (8 * j); else w1 |= b << (8 * (j - 4));
    }
    if (ROWS == 2 && vi == 0) { // tile-contiguous scratch: whole sectors per CTA
      uint8_t *d = a.rs + (i64)blockIdx.x * (128 * TK / 32) + r * (TK / 32);
      if (TK == 256) st8h(d, w0, w1, p); else st4h(d, w0, p);
    }
    if (ROWS == 3 && vi == 0 && (w0 ^ w1) == 0x12345679u) a.rs[row] = 1; // compute kept, no store
    late[u] = w0;
    if (ROWS == 1 && vi == 0 && !RLATE) {
      uint8_t *d = a.rs + row * (a.K / 32) + k0 / 32;
      if (TK == 256) st8h(d, w0, w1, p); else if (RH == 2) ax4(d, w0); else if (RH == 3) rd4(d, w0); else if (RH) st4h(d, w0, p); else st4(d, w0);
    }
    int pv = vi ^ ((r >> 4) & 7);
    *reinterpret_cast<uint4 *>(s + r * RS + pv * 16) = v[u];
  }
  __syncthreads();
#pragma unroll
  for (int u = 0; u < TK * 4 / T; ++u) {
    int task = threadIdx.x + u * T, fp = task >> 3, c = task & 7, rr = 16 * c;
    int pv = (fp / 4) ^ (c & 7);
    const uint8_t *pp = s + rr * RS + pv * 16 + (fp % 4) * 4;
    uint32_t w[16];
#pragma unroll
    for (int j = 0; j < 16; ++j) w[j] = *reinterpret_cast<const uint32_t *>(pp + j * RS);
    uint32_t m0 = 0, m1 = 0;
#pragma unroll
    for (int j = 0; j < 16; ++j) { m0 = max(m0, w[j] & 0x7FFF); m1 = max(m1, (w[j] >> 16) & 0x7FFF); }
#pragma unroll
    for (int o = 1; o < 8; o <<= 1) { m0 = max(m0, __shfl_xor_sync(0xffffffff, m0, o)); m1 = max(m1, __shfl_xor_sync(0xffffffff, m1, o)); }
    uint32_t o0[4], o1[4];
#pragma unroll
    for (int j = 0; j < 4; ++j) { o0[j] = o1[j] = 0;
#pragma unroll
      for (int b = 0; b < 4; ++b) { uint32_t x = w[4 * j + b]; o0[j] |= (((x >> 7) ^ m0) & 0xFF) << (8 * b); o1[j] |= (((x >> 23) ^ m1) & 0xFF) << (8 * b); } }
    i64 f = k0 + 2 * fp;
    *reinterpret_cast<uint4 *>(a.y + f * a.M + m * 128 + rr) = make_uint4(o0[0], o0[1], o0[2], o0[3]);
    *reinterpret_cast<uint4 *>(a.y + (f + 1) * a.M + m * 128 + rr) = make_uint4(o1[0], o1[1], o1[2], o1[3]);
    if (COLS && c == 0) {
      if (CH == 2) { ax4(a.cs + f * (a.M / 128) + m, m0 << 16); ax4(a.cs + (f + 1) * (a.M / 128) + m, m1 << 16); }
      else if (CH == 3) { rd4(a.cs + f * (a.M / 128) + m, m0 << 16); rd4(a.cs + (f + 1) * (a.M / 128) + m, m1 << 16); }
      else if (CH) { st4h(a.cs + f * (a.M / 128) + m, m0 << 16, p); st4h(a.cs + (f + 1) * (a.M / 128) + m, m1 << 16, p); }
      else { st4(a.cs + f * (a.M / 128) + m, m0 << 16); st4(a.cs + (f + 1) * (a.M / 128) + m, m1 << 16); }
    }
  }
  if (ROWS == 1 && RLATE && vi == 0) {
#pragma unroll
    for (int u = 0; u < LOADS; ++u) {
      uint8_t *d = a.rs + (m * 128 + r0 + STEP * u) * (a.K / 32) + k0 / 32;
      if (RH) st4h(d, late[u], p); else st4(d, late[u]);
    }
  }
}
int main() {
  const i64 M = 32768, K = 7168, MK = M * K;
  uint16_t *x; uint32_t *q; uint8_t *rs, *y; float *cs;
  CK(cudaMalloc(&x, MK * 2)); CK(cudaMalloc(&q, MK / 2)); CK(cudaMalloc(&rs, MK / 32));
  CK(cudaMalloc(&y, MK)); CK(cudaMalloc(&cs, K * (M / 128) * 4));
  { std::vector<uint16_t> h(1 << 20); uint32_t s = 12345; for (auto &e : h) { s = s * 1664525 + 1013904223; e = (uint16_t)((s >> 8) & 0x7F7F) | 0x3C00; }
    for (i64 o = 0; o < MK; o += (i64)h.size()) CK(cudaMemcpy(x + o, h.data(), std::min<i64>(h.size(), MK - o) * 2, cudaMemcpyHostToDevice)); }
  Args a{(const uint4 *)x, q, rs, y, cs, M, K};
  cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
  void *c0, *c1; CK(cudaMalloc(&c0, 1 << 30)); CK(cudaMalloc(&c1, 1 << 30));
  auto timeit = [&](auto launch) {
    for (int i = 0; i < 5; ++i) launch();
    CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
    std::vector<float> ts;
    for (int i = 0; i < 30; ++i) { CK(cudaEventRecord(e0)); launch(); CK(cudaEventRecord(e1)); CK(cudaEventSynchronize(e1)); float ms; CK(cudaEventElapsedTime(&ms, e0, e1)); ts.push_back(ms * 1000); }
    CK(cudaGetLastError()); std::sort(ts.begin(), ts.end()); return ts[ts.size() / 2];
  };
  float cp = timeit([&] { CK(cudaMemcpyAsync(c1, c0, 1 << 30, cudaMemcpyDeviceToDevice)); });
  double copy_gbs = 2.0 * (1 << 30) / cp / 1e3;
  printf("copy %.1f us  %.0f GB/s\n", cp, copy_gbs);
  const double bytes = 3.56 * (double)MK;
  auto run = [&](auto kern, int tk, int t, const char *name) {
    const int smem = 128 * (tk * 2 + 16);
    CK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    int occ; CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, kern, t, smem));
    const int grid = (int)((M / 128) * (K / tk));
    float us = timeit([&] { kern<<<grid, t, smem>>>(a); });
    printf("%-30s occ %d  %8.1f us  %5.1f%% copy\n", name, occ, us, 100.0 * bytes / us / 1e3 / copy_gbs);
  };
  for (int rep = 0; rep < 2; ++rep) {
    run(kW<1, 1, 128, 256, 4>, 128, 256, "r1 c1 (hints both)");
    run(kW<3, 1, 128, 256, 4>, 128, 256, "r-nostore c1");
    run(kW<3, 0, 128, 256, 4>, 128, 256, "r-nostore c0");
    run(kW<1, 1, 128, 256, 4, 1, 0, 2>, 128, 256, "r1 hint, c atom.exch");
    run(kW<1, 1, 128, 256, 4, 2, 0, 1>, 128, 256, "r atom.exch, c1 hint");
    run(kW<1, 1, 128, 256, 4, 2, 0, 2>, 128, 256, "r atom.exch, c atom.exch");
    run(kW<1, 1, 128, 256, 4, 3, 0, 3>, 128, 256, "r red.or, c red.or (wrong values)");
    run(kW<1, 1, 128, 256, 4, 1, 0, 3>, 128, 256, "r1 hint, c red.or (wrong values)");
  }
  return 0;
}
