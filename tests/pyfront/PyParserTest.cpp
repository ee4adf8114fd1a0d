// pyfront's parser: precedence and shapes of the AST, CPython's error messages and
// positions, and robustness against pathological input.
#include "pyfront/AstPrinter.h"
#include "pyfront/Parser.h"

#include <gtest/gtest.h>

#include <chrono>
#include <fmt/format.h>
#include <random>
#include <sstream>

namespace dkv::pyfront {
namespace {

struct Parsed {
  std::unique_ptr<support::SourceManager> sources;
  std::unique_ptr<support::DiagnosticEngine> diags;
  std::unique_ptr<py::Module> module;

  std::string rendered() const {
    std::ostringstream s;
    diags->render(s);
    return s.str();
  }
  const support::Diagnostic &error() const { return diags->diagnostics().at(0); }
};

Parsed parse(const std::string &text, const ParseLimits &limits = {}) {
  Parsed r;
  r.sources = std::make_unique<support::SourceManager>();
  const support::SourceFile &file = r.sources->file(r.sources->add("t.py", text));
  r.diags = std::make_unique<support::DiagnosticEngine>(r.sources.get());
  r.module = parseModule(file, *r.diags, limits);
  return r;
}

// A compact prefix form of an expression, for precedence tests.
std::string sexp(const py::Expr *e) {
  using namespace py;
  if (!e)
    return "_";
  auto all = [](const std::vector<ExprPtr> &v) {
    std::string s;
    for (const auto &x : v)
      s += " " + sexp(x.get());
    return s;
  };
  switch (e->kind) {
  case ExprKind::Name:
    return cast<Name>(*e).id;
  case ExprKind::Constant: {
    const auto &c = cast<Constant>(*e);
    return c.constKind == ConstKind::String ? "'" + c.str + "'" : c.text;
  }
  case ExprKind::UnaryOp:
    return fmt::format("({} {})", toString(cast<UnaryOp>(*e).op),
                       sexp(cast<UnaryOp>(*e).operand.get()));
  case ExprKind::BinOp: {
    const auto &b = cast<BinOp>(*e);
    return fmt::format("({} {} {})", toString(b.op), sexp(b.left.get()), sexp(b.right.get()));
  }
  case ExprKind::BoolOp:
    return fmt::format("({}{})", toString(cast<BoolOp>(*e).op), all(cast<BoolOp>(*e).values));
  case ExprKind::Compare: {
    const auto &c = cast<Compare>(*e);
    std::string s = "(cmp " + sexp(c.left.get());
    for (size_t i = 0; i < c.ops.size(); ++i)
      s += fmt::format(" {} {}", toString(c.ops[i]), sexp(c.comparators[i].get()));
    return s + ")";
  }
  case ExprKind::Call: {
    const auto &c = cast<Call>(*e);
    std::string s = "(call " + sexp(c.func.get()) + all(c.args);
    for (const auto &k : c.keywords)
      s += fmt::format(" {}={}", k.name.empty() ? "**" : k.name, sexp(k.value.get()));
    return s + ")";
  }
  case ExprKind::Attribute:
    return fmt::format("(. {} {})", sexp(cast<Attribute>(*e).value.get()),
                       cast<Attribute>(*e).attr);
  case ExprKind::Subscript:
    return fmt::format("([] {} {})", sexp(cast<Subscript>(*e).value.get()),
                       sexp(cast<Subscript>(*e).slice.get()));
  case ExprKind::Slice: {
    const auto &s = cast<Slice>(*e);
    return fmt::format("(: {} {} {})", sexp(s.lower.get()), sexp(s.upper.get()),
                       sexp(s.step.get()));
  }
  case ExprKind::Tuple:
    return "(tuple" + all(cast<Tuple>(*e).elts) + ")";
  case ExprKind::List:
    return "(list" + all(cast<List>(*e).elts) + ")";
  case ExprKind::IfExp: {
    const auto &i = cast<IfExp>(*e);
    return fmt::format("(if {} {} {})", sexp(i.test.get()), sexp(i.body.get()),
                       sexp(i.orelse.get()));
  }
  case ExprKind::NamedExpr:
    return fmt::format("(:= {} {})", sexp(cast<NamedExpr>(*e).target.get()),
                       sexp(cast<NamedExpr>(*e).value.get()));
  case ExprKind::Starred:
    return "(* " + sexp(cast<Starred>(*e).value.get()) + ")";
  case ExprKind::Lambda:
    return "(lambda " + sexp(cast<Lambda>(*e).body.get()) + ")";
  default:
    return std::string(toString(e->kind));
  }
}

// The value of `x = <source>` as a prefix form.
std::string expr(const std::string &source) {
  Parsed r = parse("x = " + source + "\n");
  if (!r.module)
    return "error: " + r.rendered();
  const auto &assign = py::cast<py::Assign>(*r.module->body.at(0));
  return sexp(assign.value.get());
}

TEST(PyParser, Precedence) {
  EXPECT_EQ(expr("a + b * c"), "(+ a (* b c))");
  EXPECT_EQ(expr("a - b - c"), "(- (- a b) c)");
  EXPECT_EQ(expr("-a ** b"), "(- (** a b))");
  EXPECT_EQ(expr("a ** -b ** c"), "(** a (- (** b c)))");
  EXPECT_EQ(expr("a // b % c @ d"), "(@ (% (// a b) c) d)");
  EXPECT_EQ(expr("a | b ^ c & d << e + f"), "(| a (^ b (& c (<< d (+ e f)))))");
  EXPECT_EQ(expr("~a & b"), "(& (~ a) b)");
  EXPECT_EQ(expr("not a == b"), "(not (cmp a == b))");
  EXPECT_EQ(expr("a < b <= c"), "(cmp a < b <= c)");
  EXPECT_EQ(expr("a not in b is not c"), "(cmp a not in b is not c)");
  EXPECT_EQ(expr("a or b and not c"), "(or a (and b (not c)))");
  EXPECT_EQ(expr("a and b and c"), "(and a b c)");
  EXPECT_EQ(expr("a if b else c if d else e"), "(if b a (if d c e))");
  EXPECT_EQ(expr("lambda: a if b else c"), "(lambda (if b a c))");
  EXPECT_EQ(expr("(y := f(1))"), "(:= y (call f 1))");
  EXPECT_EQ(expr("a, *b"), "(tuple a (* b))");
  EXPECT_EQ(expr("(a)"), "a");
  EXPECT_EQ(expr("(a,)"), "(tuple a)");
}

TEST(PyParser, TrailersAndSlices) {
  EXPECT_EQ(expr("o.at[pl.ds(0, 8)][...]"), "([] ([] (. o at) (call (. pl ds) 0 8)) ...)");
  EXPECT_EQ(expr("r[0, 1:2, ::3, :]"), "([] r (tuple 0 (: 1 2 _) (: _ _ 3) (: _ _ _)))");
  EXPECT_EQ(expr("f(a, *b, k=1, **d)"), "(call f a (* b) k=1 **=d)");
  EXPECT_EQ(expr("f(x for x in y)"), "(call f GeneratorExp)");
  EXPECT_EQ(expr("a.b.c()"), "(call (. (. a b) c))");
}

TEST(PyParser, Literals) {
  EXPECT_EQ(expr("'a' \"b\""), "'ab'");
  EXPECT_EQ(expr("'t\\tn'"), "'t\tn'");
  EXPECT_EQ(expr("r'\\n'"), "'\\n'");
  Parsed r = parse("x = 1_000 + 0x_ff + 0o17 + 0b11 + 1e-3 + 2j\n");
  ASSERT_TRUE(r.module) << r.rendered();
  std::ostringstream out;
  printModule(*r.module, out);
  EXPECT_NE(out.str().find("Constant 1000 @1:5"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("Constant 255"), std::string::npos);
  EXPECT_NE(out.str().find("Constant 15"), std::string::npos);
  EXPECT_NE(out.str().find("Constant 3"), std::string::npos);
  EXPECT_NE(out.str().find("Constant 1e-3"), std::string::npos);
  EXPECT_NE(out.str().find("Constant 2j"), std::string::npos);
}

TEST(PyParser, StatementsAndLocations) {
  Parsed r = parse("import a.b as c\nfrom ..x import (d, e as f,)\n\n@pl.when(i == 0)\n"
                   "@jax.named_scope('s')\ndef _(p, /, q=1, *r, s, **t):\n  y, *z = q\n"
                   "  y += 1\n  return y\n");
  ASSERT_TRUE(r.module) << r.rendered();
  ASSERT_EQ(r.module->body.size(), 3u);
  const auto &imp = py::cast<py::Import>(*r.module->body[0]);
  EXPECT_EQ(imp.names.at(0).name, "a.b");
  EXPECT_EQ(imp.names.at(0).asname, "c");
  const auto &from = py::cast<py::ImportFrom>(*r.module->body[1]);
  EXPECT_EQ(from.level, 2u);
  EXPECT_EQ(from.module, "x");
  ASSERT_EQ(from.names.size(), 2u);
  EXPECT_EQ(from.names[1].asname, "f");
  const auto &def = py::cast<py::FunctionDef>(*r.module->body[2]);
  EXPECT_EQ(def.range.begin.line, 6u); // at `def`, after the decorators, as CPython
  EXPECT_EQ(def.nameRange.begin.line, 6u);
  EXPECT_EQ(def.nameRange.begin.col, 5u);
  ASSERT_EQ(def.decorators.size(), 2u);
  ASSERT_EQ(def.params.size(), 5u);
  EXPECT_EQ(def.params[0].kind, py::ParamKind::PositionalOnly);
  EXPECT_EQ(def.params[1].kind, py::ParamKind::Positional);
  EXPECT_TRUE(def.params[1].default_);
  EXPECT_EQ(def.params[2].kind, py::ParamKind::VarArgs);
  EXPECT_EQ(def.params[3].kind, py::ParamKind::KeywordOnly);
  EXPECT_EQ(def.params[4].kind, py::ParamKind::VarKeywords);
  ASSERT_EQ(def.body.size(), 3u);
  const auto &assign = py::cast<py::Assign>(*def.body[0]);
  EXPECT_EQ(sexp(assign.targets.at(0).get()), "(tuple y (* z))");
  EXPECT_EQ(def.body[1]->kind, py::StmtKind::AugAssign);
  EXPECT_EQ(def.body[2]->range.begin.line, 9u);
  EXPECT_EQ(def.body[2]->range.begin.col, 3u);
}

TEST(PyParser, ElifChainsNestInOrelse) {
  Parsed r = parse("if a:\n  pass\nelif b:\n  pass\nelse:\n  x = 1\n");
  ASSERT_TRUE(r.module) << r.rendered();
  const auto &top = py::cast<py::If>(*r.module->body.at(0));
  ASSERT_EQ(top.orelse.size(), 1u);
  const auto &elif = py::cast<py::If>(*top.orelse[0]);
  EXPECT_EQ(sexp(elif.test.get()), "b");
  EXPECT_EQ(elif.orelse.size(), 1u);
}

TEST(PyParser, SoftKeywordsStayNames) {
  Parsed r = parse("match = case = 1\nmatch(x)\nmatch x:\n  case [a, *_]:\n    pass\n"
                   "  case {'k': v, **rest} if v:\n    pass\n");
  ASSERT_TRUE(r.module) << r.rendered();
  ASSERT_EQ(r.module->body.size(), 3u);
  EXPECT_EQ(r.module->body[0]->kind, py::StmtKind::Assign);
  EXPECT_EQ(r.module->body[1]->kind, py::StmtKind::ExprStmt);
  const auto &m = py::cast<py::Match>(*r.module->body[2]);
  ASSERT_EQ(m.cases.size(), 2u);
  EXPECT_EQ(m.cases[0].pattern->kind, py::PatternKind::Sequence);
  EXPECT_EQ(m.cases[1].pattern->kind, py::PatternKind::Mapping);
  EXPECT_EQ(m.cases[1].pattern->name, "rest");
  EXPECT_TRUE(m.cases[1].guard);
}

TEST(PyParser, TypeParameters) {
  // Python 3.12 (PEP 695), as JAX's own Pallas sources use it.
  Parsed r = parse("type Dim = int | None\ntype Pair[T] = tuple[T, T]\n"
                   "def f[T: Callable[..., Any], *Ts, **P](x: T) -> T:\n  return x\n"
                   "class C[T = int]:\n  pass\ntype(x)\ntype = 1\n");
  ASSERT_TRUE(r.module) << r.rendered();
  ASSERT_EQ(r.module->body.size(), 6u);
  EXPECT_EQ(r.module->body[0]->kind, py::StmtKind::TypeAlias);
  const auto &pair = py::cast<py::TypeAlias>(*r.module->body[1]);
  EXPECT_EQ(pair.name, "Pair");
  ASSERT_EQ(pair.typeParams.size(), 1u);
  const auto &f = py::cast<py::FunctionDef>(*r.module->body[2]);
  ASSERT_EQ(f.typeParams.size(), 3u);
  EXPECT_TRUE(f.typeParams[0].bound);
  EXPECT_EQ(f.typeParams[1].kind, py::TypeParamKind::TypeVarTuple);
  EXPECT_EQ(f.typeParams[2].kind, py::TypeParamKind::ParamSpec);
  const auto &c = py::cast<py::ClassDef>(*r.module->body[3]);
  ASSERT_EQ(c.typeParams.size(), 1u);
  EXPECT_TRUE(c.typeParams[0].default_);
  EXPECT_EQ(r.module->body[4]->kind, py::StmtKind::ExprStmt); // `type` stays a name
  EXPECT_EQ(r.module->body[5]->kind, py::StmtKind::Assign);
}

TEST(PyParser, StringValues) {
  EXPECT_EQ(expr("'\\x41\\101\\u00e9'"), "'AA\xc3\xa9'");
  EXPECT_EQ(expr("'caf\xc3\xa9'"), "'caf\xc3\xa9'"); // non-ASCII bytes kept
  Parsed r = parse("x = b'\\xff\\u00e9'\n");
  ASSERT_TRUE(r.module) << r.rendered();
  const auto &c = py::cast<py::Constant>(*py::cast<py::Assign>(*r.module->body[0]).value);
  EXPECT_EQ(c.constKind, py::ConstKind::Bytes);
  EXPECT_EQ(c.str, "\xff\\u00e9"); // \u is no escape in bytes
}

TEST(PyParser, LayoutVariants) {
  // CRLF, no final newline, a BOM, blank and comment lines at odd indentation,
  // backslash continuations, implicit joining inside brackets, tabs used consistently.
  for (std::string text :
       {std::string("def f():\r\n  x = 1\r\n\r\n  return x\r\n"),
        std::string("def f():\n  return 1"),
        std::string("\xEF\xBB\xBF"
                    "def f():\n  return 1\n"),
        std::string("def f():\n    # comment\n\n        # deeper comment\n    x = [1,\n2,\n  3]\n"
                    "    return x\n"),
        std::string("x = 1 + \\\n    2\nif x:\n\tpass\n\tpass\n"), std::string("   \n# only\n")}) {
    Parsed r = parse(text);
    EXPECT_TRUE(r.module) << text << "\n" << r.rendered();
  }
  Parsed r = parse("def f():\r\n  x = 1\r\n  return x");
  ASSERT_TRUE(r.module);
  const auto &def = py::cast<py::FunctionDef>(*r.module->body.at(0));
  EXPECT_EQ(def.body.at(1)->range.begin.line, 3u);
}

// One error, with its id, message and position.
void expectError(const std::string &text, const std::string &id, const std::string &message,
                 uint32_t line, uint32_t col) {
  Parsed r = parse(text);
  EXPECT_FALSE(r.module) << text;
  ASSERT_EQ(r.diags->diagnostics().size(), 1u) << r.rendered();
  const auto &d = r.error();
  EXPECT_EQ(d.id, id) << text;
  EXPECT_EQ(d.message, message) << text;
  EXPECT_EQ(d.range.begin.line, line) << text << "\n" << r.rendered();
  EXPECT_EQ(d.range.begin.col, col) << text << "\n" << r.rendered();
}

TEST(PyParser, CPythonMessages) {
  // Positions as CPython 3.11 reports them (SyntaxError.lineno / offset).
  expectError("def f():\npass\n", "python-indentation",
              "expected an indented block after function definition on line 1", 2, 1);
  expectError("class A:\n\nx = 1\n", "python-indentation",
              "expected an indented block after class definition on line 1", 3, 1);
  expectError("for i in x:\n  if i:\n  pass\n", "python-indentation",
              "expected an indented block after 'if' statement on line 2", 3, 3);
  expectError("with a:\n  pass\ntry:\n  pass\nexcept E:\nx\n", "python-indentation",
              "expected an indented block after 'except' statement on line 5", 6, 1);
  expectError("def f():\n", "python-indentation",
              "expected an indented block after function definition on line 1", 1, 9);
  expectError("x = 1\n  y = 2\n", "python-indentation", "unexpected indent", 2, 3);
  expectError("if x:\n    a\n  b\n", "python-indentation",
              "unindent does not match any outer indentation level", 3, 3);
  expectError("if x:\n\ta\n        b\n", "python-indentation",
              "inconsistent use of tabs and spaces in indentation", 3, 9);
  expectError("if x\n  pass\n", "python-syntax", "expected ':'", 1, 5);
  expectError("x = (1,\n", "python-syntax", "'(' was never closed", 1, 5);
  expectError("x = [1, 2)\n", "python-syntax",
              "closing parenthesis ')' does not match opening parenthesis '['", 1, 10);
  expectError("x = )\n", "python-syntax", "unmatched ')'", 1, 5);
  expectError("x = 'abc\n", "python-string", "unterminated string literal (detected at line 1)", 1,
              5);
  expectError("x = '''abc\n\n", "python-string",
              "unterminated triple-quoted string literal (detected at line 2)", 1, 5);
  expectError("x = a b\n", "python-syntax", "invalid syntax", 1, 7);
  expectError("f() = 1\n", "python-syntax",
              "cannot assign to function call here. Maybe you meant '==' instead of '='?", 1, 1);
  expectError("del f()\n", "python-syntax", "cannot delete function call", 1, 5);
  expectError("for f() in x: pass\n", "python-syntax", "cannot assign to function call", 1, 5);
  expectError("with a as f(): pass\n", "python-syntax", "cannot assign to function call", 1, 11);
  expectError("a = f() = 1\n", "python-syntax", "cannot assign to function call", 1, 5);
  expectError("a, f() = 1\n", "python-syntax",
              "cannot assign to function call here. Maybe you meant '==' instead of '='?", 1, 4);
  expectError("x + 1 = 2\n", "python-syntax",
              "cannot assign to expression here. Maybe you meant '==' instead of '='?", 1, 1);
  expectError("not x = 1\n", "python-syntax", "cannot assign to expression", 1, 1);
  expectError("del (a, 1)\n", "python-syntax", "cannot delete literal", 1, 9);
  expectError("(a.b := 1)\n", "python-syntax", "cannot use assignment expressions with attribute",
              1, 2);
  expectError("def f(a=1, b): pass\n", "python-syntax",
              "non-default argument follows default argument", 1, 12);
  expectError("f(a=1, b)\n", "python-syntax", "positional argument follows keyword argument", 1, 8);
  expectError("x = \xe2\x82\xac\n", "python-character", "invalid character '\xe2\x82\xac' (U+20AC)",
              1, 5);
  expectError("a \\ b\n", "python-syntax", "unexpected character after line continuation character",
              1, 4);
  // The first error in the file wins: a parse error before a layout error, and a
  // layout error before a later parse error.
  expectError("x = a b\ny = (\n", "python-syntax", "invalid syntax", 1, 7);
  // CPython's precedence: after a parse error the rest of the file is tokenized; an
  // unterminated string, invalid character or bracket mismatch there wins, an
  // indentation error does not, and a bracket never closed wins if the parse error is
  // on a later line than the bracket.
  expectError("x = (\ny = a b c\n", "python-syntax", "'(' was never closed", 1, 5);
  expectError("x = (1,\n     2 3)\n", "python-syntax", "invalid syntax", 2, 8);
  expectError("x = a b\ny = 'abc\n", "python-string",
              "unterminated string literal (detected at line 2)", 2, 5);
  expectError("if x\n  pass\ny = 'abc\n", "python-string",
              "unterminated string literal (detected at line 3)", 3, 5);
  expectError("f() = 1\nx = )\n", "python-syntax", "unmatched ')'", 2, 5);
  expectError("def f():\npass\nx = $\n", "python-indentation",
              "expected an indented block after function definition on line 1", 2, 1);
  expectError("x = a b\nif x:\n    a\n  b\n", "python-syntax", "invalid syntax", 1, 7);
  expectError("x = 1\n  y = 2\nz = 'abc\n", "python-indentation", "unexpected indent", 2, 3);
  expectError("x = 1\n  y = )\n", "python-indentation", "unexpected indent", 2, 3);
}

TEST(PyParser, RenderedWithCaret) {
  Parsed r = parse("def f(x_ref)\n  pass\n");
  EXPECT_EQ(r.rendered(), "t.py:1:13: error: expected ':' [python-syntax]\n"
                          "  def f(x_ref)\n"
                          "              ^\n");
}

//===----------------------------------------------------------------------===//
// Robustness: each input parses or gives one positioned error, fast, never crashes.
//===----------------------------------------------------------------------===//

void expectHandled(const std::string &text, bool mayParse = false) {
  auto start = std::chrono::steady_clock::now();
  Parsed r = parse(text);
  if (r.module) {
    std::ostringstream sink;
    printModule(*r.module, sink);
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 5.0);
  if (r.module) {
    EXPECT_TRUE(mayParse) << text.substr(0, 200);
    return;
  }
  ASSERT_EQ(r.diags->diagnostics().size(), 1u);
  EXPECT_TRUE(r.error().range.begin.valid()) << r.rendered().substr(0, 500);
}

TEST(PyRobustness, BinaryGarbage) {
  std::mt19937 rng(2026);
  for (int round = 0; round < 8; ++round) {
    std::string text(4096, '\0');
    for (char &c : text)
      c = static_cast<char>(rng() & 0xff);
    expectHandled(text); // stops at the NUL or encoding check
  }
  // Garbage of Python's own characters (no character the lexer rejects at once): the
  // lexer, the layout pass and the parser see much more of it.
  const std::string alphabet = "abcxyz_019 \t\n\n\r\\#'\"()[]{}:;,.=+-*/%@&|^~<>!";
  for (int round = 0; round < 200; ++round) {
    std::string text(2048, '\0');
    for (char &c : text)
      c = alphabet[rng() % alphabet.size()];
    expectHandled(text, true);
  }
}

TEST(PyRobustness, TokenSoup) {
  std::mt19937 rng(7);
  const char *words[] = {"def", "f", "(",      ")",  ":",     "\n",   "  ",  "\t", "[",    "]",
                         "{",   "}", "lambda", "if", "else",  "for",  "in",  "=",  "**",   "-",
                         "not", "x", "1",      ",",  "match", "case", "'s'", "@",  "\\\n", "."};
  for (int round = 0; round < 200; ++round) {
    std::string text;
    for (int i = 0; i < 200; ++i)
      text += std::string(words[rng() % std::size(words)]) + (rng() % 3 == 0 ? " " : "");
    expectHandled(text, true);
  }
}

TEST(PyRobustness, FileTooLarge) {
  std::string text;
  while (text.size() < (2u << 20))
    text += "x = 1 + 2\n";
  Parsed r = parse(text);
  EXPECT_FALSE(r.module);
  EXPECT_EQ(r.error().id, "file-too-large");
}

TEST(PyRobustness, LargeValidFile) {
  std::string text;
  for (int i = 0; i < 4000; ++i) // 12000 lines, 300 KB
    text += fmt::format("def f{}(a, b=1):\n  return [a + b * {} for _ in range(3)]\n\n", i, i);
  auto start = std::chrono::steady_clock::now();
  Parsed r = parse(text);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(r.module) << r.rendered();
  EXPECT_EQ(r.module->body.size(), 4000u);
  EXPECT_LT(seconds, 20.0); // generous: the sanitizer build runs it too
}

TEST(PyRobustness, DeepNesting) {
  const size_t n = 100000;
  auto repeat = [](std::string_view s, size_t k) {
    std::string out;
    for (size_t i = 0; i < k; ++i)
      out += s;
    return out;
  };
  struct Case {
    std::string text;
    std::string message;
  };
  const std::string tooDeep =
      "expression too deeply nested (more than 200 levels of brackets and operators)";
  for (const Case &c : std::vector<Case>{
           {"x = " + repeat("(", n) + "1" + repeat(")", n) + "\n", "too many nested parentheses"},
           {"x = " + repeat("[", n) + "\n", "too many nested parentheses"},
           {"x = " + repeat("-", n) + "1\n", tooDeep},
           {"x = " + repeat("not ", n) + "1\n", tooDeep},
           {"x = " + repeat("2 ** ", n) + "2\n", tooDeep},
           {"x = " + repeat("lambda: ", n) + "1\n", tooDeep},
           {"x = " + repeat("a if b else ", 1000) + "c\n", tooDeep},
           {"x = 1" + repeat(" + 1", n) + "\n",
            "expression too deeply nested (more than 1000 levels)"},
           {"x = a" + repeat(".b", n) + "\n",
            "expression too deeply nested (more than 1000 levels)"},
           {"x = f" + repeat("()", n) + "\n",
            "expression too deeply nested (more than 1000 levels)"},
           {"x = " + repeat("(1 + ", 150) + repeat("1 + ", 900) + "1" + repeat(")", 150) + "\n",
            "expression too deeply nested (more than 1000 levels)"},
       }) {
    Parsed r = parse(c.text);
    EXPECT_FALSE(r.module) << c.text.substr(0, 40);
    ASSERT_EQ(r.diags->diagnostics().size(), 1u) << c.text.substr(0, 40);
    EXPECT_EQ(r.error().id, "python-too-deep") << c.text.substr(0, 40);
    EXPECT_EQ(r.error().message, c.message) << c.text.substr(0, 40);
  }
  // Below the limits it parses.
  EXPECT_TRUE(parse("x = " + repeat("(", 150) + "1" + repeat(")", 150) + "\n").module);
  EXPECT_TRUE(parse("x = 1" + repeat(" + 1", 900) + "\n").module);
}

TEST(PyRobustness, DeepIndentation) {
  std::string text;
  for (int i = 0; i < 150; ++i)
    text += std::string(static_cast<size_t>(i), ' ') + "if x:\n";
  text += std::string(150, ' ') + "pass\n";
  Parsed r = parse(text);
  EXPECT_FALSE(r.module);
  EXPECT_EQ(r.error().message, "too many levels of indentation");
  std::string ok;
  for (int i = 0; i < 90; ++i)
    ok += std::string(static_cast<size_t>(i), ' ') + "if x:\n";
  ok += std::string(90, ' ') + "pass\n";
  EXPECT_TRUE(parse(ok).module);
}

TEST(PyRobustness, EncodingProblems) {
  Parsed nul = parse(std::string("x = 1\0\n", 7));
  EXPECT_EQ(nul.error().message, "source code cannot contain null bytes");
  EXPECT_EQ(nul.error().range.begin.col, 6u);
  Parsed latin1 = parse("# caf\xe9\nx = 1\n");
  EXPECT_EQ(latin1.error().id, "python-encoding");
  EXPECT_EQ(latin1.error().range.begin.line, 1u);
  // UTF-8 inside strings and comments is fine; offsets stay byte columns.
  Parsed ok = parse("# caf\xc3\xa9\nx = 'd\xc3\xa9j\xc3\xa0'; y = 1\n");
  ASSERT_TRUE(ok.module) << ok.rendered();
  EXPECT_EQ(ok.module->body.at(1)->range.begin.col, 15u);
}

} // namespace
} // namespace dkv::pyfront
