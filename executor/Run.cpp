// One run: scheduling policies, the confirmation of any engine's witness in the
// executor, and the functional confirmation of races (the wrong value).
#include "executor/Executor.h"
#include "executor/Simulator.h"

#include <fmt/format.h>

#include <algorithm>
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
        if (isOutput(buffer) != (pass == 0) ||
            program.memoryOf(static_cast<DeviceId>(d), static_cast<BufferId>(buf)) !=
                static_cast<DeviceId>(d))
          continue;
        const std::vector<double> &x = a.memory[d][buf];
        const std::vector<double> &y = b.memory[d][buf];
        for (size_t e = 0; e < x.size() && e < y.size(); ++e)
          if (x[e] != y[e] && !(std::isnan(x[e]) && std::isnan(y[e])))
            return fmt::format(
                "{} on {} is {} {} and {} {}", elementName(buffer, static_cast<int64_t>(e)),
                program.memoryName(static_cast<DeviceId>(d), static_cast<BufferId>(buf)),
                number(x[e]), aName, number(y[e]), bName);
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

namespace {

/// In which order a run took the two accesses of one race obligation: the access
/// (a Store or DmaStart event) before the DMA started, while the DMA's side was open
/// (the race), after that side had completed, or never (the run stopped before).
enum class Order { Before, Overlap, After, Never };

/// One sampled run of findWrongValue: its name in the text ("with --seed 3") and
/// the order of the witness's race obligation in it.
struct Sample {
  std::string name;
  RunResult run;
  Order order = Order::Never;
};

/// The race obligation of `property` that the last step of `witness` violates, or -1.
semantics::ObligationIndex raceOf(const semantics::Machine &machine,
                                  const report::Schedule &witness,
                                  semantics::PropertyIndex property) {
  semantics::ControlState s = machine.initialState();
  std::vector<semantics::ObligationIndex> found;
  for (const ScheduleStep &step : witness) {
    if (!machine.enabled(s, step))
      return -1;
    found.clear();
    machine.violations(s, step, found);
    for (semantics::ObligationIndex o : found)
      if (machine.properties().obligation(o).property == property &&
          machine.properties().obligation(o).what == semantics::Obligation::What::Race)
        return o;
    machine.apply(s, step);
  }
  return -1;
}

/// The order in which `schedule` takes the accesses of race obligation `o`.
Order orderOf(const semantics::Machine &machine, const report::Schedule &schedule,
              semantics::ObligationIndex o) {
  const semantics::Obligation &ob = machine.properties().obligation(o);
  semantics::ControlState s = machine.initialState();
  for (const ScheduleStep &step : schedule) {
    if (!machine.enabled(s, step))
      return Order::Never;
    if (step.kind == ScheduleStep::Kind::Device && step.id == ob.device &&
        s.pc[ob.device] == ob.pc) {
      if (!machine.started(s, ob.dma))
        return Order::Before;
      return machine.sideOpen(s, {ob.dma, ob.dst}) ? Order::Overlap : Order::After;
    }
    machine.apply(s, step);
  }
  return Order::Never;
}

struct Element {
  size_t device = 0, buffer = 0, index = 0;
};

double valueOf(const RunResult &run, const Element &at) {
  return run.memory[at.device][at.buffer][at.index];
}

bool sameValue(double x, double y) { return x == y || (std::isnan(x) && std::isnan(y)); }

/// The elements of the final memory, outputs first.
template <typename F> void forEachElement(const Program &program, const RunResult &run, F f) {
  for (int pass = 0; pass < 2; ++pass)
    for (size_t d = 0; d < run.memory.size(); ++d)
      for (size_t buf = 0; buf < program.buffers.size(); ++buf) {
        if (isOutput(program.buffers[buf]) != (pass == 0))
          continue;
        // A buffer the cores share lives at its instance only (Simulator::memory).
        if (program.memoryOf(static_cast<DeviceId>(d), static_cast<BufferId>(buf)) !=
            static_cast<DeviceId>(d))
          continue;
        for (size_t e = 0; e < run.memory[d][buf].size(); ++e)
          if (!f(Element{d, buf, e}))
            return;
      }
}

/// "9 (in the witness schedule)", "0 or 9 (with --seed 0, in priority schedule 3)":
/// the values of `at` in the completed samples of `order`, each with the first
/// sample that gave it. Empty when no completed sample has that order.
std::string valuesIn(const std::vector<Sample> &runs, Order order, const Element &at) {
  std::vector<std::pair<double, std::string>> seen;
  for (const Sample &r : runs) {
    if (r.order != order || !r.run.completed)
      continue;
    double v = valueOf(r.run, at);
    if (std::none_of(seen.begin(), seen.end(),
                     [&](const auto &x) { return sameValue(x.first, v); }))
      seen.push_back({v, r.name});
  }
  std::vector<std::string> values, names;
  for (const auto &[v, name] : seen) {
    values.push_back(number(v));
    names.push_back(name);
  }
  if (values.empty())
    return "";
  return fmt::format("{} ({})", fmt::join(values, " or "), fmt::join(names, ", "));
}

/// The wrong value of race obligation `o`, or nullopt when no element differs between
/// the completed samples of two different orders (then the generic search runs).
std::optional<std::string> raceWrongValue(const semantics::Machine &machine,
                                          std::vector<Sample> &runs, semantics::ObligationIndex o) {
  const Program &program = machine.program();
  const semantics::Obligation &ob = machine.properties().obligation(o);
  for (Sample &r : runs)
    r.order = orderOf(machine, r.run.schedule, o);
  // The device whose memory the race is on, and the racing access.
  DeviceId memory = ob.device;
  std::string access = "the store";
  const Event &e = program.processes[ob.device].events[ob.pc];
  if (const auto *ds = std::get_if<DmaStart>(&e.kind)) {
    memory = ob.access == 0 ? program.dmas[ds->dma].issuer : program.dmas[ds->dma].target;
    const Dma &dma = program.dmas[ds->dma];
    memory = program.memoryOf(memory, ob.access == 0 ? dma.src.buffer : dma.dst.buffer);
    access = fmt::format("the start of dma {}", ds->dma);
  } else if (ob.access >= 0) {
    access = "the load";
  }
  access += fmt::format(" at line {}", e.loc.line);
  // The first element on which two orders disagree, on the race's device first: an
  // element elsewhere may depend on other instances of the same race as well.
  std::optional<Element> found;
  for (int pass = 0; pass < 2 && !found; ++pass)
    forEachElement(program, runs[0].run, [&](const Element &at) {
      if ((static_cast<DeviceId>(at.device) == memory) != (pass == 0))
        return true;
      for (size_t i = 0; i < runs.size() && !found; ++i)
        for (size_t j = i + 1; j < runs.size() && !found; ++j)
          if (runs[i].run.completed && runs[j].run.completed && runs[i].order != runs[j].order &&
              runs[i].order != Order::Never && runs[j].order != Order::Never &&
              !sameValue(valueOf(runs[i].run, at), valueOf(runs[j].run, at)))
            found = at;
      return !found;
    });
  if (!found)
    return std::nullopt;
  const Element &at = *found;
  const std::string dma = fmt::format("dma {}", ob.dma);
  const std::string done = ob.dst ? "has landed" : "has read its source";
  // The first clause names the access, the others refer to it.
  std::vector<std::string> parts;
  auto who = [&] { return parts.empty() ? access : std::string("it"); };
  if (std::string v = valuesIn(runs, Order::Before, at); !v.empty())
    parts.push_back(fmt::format("{} when {} runs before {} starts", v, who(), dma));
  if (std::string v = valuesIn(runs, Order::After, at); !v.empty())
    parts.push_back(fmt::format("{} when {} runs after {} {}", v, who(), dma, done));
  if (std::string v = valuesIn(runs, Order::Overlap, at); !v.empty())
    parts.push_back(fmt::format("{} when {} runs while {} is open, the race", v, who(), dma));
  const DeviceId atDevice = static_cast<DeviceId>(at.device);
  std::string text = fmt::format(
      "{} on {} depends on the order of the racing accesses on {}: it ends as {}",
      elementName(program.buffers[at.buffer], static_cast<int64_t>(at.index)),
      program.memoryName(atDevice, static_cast<BufferId>(at.buffer)),
      atDevice == memory ? "this device" : program.processName(memory), fmt::join(parts, "; as "));
  // An expected value only when every completed sample without the race (either
  // order) agrees on it; when each order agrees with itself but not with the other,
  // the intended order decides, which dkv cannot know.
  std::vector<double> clean, before, after;
  auto note = [](std::vector<double> &values, double v) {
    if (std::none_of(values.begin(), values.end(), [&](double x) { return sameValue(x, v); }))
      values.push_back(v);
  };
  for (const Sample &r : runs)
    if (r.run.completed && (r.order == Order::Before || r.order == Order::After)) {
      note(clean, valueOf(r.run, at));
      note(r.order == Order::Before ? before : after, valueOf(r.run, at));
    }
  if (clean.size() == 1)
    text += fmt::format("; {} is the expected value: every sampled schedule without the race "
                        "gives it",
                        number(clean[0]));
  else if (before.size() == 1 && after.size() == 1)
    text += "; which order the kernel means decides which value is right";
  else if (clean.size() > 1)
    text += "; the sampled schedules without the race disagree among themselves too, so the "
            "expected value is not known";
  return text;
}

} // namespace

std::optional<std::string> findWrongValue(const semantics::Machine &machine, uint64_t inputSeed,
                                          const report::Schedule *witness, int schedules,
                                          const std::string &witnessName,
                                          const std::string &property) {
  const Program &program = machine.program();
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

  // With the race known: the samples grouped by the order in which they take the
  // witness's two racing accesses, on the first element two orders disagree on.
  std::optional<semantics::PropertyIndex> race = machine.properties().find(property);
  if (witness && race) {
    semantics::ObligationIndex o = raceOf(machine, *witness, *race);
    if (o >= 0)
      if (std::optional<std::string> text = raceWrongValue(machine, runs, o))
        return text;
  }

  // Otherwise any two samples that disagree, without a word on which is right.
  // Runs that completed are compared first: a run stopped by a deadlock has not
  // written everything yet.
  for (int pass = 0; pass < 2; ++pass)
    for (size_t i = 0; i < runs.size(); ++i)
      for (size_t j = i + 1; j < runs.size(); ++j) {
        if (pass == 0 && !(runs[i].run.completed && runs[j].run.completed))
          continue;
        if (auto diff =
                firstDifference(program, runs[i].run, runs[i].name, runs[j].run, runs[j].name))
          return *diff + (race ? "; the executor cannot tell which value is expected" : "");
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
      if (std::optional<std::string> w =
              findWrongValue(machine, 0, &f.schedule, 24, "in the witness schedule", f.property))
        f.wrongValue = *w;
    }
  }
}

} // namespace dkv::executor
