// Stable text form of a model::Program (`dkv model`).
#pragma once

#include "model/Model.h"

#include <iosfwd>
#include <string>

namespace dkv::model {

/// One line describing an event, e.g. "start dma 3" or "wait recv[1] >= 4096 (wait_recv)".
std::string describeEvent(const Program &program, const Event &event);

/// Prints the whole program: header, options, buffers, semaphores, DMAs, then one
/// block per device with one event per line and its source location. The output
/// is byte-identical for identical programs (golden-tested).
void printProgram(const Program &program, std::ostream &out);

} // namespace dkv::model
