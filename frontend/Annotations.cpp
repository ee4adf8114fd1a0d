// The annotations of an example kernel, read once for every tool and test script.
#include "frontend/Annotations.h"

#include "frontend/Parser.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <ostream>

namespace dkv::frontend {

ast::Annotations readAnnotations(const support::SourceFile &file,
                                 support::DiagnosticEngine &diags) {
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
  if (!annotations.devices.empty())
    out << fmt::format("devices {}\n", fmt::join(annotations.devices, " "));
  if (!annotations.meshes.empty())
    out << fmt::format("mesh {}\n", fmt::join(annotations.meshes, " "));
  if (!annotations.options.empty())
    out << fmt::format("options {}\n", fmt::join(annotations.options, " "));
}

} // namespace dkv::frontend
