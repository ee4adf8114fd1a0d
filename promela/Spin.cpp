// Running spin / gcc / pan on the emitted model and turning pan's answer into a Verdict.
#include "promela/Spin.h"

#include "model/Verifier.h"
#include "promela/Emit.h"
#include "promela/Process.h"
#include "promela/Replay.h"

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>

namespace dkv::promela {

namespace {

namespace fs = std::filesystem;

const char *kModelFile = "model.pml";

/// The last lines of a tool's output, for a reason text.
std::string tail(const std::string &text, size_t maxLines = 6) {
  std::vector<std::string> lines;
  size_t begin = 0;
  while (begin < text.size()) {
    size_t end = text.find('\n', begin);
    if (end == std::string::npos)
      end = text.size();
    if (end > begin)
      lines.push_back(text.substr(begin, end - begin));
    begin = end + 1;
  }
  if (lines.size() > maxLines)
    lines.erase(lines.begin(), lines.end() - static_cast<long>(maxLines));
  return fmt::format("{}", fmt::join(lines, " | "));
}

/// The work directory: private and removed at the end unless the user keeps it.
class WorkDir {
public:
  explicit WorkDir(const std::string &keep) : keep_(!keep.empty()) {
    if (keep_) {
      std::error_code ec;
      fs::create_directories(keep, ec);
      if (!ec)
        path_ = fs::absolute(keep, ec).string();
      if (ec)
        error_ = fmt::format("cannot create {}: {}", keep, ec.message());
      return;
    }
    const char *tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/dkv-spin-XXXXXX";
    std::vector<char> buffer(pattern.begin(), pattern.end());
    buffer.push_back('\0');
    if (mkdtemp(buffer.data()) == nullptr)
      error_ = fmt::format("cannot create a temporary directory from {}", pattern);
    else
      path_ = buffer.data();
  }
  ~WorkDir() {
    if (!keep_ && !path_.empty()) {
      std::error_code ec;
      fs::remove_all(path_, ec);
    }
  }
  WorkDir(const WorkDir &) = delete;
  WorkDir &operator=(const WorkDir &) = delete;

  const std::string &path() const { return path_; }
  const std::string &error() const { return error_; }
  std::string file(const std::string &name) const { return path_ + "/" + name; }

private:
  bool keep_;
  std::string path_;
  std::string error_;
};

std::string secondsText(double s) { return fmt::format("{:.2f} s", s); }

class SpinRun {
public:
  SpinRun(const model::Program &program, const SpinOptions &options)
      : p_(program), o_(options), begin_(std::chrono::steady_clock::now()) {}

  report::Verdict run() {
    std::vector<std::string> problems = model::verifyProgram(p_);
    if (!problems.empty())
      return inconclusive("the model is malformed (a dkv bug): " + problems.front());
    // Spin numbers processes with a byte: at most 255 (the devices and the DMA loop).
    if (p_.deviceCount() + 1 > 255)
      return inconclusive(fmt::format("spin supports at most 255 processes; this instance has "
                                      "{} devices",
                                      p_.deviceCount()));
    WorkDir dir(o_.keepDir);
    if (!dir.error().empty())
      return inconclusive(dir.error());

    EmitOptions emit;
    emit.modelFileName = kModelFile;
    std::string text = emitPromela(p_, emit, &map_);
    {
      std::ofstream out(dir.file(kModelFile), std::ios::binary);
      out << text;
      if (!out)
        return inconclusive("cannot write " + dir.file(kModelFile));
    }

    // spin -a: generates pan.c and friends.
    ProcessResult spin = tool(dir, {o_.spin, "-a", kModelFile}, "spin");
    if (!spin.ok())
      return toolFailure(dir, spin, "spin -a", "spin");

    std::vector<std::string> cc = {o_.cc, o_.optimize, "-DSAFETY"};
    if (o_.memoryMb > 0)
      cc.push_back(fmt::format("-DMEMLIM={}", o_.memoryMb));
    cc.push_back(fmt::format("-DVECTORSZ={}", vectorSize()));
    for (const std::string &f : o_.ccFlags)
      cc.push_back(f);
    for (const char *a : {"-o", "pan", "pan.c"})
      cc.push_back(a);
    ProcessResult compile = tool(dir, cc, "cc");
    if (!compile.ok())
      return toolFailure(dir, compile, "compiling pan.c", "cc");

    depth_ = o_.depth > 0 ? o_.depth : map_.depthBound;
    std::vector<std::string> pan = {"./pan", "-n", fmt::format("-m{}", depth_)};
    if (int bits = hashBits(); bits > 0)
      pan.push_back(fmt::format("-w{}", bits));
    if (!o_.checkAssertions)
      pan.push_back("-A");
    if (!o_.checkDeadlocks)
      pan.push_back("-E");
    ProcessResult panRun = tool(dir, pan, "pan");
    std::string panText = readTextFile(dir.file("pan.out")) + readTextFile(dir.file("pan.err"));
    pan_ = parsePanOutput(panText);
    panSeconds_ = panRun.seconds;
    addStats();
    if (panRun.status == ProcessResult::Status::TimedOut)
      return inconclusive(
          fmt::format("pan did not finish within the time limit of {} s", o_.timeoutSeconds));
    if (panRun.status == ProcessResult::Status::SpawnFailed)
      return inconclusive("cannot run pan: " + panRun.error);
    if (panRun.status == ProcessResult::Status::Signaled)
      return inconclusive(fmt::format("pan was killed by signal {}", panRun.signal));
    if (pan_.outOfMemory)
      return inconclusive(
          fmt::format("pan ran out of memory (limit {} MB){}", o_.memoryMb, numbers()));
    if (panText.find("VECTORSZ") != std::string::npos)
      return inconclusive("pan's state vector is larger than -DVECTORSZ=" +
                          std::to_string(vectorSize()));
    if (!pan_.sawSummary)
      return inconclusive("cannot read pan's output: " + tail(panText));

    if (pan_.errors > 0)
      return counterexample(dir);
    if (pan_.depthTooSmall)
      return inconclusive(fmt::format("pan's search depth -m{} was too small; the search was "
                                      "truncated{}",
                                      depth_, numbers()));
    if (pan_.searchNotCompleted)
      return inconclusive("pan did not complete the search" + numbers());
    if (pan_.errors != 0)
      return inconclusive("cannot read pan's error count: " + tail(panText));
    report::Verdict v;
    v.status = report::Verdict::Status::Verified;
    v.stats = stats_;
    v.stats.push_back({"total time", secondsText(elapsed())});
    return v;
  }

private:
  double elapsed() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - begin_).count();
  }

  ProcessResult tool(const WorkDir &dir, const std::vector<std::string> &argv,
                     const std::string &name) {
    double left = o_.timeoutSeconds > 0 ? std::max(0.01, o_.timeoutSeconds - elapsed()) : 0;
    return runProcess(argv, dir.path(), dir.file(name + ".out"), dir.file(name + ".err"), left);
  }

  /// pan's -DVECTORSZ (default 1024 B): a generous estimate of the state vector,
  /// which holds every global and each process's program counter and overhead.
  int64_t vectorSize() const {
    int64_t bytes = 256 + 16 * (p_.deviceCount() + 1) + 4 * p_.dmas.size() +
                    p_.deviceCount() * (4 * static_cast<int64_t>(p_.semaphores.size()) + 2 +
                                        static_cast<int64_t>(p_.scopes.size())) +
                    4 * p_.options.invocations;
    return std::max<int64_t>(1024, 2 * bytes);
  }

  /// pan -w: the user's choice, else pan's default (2^24 slots, 128 MB) capped so the
  /// hash table takes at most a quarter of the memory limit.
  int hashBits() const {
    if (o_.hashBits > 0)
      return o_.hashBits;
    if (o_.memoryMb <= 0)
      return 0;
    int bits = 10;
    while (bits < 24 && (int64_t{8} << (bits + 1)) <= o_.memoryMb * (int64_t{1} << 20) / 4)
      ++bits;
    return bits == 24 ? 0 : bits;
  }

  std::string numbers() const {
    std::string out;
    if (pan_.statesStored >= 0)
      out += fmt::format(" after {} states", pan_.statesStored);
    if (pan_.depthReached >= 0)
      out += fmt::format(", depth {}", pan_.depthReached);
    if (pan_.memoryMb >= 0)
      out += fmt::format(", {:.1f} MB", pan_.memoryMb);
    return out;
  }

  void addStats() {
    if (pan_.statesStored >= 0)
      stats_.push_back({"states", std::to_string(pan_.statesStored)});
    if (pan_.transitions >= 0)
      stats_.push_back({"transitions", std::to_string(pan_.transitions)});
    if (pan_.depthReached >= 0)
      stats_.push_back({"depth", fmt::format("{} (limit {})", pan_.depthReached, depth_)});
    if (pan_.stateVectorBytes >= 0)
      stats_.push_back({"state vector", fmt::format("{} B", pan_.stateVectorBytes)});
    if (pan_.memoryMb >= 0)
      stats_.push_back({"memory", fmt::format("{:.1f} MB", pan_.memoryMb)});
    stats_.push_back({"pan time", secondsText(panSeconds_)});
  }

  report::Verdict inconclusive(std::string reason) {
    report::Verdict v;
    v.status = report::Verdict::Status::Inconclusive;
    v.reason = std::move(reason);
    v.stats = stats_;
    v.stats.push_back({"total time", secondsText(elapsed())});
    return v;
  }

  report::Verdict toolFailure(const WorkDir &dir, const ProcessResult &r, const std::string &what,
                              const std::string &name) {
    if (r.status == ProcessResult::Status::SpawnFailed)
      return inconclusive(fmt::format("{} failed: cannot run {} ({}); is it installed?", what,
                                      r.error.substr(0, r.error.find(':')), r.error));
    if (r.status == ProcessResult::Status::TimedOut)
      return inconclusive(
          fmt::format("{} did not finish within the time limit of {} s", what, o_.timeoutSeconds));
    std::string output =
        readTextFile(dir.file(name + ".err")) + readTextFile(dir.file(name + ".out"));
    return inconclusive(fmt::format("{} failed (exit {}): {}", what, r.exitCode, tail(output)));
  }

  /// pan found an error and wrote a trail: replay it and map it back.
  report::Verdict counterexample(const WorkDir &dir) {
    ProcessResult replayRun = tool(dir, {o_.spin, "-T", "-t", kModelFile}, "replay");
    if (!replayRun.ok())
      return toolFailure(dir, replayRun, "replaying the trail (spin -t)", "replay");
    Replay replay = parseReplay(readTextFile(dir.file("replay.out")));
    ReplayState state;
    int skipped = 0;
    report::Trace trace = buildTrace(p_, replay.steps, state, skipped);
    if (skipped > 0)
      return inconclusive(
          fmt::format("cannot map {} step(s) of spin's trail to the kernel", skipped));
    report::Finding finding;
    if (pan_.assertionViolated) {
      const Check *check = map_.checkAt(replay.assertLine);
      if (!check)
        return inconclusive(fmt::format("pan reports an assertion violation ({}) that dkv "
                                        "cannot map to the kernel (line {})",
                                        pan_.assertionText, replay.assertLine));
      if (check->what == Check::What::Overflow)
        return inconclusive(check->message);
      finding = checkFinding(p_, *check, state);
    } else if (pan_.invalidEndState) {
      std::optional<report::Finding> deadlock = deadlockFinding(p_, state);
      if (!deadlock)
        return inconclusive("pan reports an invalid end state in which every device finished");
      finding = std::move(*deadlock);
    } else {
      return inconclusive("pan reports an error dkv does not know" + numbers());
    }
    finding.trace = std::move(trace);
    report::Verdict v;
    v.status = report::Verdict::Status::Findings;
    v.findings.push_back(std::move(finding));
    v.stats = stats_;
    v.stats.push_back({"total time", secondsText(elapsed())});
    return v;
  }

  const model::Program &p_;
  const SpinOptions &o_;
  std::chrono::steady_clock::time_point begin_;
  LineMap map_;
  PanReport pan_;
  int64_t depth_ = 0;
  double panSeconds_ = 0;
  std::vector<std::pair<std::string, std::string>> stats_;
};

} // namespace

report::Verdict checkWithSpin(const model::Program &program, const SpinOptions &options) {
  try {
    return SpinRun(program, options).run();
  } catch (const std::exception &e) {
    report::Verdict v;
    v.status = report::Verdict::Status::Inconclusive;
    v.reason = std::string("internal error in the spin engine: ") + e.what();
    return v;
  } catch (...) {
    report::Verdict v;
    v.status = report::Verdict::Status::Inconclusive;
    v.reason = "internal error in the spin engine";
    return v;
  }
}

} // namespace dkv::promela
