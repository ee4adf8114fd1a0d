// `dkv check FILE --devices A..` (docs/parametric.md): the fragment check on the
// kernel's AST, the window decision on one instance, the smaller instances one by one.
#include "driver/Parametric.h"

#include "driver/Commands.h"
#include "frontend/AST.h"
#include "report/Render.h"
#include "semantics/Closure.h"
#include "support/Invariant.h"

#include <fmt/format.h>

#include <charconv>
#include <map>
#include <ostream>
#include <sstream>
#include <variant>

namespace dkv::driver {

namespace {

using namespace ast;

/// What an integer expression of the kernel is, as far as the mesh size N and the
/// device index go: independent of both (with its value when known), `me + c`, `N + c`,
/// a device id `(me + c) % N`, or anything else (dirty).
struct Abs {
  enum class Kind { Clean, Me, Size, Device, Dirty };
  Kind kind = Kind::Clean;
  int64_t offset = 0;
  std::optional<int64_t> value; ///< Clean: when known
  /// Dirty: what it depends on (for the reason).
  bool size = false, me = false;
};

/// The walk of docs/parametric.md "The fragment": every expression must be clean,
/// except the device ids of remote copies and signals, which must be `(me + c) % N`.
class Walk {
public:
  Walk(const ParamDecl *size, const AxisDecl *axis) : size_(size), axis_(axis) {}

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
      clean(c->src(), "a copy's source");
      clean(c->dst(), "a copy's destination");
      clean(c->sem(), "a copy's semaphore");
      return {};
    }
    if (const auto *r = dynCast<RemoteCopyExpr>(&e)) {
      clean(r->src(), "a remote copy's source");
      clean(r->dst(), "a remote copy's destination");
      clean(r->sendSem(), "a remote copy's send semaphore");
      clean(r->recvSem(), "a remote copy's receive semaphore");
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
    switch (a.kind) {
    case Abs::Kind::Clean:
      return;
    case Abs::Kind::Me:
      return fail(e, fmt::format("the device index (axis_index) decides {}", what));
    case Abs::Kind::Size:
      return fail(e, fmt::format("the mesh size decides {}", what));
    case Abs::Kind::Device:
      return fail(e, fmt::format("a device id is used as a number in {}", what));
    case Abs::Kind::Dirty:
      return fail(e, a.size && a.me
                         ? fmt::format("the mesh size and the device index decide {}", what)
                     : a.me ? fmt::format("the device index (axis_index) decides {}", what)
                            : fmt::format("the mesh size decides {}", what));
    }
  }

  /// A device id: must be `(axis_index + c) % N`.
  void device(const Expr &e) {
    const Abs a = expr(e);
    if (a.kind != Abs::Kind::Device)
      return fail(e, "a device id that is not (axis_index + c) % N, a fixed offset on the ring");
    reach_ = std::max(reach_, a.offset < 0 ? -a.offset : a.offset);
  }

  void decl(const Decl &d) {
    if (const auto *b = dynCast<BufferDecl>(&d)) {
      if (b->isTable())
        fail(*b, "a table (its contents are per device or per instance)");
      for (const ExprPtr &x : b->shape())
        clean(*x, "a buffer's shape");
    } else if (const auto *s = dynCast<SemDecl>(&d)) {
      for (const ExprPtr &x : s->dims())
        clean(*x, "a semaphore array's size");
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
        clean(*b.cond, "a condition");
        block(*b.body);
      }
      if (x->elseBody())
        block(*x->elseBody());
    } else if (const auto *x = dynCast<ForStmt>(&s)) {
      clean(x->lo(), "a loop's bounds");
      clean(x->hi(), "a loop's bounds");
      block(x->body());
    } else if (const auto *x = dynCast<StoreStmt>(&s)) {
      clean(x->target(), "a store");
      clean(x->value(), "a store");
    } else if (const auto *x = dynCast<DmaStmt>(&s)) {
      clean(x->descriptor(), "a dma");
      if (x->priority())
        clean(*x->priority(), "a dma's priority");
    } else if (const auto *x = dynCast<SignalStmt>(&s)) {
      clean(x->sem(), "a signal's semaphore");
      if (x->inc())
        clean(*x->inc(), "a signal's amount");
      if (x->coreIndex())
        fail(*x->coreIndex(), "a signal to a core (the fragment has one device per ring place)");
      if (x->device())
        device(*x->device());
    } else if (const auto *x = dynCast<WaitStmt>(&s)) {
      clean(x->sem(), "a wait's semaphore");
      if (x->value())
        clean(*x->value(), "a wait's amount");
    } else if (isa<EmitPipelineStmt>(&s)) {
      fail(s, "emit_pipeline (not covered by the fragment)");
    } else {
      fail(s, "a statement the fragment does not cover");
    }
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
    Abs out{Abs::Kind::Dirty, 0, {}};
    out.size = size(a) || size(b);
    out.me = me(a) || me(b);
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
      // me + c, c + me, me + (N + k), (N + k) + me, (N + k) + c, c + (N + k)
      if (l.kind == K::Me && known(r))
        return {K::Me, l.offset + *r.value, {}};
      if (r.kind == K::Me && known(l))
        return {K::Me, r.offset + *l.value, {}};
      if (l.kind == K::Me && r.kind == K::Size)
        return {K::Me, l.offset + r.offset, {}};
      if (l.kind == K::Size && r.kind == K::Me)
        return {K::Me, l.offset + r.offset, {}};
      if (l.kind == K::Size && known(r))
        return {K::Size, l.offset + *r.value, {}};
      if (r.kind == K::Size && known(l))
        return {K::Size, r.offset + *l.value, {}};
      break;
    case BinaryOp::Sub:
      if (l.kind == K::Me && known(r))
        return {K::Me, l.offset - *r.value, {}};
      if (l.kind == K::Me && r.kind == K::Size) // me - N: the same modulo N
        return {K::Me, l.offset - r.offset, {}};
      if (l.kind == K::Size && known(r))
        return {K::Size, l.offset - *r.value, {}};
      break;
    case BinaryOp::Mod:
      if (l.kind == K::Me && r.kind == K::Size && r.offset == 0)
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
  for (const auto &p : kernel->params())
    walk.decl(*p);
  for (const auto &p : kernel->semParams())
    walk.decl(*p);
  for (const ExprPtr &g : kernel->grid())
    walk.clean(*g, "the grid");
  if (kernel->collectiveId())
    walk.clean(*kernel->collectiveId(), "the collective id");
  if (kernel->skipDeviceBarrier())
    walk.clean(*kernel->skipDeviceBarrier(), "skip_device_barrier");
  walk.block(kernel->body());
  if (!walk.ok()) {
    reason = walk.reason();
    return std::nullopt;
  }
  return Uniform{walk.reach()};
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
  auto oneByOne = [&](int64_t from, int64_t last, int64_t &checked) -> std::optional<int> {
    checked = 0;
    for (int64_t n = from; n <= last; ++n) {
      Decided d = decideAt(base, n, check, err, InstanceOptions::Symmetry::Auto);
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
  out << fmt::format(
      "verified for every N >= {}: kernel {} on mesh x=N: no data race, deadlock, exit or "
      "lifetime violation (argument: window of {} devices around device 0, docs/parametric.md; "
      "N = {} to {} checked one by one by the closure engine, every N >= {} by the window, whose "
      "bounds agree on all {} checks)\n",
      first, probe.module->kernel()->name(), window, first, from - 1, from, decision->checks);
  return support::kExitOk;
}

} // namespace dkv::driver
