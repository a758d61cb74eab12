//===- Diagnostics.h - Compiler-style diagnostics for spec files ----------===//
//
// The front end never stops at the first problem: it reports every error it
// can find in a spec to a DiagnosticSink, each with the file, a 1-based
// line:column and the JSON path of the offending node, and the caller decides
// what to do with them (print them like a compiler, or collect them in tests).
//
//===----------------------------------------------------------------------===//

#ifndef QCT_SPEC_DIAGNOSTICS_H
#define QCT_SPEC_DIAGNOSTICS_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace qct {

enum class DiagSeverity { Error, Warning, Note };

/// A position in a spec file. Line and column are 1-based and count bytes;
/// line 0 means "the whole file" (for example, a file that cannot be read).
struct SourceLoc {
  unsigned line = 0;
  unsigned column = 0;
  bool isValid() const { return line != 0; }
};

struct Diagnostic {
  DiagSeverity severity = DiagSeverity::Error;
  std::string file;
  SourceLoc loc;
  /// The full message, starting with the JSON path where there is one:
  /// "outputs[1].block: found 64, allowed for fp8_e4m3: 128".
  std::string message;
  /// The text of the line `loc` points into (no newline), so a printer can
  /// show it with a caret without keeping the file around.
  std::string sourceLine;
};

/// Receives diagnostics. Counts errors so callers can tell success from
/// failure without a second channel.
class DiagnosticSink {
public:
  virtual ~DiagnosticSink();
  void report(Diagnostic diag);
  unsigned errorCount() const { return numErrors; }

protected:
  virtual void handle(const Diagnostic &diag) = 0;

private:
  unsigned numErrors = 0;
};

/// Keeps every diagnostic (for tests and for callers that print later).
class CollectingDiagnosticSink : public DiagnosticSink {
public:
  const std::vector<Diagnostic> &diagnostics() const { return diags; }

protected:
  void handle(const Diagnostic &diag) override { diags.push_back(diag); }

private:
  std::vector<Diagnostic> diags;
};

/// Prints each diagnostic as it arrives, the way compilers do:
///   specs/x.json:7:16: error: outputs[1].block: found 64, allowed ...
///         "block": 64,
///                  ^
class StreamDiagnosticSink : public DiagnosticSink {
public:
  explicit StreamDiagnosticSink(llvm::raw_ostream &os,
                                bool showSourceLine = true)
      : os(os), showSourceLine(showSourceLine) {}

protected:
  void handle(const Diagnostic &diag) override;

private:
  llvm::raw_ostream &os;
  bool showSourceLine;
};

/// Formats one diagnostic (with its source line and caret if asked and
/// known) into `os`; what StreamDiagnosticSink prints.
void printDiagnostic(llvm::raw_ostream &os, const Diagnostic &diag,
                     bool showSourceLine = true);

} // namespace qct

#endif // QCT_SPEC_DIAGNOSTICS_H
