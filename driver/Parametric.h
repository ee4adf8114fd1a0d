// `dkv check FILE --devices A..`: a verdict for every device count from A on, where
// the window argument of docs/parametric.md holds, and "inconclusive" with the reason
// where it does not.
#pragma once

#include "driver/Engines.h"
#include "driver/Pipeline.h"

#include <cstdint>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace dkv::ast {
class Module;
}

namespace dkv::driver {

/// The fragment of docs/parametric.md: a kernel on a one-axis mesh sized by a param N,
/// in which N and axis_index occur only in device ids of the form (axis_index + c) % N.
/// Its offsets' largest |c|, or nullopt with the reason (and where) it is outside.
/// An index or a slice bound of a ref in a kernel of the fragment UG, as far as the device
/// index me, the grid step and the mesh size N go (docs/parametric.md "Races for every N").
struct IndexForm {
  enum class Kind {
    Known,    ///< the constant c
    Clean,    ///< fixed for every N, device and step, value not known here
    Mod,      ///< (a * me + b * step + c) mod N
    Exact,    ///< b * step + c
    Periodic, ///< alpha + beta * ((b * step + c) mod period)
    Other,
  };
  Kind kind = Kind::Other;
  int64_t a = 0, b = 0, c = 0;
  int64_t alpha = 0, beta = 0, period = 0;
  friend bool operator==(const IndexForm &, const IndexForm &) = default;
};
/// One dimension of a ref's region: an index, or a slice [lo, hi).
struct DimForm {
  bool index = true;
  IndexForm at, lo, hi;
  friend bool operator==(const DimForm &, const DimForm &) = default;
};
using FormKey = std::tuple<uint32_t, uint32_t, uint32_t, uint32_t>; ///< file, line, col, inlined
struct RegionForm {
  bool known = false; ///< false: not a kernel buffer's region the forms follow
  FormKey buffer{};   ///< where the buffer is declared
  std::vector<DimForm> dims;
};
/// The regions of one statement: a copy's source and destination, or a store's target
/// followed by the refs its value reads.
struct StmtForms {
  bool copy = false;
  std::vector<RegionForm> regions;
};

struct Uniform {
  int64_t reach = 0; ///< r: the largest |c| of a device id
  /// The fragment UG (docs/parametric.md "Grids that grow with N"): the grid's first axis
  /// has N + g steps; the first `first` steps and the last `last` differ from the middle
  /// ones (conditions on program_id(0) compare it with constants or N + constants).
  bool growing = false;
  int64_t g = 0, first = 0, last = 0;
  /// UG: the regions of each statement that copies or stores, by its location.
  std::map<FormKey, StmtForms> forms;
  /// UG: a construct the race argument does not cover (run_scoped), or empty.
  std::string racesOutside;
};
std::optional<Uniform> uniformRing(const ast::Module &module, std::string &reason);

/// `--devices A..`: "A.." parsed (A >= 1), or nullopt.
std::optional<int64_t> parseEveryN(const std::string &text);

/// Checks `file` for every N >= `first` (docs/parametric.md): the fragment check, the
/// window decision on one instance, and every smaller instance one by one with the
/// closure engine. Prints the findings of the smallest N that has any (its full report)
/// and a verdict line naming the argument; returns the exit code: 0 verified for every
/// N, 10 findings at some N, 5 inconclusive (outside the fragment, or a check the window
/// does not decide), 1 or 2 as `dkv check`.
int checkEveryN(const InstanceOptions &base, int64_t first, const CheckOptions &check,
                std::ostream &out, std::ostream &err);

} // namespace dkv::driver
