// The concrete executor: data, DMA engines, vector clocks and findings along one run.
#include "executor/Simulator.h"

#include "semantics/Witness.h"
#include "support/Overloaded.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace dkv::executor {

using namespace model;
using report::ScheduleStep;
using semantics::Obligation;
using semantics::ObligationIndex;

namespace {

uint64_t splitmix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

} // namespace

double inputValue(uint64_t seed, DeviceId device, BufferId buffer, int64_t element) {
  uint64_t h = splitmix(seed);
  h = splitmix(h ^ static_cast<uint64_t>(device));
  h = splitmix(h ^ static_cast<uint64_t>(buffer));
  h = splitmix(h ^ static_cast<uint64_t>(element));
  return static_cast<double>(1 + h % 9);
}

namespace {

int64_t elementsOf(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

// For each element of an array of shape `out` (row-major), the element of an operand of
// shape `in` that NumPy's broadcasting pairs with it: dimensions aligned at the end, a
// missing or extent-1 dimension repeated.
std::vector<size_t> broadcastIndex(const std::vector<int64_t> &in,
                                   const std::vector<int64_t> &out) {
  const size_t count = static_cast<size_t>(elementsOf(out));
  std::vector<size_t> index(count, 0);
  const size_t offset = out.size() - std::min(out.size(), in.size());
  std::vector<size_t> stride(out.size(), 0); // the operand's stride per output dimension
  size_t s = 1;
  for (size_t d = out.size(); d-- > offset;) {
    const int64_t extent = in[d - offset];
    stride[d] = extent == 1 ? 0 : s;
    s *= static_cast<size_t>(extent);
  }
  for (size_t e = 0; e < count; ++e) {
    size_t rest = e, flat = 0;
    for (size_t d = out.size(); d-- > 0;) {
      const size_t extent = static_cast<size_t>(out[d]);
      flat += (rest % extent) * stride[d];
      rest /= extent;
    }
    index[e] = flat;
  }
  return index;
}

} // namespace

std::vector<double> evaluateValue(const ValueExpr &value,
                                  const std::function<std::vector<double>(const Region &)> &load,
                                  const std::function<double(RegisterId)> &reg) {
  const std::vector<ValueNode> &nodes = value.nodes;
  std::vector<std::vector<double>> v(nodes.size());
  static const std::vector<double> zero{0.0};
  auto arg = [&](int32_t i) -> const std::vector<double> & {
    return i >= 0 && static_cast<size_t>(i) < v.size() && !v[i].empty() ? v[i] : zero;
  };
  for (size_t n = 0; n < nodes.size(); ++n) {
    const ValueNode &node = nodes[n];
    const prim::OpRecord &r = prim::record(node.op);
    const size_t count = static_cast<size_t>(elementsOf(node.shape));
    std::vector<double> &out = v[n];
    const std::vector<double> &a = arg(node.lhs);
    auto at = [](const std::vector<double> &x, size_t e) { return x.size() == 1 ? x[0] : x[e]; };
    const prim::ElemAttrs attrs{node.dtype, node.from, node.approximate};
    // Each kind of op by its record's shape rule; one element by its record's function.
    switch (r.shape) {
    case prim::ShapeRule::Leaf:
      if (node.op == ValueNode::Op::Load)
        out = load(node.region);
      else if (node.op == ValueNode::Op::Register)
        out.assign(1, reg(node.reg));
      else
        out.assign(1, node.constant);
      continue; // leaves are not rounded: a constant is a Python number (weak)
    case prim::ShapeRule::Broadcast: {
      // Element-wise with NumPy's broadcasting: operands of one element or of the
      // node's element count are read directly, others through their broadcast index.
      const std::vector<double> *xs[3] = {&a, &arg(node.rhs), &arg(node.third)};
      std::vector<size_t> index[3];
      for (size_t k = 0; k < 3; ++k) {
        const int32_t o = k == 0 ? node.lhs : k == 1 ? node.rhs : node.third;
        if (o >= 0 && xs[k]->size() != 1 && xs[k]->size() != count)
          index[k] = broadcastIndex(nodes[o].shape, node.shape);
      }
      auto get = [&](size_t k, size_t e) {
        return index[k].empty() ? at(*xs[k], e) : (*xs[k])[index[k][e]];
      };
      out.resize(count);
      for (size_t e = 0; e < count; ++e)
        out[e] = r.fn(get(0, e), get(1, e), get(2, e), attrs);
      break;
    }
    case prim::ShapeRule::Reshape:
      out = a;
      out.resize(count, a.size() == 1 ? a[0] : 0.0);
      break;
    case prim::ShapeRule::Create: {
      // Each element's index along `axis` (row-major), through the record's function
      // (iota: the index itself).
      const size_t axis = static_cast<size_t>(std::max(node.axis, 0));
      const size_t inner = static_cast<size_t>(
          elementsOf({node.shape.begin() + static_cast<int64_t>(axis) + 1, node.shape.end()}));
      const size_t len = node.shape.empty() ? 1 : static_cast<size_t>(node.shape[axis]);
      out.resize(count);
      for (size_t e = 0; e < count; ++e)
        out[e] = r.fn(static_cast<double>((e / inner) % len), 0, 0, attrs);
      break;
    }
    case prim::ShapeRule::Concat:
    case prim::ShapeRule::Split: {
      // Along `axis`: outer blocks (the dimensions before it) of `len` rows of `inner`
      // elements each.
      const size_t axis = static_cast<size_t>(node.axis);
      const size_t outer =
          static_cast<size_t>(elementsOf({node.shape.begin(), node.shape.begin() + node.axis}));
      const size_t inner =
          static_cast<size_t>(elementsOf({node.shape.begin() + node.axis + 1, node.shape.end()}));
      const size_t lenA = static_cast<size_t>(nodes[node.lhs].shape[axis]);
      out.resize(count);
      if (r.shape == prim::ShapeRule::Split) {
        const size_t len = static_cast<size_t>(node.end - node.begin);
        const size_t begin = static_cast<size_t>(node.begin);
        for (size_t o = 0; o < outer; ++o)
          for (size_t j = 0; j < len; ++j)
            for (size_t i = 0; i < inner; ++i)
              out[(o * len + j) * inner + i] = at(a, (o * lenA + begin + j) * inner + i);
        break;
      }
      const std::vector<double> &b = arg(node.rhs);
      const size_t lenB = static_cast<size_t>(nodes[node.rhs].shape[axis]);
      const size_t len = lenA + lenB;
      for (size_t o = 0; o < outer; ++o)
        for (size_t j = 0; j < len; ++j)
          for (size_t i = 0; i < inner; ++i)
            out[(o * len + j) * inner + i] = j < lenA ? at(a, (o * lenA + j) * inner + i)
                                                      : at(b, (o * lenB + j - lenA) * inner + i);
      break;
    }
    case prim::ShapeRule::Contract: {
      // [M, K] x [K, N]: each element is the sum over k in index order, in double
      // precision, then rounded to the result's type (the hardware accumulates in f32).
      const std::vector<double> &b = arg(node.rhs);
      const std::vector<int64_t> &as = nodes[node.lhs].shape, &bs = nodes[node.rhs].shape;
      const size_t m = static_cast<size_t>(as[0]), k = static_cast<size_t>(as[1]),
                   cols = static_cast<size_t>(bs[1]);
      out.assign(m * cols, 0.0);
      for (size_t i = 0; i < m; ++i)
        for (size_t j = 0; j < cols; ++j) {
          double sum = 0;
          for (size_t l = 0; l < k; ++l)
            sum += at(a, i * k + l) * at(b, l * cols + j);
          out[i * cols + j] = sum;
        }
      break;
    }
    case prim::ShapeRule::Reduce: {
      // In index order along the axis (every axis: -1), combined by the record's function.
      const std::vector<int64_t> &s = nodes[node.lhs].shape;
      size_t outer = 1, len = static_cast<size_t>(elementsOf(s)), inner = 1;
      if (node.axis >= 0) {
        const size_t axis = static_cast<size_t>(node.axis);
        outer = static_cast<size_t>(elementsOf({s.begin(), s.begin() + node.axis}));
        len = static_cast<size_t>(s[axis]);
        inner = static_cast<size_t>(elementsOf({s.begin() + node.axis + 1, s.end()}));
      }
      out.assign(outer * inner, 0.0);
      for (size_t o = 0; o < outer; ++o)
        for (size_t i = 0; i < inner; ++i) {
          double acc = at(a, o * len * inner + i);
          for (size_t j = 1; j < len; ++j)
            acc = r.fn(acc, at(a, (o * len + j) * inner + i), 0, attrs);
          out[o * inner + i] = acc;
        }
      break;
    }
    }
    // A computed value holds its element type (JAX computes in it: an int32 sum wraps
    // around); a mask holds 1 or 0.
    if (r.type != prim::TypeRule::Mask)
      for (double &x : out)
        x = prim::roundTo(x, node.dtype);
  }
  if (value.root < 0 || static_cast<size_t>(value.root) >= v.size())
    return {};
  return v[value.root];
}

std::vector<int64_t> regionElements(const Buffer &buffer, const Region &region) {
  const size_t rank = buffer.shape.size();
  std::vector<int64_t> begin(rank), end(rank), stride(rank);
  int64_t s = 1;
  for (size_t i = rank; i-- > 0;) {
    stride[i] = s;
    s *= buffer.shape[i];
    begin[i] = 0;
    end[i] = buffer.shape[i];
    if (i < region.ranges.size()) {
      begin[i] = std::clamp<int64_t>(region.ranges[i].begin, 0, buffer.shape[i]);
      end[i] = std::clamp<int64_t>(region.ranges[i].end, begin[i], buffer.shape[i]);
    }
  }
  std::vector<int64_t> out;
  for (size_t i = 0; i < rank; ++i)
    if (begin[i] >= end[i])
      return out;
  std::vector<int64_t> idx = begin;
  while (true) {
    int64_t flat = 0;
    for (size_t i = 0; i < rank; ++i)
      flat += idx[i] * stride[i];
    out.push_back(flat);
    size_t i = rank;
    while (i-- > 0) {
      if (++idx[i] < end[i])
        break;
      idx[i] = begin[i];
    }
    if (i == static_cast<size_t>(-1))
      break;
  }
  return out;
}

Simulator::Simulator(const Machine &machine, uint64_t inputSeed, bool recordTrace)
    : machine_(machine), program_(machine.program()), recordTrace_(recordTrace),
      state_(machine.initialState()) {
  const int32_t n = machine.deviceCount();
  const int32_t dmas = machine.dmaCount();
  memory_.resize(n);
  for (DeviceId d = 0; d < n; ++d) {
    for (size_t b = 0; b < program_.buffers.size(); ++b) {
      const Buffer &buf = program_.buffers[b];
      std::vector<double> data(static_cast<size_t>(std::max<int64_t>(0, buf.elementCount())), 0);
      // A buffer the cores of a device share (docs/model.md "TensorCores") lives in
      // memory_[memoryOf(d, b)] alone; its input values are that instance's.
      const DeviceId instance = program_.memoryOf(d, static_cast<BufferId>(b));
      if (buf.role == BufferRole::Input || buf.role == BufferRole::InOut)
        for (size_t e = 0; e < data.size(); ++e)
          data[e] = prim::roundTo(
              inputValue(inputSeed, instance, static_cast<BufferId>(b), static_cast<int64_t>(e)),
              buf.dtype);
      memory_[d].push_back(std::move(data));
    }
  }
  registers_.assign(n, std::vector<double>(std::max<int32_t>(0, program_.registerCount), 0));
  inFlight_.resize(dmas);
  const size_t width = static_cast<size_t>(n) + dmas;
  deviceClock_.assign(n, Clock(width, 0));
  // A DMA's clock exists only while it is in flight (from its start to its last
  // land chunk): N + D components for each of D DMAs would be quadratic in D.
  dmaClock_.assign(dmas, Clock{});
  sendEnd_.assign(dmas, 0);
  landEnd_.assign(dmas, 0);
  linkEnd_.assign(dmas, Clock{});
  hasLinkSuccessor_.assign(dmas, false);
  for (DmaId k = 0; k < dmas; ++k)
    if (DmaId j = machine.properties().linkPredecessor(k); j >= 0)
      hasLinkSuccessor_[j] = true;
  units_.resize(static_cast<size_t>(n) * machine.semCount());
  trace_.deviceCount = n;
  trace_.cores = program_.cores ? program_.coresPerDevice() : 0;
}

void Simulator::join(Clock &into, const Clock &from) {
  for (size_t i = 0; i < into.size(); ++i)
    into[i] = std::max(into[i], from[i]);
}

void Simulator::addUnits(DeviceId d, SemId s, int64_t count, const Clock &clock) {
  if (count <= 0)
    return;
  units_[static_cast<size_t>(d) * machine_.semCount() + s].push_back({count, clock});
}

// A wait consumes the oldest units first (docs/model.md, happens-before); the steps
// that added them happen before the wait.
void Simulator::consumeUnits(DeviceId d, SemId s, int64_t count, Clock &into) {
  std::deque<Units> &q = units_[static_cast<size_t>(d) * machine_.semCount() + s];
  while (count > 0 && !q.empty()) {
    Units &front = q.front();
    join(into, front.clock);
    int64_t take = std::min(count, front.count);
    front.count -= take;
    count -= take;
    if (front.count == 0)
      q.pop_front();
  }
}

void Simulator::addFinding(ObligationIndex o, const ControlState &before) {
  const semantics::Properties &props = machine_.properties();
  const std::string &id = props.property(props.obligation(o).property).id;
  for (const report::Finding &f : findings_)
    if (f.property == id)
      return;
  findings_.push_back(semantics::makeFinding(machine_, o, schedule_, trace_, before, "run"));
}

std::vector<double> Simulator::gather(DeviceId d, const Region &region) const {
  std::vector<double> out;
  if (region.buffer < 0 || static_cast<size_t>(region.buffer) >= program_.buffers.size())
    return out;
  const std::vector<double> &data = memory_[program_.memoryOf(d, region.buffer)][region.buffer];
  for (int64_t i : regionElements(program_.buffers[region.buffer], region))
    out.push_back(static_cast<size_t>(i) < data.size() ? data[i] : 0.0);
  return out;
}

void Simulator::scatter(DeviceId d, const Region &region, const std::vector<double> &values) {
  if (region.buffer < 0 || static_cast<size_t>(region.buffer) >= program_.buffers.size())
    return;
  const Buffer &buf = program_.buffers[region.buffer];
  std::vector<double> &data = memory_[program_.memoryOf(d, region.buffer)][region.buffer];
  std::vector<int64_t> idx = regionElements(buf, region);
  for (size_t i = 0; i < idx.size() && i < values.size(); ++i)
    if (static_cast<size_t>(idx[i]) < data.size())
      data[idx[i]] = prim::roundTo(values[i], buf.dtype);
}

void Simulator::runStore(DeviceId d, const Store &store) {
  if (store.dst.buffer < 0 || static_cast<size_t>(store.dst.buffer) >= program_.buffers.size())
    return;
  const size_t count = regionElements(program_.buffers[store.dst.buffer], store.dst).size();
  // Every load reads memory before the write (a store is atomic).
  std::vector<double> value = evaluateValue(
      store.value, [&](const Region &r) { return gather(d, r); },
      [&](RegisterId r) {
        return r >= 0 && static_cast<size_t>(r) < registers_[d].size() ? registers_[d][r] : 0.0;
      });
  std::vector<double> result(count, 0);
  for (size_t e = 0; e < count; ++e)
    result[e] = value.empty() ? 0.0 : value.size() == 1 ? value[0] : value[e % value.size()];
  scatter(d, store.dst, result);
}

// The vector-clock race check at the start of an access (a Store, or a DmaStart
// opening two intervals) whose event clock is `now`: every conflicting access that
// began earlier must have ended before it in happens-before. An earlier interval that
// is still open, or whose end (its last send or land chunk, an epoch of the DMA's
// component) is not in `now`, races; so does an earlier store (an epoch of its
// device: event i of device e has e's component i + 1) not in a new DMA's start clock.
void Simulator::raceCheck(DeviceId d, int32_t pc, const Clock &now,
                          std::vector<ObligationIndex> &found) {
  const int32_t n = machine_.deviceCount();
  const semantics::Properties &props = machine_.properties();
  auto note = [&](ObligationIndex o) {
    if (std::find(found.begin(), found.end(), o) == found.end())
      found.push_back(o);
  };
  for (ObligationIndex index : props.atEvent(d, pc)) {
    const Obligation &o = props.obligation(index);
    if (o.what != Obligation::What::Race || !machine_.started(state_, o.dma))
      continue;
    bool ordered = false;
    if (!machine_.sideOpen(state_, {o.dma, o.dst})) {
      uint32_t end = o.dst ? landEnd_[o.dma] : sendEnd_[o.dma];
      ordered = now[n + o.dma] >= end;
    }
    if (!ordered)
      note(index);
  }
  const Event &e = program_.processes[d].events[pc];
  if (const auto *ds = std::get_if<DmaStart>(&e.kind)) {
    for (ObligationIndex index : props.racesAgainst(ds->dma)) {
      const Obligation &o = props.obligation(index);
      if (!std::holds_alternative<Store>(program_.processes[o.device].events[o.pc].kind))
        continue;
      if (state_.pc[o.device] <= o.pc)
        continue; // not run yet: it will check against this DMA itself
      if (now[o.device] >= static_cast<uint32_t>(o.pc) + 1)
        continue;
      note(index);
    }
  }
}

void Simulator::step(const ScheduleStep &step) {
  if (!machine_.enabled(state_, step))
    return;
  // The findings of this step see the schedule and trace that include it.
  schedule_.push_back(step);
  report::TraceStep out;
  if (recordTrace_)
    out = semantics::traceStep(machine_, state_, step);
  std::vector<ObligationIndex> found;
  machine_.violations(state_, step, found);
  // The state the step runs from, which the findings of this step describe; copied
  // only when there is one (a copy per step would make long runs quadratic).
  std::optional<ControlState> before;
  const int32_t n = machine_.deviceCount();
  switch (step.kind) {
  case ScheduleStep::Kind::Device: {
    const DeviceId d = step.id;
    const int32_t pc = state_.pc[d];
    const Event &e = program_.processes[d].events[pc];
    Clock &clock = deviceClock_[d];
    ++clock[d];
    std::visit(support::Overloaded{
                   [&](const Store &st) {
                     raceCheck(d, pc, clock, found);
                     runStore(d, st);
                   },
                   [&](const DmaStart &ds) {
                     raceCheck(d, pc, clock, found);
                     dmaClock_[ds.dma] = clock;
                     inFlightDmas_.insert(ds.dma);
                   },
                   [&](const SemWait &w) { consumeUnits(d, w.sem, w.amount, clock); },
                   [&](const Signal &sig) { addUnits(sig.target, sig.sem, sig.amount, clock); },
                   [&](const SemRead &r) {
                     if (r.reg >= 0 && static_cast<size_t>(r.reg) < registers_[d].size())
                       registers_[d][r.reg] =
                           static_cast<double>(machine_.semValue(state_, d, r.sem));
                   },
                   [&](const DeviceBarrier &b) {
                     // Every event before any device's barrier i happens before every event
                     // after any device's barrier i: the first device to pass joins all
                     // devices' clocks (all of them are at their barrier then).
                     size_t inv = static_cast<size_t>(std::max(0, b.invocation));
                     if (barrierJoin_.size() <= inv) {
                       barrierJoin_.resize(inv + 1);
                       barrierJoined_.resize(inv + 1, false);
                     }
                     if (!barrierJoined_[inv]) {
                       Clock all(clock.size(), 0);
                       for (DeviceId o = 0; o < n; ++o)
                         join(all, deviceClock_[o]);
                       barrierJoin_[inv] = std::move(all);
                       barrierJoined_[inv] = true;
                     }
                     join(clock, barrierJoin_[inv]);
                   },
                   // No data, no clock: the control effects are the machine's.
                   [](const KernelEnter &) {},
                   [](const KernelExit &) {},
                   [](const ScopeEnter &) {},
                   [](const ScopeExit &) {},
               },
               e.kind);
    if (!found.empty())
      before = state_;
    machine_.apply(state_, step);
    break;
  }
  case ScheduleStep::Kind::Send:
  case ScheduleStep::Kind::Land: {
    const DmaId k = step.id;
    const Dma &dma = program_.dmas[k];
    const bool send = step.kind == ScheduleStep::Kind::Send;
    const int32_t chunk = machine_.nextChunk(state_, step);
    const int32_t chunks = machine_.chunks(k);
    const int64_t units = machine_.nextChunkUnits(state_, step);
    Clock &clock = dmaClock_[k];
    // --dma-order link: the previous DMA on k's link landed completely before k's first
    // land chunk (docs/model.md, "DMA order"), so its landing happens before k's.
    if (!send && chunk == 0)
      if (DmaId j = machine_.properties().linkPredecessor(k); j >= 0) {
        join(clock, linkEnd_[j]);
        Clock().swap(linkEnd_[j]);
      }
    ++clock[n + k];
    const bool last = chunk + 1 == chunks;
    if (send) {
      if (dma.sendSem)
        addUnits(dma.issuer, *dma.sendSem, units, clock);
      if (last) {
        // The engine reads the source until its last chunk leaves: what it carries is
        // the source as it is then.
        inFlight_[k] = gather(dma.issuer, dma.src);
        sendEnd_[k] = clock[n + k];
      }
    } else {
      addUnits(dma.target, dma.recvSem, units, clock);
      if (last) {
        scatter(dma.target, dma.dst, inFlight_[k]);
        landEnd_[k] = clock[n + k];
        if (hasLinkSuccessor_[k])
          linkEnd_[k] = clock;
        // The last step of the DMA (a land follows its send): free its clock and data.
        Clock().swap(clock);
        std::vector<double>().swap(inFlight_[k]);
        inFlightDmas_.erase(k);
      }
    }
    if (!found.empty())
      before = state_;
    machine_.apply(state_, step);
    break;
  }
  }
  if (recordTrace_) {
    semantics::traceValues(machine_, state_, step, out);
    trace_.steps.push_back(std::move(out));
  }
  for (ObligationIndex o : found)
    addFinding(o, *before);
}

void Simulator::finish() {
  std::vector<ScheduleStep> steps;
  enabledSteps(steps);
  if (!steps.empty())
    return;
  std::vector<ObligationIndex> stuck;
  machine_.stuck(state_, stuck);
  for (ObligationIndex o : stuck)
    addFinding(o, state_);
}

} // namespace dkv::executor
