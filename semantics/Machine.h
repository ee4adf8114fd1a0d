// The step table of docs/model.md as code: the control state (program counters,
// semaphore values, DMA progress), which steps are enabled, their effects, and which
// obligations of the property list each step violates. Every engine that executes the
// model (the executor, the exhaustive search, the replay of any engine's witness)
// uses this one implementation; the Promela emitter translates the same table.
#pragma once

#include "model/Model.h"
#include "report/Finding.h"
#include "semantics/Obligations.h"
#include "semantics/Properties.h"

#include <array>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace dkv::semantics {

/// One side of a DMA's access interval: its source read (on the issuer) or its
/// destination write (on the target).
struct DmaSide {
  model::DmaId dma = 0;
  bool dst = false;
};

/// The control state of docs/model.md section 2. `where` and `scopes` are functions of
/// `pc` (program order), and `started[k]` is "the issuer's pc is past k's start", so
/// they are not stored.
struct ControlState {
  std::vector<int32_t> pc;   ///< per device
  std::vector<int64_t> sem;  ///< [device * semCount + sem]
  std::vector<int32_t> sent; ///< per DMA
  std::vector<int32_t> landed;
  friend bool operator==(const ControlState &, const ControlState &) = default;
};

/// Everything about a program the steps need, computed once. The program must pass
/// model::verifyProgram; the program and the properties must outlive this object.
class Machine {
public:
  Machine(const model::Program &program, const Properties &properties);

  const model::Program &program() const { return program_; }
  const Properties &properties() const { return properties_; }
  int32_t deviceCount() const { return deviceCount_; }
  int32_t dmaCount() const { return dmaCount_; }
  int32_t semCount() const { return semCount_; }
  int32_t chunks(model::DmaId k) const { return chunks_[k]; }
  int32_t eventCount(model::DeviceId d) const { return eventCount_[d]; }

  ControlState initialState() const;

  int64_t semValue(const ControlState &s, model::DeviceId d, model::SemId sem) const {
    return s.sem[static_cast<size_t>(d) * semCount_ + sem];
  }
  bool started(const ControlState &s, model::DmaId k) const {
    const int32_t start = properties_.startPc(k);
    return start >= 0 && s.pc[dmas_[k].issuer] > start;
  }
  bool sideOpen(const ControlState &s, DmaSide side) const {
    return started(s, side.dma) &&
           (side.dst ? s.landed[side.dma] : s.sent[side.dma]) < chunks_[side.dma];
  }
  /// `--dma-order link`: every DMA started earlier on k's link has landed completely, so
  /// k's chunks may land (always true when k has no link predecessor).
  bool linkClear(const ControlState &s, model::DmaId k) const {
    const model::DmaId j = properties_.linkPredecessor(k);
    return j < 0 || s.landed[j] >= chunks_[j];
  }
  bool finished(const ControlState &s, model::DeviceId d) const {
    return s.pc[d] >= eventCount_[d];
  }
  bool allDevicesFinished(const ControlState &s) const;
  /// The invocation device d is inside at its pc, or -1 when outside.
  int32_t insideInvocation(const ControlState &s, model::DeviceId d) const {
    return properties_.invocationAt(d, s.pc[d]);
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
  /// For a DMA step: the index of the chunk it moves and the semaphore units that
  /// chunk carries on its side (Dma::sendUnits, Dma::landUnits).
  int32_t nextChunk(const ControlState &s, const report::ScheduleStep &step) const {
    return step.kind == report::ScheduleStep::Kind::Send ? s.sent[step.id] : s.landed[step.id];
  }
  int64_t nextChunkUnits(const ControlState &s, const report::ScheduleStep &step) const {
    const int32_t c = nextChunk(s, step);
    const std::vector<int64_t> &units =
        dmas_[step.id].units(step.kind == report::ScheduleStep::Kind::Land);
    return static_cast<size_t>(c) < units.size() ? units[c] : 0;
  }
  /// Applies an enabled step's control effects (docs/model.md section 3).
  void apply(ControlState &s, const report::ScheduleStep &step) const;
  /// Why `step` is not enabled in `s`, e.g. "device 1 waits for ready >= 1 but it is 0".
  std::string whyDisabled(const ControlState &s, const report::ScheduleStep &step) const;

  /// Whether obligation `o` is violated in `s`: its predicate (semantics/Obligations.h)
  /// holds there. For a step check, when its step runs from `s`; for Stuck, when `s` has
  /// no enabled step and o's device is at o's event.
  bool violated(const ControlState &s, ObligationIndex o) const;
  /// Whether fact `f` holds in `s`: the step table's meaning of each fact.
  bool holds(const ControlState &s, const Fact &f) const;
  /// Appends the obligations violated by taking `step` (enabled) from `s`, in the
  /// properties' fixed order.
  void violations(const ControlState &s, const report::ScheduleStep &step,
                  std::vector<ObligationIndex> &out) const;
  /// In a state with no enabled step: appends the Stuck obligation of every device
  /// that has not finished (a deadlock when there is any).
  void stuck(const ControlState &s, std::vector<ObligationIndex> &out) const;
  /// The witness text of a violated obligation with the values of `s` (the state the
  /// violating step runs from, or the deadlocked state), e.g. "device 1 leaves
  /// invocation 0 of the kernel with recv = 2".
  std::string describe(const ControlState &s, ObligationIndex o) const;
  /// What unfinished device d waits for at its next event in `s`, e.g. "device 1
  /// waits for ready >= 1 but it is 0" (one part of a deadlock's describe text).
  std::string describeBlocked(const ControlState &s, model::DeviceId d) const;

  /// A device step that commutes with every step of every other actor from `s` on and
  /// changes no check's outcome, so the search may take it alone (see Machine.cpp).
  /// `localCopies` adds the rules for local copies (a private DmaStart); `observers`
  /// the observer rules (any DmaStart, remote signals, stores whose conflicting DMAs
  /// cannot start first); each off only to measure it (docs/executor.md,
  /// docs/performance.md).
  bool isSafeStep(const ControlState &s, model::DeviceId d, bool localCopies = true,
                  bool observers = true) const;
  /// A DMA chunk that a blocked device needs before it can move, or (with
  /// `localCopies`) a chunk of a local copy that its device cannot observe before it
  /// runs, or (with `observers`) a chunk of any DMA that no step able to run before it
  /// observes (see Machine.cpp).
  bool isSafeDmaStep(const ControlState &s, const report::ScheduleStep &step,
                     bool localCopies = true, bool observers = true) const;

  /// Static bound on the value of semaphore s on device d (sum of all increments).
  int64_t semBound(model::DeviceId d, model::SemId s) const { return semBound_[d * semCount_ + s]; }

private:
  /// Every obligation's predicate, by obligation index (made once: checked at every step).
  std::vector<Predicate> predicates_;
  /// A copy on one device (docs/model.md: `Dma::local`, no send semaphore).
  bool isLocalCopy(const model::Dma &dma) const;
  /// The local-copy rules (see Machine.cpp).
  bool isSafeLocalStart(const ControlState &s, model::DeviceId d, model::DmaId k) const;
  bool isSafeLocalChunk(const ControlState &s, const report::ScheduleStep &step) const;
  /// The actor of a candidate step, which does not move until the step runs: a device
  /// (the step is its next event), or one side of a DMA (the step is its next chunk on
  /// that side; a send side also holds back the land chunks not yet sent).
  struct Frozen {
    enum class Kind { Device, Send, Land };
    Kind kind = Kind::Device;
    int32_t id = 0; ///< the device or the DMA
  };
  /// Whether device e, from `s`, cannot reach its event `limit` (nor any later one)
  /// while `frozen` does not move: one of e's events in [pc[e], limit) is a wait that
  /// needs more units than its semaphore can still receive without the frozen actor
  /// (supplyWithout), or a device barrier that the frozen device has not reached.
  /// True when limit is past e's last event and nothing blocks (nothing to reach).
  bool blockedBefore(const ControlState &s, const Frozen &frozen, model::DeviceId e,
                     int32_t limit) const;
  /// Units that can still be added to (e, x) in `s` on a path on which `frozen` does
  /// not move: its value, the remaining send chunks of DMAs e issues with x as send
  /// semaphore, the remaining land chunks of DMAs landing on e with x as receive
  /// semaphore, and the signals to (e, x) not yet run; without the frozen actor's
  /// contributions (its side's chunks, a send side's unsent lands, a frozen device's
  /// signals and the DMAs it has not started).
  int64_t supplyWithout(const ControlState &s, const Frozen &frozen, model::DeviceId e,
                        model::SemId x) const;
  /// Whether no device but the frozen one can run, before the frozen actor moves, one
  /// of `events` ((device, pc) pairs; sorted in place) not yet run, nor, when
  /// `positionOf` >= 0, an event of device positionOf that changes where or scopes
  /// (KernelEnter, KernelExit, ScopeEnter, ScopeExit).
  bool outOfReach(const ControlState &s, const Frozen &frozen,
                  std::vector<std::pair<model::DeviceId, int32_t>> &events,
                  model::DeviceId positionOf) const;
  /// Whether the open/closed status of DMA j's side, read by the Race obligation of
  /// device d's event pc, is the same whatever other actors do before d moves: closed
  /// (it stays closed), or not started and started only by d later or by a device that
  /// cannot reach its start before d moves.
  bool sideStable(const ControlState &s, model::DeviceId d, int32_t pc, model::DmaId j,
                  bool dst) const;
  /// The observer rules (see Machine.cpp, docs/executor.md "Remote DMAs and signals").
  bool isSafeObservedStart(const ControlState &s, model::DeviceId d, model::DmaId k) const;
  bool isSafeObservedSignal(const ControlState &s, model::DeviceId d,
                            const model::Signal &sig) const;
  bool isSafeObservedChunk(const ControlState &s, const report::ScheduleStep &step) const;
  /// The first event of device e at or after pc that changes where[e] or scopes[e], or
  /// INT32_MAX.
  int32_t nextPositionEvent(model::DeviceId e, int32_t pc) const;

  const model::Program &program_;
  const Properties &properties_;
  const std::vector<model::Dma> &dmas_;
  int32_t deviceCount_ = 0;
  int32_t dmaCount_ = 0;
  int32_t semCount_ = 0;
  std::vector<int32_t> chunks_;
  std::vector<int32_t> eventCount_;
  /// [device][scope] -> pc ranges (begin, end] in which the device is inside.
  std::vector<std::vector<std::vector<std::pair<int32_t, int32_t>>>> scopeRanges_;
  std::vector<int64_t> semBound_; ///< [device * semCount + sem]
  /// [device * semCount + sem]: who adds units to it (model::Program::increments, the
  /// definition the pre-check and semantics::MustOrder read too).
  std::vector<std::vector<model::Increment>> increments_;
  /// [device][scope]: some signal from another device, or some DMA, can reach a
  /// semaphore or buffer of this scope on this device (ScopeEnter is then not safe).
  std::vector<std::vector<std::vector<model::DmaId>>> scopeDmas_;
  std::vector<std::vector<bool>> scopeRemoteSignal_;
  std::vector<bool> scopeSharesSlots_; ///< per scope
  /// [dma][side (0 source, 1 destination)]: the (device, pc) of every Race obligation
  /// that reads whether that side is open.
  std::vector<std::array<std::vector<std::pair<model::DeviceId, int32_t>>, 2>> sideReaders_;
  /// Per device: the pcs of its KernelEnter, KernelExit, ScopeEnter and ScopeExit
  /// events, ascending.
  std::vector<std::vector<int32_t>> positionEvents_;
};

/// A program with its properties and step table, owned together. They refer to each
/// other, so an Instance is neither copied nor moved (hold it by unique_ptr).
class Instance {
public:
  /// `program` must pass model::verifyProgram. `symmetry`: look for rotations that map
  /// the program onto itself (findSymmetry) and, if there are any, reduce the race
  /// obligations by them (Properties). `stop` (may be null): a stop request made while
  /// the property list is built leaves it empty (Properties::complete), and the
  /// instance must then not be checked.
  explicit Instance(model::Program program, bool symmetry = false,
                    const support::StopToken *stop = nullptr)
      : program_(std::move(program)), symmetry_(symmetry ? findSymmetry(program_) : std::nullopt),
        properties_(program_, symmetry_ ? &*symmetry_ : nullptr, stop),
        machine_(program_, properties_) {}
  Instance(const Instance &) = delete;
  Instance &operator=(const Instance &) = delete;

  const model::Program &program() const { return program_; }
  const Properties &properties() const { return properties_; }
  const Machine &machine() const { return machine_; }

private:
  model::Program program_;
  std::optional<Symmetry> symmetry_;
  Properties properties_;
  Machine machine_;
};

} // namespace dkv::semantics
