// Lowering: a checked AST and a mesh instance -> the concurrency model (docs/model.md).
#pragma once

#include "model/Builder.h"
#include "model/Model.h"
#include "support/Diagnostics.h"

#include <optional>
#include <string>

namespace dkv::ast {
class Module;
}

namespace dkv::lower {

/// Instantiates `module` (which `analyze` accepted: every name resolved, every
/// compile-time value set) for its mesh: one process per device, invocations, grid
/// and loops unrolled, every per-device value evaluated. Reports, as diagnostics on
/// `diags`, what can only be checked per device (slices out of bounds, device ids out
/// of range, copies whose shapes differ, DMA sizes that are not a multiple of the
/// semaphore unit) and every value known only at run time that would decide control
/// flow, a device or an address (`unsupported`). Returns nullopt iff it reported an
/// error; `limits` bound the instance (`instance-too-large`). `file` names the source
/// in the program. The rules of the model itself (entry barrier, waits, chunk units,
/// flattened semaphore arrays, limits, DMA sizes) are model::Builder's.
std::optional<model::Program> lower(const ast::Module &module, const std::string &file,
                                    const model::Options &options, support::DiagnosticEngine &diags,
                                    const model::BuildLimits &limits = {});

} // namespace dkv::lower
