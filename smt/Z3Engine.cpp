// `dkv check --engine z3` and `dkv dump-smt`: one query per property on one
// incremental solver (docs/smt.md, "Queries").
#include "smt/Smt.h"

#include "smt/Encoding.h"
#include "support/Invariant.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <random>
#include <set>

namespace dkv::smt {

using semantics::EngineResult;
using semantics::PropertyIndex;

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point begin) {
  return std::chrono::duration<double>(Clock::now() - begin).count();
}

/// Seeded random runs of the step table (Machine): every step of a run is checked as
/// every engine checks it (Machine::violations before it, Machine::stuck at a
/// deadlock), and the first run prefix that violates a property is its witness. A
/// violated property is found this way far more cheaply than by a satisfiable query
/// on a large instance; what the runs miss goes to the solver, so the answers do not
/// depend on them. Deterministic: a fixed generator and seed.
/// The runs stop early at `deadline` (they only save queries, so stopping is sound).
void simulate(const semantics::Machine &machine, int32_t runs, Clock::time_point deadline,
              std::vector<bool> &decided, EngineResult &result, int64_t &found,
              const semantics::EngineEvents *events, bool &stopped) {
  std::mt19937_64 random(0x5eed);
  semantics::ControlState state;
  std::vector<report::ScheduleStep> steps;
  std::vector<semantics::ObligationIndex> violated;
  const semantics::Properties &props = machine.properties();
  for (int32_t run = 0;
       run < runs && Clock::now() < deadline && !stopped && !semantics::stopRequested(events);
       ++run) {
    state = machine.initialState();
    report::Schedule schedule;
    std::vector<uint64_t> priority(static_cast<size_t>(machine.deviceCount()) +
                                   static_cast<size_t>(machine.dmaCount()));
    for (uint64_t &p : priority)
      p = random();
    std::set<model::DmaId> inFlight;
    for (uint64_t taken = 0;; ++taken) {
      // (A step checks every obligation it touches: at 64 devices 1024 steps take seconds.)
      if (taken % 16 == 15 && (Clock::now() >= deadline || semantics::stopRequested(events)))
        return;
      machine.enabledSteps(state, steps, &inFlight);
      if (steps.empty()) {
        violated.clear();
        machine.stuck(state, violated);
        for (semantics::ObligationIndex o : violated) {
          const PropertyIndex p = props.obligation(o).property;
          if (!decided[p] && !stopped) {
            decided[p] = true;
            ++found;
            stopped = !semantics::addWitness(result, {p, schedule}, events);
          }
        }
        break;
      }
      // Even runs pick uniformly among the enabled steps; odd runs by random actor
      // priorities, re-drawn now and then (PCT-style), which lets one device run far
      // ahead of another: the interleavings behind most missing handshakes.
      report::ScheduleStep step = steps[random() % steps.size()];
      if (run % 2 == 1) {
        if (random() % 64 == 0)
          priority[random() % priority.size()] = random();
        auto rank = [&](const report::ScheduleStep &s) {
          return s.kind == report::ScheduleStep::Kind::Device
                     ? priority[s.id]
                     : priority[machine.deviceCount() + s.id];
        };
        for (const report::ScheduleStep &candidate : steps)
          if (rank(candidate) > rank(step))
            step = candidate;
      }
      violated.clear();
      machine.violations(state, step, violated);
      schedule.push_back(step);
      for (semantics::ObligationIndex o : violated) {
        const PropertyIndex p = props.obligation(o).property;
        if (!decided[p] && !stopped) {
          decided[p] = true;
          ++found;
          stopped = !semantics::addWitness(result, {p, schedule}, events);
        }
      }
      if (stopped)
        return;
      // The in-flight set enabledSteps looks at: started and not fully landed.
      if (step.kind == report::ScheduleStep::Kind::Device)
        if (const auto *start = std::get_if<model::DmaStart>(
                &machine.program().processes[step.id].events[state.pc[step.id]].kind))
          inFlight.insert(start->dma);
      machine.apply(state, step);
      if (step.kind == report::ScheduleStep::Kind::Land &&
          state.landed[step.id] >= machine.chunks(step.id))
        inFlight.erase(step.id);
    }
  }
}

/// The size of formula `e`: its distinct uninterpreted constants (the encoding's
/// variables it mentions) and its distinct subterms.
std::pair<int64_t, int64_t> formulaSize(const z3::expr &e,
                                        const support::StopToken *stop = nullptr) {
  std::set<unsigned> seen;
  int64_t constants = 0;
  std::vector<z3::expr> todo{e};
  while (!todo.empty()) {
    if (seen.size() % 4096 == 0 && support::stopRequested(stop))
      break; // the run stops: the figure is not reported
    z3::expr t = todo.back();
    todo.pop_back();
    if (!seen.insert(t.id()).second)
      continue;
    if (t.is_const() && t.decl().decl_kind() == Z3_OP_UNINTERPRETED)
      ++constants;
    if (t.is_app())
      for (unsigned i = 0; i < t.num_args(); ++i)
        todo.push_back(t.arg(i));
  }
  return {constants, static_cast<int64_t>(seen.size())};
}

const char *answerName(z3::check_result answer) {
  return answer == z3::sat ? "sat" : answer == z3::unsat ? "unsat" : "unknown";
}

/// A query's assumption literal: "q_race.0" (a valid SMT-LIB simple symbol).
z3::expr literalFor(z3::context &ctx, const semantics::Property &p) {
  return ctx.bool_const(("q_" + p.id).c_str());
}

/// Z3's SMT-LIB2 text of `solver` (its declarations, then one `(assert` at the start
/// of a line per assertion, in order) with notes[i] as `; ` comment lines before
/// assertion i. The assertions are counted: a text that does not have one `(assert`
/// line per assertion of the solver is a bug here (the comments would be misplaced).
std::string annotate(z3::solver &solver, const std::vector<std::string> &notes) {
  const std::string text = solver.to_smt2();
  std::string out;
  size_t assertion = 0;
  for (size_t pos = 0; pos < text.size();) {
    size_t end = text.find('\n', pos);
    end = end == std::string::npos ? text.size() : end + 1;
    if (text.compare(pos, 7, "(assert") == 0) {
      if (assertion < notes.size())
        for (size_t from = 0; !notes[assertion].empty() && from != std::string::npos;) {
          const size_t to = notes[assertion].find('\n', from);
          out += "; " + notes[assertion].substr(from, to - from) + "\n";
          from = to == std::string::npos ? to : to + 1;
        }
      ++assertion;
    }
    out.append(text, pos, end - pos);
    pos = end;
  }
  DKV_INVARIANT(assertion == solver.assertions().size(),
                "the SMT-LIB2 text has one (assert per assertion");
  return out;
}

EngineResult checkImpl(const semantics::Machine &machine, const SmtOptions &options) {
  EngineResult result;
  const Clock::time_point begin = Clock::now();
  const double userLimit =
      options.userTimeoutSeconds > 0 ? options.userTimeoutSeconds : options.timeoutSeconds;
  const semantics::Properties &props = machine.properties();
  const size_t count = props.properties().size();
  semantics::EngineProgress encoding;
  encoding.engine = "z3"; // no properties yet: the progress line says "encoding"
  if (!semantics::reportProgress(result, encoding, options.events))
    return result;

  // Z3's memory limit is a global parameter; it must be set before the context. The
  // high watermark makes the checks answer unknown once it is reached; the hard limit
  // (memory_max_size) instead hits an internal assertion in Z3 4.8.12 that exits the
  // process (code 114) during a search.
  // The watermark is in bytes and an unsigned 32-bit parameter: at most 4 GB.
  const uint64_t bytes = std::clamp<uint64_t>(
      static_cast<uint64_t>(std::max<int64_t>(0, options.memoryMb)) << 20, 0, 0xffffffffull);
  z3::set_param("memory_high_watermark", std::to_string(bytes).c_str());
  z3::context ctx;
  // The run's stop request (time limit, memory ceiling, signal) interrupts Z3 wherever
  // it is, inside a check too (Z3_interrupt is safe from another thread); the hook
  // ends, waiting for a running call, before the context does.
  const support::StopToken *stop = options.events ? options.events->stop : nullptr;
  support::StopToken::Hook interrupt;
  if (stop)
    interrupt = stop->onStop([&ctx] { ctx.interrupt(); });
  const auto stopAsked = [&] { return semantics::stopRequested(options.events); };
  auto interrupted = [&](const std::string &figures) {
    return semantics::stopForRequest(result, options.events, figures), result;
  };
  Encoder encoder(ctx, machine, options.staticAnalysis, stop);
  if (stopAsked())
    return interrupted("while encoding the instance");
  z3::solver solver(ctx);
  {
    // Z3 must not take SIGINT over during a check (its scoped_ctrl_c would cancel that
    // one check and let the run go on): dkv's watchdog handles the signal. rlimit:
    // Z3's deterministic resource limit per check (0: none).
    z3::params params(ctx);
    params.set("ctrl_c", false);
    if (options.resourceLimit > 0)
      params.set("rlimit",
                 static_cast<unsigned>(std::min<int64_t>(options.resourceLimit, 0xffffffffll)));
    solver.set(params);
  }
  z3::expr_vector base(ctx);
  for (const z3::expr &c : encoder.base()) {
    // Adding the base takes seconds at 64 devices (Z3 simplifies each assertion as it
    // is added; one can take a second): poll before each.
    if (stopAsked())
      return interrupted("while giving the encoding to the solver");
    solver.add(c);
    base.push_back(c);
  }
  const int64_t baseVariables = formulaSize(z3::mk_and(base), stop).first;
  if (stopAsked())
    return interrupted("while giving the encoding to the solver");
  const double encodeSeconds = secondsSince(begin);

  int64_t queries = 0, sat = 0, unsat = 0, unknown = 0, statically = 0;
  int64_t groups = 0;
  double solveSeconds = 0;
  // Queries and solver time per finding kind (race, deadlock, exit, lifetime).
  std::map<report::FindingKind, std::pair<int64_t, double>> family;
  std::vector<bool> decided(count, false);
  std::string firstUnknown;
  bool outOfTime = false;
  bool stopped = false; // the caller asked to stop (EngineEvents)
  bool halted = false;  // the run's stop request (time, memory, signal) interrupted it

  int64_t simulated = 0;
  if (stopAsked())
    return interrupted("while encoding the instance");
  simulate(machine, options.simulationRuns,
           begin + std::chrono::duration_cast<Clock::duration>(
                       std::chrono::duration<double>(options.timeoutSeconds)),
           decided, result, simulated, options.events, stopped);
  sat += simulated;

  // Every obligation of a property ordered by the static happens-before: unsat
  // without a query.
  // (Building the checks of every property takes seconds at 64 devices: polled.)
  for (PropertyIndex p = 0; p < static_cast<PropertyIndex>(count); ++p) {
    if (stopAsked())
      return interrupted(
          fmt::format("while building the checks of the properties ({} of {})", p, count));
    if (!decided[p] && encoder.checks(p).empty()) {
      decided[p] = true;
      ++unsat;
      ++statically;
    }
  }

  // A witness from `model` for every undecided property it violates.
  auto harvest = [&](const z3::model &model) {
    int64_t found = 0;
    for (PropertyIndex q = 0; q < static_cast<PropertyIndex>(count) && !stopped; ++q) {
      if (decided[q])
        continue;
      for (const Check &check : encoder.checks(q)) {
        if (!model.eval(check.condition, true).is_true())
          continue;
        decided[q] = true;
        ++sat;
        ++found;
        stopped = !semantics::addWitness(result, {q, encoder.schedule(model, check.step)},
                                         options.events);
        break;
      }
    }
    return found;
  };

  // One check under an assumption literal (disabled for good afterwards): the
  // disjunction of the queries of `group`.
  auto check = [&](const std::vector<PropertyIndex> &group, const std::string &name,
                   std::optional<z3::model> &model) {
    const double left = options.timeoutSeconds - secondsSince(begin);
    if (stopAsked()) {
      halted = true;
      return z3::unknown;
    }
    if (left <= 0) {
      outOfTime = true;
      return z3::unknown;
    }
    z3::expr literal = ctx.bool_const(name.c_str());
    z3::expr_vector disjuncts(ctx);
    for (PropertyIndex p : group)
      disjuncts.push_back(encoder.query(p));
    const z3::expr query = z3::mk_or(disjuncts);
    solver.add(z3::implies(literal, query));
    solver.set("timeout", static_cast<unsigned>(std::max(1.0, std::ceil(left * 1000))));
    z3::expr_vector assumptions(ctx);
    assumptions.push_back(literal);
    const Clock::time_point start = Clock::now();
    z3::check_result answer = z3::unknown;
    std::string failure;
    try {
      answer = solver.check(assumptions);
    } catch (const z3::exception &e) {
      // Z3 reports running out of memory (--memory) this way: this check is unknown,
      // the witnesses found so far stay.
      failure = e.msg();
    }
    const double took = secondsSince(start);
    solveSeconds += took;
    if (answer == z3::unknown && stopAsked())
      halted = true; // interrupted: the answer says nothing about the query
    ++queries;
    auto &[n, seconds] = family[props.property(group.front()).kind];
    n += 1;
    seconds += took;
    const auto [variables, nodes] = formulaSize(query, stop);
    const semantics::Property &first = props.property(group.front());
    result.queries.push_back({
        {"query", name},
        {"family", report::findingKindName(first.kind)},
        {"properties", group.size() == 1 ? first.id : std::to_string(group.size())},
        {"answer",
         answer != z3::unknown
             ? std::string(answerName(answer))
             : fmt::format("unknown ({})", failure.empty() ? solver.reason_unknown() : failure)},
        {"variables", std::to_string(variables)},
        {"terms", std::to_string(nodes)},
        {"assertions", std::to_string(solver.assertions().size())},
        {"time", fmt::format("{:.3f} s", took)},
    });
    if (answer == z3::sat)
      model = solver.get_model();
    else if (answer == z3::unknown && firstUnknown.empty() && !halted) {
      // The reason with the numbers: which limit, and how much of it was used.
      std::string why = failure.empty() ? solver.reason_unknown() : failure;
      if (why.find("memout") != std::string::npos || why.find("memory") != std::string::npos)
        why += fmt::format(", memory limit {} MB", options.memoryMb);
      else if ((why == "timeout" || why == "canceled") && options.resourceLimit > 0 &&
               took < left - 0.5)
        // Z3 4.8.12 says "canceled" for its rlimit too: a check that ended well before
        // its timeout (and was not interrupted: `halted`) reached the resource limit.
        why += fmt::format(", resource limit {} (--z3-rlimit) reached", options.resourceLimit);
      else if (why == "timeout" || why == "canceled")
        why += fmt::format(", time limit {:g} s, {:.1f} s used", userLimit, secondsSince(begin));
      firstUnknown =
          fmt::format("z3 answered unknown for {} ({})", props.property(group.front()).id, why);
    }
    solver.add(!literal);
    return answer;
  };

  // Per kind of finding: first one check of the disjunction of all undecided
  // properties of that kind. unsat decides them all; sat gives a model that violates
  // at least one of them (each it violates gets its witness), and the rest are asked
  // again. Most properties of a correct kernel are unsat, so this needs one query per
  // kind plus one per violated property instead of one per property. If the
  // disjunction comes back unknown, the properties are asked one by one.
  std::vector<report::FindingKind> kinds;
  for (const semantics::Property &p : props.properties())
    if (std::find(kinds.begin(), kinds.end(), p.kind) == kinds.end())
      kinds.push_back(p.kind);
  for (report::FindingKind kind : kinds) {
    bool grouped = true;
    while (!outOfTime && !stopped && !halted) {
      if (stopAsked()) {
        halted = true; // the figures are added below
        break;
      }
      semantics::EngineProgress progress;
      progress.engine = "z3";
      progress.queries = queries;
      progress.decided = std::count(decided.begin(), decided.end(), true);
      progress.properties = static_cast<int64_t>(count);
      if (!semantics::reportProgress(result, progress, options.events)) {
        stopped = true;
        break;
      }
      std::vector<PropertyIndex> remaining;
      for (PropertyIndex p = 0; p < static_cast<PropertyIndex>(count); ++p)
        if (!decided[p] && props.property(p).kind == kind)
          remaining.push_back(p);
      if (remaining.empty())
        break;
      std::optional<z3::model> model;
      if (grouped && remaining.size() > 1) {
        const z3::check_result answer = check(
            remaining, fmt::format("q_{}_{}", report::findingKindName(kind), groups++), model);
        if (answer == z3::unsat) {
          for (PropertyIndex p : remaining)
            decided[p] = true;
          unsat += static_cast<int64_t>(remaining.size());
        } else if (answer == z3::sat) {
          grouped = harvest(*model) > 0;
        } else {
          grouped = false;
        }
        continue;
      }
      const PropertyIndex p = remaining.front();
      const z3::check_result answer =
          check({p}, literalFor(ctx, props.property(p)).to_string(), model);
      if (outOfTime || halted)
        break;
      if (answer == z3::sat && harvest(*model) > 0)
        continue;
      decided[p] = true;
      if (answer == z3::unsat) {
        ++unsat;
      } else {
        ++unknown;
        result.complete = false;
      }
    }
  }
  if (halted && !stopped)
    semantics::stopForRequest(result, options.events,
                              fmt::format("{} of {} properties decided",
                                          std::count(decided.begin(), decided.end(), true), count));
  else if (outOfTime && !stopped) {
    result.complete = false;
    result.reason = fmt::format("time limit of {:g} s reached with {} of {} properties decided",
                                userLimit, std::count(decided.begin(), decided.end(), true), count);
  }
  if (!firstUnknown.empty())
    result.reason = result.reason.empty() ? firstUnknown : firstUnknown + "; " + result.reason;

  result.semaphoreForms = encoder.semaphoreForms();
  // Deterministic counts first (printed always), then the times (--timing).
  result.stats.push_back({"queries", std::to_string(queries)});
  result.stats.push_back({"sat", std::to_string(sat)});
  result.stats.push_back({"unsat", std::to_string(unsat)});
  if (unknown > 0)
    result.stats.push_back({"unknown", std::to_string(unknown)});
  result.stats.push_back({"pruned race pairs", std::to_string(props.prunedRaces())});
  result.stats.push_back(
      {"obligations ordered statically", std::to_string(encoder.staticallyOrdered())});
  if (statically > 0)
    result.stats.push_back({"properties decided statically", std::to_string(statically)});
  if (simulated > 0)
    result.stats.push_back({"found by simulation", std::to_string(simulated)});
  result.stats.push_back({"derived edges", std::to_string(encoder.derivedEdges())});
  result.stats.push_back({"steps", std::to_string(encoder.stepCount())});
  result.stats.push_back({"variables", std::to_string(baseVariables)});
  result.stats.push_back({"assertions", std::to_string(encoder.base().size())});
  result.stats.push_back({"semaphores counted", std::to_string(encoder.countingForm())});
  result.stats.push_back({"semaphores summed", std::to_string(encoder.sumForm())});
  result.stats.push_back({"encoding time", fmt::format("{:.2f} s", encodeSeconds)});
  for (const auto &[kind, figures] : family)
    result.stats.push_back(
        {fmt::format("{} queries ({}) time", report::findingKindName(kind), figures.first),
         fmt::format("{:.2f} s", figures.second)});
  result.stats.push_back({"solver time", fmt::format("{:.2f} s", solveSeconds)});
  result.stats.push_back({"time", fmt::format("{:.2f} s", secondsSince(begin))});
  return result;
}

} // namespace

EngineResult checkWithZ3(const semantics::Machine &machine, const SmtOptions &options) {
  // No exception leaves the library: Z3 reports errors (and running out of memory)
  // as z3::exception.
  try {
    return checkImpl(machine, options);
  } catch (const z3::exception &e) {
    EngineResult result;
    result.complete = false;
    // Once interrupted (the run's stop request), a Z3 call outside a check throws
    // "canceled": the stop is the reason, not a failure of Z3.
    if (semantics::stopRequested(options.events))
      semantics::stopForRequest(result, options.events, "interrupted inside z3");
    else
      result.reason = fmt::format("z3 failed: {}", e.msg());
    return result;
  } catch (const std::bad_alloc &) {
    EngineResult result;
    result.complete = false;
    result.reason = "out of memory";
    return result;
  }
}

bool dumpSmt2(const semantics::Machine &machine, std::optional<PropertyIndex> property,
              std::string &text, std::string &error) {
  try {
    const semantics::Properties &props = machine.properties();
    z3::context ctx;
    Encoder encoder(ctx, machine);
    z3::solver solver(ctx);
    for (const z3::expr &c : encoder.base())
      solver.add(c);
    if (property) {
      solver.add(encoder.query(*property));
      std::vector<std::string> notes = encoder.notes();
      notes.push_back(fmt::format("the query of {}", props.property(*property).id));
      text = fmt::format("; dkv: {} ({})\n", props.property(*property).id,
                         props.property(*property).message) +
             annotate(solver, notes);
      return true;
    }
    std::vector<std::string> notes = encoder.notes();
    for (PropertyIndex p = 0; p < static_cast<PropertyIndex>(props.properties().size()); ++p) {
      solver.add(z3::implies(literalFor(ctx, props.property(p)), encoder.query(p)));
      notes.push_back(
          fmt::format("the query of {}, under q_{}", props.property(p).id, props.property(p).id));
    }
    std::string body = annotate(solver, notes);
    // to_smt2 ends with one (check-sat); the per-property checks replace it.
    const std::string tail = "(check-sat)\n";
    if (body.size() >= tail.size() &&
        body.compare(body.size() - tail.size(), tail.size(), tail) == 0)
      body.resize(body.size() - tail.size());
    text = "; dkv: every property, each as (echo ID) then its answer\n" + body;
    for (const semantics::Property &p : props.properties())
      text += fmt::format("(echo \"{}\")\n(check-sat-assuming (q_{}))\n", p.id, p.id);
    return true;
  } catch (const z3::exception &e) {
    error = fmt::format("z3 failed: {}", e.msg());
    return false;
  }
}

} // namespace dkv::smt
