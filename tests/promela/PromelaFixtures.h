// Small model programs built in code for the Promela engine's tests and benchmark.
#pragma once

#include "executor/Executor.h"
#include "model/Builder.h"
#include "model/Model.h"
#include "promela/Emit.h"
#include "promela/Spin.h"
#include "semantics/Machine.h"
#include "semantics/Witness.h"

#include <string>
#include <utility>

namespace dkv::promela::testing {

using namespace model;

/// Builds a Program device by device; every event gets a source line.
class ProgramBuilder {
public:
  ProgramBuilder(const std::string &kernel, int devices, Options options = {}) {
    p_.file = "fixture.dk";
    p_.kernel = kernel;
    p_.mesh = {{"x", devices}};
    p_.options = options;
    p_.contexts = {"inv 0"};
    for (int d = 0; d < devices; ++d)
      p_.processes.push_back({d, {d}, {}});
  }

  BufferId buffer(const std::string &name, int64_t size, BufferRole role = BufferRole::InOut) {
    p_.buffers.push_back({name, MemSpace::Hbm, DType::F32, {size}, role, kKernelScope, {1, 1}});
    return static_cast<BufferId>(p_.buffers.size() - 1);
  }
  SemId sem(const std::string &name, SemKind kind, uint32_t line = 2) {
    p_.semaphores.push_back({name, {}, kind, kKernelScope, {line, 3}});
    return static_cast<SemId>(p_.semaphores.size() - 1);
  }
  void event(DeviceId d, EventKind kind, uint32_t line) {
    p_.processes[d].events.push_back({std::move(kind), {line, 3}, 0});
  }
  /// Enter (plus the entry barrier when the options ask for it).
  void enter(DeviceId d, uint32_t line = 3) {
    event(d, KernelEnter{0}, line);
    if (p_.options.entryBarrier && !p_.hasCollectiveId)
      event(d, DeviceBarrier{0}, line);
  }
  /// A remote DMA of `elements` f32 from `src` on `issuer` to `dst` on `target`,
  /// started by `issuer` now (a DmaStart event at `line`).
  DmaId remoteCopy(DeviceId issuer, DeviceId target, Region src, Region dst, SemId send, SemId recv,
                   uint32_t line) {
    Dma dma;
    dma.id = static_cast<DmaId>(p_.dmas.size());
    dma.issuer = issuer;
    dma.target = target;
    dma.src = std::move(src);
    dma.dst = std::move(dst);
    dma.sendSem = send;
    dma.recvSem = recv;
    dma.bytes = dma.src.elementCount() * 4;
    dma.sendUnits = dma.landUnits =
        model::chunkUnits(dma.bytes / p_.options.semUnit, p_.options.dmaChunks);
    dma.loc = {line, 3};
    dma.descriptorLoc = {line, 3};
    p_.dmas.push_back(dma);
    event(issuer, DmaStart{dma.id}, line);
    return dma.id;
  }
  /// A local copy on `device` from `src` to `dst` counted on `sem`, started now.
  DmaId localCopy(DeviceId device, Region src, Region dst, SemId sem, int32_t invocation,
                  uint32_t line) {
    DmaId k = remoteCopy(device, device, std::move(src), std::move(dst), sem, sem, line);
    p_.dmas[k].sendSem.reset();
    p_.dmas[k].local = true;
    p_.dmas[k].invocation = invocation;
    return k;
  }
  ScopeId scope(const std::string &name) {
    p_.scopes.push_back({name, kKernelScope, {4, 3}});
    return static_cast<ScopeId>(p_.scopes.size() - 1);
  }
  int64_t units(DmaId k) const { return p_.dmas[k].bytes / p_.options.semUnit; }

  Program &program() { return p_; }

private:
  Program p_;
};

inline Region whole(BufferId b, int64_t size) { return Region{b, {{0, size}}}; }

/// lax.ppermute by +1 on `devices` devices: every device DMAs input[:] into output[:]
/// of its right neighbour, then waits for its send and for the DMA from its left.
/// Without `withWaits` the devices leave at once (exit violation).
inline Program rightPermute(int devices, bool withWaits = true, Options options = {}) {
  ProgramBuilder b("right_permute", devices, options);
  BufferId input = b.buffer("input", 8, BufferRole::Input);
  BufferId output = b.buffer("output", 8, BufferRole::Output);
  SemId send = b.sem("send", SemKind::Dma);
  SemId recv = b.sem("recv", SemKind::Dma);
  for (int d = 0; d < devices; ++d) {
    b.enter(d);
    DmaId k = b.remoteCopy(d, (d + 1) % devices, whole(input, 8), whole(output, 8), send, recv, 5);
    if (withWaits) {
      b.event(d, SemWait{send, b.units(k), WaitOrigin::DmaWaitSend}, 6);
      b.event(d, SemWait{recv, b.units(k), WaitOrigin::DmaWaitRecv}, 6);
    }
    b.event(d, KernelExit{0}, 7);
  }
  return std::move(b.program());
}

/// Devices 0 and 2 both DMA into output[:] of device 1 (one receive semaphore;
/// device 1 waits for both): the two destination writes overlap (race).
inline Program twoWriters() {
  ProgramBuilder b("two_senders", 3);
  BufferId input = b.buffer("input", 8, BufferRole::Input);
  BufferId output = b.buffer("output", 8, BufferRole::Output);
  SemId send = b.sem("send", SemKind::Dma);
  SemId recv = b.sem("recv", SemKind::Dma);
  for (int d = 0; d < 3; ++d)
    b.enter(d);
  for (int d : {0, 2}) {
    DmaId k = b.remoteCopy(d, 1, whole(input, 8), whole(output, 8), send, recv, 8);
    b.event(d, SemWait{send, b.units(k), WaitOrigin::DmaWaitSend}, 9);
  }
  b.event(1, SemWait{recv, 64, WaitOrigin::DmaWaitRecv}, 11);
  for (int d = 0; d < 3; ++d)
    b.event(d, KernelExit{0}, 12);
  return std::move(b.program());
}

/// Device 1 waits for `ready`, which nobody signals (deadlock).
inline Program waitNeverSignalled() {
  ProgramBuilder b("wait_never_signalled", 2);
  SemId ready = b.sem("ready", SemKind::Regular);
  for (int d = 0; d < 2; ++d)
    b.enter(d);
  b.event(1, SemWait{ready, 1, WaitOrigin::Wait}, 6);
  for (int d = 0; d < 2; ++d)
    b.event(d, KernelExit{0}, 7);
  return std::move(b.program());
}

/// Without the entry barrier, device 0 signals `ready` on device 1 right after it
/// entered: device 1 may not have entered yet (lifetime violation).
inline Program signalBeforeEnter() {
  Options o;
  o.entryBarrier = false;
  ProgramBuilder b("signal_early", 2, o);
  SemId ready = b.sem("ready", SemKind::Regular);
  for (int d = 0; d < 2; ++d)
    b.enter(d);
  b.event(0, Signal{1, ready, 1}, 5);
  b.event(1, SemWait{ready, 1, WaitOrigin::Wait}, 6);
  for (int d = 0; d < 2; ++d)
    b.event(d, KernelExit{0}, 7);
  return std::move(b.program());
}

/// Device 0 sends a[:] and b[:] to device 1 with two DMAs on one receive semaphore.
/// Device 1 waits for a's bytes, then reads a, then waits for b's bytes and reads b:
/// the first wait can be satisfied by b's bytes while a is still landing (race).
inline Program sharedRecvSemaphore(Options options = {}) {
  ProgramBuilder b("shared_recv_sem", 2, options);
  BufferId a = b.buffer("a", 4);
  BufferId bb = b.buffer("b", 4);
  BufferId out = b.buffer("out", 4, BufferRole::Output);
  SemId send = b.sem("send", SemKind::Dma);
  SemId recv = b.sem("recv", SemKind::Dma);
  for (int d = 0; d < 2; ++d)
    b.enter(d);
  DmaId ka = b.remoteCopy(0, 1, whole(a, 4), whole(a, 4), send, recv, 10);
  DmaId kb = b.remoteCopy(0, 1, whole(bb, 4), whole(bb, 4), send, recv, 11);
  b.event(0, SemWait{send, b.units(ka), WaitOrigin::DmaWaitSend}, 12);
  b.event(0, SemWait{send, b.units(kb), WaitOrigin::DmaWaitSend}, 13);
  auto copyInto = [&](BufferId from, uint32_t line) {
    Store store;
    store.dst = whole(out, 4);
    ValueNode load;
    load.op = ValueNode::Op::Load;
    load.region = whole(from, 4);
    load.shape = {4};
    store.value.nodes.push_back(load);
    store.value.root = 0;
    store.reads = {whole(from, 4)};
    b.event(1, std::move(store), line);
  };
  b.event(1, SemWait{recv, b.units(ka), WaitOrigin::DmaWaitRecv}, 15);
  copyInto(a, 16);
  b.event(1, SemWait{recv, b.units(kb), WaitOrigin::DmaWaitRecv}, 17);
  copyInto(bb, 18);
  for (int d = 0; d < 2; ++d)
    b.event(d, KernelExit{0}, 20);
  return std::move(b.program());
}

/// A kernel with a collective_id on 2 devices run `invocations` times: the devices
/// handshake through the barrier semaphore, then each copies input into a scoped
/// scratch buffer (local copy on a scoped DMA semaphore), reads the semaphore, and
/// stores the scratch into output. With `waitForCopy` false the store reads the
/// scratch while the copy may still be writing it (race).
inline Program collectiveScopedCopy(int invocations, bool waitForCopy = true) {
  Options o;
  o.invocations = invocations;
  ProgramBuilder b("collective_scoped_copy", 2, o);
  Program &p = b.program();
  p.hasCollectiveId = true;
  p.registerCount = 1;
  BufferId input = b.buffer("input", 8, BufferRole::Input);
  BufferId output = b.buffer("output", 8, BufferRole::Output);
  ScopeId scope = b.scope("run_scoped@4");
  BufferId scratch = b.buffer("scratch", 8, BufferRole::Scratch);
  p.buffers[scratch].scope = scope;
  SemId barrier = b.sem("barrier", SemKind::Barrier);
  SemId copySem = b.sem("copy_sem", SemKind::Dma);
  p.semaphores[copySem].scope = scope;
  for (int i = 0; i < invocations; ++i)
    for (int d = 0; d < 2; ++d) {
      b.event(d, KernelEnter{i}, 3);
      b.event(d, Signal{1 - d, barrier, 1}, 4);
      b.event(d, SemWait{barrier, 1, WaitOrigin::Wait}, 5);
      b.event(d, ScopeEnter{scope}, 6);
      DmaId k = b.localCopy(d, whole(input, 8), whole(scratch, 8), copySem, i, 7);
      if (waitForCopy)
        b.event(d, SemWait{copySem, b.units(k), WaitOrigin::DmaWaitLocal}, 8);
      b.event(d, SemRead{copySem, 0}, 9);
      Store store;
      store.dst = whole(output, 8);
      ValueNode load;
      load.op = ValueNode::Op::Load;
      load.region = whole(scratch, 8);
      load.shape = {8};
      store.value.nodes.push_back(load);
      store.value.root = 0;
      store.reads = {whole(scratch, 8)};
      b.event(d, std::move(store), 10);
      if (!waitForCopy)
        b.event(d, SemWait{copySem, b.units(k), WaitOrigin::DmaWaitLocal}, 11);
      b.event(d, ScopeExit{scope}, 12);
      b.event(d, KernelExit{i}, 13);
    }
  return std::move(b.program());
}

} // namespace dkv::promela::testing

// Conveniences for the tests: the engine's entry points on a bare program, each
// building the program's semantics::Instance for the call (the driver builds it once).
namespace dkv::promela {

inline std::string emitPromela(const model::Program &program, const EmitOptions &options,
                               LineMap *map) {
  semantics::Properties properties(program);
  return emitPromela(properties, options, map);
}

/// checkWithSpin, then the verdict every engine gets (semantics::buildVerdict and the
/// executor's confirmation), without the static pre-check.
inline report::Verdict checkWithSpin(const model::Program &program, const SpinOptions &options) {
  semantics::Instance instance(program);
  report::Verdict v = semantics::buildVerdict(instance.machine(),
                                              checkWithSpin(instance.machine(), options), "spin");
  executor::confirmFindings(instance.machine(), v.findings);
  return v;
}

/// The exhaustive search's verdict on the same program, to compare with spin's.
inline report::Verdict exploreVerdict(const model::Program &program) {
  semantics::Instance instance(program);
  return semantics::buildVerdict(instance.machine(), executor::explore(instance.machine(), {}),
                                 "explore");
}

} // namespace dkv::promela
