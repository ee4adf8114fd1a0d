// JSON rendering of verdicts, for tools that read dkv's results (pre-merge checks).
#pragma once

#include "report/Finding.h"
#include "report/Render.h"
#include "report/RootCause.h"

#include "support/Diagnostics.h"

#include <nlohmann/json_fwd.hpp>

#include <iosfwd>
#include <string>
#include <vector>

namespace dkv::report {

/// Writes `verdict` as one JSON object (format version 1, keys sorted, two-space
/// indent, a final newline): status ("verified" | "findings" | "inconclusive"),
/// instance, engine, file (`file`: the file checked), reason, assumptions (the model's
/// hardware assumptions the verdict used, `{"dma_order": "any" | "link"}`, and for a
/// kernel over a TensorCore mesh of more than one core also `"entry_barrier_cores":
/// "none" | "all"` (docs/model.md "TensorCores"); `dkv check` always writes it), stats
/// (times only with
/// `heading.timing`), queries (a solver engine's per-query statistics, one object per
/// check, times only with `heading.timing`; absent for the other engines), semaphore_forms (a
/// solver engine's form per semaphore with waits and device: {"semaphore", "device", "form":
/// "counting" | "sum", "sources": what increments it}, and "core" on a TensorCore mesh,
/// where "device" is then the chip; absent for the other engines), and
/// findings, each with
/// kind, message, primary and secondary locations, engine, confirmed, wrong_value, explain (the id
/// of its entry in docs/explain.md, report/Explain.h), suppressed (the reason, when a `// dkv:
/// allow` comment accepts it), the trace steps (actor, id, device, text, line, context,
/// semaphores; on a TensorCore mesh also "core", with "device" the chip of the step's
/// process, report::Trace::cores) and the schedule (in the schedule file's step
/// syntax, so it can be replayed with `dkv run --schedule`), witness_steps (the length of
/// the engine's own schedule, when the one shown is its shortened form), and root_causes (report/
/// RootCause.h: {"id": "rcN", "rule", "kind", "message", "primary", "explain", "findings": the
/// indices of its findings in "findings", "fix" or "no_fix" as fileCauseJson's, "suppressed"}).
/// Each location's "file" is
/// the name of its own file (SourceLoc::file) in `sources`; `file` if `sources` is null or has no
/// such file. unused_suppressions (when any: file, line, column of the comment, kind, reason,
/// applies_to_line, message) lists the suppressions that accepted no finding.
/// The same verdict gives byte-identical output.
void renderVerdictJson(std::ostream &out, const Verdict &verdict, const std::string &file,
                       const support::SourceManager *sources, const VerdictHeading &heading);
/// The object renderVerdictJson writes.
/// With `withFindings` false (an instance of a report of several), "findings" and the
/// root causes' details are left out: the instance has "finding_count" and
/// "root_causes" (the ids of the run's root causes it has, filled by fileCauseJson),
/// and the findings are under the run's root causes.
nlohmann::json verdictJson(const Verdict &verdict, const std::string &file,
                           const support::SourceManager *sources, const VerdictHeading &heading,
                           bool withFindings = true);

/// A root cause of a report of several instances: {"id": "rcN" (N = index + 1), "rule"
/// ("single" | "unwaited-dma" | "untaken-signal" | "race-pair"), "kind", "message",
/// "primary", "explain", "file", "at" (the instances in words, "2..8 devices"),
/// "instances": [{"instance": the index in the run's "instances", "command",
/// "findings": [its findings there, as a verdict's]}], "fix" (a verified fix: "summary",
/// "location", "edits" [{"first_line", "last_line", "lines"}], "diff", "verified_at",
/// "kernel_verifies", "remaining_root_causes") or "no_fix" (why none), "suppressed"}.
/// Adds its id to the "root_causes" of each instance object it occurs at (`instances`,
/// the file's first at `base`).
nlohmann::json fileCauseJson(const FileCause &cause, const std::vector<InstanceReport> &reports,
                             const std::string &file, size_t base, size_t index,
                             std::vector<nlohmann::json> &instances);

/// An instance that did not load (several-instance calls only; a single instance's
/// diagnostics go to standard error as text): {"dkv_format": 1, "status":
/// "static-error", "file", "instance", "diagnostics": [{"id", "severity", "message",
/// "file", "line", "column"}]} (line and column 0 when the diagnostic has no position).
nlohmann::json staticErrorJson(const std::string &file, const std::string &instance,
                               const std::vector<support::Diagnostic> &diagnostics,
                               const support::SourceManager *sources);

/// The report of a call over several instances (`dkv check` with several files, a
/// directory or several annotated device counts):
///   {"dkv_format": 1,
///    "instances": [one object per instance, in input order: verdictJson's object
///                  without its findings, or staticErrorJson's],
///    "root_causes": [fileCauseJson's objects: each root cause of each kernel file once,
///                    with every instance's findings under it],
///    "summary": {"kernels", "instances", "verified", "with_findings", "findings"
///                (kind -> count, suppressed ones left out), "root_causes" (their
///                number), "root_causes_by_kind", "failing" (one line per instance that
///                did not verify), "inconclusive", "static_errors", "internal_errors",
///                "suppressed",
///                "exit_code", "seconds" (only with `timing`), "stopped_early": true
///                and "not_checked" (only when --stop-at-first ended the run early)}}
/// A single instance is written as its object alone (renderVerdictJson).
void renderRunJson(std::ostream &out, const std::vector<nlohmann::json> &instances,
                   const std::vector<nlohmann::json> &causes, const RunSummary &summary,
                   int exitCode, bool timing);

} // namespace dkv::report
