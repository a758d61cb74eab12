// Hand-written instantiation in the shape the compiler emits (docs/device-library.md):
// fp16 -> fp8_e5m2 col (amax), ragged int32, pad 1.
#include "qct/device/qct_device.cuh"

#ifndef QCT_THREADS
#define QCT_THREADS 256
#endif
#ifndef QCT_TILE_K
#define QCT_TILE_K 128
#endif

namespace {
using namespace qct::dev;
using Source = Src<Fmt::fp16>;
using Out0 = Out<Fmt::fp8_e5m2, Layout::col, 128, Scale::amax, ScaleLayout::row_major, Path::direct>;
using Group = Ragged<int, 1, false>;
using Config = KernelConfig<Source, Group, /*StaticK=*/0, Out0>;
} // namespace

extern "C" __global__ void __launch_bounds__(QCT_THREADS, 1)
    qct_fp16_to_fp8_e5m2_col_ragged(qct_kernel_args args) {
  qct::dev::tile_kernel<Config, QCT_THREADS, QCT_TILE_K>(args);
}
