//===- CudaEmitter.h - CUDA C++ for a lowered kernel ----------------------===//

#ifndef QCT_TARGET_CUDAEMITTER_H
#define QCT_TARGET_CUDAEMITTER_H

#include "qct/Target/KernelPlan.h"

#include "llvm/ADT/StringRef.h"

#include <string>

namespace qct {

/// The kernel's .cu file in the vocabulary of docs/device-library.md: a
/// banner, the device header include, #ifndef defaults of the schedule knobs,
/// the Config type and the extern "C" entry qct_<name>. `specPath` (may be
/// empty) only goes into the banner.
std::string emitCuda(const KernelPlan &plan, llvm::StringRef specPath);

/// The device header every emitted kernel includes.
inline constexpr const char *kDeviceHeader = "qct/device/qct_device.cuh";

} // namespace qct

#endif // QCT_TARGET_CUDAEMITTER_H
