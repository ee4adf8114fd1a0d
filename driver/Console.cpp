// The report printer of `dkv check`: instances in order, findings as they are found,
// a progress line on standard error.
#include "driver/Console.h"

#include <fmt/format.h>

#include <ostream>

#include <sys/ioctl.h>
#include <unistd.h>

namespace dkv::driver {

namespace {

/// The interval between two drawings of the progress line.
constexpr std::chrono::milliseconds kRedraw{250};

/// The width of the terminal on standard error (a line longer than it would wrap,
/// and the carriage return could not erase it); 100 when it is not a terminal.
size_t terminalWidth() {
  struct winsize size {};
  if (isatty(2) && ioctl(2, TIOCGWINSZ, &size) == 0 && size.ws_col > 10)
    return size.ws_col;
  return 100;
}

/// "12345" -> "12,345".
std::string grouped(uint64_t n) {
  std::string digits = std::to_string(n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0)
      out += ',';
    out += digits[i];
  }
  return out;
}

} // namespace

Console::Console(std::ostream &out, std::ostream &err, std::vector<std::string> labels,
                 bool progress)
    : out_(out), err_(err), labels_(std::move(labels)), pending_(labels_.size()),
      enabled_(progress) {
  if (enabled_)
    ticker_ = std::thread([this] { tick(); });
}

Console::~Console() { finish(); }

bool Console::wanted(const std::string &mode) {
  if (mode == "always")
    return true;
  if (mode == "never")
    return false;
  return isatty(2) != 0;
}

void Console::write(size_t i, const std::string &text) {
  std::lock_guard lock(mutex_);
  if (i != head_) {
    pending_[i] += text;
    return;
  }
  erase();
  out_ << text;
  out_.flush();
}

void Console::begin(size_t i) {
  std::lock_guard lock(mutex_);
  head_ = i;
  if (pending_[i].empty())
    return;
  erase();
  out_ << pending_[i];
  out_.flush();
  pending_[i].clear();
}

void Console::writeErr(const std::string &text) {
  if (text.empty())
    return;
  std::lock_guard lock(mutex_);
  erase();
  err_ << text;
  err_.flush();
}

void Console::progress(size_t i, const semantics::EngineProgress &progress) {
  if (!enabled_)
    return;
  std::lock_guard lock(mutex_);
  const Clock::time_point now = Clock::now();
  auto [it, fresh] = running_.try_emplace(i);
  Running &r = it->second;
  if (fresh)
    r.start = now;
  if (fresh || r.progress.engine != progress.engine)
    r.engineStart = now;
  r.progress = progress;
  latest_ = i;
  // The first report is drawn at once, later ones at most every kRedraw.
  if (lastDraw_ == Clock::time_point{} || now - lastDraw_ >= kRedraw)
    draw();
}

void Console::done(size_t i) {
  std::lock_guard lock(mutex_);
  ++done_;
  running_.erase(i);
  if (latest_ == i && !running_.empty())
    latest_ = running_.begin()->first;
}

void Console::finish() {
  {
    std::lock_guard lock(mutex_);
    if (finished_)
      return;
    finished_ = true;
    erase();
  }
  stop_.notify_all();
  if (ticker_.joinable())
    ticker_.join();
}

void Console::erase() {
  if (!drawn_)
    return;
  err_ << "\r\033[K";
  err_.flush();
  drawn_ = false;
}

void Console::draw() {
  if (finished_ || running_.empty())
    return;
  std::string text = line();
  const size_t width = terminalWidth() - 1;
  if (text.size() > width)
    text = text.substr(0, width);
  err_ << "\r\033[K" << text;
  err_.flush();
  drawn_ = true;
  lastDraw_ = Clock::now();
}

std::string Console::line() {
  auto it = running_.find(latest_);
  if (it == running_.end())
    it = running_.begin();
  const Running &r = it->second;
  const semantics::EngineProgress &p = r.progress;
  const Clock::time_point now = Clock::now();
  const double elapsed = std::chrono::duration<double>(now - r.start).count();
  const double inEngine = std::chrono::duration<double>(now - r.engineStart).count();
  std::string work;
  if (p.engine == "explore")
    work = fmt::format("explore: {} states, depth {}, {} states/s", grouped(p.states), p.depth,
                       grouped(inEngine > 0.05 ? static_cast<uint64_t>(p.states / inEngine) : 0));
  else if (p.engine == "z3")
    work = p.properties > 0 ? fmt::format("z3: query {}, {}/{} properties decided", p.queries + 1,
                                          p.decided, p.properties)
                            : "z3: encoding";
  else
    work = p.phase.empty() ? p.engine : fmt::format("{}: {}", p.engine, p.phase);
  std::string where =
      labels_.size() > 1 ? fmt::format("[{}/{} done] ", done_, labels_.size()) : std::string();
  // The figures first: a narrow terminal cuts the end of the line.
  return fmt::format("dkv: {}{}, {:.1f} s ({})", where, work, elapsed, labels_[it->first]);
}

void Console::tick() {
  std::unique_lock lock(mutex_);
  while (!finished_) {
    stop_.wait_for(lock, kRedraw);
    // Also after the line was erased for a finding: spin reports seldom.
    if (!finished_ && !running_.empty() && Clock::now() - lastDraw_ >= kRedraw)
      draw();
  }
}

} // namespace dkv::driver
