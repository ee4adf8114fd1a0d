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

/// The width the text report fits its traces to when the terminal's is not known
/// (driver::textWidth: COLUMNS, else the terminal's, else this).
inline constexpr size_t kTextWidth = 100;

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
///   <renderTrace's timeline in `width` columns>
///
/// Each span is rendered with the name and a snippet of its own file (its
/// SourceLoc::file in `sources`). `sources` may be null (then locations print as
/// line:col only, without snippets).
/// What a root cause adds to its main finding's block (report/RootCause.h): all
/// optional.
struct FindingExtras {
  std::string at;    ///< a line under the heading's snippet ("  at 2..8 devices\n")
  std::string notes; ///< lines after the finding's notes (the cause's other findings)
  std::string fix;   ///< lines before the trace (the fix-it, or why there is none)
  /// A heading of the cause's own instead of the finding's (its notes then replace
  /// the finding's own secondary spans): kind, message and place, without an id; the
  /// trace line then names `traceOf`, the finding whose trace it is.
  std::string heading;
  FindingKind headingKind = FindingKind::Race;
  Span headingSpan;
  std::string traceOf;
};

void renderFinding(std::ostream &out, const Finding &finding, const support::SourceManager *sources,
                   const FindingExtras &extras = {}, size_t width = kTextWidth);

/// Renders a trace as a timeline that fits `width` columns and cuts nothing:
///   - a table with a step number and one column per device when each column gets at
///     least 24 characters: a device's steps and those of the DMAs drawn on its column
///     (a DMA is drawn in the column of the device whose memory it changes), each cell
///     its text with the source line (`@L` in the main file, id 0, `@name:L` in
///     another file of `sources`, which may be null), then in brackets the context
///     where it changes for that device and the semaphore values the step changed,
///     wrapped within the column (at spaces; inside a word only when it alone is wider);
///   - else one row per step, `device D: text [notes]`, wrapped under its text.
/// The steps the finding is about (Trace::marks) have `>` before their number and a
/// line `^ LABEL` (e.g. `^ racing access`) in their cell; without marks (a deadlock),
/// each device still blocked after the last step gets a line `> stuck after step N:
/// device D waits for ... @L`.
void renderTrace(std::ostream &out, const Trace &trace,
                 const support::SourceManager *sources = nullptr, size_t width = kTextWidth);

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
  /// The columns the traces fit (renderTrace).
  size_t width = kTextWidth;
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

/// Renders a verdict: its root causes (report/RootCause.h, each as renderCauseBlock
/// followed by an empty line), then renderVerdictStatus. Without `timing` the output is
/// byte-identical for the same verdict.
void renderVerdict(std::ostream &out, const Verdict &verdict, const support::SourceManager *sources,
                   const VerdictHeading &heading);

/// The verdict's own lines, each after `prefix`: the first starts with "verified",
/// "inconclusive" or "N finding(s), M root cause(s)" (findings accepted by a
/// suppression counted apart: ", 2 suppressed"), names the instance (when verified)
/// and the engine and gives its statistics; with `timing`, a solver engine's per-query
/// statistics follow, one line each ("  query 1: ..."), then its semaphore forms
/// ("  semaphore forms: ...", semaphoreFormsLine); "incomplete search: ..." when the
/// search stopped early with findings; the verdict's unused suppressions follow as
/// warnings (renderUnusedSuppressions).
void renderVerdictStatus(std::ostream &out, const Verdict &verdict,
                         const support::SourceManager *sources, const VerdictHeading &heading,
                         const std::string &prefix = "");

/// The root causes of the verdict's findings that no suppression accepts.
size_t activeRootCauses(const Verdict &verdict, const support::SourceManager *sources);

/// One finding as the verdict prints it: renderFinding, then with `explain` its
/// explanation (not for a suppressed finding).
std::string renderFindingBlock(const Finding &finding, const support::SourceManager *sources,
                               bool explain, size_t width = kTextWidth);

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
  /// Root causes (report/RootCause.h) by kind, each counted once per kernel file however
  /// many of its instances have it; suppressed ones left out.
  std::map<FindingKind, size_t> rootCausesByKind;
  /// One line per instance that did not verify: "FILE --devices 2: 1 root cause (1
  /// exit-violation)", "FILE --devices 3: static error [id] at line L", ...
  std::vector<std::string> failing;
  size_t skipped = 0; ///< Python test cases that skipped themselves (never verified)
  double seconds = 0; ///< wall time of the whole call (shown only with timing)
  /// --stop-at-first ended the run at an instance with findings; `notChecked`
  /// instances after it were not checked (not counted in `instances`).
  bool stoppedEarly = false;
  size_t notChecked = 0;
};

/// Renders the summary of several instances: its line, then (when any instance did not
/// verify) "failing instances (N):" and one line each (RunSummary::failing):
///   summary: K kernels, I instances: V verified, F with findings (2 root causes: 1 race,
///   1 deadlock; 6 findings),
///   C inconclusive, S static errors, E internal errors[, N skipped][, N findings
///   suppressed][; T s]
///   [; stopped at the first finding (--stop-at-first): N instances not checked]
/// Kinds with no finding are left out ("(none)" when there are none); the time only
/// with `timing`.
void renderSummary(std::ostream &out, const RunSummary &summary, bool timing);

} // namespace dkv::report
