// Witness shortening (Shorten.h): delta debugging on per-actor step counts, with a
// run of the step table as the test.
#include "semantics/Shorten.h"

#include "support/Invariant.h"

#include <algorithm>

namespace dkv::semantics {

using report::ScheduleStep;

namespace {

class Shortener {
public:
  Shortener(const Machine &machine, PropertyIndex p, const ShortenOptions &options)
      : machine_(machine), p_(p), budget_(options.budget),
        deadlock_(machine.properties().property(p).kind == report::FindingKind::Deadlock) {
    // Actors in the fixed order: devices, then each DMA's sends and lands.
    for (model::DeviceId d = 0; d < machine.deviceCount(); ++d)
      actors_.push_back({ScheduleStep::Kind::Device, d});
    for (model::DmaId k = 0; k < machine.dmaCount(); ++k) {
      actors_.push_back({ScheduleStep::Kind::Send, k});
      actors_.push_back({ScheduleStep::Kind::Land, k});
    }
  }

  size_t actorOf(const ScheduleStep &step) const {
    switch (step.kind) {
    case ScheduleStep::Kind::Device:
      return static_cast<size_t>(step.id);
    case ScheduleStep::Kind::Send:
      return static_cast<size_t>(machine_.deviceCount() + 2 * step.id);
    case ScheduleStep::Kind::Land:
      return static_cast<size_t>(machine_.deviceCount() + 2 * step.id + 1);
    }
    DKV_UNREACHABLE("schedule step kind");
  }
  size_t actorCount() const { return actors_.size(); }
  bool exhausted() const { return work_ >= budget_; }
  int64_t work() const { return work_; }

  /// Runs the fixed order up to `counts` (appending the steps to `out` when given)
  /// and checks that the result shows the property: a deadlock whose stuck waits
  /// include one of the property's, or a step that violates one of its obligations
  /// (the first such step in actor order is the last step of `out`). False when the
  /// counts are not reached, the property is not shown, or the budget ran out.
  bool test(const std::vector<int32_t> &counts, report::Schedule *out) {
    // The state and the actors still to move are reused from test to test (a copy of the
    // initial state, not a fresh allocation: on a large mesh a state is large); each
    // round looks only at the actors with steps left, in id order, as the fixed order
    // says.
    if (initial_.pc.empty())
      initial_ = machine_.initialState();
    ControlState &s = state_;
    s = initial_;
    taken_.assign(actors_.size(), 0);
    active_.clear();
    int64_t remaining = 0;
    for (size_t a = 0; a < counts.size(); ++a)
      if (counts[a] > 0) {
        remaining += counts[a];
        active_.push_back(a);
      }
    bool progress = true;
    while (remaining > 0 && progress) {
      progress = false;
      for (size_t a : active_) {
        while (taken_[a] < counts[a]) {
          if (++work_ > budget_)
            return false;
          if (!machine_.enabled(s, actors_[a]))
            break;
          machine_.apply(s, actors_[a]);
          if (out)
            out->push_back(actors_[a]);
          ++taken_[a];
          --remaining;
          progress = true;
        }
      }
      std::erase_if(active_, [&](size_t a) { return taken_[a] >= counts[a]; });
    }
    if (remaining > 0)
      return false;
    std::vector<ObligationIndex> found;
    auto shows = [&] {
      for (ObligationIndex o : found)
        if (machine_.properties().obligation(o).property == p_)
          return true;
      return false;
    };
    std::vector<ScheduleStep> enabled;
    machine_.enabledSteps(s, enabled);
    work_ += static_cast<int64_t>(actors_.size());
    if (deadlock_) {
      if (!enabled.empty())
        return false;
      machine_.stuck(s, found);
      return shows();
    }
    for (const ScheduleStep &last : enabled) {
      found.clear();
      ++work_;
      machine_.violations(s, last, found);
      if (shows()) {
        if (out)
          out->push_back(last);
        return true;
      }
    }
    return false;
  }

private:
  const Machine &machine_;
  PropertyIndex p_;
  int64_t budget_;
  bool deadlock_;
  int64_t work_ = 0;
  std::vector<ScheduleStep> actors_;
  ControlState initial_, state_;
  std::vector<int32_t> taken_;
  std::vector<size_t> active_;
};

} // namespace

ShortenResult shortenWitness(const Machine &machine, const report::Schedule &schedule,
                             PropertyIndex p, const ShortenOptions &options) {
  ShortenResult result;
  result.schedule = schedule;
  Shortener shortener(machine, p, options);
  const bool deadlock = machine.properties().property(p).kind == report::FindingKind::Deadlock;
  // The steps before the violating one (all of them for a deadlock), counted per actor.
  size_t prefix = schedule.size();
  if (!deadlock) {
    if (schedule.empty())
      return result;
    --prefix;
  }
  std::vector<int32_t> counts(shortener.actorCount(), 0);
  for (size_t i = 0; i < prefix; ++i)
    ++counts[shortener.actorOf(schedule[i])];
  // The original counts in the fixed order: reachable, and showing the property, since
  // the original order reaches them (see Shorten.h); not when the budget is too small.
  if (!shortener.test(counts, nullptr)) {
    result.complete = !shortener.exhausted();
    result.work = shortener.work();
    return result;
  }
  bool changed = true;
  while (changed && !shortener.exhausted()) {
    changed = false;
    // Every actor at once: the last half, quarter, ... of each actor's steps (a
    // violation in a later round of a loop shows in an earlier one, which no single
    // actor's cut reaches when the devices depend on each other round by round).
    for (int32_t part = 2; !shortener.exhausted(); part *= 2) {
      std::vector<int32_t> fewer = counts;
      bool any = false;
      for (int32_t &c : fewer) {
        any = any || c / part > 0;
        c -= c / part;
      }
      if (!any)
        break;
      if (shortener.test(fewer, nullptr)) {
        counts = std::move(fewer);
        changed = true;
        part = 1;
      }
    }
    for (size_t a = 0; a < counts.size() && !shortener.exhausted(); ++a) {
      for (int32_t cut = counts[a]; cut >= 1 && !shortener.exhausted(); cut /= 2) {
        while (counts[a] >= cut) {
          std::vector<int32_t> fewer = counts;
          fewer[a] -= cut;
          if (!shortener.test(fewer, nullptr))
            break;
          counts = std::move(fewer);
          changed = true;
        }
      }
    }
  }
  result.complete = !shortener.exhausted();
  report::Schedule ordered;
  // Writing the final order out costs one more run, outside the budget: its counts
  // passed the test already.
  Shortener writer(machine, p, {});
  const bool shows = writer.test(counts, &ordered);
  DKV_INVARIANT(shows, "the shortened counts show the property");
  result.work = shortener.work() + writer.work();
  if (ordered.size() <= schedule.size() && ordered != schedule) {
    result.schedule = std::move(ordered);
    result.shortened = true;
  }
  return result;
}

} // namespace dkv::semantics
