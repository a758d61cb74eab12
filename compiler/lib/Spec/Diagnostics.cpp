//===- Diagnostics.cpp - Compiler-style diagnostics for spec files --------===//

#include "qct/Spec/Diagnostics.h"

#include "llvm/Support/WithColor.h"

using namespace qct;

DiagnosticSink::~DiagnosticSink() = default;

void DiagnosticSink::report(Diagnostic diag) {
  if (diag.severity == DiagSeverity::Error)
    ++numErrors;
  handle(diag);
}

void StreamDiagnosticSink::handle(const Diagnostic &diag) {
  printDiagnostic(os, diag, showSourceLine);
}

void qct::printDiagnostic(llvm::raw_ostream &os, const Diagnostic &diag,
                          bool showSourceLine) {
  {
    llvm::WithColor bold(os, llvm::HighlightColor::Address);
    os << diag.file << ':';
    if (diag.loc.isValid())
      os << diag.loc.line << ':' << diag.loc.column << ':';
    os << ' ';
  }
  switch (diag.severity) {
  case DiagSeverity::Error:
    llvm::WithColor(os, llvm::HighlightColor::Error) << "error: ";
    break;
  case DiagSeverity::Warning:
    llvm::WithColor(os, llvm::HighlightColor::Warning) << "warning: ";
    break;
  case DiagSeverity::Note:
    llvm::WithColor(os, llvm::HighlightColor::Note) << "note: ";
    break;
  }
  os << diag.message << '\n';
  if (!showSourceLine || !diag.loc.isValid() || diag.sourceLine.empty())
    return;
  os << diag.sourceLine << '\n';
  // Keep tabs so the caret lines up under the same indentation.
  std::string caret;
  for (unsigned i = 1; i < diag.loc.column && i <= diag.sourceLine.size(); ++i)
    caret += diag.sourceLine[i - 1] == '\t' ? '\t' : ' ';
  caret += '^';
  llvm::WithColor(os, llvm::HighlightColor::Note) << caret << '\n';
}
