// Lowering: a checked AST and a mesh instance -> the concurrency model (docs/model.md).
#pragma once

#include "model/Model.h"
#include "support/Diagnostics.h"

#include <cstdint>
#include <optional>

namespace dkv::ast {
class Module;
}

namespace dkv::lower {

/// Limits that keep lowering of pathological inputs bounded.
struct LowerLimits {
  /// Total events over all devices; a larger instance is an `instance-too-large` error.
  int64_t maxEvents = 4'000'000;
  int64_t maxDevices = 4096;
  /// Grid points plus loop iterations over all devices and invocations (a loop whose
  /// body makes no event still takes time to unroll).
  int64_t maxIterations = 4'000'000;
  /// Buffer elements over all devices (the executor stores every element of every
  /// buffer of every device).
  int64_t maxElements = int64_t{1} << 26;
  /// Semaphores over all devices.
  int64_t maxSemaphores = int64_t{1} << 22;
};

/// Instantiates `module` (which `analyze` accepted: every name resolved, every
/// compile-time value set) for its mesh: one process per device, invocations, grid
/// and loops unrolled, every per-device value evaluated. Reports, as diagnostics on
/// `diags`, what can only be checked per device (slices out of bounds, device ids out
/// of range, copies whose shapes differ, DMA sizes that are not a multiple of the
/// semaphore unit) and every value known only at run time that would decide control
/// flow, a device or an address (`unsupported`). Returns nullopt iff it reported an
/// error. `file` names the source in the program.
std::optional<model::Program> lower(const ast::Module &module, const std::string &file,
                                    const model::Options &options, support::DiagnosticEngine &diags,
                                    const LowerLimits &limits = {});

} // namespace dkv::lower
