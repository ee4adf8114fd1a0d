// Tests of the plain-text rendering of verdicts and traces.
#include "report/Render.h"

#include <gtest/gtest.h>

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
  EXPECT_NE(out.str().find("1 finding (engine explore)\nincomplete search: explored 10 states "
                           "(budget 10)\n"),
            std::string::npos)
      << out.str();
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

} // namespace
} // namespace dkv::report
