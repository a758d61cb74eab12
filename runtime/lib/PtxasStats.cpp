//===- PtxasStats.cpp - Parse ptxas -v output
//------------------------------===//
//
// The lines look like (CUDA 13):
//   ptxas info    : Compiling entry function 'k' for 'sm_90a'
//   ptxas info    : Function properties for k
//   ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes
//   spill loads ptxas info    : Used 72 registers, used 0 barriers, 1024 bytes
//   smem, 8 bytes lmem
//
//===----------------------------------------------------------------------===//
#include "qct/runtime/PtxasStats.h"

#include <cctype>
#include <cstdlib>
#include <cstring>
#include <sstream>

namespace qct::rt {

namespace {
// The number right before `unit` in `line` (e.g. "spill stores"), or -1.
long long numberBefore(const std::string &line, const char *unit) {
  std::size_t at = line.find(unit);
  if (at == std::string::npos)
    return -1;
  std::size_t end = at;
  while (end > 0 && line[end - 1] == ' ')
    --end;
  std::size_t start = end;
  while (start > 0 && std::isdigit(static_cast<unsigned char>(line[start - 1])))
    --start;
  if (start == end)
    return -1;
  return std::atoll(line.substr(start, end - start).c_str());
}
} // namespace

qct_kernel_stats parsePtxasStats(const std::string &log,
                                 const std::string &entry) {
  qct_kernel_stats s{};
  std::istringstream in(log);
  std::string line;
  bool inEntry = false; // after "Compiling entry function 'entry'"
  bool inProps = false; // after "Function properties for entry"
  long long lmem = 0;
  while (std::getline(in, line)) {
    if (line.find("Compiling entry function") != std::string::npos) {
      inEntry = line.find("'" + entry + "'") != std::string::npos;
      continue;
    }
    if (line.find("Function properties for") != std::string::npos) {
      std::size_t at = line.find("Function properties for") +
                       std::strlen("Function properties for");
      std::string name = line.substr(at);
      name.erase(0, name.find_first_not_of(' '));
      name.erase(name.find_last_not_of(" \r") + 1);
      inProps = name == entry;
      continue;
    }
    if (inProps && line.find("stack frame") != std::string::npos) {
      s.found = 1;
      s.stack_frame_bytes = numberBefore(line, "bytes stack frame");
      s.spill_store_bytes = numberBefore(line, "bytes spill stores");
      s.spill_load_bytes = numberBefore(line, "bytes spill loads");
      inProps = false;
      continue;
    }
    if (inEntry && line.find("Used ") != std::string::npos &&
        line.find("registers") != std::string::npos) {
      s.found = 1;
      s.registers = int(numberBefore(line, "registers"));
      long long smem = numberBefore(line, "bytes smem");
      s.shared_memory_bytes = smem < 0 ? 0 : smem;
      long long l = numberBefore(line, "bytes lmem");
      lmem = l < 0 ? 0 : l;
      inEntry = false;
    }
  }
  for (auto *v :
       {&s.stack_frame_bytes, &s.spill_store_bytes, &s.spill_load_bytes})
    if (*v < 0)
      *v = 0;
  s.local_memory_bytes = s.stack_frame_bytes + lmem;
  return s;
}

} // namespace qct::rt
