//===- Tensor.h - Whole-tensor conversions of the reference -----*- C++ -*-===//
//
// Decodes a source tensor exactly, then produces one output in its layout
// (row or col), scale layout (row_major or mn_major) and ragged placement,
// exactly as docs/kernel-abi.md sizes the buffers. The C ABI (qct_ref.h) is a
// thin shell over these two functions; they validate every argument first and
// return an error message (empty on success) without writing anything when a
// rule is broken.
//
//===----------------------------------------------------------------------===//

#ifndef QCT_REFERENCE_TENSOR_H
#define QCT_REFERENCE_TENSOR_H

#include "qct/Reference/qct_ref.h"

#include <cstddef>
#include <string>

namespace qct::ref {

struct OutputSizes {
  size_t dataBytes = 0;
  size_t scalesBytes = 0;
};

/// Validates source, output (buffers excluded) and ragged, and returns the
/// sizes the output's buffers need. ragged may be null (dense).
std::string outputSizes(const qct_ref_source &src, const qct_ref_output &out,
                        const qct_ref_ragged *ragged, OutputSizes &sizes);

/// Validates everything (buffers included), then fills the output buffers.
std::string convert(const qct_ref_source &src, const qct_ref_output &out,
                    const qct_ref_ragged *ragged);

/// Threads convert() may use (default 1; values below 1 mean 1). Returns the
/// previous value. The output bits never depend on it.
int setThreads(int n);

} // namespace qct::ref

#endif // QCT_REFERENCE_TENSOR_H
