// qct-fuse-convert: decode(MX) -> quantize(fp8, aligned) becomes the direct
// bit-level qct.convert, and only where that is bit-identical.
// RUN: qct-opt %s -split-input-file --pass-pipeline='builtin.module(qct.kernel(qct-fuse-convert))' | FileCheck %s

// The paper's FP4 -> FP8 conversion: no decoded (exact or bf16) value left.
// CHECK-LABEL: qct.kernel @fused
// CHECK-NOT:     bf16
// CHECK-NOT:     exact
// CHECK-NOT:     qct.decode
// CHECK-NOT:     qct.quantize
// CHECK:         %[[SRC:.*]] = qct.load_source scales <32, none, row_major> : !qct.tile<mxfp4, row>
// CHECK-NOT:     bf16
// CHECK:         %[[C:.*]] = qct.convert %[[SRC]] scales <128, aligned, row_major> : !qct.tile<mxfp4, row> -> !qct.tile<fp8_e4m3, row>
// CHECK-NOT:     bf16
// CHECK:         qct.store_output %[[C]] to 0 as "y" : !qct.tile<fp8_e4m3, row>
// CHECK-NOT:     bf16
// CHECK-NOT:     exact
// CHECK:         }
qct.kernel @fused attributes {spec_hash = ""} {
  %0 = qct.load_source scales <32, none, row_major> : !qct.tile<mxfp4, row>
  %1 = qct.decode %0 : !qct.tile<mxfp4, row> -> !qct.tile<exact, row>
  %2 = qct.quantize %1 scales <128, aligned, row_major> : !qct.tile<exact, row> -> !qct.tile<fp8_e4m3, row>
  qct.store_output %2 to 0 as "y" : !qct.tile<fp8_e4m3, row>
}

// -----

// Col outputs fuse the same way (the transpose sits on the source codes
// after canonicalization); e5m2 targets and mxfp8 sources too.
// CHECK-LABEL: qct.kernel @fused_col
// CHECK-NOT:     qct.decode
// CHECK:         %[[T:.*]] = qct.transpose
// CHECK:         qct.convert %[[T]] scales <128, aligned, mn_major> : !qct.tile<mxfp8_e5m2, col> -> !qct.tile<fp8_e5m2, col>
qct.kernel @fused_col attributes {spec_hash = ""} {
  %0 = qct.load_source scales <32, none, row_major> : !qct.tile<mxfp8_e5m2, row>
  %1 = qct.transpose %0 : !qct.tile<mxfp8_e5m2, row> -> !qct.tile<mxfp8_e5m2, col>
  %2 = qct.decode %1 : !qct.tile<mxfp8_e5m2, col> -> !qct.tile<exact, col>
  %3 = qct.quantize %2 scales <128, aligned, mn_major> : !qct.tile<exact, col> -> !qct.tile<fp8_e5m2, col>
  qct.store_output %3 to 0 as "y" : !qct.tile<fp8_e5m2, col>
}

// -----

// fuse: false. The spec asks for the unfused chain through bf16: the
// decode -> bf16 -> quantize chain stays as it is.
// CHECK-LABEL: qct.kernel @unfused
// CHECK-SAME:    fuse = false
// CHECK:         %[[SRC:.*]] = qct.load_source
// CHECK:         %[[D:.*]] = qct.decode %[[SRC]] : !qct.tile<mxfp4, row> -> !qct.tile<bf16, row>
// CHECK:         %[[Q:.*]] = qct.quantize %[[D]] scales <128, aligned, row_major> : !qct.tile<bf16, row> -> !qct.tile<fp8_e4m3, row>
// CHECK-NOT:     qct.convert
// CHECK:         qct.store_output %[[Q]]
qct.kernel @unfused attributes {spec_hash = "", fuse = false} {
  %0 = qct.load_source scales <32, none, row_major> : !qct.tile<mxfp4, row>
  %1 = qct.decode %0 : !qct.tile<mxfp4, row> -> !qct.tile<bf16, row>
  %2 = qct.quantize %1 scales <128, aligned, row_major> : !qct.tile<bf16, row> -> !qct.tile<fp8_e4m3, row>
  qct.store_output %2 to 0 as "y" : !qct.tile<fp8_e4m3, row>
}

// -----

// A kernel marked fuse = false is left alone even with exact decodes.
// CHECK-LABEL: qct.kernel @marked_unfused
// CHECK:         qct.decode
// CHECK:         qct.quantize
// CHECK-NOT:     qct.convert
qct.kernel @marked_unfused attributes {spec_hash = "", fuse = false} {
  %0 = qct.load_source scales <32, none, row_major> : !qct.tile<mxfp4, row>
  %1 = qct.decode %0 : !qct.tile<mxfp4, row> -> !qct.tile<exact, row>
  %2 = qct.quantize %1 scales <128, aligned, row_major> : !qct.tile<exact, row> -> !qct.tile<fp8_e4m3, row>
  qct.store_output %2 to 0 as "y" : !qct.tile<fp8_e4m3, row>
}

// -----

// A decode rounding to bf16 is never fused, whatever the kernel says: the
// convert would not round through bf16 and could give other bits.
// CHECK-LABEL: qct.kernel @bf16_decode
// CHECK:         qct.decode %{{.*}} -> !qct.tile<bf16, row>
// CHECK-NOT:     qct.convert
qct.kernel @bf16_decode attributes {spec_hash = ""} {
  %0 = qct.load_source scales <32, none, row_major> : !qct.tile<mxfp4, row>
  %1 = qct.decode %0 : !qct.tile<mxfp4, row> -> !qct.tile<bf16, row>
  %2 = qct.quantize %1 scales <128, aligned, row_major> : !qct.tile<bf16, row> -> !qct.tile<fp8_e4m3, row>
  qct.store_output %2 to 0 as "y" : !qct.tile<fp8_e4m3, row>
}

// -----

// Only aligned scales are derived from the source scale bytes; amax, pow2
// and MX outputs read the values and keep decode -> quantize.
// CHECK-LABEL: qct.kernel @not_aligned
// CHECK:         %[[D:.*]] = qct.decode
// CHECK:         qct.quantize %[[D]] scales <128, pow2, row_major>
// CHECK:         qct.quantize %[[D]] scales <128, amax, row_major>
// CHECK:         qct.quantize %[[D]] scales <32, floor, row_major>
// CHECK-NOT:     qct.convert
qct.kernel @not_aligned attributes {spec_hash = ""} {
  %0 = qct.load_source scales <32, none, row_major> : !qct.tile<mxfp4, row>
  %1 = qct.decode %0 : !qct.tile<mxfp4, row> -> !qct.tile<exact, row>
  %2 = qct.quantize %1 scales <128, pow2, row_major> : !qct.tile<exact, row> -> !qct.tile<fp8_e4m3, row>
  qct.store_output %2 to 0 as "a" : !qct.tile<fp8_e4m3, row>
  %3 = qct.quantize %1 scales <128, amax, row_major> : !qct.tile<exact, row> -> !qct.tile<fp8_e4m3, row>
  qct.store_output %3 to 1 as "b" : !qct.tile<fp8_e4m3, row>
  %4 = qct.quantize %1 scales <32, floor, row_major> : !qct.tile<exact, row> -> !qct.tile<mxfp8_e4m3, row>
  qct.store_output %4 to 2 as "c" : !qct.tile<mxfp8_e4m3, row>
}

// -----

// Mixed: the aligned output fuses; the decode stays for the bf16 output.
// CHECK-LABEL: qct.kernel @mixed
// CHECK:         %[[SRC:.*]] = qct.load_source
// CHECK-DAG:     %[[C:.*]] = qct.convert %[[SRC]] scales <128, aligned, row_major>
// CHECK-DAG:     %[[D:.*]] = qct.decode %[[SRC]] : !qct.tile<mxfp4, row> -> !qct.tile<bf16, row>
// CHECK-DAG:     qct.store_output %[[C]] to 0
// CHECK-DAG:     qct.store_output %[[D]] to 1
qct.kernel @mixed attributes {spec_hash = ""} {
  %0 = qct.load_source scales <32, none, row_major> : !qct.tile<mxfp4, row>
  %1 = qct.decode %0 : !qct.tile<mxfp4, row> -> !qct.tile<exact, row>
  %2 = qct.quantize %1 scales <128, aligned, row_major> : !qct.tile<exact, row> -> !qct.tile<fp8_e4m3, row>
  qct.store_output %2 to 0 as "y" : !qct.tile<fp8_e4m3, row>
  %3 = qct.decode %0 : !qct.tile<mxfp4, row> -> !qct.tile<bf16, row>
  qct.store_output %3 to 1 as "x" : !qct.tile<bf16, row>
}
