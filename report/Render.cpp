// Plain-text rendering of findings, traces and verdicts.
#include "report/Render.h"

#include "report/Explain.h"
#include "support/Diagnostics.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <ostream>

namespace dkv::report {

namespace {

// Widest device column of a timeline; longer step texts are cut with "~".
constexpr size_t kColumnWidth = 44;

std::string fit(const std::string &text, size_t width) {
  if (text.size() <= width)
    return text + std::string(width - text.size(), ' ');
  return text.substr(0, width - 1) + "~";
}

std::string statsLine(const Verdict &verdict, bool timing) {
  std::string line;
  for (const auto &[key, value] : verdict.stats) {
    if (isTimeStatistic(key) && !timing)
      continue; // times differ between runs; the default output is byte-identical
    line += fmt::format("{}{} {}", line.empty() ? "" : ", ", key, value);
  }
  return line;
}

} // namespace

bool isTimeStatistic(const std::string &key) { return key == "time" || key.ends_with(" time"); }

void renderTrace(std::ostream &out, const Trace &trace, const support::SourceManager *sources) {
  int32_t columns = trace.deviceCount;
  for (const TraceStep &step : trace.steps)
    columns = std::max(columns, step.actor.device + 1);
  if (columns <= 0)
    columns = 1;
  // A wide mesh would make an unreadable table: fall back to one line per step.
  bool table = columns <= 4;
  size_t numberWidth = std::to_string(trace.steps.size()).size() + 1;

  // The text of each step, and the notes after the table: the context (invocation,
  // grid point, loop variables) only where it changes for that device, and the
  // semaphore values the step changed.
  std::vector<std::string> texts, notes;
  std::map<int32_t, std::string> lastContext;
  size_t width = 8;
  for (const TraceStep &step : trace.steps) {
    bool dma = step.actor.kind == Actor::Kind::Dma;
    std::string who = fmt::format("dma {}", step.actor.id);
    std::string text =
        dma && step.text.rfind(who + " ", 0) != 0 ? who + ": " + step.text : step.text;
    if (step.loc.valid()) {
      // The main file's lines stay short; a step elsewhere names its file.
      std::string_view file = step.loc.file != 0 && sources ? sources->name(step.loc.file) : "";
      text += file.empty() ? fmt::format(" @{}", step.loc.line)
                           : fmt::format(" @{}:{}", file, step.loc.line);
    }
    std::string note;
    // A DMA's context is that of its start; only a device's own steps advance it.
    std::string &last = lastContext[step.actor.device];
    if (!dma && !step.context.empty() && step.context != last) {
      note = step.context;
      last = step.context;
    }
    for (const auto &[name, value] : step.semValues)
      note += fmt::format("{}{} = {}", note.empty() ? "" : "; ", name, value);
    width = std::max(width, text.size());
    texts.push_back(std::move(text));
    notes.push_back(std::move(note));
  }
  // Fewer columns leave room for wider ones on a terminal of about 130 characters.
  width = std::min(width, columns <= 2 ? kColumnWidth + 12 : kColumnWidth);

  if (table) {
    std::string header = std::string(numberWidth + 2, ' ');
    for (int32_t d = 0; d < columns; ++d)
      header += fit(fmt::format("device {}", d), width) + (d + 1 < columns ? " | " : "");
    while (!header.empty() && header.back() == ' ')
      header.pop_back();
    out << header << "\n";
  }
  for (size_t i = 0; i < trace.steps.size(); ++i) {
    const TraceStep &step = trace.steps[i];
    std::string line = fmt::format("{:>{}}.", i + 1, numberWidth) + "  ";
    if (table) {
      for (int32_t d = 0; d < columns; ++d) {
        bool mine = d == step.actor.device;
        // The acting device's cell is cut only when another cell follows it.
        bool last = d + 1 == columns;
        if (mine && last && notes[i].empty())
          line += texts[i];
        else
          line += fit(mine ? texts[i] : std::string(), width) + (last ? "" : " | ");
      }
    } else {
      line += fmt::format("device {}: {}", step.actor.device, texts[i]);
    }
    if (!notes[i].empty())
      line += "   [" + notes[i] + "]";
    while (!line.empty() && line.back() == ' ')
      line.pop_back();
    out << line << "\n";
  }
}

void renderFinding(std::ostream &out, const Finding &finding,
                   const support::SourceManager *sources) {
  support::renderHeading(out, sources, finding.primary.loc, findingKindName(finding.kind),
                         finding.message);
  if (!finding.property.empty())
    out << " [" << finding.property << "]";
  out << "\n";
  support::renderSnippet(out, sources, {finding.primary.loc, finding.primary.loc});
  if (!finding.detail.empty())
    out << "  witness: " << finding.detail << "\n";
  if (!finding.suppressed.empty()) {
    // Accepted by the author: the reason instead of the notes and the trace.
    out << "  suppressed: " << finding.suppressed << "\n";
    return;
  }
  for (const Span &span : finding.secondary) {
    support::renderHeading(out, sources, span.loc, "note", span.label);
    out << "\n";
    support::renderSnippet(out, sources, {span.loc, span.loc});
  }
  if (!finding.wrongValue.empty())
    out << "  wrong value: " << finding.wrongValue << "\n";
  if (!finding.trace.steps.empty()) {
    const size_t steps = finding.trace.steps.size();
    const std::string shortened =
        finding.witnessSteps > 0 && static_cast<size_t>(finding.witnessSteps) != steps
            ? fmt::format(", shortened from {}", finding.witnessSteps)
            : "";
    out << fmt::format("  trace ({} step{}{}, engine {}{}):\n", steps, steps == 1 ? "" : "s",
                       shortened, finding.engine,
                       finding.confirmed     ? ", replayed in the executor"
                       : finding.replayTried ? ", NOT reproduced by the executor: the engines "
                                               "disagree, please report this"
                                             : "");
    renderTrace(out, finding.trace, sources);
  }
}

void renderVerdict(std::ostream &out, const Verdict &verdict, const support::SourceManager *sources,
                   const VerdictHeading &heading) {
  const std::string &engine = heading.engine;
  std::string stats = statsLine(verdict, heading.timing);
  std::string suffix = stats.empty() ? fmt::format(" (engine {})", engine)
                                     : fmt::format(" (engine {}: {})", engine, stats);
  // A solver's per-query statistics, with --timing only (one line per query).
  auto queries = [&] {
    if (!heading.timing)
      return;
    for (size_t i = 0; i < verdict.queries.size(); ++i) {
      std::string line;
      for (const auto &[key, value] : verdict.queries[i])
        line += fmt::format("{}{} {}", line.empty() ? "" : ", ", key, value);
      out << fmt::format("  query {}: {}\n", i + 1, line);
    }
  };
  switch (verdict.status) {
  case Verdict::Status::Verified:
    out << "verified: " << (heading.instance.empty() ? "" : heading.instance + ": ")
        << "no data race, deadlock, exit or lifetime violation" << suffix << "\n";
    queries();
    break;
  case Verdict::Status::Inconclusive:
    out << "inconclusive: " << verdict.reason << suffix << "\n";
    queries();
    break;
  case Verdict::Status::Error:
    out << "internal error: " << verdict.reason << suffix << "\n";
    return;
  case Verdict::Status::Findings: {
    const size_t active = activeFindings(verdict);
    const size_t suppressed = verdict.findings.size() - active;
    out << fmt::format("{} finding{}", active, active == 1 ? "" : "s")
        << (suppressed ? fmt::format(", {} suppressed", suppressed) : "") << suffix << "\n";
    queries();
    // Findings from an incomplete search: there may be more, of other kinds too.
    if (!verdict.reason.empty())
      out << "incomplete search: " << verdict.reason << "\n";
    break;
  }
  }
  for (const Finding &f : verdict.findings) {
    out << "\n";
    renderFinding(out, f, sources);
    if (heading.explain && f.suppressed.empty())
      renderExplanation(out, f);
  }
  renderUnusedSuppressions(out, verdict, sources);
}

void renderUnusedSuppressions(std::ostream &out, const Verdict &verdict,
                              const support::SourceManager *sources) {
  for (const Suppression &s : verdict.unusedSuppressions) {
    out << "\n";
    support::renderHeading(out, sources, s.loc, "warning", unusedSuppressionMessage(s));
    out << " [unused-suppression]\n";
    support::renderSnippet(out, sources, {s.loc, s.loc});
  }
}

std::string unusedSuppressionMessage(const Suppression &s) {
  return fmt::format("this suppression accepts no finding of this instance: no {} at line {}",
                     findingKindName(s.kind), s.line);
}

void renderSummary(std::ostream &out, const RunSummary &summary, bool timing) {
  std::vector<std::string> kinds;
  for (const auto &[kind, count] : summary.findingsByKind)
    if (count > 0)
      kinds.push_back(fmt::format("{} {}", count, findingKindName(kind)));
  std::string kindText = kinds.empty() ? "none" : fmt::format("{}", fmt::join(kinds, ", "));
  auto plural = [](size_t n, const char *word) {
    return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s");
  };
  out << fmt::format("summary: {}, {}: {} verified, {} with findings ({}), {} inconclusive, {}, "
                     "{}",
                     plural(summary.kernels, "kernel"), plural(summary.instances, "instance"),
                     summary.verified, summary.withFindings, kindText, summary.inconclusive,
                     plural(summary.staticErrors, "static error"),
                     plural(summary.internalErrors, "internal error"));
  if (summary.suppressed)
    out << fmt::format(", {} suppressed", plural(summary.suppressed, "finding"));
  if (timing)
    out << fmt::format("; {:.2f} s", summary.seconds);
  out << "\n";
}

} // namespace dkv::report
