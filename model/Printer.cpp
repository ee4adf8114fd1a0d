// Prints the model in a stable, readable text form.
#include "model/Printer.h"

#include "support/Invariant.h"
#include "support/Overloaded.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <ostream>

namespace dkv::model {

namespace {

std::string locText(SourceLoc loc) {
  if (!loc.valid())
    return "-";
  return fmt::format("{}:{}", loc.line, loc.col);
}

std::string shapeText(const std::vector<int64_t> &shape) {
  return fmt::format("[{}]", fmt::join(shape, ", "));
}

const char *roleName(BufferRole role) {
  switch (role) {
  case BufferRole::Input:
    return "in";
  case BufferRole::Output:
    return "out";
  case BufferRole::InOut:
    return "inout";
  case BufferRole::Scratch:
    return "scratch";
  }
  DKV_UNREACHABLE("buffer role");
}

std::string scopeText(const Program &program, ScopeId scope) {
  if (scope == kKernelScope)
    return "";
  return " in " + program.scopes[scope].name;
}

std::string numberText(double value, bool integer) {
  if (value == static_cast<double>(static_cast<int64_t>(value)))
    return fmt::format("{}{}", static_cast<int64_t>(value), integer ? "" : ".0");
  return fmt::format("{}", value);
}

/// `integer`: the value is stored into an integer buffer, whose integral constants print
/// without a fraction ("= 3", not "= 3.0"). Each op prints as its catalogue record says
/// (prim/Ops.def: `model` is its name): an element-wise op with a Python operator infix
/// (`(a + b)`, `-a`), any other as a call of its operands and attributes.
std::string valueText(const Program &program, const ValueExpr &expr, int32_t node, bool integer) {
  DKV_INVARIANT(node >= 0 && static_cast<size_t>(node) < expr.nodes.size(), "value node");
  const ValueNode &n = expr.nodes[node];
  auto operand = [&](int32_t i) { return valueText(program, expr, i, integer); };
  const prim::OpRecord &r = prim::record(n.op);
  std::string name(r.model);
  switch (r.shape) {
  case prim::ShapeRule::Leaf:
    if (n.op == ValueNode::Op::Load)
      return program.regionName(n.region);
    if (n.op == ValueNode::Op::Register)
      return fmt::format("r{}", n.reg);
    if (!n.shape.empty())
      return fmt::format("full([{}], {})", fmt::join(n.shape, ", "),
                         numberText(n.constant, integer));
    return numberText(n.constant, integer);
  case prim::ShapeRule::Broadcast: {
    std::vector<std::string> args;
    for (int32_t i : {n.lhs, n.rhs, n.third})
      if (i >= 0)
        args.push_back(operand(i));
    if (!r.pyOperator.empty())
      return args.size() == 1 ? fmt::format("{}{}", name, args[0])
                              : fmt::format("({} {} {})", args[0], name, args[1]);
    if (r.type == prim::TypeRule::Explicit || r.type == prim::TypeRule::Reinterpret)
      args.emplace_back(prim::dkName(n.dtype));
    if (!n.approximate) // gelu's erf form
      args.emplace_back("approximate=false");
    return fmt::format("{}({})", name, fmt::join(args, ", "));
  }
  case prim::ShapeRule::Contract:
    return fmt::format("{}({}, {})", name, operand(n.lhs), operand(n.rhs));
  case prim::ShapeRule::Reduce:
    if (n.axis < 0)
      return fmt::format("{}({})", name, operand(n.lhs));
    return fmt::format("{}({}, axis={})", name, operand(n.lhs), n.axis);
  case prim::ShapeRule::Reshape:
    return fmt::format("{}({}, [{}])", name, operand(n.lhs), fmt::join(n.shape, ", "));
  case prim::ShapeRule::Concat:
    return fmt::format("{}({}, {}, axis={})", name, operand(n.lhs), operand(n.rhs), n.axis);
  case prim::ShapeRule::Split:
    return fmt::format("{}({}, axis={}, {}:{})", name, operand(n.lhs), n.axis, n.begin, n.end);
  case prim::ShapeRule::Create:
    return fmt::format("{}([{}], axis={})", name, fmt::join(n.shape, ", "), n.axis);
  }
  DKV_UNREACHABLE("value op");
}

const char *waitOriginName(WaitOrigin origin) {
  switch (origin) {
  case WaitOrigin::Wait:
    return "wait";
  case WaitOrigin::DmaWaitSend:
    return "wait_send";
  case WaitOrigin::DmaWaitRecv:
    return "wait_recv";
  case WaitOrigin::DmaWaitLocal:
    return "wait local copy";
  }
  DKV_UNREACHABLE("wait origin");
}

} // namespace

std::string describeEvent(const Program &program, const Event &event) {
  return std::visit(
      support::Overloaded{
          [&](const KernelEnter &e) { return fmt::format("enter invocation {}", e.invocation); },
          [&](const KernelExit &e) { return fmt::format("exit invocation {}", e.invocation); },
          [&](const DeviceBarrier &e) {
            return fmt::format("device barrier (invocation {})", e.invocation);
          },
          [&](const ScopeEnter &e) {
            return fmt::format("enter {}", program.scopes[e.scope].name);
          },
          [&](const ScopeExit &e) { return fmt::format("exit {}", program.scopes[e.scope].name); },
          [&](const Store &e) {
            return fmt::format("store {} = {}", program.regionName(e.dst),
                               valueText(program, e.value, e.value.root,
                                         prim::isInteger(program.buffers[e.dst.buffer].dtype)));
          },
          [&](const DmaStart &e) {
            const Dma &dma = program.dmas[e.dma];
            return fmt::format("start dma {}: {} -> {} {}", e.dma, program.regionName(dma.src),
                               program.processName(dma.target), program.regionName(dma.dst));
          },
          [&](const SemWait &e) {
            return fmt::format("wait {} >= {} ({})", program.semName(e.sem), e.amount,
                               waitOriginName(e.origin));
          },
          [&](const Signal &e) {
            return fmt::format("signal {} += {} on {}", program.semName(e.sem), e.amount,
                               program.processName(e.target));
          },
          [&](const SemRead &e) {
            return fmt::format("r{} = read {}", e.reg, program.semName(e.sem));
          },
      },
      event.kind);
}

void printProgram(const Program &program, std::ostream &out) {
  out << fmt::format("model of kernel {} from {}\n", program.kernel, program.file);
  std::vector<std::string> axes;
  for (const MeshAxis &axis : program.mesh)
    axes.push_back(fmt::format("{}={}", axis.name, axis.size));
  if (program.cores)
    out << fmt::format("mesh {}, tensorcore mesh {}={} ({} processes: {} devices x {} cores)\n",
                       fmt::join(axes, ", "), program.cores->name, program.cores->size,
                       program.deviceCount(), program.deviceCount() / program.coresPerDevice(),
                       program.coresPerDevice());
  else
    out << fmt::format("mesh {} ({} devices)\n", fmt::join(axes, ", "), program.deviceCount());
  const Options &o = program.options;
  // dma-order only when it is not the default, entry-barrier-cores only on a mesh of
  // several cores, so the printouts of other instances stay as they were.
  const bool cores = program.coresPerDevice() > 1;
  out << fmt::format(
      "options invocations={} dma-chunks={} sem-unit={} entry-barrier={}{}{}\n", o.invocations,
      o.dmaChunks, o.semUnit,
      program.hasCollectiveId       ? "no (collective_id)"
      : program.implicitBarrierOn() ? "yes"
      : o.entryBarrier              ? "no (entry-barrier-cores none)"
                                    : "no",
      o.dmaOrder == DmaOrder::Any ? "" : fmt::format(" dma-order={}", dmaOrderName(o.dmaOrder)),
      cores ? fmt::format(" entry-barrier-cores={}", entryBarrierCoresName(o.entryBarrierCores))
            : "");
  for (const auto &[name, contents] : program.tables)
    out << fmt::format("table {} = {}\n", name, contents);
  for (size_t i = 0; i < program.calls.size(); ++i) {
    const Call &c = program.calls[i];
    out << fmt::format("call {} {}{}  @{}\n", i, program.kernels[c.kernel],
                       c.implicitBarrier ? " (implicit entry barrier)" : "", locText(c.loc));
  }
  // A sequence: whose scratch a buffer or semaphore is, or the calls an array lives in.
  auto owner = [&](int32_t kernel, int32_t first, int32_t last) -> std::string {
    if (program.calls.empty())
      return "";
    if (first >= 0)
      return fmt::format(" (calls {}..{})", first, last);
    return kernel >= 0 ? fmt::format(" (of {})", program.kernels[kernel]) : "";
  };
  out << "\nbuffers:\n";
  for (size_t i = 0; i < program.buffers.size(); ++i) {
    const Buffer &b = program.buffers[i];
    out << fmt::format("  b{} {}: {} {} {}{} ({} B){}{}  @{}\n", i, b.name, roleName(b.role),
                       prim::dkName(b.space), prim::dkName(b.dtype), shapeText(b.shape),
                       b.byteSize(), scopeText(program, b.scope),
                       owner(b.kernel, b.liveFirst, b.liveLast), locText(b.loc));
  }
  out << "semaphores:\n";
  for (size_t i = 0; i < program.semaphores.size(); ++i) {
    const Semaphore &s = program.semaphores[i];
    out << fmt::format("  s{} {}: {}{}{}  @{}\n", i, program.semName(static_cast<SemId>(i)),
                       semKindName(s.kind), scopeText(program, s.scope),
                       owner(s.kernel, s.liveFirst, s.liveLast), locText(s.loc));
  }
  if (!program.scopes.empty()) {
    out << "scopes:\n";
    for (size_t i = 0; i < program.scopes.size(); ++i)
      out << fmt::format("  {}  @{}\n", program.scopes[i].name, locText(program.scopes[i].loc));
  }
  out << "dmas:\n";
  for (const Dma &d : program.dmas) {
    // A semaphore's process: its number, or "d1c0" (device 1, core 0) on a TensorCore mesh.
    auto at = [&](DeviceId p) {
      return program.cores
                 ? fmt::format("d{}c{}", p / program.coresPerDevice(), p % program.coresPerDevice())
                 : std::to_string(p);
    };
    std::string sems =
        d.sendSem ? fmt::format("send sem {}@{}, recv sem {}@{}", program.semName(*d.sendSem),
                                at(d.issuer), program.semName(d.recvSem), at(d.target))
                  : fmt::format("sem {}@{}", program.semName(d.recvSem), at(d.target));
    // One list when both sides count alike (bytes on DMA semaphores) or there is one
    // semaphore (a local copy); else each side's.
    std::string units =
        d.local || d.sendUnits == d.landUnits
            ? fmt::format("units [{}]", fmt::join(d.landUnits, ", "))
            : fmt::format("send units [{}], land units [{}]", fmt::join(d.sendUnits, ", "),
                          fmt::join(d.landUnits, ", "));
    out << fmt::format("  dma {}: {} {} {} -> {} {}, {} B, {}, {}{}  @{}\n", d.id,
                       d.local ? "local" : "remote", program.processName(d.issuer),
                       program.regionName(d.src), program.processName(d.target),
                       program.regionName(d.dst), d.bytes, sems, units,
                       d.priority ? fmt::format(", priority {}", d.priority) : "", locText(d.loc));
  }
  for (const Process &p : program.processes) {
    std::vector<std::string> coords;
    for (size_t a = 0; a < p.coords.size() && a < program.mesh.size(); ++a)
      coords.push_back(fmt::format("{}={}", program.mesh[a].name, p.coords[a]));
    if (program.cores)
      coords.push_back(fmt::format("{}={}", program.cores->name, p.core));
    out << fmt::format("\n{} ({}): {} events\n", program.processName(p.device),
                       fmt::join(coords, ", "), p.events.size());
    ContextId context = -1;
    for (size_t i = 0; i < p.events.size(); ++i) {
      const Event &e = p.events[i];
      if (e.context != context) {
        context = e.context;
        if (context >= 0 && static_cast<size_t>(context) < program.contexts.size())
          out << "  -- " << program.contexts[context] << "\n";
      }
      out << fmt::format("  {:>4}  {:<60} @{}\n", i, describeEvent(program, e), locText(e.loc));
    }
  }
}

} // namespace dkv::model
