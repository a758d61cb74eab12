//===- qct/runtime/CubinInfo.h - Resource usage read from a cubin -*- C++
//-*-===//
//
// ptxas -v output is not always there: NVRTC (13.0.2 on the GPU machine) may
// reuse an earlier compile and print nothing. The cubin always records what
// matters in its ELF .nv.info attributes (registers, stack frame = local
// memory, which is where spills live) and .nv.shared.<fn> sections, so the
// runtime reads stats from the cubin and takes only spill counts from the log.
//
//===----------------------------------------------------------------------===//
#ifndef QCT_RUNTIME_CUBININFO_H
#define QCT_RUNTIME_CUBININFO_H

#include "qct/qct.h"

#include <string>

namespace qct::rt {

/// Registers, stack frame (local_memory_bytes) and static shared memory of
/// `entry` in `cubin`; found == 0 if the cubin has no attributes for it.
/// Spill fields are left at -1 (the cubin does not record them).
qct_kernel_stats readCubinStats(const std::string &cubin,
                                const std::string &entry);

/// Cubin numbers, with spill counts (and lmem) from the ptxas log when it has
/// them; spills stay -1 when ptxas printed nothing for `entry`.
qct_kernel_stats kernelStats(const std::string &cubin, const std::string &log,
                             const std::string &entry);

} // namespace qct::rt

#endif // QCT_RUNTIME_CUBININFO_H
