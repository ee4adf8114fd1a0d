// Benchmark of the Z3 engine against the exhaustive search: every example kernel at
// N = 2, 3, 4, 6, 8 (as its `// devices:` allows), with the properties checked, the
// sat / unsat answers, the encoding size, z3's time (encoding and solving, without the
// confirmation in the executor) per query family, and explore's time at the same N
// under a state budget ("budget" when it runs out).
//
//   dkv_smt_bench [--max-states S] [--devices N,N,...] [--no-explore] [EXAMPLE.dk ...]
//
// Without file arguments it runs every examples/*.dk that lowers. `// options:
// --invocations K` in a file is honoured.
#include "bench/BenchUtil.h"
#include "executor/Executor.h"
#include "semantics/Witness.h"
#include "smt/Smt.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

using namespace dkv;

using bench::statOf;

namespace {

double secondsSince(std::chrono::steady_clock::time_point begin) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
}

} // namespace

int main(int argc, char **argv) {
  uint64_t maxStates = 2'000'000;
  bool runExplore = true;
  std::vector<int64_t> counts = {2, 3, 4, 6, 8};
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--max-states" && i + 1 < argc) {
      maxStates = std::strtoull(argv[++i], nullptr, 10);
    } else if (arg == "--no-explore") {
      runExplore = false;
    } else if (arg == "--devices" && i + 1 < argc) {
      counts.clear();
      std::stringstream list(argv[++i]);
      for (std::string n; std::getline(list, n, ',');)
        counts.push_back(std::stoll(n));
    } else {
      files.push_back(arg);
    }
  }
  if (files.empty())
    files = bench::examplesIn(std::string(DKV_SOURCE_DIR) + "/examples");
  fmt::print("{:<32} {:>2} {:>5} {:>4} {:>5} {:>6} {:>8} {:>8} {:>8} {:>8} {:>8} {:>9}\n",
             "example", "N", "props", "sat", "unsat", "steps", "z3 s", "race s", "dlock s",
             "other s", "explore", "ratio");
  for (const std::string &path : files) {
    const bench::Example example = bench::readExample(path);
    if (!example.readable) {
      fmt::print(stderr, "cannot read {}\n", path);
      continue;
    }
    const std::string &name = example.name;
    for (int64_t n : counts) {
      if (!bench::allowsDevices(example, n))
        continue;
      std::string error;
      std::optional<model::Program> program = bench::lowerExample(example, n, error);
      if (!program)
        break;
      semantics::Instance instance(std::move(*program));
      auto begin = std::chrono::steady_clock::now();
      semantics::EngineResult z3 = smt::checkWithZ3(instance.machine(), {});
      const double z3Seconds = secondsSince(begin);
      // Solver time per family: "race queries (K) time" etc.
      double race = 0, deadlock = 0, other = 0;
      for (const auto &[key, value] : z3.stats) {
        if (key.find(" queries (") == std::string::npos)
          continue;
        const double s = std::strtod(value.c_str(), nullptr);
        if (key.starts_with("race"))
          race += s;
        else if (key.starts_with("deadlock"))
          deadlock += s;
        else
          other += s;
      }
      std::string exploreText = "-", ratio = "-";
      if (runExplore) {
        executor::ExploreOptions explore;
        explore.maxStates = maxStates;
        auto start = std::chrono::steady_clock::now();
        semantics::EngineResult e = executor::explore(instance.machine(), explore);
        const double seconds = secondsSince(start);
        if (e.complete) {
          exploreText = fmt::format("{:.2f}", seconds);
          ratio = fmt::format("{:.2f}", z3Seconds > 0 ? seconds / z3Seconds : 0.0);
        } else {
          exploreText = "budget";
          ratio = fmt::format(">{:.1f}", z3Seconds > 0 ? seconds / z3Seconds : 0.0);
        }
      }
      std::string answers = z3.complete ? statOf(z3.stats, "sat") : statOf(z3.stats, "sat") + "?";
      fmt::print("{:<32} {:>2} {:>5} {:>4} {:>5} {:>6} {:>8.2f} {:>8.2f} {:>8.2f} {:>8.2f} {:>8} "
                 "{:>9}\n",
                 name, n, instance.properties().properties().size(), answers,
                 statOf(z3.stats, "unsat"), statOf(z3.stats, "steps"), z3Seconds, race, deadlock,
                 other, exploreText, ratio);
      std::fflush(stdout);
    }
  }
  return 0;
}
