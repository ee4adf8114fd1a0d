// Tests of the Z3 engine: verdicts and replayable witnesses on fixtures, the time
// limit, the SMT-LIB2 dump, and the same violated properties as the exhaustive search
// on every example (with the model options).
#include "smt/Smt.h"
#include "executor/Executor.h"
#include "frontend/Annotations.h"
#include "report/Json.h"
#include "report/Render.h"
#include "tests/executor/ExecutorFixtures.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <set>
#include <sstream>
#include <tuple>

namespace dkv::smt {
namespace {

using report::FindingKind;
using Status = report::Verdict::Status;

report::Verdict z3Verdict(const model::Program &program, SmtOptions options = {}) {
  semantics::Instance instance(program);
  return semantics::buildVerdict(instance.machine(), checkWithZ3(instance.machine(), options),
                                 "z3");
}

/// The witnesses from the solver's models, not from the simulation.
SmtOptions solverWitnesses() {
  SmtOptions options;
  options.simulationRuns = 0;
  return options;
}

std::set<std::string> violated(const report::Verdict &v) {
  std::set<std::string> ids;
  for (const report::Finding &f : v.findings)
    ids.insert(f.property);
  return ids;
}

std::string stat(const report::Verdict &v, const std::string &key) {
  for (const auto &[k, value] : v.stats)
    if (k == key)
      return value;
  return "";
}

TEST(Z3Engine, PermuteWithWaitsIsVerified) {
  report::Verdict v = z3Verdict(executor::testing::permute());
  EXPECT_EQ(v.status, Status::Verified) << v.reason;
  EXPECT_NE(stat(v, "queries"), "");
  EXPECT_EQ(stat(v, "sat"), "0");
  EXPECT_NE(stat(v, "pruned race pairs"), "");
  EXPECT_NE(stat(v, "solver time"), "");
}

TEST(Z3Engine, RaceWitnessReplays) {
  model::Program program = executor::testing::permute(true, true);
  report::Verdict v = z3Verdict(program, solverWitnesses());
  ASSERT_EQ(v.status, Status::Findings) << v.reason;
  ASSERT_EQ(v.findings.size(), 1u);
  const report::Finding &f = v.findings[0];
  EXPECT_EQ(f.kind, FindingKind::Race);
  EXPECT_EQ(f.property, "race.0");
  EXPECT_EQ(f.engine, "z3");
  // buildVerdict replayed the schedule on the step table; the executor replays it too.
  std::vector<report::Finding> findings = v.findings;
  executor::confirmFindings(program, findings);
  EXPECT_TRUE(findings[0].confirmed);
}

TEST(Z3Engine, DeadlockExitAndLifetime) {
  report::Verdict deadlock = z3Verdict(executor::testing::signalWait(1, 2), solverWitnesses());
  ASSERT_EQ(deadlock.status, Status::Findings) << deadlock.reason;
  ASSERT_EQ(deadlock.findings.size(), 1u);
  EXPECT_EQ(deadlock.findings[0].kind, FindingKind::Deadlock);
  EXPECT_NE(deadlock.findings[0].detail.find("ready >= 1 but it is 0"), std::string::npos);

  report::Verdict extra = z3Verdict(executor::testing::signalWait(2, 1), solverWitnesses());
  std::set<FindingKind> kinds;
  for (const report::Finding &f : extra.findings)
    kinds.insert(f.kind);
  EXPECT_EQ(kinds,
            (std::set<FindingKind>{FindingKind::ExitViolation, FindingKind::LifetimeViolation}));

  report::Verdict noWaits = z3Verdict(executor::testing::permute(false), solverWitnesses());
  EXPECT_EQ(violated(noWaits), violated(executor::explore(executor::testing::permute(false), {})));
}

TEST(Z3Engine, TimeLimitIsInconclusiveNeverVerified) {
  SmtOptions options;
  options.timeoutSeconds = 0;
  options.staticAnalysis = false; // which would decide this one without a query
  options.simulationRuns = 0;
  report::Verdict v = z3Verdict(executor::testing::permute(), options);
  EXPECT_EQ(v.status, Status::Inconclusive);
  EXPECT_NE(v.reason.find("time limit"), std::string::npos) << v.reason;
}

TEST(Z3Engine, DumpIsSelfContained) {
  semantics::Instance instance(executor::testing::permute(true, true));
  std::string text, error;
  ASSERT_TRUE(dumpSmt2(instance.machine(), 0, text, error)) << error;
  EXPECT_NE(text.find("(declare-fun x_d0_0 () Bool)"), std::string::npos);
  EXPECT_EQ(text.substr(text.size() - 12), "(check-sat)\n");
  ASSERT_TRUE(dumpSmt2(instance.machine(), std::nullopt, text, error)) << error;
  EXPECT_NE(text.find("(echo \"race.0\")\n(check-sat-assuming (q_race.0))"), std::string::npos);
}

// The dump says which form each semaphore got, as comments before its assertions.
TEST(Z3Engine, DumpCommentsNameEachSemaphoresForm) {
  for (const char *name : {"right_permute.dk", "all_gather_shared_sem.dk"}) {
    std::optional<model::Program> program = executor::testing::lowerExample(name, 3);
    ASSERT_TRUE(program) << name;
    semantics::Instance instance(*program);
    std::string text, error;
    ASSERT_TRUE(dumpSmt2(instance.machine(), std::nullopt, text, error)) << error;
    for (const report::SemaphoreForm &f :
         checkWithZ3(instance.machine(), solverWitnesses()).semaphoreForms) {
      const std::string head = fmt::format("\n; semaphore {}@d{}: {} form, ", f.semaphore, f.device,
                                           f.counting ? "counting" : "sum");
      const size_t at = text.find(head);
      ASSERT_NE(at, std::string::npos) << name << ": " << head;
      // Then the comment of its first wait and that wait's assertion.
      const size_t wait =
          text.find(fmt::format("\n; {}@d{}: wait at event ", f.semaphore, f.device), at);
      ASSERT_NE(wait, std::string::npos) << name;
      EXPECT_EQ(text.find("\n(assert", at), text.find("\n(assert", wait)) << name;
    }
    EXPECT_NE(
        text.find("\n; program order, and each DMA's chunks after its start and in order\n(assert"),
        std::string::npos);
  }
  // right_permute at N = 2 in full: one comment line per semaphore and per wait.
  std::optional<model::Program> program = executor::testing::lowerExample("right_permute.dk", 2);
  ASSERT_TRUE(program);
  semantics::Instance instance(*program);
  std::string text, error;
  ASSERT_TRUE(dumpSmt2(instance.machine(), 0, text, error)) << error;
  EXPECT_NE(text.find("; semaphore recv@d0: counting form, 1 source: dma 1 lands (device 1 -> 0)\n"
                      "; recv@d0: wait at event 4 of device 0 (its waits on it need 4096 in all), "
                      "counting form\n(assert"),
            std::string::npos)
      << text;
}

/// "recv@d0 counting [dma 1 lands (device 1 -> 0)]", one per form record.
std::vector<std::string> formsText(const std::vector<report::SemaphoreForm> &forms) {
  std::vector<std::string> out;
  for (const report::SemaphoreForm &f : forms) {
    std::string sources;
    for (const std::string &s : f.sources)
      sources += (sources.empty() ? "" : "; ") + s;
    out.push_back(fmt::format("{}@d{} {} [{}]", f.semaphore, f.device,
                              f.counting ? "counting" : "sum", sources));
  }
  return out;
}

// right_permute: each device's send semaphore counts its own DMA's sends, its recv
// semaphore the left neighbour's DMA's landings: one source each, all counting
// (docs/smt.md, "A worked example").
TEST(Z3Engine, SemaphoreFormsOfRightPermuteAreAllCounting) {
  std::optional<model::Program> program = executor::testing::lowerExample("right_permute.dk", 2);
  ASSERT_TRUE(program);
  report::Verdict v = z3Verdict(*program);
  ASSERT_EQ(v.status, Status::Verified) << v.reason;
  EXPECT_EQ(formsText(v.semaphoreForms), (std::vector<std::string>{
                                             "send@d0 counting [dma 0 sends (device 0 -> 1)]",
                                             "send@d1 counting [dma 1 sends (device 1 -> 0)]",
                                             "recv@d0 counting [dma 1 lands (device 1 -> 0)]",
                                             "recv@d1 counting [dma 0 lands (device 0 -> 1)]",
                                         }));
  EXPECT_EQ(stat(v, "semaphores counted"), "4");
  EXPECT_EQ(stat(v, "semaphores summed"), "0");
  EXPECT_EQ(report::semaphoreFormsLine(v.semaphoreForms), "counting: send (d0-1), recv (d0-1)");
  // JSON: always, one object per (semaphore, device).
  const nlohmann::json j = report::verdictJson(v, "right_permute.dk", nullptr, {"z3", "", false});
  ASSERT_TRUE(j.contains("semaphore_forms"));
  ASSERT_EQ(j["semaphore_forms"].size(), 4u);
  EXPECT_EQ(j["semaphore_forms"][2],
            nlohmann::json({{"semaphore", "recv"},
                            {"device", 0},
                            {"form", "counting"},
                            {"sources", {"dma 1 lands (device 1 -> 0)"}}}));
}

// all_gather_shared_sem: one receive semaphore for every step, so each step's DMA
// from the left neighbour lands on it (several DMAs: the sum form), and one send
// semaphore for every step's DMA (sum form too); the own-slot copy at step 0 is the
// only source of copy_sem (counting).
TEST(Z3Engine, SemaphoreFormsOfASharedReceiveSemaphoreAreSums) {
  std::optional<model::Program> program =
      executor::testing::lowerExample("all_gather_shared_sem.dk", 3);
  ASSERT_TRUE(program);
  report::Verdict v = z3Verdict(*program);
  ASSERT_EQ(v.status, Status::Findings) << v.reason;
  EXPECT_EQ(formsText(v.semaphoreForms),
            (std::vector<std::string>{
                "copy_sem@d0 counting [dma 0 lands (device 0 -> 0)]",
                "copy_sem@d1 counting [dma 3 lands (device 1 -> 1)]",
                "copy_sem@d2 counting [dma 6 lands (device 2 -> 2)]",
                "send_sem@d0 sum [dma 1 sends (device 0 -> 1); dma 2 sends (device 0 -> 1)]",
                "send_sem@d1 sum [dma 4 sends (device 1 -> 2); dma 5 sends (device 1 -> 2)]",
                "send_sem@d2 sum [dma 7 sends (device 2 -> 0); dma 8 sends (device 2 -> 0)]",
                "recv_sem@d0 sum [dma 7 lands (device 2 -> 0); dma 8 lands (device 2 -> 0)]",
                "recv_sem@d1 sum [dma 1 lands (device 0 -> 1); dma 2 lands (device 0 -> 1)]",
                "recv_sem@d2 sum [dma 4 lands (device 1 -> 2); dma 5 lands (device 1 -> 2)]",
            }));
  EXPECT_EQ(stat(v, "semaphores counted"), "3");
  EXPECT_EQ(stat(v, "semaphores summed"), "6");
  EXPECT_EQ(report::semaphoreFormsLine(v.semaphoreForms),
            "counting: copy_sem (d0-2); sum: send_sem (d0-2, 2 sources), recv_sem (d0-2, 2 "
            "sources)");
  const nlohmann::json j =
      report::verdictJson(v, "all_gather_shared_sem.dk", nullptr, {"z3", "", false});
  ASSERT_EQ(j["semaphore_forms"].size(), 9u);
  EXPECT_EQ(j["semaphore_forms"][7]["form"], "sum");
  EXPECT_EQ(j["semaphore_forms"][7]["sources"],
            nlohmann::json({"dma 1 lands (device 0 -> 1)", "dma 2 lands (device 0 -> 1)"}));
  // The text report lists them with --timing only.
  std::ostringstream plain, timed;
  report::renderVerdict(plain, v, nullptr, {"z3", "", false});
  report::renderVerdict(timed, v, nullptr, {"z3", "", true});
  EXPECT_EQ(plain.str().find("semaphore forms"), std::string::npos);
  EXPECT_NE(timed.str().find("\n  semaphore forms: counting: copy_sem (d0-2); sum: "),
            std::string::npos)
      << timed.str();
}

// The explore engine has no forms; the device ranges are compressed.
TEST(Z3Engine, SemaphoreFormsLineGroupsDevices) {
  std::vector<report::SemaphoreForm> forms;
  for (int32_t d : {0, 1, 2, 3, 5, 7})
    forms.push_back({"ready", d, true, {"signals of device 4"}});
  forms.push_back({"barrier", 0, false, {"a", "b"}});
  forms.push_back({"barrier", 1, false, {"a", "b", "c"}});
  EXPECT_EQ(report::semaphoreFormsLine(forms),
            "counting: ready (d0-3,5,7); sum: barrier (d0-1, 2-3 sources)");
  EXPECT_EQ(report::semaphoreFormsLine({}), "");
}

/// Every example that lowers, at N = 2 and 3 (as its `// devices:` allows), with its
/// `// options:` and with each extra option set: z3 reports the same properties as
/// explore, also with the solver alone, and every witness replays (buildVerdict would
/// give Status::Error).
TEST(Z3Engine, SameViolatedPropertiesAsExploreOnEveryExample) {
  std::vector<std::string> files;
  for (const auto &entry :
       std::filesystem::directory_iterator(std::string(DKV_SOURCE_DIR) + "/examples"))
    if (entry.path().extension() == ".dk")
      files.push_back(entry.path().filename().string());
  std::sort(files.begin(), files.end());
  int compared = 0;
  for (size_t i = 0; i < files.size(); ++i) {
    if (!executor::testing::sampledUnderSanitizers(i))
      continue;
    const std::string &name = files[i];
    std::string error;
    support::SourceManager sources;
    std::optional<support::FileId> id =
        sources.load(std::string(DKV_SOURCE_DIR) + "/examples/" + name, error);
    ASSERT_TRUE(id) << error;
    const support::SourceFile *file = &sources.file(*id);
    support::DiagnosticEngine diags(&sources);
    frontend::Annotations annotations = frontend::readAnnotations(*file, diags);
    if (annotations.expect && annotations.expect->verdict == frontend::ExpectedVerdict::StaticError)
      continue;
    // A kernel with several mesh axes (`// mesh:`) is not sized by a device count; the
    // example tests compare every engine on it at each of its meshes (agree.sh).
    if (!annotations.meshes.empty())
      continue;
    model::Options base;
    for (size_t i = 0; i + 1 < annotations.options.size(); ++i)
      if (annotations.options[i] == "--invocations")
        base.invocations = std::stoi(annotations.options[i + 1]);
    std::vector<model::Options> variants = {base};
    model::Options chunks = base;
    chunks.dmaChunks = 2;
    variants.push_back(chunks);
    model::Options noBarrier = base;
    noBarrier.entryBarrier = false;
    variants.push_back(noBarrier);
    for (int64_t n : {2, 3}) {
      const std::vector<int64_t> &devices = annotations.devices;
      if (!devices.empty() && std::find(devices.begin(), devices.end(), n) == devices.end())
        continue;
      for (const model::Options &options : variants) {
        std::optional<model::Program> program = executor::testing::lowerExample(name, n, options);
        if (!program)
          continue;
        executor::ExploreOptions budget;
        budget.maxStates = 300'000;
        report::Verdict reference = executor::explore(*program, budget);
        report::Verdict v = z3Verdict(*program);
        ASSERT_NE(v.status, Status::Error) << name << " N=" << n << ": " << v.reason;
        // The static analysis and the simulation only spare the solver work: without
        // them (the solver alone), and without the simulation (the analysis and the
        // solver), the same answers.
        for (bool analysis : {false, true}) {
          SmtOptions plain;
          plain.staticAnalysis = analysis;
          plain.simulationRuns = 0;
          report::Verdict w = z3Verdict(*program, plain);
          ASSERT_NE(w.status, Status::Error) << name << " N=" << n << ": " << w.reason;
          EXPECT_EQ(violated(w), violated(v))
              << name << " N=" << n << " without the simulation, analysis " << analysis;
        }
        if (!stat(reference, "budget").empty()) {
          // explore ran out of states: what it found, z3 finds too.
          std::set<std::string> all = violated(v), some = violated(reference);
          EXPECT_TRUE(std::includes(all.begin(), all.end(), some.begin(), some.end())) << name;
          continue;
        }
        EXPECT_EQ(v.status, reference.status) << name << " N=" << n << ": " << v.reason;
        EXPECT_EQ(violated(v), violated(reference))
            << name << " N=" << n << " chunks=" << options.dmaChunks
            << " barrier=" << options.entryBarrier;
        ++compared;
      }
    }
  }
  EXPECT_GT(compared, executor::testing::sampledUnderSanitizers(1) ? 30 : 30 / 3);
}

/// Z3's witnesses are longer than the exhaustive search's; shortened (as every
/// engine's are, semantics/Shorten.h) they still replay to their property (in the
/// step table, buildVerdict, and in the executor), are no longer than the engine's
/// own, and on right_permute_no_wait at N = 3 (and 8) no longer than explore's.
/// Shortening only removes steps from the engine's witness, so it is not always as
/// short as explore's (all_reduce_no_capacity at N = 3: z3's witness shows the race
/// on device 1 in a run where device 2, explore's shorter case, is past it).
TEST(Z3Engine, ShortenedWitnessesReplayAndAreShorter) {
  for (auto [name, n, asExplore] :
       {std::tuple{"right_permute_no_wait.dk", 3, true},
        std::tuple{"right_permute_no_wait.dk", 8, true}, std::tuple{"zero_dst_race.dk", 3, true},
        std::tuple{"all_reduce_no_capacity.dk", 3, false}}) {
    std::optional<model::Program> program = executor::testing::lowerExample(name, n);
    ASSERT_TRUE(program) << name;
    semantics::Instance instance(*program);
    semantics::VerdictOptions raw;
    raw.shorten = false;
    report::Verdict longer = semantics::buildVerdict(
        instance.machine(), checkWithZ3(instance.machine(), solverWitnesses()), "z3", raw);
    report::Verdict z3 = semantics::buildVerdict(
        instance.machine(), checkWithZ3(instance.machine(), solverWitnesses()), "z3");
    executor::confirmFindings(instance.machine(), z3.findings);
    report::Verdict reference = executor::explore(*program, {});
    ASSERT_EQ(z3.status, Status::Findings) << name << ": " << z3.reason;
    ASSERT_EQ(violated(z3), violated(reference)) << name;
    ASSERT_EQ(violated(longer), violated(z3)) << name;
    size_t before = 0, after = 0;
    for (size_t i = 0; i < z3.findings.size(); ++i) {
      const report::Finding &f = z3.findings[i];
      EXPECT_TRUE(f.confirmed) << name << " " << f.property;
      EXPECT_EQ(f.trace.steps.size(), f.schedule.size());
      if (asExplore) {
        EXPECT_LE(f.schedule.size(), reference.findings[i].schedule.size())
            << name << " N=" << n << " " << f.property;
      }
      EXPECT_LE(f.schedule.size(), longer.findings[i].schedule.size());
      if (f.witnessSteps != 0) {
        EXPECT_EQ(static_cast<size_t>(f.witnessSteps), longer.findings[i].schedule.size());
      }
      before += longer.findings[i].schedule.size();
      after += f.schedule.size();
    }
    // zero_dst_race's witness from the solver is already minimal.
    if (std::string(name) != "zero_dst_race.dk") {
      EXPECT_LT(after, before) << name << " N=" << n << ": z3's witnesses were not shortened";
    }
  }
}

} // namespace
} // namespace dkv::smt
