// The spin engine: emit the Promela model, run spin, gcc and pan, read the verdict.
#pragma once

#include "semantics/Machine.h"
#include "semantics/Witness.h"

#include <cstdint>
#include <string>
#include <vector>

namespace dkv::promela {

/// How checkWithSpin runs the tools.
struct SpinOptions {
  std::string spin = "spin";    ///< spin executable (looked up in PATH)
  std::string cc = "gcc";       ///< C compiler for pan.c
  std::string optimize = "-O2"; ///< optimisation flag for pan.c
  /// Extra compiler flags for pan.c, e.g. "-DCOLLAPSE" (compression) or "-DBITSTATE".
  /// Note: -DBITSTATE / -DHC make the search approximate (a pass is then not a proof).
  std::vector<std::string> ccFlags;
  /// Extra flags for spin itself (`spin -a` and the trail replay), e.g.
  /// "-DFUSE_STEPS=0" "-DFUSE_DMAS=0" to search the model without its fused steps
  /// (docs/promela.md, "State space"; for measurements).
  std::vector<std::string> spinFlags;
  double timeoutSeconds = 600; ///< for the whole run (spin, gcc, pan, replay)
  int64_t memoryMb = 4096;     ///< pan's memory limit (-DMEMLIM); 0 = none
  int hashBits = 0;            ///< pan -w (hash table 2^bits slots); 0 = pan's default
  int64_t depth = 0;           ///< pan -m; 0 = the model's own bound (LineMap::depthBound)
  bool checkAssertions = true; ///< false: no races, exit, lifetime checks
  bool checkDeadlocks = true;  ///< false: pan -E (no invalid end states)
  /// After a finding, search again with its property switched off until the search
  /// completes (docs/promela.md): a witness of every violated property, as the
  /// exhaustive search gives. false: stop at the first finding, which is quicker when
  /// the full state space is large.
  bool allProperties = true;
  /// Work in this directory (created if needed) and keep it; empty: a private
  /// temporary directory (mkdtemp under $TMPDIR or /tmp), removed afterwards.
  std::string keepDir;
  /// Streaming (each counterexample as it is read), progress (per pan run) and early
  /// stop (semantics::EngineEvents); may be null.
  const semantics::EngineEvents *events = nullptr;
};

/// Verifies the machine's program with spin: writes the model (emitPromela) to the
/// work directory, runs `spin -a`, compiles pan.c with -DSAFETY, runs `./pan -n
/// -m<depth>` and, on an error, replays the trail with `spin -t` to get the witness
/// schedule and the violated property (the failed assert's obligation, or for an
/// invalid end state the waits the replayed state is stuck at). pan stops at its
/// first error, so with `allProperties` the model is regenerated without the found
/// properties' checks (EmitOptions::skip) and searched again until pan finds no
/// more. Complete only when pan finished its last search without errors; a missing
/// tool, a failed compile, a timeout, pan running out of memory or depth, or any
/// output dkv can't read makes the result incomplete with the reason and the
/// numbers (the witnesses found before stand). Statistics: states, transitions,
/// depth, state vector, memory (of the last pan run), pan runs, pan time (summed),
/// total time. Never throws.
semantics::EngineResult checkWithSpin(const semantics::Machine &machine,
                                      const SpinOptions &options);

} // namespace dkv::promela
