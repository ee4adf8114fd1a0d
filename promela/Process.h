// Running an external program (spin, gcc, pan) with a time limit and captured output.
#pragma once

#include <string>
#include <vector>

namespace dkv::promela {

/// How an external program ended.
struct ProcessResult {
  enum class Status { Exited, Signaled, TimedOut, SpawnFailed, Interrupted };
  Status status = Status::SpawnFailed;
  int exitCode = -1;  ///< Status::Exited
  int signal = 0;     ///< Status::Signaled
  std::string error;  ///< Status::SpawnFailed: why (e.g. "No such file or directory")
                      ///< Status::Interrupted: dkv received a signal (InterruptScope)
  double seconds = 0; ///< wall-clock time

  bool ok() const { return status == Status::Exited && exitCode == 0; }
};

/// Runs `argv` (argv[0] is looked up in PATH; no shell is involved) in directory
/// `cwd` in its own process group, with stdin from /dev/null and stdout / stderr
/// written to the given files (absolute paths). When it runs longer than
/// `timeoutSeconds` (<= 0: no limit) the whole process group is killed with SIGKILL.
/// A non-empty `tmpDir` is the program's TMPDIR. Never throws. Inside an InterruptScope, a SIGINT,
/// SIGTERM or SIGHUP kills the program's process group and ends it with Status::Interrupted.
ProcessResult runProcess(const std::vector<std::string> &argv, const std::string &cwd,
                         const std::string &stdoutPath, const std::string &stderrPath,
                         double timeoutSeconds, const std::string &tmpDir = "");

/// Ctrl-C (and termination) while external programs run. runProcess starts each
/// program in its own process group, so a signal to dkv's group does not reach it,
/// and without this dkv would die leaving pan running and its work directory behind.
/// While at least one scope is alive (one per spin run; `-j` runs several at once),
/// SIGINT, SIGTERM and SIGHUP (those not ignored when the first scope starts) are
/// caught: the handler records the signal and kills the process group of every
/// program runProcess is waiting for, runProcess returns Status::Interrupted, the
/// callers unwind (removing their work directories) and, when the last scope ends,
/// the previous dispositions come back and the signal is raised again, so dkv still
/// ends by it (the shell sees 128 + its number).
class InterruptScope {
public:
  InterruptScope();
  ~InterruptScope();
  InterruptScope(const InterruptScope &) = delete;
  InterruptScope &operator=(const InterruptScope &) = delete;
};

/// The signal an InterruptScope caught (0: none yet).
int interruptSignal();

/// The whole content of a file, or "" when it can't be read.
std::string readTextFile(const std::string &path);

} // namespace dkv::promela
