// Tests of the trace pictures (report/Svg.h) on findings built in code.
#include "report/Svg.h"

#include <gtest/gtest.h>

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
  EXPECT_NE(svg.find("<g class=\"blocked\" data-device=\"2\""), std::string::npos);
  EXPECT_NE(svg.find("waits for done &gt;= 1 but it is 0"), std::string::npos);
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
  EXPECT_EQ(count(svg, "<g class=\"lane\""), 4u);
  for (const char *name :
       {">device 0 core 0<", ">device 0 core 1<", ">device 1 core 0<", ">device 1 core 1<"})
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
  // its row is below the end line and above the blocked device's box, and it keeps the
  // mark's colour.
  const double end = attrAfter(svg, "<g class=\"end\"", "y1");
  const double flight = attrAfter(svg, "<g class=\"dma inflight\" data-dma=\"1\"", "cy");
  const double box = attrAfter(svg, "<g class=\"blocked\"", "y");
  EXPECT_GT(flight, end);
  EXPECT_LT(flight, box);
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

TEST(TraceHtml, IsOnePageWithTheSvgAndTheStepsAndNoExternalResource) {
  Finding f = raceFinding();
  f.trace.steps[0].text = "start </script> dma";
  std::ostringstream out;
  renderTraceHtml(out, f, nullptr, {"kernel k on mesh x=3", ""});
  const std::string page = out.str();
  EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_EQ(count(page, "<svg "), 1u);
  EXPECT_NE(page.find("ArrowRight"), std::string::npos);
  // A step's text cannot end the script early.
  EXPECT_EQ(count(page, "</script>"), 1u);
  EXPECT_EQ(page.find("src="), std::string::npos);
  EXPECT_EQ(page.find("href="), std::string::npos);
}

TEST(XmlEscape, EscapesTheFiveCharactersAndControls) {
  EXPECT_EQ(xmlEscape("a<b>&\"'\x01"), "a&lt;b&gt;&amp;&quot;&apos; ");
}

} // namespace
} // namespace dkv::report
