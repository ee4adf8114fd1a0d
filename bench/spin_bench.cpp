// Benchmark of the spin engine (not a test): per example kernel and device count, the
// verdict, pan's states, memory and time, and the end-to-end time of checkWithSpin
// (emit, spin -a, gcc -O2, pan, trail replays; several pan runs when there are
// findings, docs/promela.md). Prints a Markdown table for docs/performance.md.
//
//   dkv_spin_bench [EXAMPLES_DIR [MAX_DEVICES]]     (default: examples, 4)
#include "frontend/Annotations.h"
#include "frontend/Frontend.h"
#include "lower/Lower.h"
#include "model/Model.h"
#include "promela/Spin.h"
#include "semantics/Witness.h"
#include "support/Diagnostics.h"
#include "support/Source.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

using namespace dkv;

namespace {

std::string stat(const report::Verdict &v, const std::string &name) {
  for (const auto &[key, value] : v.stats)
    if (key == name)
      return value;
  return "-";
}

std::string verdictText(const report::Verdict &v) {
  switch (v.status) {
  case report::Verdict::Status::Verified:
    return "verified";
  case report::Verdict::Status::Findings: {
    std::vector<std::string> kinds;
    for (const report::Finding &f : v.findings)
      kinds.push_back(report::findingKindName(f.kind));
    return fmt::format("{}", fmt::join(kinds, ", "));
  }
  case report::Verdict::Status::Inconclusive:
  case report::Verdict::Status::Error:
    return report::verdictStatusName(v.status);
  }
  return "?";
}

/// What an example's annotations say (frontend::readAnnotations): its device counts
/// and model options.
struct Example {
  std::string path;
  std::string name;
  std::vector<int64_t> devices; ///< empty: any
  model::Options options;
  std::string optionText;
  bool staticError = false;
};

Example readExample(const std::filesystem::path &path) {
  Example e;
  e.path = path.string();
  e.name = path.stem().string();
  std::string error;
  support::SourceManager sources;
  std::optional<support::FileId> id = sources.load(e.path, error);
  const support::SourceFile *file = id ? &sources.file(*id) : nullptr;
  if (!file)
    return e; // reported when the example is lowered
  support::DiagnosticEngine diags(&sources);
  ast::Annotations a = frontend::readAnnotations(*file, diags);
  e.devices = a.devices;
  e.staticError = a.expect && a.expect->verdict == ast::ExpectedVerdict::StaticError;
  for (size_t i = 0; i < a.options.size(); ++i) {
    e.optionText += (i ? " " : "") + a.options[i];
    const std::string &word = a.options[i];
    if (word == "--no-entry-barrier") {
      e.options.entryBarrier = false;
    } else if (i + 1 < a.options.size()) {
      const std::string &value = a.options[++i];
      e.optionText += " " + value;
      if (word == "--invocations")
        e.options.invocations = std::stoi(value);
      else if (word == "--dma-chunks")
        e.options.dmaChunks = std::stoi(value);
      else if (word == "--sem-unit")
        e.options.semUnit = std::stoll(value);
    }
  }
  return e;
}

/// Lowers the example for `devices` devices; nullopt (with the error) if it fails.
std::optional<model::Program> lowerExample(const Example &e, int devices, std::string &error) {
  support::SourceManager sources;
  std::optional<support::FileId> id = sources.load(e.path, error);
  const support::SourceFile *source = id ? &sources.file(*id) : nullptr;
  if (!source)
    return std::nullopt;
  support::DiagnosticEngine diags(&sources);
  bool ok = false;
  auto module = frontend::loadModule(*source, {}, devices, diags, ok);
  if (!ok || !module) {
    error = "frontend errors";
    return std::nullopt;
  }
  auto program = lower::lower(*module, e.path, e.options, diags);
  if (!program || diags.hasErrors()) {
    error = "lowering errors";
    return std::nullopt;
  }
  return program;
}

} // namespace

int main(int argc, char **argv) {
  std::string dir = argc > 1 ? argv[1] : "examples";
  int maxDevices = argc > 2 ? std::atoi(argv[2]) : 4;
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  for (const auto &entry : std::filesystem::directory_iterator(dir, ec))
    if (entry.path().extension() == ".dk")
      files.push_back(entry.path());
  if (ec || files.empty()) {
    std::fprintf(stderr, "dkv_spin_bench: no .dk files in %s\n", dir.c_str());
    return 1;
  }
  std::sort(files.begin(), files.end());

  std::printf("| example | N | verdict | states stored | memory | pan runs | pan time | "
              "end to end |\n");
  std::printf("|---|---|---|---|---|---|---|---|\n");
  for (const auto &file : files) {
    Example e = readExample(file);
    if (e.staticError)
      continue;
    for (int n = 2; n <= maxDevices; ++n) {
      if (!e.devices.empty() && std::find(e.devices.begin(), e.devices.end(), n) == e.devices.end())
        continue;
      std::string error;
      std::optional<model::Program> program = lowerExample(e, n, error);
      std::string name = e.optionText.empty() ? e.name : e.name + " (" + e.optionText + ")";
      if (!program) {
        std::printf("| %s | %d | %s | | | | | |\n", name.c_str(), n, error.c_str());
        continue;
      }
      promela::SpinOptions options; // the defaults of `dkv check --engine spin`
      semantics::Instance instance(std::move(*program));
      report::Verdict v = semantics::buildVerdict(
          instance.machine(), promela::checkWithSpin(instance.machine(), options), "spin");
      std::printf("| %s | %d | %s | %s | %s | %s | %s | %s |\n", name.c_str(), n,
                  verdictText(v).c_str(), stat(v, "states").c_str(), stat(v, "memory").c_str(),
                  stat(v, "pan runs").c_str(), stat(v, "pan time").c_str(),
                  stat(v, "total time").c_str());
      if (!v.reason.empty())
        std::printf("|  | | reason: %s | | | | | |\n", v.reason.c_str());
      std::fflush(stdout);
    }
  }
  return 0;
}
