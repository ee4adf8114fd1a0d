// Names of finding kinds.
#include "report/Finding.h"

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

} // namespace dkv::report
