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

/// The switch that turns a finding kind's asserts off, or nullptr for deadlocks
/// (pan -E turns invalid end states off without recompiling).
const char *switchForKind(report::FindingKind kind) {
  switch (kind) {
  case report::FindingKind::Race:
    return kCheckRaces;
  case report::FindingKind::ExitViolation:
    return kCheckExit;
  case report::FindingKind::LifetimeViolation:
    return kCheckLifetime;
  case report::FindingKind::Deadlock:
    return nullptr;
  }
  return nullptr;
}

/// One checkWithSpin call. pan stops at its first error, so to report every kind of
/// finding the instance has (as exhaustive exploration does) the search is repeated
/// with the kinds already found switched off: the asserts of a kind by recompiling
/// with -DCHECK_...=0, deadlocks by pan -E. At most four searches; an instance
/// without findings needs one.
class SpinRun {
public:
  SpinRun(const model::Program &program, const SpinOptions &options)
      : p_(program), o_(options), begin_(std::chrono::steady_clock::now()) {}

  report::Verdict run() {
    std::vector<std::string> problems = model::verifyProgram(p_);
    if (!problems.empty())
      return finish("the model is malformed (a dkv bug): " + problems.front());
    // Spin numbers processes with a byte: at most 255 (the devices and the DMA loop).
    if (p_.deviceCount() + 1 > 255)
      return finish(fmt::format("spin supports at most 255 processes; this instance has "
                                "{} devices",
                                p_.deviceCount()));
    WorkDir dir(o_.keepDir);
    if (!dir.error().empty())
      return finish(dir.error());

    EmitOptions emit;
    emit.modelFileName = kModelFile;
    std::string text = emitPromela(p_, emit, &map_);
    {
      std::ofstream out(dir.file(kModelFile), std::ios::binary);
      out << text;
      if (!out)
        return finish("cannot write " + dir.file(kModelFile));
    }
    depth_ = o_.depth > 0 ? o_.depth : map_.depthBound;
    checkDeadlocks_ = o_.checkDeadlocks;
    if (!o_.checkAssertions)
      for (const char *gate : {kCheckRaces, kCheckExit, kCheckLifetime})
        off_.push_back(gate);

    bool compiled = false;
    for (;;) {
      if (!compiled) {
        if (std::string problem = compile(dir); !problem.empty())
          return finish(problem);
        compiled = true;
      }
      std::string problem;
      bool complete = search(dir, problem);
      if (!problem.empty())
        return finish(problem);
      if (complete)
        return finish("");
      // pan found an error: map it back, then search again without its kind.
      report::Finding finding;
      if (std::string why = counterexample(dir, finding); !why.empty())
        return finish(why);
      report::FindingKind kind = finding.kind;
      // A kind is switched off once found, so it can't come back; if it did (a dkv
      // bug), stop rather than search forever.
      for (const report::Finding &f : findings_)
        if (f.kind == kind)
          return finish(fmt::format("pan reports a second {} with its checks switched off",
                                    report::findingKindName(kind)));
      findings_.push_back(std::move(finding));
      if (!o_.allKinds)
        return finish("");
      if (const char *gate = switchForKind(kind)) {
        off_.push_back(gate);
        compiled = false;
      } else {
        checkDeadlocks_ = false;
      }
      if (off_.size() == 3 && !checkDeadlocks_)
        return finish(""); // every kind found (or off): nothing left to search for
    }
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

  /// spin's command line with the current switches: `spin -DCHECK_RACES=0 ... rest`.
  std::vector<std::string> spinCommand(std::initializer_list<std::string> rest) const {
    std::vector<std::string> argv = {o_.spin};
    for (const char *gate : off_)
      argv.push_back(fmt::format("-D{}=0", gate));
    argv.insert(argv.end(), rest);
    return argv;
  }

  /// spin -a and the C compiler; "" on success, else why not.
  std::string compile(const WorkDir &dir) {
    ProcessResult spin = tool(dir, spinCommand({"-a", kModelFile}), "spin");
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
    return "";
  }

  /// Runs pan once. True when it searched the whole state space without an error;
  /// false with `problem` empty when it stopped at an error (a trail to replay);
  /// false with `problem` set when the search is inconclusive.
  bool search(const WorkDir &dir, std::string &problem) {
    std::vector<std::string> pan = {"./pan", "-n", fmt::format("-m{}", depth_)};
    if (int bits = hashBits(); bits > 0)
      pan.push_back(fmt::format("-w{}", bits));
    // Never -A: the overflow asserts guard the model itself and stay on.
    if (!checkDeadlocks_)
      pan.push_back("-E");
    ProcessResult panRun = tool(dir, pan, "pan");
    std::string panText = readTextFile(dir.file("pan.out")) + readTextFile(dir.file("pan.err"));
    pan_ = parsePanOutput(panText);
    ++panRuns_;
    panSeconds_ += panRun.seconds;
    if (panRun.status == ProcessResult::Status::TimedOut)
      problem = fmt::format("pan did not finish within the time limit of {} s", o_.timeoutSeconds);
    else if (panRun.status == ProcessResult::Status::SpawnFailed)
      problem = "cannot run pan: " + panRun.error;
    else if (panRun.status == ProcessResult::Status::Signaled)
      problem = fmt::format("pan was killed by signal {}", panRun.signal);
    else if (pan_.outOfMemory)
      problem = fmt::format("pan ran out of memory (limit {} MB){}", o_.memoryMb, numbers());
    else if (panText.find("VECTORSZ") != std::string::npos)
      problem = "pan's state vector is larger than -DVECTORSZ=" + std::to_string(vectorSize());
    else if (!pan_.sawSummary)
      problem = "cannot read pan's output: " + tail(panText);
    else if (pan_.errors > 0)
      return false;
    else if (pan_.depthTooSmall)
      problem = fmt::format("pan's search depth -m{} was too small; the search was "
                            "truncated{}",
                            depth_, numbers());
    else if (pan_.searchNotCompleted)
      problem = "pan did not complete the search" + numbers();
    else if (pan_.errors != 0)
      problem = "cannot read pan's error count: " + tail(panText);
    return problem.empty();
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

  /// pan -w: the user's choice, else 2^22 slots (32 MB; pan's own default of 2^24
  /// takes a noticeable time to clear for the many tiny instances), capped so the
  /// hash table takes at most a quarter of the memory limit. The table chains
  /// collisions, so its size changes only speed, never the result.
  int hashBits() const {
    if (o_.hashBits > 0)
      return o_.hashBits;
    int bits = 22;
    if (o_.memoryMb > 0)
      while (bits > 10 && (int64_t{8} << bits) > o_.memoryMb * (int64_t{1} << 20) / 4)
        --bits;
    return bits;
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

  /// Statistics of the last pan run (with the kinds found before switched off, the
  /// one that searched the whole state space when the search completed), the number
  /// of runs and their summed time.
  std::vector<std::pair<std::string, std::string>> stats() const {
    std::vector<std::pair<std::string, std::string>> out;
    if (pan_.statesStored >= 0)
      out.push_back({"states", std::to_string(pan_.statesStored)});
    if (pan_.transitions >= 0)
      out.push_back({"transitions", std::to_string(pan_.transitions)});
    if (pan_.depthReached >= 0)
      out.push_back({"depth", fmt::format("{} (limit {})", pan_.depthReached, depth_)});
    if (pan_.stateVectorBytes >= 0)
      out.push_back({"state vector", fmt::format("{} B", pan_.stateVectorBytes)});
    if (pan_.memoryMb >= 0)
      out.push_back({"memory", fmt::format("{:.1f} MB", pan_.memoryMb)});
    if (panRuns_ > 0) {
      out.push_back({"pan runs", std::to_string(panRuns_)});
      out.push_back({"pan time", secondsText(panSeconds_)});
    }
    out.push_back({"total time", secondsText(elapsed())});
    return out;
  }

  /// The verdict: the findings so far, else verified when `problem` is empty, else
  /// inconclusive. With findings, a problem means the search for further kinds
  /// stopped early; the findings stand and the reason says what was not searched.
  report::Verdict finish(const std::string &problem) {
    report::Verdict v;
    v.stats = stats();
    if (!findings_.empty()) {
      v.status = report::Verdict::Status::Findings;
      v.findings = std::move(findings_);
      if (!problem.empty())
        v.reason = "the search for further kinds of findings stopped: " + problem;
    } else if (problem.empty()) {
      v.status = report::Verdict::Status::Verified;
    } else {
      v.status = report::Verdict::Status::Inconclusive;
      v.reason = problem;
    }
    return v;
  }

  std::string toolFailure(const WorkDir &dir, const ProcessResult &r, const std::string &what,
                          const std::string &name) {
    if (r.status == ProcessResult::Status::SpawnFailed)
      return fmt::format("{} failed: cannot run {} ({}); is it installed?", what,
                         r.error.substr(0, r.error.find(':')), r.error);
    if (r.status == ProcessResult::Status::TimedOut)
      return fmt::format("{} did not finish within the time limit of {} s", what,
                         o_.timeoutSeconds);
    if (r.status == ProcessResult::Status::Signaled)
      return fmt::format("{} was killed by signal {}", what, r.signal);
    std::string output =
        readTextFile(dir.file(name + ".err")) + readTextFile(dir.file(name + ".out"));
    return fmt::format("{} failed (exit {}): {}", what, r.exitCode, tail(output));
  }

  /// pan found an error and wrote a trail: replay it (with the same switches) and map
  /// it back to a finding with its trace and schedule. "" on success, else why not.
  std::string counterexample(const WorkDir &dir, report::Finding &finding) {
    ProcessResult replayRun = tool(dir, spinCommand({"-T", "-t", kModelFile}), "replay");
    if (!replayRun.ok())
      return toolFailure(dir, replayRun, "replaying the trail (spin -t)", "replay");
    Replay replay = parseReplay(readTextFile(dir.file("replay.out")));
    ReplayState state;
    int skipped = 0;
    report::Trace trace = buildTrace(p_, replay.steps, state, skipped);
    if (skipped > 0)
      return fmt::format("cannot map {} step(s) of spin's trail to the kernel", skipped);
    if (pan_.assertionViolated) {
      const Check *check = map_.checkAt(replay.assertLine);
      if (!check)
        return fmt::format("pan reports an assertion violation ({}) that dkv cannot map to "
                           "the kernel (line {})",
                           pan_.assertionText, replay.assertLine);
      if (check->what == Check::What::Overflow)
        return check->message;
      finding = checkFinding(p_, *check, state);
    } else if (pan_.invalidEndState) {
      std::optional<report::Finding> deadlock = deadlockFinding(p_, state);
      if (!deadlock)
        return "pan reports an invalid end state in which every device finished";
      finding = std::move(*deadlock);
    } else {
      return "pan reports an error dkv does not know" + numbers();
    }
    finding.trace = std::move(trace);
    finding.schedule = toSchedule(replay.steps);
    return "";
  }

  const model::Program &p_;
  const SpinOptions &o_;
  std::chrono::steady_clock::time_point begin_;
  LineMap map_;
  PanReport pan_;
  int64_t depth_ = 0;
  int panRuns_ = 0;
  double panSeconds_ = 0;
  bool checkDeadlocks_ = true;
  std::vector<const char *> off_; ///< switches turned off (kCheckRaces, ...)
  std::vector<report::Finding> findings_;
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
