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

namespace dkv::executor {

/// `dkv check --engine explore`.
struct ExploreOptions {
  uint64_t maxStates = 2'000'000; ///< visited-state budget; at it: inconclusive
};

/// Explores every schedule of `program` (which passed model::verifyProgram).
/// Verified only if the whole state space was searched without a finding;
/// Inconclusive (with states explored) at the budget. Findings carry a trace and the
/// schedule that reaches them. Deterministic. Never throws.
report::Verdict explore(const model::Program &program, const ExploreOptions &options);

/// `dkv run`: one schedule.
struct RunConfig {
  std::optional<uint64_t> seed;  ///< random policy with this seed (printed)
  std::string scheduleFile;      ///< replay this schedule file
  bool roundRobin = false;       ///< round-robin policy
  std::string writeSchedule;     ///< write the schedule taken to this file
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

} // namespace dkv::executor
