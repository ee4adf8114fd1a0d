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
#include <ostream>
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
  enum class Kind { Clean, Me, Size, Device, Step, Dirty };
  Kind kind = Kind::Clean;
  int64_t offset = 0;
  std::optional<int64_t> value; ///< Clean: when known
  /// Dirty: what it depends on (for the reason); Me: whether a multiple of N was dropped
  /// from the offset (`me + N - 1` is me - 1 modulo N, not as a number).
  bool size = false, me = false, step = false;
  /// Me: the value is exactly me + offset + n * N (`me + N - 1`: offset -1, n 1).
  int64_t n = 0;
};

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
      semaphore(c->sem(), "a copy's semaphore");
      return {};
    }
    if (const auto *r = dynCast<RemoteCopyExpr>(&e)) {
      region(r->src(), "a remote copy's source");
      region(r->dst(), "a remote copy's destination");
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
    if (const auto *x = dynCast<ScratchStmt>(&s)) {
      for (const auto &d : x->decls())
        decl(*d);
    } else if (const auto *x = dynCast<RunScopedStmt>(&s)) {
      for (const auto &d : x->decls())
        decl(*d);
      block(x->body());
    } else if (const auto *x = dynCast<LetStmt>(&s)) {
      lets_[&x->decl()] = expr(x->decl().init());
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
      if (growing_)
        --lenient_;
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

private:
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
  Uniform out{walk.reach()};
  if (growing) {
    out.growing = true;
    out.g = *growing;
    out.first = walk.firstSteps();
    out.last = walk.lastSteps();
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
  int64_t checked = 0;
  const int64_t last = std::max<int64_t>({first, 16, from ? *from : smallest});
  if (std::optional<int> code = oneByOne(first, last, checked))
    return *code;
  if (!from) {
    out << fmt::format("inconclusive for every N >= {}: kernel {} has a grid that grows with N "
                       "(fragment UG of docs/parametric.md) and {}; verified one by one for N = "
                       "{} to {} (engine closure)\n",
                       first, name, reason, first, last);
    return support::kExitInconclusive;
  }
  out << fmt::format(
      "inconclusive for every N >= {}: kernel {} on mesh x=N: no deadlock and no semaphore left "
      "non-zero at the exit at any N >= {} (argument: lockstep over its {} grid steps, "
      "docs/parametric.md, at N = {}); data races, DMA lifetimes and the other checks are "
      "decided one by one only: verified for N = {} to {} (engine closure)\n",
      first, name, first,
      ug.g == 0 ? std::string("N") : fmt::format("N {} {}", ug.g < 0 ? '-' : '+', std::abs(ug.g)),
      *from, first, last);
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
