// Tests of model::Builder: the rules of docs/model.md every frontend gets from it.
#include "model/Builder.h"
#include "model/Printer.h"
#include "model/Verifier.h"

#include <gtest/gtest.h>

namespace dkv::model {
namespace {

Buffer buffer(const std::string &name, std::vector<int64_t> shape) {
  return {name, MemSpace::Hbm, DType::F32, std::move(shape), BufferRole::InOut, kKernelScope, {}};
}

/// A builder for a one-axis mesh of `devices` with buffers a, b (f32[8]) and DMA
/// semaphores send, recv.
struct Fixture {
  explicit Fixture(int64_t devices, Options options = {}, bool collectiveId = false,
                   BuildLimits limits = {})
      : b("t.dk", "k", options, collectiveId, limits) {
    EXPECT_FALSE(b.setMesh({{"x", devices}}));
    EXPECT_FALSE(b.checkOptions());
    a = *b.addBuffer(buffer("a", {8}));
    c = *b.addBuffer(buffer("b", {8}));
    send = *b.addSemaphores("send", {}, SemKind::Dma, kKernelScope, {});
    recv = *b.addSemaphores("recv", {}, SemKind::Dma, kKernelScope, {});
  }
  DmaDescriptor remote(DeviceId target) const {
    return {true, Region{a, {{0, 8}}}, Region{c, {{0, 8}}}, target, send, recv, 32, {}};
  }
  DmaDescriptor local() const {
    return {false, Region{a, {{0, 8}}}, Region{c, {{0, 8}}}, 0, std::nullopt, recv, 32, {}};
  }
  std::vector<std::string> events(const Program &p, DeviceId d) const {
    std::vector<std::string> out;
    for (const Event &e : p.processes[d].events)
      out.push_back(describeEvent(p, e));
    return out;
  }

  Builder b;
  BufferId a = 0, c = 0;
  SemId send = 0, recv = 0;
};

TEST(Builder, EntryBarrierOnlyWithoutCollectiveId) {
  for (bool collectiveId : {false, true})
    for (bool entryBarrier : {false, true}) {
      Options o;
      o.entryBarrier = entryBarrier;
      Fixture f(1, o, collectiveId);
      f.b.beginDevice(0);
      ContextId ctx = f.b.context("inv 0");
      EXPECT_FALSE(f.b.enterKernel(0, {}, ctx));
      EXPECT_FALSE(f.b.exitKernel(0, {}, ctx));
      Program p = f.b.finish();
      bool barrier = !collectiveId && entryBarrier;
      EXPECT_EQ(p.processes[0].events.size(), barrier ? 3u : 2u);
      if (barrier) {
        EXPECT_TRUE(std::holds_alternative<DeviceBarrier>(p.processes[0].events[1].kind));
      }
    }
}

TEST(Builder, WaitsOnADescriptorCountUnits) {
  Options o;
  o.semUnit = 4;
  Fixture f(2, o);
  f.b.beginDevice(0);
  ContextId ctx = f.b.context("inv 0");
  ASSERT_FALSE(f.b.enterKernel(0, {}, ctx));
  ASSERT_FALSE(f.b.startDma(f.remote(1), 0, {}, ctx));
  ASSERT_FALSE(f.b.waitDma(f.remote(1), DmaWait::Both, {}, ctx));
  ASSERT_FALSE(f.b.waitDma(f.remote(1), DmaWait::Send, {}, ctx));
  ASSERT_FALSE(f.b.waitDma(f.remote(1), DmaWait::Recv, {}, ctx));
  ASSERT_FALSE(f.b.startDma(f.local(), 0, {}, ctx));
  ASSERT_FALSE(f.b.waitDma(f.local(), DmaWait::Both, {}, ctx));
  std::optional<BuildError> error = f.b.waitDma(f.local(), DmaWait::Send, {}, ctx);
  ASSERT_TRUE(error);
  EXPECT_EQ(error->id, "local-copy-wait");
  EXPECT_FALSE(error->fatal);
  ASSERT_FALSE(f.b.exitKernel(0, {}, ctx));
  f.b.beginDevice(1);
  ASSERT_FALSE(f.b.enterKernel(0, {}, ctx));
  ASSERT_FALSE(f.b.exitKernel(0, {}, ctx));
  Program p = f.b.finish();
  EXPECT_EQ(f.events(p, 0), (std::vector<std::string>{
                                "enter invocation 0", "device barrier (invocation 0)",
                                "start dma 0: a[:] -> device 1 b[:]", "wait send >= 8 (wait_send)",
                                "wait recv >= 8 (wait_recv)", "wait send >= 8 (wait_send)",
                                "wait recv >= 8 (wait_recv)", "start dma 1: a[:] -> device 0 b[:]",
                                "wait recv >= 8 (wait local copy)", "exit invocation 0"}));
  EXPECT_TRUE(p.dmas[1].local);
  EXPECT_FALSE(p.dmas[1].sendSem);
  EXPECT_EQ(p.dmas[0].issuer, 0);
  EXPECT_EQ(p.dmas[0].target, 1);
  EXPECT_TRUE(verifyProgram(p).empty());
}

TEST(Builder, ChunkUnitsCountTheUnitsWhoseBytesHaveArrived) {
  Options o;
  o.dmaChunks = 3;
  Fixture f(1, o);
  f.b.beginDevice(0);
  ContextId ctx = f.b.context("inv 0");
  DmaDescriptor d = f.local();
  d.bytes = 32; // 32 units in 3 chunks: 10, 11, 11 (floor(32 (c + 1) / 3) - floor(32 c / 3))
  ASSERT_FALSE(f.b.startDma(d, 0, {}, ctx));
  d.bytes = 2; // fewer units than chunks: 0, 1, 1 (the last unit comes with the last byte)
  ASSERT_FALSE(f.b.startDma(d, 0, {}, ctx));
  const Program &p = f.b.program();
  EXPECT_EQ(p.dmas[0].landUnits, (std::vector<int64_t>{10, 11, 11}));
  EXPECT_EQ(p.dmas[0].sendUnits, p.dmas[0].landUnits);
  EXPECT_EQ(p.dmas[1].landUnits, (std::vector<int64_t>{0, 1, 1}));
}

// A side whose semaphore is regular adds exactly 1, with its last chunk, whatever the byte
// count; a DMA semaphore side keeps counting bytes (docs/model.md "Regular semaphores on
// a DMA"). The model allows a DMA with one side of each kind.
TEST(Builder, RegularSemaphoreSideAddsOneWithItsLastChunk) {
  Options o;
  o.dmaChunks = 3;
  Fixture f(1, o); // remote DMAs to the device itself: one process holds every increment
  const SemId rs = *f.b.addSemaphores("rs", {}, SemKind::Regular, kKernelScope, {});
  const SemId rr = *f.b.addSemaphores("rr", {}, SemKind::Regular, kKernelScope, {});
  f.b.beginDevice(0);
  ContextId ctx = f.b.context("inv 0");
  ASSERT_FALSE(f.b.enterKernel(0, {}, ctx));
  DmaDescriptor both = f.remote(0);
  both.sendSem = rs;
  both.recvSem = rr;
  ASSERT_FALSE(f.b.startDma(both, 0, {}, ctx));
  DmaDescriptor mixed = f.remote(0);
  mixed.recvSem = rr;
  ASSERT_FALSE(f.b.startDma(mixed, 0, {}, ctx));
  DmaDescriptor local = f.local();
  local.recvSem = rr;
  local.bytes = 0; // an empty copy still adds its 1
  ASSERT_FALSE(f.b.startDma(local, 0, {}, ctx));
  // A descriptor wait would take the byte count: refused on a regular semaphore.
  std::optional<BuildError> wait = f.b.waitDma(both, DmaWait::Recv, {}, ctx);
  ASSERT_TRUE(wait);
  EXPECT_EQ(wait->id, "sem-kind");
  const Program &p = f.b.program();
  const std::vector<int64_t> last{0, 0, 1};
  EXPECT_EQ(p.dmas[0].sendUnits, last);
  EXPECT_EQ(p.dmas[0].landUnits, last);
  EXPECT_EQ(p.dmas[1].sendUnits, (std::vector<int64_t>{10, 11, 11}));
  EXPECT_EQ(p.dmas[1].landUnits, last);
  EXPECT_EQ(p.dmas[2].landUnits, last);
  EXPECT_EQ(completionUnits(1), std::vector<int64_t>{1});
  // The increments follow each side: rr gets 1 per DMA landing on it, rs 1, and send 32.
  std::vector<std::vector<Increment>> incs = p.increments();
  EXPECT_EQ(incrementTotals(incs)[rr], 3);
  EXPECT_EQ(incrementTotals(incs)[rs], 1);
  EXPECT_EQ(incrementTotals(incs)[f.send], 32);
}

// Every split sums to the DMA's units, never decreases the count of units whose bytes
// are in (floor((c + 1) U / K) after chunk c), and gives the last chunk a unit.
TEST(Builder, ChunkUnitsLastChunkCarriesTheLastUnit) {
  for (int64_t units : std::vector<int64_t>{0, 1, 2, 5, 31, 32, 33, 64, 1000, int64_t{1} << 40}) {
    for (int32_t chunks : {1, 2, 3, 7, 32, 33, 64}) {
      std::vector<int64_t> split = chunkUnits(units, chunks);
      ASSERT_EQ(split.size(), static_cast<size_t>(chunks));
      int64_t sum = 0;
      for (int32_t c = 0; c < chunks; ++c) {
        sum += split[c];
        // (c + 1) U / K without overflowing for the large U.
        const int64_t in = units / chunks * (c + 1) + units % chunks * (c + 1) / chunks;
        EXPECT_EQ(sum, in) << units << " units, " << chunks << " chunks, chunk " << c;
      }
      EXPECT_EQ(sum, units);
      if (units > 0) {
        EXPECT_GE(split.back(), 1) << units << " units, " << chunks << " chunks";
      }
    }
  }
}

TEST(Builder, DmaSizeMustBeAMultipleOfTheUnit) {
  Options o;
  o.semUnit = 3;
  Fixture f(1, o);
  EXPECT_FALSE(f.b.checkDmaBytes(33));
  std::optional<BuildError> error = f.b.checkDmaBytes(32);
  ASSERT_TRUE(error);
  EXPECT_EQ(error->id, "dma-size-unit");
  EXPECT_EQ(error->message, "the DMA moves 32 bytes, not a multiple of the semaphore unit 3");
}

TEST(Builder, SemaphoreArraysAreFlattenedRowMajor) {
  Fixture f(1);
  Built<SemId> first = f.b.addSemaphores("caps", {2, 3}, SemKind::Regular, kKernelScope, {});
  ASSERT_TRUE(first.ok());
  const Program &p = f.b.program();
  EXPECT_EQ(p.semaphores.size(), 2u + 6u);
  EXPECT_EQ(Builder::element(*first, {2, 3}, {1, 2}), *first + 5);
  EXPECT_EQ(p.semName(Builder::element(*first, {2, 3}, {1, 0})), "caps[1, 0]");
  EXPECT_EQ(p.semName(*first + 2), "caps[0, 2]");
}

TEST(Builder, DevicesGetRowMajorCoordinates) {
  Builder b("t.dk", "k", {}, false);
  ASSERT_FALSE(b.setMesh({{"x", 2}, {"y", 3}}));
  EXPECT_EQ(b.deviceCount(), 6);
  for (DeviceId d = 0; d < 6; ++d)
    EXPECT_EQ(b.beginDevice(d), (std::vector<int64_t>{d / 3, d % 3}));
}

TEST(Builder, LimitsAreFatalInstanceTooLarge) {
  BuildLimits limits;
  limits.maxDevices = 4;
  limits.maxEvents = 3;
  limits.maxIterations = 10;
  limits.maxElements = 64;
  limits.maxSemaphores = 8;
  Builder b("t.dk", "k", {}, false, limits);
  std::optional<BuildError> error = b.setMesh({{"x", 5}});
  ASSERT_TRUE(error);
  EXPECT_EQ(error->id, "instance-too-large");
  EXPECT_TRUE(error->fatal);
  EXPECT_EQ(error->message, "the mesh has more than 4 devices");

  ASSERT_FALSE(b.setMesh({{"x", 2}}));
  EXPECT_TRUE(b.addBuffer(buffer("a", {32})).ok());
  Built<BufferId> big = b.addBuffer(buffer("b", {1}));
  ASSERT_FALSE(big.ok());
  EXPECT_TRUE(big.error().fatal);
  EXPECT_EQ(big.error().message, "the buffers have more than 64 elements over all 2 device(s) "
                                 "(at 'b', 1 elements); use smaller shapes or fewer devices");
  EXPECT_TRUE(b.addSemaphores("s", {4}, SemKind::Regular, kKernelScope, {}).ok());
  EXPECT_FALSE(b.addSemaphores("t", {1}, SemKind::Regular, kKernelScope, {}).ok());
  EXPECT_FALSE(b.spendIterations(10));
  EXPECT_TRUE(b.spendIterations(1));
  b.beginDevice(0);
  ContextId ctx = b.context("inv 0");
  EXPECT_FALSE(b.enterKernel(0, {}, ctx)); // enter and barrier: 2 events
  EXPECT_FALSE(b.exitKernel(0, {}, ctx));
  error = b.append(KernelEnter{1}, {}, ctx);
  ASSERT_TRUE(error);
  EXPECT_TRUE(error->fatal);
  EXPECT_EQ(error->message, "the instance has more than 3 events; use fewer devices, grid steps "
                            "or loop iterations");
}

TEST(Builder, BadOptions) {
  Options o;
  o.dmaChunks = 0;
  Builder b("t.dk", "k", o, false);
  std::optional<BuildError> error = b.checkOptions();
  ASSERT_TRUE(error);
  EXPECT_EQ(error->id, "bad-option");
  EXPECT_FALSE(error->fatal);
}

TEST(Builder, ContextsAreInterned) {
  Builder b("t.dk", "k", {}, false);
  ASSERT_FALSE(b.setMesh({{"x", 1}}));
  EXPECT_EQ(b.context("inv 0"), 0);
  EXPECT_EQ(b.context("inv 0, i=1"), 1);
  EXPECT_EQ(b.context("inv 0"), 0);
  EXPECT_EQ(b.program().contexts.size(), 2u);
}

} // namespace
} // namespace dkv::model
