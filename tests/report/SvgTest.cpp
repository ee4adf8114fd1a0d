// Tests of the trace pictures (report/Svg.h) on findings built in code.
#include "report/Svg.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>

namespace dkv::report {
namespace {

size_t count(const std::string &text, const std::string &what) {
  size_t n = 0;
  for (size_t pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1))
    ++n;
  return n;
}

TraceStep deviceStep(int32_t d, const std::string &text, uint32_t line) {
  TraceStep s;
  s.actor = {Actor::Kind::Device, d, d};
  s.text = text;
  s.loc = {line, 3};
  return s;
}

/// Device 0 starts dma 0 to device 2, which lands; device 1 stores into the landing
/// buffer while dma 1 (0 -> 1) is still in flight; device 2 waits, blocked.
Finding raceFinding() {
  Finding f;
  f.kind = FindingKind::Race;
  f.property = "race.0";
  f.message = "store to a<b> & \"c\" races with a dma";
  f.primary = {{15, 3}, "this store"};
  f.engine = "explore";
  Trace &t = f.trace;
  t.deviceCount = 3;
  TraceStep start = deviceStep(0, "start dma 0: x -> device 2 y", 17);
  start.what = TraceStep::What::DmaStart;
  start.dma = 0;
  start.peer = 2;
  start.bytes = 4096;
  TraceStep land;
  land.actor = {Actor::Kind::Dma, 0, 2};
  land.text = "dma 0 lands in y on device 2 (recv += 1)";
  land.loc = {17, 3};
  land.what = TraceStep::What::Land;
  land.dma = 0;
  land.peer = 2;
  land.bytes = 4096;
  land.semValues["recv@2"] = 1;
  TraceStep start1 = start;
  start1.text = "start dma 1: x -> device 1 y";
  start1.dma = 1;
  start1.peer = 1;
  TraceStep store = deviceStep(1, "store y[:] = 0", 15);
  store.what = TraceStep::What::Store;
  t.steps = {start, land, start1, store};
  t.marks = {{3, "racing access"}, {2, "racing dma"}};
  TraceStep blocked = deviceStep(2, "device 2 waits for done >= 1 but it is 0", 20);
  blocked.what = TraceStep::What::Wait;
  blocked.blockedSince = 1;
  t.blocked = {blocked};
  t.inFlight = {1};
  return f;
}

TEST(TraceSvg, DrawsLanesArrowsMarksAndEscapesText) {
  std::ostringstream out;
  renderTraceSvg(out, raceFinding(), nullptr, {"kernel k on mesh x=3", "k.dk --devices 3"});
  const std::string svg = out.str();
  EXPECT_EQ(svg.rfind("<?xml", 0), 0u);
  EXPECT_EQ(count(svg, "<g class=\"lane\""), 3u);
  EXPECT_EQ(count(svg, "<g class=\"step\""), 4u);
  EXPECT_EQ(count(svg, "<g class=\"dma\" data-dma=\"0\""), 1u);
  EXPECT_EQ(count(svg, "<g class=\"dma inflight\" data-dma=\"1\""), 1u);
  EXPECT_EQ(count(svg, "class=\"halo mark\" x="), 2u);
  EXPECT_NE(svg.find("data-line=\"15\""), std::string::npos);
  EXPECT_NE(svg.find("data-line=\"17\""), std::string::npos);
  EXPECT_NE(svg.find("racing access, line 15"), std::string::npos);
  EXPECT_NE(svg.find("dma 0: 4096 B"), std::string::npos);
  EXPECT_NE(svg.find("recv@2 = 1"), std::string::npos);
  // The stuck device's box, not highlighted as the finding (it is a race).
  // A race's trace ends where the race is: the device blocked after it is not drawn.
  EXPECT_EQ(svg.find("<g class=\"blocked"), std::string::npos);
  EXPECT_EQ(svg.find("waits for done"), std::string::npos);
  // The DMA arrow runs down, across a gap, down a gutter and into the lane: straight
  // segments only.
  EXPECT_NE(svg.find(R"(<g class="dma" data-dma="0" data-step="2"><path d="M )"),
            std::string::npos);
  const size_t path = svg.find(R"(<g class="dma" data-dma="0")");
  const std::string d =
      svg.substr(svg.find("d=\"", path) + 3,
                 svg.find('"', svg.find("d=\"", path) + 3) - svg.find("d=\"", path) - 3);
  EXPECT_EQ(std::count(d.begin(), d.end(), 'V'), 2) << d;
  EXPECT_EQ(std::count(d.begin(), d.end(), 'H'), 2) << d;
  // The message is escaped, never raw.
  EXPECT_NE(svg.find("a&lt;b&gt; &amp; &quot;c&quot;"), std::string::npos);
  EXPECT_EQ(svg.find("a<b>"), std::string::npos);
  EXPECT_EQ(svg.find("http://", svg.find("xmlns") + 40), std::string::npos);
  // Deterministic.
  std::ostringstream again;
  renderTraceSvg(again, raceFinding(), nullptr, {"kernel k on mesh x=3", "k.dk --devices 3"});
  EXPECT_EQ(again.str(), svg);
}

// On a TensorCore mesh each lane is a (device, core) process, named as the reports name it.
TEST(TraceSvg, LanesOfATensorCoreMeshNameDeviceAndCore) {
  Finding f = raceFinding();
  f.trace.deviceCount = 4;
  f.trace.cores = 2;
  std::ostringstream out;
  renderTraceSvg(out, f, nullptr, {"kernel k on mesh x=2, tensorcore mesh core=2", "k.dk"});
  const std::string svg = out.str();
  // Process 3 (device 1 core 1) takes no part: its lane is folded.
  EXPECT_EQ(count(svg, "<g class=\"lane"), 4u);
  EXPECT_EQ(count(svg, "<g class=\"lane folded\" data-devices=\"3\""), 1u);
  for (const char *name :
       {">device 0 core 0<", ">device 0 core 1<", ">device 1 core 0<", ">device 1 core 1 (idle)<"})
    EXPECT_NE(svg.find(name), std::string::npos) << name;
  EXPECT_EQ(svg.find(">device 2<"), std::string::npos);
  EXPECT_EQ(processName(3, 2), "device 1 core 1");
  EXPECT_EQ(processName(3, 0), "device 3");
}

/// The number in `attr="..."` after the first occurrence of `after` in `svg`.
double attrAfter(const std::string &svg, const std::string &after, const std::string &attr) {
  size_t at = svg.find(after);
  EXPECT_NE(at, std::string::npos) << after;
  size_t pos = svg.find(attr + "=\"", at);
  EXPECT_NE(pos, std::string::npos) << attr;
  return std::stod(svg.substr(pos + attr.size() + 2));
}

TEST(TraceSvg, InFlightDmasAndEndValuesAreBelowTheEndLine) {
  std::ostringstream out;
  renderTraceSvg(out, raceFinding(), nullptr, {"kernel k on mesh x=3", "k.dk --devices 3"});
  const std::string svg = out.str();
  // dma 1 (started at step 3, the marked "racing dma") is in flight after the last step:
  // its row is below the end line, and it keeps the mark's colour.
  const double end = attrAfter(svg, "<g class=\"end\"", "y1");
  const double flight = attrAfter(svg, "<g class=\"dma inflight\" data-dma=\"1\"", "cy");
  EXPECT_GT(flight, end);
  EXPECT_NE(svg.find("\u25b2 dma 1: 4096 B in flight since step 3</text>"), std::string::npos);
  // The semaphores the trace left non-zero, named under the end line.
  EXPECT_NE(svg.find(">non-zero at the end: recv@2 = 1</text>"), std::string::npos);
  EXPECT_GT(attrAfter(svg, "class=\"endsems\"", "y"), end);
}

TEST(TraceSvg, ASignalToAnotherDeviceIsAnArrowToItsLane) {
  // Device 0 signals device 2 (an arrow from lane 0 to lane 2), then itself (none).
  Finding f = raceFinding();
  TraceStep signal = deviceStep(0, "signal go += 1 on device 2", 12);
  signal.what = TraceStep::What::Signal;
  signal.peer = 2;
  signal.semValues["go@2"] = 1;
  TraceStep self = signal;
  self.text = "signal go += 1 on device 0";
  self.peer = 0;
  f.trace.steps.insert(f.trace.steps.begin(), {signal, self});
  for (TraceMark &m : f.trace.marks)
    m.step += 2;
  std::ostringstream out;
  renderTraceSvg(out, f, nullptr, {"kernel k on mesh x=3", "k.dk --devices 3"});
  const std::string svg = out.str();
  EXPECT_EQ(count(svg, "<g class=\"signal\""), 1u);
  EXPECT_NE(svg.find("<g class=\"signal\" data-step=\"1\" data-device=\"0\" data-target=\"2\">"),
            std::string::npos)
      << svg;
  EXPECT_NE(svg.find("marker-end=\"url(#sigarrow)\""), std::string::npos);
  EXPECT_NE(svg.find("signal: sem += on another device"), std::string::npos); // the legend
}

TEST(TraceSvg, DeadlockHighlightsTheStuckWaits) {
  Finding f = raceFinding();
  f.kind = FindingKind::Deadlock;
  f.trace.marks.clear();
  std::ostringstream out;
  renderTraceSvg(out, f, nullptr, {});
  EXPECT_NE(out.str().find("<g class=\"blocked mark\" data-device=\"2\" data-step=\"4\" "
                           "data-line=\"20\""),
            std::string::npos);
}

// Devices that only enter share one folded lane, their equal steps one row.
TEST(TraceSvg, FoldsTheLanesOfDevicesThatTakeNoPart) {
  Finding f = raceFinding();
  f.trace.deviceCount = 8;
  std::vector<TraceStep> enters;
  for (int32_t d = 0; d < 8; ++d) {
    TraceStep e = deviceStep(d, "enter invocation 0", 14);
    e.what = TraceStep::What::Enter;
    enters.push_back(e);
  }
  f.trace.steps.insert(f.trace.steps.begin(), enters.begin(), enters.end());
  for (TraceMark &m : f.trace.marks)
    m.step += 8;
  f.trace.blocked.clear();
  std::ostringstream out;
  renderTraceSvg(out, f, nullptr, {});
  const std::string svg = out.str();
  EXPECT_EQ(count(svg, "<g class=\"lane\""), 3u) << svg;
  EXPECT_EQ(count(svg, "<g class=\"lane folded\" data-devices=\"3-7\""), 1u) << svg;
  EXPECT_NE(svg.find(">devices 3-7<"), std::string::npos);
  EXPECT_NE(svg.find(R"(<g class="step" data-step="4" data-last="8" data-device="3">)"),
            std::string::npos);
  EXPECT_NE(svg.find(">all 5: enter invocation 0 @14<"), std::string::npos);
  EXPECT_NE(svg.find("devices with no part in it, folded"), std::string::npos); // the legend
}

// A long text wraps within its lane's column, whole.
TEST(TraceSvg, WrapsALongTextWithinItsLane) {
  Finding f = raceFinding();
  const std::string text = "store y[0:8, 0:128, 0:4] = (x[0:8, 0:128, 0:4] * 2.0) + "
                           "(z[0:8, 0:128, 0:4] - w[0:8, 0:128, 0:4]) + q[0:8, 0:128, 0:4]";
  f.trace.steps[3].text = text;
  std::ostringstream out;
  renderTraceSvg(out, f, nullptr, {});
  const std::string svg = out.str();
  const size_t row = svg.find(R"(<g class="step" data-step="4")");
  const std::string group = svg.substr(row, svg.find("</g>", row) - row);
  EXPECT_GE(count(group, "<text class=\"halo\""), 2u) << group;
  EXPECT_NE(group.find("<title>" + xmlEscape(text) + " @15</title>"), std::string::npos) << group;
  // Three lanes of 340: at most (340 - 38) / 7.3 = 41 characters a line.
  for (size_t at = group.find("<text class=\"halo\""); at != std::string::npos;
       at = group.find("<text class=\"halo\"", at + 1)) {
    const size_t open = group.find('>', at) + 1;
    const size_t close = group.find_first_of("<", open);
    EXPECT_LE(close - open, 41u) << group.substr(open, close - open);
  }
}

TEST(TraceSvg, StaticFindingWithoutTraceSaysSo) {
  Finding f;
  f.kind = FindingKind::ExitViolation;
  f.message = "semaphore s is non-zero";
  f.primary = {{4, 1}, ""};
  f.engine = "precheck";
  f.trace.deviceCount = 2;
  std::ostringstream out;
  renderTraceSvg(out, f, nullptr, {});
  EXPECT_EQ(count(out.str(), "<g class=\"lane\""), 2u);
  EXPECT_NE(out.str().find("no trace"), std::string::npos);
}

TEST(TraceHtml, IsOnePageWithTheSvgTheSourceAndTheStepsAndNoExternalResource) {
  Finding f = raceFinding();
  f.trace.steps[0].text = "start </script> dma";
  support::SourceManager sources;
  std::string kernel;
  for (int line = 1; line <= 20; ++line)
    kernel += "line " + std::to_string(line) + (line == 15 ? " <store>" : "") + "\n";
  sources.add("k.dk", kernel);
  std::ostringstream out;
  renderTraceHtml(out, f, &sources, {"kernel k on mesh x=3", ""});
  const std::string page = out.str();
  // It opens at step 1, next to the source (the finding's line marked) and the
  // explanation.
  EXPECT_NE(page.find("show(steps.length ? 1 : 0);"), std::string::npos);
  EXPECT_NE(
      page.find(
          R"(<span class="ln hit" id="f0-L15"><span class="no">15</span> line 15 &lt;store&gt;</span>)"),
      std::string::npos)
      << page;
  EXPECT_NE(page.find(R"(<span class="ln" id="f0-L16">)"), std::string::npos);
  EXPECT_NE(page.find("<div id=\"explain\"><div class=\"head\">explain ["), std::string::npos);
  EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_EQ(count(page, "<svg "), 1u);
  EXPECT_NE(page.find("ArrowRight"), std::string::npos);
  // A step's text cannot end the script early.
  EXPECT_EQ(count(page, "</script>"), 1u);
  EXPECT_EQ(page.find("src="), std::string::npos);
  EXPECT_EQ(page.find("href="), std::string::npos);
}

// `dkv run --trace-svg`: a schedule without a finding, titled by the run.
TEST(ScheduleSvg, DrawsARunWithItsTitle) {
  Finding f = raceFinding();
  f.trace.marks.clear();
  ScheduleHeading heading;
  heading.where = {"kernel k on mesh x=3", "run k.dk --devices 3 --seed 4"};
  heading.title = "run of kernel k on mesh x=3: 4 steps, every device finished";
  heading.notes = {"random schedule (inputs from seed 4)"};
  std::ostringstream out;
  renderScheduleSvg(out, f.trace, nullptr, heading);
  const std::string svg = out.str();
  EXPECT_NE(svg.find(">run of kernel k on mesh x=3: 4 steps, every device finished<"),
            std::string::npos);
  EXPECT_NE(svg.find(">run it again: dkv run k.dk --devices 3 --seed 4<"), std::string::npos);
  EXPECT_EQ(count(svg, "<g class=\"step\""), 4u);
  EXPECT_EQ(svg.find("class=\"halo mark\""), std::string::npos);
  EXPECT_EQ(svg.find("<g class=\"blocked"), std::string::npos); // not stuck
}

TEST(XmlEscape, EscapesTheFiveCharactersAndControls) {
  EXPECT_EQ(xmlEscape("a<b>&\"'\x01"), "a&lt;b&gt;&amp;&quot;&apos; ");
}

} // namespace
} // namespace dkv::report
