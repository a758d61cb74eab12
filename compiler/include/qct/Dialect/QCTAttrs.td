//===- QCTAttrs.td - qct enums and attributes --------------*- tablegen -*-===//
//
// Element formats, layouts, block-scale descriptions, ragged groups and the
// symbolic schedule knobs the lowering attaches to a kernel.
//
//===----------------------------------------------------------------------===//

#ifndef QCT_DIALECT_QCTATTRS_TD
#define QCT_DIALECT_QCTATTRS_TD

include "qct/Dialect/QCTDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

// The tensor formats of numerics.md, plus `exact`: a decoded value held
// without rounding (element code times scale, in whatever width the kernel
// needs). Only `qct.decode` produces it, and it is never stored.
def QCT_FormatEnum : I32EnumAttr<"Format", "qct element format", [
    I32EnumAttrCase<"bf16", 0>,
    I32EnumAttrCase<"fp16", 1>,
    I32EnumAttrCase<"fp32", 2>,
    I32EnumAttrCase<"mxfp4", 3>,
    I32EnumAttrCase<"mxfp8_e4m3", 4>,
    I32EnumAttrCase<"mxfp8_e5m2", 5>,
    I32EnumAttrCase<"fp8_e4m3", 6>,
    I32EnumAttrCase<"fp8_e5m2", 7>,
    I32EnumAttrCase<"exact", 8>,
  ]> {
  let cppNamespace = "::mlir::qct";
  let genSpecializedAttr = 0;
}

def QCT_LayoutEnum : I32EnumAttr<"Layout", "row ([M, K]) or col ([K, M])", [
    I32EnumAttrCase<"row", 0>,
    I32EnumAttrCase<"col", 1>,
  ]> {
  let cppNamespace = "::mlir::qct";
  let genSpecializedAttr = 0;
}

def QCT_ScalePolicyEnum : I32EnumAttr<"ScalePolicy", "block scale policy", [
    I32EnumAttrCase<"none", 0>,
    I32EnumAttrCase<"floor", 1>,
    I32EnumAttrCase<"rceil", 2>,
    I32EnumAttrCase<"amax", 3>,
    I32EnumAttrCase<"pow2", 4>,
    I32EnumAttrCase<"aligned", 5>,
  ]> {
  let cppNamespace = "::mlir::qct";
  let genSpecializedAttr = 0;
}

def QCT_ScaleLayoutEnum : I32EnumAttr<"ScaleLayout", "scale array layout", [
    I32EnumAttrCase<"row_major", 0>,
    I32EnumAttrCase<"mn_major", 1>,
  ]> {
  let cppNamespace = "::mlir::qct";
  let genSpecializedAttr = 0;
}

// `row`: one thread block walks rows, no shared memory. `tile`: a 2-D tile is
// staged through shared memory so transposed (col) outputs are written
// coalesced.
def QCT_KernelFamilyEnum : I32EnumAttr<"KernelFamily", "kernel family", [
    I32EnumAttrCase<"row", 0>,
    I32EnumAttrCase<"tile", 1>,
  ]> {
  let cppNamespace = "::mlir::qct";
  let genSpecializedAttr = 0;
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

class QCT_Attr<string name, string mnemonic_, list<Trait> traits = []>
    : AttrDef<QCT_Dialect, name, traits> {
  let mnemonic = mnemonic_;
}

def QCT_FormatAttr : EnumAttr<QCT_Dialect, QCT_FormatEnum, "format">;
def QCT_LayoutAttr : EnumAttr<QCT_Dialect, QCT_LayoutEnum, "layout">;
def QCT_KernelFamilyAttr : EnumAttr<QCT_Dialect, QCT_KernelFamilyEnum,
                                    "family">;

def QCT_BlockScaleAttr : QCT_Attr<"BlockScale", "block_scale"> {
  let summary = "block size, scale policy and scale layout of a blocked format";
  let description = [{
    `#qct.block_scale<32, floor, row_major>`: blocks of `block` elements along
    the value's block axis (K for row, M for col), one scale each, chosen by
    `policy` and stored in `layout`. A source's scales use policy `none` when
    the spec does not say how they were made.
  }];
  let parameters = (ins "int64_t":$block,
                        EnumParameter<QCT_ScalePolicyEnum>:$policy,
                        EnumParameter<QCT_ScaleLayoutEnum>:$layout);
  let assemblyFormat = "`<` $block `,` $policy `,` $layout `>`";
  let genVerifyDecl = 1;
}

def QCT_RaggedAttr : QCT_Attr<"Ragged", "ragged"> {
  let summary = "ragged groups (MoE experts) along M";
  let description = [{
    `#qct.ragged<i32, pad_to = 128, write_padded_offsets, untouched_tail>`:
    G groups given by device offsets of `offsetsType` (i32 or i64); col
    outputs restart blocks at each group and pad each group to a multiple of
    `padGroupsTo` columns. `untouched_tail`: the col outputs' capacity tail
    (past the groups' padded columns and scale columns) is not written.
  }];
  let parameters = (ins "::mlir::Type":$offsetsType,
                        "int64_t":$padGroupsTo,
                        "bool":$writePaddedOffsets,
                        DefaultValuedParameter<"bool", "true">:$zeroCapacityTail);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
}

def QCT_KnobAttr : QCT_Attr<"Knob", "knob"> {
  let summary = "a symbolic schedule knob";
  let description = [{
    `#qct.knob<"QCT_THREADS", [128, 256], 256>`: a preprocessor name the
    emitted CUDA leaves unbound (`#ifndef` default), its legal values and its
    default. Every legal value gives identical bits; only speed changes.
  }];
  let parameters = (ins StringRefParameter<"preprocessor name">:$name,
                        ArrayRefParameter<"int64_t", "legal values">:$values,
                        "int64_t":$defaultValue);
  let assemblyFormat = "`<` $name `,` `[` $values `]` `,` $defaultValue `>`";
  let genVerifyDecl = 1;
}

def QCT_KnobRuleAttr : QCT_Attr<"KnobRule", "knob_rule"> {
  let summary = "a rule between two schedule knobs";
  let description = [{
    `#qct.knob_rule<"QCT_THREADS", 512, "QCT_TILE_K", [256]>`: a schedule
    that sets QCT_THREADS to 512 must set QCT_TILE_K to one of [256]. The
    legal schedules are the product of the knobs' values less those that
    break a rule (a shape the device library rejects, or would spill at).
  }];
  let parameters = (ins StringRefParameter<"knob of the condition">:$ifName,
                        "int64_t":$ifValue,
                        StringRefParameter<"knob it constrains">:$thenName,
                        ArrayRefParameter<"int64_t", "values it may take">:
                            $thenValues);
  let assemblyFormat =
      "`<` $ifName `,` $ifValue `,` $thenName `,` `[` $thenValues `]` `>`";
  let genVerifyDecl = 1;
}

#endif // QCT_DIALECT_QCTATTRS_TD
