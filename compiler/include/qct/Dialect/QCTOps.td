//===- QCTOps.td - qct operations --------------------------*- tablegen -*-===//
//
// The dataflow of one kernel: qct.kernel holds one qct.load_source and one
// chain per output ending in qct.store_output. Every value-producing op is
// Pure, so identical steps (two outputs decoding the same source) fold into
// one and one read feeds all outputs.
//
//===----------------------------------------------------------------------===//

#ifndef QCT_DIALECT_QCTOPS_TD
#define QCT_DIALECT_QCTOPS_TD

include "qct/Dialect/QCTTypes.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/IR/RegionKindInterface.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

class QCT_Op<string mnemonic, list<Trait> traits = []>
    : Op<QCT_Dialect, mnemonic, traits>;

def QCT_KernelOp : QCT_Op<"kernel", [Symbol, IsolatedFromAbove, SingleBlock,
                                     NoTerminator, NoRegionArguments]> {
  let summary = "one generated kernel";
  let description = [{
    The symbol is the spec name (the entry point is `qct_<name>`). `spec_hash`
    is the SHA-256 of the normalized spec. `fuse = false` records the spec's
    choice to keep decode -> quantize unfused (through bf16). `ragged` and
    `static_k` specialize the kernel. The lowering fills in `family`, the
    symbolic `schedule` knobs the emitter prints and the `schedule_rules`
    that exclude some of their combinations.
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       StrAttr:$spec_hash,
                       DefaultValuedAttr<BoolAttr, "true">:$fuse,
                       OptionalAttr<QCT_RaggedAttr>:$ragged,
                       OptionalAttr<I64Attr>:$static_k,
                       OptionalAttr<QCT_KernelFamilyAttr>:$family,
                       OptionalAttr<TypedArrayAttrBase<QCT_KnobAttr,
                                    "schedule knobs">>:$schedule,
                       OptionalAttr<TypedArrayAttrBase<QCT_KnobRuleAttr,
                                    "schedule rules">>:$schedule_rules);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$sym_name attr-dict-with-keyword $body";
  let hasRegionVerifier = 1;
}

def QCT_LoadSourceOp : QCT_Op<"load_source", [Pure, HasParent<"KernelOp">]> {
  let summary = "the one read of the 2-D source";
  let description = [{
    Reads the row-major [M, K] source (elements and, for a quantized format,
    its block scales described by `scale`).
  }];
  let arguments = (ins OptionalAttr<QCT_BlockScaleAttr>:$scale);
  let results = (outs QCT_TileType:$result);
  let assemblyFormat = "(`scales` $scale^)? attr-dict `:` qualified(type($result))";
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

def QCT_DecodeOp : QCT_Op<"decode", [Pure]> {
  let summary = "decode a quantized value (element code times block scale)";
  let description = [{
    To `exact`, the decoded value without rounding (what the numerics contract
    defines chains on), or to bf16/fp16/fp32, rounding once into that format
    (a bf16 output, or the spec's unfused path).
  }];
  let arguments = (ins QCT_TileType:$input);
  let results = (outs QCT_TileType:$result);
  let assemblyFormat = [{
    $input attr-dict `:` qualified(type($input)) `->` qualified(type($result))
  }];
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

def QCT_TransposeOp : QCT_Op<"transpose", [Pure]> {
  let summary = "the transposed view: [M, K] row to [K, M] col";
  let arguments = (ins QCT_TileType:$input);
  let results = (outs QCT_TileType:$result);
  let assemblyFormat = [{
    $input attr-dict `:` qualified(type($input)) `->` qualified(type($result))
  }];
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

def QCT_StageOp : QCT_Op<"stage", [Pure, SameOperandsAndResultType]> {
  let summary = "stage a transposed value through a shared-memory tile";
  let description = [{
    Marks where the kernel loads a 2-D tile of the source into shared memory
    and reads it back transposed, so both the read and the col writes are
    coalesced. Only transposes are staged.
  }];
  let arguments = (ins QCT_TileType:$input);
  let results = (outs QCT_TileType:$result);
  let assemblyFormat = "$input attr-dict `:` qualified(type($input))";
  let hasVerifier = 1;
}

def QCT_QuantizeOp : QCT_Op<"quantize", [Pure]> {
  let summary = "quantize an unquantized value into an MX or FP8 block format";
  let arguments = (ins QCT_TileType:$input, QCT_BlockScaleAttr:$scale);
  let results = (outs QCT_TileType:$result);
  let assemblyFormat = [{
    $input `scales` $scale attr-dict `:` qualified(type($input)) `->`
    qualified(type($result))
  }];
  let hasVerifier = 1;
}

def QCT_ConvertOp : QCT_Op<"convert", [Pure]> {
  let summary = "direct bit-level MX -> FP8 conversion with aligned scales";
  let description = [{
    The fused form of decode(MX) -> quantize(fp8, aligned): the FP8 scale is
    derived from the source scale bytes alone and each element code is
    re-encoded by bit manipulation, with no bf16 or fp32 value in between.
    Bit-identical to the unfused chain on exact values (numerics.md 4, 7).
  }];
  let arguments = (ins QCT_TileType:$input, QCT_BlockScaleAttr:$scale);
  let results = (outs QCT_TileType:$result);
  let assemblyFormat = [{
    $input `scales` $scale attr-dict `:` qualified(type($input)) `->`
    qualified(type($result))
  }];
  let hasVerifier = 1;
}

def QCT_StoreOutputOp : QCT_Op<"store_output", [HasParent<"KernelOp">]> {
  let summary = "write one output (elements, scales) of the kernel";
  let description = [{
    Output `index` (0..2) is `out[index]` / `out_scales[index]` of the kernel
    arguments; `name` is the spec's output name. Packing (two e2m1 codes per
    byte) and guarded stores are the device library's.
  }];
  let arguments = (ins QCT_TileType:$value, I64Attr:$index, StrAttr:$name);
  let assemblyFormat = [{
    $value `to` $index `as` $name attr-dict `:` qualified(type($value))
  }];
  let hasVerifier = 1;
}

#endif // QCT_DIALECT_QCTOPS_TD
