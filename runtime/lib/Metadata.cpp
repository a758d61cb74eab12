//===- Metadata.cpp - Parse kernel metadata and resolve the schedule
//-------===//
#include "qct/runtime/Metadata.h"

#include "qct/kernel_args.h"
#include "qct/runtime/Error.h"

#include <nlohmann/json.hpp>

namespace qct::rt {

using nlohmann::json;

namespace {
[[noreturn]] void bad(const std::string &what) {
  fail(QCT_ERR_METADATA, "kernel metadata: " + what);
}

const json &member(const json &obj, const char *key, const char *where) {
  auto it = obj.find(key);
  if (it == obj.end())
    bad(std::string(where) + " has no \"" + key + "\"");
  return *it;
}

std::string str(const json &obj, const char *key, const char *where) {
  const json &v = member(obj, key, where);
  if (!v.is_string())
    bad(std::string(where) + "." + key + " is not a string");
  return v.get<std::string>();
}

// Launch entries may be strings or plain integers.
std::string exprText(const json &v, const std::string &where) {
  if (v.is_string())
    return v.get<std::string>();
  if (v.is_number_integer())
    return std::to_string(v.get<std::int64_t>());
  bad(where + " is neither an expression string nor an integer");
}

std::uint32_t acceptedDtypes(const std::string &dtype) {
  auto bits = [](std::initializer_list<int> ds) {
    std::uint32_t m = 0;
    for (int d : ds)
      m |= 1u << d;
    return m;
  };
  if (dtype == "u8")
    return bits({QCT_DTYPE_U8, QCT_DTYPE_I8, QCT_DTYPE_FP8_E4M3,
                 QCT_DTYPE_FP8_E5M2, QCT_DTYPE_E8M0, QCT_DTYPE_FP4_E2M1_X2});
  if (dtype == "u16")
    return bits({QCT_DTYPE_U16, QCT_DTYPE_I16, QCT_DTYPE_BF16, QCT_DTYPE_F16});
  if (dtype == "bf16")
    return bits({QCT_DTYPE_BF16, QCT_DTYPE_U16});
  if (dtype == "f16")
    return bits({QCT_DTYPE_F16, QCT_DTYPE_U16});
  if (dtype == "f32")
    return bits({QCT_DTYPE_F32});
  if (dtype == "i32")
    return bits({QCT_DTYPE_I32});
  if (dtype == "i64")
    return bits({QCT_DTYPE_I64});
  return 0;
}

/// The qct_dtype a raw-byte buffer's "element" names, 0 for an unknown name.
int elementDtype(const std::string &element) {
  if (element == "fp8_e4m3")
    return QCT_DTYPE_FP8_E4M3;
  if (element == "fp8_e5m2")
    return QCT_DTYPE_FP8_E5M2;
  if (element == "e8m0")
    return QCT_DTYPE_E8M0;
  if (element == "fp4_e2m1_x2")
    return QCT_DTYPE_FP4_E2M1_X2;
  return 0;
}

void bindField(BufferMeta &b) {
  const std::string &f = b.fieldText;
  auto indexed = [&](const char *prefix, ArgField field) {
    std::string p = prefix;
    if (f.size() == p.size() + 3 && f.compare(0, p.size(), p) == 0 &&
        f[p.size()] == '[' && f.back() == ']' &&
        std::isdigit(static_cast<unsigned char>(f[p.size() + 1]))) {
      b.field = field;
      b.index = f[p.size() + 1] - '0';
      if (b.index >= QCT_MAX_OUTPUTS)
        bad("buffer '" + b.name + "': field " + f + " beyond QCT_MAX_OUTPUTS");
      return true;
    }
    return false;
  };
  if (f == "src")
    b.field = ArgField::Src;
  else if (f == "src_scales")
    b.field = ArgField::SrcScales;
  else if (f == "offsets")
    b.field = ArgField::Offsets;
  else if (f == "padded_offsets")
    b.field = ArgField::PaddedOffsets;
  else if (!indexed("out_scales", ArgField::OutScales) &&
           !indexed("out", ArgField::Out))
    bad("buffer '" + b.name + "': unknown field '" + f + "'");
}
} // namespace

KernelMeta parseMetadata(const std::string &text,
                         const std::vector<std::string> &overrides) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception &e) {
    bad(std::string("not valid JSON: ") + e.what());
  }
  if (!j.is_object())
    bad("top level is not an object");
  KernelMeta m;
  m.json = text;
  try {
    m.formatVersion = member(j, "format_version", "metadata").get<int>();
    if (m.formatVersion != 1)
      bad("format_version " + std::to_string(m.formatVersion) +
          " is not supported (this runtime reads 1)");
    m.name = str(j, "name", "metadata");
    m.entry = str(j, "entry", "metadata");
    m.specHash = str(j, "spec_hash", "metadata");
    m.compilerVersion = str(j, "compiler_version", "metadata");
    m.kernelArgsVersion =
        member(j, "kernel_args_version", "metadata").get<int>();
    if (m.kernelArgsVersion != QCT_KERNEL_ARGS_VERSION)
      bad("kernel_args_version " + std::to_string(m.kernelArgsVersion) +
          " but this runtime has QCT_KERNEL_ARGS_VERSION " +
          std::to_string(QCT_KERNEL_ARGS_VERSION));
    m.errorFlag = j.value("error_flag", false);

    // Schedule first: shape and launch expressions may name knobs.
    if (auto it = j.find("schedule"); it != j.end() && it->contains("knobs")) {
      for (const json &k : (*it)["knobs"]) {
        KnobMeta knob;
        knob.name = str(k, "name", "schedule.knobs[]");
        knob.values = member(k, "values", "schedule.knobs[]")
                          .get<std::vector<std::int64_t>>();
        knob.defaultValue =
            member(k, "default", "schedule.knobs[]").get<std::int64_t>();
        m.schedule[knob.name] = knob.defaultValue;
        m.knobs.push_back(std::move(knob));
      }
      // Rules: {"if": {"NAME": value}, "then": {"NAME": [values]}}, each
      // naming one knob on either side.
      if (auto r = it->find("rules"); r != it->end())
        for (const json &rule : *r) {
          auto side = [&](const char *key) -> const json & {
            const json &x = member(rule, key, "schedule.rules[]");
            if (!x.is_object() || x.size() != 1 ||
                !m.schedule.count(x.begin().key()))
              bad(std::string("schedule.rules[].") + key +
                  " must name one of the kernel's knobs");
            return x;
          };
          const json &cond = side("if"), then = side("then");
          KnobRuleMeta k;
          k.ifName = cond.begin().key();
          k.ifValue = cond.begin().value().get<std::int64_t>();
          k.thenName = then.begin().key();
          k.thenValues = then.begin().value().get<std::vector<std::int64_t>>();
          m.rules.push_back(std::move(k));
        }
    }
    for (const std::string &o : overrides) {
      auto eq = o.find('=');
      if (eq == std::string::npos || eq == 0)
        fail(QCT_ERR_SCHEDULE,
             "schedule override '" + o + "' is not NAME=VALUE");
      std::string name = o.substr(0, eq), value = o.substr(eq + 1);
      const KnobMeta *knob = nullptr;
      for (const auto &k : m.knobs)
        if (k.name == name)
          knob = &k;
      if (!knob) {
        std::string known;
        for (const auto &k : m.knobs)
          known += (known.empty() ? "" : ", ") + k.name;
        fail(QCT_ERR_SCHEDULE,
             "kernel " + m.name + " has no schedule knob '" + name +
                 "' (knobs: " + (known.empty() ? "none" : known) + ")");
      }
      char *end = nullptr;
      long long v = std::strtoll(value.c_str(), &end, 10);
      bool listed = end != value.c_str() && *end == '\0';
      if (listed) {
        listed = false;
        for (auto x : knob->values)
          listed |= x == v;
      }
      if (!listed) {
        std::string legal;
        for (auto x : knob->values)
          legal += (legal.empty() ? "" : ", ") + std::to_string(x);
        fail(QCT_ERR_SCHEDULE, "schedule knob " + name + "=" + value +
                                   " is not a legal value (legal: " + legal +
                                   ")");
      }
      m.schedule[name] = v;
    }
    for (const KnobRuleMeta &r : m.rules) {
      if (m.schedule[r.ifName] != r.ifValue)
        continue;
      std::int64_t v = m.schedule[r.thenName];
      std::string legal;
      bool ok = false;
      for (auto x : r.thenValues) {
        ok |= x == v;
        legal += (legal.empty() ? "" : ", ") + std::to_string(x);
      }
      if (!ok)
        fail(QCT_ERR_SCHEDULE, "kernel " + m.name + ": schedule knob " +
                                   r.ifName + "=" + std::to_string(r.ifValue) +
                                   " needs " + r.thenName + " to be one of " +
                                   legal + " (got " + std::to_string(v) +
                                   "; schedule.rules)");
    }

    for (const json &b : member(j, "buffers", "metadata")) {
      BufferMeta buf;
      buf.name = str(b, "name", "buffers[]");
      buf.fieldText = str(b, "field", ("buffer '" + buf.name + "'").c_str());
      buf.dtype = str(b, "dtype", ("buffer '" + buf.name + "'").c_str());
      std::string dir = str(b, "dir", ("buffer '" + buf.name + "'").c_str());
      if (dir != "in" && dir != "out")
        bad("buffer '" + buf.name + "': dir '" + dir +
            "' is neither in nor out");
      buf.isOutput = dir == "out";
      buf.acceptedDtypes = acceptedDtypes(buf.dtype);
      if (!buf.acceptedDtypes)
        bad("buffer '" + buf.name + "': unknown dtype '" + buf.dtype +
            "' (u8, u16, bf16, f16, f32, i32, i64)");
      if (b.contains("element")) {
        // The codes' format: the buffer takes a tensor of that type or a
        // raw uint8 view, and no other 8-bit type.
        buf.element = str(b, "element", ("buffer '" + buf.name + "'").c_str());
        int d = elementDtype(buf.element);
        if (!d || buf.dtype != "u8")
          bad("buffer '" + buf.name + "': element '" + buf.element +
              "' is not one of fp8_e4m3, fp8_e5m2, e8m0, fp4_e2m1_x2 on a u8 "
              "buffer");
        buf.acceptedDtypes = (1u << QCT_DTYPE_U8) | (1u << d);
      }
      bindField(buf);
      for (const json &d : member(b, "shape", "buffer")) {
        buf.shapeText.push_back(exprText(d, "buffer '" + buf.name + "' shape"));
        buf.shape.push_back(ShapeExpr::parse(buf.shapeText.back(), m.schedule));
      }
      if (buf.shape.empty() || buf.shape.size() > QCT_MAX_DIMS)
        bad("buffer '" + buf.name + "' has " +
            std::to_string(buf.shape.size()) + " dims (1.." +
            std::to_string(QCT_MAX_DIMS) + " supported)");
      for (const auto &other : m.buffers)
        if (other.name == buf.name || other.fieldText == buf.fieldText)
          bad("buffers '" + other.name + "' and '" + buf.name + "' clash");
      if (buf.field == ArgField::Src)
        m.srcIndex = int(m.buffers.size());
      if (buf.field == ArgField::Offsets)
        m.offsetsIndex = int(m.buffers.size());
      m.buffers.push_back(std::move(buf));
    }
    if (m.srcIndex < 0)
      bad("no buffer is bound to field \"src\"");
    if (auto it = j.find("constraints"); it != j.end()) {
      for (const json &c : *it) {
        ConstraintMeta cm;
        cm.expr = ShapeExpr::parse(
            exprText(member(c, "expr", "constraint"), "constraint expr"),
            m.schedule);
        cm.multipleOf = c.value("multiple_of", std::int64_t(0));
        if (c.contains("equals")) {
          cm.hasEquals = true;
          cm.equals = c["equals"].get<std::int64_t>();
        }
        cm.why = c.value("why", std::string());
        m.constraints.push_back(std::move(cm));
      }
    }
    const json &launch = member(j, "launch", "metadata");
    const json &grid = member(launch, "grid", "launch");
    const json &block = member(launch, "block", "launch");
    if (!grid.is_array() || grid.size() != 3 || !block.is_array() ||
        block.size() != 3)
      bad("launch.grid and launch.block must have 3 entries");
    for (int i = 0; i < 3; ++i) {
      m.grid[i] =
          ShapeExpr::parse(exprText(grid[i], "launch.grid"), m.schedule);
      m.block[i] =
          ShapeExpr::parse(exprText(block[i], "launch.block"), m.schedule);
    }
    m.dynamicSmem =
        ShapeExpr::parse(launch.contains("dynamic_smem_bytes")
                             ? exprText(launch["dynamic_smem_bytes"],
                                        "launch.dynamic_smem_bytes")
                             : std::string("0"),
                         m.schedule);
  } catch (const json::exception &e) {
    bad(std::string("wrong type: ") + e.what());
  }
  return m;
}

} // namespace qct::rt
