// The engine table and the shared path from an engine's witnesses to a verdict.
#include "driver/Engines.h"

#include "executor/Executor.h"
#include "model/Precheck.h"
#include "promela/Spin.h"
#include "smt/Smt.h"
#include "support/Invariant.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <utility>

namespace dkv::driver {

namespace {

/// The value of statistic `key` of `result`, or "" if it has none.
std::string statistic(const semantics::EngineResult &result, const std::string &key) {
  for (const auto &[k, value] : result.stats)
    if (k == key)
      return value;
  return "";
}

/// `--engine auto`: explore within `autoStates` states; if it searched the whole state
/// space it decided. Otherwise (its budget or memory ran out) z3 decides, with the
/// time explore left of `--timeout`. The statistics say which engine decided and why
/// ("explore reached 200000 states, decided by z3"), then that engine's own (explore's
/// prefixed "explore " when z3 ran). When z3 is inconclusive too, the reason has both
/// engines' numbers, and the witnesses explore found before its budget stay (for the
/// properties z3 found none for).
///
/// Streaming (`events`): explore's witnesses are passed on when explore has searched
/// everything (its budget is small, seconds), since z3 replaces them when it does not;
/// with `--stop-at-first` they are passed on at once (the first ends the run, z3 never
/// starts). Each phase begins with a progress report naming its engine, which the
/// driver uses to name the engine of the findings it streams.
semantics::EngineResult runAuto(const semantics::Machine &machine, const CheckOptions &o,
                                const semantics::EngineEvents &events) {
  const auto begin = std::chrono::steady_clock::now();
  semantics::EngineResult none;
  auto phase = [&](const char *engine) {
    semantics::EngineProgress progress;
    progress.engine = engine;
    return semantics::reportProgress(none, progress, &events);
  };
  executor::ExploreOptions exploreOptions;
  exploreOptions.maxStates = o.autoStates;
  semantics::EngineEvents exploreEvents = events;
  if (!o.stopAtFirst)
    exploreEvents.witness = nullptr; // passed on below, if explore decides
  exploreOptions.events = &exploreEvents;
  if (!phase("explore"))
    return none;
  semantics::EngineResult explored = executor::explore(machine, exploreOptions);
  if (explored.complete || explored.reason == semantics::kStoppedReason) {
    if (explored.complete && events.witness)
      for (size_t k = 0; k < explored.witnesses.size(); ++k)
        if (!events.witness(explored.witnesses[k])) {
          explored.witnesses.resize(k + 1);
          explored.complete = false;
          explored.reason = semantics::kStoppedReason;
          break;
        }
    explored.decidedBy = "explore";
    if (explored.complete)
      explored.stats.insert(explored.stats.begin(), {"decided by", "explore"});
    return explored;
  }
  const std::string states = statistic(explored, "states");
  const bool budget = !statistic(explored, "budget").empty();
  std::pair<std::string, std::string> why =
      budget && !states.empty()
          ? std::pair<std::string, std::string>{"explore reached", states + " states"}
          : std::pair<std::string, std::string>{"explore stopped", explored.reason};

  smt::SmtOptions smtOptions;
  const double spent =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  smtOptions.timeoutSeconds = std::max(0.0, o.timeoutSeconds - spent);
  smtOptions.memoryMb = o.memoryMb;
  smtOptions.events = &events;
  if (!phase("z3"))
    return none;
  semantics::EngineResult solved = smt::checkWithZ3(machine, smtOptions);

  semantics::EngineResult result;
  result.complete = solved.complete;
  result.witnesses = std::move(solved.witnesses);
  result.queries = std::move(solved.queries);
  result.semaphoreForms = std::move(solved.semaphoreForms);
  result.decidedBy = "z3";
  result.stats.push_back(why);
  // Stopped at its first finding (--stop-at-first): explore found none before its
  // budget (it would have stopped the run), so the finding is z3's alone.
  const bool stopped = solved.reason == semantics::kStoppedReason;
  result.stats.push_back(solved.complete ? std::pair<std::string, std::string>{"decided by", "z3"}
                         : stopped       ? std::pair<std::string, std::string>{"z3", "stopped"}
                                   : std::pair<std::string, std::string>{"z3", "inconclusive"});
  for (const auto &[key, value] : explored.stats)
    if (key == "transitions" || key == "time")
      result.stats.push_back({"explore " + key, value});
  result.stats.insert(result.stats.end(), solved.stats.begin(), solved.stats.end());
  if (stopped) {
    result.reason = solved.reason;
  } else if (!solved.complete) {
    result.reason = fmt::format("explore: {}; z3: {}", explored.reason, solved.reason);
    // explore's witnesses hold whatever z3 could not decide; with both engines'
    // witnesses in one verdict, the findings name the engine "auto".
    std::set<semantics::PropertyIndex> found;
    for (const semantics::Witness &w : result.witnesses)
      found.insert(w.property);
    bool named = false;
    for (semantics::Witness &w : explored.witnesses)
      if (!found.count(w.property)) {
        result.decidedBy = "auto";
        if (!named)
          phase("auto");
        named = true;
        // z3 gave up: explore's findings still hold.
        if (!semantics::addWitness(result, std::move(w), &events))
          break;
      }
  }
  return result;
}

std::vector<Engine> &table() {
  static std::vector<Engine> engines = {
      {"explore", "exhaustive exploration of every schedule (with partial-order reduction)",
       [](const semantics::Machine &machine, const CheckOptions &o,
          const semantics::EngineEvents &events) {
         executor::ExploreOptions options;
         options.maxStates = o.maxStates;
         options.events = &events;
         return executor::explore(machine, options);
       }},
      {"spin", "the spin model checker on the emitted Promela model",
       [](const semantics::Machine &machine, const CheckOptions &o,
          const semantics::EngineEvents &events) {
         promela::SpinOptions options;
         options.events = &events;
         options.timeoutSeconds = o.timeoutSeconds;
         options.memoryMb = o.memoryMb;
         options.keepDir = o.keepDir;
         return promela::checkWithSpin(machine, options);
       }},
      {"z3", "the Z3 SMT solver on a partial-order encoding of the runs (docs/smt.md)",
       [](const semantics::Machine &machine, const CheckOptions &o,
          const semantics::EngineEvents &events) {
         smt::SmtOptions options;
         options.events = &events;
         options.timeoutSeconds = o.timeoutSeconds;
         options.memoryMb = o.memoryMb;
         return smt::checkWithZ3(machine, options);
       }},
      {"auto",
       "explore within a small state budget, then z3 if explore cannot finish (the default)",
       runAuto},
  };
  return engines;
}

} // namespace

const std::vector<Engine> &engines() { return table(); }

void registerEngine(Engine engine) {
  DKV_INVARIANT(findEngine(engine.name) == nullptr, "engine names are unique");
  table().push_back(std::move(engine));
}

const Engine *findEngine(const std::string &name) {
  for (const Engine &e : table())
    if (e.name == name)
      return &e;
  return nullptr;
}

report::Verdict runEngine(const Engine &engine, const semantics::Machine &machine,
                          const CheckOptions &options, const RunEvents *events) {
  // The static pre-check's findings hold without a search; they join the engine's,
  // which carry the witness schedules.
  std::vector<report::Finding> pre = model::precheck(machine.program());
  // Each property's finding is made once, from the first witness the engine gives for
  // it: shortened, confirmed in the executor (with its own wrong value, for a race) and
  // given the pre-check's notes at its place. Every step is a function of that witness
  // alone, so the finding streamed during the search is the verdict's finding, whatever
  // else the engine finds later.
  struct Made {
    report::Schedule witness; ///< the engine's schedule it was made from
    report::Finding finding;
  };
  std::map<semantics::PropertyIndex, Made> made;
  auto findingOf = [&](const semantics::Witness &w, const std::string &engineName,
                       std::string &error) -> std::optional<report::Finding> {
    if (auto it = made.find(w.property); it != made.end() && it->second.witness == w.schedule)
      return it->second.finding;
    std::optional<report::Finding> f =
        semantics::shortFinding(machine, w, engineName, semantics::VerdictOptions{}, error);
    if (!f)
      return std::nullopt;
    if (options.confirm)
      executor::confirmFinding(machine, *f);
    report::addPrecheckNotes(*f, pre);
    made[w.property] = {w.schedule, *f};
    return f;
  };
  // Each property's first witness becomes its finding as the engine reports it
  // (streamed when `events` asks for findings), named after the engine working then (a
  // progress report names it when an engine hands over to another, `--engine auto`),
  // with or without `events`, so both give the same verdict.
  semantics::EngineEvents engineEvents;
  std::string working = engine.name;
  std::set<semantics::PropertyIndex> seen;
  engineEvents.progress = [&](const semantics::EngineProgress &progress) {
    if (!progress.engine.empty() && engine.name == "auto")
      working = progress.engine;
    if (events && events->progress)
      events->progress(progress);
  };
  if (events)
    engineEvents.cancelled = events->cancelled;
  engineEvents.witness = [&](const semantics::Witness &w) {
    if (!seen.insert(w.property).second)
      return true;
    std::string error;
    std::optional<report::Finding> f = findingOf(w, working, error);
    if (!f)
      return true; // the verdict below reports the internal error
    return !events || !events->finding || events->finding(*f);
  };
  semantics::EngineResult result = engine.run(machine, options, engineEvents);
  const std::string decidedBy = result.decidedBy.empty() ? engine.name : result.decidedBy;
  report::Verdict verdict =
      semantics::buildVerdict(machine, std::move(result), decidedBy, {},
                              [&](const semantics::Witness &w, std::string &error) {
                                return findingOf(w, decidedBy, error);
                              });
  if (verdict.status == report::Verdict::Status::Error)
    return verdict;
  report::mergePrecheck(verdict, std::move(pre));
  return verdict;
}

} // namespace dkv::driver
