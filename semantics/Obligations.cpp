// Each obligation kind as a predicate over state facts (docs/model.md section 4).
#include "semantics/Obligations.h"

#include "support/Invariant.h"

namespace dkv::semantics {

namespace {

Literal is(Fact f) { return {f, false}; }
Literal isNot(Fact f) { return {f, true}; }

Fact sideOpen(model::DmaId dma, bool dst) {
  return {.kind = Fact::Kind::SideOpen, .dma = dma, .dst = dst};
}
Fact semNonZero(model::DeviceId device, model::SemId sem) {
  return {.kind = Fact::Kind::SemNonZero, .device = device, .sem = sem};
}
Fact within(model::DeviceId device, int32_t first, int32_t last) {
  return {.kind = Fact::Kind::Within, .device = device, .first = first, .last = last};
}
Fact inScope(model::DeviceId device, model::ScopeId scope) {
  return {.kind = Fact::Kind::InScope, .device = device, .scope = scope};
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
  case What::Stuck:
    return {{is({.kind = Fact::Kind::Stuck, .device = o.device, .pc = o.pc})}};
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
