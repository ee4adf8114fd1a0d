// Python kernels: `dkv parse FILE.py` prints pyfront's AST; the other commands need the
// tracer (issue 13), which is not built yet.
#include "driver/PythonCommand.h"

#include "pyfront/AstPrinter.h"
#include "pyfront/Parser.h"
#include "support/Diagnostics.h"
#include "support/Invariant.h"

namespace dkv::driver {

bool isPythonFile(std::string_view path) {
  return path.size() > 3 && path.substr(path.size() - 3) == ".py";
}

int parsePythonCommand(const InstanceOptions &instance, std::ostream &out, std::ostream &err) {
  if (instance.devices || !instance.defines.empty()) {
    err << "dkv: error: -D and --devices do not apply to Python files yet (the tracer is not "
           "built; docs/python.md)\n";
    return support::kExitUsage;
  }
  support::SourceManager sources;
  std::string error;
  std::optional<support::FileId> id = sources.load(instance.file, error);
  if (!id) {
    err << instance.file << ": error: " << error << "\n";
    return support::kExitInputError;
  }
  support::DiagnosticEngine diags(&sources);
  std::unique_ptr<py::Module> module = pyfront::parseModule(sources.file(*id), diags);
  diags.render(err);
  if (!module || diags.hasErrors())
    return support::kExitInputError;
  pyfront::printModule(*module, out);
  return support::kExitOk;
}

} // namespace dkv::driver
