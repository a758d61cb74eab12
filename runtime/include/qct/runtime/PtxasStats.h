//===- qct/runtime/PtxasStats.h - Numbers from ptxas -v --------*- C++ -*-===//
//
// NVRTC compiles with --ptxas-options=-v; its log then reports registers,
// stack frame, spills and shared memory per function. Tests assert "no
// spills, no local memory" on these numbers.
//
//===----------------------------------------------------------------------===//
#ifndef QCT_RUNTIME_PTXASSTATS_H
#define QCT_RUNTIME_PTXASSTATS_H

#include "qct/qct.h"

#include <string>

namespace qct::rt {

/// Stats of function `entry` in an NVRTC log (found == 0 if absent). Its
/// spill bytes and local memory include those of the log's functions that
/// are no entry: the device functions ptxas kept as calls (an outlined
/// quantizer spills apart from the kernel that calls it).
qct_kernel_stats parsePtxasStats(const std::string &log,
                                 const std::string &entry);

} // namespace qct::rt

#endif // QCT_RUNTIME_PTXASSTATS_H
