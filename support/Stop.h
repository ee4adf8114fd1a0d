// Stopping work early: a stop request per run (StopToken), and the watchdog thread
// that makes one when a run's time limit passes, the process's memory reaches its
// ceiling, or SIGINT / SIGTERM / SIGHUP arrives (docs/design.md "Robustness budgets").
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

namespace dkv::support {

/// Why work was asked to stop.
enum class StopCause : int {
  None = 0,
  Time,   ///< the run's time limit (`--timeout`)
  Memory, ///< the memory ceiling (`--memory`), or an allocation failed
  Signal, ///< SIGINT, SIGTERM or SIGHUP
};

/// One run's request to stop (one instance of `dkv check`): set once, by the watchdog
/// or by the run itself, read by every phase of the run. Phases poll `requested()` (one
/// relaxed atomic load, cheap enough for an inner loop) and return early, incomplete;
/// code blocked in a call it cannot poll from (a Z3 check, a child process) registers a
/// hook that interrupts it. Thread-safe.
class StopToken {
public:
  StopToken() = default;
  StopToken(const StopToken &) = delete;
  StopToken &operator=(const StopToken &) = delete;

  bool requested() const noexcept { return cause_.load(std::memory_order_relaxed) != 0; }
  StopCause cause() const noexcept {
    return static_cast<StopCause>(cause_.load(std::memory_order_acquire));
  }
  /// Why, with the numbers, e.g. "time limit of 20 s reached"; empty before a request.
  std::string reason() const;

  /// Requests a stop (the first request wins; later ones are ignored) and runs the
  /// registered hooks. Returns true for the request that won.
  bool request(StopCause cause, const std::string &reason) const;

  /// The time limit: `seconds` from now (<= 0: none).
  void setTimeLimit(double seconds);
  /// Seconds left before the time limit (at least 0), or nullopt without one.
  std::optional<double> secondsLeft() const;
  /// requested(), after requesting a stop (StopCause::Time) if the time limit has
  /// passed: for a phase that must not wait for the watchdog's next look (a solver
  /// answer that may be due to the limit).
  bool poll() const;

  /// The phase working now ("loading", "lowering", "explore", ...), for the message of
  /// a run the watchdog has to end (a string literal: only the pointer is kept).
  void setPhase(const char *phase) const noexcept {
    phase_.store(phase, std::memory_order_relaxed);
  }
  const char *phase() const noexcept { return phase_.load(std::memory_order_relaxed); }

  /// A hook registered while it lives: called once, on the requesting thread, when a
  /// stop is requested (at once, on this thread, if it was already). Hooks must be quick
  /// and must not call back into the token.
  class Hook {
  public:
    Hook() = default;
    Hook(Hook &&other) noexcept;
    Hook &operator=(Hook &&other) noexcept;
    ~Hook();

  private:
    friend class StopToken;
    Hook(const StopToken *token, int id) : token_(token), id_(id) {}
    const StopToken *token_ = nullptr;
    int id_ = 0;
  };
  /// Registers `hook` (see Hook). A token that is null is never stopped: callers may
  /// pass a null token pointer through and call onStop on a real one only.
  [[nodiscard]] Hook onStop(std::function<void()> hook) const;

private:
  void removeHook(int id) const;

  // A token is a synchronisation object: requesting or polling it through a const
  // pointer (the engines see `const StopToken *`) changes only these.
  mutable std::atomic<int> cause_{0};
  mutable std::atomic<const char *> phase_{""};
  mutable std::mutex mutex_;
  mutable std::string reason_;                                    ///< under mutex_
  std::optional<std::chrono::steady_clock::time_point> deadline_; ///< under mutex_
  double limitSeconds_ = 0;                                       ///< under mutex_
  mutable std::map<int, std::function<void()>> hooks_;            ///< under mutex_
  mutable int nextHook_ = 0;                                      ///< under mutex_
};

/// True if `stop` is non-null and a stop was requested.
inline bool stopRequested(const StopToken *stop) noexcept { return stop && stop->requested(); }

/// The resident set size of this process in bytes (from /proc/self/statm), 0 when it
/// cannot be read.
int64_t residentBytes();

/// The watchdog: one thread that, every 20 ms,
/// - requests a stop (StopCause::Time) on each watched token whose deadline passed;
/// - requests a stop (StopCause::Memory) on every watched token when the process's
///   resident memory reaches the memory ceiling (if there is one), or when an
///   allocation failed (the new-handler below);
/// - catches SIGINT, SIGTERM and SIGHUP (those not ignored when it starts) and requests
///   a stop (StopCause::Signal) on every watched token; the caller then ends the
///   process by the signal (dieBySignal), as a shell expects; with no token watched (a
///   command that has none, or between two instances) the watchdog does so itself at
///   once, and a second signal ends the process at once from the handler;
/// - ends the process itself when a watched token is still watched `grace` seconds
///   after its stop was requested (a phase that cannot be interrupted): the cleanup
///   registry's files, directories and child processes are removed, a message naming
///   the reason and the phase goes to standard error, and the process exits with code
///   5 (inconclusive) or dies by the signal. This is the guarantee behind "within a
///   second of the limit".
/// It also installs a new-handler: the first allocation that fails frees a reserve of
/// 16 MB (so the run can still report), marks the failure (allocationFailures) and the
/// allocation is retried; once the reserve is gone a failing allocation throws
/// std::bad_alloc as usual. One watchdog per process at a time.
class Watchdog {
public:
  struct Options {
    int64_t memoryMb = 0; ///< the resident memory ceiling; 0: none
    double grace = 0.6;   ///< seconds a stopped run may take to wind down
  };
  explicit Watchdog(Options options);
  ~Watchdog();
  Watchdog(const Watchdog &) = delete;
  Watchdog &operator=(const Watchdog &) = delete;

  /// Watches `token` while the returned object lives, with a time limit of `seconds`
  /// from now (<= 0: none; StopToken::setTimeLimit).
  class Watch {
  public:
    Watch(Watch &&other) noexcept;
    ~Watch();

  private:
    friend class Watchdog;
    Watch(Watchdog *dog, int id) : dog_(dog), id_(id) {}
    Watchdog *dog_ = nullptr;
    int id_ = 0;
  };
  [[nodiscard]] Watch watch(StopToken &token, double seconds);

  /// The memory ceiling in bytes (0: none).
  int64_t memoryBytes() const { return options_.memoryMb << 20; }

  /// The watchdog of this process, or nullptr.
  static Watchdog *current();

private:
  struct Watched {
    StopToken *token;
    std::optional<std::chrono::steady_clock::time_point> stoppedAt;
  };
  void run();
  void tick();
  void stopAll(StopCause cause, const std::string &reason);
  [[noreturn]] void endProcess(const Watched &w);

  Options options_;
  std::mutex mutex_;
  std::map<int, Watched> watched_; ///< under mutex_
  int nextId_ = 0;                 ///< under mutex_
  bool quit_ = false;              ///< under mutex_
  uint64_t failuresSeen_ = 0;
  std::unique_ptr<struct WatchdogThread> thread_;
};

/// The signal (SIGINT, SIGTERM, SIGHUP) the watchdog caught, or 0.
int caughtSignal();
/// Removes what the cleanup registry holds, then ends the process by `signal` (its
/// default action). For a caught signal, once the run has stopped.
[[noreturn]] void dieBySignal(int signal);

/// How many allocations failed since the process started (the new-handler of
/// Watchdog counts them): a phase that turned a std::bad_alloc into something else (a
/// frontend's "internal" diagnostic) can be recognised by the count going up.
uint64_t allocationFailures();
/// Puts the new-handler's reserve back after a run that used it.
void rearmAllocationReserve();

/// What the process removes when it ends early (Watchdog's hard stop, dieBySignal):
/// temporary files (a report written to a temporary name before its rename), work
/// directories (spin's) and running child process groups (pan). Entries are removed
/// by the returned guard. Thread-safe.
class Cleanup {
public:
  Cleanup() = default;
  Cleanup(Cleanup &&other) noexcept;
  Cleanup &operator=(Cleanup &&other) noexcept;
  ~Cleanup();
  static Cleanup file(const std::string &path);
  static Cleanup directory(const std::string &path);
  static Cleanup processGroup(int pgid);
  /// Removes everything registered now (files, directories; kills process groups).
  static void runAll();

private:
  explicit Cleanup(int id) : id_(id) {}
  int id_ = 0;
};

} // namespace dkv::support
