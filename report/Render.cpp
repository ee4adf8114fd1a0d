// Plain-text rendering of findings, traces and verdicts.
#include "report/Render.h"

#include "support/Diagnostics.h"

#include <fmt/format.h>

#include <algorithm>
#include <ostream>

namespace dkv::report {

namespace {

// Width of one device column of a timeline; longer step texts are cut with "~".
constexpr size_t kColumnWidth = 34;

std::string fit(const std::string &text, size_t width) {
  if (text.size() <= width)
    return text + std::string(width - text.size(), ' ');
  return text.substr(0, width - 1) + "~";
}

std::string statsLine(const Verdict &verdict) {
  std::string line;
  for (const auto &[key, value] : verdict.stats)
    line += fmt::format("{}{} {}", line.empty() ? "" : ", ", key, value);
  return line;
}

} // namespace

void renderTrace(std::ostream &out, const Trace &trace) {
  int32_t columns = trace.deviceCount;
  for (const TraceStep &step : trace.steps)
    columns = std::max(columns, step.actor.device + 1);
  if (columns <= 0)
    columns = 1;
  // A wide mesh would make an unreadable table: fall back to one line per step.
  bool table = columns <= 4;
  size_t numberWidth = std::to_string(trace.steps.size()).size() + 1;
  if (table) {
    std::string header = std::string(numberWidth + 2, ' ');
    for (int32_t d = 0; d < columns; ++d)
      header += fit(fmt::format("device {}", d), kColumnWidth) + (d + 1 < columns ? " | " : "");
    while (!header.empty() && header.back() == ' ')
      header.pop_back();
    out << header << "\n";
  }
  for (size_t i = 0; i < trace.steps.size(); ++i) {
    const TraceStep &step = trace.steps[i];
    std::string who = step.actor.kind == Actor::Kind::Dma ? fmt::format("dma {}: ", step.actor.id)
                                                          : std::string();
    std::string text = who + step.text;
    if (step.loc.valid())
      text += fmt::format(" @{}", step.loc.line);
    std::string number = fmt::format("{:>{}}.", i + 1, numberWidth);
    std::string line = number + "  ";
    if (table) {
      for (int32_t d = 0; d < columns; ++d) {
        std::string cell = d == step.actor.device ? text : std::string();
        if (d == step.actor.device && d + 1 == columns) {
          line += cell; // the last column is not cut
          break;
        }
        line += fit(cell, kColumnWidth) + (d + 1 < columns ? " | " : "");
      }
    } else {
      line += fmt::format("device {}: {}", step.actor.device, text);
    }
    while (!line.empty() && line.back() == ' ')
      line.pop_back();
    out << line;
    if (!step.context.empty() || !step.semValues.empty()) {
      std::string extra;
      if (!step.context.empty())
        extra += step.context;
      for (const auto &[name, value] : step.semValues)
        extra += fmt::format("{}{} = {}", extra.empty() ? "" : "; ", name, value);
      out << "   [" << extra << "]";
    }
    out << "\n";
  }
}

void renderFinding(std::ostream &out, const Finding &finding, const support::SourceFile *source) {
  support::renderHeading(out, source, finding.primary.loc, findingKindName(finding.kind),
                         finding.message);
  out << "\n";
  support::renderSnippet(out, source, {finding.primary.loc, finding.primary.loc});
  for (const Span &span : finding.secondary) {
    support::renderHeading(out, source, span.loc, "note", span.label);
    out << "\n";
    support::renderSnippet(out, source, {span.loc, span.loc});
  }
  if (!finding.wrongValue.empty())
    out << "  wrong value: " << finding.wrongValue << "\n";
  if (!finding.trace.steps.empty()) {
    out << fmt::format("  trace ({} step{}, engine {}{}):\n", finding.trace.steps.size(),
                       finding.trace.steps.size() == 1 ? "" : "s", finding.engine,
                       finding.confirmed ? ", replayed in the executor" : "");
    renderTrace(out, finding.trace);
  }
}

void renderVerdict(std::ostream &out, const Verdict &verdict, const support::SourceFile *source,
                   const std::string &engine) {
  std::string stats = statsLine(verdict);
  std::string suffix = stats.empty() ? fmt::format(" (engine {})", engine)
                                     : fmt::format(" (engine {}: {})", engine, stats);
  switch (verdict.status) {
  case Verdict::Status::Verified:
    out << "verified: no data race, deadlock, exit or lifetime violation" << suffix << "\n";
    return;
  case Verdict::Status::Inconclusive:
    out << "inconclusive: " << verdict.reason << suffix << "\n";
    break;
  case Verdict::Status::Findings:
    out << fmt::format("{} finding{}", verdict.findings.size(),
                       verdict.findings.size() == 1 ? "" : "s")
        << suffix << "\n";
    break;
  }
  for (const Finding &f : verdict.findings) {
    out << "\n";
    renderFinding(out, f, source);
  }
}

} // namespace dkv::report
