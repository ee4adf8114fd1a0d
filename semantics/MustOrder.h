// The static "must happen before" relation of one instance, over the steps of
// docs/model.md section 3 (device events, DMA send and land chunks): the one ordering
// analysis of dkv (docs/design.md "One ordering analysis"). It reads who adds units to
// which semaphore from model::Program::increments, the definition that the static
// pre-check and explore's reduction (semantics::Machine) read too, and answers:
// - the SMT encoder (smt/Encoding.cpp): obligations that can never be violated, the
//   derived must-precede edges it asserts as redundant constraints, steps that can
//   never run, static deadlock freedom and exit semaphores that are always 0;
// - the Promela emitter (promela/Emit.cpp): which events run after a DMA chunk in every
//   run (after, before), to fuse the chunk into the step that enables it.
#pragma once

#include "report/Finding.h"
#include "semantics/Obligations.h"
#include "semantics/Properties.h"
#include "support/Stop.h"

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

namespace dkv::semantics {

/// The source of an ordering question (MustOrder::after): an event of a device, or a
/// DMA's chunk on one side (from `chunk` on: every later chunk of that side, and for a
/// send side every land chunk from `chunk` on, needs it).
struct OrderSource {
  enum class Kind { Event, Send, Land };
  Kind kind = Kind::Event;
  model::DeviceId device = 0; ///< Event
  int32_t pc = 0;             ///< Event
  model::DmaId dma = 0;       ///< Send, Land
  int32_t chunk = 0;          ///< Send, Land
};

class MustOrder {
public:
  /// Numbers the steps, indexes the increments and waits and builds the base edges
  /// (linear in the instance). The relation is program order, each DMA's order (its
  /// chunks after its start and in order, a land chunk after its send chunk and the
  /// previous land chunk; with `--dma-order link`, its first land chunk after the last
  /// one of its link predecessor) and the device barriers. The properties must outlive
  /// it.
  explicit MustOrder(const Properties &properties, const support::StopToken *stop = nullptr);

  /// The steps: every device's events (device by device, in program order), then each
  /// started DMA's chunks (send c, then land c). A DMA never started has no step.
  int32_t stepCount() const { return static_cast<int32_t>(steps_.size()); }
  const report::ScheduleStep &step(int32_t s) const { return steps_[s]; }
  int32_t eventStep(model::DeviceId d, int32_t pc) const { return eventStep_[d][pc]; }
  const std::vector<int32_t> &eventSteps(model::DeviceId d) const { return eventStep_[d]; }
  const std::vector<int32_t> &sendSteps(model::DmaId k) const { return sendStep_[k]; }
  const std::vector<int32_t> &landSteps(model::DmaId k) const { return landStep_[k]; }
  /// The base edges other than the barriers', as (before, after): program order device
  /// by device, then each DMA's (its first send chunk after its start, each send chunk
  /// after the previous one and before its land chunk, each land chunk after the
  /// previous one; with link order, its first land chunk after its link predecessor's
  /// last), DMA by DMA. The SMT encoding states each as a constraint; the barriers it
  /// encodes with one time per invocation instead (smt/Encoding.cpp).
  const std::vector<std::pair<int32_t, int32_t>> &orderEdges() const { return orderEdges_; }

  /// An increment of a semaphore as a step: a Signal event, a send chunk or a land chunk
  /// with positive units (model::Program::increments, in its order).
  struct Increment {
    int32_t step = 0;
    int64_t units = 0;
  };
  const std::vector<Increment> &increments(model::DeviceId d, model::SemId s) const {
    return increments_[static_cast<size_t>(d) * semCount_ + s];
  }
  /// Each SemWait with a positive amount, device by device in program order, with W:
  /// the amounts of its device's waits on its semaphore up to and including it.
  struct Wait {
    model::DeviceId device = 0;
    model::SemId sem = 0;
    int32_t step = 0;
    int64_t need = 0;
  };
  const std::vector<Wait> &waits() const { return waits_; }
  /// Sum of the amounts of d's waits on s at events before pc.
  int64_t waitsBefore(model::DeviceId d, int32_t pc, model::SemId s) const;

  /// Closes the relation: the semaphore rule (MustOrder.cpp) to a fixpoint, then
  /// transitively, with the steps that can never run. Skipped above kMaxClosedSteps
  /// steps (the closure is a bitset per step), and left incomplete when the stop token
  /// is requested; then the queries below know nothing (every one answers false).
  void close();
  static constexpr int32_t kMaxClosedSteps = 30000;
  bool closed() const { return !reach_.empty(); }
  /// a ->+ b: whenever b runs, a has run before it.
  bool mustPrecede(int32_t a, int32_t b) const {
    return !reach_.empty() && (reach_[static_cast<size_t>(b) * words_ + a / 64] >> (a % 64)) & 1;
  }
  /// Step s can never run (on a cycle of the relation, or after such a step).
  bool dead(int32_t s) const { return !dead_.empty() && dead_[s]; }
  bool anyDead() const;
  /// The edges (increment, wait) the semaphore rule derived.
  const std::vector<std::pair<int32_t, int32_t>> &semaphoreEdges() const { return semEdges_; }
  /// No run can deadlock, by the relation alone.
  bool deadlockFree() const;
  /// An obligation whose predicate is "a side of DMA k is open" (a race, an exit with
  /// k's side open) that the relation orders: it is never violated.
  bool neverViolated(const Obligation &o) const;
  /// The semaphore of an ExitSemaphore obligation is 0 in every run.
  bool exitSemaphoreZero(const Obligation &o) const;

  /// Per device f the first pc whose event cannot run before `source` has run, in any
  /// run (the device's event count when there is none): events at or after it happen
  /// after the source. A least fixpoint over the base edges and the semaphore rule (see
  /// MustOrder.cpp); it does not need close(). For an Event source its own device's
  /// threshold is at most its pc.
  std::vector<int32_t> after(const OrderSource &source) const;
  /// Whether event (e, pc) happens before event (d, at) in every run: d cannot run `at`
  /// before e has run pc (cached per source event).
  bool before(model::DeviceId e, int32_t pc, model::DeviceId d, int32_t at) const;

private:
  void closeTransitively();

  const support::StopToken *stop_ = nullptr;
  const Properties &props_;
  const model::Program &program_;
  size_t semCount_ = 0;
  std::vector<report::ScheduleStep> steps_;
  std::vector<std::vector<int32_t>> eventStep_;    ///< [device][pc]
  std::vector<std::vector<int32_t>> sendStep_;     ///< [dma][chunk]; empty if never started
  std::vector<std::vector<int32_t>> landStep_;     ///< [dma][chunk]
  std::vector<std::vector<Increment>> increments_; ///< [device * semCount + sem]
  std::vector<Wait> waits_;
  std::vector<std::pair<int32_t, int32_t>> orderEdges_; ///< see orderEdges()
  std::vector<std::vector<int32_t>> preds_;             ///< [step]: must-precede predecessors
  std::vector<std::vector<int32_t>> succs_;             ///< [step]: the base edges reversed (after)
  /// For after(): the increment a step makes, as (device * semCount + sem, units), or
  /// (-1, 0); the positive units of every key; each key's waits by need, largest first.
  std::vector<std::pair<int32_t, int64_t>> stepIncrement_;
  std::vector<int64_t> supplyTotal_;
  std::vector<std::vector<const Wait *>> waitsByNeed_;
  std::vector<std::pair<int32_t, int32_t>> semEdges_;
  std::vector<uint64_t> reach_; ///< [step * words_]: bitset of a ->+ step
  size_t words_ = 0;
  std::vector<bool> dead_;
  mutable std::map<std::pair<model::DeviceId, int32_t>, std::vector<int32_t>> eventCache_;
};

} // namespace dkv::semantics
