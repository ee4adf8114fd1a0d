// Root causes: the findings of a verdict that have one cause, grouped by a rule over
// their facts (report::FindingFacts, never their message texts), and the same root
// cause over several instances of one kernel file. docs/explain.md "Root causes" states
// the rule.
#pragma once

#include "report/Finding.h"
#include "report/Render.h"
#include "support/Diagnostics.h"
#include "support/Source.h"

#include <cstddef>
#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace dkv::report {

/// Where a location of the checked file (FileId 0) was before an edit of it: the fix
/// search compares a repaired kernel's root causes with the original's through it.
/// False for a location on a line the edit inserted (it had no place before).
using LocMap = std::function<bool(SourceLoc &loc)>;

/// One root cause of one verdict: findings with one cause (docs/explain.md "Root
/// causes"):
/// - UnwaitedDma: the DMA started at one place is not waited for: its sides still open
///   at an exit (FindingFacts::ExitDma of that start), a DMA semaphore non-zero at an
///   exit that only that start counts on, and, when one of those is about its receive
///   side, its bytes landing on a device outside the invocation (LandOutside).
/// - UnwaitedUnits: a regular semaphore that DMAs add units to (TPU v6+; the same
///   declaration): its value left at an exit, the open sides of the DMAs that signal it,
///   and those DMAs landing outside the invocation when a receive side is open.
/// - UntakenSignal: a regular semaphore non-zero at an exit and its signals reaching a
///   device outside the invocation (the same declaration).
/// - RacePair: the two findings of one unordered pair of accesses (each access's place,
///   role and buffer), one seen from each access.
/// - Single: any other finding, alone; a suppressed finding is always alone.
struct RootCause {
  enum class Rule { Single, UnwaitedDma, UnwaitedUnits, UntakenSignal, RacePair };
  Rule rule = Rule::Single;
  /// The facts that make the findings one cause, with source locations as
  /// "file:line:col": equal for the same cause at every instance of a kernel.
  std::string key;
  std::vector<SourceLoc> keyLocs; ///< the locations in `key` (as found, not mapped)
  FindingKind kind = FindingKind::Race;
  /// The heading: the main finding's message, or (UnwaitedDma, UntakenSignal with more
  /// than one finding) the cause's own, e.g. "dma started at line 16 is never waited".
  std::string message;
  Span primary;
  /// Indices into the verdict's findings, in verdict order; the first is the main one
  /// (its trace is shown).
  std::vector<size_t> findings;
  /// The heading is the cause's own, not the main finding's (the findings are notes).
  bool ownHeading() const { return message != mainMessage; }
  std::string mainMessage; ///< the main finding's message
};

/// The root causes of `findings` (a verdict's, in its order), in the order of their
/// first findings. `sources` names the files of locations in keys (may be null: file
/// ids); `map`, when given, maps locations of the checked file first (LocMap).
std::vector<RootCause> rootCauses(const std::vector<Finding> &findings,
                                  const support::SourceManager *sources, const LocMap &map = {});

/// One instance of a kernel file in a report of several: how it is named and what it
/// gave. `verdict` is null when it did not load (its diagnostics then say why).
struct InstanceReport {
  std::string command;            ///< "FILE --devices N ..." (how to check it alone)
  std::optional<int64_t> devices; ///< its --devices, if any
  std::string variant;            ///< the command's options but --devices N ("" when none)
  int code = 0;                   ///< its exit code
  const Verdict *verdict = nullptr;
  const support::SourceManager *sources = nullptr;
  VerdictHeading heading;
  std::vector<support::Diagnostic> diagnostics; ///< errors and warnings of loading it
  std::string errText; ///< what loading printed, when it has no diagnostics to show
};

/// One root cause of one kernel file over its instances: the cause as the first
/// instance that has it shows it, and every instance that has it.
struct FileCause {
  size_t first = 0;                ///< index of that instance (in the file's instances)
  std::vector<size_t> instances;   ///< every instance that has it, in order
  std::vector<size_t> causeIndex;  ///< its index among each such instance's root causes
  std::vector<size_t> mainFinding; ///< the index of its main finding in each such instance
  RootCause cause;                 ///< as found at `first`
};
std::vector<FileCause> fileCauses(const std::vector<InstanceReport> &instances);

/// "2..8 devices", "2, 4 devices", "3 devices with --invocations 2; --mesh x=2,y=2":
/// the instances `which` of `instances`, device counts compressed per variant.
std::string describeInstances(const std::vector<InstanceReport> &instances,
                              const std::vector<size_t> &which);

/// Renders one root cause as the text report shows it: a cause with one finding as
/// renderFinding does, the findings of a cause with its own heading (and the second of
/// a race pair) as notes `file:L:C: note: KIND: MESSAGE [ID]` with their witness; `at`
/// (when not empty) as "  at ..." under the heading; the fix (Finding::fix of the main
/// finding) as `file:L:C: fix: SUMMARY (verified ...)` with its diff, or why none was
/// found; then the main finding's trace and, with `explain`, its explanation.
std::string renderCauseBlock(const std::vector<Finding> &findings, const RootCause &cause,
                             const support::SourceManager *sources, bool explain,
                             const std::string &at = "", size_t width = kTextWidth);

/// The fix-it lines: `file:L:C: fix: SUMMARY (verified at ...)` and the diff, indented.
void renderFix(std::ostream &out, const Fix &fix, const support::SourceManager *sources);

/// `--format short`: `file:line:col: kind: message [id]` (the id of the cause's main
/// finding; a cause with its own heading adds " (N findings)" before it).
std::string shortLine(const std::vector<Finding> &findings, const RootCause &cause,
                      const support::SourceManager *sources, const std::string &at = "");

/// A stable fingerprint of a root cause (SARIF partialFingerprints): a hash of the rule,
/// the kind, and the file name and source text (trimmed) of every location in the
/// cause's key, so that it does not change when unrelated edits move the lines.
std::string causeFingerprint(const RootCause &cause, const support::SourceManager *sources);
/// The rule's name in reports and fingerprints: "single", "unwaited-dma", ...
const char *ruleName(RootCause::Rule rule);
/// The hash causeFingerprint uses, of `parts` and the lines of `locs`: 16 hex digits.
std::string locationFingerprint(const std::vector<std::string> &parts,
                                const std::vector<SourceLoc> &locs,
                                const support::SourceManager *sources);

} // namespace dkv::report
