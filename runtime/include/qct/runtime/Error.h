//===- qct/runtime/Error.h - The runtime's one error type ------*- C++ -*-===//
//
// Internal code throws RuntimeError; the C ABI catches it at the boundary and
// keeps it as the thread's last error. Compile errors carry structured fields
// (log, options, numbered source, versions) so every binding can print them.
//
//===----------------------------------------------------------------------===//
#ifndef QCT_RUNTIME_ERROR_H
#define QCT_RUNTIME_ERROR_H

#include "qct/qct.h"

#include <stdexcept>
#include <string>

namespace qct::rt {

class RuntimeError : public std::runtime_error {
public:
  RuntimeError(qct_status status, const std::string &message)
      : std::runtime_error(message), status(status) {}

  qct_status status;
  std::string log;      ///< NVRTC log (compile errors)
  std::string options;  ///< NVRTC options, one per line
  std::string source;   ///< numbered source
  std::string versions; ///< runtime / NVRTC / compiler versions and arch

  /// Message plus every non-empty field, for humans.
  std::string formatted() const;
};

[[noreturn]] inline void fail(qct_status status, const std::string &message) {
  throw RuntimeError(status, message);
}

/// Prefixes each line with its 1-based number, so log line references can be
/// followed without opening the file.
std::string numberLines(const std::string &text);

} // namespace qct::rt

#endif // QCT_RUNTIME_ERROR_H
