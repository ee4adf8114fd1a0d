// The schedule file (docs/executor.md): one step per line, `device D`, `send K` or
// `land K`; `#` starts a comment; blank lines are ignored; an optional `inputs SEED`
// line gives the seed of the input data. Every engine's witness can be written in it
// and replayed with `dkv run --schedule`.
#pragma once

#include "report/Finding.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dkv::semantics {

/// The text of a schedule file, with an `inputs SEED` line when given.
std::string formatSchedule(const report::Schedule &schedule,
                           std::optional<uint64_t> inputSeed = std::nullopt);

/// A parsed schedule file.
struct ScheduleFile {
  report::Schedule steps;
  std::vector<size_t> lines;         ///< the 1-based line of each step
  std::optional<uint64_t> inputSeed; ///< an `inputs SEED` line
};

/// Parses a schedule file's text. On a malformed line returns nullopt and sets
/// `errorLine` (1-based) and `error` (lowercase, no period).
std::optional<ScheduleFile> parseScheduleFile(const std::string &text, size_t &errorLine,
                                              std::string &error);

} // namespace dkv::semantics
