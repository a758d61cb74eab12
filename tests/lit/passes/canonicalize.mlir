// Canonicalization: one read, one decode, one transpose per source, and
// transposes next to the load (so the staged tile holds source codes).
// RUN: qct-opt %s -split-input-file -canonicalize | FileCheck %s

// Two outputs built independently by the importer share one read and one
// decode after canonicalization.
// CHECK-LABEL: qct.kernel @dedupe
// CHECK:         %[[SRC:.*]] = qct.load_source
// CHECK-NOT:     qct.load_source
// CHECK:         %[[DEC:.*]] = qct.decode %[[SRC]]
// CHECK-NOT:     qct.decode
// CHECK:         %[[A:.*]] = qct.quantize %[[DEC]] scales <128, aligned, row_major>
// CHECK:         qct.store_output %[[A]] to 0
// CHECK:         %[[B:.*]] = qct.quantize %[[DEC]] scales <128, pow2, row_major>
// CHECK:         qct.store_output %[[B]] to 1
qct.kernel @dedupe attributes {spec_hash = ""} {
  %0 = qct.load_source scales <32, none, row_major> : !qct.tile<mxfp4, row>
  %1 = qct.decode %0 : !qct.tile<mxfp4, row> -> !qct.tile<exact, row>
  %2 = qct.quantize %1 scales <128, aligned, row_major> : !qct.tile<exact, row> -> !qct.tile<fp8_e4m3, row>
  qct.store_output %2 to 0 as "a" : !qct.tile<fp8_e4m3, row>
  %3 = qct.load_source scales <32, none, row_major> : !qct.tile<mxfp4, row>
  %4 = qct.decode %3 : !qct.tile<mxfp4, row> -> !qct.tile<exact, row>
  %5 = qct.quantize %4 scales <128, pow2, row_major> : !qct.tile<exact, row> -> !qct.tile<fp8_e4m3, row>
  qct.store_output %5 to 1 as "b" : !qct.tile<fp8_e4m3, row>
}

// -----

// Decodes into different formats are different values: both stay.
// CHECK-LABEL: qct.kernel @distinct_decodes
// CHECK:         %[[SRC:.*]] = qct.load_source
// CHECK:         qct.decode %[[SRC]] : !qct.tile<mxfp4, row> -> !qct.tile<exact, row>
// CHECK:         qct.decode %[[SRC]] : !qct.tile<mxfp4, row> -> !qct.tile<bf16, row>
qct.kernel @distinct_decodes attributes {spec_hash = ""} {
  %0 = qct.load_source scales <32, none, row_major> : !qct.tile<mxfp4, row>
  %1 = qct.decode %0 : !qct.tile<mxfp4, row> -> !qct.tile<exact, row>
  %2 = qct.quantize %1 scales <128, aligned, row_major> : !qct.tile<exact, row> -> !qct.tile<fp8_e4m3, row>
  qct.store_output %2 to 0 as "a" : !qct.tile<fp8_e4m3, row>
  %3 = qct.decode %0 : !qct.tile<mxfp4, row> -> !qct.tile<bf16, row>
  qct.store_output %3 to 1 as "b" : !qct.tile<bf16, row>
}

// -----

// transpose(decode(x)) becomes decode(transpose(x)), and the two col outputs
// then share one transpose (one staged tile) and one decode.
// CHECK-LABEL: qct.kernel @hoist_transpose
// CHECK:         %[[SRC:.*]] = qct.load_source scales <32, none, row_major> : !qct.tile<mxfp4, row>
// CHECK:         %[[T:.*]] = qct.transpose %[[SRC]] : !qct.tile<mxfp4, row> -> !qct.tile<mxfp4, col>
// CHECK-NOT:     qct.transpose
// CHECK:         %[[D:.*]] = qct.decode %[[T]] : !qct.tile<mxfp4, col> -> !qct.tile<exact, col>
// CHECK-NOT:     qct.decode
// CHECK:         qct.quantize %[[D]] scales <128, aligned, row_major> : !qct.tile<exact, col> -> !qct.tile<fp8_e4m3, col>
// CHECK:         qct.quantize %[[D]] scales <128, amax, mn_major> : !qct.tile<exact, col> -> !qct.tile<fp8_e5m2, col>
qct.kernel @hoist_transpose attributes {spec_hash = ""} {
  %0 = qct.load_source scales <32, none, row_major> : !qct.tile<mxfp4, row>
  %1 = qct.decode %0 : !qct.tile<mxfp4, row> -> !qct.tile<exact, row>
  %2 = qct.transpose %1 : !qct.tile<exact, row> -> !qct.tile<exact, col>
  %3 = qct.quantize %2 scales <128, aligned, row_major> : !qct.tile<exact, col> -> !qct.tile<fp8_e4m3, col>
  qct.store_output %3 to 0 as "a" : !qct.tile<fp8_e4m3, col>
  %4 = qct.decode %0 : !qct.tile<mxfp4, row> -> !qct.tile<exact, row>
  %5 = qct.transpose %4 : !qct.tile<exact, row> -> !qct.tile<exact, col>
  %6 = qct.quantize %5 scales <128, amax, mn_major> : !qct.tile<exact, col> -> !qct.tile<fp8_e5m2, col>
  qct.store_output %6 to 1 as "b" : !qct.tile<fp8_e5m2, col>
}

// -----

// A decode that also feeds a row output stays for it; the col output gets
// its own decode of the transposed source.
// CHECK-LABEL: qct.kernel @hoist_keeps_row_decode
// CHECK:         %[[SRC:.*]] = qct.load_source
// CHECK-DAG:     %[[DR:.*]] = qct.decode %[[SRC]] : !qct.tile<mxfp4, row> -> !qct.tile<bf16, row>
// CHECK-DAG:     %[[T:.*]] = qct.transpose %[[SRC]] : !qct.tile<mxfp4, row> -> !qct.tile<mxfp4, col>
// CHECK-DAG:     %[[DC:.*]] = qct.decode %[[T]] : !qct.tile<mxfp4, col> -> !qct.tile<bf16, col>
// CHECK-DAG:     qct.store_output %[[DR]] to 0
// CHECK-DAG:     qct.store_output %[[DC]] to 1
qct.kernel @hoist_keeps_row_decode attributes {spec_hash = ""} {
  %0 = qct.load_source scales <32, none, row_major> : !qct.tile<mxfp4, row>
  %1 = qct.decode %0 : !qct.tile<mxfp4, row> -> !qct.tile<bf16, row>
  qct.store_output %1 to 0 as "a" : !qct.tile<bf16, row>
  %2 = qct.transpose %1 : !qct.tile<bf16, row> -> !qct.tile<bf16, col>
  qct.store_output %2 to 1 as "b" : !qct.tile<bf16, col>
}
