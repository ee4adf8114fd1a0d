// Benchmark of the exhaustive search: every example kernel at N = 2, 3, 4, with the
// states, transitions, seconds and states per second of executor::explore.
//
//   dkv_explore_bench [--max-states S] [--no-reduction] [EXAMPLE.dk ...]
//
// Without file arguments it runs every examples/*.dk that lowers (static-error
// examples are skipped). `// devices: ...` and `// options: --invocations K` in a
// file are honoured (read with frontend::readAnnotations).
#include "executor/Executor.h"
#include "frontend/Annotations.h"
#include "frontend/Frontend.h"
#include "lower/Lower.h"
#include "semantics/Witness.h"
#include "support/Diagnostics.h"
#include "support/Source.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

using namespace dkv;

namespace {

std::string statOf(const report::Verdict &v, const std::string &key) {
  for (const auto &[k, value] : v.stats)
    if (k == key)
      return value;
  return "";
}

} // namespace

int main(int argc, char **argv) {
  uint64_t maxStates = 2'000'000;
  bool reduction = true;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--max-states" && i + 1 < argc)
      maxStates = std::strtoull(argv[++i], nullptr, 10);
    else if (arg == "--no-reduction")
      reduction = false;
    else
      files.push_back(arg);
  }
  if (files.empty()) {
    for (const auto &entry :
         std::filesystem::directory_iterator(std::string(DKV_SOURCE_DIR) + "/examples"))
      if (entry.path().extension() == ".dk")
        files.push_back(entry.path().string());
    std::sort(files.begin(), files.end());
  }
  fmt::print("{:<34} {:>2} {:>12} {:>10} {:>12} {:>8} {:>12}\n", "example", "N", "verdict",
             "states", "transitions", "seconds", "states/s");
  for (const std::string &path : files) {
    std::string error;
    support::SourceManager sources;
    std::optional<support::FileId> id = sources.load(path, error);
    const support::SourceFile *file = id ? &sources.file(*id) : nullptr;
    if (!file) {
      fmt::print(stderr, "{}\n", error);
      continue;
    }
    support::DiagnosticEngine annotationDiags(&sources);
    ast::Annotations annotations = frontend::readAnnotations(*file, annotationDiags);
    model::Options options;
    for (size_t i = 0; i + 1 < annotations.options.size(); ++i)
      if (annotations.options[i] == "--invocations")
        options.invocations = std::stoi(annotations.options[i + 1]);
    const std::vector<int64_t> &devices = annotations.devices;
    std::string name = std::filesystem::path(path).filename().string();
    for (int64_t n = 2; n <= 4; ++n) {
      if (!devices.empty() && std::find(devices.begin(), devices.end(), n) == devices.end())
        continue;
      support::DiagnosticEngine diags(&sources);
      bool ok = false;
      auto module = frontend::loadModule(*file, {}, n, diags, ok);
      if (!ok || !module)
        break;
      std::optional<model::Program> program = lower::lower(*module, name, options, diags);
      if (!program)
        break;
      executor::ExploreOptions explore;
      explore.maxStates = maxStates;
      explore.reduction = reduction;
      auto begin = std::chrono::steady_clock::now();
      semantics::Instance instance(std::move(*program));
      report::Verdict v = semantics::buildVerdict(
          instance.machine(), executor::explore(instance.machine(), explore), "explore");
      double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
      double states = std::strtod(statOf(v, "states").c_str(), nullptr);
      fmt::print("{:<34} {:>2} {:>12} {:>10} {:>12} {:>8.2f} {:>12.0f}\n", name, n,
                 report::verdictStatusName(v.status), statOf(v, "states"), statOf(v, "transitions"),
                 seconds, seconds > 0 ? states / seconds : 0.0);
      std::fflush(stdout);
    }
  }
  return 0;
}
