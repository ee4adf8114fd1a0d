// Benchmark of the spin engine (not a test): per example kernel and device count, the
// verdict, pan's states, memory and time, and the end-to-end time of checkWithSpin
// (emit, spin -a, gcc -O2, pan, trail replays; several pan runs when there are
// findings, docs/promela.md). Prints a Markdown table for docs/performance.md.
//
//   dkv_spin_bench [--no-fuse] [EXAMPLES_DIR [MAX_DEVICES]]     (default: examples, 4)
//
// --no-fuse compiles the models with -DFUSE_STEPS=0 -DFUSE_DMAS=0 (every interleaving,
// the model before docs/promela.md's "Fused steps" and "Fused DMA chunks").
#include "bench/BenchUtil.h"
#include "promela/Spin.h"
#include "semantics/Witness.h"

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

} // namespace

int main(int argc, char **argv) {
  bool fuse = true;
  std::vector<std::string> positional;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--no-fuse")
      fuse = false;
    else
      positional.push_back(argv[i]);
  }
  std::string dir = positional.size() > 0 ? positional[0] : "examples";
  int maxDevices = positional.size() > 1 ? std::atoi(positional[1].c_str()) : 4;
  const std::vector<std::string> files = bench::examplesIn(dir);
  if (files.empty()) {
    std::fprintf(stderr, "dkv_spin_bench: no .dk files in %s\n", dir.c_str());
    return 1;
  }

  std::printf("| example | N | verdict | states stored | memory | pan runs | pan time | "
              "end to end |\n");
  std::printf("|---|---|---|---|---|---|---|---|\n");
  for (const auto &file : files) {
    const bench::Example e = bench::readExample(file);
    if (e.staticError)
      continue;
    for (int n = 2; n <= maxDevices; ++n) {
      if (!bench::allowsDevices(e, n))
        continue;
      std::string error;
      std::optional<model::Program> program = bench::lowerExample(e, n, error);
      std::string name = e.optionText.empty() ? e.stem : e.stem + " (" + e.optionText + ")";
      if (!program) {
        std::printf("| %s | %d | %s | | | | | |\n", name.c_str(), n, error.c_str());
        continue;
      }
      promela::SpinOptions options; // the defaults of `dkv check --engine spin`
      if (!fuse)
        options.spinFlags = {"-DFUSE_STEPS=0", "-DFUSE_DMAS=0"};
      semantics::Instance instance(std::move(*program));
      report::Verdict v = semantics::buildVerdict(
          instance.machine(), promela::checkWithSpin(instance.machine(), options), "spin");
      std::printf("| %s | %d | %s | %s | %s | %s | %s | %s |\n", name.c_str(), n,
                  verdictText(v).c_str(), bench::statOf(v.stats, "states", "-").c_str(),
                  bench::statOf(v.stats, "memory", "-").c_str(),
                  bench::statOf(v.stats, "pan runs", "-").c_str(),
                  bench::statOf(v.stats, "pan time", "-").c_str(),
                  bench::statOf(v.stats, "total time", "-").c_str());
      if (!v.reason.empty())
        std::printf("|  | | reason: %s | | | | | |\n", v.reason.c_str());
      std::fflush(stdout);
    }
  }
  return 0;
}
