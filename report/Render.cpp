// Plain-text rendering of findings, traces and verdicts.
#include "report/Render.h"

#include "report/Explain.h"
#include "report/RootCause.h"
#include "report/Wrap.h"
#include "support/Diagnostics.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <ostream>
#include <sstream>

namespace dkv::report {

namespace {

// A device column of the table is never narrower than this; when the width does not
// leave this much per device, the trace is one row per step with the device named.
constexpr size_t kMinColumn = 24;
/// A text trace of more steps than this shows its first kTextTraceHead steps, its last
/// kTextTraceTail and kTextTraceAround on each side of every step the finding marks.
constexpr size_t kTextTraceSteps = 400;
constexpr size_t kTextTraceHead = 20;
constexpr size_t kTextTraceTail = 60;
constexpr int32_t kTextTraceAround = 8;

std::string pad(const std::string &text, size_t width) {
  return text.size() >= width ? text : text + std::string(width - text.size(), ' ');
}

/// Adds `note` to the wrapped `lines` of a cell `width` wide: after the last line when
/// it fits there, else on lines of its own.
void appendNote(std::vector<std::string> &lines, const std::string &note, size_t width) {
  if (note.empty())
    return;
  if (lines.back().size() + 3 + note.size() <= width) {
    lines.back() += "   " + note;
    return;
  }
  for (std::string &l : wrapText(note, width))
    lines.push_back(std::move(l));
}

void trimRight(std::string &line) {
  while (!line.empty() && line.back() == ' ')
    line.pop_back();
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

void renderTrace(std::ostream &out, const Trace &trace, const support::SourceManager *sources,
                 size_t width) {
  int32_t columns = trace.deviceCount;
  for (const TraceStep &step : trace.steps)
    columns = std::max(columns, step.actor.device + 1);
  if (columns <= 0)
    columns = 1;

  // Each step's cell: its text, then the notes (the context where it changes for that
  // device, the semaphore values it changed), then what the finding says of it.
  std::vector<std::string> texts, notes;
  std::vector<std::vector<std::string>> labels(trace.steps.size());
  for (const TraceMark &m : trace.marks)
    if (m.step >= 0 && static_cast<size_t>(m.step) < labels.size())
      labels[m.step].push_back("^ " + m.label);
  std::map<int32_t, std::string> lastContext;
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
    texts.push_back(std::move(text));
    notes.push_back(note.empty() ? note : "[" + note + "]");
  }

  // "  > 12.  ": a marker for the steps the finding is about, the step number.
  const size_t digits = std::to_string(std::max<size_t>(trace.steps.size(), 1)).size();
  const size_t prefix = 2 + 1 + digits + 1 + 2;
  auto number = [&](size_t i) {
    return fmt::format("  {}{:>{}}.  ", labels[i].empty() ? ' ' : '>', i + 1, digits);
  };
  const std::string blank(prefix, ' ');
  // A long trace (a large mesh: tens of thousands of steps) shows its first steps, the
  // steps around those the finding is about and its last steps; a line says how many
  // are left out between them. JSON and the pictures have every step.
  std::vector<bool> shown(trace.steps.size(), true);
  if (trace.steps.size() > kTextTraceSteps) {
    const size_t n = trace.steps.size();
    shown.assign(n, false);
    for (size_t i = 0; i < std::min(n, kTextTraceHead); ++i)
      shown[i] = true;
    for (size_t i = n - std::min(n, kTextTraceTail); i < n; ++i)
      shown[i] = true;
    for (const TraceMark &m : trace.marks)
      for (int32_t i = std::max(0, m.step - kTextTraceAround);
           i <= m.step + kTextTraceAround && static_cast<size_t>(i) < n; ++i)
        shown[i] = true;
  }
  // Whether step i is left out; before the first of a run of left-out steps, the line
  // that says how many.
  auto leftOut = [&](size_t i) {
    if (shown[i])
      return false;
    if (i == 0 || shown[i - 1]) {
      size_t end = i;
      while (end < shown.size() && !shown[end])
        ++end;
      out << blank
          << fmt::format("... {} steps not shown (every step: --format json, --trace-html) ...\n",
                         end - i);
    }
    return true;
  };
  const size_t separators = 3 * static_cast<size_t>(columns - 1);
  const bool table = width > prefix + separators &&
                     (width - prefix - separators) / static_cast<size_t>(columns) >= kMinColumn;

  if (table) {
    // As wide as the widest piece of a cell needs, at most the width's share.
    size_t column = (width - prefix - separators) / static_cast<size_t>(columns);
    size_t widest = 0;
    for (int32_t d = 0; d < columns; ++d)
      widest = std::max(widest, processName(d, trace.cores).size());
    for (size_t i = 0; i < texts.size(); ++i) {
      widest = std::max(widest, texts[i].size() + (notes[i].empty() ? 0 : 3 + notes[i].size()));
      for (const std::string &l : labels[i])
        widest = std::max(widest, l.size());
    }
    column = std::min(column, widest);
    std::string header = blank;
    for (int32_t d = 0; d < columns; ++d)
      header += pad(processName(d, trace.cores), column) + (d + 1 < columns ? " | " : "");
    trimRight(header);
    out << header << "\n";
    for (size_t i = 0; i < trace.steps.size(); ++i) {
      if (leftOut(i))
        continue;
      std::vector<std::string> cell = wrapText(texts[i], column);
      appendNote(cell, notes[i], column);
      for (const std::string &label : labels[i])
        for (std::string &l : wrapText(label, column))
          cell.push_back(std::move(l));
      const int32_t mine = trace.steps[i].actor.device;
      for (size_t k = 0; k < cell.size(); ++k) {
        std::string line = k == 0 ? number(i) : blank;
        for (int32_t d = 0; d < columns; ++d)
          line += pad(d == mine ? cell[k] : std::string(), column) + (d + 1 < columns ? " | " : "");
        trimRight(line);
        out << line << "\n";
      }
    }
  } else {
    // One row per step, the device named, continuation lines under the text.
    const size_t room = width > prefix + kMinColumn ? width - prefix : kMinColumn;
    for (size_t i = 0; i < trace.steps.size(); ++i) {
      if (leftOut(i))
        continue;
      std::vector<std::string> lines = wrapText(
          fmt::format("{}: {}", processName(trace.steps[i].actor.device, trace.cores), texts[i]),
          room);
      appendNote(lines, notes[i], room);
      for (const std::string &label : labels[i])
        for (std::string &l : wrapText(label, room))
          lines.push_back(std::move(l));
      for (size_t k = 0; k < lines.size(); ++k) {
        std::string line = (k == 0 ? number(i) : blank) + lines[k];
        trimRight(line);
        out << line << "\n";
      }
    }
  }
  // A deadlock's stuck waits (a finding with marks is about its steps: the devices
  // blocked at its end are not what it reports).
  if (trace.marks.empty())
    for (const TraceStep &b : trace.blocked) {
      std::string text = fmt::format("stuck after step {}: {}", trace.steps.size(), b.text);
      if (b.loc.valid())
        text += fmt::format(" @{}", b.loc.line);
      const size_t room = width > prefix + kMinColumn ? width - prefix : kMinColumn;
      std::vector<std::string> lines = wrapText(text, room);
      for (size_t k = 0; k < lines.size(); ++k)
        out << (k == 0 ? "  >" + std::string(prefix - 3, ' ') : blank) << lines[k] << "\n";
    }
}

void renderFinding(std::ostream &out, const Finding &finding, const support::SourceManager *sources,
                   const FindingExtras &extras, size_t width) {
  const bool own = !extras.heading.empty();
  const SourceLoc at = own ? extras.headingSpan.loc : finding.primary.loc;
  support::renderHeading(out, sources, at, findingKindName(own ? extras.headingKind : finding.kind),
                         own ? extras.heading : finding.message);
  if (!own && !finding.property.empty())
    out << " [" << finding.property << "]";
  out << "\n";
  support::renderSnippet(out, sources, {at, at});
  support::renderInlineChain(out, sources, at);
  out << extras.at;
  if (!own && !finding.detail.empty())
    out << "  witness: " << finding.detail << "\n";
  if (!finding.suppressed.empty()) {
    // Accepted by the author: the reason instead of the notes and the trace.
    out << "  suppressed: " << finding.suppressed << "\n";
    return;
  }
  if (!own)
    for (const Span &span : finding.secondary) {
      support::renderHeading(out, sources, span.loc, "note", span.label);
      out << "\n";
      support::renderSnippet(out, sources, {span.loc, span.loc});
      support::renderInlineChain(out, sources, span.loc);
    }
  out << extras.notes;
  if (!finding.wrongValue.empty())
    out << "  wrong value: " << finding.wrongValue << "\n";
  out << extras.fix;
  if (!finding.trace.steps.empty()) {
    const size_t steps = finding.trace.steps.size();
    const std::string shortened =
        finding.witnessSteps > 0 && static_cast<size_t>(finding.witnessSteps) != steps
            ? fmt::format(", shortened from {}", finding.witnessSteps)
            : "";
    out << fmt::format("  trace{} ({} step{}{}, engine {}{}{}):\n",
                       extras.traceOf.empty() ? "" : " of " + extras.traceOf, steps,
                       steps == 1 ? "" : "s", shortened, finding.engine,
                       finding.found.empty() ? "" : ", " + finding.found,
                       finding.confirmed     ? ", replayed in the executor"
                       : finding.replayTried ? ", NOT reproduced by the executor: the engines "
                                               "disagree, please report this"
                                             : "");
    renderTrace(out, finding.trace, sources, width);
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
                               bool explain, size_t width) {
  std::ostringstream out;
  renderFinding(out, finding, sources, {}, width);
  if (explain && finding.suppressed.empty())
    renderExplanation(out, finding);
  return out.str();
}

void renderVerdict(std::ostream &out, const Verdict &verdict, const support::SourceManager *sources,
                   const VerdictHeading &heading) {
  // The root causes first (each with its findings): the verdict's line is the last of
  // the report, after every finding.
  if (verdict.status != Verdict::Status::Error)
    for (const RootCause &cause : rootCauses(verdict.findings, sources))
      out << renderCauseBlock(verdict.findings, cause, sources, heading.explain, "", heading.width)
          << "\n";
  renderVerdictStatus(out, verdict, sources, heading);
}

size_t activeRootCauses(const Verdict &verdict, const support::SourceManager *sources) {
  size_t n = 0;
  for (const RootCause &cause : rootCauses(verdict.findings, sources))
    n += verdict.findings[cause.findings.front()].suppressed.empty() ? 1 : 0;
  return n;
}

void renderVerdictStatus(std::ostream &out, const Verdict &verdict,
                         const support::SourceManager *sources, const VerdictHeading &heading,
                         const std::string &prefix) {
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
  out << prefix;
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
    const size_t causes = activeRootCauses(verdict, sources);
    out << fmt::format("{} finding{}, {} root cause{}", active, active == 1 ? "" : "s", causes,
                       causes == 1 ? "" : "s")
        << (suppressed ? fmt::format(", {} suppressed", suppressed) : "") << suffix << "\n";
    queries();
    // Findings from an incomplete search: there may be more, of other kinds too.
    if (!verdict.reason.empty())
      out << prefix << "incomplete search: " << verdict.reason << "\n";
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
  // The root causes over all kernels, by kind, then the findings of all instances:
  // "(2 root causes: 1 race, 1 deadlock; 9 findings)".
  std::vector<std::string> kinds;
  size_t causes = 0, findings = 0;
  for (const auto &[kind, count] : summary.rootCausesByKind)
    if (count > 0) {
      kinds.push_back(fmt::format("{} {}", count, findingKindName(kind)));
      causes += count;
    }
  for (const auto &[kind, count] : summary.findingsByKind)
    findings += count;
  std::string kindText = findings == 0
                             ? ""
                             : fmt::format(" ({}: {}; {})", plural(causes, "root cause"),
                                           fmt::join(kinds, ", "), plural(findings, "finding"));
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
  if (!summary.failing.empty()) {
    out << fmt::format("failing instances ({}):\n", summary.failing.size());
    for (const std::string &line : summary.failing)
      out << "  " << line << "\n";
  }
}

} // namespace dkv::report
