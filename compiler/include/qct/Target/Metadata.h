//===- Metadata.h - The kernel metadata JSON (docs/kernel-abi.md) ---------===//

#ifndef QCT_TARGET_METADATA_H
#define QCT_TARGET_METADATA_H

#include "qct/Spec/KernelSpec.h"
#include "qct/Target/KernelPlan.h"

#include <string>

namespace qct {

/// The metadata JSON beside the kernel's .cu: buffers with dtypes and shape
/// expressions, constraints, schedule knobs and launch expressions, and the
/// normalized spec it was generated from.
std::string emitMetadata(const KernelPlan &plan, const KernelSpec &spec);

} // namespace qct

#endif // QCT_TARGET_METADATA_H
