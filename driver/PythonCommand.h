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

/// Splits a command-line path that names an instance in a Python file, pytest's way
/// (`FILE.py::Class::test_x[case]`, `FILE.py::func`, `FILE.py#2`), into the file and the
/// entry; any other path is the file with an empty entry.
void splitPythonTarget(const std::string &path, std::string &file, std::string &entry);

/// One instance of a Python file as `dkv check` plans it (pytrace::discoverInstances).
struct PythonInstance {
  std::string entry;  ///< InstanceOptions::entry
  std::string kernel; ///< the kernel function (empty: none)
  std::optional<std::string> skipped;
  bool failed = false;
  std::string note; ///< what the instance covers (a hypothesis example), or empty
};

/// The instances of the Python file `options.file` (every kernel of its top level, its
/// test cases, its --call), the ones `options.entry` selects when it is set (its cases and
/// kernels). Empty when the file cannot be read or traced at all (loading it reports why).
std::vector<PythonInstance> discoverPythonInstances(const InstanceOptions &options);

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
/// name, over what the call site says. `instance` gives the entry, --call, --set and
/// --python-path (InstanceOptions). Sets `ok` as frontend::loadModule does; returns
/// the module (null if parsing or tracing failed, or if the entry is a test case that
/// skipped itself: then `skipped` holds its reason and `ok` is true).
std::unique_ptr<ast::Module>
loadPythonModule(support::SourceManager &sources, const support::SourceFile &file,
                 const support::SourceFile *sidecar, std::optional<int64_t> devices,
                 const frontend::MeshSizes &mesh, support::DiagnosticEngine &diags, bool &ok,
                 const frontend::Tables &tables = {}, const InstanceOptions *instance = nullptr,
                 std::optional<std::string> *skipped = nullptr, std::string *note = nullptr);

/// `dkv translate FILE [-o OUT]`: the kernel as the kernel language (frontend/DkPrinter.h);
/// for a Python file every line ends with a `// FILE.py:LINE` comment naming the Python
/// line it came from. Exit codes as `dkv parse`.
/// `dkv list FILE.py`: the instances `dkv check FILE.py` checks, one per line
/// (`FILE.py::Class::test_x[case]  kernel`), with skipped and failing entries marked, and
/// the entries that trace no kernel.
int listCommand(const InstanceOptions &instance, std::ostream &out, std::ostream &err);

int translateCommand(const InstanceOptions &instance, const std::string &outPath, std::ostream &out,
                     std::ostream &err);

} // namespace dkv::driver
