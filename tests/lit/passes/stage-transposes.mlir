// qct-stage-transposes: every transpose feeds its users through one
// shared-memory tile (qct.stage); row values are not staged.
// RUN: qct-opt %s -split-input-file --pass-pipeline='builtin.module(qct.kernel(qct-stage-transposes))' | FileCheck %s
// Staging twice changes nothing.
// RUN: qct-opt %s -split-input-file --pass-pipeline='builtin.module(qct.kernel(qct-stage-transposes,qct-stage-transposes))' | FileCheck %s

// CHECK-LABEL: qct.kernel @two_col_outputs
// CHECK:         %[[SRC:.*]] = qct.load_source : !qct.tile<bf16, row>
// CHECK:         %[[R:.*]] = qct.quantize %[[SRC]] scales <32, floor, row_major>
// CHECK:         %[[T:.*]] = qct.transpose %[[SRC]]
// CHECK-NEXT:    %[[S:.*]] = qct.stage %[[T]] : !qct.tile<bf16, col>
// CHECK-NOT:     qct.stage
// CHECK:         qct.quantize %[[S]] scales <128, pow2, row_major>
// CHECK:         qct.quantize %[[S]] scales <128, amax, mn_major>
qct.kernel @two_col_outputs attributes {spec_hash = ""} {
  %0 = qct.load_source : !qct.tile<bf16, row>
  %1 = qct.quantize %0 scales <32, floor, row_major> : !qct.tile<bf16, row> -> !qct.tile<mxfp4, row>
  qct.store_output %1 to 0 as "a" : !qct.tile<mxfp4, row>
  %2 = qct.transpose %0 : !qct.tile<bf16, row> -> !qct.tile<bf16, col>
  %3 = qct.quantize %2 scales <128, pow2, row_major> : !qct.tile<bf16, col> -> !qct.tile<fp8_e4m3, col>
  qct.store_output %3 to 1 as "b" : !qct.tile<fp8_e4m3, col>
  %4 = qct.quantize %2 scales <128, amax, mn_major> : !qct.tile<bf16, col> -> !qct.tile<fp8_e5m2, col>
  qct.store_output %4 to 2 as "c" : !qct.tile<fp8_e5m2, col>
}

// -----

// CHECK-LABEL: qct.kernel @row_only
// CHECK-NOT:     qct.stage
qct.kernel @row_only attributes {spec_hash = ""} {
  %0 = qct.load_source : !qct.tile<bf16, row>
  %1 = qct.quantize %0 scales <32, floor, row_major> : !qct.tile<bf16, row> -> !qct.tile<mxfp4, row>
  qct.store_output %1 to 0 as "a" : !qct.tile<mxfp4, row>
}

// -----

// The staged tile holds the source codes when the transpose was hoisted.
// CHECK-LABEL: qct.kernel @mx_codes
// CHECK:         %[[T:.*]] = qct.transpose %{{.*}} : !qct.tile<mxfp4, row> -> !qct.tile<mxfp4, col>
// CHECK-NEXT:    %[[S:.*]] = qct.stage %[[T]] : !qct.tile<mxfp4, col>
// CHECK-NEXT:    qct.convert %[[S]]
qct.kernel @mx_codes attributes {spec_hash = ""} {
  %0 = qct.load_source scales <32, none, row_major> : !qct.tile<mxfp4, row>
  %1 = qct.transpose %0 : !qct.tile<mxfp4, row> -> !qct.tile<mxfp4, col>
  %2 = qct.convert %1 scales <128, aligned, row_major> : !qct.tile<mxfp4, col> -> !qct.tile<fp8_e4m3, col>
  qct.store_output %2 to 0 as "y" : !qct.tile<fp8_e4m3, col>
}
