// Diagnostic collection and rendering in the clang style.
#include "support/Diagnostics.h"

#include "support/Invariant.h"

#include <algorithm>
#include <ostream>

namespace dkv::support {

int DiagnosticEngine::errorExitCode() const {
  for (const Diagnostic &d : diagnostics_)
    if (d.severity == Severity::Error && d.id == "internal")
      return kExitInternal;
  return kExitInputError;
}

namespace {
const char *severityName(Severity s) {
  switch (s) {
  case Severity::Error:
    return "error";
  case Severity::Warning:
    return "warning";
  case Severity::Note:
    return "note";
  }
  return "error";
}

// Source lines can be huge (a 10 MB one-line file); show a window around the caret.
constexpr size_t kMaxShownLine = 160;

// The length of the UTF-8 character `s` starts with (2 to 4 bytes, 1 for ASCII), or 0 when
// its first bytes are no well-formed UTF-8 (RFC 3629: no overlong forms or surrogates).
size_t utf8Length(std::string_view s) {
  auto b = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  if (s.empty())
    return 0;
  if (b(0) < 0x80)
    return 1;
  size_t n = b(0) >= 0xc2 && b(0) <= 0xdf   ? 2
             : b(0) >= 0xe0 && b(0) <= 0xef ? 3
             : b(0) >= 0xf0 && b(0) <= 0xf4 ? 4
                                            : 0;
  if (n == 0 || s.size() < n)
    return 0;
  for (size_t i = 1; i < n; ++i)
    if ((b(i) & 0xc0) != 0x80)
      return 0;
  // The second byte's range after E0, ED, F0 and F4 (overlong, surrogate, beyond U+10FFFF).
  if ((b(0) == 0xe0 && b(1) < 0xa0) || (b(0) == 0xed && b(1) > 0x9f) ||
      (b(0) == 0xf0 && b(1) < 0x90) || (b(0) == 0xf4 && b(1) > 0x8f))
    return 0;
  return n;
}

const SourceFile *fileOf(const SourceManager *sources, SourceLoc loc) {
  return sources ? sources->find(loc.file) : nullptr;
}
} // namespace

Diagnostic &DiagnosticEngine::report(Diagnostic diagnostic) {
  if (diagnostic.severity == Severity::Error) {
    ++errorCount_;
    if (errorCount_ > errorLimit_) {
      ++suppressed_;
      thread_local Diagnostic sink; // per thread: `dkv check -j` loads kernels in parallel
      sink = std::move(diagnostic);
      return sink;
    }
  }
  diagnostics_.push_back(std::move(diagnostic));
  return diagnostics_.back();
}

Diagnostic &DiagnosticEngine::error(SourceRange range, std::string id, std::string message) {
  return report(Diagnostic{Severity::Error, range, std::move(message), std::move(id), {}});
}

Diagnostic &DiagnosticEngine::warning(SourceRange range, std::string id, std::string message) {
  return report(Diagnostic{Severity::Warning, range, std::move(message), std::move(id), {}});
}

void renderSnippet(std::ostream &out, const SourceManager *sources, SourceRange range) {
  const SourceLoc &loc = range.begin;
  const SourceFile *file = fileOf(sources, loc);
  if (!file || !loc.valid())
    return;
  std::string_view line = file->lineText(loc.line);
  size_t caret = loc.col > 0 ? loc.col - 1 : 0;
  size_t start = 0;
  if (line.size() > kMaxShownLine && caret > kMaxShownLine / 2)
    start = std::min(caret - kMaxShownLine / 2, line.size() - std::min(line.size(), kMaxShownLine));
  std::string_view shown = line.substr(std::min(start, line.size()), kMaxShownLine);
  size_t end = caret + 1;
  if (range.end.file == loc.file && range.end.line == loc.line && range.end.col > loc.col)
    end = caret + (range.end.col - loc.col);
  std::string text;
  std::string marker;
  size_t shownChars = 0, underlined = 0;
  for (size_t i = 0; i < shown.size();) {
    unsigned char c = static_cast<unsigned char>(shown[i]);
    // Columns count bytes; the line prints as its UTF-8 and the caret moves one place per
    // character. Keep the terminal clean: tabs stay tabs, other control bytes and bytes
    // that are no UTF-8 character print as '?'.
    size_t n = utf8Length(shown.substr(i));
    if (n > 1)
      text.append(shown.substr(i, n));
    else
      text.push_back(c == '\t' ? '\t' : (c < 0x20 || c >= 0x7f ? '?' : static_cast<char>(c)));
    if (n == 0)
      n = 1;
    if (start + i < caret)
      marker.push_back(c == '\t' ? '\t' : ' ');
    else if (start + i < end)
      ++underlined;
    ++shownChars;
    i += n;
  }
  out << "  " << text << "\n";
  size_t width = std::min(std::max<size_t>(underlined, 1),
                          shownChars > marker.size() ? shownChars - marker.size() : 1);
  out << "  " << marker << "^" << std::string(width > 1 ? width - 1 : 0, '~') << "\n";
}

void renderHeading(std::ostream &out, const SourceManager *sources, SourceLoc loc,
                   std::string_view label, std::string_view message) {
  const SourceFile *file = fileOf(sources, loc);
  if (file)
    out << file->name() << ":";
  if (loc.valid())
    out << loc.line << ":" << loc.col << ":";
  if (file || loc.valid())
    out << " ";
  out << label << ": " << message;
}

void renderDiagnostic(std::ostream &out, const SourceManager *sources, const Diagnostic &d) {
  renderHeading(out, sources, d.range.begin, severityName(d.severity), d.message);
  if (!d.id.empty())
    out << " [" << d.id << "]";
  out << "\n";
  renderSnippet(out, sources, d.range);
  renderInlineChain(out, sources, d.range.begin);
  for (const Diagnostic &note : d.notes)
    renderDiagnostic(out, sources, note);
}

void renderInlineChain(std::ostream &out, const SourceManager *sources, SourceLoc loc) {
  if (!sources || loc.inlined == 0)
    return;
  for (const SourceManager::InlineContext &c : sources->inlineChain(loc)) {
    renderHeading(out, sources, c.callSite, "note", "in " + c.callee + "(), called here");
    out << "\n";
    renderSnippet(out, sources, {c.callSite, c.callSite});
  }
}

void DiagnosticEngine::render(std::ostream &out) const {
  std::vector<const Diagnostic *> sorted;
  for (const Diagnostic &d : diagnostics_)
    sorted.push_back(&d);
  std::stable_sort(sorted.begin(), sorted.end(), [](const Diagnostic *a, const Diagnostic *b) {
    return a->range.begin < b->range.begin;
  });
  for (const Diagnostic *d : sorted)
    renderDiagnostic(out, sources_, *d);
  if (suppressed_ > 0) {
    const SourceFile *main = sources_ ? sources_->find(0) : nullptr;
    out << (main ? main->name() + ": " : std::string()) << "note: " << suppressed_
        << " more error(s) not shown\n";
  }
}

} // namespace dkv::support
