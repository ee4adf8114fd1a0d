// User diagnostics: collected, sorted, rendered with the source line and a caret.
#pragma once

#include "support/Source.h"

#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

namespace dkv::support {

enum class Severity { Error, Warning, Note };

/// One user-facing message. `id` is a stable identifier from docs/diagnostics.md
/// (e.g. "syntax", "unknown-name"); messages start lowercase and end without a period.
struct Diagnostic {
  Severity severity = Severity::Error;
  SourceRange range;
  std::string message;
  std::string id;
  /// Notes attached to this diagnostic (e.g. "declared here").
  std::vector<Diagnostic> notes;
};

/// Collects diagnostics for the files of one SourceManager (each diagnostic's range
/// names its file). Never stops at the first error; callers check hasErrors() between
/// stages.
class DiagnosticEngine {
public:
  /// `sources` may be null (then locations render as line:col, without file names or
  /// snippets); it must outlive the engine.
  explicit DiagnosticEngine(const SourceManager *sources) : sources_(sources) {}

  /// Records an error. Returns the stored diagnostic so notes can be attached.
  Diagnostic &error(SourceRange range, std::string id, std::string message);
  Diagnostic &warning(SourceRange range, std::string id, std::string message);
  Diagnostic &report(Diagnostic diagnostic);

  bool hasErrors() const { return errorCount_ > 0; }
  /// The exit code of a command stopped by these errors: kExitInternal (6) if one of
  /// them is `internal` (an unexpected exception caught at a library's boundary: a dkv
  /// bug, not the input's), else kExitInputError (2).
  int errorExitCode() const;
  size_t errorCount() const { return errorCount_; }
  const std::vector<Diagnostic> &diagnostics() const { return diagnostics_; }
  const SourceManager *sources() const { return sources_; }

  /// Drops the diagnostics recorded after the first `count` (a caller that checks the
  /// same source twice keeps one report of it).
  void truncate(size_t count) {
    while (diagnostics_.size() > count) {
      if (diagnostics_.back().severity == Severity::Error && errorCount_ > 0)
        --errorCount_;
      diagnostics_.pop_back();
    }
  }

  /// Stops recording errors after `limit` (further ones are counted and
  /// summarised in render()); protects against pathological inputs.
  void setErrorLimit(size_t limit) { errorLimit_ = limit; }

  /// Renders all diagnostics sorted by position (file id, line, column; stable for
  /// equal positions): `file:line:col: error: message [id]`, the source line and a
  /// caret line, each in the diagnostic's own file. The summary of suppressed errors
  /// names the main file (id 0).
  void render(std::ostream &out) const;

private:
  const SourceManager *sources_;
  std::vector<Diagnostic> diagnostics_;
  size_t errorCount_ = 0;
  size_t errorLimit_ = 100;
  size_t suppressed_ = 0;
};

/// Renders `file:line:col: label: message` without a newline (the clang-style
/// heading shared by diagnostics and findings). `file` is the name of `loc.file` in
/// `sources`; it is left out if `sources` is null or has no such file, and
/// `line:col` is left out if `loc` has no position (line 0).
void renderHeading(std::ostream &out, const SourceManager *sources, SourceLoc loc,
                   std::string_view label, std::string_view message);

/// Renders the source line of `range` (in the file of `range.begin`) and a caret line
/// under it (nothing if the file or the location is unknown). Long lines are shown as
/// a window around the caret.
void renderSnippet(std::ostream &out, const SourceManager *sources, SourceRange range);

/// Renders, for a location inside inlined calls (SourceLoc::inlined), one note per call
/// from the innermost out: `file:line:col: note: in helper(), called here` and its
/// snippet. Nothing for a location outside any inlined call.
void renderInlineChain(std::ostream &out, const SourceManager *sources, SourceLoc loc);

/// Renders one diagnostic and its notes, each in its own file (used by render() and
/// by tests).
void renderDiagnostic(std::ostream &out, const SourceManager *sources, const Diagnostic &d);

} // namespace dkv::support
