// Parsing a `.dk` file into the dkv AST (the only frontend code that sees ANTLR).
#pragma once

#include "frontend/AST.h"
#include "support/Diagnostics.h"
#include "support/Source.h"

#include <cstddef>
#include <memory>

namespace dkv::frontend {

/// Guards against pathological inputs. Every limit, when exceeded, is a diagnostic
/// (`file-too-large`, `too-deep`), never a crash.
struct ParseLimits {
  /// Largest accepted file; kernels are a few KB.
  size_t maxSourceBytes = 1 << 20;
  /// Deepest bracket nesting ('(', '[', '{') plus chained prefix operators ('-', 'not');
  /// bounds the recursion of the generated parser.
  unsigned maxNesting = 200;
  /// Deepest expression tree (long operator chains nest the AST without brackets);
  /// bounds the recursion of the AST walkers.
  unsigned maxExprDepth = 256;
};

/// Reads one annotation comment (`expect: ...`, `devices: ...`, `mesh: ...`, `options:
/// ...`, `dkv: allow ...`; `body` is the comment's text after its `//` or `#`) into
/// `annotations`, as the parser does for the `// ...` comments of a `.dk` file: a
/// malformed annotation is a `bad-annotation` error at `range`; other comments are ignored.
void parseAnnotationComment(std::string_view body, support::SourceRange range,
                            ast::Annotations &annotations, support::DiagnosticEngine &diags);

/// After all annotation comments are read: a `// expect: ... with` comment that sets a
/// param (-D) or a table (-T) that the options comment sets too is a `bad-annotation`
/// error (the command line refuses a table set twice).
void checkCaseOverrides(const ast::Annotations &annotations, support::DiagnosticEngine &diags);

/// Parses `file` into a Module. Syntax errors (all of the file, one run), lexical
/// problems and malformed expectation comments are reported to `diags` as errors with
/// ids from docs/diagnostics.md. Never throws and never returns null: after errors the
/// Module may be empty or partial and must not be given to sema (check
/// `diags.hasErrors()`).
std::unique_ptr<ast::Module> parseModule(const support::SourceFile &file,
                                         support::DiagnosticEngine &diags,
                                         const ParseLimits &limits = {});

} // namespace dkv::frontend
