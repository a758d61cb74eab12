//===- Error.cpp - Formatting of runtime errors
//----------------------------===//
#include "qct/runtime/Error.h"

#include <cstdio>
#include <sstream>

namespace qct::rt {

std::string RuntimeError::formatted() const {
  std::string out = what();
  auto section = [&](const char *title, const std::string &body) {
    if (body.empty())
      return;
    out += "\n--- ";
    out += title;
    out += " ---\n";
    out += body;
    if (body.back() != '\n')
      out += '\n';
  };
  section("versions", versions);
  section("NVRTC options", options);
  section("NVRTC log", log);
  section("source", source);
  return out;
}

std::string numberLines(const std::string &text) {
  std::ostringstream out;
  std::istringstream in(text);
  std::string line;
  int n = 0;
  char buf[16];
  while (std::getline(in, line)) {
    std::snprintf(buf, sizeof buf, "%5d | ", ++n);
    out << buf << line << '\n';
  }
  return out.str();
}

} // namespace qct::rt
