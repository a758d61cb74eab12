//===- SpecParser.h - Parse and validate a spec into a KernelSpec ---------===//
//
// The front end of qct: reads a spec (JSON with comments, see
// docs/spec-language.md), checks it against the numerics contract
// (numerics.md) and returns the normalized KernelSpec, every default filled
// in and its hash set. Every problem found is reported to the sink with its
// position; nothing is returned if there was any error.
//
//===----------------------------------------------------------------------===//

#ifndef QCT_SPEC_SPECPARSER_H
#define QCT_SPEC_SPECPARSER_H

#include "qct/Spec/Diagnostics.h"
#include "qct/Spec/KernelSpec.h"

#include "llvm/ADT/StringRef.h"

#include <optional>

namespace qct {

/// Parses `text`; `path` is only used to name the file in diagnostics and is
/// stored in KernelSpec::path.
std::optional<KernelSpec> parseSpecText(llvm::StringRef text,
                                        llvm::StringRef path,
                                        DiagnosticSink &diags);

/// Reads and parses the file at `path` ("-" reads stdin).
std::optional<KernelSpec> parseSpecFile(llvm::StringRef path,
                                        DiagnosticSink &diags);

} // namespace qct

#endif // QCT_SPEC_SPECPARSER_H
