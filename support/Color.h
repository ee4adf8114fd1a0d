// Colours for text reports on a terminal (`dkv check --color`), the way compilers do
// it: applied to the finished plain text, line by line, so every renderer stays
// colour-free and JSON and SARIF can never get an escape code.
#pragma once

#include <string>
#include <string_view>

namespace dkv::support {

/// `text` with ANSI SGR codes added (every line is reset at its end):
///   `LOC: LABEL: message` headings: the location bold, the label bold and coloured
///   (error and the finding kinds red, warning magenta, note cyan), the message bold;
///   caret lines (`  ^`) bold green; the `witness:`, `wrong value:`, `suppressed:`,
///   `trace (...)`, `explain [ID]:` labels of a finding cyan; `verified:` bold green,
///   `N finding(s)` bold red, `inconclusive:` bold yellow, `internal error:` bold red;
///   `== instance ==` headers and the `summary:` label bold. Other lines are unchanged.
std::string colorize(std::string_view text);

/// Whether `--color MODE` colours the stream on file descriptor `fd`: "always" yes,
/// "never" no, "auto" when `fd` is a terminal and the environment variable NO_COLOR is
/// unset or empty (https://no-color.org: a command-line flag overrides NO_COLOR).
bool colorWanted(const std::string &mode, int fd);

} // namespace dkv::support
