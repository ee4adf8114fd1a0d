// Reading pan's output and spin's trail replay, and mapping them back to the kernel.
#include "promela/Replay.h"

#include "model/Printer.h"

#include <fmt/format.h>

#include <cstdlib>
#include <sstream>

namespace dkv::promela {

using namespace model;

namespace {

bool startsWith(const std::string &s, const std::string &prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

std::string trimLeft(const std::string &s) {
  size_t i = s.find_first_not_of(" \t");
  return i == std::string::npos ? std::string() : s.substr(i);
}

/// The integer right before `marker` in `line` (e.g. "  202001 states, stored").
int64_t numberBefore(const std::string &line, const std::string &marker) {
  size_t pos = line.find(marker);
  if (pos == std::string::npos)
    return -1;
  std::string head = line.substr(0, pos);
  size_t end = head.find_last_not_of(" \t");
  if (end == std::string::npos)
    return -1;
  size_t begin = head.find_last_of(" \t,", end);
  begin = begin == std::string::npos ? 0 : begin + 1;
  return std::strtoll(head.substr(begin, end + 1 - begin).c_str(), nullptr, 10);
}

/// The integer right after `marker` in `line` (e.g. "depth reached 12").
int64_t numberAfter(const std::string &line, const std::string &marker) {
  size_t pos = line.find(marker);
  if (pos == std::string::npos)
    return -1;
  return std::strtoll(line.c_str() + pos + marker.size(), nullptr, 10);
}

} // namespace

PanReport parsePanOutput(const std::string &text) {
  PanReport r;
  std::istringstream in(text);
  std::string raw;
  while (std::getline(in, raw)) {
    std::string line = trimLeft(raw);
    if (startsWith(line, "pan:") && line.find("assertion violated") != std::string::npos) {
      r.assertionViolated = true;
      size_t begin = line.find("assertion violated") + std::string("assertion violated").size();
      size_t end = line.rfind(" (at depth");
      if (end != std::string::npos && end > begin)
        r.assertionText = trimLeft(line.substr(begin, end - begin));
    }
    if (startsWith(line, "pan:") && line.find("invalid end state") != std::string::npos)
      r.invalidEndState = true;
    if (line.find("max search depth too small") != std::string::npos)
      r.depthTooSmall = true;
    if (line.find("out of memory") != std::string::npos ||
        line.find("-DMEMLIM bound") != std::string::npos)
      r.outOfMemory = true;
    if (line.find("Search not completed") != std::string::npos)
      r.searchNotCompleted = true;
    if (startsWith(line, "State-vector")) {
      r.sawSummary = true;
      r.stateVectorBytes = numberAfter(line, "State-vector ");
      r.depthReached = numberAfter(line, "depth reached ");
      r.errors = numberAfter(line, "errors: ");
    }
    if (line.find("states, stored") != std::string::npos)
      r.statesStored = numberBefore(line, "states, stored");
    if (line.find("states, matched") != std::string::npos)
      r.statesMatched = numberBefore(line, "states, matched");
    if (line.find("transitions (= stored+matched)") != std::string::npos)
      r.transitions = numberBefore(line, "transitions");
    if (line.find("total actual memory usage") != std::string::npos)
      r.memoryMb = std::strtod(line.c_str(), nullptr);
    if (startsWith(line, "pan: elapsed time"))
      r.elapsedSeconds =
          std::strtod(line.c_str() + std::string("pan: elapsed time").size(), nullptr);
  }
  return r;
}

report::Schedule toSchedule(const std::vector<ReplayStep> &steps) {
  report::Schedule schedule;
  schedule.reserve(steps.size());
  for (const ReplayStep &step : steps) {
    report::ScheduleStep out;
    switch (step.kind) {
    case ReplayStep::Kind::Device:
      out.kind = report::ScheduleStep::Kind::Device;
      break;
    case ReplayStep::Kind::Send:
      out.kind = report::ScheduleStep::Kind::Send;
      break;
    case ReplayStep::Kind::Land:
      out.kind = report::ScheduleStep::Kind::Land;
      break;
    }
    out.id = step.id;
    schedule.push_back(out);
  }
  return schedule;
}

Replay parseReplay(const std::string &text) {
  Replay replay;
  std::istringstream in(text);
  std::string raw;
  while (std::getline(in, raw)) {
    std::string line = trimLeft(raw);
    if (startsWith(line, "DKV ")) {
      std::istringstream fields(line.substr(4));
      std::string kind;
      ReplayStep step;
      fields >> kind >> step.id;
      if (!fields)
        continue;
      if (kind == "d") {
        step.kind = ReplayStep::Kind::Device;
        fields >> step.event;
        if (!fields)
          continue;
      } else if (kind == "s") {
        step.kind = ReplayStep::Kind::Send;
      } else if (kind == "l") {
        step.kind = ReplayStep::Kind::Land;
      } else {
        continue;
      }
      replay.steps.push_back(step);
      continue;
    }
    // "spin: model.pml:42, Error: assertion violated"
    size_t error = line.find(", Error: assertion violated");
    if (startsWith(line, "spin: ") && error != std::string::npos && replay.assertLine == 0) {
      std::string where = line.substr(6, error - 6);
      size_t colon = where.rfind(':');
      if (colon != std::string::npos)
        replay.assertLine = std::atoi(where.c_str() + colon + 1);
    }
    const std::string textMarker = "spin: text of failed assertion: ";
    if (startsWith(line, textMarker) && replay.assertText.empty())
      replay.assertText = line.substr(textMarker.size());
  }
  return replay;
}

report::Trace buildTrace(const Program &program, const std::vector<ReplayStep> &steps,
                         ReplayState &state, int &skipped) {
  const size_t ndev = program.processes.size();
  state.pc.assign(ndev, 0);
  state.sem.assign(ndev, std::vector<int64_t>(program.semaphores.size(), 0));
  state.sent.assign(program.dmas.size(), 0);
  state.landed.assign(program.dmas.size(), 0);
  skipped = 0;

  // The context of each DMA is that of its start event.
  std::vector<std::string> dmaContext(program.dmas.size());
  for (const Process &proc : program.processes)
    for (const Event &e : proc.events)
      if (const auto *st = std::get_if<DmaStart>(&e.kind))
        if (e.context >= 0 && static_cast<size_t>(e.context) < program.contexts.size())
          dmaContext[st->dma] = program.contexts[e.context];

  report::Trace trace;
  trace.deviceCount = static_cast<int32_t>(ndev);
  const int32_t chunks = program.options.dmaChunks;
  for (const ReplayStep &step : steps) {
    report::TraceStep out;
    auto add = [&](DeviceId d, SemId s, int64_t amount) {
      state.sem[d][s] += amount;
      out.semValues[fmt::format("{}@{}", program.semName(s), d)] = state.sem[d][s];
    };
    if (step.kind == ReplayStep::Kind::Device) {
      if (step.id < 0 || static_cast<size_t>(step.id) >= ndev || step.event < 0 ||
          static_cast<size_t>(step.event) >= program.processes[step.id].events.size()) {
        ++skipped;
        continue;
      }
      const Event &e = program.processes[step.id].events[step.event];
      state.pc[step.id] = static_cast<size_t>(step.event) + 1;
      out.actor = {report::Actor::Kind::Device, step.id, step.id};
      out.text = describeEvent(program, e);
      out.loc = e.loc;
      if (e.context >= 0 && static_cast<size_t>(e.context) < program.contexts.size())
        out.context = program.contexts[e.context];
      if (const auto *w = std::get_if<SemWait>(&e.kind))
        add(step.id, w->sem, -w->amount);
      else if (const auto *s = std::get_if<Signal>(&e.kind))
        add(s->target, s->sem, s->amount);
    } else {
      if (step.id < 0 || static_cast<size_t>(step.id) >= program.dmas.size()) {
        ++skipped;
        continue;
      }
      const Dma &dma = program.dmas[step.id];
      bool send = step.kind == ReplayStep::Kind::Send;
      int32_t &counter = send ? state.sent[step.id] : state.landed[step.id];
      if (counter >= chunks || counter >= static_cast<int32_t>(dma.chunkUnits.size())) {
        ++skipped;
        continue;
      }
      int64_t units = dma.chunkUnits[counter];
      std::string chunk = chunks > 1 ? fmt::format(" chunk {}/{}", counter + 1, chunks) : "";
      ++counter;
      out.loc = dma.loc;
      out.context = dmaContext[step.id];
      if (send) {
        out.actor = {report::Actor::Kind::Dma, dma.id, dma.issuer};
        out.text = fmt::format("dma {} sends {}{}", dma.id, program.regionName(dma.src), chunk);
        if (dma.sendSem) {
          add(dma.issuer, *dma.sendSem, units);
          out.text += fmt::format(" ({} += {})", program.semName(*dma.sendSem), units);
        }
      } else {
        out.actor = {report::Actor::Kind::Dma, dma.id, dma.target};
        out.text = fmt::format("dma {} lands in {} on device {}{} ({} += {})", dma.id,
                               program.regionName(dma.dst), dma.target, chunk,
                               program.semName(dma.recvSem), units);
        add(dma.target, dma.recvSem, units);
      }
    }
    trace.steps.push_back(std::move(out));
  }
  return trace;
}

std::optional<report::Finding> deadlockFinding(const Program &program, const ReplayState &state) {
  report::Finding f;
  f.kind = report::FindingKind::Deadlock;
  f.engine = "spin";
  std::vector<std::string> parts;
  for (const Process &proc : program.processes) {
    size_t pc = state.pc[proc.device];
    if (pc >= proc.events.size())
      continue;
    const Event &e = proc.events[pc];
    std::string part;
    std::string label;
    if (const auto *w = std::get_if<SemWait>(&e.kind)) {
      int64_t value = state.sem[proc.device][w->sem];
      part = fmt::format("device {} waits for {} >= {} but it is {}", proc.device,
                         program.semName(w->sem), w->amount, value);
      label = fmt::format("device {} waits here ({} is {}, needs {})", proc.device,
                          program.semName(w->sem), value, w->amount);
    } else if (const auto *b = std::get_if<DeviceBarrier>(&e.kind)) {
      int reached = 0;
      for (const Process &other : program.processes)
        for (size_t i = 0; i < other.events.size(); ++i)
          if (const auto *ob = std::get_if<DeviceBarrier>(&other.events[i].kind))
            if (ob->invocation == b->invocation && state.pc[other.device] >= i) {
              ++reached;
              break;
            }
      part = fmt::format("device {} waits at the device barrier of invocation {} ({} of {} "
                         "devices arrived)",
                         proc.device, b->invocation, reached, program.deviceCount());
      label = fmt::format("device {} waits here", proc.device);
    } else {
      part = fmt::format("device {} is stuck before {}", proc.device, describeEvent(program, e));
      label = fmt::format("device {} is stuck here", proc.device);
    }
    parts.push_back(part);
    if (!f.primary.loc.valid() && f.primary.label.empty())
      f.primary = {e.loc, label};
    else
      f.secondary.push_back({e.loc, label});
  }
  if (parts.empty())
    return std::nullopt;
  f.message = fmt::format("{}", fmt::join(parts, "; "));
  return f;
}

report::Finding checkFinding(const Program &program, const Check &check, const ReplayState &state) {
  report::Finding f;
  f.kind = check.kind;
  f.engine = "spin";
  f.message = check.message;
  f.primary = check.primary;
  f.secondary = check.secondary;
  if (check.what == Check::What::ExitSemaphore && check.device >= 0 && check.sem >= 0 &&
      static_cast<size_t>(check.device) < state.sem.size())
    f.message += fmt::format(" (value {})", state.sem[check.device][check.sem]);
  return f;
}

} // namespace dkv::promela
