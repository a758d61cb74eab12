// Hand-written instantiation in the shape the compiler emits (docs/device-library.md):
// fp32 -> mxfp8_e4m3 row (rceil, mn_major scales).
#include "qct/device/qct_device.cuh"

#ifndef QCT_THREADS
#define QCT_THREADS 256
#endif
#ifndef QCT_UNROLL
#define QCT_UNROLL 2
#endif

namespace {
using namespace qct::dev;
using Source = Src<Fmt::fp32>;
using Out0 = Out<Fmt::mxfp8_e4m3, Layout::row, 32, Scale::rceil, ScaleLayout::mn_major, Path::direct>;
using Group = NotRagged;
using Config = KernelConfig<Source, Group, /*StaticK=*/0, Out0>;
} // namespace

extern "C" __global__ void __launch_bounds__(QCT_THREADS)
    qct_fp32_to_mxfp8_e4m3_row_rceil_mn(qct_kernel_args args) {
  qct::dev::row_kernel<Config, QCT_THREADS, QCT_UNROLL>(args);
}
