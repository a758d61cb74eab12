//===- StageTransposes.cpp - Transposes through a shared-memory tile ------===//
//
// A col output written straight from a row-major read would store one element
// per 128-byte line. Staging the transposed value through a shared-memory
// tile (qct.stage) lets both the global read and the col writes be whole
// lines; the kernel family choice (qct-lower-to-kernel) follows the stages.
//
//===----------------------------------------------------------------------===//

#include "qct/Transforms/Passes.h"

#include "mlir/IR/Builders.h"

namespace mlir::qct {
#define GEN_PASS_DEF_QCTSTAGETRANSPOSES
#include "qct/Transforms/Passes.h.inc"
} // namespace mlir::qct

using namespace mlir;
using namespace mlir::qct;

namespace {
struct QCTStageTransposesPass
    : public mlir::qct::impl::QCTStageTransposesBase<QCTStageTransposesPass> {
  void runOnOperation() override {
    getOperation().walk([](TransposeOp transpose) {
      Value t = transpose.getResult();
      // Already staged: every use goes through a qct.stage.
      if (llvm::all_of(t.getUsers(),
                       [](Operation *user) { return isa<StageOp>(user); }))
        return;
      OpBuilder b(transpose->getContext());
      b.setInsertionPointAfter(transpose);
      auto stage = StageOp::create(b, transpose.getLoc(), t.getType(), t);
      t.replaceAllUsesExcept(stage.getResult(), stage);
    });
  }
};
} // namespace
