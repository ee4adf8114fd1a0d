// Python kernels: `dkv parse FILE.py` prints pyfront's AST; the other commands trace the
// kernel into the kernel language's AST (pytrace/) and go on as for a `.dk` file.
#include "driver/PythonCommand.h"

#include "driver/Output.h"

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
  if (instance.devices || !instance.defines.empty() || !instance.directives.empty()) {
    err << "dkv: error: -D, --devices and --directives do not apply to `dkv parse` of a Python "
           "file (it prints the Python syntax tree; `dkv translate` shows the traced kernel)\n";
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
    return diags.errorExitCode();
  pyfront::printModule(*module, out);
  return support::kExitOk;
}

namespace {

int64_t meshDevices(const frontend::MeshSizes &mesh) {
  int64_t n = 1;
  for (const auto &axis : mesh)
    n *= axis.second;
  return n;
}

/// The device count and the entry's mesh, in rising precedence: the directives, then
/// the command line (docs/python.md "Directives"). False after an error.
bool resolveDevices(const pytrace::Directives &d, std::optional<int64_t> devices,
                    const frontend::MeshSizes &cliMesh, pytrace::TraceOptions &options,
                    support::DiagnosticEngine &diags) {
  frontend::MeshSizes mesh = d.mesh;
  if (!mesh.empty() && d.devices && meshDevices(mesh) != *d.devices) {
    diags.error(d.devicesRange, "python-directive",
                fmt::format("'# dkv: devices {}' and the mesh directive ({} devices) disagree",
                            *d.devices, meshDevices(mesh)));
    return false;
  }
  if (!cliMesh.empty()) {
    if (!d.entry) {
      diags.error({}, "python-devices",
                  "--mesh applies to a Python file with an entry directive ('# dkv: entry "
                  "...'); a call site's mesh comes from the file (give --devices N)");
      return false;
    }
    mesh = cliMesh;
  } else if (devices && !mesh.empty() && meshDevices(mesh) != *devices) {
    if (mesh.size() != 1) {
      diags.error(d.meshRange, "python-devices",
                  fmt::format("--devices {} and the mesh directive ({} devices on {} axes) "
                              "disagree; give --mesh AXIS=SIZE,... instead",
                              *devices, meshDevices(mesh), mesh.size()));
      return false;
    }
    mesh[0].second = *devices; // the command line resizes a one-axis mesh
  }
  if (!mesh.empty())
    options.devices = meshDevices(mesh);
  else if (devices)
    options.devices = *devices;
  else if (d.devices)
    options.devices = *d.devices;
  else {
    diags.error({}, "python-devices",
                "a Python kernel needs --devices N (or a '# dkv: devices N' or '# dkv: mesh "
                "x=N' directive): the number of devices is what jax.device_count() returns "
                "when the kernel runs, which the file does not say");
    return false;
  }
  if (options.devices > 4096) {
    diags.error(d.meshRange, "python-directive",
                fmt::format("the mesh has {} devices (at most 4096)", options.devices));
    return false;
  }
  options.mesh = mesh;
  return true;
}

} // namespace

std::unique_ptr<ast::Module>
loadPythonModule(support::SourceManager &sources, const support::SourceFile &file,
                 const support::SourceFile *sidecar, std::optional<int64_t> devices,
                 const frontend::MeshSizes &mesh, support::DiagnosticEngine &diags, bool &ok,
                 const frontend::Tables &tables) {
  ok = false;
  std::unique_ptr<py::Module> parsed = pyfront::parseModule(file, diags);
  if (!parsed || diags.hasErrors())
    return nullptr;
  pytrace::Directives directives;
  pytrace::readDirectives(file, false, directives, diags);
  if (sidecar)
    pytrace::readDirectives(*sidecar, true, directives, diags);
  if (diags.hasErrors())
    return nullptr;
  pytrace::TraceOptions options;
  if (!resolveDevices(directives, devices, mesh, options, diags))
    return nullptr;
  options.directives = &directives;
  options.sources = &sources;
  // Table contents: the directives', then the command line's over them.
  options.tables = directives.tables;
  for (const auto &[name, value] : tables)
    options.tables[name] = value;
  std::unique_ptr<ast::Module> module = pytrace::traceModule(*parsed, file, options, diags);
  if (!module || diags.hasErrors())
    return module;
  bool analyzed = frontend::analyze(*module, frontend::Defines{}, diags, options.tables);
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
  if (python) {
    int64_t devices = 1, cores = 0;
    for (const auto &item : loaded.module->items())
      if (item->kind() == ast::Node::Kind::MeshDecl)
        for (const auto &axis : static_cast<const ast::MeshDecl &>(*item).axes()) {
          const int64_t size = static_cast<const ast::IntLiteral &>(axis->sizeExpr()).value();
          if (axis->isCore())
            cores = size;
          else
            devices *= size;
        }
    text << fmt::format("// {} traced by dkv for {} devices{} (dkv translate; docs/python.md)\n",
                        base, devices,
                        cores ? fmt::format(" of {} TensorCores each", cores) : std::string());
  }
  auto comment = [&](const support::SourceRange &r) -> std::string {
    if (!python || r.begin.line == 0)
      return {};
    return fmt::format("{}:{}", base, r.begin.line);
  };
  frontend::printDk(*loaded.module, text, comment);
  if (outPath.empty() || outPath == "-") {
    out << text.str();
    return flushed(out, err, "standard output") ? support::kExitOk : support::kExitOutput;
  }
  std::string error;
  if (!writeFileAtomically(outPath, text.str(), error)) {
    err << "dkv: error: " << error << "\n";
    return support::kExitOutput;
  }
  return support::kExitOk;
}

} // namespace dkv::driver
