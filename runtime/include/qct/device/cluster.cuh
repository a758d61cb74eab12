//===- qct/device/cluster.cuh - Block scales combined over a CTA cluster --===//
//
// Row_major 1x128 block scales of a col output are one f32 per (feature,
// 128-token tile): a feature's scales of consecutive tiles are consecutive,
// so one 32-byte L2 sector holds 8 tiles' scales of a feature, and a CTA per
// tile writes each sector in 8 partial 4-byte stores from 8 CTAs. On the
// H200 those partial-sector writes cost the dense mxfp4 -> fp8 col kernel
// 15% (docs/performance.md). With QCT_CLUSTER_M 8 the 8 CTAs of consecutive
// tiles form a thread block cluster: each stores its tiles' bmax per MX
// block into every CTA's shared memory (distributed shared memory) as soon
// as the pass has it, and after its own tiles every CTA writes an eighth of
// the cluster's scales from its copy, 8 consecutive lanes a feature's 8
// scales: one whole sector per 8 lanes. Needs sm_90 (clusters, mapa).
//
//===----------------------------------------------------------------------===//
#ifndef QCT_DEVICE_CLUSTER_CUH
#define QCT_DEVICE_CLUSTER_CUH

#include "qct/device/quant.cuh"

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#include "qct/kernel_args.h"

namespace qct {
namespace dev {

/// The bmax entry of a tile without tokens (ragged capacity tail or group
/// padding): its block scale is 1.0 (numerics.md). Below every real entry
/// (-1: no finite source scale, 0..254: a scale byte).
constexpr int kNoTokensBmax = -2;

/// This CTA's rank in its cluster.
QCT_DEV unsigned cluster_rank() {
  unsigned r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}

/// This thread has arrived at the cluster barrier (release: its earlier
/// shared-memory writes, local and remote, are visible to every thread of
/// the cluster once that thread's wait returns).
QCT_DEV void cluster_arrive() {
  asm volatile("barrier.cluster.arrive.release;" ::: "memory");
}

/// Waits until every thread of the cluster has arrived (acquire).
QCT_DEV void cluster_wait() {
  asm volatile("barrier.cluster.wait.acquire;" ::: "memory");
}

/// Stores v to the int at p in the shared memory of the cluster's CTA
/// `rank` (p is this CTA's address of the same variable).
QCT_DEV void store_cluster_shared(int *p, unsigned rank, int v) {
  const unsigned local = (unsigned)__cvta_generic_to_shared(p);
  unsigned remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;"
               : "=r"(remote)
               : "r"(local), "r"(rank));
  asm volatile("st.shared::cluster.u32 [%0], %1;" ::"r"(remote), "r"(v)
               : "memory");
}

/// The cluster's bmax table, a copy in every CTA: [CL][NBM] ints, entry
/// (rank, (M tile * K_TILES + K tile) * NV + MX block), kNoTokensBmax where
/// no pass ran. Every thread of every CTA walks the same two barrier
/// phases, early arrivals and late waits so that no CTA waits for its
/// peers' stores:
///   begin()   fills the local copy, arrives (phase 1);
///   publish() per tile, after the pass's bmax: the first waits for phase 1
///             (every CTA has started and filled its copy: remote stores
///             may go), NV * CL threads store the tile's NV entries to the
///             CL copies, and the CTA's last tile arrives (phase 2);
///   end()     after the CTA's loops: the phases not walked yet, then waits
///             for phase 2 (every copy is complete; no CTA writes into
///             another after it, so none needs to stay for its peers).
template <int CL, int NV, int NBM> struct ClusterBmax {
  int *table;
  unsigned rank;
  bool started;   // phase 1 waited for
  bool published; // phase 2 arrived at

  template <int THREADS> QCT_DEV void begin(int *t) {
    table = t;
    rank = cluster_rank();
    started = published = false;
    for (int i = threadIdx.x; i < CL * NBM; i += THREADS)
      table[i] = kNoTokensBmax;
    cluster_arrive();
  }
  /// bm: this thread's bmax of MX block threadIdx.x % NV for the entries
  /// from entry0; push false (the second half's CTA at TILE_M 64) stores
  /// nothing.
  QCT_DEV void publish(int entry0, int bm, bool push, bool last) {
    if (!started) {
      cluster_wait();
      started = true;
    }
    if (push && threadIdx.x < NV * CL)
      store_cluster_shared(table + rank * NBM + entry0 + threadIdx.x % NV,
                           threadIdx.x / NV, bm);
    if (last && !published) {
      cluster_arrive();
      published = true;
    }
  }
  QCT_DEV void end() {
    if (!started)
      cluster_wait();
    if (!published)
      cluster_arrive();
    cluster_wait();
  }
};

/// The row_major block scales of the CL CTAs of this CTA's cluster (along x,
/// each of M_TILES tiles, or half a tile at TILE_M 64; K_TILES x TILE_K
/// features from blockIdx.y), from the table of ClusterBmax after end():
/// the first half's entries of a TILE_M 64 tile. `ok` false (bad ragged
/// offsets, the same in every CTA) writes nothing. Tiles from `scols` on
/// (the grid's rounding up to whole clusters) and features from K on are
/// not written.
template <typename Cfg, int THREADS, int TILE_K, int K_TILES, int M_TILES,
          int TILE_M, int CL>
QCT_DEV void store_cluster_scales(const qct_kernel_args &args,
                                  const int *table, unsigned rank, bool ok,
                                  i64 scols, i64 K) {
  constexpr int H = TILE_M == 64 ? 1 : 0; // CTAs per tile: 1 << H
  constexpr int T = (CL >> H) * M_TILES;  // tiles of the cluster
  constexpr int NV = TILE_K / 32;
  constexpr int NF = K_TILES * TILE_K;
  constexpr int NBM = M_TILES * K_TILES * NV;
  static_assert(CL == 2 || CL == 4 || CL == 8, "QCT_CLUSTER_M: 1, 2, 4, 8");
  static_assert((CL >> H) >= 1, "a cluster holds whole tiles");
  const i64 tile0 = (i64)((blockIdx.x - rank) >> H) * M_TILES;
  const i64 kbase = (i64)blockIdx.y * NF;
  // Item i: feature i / T, tile i % T of the cluster; T consecutive lanes
  // write a feature's T consecutive scales.
#pragma unroll 1
  for (int i = (int)rank * THREADS + threadIdx.x; ok && i < NF * T;
       i += CL * THREADS) {
    const int f = i / T, tau = i % T;
    const i64 kf = kbase + f, tile = tile0 + tau;
    if (kf >= K || tile >= scols)
      continue;
    const int bm = table[((tau / M_TILES) << H) * NBM +
                         ((tau % M_TILES) * K_TILES + f / TILE_K) * NV +
                         (f % TILE_K) / 32];
    static_for<0, Cfg::num_outputs>([&](auto oi) {
      using O = typename Cfg::template out<decltype(oi)::value>;
      if constexpr (O::col && O::scale_layout == ScaleLayout::row_major) {
        const u32 s = bm == kNoTokensBmax
                          ? 0x3F800000u
                          : pow2_f32_bits(
                                aligned_scale_exp(bm, 2, O::T::elem().emax));
        static_cast<u32 *>(args.out_scales[decltype(oi)::value])
            [kf * scols + tile] = s;
      }
    });
  }
}

} // namespace dev
} // namespace qct

#endif // CUDA

#endif // QCT_DEVICE_CLUSTER_CUH
