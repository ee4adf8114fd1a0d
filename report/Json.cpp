// JSON rendering of verdicts (nlohmann::json; its objects keep keys sorted, so the
// output is deterministic).
#include "report/Json.h"

#include "report/Explain.h"
#include "report/FileNames.h"
#include "report/RootCause.h"

#include <nlohmann/json.hpp>

#include <ostream>

namespace dkv::report {

namespace {

using nlohmann::json;

// Where locations are written: each in the file it names, else in the checked file.
using Files = FileNames;

json location(const Files &files, SourceLoc loc, const std::string &label) {
  json j = {{"file", files.nameOf(loc)}, {"line", loc.line}, {"column", loc.col}};
  if (!label.empty())
    j["label"] = label;
  // The inlined calls the location was reached through, innermost first.
  if (files.sources && loc.inlined != 0) {
    json chain = json::array();
    for (const support::SourceManager::InlineContext &c : files.sources->inlineChain(loc))
      chain.push_back({{"function", c.callee},
                       {"file", files.nameOf(c.callSite)},
                       {"line", c.callSite.line},
                       {"column", c.callSite.col}});
    j["inlined_from"] = chain;
  }
  return j;
}

// On a TensorCore mesh (`cores` > 0) a step's column is a (device, core) pair: "device"
// is then the chip and "core" the core (docs/model.md "TensorCores").
json traceStep(const TraceStep &step, int32_t cores) {
  json j = {{"actor", step.actor.kind == Actor::Kind::Dma ? "dma" : "device"},
            {"id", step.actor.id},
            {"device", cores > 0 ? step.actor.device / cores : step.actor.device},
            {"text", step.text},
            {"line", step.loc.line}};
  if (cores > 0)
    j["core"] = step.actor.device % cores;
  if (!step.context.empty())
    j["context"] = step.context;
  if (!step.semValues.empty())
    j["semaphores"] = step.semValues;
  return j;
}

json findingJson(const Finding &f, const Files &files) {
  json secondary = json::array();
  for (const Span &span : f.secondary)
    secondary.push_back(location(files, span.loc, span.label));
  json steps = json::array();
  for (const TraceStep &step : f.trace.steps)
    steps.push_back(traceStep(step, f.trace.cores));
  json schedule = json::array();
  for (const ScheduleStep &step : f.schedule)
    schedule.push_back(scheduleStepText(step));
  json j = {{"kind", findingKindName(f.kind)},
            {"message", f.message},
            {"primary", location(files, f.primary.loc, f.primary.label)},
            {"secondary", secondary},
            {"engine", f.engine},
            {"confirmed", f.confirmed},
            {"explain", explainFinding(f).id},
            {"trace", steps},
            {"schedule", schedule}};
  if (f.witnessSteps > 0)
    j["witness_steps"] = f.witnessSteps;
  if (!f.found.empty())
    j["found"] = f.found;
  if (!f.wrongValue.empty())
    j["wrong_value"] = f.wrongValue;
  if (!f.property.empty())
    j["property"] = f.property;
  if (!f.detail.empty())
    j["detail"] = f.detail;
  if (!f.suppressed.empty())
    j["suppressed"] = f.suppressed;
  return j;
}

json fixJson(const Fix &fix, const Files &files) {
  json edits = json::array();
  for (const LineEdit &e : fix.edits)
    edits.push_back({{"first_line", e.firstLine}, {"last_line", e.lastLine}, {"lines", e.lines}});
  return {{"summary", fix.summary},
          {"location", location(files, fix.loc, "")},
          {"edits", edits},
          {"diff", fix.diff},
          {"verified_at", fix.verifiedAt},
          {"kernel_verifies", fix.kernelVerifies},
          {"remaining_root_causes", fix.remaining}};
}

/// The keys a root cause has in both JSON forms: id, rule, kind, message, primary,
/// explain, and its fix or why there is none.
json causeJson(const RootCause &cause, const std::vector<Finding> &findings, const Files &files,
               const std::string &id) {
  const Finding &main = findings[cause.findings.front()];
  json j = {{"id", id},
            {"rule", ruleName(cause.rule)},
            {"kind", findingKindName(cause.kind)},
            {"message", cause.message},
            {"primary", location(files, cause.primary.loc, cause.primary.label)},
            {"explain", explainFinding(main).id}};
  if (main.fix)
    j["fix"] = fixJson(*main.fix, files);
  if (!main.noFix.empty())
    j["no_fix"] = main.noFix;
  if (!main.suppressed.empty())
    j["suppressed"] = main.suppressed;
  return j;
}

} // namespace

json verdictJson(const Verdict &verdict, const std::string &file,
                 const support::SourceManager *sources, const VerdictHeading &heading,
                 bool withFindings) {
  json stats = json::object();
  for (const auto &[key, value] : verdict.stats)
    if (heading.timing || !isTimeStatistic(key))
      stats[key] = value;
  json j = {{"dkv_format", 1},
            {"status", verdictStatusName(verdict.status)},
            {"instance", heading.instance},
            {"engine", heading.engine},
            {"file", file},
            {"stats", stats}};
  if (withFindings) {
    // The findings, and the root causes that group them (by property id, or by index
    // for a finding of the static pre-check, which has none).
    json findings = json::array();
    for (const Finding &f : verdict.findings)
      findings.push_back(findingJson(f, Files{file, sources}));
    j["findings"] = findings;
    json causes = json::array();
    if (verdict.status != Verdict::Status::Error)
      for (const RootCause &c : rootCauses(verdict.findings, sources)) {
        json cause = causeJson(c, verdict.findings, Files{file, sources},
                               "rc" + std::to_string(causes.size() + 1));
        json members = json::array();
        for (size_t i : c.findings)
          members.push_back(i);
        cause["findings"] = members;
        causes.push_back(cause);
      }
    j["root_causes"] = causes;
  } else {
    j["finding_count"] = verdict.findings.size();
    j["root_causes"] = json::array();
  }
  if (!verdict.reason.empty())
    j["reason"] = verdict.reason;
  if (!heading.assumptions.empty()) {
    json assumptions = json::object();
    for (const auto &[key, value] : heading.assumptions)
      assumptions[key] = value;
    j["assumptions"] = assumptions;
  }
  // A solver's per-query statistics, always; their times only with timing.
  if (!verdict.queries.empty()) {
    json queries = json::array();
    for (const auto &record : verdict.queries) {
      json q = json::object();
      for (const auto &[key, value] : record)
        if (heading.timing || !isTimeStatistic(key))
          q[key] = value;
      queries.push_back(q);
    }
    j["queries"] = queries;
  }
  // A solver's form per semaphore and device (deterministic: always).
  if (!verdict.semaphoreForms.empty()) {
    json forms = json::array();
    for (const SemaphoreForm &f : verdict.semaphoreForms) {
      json form = {{"semaphore", f.semaphore},
                   {"device", heading.cores > 0 ? f.device / heading.cores : f.device},
                   {"form", f.counting ? "counting" : "sum"},
                   {"sources", f.sources}};
      if (heading.cores > 0)
        form["core"] = f.device % heading.cores;
      forms.push_back(form);
    }
    j["semaphore_forms"] = forms;
  }
  if (!verdict.unusedSuppressions.empty()) {
    json unused = json::array();
    for (const Suppression &s : verdict.unusedSuppressions) {
      json u = location(Files{file, sources}, s.loc, "");
      u["kind"] = findingKindName(s.kind);
      u["reason"] = s.reason;
      u["applies_to_line"] = s.line;
      u["message"] = unusedSuppressionMessage(s);
      unused.push_back(u);
    }
    j["unused_suppressions"] = unused;
  }
  return j;
}

void renderVerdictJson(std::ostream &out, const Verdict &verdict, const std::string &file,
                       const support::SourceManager *sources, const VerdictHeading &heading) {
  out << verdictJson(verdict, file, sources, heading).dump(2) << "\n";
}

json staticErrorJson(const std::string &file, const std::string &instance,
                     const std::vector<support::Diagnostic> &diagnostics,
                     const support::SourceManager *sources) {
  Files files{file, sources};
  json list = json::array();
  for (const support::Diagnostic &d : diagnostics) {
    const char *severity = d.severity == support::Severity::Error     ? "error"
                           : d.severity == support::Severity::Warning ? "warning"
                                                                      : "note";
    list.push_back({{"id", d.id},
                    {"severity", severity},
                    {"message", d.message},
                    {"file", files.nameOf(d.range.begin)},
                    {"line", d.range.begin.line},
                    {"column", d.range.begin.col}});
  }
  return {{"dkv_format", 1},
          {"status", "static-error"},
          {"file", file},
          {"instance", instance},
          {"diagnostics", list}};
}

json fileCauseJson(const FileCause &cause, const std::vector<InstanceReport> &reports,
                   const std::string &file, size_t base, size_t index,
                   std::vector<json> &instances) {
  const InstanceReport &first = reports[cause.first];
  const std::string id = "rc" + std::to_string(index + 1);
  json j = causeJson(cause.cause, first.verdict->findings, Files{file, first.sources}, id);
  j["file"] = file;
  j["at"] = describeInstances(reports, cause.instances);
  json where = json::array();
  for (size_t o = 0; o < cause.instances.size(); ++o) {
    const InstanceReport &r = reports[cause.instances[o]];
    const RootCause c = rootCauses(r.verdict->findings, r.sources)[cause.causeIndex[o]];
    json findings = json::array();
    for (size_t i : c.findings)
      findings.push_back(findingJson(r.verdict->findings[i], Files{file, r.sources}));
    where.push_back(
        {{"instance", base + cause.instances[o]}, {"command", r.command}, {"findings", findings}});
    instances[base + cause.instances[o]]["root_causes"].push_back(id);
  }
  j["instances"] = where;
  return j;
}

void renderRunJson(std::ostream &out, const std::vector<json> &instances,
                   const std::vector<json> &causes, const RunSummary &summary, int exitCode,
                   bool timing) {
  json kinds = json::object();
  for (const auto &[kind, count] : summary.findingsByKind)
    kinds[findingKindName(kind)] = count;
  json causeKinds = json::object();
  size_t causeCount = 0;
  for (const auto &[kind, count] : summary.rootCausesByKind) {
    causeKinds[findingKindName(kind)] = count;
    causeCount += count;
  }
  json s = {{"kernels", summary.kernels},
            {"instances", summary.instances},
            {"verified", summary.verified},
            {"with_findings", summary.withFindings},
            {"findings", kinds},
            {"inconclusive", summary.inconclusive},
            {"static_errors", summary.staticErrors},
            {"internal_errors", summary.internalErrors},
            {"suppressed", summary.suppressed},
            {"root_causes", causeCount},
            {"root_causes_by_kind", causeKinds},
            {"failing", summary.failing},
            {"exit_code", exitCode}};
  if (summary.skipped)
    s["skipped"] = summary.skipped;
  if (timing)
    s["seconds"] = summary.seconds;
  if (summary.stoppedEarly) {
    s["stopped_early"] = true;
    s["not_checked"] = summary.notChecked;
  }
  json j = {{"dkv_format", 1}, {"root_causes", causes}, {"instances", instances}, {"summary", s}};
  out << j.dump(2) << "\n";
}

} // namespace dkv::report
