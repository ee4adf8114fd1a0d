// The linear pipeline: read, parse, analyse, lower, verify. Every subcommand uses it.
#include "driver/Pipeline.h"

#include "driver/PythonCommand.h"

#include "frontend/AST.h"
#include "frontend/Frontend.h"
#include "lower/Lower.h"
#include "model/Verifier.h"
#include "support/Invariant.h"

#include <fmt/format.h>

#include <functional>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <ostream>
#include <sstream>

namespace dkv::driver {

Loaded::Loaded() = default;
Loaded::~Loaded() = default;
Loaded::Loaded(Loaded &&) noexcept = default;
Loaded &Loaded::operator=(Loaded &&) noexcept = default;

namespace {

/// The most levels of lists a table's JSON may nest (a table is an integer array of a
/// few dimensions); deeper input is refused before it is parsed or walked.
constexpr int kMaxTableDepth = 64;

/// The offset of the first bracket that opens a level deeper than kMaxTableDepth in
/// JSON `text` (strings skipped), or nullopt. Iterative: any nesting is safe to scan.
std::optional<size_t> tooDeep(const std::string &text) {
  int depth = 0;
  bool inString = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (inString) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        inString = false;
    } else if (c == '"') {
      inString = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxTableDepth)
        return i;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return std::nullopt;
}

/// "LINE:COL" of byte `offset` of `text` (1-based, columns in bytes).
std::string lineColumn(const std::string &text, size_t offset) {
  size_t line = 1, column = 1;
  for (size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return fmt::format("{}:{}", line, column);
}

/// A JSON nested list of integers -> TableValue (row-major values and nesting), or an
/// error message: not a list, a non-integer element, a ragged list.
bool tableFromJson(const nlohmann::json &j, frontend::TableValue &out, std::string &error) {
  std::vector<int64_t> shape;
  // The shape of the first element at each level decides; every element must match.
  const nlohmann::json *level = &j;
  while (level->is_array()) {
    shape.push_back(static_cast<int64_t>(level->size()));
    if (level->empty())
      break;
    level = &(*level)[0];
  }
  if (shape.empty()) {
    error = "expected a (nested) list of integers";
    return false;
  }
  std::vector<int64_t> values;
  std::function<bool(const nlohmann::json &, size_t)> walk = [&](const nlohmann::json &v,
                                                                 size_t depth) {
    if (depth == shape.size()) {
      if (!v.is_number_integer()) {
        error = fmt::format("element {} is not an integer", v.dump());
        return false;
      }
      values.push_back(v.get<int64_t>());
      return true;
    }
    if (!v.is_array() || static_cast<int64_t>(v.size()) != shape[depth]) {
      error = "the list is not rectangular (its entries differ in length or nesting)";
      return false;
    }
    for (const auto &e : v)
      if (!walk(e, depth + 1))
        return false;
    return true;
  };
  if (!walk(j, 0))
    return false;
  out.shape = std::move(shape);
  out.values = std::move(values);
  return true;
}

/// `NAME=JSON` (a -T option).
bool parseTableDef(const std::string &text, frontend::Tables &tables, std::string &error) {
  size_t eq = text.find('=');
  std::string name = text.substr(0, eq);
  if (eq == std::string::npos || name.empty()) {
    error = fmt::format("invalid table '{}': expected NAME=[...]", text);
    return false;
  }
  frontend::TableValue value;
  value.origin = "-T";
  if (std::optional<size_t> at = tooDeep(text.substr(eq + 1))) {
    error = fmt::format("invalid contents in '-T {}...': the JSON nests more than {} levels deep "
                        "(column {} of the contents)",
                        text.substr(0, eq + 1), kMaxTableDepth, *at + 1);
    return false;
  }
  nlohmann::json j = nlohmann::json::parse(text.substr(eq + 1), nullptr, false);
  if (j.is_discarded() || !tableFromJson(j, value, error)) {
    if (j.is_discarded())
      error = "not valid JSON";
    error = fmt::format("invalid contents in '-T {}': {}", text, error);
    return false;
  }
  if (tables.count(name)) {
    error = fmt::format("table '{}' is set twice", name);
    return false;
  }
  tables[name] = std::move(value);
  return true;
}

/// A tables file: one JSON object mapping names to contents.
bool readTablesFile(const std::string &file, frontend::Tables &tables, std::string &error) {
  // Read like a kernel file: at most 16 MiB (an endless device is refused, not read).
  std::string why;
  std::optional<support::SourceFile> in = support::SourceFile::load(file, why);
  if (!in) {
    error = fmt::format("{}: cannot read the tables file: {}", file, why);
    return false;
  }
  if (in->truncated()) {
    error = fmt::format("{}: the tables file is larger than {} MiB", file,
                        support::SourceFile::kMaxLoadBytes >> 20);
    return false;
  }
  const std::string &text = in->text();
  if (std::optional<size_t> at = tooDeep(text)) {
    error = fmt::format("{}:{}: the JSON nests more than {} levels deep (a table is a list of "
                        "integer lists)",
                        file, lineColumn(text, *at), kMaxTableDepth);
    return false;
  }
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    error = fmt::format("{}: expected a JSON object {{\"NAME\": [...], ...}}", file);
    return false;
  }
  for (const auto &[name, v] : j.items()) {
    frontend::TableValue value;
    value.origin = file;
    if (!tableFromJson(v, value, error)) {
      error = fmt::format("{}: table '{}': {}", file, name, error);
      return false;
    }
    if (tables.count(name)) {
      error = fmt::format("table '{}' is set both by -T and by {}", name, file);
      return false;
    }
    tables[name] = std::move(value);
  }
  return true;
}

} // namespace

int load(const InstanceOptions &options, Stage stage, Loaded &out, std::ostream &err,
         support::StopToken *stop) {
  // An allocation that failed inside a phase that turned it into something else (a
  // frontend's "internal" diagnostic) shows as a new failure in the count.
  const uint64_t failures = support::allocationFailures();
  auto outOfMemory = [&] {
    if (support::allocationFailures() == failures)
      return false;
    if (stop)
      stop->request(support::StopCause::Memory, "out of memory: an allocation failed");
    return true;
  };
  auto phase = [&](const char *name) {
    if (stop)
      stop->setPhase(name);
  };
  phase("loading");
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
  frontend::Tables tables;
  for (const std::string &t : options.tables) {
    if (!parseTableDef(t, tables, error)) {
      err << "dkv: error: " << error << "\n";
      return support::kExitUsage;
    }
  }
  if (!options.tablesFile.empty() && !readTablesFile(options.tablesFile, tables, error)) {
    err << "dkv: error: " << error << " [bad-table]\n";
    out.diagnostics.push_back(
        support::Diagnostic{support::Severity::Error, {}, error, "bad-table", {}});
    return support::kExitInputError;
  }
  std::optional<support::FileId> id =
      options.text ? std::optional(out.sources.add(options.file, *options.text))
                   : out.sources.load(options.file, error);
  if (!id) {
    err << options.file << ": error: " << error << "\n";
    out.diagnostics.push_back(
        support::Diagnostic{support::Severity::Error, {}, error, "unreadable-file", {}});
    return support::kExitInputError;
  }
  support::DiagnosticEngine diags(&out.sources);
  bool ok = false;
  if (isPythonFile(options.file)) {
    if (!options.defines.empty()) {
      err << "dkv: error: -D does not apply to Python files (the shapes come from the file's "
             "call site or its '# dkv:' directives; docs/python.md)\n";
      return support::kExitUsage;
    }
    // The directives file: --directives FILE, else FILE.py.dkv when it exists.
    std::optional<support::FileId> sidecar;
    std::string sidecarPath = options.directives;
    std::error_code ec;
    if (sidecarPath.empty() && std::filesystem::is_regular_file(options.file + ".dkv", ec))
      sidecarPath = options.file + ".dkv";
    if (!sidecarPath.empty()) {
      sidecar = out.sources.load(sidecarPath, error);
      if (!sidecar) {
        err << sidecarPath << ": error: " << error << "\n";
        out.diagnostics.push_back(
            support::Diagnostic{support::Severity::Error, {}, error, "unreadable-file", {}});
        return support::kExitInputError;
      }
    }
    out.module = loadPythonModule(out.sources, out.sources.file(*id),
                                  sidecar ? &out.sources.file(*sidecar) : nullptr, options.devices,
                                  mesh, diags, ok, tables, &options, &out.skipped, &out.note);
    if (ok && out.skipped) {
      // A test case that skipped itself: nothing to check (never "verified").
      err << options.file << (options.entry.empty() ? "" : "::") << options.entry
          << ": skipped: " << *out.skipped << "\n";
      return support::kExitOk;
    }
  } else if (!options.entry.empty() || !options.call.empty() || !options.sets.empty() ||
             !options.pythonPath.empty() || !options.tpu.empty() || options.hypothesisSeed) {
    err << "dkv: error: FILE::ENTRY, --call, --set, --python-path, --tpu and --hypothesis-seed "
           "apply to Python files "
           "(docs/python.md \"Entries\")\n";
    return support::kExitUsage;
  } else if (!options.directives.empty()) {
    err << "dkv: error: --directives applies to Python files (a .dk file states its kernel's "
           "facts itself)\n";
    return support::kExitUsage;
  } else {
    out.module = frontend::loadModule(out.sources.file(*id), defines, options.devices, mesh, diags,
                                      ok, tables);
  }
  if (outOfMemory() || support::stopRequested(stop))
    return support::kExitInconclusive;
  if (!ok) {
    diags.render(err);
    out.diagnostics = diags.diagnostics();
    return diags.errorExitCode();
  }
  if (stage == Stage::Sema) {
    diags.render(err); // warnings
    out.diagnostics = diags.diagnostics();
    return support::kExitOk;
  }

  phase("lowering");
  model::BuildLimits limits;
  limits.stop = stop;
  std::optional<model::Program> program =
      lower::lower(*out.module, options.file, options.model, diags, limits);
  // A stop during lowering ends it like an instance limit: the diagnostic is not the
  // reason, the token is.
  if (outOfMemory() || support::stopRequested(stop))
    return support::kExitInconclusive;
  diags.render(err); // errors and warnings
  out.diagnostics = diags.diagnostics();
  if (!program || diags.hasErrors())
    return diags.errorExitCode();

  std::vector<std::string> problems = model::verifyProgram(*program);
  if (!problems.empty()) {
    err << "dkv: internal error: the lowered model is malformed:\n";
    for (const std::string &p : problems)
      err << "  " << p << "\n";
    return support::kExitInternal;
  }
  phase("building the property list");
  const bool symmetry = options.symmetry == InstanceOptions::Symmetry::On ||
                        (options.symmetry == InstanceOptions::Symmetry::Auto &&
                         program->deviceCount() >= kSymmetryFrom);
  auto instance = std::make_unique<semantics::Instance>(std::move(*program), symmetry, stop);
  if (outOfMemory() || support::stopRequested(stop))
    return support::kExitInconclusive;
  out.instance = std::move(instance);
  return support::kExitOk;
}

} // namespace dkv::driver
