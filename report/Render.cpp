// Plain-text rendering of findings, traces and verdicts.
#include "report/Render.h"

#include "report/Explain.h"
#include "support/Diagnostics.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <ostream>
#include <sstream>

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
      header += fit(processName(d, trace.cores), width) + (d + 1 < columns ? " | " : "");
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
      line += fmt::format("{}: {}", processName(step.actor.device, trace.cores), texts[i]);
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
  support::renderInlineChain(out, sources, finding.primary.loc);
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
    support::renderInlineChain(out, sources, span.loc);
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

std::string semaphoreFormsLine(const std::vector<SemaphoreForm> &forms) {
  // Per form, the semaphores in order of first appearance, each with its devices and
  // the fewest and most sources over them.
  struct Group {
    std::string semaphore;
    std::vector<int32_t> devices;
    size_t fewest = 0, most = 0;
  };
  std::vector<Group> groups[2]; // [0] counting, [1] sum
  for (const SemaphoreForm &f : forms) {
    std::vector<Group> &list = groups[f.counting ? 0 : 1];
    auto g = std::find_if(list.begin(), list.end(),
                          [&](const Group &x) { return x.semaphore == f.semaphore; });
    if (g == list.end()) {
      list.push_back({f.semaphore, {}, f.sources.size(), f.sources.size()});
      g = list.end() - 1;
    }
    g->devices.push_back(f.device);
    g->fewest = std::min(g->fewest, f.sources.size());
    g->most = std::max(g->most, f.sources.size());
  }
  auto deviceRanges = [](std::vector<int32_t> devices) {
    std::sort(devices.begin(), devices.end());
    std::string text = "d";
    for (size_t i = 0; i < devices.size();) {
      size_t j = i;
      while (j + 1 < devices.size() && devices[j + 1] == devices[j] + 1)
        ++j;
      text += (i ? "," : "") + std::to_string(devices[i]) +
              (j > i ? "-" + std::to_string(devices[j]) : "");
      i = j + 1;
    }
    return text;
  };
  std::string line;
  for (int sum = 0; sum < 2; ++sum) {
    if (groups[sum].empty())
      continue;
    line += (line.empty() ? "" : "; ") + std::string(sum ? "sum: " : "counting: ");
    for (size_t i = 0; i < groups[sum].size(); ++i) {
      const Group &g = groups[sum][i];
      line += fmt::format("{}{} ({}", i ? ", " : "", g.semaphore, deviceRanges(g.devices));
      if (sum)
        line += g.fewest == g.most ? fmt::format(", {} sources", g.most)
                                   : fmt::format(", {}-{} sources", g.fewest, g.most);
      line += ")";
    }
  }
  return line;
}

std::string renderFindingBlock(const Finding &finding, const support::SourceManager *sources,
                               bool explain) {
  std::ostringstream out;
  renderFinding(out, finding, sources);
  if (explain && finding.suppressed.empty())
    renderExplanation(out, finding);
  return out.str();
}

void renderVerdict(std::ostream &out, const Verdict &verdict, const support::SourceManager *sources,
                   const VerdictHeading &heading, const std::vector<bool> *shown) {
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
    if (!verdict.semaphoreForms.empty())
      out << "  semaphore forms: " << semaphoreFormsLine(verdict.semaphoreForms) << "\n";
  };
  // The findings not printed during the search (those of the static pre-check that
  // join no engine finding, or all of them without `shown`) come first, as the streamed
  // ones did: the verdict's line is the last of the report, after every finding.
  if (verdict.status != Verdict::Status::Error)
    for (size_t i = 0; i < verdict.findings.size(); ++i)
      if (!shown || i >= shown->size() || !(*shown)[i])
        out << renderFindingBlock(verdict.findings[i], sources, heading.explain) << "\n";
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
  auto plural = [](size_t n, const char *word) {
    return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s");
  };
  // The findings over all instances, by kind: "(5 findings: 3 race, 2 deadlock)".
  std::vector<std::string> kinds;
  size_t findings = 0;
  for (const auto &[kind, count] : summary.findingsByKind)
    if (count > 0) {
      kinds.push_back(fmt::format("{} {}", count, findingKindName(kind)));
      findings += count;
    }
  std::string kindText =
      kinds.empty() ? ""
                    : fmt::format(" ({}: {})", plural(findings, "finding"), fmt::join(kinds, ", "));
  out << fmt::format("summary: {}, {}: {} verified, {} with findings{}, {} inconclusive, {}, "
                     "{}",
                     plural(summary.kernels, "kernel"), plural(summary.instances, "instance"),
                     summary.verified, summary.withFindings, kindText, summary.inconclusive,
                     plural(summary.staticErrors, "static error"),
                     plural(summary.internalErrors, "internal error"));
  if (summary.skipped)
    out << fmt::format(", {} skipped", summary.skipped);
  if (summary.suppressed)
    out << fmt::format(", {} suppressed", plural(summary.suppressed, "finding"));
  if (timing)
    out << fmt::format("; {:.2f} s", summary.seconds);
  if (summary.stoppedEarly)
    out << fmt::format("; stopped at the first finding (--stop-at-first): {} not checked",
                       plural(summary.notChecked, "instance"));
  out << "\n";
}

} // namespace dkv::report
