// Exhaustive exploration: breadth-first search over every schedule of a program, with
// a visited-state table and a partial-order reduction (docs/executor.md).
#include "executor/Executor.h"

#include "semantics/Machine.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
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
class StateTable {
public:
  explicit StateTable(size_t stateSize) : size_(stateSize) { table_.assign(1u << 16, 0); }

  size_t count() const { return parent_.size(); }
  const uint8_t *state(size_t i) const { return bytes_.data() + i * size_; }
  uint32_t parent(size_t i) const { return parent_[i]; }
  uint32_t via(size_t i) const { return via_[i]; }

  enum class Insert { Old, New, Full };
  /// Inserts `s` unless present; a new state only if `allowNew` (else Full).
  Insert insert(const uint8_t *s, uint32_t parent, uint32_t via, bool allowNew = true) {
    if ((count() + 1) * 2 > table_.size())
      grow();
    uint64_t h = hashBytes(s, size_);
    uint32_t tag = static_cast<uint32_t>(h >> 32);
    size_t mask = table_.size() - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
      uint64_t e = table_[i];
      if (e == 0) {
        if (!allowNew)
          return Insert::Full;
        table_[i] = (static_cast<uint64_t>(tag) << 32) | static_cast<uint64_t>(count() + 1);
        bytes_.insert(bytes_.end(), s, s + size_);
        parent_.push_back(parent);
        via_.push_back(via);
        return Insert::New;
      }
      if (static_cast<uint32_t>(e >> 32) == tag &&
          std::memcmp(state(static_cast<uint32_t>(e) - 1), s, size_) == 0)
        return Insert::Old;
    }
  }

private:
  void grow() {
    std::vector<uint64_t> old;
    old.swap(table_);
    table_.assign(old.size() * 2, 0);
    size_t mask = table_.size() - 1;
    for (uint64_t e : old) {
      if (e == 0)
        continue;
      uint64_t h = hashBytes(state(static_cast<uint32_t>(e) - 1), size_);
      size_t i = h & mask;
      while (table_[i] != 0)
        i = (i + 1) & mask;
      table_[i] = e;
    }
  }

  size_t size_;
  std::vector<uint64_t> table_;
  std::vector<uint8_t> bytes_;
  std::vector<uint32_t> parent_;
  std::vector<uint32_t> via_;
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
  StateTable table(codec.size());

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
  // The breadth-first level of state i: states of one level are contiguous.
  uint64_t depth = 0;
  size_t levelEnd = 1;
  std::vector<ScheduleStep> steps;
  for (size_t i = 0; i < table.count() && !budgetReached && !stopped; ++i) {
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
      if (table.insert(buffer.data(), static_cast<uint32_t>(i), encodeStep(step),
                       table.count() < budget) == StateTable::Insert::Full) {
        budgetReached = true;
        break;
      }
    }
  }

  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  if (budgetReached && result.complete) {
    result.complete = false;
    result.reason = fmt::format("explored {} states (budget {})", table.count(), budget);
  }
  result.stats.push_back({"states", std::to_string(table.count())});
  result.stats.push_back({"transitions", std::to_string(transitions)});
  if (budgetReached && result.reason != semantics::kStoppedReason)
    result.stats.push_back({"budget", fmt::format("{} (reached)", budget)});
  result.stats.push_back({"time", fmt::format("{:.2f} s", seconds)});
  return result;
}

} // namespace

semantics::EngineResult explore(const Machine &machine, const ExploreOptions &options) {
  // No exception leaves the library; the one to expect is running out of memory with
  // a large budget.
  try {
    return exploreImpl(machine, options);
  } catch (const std::bad_alloc &) {
    semantics::EngineResult result;
    result.complete = false;
    result.reason = "out of memory (lower --max-states)";
    return result;
  } catch (const std::exception &e) {
    semantics::EngineResult result;
    result.complete = false;
    result.reason = fmt::format("the search failed: {}", e.what());
    return result;
  }
}

} // namespace dkv::executor
