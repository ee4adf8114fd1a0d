// Trace pictures of `dkv check`: which files, and refusing what they cannot show.
#include "driver/TracePictures.h"

#include "report/Svg.h"
#include "support/Invariant.h"

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
                       "instances: use --trace-dir DIR for one picture per finding\n",
                       check.traceSvg.empty() ? "--trace-html" : "--trace-svg", instances);
    return support::kExitUsage;
  }
  return support::kExitOk;
}

int writeTracePictures(const CheckOptions &check, const report::Verdict &verdict,
                       const std::string &file, int32_t devices,
                       const support::SourceManager *sources, const std::string &instance,
                       const std::string &command, std::set<std::string> &written,
                       std::ostream &err) {
  const report::PictureHeading heading{instance, command};
  int code = support::kExitOk;
  if (wantsOne(check)) {
    const std::vector<report::Finding> &findings = verdict.findings;
    if (findings.size() > 1) {
      std::string ids;
      for (const report::Finding &f : findings)
        ids += (ids.empty() ? "" : ", ") +
               (f.property.empty() ? std::string(report::findingKindName(f.kind)) : f.property);
      err << fmt::format("dkv: error: {} draws the trace of one finding, but {} has {} ({}): use "
                         "--trace-dir DIR for one picture per finding\n",
                         check.traceSvg.empty() ? "--trace-html" : "--trace-svg", command,
                         findings.size(), ids);
      code = support::kExitUsage;
    } else if (findings.empty()) {
      err << fmt::format("dkv: note: {} has no finding: no trace picture written\n", command);
    } else {
      if (!check.traceSvg.empty() &&
          !writeFile(
              check.traceSvg,
              [&](std::ostream &o) { report::renderTraceSvg(o, findings[0], sources, heading); },
              err))
        code = support::kExitUsage;
      if (!check.traceHtml.empty() &&
          !writeFile(
              check.traceHtml,
              [&](std::ostream &o) { report::renderTraceHtml(o, findings[0], sources, heading); },
              err))
        code = support::kExitUsage;
    }
  }
  if (!check.traceDir.empty() && !verdict.findings.empty()) {
    std::error_code ec;
    fs::create_directories(check.traceDir, ec);
    if (ec) {
      err << "dkv: error: cannot create directory '" << check.traceDir << "': " << ec.message()
          << "\n";
      return support::kExitUsage;
    }
    const std::string stem = safeName(fs::path(file).stem().string());
    for (const report::Finding &f : verdict.findings) {
      std::string what = !f.property.empty()
                             ? f.property
                             : fmt::format("{}-L{}", report::findingKindName(f.kind),
                                           f.primary.loc.valid() ? f.primary.loc.line : 0);
      std::string base = fmt::format("{}-N{}-{}", stem, devices, safeName(what));
      std::string name = base + ".svg";
      for (int i = 2; written.count(name); ++i)
        name = fmt::format("{}-{}.svg", base, i);
      written.insert(name);
      std::string path = (fs::path(check.traceDir) / name).string();
      if (!writeFile(
              path, [&](std::ostream &o) { report::renderTraceSvg(o, f, sources, heading); }, err))
        code = support::kExitUsage;
    }
  }
  return code;
}

} // namespace dkv::driver
