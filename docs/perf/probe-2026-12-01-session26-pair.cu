// Session 26 (docs/perf/probe-2026-12-01-session26.log, calls 2-3). Build: nvcc -O3 -arch=sm_90a -std=c++17 FILE.
// Toy ceiling of bf16 -> mxfp4 row + fp8 col (row_major scales), 128x128 tiles
// of 256 threads, K span first: what pairing M tiles in a cluster of 2 (one
// 8-byte col-scale store per feature instead of two 4-byte ones) saves, with
// the L2 evict_last hint on every scale store as in the real kernel.
#include <cstdio>
#include <cstdint>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); exit(1);} } while (0)
typedef long long i64;
constexpr int TM = 128, TK = 128, T = 256, NV = 16, LOADS = 8, RS = 272;
constexpr int BUF = TM * RS;
struct Args { const uint4 *x; uint32_t *q; uint8_t *rs; uint8_t *y; float *cs; i64 M, K; };

__device__ __forceinline__ uint64_t pol() { uint64_t p; asm("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(p)); return p; }
__device__ __forceinline__ void st4h(void *a, uint32_t v, uint64_t p) { asm volatile("st.global.L2::cache_hint.b32 [%0], %1, %2;" ::"l"(a), "r"(v), "l"(p) : "memory"); }
__device__ __forceinline__ void st8h(void *a, uint32_t v0, uint32_t v1, uint64_t p) { asm volatile("st.global.L2::cache_hint.v2.b32 [%0], {%1, %2}, %3;" ::"l"(a), "r"(v0), "r"(v1), "l"(p) : "memory"); }
__device__ __forceinline__ uint32_t vexp(uint4 v) { uint32_t a = max(max(v.x, v.y), max(v.z, v.w)); return (a >> 23) & 0xFF; }
__device__ __forceinline__ uint32_t vq(uint4 v) {
  return ((v.x >> 12) & 0xF) | ((v.x >> 24) & 0xF0) | (((v.y >> 12) & 0xF) << 8) | ((v.y >> 24) & 0xF0) << 8 |
         (((v.z >> 12) & 0xF) << 16) | (((v.z >> 24) & 0xF0) << 16) | (((v.w >> 12) & 0xF) << 24) | (((v.w >> 24) & 0xF0) << 24);
}

// COLS: 0 none, 1 a 4-byte store per feature per tile, 2 cluster pair along M
// (rank 0 stores both tiles' scales as 8 bytes). PAIR: tile order pairs M tiles.
template <int ROWS, int COLS, int PAIR>
__device__ __forceinline__ void body(const Args &a, float *s_peer) {
  __shared__ __align__(16) uint8_t s[BUF];
  const uint64_t p = pol();
  const i64 KT = a.K / TK;
  i64 m, kt;
  int rank = 0;
  if (PAIR) { const i64 pr = blockIdx.x / 2; rank = blockIdx.x % 2; m = 2 * (pr / KT) + rank; kt = pr % KT; }
  else { m = blockIdx.x / KT; kt = blockIdx.x % KT; }
  const i64 k0 = kt * TK;
  const int vi = threadIdx.x % NV, r0 = threadIdx.x / NV;
  __shared__ __align__(8) unsigned long long s_bar;
  if (COLS == 3) {
    if (rank == 0 && threadIdx.x == 0) {
      unsigned b = (unsigned)__cvta_generic_to_shared(&s_bar);
      asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(b));
      asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
      asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], 512;" ::"r"(b) : "memory");
    }
    asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory");
  }
  uint4 v[LOADS];
#pragma unroll
  for (int u = 0; u < LOADS; ++u) { i64 row = m * TM + r0 + 16 * u; v[u] = a.x[(row * a.K + k0) / 8 + vi]; }
#pragma unroll
  for (int u = 0; u < LOADS; ++u) {
    int r = r0 + 16 * u; i64 row = m * TM + r;
    a.q[(row * a.K + k0 + vi * 8) / 8] = vq(v[u]);
    uint32_t e = vexp(v[u]);
    e = max(e, __shfl_xor_sync(0xffffffff, e, 1)); e = max(e, __shfl_xor_sync(0xffffffff, e, 2));
    uint32_t b1 = __shfl_down_sync(0xffffffff, e, 4), b2 = __shfl_down_sync(0xffffffff, e, 8), b3 = __shfl_down_sync(0xffffffff, e, 12);
    uint32_t sc = e | (b1 << 8) | (b2 << 16) | (b3 << 24);
    if (ROWS && vi == 0) st4h(a.rs + row * (a.K / 32) + k0 / 32, sc, p);
    int pv = vi ^ ((r >> 4) & 7);
    *reinterpret_cast<uint4 *>(s + r * RS + pv * 16) = v[u];
  }
  __syncthreads();
  float own[2][2];
#pragma unroll
  for (int u = 0; u < 2; ++u) {
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
    own[u][0] = __uint_as_float(m0 << 16); own[u][1] = __uint_as_float(m1 << 16);
    if (COLS == 1 && c == 0) { st4h(a.cs + f * (a.M / 128) + m, __float_as_uint(own[u][0]), p); st4h(a.cs + (f + 1) * (a.M / 128) + m, __float_as_uint(own[u][1]), p); }
    if (COLS == 3 && rank == 1) {
      if (u == 0) asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");
      if (c == 0) {
        unsigned la = (unsigned)__cvta_generic_to_shared(s_peer + 2 * fp), ra, lb = (unsigned)__cvta_generic_to_shared(&s_bar), rb;
        asm volatile("mapa.shared::cluster.u32 %0, %1, 0;" : "=r"(ra) : "r"(la));
        asm volatile("mapa.shared::cluster.u32 %0, %1, 0;" : "=r"(rb) : "r"(lb));
        asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v2.b32 [%0], {%1, %2}, [%3];" ::"r"(ra), "r"(__float_as_uint(own[u][0])), "r"(__float_as_uint(own[u][1])), "r"(rb) : "memory");
      }
    }
    if (COLS == 2 && c == 0 && rank == 1) {
      // into rank 0's s_peer
      unsigned la = (unsigned)__cvta_generic_to_shared(s_peer + 2 * fp), ra;
      asm volatile("mapa.shared::cluster.u32 %0, %1, 0;" : "=r"(ra) : "r"(la));
      asm volatile("st.shared::cluster.v2.f32 [%0], {%1, %2};" ::"r"(ra), "f"(own[u][0]), "f"(own[u][1]) : "memory");
    }
  }
  if (COLS == 2 || COLS == 3) {
    if (COLS == 2) asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory");
    if (rank == 0) {
      if (COLS == 2) asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");
      if (COLS == 3) {
        unsigned b = (unsigned)__cvta_generic_to_shared(&s_bar), done = 0;
        while (!done) asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], 0; selp.u32 %0, 1, 0, p; }" : "=r"(done) : "r"(b) : "memory");
      }
#pragma unroll
      for (int u = 0; u < 2; ++u) {
        int task = threadIdx.x + u * T, fp = task >> 3, c = task & 7;
        if (c == 0) {
          i64 f = k0 + 2 * fp;
          st8h(a.cs + f * (a.M / 128) + m, __float_as_uint(own[u][0]), __float_as_uint(s_peer[2 * fp]), p);
          st8h(a.cs + (f + 1) * (a.M / 128) + m, __float_as_uint(own[u][1]), __float_as_uint(s_peer[2 * fp + 1]), p);
        }
      }
    }
  }
}
template <int ROWS, int COLS, int PAIR> __global__ void __launch_bounds__(T, 4) kA(Args a) { __shared__ float sp[128]; body<ROWS, COLS, PAIR>(a, sp); }
template <int ROWS> __global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(T, 4) kC(Args a) { __shared__ __align__(8) float sp[128]; body<ROWS, 2, 1>(a, sp); }
template <int ROWS, int COLS> __global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(T, 4) kCn(Args a) { __shared__ __align__(8) float sp[128]; body<ROWS, COLS, 1>(a, sp); }

int main() {
  const i64 M = 32768, K = 7168, MK = M * K;
  uint16_t *x; uint32_t *q; uint8_t *rs, *y; float *cs;
  CK(cudaMalloc(&x, MK * 2)); CK(cudaMalloc(&q, MK / 2)); CK(cudaMalloc(&rs, MK / 32));
  CK(cudaMalloc(&y, MK)); CK(cudaMalloc(&cs, K * (M / 128) * 4));
  { std::vector<uint16_t> h(1 << 20); uint32_t s = 12345; for (auto &e : h) { s = s * 1664525 + 1013904223; e = (uint16_t)((s >> 8) & 0x7F7F) | 0x3C00; }
    for (i64 o = 0; o < MK; o += (i64)h.size()) CK(cudaMemcpy(x + o, h.data(), std::min<i64>(h.size(), MK - o) * 2, cudaMemcpyHostToDevice)); }
  Args a{(const uint4 *)x, q, rs, y, cs, M, K};
  const i64 tiles = (M / TM) * (K / TK);
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
  auto report = [&](const char *name, float us) { printf("%-34s %8.1f us  %5.1f%% copy\n", name, us, 100.0 * bytes / us / 1e3 / copy_gbs); };
  for (int rep = 0; rep < 2; ++rep) {
    report("kfirst rows1 cols1", timeit([&] { kA<1, 1, 0><<<tiles, T>>>(a); }));
    report("kfirst rows0 cols0", timeit([&] { kA<0, 0, 0><<<tiles, T>>>(a); }));
    report("kfirst rows1 cols0", timeit([&] { kA<1, 0, 0><<<tiles, T>>>(a); }));
    report("kfirst rows0 cols1", timeit([&] { kA<0, 1, 0><<<tiles, T>>>(a); }));
    report("pairorder rows1 cols1", timeit([&] { kA<1, 1, 1><<<tiles, T>>>(a); }));
    report("pairorder rows1 cols0", timeit([&] { kA<1, 0, 1><<<tiles, T>>>(a); }));
    report("cluster2 rows1 cols1(no xchg)", timeit([&] { kCn<1, 1><<<tiles, T>>>(a); }));
    report("cluster2 rows1 cols2(8B pair)", timeit([&] { kC<1><<<tiles, T>>>(a); }));
    report("cluster2 rows0 cols2(8B pair)", timeit([&] { kC<0><<<tiles, T>>>(a); }));
    report("cluster2 rows1 cols3(st.async)", timeit([&] { kCn<1, 3><<<tiles, T>>>(a); }));
    report("cluster2 rows0 cols3(st.async)", timeit([&] { kCn<0, 3><<<tiles, T>>>(a); }));
  }
  return 0;
}
