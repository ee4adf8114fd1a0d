// Parsing a `.dk` file into the dkv AST (the only frontend code that sees ANTLR).
#pragma once

#include "frontend/AST.h"
#include "support/Diagnostics.h"
#include "support/Source.h"

#include <cstddef>
#include <memory>
#include <string_view>

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

/// Parses `file` into a Module (with its line comments, `Module::comments()`, which the
/// parser does not read: frontend/Annotations.h does). Syntax errors (all of the file, one
/// run) and lexical problems are reported to `diags` as errors with
/// ids from docs/diagnostics.md. Never throws and never returns null: after errors the
/// Module may be empty or partial and must not be given to sema (check
/// `diags.hasErrors()`).
std::unique_ptr<ast::Module> parseModule(const support::SourceFile &file,
                                         support::DiagnosticEngine &diags,
                                         const ParseLimits &limits = {});

/// Whether `word` is a keyword of the kernel language (`kernel`, `let`, `inf`, ...), from
/// the grammar's own vocabulary: a name the printers and the Python tracer must not
/// give anything.
bool isKeyword(std::string_view word);

} // namespace dkv::frontend
