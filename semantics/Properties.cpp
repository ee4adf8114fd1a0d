// The property list of one instance (docs/model.md section 4, "Properties").
#include "semantics/Properties.h"

#include "semantics/Obligations.h"

#include "model/Printer.h"
#include "semantics/Text.h"
#include "support/Invariant.h"
#include "support/Overloaded.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

namespace dkv::semantics {

using namespace model;
using report::FindingKind;

namespace {

/// Message templates; slots are filled with the exact text shared by every
/// obligation of the property, or its general form.
enum Template : int32_t {
  kRace,           // {0} races with {1}
  kExitSemaphore,  // {0} with semaphore {1} non-zero
  kExitSend,       // {0} while a dma started at line {1} is still reading {2}
  kExitRecv,       // {0} while a dma started at line {1} is still writing {2}
  kLandInvocation, // dma writing {0} lands on a device outside the invocation ...
  kLandScope,      // dma writing {0} lands on a device outside {1}, which allocates {2}
  kSignalInvocation,
  kSlotSignal, // signal of {0} lands in the slot of {1}, a live semaphore of {2}
  kSlotLand,   // dma lands ... receive semaphore {0} ... slot of {1} ... {2}
  kSlotEnter,  // {2} starts while the slot of its semaphore {1} holds units for {0}
  kStuckWait,
  kStuckBarrier,
  kLandWindow,   // dma writing {0} lands on a device outside the calls that hold ...
  kSignalWindow, // signal of {0} reaches a device outside the calls that hold it
};

std::string compose(int32_t templ, const std::vector<std::string> &s) {
  switch (static_cast<Template>(templ)) {
  case kRace:
    return fmt::format("{} races with {}", s[0], s[1]);
  case kExitSemaphore:
    return fmt::format("{} with semaphore {} non-zero", s[0], s[1]);
  case kExitSend:
    return fmt::format("{} while a dma started at line {} is still reading {}", s[0], s[1], s[2]);
  case kExitRecv:
    return fmt::format("{} while a dma started at line {} is still writing {}", s[0], s[1], s[2]);
  case kLandInvocation:
    return fmt::format("dma writing {} lands on a device that is not in the invocation of the "
                       "kernel that started it",
                       s[0]);
  case kLandScope:
    return fmt::format("dma writing {} lands on a device outside {}, which allocates {}", s[0],
                       s[1], s[2]);
  case kSignalInvocation:
    return fmt::format("signal of {} reaches a device that is not in the signaller's invocation "
                       "of the kernel",
                       s[0]);
  case kSlotSignal:
    return fmt::format("signal of {} lands in the semaphore slot of {}, a live semaphore of {} "
                       "(run_scoped blocks reuse slots)",
                       s[0], s[1], s[2]);
  case kSlotLand:
    return fmt::format("dma signalling {} lands in the semaphore slot of {}, a live semaphore of "
                       "{} (run_scoped blocks reuse slots)",
                       s[0], s[1], s[2]);
  case kSlotEnter:
    return fmt::format("{} starts while the semaphore slot of {} still holds units for {} "
                       "(run_scoped blocks reuse slots)",
                       s[2], s[1], s[0]);
  case kStuckWait:
    return fmt::format("wait for {} >= {} ({}) never returns", s[0], s[1], s[2]);
  case kStuckBarrier:
    return fmt::format("the device barrier of invocation {} never opens", s[0]);
  case kLandWindow:
    return fmt::format("dma writing {} lands on a device outside the kernels of the sequence "
                       "that hold its destination and receive semaphore",
                       s[0]);
  case kSignalWindow:
    return fmt::format("signal of {} reaches a device outside the kernels of the sequence that "
                       "hold it",
                       s[0]);
  }
  DKV_UNREACHABLE("property template");
}

std::string locKey(SourceLoc loc) { return fmt::format("{}:{}:{}", loc.file, loc.line, loc.col); }

/// "out[...]": a region of `buffer` whose ranges differ between obligations.
std::string generalRegion(const Program &p, BufferId buffer) {
  return p.buffers[buffer].name + "[...]";
}
std::string generalSem(const Program &p, SemId sem) {
  const Semaphore &s = p.semaphores[sem];
  return s.index.empty() ? s.name : s.name + "[...]";
}

/// The window of one side of a DMA (docs/model.md "Kernel sequences"): the
/// invocations in which both its buffer and its semaphore on that side exist, that is
/// [dma.invocation, dma.invocation] but for arrays a sequence hands on. The source side
/// of a local copy goes with its one semaphore.
Window sideWindow(const Program &p, const Dma &dma, bool dst) {
  const Window b = p.bufferWindow(dst ? dma.dst.buffer : dma.src.buffer, dma.invocation);
  const SemId sem = dst || !dma.sendSem ? dma.recvSem : *dma.sendSem;
  const Window s = p.semWindow(sem, dma.invocation);
  return {std::max(b.first, s.first), std::min(b.last, s.last)};
}

const char *kindPrefix(FindingKind kind) {
  switch (kind) {
  case FindingKind::Race:
    return "race";
  case FindingKind::Deadlock:
    return "deadlock";
  case FindingKind::ExitViolation:
    return "exit";
  case FindingKind::LifetimeViolation:
    return "lifetime";
  }
  DKV_UNREACHABLE("finding kind");
}

} // namespace

bool onALink(const Dma &dma) {
  return !dma.local && dma.sendSem && dma.target != dma.issuer && dma.bytes > 0;
}

Properties::Properties(const Program &program, const Symmetry *symmetry,
                       const support::StopToken *stop)
    : program_(program), symmetry_(symmetry), stop_(stop) {
  const int32_t n = program.deviceCount();
  startPc_.assign(program.dmas.size(), -1);
  int32_t invocations = std::max<int32_t>(1, program.options.invocations);
  for (const Process &proc : program.processes)
    for (const Event &e : proc.events)
      if (const auto *b = std::get_if<DeviceBarrier>(&e.kind))
        invocations = std::max(invocations, b->invocation + 1);
  barrierPc_.assign(n, std::vector<int32_t>(invocations, -1));
  where_.resize(n);
  position_.resize(n);
  atEvent_.resize(n);
  stuck_.resize(n);
  atLand_.resize(program.dmas.size());
  racesAgainst_.resize(program.dmas.size());
  linkPred_.assign(program.dmas.size(), -1);
  for (DeviceId d = 0; d < n; ++d) {
    const std::vector<Event> &events = program.processes[d].events;
    atEvent_[d].resize(events.size());
    stuck_[d].assign(events.size(), -1);
    where_[d].assign(events.size() + 1, -1);
    position_[d].assign(events.size() + 1, 0);
    int32_t current = -1;
    int32_t position = 0;
    // --dma-order link: the last DMA d started on each link (d -> target) so far, per
    // priority (DMAs of different priorities may be on different queues: docs/model.md
    // "DMA order").
    std::map<std::pair<DeviceId, int32_t>, DmaId> lastOnLink;
    auto onLink = [&](DmaId k) {
      if (program.options.dmaOrder != DmaOrder::Link || !onALink(program.dmas[k]))
        return;
      auto [it, fresh] =
          lastOnLink.emplace(std::make_pair(program.dmas[k].target, program.dmas[k].priority), k);
      if (!fresh) {
        linkPred_[k] = it->second;
        it->second = k;
      }
    };
    for (size_t i = 0; i < events.size(); ++i) {
      const int32_t pc = static_cast<int32_t>(i);
      // `where` at pc: the invocation the device is inside when it runs event pc.
      where_[d][i] = current;
      position_[d][i] = position;
      std::visit(support::Overloaded{
                     [&](const KernelEnter &e) {
                       current = e.invocation;
                       ++position;
                     },
                     [&](const KernelExit &) {
                       current = -1;
                       ++position;
                     },
                     [&](const DeviceBarrier &e) {
                       if (e.invocation >= 0 && e.invocation < invocations &&
                           barrierPc_[d][e.invocation] < 0)
                         barrierPc_[d][e.invocation] = pc;
                     },
                     [&](const ScopeEnter &) {},
                     [&](const ScopeExit &) {},
                     [&](const Store &) {},
                     [&](const DmaStart &e) {
                       startPc_[e.dma] = pc;
                       onLink(e.dma);
                     },
                     [&](const SemWait &) {},
                     [&](const Signal &) {},
                     [&](const SemRead &) {},
                 },
                 events[i].kind);
    }
    where_[d][events.size()] = current;
    position_[d][events.size()] = position;
  }
  assignSlots();
  for (void (Properties::*collect)() :
       {&Properties::collectRaces, &Properties::collectEventChecks, &Properties::collectLands})
    if (!support::stopRequested(stop_))
      (this->*collect)();
  if (support::stopRequested(stop_))
    discard();
  finish();
  collectReaders();
}

// A stopped construction keeps no property: an empty list, with every per-device and
// per-DMA table at its size, is consistent for the step table built on it (which the
// caller does not use: the stop makes the run inconclusive).
void Properties::discard() {
  complete_ = false;
  properties_.clear();
  obligations_.clear();
  byKey_.clear();
  drafts_.clear();
  for (auto &perPc : atEvent_)
    for (auto &at : perPc)
      at.clear();
  for (auto &perPc : stuck_)
    std::fill(perPc.begin(), perPc.end(), -1);
  for (auto &at : atLand_)
    at.clear();
  for (auto &at : racesAgainst_)
    at.clear();
}

// What each event obligation reads (the observers of the steps that change it): the
// DMA sides and semaphore values its predicate's facts name (semantics/Obligations.h).
// The other facts read where a device is (lifetime, a function of its pc) or whether a
// state has an enabled step (Stuck), nothing that another actor's step changes.
void Properties::collectReaders() {
  const Program &p = program_;
  sideReaders_.assign(p.dmas.size() * 2, {});
  semReaders_.assign(static_cast<size_t>(p.deviceCount()) * p.semaphores.size(), {});
  for (const Obligation &o : obligations_)
    for (const Literal &l : violation(o).all)
      switch (l.fact.kind) {
      case Fact::Kind::SideOpen:
        sideReaders_[static_cast<size_t>(l.fact.dma) * 2 + (l.fact.dst ? 1 : 0)].push_back(
            {o.device, o.pc});
        break;
      case Fact::Kind::SemNonZero:
        semReaders_[static_cast<size_t>(l.fact.device) * p.semaphores.size() + l.fact.sem]
            .push_back({o.device, o.pc});
        break;
      case Fact::Kind::Within:
      case Fact::Kind::InScope:
      case Fact::Kind::Stuck:
        break;
      }
}

std::optional<PropertyIndex> Properties::find(const std::string &id) const {
  for (size_t p = 0; p < properties_.size(); ++p)
    if (properties_[p].id == id)
      return static_cast<PropertyIndex>(p);
  return std::nullopt;
}

PropertyIndex Properties::propertyFor(const std::string &key, FindingKind kind,
                                      const std::vector<std::pair<std::string, std::string>> &slots,
                                      int32_t templ, report::Span primary,
                                      std::vector<report::Span> secondary) {
  auto [it, fresh] = byKey_.emplace(key, static_cast<PropertyIndex>(properties_.size()));
  if (fresh) {
    Property p;
    p.kind = kind;
    p.primary = std::move(primary);
    p.secondary = std::move(secondary);
    properties_.push_back(std::move(p));
    Draft draft;
    draft.templ = templ;
    for (const auto &[exact, general] : slots) {
      draft.slots.push_back(exact);
      draft.general.push_back(general);
    }
    drafts_.push_back(std::move(draft));
    return it->second;
  }
  Draft &draft = drafts_[it->second];
  DKV_INVARIANT(draft.slots.size() == slots.size(), "a property's slots");
  for (size_t i = 0; i < slots.size(); ++i)
    if (draft.slots[i] != slots[i].first)
      draft.slots[i] = draft.general[i];
  return it->second;
}

ObligationIndex Properties::add(Obligation o, const std::string &key, FindingKind kind,
                                const std::vector<std::pair<std::string, std::string>> &slots,
                                int32_t templ, report::Span primary,
                                std::vector<report::Span> secondary) {
  o.property = propertyFor(key, kind, slots, templ, std::move(primary), std::move(secondary));
  obligations_.push_back(o);
  return static_cast<ObligationIndex>(obligations_.size()) - 1;
}

// Candidate races: every (Store or DmaStart event, DMA side) pair on one device and
// buffer with overlapping regions and at least one write, bucketed by (device,
// buffer) so that the pairing is linear in the accesses that share a buffer. One
// obligation per pair: the event's first access that conflicts with that side.
void Properties::collectRaces() {
  const Program &p = program_;
  // Keyed by memory instance (Program::memoryOf): on a TensorCore mesh the cores of a
  // device share its hbm / any buffers, so accesses of different processes meet there
  // (docs/model.md "TensorCores"); every other buffer is one per process.
  std::map<std::pair<DeviceId, BufferId>, std::vector<std::pair<DmaId, bool>>> sidesOn;
  for (const Dma &dma : p.dmas) {
    sidesOn[{p.memoryOf(dma.issuer, dma.src.buffer), dma.src.buffer}].push_back({dma.id, false});
    sidesOn[{p.memoryOf(dma.target, dma.dst.buffer), dma.dst.buffer}].push_back({dma.id, true});
  }
  // Whether the access at (d, pc) happens before DMA k starts in every run: k is
  // started later by d itself (program order), or after a device barrier that d
  // reaches only after the access.
  auto ordered = [&](DeviceId d, int32_t pc, DmaId k) {
    const Dma &dma = p.dmas[k];
    const int32_t start = startPc_[k];
    if (start < 0)
      return true; // never started: never open
    if (dma.issuer == d && start > pc)
      return true;
    for (size_t i = 0; i < barrierPc_[d].size(); ++i) {
      int32_t mine = barrierPc_[d][i], theirs = barrierPc_[dma.issuer][i];
      if (mine > pc && theirs >= 0 && theirs < start)
        return true;
    }
    return false;
  };
  for (DeviceId d = 0; d < p.deviceCount(); ++d) {
    // Under a symmetry, the representatives' races stand for their rotations'.
    if (symmetry_ && !symmetry_->representative[d])
      continue;
    const std::vector<Event> &events = p.processes[d].events;
    for (size_t i = 0; i < events.size(); ++i) {
      if (i % 256 == 0 && support::stopRequested(stop_))
        return;
      const int32_t pc = static_cast<int32_t>(i);
      const Event &e = events[i];
      std::vector<std::pair<DmaId, bool>> seen;
      // One access: `memory` is the process whose buffer it touches (its instance is
      // memoryOf that process).
      auto collect = [&](DeviceId memory, const Region &region, bool write, int32_t access,
                         DmaId self, const std::string &mine, const std::string &mineGeneral,
                         const std::string &label) {
        auto it = sidesOn.find({p.memoryOf(memory, region.buffer), region.buffer});
        if (it == sidesOn.end())
          return;
        for (const auto &[k, dst] : it->second) {
          if (k == self || (!write && !dst))
            continue;
          const Dma &other = p.dmas[k];
          if (!region.overlaps(dst ? other.dst : other.src))
            continue;
          if (std::find(seen.begin(), seen.end(), std::make_pair(k, dst)) != seen.end())
            continue;
          seen.push_back({k, dst});
          if (ordered(d, pc, k)) {
            ++prunedRaces_;
            continue;
          }
          const Region &theirs = dst ? other.dst : other.src;
          // A region a rotation moves reads differently on the rotated obligations, so
          // the message part naming it is general, as without the symmetry.
          const bool mineMoves = symmetry_ && !symmetry_->invariant(region);
          const bool theirsMove = symmetry_ && !symmetry_->invariant(theirs);
          std::string what = other.local ? "a local copy" : "a dma";
          std::string verb = dst ? "writing" : "reading";
          Obligation o;
          o.what = Obligation::What::Race;
          o.device = d;
          o.pc = pc;
          o.dma = k;
          o.dst = dst;
          o.access = access;
          std::string key = fmt::format("race|{}|{}|{}|{}|{}", locKey(e.loc), access, region.buffer,
                                        locKey(other.loc), dst);
          std::string theirsText = fmt::format("{} {} {} (started at line {})", what, verb,
                                               p.regionName(theirs), other.loc.line);
          std::string theirsGeneral = fmt::format("{} {} {} (started at line {})", what, verb,
                                                  generalRegion(p, theirs.buffer), other.loc.line);
          std::string otherLabel =
              dst ? fmt::format("{} started here; it writes its destination until its last "
                                "chunk lands",
                                other.local ? "the local copy" : "the dma")
                  : fmt::format("{} started here; it reads its source until its last chunk "
                                "is sent",
                                other.local ? "the local copy" : "the dma");
          ObligationIndex index = add(o, key, FindingKind::Race,
                                      {{mineMoves ? mineGeneral : mine, mineGeneral},
                                       {theirsMove ? theirsGeneral : theirsText, theirsGeneral}},
                                      kRace, {e.loc, label}, {{other.loc, otherLabel}});
          atEvent_[d][pc].push_back(index);
          racesAgainst_[k].push_back(index);
        }
      };
      std::visit(
          support::Overloaded{
              [&](const Store &st) {
                collect(d, st.dst, true, -1, -1, fmt::format("store to {}", p.regionName(st.dst)),
                        fmt::format("store to {}", generalRegion(p, st.dst.buffer)), "this store");
                for (size_t r = 0; r < st.reads.size(); ++r)
                  collect(d, st.reads[r], false, static_cast<int32_t>(r), -1,
                          fmt::format("load of {}", p.regionName(st.reads[r])),
                          fmt::format("load of {}", generalRegion(p, st.reads[r].buffer)),
                          "this load");
              },
              [&](const DmaStart &ds) {
                const Dma &dma = p.dmas[ds.dma];
                std::string what = dma.local ? "local copy" : "dma";
                collect(dma.issuer, dma.src, false, 0, dma.id,
                        fmt::format("{} reading {}", what, p.regionName(dma.src)),
                        fmt::format("{} reading {}", what, generalRegion(p, dma.src.buffer)),
                        fmt::format("the {} starts here", what));
                collect(dma.target, dma.dst, true, 1, dma.id,
                        fmt::format("{} writing {}", what, p.regionName(dma.dst)),
                        fmt::format("{} writing {}", what, generalRegion(p, dma.dst.buffer)),
                        fmt::format("the {} starts here", what));
              },
              [&](const KernelEnter &) {},
              [&](const KernelExit &) {},
              [&](const DeviceBarrier &) {},
              [&](const ScopeEnter &) {},
              [&](const ScopeExit &) {},
              [&](const SemWait &) {},
              [&](const Signal &) {},
              [&](const SemRead &) {},
          },
          e.kind);
    }
  }
}

// Exit, signal-lifetime and blocking checks of device events.
void Properties::collectEventChecks() {
  const Program &p = program_;
  std::vector<std::vector<DmaId>> issuedBy(p.deviceCount()), targeting(p.deviceCount());
  for (const Dma &dma : p.dmas) {
    issuedBy[dma.issuer].push_back(dma.id);
    targeting[dma.target].push_back(dma.id);
  }
  for (DeviceId d = 0; d < p.deviceCount(); ++d) {
    const std::vector<Event> &events = p.processes[d].events;
    for (size_t i = 0; i < events.size(); ++i) {
      if (i % 256 == 0 && support::stopRequested(stop_))
        return;
      const int32_t pc = static_cast<int32_t>(i);
      const Event &e = events[i];
      // KernelExit (scope == kKernelScope) or ScopeExit: every semaphore (of the scope)
      // zero, every DMA side on this device (with a buffer or semaphore of the scope)
      // closed. A DMA that this device starts later is never open here.
      auto exitChecks = [&](ScopeId scope) {
        const bool kernel = scope == kKernelScope;
        std::string leaves = kernel ? "a device leaves the kernel"
                                    : fmt::format("a device leaves {}", p.scopes[scope].name);
        std::string label =
            kernel ? "the kernel exits here" : fmt::format("{} ends here", p.scopes[scope].name);
        std::string scopeKey = kernel ? "kernel" : std::to_string(scope);
        // A sequence's kernel checks its own semaphores and the arrays it does not hand
        // on (Program::exitChecks, docs/model.md "Kernel sequences").
        const int32_t inv = where_[d][pc];
        for (SemId s = 0; s < static_cast<SemId>(p.semaphores.size()); ++s) {
          const Semaphore &sem = p.semaphores[s];
          if (kernel ? !p.exitChecks(s, inv) : sem.scope != scope)
            continue;
          Obligation o;
          o.what = Obligation::What::ExitSemaphore;
          o.device = d;
          o.pc = pc;
          o.sem = s;
          o.scope = scope;
          atEvent_[d][pc].push_back(
              add(o, fmt::format("exitsem|{}|{}|{}", locKey(e.loc), scopeKey, s),
                  FindingKind::ExitViolation, {{leaves, leaves}, {p.semName(s), p.semName(s)}},
                  kExitSemaphore, {e.loc, label}, {{sem.loc, "semaphore declared here"}}));
        }
        auto inScope = [&](BufferId b, std::optional<SemId> s) {
          return kernel || p.buffers[b].scope == scope || (s && p.semaphores[*s].scope == scope);
        };
        // A side of a DMA on this device: its source (issued here) or destination
        // (targeting here). A DMA this device starts later is never open at its exit.
        auto dmaSide = [&](DmaId k, bool dst) {
          const Dma &dma = p.dmas[k];
          const Region &region = dst ? dma.dst : dma.src;
          // A DMA of zero bytes has nothing in flight: never open (docs/model.md).
          if (dma.bytes == 0 || startPc_[k] < 0 || (dma.issuer == d && startPc_[k] > pc) ||
              !inScope(region.buffer, dst ? std::optional<SemId>(dma.recvSem) : dma.sendSem))
            return;
          // A side whose buffer and semaphore this kernel hands on to a later one may
          // stay open (the DMA is waited in that kernel).
          if (kernel) {
            Window w = sideWindow(p, dma, dst);
            if (w.first <= inv && inv < w.last)
              return;
          }
          Obligation o;
          o.what = dst ? Obligation::What::ExitRecv : Obligation::What::ExitSend;
          o.device = d;
          o.pc = pc;
          o.dma = k;
          o.scope = scope;
          std::string line = std::to_string(dma.loc.line);
          atEvent_[d][pc].push_back(add(o,
                                        fmt::format("exit{}|{}|{}|{}", dst ? "recv" : "send",
                                                    locKey(e.loc), scopeKey, locKey(dma.loc)),
                                        FindingKind::ExitViolation,
                                        {{leaves, leaves},
                                         {line, line},
                                         {p.regionName(region), generalRegion(p, region.buffer)}},
                                        dst ? kExitRecv : kExitSend, {e.loc, label},
                                        {{dma.loc, "the dma started here"}}));
        };
        for (DmaId k : issuedBy[d])
          dmaSide(k, false);
        for (DmaId k : targeting[d])
          dmaSide(k, true);
      };
      std::visit(
          support::Overloaded{
              [&](const KernelExit &) { exitChecks(kKernelScope); },
              [&](const ScopeExit &x) { exitChecks(x.scope); },
              [&](const Signal &sig) {
                if (p.isBarrier(sig.sem))
                  return; // a barrier semaphore is valid everywhere at all times
                Obligation o;
                o.device = d;
                o.pc = pc;
                o.sem = sig.sem;
                o.target = sig.target;
                const Window w = p.semWindow(sig.sem, where_[d][pc]);
                o.invocation = w.first;
                o.invocationLast = w.last;
                const std::string name = p.semaphores[sig.sem].name;
                std::pair<std::string, std::string> semSlot{p.semName(sig.sem),
                                                            generalSem(p, sig.sem)};
                o.what = Obligation::What::SignalInvocation;
                const bool wide = w.first != w.last; // an array a sequence hands on
                atEvent_[d][pc].push_back(
                    add(o, fmt::format("{}|{}|{}", wide ? "sigwin" : "siginv", locKey(e.loc), name),
                        FindingKind::LifetimeViolation, {semSlot},
                        wide ? kSignalWindow : kSignalInvocation,
                        {e.loc, "the signal is sent here"}, {}));
                o.what = Obligation::What::SlotSignal;
                o.invocation = o.invocationLast = where_[d][pc];
                slotChecks(o, sig.sem, locKey(e.loc), {e.loc, "the signal is sent here"},
                           atEvent_[d][pc]);
              },
              [&](const SemWait &w) {
                if (w.amount <= 0)
                  return; // never blocks
                Obligation o;
                o.what = Obligation::What::Stuck;
                o.device = d;
                o.pc = pc;
                o.sem = w.sem;
                std::string amount = std::to_string(w.amount);
                std::string origin = waitOriginText(w.origin);
                stuck_[d][pc] = add(
                    o,
                    fmt::format("stuck|{}|{}|{}", locKey(e.loc), origin, p.semaphores[w.sem].name),
                    FindingKind::Deadlock,
                    {{p.semName(w.sem), generalSem(p, w.sem)}, {amount, "..."}, {origin, origin}},
                    kStuckWait, {e.loc, "the device blocks here"}, {});
              },
              [&](const DeviceBarrier &b) {
                Obligation o;
                o.what = Obligation::What::Stuck;
                o.device = d;
                o.pc = pc;
                o.invocation = b.invocation;
                std::string inv = std::to_string(b.invocation);
                stuck_[d][pc] =
                    add(o, fmt::format("stuckbarrier|{}", locKey(e.loc)), FindingKind::Deadlock,
                        {{inv, "..."}}, kStuckBarrier, {e.loc, "the device blocks here"}, {});
              },
              // Each semaphore of the scope takes its slot: units left there for a
              // semaphore of a sibling block would be counted as its own.
              [&](const ScopeEnter &x) {
                for (SemId mine = 0; mine < static_cast<SemId>(p.semaphores.size()); ++mine) {
                  if (p.semaphores[mine].scope != x.scope)
                    continue;
                  for (SemId theirs : sharing_[mine]) {
                    Obligation o;
                    o.what = Obligation::What::SlotEnter;
                    o.device = d;
                    o.pc = pc;
                    o.sem = theirs;
                    o.other = mine;
                    o.scope = x.scope;
                    const std::string &scopeName = p.scopes[x.scope].name;
                    atEvent_[d][pc].push_back(
                        add(o, fmt::format("slotenter|{}|{}|{}", locKey(e.loc), theirs, mine),
                            FindingKind::LifetimeViolation,
                            {{p.semName(theirs), p.semName(theirs)},
                             {p.semName(mine), p.semName(mine)},
                             {scopeName, scopeName}},
                            kSlotEnter, {e.loc, fmt::format("{} starts here", scopeName)},
                            {{p.semaphores[theirs].loc,
                              fmt::format("{} is declared here, in {}", p.semName(theirs),
                                          p.scopes[p.semaphores[theirs].scope].name)}}));
                  }
                }
              },
              [&](const KernelEnter &) {},
              [&](const Store &) {},
              [&](const DmaStart &) {},
              [&](const SemRead &) {},
          },
          e.kind);
    }
  }
}

void Properties::slotChecks(Obligation o, SemId sem, const std::string &at, report::Span primary,
                            std::vector<ObligationIndex> &into) {
  const Program &p = program_;
  const std::string name = p.semaphores[sem].name;
  std::pair<std::string, std::string> semText{p.semName(sem), generalSem(p, sem)};
  for (SemId other : sharing_[sem]) {
    o.sem = sem;
    o.other = other;
    o.scope = p.semaphores[other].scope;
    const std::string &scopeName = p.scopes[o.scope].name;
    const bool land = o.what == Obligation::What::SlotLand;
    into.push_back(
        add(o, fmt::format("{}|{}|{}|{}", land ? "slotland" : "slotsig", at, name, other),
            FindingKind::LifetimeViolation,
            {semText, {p.semName(other), p.semName(other)}, {scopeName, scopeName}},
            land ? kSlotLand : kSlotSignal, primary,
            {{p.scopes[o.scope].loc,
              fmt::format("{} allocates {} in the same slot", scopeName, p.semName(other))}}));
  }
}

// Scoped semaphores are slots (docs/model.md): Mosaic lowers run_scoped to a region
// whose semaphores are stack-allocated (tpu.sem_alloc), and every device runs the same
// program, so a scoped semaphore has the same slot on every device. Kernel scratch
// semaphores come first; a block's semaphores start where its parent's end, so sibling
// blocks (one after the other in the same parent) reuse the same slots.
void Properties::assignSlots() {
  const Program &p = program_;
  const size_t nsem = p.semaphores.size();
  slot_.assign(nsem, -1);
  sharing_.assign(nsem, {});
  std::vector<int32_t> count(p.scopes.size(), 0); // semaphores per scope
  int32_t kernelCount = 0;
  for (SemId s = 0; s < static_cast<SemId>(nsem); ++s) {
    if (p.isBarrier(s))
      continue;
    ScopeId scope = p.semaphores[s].scope;
    if (scope == kKernelScope)
      slot_[s] = kernelCount++;
    else
      ++count[scope];
  }
  // A scope's first slot: after its parent's (scopes are created before their
  // children, so a parent's id is smaller).
  std::vector<int32_t> base(p.scopes.size(), 0);
  for (size_t b = 0; b < p.scopes.size(); ++b) {
    ScopeId parent = p.scopes[b].parent;
    base[b] = parent == kKernelScope ? kernelCount : base[parent] + count[parent];
  }
  std::vector<int32_t> next = base;
  for (SemId s = 0; s < static_cast<SemId>(nsem); ++s) {
    ScopeId scope = p.semaphores[s].scope;
    if (scope != kKernelScope && !p.isBarrier(s))
      slot_[s] = next[scope]++;
  }
  // The scoped semaphores of each slot, in id order; each shares its slot with the
  // others. Linear in the semaphores plus the pairs that share a slot (each pair is an
  // obligation later, so the pairs are the output, not overhead).
  std::vector<std::vector<SemId>> onSlot;
  for (SemId s = 0; s < static_cast<SemId>(nsem); ++s)
    if (slot_[s] >= 0 && p.semaphores[s].scope != kKernelScope) {
      if (static_cast<size_t>(slot_[s]) >= onSlot.size())
        onSlot.resize(static_cast<size_t>(slot_[s]) + 1);
      onSlot[slot_[s]].push_back(s);
    }
  for (const std::vector<SemId> &group : onSlot) {
    if (support::stopRequested(stop_))
      return;
    for (SemId a : group)
      for (SemId b : group)
        if (a != b)
          sharing_[a].push_back(b);
  }
}

// Lifetime checks of land chunks: the target must be inside the DMA's invocation and
// inside the scope of a scoped destination buffer or receive semaphore.
void Properties::collectLands() {
  const Program &p = program_;
  for (const Dma &dma : p.dmas) {
    // A DMA of zero bytes lands nothing (docs/model.md "Zero-size slices and DMAs"),
    // unless its receive semaphore is regular: that one still gets its 1 on completion.
    if (startPc_[dma.id] < 0 || (dma.bytes == 0 && !p.countsCompletion(dma.recvSem)))
      continue;
    std::pair<std::string, std::string> region{p.regionName(dma.dst),
                                               generalRegion(p, dma.dst.buffer)};
    Obligation o;
    o.what = Obligation::What::LandInvocation;
    o.device = dma.target;
    o.dma = dma.id;
    const Window w = sideWindow(p, dma, true);
    o.invocation = w.first;
    o.invocationLast = w.last;
    const char *label = dma.local ? "the local copy started here" : "the dma started here";
    const bool wide = w.first != w.last; // arrays a sequence hands on
    atLand_[dma.id].push_back(
        add(o, fmt::format("{}|{}", wide ? "landwin" : "landinv", locKey(dma.loc)),
            FindingKind::LifetimeViolation, {region}, wide ? kLandWindow : kLandInvocation,
            {dma.loc, label}, {}));
    // A scoped destination buffer must be allocated on the target when bytes land.
    o.invocation = o.invocationLast = dma.invocation;
    const ScopeId dstScope = p.buffers[dma.dst.buffer].scope;
    if (dstScope != kKernelScope) {
      o.what = Obligation::What::LandScope;
      o.scope = dstScope;
      const std::string &name = p.scopes[dstScope].name;
      const std::string &allocated = p.buffers[dma.dst.buffer].name;
      atLand_[dma.id].push_back(
          add(o, fmt::format("landscope|{}|{}|{}", locKey(dma.loc), dstScope, allocated),
              FindingKind::LifetimeViolation, {region, {name, name}, {allocated, allocated}},
              kLandScope, {dma.loc, label},
              {{p.scopes[dstScope].loc, fmt::format("{} starts here", name)}}));
    }
    // A scoped receive semaphore is a slot: its units count there whenever they land,
    // unless a semaphore of another block is using the slot.
    o.what = Obligation::What::SlotLand;
    slotChecks(o, dma.recvSem, locKey(dma.loc), {dma.loc, label}, atLand_[dma.id]);
  }
}

// Ids in a readable order: by kind, then source location; numbered per kind.
void Properties::finish() {
  std::vector<PropertyIndex> order(properties_.size());
  std::iota(order.begin(), order.end(), 0);
  std::vector<std::string> keys(properties_.size());
  for (const auto &[key, index] : byKey_)
    keys[index] = key;
  std::sort(order.begin(), order.end(), [&](PropertyIndex a, PropertyIndex b) {
    const Property &x = properties_[a], &y = properties_[b];
    if (x.kind != y.kind)
      return x.kind < y.kind;
    if (x.primary.loc != y.primary.loc)
      return x.primary.loc < y.primary.loc;
    return keys[a] < keys[b];
  });
  std::vector<PropertyIndex> newIndex(properties_.size());
  std::vector<Property> sorted;
  std::map<FindingKind, int32_t> perKind;
  for (PropertyIndex old : order) {
    newIndex[old] = static_cast<PropertyIndex>(sorted.size());
    Property prop = std::move(properties_[old]);
    prop.id = fmt::format("{}.{}", kindPrefix(prop.kind), perKind[prop.kind]++);
    prop.message = compose(drafts_[old].templ, drafts_[old].slots);
    sorted.push_back(std::move(prop));
  }
  properties_ = std::move(sorted);
  for (size_t o = 0; o < obligations_.size(); ++o) {
    Obligation &ob = obligations_[o];
    ob.property = newIndex[ob.property];
    properties_[ob.property].obligations.push_back(static_cast<ObligationIndex>(o));
  }
  byKey_.clear();
  drafts_.clear();
}

std::string Properties::obligationText(ObligationIndex index) const {
  const Program &p = program_;
  const Obligation &o = obligations_[index];
  auto leaves = [&]() {
    if (o.scope != kKernelScope)
      return fmt::format("{} leaves {}", p.processName(o.device), p.scopes[o.scope].name);
    const int32_t inv = std::max(0, where_[o.device][o.pc]);
    if (inv < static_cast<int32_t>(p.calls.size()) && p.sequenceRuns() > 1)
      return fmt::format("{} leaves kernel {} (call {} of the sequence, run {})",
                         p.processName(o.device), p.kernels[p.calls[inv].kernel],
                         inv % p.sequenceLength, inv / p.sequenceLength);
    if (inv < static_cast<int32_t>(p.calls.size()))
      return fmt::format("{} leaves kernel {} (call {} of the sequence)", p.processName(o.device),
                         p.kernels[p.calls[inv].kernel], inv);
    return fmt::format("{} leaves invocation {} of the kernel", p.processName(o.device), inv);
  };
  auto window = [&]() {
    return o.invocationLast == o.invocation
               ? fmt::format("which is not in invocation {}", o.invocation)
               : fmt::format("which is not between its entry into invocation {} and its exit "
                             "from invocation {}",
                             o.invocation, o.invocationLast);
  };
  switch (o.what) {
  case Obligation::What::Race: {
    const Event &e = p.processes[o.device].events[o.pc];
    const Dma &other = p.dmas[o.dma];
    std::string theirs = fmt::format("{} {} {}", dmaName(p, o.dma), o.dst ? "writing" : "reading",
                                     p.regionName(o.dst ? other.dst : other.src));
    if (const auto *st = std::get_if<Store>(&e.kind)) {
      std::string mine = o.access < 0
                             ? fmt::format("store to {}", p.regionName(st->dst))
                             : fmt::format("load of {}", p.regionName(st->reads[o.access]));
      const BufferId buffer = o.access < 0 ? st->dst.buffer : st->reads[o.access].buffer;
      return fmt::format("{} on {} races with {}", mine, p.memoryName(o.device, buffer), theirs);
    }
    // Race obligations are made for Store and DmaStart events only.
    const auto *ds = std::get_if<DmaStart>(&e.kind);
    DKV_INVARIANT(ds, "a race obligation is at a store or a dma start");
    const Dma &dma = p.dmas[ds->dma];
    const bool src = o.access == 0;
    const Region &region = src ? dma.src : dma.dst;
    return fmt::format("{} {} {} on {} races with {}", dmaName(p, dma.id),
                       src ? "reading" : "writing", p.regionName(region),
                       p.memoryName(src ? dma.issuer : dma.target, region.buffer), theirs);
  }
  case Obligation::What::ExitSemaphore:
    return fmt::format("{} with {} non-zero", leaves(), p.semName(o.sem));
  case Obligation::What::ExitSend:
    return fmt::format("{} while {} is still reading {}", leaves(), dmaName(p, o.dma),
                       p.regionName(p.dmas[o.dma].src));
  case Obligation::What::ExitRecv:
    return fmt::format("{} while {} is still writing {}", leaves(), dmaName(p, o.dma),
                       p.regionName(p.dmas[o.dma].dst));
  case Obligation::What::LandInvocation:
    return fmt::format("{} lands in {} on {}, {}", dmaName(p, o.dma),
                       p.regionName(p.dmas[o.dma].dst), p.processName(o.device), window());
  case Obligation::What::LandScope:
    return fmt::format("{} lands in {} on {}, which is outside {}", dmaName(p, o.dma),
                       p.regionName(p.dmas[o.dma].dst), p.processName(o.device),
                       p.scopes[o.scope].name);
  case Obligation::What::SignalInvocation:
    return fmt::format("signal of {} from {} reaches {}, {}", p.semName(o.sem),
                       p.processName(o.device), p.processName(o.target), window());
  case Obligation::What::SlotSignal:
    return fmt::format("signal of {} from {} reaches {} while {} of {} uses its slot",
                       p.semName(o.sem), p.processName(o.device), p.processName(o.target),
                       p.semName(o.other), p.scopes[o.scope].name);
  case Obligation::What::SlotLand:
    return fmt::format("{} adds to {} on {} while {} of {} uses its slot", dmaName(p, o.dma),
                       p.semName(o.sem), p.processName(o.device), p.semName(o.other),
                       p.scopes[o.scope].name);
  case Obligation::What::SlotEnter:
    return fmt::format("{} enters {}, whose {} takes the slot of {}", p.processName(o.device),
                       p.scopes[o.scope].name, p.semName(o.other), p.semName(o.sem));
  case Obligation::What::Stuck:
    return fmt::format("{} blocks at {}", p.processName(o.device),
                       describeEvent(p, p.processes[o.device].events[o.pc]));
  }
  DKV_UNREACHABLE("obligation kind");
}

} // namespace dkv::semantics
