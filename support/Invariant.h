// Always-on internal invariants (never for user input) and the process exit codes.
#pragma once

namespace dkv::support {

/// Prints file, line and reason to stderr, then aborts. For dkv bugs only.
[[noreturn]] void invariantFailed(const char *file, int line, const char *condition,
                                  const char *reason);

/// Exit codes of the `dkv` command (README "Exit codes").
enum ExitCode : int {
  kExitOk = 0,
  kExitUsage = 1,
  kExitInputError = 2,
  /// The report could not be written completely (a write error on standard output or
  /// on the -o file): nothing trustworthy was written.
  kExitOutput = 3,
  kExitInconclusive = 5,
  kExitInternal = 6,
  kExitFindings = 10,
};

} // namespace dkv::support

/// Checks `cond` in every build type; on failure reports `reason` and aborts.
#define DKV_INVARIANT(cond, reason)                                                                \
  do {                                                                                             \
    if (!(cond))                                                                                   \
      ::dkv::support::invariantFailed(__FILE__, __LINE__, #cond, reason);                          \
  } while (false)

/// Marks code that must never run.
#define DKV_UNREACHABLE(reason)                                                                    \
  ::dkv::support::invariantFailed(__FILE__, __LINE__, "unreachable", reason)
