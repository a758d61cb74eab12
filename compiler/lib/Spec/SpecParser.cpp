//===- SpecParser.cpp - Parse and validate a spec into a KernelSpec -------===//
//
// Validation follows numerics.md: a spec is accepted exactly when the
// contract defines every output it asks for. The checks are written so that
// one bad field does not hide the others (each field is checked on its own,
// and cross-field checks run only on fields that were valid), because the
// user should see every problem of a spec in one run.
//
//===----------------------------------------------------------------------===//

#include "qct/Spec/SpecParser.h"
#include "qct/Spec/Formats.h"
#include "qct/Spec/JsonLocator.h"
#include "qct/Spec/SpecJson.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/MemoryBuffer.h"

#include <nlohmann/json.hpp>

#include <numeric>

using namespace qct;
using llvm::ArrayRef;
using llvm::StringRef;
using nlohmann::json;

namespace {

constexpr StringRef kTopKeys[] = {"name",   "description", "source", "outputs",
                                  "ragged", "static",      "fuse"};
constexpr StringRef kSourceKeys[] = {"format", "scales", "policy"};
constexpr StringRef kSourceScalesKeys[] = {"layout"};
constexpr StringRef kOutputKeys[] = {"name",  "format", "layout",
                                     "block", "scale",  "scale_layout"};
constexpr StringRef kRaggedKeys[] = {"offsets_dtype", "pad_groups_to",
                                     "write_padded_offsets", "capacity_tail"};
constexpr StringRef kCapacityTails[] = {"zero", "untouched"};
constexpr StringRef kStaticKeys[] = {"K"};

constexpr StringRef kSourceFormats[] = {"bf16",     "fp16",       "fp32",
                                        "mxfp4",    "mxfp8_e4m3", "mxfp8_e5m2",
                                        "fp8_e4m3", "fp8_e5m2"};
constexpr StringRef kOutputFormats[] = {"mxfp4",    "mxfp8_e4m3", "mxfp8_e5m2",
                                        "fp8_e4m3", "fp8_e5m2",   "bf16"};
constexpr StringRef kLayouts[] = {"row", "col"};
constexpr StringRef kMXScales[] = {"floor", "rceil"};
constexpr StringRef kFP8ScalesFromMX[] = {"amax", "pow2", "aligned"};
constexpr StringRef kFP8Scales[] = {"amax", "pow2"};
constexpr StringRef kScaleLayouts[] = {"row_major", "mn_major"};
constexpr StringRef kSourceScaleLayouts[] = {"row_major"};
constexpr StringRef kOffsetsTypes[] = {"int32", "int64"};

/// Buffer names the kernel ABI already uses (docs/kernel-abi.md): an output
/// with one of these names would collide with them in the metadata.
constexpr StringRef kReservedNames[] = {"src", "src_scales", "offsets",
                                        "padded_offsets", "error_flag"};

constexpr int64_t kMaxPadGroupsTo = int64_t(1) << 30;
constexpr int64_t kMaxStaticK = (int64_t(1) << 31) - 1;

bool isIdentifier(StringRef s) {
  if (s.empty() || !(llvm::isAlpha(s[0]) || s[0] == '_'))
    return false;
  return llvm::all_of(s, [](char c) { return llvm::isAlnum(c) || c == '_'; });
}

/// How a found value is shown: strings quoted and cut short, numbers as
/// written, containers by kind.
std::string describe(const json &v) {
  switch (v.type()) {
  case json::value_t::null:
    return "null";
  case json::value_t::boolean:
    return v.get<bool>() ? "true" : "false";
  case json::value_t::string: {
    std::string s = v.dump();
    if (s.size() > 50)
      s = s.substr(0, 46) + "...\"";
    return s;
  }
  case json::value_t::number_integer:
  case json::value_t::number_unsigned:
  case json::value_t::number_float:
    return v.dump();
  case json::value_t::array:
    return "an array";
  case json::value_t::object:
    return "an object";
  default:
    return "an unsupported value";
  }
}

std::string joinNames(ArrayRef<StringRef> names) {
  return llvm::join(names.begin(), names.end(), ", ");
}

/// Whether `a` becomes `b` by swapping two adjacent characters ("fromat").
bool isTransposition(StringRef a, StringRef b) {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i + 1 < a.size(); ++i)
    if (a[i] != b[i])
      return a[i] == b[i + 1] && a[i + 1] == b[i] &&
             a.substr(i + 2) == b.substr(i + 2);
  return false;
}

/// The closest of `candidates` to `word`, if it is close enough to be a
/// plausible typo: a case difference, one swap of neighbours, or about one
/// edit per five letters (looser limits suggest unrelated names, such as
/// "row_major" for "col_major").
std::optional<StringRef> closest(StringRef word,
                                 ArrayRef<StringRef> candidates) {
  std::optional<StringRef> best;
  unsigned bestDistance = ~0u;
  for (StringRef c : candidates) {
    if (word.equals_insensitive(c) || isTransposition(word, c))
      return c;
    unsigned d = word.edit_distance(c, /*AllowReplacements=*/true);
    unsigned limit = c.size() / 5;
    if (d <= limit && d < bestDistance) {
      best = c;
      bestDistance = d;
    }
  }
  return best;
}

/// Every enum spelling of the language: a found value that is one of these
/// is a real term used in the wrong place, so no "did you mean" for it.
bool isKnownTerm(StringRef word) {
  return parseFormat(word) || parseLayout(word) || parseScalePolicy(word) ||
         parseScaleLayout(word) || parseOffsetsType(word);
}

std::string didYouMean(StringRef word, ArrayRef<StringRef> candidates) {
  if (auto c = closest(word, candidates))
    return (" (did you mean \"" + *c + "\"?)").str();
  return "";
}

/// Returns the member `key` of `obj`, treating `null` as absent: every
/// optional field may be written `null`, which is how the canonical form
/// spells "does not apply".
const json *member(const json &obj, StringRef key) {
  auto it = obj.find(key.str());
  if (it == obj.end() || it->is_null())
    return nullptr;
  return &*it;
}

class Validator {
public:
  Validator(StringRef file, const JsonLocator &locator, DiagnosticSink &sink)
      : file(file), locator(locator), sink(sink) {}

  KernelSpec run(const json &root);
  unsigned errors() const { return numErrors; }

  /// Reports the errors found, in file order (they are found section by
  /// section, but read best top to bottom).
  void flush() {
    std::stable_sort(
        pending.begin(), pending.end(),
        [](const auto &a, const auto &b) { return a.first < b.first; });
    for (auto &entry : pending)
      sink.report(std::move(entry.second));
    pending.clear();
  }

private:
  StringRef file;
  const JsonLocator &locator;
  DiagnosticSink &sink;
  unsigned numErrors = 0;
  std::vector<std::pair<size_t, Diagnostic>> pending;

  // Facts established so far, for the cross-field checks.
  std::optional<Format> sourceFormat;
  bool fuseKnown = false;

  struct OutputInfo {
    std::string path;
    OutputSpec spec;
    bool formatOk = false;
    bool layoutOk = false;
  };

  // --- Reporting -------------------------------------------------------

  void errorAtOffset(size_t offset, const llvm::Twine &message) {
    Diagnostic d;
    d.severity = DiagSeverity::Error;
    d.file = file.str();
    d.loc = locator.location(offset);
    d.sourceLine = locator.lineText(d.loc.line).str();
    d.message = message.str();
    ++numErrors;
    pending.emplace_back(offset, std::move(d));
  }

  /// The offset of the value at `path`, or of its key, or of the nearest
  /// ancestor that has one.
  size_t offsetOf(StringRef path, bool preferKey) const {
    for (StringRef p = path;; p = parentPath(p)) {
      std::optional<size_t> key = locator.keyOffset(p);
      std::optional<size_t> value = locator.valueOffset(p);
      if (preferKey && key)
        return *key;
      if (value)
        return *value;
      if (key)
        return *key;
      if (p.empty())
        return 0;
    }
  }

  static StringRef parentPath(StringRef path) {
    size_t cut = path.find_last_of(".[");
    return cut == StringRef::npos ? StringRef() : path.take_front(cut);
  }

  static std::string prefixed(StringRef path, const llvm::Twine &rest) {
    if (path.empty())
      return rest.str();
    return (path + ": " + rest).str();
  }

  /// An error about the value at `path`.
  void error(StringRef path, const llvm::Twine &rest) {
    errorAtOffset(offsetOf(path, /*preferKey=*/false), prefixed(path, rest));
  }
  /// An error about the key at `path` (unknown or duplicate keys).
  void errorAtKey(StringRef path, const llvm::Twine &rest) {
    errorAtOffset(offsetOf(path, /*preferKey=*/true), prefixed(path, rest));
  }
  /// A required key is missing: point at the object that lacks it.
  /// (A required key written `null` is reported at its value instead.)
  void errorMissing(StringRef objPath, StringRef key, const llvm::Twine &rest) {
    std::string path = jsonChildPath(objPath, key);
    if (std::optional<size_t> value = locator.valueOffset(path))
      errorAtOffset(*value, prefixed(path, "found null, " + rest));
    else
      errorAtOffset(offsetOf(objPath, /*preferKey=*/false),
                    prefixed(path, "missing, " + rest));
  }

  // --- Typed accessors -------------------------------------------------

  /// Reports every key of `obj` that is not in `allowed`, in file order.
  void checkKeys(const json &obj, StringRef path, ArrayRef<StringRef> allowed) {
    std::vector<std::pair<size_t, std::string>> unknown;
    for (auto it = obj.begin(); it != obj.end(); ++it)
      if (!llvm::is_contained(allowed, StringRef(it.key())))
        unknown.emplace_back(offsetOf(jsonChildPath(path, it.key()), true),
                             it.key());
    llvm::sort(unknown);
    for (auto &[offset, key] : unknown)
      errorAtOffset(offset, prefixed(path.empty() ? StringRef("spec") : path,
                                     "found unknown key " + json(key).dump() +
                                         didYouMean(key, allowed) +
                                         ", allowed: " + joinNames(allowed)));
  }

  bool expectObject(const json &v, StringRef path, StringRef what) {
    if (v.is_object())
      return true;
    error(path, "found " + describe(v) + ", allowed: " + what);
    return false;
  }

  /// A string among `allowed`; reports what was found otherwise. `context`
  /// says whose list it is ("for fp8_e4m3"), `why` explains a restriction.
  std::optional<std::string> oneOf(const json &v, StringRef path,
                                   ArrayRef<StringRef> allowed,
                                   StringRef context = "", StringRef why = "") {
    if (v.is_string() && llvm::is_contained(allowed, v.get<std::string>()))
      return v.get<std::string>();
    std::string hint = v.is_string() && !isKnownTerm(v.get<std::string>())
                           ? didYouMean(v.get<std::string>(), allowed)
                           : std::string();
    std::string ctx = context.empty() ? std::string() : (" " + context).str();
    std::string tail = why.empty() ? std::string() : (" (" + why + ")").str();
    error(path, "found " + describe(v) + hint + ", allowed" + ctx + ": " +
                    joinNames(allowed) + tail);
    return std::nullopt;
  }

  /// An integer; otherwise reports "found <v>, <allowed>", where `allowed`
  /// is the rest of the message ("allowed for fp8_e4m3: 128").
  std::optional<int64_t> integer(const json &v, StringRef path,
                                 const llvm::Twine &allowed) {
    if (v.is_number_integer()) {
      // nlohmann stores non-negative literals as unsigned; keep them in
      // int64 range so the arithmetic below cannot wrap.
      if (v.is_number_unsigned() &&
          v.get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max())) {
        error(path, "found " + describe(v) + ", " + allowed);
        return std::nullopt;
      }
      return v.get<int64_t>();
    }
    error(path, "found " + describe(v) + ", " + allowed);
    return std::nullopt;
  }

  std::optional<bool> boolean(const json &v, StringRef path) {
    if (v.is_boolean())
      return v.get<bool>();
    error(path, "found " + describe(v) + ", allowed: true, false");
    return std::nullopt;
  }

  // --- Sections ----------------------------------------------------------

  void parseSource(const json &root, KernelSpec &spec);
  void parseOutput(const json &v, size_t index, OutputInfo &info);
  void parseRagged(const json &v, KernelSpec &spec,
                   ArrayRef<OutputInfo> outputs);
  void parseStatic(const json &v, KernelSpec &spec,
                   ArrayRef<OutputInfo> outputs);
};

void Validator::parseSource(const json &root, KernelSpec &spec) {
  const json *source = member(root, "source");
  if (!source) {
    errorMissing("", "source",
                 "allowed: an object with \"format\" (one of " +
                     joinNames(kSourceFormats) + ")");
    return;
  }
  if (!expectObject(*source, "source", "an object with \"format\""))
    return;
  checkKeys(*source, "source", kSourceKeys);

  const json *format = member(*source, "format");
  if (!format)
    errorMissing("source", "format", "allowed: " + joinNames(kSourceFormats));
  else if (auto name = oneOf(*format, "source.format", kSourceFormats))
    spec.source.format = *(sourceFormat = parseFormat(*name));

  const json *scales = member(*source, "scales");
  if (scales && sourceFormat && !isQuantizedFormat(*sourceFormat)) {
    error("source.scales",
          "found " + describe(*scales) + ", allowed for source " +
              formatName(*sourceFormat) + ": nothing (" +
              formatName(*sourceFormat) + " has no block scales)");
  } else if (scales && expectObject(*scales, "source.scales",
                                    "an object {\"layout\": \"row_major\"}")) {
    checkKeys(*scales, "source.scales", kSourceScalesKeys);
    if (const json *layout = member(*scales, "layout"))
      if (auto name =
              oneOf(*layout, "source.scales.layout", kSourceScaleLayouts, "",
                    "sources with mn_major scales are not supported yet"))
        spec.source.scaleLayout = *parseScaleLayout(*name);
  }

  const json *policy = member(*source, "policy");
  if (sourceFormat && isFP8BlockFormat(*sourceFormat)) {
    // No default: whether the source scales are powers of two decides which
    // conversions are exact bit manipulations, so the user must say it.
    if (!policy)
      errorMissing("source", "policy",
                   "allowed for source " + formatName(*sourceFormat) +
                       ": amax, pow2 (how its 1x128 scales were made; "
                       "there is no default)");
    else if (auto name =
                 oneOf(*policy, "source.policy", kFP8Scales,
                       ("for source " + formatName(*sourceFormat)).str()))
      spec.source.scalePolicy = *parseScalePolicy(*name);
  } else if (policy && sourceFormat) {
    error("source.policy", "found " + describe(*policy) +
                               ", allowed for source " +
                               formatName(*sourceFormat) +
                               ": nothing (only fp8_e4m3 and fp8_e5m2 "
                               "sources have a scale policy)");
  }
}

void Validator::parseOutput(const json &v, size_t index, OutputInfo &info) {
  std::string path = jsonElementPath("outputs", index);
  info.path = path;
  if (!expectObject(v, path, "an object with \"name\", \"format\", \"layout\""))
    return;
  checkKeys(v, path, kOutputKeys);
  OutputSpec &out = info.spec;

  if (const json *name = member(v, "name")) {
    if (!name->is_string() || !isIdentifier(name->get<std::string>()))
      error(jsonChildPath(path, "name"),
            "found " + describe(*name) +
                ", allowed: a C identifier ([A-Za-z_][A-Za-z0-9_]*)");
    else if (llvm::is_contained(kReservedNames, name->get<std::string>()))
      error(jsonChildPath(path, "name"),
            "found " + describe(*name) +
                ", allowed: a name other than the kernel ABI's own buffers (" +
                joinNames(kReservedNames) + ")");
    else
      out.name = name->get<std::string>();
  } else {
    errorMissing(path, "name", "allowed: a C identifier");
  }

  if (const json *format = member(v, "format")) {
    if (auto name =
            oneOf(*format, jsonChildPath(path, "format"), kOutputFormats)) {
      out.format = *parseFormat(*name);
      info.formatOk = true;
    }
  } else {
    errorMissing(path, "format", "allowed: " + joinNames(kOutputFormats));
  }

  if (const json *layout = member(v, "layout")) {
    if (auto name = oneOf(*layout, jsonChildPath(path, "layout"), kLayouts)) {
      out.layout = *parseLayout(*name);
      info.layoutOk = true;
    }
  } else {
    errorMissing(path, "layout",
                 "allowed: row (blocks along K), col (the transpose, blocks "
                 "along M)");
  }

  if (!info.formatOk)
    return; // block and scale are checked against the format
  std::string fmt = formatName(out.format).str();
  const json *block = member(v, "block");
  const json *scale = member(v, "scale");
  const json *scaleLayout = member(v, "scale_layout");

  if (out.format == Format::BF16) {
    // A decoded bf16 output is plain data: nothing to block or scale.
    for (auto [key, value] :
         {std::pair{"block", block}, std::pair{"scale", scale},
          std::pair{"scale_layout", scaleLayout}})
      if (value)
        error(jsonChildPath(path, key),
              "found " + describe(*value) +
                  ", allowed for bf16: nothing or null (a bf16 output has no "
                  "block scales)");
    out.block = 0;
    out.scale = ScalePolicy::None;
    out.scaleLayout = ScaleLayout::RowMajor;
    return;
  }

  int expectedBlock = formatBlockSize(out.format);
  out.block = expectedBlock;
  if (block) {
    std::optional<int64_t> b =
        integer(*block, jsonChildPath(path, "block"),
                "allowed for " + fmt + ": " + llvm::Twine(expectedBlock));
    if (b && *b != expectedBlock)
      error(jsonChildPath(path, "block"), "found " + describe(*block) +
                                              ", allowed for " + fmt + ": " +
                                              llvm::Twine(expectedBlock));
  }

  std::string scalePath = jsonChildPath(path, "scale");
  if (isMXFormat(out.format)) {
    out.scale = ScalePolicy::Floor; // OCP MX v1.0, numerics.md 3.4
    if (scale)
      if (auto name = oneOf(*scale, scalePath, kMXScales, "for " + fmt))
        out.scale = *parseScalePolicy(*name);
  } else {
    bool mxSource = sourceFormat && isMXFormat(*sourceFormat);
    ArrayRef<StringRef> allowed = sourceFormat && !mxSource
                                      ? ArrayRef<StringRef>(kFP8Scales)
                                      : ArrayRef<StringRef>(kFP8ScalesFromMX);
    std::string context = sourceFormat ? "for " + fmt + " from source " +
                                             formatName(*sourceFormat).str()
                                       : "for " + fmt;
    StringRef why = sourceFormat && !mxSource && scale && scale->is_string() &&
                            scale->get<std::string>() == "aligned"
                        ? "aligned derives the scale from MX source scales"
                        : "";
    if (!scale) {
      // No default: amax and pow2 give different bits for almost every
      // input, and neither is what every recipe uses.
      errorMissing(path, "scale",
                   "allowed " + context + ": " + joinNames(allowed) +
                       " (fp8 outputs have no default scale policy)");
    } else if (auto name = oneOf(*scale, scalePath, allowed, context, why)) {
      out.scale = *parseScalePolicy(*name);
    }
  }

  if (scaleLayout)
    if (auto name = oneOf(*scaleLayout, jsonChildPath(path, "scale_layout"),
                          kScaleLayouts))
      out.scaleLayout = *parseScaleLayout(*name);
}

void Validator::parseRagged(const json &v, KernelSpec &spec,
                            ArrayRef<OutputInfo> outputs) {
  if (!expectObject(v, "ragged", "an object with \"offsets_dtype\""))
    return;
  checkKeys(v, "ragged", kRaggedKeys);
  RaggedSpec ragged;
  bool ok = true;
  if (const json *dtype = member(v, "offsets_dtype")) {
    if (auto name = oneOf(*dtype, "ragged.offsets_dtype", kOffsetsTypes))
      ragged.offsetsType = *parseOffsetsType(*name);
    else
      ok = false;
  } else {
    // No default: it must match the caller's offsets tensor.
    errorMissing("ragged", "offsets_dtype",
                 "allowed: int32, int64 (the dtype of the offsets tensor)");
    ok = false;
  }
  if (const json *pad = member(v, "pad_groups_to")) {
    std::string allowed =
        "allowed: an integer from 1 to " + std::to_string(kMaxPadGroupsTo);
    std::optional<int64_t> p = integer(*pad, "ragged.pad_groups_to", allowed);
    if (p && (*p < 1 || *p > kMaxPadGroupsTo)) {
      error("ragged.pad_groups_to", "found " + describe(*pad) + ", " + allowed);
      p.reset();
    }
    if (p)
      ragged.padGroupsTo = *p;
    else
      ok = false;
  }
  if (const json *write = member(v, "write_padded_offsets")) {
    if (auto b = boolean(*write, "ragged.write_padded_offsets"))
      ragged.writePaddedOffsets = *b;
    else
      ok = false;
  }
  if (const json *tail = member(v, "capacity_tail")) {
    if (auto name = oneOf(*tail, "ragged.capacity_tail", kCapacityTails))
      ragged.zeroCapacityTail = *name == "zero";
    else
      ok = false;
  }

  // Row outputs do not depend on the groups (numerics.md 6), so ragged
  // without a col output would take an offsets tensor and ignore it: almost
  // certainly a mistake in the spec, so it is an error, not a no-op.
  bool allLayoutsKnown =
      !outputs.empty() &&
      llvm::all_of(outputs, [](const OutputInfo &o) { return o.layoutOk; });
  bool anyCol = llvm::any_of(outputs, [](const OutputInfo &o) {
    return o.layoutOk && o.spec.layout == Layout::Col;
  });
  if (allLayoutsKnown && !anyCol) {
    errorAtKey("ragged", "found only row outputs, allowed: ragged with at "
                         "least one col output (row outputs do not depend on "
                         "the groups; remove \"ragged\")");
    ok = false;
  }
  if (ok)
    spec.ragged = ragged;
}

void Validator::parseStatic(const json &v, KernelSpec &spec,
                            ArrayRef<OutputInfo> outputs) {
  if (!expectObject(v, "static", "an object {\"K\": <int>}"))
    return;
  checkKeys(v, "static", kStaticKeys);
  const json *kValue = member(v, "K");
  if (!kValue) {
    errorMissing("static", "K", "allowed: a positive integer");
    return;
  }
  std::string range =
      "allowed: an integer from 1 to " + std::to_string(kMaxStaticK);
  std::optional<int64_t> k = integer(*kValue, "static.K", range);
  if (!k)
    return;
  if (*k < 1 || *k > kMaxStaticK) {
    error("static.K", "found " + describe(*kValue) + ", " + range);
    return;
  }

  // K is the block axis of the source and of every row output.
  int64_t multiple = 1;
  std::vector<std::string> reasons;
  if (sourceFormat && isQuantizedFormat(*sourceFormat)) {
    multiple = formatBlockSize(*sourceFormat);
    reasons.push_back(("source " + formatName(*sourceFormat) + " blocks of " +
                       llvm::Twine(multiple))
                          .str());
  }
  for (const OutputInfo &o : outputs) {
    if (!o.formatOk || !o.layoutOk || o.spec.layout != Layout::Row ||
        o.spec.block == 0)
      continue;
    multiple = std::lcm(multiple, int64_t(o.spec.block));
    reasons.push_back((o.path + " " + formatName(o.spec.format) +
                       " row blocks of " + llvm::Twine(o.spec.block))
                          .str());
  }
  if (*k % multiple != 0) {
    error("static.K", "found " + describe(*kValue) +
                          ", allowed: a multiple of " + llvm::Twine(multiple) +
                          " (" + llvm::join(reasons, ", ") + ")");
    return;
  }
  spec.staticK = *k;
}

KernelSpec Validator::run(const json &root) {
  KernelSpec spec;
  for (const JsonLocator::Duplicate &dup : locator.duplicates()) {
    SourceLoc first = locator.location(dup.firstKeyOffset);
    errorAtOffset(dup.keyOffset,
                  dup.path + ": found this key a second time (the first is " +
                      "at line " + llvm::Twine(first.line) + ", column " +
                      llvm::Twine(first.column) + "), allowed: each key once");
  }
  if (!root.is_object()) {
    error("", "found " + describe(root) +
                  " at the top level, allowed: an object with \"name\", "
                  "\"source\" and \"outputs\"");
    return spec;
  }
  checkKeys(root, "", kTopKeys);

  if (const json *name = member(root, "name")) {
    if (!name->is_string() || !isIdentifier(name->get<std::string>()))
      error("name", "found " + describe(*name) +
                        ", allowed: a C identifier ([A-Za-z_][A-Za-z0-9_]*); "
                        "the kernel is named qct_<name>");
    else
      spec.name = name->get<std::string>();
  } else {
    errorMissing("", "name", "allowed: a C identifier");
  }

  if (const json *description = member(root, "description")) {
    if (description->is_string())
      spec.description = description->get<std::string>();
    else
      error("description",
            "found " + describe(*description) + ", allowed: a string");
  }

  parseSource(root, spec);

  if (const json *fuse = member(root, "fuse")) {
    if (auto b = boolean(*fuse, "fuse")) {
      spec.fuse = *b;
      fuseKnown = true;
    }
  } else {
    fuseKnown = true;
  }

  std::vector<OutputInfo> outputs;
  const json *outs = member(root, "outputs");
  if (!outs) {
    errorMissing("", "outputs", "allowed: an array of 1 to 3 outputs");
  } else if (!outs->is_array()) {
    error("outputs",
          "found " + describe(*outs) + ", allowed: an array of 1 to 3 outputs");
  } else {
    if (outs->empty())
      error("outputs", "found 0 outputs, allowed: 1 to 3");
    else if (outs->size() > 3)
      error(jsonElementPath("outputs", 3),
            "found " + llvm::Twine(outs->size()) + " outputs, allowed: 1 to 3");
    outputs.resize(outs->size());
    for (size_t i = 0; i < outs->size(); ++i)
      parseOutput((*outs)[i], i, outputs[i]);
  }

  // Cross-output and output-source checks.
  llvm::StringMap<std::string> namesSeen;
  for (const OutputInfo &o : outputs) {
    if (o.spec.name.empty())
      continue;
    auto [it, inserted] = namesSeen.try_emplace(o.spec.name, o.path);
    if (!inserted)
      error(jsonChildPath(o.path, "name"),
            "found " + json(o.spec.name).dump() + ", already the name of " +
                it->second + "; allowed: a name unique among the outputs");
  }
  // "<name>_scales" is the scale buffer of output <name> in the metadata.
  for (const OutputInfo &o : outputs) {
    StringRef name = o.spec.name;
    if (name.consume_back("_scales") && namesSeen.count(name))
      error(jsonChildPath(o.path, "name"),
            "found " + json(o.spec.name).dump() +
                ", which is the scale buffer "
                "of output \"" +
                name +
                "\"; allowed: a name that does not "
                "collide with <name>_scales");
  }
  // Two outputs that differ only in name would hold the same bytes.
  for (size_t i = 0; i < outputs.size(); ++i) {
    const OutputInfo &o = outputs[i];
    if (!o.formatOk || !o.layoutOk)
      continue;
    for (size_t j = 0; j < i; ++j) {
      const OutputInfo &p = outputs[j];
      if (p.formatOk && p.layoutOk && p.spec.format == o.spec.format &&
          p.spec.layout == o.spec.layout && p.spec.scale == o.spec.scale &&
          p.spec.scaleLayout == o.spec.scaleLayout) {
        error(o.path, "found the same format, layout, scale and scale layout "
                      "as " +
                          p.path +
                          ", allowed: outputs that differ (these "
                          "two would hold the same bytes)");
        break;
      }
    }
  }
  for (const OutputInfo &o : outputs) {
    if (!sourceFormat || !o.formatOk || !o.layoutOk)
      continue;
    // A bf16 output is the decode of a quantized source (numerics.md 7), or
    // the transpose of a bf16 one; from fp16/fp32 it would be a plain cast,
    // which is not what qct kernels are for (and the pipeline rejects it).
    if (o.spec.format == Format::BF16 &&
        (*sourceFormat == Format::FP16 || *sourceFormat == Format::FP32))
      error(jsonChildPath(o.path, "format"),
            "found bf16 from source " + formatName(*sourceFormat) +
                ", allowed for source " + formatName(*sourceFormat) +
                ": mxfp4, mxfp8_e4m3, mxfp8_e5m2, fp8_e4m3, fp8_e5m2 (a "
                "bf16 output is the decode of a quantized source; " +
                formatName(*sourceFormat) + " to bf16 is a plain cast)");
    if (o.spec.format == *sourceFormat && o.spec.layout == Layout::Row)
      error(jsonChildPath(o.path, "format"),
            "found " + formatName(o.spec.format) + " row from source " +
                formatName(*sourceFormat) +
                ", which converts nothing; allowed: a different "
                "format, or layout col");
    if (o.spec.scale == ScalePolicy::Aligned && fuseKnown && !spec.fuse)
      error(jsonChildPath(o.path, "scale"),
            "found \"aligned\" with \"fuse\": false, allowed: amax, pow2 "
            "(aligned reads the source scale bytes, which the unfused path "
            "through bf16 does not keep)");
  }

  if (fuseKnown && !spec.fuse && sourceFormat) {
    bool anyQuantizedOutput = llvm::any_of(outputs, [](const OutputInfo &o) {
      return o.formatOk && isQuantizedFormat(o.spec.format);
    });
    bool allFormatsKnown =
        llvm::all_of(outputs, [](const OutputInfo &o) { return o.formatOk; });
    if (!isQuantizedFormat(*sourceFormat))
      error("fuse", "found false with source " + formatName(*sourceFormat) +
                        ", allowed: true (only a quantized source has "
                        "a decode to keep apart)");
    else if (allFormatsKnown && !outputs.empty() && !anyQuantizedOutput)
      error("fuse", "found false with only bf16 outputs, allowed: true (the "
                    "decode is the whole kernel)");
  }

  if (const json *ragged = member(root, "ragged"))
    parseRagged(*ragged, spec, outputs);
  if (const json *staticPart = member(root, "static"))
    parseStatic(*staticPart, spec, outputs);

  for (OutputInfo &o : outputs)
    spec.outputs.push_back(std::move(o.spec));
  return spec;
}

/// nlohmann's message, without its "[json.exception...] parse error at line
/// L, column C: " prefix (we print our own position) and without the raw
/// "last read" token, which may span lines.
std::string syntaxMessage(const json::parse_error &e) {
  std::string what = e.what();
  size_t start = what.find("syntax error");
  std::string msg = start == std::string::npos ? what : what.substr(start);
  size_t lastRead = msg.find("; last read: ");
  if (lastRead != std::string::npos) {
    size_t expected = msg.rfind("; expected ");
    msg = msg.substr(0, lastRead) +
          (expected != std::string::npos && expected > lastRead
               ? msg.substr(expected)
               : std::string());
  }
  return "invalid JSON: " + msg;
}

/// nlohmann reports the last byte it read, which for a string, number or
/// literal is the token's end; a diagnostic should point at its start.
size_t tokenStart(StringRef text, size_t offset) {
  if (offset >= text.size())
    return offset;
  auto isWordChar = [](char c) {
    return llvm::isAlnum(c) || c == '.' || c == '+' || c == '-' || c == '_';
  };
  if (text[offset] == '"' && offset > 0) {
    // The closing quote of a string: find the opening one (strings in a
    // spec hold no escaped quotes that matter for a position).
    size_t open = text.rfind('"', offset - 1);
    while (open != StringRef::npos && open > 0 && text[open - 1] == '\\')
      open = text.rfind('"', open - 1);
    return open == StringRef::npos ? offset : open;
  }
  if (isWordChar(text[offset]))
    while (offset > 0 && isWordChar(text[offset - 1]))
      --offset;
  return offset;
}

/// The last character before `offset` that is not whitespace or inside a
/// comment (0 if none).
char lastSignificantChar(StringRef text, size_t offset) {
  char last = 0;
  bool inString = false;
  for (size_t i = 0; i < offset; ++i) {
    char c = text[i];
    if (inString) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        inString = false;
      last = c;
    } else if (text.substr(i).starts_with("//")) {
      i = std::min(text.find('\n', i), offset);
    } else if (text.substr(i).starts_with("/*")) {
      size_t end = text.find("*/", i + 2);
      i = end == StringRef::npos ? offset : end + 1;
    } else if (!llvm::isSpace(c)) {
      inString = c == '"';
      last = c;
    }
  }
  return last;
}

} // namespace

std::optional<KernelSpec> qct::parseSpecText(StringRef text, StringRef path,
                                             DiagnosticSink &diags) {
  JsonLocator locator(text);
  json root;
  try {
    root = json::parse(text.begin(), text.end(), /*cb=*/nullptr,
                       /*allow_exceptions=*/true, /*ignore_comments=*/true);
  } catch (const json::parse_error &e) {
    // e.byte counts the bytes read, the offending one included.
    size_t offset = e.byte == 0 ? 0 : std::min<size_t>(e.byte - 1, text.size());
    std::string message = syntaxMessage(e);
    offset = tokenStart(text, offset);
    if (offset < text.size() && (text[offset] == '}' || text[offset] == ']') &&
        lastSignificantChar(text, offset) == ',')
      message += " (trailing commas are not allowed)";
    Diagnostic d;
    d.file = path.str();
    d.loc = locator.location(offset);
    d.sourceLine = locator.lineText(d.loc.line).str();
    d.message = std::move(message);
    diags.report(std::move(d));
    return std::nullopt;
  }

  Validator validator(path, locator, diags);
  KernelSpec spec = validator.run(root);
  validator.flush();
  if (validator.errors() != 0)
    return std::nullopt;
  spec.path = path.str();
  spec.hash = computeSpecHash(spec);
  return spec;
}

std::optional<KernelSpec> qct::parseSpecFile(StringRef path,
                                             DiagnosticSink &diags) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFileOrSTDIN(path, /*IsText=*/true);
  if (!buffer) {
    Diagnostic d;
    d.file = path.str();
    d.message = "cannot read the spec: " + buffer.getError().message();
    diags.report(std::move(d));
    return std::nullopt;
  }
  return parseSpecText((*buffer)->getBuffer(), path, diags);
}
