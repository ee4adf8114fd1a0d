// The frontend in one call: parse, apply --devices and -D, analyze.
#pragma once

#include "frontend/AST.h"
#include "frontend/Sema.h"
#include "support/Diagnostics.h"
#include "support/Source.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace dkv::frontend {

/// Parses `NAME=VALUE` (a `-D` option). Returns false and sets `error` if malformed
/// (the name must be an identifier, the value a 64-bit integer) or if `defines`
/// already holds a different value for the name.
bool parseDefine(const std::string &text, Defines &defines, std::string &error);

/// Parses and checks `file`: parseModule, then applyDevices (if `devices`), then
/// analyze with `defines` and `tables`. Stops after the first stage that reports errors. Returns
/// the module (null only if parsing produced none) and sets `ok` to whether the
/// module is checked and error-free, i.e. ready for lowering. Never throws.
std::unique_ptr<ast::Module> loadModule(const support::SourceFile &file, Defines defines,
                                        std::optional<int64_t> devices,
                                        support::DiagnosticEngine &diags, bool &ok,
                                        const Tables &tables = {});

/// The same with `--mesh` sizes (applyMesh, if `mesh` is not empty; at most one of
/// `devices` and `mesh` is given).
std::unique_ptr<ast::Module> loadModule(const support::SourceFile &file, Defines defines,
                                        std::optional<int64_t> devices, const MeshSizes &mesh,
                                        support::DiagnosticEngine &diags, bool &ok,
                                        const Tables &tables = {});

} // namespace dkv::frontend
