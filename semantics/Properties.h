// The properties of one kernel instance: every check of docs/model.md section 4,
// listed once, with a stable id, its source spans and its one message text. Every
// engine reports "property P is violated, witness schedule S" against this list.
#pragma once

#include "model/Model.h"
#include "report/Finding.h"
#include "semantics/Symmetry.h"
#include "support/Stop.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace dkv::semantics {

using PropertyIndex = int32_t;
using ObligationIndex = int32_t;

/// One check at one place of the unrolled program: what an engine evaluates at one
/// step (or, for Stuck, in a state with no enabled step). Several obligations (the
/// same source line on several devices, grid points or loop iterations) belong to
/// one property. docs/model.md section 4 defines when each is violated.
struct Obligation {
  enum class What {
    Race,           ///< the access of (device, pc) while DMA `dma`'s side `dst` is open
    ExitSemaphore,  ///< at (device, pc) KernelExit / ScopeExit: `sem` on device is non-zero
    ExitSend,       ///< at (device, pc): DMA `dma` issued by device still has its send side open
    ExitRecv,       ///< at (device, pc): DMA `dma` targeting device still has its receive side open
    LandInvocation, ///< a land chunk of `dma`: its target is not in `invocation`
    /// a land chunk of `dma`: target in `invocation` but outside `scope`, which
    /// allocates the destination buffer
    LandScope,
    SignalInvocation, ///< Signal at (device, pc): `target` is not in `invocation`
    /// Scoped semaphores are slots (docs/model.md): units for `sem` reach `target`
    /// while `other`, a live semaphore of `scope` on the same slot, is using it. At a
    /// Signal (device, pc) or a land chunk of `dma` into its receive semaphore.
    SlotSignal,
    SlotLand,
    /// ScopeEnter (device, pc) of `scope`, whose semaphore `other` takes a slot that
    /// still holds units for `sem`.
    SlotEnter,
    Stuck, ///< a state with no enabled step: device is blocked at its event pc
  };
  What what = What::Race;
  PropertyIndex property = 0;
  model::DeviceId device = 0; ///< the device whose event this is (Land*: the DMA's target)
  int32_t pc = -1;            ///< the event's index on `device` (-1 for Land*)
  model::DmaId dma = -1;      ///< Race: the other DMA; Exit{Send,Recv}, Land*: the DMA
  bool dst = false;           ///< Race: the other DMA's destination side (else its source)
  /// Race: which access of the event. Store: -1 its destination, i >= 0 reads[i];
  /// DmaStart: 0 the started DMA's source, 1 its destination.
  int32_t access = -1;
  model::SemId sem = -1;                      ///< ExitSemaphore, Signal*, Slot*
  model::SemId other = -1;                    ///< Slot*: the semaphore holding the slot
  model::ScopeId scope = model::kKernelScope; ///< Exit*: the scope left; *Scope: the scope
  model::DeviceId target = -1;                ///< Signal*: the signalled device
  int32_t invocation = 0;                     ///< Land*, Signal*: the invocation required
  /// LandInvocation, SignalInvocation: the target must be within invocations
  /// [invocation, invocationLast]: entered `invocation` and not left `invocationLast`
  /// (== invocation but for arrays a sequence hands from kernel to kernel,
  /// docs/model.md "Kernel sequences").
  int32_t invocationLast = 0;
};

/// A check of the kernel at a source location, CBMC-style: its kind, a stable id
/// ("race.0", "deadlock.2", ...), the one message every engine prints for it and its
/// spans. Device numbers, concrete regions and values belong to the witness (see
/// describeWitness), not to the property.
struct Property {
  std::string id;
  report::FindingKind kind = report::FindingKind::Race;
  std::string message;
  report::Span primary;
  std::vector<report::Span> secondary;
  std::vector<ObligationIndex> obligations; ///< at least one
};

/// Whether DMA k travels over a link under `--dma-order link`: a remote DMA (it has a
/// send semaphore) to another device that moves at least one byte. Local copies, remote
/// copies to the issuer itself and empty DMAs are on no link and stay unordered.
bool onALink(const model::Dma &dma);

/// The property list of one instance. Deterministic: the same program gives the same
/// ids, messages and order. The program must pass model::verifyProgram and outlive
/// this object.
class Properties {
public:
  /// With `symmetry` (rotations that map the program onto itself, findSymmetry), the
  /// race obligations are made for the representative devices only (one per orbit; the
  /// others are their rotations, violated exactly when these are), and a message part
  /// that names a region takes its general form when a rotation moves the region, as
  /// it would among the rotated obligations: the same properties, ids and messages as
  /// without it (docs/closure.md "Symmetry"). `symmetry` must outlive this object.
  /// `stop` (may be null) is polled while the list is built: once it is requested the
  /// construction ends early with no property at all (complete() is false), cheaply,
  /// and the list must not be used for a verdict.
  explicit Properties(const model::Program &program, const Symmetry *symmetry = nullptr,
                      const support::StopToken *stop = nullptr);
  /// False when a stop request cut the construction short (the list is then empty).
  bool complete() const { return complete_; }

  const model::Program &program() const { return program_; }
  /// The symmetry the race obligations were reduced by, or null.
  const Symmetry *symmetry() const { return symmetry_; }
  /// Whether obligation o is checked on a representative device of the symmetry (always
  /// without one). The others are rotations of represented obligations of the same
  /// property, violated exactly when those are, so an engine may decide a property from
  /// its represented obligations alone.
  bool represented(ObligationIndex o) const {
    return !symmetry_ || symmetry_->representative[obligations_[o].device];
  }
  const std::vector<Property> &properties() const { return properties_; }
  const std::vector<Obligation> &obligations() const { return obligations_; }
  const Property &property(PropertyIndex p) const { return properties_[p]; }
  const Obligation &obligation(ObligationIndex o) const { return obligations_[o]; }
  /// The property with this id, or nullopt.
  std::optional<PropertyIndex> find(const std::string &id) const;

  /// Obligations checked when device d runs its event pc (races, exit, signal
  /// lifetime), in a fixed order.
  const std::vector<ObligationIndex> &atEvent(model::DeviceId d, int32_t pc) const {
    return atEvent_[d][pc];
  }
  /// The Stuck obligation of event pc of device d (a SemWait with a positive amount or
  /// a DeviceBarrier), or -1 for an event that never blocks.
  ObligationIndex stuckAt(model::DeviceId d, int32_t pc) const { return stuck_[d][pc]; }
  /// Obligations checked at every land chunk of DMA k.
  const std::vector<ObligationIndex> &atLand(model::DmaId k) const { return atLand_[k]; }
  /// Race obligations against a side of DMA k, at Store and DmaStart events (the
  /// happens-before check at k's start, the reduction's check of k's last chunks).
  const std::vector<ObligationIndex> &racesAgainst(model::DmaId k) const {
    return racesAgainst_[k];
  }

  /// An event of the unrolled program: (device, pc).
  using EventRef = std::pair<model::DeviceId, int32_t>;
  /// The events whose obligations read whether DMA k's source (`dst` false) or
  /// destination side is open: Race at Stores and DmaStarts, ExitSend / ExitRecv at
  /// exits (the observers of the step that opens or closes it; docs/executor.md,
  /// "Remote DMAs and signals").
  const std::vector<EventRef> &sideReaders(model::DmaId k, bool dst) const {
    return sideReaders_[static_cast<size_t>(k) * 2 + (dst ? 1 : 0)];
  }
  /// The events whose obligations read the value of semaphore s on device d
  /// (ExitSemaphore, SlotEnter). Other obligations read DMA sides and where / scopes.
  const std::vector<EventRef> &semReaders(model::DeviceId d, model::SemId s) const {
    return semReaders_[static_cast<size_t>(d) * program_.semaphores.size() + s];
  }

  /// Candidate race pairs dropped because program order and device barriers order
  /// the access before the DMA's start (they can never be violated).
  int64_t prunedRaces() const { return prunedRaces_; }
  /// The invocation device d is inside when it runs event pc (pc == its event count:
  /// after its last event), or -1 when outside.
  int32_t invocationAt(model::DeviceId d, int32_t pc) const { return where_[d][pc]; }
  /// The number of KernelEnter and KernelExit events of device d before event pc: 2i + 1
  /// inside invocation i, 2i + 2 after leaving it, 0 before the first.
  int32_t positionAt(model::DeviceId d, int32_t pc) const { return position_[d][pc]; }
  /// Whether device d at event pc is within invocations [first, last]: it has entered
  /// `first` and not left `last` (inside invocation `first` when first == last).
  bool withinInvocations(model::DeviceId d, int32_t pc, int32_t first, int32_t last) const {
    const int32_t pos = position_[d][pc];
    return pos >= 2 * first + 1 && pos <= 2 * last + 1;
  }
  /// The pc of DMA k's start on its issuer, or -1 if it never starts.
  int32_t startPc(model::DmaId k) const { return startPc_[k]; }
  /// The semaphore slot of s on every device (docs/model.md, "Scoped semaphores are
  /// slots"), and the other semaphores that share it (scoped semaphores of sibling
  /// run_scoped blocks); none for the barrier semaphore.
  int32_t slotOf(model::SemId s) const { return slot_[s]; }
  const std::vector<model::SemId> &sharingSlot(model::SemId s) const { return sharing_[s]; }
  /// [device][invocation]: the pc of the device's DeviceBarrier, or -1.
  const std::vector<std::vector<int32_t>> &barrierPcs() const { return barrierPc_; }
  /// With `--dma-order link` (docs/model.md, "DMA order"): the DMA on k's link that its
  /// issuer started last before k, whose last land chunk must run before k's first
  /// one; -1 when there is none, when k is not on a link (onALink) or with
  /// `--dma-order any`. Following it from k gives every earlier DMA on the link.
  model::DmaId linkPredecessor(model::DmaId k) const { return linkPred_[k]; }
  /// An obligation's own text, with its devices and concrete regions, e.g. "store to
  /// out[0:4] on device 1 races with dma 2 (device 0 -> 1) writing out[0:4]".
  std::string obligationText(ObligationIndex o) const;

private:
  void collectRaces();
  void collectEventChecks();
  void collectLands();
  void assignSlots();
  /// Slot obligations for units reaching `sem` on `target` (Signal or land chunk).
  void slotChecks(Obligation o, model::SemId sem, const std::string &at, report::Span primary,
                  std::vector<ObligationIndex> &into);
  PropertyIndex propertyFor(const std::string &key, report::FindingKind kind,
                            const std::vector<std::pair<std::string, std::string>> &slots,
                            int32_t templ, report::Span primary,
                            std::vector<report::Span> secondary);
  ObligationIndex add(Obligation o, const std::string &key, report::FindingKind kind,
                      const std::vector<std::pair<std::string, std::string>> &slots, int32_t templ,
                      report::Span primary, std::vector<report::Span> secondary);
  void finish();
  void collectReaders();
  void discard();

  const model::Program &program_;
  const Symmetry *symmetry_ = nullptr;
  const support::StopToken *stop_ = nullptr;
  bool complete_ = true;
  std::vector<Property> properties_;
  std::vector<Obligation> obligations_;
  std::vector<std::vector<std::vector<ObligationIndex>>> atEvent_; ///< [device][pc]
  std::vector<std::vector<ObligationIndex>> stuck_;                ///< [device][pc]
  std::vector<std::vector<ObligationIndex>> atLand_;               ///< per DMA
  std::vector<std::vector<ObligationIndex>> racesAgainst_;         ///< per DMA
  std::vector<std::vector<EventRef>> sideReaders_;                 ///< [dma * 2 + side]
  std::vector<std::vector<EventRef>> semReaders_;                  ///< [device * sems + sem]
  int64_t prunedRaces_ = 0;

  // Construction only: the message of a property is a template filled with slots;
  // a slot whose text differs between the property's obligations (the same line on
  // two devices copying different rows) takes its general form ("out[...]").
  struct Draft {
    int32_t templ = 0;
    std::vector<std::string> slots;
    std::vector<std::string> general;
  };
  std::map<std::string, PropertyIndex> byKey_;
  std::vector<Draft> drafts_;
  std::vector<int32_t> startPc_;                   ///< per DMA, -1 if never started
  std::vector<model::DmaId> linkPred_;             ///< per DMA, -1 if none
  std::vector<std::vector<int32_t>> barrierPc_;    ///< [device][invocation], -1 if none
  std::vector<std::vector<int32_t>> where_;        ///< [device][pc]: invocation or -1
  std::vector<std::vector<int32_t>> position_;     ///< [device][pc]: enters + exits before
  std::vector<int32_t> slot_;                      ///< per semaphore
  std::vector<std::vector<model::SemId>> sharing_; ///< per semaphore
};

} // namespace dkv::semantics
