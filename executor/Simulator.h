// The concrete executor: simulated devices with real data, DMA engines as agents,
// a vector-clock race detector, and the step-by-step checks of docs/model.md.
#pragma once

#include "executor/Executor.h"
#include "report/Finding.h"
#include "semantics/Machine.h"

#include <cstdint>
#include <deque>
#include <set>
#include <string>
#include <vector>

namespace dkv::executor {

/// Flat (row-major) element indices of `region` in its buffer, in row-major order of
/// the region. Ranges outside the buffer are clipped.
std::vector<int64_t> regionElements(const model::Buffer &buffer, const model::Region &region);

/// One execution of a program along a schedule chosen step by step by the caller.
/// Every step runs the checks of docs/model.md on the control state (a race that
/// manifests, exit and lifetime rules) and the vector-clock race check (a race that
/// this schedule happened to order safely is reported too). Findings are deduplicated
/// by property; each carries the trace and schedule up to its step.
class Simulator {
public:
  using Machine = semantics::Machine;
  using ControlState = semantics::ControlState;

  /// `machine` must outlive the simulator. `recordTrace` false skips trace texts
  /// (findings then carry only their schedule). `raceClocks` false runs without the
  /// vector clocks (no vector-clock race check; the checks on the control state stay):
  /// for runs that only want the data, whose clocks of N + DMAs components would cost
  /// more than the run on a large mesh.
  Simulator(const Machine &machine, uint64_t inputSeed, bool recordTrace = true,
            bool raceClocks = true);

  const ControlState &state() const { return state_; }
  void enabledSteps(std::vector<report::ScheduleStep> &out) const {
    machine_.enabledSteps(state_, out, &inFlightDmas_);
  }
  bool enabled(const report::ScheduleStep &step) const { return machine_.enabled(state_, step); }
  /// The DMAs started and not complete: only their steps can be enabled.
  const std::set<model::DmaId> &inFlight() const { return inFlightDmas_; }
  /// Takes `step`, which must be enabled.
  void step(const report::ScheduleStep &step);
  /// Call when no step is enabled: reports a deadlock if some device has not finished.
  void finish();
  bool allDevicesFinished() const { return machine_.allDevicesFinished(state_); }

  const std::vector<report::Finding> &findings() const { return findings_; }
  const report::Schedule &schedule() const { return schedule_; }
  const report::Trace &trace() const { return trace_; }
  /// The run's findings, schedule, trace and memory, moved out (a trace of a run of 256
  /// devices is millions of steps: never copied); the simulator is done after.
  std::vector<report::Finding> takeFindings() { return std::move(findings_); }
  report::Schedule takeSchedule() { return std::move(schedule_); }
  report::Trace takeTrace() { return std::move(trace_); }
  std::vector<std::vector<std::vector<double>>> takeMemory() { return std::move(memory_); }
  /// Final data: [device][buffer] -> elements (row-major). A buffer the cores of a device
  /// share is held at [Program::memoryOf(device, buffer)] only.
  const std::vector<std::vector<std::vector<double>>> &memory() const { return memory_; }

private:
  using Clock = std::vector<uint32_t>;
  struct Units {
    int64_t count = 0;
    Clock clock;
  };

  /// A finding of obligation `o` at the current step (`before`: the state it ran
  /// from; for Stuck, the deadlocked state), unless its property was reported.
  void addFinding(semantics::ObligationIndex o, const ControlState &before);
  void addUnits(model::DeviceId d, model::SemId s, int64_t count, const Clock &clock);
  void consumeUnits(model::DeviceId d, model::SemId s, int64_t count, Clock &into);
  static void join(Clock &into, const Clock &from);
  void raceCheck(model::DeviceId d, int32_t pc, const Clock &now,
                 std::vector<semantics::ObligationIndex> &found);
  void runStore(model::DeviceId d, const model::Store &store);
  std::vector<double> gather(model::DeviceId d, const model::Region &region) const;
  void scatter(model::DeviceId d, const model::Region &region, const std::vector<double> &data);

  const Machine &machine_;
  const model::Program &program_;
  bool recordTrace_ = true;
  bool clocks_ = true;
  ControlState state_;
  std::vector<std::vector<std::vector<double>>> memory_;
  std::vector<std::vector<double>> registers_; ///< [device][register]
  std::vector<std::vector<double>> inFlight_;  ///< per DMA: the data read at its last send
  std::set<model::DmaId> inFlightDmas_;        ///< started and not complete, for enabledSteps
  // Vector clocks: components 0..N-1 are the devices, N + k is DMA k.
  std::vector<Clock> deviceClock_;
  std::vector<Clock> dmaClock_;
  std::vector<uint32_t> sendEnd_, landEnd_; ///< DMA k's own component at its last send/land
  /// --dma-order link: the clock of DMA j at its last land chunk, kept (until the next
  /// DMA on its link lands its first chunk) when some DMA has j as its link predecessor.
  std::vector<Clock> linkEnd_;
  std::vector<bool> hasLinkSuccessor_;   ///< per DMA
  std::vector<std::deque<Units>> units_; ///< [device * semCount + sem], oldest first
  std::vector<Clock> barrierJoin_;       ///< per invocation, once the first device passes
  std::vector<bool> barrierJoined_;
  std::vector<report::Finding> findings_;
  report::Schedule schedule_;
  report::Trace trace_;
};

} // namespace dkv::executor
