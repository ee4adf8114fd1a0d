// The partial-order encoding of docs/smt.md: every step of docs/model.md section 3
// (device events, DMA send and land chunks) gets a Boolean "executed" and a real
// position; the executed steps ordered by position are a run prefix exactly when the
// constraints below hold.
#include "smt/Encoding.h"

#include "semantics/Obligations.h"

#include "support/Invariant.h"
#include "support/Overloaded.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <numeric>
#include <tuple>

namespace dkv::smt {

using namespace model;
using report::ScheduleStep;
using semantics::ObligationIndex;
using semantics::PropertyIndex;

// What the encoding needs of each kind of event: every kind is listed, so a new kind of
// event does not compile until the encoder says what it does with it.
Encoder::EventRole Encoder::roleOf(const model::Event &event) {
  EventRole role;
  std::visit(support::Overloaded{
                 [&](const SemWait &w) { role.wait = &w; },      // blocks; takes units
                 [&](const Signal &sig) { role.signal = &sig; }, // adds units
                 [&](const DeviceBarrier &b) { role.barrier = &b; },
                 // Ordered by program order only; what they change is read through
                 // the properties (a DMA's start pc, where and pos, the race checks).
                 [](const KernelEnter &) {},
                 [](const KernelExit &) {},
                 [](const ScopeEnter &) {},
                 [](const ScopeExit &) {},
                 [](const Store &) {},
                 [](const DmaStart &) {},
                 [](const SemRead &) {},
             },
             event.kind);
  return role;
}

Encoder::Encoder(z3::context &ctx, const semantics::Machine &machine, bool analyse,
                 const support::StopToken *stop)
    : stop_(stop), ctx_(ctx), m_(machine), program_(machine.program()),
      props_(machine.properties()), order_(machine.properties(), stop), base_(ctx) {
  const int32_t n = m_.deviceCount();
  const int32_t semCount = m_.semCount();
  // The steps, numbered by semantics::MustOrder: a Boolean and a position each.
  std::vector<int32_t> nextPc(n, 0), nextChunk(m_.dmaCount(), 0);
  for (int32_t i = 0; i < order_.stepCount(); ++i) {
    const ScheduleStep &step = order_.step(i);
    std::string name;
    bool wait = false;
    if (step.kind == ScheduleStep::Kind::Device) {
      const int32_t pc = nextPc[step.id]++;
      wait = roleOf(program_.processes[step.id].events[pc]).wait != nullptr;
      name = fmt::format("d{}_{}", step.id, pc);
    } else if (step.kind == ScheduleStep::Kind::Send) {
      name = fmt::format("s{}_{}", step.id, nextChunk[step.id]);
    } else {
      name = fmt::format("l{}_{}", step.id, nextChunk[step.id]++);
    }
    steps_.push_back({step, wait, ctx_.bool_const(("x_" + name).c_str()),
                      ctx_.real_const(("p_" + name).c_str())});
  }
  checks_.resize(props_.properties().size());

  // Every wait with a positive amount, with W and whether its semaphore has one ordered
  // source of increments (counting form).
  for (const semantics::MustOrder::Wait &w : order_.waits()) {
    const std::vector<Increment> &incs = order_.increments(w.device, w.sem);
    bool chain = true;
    for (const Increment &inc : incs) {
      const ScheduleStep &a = steps_[incs.front().step].step, &b = steps_[inc.step].step;
      chain = chain && a.kind == b.kind && a.id == b.id;
    }
    waits_.push_back({w.device, w.sem, w.step, w.need, chain});
  }
  // The form of each (device, semaphore) pair with waits, by semaphore then device:
  // counting when its waits have one ordered source (the same for all of them).
  for (SemId sem = 0; sem < semCount; ++sem)
    for (DeviceId e = 0; e < n; ++e) {
      const auto first = std::find_if(waits_.begin(), waits_.end(), [&](const WaitInfo &w) {
        return w.device == e && w.sem == sem;
      });
      if (first == waits_.end())
        continue;
      report::SemaphoreForm form{program_.semName(sem), e, first->chain, {}};
      for (const Increment &inc : order_.increments(e, sem)) {
        std::string source = sourceName(steps_[inc.step].step);
        if (std::find(form.sources.begin(), form.sources.end(), source) == form.sources.end())
          form.sources.push_back(std::move(source));
      }
      forms_.push_back(std::move(form));
    }

  if (analyse && !support::stopRequested(stop_)) {
    order_.close();
    derivedEdges_ = static_cast<int64_t>(order_.semaphoreEdges().size());
    deadlockFree_ = order_.deadlockFree();
  }
  if (support::stopRequested(stop_))
    return;
  note("program order, and each DMA's chunks after its start and in order");
  encodeOrder();
  if (!support::stopRequested(stop_))
    encodeBarriers();
  if (!support::stopRequested(stop_))
    encodeSemaphores();
}

void Encoder::note(std::string text) {
  notes_.resize(base_.size() + 1);
  std::string &slot = notes_[base_.size()];
  slot += (slot.empty() ? "" : "\n") + text;
}

std::string Encoder::sourceName(const ScheduleStep &step) const {
  if (step.kind == ScheduleStep::Kind::Device)
    return fmt::format("signals of {}", program_.processName(step.id));
  const Dma &dma = program_.dmas[step.id];
  if (program_.cores)
    return fmt::format("dma {} {} ({} -> {})", step.id,
                       step.kind == ScheduleStep::Kind::Send ? "sends" : "lands",
                       program_.processName(dma.issuer), program_.processName(dma.target));
  return fmt::format("dma {} {} (device {} -> {})", step.id,
                     step.kind == ScheduleStep::Kind::Send ? "sends" : "lands", dma.issuer,
                     dma.target);
}

z3::expr Encoder::executed(DeviceId d, int32_t i) const {
  if (i < 0)
    return ctx_.bool_val(true);
  if (i >= static_cast<int32_t>(order_.eventSteps(d).size()))
    return ctx_.bool_val(false);
  return steps_[order_.eventStep(d, i)].x;
}

z3::expr Encoder::at(DeviceId d, int32_t pc) const {
  return executed(d, pc - 1) && !executed(d, pc);
}

template <typename Member>
std::optional<z3::expr> Encoder::pcIn(DeviceId d, Member member, int32_t ran,
                                      int32_t pending) const {
  // The executed events of a device are a prefix (program order), so "pc in [a, b]" is
  // "event a - 1 executed and event b not": one conjunction per maximal range. A range
  // is impossible when event b must run before `ran` (so it has run), or `pending`
  // must run before event a - 1 (so a - 1 has not run), or a - 1 can never run.
  z3::expr_vector ranges(ctx_);
  const int32_t count = m_.eventCount(d);
  auto precedes = [&](int32_t a, int32_t b) { return a == b || order_.mustPrecede(a, b); };
  for (int32_t j = 0; j <= count;) {
    if (!member(j)) {
      ++j;
      continue;
    }
    int32_t end = j;
    while (end + 1 <= count && member(end + 1))
      ++end;
    const bool ranPast = end < count && ran >= 0 && precedes(order_.eventStep(d, end), ran);
    const bool notYet =
        j >= 1 && ((pending >= 0 && precedes(pending, order_.eventStep(d, j - 1))) ||
                   order_.dead(order_.eventStep(d, j - 1)));
    if (!ranPast && !notYet)
      ranges.push_back(executed(d, j - 1) && !executed(d, end));
    j = end + 1;
  }
  if (ranges.empty())
    return std::nullopt;
  return z3::mk_or(ranges);
}

z3::expr Encoder::started(DmaId k) const {
  const int32_t start = props_.startPc(k);
  return start < 0 ? ctx_.bool_val(false) : executed(program_.dmas[k].issuer, start);
}

z3::expr Encoder::closed(DmaId k, bool dst) const {
  const std::vector<int32_t> &chunks = dst ? order_.landSteps(k) : order_.sendSteps(k);
  return chunks.empty() ? ctx_.bool_val(false) : steps_[chunks.back()].x;
}

Encoder::Weighted Encoder::incrementsInPrefix(DeviceId d, SemId s) const {
  Weighted terms;
  for (const Increment &inc : order_.increments(d, s))
    terms.push_back({steps_[inc.step].x, inc.units});
  return terms;
}

// Semaphore sums are pseudo-Boolean constraints over Boolean terms (Z3's PB theory)
// rather than sums of if-then-else integers, which kept the arithmetic solver
// splitting cases. The weights are divided by their gcd g (the units of one chunk,
// typically): sum >= W is then sum / g >= ceil(W / g), and sum == W is impossible
// unless g divides W.
namespace {
int64_t gcdOf(const std::vector<std::pair<z3::expr, int64_t>> &terms) {
  int64_t g = 0;
  for (const auto &term : terms)
    g = std::gcd(g, term.second);
  return g;
}
} // namespace

namespace {

/// A weighted sum with its weights divided by their gcd g, for a pseudo-Boolean
/// constraint; `total` is the largest value the scaled sum can take. Z3's PB
/// constraints take `int` coefficients and bound: `fits` is false when a scaled weight
/// or the total does not fit one (a semaphore incremented past 2^31 - 1 units in all),
/// and the sum is then written in integer arithmetic instead (`integerSum`), which has
/// no bound (the totals themselves are int64_t: at most 4000000 events of at most 2^31
/// - 1 units each).
struct ScaledTerms {
  std::vector<int> coeffs;
  int64_t total = 0;
  bool fits = true;
};

ScaledTerms scaled(const std::vector<std::pair<z3::expr, int64_t>> &terms, int64_t g,
                   z3::expr_vector &es) {
  ScaledTerms out;
  constexpr int64_t kIntMax = std::numeric_limits<int>::max();
  for (const auto &[e, w] : terms) {
    es.push_back(e);
    out.total += w / g;
    out.fits = out.fits && w / g <= kIntMax && out.total <= kIntMax;
    out.coeffs.push_back(out.fits ? static_cast<int>(w / g) : 0);
  }
  return out;
}

/// The sum of `terms` (weight w when its Boolean holds) as an integer term.
z3::expr integerSum(z3::context &ctx, const std::vector<std::pair<z3::expr, int64_t>> &terms) {
  z3::expr_vector parts(ctx);
  for (const auto &[e, w] : terms)
    parts.push_back(z3::ite(e, ctx.int_val(w), ctx.int_val(0)));
  return parts.empty() ? ctx.int_val(0) : z3::sum(parts);
}

} // namespace

z3::expr Encoder::atLeast(const Weighted &terms, int64_t bound) const {
  if (bound <= 0)
    return ctx_.bool_val(true);
  const int64_t g = gcdOf(terms);
  if (g == 0)
    return ctx_.bool_val(false);
  z3::expr_vector es(ctx_);
  ScaledTerms t = scaled(terms, g, es);
  const int64_t need = (bound + g - 1) / g;
  if (need > t.total)
    return ctx_.bool_val(false);
  if (!t.fits)
    return integerSum(ctx_, terms) >= ctx_.int_val(bound);
  return z3::pbge(es, t.coeffs.data(), static_cast<int>(need));
}

z3::expr Encoder::exactly(const Weighted &terms, int64_t bound) const {
  if (terms.empty())
    return ctx_.bool_val(bound == 0);
  const int64_t g = gcdOf(terms);
  if (bound < 0 || bound % g != 0)
    return ctx_.bool_val(false);
  z3::expr_vector es(ctx_);
  ScaledTerms t = scaled(terms, g, es);
  if (bound / g > t.total)
    return ctx_.bool_val(false);
  if (!t.fits)
    return integerSum(ctx_, terms) == ctx_.int_val(bound);
  return z3::pbeq(es, t.coeffs.data(), static_cast<int>(bound / g));
}

// Program order, and each DMA as one agent: its send chunks after its start and in
// order, land chunk c after send chunk c and after land chunk c - 1 (docs/model.md:
// `sent` and `landed` count up, `landed <= sent`); with `--dma-order link`, a DMA's
// first land chunk after the last one of its link predecessor. A step executes only
// with its predecessors, at a later position.
void Encoder::encodeOrder() {
  auto after = [&](int32_t prev, int32_t next) {
    return z3::implies(steps_[next].x, steps_[prev].x && steps_[prev].pos < steps_[next].pos);
  };
  // Program order, each DMA's chunk order and, under --dma-order link (docs/model.md,
  // "DMA order"), a DMA's first land chunk after its link predecessor's last: the
  // must-order's base edges (semantics/MustOrder.h), the barriers' aside.
  const std::vector<std::pair<int32_t, int32_t>> &edges = order_.orderEdges();
  for (size_t i = 0; i < edges.size(); ++i) {
    if (i % 4096 == 0 && support::stopRequested(stop_))
      return;
    base_.push_back(after(edges[i].first, edges[i].second));
  }
}

// DeviceBarrier{i} is enabled when every device has reached its barrier of
// invocation i (Machine::barrierOpen): every device f whose barrier is at pc b_f > 0
// has run event b_f - 1. One real T_i per invocation keeps this linear: every such
// event is before T_i (unconditionally: T_i is free when no barrier runs), and every
// executed barrier event of invocation i is at or after T_i.
void Encoder::encodeBarriers() {
  const std::vector<std::vector<int32_t>> &barrierPc = props_.barrierPcs();
  const size_t invocations = barrierPc.empty() ? 0 : barrierPc[0].size();
  barrierOpen_.resize(invocations);
  for (size_t inv = 0; inv < invocations; ++inv) {
    z3::expr time = ctx_.real_const(fmt::format("barrier_{}", inv).c_str());
    note(fmt::format("device barrier of invocation {}: every device reaches it before "
                     "barrier_{}, its events run after",
                     inv, inv));
    z3::expr_vector reached(ctx_);
    for (DeviceId f = 0; f < m_.deviceCount(); ++f) {
      const int32_t b = barrierPc[f][inv];
      if (b <= 0)
        continue;
      const Step &pre = steps_[order_.eventStep(f, b - 1)];
      reached.push_back(pre.x);
      base_.push_back(pre.pos < time);
    }
    barrierOpen_[inv] = reached.empty() ? ctx_.bool_val(true) : z3::mk_and(reached);
    for (DeviceId e = 0; e < m_.deviceCount(); ++e)
      for (int32_t j = 0; j < m_.eventCount(e); ++j) {
        const auto *b = roleOf(program_.processes[e].events[j]).barrier;
        if (!b || b->invocation != static_cast<int32_t>(inv))
          continue;
        const Step &step = steps_[order_.eventStep(e, j)];
        base_.push_back(z3::implies(step.x, *barrierOpen_[inv] && time <= step.pos));
      }
  }
}

// A SemWait{s, a} of device e at position p runs only if the value suffices:
// (units added to (e, s) before p) - (amounts of e's earlier waits on s) >= a. e's
// earlier waits all ran before it (program order), so with W = the amounts of e's
// waits on s up to and including this one, the condition is "units before p >= W".
// Counting form: when every increment of (e, s) comes from one ordered source (one
// device's signals, one DMA's chunks), the units before p are a prefix of that
// sequence, so the condition is "the first increment at which the running sum reaches
// W is before p": one implication. Sum form otherwise: a pseudo-Boolean constraint
// over "executed and before p" of every increment, leaving out the increments that
// the static analysis puts after the wait (e's own later events, the chunks of DMAs
// started after it, ...) or that can never run.
void Encoder::encodeSemaphores() {
  const int32_t semCount = m_.semCount();
  std::vector<bool> counted(static_cast<size_t>(m_.deviceCount()) * semCount, false);
  for (const WaitInfo &wait : waits_) {
    if (support::stopRequested(stop_))
      return;
    const size_t key = static_cast<size_t>(wait.device) * semCount + wait.sem;
    const std::string name = fmt::format("{}@d{}", program_.semName(wait.sem), wait.device);
    if (!counted[key]) {
      counted[key] = true;
      (wait.chain ? countingForm_ : sumForm_) += 1;
      const std::vector<std::string> &sources =
          std::find_if(forms_.begin(), forms_.end(), [&](const report::SemaphoreForm &f) {
            return f.device == wait.device && f.semaphore == program_.semName(wait.sem);
          })->sources;
      note(fmt::format("semaphore {}: {} form, {} {}{}", name, wait.chain ? "counting" : "sum",
                       sources.size(), sources.size() == 1 ? "source" : "sources",
                       sources.empty() ? "" : ": " + fmt::format("{}", fmt::join(sources, ", "))));
    }
    const std::vector<Increment> &incs = order_.increments(wait.device, wait.sem);
    const Step &w = steps_[wait.step];
    const int32_t pc =
        wait.step - order_.eventStep(wait.device, 0); // a device's steps are contiguous
    note(fmt::format("{}: wait at event {} of {} (its waits on it need {} in all), {} form", name,
                     pc, program_.processName(wait.device), wait.need,
                     wait.chain ? "counting" : "sum"));
    if (wait.chain) {
      int64_t sum = 0;
      std::optional<int32_t> reaching;
      for (const Increment &inc : incs) {
        sum += inc.units;
        if (sum >= wait.need) {
          reaching = inc.step;
          break;
        }
      }
      if (!reaching) {
        base_.push_back(!w.x);
        continue;
      }
      const Step &r = steps_[*reaching];
      base_.push_back(z3::implies(w.x, r.x && r.pos < w.pos));
      continue;
    }
    Weighted terms;
    int64_t available = 0;
    for (const Increment &inc : incs) {
      // Increments that must come after the wait (its device's own later events, the
      // chunks of DMAs started after it, ...) or can never run are left out.
      if (!order_.closed()) {
        // Without the analysis (very large instances): only what program order gives.
        const ScheduleStep &src = steps_[inc.step].step;
        const bool later =
            src.kind == ScheduleStep::Kind::Device
                ? src.id == wait.device && inc.step > wait.step
                : program_.dmas[src.id].issuer == wait.device &&
                      order_.eventStep(wait.device, props_.startPc(src.id)) > wait.step;
        if (later)
          continue;
      } else if (order_.dead(inc.step) || order_.mustPrecede(wait.step, inc.step)) {
        continue;
      }
      const Step &i = steps_[inc.step];
      terms.push_back({i.x && i.pos < w.pos, inc.units});
      available += inc.units;
    }
    if (available < wait.need) {
      base_.push_back(!w.x);
      continue;
    }
    base_.push_back(z3::implies(w.x, atLeast(terms, wait.need)));
  }
  // Redundant: the semaphore edges of the static analysis (implied by the constraints
  // above, but the solver would rediscover them in every query), and the dead steps.
  if (!order_.semaphoreEdges().empty())
    note("redundant: the must-precede edges the static analysis derived from the waits");
  for (const auto &[a, b] : order_.semaphoreEdges())
    base_.push_back(z3::implies(steps_[b].x, steps_[a].x && steps_[a].pos < steps_[b].pos));
  if (order_.anyDead())
    note("redundant: the steps the static analysis found can never run");
  for (int32_t i = 0; i < order_.stepCount(); ++i)
    if (order_.dead(i))
      base_.push_back(!steps_[i].x);
  notes_.resize(base_.size());
}

// No step is enabled after the executed prefix (docs/model.md, deadlock): every
// started DMA has sent and landed all its chunks, and every device has finished or is
// at a SemWait whose value is short or at a DeviceBarrier that is not open.
z3::expr Encoder::deadlocked() {
  if (deadlocked_)
    return *deadlocked_;
  z3::expr_vector all(ctx_);
  for (DmaId k = 0; k < m_.dmaCount(); ++k)
    if (!order_.landSteps(k).empty())
      all.push_back(z3::implies(started(k), closed(k, true)));
  for (DeviceId e = 0; e < m_.deviceCount(); ++e) {
    const std::vector<Event> &events = program_.processes[e].events;
    z3::expr_vector still(ctx_);
    still.push_back(executed(e, static_cast<int32_t>(events.size()) - 1));
    for (int32_t j = 0; j < static_cast<int32_t>(events.size()); ++j) {
      if (props_.stuckAt(e, j) < 0)
        continue; // never blocks
      if (const auto *w = roleOf(events[j]).wait) {
        still.push_back(at(e, j) && !atLeast(incrementsInPrefix(e, w->sem),
                                             order_.waitsBefore(e, j, w->sem) + w->amount));
      } else if (const auto *b = roleOf(events[j]).barrier) {
        if (b->invocation >= 0 && static_cast<size_t>(b->invocation) < barrierOpen_.size())
          still.push_back(at(e, j) && !*barrierOpen_[b->invocation]);
      }
    }
    all.push_back(z3::mk_or(still));
  }
  deadlocked_ = all.empty() ? ctx_.bool_val(true) : z3::mk_and(all);
  return *deadlocked_;
}

// `condition` and fact `f` at the obligation `ob`'s event (its prefix has run): a side
// open is started and not closed, a semaphore non-zero has other than exactly the units
// its waits before the event took.
z3::expr Encoder::fact(const z3::expr &condition, const semantics::Fact &f,
                       const semantics::Obligation &ob) const {
  using Kind = semantics::Fact::Kind;
  switch (f.kind) {
  case Kind::SideOpen:
    return condition && started(f.dma) && !closed(f.dma, f.dst);
  case Kind::SemNonZero:
    return condition && !exactly(incrementsInPrefix(f.device, f.sem),
                                 order_.waitsBefore(f.device, ob.pc, f.sem));
  case Kind::Within:
  case Kind::InScope:
  case Kind::Stuck:
    break; // encoded by the device's pc (byPc) or as a deadlock
  }
  DKV_UNREACHABLE("a fact of an event check");
}

// One disjunct per obligation (per chunk for the land checks), with the predicate of
// Machine::violated on the state after the executed prefix. The checks that depend
// only on a device's pc (where[t], scopes[t]) call Machine::violated itself on each pc.
void Encoder::buildChecks(PropertyIndex p) {
  std::vector<Check> out;
  semantics::ControlState probe = m_.initialState();
  auto byPc = [&](DeviceId t, ObligationIndex o, int32_t ran, int32_t pending) {
    return pcIn(
        t,
        [&](int32_t pc) {
          probe.pc[t] = pc;
          bool v = m_.violated(probe, o);
          probe.pc[t] = 0;
          return v;
        },
        ran, pending);
  };
  for (ObligationIndex o : props_.property(p).obligations) {
    // Under a symmetry, a rotation of every obligation is checked on a representative.
    if (!props_.represented(o))
      continue;
    const semantics::Obligation &ob = props_.obligation(o);
    if (order_.neverViolated(ob)) {
      ++staticallyOrdered_;
      continue;
    }
    const ScheduleStep device{ScheduleStep::Kind::Device, ob.device};
    // The obligation's predicate (semantics/Obligations.h), fact by fact; where it is
    // checked decides the step it is checked at.
    const semantics::Predicate predicate = semantics::violation(ob);
    const bool onlyPc =
        std::all_of(predicate.all.begin(), predicate.all.end(),
                    [](const semantics::Literal &l) { return l.fact.readsOnlyPc(); });
    switch (semantics::checkedAt(ob)) {
    case semantics::CheckedAt::Deadlock:
      if (deadlockFree_)
        ++staticallyOrdered_;
      else
        out.push_back({o, std::nullopt, at(ob.device, ob.pc) && deadlocked()});
      break;
    case semantics::CheckedAt::Land: {
      // Facts of where the DMA's target is (its invocation and blocks: a function of its
      // pc). Land chunk c is the next step: chunks before it landed, it has been sent.
      DKV_INVARIANT(onlyPc, "a land check reads where its DMA's target is");
      bool any = false;
      for (size_t c = 0; c < order_.landSteps(ob.dma).size(); ++c) {
        std::optional<z3::expr> where =
            byPc(program_.dmas[ob.dma].target, o, order_.sendSteps(ob.dma)[c],
                 order_.landSteps(ob.dma)[c]);
        if (!where)
          continue;
        // With --dma-order link the first chunk also needs its link predecessor landed
        // (later chunks have it through chunk c - 1).
        z3::expr ready = ctx_.bool_val(true);
        if (const DmaId j = props_.linkPredecessor(ob.dma); c == 0 && j >= 0)
          ready = order_.landSteps(j).empty() ? ctx_.bool_val(false)
                                              : steps_[order_.landSteps(j).back()].x;
        z3::expr next = (c == 0 ? ready : steps_[order_.landSteps(ob.dma)[c - 1]].x) &&
                        !steps_[order_.landSteps(ob.dma)[c]].x &&
                        steps_[order_.sendSteps(ob.dma)[c]].x;
        out.push_back({o, ScheduleStep{ScheduleStep::Kind::Land, ob.dma}, next && *where});
        any = true;
      }
      if (!any)
        ++staticallyOrdered_;
      break;
    }
    case semantics::CheckedAt::Event: {
      if (onlyPc && !predicate.all.empty()) {
        // Facts of where one device is (a signal's target): a function of its pc. The
        // event (d, pc) is next: d's event pc - 1 has run, pc has not.
        const DeviceId t = predicate.all.front().fact.device;
        std::optional<z3::expr> where =
            byPc(t, o, ob.pc > 0 ? order_.eventStep(ob.device, ob.pc - 1) : -1,
                 order_.eventStep(ob.device, ob.pc));
        if (where)
          out.push_back({o, device, at(ob.device, ob.pc) && *where});
        else
          ++staticallyOrdered_;
        break;
      }
      if (semantics::reads(predicate, semantics::Fact::Kind::SemNonZero,
                           [](const semantics::Fact &) { return true; }) &&
          order_.exitSemaphoreZero(ob)) {
        ++staticallyOrdered_;
        break;
      }
      z3::expr condition = at(ob.device, ob.pc);
      for (const semantics::Literal &l : predicate.all) {
        DKV_INVARIANT(!l.negated && !l.fact.readsOnlyPc(),
                      "an event check reads DMA sides and semaphores, or where a device is");
        condition = fact(condition, l.fact, ob);
      }
      out.push_back({o, device, condition});
      break;
    }
    }
  }
  checks_[p] = std::move(out);
}

const std::vector<Check> &Encoder::checks(PropertyIndex p) {
  if (!checks_[p])
    buildChecks(p);
  return *checks_[p];
}

z3::expr Encoder::query(PropertyIndex p) {
  z3::expr_vector conditions(ctx_);
  for (const Check &c : checks(p))
    conditions.push_back(c.condition);
  return conditions.empty() ? ctx_.bool_val(false) : z3::mk_or(conditions);
}

// Steps with equal positions are unordered by every constraint except the semaphore
// condition, which counts only increments strictly before a wait; so among equal
// positions the waits go first, and the order is a run in which every wait sees the
// units the model counted for it.
report::Schedule Encoder::schedule(const z3::model &model,
                                   const std::optional<ScheduleStep> &last) const {
  struct Placed {
    int64_t num, den;
    int wait;
    size_t index;
  };
  std::vector<Placed> placed;
  for (size_t i = 0; i < steps_.size(); ++i) {
    if (!model.eval(steps_[i].x, true).is_true())
      continue;
    z3::expr value = model.eval(steps_[i].pos, true);
    int64_t num = 0, den = 1;
    bool exact = Z3_get_numeral_rational_int64(ctx_, value, &num, &den);
    DKV_INVARIANT(exact && den > 0, "a position is a small rational");
    placed.push_back({num, den, steps_[i].wait ? 0 : 1, i});
  }
  std::sort(placed.begin(), placed.end(), [](const Placed &a, const Placed &b) {
    const __int128 l = static_cast<__int128>(a.num) * b.den;
    const __int128 r = static_cast<__int128>(b.num) * a.den;
    if (l != r)
      return l < r;
    return std::tie(a.wait, a.index) < std::tie(b.wait, b.index);
  });
  report::Schedule out;
  for (const Placed &p : placed)
    out.push_back(steps_[p.index].step);
  if (last)
    out.push_back(*last);
  return out;
}

} // namespace dkv::smt
