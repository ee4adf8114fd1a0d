// Tests of the Promela emitter: structure, line map, scaling and golden models.
#include "promela/Emit.h"
#include "PromelaFixtures.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace dkv::promela {
namespace {

using namespace model;
using testing::collectiveScopedCopy;
using testing::ProgramBuilder;
using testing::rightPermute;
using testing::sharedRecvSemaphore;

std::string lineOf(const std::string &text, int line) {
  std::istringstream in(text);
  std::string l;
  for (int i = 0; i < line && std::getline(in, l); ++i) {
  }
  return l;
}

TEST(Emit, OneProctypePerDeviceAndADmaLoop) {
  std::string text = emitPromela(rightPermute(2), {}, nullptr);
  EXPECT_NE(text.find("active proctype dev0()"), std::string::npos);
  EXPECT_NE(text.find("active proctype dev1()"), std::string::npos);
  EXPECT_NE(text.find("active proctype dmas()"), std::string::npos);
  EXPECT_NE(text.find("#define NDEV 2"), std::string::npos);
  EXPECT_NE(text.find("#define DMA_CHUNKS 1"), std::string::npos);
  EXPECT_NE(text.find("/* fixture.dk:5 start dma 0"), std::string::npos);
  EXPECT_NE(text.find("printf(\"DKV d 0 "), std::string::npos);
  EXPECT_EQ(text, emitPromela(rightPermute(2), {}, nullptr)); // deterministic
}

TEST(Emit, LineMapPointsAssertsAtTheirChecks) {
  LineMap map;
  model::Program program = sharedRecvSemaphore();
  semantics::Properties properties(program);
  std::string text = emitPromela(properties, {}, &map);
  ASSERT_FALSE(map.checkAtLine.empty());
  int races = 0;
  for (const auto &[line, index] : map.checkAtLine) {
    EXPECT_NE(lineOf(text, line).find("assert("), std::string::npos) << line;
    const Check &check = map.checks[index];
    ASSERT_FALSE(check.overflow);
    const semantics::Property &property =
        properties.property(properties.obligation(check.obligation).property);
    // The assert's comment names its property.
    EXPECT_NE(lineOf(text, line).find(property.id + ": "), std::string::npos) << line;
    if (property.kind == report::FindingKind::Race) {
      ++races;
      EXPECT_TRUE(property.primary.loc.valid());
      EXPECT_FALSE(property.secondary.empty());
    }
  }
  // The loads of a on device 1 (line 16) and of b (line 18) each race with one DMA.
  EXPECT_EQ(races, 2);
  // Every line is mapped; statement lines carry their kernel line.
  int lines = static_cast<int>(std::count(text.begin(), text.end(), '\n'));
  ASSERT_EQ(static_cast<int>(map.source.size()), lines);
}

TEST(Emit, DmaSemaphoresFollowTheLiveSemUnit) {
  LineMap map;
  std::string text = emitPromela(rightPermute(2), {}, &map);
  ASSERT_EQ(map.semScale.size(), 2u);
  // Byte-counted: stored in units of SEM_UNIT, which the model reads at compile time.
  EXPECT_EQ(map.semScale[0], 1);
  EXPECT_EQ(map.semScale[1], 1);
  EXPECT_NE(text.find("#define UNITS(B) ((B) / SEM_UNIT)"), std::string::npos);
  EXPECT_NE(text.find("SEMTYPE_1 sem_send[NDEV];  /* dma_sem send: bound 32 / SEM_UNIT */"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("#if 32 / SEM_UNIT <= 255\n#define SEMTYPE_1 byte"), std::string::npos);
  EXPECT_NE(text.find("sem_recv[0] >= UNITS(32) -> printf("), std::string::npos);
  EXPECT_NE(text.find("sem_recv[0] = sem_recv[0] - UNITS(32) }"), std::string::npos);
  EXPECT_NE(text.find("sem_recv[1] = sem_recv[1] + CHUNK_UNITS(32, DMA_CHUNKS - rcv[0]);"),
            std::string::npos);
  // A DMA size the unit must divide: the model refuses other units, as dkv does.
  EXPECT_NE(text.find("#if 32 % SEM_UNIT\n#error"), std::string::npos);
  EXPECT_GT(map.depthBound, 0);
}

TEST(Emit, RegularSemaphoresAreScaledByTheirGcd) {
  ProgramBuilder b("scaled", 2);
  SemId ready = b.sem("ready", SemKind::Regular);
  for (int d = 0; d < 2; ++d)
    b.enter(d);
  b.event(0, Signal{1, ready, 4}, 5);
  b.event(0, Signal{1, ready, 8}, 6);
  b.event(1, SemWait{ready, 12, WaitOrigin::Wait}, 7);
  for (int d = 0; d < 2; ++d)
    b.event(d, KernelExit{0}, 8);
  LineMap map;
  std::string text = emitPromela(b.program(), {}, &map);
  ASSERT_EQ(map.semScale.size(), 1u);
  EXPECT_EQ(map.semScale[0], 4);
  EXPECT_NE(text.find("byte sem_ready[NDEV];  /* sem ready: scale 4, bound 3 */"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("sem_ready[1] >= 3 -> "), std::string::npos);
  EXPECT_NE(text.find("sem_ready[1] = sem_ready[1] + 2;"), std::string::npos);
}

// docs/promela.md, "Fused steps" and "Fused DMA chunks": the waits of a device run in
// one atomic sequence with the step they lead to, and the chunks nothing can observe in
// between run inside their DMA's start, each assert mapped to its own step.
TEST(Emit, FusedStepsAndDmaChunks) {
  LineMap map;
  std::string text = emitPromela(rightPermute(2), {}, &map);
  EXPECT_NE(text.find("#define FUSE_STEPS 1"), std::string::npos);
  EXPECT_NE(text.find("#define FUSE_DMAS (DMA_CHUNKS == 1 && SEM_UNIT == 1 && INVOCATIONS == 1 "
                      "&& ENTRY_BARRIER == 1)"),
            std::string::npos);
  // Both chunks of each DMA run in its start (every device waits for both before it
  // leaves, and the barrier orders the target's entry before the start).
  for (int k : {0, 1}) {
    EXPECT_NE(text.find(fmt::format("/* fused: dma {} send chunk */", k)), std::string::npos);
    EXPECT_NE(text.find(fmt::format("/* fused: dma {} land chunk */", k)), std::string::npos);
  }
  // The waits and the exit of device 0: one atomic sequence.
  size_t atomic = text.find("#if FUSE_STEPS\n  atomic {\n#endif\n    d_step { sem_send[0] >= ");
  ASSERT_NE(atomic, std::string::npos) << text;
  EXPECT_LT(text.find("exit invocation 0", atomic), text.find("#if FUSE_STEPS\n  }", atomic));
  // The fused land's lifetime assert belongs to the land step (Check::step).
  bool landCheck = false;
  for (const Check &c : map.checks)
    landCheck = landCheck || (c.step.kind == report::ScheduleStep::Kind::Land && c.step.id == 0);
  EXPECT_TRUE(landCheck);
  // Two writers into one buffer: their sends are fused (each issuer waits for its
  // send before it leaves), their lands are not (the other start observes them).
  std::string writers = emitPromela(testing::twoWriters(), {}, nullptr);
  EXPECT_NE(writers.find("/* fused: dma 0 send chunk */"), std::string::npos);
  EXPECT_EQ(writers.find("/* fused: dma 0 land chunk */"), std::string::npos);
  EXPECT_EQ(writers.find("/* fused: dma 1 land chunk */"), std::string::npos);
}

TEST(Emit, EntryBarrierIsCompiledInWithItsDefine) {
  // Generated with the barrier: its steps under #if ENTRY_BARRIER, arrival folded
  // into the enter step.
  std::string on = emitPromela(rightPermute(2), {}, nullptr);
  EXPECT_NE(on.find("#define ENTRY_BARRIER 1"), std::string::npos);
  EXPECT_NE(on.find("#if ENTRY_BARRIER\n    arrived[0]++;  /* fixture.dk:3 */\n#endif"),
            std::string::npos)
      << on;
  // (In an atomic sequence with the start that follows it: FUSE_STEPS.)
  EXPECT_NE(on.find("#if ENTRY_BARRIER\n    d_step { arrived[0] == NDEV -> printf(\"DKV d 0 1 "),
            std::string::npos);
  // Generated without: the same steps, off by default, printed as DKV b lines.
  model::Options o;
  o.entryBarrier = false;
  std::string off = emitPromela(rightPermute(2, true, o), {}, nullptr);
  EXPECT_NE(off.find("#define ENTRY_BARRIER 0"), std::string::npos);
  EXPECT_NE(off.find("#if ENTRY_BARRIER\n    d_step { arrived[0] == NDEV -> printf(\"DKV b 0 0 "),
            std::string::npos)
      << off;
  // collective_id: no entry barrier at all, and the define is fixed.
  std::string collective = emitPromela(collectiveScopedCopy(1), {}, nullptr);
  EXPECT_EQ(collective.find("arrived"), std::string::npos);
  EXPECT_NE(collective.find("|| ENTRY_BARRIER != 0"), std::string::npos);
}

TEST(Emit, LaterInvocationsAreCompiledInWithInvocations) {
  std::string text = emitPromela(collectiveScopedCopy(2), {}, nullptr);
  EXPECT_NE(text.find("#define INVOCATIONS 2"), std::string::npos);
  EXPECT_NE(text.find("#if INVOCATIONS < 1 || INVOCATIONS > 2 ||"), std::string::npos);
  // Device 0's second invocation, from its enter step to its exit step.
  size_t from = text.find("#if INVOCATIONS > 1\n");
  ASSERT_NE(from, std::string::npos) << text;
  size_t enter = text.find("enter invocation 1", from);
  size_t exit = text.find("exit invocation 1", from);
  ASSERT_NE(exit, std::string::npos);
  EXPECT_LT(enter, exit);
  // The #endif that closes `#if INVOCATIONS > 1` (the atomic sequences of FUSE_STEPS
  // open and close their own #if blocks inside it) comes after the exit step.
  int depth = 0;
  size_t at = from, endif = std::string::npos;
  while (at != std::string::npos && endif == std::string::npos) {
    size_t eol = text.find('\n', at);
    std::string line = text.substr(at, eol == std::string::npos ? std::string::npos : eol - at);
    if (line.rfind("#if", 0) == 0)
      ++depth;
    else if (line.rfind("#endif", 0) == 0 && --depth == 0)
      endif = at;
    at = eol == std::string::npos ? eol : eol + 1;
  }
  ASSERT_NE(endif, std::string::npos);
  EXPECT_LT(exit, endif) << "the invocation's #endif comes before its exit";
  EXPECT_LT(endif, text.find("active proctype dev1")) << "the #endif closes device 0's block";
}

/// Exact comparison with tests/golden/promela/NAME; DKV_UPDATE_GOLDEN=1 rewrites it.
/// The examples' goldens (NAME.nN.pml, from `dkv dump-promela`) are checked by
/// tests/golden; this one covers what no example uses: chunks and a semaphore unit.
void expectGolden(const std::string &name, const std::string &text) {
  std::string path = std::string(DKV_SOURCE_DIR) + "/tests/golden/promela/" + name;
  if (const char *update = std::getenv("DKV_UPDATE_GOLDEN"); update && std::string(update) == "1") {
    std::ofstream(path, std::ios::binary) << text;
    return;
  }
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in) << "missing golden file " << path << " (run with DKV_UPDATE_GOLDEN=1)";
  std::stringstream expected;
  expected << in.rdbuf();
  EXPECT_EQ(text, expected.str()) << "golden " << path << " differs (DKV_UPDATE_GOLDEN=1)";
}

TEST(EmitGolden, SharedReceiveSemaphoreTwoChunks) {
  model::Options o;
  o.dmaChunks = 2;
  o.semUnit = 4;
  EmitOptions options;
  options.modelFileName = "fixture_shared_recv_sem_chunks.pml";
  expectGolden("fixture_shared_recv_sem_chunks.pml",
               emitPromela(sharedRecvSemaphore(o), options, nullptr));
}

} // namespace
} // namespace dkv::promela
