//===- qct/runtime/Validate.h - Launch arguments vs. metadata --*- C++ -*-===//
//
// Everything checked before a launch, with no driver call, so it runs (and is
// tested) without a GPU. Each failure names the argument and the expected
// and found values.
//
//===----------------------------------------------------------------------===//
#ifndef QCT_RUNTIME_VALIDATE_H
#define QCT_RUNTIME_VALIDATE_H

#include "qct/kernel_args.h"
#include "qct/qct.h"
#include "qct/runtime/Metadata.h"

namespace qct::rt {

const char *dtypeName(int dtype);
int dtypeSize(int dtype);

/// Checks `tensors` (metadata buffer order) and fills the plan and the kernel
/// arguments (error_flag left NULL). Throws RuntimeError(QCT_ERR_VALIDATION).
void validateLaunch(const KernelMeta &meta, const qct_tensor *tensors,
                    std::size_t count, qct_launch_plan &plan,
                    qct_kernel_args &args);

} // namespace qct::rt

#endif // QCT_RUNTIME_VALIDATE_H
