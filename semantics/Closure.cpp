// Greedy closures of the step table and the decision of every property from them
// (docs/closure.md has the same argument with examples).
//
// Persistence. A state is a function of its count vector c (per actor: a device's
// events run, a DMA's sends, its lands): semaphore values are the units of the
// increments run minus the amounts of the waits run. An actor's next step is fixed by
// its own count, and whether it is enabled depends on the others' counts monotonically:
// a wait needs units that only other actors (and its own earlier signals) add, a
// barrier needs the others to arrive, a send its DMA started, a land its send and (link
// order) an earlier DMA landed. Nothing but the actor itself takes a step away.
//
// Lemma 1 (joins). If c1 and c2 are reachable, so is max(c1, c2): run c1's schedule,
// then c2's, skipping each step whose actor has already taken it; a step not skipped
// has the same own count as in c2's run and at least the others' counts there, so it is
// enabled. Lemma 2 (greatest capped state). For caps u (per actor a bound), the
// reachable states c <= u are finite and closed under joins, so they have a greatest
// one, H(u); a greedy run (take any enabled step of an actor below its cap, until none)
// ends in it from any reachable state below it: if it ended in g != H(u), the first
// step of a run to H(u) whose actor a has count >= g[a] in g is taken from a state <= g
// with a's count equal to g's, so it is enabled in g, and a is below its cap there.
// Corollary (deadlock). A reachable state with no enabled step is H(no caps): any other
// reachable state has an enabled step by Lemma 2.
//
// The checks (docs/model.md section 4), each "some reachable state satisfies P":
// - Race (d, pc, k, side), ExitSend, ExitRecv: c[d] = pc, k started (its issuer i past
//   its start s), k's side not complete (< K chunks). Decided by (A) H(k's side <= K-1)
//   has d >= pc and (B) H(d <= pc) has i > s. Necessary: a violating state is below
//   both caps. Sufficient: cut (A)'s run where d reaches pc (d = pc, side < K), cut
//   (B)'s run before k's last chunk of that side (i > s, side < K, d <= pc); their join
//   (Lemma 1) violates.
// - ExitSemaphore, SlotEnter (d, pc, s): c[d] = pc and the value of s on d is not 0,
//   i.e. above 0 (a wait never lets it go below). H(d <= pc) has the most units of every
//   state below that cap, so: violated iff H(d <= pc) has d = pc and s on d above 0.
// - SignalInvocation, SlotSignal (d, pc, target t): c[d] = pc and t's pc in a range
//   [a, b] of the violating set. (A) H(t <= b) has d >= pc, (B) H(d <= pc) has t >= a;
//   cut (A)'s run at d = pc and (B)'s where t reaches a, and join.
// - LandInvocation, LandScope, SlotLand (k, target t): land chunk c of k is next and
//   enabled (landed c, sent > c, link predecessor landed) while t's pc is in [a, b].
//   (A) H(lands of k <= c) has t >= a, (B) H(t <= b) has landed >= c, sent > c and the
//   link predecessor landed; cut (A)'s run where t reaches a and (B)'s before land
//   chunk c runs (if it does), and join.
// - Stuck (d, pc): H(no caps) has no enabled step, d unfinished at pc (Corollary).
// Each (B) of a device's checks comes from one sweep of that device (its cap raised
// event by event, each run going on from the last), each (A) from one closure per DMA
// side (or land chunk) or from the target's sweep. The witness of a violated check is
// the greedy run to H of its joint caps (which violates it, by the argument above),
// cut to what the violation depends on (sliceRun).
#include "semantics/Closure.h"

#include "semantics/Obligations.h"
#include "semantics/Symmetry.h"
#include "support/Invariant.h"
#include "support/Overloaded.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <new>
#include <set>
#include <thread>
#include <tuple>

namespace dkv::semantics {

using namespace model;
using report::ScheduleStep;

int32_t Actors::of(const ScheduleStep &step) const {
  switch (step.kind) {
  case ScheduleStep::Kind::Device:
    return device(step.id);
  case ScheduleStep::Kind::Send:
    return send(step.id);
  case ScheduleStep::Kind::Land:
    return land(step.id);
  }
  DKV_UNREACHABLE("schedule step kind");
}

Closure::Closure(const Machine &machine)
    : m_(machine), program_(machine.program()), actors_{machine.deviceCount(), machine.dmaCount()} {
  const int32_t n = m_.deviceCount();
  const std::vector<std::vector<int32_t>> &barrierPc = m_.properties().barrierPcs();
  const size_t invocations = barrierPc.empty() ? 0 : barrierPc[0].size();
  barrierAt_.assign(n, {});
  required_.assign(invocations, 0);
  for (DeviceId d = 0; d < n; ++d) {
    for (size_t inv = 0; inv < invocations; ++inv)
      if (barrierPc[d][inv] >= 0) {
        ++required_[inv];
        barrierAt_[d].push_back({barrierPc[d][inv], static_cast<int32_t>(inv)});
      }
    std::sort(barrierAt_[d].begin(), barrierAt_[d].end());
  }
  ops_.assign(n, {});
  for (DeviceId d = 0; d < n; ++d)
    for (const Event &e : program_.processes[d].events) {
      Op op;
      if (const auto *w = std::get_if<SemWait>(&e.kind))
        op = {Op::Kind::Wait, w->sem, 0, w->amount};
      else if (const auto *b = std::get_if<DeviceBarrier>(&e.kind)) {
        if (b->invocation >= 0 && static_cast<size_t>(b->invocation) < invocations)
          op = {Op::Kind::Barrier, b->invocation, 0, 0};
      } else if (const auto *sig = std::get_if<Signal>(&e.kind))
        op = {Op::Kind::Signal, sig->target, sig->sem, sig->amount};
      else if (const auto *start = std::get_if<DmaStart>(&e.kind))
        op = {Op::Kind::Start, start->dma, 0, 0};
      ops_[d].push_back(op);
    }
  for (const Dma &dma : program_.dmas) {
    DmaInfo info;
    info.issuer = dma.issuer;
    info.target = dma.target;
    info.sendSem = dma.sendSem ? *dma.sendSem : -1;
    info.recvSem = dma.recvSem;
    info.start = m_.properties().startPc(dma.id);
    info.chunks = m_.chunks(dma.id);
    info.units = static_cast<int32_t>(units_.size());
    // Send chunk c's units at units + c, land chunk c's at units + chunks + c: each side
    // counts its own way (Dma::sendUnits, landUnits).
    for (const std::vector<int64_t> *side : {&dma.sendUnits, &dma.landUnits})
      for (int32_t c = 0; c < info.chunks; ++c)
        units_.push_back(static_cast<size_t>(c) < side->size() ? (*side)[c] : 0);
    dmas_.push_back(info);
  }
  linkNext_.assign(m_.dmaCount(), {});
  for (DmaId k = 0; k < m_.dmaCount(); ++k)
    if (const DmaId j = m_.properties().linkPredecessor(k); j >= 0)
      linkNext_[j].push_back(k);
  reset();
}

void Closure::reset() {
  const int32_t n = m_.deviceCount();
  run_.state = m_.initialState();
  run_.cap.assign(actors_.count(), 0);
  for (DeviceId d = 0; d < n; ++d)
    run_.cap[actors_.device(d)] = m_.eventCount(d);
  for (DmaId k = 0; k < m_.dmaCount(); ++k) {
    run_.cap[actors_.send(k)] = m_.chunks(k);
    run_.cap[actors_.land(k)] = m_.chunks(k);
  }
  run_.queue.clear();
  run_.queued.assign(actors_.count(), false);
  run_.blockedOn.assign(n, -1);
  run_.barrierBlocked.assign(n, -1);
  run_.arrived.assign(required_.size(), 0);
  run_.barrierWaiters.assign(required_.size(), {});
  run_.nextBarrier.assign(n, 0);
  run_.limit.assign(n, 0);
  for (DeviceId d = 0; d < n; ++d)
    run_.limit[d] = m_.eventCount(d);
  run_.jumped.assign(n, false);
  for (DeviceId d = 0; d < n; ++d)
    for (; run_.nextBarrier[d] < barrierAt_[d].size() &&
           barrierAt_[d][run_.nextBarrier[d]].first == 0;
         ++run_.nextBarrier[d])
      ++run_.arrived[barrierAt_[d][run_.nextBarrier[d]].second];
  watch_.assign(n, -1);
  unmet_ = 0;
  stop_ = false;
  schedule_.clear();
  for (DeviceId d = 0; d < n; ++d)
    push(actors_.device(d));
}

void Closure::saveBase(const void *owner) {
  base_ = run_;
  baseOwner_ = owner;
}

void Closure::restoreBase() {
  DKV_INVARIANT(baseOwner_ != nullptr, "restoreBase after saveBase");
  // Assignments into the vectors of the previous closure: no allocation.
  run_ = base_;
  std::fill(watch_.begin(), watch_.end(), -1);
  unmet_ = 0;
  stop_ = false;
  schedule_.clear();
}

void Closure::assumeDone(DeviceId d) {
  const size_t semCount = static_cast<size_t>(m_.semCount());
  for (const Op &op : ops_[d]) {
    switch (op.kind) {
    case Op::Kind::Wait:
      run_.state.sem[d * semCount + op.a] -= op.amount;
      break;
    case Op::Kind::Signal:
      run_.state.sem[op.a * semCount + op.b] += op.amount;
      added(op.a, op.b);
      break;
    case Op::Kind::Start: {
      const DmaId k = op.a;
      const DmaInfo &dma = dmas_[k];
      for (int32_t c = 0; c < dma.chunks; ++c) {
        if (dma.sendSem >= 0) {
          run_.state.sem[dma.issuer * semCount + dma.sendSem] += units_[dma.units + c];
          added(dma.issuer, dma.sendSem);
        }
        run_.state.sem[dma.target * semCount + dma.recvSem] += units_[dma.units + dma.chunks + c];
        added(dma.target, dma.recvSem);
      }
      run_.state.sent[k] = run_.state.landed[k] = dma.chunks;
      for (DmaId j : linkNext_[k])
        push(actors_.land(j));
      break;
    }
    case Op::Kind::Barrier:
    case Op::Kind::Other:
      break;
    }
  }
  run_.state.pc[d] = static_cast<int32_t>(ops_[d].size());
  arriveAtLaterBarriers(d);
}

void Closure::arriveAtLaterBarriers(DeviceId d) {
  for (; run_.nextBarrier[d] < barrierAt_[d].size(); ++run_.nextBarrier[d]) {
    const int32_t inv = barrierAt_[d][run_.nextBarrier[d]].second;
    if (++run_.arrived[inv] == required_[inv]) {
      for (DeviceId w : run_.barrierWaiters[inv])
        push(actors_.device(w));
      run_.barrierWaiters[inv].clear();
    }
  }
}

void Closure::saturate(DeviceId d, SemId sem) {
  const size_t semCount = static_cast<size_t>(m_.semCount());
  run_.state.sem[d * semCount + sem] = kSaturated;
  added(d, sem);
}

void Closure::limitDevice(DeviceId d, int32_t pc) {
  run_.limit[d] = std::clamp(pc, 0, m_.eventCount(d));
  if (run_.state.pc[d] >= run_.limit[d])
    jump(d);
  push(actors_.device(d));
}

void Closure::jump(DeviceId d) {
  if (run_.jumped[d])
    return;
  run_.jumped[d] = true;
  const std::vector<Op> &ops = ops_[d];
  for (size_t pc = static_cast<size_t>(run_.limit[d]); pc < ops.size(); ++pc) {
    const Op &op = ops[pc];
    if (op.kind == Op::Kind::Signal && op.amount > 0) {
      saturate(op.a, op.b);
    } else if (op.kind == Op::Kind::Start) {
      const DmaInfo &dma = dmas_[op.a];
      if (dma.sendSem >= 0)
        saturate(dma.issuer, dma.sendSem);
      saturate(dma.target, dma.recvSem);
    }
  }
  // Its later barriers: arrived (the others are not held by a device that stopped).
  arriveAtLaterBarriers(d);
}

void Closure::push(int32_t actor) {
  if (run_.queued[actor])
    return;
  run_.queued[actor] = true;
  run_.queue.push_back(actor);
}

void Closure::capDevice(DeviceId d, int32_t events) {
  run_.cap[actors_.device(d)] = std::clamp(events, 0, m_.eventCount(d));
  push(actors_.device(d));
}

void Closure::capSends(DmaId k, int32_t chunks) {
  run_.cap[actors_.send(k)] = std::clamp(chunks, 0, m_.chunks(k));
  push(actors_.send(k));
}

void Closure::capLands(DmaId k, int32_t chunks) {
  run_.cap[actors_.land(k)] = std::clamp(chunks, 0, m_.chunks(k));
  push(actors_.land(k));
}

void Closure::watch(DeviceId d, int32_t events) {
  if (watch_[d] >= 0 && run_.state.pc[d] < watch_[d])
    --unmet_;
  watch_[d] = events;
  if (run_.state.pc[d] < events)
    ++unmet_;
}

void Closure::run() {
  // FIFO over the actors that may have become able to move; each moves as far as it
  // can. The order does not change the state reached (Lemma 2), only the schedule.
  stop_ = unmet_ == 0 && std::find_if(watch_.begin(), watch_.end(),
                                      [](int32_t w) { return w >= 0; }) != watch_.end();
  for (size_t head = 0; head < run_.queue.size() && !stop_; ++head) {
    const int32_t actor = run_.queue[head];
    run_.queued[actor] = false;
    if (actor < actors_.devices)
      advanceDevice(actor);
    else if (actor < actors_.devices + actors_.dmas)
      advanceSends(actor - actors_.devices);
    else
      advanceLands(actor - actors_.devices - actors_.dmas);
    if (stop_) {
      // Stopped early: the actors not yet looked at (and this one, which may not have
      // finished) stay queued for a later run().
      run_.queue.erase(run_.queue.begin(),
                       run_.queue.begin() + static_cast<std::ptrdiff_t>(head) + 1);
      push(actor);
      return;
    }
    if (head > 4096 && head * 2 > run_.queue.size()) {
      run_.queue.erase(run_.queue.begin(),
                       run_.queue.begin() + static_cast<std::ptrdiff_t>(head) + 1);
      head = static_cast<size_t>(-1);
    }
  }
  if (!stop_)
    run_.queue.clear();
}

void Closure::added(DeviceId d, SemId sem) {
  if (run_.blockedOn[d] == sem) {
    run_.blockedOn[d] = -1;
    push(actors_.device(d));
  }
}

void Closure::advanceDevice(DeviceId d) {
  const std::vector<Op> &ops = ops_[d];
  const int32_t end =
      std::min({run_.cap[actors_.device(d)], static_cast<int32_t>(ops.size()), run_.limit[d]});
  const size_t semCount = static_cast<size_t>(m_.semCount());
  while (run_.state.pc[d] < end && !stop_) {
    const Op &op = ops[run_.state.pc[d]];
    if (op.kind == Op::Kind::Wait) {
      if (run_.state.sem[d * semCount + op.a] < op.amount) {
        run_.blockedOn[d] = op.a;
        return;
      }
    } else if (op.kind == Op::Kind::Barrier && run_.arrived[op.a] < required_[op.a]) {
      if (run_.barrierBlocked[d] != op.a) {
        run_.barrierBlocked[d] = op.a;
        run_.barrierWaiters[op.a].push_back(d);
      }
      return;
    }
    take({ScheduleStep::Kind::Device, d});
  }
}

void Closure::advanceSends(DmaId k) {
  const DmaInfo &dma = dmas_[k];
  const int32_t end = std::min(run_.cap[actors_.send(k)], dma.chunks);
  while (run_.state.sent[k] < end && dma.start >= 0 && run_.state.pc[dma.issuer] > dma.start &&
         !stop_)
    take({ScheduleStep::Kind::Send, k});
}

void Closure::advanceLands(DmaId k) {
  const int32_t end = std::min(run_.cap[actors_.land(k)], dmas_[k].chunks);
  while (run_.state.landed[k] < end && run_.state.landed[k] < run_.state.sent[k] &&
         m_.linkClear(run_.state, k) && !stop_)
    take({ScheduleStep::Kind::Land, k});
}

// The effects of Machine::apply, plus waking the actors a step may enable.
void Closure::take(const ScheduleStep &step) {
  ++work_;
  if (record_)
    schedule_.push_back(step);
  const int32_t semCount = m_.semCount();
  switch (step.kind) {
  case ScheduleStep::Kind::Device: {
    const DeviceId d = step.id;
    const Op &op = ops_[d][run_.state.pc[d]];
    switch (op.kind) {
    case Op::Kind::Wait:
      run_.state.sem[static_cast<size_t>(d) * semCount + op.a] -= op.amount;
      break;
    case Op::Kind::Signal:
      run_.state.sem[static_cast<size_t>(op.a) * semCount + op.b] += op.amount;
      added(op.a, op.b);
      break;
    case Op::Kind::Start:
      push(actors_.send(op.a));
      break;
    case Op::Kind::Barrier:
    case Op::Kind::Other:
      break;
    }
    run_.barrierBlocked[d] = -1;
    const int32_t pc = ++run_.state.pc[d];
    const std::vector<std::pair<int32_t, int32_t>> &barriers = barrierAt_[d];
    for (; run_.nextBarrier[d] < barriers.size() && barriers[run_.nextBarrier[d]].first == pc;
         ++run_.nextBarrier[d]) {
      const int32_t inv = barriers[run_.nextBarrier[d]].second;
      if (++run_.arrived[inv] == required_[inv]) {
        for (DeviceId w : run_.barrierWaiters[inv])
          push(actors_.device(w));
        run_.barrierWaiters[inv].clear();
      }
    }
    if (pc == run_.limit[d] && pc < static_cast<int32_t>(ops_[d].size()))
      jump(d);
    if (pc == watch_[d] && --unmet_ == 0)
      stop_ = true;
    return;
  }
  case ScheduleStep::Kind::Send: {
    const DmaInfo &dma = dmas_[step.id];
    const int32_t c = run_.state.sent[step.id]++;
    if (dma.sendSem >= 0) {
      run_.state.sem[static_cast<size_t>(dma.issuer) * semCount + dma.sendSem] +=
          units_[dma.units + c];
      added(dma.issuer, dma.sendSem);
    }
    push(actors_.land(step.id));
    return;
  }
  case ScheduleStep::Kind::Land: {
    const DmaInfo &dma = dmas_[step.id];
    const int32_t c = run_.state.landed[step.id]++;
    run_.state.sem[static_cast<size_t>(dma.target) * semCount + dma.recvSem] +=
        units_[dma.units + dma.chunks + c];
    added(dma.target, dma.recvSem);
    if (run_.state.landed[step.id] >= dma.chunks)
      for (DmaId j : linkNext_[step.id])
        push(actors_.land(j));
    return;
  }
  }
}

bool Closure::stalled() const {
  std::vector<ScheduleStep> steps;
  m_.enabledSteps(run_.state, steps);
  const ControlState &s = run_.state;
  for (const ScheduleStep &step : steps) {
    const int32_t actor = actors_.of(step);
    const int32_t count = step.kind == ScheduleStep::Kind::Device ? s.pc[step.id]
                          : step.kind == ScheduleStep::Kind::Send ? s.sent[step.id]
                                                                  : s.landed[step.id];
    if (count < run_.cap[actor])
      return false;
  }
  return true;
}

// The slice keeps, per actor, a prefix of its steps: `need[a]` of them. Every step kept
// has what enabled it in `run` kept too, at an earlier position (a wait: the earliest
// increments of its semaphore, which precede it in `run` since it was enabled there,
// with at least its device's waits on it up to it in units; the device's own earlier
// waits are kept by its prefix). So the kept steps, in `run`'s order, are a run: each
// step is enabled when it is reached (its own count is the same as in `run`, and it
// needs nothing that was dropped).
report::Schedule sliceRun(const Machine &machine, const report::Schedule &run, const Needs &needs) {
  const Program &program = machine.program();
  const Properties &props = machine.properties();
  const Actors actors{machine.deviceCount(), machine.dmaCount()};
  const int32_t semCount = machine.semCount();
  struct Increment {
    int32_t actor;
    int32_t index; ///< the step's index among its actor's steps
    int64_t units;
  };
  std::map<size_t, std::vector<Increment>> incs; // [device * semCount + sem]
  std::vector<int32_t> count(actors.count(), 0);
  for (const ScheduleStep &step : run) {
    const int32_t actor = actors.of(step);
    const int32_t index = count[actor]++;
    switch (step.kind) {
    case ScheduleStep::Kind::Device:
      if (const auto *sig = std::get_if<Signal>(&program.processes[step.id].events[index].kind))
        if (sig->amount > 0)
          incs[static_cast<size_t>(sig->target) * semCount + sig->sem].push_back(
              {actor, index, sig->amount});
      break;
    case ScheduleStep::Kind::Send: {
      const Dma &dma = program.dmas[step.id];
      if (dma.sendSem && static_cast<size_t>(index) < dma.sendUnits.size() &&
          dma.sendUnits[index] > 0)
        incs[static_cast<size_t>(dma.issuer) * semCount + *dma.sendSem].push_back(
            {actor, index, dma.sendUnits[index]});
      break;
    }
    case ScheduleStep::Kind::Land: {
      const Dma &dma = program.dmas[step.id];
      if (static_cast<size_t>(index) < dma.landUnits.size() && dma.landUnits[index] > 0)
        incs[static_cast<size_t>(dma.target) * semCount + dma.recvSem].push_back(
            {actor, index, dma.landUnits[index]});
      break;
    }
    }
  }
  std::vector<int32_t> need(actors.count(), 0), done(actors.count(), 0);
  std::vector<int32_t> work;
  auto require = [&](int32_t actor, int32_t steps) {
    DKV_INVARIANT(steps <= count[actor], "a slice needs only steps of the run");
    if (need[actor] < steps) {
      need[actor] = steps;
      work.push_back(actor);
    }
  };
  for (const auto &[actor, steps] : needs)
    require(actor, steps);
  std::map<size_t, std::pair<int64_t, size_t>> waited; // (d, s): units waited, increments kept
  const std::vector<std::vector<int32_t>> &barrierPc = props.barrierPcs();
  while (!work.empty()) {
    const int32_t actor = work.back();
    work.pop_back();
    for (; done[actor] < need[actor]; ++done[actor]) {
      const int32_t j = done[actor];
      if (actor < actors.devices) {
        const DeviceId d = actor;
        const EventKind &kind = program.processes[d].events[j].kind;
        if (const auto *w = std::get_if<SemWait>(&kind)) {
          const size_t key = static_cast<size_t>(d) * semCount + w->sem;
          auto &[units, kept] = waited[key];
          units += w->amount;
          const std::vector<Increment> &list = incs[key];
          int64_t covered = 0;
          for (size_t i = 0; i < kept; ++i)
            covered += list[i].units;
          while (covered < units) {
            DKV_INVARIANT(kept < list.size(), "a wait of the run is covered by its increments");
            covered += list[kept].units;
            require(list[kept].actor, list[kept].index + 1);
            ++kept;
          }
        } else if (const auto *b = std::get_if<DeviceBarrier>(&kind)) {
          if (b->invocation >= 0 && !barrierPc.empty() &&
              static_cast<size_t>(b->invocation) < barrierPc[0].size())
            for (DeviceId f = 0; f < machine.deviceCount(); ++f)
              if (barrierPc[f][b->invocation] > 0)
                require(actors.device(f), barrierPc[f][b->invocation]);
        }
      } else if (actor < actors.devices + actors.dmas) {
        const DmaId k = actor - actors.devices;
        require(actors.device(program.dmas[k].issuer), props.startPc(k) + 1);
      } else {
        const DmaId k = actor - actors.devices - actors.dmas;
        require(actors.send(k), j + 1);
        if (const DmaId p = props.linkPredecessor(k); p >= 0)
          require(actors.land(p), machine.chunks(p));
      }
    }
  }
  report::Schedule out;
  std::fill(count.begin(), count.end(), 0);
  for (const ScheduleStep &step : run) {
    const int32_t actor = actors.of(step);
    if (count[actor]++ < need[actor])
      out.push_back(step);
  }
  return out;
}

namespace {

using Clock = std::chrono::steady_clock;

/// The pcs of device t (0 to its event count) at which obligation o is violated, as
/// maximal ranges [first, last]; o reads only where t is (Land*, Signal*, Slot*).
std::vector<std::pair<int32_t, int32_t>> violatingRanges(const Machine &m, ObligationIndex o,
                                                         DeviceId t) {
  std::vector<std::pair<int32_t, int32_t>> ranges;
  ControlState probe = m.initialState();
  for (int32_t pc = 0; pc <= m.eventCount(t); ++pc) {
    probe.pc[t] = pc;
    if (!m.violated(probe, o))
      continue;
    if (!ranges.empty() && ranges.back().second == pc - 1)
      ranges.back().second = pc;
    else
      ranges.push_back({pc, pc});
  }
  return ranges;
}

/// How the decision treats an obligation, read from its predicate (semantics/Obligations.h)
/// and not from its kind: the fact the predicate is about decides it.
struct Form {
  enum class Kind {
    SideOpen,   ///< a DMA side open at the obligation's event (`fact`: the side)
    SemNonZero, ///< a semaphore non-zero at the event (`fact`: the semaphore)
    Where,      ///< where another device is (Within, InScope) at the event
    Land,       ///< where the DMA's target is at its land chunks (no event)
    Stuck,      ///< the greatest state decides it
  };
  Kind kind = Kind::Stuck;
  Fact fact;
};

Form formOf(const Obligation &ob) {
  const Predicate p = violation(ob);
  switch (checkedAt(ob)) {
  case CheckedAt::Deadlock:
    return {Form::Kind::Stuck, p.all.front().fact};
  case CheckedAt::Land:
    DKV_INVARIANT(p.all.front().fact.readsOnlyPc(), "a land check reads where its target is");
    return {Form::Kind::Land, p.all.front().fact};
  case CheckedAt::Event:
    break;
  }
  // At an event, the predicate is one fact of the state (a side, a semaphore) or facts
  // of where one device is.
  const Fact &f = p.all.front().fact;
  switch (f.kind) {
  case Fact::Kind::SideOpen:
    return {Form::Kind::SideOpen, f};
  case Fact::Kind::SemNonZero:
    return {Form::Kind::SemNonZero, f};
  case Fact::Kind::Within:
  case Fact::Kind::InScope:
    return {Form::Kind::Where, f};
  case Fact::Kind::Stuck:
    break;
  }
  DKV_UNREACHABLE("a Stuck fact is checked in a deadlock");
}

/// One check of the decision: an obligation with, for Land and Signal checks, one
/// range of the target's violating pcs (and a land chunk); violated when both parts
/// hold (see the rules at the top of this file).
struct Check {
  ObligationIndex obligation = 0;
  int32_t chunk = 0;
  int32_t low = 0, high = 0; ///< the target's range
  bool a = false, b = false;
  /// Its caps would fall on a device outside the window (or a DMA such a device
  /// issues): the bounds of the window argument say nothing about it, so it is not
  /// asked (a and b stay false) and stays undecided.
  bool beyond = false;
};

/// What the two bounds of a window say of one check (docs/parametric.md, the window
/// theorem): both parts hold under the lower bound (a cap set of the instance), so the
/// check holds in the instance; a part fails under the upper bound (an
/// over-approximation), so it fails there; neither; or the window cannot ask it.
enum class Bounded : uint8_t { Violated, Holds, Open, Beyond };
Bounded bounded(const Check &lower, const Check &upper) {
  if (lower.beyond)
    return Bounded::Beyond;
  if (lower.a && lower.b)
    return Bounded::Violated;
  return upper.a && upper.b ? Bounded::Open : Bounded::Holds;
}

/// What a closure is asked once it has run: part A or B of check `check` is "device
/// `who` has run at least `value` events" (Reach), "DMA `who` has started" (Started),
/// "device `who` is at `value` with semaphore `sem` non-zero" (NonZero), "land chunk
/// `value` of DMA `who` is next and enabled, or has landed" (LandReady).
struct Query {
  enum class Kind : uint8_t { Reach, Started, NonZero, LandReady };
  Kind kind = Kind::Reach;
  bool partA = false;
  int32_t check = 0;
  int32_t who = 0;
  int32_t value = 0;
  SemId sem = -1;
};

bool answer(const Machine &m, const ControlState &s, const Query &q) {
  switch (q.kind) {
  case Query::Kind::Reach:
    return s.pc[q.who] >= q.value;
  case Query::Kind::Started:
    return m.started(s, q.who);
  case Query::Kind::NonZero:
    return s.pc[q.who] == q.value && m.semValue(s, q.who, q.sem) != 0;
  case Query::Kind::LandReady:
    return s.landed[q.who] > q.value ||
           (s.landed[q.who] == q.value && s.sent[q.who] > q.value && m.linkClear(s, q.who));
  }
  return false;
}

/// What every closure starts from in the window argument (decideWindow): the devices
/// outside the window held at their first events, or complete. Empty: the instance as
/// it is (the closure engine).
struct Outside {
  enum class Kind { None, Held, Done };
  Kind kind = Kind::None;
  std::vector<bool> inside;
  std::vector<int32_t> hold;

  /// The closure reset to where every closure of a decision starts: the instance's
  /// initial state, and the devices outside held or complete (prepared once, then copied).
  void start(Closure &closure) const {
    if (kind == Kind::None) {
      closure.reset();
      return;
    }
    if (closure.hasBase(this)) {
      closure.restoreBase();
      return;
    }
    closure.reset();
    prepare(closure);
    closure.saveBase(this);
  }

  void prepare(Closure &closure) const {
    if (kind == Kind::None)
      return;
    for (DeviceId d = 0; d < static_cast<DeviceId>(inside.size()); ++d)
      if (!inside[d]) {
        if (kind == Kind::Held)
          closure.capDevice(d, hold[d]);
        else
          closure.assumeDone(d);
      }
  }
};

class Decider {
public:
  Decider(const Machine &m, const ClosureOptions &options, Outside outside = {})
      : m_(m), props_(m.properties()), options_(options), outside_(std::move(outside)), closure_(m),
        begin_(Clock::now()),
        deadline_(begin_ + std::chrono::duration_cast<Clock::duration>(
                               std::chrono::duration<double>(options.timeoutSeconds))) {}

  /// Plan only the obligations with `mask[o]` set (before run(); empty: all).
  void restrict(std::vector<char> mask) { only_ = std::move(mask); }
  /// Properties already witnessed by another decision: no witness is made for them,
  /// and no closure is run only for them (before run()).
  void alreadyWitnessed(std::vector<bool> witnessed) { given_ = std::move(witnessed); }
  /// Whether violated checks get a witness: by default with the instance as it is, and
  /// never with the devices outside a window complete (those closures are not runs of
  /// the instance). With them held (a cap set of the instance) they may: the witness is
  /// then a run of the whole instance found in the window (decideByClosure).
  void makeWitnesses(bool on) { witnesses_ = on && outside_.kind != Outside::Kind::Done; }
  /// What the witnesses say of how they were found (Witness::origin).
  void origin(std::string text) { origin_ = std::move(text); }
  EngineResult run();
  /// After run() (window argument): the checks with their parts, and device 0's events
  /// run in the greatest state.
  const std::vector<Check> &checks() const { return checks_; }
  int32_t deviceZeroAtEnd() const { return deviceZeroAtEnd_; }
  const std::vector<bool> &witnessed() const { return witnessed_; }
  /// After run(): the closures run and the steps they took (its `closures`, `steps`).
  int64_t closuresRun() const { return closuresRun_; }
  int64_t stepsTaken() const { return closure_.work() + sideWork_; }

private:
  void plan();
  bool starved(DeviceId d, int32_t pc, SemId sem, int64_t missing);
  void addSweep(DeviceId d, int32_t cap, Query q) { sweeps_[d].push_back({cap, q}); }
  void addClosure(int32_t actor, int32_t cap, Query q) { closures_[{actor, cap}].push_back(q); }
  void settle(int32_t check);
  void witness(int32_t check);
  bool progress(const std::string &phase);
  /// The time limit passed, or the run's stop request (time, memory, a signal) was made.
  bool late() const { return Clock::now() >= deadline_ || stopRequested(options_.events); }
  /// Whether device d is inside the window (every device when there is none).
  bool inside(DeviceId d) const {
    return outside_.kind == Outside::Kind::None || outside_.inside[d];
  }

  const Machine &m_;
  const Properties &props_;
  const ClosureOptions &options_;
  const Outside outside_;
  int32_t deviceZeroAtEnd_ = 0;
  Closure closure_;
  Clock::time_point begin_, deadline_;
  EngineResult result_;
  std::vector<Check> checks_;
  std::vector<bool> witnessed_;
  std::map<DeviceId, std::vector<std::pair<int32_t, Query>>> sweeps_;
  std::map<std::pair<int32_t, int32_t>, std::vector<Query>> closures_;
  std::map<std::pair<DeviceId, SemId>, std::vector<int64_t>> waited_; ///< starved(): prefix sums
  int64_t closuresRun_ = 0;
  int64_t sideWork_ = 0; ///< steps taken by the closures of part A
  bool stopped_ = false;
  std::vector<char> only_;
  std::vector<bool> given_;
  bool witnesses_ = outside_.kind == Outside::Kind::None;
  std::string origin_;
};

/// Part A of the checks of one capped DMA side (or land chunk), each "device `who`
/// gets at least to `value`": the closure stops as soon as every such device is there.
std::vector<char> sideClosure(Closure &closure, std::pair<int32_t, int32_t> key,
                              const std::vector<Query> &queries, const Outside &outside) {
  const Machine &m = closure.machine();
  const Actors actors{m.deviceCount(), m.dmaCount()};
  outside.start(closure);
  const auto &[actor, cap] = key;
  if (actor < actors.devices + actors.dmas)
    closure.capSends(actor - actors.devices, cap);
  else
    closure.capLands(actor - actors.devices - actors.dmas, cap);
  std::map<DeviceId, int32_t> marks;
  for (const Query &q : queries) {
    DKV_INVARIANT(q.kind == Query::Kind::Reach, "a side closure answers how far a device gets");
    marks[q.who] = std::max(marks[q.who], q.value);
  }
  for (const auto &[device, events] : marks)
    closure.watch(device, events);
  closure.run();
  std::vector<char> out;
  for (const Query &q : queries)
    out.push_back(answer(m, closure.state(), q) ? 1 : 0);
  return out;
}

// Whether device d cannot run its first `pc` events while `missing` units of semaphore
// `sem` on it never arrive: its waits on `sem` among them need more than every other
// increment that can ever reach it (Program::incrementTotals). Then a part A that asks
// for it is false without a closure: no state below those caps gets d that far.
bool Decider::starved(DeviceId d, int32_t pc, SemId sem, int64_t missing) {
  std::vector<int64_t> &prefix = waited_[{d, sem}];
  if (prefix.empty()) {
    prefix.push_back(0);
    for (const Event &e : m_.program().processes[d].events) {
      const auto *w = std::get_if<SemWait>(&e.kind);
      prefix.push_back(prefix.back() + (w && w->sem == sem ? w->amount : 0));
    }
  }
  return prefix[std::clamp<size_t>(static_cast<size_t>(std::max(0, pc)), 0, prefix.size() - 1)] >
         m_.semBound(d, sem) - missing;
}

void Decider::plan() {
  const Actors actors{m_.deviceCount(), m_.dmaCount()};
  for (ObligationIndex o = 0; o < static_cast<ObligationIndex>(props_.obligations().size()); ++o) {
    // Under a symmetry, a rotation of every obligation is checked on a representative.
    if (!props_.represented(o))
      continue;
    const Obligation &ob = props_.obligation(o);
    if (options_.only >= 0 && ob.property != options_.only)
      continue;
    if (!only_.empty() && !only_[o])
      continue;
    const int32_t id = static_cast<int32_t>(checks_.size());
    const Form form = formOf(ob);
    switch (form.kind) {
    case Form::Kind::SideOpen: {
      const bool dst = form.fact.dst;
      const DmaId k = form.fact.dma;
      const Dma &dma = m_.program().dmas[k];
      const int32_t start = props_.startPc(k);
      if (start < 0)
        continue; // never started: never open
      checks_.push_back({o});
      if (!inside(ob.device) || !inside(dma.issuer)) {
        checks_.back().beyond = true;
        break;
      }
      const int32_t side = dst ? actors.land(k) : actors.send(k);
      // The side's semaphore is on the device checked, which must pass its waits on it:
      // without the last chunk's units it may not get there at all.
      const std::optional<SemId> sem = dst ? std::optional<SemId>(dma.recvSem) : dma.sendSem;
      const DeviceId owner = dst ? dma.target : dma.issuer;
      const int32_t last = m_.chunks(k) - 1;
      const std::vector<int64_t> &sideUnits = dma.units(dst);
      const int64_t units = static_cast<size_t>(last) < sideUnits.size() ? sideUnits[last] : 0;
      if (!(sem && owner == ob.device && starved(ob.device, ob.pc, *sem, units)))
        addClosure(side, last, {Query::Kind::Reach, true, id, ob.device, ob.pc});
      if (dma.issuer == ob.device)
        checks_.back().b = start < ob.pc;
      else
        addSweep(ob.device, ob.pc, {Query::Kind::Started, false, id, k, 0});
      break;
    }
    case Form::Kind::SemNonZero:
      DKV_INVARIANT(form.fact.device == ob.device, "a semaphore checked on its own device");
      checks_.push_back({o});
      if (!inside(ob.device)) {
        checks_.back().beyond = true;
        break;
      }
      checks_.back().a = true;
      addSweep(ob.device, ob.pc,
               {Query::Kind::NonZero, false, id, ob.device, ob.pc, form.fact.sem});
      break;
    case Form::Kind::Where: {
      const DeviceId t = form.fact.device;
      for (const auto &[low, high] : violatingRanges(m_, o, t)) {
        const int32_t check = static_cast<int32_t>(checks_.size());
        checks_.push_back({o, 0, low, high});
        if (!inside(t) || !inside(ob.device)) {
          checks_.back().beyond = true;
          continue;
        }
        addSweep(t, high, {Query::Kind::Reach, true, check, ob.device, ob.pc});
        addSweep(ob.device, ob.pc, {Query::Kind::Reach, false, check, t, low});
      }
      break;
    }
    case Form::Kind::Land: {
      if (props_.startPc(ob.dma) < 0)
        continue;
      const Dma &dma = m_.program().dmas[ob.dma];
      const DeviceId t = dma.target;
      for (const auto &[low, high] : violatingRanges(m_, o, t))
        for (int32_t c = 0; c < m_.chunks(ob.dma); ++c) {
          const int32_t check = static_cast<int32_t>(checks_.size());
          checks_.push_back({o, c, low, high});
          if (!inside(t) || !inside(dma.issuer)) {
            checks_.back().beyond = true;
            continue;
          }
          int64_t missing = 0; // the units of chunks c, c + 1, ...
          for (size_t i = static_cast<size_t>(c); i < dma.landUnits.size(); ++i)
            missing += dma.landUnits[i];
          if (low == 0)
            checks_.back().a = true;
          else if (!starved(t, low, dma.recvSem, missing))
            addClosure(actors.land(ob.dma), c, {Query::Kind::Reach, true, check, t, low});
          addSweep(t, high, {Query::Kind::LandReady, false, check, ob.dma, c});
        }
      break;
    }
    case Form::Kind::Stuck:
      break; // the greatest state decides every Stuck obligation
    }
  }
}

bool Decider::progress(const std::string &phase) {
  EngineProgress p;
  p.engine = "closure";
  p.phase = phase;
  p.properties = static_cast<int64_t>(props_.properties().size());
  p.decided = std::count(witnessed_.begin(), witnessed_.end(), true);
  if (!reportProgress(result_, p, options_.events))
    stopped_ = true;
  return !stopped_;
}

void Decider::settle(int32_t check) {
  const Check &c = checks_[check];
  if (c.a && c.b && !stopped_ && witnesses_ &&
      !witnessed_[props_.obligation(c.obligation).property])
    witness(check);
}

// The greedy run to the greatest state of the check's joint caps violates it (the
// rules at the top); it is cut to what the violation depends on, then the violating
// step follows.
void Decider::witness(int32_t check) {
  const Check &c = checks_[check];
  const Obligation &ob = props_.obligation(c.obligation);
  const Actors actors{m_.deviceCount(), m_.dmaCount()};
  // With the devices outside a window held, the run is one of the whole instance.
  outside_.start(closure_);
  closure_.record(true);
  Needs needs;
  std::optional<ScheduleStep> last;
  bool holds = false;
  const Form form = formOf(ob);
  switch (form.kind) {
  case Form::Kind::SideOpen: {
    const DmaId k = form.fact.dma;
    closure_.capDevice(ob.device, ob.pc);
    if (form.fact.dst)
      closure_.capLands(k, m_.chunks(k) - 1);
    else
      closure_.capSends(k, m_.chunks(k) - 1);
    closure_.run();
    const DeviceId issuer = m_.program().dmas[k].issuer;
    holds = closure_.state().pc[ob.device] == ob.pc && m_.started(closure_.state(), k);
    needs = {{actors.device(ob.device), ob.pc}, {actors.device(issuer), props_.startPc(k) + 1}};
    last = ScheduleStep{ScheduleStep::Kind::Device, ob.device};
    break;
  }
  case Form::Kind::SemNonZero: {
    const SemId sem = form.fact.sem;
    closure_.capDevice(ob.device, ob.pc);
    closure_.run();
    holds = closure_.state().pc[ob.device] == ob.pc &&
            m_.semValue(closure_.state(), ob.device, sem) != 0;
    needs = {{actors.device(ob.device), ob.pc}};
    // Every increment of the semaphore the run made: the value stays above the waits.
    std::vector<int32_t> count(actors.count(), 0);
    const int32_t semCount = m_.semCount();
    (void)semCount;
    for (const ScheduleStep &step : closure_.schedule()) {
      const int32_t actor = actors.of(step);
      const int32_t index = count[actor]++;
      bool adds = false;
      if (step.kind == ScheduleStep::Kind::Device) {
        const auto *sig = std::get_if<Signal>(&m_.program().processes[step.id].events[index].kind);
        adds = sig && sig->target == ob.device && sig->sem == sem && sig->amount > 0;
      } else {
        const Dma &dma = m_.program().dmas[step.id];
        adds = step.kind == ScheduleStep::Kind::Send
                   ? dma.sendSem && *dma.sendSem == sem && dma.issuer == ob.device
                   : dma.recvSem == sem && dma.target == ob.device;
      }
      if (adds)
        needs.push_back({actor, index + 1});
    }
    last = ScheduleStep{ScheduleStep::Kind::Device, ob.device};
    break;
  }
  case Form::Kind::Where: {
    const DeviceId t = form.fact.device;
    closure_.capDevice(ob.device, ob.pc);
    if (t != ob.device)
      closure_.capDevice(t, c.high);
    closure_.run();
    const ControlState &s = closure_.state();
    holds = s.pc[ob.device] == ob.pc && s.pc[t] >= c.low && s.pc[t] <= c.high;
    needs = {{actors.device(ob.device), ob.pc}, {actors.device(t), c.low}};
    last = ScheduleStep{ScheduleStep::Kind::Device, ob.device};
    break;
  }
  case Form::Kind::Land: {
    const DeviceId t = m_.program().dmas[ob.dma].target;
    closure_.capDevice(t, c.high);
    closure_.capLands(ob.dma, c.chunk);
    closure_.run();
    const ControlState &s = closure_.state();
    holds = s.pc[t] >= c.low && s.landed[ob.dma] == c.chunk && s.sent[ob.dma] > c.chunk &&
            m_.linkClear(s, ob.dma);
    needs = {{actors.device(t), c.low},
             {actors.send(ob.dma), c.chunk + 1},
             {actors.land(ob.dma), c.chunk}};
    if (const DmaId p = props_.linkPredecessor(ob.dma); p >= 0)
      needs.push_back({actors.land(p), m_.chunks(p)});
    last = ScheduleStep{ScheduleStep::Kind::Land, ob.dma};
    break;
  }
  case Form::Kind::Stuck:
    DKV_UNREACHABLE("a Stuck obligation's witness is the greatest state's run");
  }
  ++closuresRun_;
  closure_.record(false);
  DKV_INVARIANT(holds, "the greatest state of a violated check's caps violates it");
  report::Schedule schedule = sliceRun(m_, closure_.schedule(), needs);
  schedule.push_back(*last);
  witnessed_[ob.property] = true;
  if (!addWitness(result_, {ob.property, std::move(schedule), origin_}, options_.events))
    stopped_ = true;
}

EngineResult Decider::run() {
  const size_t propertyCount = props_.properties().size();
  witnessed_.assign(propertyCount, false);
  if (!given_.empty())
    witnessed_ = given_;
  if (!progress("planning"))
    return result_;
  plan();

  // Deadlocks: the greatest state (no caps).
  outside_.start(closure_);
  closure_.record(outside_.kind == Outside::Kind::None);
  closure_.run();
  ++closuresRun_;
  closure_.record(false);
  deviceZeroAtEnd_ = closure_.state().pc[0];
  if (outside_.kind == Outside::Kind::None) {
    DKV_INVARIANT(closure_.stalled(), "a greedy closure ends with no enabled step");
    std::vector<ObligationIndex> stuck;
    m_.stuck(closure_.state(), stuck);
    for (ObligationIndex o : stuck) {
      const PropertyIndex p = props_.obligation(o).property;
      if (witnessed_[p] || stopped_ || (options_.only >= 0 && p != options_.only))
        continue;
      witnessed_[p] = true;
      if (!addWitness(result_, {p, closure_.schedule()}, options_.events))
        stopped_ = true;
    }
  }

  // Part B of every check (and part A of the checks whose caps are on a device): one
  // sweep per device, its cap raised to each value asked about in turn.
  size_t done = 0;
  for (auto &[device, queries] : sweeps_) {
    if (stopped_ || late())
      break;
    if (done++ % 16 == 0 &&
        !progress(fmt::format("sweep of {} ({} of {})", m_.program().processName(device), done,
                              sweeps_.size())))
      break;
    std::stable_sort(queries.begin(), queries.end(),
                     [](const auto &x, const auto &y) { return x.first < y.first; });
    outside_.start(closure_);
    ++closuresRun_;
    for (size_t i = 0; i < queries.size();) {
      const int32_t cap = queries[i].first;
      closure_.capDevice(device, cap);
      closure_.run();
      for (; i < queries.size() && queries[i].first == cap; ++i) {
        const Query &q = queries[i].second;
        (q.partA ? checks_[q.check].a : checks_[q.check].b) = answer(m_, closure_.state(), q);
      }
    }
  }
  // Checks decided by the sweeps alone (part A needs no closure).
  if (!late())
    for (size_t i = 0; i < checks_.size() && !stopped_; ++i)
      settle(static_cast<int32_t>(i));

  // Part A of the others: one closure per capped DMA side (or land chunk), skipped
  // when no check that needs it can be violated any more. In batches of a fixed size,
  // each batch's closures on `jobs` threads, then settled in order: the result does not
  // depend on `jobs`.
  std::vector<std::pair<std::pair<int32_t, int32_t>, const std::vector<Query> *>> keys;
  for (const auto &[key, queries] : closures_)
    keys.push_back({key, &queries});
  const unsigned jobs = std::max(1u, options_.jobs);
  std::vector<std::unique_ptr<Closure>> workers;
  workers.push_back(std::make_unique<Closure>(m_));
  for (unsigned t = 1; t < jobs; ++t)
    workers.push_back(std::make_unique<Closure>(m_));
  constexpr size_t kBatch = 32;
  for (size_t from = 0; from < keys.size() && !stopped_ && !late(); from += kBatch) {
    if (!progress(fmt::format("closure {} of {}", from + 1, keys.size())))
      break;
    std::vector<size_t> todo;
    for (size_t i = from; i < std::min(keys.size(), from + kBatch); ++i) {
      bool useful = false;
      for (const Query &q : *keys[i].second) {
        const Check &c = checks_[q.check];
        useful = useful || (c.b && !witnessed_[props_.obligation(c.obligation).property]);
      }
      if (useful)
        todo.push_back(i);
    }
    std::vector<std::vector<char>> answers(todo.size());
    auto work = [&](unsigned t) {
      for (size_t j = t; j < todo.size(); j += jobs)
        answers[j] = sideClosure(*workers[t], keys[todo[j]].first, *keys[todo[j]].second, outside_);
    };
    if (jobs > 1 && todo.size() > 1) {
      std::vector<std::thread> threads;
      for (unsigned t = 0; t < jobs; ++t)
        threads.emplace_back(work, t);
      for (std::thread &thread : threads)
        thread.join();
    } else {
      work(0);
    }
    closuresRun_ += static_cast<int64_t>(todo.size());
    for (size_t j = 0; j < todo.size(); ++j) {
      const std::vector<Query> &queries = *keys[todo[j]].second;
      for (size_t q = 0; q < queries.size(); ++q)
        checks_[queries[q].check].a = answers[j][q] != 0;
      for (const Query &q : queries)
        settle(q.check);
    }
  }
  for (const std::unique_ptr<Closure> &w : workers)
    sideWork_ += w->work();

  const bool finished = !stopped_ && !late();
  if (!finished && !stopped_ && stopRequested(options_.events)) {
    stopForRequest(result_, options_.events,
                   fmt::format("{} of {} properties decided",
                               std::count(witnessed_.begin(), witnessed_.end(), true),
                               propertyCount));
  } else if (!finished && !stopped_) {
    result_.complete = false;
    result_.reason =
        fmt::format("time limit of {:g} s reached with {} of {} properties "
                    "decided",
                    options_.timeoutSeconds, std::count(witnessed_.begin(), witnessed_.end(), true),
                    propertyCount);
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - begin_).count();
  result_.stats.push_back({"closures", std::to_string(closuresRun())});
  result_.stats.push_back({"steps", std::to_string(stepsTaken())});
  result_.stats.push_back({"checks", std::to_string(checks_.size())});
  result_.stats.push_back({"time", fmt::format("{:.2f} s", seconds)});
  return result_;
}

} // namespace

WindowDecision decideWindow(const Machine &machine, const std::vector<bool> &inside,
                            const std::vector<int32_t> &hold) {
  const Properties &props = machine.properties();
  DKV_INVARIANT(props.symmetry() != nullptr, "the window argument decides device 0's checks");
  ClosureOptions options;
  Decider lower(machine, options, {Outside::Kind::Held, inside, hold});
  lower.run();
  Decider upper(machine, options, {Outside::Kind::Done, inside, hold});
  upper.run();
  const std::vector<Check> &l = lower.checks(), &u = upper.checks();
  DKV_INVARIANT(l.size() == u.size(), "both bounds plan the same checks");
  WindowDecision out;
  out.checks = static_cast<int64_t>(l.size());
  std::set<PropertyIndex> violated;
  for (size_t i = 0; i < l.size(); ++i) {
    const Obligation &ob = props.obligation(l[i].obligation);
    const Bounded b = bounded(l[i], u[i]);
    if (b == Bounded::Beyond) {
      if (out.decided) {
        out.decided = false;
        out.undecided =
            fmt::format("{} ({}): it involves a device outside the window",
                        props.property(ob.property).id, props.obligationText(l[i].obligation));
      }
    } else if (b == Bounded::Violated) {
      violated.insert(ob.property);
    } else if (b == Bounded::Open && out.decided) {
      out.decided = false;
      out.undecided = fmt::format("{} ({}): {}", props.property(ob.property).id,
                                  props.obligationText(l[i].obligation),
                                  !l[i].b ? "whether the other side can be under way there"
                                          : "whether the device gets there first");
    }
  }
  // Deadlock: device 0 (every device is its rotation) in the greatest state.
  const int32_t end = machine.eventCount(0);
  if (lower.deviceZeroAtEnd() < end) {
    if (upper.deviceZeroAtEnd() < end && upper.deviceZeroAtEnd() == lower.deviceZeroAtEnd()) {
      const ObligationIndex o = props.stuckAt(0, lower.deviceZeroAtEnd());
      DKV_INVARIANT(o >= 0, "a device that stops is at a wait or a barrier");
      violated.insert(props.obligation(o).property);
    } else if (out.decided) {
      out.decided = false;
      out.undecided = fmt::format("whether device 0 finishes (it gets to event {} with the "
                                  "devices outside held, to {} with them complete)",
                                  lower.deviceZeroAtEnd(), upper.deviceZeroAtEnd());
    }
  }
  out.violated.assign(violated.begin(), violated.end());
  return out;
}

int32_t firstBlocking(const Machine &machine, DeviceId d, int32_t from) {
  const std::vector<Event> &events = machine.program().processes[d].events;
  int32_t h = from;
  while (h < static_cast<int32_t>(events.size()) && machine.properties().stuckAt(d, h) < 0 &&
         !std::holds_alternative<DeviceBarrier>(events[h].kind))
    ++h;
  return h;
}

LockstepDecision decideLockstep(const Machine &machine,
                                const std::vector<std::vector<int32_t>> &steps, int32_t radius,
                                const std::function<bool()> &stop) {
  LockstepDecision out;
  const int32_t n = machine.deviceCount();
  DKV_INVARIANT(static_cast<int32_t>(steps.size()) == n && n > 0, "a step table per device");
  const int32_t grid = static_cast<int32_t>(steps[0].size()) - 1;
  Closure closure(machine);
  for (int32_t p = 0; p <= grid; ++p) {
    if (stop && stop()) {
      out.complete = false;
      out.failedStep = p;
      out.stopped = true;
      out.reason = "stopped";
      return out;
    }
    // U_p: the greatest state with every device before step p. By the induction (step p - 1
    // completed from U_{p-1}, and by the rotation on every device) each device gets there.
    // The run goes on from step p - 1's state, which is reachable below these caps: by
    // persistence the greedy run from it ends in the same greatest state.
    if (p == 0)
      closure.reset();
    for (DeviceId d = 0; d < n; ++d)
      closure.capDevice(d, steps[d][p]);
    closure.run();
    const ControlState &u = closure.state();
    for (DeviceId d = 0; d < n; ++d)
      if (u.pc[d] != steps[d][p]) {
        out.complete = false;
        out.failedStep = p;
        out.reason = fmt::format("device {} does not get to step {}", d, p);
        return out;
      }
    for (DmaId k = 0; k < machine.dmaCount(); ++k)
      if (machine.started(u, k) && u.landed[k] < machine.chunks(k)) {
        out.complete = false;
        out.failedStep = p;
        out.reason = fmt::format("a DMA started before step {} does not land by then", p);
        return out;
      }
    std::vector<int64_t> values;
    for (SemId sem = 0; sem < machine.semCount(); ++sem)
      values.push_back(machine.semValue(u, 0, sem));
    out.values.push_back(std::move(values));
    if (p == grid)
      break;
    // Step p from U_p, the devices outside the window held before they can block.
    for (DeviceId d = 0; d < n; ++d) {
      const bool inside = std::min(d, n - d) <= radius;
      closure.capDevice(d, inside
                               ? steps[d][p + 1]
                               : std::min(steps[d][p + 1], firstBlocking(machine, d, steps[d][p])));
    }
    closure.run();
    if (closure.state().pc[0] < steps[0][p + 1]) {
      out.complete = false;
      out.failedStep = p;
      out.reason = fmt::format("device 0 does not complete step {} with the devices farther than "
                               "{} held",
                               p, radius);
      return out;
    }
  }
  return out;
}

std::vector<int32_t> symmetryDistance(const Machine &machine) {
  const int32_t n = machine.deviceCount();
  const Symmetry *symmetry = machine.properties().symmetry();
  std::vector<int32_t> dist(n, -1);
  if (!symmetry)
    return dist;
  std::vector<DeviceId> queue;
  for (DeviceId d = 0; d < n; ++d)
    if (symmetry->representative[d]) {
      dist[d] = 0;
      queue.push_back(d);
    }
  // Breadth first over one rotation step either way.
  std::vector<std::vector<DeviceId>> inverse;
  for (const Rotation &r : symmetry->rotations) {
    std::vector<DeviceId> inv(n, 0);
    for (DeviceId d = 0; d < n; ++d)
      inv[r.device[d]] = d;
    inverse.push_back(std::move(inv));
  }
  for (size_t head = 0; head < queue.size(); ++head) {
    const DeviceId d = queue[head];
    for (size_t r = 0; r < symmetry->rotations.size(); ++r)
      for (DeviceId next : {symmetry->rotations[r].device[d], inverse[r][d]})
        if (dist[next] < 0) {
          dist[next] = dist[d] + 1;
          queue.push_back(next);
        }
  }
  return dist;
}

namespace {

/// The window-first decision of decideByClosure (docs/closure.md "Windows"): the checks
/// of the representatives decided with the devices farther than R rotation steps held
/// at their first blocking event (a cap set of the instance: a check that holds there
/// holds in the instance, and its witness is a run of the instance) and complete (an
/// over-approximation: a check that fails there fails in the instance), for R in
/// `radii`; the checks neither decides, and every deadlock, by the instance as it is.
EngineResult decideInWindows(const Machine &machine, const ClosureOptions &options,
                             const std::vector<int32_t> &distance) {
  const auto begin = Clock::now();
  const Properties &props = machine.properties();
  const int32_t n = machine.deviceCount();
  std::vector<char> remaining(props.obligations().size(), 1);
  std::vector<bool> witnessed(props.properties().size(), false);
  EngineResult out;
  int64_t closures = 0, steps = 0, checks = -1;
  std::string windows;
  auto left = [&] {
    ClosureOptions o = options;
    o.timeoutSeconds = std::max(
        0.0, options.timeoutSeconds - std::chrono::duration<double>(Clock::now() - begin).count());
    return o;
  };
  auto absorb = [&](const Decider &d, EngineResult &r) {
    for (Witness &w : r.witnesses)
      out.witnesses.push_back(std::move(w));
    closures += d.closuresRun();
    steps += d.stepsTaken();
    if (!r.complete && out.complete) {
      out.complete = false;
      out.reason = r.reason;
      // A phase's own limit is what was left of the engine's: name the engine's (the
      // run's stop request, when it was made, says what it says).
      if (!stopRequested(options.events) && r.reason.starts_with("time limit of"))
        out.reason = fmt::format(
            "time limit of {:g} s reached with {} of {} properties decided", options.timeoutSeconds,
            std::count(witnessed.begin(), witnessed.end(), true), witnessed.size());
    }
  };
  // A phase that made witnesses: what it witnessed, its result and its checks.
  auto finish = [&](const Decider &d, EngineResult r) {
    witnessed = d.witnessed();
    absorb(d, r);
    if (checks < 0)
      checks = static_cast<int64_t>(d.checks().size());
  };
  // A window's phase that did not finish (the time limit, a stop request): say so.
  auto stopped = [&](int32_t size) {
    if (out.complete)
      return false;
    windows += fmt::format("{}{} devices: stopped", windows.empty() ? "" : ", ", size);
    return true;
  };
  const int32_t farthest = *std::max_element(distance.begin(), distance.end());
  // Where each device outside a window is held: the same for every window.
  std::vector<int32_t> hold(n, 0);
  for (DeviceId d = 0; d < n; ++d)
    hold[d] = firstBlocking(machine, d);
  for (int32_t radius : options.windowRadii) {
    if (radius >= farthest || !out.complete)
      break;
    std::vector<bool> inside(n);
    int32_t size = 0;
    for (DeviceId d = 0; d < n; ++d) {
      inside[d] = distance[d] >= 0 && distance[d] <= radius;
      size += inside[d] ? 1 : 0;
    }
    const std::string origin =
        fmt::format("found in a window of {} of the {} devices (those within {} rotation "
                    "steps of device 0; the others held before their first wait or barrier)",
                    size, n, radius);
    const ClosureOptions lowerOptions = left();
    Decider lower(machine, lowerOptions, {Outside::Kind::Held, inside, hold});
    lower.restrict(remaining);
    lower.alreadyWitnessed(witnessed);
    lower.makeWitnesses(true);
    lower.origin(origin);
    finish(lower, lower.run());
    if (stopped(size))
      break;
    const ClosureOptions upperOptions = left();
    Decider upper(machine, upperOptions, {Outside::Kind::Done, inside, hold});
    upper.restrict(remaining);
    EngineResult u = upper.run();
    absorb(upper, u);
    if (stopped(size))
      break;
    const std::vector<Check> &lc = lower.checks(), &uc = upper.checks();
    DKV_INVARIANT(lc.size() == uc.size(), "both bounds plan the same checks");
    std::vector<char> next(remaining.size(), 0);
    int64_t decided = 0;
    for (size_t i = 0; i < lc.size(); ++i) {
      const Bounded b = bounded(lc[i], uc[i]);
      if (b == Bounded::Violated || b == Bounded::Holds)
        ++decided;
      else
        next[lc[i].obligation] = 1;
    }
    // A property witnessed needs no other check decided.
    for (size_t o = 0; o < next.size(); ++o)
      if (next[o] && witnessed[props.obligation(static_cast<ObligationIndex>(o)).property])
        next[o] = 0;
    windows += fmt::format("{}{} devices: {} of {} checks", windows.empty() ? "" : ", ", size,
                           decided, lc.size());
    remaining = std::move(next);
    if (std::find(remaining.begin(), remaining.end(), 1) == remaining.end())
      break;
  }
  if (out.complete) {
    // What the windows left, and every deadlock: the instance as it is.
    const ClosureOptions wholeOptions = left();
    Decider whole(machine, wholeOptions);
    whole.restrict(remaining);
    whole.alreadyWitnessed(witnessed);
    finish(whole, whole.run());
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - begin).count();
  out.stats.push_back({"closures", std::to_string(closures)});
  out.stats.push_back({"steps", std::to_string(steps)});
  out.stats.push_back({"checks", std::to_string(checks)});
  out.stats.push_back({"window", windows.empty() ? "none" : windows});
  out.stats.push_back({"time", fmt::format("{:.2f} s", seconds)});
  return out;
}

} // namespace

EngineResult decideByClosure(const Machine &machine, const ClosureOptions &options) {
  try {
    const bool symmetric = machine.properties().symmetry() != nullptr;
    const bool windowed = symmetric && options.only < 0 &&
                          (options.window == ClosureOptions::Window::On ||
                           (options.window == ClosureOptions::Window::Auto &&
                            machine.deviceCount() >= ClosureOptions::kWindowFrom));
    if (windowed)
      return decideInWindows(machine, options, symmetryDistance(machine));
    Decider decider(machine, options);
    return decider.run();
  } catch (const std::bad_alloc &) {
    EngineResult result;
    result.complete = false;
    result.reason = "out of memory";
    return result;
  }
}

int32_t stepOfEvent(const std::vector<int32_t> &starts, int32_t pc) {
  const int32_t grid = static_cast<int32_t>(starts.size()) - 1;
  int32_t p = static_cast<int32_t>(std::upper_bound(starts.begin(), starts.end() - 1, pc) -
                                   starts.begin()) -
              1;
  return std::clamp(p, 0, grid - 1);
}

namespace {

/// One access of device 0's event: where, which buffer region, whether it writes.
struct Access {
  int32_t access = -1;
  DeviceId device = 0;
  const Region *region = nullptr;
  bool write = false;
  DmaId own = -1; ///< the DMA the event starts (not raced against itself)
};

std::vector<Access> accessesOf(const Program &program, const Event &event) {
  std::vector<Access> out;
  if (const auto *store = std::get_if<Store>(&event.kind)) {
    out.push_back({-1, 0, &store->dst, true});
    for (size_t i = 0; i < store->reads.size(); ++i)
      out.push_back({static_cast<int32_t>(i), 0, &store->reads[i], false});
  } else if (const auto *start = std::get_if<DmaStart>(&event.kind)) {
    const Dma &dma = program.dmas[start->dma];
    out.push_back({0, dma.issuer, &dma.src, false, start->dma});
    out.push_back({1, dma.target, &dma.dst, true, start->dma});
  }
  return out;
}

} // namespace

BoxDecision decideBoxes(const Machine &machine, const BoxInput &input) {
  BoxDecision out;
  const Program &program = machine.program();
  const std::vector<std::vector<int32_t>> &steps = *input.steps;
  const int32_t n = machine.deviceCount();
  DKV_INVARIANT(static_cast<int32_t>(steps.size()) == n && n > 0, "a step table per device");
  const int32_t grid = static_cast<int32_t>(steps[0].size()) - 1;
  const int32_t q = input.depth;
  auto dist = [&](DeviceId d) { return std::min(d, n - d); };
  auto inside = [&](DeviceId d) { return dist(d) <= input.radius; };
  auto near = [&](DeviceId d) { return dist(d) <= input.reach; };
  auto boxEnd = [&](DeviceId d, int32_t s) { return steps[d][std::min(grid, s + q + 1)]; };
  const Properties &props = machine.properties();
  const int32_t dmas = machine.dmaCount();
  out.dmaStep.assign(dmas, -1);
  for (DmaId k = 0; k < dmas; ++k)
    if (const int32_t start = props.startPc(k); start >= 0)
      out.dmaStep[k] = stepOfEvent(steps[program.dmas[k].issuer], start);
  out.dmaBehindLand.assign(dmas, -1);
  out.dmaBehindSend.assign(dmas, -1);
  out.ahead.assign(grid, std::vector<char>(n, 1));
  out.behind.assign(grid, std::vector<char>(n, 1));

  Closure closure(machine);
  std::vector<int32_t> tokens(grid);
  auto start = [&](int32_t s) {
    if (closure.hasBase(&tokens[s])) {
      closure.restoreBase();
      return;
    }
    closure.reset();
    for (DeviceId d = 0; d < n; ++d)
      closure.limitDevice(d, inside(d) ? boxEnd(d, s) : 0);
    closure.saveBase(&tokens[s]);
  };
  auto run = [&] {
    closure.run();
    ++out.closures;
  };
  // From box s, DMA k's lands (or sends) held before its last chunk: the side left open.
  auto runOpen = [&](int32_t s, DmaId k, bool land) {
    start(s);
    if (land)
      closure.capLands(k, machine.chunks(k) - 1);
    else
      closure.capSends(k, machine.chunks(k) - 1);
    run();
  };
  // Places and devices as the verdict names them: a source line, an offset from device 0.
  auto line = [&](const SourceLoc &at) {
    return fmt::format("line {}, column {}", at.line, at.col);
  };
  auto away = [&](DeviceId d) { return d <= n / 2 ? d : d - n; };
  auto dmaText = [&](DmaId k) {
    const Dma &dma = program.dmas[k];
    return dma.issuer == 0 ? fmt::format("device 0's DMA made at line {}", dma.descriptorLoc.line)
                           : fmt::format("the DMA made at line {} by the device {} away",
                                         dma.descriptorLoc.line, away(dma.issuer));
  };
  auto fail = [&](std::string what) {
    if (out.complete) {
      out.complete = false;
      out.open = std::move(what);
    }
  };

  // Device 0's entry and exit.
  const std::vector<Event> &zero = program.processes[0].events;
  int32_t enterPc = -1, exitPc = -1;
  for (int32_t pc = 0; pc < static_cast<int32_t>(zero.size()); ++pc) {
    if (std::holds_alternative<KernelEnter>(zero[pc].kind) && enterPc < 0)
      enterPc = pc;
    if (std::holds_alternative<KernelExit>(zero[pc].kind))
      exitPc = pc;
  }

  for (int32_t s = 0; s < grid; ++s) {
    if (input.stop && input.stop()) {
      out.complete = false;
      out.stopped = true;
      out.open = "stopped";
      return out;
    }
    const bool last = s + q + 1 >= grid; // nothing after the box: the facts hold vacuously
    // ahead[s]: device 0 at most to the end of step s.
    if (!last) {
      start(s);
      closure.capDevice(0, steps[0][s + 1]);
      run();
      for (DeviceId d = 1; d < n; ++d)
        if (near(d))
          out.ahead[s][d] = closure.state().pc[d] < boxEnd(d, s);
      for (DeviceId d = 1; d < n; ++d)
        if (near(d)) {
          start(s);
          closure.capDevice(d, steps[d][s + 1]);
          run();
          out.behind[s][d] = closure.state().pc[0] < boxEnd(0, s);
        }
    }
    for (DmaId k = 0; k < dmas; ++k) {
      if (out.dmaStep[k] != s || !near(program.dmas[k].issuer))
        continue;
      if (last) {
        out.dmaBehindLand[k] = out.dmaBehindSend[k] = 1;
        continue;
      }
      for (bool land : {true, false}) {
        runOpen(s, k, land);
        (land ? out.dmaBehindLand : out.dmaBehindSend)[k] =
            closure.state().pc[0] < boxEnd(0, s) ? 1 : 0;
      }
    }

    // The race pairs of device 0's accesses in step s; the near ones decided in box s.
    std::map<std::pair<DmaId, bool>, int32_t> reached; // (A): how far device 0 gets
    std::map<int32_t, std::vector<int32_t>> capped;    // (B): the pcs with device 0 at pc
    for (int32_t pc = steps[0][s]; pc < steps[0][s + 1]; ++pc)
      for (const Access &a : accessesOf(program, zero[pc]))
        for (DmaId k = 0; k < dmas; ++k) {
          const Dma &dma = program.dmas[k];
          if (k == a.own || out.dmaStep[k] < 0)
            continue;
          for (bool dst : {false, true}) {
            const DeviceId where = dst ? dma.target : dma.issuer;
            const Region &side = dst ? dma.dst : dma.src;
            if (where != a.device || side.buffer != a.region->buffer || !(dst || a.write))
              continue;
            if (!near(dma.issuer)) {
              fail(fmt::format("{} reaches a region device 0 accesses from beyond the window",
                               dmaText(k)));
              continue;
            }
            const int32_t t = out.dmaStep[k];
            out.pairs.push_back({pc, a.access, k, dst, s, t});
            if (std::abs(t - s) > q || !input.mayOverlap(pc, a.access, k, dst))
              continue;
            ++out.checks;
            auto [it, fresh] = reached.emplace(std::pair{k, dst}, 0);
            if (fresh) {
              runOpen(s, k, dst);
              it->second = closure.state().pc[0];
            }
            auto [jt, fresh2] = capped.emplace(pc, std::vector<int32_t>{});
            if (fresh2) {
              start(s);
              closure.capDevice(0, pc);
              run();
              jt->second = closure.state().pc;
            }
            const bool a1 = it->second >= pc;
            const bool b1 = jt->second[dma.issuer] > props.startPc(k);
            if (a1 && b1)
              fail(fmt::format("the access at {} (step {}) and {} (step {}) are not ordered in the "
                               "box of step {}",
                               line(zero[pc].loc), s, dmaText(k), t, s));
          }
        }
  }

  // Exits, lands and signals: near ones in the first and last boxes, far ones by the facts.
  // Before device 0 enters, which devices get past step `depth` (the far lands and signals
  // that could reach it then).
  std::vector<char> entryAhead(n, 1);
  if (enterPc >= 0 && q + 1 < grid) {
    start(0);
    closure.capDevice(0, enterPc);
    run();
    for (DeviceId d = 1; d < n; ++d)
      if (near(d))
        entryAhead[d] = closure.state().pc[d] < boxEnd(d, 0);
  }
  for (DmaId k = 0; k < dmas && exitPc >= 0; ++k) {
    const Dma &dma = program.dmas[k];
    const int32_t t = out.dmaStep[k];
    if (t < 0 || (dma.issuer != 0 && dma.target != 0))
      continue;
    ++out.checks;
    if (!near(dma.issuer)) {
      fail(fmt::format("{} reaches device 0 from beyond the window", dmaText(k)));
      continue;
    }
    // Its side on device 0 open at device 0's exit (the source of a DMA device 0 issues, the
    // destination of one it receives), or landing after it.
    for (bool land : {false, true}) {
      if ((land ? dma.target : dma.issuer) != 0)
        continue;
      if (t < grid - 1 - q) {
        if ((land ? out.dmaBehindLand : out.dmaBehindSend)[k] != 1)
          fail(fmt::format("{} (step {}) may still be {} when device 0 has passed {} more "
                           "steps",
                           dmaText(k), t, land ? "landing" : "sending", q));
        continue;
      }
      runOpen(grid - 1, k, land);
      if (closure.state().pc[0] >= exitPc)
        fail(fmt::format("{} (step {}) may be {} at device 0's exit", dmaText(k), t,
                         land ? "landing" : "sending"));
    }
    // Landing before device 0 has entered.
    if (dma.target == 0 && enterPc >= 0) {
      if (t > q) {
        if (!entryAhead[dma.issuer])
          fail(fmt::format("{} (step {}) may land before device 0 enters", dmaText(k), t));
      } else {
        start(0);
        closure.capDevice(0, enterPc);
        run();
        if (closure.state().landed[k] > 0)
          fail(fmt::format("{} (step {}) may land before device 0 enters", dmaText(k), t));
      }
    }
  }
  for (DeviceId c = 0; c < n && exitPc >= 0; ++c) {
    const std::vector<Event> &events = program.processes[c].events;
    for (int32_t pc = 0; pc < static_cast<int32_t>(events.size()); ++pc) {
      const auto *sig = std::get_if<Signal>(&events[pc].kind);
      // A barrier semaphore is valid everywhere at all times (Properties).
      if (!sig || sig->target != 0 || program.isBarrier(sig->sem))
        continue;
      ++out.checks;
      if (!near(c)) {
        fail(fmt::format("the device {} away signals device 0 from beyond the window", away(c)));
        continue;
      }
      const int32_t t = stepOfEvent(steps[c], pc);
      if (enterPc >= 0) {
        if (t > q) {
          if (c != 0 && !entryAhead[c])
            fail(fmt::format("the signal at {} of the device {} away (step {}) may reach device 0 "
                             "before it enters",
                             line(events[pc].loc), away(c), t));
        } else {
          start(0);
          closure.capDevice(0, enterPc);
          run();
          if (closure.state().pc[c] > pc)
            fail(fmt::format("the signal at {} of the device {} away (step {}) may reach device 0 "
                             "before it enters",
                             line(events[pc].loc), away(c), t));
        }
      }
      if (t < grid - 1 - q) {
        if (c != 0 && !out.behind[t][c])
          fail(fmt::format("the signal at {} of the device {} away (step {}) may reach device 0 "
                           "after it exits",
                           line(events[pc].loc), away(c), t));
      } else {
        start(grid - 1);
        closure.capDevice(c, pc);
        run();
        if (closure.state().pc[0] > exitPc)
          fail(fmt::format("the signal at {} of the device {} away (step {}) may reach device 0 "
                           "after it exits",
                           line(events[pc].loc), away(c), t));
      }
    }
  }
  return out;
}

} // namespace dkv::semantics
