// The engine table and the shared path from an engine's witnesses to a verdict.
#include "driver/Engines.h"

#include "executor/Executor.h"
#include "model/Precheck.h"
#include "promela/Spin.h"
#include "semantics/Closure.h"
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

/// explore's share of the memory ceiling: what is left of `--memory` when it starts,
/// less 64 MB for the rest of the run (witnesses, findings, the report); at least 16 MB.
int64_t exploreMemory(const CheckOptions &o) {
  if (o.memoryMb <= 0)
    return 0;
  const int64_t left = (o.memoryMb << 20) - support::residentBytes() - (int64_t{64} << 20);
  return std::max<int64_t>(left, int64_t{16} << 20);
}

/// What is left of the instance's time limit (its stop token's), else `seconds`.
double secondsLeft(const semantics::EngineEvents &events, double seconds) {
  if (events.stop)
    if (std::optional<double> left = events.stop->secondsLeft())
      return std::min(seconds, std::max(*left, 0.001));
  return seconds;
}

/// explore's options for `--max-states` `maxStates` (auto's budget, or the user's).
executor::ExploreOptions exploreOptions(const CheckOptions &o,
                                        const semantics::EngineEvents &events, uint64_t maxStates) {
  executor::ExploreOptions options;
  options.maxStates = maxStates;
  options.events = &events;
  options.memoryBytes = exploreMemory(o);
  return options;
}

/// The closure engine's options, within `seconds` (and what is left of the instance's
/// time limit).
semantics::ClosureOptions closureOptions(const semantics::Machine &machine, const CheckOptions &o,
                                         const semantics::EngineEvents &events, double seconds) {
  semantics::ClosureOptions options;
  options.events = &events;
  options.timeoutSeconds = secondsLeft(events, seconds);
  options.jobs = o.engineJobs;
  options.window = o.window;
  if (!o.property.empty())
    options.only = machine.properties().find(o.property).value_or(-1);
  return options;
}

/// `--engine auto`: explore within `autoStates` states, on meshes of fewer than
/// kAutoExploreBelow devices; if it searched the whole state space it decided.
/// Otherwise (its budget or memory ran out, or the mesh is larger) the closure engine
/// decides, exactly (docs/closure.md), with the time explore left of `--timeout`. The
/// statistics say which engine decided and why ("explore reached 200000 states,
/// decided by closure", "explore skipped at 64 devices, decided by closure"), then
/// that engine's own (explore's prefixed "explore " when both ran). When the closure
/// engine is inconclusive too (its time limit), the reason has both engines' numbers.
///
/// Every witness explore finds is kept and passed on as it is found, complete or not:
/// it is a run that violates its property, and a breadth-first one, the shortest
/// explore knows; the closure engine's witnesses follow, so a property both found keeps
/// explore's (semantics::buildVerdict takes the first witness of each property). Each
/// phase begins with a progress report naming its engine, which the driver uses to name
/// the engine of the findings it makes.
semantics::EngineResult runAuto(const semantics::Machine &machine, const CheckOptions &o,
                                const semantics::EngineEvents &events) {
  const auto begin = std::chrono::steady_clock::now();
  semantics::EngineResult none;
  auto phase = [&](const char *engine) {
    if (events.stop)
      events.stop->setPhase(checkingPhase(engine));
    semantics::EngineProgress progress;
    progress.engine = engine;
    return semantics::reportProgress(none, progress, &events);
  };
  semantics::EngineResult explored;
  std::pair<std::string, std::string> why{"explore skipped at",
                                          fmt::format("{} devices", machine.deviceCount())};
  const bool exploring = machine.deviceCount() < kAutoExploreBelow;
  if (exploring) {
    executor::ExploreOptions options = exploreOptions(o, events, o.autoStates);
    options.maxStateBytes = kAutoExploreBytes;
    if (!phase("explore"))
      return none;
    explored = executor::explore(machine, options);
    // Stopped by the instance's stop request (time, memory, signal): the closure engine
    // would be stopped too, so explore's result is the answer, inconclusive with the
    // request's reason.
    if (explored.complete || explored.reason == semantics::kStoppedReason ||
        semantics::stopRequested(&events)) {
      explored.decidedBy = "explore";
      if (explored.complete)
        explored.stats.insert(explored.stats.begin(), {"decided by", "explore"});
      return explored;
    }
    const std::string states = statistic(explored, "states");
    const bool budget = !statistic(explored, "budget").empty();
    why = budget && !states.empty()
              ? std::pair<std::string, std::string>{"explore reached", states + " states"}
              : std::pair<std::string, std::string>{"explore stopped", explored.reason};
  }

  const double spent =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  if (!phase("closure"))
    return none;
  semantics::EngineResult decided = semantics::decideByClosure(
      machine, closureOptions(machine, o, events, std::max(0.0, o.timeoutSeconds - spent)));

  semantics::EngineResult result;
  result.complete = decided.complete;
  result.witnesses = std::move(explored.witnesses);
  result.witnesses.insert(result.witnesses.end(), decided.witnesses.begin(),
                          decided.witnesses.end());
  result.decidedBy = "closure";
  result.stats.push_back(why);
  // Stopped at its first finding (--stop-at-first): explore found none before its
  // budget (it would have stopped the run), so the finding is the closure engine's.
  const bool stopped = decided.reason == semantics::kStoppedReason;
  result.stats.push_back(
      decided.complete ? std::pair<std::string, std::string>{"decided by", "closure"}
      : stopped        ? std::pair<std::string, std::string>{"closure", "stopped"}
                       : std::pair<std::string, std::string>{"closure", "inconclusive"});
  for (const auto &[key, value] : explored.stats)
    if (key == "transitions" || key == "time")
      result.stats.push_back({"explore " + key, value});
  result.stats.insert(result.stats.end(), decided.stats.begin(), decided.stats.end());
  if (stopped)
    result.reason = decided.reason;
  else if (!decided.complete)
    result.reason = exploring
                        ? fmt::format("explore: {}; closure: {}", explored.reason, decided.reason)
                        : decided.reason;
  return result;
}

std::vector<Engine> &table() {
  static std::vector<Engine> engines = {
      {"explore", "exhaustive exploration of every schedule (with partial-order reduction)",
       [](const semantics::Machine &machine, const CheckOptions &o,
          const semantics::EngineEvents &events) {
         return executor::explore(machine, exploreOptions(o, events, o.maxStates));
       },
       /*breadthFirst=*/true},
      {"spin", "the spin model checker on the emitted Promela model",
       [](const semantics::Machine &machine, const CheckOptions &o,
          const semantics::EngineEvents &events) {
         promela::SpinOptions options;
         options.events = &events;
         options.timeoutSeconds = secondsLeft(events, o.timeoutSeconds);
         options.memoryMb = o.memoryMb;
         options.keepDir = o.keepDir;
         return promela::checkWithSpin(machine, options);
       }},
      {"z3", "the Z3 SMT solver on a partial-order encoding of the runs (docs/smt.md)",
       [](const semantics::Machine &machine, const CheckOptions &o,
          const semantics::EngineEvents &events) {
         smt::SmtOptions options;
         options.events = &events;
         options.timeoutSeconds = secondsLeft(events, o.timeoutSeconds);
         options.userTimeoutSeconds = o.timeoutSeconds;
         options.memoryMb = o.memoryMb;
         options.resourceLimit = o.z3Rlimit;
         return smt::checkWithZ3(machine, options);
       }},
      {"closure",
       "exact decision by greedy closures of the persistent step table (docs/closure.md)",
       [](const semantics::Machine &machine, const CheckOptions &o,
          const semantics::EngineEvents &events) {
         return semantics::decideByClosure(machine,
                                           closureOptions(machine, o, events, o.timeoutSeconds));
       }},
      {"auto",
       "explore within a small state budget, then the closure engine if explore cannot "
       "finish (the default)",
       runAuto, /*breadthFirst=*/true},
  };
  return engines;
}

} // namespace

const std::vector<Engine> &engines() { return table(); }

const char *checkingPhase(const std::string &engine) {
  // String literals: a StopToken keeps only the pointer.
  if (engine == "explore")
    return "checking with explore";
  if (engine == "z3")
    return "checking with z3";
  if (engine == "spin")
    return "checking with spin";
  if (engine == "closure")
    return "checking with closure";
  if (engine == "auto")
    return "checking with auto";
  return "checking";
}

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
  // Breadth-first witnesses for an engine whose own are not (spin, z3): explore within
  // `options.shortestStates` states, run once, when the first witness needs it; each
  // witness it finds is a shortest schedule of its property in explore's reduced graph
  // (docs/model.md "Short witnesses"). explore's and auto's witnesses are breadth-first
  // already (Engine::breadthFirst; auto keeps explore's before z3's).
  std::optional<std::map<semantics::PropertyIndex, report::Schedule>> shortest;
  semantics::EngineEvents stopOnly; // the shortest-witness search: the stop request only
  stopOnly.stop = events ? events->stop : nullptr;
  auto shortestOf = [&](semantics::PropertyIndex p) -> const report::Schedule * {
    if (engine.breadthFirst || options.shortestStates == 0)
      return nullptr;
    if (!shortest) {
      shortest.emplace();
      executor::ExploreOptions search;
      search.maxStates = options.shortestStates;
      search.memoryBytes = exploreMemory(options);
      search.events = &stopOnly;
      // As auto's explore phase: large states are slow to search, and on a large mesh
      // the search cannot reach a violation anyway.
      search.maxStateBytes = kAutoExploreBytes;
      for (semantics::Witness &w : executor::explore(machine, search).witnesses)
        shortest->emplace(w.property, std::move(w.schedule));
    }
    auto it = shortest->find(p);
    return it == shortest->end() ? nullptr : &it->second;
  };
  auto findingOf = [&](const semantics::Witness &w, const std::string &engineName,
                       std::string &error) -> std::optional<report::Finding> {
    if (auto it = made.find(w.property); it != made.end() && it->second.witness == w.schedule)
      return it->second.finding;
    // The engine's witness replays to its property (an engine's bug is an internal
    // error, never hidden) and is shortened; explore's breadth-first one, shortened
    // too, stands in for it when it is no longer (the trace still says the engine's
    // length).
    std::optional<report::Finding> f =
        semantics::shortFinding(machine, w, engineName, semantics::VerdictOptions{}, error);
    if (const report::Schedule *bfs = shortestOf(w.property); f && bfs) {
      std::optional<report::Finding> g = semantics::shortFinding(
          machine, {w.property, *bfs}, engineName, semantics::VerdictOptions{}, error);
      DKV_INVARIANT(g.has_value(), "explore's witness replays to its property");
      if (g->schedule.size() <= f->schedule.size()) {
        g->witnessSteps = static_cast<int32_t>(w.schedule.size());
        f = std::move(g);
      }
    }
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
  if (events) {
    engineEvents.cancelled = events->cancelled;
    engineEvents.stop = events->stop;
  }
  // --property: the one property asked about (the others' witnesses are dropped).
  const std::optional<semantics::PropertyIndex> only =
      options.property.empty() ? std::nullopt : machine.properties().find(options.property);
  engineEvents.witness = [&](const semantics::Witness &w) {
    if ((only && w.property != *only) || !seen.insert(w.property).second)
      return true;
    std::string error;
    std::optional<report::Finding> f = findingOf(w, working, error);
    if (!f)
      return true; // the verdict below reports the internal error
    return !events || !events->finding || events->finding(*f);
  };
  semantics::EngineResult result = engine.run(machine, options, engineEvents);
  if (only) {
    std::erase_if(result.witnesses,
                  [&](const semantics::Witness &w) { return w.property != *only; });
    result.stats.push_back({"property", options.property});
    result.stats.push_back(
        {"properties", std::to_string(machine.properties().properties().size())});
  }
  // The race obligations were reduced by a symmetry: the verdict says so.
  if (const semantics::Symmetry *symmetry = machine.properties().symmetry())
    result.stats.push_back({"symmetry", symmetry->describe(machine.program())});
  const std::string decidedBy = result.decidedBy.empty() ? engine.name : result.decidedBy;
  report::Verdict verdict =
      semantics::buildVerdict(machine, std::move(result), decidedBy, {},
                              [&](const semantics::Witness &w, std::string &error) {
                                return findingOf(w, decidedBy, error);
                              });
  if (verdict.status == report::Verdict::Status::Error)
    return verdict;
  report::mergePrecheck(verdict, std::move(pre));
  if (only)
    std::erase_if(verdict.findings,
                  [&](const report::Finding &f) { return f.property != options.property; });
  return verdict;
}

} // namespace dkv::driver
