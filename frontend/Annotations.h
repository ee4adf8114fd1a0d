// The annotations of an example kernel (`// expect:`, `// devices:`, `// mesh:`,
// `// options:`).
#pragma once

#include "frontend/AST.h"
#include "support/Diagnostics.h"
#include "support/Source.h"

#include <iosfwd>

namespace dkv::frontend {

/// The annotations of `file` as the parser reads them from its line comments
/// (docs/language.md, "Expected verdicts"). Reports to `diags` only malformed or
/// duplicate annotations (`bad-annotation`, with file:line:col) and `file-too-large`:
/// other errors of the file do not matter here (a `static-error` example may not even
/// parse).
ast::Annotations readAnnotations(const support::SourceFile &file, support::DiagnosticEngine &diags);

/// Prints `annotations` in the stable, line-based form of `dkv parse --annotations`
/// (docs/examples.md), one line per annotation present, in this order:
///   expect VERDICT [LINE]      e.g. `expect race 26`, `expect ok`
///   expect-with VERDICT LINE DEVICES OPTION...   one per `// expect: ... with ...`, in
///                              file order: LINE `-` when none; DEVICES the counts of its
///                              `--devices` joined by ',', `mesh:M1/M2` for its `--mesh`
///                              values, or `-` (the file's); then its other option words,
///                              e.g. `expect-with ok - 3 --dma-order link`
///   devices N...               every listed count ascending, a range expanded
///   mesh M...                  every mesh, normalised (`x=2,y=2`)
///   options WORD...            the words of every options comment, in order
void printAnnotations(const ast::Annotations &annotations, std::ostream &out);

} // namespace dkv::frontend
