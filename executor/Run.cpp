// One run: scheduling policies, the confirmation of any engine's witness in the
// executor, and the functional confirmation of races (the wrong value).
#include "executor/Executor.h"
#include "executor/Simulator.h"

#include <fmt/format.h>

#include <cmath>

namespace dkv::executor {

using namespace model;
using report::ScheduleStep;

namespace {

/// A small deterministic generator (splitmix64): the same seed gives the same
/// schedule on every platform.
class Rng {
public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  size_t below(size_t n) { return n == 0 ? 0 : static_cast<size_t>(next() % n); }

private:
  uint64_t state_;
};

/// Actor slots: device d is slot d, DMA k's send side N + 2k, its land side N + 2k + 1.
size_t slotOf(const ScheduleStep &step, int32_t devices) {
  switch (step.kind) {
  case ScheduleStep::Kind::Device:
    return static_cast<size_t>(step.id);
  case ScheduleStep::Kind::Send:
    return static_cast<size_t>(devices) + 2 * static_cast<size_t>(step.id);
  case ScheduleStep::Kind::Land:
    return static_cast<size_t>(devices) + 2 * static_cast<size_t>(step.id) + 1;
  }
  return 0;
}

void drive(Simulator &sim, const semantics::Machine &machine, const RunOptions &options,
           RunResult &result) {
  for (size_t i = 0; i < options.schedule.size(); ++i) {
    if (!sim.enabled(options.schedule[i])) {
      result.divergedAt = i;
      result.divergedWhy = machine.whyDisabled(sim.state(), options.schedule[i]);
      break;
    }
    sim.step(options.schedule[i]);
  }
  if (options.policy == Policy::Replay) {
    sim.finish();
    return;
  }
  Rng rng(options.seed);
  const int32_t n = machine.deviceCount();
  const size_t slots = static_cast<size_t>(n) + 2 * static_cast<size_t>(machine.dmaCount());
  std::vector<uint64_t> priority(slots);
  for (uint64_t &p : priority)
    p = rng.next();
  size_t last = slots; // round-robin: nothing chosen yet
  std::vector<ScheduleStep> steps;
  // Every step increases a pc or a DMA counter, so the loop ends: after at most the
  // number of events plus twice the number of DMA chunks steps.
  while (true) {
    sim.enabledSteps(steps);
    if (steps.empty())
      break;
    ScheduleStep chosen = steps.front();
    switch (options.policy) {
    case Policy::Random:
      chosen = steps[rng.below(steps.size())];
      break;
    case Policy::RoundRobin: {
      size_t best = slots * 2;
      for (const ScheduleStep &s : steps) {
        size_t slot = slotOf(s, n);
        size_t distance = last >= slots ? slot : (slot + slots - last - 1) % slots;
        if (distance < best) {
          best = distance;
          chosen = s;
        }
      }
      last = slotOf(chosen, n);
      break;
    }
    case Policy::Priority: {
      for (const ScheduleStep &s : steps)
        if (priority[slotOf(s, n)] > priority[slotOf(chosen, n)])
          chosen = s;
      // Occasionally demote the running actor, so that long stretches of one actor
      // alternate with others (schedules far from a fair interleaving).
      if (rng.below(16) == 0)
        priority[slotOf(chosen, n)] = rng.next() >> 8;
      break;
    }
    case Policy::Replay:
      break;
    }
    sim.step(chosen);
  }
  sim.finish();
}

std::string number(double v) {
  if (std::isfinite(v) && std::trunc(v) == v && std::fabs(v) < 1e15)
    return fmt::format("{}", static_cast<long long>(v));
  return fmt::format("{}", v);
}

std::string elementName(const Buffer &buffer, int64_t flat) {
  std::vector<int64_t> idx(buffer.shape.size(), 0);
  for (size_t i = buffer.shape.size(); i-- > 0;) {
    int64_t dim = std::max<int64_t>(1, buffer.shape[i]);
    idx[i] = flat % dim;
    flat /= dim;
  }
  return fmt::format("{}[{}]", buffer.name, fmt::join(idx, ", "));
}

bool isOutput(const Buffer &b) {
  return b.role == BufferRole::Output || b.role == BufferRole::InOut;
}

/// The first element that differs between two final memories: outputs first.
std::optional<std::string> firstDifference(const Program &program, const RunResult &a,
                                           const std::string &aName, const RunResult &b,
                                           const std::string &bName) {
  for (int pass = 0; pass < 2; ++pass)
    for (size_t d = 0; d < a.memory.size() && d < b.memory.size(); ++d)
      for (size_t buf = 0; buf < program.buffers.size(); ++buf) {
        const Buffer &buffer = program.buffers[buf];
        if (isOutput(buffer) != (pass == 0))
          continue;
        const std::vector<double> &x = a.memory[d][buf];
        const std::vector<double> &y = b.memory[d][buf];
        for (size_t e = 0; e < x.size() && e < y.size(); ++e)
          if (x[e] != y[e] && !(std::isnan(x[e]) && std::isnan(y[e])))
            return fmt::format("{} on device {} is {} {} and {} {}",
                               elementName(buffer, static_cast<int64_t>(e)), d, number(x[e]), aName,
                               number(y[e]), bName);
      }
  return std::nullopt;
}

} // namespace

RunResult runOnce(const semantics::Machine &machine, const RunOptions &options) {
  RunResult result;
  Simulator sim(machine, options.inputSeed);
  drive(sim, machine, options, result);
  result.findings = sim.findings();
  result.schedule = sim.schedule();
  result.trace = sim.trace();
  std::vector<ScheduleStep> steps;
  sim.enabledSteps(steps);
  result.completed = steps.empty() && sim.allDevicesFinished();
  result.enabledAtEnd = steps.size();
  result.memory = sim.memory();
  return result;
}

std::optional<std::string> findWrongValue(const semantics::Machine &machine, uint64_t inputSeed,
                                          const report::Schedule *witness, int schedules,
                                          const std::string &witnessName) {
  const Program &program = machine.program();
  std::vector<std::pair<std::string, RunResult>> runs;
  if (witness) {
    RunOptions o;
    o.policy = Policy::RoundRobin;
    o.inputSeed = inputSeed;
    o.schedule = *witness;
    runs.push_back({witnessName, runOnce(machine, o)});
  }
  {
    RunOptions o;
    o.policy = Policy::RoundRobin;
    o.inputSeed = inputSeed;
    runs.push_back({"with --round-robin", runOnce(machine, o)});
  }
  for (int i = 0; i < schedules; ++i) {
    RunOptions o;
    o.inputSeed = inputSeed;
    o.seed = static_cast<uint64_t>(i / 2);
    o.policy = i % 2 == 0 ? Policy::Random : Policy::Priority;
    std::string name = i % 2 == 0 ? fmt::format("with --seed {}", i / 2)
                                  : fmt::format("in priority schedule {}", i / 2);
    runs.push_back({name, runOnce(machine, o)});
  }
  // Runs that completed are compared first: a run stopped by a deadlock has not
  // written everything yet.
  for (int pass = 0; pass < 2; ++pass)
    for (size_t i = 0; i < runs.size(); ++i)
      for (size_t j = i + 1; j < runs.size(); ++j) {
        if (pass == 0 && !(runs[i].second.completed && runs[j].second.completed))
          continue;
        if (auto diff = firstDifference(program, runs[i].second, runs[i].first, runs[j].second,
                                        runs[j].first))
          return diff;
      }
  return std::nullopt;
}

void confirmFindings(const semantics::Machine &machine, std::vector<report::Finding> &findings) {
  bool wrongValueShown = false;
  for (report::Finding &f : findings) {
    if (f.schedule.empty())
      continue; // static findings have no witness to replay
    f.replayTried = true;
    RunOptions o;
    o.policy = Policy::Replay;
    o.schedule = f.schedule;
    RunResult run = runOnce(machine, o);
    f.confirmed = false;
    for (const report::Finding &g : run.findings)
      f.confirmed = f.confirmed || report::sameFinding(g, f);
    // The first race also shows the wrong value it produces.
    if (f.kind == report::FindingKind::Race && !wrongValueShown) {
      wrongValueShown = true;
      if (std::optional<std::string> w = findWrongValue(machine, 0, &f.schedule))
        f.wrongValue = *w;
    }
  }
}

} // namespace dkv::executor
