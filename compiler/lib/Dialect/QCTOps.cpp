//===- QCTOps.cpp - qct operations: verifiers and canonicalizations -------===//

#include "qct/Dialect/QCTOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::qct;

#define GET_OP_CLASSES
#include "qct/Dialect/QCTOps.cpp.inc"

static TileType tileOf(Value v) { return cast<TileType>(v.getType()); }

static StringRef fmt(Format f) { return stringifyFormat(f); }

//===----------------------------------------------------------------------===//
// Dedupe: one read, one decode, one transpose
//===----------------------------------------------------------------------===//

namespace {
/// Replaces an op by an identical op earlier in the same block. Kernels are
/// straight-line code, so "earlier in the block" dominates. This is what makes
/// several outputs share one read of the source (and one decode, one staged
/// transpose) whatever order the importer built them in.
template <typename OpTy>
struct DedupeIdentical : public OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    for (Operation *prev = op->getPrevNode(); prev;
         prev = prev->getPrevNode()) {
      if (!OperationEquivalence::isEquivalentTo(
              prev, op.getOperation(), OperationEquivalence::IgnoreLocations))
        continue;
      rewriter.replaceOp(op, prev->getResults());
      return success();
    }
    return failure();
  }
};
} // namespace

//===----------------------------------------------------------------------===//
// KernelOp
//===----------------------------------------------------------------------===//

LoadSourceOp mlir::qct::getKernelSource(KernelOp kernel) {
  auto loads = kernel.getBody().front().getOps<LoadSourceOp>();
  return loads.empty() ? LoadSourceOp() : *loads.begin();
}

SmallVector<StoreOutputOp> mlir::qct::getKernelOutputs(KernelOp kernel) {
  SmallVector<StoreOutputOp> outs(
      kernel.getBody().front().getOps<StoreOutputOp>());
  llvm::sort(outs, [](StoreOutputOp a, StoreOutputOp b) {
    return a.getIndex() < b.getIndex();
  });
  return outs;
}

LogicalResult KernelOp::verifyRegions() {
  Block &body = getBody().front();
  if (body.getOps<LoadSourceOp>().empty())
    return emitOpError("needs a qct.load_source");
  SmallVector<StoreOutputOp> outs = getKernelOutputs(*this);
  if (outs.empty())
    return emitOpError("needs at least one qct.store_output");
  // Outputs are out[0..n-1] of the kernel arguments, each written once.
  for (auto [i, out] : llvm::enumerate(outs))
    if (out.getIndex() != static_cast<int64_t>(i))
      return out.emitOpError("output indices must be 0..")
             << outs.size() - 1 << ", each once; found " << out.getIndex()
             << " where " << i << " was expected";
  if (auto k = getStaticK(); k && *k <= 0)
    return emitOpError("static_k must be positive, got ") << *k;
  if (getSchedule() && !getFamily())
    return emitOpError("schedule knobs need a kernel family");
  if (ArrayAttr rules = getScheduleRulesAttr()) {
    ArrayAttr schedule = getScheduleAttr();
    if (!schedule)
      return emitOpError("schedule rules need schedule knobs");
    auto knob = [&](StringRef name) -> KnobAttr {
      for (Attribute a : schedule)
        if (auto k = cast<KnobAttr>(a); k.getName() == name)
          return k;
      return {};
    };
    for (Attribute a : rules) {
      auto rule = cast<KnobRuleAttr>(a);
      KnobAttr cond = knob(rule.getIfName()), target = knob(rule.getThenName());
      if (!cond || !target)
        return emitOpError("schedule rule names a knob the schedule lacks: ")
               << (cond ? rule.getThenName() : rule.getIfName());
      if (!llvm::is_contained(cond.getValues(), rule.getIfValue()))
        return emitOpError("schedule rule condition ")
               << rule.getIfName() << " = " << rule.getIfValue()
               << " is not a legal value of that knob";
      if (!llvm::any_of(rule.getThenValues(), [&](int64_t v) {
            return llvm::is_contained(target.getValues(), v);
          }))
        return emitOpError("schedule rule leaves ")
               << rule.getThenName() << " no legal value when "
               << rule.getIfName() << " = " << rule.getIfValue();
      // The defaults are the schedule a kernel runs untuned: legal.
      if (cond.getDefaultValue() == rule.getIfValue() &&
          !llvm::is_contained(rule.getThenValues(), target.getDefaultValue()))
        return emitOpError("the default schedule breaks the rule ")
               << rule.getIfName() << " = " << rule.getIfValue() << " -> "
               << rule.getThenName() << " in its values";
    }
  }
  return success();
}

//===----------------------------------------------------------------------===//
// LoadSourceOp
//===----------------------------------------------------------------------===//

LogicalResult LoadSourceOp::verify() {
  TileType type = getResult().getType();
  if (type.getLayout() != Layout::row)
    return emitOpError("the source is row-major: its layout must be row");
  if (type.getFormat() == Format::exact)
    return emitOpError("a source cannot be in the 'exact' format");
  std::optional<BlockScaleAttr> scale = getScale();
  if (!type.isQuantized()) {
    if (scale)
      return emitOpError("a ")
             << fmt(type.getFormat()) << " source has no block scales";
    return success();
  }
  if (!scale)
    return emitOpError("a ")
           << fmt(type.getFormat()) << " source needs its block scales";
  if (scale->getBlock() != blockSizeOf(type.getFormat()))
    return emitOpError("a ")
           << fmt(type.getFormat()) << " source has blocks of "
           << blockSizeOf(type.getFormat()) << ", not " << scale->getBlock();
  ScalePolicy p = scale->getPolicy();
  if (p == ScalePolicy::aligned)
    return emitOpError("'aligned' describes a conversion, not a source");
  return success();
}

void LoadSourceOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                               MLIRContext *context) {
  results.add<DedupeIdentical<LoadSourceOp>>(context);
}

//===----------------------------------------------------------------------===//
// DecodeOp
//===----------------------------------------------------------------------===//

LogicalResult DecodeOp::verify() {
  TileType in = tileOf(getInput()), out = getResult().getType();
  if (!in.isQuantized())
    return emitOpError("decodes a quantized value, got ")
           << fmt(in.getFormat());
  if (out.isQuantized())
    return emitOpError("decodes to exact, bf16, fp16 or fp32, not ")
           << fmt(out.getFormat());
  if (in.getLayout() != out.getLayout())
    return emitOpError("keeps the layout");
  return success();
}

void DecodeOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                           MLIRContext *context) {
  results.add<DedupeIdentical<DecodeOp>>(context);
}

//===----------------------------------------------------------------------===//
// TransposeOp
//===----------------------------------------------------------------------===//

LogicalResult TransposeOp::verify() {
  TileType in = tileOf(getInput()), out = getResult().getType();
  if (in.getLayout() != Layout::row || out.getLayout() != Layout::col)
    return emitOpError("transposes a row value into a col value");
  if (in.getFormat() != out.getFormat())
    return emitOpError("keeps the format");
  return success();
}

namespace {
/// transpose(decode(x)) -> decode(transpose(x)). Moving the transpose next to
/// the load means the shared-memory tile holds source codes (4 or 8 bits)
/// instead of decoded values, and every col output shares one staged tile.
struct HoistTransposeAboveDecode : public OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TransposeOp op,
                                PatternRewriter &rewriter) const override {
    auto decode = op.getInput().getDefiningOp<DecodeOp>();
    if (!decode)
      return failure();
    TileType src = tileOf(decode.getInput());
    auto srcT = TileType::get(getContext(), src.getFormat(), Layout::col);
    auto dstT = TileType::get(
        getContext(), decode.getResult().getType().getFormat(), Layout::col);
    Value t =
        TransposeOp::create(rewriter, op.getLoc(), srcT, decode.getInput());
    rewriter.replaceOpWithNewOp<DecodeOp>(op, dstT, t);
    return success();
  }
};
} // namespace

void TransposeOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                              MLIRContext *context) {
  results.add<HoistTransposeAboveDecode, DedupeIdentical<TransposeOp>>(context);
}

//===----------------------------------------------------------------------===//
// StageOp
//===----------------------------------------------------------------------===//

LogicalResult StageOp::verify() {
  if (!getInput().getDefiningOp<TransposeOp>())
    return emitOpError("stages the result of a qct.transpose");
  return success();
}

//===----------------------------------------------------------------------===//
// QuantizeOp
//===----------------------------------------------------------------------===//

/// The checks quantize and convert share: a quantized result whose block size
/// and policy fit its format, in the operand's layout.
static LogicalResult verifyScaleFor(Operation *op, TileType in, TileType out,
                                    BlockScaleAttr scale) {
  if (!out.isQuantized())
    return op->emitOpError("produces an MX or FP8 value, not ")
           << fmt(out.getFormat());
  if (in.getLayout() != out.getLayout())
    return op->emitOpError("keeps the layout");
  if (scale.getBlock() != blockSizeOf(out.getFormat()))
    return op->emitOpError("")
           << fmt(out.getFormat()) << " has blocks of "
           << blockSizeOf(out.getFormat()) << ", not " << scale.getBlock();
  if (scale.getPolicy() == ScalePolicy::none)
    return op->emitOpError("needs a scale policy");
  return success();
}

LogicalResult QuantizeOp::verify() {
  TileType in = tileOf(getInput()), out = getResult().getType();
  if (in.isQuantized())
    return emitOpError("quantizes an unquantized value; decode ")
           << fmt(in.getFormat()) << " first";
  if (failed(verifyScaleFor(*this, in, out, getScale())))
    return failure();
  if (getScale().getPolicy() == ScalePolicy::aligned) {
    // Aligned scales are derived from the source's MX scale bytes
    // (numerics.md 4), so the operand must be a decoded MX value.
    // Transposes (staged or not) may sit between the decode and here.
    Value v = getInput();
    while (isa_and_nonnull<TransposeOp, StageOp>(v.getDefiningOp()))
      v = v.getDefiningOp()->getOperand(0);
    auto decode = v.getDefiningOp<DecodeOp>();
    if (!decode || !tileOf(decode.getInput()).isMX())
      return emitOpError("with 'aligned' scales needs an operand decoded from "
                         "an MX format");
  }
  return success();
}

//===----------------------------------------------------------------------===//
// ConvertOp
//===----------------------------------------------------------------------===//

LogicalResult ConvertOp::verify() {
  TileType in = tileOf(getInput()), out = getResult().getType();
  if (!in.isMX())
    return emitOpError("converts from an MX format, not ")
           << fmt(in.getFormat());
  if (!out.isFP8())
    return emitOpError("converts to fp8_e4m3 or fp8_e5m2, not ")
           << fmt(out.getFormat());
  if (failed(verifyScaleFor(*this, in, out, getScale())))
    return failure();
  if (getScale().getPolicy() != ScalePolicy::aligned)
    return emitOpError("is bit-exact only with 'aligned' scales, not '")
           << stringifyScalePolicy(getScale().getPolicy()) << "'";
  return success();
}

//===----------------------------------------------------------------------===//
// StoreOutputOp
//===----------------------------------------------------------------------===//

LogicalResult StoreOutputOp::verify() {
  // QCT_MAX_OUTPUTS in runtime/include/qct/kernel_args.h.
  constexpr int64_t kMaxOutputs = 3;
  if (getIndex() < 0 || getIndex() >= kMaxOutputs)
    return emitOpError("output index ")
           << getIndex() << " out of range [0, " << kMaxOutputs << ")";
  if (tileOf(getValue()).getFormat() == Format::exact)
    return emitOpError("cannot store 'exact' values; quantize or decode to a "
                       "storage format");
  return success();
}
