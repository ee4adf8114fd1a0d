// Verified fixes (docs/explain.md "Verified fixes"): for a root cause, a small space of
// local repairs of the kernel source, each re-checked with the same engine and options
// at the instances of the kernel; a repair is kept only if it verifies.
#pragma once

#include "driver/Engines.h"
#include "driver/Pipeline.h"
#include "report/Finding.h"
#include "report/RootCause.h"
#include "support/Stop.h"

#include <optional>
#include <string>
#include <vector>

namespace dkv::driver {

/// One instance of the kernel file: how to load it, and what it gave (`loaded` and
/// `verdict` null when it did not load: the fix search skips it).
struct FixInstance {
  InstanceOptions options;
  const Loaded *loaded = nullptr;
  const report::Verdict *verdict = nullptr;
};

/// The outcome of the search for one root cause: a verified fix, or why there is none.
struct FixOutcome {
  std::optional<report::Fix> fix;
  std::string noFix;
};

/// The bounds of the search (docs/explain.md "Verified fixes"): at most kMaxRepairs
/// repairs per root cause, each checked at every instance of the file that loaded
/// (stopping at the first that does not verify), the first repair that verifies kept.
inline constexpr size_t kMaxRepairs = 6;
/// At most this many root causes of one file get a search (the others: "not searched").
inline constexpr size_t kMaxSearchedCauses = 8;

/// The `// dkv: allow KIND -- reason` comments of the checked file (the parser has
/// checked their form): what `dkv check` and the fix search accept.
std::vector<report::Suppression> suppressionsOf(const Loaded &loaded);

/// Searches a verified fix of `cause` (a root cause of the file of `instances`, as
/// report::fileCauses found it over `reports`, which are `instances` in order). `stop`
/// is the search's stop request (its time limit, the memory ceiling, a signal): once it
/// is made, no repair is checked further and the outcome says why.
FixOutcome searchFix(const report::FileCause &cause,
                     const std::vector<report::InstanceReport> &reports,
                     const std::vector<FixInstance> &instances, const CheckOptions &check,
                     support::StopToken *stop);

/// `dkv fix FILE`: checks FILE like `dkv check FILE` (the same instance options, or its
/// annotations with --devices-from-annotations) and writes the file with the verified
/// fixes of every root cause applied (to FILE, or to `output`), or nothing when a fix
/// is missing (never a part); prints what it did. Exit code: 0 when the fixed kernel
/// verifies (or there was nothing to fix), 10 when some root causes have no verified fix
/// (nothing written), else the check's.
int fixCommand(const std::vector<std::string> &paths, const InstanceOptions &base,
               const CheckOptions &check, const std::string &output, std::ostream &out,
               std::ostream &err);

} // namespace dkv::driver
