// The annotations of an example kernel, read once for every tool and test script.
#include "frontend/Annotations.h"

#include "frontend/Parser.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <ostream>

namespace dkv::frontend {

namespace {

/// The annotations of a Python file: its comment lines (nothing but blanks before `#`)
/// `# expect: ...`, `# devices: ...`, `# mesh: ...`, `# options: ...`, read as the `//`
/// comments of a `.dk` file. `# dkv:` lines are the tracer's directives
/// (pytrace/Directives.h), not annotations.
ast::Annotations readPythonAnnotations(const support::SourceFile &file,
                                       support::DiagnosticEngine &diags) {
  ast::Annotations annotations;
  for (uint32_t line = 1; line <= file.lineCount(); ++line) {
    std::string_view text = file.lineText(line);
    size_t hash = text.find_first_not_of(" \t\f");
    if (hash == std::string_view::npos || text[hash] != '#')
      continue;
    std::string_view body = text.substr(hash + 1);
    size_t word = body.find_first_not_of(" \t");
    if (word != std::string_view::npos && body.substr(word, 4) == "dkv:")
      continue;
    while (!body.empty() && (body.back() == '\r' || body.back() == ' '))
      body.remove_suffix(1);
    support::SourceRange range{file.loc(line, static_cast<uint32_t>(hash + 1)),
                               file.loc(line, static_cast<uint32_t>(hash + 2 + body.size()))};
    parseAnnotationComment(body, range, annotations, diags);
  }
  checkCaseOverrides(annotations, diags);
  return annotations;
}

bool isPython(const support::SourceFile &file) {
  const std::string &n = file.name();
  return n.size() > 3 && n.compare(n.size() - 3, 3, ".py") == 0;
}

} // namespace

ast::Annotations readAnnotations(const support::SourceFile &file,
                                 support::DiagnosticEngine &diags) {
  if (isPython(file))
    return readPythonAnnotations(file, diags);
  // The parser reads the annotations from the comment tokens, also when the file has
  // syntax errors; keep its annotation errors only (and a file too large to read them).
  support::DiagnosticEngine all(diags.sources());
  std::unique_ptr<ast::Module> module = parseModule(file, all);
  for (const support::Diagnostic &d : all.diagnostics())
    if (d.id == "bad-annotation" || d.id == "file-too-large")
      diags.report(d);
  return module->annotations();
}

void printAnnotations(const ast::Annotations &annotations, std::ostream &out) {
  if (annotations.expect) {
    out << "expect " << ast::toString(annotations.expect->verdict);
    if (annotations.expect->line)
      out << " " << *annotations.expect->line;
    out << "\n";
  }
  for (const ast::Annotations::Case &c : annotations.cases) {
    out << "expect-with " << ast::toString(c.expect.verdict) << " ";
    out << (c.expect.line ? std::to_string(*c.expect.line) : std::string("-")) << " ";
    if (!c.devices.empty())
      out << fmt::format("{}", fmt::join(c.devices, ","));
    else if (!c.meshes.empty())
      out << fmt::format("mesh:{}", fmt::join(c.meshes, "/"));
    else
      out << "-";
    for (const std::string &w : c.options)
      out << " " << w;
    out << "\n";
  }
  if (!annotations.devices.empty())
    out << fmt::format("devices {}\n", fmt::join(annotations.devices, " "));
  if (!annotations.meshes.empty())
    out << fmt::format("mesh {}\n", fmt::join(annotations.meshes, " "));
  if (!annotations.options.empty())
    out << fmt::format("options {}\n", fmt::join(annotations.options, " "));
}

} // namespace dkv::frontend
