// Hand-written instantiation in the shape the compiler emits (docs/device-library.md):
// mxfp4 row -> bf16 row (decode).
#include "qct/device/qct_device.cuh"

#ifndef QCT_THREADS
#define QCT_THREADS 256
#endif
#ifndef QCT_UNROLL
#define QCT_UNROLL 2
#endif

namespace {
using namespace qct::dev;
using Source = Src<Fmt::mxfp4>;
using Out0 = Out<Fmt::bf16, Layout::row, 0, Scale::none, ScaleLayout::row_major, Path::direct>;
using Group = NotRagged;
using Config = KernelConfig<Source, Group, /*StaticK=*/0, Out0>;
} // namespace

extern "C" __global__ void __launch_bounds__(QCT_THREADS)
    qct_mxfp4_to_bf16_row(qct_kernel_args args) {
  qct::dev::row_kernel<Config, QCT_THREADS, QCT_UNROLL>(args);
}
