// Source files held in memory, the manager that owns them, and positions inside them.
#pragma once

#include <compare>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dkv::support {

/// Which file of a SourceManager a location is in. Ids count from 0 in the order the
/// files were added: 0 is the first file a manager holds (the driver's main input), so
/// a location built without a manager (a test fixture) refers to the main file.
using FileId = uint32_t;

/// A position in a source file: 1-based line and column (columns count bytes), and the
/// file. Line 0 means "no position" (e.g. a command-line definition); such a location
/// still names a file (renderers print the file name only).
struct SourceLoc {
  uint32_t line = 0;
  uint32_t col = 0;
  FileId file = 0; ///< after line and col, so that `{line, col}` initialises a main-file location
  /// The inlined call this location was reached through (SourceManager::inlineContext;
  /// the Python tracer inlines helper functions, docs/python.md "Locations"); 0: none.
  /// Two calls of one helper give the helper's statements the same line and column but
  /// different contexts.
  uint32_t inlined = 0;

  bool valid() const { return line != 0; }
  friend bool operator==(const SourceLoc &, const SourceLoc &) = default;
  /// Orders by file, then line, then column (not member order: `file` is last).
  friend std::strong_ordering operator<=>(const SourceLoc &a, const SourceLoc &b) {
    if (auto c = a.file <=> b.file; c != 0)
      return c;
    if (auto c = a.line <=> b.line; c != 0)
      return c;
    if (auto c = a.col <=> b.col; c != 0)
      return c;
    return a.inlined <=> b.inlined;
  }
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
  /// A file outside any manager has id 0.
  SourceFile(std::string name, std::string text, FileId id = 0);

  /// The file's id in the SourceManager holding it; every location the file makes
  /// (locForOffset(), loc()) carries it.
  FileId id() const { return id_; }
  const std::string &name() const { return name_; }
  const std::string &text() const { return text_; }
  /// Number of lines (a final line without newline counts).
  uint32_t lineCount() const { return static_cast<uint32_t>(lineStarts_.size()); }
  /// The text of line `line` (1-based) without its newline; empty if out of range.
  std::string_view lineText(uint32_t line) const;
  /// Position of byte `offset` in the file.
  SourceLoc locForOffset(size_t offset) const;
  /// The location `line`:`col` in this file.
  SourceLoc loc(uint32_t line, uint32_t col) const { return SourceLoc{line, col, id_}; }

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
  friend class SourceManager; // sets id_ of a loaded file

  std::string name_;
  std::string text_;
  std::vector<size_t> lineStarts_;
  FileId id_ = 0;
  bool truncated_ = false;
};

/// Owns the source files of one run and gives them small integer ids, so that a
/// location (SourceLoc::file) can point into any of them: a finding's spans, a trace
/// step or a diagnostic may each be in a different file. Files are never removed and
/// never move (references from file() stay valid while the manager lives, also when
/// it is moved). Every renderer (support/Diagnostics.h, report/Render.h,
/// report/Json.h) looks a location's file up here.
///
/// A frontend gets its id from the SourceFile it parses (SourceFile::id()).
class SourceManager {
public:
  /// Adds a file held in memory; returns its id (the number of files added before).
  FileId add(std::string name, std::string text);

  /// Reads `path` with SourceFile::load (its byte limit; directories are refused) and
  /// adds it under the name `path`. Returns nullopt and sets `error` if it can't be
  /// read; then nothing is added. A truncated file is added (SourceFile::truncated()).
  std::optional<FileId> load(const std::string &path, std::string &error,
                             size_t maxBytes = SourceFile::kMaxLoadBytes);

  /// The file with id `id`; precondition: `id` was returned by add() or load().
  const SourceFile &file(FileId id) const;
  /// The file with id `id`, or null if there is none.
  const SourceFile *find(FileId id) const;
  /// The file's name, or "" if there is no file `id`.
  std::string_view name(FileId id) const;
  /// The file's text, or "" if there is no file `id`.
  std::string_view text(FileId id) const;
  /// Number of files; their ids are 0 .. size() - 1.
  size_t size() const { return files_.size(); }

  /// One inlined call (like a macro expansion in a C compiler): the call site, itself
  /// in the context of the call that contains it (callSite.inlined), and the callee.
  struct InlineContext {
    SourceLoc callSite;
    std::string callee;
  };
  /// Records an inlined call; returns its id (from 1) for SourceLoc::inlined.
  uint32_t addInlineContext(SourceLoc callSite, std::string callee);
  /// The calls `loc` was inlined through, innermost first, at most `max` of them.
  std::vector<InlineContext> inlineChain(SourceLoc loc, size_t max = 8) const;

private:
  FileId adopt(SourceFile file);

  std::vector<InlineContext> contexts_; ///< id k is contexts_[k - 1]

  // unique_ptr: stable addresses for the parser's references while files are added.
  std::vector<std::unique_ptr<SourceFile>> files_;
};

} // namespace dkv::support
