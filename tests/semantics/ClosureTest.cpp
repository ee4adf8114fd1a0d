// Tests of the greedy closures and the closure engine (semantics/Closure.h) and of the
// rotation symmetry (semantics/Symmetry.h): the lemmas the engine rests on, checked on
// runs; the engine's answers against the exhaustive search; the symmetry reduction's
// property list against the full one.
#include "semantics/Closure.h"
#include "executor/Executor.h"
#include "frontend/Annotations.h"
#include "semantics/Machine.h"
#include "semantics/Properties.h"
#include "semantics/Symmetry.h"
#include "semantics/Witness.h"
#include "tests/executor/ExecutorFixtures.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <random>
#include <set>
#include <string>

namespace dkv::semantics {
namespace {

using report::ScheduleStep;
using K = ScheduleStep::Kind;

std::set<std::string> violated(const Machine &machine, const EngineResult &result) {
  std::set<std::string> ids;
  for (const Witness &w : result.witnesses)
    ids.insert(machine.properties().property(w.property).id);
  return ids;
}

/// Every state of a random run with its actors held to `caps` (-1: none) is at most the
/// closure's greatest state under the same caps, actor by actor (Lemma 2), and the
/// closure reaches a state with no enabled step below the caps.
void expectGreatest(const Machine &m, const std::vector<int32_t> &deviceCaps, uint64_t seed) {
  Closure closure(m);
  for (model::DeviceId d = 0; d < m.deviceCount(); ++d)
    if (deviceCaps[d] >= 0)
      closure.capDevice(d, deviceCaps[d]);
  closure.run();
  EXPECT_TRUE(closure.stalled());
  const ControlState &top = closure.state();
  std::mt19937_64 random(seed);
  for (int run = 0; run < 20; ++run) {
    ControlState s = m.initialState();
    std::vector<ScheduleStep> steps;
    for (;;) {
      m.enabledSteps(s, steps);
      std::erase_if(steps, [&](const ScheduleStep &step) {
        return step.kind == K::Device && deviceCaps[step.id] >= 0 &&
               s.pc[step.id] >= deviceCaps[step.id];
      });
      if (steps.empty())
        break;
      m.apply(s, steps[random() % steps.size()]);
      for (model::DeviceId d = 0; d < m.deviceCount(); ++d)
        ASSERT_LE(s.pc[d], top.pc[d]);
      for (model::DmaId k = 0; k < m.dmaCount(); ++k) {
        ASSERT_LE(s.sent[k], top.sent[k]);
        ASSERT_LE(s.landed[k], top.landed[k]);
      }
    }
    // A run that cannot go on under the caps ends in the greatest state itself.
    EXPECT_EQ(s, top);
  }
}

TEST(Closure, GreatestStateUnderCaps) {
  for (const char *file : {"all_reduce_no_capacity.dk", "all_gather_shared_sem.dk",
                           "reduce_scatter_bidirectional.dk", "right_permute_no_sender.dk"}) {
    std::optional<model::Program> p = executor::testing::lowerExample(file, 3);
    ASSERT_TRUE(p);
    Instance instance(std::move(*p));
    const Machine &m = instance.machine();
    std::vector<int32_t> none(m.deviceCount(), -1);
    expectGreatest(m, none, 1);
    for (model::DeviceId d = 0; d < m.deviceCount(); ++d)
      for (int32_t cap : {0, m.eventCount(d) / 3, m.eventCount(d) / 2}) {
        std::vector<int32_t> caps = none;
        caps[d] = cap;
        SCOPED_TRACE(testing::Message() << file << " device " << d << " cap " << cap);
        expectGreatest(m, caps, static_cast<uint64_t>(cap) * 7 + d);
      }
  }
}

// The boxes' bound (docs/parametric.md, Lemma 4): with some devices limited
// (Closure::limitDevice: stopped at a pc, what their later events add saturated), every
// state of every run of the instance, cut at those limits, is below the greatest state.
TEST(Closure, LimitedDevicesBoundEveryRunFromAbove) {
  for (const char *file : {"all_reduce_no_capacity.dk", "all_gather.dk", "all_reduce.dk",
                           "reduce_scatter_bidirectional.dk", "right_permute_no_sender.dk"}) {
    std::optional<model::Program> p = executor::testing::lowerExample(file, 4);
    ASSERT_TRUE(p);
    Instance instance(std::move(*p));
    const Machine &m = instance.machine();
    for (int shape = 0; shape < 3; ++shape) {
      std::vector<int32_t> limit(m.deviceCount());
      for (model::DeviceId d = 0; d < m.deviceCount(); ++d)
        limit[d] = shape == 0   ? (d == 2 ? 0 : m.eventCount(d) / 2)
                   : shape == 1 ? m.eventCount(d) / (d + 2)
                                : (d == 0 ? m.eventCount(d) : 0);
      Closure closure(m);
      for (model::DeviceId d = 0; d < m.deviceCount(); ++d)
        closure.limitDevice(d, limit[d]);
      closure.run();
      const ControlState &top = closure.state();
      SCOPED_TRACE(testing::Message() << file << " shape " << shape);
      for (model::DeviceId d = 0; d < m.deviceCount(); ++d)
        EXPECT_LE(top.pc[d], limit[d]);
      std::mt19937_64 random(static_cast<uint64_t>(shape) + 11);
      for (int run = 0; run < 20; ++run) {
        ControlState s = m.initialState();
        std::vector<ScheduleStep> steps;
        for (;;) {
          m.enabledSteps(s, steps);
          if (steps.empty())
            break;
          m.apply(s, steps[random() % steps.size()]);
          for (model::DeviceId d = 0; d < m.deviceCount(); ++d)
            ASSERT_LE(std::min(s.pc[d], limit[d]), top.pc[d]);
          for (model::DmaId k = 0; k < m.dmaCount(); ++k) {
            const int32_t start = m.properties().startPc(k);
            if (start < 0 || start >= limit[m.program().dmas[k].issuer])
              continue; // started after its issuer's limit: not an actor of the bound
            ASSERT_LE(s.sent[k], top.sent[k]);
            ASSERT_LE(s.landed[k], top.landed[k]);
          }
        }
      }
    }
  }
}

TEST(Closure, SweepGoesOnFromTheLastState) {
  std::optional<model::Program> p = executor::testing::lowerExample("all_reduce.dk", 3);
  ASSERT_TRUE(p);
  Instance instance(std::move(*p));
  const Machine &m = instance.machine();
  Closure sweep(m), fresh(m);
  for (int32_t cap = 0; cap <= m.eventCount(1); cap += 3) {
    sweep.capDevice(1, cap);
    sweep.run();
    fresh.reset();
    fresh.capDevice(1, cap);
    fresh.run();
    EXPECT_EQ(sweep.state(), fresh.state()) << "cap " << cap;
  }
}

TEST(Closure, SliceIsARunThatKeepsWhatWasNeeded) {
  std::optional<model::Program> p = executor::testing::lowerExample("all_reduce.dk", 4);
  ASSERT_TRUE(p);
  Instance instance(std::move(*p));
  const Machine &m = instance.machine();
  Closure closure(m);
  closure.record(true);
  closure.run();
  const Actors actors{m.deviceCount(), m.dmaCount()};
  for (int32_t pc : {3, 10, m.eventCount(2)}) {
    report::Schedule slice = sliceRun(m, closure.schedule(), {{actors.device(2), pc}});
    ControlState before;
    std::string error;
    std::optional<ControlState> end = replaySchedule(m, slice, before, nullptr, error);
    ASSERT_TRUE(end) << error;
    EXPECT_GE(end->pc[2], pc);
    EXPECT_LE(slice.size(), closure.schedule().size());
  }
  // Device 2 alone at its 3rd event needs the entry barrier, so every device's first
  // events, and nothing of the DMAs.
  report::Schedule early = sliceRun(m, closure.schedule(), {{actors.device(2), 3}});
  for (const ScheduleStep &step : early)
    EXPECT_EQ(step.kind, K::Device);
}

/// The closure engine decides the same properties as the exhaustive search, on every
/// example listed (small instances explore completes), with 1 and 2 threads alike.
TEST(Closure, DecidesAsExploreDoes) {
  struct Case {
    const char *file;
    int64_t devices;
    int32_t dmaChunks = 1;
    model::DmaOrder order = model::DmaOrder::Any;
  };
  const Case cases[] = {
      {"right_permute.dk", 3},
      {"right_permute_no_wait.dk", 3},
      {"right_permute_no_sender.dk", 3},
      {"right_permute_two_senders.dk", 3},
      {"all_gather_shared_sem.dk", 3},
      {"all_reduce_no_capacity.dk", 3},
      {"reduce_scatter_no_cleanup.dk", 3},
      {"scoped_slot_reuse.dk", 3},
      {"zero_dst_race.dk", 3},
      {"wait_never_signalled.dk", 3},
      {"table_wrong_total.dk", 3, 2},
      {"tests/executor/observer_rules.dk", 3, 2},
      {"tests/semantics/link_order.dk", 2, 2, model::DmaOrder::Link},
      {"tensorcore_swap_no_barrier.dk", 1},
  };
  for (const Case &c : cases) {
    model::Options options;
    options.dmaChunks = c.dmaChunks;
    options.dmaOrder = c.order;
    std::optional<model::Program> p = executor::testing::lowerExample(c.file, c.devices, options);
    ASSERT_TRUE(p);
    Instance instance(std::move(*p));
    const Machine &m = instance.machine();
    executor::ExploreOptions search;
    search.maxStates = 3'000'000;
    EngineResult explored = executor::explore(m, search);
    ASSERT_TRUE(explored.complete) << c.file;
    for (unsigned jobs : {1u, 2u}) {
      ClosureOptions options;
      options.jobs = jobs;
      EngineResult decided = decideByClosure(m, options);
      EXPECT_TRUE(decided.complete) << c.file;
      EXPECT_EQ(violated(m, decided), violated(m, explored)) << c.file << " jobs " << jobs;
      // Every witness replays to its property.
      for (const Witness &w : decided.witnesses) {
        std::string error;
        EXPECT_TRUE(witnessFinding(m, w, "closure", error)) << c.file << ": " << error;
      }
    }
  }
}

// Windows first (ClosureOptions::window): every example that is rotation-symmetric at 6
// and 7 devices (a window of 3, then of 5 devices, with devices outside it) gets the
// same violated properties as the whole instance's decision and as explore where
// explore completes; every witness, those found in a window included, replays on the
// whole instance.
TEST(Closure, WindowsDecideAsTheWholeInstance) {
  const std::vector<std::string> files = executor::testing::exampleFiles();
  int windowed = 0, lifted = 0, compared = 0;
  for (size_t i = 0; i < files.size(); ++i) {
    if (!executor::testing::sampledUnderSanitizers(i))
      continue;
    support::SourceManager sources;
    std::string error;
    std::optional<support::FileId> id = sources.load(files[i], error);
    ASSERT_TRUE(id) << error;
    support::DiagnosticEngine diags(&sources);
    const frontend::Annotations a = frontend::readAnnotations(sources.file(*id), diags);
    if (!a.meshes.empty() || !a.options.empty() ||
        (a.expect && a.expect->verdict == frontend::ExpectedVerdict::StaticError))
      continue;
    for (int64_t n : {6, 7}) {
      if (std::find(a.devices.begin(), a.devices.end(), n) == a.devices.end())
        continue;
      std::optional<model::Program> p = executor::testing::lowerExample(files[i], n);
      if (!p || !findSymmetry(*p))
        continue;
      const std::string what = fmt::format("{} N={}", files[i], n);
      Instance instance(std::move(*p), true);
      const Machine &m = instance.machine();
      ClosureOptions whole, first;
      whole.window = ClosureOptions::Window::Off;
      first.window = ClosureOptions::Window::On;
      EngineResult a = decideByClosure(m, whole), b = decideByClosure(m, first);
      ASSERT_TRUE(a.complete && b.complete) << what << ": " << a.reason << b.reason;
      EXPECT_EQ(violated(m, b), violated(m, a)) << what;
      for (const Witness &w : b.witnesses) {
        std::string error;
        EXPECT_TRUE(witnessFinding(m, w, "closure", error)) << what << ": " << error;
        lifted += w.origin.empty() ? 0 : 1;
      }
      const auto window = std::find_if(b.stats.begin(), b.stats.end(),
                                       [](const auto &kv) { return kv.first == "window"; });
      ASSERT_NE(window, b.stats.end()) << what;
      windowed += window->second != "none" ? 1 : 0;
      if (n == 6) {
        executor::ExploreOptions search;
        search.maxStates = 200'000;
        EngineResult explored = executor::explore(m, search);
        if (explored.complete) {
          EXPECT_EQ(violated(m, b), violated(m, explored)) << what;
          ++compared;
        }
      }
    }
  }
  const bool all = executor::testing::sampledUnderSanitizers(1);
  EXPECT_GE(windowed, all ? 20 : 5);
  EXPECT_GE(lifted, all ? 5 : 1);
  EXPECT_GE(compared, all ? 5 : 1);
}

// The window decides the rings' checks at scale, and a racy ring's witness is found in
// it: a run of the whole instance, the devices outside held at their first blocking
// event.
TEST(Closure, WindowDecidesRingsAndLiftsTheirWitnesses) {
  for (const char *file : {"all_reduce.dk", "reduce_scatter_bidirectional.dk", "all_gather.dk"}) {
    std::optional<model::Program> p = executor::testing::lowerExample(file, 24);
    ASSERT_TRUE(p);
    Instance instance(std::move(*p), true);
    ClosureOptions options;
    options.window = ClosureOptions::Window::On;
    EngineResult r = decideByClosure(instance.machine(), options);
    EXPECT_TRUE(r.complete && r.witnesses.empty()) << file;
    const auto window = std::find_if(r.stats.begin(), r.stats.end(),
                                     [](const auto &kv) { return kv.first == "window"; });
    ASSERT_NE(window, r.stats.end());
    // "3 devices: K of K checks": the smallest window decided every check.
    const std::string &text = window->second;
    const size_t colon = text.find(": "), of = text.find(" of ");
    ASSERT_TRUE(text.starts_with("3 devices: ") && of != std::string::npos) << text;
    EXPECT_EQ(text.substr(colon + 2, of - colon - 2),
              text.substr(of + 4, text.find(' ', of + 4) - of - 4))
        << file << ": " << text;
  }
  std::optional<model::Program> p =
      executor::testing::lowerExample("all_reduce_no_capacity.dk", 24);
  ASSERT_TRUE(p);
  Instance instance(std::move(*p), true);
  const Machine &m = instance.machine();
  ClosureOptions options;
  options.window = ClosureOptions::Window::On;
  EngineResult r = decideByClosure(m, options);
  ASSERT_TRUE(r.complete);
  int lifted = 0;
  for (const Witness &w : r.witnesses) {
    if (w.origin.empty())
      continue;
    ++lifted;
    EXPECT_NE(w.origin.find("of the 24 devices"), std::string::npos) << w.origin;
    std::string error;
    std::optional<report::Finding> f = shortFinding(m, w, "closure", {}, error);
    ASSERT_TRUE(f) << error;
    EXPECT_EQ(f->found, w.origin);
    // Every device outside the window stays before its first blocking event.
    std::vector<int32_t> events(m.deviceCount(), 0);
    for (const ScheduleStep &step : w.schedule)
      if (step.kind == K::Device)
        ++events[step.id];
    const std::vector<int32_t> distance = symmetryDistance(m);
    const int32_t radius = w.origin.find("within 1 rotation") != std::string::npos ? 1 : 2;
    for (model::DeviceId d = 0; d < m.deviceCount(); ++d) {
      if (distance[d] > radius && w.origin.find("within 8") == std::string::npos) {
        EXPECT_LE(events[d], firstBlocking(m, d)) << "device " << d;
      }
    }
  }
  EXPECT_GE(lifted, 1);
  ClosureOptions off;
  off.window = ClosureOptions::Window::Off;
  EXPECT_EQ(violated(m, r), violated(m, decideByClosure(m, off)));
}

TEST(Closure, ResultDoesNotDependOnThreads) {
  std::optional<model::Program> p = executor::testing::lowerExample("all_reduce_no_capacity.dk", 8);
  ASSERT_TRUE(p);
  Instance instance(std::move(*p));
  ClosureOptions one, two;
  two.jobs = 2;
  EngineResult a = decideByClosure(instance.machine(), one);
  EngineResult b = decideByClosure(instance.machine(), two);
  ASSERT_EQ(a.witnesses.size(), b.witnesses.size());
  for (size_t i = 0; i < a.witnesses.size(); ++i) {
    EXPECT_EQ(a.witnesses[i].property, b.witnesses[i].property);
    EXPECT_EQ(a.witnesses[i].schedule, b.witnesses[i].schedule);
  }
  // The figures, but the wall time (it differs from run to run).
  auto figures = [](std::vector<std::pair<std::string, std::string>> stats) {
    std::erase_if(stats, [](const auto &kv) { return kv.first == "time"; });
    return stats;
  };
  EXPECT_EQ(figures(a.stats), figures(b.stats));
}

TEST(Symmetry, RingsRotateAndOthersDoNot) {
  for (const char *file : {"all_gather.dk", "all_reduce.dk", "reduce_scatter_bidirectional.dk",
                           "right_permute.dk", "all_gather_bidirectional.dk"}) {
    std::optional<model::Program> p = executor::testing::lowerExample(file, 5);
    ASSERT_TRUE(p);
    std::optional<Symmetry> s = findSymmetry(*p);
    ASSERT_TRUE(s) << file;
    ASSERT_EQ(s->rotations.size(), 1u);
    EXPECT_EQ(s->representative, (std::vector<bool>{true, false, false, false, false}));
  }
  // all_gather's rows move with the device: output[(me - step) % N].
  std::optional<model::Program> gather = executor::testing::lowerExample("all_gather.dk", 5);
  const Symmetry s = *findSymmetry(*gather);
  model::BufferId output = -1;
  for (size_t b = 0; b < gather->buffers.size(); ++b)
    if (gather->buffers[b].name == "output")
      output = static_cast<model::BufferId>(b);
  ASSERT_GE(output, 0);
  EXPECT_EQ(s.rotations[0].shift[output], (std::vector<int64_t>{1, 0}));
  EXPECT_FALSE(s.invariant(model::Region{output, {{2, 3}, {0, 8}}}));
  EXPECT_TRUE(s.invariant(model::Region{output, {{0, 5}, {0, 8}}}));
  // A device singled out breaks it: dma_table.dk's table names each device's peers.
  std::optional<model::Program> table = executor::testing::lowerExample("dma_table.dk", 4);
  ASSERT_TRUE(table);
  EXPECT_FALSE(findSymmetry(*table));
  // So does a changed event on one device.
  std::optional<model::Program> broken = executor::testing::lowerExample("right_permute.dk", 4);
  ASSERT_TRUE(broken);
  for (model::Event &e : broken->processes[2].events)
    if (auto *w = std::get_if<model::SemWait>(&e.kind))
      w->amount += 1;
  EXPECT_FALSE(findSymmetry(*broken));
}

/// With the symmetry the property list keeps its ids and messages, the race
/// obligations of device 0 only, and the engines find the same violated properties.
TEST(Symmetry, ReducedPropertiesReadTheSame) {
  for (const char *file : {"all_gather.dk", "all_gather_shared_sem.dk", "all_reduce_no_capacity.dk",
                           "reduce_scatter_no_cleanup.dk", "all_gather_bidirectional.dk"}) {
    std::optional<model::Program> p = executor::testing::lowerExample(file, 4);
    ASSERT_TRUE(p);
    Instance full(*p), reduced(std::move(*p), true);
    ASSERT_NE(reduced.properties().symmetry(), nullptr) << file;
    const std::vector<Property> &a = full.properties().properties(),
                                &b = reduced.properties().properties();
    ASSERT_EQ(a.size(), b.size()) << file;
    size_t races = 0, reducedRaces = 0;
    for (size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(a[i].id, b[i].id);
      EXPECT_EQ(a[i].message, b[i].message) << file;
      if (a[i].kind == report::FindingKind::Race) {
        races += a[i].obligations.size();
        reducedRaces += b[i].obligations.size();
      }
    }
    EXPECT_EQ(reducedRaces * 4, races) << file;
    for (ObligationIndex o = 0;
         o < static_cast<ObligationIndex>(reduced.properties().obligations().size()); ++o) {
      if (reduced.properties().obligation(o).what == Obligation::What::Race) {
        EXPECT_EQ(reduced.properties().obligation(o).device, 0);
      }
    }
    EXPECT_EQ(violated(full.machine(), decideByClosure(full.machine(), {})),
              violated(reduced.machine(), decideByClosure(reduced.machine(), {})))
        << file;
  }
}

} // namespace
} // namespace dkv::semantics
