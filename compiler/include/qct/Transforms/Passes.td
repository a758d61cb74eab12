//===- Passes.td - qct passes ------------------------------*- tablegen -*-===//
//
// The passes of the `qct-pipeline` (see Passes.h): canonicalize (op
// canonicalizers + CSE), fuse, stage transposes, lower to the kernel form.
//
//===----------------------------------------------------------------------===//

#ifndef QCT_TRANSFORMS_PASSES_TD
#define QCT_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def QCTFuseConvert : Pass<"qct-fuse-convert", "::mlir::qct::KernelOp"> {
  let summary = "Fold decode(MX) -> quantize(fp8, aligned) into qct.convert";
  let description = [{
    Rewrites the pair into the direct bit-level conversion, so no bf16 (or any
    wide) value exists in the kernel. Only where it is bit-identical: the
    decode must produce `exact` values (not bf16) and the kernel must not be
    marked `fuse = false`.
  }];
  let dependentDialects = ["::mlir::qct::QCTDialect"];
}

def QCTStageTransposes : Pass<"qct-stage-transposes",
                              "::mlir::qct::KernelOp"> {
  let summary = "Route every transpose through a shared-memory tile";
  let description = [{
    Inserts qct.stage after each qct.transpose that is not yet staged, so the
    col outputs it feeds are written from a transposed shared-memory tile.
  }];
  let dependentDialects = ["::mlir::qct::QCTDialect"];
}

def QCTLowerToKernel : Pass<"qct-lower-to-kernel", "::mlir::qct::KernelOp"> {
  let summary = "Choose the kernel family and attach symbolic schedule knobs";
  let description = [{
    `tile` when any output is staged (a col output), `row` otherwise; attaches
    the family's knobs (names, legal values, defaults of the device library).
    The knobs stay symbolic: the emitted CUDA binds them only through -D.
  }];
  let dependentDialects = ["::mlir::qct::QCTDialect"];
}

#endif // QCT_TRANSFORMS_PASSES_TD
