// Greedy closures of the step table, and the exact decision of every property from a
// few of them (docs/closure.md). The step table of docs/model.md is persistent: an
// actor's next step (a device's next event, a DMA's next send or land chunk) is fixed,
// and once enabled it stays enabled until that actor takes it, because every other
// actor's step only adds semaphore units, barrier arrivals, sends and landings. So the
// states reachable under caps on some actors' step counts have a greatest element,
// which any greedy run reaches, and each check of docs/model.md section 4 is decided by
// the greatest states of one or two cap sets (Closure.cpp states and proves each rule).
#pragma once

#include "report/Finding.h"
#include "semantics/Machine.h"
#include "semantics/Witness.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace dkv::semantics {

/// An actor of the step table: device d is actor d, the sends of DMA k are actor
/// devices + k, its lands actor devices + dmas + k (the counters of a count vector).
struct Actors {
  int32_t devices = 0;
  int32_t dmas = 0;
  int32_t count() const { return devices + 2 * dmas; }
  int32_t device(model::DeviceId d) const { return d; }
  int32_t send(model::DmaId k) const { return devices + k; }
  int32_t land(model::DmaId k) const { return devices + dmas + k; }
  /// The actor that takes `step`.
  int32_t of(const report::ScheduleStep &step) const;
};

/// One greedy run of the step table under caps: each actor may take at most its cap of
/// steps (a device its first `cap` events, a DMA `cap` sends or lands). run() takes
/// enabled steps of actors below their caps until none is left; by persistence the
/// state it ends in is the greatest reachable state within the caps, whatever order the
/// steps were taken in. Caps may be raised between runs (a sweep): the next run goes on
/// from the current state.
class Closure {
public:
  explicit Closure(const Machine &machine);

  /// The initial state, every cap lifted, the recorded schedule cleared.
  void reset();
  /// Device d takes at most `events` events. Raising a cap wakes the device.
  void capDevice(model::DeviceId d, int32_t events);
  void capSends(model::DmaId k, int32_t chunks);
  void capLands(model::DmaId k, int32_t chunks);
  /// Device d and the DMAs it issues are complete from the start: every event of d has
  /// run and every chunk of its DMAs has been sent and has landed, their units added
  /// (not a reachable state: the over-approximation of the window argument,
  /// docs/parametric.md). Right after reset().
  void assumeDone(model::DeviceId d);
  /// Semaphore `sem` on device d holds more units than any run can take (kSaturated):
  /// every wait on it passes. The over-approximation of an actor whose increments are
  /// not counted (docs/parametric.md "Races for every N"). Right after reset().
  void saturate(model::DeviceId d, model::SemId sem);
  /// Device d never runs its event `pc` or any later one; once it has run its first
  /// `pc` events, every semaphore that those later events and the DMAs they start would
  /// add to is saturated and the device counts as arrived at its later barriers (the
  /// device "jumps" to its end: an over-approximation). Right after reset().
  void limitDevice(model::DeviceId d, int32_t pc);
  static constexpr int64_t kSaturated = int64_t{1} << 60;
  /// The current state (right after reset() and what prepared it: caps, assumeDone)
  /// becomes the base that restoreBase() returns to, under the name `owner`.
  void saveBase(const void *owner);
  /// Whether the base is `owner`'s; restoreBase() is reset() followed by what prepared
  /// the base, without redoing it (a window's outside devices are complete in every
  /// closure of its decision: done once, copied after).
  bool hasBase(const void *owner) const { return baseOwner_ == owner && owner != nullptr; }
  void restoreBase();
  /// Record every step taken (schedule()); off by default.
  void record(bool on) { record_ = on; }
  /// Stop the next run() as soon as device d has run `events` events (and every other
  /// device watched has reached its mark): a question "does d get that far?" is
  /// answered yes then, the greatest state being at least the current one. The state
  /// is then not the greatest one. Cleared by reset().
  void watch(model::DeviceId d, int32_t events);
  void run();

  const Machine &machine() const { return m_; }
  const ControlState &state() const { return run_.state; }
  const report::Schedule &schedule() const { return schedule_; }
  /// Steps taken since construction (the work of every run).
  int64_t work() const { return work_; }
  /// Whether the current state has an enabled step below the caps (false after run()).
  bool stalled() const;

private:
  /// A device event as the closure needs it (the variant visited once, up front).
  struct Op {
    enum class Kind : uint8_t { Other, Wait, Barrier, Signal, Start };
    Kind kind = Kind::Other;
    int32_t a = 0;      ///< Wait: the semaphore; Barrier: the invocation; Signal: the target;
                        ///< Start: the DMA
    int32_t b = 0;      ///< Signal: the semaphore
    int64_t amount = 0; ///< Wait, Signal
  };
  /// A DMA as the closure needs it, packed (the model's Dma is large and scattered).
  struct DmaInfo {
    int32_t issuer = 0, target = 0;
    int32_t sendSem = -1, recvSem = 0; ///< sendSem -1: none (a local copy)
    int32_t start = -1;                ///< its start's pc on the issuer, -1: never
    int32_t chunks = 1;
    int32_t units = 0; ///< index of its send chunk 0 in units_; land chunk 0 at units + chunks
  };
  void push(int32_t actor);
  void advanceDevice(model::DeviceId d);
  void advanceSends(model::DmaId k);
  void advanceLands(model::DmaId k);
  void added(model::DeviceId d, model::SemId sem);
  void take(const report::ScheduleStep &step);

  const Machine &m_;
  const model::Program &program_;
  Actors actors_;
  std::vector<std::vector<Op>> ops_; ///< [device][pc]
  std::vector<DmaInfo> dmas_;
  std::vector<int64_t> units_; ///< send then land chunk units of every DMA, DmaInfo::units on
  /// [device]: (pc, invocation) of its barriers, by pc
  std::vector<std::vector<std::pair<int32_t, int32_t>>> barrierAt_;
  /// What a run changes: the state and the bookkeeping reset() sets (and saveBase()
  /// keeps, to be copied back by restoreBase()).
  struct Run {
    ControlState state;
    std::vector<int32_t> cap;   ///< per actor
    std::vector<int32_t> queue; ///< actors to advance
    std::vector<bool> queued;
    std::vector<int32_t> blockedOn;      ///< per device: the semaphore it waits for, or -1
    std::vector<int32_t> barrierBlocked; ///< per device: invocation, or -1
    std::vector<int32_t> arrived;        ///< per invocation
    std::vector<std::vector<model::DeviceId>> barrierWaiters; ///< per invocation
    std::vector<size_t> nextBarrier; ///< per device: its next barrier in barrierAt_
    std::vector<int32_t> limit;      ///< per device: limitDevice's pc (its event count: none)
    std::vector<bool> jumped;        ///< per device: its limit reached and applied
  };
  /// Device d has reached its limit: saturate what the rest of its program adds to.
  void jump(model::DeviceId d);
  /// Device d counts as arrived at its barriers not reached yet (it is complete, or jumped).
  void arriveAtLaterBarriers(model::DeviceId d);
  Run run_, base_;
  std::vector<int32_t> required_;                   ///< per invocation: the devices it waits for
  std::vector<std::vector<model::DmaId>> linkNext_; ///< per DMA: DMAs whose link predecessor it is
  bool record_ = false;
  std::vector<int32_t> watch_; ///< per device: the events it must reach, or -1
  int32_t unmet_ = 0;          ///< watched devices not there yet
  bool stop_ = false;
  report::Schedule schedule_;
  int64_t work_ = 0;
  const void *baseOwner_ = nullptr;
};

/// What a sub-run must keep: actor -> at least this many of its steps.
using Needs = std::vector<std::pair<int32_t, int32_t>>;

/// The smallest sub-run of `run` (a schedule from the initial state) that keeps the
/// needed steps and every step they depend on in it: a device event its predecessor
/// and, for a wait, the earliest increments of its semaphore in `run` that cover its
/// device's waits on it up to it, for a barrier every device's event before its
/// barrier; a send chunk its start and earlier sends; a land chunk its send, earlier
/// lands and (--dma-order link) its link predecessor's landing. The result keeps a
/// prefix of each actor's steps in `run`'s order and is itself a run (Closure.cpp).
report::Schedule sliceRun(const Machine &machine, const report::Schedule &run, const Needs &needs);

struct ClosureOptions {
  /// The time limit: between closures; what is not decided by then leaves the result
  /// incomplete (never verified).
  double timeoutSeconds = 600;
  /// Threads for the independent closures (`-j`); the result does not depend on it.
  unsigned jobs = 1;
  /// Streaming, progress and early stop; may be null.
  const EngineEvents *events = nullptr;
  /// Decide this property only (`dkv check --property ID`); -1: every property.
  PropertyIndex only = -1;
  /// Windows first (`--window`, docs/closure.md "Windows"): on a rotation-symmetric
  /// instance, decide the representatives' checks with the devices farther than R
  /// rotation steps held (an under-approximation, whose witnesses are runs of the whole
  /// instance) and complete (an over-approximation), for each R of `windowRadii`, and
  /// leave only what neither decides to the whole instance. Auto: from kWindowFrom
  /// devices on.
  enum class Window { Auto, On, Off };
  Window window = Window::Auto;
  static constexpr int32_t kWindowFrom = 32;
  std::vector<int32_t> windowRadii = {1, 2, 8};
};

/// The first event of device d that can block (a wait of a positive amount or a device
/// barrier), its event count if none: the devices outside a window are held there.
int32_t firstBlocking(const Machine &machine, model::DeviceId d, int32_t from = 0);
/// Per device, the fewest rotation steps (either way, on any rotated axis) from a
/// representative device of the instance's symmetry; -1 without a symmetry.
std::vector<int32_t> symmetryDistance(const Machine &machine);

/// The window argument (docs/parametric.md) on one instance: the checks of the
/// representative device 0 (the instance must be reduced by a rotation symmetry),
/// decided twice, once with every device outside `inside` held at its first `hold`
/// events (an under-approximation: a cap set of the instance itself) and once with those
/// devices complete from the start (an over-approximation, Closure::assumeDone). A
/// check is violated when both its parts hold under the first, not violated when one
/// fails under the second; otherwise undecided. Deadlock: device 0 finishes under the
/// first (none) or not under the second (one).
struct WindowDecision {
  bool decided = true;
  std::vector<PropertyIndex> violated; ///< by property index, each once
  std::string undecided;               ///< the first undecided check, when not decided
  int64_t checks = 0;                  ///< checks of device 0 decided
};
WindowDecision decideWindow(const Machine &machine, const std::vector<bool> &inside,
                            const std::vector<int32_t> &hold);

/// The lockstep argument (docs/parametric.md "Grids that grow with N") on one instance
/// reduced by a rotation symmetry. `steps[d][p]` is device d's first event of grid step
/// p of the growing axis (p = 0 .. G, `steps[d][G]` its event count). U_p is the state in
/// which every device has run its steps before p and every DMA started there has landed.
/// For each p: U_p is the greatest state under the caps steps[.][p] (checked), device 0's
/// semaphore values there are recorded, and from U_p device 0 must complete step p while
/// the devices farther than `radius` rotation steps run only up to their first event of
/// step p that can block (a cap set of the instance: a lower bound).
struct LockstepDecision {
  bool complete = true;
  bool stopped = false;    ///< `stop` ended it (not complete, and says nothing)
  int32_t failedStep = -1; ///< the first step that did not complete (or U_p not reached)
  std::string reason;      ///< why, when not complete
  /// [p]: device 0's semaphore values (by SemId) at U_p, p = 0 .. G (as far as reached).
  std::vector<std::vector<int64_t>> values;
};
/// `stop` (may be empty) is asked before each step: true ends the decision incomplete and
/// `stopped`.
LockstepDecision decideLockstep(const Machine &machine,
                                const std::vector<std::vector<int32_t>> &steps, int32_t radius,
                                const std::function<bool()> &stop = {});

/// The box argument (docs/parametric.md "Races for every N") on one instance of a kernel
/// of the fragment UG: for each anchor step s, the closures of the instance modified so
/// that every device farther than `radius` rotation steps from device 0 jumps to its end
/// at once (Closure::limitDevice at 0: whatever it would add to is saturated) and every
/// device of the window jumps when it reaches the end of step s + `depth` (an
/// over-approximation whose restriction to the box does not depend on N). `steps` as for
/// decideLockstep. It decides:
/// - the near checks of device 0: each access of device 0 in step s (a store's region, a
///   started DMA's source or destination) against each side of a DMA started in steps
///   s - depth .. s + depth by a window device on the same buffer of the same device,
///   one of them a write, where `mayOverlap` says the two may overlap at the N argued
///   for; the DMAs open at device 0's exit started in the last depth + 1 steps; the lands
///   and signals reaching device 0 in the first or last depth + 1 steps (before it
///   enters, after it exits). Each must be ordered: a part of its check fails under the
///   bound. `open` names the first that is not;
/// - the settled facts that order the pairs farther apart than `depth` steps (`ahead`,
///   `behind`, `dmaBehind`), and from them the far lands, signals and exits;
/// - the race pairs of every distance (`pairs`), for the driver's far-pair argument.
/// The grid step of event pc of a device whose steps start at `starts` (as decideLockstep's
/// `steps[d]`); the events after the grid belong to the last step.
int32_t stepOfEvent(const std::vector<int32_t> &starts, int32_t pc);

struct BoxInput {
  const std::vector<std::vector<int32_t>> *steps = nullptr;
  int32_t radius = 1;
  int32_t depth = 1;
  /// The devices within `reach` rotation steps of device 0 whose facts are asked.
  int32_t reach = 1;
  /// Access `access` of device 0's event pc (Obligation::access) and DMA k's destination
  /// (dst) or source side may overlap at some N the argument is for.
  std::function<bool(int32_t pc, int32_t access, model::DmaId k, bool dst)> mayOverlap;
  std::function<bool()> stop;
};
struct BoxPair {
  int32_t pc = 0;     ///< device 0's event
  int32_t access = 0; ///< Obligation::access
  model::DmaId dma = 0;
  bool dst = false; ///< the DMA's destination side (else its source)
  int32_t step = 0, dmaStep = 0;
};
struct BoxDecision {
  bool complete = true;
  bool stopped = false;
  std::string open; ///< the first check not ordered under the bound, when not complete
  /// [s][d]: with device 0 capped at the end of step s, device d (within reach) does not
  /// get past the end of step s + depth (so it starts nothing of a later step before
  /// device 0 ends step s).
  std::vector<std::vector<char>> ahead;
  /// [t][d]: with device d capped at the end of step t, device 0 does not get past the end
  /// of step t + depth.
  std::vector<std::vector<char>> behind;
  /// [k]: with DMA k (started by a device within reach) not landed (`dmaBehindLand`), or
  /// not sent (`dmaBehindSend`), device 0 does not get past the end of step t + depth, t
  /// the step of k's start (1: held, 0: not, -1: not asked).
  std::vector<int8_t> dmaBehindLand, dmaBehindSend;
  std::vector<int32_t> dmaStep; ///< [k]: the step of k's start on its issuer (-1: never)
  std::vector<BoxPair> pairs;   ///< every race pair of device 0 with a window DMA
  int64_t checks = 0;           ///< near checks decided
  int64_t closures = 0;
};
BoxDecision decideBoxes(const Machine &machine, const BoxInput &input);

/// `dkv check --engine closure`: decides every obligation of the machine's properties
/// exactly with greedy closures (docs/closure.md): a deadlock from the one greatest
/// state, every other check from the greatest states under caps on the device it is
/// checked on and on the DMA or device it reads. Each violated property gets a
/// witness: the greedy run to the greatest state of its obligation's joint caps, cut to
/// the steps the violation depends on (sliceRun), then the violating step. Never
/// throws; deterministic for every `jobs`.
EngineResult decideByClosure(const Machine &machine, const ClosureOptions &options);

} // namespace dkv::semantics
