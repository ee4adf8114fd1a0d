// Each obligation kind as a predicate over state facts (docs/model.md section 4).
#include "semantics/Obligations.h"

#include "support/Invariant.h"

namespace dkv::semantics {

namespace {

Literal is(Fact f) { return {f, false}; }
Literal isNot(Fact f) { return {f, true}; }

Fact sideOpen(model::DmaId dma, bool dst) {
  Fact f;
  f.kind = Fact::Kind::SideOpen;
  f.dma = dma;
  f.dst = dst;
  return f;
}

Fact semNonZero(model::DeviceId device, model::SemId sem) {
  Fact f;
  f.kind = Fact::Kind::SemNonZero;
  f.device = device;
  f.sem = sem;
  return f;
}

Fact within(model::DeviceId device, int32_t first, int32_t last) {
  Fact f;
  f.kind = Fact::Kind::Within;
  f.device = device;
  f.first = first;
  f.last = last;
  return f;
}

Fact inScope(model::DeviceId device, model::ScopeId scope) {
  Fact f;
  f.kind = Fact::Kind::InScope;
  f.device = device;
  f.scope = scope;
  return f;
}

} // namespace

Predicate violation(const Obligation &o) {
  using What = Obligation::What;
  switch (o.what) {
  case What::Race: // the access while the other DMA's side is open
    return {{is(sideOpen(o.dma, o.dst))}};
  case What::ExitSemaphore: // leaving with a non-zero semaphore
    return {{is(semNonZero(o.device, o.sem))}};
  case What::ExitSend: // leaving while a DMA it issued still reads its source
    return {{is(sideOpen(o.dma, false))}};
  case What::ExitRecv: // leaving while a DMA to it still writes its destination
    return {{is(sideOpen(o.dma, true))}};
  case What::LandInvocation: // landing on a device outside the DMA's invocation(s)
    return {{isNot(within(o.device, o.invocation, o.invocationLast))}};
  case What::LandScope: // in the invocation, but outside the destination's scope
    return {{is(within(o.device, o.invocation, o.invocation)), isNot(inScope(o.device, o.scope))}};
  case What::SignalInvocation: // a signal reaching a device outside the invocation(s)
    return {{isNot(within(o.target, o.invocation, o.invocationLast))}};
  case What::SlotSignal: // units reaching a slot another live semaphore holds
    return {{is(within(o.target, o.invocation, o.invocation)), is(inScope(o.target, o.scope))}};
  case What::SlotLand:
    return {{is(within(o.device, o.invocation, o.invocation)), is(inScope(o.device, o.scope))}};
  case What::SlotEnter: // entering a scope whose slot still holds units
    return {{is(semNonZero(o.device, o.sem))}};
  case What::Stuck: {
    Fact f;
    f.kind = Fact::Kind::Stuck;
    f.device = o.device;
    f.pc = o.pc;
    return {{is(f)}};
  }
  }
  DKV_UNREACHABLE("obligation kind");
}

CheckedAt checkedAt(const Obligation &o) {
  // From the obligation's own data: a deadlock is a state's; an obligation without an
  // event (pc -1) belongs to its DMA's land chunks (Properties::atLand).
  if (reads(violation(o), Fact::Kind::Stuck, [](const Fact &) { return true; }))
    return CheckedAt::Deadlock;
  return o.pc < 0 ? CheckedAt::Land : CheckedAt::Event;
}

} // namespace dkv::semantics
