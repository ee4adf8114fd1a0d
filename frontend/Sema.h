// Semantic analysis of the dkv AST: name resolution, types, static checks, constants.
#pragma once

#include "frontend/AST.h"
#include "support/Diagnostics.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace dkv::frontend {

/// Values of `param`s given on the command line (`-D NAME=V`, `--devices V`).
using Defines = std::map<std::string, int64_t>;

/// Contents given on the command line for a table (`-T NAME=JSON`, `--tables FILE`):
/// a rectangular nested list of integers, `values` row-major, `shape` its nesting. It
/// has the table's shape (every device) or one more leading dimension of the number of
/// devices (row d for device d), as a table's default contents.
struct TableValue {
  std::vector<int64_t> shape;
  std::vector<int64_t> values;
  std::string origin; ///< for messages ("ORIGIN contents of table ..."): "-T" or the file name
};
using Tables = std::map<std::string, TableValue>;

/// Largest mesh (number of devices) sema accepts.
inline constexpr int64_t kMaxMeshDevices = 4096;

/// Largest signal increment or wait value: TPU semaphores are 32-bit counters (and
/// the bound keeps every sum of amounts over an instance far from 64-bit overflow).
inline constexpr int64_t kMaxSemaphoreAmount = INT32_MAX;

/// Checks a parsed module (precondition: the parser reported no errors).
///
/// Resolves every NameExpr to its Decl, computes every expression's type, evaluates
/// params (defines override defaults), consts, mesh axis sizes, shapes, semaphore
/// array sizes, the grid and the collective id, and reports every error that can be
/// found before instantiating the kernel for a device (ids in docs/diagnostics.md):
/// unknown names, redefinitions, type errors, shape / dtype mismatches, constant
/// out-of-bounds slices and device ids, semaphore kind errors, writes to `in`
/// parameters, missing param values, defines naming no param, ...
/// Sets the contents of every table (`tables` override the defaults; a name that is
/// no table, or contents of the wrong shape, range or count, is an error).
/// Returns true if no error was reported. Never throws.
bool analyze(ast::Module &module, const Defines &defines, support::DiagnosticEngine &diags,
             const Tables &tables = {});

/// Evaluates `expr` if it is a compile-time constant: literals, params, consts,
/// `axis_size`, `num_programs` and integer arithmetic / comparisons / logic on them
/// (booleans are 1 / 0). Precondition: `analyze` ran (it uses NameExpr::decl() and
/// the values stored on declarations). Returns nullopt for per-device values
/// (`axis_index`, `program_id`, lets, loop variables), runtime values, division by
/// zero and overflow. The operators are those of frontend::evalIntExpr (IntEval.h).
std::optional<int64_t> evalConst(const ast::Expr &expr);

/// Handles `--devices V` before sema: the mesh must have exactly one axis. If its
/// size is a bare param name, sets `defines[param] = devices` (an explicit -D of the
/// same param must agree) and returns the param name. If the size is any other
/// expression of literals, params and consts, it must evaluate to `devices`; then
/// returns an empty string. On a mismatch, several axes or no mesh, reports an
/// error (`devices-mismatch`) and returns nullopt.
std::optional<std::string> applyDevices(const ast::Module &module, int64_t devices,
                                        Defines &defines, support::DiagnosticEngine &diags);

/// `--mesh x=2,y=4`: a size for every named axis, in the order given.
using MeshSizes = std::vector<std::pair<std::string, int64_t>>;

/// Handles `--mesh` before sema, as applyDevices does for one axis: `mesh` must give
/// a size for every axis of the file's mesh (and of its tensorcore_mesh) and name no other. An axis
/// whose size is a bare param name sets `defines[param]` (an explicit -D, or another axis sized by
/// the same param, must agree); any other size expression of literals, params and consts must
/// evaluate to the given size. On a mismatch, an unknown or missing axis or no mesh, reports an
/// error (`mesh-mismatch`) and returns false.
bool applyMesh(const ast::Module &module, const MeshSizes &mesh, Defines &defines,
               support::DiagnosticEngine &diags);

/// Parses `x=2,y=4` (a `--mesh` value or a `// mesh:` annotation's mesh): identifiers
/// with sizes 1..4096, each axis once. Returns false and sets `error` if malformed.
bool parseMeshSizes(std::string_view text, MeshSizes &mesh, std::string &error);

/// `x=2,y=4`: the form parseMeshSizes reads.
std::string meshSizesText(const MeshSizes &mesh);

} // namespace dkv::frontend
