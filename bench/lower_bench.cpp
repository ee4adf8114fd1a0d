// Benchmark of lowering: parse + sema + lower of one kernel to the concurrency model, R times.
//
//   dkv_lower_bench [FILE] [--devices N] [--repeat R]
//
// Defaults: bench/kernel200.dk, N = 8, R = 50. The file is read once; every repetition
// runs frontend::loadModule (parse, --devices, sema) and lower::lower with fresh
// diagnostics. Prints the file, its lines, the devices, the events and DMAs of the
// model, and the min / median / max milliseconds per lowering. Exits 1 on a usage
// error and 2 (with the diagnostics) if the file cannot be read or does not lower.
#include "frontend/Frontend.h"
#include "lower/Lower.h"
#include "support/Diagnostics.h"
#include "support/Source.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

using namespace dkv;

namespace {

int usage(const std::string &problem) {
  fmt::print(stderr,
             "dkv_lower_bench: {}\nusage: dkv_lower_bench [FILE] [--devices N] [--repeat R]\n",
             problem);
  return 1;
}

/// Parses a positive integer option value; nullopt if `text` is not one.
std::optional<int64_t> positive(const std::string &text) {
  char *end = nullptr;
  long long value = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || value < 1)
    return std::nullopt;
  return value;
}

} // namespace

int main(int argc, char **argv) {
  std::string path = std::string(DKV_SOURCE_DIR) + "/bench/kernel200.dk";
  int64_t devices = 8;
  int64_t repeat = 50;
  bool havePath = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--devices" || arg == "--repeat") {
      if (i + 1 >= argc)
        return usage(arg + " needs a value");
      std::optional<int64_t> value = positive(argv[++i]);
      if (!value)
        return usage(fmt::format("{} needs a positive integer, not '{}'", arg, argv[i]));
      (arg == "--devices" ? devices : repeat) = *value;
    } else if (!arg.empty() && arg[0] == '-') {
      return usage(fmt::format("unknown option '{}'", arg));
    } else if (havePath) {
      return usage("more than one file");
    } else {
      path = arg;
      havePath = true;
    }
  }

  std::string error;
  support::SourceManager sources;
  std::optional<support::FileId> id = sources.load(path, error);
  const support::SourceFile *file = id ? &sources.file(*id) : nullptr;
  if (!file) {
    fmt::print(stderr, "dkv_lower_bench: {}\n", error);
    return 2;
  }

  std::vector<double> millis;
  millis.reserve(static_cast<size_t>(repeat));
  std::optional<model::Program> program;
  for (int64_t r = 0; r < repeat; ++r) {
    auto begin = std::chrono::steady_clock::now();
    support::DiagnosticEngine diags(&sources);
    bool ok = false;
    auto module = frontend::loadModule(*file, {}, devices, diags, ok);
    if (ok && module)
      program = lower::lower(*module, path, model::Options{}, diags);
    auto end = std::chrono::steady_clock::now();
    if (!ok || !module || !program) {
      diags.render(std::cerr);
      fmt::print(stderr, "dkv_lower_bench: {} does not lower at --devices {}\n", path, devices);
      return 2;
    }
    millis.push_back(std::chrono::duration<double, std::milli>(end - begin).count());
  }

  size_t events = 0;
  for (const model::Process &process : program->processes)
    events += process.events.size();
  std::sort(millis.begin(), millis.end());
  size_t mid = millis.size() / 2;
  double median = millis.size() % 2 == 1 ? millis[mid] : (millis[mid - 1] + millis[mid]) / 2;

  fmt::print("file:      {}\n", path);
  fmt::print("lines:     {}\n", file->lineCount());
  fmt::print("devices:   {}\n", program->deviceCount());
  fmt::print("events:    {}\n", events);
  fmt::print("dmas:      {}\n", program->dmas.size());
  fmt::print("repeat:    {}\n", repeat);
  fmt::print("min ms:    {:.3f}\n", millis.front());
  fmt::print("median ms: {:.3f}\n", median);
  fmt::print("max ms:    {:.3f}\n", millis.back());
  return 0;
}
