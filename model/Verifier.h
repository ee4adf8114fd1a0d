// Structural checks of a lowered model: an internal consistency gate between
// lowering and the engines.
#pragma once

#include "model/Model.h"

#include <string>
#include <vector>

namespace dkv::model {

/// Checks that every id is in range, every region lies inside its buffer and has the
/// buffer's rank, every DMA is started exactly once by its issuer with matching
/// chunk units and semaphore kinds, every wait names a semaphore of its device,
/// invocations are well nested, and stores pair element counts correctly.
/// Returns one message per problem (empty when the program is well formed). A
/// problem here is a dkv bug, not a user error.
std::vector<std::string> verifyProgram(const Program &program);

} // namespace dkv::model
