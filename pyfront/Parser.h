// Parsing a Python file into pyfront's Python AST (the only code that sees its ANTLR types).
#pragma once

#include "pyfront/PyAST.h"
#include "support/Diagnostics.h"
#include "support/Source.h"

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

namespace dkv::pyfront {

/// Guards against pathological inputs. Every limit, when exceeded, is a diagnostic,
/// never a crash.
struct ParseLimits {
  /// Largest accepted file (`file-too-large`); JAX's 5500-line lowering.py is 220 KB.
  size_t maxSourceBytes = 1 << 20;
  /// Deepest nesting of brackets plus operators that the grammar nests by recursion
  /// (prefix `-`/`+`/`~`/`not`/`await`, `**`, `lambda`, conditional expressions) in
  /// one logical line (`python-too-deep`); bounds the generated parser's recursion.
  /// CPython's tokenizer allows 200 levels of brackets.
  unsigned maxNesting = 200;
  /// Deepest indentation (CPython's limit: "too many levels of indentation").
  unsigned maxIndent = 100;
  /// Highest expression tree (long operator or attribute chains nest the AST without
  /// brackets); bounds the recursion of AST walkers (`python-too-deep`).
  unsigned maxExprDepth = 1000;
};

/// Parses `file` as Python 3 (the syntax of docs/python.md). On success returns the
/// module; otherwise reports exactly one error, the first in the file as CPython
/// would report it (its message, e.g. "expected ':'", "unexpected indent"; ids in
/// docs/diagnostics.md, all starting with `python-` except `file-too-large`), and
/// returns null. Never throws.
std::unique_ptr<py::Module> parseModule(const support::SourceFile &file,
                                        support::DiagnosticEngine &diags,
                                        const ParseLimits &limits = {});

/// The value of a string literal's body as written between its quotes: Python's escapes
/// decoded as the parser decodes them (`\N{...}` and unknown escapes kept as written).
std::string decodeEscapes(std::string_view body, bool bytes);

} // namespace dkv::pyfront
