// ANSI colours for text reports (see Color.h).
#include "support/Color.h"

#include <cstdlib>
#include <unistd.h>

namespace dkv::support {

namespace {

constexpr std::string_view kReset = "\033[0m";
constexpr std::string_view kBold = "\033[1m";
constexpr std::string_view kRed = "\033[1;31m";
constexpr std::string_view kGreen = "\033[1;32m";
constexpr std::string_view kYellow = "\033[1;33m";
constexpr std::string_view kMagenta = "\033[1;35m";
constexpr std::string_view kCyan = "\033[1;36m";
constexpr std::string_view kPlainCyan = "\033[36m";

std::string paint(std::string_view color, std::string_view text) {
  return std::string(color) + std::string(text) + std::string(kReset);
}

/// The colour of a heading label, or empty when `label` is none.
std::string_view labelColor(std::string_view label) {
  if (label == "error" || label == "race" || label == "deadlock" || label == "exit-violation" ||
      label == "lifetime-violation")
    return kRed;
  if (label == "warning")
    return kMagenta;
  if (label == "note")
    return kCyan;
  if (label == "fix") // a verified fix-it, green as compilers' fix-its
    return kGreen;
  return {};
}

/// `LOC: LABEL: message` (LOC has no blank: "file:3:4", "file") or `LABEL: message`.
bool heading(std::string_view line, std::string &out) {
  size_t start = 0;
  // The location ends at the first ": " and contains no blank.
  size_t sep = line.find(": ");
  if (sep == std::string_view::npos)
    return false;
  std::string_view first = line.substr(0, sep);
  if (!labelColor(first).empty()) { // no location: "error: ..."
    out = paint(labelColor(first), first) + ":" + paint(kBold, line.substr(sep + 1));
    return true;
  }
  if (first.find(' ') != std::string_view::npos || first.empty())
    return false;
  start = sep + 2;
  size_t labelEnd = line.find(": ", start);
  if (labelEnd == std::string_view::npos)
    return false;
  std::string_view label = line.substr(start, labelEnd - start);
  if (labelColor(label).empty())
    return false;
  out = paint(kBold, line.substr(0, sep + 1)) + " " +
        paint(labelColor(label), std::string(label) + ":") +
        paint(kBold, line.substr(labelEnd + 1));
  return true;
}

std::string colorLine(std::string_view line) {
  std::string out;
  if (heading(line, out))
    return out;
  size_t blank = line.find_first_not_of(' ');
  if (blank != std::string_view::npos && line[blank] == '^' &&
      line.find_first_not_of("^~", blank) == std::string_view::npos)
    return std::string(line.substr(0, blank)) + paint(kGreen, line.substr(blank));
  for (std::string_view label : {"  witness:", "    witness:", "  wrong value:", "  suppressed:",
                                 "  no verified fix:", "  at "})
    if (line.substr(0, label.size()) == label)
      return paint(kPlainCyan, label) + std::string(line.substr(label.size()));
  if (line.substr(0, 9) == "  trace (" || line.substr(0, 11) == "  trace of ")
    return paint(kPlainCyan, line);
  if (line.substr(0, 11) == "  explain [") {
    size_t colon = line.find("]: ");
    if (colon != std::string_view::npos)
      return paint(kPlainCyan, line.substr(0, colon + 2)) + paint(kBold, line.substr(colon + 2));
  }
  if (line.substr(0, 9) == "verified:")
    return paint(kGreen, "verified:") + std::string(line.substr(9));
  if (line.substr(0, 13) == "inconclusive:")
    return paint(kYellow, "inconclusive:") + std::string(line.substr(13));
  if (line.substr(0, 15) == "internal error:")
    return paint(kRed, "internal error:") + std::string(line.substr(15));
  if (line.substr(0, 8) == "summary:")
    return paint(kBold, "summary:") + std::string(line.substr(8));
  if (line.substr(0, 3) == "== ")
    return paint(kBold, line);
  // "3 findings (engine ...)", "1 finding, 1 suppressed (engine ...)".
  if (size_t word = line.find(" finding");
      word != std::string_view::npos && word > 0 && line.find_first_not_of("0123456789") == word) {
    size_t end = line.find(" (");
    return paint(kRed, line.substr(0, end)) +
           std::string(end == std::string_view::npos ? "" : line.substr(end));
  }
  return std::string(line);
}

} // namespace

std::string colorize(std::string_view text) {
  std::string out;
  size_t begin = 0;
  while (begin < text.size()) {
    size_t end = text.find('\n', begin);
    bool newline = end != std::string_view::npos;
    if (!newline)
      end = text.size();
    out += colorLine(text.substr(begin, end - begin));
    if (newline)
      out += '\n';
    begin = end + 1;
  }
  return out;
}

bool colorWanted(const std::string &mode, int fd) {
  if (mode == "always")
    return true;
  if (mode != "auto")
    return false;
  const char *noColor = std::getenv("NO_COLOR");
  if (noColor && *noColor)
    return false;
  return isatty(fd) == 1;
}

} // namespace dkv::support
