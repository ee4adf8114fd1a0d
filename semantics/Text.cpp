// Names the semantics uses in every text an engine prints.
#include "semantics/Text.h"

#include "support/Invariant.h"

#include <fmt/format.h>

namespace dkv::semantics {

std::string dmaName(const model::Program &program, model::DmaId k) {
  const model::Dma &dma = program.dmas[k];
  if (dma.local)
    return fmt::format("dma {} (local copy on {})", k, program.processName(dma.issuer));
  if (program.cores) // "dma 2 (device 0 core 1 -> device 0 core 0)"
    return fmt::format("dma {} ({} -> {})", k, program.processName(dma.issuer),
                       program.processName(dma.target));
  return fmt::format("dma {} (device {} -> {})", k, dma.issuer, dma.target);
}

const char *waitOriginText(model::WaitOrigin origin) {
  switch (origin) {
  case model::WaitOrigin::Wait:
    return "wait";
  case model::WaitOrigin::DmaWaitSend:
    return "wait_send";
  case model::WaitOrigin::DmaWaitRecv:
    return "wait_recv";
  case model::WaitOrigin::DmaWaitLocal:
    return "wait on a local copy";
  }
  DKV_UNREACHABLE("wait origin");
}

} // namespace dkv::semantics
