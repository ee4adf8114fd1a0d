// Witness schedules -> findings and traces, the same for every engine.
#include "semantics/Witness.h"

#include "model/Printer.h"
#include "support/Invariant.h"
#include "support/Overloaded.h"

#include <fmt/format.h>

#include <algorithm>

namespace dkv::semantics {

using namespace model;
using report::ScheduleStep;

void traceValues(const Machine &machine, const ControlState &after, const ScheduleStep &step,
                 report::TraceStep &out) {
  const Program &program = machine.program();
  auto note = [&](DeviceId d, SemId s) {
    out.semValues[fmt::format("{}@{}", program.semName(s), d)] = machine.semValue(after, d, s);
  };
  switch (step.kind) {
  case ScheduleStep::Kind::Device: {
    const Event &e = program.processes[step.id].events[after.pc[step.id] - 1];
    std::visit(support::Overloaded{
                   [&](const SemWait &w) { note(step.id, w.sem); },
                   [&](const Signal &sig) { note(sig.target, sig.sem); },
                   [](const KernelEnter &) {},
                   [](const KernelExit &) {},
                   [](const DeviceBarrier &) {},
                   [](const ScopeEnter &) {},
                   [](const ScopeExit &) {},
                   [](const Store &) {},
                   [](const DmaStart &) {},
                   [](const SemRead &) {},
               },
               e.kind);
    return;
  }
  case ScheduleStep::Kind::Send:
    if (const Dma &dma = program.dmas[step.id]; dma.sendSem)
      note(dma.issuer, *dma.sendSem);
    return;
  case ScheduleStep::Kind::Land: {
    const Dma &dma = program.dmas[step.id];
    note(dma.target, dma.recvSem);
    return;
  }
  }
}

namespace {

/// The DMA fields of a trace step about DMA k (its start, send or land).
void describeDma(const Machine &machine, DmaId k, report::TraceStep &out) {
  const Program &program = machine.program();
  const Dma &dma = program.dmas[k];
  out.dma = k;
  out.peer = dma.target;
  out.bytes = dma.bytes;
  out.chunks = machine.chunks(k);
  out.region = fmt::format("{} -> {}", program.regionName(dma.src), program.regionName(dma.dst));
}

} // namespace

report::TraceStep traceStep(const Machine &machine, const ControlState &before,
                            const ScheduleStep &step) {
  const Program &program = machine.program();
  report::TraceStep out;
  switch (step.kind) {
  case ScheduleStep::Kind::Device: {
    const DeviceId d = step.id;
    const Event &e = program.processes[d].events[before.pc[d]];
    out.actor = {report::Actor::Kind::Device, d, d};
    out.text = describeEvent(program, e);
    out.loc = e.loc;
    using What = report::TraceStep::What;
    std::visit(support::Overloaded{
                   [&](const DmaStart &start) {
                     out.what = What::DmaStart;
                     describeDma(machine, start.dma, out);
                   },
                   [&](const SemWait &) { out.what = What::Wait; },
                   [&](const Signal &sig) {
                     out.what = What::Signal;
                     out.peer = sig.target;
                   },
                   [&](const Store &) { out.what = What::Store; },
                   [&](const DeviceBarrier &) { out.what = What::Barrier; },
                   [&](const KernelEnter &) { out.what = What::Enter; },
                   [&](const KernelExit &) { out.what = What::Exit; },
                   [](const ScopeEnter &) {},
                   [](const ScopeExit &) {},
                   [](const SemRead &) {},
               },
               e.kind);
    if (e.context >= 0 && static_cast<size_t>(e.context) < program.contexts.size())
      out.context = program.contexts[e.context];
    return out;
  }
  case ScheduleStep::Kind::Send:
  case ScheduleStep::Kind::Land: {
    const DmaId k = step.id;
    const Dma &dma = program.dmas[k];
    const bool send = step.kind == ScheduleStep::Kind::Send;
    const int32_t chunk = machine.nextChunk(before, step);
    const int32_t chunks = machine.chunks(k);
    const int64_t units = machine.nextChunkUnits(before, step);
    std::string chunkText = chunks > 1 ? fmt::format(" chunk {}/{}", chunk + 1, chunks) : "";
    out.loc = dma.loc;
    out.what = send ? report::TraceStep::What::Send : report::TraceStep::What::Land;
    describeDma(machine, k, out);
    out.chunk = chunk;
    // A DMA's context is that of its start event.
    const int32_t start = machine.properties().startPc(k);
    if (start >= 0) {
      const Event &e = program.processes[dma.issuer].events[start];
      if (e.context >= 0 && static_cast<size_t>(e.context) < program.contexts.size())
        out.context = program.contexts[e.context];
    }
    if (send) {
      out.actor = {report::Actor::Kind::Dma, k, dma.issuer};
      out.text = fmt::format("dma {} sends {}{}", k, program.regionName(dma.src), chunkText);
      if (dma.sendSem)
        out.text += fmt::format(" ({} += {})", program.semName(*dma.sendSem), units);
    } else {
      out.actor = {report::Actor::Kind::Dma, k, dma.target};
      out.text = fmt::format("dma {} lands in {} on device {}{} ({} += {})", k,
                             program.regionName(dma.dst), dma.target, chunkText,
                             program.semName(dma.recvSem), units);
    }
    return out;
  }
  }
  DKV_UNREACHABLE("schedule step kind");
}

std::optional<ControlState> replaySchedule(const Machine &machine, const report::Schedule &schedule,
                                           ControlState &beforeLast, report::Trace *trace,
                                           std::string &error) {
  ControlState s = machine.initialState();
  beforeLast = s;
  // For the trace: since how many steps each device has been blocked at its next
  // event (-1: not blocked), so that pictures draw a wait from where it blocks.
  std::vector<int32_t> blockedSince(static_cast<size_t>(machine.deviceCount()), -1);
  auto noteBlocked = [&](size_t taken) {
    for (DeviceId d = 0; d < machine.deviceCount(); ++d)
      if (blockedSince[d] < 0 && !machine.finished(s, d) &&
          !machine.enabled(s, {ScheduleStep::Kind::Device, d}))
        blockedSince[d] = static_cast<int32_t>(taken);
  };
  if (trace) {
    trace->deviceCount = machine.deviceCount();
    noteBlocked(0);
  }
  for (size_t i = 0; i < schedule.size(); ++i) {
    const ScheduleStep &step = schedule[i];
    if (!machine.enabled(s, step)) {
      error = fmt::format("step {} ('{}') is not enabled: {}", i + 1,
                          report::scheduleStepText(step), machine.whyDisabled(s, step));
      return std::nullopt;
    }
    beforeLast = s;
    if (trace) {
      trace->steps.push_back(traceStep(machine, s, step));
      if (step.kind == ScheduleStep::Kind::Device) {
        trace->steps.back().blockedSince = blockedSince[step.id];
        blockedSince[step.id] = -1;
      }
    }
    machine.apply(s, step);
    if (trace) {
      traceValues(machine, s, step, trace->steps.back());
      noteBlocked(i + 1);
    }
  }
  if (trace) {
    for (DeviceId d = 0; d < machine.deviceCount(); ++d) {
      if (blockedSince[d] < 0)
        continue;
      report::TraceStep blocked = traceStep(machine, s, {ScheduleStep::Kind::Device, d});
      blocked.text = machine.describeBlocked(s, d);
      blocked.blockedSince = blockedSince[d];
      trace->blocked.push_back(std::move(blocked));
    }
    for (DmaId k = 0; k < machine.dmaCount(); ++k)
      if (machine.sideOpen(s, {k, false}) || machine.sideOpen(s, {k, true}))
        trace->inFlight.push_back(k);
  }
  return s;
}

namespace {

/// The steps of `trace` the obligation is about (Trace::marks): the violating last
/// step (a race's access, a device leaving, a landing or signal out of its
/// lifetime) and the start of the DMA the obligation names. A deadlock has none: its
/// stuck waits are Trace::blocked.
void markTrace(const Machine &machine, const Obligation &o, report::Trace &trace) {
  if (o.what == Obligation::What::Stuck || trace.steps.empty())
    return;
  using What = Obligation::What;
  const bool race = o.what == What::Race;
  const int32_t last = static_cast<int32_t>(trace.steps.size()) - 1;
  std::string lastLabel = race                                                   ? "racing access"
                          : o.what == What::ExitSemaphore                        ? "leaves with a "
                                                                                   "non-zero semaphore"
                          : o.what == What::ExitSend || o.what == What::ExitRecv ? "leaves with a "
                                                                                   "dma in flight"
                                                                                 : "violation";
  trace.marks.push_back({last, lastLabel});
  if (o.dma < 0 || o.dma >= machine.dmaCount())
    return;
  for (int32_t i = 0; i < last; ++i) {
    const report::TraceStep &step = trace.steps[i];
    if (step.what == report::TraceStep::What::DmaStart && step.dma == o.dma) {
      std::string label =
          race ? fmt::format("racing dma (still {} its {})", o.dst ? "writing" : "reading",
                             o.dst ? "destination" : "source")
               : "the dma started here";
      trace.marks.push_back({i, label});
      break;
    }
  }
}

} // namespace

report::Finding makeFinding(const Machine &machine, ObligationIndex o,
                            const report::Schedule &schedule, const report::Trace &trace,
                            const ControlState &before, const std::string &engine) {
  const Properties &props = machine.properties();
  const Property &p = props.property(props.obligation(o).property);
  report::Finding f;
  f.kind = p.kind;
  f.property = p.id;
  f.message = p.message;
  f.primary = p.primary;
  f.secondary = p.secondary;
  f.detail = machine.describe(before, o);
  f.trace = trace;
  markTrace(machine, props.obligation(o), f.trace);
  f.schedule = schedule;
  f.engine = engine;
  return f;
}

std::optional<report::Finding> witnessFinding(const Machine &machine, const Witness &witness,
                                              const std::string &engine, std::string &error) {
  const Properties &props = machine.properties();
  if (witness.property < 0 || static_cast<size_t>(witness.property) >= props.properties().size()) {
    error = fmt::format("engine {} reports property #{}, which does not exist", engine,
                        witness.property);
    return std::nullopt;
  }
  const Property &p = props.property(witness.property);
  ControlState before;
  report::Trace trace;
  std::optional<ControlState> after =
      replaySchedule(machine, witness.schedule, before, &trace, error);
  if (!after) {
    error =
        fmt::format("the witness of {} from engine {} does not replay: {}", p.id, engine, error);
    return std::nullopt;
  }
  std::vector<ObligationIndex> found;
  ControlState at;
  if (p.kind == report::FindingKind::Deadlock) {
    std::vector<ScheduleStep> steps;
    machine.enabledSteps(*after, steps);
    if (steps.empty())
      machine.stuck(*after, found);
    at = *after;
  } else if (!witness.schedule.empty()) {
    machine.violations(before, witness.schedule.back(), found);
    at = before;
  }
  for (ObligationIndex o : found)
    if (props.obligation(o).property == witness.property)
      return makeFinding(machine, o, witness.schedule, trace, at, engine);
  error = fmt::format("the witness of {} from engine {} ({} steps) does not violate it", p.id,
                      engine, witness.schedule.size());
  return std::nullopt;
}

report::Verdict buildVerdict(const Machine &machine, EngineResult result,
                             const std::string &engine) {
  report::Verdict verdict;
  verdict.stats = std::move(result.stats);
  verdict.queries = std::move(result.queries);
  // Every witness must replay to its property; one finding per property (the first
  // witness an engine gave), in property order: by kind, then location, then id,
  // independent of the order the engine found them in.
  std::stable_sort(result.witnesses.begin(), result.witnesses.end(),
                   [](const Witness &a, const Witness &b) { return a.property < b.property; });
  for (size_t i = 0; i < result.witnesses.size(); ++i) {
    std::string error;
    std::optional<report::Finding> f = witnessFinding(machine, result.witnesses[i], engine, error);
    if (!f) {
      verdict.status = report::Verdict::Status::Error;
      verdict.reason = error;
      verdict.findings.clear();
      return verdict;
    }
    if (i == 0 || result.witnesses[i - 1].property != result.witnesses[i].property)
      verdict.findings.push_back(std::move(*f));
  }
  verdict.reason = std::move(result.reason);
  if (!verdict.findings.empty())
    verdict.status = report::Verdict::Status::Findings;
  else if (!result.complete)
    verdict.status = report::Verdict::Status::Inconclusive;
  else
    verdict.status = report::Verdict::Status::Verified;
  return verdict;
}

} // namespace dkv::semantics
