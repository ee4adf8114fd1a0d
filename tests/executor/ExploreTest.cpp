// Tests of the exhaustive search: verdicts, budget, traces, replay, determinism.
#include "executor/Executor.h"
#include "model/Precheck.h"
#include "tests/executor/ExecutorFixtures.h"

#include "frontend/Annotations.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <set>

namespace dkv::executor {
namespace {

using report::FindingKind;
using Status = report::Verdict::Status;

const report::Finding *findingOf(const report::Verdict &v, FindingKind kind, uint32_t line = 0) {
  for (const report::Finding &f : v.findings)
    if (f.kind == kind && (line == 0 || f.primary.loc.line == line))
      return &f;
  return nullptr;
}

std::string stat(const report::Verdict &v, const std::string &key) {
  for (const auto &[k, value] : v.stats)
    if (k == key)
      return value;
  return "";
}

TEST(Explore, PermuteWithWaitsIsVerified) {
  report::Verdict v = explore(testing::permute(), {});
  EXPECT_EQ(v.status, Status::Verified) << (v.findings.empty() ? "" : v.findings[0].message);
  EXPECT_NE(stat(v, "states"), "");
  EXPECT_NE(stat(v, "transitions"), "");
  EXPECT_NE(stat(v, "time"), "");
}

TEST(Explore, RaceWithShortestTrace) {
  report::Verdict v = explore(testing::permute(true, true), {});
  ASSERT_EQ(v.status, Status::Findings);
  const report::Finding *f = findingOf(v, FindingKind::Race, 4);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->engine, "explore");
  EXPECT_TRUE(f->confirmed);
  // enter, enter, barrier, barrier, (store 0,) start dma k, store on k's target: the
  // store of the issuer is taken eagerly by the reduction, so 7 steps.
  EXPECT_LE(f->schedule.size(), 7u);
  EXPECT_EQ(f->trace.steps.size(), f->schedule.size());
  EXPECT_FALSE(f->wrongValue.empty());
  // The schedule replays to the same finding.
  std::vector<report::Finding> again = replay(testing::permute(true, true), f->schedule);
  bool same = false;
  for (const report::Finding &g : again)
    same = same || (g.kind == FindingKind::Race && g.primary.loc == f->primary.loc);
  EXPECT_TRUE(same);
}

TEST(Explore, Deadlock) {
  report::Verdict v = explore(testing::signalWait(1, 2), {});
  ASSERT_EQ(v.status, Status::Findings);
  const report::Finding *f = findingOf(v, FindingKind::Deadlock, 20);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->message, "wait for ready >= 1 (wait) never returns");
  EXPECT_EQ(f->property.rfind("deadlock.", 0), 0u) << f->property;
  EXPECT_NE(f->detail.find("ready >= 1 but it is 0"), std::string::npos) << f->detail;
  EXPECT_TRUE(f->confirmed);
}

TEST(Explore, ExitAndLifetimeViolations) {
  report::Verdict v = explore(testing::signalWait(2, 1), {});
  ASSERT_EQ(v.status, Status::Findings);
  EXPECT_NE(findingOf(v, FindingKind::ExitViolation, 30), nullptr);
  EXPECT_NE(findingOf(v, FindingKind::LifetimeViolation, 10), nullptr);
  report::Verdict w = explore(testing::permute(false), {});
  const report::Finding *exit = findingOf(w, FindingKind::ExitViolation, 7);
  ASSERT_NE(exit, nullptr);
  EXPECT_TRUE(exit->confirmed);
  EXPECT_NE(findingOf(w, FindingKind::LifetimeViolation), nullptr);
}

TEST(Explore, MatchedSignalsAreVerified) {
  EXPECT_EQ(explore(testing::signalWait(3, 3), {}).status, Status::Verified);
}

TEST(Explore, BudgetGivesInconclusive) {
  std::optional<model::Program> p = testing::lowerExample("all_reduce.dk", 3);
  ASSERT_TRUE(p);
  ExploreOptions o;
  o.maxStates = 100;
  report::Verdict v = explore(*p, o);
  EXPECT_EQ(v.status, Status::Inconclusive);
  EXPECT_EQ(v.reason, "explored 100 states (budget 100)");
  EXPECT_EQ(stat(v, "states"), "100");
}

TEST(Explore, Deterministic) {
  std::optional<model::Program> p = testing::lowerExample("right_permute_two_senders.dk", 3);
  ASSERT_TRUE(p);
  report::Verdict a = explore(*p, {}), b = explore(*p, {});
  ASSERT_EQ(a.findings.size(), b.findings.size());
  for (size_t i = 0; i < a.findings.size(); ++i) {
    EXPECT_EQ(a.findings[i].message, b.findings[i].message);
    EXPECT_EQ(a.findings[i].schedule, b.findings[i].schedule);
    EXPECT_EQ(a.findings[i].wrongValue, b.findings[i].wrongValue);
    ASSERT_EQ(a.findings[i].trace.steps.size(), b.findings[i].trace.steps.size());
    for (size_t j = 0; j < a.findings[i].trace.steps.size(); ++j)
      EXPECT_EQ(a.findings[i].trace.steps[j].text, b.findings[i].trace.steps[j].text);
  }
  EXPECT_EQ(a.stats.front(), b.stats.front()); // states
}

struct Expected {
  const char *file;
  int64_t devices;
  const char *verdict; ///< "ok" or a finding kind name
  uint32_t line;       ///< 0: any
  int32_t invocations = 1;
};

class ExampleVerdicts : public ::testing::TestWithParam<Expected> {};

TEST_P(ExampleVerdicts, MatchTheAnnotation) {
  const Expected &e = GetParam();
  model::Options options;
  options.invocations = e.invocations;
  std::optional<model::Program> p = testing::lowerExample(e.file, e.devices, options);
  ASSERT_TRUE(p);
  report::Verdict v = explore(*p, {});
  if (std::string(e.verdict) == "ok") {
    EXPECT_EQ(v.status, Status::Verified)
        << e.file << ": " << (v.findings.empty() ? v.reason : v.findings[0].message);
    return;
  }
  bool found = false;
  for (const report::Finding &f : v.findings)
    found = found || (std::string(report::findingKindName(f.kind)) == e.verdict &&
                      (e.line == 0 || f.primary.loc.line == e.line));
  EXPECT_TRUE(found) << e.file << " N=" << e.devices << ": no " << e.verdict << " at " << e.line;
  for (const report::Finding &f : v.findings) {
    std::vector<report::Finding> again = replay(*p, f.schedule);
    bool same = false;
    for (const report::Finding &g : again)
      same = same || report::sameFinding(g, f);
    EXPECT_TRUE(same) << e.file << ": " << f.message << " does not replay";
  }
}

INSTANTIATE_TEST_SUITE_P(
    Examples, ExampleVerdicts,
    ::testing::Values(Expected{"right_permute.dk", 3, "ok", 0},
                      Expected{"all_gather.dk", 3, "ok", 0}, Expected{"all_reduce.dk", 3, "ok", 0},
                      Expected{"reduce_scatter_bidirectional.dk", 3, "ok", 0},
                      Expected{"barrier_double.dk", 3, "ok", 0, 2},
                      Expected{"ready_handshake.dk", 3, "ok", 0, 2},
                      Expected{"all_gather_shared_sem.dk", 3, "race", 29},
                      Expected{"zero_dst_race.dk", 2, "race", 15},
                      Expected{"right_permute_two_senders.dk", 3, "race", 16},
                      Expected{"right_permute_no_sender.dk", 3, "deadlock", 18},
                      Expected{"wait_never_signalled.dk", 3, "deadlock", 18},
                      Expected{"right_permute_no_wait.dk", 2, "exit-violation", 0},
                      Expected{"reduce_scatter_no_cleanup.dk", 2, "exit-violation", 0},
                      Expected{"barrier_one_round.dk", 3, "lifetime-violation", 0, 2}));

} // namespace
} // namespace dkv::executor

namespace dkv::executor {
namespace {

// The properties a verdict reports, with their messages.
std::vector<std::string> propertiesOf(const report::Verdict &v) {
  std::vector<std::string> out;
  for (const report::Finding &f : v.findings)
    out.push_back(f.property + ": " + f.message);
  return out;
}

// Explores `p` without the reduction, with the reduction as it was before the local-copy
// rules, before the observer rules, and in full: every run that finishes within `budget`
// states has the same verdict and violated properties as the full reduction, which must
// finish; a reduced graph's states are states of the full graph.
// Returns the full reduction's verdict.
report::Verdict expectSameWithEveryReduction(const model::Program &p, const std::string &label,
                                             uint64_t budget = 2'000'000) {
  ExploreOptions full, off, old, local;
  off.reduction = false;
  old.localCopyReduction = old.observerReduction = false;
  local.observerReduction = false;
  for (ExploreOptions *o : {&full, &off, &old, &local})
    o->maxStates = budget;
  report::Verdict a = explore(p, full);
  EXPECT_TRUE(stat(a, "budget").empty()) << label << ": the full reduction reached its budget";
  uint64_t offStates = 0;
  const char *names[] = {"no reduction", "the reduction before the local-copy rules",
                         "the reduction before the observer rules"};
  int i = 0;
  for (const ExploreOptions *o : {&off, &old, &local}) {
    report::Verdict b = explore(p, *o);
    const char *name = names[i++];
    if (!stat(b, "budget").empty())
      continue; // incomplete: its findings may be partial
    EXPECT_EQ(a.status, b.status) << label << ", " << name;
    EXPECT_EQ(propertiesOf(a), propertiesOf(b)) << label << ", " << name;
    EXPECT_LE(std::stoull(stat(a, "states")), std::stoull(stat(b, "states"))) << label;
    if (o == &off) {
      offStates = std::stoull(stat(b, "states"));
    } else if (offStates != 0) {
      EXPECT_LE(std::stoull(stat(b, "states")), offStates) << label << ", " << name;
    }
  }
  return a;
}

// The reduction must not change what is found: the same verdict and the same violated
// properties with and without it (and with each of its rule sets), on every example
// (small instances) and on the kernels written to test it. The static pre-check must
// not claim a kind of finding the search does not reach.
TEST(Explore, ReductionAndPrecheckKeepEveryKindOfFinding) {
  struct Case {
    const char *file;
    int64_t devices;
    int32_t invocations;
    int32_t dmaChunks = 1;
    int64_t semUnit = 1;
    model::DmaOrder dmaOrder = model::DmaOrder::Any;
  };
  const Case cases[] = {
      {"right_permute.dk", 3, 1},
      {"all_gather.dk", 3, 1},
      {"all_gather_bidirectional.dk", 3, 1},
      {"all_gather_shared_sem.dk", 3, 1},
      {"all_reduce.dk", 3, 1},
      {"all_reduce_no_capacity.dk", 2, 1},
      {"barrier_double.dk", 3, 2},
      {"barrier_one_round.dk", 3, 2},
      {"dma_table.dk", 4, 1},
      {"dma_table_race.dk", 4, 1},
      {"ready_handshake.dk", 3, 2},
      {"reduce_scatter_bidirectional.dk", 3, 1},
      {"reduce_scatter_no_cleanup.dk", 3, 1},
      {"right_permute_no_sender.dk", 3, 1},
      {"right_permute_no_wait.dk", 3, 1},
      {"right_permute_two_senders.dk", 3, 1},
      {"wait_never_signalled.dk", 3, 1},
      {"zero_dst_race.dk", 3, 1},
      // Regression: a chunk counted as needed by a blocked wait when the other side of
      // the same semaphore could still satisfy it (the reduction lost a finding).
      {"tests/executor/reduction_regression.dk", 2, 1, 3, 8},
      {"barrier_double_scoped.dk", 3, 2},
      {"scoped_slot_reuse.dk", 3, 1},
      // Tables, zero-size DMAs (with chunks past their units) and dummy-descriptor waits.
      {"table_dummy_wait.dk", 3, 1, 2},
      {"table_wrong_total.dk", 3, 1, 2},
      {"table_ragged_overlap.dk", 2, 1},
      {"real/ragged_all_to_all.dk", 2, 1, 2},
      {"hypercube_all_gather.dk", 4, 1},
      // Local copies (the reduction's local-copy rules, docs/executor.md).
      // (N = 3 without the reduction is over the default budget: docs/performance.md.)
      {"all_gather_matmul.dk", 2, 1},
      {"all_gather_matmul.dk", 2, 1, 2},
      {"all_gather_matmul_prefetch_race.dk", 2, 1},
      {"all_gather_matmul_prefetch_race.dk", 2, 1, 2},
      {"tests/executor/local_copy_remote_race.dk", 2, 1},
      {"tests/executor/local_copy_remote_race.dk", 2, 1, 2},
      {"tests/executor/local_copy_shared_sem.dk", 2, 1},
      {"tests/executor/local_copy_shared_sem.dk", 2, 1, 2},
      {"tests/executor/local_copy_in_flight.dk", 2, 1},
      {"tests/executor/local_copy_in_flight.dk", 2, 1, 2},
      {"tests/executor/local_copy_in_flight.dk", 2, 1, 3, 8},
      // TensorCore meshes: the cores of a device share its hbm, so a local copy of one core
      // and the DMAs of another meet there (docs/model.md "TensorCores").
      {"tensorcore_swap_cores.dk", 2, 1},
      {"tensorcore_swap_cores.dk", 1, 1, 2},
      {"tensorcore_output_overlap.dk", 2, 1},
      {"tensorcore_output_overlap.dk", 1, 1, 2},
      {"tensorcore_swap_no_wait.dk", 1, 1},
      {"tensorcore_swap_no_barrier.dk", 1, 1},
      {"tensorcore_ring.dk", 2, 1},
      {"tensorcore_pipeline_overlap.dk", 1, 1},
      {"tensorcore_core_local_no_barrier.dk", 2, 1},
      {"real/core_axis_dict_multi_device.dk", 2, 1},
      // The observer rules (docs/executor.md, "Remote DMAs and signals"): remote DMAs,
      // signals and stores whose observers a third device can release, under each DMA
      // order, with chunks, and over invocations.
      {"tests/executor/observer_rules.dk", 3, 1},
      {"tests/executor/observer_rules.dk", 3, 1, 2},
      {"tests/executor/observer_rules.dk", 3, 1, 3, 8},
      {"tests/executor/observer_rules.dk", 3, 1, 1, 1, model::DmaOrder::Link},
      {"tests/executor/observer_rules.dk", 3, 2},
      {"tests/semantics/link_order.dk", 2, 1},
      {"tests/semantics/link_order.dk", 2, 1, 2, 1, model::DmaOrder::Link},
      {"real/all_gather.dk", 3, 1, 1, 1, model::DmaOrder::Link},
      {"real/tpu_inference_all_gather_matmul.dk", 2, 2},
      {"sequence_invocations_one_round.dk", 3, 2, 2},
      {"collective_matmul_early_compute.dk", 3, 1, 2},
      {"reduce_scatter_no_cleanup.dk", 3, 1, 2},
      {"right_permute_no_wait.dk", 2, 2, 2},
  };
  for (size_t i = 0; i < std::size(cases); ++i) {
    if (!testing::sampledUnderSanitizers(i))
      continue;
    const Case &c = cases[i];
    model::Options options;
    options.invocations = c.invocations;
    options.dmaChunks = c.dmaChunks;
    options.semUnit = c.semUnit;
    options.dmaOrder = c.dmaOrder;
    std::optional<model::Program> p = testing::lowerExample(c.file, c.devices, options);
    ASSERT_TRUE(p);
    report::Verdict full = expectSameWithEveryReduction(
        *p, fmt::format("{} N={} invocations {} chunks {} order {}", c.file, c.devices,
                        c.invocations, c.dmaChunks, model::dmaOrderName(c.dmaOrder)));
    // The static pre-check claims its findings without a search: each of its kinds
    // must be one the exhaustive search reaches (no false kind added to a verdict).
    std::set<report::FindingKind> searched;
    for (const report::Finding &f : full.findings)
      searched.insert(f.kind);
    for (const report::Finding &f : model::precheck(*p))
      EXPECT_TRUE(searched.count(f.kind))
          << c.file << ": the pre-check's " << report::findingKindName(f.kind)
          << " is not reachable: " << f.message;
  }
}

// Every example that lowers, at its smallest device count of 2..4 with its options,
// with and without the reduction and each of its rule sets (the runs without it that
// exceed 300,000 states are not compared).
TEST(Explore, ReductionKeepsEveryExamplesFindings) {
  const std::vector<std::string> files = testing::exampleFiles();
  int compared = 0;
  for (size_t i = 0; i < files.size(); ++i) {
    if (!testing::sampledUnderSanitizers(i))
      continue;
    const std::string &path = files[i];
    support::SourceManager sources;
    std::string error;
    std::optional<support::FileId> id = sources.load(path, error);
    ASSERT_TRUE(id) << error;
    support::DiagnosticEngine diags(&sources);
    frontend::Annotations a = frontend::readAnnotations(sources.file(*id), diags);
    if (!a.meshes.empty() ||
        (a.expect && a.expect->verdict == frontend::ExpectedVerdict::StaticError))
      continue;
    int64_t n = 0;
    for (int64_t candidate : {2, 3, 4})
      if (a.devices.empty() ||
          std::find(a.devices.begin(), a.devices.end(), candidate) != a.devices.end()) {
        n = candidate;
        break;
      }
    if (n == 0)
      continue;
    model::Options options;
    for (size_t i = 0; i < a.options.size(); ++i) {
      if (a.options[i] == "--no-entry-barrier")
        options.entryBarrier = false;
      else if (a.options[i] == "--invocations" && i + 1 < a.options.size())
        options.invocations = std::stoi(a.options[++i]);
      else
        FAIL() << path << ": option " << a.options[i] << " not handled by this test";
    }
    const std::string name = path.substr(std::string(DKV_SOURCE_DIR).size() + 1);
    std::optional<model::Program> p = testing::lowerExample(path, n, options);
    ASSERT_TRUE(p) << name;
    expectSameWithEveryReduction(*p, fmt::format("{} N={}", name, n), 300'000);
    ++compared;
  }
  EXPECT_GE(compared, testing::sampledUnderSanitizers(1) ? 50 : 50 / 3);
}

// The local-copy rules keep the findings that rest on a local copy's chunks coming
// late (each kernel's header says why), and they do reduce: the pipeline kernel's state
// space shrinks at every device count.
TEST(Explore, LocalCopyReduction) {
  struct Case {
    const char *file;
    int32_t dmaChunks;
    std::vector<std::pair<FindingKind, uint32_t>> expected; // kind, line (0: any)
  };
  const Case cases[] = {
      {"tests/executor/local_copy_remote_race.dk", 1, {{FindingKind::Race, 23}}},
      {"tests/executor/local_copy_shared_sem.dk", 1, {{FindingKind::Race, 22}}},
      {"tests/executor/local_copy_shared_sem.dk", 2, {{FindingKind::Race, 22}}},
      {"tests/executor/local_copy_in_flight.dk",
       1,
       {{FindingKind::ExitViolation, 19},
        {FindingKind::LifetimeViolation, 0},
        {FindingKind::ExitViolation, 24}}},
      {"tests/executor/local_copy_in_flight.dk",
       2,
       {{FindingKind::ExitViolation, 19},
        {FindingKind::LifetimeViolation, 0},
        {FindingKind::ExitViolation, 24}}},
  };
  for (const Case &c : cases) {
    model::Options options;
    options.dmaChunks = c.dmaChunks;
    std::optional<model::Program> p = testing::lowerExample(c.file, 2, options);
    ASSERT_TRUE(p);
    report::Verdict v = explore(*p, {});
    ASSERT_EQ(v.status, Status::Findings) << c.file;
    for (const auto &[kind, line] : c.expected)
      EXPECT_NE(findingOf(v, kind, line), nullptr)
          << c.file << ": no " << report::findingKindName(kind) << " at line " << line;
  }
  for (int64_t n : {2, 3}) {
    std::optional<model::Program> p = testing::lowerExample("all_gather_matmul.dk", n);
    ASSERT_TRUE(p);
    ExploreOptions with, before;
    with.observerReduction = false;
    before.localCopyReduction = before.observerReduction = false;
    report::Verdict now = explore(*p, with), old = explore(*p, before);
    EXPECT_EQ(now.status, Status::Verified) << "N=" << n;
    EXPECT_EQ(old.status, Status::Verified) << "N=" << n;
    EXPECT_LT(std::stoull(stat(now, "states")), std::stoull(stat(old, "states"))) << "N=" << n;
  }
}

// The observer rules keep the findings that rest on a third device releasing an
// observer (tests/executor/observer_rules.dk, its header says why), and they decide the
// ring collectives of beshrislambouli/TPU-Collectives at N = 4 (examples/real/) within
// --engine auto's budget of explore, where the reduction before them did not finish
// within 6,000,000 states (docs/performance.md).
TEST(Explore, ObserverReduction) {
  for (int32_t chunks : {1, 2}) {
    model::Options options;
    options.dmaChunks = chunks;
    std::optional<model::Program> p =
        testing::lowerExample("tests/executor/observer_rules.dk", 3, options);
    ASSERT_TRUE(p);
    report::Verdict v = explore(*p, {});
    ASSERT_EQ(v.status, Status::Findings);
    EXPECT_EQ(propertiesOf(v).size(), 5u) << "chunks " << chunks;
    for (const auto &[kind, line] :
         std::vector<std::pair<FindingKind, uint32_t>>{{FindingKind::Race, 36},
                                                       {FindingKind::Race, 82},
                                                       {FindingKind::LifetimeViolation, 41},
                                                       {FindingKind::LifetimeViolation, 78},
                                                       {FindingKind::ExitViolation, 92}})
      EXPECT_NE(findingOf(v, kind, line), nullptr)
          << "chunks " << chunks << ": no " << report::findingKindName(kind) << " at line " << line;
  }
  struct Kernel {
    const char *file;
    Status status;
    std::vector<uint32_t> raceLines;
  };
  const Kernel kernels[] = {
      {"real/tpu_collectives_all_gather.dk", Status::Findings, {92, 107, 139}},
      {"real/tpu_collectives_all_gather_matmul.dk", Status::Verified, {}},
      {"real/tpu_collectives_reduce_scatter.dk", Status::Verified, {}},
  };
  for (const Kernel &k : kernels) {
    std::optional<model::Program> p = testing::lowerExample(k.file, 4);
    ASSERT_TRUE(p);
    ExploreOptions budget;
    budget.maxStates = 200'000;
    report::Verdict v = explore(*p, budget);
    EXPECT_EQ(v.status, k.status) << k.file;
    EXPECT_TRUE(stat(v, "budget").empty()) << k.file << ": " << stat(v, "states");
    for (uint32_t line : k.raceLines)
      EXPECT_NE(findingOf(v, FindingKind::Race, line), nullptr) << k.file << ": line " << line;
  }
}

// Running out of memory is inconclusive with its reason; any other exception inside the
// search is a dkv bug and leaves explore (the driver turns it into exit 6), never a
// verdict (thrown here from the witness callback, which the search calls).
TEST(Explore, OnlyOutOfMemoryIsInconclusiveOtherExceptionsLeave) {
  model::Program program = testing::permute(true, true);
  semantics::Instance instance(program);
  semantics::EngineEvents events;
  ExploreOptions options;
  options.events = &events;
  events.witness = [](const semantics::Witness &) -> bool { throw std::bad_alloc(); };
  semantics::EngineResult oom = executor::explore(instance.machine(), options);
  EXPECT_FALSE(oom.complete);
  EXPECT_NE(oom.reason.find("out of memory"), std::string::npos) << oom.reason;
  events.witness = [](const semantics::Witness &) -> bool {
    throw std::logic_error("a broken invariant");
  };
  EXPECT_THROW(executor::explore(instance.machine(), options), std::logic_error);
}

} // namespace
} // namespace dkv::executor
