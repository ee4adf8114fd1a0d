// Plain-text rendering of findings, traces and verdicts: what a kernel author reads.
#pragma once

#include "report/Finding.h"
#include "support/Source.h"

#include <cstddef>
#include <iosfwd>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace dkv::report {

/// Renders one finding in the clang style, then its trace:
///
///   file:L:C: race: message
///     <source line>
///     ^
///   file:L:C: note: label            (one per secondary span)
///     <source line>
///     ^
///   wrong value: ...                 (when shown)
///   trace (N steps, engine E[, replayed in the executor | NOT reproduced ...]):
///   <timeline, one column per device>
///
/// Each span is rendered with the name and a snippet of its own file (its
/// SourceLoc::file in `sources`). `sources` may be null (then locations print as
/// line:col only, without snippets).
void renderFinding(std::ostream &out, const Finding &finding,
                   const support::SourceManager *sources);

/// Renders a trace as a timeline: a step number, then one column per device; a
/// device's steps and the steps of DMAs drawn on that device's column (a DMA is
/// drawn in the column of the device whose memory it changes), each with the source
/// line, then (after the table) the context where it changes for that device and
/// the semaphore values that changed. A step's line is `@L` in the main file (id 0)
/// and `@name:L` in another file of `sources` (which may be null).
void renderTrace(std::ostream &out, const Trace &trace,
                 const support::SourceManager *sources = nullptr);

/// What the first line of a verdict says besides the result.
struct VerdictHeading {
  std::string engine;   ///< "explore", "spin", ...
  std::string instance; ///< e.g. "kernel k on mesh x=2" (what "verified" is about)
  bool timing = false;  ///< include the time statistics (they differ between runs)
  bool explain = false; ///< after each finding, its explanation (report/Explain.h)
  /// The model's hardware assumptions the verdict used, e.g. {"dma_order", "any"}
  /// (docs/model.md, "DMA order"): the JSON `assumptions` object.
  std::vector<std::pair<std::string, std::string>> assumptions = {};
  /// TensorCores per device when the instance runs over a TensorCore mesh, else 0: the
  /// JSON names a semaphore form's process as device and core (report::processName).
  int32_t cores = 0;
};

/// True for the statistics that measure time ("time", "pan time", ...): they differ
/// from run to run, so they are shown only on request.
bool isTimeStatistic(const std::string &key);

/// The semaphore forms of a solver engine in one line, grouped by semaphore over
/// devices, counting first: "counting: recv_sem[0] (d0-7), send_sem[0] (d0-7); sum:
/// recv_sem (d0-7, 7 sources)" (the device ranges compressed, "d0,2-3"; for the sum
/// form the number of sources, "2-3 sources" when it differs between the devices);
/// empty without forms.
std::string semaphoreFormsLine(const std::vector<SemaphoreForm> &forms);

/// Renders a verdict: its first line starts with "verified", "inconclusive" or
/// "N finding(s)", names the instance (when verified) and the engine and gives its
/// statistics; with `timing`, a solver engine's per-query statistics follow, one line
/// each ("  query 1: ..."), then its semaphore forms ("  semaphore forms: ...",
/// semaphoreFormsLine). The findings come before that line, each as its
/// renderFindingBlock followed by an empty line. Without `timing` the output is
/// byte-identical for the same verdict.
/// Findings accepted by a suppression are counted apart ("1 finding, 2 suppressed")
/// and shown with their reason instead of their notes and trace; the verdict's
/// unused suppressions follow as warnings (renderUnusedSuppressions).
///
/// With `shown` (one flag per finding), the findings flagged were printed already, in
/// the same form (the text report streams findings as the engine finds them): only
/// the others are printed, still before the verdict's first line, so that the verdict
/// follows every finding.
void renderVerdict(std::ostream &out, const Verdict &verdict, const support::SourceManager *sources,
                   const VerdictHeading &heading, const std::vector<bool> *shown = nullptr);

/// One finding as the verdict prints it: renderFinding, then with `explain` its
/// explanation (not for a suppressed finding).
std::string renderFindingBlock(const Finding &finding, const support::SourceManager *sources,
                               bool explain);

/// One warning per suppression that accepts no finding:
///   file:L:C: warning: this suppression accepts no finding of this instance: no race at
///   line L [unused-suppression]
void renderUnusedSuppressions(std::ostream &out, const Verdict &verdict,
                              const support::SourceManager *sources);
/// The message of that warning (also JSON's and SARIF's).
std::string unusedSuppressionMessage(const Suppression &suppression);

/// The totals of a `dkv check` call over several instances (a kernel file at one
/// device count with its options is one instance).
struct RunSummary {
  size_t kernels = 0;   ///< distinct kernel files
  size_t instances = 0; ///< kernel x device count
  size_t verified = 0;
  size_t withFindings = 0; ///< instances with at least one finding
  std::map<FindingKind, size_t> findingsByKind;
  size_t inconclusive = 0;
  size_t staticErrors = 0;   ///< instances that did not load (exit code 2 or 1)
  size_t internalErrors = 0; ///< exit code 6
  size_t suppressed = 0;     ///< findings accepted by a suppression (not in findingsByKind)
  size_t skipped = 0;        ///< Python test cases that skipped themselves (never verified)
  double seconds = 0;        ///< wall time of the whole call (shown only with timing)
  /// --stop-at-first ended the run at an instance with findings; `notChecked`
  /// instances after it were not checked (not counted in `instances`).
  bool stoppedEarly = false;
  size_t notChecked = 0;
};

/// Renders the summary line of several instances:
///   summary: K kernels, I instances: V verified, F with findings (3 race, 1 deadlock),
///   C inconclusive, S static errors, E internal errors[, N skipped][, N findings
///   suppressed][; T s]
///   [; stopped at the first finding (--stop-at-first): N instances not checked]
/// Kinds with no finding are left out ("(none)" when there are none); the time only
/// with `timing`.
void renderSummary(std::ostream &out, const RunSummary &summary, bool timing);

} // namespace dkv::report
