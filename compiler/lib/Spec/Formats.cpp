//===- Formats.cpp - Names and properties of spec formats and policies ----===//

#include "qct/Spec/Formats.h"

#include "llvm/ADT/StringSwitch.h"

using namespace qct;

llvm::StringRef qct::formatName(Format format) {
  switch (format) {
  case Format::BF16:
    return "bf16";
  case Format::FP16:
    return "fp16";
  case Format::FP32:
    return "fp32";
  case Format::MXFP4:
    return "mxfp4";
  case Format::MXFP8_E4M3:
    return "mxfp8_e4m3";
  case Format::MXFP8_E5M2:
    return "mxfp8_e5m2";
  case Format::FP8_E4M3:
    return "fp8_e4m3";
  case Format::FP8_E5M2:
    return "fp8_e5m2";
  }
  llvm_unreachable("unknown Format");
}

llvm::StringRef qct::layoutName(Layout layout) {
  return layout == Layout::Row ? "row" : "col";
}

llvm::StringRef qct::scalePolicyName(ScalePolicy policy) {
  switch (policy) {
  case ScalePolicy::None:
    return "none";
  case ScalePolicy::Floor:
    return "floor";
  case ScalePolicy::Rceil:
    return "rceil";
  case ScalePolicy::Amax:
    return "amax";
  case ScalePolicy::Pow2:
    return "pow2";
  case ScalePolicy::Aligned:
    return "aligned";
  }
  llvm_unreachable("unknown ScalePolicy");
}

llvm::StringRef qct::scaleLayoutName(ScaleLayout layout) {
  return layout == ScaleLayout::RowMajor ? "row_major" : "mn_major";
}

llvm::StringRef qct::offsetsTypeName(OffsetsType type) {
  return type == OffsetsType::I32 ? "int32" : "int64";
}

std::optional<Format> qct::parseFormat(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<Format>>(name)
      .Case("bf16", Format::BF16)
      .Case("fp16", Format::FP16)
      .Case("fp32", Format::FP32)
      .Case("mxfp4", Format::MXFP4)
      .Case("mxfp8_e4m3", Format::MXFP8_E4M3)
      .Case("mxfp8_e5m2", Format::MXFP8_E5M2)
      .Case("fp8_e4m3", Format::FP8_E4M3)
      .Case("fp8_e5m2", Format::FP8_E5M2)
      .Default(std::nullopt);
}

std::optional<Layout> qct::parseLayout(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<Layout>>(name)
      .Case("row", Layout::Row)
      .Case("col", Layout::Col)
      .Default(std::nullopt);
}

std::optional<ScalePolicy> qct::parseScalePolicy(llvm::StringRef name) {
  // "none" is deliberately not accepted: a missing scale is written `null`.
  return llvm::StringSwitch<std::optional<ScalePolicy>>(name)
      .Case("floor", ScalePolicy::Floor)
      .Case("rceil", ScalePolicy::Rceil)
      .Case("amax", ScalePolicy::Amax)
      .Case("pow2", ScalePolicy::Pow2)
      .Case("aligned", ScalePolicy::Aligned)
      .Default(std::nullopt);
}

std::optional<ScaleLayout> qct::parseScaleLayout(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<ScaleLayout>>(name)
      .Case("row_major", ScaleLayout::RowMajor)
      .Case("mn_major", ScaleLayout::MnMajor)
      .Default(std::nullopt);
}

std::optional<OffsetsType> qct::parseOffsetsType(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<OffsetsType>>(name)
      .Case("int32", OffsetsType::I32)
      .Case("int64", OffsetsType::I64)
      .Default(std::nullopt);
}

bool qct::isMXFormat(Format format) {
  return format == Format::MXFP4 || format == Format::MXFP8_E4M3 ||
         format == Format::MXFP8_E5M2;
}

bool qct::isFP8BlockFormat(Format format) {
  return format == Format::FP8_E4M3 || format == Format::FP8_E5M2;
}

int qct::formatBlockSize(Format format) {
  if (isMXFormat(format))
    return 32;
  if (isFP8BlockFormat(format))
    return 128;
  return 0;
}
