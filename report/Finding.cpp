// Names of finding kinds and schedule steps.
#include "report/Finding.h"

#include <fmt/format.h>

#include <algorithm>

namespace dkv::report {

const char *findingKindName(FindingKind kind) {
  switch (kind) {
  case FindingKind::Race:
    return "race";
  case FindingKind::Deadlock:
    return "deadlock";
  case FindingKind::ExitViolation:
    return "exit-violation";
  case FindingKind::LifetimeViolation:
    return "lifetime-violation";
  }
  return "unknown";
}

std::string processName(int32_t process, int32_t cores) {
  if (cores <= 0)
    return fmt::format("device {}", process);
  return fmt::format("device {} core {}", process / cores, process % cores);
}

std::string scheduleStepText(const ScheduleStep &step) {
  switch (step.kind) {
  case ScheduleStep::Kind::Device:
    return fmt::format("device {}", step.id);
  case ScheduleStep::Kind::Send:
    return fmt::format("send {}", step.id);
  case ScheduleStep::Kind::Land:
    return fmt::format("land {}", step.id);
  }
  return "?";
}

const char *verdictStatusName(Verdict::Status status) {
  switch (status) {
  case Verdict::Status::Verified:
    return "verified";
  case Verdict::Status::Findings:
    return "findings";
  case Verdict::Status::Inconclusive:
    return "inconclusive";
  case Verdict::Status::Error:
    return "error";
  }
  return "unknown";
}

bool sameFinding(const Finding &a, const Finding &b) {
  if (!a.property.empty() || !b.property.empty())
    return a.property == b.property;
  return a.kind == b.kind && a.primary.loc == b.primary.loc;
}

void applySuppressions(Verdict &verdict, const std::vector<Suppression> &suppressions) {
  for (const Suppression &s : suppressions) {
    bool used = false;
    for (Finding &f : verdict.findings)
      if (f.kind == s.kind && f.primary.loc.file == 0 && f.primary.loc.line == s.line) {
        if (f.suppressed.empty())
          f.suppressed = s.reason;
        used = true;
      }
    if (!used)
      verdict.unusedSuppressions.push_back(s);
  }
}

size_t activeFindings(const Verdict &verdict) {
  size_t n = 0;
  for (const Finding &f : verdict.findings)
    n += f.suppressed.empty() ? 1 : 0;
  return n;
}

namespace {
/// Engine finding `g` is at the place of pre-check finding `f`: its primary location,
/// or a secondary one (an exit finding names the semaphore's declaration, where the
/// pre-check reports it).
bool samePlaceAs(const Finding &g, const Finding &f) {
  if (g.primary.loc == f.primary.loc)
    return true;
  for (const Span &span : g.secondary)
    if (span.loc == f.primary.loc)
      return true;
  return false;
}

std::string precheckNote(const Finding &f) { return "static pre-check: " + f.message; }
} // namespace

void addPrecheckNotes(Finding &finding, const std::vector<Finding> &pre) {
  std::vector<Span> notes;
  for (const Finding &f : pre) {
    if (f.kind != finding.kind || !samePlaceAs(finding, f))
      continue;
    const std::string label = precheckNote(f);
    // Once: a finding that already carries the note (streamed, then merged) keeps one.
    if (std::none_of(finding.secondary.begin(), finding.secondary.end(),
                     [&](const Span &s) { return s.loc == f.primary.loc && s.label == label; }))
      notes.push_back({f.primary.loc, label});
  }
  finding.secondary.insert(finding.secondary.end(), notes.begin(), notes.end());
}

void mergePrecheck(Verdict &verdict, std::vector<Finding> pre) {
  const size_t engineCount = verdict.findings.size();
  for (size_t i = 0; i < engineCount; ++i)
    addPrecheckNotes(verdict.findings[i], pre);
  for (Finding &f : pre) {
    bool noted = false;
    for (size_t i = 0; i < engineCount; ++i)
      noted = noted || (verdict.findings[i].kind == f.kind && samePlaceAs(verdict.findings[i], f));
    if (noted)
      continue;
    verdict.findings.push_back(std::move(f));
    verdict.status = Verdict::Status::Findings;
  }
}

} // namespace dkv::report
