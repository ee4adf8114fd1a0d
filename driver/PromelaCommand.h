// The spin-based commands of `dkv`: dump-promela and `check --engine spin`.
#pragma once

#include "semantics/Properties.h"

#include <iosfwd>
#include <string>

namespace dkv::driver {

/// `dkv dump-promela FILE --devices N [-o out.pml]`: writes the Promela model of
/// the instance to `outPath`, or to `out` when `outPath` is empty, and a one-line hint
/// on how to run spin to `err` when writing a file. Returns kExitOk, or kExitUsage
/// when the file can't be written.
int dumpPromelaCommand(const semantics::Properties &properties, const std::string &outPath,
                       std::ostream &out, std::ostream &err);

} // namespace dkv::driver
