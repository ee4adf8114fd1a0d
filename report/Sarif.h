// SARIF 2.1.0 rendering of one `dkv check` call, for code-scanning tools (GitHub code
// scanning, CI dashboards). docs/ci.md shows how it is used.
#pragma once

#include "report/Finding.h"
#include "report/RootCause.h"
#include "support/Diagnostics.h"

#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

namespace dkv::report {

/// The SARIF log of one call: one run (tool "dkv") that collects every kernel file's
/// root causes and static errors and every instance's notifications, in the order they
/// are added. write() gives:
///
///   {"$schema": ".../sarif-2.1.0.json", "version": "2.1.0", "runs": [{
///     "tool": {"driver": {"name": "dkv", "version", "informationUri", "rules": [
///        one per finding kind (race, deadlock, exit-violation, lifetime-violation),
///        then one per diagnostic id that occurs, sorted; each with shortDescription,
///        fullDescription, help.text and help.markdown (a kind's: its entries of the
///        explain catalogue, docs/explain.md), helpUri (DKV_DOCS_URL, a CMake cache
///        variable, + "explain.md" / "diagnostics.md"), defaultConfiguration.level and
///        properties {tags, precision "very-high", problem.severity "error",
///        security-severity: race "8.0", deadlock "7.5", exit and lifetime violations
///        "6.5", static errors "5.0"}]}},
///     "invocations": [{"executionSuccessful": no internal error,
///        "toolExecutionNotifications": inconclusive instances and the findings of
///        an incomplete search (level warning, the reason), suppressions that
///        accept no finding (level warning), internal errors (level error), a run
///        that --stop-at-first ended early (level warning, how many instances were
///        not checked)}],
///     "results": [
///        per root cause of a kernel file (report/RootCause.h; addCause): ruleId =
///          its kind, level error, message.text = its heading (+ " [" + the main
///          finding's property id + "]" when the heading is that finding's) + " (at
///          INSTANCES)", then "; see [label](N)" links to its notes, lines "Witness: ",
///          "Findings: " / "Also: " (its other findings, each a link "[KIND: MESSAGE
///          [ID]](N)" to its related location), "Wrong value: ", "Fix: SUMMARY (verified
///          at ...)" or "No verified fix: WHY", "Pattern [explain id]: title. Usual fix:
///          ..."; locations = [its primary location]; relatedLocations = the inlined
///          calls, its other findings and the main finding's notes (ids 1, 2, ...,
///          each linked from the message); partialFingerprints.dkvRootCause/v1 =
///          report::causeFingerprint (":2", ":3" added to a repeat in the log);
///          suppressions = [{kind inSource, status accepted, justification = the
///          reason}] when a `// dkv: allow` comment accepts it (the result keeps its
///          level); properties {instances (the commands of the instances that have
///          it), at, property, findings (their property ids), engine, confirmed,
///          detail, wrongValue, explain (the explain entry id), schedule}; codeFlows =
///          [one threadFlow per device (id "device N") with that device's trace steps
///          of the main finding (a DMA's steps on the device whose memory it changes),
///          each a threadFlowLocation with the step's location, its text as message and
///          executionOrder = step number]; fixes = [its verified fix: description,
///          artifactChanges = [the file, replacements: one per line edit, the whole
///          lines it replaces as deletedRegion (an empty region for an insertion) and
///          the new lines as insertedContent]];
///        per distinct static error of a file (a diagnostic of a kernel that does not
///          load; addDiagnostics): ruleId = the diagnostic id, level error (warning
///          for warnings), its notes as relatedLocations linked from the message,
///          partialFingerprints.dkvDiagnostic/v1, properties.instance: the
///          instances that have it]}]}
///
/// Locations: artifactLocation.uri is the file's name as dkv read it, made relative to
/// the working directory when it lies under it (an absolute path outside it becomes a
/// file:// URI); region startLine / startColumn (1-based) and endLine / endColumn (a
/// diagnostic's range, else the end of the code on the line, a trailing comment left
/// out), no region for a location without a position. Keys sorted, two-space indent:
/// byte-identical for the same input.
class SarifLog {
public:
  explicit SarifLog(std::string toolVersion);
  ~SarifLog();
  SarifLog(const SarifLog &) = delete;
  SarifLog &operator=(const SarifLog &) = delete;

  /// The notifications of one instance's verdict (`instance` names it, e.g. "kernel k
  /// on mesh x=2"; `file` is the checked file): an inconclusive verdict or an incomplete
  /// search a warning, an Error verdict an error, unused suppressions warnings. Its
  /// findings become results through addCause.
  void addVerdict(const Verdict &verdict, const std::string &file,
                  const support::SourceManager *sources, const std::string &instance);
  /// One root cause (report/RootCause.h) of `file` as one result: `findings` are those
  /// of the first instance that has it, `instances` the commands of every instance that
  /// has it, `at` them in words ("2..8 devices").
  void addCause(const std::vector<Finding> &findings, const RootCause &cause,
                const std::string &file, const support::SourceManager *sources,
                const std::vector<std::string> &instances, const std::string &at);
  /// The diagnostics of an instance that did not load (exit code 2): errors and
  /// warnings become results of their id.
  void addDiagnostics(const std::vector<support::Diagnostic> &diagnostics, const std::string &file,
                      const support::SourceManager *sources, const std::string &instance);
  /// A tool execution notification about `file` (level "error" or "warning").
  void addNotification(const std::string &level, const std::string &message,
                       const std::string &file);
  void write(std::ostream &out) const;

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// The URI SARIF gives `path` (see SarifLog): relative to the working directory when
/// under it, else a file:// URI of the absolute path.
std::string sarifUri(const std::string &path);

} // namespace dkv::report
