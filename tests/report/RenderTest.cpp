// Tests of the plain-text rendering of verdicts and traces.
#include "report/Render.h"
#include "report/Json.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <sstream>

namespace dkv::report {
namespace {

Verdict verified() {
  Verdict v;
  v.stats = {{"states", "33"}, {"time", "0.01 s"}, {"pan time", "0.2 s"}};
  return v;
}

TEST(RenderVerdict, VerifiedNamesTheInstanceAndHidesTimesByDefault) {
  std::ostringstream out;
  renderVerdict(out, verified(), nullptr, {"explore", "kernel k on mesh x=2", false});
  EXPECT_EQ(out.str(), "verified: kernel k on mesh x=2: no data race, deadlock, exit or "
                       "lifetime violation (engine explore: states 33)\n");
}

TEST(RenderVerdict, TimingShowsEveryStatistic) {
  std::ostringstream out;
  renderVerdict(out, verified(), nullptr, {"spin", "", true});
  EXPECT_EQ(out.str(), "verified: no data race, deadlock, exit or lifetime violation (engine "
                       "spin: states 33, time 0.01 s, pan time 0.2 s)\n");
}

TEST(RenderVerdict, FindingsOfAnIncompleteSearchSayWhy) {
  Verdict v;
  v.status = Verdict::Status::Findings;
  v.reason = "explored 10 states (budget 10)";
  Finding f;
  f.message = "something";
  f.primary = {{3, 1}, ""};
  v.findings.push_back(f);
  std::ostringstream out;
  renderVerdict(out, v, nullptr, {"explore", "", false});
  EXPECT_NE(out.str().find("1 finding, 1 root cause (engine explore)\nincomplete search: "
                           "explored 10 states "
                           "(budget 10)\n"),
            std::string::npos)
      << out.str();
}

TEST(RenderVerdict, EveryRootCauseComesBeforeTheVerdictLine) {
  Verdict v;
  v.status = Verdict::Status::Findings;
  for (const char *message : {"first", "second"}) {
    Finding f;
    f.message = message;
    f.primary = {{3, 1}, ""};
    v.findings.push_back(f);
  }
  std::ostringstream out;
  renderVerdict(out, v, nullptr, {"explore", "", false});
  // Two findings without facts are two root causes, each shown as its finding.
  EXPECT_EQ(out.str(), renderFindingBlock(v.findings[0], nullptr, false) + "\n" +
                           renderFindingBlock(v.findings[1], nullptr, false) +
                           "\n2 findings, 2 root causes (engine explore)\n");
}

TEST(RenderSummary, AStoppedRunSaysHowManyInstancesWereNotChecked) {
  RunSummary s;
  s.kernels = 2;
  s.instances = 2;
  s.verified = 1;
  s.withFindings = 1;
  s.findingsByKind[FindingKind::Race] = 2;
  s.findingsByKind[FindingKind::Deadlock] = 1;
  s.rootCausesByKind[FindingKind::Race] = 1;
  s.rootCausesByKind[FindingKind::Deadlock] = 1;
  s.stoppedEarly = true;
  s.notChecked = 3;
  s.failing = {"k.dk --devices 2: 2 root causes (1 race, 1 deadlock)"};
  std::ostringstream out;
  renderSummary(out, s, false);
  EXPECT_EQ(out.str(), "summary: 2 kernels, 2 instances: 1 verified, 1 with findings (2 root "
                       "causes: 1 race, 1 deadlock; 3 findings), 0 inconclusive, 0 static "
                       "errors, 0 internal errors; stopped at the first finding "
                       "(--stop-at-first): 3 instances not checked\n"
                       "failing instances (1):\n"
                       "  k.dk --devices 2: 2 root causes (1 race, 1 deadlock)\n");
}

TEST(RenderTrace, ContextOnlyWhereItChangesAndDmaTextNotRepeated) {
  Trace t;
  t.deviceCount = 2;
  TraceStep a;
  a.actor = {Actor::Kind::Device, 0, 0};
  a.text = "enter invocation 0";
  a.context = "inv 0";
  TraceStep b = a;
  b.text = "start dma 0";
  TraceStep c;
  c.actor = {Actor::Kind::Dma, 0, 1};
  c.text = "dma 0 lands";
  c.context = "inv 0, grid (1)";
  c.semValues = {{"recv@1", 32}};
  t.steps = {a, b, c};
  std::ostringstream out;
  renderTrace(out, t);
  std::string text = out.str();
  EXPECT_NE(text.find("[inv 0]"), std::string::npos) << text;
  EXPECT_EQ(text.find("[inv 0]"), text.rfind("[inv 0]")) << text; // once, not per step
  EXPECT_EQ(text.find("dma 0: dma 0"), std::string::npos) << text;
  EXPECT_NE(text.find("[recv@1 = 32]"), std::string::npos) << text;
  EXPECT_EQ(text.find("grid (1)"), std::string::npos) << text; // a DMA's context is its start's
}

// The table fits the width and wraps a long cell within its column; narrower than 24
// characters per device it is one row per step; nothing is cut either way.
TEST(RenderTrace, FitsTheWidthAndCutsNothing) {
  Trace t;
  t.deviceCount = 3;
  TraceStep a;
  a.actor = {Actor::Kind::Device, 0, 0};
  a.text = "start dma 0: input[0:8, 0:128] -> device 1 output[0:8, 0:128] and a "
           "verylongwordwithoutanyspaceinsideitthatiswiderthanacolumn";
  a.loc = {17, 3, 0};
  TraceStep b;
  b.actor = {Actor::Kind::Device, 2, 2};
  b.text = "store landing[:] = 0.0";
  b.loc = {15, 3, 0};
  t.steps = {a, b};
  t.marks = {{1, "racing access"}};
  auto squash = [](const std::string &text) {
    std::string out;
    for (char c : text)
      if (c != ' ' && c != '|' && c != '\n')
        out += c;
    return out;
  };
  for (size_t width : {100u, 60u}) {
    std::ostringstream out;
    renderTrace(out, t, nullptr, width);
    const std::string text = out.str();
    std::istringstream lines(text);
    size_t count = 0;
    for (std::string line; std::getline(lines, line); ++count)
      EXPECT_LE(line.size(), width) << line;
    EXPECT_GT(count, 3u) << text; // wrapped
    EXPECT_NE(squash(text).find(squash(a.text + " @17")), std::string::npos) << text;
    EXPECT_NE(text.find("  >2.  "), std::string::npos) << text; // the racing step
    EXPECT_NE(text.find("^ racing access"), std::string::npos) << text;
    // 100 columns leave 3 columns of 28: a table; 60 do not: one row per step.
    EXPECT_EQ(text.find("device 2: store") != std::string::npos, width == 60) << text;
    EXPECT_EQ(text.find(" | ") != std::string::npos, width == 100) << text;
  }
}

TEST(RenderTrace, StuckWaitsOfADeadlock) {
  Trace t;
  t.deviceCount = 2;
  TraceStep a;
  a.actor = {Actor::Kind::Device, 0, 0};
  a.text = "enter invocation 0";
  t.steps = {a};
  TraceStep stuck;
  stuck.actor = {Actor::Kind::Device, 1, 1};
  stuck.text = "device 1 waits for recv >= 32 but it is 0";
  stuck.loc = {18, 3, 0};
  t.blocked = {stuck};
  std::ostringstream out;
  renderTrace(out, t);
  EXPECT_NE(
      out.str().find("  >    stuck after step 1: device 1 waits for recv >= 32 but it is 0 @18"),
      std::string::npos)
      << out.str();
  // A finding with marks is about its steps: the devices blocked at its end are not
  // shown as stuck.
  t.marks = {{0, "violation"}};
  std::ostringstream marked;
  renderTrace(marked, t);
  EXPECT_EQ(marked.str().find("stuck"), std::string::npos) << marked.str();
}

// A kernel spread over two files: the finding's primary span is in the second file,
// its secondary span and one trace step in the first.
struct TwoFiles {
  support::SourceManager sources;
  support::FileId kernel = sources.add("kernel.py", "def kernel(x_ref, o_ref):\n"
                                                    "  o_ref[0] = x_ref[0]\n");
  support::FileId helpers = sources.add("helpers.py", "def send(src, dst, sem):\n"
                                                      "  pltpu.async_copy(src, dst, sem)\n");

  Finding finding() const {
    Finding f;
    f.kind = FindingKind::Race;
    f.property = "race.0";
    f.message = "dma writes o_ref while it is read";
    f.primary = {{2, 3, helpers}, ""};
    f.secondary = {{{2, 3, kernel}, "read here"}};
    f.engine = "explore";
    TraceStep start;
    start.actor = {Actor::Kind::Device, 0, 0};
    start.text = "start dma 0";
    start.loc = {2, 3, helpers};
    TraceStep read;
    read.actor = {Actor::Kind::Device, 1, 1};
    read.text = "load o_ref[0]";
    read.loc = {2, 3, kernel};
    f.trace.steps = {start, read};
    f.trace.deviceCount = 2;
    return f;
  }
};

TEST(RenderFinding, EachSpanNamesAndShowsItsOwnFile) {
  TwoFiles files;
  std::ostringstream out;
  renderFinding(out, files.finding(), &files.sources);
  std::string text = out.str();
  EXPECT_EQ(text.rfind("helpers.py:2:3: race: dma writes o_ref while it is read [race.0]\n"
                       "    pltpu.async_copy(src, dst, sem)\n"
                       "    ^\n"
                       "kernel.py:2:3: note: read here\n"
                       "    o_ref[0] = x_ref[0]\n"
                       "    ^\n",
                       0),
            0u)
      << text;
  // A step in the main file (id 0) shows its line only; one elsewhere names its file.
  EXPECT_NE(text.find("start dma 0 @helpers.py:2"), std::string::npos) << text;
  EXPECT_NE(text.find("load o_ref[0] @2"), std::string::npos) << text;
}

TEST(RenderVerdictJson, EachLocationNamesItsOwnFile) {
  TwoFiles files;
  Verdict v;
  v.status = Verdict::Status::Findings;
  v.findings = {files.finding()};
  std::ostringstream out;
  renderVerdictJson(out, v, "kernel.py", &files.sources, {"explore", "", false});
  nlohmann::json j = nlohmann::json::parse(out.str());
  EXPECT_EQ(j["file"], "kernel.py");
  EXPECT_EQ(j["findings"][0]["primary"]["file"], "helpers.py");
  EXPECT_EQ(j["findings"][0]["secondary"][0]["file"], "kernel.py");
  EXPECT_EQ(j["findings"][0]["secondary"][0]["line"], 2);

  // Without a manager every location is in the checked file, as before.
  std::ostringstream plain;
  renderVerdictJson(plain, v, "kernel.py", nullptr, {"explore", "", false});
  EXPECT_EQ(nlohmann::json::parse(plain.str())["findings"][0]["primary"]["file"], "kernel.py");
}

} // namespace
} // namespace dkv::report
