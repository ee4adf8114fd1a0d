// Stop requests, the watchdog thread, the new-handler and the cleanup registry.
#include "support/Stop.h"

#include "support/Invariant.h"

#include <fmt/format.h>

#include <array>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <new>
#include <thread>
#include <unistd.h>
#include <vector>

namespace dkv::support {

using Clock = std::chrono::steady_clock;

// ---------------------------------------------------------------- StopToken

std::string StopToken::reason() const {
  std::lock_guard lock(mutex_);
  return reason_;
}

bool StopToken::request(StopCause cause, const std::string &reason) const {
  // The hooks run under the lock, so that a Hook's destructor (which takes it) returns
  // only once no hook of it is running: what a hook interrupts outlives the call.
  std::lock_guard lock(mutex_);
  if (cause_.load(std::memory_order_relaxed) != 0)
    return false;
  reason_ = reason;
  cause_.store(static_cast<int>(cause), std::memory_order_release);
  for (auto &[id, hook] : hooks_)
    hook();
  return true;
}

void StopToken::setTimeLimit(double seconds) {
  std::lock_guard lock(mutex_);
  limitSeconds_ = seconds;
  if (seconds > 0)
    deadline_ = Clock::now() +
                std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  else
    deadline_.reset();
}

std::optional<double> StopToken::secondsLeft() const {
  std::lock_guard lock(mutex_);
  if (!deadline_)
    return std::nullopt;
  return std::max(0.0, std::chrono::duration<double>(*deadline_ - Clock::now()).count());
}

bool StopToken::poll() const {
  if (requested())
    return true;
  double seconds = 0;
  {
    std::lock_guard lock(mutex_);
    if (!deadline_ || Clock::now() < *deadline_)
      return false;
    seconds = limitSeconds_;
  }
  request(StopCause::Time, fmt::format("time limit of {:g} s reached", seconds));
  return true;
}

StopToken::Hook StopToken::onStop(std::function<void()> hook) const {
  {
    std::lock_guard lock(mutex_);
    if (cause_.load(std::memory_order_relaxed) == 0) {
      const int id = ++nextHook_;
      hooks_.emplace(id, std::move(hook));
      return Hook(this, id);
    }
  }
  hook();
  return Hook();
}

void StopToken::removeHook(int id) const {
  std::lock_guard lock(mutex_);
  hooks_.erase(id);
}

StopToken::Hook::Hook(Hook &&other) noexcept : token_(other.token_), id_(other.id_) {
  other.token_ = nullptr;
}

StopToken::Hook &StopToken::Hook::operator=(Hook &&other) noexcept {
  if (this != &other) {
    if (token_)
      token_->removeHook(id_);
    token_ = other.token_;
    id_ = other.id_;
    other.token_ = nullptr;
  }
  return *this;
}

StopToken::Hook::~Hook() {
  if (token_)
    token_->removeHook(id_);
}

// ---------------------------------------------------------------- memory

int64_t residentBytes() {
  // statm: size resident shared text lib data dt, in pages.
  std::FILE *f = std::fopen("/proc/self/statm", "r");
  if (!f)
    return 0;
  long size = 0, resident = 0;
  const int read = std::fscanf(f, "%ld %ld", &size, &resident);
  std::fclose(f);
  if (read != 2)
    return 0;
  return static_cast<int64_t>(resident) * sysconf(_SC_PAGESIZE);
}

namespace {

std::atomic<uint64_t> gAllocationFailures{0};
std::atomic<void *> gReserve{nullptr};
constexpr size_t kReserveBytes = size_t{16} << 20;

void onAllocationFailure() {
  // The first failure frees the reserve and lets the allocation be retried; the run
  // then stops (the watchdog sees the count) with memory to write its report.
  gAllocationFailures.fetch_add(1, std::memory_order_relaxed);
  if (void *reserve = gReserve.exchange(nullptr)) {
    std::free(reserve);
    return;
  }
  throw std::bad_alloc();
}

// ---------------------------------------------------------------- signals

constexpr std::array<int, 3> kSignals = {SIGINT, SIGTERM, SIGHUP};
volatile std::sig_atomic_t gSignal = 0;
std::array<struct sigaction, kSignals.size()> gOldActions;
std::array<bool, kSignals.size()> gCaught{};

// The cleanup registry's child process groups, readable from a signal handler.
constexpr size_t kChildSlots = 256;
std::array<std::atomic<int>, kChildSlots> gChildren{};
static_assert(std::atomic<int>::is_always_lock_free);

void killChildren() {
  for (std::atomic<int> &child : gChildren)
    if (int pgid = child.load(); pgid > 0)
      kill(-pgid, SIGKILL);
}

extern "C" void onSignal(int sig) {
  // A second signal ends the process at once (the first one asked the run to stop and
  // it has not yet); children first, they are in process groups of their own.
  const bool second = gSignal != 0;
  if (!second)
    gSignal = sig;
  killChildren();
  if (second) {
    signal(sig, SIG_DFL);
    raise(sig);
  }
}

// ---------------------------------------------------------------- cleanup registry

struct Registry {
  std::mutex mutex;
  int next = 0;
  std::map<int, std::string> files;
  std::map<int, std::string> directories;
  std::map<int, size_t> children; ///< id -> slot of gChildren
};

Registry &registry() {
  static Registry *r = new Registry(); // never destroyed: used at exit
  return *r;
}

Watchdog *gCurrent = nullptr;

} // namespace

uint64_t allocationFailures() { return gAllocationFailures.load(std::memory_order_relaxed); }

void rearmAllocationReserve() {
  if (gReserve.load() != nullptr)
    return;
  void *reserve = std::malloc(kReserveBytes);
  if (!reserve)
    return;
  // Touch it, so that it is resident and freeing it gives real memory back.
  std::memset(reserve, 0, kReserveBytes);
  void *expected = nullptr;
  if (!gReserve.compare_exchange_strong(expected, reserve))
    std::free(reserve);
}

Cleanup::Cleanup(Cleanup &&other) noexcept : id_(other.id_) { other.id_ = 0; }

Cleanup &Cleanup::operator=(Cleanup &&other) noexcept {
  if (this != &other) {
    Cleanup dropped(std::move(*this));
    id_ = other.id_;
    other.id_ = 0;
  }
  return *this;
}

Cleanup::~Cleanup() {
  if (id_ == 0)
    return;
  Registry &r = registry();
  std::lock_guard lock(r.mutex);
  r.files.erase(id_);
  r.directories.erase(id_);
  if (auto it = r.children.find(id_); it != r.children.end()) {
    gChildren[it->second].store(0);
    r.children.erase(it);
  }
}

Cleanup Cleanup::file(const std::string &path) {
  Registry &r = registry();
  std::lock_guard lock(r.mutex);
  r.files[++r.next] = path;
  return Cleanup(r.next);
}

Cleanup Cleanup::directory(const std::string &path) {
  Registry &r = registry();
  std::lock_guard lock(r.mutex);
  r.directories[++r.next] = path;
  return Cleanup(r.next);
}

Cleanup Cleanup::processGroup(int pgid) {
  Registry &r = registry();
  std::lock_guard lock(r.mutex);
  for (size_t slot = 0; slot < kChildSlots; ++slot) {
    int expected = 0;
    if (gChildren[slot].compare_exchange_strong(expected, pgid)) {
      r.children[++r.next] = slot;
      return Cleanup(r.next);
    }
  }
  return Cleanup(); // every slot taken: the caller's own time limit still applies
}

void Cleanup::runAll() {
  killChildren();
  Registry &r = registry();
  // The process is ending: do not wait for a lock another thread may hold forever.
  std::unique_lock lock(r.mutex, std::try_to_lock);
  if (!lock.owns_lock())
    return;
  for (const auto &[id, path] : r.files)
    ::unlink(path.c_str());
  std::error_code ec;
  for (const auto &[id, path] : r.directories)
    std::filesystem::remove_all(path, ec);
}

int caughtSignal() { return gSignal; }

void dieBySignal(int sig) {
  Cleanup::runAll();
  std::fflush(stdout);
  struct sigaction action {};
  action.sa_handler = SIG_DFL;
  sigemptyset(&action.sa_mask);
  sigaction(sig, &action, nullptr);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, sig);
  pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
  raise(sig);
  _exit(128 + sig); // not reached: the default action of these signals ends the process
}

// ---------------------------------------------------------------- Watchdog

struct WatchdogThread {
  std::condition_variable wake;
  std::thread thread;
};

Watchdog *Watchdog::current() { return gCurrent; }

Watchdog::Watchdog(Options options) : options_(options), thread_(new WatchdogThread()) {
  DKV_INVARIANT(gCurrent == nullptr, "one watchdog per process");
  gCurrent = this;
  gSignal = 0;
  for (size_t i = 0; i < kSignals.size(); ++i) {
    gCaught[i] = false;
    if (sigaction(kSignals[i], nullptr, &gOldActions[i]) != 0 ||
        gOldActions[i].sa_handler == SIG_IGN)
      continue; // a signal dkv was started ignoring stays ignored
    struct sigaction action {};
    action.sa_handler = onSignal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    gCaught[i] = sigaction(kSignals[i], &action, nullptr) == 0;
  }
  rearmAllocationReserve();
  std::set_new_handler(onAllocationFailure);
  failuresSeen_ = allocationFailures();
  thread_->thread = std::thread([this] { run(); });
}

Watchdog::~Watchdog() {
  {
    std::lock_guard lock(mutex_);
    quit_ = true;
  }
  thread_->wake.notify_all();
  thread_->thread.join();
  std::set_new_handler(nullptr);
  for (size_t i = 0; i < kSignals.size(); ++i)
    if (gCaught[i])
      sigaction(kSignals[i], &gOldActions[i], nullptr);
  gCurrent = nullptr;
}

Watchdog::Watch::Watch(Watch &&other) noexcept : dog_(other.dog_), id_(other.id_) {
  other.dog_ = nullptr;
}

Watchdog::Watch::~Watch() {
  if (!dog_)
    return;
  std::lock_guard lock(dog_->mutex_);
  dog_->watched_.erase(id_);
}

Watchdog::Watch Watchdog::watch(StopToken &token, double seconds) {
  token.setTimeLimit(seconds);
  std::lock_guard lock(mutex_);
  const int id = ++nextId_;
  watched_[id] = Watched{&token, std::nullopt};
  // A signal that came before this run began stops it at once.
  if (int sig = gSignal; sig != 0)
    token.request(StopCause::Signal, fmt::format("interrupted by SIG{}", sigabbrev_np(sig)));
  return Watch(this, id);
}

void Watchdog::run() {
  std::unique_lock lock(mutex_);
  while (!quit_) {
    thread_->wake.wait_for(lock, std::chrono::milliseconds(20));
    if (quit_)
      break;
    lock.unlock();
    try {
      tick();
    } catch (...) {
      // Out of memory while formatting a reason: the next tick tries again (an
      // exception must not end this thread, which would end the process).
    }
    lock.lock();
  }
}

void Watchdog::stopAll(StopCause cause, const std::string &reason) {
  const Clock::time_point now = Clock::now();
  std::lock_guard lock(mutex_);
  for (auto &[id, w] : watched_) {
    w.token->request(cause, reason);
    if (!w.stoppedAt)
      w.stoppedAt = now;
  }
}

void Watchdog::tick() {
  const Clock::time_point now = Clock::now();
  if (int sig = gSignal; sig != 0)
    stopAll(StopCause::Signal, fmt::format("interrupted by SIG{}", sigabbrev_np(sig)));
  if (uint64_t failures = allocationFailures(); failures != failuresSeen_) {
    failuresSeen_ = failures;
    stopAll(StopCause::Memory, "out of memory: an allocation failed");
  }
  if (options_.memoryMb > 0) {
    const int64_t resident = residentBytes();
    if (resident >= memoryBytes())
      stopAll(StopCause::Memory, fmt::format("memory limit of {} MB reached (resident {} MB)",
                                             options_.memoryMb, resident >> 20));
  }
  std::optional<Watched> overdue;
  bool idle = false;
  {
    std::lock_guard lock(mutex_);
    idle = watched_.empty();
    for (auto &[id, w] : watched_) {
      if (w.token->poll() && !w.stoppedAt)
        w.stoppedAt = now;
      if (w.stoppedAt && !overdue &&
          std::chrono::duration<double>(now - *w.stoppedAt).count() > options_.grace)
        overdue = w;
    }
  }
  // A signal while no run is watched (between the instances of `dkv check`, or a
  // command without a stop token): nothing to wind down, end now.
  if (idle && gSignal != 0)
    dieBySignal(gSignal);
  if (overdue)
    endProcess(*overdue);
}

void Watchdog::endProcess(const Watched &w) {
  const StopCause cause = w.token->cause();
  const std::string message =
      fmt::format("dkv: {} during {}; the run could not be stopped in time and ends here without a "
                  "verdict{}\n",
                  w.token->reason(), *w.token->phase() ? w.token->phase() : "the run",
                  cause == StopCause::Signal ? "" : " (inconclusive, exit code 5)");
  ssize_t ignored = ::write(STDERR_FILENO, message.data(), message.size());
  (void)ignored;
  if (cause == StopCause::Signal && gSignal != 0)
    dieBySignal(gSignal);
  Cleanup::runAll();
  _exit(kExitInconclusive);
}

} // namespace dkv::support
