// Small helpers on the model types.
#include "model/Model.h"

#include "report/Finding.h"
#include "support/IntArith.h"
#include "support/Invariant.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

namespace dkv::model {

const char *semKindName(SemKind kind) {
  switch (kind) {
  case SemKind::Regular:
    return "sem";
  case SemKind::Dma:
    return "dma_sem";
  case SemKind::Barrier:
    return "barrier";
  }
  DKV_UNREACHABLE("unknown semaphore kind");
}

int64_t Region::elementCount() const {
  int64_t count = 1;
  for (const Range &r : ranges)
    count *= r.size();
  return count;
}

bool Region::overlaps(const Region &other) const {
  if (buffer != other.buffer || ranges.size() != other.ranges.size())
    return false;
  // An empty region (a zero-size slice) overlaps nothing.
  for (size_t i = 0; i < ranges.size(); ++i)
    if (ranges[i].size() == 0 || other.ranges[i].size() == 0)
      return false;
  for (size_t i = 0; i < ranges.size(); ++i)
    if (ranges[i].end <= other.ranges[i].begin || other.ranges[i].end <= ranges[i].begin)
      return false;
  return true;
}

int64_t Buffer::elementCount() const {
  int64_t count = 1;
  for (int64_t d : shape)
    count *= d;
  return count;
}

int32_t Program::sequenceRuns() const {
  if (sequenceLength <= 0)
    return 1;
  return static_cast<int32_t>(calls.size()) / sequenceLength;
}

namespace {

/// The window of an array of a sequence that lives in calls [first, last] of each run,
/// for a DMA or signal of `invocation`: the same calls of invocation's run.
Window runWindow(const Program &p, int32_t first, int32_t last, int32_t invocation) {
  if (first < 0)
    return {invocation, invocation};
  const int32_t base =
      p.sequenceLength > 0 && invocation > 0 ? invocation - invocation % p.sequenceLength : 0;
  return {base + first, base + last};
}

} // namespace

Window Program::semWindow(SemId sem, int32_t invocation) const {
  const Semaphore &s = semaphores[sem];
  return runWindow(*this, s.liveFirst, s.liveLast, invocation);
}

Window Program::bufferWindow(BufferId b, int32_t invocation) const {
  const Buffer &buf = buffers[b];
  return runWindow(*this, buf.liveFirst, buf.liveLast, invocation);
}

bool Program::exitChecks(SemId sem, int32_t invocation) const {
  const Semaphore &s = semaphores[sem];
  if (s.kind == SemKind::Barrier)
    return false;
  if (calls.empty() || invocation < 0 || invocation >= static_cast<int32_t>(calls.size()))
    return true;
  if (s.liveFirst >= 0)
    return sequenceLength > 0 && s.liveLast == invocation % sequenceLength;
  return s.kernel < 0 || s.kernel == calls[invocation].kernel;
}

const char *dmaOrderName(DmaOrder order) {
  switch (order) {
  case DmaOrder::Any:
    return "any";
  case DmaOrder::Link:
    return "link";
  }
  return "any";
}

const char *entryBarrierCoresName(EntryBarrierCores cores) {
  switch (cores) {
  case EntryBarrierCores::None:
    return "none";
  case EntryBarrierCores::All:
    return "all";
  }
  return "none";
}

bool Program::sharedByCores(BufferId b) const {
  if (coresPerDevice() <= 1 || b < 0 || static_cast<size_t>(b) >= buffers.size())
    return false;
  const MemSpace space = buffers[b].space;
  return space == MemSpace::Hbm || space == MemSpace::Any;
}

DeviceId Program::memoryOf(DeviceId p, BufferId b) const {
  return sharedByCores(b) ? p - p % coresPerDevice() : p;
}

std::string Program::processName(DeviceId p) const {
  return report::processName(p, cores ? coresPerDevice() : 0);
}

std::string Program::memoryName(DeviceId p, BufferId b) const {
  if (sharedByCores(b))
    return fmt::format("device {}", p / coresPerDevice());
  return processName(p);
}

std::optional<SemId> Program::barrierSemaphore() const {
  for (size_t i = 0; i < semaphores.size(); ++i)
    if (semaphores[i].kind == SemKind::Barrier)
      return static_cast<SemId>(i);
  return std::nullopt;
}

std::string Program::semName(SemId sem) const {
  DKV_INVARIANT(sem >= 0 && static_cast<size_t>(sem) < semaphores.size(), "semaphore id");
  const Semaphore &s = semaphores[sem];
  if (s.index.empty())
    return s.name;
  return fmt::format("{}[{}]", s.name, fmt::join(s.index, ", "));
}

std::vector<std::vector<Increment>> Program::increments() const {
  const size_t semCount = semaphores.size();
  std::vector<std::vector<Increment>> out(processes.size() * semCount);
  for (const Process &proc : processes)
    for (size_t i = 0; i < proc.events.size(); ++i)
      if (const auto *sig = std::get_if<Signal>(&proc.events[i].kind))
        out[static_cast<size_t>(sig->target) * semCount + sig->sem].push_back(
            {Increment::Source::Signal, proc.device, static_cast<int32_t>(i), sig->amount});
  // Each side adds its own units (Dma::sendUnits, landUnits): bytes on a DMA semaphore,
  // 1 with the last chunk on a regular one.
  for (const Dma &dma : dmas)
    for (size_t c = 0; c < dma.landUnits.size(); ++c) {
      const auto chunk = static_cast<int32_t>(c);
      if (dma.sendSem && c < dma.sendUnits.size())
        out[static_cast<size_t>(dma.issuer) * semCount + *dma.sendSem].push_back(
            {Increment::Source::Send, dma.id, chunk, dma.sendUnits[c]});
      out[static_cast<size_t>(dma.target) * semCount + dma.recvSem].push_back(
          {Increment::Source::Land, dma.id, chunk, dma.landUnits[c]});
    }
  return out;
}

std::vector<int64_t> Program::incrementTotals() const {
  return model::incrementTotals(increments());
}

std::vector<int64_t> incrementTotals(const std::vector<std::vector<Increment>> &increments) {
  std::vector<int64_t> totals;
  totals.reserve(increments.size());
  for (const std::vector<Increment> &incs : increments) {
    int64_t t = 0;
    for (const Increment &inc : incs)
      t = support::saturatingAdd(t, std::max<int64_t>(0, inc.units));
    totals.push_back(t);
  }
  return totals;
}

std::string Program::regionName(const Region &region) const {
  DKV_INVARIANT(region.buffer >= 0 && static_cast<size_t>(region.buffer) < buffers.size(),
                "buffer id");
  const Buffer &b = buffers[region.buffer];
  std::string out = b.name + "[";
  for (size_t i = 0; i < region.ranges.size(); ++i) {
    if (i)
      out += ", ";
    const Range &r = region.ranges[i];
    if (r.begin == 0 && i < b.shape.size() && r.end == b.shape[i])
      out += ":";
    else if (r.size() == 1)
      out += std::to_string(r.begin);
    else
      out += fmt::format("{}:{}", r.begin, r.end);
  }
  return out + "]";
}

} // namespace dkv::model
