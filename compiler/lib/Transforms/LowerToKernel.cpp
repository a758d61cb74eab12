//===- LowerToKernel.cpp - Kernel family and symbolic schedule knobs ------===//
//
// The last step before emission: choose the device library's kernel family
// and attach its schedule knobs (docs/device-library.md). The knobs are
// symbols with legal values and a default; the IR and the emitted CUDA never
// fix them, the runtime binds them with -D so it can tune without a compiler.
//
//===----------------------------------------------------------------------===//

#include "qct/Transforms/Passes.h"

#include "mlir/IR/Builders.h"

#include <algorithm>

namespace mlir::qct {
#define GEN_PASS_DEF_QCTLOWERTOKERNEL
#include "qct/Transforms/Passes.h.inc"
} // namespace mlir::qct

using namespace mlir;
using namespace mlir::qct;

namespace {
/// The block size of a row output: that of the quantize or convert that
/// produced it, 0 for a decode (no blocks).
int64_t rowBlock(StoreOutputOp out) {
  Operation *def = out.getValue().getDefiningOp();
  if (auto q = dyn_cast_or_null<QuantizeOp>(def))
    return q.getScale().getBlock();
  if (auto c = dyn_cast_or_null<ConvertOp>(def))
    return c.getScale().getBlock();
  return 0;
}

/// The block scale of a col output: that of the quantize or convert behind
/// its staging ops.
std::optional<BlockScaleAttr> colScale(StoreOutputOp out) {
  for (Operation *op = out.getValue().getDefiningOp(); op;
       op = op->getNumOperands() ? op->getOperand(0).getDefiningOp()
                                 : nullptr) {
    if (auto q = dyn_cast<QuantizeOp>(op))
      return q.getScale();
    if (auto c = dyn_cast<ConvertOp>(op))
      return c.getScale();
  }
  return std::nullopt;
}

/// Whether every col output takes one of the device library's fast column
/// passes (col_pass.cuh, ColPlan): mxfp4 source fused into `aligned`
/// outputs, or bf16 source into fp8 `pow2` outputs.
bool fastColPass(KernelOp kernel, ArrayRef<StoreOutputOp> cols) {
  Format src = getKernelSource(kernel).getResult().getType().getFormat();
  auto qualifies = [&](StoreOutputOp out) {
    std::optional<BlockScaleAttr> scale = colScale(out);
    if (!scale)
      return false;
    Format f = cast<TileType>(out.getValue().getType()).getFormat();
    if (src == Format::mxfp4)
      return kernel.getFuse() && scale->getPolicy() == ScalePolicy::aligned;
    return src == Format::bf16 &&
           (f == Format::fp8_e4m3 || f == Format::fp8_e5m2) &&
           scale->getPolicy() == ScalePolicy::pow2;
  };
  return !cols.empty() && llvm::all_of(cols, qualifies);
}

struct QCTLowerToKernelPass
    : public mlir::qct::impl::QCTLowerToKernelBase<QCTLowerToKernelPass> {
  void runOnOperation() override {
    KernelOp kernel = getOperation();
    MLIRContext *ctx = &getContext();
    LoadSourceOp source = getKernelSource(kernel);
    if (!source) {
      kernel.emitOpError("has no qct.load_source to lower");
      return signalPassFailure();
    }

    // A col output reads a staged (transposed) tile: only the tile family
    // has the shared-memory tile. Unstaged col values mean the staging pass
    // did not run, which the emitter could not print efficiently.
    bool anyCol = false, anyRow = false, mxfp4Row = false;
    int64_t widestRowBlock = 0;
    SmallVector<StoreOutputOp> cols;
    for (StoreOutputOp out : getKernelOutputs(kernel)) {
      auto type = cast<TileType>(out.getValue().getType());
      if (type.getLayout() != Layout::col) {
        anyRow = true; // rowBlock is 0 for an unblocked (decode) output
        mxfp4Row |= type.getFormat() == Format::mxfp4;
        widestRowBlock = std::max(widestRowBlock, rowBlock(out));
        continue;
      }
      anyCol = true;
      cols.push_back(out);
      bool staged = false;
      for (Operation *op = out.getValue().getDefiningOp(); op && !staged;
           op = op->getNumOperands() ? op->getOperand(0).getDefiningOp()
                                     : nullptr)
        staged = isa<StageOp>(op);
      if (!staged) {
        out.emitOpError("col output is not staged; run qct-stage-transposes");
        return signalPassFailure();
      }
    }

    KernelFamily family = anyCol ? KernelFamily::tile : KernelFamily::row;
    SmallVector<Attribute> knobs, rules;
    if (family == KernelFamily::row) {
      Format src = source.getResult().getType().getFormat();
      // 128 threads where an mxfp4 row output is quantized from a wider
      // source: on the H200 `qct tune` picked 128 for bf16 -> mxfp4 row and
      // fp8 -> mxfp4 row at each of M = 32768 and 131072, K = 2048 and 7168,
      // 4-12% faster than 256 (fp8 -> mxfp4 row 398.1 against 452.3 us at
      // M = 131072, K = 7168; docs/perf/tune-2026-11-30-session18-k2048.log,
      // docs/performance.md). The other row kernels took 256 there (but one
      // shape each for mxfp4 -> bf16 and mxfp4 -> fp8 row).
      // The unfused mxfp4 -> (bf16) -> fp8 row kernel (an mxfp4 source
      // quantized through bf16, fuse false) took 128 threads and 4 vectors
      // in flight at all four tuned shapes: 95.7 against 116.8 us at the
      // default 256 x 1 (M = 32768, K = 7168), 364.0 against 451.2 at M =
      // 131072 (docs/perf/tune-2026-11-30-session20.log). Since it runs on
      // raw codes its vector's work is the decode's plus bf16 -> fp8's, and
      // like the wider sources it wants several loads in flight.
      const bool unfusedMx =
          src == Format::mxfp4 && !kernel.getFuse() && widestRowBlock > 0;
      knobs.push_back(KnobAttr::get(
          ctx, "QCT_THREADS", {128, 256, 512},
          (mxfp4Row && src != Format::mxfp4) || unfusedMx ? 128 : 256));
      // Measured on the H200 (docs/performance.md): a 16-byte vector of a
      // bf16/fp16/fp32 or fp8/mxfp8 source is 16 or fewer elements, so each
      // thread needs four in flight (fp8 -> mxfp4 row: 85% of copy at 4,
      // 64% at 1); an mxfp4 vector carries 32 elements and one per thread
      // keeps the stores densest.
      knobs.push_back(
          KnobAttr::get(ctx, "QCT_UNROLL", {1, 2, 4},
                        src == Format::mxfp4 && !unfusedMx ? 1 : 4));
    } else {
      // An fp32 tile of 128 features is 66 KiB of shared memory, above the
      // 48 KiB every launch gets without an opt-in: default to 64 there.
      bool fp32 = source.getResult().getType().getFormat() == Format::fp32;
      bool mxfp4 = source.getResult().getType().getFormat() == Format::mxfp4;
      // The bf16 source's pow2 column pass also runs 256-feature tiles on
      // 512 threads (the same 8 vectors per thread as 128 features on 256,
      // two CTAs per SM): a token row's block scales of a tile then fill a
      // quarter of an L2 sector instead of an eighth, and on the H200 bf16
      // -> fp8 row + col ran 259.3 us against 263.6 (M = 32768, K = 7168;
      // its other three bundled kernels were slower, 241-265 against
      // 232-254: docs/perf/probe-2026-11-30-session10.log). Only as that
      // pair (schedule_rules below): 256 features on fewer threads would
      // hold 16 or more vectors per thread, 512 threads on 128 features
      // is untested, and several M tiles at 512 threads do not fit.
      bool bf16Pass = !mxfp4 && fastColPass(kernel, cols);
      if (bf16Pass)
        knobs.push_back(
            KnobAttr::get(ctx, "QCT_THREADS", {128, 256, 512}, 256));
      else
        knobs.push_back(KnobAttr::get(ctx, "QCT_THREADS", {128, 256}, 256));
      // A tile must hold whole row-output blocks (the device library
      // static_asserts it): a 1x128 row output rules out 64-wide tiles.
      // The mxfp4 source's aligned pass without row outputs also offers 256
      // (the default): each tile then loads whole 128-byte lines of its
      // token rows (128 features are half a line). On the H200 (M =
      // 32768, K = 7168) the dense mxfp4 -> fp8 col kernel ran 119.5 us at
      // 256 (K_TILES 1, no prefetch) against 127.6 at 128 (K_TILES 2,
      // M_TILES 4, the best there; docs/perf/probe-2026-11-29-session4.log).
      // 64 (32 bytes of each row) is not offered there: the slowest width
      // at every schedule measured (docs/perf/probe-2026-11-29-col.log,
      // the ragged entries of specs/tuning/h200.json), and QCT_TILE_M 64
      // needs 128 or more.
      bool wideTiles = mxfp4 && !anyRow && fastColPass(kernel, cols);
      SmallVector<int64_t> widths;
      for (int64_t w : {64, 128, 256})
        if (w >= widestRowBlock && (wideTiles ? w >= 128 : w < 256 || bf16Pass))
          widths.push_back(w);
      int64_t tileK = wideTiles ? 256 : fp32 && widths.front() == 64 ? 64 : 128;
      knobs.push_back(KnobAttr::get(ctx, "QCT_TILE_K", widths, tileK));
      // Tiles of TILE_K features per CTA, along K: an mxfp4 source's aligned
      // column pass prefetches the next tile while it stores this one (a
      // latency-bound kernel: more bytes in flight), and a ragged CTA looks
      // its group up once for all of them. Elsewhere more tiles per CTA only
      // cost registers, so only 1 is offered. Default 2 at TILE_K 128: on
      // the H200 the dense mxfp4 -> fp8 col kernel ran 136 us at 2, 142 at
      // 1, 145 at 4. At TILE_K 256 with QCT_CLUSTER_M 8 (the wide tiles'
      // default, below), fewer CTAs per cluster won: dense
      // 111.3 us at 2, 116.8 at 1, 115.8 at 4; ragged 130.9 us at 4, 132.8
      // at 2, 147.3 at 1 with 32 groups, 227.6, 243.2, 280.0 with 256 (M =
      // 32768, K = 7168; docs/perf/probe-2026-11-29-session6.log).
      // Without clusters (mn_major scales, below) 2 as well: dense 108.9 us
      // at 2, 105.9 at 1, 114.4 at 4, but at M = 131072 437.9 at 2 and
      // 452.9 at 1 (the tuned schedules take 1 where it wins); ragged 116.7
      // us at 2, 120.0 at 1, 122.2 at 4 with 32 groups, 162.8, 181.4, 163.6
      // with 256 (docs/perf/probe-2026-11-30-session7.log).
      bool ragged = kernel.getRagged().has_value();
      // Clusters combine row_major block scales (below); a kernel whose col
      // outputs' scales are all mn_major, contiguous along the features a
      // tile already covers, writes whole sectors without them.
      bool rowMajorColScales = llvm::any_of(cols, [](StoreOutputOp out) {
        std::optional<BlockScaleAttr> scale = colScale(out);
        return scale && scale->getLayout() == ScaleLayout::row_major;
      });
      bool clusters = wideTiles && rowMajorColScales;
      int64_t kTiles = clusters && ragged ? 4 : 2;
      if (mxfp4 || ragged)
        knobs.push_back(KnobAttr::get(ctx, "QCT_K_TILES", {1, 2, 4}, kTiles));
      else
        knobs.push_back(KnobAttr::get(ctx, "QCT_K_TILES", {1}, 1));
      // Consecutive 128-token tiles per CTA, along M: a dense CTA whose col
      // outputs all take a fast pass buffers each feature's scales of those
      // tiles and writes them as one 8- or 16-byte store (row_major scales
      // of consecutive features are cdiv(M,128)*4 bytes apart, so per tile
      // each is a 4-byte store to its own L2 sector). Ragged tiles are not
      // consecutive in the scale columns' sense (one group lookup per
      // tile), and the generic pass gains nothing from it: only 1 there.
      // Default 1: at the aligned pass's default TILE_K 256 the dense mxfp4
      // -> fp8 col kernel ran 119.5 us at 1, 119.9 at 2, 121.7 at 4 (H200,
      // M = 32768, K = 7168; at TILE_K 128 4 had won, 132 against 137 us);
      // the bf16 pass at 128 threads ran twice as long at 2
      // (docs/perf/probe-2026-11-29-run11.log).
      // With only mn_major col scales nothing is combined (each tile's are
      // contiguous already), and the buffers spilled at 128 threads.
      if (!ragged && fastColPass(kernel, cols) && rowMajorColScales)
        knobs.push_back(KnobAttr::get(ctx, "QCT_M_TILES", {1, 2, 4}, 1));
      else
        knobs.push_back(KnobAttr::get(ctx, "QCT_M_TILES", {1}, 1));
      // CTA raster order (tile_kernel.cuh): GROUP_M CTAs along M before the
      // next K span, so the resident CTAs read whole source rows and write
      // long runs of each output row. On the H200 (M = 32768, K = 7168,
      // docs/perf/probe-2026-11-29-run12.log) bf16 -> fp8 row + col ran
      // 299 us at 4 and 330 at 1, bf16 -> mxfp4 row + fp8 col 286 and 294;
      // the mxfp4 source (a quarter of the bytes per row) ran 2% slower at
      // 4, so it keeps 1, as do ragged grids (one CTA row per tile). The
      // bf16 pass also offers 0, every K span of an M tile first: the 8
      // CTAs that write an L2 sector of a token row's row_major block scales
      // then run back to back. bf16 -> mxfp4 row + fp8 col ran 234.5-235.8
      // us at 0 against 236.8-238.1 at 4; bf16 -> fp8 row + col and the
      // GEMM-ready twin ran slower (their col scale sectors' 8 writers are
      // then a wave apart), and the mxfp4 source 6-9% slower
      // (docs/perf/probe-2026-12-01-session22.log).
      if (!ragged && bf16Pass)
        knobs.push_back(KnobAttr::get(ctx, "QCT_GROUP_M", {0, 1, 4}, 4));
      else if (!ragged && !mxfp4)
        knobs.push_back(KnobAttr::get(ctx, "QCT_GROUP_M", {1, 4}, 4));
      else
        knobs.push_back(KnobAttr::get(ctx, "QCT_GROUP_M", {1}, 1));
      // Tokens per CTA tile: 64 splits each 128-token tile between two CTAs
      // (tile_kernel.cuh), for the aligned pass only (the other passes need
      // a whole 1x128 block's values for its scale; the aligned pass needs
      // only the other half's scale bytes).
      if (wideTiles)
        knobs.push_back(KnobAttr::get(ctx, "QCT_TILE_M", {128, 64}, 128));
      else
        knobs.push_back(KnobAttr::get(ctx, "QCT_TILE_M", {128}, 128));
      // CTAs per thread block cluster along M (cluster.cuh): 8 CTAs of
      // consecutive tiles write their row_major block scales together, a
      // whole 32-byte sector per feature, instead of 4 bytes each. For the
      // aligned pass, whose block scales come from the bmax alone. Default
      // 8: the dense mxfp4 -> fp8 col kernel ran 111.3 us against 120.1 at
      // the best schedule without clusters (H200, M = 32768, K = 7168;
      // clusters of 2 and 4, which would need M_TILES 4 and 2 for whole
      // sectors, ran no faster: docs/perf/probe-2026-11-29-session6.log).
      // Only where some col output has row_major scales: with mn_major ones
      // the exchange buys nothing (105.9 us without, 123.9 with, at K_TILES
      // 1; docs/perf/probe-2026-11-30-session7.log). At 1 the kernel
      // writes them with scale jobs instead (scale_jobs.cuh; dense, and
      // ragged with an untouched tail), which `qct tune` picks where it is
      // faster (H200, M = 32768, dense and ragged); the default stays 8,
      // which is faster for the dense kernel at M = 131072. Untuned, the
      // Python heuristic takes 1 where a launch has 32 to 132 jobs
      // (qct.tuning.scale_job_schedule).
      if (clusters)
        knobs.push_back(KnobAttr::get(ctx, "QCT_CLUSTER_M", {1, 8}, 8));
      else
        knobs.push_back(KnobAttr::get(ctx, "QCT_CLUSTER_M", {1}, 1));
      // The last span of K_TILES tiles along K as single-tile CTAs (0, 1;
      // raster.cuh, k_span): a ragged CTA of several K tiles lives about
      // twice as long as its dense twin's, and as the launch drains, slots
      // idle for up to a CTA's life. On the H200 (M = 32768, K = 7168, 32
      // groups, 256 threads, TILE_K 256, K_TILES 2, timing only) the
      // aligned ragged kernels ran 109.6 against 110.6 us (row_major) and
      // 107.8 against 108.8 (mn_major) with the last span split, unchanged
      // at 256 groups (docs/perf/probe-2026-12-01-session22.log, call 9).
      // Only for CTAs of several 256-feature tiles without clusters (the
      // device library static_asserts it): the rules below. Default 0.
      // Listed only there: the other tile kernels' schedules (and their
      // tuned entries) stay as they were.
      if (ragged && wideTiles) {
        knobs.push_back(KnobAttr::get(ctx, "QCT_SPLIT_LAST_SPAN", {0, 1}, 0));
        rules.push_back(KnobRuleAttr::get(ctx, "QCT_SPLIT_LAST_SPAN", 1,
                                          "QCT_K_TILES", {2, 4}));
        rules.push_back(KnobRuleAttr::get(ctx, "QCT_SPLIT_LAST_SPAN", 1,
                                          "QCT_TILE_K", {256}));
        rules.push_back(KnobRuleAttr::get(ctx, "QCT_SPLIT_LAST_SPAN", 1,
                                          "QCT_CLUSTER_M", {1}));
        rules.push_back(KnobRuleAttr::get(ctx, "QCT_SPLIT_LAST_SPAN", 1,
                                          "QCT_TILE_M", {128}));
      }
      if (bf16Pass) { // 512 threads exactly with 256-feature tiles (above)
        rules.push_back(
            KnobRuleAttr::get(ctx, "QCT_THREADS", 512, "QCT_TILE_K", {256}));
        rules.push_back(
            KnobRuleAttr::get(ctx, "QCT_TILE_K", 256, "QCT_THREADS", {512}));
        rules.push_back(
            KnobRuleAttr::get(ctx, "QCT_THREADS", 512, "QCT_M_TILES", {1}));
      }
    }
    kernel.setFamilyAttr(KernelFamilyAttr::get(ctx, family));
    kernel.setScheduleAttr(ArrayAttr::get(ctx, knobs));
    if (!rules.empty())
      kernel.setScheduleRulesAttr(ArrayAttr::get(ctx, rules));
  }
};
} // namespace
