// Every op, attribute and type prints in a form that parses back to itself.
// RUN: qct-opt %s | qct-opt | FileCheck %s
// RUN: qct-opt %s --mlir-print-op-generic | qct-opt | FileCheck %s

// CHECK-LABEL: qct.kernel @imported
// CHECK-SAME:    ragged = #qct.ragged<i32, pad_to = 128, write_padded_offsets>
// CHECK-SAME:    spec_hash = "00ff"
// CHECK-SAME:    static_k = 7168 : i64
// CHECK:       %[[SRC:.*]] = qct.load_source scales <32, none, row_major> : !qct.tile<mxfp4, row>
// CHECK:       %[[DEC:.*]] = qct.decode %[[SRC]] : !qct.tile<mxfp4, row> -> !qct.tile<exact, row>
// CHECK:       %[[T:.*]] = qct.transpose %[[DEC]] : !qct.tile<exact, row> -> !qct.tile<exact, col>
// CHECK:       %[[Q:.*]] = qct.quantize %[[T]] scales <128, aligned, row_major> : !qct.tile<exact, col> -> !qct.tile<fp8_e4m3, col>
// CHECK:       qct.store_output %[[Q]] to 0 as "y" : !qct.tile<fp8_e4m3, col>
// CHECK:       %[[R:.*]] = qct.quantize %[[DEC]] scales <128, pow2, mn_major> : !qct.tile<exact, row> -> !qct.tile<fp8_e5m2, row>
// CHECK:       qct.store_output %[[R]] to 1 as "z" : !qct.tile<fp8_e5m2, row>
qct.kernel @imported attributes {spec_hash = "00ff", static_k = 7168 : i64,
    ragged = #qct.ragged<i32, pad_to = 128, write_padded_offsets>} {
  %0 = qct.load_source scales <32, none, row_major> : !qct.tile<mxfp4, row>
  %1 = qct.decode %0 : !qct.tile<mxfp4, row> -> !qct.tile<exact, row>
  %2 = qct.transpose %1 : !qct.tile<exact, row> -> !qct.tile<exact, col>
  %3 = qct.quantize %2 scales <128, aligned, row_major> : !qct.tile<exact, col> -> !qct.tile<fp8_e4m3, col>
  qct.store_output %3 to 0 as "y" : !qct.tile<fp8_e4m3, col>
  %4 = qct.quantize %1 scales <128, pow2, mn_major> : !qct.tile<exact, row> -> !qct.tile<fp8_e5m2, row>
  qct.store_output %4 to 1 as "z" : !qct.tile<fp8_e5m2, row>
}

// The lowered form: family, knobs, staged transpose, direct convert.
// CHECK-LABEL: qct.kernel @lowered
// CHECK-SAME:    family = #qct<family tile>
// CHECK-SAME:    fuse = false
// CHECK-SAME:    ragged = #qct.ragged<i64, pad_to = 1, untouched_tail>
// CHECK-SAME:    schedule = [#qct.knob<"QCT_THREADS", [128, 256], 256>, #qct.knob<"QCT_TILE_K", [64, 128], 128>]
// CHECK-SAME:    schedule_rules = [#qct.knob_rule<"QCT_THREADS", 128, "QCT_TILE_K", [64]>]
// CHECK:       %[[SRC:.*]] = qct.load_source scales <32, none, row_major> : !qct.tile<mxfp8_e4m3, row>
// CHECK:       %[[T:.*]] = qct.transpose %[[SRC]] : !qct.tile<mxfp8_e4m3, row> -> !qct.tile<mxfp8_e4m3, col>
// CHECK:       %[[S:.*]] = qct.stage %[[T]] : !qct.tile<mxfp8_e4m3, col>
// CHECK:       %[[C:.*]] = qct.convert %[[S]] scales <128, aligned, mn_major> : !qct.tile<mxfp8_e4m3, col> -> !qct.tile<fp8_e5m2, col>
// CHECK:       qct.store_output %[[C]] to 0 as "y" : !qct.tile<fp8_e5m2, col>
// CHECK:       %[[D:.*]] = qct.decode %[[SRC]] : !qct.tile<mxfp8_e4m3, row> -> !qct.tile<bf16, row>
// CHECK:       qct.store_output %[[D]] to 1 as "x" : !qct.tile<bf16, row>
qct.kernel @lowered attributes {spec_hash = "00ff", fuse = false,
    ragged = #qct.ragged<i64, pad_to = 1, untouched_tail>, family = #qct<family tile>,
    schedule = [#qct.knob<"QCT_THREADS", [128, 256], 256>,
                #qct.knob<"QCT_TILE_K", [64, 128], 128>],
    schedule_rules = [#qct.knob_rule<"QCT_THREADS", 128, "QCT_TILE_K", [64]>]} {
  %0 = qct.load_source scales <32, none, row_major> : !qct.tile<mxfp8_e4m3, row>
  %1 = qct.transpose %0 : !qct.tile<mxfp8_e4m3, row> -> !qct.tile<mxfp8_e4m3, col>
  %2 = qct.stage %1 : !qct.tile<mxfp8_e4m3, col>
  %3 = qct.convert %2 scales <128, aligned, mn_major> : !qct.tile<mxfp8_e4m3, col> -> !qct.tile<fp8_e5m2, col>
  qct.store_output %3 to 0 as "y" : !qct.tile<fp8_e5m2, col>
  %4 = qct.decode %0 : !qct.tile<mxfp8_e4m3, row> -> !qct.tile<bf16, row>
  qct.store_output %4 to 1 as "x" : !qct.tile<bf16, row>
}

// An unscaled source, an FP8 1x128 source with its policy, MX outputs.
// CHECK-LABEL: qct.kernel @sources
// CHECK-SAME:    ragged = #qct.ragged<i32, pad_to = 16, write_padded_offsets, untouched_tail>
// CHECK:       qct.load_source : !qct.tile<fp32, row>
// CHECK:       qct.quantize %{{.*}} scales <32, rceil, row_major> : !qct.tile<fp32, row> -> !qct.tile<mxfp8_e5m2, row>
qct.kernel @sources attributes {spec_hash = "",
    ragged = #qct.ragged<i32, pad_to = 16, write_padded_offsets, untouched_tail>} {
  %0 = qct.load_source : !qct.tile<fp32, row>
  %1 = qct.quantize %0 scales <32, rceil, row_major> : !qct.tile<fp32, row> -> !qct.tile<mxfp8_e5m2, row>
  qct.store_output %1 to 0 as "y" : !qct.tile<mxfp8_e5m2, row>
}

// CHECK-LABEL: qct.kernel @fp8_source
// CHECK:       qct.load_source scales <128, amax, row_major> : !qct.tile<fp8_e4m3, row>
// CHECK:       qct.decode %{{.*}} : !qct.tile<fp8_e4m3, row> -> !qct.tile<exact, row>
// CHECK:       qct.quantize %{{.*}} scales <32, floor, row_major> : !qct.tile<exact, row> -> !qct.tile<mxfp4, row>
qct.kernel @fp8_source attributes {spec_hash = ""} {
  %0 = qct.load_source scales <128, amax, row_major> : !qct.tile<fp8_e4m3, row>
  %1 = qct.decode %0 : !qct.tile<fp8_e4m3, row> -> !qct.tile<exact, row>
  %2 = qct.quantize %1 scales <32, floor, row_major> : !qct.tile<exact, row> -> !qct.tile<mxfp4, row>
  qct.store_output %2 to 0 as "y" : !qct.tile<mxfp4, row>
}
