// Tests of the explain catalogue: the classifier on hand-made shapes (one test per
// rule of docs/explain.md), and docs/explain.md against the catalogue, word for word.
#include "report/Explain.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace dkv::report {
namespace {

using Check = FindingShape::Check;
using Access = FindingShape::Access;

std::string classify(FindingKind kind, FindingShape shape) {
  Finding f;
  f.kind = kind;
  f.shape = shape;
  const ExplainEntry &e = explainFinding(f);
  EXPECT_EQ(e.kind, kind) << e.id << " is an entry of another kind";
  return e.id;
}

FindingShape race(Access access, bool otherLanding) {
  FindingShape s;
  s.check = Check::Race;
  s.access = access;
  s.otherLanding = otherLanding;
  s.otherRemote = true;
  return s;
}

TEST(Explain, RaceWithALandingDma) {
  for (Access a : {Access::StoreWrite, Access::StoreRead, Access::DmaSource})
    EXPECT_EQ(classify(FindingKind::Race, race(a, true)), "landing-before-wait-recv");
  EXPECT_EQ(classify(FindingKind::Race, race(Access::DmaDestination, true)), "two-writers");
  FindingShape s = race(Access::StoreRead, true);
  s.waitedOnSharedSemaphore = true;
  EXPECT_EQ(classify(FindingKind::Race, s), "shared-semaphore");
  // A buffer delivered before and now overwritten: run-ahead outranks the shared wait.
  s.regionReused = true;
  EXPECT_EQ(classify(FindingKind::Race, s), "run-ahead");
  // Two DMAs into one destination stay two writers, delivered before or not.
  FindingShape two = race(Access::DmaDestination, true);
  two.regionReused = true;
  EXPECT_EQ(classify(FindingKind::Race, two), "two-writers");
}

TEST(Explain, RaceWithADmaReadingItsSource) {
  EXPECT_EQ(classify(FindingKind::Race, race(Access::StoreWrite, false)),
            "source-before-wait-send");
  FindingShape local = race(Access::DmaDestination, false);
  EXPECT_EQ(classify(FindingKind::Race, local), "source-before-wait-send");
  local.regionReused = true; // delivered before, but by a local DMA's start
  EXPECT_EQ(classify(FindingKind::Race, local), "source-before-wait-send");
  FindingShape remote = local;
  remote.accessRemote = true;
  EXPECT_EQ(classify(FindingKind::Race, remote), "run-ahead");
  // A DMA from another device lands in what a remote DMA of the receiver still reads:
  // the receiver forwards its landing buffer before wait_recv (TPU-Collectives'
  // all-gather, examples/real/tpu_collectives_all_gather.dk, race.5; its mirror
  // race.7 is a DMA's start reading while the DMA lands, landing-before-wait-recv too).
  remote.regionReused = false;
  EXPECT_EQ(classify(FindingKind::Race, remote), "landing-before-wait-recv");
  // A DMA from another device lands in what a local copy of the receiver still reads:
  // the receiver read its landing buffer too early (emit_pipeline fetching a buffer
  // before wait_recv, examples/pipeline_recv_race.dk).
  FindingShape early = remote;
  early.otherRemote = false;
  EXPECT_EQ(classify(FindingKind::Race, early), "landing-before-wait-recv");
  early.regionReused = true;
  EXPECT_EQ(classify(FindingKind::Race, early), "run-ahead");
  // Two reads do not race; a shape that says so has no pattern of its own.
  EXPECT_EQ(classify(FindingKind::Race, race(Access::StoreRead, false)), "unordered-accesses");
}

TEST(Explain, ExitLifetimeAndDeadlock) {
  FindingShape s;
  s.check = Check::ExitDma;
  EXPECT_EQ(classify(FindingKind::ExitViolation, s), "dma-not-waited");
  s.check = Check::ExitSemaphore;
  EXPECT_EQ(classify(FindingKind::ExitViolation, s), "semaphore-nonzero-at-exit");
  s.dmaSemaphore = true;
  EXPECT_EQ(classify(FindingKind::ExitViolation, s), "dma-not-waited");

  FindingShape out;
  out.check = Check::Outside;
  out.peerNotEntered = true;
  out.usesBarrierSemaphore = true;
  EXPECT_EQ(classify(FindingKind::LifetimeViolation, out), "peer-outside"); // one invocation
  out.invocations = 2;
  EXPECT_EQ(classify(FindingKind::LifetimeViolation, out), "one-round-barrier");
  out.peerNotEntered = false; // the peer has left
  EXPECT_EQ(classify(FindingKind::LifetimeViolation, out), "peer-outside");
  out.peerNotEntered = true;
  out.usesBarrierSemaphore = false;
  EXPECT_EQ(classify(FindingKind::LifetimeViolation, out), "peer-outside");
  FindingShape slot;
  slot.check = Check::Slot;
  EXPECT_EQ(classify(FindingKind::LifetimeViolation, slot), "scoped-slot-reused");

  FindingShape stuck;
  stuck.check = Check::Stuck;
  EXPECT_EQ(classify(FindingKind::Deadlock, stuck), "circular-wait");
  stuck.neverEnough = true;
  EXPECT_EQ(classify(FindingKind::Deadlock, stuck), "wait-never-signalled");
  stuck.neverEnough = false;
  stuck.barrier = true;
  EXPECT_EQ(classify(FindingKind::Deadlock, stuck), "circular-wait");
}

TEST(Explain, StaticPrecheckAndHandMadeFindings) {
  FindingShape s;
  s.check = Check::StaticWait;
  EXPECT_EQ(classify(FindingKind::Deadlock, s), "wait-never-signalled");
  s.check = Check::StaticExit;
  EXPECT_EQ(classify(FindingKind::ExitViolation, s), "semaphore-nonzero-at-exit");
  s.dmaSemaphore = true;
  EXPECT_EQ(classify(FindingKind::ExitViolation, s), "dma-not-waited");
  s.signal = true;
  EXPECT_EQ(classify(FindingKind::ExitViolation, s), "signal-dma-semaphore");
  // No shape: the general entry of the kind.
  EXPECT_EQ(classify(FindingKind::Race, {}), "unordered-accesses");
  EXPECT_EQ(classify(FindingKind::Deadlock, {}), "circular-wait");
  EXPECT_EQ(classify(FindingKind::ExitViolation, {}), "semaphore-nonzero-at-exit");
  EXPECT_EQ(classify(FindingKind::LifetimeViolation, {}), "peer-outside");
}

TEST(Explain, CatalogueIdsAreUniqueAndFound) {
  std::set<std::string> ids;
  for (const ExplainEntry &e : explainCatalogue()) {
    EXPECT_TRUE(ids.insert(e.id).second) << e.id;
    EXPECT_EQ(findExplainEntry(e.id), &e);
  }
  EXPECT_EQ(findExplainEntry("no-such-entry"), nullptr);
}

TEST(Explain, RenderWrapsBothParagraphs) {
  Finding f;
  f.kind = FindingKind::Deadlock;
  f.shape.check = Check::StaticWait;
  std::ostringstream out;
  renderExplanation(out, f);
  std::string text = out.str();
  EXPECT_EQ(text.rfind("  explain [wait-never-signalled]: a wait that nobody signals\n    A device "
                       "waits for more units",
                       0),
            0u)
      << text;
  EXPECT_NE(text.find("\n    Usual fix: Match every wait"), std::string::npos) << text;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("  explain [", 0) != 0) {
      EXPECT_LE(line.size(), 88u) << line;
    }
  }
}

// docs/explain.md: one section "## `ID`: TITLE" per entry, in catalogue order, with
// "Kind: KIND.", a paragraph "What happens: ..." and a paragraph "Usual fix: ..."
// (lines joined with spaces).
TEST(Explain, DocsSayTheSameAsTheCatalogue) {
  std::ifstream in(std::string(DKV_SOURCE_DIR) + "/docs/explain.md");
  ASSERT_TRUE(in) << "docs/explain.md";
  struct Section {
    std::string title, kind, what, fix;
  };
  std::vector<std::pair<std::string, Section>> sections;
  std::string line, *paragraph = nullptr;
  while (std::getline(in, line)) {
    if (line.rfind("## `", 0) == 0) {
      size_t close = line.find("`: ", 4);
      ASSERT_NE(close, std::string::npos) << line;
      sections.push_back({line.substr(4, close - 4), Section{line.substr(close + 3), "", "", ""}});
      paragraph = nullptr;
      continue;
    }
    if (line.rfind("## ", 0) == 0 || sections.empty()) {
      paragraph = nullptr;
      continue;
    }
    Section &s = sections.back().second;
    if (line.empty()) {
      paragraph = nullptr;
    } else if (line.rfind("Kind: ", 0) == 0) {
      s.kind = line.substr(6);
    } else if (line.rfind("What happens: ", 0) == 0) {
      s.what = line.substr(14);
      paragraph = &s.what;
    } else if (line.rfind("Usual fix: ", 0) == 0) {
      s.fix = line.substr(11);
      paragraph = &s.fix;
    } else if (paragraph) {
      *paragraph += " " + line;
    } else {
      ADD_FAILURE() << "unexpected line in section " << sections.back().first << ": " << line;
    }
  }
  const std::vector<ExplainEntry> &catalogue = explainCatalogue();
  ASSERT_EQ(sections.size(), catalogue.size());
  for (size_t i = 0; i < catalogue.size(); ++i) {
    const ExplainEntry &e = catalogue[i];
    const auto &[id, s] = sections[i];
    EXPECT_EQ(id, e.id);
    EXPECT_EQ(s.title, e.title) << e.id;
    EXPECT_EQ(s.kind, std::string(findingKindName(e.kind)) + ".") << e.id;
    EXPECT_EQ(s.what, e.what) << e.id;
    EXPECT_EQ(s.fix, e.fix) << e.id;
  }
}

} // namespace
} // namespace dkv::report
