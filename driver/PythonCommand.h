// The commands' entry for Python kernels (`*.py`), chosen by file extension.
#pragma once

#include "driver/Pipeline.h"

#include <ostream>
#include <string_view>

namespace dkv::driver {

/// True if `path` names a Python file (extension `.py`); such files go to pyfront.
bool isPythonFile(std::string_view path);

/// `dkv parse FILE.py`: parses the file with pyfront and prints its Python AST
/// (pyfront/AstPrinter.h); a parse error is rendered to `err` (one error, CPython's
/// message) with exit code 2. Options that need the tracer (`-D`, `--devices`, instance
/// options) are a usage error (exit 1), not ignored.
int parsePythonCommand(const InstanceOptions &instance, std::ostream &out, std::ostream &err);

} // namespace dkv::driver
