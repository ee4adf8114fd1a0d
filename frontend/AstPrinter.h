// Printing the AST as an indented tree (the output of `dkv parse`).
#pragma once

#include "frontend/AST.h"

#include <iosfwd>

namespace dkv::frontend {

/// Prints `module` as a stable, indented tree: one node per line as
/// `[role: ]Kind details @line:col`, children indented by two spaces. After sema, names
/// show their declaration (`-> Kind@line:col`), expressions their type (`: type`) and
/// declarations their evaluated sizes. The format is golden-tested (tests/golden/parse).
void printAst(const ast::Module &module, std::ostream &out);

} // namespace dkv::frontend
