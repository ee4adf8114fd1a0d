// The explain catalogue and its classifier (docs/explain.md).
#include "report/Explain.h"

#include <ostream>
#include <sstream>

namespace dkv::report {

namespace {

using Check = FindingShape::Check;
using Access = FindingShape::Access;

// The one copy of the catalogue text; docs/explain.md repeats it for readers and
// tests/report/ExplainTest.cpp checks that both say the same.
const std::vector<ExplainEntry> kCatalogue = {
    {"run-ahead", FindingKind::Race, "a sender runs a round ahead without a capacity handshake",
     "The receiver reuses a buffer round after round, and only the receiver waits: it waits "
     "for the data to arrive, but nothing tells the sender that the receiver has finished "
     "with the previous round's contents. A fast sender starts the next round's DMA into "
     "the buffer while the receiver is still reading or forwarding it.",
     "Add a capacity handshake: when the receiver is done with the buffer (or with one slot "
     "of a double buffer) it signals a regular semaphore on the sender, and the sender "
     "waits on that semaphore before it starts the DMA that overwrites the buffer. The "
     "ring all-reduce of the Pallas TPU distributed tutorial does this with a capacity "
     "semaphore."},
    {"shared-semaphore", FindingKind::Race,
     "a wait counts another DMA's bytes on a shared semaphore",
     "Several DMAs that can be in flight at the same time add their bytes to one DMA "
     "semaphore on the receiving device. A wait for one of them returns as soon as enough "
     "bytes have arrived, whichever DMA sent them, so the device goes on while the DMA it "
     "meant to wait for is still writing, and uses a buffer that is still being written.",
     "Give every DMA that can be in flight at the same time its own semaphore (a dma_sem "
     "array indexed by step or slot), or make sure the next DMA cannot start before the "
     "receiver has waited for the previous one (a handshake from the receiver)."},
    {"landing-before-wait-recv", FindingKind::Race,
     "a DMA's landing buffer is read or overwritten before wait_recv",
     "A device reads or writes a buffer that a DMA may still be writing into. Until the "
     "receiving device's wait_recv (or wait) for that DMA returns, its bytes can land at "
     "any moment: a store made before then can be overwritten, and a load or a DMA that "
     "reads the buffer can see old or partly written data.",
     "Move the access after the wait_recv of that DMA. If the buffer must be prepared "
     "(zeroed, initialised) before the data arrives, do it before the sender may start, "
     "and tell the sender when it is ready (a barrier, or a signal the sender waits on)."},
    {"source-before-wait-send", FindingKind::Race, "a DMA's source is overwritten before wait_send",
     "A buffer is written while a DMA is still reading it as its source. A DMA reads its "
     "source from its start until its send side completes (what wait_send waits for), so "
     "a write before then changes what the receiver gets, in some schedules and not in "
     "others.",
     "Wait for the DMA's send side (wait_send, or wait) before writing its source buffer, "
     "or write into another buffer (double buffering) while the DMA is in flight."},
    {"two-writers", FindingKind::Race, "two DMAs write the same destination",
     "Two DMAs that nothing orders write overlapping elements of one buffer on one device; "
     "whichever lands last decides the result. The usual causes are a neighbour index that "
     "is clamped instead of wrapped around the ring, and a table of DMAs in which two rows "
     "name the same device and slot.",
     "Check the target device and the destination index of every DMA: each destination "
     "element should have one writer per round. If two writers are intended, order them: "
     "the second DMA starts only after the first one has been waited for."},
    {"unordered-accesses", FindingKind::Race, "two accesses that nothing orders",
     "Two accesses to the same elements, at least one of them a write, are not ordered by "
     "program order, a barrier or a semaphore, so they happen in either order (or at the "
     "same time) depending on the schedule.",
     "Order them: wait for the DMA involved (wait_send for its source, wait_recv for its "
     "destination) before the other access, or add a handshake between the devices."},
    {"one-round-barrier", FindingKind::LifetimeViolation, "a one-round barrier across invocations",
     "The kernel runs several times back to back and synchronises with its neighbours by "
     "one round of barrier-semaphore signals. A neighbour that has finished this "
     "invocation and entered the next one sends its signal for the next round, which "
     "satisfies a wait of the current round, so a device runs ahead and its DMA or signal "
     "reaches a device that has not entered the invocation yet.",
     "Use a double barrier: after the round on the barrier semaphore, a second round on a "
     "regular semaphore (the Pallas TPU distributed tutorial's pattern), so that no device "
     "can leave the barrier before all its neighbours have entered it."},
    {"peer-outside", FindingKind::LifetimeViolation,
     "a DMA or signal reaches a peer that has not entered or has already left",
     "A DMA lands, or a signal arrives, on a device that is not inside the kernel "
     "invocation (or the run_scoped block that owns the destination buffer) at that "
     "moment: it has not entered yet, or it has already left. On hardware the bytes or "
     "units arrive in memory that belongs to something else.",
     "Make sure the peer is inside before sending (an entry barrier: collective_id and a "
     "barrier round, or a ready signal the sender waits on), and that it stays inside until "
     "the data has arrived (it waits for the DMA or signal before it leaves)."},
    {"scoped-slot-reused", FindingKind::LifetimeViolation,
     "a scoped semaphore's slot is reused while a peer still signals it",
     "The semaphores of run_scoped blocks live in slots that the next block on the same "
     "device reuses. A peer's signal or DMA for one block reaches this device while it is "
     "in another block that uses the same slot (or the slot still holds units when the "
     "next block starts), so the units are counted by the wrong semaphore.",
     "Make sure a peer cannot signal the next block before this device is done with the "
     "previous one (a handshake or barrier between the blocks), or allocate the semaphore "
     "once for the whole kernel instead of in each block."},
    {"dma-not-waited", FindingKind::ExitViolation,
     "a DMA is not waited for before the kernel or block ends",
     "A kernel or run_scoped block ends while a DMA it started, or a DMA into it, is still "
     "in flight, or with a DMA semaphore still holding bytes that no wait took. The next "
     "kernel (or invocation) sees bytes landing late and a semaphore that does not start at "
     "zero.",
     "Wait for every DMA on both sides before the end: the issuer's wait_send (or wait) and "
     "the receiver's wait_recv, with the DMA's full size."},
    {"semaphore-nonzero-at-exit", FindingKind::ExitViolation,
     "a semaphore is left non-zero at exit",
     "A regular semaphore still holds units when the device leaves the kernel or the block: "
     "a signal was never taken by a matching wait, often the handshake signal of the last "
     "round or a missing clean-up wait.",
     "Balance signals and waits: every unit signalled to a device must be taken by one of "
     "its waits before it leaves. Add the clean-up waits after the last round, or do not "
     "send the last round's signal."},
    {"signal-dma-semaphore", FindingKind::ExitViolation, "a DMA semaphore is signalled by hand",
     "A signal adds units to a DMA semaphore, which counts the bytes of DMAs: its waits "
     "then return before the data has arrived, and the units are left over at exit.",
     "Signal a regular semaphore (a separate scratch semaphore) for handshakes, and let "
     "only DMAs add to DMA semaphores."},
    {"wait-never-signalled", FindingKind::Deadlock, "a wait that nobody signals",
     "A device waits for more units on a semaphore than all the signals and DMAs of the "
     "kernel can ever add to it on that device: a missing sender, a loop bound one short, "
     "a signal or DMA aimed at the wrong device or semaphore, or a wait larger than the "
     "DMA it waits for.",
     "Match every wait with signals or DMAs of the same total amount to the same device and "
     "semaphore: check the target of each signal and DMA, the loop bounds, and the devices "
     "at the ends of an open line, which have no neighbour on one side."},
    {"circular-wait", FindingKind::Deadlock, "waits that wait on each other",
     "Every unfinished device is blocked, and the units each one waits for could only come "
     "from a device that is itself blocked (or were already taken by another wait): the "
     "waits form a cycle.",
     "Follow the stuck waits in the trace: let one side signal before it waits to break the "
     "cycle, or use one semaphore per purpose so that one wait cannot take the units "
     "another needs."},
};

const ExplainEntry &entry(const char *id) {
  const ExplainEntry *e = findExplainEntry(id);
  // Every id below is in the catalogue (ExplainTest checks every path).
  return e ? *e : kCatalogue.front();
}

const char *raceEntry(const FindingShape &s) {
  if (s.otherLanding) {
    if (s.access == Access::DmaDestination)
      return "two-writers";
    if (s.regionReused)
      return "run-ahead";
    if (s.waitedOnSharedSemaphore)
      return "shared-semaphore";
    return "landing-before-wait-recv";
  }
  // The other DMA is still reading its source: a write races with it.
  if (s.access == Access::DmaDestination && s.accessRemote && s.regionReused)
    return "run-ahead";
  // A DMA from another device lands in a buffer that a DMA of the receiving device (a
  // local copy or a remote DMA: it forwards the buffer) is still reading: the receiver
  // read its landing buffer before wait_recv. The writer is not the device whose source
  // it is, so no device overwrote its own source. The same pair seen from the other
  // side (the reading DMA's start while this DMA lands) is landing-before-wait-recv by
  // the first rule, so both findings of one such pair name the same entry.
  if (s.access == Access::DmaDestination && s.accessRemote)
    return "landing-before-wait-recv";
  if (s.access == Access::StoreWrite || s.access == Access::DmaDestination)
    return "source-before-wait-send";
  return "unordered-accesses";
}

const char *entryId(const Finding &f) {
  const FindingShape &s = f.shape;
  switch (s.check) {
  case Check::Race:
    return raceEntry(s);
  case Check::ExitSemaphore:
    return s.dmaSemaphore ? "dma-not-waited" : "semaphore-nonzero-at-exit";
  case Check::ExitDma:
    return "dma-not-waited";
  case Check::Outside:
    return s.invocations > 1 && s.peerNotEntered && s.usesBarrierSemaphore ? "one-round-barrier"
                                                                           : "peer-outside";
  case Check::Slot:
    return "scoped-slot-reused";
  case Check::Stuck:
    return !s.barrier && s.neverEnough ? "wait-never-signalled" : "circular-wait";
  case Check::StaticWait:
    return "wait-never-signalled";
  case Check::StaticExit:
    return s.signal         ? "signal-dma-semaphore"
           : s.dmaSemaphore ? "dma-not-waited"
                            : "semaphore-nonzero-at-exit";
  case Check::None:
    break;
  }
  switch (f.kind) {
  case FindingKind::Race:
    return "unordered-accesses";
  case FindingKind::Deadlock:
    return "circular-wait";
  case FindingKind::ExitViolation:
    return "semaphore-nonzero-at-exit";
  case FindingKind::LifetimeViolation:
    return "peer-outside";
  }
  return "unordered-accesses";
}

/// `text` wrapped at `width` columns, each line starting with `indent`.
void wrap(std::ostream &out, const std::string &text, const std::string &indent, size_t width) {
  std::istringstream words(text);
  std::string word, line;
  while (words >> word) {
    if (!line.empty() && indent.size() + line.size() + 1 + word.size() > width) {
      out << indent << line << "\n";
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
  }
  if (!line.empty())
    out << indent << line << "\n";
}

} // namespace

const std::vector<ExplainEntry> &explainCatalogue() { return kCatalogue; }

const ExplainEntry *findExplainEntry(const std::string &id) {
  for (const ExplainEntry &e : kCatalogue)
    if (id == e.id)
      return &e;
  return nullptr;
}

const ExplainEntry &explainFinding(const Finding &finding) { return entry(entryId(finding)); }

void renderExplanation(std::ostream &out, const Finding &finding) {
  const ExplainEntry &e = explainFinding(finding);
  out << "  explain [" << e.id << "]: " << e.title << "\n";
  wrap(out, e.what, "    ", 88);
  wrap(out, std::string("Usual fix: ") + e.fix, "    ", 88);
}

} // namespace dkv::report
