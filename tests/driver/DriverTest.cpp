// Tests of the driver: the engine table and the one path from any engine's witnesses
// to a report (with an engine made for the test), and `dkv run`.
#include "driver/Commands.h"
#include "driver/Engines.h"
#include "report/Render.h"
#include "tests/executor/ExecutorFixtures.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace dkv::driver {
namespace {

using report::ScheduleStep;
using K = ScheduleStep::Kind;

/// An engine that searches nothing: it claims race.0 with a schedule fixed in advance
/// (device 1 zeroes its landing buffer while device 0's DMA writes it, in
/// examples/zero_dst_race.dk at N = 2). Everything else in its report comes from the
/// shared path.
Engine fixedScheduleEngine(const std::string &name, const std::string &property) {
  return {name, "replays a fixed schedule (test)",
          [property](const semantics::Machine &machine, const CheckOptions &,
                     const semantics::EngineEvents &events) {
            semantics::EngineResult r;
            semantics::addWitness(r,
                                  {*machine.properties().find(property),
                                   {{K::Device, 0},
                                    {K::Device, 1},
                                    {K::Device, 0},
                                    {K::Device, 1},
                                    {K::Device, 0},
                                    {K::Device, 0},
                                    {K::Device, 1}}},
                                  &events);
            r.stats.push_back({"schedules", "1"});
            return r;
          }};
}

void registerOnce(const Engine &engine) {
  if (!findEngine(engine.name))
    registerEngine(engine);
}

TEST(Engines, TableListsTheBuiltInEnginesFirst) {
  ASSERT_GE(engines().size(), 2u);
  EXPECT_EQ(engines()[0].name, "explore");
  EXPECT_EQ(engines()[1].name, "spin");
  EXPECT_EQ(findEngine("no-such-engine"), nullptr);
  std::ostringstream out;
  EXPECT_EQ(enginesCommand(out), 0);
  EXPECT_EQ(out.str().rfind("explore ", 0), 0u) << out.str();
}

TEST(Engines, ANewEngineGetsFullReportsFromTheSharedPath) {
  registerOnce(fixedScheduleEngine("fixed-schedule", "race.0"));
  std::optional<model::Program> program = executor::testing::lowerExample("zero_dst_race.dk", 2);
  ASSERT_TRUE(program);
  semantics::Instance instance(std::move(*program));
  CheckOptions options;
  report::Verdict fixed = runEngine(*findEngine("fixed-schedule"), instance.machine(), options);
  report::Verdict explored = runEngine(*findEngine("explore"), instance.machine(), options);
  ASSERT_EQ(fixed.status, report::Verdict::Status::Findings);
  ASSERT_EQ(fixed.findings.size(), 1u);
  ASSERT_EQ(explored.findings.size(), 1u);
  const report::Finding &f = fixed.findings[0], &e = explored.findings[0];
  // The same words as the exhaustive search, with a trace, confirmed in the executor
  // and with the wrong value the race produces.
  EXPECT_EQ(f.property, e.property);
  EXPECT_EQ(f.message, e.message);
  EXPECT_EQ(f.primary.loc, e.primary.loc);
  EXPECT_EQ(f.detail, "store to landing[:] on device 1 races with dma 0 (device 0 -> 1) writing "
                      "landing[:]");
  EXPECT_EQ(f.engine, "fixed-schedule");
  EXPECT_EQ(f.trace.steps.size(), 7u);
  EXPECT_TRUE(f.replayTried);
  EXPECT_TRUE(f.confirmed);
  EXPECT_FALSE(f.wrongValue.empty());
  EXPECT_EQ(fixed.stats, (std::vector<std::pair<std::string, std::string>>{{"schedules", "1"}}));
}

TEST(Engines, AWitnessThatDoesNotReplayIsAnInternalError) {
  // The same schedule claimed for a property it does not show.
  registerOnce(fixedScheduleEngine("lying", "exit.0"));
  InstanceOptions instance;
  instance.file = std::string(DKV_SOURCE_DIR) + "/examples/zero_dst_race.dk";
  instance.devices = 2;
  CheckOptions check;
  check.engine = "lying";
  std::ostringstream out, err;
  EXPECT_EQ(checkCommand(instance, check, out, err), 6) << out.str() << err.str();
  EXPECT_EQ(out.str().rfind("internal error: the witness of exit.0 from engine lying", 0), 0u)
      << out.str();
}

TEST(Engines, CheckCommandRunsARegisteredEngine) {
  registerOnce(fixedScheduleEngine("fixed-schedule", "race.0"));
  InstanceOptions instance;
  instance.file = std::string(DKV_SOURCE_DIR) + "/examples/zero_dst_race.dk";
  instance.devices = 2;
  CheckOptions check;
  check.engine = "fixed-schedule";
  std::ostringstream out, err;
  EXPECT_EQ(checkCommand(instance, check, out, err), 10) << err.str();
  EXPECT_NE(out.str().find(": race: store to landing[:] races with a dma writing landing[:] "
                           "(started at line 17) [race.0]"),
            std::string::npos)
      << out.str();
  EXPECT_NE(out.str().find("trace (7 steps, engine fixed-schedule, replayed in the executor)"),
            std::string::npos)
      << out.str();
}

/// The statistic `key` of `v`, or "(none)".
std::string statistic(const report::Verdict &v, const std::string &key) {
  for (const auto &[k, value] : v.stats)
    if (k == key)
      return value;
  return "(none)";
}

std::vector<std::string> violated(const report::Verdict &v) {
  std::vector<std::string> ids;
  for (const report::Finding &f : v.findings)
    ids.push_back(f.property);
  return ids;
}

TEST(Engines, AutoIsTheDefaultAndExploreDecidesWithinItsBudget) {
  EXPECT_EQ(CheckOptions{}.engine, "auto");
  ASSERT_NE(findEngine("auto"), nullptr);
  std::optional<model::Program> program = executor::testing::lowerExample("zero_dst_race.dk", 2);
  ASSERT_TRUE(program);
  semantics::Instance instance(std::move(*program));
  CheckOptions options;
  report::Verdict v = runEngine(*findEngine("auto"), instance.machine(), options);
  ASSERT_EQ(v.status, report::Verdict::Status::Findings);
  ASSERT_FALSE(v.stats.empty());
  EXPECT_EQ(v.stats[0], (std::pair<std::string, std::string>{"decided by", "explore"}));
  EXPECT_EQ(statistic(v, "states"), "46");
  for (const report::Finding &f : v.findings)
    EXPECT_EQ(f.engine, "explore");
  EXPECT_EQ(violated(v), violated(runEngine(*findEngine("explore"), instance.machine(), options)));
}

TEST(Engines, AutoHandsOverToClosureAtTheBudgetAndSaysWhy) {
  for (const char *example :
       {"zero_dst_race.dk", "right_permute.dk", "all_reduce_no_capacity.dk"}) {
    std::optional<model::Program> program = executor::testing::lowerExample(example, 3);
    ASSERT_TRUE(program);
    semantics::Instance instance(std::move(*program));
    CheckOptions options;
    options.autoStates = 5;
    report::Verdict v = runEngine(*findEngine("auto"), instance.machine(), options);
    ASSERT_GE(v.stats.size(), 2u) << example;
    EXPECT_EQ(v.stats[0].first, "explore reached") << example;
    EXPECT_EQ(v.stats[1], (std::pair<std::string, std::string>{"decided by", "closure"}))
        << example;
    EXPECT_FALSE(statistic(v, "closures").empty()) << example;
    EXPECT_TRUE(v.reason.empty()) << v.reason;
    for (const report::Finding &f : v.findings)
      EXPECT_EQ(f.engine, "closure");
    report::Verdict explored = runEngine(*findEngine("explore"), instance.machine(), options);
    EXPECT_EQ(v.status, explored.status) << example;
    EXPECT_EQ(violated(v), violated(explored)) << example;
  }
}

size_t traceSteps(const report::Verdict &v) {
  size_t n = 0;
  for (const report::Finding &f : v.findings)
    n += f.trace.steps.size();
  return n;
}

TEST(ShortWitnesses, SpinAndZ3ShowExploresBreadthFirstWitness) {
  // all_reduce_no_capacity: z3's and spin's own witnesses shorten to 1-minimal
  // schedules well above explore's (z3 at N = 3: 509 steps for 8 findings against
  // 383); explore's breadth-first witness of each property stands in for them, so
  // every engine's trace is explore's or shorter, and `shortened from` keeps the
  // engine's length.
  for (const auto &[engine, n] : {std::pair<const char *, int64_t>{"z3", 3}, {"spin", 2}}) {
    SCOPED_TRACE(engine);
    if (std::string(engine) == "spin" && std::system("command -v spin >/dev/null 2>&1") != 0)
      continue;
    std::optional<model::Program> program =
        executor::testing::lowerExample("all_reduce_no_capacity.dk", n);
    ASSERT_TRUE(program);
    semantics::Instance instance(std::move(*program));
    CheckOptions options;
    report::Verdict explored = runEngine(*findEngine("explore"), instance.machine(), options);
    report::Verdict v = runEngine(*findEngine(engine), instance.machine(), options);
    ASSERT_EQ(v.findings.size(), explored.findings.size());
    for (size_t i = 0; i < v.findings.size(); ++i) {
      const report::Finding &f = v.findings[i], &e = explored.findings[i];
      EXPECT_EQ(f.property, e.property);
      EXPECT_EQ(f.engine, engine);
      if (f.schedule.empty())
        continue; // the static pre-check's
      // explore's (shortened) or, where the engine's own shortened to fewer steps
      // (explore's reduced graph may lack the shortest run), that one.
      EXPECT_TRUE(f.schedule == e.schedule || f.schedule.size() < e.schedule.size()) << f.property;
      EXPECT_GE(static_cast<size_t>(f.witnessSteps), f.trace.steps.size()) << f.property;
    }
    // Without the breadth-first search (shortestStates 0), z3's own are longer.
    if (std::string(engine) == "z3") {
      options.shortestStates = 0;
      report::Verdict own = runEngine(*findEngine(engine), instance.machine(), options);
      EXPECT_GT(traceSteps(own), traceSteps(explored));
      EXPECT_LE(traceSteps(v), traceSteps(explored));
    }
  }
}

TEST(ShortWitnesses, AutoKeepsExploresWitnessesWhenClosureDecides) {
  // all_reduce_no_capacity at N = 3 with a budget of 20,000 states: explore finds 7 of
  // the 8 races before it, the closure engine decides; the 7 keep explore's witnesses
  // (the findings streamed while explore ran), the eighth is the closure engine's.
  std::optional<model::Program> program =
      executor::testing::lowerExample("all_reduce_no_capacity.dk", 3);
  ASSERT_TRUE(program);
  semantics::Instance instance(std::move(*program));
  CheckOptions options;
  report::Verdict explored = runEngine(*findEngine("explore"), instance.machine(), options);
  options.autoStates = 20'000;
  std::vector<std::string> streamed;
  RunEvents events;
  events.finding = [&](const report::Finding &f) {
    streamed.push_back(f.property + " " + f.engine);
    return true;
  };
  report::Verdict v = runEngine(*findEngine("auto"), instance.machine(), options, &events);
  EXPECT_EQ(statistic(v, "decided by"), "closure");
  ASSERT_EQ(v.findings.size(), explored.findings.size());
  size_t byExplore = 0;
  for (size_t i = 0; i < v.findings.size(); ++i) {
    const report::Finding &f = v.findings[i];
    EXPECT_NE(std::find(streamed.begin(), streamed.end(), f.property + " " + f.engine),
              streamed.end())
        << f.property;
    if (f.engine != "explore")
      continue;
    ++byExplore;
    EXPECT_EQ(f.schedule, explored.findings[i].schedule) << f.property;
  }
  EXPECT_GE(byExplore, 1u);
  EXPECT_LT(byExplore, v.findings.size());
}

TEST(Engines, AutoInconclusiveInBothEnginesGivesBothReasons) {
  // No time left for the closure engine after explore's budget of 5 states: never
  // "verified", and both engines' reasons.
  std::optional<model::Program> program =
      executor::testing::lowerExample("all_reduce_no_capacity.dk", 2);
  ASSERT_TRUE(program);
  semantics::Instance instance(std::move(*program));
  CheckOptions options;
  options.autoStates = 5;
  options.timeoutSeconds = 0; // the closure engine has no time left
  report::Verdict v = runEngine(*findEngine("auto"), instance.machine(), options);
  EXPECT_EQ(v.status, report::Verdict::Status::Inconclusive);
  EXPECT_EQ(v.reason.rfind("explore: explored ", 0), 0u) << v.reason;
  EXPECT_NE(v.reason.find("; closure: time limit of 0 s reached"), std::string::npos) << v.reason;
  EXPECT_EQ(statistic(v, "closure"), "inconclusive");
}

TEST(RunCommand, PrintsSeedAndOutputs) {
  semantics::Instance p(executor::testing::permute());
  support::SourceManager source;
  source.add("fixture.dk", "");
  RunOptions config;
  config.seed = 4;
  std::ostringstream out, err;
  EXPECT_EQ(runSchedule(p.machine(), source, config, out, err), 0) << err.str();
  EXPECT_NE(out.str().find("seed 4"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("device 1 output = ["), std::string::npos) << out.str();
}

TEST(RunCommand, WritesAndReplaysSchedules) {
  std::optional<model::Program> program = executor::testing::lowerExample("zero_dst_race.dk", 2);
  ASSERT_TRUE(program);
  semantics::Instance instance(std::move(*program));
  const semantics::Machine &p = instance.machine();
  support::SourceManager source;
  source.add("zero_dst_race.dk", "");
  std::string path = std::string(DKV_BINARY_DIR) + "/executor_test_schedule.txt";
  RunOptions config;
  config.seed = 2;
  config.writeSchedule = path;
  std::ostringstream out1, err1;
  EXPECT_EQ(runSchedule(p, source, config, out1, err1), 10) << err1.str();
  EXPECT_NE(out1.str().find("wrong value: "), std::string::npos) << out1.str();
  RunOptions replayConfig;
  replayConfig.scheduleFile = path;
  std::ostringstream out2, err2;
  EXPECT_EQ(runSchedule(p, source, replayConfig, out2, err2), 10) << err2.str();
  // The same findings after the header line.
  auto body = [](const std::string &s) { return s.substr(s.find('\n')); };
  EXPECT_EQ(body(out1.str()), body(out2.str()));

  std::ofstream(path) << "device 0\nland 7\n";
  std::ostringstream out3, err3;
  EXPECT_EQ(runSchedule(p, source, replayConfig, out3, err3), 2);
  EXPECT_EQ(err3.str().rfind(path + ":2: error: ", 0), 0u) << err3.str();
  std::ofstream(path) << "device 0\nhop\n";
  std::ostringstream out4, err4;
  EXPECT_EQ(runSchedule(p, source, replayConfig, out4, err4), 2);
  EXPECT_EQ(err4.str().rfind(path + ":2: error: unknown step 'hop'", 0), 0u) << err4.str();

  // A directory is not a schedule, and an endless file stops at the size limit.
  RunOptions dirConfig;
  dirConfig.scheduleFile = DKV_BINARY_DIR;
  std::ostringstream out5, err5;
  EXPECT_EQ(runSchedule(p, source, dirConfig, out5, err5), 2);
  EXPECT_NE(err5.str().find("directory"), std::string::npos) << err5.str();
  RunOptions zeroConfig;
  zeroConfig.scheduleFile = "/dev/zero";
  std::ostringstream out6, err6;
  EXPECT_EQ(runSchedule(p, source, zeroConfig, out6, err6), 2);
  EXPECT_NE(err6.str().find("larger than"), std::string::npos) << err6.str();
}

TEST(CheckMany, WorstExitCodeOrder) {
  // 6 internal > 1 usage > 2 input error > 10 findings > 5 inconclusive > 0 ok.
  const int order[] = {0, 5, 10, 2, 1, 6};
  for (size_t i = 0; i < std::size(order); ++i)
    for (size_t j = 0; j < std::size(order); ++j) {
      EXPECT_EQ(worstExitCode(order[i], order[j]), order[std::max(i, j)]) << i << " " << j;
    }
}

TEST(CheckMany, AnnotationOptionsAndMissingDevices) {
  std::string dir = std::string(DKV_BINARY_DIR) + "/check_many_test";
  std::filesystem::create_directories(dir + "/sub");
  const char *kernel = "param N = 2\nmesh x = N\nkernel k() {}\n";
  std::ofstream(dir + "/a.dk") << "// devices: 2, 3\n// options: --invocations 2\n" << kernel;
  std::ofstream(dir + "/sub/b.dk") << "// devices: 2\n// options: --engine spin\n" << kernel;
  std::ofstream(dir + "/sub/c.dk") << kernel;
  std::ofstream(dir + "/sub/notes.txt") << "not a kernel\n";
  InstanceOptions base;
  CheckOptions check;
  check.devicesFromAnnotations = true;
  check.jobs = 2;
  std::ostringstream out, err;
  EXPECT_EQ(checkPathsCommand({dir}, base, check, out, err), 2) << out.str();
  std::string text = out.str();
  // One block for a.dk's two instances, a verdict line for each.
  EXPECT_NE(text.find("== " + dir + "/a.dk: 2 instances, 2, 3 devices with --invocations 2 ==\n" +
                      "--devices 2 --invocations 2: verified"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\n--devices 3 --invocations 2: verified"), std::string::npos);
  EXPECT_NE(text.find("unknown option '--engine'"), std::string::npos) << text;
  EXPECT_NE(text.find("[no-devices-annotation]"), std::string::npos) << text;
  EXPECT_EQ(text.find("notes.txt"), std::string::npos) << text;
  EXPECT_NE(text.find("summary: 3 kernels, 4 instances: 2 verified, 0 with findings, 0 "
                      "inconclusive, 2 static errors, 0 internal errors\n"),
            std::string::npos)
      << text;
}

// Streaming (issue 12): every engine passes each witness on as it finds it; the shared
// path builds its finding at once, once per property, and the verdict afterwards is
// the same as without streaming.
TEST(Streaming, EveryEngineStreamsEachPropertyOnceAndTheVerdictAgrees) {
  // right_permute_no_wait: exit and lifetime findings with pre-check notes;
  // all_reduce_no_capacity: six races (each with its own wrong value) and deadlocks.
  for (const char *example : {"right_permute_no_wait.dk", "all_reduce_no_capacity.dk"})
    for (const char *name : {"explore", "z3", "spin", "auto"}) {
      SCOPED_TRACE(std::string(example) + " " + name);
      std::optional<model::Program> program = executor::testing::lowerExample(example, 2);
      ASSERT_TRUE(program);
      semantics::Instance instance(std::move(*program));
      if (std::string(name) == "spin" && std::system("command -v spin >/dev/null 2>&1") != 0)
        continue;
      CheckOptions options;
      options.engine = name;
      std::vector<report::Finding> streamed;
      RunEvents events;
      events.finding = [&](const report::Finding &f) {
        streamed.push_back(f);
        return true;
      };
      report::Verdict quiet = runEngine(*findEngine(name), instance.machine(), options);
      report::Verdict v = runEngine(*findEngine(name), instance.machine(), options, &events);
      ASSERT_EQ(v.status, report::Verdict::Status::Findings);
      ASSERT_GE(v.findings.size(), 2u);
      // The verdict does not depend on streaming.
      ASSERT_EQ(v.findings.size(), quiet.findings.size());
      for (size_t i = 0; i < v.findings.size(); ++i)
        EXPECT_EQ(report::renderFindingBlock(v.findings[i], nullptr, false),
                  report::renderFindingBlock(quiet.findings[i], nullptr, false));
      // Each of the verdict's findings was streamed once, with the verdict's text: the
      // verdict reuses the finding made for the stream (its wrong value and pre-check
      // notes included).
      ASSERT_EQ(streamed.size(), v.findings.size());
      for (const report::Finding &f : v.findings) {
        auto same = std::count_if(streamed.begin(), streamed.end(), [&](const report::Finding &g) {
          return g.property == f.property;
        });
        EXPECT_EQ(same, 1) << f.property;
        for (const report::Finding &g : streamed) {
          if (g.property == f.property) {
            EXPECT_EQ(report::renderFindingBlock(g, nullptr, false),
                      report::renderFindingBlock(f, nullptr, false));
          }
        }
      }
    }
}

TEST(Streaming, StopAtTheFirstFindingStopsEveryEngine) {
  std::optional<model::Program> program =
      executor::testing::lowerExample("right_permute_no_wait.dk", 2);
  ASSERT_TRUE(program);
  semantics::Instance instance(std::move(*program));
  for (const char *name : {"explore", "z3", "spin", "auto"}) {
    SCOPED_TRACE(name);
    if (std::string(name) == "spin" && std::system("command -v spin >/dev/null 2>&1") != 0)
      continue;
    CheckOptions options;
    options.engine = name;
    options.stopAtFirst = true;
    int calls = 0;
    RunEvents events;
    events.finding = [&](const report::Finding &) {
      ++calls;
      return false;
    };
    report::Verdict v = runEngine(*findEngine(name), instance.machine(), options, &events);
    EXPECT_EQ(calls, 1);
    EXPECT_EQ(v.status, report::Verdict::Status::Findings);
    // The static pre-check's findings at other places may join; the engine's stop after
    // its first.
    size_t withTrace = std::count_if(v.findings.begin(), v.findings.end(),
                                     [](const report::Finding &f) { return !f.schedule.empty(); });
    EXPECT_EQ(withTrace, 1u);
    EXPECT_EQ(v.reason, semantics::kStoppedReason);
  }
}

// The report of a kernel file is printed when its instances are checked (its root
// causes are grouped over them, docs/explain.md "Root causes"): an engine that reports a
// witness and then looks at what `dkv check` has printed so far sees nothing yet; the
// report then has the finding once, before the verdict line.
TEST(Streaming, TheTextReportWaitsForTheRootCauses) {
  static std::ostringstream *watched = nullptr;
  static std::string seenDuringSearch;
  Engine engine = fixedScheduleEngine("fixed-then-look", "race.0");
  auto inner = engine.run;
  engine.run = [inner](const semantics::Machine &machine, const CheckOptions &o,
                       const semantics::EngineEvents &events) {
    semantics::EngineResult r = inner(machine, o, events);
    seenDuringSearch = watched->str();
    return r;
  };
  registerOnce(engine);
  InstanceOptions instance;
  instance.file = std::string(DKV_SOURCE_DIR) + "/examples/zero_dst_race.dk";
  instance.devices = 2;
  CheckOptions check;
  check.engine = "fixed-then-look";
  check.progress = "never";
  check.fix = false;
  std::ostringstream out, err;
  watched = &out;
  EXPECT_EQ(checkCommand(instance, check, out, err), 10) << err.str();
  EXPECT_EQ(seenDuringSearch, "");
  const std::string text = out.str();
  const size_t finding = text.find(": race: store to landing[:] races with a dma writing "
                                   "landing[:] (started at line 17) [race.0]\n");
  EXPECT_NE(finding, std::string::npos) << text;
  EXPECT_GT(text.find("\n1 finding, 1 root cause (engine fixed-then-look"), finding) << text;
  EXPECT_EQ(text.find("[race.0]"), text.rfind("[race.0]")) << text;
}

} // namespace
} // namespace dkv::driver
