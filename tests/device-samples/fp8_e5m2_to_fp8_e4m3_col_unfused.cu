// Hand-written instantiation in the shape the compiler emits (docs/device-library.md):
// fp8_e5m2 1x128 -> fp8_e4m3 col (pow2), fuse: false (via bf16).
#include "qct/device/qct_device.cuh"

#ifndef QCT_THREADS
#define QCT_THREADS 256
#endif
#ifndef QCT_TILE_K
#define QCT_TILE_K 128
#endif

namespace {
using namespace qct::dev;
using Source = Src<Fmt::fp8_e5m2>;
using Out0 = Out<Fmt::fp8_e4m3, Layout::col, 128, Scale::pow2, ScaleLayout::row_major, Path::via_bf16>;
using Group = NotRagged;
using Config = KernelConfig<Source, Group, /*StaticK=*/0, Out0>;
} // namespace

extern "C" __global__ void __launch_bounds__(QCT_THREADS, 1)
    qct_fp8_e5m2_to_fp8_e4m3_col_unfused(qct_kernel_args args) {
  qct::dev::tile_kernel<Config, QCT_THREADS, QCT_TILE_K>(args);
}
