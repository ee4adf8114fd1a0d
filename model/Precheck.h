// The static pre-check: findings that need no search (docs/model.md section 4).
#pragma once

#include "model/Model.h"
#include "report/Finding.h"

#include <vector>

namespace dkv::model {

/// Counts, for every device and semaphore, all increments that can ever reach it
/// (signals and DMA chunks) against the waits of that device in program order.
/// Reports a deadlock for the first wait that can never be satisfied, an exit
/// violation for a non-barrier semaphore that receives more than is ever waited,
/// and any signal to a DMA semaphore. Sound: each finding holds on every run that
/// executes the events involved. Findings carry engine "precheck" and no trace.
std::vector<report::Finding> precheck(const Program &program);

} // namespace dkv::model
