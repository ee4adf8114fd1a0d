// The static pre-check over the model.
#include "model/Precheck.h"

#include "model/Printer.h"
#include "support/Overloaded.h"

#include <fmt/format.h>

#include <map>

namespace dkv::model {

namespace {

struct SemTotals {
  int64_t increments = 0;
  std::vector<SourceLoc> incrementLocs;
  int64_t waited = 0;
  bool deadlockReported = false;
};

/// The part an event plays in the totals: a signal adds, a wait takes. Every kind is
/// listed, so a new kind must say whether it increments or waits.
struct SemUse {
  const Signal *signal = nullptr;
  const SemWait *wait = nullptr;
};

SemUse semUse(const Event &event) {
  return std::visit(support::Overloaded{
                        [](const Signal &s) {
                          return SemUse{&s, nullptr};
                        },
                        [](const SemWait &w) {
                          return SemUse{nullptr, &w};
                        },
                        // DMA units are counted from Program::dmas (once per DMA, not per start).
                        [](const DmaStart &) { return SemUse{}; },
                        // No semaphore changes: a read only observes, a device barrier is not a
                        // semaphore, the rest move no units.
                        [](const SemRead &) { return SemUse{}; },
                        [](const DeviceBarrier &) { return SemUse{}; },
                        [](const KernelEnter &) { return SemUse{}; },
                        [](const KernelExit &) { return SemUse{}; },
                        [](const ScopeEnter &) { return SemUse{}; },
                        [](const ScopeExit &) { return SemUse{}; },
                        [](const Store &) { return SemUse{}; },
                    },
                    event.kind);
}

} // namespace

std::vector<report::Finding> precheck(const Program &program) {
  std::vector<report::Finding> findings;
  std::map<std::pair<DeviceId, SemId>, SemTotals> totals;
  // The units that can ever arrive (Program::incrementTotals); the locations of what
  // adds them are collected here, for the findings' notes.
  const std::vector<int64_t> increments = program.incrementTotals();
  auto totalsOf = [&](DeviceId d, SemId s) -> SemTotals & {
    SemTotals &t = totals[{d, s}];
    t.increments = increments[static_cast<size_t>(d) * program.semaphores.size() + s];
    return t;
  };

  for (const Dma &dma : program.dmas) {
    totalsOf(dma.target, dma.recvSem).incrementLocs.push_back(dma.loc);
    if (dma.sendSem)
      totalsOf(dma.issuer, *dma.sendSem).incrementLocs.push_back(dma.loc);
  }
  for (const Process &proc : program.processes)
    for (const Event &e : proc.events)
      if (const Signal *signal = semUse(e).signal) {
        totalsOf(signal->target, signal->sem).incrementLocs.push_back(e.loc);
        if (program.semaphores[signal->sem].kind == SemKind::Dma) {
          report::Finding f;
          f.engine = "precheck";
          f.message = fmt::format("{} signals DMA semaphore {} by hand; DMA semaphores "
                                  "count bytes of DMAs only",
                                  program.processName(proc.device), program.semName(signal->sem));
          f.kind = report::FindingKind::ExitViolation;
          f.primary = {e.loc, "signal of a DMA semaphore"};
          f.shape.check = report::FindingShape::Check::StaticExit;
          f.shape.dmaSemaphore = true;
          f.shape.signal = true;
          findings.push_back(std::move(f));
        }
      }

  for (const Process &proc : program.processes)
    for (const Event &e : proc.events) {
      const SemWait *wait = semUse(e).wait;
      if (!wait)
        continue;
      SemTotals &t = totalsOf(proc.device, wait->sem);
      t.waited += wait->amount;
      if (t.waited > t.increments && !t.deadlockReported) {
        t.deadlockReported = true;
        report::Finding f;
        f.kind = report::FindingKind::Deadlock;
        f.engine = "precheck";
        bool dma = program.semaphores[wait->sem].kind == SemKind::Dma;
        // A DMA semaphore counts units of --sem-unit bytes (one byte by default).
        const int64_t unit = program.options.semUnit;
        const std::string units = !dma ? "units"
                                  : unit == 1
                                      ? "units (bytes) of DMA data"
                                      : fmt::format("units ({} bytes each) of DMA data", unit);
        f.message =
            fmt::format("{} waits for {} {} on {}, but only {} can ever arrive there (waits so far "
                        "need {}): this wait can never be satisfied",
                        program.processName(proc.device), wait->amount, units,
                        program.semName(wait->sem), t.increments, t.waited);
        f.primary = {e.loc, "wait that can never be satisfied"};
        f.shape.check = report::FindingShape::Check::StaticWait;
        f.shape.dmaSemaphore = dma;
        f.shape.neverEnough = true;
        for (SourceLoc loc : t.incrementLocs)
          f.secondary.push_back({loc, "increments it"});
        findings.push_back(std::move(f));
      }
    }

  for (auto &[key, t] : totals) {
    auto [device, sem] = key;
    if (program.isBarrier(sem))
      continue;
    if (t.increments > t.waited && !t.deadlockReported) {
      report::Finding f;
      f.kind = report::FindingKind::ExitViolation;
      f.engine = "precheck";
      f.message =
          fmt::format("semaphore {} on {} receives {} units but its waits take "
                      "only {}: it is non-zero when the device leaves the kernel",
                      program.semName(sem), program.processName(device), t.increments, t.waited);
      f.primary = {program.semaphores[sem].loc, "semaphore declared here"};
      f.shape.check = report::FindingShape::Check::StaticExit;
      f.shape.dmaSemaphore = program.semaphores[sem].kind == SemKind::Dma;
      if (!f.shape.dmaSemaphore) {
        // What root-cause grouping compares (report/RootCause.h): the same semaphore left
        // over on several devices is one cause, as the engines' findings of it are.
        f.facts.what = report::FindingFacts::What::ExitSemaphore;
        f.facts.semaphore = program.semaphores[sem].loc;
        f.facts.semaphoreName = program.semaphores[sem].name;
        f.facts.semaphoreElement = program.semName(sem);
        f.facts.waited = t.waited > 0;
        f.facts.leftOver = t.increments - t.waited;
      }
      for (SourceLoc loc : t.incrementLocs)
        f.secondary.push_back({loc, "increments it"});
      findings.push_back(std::move(f));
    }
  }
  return findings;
}

} // namespace dkv::model
