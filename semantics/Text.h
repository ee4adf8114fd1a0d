// Names the semantics uses in every text an engine prints: DMAs and wait origins.
#pragma once

#include "model/Model.h"

#include <string>

namespace dkv::semantics {

/// "dma 3 (device 0 -> 1)" or "dma 3 (local copy on device 0)".
std::string dmaName(const model::Program &program, model::DmaId k);
/// "wait", "wait_send", "wait_recv" or "wait on a local copy".
const char *waitOriginText(model::WaitOrigin origin);

} // namespace dkv::semantics
