// "Did you mean": the known name closest to a misspelt one, for every front door of
// dkv (the command line's commands, options and values, the kernel language's names
// and functions, the Python frontend's API names), so that all of them suggest alike.
//
// The rule is CPython's (Python/suggestions.c, the "Did you mean" of NameError and
// AttributeError since 3.10), which rustc's `find_best_match_for_name` resembles:
//   - distance: Levenshtein over bytes where inserting, deleting or replacing a
//     character costs 2 and replacing a letter by itself in the other case costs 1
//     (`rigth` -> `right` is 4: two replacements; `Right` -> `right` is 1);
//   - a candidate is close enough when its distance is at most
//     (|name| + |candidate| + 3) * 2 / 6 (integer division: about a third of the
//     characters involved may change); names or candidates longer than 40 bytes after
//     their common prefix and suffix are removed are never close;
//   - the closest candidate wins; of equally close ones, the first in the order given
//     (callers pass a fixed order, so the suggestion is deterministic); a candidate
//     equal to `name` is skipped (the caller has its own message for a known name used
//     in the wrong place).
//
// Wording, after CPython ("name 'rigth' is not defined. Did you mean: 'right'?") and
// rustc ("help: a local variable with a similar name exists: `right`"), in dkv's
// diagnostic style (one line, lowercase, no period): the message of the error, then
// didYouMean()'s "; did you mean 'right'?".
//
// Use from the Python frontend (a make_async_remote_copyy call):
//   std::vector<std::string_view> api = {...every pltpu name...};
//   diags.error(range, "unknown-name",
//               fmt::format("module 'pltpu' has no attribute '{}'{}", name,
//                           support::didYouMean(name, api)));
#pragma once

#include <cstddef>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace dkv::support {

/// The largest length (bytes, after the common prefix and suffix are removed) that
/// editDistance compares; longer strings are never close.
inline constexpr size_t kMaxSuggestLength = 40;

/// CPython's edit distance between `a` and `b` (see above): 2 per insertion, deletion
/// or replacement, 1 per replacement of a letter by the same letter in the other case.
/// Returns a value above `maxCost` as soon as the distance is known to exceed it (then
/// the value is only "too far", not the distance), and for strings longer than
/// kMaxSuggestLength after their common prefix and suffix are removed.
size_t editDistance(std::string_view a, std::string_view b, size_t maxCost);

/// The largest distance at which `candidate` is suggested for `name`:
/// (|name| + |candidate| + 3) * 2 / 6.
size_t suggestThreshold(std::string_view name, std::string_view candidate);

/// The candidate closest to `name` within its threshold, or nullopt when none is
/// close enough (or `candidates` is empty). Candidates equal to `name` are skipped;
/// ties go to the earliest candidate.
std::optional<std::string> closestName(std::string_view name,
                                       std::span<const std::string_view> candidates);
std::optional<std::string> closestName(std::string_view name,
                                       std::span<const std::string> candidates);
std::optional<std::string> closestName(std::string_view name,
                                       std::initializer_list<std::string_view> candidates);

/// "; did you mean 'X'?" for the closest candidate X, or "" when there is none: the
/// tail of an error message ("unknown name 'rigth'; did you mean 'right'?").
std::string didYouMean(std::string_view name, std::span<const std::string_view> candidates);
std::string didYouMean(std::string_view name, std::span<const std::string> candidates);
std::string didYouMean(std::string_view name, std::initializer_list<std::string_view> candidates);

} // namespace dkv::support
