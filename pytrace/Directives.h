// `# dkv:` directives of a Python kernel file and of its sidecar file (`kernel.py.dkv`
// or `--directives FILE`): the facts of a call site that is not in the file (a library
// kernel), docs/python.md "Directives".
#pragma once

#include "frontend/AST.h"
#include "frontend/Sema.h"
#include "support/Diagnostics.h"
#include "support/Source.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace dkv::pytrace {

/// A Python literal of a `set` directive: int, bool, None, str, tuple, list.
struct Literal {
  enum class K { Int, Bool, None, Str, Tuple, List };
  K k = K::None;
  int64_t i = 0;
  bool b = false;
  std::string s;
  std::vector<Literal> items;
};

/// One parameter of an `entry` directive, in the kernel's order: the pallas_call's
/// inputs (`in`), outputs (`out`) and scratch (`scratch`, also every semaphore).
struct EntryParam {
  enum class Role { In, Out, Scratch };
  std::string name;
  support::SourceRange range;
  Role role = Role::In;
  bool typed = false; ///< false: `NAME` alone (its type is still unknown: an error when traced)
  bool isSem = false;
  ast::SemKind semKind = ast::SemKind::Dma;
  ast::DType dtype = ast::DType::F32;
  ast::MemSpace space = ast::MemSpace::Vmem;
  std::vector<int64_t> dims; ///< the buffer's shape, or the semaphore array's
};

/// `# dkv: entry KERNEL(PARAM, ...) [collective_id=N] [grid=(A, ...)]
/// [skip_device_barrier=True]`.
struct Entry {
  std::string kernel;
  support::SourceRange range;
  std::vector<EntryParam> params;
  std::optional<int64_t> collectiveId;
  std::vector<int64_t> grid;
  bool skipDeviceBarrier = false;
};

/// `# dkv: set NAME=VALUE` (the module global NAME is VALUE, whatever the file assigns)
/// and `# dkv: set NAME()=VALUE` (NAME is a function of no arguments returning VALUE).
struct SetDirective {
  std::string name;
  bool call = false;
  Literal value;
  support::SourceRange range;
  /// `set NAME()=EXPR` with a value that is not a literal: the Python expression, which
  /// each call evaluates in the module's globals (empty: `value`), and where it starts
  /// (1-based line and column of the directive's line).
  std::string expression;
  uint32_t exprLine = 0, exprCol = 0;
};

/// The directives of a file and its sidecar, merged: a fact the sidecar states replaces
/// the file's (the sidecar is nearer the command line).
struct Directives {
  std::optional<int64_t> devices;
  support::SourceRange devicesRange;
  std::vector<std::pair<std::string, int64_t>> mesh; ///< empty: none
  support::SourceRange meshRange;
  std::optional<Entry> entry;
  std::map<std::string, SetDirective> sets;
  /// `# dkv: table NAME=[[...], ...]`: a table's contents (as `-T NAME=JSON`; the
  /// command line's replace them).
  frontend::Tables tables;
  /// `# dkv: call f(...)`: a Python call, the file's entry (as `--call`).
  std::string call;
  support::SourceRange callRange;
  /// `# dkv: tpu NAME`: the TPU chip (as `--tpu NAME`; pytrace/TpuChips.h).
  std::string tpu;
};

/// Reads the `# dkv:` directive lines of `file` into `out` (a fact already in `out` is
/// replaced). A directive line is a comment line (nothing but blanks before `#`) whose
/// text starts with `dkv:`. `sidecar`: every line of the file must be a directive, a
/// comment or blank. Malformed directives are `python-directive` errors with their
/// position.
/// Returns false on an error.
bool readDirectives(const support::SourceFile &file, bool sidecar, Directives &out,
                    support::DiagnosticEngine &diags);

/// The kernel language's spelling of an entry parameter's type (`any f32[8, 128]`,
/// `dma_sem[2]`), for messages.
std::string paramTypeText(const EntryParam &p);

} // namespace dkv::pytrace
