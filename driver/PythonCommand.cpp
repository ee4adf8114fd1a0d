// Python kernels: `dkv parse FILE.py` prints pyfront's AST; the other commands trace the
// kernel into the kernel language's AST (pytrace/) and go on as for a `.dk` file.
#include "driver/PythonCommand.h"

#include "driver/Output.h"

#include "frontend/DkPrinter.h"
#include "frontend/Sema.h"
#include "pyfront/AstPrinter.h"
#include "pyfront/Parser.h"
#include "pytrace/TpuChips.h"
#include "pytrace/Tracer.h"
#include "support/Diagnostics.h"
#include "support/Invariant.h"

#include <fmt/format.h>

#include <filesystem>

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

void splitPythonTarget(const std::string &path, std::string &file, std::string &entry) {
  size_t at = path.find(".py::");
  if (at != std::string::npos) {
    file = path.substr(0, at + 3);
    entry = path.substr(at + 5);
    return;
  }
  at = path.rfind(".py#");
  if (at != std::string::npos && path.find('/', at) == std::string::npos) {
    file = path.substr(0, at + 3);
    entry = path.substr(at + 3);
    return;
  }
  file = path;
  entry.clear();
}

namespace {

/// What tracing a Python file needs: its syntax tree, directives and trace options.
struct Prepared {
  std::unique_ptr<py::Module> parsed;
  pytrace::Directives directives;
  pytrace::TraceOptions options;
};

/// `--set NAME=VALUE` lines, read as `# dkv: set` directives.
bool readSets(support::SourceManager &sources, const std::vector<std::string> &sets,
              std::vector<pytrace::SetDirective> &out, support::DiagnosticEngine &diags) {
  if (sets.empty())
    return true;
  std::string text;
  for (const std::string &set : sets)
    text += "# dkv: set " + set + "\n";
  support::FileId id = sources.add("--set", text);
  pytrace::Directives d;
  if (!pytrace::readDirectives(sources.file(id), true, d, diags))
    return false;
  for (auto &[name, set] : d.sets)
    out.push_back(set);
  return true;
}

std::unique_ptr<Prepared> prepare(support::SourceManager &sources, const support::SourceFile &file,
                                  const support::SourceFile *sidecar,
                                  std::optional<int64_t> devices, const frontend::MeshSizes &mesh,
                                  support::DiagnosticEngine &diags, const frontend::Tables &tables,
                                  const InstanceOptions *instance) {
  auto p = std::make_unique<Prepared>();
  p->parsed = pyfront::parseModule(file, diags);
  if (!p->parsed || diags.hasErrors())
    return nullptr;
  pytrace::readDirectives(file, false, p->directives, diags);
  if (sidecar)
    pytrace::readDirectives(*sidecar, true, p->directives, diags);
  if (diags.hasErrors())
    return nullptr;
  if (!resolveDevices(p->directives, devices, mesh, p->options, diags))
    return nullptr;
  p->options.directives = &p->directives;
  p->options.sources = &sources;
  // Table contents: the directives', then the command line's over them.
  p->options.tables = p->directives.tables;
  for (const auto &[name, value] : tables)
    p->options.tables[name] = value;
  p->options.tpu = p->directives.tpu;
  if (instance) {
    if (!instance->tpu.empty())
      p->options.tpu = pytrace::findTpuChip(instance->tpu)->name;
    p->options.call = instance->call;
    p->options.hypothesisSeed = instance->hypothesisSeed.value_or(0);
    p->options.pythonPath = instance->pythonPath;
    if (!readSets(sources, instance->sets, p->options.sets, diags))
      return nullptr;
  }
  return p;
}

} // namespace

std::unique_ptr<ast::Module>
loadPythonModule(support::SourceManager &sources, const support::SourceFile &file,
                 const support::SourceFile *sidecar, std::optional<int64_t> devices,
                 const frontend::MeshSizes &mesh, support::DiagnosticEngine &diags, bool &ok,
                 const frontend::Tables &tables, const InstanceOptions *instance,
                 std::optional<std::string> *skipped, std::string *note) {
  ok = false;
  std::unique_ptr<Prepared> p =
      prepare(sources, file, sidecar, devices, mesh, diags, tables, instance);
  if (!p)
    return nullptr;
  std::optional<std::string> skip;
  std::unique_ptr<ast::Module> module = pytrace::traceModule(
      *p->parsed, file, p->options, diags, instance ? instance->entry : "", &skip, note);
  if (skip && !diags.hasErrors()) {
    if (skipped)
      *skipped = skip;
    ok = true;
    return nullptr;
  }
  if (!module || diags.hasErrors())
    return module;
  bool analyzed = frontend::analyze(*module, frontend::Defines{}, diags, p->options.tables);
  ok = analyzed && !diags.hasErrors();
  return module;
}

std::vector<PythonInstance> discoverPythonInstances(const InstanceOptions &options) {
  support::SourceManager sources;
  std::string error;
  std::optional<support::FileId> id = sources.load(options.file, error);
  if (!id)
    return {};
  std::optional<support::FileId> sidecar;
  std::string sidecarPath = options.directives;
  std::error_code ec;
  if (sidecarPath.empty() && std::filesystem::is_regular_file(options.file + ".dkv", ec))
    sidecarPath = options.file + ".dkv";
  if (!sidecarPath.empty()) {
    sidecar = sources.load(sidecarPath, error);
    if (!sidecar)
      return {};
  }
  frontend::MeshSizes mesh;
  if (!options.mesh.empty() && !frontend::parseMeshSizes(options.mesh, mesh, error))
    return {};
  support::DiagnosticEngine diags(&sources);
  std::unique_ptr<Prepared> p =
      prepare(sources, sources.file(*id), sidecar ? &sources.file(*sidecar) : nullptr,
              options.devices, mesh, diags, {}, &options);
  if (!p)
    return {};
  std::vector<PythonInstance> out;
  for (const pytrace::FoundInstance &f :
       pytrace::discoverInstances(*p->parsed, sources.file(*id), p->options, options.entry)) {
    // An entry given on the command line selects its cases and kernels.
    const std::string &want = options.entry;
    bool selected = want.empty() || f.id == want ||
                    (f.id.size() > want.size() && f.id.compare(0, want.size(), want) == 0 &&
                     (f.id[want.size()] == '[' || f.id[want.size()] == '#'));
    if (selected)
      out.push_back({f.id, f.kernel, f.skipped, f.failed, f.note});
  }
  return out;
}

int listCommand(const InstanceOptions &instance, std::ostream &out, std::ostream &err) {
  if (!isPythonFile(instance.file)) {
    err << "dkv: error: `dkv list` lists the instances of a Python file (a .dk file is one "
           "kernel)\n";
    return support::kExitUsage;
  }
  std::vector<PythonInstance> found = discoverPythonInstances(instance);
  if (found.empty()) {
    // The file does not load: say why, as `dkv translate` would.
    Loaded loaded;
    return load(instance, Stage::Sema, loaded, err);
  }
  for (const PythonInstance &f : found) {
    if (f.entry.empty() && f.kernel.empty() && !f.failed && !f.skipped && found.size() > 1)
      continue; // a test file's top level traces nothing: its entries follow
    std::string name = instance.file + (f.entry.empty() || f.entry[0] == '#' ? "" : "::") + f.entry;
    if (f.failed)
      out << name << "  (stops at an error: `dkv check " << name << "` shows it)\n";
    else if (f.skipped)
      out << name << "  (skipped: " << *f.skipped << ")\n";
    else if (f.kernel.empty())
      out << name << "  (no kernel)\n";
    else
      out << name << "  " << f.kernel << (f.note.empty() ? "" : "  (" + f.note + ")") << "\n";
  }
  return support::kExitOk;
}

int translateCommand(const InstanceOptions &instance, const std::string &outPath, std::ostream &out,
                     std::ostream &err) {
  Loaded loaded;
  int code = load(instance, Stage::Sema, loaded, err);
  if (code != support::kExitOk || loaded.skipped)
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
    // The file the line is in: the kernel file, or a module it imports.
    std::string name(loaded.sources.name(r.begin.file));
    name = name.empty() ? base : name.substr(name.find_last_of('/') + 1);
    return fmt::format("{}:{}", name, r.begin.line);
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
