// Printing the AST back as kernel-language source (`dkv translate`).
#pragma once

#include "frontend/AST.h"

#include <functional>
#include <iosfwd>
#include <string>

namespace dkv::frontend {

/// Prints `module` as `.dk` source that parses back to the same module (docs/language.md):
/// params, consts, the mesh and the kernel, statements one per line, indented by two
/// spaces, every compound operand in parentheses. `comment`, if given, is called with the
/// range of every statement and kernel parameter; a non-empty result is appended to its
/// line as `  // text` (`dkv translate` points each line back at its Python line).
void printDk(const ast::Module &module, std::ostream &out,
             const std::function<std::string(const support::SourceRange &)> &comment = {});

} // namespace dkv::frontend
