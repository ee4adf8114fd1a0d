// The step table of docs/model.md as code: the control state (program counters,
// semaphore values, DMA progress), which steps are enabled, their effects, and which
// obligations of the property list each step violates. Every engine that executes the
// model (the executor, the exhaustive search, the replay of any engine's witness)
// uses this one implementation; the Promela emitter translates the same table.
#pragma once

#include "model/Model.h"
#include "report/Finding.h"
#include "semantics/Properties.h"

#include <array>
#include <cstdint>
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
  /// chunk carries (Dma::chunkUnits).
  int32_t nextChunk(const ControlState &s, const report::ScheduleStep &step) const {
    return step.kind == report::ScheduleStep::Kind::Send ? s.sent[step.id] : s.landed[step.id];
  }
  int64_t nextChunkUnits(const ControlState &s, const report::ScheduleStep &step) const {
    const int32_t c = nextChunk(s, step);
    const std::vector<int64_t> &units = dmas_[step.id].chunkUnits;
    return static_cast<size_t>(c) < units.size() ? units[c] : 0;
  }
  /// Applies an enabled step's control effects (docs/model.md section 3).
  void apply(ControlState &s, const report::ScheduleStep &step) const;
  /// Why `step` is not enabled in `s`, e.g. "device 1 waits for ready >= 1 but it is 0".
  std::string whyDisabled(const ControlState &s, const report::ScheduleStep &step) const;

  /// Whether obligation `o` is violated in `s`: for a step check, when its step runs
  /// from `s`; for Stuck, when `s` has no enabled step and o's device is at o's event.
  bool violated(const ControlState &s, ObligationIndex o) const;
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
  /// `localCopies` adds the rules for local copies (a private DmaStart); off only to
  /// measure them (docs/executor.md, docs/performance.md).
  bool isSafeStep(const ControlState &s, model::DeviceId d, bool localCopies = true) const;
  /// A DMA chunk that a blocked device needs before it can move, or (with
  /// `localCopies`) a chunk of a local copy that its device cannot observe before it
  /// runs (see Machine.cpp).
  bool isSafeDmaStep(const ControlState &s, const report::ScheduleStep &step,
                     bool localCopies = true) const;

  /// Static bound on the value of semaphore s on device d (sum of all increments).
  int64_t semBound(model::DeviceId d, model::SemId s) const { return semBound_[d * semCount_ + s]; }

private:
  /// A copy on one device (docs/model.md: `Dma::local`, no send semaphore).
  bool isLocalCopy(const model::Dma &dma) const;
  /// The local-copy rules (see Machine.cpp).
  bool isSafeLocalStart(const ControlState &s, model::DeviceId d, model::DmaId k) const;
  bool isSafeLocalChunk(const ControlState &s, const report::ScheduleStep &step) const;
  /// Whether device d, from `s`, cannot run any event at which `relevant(pc)` holds
  /// before the next chunk of local copy k on side `land` runs: a wait of d on some
  /// semaphore x lies before every such event, and passing it needs more units than x
  /// can still receive without that chunk and k's later land chunks.
  template <typename Relevant>
  bool blockedBefore(const ControlState &s, model::DmaId k, bool land,
                     const Relevant &relevant) const;
  /// Units that can still reach (d, x) in `s` from signals not yet run.
  int64_t pendingSignals(const ControlState &s, model::DeviceId d, model::SemId x) const;

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
  std::vector<int64_t> semBound_;                               ///< [device * semCount + sem]
  std::vector<std::vector<model::DmaId>> issuedBy_, targeting_; ///< per device
  /// [device][scope]: some signal from another device, or some DMA, can reach a
  /// semaphore or buffer of this scope on this device (ScopeEnter is then not safe).
  std::vector<std::vector<std::vector<model::DmaId>>> scopeDmas_;
  std::vector<std::vector<bool>> scopeRemoteSignal_;
  std::vector<bool> scopeSharesSlots_; ///< per scope
  /// [target * semCount + sem]: every Signal to it, as (device, pc, amount).
  struct SignalAt {
    model::DeviceId device;
    int32_t pc;
    int64_t amount;
  };
  std::vector<std::vector<SignalAt>> signalsTo_;
  /// [dma][side (0 source, 1 destination)]: the (device, pc) of every Race obligation
  /// that reads whether that side is open.
  std::vector<std::array<std::vector<std::pair<model::DeviceId, int32_t>>, 2>> sideReaders_;
};

/// A program with its properties and step table, owned together. They refer to each
/// other, so an Instance is neither copied nor moved (hold it by unique_ptr).
class Instance {
public:
  /// `program` must pass model::verifyProgram.
  explicit Instance(model::Program program)
      : program_(std::move(program)), properties_(program_), machine_(program_, properties_) {}
  Instance(const Instance &) = delete;
  Instance &operator=(const Instance &) = delete;

  const model::Program &program() const { return program_; }
  const Properties &properties() const { return properties_; }
  const Machine &machine() const { return machine_; }

private:
  model::Program program_;
  Properties properties_;
  Machine machine_;
};

} // namespace dkv::semantics
