// Rotation symmetry of an instance, checked event by event (Symmetry.h).
#include "semantics/Symmetry.h"

#include "support/Overloaded.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>

namespace dkv::semantics {

using namespace model;

namespace {

int64_t mod(int64_t a, int64_t m) { return ((a % m) + m) % m; }

/// The image of range r of a dimension of size `size` shifted by `delta`, or nullopt
/// when it wraps around the end (a shifted box that is not a box).
std::optional<Range> shifted(const Range &r, int64_t size, int64_t delta) {
  if (size <= 0 || delta == 0 || (r.begin == 0 && r.end == size))
    return r;
  const int64_t begin = mod(r.begin + delta, size);
  if (begin + r.size() > size)
    return std::nullopt;
  return Range{begin, begin + r.size()};
}

/// Checks one rotation candidate, learning the shifts of the regions as it goes.
class Checker {
public:
  Checker(const Program &program, Rotation &rotation) : p_(program), r_(rotation) {
    known_.resize(p_.buffers.size());
    for (size_t b = 0; b < p_.buffers.size(); ++b) {
      r_.shift[b].assign(p_.buffers[b].shape.size(), 0);
      r_.size[b] = p_.buffers[b].shape;
      known_[b].assign(p_.buffers[b].shape.size(), false);
    }
  }

  /// Whether `to` is the image of `from`, fixing a dimension's shift on the first
  /// region that determines it.
  bool region(const Region &from, const Region &to) {
    if (from.buffer != to.buffer || from.ranges.size() != to.ranges.size() ||
        from.ranges.size() != p_.buffers[from.buffer].shape.size())
      return false;
    for (size_t i = 0; i < from.ranges.size(); ++i) {
      const int64_t size = p_.buffers[from.buffer].shape[i];
      const Range &a = from.ranges[i], &b = to.ranges[i];
      if (!known_[from.buffer][i]) {
        const bool full = a.begin == 0 && a.end == size;
        if (full) {
          if (!(b == a))
            return false;
          continue; // a full range says nothing about the shift
        }
        known_[from.buffer][i] = true;
        r_.shift[from.buffer][i] = size > 0 ? mod(b.begin - a.begin, size) : 0;
      }
      const std::optional<Range> image = shifted(a, size, r_.shift[from.buffer][i]);
      if (!image || !(*image == b))
        return false;
    }
    return true;
  }

  bool event(const Event &a, const Event &b) {
    if (a.kind.index() != b.kind.index() || a.loc != b.loc)
      return false;
    return std::visit(
        support::Overloaded{
            [&](const KernelEnter &x) {
              return x.invocation == std::get<KernelEnter>(b.kind).invocation;
            },
            [&](const KernelExit &x) {
              return x.invocation == std::get<KernelExit>(b.kind).invocation;
            },
            [&](const DeviceBarrier &x) {
              return x.invocation == std::get<DeviceBarrier>(b.kind).invocation;
            },
            [&](const ScopeEnter &x) { return x.scope == std::get<ScopeEnter>(b.kind).scope; },
            [&](const ScopeExit &x) { return x.scope == std::get<ScopeExit>(b.kind).scope; },
            [&](const Store &x) {
              const Store &y = std::get<Store>(b.kind);
              if (x.accumulate != y.accumulate || x.reads.size() != y.reads.size() ||
                  !region(x.dst, y.dst))
                return false;
              for (size_t i = 0; i < x.reads.size(); ++i)
                if (!region(x.reads[i], y.reads[i]))
                  return false;
              return true;
            },
            [&](const DmaStart &x) {
              const DmaId to = std::get<DmaStart>(b.kind).dma;
              if (r_.dma[x.dma] >= 0 && r_.dma[x.dma] != to)
                return false;
              r_.dma[x.dma] = to;
              return true;
            },
            [&](const SemWait &x) {
              const SemWait &y = std::get<SemWait>(b.kind);
              return x.sem == y.sem && x.amount == y.amount;
            },
            [&](const Signal &x) {
              const Signal &y = std::get<Signal>(b.kind);
              return x.sem == y.sem && x.amount == y.amount && r_.device[x.target] == y.target;
            },
            [&](const SemRead &x) { return x.sem == std::get<SemRead>(b.kind).sem; },
        },
        a.kind);
  }

  bool dma(const Dma &a, const Dma &b) {
    return r_.device[a.issuer] == b.issuer && r_.device[a.target] == b.target &&
           a.sendSem == b.sendSem && a.recvSem == b.recvSem && a.bytes == b.bytes &&
           a.sendUnits == b.sendUnits && a.landUnits == b.landUnits && a.local == b.local &&
           a.priority == b.priority && a.invocation == b.invocation && a.loc == b.loc &&
           region(a.src, b.src) && region(a.dst, b.dst);
  }

private:
  const Program &p_;
  Rotation &r_;
  std::vector<std::vector<bool>> known_;
};

std::optional<Rotation> rotationAlong(const Program &p, int32_t axis) {
  const int32_t n = p.deviceCount();
  Rotation r;
  r.axis = axis;
  r.device.resize(n);
  r.dma.assign(p.dmas.size(), -1);
  r.shift.resize(p.buffers.size());
  r.size.resize(p.buffers.size());
  // Row-major linearisation of the coordinates (docs/model.md "The instance").
  std::map<std::vector<int64_t>, DeviceId> byCoords;
  for (const Process &proc : p.processes)
    byCoords[proc.coords] = proc.device;
  for (const Process &proc : p.processes) {
    std::vector<int64_t> c = proc.coords;
    if (static_cast<size_t>(axis) >= c.size())
      return std::nullopt;
    c[axis] = mod(c[axis] + 1, p.mesh[axis].size);
    auto it = byCoords.find(c);
    if (it == byCoords.end())
      return std::nullopt;
    r.device[proc.device] = it->second;
  }
  Checker check(p, r);
  for (DeviceId d = 0; d < n; ++d) {
    const std::vector<Event> &mine = p.processes[d].events;
    const std::vector<Event> &theirs = p.processes[r.device[d]].events;
    if (mine.size() != theirs.size())
      return std::nullopt;
    for (size_t i = 0; i < mine.size(); ++i)
      if (!check.event(mine[i], theirs[i]))
        return std::nullopt;
  }
  for (const Dma &dma : p.dmas)
    if (r.dma[dma.id] >= 0 && !check.dma(dma, p.dmas[r.dma[dma.id]]))
      return std::nullopt;
  return r;
}

} // namespace

std::optional<Region> Rotation::apply(const Region &region) const {
  Region out = region;
  for (size_t i = 0; i < out.ranges.size() && i < shift[region.buffer].size(); ++i) {
    std::optional<Range> r =
        shifted(region.ranges[i], size[region.buffer][i], shift[region.buffer][i]);
    if (!r)
      return std::nullopt;
    out.ranges[i] = *r;
  }
  return out;
}

bool Symmetry::invariant(const Region &region) const {
  for (const Rotation &r : rotations) {
    std::optional<Region> image = r.apply(region);
    if (!image || !(*image == region))
      return false;
  }
  return true;
}

std::string Symmetry::describe(const Program &program) const {
  std::vector<std::string> names;
  for (const Rotation &r : rotations)
    names.push_back(program.mesh[r.axis].name);
  return fmt::format("{} of {}", names.size() == 1 ? "rotation" : "rotations",
                     fmt::join(names, ", "));
}

std::optional<Symmetry> findSymmetry(const Program &program) {
  if (program.coresPerDevice() > 1 || program.deviceCount() < 2)
    return std::nullopt;
  Symmetry s;
  for (int32_t axis = 0; axis < static_cast<int32_t>(program.mesh.size()); ++axis)
    if (program.mesh[axis].size >= 2)
      if (std::optional<Rotation> r = rotationAlong(program, axis))
        s.rotations.push_back(std::move(*r));
  if (s.rotations.empty())
    return std::nullopt;
  s.representative.assign(program.deviceCount(), true);
  for (const Process &proc : program.processes)
    for (const Rotation &r : s.rotations)
      if (proc.coords[r.axis] != 0)
        s.representative[proc.device] = false;
  return s;
}

} // namespace dkv::semantics
