// `dkv dump-promela`: the Promela model of an instance.
#include "driver/PromelaCommand.h"

#include "driver/Commands.h"

#include "promela/Emit.h"
#include "support/Invariant.h"

#include <ostream>

namespace dkv::driver {

namespace {

std::string baseName(const std::string &path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

} // namespace

int dumpPromelaCommand(const semantics::Properties &properties, const std::string &outPath,
                       std::ostream &out, std::ostream &err) {
  const model::Program &program = properties.program();
  promela::EmitOptions options;
  options.modelFileName = outPath.empty() ? program.kernel + ".pml" : baseName(outPath);
  promela::LineMap map;
  std::string text = promela::emitPromela(properties, options, &map);
  return writeDump(text, outPath,
                   "spin -a " + outPath + " && gcc -O2 -DSAFETY -o pan pan.c && ./pan -m" +
                       std::to_string(map.depthBound),
                   out, err);
}

} // namespace dkv::driver
