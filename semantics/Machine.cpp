// The step table of docs/model.md: enabledness, effects and the per-step checks.
#include "semantics/Machine.h"

#include "model/Printer.h"
#include "semantics/Text.h"
#include "support/IntArith.h"
#include "support/Invariant.h"
#include "support/Overloaded.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

namespace dkv::semantics {

using namespace model;
using report::ScheduleStep;
using support::Overloaded;
using What = Obligation::What;

using support::saturatingAdd;

Machine::Machine(const Program &program, const Properties &properties)
    : program_(program), properties_(properties), dmas_(program.dmas),
      deviceCount_(program.deviceCount()), dmaCount_(static_cast<int32_t>(program.dmas.size())),
      semCount_(static_cast<int32_t>(program.semaphores.size())) {
  const int32_t n = deviceCount_;
  for (const Dma &dma : dmas_)
    chunks_.push_back(dma.chunks());
  increments_ = program.increments();
  const size_t scopeCount = program.scopes.size();
  scopeRanges_.assign(n, std::vector<std::vector<std::pair<int32_t, int32_t>>>(scopeCount));
  scopeRemoteSignal_.assign(n, std::vector<bool>(scopeCount, false));
  scopeDmas_.assign(n, std::vector<std::vector<DmaId>>(scopeCount));
  semBound_ = model::incrementTotals(increments_);
  for (const Obligation &o : properties.obligations())
    predicates_.push_back(violation(o));

  for (DeviceId d = 0; d < n; ++d) {
    const std::vector<Event> &events = program.processes[d].events;
    eventCount_.push_back(static_cast<int32_t>(events.size()));
    std::vector<std::pair<ScopeId, int32_t>> open;
    for (size_t i = 0; i < events.size(); ++i) {
      const int32_t pc = static_cast<int32_t>(i);
      std::visit(Overloaded{
                     [&](const ScopeEnter &e) {
                       open.push_back({e.scope, pc});
                     },
                     [&](const ScopeExit &e) {
                       for (size_t j = open.size(); j-- > 0;)
                         if (open[j].first == e.scope) {
                           scopeRanges_[d][e.scope].push_back({open[j].second, pc});
                           open.erase(open.begin() + static_cast<std::ptrdiff_t>(j));
                           break;
                         }
                     },
                     [&](const Signal &e) {
                       const Semaphore &sem = program.semaphores[e.sem];
                       if (e.target != d && sem.scope != kKernelScope)
                         scopeRemoteSignal_[e.target][sem.scope] = true;
                     },
                     [&](const KernelEnter &) {},
                     [&](const KernelExit &) {},
                     [&](const DeviceBarrier &) {},
                     [&](const Store &) {},
                     [&](const DmaStart &) {},
                     [&](const SemWait &) {},
                     [&](const SemRead &) {},
                 },
                 events[i].kind);
    }
    for (const auto &[scope, pc] : open)
      scopeRanges_[d][scope].push_back({pc, static_cast<int32_t>(events.size())});
  }

  // A scope whose semaphores share slots with another block's: entering it reads
  // semaphores other actors change (SlotEnter) and changes what their slot checks see.
  scopeSharesSlots_.assign(scopeCount, false);
  for (SemId s = 0; s < semCount_; ++s)
    if (program.semaphores[s].scope != kKernelScope && !properties.sharingSlot(s).empty())
      scopeSharesSlots_[program.semaphores[s].scope] = true;

  for (const Dma &dma : dmas_) {
    ScopeId dstScope = program.buffers[dma.dst.buffer].scope;
    ScopeId recvScope = program.semaphores[dma.recvSem].scope;
    if (dstScope != kKernelScope)
      scopeDmas_[dma.target][dstScope].push_back(dma.id);
    if (recvScope != kKernelScope && recvScope != dstScope)
      scopeDmas_[dma.target][recvScope].push_back(dma.id);
  }

  sideReaders_.resize(dmas_.size());
  for (DmaId k = 0; k < dmaCount_; ++k)
    for (ObligationIndex index : properties.racesAgainst(k)) {
      const Obligation &o = properties.obligation(index);
      sideReaders_[k][o.dst ? 1 : 0].push_back({o.device, o.pc});
    }

  positionEvents_.resize(n);
  for (DeviceId d = 0; d < n; ++d) {
    const std::vector<Event> &events = program.processes[d].events;
    for (size_t i = 0; i < events.size(); ++i) {
      const EventKind &kind = events[i].kind;
      if (std::holds_alternative<KernelEnter>(kind) || std::holds_alternative<KernelExit>(kind) ||
          std::holds_alternative<ScopeEnter>(kind) || std::holds_alternative<ScopeExit>(kind))
        positionEvents_[d].push_back(static_cast<int32_t>(i));
    }
  }
}

ControlState Machine::initialState() const {
  ControlState s;
  s.pc.assign(deviceCount_, 0);
  s.sem.assign(static_cast<size_t>(deviceCount_) * semCount_, 0);
  s.sent.assign(dmaCount_, 0);
  s.landed.assign(dmaCount_, 0);
  return s;
}

bool Machine::allDevicesFinished(const ControlState &s) const {
  for (DeviceId d = 0; d < deviceCount_; ++d)
    if (!finished(s, d))
      return false;
  return true;
}

bool Machine::insideScope(const ControlState &s, DeviceId d, ScopeId scope) const {
  if (scope == kKernelScope)
    return true;
  if (scope < 0 || static_cast<size_t>(scope) >= program_.scopes.size())
    return false;
  int32_t pc = s.pc[d];
  for (const auto &[begin, end] : scopeRanges_[d][scope])
    if (pc > begin && pc <= end)
      return true;
  return false;
}

bool Machine::barrierOpen(const ControlState &s, int32_t invocation) const {
  const std::vector<std::vector<int32_t>> &barrierPc = properties_.barrierPcs();
  if (barrierPc.empty() || invocation < 0 || static_cast<size_t>(invocation) >= barrierPc[0].size())
    return true;
  for (DeviceId d = 0; d < deviceCount_; ++d) {
    int32_t at = barrierPc[d][invocation];
    if (at >= 0 && s.pc[d] < at)
      return false;
  }
  return true;
}

bool Machine::enabled(const ControlState &s, const ScheduleStep &step) const {
  switch (step.kind) {
  case ScheduleStep::Kind::Device: {
    if (step.id < 0 || step.id >= deviceCount_ || finished(s, step.id))
      return false;
    const Event &e = program_.processes[step.id].events[s.pc[step.id]];
    // Only waits and barriers can block (docs/model.md section 3).
    return std::visit(Overloaded{
                          [&](const SemWait &w) { return semValue(s, step.id, w.sem) >= w.amount; },
                          [&](const DeviceBarrier &b) { return barrierOpen(s, b.invocation); },
                          [](const KernelEnter &) { return true; },
                          [](const KernelExit &) { return true; },
                          [](const ScopeEnter &) { return true; },
                          [](const ScopeExit &) { return true; },
                          [](const Store &) { return true; },
                          [](const DmaStart &) { return true; },
                          [](const Signal &) { return true; },
                          [](const SemRead &) { return true; },
                      },
                      e.kind);
  }
  case ScheduleStep::Kind::Send:
    return step.id >= 0 && step.id < dmaCount_ && started(s, step.id) &&
           s.sent[step.id] < chunks_[step.id];
  case ScheduleStep::Kind::Land:
    return step.id >= 0 && step.id < dmaCount_ && s.landed[step.id] < s.sent[step.id] &&
           linkClear(s, step.id);
  }
  return false;
}

void Machine::enabledSteps(const ControlState &s, std::vector<ScheduleStep> &out,
                           const std::set<DmaId> *inFlight) const {
  out.clear();
  // Whether each invocation's barrier is open, worked out at most once per call
  // rather than once per waiting device (which made a step quadratic in the mesh
  // size); the cache is only allocated when some device is at a barrier.
  std::vector<int8_t> open; // per invocation: -1 not known yet, else 0 / 1
  const size_t invocations =
      properties_.barrierPcs().empty() ? 0 : properties_.barrierPcs()[0].size();
  auto barrierOpenOnce = [&](int32_t invocation) {
    if (invocation < 0 || static_cast<size_t>(invocation) >= invocations)
      return barrierOpen(s, invocation);
    if (open.empty())
      open.assign(invocations, -1);
    if (open[invocation] < 0)
      open[invocation] = barrierOpen(s, invocation) ? 1 : 0;
    return open[invocation] == 1;
  };
  for (DeviceId d = 0; d < deviceCount_; ++d) {
    ScheduleStep step{ScheduleStep::Kind::Device, d};
    const auto *barrier =
        finished(s, d) ? nullptr
                       : std::get_if<DeviceBarrier>(&program_.processes[d].events[s.pc[d]].kind);
    if (barrier ? barrierOpenOnce(barrier->invocation) : enabled(s, step))
      out.push_back(step);
  }
  auto dmaSteps = [&](DmaId k) {
    if (!started(s, k) || s.landed[k] >= chunks_[k])
      return;
    if (s.sent[k] < chunks_[k])
      out.push_back({ScheduleStep::Kind::Send, k});
    if (s.landed[k] < s.sent[k] && linkClear(s, k))
      out.push_back({ScheduleStep::Kind::Land, k});
  };
  if (inFlight) {
    for (DmaId k : *inFlight) // ascending, as below
      dmaSteps(k);
    return;
  }
  for (DmaId k = 0; k < dmaCount_; ++k)
    dmaSteps(k);
}

void Machine::apply(ControlState &s, const ScheduleStep &step) const {
  switch (step.kind) {
  case ScheduleStep::Kind::Device: {
    const DeviceId d = step.id;
    const Event &e = program_.processes[d].events[s.pc[d]];
    // Control effects: semaphores change at waits and signals; where[d], scopes[d] and
    // started[k] follow from the pc (ControlState).
    std::visit(Overloaded{
                   [&](const SemWait &w) {
                     s.sem[static_cast<size_t>(d) * semCount_ + w.sem] -= w.amount;
                   },
                   [&](const Signal &sig) {
                     s.sem[static_cast<size_t>(sig.target) * semCount_ + sig.sem] += sig.amount;
                   },
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
    ++s.pc[d];
    return;
  }
  case ScheduleStep::Kind::Send: {
    const Dma &dma = dmas_[step.id];
    int32_t c = s.sent[step.id]++;
    if (dma.sendSem && static_cast<size_t>(c) < dma.sendUnits.size())
      s.sem[static_cast<size_t>(dma.issuer) * semCount_ + *dma.sendSem] += dma.sendUnits[c];
    return;
  }
  case ScheduleStep::Kind::Land: {
    const Dma &dma = dmas_[step.id];
    int32_t c = s.landed[step.id]++;
    if (static_cast<size_t>(c) < dma.landUnits.size())
      s.sem[static_cast<size_t>(dma.target) * semCount_ + dma.recvSem] += dma.landUnits[c];
    return;
  }
  }
}

std::string Machine::whyDisabled(const ControlState &s, const ScheduleStep &step) const {
  switch (step.kind) {
  case ScheduleStep::Kind::Device: {
    if (step.id < 0 || step.id >= deviceCount_)
      return fmt::format("there is no device {} (the program has {})", step.id, deviceCount_);
    if (finished(s, step.id))
      return fmt::format("{} has finished", program_.processName(step.id));
    const Event &e = program_.processes[step.id].events[s.pc[step.id]];
    if (const auto *w = std::get_if<SemWait>(&e.kind))
      return fmt::format("{} waits for {} >= {} but it is {}", program_.processName(step.id),
                         program_.semName(w->sem), w->amount, semValue(s, step.id, w->sem));
    return fmt::format("{} waits at a device barrier", program_.processName(step.id));
  }
  case ScheduleStep::Kind::Send:
  case ScheduleStep::Kind::Land:
    if (step.id < 0 || step.id >= dmaCount_)
      return fmt::format("there is no dma {} (the program has {})", step.id, dmaCount_);
    if (!started(s, step.id))
      return fmt::format("dma {} has not started", step.id);
    if (step.kind == ScheduleStep::Kind::Send)
      return fmt::format("dma {} has sent all its chunks", step.id);
    if (s.landed[step.id] < s.sent[step.id] && !linkClear(s, step.id))
      return fmt::format("dma {} lands only after dma {}, started before it on the same link, "
                         "has landed (--dma-order link)",
                         step.id, properties_.linkPredecessor(step.id));
    return fmt::format("dma {} has no chunk in flight", step.id);
  }
  return "";
}

bool Machine::holds(const ControlState &s, const Fact &f) const {
  switch (f.kind) {
  case Fact::Kind::SideOpen:
    return sideOpen(s, {f.dma, f.dst});
  case Fact::Kind::SemNonZero:
    return semValue(s, f.device, f.sem) != 0;
  case Fact::Kind::Within:
    return properties_.withinInvocations(f.device, s.pc[f.device], f.first, f.last);
  case Fact::Kind::InScope:
    return insideScope(s, f.device, f.scope);
  case Fact::Kind::Stuck: {
    if (finished(s, f.device) || s.pc[f.device] != f.pc)
      return false;
    std::vector<ScheduleStep> steps;
    enabledSteps(s, steps);
    return steps.empty();
  }
  }
  DKV_UNREACHABLE("fact kind");
}

// The obligation's predicate (semantics/Obligations.h), evaluated on `s`.
bool Machine::violated(const ControlState &s, ObligationIndex index) const {
  for (const Literal &l : predicates_[static_cast<size_t>(index)].all)
    if (holds(s, l.fact) == l.negated)
      return false;
  return true;
}

void Machine::violations(const ControlState &s, const ScheduleStep &step,
                         std::vector<ObligationIndex> &out) const {
  switch (step.kind) {
  case ScheduleStep::Kind::Device:
    if (step.id < 0 || step.id >= deviceCount_ || finished(s, step.id))
      return;
    for (ObligationIndex o : properties_.atEvent(step.id, s.pc[step.id]))
      if (violated(s, o))
        out.push_back(o);
    return;
  case ScheduleStep::Kind::Send:
    return; // a send chunk checks nothing
  case ScheduleStep::Kind::Land:
    if (step.id < 0 || step.id >= dmaCount_)
      return;
    for (ObligationIndex o : properties_.atLand(step.id))
      if (violated(s, o))
        out.push_back(o);
    return;
  }
}

void Machine::stuck(const ControlState &s, std::vector<ObligationIndex> &out) const {
  for (DeviceId d = 0; d < deviceCount_; ++d) {
    if (finished(s, d))
      continue;
    ObligationIndex o = properties_.stuckAt(d, s.pc[d]);
    // Only waits and barriers block: a device at any other event can always move.
    DKV_INVARIANT(o >= 0, "a device with no enabled step is at a wait or a barrier");
    out.push_back(o);
  }
}

std::string Machine::describe(const ControlState &s, ObligationIndex index) const {
  const Obligation &o = properties_.obligation(index);
  auto where = [&](DeviceId t, int32_t invocation, ScopeId scope) {
    int32_t theirs = insideInvocation(s, t);
    if (o.invocationLast != o.invocation &&
        (o.what == What::LandInvocation || o.what == What::SignalInvocation)) {
      // An array a sequence hands on: the device is before or after its calls.
      const bool before = properties_.positionAt(t, s.pc[t]) < 2 * o.invocation + 1;
      return fmt::format("{} {} invocation {}", program_.processName(t),
                         before ? "has not entered" : "has left",
                         before ? o.invocation : o.invocationLast);
    }
    if (theirs != invocation)
      return theirs < 0 ? fmt::format("{} is outside the kernel", program_.processName(t))
                        : fmt::format("{} is in invocation {}, not {}", program_.processName(t),
                                      theirs, invocation);
    return fmt::format("{} is outside {}", program_.processName(t), program_.scopes[scope].name);
  };
  switch (o.what) {
  case What::Race:
  case What::ExitSend:
  case What::ExitRecv:
    return properties_.obligationText(index);
  case What::ExitSemaphore: {
    std::string leaves =
        o.scope != kKernelScope
            ? fmt::format("{} leaves {}", program_.processName(o.device),
                          program_.scopes[o.scope].name)
            : fmt::format("{} leaves invocation {} of the kernel", program_.processName(o.device),
                          std::max(0, insideInvocation(s, o.device)));
    return fmt::format("{} with {} = {}", leaves, program_.semName(o.sem),
                       semValue(s, o.device, o.sem));
  }
  case What::LandInvocation:
  case What::LandScope: {
    const Dma &dma = dmas_[o.dma];
    return fmt::format("{} lands in {} on {}, but {}", dmaName(program_, o.dma),
                       program_.regionName(dma.dst), program_.processName(dma.target),
                       where(dma.target, o.invocation, o.scope));
  }
  case What::SignalInvocation:
    return fmt::format("signal of {} from {} reaches {}, but {}", program_.semName(o.sem),
                       program_.processName(o.device), program_.processName(o.target),
                       where(o.target, o.invocation, o.scope));
  case What::SlotSignal:
  case What::SlotLand:
    return properties_.obligationText(index);
  case What::SlotEnter:
    return fmt::format("{} enters {} with {} = {} in the slot its {} takes",
                       program_.processName(o.device), program_.scopes[o.scope].name,
                       program_.semName(o.sem), semValue(s, o.device, o.sem),
                       program_.semName(o.other));
  case What::Stuck: {
    // The whole deadlock: every device that has not finished and what it waits for.
    std::vector<std::string> parts;
    for (DeviceId d = 0; d < deviceCount_; ++d)
      if (!finished(s, d))
        parts.push_back(describeBlocked(s, d));
    return fmt::format("{}", fmt::join(parts, "; "));
  }
  }
  DKV_UNREACHABLE("obligation kind");
}

std::string Machine::describeBlocked(const ControlState &s, DeviceId d) const {
  const Event &e = program_.processes[d].events[s.pc[d]];
  auto stuckBefore = [&](const auto &) {
    return fmt::format("{} is stuck before {}", program_.processName(d),
                       describeEvent(program_, e));
  };
  return std::visit(
      Overloaded{
          [&](const SemWait &w) {
            return fmt::format("{} waits for {} >= {} but it is {}", program_.processName(d),
                               program_.semName(w.sem), w.amount, semValue(s, d, w.sem));
          },
          [&](const DeviceBarrier &b) {
            int arrived = 0;
            const std::vector<std::vector<int32_t>> &barrierPc = properties_.barrierPcs();
            for (DeviceId other = 0; other < deviceCount_; ++other) {
              int32_t at =
                  b.invocation >= 0 && static_cast<size_t>(b.invocation) < barrierPc[other].size()
                      ? barrierPc[other][b.invocation]
                      : -1;
              if (at < 0 || s.pc[other] >= at)
                ++arrived;
            }
            return fmt::format("{} waits at the device barrier of invocation {} ({} of {} {} "
                               "arrived)",
                               program_.processName(d), b.invocation, arrived, deviceCount_,
                               program_.cores ? "cores" : "devices");
          },
          // Every other event is always enabled (Machine::enabled): a deadlock
          // never stops a device there; named anyway rather than hidden.
          [&](const KernelEnter &x) { return stuckBefore(x); },
          [&](const KernelExit &x) { return stuckBefore(x); },
          [&](const ScopeEnter &x) { return stuckBefore(x); },
          [&](const ScopeExit &x) { return stuckBefore(x); },
          [&](const Store &x) { return stuckBefore(x); },
          [&](const DmaStart &x) { return stuckBefore(x); },
          [&](const Signal &x) { return stuckBefore(x); },
          [&](const SemRead &x) { return stuckBefore(x); },
      },
      e.kind);
}

// Soundness of the reduction (used by the exhaustive search, executor::explore): a step t of device
// d is "safe" in state s when (1) it is enabled and stays enabled until d takes it (no other actor
// can disable a device's next event: only d decreases d's semaphores and barriers never close), (2)
// it commutes with every step any other actor can take from s before it, and (3) it does not change
// the outcome of any other step's check (race, exit, lifetime) nor is its own check's outcome
// changed by them. Then every run from s is equivalent to one that takes t first, reaching the same
// states with the same findings, so exploring only t from s loses no finding and no deadlock (the
// state graph is acyclic: every step increases a pc or a DMA counter, so no cycle proviso is
// needed).
bool Machine::isSafeStep(const ControlState &s, DeviceId d, bool localCopies,
                         bool observers) const {
  if (finished(s, d))
    return false;
  const int32_t pc = s.pc[d];
  const Event &e = program_.processes[d].events[pc];
  return std::visit(
      Overloaded{
          // Changes where[d]: other devices' signals and lands check it.
          [&](const KernelEnter &) { return false; },
          // Reads semaphores and DMA progress that other actors change.
          [&](const KernelExit &) { return false; },
          // Once enabled it stays enabled and changes nothing but pc[d].
          [&](const DeviceBarrier &) {
            return enabled(s, {ScheduleStep::Kind::Device, d});
          },
          // Changes scopes[d], which the lifetime checks of lands and signals into the
          // scope read; safe when none of those can happen before the next ScopeEnter
          // could matter: no other device signals a semaphore of the scope and every DMA
          // into it is started later by d itself or has landed completely.
          [&](const ScopeEnter &x) {
            if (x.scope < 0 || static_cast<size_t>(x.scope) >= program_.scopes.size() ||
                scopeRemoteSignal_[d][x.scope] || scopeSharesSlots_[x.scope])
              return false;
            for (DmaId k : scopeDmas_[d][x.scope]) {
              bool later = dmas_[k].issuer == d && properties_.startPc(k) > pc;
              bool done = started(s, k) && s.landed[k] >= chunks_[k];
              if (!later && !done)
                return false;
            }
            return true;
          },
          [&](const ScopeExit &) { return false; },
          // Touches only d's memory (which the search does not track) and its race
          // check reads only the open/closed status of conflicting DMA sides. A side
          // that has closed stays closed (every DMA starts once); a DMA that d itself
          // starts later cannot open before this store. Any other conflicting DMA could
          // be opened by another actor first, so then the store is not safe.
          // With the observer rules, also a DMA that another device starts but cannot
          // reach before d moves (sideStable).
          [&](const Store &) {
            for (ObligationIndex index : properties_.atEvent(d, pc)) {
              const Obligation &o = properties_.obligation(index);
              const DmaId k = o.dma;
              if (observers) {
                if (!sideStable(s, d, pc, k, o.dst))
                  return false;
                continue;
              }
              if (started(s, k)) {
                if (sideOpen(s, {k, o.dst}))
                  return false;
                continue;
              }
              if (!(dmas_[k].issuer == d && properties_.startPc(k) > pc))
                return false;
            }
            return true;
          },
          // Opens DMA intervals and enables a target's exit check: visible, except for
          // a local copy that nothing another actor does can observe (isSafeLocalStart)
          // or any DMA whose observers are out of reach (isSafeObservedStart).
          [&](const DmaStart &x) {
            return (localCopies && isSafeLocalStart(s, d, x.dma)) ||
                   (observers && isSafeObservedStart(s, d, x.dma));
          },
          // Enabled waits stay enabled; the decrement of d's own semaphore commutes with
          // every increment by other actors and only d's own later steps read it.
          [&](const SemWait &) {
            return enabled(s, {ScheduleStep::Kind::Device, d});
          },
          // A signal on a barrier semaphore has no check and only the target's waits
          // read the value (they commute with an increment); a signal to d itself is
          // checked against d's own state, which no other actor changes.
          // A signal to another device: when no event of the target that reads the
          // semaphore or changes what the signal's checks read is in reach
          // (isSafeObservedSignal).
          [&](const Signal &sig) {
            return program_.isBarrier(sig.sem) || sig.target == d ||
                   (observers && isSafeObservedSignal(s, d, sig));
          },
          // Writes a register (data only, not part of the searched state).
          [&](const SemRead &) { return true; },
      },
      e.kind);
}

// A DMA chunk is safe when the device whose memory and semaphore it touches (the
// issuer for a send chunk, the target for a land chunk) is blocked at a SemWait on
// that semaphore which cannot pass without this very chunk: the units it still needs
// exceed what every other chunk that adds to that semaphore on that device can still
// add: send chunks of the DMAs it issues with it as send semaphore, land chunks of
// the DMAs landing there with it as receive semaphore, this DMA's later chunks and its
// other side included (signals never reach DMA semaphores: sema refuses them). Then, until the
// chunk runs, that device takes no step, so none of its steps (exit checks, stores, scope and
// kernel entries and exits, the only readers of its where/scopes and semaphore) can interleave; the
// increment commutes with everything else. The chunk's lifetime check reads only that device's
// state, which is frozen. The last chunk closes a DMA side, which changes the race check of any
// later DmaStart conflicting with it, so every such DMA must have started already (a Store
// conflicting with it is the blocked device's, or, where cores share a memory, another
// process's, which must have run already too). So the chunk commutes with every step
// other actors can take first and changes no check's outcome, the same argument as for isSafeStep.
bool Machine::isSafeDmaStep(const ControlState &s, const ScheduleStep &step, bool localCopies,
                            bool observers) const {
  if (step.kind == ScheduleStep::Kind::Device || step.id < 0 || step.id >= dmaCount_ ||
      !enabled(s, step))
    return false;
  const DmaId k = step.id;
  const Dma &dma = dmas_[k];
  const bool send = step.kind == ScheduleStep::Kind::Send;
  if (localCopies && isLocalCopy(dma) && isSafeLocalChunk(s, step))
    return true;
  if (observers && isSafeObservedChunk(s, step))
    return true;
  if (send && !dma.sendSem)
    return false;
  const DeviceId owner = send ? dma.issuer : dma.target;
  const SemId sem = send ? *dma.sendSem : dma.recvSem;
  if (finished(s, owner))
    return false;
  const auto *w = std::get_if<SemWait>(&program_.processes[owner].events[s.pc[owner]].kind);
  if (!w || w->sem != sem)
    return false;
  const int32_t chunk = send ? s.sent[k] : s.landed[k];
  // Every chunk but this one that can still add to (owner, sem): the send chunks of
  // DMAs the owner issues with it as send semaphore and the land chunks of DMAs landing
  // on the owner with it as receive semaphore (Program::increments). Both sides matter
  // whichever side this chunk is: a semaphore can be one DMA's send and another's
  // receive semaphore, and a copy to its own device can use one semaphore for both sides
  // (including this DMA's other side).
  int64_t available = semValue(s, owner, sem);
  for (const Increment &inc : increments_[static_cast<size_t>(owner) * semCount_ + sem]) {
    const bool sendSide = inc.source == Increment::Source::Send;
    if (inc.source == Increment::Source::Signal)
      continue;
    const int32_t done = sendSide ? s.sent[inc.who] : s.landed[inc.who];
    if (inc.index >= done + (sendSide == send && inc.who == k ? 1 : 0))
      available = saturatingAdd(available, inc.units);
  }
  if (available >= w->amount)
    return false;
  // Closing side (k, !send) changes the race check of every DmaStart against it
  // that has not run yet, and of every Store of another process than the blocked one
  // (on a TensorCore mesh the cores of a device share its hbm buffers, docs/model.md
  // "TensorCores"; the model has no such stores, model::verifyProgram, but the rule
  // does not depend on it).
  if (chunk + 1 == chunks_[k])
    for (ObligationIndex index : properties_.racesAgainst(k)) {
      const Obligation &o = properties_.obligation(index);
      if (o.dst == !send &&
          (o.device != owner ||
           std::holds_alternative<DmaStart>(program_.processes[o.device].events[o.pc].kind)) &&
          s.pc[o.device] <= o.pc)
        return false;
    }
  return true;
}

// ---- Local copies (docs/executor.md, "Local copies") ----
//
// A local copy k (issuer == target == d, no send semaphore) touches only d: its source
// and destination are d's buffers, its land chunks add to d's receive semaphore and
// check d's where/scopes, its send chunks change no semaphore. Which steps of other
// actors can observe one of its steps (the dependence relation of the ample-set
// method; Godefroid 1996, ch. 3-4; Peled 1993; Clarke, Grumberg, Peled, "Model
// Checking", ch. 10):
// - opening or closing one of k's sides changes the outcome of the Race obligations
//   that read that side (Properties::racesAgainst, at Stores of d and at DmaStarts of
//   DMAs writing into, or reading, d's buffers, possibly issued by other devices) and
//   of ExitSend / ExitRecv of k at d's KernelExit / ScopeExit;
// - k's DmaStart's own race checks read the sides of the DMAs it conflicts with;
// - a land chunk's increment of (d, recvSem) is read only by d (its waits, which an
//   increment never disables and commutes with; ExitSemaphore at d's exits; SlotEnter
//   at d's ScopeEnter; SemRead, data only), and its lifetime checks read where[d] and
//   scopes[d], which only d's KernelEnter/Exit and ScopeEnter/Exit change.
// Nothing else reads or changes what k's steps read or change (no signal reaches a
// DMA semaphore of another device's making: only d adds to d's semaphores apart from
// DMA chunks and signals, and increments commute with each other).

namespace {

bool isLocalCopyDma(const Dma &dma) {
  return dma.local && !dma.sendSem && dma.issuer == dma.target;
}

} // namespace

bool Machine::isLocalCopy(const Dma &dma) const { return isLocalCopyDma(dma); }

// A wait of e that cannot pass while the frozen actor does not move: passing every wait
// of e on x from pc[e] up to it consumes `need` units of (e, x), and only e's waits take
// units away. On a path on which the frozen actor does not move, (e, x) can still receive
// at most supplyWithout(e, x) (over Program::increments): its value, the remaining send chunks of
// DMAs e issues with x as send semaphore, the remaining land chunks of the DMAs landing on e with x
// as receive semaphore (unstarted DMAs count whole, whoever issues them), and every signal to (e,
// x) that has not run; less what the frozen actor would add: a frozen DMA side adds none of its
// chunks (chunks of one side run in order), a frozen send side none of its land chunks not yet sent
// (chunk c lands only after it is sent), a frozen device none of its signals and no chunk of a DMA
// it has not started (it starts them only by moving). If that is less than `need`, e cannot pass
// the wait, nor reach any event after it, before the frozen actor moves. A device barrier that the
// frozen device has not reached blocks e the same way (it opens only when every device has reached
// it).
int64_t Machine::supplyWithout(const ControlState &s, const Frozen &frozen, DeviceId e,
                               SemId x) const {
  const bool device = frozen.kind == Frozen::Kind::Device;
  const bool frozenSend = frozen.kind == Frozen::Kind::Send;
  const bool frozenLand = frozen.kind == Frozen::Kind::Land;
  // A DMA the frozen device has not started adds nothing.
  auto held = [&](DmaId j) { return device && dmas_[j].issuer == frozen.id && !started(s, j); };
  int64_t sum = semValue(s, e, x);
  for (const Increment &inc : increments_[static_cast<size_t>(e) * semCount_ + x]) {
    bool counts = false;
    switch (inc.source) {
    case Increment::Source::Signal:
      counts = !(device && inc.who == frozen.id) && s.pc[inc.who] <= inc.index;
      break;
    case Increment::Source::Send:
      counts =
          !(frozenSend && inc.who == frozen.id) && !held(inc.who) && inc.index >= s.sent[inc.who];
      break;
    case Increment::Source::Land:
      counts = !(frozenLand && inc.who == frozen.id) && !held(inc.who) &&
               inc.index >= s.landed[inc.who] &&
               !(frozenSend && inc.who == frozen.id && inc.index >= s.sent[inc.who]);
      break;
    }
    if (counts)
      sum = saturatingAdd(sum, std::max<int64_t>(0, inc.units));
  }
  return sum;
}

bool Machine::blockedBefore(const ControlState &s, const Frozen &frozen, DeviceId e,
                            int32_t limit) const {
  std::vector<std::pair<SemId, int64_t>> need; // per semaphore: the waits so far
  const std::vector<Event> &events = program_.processes[e].events;
  const int32_t end = std::min(limit, eventCount_[e]);
  for (int32_t pc = s.pc[e]; pc < end; ++pc) {
    if (const auto *b = std::get_if<DeviceBarrier>(&events[pc].kind)) {
      if (frozen.kind != Frozen::Kind::Device)
        continue;
      const std::vector<std::vector<int32_t>> &barrierPc = properties_.barrierPcs();
      const auto &mine = barrierPc[frozen.id];
      if (b->invocation >= 0 && static_cast<size_t>(b->invocation) < mine.size() &&
          mine[b->invocation] > s.pc[frozen.id])
        return true;
      continue;
    }
    const auto *w = std::get_if<SemWait>(&events[pc].kind);
    if (!w || w->amount <= 0)
      continue;
    auto it =
        std::find_if(need.begin(), need.end(), [&](const auto &p) { return p.first == w->sem; });
    if (it == need.end()) {
      need.push_back({w->sem, 0});
      it = need.end() - 1;
    }
    it->second = saturatingAdd(it->second, w->amount);
    if (supplyWithout(s, frozen, e, w->sem) < it->second)
      return true;
  }
  return limit >= eventCount_[e]; // nothing to reach, or reached
}

// DmaStart{k} of a local copy on d is safe when (1) it is enabled (always) and only d
// takes it; (2) every Race obligation at it reads a side that is closed (it stays
// closed: a DMA starts once) or belongs to a DMA that d itself starts later (it cannot
// open first): so its own check has the same outcome whatever other actors do first,
// and no other actor's step (a closing chunk) changes it; (3) every Race obligation
// that reads one of k's sides at another device's event has already run on that device
// (its pc is past it), so no other actor's check can see k's sides open or closed
// differently; the obligations at d's own events (stores, starts, ExitSend / ExitRecv
// of k at d's exits) follow this step in program order in every run. Starting k only
// enables k's own chunks, which no other actor's step depends on before they run.
bool Machine::isSafeLocalStart(const ControlState &s, DeviceId d, DmaId k) const {
  if (k < 0 || k >= dmaCount_ || !isLocalCopyDma(dmas_[k]) || dmas_[k].issuer != d)
    return false;
  const int32_t pc = s.pc[d];
  for (ObligationIndex index : properties_.atEvent(d, pc)) {
    const Obligation &o = properties_.obligation(index);
    if (o.what != What::Race)
      return false;
    const DmaId j = o.dma;
    if (started(s, j)) {
      if (sideOpen(s, {j, o.dst}))
        return false;
      continue;
    }
    if (!(dmas_[j].issuer == d && properties_.startPc(j) > pc))
      return false;
  }
  for (const auto &side : sideReaders_[k])
    for (const auto &[e, at] : side)
      if (e != d && s.pc[e] <= at)
        return false;
  return true;
}

// A chunk of local copy k (on d) is safe when no step another actor can take before it
// observes it (the chunk then stays enabled: only k's own chunks change its counters;
// it commutes with every other step: increments commute with increments and with
// enabled waits, counters are k's own; and no check changes its outcome):
// - a send chunk that is not the last: it changes only sent[k] (no semaphore, no
//   check, no side closes); always safe;
// - the last send chunk closes k's source side: every Race obligation reading it at
//   another device's event must have run already, and d must be unable to reach, before
//   the chunk, any event of its own that reads it (a Race obligation against k's
//   source, ExitSend at a KernelExit / ScopeExit): blockedBefore;
// - a land chunk: its lifetime checks read where[d] and scopes[d], its increment is read
//   by d's exits and scope entries, so d must be unable to reach a KernelEnter,
//   KernelExit, ScopeEnter or ScopeExit before the chunk; the last one also closes k's
//   destination side: as for the last send chunk (Race obligations against k's
//   destination, ExitRecv at exits).
// Other devices never read d's semaphores, where[d] or scopes[d], and d's steps that
// do are exactly those above, so the chunk changes no check's outcome and no step
// another actor can take first changes the chunk's own checks (which read only d).
bool Machine::isSafeLocalChunk(const ControlState &s, const ScheduleStep &step) const {
  const DmaId k = step.id;
  const Dma &dma = dmas_[k];
  const DeviceId d = dma.issuer;
  const bool land = step.kind == ScheduleStep::Kind::Land;
  const int32_t chunk = land ? s.landed[k] : s.sent[k];
  const bool last = chunk + 1 == chunks_[k];
  if (!land && !last)
    return true;
  const auto &readers = sideReaders_[k][land ? 1 : 0];
  if (last)
    for (const auto &[e, at] : readers)
      if (e != d && s.pc[e] <= at)
        return false;
  const std::vector<Event> &events = program_.processes[d].events;
  auto relevant = [&](int32_t pc) {
    const EventKind &kind = events[pc].kind;
    if (std::holds_alternative<KernelExit>(kind) || std::holds_alternative<ScopeExit>(kind))
      return true;
    if (land &&
        (std::holds_alternative<KernelEnter>(kind) || std::holds_alternative<ScopeEnter>(kind)))
      return true;
    if (last)
      for (const auto &[e, at] : readers)
        if (e == d && at == pc)
          return true;
    return false;
  };
  int32_t limit = s.pc[d];
  while (limit < eventCount_[d] && !relevant(limit))
    ++limit;
  const Frozen frozen{land ? Frozen::Kind::Land : Frozen::Kind::Send, k};
  return blockedBefore(s, frozen, d, limit);
}

// ---- The observer rules (docs/executor.md, "Remote DMAs and signals") ----
//
// The local-copy rules, generalised to every DMA and to signals between devices. A step t
// of actor A (a device, a DMA's send side, its land side) is taken alone in state s when
// every step that depends on it (Godefroid 1996, def. 3.3: in a state where both are
// enabled, one disables the other or they do not commute) or whose check outcome it
// changes, or that changes t's own check outcome, cannot run on any path from s before t
// (C1 of Clarke, Grumberg and Peled, ch. 10). The dependences come from the step table:
// - a step's effect is an increment of one semaphore (a signal, a chunk), an advance of
//   a DMA counter (a chunk), started(k) (a DmaStart) or a device's pc; increments commute
//   with each other and with enabled waits (a wait decrements only its own device's
//   semaphore, which only that device's waits do), and no step disables another but a
//   wait of the same device; so two steps of different actors are dependent only through
//   the checks;
// - what the checks read: a DMA side's open/closed status (Race at Stores and
//   DmaStarts, ExitSend / ExitRecv at exits: Properties::sideReaders), a semaphore's value
//   (ExitSemaphore at exits, SlotEnter at scope entries: Properties::semReaders), and a device's
//   where / scopes (the lifetime checks of signals and land chunks), which change only at
//   its KernelEnter, KernelExit, ScopeEnter and ScopeExit (positionEvents_);
// - what changes them: a DmaStart opens its DMA's two sides, the last send chunk closes
//   the source side, the last land chunk the destination side; signals and chunks add to
//   one semaphore.
// An observer event "cannot run before t" when its device has already passed it or
// cannot reach it while A does not move (blockedBefore: a wait before it that the units
// still able to arrive without A cannot satisfy). Events of the frozen device itself lie
// after t in program order. Deadlocks are kept because t stays enabled until it runs
// (nothing disables a chunk, a start or a signal), so no deadlocked state is reachable
// without t.

int32_t Machine::nextPositionEvent(DeviceId e, int32_t pc) const {
  const std::vector<int32_t> &pcs = positionEvents_[e];
  auto it = std::lower_bound(pcs.begin(), pcs.end(), pc);
  return it == pcs.end() ? std::numeric_limits<int32_t>::max() : *it;
}

bool Machine::outOfReach(const ControlState &s, const Frozen &frozen,
                         std::vector<std::pair<DeviceId, int32_t>> &events,
                         DeviceId positionOf) const {
  const DeviceId frozenDevice = frozen.kind == Frozen::Kind::Device ? frozen.id : -1;
  constexpr int32_t kNone = std::numeric_limits<int32_t>::max();
  std::sort(events.begin(), events.end());
  bool positionDone = positionOf < 0;
  for (size_t i = 0; i < events.size();) {
    const DeviceId e = events[i].first;
    int32_t first = kNone;
    for (; i < events.size() && events[i].first == e; ++i)
      if (events[i].second >= s.pc[e])
        first = std::min(first, events[i].second);
    if (e == positionOf) {
      first = std::min(first, nextPositionEvent(e, s.pc[e]));
      positionDone = true;
    }
    if (e == frozenDevice) {
      // Its events after its pc follow t in program order; one at its pc is t itself,
      // whose own checks the rule looks at separately (never expected here).
      if (first == s.pc[e])
        return false;
      continue;
    }
    if (first != kNone && !blockedBefore(s, frozen, e, first))
      return false;
  }
  if (!positionDone && positionOf != frozenDevice) {
    const int32_t first = nextPositionEvent(positionOf, s.pc[positionOf]);
    if (first != kNone && !blockedBefore(s, frozen, positionOf, first))
      return false;
  }
  return true;
}

bool Machine::sideStable(const ControlState &s, DeviceId d, int32_t pc, DmaId j, bool dst) const {
  if (started(s, j))
    return !sideOpen(s, {j, dst}); // closed stays closed: a DMA starts once
  const int32_t start = properties_.startPc(j);
  if (start < 0)
    return true; // never started: never open
  const DeviceId issuer = dmas_[j].issuer;
  if (issuer == d)
    return start > pc; // d starts it later
  return blockedBefore(s, Frozen{Frozen::Kind::Device, d}, issuer, start);
}

// DmaStart{k} on d (any DMA). (1) It is always enabled and only d takes it. (2) Its own
// Race obligations read sides that are stable while d does not move (sideStable), so no
// other actor's step changes their outcome. (3) It opens k's two sides: every obligation
// that reads one of them (Properties::sideReaders: Race obligations at Stores and DmaStarts of any
// device whose access conflicts, ExitSend at the issuer's exits, ExitRecv at the
// target's) has run already or cannot run before d moves. (4) It changes nothing else:
// where and scopes stay, and it only enables k's send chunks and maybe other devices'
// barrier (d's pc advances), which no step can take before it. So every run from s is
// equivalent to one that starts k first, with the same checks.
bool Machine::isSafeObservedStart(const ControlState &s, DeviceId d, DmaId k) const {
  if (k < 0 || k >= dmaCount_ || dmas_[k].issuer != d)
    return false;
  const int32_t pc = s.pc[d];
  for (ObligationIndex index : properties_.atEvent(d, pc)) {
    const Obligation &o = properties_.obligation(index);
    if (o.what != What::Race || !sideStable(s, d, pc, o.dma, o.dst))
      return false;
  }
  std::vector<std::pair<DeviceId, int32_t>> events = properties_.sideReaders(k, false);
  const auto &dst = properties_.sideReaders(k, true);
  events.insert(events.end(), dst.begin(), dst.end());
  return outOfReach(s, Frozen{Frozen::Kind::Device, d}, events, -1);
}

// A Signal from d to another device t on a semaphore that is not the barrier semaphore.
// It adds to (t, sem), which the target's ExitSemaphore and SlotEnter obligations on it
// read (Properties::semReaders; its waits commute with the increment); its own checks
// (SignalInvocation, SlotSignal) read where[t] and scopes[t]. So every such event of t,
// and every event of t that changes where[t] or scopes[t], must be out of reach while d
// does not move.
bool Machine::isSafeObservedSignal(const ControlState &s, DeviceId d, const Signal &sig) const {
  if (sig.target < 0 || sig.target >= deviceCount_ || sig.target == d)
    return false;
  std::vector<std::pair<DeviceId, int32_t>> events = properties_.semReaders(sig.target, sig.sem);
  const bool checked = !properties_.atEvent(d, s.pc[d]).empty();
  return outOfReach(s, Frozen{Frozen::Kind::Device, d}, events, checked ? sig.target : -1);
}

// A chunk of DMA k (any DMA): a send chunk adds its units to (issuer, sendSem), a land
// chunk to (target, recvSem); the last chunk of a side closes that side; a land chunk's
// checks (LandInvocation, LandScope, SlotLand) read where[target] and scopes[target]. It
// stays enabled (only k's own chunks change its counters; with --dma-order link, its
// link predecessor has landed completely and stays so). So: the obligations reading the
// semaphore it adds to (if it carries units), those reading the side it closes (if it is
// the last), and (for a land chunk with checks) the target's events that change where or
// scopes must be out of reach while k's side does not move.
bool Machine::isSafeObservedChunk(const ControlState &s, const ScheduleStep &step) const {
  const DmaId k = step.id;
  const Dma &dma = dmas_[k];
  const bool send = step.kind == ScheduleStep::Kind::Send;
  const bool last = nextChunk(s, step) + 1 == chunks_[k];
  std::vector<std::pair<DeviceId, int32_t>> events;
  if (nextChunkUnits(s, step) != 0 && (!send || dma.sendSem)) {
    const DeviceId owner = send ? dma.issuer : dma.target;
    const SemId sem = send ? *dma.sendSem : dma.recvSem;
    events = properties_.semReaders(owner, sem);
  }
  if (last) {
    const auto &side = properties_.sideReaders(k, !send);
    events.insert(events.end(), side.begin(), side.end());
  }
  const DeviceId positionOf = !send && !properties_.atLand(k).empty() ? dma.target : -1;
  return outOfReach(s, Frozen{send ? Frozen::Kind::Send : Frozen::Kind::Land, k}, events,
                    positionOf);
}

} // namespace dkv::semantics
