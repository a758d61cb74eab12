// Hand-written instantiation in the shape the compiler emits (docs/device-library.md):
// mxfp8_e5m2 -> fp8_e4m3 row + col, aligned (scale exponent clamp).
#include "qct/device/qct_device.cuh"

#ifndef QCT_THREADS
#define QCT_THREADS 256
#endif
#ifndef QCT_TILE_K
#define QCT_TILE_K 128
#endif

namespace {
using namespace qct::dev;
using Source = Src<Fmt::mxfp8_e5m2>;
using Out0 = Out<Fmt::fp8_e4m3, Layout::row, 128, Scale::aligned, ScaleLayout::row_major, Path::direct>;
using Out1 = Out<Fmt::fp8_e4m3, Layout::col, 128, Scale::aligned, ScaleLayout::mn_major, Path::direct>;
using Group = NotRagged;
using Config = KernelConfig<Source, Group, /*StaticK=*/0, Out0, Out1>;
} // namespace

extern "C" __global__ void __launch_bounds__(QCT_THREADS, 1)
    qct_mxfp8_e5m2_to_fp8_e4m3_rowcol_aligned(qct_kernel_args args) {
  qct::dev::tile_kernel<Config, QCT_THREADS, QCT_TILE_K>(args);
}
