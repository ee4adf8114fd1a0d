// The static must-happen-before relation of one instance (semantics/MustOrder.h).
#include "semantics/MustOrder.h"

#include "support/IntArith.h"
#include "support/Overloaded.h"

#include <algorithm>
#include <limits>

namespace dkv::semantics {

using namespace model;

using support::saturatingAdd;

MustOrder::MustOrder(const Properties &properties, const support::StopToken *stop)
    : stop_(stop), props_(properties), program_(properties.program()),
      semCount_(program_.semaphores.size()) {
  const auto n = static_cast<DeviceId>(program_.processes.size());
  auto addStep = [&](report::ScheduleStep step) {
    steps_.push_back(step);
    return static_cast<int32_t>(steps_.size()) - 1;
  };
  eventStep_.resize(n);
  for (DeviceId d = 0; d < n; ++d)
    for (size_t i = 0; i < program_.processes[d].events.size(); ++i)
      eventStep_[d].push_back(addStep({report::ScheduleStep::Kind::Device, d}));
  sendStep_.resize(program_.dmas.size());
  landStep_.resize(program_.dmas.size());
  for (const Dma &dma : program_.dmas) {
    if (props_.startPc(dma.id) < 0)
      continue;
    // As semantics::Machine::chunks: at least one.
    const auto chunks = static_cast<size_t>(dma.chunks());
    for (size_t c = 0; c < chunks; ++c) {
      sendStep_[dma.id].push_back(addStep({report::ScheduleStep::Kind::Send, dma.id}));
      landStep_[dma.id].push_back(addStep({report::ScheduleStep::Kind::Land, dma.id}));
    }
  }

  // The increments as steps (a never-started DMA adds nothing: it has no step).
  std::vector<std::vector<model::Increment>> incs = program_.increments();
  increments_.resize(incs.size());
  for (size_t key = 0; key < incs.size(); ++key)
    for (const model::Increment &inc : incs[key]) {
      if (inc.units <= 0)
        continue;
      using Source = model::Increment::Source;
      const std::vector<int32_t> &side = inc.source == Source::Send   ? sendStep_[inc.who]
                                         : inc.source == Source::Land ? landStep_[inc.who]
                                                                      : eventStep_[inc.who];
      if (static_cast<size_t>(inc.index) < side.size())
        increments_[key].push_back({side[inc.index], inc.units});
    }
  for (DeviceId e = 0; e < n; ++e) {
    std::vector<int64_t> running(semCount_, 0);
    const std::vector<Event> &events = program_.processes[e].events;
    for (size_t i = 0; i < events.size(); ++i) {
      const auto *w = std::get_if<SemWait>(&events[i].kind);
      if (!w)
        continue;
      running[w->sem] += w->amount;
      if (w->amount > 0) // a zero wait never blocks (and is implied by earlier ones)
        waits_.push_back({e, w->sem, eventStep_[e][i], running[w->sem]});
    }
  }

  // The base edges.
  for (DeviceId d = 0; d < n; ++d)
    for (size_t i = 1; i < eventStep_[d].size(); ++i)
      orderEdges_.emplace_back(eventStep_[d][i - 1], eventStep_[d][i]);
  for (const Dma &dma : program_.dmas) {
    const DmaId k = dma.id;
    if (sendStep_[k].empty())
      continue;
    const int32_t start = eventStep_[dma.issuer][props_.startPc(k)];
    for (size_t c = 0; c < sendStep_[k].size(); ++c) {
      orderEdges_.emplace_back(c == 0 ? start : sendStep_[k][c - 1], sendStep_[k][c]);
      orderEdges_.emplace_back(sendStep_[k][c], landStep_[k][c]);
      if (c > 0)
        orderEdges_.emplace_back(landStep_[k][c - 1], landStep_[k][c]);
    }
    if (const DmaId j = props_.linkPredecessor(k); j >= 0 && !landStep_[j].empty())
      orderEdges_.emplace_back(landStep_[j].back(), landStep_[k][0]);
  }
  const size_t steps = steps_.size();
  preds_.assign(steps, {});
  for (const auto &[before, after] : orderEdges_)
    preds_[after].push_back(before);
  const std::vector<std::vector<int32_t>> &barrierPc = props_.barrierPcs();
  for (DeviceId e = 0; e < n; ++e)
    for (size_t j = 0; j < program_.processes[e].events.size(); ++j) {
      const auto *b = std::get_if<DeviceBarrier>(&program_.processes[e].events[j].kind);
      if (!b || b->invocation < 0 || barrierPc.empty() ||
          static_cast<size_t>(b->invocation) >= barrierPc[0].size())
        continue;
      for (DeviceId f = 0; f < n; ++f) {
        const int32_t at = barrierPc[f][b->invocation];
        if (at > 0 && !(f == e && at - 1 >= static_cast<int32_t>(j)))
          preds_[eventStep_[e][j]].push_back(eventStep_[f][at - 1]);
      }
    }
  succs_.assign(steps, {});
  for (size_t s = 0; s < steps; ++s)
    for (int32_t p : preds_[s])
      succs_[p].push_back(static_cast<int32_t>(s));
  stepIncrement_.assign(steps, {-1, 0});
  supplyTotal_.assign(increments_.size(), 0);
  for (size_t key = 0; key < increments_.size(); ++key)
    for (const Increment &inc : increments_[key]) {
      stepIncrement_[inc.step] = {static_cast<int32_t>(key), inc.units};
      supplyTotal_[key] = saturatingAdd(supplyTotal_[key], inc.units);
    }
  waitsByNeed_.assign(increments_.size(), {});
  for (const Wait &w : waits_)
    waitsByNeed_[static_cast<size_t>(w.device) * semCount_ + w.sem].push_back(&w);
  for (std::vector<const Wait *> &ws : waitsByNeed_)
    std::stable_sort(ws.begin(), ws.end(),
                     [](const Wait *a, const Wait *b) { return a->need > b->need; });
}

int64_t MustOrder::waitsBefore(DeviceId d, int32_t pc, SemId s) const {
  int64_t total = 0;
  const std::vector<Event> &events = program_.processes[d].events;
  for (int32_t i = 0; i < pc && i < static_cast<int32_t>(events.size()); ++i)
    if (const auto *w = std::get_if<SemWait>(&events[i].kind))
      if (w->sem == s)
        total += w->amount;
  return total;
}

bool MustOrder::anyDead() const {
  return std::find(dead_.begin(), dead_.end(), true) != dead_.end();
}

// The static must-happen-before relation: an edge a -> b says "in every run prefix,
// if b ran then a ran before it" (x(b) => x(a) and p(a) < p(b) follows from the
// constraints). Edges: program order, a DMA's chunk order, the events before every
// device's barrier -> each barrier event, and from semaphores: for a wait w with
// need W, the increments that can precede w are those not after it (not w ->+ j)
// and not dead; if they sum to A and A - units(j) < W, j must run before w (without
// j the units before w cannot reach W). New edges can exclude more increments, so the
// semaphore rule runs to a fixpoint. Steps on a cycle of edges, and steps after them,
// can never run (dead). The SMT encoder uses it to leave out obligations that can never be violated
// (neverViolated) and, for the derived semaphore edges, as redundant constraints
// that spare the solver rediscovering them in every query. The relation is kept as
// one bitset per step, so it is skipped for very large instances.
void MustOrder::close() {
  const size_t n = steps_.size();
  if (n == 0 || n > static_cast<size_t>(kMaxClosedSteps))
    return;
  std::vector<std::vector<bool>> known(waits_.size());
  for (int round = 0; round < 64; ++round) {
    if (support::stopRequested(stop_))
      return;
    closeTransitively();
    bool added = false;
    for (size_t wi = 0; wi < waits_.size(); ++wi) {
      const Wait &w = waits_[wi];
      if (dead_[w.step])
        continue;
      const std::vector<Increment> &incs = increments(w.device, w.sem);
      known[wi].resize(incs.size(), false);
      int64_t available = 0;
      for (const Increment &inc : incs)
        if (!dead_[inc.step] && !mustPrecede(w.step, inc.step))
          available += inc.units;
      for (size_t j = 0; j < incs.size(); ++j) {
        const Increment &inc = incs[j];
        if (known[wi][j] || dead_[inc.step] || mustPrecede(w.step, inc.step) ||
            available - inc.units >= w.need)
          continue;
        known[wi][j] = true;
        if (!mustPrecede(inc.step, w.step)) {
          preds_[w.step].push_back(inc.step);
          added = true;
        }
        semEdges_.push_back({inc.step, w.step});
      }
    }
    if (!added)
      break;
  }
  closeTransitively();
}

// ExitSemaphore at (d, pc) on s: when d is next at pc, the increments of (d, s) that
// must precede d's event pc - 1 have all run, and none that must come after event pc
// (or is dead) has. If those two sums are equal (every increment that can have run
// must have) and equal the amounts of d's waits on s before pc, the value is 0.
bool MustOrder::exitSemaphoreZero(const Obligation &o) const {
  if (reach_.empty() || o.pc < 1)
    return false;
  const int32_t before = eventStep_[o.device][o.pc - 1], self = eventStep_[o.device][o.pc];
  int64_t must = 0, can = 0;
  for (const Increment &inc : increments(o.device, o.sem)) {
    if (mustPrecede(inc.step, before))
      must += inc.units;
    if (!dead_[inc.step] && !mustPrecede(self, inc.step))
      can += inc.units;
  }
  return must == can && must == waitsBefore(o.device, o.pc, o.sem);
}

// No run deadlocks if no step is dead and every wait's need is covered by increments
// that must precede it. Proof: in a state with no enabled step, take a device that
// has not finished; it is at a wait or a barrier b that is not enabled, and b has a
// must-predecessor that has not run (a wait: otherwise the increments that must
// precede it, all run, would give it its need; a barrier: an event before some
// device's barrier). Follow must-predecessors that have not run: a device event
// that has not run has its device at it or at an earlier (must-preceding) event that
// is blocked, so again a wait or a barrier with a must-predecessor that has not run;
// a DMA chunk that has not run has a must-predecessor (its start, the previous chunk,
// its send) that has not run, else it would be enabled. Each step of this walk goes
// to a strict predecessor in the must relation, which has no cycle (no dead step), so
// the walk cannot go on forever: no such state exists.
bool MustOrder::deadlockFree() const {
  if (reach_.empty() || std::find(dead_.begin(), dead_.end(), true) != dead_.end())
    return false;
  for (const Wait &w : waits_) {
    int64_t covered = 0;
    for (const Increment &inc : increments(w.device, w.sem))
      if (mustPrecede(inc.step, w.step))
        covered += inc.units;
    if (covered < w.need)
      return false;
  }
  return true;
}

// Transitive closure of preds_ over its strongly connected components (Tarjan),
// in topological order; a step on a cycle, or after a dead step, is dead.
void MustOrder::closeTransitively() {
  const int32_t n = static_cast<int32_t>(steps_.size());
  words_ = (static_cast<size_t>(n) + 63) / 64;
  reach_.assign(static_cast<size_t>(n) * words_, 0);
  dead_.assign(n, false);
  // Tarjan on the predecessor graph: components come out with every predecessor
  // component first, which is the order the closure needs.
  std::vector<int32_t> index(n, -1), low(n, 0), stack, component(n, -1);
  std::vector<bool> onStack(n, false);
  std::vector<std::vector<int32_t>> components;
  int32_t counter = 0;
  std::vector<std::pair<int32_t, size_t>> frames;
  for (int32_t root = 0; root < n; ++root) {
    if (index[root] >= 0)
      continue;
    frames.push_back({root, 0});
    index[root] = low[root] = counter++;
    stack.push_back(root);
    onStack[root] = true;
    while (!frames.empty()) {
      auto &[v, next] = frames.back();
      if (next < preds_[v].size()) {
        const int32_t w = preds_[v][next++];
        if (index[w] < 0) {
          index[w] = low[w] = counter++;
          stack.push_back(w);
          onStack[w] = true;
          frames.push_back({w, 0});
        } else if (onStack[w]) {
          low[v] = std::min(low[v], index[w]);
        }
        continue;
      }
      const int32_t done = v;
      frames.pop_back();
      if (!frames.empty())
        low[frames.back().first] = std::min(low[frames.back().first], low[done]);
      if (low[done] == index[done]) {
        std::vector<int32_t> members;
        int32_t w;
        do {
          w = stack.back();
          stack.pop_back();
          onStack[w] = false;
          component[w] = static_cast<int32_t>(components.size());
          members.push_back(w);
        } while (w != done);
        components.push_back(std::move(members));
      }
    }
  }
  for (const std::vector<int32_t> &members : components) {
    bool cyclic = members.size() > 1;
    std::vector<uint64_t> row(words_, 0);
    bool deadIn = false;
    for (int32_t v : members)
      for (int32_t a : preds_[v]) {
        if (a == v)
          cyclic = true;
        if (component[a] == component[v])
          continue;
        const uint64_t *from = &reach_[static_cast<size_t>(a) * words_];
        for (size_t i = 0; i < words_; ++i)
          row[i] |= from[i];
        row[a / 64] |= uint64_t{1} << (a % 64);
        deadIn = deadIn || dead_[a];
      }
    if (cyclic)
      for (int32_t v : members)
        row[v / 64] |= uint64_t{1} << (v % 64);
    for (int32_t v : members) {
      std::copy(row.begin(), row.end(), reach_.begin() + static_cast<std::ptrdiff_t>(v * words_));
      dead_[v] = cyclic || deadIn;
    }
  }
}

// An obligation "the access (d, pc) runs while DMA k's side is open" (its predicate:
// a race, or an exit with k's side open) is never violated when the static relation orders them:
// k's last chunk of that side must run before d's event pc - 1 (so it has run when d
// is at pc), or k's start must come after d's event pc (so k has not started while d
// is at pc), or d can never reach pc.
bool MustOrder::neverViolated(const Obligation &o) const {
  if (reach_.empty())
    return false;
  // Its predicate is "a side of DMA k is open" (semantics/Obligations.h).
  const Predicate predicate = violation(o);
  if (predicate.all.size() != 1 || predicate.all[0].negated ||
      predicate.all[0].fact.kind != Fact::Kind::SideOpen)
    return false;
  const bool dst = predicate.all[0].fact.dst;
  const std::vector<int32_t> &side = dst ? landStep_[o.dma] : sendStep_[o.dma];
  if (side.empty())
    return true; // never started: never open
  if (o.pc > 0) {
    const int32_t before = eventStep_[o.device][o.pc - 1];
    if (dead_[before] || mustPrecede(side.back(), before))
      return true;
  }
  const int32_t start = eventStep_[program_.dmas[o.dma].issuer][props_.startPc(o.dma)];
  return mustPrecede(eventStep_[o.device][o.pc], start);
}

// after(source): the least set A of steps that cannot run before the source, and its
// per-device thresholds. Sound by induction over the rounds: assume that in every run no
// step of A runs before the source (true at the start: the source's own steps, which
// are the source itself, or the source's chunk and, through the base edges, its later
// chunks and the land chunks they enable). A step whose base predecessor is in A needs
// that predecessor first (program order, a DMA's order, a device barrier that opens only
// when every device has reached it), so it joins A. Before the source runs, the units
// added to (f, x) come only from increments outside A, and only f's own waits take
// units away; so when the increments of (f, x) outside A sum to less than the need W of
// a wait of f on x, f cannot pass that wait before the source: it joins A. Each round
// keeps the assumption true and A only grows; the loop stops when a round adds nothing.
// A is closed under program order, so its events of device f are a suffix of f's events,
// from the threshold on.
std::vector<int32_t> MustOrder::after(const OrderSource &source) const {
  // One pass over a worklist: a step joins A once (hold); its base successors follow it,
  // and the units it would add leave its key's supply, which holds every wait of that key
  // whose need the supply no longer covers (the key's waits by need, largest first, so
  // those are a prefix). This is the least fixpoint of the rounds above, in time linear
  // in the steps and edges.
  std::vector<char> held(steps_.size(), 0);
  std::vector<int64_t> supply = supplyTotal_;
  std::vector<size_t> next(waitsByNeed_.size(), 0); ///< per key: its waits held so far
  std::vector<int32_t> work;
  auto hold = [&](int32_t s) {
    if (!held[s]) {
      held[s] = 1;
      work.push_back(s);
    }
  };
  switch (source.kind) {
  case OrderSource::Kind::Event:
    if (static_cast<size_t>(source.pc) < eventStep_[source.device].size())
      hold(eventStep_[source.device][source.pc]);
    break;
  case OrderSource::Kind::Send:
    if (static_cast<size_t>(source.chunk) < sendStep_[source.dma].size())
      hold(sendStep_[source.dma][source.chunk]);
    break;
  case OrderSource::Kind::Land:
    if (static_cast<size_t>(source.chunk) < landStep_[source.dma].size())
      hold(landStep_[source.dma][source.chunk]);
    break;
  }
  // The waits of a key that its supply does not cover (at first: those that even every
  // increment cannot pass, which nothing runs before). A saturated total stays so: it
  // covers every need.
  auto uncovered = [&](size_t key) {
    const std::vector<const Wait *> &ws = waitsByNeed_[key];
    for (size_t &i = next[key]; i < ws.size() && ws[i]->need > supply[key]; ++i)
      hold(ws[i]->step);
  };
  for (size_t key = 0; key < waitsByNeed_.size(); ++key)
    uncovered(key);
  while (!work.empty()) {
    const int32_t s = work.back();
    work.pop_back();
    for (int32_t t : succs_[s])
      hold(t);
    const auto [key, units] = stepIncrement_[s];
    if (key < 0 || supply[key] == std::numeric_limits<int64_t>::max())
      continue;
    supply[key] -= units;
    uncovered(static_cast<size_t>(key));
  }
  std::vector<int32_t> h(eventStep_.size());
  for (size_t f = 0; f < eventStep_.size(); ++f) {
    const std::vector<int32_t> &events = eventStep_[f];
    h[f] = static_cast<int32_t>(events.size());
    while (h[f] > 0 && held[events[h[f] - 1]])
      --h[f];
  }
  return h;
}

bool MustOrder::before(DeviceId e, int32_t pc, DeviceId d, int32_t at) const {
  auto key = std::make_pair(e, pc);
  auto it = eventCache_.find(key);
  if (it == eventCache_.end())
    it = eventCache_.emplace(key, after({OrderSource::Kind::Event, e, pc, 0, 0})).first;
  return it->second[d] <= at;
}

} // namespace dkv::semantics
