// One run: scheduling policies, the confirmation of any engine's witness in the
// executor, and the functional confirmation of races (the wrong value).
#include "executor/Executor.h"
#include "executor/Simulator.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>

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

/// Runs `sim` to its end with `policy` (not Replay): until no step is enabled.
void continueRun(Simulator &sim, const semantics::Machine &machine, Policy policy, uint64_t seed) {
  Rng rng(seed);
  const int32_t n = machine.deviceCount();
  const size_t slots = static_cast<size_t>(n) + 2 * static_cast<size_t>(machine.dmaCount());
  std::vector<uint64_t> priority(slots);
  for (uint64_t &p : priority)
    p = rng.next();
  size_t last = slots; // round-robin: nothing chosen yet
  std::vector<ScheduleStep> steps;
  // Round-robin: the first enabled step in slot order [from, to), looking only at the
  // devices and the DMAs in flight (the steps enabledSteps would list), so that a step
  // costs what is skipped, not O(devices + DMAs in flight).
  auto firstIn = [&](size_t from, size_t to) -> std::optional<ScheduleStep> {
    for (size_t d = from; d < std::min(to, static_cast<size_t>(n)); ++d)
      if (sim.enabled({ScheduleStep::Kind::Device, static_cast<int32_t>(d)}))
        return ScheduleStep{ScheduleStep::Kind::Device, static_cast<int32_t>(d)};
    const size_t low = std::max(from, static_cast<size_t>(n));
    if (low >= to)
      return std::nullopt;
    const DmaId first = static_cast<DmaId>((low - static_cast<size_t>(n)) / 2);
    for (auto it = sim.inFlight().lower_bound(first); it != sim.inFlight().end(); ++it) {
      const ScheduleStep send{ScheduleStep::Kind::Send, *it}, land{ScheduleStep::Kind::Land, *it};
      if (slotOf(send, n) >= to)
        break;
      if (slotOf(send, n) >= low && sim.enabled(send))
        return send;
      if (slotOf(land, n) >= low && slotOf(land, n) < to && sim.enabled(land))
        return land;
    }
    return std::nullopt;
  };
  // Every step increases a pc or a DMA counter, so the loop ends: after at most the
  // number of events plus twice the number of DMA chunks steps.
  while (true) {
    if (policy == Policy::RoundRobin) {
      // The step at the least distance after the last one chosen (as below, over every
      // enabled step): the first enabled one after it in slot order, cyclically.
      const size_t start = last >= slots ? 0 : (last + 1) % slots;
      std::optional<ScheduleStep> next = firstIn(start, slots);
      if (!next && start > 0)
        next = firstIn(0, start);
      if (!next)
        break;
      last = slotOf(*next, n);
      sim.step(*next);
      continue;
    }
    sim.enabledSteps(steps);
    if (steps.empty())
      break;
    ScheduleStep chosen = steps.front();
    switch (policy) {
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
  if (options.policy != Policy::Replay)
    continueRun(sim, machine, options.policy, options.seed);
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

} // namespace

RunResult runOnce(const semantics::Machine &machine, const RunOptions &options) {
  RunResult result;
  Simulator sim(machine, options.inputSeed, options.recordTrace, options.raceClocks);
  drive(sim, machine, options, result);
  std::vector<ScheduleStep> steps;
  sim.enabledSteps(steps);
  result.completed = steps.empty() && sim.allDevicesFinished();
  result.enabledAtEnd = steps.size();
  result.findings = sim.takeFindings();
  result.schedule = sim.takeSchedule();
  result.trace = sim.takeTrace();
  result.memory = sim.takeMemory();
  return result;
}

namespace {

/// One sampled run of the generic comparison: its name in the text ("with --seed 3").
struct Sample {
  std::string name;
  RunResult run;
};

/// A race obligation's two accesses as they take effect on memory: the access (a
/// store's write or read at its step; at a DMA's start, that DMA's source read, at its
/// last send, or its destination write, at its last land) and the other DMA's open
/// side (its last send or last land): the order of these two effects decides the data.
struct RaceAccesses {
  semantics::ObligationIndex obligation = -1;
  size_t step = 0; ///< the index in the schedule of the access's step (the violating one)
  std::optional<semantics::DmaSide> accessSide; ///< the access is a DMA's start
  semantics::DmaSide other;
};

/// The race obligation of `property` that a step of `schedule` violates (the first
/// such step), or nullopt.
std::optional<RaceAccesses> raceOf(const semantics::Machine &machine,
                                   const report::Schedule &schedule,
                                   semantics::PropertyIndex property) {
  const Program &program = machine.program();
  semantics::ControlState s = machine.initialState();
  std::vector<semantics::ObligationIndex> found;
  for (size_t i = 0; i < schedule.size(); ++i) {
    const ScheduleStep &step = schedule[i];
    if (!machine.enabled(s, step))
      return std::nullopt;
    found.clear();
    machine.violations(s, step, found);
    for (semantics::ObligationIndex o : found) {
      const semantics::Obligation &ob = machine.properties().obligation(o);
      if (ob.property != property || ob.what != semantics::Obligation::What::Race)
        continue;
      RaceAccesses race;
      race.obligation = o;
      race.step = i;
      race.other = {ob.dma, ob.dst};
      const Event &e = program.processes[ob.device].events[ob.pc];
      if (const auto *ds = std::get_if<DmaStart>(&e.kind))
        race.accessSide = semantics::DmaSide{ds->dma, ob.access != 0};
      return race;
    }
    machine.apply(s, step);
  }
  return std::nullopt;
}

bool isSideStep(const ScheduleStep &step, semantics::DmaSide side) {
  return step.id == side.dma &&
         step.kind == (side.dst ? ScheduleStep::Kind::Land : ScheduleStep::Kind::Send);
}

/// Takes steps of `sim` until DMA side `side` has taken effect (started, every chunk
/// moved): the DMA's own steps first (a send before a land), otherwise the first
/// enabled step (Machine::enabledSteps order) that `held` does not hold back. False
/// when no such step is left before that.
template <typename Held>
bool finishSide(Simulator &sim, const semantics::Machine &machine, semantics::DmaSide side,
                Held held) {
  std::vector<ScheduleStep> steps;
  while (!machine.started(sim.state(), side.dma) || machine.sideOpen(sim.state(), side)) {
    sim.enabledSteps(steps);
    const ScheduleStep *chosen = nullptr;
    for (const ScheduleStep &s : steps)
      if (s.kind != ScheduleStep::Kind::Device && s.id == side.dma && !held(s)) {
        chosen = &s;
        break;
      }
    for (size_t i = 0; i < steps.size() && !chosen; ++i)
      if (!held(steps[i]))
        chosen = &steps[i];
    if (!chosen)
      return false;
    sim.step(*chosen);
  }
  return true;
}

/// The run that follows `schedule` up to the race's access, takes the two accesses in
/// one order and ends round-robin: `accessFirst`, the access (and the side of the DMA
/// it starts) takes effect while the other DMA's side is held back; otherwise the
/// other DMA's side takes effect while the access's device is held back, then the
/// access. nullopt when that order cannot be taken from there.
std::optional<RunResult> orderedRun(const semantics::Machine &machine, uint64_t inputSeed,
                                    const report::Schedule &schedule, const RaceAccesses &race,
                                    bool accessFirst) {
  // Only the data is compared: no vector clocks.
  Simulator sim(machine, inputSeed, /*recordTrace=*/false, /*raceClocks=*/false);
  for (size_t i = 0; i < race.step; ++i)
    sim.step(schedule[i]); // raceOf replayed them
  const ScheduleStep access = schedule[race.step];
  auto never = [](const ScheduleStep &) { return false; };
  if (accessFirst) {
    sim.step(access);
    if (race.accessSide && !finishSide(sim, machine, *race.accessSide, [&](const ScheduleStep &s) {
          return isSideStep(s, race.other);
        }))
      return std::nullopt;
  } else {
    if (!finishSide(sim, machine, race.other, [&](const ScheduleStep &s) {
          return s.kind == ScheduleStep::Kind::Device && s.id == access.id;
        }))
      return std::nullopt;
    if (!sim.enabled(access))
      return std::nullopt;
    sim.step(access);
    if (race.accessSide && !finishSide(sim, machine, *race.accessSide, never))
      return std::nullopt;
  }
  continueRun(sim, machine, Policy::RoundRobin, 0);
  sim.finish();
  RunResult result;
  result.memory = sim.memory();
  result.completed = sim.allDevicesFinished();
  return result;
}

struct Element {
  size_t device = 0, buffer = 0, index = 0;
};

/// The first element whose final value differs between `a` and `b`: the outputs on
/// `device` first, then the other outputs, then the other buffers on `device`, then
/// the rest.
std::optional<Element> firstDifference(const Program &program, const RunResult &a,
                                       const RunResult &b, DeviceId device) {
  for (int pass = 0; pass < 4; ++pass)
    for (size_t d = 0; d < a.memory.size() && d < b.memory.size(); ++d) {
      if ((static_cast<DeviceId>(d) == device) != (pass % 2 == 0))
        continue;
      for (size_t buf = 0; buf < program.buffers.size(); ++buf) {
        if (isOutput(program.buffers[buf]) != (pass < 2))
          continue;
        // A buffer the cores share lives at its instance only (Simulator::memory).
        if (program.memoryOf(static_cast<DeviceId>(d), static_cast<BufferId>(buf)) !=
            static_cast<DeviceId>(d))
          continue;
        const std::vector<double> &x = a.memory[d][buf];
        const std::vector<double> &y = b.memory[d][buf];
        for (size_t e = 0; e < x.size() && e < y.size(); ++e)
          if (x[e] != y[e] && !(std::isnan(x[e]) && std::isnan(y[e])))
            return Element{d, buf, e};
      }
    }
  return std::nullopt;
}

/// "dma 0 (started at line 17 on device 0) lands in landing[:] on device 1".
std::string sideText(const Program &program, semantics::DmaSide side) {
  const Dma &dma = program.dmas[side.dma];
  const std::string dmaName =
      fmt::format("{} {} (started at line {} on {})", dma.local ? "local copy" : "dma", side.dma,
                  dma.loc.line, program.processName(dma.issuer));
  if (side.dst)
    return fmt::format("{} lands in {} on {}", dmaName, program.regionName(dma.dst),
                       program.memoryName(dma.target, dma.dst.buffer));
  return fmt::format("{} reads {} on {}", dmaName, program.regionName(dma.src),
                     program.memoryName(dma.issuer, dma.src.buffer));
}

/// The wrong value of a race (docs/executor.md "Functional confirmation"): two runs
/// that follow `schedule` up to the race and then take the two accesses in each
/// order; the first element they end with different values in, or that none differs.
/// nullopt when either order cannot be taken from the witness's prefix.
std::optional<std::string> raceWrongValue(const semantics::Machine &machine, uint64_t inputSeed,
                                          const report::Schedule &schedule,
                                          const RaceAccesses &race, const std::string &prefix) {
  const Program &program = machine.program();
  std::optional<RunResult> first = orderedRun(machine, inputSeed, schedule, race, true);
  std::optional<RunResult> second = orderedRun(machine, inputSeed, schedule, race, false);
  if (!first || !second)
    return std::nullopt;
  const semantics::Obligation &ob = machine.properties().obligation(race.obligation);
  const Event &e = program.processes[ob.device].events[ob.pc];
  std::string access;
  DeviceId memory = ob.device;
  if (race.accessSide) {
    access = sideText(program, *race.accessSide);
    const Dma &dma = program.dmas[race.accessSide->dma];
    memory = race.accessSide->dst ? program.memoryOf(dma.target, dma.dst.buffer)
                                  : program.memoryOf(dma.issuer, dma.src.buffer);
  } else {
    const Store &st = std::get<Store>(e.kind);
    access = ob.access < 0
                 ? fmt::format("the store to {} at line {} on {} runs", program.regionName(st.dst),
                               e.loc.line, program.processName(ob.device))
                 : fmt::format("the read of {} at line {} on {} runs",
                               program.regionName(st.reads[ob.access]), e.loc.line,
                               program.processName(ob.device));
  }
  std::optional<Element> at = firstDifference(program, *first, *second, memory);
  if (!at)
    return fmt::format("none seen with these inputs: both orders of the racing accesses ({} "
                       "first, or {} first, after {} up to the race) end with the same "
                       "memory; with other data they may not",
                       access, sideText(program, race.other), prefix);
  auto valueIn = [&](const RunResult &r) {
    return number(r.memory[at->device][at->buffer][at->index]);
  };
  return fmt::format(
      "{} on {} ends as {} when {} first and as {} when {} first (both runs follow "
      "{} up to the race, take the two in that order, then finish round-robin); nothing "
      "in the kernel orders them, so a run may end with either value: the one of the "
      "order the kernel means is right",
      elementName(program.buffers[at->buffer], static_cast<int64_t>(at->index)),
      program.memoryName(static_cast<DeviceId>(at->device), static_cast<BufferId>(at->buffer)),
      valueIn(*first), access, valueIn(*second), sideText(program, race.other), prefix);
}

/// The first difference between two of `runs`, e.g. "output[3] on device 1 is 2 with
/// --seed 4 and 0 with --seed 0"; runs that completed are compared first (a run
/// stopped by a deadlock has not written everything yet).
std::optional<std::string> anyDifference(const Program &program, const std::vector<Sample> &runs) {
  for (int pass = 0; pass < 2; ++pass)
    for (size_t i = 0; i < runs.size(); ++i)
      for (size_t j = i + 1; j < runs.size(); ++j) {
        if (pass == 0 && !(runs[i].run.completed && runs[j].run.completed))
          continue;
        const RunResult &a = runs[i].run;
        const RunResult &b = runs[j].run;
        if (std::optional<Element> at = firstDifference(program, a, b, -1))
          return fmt::format(
              "{} on {} is {} {} and {} {}",
              elementName(program.buffers[at->buffer], static_cast<int64_t>(at->index)),
              program.memoryName(static_cast<DeviceId>(at->device),
                                 static_cast<BufferId>(at->buffer)),
              number(a.memory[at->device][at->buffer][at->index]), runs[i].name,
              number(b.memory[at->device][at->buffer][at->index]), runs[j].name);
      }
  return std::nullopt;
}

} // namespace

std::optional<std::string> findWrongValue(const semantics::Machine &machine, uint64_t inputSeed,
                                          const report::Schedule *witness, int schedules,
                                          const std::string &witnessName,
                                          const std::string &property) {
  const Program &program = machine.program();
  // With the race known: the two orders of its accesses after the witness's prefix.
  std::optional<semantics::PropertyIndex> race = machine.properties().find(property);
  if (witness && race)
    if (std::optional<RaceAccesses> accesses = raceOf(machine, *witness, *race)) {
      const std::string prefix =
          witnessName.starts_with("in ") ? witnessName.substr(3) : witnessName;
      if (std::optional<std::string> text =
              raceWrongValue(machine, inputSeed, *witness, *accesses, prefix))
        return text;
    }

  // Otherwise any two sampled schedules that disagree, without a word on which is right.
  std::vector<Sample> runs;
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
  if (std::optional<std::string> diff = anyDifference(program, runs))
    return *diff + (race ? "; the executor cannot tell which value is expected" : "");
  return std::nullopt;
}

void confirmFinding(const semantics::Machine &machine, report::Finding &f) {
  if (f.schedule.empty())
    return; // static findings have no witness to replay
  f.replayTried = true;
  RunOptions o;
  o.policy = Policy::Replay;
  o.schedule = f.schedule;
  // The replay shows a finding of another kind from the control state alone (its last
  // step violates it); the vector clocks serve races, and a long witness on a large mesh
  // (an exit after the whole ring's rounds) would spend most of its time in them.
  o.raceClocks = f.kind == report::FindingKind::Race;
  // Only the findings' properties are compared: no trace texts (the finding has its own).
  o.recordTrace = false;
  RunResult run = runOnce(machine, o);
  f.confirmed = false;
  for (const report::Finding &g : run.findings)
    f.confirmed = f.confirmed || report::sameFinding(g, f);
  if (f.kind == report::FindingKind::Race)
    if (std::optional<std::string> w =
            findWrongValue(machine, 0, &f.schedule, 24, "in the witness schedule", f.property))
      f.wrongValue = *w;
}

void confirmFindings(const semantics::Machine &machine, std::vector<report::Finding> &findings) {
  for (report::Finding &f : findings)
    confirmFinding(machine, f);
}

} // namespace dkv::executor
