// Tests of joining the static pre-check's findings to an engine's verdict.
#include "report/Finding.h"

#include <gtest/gtest.h>

namespace dkv::report {
namespace {

TEST(Suppressions, AcceptFindingsOfTheirKindOnTheirLine) {
  Verdict v;
  v.status = Verdict::Status::Findings;
  auto finding = [](FindingKind kind, uint32_t line, uint32_t file) {
    Finding f;
    f.kind = kind;
    f.primary.loc.file = file;
    f.primary.loc.line = line;
    f.primary.loc.col = 3;
    return f;
  };
  v.findings = {finding(FindingKind::Race, 15, 0), finding(FindingKind::Deadlock, 15, 0),
                finding(FindingKind::Race, 20, 0), finding(FindingKind::Race, 15, 1)};
  std::vector<Suppression> s = {{FindingKind::Race, "known", 15, {}},
                                {FindingKind::ExitViolation, "stale", 15, {}},
                                {FindingKind::Race, "moved", 16, {}}};
  applySuppressions(v, s);
  EXPECT_EQ(v.findings[0].suppressed, "known");
  EXPECT_EQ(v.findings[1].suppressed, ""); // another kind
  EXPECT_EQ(v.findings[2].suppressed, ""); // another line
  EXPECT_EQ(v.findings[3].suppressed, ""); // another file
  EXPECT_EQ(activeFindings(v), 3u);
  ASSERT_EQ(v.unusedSuppressions.size(), 2u);
  EXPECT_EQ(v.unusedSuppressions[0].reason, "stale");
  EXPECT_EQ(v.unusedSuppressions[1].reason, "moved");
}

Finding finding(FindingKind kind, uint32_t line, const std::string &message) {
  Finding f;
  f.kind = kind;
  f.message = message;
  f.primary = {{line, 3}, ""};
  return f;
}

TEST(MergePrecheck, SameKindBecomesANoteOnTheEnginesFinding) {
  Verdict v;
  v.status = Verdict::Status::Findings;
  v.findings = {finding(FindingKind::Deadlock, 12, "engine deadlock"),
                finding(FindingKind::Deadlock, 18, "engine deadlock 2")};
  mergePrecheck(v, {finding(FindingKind::Deadlock, 18, "never satisfied")});
  ASSERT_EQ(v.findings.size(), 2u);
  EXPECT_TRUE(v.findings[0].secondary.empty());
  ASSERT_EQ(v.findings[1].secondary.size(), 1u); // the one at the same location
  EXPECT_EQ(v.findings[1].secondary[0].label, "static pre-check: never satisfied");
  EXPECT_EQ(v.findings[1].secondary[0].loc.line, 18u);
}

TEST(MergePrecheck, SameKindElsewhereStandsOnItsOwn) {
  // The engine's exit finding at line 20 is not at the pre-check's place (line 9): the
  // pre-check's finding is its own, after a complete search as after an incomplete one,
  // so the engine's finding keeps the text it had when it was streamed.
  for (const char *reason : {"", "stopped at the first finding (--stop-at-first)"}) {
    Verdict v;
    v.status = Verdict::Status::Findings;
    v.reason = reason;
    v.findings = {finding(FindingKind::Race, 5, "race"),
                  finding(FindingKind::ExitViolation, 20, "exit")};
    mergePrecheck(v, {finding(FindingKind::ExitViolation, 9, "sem left at 1"),
                      finding(FindingKind::ExitViolation, 20, "dma open at exit")});
    ASSERT_EQ(v.findings.size(), 3u) << reason;
    ASSERT_EQ(v.findings[1].secondary.size(), 1u) << reason;
    EXPECT_EQ(v.findings[1].secondary[0].label, "static pre-check: dma open at exit");
    EXPECT_EQ(v.findings[2].message, "sem left at 1");
    EXPECT_TRUE(v.findings[2].secondary.empty());
  }
}

TEST(MergePrecheck, ANoteAlreadyOnTheFindingIsNotAddedAgain) {
  // runEngine puts the notes on when it makes a finding (to stream it); mergePrecheck
  // then leaves them as they are.
  const std::vector<Finding> pre = {finding(FindingKind::Deadlock, 18, "never satisfied")};
  Verdict v;
  v.status = Verdict::Status::Findings;
  v.findings = {finding(FindingKind::Deadlock, 18, "engine deadlock")};
  addPrecheckNotes(v.findings[0], pre);
  const Finding streamed = v.findings[0];
  mergePrecheck(v, pre);
  ASSERT_EQ(v.findings.size(), 1u);
  ASSERT_EQ(v.findings[0].secondary.size(), 1u);
  EXPECT_EQ(v.findings[0].secondary[0].label, streamed.secondary[0].label);
}

TEST(MergePrecheck, AStreamedFindingGetsTheNotesAtItsPlace) {
  Finding f = finding(FindingKind::Deadlock, 18, "engine deadlock");
  f.secondary.push_back({{30, 3}, "the wait"});
  addPrecheckNotes(f, {finding(FindingKind::Deadlock, 30, "never satisfied"),
                       finding(FindingKind::Deadlock, 12, "elsewhere"),
                       finding(FindingKind::ExitViolation, 18, "another kind")});
  ASSERT_EQ(f.secondary.size(), 2u);
  EXPECT_EQ(f.secondary[1].label, "static pre-check: never satisfied");
  EXPECT_EQ(f.secondary[1].loc.line, 30u);
}

TEST(MergePrecheck, NewKindIsAddedAndOverridesInconclusive) {
  Verdict v;
  v.status = Verdict::Status::Inconclusive;
  v.reason = "explored 10 states (budget 10)";
  mergePrecheck(v, {finding(FindingKind::Deadlock, 7, "never satisfied")});
  EXPECT_EQ(v.status, Verdict::Status::Findings);
  ASSERT_EQ(v.findings.size(), 1u);
  EXPECT_EQ(v.findings[0].message, "never satisfied");
  EXPECT_EQ(v.reason, "explored 10 states (budget 10)"); // still said: the search was cut
}

TEST(MergePrecheck, NothingToMergeKeepsTheVerdict) {
  Verdict v;
  mergePrecheck(v, {});
  EXPECT_EQ(v.status, Verdict::Status::Verified);
  EXPECT_TRUE(v.findings.empty());
}

} // namespace
} // namespace dkv::report
