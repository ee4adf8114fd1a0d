// `dkv dump-smt`: the SMT-LIB2 text of an instance's queries.
#include "driver/SmtCommand.h"

#include "smt/Smt.h"
#include "support/Invariant.h"

#include <fstream>
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
  if (outPath.empty()) {
    out << text;
    return out ? support::kExitOk : support::kExitUsage;
  }
  std::ofstream file(outPath, std::ios::binary);
  file << text;
  file.close();
  if (!file) {
    err << "dkv: cannot write " << outPath << "\n";
    return support::kExitUsage;
  }
  err << "wrote " << outPath << "; run: z3 " << outPath << "\n";
  return support::kExitOk;
}

} // namespace dkv::driver
