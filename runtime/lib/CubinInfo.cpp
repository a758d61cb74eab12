//===- CubinInfo.cpp - Read resource usage from a cubin's ELF
//--------------===//
//
// A cubin is an ELF64 file. The section ".nv.info" holds a list of attributes
// [format u8][attribute u8][u16 value or size][size bytes if format == 4];
// EIATTR_REGCOUNT (0x2f) and EIATTR_FRAME_SIZE (0x11) carry
// [u32 symbol index][u32 value]. Static shared memory is the size of the
// section ".nv.shared.<function>".
//
//===----------------------------------------------------------------------===//
#include "qct/runtime/CubinInfo.h"

#include "qct/runtime/PtxasStats.h"

#include <cstdint>
#include <cstring>
#include <vector>

namespace qct::rt {

namespace {
constexpr std::uint8_t kFormatSval = 0x04;
constexpr std::uint8_t kAttrRegCount = 0x2f;
constexpr std::uint8_t kAttrFrameSize = 0x11;
constexpr std::uint32_t kShtSymtab = 2;

template <typename T> bool get(const std::string &b, std::uint64_t at, T &out) {
  if (at > b.size() || b.size() - at < sizeof(T))
    return false;
  std::memcpy(&out, b.data() + at,
              sizeof(T)); // cubins are little endian, as is x86-64
  return true;
}

struct Section {
  std::uint32_t name, type, link;
  std::uint64_t offset, size, entsize;
};

std::string cstr(const std::string &b, std::uint64_t at) {
  if (at >= b.size())
    return {};
  return std::string(b.c_str() + at, strnlen(b.c_str() + at, b.size() - at));
}
} // namespace

qct_kernel_stats readCubinStats(const std::string &b,
                                const std::string &entry) {
  qct_kernel_stats s{};
  s.spill_store_bytes = s.spill_load_bytes = -1;
  if (b.size() < 64 ||
      std::memcmp(b.data(),
                  "\x7f"
                  "ELF",
                  4) != 0 ||
      b[4] != 2 /* ELFCLASS64 */)
    return s;
  std::uint64_t shoff = 0;
  std::uint16_t shentsize = 0, shnum = 0, shstrndx = 0;
  if (!get(b, 0x28, shoff) || !get(b, 0x3a, shentsize) ||
      !get(b, 0x3c, shnum) || !get(b, 0x3e, shstrndx) || shentsize < 64)
    return s;
  std::vector<Section> sections;
  for (std::uint16_t i = 0; i < shnum; ++i) {
    std::uint64_t h = shoff + std::uint64_t(i) * shentsize;
    Section sec;
    if (!get(b, h + 0x00, sec.name) || !get(b, h + 0x04, sec.type) ||
        !get(b, h + 0x18, sec.offset) || !get(b, h + 0x20, sec.size) ||
        !get(b, h + 0x28, sec.link) || !get(b, h + 0x38, sec.entsize))
      return s;
    sections.push_back(sec);
  }
  if (shstrndx >= sections.size())
    return s;
  auto nameOf = [&](const Section &sec) {
    return cstr(b, sections[shstrndx].offset + sec.name);
  };

  // The entry's symbol index.
  std::int64_t symIndex = -1;
  for (const Section &sec : sections) {
    if (sec.type != kShtSymtab || sec.entsize < 24 ||
        sec.link >= sections.size())
      continue;
    const Section &strtab = sections[sec.link];
    for (std::uint64_t k = 0; k < sec.size / sec.entsize; ++k) {
      std::uint32_t nameOff = 0;
      if (!get(b, sec.offset + k * sec.entsize, nameOff))
        break;
      if (cstr(b, strtab.offset + nameOff) == entry) {
        symIndex = std::int64_t(k);
        break;
      }
    }
  }
  for (const Section &sec : sections) {
    std::string name = nameOf(sec);
    if (name == ".nv.shared." + entry)
      s.shared_memory_bytes = std::int64_t(sec.size);
    if (name != ".nv.info" || symIndex < 0)
      continue;
    for (std::uint64_t at = sec.offset; at + 4 <= sec.offset + sec.size;) {
      std::uint8_t format = std::uint8_t(b[at]), attr = std::uint8_t(b[at + 1]);
      std::uint16_t size = 0;
      get(b, at + 2, size);
      std::uint64_t data = at + 4;
      at = data + (format == kFormatSval ? size : 0);
      std::uint32_t sym = 0, value = 0;
      if (format != kFormatSval || size < 8 || !get(b, data, sym) ||
          !get(b, data + 4, value) || sym != std::uint64_t(symIndex))
        continue;
      if (attr == kAttrRegCount) {
        s.found = 1;
        s.registers = std::int32_t(value);
      } else if (attr == kAttrFrameSize) {
        s.stack_frame_bytes = value;
      }
    }
  }
  s.local_memory_bytes = s.stack_frame_bytes;
  return s;
}

qct_kernel_stats kernelStats(const std::string &cubin, const std::string &log,
                             const std::string &entry) {
  qct_kernel_stats s = readCubinStats(cubin, entry);
  qct_kernel_stats fromLog = parsePtxasStats(log, entry);
  if (!s.found)
    return fromLog; // not a cubin we can read: the log is all there is
  if (fromLog.found) {
    s.spill_store_bytes = fromLog.spill_store_bytes;
    s.spill_load_bytes = fromLog.spill_load_bytes;
    if (fromLog.local_memory_bytes > s.local_memory_bytes)
      s.local_memory_bytes = fromLog.local_memory_bytes;
  }
  return s;
}

} // namespace qct::rt
