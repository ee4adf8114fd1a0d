// The linear pipeline: read, parse, analyse, lower, verify. Every subcommand uses it.
#include "driver/Pipeline.h"

#include "frontend/AST.h"
#include "frontend/Lower.h"
#include "frontend/Parser.h"
#include "frontend/Sema.h"
#include "model/Verifier.h"
#include "support/Invariant.h"

#include <charconv>
#include <ostream>

namespace dkv::driver {

Loaded::Loaded() = default;
Loaded::~Loaded() = default;
Loaded::Loaded(Loaded &&) noexcept = default;
Loaded &Loaded::operator=(Loaded &&) noexcept = default;

bool parseDefines(const std::vector<std::string> &defines, std::map<std::string, int64_t> &out,
                  std::string &error) {
  for (const std::string &d : defines) {
    size_t eq = d.find('=');
    std::string name = d.substr(0, eq);
    bool validName = !name.empty() && !std::isdigit(static_cast<unsigned char>(name[0]));
    for (char c : name)
      validName &= std::isalnum(static_cast<unsigned char>(c)) || c == '_';
    if (eq == std::string::npos || !validName) {
      error = "-D expects NAME=VALUE, got '" + d + "'";
      return false;
    }
    std::string value = d.substr(eq + 1);
    int64_t v = 0;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    if (ec != std::errc() || end != value.data() + value.size()) {
      error = "-D " + name + ": '" + value + "' is not an integer";
      return false;
    }
    out[name] = v;
  }
  return true;
}

int load(const InstanceOptions &options, Stage stage, Loaded &out, std::ostream &err) {
  std::map<std::string, int64_t> defines;
  std::string error;
  if (!parseDefines(options.defines, defines, error)) {
    err << "dkv: error: " << error << "\n";
    return support::kExitUsage;
  }
  auto source = support::SourceFile::load(options.file, error);
  if (!source) {
    err << options.file << ": error: " << error << "\n";
    return support::kExitInputError;
  }
  out.source = std::make_unique<support::SourceFile>(std::move(*source));
  support::DiagnosticEngine diags(out.source.get());
  auto fail = [&]() {
    diags.render(err);
    return support::kExitInputError;
  };

  out.module = frontend::parseModule(*out.source, diags);
  if (diags.hasErrors())
    return fail();
  if (stage == Stage::Parse)
    return support::kExitOk;

  if (options.devices && !frontend::applyDeviceCount(*out.module, *options.devices, defines, diags))
    return fail();
  if (!frontend::analyze(*out.module, defines, diags) || diags.hasErrors())
    return fail();
  if (stage == Stage::Sema) {
    diags.render(err); // warnings
    return support::kExitOk;
  }

  out.program = frontend::lower(*out.module, options.file, options.model, diags);
  if (!out.program || diags.hasErrors())
    return fail();
  diags.render(err); // warnings

  std::vector<std::string> problems = model::verifyProgram(*out.program);
  if (!problems.empty()) {
    err << "dkv: internal error: the lowered model is malformed:\n";
    for (const std::string &p : problems)
      err << "  " << p << "\n";
    return support::kExitInternal;
  }
  return support::kExitOk;
}

} // namespace dkv::driver
