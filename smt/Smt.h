// The Z3 engine: a partial-order encoding of the runs of one instance (docs/smt.md)
// and one satisfiability query per property. The only library that includes z3++.h;
// this header mentions no Z3 type.
#pragma once

#include "semantics/Machine.h"
#include "semantics/Properties.h"
#include "semantics/Witness.h"

#include <cstdint>
#include <optional>
#include <string>

namespace dkv::smt {

/// `dkv check --engine z3`.
struct SmtOptions {
  /// Time limit for the engine run, in seconds: the simulation stops at it and each
  /// check gets what is left as Z3's per-check timeout; a query that runs out makes
  /// the result incomplete (never verified).
  double timeoutSeconds = 600;
  /// The time limit the user gave (`--timeout`), for messages; 0: timeoutSeconds.
  /// timeoutSeconds is what is left of it when the engine starts.
  double userTimeoutSeconds = 0;
  /// Z3's memory limit in MB (its global `memory_high_watermark`, at most 4095 MB);
  /// reaching it makes the remaining checks unknown and the result incomplete. 0: no
  /// limit.
  int64_t memoryMb = 4096;
  /// Seeded random runs on the step table before any query (docs/smt.md): each
  /// property they violate gets that run as its witness and no query. 0: none (the
  /// tests use it to check the encoding's sat answers on their own).
  int32_t simulationRuns = 32;
  /// Z3's `rlimit` per check: a deterministic resource limit (0: none). A check that
  /// reaches it answers unknown, and the result is inconclusive with that reason.
  int64_t resourceLimit = 0;
  /// The static happens-before analysis (docs/smt.md): off only to cross-check it
  /// against the solver (the answers must not change).
  bool staticAnalysis = true;
  /// Streaming, progress (per query) and early stop (semantics::EngineEvents); may be
  /// null. Its stop request is polled while encoding and simulating, and interrupts a
  /// running check (Z3_interrupt, from the thread that makes the request).
  const semantics::EngineEvents *events = nullptr;
};

/// Decides every property of the machine's instance: one query each (docs/smt.md),
/// on one incremental solver. A satisfiable query gives a witness schedule read from
/// the model (the executed steps by position, then the violating step); `unsat`
/// means no run violates the property; `unknown` or the time limit makes the result
/// incomplete with the reason. Statistics: queries, sat, unsat, unknown, pruned race
/// pairs, encoding size, the form of each semaphore's wait constraints, solver time;
/// `EngineResult::queries`: one record per check (docs/smt.md, "Statistics").
/// Never throws.
semantics::EngineResult checkWithZ3(const semantics::Machine &machine, const SmtOptions &options);

/// The problem as self-contained SMT-LIB2 for the `z3` command. With `property`: the
/// encoding with that property's query asserted and `(check-sat)` at the end, whose
/// answer is the in-process answer. Without: every property's query in property
/// order, each as `(echo "ID")` then `(check-sat-assuming (q))` on an assertion
/// `(=> q query)`, so `z3 FILE` prints each id followed by its answer. Returns false
/// with `error` if the encoding could not be built.
bool dumpSmt2(const semantics::Machine &machine, std::optional<semantics::PropertyIndex> property,
              std::string &text, std::string &error);

} // namespace dkv::smt
