// The schedule file format.
#include "semantics/Schedule.h"

#include <fmt/format.h>

#include <sstream>

namespace dkv::semantics {

using report::ScheduleStep;

std::string formatSchedule(const report::Schedule &schedule, std::optional<uint64_t> inputSeed) {
  std::string out = "# dkv schedule: one step per line (device D | send K | land K)\n";
  if (inputSeed)
    out += fmt::format("inputs {}\n", *inputSeed);
  for (const ScheduleStep &step : schedule)
    out += report::scheduleStepText(step) + "\n";
  return out;
}

std::optional<ScheduleFile> parseScheduleFile(const std::string &text, size_t &errorLine,
                                              std::string &error) {
  ScheduleFile out;
  std::istringstream in(text);
  std::string raw;
  size_t line = 0;
  while (std::getline(in, raw)) {
    ++line;
    std::string content = raw.substr(0, raw.find('#'));
    std::istringstream words(content);
    std::string kind, id, extra;
    if (!(words >> kind))
      continue;
    if (kind == "inputs") {
      std::string seed;
      if (!(words >> seed) || seed.find_first_not_of("0123456789") != std::string::npos ||
          seed.size() > 19 || (words >> extra)) {
        errorLine = line;
        error = "'inputs' needs one non-negative number (the input seed)";
        return std::nullopt;
      }
      out.inputSeed = std::stoull(seed);
      continue;
    }
    ScheduleStep step;
    if (kind == "device")
      step.kind = ScheduleStep::Kind::Device;
    else if (kind == "send")
      step.kind = ScheduleStep::Kind::Send;
    else if (kind == "land")
      step.kind = ScheduleStep::Kind::Land;
    else {
      errorLine = line;
      error = fmt::format("unknown step '{}' (expected 'device D', 'send K' or 'land K')", kind);
      return std::nullopt;
    }
    if (!(words >> id) || id.find_first_not_of("0123456789") != std::string::npos ||
        id.size() > 9) {
      errorLine = line;
      error = fmt::format("'{}' needs a non-negative number", kind);
      return std::nullopt;
    }
    if (words >> extra) {
      errorLine = line;
      error = fmt::format("unexpected '{}' after the step", extra);
      return std::nullopt;
    }
    step.id = static_cast<int32_t>(std::stol(id));
    out.steps.push_back(step);
    out.lines.push_back(line);
  }
  return out;
}

} // namespace dkv::semantics
