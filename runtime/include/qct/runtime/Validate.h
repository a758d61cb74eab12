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

#include <array>
#include <vector>

namespace qct::rt {

const char *dtypeName(int dtype);
int dtypeSize(int dtype);

/// What a launch derives from the source shape and the offsets length (M, K,
/// G, expected shapes, launch sizes), kept for the next launch with the same
/// shapes. Only successful resolutions are kept.
struct ShapeMemo {
  bool valid = false;
  int srcNdim = 0;
  std::int64_t src[QCT_MAX_DIMS] = {};
  std::int64_t offsetsLen = -1;
  Dims d;
  std::vector<std::array<std::int64_t, QCT_MAX_DIMS>> want;
  qct_launch_plan plan{};
};

/// Checks `tensors` (metadata buffer order) and fills the plan and the kernel
/// arguments (error_flag left NULL). Throws RuntimeError(QCT_ERR_VALIDATION).
/// `memo` (optional, not thread-safe: the caller serializes) skips
/// re-deriving sizes when the source shape and offsets length repeat.
void validateLaunch(const KernelMeta &meta, const qct_tensor *tensors,
                    std::size_t count, qct_launch_plan &plan,
                    qct_kernel_args &args, ShapeMemo *memo = nullptr);

} // namespace qct::rt

#endif // QCT_RUNTIME_VALIDATE_H
