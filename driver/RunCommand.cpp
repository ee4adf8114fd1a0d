// `dkv run`: one schedule on simulated devices, its findings or its outputs.
#include "driver/Commands.h"

#include "driver/TracePictures.h"
#include "executor/Executor.h"
#include "report/Render.h"
#include "semantics/Schedule.h"
#include "support/Diagnostics.h"
#include "support/Invariant.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <fstream>
#include <ostream>

namespace dkv::driver {

using namespace model;
using report::ScheduleStep;

namespace {

std::string number(double v) {
  if (std::isfinite(v) && std::trunc(v) == v && std::fabs(v) < 1e15)
    return fmt::format("{}", static_cast<long long>(v));
  return fmt::format("{}", v);
}
bool isOutput(const Buffer &b) {
  return b.role == BufferRole::Output || b.role == BufferRole::InOut;
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

int runImpl(const semantics::Machine &machine, const support::SourceManager &sources,
            const RunOptions &config, std::ostream &out, std::ostream &err) {
  const Program &program = machine.program();
  executor::RunOptions options;
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
    std::optional<semantics::ScheduleFile> parsed =
        semantics::parseScheduleFile(text->text(), errorLine, error);
    if (!parsed) {
      err << fmt::format("{}:{}: error: {}\n", config.scheduleFile, errorLine, error);
      return support::kExitInputError;
    }
    options.policy = executor::Policy::Replay;
    options.schedule = std::move(parsed->steps);
    lines = std::move(parsed->lines);
    if (parsed->inputSeed)
      options.inputSeed = *parsed->inputSeed;
    policy = fmt::format("schedule from {}", config.scheduleFile);
  } else if (config.roundRobin) {
    options.policy = executor::Policy::RoundRobin;
    policy = "round-robin schedule";
  } else {
    options.policy = executor::Policy::Random;
    policy = "random schedule";
  }

  executor::RunResult run = executor::runOnce(machine, options);
  if (run.divergedAt) {
    const size_t at = *run.divergedAt;
    const ScheduleStep &step = options.schedule[at];
    err << fmt::format("{}:{}: error: step '{}' is not enabled after {} steps: {}\n",
                       config.scheduleFile, lines[at], report::scheduleStepText(step), at,
                       run.divergedWhy);
    return support::kExitInputError;
  }
  if (!config.writeSchedule.empty()) {
    std::ofstream file(config.writeSchedule);
    file << semantics::formatSchedule(run.schedule, options.inputSeed);
    if (!file) {
      err << fmt::format("error: cannot write schedule to '{}'\n", config.writeSchedule);
      return support::kExitUsage;
    }
  }

  if (int code = writeRunPictures(machine, sources, config, run, policy, options.inputSeed, err);
      code != support::kExitOk)
    return code;

  if (options.policy == executor::Policy::Replay)
    out << fmt::format("{} (inputs from seed {})\n", policy, options.inputSeed);
  else
    out << fmt::format("seed {} ({}, inputs from seed {})\n", options.seed, policy,
                       options.inputSeed);
  if (run.completed)
    out << fmt::format("{} steps; every device finished\n", run.schedule.size());
  else if (run.enabledAtEnd == 0)
    out << fmt::format("{} steps; the run is stuck\n", run.schedule.size());
  else
    out << fmt::format("{} steps; the schedule ends here ({} steps could still run)\n",
                       run.schedule.size(), run.enabledAtEnd);

  std::vector<report::Finding> findings = run.findings;
  if (!findings.empty()) {
    for (report::Finding &f : findings)
      if (f.kind == report::FindingKind::Race) {
        if (std::optional<std::string> w = executor::findWrongValue(
                machine, options.inputSeed, &run.schedule, 24, "in this run", f.property))
          f.wrongValue = *w;
        break;
      }
    out << fmt::format("{} finding{}\n", findings.size(), findings.size() == 1 ? "" : "s");
    for (const report::Finding &f : findings)
      report::renderFinding(out, f, &sources, {}, config.width);
    return support::kExitFindings;
  }
  // The inputs as the run saw them, so a reader can check the outputs by hand.
  out << "inputs:\n";
  // Each memory instance once: a buffer the cores of a device share is shown for the
  // device (docs/model.md "TensorCores").
  auto instance = [&](DeviceId d, size_t b) {
    return program.memoryOf(d, static_cast<BufferId>(b)) == d;
  };
  for (DeviceId d = 0; d < program.deviceCount(); ++d)
    for (size_t b = 0; b < program.buffers.size(); ++b) {
      const Buffer &buffer = program.buffers[b];
      if ((buffer.role != BufferRole::Input && buffer.role != BufferRole::InOut) || !instance(d, b))
        continue;
      std::vector<double> values(static_cast<size_t>(buffer.elementCount()));
      for (size_t e = 0; e < values.size(); ++e)
        values[e] = executor::inputValue(options.inputSeed, d, static_cast<BufferId>(b),
                                         static_cast<int64_t>(e));
      out << fmt::format("  {} {} = {}\n", program.memoryName(d, static_cast<BufferId>(b)),
                         buffer.name, abbreviated(values));
    }
  out << "outputs:\n";
  for (DeviceId d = 0; d < program.deviceCount(); ++d)
    for (size_t b = 0; b < program.buffers.size(); ++b) {
      const Buffer &buffer = program.buffers[b];
      if (!isOutput(buffer) || !instance(d, b))
        continue;
      out << fmt::format("  {} {} = {}\n", program.memoryName(d, static_cast<BufferId>(b)),
                         buffer.name, abbreviated(run.memory[d][b]));
    }
  return support::kExitOk;
}

} // namespace

int runSchedule(const semantics::Machine &machine, const support::SourceManager &sources,
                const RunOptions &config, std::ostream &out, std::ostream &err) {
  try {
    return runImpl(machine, sources, config, out, err);
  } catch (const std::exception &e) {
    err << "error: the run failed: " << e.what() << "\n";
    return support::kExitInternal;
  }
}

} // namespace dkv::driver
