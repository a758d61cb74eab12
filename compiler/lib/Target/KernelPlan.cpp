//===- KernelPlan.cpp - Read the lowered qct IR for the emitters ----------===//

#include "qct/Target/KernelPlan.h"

#include "qct/Dialect/QCTOps.h"

using namespace mlir;
namespace ir = mlir::qct;

static ::qct::Format fromIR(ir::Format f) {
  switch (f) {
  case ir::Format::bf16:
    return ::qct::Format::BF16;
  case ir::Format::fp16:
    return ::qct::Format::FP16;
  case ir::Format::fp32:
    return ::qct::Format::FP32;
  case ir::Format::mxfp4:
    return ::qct::Format::MXFP4;
  case ir::Format::mxfp8_e4m3:
    return ::qct::Format::MXFP8_E4M3;
  case ir::Format::mxfp8_e5m2:
    return ::qct::Format::MXFP8_E5M2;
  case ir::Format::fp8_e4m3:
    return ::qct::Format::FP8_E4M3;
  case ir::Format::fp8_e5m2:
    return ::qct::Format::FP8_E5M2;
  case ir::Format::exact:
    break;
  }
  llvm_unreachable("exact values are never stored or loaded");
}

static ::qct::ScalePolicy fromIR(ir::ScalePolicy p) {
  switch (p) {
  case ir::ScalePolicy::none:
    return ::qct::ScalePolicy::None;
  case ir::ScalePolicy::floor:
    return ::qct::ScalePolicy::Floor;
  case ir::ScalePolicy::rceil:
    return ::qct::ScalePolicy::Rceil;
  case ir::ScalePolicy::amax:
    return ::qct::ScalePolicy::Amax;
  case ir::ScalePolicy::pow2:
    return ::qct::ScalePolicy::Pow2;
  case ir::ScalePolicy::aligned:
    return ::qct::ScalePolicy::Aligned;
  }
  llvm_unreachable("unknown scale policy");
}

static ::qct::ScaleLayout fromIR(ir::ScaleLayout l) {
  return l == ir::ScaleLayout::row_major ? ::qct::ScaleLayout::RowMajor
                                         : ::qct::ScaleLayout::MnMajor;
}

static llvm::Error planError(ir::KernelOp kernel, const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "kernel '" + kernel.getSymName() +
                                     "': " + msg);
}

namespace qct {
llvm::Expected<::qct::KernelPlan> planKernel(ir::KernelOp kernel) {
  KernelPlan plan;
  plan.name = kernel.getSymName().str();
  plan.specHash = kernel.getSpecHash().str();
  if (!kernel.getFamily() || !kernel.getSchedule())
    return planError(kernel, "not lowered (no family or schedule); run "
                             "qct-pipeline first");
  plan.family = *kernel.getFamily() == ir::KernelFamily::tile
                    ? KernelFamily::Tile
                    : KernelFamily::Row;
  for (Attribute a : kernel.getScheduleAttr()) {
    auto knob = cast<ir::KnobAttr>(a);
    plan.knobs.push_back(
        {knob.getName().str(),
         std::vector<int64_t>(knob.getValues().begin(), knob.getValues().end()),
         knob.getDefaultValue()});
  }
  if (ArrayAttr rules = kernel.getScheduleRulesAttr())
    for (Attribute a : rules) {
      auto rule = cast<ir::KnobRuleAttr>(a);
      plan.rules.push_back({rule.getIfName().str(), rule.getIfValue(),
                            rule.getThenName().str(),
                            std::vector<int64_t>(rule.getThenValues().begin(),
                                                 rule.getThenValues().end())});
    }
  // The emitted entry passes these names to the family's body template.
  std::vector<const char *> required = {"QCT_THREADS", "QCT_UNROLL"};
  if (plan.family == KernelFamily::Tile)
    required = {"QCT_THREADS", "QCT_TILE_K", "QCT_K_TILES", "QCT_M_TILES",
                "QCT_GROUP_M", "QCT_TILE_M", "QCT_CLUSTER_M"};
  for (const char *name : required)
    if (!plan.hasKnob(name))
      return planError(kernel, llvm::Twine("schedule lacks the knob ") + name);
  if (std::optional<ir::RaggedAttr> r = kernel.getRagged()) {
    RaggedSpec ragged;
    ragged.offsetsType =
        r->getOffsetsType().isInteger(64) ? OffsetsType::I64 : OffsetsType::I32;
    ragged.padGroupsTo = r->getPadGroupsTo();
    ragged.writePaddedOffsets = r->getWritePaddedOffsets();
    ragged.zeroCapacityTail = r->getZeroCapacityTail();
    plan.ragged = ragged;
  }
  plan.staticK = kernel.getStaticK();

  ir::LoadSourceOp load = ir::getKernelSource(kernel);
  plan.source = fromIR(load.getResult().getType().getFormat());
  if (std::optional<ir::BlockScaleAttr> s = load.getScale())
    plan.sourceScaleLayout = fromIR(s->getLayout());
  bool quantizedSource = load.getResult().getType().isQuantized();

  for (ir::StoreOutputOp store : ir::getKernelOutputs(kernel)) {
    OutputPlan out;
    out.name = store.getName().str();
    auto type = cast<ir::TileType>(store.getValue().getType());
    out.format = fromIR(type.getFormat());
    out.layout =
        type.getLayout() == ir::Layout::col ? Layout::Col : Layout::Row;
    // Every output of an unfused spec takes the bf16 path (device library:
    // Path is per kernel choice, set on every output).
    out.viaBf16 = quantizedSource && !kernel.getFuse();
    bool staged = false;
    // Walk the chain back to the load: it is straight-line, one operand per
    // step, by construction of the importer and the passes.
    for (Operation *op = store.getValue().getDefiningOp(); op;) {
      if (auto q = dyn_cast<ir::QuantizeOp>(op)) {
        out.block = q.getScale().getBlock();
        out.scale = fromIR(q.getScale().getPolicy());
        out.scaleLayout = fromIR(q.getScale().getLayout());
      } else if (auto c = dyn_cast<ir::ConvertOp>(op)) {
        out.block = c.getScale().getBlock();
        out.scale = fromIR(c.getScale().getPolicy());
        out.scaleLayout = fromIR(c.getScale().getLayout());
        out.directConvert = true;
      } else if (auto d = dyn_cast<ir::DecodeOp>(op)) {
        if (d.getResult().getType().getFormat() == ir::Format::bf16 &&
            out.scale != ScalePolicy::None)
          out.viaBf16 = true;
      } else if (isa<ir::StageOp>(op)) {
        staged = true;
      } else if (isa<ir::LoadSourceOp>(op)) {
        if (op != load.getOperation())
          return planError(kernel, "output '" + out.name +
                                       "' reads a second qct.load_source");
        break;
      } else if (!isa<ir::TransposeOp>(op)) {
        return planError(kernel, "output '" + out.name +
                                     "': no device form "
                                     "for " +
                                     op->getName().getStringRef());
      }
      op = op->getNumOperands() ? op->getOperand(0).getDefiningOp() : nullptr;
    }
    if (out.viaBf16 && out.directConvert)
      return planError(kernel, "output '" + out.name +
                                   "' is both unfused and a direct convert");
    if (out.layout == Layout::Col &&
        (!staged || plan.family != KernelFamily::Tile))
      return planError(kernel, "col output '" + out.name +
                                   "' needs a staged transpose in the tile "
                                   "family");
    plan.outputs.push_back(std::move(out));
  }
  return plan;
}

} // namespace qct
