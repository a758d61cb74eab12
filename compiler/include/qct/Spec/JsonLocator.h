//===- JsonLocator.h - Source positions of the nodes of a JSON text -------===//
//
// nlohmann::json keeps no node positions, so diagnostics that point at
// `outputs[1].block` need a second, small scanner over the same text. It maps
// every JSON path to the byte offsets of its key and its value, skipping the
// comments the spec language allows, and records duplicate keys (which
// nlohmann silently collapses to the last one).
//
// The scanner is only run on text nlohmann accepted, so it need not diagnose
// syntax; on malformed input it stops and keeps what it found so far.
//
//===----------------------------------------------------------------------===//

#ifndef QCT_SPEC_JSONLOCATOR_H
#define QCT_SPEC_JSONLOCATOR_H

#include "qct/Spec/Diagnostics.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>
#include <vector>

namespace qct {

/// The path of member `key` of the object at `parent`: `outputs[0].block`,
/// or `x["odd key"]` for a key that is not an identifier. "" is the root.
std::string jsonChildPath(llvm::StringRef parent, llvm::StringRef key);
/// The path of element `index` of the array at `parent`: `outputs[1]`.
std::string jsonElementPath(llvm::StringRef parent, size_t index);

class JsonLocator {
public:
  explicit JsonLocator(llvm::StringRef text);

  /// Offset of the key of the member at `path` (its opening quote).
  std::optional<size_t> keyOffset(llvm::StringRef path) const;
  /// Offset of the first character of the value at `path`.
  std::optional<size_t> valueOffset(llvm::StringRef path) const;

  struct Duplicate {
    std::string path;
    size_t firstKeyOffset;
    size_t keyOffset; ///< the later occurrence, the one nlohmann keeps
  };
  const std::vector<Duplicate> &duplicates() const { return dups; }

  /// 1-based line:column of a byte offset (clamped to the text).
  SourceLoc location(size_t offset) const;
  /// The text of a 1-based line, without its newline.
  llvm::StringRef lineText(unsigned line) const;

private:
  struct Entry {
    std::optional<size_t> key;
    std::optional<size_t> value;
  };
  class Scanner;

  llvm::StringRef text;
  std::vector<size_t> lineStarts;
  llvm::StringMap<Entry> entries;
  std::vector<Duplicate> dups;
};

} // namespace qct

#endif // QCT_SPEC_JSONLOCATOR_H
