// qct-lower-to-kernel: the kernel family and its symbolic schedule knobs
// (names, legal values, defaults of docs/device-library.md).
// RUN: qct-opt %s -split-input-file -verify-diagnostics --pass-pipeline='builtin.module(qct.kernel(qct-lower-to-kernel))' | FileCheck %s

// Row outputs only: the row family, threads and unroll (4 vectors per
// thread for a bf16/fp16/fp32 source, 1 for a quantized one). 128 threads
// by default where an mxfp4 output is quantized from a wider source, else
// 256.
// CHECK-LABEL: qct.kernel @row
// CHECK-SAME:    family = #qct<family row>
// CHECK-SAME:    schedule = [#qct.knob<"QCT_THREADS", [128, 256, 512], 128>, #qct.knob<"QCT_UNROLL", [1, 2, 4], 4>]
qct.kernel @row attributes {spec_hash = ""} {
  %0 = qct.load_source : !qct.tile<bf16, row>
  %1 = qct.quantize %0 scales <32, floor, row_major> : !qct.tile<bf16, row> -> !qct.tile<mxfp4, row>
  qct.store_output %1 to 0 as "a" : !qct.tile<mxfp4, row>
}

// -----

// CHECK-LABEL: qct.kernel @row_fp8
// CHECK-SAME:    family = #qct<family row>
// CHECK-SAME:    schedule = [#qct.knob<"QCT_THREADS", [128, 256, 512], 256>, #qct.knob<"QCT_UNROLL", [1, 2, 4], 4>]
qct.kernel @row_fp8 attributes {spec_hash = ""} {
  %0 = qct.load_source : !qct.tile<bf16, row>
  %1 = qct.quantize %0 scales <128, pow2, row_major> : !qct.tile<bf16, row> -> !qct.tile<fp8_e4m3, row>
  qct.store_output %1 to 0 as "a" : !qct.tile<fp8_e4m3, row>
}

// -----

// An mxfp4 source: one vector per thread (32 elements), 256 threads; the
// unfused kernel (decode to bf16, then quantize) takes 128 threads and 4.
// CHECK-LABEL: qct.kernel @row_mxfp4_fused
// CHECK-SAME:    family = #qct<family row>
// CHECK-SAME:    schedule = [#qct.knob<"QCT_THREADS", [128, 256, 512], 256>, #qct.knob<"QCT_UNROLL", [1, 2, 4], 1>]
qct.kernel @row_mxfp4_fused attributes {spec_hash = ""} {
  %0 = qct.load_source scales <32, none, row_major> : !qct.tile<mxfp4, row>
  %1 = qct.convert %0 scales <128, aligned, row_major> : !qct.tile<mxfp4, row> -> !qct.tile<fp8_e4m3, row>
  qct.store_output %1 to 0 as "a" : !qct.tile<fp8_e4m3, row>
}

// -----

// CHECK-LABEL: qct.kernel @row_mxfp4_unfused
// CHECK-SAME:    family = #qct<family row>
// CHECK-SAME:    schedule = [#qct.knob<"QCT_THREADS", [128, 256, 512], 128>, #qct.knob<"QCT_UNROLL", [1, 2, 4], 4>]
qct.kernel @row_mxfp4_unfused attributes {spec_hash = "", fuse = false} {
  %0 = qct.load_source scales <32, none, row_major> : !qct.tile<mxfp4, row>
  %1 = qct.decode %0 : !qct.tile<mxfp4, row> -> !qct.tile<bf16, row>
  %2 = qct.quantize %1 scales <128, pow2, row_major> : !qct.tile<bf16, row> -> !qct.tile<fp8_e4m3, row>
  qct.store_output %2 to 0 as "a" : !qct.tile<fp8_e4m3, row>
}

// -----

// An mxfp4 -> bf16 decode (no block: not the unfused rule): 256 and 1.
// CHECK-LABEL: qct.kernel @row_mxfp4_decode
// CHECK-SAME:    schedule = [#qct.knob<"QCT_THREADS", [128, 256, 512], 256>, #qct.knob<"QCT_UNROLL", [1, 2, 4], 1>]
qct.kernel @row_mxfp4_decode attributes {spec_hash = "", fuse = false} {
  %0 = qct.load_source scales <32, none, row_major> : !qct.tile<mxfp4, row>
  %1 = qct.decode %0 : !qct.tile<mxfp4, row> -> !qct.tile<bf16, row>
  qct.store_output %1 to 0 as "a" : !qct.tile<bf16, row>
}

// -----

// A staged col output: the tile family, threads, tile width, tiles per CTA
// along K (only 1 for a dense bf16 source: no prefetching pass, no group
// lookup) and along M (1, 2, 4: its col output takes the bf16 pow2 pass,
// which buffers the scales of the CTA's M tiles; default 1) and the CTA
// raster group along M (0, 1, 4 for the bf16 pass, 0 taking every K span
// of an M tile first; 1, 4 for another dense source; default 4). The bf16
// pass also runs 256-feature tiles on 512 threads, only as that pair and
// with one M tile: the schedule rules.
// CHECK-LABEL: qct.kernel @tile
// CHECK-SAME:    family = #qct<family tile>
// CHECK-SAME:    schedule = [#qct.knob<"QCT_THREADS", [128, 256, 512], 256>, #qct.knob<"QCT_TILE_K", [64, 128, 256], 128>, #qct.knob<"QCT_K_TILES", [1], 1>, #qct.knob<"QCT_M_TILES", [1, 2, 4], 1>, #qct.knob<"QCT_GROUP_M", [0, 1, 4], 4>, #qct.knob<"QCT_TILE_M", [128], 128>, #qct.knob<"QCT_CLUSTER_M", [1], 1>]
// CHECK-SAME:    schedule_rules = [#qct.knob_rule<"QCT_THREADS", 512, "QCT_TILE_K", [256]>, #qct.knob_rule<"QCT_TILE_K", 256, "QCT_THREADS", [512]>, #qct.knob_rule<"QCT_THREADS", 512, "QCT_M_TILES", [1]>]
qct.kernel @tile attributes {spec_hash = ""} {
  %0 = qct.load_source : !qct.tile<bf16, row>
  %1 = qct.transpose %0 : !qct.tile<bf16, row> -> !qct.tile<bf16, col>
  %2 = qct.stage %1 : !qct.tile<bf16, col>
  %3 = qct.quantize %2 scales <128, pow2, row_major> : !qct.tile<bf16, col> -> !qct.tile<fp8_e4m3, col>
  qct.store_output %3 to 0 as "b" : !qct.tile<fp8_e4m3, col>
}

// -----

// An fp32 tile of 128 features needs more than 48 KiB of shared memory:
// the default tile width drops to 64 (128 stays legal).
// CHECK-LABEL: qct.kernel @tile_fp32
// CHECK-SAME:    #qct.knob<"QCT_TILE_K", [64, 128], 64>
qct.kernel @tile_fp32 attributes {spec_hash = ""} {
  %0 = qct.load_source : !qct.tile<fp32, row>
  %1 = qct.transpose %0 : !qct.tile<fp32, row> -> !qct.tile<fp32, col>
  %2 = qct.stage %1 : !qct.tile<fp32, col>
  %3 = qct.quantize %2 scales <128, amax, row_major> : !qct.tile<fp32, col> -> !qct.tile<fp8_e4m3, col>
  qct.store_output %3 to 0 as "b" : !qct.tile<fp8_e4m3, col>
}

// -----

qct.kernel @unstaged attributes {spec_hash = ""} {
  %0 = qct.load_source : !qct.tile<bf16, row>
  %1 = qct.transpose %0 : !qct.tile<bf16, row> -> !qct.tile<bf16, col>
  %2 = qct.quantize %1 scales <128, pow2, row_major> : !qct.tile<bf16, col> -> !qct.tile<fp8_e4m3, col>
  // expected-error@+1 {{col output is not staged; run qct-stage-transposes}}
  qct.store_output %2 to 0 as "b" : !qct.tile<fp8_e4m3, col>
}

// -----

// A 1x128 row output beside a col output: a tile must hold whole row blocks,
// so 64-wide tiles are not legal (they would fail the device library's
// static_assert at NVRTC time); 256 is, for the bf16 pass at 512 threads.
// CHECK-LABEL: qct.kernel @tile_row128
// CHECK-SAME:    #qct.knob<"QCT_TILE_K", [128, 256], 128>
qct.kernel @tile_row128 attributes {spec_hash = ""} {
  %0 = qct.load_source : !qct.tile<bf16, row>
  %1 = qct.quantize %0 scales <128, pow2, row_major> : !qct.tile<bf16, row> -> !qct.tile<fp8_e4m3, row>
  qct.store_output %1 to 0 as "r" : !qct.tile<fp8_e4m3, row>
  %2 = qct.transpose %0 : !qct.tile<bf16, row> -> !qct.tile<bf16, col>
  %3 = qct.stage %2 : !qct.tile<bf16, col>
  %4 = qct.quantize %3 scales <128, pow2, row_major> : !qct.tile<bf16, col> -> !qct.tile<fp8_e4m3, col>
  qct.store_output %4 to 1 as "c" : !qct.tile<fp8_e4m3, col>
}

// -----

// A dense mxfp4 source whose only output is an aligned fp8 col (the fused
// convert): tiles of 256 features too (default: whole source lines) and
// not 64 (the slowest), K tiles (default 2 with clusters), M tiles 1, 2, 4
// (default 1, measured on the H200), no raster bands (slower for this
// source), half tiles of 64 tokens per CTA, and clusters of 8 CTAs along M
// (default: their block scales are stored a whole sector at a time).
// CHECK-LABEL: qct.kernel @tile_mxfp4
// CHECK-SAME:    schedule = [#qct.knob<"QCT_THREADS", [128, 256], 256>, #qct.knob<"QCT_TILE_K", [128, 256], 256>, #qct.knob<"QCT_K_TILES", [1, 2, 4], 2>, #qct.knob<"QCT_M_TILES", [1, 2, 4], 1>, #qct.knob<"QCT_GROUP_M", [1], 1>, #qct.knob<"QCT_TILE_M", [128, 64], 128>, #qct.knob<"QCT_CLUSTER_M", [1, 8], 8>]
qct.kernel @tile_mxfp4 attributes {spec_hash = ""} {
  %0 = qct.load_source scales <32, none, row_major> : !qct.tile<mxfp4, row>
  %1 = qct.transpose %0 : !qct.tile<mxfp4, row> -> !qct.tile<mxfp4, col>
  %2 = qct.stage %1 : !qct.tile<mxfp4, col>
  %3 = qct.convert %2 scales <128, aligned, row_major> : !qct.tile<mxfp4, col> -> !qct.tile<fp8_e4m3, col>
  qct.store_output %3 to 0 as "yt" : !qct.tile<fp8_e4m3, col>
}

// -----

// The same with a row output beside it, here an unblocked bf16 decode: no
// 256-feature tiles (unmeasured with row outputs, whose registers the wide
// tile would crowd), so K tiles default to 2 (the prefetching pass).
// CHECK-LABEL: qct.kernel @tile_mxfp4_decode_row
// CHECK-SAME:    #qct.knob<"QCT_TILE_K", [64, 128], 128>, #qct.knob<"QCT_K_TILES", [1, 2, 4], 2>, #qct.knob<"QCT_M_TILES", [1, 2, 4], 1>, #qct.knob<"QCT_GROUP_M", [1], 1>, #qct.knob<"QCT_TILE_M", [128], 128>, #qct.knob<"QCT_CLUSTER_M", [1], 1>]
qct.kernel @tile_mxfp4_decode_row attributes {spec_hash = ""} {
  %0 = qct.load_source scales <32, none, row_major> : !qct.tile<mxfp4, row>
  %1 = qct.decode %0 : !qct.tile<mxfp4, row> -> !qct.tile<bf16, row>
  qct.store_output %1 to 0 as "x" : !qct.tile<bf16, row>
  %2 = qct.transpose %0 : !qct.tile<mxfp4, row> -> !qct.tile<mxfp4, col>
  %3 = qct.stage %2 : !qct.tile<mxfp4, col>
  %4 = qct.convert %3 scales <128, aligned, row_major> : !qct.tile<mxfp4, col> -> !qct.tile<fp8_e4m3, col>
  qct.store_output %4 to 1 as "yt" : !qct.tile<fp8_e4m3, col>
}

// -----

// A col output no fast pass takes (bf16 -> mxfp4 col): one M tile per CTA,
// raster bands 1 or 4 (default 4).
// CHECK-LABEL: qct.kernel @tile_generic
// CHECK-SAME:    #qct.knob<"QCT_M_TILES", [1], 1>, #qct.knob<"QCT_GROUP_M", [1, 4], 4>, #qct.knob<"QCT_TILE_M", [128], 128>, #qct.knob<"QCT_CLUSTER_M", [1], 1>]
qct.kernel @tile_generic attributes {spec_hash = ""} {
  %0 = qct.load_source : !qct.tile<bf16, row>
  %1 = qct.transpose %0 : !qct.tile<bf16, row> -> !qct.tile<bf16, col>
  %2 = qct.stage %1 : !qct.tile<bf16, col>
  %3 = qct.quantize %2 scales <32, floor, row_major> : !qct.tile<bf16, col> -> !qct.tile<mxfp4, col>
  qct.store_output %3 to 0 as "b" : !qct.tile<mxfp4, col>
}
