// Tests of the static pre-check.
#include "model/Precheck.h"
#include "Fixtures.h"
#include "report/RootCause.h"

#include <gtest/gtest.h>

namespace dkv::model {
namespace {

TEST(Precheck, CorrectPermuteHasNoFindings) {
  EXPECT_TRUE(precheck(testing::ringPermute()).empty());
}

TEST(Precheck, MissingWaitsLeaveSemaphoresNonZero) {
  auto findings = precheck(testing::ringPermute(/*withWaits=*/false));
  // send and recv on each of the two devices
  ASSERT_EQ(findings.size(), 4u);
  for (const auto &f : findings) {
    EXPECT_EQ(f.kind, report::FindingKind::ExitViolation);
    EXPECT_EQ(f.engine, "precheck");
    EXPECT_FALSE(f.secondary.empty());
  }
}

TEST(Precheck, WaitForMoreBytesThanEverArriveIsADeadlock) {
  Program p = testing::ringPermute();
  // device 1 waits for a second DMA's worth of bytes that nobody sends
  auto &events = p.processes[1].events;
  events.insert(events.end() - 1, Event{SemWait{1, 32, WaitOrigin::DmaWaitRecv}, {9, 3}, 0});
  auto findings = precheck(p);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].kind, report::FindingKind::Deadlock);
  EXPECT_EQ(findings[0].primary.loc, (SourceLoc{9, 3}));
  EXPECT_NE(findings[0].message.find("only 32 can ever arrive"), std::string::npos)
      << findings[0].message;
}

// A DMA semaphore's unit is --sem-unit bytes: the message says so, never "(bytes)"
// for units of 8 bytes.
TEST(Precheck, NeverEnoughNamesTheTrueUnit) {
  for (int64_t unit : {1, 8}) {
    Program p = testing::ringPermute();
    p.options.semUnit = unit;
    auto &events = p.processes[1].events;
    events.insert(events.end() - 1, Event{SemWait{1, 32, WaitOrigin::DmaWaitRecv}, {9, 3}, 0});
    auto findings = precheck(p);
    ASSERT_EQ(findings.size(), 1u);
    const std::string want =
        unit == 1 ? "32 units (bytes) of DMA data" : "32 units (8 bytes each) of DMA data";
    EXPECT_NE(findings[0].message.find(want), std::string::npos) << findings[0].message;
  }
}

TEST(Precheck, BarrierSemaphoreIsExemptFromTheExitRule) {
  Program p = testing::ringPermute();
  p.semaphores.push_back({"barrier", {}, SemKind::Barrier, kKernelScope, {}});
  p.processes[0].events.insert(p.processes[0].events.begin() + 1, Event{Signal{1, 2, 1}, {}, 0});
  EXPECT_TRUE(precheck(p).empty());
}

// The same regular semaphore left non-zero on every device is one root cause (as the
// engines' findings of it are), not one per device: at 256 devices an inconclusive
// engine would otherwise leave 256 causes of one missing wait.
TEST(Precheck, ASemaphoreLeftOverOnEveryDeviceIsOneCause) {
  Program p = testing::ringPermute();
  p.semaphores.push_back({"ready", {}, SemKind::Regular, kKernelScope, {3, 9}});
  const SemId ready = static_cast<SemId>(p.semaphores.size() - 1);
  for (DeviceId d = 0; d < 2; ++d)
    p.processes[d].events.insert(p.processes[d].events.begin() + 1,
                                 Event{Signal{1 - d, ready, 1}, {5, 3}, 0});
  const std::vector<report::Finding> findings = precheck(p);
  ASSERT_EQ(findings.size(), 2u);
  const std::vector<report::RootCause> causes = report::rootCauses(findings, nullptr);
  ASSERT_EQ(causes.size(), 1u);
  EXPECT_EQ(causes[0].findings.size(), 2u);
  EXPECT_EQ(causes[0].message, "a signal of ready is never taken by a wait");
}

TEST(Precheck, SignalOfDmaSemaphoreIsReported) {
  Program p = testing::ringPermute();
  p.processes[0].events.insert(p.processes[0].events.begin() + 1,
                               Event{Signal{0, 0, 32}, {4, 2}, 0});
  auto findings = precheck(p);
  ASSERT_FALSE(findings.empty());
  bool found = false;
  for (const auto &f : findings)
    found |= f.message.find("signals DMA semaphore send by hand") != std::string::npos;
  EXPECT_TRUE(found);
}

} // namespace
} // namespace dkv::model
