// Hand-written instantiation in the shape the compiler emits (docs/device-library.md):
// bf16 -> mxfp4 row (floor) + fp8_e4m3 row (amax) + mxfp8_e5m2 col (floor, mn_major).
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
using Out0 = Out<Fmt::mxfp4, Layout::row, 32, Scale::floor, ScaleLayout::row_major, Path::direct>;
using Out1 = Out<Fmt::fp8_e4m3, Layout::row, 128, Scale::amax, ScaleLayout::row_major, Path::direct>;
using Out2 = Out<Fmt::mxfp8_e5m2, Layout::col, 32, Scale::floor, ScaleLayout::mn_major, Path::direct>;
using Group = NotRagged;
using Config = KernelConfig<Source, Group, /*StaticK=*/0, Out0, Out1, Out2>;
} // namespace

extern "C" __global__ void __launch_bounds__(QCT_THREADS, 1)
    qct_bf16_to_three_outputs(qct_kernel_args args) {
  qct::dev::tile_kernel<Config, QCT_THREADS, QCT_TILE_K>(args);
}
