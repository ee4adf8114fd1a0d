// A static happens-before relation of one instance, by counting semaphore units: which
// events of every device run after a given step in every run. The Promela emitter uses it
// to fuse a DMA chunk into the step that enables it when every step that observes the
// chunk is ordered with it (docs/promela.md, "Fused DMA chunks").
#pragma once

#include "semantics/Properties.h"

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

namespace dkv::semantics {

/// The source of an ordering question: an event of a device, or a DMA's chunk on one
/// side (from `chunk` on: every later chunk of that side, and for a send side every land
/// chunk from `chunk` on, needs it).
struct OrderSource {
  enum class Kind { Event, Send, Land };
  Kind kind = Kind::Event;
  model::DeviceId device = 0; ///< Event
  int32_t pc = 0;             ///< Event
  model::DmaId dma = 0;       ///< Send, Land
  int32_t chunk = 0;          ///< Send, Land
};

/// Computed once per instance; answers are cached. The program and properties must
/// outlive it.
class StaticOrder {
public:
  explicit StaticOrder(const Properties &properties);

  /// Per device f the first pc whose event cannot run before `source` has run, in any
  /// run (the device's event count when there is none): events at or after it happen
  /// after the source. Computed as a least fixpoint from "nothing is after the source"
  /// (see StaticOrder.cpp): a wait is after the source when the waits of its device on
  /// its semaphore up to it need more units than every step not after the source can
  /// ever add; a device barrier is after it when some device cannot reach its barrier
  /// before it. For an Event source its own device's threshold is at most its pc.
  std::vector<int32_t> after(const OrderSource &source) const;
  /// Whether event (e, pc) happens before event (d, at) in every run: d cannot run `at`
  /// before e has run pc (cached per source event).
  bool before(model::DeviceId e, int32_t pc, model::DeviceId d, int32_t at) const;

private:
  /// Units that can ever be added to (f, x) by the steps not after the source, given
  /// the thresholds `h`.
  int64_t supply(const OrderSource &source, const std::vector<int32_t> &h, model::DeviceId f,
                 model::SemId x) const;

  const Properties &properties_;
  const model::Program &program_;
  std::vector<std::vector<model::DmaId>> issuedBy_, targeting_; ///< per device
  struct SignalAt {
    model::DeviceId device;
    int32_t pc;
    int64_t amount;
  };
  std::vector<std::vector<SignalAt>> signalsTo_; ///< [device * sems + sem]
  mutable std::map<std::pair<model::DeviceId, int32_t>, std::vector<int32_t>> eventCache_;
};

} // namespace dkv::semantics
