// Invariant failure reporting.
#include "support/Invariant.h"

#include <cstdio>
#include <cstdlib>

namespace dkv::support {

void invariantFailed(const char *file, int line, const char *condition, const char *reason) {
  std::fprintf(stderr, "dkv: internal error: %s:%d: invariant '%s' failed: %s\n", file, line,
               condition, reason);
  std::fprintf(stderr, "dkv: this is a bug in dkv; please report it with the input file\n");
  std::fflush(stderr);
  std::abort();
}

} // namespace dkv::support
