// The interpreter's statements and expressions: CPython's evaluation order, scopes
// (pytrace/Symtable.h), calls and argument binding, exceptions, `with`, `match` and
// comprehensions (docs/python.md "Object model").
#include "pytrace/Interp.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace dkv::pytrace {

[[noreturn]] void fail(SourceRange r, std::string id, std::string message) {
  throw TraceError{r, std::move(id), std::move(message), {}, 0, {}};
}
[[noreturn]] void unsupported(SourceRange r, const std::string &what) {
  fail(r, "python-unsupported", what);
}

//===----------------------------------------------------------------------===//
// Value constructors
//===----------------------------------------------------------------------===//

V none() {
  static const V v = std::make_shared<NoneV>();
  return v;
}
V boolean(bool b) {
  static const V t = std::make_shared<BoolV>(true), f = std::make_shared<BoolV>(false);
  return b ? t : f;
}
V integer(int64_t i) {
  // CPython caches -5..256: `is` on them is equality (Objects.cpp).
  static const std::vector<V> small = [] {
    std::vector<V> out;
    for (int64_t k = -5; k <= 256; ++k)
      out.push_back(std::make_shared<IntV>(k));
    return out;
  }();
  if (i >= -5 && i <= 256)
    return small[static_cast<size_t>(i + 5)];
  return std::make_shared<IntV>(i);
}
V floating(double f) { return std::make_shared<FloatV>(f); }
const ScalarType *scalarTypeOf(const V &v) {
  const ScalarType *s = nullptr;
  if (auto *i = dynCast<IntV>(v))
    s = &i->scalar;
  else if (auto *f = dynCast<FloatV>(v))
    s = &f->scalar;
  else if (auto *b = dynCast<BoolV>(v))
    s = &b->scalar;
  return s && s->any() ? s : nullptr;
}
bool scalarOfType(const V &v) { return scalarTypeOf(v) != nullptr; }
V withScalar(const V &v, const ScalarType &t) {
  if (auto *i = dynCast<IntV>(v)) {
    if (!t.any())
      return i->scalar.any() ? integer(i->i) : v;
    auto out = std::make_shared<IntV>(i->i);
    out->scalar = t;
    return out;
  }
  if (auto *f = dynCast<FloatV>(v)) {
    if (!t.any())
      return f->scalar.any() ? floating(f->f) : v;
    auto out = std::make_shared<FloatV>(f->f);
    out->scalar = t;
    return out;
  }
  if (auto *b = dynCast<BoolV>(v)) {
    if (!t.any())
      return b->scalar.any() ? boolean(b->b) : v;
    auto out = std::make_shared<BoolV>(b->b);
    out->scalar = t;
    return out;
  }
  return v;
}
V string(std::string s) { return std::make_shared<StrV>(std::move(s)); }
V tuple(std::vector<V> items) { return std::make_shared<TupleV>(std::move(items)); }

V tupleOfClass(std::vector<V> items, ClassP cls) {
  auto t = std::make_shared<TupleV>(std::move(items));
  t->cls = std::move(cls);
  return t;
}

V sameSequence(const V &like, std::vector<V> items) {
  if (like->kind != Kind::Tuple)
    return list(std::move(items));
  return tupleOfClass(std::move(items), cast<TupleV>(like).cls);
}
V list(std::vector<V> items) { return std::make_shared<ListV>(std::move(items)); }
V ellipsis() {
  static const V v = std::make_shared<EllipsisV>();
  return v;
}
V builtinValue(const BuiltinFn &fn, V self) {
  return std::make_shared<BuiltinV>(&fn, std::move(self));
}

V literalValue(const Literal &l) {
  switch (l.k) {
  case Literal::K::Int:
    return integer(l.i);
  case Literal::K::Bool:
    return boolean(l.b);
  case Literal::K::None:
    return none();
  case Literal::K::Str:
    return string(l.s);
  case Literal::K::Tuple:
  case Literal::K::List: {
    std::vector<V> items;
    for (const Literal &item : l.items)
      items.push_back(literalValue(item));
    return l.k == Literal::K::Tuple ? tuple(std::move(items)) : list(std::move(items));
  }
  }
  return none();
}

//===----------------------------------------------------------------------===//
// Budgets (docs/design.md "Robustness budgets")
//===----------------------------------------------------------------------===//

void Interp::step(SourceRange r) {
  if (++steps_ > kMaxSteps)
    fail(r, "python-overflow",
         fmt::format("the trace runs more than {} Python statements and loop iterations (unrolled "
                     "loops count every iteration)",
                     kMaxSteps));
}

void Interp::alloc(uint64_t units, SourceRange r) {
  allocated_ += units;
  if (allocated_ > kMaxAlloc)
    fail(r, "python-overflow",
         fmt::format("the trace builds Python values of more than {} elements and characters in "
                     "all; dkv bounds the size of the values it computes",
                     kMaxAlloc));
}

void Interp::compareWork(SourceRange r) {
  if (++compared_ > kMaxCompare)
    fail(r, "python-overflow",
         fmt::format("comparing values takes more than {} element comparisons (nested "
                     "containers); dkv bounds the work of comparisons",
                     kMaxCompare));
}

//===----------------------------------------------------------------------===//
// Scopes
//===----------------------------------------------------------------------===//

V Interp::lookup(const std::string &id, Frame &f, SourceRange r) {
  const ScopeInfo *s = f.scope;
  if (s && s->type == ScopeInfo::Type::Class) {
    if (V v = f.classNs->get(id))
      return v;
    if (!s->locals.count(id) && f.closure) {
      auto it = f.closure->find(id);
      if (it != f.closure->end()) {
        if (it->second->value)
          return it->second->value;
        raise("NameError",
              fmt::format("cannot access free variable '{}' where it is not associated with a "
                          "value in enclosing scope",
                          id),
              r);
      }
    }
  } else if (s && s->type != ScopeInfo::Type::Module && !s->globals.count(id)) {
    auto it = f.cells.find(id);
    if (it != f.cells.end()) {
      if (it->second->value)
        return it->second->value;
      raise("UnboundLocalError",
            fmt::format("cannot access local variable '{}' where it is not associated with a value",
                        id),
            r);
    }
    if (f.closure) {
      auto c = f.closure->find(id);
      if (c != f.closure->end()) {
        if (c->second->value)
          return c->second->value;
        raise("NameError",
              fmt::format("cannot access free variable '{}' where it is not associated with a "
                          "value in enclosing scope",
                          id),
              r);
      }
    }
  }
  if (V v = f.globals->dict->get(id)) {
    if (auto *o = dynCast<OpaqueV>(v); o && o->origin->global.empty()) {
      auto origin = std::make_shared<Origin>(*o->origin);
      origin->global = id;
      return std::make_shared<OpaqueV>(origin);
    }
    return v;
  }
  if (V v = builtins_->get(id))
    return v;
  raise("NameError", fmt::format("name '{}' is not defined", id), r);
}

void Interp::bind(const std::string &id, V v, Frame &f, SourceRange r) {
  const ScopeInfo *s = f.scope;
  if (s && s->type == ScopeInfo::Type::Class && !s->globals.count(id)) {
    f.classNs->set(id, std::move(v));
    return;
  }
  if (s && s->type != ScopeInfo::Type::Module && !s->globals.count(id)) {
    auto it = f.cells.find(id);
    if (it != f.cells.end()) {
      it->second->value = std::move(v);
      return;
    }
    if (f.closure) {
      auto c = f.closure->find(id);
      if (c != f.closure->end()) {
        c->second->value = std::move(v);
        return;
      }
    }
  }
  (void)r;
  // `# dkv: set NAME=VALUE` fixes a global of the main module, whatever the file assigns,
  // and `--set MODULE.NAME=VALUE` one of a module read from disk (loadFromDisk).
  if (!pinned_.empty() && pinned_.count(f.globals == main_ ? id : f.globals->name + "." + id))
    return;
  f.globals->dict->set(id, std::move(v));
}

void Interp::unbind(const std::string &id, Frame &f, SourceRange r) {
  const ScopeInfo *s = f.scope;
  if (s && s->type == ScopeInfo::Type::Class && !s->globals.count(id)) {
    if (!f.classNs->erase(id))
      raise("NameError", fmt::format("name '{}' is not defined", id), r);
    return;
  }
  if (s && s->type != ScopeInfo::Type::Module && !s->globals.count(id)) {
    CellP cell;
    if (auto it = f.cells.find(id); it != f.cells.end())
      cell = it->second;
    else if (f.closure && f.closure->count(id))
      cell = f.closure->at(id);
    if (cell) {
      if (!cell->value)
        raise("UnboundLocalError",
              fmt::format("cannot access local variable '{}' where it is not associated with a "
                          "value",
                          id),
              r);
      cell->value = nullptr;
      return;
    }
  }
  if (!f.globals->dict->erase(id))
    raise("NameError", fmt::format("name '{}' is not defined", id), r);
}

namespace {

// The closure of a function made in frame `f`: the cells of its free variables that an
// enclosing function binds (the others are globals).
std::map<std::string, CellP> capture(const ScopeInfo &inner, Frame &f) {
  std::map<std::string, CellP> out;
  for (const std::string &n : inner.frees) {
    if (auto it = f.cells.find(n); it != f.cells.end()) {
      out[n] = it->second;
      continue;
    }
    if (f.closure)
      if (auto it = f.closure->find(n); it != f.closure->end())
        out[n] = it->second;
  }
  return out;
}

// Where the last simple statement of `body` ends (pyfront's range of a compound statement
// reaches the first token after its block).
support::SourceLoc lastEnd(const py::Body &body, support::SourceLoc dflt) {
  if (body.empty())
    return dflt;
  const py::Stmt &s = *body.back();
  switch (s.kind) {
  case py::StmtKind::FunctionDef:
    return lastEnd(py::cast<py::FunctionDef>(s).body, s.range.end);
  case py::StmtKind::ClassDef:
    return lastEnd(py::cast<py::ClassDef>(s).body, s.range.end);
  case py::StmtKind::For: {
    const auto &f = py::cast<py::For>(s);
    return lastEnd(f.orelse.empty() ? f.body : f.orelse, s.range.end);
  }
  case py::StmtKind::While: {
    const auto &w = py::cast<py::While>(s);
    return lastEnd(w.orelse.empty() ? w.body : w.orelse, s.range.end);
  }
  case py::StmtKind::If: {
    const auto &i = py::cast<py::If>(s);
    return lastEnd(i.orelse.empty() ? i.body : i.orelse, s.range.end);
  }
  case py::StmtKind::With:
    return lastEnd(py::cast<py::With>(s).body, s.range.end);
  case py::StmtKind::Try: {
    const auto &t = py::cast<py::Try>(s);
    return lastEnd(!t.finalbody.empty()  ? t.finalbody
                   : !t.orelse.empty()   ? t.orelse
                   : !t.handlers.empty() ? t.handlers.back().body
                                         : t.body,
                   s.range.end);
  }
  default:
    return s.range.end;
  }
}

} // namespace

const ScopeInfo &Interp::scopeOf(const void *node, const ModuleP &m) {
  if (auto it = moduleSymtable_.find(m.get()); it != moduleSymtable_.end() && it->second->has(node))
    return it->second->of(node);
  for (const auto &[code, table] : symtables_) // code of --call evaluated in another module
    if (table->has(node))
      return table->of(node);
  fail({}, "python-internal", "a scope the symbol table does not know");
}

V Interp::makeFunction(const std::string &name, const void *node,
                       const std::vector<py::Param> &params, const py::Body *body,
                       const py::Expr *lambda, SourceRange range, Frame &f) {
  auto fn = track(std::make_shared<FunctionV>());
  fn->name = name;
  std::string outer;
  if (f.function)
    outer = f.function->qualname + ".<locals>.";
  else if (f.scope && f.scope->type == ScopeInfo::Type::Class) {
    if (V q = f.classNs->get("__qualname__"); auto *s = dynCast<StrV>(q))
      outer = s->s + ".";
  }
  fn->qualname = outer + name;
  fn->range = range;
  if (body)
    fn->range.end = lastEnd(*body, range.end);
  fn->params = &params;
  fn->body = body;
  fn->lambda = lambda;
  fn->scope = &scopeOf(node, f.globals);
  fn->globals = f.globals;
  fn->closure = capture(*fn->scope, f);
  for (const py::Param &p : params)
    fn->defaults.push_back(p.default_ ? eval(*p.default_, f) : nullptr);
  return fn;
}

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

Flow Interp::execBody(const py::Body &body, Frame &f) {
  for (const py::StmtPtr &s : body) {
    Flow fl = exec(*s, f);
    if (fl != Flow::Normal)
      return fl;
  }
  return Flow::Normal;
}

Flow Interp::exec(const py::Stmt &s, Frame &f) {
  using py::StmtKind;
  step(s.range);
  switch (s.kind) {
  case StmtKind::Import:
  case StmtKind::ImportFrom:
    execImport(s, f);
    return Flow::Normal;
  case StmtKind::FunctionDef: {
    const auto &def = py::cast<py::FunctionDef>(s);
    if (def.isAsync)
      unsupported(s.range, "async functions");
    if (!def.typeParams.empty())
      unsupported(s.range, "type parameters of a function (PEP 695)");
    // Decorators are evaluated before the function is made, applied innermost first.
    std::vector<V> decorators;
    for (const py::ExprPtr &d : def.decorators)
      decorators.push_back(eval(*d, f));
    V fn = makeFunction(def.name, &def, def.params, &def.body, nullptr, def.range, f);
    for (size_t i = decorators.size(); i-- > 0;)
      fn = call(decorators[i], Args{{fn}, {}}, def.decorators[i]->range);
    bind(def.name, fn, f, s.range);
    return Flow::Normal;
  }
  case StmtKind::ClassDef: {
    const auto &c = py::cast<py::ClassDef>(s);
    bind(c.name, classDef(c, f), f, s.range);
    return Flow::Normal;
  }
  case StmtKind::Return: {
    const auto &r = py::cast<py::Return>(s);
    f.ret = r.value ? eval(*r.value, f) : none();
    return Flow::Return;
  }
  case StmtKind::Delete:
    for (const py::ExprPtr &t : py::cast<py::Delete>(s).targets)
      del(*t, f, t->range);
    return Flow::Normal;
  case StmtKind::Assign: {
    const auto &a = py::cast<py::Assign>(s);
    if (a.targets.size() == 1 && a.targets[0]->kind == py::ExprKind::Name)
      nameHint_ = py::cast<py::Name>(*a.targets[0]).id;
    V v = eval(*a.value, f);
    nameHint_.clear();
    for (const py::ExprPtr &t : a.targets)
      assign(*t, v, f, s.range);
    return Flow::Normal;
  }
  case StmtKind::AnnAssign: {
    const auto &a = py::cast<py::AnnAssign>(s);
    // A class body records its annotated names in order (a dataclass's fields).
    if (f.scope && f.scope->type == ScopeInfo::Type::Class &&
        a.target->kind == py::ExprKind::Name) {
      V ann = f.classNs->get("__annotations__");
      if (!ann) {
        ann = std::make_shared<DictV>();
        f.classNs->set("__annotations__", ann);
      }
      if (auto *d = dynCast<DictV>(ann))
        dictSet(d->table, string(py::cast<py::Name>(*a.target).id), none(), s.range);
    }
    if (a.value) {
      if (a.target->kind == py::ExprKind::Name)
        nameHint_ = py::cast<py::Name>(*a.target).id;
      V v = eval(*a.value, f);
      nameHint_.clear();
      assign(*a.target, v, f, s.range);
    }
    return Flow::Normal;
  }
  case StmtKind::AugAssign: {
    const auto &a = py::cast<py::AugAssign>(s);
    // CPython: the target's parts are evaluated once, the current value loaded, the
    // in-place operator applied (list `+=` extends the list in place, an int's rebinds),
    // and the result stored back.
    switch (a.target->kind) {
    case py::ExprKind::Name: {
      const std::string &id = py::cast<py::Name>(*a.target).id;
      V cur = lookup(id, f, a.target->range);
      V rhs = eval(*a.value, f);
      assign(*a.target, inplace(a.op, cur, rhs, s.range), f, s.range);
      return Flow::Normal;
    }
    case py::ExprKind::Attribute: {
      const auto &at = py::cast<py::Attribute>(*a.target);
      V obj = eval(*at.value, f);
      V cur = getAttr(obj, at.attr, a.target->range);
      V rhs = eval(*a.value, f);
      setAttr(obj, at.attr, inplace(a.op, cur, rhs, s.range), s.range);
      return Flow::Normal;
    }
    case py::ExprKind::Subscript: {
      const auto &sub = py::cast<py::Subscript>(*a.target);
      V obj = eval(*sub.value, f);
      V key = eval(*sub.slice, f);
      if (obj->kind == Kind::Ref) {
        // `o_ref[...] += v`: an accumulating store.
        V rhs = eval(*a.value, f);
        if (a.op != py::BinOpKind::Add)
          unsupported(s.range,
                      fmt::format("`{}=` on a ref (only `+=` accumulates)", py::toString(a.op)));
        store(obj, key, rhs, true, s.range, sub.slice->range);
        return Flow::Normal;
      }
      V cur = getItem(obj, key, a.target->range);
      V rhs = eval(*a.value, f);
      setItem(obj, key, inplace(a.op, cur, rhs, s.range), s.range);
      return Flow::Normal;
    }
    default:
      unsupported(s.range, "this augmented assignment target");
    }
  }
  case StmtKind::For: {
    const auto &fo = py::cast<py::For>(s);
    if (fo.isAsync)
      unsupported(s.range, "`async for`");
    V it = iter(eval(*fo.iter, f), fo.iter->range);
    while (true) {
      V item = next(it, fo.iter->range);
      if (!item)
        break;
      step(fo.target->range);
      assign(*fo.target, item, f, fo.target->range);
      Flow fl = execBody(fo.body, f);
      if (fl == Flow::Return)
        return fl;
      if (fl == Flow::Break)
        return Flow::Normal;
    }
    return execBody(fo.orelse, f);
  }
  case StmtKind::While: {
    const auto &w = py::cast<py::While>(s);
    while (truth(eval(*w.test, f), w.test->range, "a `while` condition")) {
      step(w.test->range);
      Flow fl = execBody(w.body, f);
      if (fl == Flow::Return)
        return fl;
      if (fl == Flow::Break)
        return Flow::Normal;
    }
    return execBody(w.orelse, f);
  }
  case StmtKind::If: {
    const auto &i = py::cast<py::If>(s);
    if (truth(eval(*i.test, f), i.test->range, "a Python `if` on it"))
      return execBody(i.body, f);
    return execBody(i.orelse, f);
  }
  case StmtKind::With: {
    const auto &w = py::cast<py::With>(s);
    if (w.isAsync)
      unsupported(s.range, "`async with`");
    return execWith(w, 0, f);
  }
  case StmtKind::Match:
    return execMatch(py::cast<py::Match>(s), f);
  case StmtKind::Raise: {
    const auto &r = py::cast<py::Raise>(s);
    if (!r.exc) {
      if (handling_.empty())
        raise("RuntimeError", "No active exception to reraise", s.range);
      throw PyRaise{handling_.back(), s.range, "", {}, 0};
    }
    V e = eval(*r.exc, f);
    if (r.cause)
      eval(*r.cause, f);
    if (e->kind == Kind::Class)
      e = callClass(std::static_pointer_cast<ClassV>(e), Args{}, s.range);
    if (e->kind == Kind::Opaque)
      opaqueNeeded(e, s.range, "raising it as an exception");
    if (!(e->kind == Kind::Instance &&
          isSubclass(cast<InstanceV>(e).cls, builtinClass(ClassRole::BaseException))))
      raise("TypeError", "exceptions must derive from BaseException", s.range);
    throw PyRaise{e, s.range, "", {}, 0};
  }
  case StmtKind::Try:
    return execTry(py::cast<py::Try>(s), f);
  case StmtKind::Assert: {
    const auto &a = py::cast<py::Assert>(s);
    V test = eval(*a.test, f);
    if (!truth(test, a.test->range, "an `assert` on it")) {
      std::string msg;
      if (a.msg) {
        V m = eval(*a.msg, f);
        if (auto t = str(m, a.msg->range))
          msg = *t;
      }
      raise("AssertionError", msg, s.range);
    }
    return Flow::Normal;
  }
  case StmtKind::Global:
  case StmtKind::Nonlocal:
    return Flow::Normal; // decided statically (pytrace/Symtable.h)
  case StmtKind::ExprStmt: {
    const auto &e = py::cast<py::ExprStmt>(s);
    if (auto *c = py::dynCast<py::Constant>(e.value.get());
        c && c->constKind == py::ConstKind::String && !c->fString)
      return Flow::Normal; // a docstring (an f-string's fields are evaluated)
    eval(*e.value, f);
    return Flow::Normal;
  }
  case StmtKind::TypeAlias:
    unsupported(s.range, "`type` aliases (PEP 695)");
  case StmtKind::Pass:
    return Flow::Normal;
  case StmtKind::Break:
    return Flow::Break;
  case StmtKind::Continue:
    return Flow::Continue;
  }
  return Flow::Normal;
}

Flow Interp::execTry(const py::Try &t, Frame &f) {
  if (t.isStar)
    unsupported(t.range, "`except*` (exception groups)");
  // finally runs on every way out of the try except a dkv error (the trace is over).
  auto runFinally = [&](Flow pending) -> Flow {
    Flow fl = execBody(t.finalbody, f);
    return fl != Flow::Normal ? fl : pending;
  };
  Flow fl = Flow::Normal;
  try {
    fl = execBody(t.body, f);
  } catch (PyRaise &e) {
    for (const py::ExceptHandler &h : t.handlers) {
      bool match = !h.type;
      if (h.type) {
        V type = eval(*h.type, f);
        std::vector<V> types =
            type->kind == Kind::Tuple ? cast<TupleV>(type).items : std::vector<V>{type};
        for (const V &ty : types) {
          if (ty->kind == Kind::Opaque)
            opaqueNeeded(ty, h.type->range,
                         "an `except` clause on it (which exceptions it catches)");
          if (ty->kind != Kind::Class)
            raise("TypeError",
                  "catching classes that do not inherit from BaseException is not allowed",
                  h.type->range);
          match =
              match || isSubclass(cast<InstanceV>(e.exc).cls, std::static_pointer_cast<ClassV>(ty));
        }
      }
      if (!match)
        continue;
      PyRaise caught = e;
      if (!h.name.empty())
        bind(h.name, caught.exc, f, h.range);
      Flow hf;
      handling_.push_back(caught.exc);
      struct Pop {
        std::vector<V> &h;
        ~Pop() { h.pop_back(); }
      } pop{handling_};
      try {
        hf = execBody(h.body, f);
      } catch (PyRaise &) {
        if (!h.name.empty())
          try {
            unbind(h.name, f, h.range);
          } catch (PyRaise &) {
          }
        execBody(t.finalbody, f);
        throw;
      }
      if (!h.name.empty())
        try {
          unbind(h.name, f, h.range); // CPython deletes the `as` name after the handler
        } catch (PyRaise &) {
        }
      return runFinally(hf);
    }
    Flow ff = execBody(t.finalbody, f);
    if (ff != Flow::Normal)
      return ff; // a return in finally swallows the exception, as in CPython
    throw;
  }
  if (fl == Flow::Normal)
    fl = [&] {
      try {
        return execBody(t.orelse, f);
      } catch (PyRaise &) {
        Flow ff = execBody(t.finalbody, f);
        if (ff != Flow::Normal)
          return ff;
        throw;
      }
    }();
  return runFinally(fl);
}

Flow Interp::execWith(const py::With &w, size_t i, Frame &f) {
  if (i == w.items.size())
    return execBody(w.body, f);
  const py::WithItem &item = w.items[i];
  // `with jax.set_mesh(mesh):` sets the mesh for its block only: the previous one is back
  // when the block is left, however it is left.
  struct RestoreMesh {
    Interp &in;
    V before;
    ~RestoreMesh() { in.contextMesh_ = before; }
  } restoreMesh{*this, contextMesh_};
  V ctx = eval(*item.context, f);
  SourceRange r = item.context->range;
  // Context managers the API makes do nothing dkv sees.
  if (apiAs<NamedScopeObj>(ctx) || apiAs<MeshObj>(ctx) || ctx->kind == Kind::Opaque) {
    V entered = ctx->kind == Kind::Opaque ? opaque("the value of `with ... as`", r, ctx) : ctx;
    if (item.vars)
      assign(*item.vars, entered, f, r);
    if (ctx->kind != Kind::Opaque)
      return execWith(w, i + 1, f);
    try {
      return execWith(w, i + 1, f);
    } catch (PyRaise &) {
      opaqueNeeded(ctx, r,
                   "an exception passes through `with` on it (its __exit__ may suppress "
                   "it)");
    }
  }
  if (auto *ar = apiAs<AssertRaisesObj>(ctx)) {
    size_t kernels = result_.kernels.size();
    ++insideAssertRaises_;
    struct Leave {
      int &n;
      ~Leave() { --n; }
    } leave{insideAssertRaises_};
    try {
      Flow fl = execWith(w, i + 1, f);
      // The body did not raise here: what it expects is an error of JAX that dkv does not
      // model (a validation), so the kernels it traced are not what the test means.
      result_.kernels.resize(kernels);
      if (!result_.skipped)
        result_.skipped = fmt::format(
            "the test expects an exception (assertRaises at line {}) from code that dkv "
            "runs without one: JAX's own checks are not modelled",
            ar->range.begin.line);
      return fl;
    } catch (PyRaise &e) {
      V cls = ar->exceptionClass;
      std::vector<V> types =
          cls->kind == Kind::Tuple ? cast<TupleV>(cls).items : std::vector<V>{cls};
      for (const V &ty : types)
        if (ty->kind == Kind::Class &&
            isSubclass(cast<InstanceV>(e.exc).cls, std::static_pointer_cast<ClassV>(ty)))
          return Flow::Normal;
      throw;
    }
  }
  if (auto *inst = dynCast<InstanceV>(ctx)) {
    ClassP cls = inst->cls;
    V enter = lookupClassAttr(cls, "__enter__"), exit = lookupClassAttr(cls, "__exit__");
    if (enter && exit) {
      V entered = call(getAttr(ctx, "__enter__", r), Args{}, r);
      if (item.vars)
        assign(*item.vars, entered, f, r);
      Flow fl;
      try {
        fl = execWith(w, i + 1, f);
      } catch (PyRaise &e) {
        V suppress = call(getAttr(ctx, "__exit__", r), Args{{typeOf(e.exc), e.exc, none()}, {}}, r);
        if (truth(suppress, r, "the result of __exit__"))
          return Flow::Normal;
        throw;
      }
      call(getAttr(ctx, "__exit__", r), Args{{none(), none(), none()}, {}}, r);
      return fl;
    }
  }
  raise("TypeError",
        fmt::format("'{}' object does not support the context manager protocol", typeName(*ctx)),
        r);
}

//===----------------------------------------------------------------------===//
// match
//===----------------------------------------------------------------------===//

Flow Interp::execMatch(const py::Match &m, Frame &f) {
  V subject = eval(*m.subject, f);
  for (const py::MatchCase &c : m.cases) {
    if (!matchPattern(*c.pattern, subject, f))
      continue;
    if (c.guard && !truth(eval(*c.guard, f), c.guard->range, "a `case` guard on it"))
      continue;
    return execBody(c.body, f);
  }
  return Flow::Normal;
}

bool Interp::matchPattern(const py::Pattern &p, const V &v, Frame &f) {
  SourceRange r = p.range;
  if (v->kind == Kind::Opaque || v->kind == Kind::Traced) {
    if (p.kind == py::PatternKind::As && p.children.empty()) {
      if (!p.name.empty())
        bind(p.name, v, f, r);
      return true;
    }
    if (v->kind == Kind::Opaque)
      opaqueNeeded(v, r, "a `match` on it");
    tracedBool(cast<TracedV>(v), r, "a `match` on it");
  }
  switch (p.kind) {
  case py::PatternKind::Value: {
    V x = eval(*p.value, f);
    std::optional<bool> eq = equal(v, x, r);
    if (!eq)
      opaqueNeeded(x, r, "a `case` value");
    return *eq;
  }
  case py::PatternKind::Singleton: {
    V x = eval(*p.value, f);
    return x.get() == v.get();
  }
  case py::PatternKind::Sequence: {
    if (!(v->kind == Kind::List || v->kind == Kind::Tuple || v->kind == Kind::Range))
      return false;
    std::vector<V> items = toVector(v, r);
    size_t star = p.children.size();
    for (size_t i = 0; i < p.children.size(); ++i)
      if (p.children[i]->kind == py::PatternKind::Star)
        star = i;
    if (star == p.children.size()) {
      if (items.size() != p.children.size())
        return false;
      for (size_t i = 0; i < items.size(); ++i)
        if (!matchPattern(*p.children[i], items[i], f))
          return false;
      return true;
    }
    size_t after = p.children.size() - star - 1;
    if (items.size() < star + after)
      return false;
    for (size_t i = 0; i < star; ++i)
      if (!matchPattern(*p.children[i], items[i], f))
        return false;
    for (size_t i = 0; i < after; ++i)
      if (!matchPattern(*p.children[star + 1 + i], items[items.size() - after + i], f))
        return false;
    if (!p.children[star]->name.empty() && p.children[star]->name != "_")
      bind(p.children[star]->name,
           list(std::vector<V>(items.begin() + static_cast<long>(star),
                               items.end() - static_cast<long>(after))),
           f, r);
    return true;
  }
  case py::PatternKind::Mapping: {
    auto *d = dynCast<DictV>(v);
    if (!d)
      return false;
    std::vector<V> used;
    for (size_t i = 0; i < p.keys.size(); ++i) {
      V key = eval(*p.keys[i], f);
      V val = dictGet(d->table, key, r);
      if (!val || !matchPattern(*p.children[i], val, f))
        return false;
      used.push_back(key);
    }
    if (!p.name.empty()) {
      auto rest = std::make_shared<DictV>();
      for (const Table::Entry &e : d->table.entries) {
        if (!e.live)
          continue;
        bool isUsed = false;
        for (const V &u : used)
          isUsed = isUsed || equal(u, e.key, r).value_or(false);
        if (!isUsed)
          dictSet(rest->table, e.key, e.value, r);
      }
      bind(p.name, rest, f, r);
    }
    return true;
  }
  case py::PatternKind::Class: {
    V cls = eval(*p.value, f);
    if (!isInstance(v, cls, r))
      return false;
    if (!p.children.empty()) {
      auto *c = dynCast<ClassV>(cls);
      ClassRole role = c ? c->role : ClassRole::User;
      bool selfMatch = role == ClassRole::Int || role == ClassRole::Float ||
                       role == ClassRole::Str || role == ClassRole::Bool ||
                       role == ClassRole::Tuple || role == ClassRole::List ||
                       role == ClassRole::Dict;
      if (selfMatch) {
        if (p.children.size() != 1)
          raise("TypeError",
                fmt::format("{}() accepts 1 positional sub-pattern ({} given)", c->name,
                            p.children.size()),
                r);
        if (!matchPattern(*p.children[0], v, f))
          return false;
      } else {
        V matchArgs =
            c ? lookupClassAttr(std::static_pointer_cast<ClassV>(cls), "__match_args__") : nullptr;
        std::vector<V> names = matchArgs ? toVector(matchArgs, r) : std::vector<V>{};
        if (p.children.size() > names.size())
          raise("TypeError",
                fmt::format("{}() accepts {} positional sub-patterns ({} given)", typeName(*cls),
                            names.size(), p.children.size()),
                r);
        for (size_t i = 0; i < p.children.size(); ++i) {
          auto *n = dynCast<StrV>(names[i]);
          if (!n)
            raise("TypeError", "__match_args__ elements must be strings", r);
          V attr = getAttrOpt(v, n->s, r);
          if (!attr || !matchPattern(*p.children[i], attr, f))
            return false;
        }
      }
    }
    for (size_t i = 0; i < p.kwNames.size(); ++i) {
      V attr = getAttrOpt(v, p.kwNames[i], r);
      if (!attr || !matchPattern(*p.kwPatterns[i], attr, f))
        return false;
    }
    return true;
  }
  case py::PatternKind::Star:
    return true; // handled by the enclosing sequence pattern
  case py::PatternKind::As:
    if (!p.children.empty() && !matchPattern(*p.children[0], v, f))
      return false;
    if (!p.name.empty())
      bind(p.name, v, f, r);
    return true;
  case py::PatternKind::Or:
    for (const py::PatternPtr &c : p.children)
      if (matchPattern(*c, v, f))
        return true;
    return false;
  }
  return false;
}

//===----------------------------------------------------------------------===//
// Assignment targets
//===----------------------------------------------------------------------===//

void Interp::assign(const py::Expr &target, const V &v, Frame &f, SourceRange r) {
  switch (target.kind) {
  case py::ExprKind::Name: {
    const std::string &id = py::cast<py::Name>(target).id;
    V bound = v;
    // A per-device integer or condition assigned inside the kernel is a `let` of that
    // name, so the translation reads like the Python.
    if (auto *t = dynCast<TracedV>(v); t && t->tk != TKind::Value && inKernel_)
      bound = letTraced(v, id, r);
    bind(id, bound, f, r);
    return;
  }
  case py::ExprKind::Tuple:
  case py::ExprKind::List: {
    const auto &elts = target.kind == py::ExprKind::Tuple ? py::cast<py::Tuple>(target).elts
                                                          : py::cast<py::List>(target).elts;
    if (v->kind == Kind::Opaque)
      opaqueNeeded(v, r, "unpacking it into several targets");
    std::vector<V> items = toVector(v, r);
    size_t star = elts.size();
    for (size_t i = 0; i < elts.size(); ++i)
      if (elts[i]->kind == py::ExprKind::Starred)
        star = i;
    if (star == elts.size()) {
      if (items.size() > elts.size())
        raise("ValueError", fmt::format("too many values to unpack (expected {})", elts.size()), r);
      if (items.size() < elts.size())
        raise("ValueError",
              fmt::format("not enough values to unpack (expected {}, got {})", elts.size(),
                          items.size()),
              r);
      for (size_t i = 0; i < elts.size(); ++i)
        assign(*elts[i], items[i], f, r);
      return;
    }
    size_t after = elts.size() - star - 1;
    if (items.size() < star + after)
      raise("ValueError",
            fmt::format("not enough values to unpack (expected at least {}, got {})", star + after,
                        items.size()),
            r);
    for (size_t i = 0; i < star; ++i)
      assign(*elts[i], items[i], f, r);
    assign(*py::cast<py::Starred>(*elts[star]).value,
           list(std::vector<V>(items.begin() + static_cast<long>(star),
                               items.end() - static_cast<long>(after))),
           f, r);
    for (size_t i = 0; i < after; ++i)
      assign(*elts[star + 1 + i], items[items.size() - after + i], f, r);
    return;
  }
  case py::ExprKind::Subscript: {
    const auto &sub = py::cast<py::Subscript>(target);
    V obj = eval(*sub.value, f);
    V key = eval(*sub.slice, f);
    if (obj->kind == Kind::Ref) {
      store(obj, key, v, false, r, sub.slice->range);
      return;
    }
    setItem(obj, key, v, r);
    return;
  }
  case py::ExprKind::Attribute: {
    const auto &a = py::cast<py::Attribute>(target);
    setAttr(eval(*a.value, f), a.attr, v, r);
    return;
  }
  case py::ExprKind::Starred:
    raise("SyntaxError", "starred assignment target must be in a list or tuple", r);
  default:
    unsupported(r, fmt::format("assignment to a {}", py::toString(target.kind)));
  }
}

void Interp::del(const py::Expr &target, Frame &f, SourceRange r) {
  switch (target.kind) {
  case py::ExprKind::Name:
    unbind(py::cast<py::Name>(target).id, f, r);
    return;
  case py::ExprKind::Tuple:
    for (const py::ExprPtr &e : py::cast<py::Tuple>(target).elts)
      del(*e, f, r);
    return;
  case py::ExprKind::List:
    for (const py::ExprPtr &e : py::cast<py::List>(target).elts)
      del(*e, f, r);
    return;
  case py::ExprKind::Subscript: {
    const auto &sub = py::cast<py::Subscript>(target);
    V obj = eval(*sub.value, f);
    delItem(obj, eval(*sub.slice, f), r);
    return;
  }
  case py::ExprKind::Attribute: {
    const auto &a = py::cast<py::Attribute>(target);
    delAttr(eval(*a.value, f), a.attr, r);
    return;
  }
  default:
    unsupported(r, fmt::format("`del` of a {}", py::toString(target.kind)));
  }
}

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

V Interp::eval(const py::Expr &e, Frame &f) { return evalInner(e, f); }

V Interp::evalInner(const py::Expr &e, Frame &f) {
  using py::ExprKind;
  switch (e.kind) {
  case ExprKind::Name:
    return lookup(py::cast<py::Name>(e).id, f, e.range);
  case ExprKind::Constant: {
    const auto &c = py::cast<py::Constant>(e);
    switch (c.constKind) {
    case py::ConstKind::Int:
      if (!c.intValue)
        fail(e.range, "python-overflow",
             "an integer literal beyond 64 bits: dkv computes integers exactly within 64 bits and "
             "refuses larger ones rather than wrap them");
      return integer(*c.intValue);
    case py::ConstKind::Float: {
      std::string text;
      for (char ch : c.text)
        if (ch != '_')
          text += ch;
      return floating(std::strtod(text.c_str(), nullptr));
    }
    case py::ConstKind::String:
      if (c.fString)
        return evalFString(c, f, e.range);
      alloc(c.str.size(), e.range);
      return string(c.str);
    case py::ConstKind::True:
      return boolean(true);
    case py::ConstKind::False:
      return boolean(false);
    case py::ConstKind::None:
      return none();
    case py::ConstKind::Ellipsis:
      return ellipsis();
    case py::ConstKind::Bytes:
      return opaque("the bytes literal " + c.text, e.range);
    case py::ConstKind::Imaginary:
      unsupported(e.range, "complex numbers");
    }
    return none();
  }
  case ExprKind::UnaryOp: {
    const auto &u = py::cast<py::UnaryOp>(e);
    return unary(u.op, eval(*u.operand, f), e.range);
  }
  case ExprKind::BinOp: {
    const auto &b = py::cast<py::BinOp>(e);
    V l = eval(*b.left, f);
    V r = eval(*b.right, f);
    return binop(b.op, l, r, e.range);
  }
  case ExprKind::BoolOp: {
    const auto &b = py::cast<py::BoolOp>(e);
    V v;
    for (const py::ExprPtr &x : b.values) {
      v = eval(*x, f);
      bool t = truth(v, x->range, b.op == py::BoolOpKind::And ? "`and` on it" : "`or` on it");
      if ((b.op == py::BoolOpKind::And) != t)
        return v;
    }
    return v;
  }
  case ExprKind::Compare: {
    const auto &c = py::cast<py::Compare>(e);
    V left = eval(*c.left, f);
    V result;
    for (size_t i = 0; i < c.ops.size(); ++i) {
      V right = eval(*c.comparators[i], f);
      result = compare(c.ops[i], left, right, e.range);
      if (i + 1 < c.ops.size() && !truth(result, e.range, "a chained comparison"))
        return result;
      left = right;
    }
    return result;
  }
  case ExprKind::Call:
    return evalCall(py::cast<py::Call>(e), f);
  case ExprKind::Attribute: {
    const auto &a = py::cast<py::Attribute>(e);
    return getAttr(eval(*a.value, f), a.attr, e.range);
  }
  case ExprKind::Subscript: {
    const auto &s = py::cast<py::Subscript>(e);
    V obj = eval(*s.value, f);
    return getItem(obj, eval(*s.slice, f), e.range);
  }
  case ExprKind::Slice: {
    const auto &s = py::cast<py::Slice>(e);
    V lo = s.lower ? eval(*s.lower, f) : none();
    V hi = s.upper ? eval(*s.upper, f) : none();
    V st = s.step ? eval(*s.step, f) : none();
    return std::make_shared<SliceV>(lo, hi, st);
  }
  case ExprKind::Tuple:
  case ExprKind::List:
  case ExprKind::Set: {
    const auto &elts = e.kind == ExprKind::Tuple  ? py::cast<py::Tuple>(e).elts
                       : e.kind == ExprKind::List ? py::cast<py::List>(e).elts
                                                  : py::cast<py::Set>(e).elts;
    std::vector<V> items;
    for (const py::ExprPtr &x : elts) {
      if (x->kind == ExprKind::Starred) {
        for (V &item : toVector(eval(*py::cast<py::Starred>(*x).value, f), x->range))
          items.push_back(std::move(item));
      } else {
        items.push_back(eval(*x, f));
      }
    }
    alloc(items.size() + 1, e.range);
    if (e.kind == ExprKind::Tuple)
      return tuple(std::move(items));
    if (e.kind == ExprKind::List)
      return list(std::move(items));
    auto s = std::make_shared<SetV>(false);
    for (const V &x : items)
      dictSet(s->table, x, nullptr, e.range);
    return s;
  }
  case ExprKind::Dict: {
    const auto &d = py::cast<py::Dict>(e);
    auto out = std::make_shared<DictV>();
    for (size_t i = 0; i < d.keys.size(); ++i) {
      if (!d.keys[i]) {
        V m = eval(*d.values[i], f);
        auto *src = dynCast<DictV>(m);
        if (!src) {
          if (m->kind == Kind::Opaque)
            opaqueNeeded(m, d.values[i]->range, "`**` on it in a dict display");
          raise("TypeError", fmt::format("'{}' object is not a mapping", typeName(*m)),
                d.values[i]->range);
        }
        for (const Table::Entry &en : src->table.entries)
          if (en.live)
            dictSet(out->table, en.key, en.value, e.range);
        continue;
      }
      V k = eval(*d.keys[i], f);
      V v = eval(*d.values[i], f);
      dictSet(out->table, k, v, e.range);
    }
    alloc(d.keys.size() + 1, e.range);
    return out;
  }
  case ExprKind::ListComp:
  case ExprKind::SetComp:
  case ExprKind::DictComp:
  case ExprKind::GeneratorExp:
    return comprehension(e, f);
  case ExprKind::Lambda: {
    const auto &l = py::cast<py::Lambda>(e);
    return makeFunction("<lambda>", &e, l.params, nullptr, l.body.get(), e.range, f);
  }
  case ExprKind::IfExp: {
    const auto &i = py::cast<py::IfExp>(e);
    return truth(eval(*i.test, f), i.test->range, "a conditional expression on it")
               ? eval(*i.body, f)
               : eval(*i.orelse, f);
  }
  case ExprKind::NamedExpr: {
    const auto &n = py::cast<py::NamedExpr>(e);
    V v = eval(*n.value, f);
    assign(*n.target, v, f, e.range);
    return v;
  }
  case ExprKind::Starred:
    raise("SyntaxError", "can't use starred expression here", e.range);
  case ExprKind::Await:
  case ExprKind::Yield:
  case ExprKind::YieldFrom:
    unsupported(e.range, fmt::format("the `{}` expression (generators and coroutines)",
                                     py::toString(e.kind)));
  }
  return none();
}

//===----------------------------------------------------------------------===//
// Comprehensions: a scope of their own; a generator expression is lazy
//===----------------------------------------------------------------------===//

namespace {

// A frame of CPython's (a comprehension's, a class body's) counts towards the recursion
// limit while it runs, as a function call's does.
struct FrameDepth {
  Interp &in;
  SourceRange r;
  FrameDepth(Interp &in, SourceRange r) : in(in), r(r) {
    if (in.callDepth_ + 1 > Interp::kMaxDepth)
      in.raiseId("RecursionError", "maximum recursion depth exceeded", r);
    ++in.callDepth_;
  }
  ~FrameDepth() { --in.callDepth_; }
};

template <typename C> const std::vector<py::Comprehension> &gensOf(const py::Expr &e) {
  return static_cast<const C &>(e).generators;
}

const std::vector<py::Comprehension> &generatorsOf(const py::Expr &e) {
  switch (e.kind) {
  case py::ExprKind::ListComp:
    return gensOf<py::ListComp>(e);
  case py::ExprKind::SetComp:
    return gensOf<py::SetComp>(e);
  case py::ExprKind::DictComp:
    return gensOf<py::DictComp>(e);
  default:
    return gensOf<py::GeneratorExp>(e);
  }
}

// The evaluation of a comprehension: a frame of its own and one iterator per `for`
// clause; next() yields the element of the next combination that passes the `if`s.
struct CompState final : IterState {
  const py::Expr *node = nullptr;
  std::map<std::string, CellP> closure;
  std::unique_ptr<Frame> frame;
  std::vector<V> iters; ///< the live iterator of each clause
  V first;              ///< the first clause's iterable, evaluated where the comprehension is

  // Advances to the next combination; false at the end.
  bool advance(Interp &in, SourceRange r) {
    const auto &gens = generatorsOf(*node);
    size_t level = iters.size();
    if (level == 0) {
      iters.push_back(in.iter(first, gens[0].iter->range));
      level = 1;
    }
    // Find the next item at the deepest level, backtracking when a level is exhausted.
    while (true) {
      size_t i = iters.size() - 1;
      V item = in.next(iters[i], gens[i].iter->range);
      if (!item) {
        iters.pop_back();
        if (iters.empty())
          return false;
        continue;
      }
      in.step(gens[i].range);
      in.assign(*gens[i].target, item, *frame, gens[i].range);
      bool keep = true;
      for (const py::ExprPtr &cond : gens[i].ifs)
        if (!in.truth(in.eval(*cond, *frame), cond->range, "a comprehension `if` on it")) {
          keep = false;
          break;
        }
      if (!keep)
        continue;
      if (i + 1 == gens.size())
        return true;
      iters.push_back(in.iter(in.eval(*gens[i + 1].iter, *frame), gens[i + 1].iter->range));
    }
    (void)r;
  }

  V next(Interp &in, SourceRange r) override {
    FrameDepth depth(in, r);
    if (!advance(in, r))
      return nullptr;
    return in.eval(*static_cast<const py::GeneratorExp &>(*node).elt, *frame);
  }
};

} // namespace

V Interp::comprehension(const py::Expr &e, Frame &f) {
  const auto &gens = generatorsOf(e);
  auto state = std::make_unique<CompState>();
  state->node = &e;
  const ScopeInfo &scope = scopeOf(&e, f.globals);
  state->closure = capture(scope, f);
  state->frame = std::make_unique<Frame>();
  Frame &cf = *state->frame;
  cf.scope = &scope;
  cf.globals = f.globals;
  cf.closure = &state->closure;
  cf.function = f.function;
  for (const std::string &n : scope.locals)
    cf.cells[n] = std::make_shared<Cell>();
  state->first = eval(*gens[0].iter, f);
  if (e.kind != py::ExprKind::GeneratorExp) {
    FrameDepth depth(*this, e.range);
    return comprehensionValue(e, *state);
  }
  {
    // Lazy, as CPython's generator: `any(f(x) for x in xs)` stops at the first true.
    iter(state->first, gens[0].iter->range); // a TypeError for a non-iterable comes now
    return std::make_shared<IteratorV>("generator", std::move(state));
  }
  return nullptr;
}

V Interp::comprehensionValue(const py::Expr &e, IterState &st) {
  auto &state = static_cast<CompState &>(st);
  Frame &cf = *state.frame;
  if (e.kind == py::ExprKind::DictComp) {
    const auto &dc = py::cast<py::DictComp>(e);
    auto out = std::make_shared<DictV>();
    while (state.advance(*this, e.range)) {
      V k = eval(*dc.key, cf);
      V v = eval(*dc.value, cf);
      alloc(1, e.range);
      dictSet(out->table, k, v, e.range);
    }
    return out;
  }
  const py::Expr &elt = e.kind == py::ExprKind::ListComp ? *py::cast<py::ListComp>(e).elt
                                                         : *py::cast<py::SetComp>(e).elt;
  std::vector<V> items;
  while (state.advance(*this, e.range)) {
    alloc(1, e.range);
    items.push_back(eval(elt, cf));
  }
  if (e.kind == py::ExprKind::ListComp)
    return list(std::move(items));
  auto s = std::make_shared<SetV>(false);
  for (const V &x : items)
    dictSet(s->table, x, nullptr, e.range);
  return s;
}

//===----------------------------------------------------------------------===//
// Calls
//===----------------------------------------------------------------------===//

V Interp::evalCall(const py::Call &c, Frame &f) {
  std::string hint = nameHint_;
  nameHint_.clear();
  V fn = eval(*c.func, f);
  Args args;
  for (const py::ExprPtr &a : c.args) {
    if (a->kind == py::ExprKind::Starred) {
      V seq = eval(*py::cast<py::Starred>(*a).value, f);
      if (seq->kind == Kind::Opaque)
        opaqueNeeded(seq, a->range, "`*` unpacking it into arguments");
      for (V &item : toVector(seq, a->range))
        args.pos.push_back(std::move(item));
    } else {
      args.pos.push_back(eval(*a, f));
    }
  }
  for (const py::Keyword &k : c.keywords) {
    if (k.name.empty()) {
      V d = eval(*k.value, f);
      auto *dict = dynCast<DictV>(d);
      if (!dict) {
        if (d->kind == Kind::Opaque)
          opaqueNeeded(d, k.range, "`**` unpacking it into keyword arguments");
        raise("TypeError", fmt::format("argument after ** must be a mapping, not {}", typeName(*d)),
              k.range);
      }
      for (const Table::Entry &e : dict->table.entries) {
        if (!e.live)
          continue;
        auto *key = dynCast<StrV>(e.key);
        if (!key)
          raise("TypeError", "keywords must be strings", k.range);
        for (const auto &kv : args.kw)
          if (kv.first == key->s)
            raise("TypeError", fmt::format("got multiple values for keyword argument '{}'", key->s),
                  k.range);
        args.kw.emplace_back(key->s, e.value);
      }
    } else {
      args.kw.emplace_back(k.name, eval(*k.value, f));
    }
  }
  nameHint_ = hint;
  // A Python function called inside the kernel is inlined: record the call, so that the
  // statements it emits name it (emit()).
  FunctionV *callee = dynCast<FunctionV>(fn);
  if (!callee)
    if (auto *p = dynCast<PartialV>(fn))
      callee = dynCast<FunctionV>(p->fn);
  uint32_t outer = inlined_;
  if (callee && inKernel_ && sources_) {
    support::SourceLoc site = c.range.begin;
    site.inlined = outer;
    inlined_ = sources_->addInlineContext(site, callee->name);
  }
  // The positional arguments' ranges, for an API call that locates what it emits at
  // its arguments (emit_pipeline's operands); read before anything else is called.
  argRanges_.clear();
  for (const py::ExprPtr &a : c.args)
    argRanges_.push_back(a->kind == py::ExprKind::Starred ? c.range : a->range);
  if (argRanges_.size() != args.pos.size())
    argRanges_.clear();
  V out;
  try {
    out = call(fn, std::move(args), c.range);
  } catch (...) {
    inlined_ = outer;
    nameHint_.clear();
    throw;
  }
  inlined_ = outer;
  nameHint_.clear();
  return out;
}

V Interp::call(const V &fn, Args args, SourceRange r) {
  switch (fn->kind) {
  case Kind::Function:
    return callFunction(cast<FunctionV>(fn), std::move(args), r);
  case Kind::BoundMethod: {
    const auto &m = cast<BoundMethodV>(fn);
    args.pos.insert(args.pos.begin(), m.self);
    return call(m.fn, std::move(args), r);
  }
  case Kind::Builtin: {
    const auto &b = cast<BuiltinV>(fn);
    return callBuiltin(*b.fn, b.self, std::move(args), r);
  }
  case Kind::Partial: {
    const auto &p = cast<PartialV>(fn);
    Args all;
    all.pos = p.pos;
    all.pos.insert(all.pos.end(), args.pos.begin(), args.pos.end());
    all.kw = p.kw;
    for (auto &kv : args.kw) {
      bool replaced = false;
      for (auto &old : all.kw)
        if (old.first == kv.first)
          old.second = kv.second, replaced = true;
      if (!replaced)
        all.kw.push_back(kv);
    }
    return call(p.fn, std::move(all), r);
  }
  case Kind::Class:
    return callClass(std::static_pointer_cast<ClassV>(fn), std::move(args), r);
  case Kind::Instance: {
    V callMethod = getAttrOpt(fn, "__call__", r);
    if (callMethod)
      return call(callMethod, std::move(args), r);
    break;
  }
  case Kind::Api:
    return callApiObject(fn, cast<ApiObject>(fn), std::move(args), r);
  case Kind::Wrapper: {
    // A staticmethod object is callable (CPython 3.10+): a class body that decorates its
    // methods with its own `@staticmethod` helper calls it. classmethod and property
    // objects are not.
    auto &w = cast<WrapperV>(fn);
    if (w.w == WrapperV::W::StaticMethod)
      return call(w.fn, std::move(args), r);
    if (w.w == WrapperV::W::LruCache)
      return cachedCall(w, std::move(args), r);
    break;
  }
  case Kind::Opaque: {
    // An unknown callable: its result is opaque too. Given a Python function it might run a
    // kernel (jax.vmap(f), a host library), and inside a kernel it is an operation dkv
    // does not know: both are errors, never dropped.
    const auto &o = cast<OpaqueV>(fn);
    // (a `@hypothesis.given` test too: an unmodelled decorator over it, `@hp.example(...)`,
    // must not drop the test.)
    auto isFunction = [](const V &v) {
      return v->kind == Kind::Function || v->kind == Kind::Partial ||
             v->kind == Kind::BoundMethod || apiAs<GivenObj>(v);
    };
    bool givenFunction = false;
    for (const V &a : args.pos)
      givenFunction = givenFunction || isFunction(a);
    for (const auto &kv : args.kw)
      givenFunction = givenFunction || isFunction(kv.second);
    // A primitive's abstract evaluation rule (`p.def_abstract_eval(f)`): JAX calls it on
    // abstract values (shapes and dtypes) to type the primitive's results; with no arrays
    // it runs no kernel (docs/python.md "Opaque values").
    if (o.origin->attr == "def_abstract_eval")
      givenFunction = false;
    if (inKernel_ || givenFunction) {
      const Origin *root = o.origin.get();
      while (root->from)
        root = root->from.get();
      std::string callee = quoted(o.origin->range, "a function dkv does not model");
      std::string from = root == o.origin.get() ? "" : fmt::format(" ({})", root->what);
      TraceError err{
          r,
          "python-unknown-api",
          inKernel_
              ? fmt::format("{} is called inside a kernel, and dkv does not model it{}: dkv "
                            "does not know what it does to refs, DMAs or semaphores "
                            "(docs/python.md lists the API it models; nothing is dropped "
                            "silently)",
                            callee, from)
              : fmt::format("{} is given a Python function, and dkv does not model it{}: it "
                            "might run a kernel, which dkv would miss (docs/python.md lists the "
                            "API it models; nothing is dropped silently)",
                            callee, from),
          {},
          0,
          {}};
      throw err;
    }
    V res = opaque("the result of calling it", r, fn);
    if (!o.origin->settable.empty() && o.origin->settable.back() != ')') {
      auto origin = std::make_shared<Origin>(*cast<OpaqueV>(res).origin);
      origin->settable = o.origin->settable + "()";
      return std::make_shared<OpaqueV>(origin);
    }
    return res;
  }
  default:
    break;
  }
  raise("TypeError", fmt::format("'{}' object is not callable", typeName(*fn)), r);
}

V Interp::callFunction(FunctionV &fn, Args args, SourceRange r) {
  if (fn.scope->generator)
    unsupported(r, fmt::format("calling {}(), a generator function (it contains `yield`); dkv "
                               "does not run generators",
                               fn.name));
  if (fn.scope->badNonlocal)
    raise("SyntaxError",
          fmt::format("no binding for nonlocal '{}' found", fn.scope->badNonlocalName),
          fn.scope->badNonlocal->range);
  if (callDepth_ + 1 > kMaxDepth)
    raiseId("RecursionError", "maximum recursion depth exceeded", r);
  ++callDepth_;
  struct Leave {
    int &d;
    ~Leave() { --d; }
  } leave{callDepth_};
  try {
    Frame frame;
    frame.scope = fn.scope;
    frame.globals = fn.globals;
    frame.closure = &fn.closure;
    frame.function = &fn;
    for (const std::string &n : fn.scope->locals)
      frame.cells[n] = std::make_shared<Cell>();
    frames_.push_back(&frame);
    struct PopFrame {
      std::vector<Frame *> &f;
      ~PopFrame() { f.pop_back(); }
    } popFrame{frames_};
    bindParams(fn, std::move(args), frame, r);
    if (fn.lambda)
      return eval(*fn.lambda, frame);
    frame.ret = none();
    execBody(*fn.body, frame);
    return frame.ret ? frame.ret : none();
  } catch (TraceError &e) {
    if (e.notes.size() < kMaxNotes)
      e.notes.emplace_back(r, fmt::format("in {}(), called here", fn.name));
    else
      ++e.elided;
    throw;
  } catch (PyRaise &e) {
    if (e.notes.size() < kMaxNotes)
      e.notes.emplace_back(r, fmt::format("in {}(), called here", fn.name));
    else
      ++e.elided;
    throw;
  }
}

void Interp::bindParams(FunctionV &fn, Args args, Frame &frame, SourceRange r) {
  const std::vector<py::Param> &params = *fn.params;
  const std::string &name = fn.qualname;
  auto set = [&](const std::string &p, V v) { frame.cells.at(p)->value = std::move(v); };
  auto isSet = [&](const std::string &p) { return frame.cells.at(p)->value != nullptr; };
  std::vector<size_t> positional; // indexes of positional(-only) params
  size_t varargs = SIZE_MAX, varkw = SIZE_MAX;
  for (size_t i = 0; i < params.size(); ++i) {
    switch (params[i].kind) {
    case py::ParamKind::PositionalOnly:
    case py::ParamKind::Positional:
      positional.push_back(i);
      break;
    case py::ParamKind::VarArgs:
      varargs = i;
      break;
    case py::ParamKind::VarKeywords:
      varkw = i;
      break;
    default:
      break;
    }
  }
  size_t n = std::min(args.pos.size(), positional.size());
  for (size_t k = 0; k < n; ++k) {
    set(params[positional[k]].name, args.pos[k]);
    if (k == 0)
      frame.firstArg = args.pos[k];
  }
  if (args.pos.size() > positional.size()) {
    if (varargs == SIZE_MAX) {
      size_t required = 0;
      for (size_t i : positional)
        required += fn.defaults[i] ? 0 : 1;
      std::string takes =
          required == positional.size()
              ? fmt::format("{} positional argument{}", positional.size(),
                            positional.size() == 1 ? "" : "s")
              : fmt::format("from {} to {} positional arguments", required, positional.size());
      size_t kwGiven = 0;
      for (const auto &kv : args.kw)
        for (const py::Param &p : params)
          kwGiven += p.kind == py::ParamKind::KeywordOnly && p.name == kv.first;
      raiseId("TypeError",
              fmt::format("{}() takes {} but {} {} given{}", name, takes, args.pos.size(),
                          args.pos.size() == 1 ? "was" : "were",
                          kwGiven ? fmt::format(" (and {} keyword-only argument{})", kwGiven,
                                                kwGiven == 1 ? "" : "s")
                                  : ""),
              r);
    }
  }
  if (varargs != SIZE_MAX) {
    std::vector<V> rest;
    for (size_t k = positional.size(); k < args.pos.size(); ++k)
      rest.push_back(args.pos[k]);
    set(params[varargs].name, tuple(std::move(rest)));
    if (positional.empty() && !args.pos.empty())
      frame.firstArg = args.pos[0];
  }
  std::shared_ptr<DictV> kwDict;
  if (varkw != SIZE_MAX) {
    kwDict = std::make_shared<DictV>();
    set(params[varkw].name, kwDict);
  }
  std::vector<std::string> posOnlyAsKw;
  for (auto &[k, v] : args.kw) {
    const py::Param *match = nullptr;
    for (const py::Param &p : params)
      if (p.name == k &&
          (p.kind == py::ParamKind::Positional || p.kind == py::ParamKind::KeywordOnly ||
           p.kind == py::ParamKind::PositionalOnly))
        match = &p;
    if (match && match->kind == py::ParamKind::PositionalOnly) {
      if (kwDict) {
        dictSet(kwDict->table, string(k), v, r);
        continue;
      }
      posOnlyAsKw.push_back(k);
      continue;
    }
    if (!match) {
      if (!kwDict)
        raiseId("TypeError", fmt::format("{}() got an unexpected keyword argument '{}'", name, k),
                r);
      dictSet(kwDict->table, string(k), v, r);
      continue;
    }
    if (isSet(k))
      raiseId("TypeError", fmt::format("{}() got multiple values for argument '{}'", name, k), r);
    set(k, v);
  }
  if (!posOnlyAsKw.empty())
    raiseId("TypeError",
            fmt::format("{}() got some positional-only arguments passed as keyword arguments: "
                        "'{}'",
                        name, fmt::join(posOnlyAsKw, ", ")),
            r);
  std::vector<std::string> missingPos, missingKw;
  for (size_t i = 0; i < params.size(); ++i) {
    const py::Param &p = params[i];
    if (p.kind == py::ParamKind::VarArgs || p.kind == py::ParamKind::VarKeywords || isSet(p.name))
      continue;
    if (fn.defaults[i]) {
      set(p.name, fn.defaults[i]);
      continue;
    }
    (p.kind == py::ParamKind::KeywordOnly ? missingKw : missingPos).push_back(p.name);
  }
  auto missing = [&](const std::vector<std::string> &names, const char *kind) {
    std::string list;
    for (size_t i = 0; i < names.size(); ++i) {
      if (i > 0)
        list += i + 1 == names.size() ? (names.size() > 2 ? ", and " : " and ") : ", ";
      list += "'" + names[i] + "'";
    }
    raiseId("TypeError",
            fmt::format("{}() missing {} required {} argument{}: {}", name, names.size(), kind,
                        names.size() == 1 ? "" : "s", list),
            r);
  };
  if (!missingPos.empty())
    missing(missingPos, "positional");
  if (!missingKw.empty())
    missing(missingKw, "keyword-only");
}

V Interp::callBuiltin(const BuiltinFn &fn, const V &self, Args args, SourceRange r) {
  if (fn.kernelOnly && !inKernel_)
    fail(
        r, "python-unknown-api",
        fmt::format("`{}` is only meaningful inside a kernel that pl.pallas_call traces", fn.name));
  CallCtx ctx;
  ctx.args = std::move(args);
  ctx.range = r;
  ctx.self = self;
  ctx.fn = &fn;
  ctx.hint = nameHint_;
  return fn.handler(*this, ctx);
}

std::vector<V> CallCtx::bind(Interp &in, std::initializer_list<std::string_view> names) const {
  // `*` marks the keyword-only names after it; it takes no slot in the result.
  std::vector<std::string_view> ps;
  size_t kwOnly = SIZE_MAX;
  for (std::string_view n : names) {
    if (n == "*")
      kwOnly = ps.size();
    else
      ps.push_back(n);
  }
  if (kwOnly == SIZE_MAX)
    kwOnly = ps.size();
  std::vector<V> out(ps.size());
  if (args.pos.size() > kwOnly)
    in.raiseId("TypeError",
               fmt::format("{}() takes at most {} positional argument{} ({} given)", fn->name,
                           kwOnly, kwOnly == 1 ? "" : "s", args.pos.size()),
               range);
  for (size_t i = 0; i < args.pos.size(); ++i)
    out[i] = args.pos[i];
  for (const auto &[k, v] : args.kw) {
    size_t at = ps.size();
    for (size_t i = 0; i < ps.size(); ++i)
      if (ps[i] == k)
        at = i;
    if (at == ps.size())
      in.raiseId("TypeError",
                 fmt::format("{}() got an unexpected keyword argument '{}'", fn->name, k), range);
    if (out[at])
      in.raiseId("TypeError",
                 fmt::format("{}() got multiple values for argument '{}'", fn->name, k), range);
    out[at] = v;
  }
  return out;
}

} // namespace dkv::pytrace
