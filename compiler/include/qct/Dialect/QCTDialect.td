//===- QCTDialect.td - The qct dialect definition ----------*- tablegen -*-===//
//
// The qct dialect describes one fused quantize-convert-transpose kernel: one
// read of a 2-D source and up to three outputs, each a chain of decode /
// transpose / quantize (or the direct convert) steps. Formats, layouts, block
// scales and ragged groups are attributes and type parameters, so the
// verifiers can enforce the numerics contract (docs/numerics.md) on the IR.
//
//===----------------------------------------------------------------------===//

#ifndef QCT_DIALECT_QCTDIALECT_TD
#define QCT_DIALECT_QCTDIALECT_TD

include "mlir/IR/OpBase.td"

def QCT_Dialect : Dialect {
  let name = "qct";
  let cppNamespace = "::mlir::qct";
  let summary = "Fused quantize-convert-transpose kernels";
  let description = [{
    A `qct.kernel` holds the dataflow of one generated GPU kernel. Values are
    `!qct.tile<format, layout>`: the whole logical 2-D tensor in one element
    format, viewed row-major ([M, K], `row`) or transposed ([K, M], `col`).
    Passes fuse decode+quantize into the direct bit-level `qct.convert`, stage
    transposes through shared memory and choose the kernel family; the CUDA
    emitter prints the lowered form in the device library's vocabulary.
  }];
  let useDefaultAttributePrinterParser = 1;
  let useDefaultTypePrinterParser = 1;
}

#endif // QCT_DIALECT_QCTDIALECT_TD
