// The model verifier.
#include "model/Verifier.h"

#include "model/Builder.h"
#include "prim/Infer.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace dkv::model {

namespace {

class Verifier {
public:
  explicit Verifier(const Program &program) : p_(program) {}

  std::vector<std::string> run() {
    checkDeclarations();
    const int32_t cores = p_.coresPerDevice();
    if (cores < 1 || p_.processes.size() % static_cast<size_t>(cores) != 0)
      problem("{} processes for {} cores per device", p_.processes.size(), cores);
    // A buffer the cores share is the caller's (a parameter): its lifetime is the run,
    // not a scope that each core enters on its own.
    for (size_t b = 0; b < p_.buffers.size(); ++b)
      if (p_.sharedByCores(static_cast<BufferId>(b)) && p_.buffers[b].role == BufferRole::Scratch)
        problem("buffer {}: scratch in hbm / any shared by the cores", p_.buffers[b].name);
    std::vector<int> startCount(p_.dmas.size(), 0);
    for (size_t d = 0; d < p_.processes.size(); ++d) {
      const Process &proc = p_.processes[d];
      if (proc.device != static_cast<DeviceId>(d))
        problem("process {} has device id {}", d, proc.device);
      if (cores >= 1 && proc.core != static_cast<int32_t>(d % static_cast<size_t>(cores)))
        problem("process {} has core {} ({} cores per device)", d, proc.core, cores);
      int32_t inside = -1;
      int32_t nextInvocation = 0;
      for (size_t i = 0; i < proc.events.size(); ++i)
        checkEvent(static_cast<DeviceId>(d), i, proc.events[i], inside, nextInvocation, startCount);
      if (inside != -1)
        problem("device {} ends inside invocation {}", d, inside);
      if (nextInvocation != p_.options.invocations)
        problem("device {} runs {} invocations, options say {}", d, nextInvocation,
                p_.options.invocations);
    }
    for (size_t k = 0; k < p_.dmas.size(); ++k)
      if (startCount[k] != 1)
        problem("dma {} is started {} times", k, startCount[k]);
    return std::move(problems_);
  }

private:
  template <class... Args> void problem(fmt::format_string<Args...> f, Args &&...args) {
    problems_.push_back(fmt::format(f, std::forward<Args>(args)...));
  }

  bool validDevice(DeviceId d) const { return d >= 0 && d < p_.deviceCount(); }
  bool validSem(SemId s) const { return s >= 0 && static_cast<size_t>(s) < p_.semaphores.size(); }

  static int64_t count(const std::vector<int64_t> &shape) {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    return n;
  }

  // Every node's operands come before it and their shapes fit the operation
  // (docs/model.md "Values").
  void checkValue(const Store &st, const std::string &what) {
    const auto &nodes = st.value.nodes;
    if (st.value.root < 0 || static_cast<size_t>(st.value.root) >= nodes.size()) {
      problem("{}: store value has no root", what);
      return;
    }
    for (size_t i = 0; i < nodes.size(); ++i) {
      const ValueNode &n = nodes[i];
      for (int32_t d : {n.lhs, n.rhs, n.third})
        if (d >= static_cast<int32_t>(i) || d < -1) {
          problem("{}: value node {} has operand {}", what, i, d);
          return;
        }
      if (!fits(nodes, n))
        problem("{}: value node {} does not fit its operands", what, i);
    }
    int64_t root = count(nodes[st.value.root].shape);
    if (root != 1 && root != st.dst.elementCount())
      problem("{}: value of {} elements stored into {}", what, root, st.dst.elementCount());
  }

  // Whether node `n`'s shape is the one its record's rule gives its operands
  // (prim::inferType, the function sema and lowering ask).
  static bool fits(const std::vector<ValueNode> &nodes, const ValueNode &n) {
    const prim::OpRecord &r = prim::record(n.op);
    std::vector<prim::ValueType> operands;
    for (int32_t d : {n.lhs, n.rhs, n.third})
      if (d >= 0) {
        const ValueNode &o = nodes[d];
        // A mask or a per-device condition (a constant) where a condition goes; a
        // comparison's mask where a value goes (astype).
        const prim::ParamKind kind = prim::operandKind(n.op, operands.size());
        if (r.shape == prim::ShapeRule::Broadcast &&
            (kind == prim::ParamKind::Cond ||
             (kind == prim::ParamKind::Value && prim::record(o.op).type == prim::TypeRule::Mask)))
          operands.push_back(prim::ValueType::mask(o.shape));
        else
          operands.push_back(prim::ValueType::array({o.dtype}, o.shape));
      }
    if (r.shape != prim::ShapeRule::Leaf && r.shape != prim::ShapeRule::Create &&
        static_cast<int>(operands.size()) !=
            (r.shape == prim::ShapeRule::Broadcast ? prim::arity(n.op)
             : r.shape == prim::ShapeRule::Contract || r.shape == prim::ShapeRule::Concat ? 2
                                                                                          : 1))
      return false;
    prim::Attrs attrs;
    if (n.axis >= 0)
      attrs.axis = n.axis;
    attrs.dtype = n.dtype;
    switch (r.shape) {
    case prim::ShapeRule::Leaf:
      if (n.op == ValueNode::Op::Register)
        return n.shape.empty();
      if (n.op == ValueNode::Op::Load)
        return count(n.shape) == n.region.elementCount();
      return true; // a constant is broadcast to its shape
    case prim::ShapeRule::Split: {
      // The model's part of a split: elements begin .. end along the axis.
      std::vector<int64_t> expect = operands[0].shape;
      const size_t axis = static_cast<size_t>(n.axis);
      if (n.axis < 0 || axis >= expect.size() || n.begin < 0 || n.begin > n.end ||
          n.end > expect[axis])
        return false;
      expect[axis] = n.end - n.begin;
      return n.shape == expect;
    }
    case prim::ShapeRule::Reshape:
    case prim::ShapeRule::Create:
      attrs.dims = n.shape;
      break;
    case prim::ShapeRule::Broadcast:
      if (n.op == ValueNode::Op::Bitcast)
        operands[0].elem = {n.from};
      break;
    case prim::ShapeRule::Contract:
    case prim::ShapeRule::Reduce:
    case prim::ShapeRule::Concat:
      break;
    }
    prim::TypeResult t = prim::inferType(n.op, operands, attrs, prim::name(n.op));
    return !t.error && t.type.shape == n.shape;
  }

  void checkRegion(const Region &r, const std::string &what) {
    if (r.buffer < 0 || static_cast<size_t>(r.buffer) >= p_.buffers.size()) {
      problem("{}: buffer id {} out of range", what, r.buffer);
      return;
    }
    const Buffer &b = p_.buffers[r.buffer];
    if (r.ranges.size() != b.shape.size()) {
      problem("{}: region of {} has rank {}, buffer has rank {}", what, b.name, r.ranges.size(),
              b.shape.size());
      return;
    }
    for (size_t i = 0; i < r.ranges.size(); ++i)
      if (r.ranges[i].begin < 0 || r.ranges[i].end > b.shape[i] ||
          r.ranges[i].begin > r.ranges[i].end)
        problem("{}: range {}:{} of {} dimension {} outside [0, {})", what, r.ranges[i].begin,
                r.ranges[i].end, b.name, i, b.shape[i]);
  }

  void checkDeclarations() {
    if (p_.options.invocations < 1 || p_.options.dmaChunks < 1 || p_.options.semUnit < 1)
      problem("options out of range");
    for (const Semaphore &s : p_.semaphores)
      if (s.scope != kKernelScope &&
          (s.scope < 0 || static_cast<size_t>(s.scope) >= p_.scopes.size()))
        problem("semaphore {} has scope {} out of range", s.name, s.scope);
    for (const Buffer &b : p_.buffers)
      if (b.scope != kKernelScope &&
          (b.scope < 0 || static_cast<size_t>(b.scope) >= p_.scopes.size()))
        problem("buffer {} has scope {} out of range", b.name, b.scope);
    // A sequence: one call per invocation, owners and windows in range.
    const auto calls = static_cast<int32_t>(p_.calls.size());
    const auto kernels = static_cast<int32_t>(p_.kernels.size());
    if (calls > 0 && p_.options.invocations != calls)
      problem("{} calls, options say {} invocations", calls, p_.options.invocations);
    // One run of the sequence has sequenceLength calls; `calls` repeats them per run.
    const int32_t length = p_.sequenceLength;
    if ((calls > 0) != (length > 0) || (length > 0 && calls % length != 0))
      problem("{} calls are no whole number of runs of {} calls", calls, length);
    for (int32_t i = length; length > 0 && i < calls; ++i)
      if (p_.calls[i].kernel != p_.calls[i % length].kernel)
        problem("call {} differs from call {} of the first run", i, i % length);
    for (const Call &c : p_.calls)
      if (c.kernel < 0 || c.kernel >= kernels)
        problem("a call of kernel {} out of range", c.kernel);
    auto owned = [&](const std::string &name, int32_t kernel, int32_t first, int32_t last) {
      if (kernel >= kernels || (kernel >= 0 && first >= 0) ||
          (first >= 0 && (first > last || last >= length)) || (first < 0 && last >= 0) ||
          (calls == 0 && (kernel >= 0 || first >= 0)))
        problem("{}: owner {} or window {}..{} out of range", name, kernel, first, last);
    };
    for (const Buffer &b : p_.buffers)
      owned(b.name, b.kernel, b.liveFirst, b.liveLast);
    for (const Semaphore &s : p_.semaphores)
      owned(s.name, s.kernel, s.liveFirst, s.liveLast);
    for (size_t k = 0; k < p_.dmas.size(); ++k) {
      const Dma &d = p_.dmas[k];
      std::string what = fmt::format("dma {}", k);
      if (d.id != static_cast<DmaId>(k))
        problem("{} has id {}", what, d.id);
      if (!validDevice(d.issuer) || !validDevice(d.target)) {
        problem("{}: device out of range", what);
        continue;
      }
      checkRegion(d.src, what + " src");
      checkRegion(d.dst, what + " dst");
      if (d.local != !d.sendSem.has_value())
        problem("{}: a local copy has no send semaphore, a remote one has one", what);
      if (d.local && d.target != d.issuer)
        problem("{}: local copy to another device", what);
      if (!validSem(d.recvSem) || (d.sendSem && !validSem(*d.sendSem))) {
        problem("{}: semaphore id out of range", what);
        continue;
      }
      if (d.bytes % p_.options.semUnit != 0)
        problem("{}: {} B is not a multiple of the semaphore unit {}", what, d.bytes,
                p_.options.semUnit);
      // Each side counts its own way (docs/model.md "Regular semaphores on a DMA"): a DMA
      // semaphore the bytes, in units; a regular one 1, with the side's last chunk.
      auto side = [&](const std::vector<int64_t> &units, std::optional<SemId> sem,
                      std::string_view name) {
        if (static_cast<int32_t>(units.size()) != p_.options.dmaChunks) {
          problem("{}: {} {} chunks, options say {}", what, units.size(), name,
                  p_.options.dmaChunks);
          return;
        }
        const SemKind kind = sem ? p_.semaphores[*sem].kind : SemKind::Dma;
        if (kind == SemKind::Barrier) {
          problem("{}: the {} semaphore is a barrier semaphore", what, name);
          return;
        }
        if (kind == SemKind::Regular) {
          if (units != completionUnits(p_.options.dmaChunks))
            problem("{}: {} units [{}] on a regular semaphore, expected 1 with the last chunk",
                    what, name, fmt::join(units, ", "));
          return;
        }
        int64_t sum = 0;
        for (int64_t u : units)
          sum += u;
        if (sum != d.bytes / p_.options.semUnit)
          problem("{}: {} chunk units sum to {}, expected {} B / {}", what, name, sum, d.bytes,
                  p_.options.semUnit);
      };
      side(d.sendUnits, d.sendSem, "send");
      side(d.landUnits, d.recvSem, "land");
      if (d.invocation < 0 || d.invocation >= p_.options.invocations)
        problem("{}: invocation {} out of range", what, d.invocation);
    }
  }

  void checkEvent(DeviceId d, size_t index, const Event &e, int32_t &inside,
                  int32_t &nextInvocation, std::vector<int> &startCount) {
    std::string what = fmt::format("device {} event {}", d, index);
    if (e.context < 0 ||
        (static_cast<size_t>(e.context) >= p_.contexts.size() && !p_.contexts.empty()))
      problem("{}: context {} out of range", what, e.context);
    bool isEnter = std::holds_alternative<KernelEnter>(e.kind);
    if (!isEnter && inside < 0)
      problem("{}: event outside the kernel", what);
    std::visit(
        [&](const auto &ev) {
          using T = std::decay_t<decltype(ev)>;
          if constexpr (std::is_same_v<T, KernelEnter>) {
            if (inside >= 0 || ev.invocation != nextInvocation)
              problem("{}: enter invocation {} out of order", what, ev.invocation);
            inside = ev.invocation;
            ++nextInvocation;
          } else if constexpr (std::is_same_v<T, KernelExit>) {
            if (ev.invocation != inside)
              problem("{}: exit of invocation {} while in {}", what, ev.invocation, inside);
            inside = -1;
          } else if constexpr (std::is_same_v<T, DeviceBarrier>) {
            if (ev.invocation != inside)
              problem("{}: barrier of invocation {} while in {}", what, ev.invocation, inside);
          } else if constexpr (std::is_same_v<T, ScopeEnter> || std::is_same_v<T, ScopeExit>) {
            if (ev.scope < 0 || static_cast<size_t>(ev.scope) >= p_.scopes.size())
              problem("{}: scope {} out of range", what, ev.scope);
          } else if constexpr (std::is_same_v<T, Store>) {
            checkRegion(ev.dst, what + " store");
            for (const Region &r : ev.reads)
              checkRegion(r, what + " load");
            checkValue(ev, what);
            // The cores of a device share its hbm / any buffers only through DMAs (a
            // TensorCore loads and stores VMEM and SMEM; docs/model.md "TensorCores"):
            // no race rule orders the stores of two processes.
            if (p_.sharedByCores(ev.dst.buffer))
              problem("{}: store to a buffer the cores share", what);
            for (const Region &r : ev.reads)
              if (p_.sharedByCores(r.buffer))
                problem("{}: load of a buffer the cores share", what);
          } else if constexpr (std::is_same_v<T, DmaStart>) {
            if (ev.dma < 0 || static_cast<size_t>(ev.dma) >= p_.dmas.size()) {
              problem("{}: dma {} out of range", what, ev.dma);
              return;
            }
            ++startCount[ev.dma];
            if (p_.dmas[ev.dma].issuer != d)
              problem("{}: starts dma {} of device {}", what, ev.dma, p_.dmas[ev.dma].issuer);
            if (p_.dmas[ev.dma].invocation != inside)
              problem("{}: starts dma {} of invocation {}", what, ev.dma,
                      p_.dmas[ev.dma].invocation);
          } else if constexpr (std::is_same_v<T, SemWait>) {
            if (!validSem(ev.sem) || ev.amount < 0)
              problem("{}: wait on semaphore {} amount {}", what, ev.sem, ev.amount);
          } else if constexpr (std::is_same_v<T, Signal>) {
            if (!validSem(ev.sem) || !validDevice(ev.target) || ev.amount < 0)
              problem("{}: signal of semaphore {} on device {} amount {}", what, ev.sem, ev.target,
                      ev.amount);
          } else if constexpr (std::is_same_v<T, SemRead>) {
            if (!validSem(ev.sem) || ev.reg < 0 || ev.reg >= p_.registerCount)
              problem("{}: read of semaphore {} into r{}", what, ev.sem, ev.reg);
          } else {
            static_assert(sizeof(T) == 0, "every event kind must be verified");
          }
        },
        e.kind);
  }

  const Program &p_;
  std::vector<std::string> problems_;
};

} // namespace

std::vector<std::string> verifyProgram(const Program &program) { return Verifier(program).run(); }

} // namespace dkv::model
