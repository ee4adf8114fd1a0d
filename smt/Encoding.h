// The partial-order encoding of the runs of one instance (docs/smt.md): a Boolean
// "executed" and a real position per step, the constraints that make the executed set
// a prefix of a run of docs/model.md, and per property the condition that one more
// step (or no step, for a deadlock) violates it. Internal to dkv_smt.
#pragma once

#include "report/Finding.h"
#include "semantics/Machine.h"
#include "semantics/MustOrder.h"
#include "semantics/Obligations.h"
#include "semantics/Properties.h"
#include "support/Stop.h"

#include <z3++.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dkv::smt {

/// One disjunct of a property's query: obligation `obligation` is violated by taking
/// `step` after the executed prefix (no step: a deadlock after it).
struct Check {
  semantics::ObligationIndex obligation = 0;
  std::optional<report::ScheduleStep> step;
  z3::expr condition;
};

class Encoder {
public:
  /// `analyse`: run the static happens-before analysis (SmtOptions::staticAnalysis).
  /// `stop`: polled while encoding; once it is requested the encoder returns early,
  /// incomplete, and must not be queried (the engine checks the token after it).
  Encoder(z3::context &ctx, const semantics::Machine &machine, bool analyse = true,
          const support::StopToken *stop = nullptr);

  /// The constraints every query shares: the executed steps with their positions form
  /// a prefix of a run.
  const z3::expr_vector &base() const { return base_; }
  /// The disjuncts of property p's query (built on first use).
  const std::vector<Check> &checks(semantics::PropertyIndex p);
  /// The disjunction of checks(p).
  z3::expr query(semantics::PropertyIndex p);
  /// The executed steps of `model` in position order (waits first among equal
  /// positions, see Encoding.cpp), then `last` when given.
  report::Schedule schedule(const z3::model &model,
                            const std::optional<report::ScheduleStep> &last) const;

  size_t stepCount() const { return steps_.size(); }
  /// Obligations left out of the queries because the static happens-before orders
  /// them (semantics::MustOrder::neverViolated).
  int64_t staticallyOrdered() const { return staticallyOrdered_; }
  /// Must-precede edges the static analysis derived from semaphore waits (each also
  /// asserted as a redundant constraint).
  int64_t derivedEdges() const { return derivedEdges_; }
  int32_t countingForm() const { return countingForm_; }
  int32_t sumForm() const { return sumForm_; }
  /// The form of each (device, semaphore) pair with waits, by semaphore then device
  /// (docs/smt.md "Semaphore waits").
  const std::vector<report::SemaphoreForm> &semaphoreForms() const { return forms_; }
  /// Comments for the SMT-LIB2 dump: base()[i] is preceded by notes()[i] (lines
  /// without the leading "; ", empty: none), saying what the constraints are and which
  /// semaphore and form a wait's constraint has.
  const std::vector<std::string> &notes() const { return notes_; }

private:
  const support::StopToken *stop_ = nullptr;
  struct Step {
    report::ScheduleStep step;
    bool wait = false; ///< a device event that is a SemWait (tie-breaking, see .cpp)
    z3::expr x;        ///< executed before the violating step
    z3::expr pos;      ///< its position (Real)
  };
  using Increment = semantics::MustOrder::Increment;

  z3::expr executed(model::DeviceId d, int32_t i) const;
  /// Device d has run exactly events [0, pc): its next event is pc.
  z3::expr at(model::DeviceId d, int32_t pc) const;
  /// Device d's pc is in a set given by `member(pc)`, pc in [0, eventCount], at a
  /// point where step `ran` has run and step `pending` has not (-1: none): nullopt
  /// when the static happens-before rules out every pc of the set there.
  template <typename Member>
  std::optional<z3::expr> pcIn(model::DeviceId d, Member member, int32_t ran,
                               int32_t pending) const;
  z3::expr started(model::DmaId k) const;
  z3::expr closed(model::DmaId k, bool dst) const;
  /// Weighted Boolean terms: sum of the weights of the true terms.
  using Weighted = std::vector<std::pair<z3::expr, int64_t>>;
  /// "sum >= bound" / "sum == bound" over weighted Boolean terms, as a pseudo-Boolean
  /// constraint (see Encoding.cpp).
  z3::expr atLeast(const Weighted &terms, int64_t bound) const;
  z3::expr exactly(const Weighted &terms, int64_t bound) const;
  /// The increments of (d, s) as weighted "executed" terms.
  Weighted incrementsInPrefix(model::DeviceId d, model::SemId s) const;
  z3::expr deadlocked();
  /// What the encoding reads of an event: the wait, signal or device barrier it is, if
  /// any (roleOf visits every kind of event).
  struct EventRole {
    const model::SemWait *wait = nullptr;
    const model::Signal *signal = nullptr;
    const model::DeviceBarrier *barrier = nullptr;
  };
  static EventRole roleOf(const model::Event &event);
  /// `condition` and fact `f` at obligation `ob`'s event (Encoding.cpp).
  z3::expr fact(const z3::expr &condition, const semantics::Fact &f,
                const semantics::Obligation &ob) const;
  /// (e, s, wait pc) for each SemWait with a positive amount: its W.
  struct WaitInfo {
    model::DeviceId device = 0;
    model::SemId sem = 0;
    int32_t step = 0;
    int64_t need = 0; ///< W: the amounts of e's waits on s up to and including it
    bool chain = false;
  };
  void encodeOrder();
  void encodeBarriers();
  void encodeSemaphores();
  void buildChecks(semantics::PropertyIndex p);
  /// A note before the next constraint pushed to base_ (the dump's comments).
  void note(std::string text);
  /// "signals of device 1", "dma 3 lands (device 2 -> 3)": the source of an increment.
  std::string sourceName(const report::ScheduleStep &step) const;

  z3::context &ctx_;
  const semantics::Machine &m_;
  const model::Program &program_;
  const semantics::Properties &props_;
  /// The steps' numbering and the static must-happen-before relation (the one ordering
  /// analysis, semantics/MustOrder.h).
  semantics::MustOrder order_;
  std::vector<Step> steps_;
  std::vector<std::optional<z3::expr>> barrierOpen_; ///< per invocation, cached
  std::optional<z3::expr> deadlocked_;
  std::vector<std::optional<std::vector<Check>>> checks_; ///< per property
  std::vector<WaitInfo> waits_;
  bool deadlockFree_ = false;
  int64_t staticallyOrdered_ = 0;
  int64_t derivedEdges_ = 0;
  z3::expr_vector base_;
  int32_t countingForm_ = 0;
  int32_t sumForm_ = 0;
  std::vector<report::SemaphoreForm> forms_;
  std::vector<std::string> notes_;
};

} // namespace dkv::smt
