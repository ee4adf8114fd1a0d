// SARIF 2.1.0 rendering (nlohmann::json; its objects keep keys sorted, so the output
// is deterministic).
#include "report/Sarif.h"

#include "report/Explain.h"
#include "report/FileNames.h"
#include "report/Render.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <map>
#include <ostream>
#include <set>

namespace dkv::report {

namespace {

using nlohmann::json;

struct KindRule {
  FindingKind kind;
  const char *name;
  const char *shortText;
};

const KindRule kKindRules[] = {
    {FindingKind::Race, "DataRace",
     "Two accesses to the same memory that no barrier, semaphore or program order orders"},
    {FindingKind::Deadlock, "Deadlock", "A device can never finish"},
    {FindingKind::ExitViolation, "ExitViolation",
     "A semaphore is non-zero or a DMA is in flight when the kernel exits"},
    {FindingKind::LifetimeViolation, "LifetimeViolation",
     "A DMA or signal reaches a device outside the kernel or semaphore scope"},
};

/// A kind's help: its patterns from the explain catalogue (report/Explain.h), each
/// with its explanation and usual fix; a result names its own in properties.explain.
std::string kindHelp(FindingKind kind) {
  std::string text = "The patterns that show as this finding (docs/explain.md; each result "
                     "names its own in properties.explain):";
  for (const ExplainEntry &e : explainCatalogue())
    if (e.kind == kind)
      text += std::string("\n\n[") + e.id + "] " + e.title + ". " + e.what + " Usual fix: " + e.fix;
  return text;
}

const char *severityLevel(support::Severity s) {
  switch (s) {
  case support::Severity::Error:
    return "error";
  case support::Severity::Warning:
    return "warning";
  case support::Severity::Note:
    return "note";
  }
  return "error";
}

} // namespace

std::string sarifUri(const std::string &path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path p(path);
  if (p.is_relative())
    return p.lexically_normal().generic_string();
  fs::path cwd = fs::current_path(ec);
  if (!ec) {
    fs::path rel = p.lexically_normal().lexically_relative(cwd);
    if (!rel.empty() && *rel.begin() != "..")
      return rel.generic_string();
  }
  return "file://" + p.lexically_normal().generic_string();
}

struct SarifLog::Impl {
  std::string version;
  json results = json::array();
  json notifications = json::array();
  std::set<std::string> diagnosticIds;
  bool internalError = false;

  using Files = FileNames;

  static json physical(const Files &files, SourceLoc loc) {
    json p = {{"artifactLocation", {{"uri", sarifUri(files.nameOf(loc))}}}};
    if (loc.valid()) {
      json region = {{"startLine", loc.line}};
      if (loc.col > 0)
        region["startColumn"] = loc.col;
      p["region"] = region;
    }
    return p;
  }

  static json location(const Files &files, SourceLoc loc, const std::string &message, int id) {
    json l = {{"physicalLocation", physical(files, loc)}};
    if (!message.empty())
      l["message"] = {{"text", message}};
    if (id >= 0)
      l["id"] = id;
    return l;
  }

  static json codeFlow(const Files &files, const Trace &trace) {
    std::map<int32_t, json> perDevice;
    for (size_t i = 0; i < trace.steps.size(); ++i) {
      const TraceStep &step = trace.steps[i];
      std::string text = step.text;
      if (!step.context.empty())
        text += " (" + step.context + ")";
      json tfl = {{"location", location(files, step.loc, text, -1)},
                  {"executionOrder", static_cast<int64_t>(i + 1)}};
      perDevice[step.actor.device].push_back(tfl);
    }
    json threadFlows = json::array();
    for (auto &[device, locations] : perDevice)
      threadFlows.push_back({{"id", processName(device, trace.cores)},
                             {"message", {{"text", processName(device, trace.cores)}}},
                             {"locations", locations}});
    return {{"threadFlows", threadFlows}};
  }
};

SarifLog::SarifLog(std::string toolVersion) : impl_(std::make_unique<Impl>()) {
  impl_->version = std::move(toolVersion);
}
SarifLog::~SarifLog() = default;

void SarifLog::addVerdict(const Verdict &verdict, const std::string &file,
                          const support::SourceManager *sources, const std::string &instance) {
  Impl::Files files{file, sources};
  for (const Finding &f : verdict.findings) {
    // The heading, then what a reviewer reading the alert needs without running dkv:
    // the witness, the wrong value and the pattern's usual fix (docs/explain.md).
    const ExplainEntry &entry = explainFinding(f);
    std::string text = f.message;
    if (!f.property.empty())
      text += " [" + f.property + "]";
    if (!f.detail.empty())
      text += "\nWitness: " + f.detail;
    if (!f.wrongValue.empty())
      text += "\nWrong value: " + f.wrongValue;
    text +=
        std::string("\nPattern [") + entry.id + "]: " + entry.title + ". Usual fix: " + entry.fix;
    json related = json::array();
    int id = 1;
    // The calls the primary location was inlined through, then the notes.
    if (sources)
      for (const support::SourceManager::InlineContext &c : sources->inlineChain(f.primary.loc))
        related.push_back(
            Impl::location(files, c.callSite, "in " + c.callee + "(), called here", id++));
    for (const Span &span : f.secondary)
      related.push_back(Impl::location(files, span.loc, span.label, id++));
    json schedule = json::array();
    for (const ScheduleStep &step : f.schedule)
      schedule.push_back(scheduleStepText(step));
    json properties = {{"instance", instance},
                       {"engine", f.engine},
                       {"confirmed", f.confirmed},
                       {"explain", entry.id},
                       {"schedule", schedule}};
    if (!f.property.empty())
      properties["property"] = f.property;
    if (!f.detail.empty())
      properties["detail"] = f.detail;
    if (!f.wrongValue.empty())
      properties["wrongValue"] = f.wrongValue;
    std::string fingerprint = instance + "|" +
                              (f.property.empty() ? std::string(findingKindName(f.kind)) + "@" +
                                                        files.nameOf(f.primary.loc) + ":" +
                                                        std::to_string(f.primary.loc.line)
                                                  : f.property);
    json result = {{"ruleId", findingKindName(f.kind)},
                   {"ruleIndex", static_cast<int>(f.kind)},
                   {"level", "error"},
                   {"message", {{"text", text}}},
                   {"locations", json::array({Impl::location(files, f.primary.loc, "", -1)})},
                   {"partialFingerprints", {{"dkvProperty/v1", fingerprint}}},
                   {"properties", properties}};
    if (!related.empty())
      result["relatedLocations"] = related;
    if (!f.suppressed.empty())
      result["suppressions"] = json::array(
          {{{"kind", "inSource"}, {"status", "accepted"}, {"justification", f.suppressed}}});
    if (!f.trace.steps.empty())
      result["codeFlows"] = json::array({Impl::codeFlow(files, f.trace)});
    impl_->results.push_back(result);
  }
  for (const Suppression &s : verdict.unusedSuppressions)
    addNotification("warning",
                    instance + ": line " + std::to_string(s.loc.line) + ": " +
                        unusedSuppressionMessage(s) + " [unused-suppression]",
                    file);
  if (verdict.status == Verdict::Status::Inconclusive)
    addNotification("warning", instance + ": inconclusive: " + verdict.reason, file);
  // Findings of an incomplete search (a budget, --stop-at-first): the properties not
  // decided were not checked.
  if (verdict.status == Verdict::Status::Findings && !verdict.reason.empty())
    addNotification("warning", instance + ": incomplete search: " + verdict.reason, file);
  if (verdict.status == Verdict::Status::Error)
    addNotification("error", instance + ": internal error: " + verdict.reason, file);
}

void SarifLog::addDiagnostics(const std::vector<support::Diagnostic> &diagnostics,
                              const std::string &file, const support::SourceManager *sources,
                              const std::string &instance) {
  Impl::Files files{file, sources};
  for (const support::Diagnostic &d : diagnostics) {
    if (d.severity == support::Severity::Note)
      continue;
    std::string id = d.id.empty() ? "error" : d.id;
    impl_->diagnosticIds.insert(id);
    json related = json::array();
    int n = 1;
    if (sources)
      for (const support::SourceManager::InlineContext &c : sources->inlineChain(d.range.begin))
        related.push_back(
            Impl::location(files, c.callSite, "in " + c.callee + "(), called here", n++));
    for (const support::Diagnostic &note : d.notes)
      related.push_back(Impl::location(files, note.range.begin, note.message, n++));
    json result = {{"ruleId", id},
                   {"level", severityLevel(d.severity)},
                   {"message", {{"text", d.message + " [" + id + "]"}}},
                   {"locations", json::array({Impl::location(files, d.range.begin, "", -1)})},
                   {"properties", {{"instance", instance}}}};
    if (!related.empty())
      result["relatedLocations"] = related;
    impl_->results.push_back(result);
  }
}

void SarifLog::addNotification(const std::string &level, const std::string &message,
                               const std::string &file) {
  if (level == "error")
    impl_->internalError = true;
  json n = {
      {"level", level},
      {"message", {{"text", message}}},
      {"locations",
       json::array({{{"physicalLocation", {{"artifactLocation", {{"uri", sarifUri(file)}}}}}}})}};
  impl_->notifications.push_back(n);
}

void SarifLog::write(std::ostream &out) const {
  json rules = json::array();
  for (const KindRule &r : kKindRules)
    rules.push_back({{"id", findingKindName(r.kind)},
                     {"name", r.name},
                     {"shortDescription", {{"text", r.shortText}}},
                     {"help", {{"text", kindHelp(r.kind)}}},
                     {"defaultConfiguration", {{"level", "error"}}}});
  // A diagnostic's rule is found by its id (results of static errors have no index,
  // since ids are added as they occur).
  for (const std::string &id : impl_->diagnosticIds)
    rules.push_back(
        {{"id", id},
         {"name", "StaticError"},
         {"shortDescription", {{"text", "dkv input error '" + id + "'"}}},
         {"help",
          {{"text", "The kernel does not load: dkv reports the static error '" + id +
                        "' (exit code 2) and checks nothing else of this instance. "
                        "docs/diagnostics.md describes every diagnostic id with an example."}}},
         {"defaultConfiguration", {{"level", "error"}}}});
  json invocation = {{"executionSuccessful", !impl_->internalError}};
  if (!impl_->notifications.empty())
    invocation["toolExecutionNotifications"] = impl_->notifications;
  json run = {
      {"tool", {{"driver", {{"name", "dkv"}, {"version", impl_->version}, {"rules", rules}}}}},
      {"invocations", json::array({invocation})},
      {"results", impl_->results}};
  json log = {{"$schema", "https://json.schemastore.org/sarif-2.1.0.json"},
              {"version", "2.1.0"},
              {"runs", json::array({run})}};
  out << log.dump(2) << "\n";
}

} // namespace dkv::report
