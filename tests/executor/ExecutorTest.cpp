// Tests of single runs: data, policies, the vector-clock race check, replay, schedule
// files and the functional confirmation of races.
#include "executor/Executor.h"
#include "tests/executor/ExecutorFixtures.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

namespace dkv::executor {
namespace {

using report::FindingKind;
using report::ScheduleStep;

bool hasFinding(const std::vector<report::Finding> &findings, FindingKind kind, uint32_t line = 0) {
  for (const report::Finding &f : findings)
    if (f.kind == kind && (line == 0 || f.primary.loc.line == line))
      return true;
  return false;
}

TEST(Run, PermuteMovesTheNeighboursInput) {
  model::Program p = testing::permute();
  for (Policy policy : {Policy::Random, Policy::RoundRobin, Policy::Priority}) {
    RunOptions o;
    o.policy = policy;
    o.seed = 7;
    o.inputSeed = 3;
    RunResult r = runOnce(p, o);
    EXPECT_TRUE(r.completed);
    EXPECT_TRUE(r.findings.empty());
    for (model::DeviceId d = 0; d < 2; ++d)
      for (int64_t e = 0; e < 4; ++e)
        EXPECT_EQ(r.memory[d][1][e], inputValue(3, 1 - d, 0, e));
  }
}

TEST(Run, InputsAreSmallIntegersFromTheSeed) {
  for (int64_t e = 0; e < 100; ++e) {
    double v = inputValue(5, 1, 0, e);
    EXPECT_GE(v, 1);
    EXPECT_LE(v, 9);
    EXPECT_EQ(v, std::trunc(v));
    EXPECT_EQ(v, inputValue(5, 1, 0, e));
  }
  EXPECT_EQ(prim::roundTo(2.7, model::DType::I32), 2);
  EXPECT_EQ(prim::roundTo(-2.7, model::DType::I32), -2);
  EXPECT_EQ(prim::roundTo(4294967296.0 + 5, model::DType::I32), 5);
  EXPECT_EQ(prim::roundTo(255 + 2, model::DType::U8), 1);
  EXPECT_EQ(prim::roundTo(1.0 / 3.0, model::DType::F32), static_cast<double>(1.0f / 3.0f));
}

TEST(Run, ManifestRaceIsReported) {
  // Device 1 stores into output while device 0's DMA into it is in flight.
  model::Program p = testing::permute(true, true);
  RunOptions o;
  o.policy = Policy::Replay;
  using K = ScheduleStep::Kind;
  o.schedule = {{K::Device, 0}, {K::Device, 1}, {K::Device, 0}, {K::Device, 1},
                {K::Device, 0}, {K::Device, 0}, {K::Device, 1}};
  // enter, enter, barrier, barrier, store(0), start dma 0 (to 1), store(1)
  RunResult r = runOnce(p, o);
  ASSERT_FALSE(r.divergedAt.has_value());
  ASSERT_TRUE(hasFinding(r.findings, FindingKind::Race, 4));
  const report::Finding &f = r.findings.front();
  EXPECT_EQ(f.engine, "run");
  EXPECT_EQ(f.schedule, o.schedule);
  EXPECT_EQ(f.trace.steps.size(), o.schedule.size());
  ASSERT_EQ(f.secondary.size(), 1u);
  EXPECT_EQ(f.secondary[0].loc.line, 5u);
  EXPECT_NE(f.message.find("output"), std::string::npos) << f.message;
}

TEST(Run, RaceOrderedSafelyByTheScheduleIsStillReported) {
  // Both stores run before either DMA starts: nothing overlaps in time, but nothing
  // orders device 1's store before device 0's DMA either (vector clocks).
  model::Program p = testing::permute(true, true);
  RunOptions o;
  o.policy = Policy::RoundRobin;
  using K = ScheduleStep::Kind;
  o.schedule = {{K::Device, 0}, {K::Device, 1}, {K::Device, 0},
                {K::Device, 1}, {K::Device, 0}, {K::Device, 1}};
  RunResult r = runOnce(p, o);
  EXPECT_TRUE(r.completed);
  EXPECT_TRUE(hasFinding(r.findings, FindingKind::Race, 4));
}

TEST(Run, WaitsOrderTheDmaBeforeLaterAccesses) {
  // right_permute reads nothing after its waits; all_reduce reads the received slot
  // after its waits: no race under many schedules.
  for (const char *name : {"right_permute.dk", "all_reduce.dk", "all_gather.dk"}) {
    std::optional<model::Program> p = testing::lowerExample(name, 3);
    ASSERT_TRUE(p);
    for (uint64_t seed = 0; seed < 20; ++seed) {
      RunOptions o;
      o.seed = seed;
      o.policy = seed % 2 ? Policy::Priority : Policy::Random;
      RunResult r = runOnce(*p, o);
      EXPECT_TRUE(r.completed) << name;
      EXPECT_TRUE(r.findings.empty())
          << name << " seed " << seed << ": " << r.findings.front().message;
    }
  }
}

TEST(Run, DeadlockNamesTheStuckWait) {
  model::Program p = testing::signalWait(1, 2);
  RunResult r = runOnce(p, {});
  EXPECT_FALSE(r.completed);
  ASSERT_TRUE(hasFinding(r.findings, FindingKind::Deadlock, 20));
  // The property's message names the wait; the witness's detail its state.
  EXPECT_EQ(r.findings.back().message, "wait for ready >= 1 (wait) never returns");
  EXPECT_EQ(r.findings.back().detail, "device 1 waits for ready >= 1 but it is 0");
}

TEST(Run, ExitViolationWithoutWaits) {
  model::Program p = testing::permute(false);
  RunOptions o;
  o.policy = Policy::RoundRobin;
  RunResult r = runOnce(p, o);
  EXPECT_TRUE(hasFinding(r.findings, FindingKind::ExitViolation, 7));
}

TEST(Run, LifetimeViolationOfALateSignal) {
  // Device 1 waits once and leaves; device 0's second signal reaches it outside.
  model::Program p = testing::signalWait(2, 1);
  RunOptions o;
  o.policy = Policy::Replay;
  using K = ScheduleStep::Kind;
  o.schedule = {{K::Device, 0}, {K::Device, 1}, {K::Device, 0}, {K::Device, 1},
                {K::Device, 0}, {K::Device, 1}, {K::Device, 1}, {K::Device, 0}};
  RunResult r = runOnce(p, o);
  ASSERT_FALSE(r.divergedAt.has_value());
  EXPECT_TRUE(hasFinding(r.findings, FindingKind::LifetimeViolation, 10));
}

TEST(Run, ReplayStopsAtADisabledStep) {
  model::Program p = testing::signalWait(1, 1);
  RunOptions o;
  o.policy = Policy::Replay;
  o.schedule = {{ScheduleStep::Kind::Land, 0}};
  RunResult r = runOnce(p, o);
  ASSERT_TRUE(r.divergedAt.has_value());
  EXPECT_EQ(*r.divergedAt, 0u);
  EXPECT_TRUE(r.schedule.empty());
}

TEST(Run, SameSeedSameRun) {
  std::optional<model::Program> p = testing::lowerExample("all_reduce_no_capacity.dk", 3);
  ASSERT_TRUE(p);
  RunOptions o;
  o.seed = 11;
  RunResult a = runOnce(*p, o), b = runOnce(*p, o);
  EXPECT_EQ(a.schedule, b.schedule);
  EXPECT_EQ(a.memory, b.memory);
  ASSERT_EQ(a.findings.size(), b.findings.size());
  for (size_t i = 0; i < a.findings.size(); ++i)
    EXPECT_EQ(a.findings[i].message, b.findings[i].message);
}

/// The id of the buffer called `name`, or -1.
model::BufferId bufferNamed(const model::Program &p, const std::string &name) {
  for (size_t b = 0; b < p.buffers.size(); ++b)
    if (p.buffers[b].name == name)
      return static_cast<model::BufferId>(b);
  return -1;
}

TEST(Run, AllReduceSumsForEveryMeshSize) {
  for (int64_t n = 2; n <= 8; ++n) {
    std::optional<model::Program> p = testing::lowerExample("all_reduce.dk", n);
    ASSERT_TRUE(p);
    model::BufferId input = bufferNamed(*p, "input"), output = bufferNamed(*p, "output");
    ASSERT_GE(input, 0);
    ASSERT_GE(output, 0);
    for (uint64_t seed : {0u, 1u, 2u}) {
      RunOptions o;
      o.seed = seed;
      o.inputSeed = seed;
      RunResult r = runOnce(*p, o);
      ASSERT_TRUE(r.completed) << "N=" << n;
      EXPECT_TRUE(r.findings.empty()) << "N=" << n;
      for (model::DeviceId d = 0; d < n; ++d)
        for (int64_t e = 0; e < 8; ++e) {
          double sum = 0;
          for (model::DeviceId j = 0; j < n; ++j)
            sum += inputValue(seed, j, input, e);
          EXPECT_EQ(r.memory[d][output][e], sum) << "N=" << n << " device " << d;
        }
    }
  }
}

TEST(Run, ReduceScatterSumsForEveryMeshSize) {
  for (int64_t n = 2; n <= 8; ++n) {
    std::optional<model::Program> p = testing::lowerExample("reduce_scatter_bidirectional.dk", n);
    ASSERT_TRUE(p);
    model::BufferId input = bufferNamed(*p, "input"), output = bufferNamed(*p, "output");
    ASSERT_GE(input, 0);
    ASSERT_GE(output, 0);
    for (Policy policy : {Policy::Random, Policy::RoundRobin, Policy::Priority}) {
      RunOptions o;
      o.policy = policy;
      o.seed = 5;
      o.inputSeed = 9;
      RunResult r = runOnce(*p, o);
      ASSERT_TRUE(r.completed) << "N=" << n;
      EXPECT_TRUE(r.findings.empty()) << "N=" << n;
      // Device d ends with output = sum over devices j of input_j[d, :].
      for (model::DeviceId d = 0; d < n; ++d)
        for (int64_t e = 0; e < 4; ++e) {
          double sum = 0;
          for (model::DeviceId j = 0; j < n; ++j)
            sum += inputValue(9, j, input, d * 4 + e);
          EXPECT_EQ(r.memory[d][output][e], sum) << "N=" << n << " device " << d;
        }
    }
  }
}

TEST(Confirm, EveryRacyExampleShowsAWrongValue) {
  // Each racy example, at its smallest mesh: some seeded schedule gives a final
  // value that differs from another schedule's, without a witness to start from.
  const std::pair<const char *, int64_t> racy[] = {
      {"zero_dst_race.dk", 2},          {"all_gather_shared_sem.dk", 3},
      {"all_reduce_no_capacity.dk", 2}, {"right_permute_two_senders.dk", 2},
      {"dma_table_race.dk", 4},
  };
  for (const auto &[file, n] : racy) {
    std::optional<model::Program> p = testing::lowerExample(file, n);
    ASSERT_TRUE(p) << file;
    std::optional<std::string> w = findWrongValue(*p, 0, nullptr);
    ASSERT_TRUE(w.has_value()) << file;
    EXPECT_NE(w->find(" on device "), std::string::npos) << *w;
    EXPECT_NE(w->find(" and "), std::string::npos) << *w;
  }
}

TEST(Confirm, OtherEnginesFindingsAreReplayed) {
  std::optional<model::Program> p = testing::lowerExample("zero_dst_race.dk", 2);
  ASSERT_TRUE(p);
  report::Verdict v = explore(*p, ExploreOptions{});
  ASSERT_FALSE(v.findings.empty());
  report::Finding found = v.findings.front();
  found.confirmed = false;
  found.wrongValue.clear();
  found.engine = "spin";
  report::Finding wrongProperty = found;
  wrongProperty.property = "race.99"; // not violated: the replay must not confirm it
  std::vector<report::Finding> findings = {found, wrongProperty};
  confirmFindings(*p, findings);
  EXPECT_TRUE(findings[0].replayTried);
  EXPECT_TRUE(findings[0].confirmed);
  EXPECT_NE(findings[0].wrongValue.find("follow the witness schedule up to the race"),
            std::string::npos)
      << findings[0].wrongValue;
  EXPECT_TRUE(findings[1].replayTried);
  EXPECT_FALSE(findings[1].confirmed);
}

TEST(Confirm, WrongValueSaysWhichOrderGivesWhichValue) {
  // zero_dst_race at 2 devices: device 1's output is the landing buffer, zeroed by the
  // store at line 15 while dma 0 lands there. Two runs follow the witness up to the
  // race and take the two accesses in each order: the store first leaves the data
  // that lands (5), the landing first is overwritten by the zeros (0). The text names
  // the element, both values, which order gave which, and claims no expected value.
  std::optional<model::Program> p = testing::lowerExample("zero_dst_race.dk", 2);
  ASSERT_TRUE(p);
  std::vector<report::Finding> findings = explore(*p, ExploreOptions{}).findings;
  ASSERT_FALSE(findings.empty());
  findings.front().wrongValue.clear();
  confirmFindings(*p, findings);
  EXPECT_EQ(findings.front().wrongValue,
            "output[0] on device 1 ends as 5 when the store to landing[:] at line 15 on "
            "device 1 runs first and as 0 when dma 0 (started at line 17 on device 0) lands "
            "in landing[:] on device 1 first (both runs follow the witness schedule up to "
            "the race, take the two in that order, then finish round-robin); nothing in the "
            "kernel orders them, so a run may end with either value: the one of the order "
            "the kernel means is right");
}

TEST(Confirm, EveryRaceHasItsOwnWrongValueWhateverTheOrderOfTheFindings) {
  // all_reduce_no_capacity at 2 devices has six races: each gets a wrong value of its
  // own accesses, the same whichever findings come before it.
  std::optional<model::Program> p = testing::lowerExample("all_reduce_no_capacity.dk", 2);
  ASSERT_TRUE(p);
  std::vector<report::Finding> races;
  for (report::Finding &f : explore(*p, ExploreOptions{}).findings)
    if (f.kind == report::FindingKind::Race) {
      f.wrongValue.clear();
      races.push_back(f);
    }
  ASSERT_GE(races.size(), 3u);
  std::vector<report::Finding> forward = races;
  std::vector<report::Finding> backward(races.rbegin(), races.rend());
  confirmFindings(*p, forward);
  confirmFindings(*p, backward);
  std::set<std::string> texts;
  for (size_t i = 0; i < forward.size(); ++i) {
    const report::Finding &f = forward[i];
    EXPECT_FALSE(f.wrongValue.empty()) << f.property;
    EXPECT_EQ(f.wrongValue, backward[forward.size() - 1 - i].wrongValue) << f.property;
    // It names the race's own accesses: the line of its access.
    EXPECT_NE(f.wrongValue.find(fmt::format("at line {} on device", f.primary.loc.line)),
              std::string::npos)
        << f.property << ": " << f.wrongValue;
    texts.insert(f.wrongValue);
  }
  EXPECT_GT(texts.size(), 1u);
}

TEST(Confirm, CorrectKernelAgreesInEverySchedule) {
  std::optional<model::Program> p = testing::lowerExample("all_reduce.dk", 3);
  ASSERT_TRUE(p);
  EXPECT_FALSE(findWrongValue(*p, 0, nullptr).has_value());
}

} // namespace
} // namespace dkv::executor
