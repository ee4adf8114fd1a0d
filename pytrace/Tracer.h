// The Python tracer: evaluates a Pallas TPU kernel file as JAX does at trace time and
// emits the kernel language's AST (docs/python.md).
#pragma once

#include "frontend/AST.h"
#include "frontend/Sema.h"
#include "pyfront/PyAST.h"
#include "pytrace/Directives.h"
#include "support/Diagnostics.h"
#include "support/Source.h"

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace dkv::pytrace {

/// Facts the file does not state itself.
struct TraceOptions {
  /// `--devices`: what `jax.device_count()`, `jax.local_device_count()` and
  /// `len(jax.devices())` evaluate to. Required.
  int64_t devices = 0;
  /// Where the helper calls the tracer inlines are recorded (SourceLoc::inlined), so
  /// that findings and diagnostics at a helper's statements name the calls that reached
  /// them; null: not recorded.
  support::SourceManager *sources = nullptr;
  /// `-T NAME=JSON` / `--tables FILE`: contents of tables (SMEM integer inputs and
  /// scalar-prefetch operands), by kernel parameter name. They make a table whose
  /// contents the call site does not show checkable; sema applies them over the call
  /// site's contents (docs/python.md "Tables").
  frontend::Tables tables;
  /// The file's `# dkv:` directives (with its sidecar's), or null. With an entry
  /// directive the call site's pallas_call is evaluated but not traced: the entry's
  /// kernel is, on `mesh`.
  const Directives *directives = nullptr;
  /// The mesh of an entry directive, resolved by the driver (docs/python.md
  /// "Directives": --devices over `# dkv: mesh` / `# dkv: devices`).
  std::vector<std::pair<std::string, int64_t>> mesh;
};

/// Traces `module` (parsed from `file`): runs its top level, and the kernel that the
/// first `shard_map(pl.pallas_call(kernel, ...), ...)(array)` call reaches, into a `.dk`
/// module (one mesh, one kernel) whose nodes carry the Python source ranges. On an
/// unsupported construct, an unknown API or a Python `if` on a traced value, reports one
/// error (`python-*` ids, docs/diagnostics.md) and returns null. Never throws.
std::unique_ptr<ast::Module> traceModule(const py::Module &module, const support::SourceFile &file,
                                         const TraceOptions &options,
                                         support::DiagnosticEngine &diags);

} // namespace dkv::pytrace
