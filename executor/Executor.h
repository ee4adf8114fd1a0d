// The executor: runs a model::Program on simulated devices with real data, checks
// races (vector clocks), deadlocks, exit and lifetime rules as they happen, and
// explores every schedule of small instances. It implements docs/model.md exactly.
#pragma once

#include "model/Model.h"
#include "report/Finding.h"
#include "semantics/Machine.h"
#include "semantics/Witness.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace dkv::executor {

/// `dkv check --engine explore`.
struct ExploreOptions {
  uint64_t maxStates = 2'000'000; ///< visited-state budget; at it: inconclusive
  /// With a value: the budget is also at most this many bytes of states (the states of
  /// an instance with many devices and DMAs are large, and slow to search: `--engine
  /// auto` spends its explore phase only where a search can finish). 0: none.
  uint64_t maxStateBytes = 0;
  /// Partial-order reduction (docs/executor.md); off only to measure it.
  bool reduction = true;
  /// With `reduction`: also the rules for local copies (docs/executor.md, "Local
  /// copies"); off only to measure them against the reduction before them.
  bool localCopyReduction = true;
  /// With `reduction`: also the observer rules (docs/executor.md, "Remote DMAs and
  /// signals"); off only to measure them against the reduction before them.
  bool observerReduction = true;
  /// Streaming, progress and early stop (semantics::EngineEvents, its stop request
  /// polled every 64 states); may be null.
  const semantics::EngineEvents *events = nullptr;
  /// The most the visited-state table may take, in bytes (0: no limit): a new state
  /// that would pass it stops the search, incomplete ("memory limit reached" with the
  /// states and megabytes). The table grows in blocks of about 4 MB, so the process
  /// never holds much more than this.
  int64_t memoryBytes = 0;
};

/// Explores every schedule of the machine's program: the first witness (a shortest
/// schedule) of every property some schedule violates. Complete only if the whole
/// state space was searched; incomplete (with the states explored) at the budget, at
/// `memoryBytes`, when memory ran out or when the run's stop request was made. Deterministic. Never
/// throws. Each witness goes to `options.events` as soon as it is found (breadth-first order, the
/// order of `witnesses`); progress every 4096 expanded states.
semantics::EngineResult explore(const semantics::Machine &machine, const ExploreOptions &options);

/// Confirms one finding of any engine in the executor: replays its schedule with real
/// data and sets `confirmed` when the run sees the same property, `replayTried` always;
/// a race also gets its wrong value (findWrongValue along its schedule, input seed 0).
/// A pure function of the machine and the finding (its property and schedule), so a
/// finding reads the same whatever other findings there are and in whatever order an
/// engine found them. A static finding (no schedule) is left as it is.
void confirmFinding(const semantics::Machine &machine, report::Finding &finding);
/// confirmFinding on each of `findings`.
void confirmFindings(const semantics::Machine &machine, std::vector<report::Finding> &findings);

/// The value of element `element` of input buffer `buffer` on device `device` for a
/// run with input seed `seed`: a small integer in [1, 9], so sums are exact in every
/// dtype dkv models.
double inputValue(uint64_t seed, model::DeviceId device, model::BufferId buffer, int64_t element);

/// The elements (row-major) of a store's value (docs/executor.md "Compute"): every
/// node is evaluated to an array of its shape by its catalogue record (prim/Ops.def:
/// element-wise ops with NumPy's broadcasting and the record's function of one element,
/// then rounded to the node's element type), `load` gives a Load's region in row-major
/// order, `reg` a Register's value. The result has the root's element count (the store
/// broadcasts a single element and rounds to the destination's type, prim::roundTo).
std::vector<double>
evaluateValue(const model::ValueExpr &value,
              const std::function<std::vector<double>(const model::Region &)> &load,
              const std::function<double(model::RegisterId)> &reg);

/// Scheduling policies of one run.
enum class Policy {
  Random,     ///< uniformly among the enabled steps, from a seeded generator
  RoundRobin, ///< the next enabled actor after the last one, cyclically
  Priority,   ///< seeded random priorities per actor, re-drawn at a few points
  Replay,     ///< the given schedule (then stops)
};

struct RunOptions {
  Policy policy = Policy::Random;
  uint64_t seed = 0;         ///< for Random and Priority
  uint64_t inputSeed = 0;    ///< fills the input buffers (executor::inputValue)
  report::Schedule schedule; ///< Replay: the steps; other policies: a prefix taken first
  /// The vector-clock race check (Simulator); off, a run sees the races its own
  /// schedule shows and every other check, at a cost that does not grow with the mesh.
  bool raceClocks = true;
  /// The run's trace texts (RunResult::trace, and each finding's trace); off, findings
  /// carry only their schedule: what confirming a witness needs.
  bool recordTrace = true;
};

/// The outcome of one run.
struct RunResult {
  std::vector<report::Finding> findings; ///< engine "run"
  report::Schedule schedule;             ///< the steps taken
  report::Trace trace;
  bool completed = false;  ///< every device finished and no DMA is left
  size_t enabledAtEnd = 0; ///< steps still enabled where the run stopped
  /// Replay: index of the first step that was not enabled (the run stopped there),
  /// and why it was not.
  std::optional<size_t> divergedAt;
  std::string divergedWhy;
  /// Final data: [device][buffer] -> elements, row-major.
  std::vector<std::vector<std::vector<double>>> memory;
};

/// Runs the machine's program along one schedule chosen by `options`. Never throws.
RunResult runOnce(const semantics::Machine &machine, const RunOptions &options);

/// Functional confirmation of a race (docs/executor.md "Functional confirmation").
/// With `property` (the race's id, e.g. "race.0") and a `witness` a step of which
/// violates it: two runs follow the witness up to that step (the racing access, while
/// the other DMA's side is open), then take the two accesses' effects on memory in
/// each order (the access first, the other DMA's side held back; or that side first,
/// the access's device held back) and finish round-robin; the text names the first
/// element they end with different values in (outputs on the race's device first),
/// both values and which order gave which, e.g. "output[0] on device 1 ends as 5 when
/// the store to landing[:] at line 15 on device 1 runs first and as 0 when dma 0
/// (started at line 17 on device 0) lands in landing[:] on device 1 first (both runs
/// follow the witness schedule up to the race, ...)". Otherwise (no race, either
/// order cannot be taken, or both orders end alike) the first difference between
/// the witness (completed round-robin), round-robin and `schedules` seeded schedules,
/// e.g. "output[3] on device 1 is 2 with --seed 4 and 0 with --seed 0" (with a known
/// property: "; the executor cannot tell which value is expected"). Outputs are
/// compared first, then the others. nullopt if all runs agree.
std::optional<std::string> findWrongValue(const semantics::Machine &machine, uint64_t inputSeed,
                                          const report::Schedule *witness, int schedules = 24,
                                          const std::string &witnessName = "in the witness "
                                                                           "schedule",
                                          const std::string &property = "");

} // namespace dkv::executor
