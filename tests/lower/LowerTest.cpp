// Tests of lowering: each construct of the language becomes the events docs/model.md says.
#include "lower/Lower.h"
#include "frontend/AST.h"
#include "frontend/Parser.h"
#include "frontend/Sema.h"
#include "model/Printer.h"
#include "model/Verifier.h"

#include <gtest/gtest.h>

#include <chrono>
#include <sstream>

namespace dkv::lower {
namespace {

using namespace dkv::frontend;

struct Lowered {
  std::optional<model::Program> program;
  std::string diagnostics;
};

Lowered lowerText(const std::string &text, std::map<std::string, int64_t> defines = {},
                  model::Options options = {}, model::BuildLimits limits = {},
                  const Tables &tables = {}) {
  support::SourceManager sources;
  const support::SourceFile &file = sources.file(sources.add("test.dk", text));
  support::DiagnosticEngine diags(&sources);
  Lowered out;
  auto module = parseModule(file, diags);
  if (!diags.hasErrors() && analyze(*module, defines, diags, tables) && !diags.hasErrors())
    out.program = lower(*module, "test.dk", options, diags, limits);
  std::ostringstream rendered;
  diags.render(rendered);
  out.diagnostics = rendered.str();
  if (out.program) {
    auto problems = model::verifyProgram(*out.program);
    EXPECT_TRUE(problems.empty()) << problems.front();
  }
  return out;
}

// A kernel that is the second file of a manager: every location the frontend and
// lowering make carries that file's id, and diagnostics name that file.
TEST(Lower, LocationsOfASecondFileCarryItsId) {
  support::SourceManager sources;
  sources.add("main.dk", "");
  const support::SourceFile &file = sources.file(sources.add("second.dk", R"(
mesh x = 2
kernel k(in a: hbm f32[8], out b: hbm f32[8]) {
  scratch send: dma_sem, recv: dma_sem
  let c = remote_copy(a, b, send, recv, device = (axis_index(x) + 1) % 2)
  c.start()
  c.wait()
}
)"));
  ASSERT_EQ(file.id(), 1u);
  support::DiagnosticEngine diags(&sources);
  auto module = parseModule(file, diags);
  ASSERT_TRUE(analyze(*module, {}, diags));
  EXPECT_EQ(module->range().begin, (support::SourceLoc{1, 1, 1}));
  EXPECT_EQ(module->kernel()->range().begin, (support::SourceLoc{3, 1, 1}));
  std::optional<model::Program> program = lower(*module, "second.dk", {}, diags);
  ASSERT_TRUE(program);
  size_t located = 0;
  for (const model::Process &p : program->processes)
    for (const model::Event &e : p.events) {
      EXPECT_EQ(e.loc.file, 1u) << model::describeEvent(*program, e);
      located += e.loc.valid();
    }
  EXPECT_GT(located, 0u);
  for (const model::Dma &d : program->dmas) {
    EXPECT_EQ(d.loc.file, 1u);
    EXPECT_EQ(d.descriptorLoc.file, 1u);
  }
  for (const model::Semaphore &s : program->semaphores)
    EXPECT_EQ(s.loc.file, 1u);

  // Syntax and semantic errors of the second file name it.
  const support::SourceFile &bad = sources.file(sources.add("bad.dk", "mesh x = 2\nkernel k( {\n"));
  support::DiagnosticEngine badDiags(&sources);
  parseModule(bad, badDiags);
  std::ostringstream rendered;
  badDiags.render(rendered);
  EXPECT_EQ(rendered.str().rfind("bad.dk:2:", 0), 0u) << rendered.str();
  const support::SourceFile &empty = sources.file(sources.add("empty.dk", "param N = 2\n"));
  support::DiagnosticEngine emptyDiags(&sources);
  auto emptyModule = parseModule(empty, emptyDiags);
  EXPECT_FALSE(analyze(*emptyModule, {{"M", 1}}, emptyDiags));
  std::ostringstream emptyRendered;
  emptyDiags.render(emptyRendered);
  EXPECT_NE(emptyRendered.str().find("empty.dk:1:1: error: no mesh declared"), std::string::npos)
      << emptyRendered.str();
  EXPECT_NE(emptyRendered.str().find("empty.dk: error: -D M=1 names no param"), std::string::npos)
      << emptyRendered.str();
}

/// The events of one device, one line each (without locations).
std::vector<std::string> eventsOf(const model::Program &p, model::DeviceId d) {
  std::vector<std::string> out;
  for (const model::Event &e : p.processes[d].events)
    out.push_back(model::describeEvent(p, e));
  return out;
}

const char *kPermute = R"(
param N = 4
mesh x = N
kernel k(in a: hbm f32[8], out b: hbm f32[8]) {
  scratch send: dma_sem, recv: dma_sem
  let right = (axis_index(x) + 1) % N
  let c = remote_copy(a, b, send, recv, device = right)
  c.start()
  c.wait()
}
)";

TEST(Lower, RemoteCopyBecomesStartAndByteCountingWaits) {
  Lowered l = lowerText(kPermute, {{"N", 3}});
  ASSERT_TRUE(l.program) << l.diagnostics;
  const model::Program &p = *l.program;
  ASSERT_EQ(p.deviceCount(), 3);
  ASSERT_EQ(p.dmas.size(), 3u);
  EXPECT_EQ(p.dmas[2].issuer, 2);
  EXPECT_EQ(p.dmas[2].target, 0); // (2 + 1) % 3
  EXPECT_EQ(p.dmas[2].bytes, 32);
  EXPECT_EQ(p.dmas[2].landUnits, std::vector<int64_t>{32});
  EXPECT_EQ(p.dmas[2].sendUnits, std::vector<int64_t>{32});
  EXPECT_FALSE(p.dmas[2].local);
  EXPECT_EQ(eventsOf(p, 2), (std::vector<std::string>{
                                "enter invocation 0", "device barrier (invocation 0)",
                                "start dma 2: a[:] -> device 0 b[:]", "wait send >= 32 (wait_send)",
                                "wait recv >= 32 (wait_recv)", "exit invocation 0"}));
}

TEST(Lower, OptionsChangeInvocationsChunksUnitsAndBarrier) {
  model::Options options;
  options.invocations = 2;
  options.dmaChunks = 3;
  options.semUnit = 4;
  options.entryBarrier = false;
  Lowered l = lowerText(kPermute, {{"N", 2}}, options);
  ASSERT_TRUE(l.program) << l.diagnostics;
  const model::Program &p = *l.program;
  ASSERT_EQ(p.dmas.size(), 4u); // 2 devices x 2 invocations
  EXPECT_EQ(p.dmas[1].invocation, 1);
  EXPECT_EQ(p.dmas[0].landUnits, (std::vector<int64_t>{2, 3, 3})); // 32 B / 4 = 8 units
  auto events = eventsOf(p, 0);
  EXPECT_EQ(events.front(), "enter invocation 0");
  EXPECT_EQ(events[1], "start dma 0: a[:] -> device 1 b[:]");
  EXPECT_EQ(events[2], "wait send >= 8 (wait_send)");
  EXPECT_EQ(events.back(), "exit invocation 1");
}

TEST(Lower, SemUnitMustDivideDmaSize) {
  model::Options options;
  options.semUnit = 3;
  Lowered l = lowerText(kPermute, {{"N", 2}}, options);
  EXPECT_FALSE(l.program);
  EXPECT_NE(l.diagnostics.find("[dma-size-unit]"), std::string::npos) << l.diagnostics;
}

TEST(Lower, GridLoopsAndIfsUnrollPerDevice) {
  Lowered l = lowerText(R"(
mesh x = 2
kernel k(out o: vmem f32[4, 2]) grid(2) {
  scratch s: sem[2]
  for i in 0 .. 2 {
    if program_id(0) == i and axis_index(x) == 1 {
      signal(s[i], 2, device = 0)
    } else if i == 1 {
      o[program_id(0) + 2 * i, :] = 1.5
    }
  }
}
)");
  ASSERT_TRUE(l.program) << l.diagnostics;
  const model::Program &p = *l.program;
  EXPECT_EQ(eventsOf(p, 1),
            (std::vector<std::string>{"enter invocation 0", "device barrier (invocation 0)",
                                      "signal s[0] += 2 on device 0", "store o[2, :] = 1.5",
                                      "signal s[1] += 2 on device 0", "exit invocation 0"}));
  EXPECT_EQ(eventsOf(p, 0)[2], "store o[2, :] = 1.5");
  EXPECT_EQ(eventsOf(p, 0)[3], "store o[3, :] = 1.5");
  // contexts name the grid point and loop variable
  EXPECT_EQ(p.contexts[p.processes[1].events[2].context], "inv 0, grid (0), i=0");
}

TEST(Lower, StoresKeepTheirValueAndReads) {
  Lowered l = lowerText(R"(
mesh x = 2
kernel k(in a: vmem f32[2, 4], out o: vmem f32[4]) {
  o[...] = a[1] * 2.0 + a[0, :]
  o[0:2] += -a[0, 2:4]
}
)");
  ASSERT_TRUE(l.program) << l.diagnostics;
  const model::Program &p = *l.program;
  auto events = eventsOf(p, 0);
  EXPECT_EQ(events[2], "store o[:] = ((a[1, :] * 2.0) + a[0, :])");
  EXPECT_EQ(events[3], "store o[0:2] = (o[0:2] + -a[0, 2:4])");
  const auto &acc = std::get<model::Store>(p.processes[0].events[3].kind);
  EXPECT_TRUE(acc.accumulate);
  ASSERT_EQ(acc.reads.size(), 2u);
}

// Compute on values: every node has its shape, a store reads exactly its ref
// operands' regions.
TEST(Lower, ComputeNodesHaveShapesAndReadTheirOperands) {
  Lowered l = lowerText(R"(
mesh x = 2
kernel k(in a: vmem f32[2, 4], in b: vmem f32[4, 3], out o: vmem bf16[2, 3], out r: vmem f32[2]) {
  o[...] = astype(dot(a, b), bf16)
  r[...] = sum(where(a > 1.0, a, 0.0), axis = 1)
}
)");
  ASSERT_TRUE(l.program) << l.diagnostics;
  const model::Program &p = *l.program;
  auto events = eventsOf(p, 0);
  EXPECT_EQ(events[2], "store o[:, :] = astype(dot(a[:, :], b[:, :]), bf16)");
  EXPECT_EQ(events[3], "store r[:] = sum(where((a[:, :] > 1.0), a[:, :], 0.0), axis=1)");
  const auto &mm = std::get<model::Store>(p.processes[0].events[2].kind);
  ASSERT_EQ(mm.reads.size(), 2u);
  EXPECT_EQ(p.regionName(mm.reads[0]), "a[:, :]");
  EXPECT_EQ(p.regionName(mm.reads[1]), "b[:, :]");
  EXPECT_EQ(mm.value.nodes[mm.value.root].shape, (std::vector<int64_t>{2, 3}));
  const auto &red = std::get<model::Store>(p.processes[0].events[3].kind);
  EXPECT_EQ(red.reads.size(), 2u); // `a` twice: the condition and the value
  EXPECT_EQ(red.value.nodes[red.value.root].shape, (std::vector<int64_t>{2}));
}

// Extents known only per device are checked per device.
TEST(Lower, ComputeShapesPerDevice) {
  Lowered reshape = lowerText(R"(
mesh x = 2
kernel k(in a: vmem f32[2, 4], out o: vmem f32[4]) {
  o[...] = reshape(a[0:axis_index(x) + 1], (4,))
}
)");
  EXPECT_FALSE(reshape.program);
  EXPECT_NE(reshape.diagnostics.find("[reshape-size]"), std::string::npos) << reshape.diagnostics;
  EXPECT_NE(reshape.diagnostics.find("on device 1"), std::string::npos) << reshape.diagnostics;
  Lowered dot = lowerText(R"(
mesh x = 2
kernel k(in a: vmem f32[2, 4], in b: vmem f32[4, 3], out o: vmem f32[2, 3]) {
  o[...] = dot(a[:, 0:axis_index(x) + 3], b)
}
)");
  EXPECT_FALSE(dot.program);
  EXPECT_NE(dot.diagnostics.find("[store-shape-mismatch]"), std::string::npos) << dot.diagnostics;
  EXPECT_NE(dot.diagnostics.find("on device 0"), std::string::npos) << dot.diagnostics;
}

TEST(Lower, DevicesAsCoordinatesAndMappings) {
  Lowered l = lowerText(R"(
mesh x = 2, y = 3
kernel k() {
  scratch s: sem
  signal(s, 1, device = (1, 2))
  signal(s, 1, device = {y: 0})
  signal(s, 1, device = 4)
}
)");
  ASSERT_TRUE(l.program) << l.diagnostics;
  const model::Program &p = *l.program;
  ASSERT_EQ(p.deviceCount(), 6);
  EXPECT_EQ(p.processes[4].coords, (std::vector<int64_t>{1, 1}));
  auto events = eventsOf(p, 4);
  EXPECT_EQ(events[2], "signal s += 1 on device 5");
  EXPECT_EQ(events[3], "signal s += 1 on device 3"); // x stays 1, y = 0
  EXPECT_EQ(events[4], "signal s += 1 on device 4");
}

TEST(Lower, DeviceOutOfRangeIsReportedOncePerPlace) {
  Lowered l = lowerText(R"(
param N = 4
mesh x = N
kernel k() {
  scratch s: sem
  signal(s, 1, device = axis_index(x) + 1)
}
)");
  EXPECT_FALSE(l.program);
  EXPECT_NE(l.diagnostics.find("test.dk:6:"), std::string::npos) << l.diagnostics;
  EXPECT_NE(l.diagnostics.find("device id 4 is out of range: the mesh has 4 devices (on device 3)"),
            std::string::npos)
      << l.diagnostics;
  EXPECT_EQ(
      l.diagnostics.find("device-out-of-range", l.diagnostics.find("device-out-of-range") + 1),
      std::string::npos)
      << "reported twice: " << l.diagnostics;
}

TEST(Lower, PerDeviceSliceOutOfBounds) {
  Lowered l = lowerText(R"(
mesh x = 4
kernel k(out o: vmem f32[6]) {
  o[axis_index(x) * 2 : axis_index(x) * 2 + 2] = 1.0
}
)");
  EXPECT_FALSE(l.program);
  EXPECT_NE(
      l.diagnostics.find("slice 6:8 is out of bounds for dimension 0 of 'o' (size 6) on device 3"),
      std::string::npos)
      << l.diagnostics;
}

TEST(Lower, ScopedAllocationsGetScopeEvents) {
  Lowered l = lowerText(R"(
mesh x = 2
kernel k(in a: vmem f32[4]) {
  run_scoped(t: vmem f32[4], s: dma_sem) {
    let c = copy(a, t, s)
    c.start()
    c.wait()
  }
}
)");
  ASSERT_TRUE(l.program) << l.diagnostics;
  const model::Program &p = *l.program;
  ASSERT_EQ(p.scopes.size(), 1u);
  EXPECT_EQ(p.buffers[1].scope, 0);
  EXPECT_EQ(p.semaphores[0].scope, 0);
  auto events = eventsOf(p, 0);
  EXPECT_EQ(events[2], "enter run_scoped@4");
  EXPECT_EQ(events[4], "wait s >= 16 (wait local copy)");
  EXPECT_EQ(events[5], "exit run_scoped@4");
  EXPECT_TRUE(p.dmas[0].local);
  EXPECT_FALSE(p.dmas[0].sendSem.has_value());
}

TEST(Lower, RuntimeValueCannotDecideControlFlow) {
  Lowered l = lowerText(R"(
mesh x = 2
kernel k(out o: smem i32[1]) {
  scratch s: sem
  let v = read(s)
  o[0] = v
  if v > 0 {
    signal(s)
  }
}
)");
  EXPECT_FALSE(l.program);
  EXPECT_NE(l.diagnostics.find("[unsupported]"), std::string::npos) << l.diagnostics;
  EXPECT_NE(l.diagnostics.find("test.dk:7:"), std::string::npos) << l.diagnostics;
}

TEST(Lower, BarrierSemaphoreAndNoImplicitBarrierWithCollectiveId) {
  Lowered l = lowerText(R"(
mesh x = 2
kernel k() collective_id(0) {
  signal(barrier, 1, device = 1 - axis_index(x))
  wait(barrier, 1)
}
)");
  ASSERT_TRUE(l.program) << l.diagnostics;
  const model::Program &p = *l.program;
  ASSERT_TRUE(p.barrierSemaphore().has_value());
  EXPECT_EQ(eventsOf(p, 0),
            (std::vector<std::string>{"enter invocation 0", "signal barrier += 1 on device 1",
                                      "wait barrier >= 1 (wait)", "exit invocation 0"}));
}

TEST(Lower, TooLargeInstanceIsAnError) {
  Lowered l = lowerText(R"(
mesh x = 2
kernel k() {
  scratch s: sem
  for i in 0 .. 1000000 {
    for j in 0 .. 1000 {
      signal(s)
    }
  }
}
)",
                        {}, {}, model::BuildLimits{100'000, 4096});
  EXPECT_FALSE(l.program);
  EXPECT_NE(l.diagnostics.find("[instance-too-large]"), std::string::npos) << l.diagnostics;
}

// Instances whose size is absurd are an `instance-too-large` error, quickly, before the
// lowering (or the executor after it) loops or allocates for them.
void expectTooLarge(const std::string &text, const std::string &what) {
  auto start = std::chrono::steady_clock::now();
  Lowered l = lowerText(text);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 2.0)
      << text;
  EXPECT_FALSE(l.program) << text;
  EXPECT_NE(l.diagnostics.find("[instance-too-large]"), std::string::npos) << l.diagnostics;
  EXPECT_NE(l.diagnostics.find(what), std::string::npos) << l.diagnostics;
}

TEST(Lower, HugeGridsAndLoopsWithoutEventsAreTooLarge) {
  // Bodies without events: the event limit never triggers, the iteration limit does.
  expectTooLarge("mesh x = 2\nkernel k() grid(1000000000) {}\n", "loop iterations");
  expectTooLarge("mesh x = 2\nkernel k() grid(1000000000, 1000000000) {\n  let a = 1\n}\n",
                 "loop iterations");
  // The number of grid points overflows 64 bits (it used to wrap to 0 points).
  expectTooLarge("mesh x = 2\nkernel k() grid(4294967296, 4294967296, 4294967296) {}\n",
                 "loop iterations");
  expectTooLarge("mesh x = 2\nkernel k() {\n  for i in 0 .. 1000000000 {}\n}\n", "loop iterations");
  expectTooLarge("mesh x = 2\nkernel k() {\n  for i in -9223372036854775807 - 1 .. "
                 "9223372036854775807 {\n    let j = i\n  }\n}\n",
                 "loop iterations");
  expectTooLarge(
      "mesh x = 2\nkernel k() {\n  for i in 0 .. 100000 {\n    for j in 0 .. 100000 {}\n  }\n}\n",
      "loop iterations");
}

TEST(Lower, IterationLimitCountsEveryDeviceAndInvocation) {
  const char *text = "mesh x = 4\nkernel k() grid(10) {\n  for i in 0 .. 10 {}\n}\n";
  // 4 devices x (10 grid points + 10 x 10 loop iterations) = 440.
  EXPECT_TRUE(lowerText(text, {}, {}, model::BuildLimits{100'000, 4096, 440}).program);
  Lowered l = lowerText(text, {}, {}, model::BuildLimits{100'000, 4096, 439});
  EXPECT_FALSE(l.program);
  EXPECT_NE(l.diagnostics.find("[instance-too-large]"), std::string::npos) << l.diagnostics;
}

TEST(Lower, HugeSemaphoreArraysAreTooLarge) {
  expectTooLarge("mesh x = 2\nkernel k() {\n  scratch s: dma_sem[1000000000]\n}\n", "semaphores");
  expectTooLarge("mesh x = 2\nkernel k() {\n  scratch s: sem[1000000000, 1000000000]\n}\n",
                 "semaphores");
  // The element count overflows 64 bits (it used to wrap to no semaphore at all).
  expectTooLarge("mesh x = 2\nkernel k() {\n  scratch s: sem[4294967296, 4294967296]\n}\n",
                 "more than 2^63 semaphores");
  std::string dims = "2";
  for (int i = 0; i < 39; ++i)
    dims += ", 2";
  expectTooLarge("mesh x = 2\nkernel k() {\n  scratch s: sem[" + dims + "]\n}\n", "semaphores");
  // The limit is over all devices.
  EXPECT_TRUE(lowerText("mesh x = 4\nkernel k() {\n  scratch s: sem[1000]\n}\n", {}, {},
                        model::BuildLimits{100'000, 4096, 100'000, int64_t{1} << 26, 4000})
                  .program);
  EXPECT_FALSE(lowerText("mesh x = 4\nkernel k() {\n  scratch s: sem[1001]\n}\n", {}, {},
                         model::BuildLimits{100'000, 4096, 100'000, int64_t{1} << 26, 4000})
                   .program);
}

TEST(Lower, HugeBuffersAreTooLarge) {
  expectTooLarge("mesh x = 2\nkernel k(in a: hbm f32[1000000000, 1000000000]) {}\n", "elements");
  expectTooLarge("mesh x = 2\nkernel k() {\n  scratch b: vmem f32[1000000000]\n  b[0] = 1\n}\n",
                 "elements");
  // Element counts that overflow 64 bits, once used as DMA byte counts.
  expectTooLarge("mesh x = 2\nkernel k(in a: hbm f32[9223372036854775807], out o: hbm "
                 "f32[9223372036854775807]) {\n  scratch d: dma_sem\n  let c = copy(a, o, d)\n  "
                 "c.start()\n  c.wait()\n}\n",
                 "elements");
  expectTooLarge("mesh x = 2\nkernel k(in a: hbm f32[4294967296, 4294967296, 4294967296]) {}\n",
                 "more than 2^63 elements");
  // Every device holds every buffer: 4096 devices of a modest all-gather output.
  Lowered l =
      lowerText("param N = 4\nmesh x = N\nkernel k(out o: hbm f32[N, 8, 128]) {}\n", {{"N", 4096}});
  EXPECT_FALSE(l.program);
  EXPECT_NE(l.diagnostics.find("[instance-too-large]"), std::string::npos) << l.diagnostics;
  EXPECT_TRUE(
      lowerText("param N = 4\nmesh x = N\nkernel k(out o: hbm f32[N, 8, 128]) {}\n", {{"N", 64}})
          .program);
}

TEST(Lower, PerDeviceOverflowsAreErrors) {
  // Negating INT64_MIN (it used to wrap silently).
  Lowered neg = lowerText("mesh x = 2\nkernel k() {\n  let a = -9223372036854775807 - 1 + "
                          "axis_index(x)\n  let b = -a\n}\n");
  EXPECT_FALSE(neg.program);
  EXPECT_NE(neg.diagnostics.find("[integer-overflow]"), std::string::npos) << neg.diagnostics;
  // A single index at INT64_MAX is out of bounds (its end `i + 1` is never computed).
  Lowered index = lowerText("mesh x = 2\nkernel k(out o: hbm f32[8]) {\n  let i = "
                            "9223372036854775806 + axis_index(x)\n  o[i] = 1\n}\n");
  EXPECT_FALSE(index.program);
  EXPECT_NE(index.diagnostics.find("[slice-out-of-bounds]"), std::string::npos)
      << index.diagnostics;
}

TEST(Lower, PerDeviceSemaphoreAmountsAreBounded) {
  // Sums of amounts near INT64_MAX overflowed in the static pre-check and the executor.
  Lowered l = lowerText("mesh x = 2\nkernel k() {\n  scratch s: sem\n  signal(s, "
                        "2147483647 + axis_index(x))\n  wait(s, 1)\n}\n");
  EXPECT_FALSE(l.program);
  EXPECT_NE(l.diagnostics.find("[amount-too-large]"), std::string::npos) << l.diagnostics;
  EXPECT_NE(l.diagnostics.find("device 1"), std::string::npos) << l.diagnostics;
  Lowered w = lowerText("mesh x = 2\nkernel k() {\n  scratch s: sem\n  signal(s)\n  wait(s, "
                        "2147483647 * (axis_index(x) + 1))\n}\n");
  EXPECT_FALSE(w.program);
  EXPECT_NE(w.diagnostics.find("[amount-too-large]"), std::string::npos) << w.diagnostics;
  EXPECT_TRUE(lowerText("mesh x = 2\nkernel k() {\n  scratch s: sem\n  signal(s, 2147483646 + "
                        "axis_index(x))\n  wait(s, 2147483646)\n}\n")
                  .program);
}

TEST(Lower, LargeKernelLowers) {
  // A 200-line kernel (100 DMAs started, then waited) at 8 devices; its lowering time
  // is measured by bench/lower_bench.cpp.
  std::string text = "param N = 8\nmesh x = N\nkernel big(in a: hbm f32[8, 128], out o: hbm "
                     "f32[100, 8, 128]) {\n  scratch send: dma_sem[100], recv: dma_sem[100]\n"
                     "  let right = (axis_index(x) + 1) % N\n";
  for (int i = 0; i < 100; ++i)
    text += "  let c" + std::to_string(i) + " = remote_copy(a, o[" + std::to_string(i) +
            "], send[" + std::to_string(i) + "], recv[" + std::to_string(i) +
            "], device = right)\n  c" + std::to_string(i) + ".start()\n";
  for (int i = 0; i < 100; ++i)
    text += "  c" + std::to_string(i) + ".wait()\n";
  text += "}\n";
  Lowered l = lowerText(text);
  ASSERT_TRUE(l.program) << l.diagnostics;
  EXPECT_EQ(l.program->dmas.size(), 800u);
  EXPECT_EQ(l.program->dmas[799].target, 0); // device 7 sends right, to device 0
  EXPECT_EQ(l.program->processes[7].events.size(), 2u + 100u + 200u + 1u);
}

namespace descriptors {

// A descriptor variable carried from one iteration to the next (all_gather.py's
// `right_dma`): iteration i's DMA is started there and waited in iteration i + 1; the
// wait uses the regions and semaphores fixed when that descriptor was made.
TEST(LowerDescriptors, VariableCarriesADescriptorToTheNextIteration) {
  Lowered l = lowerText(R"(
mesh x = 2
kernel k(in a: vmem f32[3, 8], out b: vmem f32[3, 8]) {
  scratch send: dma_sem, recv: dma_sem[3]
  let right = (axis_index(x) + 1) % 2
  var prev
  for i in 0 .. 3 {
    if prev {
      prev.wait()
    }
    prev = async_remote_copy(a[i], b[i], send, recv[i], device = right)
  }
  prev.wait()
}
)");
  ASSERT_TRUE(l.program) << l.diagnostics;
  EXPECT_EQ(eventsOf(*l.program, 0),
            (std::vector<std::string>{
                "enter invocation 0", "device barrier (invocation 0)",
                "start dma 0: a[0, :] -> device 1 b[0, :]", "wait send >= 32 (wait_send)",
                "wait recv[0] >= 32 (wait_recv)", "start dma 1: a[1, :] -> device 1 b[1, :]",
                "wait send >= 32 (wait_send)", "wait recv[1] >= 32 (wait_recv)",
                "start dma 2: a[2, :] -> device 1 b[2, :]", "wait send >= 32 (wait_send)",
                "wait recv[2] >= 32 (wait_recv)", "exit invocation 0"}));
}

// A list of pending descriptors: elements assigned in one loop, waited in another; an
// element holds the descriptor assigned to it, not the last one made.
TEST(LowerDescriptors, ArrayElementsHoldTheirOwnDescriptors) {
  Lowered l = lowerText(R"(
mesh x = 1
kernel k(in a: vmem f32[4, 8], out b: vmem f32[4, 8]) {
  scratch s: dma_sem[4]
  var cs[4]
  for i in 0 .. 4 {
    if i != 2 {
      cs[i] = copy(a[i], b[i], s[i])
      cs[i].start()
    }
  }
  for j in 0 .. 4 {
    if cs[3 - j] {
      cs[3 - j].wait()
    }
  }
  let d = copy(a[2], b[2], s[2])
  cs[2] = d
  if not cs[2] or cs[5 - 5] {
    cs[2].start()
    cs[2].wait()
  }
}
)",
                        {}, model::Options{1, 1, 1, false});
  ASSERT_TRUE(l.program) << l.diagnostics;
  EXPECT_EQ(
      eventsOf(*l.program, 0),
      (std::vector<std::string>{
          "enter invocation 0", "start dma 0: a[0, :] -> device 0 b[0, :]",
          "start dma 1: a[1, :] -> device 0 b[1, :]", "start dma 2: a[3, :] -> device 0 b[3, :]",
          "wait s[3] >= 32 (wait local copy)", "wait s[1] >= 32 (wait local copy)",
          "wait s[0] >= 32 (wait local copy)", "start dma 3: a[2, :] -> device 0 b[2, :]",
          "wait s[2] >= 32 (wait local copy)", "exit invocation 0"}));
}

// A wait on a variable that no assignment reached is an error with the device and the
// iteration, never a wait that does nothing; likewise an index out of range.
TEST(LowerDescriptors, UnassignedOrOutOfRangeIsAnError) {
  Lowered l = lowerText(R"(
mesh x = 2
kernel k(in a: vmem f32[8], out b: vmem f32[8]) {
  scratch send: dma_sem, recv: dma_sem
  var prev
  for i in 0 .. 2 {
    prev.wait_send()
    prev = async_remote_copy(a, b, send, recv, device = 1 - axis_index(x))
  }
}
)");
  EXPECT_FALSE(l.program);
  EXPECT_NE(l.diagnostics.find("test.dk:7:5: error: 'prev' holds no descriptor here on device 0 "
                               "(inv 0, i=0): it is not assigned on this path (in Python it "
                               "would be None) [unassigned-descriptor]"),
            std::string::npos)
      << l.diagnostics;

  Lowered range = lowerText(R"(
mesh x = 2
kernel k(in a: vmem f32[8], out b: vmem f32[8]) {
  scratch s: dma_sem
  var cs[2]
  cs[axis_index(x) + 1] = copy(a, b, s)
}
)");
  EXPECT_FALSE(range.program);
  EXPECT_NE(range.diagnostics.find("index 2 of descriptor array 'cs' is out of range [0, 2) (on "
                                   "device 1) [index-out-of-bounds]"),
            std::string::npos)
      << range.diagnostics;

  // wait_recv() on a variable that holds a local copy on this path.
  Lowered local = lowerText(R"(
mesh x = 1
kernel k(in a: vmem f32[8], out b: vmem f32[8]) {
  scratch s: dma_sem
  var c
  c = async_copy(a, b, s)
  c.wait_recv()
}
)");
  EXPECT_FALSE(local.program);
  EXPECT_NE(local.diagnostics.find("[local-copy-wait]"), std::string::npos) << local.diagnostics;
}

// Variables start unassigned in every grid step (the body is traced once and the grid
// repeats it) and where their `var` runs again (a var inside a loop body).
TEST(LowerDescriptors, GridStepsAndRedeclarationStartUnassigned) {
  Lowered l = lowerText(R"(
mesh x = 1
kernel k(in a: vmem f32[8], out b: vmem f32[8]) grid(2) {
  scratch s: dma_sem
  var c
  if program_id(0) == 1 {
    c.wait()
  }
  c = async_copy(a, b, s)
  c.wait()
}
)",
                        {}, model::Options{1, 1, 1, false});
  EXPECT_FALSE(l.program);
  EXPECT_NE(l.diagnostics.find("'c' holds no descriptor here on device 0 (inv 0, grid (1))"),
            std::string::npos)
      << l.diagnostics;

  Lowered loop = lowerText(R"(
mesh x = 1
kernel k(in a: vmem f32[8], out b: vmem f32[8]) {
  scratch s: dma_sem
  for i in 0 .. 2 {
    var c
    if c {
      c.wait()
    }
    c = async_copy(a, b, s)
  }
}
)",
                           {}, model::Options{1, 1, 1, false});
  ASSERT_TRUE(loop.program) << loop.diagnostics;
  EXPECT_EQ(eventsOf(*loop.program, 0),
            (std::vector<std::string>{"enter invocation 0", "start dma 0: a[:] -> device 0 b[:]",
                                      "start dma 1: a[:] -> device 0 b[:]", "exit invocation 0"}));
}

} // namespace descriptors

// `skip_device_barrier(true)` drops the entry barrier of a kernel without a
// collective_id, as --no-entry-barrier does; `false` keeps it.
TEST(Lower, SkipDeviceBarrierDropsTheEntryBarrier) {
  std::string text = R"(
mesh x = 2
kernel k(in a: hbm f32[8], out b: hbm f32[8]) ATTR {
  scratch send: dma_sem, recv: dma_sem
  let c = remote_copy(a, b, send, recv, device = 1 - axis_index(x))
  c.start()
  c.wait()
}
)";
  auto with = [&](const std::string &attr) {
    std::string t = text;
    t.replace(t.find("ATTR"), 4, attr);
    return lowerText(t);
  };
  Lowered skipped = with("skip_device_barrier(true)");
  ASSERT_TRUE(skipped.program) << skipped.diagnostics;
  EXPECT_FALSE(skipped.program->options.entryBarrier);
  EXPECT_EQ(eventsOf(*skipped.program, 0).at(1), "start dma 0: a[:] -> device 1 b[:]");
  Lowered kept = with("skip_device_barrier(false)");
  ASSERT_TRUE(kept.program) << kept.diagnostics;
  EXPECT_TRUE(kept.program->options.entryBarrier);
  EXPECT_EQ(eventsOf(*kept.program, 0).at(1), "device barrier (invocation 0)");
}

// Tables (scalar prefetch): per-device contents decide slices, devices, amounts and
// branches; the program records the contents it was built for.
TEST(Lower, TablesDecideSlicesDevicesAndBranches) {
  const std::string text = R"(
mesh x = 2
kernel k(in off: smem i32[2] = [[0, 4], [2, 6]], in len: smem i32[1] = [3],
         in input: hbm f32[8], out o: hbm f32[8]) {
  scratch send: dma_sem, recv: dma_sem
  let me = axis_index(x)
  let c = remote_copy(input[off[0] : off[0] + len[0]], o[off[0] : off[0] + len[0]], send,
                      recv, device = off[1] / 4 - me)
  c.start()
  if off[0] == 0 {
    c.wait_send()
  }
}
)";
  Lowered l = lowerText(text);
  ASSERT_TRUE(l.program) << l.diagnostics;
  const model::Program &p = *l.program;
  ASSERT_EQ(p.tables.size(), 2u);
  EXPECT_EQ(p.tables[0], (std::pair<std::string, std::string>{"off", "[[0, 4], [2, 6]]"}));
  EXPECT_EQ(p.tables[1], (std::pair<std::string, std::string>{"len", "[3]"}));
  // The tables are not buffers.
  EXPECT_EQ(p.buffers.size(), 2u);
  ASSERT_EQ(p.dmas.size(), 2u);
  // Device 0: input[0:3] -> device 4 / 4 - 0 = 1; device 1: input[2:5] -> 6 / 4 - 1 = 0.
  EXPECT_EQ(p.dmas[0].src.ranges[0].begin, 0);
  EXPECT_EQ(p.dmas[0].target, 1);
  EXPECT_EQ(p.dmas[1].src.ranges[0].begin, 2);
  EXPECT_EQ(p.dmas[1].src.ranges[0].end, 5);
  EXPECT_EQ(p.dmas[1].target, 0);
  EXPECT_EQ(p.dmas[1].bytes, 12);
  // The branch on the table holds on device 0 only.
  auto waits = [&](int d) {
    int n = 0;
    for (const model::Event &e : p.processes[d].events)
      n += std::holds_alternative<model::SemWait>(e.kind) ? 1 : 0;
    return n;
  };
  EXPECT_EQ(waits(0), 1);
  EXPECT_EQ(waits(1), 0);

  // An override (as -T / --tables give it) replaces the default, and must fit.
  Tables tables;
  tables["len"] = TableValue{{1}, {2}, "-T"};
  Lowered over = lowerText(text, {}, {}, {}, tables);
  ASSERT_TRUE(over.program) << over.diagnostics;
  EXPECT_EQ(over.program->tables[1].second, "[2]");
  EXPECT_EQ(over.program->dmas[0].bytes, 8);
  tables["len"] = TableValue{{2}, {2, 3}, "-T"}; // wrong shape for 2 devices
  Lowered bad = lowerText(text, {}, {}, {}, tables);
  EXPECT_FALSE(bad.program);
  EXPECT_NE(bad.diagnostics.find("-T contents of table 'len' have shape [2]; expected [1] (every "
                                 "device) or [2, 1]"),
            std::string::npos)
      << bad.diagnostics;
  Tables unknown;
  unknown["lens"] = TableValue{{1}, {2}, "-T"};
  Lowered u = lowerText(text, {}, {}, {}, unknown);
  EXPECT_FALSE(u.program);
  EXPECT_NE(u.diagnostics.find("[unknown-table]"), std::string::npos) << u.diagnostics;
}

// Tables in a sequence (docs/language.md "Kernel sequences"): the sequence declares
// them with contents and passes them; a kernel's table parameter reads the argument of
// each call, so one kernel called twice with two tables makes two different DMAs; -T
// names the sequence's table, and the program records the sequence's tables.
TEST(Lower, SequenceTablesBindPerCall) {
  const std::string text = R"(
mesh x = 2
kernel send_rows(in rows: smem i32[2], in input: hbm f32[8], out o: hbm f32[8],
                 out s: dma_sem, out r: dma_sem) {
  let me = axis_index(x)
  let c = remote_copy(input[0 : rows[me]], o[0 : rows[me]], s, r, device = 1 - me)
  c.start()
  c.wait()
}
sequence(in first: smem i32[2] = [3, 1], in second: smem i32[2] = [[2, 0], [4, 5]],
         in input: hbm f32[8], out o: hbm f32[8], out s: dma_sem, out r: dma_sem) {
  send_rows(first, input, o, s, r)
  send_rows(second, input, o, s, r)
}
)";
  Lowered l = lowerText(text);
  ASSERT_TRUE(l.program) << l.diagnostics;
  const model::Program &p = *l.program;
  ASSERT_EQ(p.tables.size(), 2u);
  EXPECT_EQ(p.tables[0], (std::pair<std::string, std::string>{"first", "[3, 1]"}));
  EXPECT_EQ(p.tables[1], (std::pair<std::string, std::string>{"second", "[[2, 0], [4, 5]]"}));
  EXPECT_EQ(p.buffers.size(), 2u); // input and o; the tables are not buffers
  ASSERT_EQ(p.dmas.size(), 4u);
  // Device 0: call 0 sends first[0] = 3 elements, call 1 second[0][0] = 2; device 1:
  // first[1] = 1, then its own row of second, [4, 5][1] = 5.
  std::vector<int64_t> bytes;
  for (const model::Dma &d : p.dmas)
    bytes.push_back(d.bytes);
  std::sort(bytes.begin(), bytes.end());
  EXPECT_EQ(bytes, (std::vector<int64_t>{4, 8, 12, 20}));
  for (const model::Dma &d : p.dmas)
    EXPECT_TRUE(d.invocation == 0 ? (d.bytes == 12 || d.bytes == 4)
                                  : (d.bytes == 8 || d.bytes == 20))
        << d.invocation << " " << d.bytes;

  // -T names the sequence's table.
  Tables tables;
  tables["first"] = TableValue{{2}, {2, 2}, "-T"};
  Lowered over = lowerText(text, {}, {}, {}, tables);
  ASSERT_TRUE(over.program) << over.diagnostics;
  EXPECT_EQ(over.program->tables[0].second, "[2, 2]");
  // A kernel's parameter name is no table of the instance.
  Tables byParam;
  byParam["rows"] = TableValue{{2}, {2, 2}, "-T"};
  Lowered u = lowerText(text, {}, {}, {}, byParam);
  EXPECT_FALSE(u.program);
  EXPECT_NE(u.diagnostics.find("-T sets table 'rows', but the sequence has no table of that "
                               "name"),
            std::string::npos)
      << u.diagnostics;
}

TEST(Lower, TableIndexOutOfBoundsIsReportedWithItsPlace) {
  Lowered l = lowerText("mesh x = 2\nkernel k(in t: smem i32[2] = [5, 6]) {\n  scratch s: "
                        "sem\n  signal(s, t[axis_index(x) + 1])\n  wait(s, t[0])\n}\n");
  EXPECT_FALSE(l.program);
  EXPECT_NE(l.diagnostics.find("test.dk:4:15: error: index 2 is out of bounds for dimension 0 "
                               "of table 't' (size 2) on device 1 [table-index-out-of-bounds]"),
            std::string::npos)
      << l.diagnostics;
}

TEST(Lower, TableMisuseIsAnError) {
  auto diagnosticsOf = [](const std::string &text) { return lowerText(text).diagnostics; };
  EXPECT_NE(
      diagnosticsOf("mesh x = 2\nkernel k(out t: smem i32[2] = [1, 2]) {}\n").find("[table-kind]"),
      std::string::npos);
  EXPECT_NE(
      diagnosticsOf("mesh x = 2\nkernel k(in t: smem u8[2] = [1, 256]) {}\n").find("[table-value]"),
      std::string::npos);
  EXPECT_NE(diagnosticsOf("mesh x = 2\nkernel k(in t: smem i32[2] = [1, 2, 3]) {}\n")
                .find("[table-shape]"),
            std::string::npos);
  EXPECT_NE(diagnosticsOf("mesh x = 2\nkernel k(in t: smem i32[2] = [[1], [2, 3]]) {}\n")
                .find("[table-shape]"),
            std::string::npos);
  // A table is read one element at a time, never used as a ref.
  EXPECT_NE(diagnosticsOf("mesh x = 2\nkernel k(in t: smem i32[2] = [1, 2], out o: smem "
                          "i32[2]) {\n  o[...] = t\n}\n")
                .find("[type-mismatch]"),
            std::string::npos);
  EXPECT_NE(diagnosticsOf("mesh x = 2\nkernel k(in t: smem i32[2] = [1, 2]) {\n  let a = "
                          "t[0:1]\n}\n")
                .find("[type-mismatch]"),
            std::string::npos);
  EXPECT_NE(diagnosticsOf("mesh x = 2\nkernel k(in t: smem i32[2] = [1, 2]) {\n  let a = t[2]\n}\n")
                .find("[out-of-bounds]"),
            std::string::npos);
}

TEST(Lower, RemSelectAndBitOperations) {
  Lowered l = lowerText(R"(
mesh x = 4
kernel k() {
  scratch s: sem[8]
  let me = axis_index(x)
  let a = rem(me - 2, 3)
  let b = (me - 2) % 3
  let p = me ^ (1 << 1)
  let q = select(me > 1, me >> 1, me | 4)
  let r = (me & 1) == 1
  if a == -1 and b == 2 and r {
    signal(s[p], 1, device = 0)
  }
  signal(s[q], 1)
  wait(s[q], 1)
}
)");
  ASSERT_TRUE(l.program) << l.diagnostics;
  std::ostringstream model;
  model::printProgram(*l.program, model);
  // Device 1: a = rem(-1, 3) = -1, b = 2, p = 3, r true: signals s[3] on device 0;
  // q = 1 | 4 = 5. Device 3: q = 3 >> 1 = 1.
  EXPECT_NE(model.str().find("signal s[3] += 1 on device 0"), std::string::npos) << model.str();
  EXPECT_NE(model.str().find("wait s[5] >= 1"), std::string::npos) << model.str();
  EXPECT_NE(model.str().find("wait s[1] >= 1"), std::string::npos) << model.str();
  Lowered shift = lowerText("mesh x = 2\nkernel k() {\n  let a = 1 << (axis_index(x) + 63)\n}\n");
  EXPECT_FALSE(shift.program);
  EXPECT_NE(shift.diagnostics.find("[invalid-shift]"), std::string::npos) << shift.diagnostics;
  Lowered c = lowerText("const S = 1 << 64\nmesh x = 2\nkernel k() {}\n");
  EXPECT_FALSE(c.program);
  EXPECT_NE(c.diagnostics.find("[invalid-shift]"), std::string::npos) << c.diagnostics;
  Lowered zero = lowerText("mesh x = 2\nkernel k() {\n  let a = rem(1, axis_index(x))\n}\n");
  EXPECT_FALSE(zero.program);
  EXPECT_NE(zero.diagnostics.find("[division-by-zero]"), std::string::npos) << zero.diagnostics;
}

TEST(Lower, ZeroSizeSlicesAndDmas) {
  Lowered l = lowerText(R"(
mesh x = 2
kernel k(in input: hbm f32[8], out o: hbm f32[8]) {
  scratch send: dma_sem, recv: dma_sem
  let n = axis_index(x)
  let c = remote_copy(input[2 : 2 + n], o[3 : 3 + n], send, recv, device = 1 - n)
  c.start()
  c.wait()
  o[5:5] = 1.0
}
)");
  ASSERT_TRUE(l.program) << l.diagnostics;
  ASSERT_EQ(l.program->dmas.size(), 2u);
  EXPECT_EQ(l.program->dmas[0].bytes, 0);
  EXPECT_EQ(l.program->dmas[0].landUnits, std::vector<int64_t>{0});
  EXPECT_EQ(l.program->dmas[1].bytes, 4);
  // A slice that ends before it starts is still an error.
  Lowered bad = lowerText("mesh x = 2\nkernel k(out o: hbm f32[8]) {\n  let n = "
                          "axis_index(x)\n  o[4 : 3 + n] = 1.0\n}\n");
  EXPECT_FALSE(bad.program);
  EXPECT_NE(bad.diagnostics.find("slice 4:3 is reversed"), std::string::npos) << bad.diagnostics;
}

// Integer SMEM scratch (docs/language.md "Integer scratch"): what a store writes is an
// integer lowering knows, per device and in program order; it decides loop bounds,
// slices and wait sizes; the stores stay events.
TEST(LowerScratch, StoredIntegersDecideBoundsSlicesAndWaits) {
  Lowered l = lowerText(R"(
mesh x = 2
kernel k(in sizes: smem i32[2] = [[1, 2], [3, 0]], in input: hbm f32[8], out o: hbm f32[8]) {
  scratch meta: smem i32[3], ds: dma_sem
  var total = 0
  for i in 0 .. 2 {
    meta[i] = total
    total += sizes[i]
  }
  meta[2] = total
  meta[2] += 1
  for j in 0 .. meta[2] - 1 {
    let c = copy(input[meta[1] : meta[1] + 1], o[j : j + 1], ds)
    c.start()
  }
  let d = copy(o[0 : meta[2] - 1], o[0 : meta[2] - 1], ds)
  d.wait()
}
)");
  ASSERT_TRUE(l.program) << l.diagnostics;
  const model::Program &p = *l.program;
  // Device 0: meta = [0, 1, 4] (total 3, +1): 3 copies of input[1]; device 1: meta =
  // [0, 3, 4]: 3 copies of input[3].
  ASSERT_EQ(p.dmas.size(), 6u);
  EXPECT_EQ(p.dmas[0].src.ranges[0].begin, 1);
  EXPECT_EQ(p.dmas[3].src.ranges[0].begin, 3);
  auto count = [&](int d, auto pred) {
    int n = 0;
    for (const model::Event &e : p.processes[d].events)
      n += pred(e) ? 1 : 0;
    return n;
  };
  for (int d = 0; d < 2; ++d) {
    EXPECT_EQ(
        count(d,
              [](const model::Event &e) { return std::holds_alternative<model::Store>(e.kind); }),
        4);
    int64_t waited = 0;
    for (const model::Event &e : p.processes[d].events)
      if (const auto *w = std::get_if<model::SemWait>(&e.kind))
        waited += w->amount;
    EXPECT_EQ(waited, 12); // 3 rows of 4 bytes
  }
}

TEST(LowerScratch, UnknownValuesAreErrorsWhereTheyDecide) {
  auto diags = [](const std::string &body) {
    Lowered l = lowerText("mesh x = 2\nkernel k(in v: vmem i32[2], out o: hbm f32[8]) {\n"
                          "  scratch meta: smem i32[2], s: sem, ds: dma_sem\n" +
                          body + "}\n");
    EXPECT_FALSE(l.program);
    return l.diagnostics;
  };
  // Read before any store in this invocation.
  EXPECT_NE(diags("  o[0 : meta[0]] = 1.0\n")
                .find("meta[0] is read before it is stored "
                      "to in this invocation (on device 0, inv "
                      "0): scratch starts uninitialised "
                      "[uninitialized-scratch]"),
            std::string::npos);
  // A semaphore value or a load stored there is data.
  std::string r = diags("  let n = read(s)\n  meta[0] = n\n  o[0 : meta[0]] = 1.0\n");
  EXPECT_NE(r.find("meta[0] holds data stored at line 5"), std::string::npos) << r;
  EXPECT_NE(r.find("[unsupported]"), std::string::npos) << r;
  r = diags("  meta[1] = v[0]\n  for i in 0 .. meta[1] { o[i] = 1.0 }\n");
  EXPECT_NE(r.find("meta[1] holds data stored at line 4"), std::string::npos) << r;
  // A DMA writes the scratch: its elements are data.
  r = diags("  meta[0] = 1\n  let c = copy(v, meta, ds)\n  c.start()\n  c.wait()\n"
            "  o[0 : meta[0]] = 1.0\n");
  EXPECT_NE(r.find("a DMA writes integer scratch 'meta'"), std::string::npos) << r;
  // A stored integer must fit the element type.
  r = diags("  meta[0] = 3000000000\n");
  EXPECT_NE(r.find("3000000000 does not fit in the element type i32 of integer scratch 'meta'"),
            std::string::npos)
      << r;
  // Data in a stored value is a load, not an error.
  Lowered ok = lowerText("mesh x = 2\nkernel k(out o: hbm i32[1]) {\n  scratch meta: smem "
                         "i32[1], s: sem\n  let n = read(s)\n  meta[0] = n\n  o[0] = meta[0] + "
                         "1\n}\n");
  ASSERT_TRUE(ok.program) << ok.diagnostics;
}

// Scratch persists across grid steps (and each invocation stores anew); a run_scoped
// one starts unset at its block.
TEST(LowerScratch, ScratchLivesAcrossGridStepsAndScopes) {
  const std::string text = R"(
mesh x = 2
kernel k(out o: hbm f32[8]) grid(2) {
  scratch meta: smem i32[1]
  if program_id(0) == 0 {
    meta[0] = 3
  }
  o[0 : meta[0]] = 1.0
}
)";
  Lowered l = lowerText(text);
  ASSERT_TRUE(l.program) << l.diagnostics;
  model::Options two;
  two.invocations = 2;
  Lowered again = lowerText(text, {}, two);
  ASSERT_TRUE(again.program) << again.diagnostics;
  // Read at grid step 0 before the store at step 1: an error there.
  Lowered late = lowerText("mesh x = 2\nkernel k(out o: hbm f32[8]) grid(2) {\n  scratch meta: "
                           "smem i32[1]\n  if program_id(0) == 0 { o[0 : meta[0]] = 1.0 }\n  "
                           "meta[0] = 3\n}\n");
  EXPECT_FALSE(late.program);
  EXPECT_NE(late.diagnostics.find("(on device 0, inv 0, grid (0))"), std::string::npos)
      << late.diagnostics;
  Lowered scoped = lowerText("mesh x = 2\nkernel k(out o: hbm f32[8]) {\n  run_scoped(m: smem "
                             "i32[1]) { m[0] = 2 }\n  run_scoped(n: smem i32[1]) { o[0 : n[0]] "
                             "= 1.0 }\n}\n");
  EXPECT_FALSE(scoped.program);
  EXPECT_NE(scoped.diagnostics.find("[uninitialized-scratch]"), std::string::npos);
}

// Integer variables (lax.fori_loop carries): rebound in loops and branches, per device.
TEST(LowerVariables, IntegerVariablesCarryValues) {
  Lowered l = lowerText(R"(
mesh x = 2
kernel k(in input: hbm f32[8], out o: hbm f32[8]) {
  scratch ds: dma_sem
  var n = 0, m = 1
  for i in 0 .. 3 {
    if axis_index(x) == 1 {
      n += i
    }
    m = m * 2
  }
  let c = copy(input[n : m], o[n : m], ds)
  c.start()
  c.wait()
}
)");
  ASSERT_TRUE(l.program) << l.diagnostics;
  // Device 0: n = 0, m = 8; device 1: n = 3, m = 8.
  EXPECT_EQ(l.program->dmas[0].src.ranges[0].begin, 0);
  EXPECT_EQ(l.program->dmas[0].bytes, 32);
  EXPECT_EQ(l.program->dmas[1].src.ranges[0].begin, 3);
  EXPECT_EQ(l.program->dmas[1].bytes, 20);
}

// Array values in names (docs/language.md "Values in names"): a let or var of an array
// value has a buffer of its own; the let's loads happen at the let, a var's at each
// assignment; slices of it clamp as NumPy's.
TEST(LowerVariables, ValuesInNamesLoadWhereTheyAreBound) {
  Lowered l = lowerText(R"(
mesh x = 2
kernel k(in input: hbm f32[2, 4], out o: hbm f32[2, 4]) {
  let v = input[...]
  var acc = zeros((2, 4), f32)
  acc += v
  let a, b = split(acc, 2, axis = -1)
  o[...] = concatenate([silu(b), a[:, 0 : 9]], axis = 1)
}
)");
  ASSERT_TRUE(l.program) << l.diagnostics;
  const model::Program &p = *l.program;
  std::vector<std::string> names;
  for (const model::Buffer &b : p.buffers)
    names.push_back(b.name);
  EXPECT_EQ(names, (std::vector<std::string>{"input", "o", "v", "acc", "a", "b"}));
  std::ostringstream text;
  model::printProgram(p, text);
  EXPECT_NE(text.str().find("store v[:, :] = input[:, :]"), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("store acc[:, :] = full([2, 4], 0.0)"), std::string::npos);
  EXPECT_NE(text.str().find("store a[:, :] = slice(acc[:, :], axis=1, 0:2)"), std::string::npos);
  EXPECT_NE(text.str().find("store b[:, :] = slice(acc[:, :], axis=1, 2:4)"), std::string::npos);
  EXPECT_NE(text.str().find("store o[:, :] = concatenate(silu(b[:, :]), a[:, :], axis=1)"),
            std::string::npos)
      << text.str();
}

// start(priority = p): in the model, 0 or 1, and 1 only on local copies (Mosaic).
TEST(Lower, DmaPriority) {
  Lowered l = lowerText(R"(
mesh x = 2
kernel k(in input: hbm f32[8], out o: hbm f32[8]) {
  scratch s: dma_sem, r: dma_sem
  var c
  c = copy(input, o, s)
  c.start(priority = 1)
  c.wait()
  let d = remote_copy(input, o, s, r, device = 1 - axis_index(x))
  d.start(priority = 0)
  d.wait()
}
)");
  ASSERT_TRUE(l.program) << l.diagnostics;
  EXPECT_EQ(l.program->dmas[0].priority, 1);
  EXPECT_EQ(l.program->dmas[1].priority, 0);
  // Through a descriptor variable the remote copy is known only here.
  Lowered bad = lowerText("mesh x = 2\nkernel k(in input: hbm f32[8], out o: hbm f32[8]) {\n"
                          "  scratch s: dma_sem, r: dma_sem\n  var c\n"
                          "  c = remote_copy(input, o, s, r, device = 0)\n"
                          "  c.start(priority = 1)\n}\n");
  EXPECT_FALSE(bad.program);
  EXPECT_NE(bad.diagnostics.find("priority 1 on a remote DMA: Mosaic supports a non-zero "
                                 "priority only on local DMAs [invalid-priority]"),
            std::string::npos)
      << bad.diagnostics;
}

// An empty slice starting past the end of its dimension (Python's slices) is the empty
// range at the end; a non-empty one past the end stays an error.
TEST(Lower, EmptySlicePastTheEnd) {
  Lowered l = lowerText(R"(
mesh x = 2
kernel k(in input: hbm f32[4], out o: hbm f32[4]) {
  scratch s: dma_sem
  let n = axis_index(x) + 5
  let c = copy(input[n : n], o[n : n], s)
  c.start()
  c.wait()
}
)");
  ASSERT_TRUE(l.program) << l.diagnostics;
  EXPECT_EQ(l.program->dmas[1].src.ranges[0].begin, 4);
  EXPECT_EQ(l.program->dmas[1].src.ranges[0].end, 4);
  EXPECT_EQ(l.program->dmas[1].bytes, 0);
  Lowered bad = lowerText("mesh x = 2\nkernel k(out o: hbm f32[4]) {\n  let n = axis_index(x) "
                          "+ 5\n  o[n : n + 1] = 1.0\n}\n");
  EXPECT_FALSE(bad.program);
  EXPECT_NE(bad.diagnostics.find("[slice-out-of-bounds]"), std::string::npos);
}

// A descriptor that is only waited on reads no memory: a view of it past the end of its
// buffer is legal and waits for the bytes of the view as written (JAX's
// test_race_detection); starting it is the bounds error, at the slice.
TEST(Lower, WaitOnlyDescriptorMayRunPastItsBuffer) {
  const std::string kernel = R"(
mesh x = 2
kernel k(in a: hbm f32[4], out o: hbm f32[4]) {
  scratch send: dma_sem, recv: dma_sem
  let n = axis_index(x) + 4
  let c = remote_copy(a[0 : n], o[0 : n], send, recv, device = (axis_index(x),))
  c.)";
  Lowered waited = lowerText(kernel + "wait_recv()\n}\n");
  ASSERT_TRUE(waited.program) << waited.diagnostics;
  EXPECT_EQ(eventsOf(*waited.program, 0)[2], "wait recv >= 16 (wait_recv)");
  EXPECT_EQ(eventsOf(*waited.program, 1)[2], "wait recv >= 20 (wait_recv)");
  Lowered started = lowerText(kernel + "start()\n}\n");
  EXPECT_FALSE(started.program);
  EXPECT_NE(started.diagnostics.find("6:25: error: slice 0:5 is out of bounds for dimension 0 "
                                     "of 'a' (size 4) on device 1 [slice-out-of-bounds]"),
            std::string::npos)
      << started.diagnostics;
}

// TensorCore meshes (docs/model.md "TensorCores"): a process per (device, core), numbered
// device * C + core; DMAs and signals target the (device, core) their device id names.
TEST(LowerCores, ProcessesAreDeviceCorePairs) {
  Lowered l = lowerText(R"(
mesh x = 2
tensorcore_mesh core = 2
kernel k(in a: hbm f32[2, 8], out b: hbm f32[2, 8]) collective_id(0) {
  scratch v: vmem f32[8], w: vmem f32[8], s: sem, send: dma_sem, recv: dma_sem
  let me = axis_index(core)
  let n = axis_size(core)
  signal(barrier, 1, device = {core: (me + 1) % n})
  signal(barrier, 1, device = {x: 1 - axis_index(x), core: me})
  signal(s, 1, core_index = 0)
  signal(s, 1, device = {x: 0}, core_index = 1)
  signal(s)
  let c = remote_copy(v, w, send, recv, device = {core: 1 - me})
  c.start()
  c.wait()
}
)");
  ASSERT_TRUE(l.program) << l.diagnostics;
  const model::Program &p = *l.program;
  ASSERT_EQ(p.deviceCount(), 4);
  ASSERT_TRUE(p.cores);
  EXPECT_EQ(p.cores->name, "core");
  EXPECT_EQ(p.coresPerDevice(), 2);
  ASSERT_EQ(p.mesh.size(), 1u); // the core axis is not an axis of devices
  for (model::DeviceId d = 0; d < 4; ++d) {
    EXPECT_EQ(p.processes[d].coords, (std::vector<int64_t>{d / 2}));
    EXPECT_EQ(p.processes[d].core, d % 2);
  }
  // Process 3 is device 1, core 1.
  auto events = eventsOf(p, 3);
  EXPECT_EQ(p.processName(3), "device 1 core 1");
  EXPECT_EQ(events[1], "signal barrier += 1 on device 1 core 0"); // {core: 0}: same device
  EXPECT_EQ(events[2], "signal barrier += 1 on device 0 core 1"); // the other device, core 1
  EXPECT_EQ(events[3], "signal s += 1 on device 1 core 0");       // core_index = 0
  EXPECT_EQ(events[4], "signal s += 1 on device 0 core 1");       // device {x: 0}, core 1
  EXPECT_EQ(events[5], "signal s += 1 on device 1 core 1");       // a local signal: itself
  EXPECT_EQ(events[6], "start dma 3: v[:] -> device 1 core 0 w[:]");
  const model::Dma &dma = p.dmas[3];
  EXPECT_EQ(dma.issuer, 3);
  EXPECT_EQ(dma.target, 2);
  EXPECT_FALSE(dma.local);
}

TEST(LowerCores, HbmIsOneInstancePerDeviceAndTheRestPerCore) {
  Lowered l = lowerText(R"(
mesh x = 2
tensorcore_mesh core = 2
kernel k(in a: hbm f32[2, 8], out b: any f32[2, 8]) {
  scratch v: vmem f32[8], t: smem i32[4], d: dma_sem
  let c = async_copy(a[axis_index(core)], v, d)
  c.wait()
}
)");
  ASSERT_TRUE(l.program) << l.diagnostics;
  const model::Program &p = *l.program;
  for (model::BufferId b = 0; b < static_cast<model::BufferId>(p.buffers.size()); ++b) {
    const bool hbm = p.buffers[b].name == "a" || p.buffers[b].name == "b";
    EXPECT_EQ(p.sharedByCores(b), hbm) << p.buffers[b].name;
    // Process 3 (device 1, core 1) touches device 1's instance of a shared buffer, held by
    // its first process (2), and its own instance of every other buffer.
    EXPECT_EQ(p.memoryOf(3, b), hbm ? 2 : 3) << p.buffers[b].name;
    EXPECT_EQ(p.memoryName(3, b), hbm ? "device 1" : "device 1 core 1");
  }
  // A core's local copy reads its own slice of the chip's input.
  EXPECT_EQ(eventsOf(p, 3)[1], "start dma 3: a[1, :] -> device 1 core 1 v[:]");
}

TEST(LowerCores, EntryBarrierJoinsTheCoresOnlyWhenAssumed) {
  const std::string text = R"(
mesh x = 2
tensorcore_mesh core = C
kernel k(in a: hbm f32[8], out b: hbm f32[8]) {
  scratch s: sem
  signal(s, 1, device = {core: 0})
  wait(s, 1)
}
)";
  auto lowerWith = [&](int64_t cores, model::EntryBarrierCores which) {
    model::Options o;
    o.entryBarrierCores = which;
    return lowerText("param C = " + std::to_string(cores) + "\n" + text, {}, o);
  };
  // Two cores: no DeviceBarrier unless --entry-barrier-cores all.
  Lowered none = lowerWith(2, model::EntryBarrierCores::None);
  ASSERT_TRUE(none.program) << none.diagnostics;
  EXPECT_EQ(eventsOf(*none.program, 1).at(1), "signal s += 1 on device 0 core 0");
  EXPECT_FALSE(none.program->implicitBarrierOn());
  Lowered all = lowerWith(2, model::EntryBarrierCores::All);
  ASSERT_TRUE(all.program) << all.diagnostics;
  EXPECT_EQ(eventsOf(*all.program, 1).at(1), "device barrier (invocation 0)");
  // One core: the mesh is a mesh of devices, and the barrier is the usual one.
  Lowered one = lowerWith(1, model::EntryBarrierCores::None);
  ASSERT_TRUE(one.program) << one.diagnostics;
  EXPECT_EQ(eventsOf(*one.program, 1).at(1), "device barrier (invocation 0)");
}

TEST(LowerCores, UnnamedCoreOutOfRangeCoreAndSharedStoresAreErrors) {
  const std::string head = "mesh x = 2\ntensorcore_mesh core = C\n"
                           "kernel k(in a: hbm f32[8], out b: hbm f32[8]) collective_id(0) {\n"
                           "  scratch v: vmem f32[8], send: dma_sem, recv: dma_sem\n";
  auto run = [&](int64_t cores, const std::string &body) {
    return lowerText("param C = " + std::to_string(cores) + "\n" + head + body + "\n}\n");
  };
  // A device id that names devices but no core: refused with several cores ...
  for (const char *body : {"signal(barrier, 1, device = {x: 1})", "signal(barrier, 1, device = 1)",
                           "signal(barrier, 1, device = (1,))",
                           "let c = remote_copy(v, v, send, recv, device = {x: 1})"}) {
    Lowered l = run(2, body);
    EXPECT_FALSE(l.program) << body;
    EXPECT_NE(l.diagnostics.find("[unnamed-core]"), std::string::npos) << l.diagnostics;
    EXPECT_NE(l.diagnostics.find("test.dk:6:"), std::string::npos) << l.diagnostics;
    // ... and core 0 with one core.
    Lowered one = run(1, body);
    EXPECT_TRUE(one.program) << body << "\n" << one.diagnostics;
  }
  Lowered far = run(2, "signal(barrier, 1, core_index = axis_index(core) + 1)");
  EXPECT_FALSE(far.program);
  EXPECT_NE(far.diagnostics.find("core 2 is out of range: the TensorCore axis 'core' has 2 cores "
                                 "(on device 0 core 1) [core-out-of-range]"),
            std::string::npos)
      << far.diagnostics;
  // The cores reach their device's hbm only by DMA.
  Lowered store = run(2, "b[...] = v");
  EXPECT_FALSE(store.program);
  EXPECT_NE(store.diagnostics.find("a store to 'b' in hbm"), std::string::npos)
      << store.diagnostics;
  Lowered load = run(2, "v[...] = a * 2.0");
  EXPECT_FALSE(load.program);
  EXPECT_NE(load.diagnostics.find("a load of 'a' in hbm"), std::string::npos) << load.diagnostics;
  EXPECT_TRUE(run(1, "b[...] = v").program);
}

} // namespace
} // namespace dkv::lower
