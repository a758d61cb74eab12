//===- FuseConvert.cpp - decode(MX) -> quantize(fp8, aligned) => convert --===//
//
// The paper's direct FP4 -> FP8 conversion: with aligned scales the FP8 scale
// comes from the source's e8m0 bytes and every element is re-encoded bit by
// bit, so no wide (bf16/fp32) value is ever formed. numerics.md 4 defines the
// aligned result on exact decoded values, so the rewrite is only legal when
// the decode produces `exact` values; the unfused spec (fuse: false) decodes
// to bf16 and is left alone, as is every kernel marked fuse = false.
//
//===----------------------------------------------------------------------===//

#include "qct/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::qct {
#define GEN_PASS_DEF_QCTFUSECONVERT
#include "qct/Transforms/Passes.h.inc"
} // namespace mlir::qct

using namespace mlir;
using namespace mlir::qct;

namespace {
struct FuseDecodeQuantize : public OpRewritePattern<QuantizeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(QuantizeOp op,
                                PatternRewriter &rewriter) const override {
    if (op.getScale().getPolicy() != ScalePolicy::aligned ||
        !op.getResult().getType().isFP8())
      return rewriter.notifyMatchFailure(op, "not an aligned FP8 quantize");
    auto decode = op.getInput().getDefiningOp<DecodeOp>();
    if (!decode)
      return rewriter.notifyMatchFailure(op, "operand is not decoded");
    if (decode.getResult().getType().getFormat() != Format::exact)
      return rewriter.notifyMatchFailure(
          op, "decode rounds (through bf16): fusing would change bits");
    if (!cast<TileType>(decode.getInput().getType()).isMX())
      return rewriter.notifyMatchFailure(op, "source is not MX");
    rewriter.replaceOpWithNewOp<ConvertOp>(op, op.getResult().getType(),
                                           decode.getInput(), op.getScale());
    // The decode, now unused, is Pure: the driver erases it.
    return success();
  }
};

struct QCTFuseConvertPass
    : public mlir::qct::impl::QCTFuseConvertBase<QCTFuseConvertPass> {
  void runOnOperation() override {
    KernelOp kernel = getOperation();
    if (!kernel.getFuse())
      return; // The spec asked for the unfused path (numerics.md 7).
    RewritePatternSet patterns(&getContext());
    patterns.add<FuseDecodeQuantize>(&getContext());
    if (failed(applyPatternsGreedily(kernel, std::move(patterns))))
      return signalPassFailure();
  }
};
} // namespace
