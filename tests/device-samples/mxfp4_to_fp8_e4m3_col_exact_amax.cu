// Hand-written instantiation in the shape the compiler emits (docs/device-library.md):
// mxfp4 row -> fp8_e4m3 col (amax, exact decoded values).
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
using Out0 = Out<Fmt::fp8_e4m3, Layout::col, 128, Scale::amax, ScaleLayout::row_major, Path::direct>;
using Group = Ragged<int, 16, false>;
using Config = KernelConfig<Source, Group, /*StaticK=*/0, Out0>;
} // namespace

extern "C" __global__ void __launch_bounds__(QCT_THREADS, 1)
    qct_mxfp4_to_fp8_e4m3_col_exact_amax(qct_kernel_args args) {
  qct::dev::tile_kernel<Config, QCT_THREADS, QCT_TILE_K>(args);
}
