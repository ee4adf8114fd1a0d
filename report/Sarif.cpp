// SARIF 2.1.0 rendering (nlohmann::json; its objects keep keys sorted, so the output
// is deterministic).
#include "report/Sarif.h"

#include "report/Explain.h"
#include "report/FileNames.h"
#include "report/Render.h"
#include "report/RootCause.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <map>
#include <ostream>
#include <set>

namespace dkv::report {

namespace {

using nlohmann::json;

#ifndef DKV_DOCS_URL
#define DKV_DOCS_URL "https://github.com/YOUR-ORG/dkv/blob/main/docs/"
#endif

struct KindRule {
  FindingKind kind;
  const char *name;
  const char *shortText;
  const char *fullText;
  const char *severity; ///< security-severity-style rank, "0.0" to "10.0"
};

const KindRule kKindRules[] = {
    {FindingKind::Race, "DataRace",
     "Two accesses to the same memory that no barrier, semaphore or program order orders",
     "Two accesses to the same elements of a buffer, at least one of them a write (a store, "
     "a load, or a DMA reading its source or writing its destination), can happen in either "
     "order: no program order, barrier or semaphore wait orders them, so the result depends "
     "on the schedule. dkv shows a schedule that reaches the race and the wrong value a "
     "replay computes.",
     "8.0"},
    {FindingKind::Deadlock, "Deadlock", "A device can never finish",
     "Every device that has not finished is blocked at a wait or a barrier that nothing can "
     "satisfy any more: the kernel hangs. dkv shows a schedule that reaches that state and "
     "the waits that are stuck.",
     "7.5"},
    {FindingKind::ExitViolation, "ExitViolation",
     "A semaphore is non-zero or a DMA is in flight when the kernel exits",
     "A device leaves the kernel (or a run_scoped block) while a DMA it started or a DMA "
     "into it is still in flight, or with a semaphore holding units no wait took: on "
     "hardware the runtime reports a non-zero semaphore at exit, and the bytes land in "
     "memory the next kernel owns.",
     "6.5"},
    {FindingKind::LifetimeViolation, "LifetimeViolation",
     "A DMA or signal reaches a device outside the kernel or semaphore scope",
     "A DMA lands, or a signal arrives, on a device that is not inside the kernel invocation "
     "(or the run_scoped block that owns the destination or the semaphore's slot) at that "
     "moment: the bytes or units reach memory that belongs to something else.",
     "6.5"},
};

/// A kind's help as markdown: its patterns from the explain catalogue (report/Explain.h,
/// docs/explain.md), each with its explanation and usual fix.
std::string kindHelpMarkdown(FindingKind kind) {
  std::string text = "The patterns that show as this finding (docs/explain.md; each result "
                     "names its own in `properties.explain`).";
  for (const ExplainEntry &e : explainCatalogue())
    if (e.kind == kind)
      text +=
          fmt::format("\n\n### `{}`: {}\n\n{}\n\n**Usual fix:** {}", e.id, e.title, e.what, e.fix);
  return text;
}

/// The same as plain text.
std::string kindHelp(FindingKind kind) {
  std::string text = "The patterns that show as this finding (docs/explain.md; each result "
                     "names its own in properties.explain):";
  for (const ExplainEntry &e : explainCatalogue())
    if (e.kind == kind)
      text += std::string("\n\n[") + e.id + "] " + e.title + ". " + e.what + " Usual fix: " + e.fix;
  return text;
}

/// The column after the last character of the code on `loc`'s line (a trailing comment
/// and blanks left out), 1-based: a region's end column; 0 when unknown.
uint32_t endColumn(const support::SourceManager *sources, SourceLoc loc) {
  const support::SourceFile *f = sources ? sources->find(loc.file) : nullptr;
  if (!f || loc.line == 0 || loc.col == 0)
    return 0;
  std::string_view line = f->lineText(loc.line);
  const bool python = f->name().ends_with(".py");
  size_t end = line.size();
  if (size_t c = line.find(python ? "#" : "//"); c != std::string_view::npos)
    end = c;
  while (end > 0 && (line[end - 1] == ' ' || line[end - 1] == '\t' || line[end - 1] == '\r'))
    --end;
  return std::max<uint32_t>(static_cast<uint32_t>(end) + 1, loc.col + 1);
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

/// A link of a SARIF message to related location `id`: `[text](id)`, the square
/// brackets inside the text escaped (SARIF 2.1.0 3.11.6), e.g. those of "[exit.0]".
std::string messageLink(const std::string &text, int id) {
  std::string escaped;
  for (char c : text) {
    if (c == '[' || c == ']' || c == '\\')
      escaped += '\\';
    escaped += c;
  }
  return fmt::format("[{}]({})", escaped, id);
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
  std::map<std::string, int> fingerprints; ///< how often each was given (kept unique)
  bool internalError = false;

  using Files = FileNames;

  static json physical(const Files &files, SourceLoc loc, SourceLoc end = {}) {
    json p = {{"artifactLocation", {{"uri", sarifUri(files.nameOf(loc))}}}};
    if (loc.valid()) {
      json region = {{"startLine", loc.line}};
      if (loc.col > 0) {
        region["startColumn"] = loc.col;
        // The end: the range's (a diagnostic), else the end of the code on the line.
        if (end.valid() && end.file == loc.file &&
            (end.line > loc.line || (end.line == loc.line && end.col > loc.col))) {
          region["endLine"] = end.line;
          region["endColumn"] = end.col; // the range's end is exclusive
        } else if (uint32_t e = endColumn(files.sources, loc)) {
          region["endLine"] = loc.line;
          region["endColumn"] = e;
        }
      }
      p["region"] = region;
    }
    return p;
  }

  static json location(const Files &files, SourceLoc loc, const std::string &message, int id,
                       SourceLoc end = {}) {
    json l = {{"physicalLocation", physical(files, loc, end)}};
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

void SarifLog::addCause(const std::vector<Finding> &findings, const RootCause &cause,
                        const std::string &file, const support::SourceManager *sources,
                        const std::vector<std::string> &instances, const std::string &at) {
  Impl::Files files{file, sources};
  const Finding &f = findings[cause.findings.front()];
  const ExplainEntry &entry = explainFinding(f);
  // Related locations, each linked from the message: the calls the primary location
  // was inlined through, the cause's other findings (with its own heading: all of
  // them), then the main finding's notes.
  json related = json::array();
  std::vector<std::string> consequences, notes;
  int id = 1;
  if (sources)
    for (const support::SourceManager::InlineContext &c : sources->inlineChain(cause.primary.loc)) {
      const std::string label = "in " + c.callee + "(), called here";
      related.push_back(Impl::location(files, c.callSite, label, id));
      notes.push_back(messageLink(label, id++));
    }
  for (size_t k = cause.ownHeading() ? 0 : 1; k < cause.findings.size(); ++k) {
    const Finding &g = findings[cause.findings[k]];
    std::string text = fmt::format("{}: {}", findingKindName(g.kind), g.message);
    if (!g.property.empty())
      text += " [" + g.property + "]";
    related.push_back(Impl::location(files, g.primary.loc, text, id));
    consequences.push_back(messageLink(text, id++));
  }
  if (!cause.ownHeading())
    for (const Span &span : f.secondary) {
      related.push_back(Impl::location(files, span.loc, span.label, id));
      notes.push_back(messageLink(span.label, id++));
    }
  // The heading, then what a reviewer reading the alert needs without running dkv: the
  // instances, the witness, the other findings of the cause, the wrong value, the fix
  // and the pattern's usual fix (docs/explain.md).
  std::string text = cause.message;
  if (!cause.ownHeading() && !f.property.empty())
    text += " [" + f.property + "]";
  if (!at.empty())
    text += " (at " + at + ")";
  if (!notes.empty())
    text += "; see " + fmt::format("{}", fmt::join(notes, ", "));
  if (!f.detail.empty())
    text += "\nWitness: " + f.detail;
  if (!consequences.empty())
    text += fmt::format("\n{}: {}", cause.ownHeading() ? "Findings" : "Also",
                        fmt::join(consequences, "; "));
  if (!f.wrongValue.empty())
    text += "\nWrong value: " + f.wrongValue;
  if (f.fix)
    text += "\nFix: " + f.fix->summary + " (verified at " + f.fix->verifiedAt + ")";
  else if (!f.noFix.empty())
    text += "\nNo verified fix: " + f.noFix;
  text += std::string("\nPattern [") + entry.id + "]: " + entry.title + ". Usual fix: " + entry.fix;

  json schedule = json::array();
  for (const ScheduleStep &step : f.schedule)
    schedule.push_back(scheduleStepText(step));
  json ids = json::array();
  for (size_t i : cause.findings)
    if (!findings[i].property.empty())
      ids.push_back(findings[i].property);
  json properties = {{"instances", instances}, {"engine", f.engine}, {"confirmed", f.confirmed},
                     {"explain", entry.id},    {"findings", ids},    {"schedule", schedule}};
  if (!at.empty())
    properties["at"] = at;
  if (!f.property.empty())
    properties["property"] = f.property;
  if (!f.detail.empty())
    properties["detail"] = f.detail;
  if (!f.wrongValue.empty())
    properties["wrongValue"] = f.wrongValue;
  // Stable over runs and unrelated edits (causeFingerprint); unique in the log.
  std::string fingerprint = causeFingerprint(cause, sources);
  if (int n = impl_->fingerprints[fingerprint]++; n > 0)
    fingerprint += ":" + std::to_string(n + 1);
  json result = {{"ruleId", findingKindName(cause.kind)},
                 {"ruleIndex", static_cast<int>(cause.kind)},
                 {"level", "error"},
                 {"message", {{"text", text}}},
                 {"locations", json::array({Impl::location(files, cause.primary.loc, "", -1)})},
                 {"partialFingerprints", {{"dkvRootCause/v1", fingerprint}}},
                 {"properties", properties}};
  if (!related.empty())
    result["relatedLocations"] = related;
  if (!f.suppressed.empty())
    result["suppressions"] = json::array(
        {{{"kind", "inSource"}, {"status", "accepted"}, {"justification", f.suppressed}}});
  if (!f.trace.steps.empty())
    result["codeFlows"] = json::array({Impl::codeFlow(files, f.trace)});
  if (f.fix) {
    // Each line edit as a replacement of whole lines (an insertion: an empty region at
    // the start of the line it goes before).
    json replacements = json::array();
    for (const LineEdit &e : f.fix->edits) {
      std::string inserted;
      for (const std::string &line : e.lines)
        inserted += line + "\n";
      json region = {{"startLine", e.firstLine},
                     {"startColumn", 1},
                     {"endLine", e.lastLine + 1},
                     {"endColumn", 1}};
      replacements.push_back(
          {{"deletedRegion", region}, {"insertedContent", {{"text", inserted}}}});
    }
    result["fixes"] = json::array(
        {{{"description", {{"text", f.fix->summary}}},
          {"artifactChanges", json::array({{{"artifactLocation", {{"uri", sarifUri(f.fix->file)}}},
                                            {"replacements", replacements}}})}}});
  }
  impl_->results.push_back(result);
}

void SarifLog::addVerdict(const Verdict &verdict, const std::string &file,
                          const support::SourceManager *sources, const std::string &instance) {
  (void)sources;
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
    std::vector<std::string> links;
    int n = 1;
    auto relate = [&](SourceLoc loc, const std::string &label) {
      related.push_back(Impl::location(files, loc, label, n));
      links.push_back(messageLink(label, n++));
    };
    if (sources)
      for (const support::SourceManager::InlineContext &c : sources->inlineChain(d.range.begin))
        relate(c.callSite, "in " + c.callee + "(), called here");
    for (const support::Diagnostic &note : d.notes)
      relate(note.range.begin, note.message);
    json result = {
        {"ruleId", id},
        {"level", severityLevel(d.severity)},
        {"message",
         {{"text", d.message + " [" + id + "]" +
                       (links.empty() ? "" : fmt::format("; see {}", fmt::join(links, ", ")))}}},
        {"locations", json::array({Impl::location(files, d.range.begin, "", -1, d.range.end)})},
        {"partialFingerprints",
         {{"dkvDiagnostic/v1", locationFingerprint({id}, {d.range.begin}, sources)}}},
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
  const std::string helpUri = std::string(DKV_DOCS_URL) + "explain.md";
  for (const KindRule &r : kKindRules)
    rules.push_back(
        {{"id", findingKindName(r.kind)},
         {"name", r.name},
         {"shortDescription", {{"text", r.shortText}}},
         {"fullDescription", {{"text", r.fullText}}},
         {"help", {{"text", kindHelp(r.kind)}, {"markdown", kindHelpMarkdown(r.kind)}}},
         {"helpUri", helpUri},
         {"defaultConfiguration", {{"level", "error"}}},
         {"properties",
          {{"tags", json::array({"concurrency", "correctness", findingKindName(r.kind)})},
           {"precision", "very-high"},
           {"problem.severity", "error"},
           {"security-severity", r.severity}}}});
  // A diagnostic's rule is found by its id (results of static errors have no index,
  // since ids are added as they occur).
  for (const std::string &id : impl_->diagnosticIds)
    rules.push_back(
        {{"id", id},
         {"name", "StaticError"},
         {"shortDescription", {{"text", "The kernel does not load: " + id}}},
         {"fullDescription",
          {{"text", "dkv reports the static error '" + id +
                        "' (exit code 2) and checks nothing else of this instance: the kernel "
                        "does not parse, type-check or lower, or uses a construct dkv does not "
                        "support."}}},
         {"help",
          {{"text", "The kernel does not load: dkv reports the static error '" + id +
                        "' (exit code 2) and checks nothing else of this instance. "
                        "docs/diagnostics.md describes every diagnostic id with an example."},
           {"markdown", "The kernel does not load: dkv reports the static error `" + id +
                            "` (exit code 2) and checks nothing else of this instance. "
                            "`docs/diagnostics.md` describes every diagnostic id with an "
                            "example."}}},
         {"helpUri", std::string(DKV_DOCS_URL) + "diagnostics.md"},
         {"defaultConfiguration", {{"level", "error"}}},
         {"properties",
          {{"tags", json::array({"correctness", "static-error"})},
           {"precision", "very-high"},
           {"problem.severity", "error"},
           {"security-severity", "5.0"}}}});
  json invocation = {{"executionSuccessful", !impl_->internalError}};
  if (!impl_->notifications.empty())
    invocation["toolExecutionNotifications"] = impl_->notifications;
  json run = {{"tool",
               {{"driver",
                 {{"name", "dkv"},
                  {"version", impl_->version},
                  {"informationUri", std::string(DKV_DOCS_URL) + "ci.md"},
                  {"rules", rules}}}}},
              {"invocations", json::array({invocation})},
              {"results", impl_->results}};
  json log = {{"$schema", "https://json.schemastore.org/sarif-2.1.0.json"},
              {"version", "2.1.0"},
              {"runs", json::array({run})}};
  out << log.dump(2) << "\n";
}

} // namespace dkv::report
