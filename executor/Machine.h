// The control part of docs/model.md as code: the state (program counters, semaphore
// values, DMA progress), which steps are enabled, their effects, and the findings
// checked at each step. Shared by the concrete executor (executor/Simulator.h) and the
// exhaustive search (executor/Explore.cpp), so both implement the one table.
#pragma once

#include "model/Model.h"
#include "report/Finding.h"

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace dkv::executor {

/// One side of a DMA's access interval: its source read (on the issuer) or its
/// destination write (on the target).
struct DmaSide {
  model::DmaId dma = 0;
  bool dst = false;
};

/// One access of a Store or DmaStart event that conflicts statically (same device,
/// same buffer, overlapping regions, one a write) with a side of another DMA.
struct Conflict {
  DmaSide other;
  /// Store: -1 for its destination, i >= 0 for reads[i]. DmaStart: 0 for its source,
  /// 1 for its destination.
  int32_t mine = -1;
};

/// A Store event that conflicts statically with a side of a DMA (the reverse of
/// Conflict, used by the vector-clock check at the DMA's start).
struct StoreConflict {
  model::DeviceId device = 0;
  int32_t pc = 0;
  int32_t mine = -1; ///< as Conflict::mine
  bool dmaDst = false;
};

/// The control state of docs/model.md section 2. `where` and `scopes` are functions of
/// `pc` (program order), and `started[k]` is "the issuer's pc is past k's start", so
/// they are not stored.
struct ControlState {
  std::vector<int32_t> pc;   ///< per device
  std::vector<int64_t> sem;  ///< [device * semCount + sem]
  std::vector<int32_t> sent; ///< per DMA
  std::vector<int32_t> landed;
};

/// A finding without its trace and schedule (those come from the run that reaches it).
struct Violation {
  report::FindingKind kind = report::FindingKind::Race;
  std::string message;
  report::Span primary;
  std::vector<report::Span> secondary;
};

/// Everything about a program the steps need, computed once. The program must pass
/// model::verifyProgram; it must outlive this object.
class Machine {
public:
  explicit Machine(const model::Program &program);

  const model::Program &program() const { return program_; }
  int32_t deviceCount() const { return deviceCount_; }
  int32_t dmaCount() const { return dmaCount_; }
  int32_t semCount() const { return semCount_; }
  int32_t chunks(model::DmaId k) const { return chunks_[k]; }
  int32_t eventCount(model::DeviceId d) const { return eventCount_[d]; }

  ControlState initialState() const;

  bool started(const ControlState &s, model::DmaId k) const {
    return startPc_[k] >= 0 && s.pc[dmas_[k].issuer] > startPc_[k];
  }
  bool sideOpen(const ControlState &s, DmaSide side) const {
    return started(s, side.dma) &&
           (side.dst ? s.landed[side.dma] : s.sent[side.dma]) < chunks_[side.dma];
  }
  bool finished(const ControlState &s, model::DeviceId d) const {
    return s.pc[d] >= eventCount_[d];
  }
  bool allDevicesFinished(const ControlState &s) const;
  /// The invocation device d is inside at its pc, or -1 when outside.
  int32_t insideInvocation(const ControlState &s, model::DeviceId d) const {
    return where_[d][s.pc[d]];
  }
  bool insideScope(const ControlState &s, model::DeviceId d, model::ScopeId scope) const;

  bool enabled(const ControlState &s, const report::ScheduleStep &step) const;
  /// Every enabled step in a fixed order: devices by id, then each DMA's send, land.
  /// `inFlight`, when given, holds every DMA that is started and not yet complete in
  /// `s` (a caller that follows one run keeps it); only those are looked at, so a
  /// step costs O(devices + DMAs in flight) instead of O(devices + all DMAs).
  void enabledSteps(const ControlState &s, std::vector<report::ScheduleStep> &out,
                    const std::set<model::DmaId> *inFlight = nullptr) const;
  /// Whether every device has reached (is at or past) its barrier of `invocation`.
  bool barrierOpen(const ControlState &s, int32_t invocation) const;
  /// Applies an enabled step's control effects (docs/model.md section 3).
  void apply(ControlState &s, const report::ScheduleStep &step) const;
  /// The finding checked at `step` in state `s` (before it runs), if any: a race of a
  /// Store or DmaStart with an open DMA interval, an exit or a lifetime violation.
  std::optional<Violation> check(const ControlState &s, const report::ScheduleStep &step) const;
  /// The deadlock finding for a state with no enabled step; nullopt if every device
  /// has finished.
  std::optional<Violation> deadlock(const ControlState &s) const;

  /// A device step that commutes with every step of every other actor from `s` on and
  /// changes no check's outcome, so the search may take it alone (see Explore.cpp).
  bool isSafeStep(const ControlState &s, model::DeviceId d) const;
  /// A DMA chunk that a blocked device needs before it can move (see Machine.cpp).
  bool isSafeDmaStep(const ControlState &s, const report::ScheduleStep &step) const;

  /// Race finding for the access `mine` of the event at (d, pc) (a Store or DmaStart)
  /// against `other`; `storeFirst` says the store ran before the DMA interval opened.
  Violation raceViolation(model::DeviceId d, int32_t pc, const Conflict &conflict) const;

  const std::vector<Conflict> &conflicts(model::DeviceId d, int32_t pc) const {
    return conflicts_[d][pc];
  }
  const std::vector<StoreConflict> &storeConflicts(model::DmaId k) const {
    return storeConflicts_[k];
  }
  int32_t startPc(model::DmaId k) const { return startPc_[k]; }
  /// Static bound on the value of semaphore s on device d (sum of all increments).
  int64_t semBound(model::DeviceId d, model::SemId s) const { return semBound_[d * semCount_ + s]; }

  /// "dma 3 (device 0 -> 1)".
  std::string dmaName(model::DmaId k) const;

private:
  std::optional<Violation> checkDevice(const ControlState &s, model::DeviceId d) const;
  std::optional<Violation> checkExit(const ControlState &s, model::DeviceId d,
                                     const model::Event &e, model::ScopeId scope) const;

  const model::Program &program_;
  const std::vector<model::Dma> &dmas_;
  int32_t deviceCount_ = 0;
  int32_t dmaCount_ = 0;
  int32_t semCount_ = 0;
  std::optional<model::SemId> barrierSem_;
  std::vector<int32_t> chunks_;
  std::vector<int32_t> eventCount_;
  std::vector<int32_t> startPc_;                ///< per DMA; -1 if never started
  std::vector<std::vector<int32_t>> barrierPc_; ///< [device][invocation], -1 if none
  std::vector<std::vector<int32_t>> where_;     ///< [device][pc] -> invocation or -1
  /// [device][scope] -> pc ranges (begin, end] in which the device is inside.
  std::vector<std::vector<std::vector<std::pair<int32_t, int32_t>>>> scopeRanges_;
  std::vector<std::vector<std::vector<Conflict>>> conflicts_;   ///< [device][pc]
  std::vector<std::vector<StoreConflict>> storeConflicts_;      ///< per DMA
  std::vector<int64_t> semBound_;                               ///< [device * semCount + sem]
  std::vector<std::vector<model::DmaId>> issuedBy_, targeting_; ///< per device
  /// [device][scope]: some signal from another device, or some DMA, can reach a
  /// semaphore or buffer of this scope on this device (ScopeEnter is then not safe).
  std::vector<std::vector<std::vector<model::DmaId>>> scopeDmas_;
  std::vector<std::vector<bool>> scopeRemoteSignal_;
};

} // namespace dkv::executor
