// What an engine returns and how it becomes a report: an engine only says "property
// P is violated, witness schedule S"; this code replays S on the step table, checks
// that it reaches P, and builds the Finding (the property's message and spans, the
// witness's own detail, the trace). Every engine's findings are built here, so the
// same bug reads the same whichever engine found it.
#pragma once

#include "report/Finding.h"
#include "semantics/Machine.h"
#include "semantics/Properties.h"
#include "semantics/Shorten.h"
#include "support/Stop.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace dkv::semantics {

/// One violated property and a schedule from the initial state that shows it: the
/// property is violated by the schedule's last step, or (deadlock) in the state after
/// the last step, which has no enabled step.
struct Witness {
  Witness() = default;
  Witness(PropertyIndex p, report::Schedule s, std::string o = {})
      : property(p), schedule(std::move(s)), origin(std::move(o)) {}

  PropertyIndex property = 0;
  report::Schedule schedule;
  /// How the engine found it when that is worth saying (report::Finding::found), e.g.
  /// in a window of the devices; empty otherwise.
  std::string origin;
};

/// The result of one engine run, before it becomes a report::Verdict.
struct EngineResult {
  std::vector<Witness> witnesses;
  /// The whole state space was searched: no witness means verified.
  bool complete = true;
  /// Why the search is incomplete (with the numbers), empty when complete.
  std::string reason;
  /// Engine statistics in a stable order: "states" -> "1234", "time" -> "0.3 s".
  std::vector<std::pair<std::string, std::string>> stats;
  /// One record per solver query (z3), each in the form of `stats`; keys ending in
  /// "time" are times (not byte-identical).
  std::vector<std::vector<std::pair<std::string, std::string>>> queries;
  /// The form of each semaphore's wait constraints (z3), by semaphore then device.
  std::vector<report::SemaphoreForm> semaphoreForms;
  /// The engine whose witnesses these are, when an engine hands the instance to
  /// another (`--engine auto`: explore or z3); empty: the engine that was run.
  std::string decidedBy;
};

/// How far an engine is, for a progress line (EngineEvents):
/// every figure the engine knows, the rest left at 0.
struct EngineProgress {
  std::string engine;     ///< "explore", "z3", "spin"
  uint64_t states = 0;    ///< explore: states visited so far
  uint64_t depth = 0;     ///< explore: the breadth-first level being expanded
  int64_t queries = 0;    ///< z3: queries issued so far
  int64_t decided = 0;    ///< z3: properties decided so far
  int64_t properties = 0; ///< z3: properties of the instance
  std::string phase;      ///< spin: "compiling", "pan run 2", ...
};

/// What an engine tells its caller while it runs, the one interface every engine
/// streams through (all members optional; called on the engine's own thread):
/// - `witness`: each witness as soon as the engine has it, in the order of
///   `EngineResult::witnesses` (the engine also keeps it there). Returning false asks
///   the engine to stop (`--stop-at-first`): it returns at once, incomplete, with
///   `kStoppedReason`.
/// - `progress`: now and then (explore: every few thousand states; z3: per query;
///   spin: per tool run); cheap for the engine, the caller throttles the display.
/// - `cancelled`: polled at the same points; true stops the engine like `witness`
///   returning false (another instance of a `--stop-at-first` run has a finding).
/// - `stop`: the run's stop request (its time limit, the memory ceiling, a signal:
///   support/Stop.h), polled in the engine's inner loops (explore: every few states;
///   z3: around and, through a hook that interrupts the solver, inside each check;
///   spin: while its tools run, killing them). A requested stop makes the engine return
///   at once, incomplete, with the token's reason and the engine's own figures.
struct EngineEvents {
  std::function<bool(const Witness &)> witness;
  std::function<void(const EngineProgress &)> progress;
  std::function<bool()> cancelled;
  const support::StopToken *stop = nullptr;
};

/// True when `events` carries a stop request that was made (EngineEvents::stop).
inline bool stopRequested(const EngineEvents *events) {
  return events && support::stopRequested(events->stop);
}
/// Marks `result` incomplete because of the stop request of `events` (which was made):
/// the token's reason, then `figures` (the engine's numbers, e.g. "explored 1234
/// states") when not empty. Returns false, like addWitness for a stop.
bool stopForRequest(EngineResult &result, const EngineEvents *events, const std::string &figures);

/// The reason of a result an engine stopped early on request (EngineEvents).
inline constexpr const char *kStoppedReason =
    "stopped at the first finding (--stop-at-first); the properties not decided by then "
    "were not checked";

/// Adds `witness` to `result` and passes it to `events` (may be null). False when the
/// engine must stop: the callback asked for it; `result` is then marked incomplete
/// with kStoppedReason.
bool addWitness(EngineResult &result, Witness witness, const EngineEvents *events);
/// Tells `events` (may be null) the progress; false when the engine must stop
/// (`cancelled`), with `result` marked as by addWitness.
bool reportProgress(EngineResult &result, const EngineProgress &progress,
                    const EngineEvents *events);

/// The trace text of one step taken from `before` (which it must be enabled in):
/// actor, text, source location and context, without semaphore values.
report::TraceStep traceStep(const Machine &machine, const ControlState &before,
                            const report::ScheduleStep &step);
/// Adds to `out` the semaphore values that `step` changed, as they are in `after`
/// (the state right after the step).
void traceValues(const Machine &machine, const ControlState &after,
                 const report::ScheduleStep &step, report::TraceStep &out);

/// Replays `schedule` from the initial state. Returns the state before its last step
/// (the initial state for an empty schedule) in `beforeLast` and the final state, and
/// appends one trace step per schedule step to `trace` when given. nullopt, with
/// `error` saying which step and why, if a step is not enabled.
std::optional<ControlState> replaySchedule(const Machine &machine, const report::Schedule &schedule,
                                           ControlState &beforeLast, report::Trace *trace,
                                           std::string &error);

/// The shape of obligation `o`'s violation in state `at` (the state its step runs
/// from; for Stuck, the deadlocked state): the facts `--explain` classifies
/// (report::FindingShape), from the program, the property list and the state only.
report::FindingShape findingShape(const Machine &machine, ObligationIndex o,
                                  const ControlState &at);

/// The facts of obligation `o`'s property (report::FindingFacts, what root-cause
/// grouping compares), from the program and the property list; `at` (the state its
/// step runs from, as for findingShape) gives only FindingFacts::leftOver.
report::FindingFacts findingFacts(const Machine &machine, ObligationIndex o,
                                  const ControlState &at);

/// The finding of obligation `o`, violated by the last step of `schedule` (taken from
/// `before`; for Stuck, `before` is the deadlocked state after it): the property's
/// kind, message and spans, the obligation's detail and shape, and the trace.
report::Finding makeFinding(const Machine &machine, ObligationIndex o,
                            const report::Schedule &schedule, report::Trace trace,
                            const ControlState &before, const std::string &engine);

/// The finding of a witness, checked: nullopt with `error` when the schedule does not
/// replay or does not violate the property (a bug in the engine that produced it).
/// The obligation the finding is about goes to `obligation` when given.
std::optional<report::Finding> witnessFinding(const Machine &machine, const Witness &witness,
                                              const std::string &engine, std::string &error,
                                              ObligationIndex *obligation = nullptr);

/// witnessFinding's check alone: whether `witness` replays and violates its property
/// (false with `error` otherwise), without building the finding and its trace, which
/// on a large instance cost far more than the replay.
bool checkWitness(const Machine &machine, const Witness &witness, const std::string &engine,
                  std::string &error);

struct VerdictOptions {
  /// Shorten every witness before it becomes a finding (semantics/Shorten.h); off
  /// only to measure shortening or to see an engine's own schedule.
  bool shorten = true;
  ShortenOptions shortenOptions;
};

/// The finding of a witness as it appears in a verdict: checked as witnessFinding,
/// then, with options.shorten, shortened (shortenWitness) and the shorter schedule
/// replayed to the same property. Streaming (driver/Engines.cpp) and buildVerdict both
/// use it, so a finding printed during the search is the one the verdict holds.
std::optional<report::Finding> shortFinding(const Machine &machine, const Witness &witness,
                                            const std::string &engine,
                                            const VerdictOptions &options, std::string &error);

/// How buildVerdict makes a property's finding from the witness it takes for it:
/// nullopt, with `error`, when the witness does not replay to its property.
using FindingBuilder =
    std::function<std::optional<report::Finding>(const Witness &, std::string &error)>;

/// An engine's result as a verdict: one finding per property, from the first witness
/// the engine gave for it, sorted by kind, location and property id (so the verdict
/// does not depend on the order the engine found properties in); verified if the
/// search was complete and found nothing, inconclusive with the reason otherwise. A
/// witness that does not replay to its property makes the verdict an internal error,
/// never a finding. The finding is `build`'s, by default shortFinding with `options`
/// (shortenWitness: the same obligation with fewer steps, in a fixed order, replayed;
/// Finding::witnessSteps keeps the engine's own length); the other witnesses of the
/// property are only checked (checkWitness). driver::runEngine passes a `build`
/// that reuses the finding it streamed for the property.
report::Verdict buildVerdict(const Machine &machine, EngineResult result, const std::string &engine,
                             const VerdictOptions &options = {}, const FindingBuilder &build = {});

} // namespace dkv::semantics
