// Small model programs built in code for the model unit tests.
#pragma once

#include "model/Model.h"

namespace dkv::model::testing {

/// Two devices on one axis `x`; each sends `buf` to the other with one remote DMA
/// (send sem s0, recv sem s1) and waits for both sides unless `withWaits` is false.
inline Program ringPermute(bool withWaits = true) {
  Program p;
  p.file = "fixture.dk";
  p.kernel = "permute";
  p.mesh = {{"x", 2}};
  p.buffers.push_back(
      {"input", MemSpace::Hbm, DType::F32, {8}, BufferRole::Input, kKernelScope, {1, 1}});
  p.buffers.push_back(
      {"output", MemSpace::Hbm, DType::F32, {8}, BufferRole::Output, kKernelScope, {1, 2}});
  p.semaphores.push_back({"send", {}, SemKind::Dma, kKernelScope, {2, 1}});
  p.semaphores.push_back({"recv", {}, SemKind::Dma, kKernelScope, {2, 2}});
  p.contexts = {"inv 0"};
  for (DeviceId d = 0; d < 2; ++d) {
    Dma dma;
    dma.id = d;
    dma.issuer = d;
    dma.target = 1 - d;
    dma.src = Region{0, {{0, 8}}};
    dma.dst = Region{1, {{0, 8}}};
    dma.sendSem = 0;
    dma.recvSem = 1;
    dma.bytes = 32;
    dma.sendUnits = dma.landUnits = {32};
    dma.loc = {5, 3};
    p.dmas.push_back(dma);
    Process proc;
    proc.device = d;
    proc.coords = {d};
    proc.events.push_back({KernelEnter{0}, {3, 1}, 0});
    proc.events.push_back({DmaStart{d}, {5, 3}, 0});
    if (withWaits) {
      proc.events.push_back({SemWait{0, 32, WaitOrigin::DmaWaitSend}, {6, 3}, 0});
      proc.events.push_back({SemWait{1, 32, WaitOrigin::DmaWaitRecv}, {6, 3}, 0});
    }
    proc.events.push_back({KernelExit{0}, {7, 1}, 0});
    p.processes.push_back(std::move(proc));
  }
  return p;
}

} // namespace dkv::model::testing
