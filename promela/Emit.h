// The Promela emitter: one model::Program -> one self-contained Promela model for spin.
#pragma once

#include "model/Model.h"
#include "report/Finding.h"
#include "semantics/Properties.h"
#include "support/Stop.h"

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace dkv::promela {

/// Choices that change the text but not the meaning of the emitted model.
struct EmitOptions {
  /// File name the header's "how to run" lines refer to (e.g. "right_permute.pml").
  std::string modelFileName = "model.pml";
  /// Emit the `printf("DKV ...")` step lines that checkWithSpin parses from a trail
  /// replay. Without them a counterexample cannot be mapped back to a trace.
  bool tracePrintfs = true;
  /// Properties already found, not to be checked again: their asserts are left out,
  /// and the waits of a skipped deadlock property are labelled as valid end states
  /// (checkWithSpin searches again for the others).
  std::set<semantics::PropertyIndex> skip;
  /// The run's stop request (time limit, signal): emitting a large model takes seconds,
  /// so it is polled between DMAs, and a stopped emission returns "" (the caller reports
  /// the stop). nullptr: not stopped.
  const support::StopToken *stop = nullptr;
};

/// What one `assert` of the emitted model checks: an obligation of the property list
/// (semantics::Properties), or that a semaphore fits its Promela integer type (a
/// limit of the model, not of the kernel).
struct Check {
  bool overflow = false;
  semantics::ObligationIndex obligation = -1; ///< when !overflow
  std::string message;                        ///< overflow: why the model is too small
  /// The step of docs/model.md the assert belongs to (a device's event, a DMA's send or
  /// land chunk). A d_step with fused DMA chunks (docs/promela.md) prints the trace
  /// lines of its later parts in a replay even when an earlier assert failed, so the
  /// witness ends at this step's last occurrence in the replayed trace.
  report::ScheduleStep step;
};

/// The preprocessor switches of the emitted model: `spin -DCHECK_RACES=0 -a` compiles
/// the race asserts out (likewise exit and lifetime). Overflow asserts have none.
inline constexpr const char *kCheckRaces = "CHECK_RACES";
inline constexpr const char *kCheckExit = "CHECK_EXIT";
inline constexpr const char *kCheckLifetime = "CHECK_LIFETIME";

/// Maps the emitted text back to the kernel: filled by emitPromela.
struct LineMap {
  /// Kernel source location of each Promela line (index = line - 1); invalid if none.
  std::vector<support::SourceLoc> source;
  /// Promela line of each assert -> index into `checks`.
  std::map<int, int> checkAtLine;
  std::vector<Check> checks;
  /// Upper bound on the length of any run in transitions, with margin: pan's -m.
  int64_t depthBound = 0;
  /// Per SemId: how many semaphore units one stored unit stands for: 1 for a DMA
  /// semaphore (its amounts follow the model's SEM_UNIT define), else the gcd of every
  /// amount that touches it (exact because all of them are multiples).
  std::vector<int64_t> semScale;

  /// The check asserted on Promela line `line` (1-based), or nullptr.
  const Check *checkAt(int line) const;
};

/// Emits the Promela model of the properties' program (which must pass
/// model::verifyProgram): one proctype per device, one process running every DMA's
/// send and land chunks as a nondeterministic loop, the obligations of races, exit
/// and lifetime rules as asserts (one per obligation, commented with its property id)
/// and deadlocks as invalid end states. Deterministic: identical programs give
/// identical text. If `map` is non-null it is filled with the line map needed to read
/// pan's results.
std::string emitPromela(const semantics::Properties &properties, const EmitOptions &options,
                        LineMap *map);

} // namespace dkv::promela
