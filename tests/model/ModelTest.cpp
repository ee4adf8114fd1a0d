// Tests of the model helpers, the printer and the verifier.
#include "Fixtures.h"
#include "model/Printer.h"
#include "model/Verifier.h"

#include <gtest/gtest.h>

#include <sstream>

namespace dkv::model {
namespace {

TEST(Region, OverlapNeedsEveryDimensionToIntersect) {
  Region a{0, {{0, 4}, {0, 8}}};
  Region b{0, {{3, 5}, {7, 9}}};
  Region c{0, {{4, 6}, {0, 8}}};
  Region other{1, {{0, 4}, {0, 8}}};
  EXPECT_TRUE(a.overlaps(b));
  EXPECT_FALSE(a.overlaps(c)); // half-open: [0,4) and [4,6) are disjoint
  EXPECT_FALSE(a.overlaps(other));
  EXPECT_EQ(a.elementCount(), 32);
}

TEST(Program, NamesSemaphoresAndRegions) {
  Program p = testing::ringPermute();
  p.semaphores.push_back({"caps", {1, 0}, SemKind::Regular, kKernelScope, {}});
  EXPECT_EQ(p.semName(2), "caps[1, 0]");
  EXPECT_EQ(p.regionName(Region{0, {{0, 8}}}), "input[:]");
  EXPECT_EQ(p.regionName(Region{0, {{2, 3}}}), "input[2]");
  EXPECT_EQ(p.regionName(Region{0, {{2, 6}}}), "input[2:6]");
  EXPECT_EQ(prim::byteSize(DType::BF16), 2);
}

// A sequence of two calls run twice (--invocations 2): invocations 0, 1 are run 0 and
// 2, 3 run 1; an array of the sequence taken by both calls lives in calls 0..1 of each
// run (docs/model.md "Kernel sequences").
TEST(Program, SequenceWindowsRepeatPerRun) {
  Program p = testing::ringPermute();
  p.kernels = {"a", "b"};
  Call a, b;
  b.kernel = 1;
  p.calls = {a, b, a, b};
  p.sequenceLength = 2;
  p.options.invocations = 4;
  p.semaphores[0].liveFirst = 0;
  p.semaphores[0].liveLast = 1;
  EXPECT_EQ(p.sequenceRuns(), 2);
  EXPECT_EQ(p.semWindow(0, 1).first, 0);
  EXPECT_EQ(p.semWindow(0, 1).last, 1);
  EXPECT_EQ(p.semWindow(0, 2).first, 2);
  EXPECT_EQ(p.semWindow(0, 3).last, 3);
  EXPECT_FALSE(p.exitChecks(0, 0));
  EXPECT_TRUE(p.exitChecks(0, 1));
  EXPECT_FALSE(p.exitChecks(0, 2));
  EXPECT_TRUE(p.exitChecks(0, 3));
  auto sequenceProblems = [&]() {
    std::string text;
    for (const std::string &problem : verifyProgram(p))
      if (problem.find("runs of") != std::string::npos ||
          problem.find("window") != std::string::npos ||
          problem.find("differs") != std::string::npos)
        text += problem + "\n";
    return text;
  };
  EXPECT_EQ(sequenceProblems(), "");
  // A window past one run, a partial run, or a run that differs from the first.
  p.semaphores[0].liveLast = 2;
  EXPECT_NE(sequenceProblems().find("window 0..2"), std::string::npos);
  p.semaphores[0].liveLast = 1;
  p.calls[3].kernel = 0;
  EXPECT_NE(sequenceProblems().find("call 3 differs from call 1"), std::string::npos);
  p.calls.pop_back();
  p.options.invocations = 3;
  EXPECT_NE(sequenceProblems().find("3 calls are no whole number of runs of 2"), std::string::npos);
}

TEST(Verifier, AcceptsWellFormedProgram) {
  EXPECT_TRUE(verifyProgram(testing::ringPermute()).empty());
}

TEST(Verifier, RejectsOutOfBoundsRegionAndDoubleStart) {
  Program p = testing::ringPermute();
  p.dmas[0].dst.ranges[0].end = 9;
  p.processes[0].events.insert(p.processes[0].events.begin() + 1, Event{DmaStart{0}, {}, 0});
  auto problems = verifyProgram(p);
  ASSERT_EQ(problems.size(), 2u);
  EXPECT_NE(problems[0].find("outside [0, 8)"), std::string::npos) << problems[0];
  EXPECT_NE(problems[1].find("started 2 times"), std::string::npos) << problems[1];
}

TEST(Verifier, RejectsChunkUnitsThatDoNotSumToBytes) {
  Program p = testing::ringPermute();
  p.dmas[1].landUnits = {16};
  auto problems = verifyProgram(p);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("chunk units sum to 16"), std::string::npos);
}

TEST(Verifier, RejectsRegularSemaphoreUnitsOtherThanOneAtTheEnd) {
  Program p = testing::ringPermute();
  p.semaphores[p.dmas[1].recvSem].kind = SemKind::Regular;
  p.dmas[0].recvSem = p.dmas[1].recvSem; // both DMAs land on the now regular semaphore
  p.dmas[0].landUnits = {1};
  p.dmas[1].landUnits = {32};
  auto problems = verifyProgram(p);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("land units [32] on a regular semaphore"), std::string::npos)
      << problems[0];
}

TEST(Verifier, RejectsEventsOutsideTheKernel) {
  Program p = testing::ringPermute();
  p.processes[1].events.push_back({Signal{0, 0, 1}, {}, 0});
  auto problems = verifyProgram(p);
  ASSERT_FALSE(problems.empty());
  EXPECT_NE(problems[0].find("outside the kernel"), std::string::npos);
}

TEST(Printer, PrintsEveryEventWithItsLocation) {
  std::ostringstream out;
  printProgram(testing::ringPermute(), out);
  std::string text = out.str();
  EXPECT_NE(text.find("mesh x=2 (2 devices)"), std::string::npos) << text;
  EXPECT_NE(text.find("dma 0: remote device 0 input[:] -> device 1 output[:], 32 B"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("wait recv >= 32 (wait_recv)"), std::string::npos) << text;
  EXPECT_NE(text.find("@6:3"), std::string::npos) << text;
  std::ostringstream again;
  printProgram(testing::ringPermute(), again);
  EXPECT_EQ(text, again.str());
}

} // namespace
} // namespace dkv::model
