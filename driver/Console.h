// What `dkv check` prints while it works: the reports in input order (a kernel file's
// when all its instances are checked, driver/CheckCommand.cpp), and a progress line on
// standard error.
#pragma once

#include "semantics/Witness.h"

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <iosfwd>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace dkv::driver {

/// Thread-safe. Instances are reported one after the other in input order (`begin`):
/// text an instance writes while it is the one being reported is printed at once (and
/// flushed), text of a later instance is kept until its turn, so the output is the
/// same whatever the number of threads and their timing.
///
/// The progress line (when enabled) is drawn on `err`, at most four times a second,
/// and erased (carriage return, clear to end of line) before anything else is printed
/// to `out` or `err` and at the end.
class Console {
public:
  /// `labels`: one per instance, for the progress line (how to check it alone).
  Console(std::ostream &out, std::ostream &err, std::vector<std::string> labels, bool progress);
  ~Console();
  Console(const Console &) = delete;
  Console &operator=(const Console &) = delete;

  /// Text of instance `i`'s report: printed now if `i` is being reported, else kept.
  void write(size_t i, const std::string &text);
  /// Instance `i` is now reported: what it wrote so far is printed.
  void begin(size_t i);
  /// Text for standard error, printed now.
  void writeErr(const std::string &text);
  /// How far instance `i`'s engine is.
  void progress(size_t i, const semantics::EngineProgress &progress);
  /// Instance `i` is finished (the progress line counts the instances done).
  void done(size_t i);
  /// Stops drawing and erases the progress line; called by the destructor too.
  void finish();

  /// Whether `--progress auto|always|never` draws the line (auto: standard error is a
  /// terminal).
  static bool wanted(const std::string &mode);

private:
  using Clock = std::chrono::steady_clock;
  struct Running {
    semantics::EngineProgress progress;
    Clock::time_point start;       ///< the instance's first report
    Clock::time_point engineStart; ///< when `progress.engine` began (for the rate)
  };
  void erase();       ///< requires mutex_
  void draw();        ///< requires mutex_
  std::string line(); ///< requires mutex_
  void tick();        ///< the thread that redraws (spin reports seldom)

  std::ostream &out_;
  std::ostream &err_;
  std::vector<std::string> labels_;
  std::vector<std::string> pending_;
  size_t head_ = 0;
  bool enabled_;
  bool drawn_ = false;
  bool finished_ = false;
  size_t done_ = 0;
  size_t latest_ = 0; ///< the instance whose progress is shown
  std::map<size_t, Running> running_;
  Clock::time_point lastDraw_;
  std::mutex mutex_;
  std::condition_variable stop_;
  std::thread ticker_;
};

} // namespace dkv::driver
