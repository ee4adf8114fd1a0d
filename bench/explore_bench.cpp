// Benchmark of the exhaustive search: every example kernel at N = 2, 3, 4, with the
// states, transitions, seconds and states per second of executor::explore.
//
//   dkv_explore_bench [--max-states S]
//                     [--no-reduction | --old-reduction | --no-observers | --compare]
//                     [--devices N] [--dma-chunks K] [EXAMPLE.dk ...]
//
// Without file arguments it runs every examples/*.dk that lowers (static-error
// examples are skipped). `// devices: ...` and `// options: --invocations K` in a
// file are honoured (read with frontend::readAnnotations); `--devices N` runs only N
// (also for files without a devices annotation, e.g. fuzz kernels).
// `--old-reduction` runs the reduction without its local-copy and observer rules (as
// before them), `--no-observers` without its observer rules (as before them).
// `--compare` runs each instance four times (no reduction, the reduction without the
// local-copy and observer rules, without the observer rules, the full reduction) and
// prints the states of each (">S": budget reached) and whether the verdict and the
// violated properties of the runs that finished are the same ("n/a": fewer than two
// finished); it exits 1 if any differ (a soundness check of the reduction,
// docs/performance.md).
#include "bench/BenchUtil.h"
#include "executor/Executor.h"
#include "semantics/Witness.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

using namespace dkv;
using bench::statOf;

int main(int argc, char **argv) {
  uint64_t maxStates = 2'000'000;
  bool reduction = true;
  bool localCopies = true;
  bool observers = true;
  bool compare = false;
  int64_t onlyDevices = 0;
  int32_t dmaChunks = 1;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--max-states" && i + 1 < argc)
      maxStates = std::strtoull(argv[++i], nullptr, 10);
    else if (arg == "--no-reduction")
      reduction = false;
    else if (arg == "--old-reduction")
      localCopies = observers = false;
    else if (arg == "--no-observers")
      observers = false;
    else if (arg == "--compare")
      compare = true;
    else if (arg == "--devices" && i + 1 < argc)
      onlyDevices = std::strtoll(argv[++i], nullptr, 10);
    else if (arg == "--dma-chunks" && i + 1 < argc)
      dmaChunks = static_cast<int32_t>(std::strtol(argv[++i], nullptr, 10));
    else
      files.push_back(arg);
  }
  bool differs = false;
  if (files.empty())
    files = bench::examplesIn(std::string(DKV_SOURCE_DIR) + "/examples");
  if (compare)
    fmt::print("{:<34} {:>2} {:>12} {:>12} {:>12} {:>12} {:>12} {}\n", "example", "N", "verdict",
               "states off", "states old", "states local", "states new", "same findings");
  else
    fmt::print("{:<34} {:>2} {:>12} {:>10} {:>12} {:>8} {:>12}\n", "example", "N", "verdict",
               "states", "transitions", "seconds", "states/s");
  for (const std::string &path : files) {
    bench::Example example = bench::readExample(path);
    if (!example.readable) {
      fmt::print(stderr, "cannot read {}\n", path);
      continue;
    }
    if (dmaChunks != 1)
      example.options.dmaChunks = dmaChunks;
    const std::string &name = example.name;
    for (int64_t n = 2; n <= 4; ++n) {
      if (onlyDevices != 0 && n != onlyDevices)
        continue;
      if (onlyDevices == 0 && !bench::allowsDevices(example, n))
        continue;
      std::string error;
      std::optional<model::Program> program = bench::lowerExample(example, n, error);
      if (!program)
        break;
      if (compare) {
        semantics::Instance instance(std::move(*program));
        // Runs that reached the budget are not compared (their findings are partial);
        // their states show as ">S".
        std::vector<std::string> states, statuses;
        std::vector<std::vector<std::string>> found;
        std::vector<bool> complete;
        for (int mode = 0; mode < 4; ++mode) {
          executor::ExploreOptions explore;
          explore.maxStates = maxStates;
          explore.reduction = mode > 0;
          explore.localCopyReduction = mode > 1;
          explore.observerReduction = mode > 2;
          report::Verdict v = semantics::buildVerdict(
              instance.machine(), executor::explore(instance.machine(), explore), "explore");
          std::vector<std::string> ids;
          for (const report::Finding &f : v.findings)
            ids.push_back(f.property);
          found.push_back(ids);
          complete.push_back(statOf(v.stats, "budget").empty());
          states.push_back((complete.back() ? "" : ">") + statOf(v.stats, "states"));
          statuses.push_back(report::verdictStatusName(v.status));
        }
        int compared = 0, first = -1;
        bool same = true;
        for (int mode = 0; mode < 4; ++mode) {
          if (!complete[mode])
            continue;
          ++compared;
          if (first < 0)
            first = mode;
          else
            same = same && found[mode] == found[first] && statuses[mode] == statuses[first];
        }
        differs = differs || !same;
        std::string verdict = first >= 0 ? statuses[first] : "inconclusive";
        fmt::print("{:<34} {:>2} {:>12} {:>12} {:>12} {:>12} {:>12} {} {{{}}}\n", name, n, verdict,
                   states[0], states[1], states[2], states[3],
                   compared < 2 ? "n/a" : (same ? "yes" : "NO"),
                   fmt::join(first >= 0 ? found[first] : found[3], " "));
        std::fflush(stdout);
        continue;
      }
      executor::ExploreOptions explore;
      explore.maxStates = maxStates;
      explore.reduction = reduction;
      explore.localCopyReduction = localCopies;
      explore.observerReduction = observers;
      auto begin = std::chrono::steady_clock::now();
      semantics::Instance instance(std::move(*program));
      report::Verdict v = semantics::buildVerdict(
          instance.machine(), executor::explore(instance.machine(), explore), "explore");
      double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
      double states = std::strtod(statOf(v.stats, "states").c_str(), nullptr);
      fmt::print("{:<34} {:>2} {:>12} {:>10} {:>12} {:>8.2f} {:>12.0f}\n", name, n,
                 report::verdictStatusName(v.status), statOf(v.stats, "states"),
                 statOf(v.stats, "transitions"), seconds, seconds > 0 ? states / seconds : 0.0);
      std::fflush(stdout);
    }
  }
  return differs ? 1 : 0;
}
