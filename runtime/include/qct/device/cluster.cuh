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
// scales: one whole sector per 8 lanes. Needs sm_90 (clusters, mapa,
// st.async).
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

/// Entry (M tile mi, feature f of the CTA's K_TILES x TILE_K span) of a
/// CTA's buffered bmax (tile_kernel's s_mbm, and each CTA's row of the
/// cluster table): per M tile, K tile and MX block.
template <int TILE_K, int K_TILES> QCT_HD int bmax_entry(int mi, int f) {
  return (mi * K_TILES + f / TILE_K) * (TILE_K / 32) + (f % TILE_K) / 32;
}

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

/// The shared::cluster address of the variable at p (this CTA's address)
/// in the shared memory of the cluster's CTA `rank`.
QCT_DEV unsigned cluster_shared_address(const void *p, unsigned rank) {
  unsigned remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;"
               : "=r"(remote)
               : "r"((unsigned)__cvta_generic_to_shared(p)), "r"(rank));
  return remote;
}

/// Stores v to the int at p of the cluster's CTA `rank` as an asynchronous
/// store that completes 4 bytes of the transaction count of mbarrier `bar`
/// there (no fence: the receiver's wait on its barrier orders it).
QCT_DEV void store_async_cluster(int *p, unsigned long long *bar, unsigned rank,
                                 int v) {
  asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.u32 "
               "[%0], %1, [%2];" ::"r"(cluster_shared_address(p, rank)),
               "r"(v), "r"(cluster_shared_address(bar, rank))
               : "memory");
}

/// The cluster's bmax table, a copy in every CTA: [CL][NBM] ints, entry
/// (rank, (M tile * K_TILES + K tile) * NV + MX block), kNoTokensBmax where
/// no pass ran, and NV scratch ints after them. Each owner CTA (every CTA;
/// at TILE_M 64 the first half's) stores each of its NBM entries into every
/// copy with st.async, which counts its bytes on the receiver's mbarrier:
///   begin()   fills the local copy, sets the mbarrier to expect every
///             owner's NBM entries, arrives at the cluster barrier;
///   publish() per tile, after the pass's bmax: the first waits at the
///             cluster barrier (every CTA has started and set up its copy:
///             remote stores may go), then NV * CL threads store the tile's
///             NV entries, one to each copy;
///   end()     after the CTA's loops: an owner that ran fewer than
///             M_TILES * K_TILES passes stores as many filler entries to
///             the scratch ints (the expected count is fixed), then every
///             thread waits until its copy's mbarrier has all the bytes.
/// No release fence on the owners' side and no barrier at the end: a CTA's
/// copy is complete, and written by no one, once its mbarrier completes,
/// so it may leave without waiting for its peers.
template <int CL, int NV, int NBM, int TILE_M> struct ClusterBmax {
  static constexpr int kOwners = TILE_M == 64 ? CL / 2 : CL;
  int *table;
  unsigned long long *bar;
  unsigned rank;
  bool owner;   // this CTA stores entries
  bool started; // the cluster barrier waited for
  int pushed;   // tiles whose entries were stored

  template <int THREADS> QCT_DEV void begin(int *t, unsigned long long *b) {
    table = t;
    bar = b;
    rank = cluster_rank();
    owner = TILE_M == 128 || (rank & 1) == 0;
    started = false;
    pushed = 0;
    for (int i = threadIdx.x; i < CL * NBM; i += THREADS)
      table[i] = kNoTokensBmax;
    if (threadIdx.x == 0) {
      const unsigned a = (unsigned)__cvta_generic_to_shared(bar);
      asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(a)
                   : "memory");
      asm volatile(
          "mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(a),
          "r"(kOwners * NBM * 4)
          : "memory");
      asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    cluster_arrive();
  }
  QCT_DEV void start() {
    if (!started) {
      cluster_wait();
      started = true;
    }
  }
  /// bm: this thread's bmax of MX block threadIdx.x % NV for the entries
  /// from entry0.
  QCT_DEV void publish(int entry0, int bm) {
    start();
    if (owner && threadIdx.x < NV * CL)
      store_async_cluster(table + rank * NBM + entry0 + threadIdx.x % NV, bar,
                          threadIdx.x / NV, bm);
    ++pushed;
  }
  QCT_DEV void end() {
    start();
    if (owner && threadIdx.x < NV * CL) {
#pragma unroll 1
      for (int t = pushed; t < NBM / NV; ++t)
        store_async_cluster(table + CL * NBM + threadIdx.x % NV, bar,
                            threadIdx.x / NV, kNoTokensBmax);
    }
    const unsigned a = (unsigned)__cvta_generic_to_shared(bar);
    unsigned done = 0;
    while (!done)
      asm volatile("{\n.reg .pred p;\n"
                   "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 "
                   "p, [%1], 0;\n"
                   "selp.u32 %0, 1, 0, p;\n}"
                   : "=r"(done)
                   : "r"(a)
                   : "memory");
  }
};

/// The row_major block scales of the CL CTAs of this CTA's cluster (along x,
/// each of M_TILES tiles, or half a tile at TILE_M 64; K_TILES x TILE_K
/// features from blockIdx.y), from the table of ClusterBmax after end():
/// the first half's entries of a TILE_M 64 tile. `ok` false (bad ragged
/// offsets, the same in every CTA) writes nothing. `scols` is the row_major
/// stride; tiles from `scol_end` on (the grid's rounding up to whole
/// clusters, and a ragged capacity tail left untouched) and features from K
/// on are not written.
template <typename Cfg, int THREADS, int TILE_K, int K_TILES, int M_TILES,
          int TILE_M, int CL>
QCT_DEV void store_cluster_scales(const qct_kernel_args &args, const int *table,
                                  unsigned rank, bool ok, i64 scols,
                                  i64 scol_end, i64 K) {
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
    if (kf >= K || tile >= scol_end)
      continue;
    const int bm = table[((tau / M_TILES) << H) * NBM +
                         bmax_entry<TILE_K, K_TILES>(tau % M_TILES, f)];
    static_for<0, Cfg::num_outputs>([&](auto oi) {
      using O = typename Cfg::template out<decltype(oi)::value>;
      if constexpr (O::col && O::scale_layout == ScaleLayout::row_major) {
        const u32 s =
            bm == kNoTokensBmax
                ? 0x3F800000u
                : pow2_f32_bits(aligned_scale_exp(bm, 2, O::T::elem().emax));
        static_cast<u32 *>(
            args.out_scales[decltype(oi)::value])[kf * scols + tile] = s;
      }
    });
  }
}

} // namespace dev
} // namespace qct

#endif // CUDA

#endif // QCT_DEVICE_CLUSTER_CUH
