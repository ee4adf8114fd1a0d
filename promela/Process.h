// Running an external program (spin, gcc, pan) with a time limit and captured output.
#pragma once

#include "support/Stop.h"

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
                      ///< Status::Interrupted: the stop request's reason
  double seconds = 0; ///< wall-clock time

  bool ok() const { return status == Status::Exited && exitCode == 0; }
};

/// Runs `argv` (argv[0] is looked up in PATH; no shell is involved) in directory
/// `cwd` in its own process group, with stdin from /dev/null and stdout / stderr
/// written to the given files (absolute paths). When it runs longer than
/// `timeoutSeconds` (<= 0: no limit) the whole process group is killed with SIGKILL.
/// A non-empty `tmpDir` is the program's TMPDIR. Never throws. When `stop` (may be
/// null) is requested while the program runs (the run's time limit, memory ceiling, or
/// a signal to dkv: support/Stop.h) its process group is killed at once and the result
/// is Status::Interrupted with the token's reason. The process group is in the cleanup
/// registry (support::Cleanup) while it runs, so a process that ends early, or a second
/// signal, kills it too: the programs run in a group of their own, out of reach of the
/// terminal's Ctrl-C.
ProcessResult runProcess(const std::vector<std::string> &argv, const std::string &cwd,
                         const std::string &stdoutPath, const std::string &stderrPath,
                         double timeoutSeconds, const std::string &tmpDir = "",
                         const support::StopToken *stop = nullptr);

/// The whole content of a file, or "" when it can't be read.
std::string readTextFile(const std::string &path);

} // namespace dkv::promela
