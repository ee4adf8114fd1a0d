// Exhaustive exploration: breadth-first search over every schedule of a program, with
// a visited-state table and a partial-order reduction (docs/executor.md).
#include "executor/Executor.h"

#include "semantics/Machine.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <new>
#include <stdexcept>

namespace dkv::executor {

using namespace model;
using report::ScheduleStep;
using semantics::ControlState;
using semantics::Machine;
using semantics::ObligationIndex;
using semantics::PropertyIndex;

namespace {

int widthFor(uint64_t maxValue) {
  if (maxValue <= 0xff)
    return 1;
  if (maxValue <= 0xffff)
    return 2;
  if (maxValue <= 0xffffffffull)
    return 4;
  return 8;
}

void put(uint8_t *at, int width, uint64_t value) { std::memcpy(at, &value, width); }
uint64_t get(const uint8_t *at, int width) {
  uint64_t value = 0;
  std::memcpy(&value, at, width);
  return value;
}

uint64_t hashBytes(const uint8_t *data, size_t size) {
  uint64_t h = 0x243f6a8885a308d3ull ^ size;
  size_t i = 0;
  for (; i + 8 <= size; i += 8) {
    uint64_t w;
    std::memcpy(&w, data + i, 8);
    h = (h ^ w) * 0x9e3779b97f4a7c15ull;
    h ^= h >> 29;
  }
  uint64_t tail = 0;
  std::memcpy(&tail, data + i, size - i);
  h = (h ^ tail) * 0xbf58476d1ce4e5b9ull;
  h ^= h >> 31;
  h *= 0x94d049bb133111ebull;
  return h ^ (h >> 32);
}

uint32_t encodeStep(const ScheduleStep &step) {
  return (static_cast<uint32_t>(step.kind) << 30) | static_cast<uint32_t>(step.id);
}
ScheduleStep decodeStep(uint32_t code) {
  return {static_cast<ScheduleStep::Kind>(code >> 30), static_cast<int32_t>(code & 0x3fffffffu)};
}

/// The searched state, packed into a fixed number of bytes.
///
/// Why this abstraction is sound for every check of docs/model.md: the state holds
/// each device's pc (from which where[d], scopes[d] and started[k] follow, because
/// they change only at that device's own events), every semaphore value that can be
/// non-zero, and each DMA's sent/landed counters. Enabledness and effects of every
/// step read only these. The race check of docs/model.md section 4 is a property of a
/// state and a step (a Store or DmaStart about to run while a conflicting DMA side is
/// open, and "open" is started && counter < K), so it needs no access history or
/// clocks: two runs reaching the same control state have the same future steps and the
/// same check outcomes along them. Memory contents and the registers of SemRead are
/// data only: lowering guarantees they never decide control flow, an address or a
/// device, so they are left out. The happens-before race check of a single run
/// (Simulator) agrees with this state check over all schedules (docs/model.md).
class Codec {
public:
  explicit Codec(const Machine &m) : m_(m) {
    const int32_t n = m.deviceCount();
    int32_t maxEvents = 0;
    for (DeviceId d = 0; d < n; ++d)
      maxEvents = std::max(maxEvents, m.eventCount(d));
    pcWidth_ = widthFor(static_cast<uint64_t>(maxEvents));
    size_ = static_cast<size_t>(n) * pcWidth_;
    for (DeviceId d = 0; d < n; ++d)
      for (SemId s = 0; s < m.semCount(); ++s) {
        int64_t bound = m.semBound(d, s);
        if (bound <= 0)
          continue;
        int w = widthFor(static_cast<uint64_t>(bound));
        sems_.push_back({static_cast<size_t>(d) * m.semCount() + s, size_, w});
        size_ += w;
      }
    int32_t maxChunks = 1;
    for (DmaId k = 0; k < m.dmaCount(); ++k)
      maxChunks = std::max(maxChunks, m.chunks(k));
    packDma_ = maxChunks <= 15;
    dmaWidth_ = packDma_ ? 1 : widthFor(static_cast<uint64_t>(maxChunks));
    dmaOffset_ = size_;
    size_ += static_cast<size_t>(m.dmaCount()) * (packDma_ ? 1 : 2 * dmaWidth_);
    if (size_ == 0)
      size_ = 1;
  }
  size_t size() const { return size_; }

  void encode(const ControlState &s, uint8_t *out) const {
    std::memset(out, 0, size_);
    for (size_t d = 0; d < s.pc.size(); ++d)
      put(out + d * pcWidth_, pcWidth_, static_cast<uint64_t>(s.pc[d]));
    for (const Field &f : sems_)
      put(out + f.offset, f.width, static_cast<uint64_t>(std::max<int64_t>(0, s.sem[f.index])));
    uint8_t *p = out + dmaOffset_;
    for (size_t k = 0; k < s.sent.size(); ++k) {
      if (packDma_) {
        *p++ = static_cast<uint8_t>((s.sent[k] << 4) | s.landed[k]);
      } else {
        put(p, dmaWidth_, static_cast<uint64_t>(s.sent[k]));
        put(p + dmaWidth_, dmaWidth_, static_cast<uint64_t>(s.landed[k]));
        p += 2 * dmaWidth_;
      }
    }
  }

  void decode(const uint8_t *in, ControlState &s) const {
    for (size_t d = 0; d < s.pc.size(); ++d)
      s.pc[d] = static_cast<int32_t>(get(in + d * pcWidth_, pcWidth_));
    std::fill(s.sem.begin(), s.sem.end(), 0);
    for (const Field &f : sems_)
      s.sem[f.index] = static_cast<int64_t>(get(in + f.offset, f.width));
    const uint8_t *p = in + dmaOffset_;
    for (size_t k = 0; k < s.sent.size(); ++k) {
      if (packDma_) {
        s.sent[k] = *p >> 4;
        s.landed[k] = *p & 0xf;
        ++p;
      } else {
        s.sent[k] = static_cast<int32_t>(get(p, dmaWidth_));
        s.landed[k] = static_cast<int32_t>(get(p + dmaWidth_, dmaWidth_));
        p += 2 * dmaWidth_;
      }
    }
  }

private:
  struct Field {
    size_t index;
    size_t offset;
    int width;
  };
  const Machine &m_;
  int pcWidth_ = 1;
  std::vector<Field> sems_;
  bool packDma_ = true;
  int dmaWidth_ = 1;
  size_t dmaOffset_ = 0;
  size_t size_ = 0;
};

/// The visited states in insertion (= breadth-first) order, which is also the queue,
/// with an open-addressing index. Entries are (hash high bits << 32) | (index + 1).
///
/// The states are kept in blocks of about 4 MB (each state's bytes, its parent and the
/// step that reached it), so that the memory grows in small steps and never doubles at
/// once: with a memory limit, `insert` refuses a new state whose block or index growth
/// would pass it (Insert::Memory) before allocating anything.
class StateTable {
public:
  StateTable(size_t stateSize, int64_t memoryLimit, const support::StopToken *stop)
      : size_(stateSize), record_(stateSize + 8),
        perBlock_(std::max<size_t>(1, (size_t{4} << 20) / record_)), limit_(memoryLimit),
        stop_(stop) {
    table_.assign(1u << 16, 0);
  }

  size_t count() const { return count_; }
  const uint8_t *state(size_t i) const { return record(i); }
  uint32_t parent(size_t i) const { return field(i, 0); }
  uint32_t via(size_t i) const { return field(i, 4); }
  /// The bytes the table holds (its blocks and its index).
  int64_t bytes() const {
    return static_cast<int64_t>(blocks_.size() * perBlock_ * record_ + table_.size() * 8);
  }

  enum class Insert { Old, New, Full, Memory, Stopped };
  /// Inserts `s` unless present; a new state only if `allowNew` (else Full) and if the
  /// memory it needs fits the limit (else Memory). Stopped: the stop request came while
  /// the index was growing; the table can then only be read by its index (state,
  /// parent, via), which is all a stopped search needs.
  Insert insert(const uint8_t *s, uint32_t parent, uint32_t via, bool allowNew = true) {
    if ((count() + 1) * 2 > table_.size()) {
      // The old index and the new one, twice its size, exist together while it grows.
      if (limit_ > 0 && bytes() + static_cast<int64_t>(table_.size() * 16) > limit_)
        return find(s) ? Insert::Old : allowNew ? Insert::Memory : Insert::Full;
      if (!grow())
        return Insert::Stopped;
    }
    uint64_t h = hashBytes(s, size_);
    uint32_t tag = static_cast<uint32_t>(h >> 32);
    size_t mask = table_.size() - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
      uint64_t e = table_[i];
      if (e == 0) {
        if (!allowNew)
          return Insert::Full;
        if (count_ == blocks_.size() * perBlock_) {
          if (limit_ > 0 && bytes() + static_cast<int64_t>(perBlock_ * record_) > limit_)
            return Insert::Memory;
          // Not zeroed: a block's pages become resident as states fill them.
          blocks_.push_back(std::unique_ptr<uint8_t[]>(new uint8_t[perBlock_ * record_]));
        }
        table_[i] = (static_cast<uint64_t>(tag) << 32) | static_cast<uint64_t>(count() + 1);
        uint8_t *r = record(count_);
        std::memcpy(r, s, size_);
        std::memcpy(r + size_, &parent, 4);
        std::memcpy(r + size_ + 4, &via, 4);
        ++count_;
        return Insert::New;
      }
      if (static_cast<uint32_t>(e >> 32) == tag &&
          std::memcmp(state(static_cast<uint32_t>(e) - 1), s, size_) == 0)
        return Insert::Old;
    }
  }

private:
  uint8_t *record(size_t i) const {
    return blocks_[i / perBlock_].get() + (i % perBlock_) * record_;
  }
  uint32_t field(size_t i, size_t offset) const {
    uint32_t value;
    std::memcpy(&value, record(i) + size_ + offset, 4);
    return value;
  }
  bool find(const uint8_t *s) const {
    uint64_t h = hashBytes(s, size_);
    uint32_t tag = static_cast<uint32_t>(h >> 32);
    size_t mask = table_.size() - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
      uint64_t e = table_[i];
      if (e == 0)
        return false;
      if (static_cast<uint32_t>(e >> 32) == tag &&
          std::memcmp(state(static_cast<uint32_t>(e) - 1), s, size_) == 0)
        return true;
    }
  }

  /// Doubles the index; false (the index is then incomplete) when the stop request
  /// came meanwhile: rehashing millions of states takes a noticeable time.
  bool grow() {
    std::vector<uint64_t> old;
    old.swap(table_);
    table_.assign(old.size() * 2, 0);
    size_t mask = table_.size() - 1;
    for (size_t n = 0; n < old.size(); ++n) {
      const uint64_t e = old[n];
      if (n % 65536 == 0 && support::stopRequested(stop_))
        return false;
      if (e == 0)
        continue;
      uint64_t h = hashBytes(state(static_cast<uint32_t>(e) - 1), size_);
      size_t i = h & mask;
      while (table_[i] != 0)
        i = (i + 1) & mask;
      table_[i] = e;
    }
    return true;
  }

  size_t size_;
  size_t record_;   ///< bytes per state: its bytes, parent, via
  size_t perBlock_; ///< states per block
  int64_t limit_;   ///< bytes; 0: none
  const support::StopToken *stop_;
  size_t count_ = 0;
  std::vector<uint64_t> table_;
  std::vector<std::unique_ptr<uint8_t[]>> blocks_;
};

report::Schedule pathTo(const StateTable &table, size_t index) {
  report::Schedule path;
  while (index != 0) {
    path.push_back(decodeStep(table.via(index)));
    index = table.parent(index);
  }
  std::reverse(path.begin(), path.end());
  return path;
}

} // namespace

namespace {

semantics::EngineResult exploreImpl(const Machine &machine, const ExploreOptions &options) {
  semantics::EngineResult result;
  auto begin = std::chrono::steady_clock::now();
  Codec codec(machine);
  const semantics::EngineEvents *events = options.events;
  StateTable table(codec.size(), options.memoryBytes, events ? events->stop : nullptr);

  // The state budget, and with maxStateBytes the states that fit in that many bytes.
  uint64_t states = options.maxStates;
  if (options.maxStateBytes > 0)
    states = std::min<uint64_t>(states, options.maxStateBytes / codec.size());
  const uint64_t budget = std::clamp<uint64_t>(states, 1, static_cast<uint64_t>(0xfffffff0u));

  std::vector<uint8_t> buffer(codec.size());
  ControlState s = machine.initialState();
  ControlState next = s;
  codec.encode(s, buffer.data());
  table.insert(buffer.data(), 0, 0);

  // The first witness of each property in breadth-first order: the shortest schedule
  // to it.
  // Each goes to the caller at once (EngineEvents); `stopped` when it asks to stop.
  std::vector<bool> seen(machine.properties().properties().size(), false);
  std::vector<ObligationIndex> found;
  bool stopped = false;
  auto note = [&](size_t state, std::optional<ScheduleStep> step) {
    for (ObligationIndex o : found) {
      PropertyIndex p = machine.properties().obligation(o).property;
      if (seen[p] || stopped)
        continue;
      seen[p] = true;
      report::Schedule schedule = pathTo(table, state);
      if (step)
        schedule.push_back(*step);
      stopped = !semantics::addWitness(result, {p, std::move(schedule)}, options.events);
    }
    found.clear();
  };

  uint64_t transitions = 0;
  bool budgetReached = false;
  bool memoryReached = false;
  bool interrupted = false; // the run's stop request (time, memory, signal)
  // The breadth-first level of state i: states of one level are contiguous.
  uint64_t depth = 0;
  size_t levelEnd = 1;
  std::vector<ScheduleStep> steps;
  for (size_t i = 0;
       i < table.count() && !budgetReached && !memoryReached && !interrupted && !stopped; ++i) {
    if (i % 64 == 0 && semantics::stopRequested(events)) {
      interrupted = true;
      break;
    }
    if (i == levelEnd) {
      ++depth;
      levelEnd = table.count();
    }
    if (i % 4096 == 0 && options.events) {
      semantics::EngineProgress progress;
      progress.engine = "explore";
      progress.states = table.count();
      progress.depth = depth;
      if (!semantics::reportProgress(result, progress, options.events))
        break;
    }
    codec.decode(table.state(i), s);
    machine.enabledSteps(s, steps);
    if (steps.empty()) {
      machine.stuck(s, found);
      note(i, std::nullopt);
      continue;
    }
    for (const ScheduleStep &step : steps) {
      machine.violations(s, step, found);
      note(i, step);
    }
    if (stopped)
      break;
    // Partial-order reduction: a safe step (Machine::isSafeStep) commutes with all
    // that other actors can do and is invisible to every check, so it alone is
    // explored; the findings of the other enabled steps were checked above.
    if (options.reduction) {
      const ScheduleStep *safe = nullptr;
      for (const ScheduleStep &step : steps)
        if (step.kind == ScheduleStep::Kind::Device &&
            machine.isSafeStep(s, step.id, options.localCopyReduction, options.observerReduction)) {
          safe = &step;
          break;
        }
      if (!safe)
        for (const ScheduleStep &step : steps)
          if (step.kind != ScheduleStep::Kind::Device &&
              machine.isSafeDmaStep(s, step, options.localCopyReduction,
                                    options.observerReduction)) {
            safe = &step;
            break;
          }
      if (safe) {
        ScheduleStep only = *safe;
        steps.assign(1, only);
      }
    }
    for (const ScheduleStep &step : steps) {
      next = s;
      machine.apply(next, step);
      ++transitions;
      codec.encode(next, buffer.data());
      const StateTable::Insert inserted = table.insert(buffer.data(), static_cast<uint32_t>(i),
                                                       encodeStep(step), table.count() < budget);
      if (inserted == StateTable::Insert::Full) {
        budgetReached = true;
        break;
      }
      if (inserted == StateTable::Insert::Memory) {
        memoryReached = true;
        break;
      }
      if (inserted == StateTable::Insert::Stopped) {
        interrupted = true;
        break;
      }
    }
  }

  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  if (budgetReached && result.complete) {
    result.complete = false;
    result.reason = fmt::format("explored {} states (budget {})", table.count(), budget);
  }
  if (memoryReached && result.complete) {
    result.complete = false;
    result.reason = fmt::format("memory limit reached: {} states take {} MB, the next would pass "
                                "the {} MB left to the search (lower --max-states or raise "
                                "--memory)",
                                table.count(), table.bytes() >> 20, options.memoryBytes >> 20);
  }
  if (interrupted && result.complete)
    semantics::stopForRequest(
        result, events,
        fmt::format("explored {} states, {} transitions", table.count(), transitions));
  result.stats.push_back({"states", std::to_string(table.count())});
  result.stats.push_back({"transitions", std::to_string(transitions)});
  if (budgetReached && result.reason != semantics::kStoppedReason)
    result.stats.push_back({"budget", fmt::format("{} (reached)", budget)});
  result.stats.push_back({"time", fmt::format("{:.2f} s", seconds)});
  return result;
}

} // namespace

semantics::EngineResult explore(const Machine &machine, const ExploreOptions &options) {
  // Running out of memory with a large budget is inconclusive; any other exception is
  // a dkv bug and leaves the library, to end the run as an internal error (exit 6).
  try {
    return exploreImpl(machine, options);
  } catch (const std::bad_alloc &) {
    semantics::EngineResult result;
    result.complete = false;
    result.reason = "out of memory: an allocation failed (lower --max-states or --memory)";
    return result;
  }
}

} // namespace dkv::executor
