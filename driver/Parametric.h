// `dkv check FILE --devices A..`: a verdict for every device count from A on, where
// the window argument of docs/parametric.md holds, and "inconclusive" with the reason
// where it does not.
#pragma once

#include "driver/Engines.h"
#include "driver/Pipeline.h"

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>

namespace dkv::ast {
class Module;
}

namespace dkv::driver {

/// The fragment of docs/parametric.md: a kernel on a one-axis mesh sized by a param N,
/// in which N and axis_index occur only in device ids of the form (axis_index + c) % N.
/// Its offsets' largest |c|, or nullopt with the reason (and where) it is outside.
struct Uniform {
  int64_t reach = 0; ///< r: the largest |c| of a device id
  /// The fragment UG (docs/parametric.md "Grids that grow with N"): the grid's first axis
  /// has N + g steps; the first `first` steps and the last `last` differ from the middle
  /// ones (conditions on program_id(0) compare it with constants or N + constants).
  bool growing = false;
  int64_t g = 0, first = 0, last = 0;
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
