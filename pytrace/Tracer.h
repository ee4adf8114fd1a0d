// The Python tracer: runs a Pallas TPU kernel file as CPython would and traces the kernels
// it reaches, as JAX does, into the kernel language's AST (docs/python.md).
#pragma once

#include "frontend/AST.h"
#include "frontend/Sema.h"
#include "pyfront/PyAST.h"
#include "pytrace/Directives.h"
#include "support/Diagnostics.h"
#include "support/Source.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace dkv::pytrace {

/// Facts the file does not state itself.
struct TraceOptions {
  /// `--devices`: what `jax.device_count()`, `jax.local_device_count()` and
  /// `len(jax.devices())` evaluate to. Required.
  int64_t devices = 0;
  /// The run's sources: the files of imported modules are added here, and the helper
  /// calls the tracer inlines are recorded (SourceLoc::inlined). Null: imports from disk
  /// are errors and inlined calls are not recorded.
  support::SourceManager *sources = nullptr;
  /// `-T NAME=JSON` / `--tables FILE`: contents of tables (SMEM integer inputs and
  /// scalar-prefetch operands), by kernel parameter name (docs/python.md "Tables").
  frontend::Tables tables;
  /// The file's `# dkv:` directives (with its sidecar's), or null. With an entry
  /// directive the call site's pallas_call is evaluated but not traced: the entry's
  /// kernel is, on `mesh`.
  const Directives *directives = nullptr;
  /// The mesh of an entry directive, resolved by the driver (docs/python.md
  /// "Directives": --devices over `# dkv: mesh` / `# dkv: devices`).
  std::vector<std::pair<std::string, int64_t>> mesh;
  /// `--python-path DIR`: more roots for imports, after the file's own package.
  std::vector<std::string> pythonPath;
  /// `--set NAME=VALUE`: module globals, over the directives' `set`s.
  std::vector<SetDirective> sets;
  /// `--call 'f(...)'` (or a `# dkv: call` directive): the entry is this call, evaluated
  /// after the top level.
  std::string call;
  /// `--tpu NAME` (or a `# dkv: tpu NAME` directive): the TPU chip whose facts JAX's
  /// device queries answer (pytrace/TpuChips.h); empty: none, those facts are opaque.
  std::string tpu;
  /// `--hypothesis-seed N`: the seed of the examples dkv draws for a `@hypothesis.given`
  /// test whose strategies have more examples than it runs (docs/python.md "Hypothesis").
  uint64_t hypothesisSeed = 0;
};

/// One instance a file holds: a kernel traced by one of its entries (the top level, a
/// test case, a function, the call), or an entry that stops before one.
struct FoundInstance {
  /// "" for the top level's kernel, "Class::test_x[case]", "func"; "#K" appended for the
  /// K-th kernel (K >= 2) of the same entry.
  std::string id;
  std::string kernel;                 ///< the kernel function's name (empty: none was traced)
  std::optional<std::string> skipped; ///< a skipped test and its reason
  bool failed = false;                ///< the entry stops at an error (reported when traced)
  std::string note;                   ///< what the instance covers (a hypothesis example), or empty
};

/// Runs the file's top level and every entry of it (each test case in a fresh run) and
/// lists the instances `dkv check FILE.py` checks, in order: the top level's kernels,
/// then the test cases'. An entry that traces no kernel and is not skipped gives no
/// instance unless it fails; a file with no instance at all gives one failing instance
/// "" (its error is python-no-kernel). With `want` (an entry the command line names,
/// `Class::test_x[case]`, its absl name, or a prefix of them up to `[` or `#`), only the
/// test cases it can select are run: a file of thousands of cases is not run whole to
/// check one. Never throws.
std::vector<FoundInstance> discoverInstances(const py::Module &module,
                                             const support::SourceFile &file,
                                             const TraceOptions &options,
                                             const std::string &want = "");

/// Traces the instance `id` (as discoverInstances names it; "" is the top level's first
/// kernel) into a `.dk` module (one mesh, one kernel) whose nodes carry the Python
/// source ranges. A skipped test case gives null with `skipped` set and no error. On an
/// unsupported construct, an opaque value that decides the model, a Python exception or
/// a Python `if` on a traced value, reports one error (`python-*` ids,
/// docs/diagnostics.md) and returns null. `note` gets what the instance covers (a
/// hypothesis example), empty for most. Never throws.
std::unique_ptr<ast::Module>
traceModule(const py::Module &module, const support::SourceFile &file, const TraceOptions &options,
            support::DiagnosticEngine &diags, const std::string &id = "",
            std::optional<std::string> *skipped = nullptr, std::string *note = nullptr);

} // namespace dkv::pytrace
