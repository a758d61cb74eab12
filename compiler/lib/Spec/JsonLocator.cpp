//===- JsonLocator.cpp - Source positions of the nodes of a JSON text -----===//

#include "qct/Spec/JsonLocator.h"

#include "llvm/ADT/StringExtras.h"

#include <algorithm>

using namespace qct;

static bool isIdentifier(llvm::StringRef s) {
  if (s.empty() || !(llvm::isAlpha(s[0]) || s[0] == '_'))
    return false;
  return llvm::all_of(s, [](char c) { return llvm::isAlnum(c) || c == '_'; });
}

std::string qct::jsonChildPath(llvm::StringRef parent, llvm::StringRef key) {
  if (isIdentifier(key))
    return parent.empty() ? key.str() : (parent + "." + key).str();
  std::string escaped;
  for (char c : key) {
    if (c == '"' || c == '\\')
      escaped += '\\';
    escaped += c;
  }
  return (parent + "[\"" + escaped + "\"]").str();
}

std::string qct::jsonElementPath(llvm::StringRef parent, size_t index) {
  return (parent + "[" + llvm::Twine(index) + "]").str();
}

/// A recursive-descent walk over JSON-with-comments that only records where
/// things are. Returns false from any step as soon as the text stops making
/// sense; the caller keeps the positions found up to there.
class JsonLocator::Scanner {
public:
  Scanner(JsonLocator &loc) : loc(loc), text(loc.text) {}

  void run() {
    // nlohmann skips a UTF-8 byte order mark; so must we, or every position
    // would be lost.
    if (text.starts_with("\xEF\xBB\xBF"))
      pos = 3;
    skipSpace();
    if (!value(""))
      return;
  }

private:
  JsonLocator &loc;
  llvm::StringRef text;
  size_t pos = 0;
  // Deeply nested input cannot blow the stack: a spec is never deep.
  unsigned depth = 0;

  bool atEnd() const { return pos >= text.size(); }
  char peek() const { return atEnd() ? '\0' : text[pos]; }

  void skipSpace() {
    while (!atEnd()) {
      char c = text[pos];
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
        ++pos;
      } else if (text.substr(pos).starts_with("//")) {
        size_t end = text.find('\n', pos);
        pos = end == llvm::StringRef::npos ? text.size() : end;
      } else if (text.substr(pos).starts_with("/*")) {
        size_t end = text.find("*/", pos + 2);
        pos = end == llvm::StringRef::npos ? text.size() : end + 2;
      } else {
        return;
      }
    }
  }

  /// Reads a string starting at its opening quote; decodes the simple
  /// escapes (enough to name keys; \u escapes are kept as written, so such a
  /// key's path misses and its diagnostics fall back to the parent).
  bool string(std::string &out) {
    if (peek() != '"')
      return false;
    ++pos;
    while (!atEnd()) {
      char c = text[pos++];
      if (c == '"')
        return true;
      if (c != '\\') {
        out += c;
        continue;
      }
      if (atEnd())
        return false;
      char e = text[pos++];
      switch (e) {
      case 'n':
        out += '\n';
        break;
      case 't':
        out += '\t';
        break;
      case 'r':
        out += '\r';
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'u':
        out += "\\u";
        break;
      default:
        out += e;
      }
    }
    return false;
  }

  bool value(const std::string &path) {
    if (atEnd() || depth > 64)
      return false;
    loc.entries[path].value = pos;
    char c = peek();
    if (c == '{')
      return object(path);
    if (c == '[')
      return array(path);
    if (c == '"') {
      std::string ignored;
      return string(ignored);
    }
    // A number or a literal: runs to the next delimiter.
    size_t start = pos;
    while (!atEnd() && !llvm::StringRef(",]} \t\r\n/").contains(text[pos]))
      ++pos;
    return pos > start;
  }

  bool object(const std::string &path) {
    ++pos;
    ++depth;
    skipSpace();
    if (peek() == '}') {
      ++pos;
      --depth;
      return true;
    }
    while (true) {
      skipSpace();
      size_t keyPos = pos;
      std::string key;
      if (!string(key))
        return false;
      std::string child = jsonChildPath(path, key);
      auto &entry = loc.entries[child];
      if (entry.key)
        loc.dups.push_back({child, *entry.key, keyPos});
      entry.key = keyPos;
      skipSpace();
      if (peek() != ':')
        return false;
      ++pos;
      skipSpace();
      if (!value(child))
        return false;
      skipSpace();
      if (peek() == ',') {
        ++pos;
        continue;
      }
      if (peek() == '}') {
        ++pos;
        --depth;
        return true;
      }
      return false;
    }
  }

  bool array(const std::string &path) {
    ++pos;
    ++depth;
    skipSpace();
    if (peek() == ']') {
      ++pos;
      --depth;
      return true;
    }
    for (size_t index = 0;; ++index) {
      skipSpace();
      if (!value(jsonElementPath(path, index)))
        return false;
      skipSpace();
      if (peek() == ',') {
        ++pos;
        continue;
      }
      if (peek() == ']') {
        ++pos;
        --depth;
        return true;
      }
      return false;
    }
  }
};

JsonLocator::JsonLocator(llvm::StringRef text) : text(text) {
  lineStarts.push_back(0);
  for (size_t i = 0; i < text.size(); ++i)
    if (text[i] == '\n')
      lineStarts.push_back(i + 1);
  Scanner(*this).run();
}

std::optional<size_t> JsonLocator::keyOffset(llvm::StringRef path) const {
  auto it = entries.find(path);
  return it == entries.end() ? std::nullopt : it->second.key;
}

std::optional<size_t> JsonLocator::valueOffset(llvm::StringRef path) const {
  auto it = entries.find(path);
  return it == entries.end() ? std::nullopt : it->second.value;
}

SourceLoc JsonLocator::location(size_t offset) const {
  offset = std::min(offset, text.size());
  auto it = std::upper_bound(lineStarts.begin(), lineStarts.end(), offset);
  size_t line = it - lineStarts.begin(); // 1-based: `it` is past our line
  SourceLoc loc;
  loc.line = static_cast<unsigned>(line);
  loc.column = static_cast<unsigned>(offset - lineStarts[line - 1] + 1);
  return loc;
}

llvm::StringRef JsonLocator::lineText(unsigned line) const {
  if (line == 0 || line > lineStarts.size())
    return {};
  size_t start = lineStarts[line - 1];
  size_t end = line < lineStarts.size() ? lineStarts[line] - 1 : text.size();
  llvm::StringRef s = text.slice(start, end);
  return s.ends_with("\r") ? s.drop_back() : s;
}
