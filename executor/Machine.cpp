// The control part of docs/model.md: enabledness, effects and the per-step checks.
#include "executor/Machine.h"

#include "model/Printer.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>

namespace dkv::executor {

using namespace model;
using report::FindingKind;
using report::ScheduleStep;

namespace {

template <class... Ts> struct Overloaded : Ts... { using Ts::operator()...; };
template <class... Ts> Overloaded(Ts...) -> Overloaded<Ts...>;

int64_t saturatingAdd(int64_t a, int64_t b) {
  if (b > 0 && a > std::numeric_limits<int64_t>::max() - b)
    return std::numeric_limits<int64_t>::max();
  return a + b;
}

} // namespace

Machine::Machine(const Program &program)
    : program_(program), dmas_(program.dmas), deviceCount_(program.deviceCount()),
      dmaCount_(static_cast<int32_t>(program.dmas.size())),
      semCount_(static_cast<int32_t>(program.semaphores.size())),
      barrierSem_(program.barrierSemaphore()) {
  const int32_t n = deviceCount_;
  for (const Dma &dma : dmas_)
    chunks_.push_back(std::max<int32_t>(1, static_cast<int32_t>(dma.chunkUnits.size())));
  startPc_.assign(dmaCount_, -1);
  issuedBy_.resize(n);
  targeting_.resize(n);
  for (const Dma &dma : dmas_) {
    issuedBy_[dma.issuer].push_back(dma.id);
    targeting_[dma.target].push_back(dma.id);
  }

  int32_t invocations = std::max<int32_t>(1, program.options.invocations);
  for (const Process &proc : program.processes)
    for (const Event &e : proc.events) {
      if (const auto *b = std::get_if<DeviceBarrier>(&e.kind))
        invocations = std::max(invocations, b->invocation + 1);
    }

  const size_t scopeCount = program.scopes.size();
  barrierPc_.assign(n, std::vector<int32_t>(invocations, -1));
  where_.resize(n);
  scopeRanges_.assign(n, std::vector<std::vector<std::pair<int32_t, int32_t>>>(scopeCount));
  scopeRemoteSignal_.assign(n, std::vector<bool>(scopeCount, false));
  scopeDmas_.assign(n, std::vector<std::vector<DmaId>>(scopeCount));
  semBound_.assign(static_cast<size_t>(n) * semCount_, 0);
  auto bump = [&](DeviceId d, SemId s, int64_t amount) {
    int64_t &b = semBound_[static_cast<size_t>(d) * semCount_ + s];
    b = saturatingAdd(b, std::max<int64_t>(0, amount));
  };

  for (DeviceId d = 0; d < n; ++d) {
    const std::vector<Event> &events = program.processes[d].events;
    eventCount_.push_back(static_cast<int32_t>(events.size()));
    where_[d].assign(events.size() + 1, -1);
    int32_t current = -1;
    std::vector<std::pair<ScopeId, int32_t>> open;
    for (size_t i = 0; i < events.size(); ++i) {
      const int32_t pc = static_cast<int32_t>(i);
      std::visit(Overloaded{
                     [&](const KernelEnter &e) { current = e.invocation; },
                     [&](const KernelExit &) { current = -1; },
                     [&](const DeviceBarrier &e) {
                       if (e.invocation >= 0 && e.invocation < invocations &&
                           barrierPc_[d][e.invocation] < 0)
                         barrierPc_[d][e.invocation] = pc;
                     },
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
                     [&](const Store &) {},
                     [&](const DmaStart &e) {
                       if (e.dma >= 0 && e.dma < dmaCount_)
                         startPc_[e.dma] = pc;
                     },
                     [&](const SemWait &) {},
                     [&](const Signal &e) {
                       bump(e.target, e.sem, e.amount);
                       const Semaphore &sem = program.semaphores[e.sem];
                       if (e.target != d && sem.scope != kKernelScope)
                         scopeRemoteSignal_[e.target][sem.scope] = true;
                     },
                     [&](const SemRead &) {},
                 },
                 events[i].kind);
      where_[d][i + 1] = current;
    }
    for (const auto &[scope, pc] : open)
      scopeRanges_[d][scope].push_back({pc, static_cast<int32_t>(events.size())});
  }

  for (const Dma &dma : dmas_) {
    for (size_t c = 0; c < dma.chunkUnits.size(); ++c) {
      if (dma.sendSem)
        bump(dma.issuer, *dma.sendSem, dma.chunkUnits[c]);
      bump(dma.target, dma.recvSem, dma.chunkUnits[c]);
    }
    ScopeId dstScope = program.buffers[dma.dst.buffer].scope;
    ScopeId recvScope = program.semaphores[dma.recvSem].scope;
    if (dstScope != kKernelScope)
      scopeDmas_[dma.target][dstScope].push_back(dma.id);
    if (recvScope != kKernelScope && recvScope != dstScope)
      scopeDmas_[dma.target][recvScope].push_back(dma.id);
  }

  // Static conflicts, bucketed by (device, buffer) so that the pairing is linear in
  // the number of accesses that share a buffer.
  std::map<std::pair<DeviceId, BufferId>, std::vector<DmaSide>> sidesOn;
  for (const Dma &dma : dmas_) {
    sidesOn[{dma.issuer, dma.src.buffer}].push_back({dma.id, false});
    sidesOn[{dma.target, dma.dst.buffer}].push_back({dma.id, true});
  }
  auto sideRegion = [&](DmaSide side) -> const Region & {
    return side.dst ? dmas_[side.dma].dst : dmas_[side.dma].src;
  };
  // Collects the sides that conflict with an access (one per DMA side, the first
  // access of the event that conflicts).
  auto collect = [&](DeviceId dev, const Region &region, bool write, int32_t mine, DmaId self,
                     std::vector<Conflict> &out) {
    auto it = sidesOn.find({dev, region.buffer});
    if (it == sidesOn.end())
      return;
    for (DmaSide side : it->second) {
      if (side.dma == self || (!write && !side.dst))
        continue;
      if (!region.overlaps(sideRegion(side)))
        continue;
      bool seen = false;
      for (const Conflict &c : out)
        seen = seen || (c.other.dma == side.dma && c.other.dst == side.dst);
      if (!seen)
        out.push_back({side, mine});
    }
  };
  conflicts_.resize(n);
  storeConflicts_.resize(dmaCount_);
  for (DeviceId d = 0; d < n; ++d) {
    const std::vector<Event> &events = program.processes[d].events;
    conflicts_[d].resize(events.size());
    for (size_t i = 0; i < events.size(); ++i) {
      std::vector<Conflict> &out = conflicts_[d][i];
      if (const auto *st = std::get_if<Store>(&events[i].kind)) {
        collect(d, st->dst, true, -1, -1, out);
        for (size_t r = 0; r < st->reads.size(); ++r)
          collect(d, st->reads[r], false, static_cast<int32_t>(r), -1, out);
        for (const Conflict &c : out)
          storeConflicts_[c.other.dma].push_back({d, static_cast<int32_t>(i), c.mine, c.other.dst});
      } else if (const auto *ds = std::get_if<DmaStart>(&events[i].kind)) {
        if (ds->dma < 0 || ds->dma >= dmaCount_)
          continue;
        const Dma &dma = dmas_[ds->dma];
        collect(dma.issuer, dma.src, false, 0, dma.id, out);
        collect(dma.target, dma.dst, true, 1, dma.id, out);
      }
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
  if (invocation < 0 || static_cast<size_t>(invocation) >= barrierPc_[0].size())
    return true;
  for (DeviceId d = 0; d < deviceCount_; ++d) {
    int32_t at = barrierPc_[d][invocation];
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
    if (const auto *w = std::get_if<SemWait>(&e.kind))
      return s.sem[static_cast<size_t>(step.id) * semCount_ + w->sem] >= w->amount;
    if (const auto *b = std::get_if<DeviceBarrier>(&e.kind))
      return barrierOpen(s, b->invocation);
    return true;
  }
  case ScheduleStep::Kind::Send:
    return step.id >= 0 && step.id < dmaCount_ && started(s, step.id) &&
           s.sent[step.id] < chunks_[step.id];
  case ScheduleStep::Kind::Land:
    return step.id >= 0 && step.id < dmaCount_ && s.landed[step.id] < s.sent[step.id];
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
  auto barrierOpenOnce = [&](int32_t invocation) {
    if (invocation < 0 || static_cast<size_t>(invocation) >= barrierPc_[0].size())
      return barrierOpen(s, invocation);
    if (open.empty())
      open.assign(barrierPc_[0].size(), -1);
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
    if (s.landed[k] < s.sent[k])
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
    if (const auto *w = std::get_if<SemWait>(&e.kind))
      s.sem[static_cast<size_t>(d) * semCount_ + w->sem] -= w->amount;
    else if (const auto *sig = std::get_if<Signal>(&e.kind))
      s.sem[static_cast<size_t>(sig->target) * semCount_ + sig->sem] += sig->amount;
    ++s.pc[d];
    return;
  }
  case ScheduleStep::Kind::Send: {
    const Dma &dma = dmas_[step.id];
    int32_t c = s.sent[step.id]++;
    if (dma.sendSem && static_cast<size_t>(c) < dma.chunkUnits.size())
      s.sem[static_cast<size_t>(dma.issuer) * semCount_ + *dma.sendSem] += dma.chunkUnits[c];
    return;
  }
  case ScheduleStep::Kind::Land: {
    const Dma &dma = dmas_[step.id];
    int32_t c = s.landed[step.id]++;
    if (static_cast<size_t>(c) < dma.chunkUnits.size())
      s.sem[static_cast<size_t>(dma.target) * semCount_ + dma.recvSem] += dma.chunkUnits[c];
    return;
  }
  }
}

std::string Machine::dmaName(DmaId k) const {
  const Dma &dma = dmas_[k];
  if (dma.local)
    return fmt::format("dma {} (local copy on device {})", k, dma.issuer);
  return fmt::format("dma {} (device {} -> {})", k, dma.issuer, dma.target);
}

Violation Machine::raceViolation(DeviceId d, int32_t pc, const Conflict &conflict) const {
  const Event &e = program_.processes[d].events[pc];
  const Dma &other = dmas_[conflict.other.dma];
  std::string mine;
  DeviceId memory = d;
  std::string label;
  if (const auto *st = std::get_if<Store>(&e.kind)) {
    if (conflict.mine < 0 || static_cast<size_t>(conflict.mine) >= st->reads.size())
      mine = fmt::format("store to {}", program_.regionName(st->dst));
    else
      mine =
          fmt::format("load of {} (in a store to {})",
                      program_.regionName(st->reads[conflict.mine]), program_.regionName(st->dst));
    label = "this store";
  } else if (const auto *ds = std::get_if<DmaStart>(&e.kind)) {
    const Dma &dma = dmas_[ds->dma];
    if (conflict.mine == 0) {
      mine = fmt::format("{} reading {}", dmaName(dma.id), program_.regionName(dma.src));
      memory = dma.issuer;
    } else {
      mine = fmt::format("{} writing {}", dmaName(dma.id), program_.regionName(dma.dst));
      memory = dma.target;
    }
    label = fmt::format("dma {} starts here", dma.id);
  }
  std::string theirs =
      conflict.other.dst
          ? fmt::format("{} writing {}", dmaName(other.id), program_.regionName(other.dst))
          : fmt::format("{} reading {}", dmaName(other.id), program_.regionName(other.src));
  Violation v;
  v.kind = FindingKind::Race;
  v.message = fmt::format("{} on device {} races with {}", mine, memory, theirs);
  v.primary = {e.loc, label};
  v.secondary.push_back(
      {other.loc, conflict.other.dst
                      ? fmt::format("dma {} started here; it writes {} on device {} until its "
                                    "last chunk lands",
                                    other.id, program_.regionName(other.dst), other.target)
                      : fmt::format("dma {} started here; it reads {} on device {} until its "
                                    "last chunk is sent",
                                    other.id, program_.regionName(other.src), other.issuer)});
  return v;
}

std::optional<Violation> Machine::checkExit(const ControlState &s, DeviceId d, const Event &e,
                                            ScopeId scope) const {
  std::vector<std::string> problems;
  std::vector<report::Span> secondary;
  for (SemId sem = 0; sem < semCount_; ++sem) {
    const Semaphore &info = program_.semaphores[sem];
    if (info.kind == SemKind::Barrier)
      continue;
    if (scope != kKernelScope && info.scope != scope)
      continue;
    int64_t value = s.sem[static_cast<size_t>(d) * semCount_ + sem];
    if (value != 0)
      problems.push_back(fmt::format("{} = {}", program_.semName(sem), value));
  }
  for (DmaId k : issuedBy_[d]) {
    const Dma &dma = dmas_[k];
    bool mine = scope == kKernelScope || program_.buffers[dma.src.buffer].scope == scope ||
                (dma.sendSem && program_.semaphores[*dma.sendSem].scope == scope);
    if (mine && sideOpen(s, {k, false})) {
      problems.push_back(fmt::format("{} still sending", dmaName(k)));
      secondary.push_back({dma.loc, fmt::format("dma {} started here", k)});
    }
  }
  for (DmaId k : targeting_[d]) {
    const Dma &dma = dmas_[k];
    bool mine = scope == kKernelScope || program_.buffers[dma.dst.buffer].scope == scope ||
                program_.semaphores[dma.recvSem].scope == scope;
    if (mine && sideOpen(s, {k, true})) {
      problems.push_back(fmt::format("{} still landing", dmaName(k)));
      if (dma.issuer != d || !sideOpen(s, {k, false}))
        secondary.push_back({dma.loc, fmt::format("dma {} started here", k)});
    }
  }
  if (problems.empty())
    return std::nullopt;
  Violation v;
  v.kind = FindingKind::ExitViolation;
  std::string what;
  if (scope == kKernelScope) {
    int32_t inv = where_[d][s.pc[d]];
    what = fmt::format("device {} leaves invocation {} of the kernel", d, inv < 0 ? 0 : inv);
  } else {
    what = fmt::format("device {} leaves {}", d, program_.scopes[scope].name);
  }
  v.message = fmt::format("{} with {}", what, fmt::join(problems, ", "));
  v.primary = {e.loc, fmt::format("device {} exits here", d)};
  v.secondary = std::move(secondary);
  return v;
}

std::optional<Violation> Machine::checkDevice(const ControlState &s, DeviceId d) const {
  const int32_t pc = s.pc[d];
  const Event &e = program_.processes[d].events[pc];
  auto firstRace = [&]() -> std::optional<Violation> {
    for (const Conflict &c : conflicts_[d][pc])
      if (sideOpen(s, c.other))
        return raceViolation(d, pc, c);
    return std::nullopt;
  };
  return std::visit(
      Overloaded{
          [&](const KernelEnter &) -> std::optional<Violation> { return std::nullopt; },
          [&](const KernelExit &) { return checkExit(s, d, e, kKernelScope); },
          [&](const DeviceBarrier &) -> std::optional<Violation> { return std::nullopt; },
          [&](const ScopeEnter &) -> std::optional<Violation> { return std::nullopt; },
          [&](const ScopeExit &x) { return checkExit(s, d, e, x.scope); },
          [&](const Store &) { return firstRace(); },
          [&](const DmaStart &) { return firstRace(); },
          [&](const SemWait &) -> std::optional<Violation> { return std::nullopt; },
          [&](const Signal &sig) -> std::optional<Violation> {
            if (barrierSem_ && sig.sem == *barrierSem_)
              return std::nullopt;
            int32_t mine = where_[d][pc];
            int32_t theirs = insideInvocation(s, sig.target);
            const Semaphore &sem = program_.semaphores[sig.sem];
            std::string problem;
            if (theirs != mine)
              problem = theirs < 0 ? fmt::format("device {} is outside the kernel", sig.target)
                                   : fmt::format("device {} is in invocation {}, not {}",
                                                 sig.target, theirs, mine);
            else if (!insideScope(s, sig.target, sem.scope))
              problem = fmt::format("device {} is outside {}", sig.target,
                                    program_.scopes[sem.scope].name);
            if (problem.empty())
              return std::nullopt;
            Violation v;
            v.kind = FindingKind::LifetimeViolation;
            v.message = fmt::format("signal of {} from device {} reaches device {}, but {}",
                                    program_.semName(sig.sem), d, sig.target, problem);
            v.primary = {e.loc, fmt::format("device {} signals here", d)};
            return v;
          },
          [&](const SemRead &) -> std::optional<Violation> { return std::nullopt; },
      },
      e.kind);
}

std::optional<Violation> Machine::check(const ControlState &s, const ScheduleStep &step) const {
  switch (step.kind) {
  case ScheduleStep::Kind::Device:
    if (step.id < 0 || step.id >= deviceCount_ || finished(s, step.id))
      return std::nullopt;
    return checkDevice(s, step.id);
  case ScheduleStep::Kind::Send:
    return std::nullopt;
  case ScheduleStep::Kind::Land: {
    if (step.id < 0 || step.id >= dmaCount_)
      return std::nullopt;
    const Dma &dma = dmas_[step.id];
    int32_t theirs = insideInvocation(s, dma.target);
    ScopeId dstScope = program_.buffers[dma.dst.buffer].scope;
    ScopeId recvScope = program_.semaphores[dma.recvSem].scope;
    std::string problem;
    if (theirs != dma.invocation)
      problem = theirs < 0 ? fmt::format("device {} is outside the kernel", dma.target)
                           : fmt::format("device {} is in invocation {}, not {}", dma.target,
                                         theirs, dma.invocation);
    else if (!insideScope(s, dma.target, dstScope))
      problem = fmt::format("device {} is outside {}, which allocates {}", dma.target,
                            program_.scopes[dstScope].name, program_.buffers[dma.dst.buffer].name);
    else if (!insideScope(s, dma.target, recvScope))
      problem = fmt::format("device {} is outside {}, which allocates {}", dma.target,
                            program_.scopes[recvScope].name, program_.semName(dma.recvSem));
    if (problem.empty())
      return std::nullopt;
    Violation v;
    v.kind = FindingKind::LifetimeViolation;
    v.message = fmt::format("{} lands in {} on device {}, but {}", dmaName(dma.id),
                            program_.regionName(dma.dst), dma.target, problem);
    v.primary = {dma.loc, fmt::format("dma {} started here", dma.id)};
    return v;
  }
  }
  return std::nullopt;
}

std::optional<Violation> Machine::deadlock(const ControlState &s) const {
  Violation v;
  v.kind = FindingKind::Deadlock;
  std::vector<std::string> parts;
  bool first = true;
  for (DeviceId d = 0; d < deviceCount_; ++d) {
    if (finished(s, d))
      continue;
    const Event &e = program_.processes[d].events[s.pc[d]];
    std::string part, label;
    if (const auto *w = std::get_if<SemWait>(&e.kind)) {
      int64_t value = s.sem[static_cast<size_t>(d) * semCount_ + w->sem];
      part = fmt::format("device {} waits for {} >= {} but it is {}", d, program_.semName(w->sem),
                         w->amount, value);
      label = fmt::format("device {} waits here ({} is {}, needs {})", d, program_.semName(w->sem),
                          value, w->amount);
    } else if (const auto *b = std::get_if<DeviceBarrier>(&e.kind)) {
      int arrived = 0;
      for (DeviceId o = 0; o < deviceCount_; ++o) {
        int32_t at = static_cast<size_t>(b->invocation) < barrierPc_[o].size() && b->invocation >= 0
                         ? barrierPc_[o][b->invocation]
                         : -1;
        if (at < 0 || s.pc[o] >= at)
          ++arrived;
      }
      part = fmt::format("device {} waits at the device barrier of invocation {} ({} of {} "
                         "devices arrived)",
                         d, b->invocation, arrived, deviceCount_);
      label = fmt::format("device {} waits here", d);
    } else {
      part = fmt::format("device {} is stuck before {}", d, describeEvent(program_, e));
      label = fmt::format("device {} is stuck here", d);
    }
    parts.push_back(part);
    if (first)
      v.primary = {e.loc, label};
    else
      v.secondary.push_back({e.loc, label});
    first = false;
  }
  if (parts.empty())
    return std::nullopt;
  v.message = fmt::format("{}", fmt::join(parts, "; "));
  return v;
}

// Soundness of the reduction (used by executor::explore): a step t of device d is
// "safe" in state s when (1) it is enabled and stays enabled until d takes it (no
// other actor can disable a device's next event: only d decreases d's semaphores and
// barriers never close), (2) it commutes with every step any other actor can take
// from s before it, and (3) it does not change the outcome of any other step's check
// (race, exit, lifetime) nor is its own check's outcome changed by them. Then every
// run from s is equivalent to one that takes t first, reaching the same states with
// the same findings, so exploring only t from s loses no finding and no deadlock
// (the state graph is acyclic: every step increases a pc or a DMA counter, so no
// cycle proviso is needed).
bool Machine::isSafeStep(const ControlState &s, DeviceId d) const {
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
                scopeRemoteSignal_[d][x.scope])
              return false;
            for (DmaId k : scopeDmas_[d][x.scope]) {
              bool later = dmas_[k].issuer == d && startPc_[k] > pc;
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
          [&](const Store &) {
            for (const Conflict &c : conflicts_[d][pc]) {
              const DmaId k = c.other.dma;
              if (started(s, k)) {
                if (sideOpen(s, c.other))
                  return false;
                continue;
              }
              if (!(dmas_[k].issuer == d && startPc_[k] > pc))
                return false;
            }
            return true;
          },
          // Opens DMA intervals and enables a target's exit check: visible.
          [&](const DmaStart &) { return false; },
          // Enabled waits stay enabled; the decrement of d's own semaphore commutes with
          // every increment by other actors and only d's own later steps read it.
          [&](const SemWait &) {
            return enabled(s, {ScheduleStep::Kind::Device, d});
          },
          // A signal on the barrier semaphore has no check and only the target's waits
          // read the value (they commute with an increment); a signal to d itself is
          // checked against d's own state, which no other actor changes.
          [&](const Signal &sig) {
            return (barrierSem_ && sig.sem == *barrierSem_) || sig.target == d;
          },
          // Writes a register (data only, not part of the searched state).
          [&](const SemRead &) { return true; },
      },
      e.kind);
}

// A DMA chunk is safe when the device whose memory and semaphore it touches (the
// issuer for a send chunk, the target for a land chunk) is blocked at a SemWait on
// that semaphore which cannot pass without this very chunk: the units it still needs
// exceed what every other DMA into that semaphore can still add plus what this DMA
// adds after this chunk (signals never reach DMA semaphores). Then, until the chunk
// runs, that device takes no step, so none of its steps (exit checks, stores, scope
// and kernel entries and exits, the only readers of its where/scopes and semaphore)
// can interleave; the increment commutes with everything else. The chunk's lifetime
// check reads only that device's state, which is frozen. The last chunk closes a DMA
// side, which changes the race check of any later DmaStart conflicting with it, so
// every such DMA must have started already (a Store conflicting with it could only be
// the blocked device's). So the chunk commutes with every step other actors can take
// first and changes no check's outcome, the same argument as for isSafeStep.
bool Machine::isSafeDmaStep(const ControlState &s, const ScheduleStep &step) const {
  if (step.kind == ScheduleStep::Kind::Device || step.id < 0 || step.id >= dmaCount_ ||
      !enabled(s, step))
    return false;
  const DmaId k = step.id;
  const Dma &dma = dmas_[k];
  const bool send = step.kind == ScheduleStep::Kind::Send;
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
  auto units = [&](const Dma &d, int32_t from) {
    int64_t sum = 0;
    for (size_t c = static_cast<size_t>(std::max(0, from)); c < d.chunkUnits.size(); ++c)
      sum = saturatingAdd(sum, d.chunkUnits[c]);
    return sum;
  };
  int64_t available = s.sem[static_cast<size_t>(owner) * semCount_ + sem];
  available = saturatingAdd(available, units(dma, chunk + 1));
  for (DmaId j : send ? issuedBy_[owner] : targeting_[owner]) {
    if (j == k)
      continue;
    const Dma &other = dmas_[j];
    if (send ? (other.sendSem != dma.sendSem) : (other.recvSem != sem))
      continue;
    available = saturatingAdd(available, units(other, send ? s.sent[j] : s.landed[j]));
  }
  if (available >= w->amount)
    return false;
  if (chunk + 1 == chunks_[k] && startPc_[k] >= 0)
    for (const Conflict &c : conflicts_[dma.issuer][startPc_[k]])
      if ((c.mine == 1) != send && !started(s, c.other.dma))
        return false;
  return true;
}

} // namespace dkv::executor
