// One run: scheduling policies, `dkv run`, replay of other engines' schedules,
// schedule files and the functional confirmation of races.
#include "executor/Executor.h"
#include "executor/Machine.h"
#include "executor/Simulator.h"

#include "model/Verifier.h"
#include "report/Render.h"
#include "support/Invariant.h"
#include "support/Source.h"

#include <fmt/format.h>

#include <cmath>
#include <fstream>
#include <ostream>
#include <sstream>

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

void drive(Simulator &sim, const Machine &machine, const RunOptions &options,
           std::optional<size_t> &divergedAt) {
  for (size_t i = 0; i < options.schedule.size(); ++i) {
    if (!sim.enabled(options.schedule[i])) {
      divergedAt = i;
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
  // Every step increases a pc or a DMA counter, so a run ends after at most this many.
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

std::string abbreviated(const std::vector<double> &values) {
  constexpr size_t kHead = 8, kTail = 4;
  std::vector<std::string> parts;
  if (values.size() <= kHead + kTail + 4) {
    for (double v : values)
      parts.push_back(number(v));
  } else {
    for (size_t i = 0; i < kHead; ++i)
      parts.push_back(number(values[i]));
    parts.push_back(fmt::format("... ({} more) ...", values.size() - kHead - kTail));
    for (size_t i = values.size() - kTail; i < values.size(); ++i)
      parts.push_back(number(values[i]));
  }
  return fmt::format("[{}]", fmt::join(parts, ", "));
}

struct ParsedSchedule {
  report::Schedule steps;
  std::vector<size_t> lines;
  std::optional<uint64_t> inputSeed; ///< an `inputs SEED` line
};

std::optional<ParsedSchedule> parseScheduleLines(const std::string &text, size_t &errorLine,
                                                 std::string &error) {
  ParsedSchedule out;
  std::istringstream in(text);
  std::string raw;
  size_t line = 0;
  while (std::getline(in, raw)) {
    ++line;
    std::string content = raw.substr(0, raw.find('#'));
    std::istringstream words(content);
    std::string kind, id, extra;
    if (!(words >> kind))
      continue;
    if (kind == "inputs") {
      std::string seed;
      if (!(words >> seed) || seed.find_first_not_of("0123456789") != std::string::npos ||
          seed.size() > 19 || (words >> extra)) {
        errorLine = line;
        error = "'inputs' needs one non-negative number (the input seed)";
        return std::nullopt;
      }
      out.inputSeed = std::stoull(seed);
      continue;
    }
    ScheduleStep step;
    if (kind == "device")
      step.kind = ScheduleStep::Kind::Device;
    else if (kind == "send")
      step.kind = ScheduleStep::Kind::Send;
    else if (kind == "land")
      step.kind = ScheduleStep::Kind::Land;
    else {
      errorLine = line;
      error = fmt::format("unknown step '{}' (expected 'device D', 'send K' or 'land K')", kind);
      return std::nullopt;
    }
    if (!(words >> id) || id.find_first_not_of("0123456789") != std::string::npos ||
        id.size() > 9) {
      errorLine = line;
      error = fmt::format("'{}' needs a non-negative number", kind);
      return std::nullopt;
    }
    if (words >> extra) {
      errorLine = line;
      error = fmt::format("unexpected '{}' after the step", extra);
      return std::nullopt;
    }
    step.id = static_cast<int32_t>(std::stol(id));
    out.steps.push_back(step);
    out.lines.push_back(line);
  }
  return out;
}

/// Why `step` cannot run in the simulator's current state, for error messages.
std::string whyDisabled(const Machine &machine, const ControlState &s, const ScheduleStep &step) {
  const Program &program = machine.program();
  switch (step.kind) {
  case ScheduleStep::Kind::Device:
    if (step.id < 0 || step.id >= machine.deviceCount())
      return fmt::format("there is no device {} (the program has {})", step.id,
                         machine.deviceCount());
    if (machine.finished(s, step.id))
      return fmt::format("device {} has finished", step.id);
    if (const auto *w =
            std::get_if<SemWait>(&program.processes[step.id].events[s.pc[step.id]].kind))
      return fmt::format("device {} waits for {} >= {} but it is {}", step.id,
                         program.semName(w->sem), w->amount,
                         s.sem[static_cast<size_t>(step.id) * machine.semCount() + w->sem]);
    return fmt::format("device {} waits at a device barrier", step.id);
  case ScheduleStep::Kind::Send:
  case ScheduleStep::Kind::Land:
    if (step.id < 0 || step.id >= machine.dmaCount())
      return fmt::format("there is no dma {} (the program has {})", step.id, machine.dmaCount());
    if (!machine.started(s, step.id))
      return fmt::format("dma {} has not started", step.id);
    if (step.kind == ScheduleStep::Kind::Send)
      return fmt::format("dma {} has sent all its chunks", step.id);
    return fmt::format("dma {} has no chunk in flight", step.id);
  }
  return "";
}

} // namespace

RunResult runOnce(const Program &program, const RunOptions &options) {
  RunResult result;
  if (!verifyProgram(program).empty())
    return result;
  Machine machine(program);
  Simulator sim(machine, options.inputSeed);
  drive(sim, machine, options, result.divergedAt);
  result.findings = sim.findings();
  result.schedule = sim.schedule();
  result.trace = sim.trace();
  std::vector<ScheduleStep> steps;
  sim.enabledSteps(steps);
  result.completed = steps.empty() && sim.allDevicesFinished();
  result.memory = sim.memory();
  return result;
}

std::optional<std::string> findWrongValue(const Program &program, uint64_t inputSeed,
                                          const report::Schedule *witness, int schedules,
                                          const std::string &witnessName) {
  if (!verifyProgram(program).empty())
    return std::nullopt;
  std::vector<std::pair<std::string, RunResult>> runs;
  if (witness) {
    RunOptions o;
    o.policy = Policy::RoundRobin;
    o.inputSeed = inputSeed;
    o.schedule = *witness;
    runs.push_back({witnessName, runOnce(program, o)});
  }
  {
    RunOptions o;
    o.policy = Policy::RoundRobin;
    o.inputSeed = inputSeed;
    runs.push_back({"with --round-robin", runOnce(program, o)});
  }
  for (int i = 0; i < schedules; ++i) {
    RunOptions o;
    o.inputSeed = inputSeed;
    o.seed = static_cast<uint64_t>(i / 2);
    o.policy = i % 2 == 0 ? Policy::Random : Policy::Priority;
    std::string name = i % 2 == 0 ? fmt::format("with --seed {}", i / 2)
                                  : fmt::format("in priority schedule {}", i / 2);
    runs.push_back({name, runOnce(program, o)});
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

std::string formatSchedule(const report::Schedule &schedule, std::optional<uint64_t> inputSeed) {
  std::string out = "# dkv schedule: one step per line (device D | send K | land K)\n";
  if (inputSeed)
    out += fmt::format("inputs {}\n", *inputSeed);
  for (const ScheduleStep &step : schedule)
    out += report::scheduleStepText(step) + "\n";
  return out;
}

std::optional<report::Schedule> parseSchedule(const std::string &text, size_t &errorLine,
                                              std::string &error) {
  std::optional<ParsedSchedule> parsed = parseScheduleLines(text, errorLine, error);
  if (!parsed)
    return std::nullopt;
  return parsed->steps;
}

std::vector<report::Finding> replay(const Program &program, const report::Schedule &schedule) {
  RunOptions o;
  o.policy = Policy::Replay;
  o.schedule = schedule;
  return runOnce(program, o).findings;
}

void confirmFindings(const Program &program, std::vector<report::Finding> &findings,
                     const std::string &engine) {
  for (report::Finding &f : findings) {
    if (f.schedule.empty())
      continue; // static findings have no witness to replay
    f.replayTried = true;
    for (const report::Finding &g : replay(program, f.schedule))
      f.confirmed = f.confirmed || report::sameFinding(g, f);
  }
  showWrongValueOfFirstRace(program, findings, "in " + engine + "'s counterexample");
}

void showWrongValueOfFirstRace(const Program &program, std::vector<report::Finding> &findings,
                               const std::string &witnessName) {
  for (report::Finding &f : findings)
    if (f.kind == report::FindingKind::Race && f.wrongValue.empty()) {
      if (std::optional<std::string> w = findWrongValue(program, 0, &f.schedule, 24, witnessName))
        f.wrongValue = *w;
      return;
    }
}

namespace {

int runCommandImpl(const Program &program, const support::SourceFile &source,
                   const RunConfig &config, std::ostream &out, std::ostream &err) {
  std::vector<std::string> problems = verifyProgram(program);
  if (!problems.empty()) {
    err << "error: the model is malformed: " << problems.front() << "\n";
    return support::kExitInternal;
  }
  RunOptions options;
  options.inputSeed = config.seed.value_or(0);
  options.seed = config.seed.value_or(0);
  std::vector<size_t> lines;
  std::string policy;
  if (!config.scheduleFile.empty()) {
    // The same reader as kernel files: a directory or an unreadable path is an
    // error, and an endless file (/dev/zero) stops at the size limit.
    std::string error;
    std::optional<support::SourceFile> text = support::SourceFile::load(config.scheduleFile, error);
    if (text && text->truncated())
      error = fmt::format("the schedule file is larger than {} bytes",
                          support::SourceFile::kMaxLoadBytes);
    if (!text || text->truncated()) {
      err << fmt::format("{}: error: {}\n", config.scheduleFile, error);
      return support::kExitInputError;
    }
    size_t errorLine = 0;
    std::optional<ParsedSchedule> parsed = parseScheduleLines(text->text(), errorLine, error);
    if (!parsed) {
      err << fmt::format("{}:{}: error: {}\n", config.scheduleFile, errorLine, error);
      return support::kExitInputError;
    }
    options.policy = Policy::Replay;
    options.schedule = std::move(parsed->steps);
    lines = std::move(parsed->lines);
    if (parsed->inputSeed)
      options.inputSeed = *parsed->inputSeed;
    policy = fmt::format("schedule from {}", config.scheduleFile);
  } else if (config.roundRobin) {
    options.policy = Policy::RoundRobin;
    policy = "round-robin schedule";
  } else {
    options.policy = Policy::Random;
    policy = "random schedule";
  }

  Machine machine(program);
  Simulator sim(machine, options.inputSeed);
  std::optional<size_t> diverged;
  drive(sim, machine, options, diverged);
  if (diverged) {
    const ScheduleStep &step = options.schedule[*diverged];
    err << fmt::format("{}:{}: error: step '{}' is not enabled after {} steps: {}\n",
                       config.scheduleFile, lines[*diverged], report::scheduleStepText(step),
                       *diverged, whyDisabled(machine, sim.state(), step));
    return support::kExitInputError;
  }
  if (!config.writeSchedule.empty()) {
    std::ofstream file(config.writeSchedule);
    file << formatSchedule(sim.schedule(), options.inputSeed);
    if (!file) {
      err << fmt::format("error: cannot write schedule to '{}'\n", config.writeSchedule);
      return support::kExitUsage;
    }
  }

  if (options.policy == Policy::Replay)
    out << fmt::format("{} (inputs from seed {})\n", policy, options.inputSeed);
  else
    out << fmt::format("seed {} ({}, inputs from seed {})\n", options.seed, policy,
                       options.inputSeed);
  std::vector<ScheduleStep> enabled;
  sim.enabledSteps(enabled);
  if (enabled.empty() && sim.allDevicesFinished())
    out << fmt::format("{} steps; every device finished\n", sim.schedule().size());
  else if (enabled.empty())
    out << fmt::format("{} steps; the run is stuck\n", sim.schedule().size());
  else
    out << fmt::format("{} steps; the schedule ends here ({} steps could still run)\n",
                       sim.schedule().size(), enabled.size());

  std::vector<report::Finding> findings = sim.findings();
  if (!findings.empty()) {
    for (report::Finding &f : findings)
      if (f.kind == report::FindingKind::Race) {
        report::Schedule taken = sim.schedule();
        if (std::optional<std::string> w =
                findWrongValue(program, options.inputSeed, &taken, 24, "in this run"))
          f.wrongValue = *w;
        break;
      }
    out << fmt::format("{} finding{}\n", findings.size(), findings.size() == 1 ? "" : "s");
    for (const report::Finding &f : findings)
      report::renderFinding(out, f, &source);
    return support::kExitFindings;
  }
  // The inputs as the run saw them, so a reader can check the outputs by hand.
  out << "inputs:\n";
  for (DeviceId d = 0; d < program.deviceCount(); ++d)
    for (size_t b = 0; b < program.buffers.size(); ++b) {
      const Buffer &buffer = program.buffers[b];
      if (buffer.role != BufferRole::Input && buffer.role != BufferRole::InOut)
        continue;
      std::vector<double> values(static_cast<size_t>(buffer.elementCount()));
      for (size_t e = 0; e < values.size(); ++e)
        values[e] =
            inputValue(options.inputSeed, d, static_cast<BufferId>(b), static_cast<int64_t>(e));
      out << fmt::format("  device {} {} = {}\n", d, buffer.name, abbreviated(values));
    }
  out << "outputs:\n";
  for (DeviceId d = 0; d < program.deviceCount(); ++d)
    for (size_t b = 0; b < program.buffers.size(); ++b) {
      const Buffer &buffer = program.buffers[b];
      if (!isOutput(buffer))
        continue;
      out << fmt::format("  device {} {} = {}\n", d, buffer.name, abbreviated(sim.memory()[d][b]));
    }
  return support::kExitOk;
}

} // namespace

int runCommand(const Program &program, const support::SourceFile &source, const RunConfig &config,
               std::ostream &out, std::ostream &err) {
  try {
    return runCommandImpl(program, source, config, out, err);
  } catch (const std::exception &e) {
    err << "error: the run failed: " << e.what() << "\n";
    return support::kExitInternal;
  }
}

} // namespace dkv::executor
