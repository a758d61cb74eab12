//===- qct/device/qct_device.cuh - The one include of generated kernels ---===//
//
// Generated .cu files include this header only; docs/device-library.md
// describes the vocabulary (config.cuh) and the two kernel-body templates
// (row_kernel.cuh, tile_kernel.cuh). Under NVRTC the runtime embeds these
// headers and qct/kernel_args.h by name.
//
//===----------------------------------------------------------------------===//
#ifndef QCT_DEVICE_QCT_DEVICE_CUH
#define QCT_DEVICE_QCT_DEVICE_CUH

#include "qct/device/codecs.cuh"
#include "qct/device/config.cuh"
#include "qct/device/memory.cuh"
#include "qct/device/quant.cuh"
#include "qct/device/ragged.cuh"
#include "qct/device/row_kernel.cuh"
#include "qct/device/tile_kernel.cuh"
#include "qct/kernel_args.h"

#endif // QCT_DEVICE_QCT_DEVICE_CUH
