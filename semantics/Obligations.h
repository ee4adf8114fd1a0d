// The obligations of docs/model.md section 4 as predicates over a small set of state
// facts, defined once: the exhaustive search evaluates them (Machine::violated), the
// Promela emitter prints them as asserts, the Z3 encoder encodes them. Each engine
// implements the facts; no engine knows an obligation kind's meaning of its own.
#pragma once

#include "semantics/Properties.h"

#include <cstdint>
#include <vector>

namespace dkv::semantics {

/// One fact about a state of the step table (docs/model.md).
struct Fact {
  enum class Kind {
    SideOpen,   ///< DMA `dma`'s destination (`dst`) or source side is open: it started and
                ///< its last land (send) chunk has not run
    SemNonZero, ///< semaphore `sem` on `device` is non-zero
    /// `device` has entered invocation `first` and not left invocation `last` (inside
    /// invocation `first` when first == last); a function of its pc
    Within,
    InScope, ///< `device` is inside run_scoped block `scope`; a function of its pc
    Stuck,   ///< no step is enabled, and `device` is blocked at its event `pc`
  };
  Kind kind = Kind::SideOpen;
  model::DmaId dma = -1;
  bool dst = false;
  model::DeviceId device = -1;
  model::SemId sem = -1;
  int32_t first = 0, last = 0;
  model::ScopeId scope = model::kKernelScope;
  int32_t pc = -1;

  /// Whether the fact is a function of `device`'s pc alone (Within, InScope).
  bool readsOnlyPc() const { return kind == Kind::Within || kind == Kind::InScope; }
};

/// A fact or its negation.
struct Literal {
  Fact fact;
  bool negated = false;
};

/// An obligation is violated in a state iff every literal of its predicate holds there
/// (a conjunction is enough for every kind of docs/model.md section 4).
struct Predicate {
  std::vector<Literal> all;
};

/// The predicate of obligation `o`: the one definition of each obligation kind. Adding a
/// kind is one case here (and its wording in Properties and the witness texts); every
/// engine then checks it through the facts it already implements.
Predicate violation(const Obligation &o);

/// Whether `p` has a literal of fact kind `kind` for which `match(fact)` holds (what a
/// predicate reads: the observers of a step are the checks that read what it changes).
template <typename Match> bool reads(const Predicate &p, Fact::Kind kind, Match match) {
  for (const Literal &l : p.all)
    if (l.fact.kind == kind && match(l.fact))
      return true;
  return false;
}

/// Where an obligation is checked: at the event (device, pc) it belongs to, at every
/// land chunk of its DMA (an obligation without an event, pc -1), or in a state without
/// an enabled step (a Stuck fact).
enum class CheckedAt { Event, Land, Deadlock };
CheckedAt checkedAt(const Obligation &o);

} // namespace dkv::semantics
