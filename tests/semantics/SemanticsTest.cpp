// Tests of the shared semantics: the property list (ids, grouping, messages,
// pruning), witnesses -> findings, and the schedule file format.
#include "executor/Executor.h"
#include "frontend/Annotations.h"
#include "semantics/Machine.h"
#include "semantics/Properties.h"
#include "semantics/Schedule.h"
#include "semantics/Shorten.h"
#include "semantics/Witness.h"
#include "tests/executor/ExecutorFixtures.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

namespace dkv::semantics {
namespace {

using report::FindingKind;
using report::ScheduleStep;
using K = ScheduleStep::Kind;

/// enter 0, enter 1, barrier 0, barrier 1, store 0, start dma 0, store 1: device 1's
/// store runs while dma 0 writes its output (permute with stores first).
const report::Schedule kRaceSchedule = {{K::Device, 0}, {K::Device, 1}, {K::Device, 0},
                                        {K::Device, 1}, {K::Device, 0}, {K::Device, 0},
                                        {K::Device, 1}};

const Property *byId(const Properties &props, const std::string &id) {
  std::optional<PropertyIndex> p = props.find(id);
  return p ? &props.property(*p) : nullptr;
}

TEST(Properties, OneLineOnTwoDevicesIsOneProperty) {
  Instance instance(executor::testing::permute(true, true));
  const Properties &props = instance.properties();
  const Property *race = byId(props, "race.0");
  ASSERT_NE(race, nullptr);
  EXPECT_EQ(race->kind, FindingKind::Race);
  EXPECT_EQ(race->message,
            "store to output[:] races with a dma writing output[:] (started at line 5)");
  EXPECT_EQ(race->primary.loc.line, 4u);
  ASSERT_EQ(race->secondary.size(), 1u);
  EXPECT_EQ(race->secondary[0].loc.line, 5u);
  // The store on each device races with the other device's DMA: two obligations.
  ASSERT_EQ(race->obligations.size(), 2u);
  EXPECT_EQ(props.obligationText(race->obligations[0]),
            "store to output[:] on device 0 races with dma 1 (device 1 -> 0) writing output[:]");
  EXPECT_EQ(byId(props, "race.1"), nullptr);
  // Ids are numbered per kind in order of kind, then location.
  for (size_t i = 1; i < props.properties().size(); ++i) {
    const Property &a = props.properties()[i - 1], &b = props.properties()[i];
    EXPECT_TRUE(a.kind < b.kind || (a.kind == b.kind && !(b.primary.loc < a.primary.loc)))
        << a.id << " before " << b.id;
  }
}

TEST(Properties, DeterministicIdsAndMessages) {
  Instance a(executor::testing::permute(false, true)), b(executor::testing::permute(false, true));
  ASSERT_EQ(a.properties().properties().size(), b.properties().properties().size());
  for (size_t i = 0; i < a.properties().properties().size(); ++i) {
    EXPECT_EQ(a.properties().properties()[i].id, b.properties().properties()[i].id);
    EXPECT_EQ(a.properties().properties()[i].message, b.properties().properties()[i].message);
  }
}

TEST(Properties, TextsThatDifferBetweenDevicesAreGeneralised) {
  model::Program p = executor::testing::permute(true, true);
  // Each device stores only its own element of output: the same line, other regions.
  for (model::DeviceId d = 0; d < 2; ++d)
    for (model::Event &e : p.processes[d].events)
      if (auto *st = std::get_if<model::Store>(&e.kind))
        st->dst = model::Region{1, {{d, d + 1}}};
  Instance instance(std::move(p));
  const Property *race = byId(instance.properties(), "race.0");
  ASSERT_NE(race, nullptr);
  EXPECT_EQ(race->message,
            "store to output[...] races with a dma writing output[:] (started at line 5)");
  EXPECT_EQ(instance.properties().obligationText(race->obligations[1]),
            "store to output[1] on device 1 races with dma 0 (device 0 -> 1) writing output[:]");
}

TEST(Properties, PairsOrderedByTheEntryBarrierArePruned) {
  model::Program p = executor::testing::permute(true, true);
  // Move each store before the device barrier: it happens before either DMA starts.
  for (model::Process &proc : p.processes)
    std::swap(proc.events[1], proc.events[2]);
  Instance instance(std::move(p));
  EXPECT_EQ(byId(instance.properties(), "race.0"), nullptr);
  EXPECT_EQ(instance.properties().prunedRaces(), 2);
}

TEST(Properties, SiblingBlocksShareSemaphoreSlotsNestedOnesStackAbove) {
  using namespace model;
  Program p;
  p.file = "fixture.dk";
  p.kernel = "slots";
  p.mesh = {{"x", 1}};
  p.contexts = {"inv 0"};
  p.scopes = {{"run_scoped@3", kKernelScope, {3, 1}},
              {"run_scoped@6", kKernelScope, {6, 1}},
              {"run_scoped@4", 0, {4, 1}}};
  p.semaphores = {{"k0", {}, SemKind::Regular, kKernelScope, {1, 1}},
                  {"a0", {}, SemKind::Regular, 0, {3, 1}},
                  {"a1", {}, SemKind::Dma, 0, {3, 1}},
                  {"b0", {}, SemKind::Regular, 1, {6, 1}},
                  {"c0", {}, SemKind::Regular, 2, {4, 1}},
                  {"k1", {}, SemKind::Regular, kKernelScope, {1, 1}}};
  p.processes.push_back({0, {0}, {{KernelEnter{0}, {2, 1}, 0}, {KernelExit{0}, {9, 1}, 0}}});
  Properties props(p);
  // Kernel scratch first (k0, k1), then run_scoped@3 (a0, a1) from slot 2, its child
  // run_scoped@4 above it (c0), and the sibling run_scoped@6 from slot 2 again (b0).
  EXPECT_EQ(props.slotOf(0), 0);
  EXPECT_EQ(props.slotOf(5), 1);
  EXPECT_EQ(props.slotOf(1), 2);
  EXPECT_EQ(props.slotOf(2), 3);
  EXPECT_EQ(props.slotOf(3), 2);
  EXPECT_EQ(props.slotOf(4), 4);
  EXPECT_EQ(props.sharingSlot(1), (std::vector<SemId>{3}));
  EXPECT_EQ(props.sharingSlot(3), (std::vector<SemId>{1}));
  EXPECT_TRUE(props.sharingSlot(2).empty());
  EXPECT_TRUE(props.sharingSlot(4).empty());
  EXPECT_TRUE(props.sharingSlot(0).empty());
}

TEST(Witness, AFixedScheduleBecomesTheFindingOfItsProperty) {
  Instance instance(executor::testing::permute(true, true));
  std::string error;
  std::optional<report::Finding> f = witnessFinding(
      instance.machine(), {*instance.properties().find("race.0"), kRaceSchedule}, "test", error);
  ASSERT_TRUE(f) << error;
  EXPECT_EQ(f->property, "race.0");
  EXPECT_EQ(f->engine, "test");
  EXPECT_EQ(f->message,
            "store to output[:] races with a dma writing output[:] (started at line 5)");
  EXPECT_EQ(f->detail,
            "store to output[:] on device 1 races with dma 0 (device 0 -> 1) writing output[:]");
  ASSERT_EQ(f->trace.steps.size(), kRaceSchedule.size());
  EXPECT_EQ(f->trace.steps[5].text, "start dma 0: input[:] -> device 1 output[:]");
  EXPECT_EQ(f->schedule, kRaceSchedule);
}

TEST(Witness, TheTraceRecordsWhatPicturesDraw) {
  Instance instance(executor::testing::permute(true, true));
  std::string error;
  std::optional<report::Finding> f = witnessFinding(
      instance.machine(), {*instance.properties().find("race.0"), kRaceSchedule}, "test", error);
  ASSERT_TRUE(f) << error;
  const report::Trace &t = f->trace;
  using What = report::TraceStep::What;
  EXPECT_EQ(t.steps[0].what, What::Enter);
  EXPECT_EQ(t.steps[2].what, What::Barrier);
  // Device 0 reached the barrier after step 1 and could not pass it until device 1
  // arrived; device 1 passed it at once.
  EXPECT_EQ(t.steps[2].blockedSince, 1);
  EXPECT_EQ(t.steps[3].blockedSince, -1);
  EXPECT_EQ(t.steps[4].what, What::Store);
  const report::TraceStep &start = t.steps[5];
  EXPECT_EQ(start.what, What::DmaStart);
  EXPECT_EQ(start.dma, 0);
  EXPECT_EQ(start.peer, 1);
  EXPECT_EQ(start.region, "input[:] -> output[:]");
  EXPECT_GT(start.bytes, 0);
  // The racing access (the last step) and the start of the DMA it races with.
  ASSERT_EQ(t.marks.size(), 2u);
  EXPECT_EQ(t.marks[0].step, 6);
  EXPECT_EQ(t.marks[0].label, "racing access");
  EXPECT_EQ(t.marks[1].step, 5);
  EXPECT_EQ(t.marks[1].label, "racing dma (still writing its destination)");
  // Dma 0 has not landed: in flight after the last step.
  EXPECT_EQ(t.inFlight, std::vector<int32_t>{0});
}

TEST(Witness, BlockedAtTheEndMeansItCannotGoOnAndAFooledWaitIsMarked) {
  // all_reduce_no_capacity at 3 devices: a device whose wait became satisfiable after
  // it blocked, but that the schedule did not move again, is not listed as blocked
  // after the last step (its box would say "waits for send_sem >= 32 but it is 32").
  // A race whose device's wait returned on another DMA's bytes (shared-semaphore) marks
  // that wait too.
  std::optional<model::Program> program =
      executor::testing::lowerExample("all_reduce_no_capacity.dk", 3);
  ASSERT_TRUE(program);
  Instance instance(std::move(*program));
  const Machine &machine = instance.machine();
  semantics::EngineResult result = executor::explore(machine, executor::ExploreOptions{});
  ASSERT_FALSE(result.witnesses.empty());
  size_t fooled = 0;
  for (const Witness &w : result.witnesses) {
    std::string error;
    std::optional<report::Finding> f = witnessFinding(machine, w, "explore", error);
    ASSERT_TRUE(f) << error;
    ControlState before;
    std::optional<ControlState> end = replaySchedule(machine, w.schedule, before, nullptr, error);
    ASSERT_TRUE(end) << error;
    for (const report::TraceStep &b : f->trace.blocked)
      EXPECT_FALSE(machine.enabled(*end, {report::ScheduleStep::Kind::Device, b.actor.device}))
          << f->property << ": device " << b.actor.device << " " << b.text;
    for (const report::TraceMark &m : f->trace.marks)
      if (m.label.rfind("returns, but dma ", 0) == 0) {
        ++fooled;
        EXPECT_TRUE(f->shape.waitedOnSharedSemaphore) << f->property;
        EXPECT_EQ(f->trace.steps[m.step].what, report::TraceStep::What::Wait) << f->property;
      }
  }
  EXPECT_GT(fooled, 0u);
}

TEST(Witness, ASchedulethatDoesNotShowItsPropertyIsAnError) {
  Instance instance(executor::testing::permute(true, true));
  const Machine &m = instance.machine();
  std::string error;
  // One step short: nothing is violated by device 0's start.
  report::Schedule shorter(kRaceSchedule.begin(), kRaceSchedule.end() - 1);
  EXPECT_FALSE(witnessFinding(m, {*instance.properties().find("race.0"), shorter}, "test", error));
  EXPECT_NE(error.find("does not violate it"), std::string::npos) << error;
  // A step that is not enabled.
  report::Schedule bad = {{K::Land, 0}};
  EXPECT_FALSE(witnessFinding(m, {0, bad}, "test", error));
  EXPECT_NE(error.find("does not replay: step 1 ('land 0') is not enabled: dma 0 has not "
                       "started"),
            std::string::npos)
      << error;
  // A property that does not exist.
  EXPECT_FALSE(witnessFinding(m, {9999, kRaceSchedule}, "test", error));
  // In a verdict, any such witness makes the whole verdict an internal error.
  EngineResult result;
  result.witnesses.push_back({*instance.properties().find("race.0"), kRaceSchedule});
  result.witnesses.push_back({*instance.properties().find("race.0"), shorter});
  report::Verdict v = buildVerdict(m, result, "test");
  EXPECT_EQ(v.status, report::Verdict::Status::Error);
  EXPECT_TRUE(v.findings.empty());
}

TEST(Witness, OneFindingPerPropertyAndIncompleteSearchesAreInconclusive) {
  Instance instance(executor::testing::permute(true, true));
  EngineResult result;
  PropertyIndex race = *instance.properties().find("race.0");
  result.witnesses = {{race, kRaceSchedule}, {race, kRaceSchedule}};
  report::Verdict v = buildVerdict(instance.machine(), result, "test");
  EXPECT_EQ(v.status, report::Verdict::Status::Findings);
  EXPECT_EQ(v.findings.size(), 1u);
  EngineResult none;
  none.complete = false;
  none.reason = "budget";
  v = buildVerdict(instance.machine(), none, "test");
  EXPECT_EQ(v.status, report::Verdict::Status::Inconclusive);
  EXPECT_EQ(v.reason, "budget");
  EXPECT_EQ(buildVerdict(instance.machine(), EngineResult{}, "test").status,
            report::Verdict::Status::Verified);
}

TEST(Witness, DeadlockDetailNamesEveryStuckDevice) {
  Instance instance(executor::testing::signalWait(1, 2));
  // enter, enter, barrier, barrier, signal, wait: device 1 waits for its second unit.
  report::Schedule s = {{K::Device, 0}, {K::Device, 1}, {K::Device, 0}, {K::Device, 1},
                        {K::Device, 0}, {K::Device, 0}, {K::Device, 1}};
  const Properties &props = instance.properties();
  std::optional<PropertyIndex> p;
  for (const Property &prop : props.properties())
    if (prop.kind == FindingKind::Deadlock)
      p = *props.find(prop.id);
  ASSERT_TRUE(p);
  std::string error;
  std::optional<report::Finding> f = witnessFinding(instance.machine(), {*p, s}, "test", error);
  ASSERT_TRUE(f) << error;
  EXPECT_EQ(f->message, "wait for ready >= 1 (wait) never returns");
  EXPECT_EQ(f->detail, "device 1 waits for ready >= 1 but it is 0");
  // The picture's stuck wait: device 1, blocked since the last step; no marked step.
  ASSERT_EQ(f->trace.blocked.size(), 1u);
  EXPECT_EQ(f->trace.blocked[0].actor.device, 1);
  EXPECT_EQ(f->trace.blocked[0].text, "device 1 waits for ready >= 1 but it is 0");
  EXPECT_EQ(f->trace.blocked[0].what, report::TraceStep::What::Wait);
  EXPECT_EQ(f->trace.blocked[0].blockedSince, static_cast<int32_t>(s.size()));
  EXPECT_TRUE(f->trace.marks.empty());
}

// --dma-order (docs/model.md, "DMA order"): tests/semantics/link_order.dk starts two
// DMAs from device 0 to device 1 on one receive semaphore; device 1 waits for one DMA's
// bytes, then reads the first DMA's destination.
std::optional<model::Program> linkOrder(model::DmaOrder order, int32_t chunks = 1) {
  model::Options o;
  o.dmaOrder = order;
  o.dmaChunks = chunks;
  return executor::testing::lowerExample("tests/semantics/link_order.dk", 2, o);
}

TEST(DmaOrder, EachDmaOnALinkWaitsForTheOneStartedBeforeIt) {
  for (model::DmaOrder order : {model::DmaOrder::Any, model::DmaOrder::Link}) {
    std::optional<model::Program> p = linkOrder(order);
    ASSERT_TRUE(p);
    ASSERT_EQ(p->dmas.size(), 2u);
    Instance instance(*p);
    const Properties &props = instance.properties();
    EXPECT_TRUE(onALink(p->dmas[0]) && onALink(p->dmas[1]));
    EXPECT_EQ(props.linkPredecessor(0), -1);
    EXPECT_EQ(props.linkPredecessor(1), order == model::DmaOrder::Link ? 0 : -1);

    // Device 0 enters, passes the barrier, starts both DMAs; both send their chunk.
    const Machine &m = instance.machine();
    ControlState s = m.initialState();
    report::Schedule steps = {{K::Device, 0}, {K::Device, 1}, {K::Device, 0}, {K::Device, 1},
                              {K::Device, 0}, {K::Device, 0}, {K::Send, 0},   {K::Send, 1}};
    for (const ScheduleStep &step : steps) {
      ASSERT_TRUE(m.enabled(s, step)) << m.whyDisabled(s, step);
      m.apply(s, step);
    }
    ASSERT_TRUE(m.started(s, 1));
    // The second DMA may overtake the first only with --dma-order any.
    const ScheduleStep land1{K::Land, 1};
    EXPECT_EQ(m.enabled(s, land1), order == model::DmaOrder::Any);
    std::vector<ScheduleStep> enabled;
    m.enabledSteps(s, enabled);
    EXPECT_EQ(std::count(enabled.begin(), enabled.end(), land1),
              order == model::DmaOrder::Any ? 1 : 0);
    if (order == model::DmaOrder::Link) {
      EXPECT_EQ(m.whyDisabled(s, land1),
                "dma 1 lands only after dma 0, started before it on the same link, has landed "
                "(--dma-order link)");
    }
    m.apply(s, {K::Land, 0});
    EXPECT_TRUE(m.enabled(s, land1));
  }
}

TEST(DmaOrder, OutOfOrderLandingIsARaceOnlyWithAny) {
  for (int32_t chunks : {1, 2}) {
    std::optional<model::Program> any = linkOrder(model::DmaOrder::Any, chunks);
    std::optional<model::Program> link = linkOrder(model::DmaOrder::Link, chunks);
    ASSERT_TRUE(any && link);
    report::Verdict a = executor::explore(*any, {});
    ASSERT_EQ(a.status, report::Verdict::Status::Findings) << "chunks " << chunks;
    ASSERT_EQ(a.findings.size(), 1u);
    EXPECT_EQ(a.findings[0].kind, FindingKind::Race);
    EXPECT_EQ(a.findings[0].primary.loc.line, 24u);
    // The witness lands a chunk of dma 1 before dma 0 has landed all its chunks, and it
    // replays in the executor.
    const report::Schedule &w = a.findings[0].schedule;
    auto firstLand1 = std::find(w.begin(), w.end(), ScheduleStep{K::Land, 1});
    ASSERT_NE(firstLand1, w.end());
    EXPECT_LT(std::count(w.begin(), firstLand1, ScheduleStep{K::Land, 0}), chunks);
    EXPECT_TRUE(a.findings[0].confirmed);
    // With --dma-order link that schedule does not replay, and no schedule races.
    Instance instance(*link);
    std::string error;
    std::optional<PropertyIndex> race = instance.properties().find(a.findings[0].property);
    ASSERT_TRUE(race);
    EXPECT_FALSE(witnessFinding(instance.machine(), {*race, w}, "test", error));
    EXPECT_NE(error.find("--dma-order link"), std::string::npos) << error;
    report::Verdict l = executor::explore(*link, {});
    EXPECT_EQ(l.status, report::Verdict::Status::Verified) << "chunks " << chunks;
    EXPECT_TRUE(l.findings.empty());
  }
}

TEST(DmaOrder, LocalCopiesAndEmptyDmasAreOnNoLink) {
  model::Dma remote;
  remote.issuer = 0;
  remote.target = 1;
  remote.sendSem = 0;
  remote.bytes = 4;
  EXPECT_TRUE(onALink(remote));
  model::Dma local = remote;
  local.target = 0;
  local.sendSem.reset();
  local.local = true;
  EXPECT_FALSE(onALink(local));
  model::Dma self = remote;
  self.target = 0;
  EXPECT_FALSE(onALink(self));
  model::Dma empty = remote;
  empty.bytes = 0;
  EXPECT_FALSE(onALink(empty));
}

// TensorCore meshes (docs/model.md "TensorCores"): accesses conflict on one memory
// instance, the device's for hbm / any buffers its cores share, the process's otherwise.
TEST(Cores, ConflictsArePerMemoryInstance) {
  // One device, two cores (the file's C = 2): every core copies its half of the input into
  // its own in_vmem and its result into its own half of the shared output.
  std::optional<model::Program> swap =
      executor::testing::lowerExample("tensorcore_swap_cores.dk", 1);
  ASSERT_TRUE(swap);
  ASSERT_EQ(swap->deviceCount(), 2);
  Instance ok(*swap);
  const Properties &props = ok.properties();
  for (const Obligation &o : props.obligations()) {
    if (o.what != Obligation::What::Race)
      continue;
    // The access and the DMA side it is checked against touch the same instance.
    const model::Event &e = swap->processes[o.device].events[o.pc];
    const model::Dma &other = swap->dmas[o.dma];
    const model::Region &theirs = o.dst ? other.dst : other.src;
    const model::DeviceId theirProcess = o.dst ? other.target : other.issuer;
    model::DeviceId mine = o.device;
    model::BufferId buffer = theirs.buffer;
    if (const auto *ds = std::get_if<model::DmaStart>(&e.kind)) {
      const model::Dma &dma = swap->dmas[ds->dma];
      mine = o.access == 0 ? dma.issuer : dma.target;
    }
    EXPECT_EQ(swap->memoryOf(mine, buffer), swap->memoryOf(theirProcess, buffer))
        << props.obligationText(static_cast<ObligationIndex>(&o - &props.obligations()[0]));
  }
  // The two cores' copies into in_vmem (dma 0 on core 0, dma 3 on core 1) write different
  // instances: no race obligation pairs them, though they write the same buffer.
  ASSERT_EQ(swap->dmas[0].dst.buffer, swap->dmas[3].dst.buffer);
  for (ObligationIndex index : props.racesAgainst(0))
    EXPECT_NE(props.obligation(index).device, 1) << props.obligationText(index);
  EXPECT_EQ(executor::explore(*swap, {}).status, report::Verdict::Status::Verified);

  // Both cores copy into out_hbm[:, 0:128] of the device they share: a race between the
  // processes, on the device's instance.
  std::optional<model::Program> overlap =
      executor::testing::lowerExample("tensorcore_output_overlap.dk", 1);
  ASSERT_TRUE(overlap);
  Instance bad(*overlap);
  bool crossCore = false;
  for (size_t i = 0; i < bad.properties().obligations().size(); ++i) {
    const Obligation &o = bad.properties().obligation(static_cast<ObligationIndex>(i));
    if (o.what == Obligation::What::Race && overlap->dmas[o.dma].target != o.device &&
        overlap->dmas[o.dma].issuer != o.device) {
      crossCore = true;
      const std::string text = bad.properties().obligationText(static_cast<ObligationIndex>(i));
      EXPECT_NE(text.find("writing out_hbm[:, 0:128] on device 0 races with dma"),
                std::string::npos)
          << text;
      EXPECT_NE(text.find("(local copy on device 0 core"), std::string::npos) << text;
    }
  }
  EXPECT_TRUE(crossCore);
  report::Verdict v = executor::explore(*overlap, {});
  ASSERT_EQ(v.status, report::Verdict::Status::Findings);
  ASSERT_EQ(v.findings.size(), 1u);
  EXPECT_EQ(v.findings[0].kind, FindingKind::Race);
  EXPECT_TRUE(v.findings[0].confirmed);
  EXPECT_EQ(v.findings[0].trace.cores, 2);
}

// Exit and lifetime rules are per process: a core's semaphores and scratch are its own.
TEST(Cores, ExitAndLifetimeArePerProcess) {
  std::optional<model::Program> p =
      executor::testing::lowerExample("tensorcore_swap_no_barrier.dk", 1);
  ASSERT_TRUE(p);
  Instance instance(*p);
  // Each core's DMA into the other core's scratch_vmem is checked against that core's
  // invocation (its target process), not the device's.
  for (const model::Dma &dma : p->dmas) {
    if (dma.local)
      continue;
    EXPECT_NE(dma.issuer, dma.target);
    for (ObligationIndex index : instance.properties().atLand(dma.id))
      EXPECT_EQ(instance.properties().obligation(index).device, dma.target);
  }
  report::Verdict v = executor::explore(*p, {});
  ASSERT_EQ(v.status, report::Verdict::Status::Findings);
  EXPECT_EQ(v.findings[0].kind, FindingKind::LifetimeViolation);
  EXPECT_NE(v.findings[0].detail.find("lands in scratch_vmem[:, :] on device 0 core"),
            std::string::npos)
      << v.findings[0].detail;
}

TEST(ScheduleFile, RoundTrip) {
  report::Schedule s = {{K::Device, 0}, {K::Send, 3}, {K::Land, 3}, {K::Device, 12}};
  size_t line = 0;
  std::string error;
  std::optional<ScheduleFile> back = parseScheduleFile(formatSchedule(s, 7), line, error);
  ASSERT_TRUE(back) << error;
  EXPECT_EQ(back->steps, s);
  EXPECT_EQ(back->inputSeed, 7u);
  back = parseScheduleFile("# c\n\ndevice 1  # first\n  land 2\n", line, error);
  ASSERT_TRUE(back) << error;
  EXPECT_EQ(back->steps.size(), 2u);
  EXPECT_EQ(back->lines, (std::vector<size_t>{3, 4}));
}

TEST(ScheduleFile, ErrorsNameTheLine) {
  size_t line = 0;
  std::string error;
  EXPECT_FALSE(parseScheduleFile("device 0\nfly 2\n", line, error));
  EXPECT_EQ(line, 2u);
  EXPECT_NE(error.find("unknown step 'fly'"), std::string::npos) << error;
  EXPECT_FALSE(parseScheduleFile("device 0\ndevice 1\nsend x\n", line, error));
  EXPECT_EQ(line, 3u);
  EXPECT_FALSE(parseScheduleFile("land 1 2\n", line, error));
  EXPECT_EQ(line, 1u);
}

TEST(Shorten, APaddedRaceWitnessLosesTheStepsTheRaceDoesNotNeed) {
  Instance instance(executor::testing::permute(true, true));
  const Machine &m = instance.machine();
  // kRaceSchedule with dma 0's send and device 0's wait for it before device 1's
  // store: 9 steps, of which the race needs 7.
  const report::Schedule padded = {{K::Device, 0}, {K::Device, 1}, {K::Device, 0},
                                   {K::Device, 1}, {K::Device, 0}, {K::Device, 0},
                                   {K::Send, 0},   {K::Device, 0}, {K::Device, 1}};
  const PropertyIndex race = *instance.properties().find("race.0");
  EngineResult result;
  result.witnesses = {{race, padded}};
  report::Verdict v = buildVerdict(m, result, "test");
  ASSERT_EQ(v.status, report::Verdict::Status::Findings) << v.reason;
  ASSERT_EQ(v.findings.size(), 1u);
  const report::Finding &f = v.findings[0];
  EXPECT_EQ(f.witnessSteps, 9);
  // The fixed order: each actor runs as far as it can, devices first: device 0
  // enters and blocks at the barrier, device 1 enters and passes it, device 0 passes
  // it, stores and starts dma 0; then device 1's racing store.
  const report::Schedule expected = {{K::Device, 0}, {K::Device, 1}, {K::Device, 1}, {K::Device, 0},
                                     {K::Device, 0}, {K::Device, 0}, {K::Device, 1}};
  EXPECT_EQ(f.schedule, expected);
  EXPECT_EQ(f.trace.steps.size(), expected.size());
  EXPECT_EQ(f.detail,
            "store to output[:] on device 1 races with dma 0 (device 0 -> 1) writing output[:]");
  // Without shortening: the engine's own schedule, and no witnessSteps.
  VerdictOptions raw;
  raw.shorten = false;
  report::Verdict w = buildVerdict(m, result, "test", raw);
  ASSERT_EQ(w.findings.size(), 1u);
  EXPECT_EQ(w.findings[0].schedule, padded);
  EXPECT_EQ(w.findings[0].witnessSteps, 0);
}

TEST(Shorten, AMinimalWitnessIsAFixedPointAndATinyBudgetKeepsTheOriginal) {
  Instance instance(executor::testing::permute(true, true));
  const Machine &m = instance.machine();
  const PropertyIndex race = *instance.properties().find("race.0");
  // kRaceSchedule has no step to spare: shortening gives the fixed order of the same
  // 7 steps, and shortening that again changes nothing.
  ShortenResult once = shortenWitness(m, kRaceSchedule, race);
  EXPECT_TRUE(once.complete);
  EXPECT_EQ(once.schedule.size(), kRaceSchedule.size());
  ShortenResult twice = shortenWitness(m, once.schedule, race);
  EXPECT_TRUE(twice.complete);
  EXPECT_FALSE(twice.shortened);
  EXPECT_EQ(twice.schedule, once.schedule);
  // Out of budget before the first test: the original schedule, said incomplete.
  ShortenOptions tiny;
  tiny.budget = 3;
  ShortenResult cut = shortenWitness(m, kRaceSchedule, race, tiny);
  EXPECT_FALSE(cut.complete);
  EXPECT_FALSE(cut.shortened);
  EXPECT_EQ(cut.schedule, kRaceSchedule);
}

/// Every example with a finding at N = 2 and 3 (as its `// devices:` allows, with its
/// `// options:`): each witness of the exhaustive search, shortened, replays to the
/// same property, is no longer, and is a fixed point of shortening.
TEST(Shorten, EveryExampleWitnessShortensToAReplayOfTheSameObligation) {
  std::vector<std::string> files;
  for (const auto &entry :
       std::filesystem::directory_iterator(std::string(DKV_SOURCE_DIR) + "/examples"))
    if (entry.path().extension() == ".dk")
      files.push_back(entry.path().filename().string());
  std::sort(files.begin(), files.end());
  int witnesses = 0, shorter = 0;
  for (const std::string &name : files) {
    std::string error;
    support::SourceManager sources;
    std::optional<support::FileId> id =
        sources.load(std::string(DKV_SOURCE_DIR) + "/examples/" + name, error);
    ASSERT_TRUE(id) << error;
    support::DiagnosticEngine diags(&sources);
    frontend::Annotations annotations = frontend::readAnnotations(sources.file(*id), diags);
    if (!annotations.expect ||
        annotations.expect->verdict == frontend::ExpectedVerdict::StaticError ||
        annotations.expect->verdict == frontend::ExpectedVerdict::Ok || !annotations.meshes.empty())
      continue;
    model::Options options;
    for (size_t i = 0; i + 1 < annotations.options.size(); ++i)
      if (annotations.options[i] == "--invocations")
        options.invocations = std::stoi(annotations.options[i + 1]);
    for (int64_t n : {2, 3}) {
      const std::vector<int64_t> &devices = annotations.devices;
      if (!devices.empty() && std::find(devices.begin(), devices.end(), n) == devices.end())
        continue;
      std::optional<model::Program> program = executor::testing::lowerExample(name, n, options);
      ASSERT_TRUE(program) << name;
      Instance instance(std::move(*program));
      const Machine &m = instance.machine();
      executor::ExploreOptions budget;
      budget.maxStates = 300'000;
      EngineResult result = executor::explore(m, budget);
      for (const Witness &w : result.witnesses) {
        ASSERT_TRUE(witnessFinding(m, w, "explore", error)) << name << ": " << error;
        ShortenResult s = shortenWitness(m, w.schedule, w.property);
        EXPECT_TRUE(s.complete) << name << " N=" << n;
        EXPECT_LE(s.schedule.size(), w.schedule.size()) << name << " N=" << n;
        std::optional<report::Finding> f =
            witnessFinding(m, {w.property, s.schedule}, "explore", error);
        ASSERT_TRUE(f) << name << " N=" << n << ": " << error;
        EXPECT_EQ(f->property, instance.properties().property(w.property).id);
        EXPECT_FALSE(shortenWitness(m, s.schedule, w.property).shortened) << name << " N=" << n;
        ++witnesses;
        shorter += s.schedule.size() < w.schedule.size() ? 1 : 0;
      }
    }
  }
  EXPECT_GT(witnesses, 20);
  EXPECT_GT(shorter, 0);
}

} // namespace
} // namespace dkv::semantics
