// Printing the Python AST as an indented tree (`dkv parse kernel.py`; golden tests).
#pragma once

#include "pyfront/PyAST.h"

#include <ostream>

namespace dkv::pyfront {

/// Prints `module` one node per line, children indented by two spaces under a field
/// label (`value:`, `args:` ...), each node with its kind, its name or operator where it
/// has one, and its first position as `@line:col`. Deterministic; recursion follows
/// the tree, whose height the parser bounds (ParseLimits::maxExprDepth).
void printModule(const py::Module &module, std::ostream &out);

} // namespace dkv::pyfront
