// The command line's checks, help text and errors (driver/Cli.h).
#include "driver/Cli.h"

#include "report/Render.h"
#include "report/Wrap.h"
#include "support/Suggest.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <charconv>
#include <cstdlib>
#include <ostream>
#include <string_view>
#include <sys/ioctl.h>
#include <unistd.h>

namespace dkv::driver {

namespace {

constexpr size_t kHelpWidth = 100;

std::string formatNumber(double v) {
  return v == static_cast<double>(static_cast<int64_t>(v)) ? std::to_string(static_cast<int64_t>(v))
                                                           : fmt::format("{}", v);
}

/// The long names (--x) and short names (-x) of `app`'s options, in the order they
/// were added, and of its parents (their options apply below them too).
std::vector<std::string> optionNames(const CLI::App *app) {
  std::vector<std::string> names;
  for (; app; app = app->get_parent())
    for (const CLI::Option *o : app->get_options()) {
      for (const std::string &l : o->get_lnames())
        names.push_back("--" + l);
      for (const std::string &s : o->get_snames())
        names.push_back("-" + s);
    }
  return names;
}

/// The subcommand named in argv, or null: the first word that is not an option (the
/// top level takes only --help and --version, which take no value).
CLI::App *commandOf(CLI::App &app, int argc, char **argv, std::string &first) {
  for (int i = 1; i < argc; ++i) {
    std::string word = argv[i];
    if (word.starts_with("-"))
      continue;
    first = word;
    for (CLI::App *sub : app.get_subcommands([](CLI::App *) { return true; }))
      if (sub->get_name() == word)
        return sub;
    return nullptr;
  }
  return nullptr;
}

/// CLI11's message of a ParseError in dkv's words (what follows "error: ").
std::string messageOf(const CLI::ParseError &e) {
  std::string what = e.what();
  const std::string kind = e.get_name();
  const size_t colon = what.find(": ");
  const std::string name = colon == std::string::npos ? "" : what.substr(0, colon);
  if (kind == "ValidationError" && !name.empty())
    return name + " " + what.substr(colon + 2); // "--devices takes a number ..."
  if (kind == "ArgumentMismatch" && !name.empty())
    return name + " needs a value";
  if (kind == "RequiredError") {
    if (what.starts_with("paths is required") || what.starts_with("file is required"))
      return "a kernel file is required";
    return what;
  }
  if (kind == "ConversionError" && !name.empty())
    return name + ": cannot read the value" + what.substr(colon + 1);
  return what;
}

/// `text` wrapped to `width` columns (report/Wrap.h), its lines joined by newlines.
std::string wrapText(const std::string &text, size_t width) {
  std::string out;
  for (const std::string &line : report::wrapText(text, width))
    out += (out.empty() ? "" : "\n") + line;
  return out;
}

/// Help text: an option's metavar (driver::metavar) and nothing else after its names;
/// descriptions wrapped to fit 100 columns next to the 30 of the names.
class HelpFormatter : public CLI::Formatter {
public:
  std::string make_option_opts(const CLI::Option *option) const override {
    return option->get_option_text().empty() ? "" : " " + option->get_option_text();
  }
  std::string make_option_desc(const CLI::Option *option) const override {
    return wrapText(option->get_description(), kHelpWidth - get_column_width());
  }
};

} // namespace

void useHelpFormatter(CLI::App &app) {
  auto formatter = std::make_shared<HelpFormatter>();
  formatter->label("SUBCOMMAND", "COMMAND");
  formatter->label("Subcommands", "Commands");
  app.formatter(formatter);
}

std::string wrapHelp(const std::string &text) { return wrapText(text, kHelpWidth); }

size_t textWidth() {
  if (const char *columns = std::getenv("COLUMNS")) {
    size_t value = 0;
    const std::string_view text(columns);
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec == std::errc() && ptr == text.data() + text.size() && value >= 40 && value <= 1000)
      return value;
  }
  winsize size{};
  if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col >= 40)
    return size.ws_col;
  return report::kTextWidth;
}

CLI::Validator integerIn(int64_t lo, int64_t hi) {
  return CLI::Validator(
      [lo, hi](std::string &text) -> std::string {
        int64_t value = 0;
        auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (text.empty() || ec != std::errc() || ptr != text.data() + text.size() || value < lo ||
            value > hi)
          return fmt::format("takes a number from {} to {}, got '{}'", lo, hi, text);
        return {};
      },
      "");
}

CLI::Validator numberIn(double lo, double hi) {
  return CLI::Validator(
      [lo, hi](std::string &text) -> std::string {
        char *end = nullptr;
        double value = text.empty() ? 0 : std::strtod(text.c_str(), &end);
        if (text.empty() || end != text.c_str() + text.size() || !(value >= lo && value <= hi))
          return fmt::format("takes a number from {} to {}, got '{}'", formatNumber(lo),
                             formatNumber(hi), text);
        return {};
      },
      "");
}

std::string orList(const std::vector<std::string> &names) {
  std::string text;
  for (size_t i = 0; i < names.size(); ++i)
    text += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  return text;
}

CLI::Validator oneOf(std::vector<std::string> names) {
  return CLI::Validator(
      [names](std::string &text) -> std::string {
        for (const std::string &n : names)
          if (n == text)
            return {};
        return fmt::format("takes {}{}, got '{}'{}", names.size() > 2 ? "one of " : "",
                           orList(names), text, support::didYouMean(text, names));
      },
      "");
}

CLI::Option *metavar(CLI::Option *option, const std::string &text) {
  return option->option_text(text);
}

int parseCommandLine(CLI::App &app, int argc, char **argv, std::ostream &out, std::ostream &err) {
  std::string first;
  CLI::App *command = commandOf(app, argc, argv, first);
  const std::string who = command ? "dkv " + command->get_name() : "dkv";
  const std::string help = command ? "dkv " + command->get_name() + " --help" : "dkv --help";
  auto fail = [&](const std::string &message) {
    err << who << ": error: " << message << "\n"
        << "(" << help << (command ? " lists its options" : " lists the commands") << ")\n";
    return 1;
  };
  std::vector<std::string> commands;
  for (CLI::App *sub : app.get_subcommands([](CLI::App *) { return true; }))
    commands.push_back(sub->get_name());
  if (!command && !first.empty())
    return fail(fmt::format("no command '{}'{}", first, support::didYouMean(first, commands)));
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp &e) {
    return app.exit(e, out, err) == 0 ? 0 : 1;
  } catch (const CLI::CallForAllHelp &e) {
    return app.exit(e, out, err) == 0 ? 0 : 1;
  } catch (const CLI::CallForVersion &e) {
    return app.exit(e, out, err) == 0 ? 0 : 1;
  } catch (const CLI::RequiredError &e) {
    if (!command)
      return fail("a command is required: " + orList(commands));
    return fail(messageOf(e));
  } catch (const CLI::ParseError &e) {
    return fail(messageOf(e));
  }
  if (!command)
    return fail("a command is required: " + orList(commands));
  // Words the command did not take: an unknown option (with the closest known one), or
  // a word too many.
  for (const std::string &word : command->remaining()) {
    if (word.starts_with("-") && word.size() > 1) {
      std::string name = word.substr(0, word.find('='));
      return fail(fmt::format("unknown option '{}'{}", name,
                              name.starts_with("--")
                                  ? support::didYouMean(name, optionNames(command))
                                  : std::string()));
    }
  }
  if (!command->remaining().empty())
    return fail(fmt::format("unexpected argument '{}'", command->remaining().front()));
  return -1;
}

} // namespace dkv::driver
