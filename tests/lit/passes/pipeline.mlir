// qct-pipeline, the pipeline qct-compile runs, on the importer's form of the
// paper's fused multi-output kernel: mxfp4 -> fp8 row and fp8 col (aligned)
// plus a bf16 decode.
// RUN: qct-opt %s --qct-pipeline | FileCheck %s

// CHECK-LABEL: qct.kernel @mxfp4_three_outputs
// CHECK-SAME:    family = #qct<family tile>
// CHECK-SAME:    schedule = [#qct.knob<"QCT_THREADS", [128, 256], 256>, #qct.knob<"QCT_TILE_K", [128], 128>, #qct.knob<"QCT_K_TILES", [1, 2, 4], 2>, #qct.knob<"QCT_M_TILES", [1, 2, 4], 1>, #qct.knob<"QCT_GROUP_M", [1], 1>, #qct.knob<"QCT_TILE_M", [128], 128>, #qct.knob<"QCT_CLUSTER_M", [1], 1>]
// CHECK:         %[[SRC:.*]] = qct.load_source scales <32, none, row_major> : !qct.tile<mxfp4, row>
// CHECK-NOT:     qct.load_source
// CHECK-DAG:     %[[ROW:.*]] = qct.convert %[[SRC]] scales <128, aligned, row_major> : !qct.tile<mxfp4, row> -> !qct.tile<fp8_e4m3, row>
// CHECK-DAG:     %[[T:.*]] = qct.transpose %[[SRC]] : !qct.tile<mxfp4, row> -> !qct.tile<mxfp4, col>
// CHECK-DAG:     %[[S:.*]] = qct.stage %[[T]] : !qct.tile<mxfp4, col>
// CHECK-DAG:     %[[COL:.*]] = qct.convert %[[S]] scales <128, aligned, row_major> : !qct.tile<mxfp4, col> -> !qct.tile<fp8_e4m3, col>
// CHECK-DAG:     %[[DEC:.*]] = qct.decode %[[SRC]] : !qct.tile<mxfp4, row> -> !qct.tile<bf16, row>
// CHECK-DAG:     qct.store_output %[[ROW]] to 0 as "y"
// CHECK-DAG:     qct.store_output %[[COL]] to 1 as "yt"
// CHECK-DAG:     qct.store_output %[[DEC]] to 2 as "x"
// CHECK-NOT:     exact
qct.kernel @mxfp4_three_outputs attributes {spec_hash = "00"} {
  %0 = qct.load_source scales <32, none, row_major> : !qct.tile<mxfp4, row>
  %1 = qct.decode %0 : !qct.tile<mxfp4, row> -> !qct.tile<exact, row>
  %2 = qct.quantize %1 scales <128, aligned, row_major> : !qct.tile<exact, row> -> !qct.tile<fp8_e4m3, row>
  qct.store_output %2 to 0 as "y" : !qct.tile<fp8_e4m3, row>
  %3 = qct.load_source scales <32, none, row_major> : !qct.tile<mxfp4, row>
  %4 = qct.decode %3 : !qct.tile<mxfp4, row> -> !qct.tile<exact, row>
  %5 = qct.transpose %4 : !qct.tile<exact, row> -> !qct.tile<exact, col>
  %6 = qct.quantize %5 scales <128, aligned, row_major> : !qct.tile<exact, col> -> !qct.tile<fp8_e4m3, col>
  qct.store_output %6 to 1 as "yt" : !qct.tile<fp8_e4m3, col>
  %7 = qct.load_source scales <32, none, row_major> : !qct.tile<mxfp4, row>
  %8 = qct.decode %7 : !qct.tile<mxfp4, row> -> !qct.tile<bf16, row>
  qct.store_output %8 to 2 as "x" : !qct.tile<bf16, row>
}
