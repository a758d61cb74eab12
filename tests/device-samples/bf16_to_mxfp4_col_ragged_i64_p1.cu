// Hand-written instantiation in the shape the compiler emits (docs/device-library.md):
// bf16 -> mxfp4 col (rceil, mn_major), ragged int64, pad 1 (odd group boundaries).
#include "qct/device/qct_device.cuh"

#ifndef QCT_THREADS
#define QCT_THREADS 256
#endif
#ifndef QCT_TILE_K
#define QCT_TILE_K 128
#endif

namespace {
using namespace qct::dev;
using Source = Src<Fmt::bf16>;
using Out0 = Out<Fmt::mxfp4, Layout::col, 32, Scale::rceil, ScaleLayout::mn_major, Path::direct>;
using Group = Ragged<long long, 1, true>;
using Config = KernelConfig<Source, Group, /*StaticK=*/0, Out0>;
} // namespace

extern "C" __global__ void __launch_bounds__(QCT_THREADS, 1)
    qct_bf16_to_mxfp4_col_ragged_i64_p1(qct_kernel_args args) {
  qct::dev::tile_kernel<Config, QCT_THREADS, QCT_TILE_K>(args);
}
