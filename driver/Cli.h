// The command line's friendly side: value checks that say what they take, help text
// without CLI11's internals, and "did you mean" for commands, options and values
// (support/Suggest.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace CLI {
class App;
class Option;
class Validator;
} // namespace CLI

namespace dkv::driver {

/// A check that the value is an integer from `lo` to `hi`: "takes a number from 1 to
/// 4096, got 'two'" otherwise. No description in the help (the option's text says it).
CLI::Validator integerIn(int64_t lo, int64_t hi);
/// The same for a decimal number (seconds).
CLI::Validator numberIn(double lo, double hi);
/// A check that the value is one of `names`: "takes one of text, json or sarif, got
/// 'jsn'; did you mean 'json'?" otherwise.
CLI::Validator oneOf(std::vector<std::string> names);

/// "a, b or c".
std::string orList(const std::vector<std::string> &names);

/// Gives `option` the help text `metavar` in place of CLI11's type and check names
/// ("N" instead of "INT:INT in [1 - 4096]", "any|link" instead of "ENUM:value in
/// {any->0,link->1}").
CLI::Option *metavar(CLI::Option *option, const std::string &text);

/// Makes `app`'s help (and that of the subcommands added after) show each option's
/// metavar and nothing of CLI11's own (types, checks, "Excludes:").
void useHelpFormatter(CLI::App &app);
/// `text` wrapped at spaces to the help's width (100 columns), for a footer.
std::string wrapHelp(const std::string &text);

/// The columns the text report fits its traces to (report::renderTrace): the
/// environment's COLUMNS when it is a number from 40 to 1000, else the terminal's width
/// when standard output is a terminal, else report::kTextWidth (100). A report written
/// to a pipe or a file is so the same wherever it runs, unless COLUMNS is set.
size_t textWidth();

/// Parses the command line with `app` (whose subcommands allow extras, so that an
/// unknown option is ours to report). Returns -1 when the command should run, else the
/// exit code: 0 after --help or --version (printed on `out`), 1 (usage) after an error
/// message on `err`: an unknown command, option or value with the closest known one
/// ("dkv: error: no command 'chek'; did you mean 'check'?", "dkv check: error: unknown
/// option '--device'; did you mean '--devices'?"), a bad value, a missing argument.
int parseCommandLine(CLI::App &app, int argc, char **argv, std::ostream &out, std::ostream &err);

} // namespace dkv::driver
