// Reading pan's output and spin's trail replay, and mapping them back to the kernel.
#include "promela/Replay.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <sstream>

namespace dkv::promela {

namespace {

bool startsWith(const std::string &s, const std::string &prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

std::string trimLeft(const std::string &s) {
  size_t i = s.find_first_not_of(" \t");
  return i == std::string::npos ? std::string() : s.substr(i);
}

/// The word right before `marker` in `line` (e.g. "202001" in "  202001 states,
/// stored"); empty when there is none.
std::string wordBefore(const std::string &line, const std::string &marker) {
  size_t pos = line.find(marker);
  if (pos == std::string::npos)
    return {};
  std::string head = line.substr(0, pos);
  size_t end = head.find_last_not_of(" \t");
  if (end == std::string::npos)
    return {};
  size_t begin = head.find_last_of(" \t,", end);
  begin = begin == std::string::npos ? 0 : begin + 1;
  return head.substr(begin, end + 1 - begin);
}

/// The count right before `marker`, as pan prints it with "%9g": an integer up to
/// 999999, above that six significant digits with an exponent ("1.04858e+06"), which
/// sets `rounded` (the count is then pan's rounding, not exact).
int64_t countBefore(const std::string &line, const std::string &marker, bool &rounded) {
  const std::string word = wordBefore(line, marker);
  if (word.empty())
    return -1;
  if (word.find_first_of("eE.") != std::string::npos)
    rounded = true;
  return std::llround(std::strtod(word.c_str(), nullptr));
}

/// The integer right after `marker` in `line` (e.g. "depth reached 12").
int64_t numberAfter(const std::string &line, const std::string &marker) {
  size_t pos = line.find(marker);
  if (pos == std::string::npos)
    return -1;
  return std::strtoll(line.c_str() + pos + marker.size(), nullptr, 10);
}

} // namespace

PanReport parsePanOutput(const std::string &text) {
  PanReport r;
  std::istringstream in(text);
  std::string raw;
  while (std::getline(in, raw)) {
    std::string line = trimLeft(raw);
    if (startsWith(line, "pan:") && line.find("assertion violated") != std::string::npos) {
      r.assertionViolated = true;
      size_t begin = line.find("assertion violated") + std::string("assertion violated").size();
      size_t end = line.rfind(" (at depth");
      if (end != std::string::npos && end > begin)
        r.assertionText = trimLeft(line.substr(begin, end - begin));
    }
    if (startsWith(line, "pan:") && line.find("invalid end state") != std::string::npos)
      r.invalidEndState = true;
    if (line.find("max search depth too small") != std::string::npos)
      r.depthTooSmall = true;
    if (line.find("out of memory") != std::string::npos ||
        line.find("-DMEMLIM bound") != std::string::npos)
      r.outOfMemory = true;
    if (line.find("Search not completed") != std::string::npos)
      r.searchNotCompleted = true;
    if (startsWith(line, "State-vector")) {
      r.sawSummary = true;
      r.stateVectorBytes = numberAfter(line, "State-vector ");
      r.depthReached = numberAfter(line, "depth reached ");
      r.errors = numberAfter(line, "errors: ");
    }
    if (line.find("states, stored") != std::string::npos)
      r.statesStored = countBefore(line, "states, stored", r.countsRounded);
    if (line.find("states, matched") != std::string::npos)
      r.statesMatched = countBefore(line, "states, matched", r.countsRounded);
    if (line.find("transitions (= stored+matched)") != std::string::npos)
      r.transitions = countBefore(line, "transitions", r.countsRounded);
    if (line.find("total actual memory usage") != std::string::npos)
      r.memoryMb = std::strtod(line.c_str(), nullptr);
    if (startsWith(line, "pan: elapsed time"))
      r.elapsedSeconds =
          std::strtod(line.c_str() + std::string("pan: elapsed time").size(), nullptr);
  }
  return r;
}

report::Schedule toSchedule(const std::vector<ReplayStep> &steps) {
  report::Schedule schedule;
  schedule.reserve(steps.size());
  for (const ReplayStep &step : steps) {
    report::ScheduleStep out;
    switch (step.kind) {
    case ReplayStep::Kind::Device:
      out.kind = report::ScheduleStep::Kind::Device;
      break;
    case ReplayStep::Kind::Send:
      out.kind = report::ScheduleStep::Kind::Send;
      break;
    case ReplayStep::Kind::Land:
      out.kind = report::ScheduleStep::Kind::Land;
      break;
    }
    out.id = step.id;
    schedule.push_back(out);
  }
  return schedule;
}

Replay parseReplay(const std::string &text) {
  Replay replay;
  std::istringstream in(text);
  std::string raw;
  while (std::getline(in, raw)) {
    std::string line = trimLeft(raw);
    if (startsWith(line, "DKV ")) {
      std::istringstream fields(line.substr(4));
      std::string kind;
      ReplayStep step;
      fields >> kind >> step.id;
      if (!fields)
        continue;
      if (kind == "d") {
        step.kind = ReplayStep::Kind::Device;
        fields >> step.event;
        if (!fields)
          continue;
      } else if (kind == "s") {
        step.kind = ReplayStep::Kind::Send;
      } else if (kind == "l") {
        step.kind = ReplayStep::Kind::Land;
      } else {
        continue;
      }
      replay.steps.push_back(step);
      continue;
    }
    // "spin: model.pml:42, Error: assertion violated"
    size_t error = line.find(", Error: assertion violated");
    if (startsWith(line, "spin: ") && error != std::string::npos && replay.assertLine == 0) {
      std::string where = line.substr(6, error - 6);
      size_t colon = where.rfind(':');
      if (colon != std::string::npos)
        replay.assertLine = std::atoi(where.c_str() + colon + 1);
    }
    const std::string textMarker = "spin: text of failed assertion: ";
    if (startsWith(line, textMarker) && replay.assertText.empty())
      replay.assertText = line.substr(textMarker.size());
  }
  return replay;
}

} // namespace dkv::promela
