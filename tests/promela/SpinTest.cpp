// End-to-end tests of the spin engine: emit, spin -a, gcc, pan, trail replay.
#include "promela/Spin.h"
#include "PromelaFixtures.h"
#include "executor/Executor.h"
#include "model/Verifier.h"
#include "promela/Emit.h"
#include "promela/Process.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include <unistd.h>

namespace dkv::promela {
namespace {

using report::FindingKind;
using report::Verdict;

bool haveSpin() {
  static const bool have = [] {
    std::string dir = ::testing::TempDir();
    ProcessResult r =
        runProcess({"spin", "-V"}, dir, dir + "dkv_spin_v.out", dir + "dkv_spin_v.err", 10);
    return r.ok();
  }();
  return have;
}

#define REQUIRE_SPIN()                                                                             \
  if (!haveSpin())                                                                                 \
  GTEST_SKIP() << "spin is not installed"

/// Quick settings for tests: the state spaces are tiny, so -O0 (pan.c compiles in a
/// fraction of the -O2 time) and a small hash table.
SpinOptions quick() {
  SpinOptions o;
  o.optimize = "-O0";
  o.hashBits = 16;
  o.timeoutSeconds = 120;
  return o;
}

/// "race.0: message" for every finding: what two engines must agree on byte for byte.
std::vector<std::string> propertiesOf(const Verdict &v) {
  std::vector<std::string> out;
  for (const report::Finding &f : v.findings)
    out.push_back(f.property + ": " + f.message);
  return out;
}

/// checkWithSpin, then every finding's schedule replayed in the executor must reach
/// the same property (spin's counterexamples are real runs of docs/model.md, not
/// artefacts of the encoding), and the exhaustive search must report exactly the same
/// properties with the same messages.
Verdict spinAndReplay(const model::Program &program, const SpinOptions &options) {
  Verdict v = checkWithSpin(program, options);
  EXPECT_EQ(propertiesOf(v), propertiesOf(exploreVerdict(program)));
  for (const report::Finding &f : v.findings) {
    EXPECT_TRUE(f.confirmed) << "the executor does not confirm spin's "
                             << report::findingKindName(f.kind) << ": " << f.message;
  }
  return v;
}

std::string describe(const Verdict &v) {
  std::string out = v.reason;
  for (const auto &f : v.findings)
    out += std::string(" [") + report::findingKindName(f.kind) + "] " + f.message;
  return out;
}

/// The first finding of `kind` among the verdict's, with every finding's trace and
/// schedule checked.
const report::Finding &firstFinding(const Verdict &v, FindingKind kind) {
  EXPECT_EQ(v.status, Verdict::Status::Findings) << describe(v);
  static const report::Finding none;
  const report::Finding *found = nullptr;
  for (const report::Finding &f : v.findings) {
    EXPECT_EQ(f.engine, "spin");
    EXPECT_FALSE(f.trace.steps.empty());
    EXPECT_EQ(f.schedule.size(), f.trace.steps.size());
    for (const auto &step : f.trace.steps)
      EXPECT_TRUE(step.loc.valid()) << step.text;
    if (f.kind == kind && !found)
      found = &f;
  }
  EXPECT_NE(found, nullptr) << "no " << report::findingKindName(kind) << ": " << describe(v);
  return found ? *found : none;
}

std::string stat(const Verdict &v, const std::string &name) {
  for (const auto &[key, value] : v.stats)
    if (key == name)
      return value;
  return "";
}

TEST(Spin, RightPermuteIsVerified) {
  REQUIRE_SPIN();
  SpinOptions o = quick();
  o.optimize = "-O2"; // once with the default optimisation
  Verdict v = checkWithSpin(testing::rightPermute(2), o);
  EXPECT_EQ(v.status, Verdict::Status::Verified) << describe(v);
  EXPECT_FALSE(stat(v, "states").empty());
  EXPECT_FALSE(stat(v, "memory").empty());
  EXPECT_FALSE(stat(v, "pan time").empty());
}

TEST(Spin, RightPermuteWithChunksAndSemUnitIsVerified) {
  REQUIRE_SPIN();
  model::Options options;
  options.dmaChunks = 3;
  options.semUnit = 4;
  Verdict v = checkWithSpin(testing::rightPermute(3, true, options), quick());
  EXPECT_EQ(v.status, Verdict::Status::Verified) << describe(v);
}

/// The model computes chunk units in Promela (CHUNK_UNITS, from SEM_UNIT and
/// DMA_CHUNKS): spin must give every chunk the units of the program's DMA
/// (docs/model.md: the first U mod K chunks carry one more).
TEST(Spin, ChunkUnitsMacroMatchesTheProgram) {
  REQUIRE_SPIN();
  for (auto [unit, chunks] : {std::pair{1, 3}, {4, 3}, {1, 5}, {2, 7}, {16, 2}}) {
    model::Options options;
    options.semUnit = unit;
    options.dmaChunks = chunks;
    model::Program program = testing::sharedRecvSemaphore(options);
    const model::Dma &dma = program.dmas[0];
    std::string text = emitPromela(program, {}, nullptr);
    size_t depth = text.find("#define MAX_DEPTH");
    ASSERT_NE(depth, std::string::npos);
    std::string model = text.substr(0, text.find('\n', depth) + 1) + "init {\n";
    for (int c = 0; c < chunks; ++c)
      model += fmt::format("  printf(\"units %d\\n\", CHUNK_UNITS({}, {}));\n", dma.bytes, c);
    model += "}\n";
    std::string dir = ::testing::TempDir();
    std::ofstream(dir + "dkv_chunk_units.pml") << model;
    ProcessResult r = runProcess({"spin", "dkv_chunk_units.pml"}, dir, dir + "dkv_chunk_units.out",
                                 dir + "dkv_chunk_units.err", 30);
    ASSERT_TRUE(r.ok()) << readTextFile(dir + "dkv_chunk_units.err");
    std::istringstream out(readTextFile(dir + "dkv_chunk_units.out"));
    std::vector<int64_t> units;
    for (std::string word; out >> word;)
      if (int64_t u; word == "units" && out >> u)
        units.push_back(u);
    EXPECT_EQ(units, dma.landUnits) << "sem unit " << unit << ", " << chunks << " chunks";
  }
}

TEST(Spin, MissingWaitIsAnExitViolation) {
  REQUIRE_SPIN();
  Verdict v = spinAndReplay(testing::rightPermute(2, false), quick());
  const report::Finding &f = firstFinding(v, FindingKind::ExitViolation);
  EXPECT_EQ(f.primary.loc.line, 7u);
  EXPECT_NE(f.message.find("leaves the kernel"), std::string::npos) << f.message;
  // The DMA can also land after its target left: the search goes on after each
  // finding with its property left out, so every violated property is reported (each
  // in its own pan run here, and a last run finds nothing more): both DMA sides and
  // both semaphores at exit, and the late land.
  firstFinding(v, FindingKind::LifetimeViolation);
  EXPECT_EQ(v.findings.size(), 5u) << describe(v);
  EXPECT_EQ(stat(v, "pan runs"), "6");
}

TEST(Spin, FirstFindingOnlyStopsAfterOnePanRun) {
  REQUIRE_SPIN();
  SpinOptions o = quick();
  o.allProperties = false;
  Verdict v = checkWithSpin(testing::rightPermute(2, false), o);
  ASSERT_EQ(v.status, Verdict::Status::Findings) << describe(v);
  EXPECT_EQ(v.findings.size(), 1u) << describe(v);
  EXPECT_EQ(stat(v, "pan runs"), "1");
}

TEST(Spin, TwoWritersRace) {
  REQUIRE_SPIN();
  Verdict v = spinAndReplay(testing::twoWriters(), quick());
  const report::Finding &f = firstFinding(v, FindingKind::Race);
  EXPECT_EQ(f.primary.loc.line, 8u); // the second start()
  ASSERT_EQ(f.secondary.size(), 1u);
  EXPECT_EQ(f.secondary[0].loc.line, 8u);
  EXPECT_EQ(f.message, "dma writing output[:] races with a dma writing output[:] (started at "
                       "line 8)");
  // The start whose assert failed ends the witness, although its fused send chunk
  // printed its trace line in spin's replay too (Check::step).
  ASSERT_FALSE(f.schedule.empty());
  EXPECT_EQ(f.schedule.back().kind, report::ScheduleStep::Kind::Device);
}

TEST(Spin, WaitNobodySatisfiesIsADeadlock) {
  REQUIRE_SPIN();
  Verdict v = spinAndReplay(testing::waitNeverSignalled(), quick());
  const report::Finding &f = firstFinding(v, FindingKind::Deadlock);
  EXPECT_EQ(f.primary.loc.line, 6u);
  EXPECT_EQ(f.message, "wait for ready >= 1 (wait) never returns");
  EXPECT_EQ(f.detail, "device 1 waits for ready >= 1 but it is 0");
}

TEST(Spin, SignalBeforeThePeerEnteredIsALifetimeViolation) {
  REQUIRE_SPIN();
  Verdict v = spinAndReplay(testing::signalBeforeEnter(), quick());
  const report::Finding &f = firstFinding(v, FindingKind::LifetimeViolation);
  EXPECT_EQ(f.primary.loc.line, 5u);
  EXPECT_EQ(f.detail, "signal of ready from device 0 reaches device 1, but device 1 is outside "
                      "the kernel");
}

TEST(Spin, SharedReceiveSemaphoreRaces) {
  REQUIRE_SPIN();
  Verdict v = spinAndReplay(testing::sharedRecvSemaphore(), quick());
  const report::Finding &f = firstFinding(v, FindingKind::Race);
  EXPECT_EQ(f.primary.loc.line, 16u); // reads a after waiting for "its" bytes
  ASSERT_EQ(f.secondary.size(), 1u);
  EXPECT_EQ(f.secondary[0].loc.line, 10u); // dma of a still landing
  // The witness: b's DMA landed before a's, so the wait passed on b's bytes.
  bool bLanded = false;
  for (const auto &step : f.trace.steps)
    if (step.text.find("dma 1 lands") != std::string::npos)
      bLanded = true;
  EXPECT_TRUE(bLanded);
  EXPECT_EQ(f.trace.deviceCount, 2);
}

TEST(Spin, SharedReceiveSemaphoreRacesWithChunks) {
  REQUIRE_SPIN();
  model::Options o;
  o.dmaChunks = 2;
  o.semUnit = 4;
  Verdict v = spinAndReplay(testing::sharedRecvSemaphore(o), quick());
  firstFinding(v, FindingKind::Race);
}

TEST(Spin, ScopedLocalCopiesWithABarrierSemaphoreAreVerified) {
  REQUIRE_SPIN();
  model::Program p = testing::collectiveScopedCopy(2);
  ASSERT_TRUE(model::verifyProgram(p).empty()) << model::verifyProgram(p).front();
  Verdict v = spinAndReplay(p, quick());
  EXPECT_EQ(v.status, Verdict::Status::Verified) << describe(v);
}

TEST(Spin, ReadingAScratchBeforeItsCopyLandedRaces) {
  REQUIRE_SPIN();
  Verdict v = spinAndReplay(testing::collectiveScopedCopy(1, false), quick());
  const report::Finding &f = firstFinding(v, FindingKind::Race);
  EXPECT_EQ(f.primary.loc.line, 10u);
  EXPECT_EQ(f.message, "load of scratch[:] races with a local copy writing scratch[:] (started "
                       "at line 7)");
}

TEST(Spin, MissingToolIsInconclusive) {
  SpinOptions o = quick();
  o.spin = "dkv-no-such-spin";
  Verdict v = checkWithSpin(testing::rightPermute(2), o);
  EXPECT_EQ(v.status, Verdict::Status::Inconclusive);
  EXPECT_NE(v.reason.find("is it installed"), std::string::npos) << v.reason;
}

TEST(Spin, TimeoutIsInconclusive) {
  REQUIRE_SPIN();
  SpinOptions o = quick();
  o.timeoutSeconds = 0.001;
  Verdict v = checkWithSpin(testing::rightPermute(2), o);
  EXPECT_EQ(v.status, Verdict::Status::Inconclusive);
  EXPECT_NE(v.reason.find("time limit"), std::string::npos) << v.reason;
}

TEST(Spin, TooSmallDepthIsInconclusive) {
  REQUIRE_SPIN();
  SpinOptions o = quick();
  o.depth = 4;
  Verdict v = checkWithSpin(testing::rightPermute(2), o);
  EXPECT_EQ(v.status, Verdict::Status::Inconclusive);
  EXPECT_NE(v.reason.find("depth"), std::string::npos) << v.reason;
}

TEST(Spin, MemoryLimitShrinksTheHashTableOrStopsPan) {
  REQUIRE_SPIN();
  SpinOptions o = quick();
  o.hashBits = 0;
  o.memoryMb = 16;
  Verdict small = checkWithSpin(testing::rightPermute(2), o);
  EXPECT_EQ(small.status, Verdict::Status::Verified) << describe(small);
  model::Options chunks;
  chunks.dmaChunks = 4;
  // (Fused steps make 4 and 8 devices fit: docs/promela.md.)
  Verdict big = checkWithSpin(testing::rightPermute(12, true, chunks), o);
  EXPECT_EQ(big.status, Verdict::Status::Inconclusive) << describe(big);
  EXPECT_NE(big.reason.find("out of memory"), std::string::npos) << big.reason;
}

TEST(Spin, KeepDirKeepsTheModel) {
  REQUIRE_SPIN();
  SpinOptions o = quick();
  o.keepDir = ::testing::TempDir() + "dkv_spin_keep";
  Verdict v = checkWithSpin(testing::waitNeverSignalled(), o);
  EXPECT_EQ(v.status, Verdict::Status::Findings);
  EXPECT_EQ(access((o.keepDir + "/model.pml").c_str(), R_OK), 0);
  EXPECT_EQ(access((o.keepDir + "/model.pml.trail").c_str(), R_OK), 0);
}

} // namespace
} // namespace dkv::promela
