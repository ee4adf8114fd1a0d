// Helpers shared by the frontend tests: run the frontend on a string.
#pragma once

#include "frontend/AST.h"
#include "frontend/Frontend.h"
#include "frontend/Parser.h"
#include "support/Diagnostics.h"
#include "support/Source.h"

#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace dkv::frontend::test {

/// The result of running the frontend on a string; owns the source (diagnostics and
/// the AST refer to it).
struct Run {
  std::unique_ptr<support::SourceManager> sources;
  const support::SourceFile *file = nullptr;
  std::unique_ptr<support::DiagnosticEngine> diags;
  std::unique_ptr<ast::Module> module;
  bool ok = false;

  /// The ids of all error diagnostics, in report order.
  std::vector<std::string> ids() const {
    std::vector<std::string> out;
    for (const auto &d : diags->diagnostics())
      if (d.severity == support::Severity::Error)
        out.push_back(d.id);
    return out;
  }
  bool has(const std::string &id) const {
    for (const auto &i : ids())
      if (i == id)
        return true;
    return false;
  }
  std::string rendered() const {
    std::ostringstream s;
    diags->render(s);
    return s.str();
  }
};

/// Parses only.
inline Run parseOnly(const std::string &text, const ParseLimits &limits = {}) {
  Run r;
  r.sources = std::make_unique<support::SourceManager>();
  r.file = &r.sources->file(r.sources->add("test.dk", text));
  r.diags = std::make_unique<support::DiagnosticEngine>(r.sources.get());
  r.module = parseModule(*r.file, *r.diags, limits);
  r.ok = !r.diags->hasErrors();
  return r;
}

/// Parses and analyzes (loadModule).
inline Run load(const std::string &text, Defines defines = {},
                std::optional<int64_t> devices = std::nullopt) {
  Run r;
  r.sources = std::make_unique<support::SourceManager>();
  r.file = &r.sources->file(r.sources->add("test.dk", text));
  r.diags = std::make_unique<support::DiagnosticEngine>(r.sources.get());
  r.module = loadModule(*r.file, std::move(defines), devices, *r.diags, r.ok);
  return r;
}

/// Parses and analyzes with `--mesh` sizes (loadModule).
inline Run loadMesh(const std::string &text, const MeshSizes &mesh, Defines defines = {}) {
  Run r;
  r.sources = std::make_unique<support::SourceManager>();
  r.file = &r.sources->file(r.sources->add("test.dk", text));
  r.diags = std::make_unique<support::DiagnosticEngine>(r.sources.get());
  r.module = loadModule(*r.file, std::move(defines), std::nullopt, mesh, *r.diags, r.ok);
  return r;
}

} // namespace dkv::frontend::test
