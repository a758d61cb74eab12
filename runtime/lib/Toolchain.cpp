//===- Toolchain.cpp - What NVRTC and driver were loaded ------------------===//
#include "qct/runtime/Toolchain.h"

#include "qct/runtime/Driver.h"
#include "qct/runtime/Nvrtc.h"

#include <nlohmann/json.hpp>

namespace qct::rt {

namespace {
nlohmann::json textOrNull(const std::string &s) {
  return s.empty() ? nlohmann::json() : nlohmann::json(s);
}

nlohmann::json nvrtcInfo() {
  const Nvrtc &n = Nvrtc::probe();
  bool loaded = n.loaded();
  return {
      {"loaded", loaded},
      {"path", loaded ? textOrNull(n.path()) : nlohmann::json()},
      {"version", loaded ? nlohmann::json(n.version()) : nlohmann::json()},
      {"found_by", loaded ? textOrNull(n.foundBy()) : nlohmann::json()},
      {"builtins", loaded ? textOrNull(n.builtinsPath()) : nlohmann::json()},
      {"tried", n.tried()},
      {"error", textOrNull(n.error())}};
}

nlohmann::json driverInfo() {
  const Driver &d = Driver::probe();
  bool loaded = d.handle != nullptr;
  nlohmann::json version;
  if (loaded && d.version > 0)
    version = std::to_string(d.version / 1000) + "." +
              std::to_string(d.version % 1000 / 10);
  return {{"loaded", loaded},
          {"usable", d.status == QCT_OK},
          {"path", loaded ? textOrNull(d.path) : nlohmann::json()},
          {"version", version},
          {"found_by", loaded ? textOrNull(d.foundBy) : nlohmann::json()},
          {"status", qct_status_name(d.status)},
          {"error", textOrNull(d.error)}};
}
} // namespace

std::string toolchainInfoJson() {
  nlohmann::json j = {{"nvrtc", nvrtcInfo()}, {"driver", driverInfo()}};
  return j.dump();
}

} // namespace qct::rt
