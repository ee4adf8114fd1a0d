// The kernel side: per-device values (lax.axis_index, pl.program_id, table elements,
// loaded refs) as kernel-language expressions, ref views, stores, DMAs, semaphores,
// pl.when, loops, lax.cond and compute on values, as rows of the registry
// (docs/python.md "The Pallas API table").
#include "frontend/Parser.h"
#include "pytrace/Interp.h"

#include "prim/Bind.h"
#include "prim/Op.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace dkv::pytrace {

namespace {

std::string tracedShape(const TracedV &v) {
  return v.tk == TKind::Bool ? "bool[]" : v.tk == TKind::Int ? "int32[]" : "float32[...]";
}

bool isTracedValue(const V &v) {
  auto *t = dynCast<TracedV>(v);
  return t && t->tk == TKind::Value;
}

} // namespace

//===----------------------------------------------------------------------===//
// Names and emission
//===----------------------------------------------------------------------===//

std::string freshName(std::string base, std::set<std::string> &used) {
  if (base.empty() || base == "_")
    base = "v";
  if (frontend::isKeyword(base))
    base += "_";
  std::string name = base;
  for (int n = 1; used.count(name); ++n)
    name = fmt::format("{}_{}", base, n);
  used.insert(name);
  return name;
}

std::string Interp::fresh(std::string base) { return freshName(std::move(base), used_); }

void Interp::emit(ast::StmtPtr s, bool writes) {
  if (!inKernel_ || blocks_.empty())
    fail(s->range(), "python-unsupported",
         "kernel operations are only allowed inside the kernel that pl.pallas_call traces");
  // A statement made inside an inlined helper call carries that call (statements of
  // nested blocks were emitted, and stamped, while their call was current).
  if (inlined_ != 0 && s->range().begin.inlined == 0) {
    SourceRange range = s->range();
    range.begin.inlined = range.end.inlined = inlined_;
    s->setRange(range);
  }
  if (writes) {
    ++emitted_;
    std::vector<std::pair<uint64_t, size_t>> at;
    for (size_t k = 0; k < blocks_.size(); ++k)
      at.emplace_back(blockIds_[k], blocks_[k]->size());
    writeAt_.push_back(std::move(at));
  }
  if (++kernelStmts_ > kMaxKernelStmts)
    fail(s->range(), "python-overflow",
         fmt::format("the kernel traces to more than {} statements (unrolled Python loops "
                     "and inlined calls); dkv checks kernels of realistic size, and a trace "
                     "this long would not finish",
                     kMaxKernelStmts));
  blocks_.back()->push_back(std::move(s));
}

V Interp::current(const V &v, SourceRange r) {
  auto *t = dynCast<TracedV>(v);
  if (!t || t->tk != TKind::Value || !t->span.any() || t->span.hi == emitted_)
    return v;
  std::optional<prim::ValueType> type = valueType(v);
  if (!type || type->kind != prim::ValueType::Kind::Array)
    return v;
  TE read = snapshot(*t, type->shape, type->elem.dtype, r);
  if (!read)
    return v;
  // A snapshot is written once, before anything reads it: reading it is the same at any
  // later time (no load to date).
  return typed(std::make_shared<TracedV>(read, TKind::Value, UINT64_MAX, LoadSpan{}), type);
}

V Interp::letTraced(const V &v, const std::string &hint, SourceRange r) {
  const auto &t = cast<TracedV>(v);
  if (t.te->k == TExpr::K::Name || t.te->k == TExpr::K::Int || inlineLets_)
    return v;
  std::string name = fresh(hint);
  emit(std::make_unique<ast::LetStmt>(r, std::make_unique<ast::LetDecl>(r, name, r, build(*t.te))),
       false);
  return std::make_shared<TracedV>(teName(r, name), t.tk);
}

void Interp::tracedBool(const TracedV &v, SourceRange r, std::string_view what) {
  fail(r, "python-traced-branch",
       fmt::format("Attempted boolean conversion of traced array with shape {} ({}): the value "
                   "depends on the device (lax.axis_index, pl.program_id or a ref load), so "
                   "Python cannot decide it when JAX traces the kernel and JAX raises "
                   "TracerBoolConversionError here; use @pl.when(...) or jnp.where",
                   tracedShape(v), what));
}

void Interp::tracedIndex(const TracedV &v, SourceRange r, std::string_view what) {
  fail(r, "python-traced-branch",
       fmt::format("The __index__() method was called on traced array with shape {} ({}): "
                   "the value depends on the device, so it is not a Python int when JAX "
                   "traces the kernel (JAX raises TracerIntegerConversionError here)",
                   tracedShape(v), what));
}

TE Interp::intTE(const V &v, SourceRange r, std::string_view what) {
  if (auto *i = dynCast<IntV>(v))
    return teInt(r, i->i);
  if (auto *b = dynCast<BoolV>(v))
    return teInt(r, b->b);
  if (auto *t = dynCast<TracedV>(v); t && t->tk == TKind::Int)
    return t->te;
  if (v->kind == Kind::Opaque)
    opaqueNeeded(v, r, what);
  fail(r, "python-type", fmt::format("{}: expected an integer, got {}", what, typeName(*v)));
}

TE Interp::condTE(const V &v, SourceRange r) {
  if (auto *b = dynCast<BoolV>(v))
    return teBool(r, b->b);
  if (auto *t = dynCast<TracedV>(v); t && t->tk == TKind::Bool)
    return t->te;
  if (v->kind == Kind::Opaque)
    opaqueNeeded(v, r, "a condition");
  fail(r, "python-type", fmt::format("expected a condition, got {}", typeName(*v)));
}

// The predicate of `lax.cond` (and so of `pl.when`, which calls it): a condition, or a
// per-device integer, which JAX's `cond` turns into `pred != 0`.
TE Interp::predTE(const V &v, SourceRange r) {
  if (auto *t = dynCast<TracedV>(v); t && t->tk == TKind::Int)
    return teBinary(r, ast::BinaryOp::Ne, t->te, teInt(r, 0));
  return condTE(v, r);
}

//===----------------------------------------------------------------------===//
// Arithmetic on per-device values
//===----------------------------------------------------------------------===//

V Interp::tracedBinop(py::BinOpKind op, const V &a, const V &b, SourceRange r) {
  using py::BinOpKind;
  if (isTracedValue(a) || isTracedValue(b))
    return valueBinop(py::toString(op), a, b, r);
  auto tk = [](const V &v) {
    auto *t = dynCast<TracedV>(v);
    return t ? t->tk : TKind::Int;
  };
  if (tk(a) == TKind::Bool || tk(b) == TKind::Bool) {
    if ((a->kind == Kind::Traced && tk(a) == TKind::Bool) ||
        (b->kind == Kind::Traced && tk(b) == TKind::Bool)) {
      if (op != BinOpKind::BitAnd && op != BinOpKind::BitOr)
        unsupported(r, fmt::format("`{}` on a traced condition", py::toString(op)));
      return std::make_shared<TracedV>(
          teBinary(r, op == BinOpKind::BitAnd ? ast::BinaryOp::And : ast::BinaryOp::Or,
                   condTE(a, r), condTE(b, r)),
          TKind::Bool);
    }
  }
  if (a->kind == Kind::Float || b->kind == Kind::Float)
    unsupported(r, fmt::format("`{}` of a per-device integer and a float", py::toString(op)));
  TE x = intTE(a, r, "an operand"), y = intTE(b, r, "an operand");
  ast::BinaryOp bop;
  switch (op) {
  case BinOpKind::Add:
    bop = ast::BinaryOp::Add;
    break;
  case BinOpKind::Sub:
    bop = ast::BinaryOp::Sub;
    break;
  case BinOpKind::Mult:
    bop = ast::BinaryOp::Mul;
    break;
  case BinOpKind::FloorDiv:
    bop = ast::BinaryOp::Div;
    break;
  case BinOpKind::Mod:
    bop = ast::BinaryOp::Mod;
    break;
  case BinOpKind::BitAnd:
    bop = ast::BinaryOp::BitAnd;
    break;
  case BinOpKind::BitOr:
    bop = ast::BinaryOp::BitOr;
    break;
  case BinOpKind::BitXor:
    bop = ast::BinaryOp::BitXor;
    break;
  case BinOpKind::LShift:
    bop = ast::BinaryOp::Shl;
    break;
  case BinOpKind::RShift:
    bop = ast::BinaryOp::Shr;
    break;
  case BinOpKind::Div:
    unsupported(r, "true division `/` of traced integers (a float array); use `//` or lax.div");
  default:
    unsupported(r, fmt::format("`{}` on a traced integer", py::toString(op)));
  }
  return std::make_shared<TracedV>(teBinary(r, bop, x, y), TKind::Int);
}

// An operator on loaded values (`+`, `<`, `&`, `@`, ...): the catalogue's op of the
// Python operator, written with its kernel-language operator (a mask for comparisons,
// mask logic for `&` / `|`), or a compute (`@` is dot).
namespace {
// A Python float in a kernel value: a literal of the kernel language (`inf` for an
// infinity, `-inf` its negation), which has none for a NaN (`math.nan`): refused by name.
TE kernelFloat(double f, SourceRange r) {
  if (std::isnan(f))
    unsupported(r, fmt::format("the float {} in a kernel value (the kernel language has no "
                               "literal for a NaN)",
                               floatRepr(f)));
  return teFloat(r, f, floatRepr(f));
}
} // namespace

V Interp::valueBinop(std::string_view op, const V &a0, const V &b0, SourceRange r) {
  // Values loaded before operations that ran since combine through their snapshots.
  const V a = current(a0, r), b = current(b0, r);
  auto operand = [&](const V &v) -> TE {
    if (isTracedValue(v))
      return cast<TracedV>(v).te;
    if (auto *i = dynCast<IntV>(v))
      return teInt(r, i->i);
    if (auto *f = dynCast<FloatV>(v))
      return kernelFloat(f->f, r);
    // A per-device integer (`lax.axis_index(...)`, arithmetic on it): a scalar operand,
    // broadcast as a number is.
    if (auto *t = dynCast<TracedV>(v); t && t->tk == TKind::Int)
      return t->te;
    if (v->kind == Kind::Opaque)
      opaqueNeeded(v, r, "arithmetic on loaded values");
    fail(r, "python-type",
         fmt::format("an operand of arithmetic on loaded values must be a loaded ref or a "
                     "number, got {}",
                     typeName(*v)));
  };
  std::optional<prim::Op> cop = prim::findOpByPythonOperator(op, 2);
  if (!cop) {
    // An integer element read from a ref (`e_id = table_smem[i, j]`, a routing table the
    // kernel wrote) used in integer arithmetic: say so, since that is what is missing.
    std::string element;
    for (const V &v : {a, b})
      if (auto *t = dynCast<TracedV>(v); t && element.empty() && t->te->k == TExpr::K::Index)
        if (std::optional<prim::ValueType> vt = valueType(v);
            vt && vt->kind == prim::ValueType::Kind::Array && vt->shape.empty() &&
            prim::isInteger(vt->elem.dtype))
          element = t->te->text;
    if (!element.empty())
      unsupported(r, fmt::format("`{}` on an integer loaded from the ref `{}`: an element of a "
                                 "ref the kernel reads at run time (data, such as a routing "
                                 "table it wrote) is a loaded value, not an integer dkv knows "
                                 "per device, so integer arithmetic on it and its use as an "
                                 "index, a DMA's offset or size or a device id are not "
                                 "modelled (on loaded values: + - * / @, comparisons, & |; an "
                                 "SMEM input of known contents is a table)",
                                 op, element));
    unsupported(r,
                fmt::format("`{}` on loaded values (supported: + - * / @, comparisons, & |)", op));
  }
  std::string_view dk = prim::record(*cop).dkOperator;
  if (dk.empty())
    return computeValue(*cop, {a, b}, std::nullopt, std::nullopt, r, fmt::format("`{}`", op));
  auto bop = ast::BinaryOp::Add;
  while (ast::toString(bop) != dk && bop != ast::BinaryOp::Shr)
    bop = static_cast<ast::BinaryOp>(static_cast<int>(bop) + 1);
  uint64_t stamp = UINT64_MAX;
  LoadSpan span;
  for (const V &v : {a, b})
    if (auto *t = dynCast<TracedV>(v); t && t->tk == TKind::Value) {
      stamp = std::min(stamp, t->stamp);
      span = LoadSpan::merge(span, t->span);
    }
  return typed(std::make_shared<TracedV>(teBinary(r, bop, operand(a), operand(b)), TKind::Value,
                                         stamp, span),
               inferValue(*cop, {a, b}, prim::Attrs{}, op));
}

V Interp::tracedCompare(py::CmpOpKind op, const V &a, const V &b, SourceRange r) {
  using py::CmpOpKind;
  if (isTracedValue(a) || isTracedValue(b))
    return valueBinop(py::toString(op), a, b, r); // an element-wise mask
  TE x = intTE(a, r, "a comparison operand"), y = intTE(b, r, "a comparison operand");
  ast::BinaryOp bop = op == CmpOpKind::Eq      ? ast::BinaryOp::Eq
                      : op == CmpOpKind::NotEq ? ast::BinaryOp::Ne
                      : op == CmpOpKind::Lt    ? ast::BinaryOp::Lt
                      : op == CmpOpKind::LtE   ? ast::BinaryOp::Le
                      : op == CmpOpKind::Gt    ? ast::BinaryOp::Gt
                                               : ast::BinaryOp::Ge;
  return std::make_shared<TracedV>(teBinary(r, bop, x, y), TKind::Bool);
}

//===----------------------------------------------------------------------===//
// Refs
//===----------------------------------------------------------------------===//

std::vector<V> Interp::indexItems(const V &key) {
  if (auto *t = dynCast<TupleV>(key))
    return t->items;
  return {key};
}

V Interp::view(const V &baseV, const std::vector<V> &items, SourceRange r) {
  const RefV &base = *dynRef(baseV);
  if (base.selectIndex)
    unsupported(r, "a view, load or store of what pl.select_ref picks by a per-device index "
                   "(Pallas selects a ref only as a whole operand of a DMA: index the refs "
                   "before selecting, pl.select_ref(i, a_ref.at[k], b_ref.at[k]))");
  auto out = std::make_shared<RefV>(baseV->kind);
  out->name = base.name, out->dims = base.dims, out->subs = base.subs, out->dtype = base.dtype;
  out->semKind = base.semKind, out->table = base.table;
  // The dims of the view: every base dim that no Index has dropped.
  std::vector<size_t> kept;
  for (size_t d = 0; d < base.dims.size(); ++d)
    if (d >= base.subs.size() || base.subs[d].kind != ast::Subscript::Kind::Index)
      kept.push_back(d);
  size_t viewRank = kept.size();
  size_t n = 0;
  bool sawEllipsis = false;
  for (const V &it : items) {
    if (it->kind == Kind::Ellipsis) {
      if (sawEllipsis)
        raise("IndexError", "an index can only have a single ellipsis ('...')", r);
      sawEllipsis = true;
      size_t explicitCount = items.size() - 1;
      if (explicitCount > viewRank)
        raise("IndexError", "too many indices for the ref", r);
      n += viewRank - explicitCount;
      continue;
    }
    if (n >= viewRank)
      raise("IndexError", fmt::format("too many indices: the ref has {} dimensions", viewRank), r);
    size_t d = kept[n++];
    while (out->subs.size() <= d)
      out->subs.push_back(TSub{});
    TSub &cur = out->subs[d];
    int64_t extent = base.dims[d];
    if (cur.kind == ast::Subscript::Kind::Range && cur.lo && cur.hi && cur.lo->k == TExpr::K::Int &&
        cur.hi->k == TExpr::K::Int)
      extent = cur.hi->i - cur.lo->i;
    TE lo0 = cur.kind == ast::Subscript::Kind::Range && cur.lo ? cur.lo : nullptr;
    auto offset = [&](TE e) -> TE {
      if (!lo0)
        return e;
      if (lo0->k == TExpr::K::Int && e->k == TExpr::K::Int)
        return teInt(r, lo0->i + e->i);
      return teBinary(r, ast::BinaryOp::Add, lo0, e);
    };
    // A negative concrete index or bound counts from the end of the dimension, as
    // numpy's and Pallas's indexing do.
    auto fromEnd = [&](TE e) -> TE {
      if (e && e->k == TExpr::K::Int && e->i < 0)
        return teInt(r, std::clamp<int64_t>(e->i + extent, 0, extent));
      return e;
    };
    if (auto *s = dynCast<SliceV>(it)) {
      if (s->step->kind != Kind::None &&
          !(s->step->kind == Kind::Int && cast<IntV>(s->step).i == 1))
        unsupported(r, "a ref slice with a step other than 1");
      TE lo = s->lower->kind == Kind::None ? nullptr : fromEnd(intTE(s->lower, r, "a slice start"));
      TE hi = s->upper->kind == Kind::None ? nullptr : fromEnd(intTE(s->upper, r, "a slice end"));
      if (hi && hi->k == TExpr::K::Int && hi->i > extent)
        hi = teInt(r, extent);
      if (!lo && !hi)
        continue; // `:` keeps the current subscript
      TSub sub;
      sub.kind = ast::Subscript::Kind::Range;
      sub.lo = lo ? offset(lo) : (lo0 ? lo0 : nullptr);
      sub.hi = hi ? offset(hi) : cur.hi;
      if (!hi && !cur.hi && lo0 == nullptr)
        sub.hi = nullptr;
      cur = sub;
    } else if (auto *ds = apiAs<DSliceObj>(it)) {
      TE start = intTE(ds->start, r, "pl.ds start");
      TE size = intTE(ds->size, r, "pl.ds size");
      TSub sub;
      sub.kind = ast::Subscript::Kind::Range;
      sub.lo = offset(start);
      sub.hi = sub.lo->k == TExpr::K::Int && size->k == TExpr::K::Int
                   ? teInt(r, sub.lo->i + size->i)
               : sub.lo->k == TExpr::K::Int && sub.lo->i == 0
                   ? size // pl.ds(0, n): `0:n`
                   : teBinary(r, ast::BinaryOp::Add, sub.lo, size);
      cur = sub;
    } else {
      TSub sub;
      sub.kind = ast::Subscript::Kind::Index;
      sub.lo = offset(fromEnd(intTE(it, r, "an index")));
      cur = sub;
    }
  }
  return out;
}

std::optional<std::vector<int64_t>> viewShape(const RefV &ref) {
  std::vector<int64_t> out;
  for (size_t d = 0; d < ref.dims.size(); ++d) {
    const TSub *s = d < ref.subs.size() ? &ref.subs[d] : nullptr;
    if (s && s->kind == ast::Subscript::Kind::Index)
      continue;
    if (!s || s->kind != ast::Subscript::Kind::Range) {
      out.push_back(ref.dims[d]);
      continue;
    }
    int64_t lo = s->lo ? (s->lo->k == TExpr::K::Int ? s->lo->i : -1) : 0;
    int64_t hi = s->hi ? (s->hi->k == TExpr::K::Int ? s->hi->i : -1) : ref.dims[d];
    if (lo >= 0 && hi >= 0) {
      out.push_back(hi - lo);
    } else if (s->lo && s->hi && s->hi->k == TExpr::K::Binary && s->hi->bop == ast::BinaryOp::Add &&
               s->hi->kids[0] == s->lo && s->hi->kids[1]->k == TExpr::K::Int) {
      out.push_back(s->hi->kids[1]->i); // pl.ds(start, n) with a per-device start
    } else {
      return std::nullopt;
    }
  }
  return out;
}

TE Interp::refTE(const RefV &ref, SourceRange r) {
  if (ref.selectIndex) {
    auto sel = std::make_shared<TExpr>();
    sel->k = TExpr::K::SelectRef;
    sel->range = r;
    sel->kids.push_back(ref.selectIndex);
    for (const V &choice : ref.choices)
      sel->kids.push_back(refTE(*dynRef(choice), r));
    return sel;
  }
  auto e = std::make_shared<TExpr>();
  e->k = TExpr::K::Index;
  e->range = r;
  e->text = ref.name;
  e->subs = ref.subs;
  // Trailing subscripts that are whole are dropped; Full ones before others stay `:`.
  while (!e->subs.empty() && e->subs.back().kind == ast::Subscript::Kind::Full)
    e->subs.pop_back();
  if (e->subs.empty()) {
    if (ref.kind == Kind::Sem)
      return teName(r, ref.name);
    e->ellipsis = true;
  }
  return e;
}

void Interp::store(const V &refV, const V &key, const V &value, bool accumulate, SourceRange r,
                   SourceRange indexRange) {
  V target = view(refV, indexItems(key), indexRange);
  TE rhs;
  if (auto *i = dynCast<IntV>(value))
    rhs = teInt(r, i->i);
  else if (auto *f = dynCast<FloatV>(value))
    rhs = kernelFloat(f->f, r);
  else if (auto *t = dynCast<TracedV>(value); t && t->tk == TKind::Value) {
    rhs = t->te;
    if (t->stamp != emitted_ && t->stamp != UINT64_MAX) {
      // The snapshot has the shape and element type of the ref the value is stored into
      // (the store there converts and broadcasts it the same way).
      const auto &ref = static_cast<RefV &>(*target);
      if (std::optional<std::vector<int64_t>> shape = viewShape(ref))
        rhs = snapshot(*t, *shape, ref.dtype, r);
      else
        rhs = nullptr;
      if (!rhs)
        unsupported(r, "a value loaded from a ref is stored after other kernel operations "
                       "(DMAs, signals, waits or stores) ran since the load, and dkv cannot "
                       "snapshot it where it was loaded (its load's block has ended, or it "
                       "mixes loads on both sides of an operation that dkv could not snapshot "
                       "apart); store it before any other kernel operation");
    }
  } else if (t && t->tk == TKind::Int) {
    rhs = t->te; // a per-device integer, e.g. pltpu.semaphore_read's value
  } else if (value->kind == Kind::Ref) {
    unsupported(r, "storing a ref (load it with `x_ref[...]`)");
  } else if (value->kind == Kind::Opaque) {
    opaqueNeeded(value, r, "the value stored into a ref");
  } else {
    fail(r, "python-type",
         fmt::format("the value stored into a ref must be a loaded ref or a number, got {}",
                     typeName(*value)));
  }
  emit(std::make_unique<ast::StoreStmt>(r, build(*refTE(static_cast<RefV &>(*target), indexRange)),
                                        accumulate, build(*rhs)));
}

namespace {

const BuiltinFn &descMethod(ast::DmaMethod m) {
  static const BuiltinFn start{
      "AsyncCopyDescriptor.start",
      +[](Interp &in, CallCtx &c) -> V {
        // `.start(priority=p)` (AsyncCopyDescriptor.start(priority=0, *,
        // add=False)): the priority, a Python int; sema checks it.
        std::vector<V> a = c.bind(in, {"priority", "*", "add"});
        if (a[1] && in.truth(a[1], c.range, "add"))
          unsupported(c.range, "an accumulating DMA (start(add=True))");
        ast::ExprPtr priority;
        if (a[0])
          priority = std::make_unique<ast::IntLiteral>(
              c.range, in.toIndex(a[0], c.range, "the DMA priority"));
        in.emit(std::make_unique<ast::DmaStmt>(
            c.range, std::make_unique<ast::NameExpr>(c.range, cast<DescV>(c.self).let),
            ast::DmaMethod::Start, std::move(priority)));
        return none();
      },
      "", true};
  static auto waiter = [](ast::DmaMethod dm) {
    return +[](Interp &in, CallCtx &c) -> V {
      (void)in;
      return none();
    };
  };
  (void)waiter;
  static const BuiltinFn wait{
      "AsyncCopyDescriptor.wait",
      +[](Interp &in, CallCtx &c) -> V {
        if (!c.args.pos.empty() || !c.args.kw.empty())
          unsupported(c.range, "arguments of `.wait()`");
        in.emit(std::make_unique<ast::DmaStmt>(
            c.range, std::make_unique<ast::NameExpr>(c.range, cast<DescV>(c.self).let),
            ast::DmaMethod::Wait));
        return none();
      },
      "", true};
  static const BuiltinFn waitSend{
      "AsyncCopyDescriptor.wait_send",
      +[](Interp &in, CallCtx &c) -> V {
        if (!c.args.pos.empty() || !c.args.kw.empty())
          unsupported(c.range, "arguments of `.wait_send()`");
        if (!cast<DescV>(c.self).remote)
          fail(c.range, "python-call",
               "`.wait_send()` needs a remote copy "
               "(pltpu.make_async_remote_copy)");
        in.emit(std::make_unique<ast::DmaStmt>(
            c.range, std::make_unique<ast::NameExpr>(c.range, cast<DescV>(c.self).let),
            ast::DmaMethod::WaitSend));
        return none();
      },
      "", true};
  static const BuiltinFn waitRecv{
      "AsyncCopyDescriptor.wait_recv",
      +[](Interp &in, CallCtx &c) -> V {
        if (!c.args.pos.empty() || !c.args.kw.empty())
          unsupported(c.range, "arguments of `.wait_recv()`");
        if (!cast<DescV>(c.self).remote)
          fail(c.range, "python-call",
               "`.wait_recv()` needs a remote copy "
               "(pltpu.make_async_remote_copy)");
        in.emit(std::make_unique<ast::DmaStmt>(
            c.range, std::make_unique<ast::NameExpr>(c.range, cast<DescV>(c.self).let),
            ast::DmaMethod::WaitRecv));
        return none();
      },
      "", true};
  switch (m) {
  case ast::DmaMethod::Start:
    return start;
  case ast::DmaMethod::Wait:
    return wait;
  case ast::DmaMethod::WaitSend:
    return waitSend;
  case ast::DmaMethod::WaitRecv:
    return waitRecv;
  }
  return wait;
}

// `x.reshape(4, 256)` / `x.reshape((4, 256))` of a kernel value of known shape: the
// catalogue's `reshape` (one extent may be -1, inferred as NumPy infers it; `order` other
// than 'C' is refused).
V reshapeValue(Interp &in, CallCtx &c) {
  for (const auto &[k, v] : c.args.kw)
    if (k != "order" || !isa<StrV>(v) || cast<StrV>(v).s != "C")
      unsupported(c.range, fmt::format("`.reshape(..., {}=...)` of a kernel value", k));
  std::vector<V> items = c.args.pos;
  if (items.size() == 1 && (items[0]->kind == Kind::Tuple || items[0]->kind == Kind::List))
    items = in.toVector(items[0], c.range);
  std::optional<prim::ValueType> t = in.valueType(c.self);
  if (!t || t->kind != prim::ValueType::Kind::Array)
    unsupported(c.range, "`.reshape` of a kernel value of unknown shape");
  const int64_t count = prim::elementCount(t->shape);
  if (count == prim::kDynamic)
    unsupported(c.range, "`.reshape` of a kernel value of unknown shape");
  std::vector<int64_t> dims;
  int64_t known = 1;
  std::optional<size_t> infer;
  for (const V &v : items) {
    int64_t d = in.toIndex(v, c.range, "a dimension of .reshape");
    if (d == -1 && !infer)
      infer = dims.size();
    else if (d < 0)
      in.raise("ValueError",
               d == -1 ? "can only specify one unknown dimension"
                       : fmt::format("negative dimensions not allowed"),
               c.range);
    else
      known *= d;
    dims.push_back(d);
  }
  if (infer) {
    if (known == 0 || count % known != 0)
      in.raise("TypeError",
               fmt::format("cannot reshape array of shape {} (size {}) into shape {}",
                           prim::shapeText(t->shape), count, prim::shapeText(dims)),
               c.range);
    dims[*infer] = count / known;
  }
  return in.computeValue(ast::ComputeOp::Reshape, {c.self}, std::nullopt, std::nullopt, c.range,
                         "reshape", {}, dims);
}

const BuiltinFn &valueReshape() {
  static const BuiltinFn fn{"Array.reshape", reshapeValue, "", true};
  return fn;
}

const BuiltinFn &valueAstype() {
  static const BuiltinFn fn{"Array.astype",
                            +[](Interp &in, CallCtx &c) -> V {
                              if (c.args.pos.size() != 1 || !c.args.kw.empty())
                                fail(c.range, "python-call",
                                     "`.astype(dtype)` takes one element type");
                              return in.computeValue(ast::ComputeOp::AsType, {c.self},
                                                     in.dtypeArg(c.args.pos[0], c.range),
                                                     std::nullopt, c.range, "astype");
                            },
                            "", true};
  return fn;
}

V dims(const std::vector<int64_t> &shape) {
  std::vector<V> out;
  for (int64_t d : shape)
    out.push_back(integer(d));
  return tuple(std::move(out));
}

// The attributes of refs and semaphores: `.shape` and `.ndim` of a ref's or a semaphore
// array's view, without the dimensions an index removed (a semaphore ref has the shape of
// its array in JAX, `SemaphoreType.DMA((2,))` is `(2,)`); `.dtype` of a ref only (a
// semaphore's is a semaphore type, not modelled).
const AttrRow<RefV> kRefAttrs[] = {
    {"at", [](auto &, auto &, auto &self, auto) { return makeApi(AtObj{self}); }},
    {"shape",
     [](auto &, auto &ref, auto &self, auto r) -> V {
       std::optional<std::vector<int64_t>> shape = viewShape(ref);
       if (!shape)
         unsupported(r, "the shape of a ref view with a per-device slice");
       return dims(*shape);
     }},
    {"dtype",
     [](auto &, auto &ref, auto &self, auto) -> V {
       if (self->kind != Kind::Ref)
         return nullptr;
       std::string_view py = prim::pythonName(ref.dtype); // "jnp.float32"
       return makeApi(
           DTypeObj{ref.dtype, std::string(py.substr(py.find('.') + 1)), DTypeForm::Dtype});
     }},
    {"ndim",
     [](auto &, auto &ref, auto &self, auto) -> V {
       size_t n = 0;
       for (size_t d = 0; d < ref.dims.size(); ++d)
         n += !(d < ref.subs.size() && ref.subs[d].kind == ast::Subscript::Kind::Index);
       return integer(static_cast<int64_t>(n));
     }},
};

} // namespace

V Interp::refAttr(const V &refV, const std::string &name, SourceRange r) {
  if (V v = readAttr(kRefAttrs, *this, refV, name, r))
    return v;
  unsupported(r, fmt::format("`.{}` of a {}", name, typeName(*refV)));
}

//===----------------------------------------------------------------------===//
// pl.when, loops, lax.cond
//===----------------------------------------------------------------------===//

V Interp::callWhen(const WhenObj &w, Args args, SourceRange r) {
  if (args.pos.size() != 1 || !args.kw.empty() || args.pos[0]->kind != Kind::Function)
    fail(r, "python-call", "pl.when(...) decorates a function without parameters");
  const V &cond = w.cond;
  auto &fn = cast<FunctionV>(args.pos[0]);
  if (cond->kind != Kind::Traced) {
    if (truth(cond, r, "pl.when"))
      callFunction(fn, {}, r);
    return none();
  }
  TE c = predTE(cond, r);
  auto body = std::make_unique<std::vector<ast::StmtPtr>>();
  pushBlock(body.get());
  try {
    callFunction(fn, {}, r);
  } catch (...) {
    popBlock();
    throw;
  }
  popBlock();
  std::vector<ast::IfStmt::Branch> branches;
  branches.push_back({build(*c), std::make_unique<ast::Block>(fn.range, std::move(*body))});
  emit(std::make_unique<ast::IfStmt>(r, std::move(branches), nullptr));
  return none();
}

// `lax.fori_loop` / `pl.loop` as a kernel-language `for` (the body traced once with a traced
// loop variable, as JAX traces it), or unrolled when the bounds are concrete and a value is
// carried (`init` not None): then the body runs for each concrete index.
V Interp::forLoop(const std::string &api, const V &loV, const V &hiV, const V &body, const V &init,
                  bool withCarry, SourceRange r) {
  bool concrete = loV->kind != Kind::Traced && hiV->kind != Kind::Traced;
  bool carried = withCarry && init->kind != Kind::None;
  if (concrete && (carried || !inKernel_)) {
    int64_t lo = toIndex(loV, r, fmt::format("the lower bound of {}", api));
    int64_t hi = toIndex(hiV, r, fmt::format("the upper bound of {}", api));
    if (hi - lo > 100000)
      fail(r, "python-overflow", fmt::format("{} of more than 100000 iterations", api));
    V carry = init;
    for (int64_t i = lo; i < hi; ++i) {
      step(r);
      // On the host, JAX's fori_loop passes the index as a traced int32 scalar (a 0-d
      // array: `i[None]` is an array, not a TypeError); dkv knows its value.
      V index = integer(i);
      if (!inKernel_ && api == "lax.fori_loop") {
        auto a = std::make_shared<HostArrayV>(std::vector<int64_t>{}, ast::DType::I32);
        a->contents = std::vector<int64_t>{i};
        index = a;
      }
      carry =
          withCarry ? call(body, Args{{index, carry}, {}}, r) : call(body, Args{{index}, {}}, r);
    }
    return withCarry ? carry : none();
  }
  TE lo = intTE(loV, r, fmt::format("the lower bound of {}", api));
  TE hi = intTE(hiV, r, fmt::format("the upper bound of {}", api));
  std::string var = "i";
  SourceRange fr = r;
  if (auto *f = dynCast<FunctionV>(body)) {
    fr = f->range;
    if (f->params && !f->params->empty())
      var = (*f->params)[0].name;
  }
  var = fresh(var);
  auto stmts = std::make_unique<std::vector<ast::StmtPtr>>();
  pushBlock(stmts.get());
  V index = std::make_shared<TracedV>(teName(r, var), TKind::Int);
  V out;
  try {
    out = withCarry ? call(body, Args{{index, init}, {}}, r) : call(body, Args{{index}, {}}, r);
  } catch (...) {
    popBlock();
    throw;
  }
  popBlock();
  if (carried &&
      !(out == init || (out->kind != Kind::Traced && equal(out, init, r).value_or(false))))
    unsupported(r, fmt::format("{} with a per-device bound whose body changes the carried value "
                               "(dkv writes it as a `for`, which carries no values; with "
                               "concrete bounds it is unrolled)",
                               api));
  if (!carried && out->kind != Kind::None)
    fail(r, "python-type",
         fmt::format("the body of {} returns a value but the loop carries none (init is None)",
                     api));
  emit(std::make_unique<ast::ForStmt>(r, std::make_unique<ast::LoopVarDecl>(r, var), build(*lo),
                                      build(*hi),
                                      std::make_unique<ast::Block>(fr, std::move(*stmts))));
  return withCarry ? init : none();
}

// `lax.cond(pred, true_fun, false_fun, *operands)`: a concrete predicate calls one branch;
// a traced one traces both into `if pred { ... } else { ... }`. Values returned by the
// branches must be concrete and equal (a kernel-language `if` returns nothing).
V Interp::condBranches(const V &pred, const V &t, const V &f, const std::vector<V> &ops,
                       SourceRange r) {
  if (pred->kind != Kind::Traced)
    return call(truth(pred, r, "lax.cond") ? t : f, Args{ops, {}}, r);
  TE c = predTE(pred, r);
  auto tb = std::make_unique<std::vector<ast::StmtPtr>>();
  auto fb = std::make_unique<std::vector<ast::StmtPtr>>();
  pushBlock(tb.get());
  V tv;
  try {
    tv = call(t, Args{ops, {}}, r);
  } catch (...) {
    popBlock();
    throw;
  }
  popBlock();
  pushBlock(fb.get());
  V fv;
  try {
    fv = call(f, Args{ops, {}}, r);
  } catch (...) {
    popBlock();
    throw;
  }
  popBlock();
  if (tv->kind == Kind::Traced || fv->kind == Kind::Traced || !equal(tv, fv, r).value_or(false))
    unsupported(r, "lax.cond on a per-device predicate whose branches return different or "
                   "per-device values (dkv writes it as `if`/`else`, which returns nothing; "
                   "store results into refs instead)");
  auto range = [&](const V &fn) {
    auto *fv2 = dynCast<FunctionV>(fn);
    return fv2 ? fv2->range : r;
  };
  std::vector<ast::IfStmt::Branch> branches;
  branches.push_back({build(*c), std::make_unique<ast::Block>(range(t), std::move(*tb))});
  std::unique_ptr<ast::Block> elseBody;
  if (!fb->empty())
    elseBody = std::make_unique<ast::Block>(range(f), std::move(*fb));
  emit(std::make_unique<ast::IfStmt>(r, std::move(branches), std::move(elseBody)));
  return tv;
}

//===----------------------------------------------------------------------===//
// Compute on values
//===----------------------------------------------------------------------===//

// A compute statement's value (docs/language.md "Compute on values"): the operands are
// loaded values (at least one), numbers (NumPy broadcasts them; sema types them as JAX
// types Python numbers) or (where's condition) a per-device condition.
std::optional<prim::ValueType> Interp::valueType(const V &v) const {
  if (auto *t = dynCast<TracedV>(v)) {
    if (t->tk == TKind::Int)
      return prim::ValueType::scalar(prim::ElemType{ast::DType::I32, false});
    if (t->tk == TKind::Bool)
      return prim::ValueType::cond();
    auto it = valueTypes_.find(t->te.get());
    if (it == valueTypes_.end())
      return std::nullopt;
    return it->second.second;
  }
  if (isa<IntV>(v) || isa<BoolV>(v))
    return prim::ValueType::scalar(prim::kWeakInt);
  if (isa<FloatV>(v))
    return prim::ValueType::scalar(prim::kWeakFloat);
  return std::nullopt;
}

V Interp::typed(V v, std::optional<prim::ValueType> t) {
  if (t)
    if (auto *tv = dynCast<TracedV>(v))
      valueTypes_[tv->te.get()] = {tv->te, std::move(*t)};
  return v;
}

std::optional<prim::ValueType> Interp::inferValue(ast::ComputeOp op, const std::vector<V> &operands,
                                                  const prim::Attrs &attrs,
                                                  std::string_view api) const {
  std::vector<prim::ValueType> types;
  for (const V &v : operands) {
    std::optional<prim::ValueType> t = valueType(v);
    if (!t)
      return std::nullopt;
    types.push_back(std::move(*t));
  }
  prim::TypeResult res = prim::inferType(op, types, attrs, api);
  if (res.error)
    return std::nullopt; // lowering reports it, at the statement that uses the value
  return res.type;
}

namespace {

/// `.shape`, `.ndim`, `.size`, `.dtype` of a kernel value of a known, static type.
const AttrRow<prim::ValueType> kValueAttrs[] = {
    {"shape", [](auto &, auto &t, auto &, auto) { return dims(t.shape); }},
    {"ndim",
     [](auto &, auto &t, auto &, auto) { return integer(static_cast<int64_t>(t.shape.size())); }},
    {"size", [](auto &, auto &t, auto &, auto) { return integer(prim::elementCount(t.shape)); }},
    {"dtype",
     [](auto &, auto &t, auto &, auto) -> V {
       if (t.kind == prim::ValueType::Kind::Mask || t.kind == prim::ValueType::Kind::Cond)
         return nullptr; // bool: dkv's jnp.bool_ is not a dtype it models
       std::string_view py = prim::pythonName(t.elem.dtype); // "jnp.float32"
       return makeApi(
           DTypeObj{t.elem.dtype, std::string(py.substr(py.find('.') + 1)), DTypeForm::Dtype});
     }},
};

} // namespace

// The attribute `name` of a kernel value whose type dkv knows (kValueAttrs); null if it is
// another attribute or the type is unknown.
V Interp::tracedAttr(const V &v, const std::string &name, SourceRange r) {
  const AttrRow<prim::ValueType> *a = findAttr(kValueAttrs, name);
  if (!a)
    return nullptr;
  std::optional<prim::ValueType> t = valueType(v);
  if (!t)
    return nullptr;
  for (int64_t d : t->shape)
    if (d < 0)
      return nullptr;
  return a->get(*this, *t, v, r);
}

V Interp::computeValue(ast::ComputeOp op, std::vector<V> operands, std::optional<ast::DType> dtype,
                       std::optional<int64_t> axis, SourceRange r, std::string_view api,
                       std::vector<std::pair<std::string, bool>> flags, std::vector<int64_t> dims) {
  for (V &v : operands)
    v = current(v, r);
  prim::Attrs attrs;
  attrs.axis = axis;
  attrs.dtype = dtype;
  attrs.dims = dims;
  for (const auto &[k, b] : flags)
    if (k == "keepdims")
      attrs.keepdims = b;
  std::optional<prim::ValueType> type = inferValue(op, operands, attrs, api);
  auto e = std::make_shared<TExpr>();
  e->k = TExpr::K::Compute, e->range = r, e->cop = op, e->dtype = dtype, e->axis = axis;
  e->flags = std::move(flags), e->dims = std::move(dims);
  uint64_t stamp = UINT64_MAX;
  LoadSpan span;
  bool anyValue = false;
  for (size_t i = 0; i < operands.size(); ++i) {
    const V &v = operands[i];
    auto *t = dynCast<TracedV>(v);
    if (t && t->tk == TKind::Value) {
      anyValue = true;
      stamp = std::min(stamp, t->stamp);
      span = LoadSpan::merge(span, t->span);
      e->kids.push_back(t->te);
    } else if (op == ast::ComputeOp::Where && i == 0 && t && t->tk == TKind::Bool) {
      e->kids.push_back(t->te);
    } else if ((op != ast::ComputeOp::Where || i > 0) && v->kind == Kind::Int) {
      e->kids.push_back(teInt(r, cast<IntV>(v).i));
    } else if ((op != ast::ComputeOp::Where || i > 0) && v->kind == Kind::Float) {
      e->kids.push_back(kernelFloat(cast<FloatV>(v).f, r));
    } else {
      if (v->kind == Kind::Opaque)
        opaqueNeeded(v, r, fmt::format("operand {} of {}", i + 1, api));
      fail(r, "python-type",
           fmt::format(
               "{}: operand {} must be a value loaded from a ref or a number{}, got {}", api, i + 1,
               op == ast::ComputeOp::Where ? " (the condition: a per-device condition)" : "",
               typeName(*v)));
    }
  }
  // An op that creates an array (broadcasted_iota) has no operand.
  if (!anyValue && prim::record(op).shape != prim::ShapeRule::Create)
    fail(r, "python-type", fmt::format("{}: no operand is a value loaded from a ref", api));
  return typed(std::make_shared<TracedV>(e, TKind::Value, stamp, span), std::move(type));
}

//===----------------------------------------------------------------------===//
// Device ids and scratch
//===----------------------------------------------------------------------===//

TE Interp::deviceTE(const V &id, const V &type, SourceRange r) {
  if (singleDevice_) {
    // Outside a shard_map only the cores of the one device are reachable: a dict that
    // names the TensorCore mesh's axis alone (`device_id={'x': i}` in a pl.core_map).
    bool coresOnly = false;
    auto *tc = apiAs<TcMeshObj>(tcMesh_);
    if (auto *d = dynCast<DictV>(id); d && tc && !tc->sparse) {
      coresOnly = true;
      for (const Table::Entry &en : d->table.entries)
        if (en.live)
          coresOnly = coresOnly && en.key->kind == Kind::Str && cast<StrV>(en.key).s == tc->axis;
    }
    if (!coresOnly)
      fail(r, "python-unknown-fact",
           "a device id in a pallas_call outside a shard_map: outside one the call runs on one "
           "device, and dkv takes the mesh of the devices a remote DMA or signal reaches from "
           "the enclosing shard_map(..., mesh=...)");
  }
  bool logical = false;
  if (type && type->kind != Kind::None) {
    auto *t = apiAs<DeviceIdTypeObj>(type);
    if (!t)
      unsupported(r, "device_id_type other than pltpu.DeviceIdType.MESH or LOGICAL");
    logical = t->logical;
  }
  if (id->kind == Kind::Tuple || id->kind == Kind::List) {
    if (logical)
      fail(r, "python-call", "a LOGICAL device id is one integer, not a tuple");
    auto e = std::make_shared<TExpr>();
    e->k = TExpr::K::Tuple, e->range = r;
    for (const V &c : toVector(id, r))
      e->kids.push_back(intTE(c, r, "a device coordinate"));
    return e;
  }
  if (auto *d = dynCast<DictV>(id)) {
    auto e = std::make_shared<TExpr>();
    e->k = TExpr::K::Mapping, e->range = r;
    for (const Table::Entry &en : d->table.entries) {
      if (!en.live)
        continue;
      if (auto *k = dynCast<StrV>(en.key)) {
        if (auto *tc = apiAs<TcMeshObj>(tcMesh_); tc && tc->sparse && tc->named && tc->axis == k->s)
          subcoreTarget(r, fmt::format("a device id that names the SparseCore axis '{}'", k->s));
        e->keys.push_back(k->s);
        e->kids.push_back(intTE(en.value, r, "a device coordinate"));
        continue;
      }
      // {('y', 'x'): i}: i is an index over the joint axes, the first major; each axis
      // gets its coordinate (i / (product of the later sizes)) % size.
      if (en.key->kind != Kind::Tuple)
        fail(r, "python-type", "a device id dict's keys are axis names or tuples of them");
      std::vector<V> axes = toVector(en.key, r);
      std::vector<int64_t> sizes;
      for (const V &ax : axes) {
        auto *name = dynCast<StrV>(ax);
        if (!name)
          fail(r, "python-type", "a device id dict's keys are axis names or tuples of them");
        int64_t size = -1;
        if (auto *m = apiAs<MeshObj>(mesh_))
          for (size_t j = 0; j < m->names.size(); ++j)
            if (m->names[j] == name->s)
              size = m->sizes[j];
        if (size < 0)
          raise("NameError", fmt::format("unbound axis name: {}", name->s), r);
        sizes.push_back(size);
      }
      TE joint = intTE(en.value, r, "a device coordinate");
      const auto at = static_cast<long>(e->keys.size());
      int64_t later = 1;
      for (size_t k = axes.size(); k-- > 0;) {
        TE coord =
            teBinary(r, ast::BinaryOp::Mod,
                     later == 1 ? joint : teBinary(r, ast::BinaryOp::Div, joint, teInt(r, later)),
                     teInt(r, sizes[k]));
        e->keys.insert(e->keys.begin() + at, cast<StrV>(axes[k]).s);
        e->kids.insert(e->kids.begin() + at, coord);
        later *= sizes[k];
      }
    }
    return e;
  }
  return intTE(id, r, "a device id");
}

// `pltpu.SemaphoreType.BARRIER` as a scratch shape or output: Mosaic lowers it to a
// semaphore of the kernel's own (`!tpu.semaphore`), used with a collective_id but no
// `pltpu.get_barrier_semaphore()` (allow_collective_id_without_custom_barrier=True).
// Whether the runtime's device barrier runs before such a kernel, which decides whether
// a peer's signal can reach it before it starts, is not documented: refused.
void Interp::barrierScratch(SourceRange r) {
  unsupported(r, "pltpu.SemaphoreType.BARRIER as a scratch shape or output (a barrier "
                 "semaphore of the kernel's own, with allow_collective_id_without_custom_"
                 "barrier=True): whether the runtime synchronises the devices before such a "
                 "kernel starts, so that a peer's signal cannot reach it earlier, is not "
                 "documented, and dkv does not model it; signal through "
                 "pltpu.get_barrier_semaphore() with collective_id=N instead");
}

// The target of a DMA or signal in a kernel over a ScalarSubcoreMesh of several cores.
// Mosaic's lowering of a scalar-subcore kernel's device ids (`_device_id_to_logical`,
// jax/_src/pallas/mosaic/lowering.py, the branch "short circuit for same core semaphores")
// returns the device and no core index, whatever the id names: a remote DMA, or a signal
// with a device id, passes no core, and which SparseCore of the target device it reaches
// is not documented. A signal's `core_index=` reaches the signal as its core. With one
// core the target is that core.
void Interp::subcoreTarget(SourceRange r, const std::string &what) {
  auto *tc = apiAs<TcMeshObj>(tcMesh_);
  if (!tc || !tc->sparse || tc->cores == 1)
    return;
  unsupported(r, fmt::format("{} in a kernel over a plsc.ScalarSubcoreMesh of {} cores: Mosaic "
                             "lowers a scalar-subcore kernel's device id to a device and no "
                             "core, so which SparseCore it reaches is not documented; dkv "
                             "checks remote DMAs on a ScalarSubcoreMesh of one core, and "
                             "signals that name their core with core_index= (docs/python.md "
                             "\"SparseCores\")",
                             what, tc->cores));
}

std::unique_ptr<ast::Decl> Interp::scratchDecl(const V &spec, const std::string &name,
                                               SourceRange r, ast::Storage storage, V &bound) {
  auto mkSem = [&](ast::SemKind sk, std::vector<int64_t> dims) {
    if (sk == ast::SemKind::Barrier)
      barrierScratch(r);
    auto s = std::make_shared<RefV>(Kind::Sem);
    s->name = name, s->semKind = sk, s->dims = dims;
    bound = s;
    std::vector<ast::ExprPtr> de;
    for (int64_t d : dims)
      de.push_back(std::make_unique<ast::IntLiteral>(r, d));
    return std::make_unique<ast::SemDecl>(r, name, r, storage, sk, std::move(de));
  };
  if (auto *st = apiAs<SemTypeObj>(spec))
    return mkSem(st->kind, {});
  if (auto *sa = apiAs<SemArrayObj>(spec))
    return mkSem(sa->kind, shapeOf(sa->shape, r, "a semaphore array shape"));
  if (auto *sc = apiAs<ScratchObj>(spec)) {
    if (sc->space == ast::MemSpace::Any || sc->space == ast::MemSpace::Hbm)
      unsupported(r, "a scratch buffer in ANY / HBM memory (pltpu.ANY(shape, dtype) is a "
                     "pallas_call output's type here; scratch is VMEM or SMEM)");
    // A scalar subcore has SMEM of its own and no VMEM: its mesh's supported memory
    // spaces are VMEM_SHARED, SMEM and SEMAPHORE (sc_core.py, `supported_memory_spaces`).
    if (auto *tc = apiAs<TcMeshObj>(tcMesh_); tc && tc->sparse && sc->space == ast::MemSpace::Vmem)
      unsupported(r, "a VMEM scratch buffer in a plsc.ScalarSubcoreMesh kernel: a scalar "
                     "subcore has SMEM and no VMEM of its own (the mesh supports VMEM_SHARED, "
                     "SMEM and semaphores; dkv models SMEM and semaphores there)");
    std::vector<int64_t> dims = shapeOf(sc->shape, r, "a scratch shape");
    ast::DType dt = dtypeArg(sc->dtype, r);
    auto ref = std::make_shared<RefV>(Kind::Ref);
    ref->name = name, ref->dims = dims, ref->dtype = dt;
    bound = ref;
    std::vector<ast::ExprPtr> de;
    for (int64_t d : dims)
      de.push_back(std::make_unique<ast::IntLiteral>(r, d));
    return std::make_unique<ast::BufferDecl>(r, name, r, storage, ast::Direction::None, sc->space,
                                             dt, std::move(de));
  }
  if (spec->kind == Kind::Opaque)
    opaqueNeeded(spec, r, "a scratch shape");
  unsupported(r, fmt::format("the scratch shape {} (supported: pltpu.SemaphoreType.DMA / "
                             "REGULAR, with a shape, and pltpu.VMEM / SMEM(shape, dtype))",
                             typeName(*spec)));
}

//===----------------------------------------------------------------------===//
// The rows
//===----------------------------------------------------------------------===//

namespace {

V need(Interp &in, const CallCtx &c, const std::vector<V> &a, size_t i, const char *name) {
  if (!a[i])
    in.raiseId("TypeError", fmt::format("{}() missing required argument: '{}'", c.fn->name, name),
               c.range);
  return a[i];
}
bool given(const V &v) { return v && v->kind != Kind::None; }
RefV &refArg(Interp &in, const V &v, SourceRange r, std::string_view what) {
  if (v->kind != Kind::Ref) {
    if (v->kind == Kind::Opaque)
      in.opaqueNeeded(v, r, what);
    if (apiAs<StateRefObj>(v))
      in.stateRefMisused(v, r, std::string(what));
    fail(r, "python-type", fmt::format("{}: expected a ref, got {}", what, typeName(*v)));
  }
  return static_cast<RefV &>(*v);
}
RefV &semArg(Interp &in, const V &v, SourceRange r, std::string_view what) {
  if (v->kind != Kind::Sem) {
    if (v->kind == Kind::Opaque)
      in.opaqueNeeded(v, r, what);
    fail(r, "python-type", fmt::format("{}: expected a semaphore, got {}", what, typeName(*v)));
  }
  return static_cast<RefV &>(*v);
}
void noneOr(Interp &in, const CallCtx &c, const V &v, const char *name, const std::string &what) {
  if (v && v->kind != Kind::None && !(v->kind == Kind::Bool && !cast<BoolV>(v).b))
    unsupported(c.range, fmt::format("argument `{}` of {} ({})", name, c.fn->name, what));
  (void)in;
}

// A DMA whose semaphores are regular (pltpu.SemaphoreType.REGULAR): each is incremented by
// 1 when its side completes, a TPU v6+ feature (TpuChip::regularSemaphoreDma). Refused
// on an earlier chip, and without a chip, where dkv cannot tell. Mixing a regular and a
// DMA semaphore is left to sema ("sem-kind", as Mosaic refuses it).
void regularSemaphoreDma(Interp &in, std::initializer_list<const RefV *> sems, SourceRange r) {
  bool regular = false;
  for (const RefV *s : sems)
    regular = regular || s->semKind == ast::SemKind::Regular;
  if (!regular)
    return;
  if (!in.chip_)
    fail(r, "python-unknown-fact",
         fmt::format("a DMA with a regular semaphore (pltpu.SemaphoreType.REGULAR) needs TPU v6 "
                     "or later, and the chip is unknown to dkv; name it with --tpu NAME or "
                     "'# dkv: tpu NAME' ({})",
                     tpuChipNames()));
  if (!in.chip_->regularSemaphoreDma)
    fail(r, "python-call",
         fmt::format("a DMA with a regular semaphore (pltpu.SemaphoreType.REGULAR) needs TPU v6 "
                     "or later, and the chip is a {} (TPU v{})",
                     in.chip_->name, in.chip_->generation));
}

V remoteCopy(Interp &in, CallCtx &c, bool started) {
  std::vector<V> a = c.bind(in, {"src_ref", "dst_ref", "send_sem", "recv_sem", "device_id",
                                 "device_id_type", "priority"});
  RefV &src = refArg(in, need(in, c, a, 0, "src_ref"), c.range, "src_ref");
  RefV &dst = refArg(in, need(in, c, a, 1, "dst_ref"), c.range, "dst_ref");
  RefV &send = semArg(in, need(in, c, a, 2, "send_sem"), c.range, "send_sem");
  RefV &recv = semArg(in, need(in, c, a, 3, "recv_sem"), c.range, "recv_sem");
  in.subcoreTarget(c.range, "a remote DMA");
  TE dev = in.deviceTE(need(in, c, a, 4, "device_id"), a[5], c.range);
  if (given(a[6]))
    unsupported(c.range, "a remote copy's priority argument");
  regularSemaphoreDma(in, {&send, &recv}, c.range);
  SourceRange r = c.range;
  auto expr = std::make_unique<ast::RemoteCopyExpr>(
      r, build(*in.refTE(src, r)), build(*in.refTE(dst, r)), build(*in.refTE(send, r)),
      build(*in.refTE(recv, r)), build(*dev), started);
  std::string let = in.fresh(c.hint.empty() ? "dma" : c.hint);
  in.emit(
      std::make_unique<ast::LetStmt>(r, std::make_unique<ast::LetDecl>(r, let, r, std::move(expr))),
      started);
  return std::make_shared<DescV>(true, let);
}

V localCopy(Interp &in, CallCtx &c, bool started) {
  std::vector<V> a = c.bind(in, {"src_ref", "dst_ref", "sem", "*", "priority", "add"});
  RefV &src = refArg(in, need(in, c, a, 0, "src_ref"), c.range, "src_ref");
  RefV &dst = refArg(in, need(in, c, a, 1, "dst_ref"), c.range, "dst_ref");
  RefV &sem = semArg(in, need(in, c, a, 2, "sem"), c.range, "sem");
  noneOr(in, c, a[4], "add", "an accumulating DMA");
  regularSemaphoreDma(in, {&sem}, c.range);
  SourceRange r = c.range;
  auto expr = std::make_unique<ast::CopyExpr>(r, build(*in.refTE(src, r)), build(*in.refTE(dst, r)),
                                              build(*in.refTE(sem, r)), started);
  std::string let = in.fresh(c.hint.empty() ? "dma" : c.hint);
  in.emit(
      std::make_unique<ast::LetStmt>(r, std::make_unique<ast::LetDecl>(r, let, r, std::move(expr))),
      started);
  return std::make_shared<DescV>(false, let);
}

std::optional<ast::DType> preferred(Interp &in, const V &v, SourceRange r) {
  if (!given(v))
    return std::nullopt;
  return in.dtypeArg(v, r);
}

// `lax.dot_general(a, b, (((1,), (1,)), ((), ())))`, a @ b.T for a [M, K] and b [N, K]: the
// catalogue has no transpose, so it is written with its ops as the same sum of products,
// in f32 (as the MXU accumulates): sum(reshape(f32(a), [M, 1, K]) * reshape(f32(b), [1, N,
// K]), axis = -1), then the result type (the preferred one, else the operands' promoted
// type). Null if a shape is unknown.
V dotTransposed(Interp &in, const V &a, const V &b, std::optional<ast::DType> pref, SourceRange r) {
  std::optional<prim::ValueType> ta = in.valueType(a), tb = in.valueType(b);
  if (!ta || !tb || ta->kind != prim::ValueType::Kind::Array ||
      tb->kind != prim::ValueType::Kind::Array || ta->shape.size() != 2 || tb->shape.size() != 2)
    return nullptr;
  int64_t m = ta->shape[0], k = ta->shape[1], n = tb->shape[0];
  if (tb->shape[1] != k || m < 0 || n < 0 || k < 0)
    return nullptr;
  const std::string api = "lax.dot_general";
  using Op = ast::ComputeOp;
  V fa = in.computeValue(Op::AsType, {a}, ast::DType::F32, std::nullopt, r, api);
  V fb = in.computeValue(Op::AsType, {b}, ast::DType::F32, std::nullopt, r, api);
  V ra = in.computeValue(Op::Reshape, {fa}, std::nullopt, std::nullopt, r, api, {}, {m, 1, k});
  V rb = in.computeValue(Op::Reshape, {fb}, std::nullopt, std::nullopt, r, api, {}, {1, n, k});
  V prod = in.valueBinop("*", ra, rb, r);
  V sum = in.computeValue(Op::Sum, {prod}, std::nullopt, -1, r, api);
  ast::DType out = pref ? *pref : prim::promote(ta->elem, tb->elem).dtype;
  if (out == ast::DType::F32)
    return sum;
  return in.computeValue(Op::AsType, {sum}, out, std::nullopt, r, api);
}

} // namespace

std::vector<bool> canonicalAxes(Interp &in, std::vector<int64_t> &axes, int64_t rank,
                                const char *repeated, SourceRange r) {
  std::vector<bool> named(static_cast<size_t>(rank), false);
  for (int64_t &a : axes) {
    if (a < -rank || a >= rank)
      in.raise("ValueError",
               fmt::format("axis {} is out of bounds for array of dimension {}", a, rank), r);
    if (a < 0)
      a += rank;
    if (named[static_cast<size_t>(a)])
      in.raise("ValueError", repeated, r);
    named[static_cast<size_t>(a)] = true;
  }
  return named;
}

namespace {

// A reduction over a tuple of axes (`jnp.sum(x, axis=(0, 1), keepdims=True)`): the
// catalogue reduces one axis, so one reduction per axis, each keeping its axis as 1,
// then a `reshape` dropping them without `keepdims`. NumPy's errors: an axis out of
// range, a repeated axis. (A float sum adds in another order than one pass would: its
// last bits may differ, verdicts do not.)
V reduceAxes(Interp &in, CallCtx &c, ast::ComputeOp op, const V &x, std::vector<int64_t> axes,
             std::vector<std::pair<std::string, bool>> flags) {
  std::optional<prim::ValueType> t = in.valueType(x);
  if (!t || t->kind != prim::ValueType::Kind::Array)
    unsupported(c.range, fmt::format("{} over a tuple of axes of a kernel value of unknown "
                                     "shape",
                                     c.fn->name));
  std::vector<int64_t> shape = t->shape;
  const int64_t rank = static_cast<int64_t>(shape.size());
  std::vector<bool> seen = canonicalAxes(in, axes, rank, "duplicate value in 'axis'", c.range);
  if (axes.empty())
    unsupported(c.range, fmt::format("{} over no axes (axis=())", c.fn->name));
  bool keepdims = false;
  for (const auto &[k, b] : flags)
    if (k == "keepdims")
      keepdims = b;
  if (!keepdims && axes.size() == shape.size()) // every axis: the catalogue's whole reduction
    return in.computeValue(op, {x}, std::nullopt, std::nullopt, c.range, c.fn->name, flags);
  std::erase_if(flags, [](const auto &f) { return f.first == "keepdims"; });
  flags.emplace_back("keepdims", true);
  V v = x;
  for (int64_t a : axes)
    v = in.computeValue(op, {v}, std::nullopt, a, c.range, c.fn->name, flags);
  if (keepdims)
    return v;
  std::vector<int64_t> dims;
  for (size_t i = 0; i < shape.size(); ++i)
    if (!seen[i])
      dims.push_back(shape[i]);
  return in.computeValue(ast::ComputeOp::Reshape, {v}, std::nullopt, std::nullopt, c.range,
                         c.fn->name, {}, dims);
}

V reduction(Interp &in, CallCtx &c, ast::ComputeOp op) {
  std::vector<V> a = c.bind(in, {"a", "axis", "dtype", "out", "keepdims", "initial", "where"});
  noneOr(in, c, a[2], "dtype", "a reduction with its own element type");
  noneOr(in, c, a[3], "out", "an output array");
  noneOr(in, c, a[5], "initial", "an initial value");
  noneOr(in, c, a[6], "where", "a mask");
  std::optional<int64_t> axis;
  std::vector<std::pair<std::string, bool>> flags;
  if (given(a[4]))
    flags.emplace_back("keepdims", in.truth(a[4], c.range, "keepdims"));
  if (given(a[1]) && (a[1]->kind == Kind::Tuple || a[1]->kind == Kind::List)) {
    std::vector<int64_t> axes;
    for (const V &x : in.toVector(a[1], c.range))
      axes.push_back(in.toIndex(x, c.range, "axis"));
    return reduceAxes(in, c, op, need(in, c, a, 0, "a"), std::move(axes), std::move(flags));
  }
  if (given(a[1])) {
    if (a[1]->kind != Kind::Int)
      unsupported(c.range,
                  fmt::format("the axis of {} other than an int or a tuple of ints", c.fn->name));
    axis = cast<IntV>(a[1]).i;
  }
  return in.computeValue(op, {need(in, c, a, 0, "a")}, std::nullopt, axis, c.range, c.fn->name,
                         std::move(flags));
}

// lax.axis_size('x'), and lax.psum(1, 'x') (the same number); lax.psum of anything
// else is a collective dkv does not compute.
// The size of one mesh axis (or the core axis of the pl.kernel being traced).
int64_t axisSizeOf(Interp &in, const std::string &name, SourceRange r) {
  if (auto *tc = apiAs<TcMeshObj>(in.tcMesh_); tc && tc->named && tc->axis == name)
    return tc->cores;
  if (auto *m = apiAs<MeshObj>(in.mesh_))
    for (size_t i = 0; i < m->names.size(); ++i)
      if (m->names[i] == name)
        return m->sizes[i];
  in.raise("NameError", fmt::format("unbound axis name: {}", name), r);
}

// The axis names of an axis_name argument: one name or a tuple of them (JAX's joint
// axes, major to minor).
std::vector<std::string> axisNames(Interp &in, const V &axis, CallCtx &c) {
  std::vector<std::string> names;
  if (axis->kind == Kind::Str)
    return {cast<StrV>(axis).s};
  if (axis->kind != Kind::Tuple && axis->kind != Kind::List)
    fail(c.range, "python-call", fmt::format("{}: expected an axis name", c.fn->name));
  for (const V &v : in.toVector(axis, c.range)) {
    if (v->kind != Kind::Str)
      fail(c.range, "python-call", fmt::format("{}: expected an axis name", c.fn->name));
    names.push_back(cast<StrV>(v).s);
  }
  return names;
}

// lax.axis_index(name): in a kernel the traced axis_index(x); on the host inside
// shard_map each device's index along the axis, a per-device int32 scalar (what JAX's
// trace of the shard_map'ed body gives it). Of a tuple of axes, the index over their
// product, the first axis major: axis_index(('y', 'x')) = y * size(x) + x.
V axisIndex(Interp &in, CallCtx &c) {
  std::vector<V> a = c.bind(in, {"axis_name"});
  std::vector<std::string> names = axisNames(in, need(in, c, a, 0, "axis_name"), c);
  if (!in.inKernel_) {
    auto *m = apiAs<MeshObj>(in.mesh_);
    if (!m)
      fail(c.range, "python-unknown-api",
           "`lax.axis_index` is only meaningful inside shard_map or a kernel that "
           "pl.pallas_call traces");
    std::vector<std::vector<int64_t>> per(static_cast<size_t>(m->devices()), {0});
    for (const std::string &name : names) {
      int64_t stride = 1, size = -1;
      for (size_t j = m->names.size(); j-- > 0;) {
        if (m->names[j] == name) {
          size = m->sizes[j];
          break;
        }
        stride *= m->sizes[j];
      }
      if (size < 0)
        in.raise("NameError",
                 fmt::format("unbound axis name: {} (not an axis of the shard_map's mesh)", name),
                 c.range);
      for (size_t d = 0; d < per.size(); ++d)
        per[d][0] = per[d][0] * size + (static_cast<int64_t>(d) / stride) % size;
    }
    auto out = std::make_shared<HostArrayV>(std::vector<int64_t>{}, ast::DType::I32);
    out->deviceContents = std::move(per);
    return out;
  }
  TE acc;
  for (const std::string &name : names) {
    bool known = false;
    if (auto *tc = apiAs<TcMeshObj>(in.tcMesh_))
      known = tc->named && tc->axis == name; // the core of a pl.kernel
    if (auto *m = apiAs<MeshObj>(in.mesh_))
      known = known || std::find(m->names.begin(), m->names.end(), name) != m->names.end();
    if (!known)
      in.raise("NameError",
               fmt::format("unbound axis name: {} (not an axis of the shard_map's mesh)", name),
               c.range);
    auto e = std::make_shared<TExpr>();
    e->k = TExpr::K::Builtin, e->range = c.range, e->builtin = ast::Builtin::AxisIndex;
    e->kids = {teName(c.range, name)};
    acc = acc ? teBinary(c.range, ast::BinaryOp::Add,
                         teBinary(c.range, ast::BinaryOp::Mul, acc,
                                  teInt(c.range, axisSizeOf(in, name, c.range))),
                         e)
              : TE(e);
  }
  return std::make_shared<TracedV>(acc, TKind::Int);
}

// A collective of host arrays inside shard_map (`lax.psum(x, 'x')`, `lax.all_gather`,
// ...): XLA runs it between kernels, so it is no kernel code; dkv keeps the result's
// shape and dtype by JAX's rules (the values are not computed). Elsewhere, or of another
// value, what dkv does not compute.
enum class Collective { Reduce, AllGather, PsumScatter, Permute };
V hostCollective(Interp &in, CallCtx &c, Collective kind) {
  if (in.inKernel_)
    fail(c.range, "python-unknown-api",
         fmt::format("`{}` is called inside a kernel, and dkv does not model it there (a "
                     "collective of arrays: between kernels, inside shard_map, it keeps the "
                     "result's shape; docs/python.md)",
                     c.fn->name));
  // The slots of bind: x, axis_name, then the keyword-only ones ("*" takes none).
  size_t groupsAt = 2, dimAt = 0, tiledAt = 0;
  std::vector<V> a;
  switch (kind) {
  case Collective::Reduce:
    a = c.bind(in, {"x", "axis_name", "*", "axis_index_groups"});
    break;
  case Collective::AllGather:
    a = c.bind(in, {"x", "axis_name", "*", "axis_index_groups", "axis", "tiled"});
    dimAt = 3, tiledAt = 4;
    break;
  case Collective::PsumScatter:
    a = c.bind(in, {"x", "axis_name", "*", "scatter_dimension", "axis_index_groups", "tiled"});
    dimAt = 2, groupsAt = 3, tiledAt = 4;
    break;
  case Collective::Permute:
    a = c.bind(in, {"x", "axis_name", "perm"});
    need(in, c, a, 2, "perm");
    groupsAt = 0;
    break;
  }
  const V x = need(in, c, a, 0, "x");
  int64_t n = 1; // over a tuple of axes, the product of their sizes
  for (const std::string &name : axisNames(in, need(in, c, a, 1, "axis_name"), c))
    n *= axisSizeOf(in, name, c.range);
  auto *arr = dynCast<HostArrayV>(x);
  const bool groups = groupsAt && a[groupsAt] && a[groupsAt]->kind != Kind::None;
  if (!arr || arr->isStruct || groups)
    return in.opaque(fmt::format("{} of {} (a collective dkv does not compute)", c.fn->name,
                                 groups ? "axis_index_groups" : "this value"),
                     c.range);
  std::vector<int64_t> shape = arr->shape;
  const int64_t rank = static_cast<int64_t>(shape.size());
  const bool tiled = tiledAt && a[tiledAt] && in.truth(a[tiledAt], c.range, "tiled");
  auto dim = [&](std::string_view what, int64_t limit) {
    const int64_t d = a[dimAt] ? in.toIndex(a[dimAt], c.range, what) : 0;
    if (d < 0 || d >= limit)
      fail(c.range, "python-unsupported",
           fmt::format("{}: {}={} for an array of {} dimensions (dkv takes 0 to {})", c.fn->name,
                       what, d, rank, limit - 1));
    return static_cast<size_t>(d);
  };
  if (kind == Collective::AllGather) {
    const size_t d = dim("axis", tiled ? rank : rank + 1);
    if (tiled)
      shape[d] *= n;
    else
      shape.insert(shape.begin() + static_cast<std::ptrdiff_t>(d), n);
  } else if (kind == Collective::PsumScatter) {
    const size_t d = dim("scatter_dimension", rank);
    if (tiled ? shape[d] % n != 0 : shape[d] != n)
      in.raise("ValueError",
               fmt::format("{}: dimension {} of size {} {} the axis size {}", c.fn->name, d,
                           shape[d], tiled ? "is not divisible by" : "is not", n),
               c.range);
    if (tiled)
      shape[d] /= n;
    else
      shape.erase(shape.begin() + static_cast<std::ptrdiff_t>(d));
  }
  return std::make_shared<HostArrayV>(std::move(shape), arr->dtype);
}

V axisSize(Interp &in, CallCtx &c, bool psum) {
  V axis = c.args.pos.empty() ? nullptr : c.args.pos.back();
  for (const auto &[k, v] : c.args.kw)
    if (k == "axis_name")
      axis = v;
  if (psum && !c.args.pos.empty() && c.args.pos[0]->kind == Kind::HostArray)
    return hostCollective(in, c, Collective::Reduce);
  if (psum && !(c.args.pos.size() >= 1 && c.args.pos[0]->kind == Kind::Int &&
                cast<IntV>(c.args.pos[0]).i == 1))
    return in.opaque("lax.psum of a value (a collective dkv does not compute)", c.range);
  if (!axis)
    fail(c.range, "python-call", fmt::format("{}: expected an axis name", c.fn->name));
  int64_t size = 1; // of a tuple of axes, their product
  for (const std::string &name : axisNames(in, axis, c))
    size *= axisSizeOf(in, name, c.range);
  return integer(size);
}

// pl.program_id(d) (a traced int) and pl.num_programs(d) (the grid's extent, an int).
V programId(Interp &in, CallCtx &c, bool count) {
  std::vector<V> a = c.bind(in, {"axis"});
  int64_t d = in.toIndex(need(in, c, a, 0, "axis"), c.range, c.fn->name);
  if (d < 0 || d >= static_cast<int64_t>(in.grid_.size()))
    fail(c.range, "python-call",
         fmt::format("{}({}): the grid has {} dimensions", c.fn->name, d, in.grid_.size()));
  if (count)
    return integer(in.grid_[static_cast<size_t>(d)]);
  auto e = std::make_shared<TExpr>();
  e->k = TExpr::K::Builtin, e->range = c.range, e->builtin = ast::Builtin::ProgramId;
  e->kids = {teInt(c.range, d)};
  return std::make_shared<TracedV>(e, TKind::Int);
}

// jnp.logical_and / logical_or (`op`) of two conditions: a Python bool when neither is
// traced.
V logical(Interp &in, CallCtx &c, ast::BinaryOp op) {
  if (c.args.pos.size() != 2)
    fail(c.range, "python-call", fmt::format("{} takes two arguments", c.fn->name));
  if (c.args.pos[0]->kind != Kind::Traced && c.args.pos[1]->kind != Kind::Traced) {
    bool x = in.truth(c.args.pos[0], c.range, c.fn->name);
    return boolean(op == ast::BinaryOp::And ? x && in.truth(c.args.pos[1], c.range, c.fn->name)
                                            : x || in.truth(c.args.pos[1], c.range, c.fn->name));
  }
  return std::make_shared<TracedV>(
      teBinary(c.range, op, in.condTE(c.args.pos[0], c.range), in.condTE(c.args.pos[1], c.range)),
      TKind::Bool);
}

// jnp.dot / jnp.matmul, and pl.dot (`pallas`: its own parameters, the transposes).
V dot(Interp &in, CallCtx &c, bool pallas) {
  if (!in.inKernel_) {
    // On the host, jnp.dot / jnp.matmul of two matrices without a result type.
    if (!pallas && c.args.pos.size() == 2 && c.args.kw.empty())
      if (V v = in.hostMatmul(c.args.pos[0], c.args.pos[1]))
        return v;
    return in.opaque(fmt::format("{} of arrays", c.fn->name), c.range);
  }
  std::vector<V> a = pallas ? c.bind(in, {"a", "b", "trans_a", "trans_b", "allow_tf32", "precision",
                                          "preferred_element_type"})
                            : c.bind(in, {"a", "b", "precision", "preferred_element_type"});
  // `precision` (how many bf16 passes the MXU makes) changes only the rounding of the
  // product: not a region, an order or a shape. It is accepted and has no effect; the
  // executor computes every product at its element type's precision.
  if (pallas) {
    noneOr(in, c, a[2], "trans_a", "a transposed operand");
    noneOr(in, c, a[3], "trans_b", "a transposed operand");
  }
  V pt = pallas ? a[6] : a[3];
  return in.computeValue(ast::ComputeOp::Dot, {need(in, c, a, 0, "a"), need(in, c, a, 1, "b")},
                         preferred(in, pt, c.range), std::nullopt, c.range, c.fn->name);
}

// A catalogue op called by one of its Python names (prim/Ops.def): the arguments bound
// to that spelling's signature. An op the Python operators spell (jnp.add: `+`,
// jnp.negative: unary `-`) is that operator; any other is element-wise here: its
// `array` / `cond` arguments are the operands, `dtype` the element type, `bool` ones
// flags (gelu's `approximate`), `unsupported` ones accepted only when absent.
// Several results: the kernel language's `let a, b = split(x, 2, axis = k)`, one let per
// part (the part's type is the split's).
std::vector<V> splitLets(Interp &in, const V &value, const std::string &hint, SourceRange r,
                         std::string_view api) {
  const auto &whole = cast<TracedV>(value);
  int64_t n = whole.te->dims[0];
  if (n < 1)
    fail(r, "python-call", fmt::format("{}: the number of sections must be positive", api));
  std::optional<prim::ValueType> partType = in.valueType(value);
  std::vector<std::string> names;
  for (int64_t i = 0; i < n; ++i)
    names.push_back(in.fresh(hint));
  // The parts read the whole's refs where their lets are: that is where the whole was
  // loaded when no operation ran since (a snapshot may then be taken there).
  LoadSpan span;
  if (whole.span.any() && whole.span.lo == whole.span.hi && whole.span.hi == in.emitted_)
    span = LoadSpan{whole.span.lo, whole.span.hi, in.blocks_.size(), in.blockIds_.back()};
  std::vector<V> parts;
  for (size_t i = 0; i < names.size(); ++i) {
    ast::ExprPtr part = build(*whole.te);
    static_cast<ast::ComputeExpr &>(*part).setPart(static_cast<int64_t>(i));
    auto let = std::make_unique<ast::LetStmt>(
        r, std::make_unique<ast::LetDecl>(r, names[i], r, std::move(part)), i, names.size());
    let->setTupleNames(names);
    in.emit(std::move(let), false);
    parts.push_back(in.typed(
        std::make_shared<TracedV>(teName(r, names[i]), TKind::Value, whole.stamp, span), partType));
  }
  return parts;
}

V catalogueCall(Interp &in, CallCtx &c) {
  const prim::PySpelling &s = *prim::findPythonSpelling(c.fn->name);
  const prim::OpRecord &op = prim::record(s.op);
  std::vector<prim::Arg> args;
  std::vector<V> values = c.args.pos;
  args.resize(values.size());
  for (const auto &[k, v] : c.args.kw) {
    args.push_back(prim::Arg{k});
    values.push_back(v);
  }
  prim::BindResult b = prim::bindArguments(s.signature, args);
  if (!b.ok())
    in.raiseId(
        "TypeError",
        fmt::format("{}(): {}", c.fn->name, prim::dkErrorMessage(b.errors[0], s.signature, args)),
        c.range);
  auto arg = [&](size_t i) { return b.slot[i] < 0 ? V() : values[static_cast<size_t>(b.slot[i])]; };
  if (!op.pyOperator.empty()) {
    if (s.signature.params.size() == 1)
      return in.unary(py::UnaryOpKind::USub, arg(0), c.range);
    for (int k = 0; k <= static_cast<int>(py::BinOpKind::FloorDiv); ++k)
      if (py::toString(static_cast<py::BinOpKind>(k)) == op.pyOperator)
        return in.binop(static_cast<py::BinOpKind>(k), arg(0), arg(1), c.range);
    for (int k = 0; k <= static_cast<int>(py::CmpOpKind::GtE); ++k)
      if (py::toString(static_cast<py::CmpOpKind>(k)) == op.pyOperator)
        return in.compare(static_cast<py::CmpOpKind>(k), arg(0), arg(1), c.range);
    unsupported(c.range, fmt::format("{} (the operator `{}`)", c.fn->name, op.pyOperator));
  }
  if (!in.inKernel_) {
    if (auto *h = dynCast<HostArrayV>(arg(0)); h && op.shape == prim::ShapeRule::Split)
      return in.splitArray(*h, arg(1), arg(2), c.range);
    if (op.shape == prim::ShapeRule::Concat)
      return in.concatArrays(arg(0), arg(1), c.range);
    if (V v = in.hostMath(c)) // jnp.exp, jnp.abs of host arrays and Python scalars
      return v;
    return in.opaque(fmt::format("{} of arrays", c.fn->name), c.range);
  }
  std::vector<V> operands;
  std::optional<ast::DType> dtype;
  std::optional<int64_t> axis;
  std::vector<int64_t> dims;
  std::vector<std::pair<std::string, bool>> flags;
  for (size_t i = 0; i < s.signature.params.size(); ++i) {
    const prim::Param &p = s.signature.params[i];
    std::string name(p.name);
    switch (p.kind) {
    case prim::ParamKind::Array:
    case prim::ParamKind::Cond:
    case prim::ParamKind::Value:
      operands.push_back(arg(i));
      break;
    case prim::ParamKind::DType:
      if (given(arg(i)))
        dtype = in.dtypeArg(arg(i), c.range);
      break;
    case prim::ParamKind::Bool:
      if (given(arg(i)))
        flags.emplace_back(name, in.truth(arg(i), c.range, name));
      break;
    case prim::ParamKind::Unsupported:
      noneOr(in, c, arg(i), name.c_str(), "dkv does not model it");
      break;
    case prim::ParamKind::Arrays:
      for (const V &v : in.toVector(arg(i), c.range))
        operands.push_back(v);
      break;
    case prim::ParamKind::Axis:
      if (given(arg(i)))
        axis = in.toIndex(arg(i), c.range, name);
      break;
    case prim::ParamKind::Shape:
      dims = in.shapeOf(arg(i), c.range, name);
      break;
    case prim::ParamKind::Int:
      dims = {in.toIndex(arg(i), c.range, name)};
      break;
    }
  }
  V value = in.computeValue(s.op, std::move(operands), dtype, axis, c.range, c.fn->name,
                            std::move(flags), std::move(dims));
  if (op.shape != prim::ShapeRule::Split)
    return value;
  return list(splitLets(in, value, c.hint.empty() ? "part" : c.hint, c.range, c.fn->name));
}

// jnp.zeros / ones / empty and their NumPy spellings on the host: an array of that
// shape and type (integer ones of known contents when small).
V hostArray(Interp &in, CallCtx &c) {
  bool ones = c.fn->name.find("ones") != std::string::npos;
  std::vector<V> a = c.bind(in, {"shape", "dtype", "*", "device", "out_sharding"});
  // NumPy's default type is float64, JAX's float32 (HostArrayV::x64).
  bool numpy = c.fn->name.rfind("np.", 0) == 0;
  auto [dt, x64] = !given(a[1]) ? std::pair{ast::DType::F32, numpy}
                   : numpy      ? in.numpyDtypeArg(a[1], c.range)
                                : std::pair{in.dtypeArg(a[1], c.range), false};
  auto arr = std::make_shared<HostArrayV>(
      in.shapeOf(need(in, c, a, 0, "shape"), c.range, "the array shape"), dt);
  arr->numpy = numpy;
  arr->x64 = x64;
  // An integer array of zeros or ones: a table of known values (small ones).
  if (ast::isInteger(arr->dtype) && c.fn->name.find("empty") == std::string::npos &&
      arr->size() <= 100000 && arr->size() >= 0)
    arr->contents = std::vector<int64_t>(static_cast<size_t>(arr->size()), ones ? 1 : 0);
  return arr;
}

} // namespace

void registerKernelApi(Registry &reg) {
  auto fn = [&](std::vector<std::string> names, V (*h)(Interp &, CallCtx &), std::string construct,
                bool kernelOnly) {
    std::string shortName = names[0];
    for (const auto &[prefix, alias] : std::vector<std::pair<std::string, std::string>>{
             {"jax.experimental.pallas.tpu.", "pltpu."},
             {"jax.experimental.pallas.", "pl."},
             {"jax.numpy.", "jnp."},
             {"jax.lax.", "lax."},
             {"numpy.", "np."}})
      if (shortName.rfind(prefix, 0) == 0) {
        shortName = alias + shortName.substr(prefix.size());
        break;
      }
    reg.addRow(ApiRow{std::move(names), BuiltinFn{shortName, h, std::move(construct), kernelOnly},
                      nullptr});
  };
  const std::string PL = "jax.experimental.pallas.", TPU = "jax.experimental.pallas.tpu.";

  fn({"jax.lax.axis_index"}, axisIndex, "axis_index(x)", false);
  fn(
      {"jax.lax.axis_size"}, +[](Interp &in, CallCtx &c) -> V { return axisSize(in, c, false); },
      "the axis size (an int)", false);
  fn(
      {"jax.lax.psum"}, +[](Interp &in, CallCtx &c) -> V { return axisSize(in, c, true); },
      "the axis size (an int)", false);
  // Collectives of host arrays inside shard_map: the result's shape and dtype.
  for (const char *name : {"jax.lax.pmax", "jax.lax.pmin", "jax.lax.pmean"})
    fn(
        {name},
        +[](Interp &in, CallCtx &c) -> V { return hostCollective(in, c, Collective::Reduce); }, "",
        false);
  fn(
      {"jax.lax.all_gather"},
      +[](Interp &in, CallCtx &c) -> V { return hostCollective(in, c, Collective::AllGather); }, "",
      false);
  fn(
      {"jax.lax.psum_scatter"},
      +[](Interp &in, CallCtx &c) -> V { return hostCollective(in, c, Collective::PsumScatter); },
      "", false);
  fn(
      {"jax.lax.ppermute"},
      +[](Interp &in, CallCtx &c) -> V { return hostCollective(in, c, Collective::Permute); }, "",
      false);
  fn(
      {PL + "program_id"}, +[](Interp &in, CallCtx &c) -> V { return programId(in, c, false); },
      "program_id(d)", true);
  fn(
      {PL + "num_programs"}, +[](Interp &in, CallCtx &c) -> V { return programId(in, c, true); },
      "the grid size", true);
  fn(
      {"jax.numpy.logical_and"},
      +[](Interp &in, CallCtx &c) -> V { return logical(in, c, ast::BinaryOp::And); }, "a and b",
      false);
  fn(
      {"jax.numpy.logical_or"},
      +[](Interp &in, CallCtx &c) -> V { return logical(in, c, ast::BinaryOp::Or); }, "a or b",
      false);
  fn(
      {"jax.lax.rem"},
      +[](Interp &in, CallCtx &c) -> V {
        if (c.args.pos.size() != 2 || !c.args.kw.empty())
          fail(c.range, "python-call", "lax.rem takes two arguments");
        const V &a = c.args.pos[0], &b = c.args.pos[1];
        if (a->kind == Kind::Int && b->kind == Kind::Int) {
          int64_t x = cast<IntV>(a).i, y = cast<IntV>(b).i;
          if (y == 0)
            fail(c.range, "python-zero-division", "lax.rem by zero");
          return integer(y == -1 ? 0 : x % y);
        }
        if (a->kind == Kind::Opaque || b->kind == Kind::Opaque || a->kind == Kind::HostArray ||
            b->kind == Kind::HostArray)
          return in.opaque("lax.rem of arrays", c.range);
        return std::make_shared<TracedV>(teBinary(c.range, ast::BinaryOp::Rem,
                                                  in.intTE(a, c.range, "lax.rem"),
                                                  in.intTE(b, c.range, "lax.rem")),
                                         TKind::Int);
      },
      "rem(a, b)", false);
  fn(
      {"jax.numpy.logical_not"},
      +[](Interp &in, CallCtx &c) -> V {
        if (c.args.pos.size() != 1)
          fail(c.range, "python-call", "jnp.logical_not takes one argument");
        if (c.args.pos[0]->kind != Kind::Traced)
          return boolean(!in.truth(c.args.pos[0], c.range, c.fn->name));
        return std::make_shared<TracedV>(
            teUnary(c.range, ast::UnaryOp::Not, in.condTE(c.args.pos[0], c.range)), TKind::Bool);
      },
      "not a", false);
  fn(
      {PL + "when"},
      +[](Interp &in, CallCtx &c) -> V {
        if (c.args.pos.size() != 1 || !c.args.kw.empty())
          fail(c.range, "python-call", "pl.when takes one condition");
        (void)in;
        return makeApi(WhenObj{c.args.pos[0]});
      },
      "if c { ... }", false);
  fn(
      {"jax.lax.fori_loop"},
      +[](Interp &in, CallCtx &c) -> V {
        std::vector<V> a = c.bind(in, {"lower", "upper", "body_fun", "init_val", "*", "unroll"});
        if (!a[2] || !a[3]) {
          // `@functools.partial(lax.fori_loop, 0, n, init_val=None)` leaves the body last.
          need(in, c, a, 2, "body_fun");
          need(in, c, a, 3, "init_val");
        }
        return in.forLoop("lax.fori_loop", need(in, c, a, 0, "lower"), need(in, c, a, 1, "upper"),
                          a[2], a[3], true, c.range);
      },
      "for i in lo .. hi { body }", false);
  fn(
      {PL + "loop"},
      +[](Interp &in, CallCtx &c) -> V {
        std::vector<V> a = c.bind(in, {"lower", "upper", "*", "step", "init_carry", "unroll"});
        if (given(a[2]) && !(a[2]->kind == Kind::Int && cast<IntV>(a[2]).i == 1))
          unsupported(c.range, "pl.loop with a step other than 1");
        return makeApi(
            LoopObj{need(in, c, a, 0, "lower"), need(in, c, a, 1, "upper"), a[3] ? a[3] : none()});
      },
      "for i in lo .. hi { body }", false);
  fn(
      {"jax.lax.cond"},
      +[](Interp &in, CallCtx &c) -> V {
        if (c.args.pos.size() < 3 || !c.args.kw.empty())
          fail(c.range, "python-call", "lax.cond takes (pred, true_fun, false_fun, *operands)");
        return in.condBranches(c.args.pos[0], c.args.pos[1], c.args.pos[2],
                               std::vector<V>(c.args.pos.begin() + 3, c.args.pos.end()), c.range);
      },
      "if pred { true_fun } else { false_fun }", false);
  fn(
      {"jax.numpy.where", "jax.lax.select"},
      +[](Interp &in, CallCtx &c) -> V {
        std::vector<V> a = c.bind(in, {"condition", "x", "y"});
        V cond = need(in, c, a, 0, "condition"), x = need(in, c, a, 1, "x"),
          y = need(in, c, a, 2, "y");
        if (cond->kind == Kind::Opaque || cond->kind == Kind::HostArray)
          return in.opaque(fmt::format("{} of arrays", c.fn->name), c.range);
        bool values = isTracedValue(cond) || isTracedValue(x) || isTracedValue(y);
        if (cond->kind != Kind::Traced)
          return in.truth(cond, c.range, c.fn->name) ? x : y;
        if (values)
          return in.computeValue(ast::ComputeOp::Where, {cond, x, y}, std::nullopt, std::nullopt,
                                 c.range, c.fn->name);
        auto e = std::make_shared<TExpr>();
        e->k = TExpr::K::Select, e->range = c.range;
        e->kids = {in.condTE(cond, c.range), in.intTE(x, c.range, c.fn->name),
                   in.intTE(y, c.range, c.fn->name)};
        return std::make_shared<TracedV>(e, TKind::Int);
      },
      "select(c, a, b), where(c, a, b)", false);
  fn(
      {TPU + "make_async_remote_copy", PL + "make_async_remote_copy"},
      +[](Interp &in, CallCtx &c) -> V { return remoteCopy(in, c, false); },
      "let c = remote_copy(src, dst, send, recv, device = ...)", true);
  fn(
      {TPU + "async_remote_copy", PL + "async_remote_copy"},
      +[](Interp &in, CallCtx &c) -> V { return remoteCopy(in, c, true); },
      "async_remote_copy(...)", true);
  fn(
      {TPU + "make_async_copy", PL + "make_async_copy"},
      +[](Interp &in, CallCtx &c) -> V { return localCopy(in, c, false); }, "copy(...)", true);
  fn(
      {TPU + "async_copy", PL + "async_copy"},
      +[](Interp &in, CallCtx &c) -> V { return localCopy(in, c, true); }, "async_copy(...)", true);
  fn(
      {TPU + "semaphore_signal", PL + "semaphore_signal"},
      +[](Interp &in, CallCtx &c) -> V {
        std::vector<V> a =
            c.bind(in, {"sem_or_view", "inc", "device_id", "device_id_type", "core_index"});
        RefV &sem = semArg(in, need(in, c, a, 0, "sem_or_view"), c.range, "the semaphore");
        ast::ExprPtr incE = a[1] ? build(*in.intTE(a[1], c.range, "inc")) : nullptr;
        ast::ExprPtr devE = given(a[2]) ? build(*in.deviceTE(a[2], a[3], c.range)) : nullptr;
        if (given(a[2]) && !given(a[4]))
          in.subcoreTarget(c.range, "a signal with a device id and no core_index=");
        ast::ExprPtr coreE = given(a[4]) ? build(*in.intTE(a[4], c.range, "core_index")) : nullptr;
        in.emit(std::make_unique<ast::SignalStmt>(c.range, build(*in.refTE(sem, c.range)),
                                                  std::move(incE), std::move(devE),
                                                  std::move(coreE)));
        return none();
      },
      "signal(sem, inc, device = ...)", true);
  fn(
      {TPU + "semaphore_wait", PL + "semaphore_wait"},
      +[](Interp &in, CallCtx &c) -> V {
        std::vector<V> a = c.bind(in, {"sem_or_view", "value", "*", "decrement"});
        RefV &sem = semArg(in, need(in, c, a, 0, "sem_or_view"), c.range, "the semaphore");
        if (a[2] && !in.truth(a[2], c.range, "decrement"))
          unsupported(c.range, "a semaphore wait that does not decrement");
        in.emit(std::make_unique<ast::WaitStmt>(c.range, build(*in.refTE(sem, c.range)),
                                                a[1] ? build(*in.intTE(a[1], c.range, "value"))
                                                     : nullptr));
        return none();
      },
      "wait(sem, value)", true);
  fn(
      {TPU + "semaphore_read", PL + "semaphore_read"},
      +[](Interp &in, CallCtx &c) -> V {
        std::vector<V> a = c.bind(in, {"sem_or_view"});
        RefV &sem = semArg(in, need(in, c, a, 0, "sem_or_view"), c.range, "the semaphore");
        std::string let = in.fresh(c.hint.empty() ? "value" : c.hint);
        auto read = std::make_unique<ast::CallExpr>(c.range, ast::Builtin::Read,
                                                    build(*in.refTE(sem, c.range)));
        in.emit(
            std::make_unique<ast::LetStmt>(
                c.range, std::make_unique<ast::LetDecl>(c.range, let, c.range, std::move(read))),
            false);
        return std::make_shared<TracedV>(teName(c.range, let), TKind::Int);
      },
      "let v = read(sem)", true);
  // pl.delay(nanos): the core waits; dkv checks every interleaving of the processes'
  // steps, whatever their timing, so a delay changes nothing that dkv checks.
  fn(
      {PL + "delay", TPU + "delay"},
      +[](Interp &in, CallCtx &c) -> V {
        std::vector<V> a = c.bind(in, {"nanos"});
        V n = need(in, c, a, 0, "nanos");
        if (n->kind != Kind::Traced)
          in.intTE(n, c.range, "the nanoseconds of pl.delay");
        return none();
      },
      "nothing (every interleaving is checked)", true);
  fn(
      {TPU + "get_barrier_semaphore"},
      +[](Interp &in, CallCtx &c) -> V {
        if (auto *tc = apiAs<TcMeshObj>(in.tcMesh_); tc && tc->sparse)
          unsupported(c.range, "pltpu.get_barrier_semaphore() in a plsc.ScalarSubcoreMesh "
                               "kernel: which cores and devices a SparseCore's barrier "
                               "semaphore joins is not documented (JAX's SparseCore kernels "
                               "hand off through REGULAR or DMA semaphores of their own)");
        if (!in.hasCollective_)
          fail(c.range, "python-call",
               "pltpu.get_barrier_semaphore() needs the pallas_call's "
               "compiler_params=pltpu.CompilerParams(collective_id=...)");
        auto s = std::make_shared<RefV>(Kind::Sem);
        s->name = "barrier";
        s->semKind = ast::SemKind::Barrier;
        return s;
      },
      "barrier", true);
  fn(
      {PL + "run_scoped", TPU + "run_scoped"},
      +[](Interp &in, CallCtx &c) -> V {
        if (c.args.pos.empty() || c.args.pos[0]->kind != Kind::Function)
          fail(c.range, "python-call", "pl.run_scoped takes the function to run first");
        auto &f = cast<FunctionV>(c.args.pos[0]);
        Args inner;
        std::vector<std::unique_ptr<ast::Decl>> decls;
        std::vector<std::string> paramNames;
        for (const py::Param &p : *f.params)
          paramNames.push_back(p.name);
        for (size_t i = 1; i < c.args.pos.size(); ++i) {
          std::string pn = i - 1 < paramNames.size() ? paramNames[i - 1] : "scoped";
          V bound;
          decls.push_back(
              in.scratchDecl(c.args.pos[i], in.fresh(pn), c.range, ast::Storage::Scoped, bound));
          inner.pos.push_back(bound);
        }
        for (auto &[k, spec] : c.args.kw) {
          if (k == "collective_axes") {
            // JAX's keyword, not a scratch: one allocation shared by every program that
            // differs only in its ids along those axes. Empty (JAX's default) changes
            // nothing; otherwise dkv would give each program its own.
            bool none = spec->kind == Kind::Tuple && cast<TupleV>(spec).items.empty();
            if (!none)
              unsupported(c.range, "pl.run_scoped(collective_axes=...): one scratch "
                                   "allocation shared by the programs along those axes "
                                   "is not modelled");
            continue;
          }
          V bound;
          decls.push_back(in.scratchDecl(spec, in.fresh(k), c.range, ast::Storage::Scoped, bound));
          inner.kw.emplace_back(k, bound);
        }
        auto body = std::make_unique<std::vector<ast::StmtPtr>>();
        in.pushBlock(body.get());
        V result;
        try {
          result = in.callFunction(f, std::move(inner), c.range);
        } catch (...) {
          in.popBlock();
          throw;
        }
        in.popBlock();
        in.emit(std::make_unique<ast::RunScopedStmt>(
            c.range, std::move(decls), std::make_unique<ast::Block>(f.range, std::move(*body))));
        return result;
      },
      "run_scoped(name: type, ...) { body of f }", true);
  fn(
      {TPU + "sync_copy"},
      +[](Interp &in, CallCtx &c) -> V {
        // Pallas: run_scoped(sem=DMA) { make_async_copy(src, dst, sem).start(); ....wait() }.
        std::vector<V> a = c.bind(in, {"src_ref", "dst_ref", "add"});
        noneOr(in, c, a[2], "add", "an accumulating DMA");
        RefV &src = refArg(in, need(in, c, a, 0, "src_ref"), c.range, "src_ref");
        RefV &dst = refArg(in, need(in, c, a, 1, "dst_ref"), c.range, "dst_ref");
        V sem;
        std::vector<std::unique_ptr<ast::Decl>> decls;
        SourceRange r = c.range;
        decls.push_back(in.scratchDecl(makeApi(SemTypeObj{ast::SemKind::Dma}), in.fresh("sync_sem"),
                                       r, ast::Storage::Scoped, sem));
        auto body = std::make_unique<std::vector<ast::StmtPtr>>();
        in.pushBlock(body.get());
        std::string let = in.fresh("sync");
        in.emit(std::make_unique<ast::LetStmt>(
                    r, std::make_unique<ast::LetDecl>(
                           r, let, r,
                           std::make_unique<ast::CopyExpr>(
                               r, build(*in.refTE(src, r)), build(*in.refTE(dst, r)),
                               build(*in.refTE(static_cast<RefV &>(*sem), r)), false))),
                false);
        for (ast::DmaMethod m : {ast::DmaMethod::Start, ast::DmaMethod::Wait})
          in.emit(std::make_unique<ast::DmaStmt>(r, std::make_unique<ast::NameExpr>(r, let), m));
        in.popBlock();
        in.emit(std::make_unique<ast::RunScopedStmt>(
            r, std::move(decls), std::make_unique<ast::Block>(r, std::move(*body))));
        return none();
      },
      "run_scoped(sync_sem: dma_sem) { copy, start, wait }", true);
  // Host arrays outside kernels. Inside a kernel, jnp.zeros is the catalogue's `zeros`
  // (an array of its shape and type) and jnp.ones the number 1, broadcast where it is
  // stored or combined.
  fn(
      {"jax.numpy.zeros"},
      +[](Interp &in, CallCtx &c) -> V {
        return in.inKernel_ ? catalogueCall(in, c) : hostArray(in, c);
      },
      "zeros(shape, dtype)", false);
  fn(
      {"jax.numpy.ones", "jax.numpy.empty"},
      +[](Interp &in, CallCtx &c) -> V {
        return in.inKernel_ ? integer(c.fn->name.find("ones") != std::string::npos ? 1 : 0)
                            : hostArray(in, c);
      },
      "1 (broadcast to the stored region)", false);
  fn({"numpy.zeros", "numpy.ones", "numpy.empty"}, hostArray, "host arrays", false);
  fn(
      {"jax.numpy.zeros_like", "jax.numpy.ones_like", "jax.numpy.empty_like"},
      +[](Interp &in, CallCtx &c) -> V {
        bool ones = c.fn->name.find("ones") != std::string::npos;
        if (in.inKernel_)
          return integer(ones ? 1 : 0);
        // On the host, of an array: an array of its shape and element type (or the ones
        // given), contents not kept.
        std::vector<V> a = c.bind(in, {"a", "dtype", "shape", "*", "device", "out_sharding"});
        if (auto *arr = a[0] ? dynCast<HostArrayV>(a[0]) : nullptr) {
          std::vector<int64_t> shape = arr->shape;
          if (given(a[2]))
            shape = in.shapeOf(a[2], c.range, fmt::format("the shape of {}", c.fn->name));
          ast::DType dt = given(a[1]) ? in.dtypeArg(a[1], c.range) : arr->dtype;
          auto out = std::make_shared<HostArrayV>(std::move(shape), dt);
          out->numpy = false;
          return out;
        }
        return in.opaque(fmt::format("{} of an array", c.fn->name), c.range);
      },
      "0, 1 (broadcast to the stored region)", false);
  // jnp.full(shape, v, dtype): inside a kernel the catalogue's zeros of that shape and type
  // plus v, a Python number (weak: the sum keeps the type, and its value is v in that
  // type, as JAX's full converts it); without dtype, JAX's type of v (float32, int32). On
  // the host an array of that shape and type (values not kept).
  fn(
      {"jax.numpy.full"},
      +[](Interp &in, CallCtx &c) -> V {
        std::vector<V> a = c.bind(in, {"shape", "fill_value", "dtype", "*", "device"});
        V fill = need(in, c, a, 1, "fill_value");
        std::vector<int64_t> shape =
            in.shapeOf(need(in, c, a, 0, "shape"), c.range, "the shape of jnp.full");
        bool number = (fill->kind == Kind::Int || fill->kind == Kind::Float) && !scalarOfType(fill);
        std::optional<ast::DType> dt;
        if (given(a[2]))
          dt = in.dtypeArg(a[2], c.range);
        else if (number)
          dt = fill->kind == Kind::Float ? ast::DType::F32 : ast::DType::I32;
        if (!in.inKernel_) {
          if (!dt)
            return in.opaque("jnp.full of a value that is no Python number", c.range, fill);
          return std::make_shared<HostArrayV>(std::move(shape), *dt);
        }
        if (!number || !dt)
          unsupported(c.range, fmt::format("jnp.full inside a kernel with a fill value that is a "
                                           "{} (dkv fills with a Python number)",
                                           typeName(*fill)));
        V zeros = in.computeValue(ast::ComputeOp::Zeros, {}, dt, std::nullopt, c.range, c.fn->name,
                                  {}, std::move(shape));
        return in.binop(py::BinOpKind::Add, zeros, fill, c.range);
      },
      "zeros(shape, dtype) + v", false);
  // jnp.full_like(x, v): inside a kernel the number (or per-device integer) v, broadcast
  // where it is stored, as jnp.zeros_like is 0; on the host an array of x's shape and type.
  fn(
      {"jax.numpy.full_like"},
      +[](Interp &in, CallCtx &c) -> V {
        std::vector<V> a =
            c.bind(in, {"a", "fill_value", "dtype", "shape", "*", "device", "out_sharding"});
        V fill = need(in, c, a, 1, "fill_value");
        if (in.inKernel_) {
          if (given(a[2]) || given(a[3]))
            unsupported(c.range, "jnp.full_like with a dtype or shape inside a kernel");
          auto *t = dynCast<TracedV>(fill);
          if (fill->kind == Kind::Int || fill->kind == Kind::Float || fill->kind == Kind::Bool ||
              (t && t->tk == TKind::Int))
            return fill;
          unsupported(c.range, fmt::format("jnp.full_like inside a kernel with a fill value that "
                                           "is a {} (dkv broadcasts a number or a per-device "
                                           "integer)",
                                           typeName(*fill)));
        }
        if (auto *arr = a[0] ? dynCast<HostArrayV>(a[0]) : nullptr) {
          std::vector<int64_t> shape = arr->shape;
          if (given(a[3]))
            shape = in.shapeOf(a[3], c.range, "the shape of jnp.full_like");
          ast::DType dt = given(a[2]) ? in.dtypeArg(a[2], c.range) : arr->dtype;
          return std::make_shared<HostArrayV>(std::move(shape), dt);
        }
        return in.opaque("jnp.full_like of an array", c.range);
      },
      "the fill value (broadcast to the stored region)", false);
  fn(
      {"jax.numpy.dot", "jax.numpy.matmul"},
      +[](Interp &in, CallCtx &c) -> V { return dot(in, c, false); },
      "dot(a, b, preferred_element_type = t)", false);
  fn(
      {PL + "dot"}, +[](Interp &in, CallCtx &c) -> V { return dot(in, c, true); },
      "dot(a, b, preferred_element_type = t)", false);
  fn(
      {"jax.lax.dot_general"},
      +[](Interp &in, CallCtx &c) -> V {
        if (!in.inKernel_)
          return in.opaque("lax.dot_general of arrays", c.range);
        std::vector<V> a = c.bind(in, {"lhs", "rhs", "dimension_numbers", "precision",
                                       "preferred_element_type", "out_sharding"});
        // `precision`: accepted, no effect (jnp.dot above).
        // Only the plain matmul: (((1,), (0,)), ((), ())).
        auto ints = [&](const V &v) {
          std::vector<int64_t> out;
          if (v->kind != Kind::Tuple && v->kind != Kind::List)
            return std::vector<int64_t>{-1};
          for (const V &x : in.toVector(v, c.range))
            out.push_back(x->kind == Kind::Int ? cast<IntV>(x).i : -1);
          return out;
        };
        V dn = need(in, c, a, 2, "dimension_numbers");
        bool plain = false, transposed = false;
        if (dn->kind == Kind::Tuple || dn->kind == Kind::List) {
          std::vector<V> top = in.toVector(dn, c.range);
          if (top.size() == 2 && (top[0]->kind == Kind::Tuple || top[0]->kind == Kind::List) &&
              (top[1]->kind == Kind::Tuple || top[1]->kind == Kind::List)) {
            std::vector<V> contract = in.toVector(top[0], c.range),
                           batch = in.toVector(top[1], c.range);
            plain = contract.size() == 2 && batch.size() == 2 &&
                    ints(contract[0]) == std::vector<int64_t>{1} &&
                    ints(contract[1]) == std::vector<int64_t>{0} && ints(batch[0]).empty() &&
                    ints(batch[1]).empty();
            transposed = contract.size() == 2 && batch.size() == 2 &&
                         ints(contract[0]) == std::vector<int64_t>{1} &&
                         ints(contract[1]) == std::vector<int64_t>{1} && ints(batch[0]).empty() &&
                         ints(batch[1]).empty();
          }
        }
        if (transposed)
          if (V v = dotTransposed(in, need(in, c, a, 0, "lhs"), need(in, c, a, 1, "rhs"),
                                  preferred(in, a[4], c.range), c.range))
            return v;
        if (!plain)
          unsupported(c.range,
                      "lax.dot_general with dimension numbers other than (((1,), (0,)), ((), "
                      "())) (a plain 2-D matmul) or (((1,), (1,)), ((), ())) on 2-D values "
                      "whose shapes dkv knows");
        return in.computeValue(ast::ComputeOp::Dot,
                               {need(in, c, a, 0, "lhs"), need(in, c, a, 1, "rhs")},
                               preferred(in, a[4], c.range), std::nullopt, c.range, c.fn->name);
      },
      "dot(a, b)", false);
  fn(
      {"jax.numpy.astype", "jax.lax.convert_element_type"},
      +[](Interp &in, CallCtx &c) -> V {
        std::vector<V> a = c.bind(in, {"x", "dtype"});
        if (!in.inKernel_)
          return in.opaque(fmt::format("{} of an array", c.fn->name), c.range);
        return in.computeValue(ast::ComputeOp::AsType, {need(in, c, a, 0, "x")},
                               in.dtypeArg(need(in, c, a, 1, "dtype"), c.range), std::nullopt,
                               c.range, c.fn->name);
      },
      "astype(x, t)", false);
  fn(
      {"jax.numpy.sum"},
      +[](Interp &in, CallCtx &c) -> V {
        if (!in.inKernel_)
          return in.opaque("jnp.sum of an array", c.range);
        return reduction(in, c, ast::ComputeOp::Sum);
      },
      "sum(x, axis = k)", false);
  fn(
      {"jax.numpy.max", "jax.numpy.amax"},
      +[](Interp &in, CallCtx &c) -> V {
        if (!in.inKernel_)
          return in.opaque("jnp.max of an array", c.range);
        return reduction(in, c, ast::ComputeOp::ReduceMax);
      },
      "max(x, axis = k)", false);
  fn(
      {"jax.numpy.min", "jax.numpy.amin"},
      +[](Interp &in, CallCtx &c) -> V {
        if (!in.inKernel_)
          return in.opaque("jnp.min of an array", c.range);
        return reduction(in, c, ast::ComputeOp::ReduceMin);
      },
      "min(x, axis = k)", false);
  // The catalogue's other Python spellings (jnp.maximum, jax.nn.gelu, jnp.add,
  // jnp.reshape, ...): one row each.
  for (const prim::OpRecord &op : prim::records()) {
    for (const prim::PySpelling &s : prim::pythonSpellings(op.id)) {
      std::string name(s.name);
      for (const auto &[alias, prefix] : {std::pair{"pltpu.", TPU}, std::pair{"pl.", PL},
                                          std::pair{"jnp.", std::string("jax.numpy.")},
                                          std::pair{"lax.", std::string("jax.lax.")}})
        if (name.rfind(alias, 0) == 0) {
          name = prefix + name.substr(std::string_view(alias).size());
          break;
        }
      if (name[0] != '.' && !reg.find(name))
        fn({name}, catalogueCall, std::string(op.dk.empty() ? op.dkOperator : prim::name(op.id)),
           false);
    }
  }
}

/// The methods of kernel values: a DMA descriptor's start/wait, a loaded value's astype.
const BuiltinFn *kernelMethod(const V &self, const std::string &name) {
  // A descriptor's methods are spelled as the kernel language's DMA statements.
  if (self->kind == Kind::Desc)
    for (ast::DmaMethod m : {ast::DmaMethod::Start, ast::DmaMethod::Wait, ast::DmaMethod::WaitSend,
                             ast::DmaMethod::WaitRecv})
      if (ast::toString(m) == name)
        return &descMethod(m);
  // A loaded value's methods are the catalogue's (`.astype`: prim/Ops.def).
  if (isTracedValue(self) && prim::findOpByPythonName("." + name) == prim::Op::AsType)
    return &valueAstype();
  if (isTracedValue(self) && prim::findOpByPythonName("." + name) == prim::Op::Reshape)
    return &valueReshape();
  return nullptr;
}

// `x[i, a:b]` of a kernel value of known shape, as NumPy indexes: static ints and slices
// of step 1 (negative bounds from the end, clamped as `slice.indices` clamps). Along each
// axis the part [a, b) is taken through the catalogue: `split` into parts of
// g = gcd(a, b, extent) elements, the parts [a/g, b/g) joined by `concatenate`; an int
// index is a part of one element whose axis a final `reshape` drops. Traced indices,
// steps, `None` and array indices are refused (nothing in the catalogue reads them).
V Interp::indexValue(const V &x, const V &key, SourceRange r) {
  const std::string api = "indexing a loaded value";
  const auto &t = cast<TracedV>(x);
  std::optional<prim::ValueType> vt = valueType(x);
  bool known = t.tk == TKind::Value && vt && vt->kind == prim::ValueType::Kind::Array;
  for (int64_t d : known ? vt->shape : std::vector<int64_t>{})
    known = known && d >= 0;
  if (!known)
    unsupported(r, "indexing a loaded value of unknown shape (index the ref instead: `x_ref[i]`)");
  const std::vector<int64_t> &shape = vt->shape;
  std::vector<V> items = key->kind == Kind::Tuple ? cast<TupleV>(key).items : std::vector<V>{key};
  size_t named = 0, ellipses = 0;
  for (const V &it : items) {
    if (it->kind == Kind::Ellipsis)
      ++ellipses;
    else if (it->kind == Kind::None)
      unsupported(r, "`None` (jnp.newaxis) in an index of a loaded value");
    else if (it->kind == Kind::Traced)
      unsupported(r, "a traced index into a loaded value (index the ref instead: `x_ref[i]`)");
    else if (it->kind != Kind::Int && it->kind != Kind::Bool && it->kind != Kind::Slice)
      unsupported(r, fmt::format("a {} index into a loaded value", typeName(*it)));
    else
      ++named;
  }
  if (ellipses > 1)
    raise("IndexError", "an index can only have a single ellipsis ('...')", r);
  if (named > shape.size())
    raise("IndexError",
          fmt::format("Too many indices: {}-dimensional array indexed with {} regular indices.",
                      shape.size(), named),
          r);
  // One [a, b) per axis, and whether an int index drops it.
  std::vector<std::pair<int64_t, int64_t>> bounds;
  std::vector<bool> drop;
  for (const V &it : items) {
    if (it->kind == Kind::Ellipsis) {
      for (size_t k = 0; k < shape.size() - named; ++k)
        bounds.emplace_back(0, shape[bounds.size()]), drop.push_back(false);
      continue;
    }
    int64_t extent = shape[bounds.size()];
    if (it->kind == Kind::Slice) {
      const auto &sl = cast<SliceV>(it);
      auto bound = [&](const V &bv, int64_t dflt) -> int64_t {
        if (bv->kind == Kind::None)
          return dflt;
        if (bv->kind == Kind::Traced)
          unsupported(r, "a traced slice bound on a loaded value (slice the ref instead)");
        int64_t v = toIndex(bv, r, "a slice bound");
        if (v < 0)
          v += extent;
        return std::clamp<int64_t>(v, 0, extent);
      };
      if (sl.step->kind != Kind::None &&
          !(sl.step->kind == Kind::Int && cast<IntV>(sl.step).i == 1))
        unsupported(r, "a slice with a step on a loaded value");
      int64_t a = bound(sl.lower, 0);
      int64_t b = bound(sl.upper, extent);
      if (b <= a)
        unsupported(r, "an empty slice of a loaded value (the model has no empty arrays)");
      bounds.emplace_back(a, b), drop.push_back(false);
      continue;
    }
    int64_t i = toIndex(it, r, "an index");
    if (i < -extent || i >= extent)
      raise("IndexError",
            fmt::format("index {} is out of bounds for axis {} with size {}", i, bounds.size(),
                        extent),
            r);
    if (i < 0)
      i += extent;
    bounds.emplace_back(i, i + 1), drop.push_back(true);
  }
  while (bounds.size() < shape.size())
    bounds.emplace_back(0, shape[bounds.size()]), drop.push_back(false);
  V cur = x;
  std::vector<int64_t> kept;
  bool dropped = false;
  for (size_t k = 0; k < shape.size(); ++k) {
    auto [a, b] = bounds[k];
    if (drop[k])
      dropped = true;
    else
      kept.push_back(b - a);
    if (a == 0 && b == shape[k])
      continue;
    int64_t g = std::gcd(std::gcd(a, b), shape[k]);
    V whole = computeValue(ast::ComputeOp::Split, {cur}, std::nullopt, static_cast<int64_t>(k), r,
                           api, {}, {shape[k] / g});
    std::vector<V> parts = splitLets(*this, whole, "part", r, api);
    std::vector<V> picked(parts.begin() + a / g, parts.begin() + b / g);
    cur = picked.size() == 1 ? picked[0]
                             : computeValue(ast::ComputeOp::Concatenate, std::move(picked),
                                            std::nullopt, static_cast<int64_t>(k), r, api);
  }
  if (dropped)
    cur =
        computeValue(ast::ComputeOp::Reshape, {cur}, std::nullopt, std::nullopt, r, api, {}, kept);
  return cur;
}

} // namespace dkv::pytrace

namespace dkv::pytrace {

TE Interp::snapshot(const TracedV &t, const std::vector<int64_t> &shape, ast::DType dtype,
                    SourceRange r) {
  const LoadSpan &s = t.span;
  // One time of loading (no operation between its loads), in a block still open.
  if (!s.any() || s.lo != s.hi || s.block == UINT64_MAX || s.lo >= writeAt_.size() ||
      s.depth == 0 || s.depth > blocks_.size() || blockIds_[s.depth - 1] != s.block)
    return nullptr;
  // The first operation after the loads: the snapshot goes right before it, in the
  // innermost block of its place that is still open (and at least as deep as the loads:
  // the value may name what the load's block declares).
  const std::vector<std::pair<uint64_t, size_t>> &path = writeAt_[s.lo];
  size_t level = 0;
  bool found = false;
  for (size_t j = 0; j < path.size() && j < blocks_.size() && path[j].first == blockIds_[j]; ++j)
    level = j, found = true;
  if (!found || level + 1 < s.depth)
    return nullptr;
  if (shape.empty())
    return nullptr;
  const SourceRange at = t.te->range;
  const std::string name = fresh("snapshot");
  std::vector<ast::ExprPtr> dims;
  for (int64_t d : shape)
    dims.push_back(std::make_unique<ast::IntLiteral>(at, d));
  snapshotScratch_.push_back(
      std::make_unique<ast::BufferDecl>(at, name, at, ast::Storage::Scratch, ast::Direction::None,
                                        ast::MemSpace::Vmem, dtype, std::move(dims)));
  auto whole = std::make_shared<TExpr>();
  whole->k = TExpr::K::Index, whole->range = at, whole->text = name, whole->ellipsis = true;
  // `name[...] = value` where the value was loaded; later places there move one on.
  std::vector<ast::StmtPtr> &block = *blocks_[level];
  const size_t index = std::min(path[level].second, block.size());
  block.insert(block.begin() + static_cast<std::ptrdiff_t>(index),
               std::make_unique<ast::StoreStmt>(at, build(*whole), false, build(*t.te)));
  for (auto &p : writeAt_)
    for (auto &[id, i] : p)
      if (id == blockIds_[level] && i >= index)
        ++i;
  if (++kernelStmts_ > kMaxKernelStmts)
    fail(r, "python-overflow", "the kernel traces to too many statements");
  return whole;
}

} // namespace dkv::pytrace
