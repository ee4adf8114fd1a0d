// Tests of reading pan's output and trail replays, and of running processes.
#include "promela/Replay.h"
#include "PromelaFixtures.h"
#include "promela/Process.h"
#include "semantics/Witness.h"

#include <gtest/gtest.h>

namespace dkv::promela {
namespace {

const char *kPanError = R"(pan:1: assertion violated (rcv[0]==0) (at depth 9)
pan: wrote model.pml.trail

(Spin Version 6.5.2 -- 6 December 2019)
Warning: Search not completed
	+ Partial Order Reduction

Full statespace search for:
	never claim         	- (none specified)
	assertion violations	+
	cycle checks       	- (disabled by -DSAFETY)
	invalid end states	+

State-vector 44 byte, depth reached 14, errors: 1
       15 states, stored
        3 states, matched
       18 transitions (= stored+matched)
        0 atomic steps
hash conflicts:         0 (resolved)

Stats on memory usage (in Megabytes):
    0.001	equivalent memory usage for states (stored*(State-vector + overhead))
    0.182	actual memory usage for states
  128.000	memory used for hash table (-w24)
    0.054	memory used for DFS stack (-m1000)
  128.195	total actual memory usage

pan: elapsed time 0.25 seconds
)";

TEST(PanOutput, ReadsErrorsAndStatistics) {
  PanReport r = parsePanOutput(kPanError);
  EXPECT_TRUE(r.sawSummary);
  EXPECT_EQ(r.errors, 1);
  EXPECT_TRUE(r.assertionViolated);
  EXPECT_EQ(r.assertionText, "(rcv[0]==0)");
  EXPECT_FALSE(r.invalidEndState); // "invalid end states +" is not an error
  EXPECT_TRUE(r.searchNotCompleted);
  EXPECT_EQ(r.stateVectorBytes, 44);
  EXPECT_EQ(r.depthReached, 14);
  EXPECT_EQ(r.statesStored, 15);
  EXPECT_EQ(r.statesMatched, 3);
  EXPECT_EQ(r.transitions, 18);
  EXPECT_DOUBLE_EQ(r.memoryMb, 128.195);
  EXPECT_DOUBLE_EQ(r.elapsedSeconds, 0.25);
}

// pan prints counts over 999999 with "%9g": six significant digits and an exponent.
// They are read as numbers (not "1" from "1.04858e+06") and marked as rounded.
TEST(PanOutput, ReadsLargeCountsAsRounded) {
  PanReport r = parsePanOutput("State-vector 64 byte, depth reached 120, errors: 0\n"
                               "1.04858e+06 states, stored\n"
                               "   123456 states, matched\n"
                               "1.17204e+06 transitions (= stored+matched)\n");
  EXPECT_EQ(r.statesStored, 1048580);
  EXPECT_EQ(r.statesMatched, 123456);
  EXPECT_EQ(r.transitions, 1172040);
  EXPECT_TRUE(r.countsRounded);
  EXPECT_FALSE(parsePanOutput(kPanError).countsRounded);
}

TEST(PanOutput, ReadsLimits) {
  PanReport r = parsePanOutput("error: max search depth too small\npan: reached -DMEMLIM bound\n"
                               "pan:1: invalid end state (at depth 4)\n");
  EXPECT_TRUE(r.depthTooSmall);
  EXPECT_TRUE(r.outOfMemory);
  EXPECT_TRUE(r.invalidEndState);
  EXPECT_FALSE(r.sawSummary);
}

TEST(Replay, ParsesStepsAndTheFailedAssert) {
  Replay r = parseReplay("DKV d 1 0 enter invocation 0\nDKV s 0 dma 0 send chunk 1\n"
                         "DKV l 3 dma 3 land chunk\nnoise\n"
                         "spin: model.pml:42, Error: assertion violated\n"
                         "spin: text of failed assertion: assert((rcv[0]==0))\n");
  ASSERT_EQ(r.steps.size(), 3u);
  EXPECT_EQ(r.steps[0].kind, ReplayStep::Kind::Device);
  EXPECT_EQ(r.steps[0].id, 1);
  EXPECT_EQ(r.steps[0].event, 0);
  EXPECT_EQ(r.steps[1].kind, ReplayStep::Kind::Send);
  EXPECT_EQ(r.steps[2].kind, ReplayStep::Kind::Land);
  EXPECT_EQ(r.steps[2].id, 3);
  EXPECT_EQ(r.assertLine, 42);
  EXPECT_EQ(r.assertText, "assert((rcv[0]==0))");
}

TEST(Replay, GivesTheEngineNeutralSchedule) {
  Replay r = parseReplay("DKV d 1 0 enter invocation 0\nDKV s 0 dma 0 send chunk\n"
                         "DKV l 0 dma 0 land chunk\nDKV d 0 4 wait recv >= 32\n");
  using Step = report::ScheduleStep;
  report::Schedule expected = {{Step::Kind::Device, 1},
                               {Step::Kind::Send, 0},
                               {Step::Kind::Land, 0},
                               {Step::Kind::Device, 0}};
  EXPECT_EQ(toSchedule(r.steps), expected);
}

TEST(Replay, TrailStepsReplayOnTheSharedSemantics) {
  model::Program p = testing::rightPermute(2);
  semantics::Instance instance(p);
  // Device 0 enters, passes the barrier, starts, its DMA sends and lands; device 1
  // enters only.
  std::vector<ReplayStep> steps = {
      {ReplayStep::Kind::Device, 0, 0}, {ReplayStep::Kind::Device, 1, 0},
      {ReplayStep::Kind::Device, 0, 1}, {ReplayStep::Kind::Device, 0, 2},
      {ReplayStep::Kind::Send, 0, 0},   {ReplayStep::Kind::Land, 0, 0},
      {ReplayStep::Kind::Device, 0, 3}};
  semantics::ControlState before;
  report::Trace trace;
  std::string error;
  std::optional<semantics::ControlState> end =
      semantics::replaySchedule(instance.machine(), toSchedule(steps), before, &trace, error);
  ASSERT_TRUE(end) << error;
  ASSERT_EQ(trace.steps.size(), 7u);
  EXPECT_EQ(trace.steps[4].actor.kind, report::Actor::Kind::Dma);
  EXPECT_EQ(trace.steps[4].semValues.at("send@0"), 32);
  EXPECT_EQ(trace.steps[5].actor.device, 1);
  EXPECT_EQ(trace.steps[5].semValues.at("recv@1"), 32);
  EXPECT_EQ(trace.steps[6].semValues.at("send@0"), 0);
  EXPECT_EQ(end->pc[0], 4);
  // A step that is not enabled is refused with the reason.
  steps.push_back({ReplayStep::Kind::Land, 0, 0});
  EXPECT_FALSE(
      semantics::replaySchedule(instance.machine(), toSchedule(steps), before, nullptr, error));
  EXPECT_NE(error.find("step 8 ('land 0') is not enabled"), std::string::npos) << error;
}

TEST(Process, TimesOutAndReportsMissingPrograms) {
  std::string dir = ::testing::TempDir();
  ProcessResult slow = runProcess({"sleep", "5"}, dir, dir + "p.out", dir + "p.err", 0.2);
  EXPECT_EQ(slow.status, ProcessResult::Status::TimedOut);
  EXPECT_LT(slow.seconds, 2.0);
  ProcessResult missing = runProcess({"dkv-no-such-program"}, dir, dir + "p.out", dir + "p.err", 1);
  EXPECT_EQ(missing.status, ProcessResult::Status::SpawnFailed);
  ProcessResult echo = runProcess({"echo", "a b;c"}, dir, dir + "p.out", dir + "p.err", 5);
  EXPECT_TRUE(echo.ok());
  EXPECT_EQ(readTextFile(dir + "p.out"), "a b;c\n");
}

} // namespace
} // namespace dkv::promela
