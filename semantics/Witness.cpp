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
    // "recv@1": semaphore recv of device 1; "recv@d0c1" on a TensorCore mesh (device 0,
    // core 1), as `dkv model` writes it.
    const std::string at = program.cores ? fmt::format("d{}c{}", d / program.coresPerDevice(),
                                                       d % program.coresPerDevice())
                                         : std::to_string(d);
    out.semValues[fmt::format("{}@{}", program.semName(s), at)] = machine.semValue(after, d, s);
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
      out.text = fmt::format("dma {} lands in {} on {}{} ({} += {})", k,
                             program.regionName(dma.dst), program.processName(dma.target),
                             chunkText, program.semName(dma.recvSem), units);
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
  // event (-1: not blocked), so that pictures draw a wait from where it blocks. The
  // model is persistent (docs/closure.md): an enabled step stays enabled until its
  // actor takes it, so a device can become blocked only at the start or right after a
  // step of its own, and only that device is looked at after each step.
  std::vector<int32_t> blockedSince(static_cast<size_t>(machine.deviceCount()), -1);
  auto noteBlocked = [&](DeviceId d, size_t taken) {
    if (blockedSince[d] < 0 && !machine.finished(s, d) &&
        !machine.enabled(s, {ScheduleStep::Kind::Device, d}))
      blockedSince[d] = static_cast<int32_t>(taken);
  };
  if (trace) {
    trace->deviceCount = machine.deviceCount();
    trace->cores = machine.program().cores ? machine.program().coresPerDevice() : 0;
    for (DeviceId d = 0; d < machine.deviceCount(); ++d)
      noteBlocked(d, 0);
  }
  for (size_t i = 0; i < schedule.size(); ++i) {
    const ScheduleStep &step = schedule[i];
    if (!machine.enabled(s, step)) {
      error = fmt::format("step {} ('{}') is not enabled: {}", i + 1,
                          report::scheduleStepText(step), machine.whyDisabled(s, step));
      return std::nullopt;
    }
    if (i + 1 == schedule.size())
      beforeLast = s; // one copy: a state is as large as the instance
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
      if (step.kind == ScheduleStep::Kind::Device)
        noteBlocked(step.id, i + 1);
    }
  }
  if (trace) {
    for (DeviceId d = 0; d < machine.deviceCount(); ++d) {
      // Blocked at the end: it blocked at some step and cannot go on in the final state
      // (a device whose wait was satisfied by a later step, but that the schedule did
      // not move again before it ended, is not).
      if (blockedSince[d] < 0 || machine.finished(s, d) ||
          machine.enabled(s, {ScheduleStep::Kind::Device, d}))
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

using Shape = report::FindingShape;

/// The region a race obligation's event accesses, and the device whose memory it is.
std::pair<DeviceId, const Region *> accessOf(const Program &program, const Obligation &o,
                                             Shape::Access &access, bool &remote) {
  const Event &e = program.processes[o.device].events[o.pc];
  if (const auto *st = std::get_if<Store>(&e.kind)) {
    access = o.access < 0 ? Shape::Access::StoreWrite : Shape::Access::StoreRead;
    return {o.device, o.access < 0 ? &st->dst : &st->reads[o.access]};
  }
  const auto *ds = std::get_if<DmaStart>(&e.kind);
  DKV_INVARIANT(ds, "a race obligation is at a store or a dma start");
  const Dma &dma = program.dmas[ds->dma];
  remote = dma.issuer != dma.target;
  if (o.access == 0) {
    access = Shape::Access::DmaSource;
    return {dma.issuer, &dma.src};
  }
  access = Shape::Access::DmaDestination;
  return {dma.target, &dma.dst};
}

/// The semaphore DMA k counts one side on, and the device it is on.
std::pair<DeviceId, std::optional<SemId>> sideSemaphore(const Dma &dma, bool dst) {
  if (dst)
    return {dma.target, dma.recvSem};
  return {dma.issuer, dma.sendSem};
}

void raceShape(const Machine &machine, const Obligation &o, const ControlState &at, Shape &shape) {
  const Program &program = machine.program();
  const Dma &other = program.dmas[o.dma];
  shape.otherLanding = o.dst;
  shape.otherRemote = other.issuer != other.target;
  auto [memory, region] = accessOf(program, o, shape.access, shape.accessRemote);
  // Another DMA of this invocation, already started, writes these elements too: the
  // buffer is reused (round after round), not written once.
  for (const Dma &k : program.dmas)
    if (k.id != o.dma &&
        program.memoryOf(k.target, k.dst.buffer) == program.memoryOf(memory, region->buffer) &&
        k.invocation == other.invocation && k.dst.overlaps(*region) && machine.started(at, k.id) &&
        !(shape.access == Shape::Access::DmaDestination &&
          std::get<DmaStart>(program.processes[o.device].events[o.pc].kind).dma == k.id))
      shape.regionReused = true;
  // The memory's device already waited on the semaphore of the other DMA's open side,
  // which another DMA also counts on.
  auto [semDevice, sem] = sideSemaphore(other, o.dst);
  if (!sem || semDevice != memory)
    return;
  bool shared = false;
  for (const Dma &k : program.dmas) {
    if (k.id == o.dma)
      continue;
    auto [d1, s1] = sideSemaphore(k, true);
    auto [d2, s2] = sideSemaphore(k, false);
    shared = shared || (d1 == memory && s1 == sem) || (d2 == memory && s2 == sem);
  }
  if (!shared)
    return;
  const int32_t invocation = machine.properties().invocationAt(memory, at.pc[memory]);
  for (int32_t pc = at.pc[memory] - 1; pc >= 0; --pc) {
    if (machine.properties().invocationAt(memory, pc) != invocation)
      break;
    const Event &e = program.processes[memory].events[pc];
    if (const auto *w = std::get_if<SemWait>(&e.kind); w && w->sem == *sem)
      shape.waitedOnSharedSemaphore = true;
  }
}

/// Whether device d is before its entry into invocation `invocation` in state `at`.
bool notEntered(const Program &program, const ControlState &at, DeviceId d, int32_t invocation) {
  const std::vector<Event> &events = program.processes[d].events;
  for (int32_t pc = 0; pc < static_cast<int32_t>(events.size()); ++pc)
    if (const auto *k = std::get_if<KernelEnter>(&events[pc].kind);
        k && k->invocation == invocation)
      return at.pc[d] <= pc;
  return false;
}

/// Whether the increments that can ever reach `sem` on `d` cover d's waits on it up to
/// and including the one at `pc` (Program::incrementTotals, the static pre-check's sum,
/// which the machine keeps as its step table's bound).
bool enoughIncrements(const Machine &machine, DeviceId d, SemId sem, int32_t pc) {
  const Program &program = machine.program();
  const int64_t increments = machine.semBound(d, sem);
  int64_t waited = 0;
  for (int32_t i = 0; i <= pc; ++i)
    if (const auto *w = std::get_if<SemWait>(&program.processes[d].events[i].kind);
        w && w->sem == sem)
      waited += w->amount;
  return waited <= increments;
}

} // namespace

report::FindingShape findingShape(const Machine &machine, ObligationIndex index,
                                  const ControlState &at) {
  const Program &program = machine.program();
  const Obligation &o = machine.properties().obligation(index);
  Shape shape;
  shape.invocations = program.options.invocations;
  if (program.barrierSemaphore())
    for (const Process &proc : program.processes)
      for (const Event &e : proc.events) {
        const auto *w = std::get_if<SemWait>(&e.kind);
        const auto *sig = std::get_if<Signal>(&e.kind);
        if ((w && program.isBarrier(w->sem)) || (sig && program.isBarrier(sig->sem)))
          shape.usesBarrierSemaphore = true;
      }
  auto isDmaSem = [&](SemId s) { return program.semaphores[s].kind == SemKind::Dma; };
  using What = Obligation::What;
  switch (o.what) {
  case What::Race:
    shape.check = Shape::Check::Race;
    raceShape(machine, o, at, shape);
    break;
  case What::ExitSemaphore:
    shape.check = Shape::Check::ExitSemaphore;
    shape.dmaSemaphore = isDmaSem(o.sem);
    break;
  case What::ExitSend:
  case What::ExitRecv:
    shape.check = Shape::Check::ExitDma;
    shape.dmaSemaphore = true;
    break;
  case What::LandInvocation:
  case What::LandScope:
  case What::SignalInvocation: {
    shape.check = Shape::Check::Outside;
    shape.signal = o.what == What::SignalInvocation;
    const DeviceId peer = shape.signal ? o.target : o.device;
    if (o.what == What::LandScope) {
      // Outside the scope in the right invocation: not entered when the device still
      // has the scope's entry ahead of it in this invocation.
      const std::vector<Event> &events = program.processes[peer].events;
      for (int32_t pc = at.pc[peer]; pc < static_cast<int32_t>(events.size()) &&
                                     machine.properties().invocationAt(peer, pc) == o.invocation;
           ++pc)
        if (const auto *enter = std::get_if<ScopeEnter>(&events[pc].kind);
            enter && enter->scope == o.scope)
          shape.peerNotEntered = true;
    } else
      shape.peerNotEntered = notEntered(program, at, peer, o.invocation);
    break;
  }
  case What::SlotSignal:
  case What::SlotLand:
  case What::SlotEnter:
    shape.check = Shape::Check::Slot;
    break;
  case What::Stuck: {
    shape.check = Shape::Check::Stuck;
    const Event &e = program.processes[o.device].events[o.pc];
    if (const auto *w = std::get_if<SemWait>(&e.kind)) {
      shape.dmaSemaphore = isDmaSem(w->sem);
      shape.neverEnough = !enoughIncrements(machine, o.device, w->sem, o.pc);
    } else {
      shape.barrier = true;
    }
    break;
  }
  }
  return shape;
}

namespace {

/// Whether any device of the program waits on semaphore `sem` (a SemWait of a positive
/// amount).
bool anyWaitOn(const Program &program, SemId sem) {
  for (const Process &proc : program.processes)
    for (const Event &e : proc.events)
      if (const auto *w = std::get_if<SemWait>(&e.kind); w && w->sem == sem && w->amount > 0)
        return true;
  return false;
}

/// "store", "load", "dma-source" or "dma-destination": the access of a race
/// obligation's event.
const char *roleName(Shape::Access access) {
  switch (access) {
  case Shape::Access::StoreWrite:
    return "store";
  case Shape::Access::StoreRead:
    return "load";
  case Shape::Access::DmaSource:
    return "dma-source";
  case Shape::Access::DmaDestination:
    return "dma-destination";
  case Shape::Access::None:
    break;
  }
  return "access";
}

} // namespace

report::FindingFacts findingFacts(const Machine &machine, ObligationIndex index,
                                  const ControlState &at) {
  const Program &program = machine.program();
  const Obligation &o = machine.properties().obligation(index);
  using What = report::FindingFacts::What;
  report::FindingFacts f;
  auto exitOf = [&] {
    f.exit = program.processes[o.device].events[o.pc].loc;
    f.kernelExit = o.scope == kKernelScope;
  };
  switch (o.what) {
  case Obligation::What::Race: {
    f.what = What::Race;
    f.access = program.processes[o.device].events[o.pc].loc;
    Shape::Access access = Shape::Access::None;
    bool remote = false;
    const Region *region = accessOf(program, o, access, remote).second;
    f.accessRole = roleName(access);
    f.buffer = program.buffers[region->buffer].name;
    f.dma = program.dmas[o.dma].loc;
    f.descriptor = program.dmas[o.dma].descriptorLoc;
    f.dst = o.dst;
    f.local = program.dmas[o.dma].local;
    break;
  }
  case Obligation::What::ExitSend:
  case Obligation::What::ExitRecv: {
    const Dma &dma = program.dmas[o.dma];
    f.what = What::ExitDma;
    f.dma = dma.loc;
    f.descriptor = dma.descriptorLoc;
    f.dst = o.what == Obligation::What::ExitRecv;
    f.local = dma.local;
    exitOf();
    const std::optional<SemId> sem = f.dst ? std::optional<SemId>(dma.recvSem) : dma.sendSem;
    f.waited = sem && anyWaitOn(program, *sem);
    if (sem && program.semaphores[*sem].kind == SemKind::Regular) {
      const Semaphore &s = program.semaphores[*sem];
      f.unitSemaphore = true;
      f.semaphore = s.loc;
      f.semaphoreName = s.name;
      f.semaphoreElement = program.semName(*sem);
    }
    break;
  }
  case Obligation::What::ExitSemaphore: {
    const Semaphore &sem = program.semaphores[o.sem];
    f.what = What::ExitSemaphore;
    exitOf();
    f.semaphore = sem.loc;
    f.semaphoreName = sem.name;
    f.semaphoreElement = program.semName(o.sem);
    f.dmaSemaphore = sem.kind == SemKind::Dma;
    f.waited = anyWaitOn(program, o.sem);
    f.leftOver = machine.semValue(at, o.device, o.sem);
    {
      // The DMA starts that count on it, each once, in source order, with their side (a
      // regular semaphore: the DMAs that add a unit to it).
      std::vector<std::pair<SourceLoc, bool>> starts;
      for (const Dma &dma : program.dmas) {
        if (dma.recvSem == o.sem)
          starts.push_back({dma.loc, true});
        if (dma.sendSem && *dma.sendSem == o.sem)
          starts.push_back({dma.loc, false});
      }
      std::sort(starts.begin(), starts.end(), [](const auto &a, const auto &b) {
        return a.first < b.first || (a.first == b.first && a.second < b.second);
      });
      starts.erase(std::unique(starts.begin(), starts.end()), starts.end());
      for (const auto &[loc, dst] : starts) {
        f.countedBy.push_back(loc);
        f.countedDst.push_back(dst);
      }
    }
    break;
  }
  case Obligation::What::LandInvocation:
  case Obligation::What::LandScope:
    f.what = What::LandOutside;
    f.dma = program.dmas[o.dma].loc;
    f.dst = true;
    f.local = program.dmas[o.dma].local;
    break;
  case Obligation::What::SignalInvocation: {
    const Semaphore &sem = program.semaphores[o.sem];
    f.what = What::SignalOutside;
    f.access = program.processes[o.device].events[o.pc].loc;
    f.semaphore = sem.loc;
    f.semaphoreName = sem.name;
    break;
  }
  case Obligation::What::SlotSignal:
  case Obligation::What::SlotLand:
  case Obligation::What::SlotEnter:
  case Obligation::What::Stuck:
    f.what = What::Other;
    break;
  }
  return f;
}

namespace {

/// A race whose device already waited on the semaphore the racing DMA's open side
/// counts on (FindingShape::waitedOnSharedSemaphore, `--explain` shared-semaphore):
/// marks the last such wait after the DMA's start, which returned on other DMAs' units
/// while that DMA had not finished, so that a picture shows where the wait was fooled.
void markSharedWait(const Machine &machine, const Obligation &o, const report::Schedule &schedule,
                    report::Trace &trace) {
  const Program &program = machine.program();
  const Dma &other = program.dmas[o.dma];
  auto [semDevice, sem] = sideSemaphore(other, o.dst);
  if (!sem)
    return;
  std::vector<int32_t> pc(static_cast<size_t>(machine.deviceCount()), 0);
  bool started = false;
  int32_t wait = -1;
  // Every step but the last (the racing access); a device's step runs its next event.
  for (size_t i = 0; i + 1 < schedule.size() && i < trace.steps.size(); ++i) {
    const ScheduleStep &step = schedule[i];
    if (step.kind != ScheduleStep::Kind::Device)
      continue;
    const Event &e = program.processes[step.id].events[pc[step.id]++];
    if (const auto *start = std::get_if<DmaStart>(&e.kind); start && start->dma == o.dma)
      started = true;
    if (const auto *w = std::get_if<SemWait>(&e.kind);
        w && started && step.id == semDevice && w->sem == *sem)
      wait = static_cast<int32_t>(i);
  }
  if (wait >= 0)
    trace.marks.push_back({wait, fmt::format("returns, but dma {} has not {}", o.dma,
                                             o.dst ? "landed" : "read its source")});
}

} // namespace

report::Finding makeFinding(const Machine &machine, ObligationIndex o,
                            const report::Schedule &schedule, report::Trace trace,
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
  f.shape = findingShape(machine, o, before);
  f.facts = findingFacts(machine, o, before);
  f.trace = std::move(trace);
  markTrace(machine, props.obligation(o), f.trace);
  if (f.shape.waitedOnSharedSemaphore)
    markSharedWait(machine, props.obligation(o), schedule, f.trace);
  f.schedule = schedule;
  f.engine = engine;
  return f;
}

namespace {

/// Replays `witness` (building `trace` when given) to the obligation of its property it
/// violates, and the state the finding is shown at; nullopt with `error` otherwise.
std::optional<std::pair<ObligationIndex, ControlState>>
replayToViolation(const Machine &machine, const Witness &witness, const std::string &engine,
                  report::Trace *trace, std::string &error) {
  const Properties &props = machine.properties();
  if (witness.property < 0 || static_cast<size_t>(witness.property) >= props.properties().size()) {
    error = fmt::format("engine {} reports property #{}, which does not exist", engine,
                        witness.property);
    return std::nullopt;
  }
  const Property &p = props.property(witness.property);
  ControlState before;
  std::optional<ControlState> after =
      replaySchedule(machine, witness.schedule, before, trace, error);
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
      return std::pair{o, std::move(at)};
  error = fmt::format("the witness of {} from engine {} ({} steps) does not violate it", p.id,
                      engine, witness.schedule.size());
  return std::nullopt;
}

} // namespace

std::optional<report::Finding> witnessFinding(const Machine &machine, const Witness &witness,
                                              const std::string &engine, std::string &error,
                                              ObligationIndex *obligation) {
  report::Trace trace;
  auto violated = replayToViolation(machine, witness, engine, &trace, error);
  if (!violated)
    return std::nullopt;
  if (obligation)
    *obligation = violated->first;
  return makeFinding(machine, violated->first, witness.schedule, std::move(trace), violated->second,
                     engine);
}

bool checkWitness(const Machine &machine, const Witness &witness, const std::string &engine,
                  std::string &error) {
  return replayToViolation(machine, witness, engine, nullptr, error).has_value();
}

std::optional<report::Finding> shortFinding(const Machine &machine, const Witness &witness,
                                            const std::string &engine,
                                            const VerdictOptions &options, std::string &error) {
  std::optional<report::Finding> f;
  if (!options.shorten) {
    f = witnessFinding(machine, witness, engine, error);
  } else {
    // The finding (and its trace) is built once, for the schedule it shows.
    if (!checkWitness(machine, witness, engine, error))
      return std::nullopt;
    ShortenResult shorter =
        shortenWitness(machine, witness.schedule, witness.property, options.shortenOptions);
    if (!shorter.shortened) {
      f = witnessFinding(machine, witness, engine, error);
    } else {
      f = witnessFinding(machine, {witness.property, shorter.schedule}, engine, error);
      DKV_INVARIANT(f.has_value(), "a shortened witness replays to its property");
      f->witnessSteps = static_cast<int32_t>(witness.schedule.size());
    }
  }
  if (f)
    f->found = witness.origin;
  return f;
}

report::Verdict buildVerdict(const Machine &machine, EngineResult result, const std::string &engine,
                             const VerdictOptions &options, const FindingBuilder &build) {
  report::Verdict verdict;
  verdict.stats = std::move(result.stats);
  verdict.queries = std::move(result.queries);
  verdict.semaphoreForms = std::move(result.semaphoreForms);
  // Every witness must replay to its property; one finding per property (the first
  // witness an engine gave), in property order: by kind, then location, then id,
  // independent of the order the engine found them in.
  std::stable_sort(result.witnesses.begin(), result.witnesses.end(),
                   [](const Witness &a, const Witness &b) { return a.property < b.property; });
  for (size_t i = 0; i < result.witnesses.size(); ++i) {
    std::string error;
    // Only the witness that becomes the finding is shortened; the others are checked.
    const bool first = i == 0 || result.witnesses[i - 1].property != result.witnesses[i].property;
    const Witness &witness = result.witnesses[i];
    bool replays = false;
    if (!first) {
      replays = checkWitness(machine, witness, engine, error);
    } else {
      std::optional<report::Finding> f =
          build ? build(witness, error) : shortFinding(machine, witness, engine, options, error);
      if (f) {
        replays = true;
        verdict.findings.push_back(std::move(*f));
      }
    }
    if (!replays) {
      verdict.status = report::Verdict::Status::Error;
      verdict.reason = error;
      verdict.findings.clear();
      return verdict;
    }
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

namespace {
bool stop(EngineResult &result) {
  result.complete = false;
  result.reason = kStoppedReason;
  return false;
}
} // namespace

bool addWitness(EngineResult &result, Witness witness, const EngineEvents *events) {
  result.witnesses.push_back(std::move(witness));
  if (events && events->witness && !events->witness(result.witnesses.back()))
    return stop(result);
  if (events && events->cancelled && events->cancelled())
    return stop(result);
  return true;
}

bool reportProgress(EngineResult &result, const EngineProgress &progress,
                    const EngineEvents *events) {
  if (!events)
    return true;
  if (events->progress)
    events->progress(progress);
  if (stopRequested(events))
    return stopForRequest(result, events, "");
  if (events->cancelled && events->cancelled())
    return stop(result);
  return true;
}

bool stopForRequest(EngineResult &result, const EngineEvents *events, const std::string &figures) {
  result.complete = false;
  const std::string why = events && events->stop ? events->stop->reason() : "stopped";
  result.reason = figures.empty() ? why : why + ": " + figures;
  return false;
}

} // namespace dkv::semantics
