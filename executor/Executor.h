// The executor: runs a model::Program on simulated devices with real data, checks
// races (vector clocks), deadlocks, exit and lifetime rules as they happen, and
// explores every schedule of small instances. It implements docs/model.md exactly.
#pragma once

#include "model/Model.h"
#include "report/Finding.h"
#include "support/Source.h"

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace dkv::executor {

/// `dkv check --engine explore`.
struct ExploreOptions {
  uint64_t maxStates = 2'000'000; ///< visited-state budget; at it: inconclusive
  /// Partial-order reduction (docs/executor.md); off only to measure it.
  bool reduction = true;
};

/// Explores every schedule of `program` (which passed model::verifyProgram).
/// Verified only if the whole state space was searched without a finding;
/// Inconclusive (with states explored) at the budget. Findings carry a trace and the
/// schedule that reaches them. Deterministic. Never throws.
report::Verdict explore(const model::Program &program, const ExploreOptions &options);

/// `dkv run`: one schedule.
struct RunConfig {
  std::optional<uint64_t> seed; ///< random policy with this seed (printed)
  std::string scheduleFile;     ///< replay this schedule file
  bool roundRobin = false;      ///< round-robin policy
  std::string writeSchedule;    ///< write the schedule taken to this file
};

/// Runs one schedule and prints findings (with traces) or the final outputs to `out`.
/// Returns the exit code (0 ok, 10 findings, 2 bad schedule file, 1 unwritable file).
int runCommand(const model::Program &program, const support::SourceFile &source,
               const RunConfig &config, std::ostream &out, std::ostream &err);

/// Replays `schedule` (e.g. from spin's trail) in the executor. Returns the findings
/// the executor sees along it (and at its end, if it ends in a deadlock or exit).
/// Used to confirm other engines' counterexamples.
std::vector<report::Finding> replay(const model::Program &program,
                                    const report::Schedule &schedule);

/// Confirms other engines' findings (spin's): replays each finding's schedule in the
/// executor and sets `confirmed` when the replay reaches a finding of the same kind at
/// the same primary location, `replayTried` always; the first race also gets a
/// functional confirmation (`wrongValue`, see findWrongValue) named after `engine`.
void confirmFindings(const model::Program &program, std::vector<report::Finding> &findings,
                     const std::string &engine);

/// The value of element `element` of input buffer `buffer` on device `device` for a
/// run with input seed `seed`: a small integer in [1, 9], so sums are exact in every
/// dtype dkv models.
double inputValue(uint64_t seed, model::DeviceId device, model::BufferId buffer, int64_t element);

/// Rounds `value` to what a buffer of `type` can hold: f32 and bf16 rounding, integer
/// truncation with two's-complement wrap-around; non-finite values become 0 in integer
/// types.
double roundToType(double value, model::DType type);

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
};

/// The outcome of one run.
struct RunResult {
  std::vector<report::Finding> findings; ///< engine "run"
  report::Schedule schedule;             ///< the steps taken
  report::Trace trace;
  bool completed = false; ///< every device finished and no DMA is left
  /// Replay: index of the first step that was not enabled (the run stopped there).
  std::optional<size_t> divergedAt;
  /// Final data: [device][buffer] -> elements, row-major.
  std::vector<std::vector<std::vector<double>>> memory;
};

/// Runs `program` (which passed model::verifyProgram; otherwise nothing runs and the
/// result is empty) along one schedule chosen by `options`. Never throws.
RunResult runOnce(const model::Program &program, const RunOptions &options);

/// Functional confirmation of a race: runs `witness` (completed with round-robin)
/// and a few dozen seeded schedules with the same inputs, and describes the first
/// element whose final value differs between two of them, e.g. "output[3] on device 1
/// is 2 with seed 4 and 0 with seed 0". Output buffers are compared first, then the
/// others. nullopt if all runs agree.
std::optional<std::string>
findWrongValue(const model::Program &program, uint64_t inputSeed, const report::Schedule *witness,
               int schedules = 24, const std::string &witnessName = "in the witness schedule");

/// Gives the first race of `findings` that shows no wrong value yet its functional
/// confirmation: findWrongValue along that race's schedule, with input seed 0, the
/// witness named `witnessName`. Other findings are left as they are.
void showWrongValueOfFirstRace(const model::Program &program,
                               std::vector<report::Finding> &findings,
                               const std::string &witnessName);

/// The schedule file format (docs/executor.md): one step per line, `device D`,
/// `send K` or `land K`; `#` starts a comment; blank lines are ignored; an optional
/// `inputs SEED` line gives the seed of the input data (`dkv run` writes it).
std::string formatSchedule(const report::Schedule &schedule,
                           std::optional<uint64_t> inputSeed = std::nullopt);
/// Parses a schedule file's text. On a malformed line returns nullopt and sets
/// `errorLine` (1-based) and `error` (lowercase, no period).
std::optional<report::Schedule> parseSchedule(const std::string &text, size_t &errorLine,
                                              std::string &error);

} // namespace dkv::executor
