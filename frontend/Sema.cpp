// Semantic analysis: scopes, name resolution, typing, constant evaluation and static checks.
#include "frontend/Sema.h"

#include "frontend/IntEval.h"
#include "prim/Infer.h"
#include "support/Invariant.h"
#include "support/Suggest.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <charconv>

#include <exception>
#include <set>
#include <unordered_map>
#include <vector>

namespace dkv::frontend {

using namespace ast;
using support::DiagnosticEngine;

namespace {

//===----------------------------------------------------------------------===//
// Constants: frontend::evalIntExpr with the values sema stored on declarations
//===----------------------------------------------------------------------===//

// Literals, params and consts with a value, and the calls sema evaluated
// (axis_size, num_programs); nothing else is a constant.
std::optional<int64_t> constantLeaf(const Expr &e, bool /*condition*/) {
  if (const auto *n = dynCast<NameExpr>(&e)) {
    const Decl *d = n->decl();
    if (auto *p = dynCast<ParamDecl>(d); p && p->value())
      return p->value();
    if (auto *c = dynCast<ConstDecl>(d); c && c->value())
      return c->value();
    return std::nullopt;
  }
  if (const auto *c = dynCast<CallExpr>(&e))
    return c->value();
  return std::nullopt;
}

IntEvalResult eval(const Expr &e) { return evalIntExpr(e, constantLeaf); }

} // namespace

std::optional<int64_t> evalConst(const Expr &expr) { return eval(expr).value; }

namespace {

//===----------------------------------------------------------------------===//
// Sema
//===----------------------------------------------------------------------===//

bool isScalar(const Type &t) { return t.kind == TypeKind::Int || t.kind == TypeKind::Float; }
bool isArray(const Type &t) { return t.kind == TypeKind::Ref || t.kind == TypeKind::Value; }

bool shapesCompatible(const std::vector<int64_t> &a, const std::vector<int64_t> &b) {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i] != Type::kDynamic && b[i] != Type::kDynamic && a[i] != b[i])
      return false;
  return true;
}

// Structural equality, used to see that `a : a + 4` has extent 4 even when `a` is
// only known per device.
bool sameExpr(const Expr &a, const Expr &b) {
  if (a.kind() != b.kind())
    return false;
  switch (a.kind()) {
  case Node::Kind::IntLiteral:
    return cast<IntLiteral>(a).value() == cast<IntLiteral>(b).value();
  case Node::Kind::NameExpr:
    return cast<NameExpr>(a).decl() && cast<NameExpr>(a).decl() == cast<NameExpr>(b).decl();
  case Node::Kind::UnaryExpr:
    return cast<UnaryExpr>(a).op() == cast<UnaryExpr>(b).op() &&
           sameExpr(cast<UnaryExpr>(a).operand(), cast<UnaryExpr>(b).operand());
  case Node::Kind::BinaryExpr: {
    const auto &x = cast<BinaryExpr>(a), &y = cast<BinaryExpr>(b);
    return x.op() == y.op() && sameExpr(x.lhs(), y.lhs()) && sameExpr(x.rhs(), y.rhs());
  }
  case Node::Kind::CallExpr: {
    const auto &x = cast<CallExpr>(a), &y = cast<CallExpr>(b);
    return x.builtin() == y.builtin() && x.builtin() != Builtin::Read && sameExpr(x.arg(), y.arg());
  }
  default:
    return false;
  }
}

class Sema {
public:
  Sema(Module &module, const Defines &defines, const Tables &tables, DiagnosticEngine &diags)
      : module_(module), defines_(defines), tables_(tables), diags_(diags) {}

  bool run() {
    size_t errorsBefore = diags_.errorCount();
    scopes_.emplace_back();
    std::set<std::string> usedDefines;
    SequenceDecl *sequence = nullptr;
    for (auto &item : module_.items())
      if (auto *q = dynCast<SequenceDecl>(item.get()); q && !sequence)
        sequence = q;
    inSequence_ = sequence != nullptr;
    if (sequence)
      markTablesFromCalls(*sequence);
    for (auto &item : module_.items()) {
      if (auto *p = dynCast<ParamDecl>(item.get())) {
        param(*p);
        usedDefines.insert(p->name());
      } else if (auto *c = dynCast<ConstDecl>(item.get())) {
        constDecl(*c);
      } else if (auto *m = dynCast<MeshDecl>(item.get()); m && m->isTensorCore()) {
        tensorCoreMeshDecl(*m);
      } else if (auto *m = dynCast<MeshDecl>(item.get())) {
        if (mesh_) {
          diags_.error(m->range(), "duplicate-mesh", "a file has exactly one mesh")
              .notes.push_back(note(mesh_->range(), "first mesh here"));
          continue;
        }
        mesh_ = m;
        meshDecl(*m);
      } else if (auto *k = dynCast<KernelDecl>(item.get())) {
        // Several kernels only with a sequence that runs them (docs/language.md
        // "Kernel sequences"); their names are unique.
        if (kernel_ && !sequence) {
          diags_
              .error(k->range(), "duplicate-kernel",
                     "a file has exactly one kernel, or several and a sequence that calls "
                     "them")
              .notes.push_back(note(kernel_->range(), "first kernel here"));
          continue;
        }
        if (auto prev = kernels_.find(k->name()); prev != kernels_.end()) {
          diags_
              .error(k->range(), "duplicate-kernel",
                     fmt::format("a second kernel named '{}'", k->name()))
              .notes.push_back(note(prev->second->range(), "first kernel here"));
          continue;
        }
        if (!kernel_)
          kernel_ = k;
        kernels_[k->name()] = k;
        kernelDecl(*k);
      } else if (auto *q = dynCast<SequenceDecl>(item.get())) {
        if (q != sequence)
          diags_.error(q->range(), "duplicate-sequence", "a file has at most one sequence")
              .notes.push_back(note(sequence->range(), "first sequence here"));
      }
    }
    if (sequence)
      sequenceDecl(*sequence);
    // The module's range starts at 1:1 of its own file.
    support::SourceRange start{module_.range().begin, module_.range().begin};
    if (!mesh_)
      diags_.error(start, "missing-mesh", "no mesh declared; add e.g. 'mesh x = 4'");
    if (!kernel_)
      diags_.error(start, "missing-kernel", "no kernel declared");
    for (const auto &[name, value] : defines_)
      if (!usedDefines.count(name))
        diags_.error({noPosition(), {}}, "unknown-define",
                     fmt::format("-D {}={} names no param of this file", name, value));
    for (const auto &[name, value] : tables_)
      if (!usedTables_.count(name))
        diags_.error({noPosition(), {}}, "unknown-table",
                     sequence ? fmt::format("{} sets table '{}', but the sequence has no table "
                                            "of that name (in a sequence, tables are the "
                                            "sequence's parameters with contents, and -T "
                                            "names them, not the kernels' parameters)",
                                            value.origin, name)
                              : fmt::format("{} sets table '{}', but the kernel has no table of "
                                            "that name",
                                            value.origin, name));
    return diags_.errorCount() == errorsBefore;
  }

private:
  /// No position, in the module's file (a command-line definition is about it).
  support::SourceLoc noPosition() const { return {0, 0, module_.range().begin.file}; }

  Module &module_;
  const Defines &defines_;
  const Tables &tables_;
  std::set<std::string> usedTables_;
  bool tableBaseOk_ = false; // checking the base of an IndexExpr
  DiagnosticEngine &diags_;
  const MeshDecl *mesh_ = nullptr;
  const MeshDecl *tcMesh_ = nullptr; // the tensorcore_mesh, if any
  const KernelDecl *kernel_ = nullptr;
  std::map<std::string, const KernelDecl *> kernels_;
  bool inSequence_ = false;
  std::vector<std::unordered_map<std::string, const Decl *>> scopes_;
  int64_t meshDevices_ = 0; // 0: unknown

  static support::Diagnostic note(support::SourceRange range, std::string message) {
    return support::Diagnostic{support::Severity::Note, range, std::move(message), "", {}};
  }

  /// Before the kernels are checked: a kernel parameter to which a call of the sequence
  /// passes one of the sequence's tables is a table itself (read as `t[i]` in the
  /// kernel's integer expressions), with the argument's contents in that call. Decided
  /// on names and positions only; sequenceDecl checks every argument afterwards. Only a
  /// parameter that can be a table (`in smem` of an integer type) is marked: for any
  /// other, the call's argument is an `argument-mismatch`.
  void markTablesFromCalls(SequenceDecl &q) {
    std::map<std::string, const BufferDecl *> tables;
    for (const auto &b : q.buffers())
      if (b->tableInit())
        tables.emplace(b->name(), b.get());
    if (tables.empty())
      return;
    std::map<std::string, KernelDecl *> kernels;
    for (auto &item : module_.items())
      if (auto *k = dynCast<KernelDecl>(item.get()))
        kernels.emplace(k->name(), k);
    for (const SequenceCall &call : q.calls()) {
      auto k = kernels.find(call.kernel);
      if (k == kernels.end())
        continue;
      std::vector<const Decl *> params = k->second->paramOrder();
      for (size_t i = 0; i < params.size() && i < call.args.size(); ++i) {
        const auto *p = dynCast<BufferDecl>(params[i]);
        if (p && tables.count(call.args[i].first) && canBeTable(*p))
          const_cast<BufferDecl *>(p)->setTableFromCall(true);
      }
    }
  }

  /// A kernel parameter of a table's kind: `in`, SMEM, an integer element type.
  static bool canBeTable(const BufferDecl &b) {
    return b.storage() == Storage::KernelParam && b.direction() == Direction::In &&
           b.space() == MemSpace::Smem && isInteger(b.dtype());
  }

  // --- Scopes --------------------------------------------------------------

  const Decl *lookup(const std::string &name) const {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it)
      if (auto found = it->find(name); found != it->end())
        return found->second;
    return nullptr;
  }

  /// The names in scope, innermost scope first, each scope's in sorted order (so that
  /// a "did you mean" is the same from run to run), then `barrier` when the kernel has
  /// one.
  std::vector<std::string> visibleNames() const {
    std::vector<std::string> names;
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
      std::vector<std::string> scope;
      for (const auto &[name, decl] : *it)
        scope.push_back(name);
      std::sort(scope.begin(), scope.end());
      names.insert(names.end(), scope.begin(), scope.end());
    }
    if (barrier_)
      names.push_back("barrier");
    return names;
  }

  // Names are unique in a kernel: a declaration may not shadow one of an enclosing
  // scope either (lets and loop variables would otherwise be easy to confuse).
  void declare(const Decl &d) {
    if (const Decl *prev = lookup(d.name())) {
      diags_.error(d.nameRange(), "redefinition", fmt::format("redefinition of '{}'", d.name()))
          .notes.push_back(note(prev->nameRange(), "previous declaration here"));
      return;
    }
    scopes_.back()[d.name()] = &d;
  }

  struct ScopeGuard {
    Sema &sema;
    explicit ScopeGuard(Sema &s) : sema(s) { sema.scopes_.emplace_back(); }
    ~ScopeGuard() { sema.scopes_.pop_back(); }
  };

  // --- Constants -----------------------------------------------------------

  // Checks that `e` is a constant integer and returns it, reporting why not.
  std::optional<int64_t> constInt(Expr &e, std::string_view what) {
    Type t = check(e);
    if (t.isError())
      return std::nullopt;
    if (t.kind != TypeKind::Int) {
      diags_.error(e.range(), "type-mismatch",
                   fmt::format("{} must be an integer, not {}", what, t.str()));
      return std::nullopt;
    }
    IntEvalResult r = eval(e);
    switch (r.status) {
    case IntEvalStatus::Ok:
      return r.value;
    case IntEvalStatus::DivisionByZero:
      diags_.error(r.where->range(), "division-by-zero", "division by zero");
      return std::nullopt;
    case IntEvalStatus::Overflow:
      diags_.error(r.where->range(), "overflow", "integer overflow in a constant expression");
      return std::nullopt;
    case IntEvalStatus::InvalidShift:
      diags_.error(r.where->range(), "invalid-shift",
                   "shift amount outside [0, 63] in a constant expression");
      return std::nullopt;
    case IntEvalStatus::NotConstant:
      diags_.error(
          e.range(), "not-constant",
          fmt::format("{} must be a compile-time constant (params, consts, literals)", what));
      return std::nullopt;
    }
    return std::nullopt;
  }

  std::optional<int64_t> positiveInt(Expr &e, std::string_view what) {
    auto v = constInt(e, what);
    if (v && *v < 1) {
      diags_.error(e.range(), "invalid-size",
                   fmt::format("{} must be at least 1, got {}", what, *v));
      return std::nullopt;
    }
    return v;
  }

  std::vector<int64_t> dims(std::vector<ExprPtr> &exprs, std::string_view what, bool &ok) {
    std::vector<int64_t> values;
    ok = true;
    for (auto &e : exprs) {
      auto v = positiveInt(*e, what);
      ok = ok && v.has_value();
      values.push_back(v.value_or(Type::kDynamic));
    }
    return values;
  }

  // If `e` is a constant, returns it; reports division by zero / overflow; silently
  // nullopt for per-device values.
  std::optional<int64_t> maybeConst(const Expr &e) {
    if (e.type().kind != TypeKind::Int)
      return std::nullopt;
    IntEvalResult r = eval(e);
    if (r.status == IntEvalStatus::DivisionByZero)
      diags_.error(r.where->range(), "division-by-zero", "division by zero");
    else if (r.status == IntEvalStatus::Overflow)
      diags_.error(r.where->range(), "overflow", "integer overflow in a constant expression");
    else if (r.status == IntEvalStatus::InvalidShift)
      diags_.error(r.where->range(), "invalid-shift",
                   "shift amount outside [0, 63] in a constant expression");
    return r.value;
  }

  // --- Top level -----------------------------------------------------------

  void param(ParamDecl &p) {
    if (auto it = defines_.find(p.name()); it != defines_.end()) {
      p.setValue(it->second);
      if (p.defaultValue())
        check(*p.defaultValue());
    } else if (p.defaultValue()) {
      p.setValue(constInt(*p.defaultValue(), fmt::format("the value of param '{}'", p.name())));
    } else {
      diags_.error(p.nameRange(), "missing-param-value",
                   fmt::format("param '{}' has no value; pass -D {}=VALUE", p.name(), p.name()));
    }
    declare(p);
  }

  void constDecl(ConstDecl &c) {
    c.setValue(constInt(c.init(), fmt::format("the value of const '{}'", c.name())));
    declare(c);
  }

  void meshDecl(MeshDecl &m) {
    int64_t devices = 1;
    bool known = true;
    bool overflow = false;
    for (auto &axis : m.axes()) {
      if (axis->name() == "core")
        // The axis name of pltpu.create_tensorcore_mesh("core"): the TensorCores of one
        // chip share its HBM, while every axis of `mesh` gives devices memories of their
        // own. A core axis is declared with `tensorcore_mesh` (docs/model.md "TensorCores").
        diags_.error(axis->range(), "unsupported",
                     "an axis named 'core' in 'mesh' would be an axis of devices, each with an "
                     "HBM of its own; the TensorCores of a chip share its HBM and are declared "
                     "with 'tensorcore_mesh core = N' (pltpu.create_tensorcore_mesh('core'), "
                     "docs/language.md \"TensorCores\"); rename the axis if it really is an "
                     "axis of devices");
      axis->setSize(
          positiveInt(axis->sizeExpr(), fmt::format("the size of axis '{}'", axis->name())));
      declare(*axis);
      if (!axis->size())
        known = false;
      else if (!overflow && __builtin_mul_overflow(devices, *axis->size(), &devices))
        overflow = true;
    }
    // The product of the axis sizes may not even fit in 64 bits: that is too many, too.
    if (known && (overflow || devices > kMaxMeshDevices)) {
      diags_.error(m.range(), "invalid-size",
                   overflow ? fmt::format("the mesh has more than {} devices; the limit is {}",
                                          INT64_MAX, kMaxMeshDevices)
                            : fmt::format("the mesh has {} devices; the limit is {}", devices,
                                          kMaxMeshDevices));
      known = false;
    }
    meshDevices_ = known ? devices : 0;
  }

  // `tensorcore_mesh core = C` (docs/language.md "TensorCores"): the one axis of
  // pltpu.create_tensorcore_mesh, the cores of every device; every kernel of the file runs
  // over it (pl.kernel(mesh=...) / pl.core_map inside the shard_map over `mesh`).
  void tensorCoreMeshDecl(MeshDecl &m) {
    if (tcMesh_) {
      diags_.error(m.range(), "duplicate-mesh", "a file has at most one tensorcore_mesh")
          .notes.push_back(note(tcMesh_->range(), "first tensorcore_mesh here"));
      return;
    }
    tcMesh_ = &m;
    if (kernel_)
      diags_.error(m.range(), "misplaced-mesh",
                   "declare the tensorcore_mesh before the kernels that run over it");
    for (auto &axis : m.axes()) {
      axis->setSize(positiveInt(axis->sizeExpr(),
                                fmt::format("the size of TensorCore axis '{}'", axis->name())));
      if (axis->size() && *axis->size() > kMaxMeshDevices)
        diags_.error(axis->sizeExpr().range(), "invalid-size",
                     fmt::format("the tensorcore_mesh has {} cores; the limit is {}", *axis->size(),
                                 kMaxMeshDevices));
      declare(*axis);
    }
  }

  /// Cores per device: the tensorcore_mesh's size, 1 without one (or while unknown).
  int64_t coresPerDevice() const {
    const AxisDecl *axis = tcMesh_ && !tcMesh_->axes().empty() ? tcMesh_->axes()[0].get() : nullptr;
    return axis && axis->size() ? *axis->size() : 1;
  }

  void kernelDecl(KernelDecl &k) {
    ScopeGuard scope(*this);
    for (const Decl *p : k.paramOrder()) {
      if (const auto *b = dynCast<BufferDecl>(p)) {
        bufferDecl(const_cast<BufferDecl &>(*b));
        if (inSequence_ && b->tableInit())
          diags_.error(b->tableInit()->range, "sequence-table",
                       fmt::format("table '{}' of kernel '{}' has contents, but the kernels of "
                                   "a sequence take their tables from it: declare the contents "
                                   "on a parameter of the sequence ('sequence(in {}: smem {}[...] "
                                   "= [...], ...)') and pass it in the calls (docs/language.md "
                                   "\"Kernel sequences\")",
                                   b->name(), k.name(), b->name(), toString(b->dtype())));
      } else if (const auto *sp = dynCast<SemDecl>(p)) {
        semDecl(const_cast<SemDecl &>(*sp));
        if (!inSequence_)
          diags_.error(sp->range(), "unsupported",
                       fmt::format("semaphore parameter '{}' of a kernel that no sequence "
                                   "calls: a semaphore comes into a kernel from the caller, "
                                   "so declare it in a 'sequence(...)' that passes it "
                                   "(docs/language.md \"Kernel sequences\"), or make it "
                                   "'scratch'",
                                   sp->name()));
      }
    }
    bool ok = true;
    std::vector<int64_t> grid = dims(k.grid(), "a grid dimension", ok);
    if (ok)
      k.setGridValues(grid);
    if (tcMesh_ && !k.grid().empty())
      // pl.kernel / pl.core_map run the body once per core and take no grid; a grid split
      // across cores (PARALLEL dimension semantics) is not modelled (docs/model.md
      // "TensorCores").
      diags_.error(k.grid().front()->range(), "unsupported",
                   "a kernel over a TensorCore mesh has no grid: pl.kernel and pl.core_map run "
                   "the body once on every core (\"dimension_semantics must be None for "
                   "TensorCoreMesh\", jax/_src/pallas/mosaic/core.py); which grid points a "
                   "core runs for a PARALLEL dimension is not modelled");
    gridRank_ = k.grid().size();
    if (k.collectiveId()) {
      auto v = constInt(*k.collectiveId(), "collective_id");
      if (v && *v < 0)
        diags_.error(k.collectiveId()->range(), "invalid-size",
                     fmt::format("collective_id must not be negative, got {}", *v));
      else
        k.setCollectiveIdValue(v);
    }
    if (Expr *skip = k.skipDeviceBarrier()) {
      Type t = check(*skip);
      if (!t.isError() && t.kind != TypeKind::Bool)
        diags_.error(
            skip->range(), "type-mismatch",
            fmt::format("skip_device_barrier needs a condition (true or false), not {}", t.str()));
      else if (!t.isError()) {
        IntEvalResult r = evalIntExpr(*skip, constantLeaf, /*condition=*/true);
        if (r.status == IntEvalStatus::Ok)
          k.setSkipDeviceBarrierValue(*r.value != 0);
        else if (r.status == IntEvalStatus::DivisionByZero)
          diags_.error(r.where->range(), "division-by-zero", "division by zero");
        else if (r.status == IntEvalStatus::Overflow)
          diags_.error(r.where->range(), "overflow", "integer overflow in a constant expression");
        else
          diags_.error(skip->range(), "not-constant",
                       "skip_device_barrier must be a compile-time constant");
      }
    }
    barrier_ = k.barrier();
    grid_ = &k.gridValues();
    block(k.body());
  }

  // A sequence (docs/language.md "Kernel sequences"): its arrays, and calls that
  // name a kernel and pass one array of the same kind, element type and shape to
  // each of its parameters.
  void sequenceDecl(SequenceDecl &q) {
    ScopeGuard scope(*this);
    std::map<std::string, const Decl *> arrays;
    for (auto &b : q.buffers()) {
      bufferDecl(*b);
      arrays.emplace(b->name(), b.get());
    }
    for (auto &sp : q.sems()) {
      semDecl(*sp);
      arrays.emplace(sp->name(), sp.get());
    }
    if (q.calls().empty())
      diags_.error(q.range(), "empty-sequence", "a sequence calls at least one kernel");
    for (SequenceCall &call : q.calls()) {
      auto k = kernels_.find(call.kernel);
      if (k == kernels_.end()) {
        diags_.error(call.kernelRange, "unknown-kernel",
                     fmt::format("no kernel named '{}'", call.kernel));
        continue;
      }
      call.decl = k->second;
      std::vector<const Decl *> params = k->second->paramOrder();
      if (params.size() != call.args.size()) {
        diags_
            .error(call.range, "arg-count",
                   fmt::format("kernel '{}' takes {} argument{}, got {}", call.kernel,
                               params.size(), params.size() == 1 ? "" : "s", call.args.size()))
            .notes.push_back(note(k->second->range(), "kernel declared here"));
        continue;
      }
      bool ok = true;
      std::set<std::string> seen;
      for (size_t i = 0; i < params.size(); ++i) {
        const auto &[name, range] = call.args[i];
        auto a = arrays.find(name);
        if (a == arrays.end()) {
          diags_.error(
              range, "unknown-name",
              fmt::format("unknown name '{}': a call passes arrays of the sequence", name));
          ok = false;
          continue;
        }
        if (!seen.insert(name).second) {
          diags_.error(range, "argument-mismatch",
                       fmt::format("'{}' is passed twice to '{}'; a kernel that reads and "
                                   "writes an array takes it once, as an inout parameter",
                                   name, call.kernel));
          ok = false;
          continue;
        }
        if (std::string why = mismatch(*a->second, *params[i]); !why.empty()) {
          diags_
              .error(range, "argument-mismatch",
                     fmt::format("argument {} of '{}': {}", i + 1, call.kernel, why))
              .notes.push_back(note(params[i]->range(), "parameter declared here"));
          ok = false;
          continue;
        }
      }
      if (ok)
        for (const auto &[name, range] : call.args)
          call.argDecls.push_back(arrays.at(name));
    }
  }

  /// Why array `a` of a sequence cannot be passed to kernel parameter `p` ("" if it can).
  static std::string mismatch(const Decl &a, const Decl &p) {
    const auto *ab = dynCast<BufferDecl>(&a);
    const auto *pb = dynCast<BufferDecl>(&p);
    const auto *as = dynCast<SemDecl>(&a);
    const auto *ps = dynCast<SemDecl>(&p);
    auto dimsText = [](const std::vector<int64_t> &d) {
      return fmt::format("[{}]", fmt::join(d, ", "));
    };
    if (ab && ps)
      return fmt::format("'{}' is a buffer, parameter '{}' a semaphore", a.name(), p.name());
    if (as && pb)
      return fmt::format("'{}' is a semaphore, parameter '{}' a buffer", a.name(), p.name());
    if (ab && pb) {
      if (ab->isTable() && !pb->tableFromCall())
        return fmt::format("'{}' is a table, and parameter '{}' cannot take it: a table "
                           "parameter is 'in' SMEM of an integer type ('in {}: smem {}{}')",
                           a.name(), p.name(), p.name(), toString(ab->dtype()),
                           dimsText(ab->shapeValues()));
      if (!ab->isTable() && pb->tableFromCall())
        return fmt::format("parameter '{}' is a table (another call passes it a table of the "
                           "sequence), and '{}' is a buffer without contents: pass a table",
                           p.name(), a.name());
      if (ab->dtype() != pb->dtype())
        return fmt::format("'{}' has element type {}, parameter '{}' {}", a.name(),
                           toString(ab->dtype()), p.name(), toString(pb->dtype()));
      if (ab->shapeValues() != pb->shapeValues())
        return fmt::format("'{}' has shape {}, parameter '{}' {}", a.name(),
                           dimsText(ab->shapeValues()), p.name(), dimsText(pb->shapeValues()));
      if (ab->space() != pb->space() && ab->space() != MemSpace::Any &&
          pb->space() != MemSpace::Any)
        return fmt::format("'{}' is in {}, parameter '{}' in {}", a.name(), toString(ab->space()),
                           p.name(), toString(pb->space()));
      return "";
    }
    if (as && ps) {
      if (as->semKind() != ps->semKind())
        return fmt::format("'{}' is a {}, parameter '{}' a {}", a.name(),
                           as->semKind() == SemKind::Dma ? "dma_sem" : "sem", p.name(),
                           ps->semKind() == SemKind::Dma ? "dma_sem" : "sem");
      if (as->dimValues() != ps->dimValues())
        return fmt::format("'{}' has dimensions {}, parameter '{}' {}", a.name(),
                           dimsText(as->dimValues()), p.name(), dimsText(ps->dimValues()));
      return "";
    }
    return "not an array";
  }

  void bufferDecl(BufferDecl &b) {
    bool ok = true;
    std::vector<int64_t> shape = dims(b.shape(), fmt::format("a dimension of '{}'", b.name()), ok);
    b.setShapeValues(shape);
    if (b.isTable() || tables_.count(b.name()))
      table(b, ok);
    if (coresPerDevice() > 1)
      coreMemory(b);
    declare(b);
  }

  // The memories a kernel over a TensorCore mesh of several cores may declare
  // (docs/model.md "TensorCores"): its parameters live in the HBM its cores share,
  // and its scratch in the VMEM, SMEM and semaphores each core has of its own.
  void coreMemory(const BufferDecl &b) {
    const bool shared = b.space() == MemSpace::Hbm || b.space() == MemSpace::Any;
    if (b.storage() == Storage::KernelParam && !shared && !b.isTable())
      diags_.error(b.range(), "unsupported",
                   fmt::format("parameter '{}' in {}: a kernel over a TensorCore mesh of more "
                               "than one core takes its operands in hbm or any (\"TensorCoreMesh "
                               "does not support VMEM inputs/outputs when there are >1 cores\", "
                               "jax/_src/pallas/mosaic/core.py); allocate {} scratch and copy "
                               "into it",
                               b.name(), toString(b.space()), toString(b.space())));
    else if ((b.storage() == Storage::Scratch || b.storage() == Storage::Scoped) && shared)
      diags_.error(b.range(), "unsupported",
                   fmt::format("scratch '{}' in {}: an allocation in the HBM that the cores of "
                               "a device share, made by each core on its own, is not modelled "
                               "(docs/model.md \"TensorCores\"); pass it in as a parameter",
                               b.name(), toString(b.space())));
  }

  // A table: an `in` SMEM integer kernel parameter with contents for the instance
  // (docs/language.md "Tables").
  void table(BufferDecl &b, bool shapeOk) {
    if (!b.isTable()) {
      // Named by an override but declared without contents: not a table.
      return;
    }
    // A parameter that a sequence passes a table: the argument's contents, per call
    // (markTablesFromCalls has checked its kind).
    if (!b.tableInit())
      return;
    usedTables_.insert(b.name());
    if (!canBeTable(b)) {
      diags_.error(b.range(), "table-kind",
                   fmt::format("table '{}' must be an 'in' smem integer parameter (e.g. 'in {}: "
                               "smem i32[4] = [...]'), like a Pallas scalar-prefetch operand",
                               b.name(), b.name()));
      return;
    }
    // The default contents are checked even when overridden.
    TableValue literal;
    literal.shape = b.tableInit()->shape;
    literal.origin = "the default";
    bool ok = shapeOk;
    for (auto &e : b.tableInit()->elements) {
      auto v = constInt(*e, fmt::format("an element of table '{}'", b.name()));
      ok = ok && v.has_value();
      literal.values.push_back(v.value_or(0));
      if (v && !fitsDtype(*v, b.dtype())) {
        diags_.error(e->range(), "table-value",
                     fmt::format("{} does not fit in the element type {} of table '{}'", *v,
                                 toString(b.dtype()), b.name()));
        ok = false;
      }
    }
    if (!ok)
      return;
    auto over = tables_.find(b.name());
    const TableValue &value = over != tables_.end() ? over->second : literal;
    support::SourceRange where =
        over != tables_.end() ? support::SourceRange{noPosition(), {}} : b.tableInit()->range;
    if (over != tables_.end())
      for (int64_t v : value.values)
        if (!fitsDtype(v, b.dtype())) {
          diags_.error(
              where, "table-value",
              fmt::format("{} contents: {} does not fit in the element type {} of table '{}'",
                          value.origin, v, toString(b.dtype()), b.name()));
          return;
        }
    const std::vector<int64_t> &shape = b.shapeValues();
    int64_t count = 1;
    for (int64_t d : shape)
      count *= d;
    std::vector<std::vector<int64_t>> rows;
    if (value.shape == shape) {
      rows.push_back(value.values);
    } else if (meshDevices_ > 0 && value.shape.size() == shape.size() + 1 &&
               value.shape[0] == meshDevices_ &&
               std::equal(shape.begin(), shape.end(), value.shape.begin() + 1)) {
      for (int64_t d = 0; d < meshDevices_; ++d)
        rows.emplace_back(value.values.begin() + d * count, value.values.begin() + (d + 1) * count);
    } else {
      diags_.error(
          where, "table-shape",
          fmt::format("{} contents of table '{}' have shape {}; expected {} (every device) or {} "
                      "(one row "
                      "per device of the {}-device mesh)",
                      value.origin, b.name(), prim::shapeText(value.shape), prim::shapeText(shape),
                      prim::shapeText(withDevices(shape)), meshDevices_));
      return;
    }
    b.setTableRows(std::move(rows));
    b.setTableOrigin(value.origin);
  }

  std::vector<int64_t> withDevices(const std::vector<int64_t> &shape) const {
    std::vector<int64_t> s{meshDevices_};
    s.insert(s.end(), shape.begin(), shape.end());
    return s;
  }

  static bool fitsDtype(int64_t v, DType t) {
    switch (t) {
    case DType::I32:
      return v >= INT32_MIN && v <= INT32_MAX;
    case DType::I16:
      return v >= INT16_MIN && v <= INT16_MAX;
    case DType::I8:
      return v >= INT8_MIN && v <= INT8_MAX;
    case DType::U8:
      return v >= 0 && v <= UINT8_MAX;
    case DType::U32:
      return v >= 0 && v <= UINT32_MAX;
    default:
      return false;
    }
  }

  void semDecl(SemDecl &s) {
    bool ok = true;
    std::vector<int64_t> d = dims(s.dims(), fmt::format("a dimension of '{}'", s.name()), ok);
    s.setDimValues(d);
    declare(s);
  }

  void varDecl(VarDecl &v) {
    bool ok = true;
    std::vector<int64_t> d = dims(v.dims(), fmt::format("a dimension of '{}'", v.name()), ok);
    v.setDimValues(d);
    if (Expr *init = v.init()) {
      Type t = check(*init);
      if (isArray(t)) {
        // A value variable: a Python name rebound to arrays.
        v.setIsValue(true);
        if (!staticShape(t.shape))
          diags_.error(init->range(), "unsupported",
                       fmt::format("a var holds an array value of a shape known when the kernel "
                                   "is checked; this one has shape {}",
                                   prim::shapeText(t.shape)));
      } else {
        integerVarValue(*init, v.name(), &t);
      }
    }
    declare(v);
  }

  // The value of an integer variable (`var n = e`, `n = e`, `n += e`): an integer known
  // when the kernel is instantiated (lowering evaluates it, like a let).
  void integerVarValue(Expr &e, const std::string &name, const Type *checked = nullptr) {
    Type t = checked ? *checked : check(e);
    if (t.isError())
      return;
    if (t.kind != TypeKind::Int)
      diags_.error(e.range(), "type-mismatch",
                   fmt::format("integer variable '{}' holds an integer, not {}", name, t.str()));
    else if (t.runtime)
      diags_.error(e.range(), "unsupported",
                   fmt::format("integer variable '{}' holds integers known when the kernel is "
                               "instantiated (it decides loop bounds, slices and devices); this "
                               "value is read from a semaphore at run time",
                               name));
  }

  // --- Statements ----------------------------------------------------------

  size_t gridRank_ = 0;
  const std::vector<int64_t> *grid_ = nullptr; // empty if the grid had errors
  const SemDecl *barrier_ = nullptr;

  void block(Block &b) {
    ScopeGuard scope(*this);
    for (auto &s : b.stmts())
      stmt(*s);
  }

  void scratchDecls(std::vector<std::unique_ptr<Decl>> &decls) {
    for (auto &d : decls) {
      if (auto *b = dynCast<BufferDecl>(d.get()))
        bufferDecl(*b);
      else if (auto *s = dynCast<SemDecl>(d.get()))
        semDecl(*s);
    }
  }

  void stmt(Stmt &s) {
    switch (s.kind()) {
    case Node::Kind::ScratchStmt:
      scratchDecls(cast<ScratchStmt>(s).decls());
      return;
    case Node::Kind::RunScopedStmt: {
      auto &r = cast<RunScopedStmt>(s);
      ScopeGuard scope(*this);
      scratchDecls(r.decls());
      block(r.body());
      return;
    }
    case Node::Kind::LetStmt:
      letDecl(cast<LetStmt>(s));
      return;
    case Node::Kind::VarStmt:
      for (auto &v : cast<VarStmt>(s).decls())
        varDecl(*v);
      return;
    case Node::Kind::IfStmt:
      for (auto &branch : cast<IfStmt>(s).branches()) {
        expectBool(*branch.cond, "an if condition");
        block(*branch.body);
      }
      if (auto *e = cast<IfStmt>(s).elseBody())
        block(*e);
      return;
    case Node::Kind::ForStmt: {
      auto &f = cast<ForStmt>(s);
      expectInt(f.lo(), "a loop bound");
      expectInt(f.hi(), "a loop bound");
      ScopeGuard scope(*this);
      declare(f.var());
      block(f.body());
      return;
    }
    case Node::Kind::EmitPipelineStmt:
      pipeline(cast<EmitPipelineStmt>(s));
      return;
    case Node::Kind::StoreStmt:
      store(cast<StoreStmt>(s));
      return;
    case Node::Kind::DmaStmt:
      dmaStmt(cast<DmaStmt>(s));
      return;
    case Node::Kind::SignalStmt: {
      auto &sg = cast<SignalStmt>(s);
      Type t = expectSemaphore(sg.sem(), "signal");
      if (t.kind == TypeKind::Sem && t.semKind == SemKind::Dma)
        diags_.error(sg.sem().range(), "sem-kind",
                     "cannot signal a DMA semaphore; only sem and barrier semaphores can be "
                     "signalled");
      if (sg.inc())
        positiveAmount(*sg.inc(), "a signal increment");
      if (sg.device())
        device(*sg.device());
      if (Expr *core = sg.coreIndex()) {
        // pl.semaphore_signal(sem, inc, core_index=i): core i of the target device.
        if (!tcMesh_) {
          check(*core);
          diags_.error(core->range(), "bad-argument",
                       "core_index names a core of the TensorCore mesh, and the file declares "
                       "no tensorcore_mesh");
        } else if (expectInt(*core, "a core index")) {
          coordinateInRange(*core, coreAxis());
          if (namesCore(sg.device()))
            diags_.error(core->range(), "bad-argument",
                         "the signal names its core twice: in its device mapping and as "
                         "core_index (Pallas: \"Cannot specify both `core_index` and the core "
                         "axis in `device_id`\")");
        }
      }
      return;
    }
    case Node::Kind::WaitStmt: {
      auto &w = cast<WaitStmt>(s);
      Type t = expectSemaphore(w.sem(), "wait");
      if (t.kind == TypeKind::Sem && t.semKind == SemKind::Dma)
        diags_.error(w.sem().range(), "sem-kind",
                     "cannot wait on a DMA semaphore with wait(); wait on the DMA's "
                     "descriptor (c.wait(), c.wait_send(), c.wait_recv())");
      if (w.value())
        positiveAmount(*w.value(), "a wait value");
      return;
    }
    default:
      return;
    }
  }

  void positiveAmount(Expr &e, std::string_view what) {
    if (!expectInt(e, what))
      return;
    if (auto v = maybeConst(e); v && *v < 1)
      diags_.error(e.range(), "invalid-value",
                   fmt::format("{} must be at least 1, got {}", what, *v));
    else if (v && *v > kMaxSemaphoreAmount)
      diags_.error(e.range(), "invalid-value",
                   fmt::format("{} must be at most {} (semaphores are 32-bit), got {}", what,
                               kMaxSemaphoreAmount, *v));
  }

  void letDecl(LetStmt &stmt) {
    LetDecl &l = stmt.decl();
    Expr &init = l.init();
    Type t;
    if (auto *c = dynCast<CallExpr>(&init); c && c->builtin() == Builtin::Read)
      t = check(init, /*topOfLet=*/true);
    else if (isa<CopyExpr>(init) || isa<RemoteCopyExpr>(init))
      t = check(init, true);
    else {
      // The names after the first of `let a, b = split(x, ...)` check their own copy of
      // the same source: its diagnostics were reported with the first.
      const size_t before = diags_.diagnostics().size();
      topLetSplit_ = dynCast<ComputeExpr>(&init);
      t = check(init);
      topLetSplit_ = nullptr;
      if (stmt.tupleIndex() > 0) {
        diags_.truncate(before);
        declare(l);
        return;
      }
    }
    if (auto *split = dynCast<ComputeExpr>(&init);
        !t.isError() && stmt.tupleIndex() == 0 && split && split->op() == ComputeOp::Split &&
        split->dimValues().size() == 1 &&
        static_cast<int64_t>(stmt.tupleSize()) != split->dimValues()[0]) {
      diags_.error(init.range(), "bad-let",
                   fmt::format("split() makes {} parts but the let binds {} name{}",
                               split->dimValues()[0], stmt.tupleSize(),
                               stmt.tupleSize() == 1 ? "" : "s"));
      t = Type::error();
    }
    if (!t.isError() && t.kind != TypeKind::Int && t.kind != TypeKind::Bool &&
        t.kind != TypeKind::Descriptor && !isArray(t))
      diags_.error(init.range(), "type-mismatch",
                   fmt::format("let binds an integer, a condition, a DMA descriptor or an array "
                               "value, not {}",
                               t.str()));
    else if (isArray(t) && !staticShape(t.shape))
      diags_.error(init.range(), "unsupported",
                   fmt::format("a let binds an array value of a shape known when the kernel is "
                               "checked; this one has shape {} (a slice bound known only per "
                               "device): store it to a ref instead",
                               prim::shapeText(t.shape)));
    declare(l);
  }

  static bool staticShape(const std::vector<int64_t> &shape) {
    return std::none_of(shape.begin(), shape.end(), [](int64_t d) { return d == Type::kDynamic; });
  }

  // True for a descriptor variable or one element of a descriptor array.
  static bool isOneDescriptorVar(const Type &t) {
    return t.kind == TypeKind::DescriptorVar && t.semRank == 0;
  }

  // `v = copy(...)`, `v = c`, `vs[i] = async_remote_copy(...)`: Python's rebinding of a
  // variable that holds a descriptor.
  void descriptorAssign(StoreStmt &s, const Type &target) {
    Expr &value = s.value();
    Type v = check(value, /*topOfLet=*/isa<CopyExpr>(value) || isa<RemoteCopyExpr>(value));
    if (target.isError())
      return;
    if (target.semRank > 0) {
      diags_.error(s.target().range(), "index-count",
                   fmt::format("assign one element of the descriptor array: index it ({} more "
                               "index{})",
                               target.semRank, target.semRank == 1 ? "" : "es"));
      return;
    }
    if (s.accumulate()) {
      diags_.error(s.range(), "type-mismatch",
                   "'+=' does not apply to a descriptor variable; assign it with '='");
      return;
    }
    if (v.isError())
      return;
    if (v.kind != TypeKind::Descriptor && !isOneDescriptorVar(v))
      diags_.error(value.range(), "type-mismatch",
                   fmt::format("a descriptor variable holds a DMA descriptor (copy, remote_copy, "
                               "async_copy, async_remote_copy or another descriptor), not {}",
                               v.str()));
  }

  void store(StoreStmt &s) {
    Type target = check(s.target());
    const NameExpr *base = dynCast<NameExpr>(&s.target());
    if (const auto *ix = dynCast<IndexExpr>(&s.target()))
      base = &ix->base();
    if (const auto *v = base ? dynCast<VarDecl>(base->decl()) : nullptr; v && v->isInteger()) {
      // `n = e` / `n += e`: rebinds an integer variable.
      if (!isa<NameExpr>(s.target()))
        diags_.error(s.target().range(), "type-mismatch",
                     fmt::format("integer variable '{}' cannot be indexed", v->name()));
      integerVarValue(s.value(), v->name());
      return;
    }
    if (const auto *v = base ? dynCast<VarDecl>(base->decl()) : nullptr; v && v->isValue()) {
      // `acc = e` / `acc += e`: rebinds a value variable to an array of its shape.
      Type value = check(s.value());
      if (!isa<NameExpr>(s.target())) {
        diags_.error(s.target().range(), "type-mismatch",
                     fmt::format("assign the whole value variable '{}'; a slice of it is read, "
                                 "not assigned",
                                 v->name()));
        return;
      }
      if (value.isError() || target.isError())
        return;
      if (!isScalar(value) && !isArray(value))
        diags_.error(
            s.value().range(), "type-mismatch",
            fmt::format("value variable '{}' holds an array, not {}", v->name(), value.str()));
      else if (isArray(value) && !shapesCompatible(value.shape, target.shape))
        diags_.error(s.range(), "shape-mismatch",
                     fmt::format("value variable '{}' has shape {}; the value has shape {}",
                                 v->name(), prim::shapeText(target.shape),
                                 prim::shapeText(value.shape)));
      else if (isArray(value) && value.dtype != target.dtype && !value.weak)
        diags_.error(s.range(), "dtype-mismatch",
                     fmt::format("value variable '{}' holds {} elements; the value has {}",
                                 v->name(), toString(target.dtype), toString(value.dtype)));
      return;
    }
    if (target.kind == TypeKind::DescriptorVar || (base && isa<VarDecl>(base->decl())))
      return descriptorAssign(s, target);
    Type value = check(s.value());
    if (target.isError() || value.isError())
      return;
    if (const auto *b = base ? dynCast<BufferDecl>(base->decl()) : nullptr;
        b && b->isIntegerScratch() && target.kind == TypeKind::Int) {
      // `meta[i] = e`: an element of an integer scratch. An integer is tracked by
      // lowering; an array element (data) is stored, and makes the element data.
      bool data =
          isArray(value) && value.dtype == b->dtype() &&
          std::all_of(value.shape.begin(), value.shape.end(), [](int64_t d) { return d == 1; });
      if (value.kind != TypeKind::Int && !data)
        diags_.error(s.value().range(), "type-mismatch",
                     fmt::format("an element of integer scratch '{}' ({}) holds an integer, not "
                                 "{}",
                                 b->name(), toString(b->dtype()), value.str()));
      return;
    }
    if (target.kind != TypeKind::Ref) {
      diags_.error(s.target().range(), "type-mismatch",
                   fmt::format("can only store to a buffer, not to {}", target.str()));
      return;
    }
    checkWritable(s.target(), "store to");
    if (!isScalar(value) && !isArray(value)) {
      diags_.error(s.value().range(), "type-mismatch",
                   fmt::format("cannot store {} into a buffer", value.str()));
      return;
    }
    if (isArray(value)) {
      if (!shapesCompatible(target.shape, value.shape))
        diags_.error(s.range(), "shape-mismatch",
                     fmt::format("cannot store a value of shape {} into a slice of shape {}",
                                 prim::shapeText(value.shape), prim::shapeText(target.shape)));
      else if (value.dtype != target.dtype && !value.weak) // a weak value is a Python number's
        diags_.error(s.range(), "dtype-mismatch",
                     fmt::format("cannot store a {} value into a {} buffer", toString(value.dtype),
                                 toString(target.dtype)));
    }
  }

  bool inPipeline_ = false;
  // The split() that is the value of the let being checked (the only place for one).
  const ComputeExpr *topLetSplit_ = nullptr;

  // `emit_pipeline(...)(refs) lambda blocks { body }` (docs/language.md "Pipelines").
  void pipeline(EmitPipelineStmt &p) {
    if (inPipeline_) {
      diags_.error(p.range(), "unsupported",
                   "an emit_pipeline inside an emit_pipeline body (a nested pipeline) is not "
                   "supported");
      return;
    }
    bool gridOk = true;
    std::vector<int64_t> grid = dims(p.grid(), "an emit_pipeline grid dimension", gridOk);
    if (p.grid().empty()) {
      diags_.error(p.range(), "invalid-size",
                   "emit_pipeline needs a grid of at least one dimension, e.g. 'grid = (4,)'");
      gridOk = false;
    }
    if (gridOk)
      p.setGridValues(grid);
    for (PipelineOperand &op : p.operands()) {
      Type rt = check(*op.ref);
      bool refOk = !rt.isError();
      if (refOk && rt.kind != TypeKind::Ref) {
        diags_.error(op.ref->range(), "type-mismatch",
                     fmt::format("an emit_pipeline operand is a buffer, not {}", rt.str()));
        refOk = false;
      }
      const BufferDecl *src = refOk ? bufferOf(*op.ref) : nullptr;
      if (src && src->isTable()) {
        diags_.error(op.ref->range(), "type-mismatch",
                     fmt::format("table '{}' cannot be an emit_pipeline operand (it is not a ref)",
                                 src->name()));
        refOk = false;
      }
      if (refOk && op.output) {
        checkWritable(*op.ref, "write emit_pipeline output blocks back to");
        markDmaWritten(*op.ref);
      }
      if (refOk)
        op.block->setDType(rt.dtype);
      bool shapeOk = true;
      for (auto &e : op.block->shape())
        if (auto *n = dynCast<NameExpr>(e.get()); n && n->name() == "None") {
          diags_.error(e->range(), "unsupported",
                       "a squeezed block dimension (None / pl.Squeezed()) is not supported; "
                       "give it size 1 and index the block ref with 0");
          shapeOk = false;
        }
      if (!shapeOk)
        continue;
      std::vector<int64_t> bs = dims(op.block->shape(), "a block dimension", shapeOk);
      op.block->setShapeValues(bs);
      if (refOk && shapeOk) {
        if (bs.size() != rt.shape.size())
          diags_.error(op.specRange, "pipeline-block-rank",
                       fmt::format("the block shape has {} dimension{} but the operand has {} ({})",
                                   bs.size(), bs.size() == 1 ? "" : "s", rt.shape.size(),
                                   rt.str()));
        else
          for (size_t d = 0; d < bs.size(); ++d)
            if (rt.shape[d] != Type::kDynamic && rt.shape[d] % bs[d] != 0)
              diags_.error(op.block->shape()[d]->range(), "pipeline-block-shape",
                           fmt::format("block dimension {} is {}, which does not divide the "
                                       "operand's dimension {} ({})",
                                       d, bs[d], d, rt.shape[d]));
      }
      if (gridOk && op.mapParams.size() != grid.size())
        diags_.error(op.mapRange, "pipeline-index-map-arity",
                     fmt::format("the index map takes {} parameter{} but the grid has {} "
                                 "dimension{}",
                                 op.mapParams.size(), op.mapParams.size() == 1 ? "" : "s",
                                 grid.size(), grid.size() == 1 ? "" : "s"));
      if (op.mapResult.size() != op.block->shape().size())
        diags_.error(op.mapRange, "pipeline-index-map-arity",
                     fmt::format("the index map returns {} block ind{} but the block shape has {} "
                                 "dimension{}",
                                 op.mapResult.size(), op.mapResult.size() == 1 ? "ex" : "ices",
                                 op.block->shape().size(),
                                 op.block->shape().size() == 1 ? "" : "s"));
      // The index map runs in the pipeline's grid environment (program_id is its index).
      ScopeGuard scope(*this);
      for (auto &param : op.mapParams)
        declare(*param);
      size_t outerRank = gridRank_;
      const std::vector<int64_t> *outerGrid = grid_;
      gridRank_ = p.grid().size();
      grid_ = &p.gridValues();
      for (auto &e : op.mapResult)
        expectInt(*e, "a block index");
      gridRank_ = outerRank;
      grid_ = outerGrid;
    }
    // The body: its block refs, and program_id / num_programs of the pipeline's grid
    // (Pallas runs the body in the pipeline's grid environment).
    ScopeGuard scope(*this);
    for (PipelineOperand &op : p.operands())
      declare(*op.block);
    size_t outerRank = gridRank_;
    const std::vector<int64_t> *outerGrid = grid_;
    gridRank_ = p.grid().size();
    grid_ = &p.gridValues();
    inPipeline_ = true;
    block(p.body());
    inPipeline_ = false;
    gridRank_ = outerRank;
    grid_ = outerGrid;
  }

  // A DMA writes `ref`: an integer scratch it names holds data from then on (lowering
  // refuses to evaluate its elements: docs/language.md "Integer scratch").
  static void markDmaWritten(const Expr &ref) {
    if (const auto *sel = dynCast<SelectRefExpr>(&ref)) {
      for (const ExprPtr &choice : sel->choices())
        markDmaWritten(*choice);
      return;
    }
    if (const BufferDecl *b = bufferOf(ref); b && b->isIntegerScratch())
      const_cast<BufferDecl *>(b)->setDmaWritten(true);
  }

  // The buffer a ref expression names, or null.
  static const BufferDecl *bufferOf(const Expr &ref) {
    const NameExpr *n = dynCast<NameExpr>(&ref);
    if (auto *ix = dynCast<IndexExpr>(&ref))
      n = &ix->base();
    return n ? dynCast<BufferDecl>(n->decl()) : nullptr;
  }

  void checkWritable(const Expr &ref, std::string_view action) {
    const BufferDecl *b = bufferOf(ref);
    if (b && b->direction() == Direction::In)
      diags_
          .error(ref.range(), "write-to-input",
                 fmt::format("cannot {} '{}': it is an 'in' parameter", action, b->name()))
          .notes.push_back(note(b->nameRange(), "declared 'in' here"));
  }

  void dmaStmt(DmaStmt &d) {
    Type t = check(d.descriptor());
    if (Expr *p = d.priority()) {
      // Mosaic's EnqueueDMAOp::verify (jaxlib/mosaic/dialect/tpu/tpu_ops.cc): "only
      // support priority 0 or 1", and "non-zero priority is not supported for remote
      // DMA".
      if (auto v = constInt(*p, "a DMA priority")) {
        if (*v != 0 && *v != 1)
          diags_.error(p->range(), "invalid-priority",
                       fmt::format("DMA priority {}: Mosaic supports priority 0 or 1", *v));
        else if (*v == 1 && !t.isError() && t.kind == TypeKind::Descriptor && t.remote)
          diags_.error(p->range(), "invalid-priority",
                       "priority 1 on a remote_copy: Mosaic supports a non-zero priority only "
                       "on local DMAs");
        else
          d.setPriorityValue(*v);
      }
    }
    if (t.isError())
      return;
    // A descriptor variable's kind is that of the descriptor it holds on the path that
    // reaches here: lowering checks it (and that it holds one).
    if (isOneDescriptorVar(t))
      return;
    if (t.kind == TypeKind::DescriptorVar) {
      diags_.error(d.descriptor().range(), "index-count",
                   fmt::format("{}() needs one descriptor; index the descriptor array ({} more "
                               "index{})",
                               toString(d.method()), t.semRank, t.semRank == 1 ? "" : "es"));
      return;
    }
    if (t.kind != TypeKind::Descriptor) {
      diags_.error(
          d.descriptor().range(), "type-mismatch",
          fmt::format("'{}' is not a DMA descriptor but {}", d.descriptorName().name(), t.str()));
      return;
    }
    if (!t.remote && (d.method() == DmaMethod::WaitSend || d.method() == DmaMethod::WaitRecv))
      diags_.error(d.range(), "descriptor-kind",
                   fmt::format("{}() needs a remote_copy descriptor; '{}' is a local copy "
                               "(use wait())",
                               toString(d.method()), d.descriptorName().name()));
    else if (t.regular && d.method() != DmaMethod::Start)
      // A descriptor wait takes the byte count; a regular semaphore gets 1 per DMA.
      diags_.error(d.range(), "sem-kind",
                   fmt::format("cannot {}() '{}': its semaphores are regular (sem), which the "
                               "DMA increments by 1 when its side completes, not by its byte "
                               "count; wait(sem, 1) on the semaphore instead",
                               toString(d.method()), d.descriptorName().name()));
  }

  // --- Expressions ---------------------------------------------------------

  bool expectInt(Expr &e, std::string_view what) {
    Type t = check(e);
    if (t.isError())
      return false;
    if (t.kind != TypeKind::Int) {
      diags_.error(e.range(), "type-mismatch",
                   fmt::format("{} must be an integer, not {}", what, t.str()));
      return false;
    }
    return true;
  }

  void expectBool(Expr &e, std::string_view what) {
    Type t = check(e);
    if (!t.isError() && t.kind != TypeKind::Bool && !isOneDescriptorVar(t))
      diags_.error(e.range(), "type-mismatch",
                   fmt::format("{} must be a condition, not {}", what, t.str()));
  }

  Type expectSemaphore(Expr &e, std::string_view what, bool dmaOperand = false) {
    Type t = dmaOperand ? dmaOperandType(e) : check(e);
    if (t.isError())
      return t;
    if (t.kind != TypeKind::Sem) {
      diags_.error(e.range(), "type-mismatch",
                   fmt::format("{} needs a semaphore, not {}", what, t.str()));
      return Type::error();
    }
    if (t.semRank > 0) {
      diags_.error(e.range(), "index-count",
                   fmt::format("{} needs one semaphore; index the semaphore array ({} more "
                               "index{})",
                               what, t.semRank, t.semRank == 1 ? "" : "es"));
      return Type::error();
    }
    return t;
  }

  Type check(Expr &e, bool topOfLet = false) {
    Type t = compute(e, topOfLet);
    e.setType(t);
    return t;
  }

  Type intType(bool runtime = false) {
    Type t = Type::simple(TypeKind::Int);
    t.runtime = runtime;
    return t;
  }

  // The integer result of an operation on integers `l` and `r`.
  Type intType(const Type &l, const Type &r) {
    Type t = intType(l.runtime || r.runtime);
    t.scratch = l.scratch || r.scratch;
    return t;
  }

  Type compute(Expr &e, bool topOfLet) {
    switch (e.kind()) {
    case Node::Kind::ErrorExpr:
      return Type::error();
    case Node::Kind::IntLiteral:
      return intType();
    case Node::Kind::FloatLiteral:
      return Type::simple(TypeKind::Float);
    case Node::Kind::BoolLiteral:
      return Type::simple(TypeKind::Bool);
    case Node::Kind::NameExpr: {
      Type t = name(cast<NameExpr>(e));
      if (auto *b = dynCast<BufferDecl>(cast<NameExpr>(e).decl());
          b && b->isTable() && !tableBaseOk_) {
        diags_.error(e.range(), "type-mismatch",
                     fmt::format("table '{}' is read one element at a time in integer "
                                 "expressions ('{}[i]'), not used as a ref",
                                 b->name(), b->name()));
        return Type::error();
      }
      return t;
    }
    case Node::Kind::SelectExpr:
      return select(cast<SelectExpr>(e));
    case Node::Kind::SelectRefExpr:
      diags_.error(e.range(), "misplaced-expr",
                   "select_ref(...) picks the source, destination or a semaphore of a DMA: it is "
                   "only allowed as an operand of copy / remote_copy (as Pallas' pl.select_ref "
                   "is only supported for DMAs)");
      return Type::error();
    case Node::Kind::UnaryExpr:
      return unary(cast<UnaryExpr>(e));
    case Node::Kind::BinaryExpr:
      return binary(cast<BinaryExpr>(e));
    case Node::Kind::CallExpr:
      return call(cast<CallExpr>(e), topOfLet);
    case Node::Kind::IndexExpr:
      return index(cast<IndexExpr>(e));
    case Node::Kind::TupleExpr:
    case Node::Kind::MappingExpr:
      diags_.error(e.range(), "misplaced-expr",
                   "device coordinates are only allowed as 'device = ...'");
      return Type::error();
    case Node::Kind::ComputeExpr:
      return computeOp(cast<ComputeExpr>(e));
    case Node::Kind::CopyExpr:
    case Node::Kind::RemoteCopyExpr:
      if (!topOfLet) {
        diags_.error(e.range(), "misplaced-expr",
                     "a DMA descriptor must be bound by a let or assigned to a descriptor "
                     "variable: 'let c = copy(...)'");
        return Type::error();
      }
      return copy(e);
    default:
      return Type::error();
    }
  }

  Type name(NameExpr &n) {
    const Decl *d = nullptr;
    if (n.name() == "barrier") {
      if (!barrier_) {
        diags_.error(n.range(), "no-collective-id",
                     "'barrier' needs a collective_id(k) attribute on the kernel");
        return Type::error();
      }
      d = barrier_;
    } else {
      d = lookup(n.name());
    }
    if (!d) {
      diags_.error(n.range(), "unknown-name",
                   fmt::format("unknown name '{}'{}", n.name(),
                               support::didYouMean(n.name(), visibleNames())));
      return Type::error();
    }
    n.setDecl(d);
    switch (d->kind()) {
    case Node::Kind::ParamDecl:
    case Node::Kind::ConstDecl:
    case Node::Kind::LoopVarDecl:
      return intType();
    case Node::Kind::LetDecl:
      // A let of a ref (`let v = x[0:2]`) binds the loaded value.
      return asValue(cast<LetDecl>(*d).init().type());
    case Node::Kind::VarDecl: {
      if (cast<VarDecl>(*d).isInteger())
        return intType();
      if (cast<VarDecl>(*d).isValue())
        return asValue(cast<VarDecl>(*d).init()->type());
      Type t = Type::simple(TypeKind::DescriptorVar);
      t.semRank = cast<VarDecl>(*d).dims().size();
      return t;
    }
    case Node::Kind::AxisDecl:
      return Type::simple(TypeKind::Axis);
    case Node::Kind::BufferDecl: {
      const auto &b = cast<BufferDecl>(*d);
      Type t = Type::simple(TypeKind::Ref);
      t.dtype = b.dtype();
      t.shape = b.shapeValues();
      return t;
    }
    case Node::Kind::SemDecl: {
      const auto &s = cast<SemDecl>(*d);
      Type t = Type::simple(TypeKind::Sem);
      t.semKind = s.semKind();
      t.semRank = s.dims().size();
      return t;
    }
    default:
      return Type::error();
    }
  }

  // Operand of value arithmetic: loading a ref gives a value of its shape.
  static Type asValue(Type t) {
    if (t.kind == TypeKind::Ref)
      t.kind = TypeKind::Value;
    return t;
  }

  Type unary(UnaryExpr &u) {
    Type t = check(u.operand());
    if (t.isError())
      return t;
    if (u.op() == UnaryOp::Not) {
      if (t.kind == TypeKind::Bool)
        return t;
      if (isOneDescriptorVar(t)) // `not v`: v holds no descriptor (is None)
        return Type::simple(TypeKind::Bool);
      diags_.error(u.range(), "type-mismatch",
                   fmt::format("'not' needs a condition, not {}", t.str()));
      return Type::error();
    }
    if (t.kind == TypeKind::Int || t.kind == TypeKind::Float)
      return t;
    if (isArray(t))
      return valueOp(u, {&t});
    diags_.error(u.range(), "type-mismatch", fmt::format("cannot negate {}", t.str()));
    return Type::error();
  }

  Type binary(BinaryExpr &b) {
    Type l = check(b.lhs());
    Type r = check(b.rhs());
    if (l.isError() || r.isError())
      return Type::error();
    std::string_view op = toString(b.op());
    auto mismatch = [&] {
      diags_.error(b.range(), "type-mismatch",
                   fmt::format("invalid operands to '{}': {} and {}", op, l.str(), r.str()));
      return Type::error();
    };
    switch (b.op()) {
    case BinaryOp::And:
    case BinaryOp::Or:
      // A descriptor variable as a condition: whether it holds a descriptor.
      if ((l.kind == TypeKind::Bool || isOneDescriptorVar(l)) &&
          (r.kind == TypeKind::Bool || isOneDescriptorVar(r)))
        return Type::simple(TypeKind::Bool);
      // jnp.logical_and / logical_or of masks (element-wise).
      if (l.kind == TypeKind::Mask && r.kind == TypeKind::Mask)
        return valueOp(b, {&l, &r});
      return mismatch();
    case BinaryOp::Eq:
    case BinaryOp::Ne:
      if (l.kind == TypeKind::Bool && r.kind == TypeKind::Bool)
        return Type::simple(TypeKind::Bool);
      [[fallthrough]];
    case BinaryOp::Lt:
    case BinaryOp::Le:
    case BinaryOp::Gt:
    case BinaryOp::Ge:
      if (l.kind == TypeKind::Int && r.kind == TypeKind::Int)
        return Type::simple(TypeKind::Bool);
      return valueComparison(b, l, r, mismatch);
    case BinaryOp::Rem:
    case BinaryOp::BitAnd:
    case BinaryOp::BitOr:
    case BinaryOp::BitXor:
    case BinaryOp::Shl:
    case BinaryOp::Shr:
      if (l.kind == TypeKind::Int && r.kind == TypeKind::Int)
        return intType(l, r);
      diags_.error(
          b.range(), "type-mismatch",
          fmt::format("'{}' is only defined on integers, not {} and {}", op, l.str(), r.str()));
      return Type::error();
    default:
      break;
    }
    // Arithmetic.
    if (l.kind == TypeKind::Int && r.kind == TypeKind::Int)
      return intType(l, r);
    bool lv = isScalar(l) || isArray(l), rv = isScalar(r) || isArray(r);
    if (!lv || !rv)
      return mismatch();
    if (b.op() == BinaryOp::Mod) {
      diags_.error(b.range(), "type-mismatch", "'%' is only defined on integers");
      return Type::error();
    }
    return valueOp(b, {&l, &r});
  }

  // `x > 0.0` on values: an element-wise mask, only allowed as the condition of
  // where(). Operands follow the rules of value arithmetic.
  template <typename Mismatch>
  Type valueComparison(BinaryExpr &b, const Type &l, const Type &r, Mismatch mismatch) {
    bool lv = isScalar(l) || isArray(l), rv = isScalar(r) || isArray(r);
    if (!lv || !rv || (!isArray(l) && !isArray(r)))
      return mismatch();
    return valueOp(b, {&l, &r});
  }

  // ---- Compute on values: every rule is the catalogue's (prim/Ops.def, prim::inferType).

  // The catalogue's view of a sema type (a value operand).
  static prim::ValueType toPrim(const Type &t) {
    switch (t.kind) {
    case TypeKind::Int:
      return prim::ValueType::scalar(prim::kWeakInt);
    case TypeKind::Float:
      return prim::ValueType::scalar(prim::kWeakFloat);
    case TypeKind::Mask:
      return prim::ValueType::mask(t.shape);
    case TypeKind::Bool:
      return prim::ValueType::cond();
    default:
      return prim::ValueType::array({t.dtype, t.weak}, t.shape);
    }
  }

  static Type fromPrim(const prim::ValueType &v) {
    switch (v.kind) {
    case prim::ValueType::Kind::Array: {
      Type t = Type::simple(TypeKind::Value);
      t.dtype = v.elem.dtype;
      t.weak = v.elem.weak;
      t.shape = v.shape;
      return t;
    }
    case prim::ValueType::Kind::Scalar:
      return Type::simple(TypeKind::Float);
    case prim::ValueType::Kind::Mask: {
      Type t = Type::simple(TypeKind::Mask);
      t.shape = v.shape;
      return t;
    }
    case prim::ValueType::Kind::Cond:
      return Type::simple(TypeKind::Bool);
    }
    return Type::error();
  }

  // The result of an operator on values (`a + b`, `a > b`, `m1 and m2`, `-x`, `max(a,
  // b)`): its catalogue op by the operator's spelling.
  Type valueOp(const Expr &e, std::initializer_list<const Type *> operands) {
    std::string_view spelling =
        isa<BinaryExpr>(e) ? toString(cast<BinaryExpr>(e).op()) : toString(cast<UnaryExpr>(e).op());
    auto op = prim::findOpByDkOperator(spelling, static_cast<int>(operands.size()));
    DKV_INVARIANT(op.has_value(), "every operator on values is a catalogue op");
    std::vector<prim::ValueType> types;
    for (const Type *t : operands)
      types.push_back(toPrim(*t));
    prim::TypeResult result = prim::inferType(*op, types, {}, fmt::format("'{}'", spelling));
    if (result.error) {
      diags_.error(e.range(), result.error->id, result.error->message);
      return Type::error();
    }
    return fromPrim(result.type);
  }

  // A compute call (`dot(a, b)`, `sum(x, axis = 1)`, ...): its operands checked, its
  // attributes evaluated by the kind of their parameter, and its type the catalogue's
  // (prim::inferType: JAX's typing, NumPy's broadcasting, the op's shape rule).
  Type computeOp(ComputeExpr &c) {
    const prim::Op op = c.op();
    const prim::OpRecord &rec = prim::record(op);
    const std::string fn = fmt::format("{}()", prim::name(op));
    auto &ops = c.operands();
    if (rec.shape == prim::ShapeRule::Split) {
      // jnp.split(x, n, axis=0): n equal parts along the axis; this is part `part`.
      if (&c != topLetSplit_) {
        diags_.error(c.range(), "misplaced-expr",
                     fmt::format("{} is the value of a let that binds one name per part: 'let "
                                 "a, b = {}(x, 2, axis = k)'",
                                 fn, prim::name(op)));
        return Type::error();
      }
      topLetSplit_ = nullptr;
    }
    // Operands: element-wise ops take numbers too, the others arrays; a `cond`
    // parameter takes a mask or a per-device condition.
    std::vector<prim::ValueType> operands;
    bool failed = false;
    for (size_t i = 0; i < ops.size(); ++i) {
      Type t = check(*ops[i]);
      if (t.isError()) {
        failed = true;
        continue;
      }
      const bool cond = rec.shape == prim::ShapeRule::Broadcast &&
                        prim::operandKind(op, i) == prim::ParamKind::Cond;
      if (cond && t.kind != TypeKind::Mask && t.kind != TypeKind::Bool) {
        diags_.error(ops[i]->range(), "type-mismatch",
                     fmt::format("the condition of {} is a comparison of values (x > 0.0) or a "
                                 "condition, not {}",
                                 fn, t.str()));
        failed = true;
      } else if (!cond && rec.shape == prim::ShapeRule::Broadcast && !isScalar(t) && !isArray(t) &&
                 !(t.kind == TypeKind::Mask &&
                   prim::operandKind(op, i) == prim::ParamKind::Value)) {
        diags_.error(ops[i]->range(), "type-mismatch",
                     fmt::format("{} takes values (arrays or numbers), not {}", fn, t.str()));
        failed = true;
      } else if (rec.shape != prim::ShapeRule::Broadcast && !isArray(t)) {
        diags_.error(
            ops[i]->range(), "type-mismatch",
            fmt::format("{} needs an array value (a ref or compute on refs), not {}", fn, t.str()));
        failed = true;
      }
      operands.push_back(toPrim(t));
    }
    if (failed)
      return Type::error();
    // Attributes, by the kind of their parameter in the op's signature.
    const prim::Signature &sig = prim::dkSignatures(op).front();
    auto paramName = [&](prim::ParamKind kind) {
      for (const prim::Param &p : sig.params)
        if (p.kind == kind)
          return p.name;
      return std::string_view("argument");
    };
    prim::Attrs attrs;
    attrs.dtype = c.dtype();
    attrs.keepdims = c.keepdims();
    if (c.axis()) {
      auto axis =
          constInt(*c.axis(), fmt::format("the {} of {}", paramName(prim::ParamKind::Axis), fn));
      if (!axis)
        return Type::error();
      attrs.axis = *axis;
    }
    const bool shapeDims =
        rec.shape == prim::ShapeRule::Reshape || rec.shape == prim::ShapeRule::Create;
    for (auto &d : c.dims()) {
      std::string what = shapeDims
                             ? fmt::format("a dimension of {}", fn)
                             : fmt::format("the {} of {}", paramName(prim::ParamKind::Int), fn);
      auto v = constInt(*d, what);
      if (!v)
        return Type::error();
      if (*v < 1) {
        diags_.error(d->range(), "invalid-size",
                     fmt::format("{} must be at least 1, not {}", what, *v));
        return Type::error();
      }
      attrs.dims.push_back(*v);
    }
    prim::TypeResult result = prim::inferType(op, operands, attrs, fn);
    if (result.error) {
      const prim::InferError &e = *result.error;
      SourceRange at = e.at == prim::InferError::At::Operand            ? ops[e.operand]->range()
                       : e.at == prim::InferError::At::Axis && c.axis() ? c.axis()->range()
                                                                        : c.range();
      diags_.error(at, e.id, e.message);
      return Type::error();
    }
    c.setAxisValue(result.axis);
    if (shapeDims || rec.shape == prim::ShapeRule::Split)
      c.setDimValues(attrs.dims);
    return fromPrim(result.type);
  }

  Type call(CallExpr &c, bool topOfLet) {
    switch (c.builtin()) {
    case Builtin::AxisIndex:
    case Builtin::AxisSize: {
      Type t = check(c.arg());
      if (t.isError())
        return t;
      if (t.kind != TypeKind::Axis) {
        diags_.error(
            c.arg().range(), "type-mismatch",
            fmt::format("{}() needs a mesh axis name, not {}", toString(c.builtin()), t.str()));
        return Type::error();
      }
      if (c.builtin() == Builtin::AxisSize)
        if (auto *a = dynCast<AxisDecl>(cast<NameExpr>(c.arg()).decl()))
          c.setValue(a->size());
      return intType();
    }
    case Builtin::ProgramId:
    case Builtin::NumPrograms: {
      auto d = constInt(c.arg(), fmt::format("the dimension of {}()", toString(c.builtin())));
      if (!d)
        return Type::error();
      if (*d < 0 || static_cast<size_t>(*d) >= gridRank_) {
        diags_.error(c.arg().range(), "grid-dim",
                     gridRank_ == 0 ? fmt::format("{}({}) but the kernel has no grid",
                                                  toString(c.builtin()), *d)
                                    : fmt::format("{}({}) is outside the grid (dimensions 0..{})",
                                                  toString(c.builtin()), *d, gridRank_ - 1));
        return Type::error();
      }
      if (c.builtin() == Builtin::NumPrograms && grid_ && grid_->size() == gridRank_)
        c.setValue((*grid_)[static_cast<size_t>(*d)]);
      return intType();
    }
    case Builtin::Read: {
      if (!topOfLet) {
        diags_.error(c.range(), "misplaced-expr", "read() may only initialise a let");
        return Type::error();
      }
      Type t = expectSemaphore(c.arg(), "read");
      if (t.isError())
        return t;
      return intType(/*runtime=*/true);
    }
    }
    return Type::error();
  }

  Type select(SelectExpr &sel) {
    Type c = check(sel.cond());
    Type a = check(sel.ifTrue());
    Type b = check(sel.ifFalse());
    if (c.isError() || a.isError() || b.isError())
      return Type::error();
    if (c.kind != TypeKind::Bool || a.kind != TypeKind::Int || b.kind != TypeKind::Int ||
        c.runtime || a.runtime || b.runtime) {
      diags_.error(sel.range(), "type-mismatch",
                   fmt::format("select(c, a, b) needs a condition and two integers known when "
                               "the kernel is instantiated, not {}, {} and {}",
                               c.str(), a.str(), b.str()));
      return Type::error();
    }
    return intType();
  }

  // `t[i, j]` on a table: one integer, known per device when the kernel is
  // instantiated (lowering checks the indices against the shape).
  Type tableIndex(IndexExpr &ix, const BufferDecl &table) {
    const std::vector<int64_t> &extents = table.shapeValues();
    if (ix.ellipsis() || ix.subscripts().size() != extents.size()) {
      diags_.error(ix.range(), "index-count",
                   fmt::format("table '{}' has {} dimension{}: give one single index per "
                               "dimension to read an element",
                               table.name(), extents.size(), extents.size() == 1 ? "" : "s"));
      return Type::error();
    }
    bool ok = true;
    for (size_t i = 0; i < extents.size(); ++i) {
      Subscript &s = ix.subscripts()[i];
      if (s.kind != Subscript::Kind::Index) {
        diags_.error(s.range, "type-mismatch",
                     fmt::format("table '{}' is read one element at a time: a slice of it is "
                                 "not an integer",
                                 table.name()));
        ok = false;
        continue;
      }
      if (!expectInt(*s.lo, "a table index")) {
        ok = false;
        continue;
      }
      if (s.lo->type().runtime) {
        diags_.error(s.range, "unsupported",
                     "a table index must be known when the kernel is instantiated, not read from "
                     "a semaphore");
        ok = false;
        continue;
      }
      auto v = maybeConst(*s.lo);
      if (v && (*v < 0 || *v >= extents[i])) {
        diags_.error(s.range, "out-of-bounds",
                     fmt::format("index {} is out of bounds for dimension {} of table '{}' (size "
                                 "{})",
                                 *v, i, table.name(), extents[i]));
        ok = false;
      }
    }
    return ok ? intType() : Type::error();
  }

  Type index(IndexExpr &ix) {
    tableBaseOk_ = true;
    Type base = check(ix.base());
    tableBaseOk_ = false;
    if (base.isError())
      return base;
    if (auto *t = dynCast<BufferDecl>(ix.base().decl()); t && t->isTable())
      return tableIndex(ix, *t);
    if (base.kind == TypeKind::Sem || base.kind == TypeKind::DescriptorVar)
      return semIndex(ix, base);
    // A let bound to an array value is sliced like a ref (`tiled_lhs[:, 0:128]`).
    const bool valueLet = base.kind == TypeKind::Value &&
                          (isa<LetDecl>(ix.base().decl()) || isa<VarDecl>(ix.base().decl()));
    if (base.kind != TypeKind::Ref && !valueLet) {
      diags_.error(ix.base().range(), "type-mismatch",
                   fmt::format("'{}' cannot be indexed: it is {}", ix.base().name(), base.str()));
      return Type::error();
    }
    if (ix.ellipsis())
      return base;
    if (const auto *b = dynCast<BufferDecl>(ix.base().decl());
        b && b->isIntegerScratch() && ix.subscripts().size() == base.shape.size() &&
        std::all_of(ix.subscripts().begin(), ix.subscripts().end(),
                    [](const Subscript &sub) { return sub.kind == Subscript::Kind::Index; })) {
      // `meta[i]`: one element of an integer scratch is an integer.
      Type elem = Type::error();
      if (!index(ix, base).isError()) {
        elem = intType();
        elem.scratch = true;
      }
      return elem;
    }
    return index(ix, base, valueLet);
  }

  // The slice `ix` of a ref, or (`value`) of an array value bound to a name, whose slice
  // bounds clamp to the extent as NumPy's (and jnp's) do.
  Type index(IndexExpr &ix, const Type &base, bool value = false) {
    const std::vector<int64_t> &extents = base.shape;
    if (ix.subscripts().size() > extents.size()) {
      diags_.error(ix.range(), "index-count",
                   fmt::format("too many indices for '{}': it has {} dimension{}, got {}",
                               ix.base().name(), extents.size(), extents.size() == 1 ? "" : "s",
                               ix.subscripts().size()));
      return Type::error();
    }
    Type result = base;
    result.shape.clear();
    bool ok = true;
    for (size_t i = 0; i < extents.size(); ++i) {
      int64_t extent = extents[i];
      if (i >= ix.subscripts().size()) {
        result.shape.push_back(extent);
        continue;
      }
      Subscript &s = ix.subscripts()[i];
      switch (s.kind) {
      case Subscript::Kind::Full:
        result.shape.push_back(extent);
        break;
      case Subscript::Kind::Index: {
        if (!expectInt(*s.lo, "an index")) {
          ok = false;
          break;
        }
        auto v = maybeConst(*s.lo);
        if (v && extent != Type::kDynamic && (*v < 0 || *v >= extent)) {
          diags_.error(s.range, "out-of-bounds",
                       fmt::format("index {} is out of bounds for dimension {} of '{}' (size {})",
                                   *v, i, ix.base().name(), extent));
          ok = false;
        }
        break;
      }
      case Subscript::Kind::Range: {
        // Known bounds (a missing start is 0, a missing end the extent).
        bool hasLo = true, hasHi = extent != Type::kDynamic;
        int64_t lo = 0, hi = extent;
        if (s.lo) {
          ok = expectInt(*s.lo, "a slice bound") && ok;
          auto v = maybeConst(*s.lo);
          hasLo = v.has_value();
          lo = v.value_or(0);
        }
        if (s.hi) {
          ok = expectInt(*s.hi, "a slice bound") && ok;
          auto v = maybeConst(*s.hi);
          hasHi = v.has_value();
          hi = v.value_or(0);
        }
        if (!ok)
          break;
        if (value && extent != Type::kDynamic) {
          // `x[:, 0:256]` of a [m, 128] value is x[:, 0:128] (NumPy's slices).
          if (hasHi && hi > extent)
            hi = extent;
          if (hasLo && lo > extent)
            lo = extent;
          if (hasLo && hasHi && lo > hi && lo >= 0 && hi >= 0)
            lo = hi;
        }
        auto bad = [&](std::string message) {
          diags_.error(s.range, "out-of-bounds", std::move(message));
          ok = false;
        };
        // An empty slice `a:a` names no element wherever it starts (Python's slices, and
        // the interpret mode's reads: docs/model.md "Zero-size slices and DMAs").
        const bool empty = hasLo && hasHi && s.hi && lo == hi && lo >= 0;
        if (empty)
          ;
        else if (hasLo && (lo < 0 || (extent != Type::kDynamic && lo > extent)))
          bad(fmt::format("slice start {} is out of bounds for dimension {} of '{}' (size {})", lo,
                          i, ix.base().name(), extent));
        else if (hasHi && s.hi && (hi < 0 || (extent != Type::kDynamic && hi > extent)))
          bad(fmt::format("slice end {} is out of bounds for dimension {} of '{}' (size {})", hi, i,
                          ix.base().name(), extent));
        else if (hasLo && hasHi && lo > hi)
          bad(fmt::format("slice {}:{} of '{}' ends before it starts", lo, hi, ix.base().name()));
        if (!ok)
          break;
        int64_t width = Type::kDynamic;
        if (hasLo && hasHi)
          width = hi - lo;
        else if (s.lo && s.hi && !value)
          width = symbolicWidth(*s.lo, *s.hi);
        result.shape.push_back(width);
        break;
      }
      }
    }
    return ok ? result : Type::error();
  }

  // Width of `a : a + k` (or `a + j : a + k`) when `a` is only known per device.
  static int64_t symbolicWidth(const Expr &lo, const Expr &hi) {
    auto split = [](const Expr &e) -> std::pair<const Expr *, std::optional<int64_t>> {
      if (auto *b = dynCast<BinaryExpr>(&e); b && b->op() == BinaryOp::Add)
        if (auto k = evalConst(b->rhs()))
          return {&b->lhs(), k};
      if (auto *b = dynCast<BinaryExpr>(&e); b && b->op() == BinaryOp::Sub)
        if (auto k = evalConst(b->rhs()); k && *k != INT64_MIN)
          return {&b->lhs(), -*k};
      return {&e, 0};
    };
    auto [lb, lk] = split(lo);
    auto [hb, hk] = split(hi);
    if (lk && hk && sameExpr(*lb, *hb) && *hk > *lk)
      return *hk - *lk;
    return Type::kDynamic;
  }

  // An element (or sub-array) of a semaphore array or of a descriptor array.
  Type semIndex(IndexExpr &ix, Type base) {
    const std::vector<int64_t> *dimValues = nullptr;
    if (const auto *sem = dynCast<SemDecl>(ix.base().decl()))
      dimValues = &sem->dimValues();
    else if (const auto *var = dynCast<VarDecl>(ix.base().decl()))
      dimValues = &var->dimValues();
    std::string_view what = base.kind == TypeKind::Sem ? "semaphore" : "descriptor";
    if (ix.ellipsis()) {
      diags_.error(ix.range(), "type-mismatch",
                   fmt::format("a {} array takes single indices, not [...]", what));
      return Type::error();
    }
    if (ix.subscripts().size() > base.semRank) {
      diags_.error(ix.range(), "index-count",
                   fmt::format("too many indices for {} '{}': it has {} dimension{}, got {}", what,
                               ix.base().name(), base.semRank, base.semRank == 1 ? "" : "s",
                               ix.subscripts().size()));
      return Type::error();
    }
    bool ok = true;
    for (size_t i = 0; i < ix.subscripts().size(); ++i) {
      Subscript &s = ix.subscripts()[i];
      if (s.kind != Subscript::Kind::Index) {
        diags_.error(s.range, "type-mismatch",
                     fmt::format("a {} array takes single indices, not slices", what));
        ok = false;
        continue;
      }
      if (!expectInt(*s.lo, fmt::format("a {} index", what))) {
        ok = false;
        continue;
      }
      auto v = maybeConst(*s.lo);
      if (v && dimValues && i < dimValues->size()) {
        int64_t extent = (*dimValues)[i];
        if (extent != Type::kDynamic && (*v < 0 || *v >= extent)) {
          diags_.error(s.range, "out-of-bounds",
                       fmt::format("index {} is out of bounds for {} array '{}' (size {})", *v,
                                   what, ix.base().name(), extent));
          ok = false;
        }
      }
    }
    if (!ok)
      return Type::error();
    base.semRank -= ix.subscripts().size();
    return base;
  }

  // `select_ref(i, a, b, ...)`: an integer index known when the kernel is instantiated
  // (lowering evaluates it per device and iteration, and checks its range there) and
  // choices of one type, which is the expression's.
  Type selectRef(SelectRefExpr &sel) {
    bool ok = expectInt(sel.index(), "the index of select_ref");
    if (ok && sel.index().type().runtime) {
      diags_.error(sel.index().range(), "unsupported",
                   "the index of select_ref must be known when the kernel is instantiated (a "
                   "loop index, axis_index, a table element, ...), not read from a semaphore at "
                   "run time: which buffers and semaphores a DMA uses decides what it races with");
      ok = false;
    }
    const size_t n = sel.choices().size();
    if (ok)
      if (auto v = maybeConst(sel.index()); v && (*v < 0 || static_cast<size_t>(*v) >= n)) {
        diags_.error(sel.index().range(), "out-of-bounds",
                     fmt::format("select_ref index {} is out of range [0, {}): there are {} "
                                 "choices",
                                 *v, n, n));
        ok = false;
      }
    std::vector<Type> types;
    for (ExprPtr &choice : sel.choices())
      types.push_back(check(*choice));
    for (size_t k = 0; k < n; ++k) {
      const Type &t = types[k];
      if (t.isError()) {
        ok = false;
        continue;
      }
      if (t.kind != TypeKind::Ref && t.kind != TypeKind::Sem) {
        diags_.error(sel.choices()[k]->range(), "type-mismatch",
                     fmt::format("select_ref selects among buffers (or slices of them) and "
                                 "semaphores, not {}",
                                 t.str()));
        ok = false;
        continue;
      }
      const Type &first = types[0];
      if (k == 0 || first.isError())
        continue;
      bool same = t.kind == first.kind &&
                  (t.kind == TypeKind::Ref
                       ? t.dtype == first.dtype && shapesCompatible(t.shape, first.shape)
                       : t.semKind == first.semKind && t.semRank == first.semRank);
      if (!same) {
        diags_.error(sel.choices()[k]->range(), "type-mismatch",
                     fmt::format("select_ref's choices must have one type: choice {} is {} but "
                                 "the first is {}",
                                 k, t.str(), first.str()));
        ok = false;
      }
    }
    return ok ? types[0] : Type::error();
  }

  // The type of a DMA operand, which may be a select_ref(...).
  Type dmaOperandType(Expr &e) {
    if (auto *sel = dynCast<SelectRefExpr>(&e)) {
      Type t = selectRef(*sel);
      e.setType(t);
      return t;
    }
    return check(e);
  }

  // A DMA operand: a (sliced) buffer.
  Type dmaRef(Expr &e, std::string_view role) {
    Type t = dmaOperandType(e);
    if (t.isError())
      return t;
    if (t.kind != TypeKind::Ref) {
      diags_.error(
          e.range(), "type-mismatch",
          fmt::format("the {} of a DMA must be a buffer or a slice of one, not {}", role, t.str()));
      return Type::error();
    }
    return t;
  }

  // A DMA semaphore operand: a dma_sem (counts bytes) or a sem (a regular semaphore, which
  // the DMA increments by 1 when its side completes: TPU v6 and later). Its kind, or none
  // after an error.
  std::optional<SemKind> dmaSem(Expr &e, std::string_view role) {
    Type t = expectSemaphore(e, role, /*dmaOperand=*/true);
    if (t.kind != TypeKind::Sem)
      return std::nullopt;
    if (t.semKind != SemKind::Dma && t.semKind != SemKind::Regular) {
      diags_.error(e.range(), "sem-kind",
                   fmt::format("the {} of a DMA must be a dma_sem or a sem, not a {}", role,
                               toString(t.semKind)));
      return std::nullopt;
    }
    return t.semKind;
  }

  // Mosaic's EnqueueDMAOp::verify (jaxlib/mosaic/dialect/tpu/tpu_ops.cc): "Non-DMA
  // semaphores are not supported for DMAs involving SMEM".
  void regularSemaphoreSmem(const Expr &ref) {
    if (const auto *sel = dynCast<SelectRefExpr>(&ref)) {
      for (const ExprPtr &choice : sel->choices())
        regularSemaphoreSmem(*choice);
      return;
    }
    if (const BufferDecl *b = bufferOf(ref); b && b->space() == MemSpace::Smem)
      diags_.error(ref.range(), "sem-kind",
                   fmt::format("a DMA on regular semaphores cannot move smem data ('{}' is "
                               "smem): Mosaic supports regular semaphores only on DMAs that "
                               "involve no SMEM",
                               b->name()));
  }

  Type copy(Expr &e) {
    bool remote = isa<RemoteCopyExpr>(e);
    Expr &src = remote ? cast<RemoteCopyExpr>(e).src() : cast<CopyExpr>(e).src();
    Expr &dst = remote ? cast<RemoteCopyExpr>(e).dst() : cast<CopyExpr>(e).dst();
    Type s = dmaRef(src, "source");
    Type d = dmaRef(dst, "destination");
    markDmaWritten(dst);
    if (!s.isError() && !d.isError()) {
      if (!shapesCompatible(s.shape, d.shape))
        diags_.error(e.range(), "shape-mismatch",
                     fmt::format("DMA source has shape {} but destination has shape {}",
                                 prim::shapeText(s.shape), prim::shapeText(d.shape)));
      else if (s.dtype != d.dtype)
        diags_.error(e.range(), "dtype-mismatch",
                     fmt::format("DMA source has element type {} but destination has {}",
                                 toString(s.dtype), toString(d.dtype)));
      // A DMA into an 'in' parameter is refused where it starts (lowering): a descriptor
      // made only to be waited on (the dummy-descriptor idiom) may name any buffer.
    }
    bool regular = false;
    if (remote) {
      auto &r = cast<RemoteCopyExpr>(e);
      std::optional<SemKind> send = dmaSem(r.sendSem(), "send semaphore");
      std::optional<SemKind> recv = dmaSem(r.recvSem(), "receive semaphore");
      // Mosaic's EnqueueDMAOp::verify (jaxlib/mosaic/dialect/tpu/tpu_ops.cc): "DMA
      // source and target semaphore must have the same type".
      if (send && recv && *send != *recv)
        diags_.error(r.recvSem().range(), "sem-kind",
                     fmt::format("the semaphores of a DMA must be of one kind: the send "
                                 "semaphore is a {} but the receive semaphore is a {}",
                                 toString(*send), toString(*recv)));
      regular = send == SemKind::Regular && recv == SemKind::Regular;
      device(r.device());
    } else {
      regular = dmaSem(cast<CopyExpr>(e).sem(), "semaphore") == SemKind::Regular;
    }
    if (regular)
      for (Expr *ref : {&src, &dst})
        regularSemaphoreSmem(*ref);
    Type t = Type::simple(TypeKind::Descriptor);
    t.remote = remote;
    t.regular = regular;
    return t;
  }

  // --- Devices -------------------------------------------------------------

  void device(Expr &e) {
    if (auto *t = dynCast<TupleExpr>(&e)) {
      e.setType(Type::simple(TypeKind::Device));
      size_t axes = mesh_ ? mesh_->axes().size() : 0;
      if (mesh_ && t->elements().size() != axes) {
        diags_.error(e.range(), "device-arity",
                     fmt::format("device coordinates need {} entr{} (one per mesh axis), got {}",
                                 axes, axes == 1 ? "y" : "ies", t->elements().size()));
        for (auto &el : t->elements())
          check(*el);
        return;
      }
      for (size_t i = 0; i < t->elements().size(); ++i) {
        Expr &el = *t->elements()[i];
        if (!expectInt(el, "a device coordinate"))
          continue;
        coordinateInRange(el, mesh_ ? mesh_->axes()[i].get() : nullptr);
      }
      return;
    }
    if (auto *m = dynCast<MappingExpr>(&e)) {
      e.setType(Type::simple(TypeKind::Device));
      std::set<const Decl *> seen;
      for (auto &entry : m->entries()) {
        Type at = check(*entry.axis);
        bool valueOk = expectInt(*entry.value, "a device coordinate");
        if (at.isError())
          continue;
        if (at.kind != TypeKind::Axis) {
          diags_.error(entry.axis->range(), "type-mismatch",
                       fmt::format("'{}' is not a mesh axis", entry.axis->name()));
          continue;
        }
        if (!seen.insert(entry.axis->decl()).second) {
          diags_.error(entry.axis->range(), "device-arity",
                       fmt::format("axis '{}' given twice", entry.axis->name()));
          continue;
        }
        if (valueOk)
          coordinateInRange(*entry.value, dynCast<AxisDecl>(entry.axis->decl()));
      }
      return;
    }
    if (!expectInt(e, "a device id"))
      return;
    if (auto v = maybeConst(e); v && meshDevices_ > 0 && (*v < 0 || *v >= meshDevices_))
      diags_.error(e.range(), "device-out-of-range",
                   fmt::format("device id {} is out of range: the mesh has {} device{}", *v,
                               meshDevices_, meshDevices_ == 1 ? "" : "s"));
  }

  void coordinateInRange(const Expr &e, const AxisDecl *axis) {
    if (!axis || !axis->size())
      return;
    if (auto v = maybeConst(e); v && (*v < 0 || *v >= *axis->size())) {
      if (axis->isCore())
        diags_.error(e.range(), "core-out-of-range",
                     fmt::format("core {} is out of range: the TensorCore axis '{}' has {} "
                                 "core{}",
                                 *v, axis->name(), *axis->size(), *axis->size() == 1 ? "" : "s"));
      else
        diags_.error(e.range(), "device-out-of-range",
                     fmt::format("coordinate {} is out of range for axis '{}' of size {}", *v,
                                 axis->name(), *axis->size()));
    }
  }

  const AxisDecl *coreAxis() const {
    return tcMesh_ && !tcMesh_->axes().empty() ? tcMesh_->axes()[0].get() : nullptr;
  }

  /// Whether a `device = ...` argument names the TensorCore axis (`{core: c}`).
  static bool namesCore(const Expr *e) {
    if (const auto *m = e ? dynCast<MappingExpr>(e) : nullptr)
      for (const auto &entry : m->entries())
        if (const auto *axis = dynCast<AxisDecl>(entry.axis->decl()); axis && axis->isCore())
          return true;
    return false;
  }
};

//===----------------------------------------------------------------------===//
// --devices
//===----------------------------------------------------------------------===//

// Evaluates a top-level expression by name before sema (for --devices): literals,
// params (defines, then defaults), consts and the operators of frontend::evalIntExpr.
std::optional<int64_t> evalByName(const Expr &e, const Module &module, const Defines &defines,
                                  int depth) {
  // Names are not resolved yet: a cycle of consts must end somewhere.
  if (depth > 64)
    return std::nullopt;
  auto leaf = [&](const Expr &leafExpr, bool) -> std::optional<int64_t> {
    const auto *n = dynCast<NameExpr>(&leafExpr);
    if (!n)
      return std::nullopt;
    for (const auto &item : module.items()) {
      if (auto *p = dynCast<ParamDecl>(item.get()); p && p->name() == n->name()) {
        if (auto it = defines.find(p->name()); it != defines.end())
          return it->second;
        return p->defaultValue() ? evalByName(*p->defaultValue(), module, defines, depth + 1)
                                 : std::nullopt;
      }
      if (auto *c = dynCast<ConstDecl>(item.get()); c && c->name() == n->name())
        return evalByName(c->init(), module, defines, depth + 1);
    }
    return std::nullopt;
  };
  return evalIntExpr(e, leaf).value;
}

} // namespace

bool analyze(Module &module, const Defines &defines, DiagnosticEngine &diags,
             const Tables &tables) {
  try {
    Sema sema(module, defines, tables, diags);
    return sema.run();
  } catch (const std::exception &e) {
    diags.error({}, "internal", fmt::format("internal error in sema: {}", e.what()));
  } catch (...) {
    diags.error({}, "internal", "internal error in sema");
  }
  return false;
}

std::optional<std::string> applyDevices(const Module &module, int64_t devices, Defines &defines,
                                        DiagnosticEngine &diags) {
  const MeshDecl *mesh = module.mesh();
  if (!mesh) {
    support::SourceLoc noPosition{0, 0, module.range().begin.file};
    diags.error({noPosition, {}}, "devices-mismatch",
                "--devices needs a mesh, and the file declares none");
    return std::nullopt;
  }
  if (mesh->axes().size() != 1) {
    diags.error(mesh->range(), "devices-mismatch",
                fmt::format("--devices needs a one-axis mesh; this mesh has {} axes (set the "
                            "sizes with -D)",
                            mesh->axes().size()));
    return std::nullopt;
  }
  const AxisDecl &axis = *mesh->axes()[0];
  if (auto *n = dynCast<NameExpr>(&axis.sizeExpr())) {
    for (const ParamDecl *p : module.params())
      if (p->name() == n->name()) {
        if (auto it = defines.find(p->name()); it != defines.end() && it->second != devices) {
          diags.error(
              axis.sizeExpr().range(), "devices-mismatch",
              fmt::format("--devices {} conflicts with -D {}={}", devices, p->name(), it->second));
          return std::nullopt;
        }
        defines[p->name()] = devices;
        return p->name();
      }
  }
  std::optional<int64_t> size = evalByName(axis.sizeExpr(), module, defines, 0);
  if (!size) {
    diags.error(axis.sizeExpr().range(), "devices-mismatch",
                fmt::format("--devices cannot set the size of axis '{}': it is neither a param "
                            "nor a constant",
                            axis.name()));
    return std::nullopt;
  }
  if (*size != devices) {
    diags.error(axis.sizeExpr().range(), "devices-mismatch",
                fmt::format("--devices {} conflicts with the size {} of axis '{}'", devices, *size,
                            axis.name()));
    return std::nullopt;
  }
  return std::string();
}

bool parseMeshSizes(std::string_view text, MeshSizes &mesh, std::string &error) {
  mesh.clear();
  size_t start = 0;
  while (true) {
    size_t comma = text.find(',', start);
    std::string_view item =
        text.substr(start, comma == std::string_view::npos ? text.npos : comma - start);
    size_t eq = item.find('=');
    std::string_view name = item.substr(0, eq);
    bool validName = !name.empty() && !std::isdigit(static_cast<unsigned char>(name[0]));
    for (char c : name)
      validName = validName && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
    if (eq == std::string_view::npos || !validName) {
      error = fmt::format("invalid mesh '{}': expected AXIS=SIZE,... (e.g. x=2,y=4)", text);
      return false;
    }
    std::string_view sizeText = item.substr(eq + 1);
    int64_t size = 0;
    auto [ptr, ec] = std::from_chars(sizeText.data(), sizeText.data() + sizeText.size(), size);
    if (sizeText.empty() || ec != std::errc() || ptr != sizeText.data() + sizeText.size()) {
      error = fmt::format("invalid size '{}' of axis '{}' in mesh '{}'", sizeText, name, text);
      return false;
    }
    if (size < 1 || size > kMaxMeshDevices) {
      error = fmt::format("size {} of axis '{}' is outside 1..{}", size, name, kMaxMeshDevices);
      return false;
    }
    for (const auto &[other, _] : mesh)
      if (other == name) {
        error = fmt::format("axis '{}' given twice in mesh '{}'", name, text);
        return false;
      }
    mesh.emplace_back(std::string(name), size);
    if (comma == std::string_view::npos)
      return true;
    start = comma + 1;
  }
}

std::string meshSizesText(const MeshSizes &mesh) {
  std::string out;
  for (const auto &[name, size] : mesh)
    out += fmt::format("{}{}={}", out.empty() ? "" : ",", name, size);
  return out;
}

bool applyMesh(const Module &module, const MeshSizes &sizes, Defines &defines,
               DiagnosticEngine &diags) {
  const MeshDecl *mesh = module.mesh();
  if (!mesh) {
    support::SourceLoc noPosition{0, 0, module.range().begin.file};
    diags.error({noPosition, {}}, "mesh-mismatch",
                "--mesh needs a mesh, and the file declares none");
    return false;
  }
  // The axes of devices and the TensorCore axis (docs/language.md "TensorCores").
  std::vector<const AxisDecl *> all;
  for (const auto &axis : mesh->axes())
    all.push_back(axis.get());
  if (const AxisDecl *core = module.coreAxis())
    all.push_back(core);
  std::vector<std::string> names;
  for (const AxisDecl *axis : all)
    names.push_back(axis->name());
  std::string axesText = fmt::format("{}", fmt::join(names, ", "));
  bool ok = true;
  for (const auto &[name, size] : sizes)
    if (std::find(names.begin(), names.end(), name) == names.end()) {
      diags.error(mesh->range(), "mesh-mismatch",
                  fmt::format("--mesh gives the size of axis '{}', but the mesh has no such axis "
                              "(axes: {})",
                              name, axesText));
      ok = false;
    }
  for (const AxisDecl *axis : all) {
    auto it = std::find_if(sizes.begin(), sizes.end(),
                           [&](const auto &entry) { return entry.first == axis->name(); });
    if (it == sizes.end()) {
      diags.error(axis->range(), "mesh-mismatch",
                  fmt::format("--mesh does not give the size of axis '{}' (axes: {})", axis->name(),
                              axesText));
      ok = false;
      continue;
    }
    const int64_t size = it->second;
    if (auto *n = dynCast<NameExpr>(&axis->sizeExpr())) {
      const ParamDecl *param = nullptr;
      for (const ParamDecl *p : module.params())
        if (p->name() == n->name())
          param = p;
      if (param) {
        if (auto d = defines.find(param->name()); d != defines.end() && d->second != size) {
          diags.error(axis->sizeExpr().range(), "mesh-mismatch",
                      fmt::format("--mesh {}={} conflicts with {} = {} (from -D or another axis "
                                  "of the same size param)",
                                  axis->name(), size, param->name(), d->second));
          ok = false;
          continue;
        }
        defines[param->name()] = size;
        continue;
      }
    }
    std::optional<int64_t> value = evalByName(axis->sizeExpr(), module, defines, 0);
    if (!value) {
      diags.error(axis->sizeExpr().range(), "mesh-mismatch",
                  fmt::format("--mesh cannot set the size of axis '{}': it is neither a param "
                              "nor a constant",
                              axis->name()));
      ok = false;
    } else if (*value != size) {
      diags.error(axis->sizeExpr().range(), "mesh-mismatch",
                  fmt::format("--mesh {}={} conflicts with the size {} of axis '{}'", axis->name(),
                              size, *value, axis->name()));
      ok = false;
    }
  }
  return ok;
}

} // namespace dkv::frontend
