// `dkv dump-smt`: the Z3 engine's problem as SMT-LIB2 for the `z3` command.
#pragma once

#include "semantics/Machine.h"

#include <iosfwd>
#include <string>

namespace dkv::driver {

/// `dkv dump-smt FILE --devices N [--property ID] [-o out.smt2]`: writes the encoding
/// of the instance (docs/smt.md) with the query of property `propertyId` asserted and
/// `(check-sat)` at the end, or (empty id) every property's query, each announced by
/// `(echo "ID")`, to `outPath` or to `out`. `z3 out.smt2` answers as `dkv check
/// --engine z3` does. Returns kExitOk, kExitUsage (unknown property id, unwritable
/// file) or kExitInternal (Z3 failed).
int dumpSmtCommand(const semantics::Machine &machine, const std::string &propertyId,
                   const std::string &outPath, std::ostream &out, std::ostream &err);

} // namespace dkv::driver
