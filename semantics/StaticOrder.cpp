// Static happens-before by counting semaphore units (semantics/StaticOrder.h).
//
// Why the fixpoint is sound. Let h be the thresholds of one iteration and assume that, in
// every run, no event of a device f at a pc >= h[f] runs before the source (true at the
// start, when only the source's own device is constrained: an Event source's later
// events follow it in program order, and a DMA side's later chunks follow its earlier
// ones). Call a step "held" when it cannot run before the source: an event at or past its
// device's threshold, a chunk of a DMA whose start is held, a chunk of the source's own
// side from the source's chunk on (and, for a send side, the land chunks from that chunk
// on: chunk c lands only after it is sent). Before the source runs, the units added to
// (f, x) come only from steps that are not held, so at most supply(f, x) in total, and
// only f's own waits take units away. So if the waits of f on x from its first event up
// to a wait w need more than that, f cannot pass w before the source, nor run anything
// after it: h[f] may drop to w. A device barrier opens only when every device has reached
// it; if some device g cannot reach its barrier of invocation i before the source
// (h[g] is below its pc), no device passes that barrier before the source. Each round
// keeps the assumption true, h only decreases, and the loop stops when a round changes
// nothing. (Ignoring --dma-order link and other orderings only counts more supply,
// which makes the relation smaller, never wrong.)
#include "semantics/StaticOrder.h"

#include "support/Overloaded.h"

#include <algorithm>
#include <limits>

namespace dkv::semantics {

using namespace model;

namespace {

int64_t saturatingAdd(int64_t a, int64_t b) {
  if (b > 0 && a > std::numeric_limits<int64_t>::max() - b)
    return std::numeric_limits<int64_t>::max();
  return a + b;
}

/// Units of chunks [from, to) of a DMA.
int64_t chunkUnits(const Dma &dma, int32_t from, int32_t to) {
  int64_t sum = 0;
  for (int32_t c = std::max(0, from); c < to && static_cast<size_t>(c) < dma.chunkUnits.size(); ++c)
    sum = saturatingAdd(sum, dma.chunkUnits[c]);
  return sum;
}

} // namespace

StaticOrder::StaticOrder(const Properties &properties)
    : properties_(properties), program_(properties.program()) {
  const int32_t n = program_.deviceCount();
  const size_t sems = program_.semaphores.size();
  issuedBy_.resize(n);
  targeting_.resize(n);
  for (const Dma &dma : program_.dmas) {
    issuedBy_[dma.issuer].push_back(dma.id);
    targeting_[dma.target].push_back(dma.id);
  }
  signalsTo_.resize(static_cast<size_t>(n) * sems);
  for (DeviceId d = 0; d < n; ++d) {
    const std::vector<Event> &events = program_.processes[d].events;
    for (size_t i = 0; i < events.size(); ++i)
      if (const auto *sig = std::get_if<Signal>(&events[i].kind))
        signalsTo_[static_cast<size_t>(sig->target) * sems + sig->sem].push_back(
            {d, static_cast<int32_t>(i), sig->amount});
  }
}

int64_t StaticOrder::supply(const OrderSource &source, const std::vector<int32_t> &h, DeviceId f,
                            SemId x) const {
  const bool chunkSource = source.kind != OrderSource::Kind::Event;
  auto startHeld = [&](DmaId j) {
    const int32_t start = properties_.startPc(j);
    return start < 0 || start >= h[program_.dmas[j].issuer];
  };
  int64_t sum = 0;
  for (const SignalAt &sig : signalsTo_[static_cast<size_t>(f) * program_.semaphores.size() + x])
    if (sig.pc < h[sig.device])
      sum = saturatingAdd(sum, std::max<int64_t>(0, sig.amount));
  for (DmaId j : issuedBy_[f]) {
    const Dma &dma = program_.dmas[j];
    if (!dma.sendSem || *dma.sendSem != x || startHeld(j))
      continue;
    const int32_t to = chunkSource && source.dma == j && source.kind == OrderSource::Kind::Send
                           ? source.chunk
                           : static_cast<int32_t>(dma.chunkUnits.size());
    sum = saturatingAdd(sum, chunkUnits(dma, 0, to));
  }
  for (DmaId j : targeting_[f]) {
    const Dma &dma = program_.dmas[j];
    if (dma.recvSem != x || startHeld(j))
      continue;
    const int32_t to =
        chunkSource && source.dma == j ? source.chunk : static_cast<int32_t>(dma.chunkUnits.size());
    sum = saturatingAdd(sum, chunkUnits(dma, 0, to));
  }
  return sum;
}

std::vector<int32_t> StaticOrder::after(const OrderSource &source) const {
  const int32_t n = program_.deviceCount();
  std::vector<int32_t> h(n);
  for (DeviceId f = 0; f < n; ++f)
    h[f] = static_cast<int32_t>(program_.processes[f].events.size());
  if (source.kind == OrderSource::Kind::Event)
    h[source.device] = std::min(h[source.device], source.pc);
  const std::vector<std::vector<int32_t>> &barrierPc = properties_.barrierPcs();
  for (bool changed = true; changed;) {
    changed = false;
    for (DeviceId f = 0; f < n; ++f) {
      const std::vector<Event> &events = program_.processes[f].events;
      std::vector<std::pair<SemId, int64_t>> need; // per semaphore: its waits so far
      for (int32_t pc = 0; pc < h[f]; ++pc) {
        const auto *w = std::get_if<SemWait>(&events[pc].kind);
        if (!w || w->amount <= 0)
          continue;
        auto it = std::find_if(need.begin(), need.end(),
                               [&](const auto &p) { return p.first == w->sem; });
        if (it == need.end()) {
          need.push_back({w->sem, 0});
          it = need.end() - 1;
        }
        it->second = saturatingAdd(it->second, w->amount);
        if (supply(source, h, f, w->sem) < it->second) {
          h[f] = pc;
          changed = true;
          break;
        }
      }
    }
    // A barrier that some device cannot reach before the source.
    const size_t invocations = barrierPc.empty() ? 0 : barrierPc[0].size();
    for (size_t i = 0; i < invocations; ++i) {
      bool closed = false;
      for (DeviceId g = 0; g < n && !closed; ++g)
        closed = barrierPc[g][i] >= 0 && h[g] < barrierPc[g][i];
      if (!closed)
        continue;
      for (DeviceId f = 0; f < n; ++f)
        if (barrierPc[f][i] >= 0 && barrierPc[f][i] < h[f]) {
          h[f] = barrierPc[f][i];
          changed = true;
        }
    }
  }
  return h;
}

bool StaticOrder::before(DeviceId e, int32_t pc, DeviceId d, int32_t at) const {
  auto key = std::make_pair(e, pc);
  auto it = eventCache_.find(key);
  if (it == eventCache_.end())
    it = eventCache_.emplace(key, after({OrderSource::Kind::Event, e, pc, 0, 0})).first;
  return it->second[d] <= at;
}

} // namespace dkv::semantics
