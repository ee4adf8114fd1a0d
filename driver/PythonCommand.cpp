// Python kernels: `dkv parse FILE.py` prints pyfront's AST; the other commands trace the
// kernel into the kernel language's AST (pytrace/) and go on as for a `.dk` file.
#include "driver/PythonCommand.h"

#include "frontend/DkPrinter.h"
#include "frontend/Sema.h"
#include "pyfront/AstPrinter.h"
#include "pyfront/Parser.h"
#include "pytrace/Tracer.h"
#include "support/Diagnostics.h"
#include "support/Invariant.h"

#include <fmt/format.h>

#include <fstream>
#include <sstream>

namespace dkv::driver {

bool isPythonFile(std::string_view path) {
  return path.size() > 3 && path.substr(path.size() - 3) == ".py";
}

int parsePythonCommand(const InstanceOptions &instance, std::ostream &out, std::ostream &err) {
  if (instance.devices || !instance.defines.empty()) {
    err << "dkv: error: -D and --devices do not apply to `dkv parse` of a Python file (it prints "
           "the Python syntax tree; `dkv translate` shows the traced kernel)\n";
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

std::unique_ptr<ast::Module> loadPythonModule(support::SourceManager &sources,
                                              const support::SourceFile &file,
                                              std::optional<int64_t> devices,
                                              support::DiagnosticEngine &diags, bool &ok,
                                              const frontend::Tables &tables) {
  ok = false;
  if (!devices) {
    diags.error({}, "python-devices",
                "a Python kernel needs --devices N: the number of devices is what "
                "jax.device_count() returns when the kernel runs, which the file does not say");
    return nullptr;
  }
  std::unique_ptr<py::Module> parsed = pyfront::parseModule(file, diags);
  if (!parsed || diags.hasErrors())
    return nullptr;
  pytrace::TraceOptions options;
  options.devices = *devices;
  options.sources = &sources;
  options.tables = tables;
  std::unique_ptr<ast::Module> module = pytrace::traceModule(*parsed, file, options, diags);
  if (!module || diags.hasErrors())
    return module;
  bool analyzed = frontend::analyze(*module, frontend::Defines{}, diags, tables);
  ok = analyzed && !diags.hasErrors();
  return module;
}

int translateCommand(const InstanceOptions &instance, const std::string &outPath, std::ostream &out,
                     std::ostream &err) {
  Loaded loaded;
  int code = load(instance, Stage::Sema, loaded, err);
  if (code != support::kExitOk)
    return code;
  std::string base = instance.file.substr(instance.file.find_last_of('/') + 1);
  bool python = isPythonFile(instance.file);
  std::ostringstream text;
  if (python)
    text << fmt::format("// {} traced by dkv for {} devices (dkv translate; docs/python.md)\n",
                        base, *instance.devices);
  auto comment = [&](const support::SourceRange &r) -> std::string {
    if (!python || r.begin.line == 0)
      return {};
    return fmt::format("{}:{}", base, r.begin.line);
  };
  frontend::printDk(*loaded.module, text, comment);
  if (outPath.empty() || outPath == "-") {
    out << text.str();
    return support::kExitOk;
  }
  std::ofstream file(outPath, std::ios::binary);
  file << text.str();
  if (!file) {
    err << "dkv: error: cannot write " << outPath << "\n";
    return support::kExitInputError;
  }
  return support::kExitOk;
}

} // namespace dkv::driver
