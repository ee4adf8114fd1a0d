// Programs for the executor tests: hand-built models and lowered example kernels.
#pragma once

#include "executor/Executor.h"
#include "frontend/Frontend.h"
#include "lower/Lower.h"
#include "model/Model.h"
#include "model/Verifier.h"
#include "semantics/Machine.h"
#include "semantics/Witness.h"
#include "support/Diagnostics.h"
#include "support/Source.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace dkv::executor::testing {

/// Whether a test that sweeps every example (or a long list of cases) runs case number
/// `index`: always, except under the sanitizers (DKV_SANITIZED, the second stage of
/// scripts/test.sh), where it runs one case in three. The first stage runs every case;
/// the sanitizer stage looks for memory errors and undefined behaviour in the same code,
/// which a sample reaches, and these sweeps took 190 of its 810 seconds
/// (docs/performance.md, "CI time").
inline bool sampledUnderSanitizers(size_t index) {
#ifdef DKV_SANITIZED
  return index % 3 == 0;
#else
  (void)index;
  return true;
#endif
}

/// Every example kernel (examples/*.dk and examples/real/*.dk), as absolute paths, sorted.
inline std::vector<std::string> exampleFiles() {
  std::vector<std::string> files;
  for (const char *dir : {"/examples", "/examples/real"})
    for (const auto &entry : std::filesystem::directory_iterator(std::string(DKV_SOURCE_DIR) + dir))
      if (entry.path().extension() == ".dk")
        files.push_back(entry.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

/// Lowers examples/NAME (or NAME itself when it starts with "tests/", under the source
/// directory, or with "/", an absolute path) with N devices and `options`; fails the
/// test on errors.
inline std::optional<model::Program> lowerExample(const std::string &name, int64_t devices,
                                                  model::Options options = {}) {
  std::string error;
  support::SourceManager sources;
  std::optional<support::FileId> id = sources.load(
      name.rfind("/", 0) == 0 ? name
                              : std::string(DKV_SOURCE_DIR) +
                                    (name.rfind("tests/", 0) == 0 ? "/" : "/examples/") + name,
      error);
  EXPECT_TRUE(id.has_value()) << error;
  if (!id)
    return std::nullopt;
  support::DiagnosticEngine diags(&sources);
  bool ok = false;
  auto module = frontend::loadModule(sources.file(*id), {}, devices, diags, ok);
  EXPECT_TRUE(ok && module) << name << ": frontend errors";
  if (!ok || !module)
    return std::nullopt;
  std::optional<model::Program> program = lower::lower(*module, name, options, diags);
  EXPECT_TRUE(program.has_value()) << name << ": lowering errors";
  if (program) {
    std::vector<std::string> problems = model::verifyProgram(*program);
    EXPECT_TRUE(problems.empty()) << problems.front();
  }
  return program;
}

/// Two devices on axis x; each DMAs `input` into the other's `output` (send sem 0,
/// recv sem 1), then waits for both sides unless `withWaits` is false. With
/// `storeFirst`, each device first stores 0 into `output` (racing with the incoming
/// DMA). Events: enter, barrier, [store], start, [wait send, wait recv], exit.
inline model::Program permute(bool withWaits = true, bool storeFirst = false) {
  using namespace model;
  Program p;
  p.file = "fixture.dk";
  p.kernel = "permute";
  p.mesh = {{"x", 2}};
  p.buffers.push_back(
      {"input", MemSpace::Hbm, DType::I32, {4}, BufferRole::Input, kKernelScope, {1, 1}});
  p.buffers.push_back(
      {"output", MemSpace::Hbm, DType::I32, {4}, BufferRole::Output, kKernelScope, {1, 2}});
  p.semaphores.push_back({"send", {}, SemKind::Dma, kKernelScope, {2, 1}});
  p.semaphores.push_back({"recv", {}, SemKind::Dma, kKernelScope, {2, 2}});
  p.contexts = {"inv 0"};
  for (DeviceId d = 0; d < 2; ++d) {
    Dma dma;
    dma.id = d;
    dma.issuer = d;
    dma.target = 1 - d;
    dma.src = Region{0, {{0, 4}}};
    dma.dst = Region{1, {{0, 4}}};
    dma.sendSem = 0;
    dma.recvSem = 1;
    dma.bytes = 16;
    dma.sendUnits = dma.landUnits = {16};
    dma.loc = {5, 3};
    p.dmas.push_back(dma);
    Process proc;
    proc.device = d;
    proc.coords = {d};
    proc.events.push_back({KernelEnter{0}, {3, 1}, 0});
    proc.events.push_back({DeviceBarrier{0}, {3, 1}, 0});
    if (storeFirst) {
      Store st;
      st.dst = Region{1, {{0, 4}}};
      st.value.nodes.push_back(ValueNode{}); // the constant 0
      st.value.root = 0;
      proc.events.push_back({st, {4, 3}, 0});
    }
    proc.events.push_back({DmaStart{d}, {5, 3}, 0});
    if (withWaits) {
      proc.events.push_back({SemWait{0, 16, WaitOrigin::DmaWaitSend}, {6, 3}, 0});
      proc.events.push_back({SemWait{1, 16, WaitOrigin::DmaWaitRecv}, {6, 3}, 0});
    }
    proc.events.push_back({KernelExit{0}, {7, 1}, 0});
    p.processes.push_back(std::move(proc));
  }
  return p;
}

/// Two devices, one regular semaphore `ready`. Device 0 signals device 1 `signals`
/// times (line 10); device 1 waits `waits` times for 1 (line 20). Both start with the
/// entry barrier.
inline model::Program signalWait(int signals, int waits) {
  using namespace model;
  Program p;
  p.file = "fixture.dk";
  p.kernel = "signal_wait";
  p.mesh = {{"x", 2}};
  p.semaphores.push_back({"ready", {}, SemKind::Regular, kKernelScope, {2, 1}});
  p.contexts = {"inv 0"};
  for (DeviceId d = 0; d < 2; ++d) {
    Process proc;
    proc.device = d;
    proc.coords = {d};
    proc.events.push_back({KernelEnter{0}, {3, 1}, 0});
    proc.events.push_back({DeviceBarrier{0}, {3, 1}, 0});
    if (d == 0)
      for (int i = 0; i < signals; ++i)
        proc.events.push_back({Signal{1, 0, 1}, {10, 3}, 0});
    else
      for (int i = 0; i < waits; ++i)
        proc.events.push_back({SemWait{0, 1, WaitOrigin::Wait}, {20, 3}, 0});
    proc.events.push_back({KernelExit{0}, {30, 1}, 0});
    p.processes.push_back(std::move(proc));
  }
  return p;
}

} // namespace dkv::executor::testing

// Conveniences for the tests: the executor's entry points on a bare program, each
// building the program's semantics::Instance for the call (the production code
// builds it once, in the driver's pipeline).
namespace dkv::executor {

/// explore, then the verdict every engine gets (semantics::buildVerdict and the
/// executor's confirmation), without the static pre-check.
inline report::Verdict explore(const model::Program &program, const ExploreOptions &options) {
  semantics::Instance instance(program);
  report::Verdict v =
      semantics::buildVerdict(instance.machine(), explore(instance.machine(), options), "explore");
  confirmFindings(instance.machine(), v.findings);
  return v;
}

inline RunResult runOnce(const model::Program &program, const RunOptions &options) {
  semantics::Instance instance(program);
  return runOnce(instance.machine(), options);
}

/// The findings the executor sees along `schedule` (and at its end).
inline std::vector<report::Finding> replay(const model::Program &program,
                                           const report::Schedule &schedule) {
  RunOptions o;
  o.policy = Policy::Replay;
  o.schedule = schedule;
  return runOnce(program, o).findings;
}

inline std::optional<std::string> findWrongValue(const model::Program &program, uint64_t inputSeed,
                                                 const report::Schedule *witness) {
  semantics::Instance instance(program);
  return findWrongValue(instance.machine(), inputSeed, witness);
}

inline void confirmFindings(const model::Program &program, std::vector<report::Finding> &findings) {
  semantics::Instance instance(program);
  confirmFindings(instance.machine(), findings);
}

} // namespace dkv::executor
