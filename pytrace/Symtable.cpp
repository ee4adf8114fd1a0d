// CPython's scope rules, decided statically over the AST: a name bound anywhere in a
// function is local to it for the whole function (read before assignment is an
// UnboundLocalError), unless declared global or nonlocal; class bodies and
// comprehensions are scopes of their own, and a comprehension's `:=` binds in the
// enclosing function (PEP 572).
#include "pytrace/Symtable.h"

#include <vector>

namespace dkv::pytrace {

namespace {

struct Raw {
  ScopeInfo *info = nullptr;
  Raw *parent = nullptr;
  std::set<std::string> uses;
  std::set<std::string> stores;
  std::vector<Raw *> children;
};

class Builder {
public:
  Builder(std::map<const void *, std::unique_ptr<ScopeInfo>> &scopes) : scopes_(scopes) {}

  Raw *open(const void *node, ScopeInfo::Type type, Raw *parent) {
    auto info = std::make_unique<ScopeInfo>();
    info->type = type;
    raws_.push_back(std::make_unique<Raw>());
    Raw *raw = raws_.back().get();
    raw->info = info.get();
    raw->parent = parent;
    if (parent)
      parent->children.push_back(raw);
    scopes_[node] = std::move(info);
    return raw;
  }

  void body(const py::Body &b, Raw *s) {
    for (const py::StmtPtr &st : b)
      stmt(*st, s);
  }

  void store(const std::string &name, Raw *s) { s->stores.insert(name); }

  // A target of an assignment, `for`, `with`, `del`: names are bound; attributes and
  // subscripts read their base.
  void target(const py::Expr &e, Raw *s) {
    switch (e.kind) {
    case py::ExprKind::Name:
      store(py::cast<py::Name>(e).id, s);
      return;
    case py::ExprKind::Tuple:
      for (const py::ExprPtr &x : py::cast<py::Tuple>(e).elts)
        target(*x, s);
      return;
    case py::ExprKind::List:
      for (const py::ExprPtr &x : py::cast<py::List>(e).elts)
        target(*x, s);
      return;
    case py::ExprKind::Starred:
      target(*py::cast<py::Starred>(e).value, s);
      return;
    default:
      expr(e, s);
    }
  }

  void params(const std::vector<py::Param> &ps, Raw *outer, Raw *inner) {
    for (const py::Param &p : ps) {
      if (p.default_)
        expr(*p.default_, outer);
      store(p.name, inner);
    }
  }

  void pattern(const py::Pattern &p, Raw *s) {
    if (p.value)
      expr(*p.value, s);
    if (!p.name.empty() && p.name != "_")
      store(p.name, s);
    for (const py::PatternPtr &c : p.children)
      pattern(*c, s);
    for (const py::ExprPtr &k : p.keys)
      expr(*k, s);
    for (const py::PatternPtr &c : p.kwPatterns)
      pattern(*c, s);
  }

  void stmt(const py::Stmt &st, Raw *s) {
    using py::StmtKind;
    switch (st.kind) {
    case StmtKind::FunctionDef: {
      const auto &d = py::cast<py::FunctionDef>(st);
      for (const py::ExprPtr &dec : d.decorators)
        expr(*dec, s);
      Raw *inner = open(&d, ScopeInfo::Type::Function, s);
      params(d.params, s, inner);
      body(d.body, inner);
      store(d.name, s);
      return;
    }
    case StmtKind::ClassDef: {
      const auto &c = py::cast<py::ClassDef>(st);
      for (const py::ExprPtr &dec : c.decorators)
        expr(*dec, s);
      for (const py::ExprPtr &b : c.bases)
        expr(*b, s);
      for (const py::Keyword &k : c.keywords)
        expr(*k.value, s);
      Raw *inner = open(&c, ScopeInfo::Type::Class, s);
      body(c.body, inner);
      store(c.name, s);
      return;
    }
    case StmtKind::Return:
      if (const auto &r = py::cast<py::Return>(st); r.value)
        expr(*r.value, s);
      return;
    case StmtKind::Delete:
      for (const py::ExprPtr &t : py::cast<py::Delete>(st).targets)
        target(*t, s);
      return;
    case StmtKind::Assign: {
      const auto &a = py::cast<py::Assign>(st);
      expr(*a.value, s);
      for (const py::ExprPtr &t : a.targets)
        target(*t, s);
      return;
    }
    case StmtKind::AugAssign: {
      const auto &a = py::cast<py::AugAssign>(st);
      expr(*a.value, s);
      if (a.target->kind == py::ExprKind::Name)
        s->uses.insert(py::cast<py::Name>(*a.target).id);
      target(*a.target, s);
      return;
    }
    case StmtKind::AnnAssign: {
      // Annotations are not evaluated (docs/python.md: as under PEP 563).
      const auto &a = py::cast<py::AnnAssign>(st);
      if (a.value)
        expr(*a.value, s);
      target(*a.target, s);
      return;
    }
    case StmtKind::For: {
      const auto &f = py::cast<py::For>(st);
      expr(*f.iter, s);
      target(*f.target, s);
      body(f.body, s);
      body(f.orelse, s);
      return;
    }
    case StmtKind::While: {
      const auto &w = py::cast<py::While>(st);
      expr(*w.test, s);
      body(w.body, s);
      body(w.orelse, s);
      return;
    }
    case StmtKind::If: {
      const auto &i = py::cast<py::If>(st);
      expr(*i.test, s);
      body(i.body, s);
      body(i.orelse, s);
      return;
    }
    case StmtKind::With: {
      const auto &w = py::cast<py::With>(st);
      for (const py::WithItem &item : w.items) {
        expr(*item.context, s);
        if (item.vars)
          target(*item.vars, s);
      }
      body(w.body, s);
      return;
    }
    case StmtKind::Match: {
      const auto &m = py::cast<py::Match>(st);
      expr(*m.subject, s);
      for (const py::MatchCase &c : m.cases) {
        pattern(*c.pattern, s);
        if (c.guard)
          expr(*c.guard, s);
        body(c.body, s);
      }
      return;
    }
    case StmtKind::Raise: {
      const auto &r = py::cast<py::Raise>(st);
      if (r.exc)
        expr(*r.exc, s);
      if (r.cause)
        expr(*r.cause, s);
      return;
    }
    case StmtKind::Try: {
      const auto &t = py::cast<py::Try>(st);
      body(t.body, s);
      for (const py::ExceptHandler &h : t.handlers) {
        if (h.type)
          expr(*h.type, s);
        if (!h.name.empty())
          store(h.name, s);
        body(h.body, s);
      }
      body(t.orelse, s);
      body(t.finalbody, s);
      return;
    }
    case StmtKind::Assert: {
      const auto &a = py::cast<py::Assert>(st);
      expr(*a.test, s);
      if (a.msg)
        expr(*a.msg, s);
      return;
    }
    case StmtKind::Import:
      for (const py::Alias &a : py::cast<py::Import>(st).names)
        store(a.asname.empty() ? a.name.substr(0, a.name.find('.')) : a.asname, s);
      return;
    case StmtKind::ImportFrom:
      for (const py::Alias &a : py::cast<py::ImportFrom>(st).names)
        if (a.name != "*")
          store(a.asname.empty() ? a.name : a.asname, s);
      return;
    case StmtKind::Global:
      for (const std::string &n : py::cast<py::Global>(st).names)
        s->info->globals.insert(n);
      return;
    case StmtKind::Nonlocal:
      for (const std::string &n : py::cast<py::Nonlocal>(st).names) {
        s->info->nonlocals.insert(n);
        nonlocalStmt_[s].emplace(n, &st);
      }
      return;
    case StmtKind::ExprStmt:
      expr(*py::cast<py::ExprStmt>(st).value, s);
      return;
    case StmtKind::TypeAlias:
      store(py::cast<py::TypeAlias>(st).name, s);
      return;
    case StmtKind::Pass:
    case StmtKind::Break:
    case StmtKind::Continue:
      return;
    }
  }

  template <typename C> void comprehension(const C &c, const py::Expr &node, Raw *s) {
    const std::vector<py::Comprehension> &gens = c.generators;
    if (gens.empty())
      return;
    expr(*gens[0].iter, s); // evaluated in the enclosing scope
    Raw *inner = open(&node, ScopeInfo::Type::Comprehension, s);
    for (size_t i = 0; i < gens.size(); ++i) {
      if (i > 0)
        expr(*gens[i].iter, inner);
      target(*gens[i].target, inner);
      for (const py::ExprPtr &cond : gens[i].ifs)
        expr(*cond, inner);
    }
  }

  void expr(const py::Expr &e, Raw *s) {
    using py::ExprKind;
    switch (e.kind) {
    case ExprKind::Name:
      s->uses.insert(py::cast<py::Name>(e).id);
      return;
    case ExprKind::Constant:
      return;
    case ExprKind::UnaryOp:
      expr(*py::cast<py::UnaryOp>(e).operand, s);
      return;
    case ExprKind::BinOp: {
      const auto &b = py::cast<py::BinOp>(e);
      expr(*b.left, s);
      expr(*b.right, s);
      return;
    }
    case ExprKind::BoolOp:
      for (const py::ExprPtr &x : py::cast<py::BoolOp>(e).values)
        expr(*x, s);
      return;
    case ExprKind::Compare: {
      const auto &c = py::cast<py::Compare>(e);
      expr(*c.left, s);
      for (const py::ExprPtr &x : c.comparators)
        expr(*x, s);
      return;
    }
    case ExprKind::Call: {
      const auto &c = py::cast<py::Call>(e);
      expr(*c.func, s);
      for (const py::ExprPtr &x : c.args)
        expr(*x, s);
      for (const py::Keyword &k : c.keywords)
        expr(*k.value, s);
      return;
    }
    case ExprKind::Attribute:
      expr(*py::cast<py::Attribute>(e).value, s);
      return;
    case ExprKind::Subscript: {
      const auto &x = py::cast<py::Subscript>(e);
      expr(*x.value, s);
      expr(*x.slice, s);
      return;
    }
    case ExprKind::Slice: {
      const auto &x = py::cast<py::Slice>(e);
      for (const py::ExprPtr *p : {&x.lower, &x.upper, &x.step})
        if (*p)
          expr(**p, s);
      return;
    }
    case ExprKind::Tuple:
      for (const py::ExprPtr &x : py::cast<py::Tuple>(e).elts)
        expr(*x, s);
      return;
    case ExprKind::List:
      for (const py::ExprPtr &x : py::cast<py::List>(e).elts)
        expr(*x, s);
      return;
    case ExprKind::Set:
      for (const py::ExprPtr &x : py::cast<py::Set>(e).elts)
        expr(*x, s);
      return;
    case ExprKind::Dict: {
      const auto &d = py::cast<py::Dict>(e);
      for (size_t i = 0; i < d.keys.size(); ++i) {
        if (d.keys[i])
          expr(*d.keys[i], s);
        expr(*d.values[i], s);
      }
      return;
    }
    case ExprKind::ListComp: {
      const auto &c = py::cast<py::ListComp>(e);
      comprehension(c, e, s);
      expr(*c.elt, scopeOf(&e));
      return;
    }
    case ExprKind::SetComp: {
      const auto &c = py::cast<py::SetComp>(e);
      comprehension(c, e, s);
      expr(*c.elt, scopeOf(&e));
      return;
    }
    case ExprKind::GeneratorExp: {
      const auto &c = py::cast<py::GeneratorExp>(e);
      comprehension(c, e, s);
      expr(*c.elt, scopeOf(&e));
      return;
    }
    case ExprKind::DictComp: {
      const auto &c = py::cast<py::DictComp>(e);
      comprehension(c, e, s);
      expr(*c.key, scopeOf(&e));
      expr(*c.value, scopeOf(&e));
      return;
    }
    case ExprKind::Lambda: {
      const auto &l = py::cast<py::Lambda>(e);
      Raw *inner = open(&e, ScopeInfo::Type::Function, s);
      params(l.params, s, inner);
      expr(*l.body, inner);
      return;
    }
    case ExprKind::IfExp: {
      const auto &i = py::cast<py::IfExp>(e);
      expr(*i.test, s);
      expr(*i.body, s);
      expr(*i.orelse, s);
      return;
    }
    case ExprKind::NamedExpr: {
      const auto &n = py::cast<py::NamedExpr>(e);
      expr(*n.value, s);
      const std::string &id = py::cast<py::Name>(*n.target).id;
      if (s->info->type == ScopeInfo::Type::Comprehension) {
        // PEP 572: bound in the nearest enclosing scope that is not a comprehension.
        Raw *outer = s;
        while (outer->info->type == ScopeInfo::Type::Comprehension) {
          outer->info->walrus.insert(id);
          outer->uses.insert(id);
          outer = outer->parent;
        }
        store(id, outer);
      } else {
        store(id, s);
      }
      return;
    }
    case ExprKind::Starred:
      expr(*py::cast<py::Starred>(e).value, s);
      return;
    case ExprKind::Await:
    case ExprKind::Yield:
    case ExprKind::YieldFrom: {
      s->info->generator = true;
      const auto &v = static_cast<const py::Unary<ExprKind::Yield> &>(e);
      if (v.value)
        expr(*v.value, s);
      return;
    }
    }
  }

  Raw *scopeOf(const void *node) {
    for (auto &r : raws_)
      if (scopes_.at(node).get() == r->info)
        return r.get();
    return nullptr;
  }

  // Locals and free variables, innermost scopes first.
  void resolve(Raw *s) {
    ScopeInfo &info = *s->info;
    for (const std::string &n : s->stores)
      if (!info.globals.count(n) && !info.nonlocals.count(n) && !info.walrus.count(n))
        info.locals.insert(n);
    for (Raw *c : s->children)
      resolve(c);
    if (info.type == ScopeInfo::Type::Module) {
      info.locals.clear(); // module names are globals
      return;
    }
    // A class body's own names never close over: its methods' free variables pass
    // through it to the enclosing function (CPython: methods do not see the class
    // namespace).
    std::set<std::string> own = s->uses;
    own.insert(info.nonlocals.begin(), info.nonlocals.end());
    for (const std::string &n : own)
      if (!info.globals.count(n) && !info.locals.count(n))
        info.frees.insert(n);
    for (Raw *c : s->children)
      for (const std::string &n : c->info->frees)
        if (!info.globals.count(n) &&
            (info.type == ScopeInfo::Type::Class || !info.locals.count(n)))
          info.frees.insert(n);
  }

  // `nonlocal x` needs an enclosing function that binds x (CPython's SyntaxError).
  void checkNonlocals(Raw *s) {
    for (const auto &[name, st] : nonlocalStmt_[s]) {
      bool found = false;
      for (Raw *p = s->parent; p && !found; p = p->parent) {
        if (p->info->type == ScopeInfo::Type::Module)
          break;
        if (p->info->type == ScopeInfo::Type::Class)
          continue;
        found = p->info->locals.count(name) || p->info->nonlocals.count(name);
      }
      if (!found && !s->info->badNonlocal) {
        s->info->badNonlocal = st;
        s->info->badNonlocalName = name;
      }
    }
    for (Raw *c : s->children)
      checkNonlocals(c);
  }

private:
  std::map<const void *, std::unique_ptr<ScopeInfo>> &scopes_;
  std::vector<std::unique_ptr<Raw>> raws_;
  std::map<Raw *, std::map<std::string, const py::Stmt *>> nonlocalStmt_;
};

} // namespace

Symtable::Symtable(const py::Module &module) {
  Builder b(scopes_);
  Raw *root = b.open(&module, ScopeInfo::Type::Module, nullptr);
  b.body(module.body, root);
  b.resolve(root);
  b.checkNonlocals(root);
  moduleScope_ = scopes_.at(&module).get();
}

const ScopeInfo &Symtable::of(const void *node) const { return *scopes_.at(node); }

} // namespace dkv::pytrace
