//===- Pipeline.cpp - ::qct::compileSpec
//------------------------------------===//
//
// Import, qct-pipeline, emission: the same pipeline `qct-opt --qct-pipeline`
// runs, so the pass tests cover what the driver does.
//
//===----------------------------------------------------------------------===//

#include "qct/Target/Pipeline.h"

#include "qct/Dialect/QCTOps.h"
#include "qct/Spec/SpecJson.h"
#include "qct/Target/CudaEmitter.h"
#include "qct/Target/Import.h"
#include "qct/Target/KernelPlan.h"
#include "qct/Target/Metadata.h"
#include "qct/Transforms/Passes.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"

using namespace mlir;

static std::string print(ModuleOp module) {
  std::string s;
  llvm::raw_string_ostream os(s);
  module.print(os);
  return s;
}

namespace qct {
llvm::Expected<::qct::CompileResult> compileSpec(const KernelSpec &spec,
                                                 Stage upTo) {
  MLIRContext context;
  context.loadDialect<mlir::qct::QCTDialect>();
  // Collect MLIR diagnostics (verifier, passes) into the returned error
  // instead of printing them from inside the library.
  std::string diagnostics;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    diagnostics += diag.str() + "\n";
    for (Diagnostic &note : diag.getNotes())
      diagnostics += "  note: " + note.str() + "\n";
    return success();
  });
  auto fail = [&](const llvm::Twine &what) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   what + (diagnostics.empty() ? "" : ":\n") +
                                       diagnostics);
  };

  // The hash names the kernel in its banner and metadata; a KernelSpec built
  // in code (not by the front end) may not have it yet.
  KernelSpec hashed = spec;
  if (hashed.hash.empty())
    hashed.hash = computeSpecHash(hashed);

  auto imported = importSpec(context, hashed);
  if (!imported)
    return imported.takeError();
  OwningOpRef<ModuleOp> module = std::move(*imported);
  if (failed(verify(*module)))
    return fail("internal error: the imported qct IR does not verify");

  CompileResult result;
  result.qctIR = print(*module);
  if (upTo == Stage::Qct)
    return result;

  PassManager pm(&context);
  mlir::qct::buildQCTPipeline(pm);
  if (failed(pm.run(*module)))
    return fail("qct-pipeline failed");
  result.loweredIR = print(*module);
  if (upTo == Stage::Lowered)
    return result;

  auto kernels = module->getOps<mlir::qct::KernelOp>();
  if (kernels.empty())
    return fail("internal error: no qct.kernel after qct-pipeline");
  llvm::Expected<KernelPlan> plan = planKernel(*kernels.begin());
  if (!plan)
    return plan.takeError();
  result.cudaSource = emitCuda(*plan, spec.path);
  result.metadataJson = emitMetadata(*plan, hashed);
  return result;
}

} // namespace qct
