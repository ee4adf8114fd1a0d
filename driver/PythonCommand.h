// The commands' entry for Python kernels (`*.py`), chosen by file extension.
#pragma once

#include "driver/Pipeline.h"
#include "frontend/AST.h"
#include "frontend/Sema.h"
#include "support/Diagnostics.h"
#include "support/Source.h"

#include <cstdint>
#include <memory>
#include <optional>

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

/// The frontend for a Python kernel: parses `file` with pyfront, reads its `# dkv:`
/// directives and those of `sidecar` (may be null; pytrace/Directives.h), traces it into
/// the kernel language's AST (pytrace/Tracer.h) and analyzes that with sema. The device
/// count and an entry's mesh: `devices` / `mesh` (the command line) over the directives;
/// no device count at all is `python-devices`. The helper calls it inlines are recorded
/// in `sources` (the manager holding `file`; SourceLoc::inlined). `tables` (-T,
/// --tables) give the contents of SMEM / scalar-prefetch tables, by kernel parameter
/// name, over what the call site says. Sets `ok` as frontend::loadModule does; returns
/// the module (null if parsing or tracing failed).
std::unique_ptr<ast::Module>
loadPythonModule(support::SourceManager &sources, const support::SourceFile &file,
                 const support::SourceFile *sidecar, std::optional<int64_t> devices,
                 const frontend::MeshSizes &mesh, support::DiagnosticEngine &diags, bool &ok,
                 const frontend::Tables &tables = {});

/// `dkv translate FILE [-o OUT]`: the kernel as the kernel language (frontend/DkPrinter.h);
/// for a Python file every line ends with a `// FILE.py:LINE` comment naming the Python
/// line it came from. Exit codes as `dkv parse`.
int translateCommand(const InstanceOptions &instance, const std::string &outPath, std::ostream &out,
                     std::ostream &err);

} // namespace dkv::driver
