// `dkv check FILE --devices A..` (docs/parametric.md): the fragment check on the
// kernel's AST, the window decision on one instance, the smaller instances one by one.
#include "driver/Parametric.h"

#include "driver/Commands.h"
#include "frontend/AST.h"
#include "report/Render.h"
#include "semantics/Closure.h"
#include "support/Invariant.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <functional>
#include <map>
#include <numeric>
#include <ostream>
#include <set>
#include <sstream>
#include <variant>

namespace dkv::driver {

namespace {

using namespace ast;

/// What an integer expression of the kernel is, as far as the mesh size N, the device
/// index and (in the fragment UG) the grid step go: independent of all (with its value
/// when known), `me + c`, `N + c`, a device id `(me + c) % N`, `step + c`, or anything
/// else (dirty).
struct Abs {
  /// Affine: a * me + b * step + offset + n * N; ModN: (a * me + b * step + offset) mod N;
  /// Periodic: alpha + beta * ((b * step + offset) mod period). What no rule of the
  /// fragment takes: they are dirty there, and forms of positions (IndexForm) here.
  enum class Kind { Clean, Me, Size, Device, Step, Dirty, Affine, ModN, Periodic };
  Kind kind = Kind::Clean;
  int64_t offset = 0;
  std::optional<int64_t> value; ///< Clean: when known
  /// Dirty: what it depends on (for the reason); Me: whether a multiple of N was dropped
  /// from the offset (`me + N - 1` is me - 1 modulo N, not as a number).
  bool size = false, me = false, step = false;
  /// Me: the value is exactly me + offset + n * N (`me + N - 1`: offset -1, n 1).
  int64_t n = 0;
  int64_t a = 0, b = 0;                    ///< Affine, ModN (a, b), Periodic (b)
  int64_t alpha = 0, beta = 0, period = 0; ///< Periodic
};

/// An affine value a * me + b * step + c + n * N, when `x` is one.
struct Lin {
  int64_t a = 0, b = 0, c = 0, n = 0;
};
std::optional<Lin> linear(const Abs &x) {
  switch (x.kind) {
  case Abs::Kind::Clean:
    if (x.value)
      return Lin{0, 0, *x.value, 0};
    return std::nullopt;
  case Abs::Kind::Me:
    return Lin{1, 0, x.offset, x.n};
  case Abs::Kind::Step:
    return Lin{0, 1, x.offset, 0};
  case Abs::Kind::Size:
    return Lin{0, 0, x.offset, 1};
  case Abs::Kind::Affine:
    return Lin{x.a, x.b, x.offset, x.n};
  default:
    return std::nullopt;
  }
}
/// The Abs of an affine value: the fragment's own kinds where it is one of them.
Abs fromLinear(const Lin &l) {
  if (l.a == 0 && l.b == 0 && l.n == 0)
    return {Abs::Kind::Clean, 0, l.c};
  if (l.a == 1 && l.b == 0) {
    Abs out{Abs::Kind::Me, l.c, {}, /*size=*/l.n != 0};
    out.n = l.n;
    return out;
  }
  if (l.a == 0 && l.b == 1 && l.n == 0)
    return {Abs::Kind::Step, l.c, {}};
  if (l.a == 0 && l.b == 0 && l.n == 1)
    return {Abs::Kind::Size, l.c, {}};
  Abs out{Abs::Kind::Affine, l.c, {}, l.n != 0, l.a != 0, l.b != 0};
  out.a = l.a;
  out.b = l.b;
  out.n = l.n;
  return out;
}

/// A Me value with its multiple of N (`size` set when there is one).
Abs meValue(int64_t offset, int64_t n) {
  Abs a{Abs::Kind::Me, offset, {}, /*size=*/n != 0};
  a.n = n;
  return a;
}

/// The walk of docs/parametric.md "The fragment": every expression must be clean,
/// except the device ids of remote copies and signals, which must be `(me + c) % N`.
class Walk {
public:
  Walk(const ParamDecl *size, const AxisDecl *axis) : size_(size), axis_(axis) {}

  /// The fragment UG: program_id(0) is the step of a grid axis of N + g steps. Positions
  /// in refs and stored values may then depend on anything (they decide races, which the
  /// lockstep argument does not claim), the sizes of copied regions may not.
  void growing(int64_t g) {
    growing_ = true;
    g_ = g;
  }
  int64_t firstSteps() const { return first_; }
  int64_t lastSteps() const { return last_; }

  bool ok() const { return reason_.empty(); }
  const std::string &reason() const { return reason_; }
  int64_t reach() const { return reach_; }

  void fail(const Node &at, const std::string &what) {
    if (!reason_.empty())
      return;
    reason_ =
        fmt::format("{} (line {}, column {})", what, at.range().begin.line, at.range().begin.col);
  }

  Abs expr(const Expr &e) {
    if (const auto *lit = dynCast<IntLiteral>(&e))
      return {Abs::Kind::Clean, 0, lit->value()};
    if (isa<FloatLiteral>(&e) || isa<BoolLiteral>(&e))
      return {};
    if (isa<ErrorExpr>(&e))
      return dirty();
    if (const auto *name = dynCast<NameExpr>(&e))
      return nameValue(*name);
    if (const auto *u = dynCast<UnaryExpr>(&e)) {
      Abs a = expr(u->operand());
      if (a.kind != Abs::Kind::Clean)
        return dirty(a);
      if (u->op() == UnaryOp::Neg && a.value)
        return {Abs::Kind::Clean, 0, -*a.value};
      return {};
    }
    if (const auto *b = dynCast<BinaryExpr>(&e))
      return binary(*b);
    if (const auto *c = dynCast<CallExpr>(&e)) {
      if (c->builtin() == Builtin::AxisIndex)
        return {Abs::Kind::Me, 0, {}};
      if (c->builtin() == Builtin::AxisSize)
        return {Abs::Kind::Size, 0, {}};
      if (c->builtin() == Builtin::Read) {
        // A run-time value (stored only, docs/language.md); its semaphore as any other.
        semaphore(c->arg(), "a read's semaphore");
        return {};
      }
      const Abs arg = expr(c->arg());
      const bool axisZero = arg.kind == Abs::Kind::Clean && arg.value == 0;
      if (growing_ && axisZero && c->builtin() == Builtin::ProgramId)
        return {Abs::Kind::Step, 0, {}};
      if (growing_ && axisZero && c->builtin() == Builtin::NumPrograms)
        return {Abs::Kind::Size, g_, {}};
      clean(c->arg(), "a builtin's argument");
      return {};
    }
    if (const auto *s = dynCast<SelectExpr>(&e)) {
      clean(s->cond(), "a select");
      clean(s->ifTrue(), "a select");
      clean(s->ifFalse(), "a select");
      return {};
    }
    if (const auto *s = dynCast<SelectRefExpr>(&e)) {
      clean(s->index(), "a select_ref");
      for (const ExprPtr &choice : s->choices())
        clean(*choice, "a select_ref");
      return {};
    }
    if (const auto *ix = dynCast<IndexExpr>(&e)) {
      expr(ix->base());
      for (const Subscript &sub : ix->subscripts()) {
        if (sub.lo)
          clean(*sub.lo, "a slice or index");
        if (sub.hi)
          clean(*sub.hi, "a slice or index");
      }
      return {};
    }
    if (const auto *t = dynCast<TupleExpr>(&e)) {
      for (const ExprPtr &x : t->elements())
        clean(*x, "a tuple");
      return {};
    }
    if (const auto *m = dynCast<MappingExpr>(&e)) {
      fail(*m, "a device mapping {axis: ...} (the fragment takes one-axis device ids)");
      return dirty();
    }
    if (const auto *c = dynCast<CopyExpr>(&e)) {
      region(c->src(), "a copy's source");
      region(c->dst(), "a copy's destination");
      recordCopy(c->src(), c->dst());
      semaphore(c->sem(), "a copy's semaphore");
      return {};
    }
    if (const auto *r = dynCast<RemoteCopyExpr>(&e)) {
      region(r->src(), "a remote copy's source");
      region(r->dst(), "a remote copy's destination");
      recordCopy(r->src(), r->dst());
      semaphore(r->sendSem(), "a remote copy's send semaphore");
      semaphore(r->recvSem(), "a remote copy's receive semaphore");
      device(r->device());
      return {};
    }
    if (const auto *c = dynCast<ComputeExpr>(&e)) {
      for (const ExprPtr &x : c->operands())
        clean(*x, "a computed value");
      if (c->axis())
        clean(*c->axis(), "a computed value");
      for (const ExprPtr &x : c->dims())
        clean(*x, "a computed value");
      return {};
    }
    fail(e, "an expression the fragment does not cover");
    return dirty();
  }

  /// `e` must not depend on the mesh size or the device index.
  void clean(const Expr &e, const char *what) {
    const Abs a = expr(e);
    if (lenient_ > 0)
      return;
    switch (a.kind) {
    case Abs::Kind::Clean:
      return;
    case Abs::Kind::Step:
      return fail(e, fmt::format("the grid step decides {}", what));
    case Abs::Kind::Me:
      return fail(e, fmt::format("the device index (axis_index) decides {}", what));
    case Abs::Kind::Size:
      return fail(e, fmt::format("the mesh size decides {}", what));
    case Abs::Kind::Device:
      return fail(e, fmt::format("a device id is used as a number in {}", what));
    case Abs::Kind::Dirty:
    case Abs::Kind::Affine:
    case Abs::Kind::ModN:
    case Abs::Kind::Periodic:
      if (a.step && !a.size && !a.me)
        return fail(e, fmt::format("the grid step decides {}", what));
      return fail(e, a.size && a.me
                         ? fmt::format("the mesh size and the device index decide {}", what)
                     : a.me ? fmt::format("the device index (axis_index) decides {}", what)
                            : fmt::format("the mesh size decides {}", what));
    }
  }

  /// A device id: must be `(axis_index + c) % N`.
  void device(const Expr &e) {
    // On a one-axis mesh a device id of one coordinate `(d,)` is the device d.
    if (const auto *t = dynCast<TupleExpr>(&e); t && t->elements().size() == 1)
      return device(*t->elements().front());
    const Abs a = expr(e);
    // axis_index itself is (axis_index + 0) % N: the device's own id.
    if (a.kind == Abs::Kind::Me && a.offset == 0 && !a.size)
      return;
    if (a.kind != Abs::Kind::Device)
      return fail(e, "a device id that is not (axis_index + c) % N, a fixed offset on the ring");
    reach_ = std::max(reach_, a.offset < 0 ? -a.offset : a.offset);
  }

  void decl(const Decl &d) {
    if (const auto *b = dynCast<BufferDecl>(&d)) {
      if (b->isTable())
        fail(*b, "a table (its contents are per device or per instance)");
      // In UG a shape may grow with N (an all-gather's output): copied regions must
      // not (region()).
      for (const ExprPtr &x : b->shape())
        growing_ ? sizeOnly(*x, "a buffer's shape") : clean(*x, "a buffer's shape");
    } else if (const auto *s = dynCast<SemDecl>(&d)) {
      for (const ExprPtr &x : s->dims())
        growing_ ? sizeOnly(*x, "a semaphore array's size") : clean(*x, "a semaphore array's size");
    } else if (const auto *v = dynCast<VarDecl>(&d)) {
      for (const ExprPtr &x : v->dims())
        clean(*x, "a variable's shape");
      if (v->init())
        clean(*v->init(), "a variable");
    }
  }

  void block(const Block &b) {
    for (const StmtPtr &s : b.stmts())
      stmt(*s);
  }

  void stmt(const Stmt &s) {
    const auto &at = s.range().begin;
    here_ = {at.file, at.line, at.col, at.inlined};
    if (const auto *x = dynCast<ScratchStmt>(&s)) {
      for (const auto &d : x->decls())
        decl(*d);
    } else if (const auto *x = dynCast<RunScopedStmt>(&s)) {
      if (racesOutside_.empty())
        racesOutside_ = fmt::format("run_scoped (line {}): scoped buffers and semaphores",
                                    x->range().begin.line);
      for (const auto &d : x->decls())
        decl(*d);
      block(x->body());
    } else if (const auto *x = dynCast<LetStmt>(&s)) {
      lets_[&x->decl()] = expr(x->decl().init());
      if (growing_ && !forms_.count(here_)) {
        // A value let is stored where it is made: its reads.
        StmtForms f;
        f.regions.push_back({});
        reads(x->decl().init(), f.regions);
        forms_[here_] = std::move(f);
      }
    } else if (const auto *x = dynCast<VarStmt>(&s)) {
      for (const auto &d : x->decls())
        decl(*d);
    } else if (const auto *x = dynCast<IfStmt>(&s)) {
      for (const IfStmt::Branch &b : x->branches()) {
        condition(*b.cond);
        block(*b.body);
      }
      if (x->elseBody())
        block(*x->elseBody());
    } else if (const auto *x = dynCast<ForStmt>(&s)) {
      clean(x->lo(), "a loop's bounds");
      clean(x->hi(), "a loop's bounds");
      block(x->body());
    } else if (const auto *x = dynCast<StoreStmt>(&s)) {
      // What is stored where decides races and values, not the synchronisation: free
      // in UG (whose argument claims no race freedom).
      if (growing_)
        ++lenient_;
      clean(x->target(), "a store");
      clean(x->value(), "a store");
      if (growing_) {
        StmtForms f;
        f.regions.push_back(regionForm(x->target()));
        if (x->accumulate())
          f.regions.push_back(regionForm(x->target()));
        reads(x->value(), f.regions);
        forms_[here_] = std::move(f);
        --lenient_;
      }
    } else if (const auto *x = dynCast<DmaStmt>(&s)) {
      clean(x->descriptor(), "a dma");
      if (x->priority())
        clean(*x->priority(), "a dma's priority");
    } else if (const auto *x = dynCast<SignalStmt>(&s)) {
      semaphore(x->sem(), "a signal's semaphore");
      if (x->inc())
        clean(*x->inc(), "a signal's amount");
      if (x->coreIndex())
        fail(*x->coreIndex(), "a signal to a core (the fragment has one device per ring place)");
      if (x->device())
        device(*x->device());
    } else if (const auto *x = dynCast<WaitStmt>(&s)) {
      semaphore(x->sem(), "a wait's semaphore");
      if (x->value())
        clean(*x->value(), "a wait's amount");
    } else if (isa<EmitPipelineStmt>(&s)) {
      fail(s, "emit_pipeline (not covered by the fragment)");
    } else {
      fail(s, "a statement the fragment does not cover");
    }
  }

  /// A condition: clean, or (UG) comparisons of `step + a` with a constant or with
  /// `N + k`, combined with `and`, `or`, `not` and clean conditions. Each comparison
  /// makes the steps up to its constant (or from its N + k on) a class of their own.
  void condition(const Expr &e) {
    if (!growing_)
      return clean(e, "a condition");
    if (const auto *u = dynCast<UnaryExpr>(&e); u && u->op() == UnaryOp::Not)
      return condition(u->operand());
    // A `let` of a condition (`let is_start = step == 0 and phase == 0`) is its
    // definition: the step and N do not change within the kernel.
    if (const auto *name = dynCast<NameExpr>(&e))
      if (const auto *l = dynCast<LetDecl>(name->decl()))
        return condition(l->init());
    if (const auto *b = dynCast<BinaryExpr>(&e)) {
      if (b->op() == BinaryOp::And || b->op() == BinaryOp::Or) {
        condition(b->lhs());
        condition(b->rhs());
        return;
      }
      const bool compares = b->op() == BinaryOp::Eq || b->op() == BinaryOp::Ne ||
                            b->op() == BinaryOp::Lt || b->op() == BinaryOp::Le ||
                            b->op() == BinaryOp::Gt || b->op() == BinaryOp::Ge;
      if (compares) {
        const Abs l = expr(b->lhs()), r = expr(b->rhs());
        const Abs *step = l.kind == Abs::Kind::Step ? &l : r.kind == Abs::Kind::Step ? &r : nullptr;
        const Abs *other = step == &l ? &r : &l;
        if (step && other->kind == Abs::Kind::Clean && other->value) {
          // step + a OP T: steps above T - a all alike.
          first_ = std::max(first_, *other->value - step->offset + 1);
          return;
        }
        if (step && other->kind == Abs::Kind::Size) {
          // step + a OP N + k: steps below N + k - a all alike; the grid ends at N + g.
          last_ = std::max(last_, g_ - (other->offset - step->offset));
          return;
        }
      }
    }
    clean(e, "a condition");
  }

  /// A semaphore operand: clean, or (UG) an element of a semaphore array at exactly the
  /// step (a semaphore per step, as an all-gather's receive semaphores).
  void semaphore(const Expr &e, const char *what) {
    if (const auto *ix = dynCast<IndexExpr>(&e); growing_ && ix && ix->subscripts().size() == 1) {
      const Subscript &sub = ix->subscripts().front();
      if (sub.kind == Subscript::Kind::Index && sub.lo) {
        const Abs a = expr(*sub.lo);
        if (a.kind == Abs::Kind::Clean)
          return;
        if (a.kind == Abs::Kind::Step && a.offset == 0) {
          // Every step has its element: the array has N + c >= N + g of them.
          const auto *sems = dynCast<SemDecl>(ix->base().decl());
          const Abs size = sems && sems->dims().size() == 1 ? expr(*sems->dims().front()) : Abs{};
          if (size.kind == Abs::Kind::Size && size.offset >= g_)
            return;
          return fail(e, fmt::format("{} indexed by the step in an array of fewer than N + {} "
                                     "semaphores",
                                     what, g_));
        }
        return fail(*sub.lo, fmt::format("an index of {} other than a fixed one or the grid "
                                         "step",
                                         what));
      }
    }
    clean(e, what);
  }

  /// A copied region (UG): its position may depend on anything, its size (slice bounds,
  /// and the buffer's dimensions it takes whole) on nothing: a step's DMAs then carry the
  /// same units at every N.
  void region(const Expr &e, const char *what) {
    if (!growing_)
      return clean(e, what);
    const auto *ix = dynCast<IndexExpr>(&e);
    const NameExpr *base = ix ? &ix->base() : dynCast<NameExpr>(&e);
    if (!base)
      return clean(e, what);
    const auto *buffer = dynCast<BufferDecl>(base->decl());
    if (!buffer)
      return clean(e, what); // its size is not known here: everything fixed

    const size_t given = ix ? ix->subscripts().size() : 0;
    for (size_t i = 0; i < buffer->shape().size(); ++i) {
      const Subscript *sub = i < given ? &ix->subscripts()[i] : nullptr;
      if (sub && sub->kind == Subscript::Kind::Index) {
        ++lenient_;
        if (sub->lo)
          expr(*sub->lo);
        --lenient_;
        continue;
      }
      if (sub && sub->kind == Subscript::Kind::Range) {
        if (sub->lo)
          clean(*sub->lo, fmt::format("the size of {}", what).c_str());
        if (sub->hi) {
          clean(*sub->hi, fmt::format("the size of {}", what).c_str());
          continue;
        }
      }
      if (expr(*buffer->shape()[i]).kind != Abs::Kind::Clean)
        return fail(e, fmt::format("the mesh size decides the size of {}", what));
    }
  }

  /// A size in a declaration (UG): it may grow with N (what a copied region takes whole
  /// of it is checked by region(), a semaphore array indexed by the step by
  /// semaphore()), but not depend on the device or the step.
  void sizeOnly(const Expr &e, const char *what) {
    const Abs a = expr(e);
    const bool device = a.kind == Abs::Kind::Me || a.kind == Abs::Kind::Device || a.me;
    const bool step = a.kind == Abs::Kind::Step || a.step;
    if (device || step)
      clean(e, what);
  }

  std::map<FormKey, StmtForms> takeForms() { return std::move(forms_); }
  const std::string &racesOutside() const { return racesOutside_; }

private:
  void recordCopy(const Expr &src, const Expr &dst) {
    if (!growing_)
      return;
    StmtForms f;
    f.copy = true;
    f.regions.push_back(regionForm(src));
    f.regions.push_back(regionForm(dst));
    forms_[here_] = std::move(f);
  }

  /// The refs a value reads, in the order of the expression (every region of a buffer).
  void reads(const Expr &e, std::vector<RegionForm> &into) {
    const Expr *base = &e;
    if (const auto *ix = dynCast<IndexExpr>(&e))
      base = &ix->base();
    if (const auto *name = dynCast<NameExpr>(base); name && dynCast<BufferDecl>(name->decl())) {
      into.push_back(regionForm(e));
      if (const auto *ix = dynCast<IndexExpr>(&e))
        for (const Subscript &sub : ix->subscripts())
          for (const ExprPtr *x : {&sub.lo, &sub.hi})
            if (*x)
              reads(**x, into);
      return;
    }
    if (const auto *u = dynCast<UnaryExpr>(&e))
      return reads(u->operand(), into);
    if (const auto *b = dynCast<BinaryExpr>(&e)) {
      reads(b->lhs(), into);
      return reads(b->rhs(), into);
    }
    if (const auto *c = dynCast<CallExpr>(&e))
      return reads(c->arg(), into);
    if (const auto *s = dynCast<SelectExpr>(&e)) {
      reads(s->cond(), into);
      reads(s->ifTrue(), into);
      return reads(s->ifFalse(), into);
    }
    if (const auto *t = dynCast<TupleExpr>(&e)) {
      for (const ExprPtr &x : t->elements())
        reads(*x, into);
      return;
    }
    if (const auto *c = dynCast<ComputeExpr>(&e)) {
      for (const ExprPtr &x : c->operands())
        reads(*x, into);
      return;
    }
    if (const auto *name = dynCast<NameExpr>(&e))
      if (const auto *l = dynCast<LetDecl>(name->decl()))
        return reads(l->init(), into);
    if (isa<IntLiteral>(&e) || isa<FloatLiteral>(&e) || isa<BoolLiteral>(&e) || isa<NameExpr>(&e))
      return;
    // Anything else: a read the forms do not follow (its pairs may overlap).
    into.push_back({});
  }

  IndexForm indexForm(const Expr &e) {
    ++lenient_;
    const Abs a = expr(e);
    --lenient_;
    using K = IndexForm::Kind;
    IndexForm f;
    switch (a.kind) {
    case Abs::Kind::Clean:
      f.kind = a.value ? K::Known : K::Clean;
      f.c = a.value.value_or(0);
      break;
    case Abs::Kind::Device:
      f = {K::Mod, 1, 0, a.offset};
      break;
    case Abs::Kind::Me:
      if (a.offset == 0 && a.n == 0)
        f = {K::Mod, 1, 0, 0}; // 0 <= me < N: me mod N
      break;
    case Abs::Kind::Step:
      f = {K::Exact, 0, 1, a.offset};
      break;
    case Abs::Kind::Affine:
      if (a.a == 0 && a.n == 0)
        f = {K::Exact, 0, a.b, a.offset};
      break;
    case Abs::Kind::ModN:
      f = {K::Mod, a.a, a.b, a.offset};
      break;
    case Abs::Kind::Periodic:
      f = {K::Periodic, 0, a.b, a.offset, a.alpha, a.beta, a.period};
      break;
    default:
      break;
    }
    return f;
  }

  RegionForm regionForm(const Expr &e) {
    RegionForm out;
    const auto *ix = dynCast<IndexExpr>(&e);
    const auto *base = ix ? dynCast<NameExpr>(&ix->base()) : dynCast<NameExpr>(&e);
    const auto *buffer = base ? dynCast<BufferDecl>(base->decl()) : nullptr;
    if (!buffer)
      return out;
    const auto &at = buffer->range().begin;
    out.known = true;
    out.buffer = {at.file, at.line, at.col, at.inlined};
    const size_t given = ix ? ix->subscripts().size() : 0;
    for (size_t i = 0; i < buffer->shape().size(); ++i) {
      const Subscript *sub = i < given ? &ix->subscripts()[i] : nullptr;
      DimForm d;
      if (sub && sub->kind == Subscript::Kind::Index && sub->lo) {
        d.at = indexForm(*sub->lo);
      } else {
        d.index = false;
        const bool range = sub && sub->kind == Subscript::Kind::Range;
        d.lo = range && sub->lo ? indexForm(*sub->lo) : IndexForm{IndexForm::Kind::Known};
        d.hi = range && sub->hi ? indexForm(*sub->hi) : indexForm(*buffer->shape()[i]);
      }
      out.dims.push_back(d);
    }
    return out;
  }

  /// Something that depends on what `a` and `b` depend on, in no form the fragment has.
  static Abs dirty(const Abs &a = {}, const Abs &b = {}) {
    auto size = [](const Abs &x) {
      return x.kind == Abs::Kind::Size || x.kind == Abs::Kind::Device || x.size;
    };
    auto me = [](const Abs &x) {
      return x.kind == Abs::Kind::Me || x.kind == Abs::Kind::Device || x.me;
    };
    auto step = [](const Abs &x) { return x.kind == Abs::Kind::Step || x.step; };
    Abs out{Abs::Kind::Dirty, 0, {}};
    out.size = size(a) || size(b);
    out.me = me(a) || me(b);
    out.step = step(a) || step(b);
    return out;
  }

  Abs nameValue(const NameExpr &name) {
    const Decl *d = name.decl();
    if (!d)
      return {};
    if (const auto *p = dynCast<ParamDecl>(d)) {
      if (p == size_)
        return {Abs::Kind::Size, 0, {}};
      return {Abs::Kind::Clean, 0, p->value()};
    }
    if (const auto *c = dynCast<ConstDecl>(d)) {
      auto [it, fresh] = consts_.emplace(c, Abs{});
      if (fresh)
        it->second = expr(c->init());
      Abs a = it->second;
      if (a.kind == Abs::Kind::Clean)
        a.value = c->value();
      return a;
    }
    if (const auto *l = dynCast<LetDecl>(d)) {
      auto it = lets_.find(l);
      return it == lets_.end() ? expr(l->init()) : it->second;
    }
    return {}; // loop variables, buffers, semaphores, variables, axes
  }

  Abs binary(const BinaryExpr &b) {
    const Abs l = expr(b.lhs()), r = expr(b.rhs());
    using K = Abs::Kind;
    const bool cleanBoth = l.kind == K::Clean && r.kind == K::Clean;
    if (cleanBoth) {
      Abs out;
      if (l.value && r.value) {
        if (b.op() == BinaryOp::Add)
          out.value = *l.value + *r.value;
        else if (b.op() == BinaryOp::Sub)
          out.value = *l.value - *r.value;
        else if (b.op() == BinaryOp::Mul)
          out.value = *l.value * *r.value;
      }
      return out;
    }
    auto known = [](const Abs &a) { return a.kind == K::Clean && a.value.has_value(); };
    switch (b.op()) {
    case BinaryOp::Add:
      if (l.kind == K::Step && known(r))
        return {K::Step, l.offset + *r.value, {}};
      if (r.kind == K::Step && known(l))
        return {K::Step, r.offset + *l.value, {}};
      // me + c, c + me, me + (N + k), (N + k) + me, (N + k) + c, c + (N + k)
      if (l.kind == K::Me && known(r))
        return meValue(l.offset + *r.value, l.n);
      if (r.kind == K::Me && known(l))
        return meValue(r.offset + *l.value, r.n);
      if (l.kind == K::Me && r.kind == K::Size)
        return meValue(l.offset + r.offset, l.n + 1);
      if (l.kind == K::Size && r.kind == K::Me)
        return meValue(l.offset + r.offset, r.n + 1);
      if (l.kind == K::Size && known(r))
        return {K::Size, l.offset + *r.value, {}};
      if (r.kind == K::Size && known(l))
        return {K::Size, r.offset + *l.value, {}};
      break;
    case BinaryOp::Sub:
      if (l.kind == K::Step && known(r))
        return {K::Step, l.offset - *r.value, {}};
      if (l.kind == K::Me && known(r))
        return meValue(l.offset - *r.value, l.n);
      if (l.kind == K::Me && r.kind == K::Size) // me - N: the same modulo N
        return meValue(l.offset - r.offset, l.n - 1);
      if (l.kind == K::Size && known(r))
        return {K::Size, l.offset - *r.value, {}};
      break;
    case BinaryOp::Mod:
      if (l.kind == K::Me && r.kind == K::Size && r.offset == 0)
        return {K::Device, l.offset, {}};
      break;
    case BinaryOp::Rem:
      // rem(me + c + n * N, N), lax.rem, truncates: it is (me + c) % N when its first
      // operand is never negative, me + c + n * N >= 0 for me >= 0 and every N >= 2.
      if (l.kind == K::Me && r.kind == K::Size && r.offset == 0 && l.n >= 0 &&
          l.offset + 2 * l.n >= 0)
        return {K::Device, l.offset, {}};
      break;
    default:
      break;
    }
    return general(b.op(), l, r);
  }

  /// What binary() leaves: affine values, their remainders by N, and values periodic in
  /// the step (forms of positions; dirty for every rule of the fragment).
  static Abs general(BinaryOp op, const Abs &l, const Abs &r) {
    using K = Abs::Kind;
    auto known = [](const Abs &a) { return a.kind == K::Clean && a.value.has_value(); };
    const std::optional<Lin> x = linear(l), y = linear(r);
    switch (op) {
    case BinaryOp::Add:
    case BinaryOp::Sub: {
      const int64_t sign = op == BinaryOp::Add ? 1 : -1;
      // Only positions are new here: a value without the device or the step stays as the
      // fragment's rules have it (`axis_size(x) - N` is dirty there).
      if (x && y && (x->a + sign * y->a != 0 || x->b + sign * y->b != 0))
        return fromLinear(
            {x->a + sign * y->a, x->b + sign * y->b, x->c + sign * y->c, x->n + sign * y->n});
      if (l.kind == K::Periodic && known(r)) {
        Abs out = l;
        out.alpha += sign * *r.value;
        return out;
      }
      if (known(l) && r.kind == K::Periodic) {
        Abs out = r;
        out.alpha = *l.value + sign * r.alpha;
        out.beta = sign * r.beta;
        return out;
      }
      break;
    }
    case BinaryOp::Mul: {
      const Abs *v = known(l) ? &l : known(r) ? &r : nullptr;
      const Abs *other = v == &l ? &r : &l;
      if (!v)
        break;
      const int64_t k = *v->value;
      if (const std::optional<Lin> z = linear(*other); z && k != 0 && (z->a != 0 || z->b != 0))
        return fromLinear({z->a * k, z->b * k, z->c * k, z->n * k});
      if (other->kind == K::Periodic) {
        Abs out = *other;
        out.alpha *= k;
        out.beta *= k;
        return out;
      }
      break;
    }
    case BinaryOp::Mod:
      if (x && r.kind == K::Size && r.offset == 0) {
        Abs out{K::ModN, x->c, {}, true, x->a != 0, x->b != 0};
        out.a = x->a;
        out.b = x->b;
        return out;
      }
      if (x && x->a == 0 && x->n == 0 && x->b != 0 && known(r) && *r.value > 0) {
        Abs out{K::Periodic, x->c, {}, false, false, true};
        out.b = x->b;
        out.alpha = 0;
        out.beta = 1;
        out.period = *r.value;
        return out;
      }
      break;
    default:
      break;
    }
    return dirty(l, r);
  }

  const ParamDecl *size_;
  const AxisDecl *axis_;
  std::map<const LetDecl *, Abs> lets_;
  std::map<const ConstDecl *, Abs> consts_;
  std::string reason_;
  int64_t reach_ = 0;
  bool growing_ = false;
  int64_t g_ = 0;
  int64_t first_ = 0, last_ = 0; ///< UG: the steps of the first and the last classes
  int lenient_ = 0;              ///< > 0: what is walked may depend on anything
  FormKey here_{};               ///< the statement walked
  std::map<FormKey, StmtForms> forms_;
  std::string racesOutside_;
};

} // namespace

std::optional<Uniform> uniformRing(const Module &module, std::string &reason) {
  const MeshDecl *mesh = module.mesh();
  if (module.sequence()) {
    reason = "a sequence of kernels (the fragment has one kernel)";
    return std::nullopt;
  }
  if (!mesh || mesh->axes().size() != 1 || module.tensorCoreMesh()) {
    reason = "not a one-axis mesh of devices (the fragment is rings)";
    return std::nullopt;
  }
  const AxisDecl &axis = *mesh->axes()[0];
  const ParamDecl *size = nullptr;
  if (const auto *n = dynCast<NameExpr>(&axis.sizeExpr()))
    size = dynCast<ParamDecl>(n->decl());
  if (!size) {
    reason = "the mesh is not sized by a param (--devices cannot vary it)";
    return std::nullopt;
  }
  const KernelDecl *kernel = module.kernel();
  if (!kernel) {
    reason = "no kernel";
    return std::nullopt;
  }
  Walk walk(size, &axis);
  // A first grid axis of N + g steps: the fragment UG (its other axes fixed).
  std::optional<int64_t> growing;
  if (!kernel->grid().empty()) {
    Walk probe(size, &axis);
    if (const Abs a = probe.expr(*kernel->grid().front()); a.kind == Abs::Kind::Size) {
      growing = a.offset;
      walk.growing(a.offset);
    }
  }
  for (const auto &p : kernel->params())
    walk.decl(*p);
  for (const auto &p : kernel->semParams())
    walk.decl(*p);
  for (size_t i = growing ? 1 : 0; i < kernel->grid().size(); ++i)
    walk.clean(*kernel->grid()[i], "the grid");
  if (kernel->collectiveId())
    walk.clean(*kernel->collectiveId(), "the collective id");
  if (kernel->skipDeviceBarrier())
    walk.clean(*kernel->skipDeviceBarrier(), "skip_device_barrier");
  walk.block(kernel->body());
  if (!walk.ok()) {
    reason = walk.reason();
    return std::nullopt;
  }
  Uniform out;
  out.reach = walk.reach();
  if (growing) {
    out.growing = true;
    out.g = *growing;
    out.first = walk.firstSteps();
    out.last = walk.lastSteps();
    out.racesOutside = walk.racesOutside();
    out.forms = walk.takeForms();
  }
  return out;
}

std::optional<int64_t> parseEveryN(const std::string &text) {
  if (text.size() < 3 || text.substr(text.size() - 2) != "..")
    return std::nullopt;
  int64_t first = 0;
  const char *end = text.data() + text.size() - 2;
  auto [ptr, ec] = std::from_chars(text.data(), end, first);
  if (ec != std::errc() || ptr != end || first < 1 || first > 4096)
    return std::nullopt;
  return first;
}

namespace {

/// One instance loaded and decided by the closure engine (exact).
struct Decided {
  int code = 0;
  Loaded loaded;
  std::optional<report::Verdict> verdict;
};

Decided decideAt(const InstanceOptions &base, int64_t n, const CheckOptions &check,
                 std::ostream &err, InstanceOptions::Symmetry symmetry) {
  Decided out;
  InstanceOptions o = base;
  o.devices = n;
  o.symmetry = symmetry;
  out.code = load(o, Stage::Model, out.loaded, err);
  if (out.code != support::kExitOk)
    return out;
  CheckOptions options = check;
  options.engine = "closure";
  out.verdict = runEngine(*findEngine("closure"), out.loaded.instance->machine(), options);
  return out;
}

std::string kernelName(const Loaded &loaded) {
  return loaded.instance ? loaded.instance->program().kernel : "?";
}

/// Per device, its first event of each step of the growing grid axis (axis 0) and, last,
/// its event count: the cuts of the lockstep argument. Events outside the grid (the
/// kernel's entry and exit) belong to the first and the last step.
std::vector<std::vector<int32_t>> stepStarts(const model::Program &program, int64_t grid) {
  std::vector<std::vector<int32_t>> out;
  for (const model::Process &process : program.processes) {
    const int32_t count = static_cast<int32_t>(process.events.size());
    std::vector<int32_t> starts(static_cast<size_t>(grid) + 1, count);
    starts[0] = 0;
    // One pass: an event of step q starts every step up to q not started yet; the steps
    // after the last event inside the grid start at the exit's events.
    int64_t next = 1;
    int32_t afterGrid = 0; // one past the last event inside the grid
    for (int32_t e = 0; e < count; ++e) {
      const std::vector<int64_t> &at = program.contextGrid[process.events[e].context];
      if (at.empty())
        continue;
      while (next < grid && next <= at.front())
        starts[next++] = e;
      afterGrid = e + 1;
    }
    for (; next < grid; ++next)
      starts[next] = afterGrid;
    out.push_back(std::move(starts));
  }
  return out;
}

/// What the index forms of two regions say of their overlap (docs/parametric.md "Races
/// for every N"): `later` / `earlier`: they never overlap when the DMA's step is more than
/// Q after / before the access's; `edge` / `mid`: whether they overlap is the same at an
/// anchor and its twin, for anchors near the grid's ends / in its middle.
struct Overlap {
  bool later = false, earlier = false, edge = false, mid = false;
  bool never = false; ///< at no N, device and steps
};

/// A dimension as a set of values: a known interval, a fixed unknown one, or a form.
struct DimValue {
  enum class Kind { Interval, Clean, Mod, Exact, Periodic, Other };
  Kind kind = Kind::Other;
  int64_t lo = 0, hi = 0; ///< Interval
  IndexForm form;
};

DimValue dimValue(const DimForm &d) {
  using K = IndexForm::Kind;
  DimValue v;
  if (!d.index) {
    if (d.lo.kind == K::Known && d.hi.kind == K::Known)
      return {DimValue::Kind::Interval, d.lo.c, d.hi.c, {}};
    const auto fixed = [](const IndexForm &f) { return f.kind == K::Known || f.kind == K::Clean; };
    if (fixed(d.lo) && fixed(d.hi))
      v.kind = DimValue::Kind::Clean;
    return v;
  }
  v.form = d.at;
  switch (d.at.kind) {
  case K::Known:
    return {DimValue::Kind::Interval, d.at.c, d.at.c + 1, {}};
  case K::Clean:
    v.kind = DimValue::Kind::Clean;
    break;
  case K::Mod:
    v.kind = DimValue::Kind::Mod;
    break;
  case K::Exact:
    v.kind = DimValue::Kind::Exact;
    break;
  case K::Periodic:
    v.kind = DimValue::Kind::Periodic;
    break;
  case K::Other:
    break;
  }
  return v;
}

int64_t periodicValue(const IndexForm &f, int64_t step) {
  const int64_t m = ((f.b * step + f.c) % f.period + f.period) % f.period;
  return f.alpha + f.beta * m;
}

/// Where the two statements of a pair run, at the instance I(m) of the argument: whether
/// the access's (`access`) or the DMA's (`dma`) statement runs at step p of I(m). A step
/// p < m / 2 stands for the same step of every I(N) with N >= m, a step m + j (j < 0)
/// for step N + j: the classes of the steps are the same (docs/parametric.md).
struct Occurs {
  int64_t m = 0;
  std::function<bool(int64_t)> access, dma;
};

/// One dimension: x the access's (on device 0), y the DMA's (evaluated on its issuer, at
/// offset `c` from device 0); g the grid's N + g, q the box's depth.
Overlap dimOverlap(const DimForm &dx, const DimForm &dy, int64_t c, int64_t g, int64_t q,
                   const Occurs &at) {
  using K = DimValue::Kind;
  const DimValue x = dimValue(dx), y = dimValue(dy);
  Overlap o;
  if (x.kind == K::Other || y.kind == K::Other)
    return o;
  auto never = [&] {
    o.later = o.earlier = o.edge = o.mid = o.never = true;
    return o;
  };
  if (x.kind == K::Interval && y.kind == K::Interval) {
    o.edge = o.mid = true;
    if (x.hi <= y.lo || y.hi <= x.lo)
      return never();
    return o;
  }
  const bool xFixed = x.kind == K::Interval || x.kind == K::Clean;
  const bool yFixed = y.kind == K::Interval || y.kind == K::Clean;
  if (xFixed && yFixed) {
    o.edge = o.mid = true; // the same values at every N, device and step
    return o;
  }
  // A value periodic in the step against a known interval or another periodic one: every
  // residue pair occurs for far pairs; their values decide.
  if ((x.kind == K::Periodic || x.kind == K::Interval) &&
      (y.kind == K::Periodic || y.kind == K::Interval)) {
    o.edge = o.mid = true;
    const int64_t px = x.kind == K::Periodic ? x.form.period : 1;
    const int64_t py = y.kind == K::Periodic ? y.form.period : 1;
    bool meet = false;
    for (int64_t i = 0; i < px && !meet; ++i)
      for (int64_t j = 0; j < py && !meet; ++j) {
        const int64_t vx0 = x.kind == K::Periodic ? periodicValue(x.form, i) : x.lo;
        const int64_t vx1 = x.kind == K::Periodic ? vx0 + 1 : x.hi;
        const int64_t vy0 = y.kind == K::Periodic ? periodicValue(y.form, j) : y.lo;
        const int64_t vy1 = y.kind == K::Periodic ? vy0 + 1 : y.hi;
        meet = vx0 < vy1 && vy0 < vx1;
      }
    if (!meet)
      return never();
    return o;
  }
  if ((x.kind == K::Periodic && y.kind == K::Clean) ||
      (x.kind == K::Clean && y.kind == K::Periodic)) {
    o.edge = o.mid = true;
    return o;
  }
  if (x.kind == K::Mod && y.kind == K::Mod) {
    const IndexForm &fx = x.form, &fy = y.form;
    if (fx.a != fy.a)
      return o; // depends on the device: not the same on every device
    // x - y = bx * s - by * t + e (mod N)
    const int64_t e = fx.c - (fy.a * c + fy.c);
    if (fx.b == 0 && fy.b == 0) {
      o.edge = o.mid = true;
      if (e != 0)
        return never();
      return o;
    }
    if (fx.b == fy.b && std::abs(fx.b) == 1) {
      // t - s = b * e (mod N): d = X, or X +- N where the grid has room for it.
      const int64_t X = fx.b * e;
      o.edge = o.mid = true;
      // d = X + N: the access at step s <= g - 1 - X, the DMA at N + X + s (near the end);
      // d = X - N: the DMA at t <= g - 1 + X, the access at N - X + t.
      bool wrapLater = false, wrapEarlier = false;
      for (int64_t s = 0; s <= g - 1 - X && !wrapLater; ++s)
        wrapLater = at.access(s) && at.dma(at.m + X + s);
      for (int64_t t = 0; t <= g - 1 + X && !wrapEarlier; ++t)
        wrapEarlier = at.dma(t) && at.access(at.m - X + t);
      o.later = X <= q && !wrapLater;
      o.earlier = X >= -q && !wrapEarlier;
      return o;
    }
    if ((fx.b == 0 && std::abs(fy.b) == 1) || (fy.b == 0 && std::abs(fx.b) == 1)) {
      // One step only, Y modulo N: in the grid as Y (Y >= 0) or N + Y (Y <= g - 1); the
      // regions meet only if the statement whose position moves runs there.
      const int64_t Y = fx.b == 0 ? fy.b * e : -fx.b * e;
      const std::function<bool(int64_t)> &runs = fx.b == 0 ? at.dma : at.access;
      o.edge = true;
      if (!(Y >= 0 && runs(Y)) && !(Y <= g - 1 && runs(at.m + Y)))
        return never();
      return o;
    }
    return o;
  }
  if (x.kind == K::Exact && y.kind == K::Exact && x.form.b == 1 && y.form.b == 1) {
    const int64_t X = x.form.c - y.form.c; // t - s = X
    o.edge = o.mid = true;
    o.later = X <= q;
    o.earlier = X >= -q;
    return o;
  }
  // A remainder by N against a known interval: fixed when it does not move with the step.
  if ((x.kind == K::Mod && y.kind == K::Interval) || (x.kind == K::Interval && y.kind == K::Mod)) {
    const IndexForm &f = x.kind == K::Mod ? x.form : y.form;
    const DimValue &iv = x.kind == K::Mod ? y : x;
    const int64_t at = x.kind == K::Mod ? f.c : f.a * c + f.c; // its value modulo N
    if (f.b == 0) {
      o.edge = o.mid = true;
      // at < 0 is N + at, beyond every known bound at the instances argued for.
      if (at < 0 || at < iv.lo || at >= iv.hi)
        return never();
      return o;
    }
    o.edge = true;
    return o;
  }
  return o;
}

Overlap regionOverlap(const RegionForm &x, const RegionForm &y, int64_t c, int64_t g, int64_t q,
                      const Occurs &at) {
  Overlap out;
  if (!x.known || !y.known || x.buffer != y.buffer || x.dims.size() != y.dims.size())
    return out;
  out.edge = out.mid = true;
  for (size_t i = 0; i < x.dims.size(); ++i) {
    const Overlap d = dimOverlap(x.dims[i], y.dims[i], c, g, q, at);
    if (d.never)
      return d; // one dimension apart: the regions are
    out.later = out.later || d.later;
    out.earlier = out.earlier || d.earlier;
    out.edge = out.edge && d.edge;
    out.mid = out.mid && d.mid;
  }
  return out;
}

/// The largest constant of the forms and the lcm of their periods: the instance of the
/// box argument must be larger than every such constant (remainders by N then agree).
void formBounds(const Uniform &ug, int64_t &constant, int64_t &period) {
  constant = 0;
  period = 1;
  auto form = [&](const IndexForm &f) {
    if (f.kind == IndexForm::Kind::Other || f.kind == IndexForm::Kind::Clean)
      return;
    constant = std::max({constant, std::abs(f.c), std::abs(f.alpha),
                         std::abs(f.beta) * std::max<int64_t>(1, f.period)});
    if (f.kind == IndexForm::Kind::Periodic && f.period > 0)
      period = std::lcm(period, f.period);
  };
  for (const auto &[key, stmt] : ug.forms)
    for (const RegionForm &r : stmt.regions)
      for (const DimForm &d : r.dims) {
        form(d.at);
        form(d.lo);
        form(d.hi);
      }
}

struct RaceArgument {
  bool holds = false;
  std::string reason;
  int64_t from = 0, to = 0, depth = 0, radius = 0, checks = 0;
};

/// The box argument for races, DMA lifetimes and signal targets of a kernel of UG
/// (docs/parametric.md "Races for every N"), at the instances from..to, or why not.
/// `lockstep`: the lockstep argument's instance; the box argument's are at least as large,
/// so that U_p is reachable in them and its semaphores are those of p's twin.
RaceArgument raceArgument(const InstanceOptions &base, int64_t first, int64_t lockstep,
                          const Uniform &ug, std::chrono::steady_clock::time_point deadline,
                          std::ostream &err, int &code) {
  RaceArgument out;
  code = support::kExitOk;
  if (!ug.racesOutside.empty()) {
    out.reason = fmt::format("{} are outside the race argument", ug.racesOutside);
    return out;
  }
  int64_t constant = 0, period = 1;
  formBounds(ug, constant, period);
  if (period > 12) {
    out.reason =
        fmt::format("positions repeat every {} steps (the argument takes up to 12)", period);
    return out;
  }
  const int64_t r = ug.reach;
  // The devices whose DMAs and signals reach device 0 or a device it writes to: within 2r.
  const int64_t reach = std::max<int64_t>(1, 2 * r);
  const int64_t radius = reach;
  for (int64_t q : {1, 2, 4}) {
    // The classes and a middle anchor of every residue, the window's devices distinct, and
    // N beyond every constant of the forms.
    const int64_t from =
        std::max({2 * radius + r + 1, ug.first + ug.last + 2 * q + period + 3 - ug.g,
                  2 * (constant + r + ug.first + ug.last + 3 * q + std::abs(ug.g) + 2), first,
                  lockstep, int64_t{2}});
    const int64_t to = from + period - 1;
    if (to > 160) {
      out.reason = fmt::format("the argument needs instances of {} devices", to);
      return out;
    }
    std::string failed;
    int64_t checks = 0;
    for (int64_t m = from; m <= to && failed.empty(); ++m) {
      if (std::chrono::steady_clock::now() >= deadline) {
        out.reason = "the time limit ended the race argument";
        return out;
      }
      Loaded loaded;
      InstanceOptions o = base;
      o.devices = m;
      o.symmetry = InstanceOptions::Symmetry::Off;
      if (int c = load(o, Stage::Model, loaded, err); c != support::kExitOk) {
        code = c;
        return out;
      }
      const model::Program &program = loaded.instance->program();
      const semantics::Machine &machine = loaded.instance->machine();
      const int64_t grid = m + ug.g;
      if (program.options.invocations != 1) {
        out.reason = "the kernel runs more than once (--invocations)";
        return out;
      }
      const std::vector<std::vector<int32_t>> steps = stepStarts(program, grid);
      const int32_t n = machine.deviceCount();
      auto key = [](const model::SourceLoc &at) {
        return FormKey{at.file, at.line, at.col, at.inlined};
      };
      auto offset = [&](model::DeviceId d) -> int64_t { return d <= n / 2 ? d : d - n; };
      // The region form of access `access` of device 0's event pc, and of a DMA's side.
      const RegionForm none;
      auto accessForm = [&](int32_t pc, int32_t access) -> const RegionForm & {
        const model::Event &e = program.processes[0].events[pc];
        if (const auto *start = std::get_if<model::DmaStart>(&e.kind)) {
          auto it = ug.forms.find(key(program.dmas[start->dma].descriptorLoc));
          if (it == ug.forms.end() || !it->second.copy)
            return none;
          return it->second.regions[access == 0 ? 0 : 1];
        }
        const auto *store = std::get_if<model::Store>(&e.kind);
        auto it = ug.forms.find(key(e.loc));
        if (!store || it == ug.forms.end() || it->second.copy || it->second.regions.empty())
          return none;
        if (access < 0)
          return it->second.regions[0];
        // A read: the one form its buffer has among the statement's reads.
        const model::Buffer &buffer = program.buffers[store->reads[access].buffer];
        const RegionForm *found = nullptr;
        for (size_t i = 1; i < it->second.regions.size(); ++i) {
          const RegionForm &rf = it->second.regions[i];
          if (!rf.known)
            return none;
          if (rf.buffer != key(buffer.loc))
            continue;
          if (found && found->dims != rf.dims)
            return none;
          found = &rf;
        }
        return found ? *found : none;
      };
      auto dmaForm = [&](model::DmaId k, bool dst) -> const RegionForm & {
        auto it = ug.forms.find(key(program.dmas[k].descriptorLoc));
        if (it == ug.forms.end() || !it->second.copy)
          return none;
        return it->second.regions[dst ? 1 : 0];
      };
      auto stepOf = [&](int32_t pc) { return semantics::stepOfEvent(steps[0], pc); };
      // The statement of device 0's event pc whose forms it takes: a started DMA's
      // descriptor, or the event's own.
      auto statementOf = [&](int32_t pc) {
        const model::Event &e = program.processes[0].events[pc];
        const auto *start = std::get_if<model::DmaStart>(&e.kind);
        return key(start ? program.dmas[start->dma].descriptorLoc : e.loc);
      };
      // Where each statement runs: device 0's accesses by their statement, the DMAs by
      // their descriptor and issuer.
      std::map<FormKey, std::set<int64_t>> accessSteps;
      for (int32_t pc = 0; pc < machine.eventCount(0); ++pc)
        accessSteps[statementOf(pc)].insert(stepOf(pc));
      std::map<std::pair<FormKey, model::DeviceId>, std::set<int64_t>> dmaSteps;
      for (model::DmaId k = 0; k < machine.dmaCount(); ++k)
        if (const int32_t start = machine.properties().startPc(k); start >= 0) {
          const model::Dma &dma = program.dmas[k];
          dmaSteps[{key(dma.descriptorLoc), dma.issuer}].insert(
              semantics::stepOfEvent(steps[dma.issuer], start));
        }
      auto overlapOf = [&](int32_t pc, int32_t access, model::DmaId k, bool dst) {
        const std::set<int64_t> &mine = accessSteps[statementOf(pc)];
        const std::set<int64_t> &theirs =
            dmaSteps[{key(program.dmas[k].descriptorLoc), program.dmas[k].issuer}];
        Occurs at{m, [&](int64_t p) { return mine.count(p) > 0; },
                  [&](int64_t p) { return theirs.count(p) > 0; }};
        return regionOverlap(accessForm(pc, access), dmaForm(k, dst),
                             offset(program.dmas[k].issuer), ug.g, q, at);
      };
      semantics::BoxInput input;
      input.steps = &steps;
      input.radius = static_cast<int32_t>(radius);
      input.depth = static_cast<int32_t>(q);
      input.reach = static_cast<int32_t>(reach);
      input.stop = [&] { return std::chrono::steady_clock::now() >= deadline; };
      input.mayOverlap = [&](int32_t pc, int32_t access, model::DmaId k, bool dst) {
        const int64_t s = stepOf(pc);
        const bool mid = s > ug.first + q && s < grid - 2 - ug.last - q;
        const Overlap o = overlapOf(pc, access, k, dst);
        if (!(mid ? o.mid : o.edge))
          return true; // not the same at every N: it must be ordered
        // The same at every N as here: the regions of this instance say.
        const model::Event &e = program.processes[0].events[pc];
        const model::Region *region = nullptr;
        if (const auto *start = std::get_if<model::DmaStart>(&e.kind))
          region = access == 0 ? &program.dmas[start->dma].src : &program.dmas[start->dma].dst;
        else if (const auto *store = std::get_if<model::Store>(&e.kind))
          region = access < 0 ? &store->dst : &store->reads[access];
        const model::Dma &dma = program.dmas[k];
        return !region || region->overlaps(dst ? dma.dst : dma.src);
      };
      const semantics::BoxDecision box = semantics::decideBoxes(machine, input);
      if (box.stopped) {
        out.reason = "the time limit ended the race argument";
        return out;
      }
      if (!box.complete) {
        failed = fmt::format("at N = {} with a box of {} steps either way: {}", m, q, box.open);
        break;
      }
      checks += box.checks;
      // Pairs farther apart than q steps: the settled facts at every anchor, or index forms
      // that never meet.
      std::vector<char> aheadAll(n, 1);
      for (const std::vector<char> &row : box.ahead)
        for (model::DeviceId d = 0; d < n; ++d)
          aheadAll[d] = aheadAll[d] && row[d];
      // Per DMA made at one place by one device, and side: every such DMA settled.
      std::map<std::tuple<FormKey, model::DeviceId, bool>, bool> behindAll;
      for (model::DmaId k = 0; k < machine.dmaCount(); ++k)
        for (bool dst : {false, true}) {
          const int8_t fact = (dst ? box.dmaBehindLand : box.dmaBehindSend)[k];
          if (fact < 0)
            continue;
          auto [it, fresh] = behindAll.emplace(
              std::tuple{key(program.dmas[k].descriptorLoc), program.dmas[k].issuer, dst}, true);
          it->second = it->second && fact == 1;
        }
      for (const semantics::BoxPair &p : box.pairs) {
        const model::Dma &dma = program.dmas[p.dma];
        const Overlap o = overlapOf(p.pc, p.access, p.dma, p.dst);
        auto behind = behindAll.find({key(dma.descriptorLoc), dma.issuer, p.dst});
        const bool laterOk = aheadAll[dma.issuer] || o.later;
        const bool earlierOk = (behind != behindAll.end() && behind->second) || o.earlier;
        if (!laterOk || !earlierOk) {
          const model::SourceLoc at = program.processes[0].events[p.pc].loc;
          failed = fmt::format(
              "at N = {}: the access at line {}, column {} and the DMA made at line {} by the "
              "device {} away are neither ordered nor apart when {} than {} steps {}",
              m, at.line, at.col, dma.descriptorLoc.line, offset(dma.issuer),
              laterOk ? "it runs more" : "the DMA runs more", q, laterOk ? "behind" : "ahead");
          break;
        }
      }
    }
    if (failed.empty()) {
      out.holds = true;
      out.from = from;
      out.to = to;
      out.depth = q;
      out.radius = radius;
      out.checks = checks;
      return out;
    }
    out.reason = failed;
  }
  return out;
}

using OneByOne = std::function<std::optional<int>(int64_t, int64_t, int64_t &)>;

/// `--devices A..` on a kernel of the fragment UG (docs/parametric.md "Grids that grow
/// with N"): the lockstep argument for deadlock and the semaphores at the exit, at one
/// instance I(M) for every N >= M; every other property and every N up to max(16, M) one
/// by one.
int checkGrowing(const InstanceOptions &base, int64_t first, const Uniform &ug,
                 const Module &module, const CheckOptions &check,
                 std::chrono::steady_clock::time_point deadline, std::ostream &out,
                 std::ostream &err, const OneByOne &oneByOne) {
  const std::string name = module.kernel()->name();
  const int64_t r = ug.reach;
  using Clock = std::chrono::steady_clock;
  // The classes apart (first, at least one middle step, last) and the window's devices
  // distinct: M + g >= first + last + 1 and M >= 2R + r + 1.
  const int64_t classes = ug.first + ug.last + 1 - ug.g;
  std::string reason;
  std::optional<int64_t> from;
  // The first instance tried: without an argument the one-by-one range reaches it (where
  // the step classes first stand apart); with one, it reaches the instance that held, so
  // that every N below it is checked on its own.
  int64_t smallest = 0;
  for (int64_t R = std::max<int64_t>(1, r); R <= 32 && !from; R *= 2) {
    const int64_t m = std::max({2 * R + r + 1, classes, first, int64_t{2}});
    if (smallest == 0)
      smallest = m;
    if (m > 256) {
      reason = fmt::format("the step classes need an instance of {} devices", m);
      break;
    }
    Loaded loaded;
    InstanceOptions o = base;
    o.devices = m;
    // Positions in refs may depend on the device and the step, so the instance need not
    // be rotation-symmetric; its synchronisation is (the fragment's syntax), which is all
    // the lockstep argument reads.
    o.symmetry = InstanceOptions::Symmetry::Off;
    if (int code = load(o, Stage::Model, loaded, err); code != support::kExitOk)
      return code;
    const semantics::Machine &machine = loaded.instance->machine();
    const int64_t grid = m + ug.g;
    const semantics::LockstepDecision lock = semantics::decideLockstep(
        machine, stepStarts(loaded.instance->program(), grid), static_cast<int32_t>(R),
        [&] { return Clock::now() >= deadline; });
    if (lock.stopped) {
      reason = fmt::format("the time limit ({} s) ended the lockstep argument at N = {}",
                           check.timeoutSeconds, m);
      break;
    }
    if (!lock.complete) {
      reason = fmt::format("the lockstep argument fails at N = {}: {}", m, lock.reason);
      continue; // a wider window may hold it less
    }
    // Balance: every middle step leaves device 0's semaphores as it found them.
    const auto &values = lock.values;
    std::optional<int64_t> changed;
    for (int64_t p = ug.first; p < grid - ug.last && !changed; ++p)
      if (values[p + 1] != values[p])
        changed = p;
    if (changed) {
      const model::SemId sem =
          static_cast<model::SemId>(std::mismatch(values[*changed].begin(), values[*changed].end(),
                                                  values[*changed + 1].begin())
                                        .first -
                                    values[*changed].begin());
      reason = fmt::format("step {} of {} at N = {} changes semaphore {} of device 0 from {} to "
                           "{}: the steps are not balanced",
                           *changed, grid, m, loaded.instance->program().semName(sem),
                           values[*changed][sem], values[*changed + 1][sem]);
      break;
    }
    from = m;
  }
  // Races, DMA lifetimes and signal targets: the box argument, where deadlock freedom holds.
  std::optional<RaceArgument> races;
  if (from) {
    int code = support::kExitOk;
    races = raceArgument(base, first, *from, ug, deadline, err, code);
    if (code != support::kExitOk)
      return code;
  }
  const bool proved = races && races->holds;
  int64_t checked = 0;
  const int64_t last =
      std::max<int64_t>({first, 16, from ? *from : smallest, proved ? races->to : 0});
  if (std::optional<int> code = oneByOne(first, last, checked))
    return *code;
  if (!from) {
    out << fmt::format("inconclusive for every N >= {}: kernel {} has a grid that grows with N "
                       "(fragment UG of docs/parametric.md) and {}; verified one by one for N = "
                       "{} to {} (engine closure)\n",
                       first, name, reason, first, last);
    return support::kExitInconclusive;
  }
  const std::string steps =
      ug.g == 0 ? std::string("N") : fmt::format("N {} {}", ug.g < 0 ? '-' : '+', std::abs(ug.g));
  if (proved) {
    out << fmt::format(
        "verified for every N >= {}: kernel {} on mesh x=N: no data race, deadlock, exit or "
        "lifetime violation (arguments: lockstep over its {} grid steps at N = {}, and boxes of "
        "{} steps either way on {} devices around device 0 at N = {}{}, deciding {} checks, "
        "docs/parametric.md; N = {} to {} checked one by one by the closure engine)\n",
        first, name, steps, *from, races->depth, 2 * races->radius + 1, races->from,
        races->to > races->from ? fmt::format(" to {}", races->to) : std::string(), races->checks,
        first, last);
    return support::kExitOk;
  }
  out << fmt::format(
      "inconclusive for every N >= {}: kernel {} on mesh x=N: no deadlock and no semaphore left "
      "non-zero at the exit at any N >= {} (argument: lockstep over its {} grid steps, "
      "docs/parametric.md, at N = {}); data races, DMA lifetimes and the other checks are "
      "decided one by one only ({}): verified for N = {} to {} (engine closure)\n",
      first, name, first, steps, *from, races->reason, first, last);
  return support::kExitInconclusive;
}

} // namespace

int checkEveryN(const InstanceOptions &base, int64_t first, const CheckOptions &check,
                std::ostream &out, std::ostream &err) {
  if (check.format != "text") {
    err << "dkv: error: --devices " << first << ".. reports as text only\n";
    return support::kExitUsage;
  }
  // The fragment, from the kernel's AST (any instance's: the AST is the same).
  Loaded probe;
  InstanceOptions at = base;
  at.devices = std::max<int64_t>(first, 2);
  if (int code = load(at, Stage::Sema, probe, err); code != support::kExitOk)
    return code;
  std::string reason;
  std::optional<Uniform> uniform = uniformRing(*probe.module, reason);

  // The instances one by one from `first` to `last` (exact, the closure engine); the
  // first with findings, or a static error, ends the run with its report.
  // --timeout bounds the whole run: each instance gets what is left of it.
  using Clock = std::chrono::steady_clock;
  const Clock::time_point deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(
                         std::chrono::duration<double>(check.timeoutSeconds));
  auto oneByOne = [&](int64_t from, int64_t last, int64_t &checked) -> std::optional<int> {
    checked = 0;
    for (int64_t n = from; n <= last; ++n) {
      CheckOptions left = check;
      left.timeoutSeconds =
          std::max(0.0, std::chrono::duration<double>(deadline - Clock::now()).count());
      Decided d = decideAt(base, n, left, err, InstanceOptions::Symmetry::Auto);
      if (d.code != support::kExitOk)
        return d.code;
      ++checked;
      if (d.verdict->status == report::Verdict::Status::Verified)
        continue;
      report::VerdictHeading heading{"closure", describeInstance(d.loaded.instance->program()),
                                     check.timing, check.explain};
      report::renderVerdict(out, *d.verdict, &d.loaded.sources, heading);
      if (d.verdict->status == report::Verdict::Status::Findings) {
        out << fmt::format("not verified for every N >= {}: kernel {} has findings at N = {} "
                           "(the instances from N = {} to {} checked one by one)\n",
                           first, kernelName(d.loaded), n, from, n);
        return support::kExitFindings;
      }
      out << fmt::format("inconclusive for every N >= {}: N = {} is inconclusive\n", first, n);
      return d.verdict->status == report::Verdict::Status::Error ? support::kExitInternal
                                                                 : support::kExitInconclusive;
    }
    return std::nullopt;
  };

  if (uniform && uniform->growing)
    return checkGrowing(base, first, *uniform, *probe.module, check, deadline, out, err, oneByOne);
  if (!uniform) {
    // Outside the fragment: say why; the instances up to 16 devices still get checked.
    int64_t checked = 0;
    const int64_t last = std::max<int64_t>(first, 16);
    if (std::optional<int> code = oneByOne(first, last, checked))
      return *code;
    out << fmt::format("inconclusive for every N >= {}: kernel {} is outside the fragment of "
                       "docs/parametric.md: {}; verified one by one for N = {} to {} (engine "
                       "closure)\n",
                       first, probe.module->kernel() ? probe.module->kernel()->name() : "?", reason,
                       first, last);
    return support::kExitInconclusive;
  }

  // The window: 2R + 1 devices around device 0, R from the reach r on, doubled while
  // the bounds disagree on a check.
  const int64_t r = uniform->reach;
  std::optional<semantics::WindowDecision> decision;
  int64_t window = 0, from = 0;
  std::string undecided;
  for (int64_t R = std::max<int64_t>(1, r); R <= 32 && !decision; R *= 2) {
    const int64_t m = 2 * R + r + 1;
    Loaded loaded;
    InstanceOptions o = base;
    o.devices = std::max(m, first);
    o.symmetry = InstanceOptions::Symmetry::On;
    if (int code = load(o, Stage::Model, loaded, err); code != support::kExitOk)
      return code;
    const semantics::Machine &machine = loaded.instance->machine();
    if (!machine.properties().symmetry()) {
      // Uniform kernels rotate (docs/parametric.md, Lemma 1): a bug in dkv if not.
      err << "dkv: internal error: a kernel of the fragment is not rotation-symmetric at N = "
          << *o.devices << "\n";
      return support::kExitInternal;
    }
    const int32_t n = machine.deviceCount();
    std::vector<bool> inside(n, false);
    std::vector<int32_t> hold(n, 0);
    for (model::DeviceId d = 0; d < n; ++d) {
      inside[d] = std::min<int64_t>(d, n - d) <= R;
      // Each device outside is held before its first event that can block.
      hold[d] = semantics::firstBlocking(machine, d);
    }
    semantics::WindowDecision w = semantics::decideWindow(machine, inside, hold);
    if (w.decided) {
      decision = w;
      window = 2 * R + 1;
      from = *o.devices;
    } else {
      undecided = w.undecided;
    }
  }
  if (!decision) {
    int64_t checked = 0;
    const int64_t last = std::max<int64_t>(first, 16);
    if (std::optional<int> code = oneByOne(first, last, checked))
      return *code;
    out << fmt::format("inconclusive for every N >= {}: kernel {}: the window argument of "
                       "docs/parametric.md does not decide {} with up to 65 devices around "
                       "device 0; verified one by one for N = {} to {} (engine closure)\n",
                       first, probe.module->kernel()->name(), undecided, first, last);
    return support::kExitInconclusive;
  }
  // Below the window's reach: every instance on its own.
  int64_t checked = 0;
  if (std::optional<int> code = oneByOne(first, from - 1, checked))
    return *code;
  if (!decision->violated.empty()) {
    // A violation at every N from `from` on: the concrete instance shows it.
    Decided d = decideAt(base, from, check, err, InstanceOptions::Symmetry::Auto);
    if (d.code != support::kExitOk)
      return d.code;
    report::VerdictHeading heading{"closure", describeInstance(d.loaded.instance->program()),
                                   check.timing, check.explain};
    report::renderVerdict(out, *d.verdict, &d.loaded.sources, heading);
    DKV_INVARIANT(d.verdict->status == report::Verdict::Status::Findings,
                  "the window's violations are the instance's");
    out << fmt::format("not verified for every N >= {}: kernel {} has findings at every N >= "
                       "{} (argument: window of {} devices, docs/parametric.md)\n",
                       first, kernelName(d.loaded), from, window);
    return support::kExitFindings;
  }
  // The instances below the window's, when the range starts below it.
  const std::string below =
      from - 1 > first
          ? fmt::format("N = {} to {} checked one by one by the closure engine, ", first, from - 1)
      : from - 1 == first ? fmt::format("N = {} checked by the closure engine, ", first)
                          : std::string();
  out << fmt::format(
      "verified for every N >= {}: kernel {} on mesh x=N: no data race, deadlock, exit or "
      "lifetime violation (argument: window of {} devices around device 0, docs/parametric.md; "
      "{}every N >= {} by the window, whose bounds agree on all {} checks)\n",
      first, probe.module->kernel()->name(), window, below, from, decision->checks);
  return support::kExitOk;
}

} // namespace dkv::driver
