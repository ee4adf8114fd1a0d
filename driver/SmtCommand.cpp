// `dkv dump-smt`: the SMT-LIB2 text of an instance's queries.
#include "driver/SmtCommand.h"

#include "driver/Commands.h"

#include "smt/Smt.h"
#include "support/Invariant.h"

#include <ostream>

namespace dkv::driver {

int dumpSmtCommand(const semantics::Machine &machine, const std::string &propertyId,
                   const std::string &outPath, std::ostream &out, std::ostream &err) {
  std::optional<semantics::PropertyIndex> property;
  if (!propertyId.empty()) {
    property = machine.properties().find(propertyId);
    if (!property) {
      err << "dkv: error: the instance has no property '" << propertyId
          << "' (`dkv properties` lists them)\n";
      return support::kExitUsage;
    }
  }
  std::string text, error;
  if (!smt::dumpSmt2(machine, property, text, error)) {
    err << "dkv: internal error: " << error << "\n";
    return support::kExitInternal;
  }
  return writeDump(text, outPath, "z3 " + outPath, out, err);
}

} // namespace dkv::driver
