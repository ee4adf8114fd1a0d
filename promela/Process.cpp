// Running external programs with posix_spawn, captured output and a time limit.
#include "promela/Process.h"

#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <mutex>
#include <spawn.h>
#include <sstream>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

extern char **environ;

namespace dkv::promela {

namespace {

/// Frees posix_spawn's attribute objects on every path.
struct SpawnSetup {
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  SpawnSetup() {
    posix_spawn_file_actions_init(&actions);
    posix_spawnattr_init(&attr);
  }
  ~SpawnSetup() {
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
  }
};

} // namespace

ProcessResult runProcess(const std::vector<std::string> &argv, const std::string &cwd,
                         const std::string &stdoutPath, const std::string &stderrPath,
                         double timeoutSeconds, const std::string &tmpDir,
                         const support::StopToken *stop) {
  ProcessResult result;
  if (argv.empty()) {
    result.error = "empty command";
    return result;
  }
  if (support::stopRequested(stop)) {
    result.status = ProcessResult::Status::Interrupted;
    result.error = stop->reason();
    return result;
  }
  SpawnSetup setup;
  int rc = 0;
  auto fail = [&](const char *what) {
    result.status = ProcessResult::Status::SpawnFailed;
    result.error = std::string(what) + ": " + std::strerror(rc);
    return result;
  };
  if ((rc = posix_spawn_file_actions_addchdir_np(&setup.actions, cwd.c_str())) != 0)
    return fail("chdir");
  if ((rc = posix_spawn_file_actions_addopen(&setup.actions, STDIN_FILENO, "/dev/null", O_RDONLY,
                                             0)) != 0 ||
      (rc = posix_spawn_file_actions_addopen(&setup.actions, STDOUT_FILENO, stdoutPath.c_str(),
                                             O_WRONLY | O_CREAT | O_TRUNC, 0644)) != 0 ||
      (rc = posix_spawn_file_actions_addopen(&setup.actions, STDERR_FILENO, stderrPath.c_str(),
                                             O_WRONLY | O_CREAT | O_TRUNC, 0644)) != 0)
    return fail("redirect");
  // Own process group, so that a timeout also kills what the program started (spin
  // runs the C preprocessor).
  posix_spawnattr_setflags(&setup.attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&setup.attr, 0);

  std::vector<char *> args;
  for (const std::string &a : argv)
    args.push_back(const_cast<char *>(a.c_str()));
  args.push_back(nullptr);

  // The environment, with TMPDIR replaced when asked.
  std::vector<std::string> envText;
  std::vector<char *> env;
  for (char **e = environ; *e; ++e)
    if (tmpDir.empty() || std::strncmp(*e, "TMPDIR=", 7) != 0)
      env.push_back(*e);
  if (!tmpDir.empty()) {
    envText.push_back("TMPDIR=" + tmpDir);
    env.push_back(envText.back().data());
  }
  env.push_back(nullptr);

  auto begin = std::chrono::steady_clock::now();
  pid_t pid = 0;
  rc = posix_spawnp(&pid, args[0], &setup.actions, &setup.attr, args.data(), env.data());
  if (rc != 0)
    return fail(argv[0].c_str());

  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  };
  support::Cleanup group = support::Cleanup::processGroup(pid);
  int status = 0;
  auto pause = std::chrono::milliseconds(2);
  bool timedOut = false;
  bool interrupted = false;
  for (;;) {
    pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid)
      break;
    if (done < 0 && errno != EINTR) {
      rc = errno;
      kill(-pid, SIGKILL);
      return fail("waitpid");
    }
    interrupted = support::stopRequested(stop);
    if (interrupted || (timeoutSeconds > 0 && elapsed() > timeoutSeconds)) {
      kill(-pid, SIGKILL);
      while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      timedOut = !interrupted;
      break;
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(50));
  }
  result.seconds = elapsed();
  if (interrupted) {
    result.status = ProcessResult::Status::Interrupted;
    result.error = stop->reason();
  } else if (timedOut) {
    result.status = ProcessResult::Status::TimedOut;
  } else if (WIFEXITED(status)) {
    result.status = ProcessResult::Status::Exited;
    result.exitCode = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.status = ProcessResult::Status::Signaled;
    result.signal = WTERMSIG(status);
  }
  return result;
}

std::string readTextFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return {};
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

} // namespace dkv::promela
