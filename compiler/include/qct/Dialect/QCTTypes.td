//===- QCTTypes.td - qct types -----------------------------*- tablegen -*-===//

#ifndef QCT_DIALECT_QCTTYPES_TD
#define QCT_DIALECT_QCTTYPES_TD

include "qct/Dialect/QCTAttrs.td"

def QCT_TileType : TypeDef<QCT_Dialect, "Tile"> {
  let mnemonic = "tile";
  let summary = "the logical 2-D tensor in one format and one view";
  let description = [{
    `!qct.tile<mxfp4, row>`: the whole tensor (not one CUDA tile), in element
    format `format`, viewed as [M, K] (`row`) or transposed as [K, M] (`col`).
    Shapes stay symbolic (M, K, G are kernel arguments); the metadata carries
    them as expressions.
  }];
  let parameters = (ins EnumParameter<QCT_FormatEnum>:$format,
                        EnumParameter<QCT_LayoutEnum>:$layout);
  let assemblyFormat = "`<` $format `,` $layout `>`";
  let extraClassDeclaration = [{
    /// MX (e8m0, 32-element blocks) or FP8 1x128 (f32 scale) formats.
    bool isQuantized() const;
    bool isMX() const;
    bool isFP8() const;
  }];
}

#endif // QCT_DIALECT_QCTTYPES_TD
