// The spin-based commands of `dkv`: dump-promela and `check --engine spin`.
#pragma once

#include "driver/Commands.h"
#include "model/Model.h"
#include "promela/Spin.h"
#include "report/Finding.h"

#include <iosfwd>
#include <string>

namespace dkv::driver {

/// `dkv dump-promela FILE --devices N [-o out.pml]`: writes the Promela model of
/// `program` to `outPath`, or to `out` when `outPath` is empty, and a one-line hint
/// on how to run spin to `err` when writing a file. Returns kExitOk, or kExitUsage
/// when the file can't be written.
int dumpPromelaCommand(const model::Program &program, const std::string &outPath, std::ostream &out,
                       std::ostream &err);

/// The spin options that `dkv check --engine spin` takes from its command line
/// (time limit, memory limit, work directory to keep).
promela::SpinOptions spinOptionsFor(const CheckOptions &check);

/// `dkv check --engine spin`: runs promela::checkWithSpin on the instance.
report::Verdict checkWithSpinEngine(const model::Program &program, const CheckOptions &check);

} // namespace dkv::driver
