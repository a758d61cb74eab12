//===- Metadata.cpp - The kernel metadata JSON (docs/kernel-abi.md) -------===//
//
// Everything a launcher needs without parsing the CUDA source: buffer dtypes
// and shapes, constraints, knobs and launch geometry, as expressions over M,
// K, G and the knob names (the grammar of docs/kernel-abi.md). The launch
// formulas are the device library's (docs/device-library.md).
//
//===----------------------------------------------------------------------===//

#include "qct/Target/Metadata.h"

#include "qct/Spec/Formats.h"
#include "qct/Spec/SpecJson.h"
#include "qct/Target/CudaEmitter.h"

#include <nlohmann/json.hpp>

#include <string>

using namespace qct;
using ojson = nlohmann::ordered_json;

#ifndef QCT_VERSION_STRING
#error "QCT_VERSION_STRING must be defined by the build"
#endif

/// Source elements per 16-byte vector (the device library's VEC).
static int vecElements(Format f) {
  switch (f) {
  case Format::BF16:
  case Format::FP16:
    return 8;
  case Format::FP32:
    return 4;
  case Format::MXFP4:
    return 32;
  default:
    return 16;
  }
}

/// bf16 / fp16 buffers carry their format's dtype, so the runtime refuses an
/// fp16 tensor handed to a bf16 kernel; it still takes a raw 16-bit view
/// (u16) of the same bits (kernel-abi.md).
static std::string elementDtype(Format f) {
  switch (f) {
  case Format::BF16:
    return "bf16";
  case Format::FP16:
    return "f16";
  case Format::FP32:
    return "f32";
  default:
    return "u8";
  }
}

/// What the codes of a raw-byte (u8) buffer are, so that the runtime can
/// refuse a typed tensor of another 8-bit format (fp8_e5m2 handed to an
/// fp8_e4m3 buffer) while still taking a uint8 view of the same bytes
/// (kernel-abi.md, "element"). Empty where the buffer has a typed dtype.
static std::string elementName(Format f) {
  switch (f) {
  case Format::MXFP4:
    return "fp4_e2m1_x2";
  case Format::MXFP8_E4M3:
  case Format::FP8_E4M3:
    return "fp8_e4m3";
  case Format::MXFP8_E5M2:
  case Format::FP8_E5M2:
    return "fp8_e5m2";
  default:
    return "";
  }
}

/// The element of a block-scale buffer: e8m0 exponents for the MX formats;
/// the FP8 1x128 scales are typed f32.
static std::string scaleElementName(Format f) {
  return isMXFormat(f) ? "e8m0" : "";
}

/// Bytes of a row of `n` elements: e2m1 packs two codes per byte.
static std::string rowBytes(Format f, const std::string &n) {
  if (f != Format::MXFP4)
    return n;
  // K is a multiple of the block (a constraint), so K/2 is exact; a col row
  // of M (or C) elements may be odd.
  return n == "K" ? "K/2" : "cdiv(" + n + ",2)";
}

static std::string str(int64_t v) { return std::to_string(v); }

/// The padded column capacity C of a ragged col output (kernel-abi.md): the
/// bound M + G*(P-1) on the groups' padded columns, rounded up to a multiple
/// of 128 so that every data row starts 16-byte aligned (whole-vector stores
/// in the kernel, TMA-legal strides for the GEMM that reads it).
static std::string raggedCapacity(const RaggedSpec &r) {
  return r.padGroupsTo == 1 ? "M"
                            : "rup(M+G*" + str(r.padGroupsTo - 1) + ",128)";
}

namespace {
/// Constraints, one per (expr, value), with the reasons merged.
struct Constraints {
  ojson list = ojson::array();
  void multipleOf(int64_t m, const std::string &why) {
    if (m <= 1)
      return;
    for (ojson &c : list)
      if (c.contains("multiple_of") && c["multiple_of"] == m) {
        c["why"] = c["why"].get<std::string>() + "; " + why;
        return;
      }
    list.push_back({{"expr", "K"}, {"multiple_of", m}, {"why", why}});
  }
};
} // namespace

std::string qct::emitMetadata(const KernelPlan &plan, const KernelSpec &spec) {
  ojson j;
  j["format_version"] = 1;
  j["name"] = plan.name;
  j["entry"] = "qct_" + plan.name;
  j["cuda_source"] = plan.name + ".cu";
  j["spec_hash"] =
      plan.specHash.empty() ? computeSpecHash(spec) : plan.specHash;
  j["compiler_version"] = QCT_VERSION_STRING;
  j["kernel_args_version"] = 1; // QCT_KERNEL_ARGS_VERSION
  j["device_headers"] = ojson::array({kDeviceHeader});
  j["spec"] = ojson::parse(toJson(spec).dump());

  // Constraints: the device library reads the source as 16-byte vectors and
  // never splits a block across threads.
  const std::string src = formatName(plan.source).str();
  Constraints cons;
  int vec = vecElements(plan.source);
  cons.multipleOf(vec, "16-byte vectors of " + src);
  if (isQuantizedFormat(plan.source))
    cons.multipleOf(formatBlockSize(plan.source),
                    "source " + src + " blocks of " +
                        str(formatBlockSize(plan.source)));
  for (size_t i = 0; i < plan.outputs.size(); ++i) {
    const OutputPlan &out = plan.outputs[i];
    // Col outputs block along M, which needs no constraint (partial blocks).
    if (out.layout == Layout::Row && out.block)
      cons.multipleOf(out.block, "outputs[" + str(i) + "] row blocks of " +
                                     str(out.block));
  }
  ojson constraints = cons.list;
  if (plan.staticK)
    constraints.push_back(
        {{"expr", "K"}, {"equals", *plan.staticK}, {"why", "static.K"}});
  j["constraints"] = constraints;

  // Buffers.
  ojson buffers = ojson::array();
  auto buffer = [&](const std::string &name, const std::string &field,
                    const char *dir, const std::string &dtype,
                    const std::string &element,
                    std::vector<std::string> shape, int output = -1) {
    ojson b = {{"name", name},
               {"field", field},
               {"dir", dir},
               {"dtype", dtype},
               {"shape", shape}};
    if (!element.empty())
      b["element"] = element;
    if (output >= 0)
      b["output"] = output;
    buffers.push_back(std::move(b));
  };
  std::string offsetsDtype;
  if (plan.ragged)
    offsetsDtype = plan.ragged->offsetsType == OffsetsType::I64 ? "i64" : "i32";

  buffer("src", "src", "in", elementDtype(plan.source),
         elementName(plan.source), {"M", rowBytes(plan.source, "K")});
  if (isQuantizedFormat(plan.source)) {
    int b = formatBlockSize(plan.source);
    std::string dtype = isMXFormat(plan.source) ? "u8" : "f32";
    if (plan.sourceScaleLayout == ScaleLayout::RowMajor)
      buffer("src_scales", "src_scales", "in", dtype,
             scaleElementName(plan.source), {"M", "K/" + str(b)});
    else
      buffer("src_scales", "src_scales", "in", dtype,
             scaleElementName(plan.source), {"K/" + str(b), "rup(M,4)"});
  }
  if (plan.ragged)
    buffer("offsets", "offsets", "in", offsetsDtype, "", {"G+1"});

  for (size_t i = 0; i < plan.outputs.size(); ++i) {
    const OutputPlan &out = plan.outputs[i];
    int idx = static_cast<int>(i);
    std::string b = str(out.block);
    std::vector<std::string> data, scales;
    if (out.layout == Layout::Row) {
      data = {"M", rowBytes(out.format, "K")};
      if (out.block)
        scales = out.scaleLayout == ScaleLayout::RowMajor
                     ? std::vector<std::string>{"M", "K/" + b}
                     : std::vector<std::string>{"K/" + b, "rup(M,4)"};
    } else {
      // Ragged col outputs are sized by capacity: the host never reads the
      // offsets (kernel-abi.md).
      std::string cols = plan.ragged ? raggedCapacity(*plan.ragged) : "M";
      data = {"K", rowBytes(out.format, cols)};
      std::string s = plan.ragged ? "cdiv(" + cols + "," + b + ")+G"
                                  : "cdiv(" + cols + "," + b + ")";
      if (out.block)
        scales = out.scaleLayout == ScaleLayout::RowMajor
                     ? std::vector<std::string>{"K", s}
                     : std::vector<std::string>{s, "rup(K,4)"};
    }
    buffer(out.name, "out[" + str(i) + "]", "out", elementDtype(out.format),
           elementName(out.format), data, idx);
    if (out.block)
      buffer(out.name + "_scales", "out_scales[" + str(i) + "]", "out",
             isMXFormat(out.format) ? "u8" : "f32",
             scaleElementName(out.format), scales, idx);
  }
  if (plan.ragged && plan.ragged->writePaddedOffsets)
    buffer("padded_offsets", "padded_offsets", "out", offsetsDtype, "",
           {"G+1"});
  j["buffers"] = buffers;
  // Only ragged kernels check anything (bad offsets).
  j["error_flag"] = plan.ragged.has_value();

  ojson knobs = ojson::array();
  for (const Knob &k : plan.knobs)
    knobs.push_back(
        {{"name", k.name}, {"values", k.values}, {"default", k.defaultValue}});
  j["schedule"] = {{"knobs", knobs}, {"passed_as", "-D<name>=<value>"}};
  // Only kernels with rules carry the key (the others' metadata is as before).
  if (!plan.rules.empty()) {
    ojson rules = ojson::array();
    for (const KnobRule &r : plan.rules)
      rules.push_back({{"if", {{r.ifName, r.ifValue}}},
                       {"then", {{r.thenName, r.thenValues}}}});
    j["schedule"]["rules"] = rules;
  }

  // Launch geometry, docs/device-library.md "The two families".
  ojson launch;
  launch["block"] = {"QCT_THREADS", "1", "1"};
  if (plan.family == KernelFamily::Row) {
    launch["grid"] = {
        "max(cdiv(M*K," + str(vec) + "*QCT_THREADS*QCT_UNROLL),1)", "1", "1"};
    launch["dynamic_smem_bytes"] = "0";
  } else {
    std::string rowb, scb;
    switch (plan.source) {
    case Format::BF16:
    case Format::FP16:
      rowb = "2*QCT_TILE_K";
      break;
    case Format::FP32:
      rowb = "4*QCT_TILE_K";
      break;
    case Format::MXFP4: // twice the raw row: the aligned fp8 column pass
                        // (col_pass.cuh) transposes fp8 bytes through it
    case Format::MXFP8_E4M3:
    case Format::MXFP8_E5M2:
      rowb = "QCT_TILE_K";
      scb = "4*QCT_TILE_K";
      break;
    case Format::FP8_E4M3:
    case Format::FP8_E5M2:
      rowb = "QCT_TILE_K";
      scb = "512";
      break;
    }
    std::string smem =
        "QCT_TILE_M*(" + rowb + "+16)" + (scb.empty() ? "" : "+" + scb);
    // A dense CTA owns QCT_M_TILES consecutive 128-token tiles; at
    // QCT_TILE_M 64 two CTAs share each (one half each). The grid is whole
    // clusters of QCT_CLUSTER_M CTAs along x.
    std::string gridX =
        "rup(cdiv(M,128*QCT_M_TILES)*(128/QCT_TILE_M),QCT_CLUSTER_M)";
    // A ragged CTA takes tile x of the groups' tiles, sum ceil(np_g / 128)
    // over the padded group sizes np_g: at most cdiv(C,128) + G (C the
    // capacity columns; a partial tile per group), and when the padding P
    // is a multiple of 128 exactly p[G] / 128 <= cdiv(C,128). A kernel that
    // zeroes the capacity tail also needs CTAs for all cdiv(C,128) + G
    // scale columns; one that leaves it untouched only for the groups' tiles:
    // the others would only scan the offsets and exit (at 256 groups a third
    // of the grid, docs/performance.md).
    if (plan.ragged) {
      bool tilesOnly =
          !plan.ragged->zeroCapacityTail && plan.ragged->padGroupsTo % 128 == 0;
      gridX = "rup((cdiv(" + raggedCapacity(*plan.ragged) + ",128)" +
              (tilesOnly ? "" : "+G") + ")*(128/QCT_TILE_M),QCT_CLUSTER_M)";
    }
    // Rows along y: spans of QCT_K_TILES tiles (raster.cuh, k_span_rows);
    // with QCT_SPLIT_LAST_SPAN 1 the last span's tiles one row each (min:
    // no rows without tiles, K = 0).
    std::string gridY = "cdiv(K,QCT_TILE_K*QCT_K_TILES)";
    if (plan.hasKnob("QCT_SPLIT_LAST_SPAN"))
      gridY += "+QCT_SPLIT_LAST_SPAN*min(cdiv(K,QCT_TILE_K)-QCT_K_TILES*(" +
               gridY + "-1)-1,cdiv(K,QCT_TILE_K))";
    launch["grid"] = {gridX, gridY, "1"};
    launch["dynamic_smem_bytes"] = smem;
  }
  j["launch"] = launch;
  return j.dump(2) + "\n";
}
