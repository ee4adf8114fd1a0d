// Root causes of findings and their text (docs/explain.md "Root causes").
#include "report/RootCause.h"

#include "report/Explain.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <ostream>
#include <set>
#include <sstream>

namespace dkv::report {

namespace {

using What = FindingFacts::What;

/// Builds the key of a cause: its rule and the facts, locations as "file:line:col"
/// (mapped through the LocMap for the checked file).
class KeyWriter {
public:
  KeyWriter(const support::SourceManager *sources, const LocMap &map)
      : sources_(sources), map_(map) {}
  std::string loc(SourceLoc loc) const {
    if (loc.file == 0 && map_ && loc.valid() && !map_(loc))
      return fmt::format("new@{}", loc.line); // a line the edit inserted: no old place
    const support::SourceFile *f = sources_ ? sources_->find(loc.file) : nullptr;
    return fmt::format("{}:{}:{}", f ? f->name() : std::to_string(loc.file), loc.line, loc.col);
  }

private:
  const support::SourceManager *sources_;
  const LocMap &map_;
};

/// The start a DMA-semaphore exit finding is about: the one start that counts on it.
std::optional<std::pair<SourceLoc, bool>> soleCounter(const FindingFacts &f) {
  if (f.countedBy.empty())
    return std::nullopt;
  for (size_t i = 1; i < f.countedBy.size(); ++i)
    if (f.countedBy[i] != f.countedBy[0])
      return std::nullopt;
  bool dst = false;
  for (size_t i = 0; i < f.countedBy.size(); ++i)
    dst = dst || f.countedDst[i];
  return std::make_pair(f.countedBy[0], dst);
}

std::string sideText(bool send, bool recv, bool local) {
  if (local || (send && recv))
    return "";
  return recv ? " on its receive side (wait_recv)" : " on its send side (wait_send)";
}

} // namespace

std::vector<RootCause> rootCauses(const std::vector<Finding> &findings,
                                  const support::SourceManager *sources, const LocMap &map) {
  KeyWriter w(sources, map);
  // Each finding's cause key; LandOutside findings join a DMA's cause only when that
  // cause has its receive side, so they are keyed second.
  std::vector<std::string> keys(findings.size());
  std::vector<std::vector<SourceLoc>> keyLocs(findings.size());
  std::vector<RootCause::Rule> rules(findings.size(), RootCause::Rule::Single);
  std::set<std::string> receiveSide; // "dma|..." causes that include a receive side
  // A DMA whose receive side adds a unit to a regular semaphore: the "units|..." cause
  // its open receive side joins (and that semaphore's declaration), by the DMA's start.
  std::map<std::string, std::pair<std::string, SourceLoc>> unitReceive;
  for (size_t i = 0; i < findings.size(); ++i) {
    const Finding &f = findings[i];
    const FindingFacts &x = f.facts;
    if (!f.suppressed.empty())
      continue;
    if ((x.what == What::ExitDma && x.unitSemaphore) ||
        (x.what == What::ExitSemaphore && !x.dmaSemaphore && !x.countedBy.empty())) {
      // Regular semaphores that DMAs add units to (TPU v6+): one cause per semaphore,
      // its DMAs' open sides and its value left at the exit.
      keys[i] = "units|" + w.loc(x.semaphore);
      keyLocs[i] = {x.semaphore};
      rules[i] = RootCause::Rule::UnwaitedUnits;
      if (x.what == What::ExitDma && x.dst)
        unitReceive["dma|" + w.loc(x.dma)] = {keys[i], x.semaphore};
    } else if (x.what == What::ExitDma) {
      keys[i] = "dma|" + w.loc(x.dma);
      keyLocs[i] = {x.dma};
      rules[i] = RootCause::Rule::UnwaitedDma;
      if (x.dst)
        receiveSide.insert(keys[i]);
    } else if (x.what == What::ExitSemaphore && x.dmaSemaphore) {
      if (auto counter = soleCounter(x)) {
        keys[i] = "dma|" + w.loc(counter->first);
        keyLocs[i] = {counter->first};
        rules[i] = RootCause::Rule::UnwaitedDma;
        if (counter->second)
          receiveSide.insert(keys[i]);
      }
    } else if ((x.what == What::ExitSemaphore && !x.dmaSemaphore) ||
               x.what == What::SignalOutside) {
      keys[i] = "signal|" + w.loc(x.semaphore);
      keyLocs[i] = {x.semaphore};
      rules[i] = RootCause::Rule::UntakenSignal;
    } else if (x.what == What::Race) {
      // One unordered pair of accesses: each side's place, role and buffer.
      std::string mine = fmt::format("{} {}", w.loc(x.access), x.accessRole);
      std::string theirs =
          fmt::format("{} {}", w.loc(x.dma), x.dst ? "dma-destination" : "dma-source");
      std::vector<SourceLoc> locs = {x.access, x.dma};
      if (theirs < mine) {
        std::swap(mine, theirs);
        std::swap(locs[0], locs[1]);
      }
      keys[i] = fmt::format("race|{}|{}|{}", mine, theirs, x.buffer);
      keyLocs[i] = locs;
      rules[i] = RootCause::Rule::RacePair;
    }
  }
  for (size_t i = 0; i < findings.size(); ++i) {
    const FindingFacts &x = findings[i].facts;
    if (findings[i].suppressed.empty() && x.what == What::LandOutside &&
        receiveSide.count("dma|" + w.loc(x.dma))) {
      keys[i] = "dma|" + w.loc(x.dma);
      keyLocs[i] = {x.dma};
      rules[i] = RootCause::Rule::UnwaitedDma;
    } else if (auto it = unitReceive.find("dma|" + w.loc(x.dma)); findings[i].suppressed.empty() &&
                                                                  x.what == What::LandOutside &&
                                                                  it != unitReceive.end()) {
      keys[i] = it->second.first;
      keyLocs[i] = {it->second.second}; // as the cause's other findings: the semaphore
      rules[i] = RootCause::Rule::UnwaitedUnits;
    }
  }
  // Every other finding is a cause of its own: its kind, place and the places it names,
  // numbered among the findings with the same (the verdict's order is by kind,
  // location and property id).
  std::map<std::string, int> seen;
  for (size_t i = 0; i < findings.size(); ++i) {
    if (!keys[i].empty())
      continue;
    const Finding &f = findings[i];
    std::string key = fmt::format("one|{}|{}", findingKindName(f.kind), w.loc(f.primary.loc));
    keyLocs[i] = {f.primary.loc};
    for (const Span &s : f.secondary)
      if (s.label.rfind("static pre-check: ", 0) != 0) {
        key += "|" + w.loc(s.loc);
        keyLocs[i].push_back(s.loc);
      }
    if (!f.suppressed.empty())
      key += "|suppressed";
    keys[i] = fmt::format("{}#{}", key, seen[key]++);
  }

  std::vector<RootCause> causes;
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < findings.size(); ++i) {
    auto [it, fresh] = index.emplace(keys[i], causes.size());
    if (fresh) {
      RootCause c;
      c.rule = rules[i];
      c.key = keys[i];
      c.keyLocs = keyLocs[i];
      causes.push_back(std::move(c));
    }
    causes[it->second].findings.push_back(i);
  }
  for (RootCause &c : causes) {
    const Finding &main = findings[c.findings.front()];
    c.kind = main.kind;
    c.message = c.mainMessage = main.message;
    c.primary = main.primary;
    if (c.findings.size() == 1 && c.rule != RootCause::Rule::RacePair)
      c.rule = RootCause::Rule::Single;
    if (c.findings.size() < 2)
      continue;
    if (c.rule == RootCause::Rule::UnwaitedDma) {
      bool send = false, recv = false, waited = false, local = false, kernelExit = true;
      SourceLoc dma = c.keyLocs.front();
      for (size_t i : c.findings) {
        const FindingFacts &x = findings[i].facts;
        local = local || x.local;
        if (x.what == What::ExitDma) {
          (x.dst ? recv : send) = true;
          waited = waited || x.waited;
          kernelExit = kernelExit && x.kernelExit;
        } else if (x.what == What::ExitSemaphore) {
          (soleCounter(x)->second ? recv : send) = true;
          waited = waited || x.waited;
          kernelExit = kernelExit && x.kernelExit;
        }
      }
      const char *what = local ? "local copy" : "dma";
      c.kind = FindingKind::ExitViolation;
      c.message = waited ? fmt::format("{} started at line {} is not waited for{} before {}", what,
                                       dma.line, sideText(send, recv, local),
                                       kernelExit ? "the kernel exits" : "its block ends")
                         : fmt::format("{} started at line {} is never waited{}", what, dma.line,
                                       sideText(send, recv, local));
      c.primary = {dma, fmt::format("the {} starts here", what)};
    } else if (c.rule == RootCause::Rule::UnwaitedUnits) {
      // The DMAs that add units to the semaphore, from every finding of the cause.
      std::vector<SourceLoc> dmas;
      std::string name;
      bool waited = false, kernelExit = true;
      SourceLoc declared;
      for (size_t i : c.findings) {
        const FindingFacts &x = findings[i].facts;
        if (x.what == What::ExitDma) {
          dmas.push_back(x.dma);
        } else if (x.what == What::ExitSemaphore) {
          dmas.insert(dmas.end(), x.countedBy.begin(), x.countedBy.end());
        } else {
          continue;
        }
        name = x.semaphoreName;
        declared = x.semaphore;
        waited = waited || x.waited;
        kernelExit = kernelExit && x.kernelExit;
      }
      std::sort(dmas.begin(), dmas.end());
      dmas.erase(std::unique(dmas.begin(), dmas.end()), dmas.end());
      std::string lines;
      for (size_t k = 0; k < dmas.size(); ++k)
        lines += fmt::format("{}{}",
                             k == 0                 ? ""
                             : k + 1 == dmas.size() ? " and "
                                                    : ", ",
                             dmas[k].line);
      const std::string who = dmas.size() == 1 ? fmt::format("the dma started at line {}", lines)
                                               : fmt::format("the dmas started at lines {}", lines);
      c.kind = FindingKind::ExitViolation;
      c.message = waited
                      ? fmt::format("regular semaphore {} is not waited for all the units {} "
                                    "add{}, before {}",
                                    name, who, dmas.size() == 1 ? "s" : "",
                                    kernelExit ? "the kernel exits" : "its block ends")
                      : fmt::format("regular semaphore {} is never waited for the units {} add{}",
                                    name, who, dmas.size() == 1 ? "s" : "");
      c.primary = {declared, "semaphore declared here"};
    } else if (c.rule == RootCause::Rule::UntakenSignal) {
      std::string name;
      SourceLoc signal;
      for (size_t i : c.findings) {
        const FindingFacts &x = findings[i].facts;
        name = x.semaphoreName;
        if (x.what == What::SignalOutside && !signal.valid())
          signal = x.access;
      }
      c.kind = FindingKind::ExitViolation;
      c.message = fmt::format("a signal of {} is never taken by a wait", name);
      c.primary = signal.valid() ? Span{signal, "the signal is sent here"}
                                 : Span{c.keyLocs.front(), "semaphore declared here"};
    }
  }
  return causes;
}

std::vector<FileCause> fileCauses(const std::vector<InstanceReport> &instances) {
  std::vector<FileCause> out;
  std::map<std::string, size_t> index;
  for (size_t n = 0; n < instances.size(); ++n) {
    const InstanceReport &r = instances[n];
    if (!r.verdict || r.verdict->status == Verdict::Status::Error)
      continue;
    std::vector<RootCause> causes = rootCauses(r.verdict->findings, r.sources);
    for (size_t k = 0; k < causes.size(); ++k) {
      auto [it, fresh] = index.emplace(causes[k].key, out.size());
      if (fresh) {
        FileCause c;
        c.first = n;
        c.cause = causes[k];
        out.push_back(std::move(c));
      }
      out[it->second].instances.push_back(n);
      out[it->second].causeIndex.push_back(k);
      out[it->second].mainFinding.push_back(causes[k].findings.front());
    }
  }
  return out;
}

std::string describeInstances(const std::vector<InstanceReport> &instances,
                              const std::vector<size_t> &which) {
  // Per variant (in order of appearance), its device counts (compressed) or, for an
  // instance without --devices, the variant alone.
  std::vector<std::pair<std::string, std::vector<int64_t>>> variants;
  for (size_t n : which) {
    const InstanceReport &r = instances[n];
    auto it = std::find_if(variants.begin(), variants.end(),
                           [&](const auto &v) { return v.first == r.variant; });
    if (it == variants.end()) {
      variants.push_back({r.variant, {}});
      it = variants.end() - 1;
    }
    if (r.devices)
      it->second.push_back(*r.devices);
  }
  std::vector<std::string> parts;
  for (auto &[variant, devices] : variants) {
    std::string text;
    std::sort(devices.begin(), devices.end());
    for (size_t i = 0; i < devices.size();) {
      size_t j = i;
      while (j + 1 < devices.size() && devices[j + 1] == devices[j] + 1)
        ++j;
      text += (i ? ", " : "") + std::to_string(devices[i]) +
              (j > i ? (j == i + 1 ? ", " : "..") + std::to_string(devices[j]) : "");
      i = j + 1;
    }
    if (!devices.empty())
      text += devices.size() == 1 && devices[0] == 1 ? " device" : " devices";
    if (!variant.empty())
      text += (text.empty() ? "" : " with ") + variant;
    parts.push_back(text);
  }
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i)
    out += (i ? "; " : "") + parts[i];
  return out;
}

void renderFix(std::ostream &out, const Fix &fix, const support::SourceManager *sources) {
  std::string verified =
      fix.kernelVerifies
          ? fmt::format("verified: the kernel then verifies at {}", fix.verifiedAt)
          : fmt::format("verified at {}: it removes this finding and adds none; {} other "
                        "root cause{} remain{}",
                        fix.verifiedAt, fix.remaining, fix.remaining == 1 ? "" : "s",
                        fix.remaining == 1 ? "s" : "");
  support::renderHeading(out, sources, fix.loc, "fix", fix.summary + " (" + verified + ")");
  out << "\n";
  std::istringstream diff(fix.diff);
  std::string line;
  while (std::getline(diff, line))
    out << "  " << line << "\n";
}

std::string renderCauseBlock(const std::vector<Finding> &findings, const RootCause &cause,
                             const support::SourceManager *sources, bool explain,
                             const std::string &at, size_t width) {
  const Finding &main = findings[cause.findings.front()];
  FindingExtras extras;
  if (!at.empty())
    extras.at = "  at " + at + "\n";
  // The other findings of the cause: notes with their kind, message and id, and the
  // witness that shows each.
  std::ostringstream notes;
  const size_t firstNote = cause.ownHeading() ? 0 : 1;
  for (size_t k = firstNote; k < cause.findings.size(); ++k) {
    const Finding &f = findings[cause.findings[k]];
    support::renderHeading(notes, sources, f.primary.loc, "note",
                           fmt::format("{}: {}", findingKindName(f.kind), f.message));
    if (!f.property.empty())
      notes << " [" << f.property << "]";
    notes << "\n";
    if (!f.detail.empty())
      notes << "    witness: " << f.detail << "\n";
  }
  extras.notes = notes.str();
  std::ostringstream fix;
  if (main.fix)
    renderFix(fix, *main.fix, sources);
  else if (!main.noFix.empty())
    fix << "  no verified fix: " << main.noFix << "\n";
  extras.fix = fix.str();
  if (cause.ownHeading()) {
    extras.heading = cause.message;
    extras.headingKind = cause.kind;
    extras.headingSpan = cause.primary;
    extras.traceOf = main.property;
  }
  std::ostringstream out;
  renderFinding(out, main, sources, extras, width);
  if (explain && main.suppressed.empty())
    renderExplanation(out, main);
  return out.str();
}

std::string shortLine(const std::vector<Finding> &findings, const RootCause &cause,
                      const support::SourceManager *sources, const std::string &at) {
  const Finding &main = findings[cause.findings.front()];
  std::ostringstream out;
  std::string message = cause.message;
  if (cause.ownHeading())
    message += fmt::format(" ({} findings)", cause.findings.size());
  if (!at.empty())
    message += " at " + at;
  if (!main.suppressed.empty())
    message += " (suppressed: " + main.suppressed + ")";
  support::renderHeading(out, sources, cause.primary.loc, findingKindName(cause.kind), message);
  if (!main.property.empty())
    out << " [" << main.property << "]";
  out << "\n";
  return out.str();
}

std::string locationFingerprint(const std::vector<std::string> &parts,
                                const std::vector<SourceLoc> &locs,
                                const support::SourceManager *sources) {
  // FNV-1a, 64 bits, over the parts; the text of each location's line, trimmed, stands
  // for its line number.
  uint64_t h = 1469598103934665603ull;
  auto mix = [&](std::string_view text) {
    for (unsigned char c : text) {
      h ^= c;
      h *= 1099511628211ull;
    }
    h ^= 0xff;
    h *= 1099511628211ull;
  };
  for (const std::string &part : parts)
    mix(part);
  for (SourceLoc loc : locs) {
    const support::SourceFile *f = sources ? sources->find(loc.file) : nullptr;
    mix(f ? f->name() : std::to_string(loc.file));
    std::string_view line = f && loc.line > 0 ? f->lineText(loc.line) : std::string_view();
    while (!line.empty() && (line.front() == ' ' || line.front() == '\t'))
      line.remove_prefix(1);
    while (!line.empty() && (line.back() == ' ' || line.back() == '\t' || line.back() == '\r'))
      line.remove_suffix(1);
    mix(line);
  }
  return fmt::format("{:016x}", h);
}

const char *ruleName(RootCause::Rule rule) {
  switch (rule) {
  case RootCause::Rule::Single:
    return "single";
  case RootCause::Rule::UnwaitedDma:
    return "unwaited-dma";
  case RootCause::Rule::UnwaitedUnits:
    return "unwaited-units";
  case RootCause::Rule::UntakenSignal:
    return "untaken-signal";
  case RootCause::Rule::RacePair:
    return "race-pair";
  }
  return "single";
}

std::string causeFingerprint(const RootCause &cause, const support::SourceManager *sources) {
  return locationFingerprint({ruleName(cause.rule), findingKindName(cause.kind)}, cause.keyLocs,
                             sources);
}

} // namespace dkv::report
