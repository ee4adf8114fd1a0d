// Text wrapping that cuts nothing (report/Wrap.h).
#include "report/Wrap.h"

#include <algorithm>

namespace dkv::report {

namespace {

/// True when the space at `at` is better not broken at: before a source line (`@17`), a
/// number (`+= 32`, `line 17`), a `=` or a `+`.
bool glued(const std::string &text, size_t at) {
  const char next = at + 1 < text.size() ? text[at + 1] : ' ';
  return next == '@' || next == '=' || next == '+' || (next >= '0' && next <= '9');
}

} // namespace

std::vector<std::string> wrapText(const std::string &text, size_t width) {
  std::vector<std::string> lines;
  width = std::max<size_t>(width, 1);
  size_t pos = 0;
  while (pos < text.size()) {
    if (text.size() - pos <= width) {
      lines.push_back(text.substr(pos));
      break;
    }
    // The last space that fits, not a glued one if another fits.
    size_t space = text.rfind(' ', pos + width);
    while (space != std::string::npos && space > pos && glued(text, space))
      space = text.rfind(' ', space - 1);
    if (space == std::string::npos || space <= pos)
      space = text.rfind(' ', pos + width); // only glued spaces: take the last one
    const size_t end = space != std::string::npos && space > pos ? space : pos + width;
    lines.push_back(text.substr(pos, end - pos));
    pos = end;
    while (pos < text.size() && text[pos] == ' ')
      ++pos;
  }
  if (lines.empty())
    lines.push_back("");
  return lines;
}

} // namespace dkv::report
