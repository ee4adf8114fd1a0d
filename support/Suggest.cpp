// "Did you mean": CPython's edit distance and threshold (support/Suggest.h).
#include "support/Suggest.h"

#include <algorithm>
#include <cstdint>
#include <limits>

namespace dkv::support {

namespace {

constexpr size_t kMoveCost = 2; // insert, delete, replace
constexpr size_t kCaseCost = 1; // replace a letter by itself in the other case

char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

size_t replaceCost(char a, char b) {
  if (a == b)
    return 0;
  return lower(a) == lower(b) ? kCaseCost : kMoveCost;
}

template <typename Candidates>
std::optional<std::string> closest(std::string_view name, const Candidates &candidates) {
  std::optional<std::string> best;
  size_t bestDistance = std::numeric_limits<size_t>::max();
  for (const auto &c : candidates) {
    std::string_view candidate(c);
    if (candidate == name)
      continue;
    // Only strictly closer candidates replace the best, so ties keep the earliest.
    size_t limit = std::min(suggestThreshold(name, candidate), bestDistance - 1);
    size_t d = editDistance(name, candidate, limit);
    if (d <= limit) {
      best = std::string(candidate);
      bestDistance = d;
    }
  }
  return best;
}

template <typename Candidates>
std::string mean(std::string_view name, const Candidates &candidates) {
  std::optional<std::string> best = closest(name, candidates);
  return best ? "; did you mean '" + *best + "'?" : std::string();
}

} // namespace

size_t editDistance(std::string_view a, std::string_view b, size_t maxCost) {
  // The common prefix and suffix cost nothing.
  while (!a.empty() && !b.empty() && a.front() == b.front()) {
    a.remove_prefix(1);
    b.remove_prefix(1);
  }
  while (!a.empty() && !b.empty() && a.back() == b.back()) {
    a.remove_suffix(1);
    b.remove_suffix(1);
  }
  if (a.empty() || b.empty())
    return (a.size() + b.size()) * kMoveCost;
  const size_t tooFar = maxCost == std::numeric_limits<size_t>::max() ? maxCost : maxCost + 1;
  if (a.size() > kMaxSuggestLength || b.size() > kMaxSuggestLength)
    return tooFar;
  if (b.size() < a.size())
    std::swap(a, b); // the row is over the shorter string
  // The length difference alone costs this much.
  if ((b.size() - a.size()) * kMoveCost > maxCost)
    return tooFar;
  // One row of the usual dynamic programme: row[i] is the distance between the first
  // i characters of `a` and the part of `b` seen so far.
  std::vector<size_t> row(a.size() + 1);
  for (size_t i = 0; i <= a.size(); ++i)
    row[i] = i * kMoveCost;
  for (size_t j = 1; j <= b.size(); ++j) {
    size_t diagonal = row[0];
    row[0] = j * kMoveCost;
    size_t smallest = row[0];
    for (size_t i = 1; i <= a.size(); ++i) {
      const size_t above = row[i];
      row[i] = std::min(
          {above + kMoveCost, row[i - 1] + kMoveCost, diagonal + replaceCost(a[i - 1], b[j - 1])});
      diagonal = above;
      smallest = std::min(smallest, row[i]);
    }
    // Every later row is at least this row's minimum.
    if (smallest > maxCost)
      return tooFar;
  }
  return row[a.size()];
}

size_t suggestThreshold(std::string_view name, std::string_view candidate) {
  return (name.size() + candidate.size() + 3) * kMoveCost / 6;
}

std::optional<std::string> closestName(std::string_view name,
                                       std::span<const std::string_view> candidates) {
  return closest(name, candidates);
}
std::optional<std::string> closestName(std::string_view name,
                                       std::span<const std::string> candidates) {
  return closest(name, candidates);
}
std::optional<std::string> closestName(std::string_view name,
                                       std::initializer_list<std::string_view> candidates) {
  return closest(name, candidates);
}

std::string didYouMean(std::string_view name, std::span<const std::string_view> candidates) {
  return mean(name, candidates);
}
std::string didYouMean(std::string_view name, std::span<const std::string> candidates) {
  return mean(name, candidates);
}
std::string didYouMean(std::string_view name, std::initializer_list<std::string_view> candidates) {
  return mean(name, candidates);
}

} // namespace dkv::support
