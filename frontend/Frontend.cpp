// The frontend in one call: parse, apply --devices and -D, analyze.
#include "frontend/Frontend.h"

#include "frontend/Annotations.h"
#include "frontend/Parser.h"

#include <fmt/format.h>

#include <cctype>
#include <charconv>

namespace dkv::frontend {

bool parseDefine(const std::string &text, Defines &defines, std::string &error) {
  size_t eq = text.find('=');
  std::string name = text.substr(0, eq);
  bool validName = !name.empty() && !std::isdigit(static_cast<unsigned char>(name[0]));
  for (char c : name)
    validName = validName && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
  if (eq == std::string::npos || !validName) {
    error = fmt::format("invalid definition '{}': expected NAME=VALUE", text);
    return false;
  }
  std::string valueText = text.substr(eq + 1);
  int64_t value = 0;
  auto [ptr, ec] = std::from_chars(valueText.data(), valueText.data() + valueText.size(), value);
  if (valueText.empty() || ec != std::errc() || ptr != valueText.data() + valueText.size()) {
    error = fmt::format("invalid value in '{}': expected a 64-bit integer", text);
    return false;
  }
  if (auto it = defines.find(name); it != defines.end() && it->second != value) {
    error = fmt::format("conflicting definitions of '{}': {} and {}", name, it->second, value);
    return false;
  }
  defines[name] = value;
  return true;
}

std::unique_ptr<ast::Module> loadModule(const support::SourceFile &file, Defines defines,
                                        std::optional<int64_t> devices,
                                        support::DiagnosticEngine &diags, bool &ok,
                                        const Tables &tables) {
  return loadModule(file, std::move(defines), devices, MeshSizes{}, diags, ok, tables);
}

std::unique_ptr<ast::Module> loadModule(const support::SourceFile &file, Defines defines,
                                        std::optional<int64_t> devices, const MeshSizes &mesh,
                                        support::DiagnosticEngine &diags, bool &ok,
                                        const Tables &tables) {
  ok = false;
  std::unique_ptr<ast::Module> module = parseModule(file, diags);
  // A malformed annotation or suppression in its comments is an error of the file.
  annotationsOf(*module, diags);
  // Errors that left the module complete (unknown functions, bad annotations, ...) do
  // not stop sema: all errors of the file are reported in one run.
  if (!module || !module->complete())
    return module;
  if (devices && !applyDevices(*module, *devices, defines, diags))
    return module;
  if (!mesh.empty() && !applyMesh(*module, mesh, defines, diags))
    return module;
  bool analyzed = analyze(*module, defines, diags, tables);
  ok = analyzed && !diags.hasErrors();
  return module;
}

} // namespace dkv::frontend
