// The Python AST printer: one node per line, fields labelled, positions as @line:col.
#include "pyfront/AstPrinter.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <string>

namespace dkv::pyfront {

namespace {

using namespace py;

std::string quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    unsigned char u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\')
      out += std::string("\\") + c;
    else if (c == '\n')
      out += "\\n";
    else if (c == '\t')
      out += "\\t";
    else if (u < 0x20 || u == 0x7F)
      out += fmt::format("\\x{:02x}", u);
    else
      out += c;
  }
  return out + "\"";
}

std::string at(const SourceRange &r) { return fmt::format("@{}:{}", r.begin.line, r.begin.col); }

class Printer {
public:
  explicit Printer(std::ostream &out) : out_(out) {}

  void module(const Module &m) {
    out_ << "Module\n";
    body(m.body, 1);
  }

private:
  std::ostream &out_;

  void line(int depth, std::string_view text) {
    out_ << std::string(static_cast<size_t>(depth) * 2, ' ') << text << "\n";
  }

  void body(const Body &stmts, int depth) {
    for (const auto &s : stmts)
      stmt(*s, depth);
  }
  void labelledBody(std::string_view label, const Body &stmts, int depth) {
    if (stmts.empty())
      return;
    line(depth, fmt::format("{}:", label));
    body(stmts, depth + 1);
  }
  void child(std::string_view label, const Expr *e, int depth) {
    if (e)
      expr(*e, depth, label);
  }
  void list(std::string_view label, const std::vector<ExprPtr> &es, int depth) {
    if (es.empty())
      return;
    line(depth, fmt::format("{}:", label));
    for (const auto &e : es)
      expr(*e, depth + 1, "");
  }
  void keywords(const std::vector<Keyword> &ks, int depth) {
    for (const auto &k : ks) {
      line(depth, k.name.empty() ? fmt::format("keyword ** {}", at(k.range))
                                 : fmt::format("keyword {} {}", k.name, at(k.range)));
      expr(*k.value, depth + 1, "");
    }
  }
  void params(const std::vector<Param> &ps, int depth) {
    for (const auto &p : ps) {
      line(depth, fmt::format("param {} {} {}", p.name, toString(p.kind), at(p.range)));
      child("annotation", p.annotation.get(), depth + 1);
      child("default", p.default_.get(), depth + 1);
    }
  }
  void typeParams(const std::vector<TypeParam> &ps, int depth) {
    for (const auto &p : ps) {
      std::string_view mark = p.kind == TypeParamKind::TypeVarTuple ? "*"
                              : p.kind == TypeParamKind::ParamSpec  ? "**"
                                                                    : "";
      line(depth, fmt::format("type_param {}{} {}", mark, p.name, at(p.range)));
      child("bound", p.bound.get(), depth + 1);
      child("default", p.default_.get(), depth + 1);
    }
  }
  void generators(const std::vector<Comprehension> &gs, int depth) {
    for (const auto &g : gs) {
      line(depth, fmt::format("{}for {}", g.isAsync ? "async " : "", at(g.range)));
      child("target", g.target.get(), depth + 1);
      child("iter", g.iter.get(), depth + 1);
      list("ifs", g.ifs, depth + 1);
    }
  }

  void stmt(const Stmt &s, int depth) {
    std::string head = fmt::format("{} {}", toString(s.kind), at(s.range));
    switch (s.kind) {
    case StmtKind::FunctionDef: {
      const auto &f = cast<FunctionDef>(s);
      line(depth,
           fmt::format("{}FunctionDef {} {}", f.isAsync ? "async " : "", f.name, at(s.range)));
      list("decorators", f.decorators, depth + 1);
      typeParams(f.typeParams, depth + 1);
      params(f.params, depth + 1);
      child("returns", f.returns.get(), depth + 1);
      labelledBody("body", f.body, depth + 1);
      return;
    }
    case StmtKind::ClassDef: {
      const auto &c = cast<ClassDef>(s);
      line(depth, fmt::format("ClassDef {} {}", c.name, at(s.range)));
      list("decorators", c.decorators, depth + 1);
      typeParams(c.typeParams, depth + 1);
      list("bases", c.bases, depth + 1);
      keywords(c.keywords, depth + 1);
      labelledBody("body", c.body, depth + 1);
      return;
    }
    case StmtKind::Return:
      line(depth, head);
      child("value", cast<Return>(s).value.get(), depth + 1);
      return;
    case StmtKind::Delete:
      line(depth, head);
      list("targets", cast<Delete>(s).targets, depth + 1);
      return;
    case StmtKind::Assign: {
      const auto &a = cast<Assign>(s);
      line(depth, head);
      list("targets", a.targets, depth + 1);
      child("value", a.value.get(), depth + 1);
      return;
    }
    case StmtKind::AugAssign: {
      const auto &a = cast<AugAssign>(s);
      line(depth, fmt::format("AugAssign {}= {}", toString(a.op), at(s.range)));
      child("target", a.target.get(), depth + 1);
      child("value", a.value.get(), depth + 1);
      return;
    }
    case StmtKind::AnnAssign: {
      const auto &a = cast<AnnAssign>(s);
      line(depth, head);
      child("target", a.target.get(), depth + 1);
      child("annotation", a.annotation.get(), depth + 1);
      child("value", a.value.get(), depth + 1);
      return;
    }
    case StmtKind::For: {
      const auto &f = cast<For>(s);
      line(depth, fmt::format("{}For {}", f.isAsync ? "async " : "", at(s.range)));
      child("target", f.target.get(), depth + 1);
      child("iter", f.iter.get(), depth + 1);
      labelledBody("body", f.body, depth + 1);
      labelledBody("orelse", f.orelse, depth + 1);
      return;
    }
    case StmtKind::While: {
      const auto &w = cast<While>(s);
      line(depth, head);
      child("test", w.test.get(), depth + 1);
      labelledBody("body", w.body, depth + 1);
      labelledBody("orelse", w.orelse, depth + 1);
      return;
    }
    case StmtKind::If: {
      const auto &i = cast<If>(s);
      line(depth, head);
      child("test", i.test.get(), depth + 1);
      labelledBody("body", i.body, depth + 1);
      labelledBody("orelse", i.orelse, depth + 1);
      return;
    }
    case StmtKind::With: {
      const auto &w = cast<With>(s);
      line(depth, fmt::format("{}With {}", w.isAsync ? "async " : "", at(s.range)));
      for (const auto &item : w.items) {
        line(depth + 1, "item");
        child("context", item.context.get(), depth + 2);
        child("vars", item.vars.get(), depth + 2);
      }
      labelledBody("body", w.body, depth + 1);
      return;
    }
    case StmtKind::Match: {
      const auto &m = cast<Match>(s);
      line(depth, head);
      child("subject", m.subject.get(), depth + 1);
      for (const auto &c : m.cases) {
        line(depth + 1, fmt::format("case {}", at(c.range)));
        pattern(*c.pattern, depth + 2, "pattern");
        child("guard", c.guard.get(), depth + 2);
        labelledBody("body", c.body, depth + 2);
      }
      return;
    }
    case StmtKind::Raise: {
      const auto &r = cast<Raise>(s);
      line(depth, head);
      child("exc", r.exc.get(), depth + 1);
      child("cause", r.cause.get(), depth + 1);
      return;
    }
    case StmtKind::Try: {
      const auto &t = cast<Try>(s);
      line(depth, fmt::format("{} {}", t.isStar ? "TryStar" : "Try", at(s.range)));
      labelledBody("body", t.body, depth + 1);
      for (const auto &h : t.handlers) {
        line(depth + 1, h.name.empty() ? fmt::format("except {}", at(h.range))
                                       : fmt::format("except as {} {}", h.name, at(h.range)));
        child("type", h.type.get(), depth + 2);
        labelledBody("body", h.body, depth + 2);
      }
      labelledBody("orelse", t.orelse, depth + 1);
      labelledBody("finalbody", t.finalbody, depth + 1);
      return;
    }
    case StmtKind::Assert: {
      const auto &a = cast<Assert>(s);
      line(depth, head);
      child("test", a.test.get(), depth + 1);
      child("msg", a.msg.get(), depth + 1);
      return;
    }
    case StmtKind::Import:
    case StmtKind::ImportFrom: {
      const std::vector<Alias> *names = nullptr;
      if (s.kind == StmtKind::Import) {
        line(depth, head);
        names = &cast<Import>(s).names;
      } else {
        const auto &i = cast<ImportFrom>(s);
        line(depth,
             fmt::format("ImportFrom {}{} {}", std::string(i.level, '.'), i.module, at(s.range)));
        names = &i.names;
      }
      for (const auto &a : *names)
        line(depth + 1, a.asname.empty()
                            ? fmt::format("alias {} {}", a.name, at(a.range))
                            : fmt::format("alias {} as {} {}", a.name, a.asname, at(a.range)));
      return;
    }
    case StmtKind::Global:
      line(depth, fmt::format("Global {} {}", fmt::join(cast<Global>(s).names, ", "), at(s.range)));
      return;
    case StmtKind::Nonlocal:
      line(depth,
           fmt::format("Nonlocal {} {}", fmt::join(cast<Nonlocal>(s).names, ", "), at(s.range)));
      return;
    case StmtKind::ExprStmt:
      line(depth, head);
      child("value", cast<ExprStmt>(s).value.get(), depth + 1);
      return;
    case StmtKind::TypeAlias: {
      const auto &t = cast<TypeAlias>(s);
      line(depth, fmt::format("TypeAlias {} {}", t.name, at(s.range)));
      typeParams(t.typeParams, depth + 1);
      child("value", t.value.get(), depth + 1);
      return;
    }
    case StmtKind::Pass:
    case StmtKind::Break:
    case StmtKind::Continue:
      line(depth, head);
      return;
    }
  }

  void pattern(const Pattern &p, int depth, std::string_view label) {
    std::string prefix = label.empty() ? "" : fmt::format("{}: ", label);
    std::string name = p.name.empty() ? "" : fmt::format(" {}", p.name);
    line(depth, fmt::format("{}{}{} {}", prefix, toString(p.kind), name, at(p.range)));
    child("value", p.value.get(), depth + 1);
    for (size_t i = 0; i < p.children.size(); ++i) {
      if (i < p.keys.size())
        child("key", p.keys[i].get(), depth + 1);
      pattern(*p.children[i], depth + 1, "");
    }
    for (size_t i = 0; i < p.kwPatterns.size(); ++i)
      pattern(*p.kwPatterns[i], depth + 1, p.kwNames[i]);
  }

  void expr(const Expr &e, int depth, std::string_view label) {
    std::string prefix = label.empty() ? "" : fmt::format("{}: ", label);
    std::string kind(toString(e.kind));
    auto head = [&](std::string_view detail) {
      line(depth, detail.empty() ? fmt::format("{}{} {}", prefix, kind, at(e.range))
                                 : fmt::format("{}{} {} {}", prefix, kind, detail, at(e.range)));
    };
    int d = depth + 1;
    switch (e.kind) {
    case ExprKind::Name:
      head(cast<Name>(e).id);
      return;
    case ExprKind::Constant: {
      const auto &c = cast<Constant>(e);
      switch (c.constKind) {
      case ConstKind::String:
        head(fmt::format("{}{}", c.fString ? "f-string " : "", quote(c.str)));
        return;
      case ConstKind::Bytes:
        head(fmt::format("b{}", quote(c.str)));
        return;
      case ConstKind::Int:
        head(c.intValue ? fmt::format("{}", *c.intValue) : c.text);
        return;
      default:
        head(c.text);
        return;
      }
    }
    case ExprKind::UnaryOp:
      head(toString(cast<UnaryOp>(e).op));
      child("operand", cast<UnaryOp>(e).operand.get(), d);
      return;
    case ExprKind::BinOp: {
      const auto &b = cast<BinOp>(e);
      head(toString(b.op));
      child("left", b.left.get(), d);
      child("right", b.right.get(), d);
      return;
    }
    case ExprKind::BoolOp:
      head(toString(cast<BoolOp>(e).op));
      list("values", cast<BoolOp>(e).values, d);
      return;
    case ExprKind::Compare: {
      const auto &c = cast<Compare>(e);
      std::string ops;
      for (CmpOpKind op : c.ops)
        ops += (ops.empty() ? "" : ", ") + std::string(toString(op));
      head(ops);
      child("left", c.left.get(), d);
      list("comparators", c.comparators, d);
      return;
    }
    case ExprKind::Call: {
      const auto &c = cast<Call>(e);
      head("");
      child("func", c.func.get(), d);
      list("args", c.args, d);
      keywords(c.keywords, d);
      return;
    }
    case ExprKind::Attribute:
      head(cast<Attribute>(e).attr);
      child("value", cast<Attribute>(e).value.get(), d);
      return;
    case ExprKind::Subscript:
      head("");
      child("value", cast<Subscript>(e).value.get(), d);
      child("slice", cast<Subscript>(e).slice.get(), d);
      return;
    case ExprKind::Slice: {
      const auto &s = cast<Slice>(e);
      head("");
      child("lower", s.lower.get(), d);
      child("upper", s.upper.get(), d);
      child("step", s.step.get(), d);
      return;
    }
    case ExprKind::Tuple:
      head("");
      list("elts", cast<Tuple>(e).elts, d);
      return;
    case ExprKind::List:
      head("");
      list("elts", cast<List>(e).elts, d);
      return;
    case ExprKind::Set:
      head("");
      list("elts", cast<Set>(e).elts, d);
      return;
    case ExprKind::Dict: {
      const auto &dict = cast<Dict>(e);
      head("");
      for (size_t i = 0; i < dict.keys.size(); ++i) {
        if (dict.keys[i])
          child("key", dict.keys[i].get(), d);
        child(dict.keys[i] ? "value" : "unpack", dict.values[i].get(), d);
      }
      return;
    }
    case ExprKind::ListComp:
      head("");
      child("elt", cast<ListComp>(e).elt.get(), d);
      generators(cast<ListComp>(e).generators, d);
      return;
    case ExprKind::SetComp:
      head("");
      child("elt", cast<SetComp>(e).elt.get(), d);
      generators(cast<SetComp>(e).generators, d);
      return;
    case ExprKind::GeneratorExp:
      head("");
      child("elt", cast<GeneratorExp>(e).elt.get(), d);
      generators(cast<GeneratorExp>(e).generators, d);
      return;
    case ExprKind::DictComp:
      head("");
      child("key", cast<DictComp>(e).key.get(), d);
      child("value", cast<DictComp>(e).value.get(), d);
      generators(cast<DictComp>(e).generators, d);
      return;
    case ExprKind::Lambda:
      head("");
      params(cast<Lambda>(e).params, d);
      child("body", cast<Lambda>(e).body.get(), d);
      return;
    case ExprKind::IfExp: {
      const auto &i = cast<IfExp>(e);
      head("");
      child("test", i.test.get(), d);
      child("body", i.body.get(), d);
      child("orelse", i.orelse.get(), d);
      return;
    }
    case ExprKind::NamedExpr:
      head("");
      child("target", cast<NamedExpr>(e).target.get(), d);
      child("value", cast<NamedExpr>(e).value.get(), d);
      return;
    case ExprKind::Starred:
      head("");
      child("value", cast<Starred>(e).value.get(), d);
      return;
    case ExprKind::Await:
      head("");
      child("value", cast<Await>(e).value.get(), d);
      return;
    case ExprKind::Yield:
      head("");
      child("value", cast<Yield>(e).value.get(), d);
      return;
    case ExprKind::YieldFrom:
      head("");
      child("value", cast<YieldFrom>(e).value.get(), d);
      return;
    }
  }
};

} // namespace

void printModule(const py::Module &module, std::ostream &out) { Printer(out).module(module); }

} // namespace dkv::pyfront
