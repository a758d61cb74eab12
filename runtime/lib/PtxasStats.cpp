//===- PtxasStats.cpp - Parse ptxas -v output -----------------------------===//
//
// The lines look like (CUDA 13; one line each, runs of spaces shortened):
//   ptxas info : Compiling entry function 'k' for 'sm_90a'
//   ptxas info : Function properties for k
//   ptxas . 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
//   ptxas info : Used 72 registers, ..., 1024 bytes smem, 8 bytes lmem
// and, for each device function kept as a call (no "Compiling entry function"
// line), a "Function properties for" block of its own.
//
//===----------------------------------------------------------------------===//
#include "qct/runtime/PtxasStats.h"

#include <cctype>
#include <cstdlib>
#include <cstring>
#include <set>
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
  std::set<std::string> entries; // announced by "Compiling entry function"
  bool inEntry = false;          // after "Compiling entry function 'entry'"
  // After "Function properties for F": 1 for the entry, 2 for a function
  // that is no entry (a device function ptxas kept as a call), 0 otherwise.
  int inProps = 0;
  long long lmem = 0;
  // Spills and stack frames of the non-entry functions. qct compiles one
  // entry per program, so they are its callees; with several entries, each
  // is charged with all of them (the log does not say who calls what).
  long long calleeStores = 0, calleeLoads = 0, calleeFrames = 0;
  while (std::getline(in, line)) {
    if (line.find("Compiling entry function") != std::string::npos) {
      std::size_t open = line.find('\'');
      std::size_t close =
          open == std::string::npos ? open : line.find('\'', open + 1);
      if (close != std::string::npos)
        entries.insert(line.substr(open + 1, close - open - 1));
      inEntry = line.find("'" + entry + "'") != std::string::npos;
      continue;
    }
    if (line.find("Function properties for") != std::string::npos) {
      std::size_t at = line.find("Function properties for") +
                       std::strlen("Function properties for");
      std::string name = line.substr(at);
      name.erase(0, name.find_first_not_of(' '));
      name.erase(name.find_last_not_of(" \r") + 1);
      inProps = name == entry ? 1 : (entries.count(name) ? 0 : 2);
      continue;
    }
    if (inProps && line.find("stack frame") != std::string::npos) {
      long long frame = numberBefore(line, "bytes stack frame");
      long long stores = numberBefore(line, "bytes spill stores");
      long long loads = numberBefore(line, "bytes spill loads");
      if (inProps == 1) {
        s.found = 1;
        s.stack_frame_bytes = frame;
        s.spill_store_bytes = stores;
        s.spill_load_bytes = loads;
      } else {
        calleeFrames += frame > 0 ? frame : 0;
        calleeStores += stores > 0 ? stores : 0;
        calleeLoads += loads > 0 ? loads : 0;
      }
      inProps = 0;
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
  if (s.found) {
    s.spill_store_bytes += calleeStores;
    s.spill_load_bytes += calleeLoads;
  }
  s.local_memory_bytes = s.stack_frame_bytes + calleeFrames + lmem;
  return s;
}

} // namespace qct::rt
