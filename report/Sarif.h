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

/// The SARIF log of one call: one run (tool "dkv") that collects every instance's
/// verdict or static errors, in the order they are added. write() gives:
///
///   {"$schema": ".../sarif-2.1.0.json", "version": "2.1.0", "runs": [{
///     "tool": {"driver": {"name": "dkv", "version", "informationUri", "rules": [
///        one per finding kind (race, deadlock, exit-violation, lifetime-violation),
///        then one per diagnostic id that occurs, sorted; each with shortDescription,
///        help.text (a kind's: its entries of the explain catalogue) and
///        defaultConfiguration.level]}},
///     "invocations": [{"executionSuccessful": no internal error,
///        "toolExecutionNotifications": inconclusive instances and the findings of
///        an incomplete search (level warning, the reason), suppressions that
///        accept no finding (level warning), internal errors (level error), a run
///        that --stop-at-first ended early (level warning, how many instances were
///        not checked)}],
///     "results": [
///        per finding: ruleId = kind, level error, message.text = message +
///          " [" + property id + "]", then lines "Witness: " detail, "Wrong value: "
///          (a race), "Pattern [explain id]: title. Usual fix: ..." (what a reviewer
///          reads on the alert), locations = [primary], relatedLocations = the
///          secondary spans (message = label), partialFingerprints.dkvProperty/v1 =
///          "instance|property", suppressions = [{kind inSource, status accepted,
///          justification = the reason}] when a `// dkv: allow` comment accepts it
///          (the result keeps its level), properties {property, instance, engine, confirmed,
///          detail, wrongValue, explain (the explain entry id), schedule}, codeFlows = [one
///          threadFlow per device (id "device N") with that device's trace steps (a DMA's steps on
///          the device whose memory it changes), each a threadFlowLocation with the step's
///          location, its text as message and executionOrder = step number];
///        per static error (a diagnostic of a kernel that does not load): ruleId =
///          the diagnostic id, level error (warning for warnings), its notes as
///          relatedLocations]}]}
///
/// Locations: artifactLocation.uri is the file's name as dkv read it, made relative to
/// the working directory when it lies under it (an absolute path outside it becomes a
/// file:// URI); region startLine / startColumn (1-based), no region for a location
/// without a position. Keys sorted, two-space indent: byte-identical for the same input.
class SarifLog {
public:
  explicit SarifLog(std::string toolVersion);
  ~SarifLog();
  SarifLog(const SarifLog &) = delete;
  SarifLog &operator=(const SarifLog &) = delete;

  /// The verdict of one instance (`instance` names it, e.g. "kernel k on mesh x=2");
  /// `file` is the checked file (locations whose file `sources` does not know are put
  /// there). Findings become results, an inconclusive verdict a warning notification,
  /// an Error verdict an error notification.
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
