// Running spin / gcc / pan on the emitted model and turning pan's answer into a Verdict.
#include "promela/Spin.h"

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
    if (mkdtemp(buffer.data()) == nullptr) {
      error_ = fmt::format("cannot create a temporary directory from {}", pattern);
    } else {
      path_ = buffer.data();
      // Removed also when the process ends early (support/Stop.h).
      cleanup_ = support::Cleanup::directory(path_);
    }
  }
  ~WorkDir() {
    cleanup_ = support::Cleanup();
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
  support::Cleanup cleanup_;
};

std::string secondsText(double s) { return fmt::format("{:.2f} s", s); }

/// One checkWithSpin call. pan stops at its first error, so to report every
/// violated property (as exhaustive exploration does) the model is regenerated
/// without the checks of the properties found so far and searched again, until pan
/// finds no more errors. Each round costs one spin -a, one compile and one pan run.
class SpinRun {
public:
  SpinRun(const semantics::Machine &machine, const SpinOptions &options)
      : m_(machine), p_(machine.program()), o_(options), begin_(std::chrono::steady_clock::now()) {}

  semantics::EngineResult run() {
    // Spin numbers processes with a byte: at most 255 (the devices and the DMA loop).
    if (p_.deviceCount() + 1 > 255)
      return finish(fmt::format("spin supports at most 255 processes; this instance has "
                                "{} devices",
                                p_.deviceCount()));
    WorkDir dir(o_.keepDir);
    if (!dir.error().empty())
      return finish(dir.error());
    depth_ = o_.depth;
    checkDeadlocks_ = o_.checkDeadlocks;
    if (!o_.checkAssertions)
      for (const char *gate : {kCheckRaces, kCheckExit, kCheckLifetime})
        off_.push_back(gate);

    for (;;) {
      semantics::EngineProgress progress;
      progress.engine = "spin";
      progress.phase = fmt::format("pan run {}", panRuns_ + 1);
      if (!semantics::reportProgress(result_, progress, o_.events))
        return finish(semantics::kStoppedReason);
      if (std::string problem = writeModel(dir); !problem.empty())
        return finish(problem);
      if (std::string problem = compile(dir); !problem.empty())
        return finish(problem);
      std::string problem;
      bool complete = search(dir, problem);
      if (!problem.empty())
        return finish(problem);
      if (complete)
        return finish("");
      // pan found an error: map it back to witnesses, then search again without them.
      std::vector<semantics::Witness> found;
      if (std::string why = counterexample(dir, found); !why.empty())
        return finish(why);
      for (semantics::Witness &w : found) {
        // A property is left out once found, so it can't come back; if it did (a dkv
        // bug), stop rather than search forever.
        if (!emit_.skip.insert(w.property).second)
          return finish(fmt::format("pan reports {} again although its checks were left out",
                                    m_.properties().property(w.property).id));
        if (!semantics::addWitness(result_, std::move(w), o_.events))
          return finish(semantics::kStoppedReason);
      }
      if (!o_.allProperties)
        return finish("");
    }
  }

private:
  double elapsed() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - begin_).count();
  }

  ProcessResult tool(const WorkDir &dir, const std::vector<std::string> &argv,
                     const std::string &name) {
    double left = o_.timeoutSeconds > 0 ? std::max(0.01, o_.timeoutSeconds - elapsed()) : 0;
    // TMPDIR: the tools' own temporary files (gcc's, the preprocessor's) go into the
    // work directory, so none is left behind when a signal kills them.
    return runProcess(argv, dir.path(), dir.file(name + ".out"), dir.file(name + ".err"), left,
                      dir.path(), o_.events ? o_.events->stop : nullptr);
  }

  /// spin's command line with the current switches: `spin -DCHECK_RACES=0 ... rest`.
  std::vector<std::string> spinCommand(std::initializer_list<std::string> rest) const {
    std::vector<std::string> argv = {o_.spin};
    for (const char *gate : off_)
      argv.push_back(fmt::format("-D{}=0", gate));
    argv.insert(argv.end(), o_.spinFlags.begin(), o_.spinFlags.end());
    argv.insert(argv.end(), rest);
    return argv;
  }

  /// Writes the model with the current skip set; "" on success, else why not.
  std::string writeModel(const WorkDir &dir) {
    emit_.modelFileName = kModelFile;
    emit_.stop = o_.events ? o_.events->stop : nullptr;
    std::string text = emitPromela(m_.properties(), emit_, &map_);
    if (semantics::stopRequested(o_.events))
      return o_.events->stop->reason() + " while writing the Promela model";
    if (o_.depth <= 0)
      depth_ = map_.depthBound;
    std::ofstream out(dir.file(kModelFile), std::ios::binary);
    out << text;
    if (!out)
      return "cannot write " + dir.file(kModelFile);
    return "";
  }

  /// spin -a and the C compiler; "" on success, else why not.
  std::string compile(const WorkDir &dir) {
    ProcessResult spin = tool(dir, spinCommand({"-a", kModelFile}), "spin");
    if (!spin.ok())
      return toolFailure(dir, spin, "spin -a", "spin");
    // Searching again for more properties explores the same state space with fewer
    // checks: when the last search took under a second, compiling pan.c without
    // optimisation (about a third of gcc's -O2 time) costs less than it loses.
    const bool quick = panRuns_ > 0 && lastPanSeconds_ < 1.0;
    std::vector<std::string> cc = {o_.cc, quick ? "-O0" : o_.optimize, "-DSAFETY"};
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
    lastPanSeconds_ = panRun.seconds;
    if (panRun.status == ProcessResult::Status::Interrupted)
      problem = panRun.error + ": pan was stopped" + numbers();
    else if (panRun.status == ProcessResult::Status::TimedOut)
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
      out +=
          fmt::format(" after {}{} states", pan_.countsRounded ? "about " : "", pan_.statesStored);
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
    // pan prints counts over 999999 rounded to six digits ("1.04858e+06"): say so.
    const char *about = pan_.countsRounded ? "about " : "";
    if (pan_.statesStored >= 0)
      out.push_back({"states", about + std::to_string(pan_.statesStored)});
    if (pan_.transitions >= 0)
      out.push_back({"transitions", about + std::to_string(pan_.transitions)});
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

  /// The result: the witnesses so far, complete when `problem` is empty. When the
  /// run's time limit has passed, its stop request is the reason (a tool's own time
  /// limit, what is left of it, may have ended it a moment before the watchdog).
  semantics::EngineResult finish(const std::string &problem) {
    semantics::EngineResult r;
    r.stats = stats();
    r.witnesses = std::move(result_.witnesses);
    r.complete = problem.empty();
    r.reason = problem;
    if (!problem.empty() && problem != semantics::kStoppedReason && o_.events && o_.events->stop &&
        o_.events->stop->poll() && problem.find(o_.events->stop->reason()) != 0)
      r.reason = o_.events->stop->reason() + ": " + problem;
    return r;
  }

  std::string toolFailure(const WorkDir &dir, const ProcessResult &r, const std::string &what,
                          const std::string &name) {
    if (r.status == ProcessResult::Status::SpawnFailed)
      return fmt::format("{} failed: cannot run {} ({}); is it installed?", what,
                         r.error.substr(0, r.error.find(':')), r.error);
    if (r.status == ProcessResult::Status::Interrupted)
      return fmt::format("{}: {} was stopped", r.error, what);
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
  /// it to the properties it violates with the schedule that reaches them. "" on
  /// success, else why not.
  std::string counterexample(const WorkDir &dir, std::vector<semantics::Witness> &found) {
    ProcessResult replayRun = tool(dir, spinCommand({"-T", "-t", kModelFile}), "replay");
    if (!replayRun.ok())
      return toolFailure(dir, replayRun, "replaying the trail (spin -t)", "replay");
    Replay replay = parseReplay(readTextFile(dir.file("replay.out")));
    report::Schedule schedule = toSchedule(replay.steps);
    if (pan_.assertionViolated) {
      const Check *check = map_.checkAt(replay.assertLine);
      if (!check)
        return fmt::format("pan reports an assertion violation ({}) that dkv cannot map to "
                           "the kernel (line {})",
                           pan_.assertionText, replay.assertLine);
      if (check->overflow)
        return check->message;
      // The failed assert belongs to a step that did not run: its printf comes first in
      // its part of the d_step, so the step is in the schedule already. A d_step with
      // fused DMA chunks has printed the trace lines of its later parts too (spin's
      // replay runs the d_step to its end before it reports the assert), so the
      // schedule ends at the last occurrence of the assert's own step.
      for (size_t i = schedule.size(); i-- > 0;)
        if (schedule[i].kind == check->step.kind && schedule[i].id == check->step.id) {
          schedule.resize(i + 1);
          break;
        }
      found.push_back({m_.properties().obligation(check->obligation).property, schedule});
      return "";
    }
    if (pan_.invalidEndState) {
      // Every wait the devices are stuck at in the final state is a violated deadlock
      // property (the trail ends in that state).
      semantics::ControlState before;
      std::string error;
      std::optional<semantics::ControlState> end =
          semantics::replaySchedule(m_, schedule, before, nullptr, error);
      if (!end)
        return "cannot replay spin's trail: " + error;
      std::vector<semantics::ObligationIndex> stuck;
      std::vector<report::ScheduleStep> enabled;
      m_.enabledSteps(*end, enabled);
      if (enabled.empty())
        m_.stuck(*end, stuck);
      for (semantics::ObligationIndex o : stuck) {
        semantics::PropertyIndex p = m_.properties().obligation(o).property;
        if (emit_.skip.count(p))
          continue;
        bool seen = false;
        for (const semantics::Witness &w : found)
          seen = seen || w.property == p;
        if (!seen)
          found.push_back({p, schedule});
      }
      if (found.empty())
        return "pan reports an invalid end state that is not a deadlock of the model" + numbers();
      return "";
    }
    return "pan reports an error dkv does not know" + numbers();
  }

  const semantics::Machine &m_;
  const model::Program &p_;
  const SpinOptions &o_;
  std::chrono::steady_clock::time_point begin_;
  LineMap map_;
  PanReport pan_;
  int64_t depth_ = 0;
  int panRuns_ = 0;
  double panSeconds_ = 0;
  double lastPanSeconds_ = 0;
  bool checkDeadlocks_ = true;
  std::vector<const char *> off_;  ///< switches turned off (kCheckRaces, ...)
  EmitOptions emit_;               ///< with the properties found so far to skip
  semantics::EngineResult result_; ///< the witnesses so far (semantics::addWitness)
};

} // namespace

semantics::EngineResult checkWithSpin(const semantics::Machine &machine,
                                      const SpinOptions &options) {
  // A signal to dkv reaches the run as its stop request (EngineEvents::stop): the run
  // kills its programs and removes its work directory; the caller ends the process by
  // the signal.
  // Running out of memory is inconclusive; any other exception is a dkv bug and leaves
  // the library (the work directory is removed on the way), to end the run as an
  // internal error (exit 6).
  try {
    return SpinRun(machine, options).run();
  } catch (const std::bad_alloc &) {
    semantics::EngineResult r;
    r.complete = false;
    r.reason = "out of memory: an allocation failed";
    return r;
  }
}

} // namespace dkv::promela
