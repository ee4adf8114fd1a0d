// Trace pictures of `dkv check`: which files, and refusing what they cannot show.
#include "driver/TracePictures.h"

#include "driver/Cli.h"
#include "executor/Executor.h"
#include "report/Svg.h"
#include "semantics/Witness.h"
#include "support/Invariant.h"
#include "support/Suggest.h"

#include <fmt/format.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <ostream>

namespace dkv::driver {

namespace {

namespace fs = std::filesystem;

bool wantsOne(const CheckOptions &check) {
  return !check.traceSvg.empty() || !check.traceHtml.empty();
}

/// Writes `render(stream)` to `path`; false (with a message) if it cannot.
template <typename Render>
bool writeFile(const std::string &path, Render render, std::ostream &err) {
  std::ofstream out(path, std::ios::binary);
  if (out)
    render(out);
  out.flush();
  if (!out) {
    err << "dkv: error: cannot write '" << path << "'\n";
    return false;
  }
  return true;
}

/// A file name part of only letters, digits, '.', '_' and '-'.
std::string safeName(const std::string &text) {
  std::string out;
  for (char c : text)
    out +=
        std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-' ? c : '_';
  return out;
}

} // namespace

int checkTraceOptions(const CheckOptions &check, size_t instances, std::ostream &err) {
  if (wantsOne(check) && instances != 1) {
    err << fmt::format("dkv: error: {} draws the trace of one finding, but this call checks {} "
                       "instances: use --trace-dir DIR for pictures of every finding\n",
                       check.traceSvg.empty() ? "--trace-html" : "--trace-svg", instances);
    return support::kExitUsage;
  }
  if (!check.finding.empty() && !wantsOne(check)) {
    err << "dkv: error: --finding picks the finding of --trace-svg or --trace-html; give one of "
           "them\n";
    return support::kExitUsage;
  }
  return support::kExitOk;
}

std::string findingId(const report::Finding &f) {
  return !f.property.empty() ? f.property
                             : fmt::format("{}-L{}", report::findingKindName(f.kind),
                                           f.primary.loc.valid() ? f.primary.loc.line : 0);
}

int writeTracePictures(const CheckOptions &check, const report::Verdict &verdict,
                       const std::string &file, int32_t devices,
                       const support::SourceManager *sources, const std::string &instance,
                       const std::string &command, std::set<std::string> &written,
                       std::ostream &err) {
  const report::PictureHeading heading{instance, "check " + command};
  const std::vector<report::Finding> &findings = verdict.findings;
  int code = support::kExitOk;
  if (wantsOne(check)) {
    const char *option = check.traceSvg.empty() ? "--trace-html" : "--trace-svg";
    std::vector<std::string> ids;
    for (const report::Finding &f : findings)
      ids.push_back(findingId(f));
    const report::Finding *chosen = nullptr;
    if (!check.finding.empty()) {
      for (const report::Finding &f : findings)
        if (findingId(f) == check.finding)
          chosen = &f;
      if (!chosen) {
        err << fmt::format("dkv: error: --finding {}: {} has {}{}\n", check.finding, command,
                           ids.empty()
                               ? "no finding"
                               : fmt::format("no such finding; its findings are {}", orList(ids)),
                           support::didYouMean(check.finding, ids));
        return support::kExitUsage;
      }
    } else if (findings.size() > 1) {
      err << fmt::format("dkv: error: {} draws one finding, but {} has {}: {}; pick one with "
                         "--finding ID (e.g. --finding {}), or use --trace-dir DIR for a picture "
                         "of each\n",
                         option, command, findings.size(), orList(ids), ids.front());
      code = support::kExitUsage;
    } else if (findings.empty()) {
      err << fmt::format("dkv: note: {} has no finding: no trace picture written (dkv run "
                         "--trace-svg draws a schedule of a correct kernel)\n",
                         command);
    } else {
      chosen = &findings[0];
    }
    if (chosen) {
      if (!check.traceSvg.empty() &&
          !writeFile(
              check.traceSvg,
              [&](std::ostream &o) { report::renderTraceSvg(o, *chosen, sources, heading); }, err))
        code = support::kExitUsage;
      if (!check.traceHtml.empty() &&
          !writeFile(
              check.traceHtml,
              [&](std::ostream &o) { report::renderTraceHtml(o, *chosen, sources, heading); }, err))
        code = support::kExitUsage;
    }
  }
  if (!check.traceDir.empty() && !findings.empty()) {
    std::error_code ec;
    fs::create_directories(check.traceDir, ec);
    if (ec) {
      err << "dkv: error: cannot create directory '" << check.traceDir << "': " << ec.message()
          << "\n";
      return support::kExitUsage;
    }
    const std::string stem = safeName(fs::path(file).stem().string());
    for (const report::Finding &f : findings) {
      // One name for both forms: KERNEL-N<devices>-ID.svg and .html.
      std::string base = fmt::format("{}-N{}-{}", stem, devices, safeName(findingId(f)));
      std::string name = base;
      for (int i = 2; written.count(name); ++i)
        name = fmt::format("{}-{}", base, i);
      written.insert(name);
      const fs::path path = fs::path(check.traceDir) / name;
      if (!writeFile(
              path.string() + ".svg",
              [&](std::ostream &o) { report::renderTraceSvg(o, f, sources, heading); }, err) ||
          !writeFile(
              path.string() + ".html",
              [&](std::ostream &o) { report::renderTraceHtml(o, f, sources, heading); }, err))
        code = support::kExitUsage;
    }
  }
  return code;
}

int writeRunPictures(const semantics::Machine &machine, const support::SourceManager &sources,
                     const RunOptions &config, const executor::RunResult &run,
                     const std::string &policy, uint64_t inputSeed, std::ostream &err) {
  if (config.traceSvg.empty() && config.traceHtml.empty())
    return support::kExitOk;
  report::Trace trace;
  semantics::ControlState before;
  std::string error;
  const bool replayed =
      semantics::replaySchedule(machine, run.schedule, before, &trace, error).has_value();
  DKV_INVARIANT(replayed, "the schedule a run took replays");
  report::ScheduleHeading heading;
  heading.where.instance = describeInstance(machine.program());
  heading.where.command = config.command;
  heading.stuck = !run.completed && run.enabledAtEnd == 0;
  heading.title =
      fmt::format("run of {}: {} steps, {}", heading.where.instance, run.schedule.size(),
                  run.completed   ? "every device finished"
                  : heading.stuck ? "the run is stuck"
                                  : fmt::format("the schedule ends here ({} steps could still run)",
                                                run.enabledAtEnd));
  heading.notes.push_back(fmt::format("{} (inputs from seed {})", policy, inputSeed));
  for (const report::Finding &f : run.findings)
    heading.notes.push_back(
        fmt::format("found in this run: {}: {}{} (dkv check draws its shortest witness)",
                    report::findingKindName(f.kind), f.message,
                    f.property.empty() ? "" : " [" + f.property + "]"));
  if (run.findings.empty())
    heading.notes.push_back("no race, deadlock, exit or lifetime violation in this run (one "
                            "schedule; dkv check checks them all)");
  auto write = [&](const std::string &path, auto render) {
    std::ofstream file(path, std::ios::binary);
    render(file);
    file.flush();
    if (!file) {
      err << "dkv: error: cannot write '" << path << "'\n";
      return false;
    }
    return true;
  };
  bool ok = true;
  if (!config.traceSvg.empty())
    ok = write(config.traceSvg,
               [&](std::ostream &o) { report::renderScheduleSvg(o, trace, &sources, heading); }) &&
         ok;
  if (!config.traceHtml.empty())
    ok = write(config.traceHtml,
               [&](std::ostream &o) { report::renderScheduleHtml(o, trace, &sources, heading); }) &&
         ok;
  return ok ? support::kExitOk : support::kExitUsage;
}

} // namespace dkv::driver
