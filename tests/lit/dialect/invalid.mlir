// Verifier diagnostics of the qct dialect, one case per split.
// RUN: qct-opt %s -split-input-file -verify-diagnostics

qct.kernel @k attributes {spec_hash = ""} {
  // expected-error@+1 {{the source is row-major: its layout must be row}}
  %0 = qct.load_source : !qct.tile<bf16, col>
}

// -----

qct.kernel @k attributes {spec_hash = ""} {
  // expected-error@+1 {{a source cannot be in the 'exact' format}}
  %0 = qct.load_source : !qct.tile<exact, row>
}

// -----

qct.kernel @k attributes {spec_hash = ""} {
  // expected-error@+1 {{a bf16 source has no block scales}}
  %0 = qct.load_source scales <32, none, row_major> : !qct.tile<bf16, row>
}

// -----

qct.kernel @k attributes {spec_hash = ""} {
  // expected-error@+1 {{a mxfp4 source needs its block scales}}
  %0 = qct.load_source : !qct.tile<mxfp4, row>
}

// -----

qct.kernel @k attributes {spec_hash = ""} {
  // expected-error@+1 {{a mxfp4 source has blocks of 32, not 128}}
  %0 = qct.load_source scales <128, none, row_major> : !qct.tile<mxfp4, row>
}

// -----

qct.kernel @k attributes {spec_hash = ""} {
  // expected-error@+1 {{'aligned' describes a conversion, not a source}}
  %0 = qct.load_source scales <128, aligned, row_major> : !qct.tile<fp8_e4m3, row>
}

// -----

// expected-error@+1 {{'qct.load_source' op expects parent op 'qct.kernel'}}
%0 = qct.load_source : !qct.tile<bf16, row>

// -----

qct.kernel @k attributes {spec_hash = ""} {
  %0 = qct.load_source : !qct.tile<bf16, row>
  // expected-error@+1 {{decodes a quantized value, got bf16}}
  %1 = qct.decode %0 : !qct.tile<bf16, row> -> !qct.tile<exact, row>
}

// -----

qct.kernel @k attributes {spec_hash = ""} {
  %0 = qct.load_source scales <32, none, row_major> : !qct.tile<mxfp4, row>
  // expected-error@+1 {{decodes to exact, bf16, fp16 or fp32, not fp8_e4m3}}
  %1 = qct.decode %0 : !qct.tile<mxfp4, row> -> !qct.tile<fp8_e4m3, row>
}

// -----

qct.kernel @k attributes {spec_hash = ""} {
  %0 = qct.load_source scales <32, none, row_major> : !qct.tile<mxfp4, row>
  // expected-error@+1 {{keeps the layout}}
  %1 = qct.decode %0 : !qct.tile<mxfp4, row> -> !qct.tile<exact, col>
}

// -----

// col layout exists only on transposed values: a transpose of a col value
// back to row is not an op of this dialect.
qct.kernel @k attributes {spec_hash = ""} {
  %0 = qct.load_source : !qct.tile<bf16, row>
  %1 = qct.transpose %0 : !qct.tile<bf16, row> -> !qct.tile<bf16, col>
  // expected-error@+1 {{transposes a row value into a col value}}
  %2 = qct.transpose %1 : !qct.tile<bf16, col> -> !qct.tile<bf16, row>
}

// -----

qct.kernel @k attributes {spec_hash = ""} {
  %0 = qct.load_source : !qct.tile<bf16, row>
  // expected-error@+1 {{keeps the format}}
  %1 = qct.transpose %0 : !qct.tile<bf16, row> -> !qct.tile<fp32, col>
}

// -----

qct.kernel @k attributes {spec_hash = ""} {
  %0 = qct.load_source : !qct.tile<bf16, row>
  // expected-error@+1 {{stages the result of a qct.transpose}}
  %1 = qct.stage %0 : !qct.tile<bf16, row>
}

// -----

qct.kernel @k attributes {spec_hash = ""} {
  %0 = qct.load_source scales <32, none, row_major> : !qct.tile<mxfp4, row>
  // expected-error@+1 {{quantizes an unquantized value; decode mxfp4 first}}
  %1 = qct.quantize %0 scales <128, amax, row_major> : !qct.tile<mxfp4, row> -> !qct.tile<fp8_e4m3, row>
}

// -----

qct.kernel @k attributes {spec_hash = ""} {
  %0 = qct.load_source : !qct.tile<fp32, row>
  // expected-error@+1 {{produces an MX or FP8 value, not bf16}}
  %1 = qct.quantize %0 scales <128, amax, row_major> : !qct.tile<fp32, row> -> !qct.tile<bf16, row>
}

// -----

qct.kernel @k attributes {spec_hash = ""} {
  %0 = qct.load_source : !qct.tile<bf16, row>
  // expected-error@+1 {{mxfp4 has blocks of 32, not 128}}
  %1 = qct.quantize %0 scales <128, amax, row_major> : !qct.tile<bf16, row> -> !qct.tile<mxfp4, row>
}

// -----

qct.kernel @k attributes {spec_hash = ""} {
  %0 = qct.load_source : !qct.tile<bf16, row>
  // expected-error@+1 {{keeps the layout}}
  %1 = qct.quantize %0 scales <128, amax, row_major> : !qct.tile<bf16, row> -> !qct.tile<fp8_e4m3, col>
}

// -----

qct.kernel @k attributes {spec_hash = ""} {
  %0 = qct.load_source : !qct.tile<bf16, row>
  // expected-error@+1 {{needs a scale policy}}
  %1 = qct.quantize %0 scales <128, none, row_major> : !qct.tile<bf16, row> -> !qct.tile<fp8_e4m3, row>
}

// -----

// Aligned scales come from MX scale bytes: a bf16 source has none.
qct.kernel @k attributes {spec_hash = ""} {
  %0 = qct.load_source : !qct.tile<bf16, row>
  // expected-error@+1 {{with 'aligned' scales needs an operand decoded from an MX format}}
  %1 = qct.quantize %0 scales <128, aligned, row_major> : !qct.tile<bf16, row> -> !qct.tile<fp8_e4m3, row>
}

// -----

qct.kernel @k attributes {spec_hash = ""} {
  %0 = qct.load_source scales <128, amax, row_major> : !qct.tile<fp8_e5m2, row>
  %1 = qct.decode %0 : !qct.tile<fp8_e5m2, row> -> !qct.tile<exact, row>
  // expected-error@+1 {{with 'aligned' scales needs an operand decoded from an MX format}}
  %2 = qct.quantize %1 scales <128, aligned, row_major> : !qct.tile<exact, row> -> !qct.tile<fp8_e4m3, row>
}

// -----

qct.kernel @k attributes {spec_hash = ""} {
  %0 = qct.load_source : !qct.tile<bf16, row>
  // expected-error@+1 {{converts from an MX format, not bf16}}
  %1 = qct.convert %0 scales <128, aligned, row_major> : !qct.tile<bf16, row> -> !qct.tile<fp8_e4m3, row>
}

// -----

qct.kernel @k attributes {spec_hash = ""} {
  %0 = qct.load_source scales <32, none, row_major> : !qct.tile<mxfp4, row>
  // expected-error@+1 {{converts to fp8_e4m3 or fp8_e5m2, not mxfp8_e4m3}}
  %1 = qct.convert %0 scales <32, floor, row_major> : !qct.tile<mxfp4, row> -> !qct.tile<mxfp8_e4m3, row>
}

// -----

qct.kernel @k attributes {spec_hash = ""} {
  %0 = qct.load_source scales <32, none, row_major> : !qct.tile<mxfp4, row>
  // expected-error@+1 {{is bit-exact only with 'aligned' scales, not 'pow2'}}
  %1 = qct.convert %0 scales <128, pow2, row_major> : !qct.tile<mxfp4, row> -> !qct.tile<fp8_e4m3, row>
}

// -----

qct.kernel @k attributes {spec_hash = ""} {
  %0 = qct.load_source : !qct.tile<bf16, row>
  // expected-error@+1 {{output index 3 out of range [0, 3)}}
  qct.store_output %0 to 3 as "y" : !qct.tile<bf16, row>
}

// -----

qct.kernel @k attributes {spec_hash = ""} {
  %0 = qct.load_source scales <32, none, row_major> : !qct.tile<mxfp4, row>
  %1 = qct.decode %0 : !qct.tile<mxfp4, row> -> !qct.tile<exact, row>
  // expected-error@+1 {{cannot store 'exact' values}}
  qct.store_output %1 to 0 as "y" : !qct.tile<exact, row>
}

// -----

// expected-error@+1 {{needs a qct.load_source}}
qct.kernel @k attributes {spec_hash = ""} {
}

// -----

// expected-error@+1 {{needs at least one qct.store_output}}
qct.kernel @k attributes {spec_hash = ""} {
  %0 = qct.load_source : !qct.tile<bf16, row>
}

// -----

qct.kernel @k attributes {spec_hash = ""} {
  %0 = qct.load_source : !qct.tile<bf16, row>
  %1 = qct.quantize %0 scales <32, floor, row_major> : !qct.tile<bf16, row> -> !qct.tile<mxfp4, row>
  qct.store_output %1 to 0 as "y" : !qct.tile<mxfp4, row>
  // expected-error@+1 {{output indices must be 0..1, each once; found 0 where 1 was expected}}
  qct.store_output %1 to 0 as "z" : !qct.tile<mxfp4, row>
}

// -----

qct.kernel @k attributes {spec_hash = ""} {
  %0 = qct.load_source : !qct.tile<bf16, row>
  %1 = qct.quantize %0 scales <32, floor, row_major> : !qct.tile<bf16, row> -> !qct.tile<mxfp4, row>
  qct.store_output %1 to 0 as "y" : !qct.tile<mxfp4, row>
  // expected-error@+1 {{found 2 where 1 was expected}}
  qct.store_output %1 to 2 as "z" : !qct.tile<mxfp4, row>
}

// -----

// expected-error@+1 {{static_k must be positive, got 0}}
qct.kernel @k attributes {spec_hash = "", static_k = 0 : i64} {
  %0 = qct.load_source : !qct.tile<bf16, row>
  %1 = qct.quantize %0 scales <32, floor, row_major> : !qct.tile<bf16, row> -> !qct.tile<mxfp4, row>
  qct.store_output %1 to 0 as "y" : !qct.tile<mxfp4, row>
}

// -----

// expected-error@+1 {{schedule knobs need a kernel family}}
qct.kernel @k attributes {spec_hash = "", schedule = [#qct.knob<"QCT_THREADS", [128], 128>]} {
  %0 = qct.load_source : !qct.tile<bf16, row>
  %1 = qct.quantize %0 scales <32, floor, row_major> : !qct.tile<bf16, row> -> !qct.tile<mxfp4, row>
  qct.store_output %1 to 0 as "y" : !qct.tile<mxfp4, row>
}

// -----

qct.kernel @k attributes {spec_hash = ""} {
  %0 = qct.load_source : !qct.tile<bf16, row>
  // expected-error@+1 {{block size must be 32 (MX) or 128 (FP8), got 64}}
  %1 = qct.quantize %0 scales <64, floor, row_major> : !qct.tile<bf16, row> -> !qct.tile<mxfp4, row>
}

// -----

qct.kernel @k attributes {spec_hash = ""} {
  %0 = qct.load_source : !qct.tile<bf16, row>
  // expected-error@+1 {{scale policy 'pow2' is an FP8 policy; 32-element blocks are MX}}
  %1 = qct.quantize %0 scales <32, pow2, row_major> : !qct.tile<bf16, row> -> !qct.tile<mxfp4, row>
}

// -----

qct.kernel @k attributes {spec_hash = ""} {
  %0 = qct.load_source : !qct.tile<bf16, row>
  // expected-error@+1 {{scale policy 'floor' is an MX rounding; 128-element blocks are FP8}}
  %1 = qct.quantize %0 scales <128, floor, row_major> : !qct.tile<bf16, row> -> !qct.tile<fp8_e4m3, row>
}

// -----

// expected-error@+1 {{ragged offsets must be i32 or i64, got 'f32'}}
qct.kernel @k attributes {spec_hash = "", ragged = #qct.ragged<f32, pad_to = 1>} {
}

// -----

// expected-error@+1 {{pad_to must be at least 1, got 0}}
qct.kernel @k attributes {spec_hash = "", ragged = #qct.ragged<i32, pad_to = 0>} {
}

// -----

// The flags come in the printer's order, each once.
// expected-error@+1 {{expected '>'}}
qct.kernel @k attributes {spec_hash = "", ragged = #qct.ragged<i32, pad_to = 1, untouched_tail, write_padded_offsets>} {
}

// -----

// expected-error@+1 {{knob 'QCT_THREADS' default 64 is not one of its legal values}}
qct.kernel @k attributes {spec_hash = "", schedule = [#qct.knob<"QCT_THREADS", [128, 256], 64>]} {
}

// -----

// expected-error@+1 {{knob name '1X' is not a C identifier}}
qct.kernel @k attributes {spec_hash = "", schedule = [#qct.knob<"1X", [1], 1>]} {
}

// -----

// expected-error@+1 {{knob rule on 'QCT_THREADS' constrains itself}}
qct.kernel @k attributes {spec_hash = "", family = #qct<family row>, schedule = [#qct.knob<"QCT_THREADS", [128, 256], 256>], schedule_rules = [#qct.knob_rule<"QCT_THREADS", 128, "QCT_THREADS", [256]>]} {
}

// -----

// expected-error@+1 {{schedule rule names a knob the schedule lacks: QCT_UNROLL}}
qct.kernel @k attributes {spec_hash = "", family = #qct<family row>, schedule = [#qct.knob<"QCT_THREADS", [128, 256], 256>], schedule_rules = [#qct.knob_rule<"QCT_THREADS", 128, "QCT_UNROLL", [1]>]} {
  %0 = qct.load_source : !qct.tile<bf16, row>
  %1 = qct.quantize %0 scales <32, floor, row_major> : !qct.tile<bf16, row> -> !qct.tile<mxfp4, row>
  qct.store_output %1 to 0 as "y" : !qct.tile<mxfp4, row>
}

// -----

// expected-error@+1 {{schedule rule leaves QCT_UNROLL no legal value when QCT_THREADS = 128}}
qct.kernel @k attributes {spec_hash = "", family = #qct<family row>, schedule = [#qct.knob<"QCT_THREADS", [128, 256], 256>, #qct.knob<"QCT_UNROLL", [1, 2], 1>], schedule_rules = [#qct.knob_rule<"QCT_THREADS", 128, "QCT_UNROLL", [4]>]} {
  %0 = qct.load_source : !qct.tile<bf16, row>
  %1 = qct.quantize %0 scales <32, floor, row_major> : !qct.tile<bf16, row> -> !qct.tile<mxfp4, row>
  qct.store_output %1 to 0 as "y" : !qct.tile<mxfp4, row>
}

// -----

// The defaults are what an untuned launch runs: they must keep every rule.
// expected-error@+1 {{the default schedule breaks the rule QCT_THREADS = 256 -> QCT_UNROLL in its values}}
qct.kernel @k attributes {spec_hash = "", family = #qct<family row>, schedule = [#qct.knob<"QCT_THREADS", [128, 256], 256>, #qct.knob<"QCT_UNROLL", [1, 2], 1>], schedule_rules = [#qct.knob_rule<"QCT_THREADS", 256, "QCT_UNROLL", [2]>]} {
  %0 = qct.load_source : !qct.tile<bf16, row>
  %1 = qct.quantize %0 scales <32, floor, row_major> : !qct.tile<bf16, row> -> !qct.tile<mxfp4, row>
  qct.store_output %1 to 0 as "y" : !qct.tile<mxfp4, row>
}
