//===- qct-compile.cpp - The qct compiler driver --------------------------===//
//
// Validates spec files, prints any stage of their compilation, or writes the
// CUDA source and metadata JSON of each spec into a directory.
//
// Exit codes: 0 success; 1 a spec is invalid, or could not be compiled or
// written; 2 bad command line.
//
//===----------------------------------------------------------------------===//

#include "qct/Spec/Diagnostics.h"
#include "qct/Spec/SpecJson.h"
#include "qct/Spec/SpecParser.h"
#include "qct/Target/Pipeline.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>
#include <vector>

namespace cl = llvm::cl;

namespace {

enum ExitCode { ExitOk = 0, ExitSpecError = 1, ExitUsage = 2 };

enum class StageOpt { None, Spec, Qct, Lowered, Cuda };

cl::OptionCategory category("qct-compile options");

cl::list<std::string> specFiles(cl::Positional, cl::desc("<spec.json>..."),
                                cl::cat(category));

cl::opt<bool>
    checkOnly("check",
              cl::desc("Validate the specs, report every error, write nothing"),
              cl::cat(category));

cl::opt<StageOpt> stage(
    "stage", cl::desc("Print one stage of a single spec to stdout"),
    cl::values(
        clEnumValN(StageOpt::Spec, "spec",
                   "the normalized spec, every default filled in (JSON)"),
        clEnumValN(StageOpt::Qct, "qct",
                   "the spec imported into the qct "
                   "dialect (MLIR)"),
        clEnumValN(StageOpt::Lowered, "lowered",
                   "the IR after the qct pass pipeline (MLIR)"),
        clEnumValN(StageOpt::Cuda, "cuda", "the generated CUDA C++ source")),
    cl::init(StageOpt::None), cl::cat(category));

cl::opt<std::string>
    outputDir("o",
              cl::desc("Write <name>.cu and <name>.json (the kernel metadata, "
                       "docs/kernel-abi.md) for each spec into <dir>"),
              cl::value_desc("dir"), cl::cat(category));

cl::opt<bool> printHash("hash",
                        cl::desc("Print each spec's hash (SHA-256 of its "
                                 "canonical normalized JSON) and path"),
                        cl::cat(category));

cl::opt<bool> cubin("cubin",
                    cl::desc("Not supported here: cubins come from the "
                             "runtime's NVRTC (use `qct compile --cubin`)"),
                    cl::cat(category));

cl::opt<bool> noSourceLines(
    "no-source-lines",
    cl::desc("Print diagnostics without the source line and caret"),
    cl::cat(category));

constexpr const char *kOverview =
    "qct-compile: the qct compiler driver\n\n"
    "  qct-compile --check SPEC...          validate specs (exit 0 or 1)\n"
    "  qct-compile --stage=STAGE SPEC       print one stage of one spec\n"
    "  qct-compile --hash SPEC...           print spec hashes\n"
    "  qct-compile SPEC... -o DIR           write DIR/<name>.cu and "
    "DIR/<name>.json\n\n"
    "A SPEC of - is read from stdin. The spec language: "
    "docs/spec-language.md.\n"
    "Exit codes: 0 ok, 1 invalid spec or failed compilation/output, 2 bad "
    "command line.\n";

int usageError(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "qct-compile") << message << "\n";
  return ExitUsage;
}

int failure(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "qct-compile") << message << "\n";
  return ExitSpecError;
}

std::optional<qct::Stage> pipelineStage(StageOpt s) {
  switch (s) {
  case StageOpt::Qct:
    return qct::Stage::Qct;
  case StageOpt::Lowered:
    return qct::Stage::Lowered;
  case StageOpt::Cuda:
    return qct::Stage::Cuda;
  default:
    return std::nullopt;
  }
}

int printStage(const qct::KernelSpec &spec) {
  if (stage == StageOpt::Spec) {
    llvm::outs() << qct::toJson(spec).dump(2) << "\n";
    return ExitOk;
  }
  qct::Stage upTo = *pipelineStage(stage);
  llvm::Expected<qct::CompileResult> result = qct::compileSpec(spec, upTo);
  if (!result)
    return failure(spec.path + ": " + llvm::toString(result.takeError()));
  switch (upTo) {
  case qct::Stage::Qct:
    llvm::outs() << result->qctIR;
    break;
  case qct::Stage::Lowered:
    llvm::outs() << result->loweredIR;
    break;
  case qct::Stage::Cuda:
    llvm::outs() << result->cudaSource;
    break;
  }
  return ExitOk;
}

llvm::Error writeFile(llvm::StringRef path, llvm::StringRef contents) {
  // Written to a temporary file and renamed, so a reader never sees half a
  // kernel and an interrupted run leaves the old file in place.
  return llvm::writeToOutput(path, [&](llvm::raw_ostream &os) {
    os << contents;
    return llvm::Error::success();
  });
}

int writeOutputs(llvm::ArrayRef<qct::KernelSpec> specs) {
  // Two specs of one name would overwrite each other's files.
  llvm::StringMap<std::string> byName;
  for (const qct::KernelSpec &spec : specs) {
    auto [it, inserted] = byName.try_emplace(spec.name, spec.path);
    if (!inserted)
      return failure(spec.path + ": spec name '" + spec.name +
                     "' is also the name of " + it->second +
                     "; both would write " + spec.name + ".cu");
  }
  if (std::error_code ec = llvm::sys::fs::create_directories(outputDir))
    return failure("cannot create output directory '" + outputDir +
                   "': " + ec.message());

  // Compile everything before writing anything, so a failure leaves the
  // directory as it was.
  std::vector<qct::CompileResult> results;
  for (const qct::KernelSpec &spec : specs) {
    llvm::Expected<qct::CompileResult> result =
        qct::compileSpec(spec, qct::Stage::Cuda);
    if (!result)
      return failure(spec.path + ": " + llvm::toString(result.takeError()));
    results.push_back(std::move(*result));
  }
  for (size_t i = 0; i < specs.size(); ++i) {
    for (auto [ext, text] : {std::pair{".cu", &results[i].cudaSource},
                             std::pair{".json", &results[i].metadataJson}}) {
      llvm::SmallString<256> path(outputDir);
      llvm::sys::path::append(path, specs[i].name + ext);
      if (llvm::Error err = writeFile(path, *text))
        return failure("cannot write '" + path +
                       "': " + llvm::toString(std::move(err)));
    }
  }
  return ExitOk;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  cl::HideUnrelatedOptions(category);
  cl::SetVersionPrinter([](llvm::raw_ostream &os) {
    os << "qct-compile " << QCT_VERSION_STRING << "\n";
  });
  std::string parseErrors;
  llvm::raw_string_ostream parseErrorStream(parseErrors);
  if (!cl::ParseCommandLineOptions(argc, argv, kOverview, &parseErrorStream)) {
    // LLVM's message already starts with the program name; keep it to one
    // line per problem and use the usage exit code.
    llvm::errs() << llvm::StringRef(parseErrors).rtrim() << "\n";
    return ExitUsage;
  }

  if (cubin)
    return usageError("--cubin is not a qct-compile flag: cubins come from "
                      "the runtime's NVRTC; use `qct compile --cubin` (the "
                      "Python CLI)");
  if (specFiles.empty())
    return usageError("no spec files given (see --help)");
  int modes = int(checkOnly) + int(stage != StageOpt::None) +
              int(!outputDir.empty()) + int(printHash);
  if (modes == 0)
    return usageError("nothing to do: give --check, --stage=<stage>, --hash "
                      "or -o <dir> (see --help)");
  if (modes > 1)
    return usageError("give only one of --check, --stage, --hash and -o");
  if (stage != StageOpt::None && specFiles.size() != 1)
    return usageError("--stage prints one spec; got " +
                      llvm::Twine(specFiles.size()));

  // Every spec is checked, and every error reported, before anything is
  // compiled or written.
  qct::StreamDiagnosticSink diags(llvm::errs(), !noSourceLines);
  std::vector<qct::KernelSpec> specs;
  for (const std::string &path : specFiles)
    if (std::optional<qct::KernelSpec> spec = qct::parseSpecFile(path, diags))
      specs.push_back(std::move(*spec));
  if (diags.errorCount() != 0)
    return ExitSpecError;

  if (checkOnly)
    return ExitOk;
  if (printHash) {
    for (const qct::KernelSpec &spec : specs)
      llvm::outs() << spec.hash << "  " << spec.path << "\n";
    return ExitOk;
  }
  if (stage != StageOpt::None)
    return printStage(specs.front());
  return writeOutputs(specs);
}
