//===- SpecJson.cpp - The canonical JSON form of a normalized spec --------===//

#include "qct/Spec/SpecJson.h"
#include "qct/Spec/Formats.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/SHA256.h"

using namespace qct;
using nlohmann::json;

nlohmann::json qct::toJson(const KernelSpec &spec) {
  json j = json::object();
  j["name"] = spec.name;
  j["description"] = spec.description;

  json source = json::object();
  source["format"] = formatName(spec.source.format).str();
  source["scales"] = nullptr;
  if (isQuantizedFormat(spec.source.format))
    source["scales"] = {
        {"layout", scaleLayoutName(spec.source.scaleLayout).str()}};
  source["policy"] = nullptr;
  if (spec.source.scalePolicy != ScalePolicy::None)
    source["policy"] = scalePolicyName(spec.source.scalePolicy).str();
  j["source"] = std::move(source);

  json outputs = json::array();
  for (const OutputSpec &out : spec.outputs) {
    json o = json::object();
    o["name"] = out.name;
    o["format"] = formatName(out.format).str();
    o["layout"] = layoutName(out.layout).str();
    // A bf16 output has no block, scale or scale layout: `null`, so every
    // output has the same keys and a reader can index without checking.
    bool scaled = out.scale != ScalePolicy::None;
    o["block"] = scaled ? json(out.block) : json(nullptr);
    o["scale"] =
        scaled ? json(scalePolicyName(out.scale).str()) : json(nullptr);
    o["scale_layout"] =
        scaled ? json(scaleLayoutName(out.scaleLayout).str()) : json(nullptr);
    outputs.push_back(std::move(o));
  }
  j["outputs"] = std::move(outputs);

  j["ragged"] = nullptr;
  if (spec.ragged)
    j["ragged"] = {
        {"offsets_dtype", offsetsTypeName(spec.ragged->offsetsType).str()},
        {"pad_groups_to", spec.ragged->padGroupsTo},
        {"write_padded_offsets", spec.ragged->writePaddedOffsets},
        {"capacity_tail",
         spec.ragged->zeroCapacityTail ? "zero" : "untouched"}};
  j["static"] = nullptr;
  if (spec.staticK)
    j["static"] = {{"K", *spec.staticK}};
  j["fuse"] = spec.fuse;
  return j;
}

std::string qct::canonicalSpecJson(const KernelSpec &spec) {
  // nlohmann's default object is a std::map, so dump() sorts keys; -1 indent
  // means no whitespace at all. Strings were validated as UTF-8 on input.
  return toJson(spec).dump();
}

std::string qct::computeSpecHash(const KernelSpec &spec) {
  std::array<uint8_t, 32> digest =
      llvm::SHA256::hash(llvm::arrayRefFromStringRef(canonicalSpecJson(spec)));
  return llvm::toHex(digest, /*LowerCase=*/true);
}
