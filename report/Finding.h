// Findings (races, deadlocks, ...), their witness traces, and engine verdicts:
// the one representation every engine reports in and every renderer reads.
#pragma once

#include "support/Source.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace dkv::report {

using support::SourceLoc;

enum class FindingKind {
  Race,              ///< two conflicting accesses not ordered by happens-before
  Deadlock,          ///< a device can never finish
  ExitViolation,     ///< non-zero semaphore or DMA in flight at kernel exit
  LifetimeViolation, ///< DMA or signal reaching a device outside the kernel/scope
};
/// Stable names: "race", "deadlock", "exit-violation", "lifetime-violation" (also
/// the `// expect:` verdicts).
const char *findingKindName(FindingKind kind);

/// A labelled place in the kernel source.
struct Span {
  SourceLoc loc;
  std::string label;
};

/// Who took a step: a device running its program, or a DMA engine moving bytes.
struct Actor {
  enum class Kind { Device, Dma };
  Kind kind = Kind::Device;
  int32_t id = 0;     ///< DeviceId or DmaId
  int32_t device = 0; ///< the device whose column the step is drawn in
};

/// One step of a witness schedule.
struct TraceStep {
  Actor actor;
  std::string text;    ///< e.g. "signal ready[0] +1 -> device 1", "dma 3 lands 4096 B"
  SourceLoc loc;       ///< kernel source of the event (or of the DMA's start)
  std::string context; ///< e.g. "inv 0, grid (1)"
  /// Semaphore values that changed in this step: "ready[0]@1" -> 2.
  std::map<std::string, int64_t> semValues;

  // What the step is, for pictures (report/Svg.h); the text above says the same.
  enum class What { Other, DmaStart, Send, Land, Wait, Signal, Store, Barrier, Enter, Exit };
  What what = What::Other;
  int32_t dma = -1;   ///< DmaStart, Send, Land: the DMA
  int32_t peer = -1;  ///< DmaStart, Send, Land: the DMA's target device; Signal: the target
  int64_t bytes = 0;  ///< DmaStart, Send, Land: the DMA's byte count (all its chunks)
  int32_t chunk = 0;  ///< Send, Land: the chunk moved (0-based)
  int32_t chunks = 1; ///< DmaStart, Send, Land: the DMA's chunk count
  std::string region; ///< DmaStart, Send, Land: "src -> dst" of the DMA
  /// Wait, Barrier (a device step): how many steps of the trace had been taken when
  /// the device was first found blocked at this event (it could not take it then);
  /// -1 when it never blocked. A blocked event after the last step (Trace::blocked)
  /// has it too.
  int32_t blockedSince = -1;
};

/// A step the finding is about, highlighted in pictures.
struct TraceMark {
  int32_t step = 0;  ///< index into Trace::steps
  std::string label; ///< e.g. "racing access", "racing dma (still writing)"
};

struct Trace {
  std::vector<TraceStep> steps;
  int32_t deviceCount = 0; ///< processes: devices, or (device, core) pairs with `cores`
  /// The TensorCores per device when the kernel runs over a TensorCore mesh (process p
  /// is core p % cores of device p / cores, docs/model.md "TensorCores"); 0 without one.
  int32_t cores = 0;
  /// The steps the finding is about: a race's access and the start of the DMA it
  /// races with, the violating step of an exit or lifetime finding (and the start of
  /// the DMA it names).
  std::vector<TraceMark> marks;
  /// Every device that is blocked after the last step: its next event (actor, text
  /// saying what it waits for, loc, blockedSince). For a deadlock: the stuck waits.
  std::vector<TraceStep> blocked;
  /// DMAs started and not complete after the last step (one side still open).
  std::vector<int32_t> inFlight;
};

/// The name of process `process` in reports: "device 3" without a TensorCore axis
/// (`cores` 0), "device 1 core 1" with `cores` cores per device (docs/model.md
/// "TensorCores": process = device * cores + core).
std::string processName(int32_t process, int32_t cores);

/// One scheduling choice, engine-neutral: a device runs its next event, or a DMA
/// moves its next send or land chunk (docs/model.md section 3). A list of these is
/// a schedule any engine's counterexample can be replayed from in the executor.
struct ScheduleStep {
  enum class Kind { Device, Send, Land };
  Kind kind = Kind::Device;
  int32_t id = 0; ///< DeviceId (Device) or DmaId (Send, Land)
  friend bool operator==(const ScheduleStep &, const ScheduleStep &) = default;
};
using Schedule = std::vector<ScheduleStep>;
/// A step as the schedule file writes it: "device 1", "send 3", "land 3".
std::string scheduleStepText(const ScheduleStep &step);

/// The shape of a finding, engine-neutral: which check it violates and the facts
/// about the accesses, semaphores and devices involved that tell one bug pattern from
/// another. Computed once from the violated obligation and the witness state
/// (semantics::findingShape) or by the static pre-check; `--explain` classifies it
/// (report/Explain.h), never the file or kernel name.
struct FindingShape {
  enum class Check {
    None,          ///< not computed (a finding built by hand)
    Race,          ///< a Store or DmaStart while a conflicting DMA side is open
    ExitSemaphore, ///< a semaphore non-zero at a kernel or scope exit
    ExitDma,       ///< a DMA still in flight (send or receive side) at an exit
    Outside,       ///< a DMA land chunk or signal reaching a device outside the kernel
                   ///< invocation (or the destination buffer's scope)
    Slot,          ///< units for one scoped semaphore reach a slot another one uses
    Stuck,         ///< a device blocked for ever at a wait or barrier
    StaticWait,    ///< pre-check: a wait that the increments can never cover
    StaticExit,    ///< pre-check: more increments than waits, or a signal to a DMA semaphore
  };
  /// The access of the event that races (Check::Race).
  enum class Access { None, StoreWrite, StoreRead, DmaSource, DmaDestination };
  Check check = Check::None;
  Access access = Access::None;
  /// Race: the open side of the other DMA is its destination (it is landing), else
  /// its source (it is still being read).
  bool otherLanding = false;
  /// Race: the other DMA crosses devices; the accessing DmaStart's DMA does.
  bool otherRemote = false;
  bool accessRemote = false;
  /// Race: another DMA of the same invocation, already started, also writes elements
  /// the access touches on that device (the buffer is reused round after round).
  bool regionReused = false;
  /// Race: the device whose memory races already ran a wait (this invocation) on the
  /// semaphore the other DMA counts its open side on, and another DMA counts on that
  /// semaphore of that device too.
  bool waitedOnSharedSemaphore = false;
  /// Exit*, Stuck, StaticWait: the semaphore is a DMA semaphore.
  bool dmaSemaphore = false;
  /// Outside: the device reached has not entered the invocation yet (else it has left
  /// it, or the scope).
  bool peerNotEntered = false;
  /// Outside: a signal (else a DMA land chunk).
  bool signal = false;
  /// Stuck: the increments that can ever reach the semaphore on that device do not
  /// cover the device's waits on it up to this one. A DeviceBarrier when `barrier`.
  bool neverEnough = false;
  bool barrier = false;
  /// The kernel signals or waits on its barrier semaphore (collective_id).
  bool usesBarrierSemaphore = false;
  int32_t invocations = 1; ///< --invocations of the instance
};

/// What a finding is about, from its property alone: the same for every engine and every
/// witness, and (locations being source locations) for every instance of the kernel that
/// has it. Root-cause grouping (report/RootCause.h) compares these facts, never message
/// texts. Computed by semantics::findingFacts (engine findings) or the static pre-check.
struct FindingFacts {
  enum class What {
    None,          ///< not computed (a finding built by hand)
    Race,          ///< an access while a side of another DMA is open
    ExitDma,       ///< a DMA side still open at a kernel or scope exit
    ExitSemaphore, ///< a semaphore non-zero at a kernel or scope exit
    LandOutside,   ///< a DMA lands on a device outside the invocation or scope
    SignalOutside, ///< a signal reaches a device outside the invocation
    Other,         ///< scoped slots, deadlocks, the static pre-check
  };
  What what = What::None;
  /// Race: the racing event's location, its access ("store", "load", "dma-source",
  /// "dma-destination") and the buffer it touches.
  SourceLoc access;
  std::string accessRole;
  std::string buffer;
  /// Race: the other DMA's start and the side of it that is open (`dst`: its
  /// destination, being written; else its source, being read). ExitDma: the DMA left
  /// open and its side (`dst`: the receive side). LandOutside: the DMA that lands.
  SourceLoc dma;
  SourceLoc descriptor; ///< where that DMA's descriptor was made
  bool dst = false;
  bool local = false; ///< the DMA (ExitDma, LandOutside) is a local copy
  /// ExitDma, ExitSemaphore: the exit (kernel end or block end) and whether it is the
  /// kernel's.
  SourceLoc exit;
  bool kernelExit = true;
  /// ExitDma, ExitSemaphore: the program has at least one wait on the semaphore (the
  /// DMA side's) anywhere: "not waited for before the exit" rather than "never waited".
  bool waited = false;
  /// ExitSemaphore, SignalOutside: the semaphore's declaration and name (without an
  /// index) and whether it is a DMA semaphore. ExitDma whose open side signals a regular
  /// semaphore (`unitSemaphore`: one unit when that side completes, TPU v6+): that
  /// semaphore.
  SourceLoc semaphore;
  std::string semaphoreName;
  std::string semaphoreElement; ///< ExitSemaphore, ExitDma: the element, e.g. "cap[1]"
  bool dmaSemaphore = false;
  bool unitSemaphore = false;
  /// ExitSemaphore: the starts of the DMAs that count on it (their locations, each once,
  /// in source order) and, per start, whether it counts its receive side there (else its
  /// send side); for a regular semaphore, the DMAs that add a unit to it.
  std::vector<SourceLoc> countedBy;
  std::vector<bool> countedDst;
  /// ExitSemaphore: the largest value the semaphore may hold at the exit that the
  /// witness shows (the units to wait for), 0 when unknown.
  int64_t leftOver = 0;
};

/// A text edit of the checked file: replace the lines [firstLine, lastLine] (1-based;
/// lastLine == firstLine - 1 inserts before firstLine) with `lines`.
struct LineEdit {
  uint32_t firstLine = 0;
  uint32_t lastLine = 0;
  std::vector<std::string> lines;
};

/// A repair of the kernel source that dkv checked: the repaired kernel, checked with
/// the same engine and options at every instance where the finding occurred, no longer
/// has it and has no finding the original did not have (docs/explain.md "Verified
/// fixes"). Only verified repairs are kept.
struct Fix {
  std::string summary;         ///< e.g. "insert 'c.wait()' after line 16"
  SourceLoc loc;               ///< where the fix-it points (in the checked file)
  std::string file;            ///< the file repaired (as dkv read it)
  std::vector<LineEdit> edits; ///< in increasing line order, not overlapping
  std::string diff;            ///< a unified diff of the file (`--- a`/`+++ b` headers)
  /// The instances it was verified at, e.g. "2..8 devices".
  std::string verifiedAt;
  /// The repaired kernel has no finding at all at those instances (else other root
  /// causes remain, `remaining` of them at the first).
  bool kernelVerifies = false;
  size_t remaining = 0;
};

struct Finding {
  FindingKind kind = FindingKind::Race;
  /// The violated property's id (semantics::Properties), e.g. "race.0"; empty for a
  /// finding of the static pre-check. Every engine reports the same id and message for
  /// the same property.
  std::string property;
  std::string message; ///< the property's message: one line, lowercase start, no period
  /// The witness's own instance of it, with devices, regions and values, e.g. "store
  /// to out[0:4] on device 1 races with dma 2 (device 0 -> 1) writing out[0:4]";
  /// differs between witnesses of one property. Empty for static findings.
  std::string detail;
  Span primary;
  std::vector<Span> secondary;
  Trace trace;       ///< may be empty for static findings
  Schedule schedule; ///< the steps that reach the finding (empty if static)
  /// The length of the engine's own schedule when `schedule` is its shortened form
  /// (semantics/Shorten.h); 0 when the engine's schedule is used as it is.
  int32_t witnessSteps = 0;
  std::string engine; ///< "explore", "run", "spin", "z3", "precheck"
  /// How the engine found the witness when it is not the plain search of the instance,
  /// e.g. "found in a window of 5 of the 256 devices (...)"; empty otherwise.
  std::string found;
  bool confirmed = false;   ///< replayed in the executor, which saw the same finding
  bool replayTried = false; ///< another engine's finding was replayed (confirmed or not)
  /// A race made visible, e.g. "out[1, 3] on device 0 is 2 in one schedule and 0 in
  /// another"; empty when not shown.
  std::string wrongValue;
  FindingShape shape; ///< what `--explain` classifies (report/Explain.h)
  FindingFacts facts; ///< what root-cause grouping compares (report/RootCause.h)
  /// The verified fix of the finding's root cause, when dkv found one (a picture or
  /// page of the finding can show it); set by the driver after the fix search on every
  /// finding of the root cause (report/RootCause.h).
  std::optional<Fix> fix;
  /// Why no fix is shown when the fix search ran and found none verified (the repairs
  /// tried, or why none applies); empty otherwise.
  std::string noFix;
  /// The reason of the `// dkv: allow KIND -- reason` comment that accepts this
  /// finding (applySuppressions); empty when it is not suppressed.
  std::string suppressed;
};

/// A `// dkv: allow KIND -- reason` comment of the checked file (docs/ci.md): it
/// accepts the findings of `kind` whose primary location is on `line` of the main
/// file (FileId 0).
struct Suppression {
  FindingKind kind = FindingKind::Race;
  std::string reason;
  uint32_t line = 0; ///< the line it applies to
  SourceLoc loc;     ///< the comment
};

/// The form a solver engine gave the wait constraints of one semaphore of one device
/// (z3, docs/smt.md "Semaphore waits"): counting when every increment comes from one
/// program-ordered source (one device's signals, one DMA's send or land chunks), sum
/// (a pseudo-Boolean constraint) otherwise. Only semaphores with waits get a form.
struct SemaphoreForm {
  std::string semaphore; ///< e.g. "recv_sem[0]"
  int32_t device = 0;
  bool counting = true;
  /// What increments it, one entry per source in the order of the increments:
  /// "signals of device 1", "dma 3 lands (device 2 -> 3)", "dma 3 sends (device 3 ->
  /// 4)"; one entry (or none) in the counting form.
  std::vector<std::string> sources;
};

/// The outcome of one engine run on one kernel instance.
struct Verdict {
  /// Error: an engine's witness does not replay to its property (a bug in dkv, exit
  /// code 6); `reason` says which.
  enum class Status { Verified, Findings, Inconclusive, Error };
  Status status = Status::Verified;
  std::vector<Finding> findings;
  /// Why inconclusive (with the numbers); with findings, why the search for more
  /// stopped early (empty when it was complete).
  std::string reason;
  /// Engine statistics in a stable order: "states" -> "1234", "time" -> "0.3 s".
  std::vector<std::pair<std::string, std::string>> stats;
  /// Per-query statistics of a solver engine (z3: one record per check, in the order
  /// of the checks), each like `stats`; empty for the other engines.
  std::vector<std::vector<std::pair<std::string, std::string>>> queries;
  /// The form of each semaphore's wait constraints (z3; by semaphore, then device);
  /// empty for the other engines.
  std::vector<SemaphoreForm> semaphoreForms;
  /// Suppressions of the checked file that matched no finding of this verdict
  /// (applySuppressions): warnings.
  std::vector<Suppression> unusedSuppressions;
};

/// "verified", "findings", "inconclusive" or "error" (also the JSON `status`).
const char *verdictStatusName(Verdict::Status status);

/// True when `a` and `b` report the same thing: the same property (for findings of
/// the static pre-check, which have none: the same kind at the same primary location).
bool sameFinding(const Finding &a, const Finding &b);

/// Joins the static pre-check's findings (`pre`, no witness) to an engine's verdict.
/// A pre-check finding at the place of an engine finding of its kind (that finding's
/// primary location or a secondary one) is the same bug: it becomes a note (its
/// explanation, at its location) on every such finding (addPrecheckNotes). The others
/// are added as they are and make the verdict `Findings`, also when the engine was
/// inconclusive (the pre-check's findings hold without a search). The rule looks at
/// one engine finding at a time, never at which other findings the search found, so a
/// finding shown during the search already has its final notes.
void mergePrecheck(Verdict &verdict, std::vector<Finding> pre);
/// The pre-check's notes that mergePrecheck puts on `finding`: those of `pre` of its
/// kind at its primary location or a secondary one, each once (a finding that has a
/// note already keeps just that one).
void addPrecheckNotes(Finding &finding, const std::vector<Finding> &pre);

/// Marks every finding that a suppression accepts (same kind, primary location on the
/// suppression's line of the main file) as suppressed with its reason, and lists the
/// suppressions that accept nothing in `verdict.unusedSuppressions`.
void applySuppressions(Verdict &verdict, const std::vector<Suppression> &suppressions);

/// The findings no suppression accepts: they decide the exit code (10 when any).
size_t activeFindings(const Verdict &verdict);

} // namespace dkv::report
