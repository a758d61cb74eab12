// Hand-written instantiation in the shape the compiler emits (docs/device-library.md):
// mxfp4 -> bf16 col + mxfp4 col (rceil, exact), ragged int32, pad 3 (odd columns).
#include "qct/device/qct_device.cuh"

#ifndef QCT_THREADS
#define QCT_THREADS 256
#endif
#ifndef QCT_TILE_K
#define QCT_TILE_K 128
#endif

namespace {
using namespace qct::dev;
using Source = Src<Fmt::mxfp4>;
using Out0 = Out<Fmt::bf16, Layout::col, 0, Scale::none, ScaleLayout::row_major, Path::direct>;
using Out1 = Out<Fmt::mxfp4, Layout::col, 32, Scale::rceil, ScaleLayout::row_major, Path::direct>;
using Group = Ragged<int, 3, true>;
using Config = KernelConfig<Source, Group, /*StaticK=*/0, Out0, Out1>;
} // namespace

extern "C" __global__ void __launch_bounds__(QCT_THREADS, 1)
    qct_mxfp4_to_bf16_mxfp4_col_ragged_p3(qct_kernel_args args) {
  qct::dev::tile_kernel<Config, QCT_THREADS, QCT_TILE_K>(args);
}
