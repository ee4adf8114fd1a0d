// Regression: sema (constants), `--devices` and lowering (per-device values) evaluate
// integer expressions alike, including at the edges of 64 bits. They once had three
// evaluators, and `INT64_MIN % -1` was 0 in sema but an overflow error in lowering.
#include "frontend/AST.h"
#include "frontend/Frontend.h"
#include "frontend/Parser.h"
#include "frontend/Sema.h"
#include "lower/Lower.h"
#include "model/Printer.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

namespace dkv::lower {
namespace {

/// What a stage made of an expression: its value, or the id of its error.
struct Outcome {
  std::optional<int64_t> value;
  std::string error; ///< "overflow" or "division-by-zero"

  friend std::ostream &operator<<(std::ostream &os, const Outcome &o) {
    if (o.value)
      return os << *o.value;
    return os << "error " << o.error;
  }
};

/// The error id a stage reported, with sema's and lowering's overflow ids made one.
std::string errorOf(const std::string &diagnostics) {
  if (diagnostics.find("[division-by-zero]") != std::string::npos)
    return "division-by-zero";
  if (diagnostics.find("[overflow]") != std::string::npos ||
      diagnostics.find("[integer-overflow]") != std::string::npos)
    return "overflow";
  return "unexpected: " + diagnostics;
}

/// Sema's constant `const R = EXPR`.
Outcome semaValue(const std::string &expr) {
  support::SourceManager sources;
  const support::SourceFile &file = sources.file(
      sources.add("const.dk", "const R = " + expr + "\nmesh x = 1\nkernel k() {\n}\n"));
  support::DiagnosticEngine diags(&sources);
  auto module = frontend::parseModule(file, diags);
  EXPECT_FALSE(diags.hasErrors());
  std::ostringstream rendered;
  if (frontend::analyze(*module, {}, diags))
    return {module->consts()[0]->value(), ""};
  diags.render(rendered);
  return {std::nullopt, errorOf(rendered.str())};
}

/// Sema's constant value (frontend::evalConst) of a condition `let b = EXPR`.
std::optional<int64_t> semaCondition(const std::string &expr) {
  support::SourceManager sources;
  const support::SourceFile &file =
      sources.file(sources.add("cond.dk", "mesh x = 1\nkernel k() {\n  let b = " + expr + "\n}\n"));
  support::DiagnosticEngine diags(&sources);
  auto module = frontend::parseModule(file, diags);
  EXPECT_FALSE(diags.hasErrors());
  EXPECT_TRUE(frontend::analyze(*module, {}, diags));
  const auto &let = ast::cast<ast::LetStmt>(*module->kernel()->body().stmts()[0]);
  return frontend::evalConst(let.decl().init());
}

/// `--devices` evaluating `mesh x = EXPR` before sema: the value, if any, is the
/// device count it accepts.
std::optional<int64_t> devicesValue(const std::string &expr, int64_t devices) {
  support::SourceManager sources;
  const support::SourceFile &file =
      sources.file(sources.add("devices.dk", "mesh x = " + expr + "\nkernel k() {\n}\n"));
  support::DiagnosticEngine diags(&sources);
  auto module = frontend::parseModule(file, diags);
  EXPECT_FALSE(diags.hasErrors());
  frontend::Defines defines;
  if (frontend::applyDevices(*module, devices, defines, diags))
    return devices;
  return std::nullopt;
}

/// Lowering's value of an expression of `X = axis_index(x)` (0 on the one device, but
/// per device, so sema cannot fold it): whether it equals `expected` shows as a signal
/// in the model, or its error. `boolean`: the expression is a condition (1 or 0).
Outcome loweredValue(const std::string &exprWithX, int64_t expected, bool boolean = false) {
  std::string test = boolean ? (expected ? "v" : "not v") : "v == " + std::to_string(expected);
  std::string text = "mesh x = 1\nkernel k() {\n  scratch s: sem\n  let X = axis_index(x)\n"
                     "  let v = " +
                     exprWithX + "\n  if " + test + " {\n    signal(s)\n    wait(s)\n  }\n}\n";
  support::SourceManager sources;
  const support::SourceFile &file = sources.file(sources.add("lower.dk", text));
  support::DiagnosticEngine diags(&sources);
  auto module = frontend::parseModule(file, diags);
  EXPECT_FALSE(diags.hasErrors());
  std::ostringstream rendered;
  if (!frontend::analyze(*module, {}, diags)) {
    diags.render(rendered);
    ADD_FAILURE() << rendered.str();
    return {};
  }
  std::optional<model::Program> program = lower(*module, "lower.dk", {}, diags);
  diags.render(rendered);
  if (!program)
    return {std::nullopt, errorOf(rendered.str())};
  for (const model::Event &e : program->processes[0].events)
    if (std::holds_alternative<model::Signal>(e.kind))
      return {expected, ""};
  return {std::nullopt, "a value other than " + std::to_string(expected)};
}

struct Case {
  std::string lhs, op, rhs;
};

const char *kMin = "(-9223372036854775807 - 1)";
const char *kMax = "9223372036854775807";

TEST(IntEvalAgree, SemaDevicesAndLoweringGiveTheSameValueOrError) {
  const Case cases[] = {
      {kMin, "%", "-1"}, {kMin, "/", "-1"}, {"7", "%", "0"},    {"7", "/", "0"},
      {"-7", "%", "3"},  {"7", "%", "-3"},  {"-7", "/", "2"},   {kMax, "+", "1"},
      {kMin, "-", "1"},  {kMax, "*", "2"},  {kMin, "*", "-1"},  {kMin, "%", kMin},
      {kMax, "%", kMin}, {kMin, "/", "2"},  {"5", "min", "-5"}, {"5", "max", "-5"},
  };
  for (const Case &c : cases) {
    std::string sema = c.op == "min" || c.op == "max"
                           ? c.op + "(" + c.lhs + ", " + c.rhs + ")"
                           : "(" + c.lhs + ") " + c.op + " (" + c.rhs + ")";
    std::string lowered = c.op == "min" || c.op == "max"
                              ? c.op + "(X + " + c.lhs + ", " + c.rhs + ")"
                              : "(X + " + c.lhs + ") " + c.op + " (" + c.rhs + ")";
    Outcome s = semaValue(sema);
    Outcome l = loweredValue(lowered, s.value.value_or(0));
    EXPECT_EQ(s.value, l.value) << sema << ": sema " << s << ", lowering " << l;
    EXPECT_EQ(s.error, l.error) << sema << ": sema " << s << ", lowering " << l;
    // --devices accepts the size exactly when it is a value >= 1 and that value.
    if (s.value && *s.value >= 1 && *s.value <= 4096) {
      EXPECT_EQ(devicesValue(sema, *s.value), s.value) << sema;
    }
    if (!s.value) {
      EXPECT_FALSE(devicesValue(sema, 1)) << sema;
    }
  }
}

TEST(IntEvalAgree, MinimumModuloMinusOneIsZeroEverywhere) {
  std::string expr = std::string(kMin) + " % -1";
  EXPECT_EQ(semaValue(expr).value, 0);
  EXPECT_EQ(loweredValue("(X + " + std::string(kMin) + ") % -1", 0).value, 0);
}

TEST(IntEvalAgree, LogicShortCircuitsEverywhere) {
  // `b` of `a and b` is not evaluated when `a` is false, so 1 / 0 is no error.
  EXPECT_EQ(semaCondition("0 == 1 and 1 / 0 == 0"), 0);
  EXPECT_EQ(semaCondition("0 == 0 or 1 / 0 == 0"), 1);
  EXPECT_EQ(loweredValue("X == 1 and 1 / X == 0", 0, true).value, 0);
  EXPECT_EQ(loweredValue("X == 0 or 1 / X == 0", 1, true).value, 1);
  EXPECT_EQ(semaCondition("0 == 0 and 1 / 0 == 0"), std::nullopt);
  EXPECT_EQ(loweredValue("X == 0 and 1 / X == 0", 0, true).error, "division-by-zero");
}

} // namespace
} // namespace dkv::lower
