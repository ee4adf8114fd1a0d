// Source files held in memory, and positions inside them.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dkv::support {

/// A position in a source file: 1-based line and column (columns count bytes).
/// Line 0 means "no location" (e.g. a command-line definition).
struct SourceLoc {
  uint32_t line = 0;
  uint32_t col = 0;

  bool valid() const { return line != 0; }
  friend bool operator==(const SourceLoc &, const SourceLoc &) = default;
  friend auto operator<=>(const SourceLoc &, const SourceLoc &) = default;
};

/// A half-open range [begin, end) of source positions on possibly several lines.
struct SourceRange {
  SourceLoc begin;
  SourceLoc end;

  friend bool operator==(const SourceRange &, const SourceRange &) = default;
};

/// The text of one input file and its line table. Immutable once built.
class SourceFile {
public:
  SourceFile(std::string name, std::string text);

  const std::string &name() const { return name_; }
  const std::string &text() const { return text_; }
  /// Number of lines (a final line without newline counts).
  uint32_t lineCount() const { return static_cast<uint32_t>(lineStarts_.size()); }
  /// The text of line `line` (1-based) without its newline; empty if out of range.
  std::string_view lineText(uint32_t line) const;
  /// Position of byte `offset` in the file.
  SourceLoc locForOffset(size_t offset) const;

  /// True if load() stopped reading at its byte limit: the file is longer than text().
  bool truncated() const { return truncated_; }

  /// Reads `path`. Returns nullopt and sets `error` (e.g. "is a directory") if the file
  /// can't be read. Reads at most `maxBytes` bytes: the text of a longer (or endless,
  /// like /dev/zero) file is its first `maxBytes` bytes and truncated() is true.
  static std::optional<SourceFile> load(const std::string &path, std::string &error,
                                        size_t maxBytes = kMaxLoadBytes);

  /// Default read limit of load(); far above what the parser accepts, so that the
  /// parser still reports the exact size of a moderately large file.
  static constexpr size_t kMaxLoadBytes = size_t{16} << 20;

private:
  std::string name_;
  std::string text_;
  std::vector<size_t> lineStarts_;
  bool truncated_ = false;
};

} // namespace dkv::support
