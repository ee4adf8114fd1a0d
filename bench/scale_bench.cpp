// Benchmark at the sizes pods run (issue 24): the eight ring kernels of examples/ at 8,
// 16, 32, 64, 128 and 256 devices and the transcriptions of examples/real at 8 (or, for
// the ones written for a fixed mesh, at the largest count their `// devices:` lists),
// with every engine side by side in one run: the wall time, the peak memory (the
// child's maximum resident set) and the verdict of `dkv check` per cell, each cell a
// process of its own under a time limit (`--timeout`, also passed to dkv). An engine
// that runs out of time or is inconclusive at one size is not run at the larger ones
// ("-"). Each cell is `dkv check --no-fix`: the time to the verdict (with every finding
// confirmed in the executor), without the verified-fix search that follows it.
//
//   dkv_scale_bench [--dkv PATH] [--timeout SEC] [--engines E,E,...]
//                   [--devices N,N,...] [--kernels K,K,...] [--no-real]
//
// Prints one table per kernel (rows: device counts; columns: engines), then one for the
// transcriptions; docs/performance.md "At the sizes pods run" has a run.
#include "bench/BenchUtil.h"

#include <fmt/format.h>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

using namespace dkv;

namespace {

struct Cell {
  double seconds = 0;
  long maxRssKb = 0;
  std::string verdict; ///< "ok", "N findings", "inconclusive", "timeout", "error E"
  bool failed = false; ///< timeout or inconclusive: larger sizes are skipped
};

std::vector<std::string> split(const std::string &text) {
  std::vector<std::string> out;
  std::stringstream list(text);
  for (std::string item; std::getline(list, item, ',');)
    if (!item.empty())
      out.push_back(item);
  return out;
}

/// Runs `argv` with its standard output in `outFile`, killed after `limit` seconds.
Cell runCell(const std::vector<std::string> &argv, double limit, const std::string &outFile) {
  Cell cell;
  const auto begin = std::chrono::steady_clock::now();
  std::fflush(stdout); // the child must not print what is buffered again
  pid_t pid = fork();
  if (pid == 0) {
    FILE *out = std::freopen(outFile.c_str(), "w", stdout);
    FILE *err = std::freopen("/dev/null", "w", stderr);
    (void)out;
    (void)err;
    std::vector<char *> args;
    for (const std::string &a : argv)
      args.push_back(const_cast<char *>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  int status = 0;
  struct rusage usage {};
  bool killed = false;
  for (;;) {
    pid_t done = wait4(pid, &status, WNOHANG, &usage);
    if (done == pid)
      break;
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    if (!killed && elapsed > limit) {
      kill(pid, SIGKILL);
      killed = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  cell.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  cell.maxRssKb = usage.ru_maxrss;
  if (killed) {
    cell.verdict = "timeout";
    cell.failed = true;
    return cell;
  }
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  std::ifstream in(outFile);
  std::string line, last;
  while (std::getline(in, line))
    if (!line.empty())
      last = line;
  switch (code) {
  case 0:
    cell.verdict = "ok";
    break;
  case 10: {
    // "3 findings (engine ...)" or "incomplete search: ..." before the findings line.
    const size_t space = last.find(' ');
    cell.verdict = space != std::string::npos && last.find(" finding") == space
                       ? last.substr(0, last.find(" (engine"))
                       : "findings";
    if (last.rfind("incomplete", 0) == 0)
      cell.verdict += " (incomplete)";
    break;
  }
  case 5:
    cell.verdict = "inconclusive";
    cell.failed = true;
    break;
  default:
    cell.verdict = fmt::format("exit {}", code);
    cell.failed = true;
  }
  return cell;
}

std::string cellText(const std::optional<Cell> &cell) {
  if (!cell)
    return "-";
  return fmt::format("{:.2f} s, {} MB, {}", cell->seconds, (cell->maxRssKb + 512) / 1024,
                     cell->verdict);
}

} // namespace

int main(int argc, char **argv) {
  std::string dkv = DKV_BINARY;
  double timeout = 60;
  std::vector<std::string> engines = {"explore", "spin", "z3", "closure", "auto"};
  std::vector<int64_t> counts = {8, 16, 32, 64, 128, 256};
  std::vector<std::string> kernels = {"all_gather",
                                      "all_gather_bidirectional",
                                      "all_gather_shared_sem",
                                      "all_reduce",
                                      "all_reduce_no_capacity",
                                      "reduce_scatter_bidirectional",
                                      "reduce_scatter_no_cleanup",
                                      "right_permute"};
  bool real = true;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--dkv" && i + 1 < argc) {
      dkv = argv[++i];
    } else if (arg == "--timeout" && i + 1 < argc) {
      timeout = std::strtod(argv[++i], nullptr);
    } else if (arg == "--engines" && i + 1 < argc) {
      engines = split(argv[++i]);
    } else if (arg == "--devices" && i + 1 < argc) {
      counts.clear();
      for (const std::string &n : split(argv[++i]))
        counts.push_back(std::stoll(n));
    } else if (arg == "--kernels" && i + 1 < argc) {
      kernels = split(argv[++i]);
    } else if (arg == "--no-real") {
      real = false;
    } else {
      fmt::print(stderr, "usage: dkv_scale_bench [--dkv PATH] [--timeout SEC] [--engines E,...] "
                         "[--devices N,...] [--kernels K,...] [--no-real]\n");
      return 1;
    }
  }
  const std::string source = DKV_SOURCE_DIR;
  const std::string outFile = fmt::format("/tmp/dkv_scale_bench.{}.out", getpid());
  auto command = [&](const bench::Example &example, int64_t devices, const std::string &engine) {
    std::vector<std::string> args = {
        dkv, "check", example.path, "--devices", std::to_string(devices), "--engine", engine,
        "--timeout", fmt::format("{:g}", timeout), "--memory", "4000", "--progress", "never",
        // The verdict's time: the verified-fix search after it is a phase of its own,
        // with its own limit (--fix-timeout, docs/explain.md).
        "--no-fix"};
    std::stringstream words(example.optionText);
    for (std::string w; words >> w;)
      args.push_back(w);
    return args;
  };
  auto header = [&](const std::string &title) {
    fmt::print("\n### {}\n\n| N |", title);
    for (const std::string &e : engines)
      fmt::print(" {} |", e);
    fmt::print("\n|---|");
    for (size_t i = 0; i < engines.size(); ++i)
      fmt::print("---|");
    fmt::print("\n");
  };
  fmt::print("dkv_scale_bench: {}, time limit {:g} s per cell\n", dkv, timeout);
  for (const std::string &name : kernels) {
    const bench::Example example = bench::readExample(source + "/examples/" + name + ".dk");
    if (!example.readable) {
      fmt::print(stderr, "cannot read examples/{}.dk\n", name);
      return 1;
    }
    header(name);
    std::map<std::string, bool> gaveUp;
    for (int64_t n : counts) {
      fmt::print("| {} |", n);
      for (const std::string &engine : engines) {
        std::optional<Cell> cell;
        if (!gaveUp[engine]) {
          cell = runCell(command(example, n, engine), timeout + 5, outFile);
          gaveUp[engine] = cell->failed;
        }
        fmt::print(" {} |", cellText(cell));
        std::fflush(stdout);
      }
      fmt::print("\n");
    }
  }
  if (real) {
    header("examples/real at 8 devices (or the count the transcription is written for)");
    for (const std::string &path : bench::examplesIn(source + "/examples/real")) {
      const bench::Example example = bench::readExample(path);
      if (!example.readable || example.staticError)
        continue;
      int64_t n = 8;
      if (!example.devices.empty() && !bench::allowsDevices(example, 8)) {
        // Written for a fixed mesh: its largest count (a lowering at 8 would be refused).
        std::string error;
        if (!bench::lowerExample(example, 8, error))
          n = example.devices.back();
      }
      fmt::print("| {} {} |", example.stem, n);
      for (const std::string &engine : engines) {
        Cell cell = runCell(command(example, n, engine), timeout + 5, outFile);
        fmt::print(" {} |", cellText(cell));
        std::fflush(stdout);
      }
      fmt::print("\n");
    }
  }
  std::remove(outFile.c_str());
  return 0;
}
