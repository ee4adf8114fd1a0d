// Names of finding kinds and schedule steps.
#include "report/Finding.h"

#include <fmt/format.h>

namespace dkv::report {

const char *findingKindName(FindingKind kind) {
  switch (kind) {
  case FindingKind::Race:
    return "race";
  case FindingKind::Deadlock:
    return "deadlock";
  case FindingKind::ExitViolation:
    return "exit-violation";
  case FindingKind::LifetimeViolation:
    return "lifetime-violation";
  }
  return "unknown";
}

std::string scheduleStepText(const ScheduleStep &step) {
  switch (step.kind) {
  case ScheduleStep::Kind::Device:
    return fmt::format("device {}", step.id);
  case ScheduleStep::Kind::Send:
    return fmt::format("send {}", step.id);
  case ScheduleStep::Kind::Land:
    return fmt::format("land {}", step.id);
  }
  return "?";
}

} // namespace dkv::report
