//===- Import.cpp - KernelSpec -> qct IR ----------------------------------===//
//
// The importer builds the naive chain per output; canonicalization then
// shares the read, the decode and the transpose between outputs, so the
// importer never has to reason about sharing.
//
//===----------------------------------------------------------------------===//

#include "qct/Target/Import.h"

#include "qct/Dialect/QCTOps.h"
#include "qct/Spec/Formats.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
namespace ir = mlir::qct;

static ir::Format toIR(::qct::Format f) {
  switch (f) {
  case ::qct::Format::BF16:
    return ir::Format::bf16;
  case ::qct::Format::FP16:
    return ir::Format::fp16;
  case ::qct::Format::FP32:
    return ir::Format::fp32;
  case ::qct::Format::MXFP4:
    return ir::Format::mxfp4;
  case ::qct::Format::MXFP8_E4M3:
    return ir::Format::mxfp8_e4m3;
  case ::qct::Format::MXFP8_E5M2:
    return ir::Format::mxfp8_e5m2;
  case ::qct::Format::FP8_E4M3:
    return ir::Format::fp8_e4m3;
  case ::qct::Format::FP8_E5M2:
    return ir::Format::fp8_e5m2;
  }
  llvm_unreachable("unknown format");
}

static ir::ScalePolicy toIR(::qct::ScalePolicy p) {
  switch (p) {
  case ::qct::ScalePolicy::None:
    return ir::ScalePolicy::none;
  case ::qct::ScalePolicy::Floor:
    return ir::ScalePolicy::floor;
  case ::qct::ScalePolicy::Rceil:
    return ir::ScalePolicy::rceil;
  case ::qct::ScalePolicy::Amax:
    return ir::ScalePolicy::amax;
  case ::qct::ScalePolicy::Pow2:
    return ir::ScalePolicy::pow2;
  case ::qct::ScalePolicy::Aligned:
    return ir::ScalePolicy::aligned;
  }
  llvm_unreachable("unknown scale policy");
}

static ir::ScaleLayout toIR(::qct::ScaleLayout l) {
  return l == ::qct::ScaleLayout::RowMajor ? ir::ScaleLayout::row_major
                                           : ir::ScaleLayout::mn_major;
}

static llvm::Error importError(const ::qct::KernelSpec &spec,
                               const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "spec '" + spec.name + "': " + msg);
}

namespace qct {
llvm::Expected<OwningOpRef<ModuleOp>> importSpec(MLIRContext &context,
                                                 const KernelSpec &spec) {
  if (spec.outputs.empty() || spec.outputs.size() > 3)
    return importError(spec, "needs one to three outputs");

  Location loc = spec.path.empty()
                     ? UnknownLoc::get(&context)
                     : Location(FileLineColLoc::get(&context, spec.path, 0, 0));
  OpBuilder b(&context);
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  b.setInsertionPointToEnd(module->getBody());

  auto kernel = ir::KernelOp::create(b, loc, spec.name, spec.hash,
                                     /*fuse=*/spec.fuse, /*ragged=*/nullptr,
                                     /*static_k=*/nullptr, /*family=*/nullptr,
                                     /*schedule=*/nullptr,
                                     /*schedule_rules=*/nullptr);
  if (spec.ragged) {
    Type offsets = spec.ragged->offsetsType == OffsetsType::I32
                       ? b.getI32Type()
                       : b.getI64Type();
    kernel.setRaggedAttr(ir::RaggedAttr::get(
        &context, offsets, spec.ragged->padGroupsTo,
        spec.ragged->writePaddedOffsets, spec.ragged->zeroCapacityTail));
  }
  if (spec.staticK)
    kernel.setStaticKAttr(b.getI64IntegerAttr(*spec.staticK));
  b.setInsertionPointToStart(&kernel.getBody().emplaceBlock());

  auto tile = [&](ir::Format f, ir::Layout l) {
    return ir::TileType::get(&context, f, l);
  };
  ir::Format srcFormat = toIR(spec.source.format);
  bool srcQuantized = ir::isQuantizedFormat(srcFormat);
  ir::BlockScaleAttr srcScale;
  if (srcQuantized)
    srcScale = ir::BlockScaleAttr::get(&context, ir::blockSizeOf(srcFormat),
                                       toIR(spec.source.scalePolicy),
                                       toIR(spec.source.scaleLayout));

  for (auto [index, out] : llvm::enumerate(spec.outputs)) {
    ir::Format outFormat = toIR(out.format);
    bool outQuantized = ir::isQuantizedFormat(outFormat);
    Value v = ir::LoadSourceOp::create(b, loc, tile(srcFormat, ir::Layout::row),
                                       srcScale);
    if (srcQuantized) {
      // Chains are defined on exact decoded values (numerics.md 7); the
      // unfused spec rounds them to bf16 on purpose. A decode output rounds
      // once, straight into its own format.
      ir::Format decoded = !outQuantized ? outFormat
                           : spec.fuse   ? ir::Format::exact
                                         : ir::Format::bf16;
      v = ir::DecodeOp::create(b, loc, tile(decoded, ir::Layout::row), v);
    } else if (!outQuantized && outFormat != srcFormat) {
      return importError(spec, "output '" + out.name +
                                   "': " + formatName(spec.source.format) +
                                   " to " + formatName(out.format) +
                                   " is a plain cast, not a qct kernel");
    }
    ir::Format valueFormat = cast<ir::TileType>(v.getType()).getFormat();
    if (out.layout == Layout::Col)
      v = ir::TransposeOp::create(b, loc, tile(valueFormat, ir::Layout::col),
                                  v);
    ir::Layout layout =
        out.layout == Layout::Col ? ir::Layout::col : ir::Layout::row;
    if (outQuantized)
      v = ir::QuantizeOp::create(
          b, loc, tile(outFormat, layout), v,
          ir::BlockScaleAttr::get(&context, out.block, toIR(out.scale),
                                  toIR(out.scaleLayout)));
    ir::StoreOutputOp::create(b, loc, v, b.getI64IntegerAttr(index),
                              b.getStringAttr(out.name));
  }
  return module;
}

} // namespace qct
