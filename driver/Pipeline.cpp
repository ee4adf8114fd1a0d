// The linear pipeline: read, parse, analyse, lower, verify. Every subcommand uses it.
#include "driver/Pipeline.h"

#include "driver/PythonCommand.h"

#include "frontend/AST.h"
#include "frontend/Frontend.h"
#include "lower/Lower.h"
#include "model/Verifier.h"
#include "support/Invariant.h"

#include <ostream>

namespace dkv::driver {

Loaded::Loaded() = default;
Loaded::~Loaded() = default;
Loaded::Loaded(Loaded &&) noexcept = default;
Loaded &Loaded::operator=(Loaded &&) noexcept = default;

int load(const InstanceOptions &options, Stage stage, Loaded &out, std::ostream &err) {
  frontend::Defines defines;
  std::string error;
  for (const std::string &d : options.defines) {
    if (!frontend::parseDefine(d, defines, error)) {
      err << "dkv: error: " << error << "\n";
      return support::kExitUsage;
    }
  }
  frontend::MeshSizes mesh;
  if (!options.mesh.empty() && !frontend::parseMeshSizes(options.mesh, mesh, error)) {
    err << "dkv: error: --mesh: " << error << "\n";
    return support::kExitUsage;
  }
  std::optional<support::FileId> id = out.sources.load(options.file, error);
  if (!id) {
    err << options.file << ": error: " << error << "\n";
    out.diagnostics.push_back(
        support::Diagnostic{support::Severity::Error, {}, error, "unreadable-file", {}});
    return support::kExitInputError;
  }
  support::DiagnosticEngine diags(&out.sources);
  if (isPythonFile(options.file)) {
    diags.error({}, "python-not-traced",
                "Python kernels can only be parsed so far (`dkv parse` prints their syntax "
                "tree); tracing them into a model is not built yet (docs/python.md)");
    diags.render(err);
    out.diagnostics = diags.diagnostics();
    return support::kExitInputError;
  }

  bool ok = false;
  out.module =
      frontend::loadModule(out.sources.file(*id), defines, options.devices, mesh, diags, ok);
  if (!ok) {
    diags.render(err);
    out.diagnostics = diags.diagnostics();
    return support::kExitInputError;
  }
  if (stage == Stage::Sema) {
    diags.render(err); // warnings
    out.diagnostics = diags.diagnostics();
    return support::kExitOk;
  }

  std::optional<model::Program> program =
      lower::lower(*out.module, options.file, options.model, diags);
  diags.render(err); // errors and warnings
  out.diagnostics = diags.diagnostics();
  if (!program || diags.hasErrors())
    return support::kExitInputError;

  std::vector<std::string> problems = model::verifyProgram(*program);
  if (!problems.empty()) {
    err << "dkv: internal error: the lowered model is malformed:\n";
    for (const std::string &p : problems)
      err << "  " << p << "\n";
    return support::kExitInternal;
  }
  out.instance = std::make_unique<semantics::Instance>(std::move(*program));
  return support::kExitOk;
}

} // namespace dkv::driver
