// Benchmark of the spin engine: per fixture and device count, pan's states, memory and
// time, and the end-to-end time (emit, spin -a, gcc -O2, pan).
#include "PromelaFixtures.h"
#include "promela/Spin.h"

#include <fmt/format.h>

#include <cstdio>
#include <functional>
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

const char *statusName(report::Verdict::Status s) {
  switch (s) {
  case report::Verdict::Status::Verified:
    return "verified";
  case report::Verdict::Status::Findings:
    return "findings";
  case report::Verdict::Status::Inconclusive:
    return "inconclusive";
  }
  return "?";
}

} // namespace

int main(int argc, char **argv) {
  int maxDevices = argc > 1 ? std::atoi(argv[1]) : 4;
  struct Case {
    std::string name;
    std::function<model::Program(int)> make;
  };
  std::vector<Case> cases = {
      {"right_permute", [](int n) { return promela::testing::rightPermute(n); }},
      {"right_permute chunks=4",
       [](int n) {
         model::Options o;
         o.dmaChunks = 4;
         return promela::testing::rightPermute(n, true, o);
       }},
      {"right_permute no-entry-barrier",
       [](int n) {
         model::Options o;
         o.entryBarrier = false;
         return promela::testing::rightPermute(n, true, o);
       }},
  };
  std::printf("%-32s %3s  %-12s %12s %14s %10s %10s %10s\n", "fixture", "N", "verdict", "states",
              "transitions", "memory", "pan", "total");
  for (const Case &c : cases)
    for (int n = 2; n <= maxDevices; ++n) {
      promela::SpinOptions options;
      report::Verdict v = promela::checkWithSpin(c.make(n), options);
      std::printf("%-32s %3d  %-12s %12s %14s %10s %10s %10s\n", c.name.c_str(), n,
                  statusName(v.status), stat(v, "states").c_str(), stat(v, "transitions").c_str(),
                  stat(v, "memory").c_str(), stat(v, "pan time").c_str(),
                  stat(v, "total time").c_str());
      if (v.status == report::Verdict::Status::Inconclusive)
        std::printf("    reason: %s\n", v.reason.c_str());
      std::fflush(stdout);
    }
  return 0;
}
