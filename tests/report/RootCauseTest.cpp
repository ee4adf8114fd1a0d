// Tests of the root-cause rule (report/RootCause.h, docs/explain.md "Root causes") on
// hand-made findings: which facts make findings one cause, and which do not.
#include "report/RootCause.h"

#include <gtest/gtest.h>

namespace dkv::report {
namespace {

using What = FindingFacts::What;

SourceLoc at(uint32_t line, uint32_t col = 3) { return SourceLoc{line, col}; }

Finding exitDma(uint32_t dma, bool dst, const std::string &id) {
  Finding f;
  f.kind = FindingKind::ExitViolation;
  f.property = id;
  f.message =
      "a device leaves the kernel while a dma is still " + std::string(dst ? "writing" : "reading");
  f.primary = {at(17, 1), ""};
  f.facts.what = What::ExitDma;
  f.facts.dma = at(dma);
  f.facts.dst = dst;
  f.facts.exit = at(17, 1);
  return f;
}

Finding exitSemaphore(std::vector<uint32_t> counters, bool dst, const std::string &id) {
  Finding f;
  f.kind = FindingKind::ExitViolation;
  f.property = id;
  f.message = "a device leaves the kernel with semaphore s non-zero";
  f.primary = {at(17, 1), ""};
  f.facts.what = What::ExitSemaphore;
  f.facts.dmaSemaphore = true;
  f.facts.semaphore = at(12, 11);
  for (uint32_t c : counters) {
    f.facts.countedBy.push_back(at(c));
    f.facts.countedDst.push_back(dst);
  }
  return f;
}

Finding landOutside(uint32_t dma, const std::string &id) {
  Finding f;
  f.kind = FindingKind::LifetimeViolation;
  f.property = id;
  f.message = "dma lands on a device that is not in the invocation";
  f.primary = {at(dma), ""};
  f.facts.what = What::LandOutside;
  f.facts.dma = at(dma);
  f.facts.dst = true;
  return f;
}

Finding race(uint32_t access, const char *role, uint32_t dma, bool dst, const std::string &id) {
  Finding f;
  f.kind = FindingKind::Race;
  f.property = id;
  f.message = "an access races with a dma";
  f.primary = {at(access), ""};
  f.facts.what = What::Race;
  f.facts.access = at(access);
  f.facts.accessRole = role;
  f.facts.buffer = "buf";
  f.facts.dma = at(dma);
  f.facts.dst = dst;
  return f;
}

TEST(RootCauses, ADmaNeverWaitedIsOneCauseWithItsConsequences) {
  std::vector<Finding> findings = {exitDma(16, true, "exit.0"),
                                   exitSemaphore({16}, false, "exit.1"),
                                   exitSemaphore({16}, true, "exit.2"),
                                   exitDma(16, false, "exit.3"), landOutside(16, "lifetime.0")};
  std::vector<RootCause> causes = rootCauses(findings, nullptr);
  ASSERT_EQ(causes.size(), 1u);
  EXPECT_EQ(causes[0].rule, RootCause::Rule::UnwaitedDma);
  EXPECT_EQ(causes[0].findings, (std::vector<size_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(causes[0].message, "dma started at line 16 is never waited");
  EXPECT_EQ(causes[0].primary.loc, at(16));
  EXPECT_TRUE(causes[0].ownHeading());
}

TEST(RootCauses, OneSideOpenAndSomeWaitsSayWhich) {
  std::vector<Finding> findings = {exitDma(18, true, "exit.0"),
                                   exitSemaphore({18}, true, "exit.2")};
  findings[0].facts.waited = true;
  std::vector<RootCause> causes = rootCauses(findings, nullptr);
  ASSERT_EQ(causes.size(), 1u);
  EXPECT_EQ(causes[0].message, "dma started at line 18 is not waited for on its receive side "
                               "(wait_recv) before the kernel exits");
}

TEST(RootCauses, ALandingJoinsOnlyACauseWithTheReceiveSide) {
  // The send side only: a landing outside the invocation is not its consequence (the
  // receiver may not have entered yet), so it stays a cause of its own.
  std::vector<Finding> findings = {exitDma(16, false, "exit.0"), landOutside(16, "lifetime.0")};
  EXPECT_EQ(rootCauses(findings, nullptr).size(), 2u);
  findings.push_back(exitDma(16, true, "exit.1"));
  EXPECT_EQ(rootCauses(findings, nullptr).size(), 1u);
}

TEST(RootCauses, ASemaphoreOfSeveralStartsIsNotOneDmasConsequence) {
  std::vector<Finding> findings = {exitDma(16, true, "exit.0"),
                                   exitSemaphore({16, 20}, true, "exit.1")};
  EXPECT_EQ(rootCauses(findings, nullptr).size(), 2u);
}

TEST(RootCauses, DifferentDmasAreDifferentCauses) {
  std::vector<Finding> findings = {exitDma(16, true, "exit.0"), exitDma(20, true, "exit.1")};
  EXPECT_EQ(rootCauses(findings, nullptr).size(), 2u);
}

TEST(RootCauses, OnePairOfAccessesSeenFromBothSidesIsOneCause) {
  // A local copy at 26 and a dma at 42 writing the same elements: each finding is at
  // one access and names the other's start.
  std::vector<Finding> findings = {race(26, "dma-destination", 42, true, "race.0"),
                                   race(42, "dma-destination", 26, true, "race.1"),
                                   race(26, "dma-destination", 50, true, "race.2")};
  std::vector<RootCause> causes = rootCauses(findings, nullptr);
  ASSERT_EQ(causes.size(), 2u);
  EXPECT_EQ(causes[0].rule, RootCause::Rule::RacePair);
  EXPECT_EQ(causes[0].findings, (std::vector<size_t>{0, 1}));
  // The heading is the first finding's own.
  EXPECT_FALSE(causes[0].ownHeading());
  EXPECT_EQ(causes[1].findings, (std::vector<size_t>{2}));
  // A load and a landing at the same places is another pair than two writes.
  std::vector<Finding> other = {race(26, "load", 42, true, "race.0"),
                                race(42, "dma-destination", 26, true, "race.1")};
  EXPECT_EQ(rootCauses(other, nullptr).size(), 2u);
}

TEST(RootCauses, TheRuleLooksAtFactsNotMessages) {
  std::vector<Finding> findings = {exitDma(16, true, "exit.0"), exitDma(16, false, "exit.1")};
  findings[1].message = "something else entirely";
  EXPECT_EQ(rootCauses(findings, nullptr).size(), 1u);
  // Findings without facts, equal messages and places: still two causes.
  Finding a, b;
  a.message = b.message = "same";
  a.primary = b.primary = {at(5), ""};
  EXPECT_EQ(rootCauses({a, b}, nullptr).size(), 2u);
}

TEST(RootCauses, ASuppressedFindingIsAlone) {
  std::vector<Finding> findings = {exitDma(16, true, "exit.0"), exitDma(16, false, "exit.1")};
  findings[1].suppressed = "known";
  EXPECT_EQ(rootCauses(findings, nullptr).size(), 2u);
}

TEST(RootCauses, TheSameCauseAtSeveralInstancesIsOne) {
  // Property ids differ between device counts; the facts do not.
  Verdict two, three;
  two.status = three.status = Verdict::Status::Findings;
  two.findings = {exitDma(16, true, "exit.0"), exitDma(16, false, "exit.1")};
  three.findings = {race(10, "store", 16, true, "race.0"), exitDma(16, true, "exit.3"),
                    exitDma(16, false, "exit.4")};
  std::vector<InstanceReport> reports(3);
  reports[0].verdict = &two;
  reports[0].devices = 2;
  reports[1].verdict = &three;
  reports[1].devices = 3;
  reports[2].devices = 4; // did not load
  std::vector<FileCause> causes = fileCauses(reports);
  ASSERT_EQ(causes.size(), 2u);
  EXPECT_EQ(causes[0].instances, (std::vector<size_t>{0, 1}));
  EXPECT_EQ(causes[0].causeIndex, (std::vector<size_t>{0, 1}));
  EXPECT_EQ(causes[0].mainFinding, (std::vector<size_t>{0, 1}));
  EXPECT_EQ(causes[1].instances, (std::vector<size_t>{1}));
  EXPECT_EQ(describeInstances(reports, causes[0].instances), "2, 3 devices");
}

TEST(RootCauses, InstancesAreDescribedCompactly) {
  std::vector<InstanceReport> reports;
  for (int64_t n : {2, 3, 4, 5, 7}) {
    InstanceReport r;
    r.devices = n;
    reports.push_back(r);
  }
  InstanceReport other;
  other.devices = 3;
  other.variant = "--invocations 2";
  reports.push_back(other);
  EXPECT_EQ(describeInstances(reports, {0, 1, 2, 3, 4, 5}),
            "2..5, 7 devices; 3 devices with --invocations 2");
  EXPECT_EQ(describeInstances(reports, {0, 1}), "2, 3 devices");
}

TEST(RootCauses, FingerprintsDoNotDependOnLineNumbers) {
  support::SourceManager a, b;
  a.add("k.dk", "kernel k() {\n  c.start()\n}\n");
  b.add("k.dk", "// moved\n\nkernel k() {\n  c.start()\n}\n");
  RootCause ca, cb;
  ca.rule = cb.rule = RootCause::Rule::UnwaitedDma;
  ca.kind = cb.kind = FindingKind::ExitViolation;
  ca.keyLocs = {SourceLoc{2, 3}};
  cb.keyLocs = {SourceLoc{4, 3}};
  EXPECT_EQ(causeFingerprint(ca, &a), causeFingerprint(cb, &b));
  cb.kind = FindingKind::Race;
  EXPECT_NE(causeFingerprint(ca, &a), causeFingerprint(cb, &b));
}

} // namespace
} // namespace dkv::report
