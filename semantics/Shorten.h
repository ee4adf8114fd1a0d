// Shortening of witness schedules, the same for every engine: before a witness
// becomes a finding (semantics::buildVerdict), its schedule is cut down to the steps
// the finding needs and put in one fixed order, then replayed (docs/model.md,
// "Short witnesses").
#pragma once

#include "semantics/Machine.h"
#include "semantics/Properties.h"

#include <cstdint>

namespace dkv::semantics {

struct ShortenOptions {
  /// At most this many step-table operations (a step taken or tried) in all; when
  /// reached, the search stops and the shortest schedule found so far (each one
  /// replayed to the obligation) is kept. Counting steps, not time, keeps the result
  /// deterministic.
  int64_t budget = 20'000'000;
};

struct ShortenResult {
  report::Schedule schedule; ///< the shortened schedule (the original if none found)
  bool shortened = false;    ///< `schedule` differs from the original
  bool complete = true;      ///< the search ended within the budget
  int64_t work = 0;          ///< step-table operations spent
};

/// A schedule that shows property `p` as `schedule` does, with as few steps as the
/// search finds: a step of it violates one of p's obligations (the same source-level
/// accesses or wait, perhaps on other devices or in an earlier iteration than in
/// `schedule`), and that step is its last; for a deadlock property, its final state has
/// no enabled step and one of p's waits is stuck in it. `schedule` must show `p`
/// (semantics::witnessFinding checked it).
///
/// The search works on how many steps each actor (a device, a DMA's sends, its
/// lands) takes before the violating step. Every step's enabledness only grows with
/// the steps of the other actors (a wait needs units that only other actors add, a
/// barrier needs the others to arrive, a land needs its send), and the state reached
/// depends only on these counts, not on their order. So a count vector is reachable
/// iff the fixed order below reaches it, and whether a step from there violates `p`
/// is decided by the counts. The counts are reduced in rounds (delta debugging on the
/// counts, Zeller and Hildebrandt 2002): every actor at once (the last half of each
/// actor's steps, then the last quarter, ...), then actor by actor (all of its steps,
/// then half, a quarter, ..., one), until a round removes nothing; the result is the
/// fixed order of the final counts: actors by id (devices, then each DMA's sends and
/// lands), each running as far as its count allows and it is enabled, round after
/// round, then the first enabled step (devices, sends, lands) that violates `p`.
/// Deterministic; a pure function of the machine, the original schedule and `p`.
ShortenResult shortenWitness(const Machine &machine, const report::Schedule &schedule,
                             PropertyIndex p, const ShortenOptions &options = {});

} // namespace dkv::semantics
