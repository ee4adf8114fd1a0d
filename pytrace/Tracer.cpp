// The Python tracer: an interpreter over pyfront's AST that runs the file's top level
// with concrete Python values, and the kernel body once per program with device-dependent
// values kept symbolic, emitting the kernel language's AST (docs/python.md).
#include "pytrace/Tracer.h"

#include "pytrace/Directives.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace dkv::pytrace {

namespace {

using support::SourceRange;

// One error stops the trace; caught in traceModule (exceptions stay inside the library).
struct TraceError {
  SourceRange range;
  std::string id;
  std::string message;
  /// The chain of Python calls that led there, innermost first.
  std::vector<std::pair<SourceRange, std::string>> notes;
  /// Calls beyond the first kMaxNotes, counted only.
  size_t elided = 0;
};
constexpr size_t kMaxNotes = 8;

[[noreturn]] void fail(SourceRange r, std::string id, std::string message) {
  throw TraceError{r, std::move(id), std::move(message), {}, 0};
}
[[noreturn]] void unsupported(SourceRange r, const std::string &what) {
  fail(r, "python-unsupported", what);
}

//===----------------------------------------------------------------------===//
// Traced expressions: kernel-language expressions under construction (shared, immutable)
//===----------------------------------------------------------------------===//

struct TExpr;
using TE = std::shared_ptr<const TExpr>;

struct TSub {
  ast::Subscript::Kind kind = ast::Subscript::Kind::Full;
  TE lo, hi;
};

struct TExpr {
  enum class K {
    Int,
    Float,
    Bool,
    Name,
    Unary,
    Binary,
    Builtin,
    Index,
    Tuple,
    Mapping,
    Select,
    Compute
  };
  K k = K::Int;
  SourceRange range;
  int64_t i = 0;
  double f = 0;
  std::string text; // Float: as written; Name / Index: the name
  bool b = false;
  ast::UnaryOp uop = ast::UnaryOp::Neg;
  ast::BinaryOp bop = ast::BinaryOp::Add;
  ast::Builtin builtin = ast::Builtin::AxisIndex;
  std::vector<TE> kids;
  std::vector<TSub> subs;
  bool ellipsis = false;
  std::vector<std::string> keys; // Mapping: axis names
  // Compute: the operation, its element type and reduction axis (kids: the operands)
  ast::ComputeOp cop = ast::ComputeOp::Dot;
  std::optional<ast::DType> dtype;
  std::optional<int64_t> axis;
};

TE teInt(SourceRange r, int64_t v) {
  auto e = std::make_shared<TExpr>();
  e->k = TExpr::K::Int, e->range = r, e->i = v;
  return e;
}
TE teName(SourceRange r, std::string name) {
  auto e = std::make_shared<TExpr>();
  e->k = TExpr::K::Name, e->range = r, e->text = std::move(name);
  return e;
}
TE teBinary(SourceRange r, ast::BinaryOp op, TE a, TE b) {
  auto e = std::make_shared<TExpr>();
  e->k = TExpr::K::Binary, e->range = r, e->bop = op, e->kids = {std::move(a), std::move(b)};
  return e;
}
TE teUnary(SourceRange r, ast::UnaryOp op, TE a) {
  auto e = std::make_shared<TExpr>();
  e->k = TExpr::K::Unary, e->range = r, e->uop = op, e->kids = {std::move(a)};
  return e;
}

ast::ExprPtr build(const TExpr &e) {
  switch (e.k) {
  case TExpr::K::Int:
    return std::make_unique<ast::IntLiteral>(e.range, e.i);
  case TExpr::K::Float:
    return std::make_unique<ast::FloatLiteral>(e.range, e.f, e.text);
  case TExpr::K::Bool:
    return std::make_unique<ast::BoolLiteral>(e.range, e.b);
  case TExpr::K::Name:
    return std::make_unique<ast::NameExpr>(e.range, e.text);
  case TExpr::K::Unary:
    return std::make_unique<ast::UnaryExpr>(e.range, e.uop, build(*e.kids[0]));
  case TExpr::K::Binary:
    return std::make_unique<ast::BinaryExpr>(e.range, e.bop, build(*e.kids[0]), build(*e.kids[1]));
  case TExpr::K::Builtin:
    return std::make_unique<ast::CallExpr>(e.range, e.builtin, build(*e.kids[0]));
  case TExpr::K::Index: {
    std::vector<ast::Subscript> subs;
    for (const TSub &s : e.subs) {
      ast::Subscript sub;
      sub.kind = s.kind;
      sub.range = e.range;
      if (s.lo)
        sub.lo = build(*s.lo);
      if (s.hi)
        sub.hi = build(*s.hi);
      subs.push_back(std::move(sub));
    }
    bool ellipsis = subs.empty() && e.ellipsis;
    return std::make_unique<ast::IndexExpr>(
        e.range, std::make_unique<ast::NameExpr>(e.range, e.text), std::move(subs), ellipsis);
  }
  case TExpr::K::Tuple: {
    std::vector<ast::ExprPtr> elements;
    for (const TE &k : e.kids)
      elements.push_back(build(*k));
    return std::make_unique<ast::TupleExpr>(e.range, std::move(elements));
  }
  case TExpr::K::Mapping: {
    std::vector<ast::MappingExpr::Entry> entries;
    for (size_t i = 0; i < e.kids.size(); ++i)
      entries.push_back({std::make_unique<ast::NameExpr>(e.range, e.keys[i]), build(*e.kids[i])});
    return std::make_unique<ast::MappingExpr>(e.range, std::move(entries));
  }
  case TExpr::K::Select:
    return std::make_unique<ast::SelectExpr>(e.range, build(*e.kids[0]), build(*e.kids[1]),
                                             build(*e.kids[2]));
  case TExpr::K::Compute: {
    std::vector<ast::ExprPtr> operands;
    for (const TE &k : e.kids)
      operands.push_back(build(*k));
    ast::ExprPtr axis;
    if (e.axis) {
      axis = *e.axis < 0 ? ast::ExprPtr(std::make_unique<ast::UnaryExpr>(
                               e.range, ast::UnaryOp::Neg,
                               std::make_unique<ast::IntLiteral>(e.range, -*e.axis)))
                         : std::make_unique<ast::IntLiteral>(e.range, *e.axis);
    }
    return std::make_unique<ast::ComputeExpr>(e.range, e.cop, std::move(operands), e.dtype,
                                              std::move(axis), std::vector<ast::ExprPtr>{});
  }
  }
  return std::make_unique<ast::ErrorExpr>(e.range);
}

//===----------------------------------------------------------------------===//
// Python values
//===----------------------------------------------------------------------===//

struct Value;
using V = std::shared_ptr<Value>;
struct Scope;

enum class VK {
  None,
  Bool,
  Int,
  Float,
  Str,
  Tuple,
  List,
  Dict,
  Slice,
  Ellipsis,
  Func,
  Partial,
  Module, // a known module (s: its short name, e.g. "pltpu")
  Api,    // a name under a known module (s: e.g. "pltpu.make_async_remote_copy")
  Obj,    // an object made by an API call (s: its kind)
  Traced, // a value computed from lax.axis_index / pl.program_id / a ref load
  Ref,
  Sem,
  Desc,
};
enum class TKind { Int, Bool, Value };

struct Function {
  std::string name;
  SourceRange range;
  const std::vector<py::Param> *params = nullptr;
  const py::Body *body = nullptr;   // def
  const py::Expr *lambda = nullptr; // lambda body
  std::shared_ptr<Scope> env;
  std::vector<V> defaults; // one per param (null: none)
};

struct DescInfo {
  bool remote = false;
  std::string let; // the let the descriptor is bound to
};

struct Value {
  VK k = VK::None;
  bool b = false;
  int64_t i = 0;
  double f = 0;
  std::string s;
  std::vector<V> items;
  std::vector<V> keys;
  std::map<std::string, V> kw;
  V fn;
  std::shared_ptr<Function> func;
  // Traced
  TE te;
  TKind tk = TKind::Int;
  uint64_t stamp = 0; // Value: the emission count when its refs were loaded
  // Ref / Sem: the base name, its declared extents and the subscripts applied so far
  std::string name;
  std::vector<int64_t> dims;
  std::vector<TSub> subs;
  ast::DType dtype = ast::DType::F32;
  ast::SemKind semKind = ast::SemKind::Dma;
  std::shared_ptr<DescInfo> desc;
  // Ref: a table (an SMEM integer input or a scalar-prefetch operand), read per element
  bool table = false;
};

V mk(VK k) {
  auto v = std::make_shared<Value>();
  v->k = k;
  return v;
}
V mkInt(int64_t i) {
  V v = mk(VK::Int);
  v->i = i;
  return v;
}
V mkBool(bool b) {
  V v = mk(VK::Bool);
  v->b = b;
  return v;
}
V mkStr(std::string s) {
  V v = mk(VK::Str);
  v->s = std::move(s);
  return v;
}
V mkNone() { return mk(VK::None); }
V mkTuple(std::vector<V> items) {
  V v = mk(VK::Tuple);
  v->items = std::move(items);
  return v;
}
V mkApi(std::string name) {
  V v = mk(VK::Api);
  v->s = std::move(name);
  return v;
}
V mkObj(std::string kind) {
  V v = mk(VK::Obj);
  v->s = std::move(kind);
  return v;
}
V mkTraced(TE te, TKind tk) {
  V v = mk(VK::Traced);
  v->te = std::move(te);
  v->tk = tk;
  return v;
}

std::string typeName(const Value &v) {
  switch (v.k) {
  case VK::None:
    return "NoneType";
  case VK::Bool:
    return "bool";
  case VK::Int:
    return "int";
  case VK::Float:
    return "float";
  case VK::Str:
    return "str";
  case VK::Tuple:
    return "tuple";
  case VK::List:
    return "list";
  case VK::Dict:
    return "dict";
  case VK::Slice:
    return "slice";
  case VK::Ellipsis:
    return "ellipsis";
  case VK::Func:
    return "function";
  case VK::Partial:
    return "functools.partial";
  case VK::Module:
    return "module";
  case VK::Api:
    return v.s;
  case VK::Obj:
    if (v.s == "host value") // docs/python.md "Host code"
      return fmt::format("the host value of `{}` (line {}, not computed by dkv)", v.items[0]->s,
                         v.items[1]->i);
    return v.s;
  case VK::Traced:
    return v.tk == TKind::Value ? "traced array" : "traced scalar";
  case VK::Ref:
    return "Ref";
  case VK::Sem:
    return "semaphore";
  case VK::Desc:
    return "AsyncCopyDescriptor";
  }
  return "value";
}

std::string tracedShape(const Value &v) {
  return v.tk == TKind::Bool ? "bool[]" : v.tk == TKind::Int ? "int32[]" : "float32[...]";
}

struct Scope {
  std::map<std::string, V> vars;
  std::shared_ptr<Scope> parent; // the enclosing function's scope, or the globals
};

struct Args {
  std::vector<V> pos;
  std::vector<std::pair<std::string, V>> kw;
};

// The modules the tracer knows, by import path, and their short names in API names.
const std::map<std::string, std::string> &knownModules() {
  static const std::map<std::string, std::string> m = {
      {"jax", "jax"},
      {"jax.numpy", "jnp"},
      {"jax.lax", "lax"},
      {"jax.random", "jax.random"},
      {"jax.sharding", "jax.sharding"},
      {"jax.experimental", "jax.experimental"},
      {"jax.experimental.pallas", "pl"},
      {"jax.experimental.pallas.tpu", "pltpu"},
      {"jax.experimental.shard_map", "jax.experimental.shard_map"},
      {"jax.experimental.mesh_utils", "jax.experimental.mesh_utils"},
      {"functools", "functools"},
      {"numpy", "np"},
  };
  return m;
}

std::string modulePathOf(const std::string &shortName) {
  for (const auto &[path, s] : knownModules())
    if (s == shortName)
      return path;
  return shortName;
}

std::optional<ast::DType> dtypeOf(const Value &v) {
  if (v.k != VK::Api)
    return std::nullopt;
  static const std::map<std::string, ast::DType> m = {
      {"jnp.float32", ast::DType::F32}, {"jnp.bfloat16", ast::DType::BF16},
      {"jnp.float16", ast::DType::F16}, {"jnp.int32", ast::DType::I32},
      {"jnp.int16", ast::DType::I16},   {"jnp.int8", ast::DType::I8},
      {"jnp.uint8", ast::DType::U8},    {"jnp.uint32", ast::DType::U32},
      {"np.float32", ast::DType::F32},  {"np.float16", ast::DType::F16},
      {"np.int32", ast::DType::I32},    {"np.int16", ast::DType::I16},
      {"np.int8", ast::DType::I8},      {"np.uint8", ast::DType::U8},
      {"np.uint32", ast::DType::U32},
  };
  auto it = m.find(v.s);
  if (it == m.end())
    return std::nullopt;
  return it->second;
}

std::optional<ast::MemSpace> memSpaceOf(const std::string &name) {
  static const std::map<std::string, ast::MemSpace> m = {
      {"pltpu.ANY", ast::MemSpace::Any},
      {"pl.ANY", ast::MemSpace::Any},
      {"pltpu.TPUMemorySpace.ANY", ast::MemSpace::Any},
      {"pltpu.MemorySpace.ANY", ast::MemSpace::Any},
      {"pltpu.VMEM", ast::MemSpace::Vmem},
      {"pltpu.TPUMemorySpace.VMEM", ast::MemSpace::Vmem},
      {"pltpu.MemorySpace.VMEM", ast::MemSpace::Vmem},
      {"pltpu.SMEM", ast::MemSpace::Smem},
      {"pltpu.TPUMemorySpace.SMEM", ast::MemSpace::Smem},
      {"pltpu.MemorySpace.SMEM", ast::MemSpace::Smem},
      {"pltpu.HBM", ast::MemSpace::Hbm},
      {"pltpu.MemorySpace.HBM", ast::MemSpace::Hbm},
  };
  auto it = m.find(name);
  if (it == m.end())
    return std::nullopt;
  return it->second;
}

bool isSemType(const std::string &name, ast::SemKind &kind) {
  if (name == "pltpu.SemaphoreType.DMA" || name == "pl.SemaphoreType.DMA") {
    kind = ast::SemKind::Dma;
    return true;
  }
  if (name == "pltpu.SemaphoreType.REGULAR" || name == "pl.SemaphoreType.REGULAR") {
    kind = ast::SemKind::Regular;
    return true;
  }
  return false;
}

const std::set<std::string> &reservedWords() {
  static const std::set<std::string> r = {
      "param",      "const", "mesh",  "kernel", "in",   "out", "inout", "scratch",
      "run_scoped", "let",   "var",   "if",     "else", "for", "sem",   "dma_sem",
      "barrier",    "true",  "false", "and",    "or",   "not"};
  return r;
}

//===----------------------------------------------------------------------===//
// The interpreter
//===----------------------------------------------------------------------===//

enum class Flow { Normal, Return, Break, Continue };

// Where the last simple statement of `body` ends (pyfront's range of a compound statement
// reaches the first token after its block).
support::SourceLoc lastEnd(const py::Body &body, support::SourceLoc dflt) {
  if (body.empty())
    return dflt;
  const py::Stmt &s = *body.back();
  switch (s.kind) {
  case py::StmtKind::FunctionDef:
    return lastEnd(py::cast<py::FunctionDef>(s).body, s.range.end);
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
  default:
    return s.range.end;
  }
}

class Tracer {
public:
  Tracer(const support::SourceFile &file, const TraceOptions &options)
      : file_(file), options_(options) {}

  std::unique_ptr<ast::Module> run(const py::Module &module) {
    globals_ = std::make_shared<Scope>();
    globals_->vars["__name__"] = mkStr("__main__");
    const Directives *d = options_.directives;
    entryMode_ = d && d->entry;
    applySets();
    V ret;
    execBody(module.body, globals_, ret);
    if (entryMode_)
      traceEntry(*d->entry);
    if (!result_)
      fail(module.range, "python-no-kernel",
           fmt::format("no kernel was traced: the file never calls a `shard_map` of a "
                       "`pl.pallas_call` on arrays; for a library kernel whose call site is "
                       "elsewhere, add '# dkv: entry KERNEL(in x: f32[8, 128] @any, ...)' "
                       "(docs/python.md \"Directives\"){}",
                       kernelCandidates()));
    return std::move(result_);
  }

private:
  const support::SourceFile &file_;
  TraceOptions options_;
  std::shared_ptr<Scope> globals_;
  std::unique_ptr<ast::Module> result_;
  int depth_ = 0;
  uint64_t steps_ = 0;
  static constexpr uint64_t kMaxSteps = 1000000;
  // Statements emitted into the kernel (every let, DMA, signal, wait, store, block).
  uint64_t kernelStmts_ = 0;
  static constexpr uint64_t kMaxKernelStmts = 20000;

  // Kernel state.
  bool inKernel_ = false;
  uint32_t inlined_ = 0; ///< the helper call being traced (SourceLoc::inlined), 0: none
  std::vector<std::vector<ast::StmtPtr> *> blocks_;
  std::set<std::string> used_;
  uint64_t emitted_ = 0; // statements that may write a ref
  std::string nameHint_;
  V mesh_;       // the mesh of the enclosing shard_map
  V tcMesh_;     // the TensorCore mesh of the pl.kernel being traced (Obj "TcMesh"), or null
  V callParams_; // the pallas_call being traced
  std::vector<int64_t> grid_;
  bool hasCollective_ = false;
  // Directives: an entry replaces the call site's pallas_call; `set` names keep their value.
  bool entryMode_ = false;
  std::set<std::string> pinned_;

  bool pinned(const std::shared_ptr<Scope> &scope, const std::string &name) const {
    return scope == globals_ && pinned_.count(name);
  }

  //--- names and emission -------------------------------------------------

  std::string fresh(std::string base) {
    if (base.empty() || base == "_")
      base = "v";
    if (reservedWords().count(base))
      base += "_";
    std::string name = base;
    for (int n = 1; used_.count(name); ++n)
      name = fmt::format("{}_{}", base, n);
    used_.insert(name);
    return name;
  }

  void emit(ast::StmtPtr s, bool writes = true) {
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
    if (writes)
      ++emitted_;
    if (++kernelStmts_ > kMaxKernelStmts)
      fail(s->range(), "python-overflow",
           fmt::format("the kernel traces to more than {} statements (unrolled Python loops "
                       "and inlined calls); dkv checks kernels of realistic size, and a trace "
                       "this long would not finish",
                       kMaxKernelStmts));
    blocks_.back()->push_back(std::move(s));
  }

  // Binds a traced integer or condition to a fresh let and returns its name.
  V letTraced(const V &v, const std::string &hint, SourceRange r) {
    if (v->te->k == TExpr::K::Name || v->te->k == TExpr::K::Int)
      return v;
    std::string name = fresh(hint);
    emit(std::make_unique<ast::LetStmt>(r,
                                        std::make_unique<ast::LetDecl>(r, name, r, build(*v->te))),
         false);
    return mkTraced(teName(r, name), v->tk);
  }

  //--- conversions --------------------------------------------------------

  [[noreturn]] void tracedBool(const Value &v, SourceRange r, std::string_view what) {
    fail(r, "python-traced-branch",
         fmt::format("Attempted boolean conversion of traced array with shape {} ({}): the value "
                     "depends on the device (lax.axis_index, pl.program_id or a ref load), so "
                     "Python cannot decide it when JAX traces the kernel and JAX raises "
                     "TracerBoolConversionError here; use @pl.when(...) or jnp.where",
                     tracedShape(v), what));
  }

  bool truth(const V &v, SourceRange r, std::string_view what) {
    switch (v->k) {
    case VK::None:
      return false;
    case VK::Bool:
      return v->b;
    case VK::Int:
      return v->i != 0;
    case VK::Float:
      return v->f != 0;
    case VK::Str:
      return !v->s.empty();
    case VK::Tuple:
    case VK::List:
    case VK::Dict:
      return !v->items.empty();
    case VK::Traced:
      tracedBool(*v, r, what);
    case VK::Obj:
      if (isHost(v))
        hostNeeded(v, r, what);
      return true;
    default:
      return true;
    }
  }

  //--- host values --------------------------------------------------------

  // Host code outside every kernel (a reference computation with lax.ppermute or
  // lax.psum, jax.block_until_ready, printing and comparing results) may call any jax,
  // jnp, lax or numpy function: its result is a host value that dkv does not compute
  // (docs/python.md "Host code"). Whatever a host value reaches is a host value too;
  // where the trace needs a fact from one (a bool, an int, an iteration, a shape), it is
  // `python-host-value`, so nothing the kernel depends on is guessed.
  static bool isHost(const V &v) { return v->k == VK::Obj && v->s == "host value"; }
  static bool isHostArray(const V &v) { return v->k == VK::Obj && v->s == "Array"; }
  V hostValue(const std::string &what, SourceRange r) {
    V h = mkObj("host value");
    h->items = {mkStr(what), mkInt(r.begin.line)};
    return h;
  }
  // The host value an operation on `a` (and `b`) gives, or null when neither is a host
  // value or (outside kernels) an array.
  V hostResult(const V &a, const V &b, std::string_view op, SourceRange r) {
    if (inKernel_)
      return isHost(a) ? a : (b && isHost(b)) ? b : nullptr;
    for (const V &v : {a, b})
      if (v && isHost(v))
        return v;
    for (const V &v : {a, b})
      if (v && isHostArray(v))
        return hostValue(fmt::format("{} on an array", op), r);
    return nullptr;
  }
  [[noreturn]] void hostNeeded(const V &h, SourceRange r, std::string_view what) {
    fail(r, "python-host-value",
         fmt::format("{} needs the value of `{}` (line {}): host code that dkv does not "
                     "compute (it traces the kernel; the host code around it is kept as "
                     "values it does not know)",
                     what, h->items[0]->s, h->items[1]->i));
  }

  int64_t toInt(const V &v, SourceRange r, std::string_view what) {
    if (v->k == VK::Int)
      return v->i;
    if (v->k == VK::Bool)
      return v->b;
    if (isHost(v))
      hostNeeded(v, r, what);
    if (v->k == VK::Traced)
      fail(r, "python-traced-branch",
           fmt::format("The __index__() method was called on traced array with shape {} ({}): "
                       "the value depends on the device, so it is not a Python int when JAX "
                       "traces the kernel (JAX raises TracerIntegerConversionError here)",
                       tracedShape(*v), what));
    fail(r, "python-type", fmt::format("{}: expected an int, got {}", what, typeName(*v)));
  }

  // An integer operand of a kernel expression: an int or a traced integer.
  TE intTE(const V &v, SourceRange r, std::string_view what) {
    if (v->k == VK::Int)
      return teInt(r, v->i);
    if (v->k == VK::Bool)
      return teInt(r, v->b);
    if (v->k == VK::Traced && v->tk == TKind::Int)
      return v->te;
    fail(r, "python-type", fmt::format("{}: expected an integer, got {}", what, typeName(*v)));
  }

  std::vector<V> iterate(const V &v, SourceRange r) {
    switch (v->k) {
    case VK::Tuple:
    case VK::List:
      return v->items;
    case VK::Dict:
      return v->keys;
    case VK::Str: {
      std::vector<V> out;
      for (char c : v->s)
        out.push_back(mkStr(std::string(1, c)));
      return out;
    }
    case VK::Traced:
      fail(r, "python-traced-branch",
           fmt::format("iteration over a traced array with shape {}: its length depends on the "
                       "device (JAX raises TracerIntegerConversionError here)",
                       tracedShape(*v)));
    default:
      if (isHost(v))
        hostNeeded(v, r, "iterating over it");
      fail(r, "python-type", fmt::format("'{}' object is not iterable", typeName(*v)));
    }
  }

  //--- statements ---------------------------------------------------------

  Flow execBody(const py::Body &body, const std::shared_ptr<Scope> &scope, V &ret) {
    for (const py::StmtPtr &s : body) {
      Flow f = exec(*s, scope, ret);
      if (f != Flow::Normal)
        return f;
    }
    return Flow::Normal;
  }

  void bindImport(const std::shared_ptr<Scope> &scope, const std::string &path,
                  const std::string &asname, SourceRange r) {
    auto it = knownModules().find(path);
    if (it == knownModules().end())
      unsupported(r, fmt::format("import of module '{}': the tracer knows jax, jax.numpy, "
                                 "jax.lax, jax.experimental.pallas(.tpu), jax.sharding, "
                                 "jax.experimental.shard_map, functools and numpy",
                                 path));
    if (!asname.empty()) {
      V m = mk(VK::Module);
      m->s = it->second;
      scope->vars[asname] = m;
      return;
    }
    std::string top = path.substr(0, path.find('.'));
    V m = mk(VK::Module);
    m->s = knownModules().at(top);
    scope->vars[top] = m;
  }

  Flow exec(const py::Stmt &s, const std::shared_ptr<Scope> &scope, V &ret) {
    using py::StmtKind;
    if (++steps_ > kMaxSteps)
      fail(
          s.range, "python-overflow",
          fmt::format("the trace runs more than {} Python statements (unrolled loops)", kMaxSteps));
    switch (s.kind) {
    case StmtKind::Import:
      for (const py::Alias &a : py::cast<py::Import>(s).names)
        bindImport(scope, a.name, a.asname, a.range);
      return Flow::Normal;
    case StmtKind::ImportFrom: {
      const auto &imp = py::cast<py::ImportFrom>(s);
      if (imp.level != 0)
        unsupported(s.range, "relative imports");
      auto mod = knownModules().find(imp.module);
      if (mod == knownModules().end())
        unsupported(s.range, fmt::format("import from module '{}' (not a module the tracer "
                                         "knows)",
                                         imp.module));
      for (const py::Alias &a : imp.names) {
        if (a.name == "*")
          unsupported(a.range, "`import *`");
        std::string bound = a.asname.empty() ? a.name : a.asname;
        auto sub = knownModules().find(imp.module + "." + a.name);
        if (sub != knownModules().end()) {
          V m = mk(VK::Module);
          m->s = sub->second;
          scope->vars[bound] = m;
        } else {
          scope->vars[bound] = mkApi(mod->second + "." + a.name);
        }
      }
      return Flow::Normal;
    }
    case StmtKind::FunctionDef: {
      const auto &def = py::cast<py::FunctionDef>(s);
      if (def.isAsync)
        unsupported(s.range, "async functions");
      auto fn = std::make_shared<Function>();
      fn->name = def.name;
      // From `def` to the end of the last statement (the exit of a kernel, the closing
      // brace of a pl.when or run_scoped block is there; the range of a def reaches the
      // next statement).
      fn->range = def.range;
      fn->range.end = lastEnd(def.body, def.range.end);
      fn->params = &def.params;
      fn->body = &def.body;
      fn->env = scope;
      for (const py::Param &p : def.params)
        fn->defaults.push_back(p.default_ ? eval(*p.default_, scope) : nullptr);
      V f = mk(VK::Func);
      f->func = fn;
      for (auto it = def.decorators.rbegin(); it != def.decorators.rend(); ++it) {
        V dec = eval(**it, scope);
        f = call(dec, Args{{f}, {}}, (*it)->range);
      }
      if (!pinned(scope, def.name))
        scope->vars[def.name] = f;
      return Flow::Normal;
    }
    case StmtKind::Return: {
      const auto &r = py::cast<py::Return>(s);
      ret = r.value ? eval(*r.value, scope) : mkNone();
      return Flow::Return;
    }
    case StmtKind::Assign: {
      const auto &a = py::cast<py::Assign>(s);
      if (a.targets.size() == 1 && a.targets[0]->kind == py::ExprKind::Name)
        nameHint_ = py::cast<py::Name>(*a.targets[0]).id;
      V v = eval(*a.value, scope);
      nameHint_.clear();
      for (const py::ExprPtr &t : a.targets)
        assign(*t, v, scope, s.range);
      return Flow::Normal;
    }
    case StmtKind::AnnAssign: {
      const auto &a = py::cast<py::AnnAssign>(s);
      if (a.value)
        assign(*a.target, eval(*a.value, scope), scope, s.range);
      return Flow::Normal;
    }
    case StmtKind::AugAssign: {
      const auto &a = py::cast<py::AugAssign>(s);
      V rhs = eval(*a.value, scope);
      if (a.target->kind == py::ExprKind::Subscript) {
        const auto &sub = py::cast<py::Subscript>(*a.target);
        V base = eval(*sub.value, scope);
        if (base->k == VK::Ref) {
          if (a.op != py::BinOpKind::Add)
            unsupported(s.range,
                        fmt::format("`{}=` on a ref (only `+=` accumulates)", py::toString(a.op)));
          store(base, *sub.slice, scope, rhs, true, s.range);
          return Flow::Normal;
        }
      }
      V cur = eval(*a.target, scope);
      assign(*a.target, binop(a.op, cur, rhs, s.range), scope, s.range);
      return Flow::Normal;
    }
    case StmtKind::For: {
      const auto &f = py::cast<py::For>(s);
      V iter = eval(*f.iter, scope);
      bool broke = false;
      for (const V &item : iterate(iter, f.iter->range)) {
        assign(*f.target, item, scope, f.target->range);
        Flow fl = execBody(f.body, scope, ret);
        if (fl == Flow::Return)
          return fl;
        if (fl == Flow::Break) {
          broke = true;
          break;
        }
      }
      if (!broke)
        return execBody(f.orelse, scope, ret);
      return Flow::Normal;
    }
    case StmtKind::If: {
      const auto &i = py::cast<py::If>(s);
      V test = eval(*i.test, scope);
      if (truth(test, i.test->range, "a Python `if` on it"))
        return execBody(i.body, scope, ret);
      return execBody(i.orelse, scope, ret);
    }
    case StmtKind::With: {
      const auto &w = py::cast<py::With>(s);
      for (const py::WithItem &item : w.items) {
        V ctx = eval(*item.context, scope);
        if (!(ctx->k == VK::Obj && ctx->s == "named_scope") || item.vars)
          unsupported(item.context->range,
                      "`with` other than `with jax.named_scope(...)` (a no-op for dkv)");
      }
      return execBody(w.body, scope, ret);
    }
    case StmtKind::Assert: {
      const auto &a = py::cast<py::Assert>(s);
      V test = eval(*a.test, scope);
      if (!truth(test, a.test->range, "an `assert` on it"))
        fail(s.range, "python-assert", "AssertionError: the assert fails when the file is traced");
      return Flow::Normal;
    }
    case StmtKind::ExprStmt: {
      const auto &e = py::cast<py::ExprStmt>(s);
      if (auto *c = py::dynCast<py::Constant>(e.value.get());
          c && c->constKind == py::ConstKind::String)
        return Flow::Normal; // a docstring
      eval(*e.value, scope);
      return Flow::Normal;
    }
    case StmtKind::Pass:
      return Flow::Normal;
    case StmtKind::Break:
      return Flow::Break;
    case StmtKind::Continue:
      return Flow::Continue;
    default:
      unsupported(s.range, fmt::format("the `{}` statement is not supported by the tracer",
                                       py::toString(s.kind)));
    }
  }

  void assign(const py::Expr &target, const V &v, const std::shared_ptr<Scope> &scope,
              SourceRange r) {
    switch (target.kind) {
    case py::ExprKind::Name: {
      const std::string &id = py::cast<py::Name>(target).id;
      V bound = v;
      if (v->k == VK::Traced && v->tk != TKind::Value && inKernel_)
        bound = letTraced(v, id, r);
      if (!pinned(scope, id))
        scope->vars[id] = bound;
      return;
    }
    case py::ExprKind::Tuple:
    case py::ExprKind::List: {
      const auto &elts = target.kind == py::ExprKind::Tuple ? py::cast<py::Tuple>(target).elts
                                                            : py::cast<py::List>(target).elts;
      std::vector<V> items = iterate(v, r);
      size_t star = elts.size();
      for (size_t i = 0; i < elts.size(); ++i)
        if (elts[i]->kind == py::ExprKind::Starred)
          star = i;
      if (star == elts.size()) {
        if (items.size() != elts.size())
          fail(r, "python-type",
               fmt::format("cannot unpack {} values into {} targets", items.size(), elts.size()));
        for (size_t i = 0; i < elts.size(); ++i)
          assign(*elts[i], items[i], scope, r);
        return;
      }
      size_t after = elts.size() - star - 1;
      if (items.size() < star + after)
        fail(r, "python-type", "not enough values to unpack");
      for (size_t i = 0; i < star; ++i)
        assign(*elts[i], items[i], scope, r);
      V rest = mk(VK::List);
      rest->items.assign(items.begin() + static_cast<long>(star),
                         items.end() - static_cast<long>(after));
      assign(*py::cast<py::Starred>(*elts[star]).value, rest, scope, r);
      for (size_t i = 0; i < after; ++i)
        assign(*elts[star + 1 + i], items[items.size() - after + i], scope, r);
      return;
    }
    case py::ExprKind::Subscript: {
      const auto &sub = py::cast<py::Subscript>(target);
      V base = eval(*sub.value, scope);
      if (base->k == VK::Ref) {
        store(base, *sub.slice, scope, v, false, r);
        return;
      }
      V key = eval(*sub.slice, scope);
      if (base->k == VK::List) {
        int64_t i = toInt(key, sub.slice->range, "a list index");
        int64_t n = static_cast<int64_t>(base->items.size());
        if (i < 0)
          i += n;
        if (i < 0 || i >= n)
          fail(sub.slice->range, "python-index", "IndexError: list assignment index out of range");
        base->items[static_cast<size_t>(i)] = v;
        return;
      }
      if (base->k == VK::Dict) {
        for (size_t i = 0; i < base->keys.size(); ++i)
          if (equal(base->keys[i], key)) {
            base->items[i] = v;
            return;
          }
        base->keys.push_back(key);
        base->items.push_back(v);
        return;
      }
      unsupported(r, fmt::format("assignment to an item of a {}", typeName(*base)));
    }
    default:
      unsupported(r, fmt::format("assignment to a {}", py::toString(target.kind)));
    }
  }

  //--- refs -----------------------------------------------------------------

  // The subscripts of `x[...]` / `x.at[...]`, one per element of the index tuple.
  std::vector<V> indexItems(const py::Expr &slice, const std::shared_ptr<Scope> &scope) {
    if (slice.kind == py::ExprKind::Tuple) {
      std::vector<V> out;
      for (const py::ExprPtr &e : py::cast<py::Tuple>(slice).elts)
        out.push_back(eval(*e, scope));
      return out;
    }
    return {eval(slice, scope)};
  }

  // Applies index items to a ref or semaphore view.
  V view(const V &base, const std::vector<V> &items, SourceRange r) {
    V out = std::make_shared<Value>(*base);
    // The dims of the view: every base dim that no Index has dropped.
    std::vector<size_t> kept;
    for (size_t d = 0; d < base->dims.size(); ++d)
      if (d >= base->subs.size() || base->subs[d].kind != ast::Subscript::Kind::Index)
        kept.push_back(d);
    size_t viewRank = kept.size();
    size_t n = 0;
    bool sawEllipsis = false;
    for (const V &it : items) {
      if (it->k == VK::Ellipsis) {
        if (sawEllipsis)
          fail(r, "python-index", "an index can only have a single ellipsis ('...')");
        sawEllipsis = true;
        size_t explicitCount = items.size() - 1;
        if (explicitCount > viewRank)
          fail(r, "python-index", "too many indices for the ref");
        n += viewRank - explicitCount;
        continue;
      }
      if (n >= viewRank)
        fail(r, "python-index",
             fmt::format("too many indices: the ref has {} dimensions", viewRank));
      size_t d = kept[n++];
      while (out->subs.size() <= d)
        out->subs.push_back(TSub{});
      TSub &cur = out->subs[d];
      TE lo0 = cur.kind == ast::Subscript::Kind::Range && cur.lo ? cur.lo : nullptr;
      auto offset = [&](TE e) -> TE {
        if (!lo0)
          return e;
        if (lo0->k == TExpr::K::Int && e->k == TExpr::K::Int)
          return teInt(r, lo0->i + e->i);
        return teBinary(r, ast::BinaryOp::Add, lo0, e);
      };
      if (it->k == VK::Slice) {
        if (it->items[2]->k != VK::None)
          unsupported(r, "a slice with a step");
        TE lo = it->items[0]->k == VK::None ? nullptr : intTE(it->items[0], r, "a slice start");
        TE hi = it->items[1]->k == VK::None ? nullptr : intTE(it->items[1], r, "a slice end");
        if (!lo && !hi)
          continue; // `:` keeps the current subscript
        TSub s;
        s.kind = ast::Subscript::Kind::Range;
        s.lo = lo ? offset(lo) : (lo0 ? lo0 : nullptr);
        s.hi = hi ? offset(hi) : cur.hi;
        cur = s;
      } else if (it->k == VK::Obj && it->s == "ds") {
        TE start = intTE(it->items[0], r, "pl.ds start");
        TE size = intTE(it->items[1], r, "pl.ds size");
        TSub s;
        s.kind = ast::Subscript::Kind::Range;
        s.lo = offset(start);
        s.hi = s.lo->k == TExpr::K::Int && size->k == TExpr::K::Int ? teInt(r, s.lo->i + size->i)
               : s.lo->k == TExpr::K::Int && s.lo->i == 0
                   ? size // pl.ds(0, n): `0:n`
                   : teBinary(r, ast::BinaryOp::Add, s.lo, size);
        cur = s;
      } else {
        TSub s;
        s.kind = ast::Subscript::Kind::Index;
        s.lo = offset(intTE(it, r, "an index"));
        cur = s;
      }
    }
    return out;
  }

  TE refTE(const Value &ref, SourceRange r) {
    auto e = std::make_shared<TExpr>();
    e->k = TExpr::K::Index;
    e->range = r;
    e->text = ref.name;
    e->subs = ref.subs;
    // Trailing subscripts that are whole are dropped; Full ones before others stay `:`.
    while (!e->subs.empty() && e->subs.back().kind == ast::Subscript::Kind::Full)
      e->subs.pop_back();
    if (e->subs.empty()) {
      if (ref.k == VK::Sem)
        return teName(r, ref.name);
      e->ellipsis = true;
    }
    return e;
  }

  void store(const V &ref, const py::Expr &slice, const std::shared_ptr<Scope> &scope,
             const V &value, bool accumulate, SourceRange r) {
    V target = view(ref, indexItems(slice, scope), slice.range);
    TE rhs;
    if (value->k == VK::Int)
      rhs = teInt(r, value->i);
    else if (value->k == VK::Float) {
      auto e = std::make_shared<TExpr>();
      e->k = TExpr::K::Float, e->range = r, e->f = value->f, e->text = value->s;
      rhs = e;
    } else if (value->k == VK::Traced && value->tk == TKind::Value) {
      if (value->stamp != emitted_)
        unsupported(r, "a value loaded from a ref is stored after other kernel operations "
                       "(DMAs, signals, waits or stores) ran since the load; dkv reads a ref "
                       "where the value is stored, so store it before any other kernel operation");
      rhs = value->te;
    } else if (value->k == VK::Traced && value->tk == TKind::Int) {
      rhs = value->te; // a per-device integer, e.g. pltpu.semaphore_read's value
    } else if (value->k == VK::Ref) {
      unsupported(r, "storing a ref (load it with `x_ref[...]`)");
    } else {
      fail(r, "python-type",
           fmt::format("the value stored into a ref must be a loaded ref or a number, got {}",
                       typeName(*value)));
    }
    emit(std::make_unique<ast::StoreStmt>(r, build(*refTE(*target, slice.range)), accumulate,
                                          build(*rhs)));
  }

  //--- expressions --------------------------------------------------------

  V lookup(const std::string &id, const std::shared_ptr<Scope> &scope, SourceRange r) {
    for (Scope *s = scope.get(); s; s = s->parent.get()) {
      auto it = s->vars.find(id);
      if (it != s->vars.end())
        return it->second;
    }
    static const std::set<std::string> builtins = {
        "range", "len", "enumerate", "zip",  "list", "tuple",    "print",      "int", "bool",
        "min",   "max", "abs",       "dict", "sum",  "reversed", "isinstance", "str", "float"};
    if (builtins.count(id))
      return mkApi("builtins." + id);
    if (id == "None")
      return mkNone();
    fail(r, "python-name", fmt::format("NameError: name '{}' is not defined", id));
  }

  bool equal(const V &a, const V &b) {
    if (a->k == VK::Int && b->k == VK::Int)
      return a->i == b->i;
    if ((a->k == VK::Int || a->k == VK::Bool) && (b->k == VK::Int || b->k == VK::Bool))
      return (a->k == VK::Int ? a->i : a->b) == (b->k == VK::Int ? b->i : b->b);
    if (a->k == VK::Str && b->k == VK::Str)
      return a->s == b->s;
    if (a->k == VK::None || b->k == VK::None)
      return a->k == b->k;
    if ((a->k == VK::Tuple || a->k == VK::List) && a->k == b->k) {
      if (a->items.size() != b->items.size())
        return false;
      for (size_t i = 0; i < a->items.size(); ++i)
        if (!equal(a->items[i], b->items[i]))
          return false;
      return true;
    }
    if (a->k == VK::Api && b->k == VK::Api)
      return a->s == b->s;
    return a == b;
  }

  static int64_t floorDiv(int64_t a, int64_t b) {
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0)))
      --q;
    return q;
  }
  static int64_t floorMod(int64_t a, int64_t b) {
    int64_t m = a % b;
    if (m != 0 && ((m < 0) != (b < 0)))
      m += b;
    return m;
  }

  int64_t checked(__int128 v, SourceRange r) {
    if (v > INT64_MAX || v < INT64_MIN)
      fail(r, "python-overflow", "integer result outside the 64-bit range dkv computes with");
    return static_cast<int64_t>(v);
  }

  V binop(py::BinOpKind op, const V &a, const V &b, SourceRange r) {
    using py::BinOpKind;
    if (V h = hostResult(a, b, fmt::format("`{}`", py::toString(op)), r))
      return h;
    bool aInt = a->k == VK::Int || a->k == VK::Bool;
    bool bInt = b->k == VK::Int || b->k == VK::Bool;
    if (aInt && bInt) {
      __int128 x = a->k == VK::Int ? a->i : a->b, y = b->k == VK::Int ? b->i : b->b;
      switch (op) {
      case BinOpKind::Add:
        return mkInt(checked(x + y, r));
      case BinOpKind::Sub:
        return mkInt(checked(x - y, r));
      case BinOpKind::Mult:
        return mkInt(checked(x * y, r));
      case BinOpKind::FloorDiv:
      case BinOpKind::Mod:
        if (y == 0)
          fail(r, "python-zero-division", "ZeroDivisionError: integer division or modulo by zero");
        if (x == INT64_MIN && y == -1)
          fail(r, "python-overflow", "integer result outside the 64-bit range");
        return mkInt(op == BinOpKind::Mod
                         ? floorMod(static_cast<int64_t>(x), static_cast<int64_t>(y))
                         : floorDiv(static_cast<int64_t>(x), static_cast<int64_t>(y)));
      case BinOpKind::Pow: {
        if (y < 0)
          unsupported(r, "a negative integer power (a float)");
        __int128 p = 1;
        for (__int128 i = 0; i < y; ++i)
          p = static_cast<__int128>(checked(p * x, r));
        return mkInt(static_cast<int64_t>(p));
      }
      case BinOpKind::BitAnd:
        return mkInt(static_cast<int64_t>(x & y));
      case BinOpKind::BitOr:
        return mkInt(static_cast<int64_t>(x | y));
      case BinOpKind::BitXor:
        return mkInt(static_cast<int64_t>(x ^ y));
      case BinOpKind::LShift:
        if (y < 0 || y > 62)
          fail(r, "python-overflow", "shift count outside 0..62");
        return mkInt(checked(x << static_cast<int>(y), r));
      case BinOpKind::RShift:
        if (y < 0)
          fail(r, "python-overflow", "negative shift count");
        return mkInt(static_cast<int64_t>(x >> static_cast<int>(y > 63 ? 63 : y)));
      case BinOpKind::Div:
        unsupported(r, "true division `/` of integers (a float); use `//`");
      default:
        break;
      }
    }
    if ((a->k == VK::Tuple || a->k == VK::List) && a->k == b->k && op == BinOpKind::Add) {
      V out = mk(a->k);
      out->items = a->items;
      out->items.insert(out->items.end(), b->items.begin(), b->items.end());
      return out;
    }
    if ((a->k == VK::Tuple || a->k == VK::List) && bInt && op == BinOpKind::Mult) {
      V out = mk(a->k);
      int64_t n = b->k == VK::Int ? b->i : b->b;
      if (n > 0 && a->items.size() * static_cast<uint64_t>(std::min<int64_t>(n, 1 << 30)) > 100000)
        fail(r, "python-overflow", "a sequence repetition longer than 100000 elements");
      for (int64_t i = 0; i < n; ++i)
        out->items.insert(out->items.end(), a->items.begin(), a->items.end());
      return out;
    }
    if (a->k == VK::Str && b->k == VK::Str && op == BinOpKind::Add)
      return mkStr(a->s + b->s);
    bool aT = a->k == VK::Traced, bT = b->k == VK::Traced;
    if (aT || bT) {
      bool value = (aT && a->tk == TKind::Value) || (bT && b->tk == TKind::Value);
      if (value)
        return valueBinop(op, a, b, r);
      bool boolOps = (aT && a->tk == TKind::Bool) || (bT && b->tk == TKind::Bool);
      if (boolOps) {
        if (op != BinOpKind::BitAnd && op != BinOpKind::BitOr)
          unsupported(r, fmt::format("`{}` on a traced condition", py::toString(op)));
        TE x = condTE(a, r), y = condTE(b, r);
        return mkTraced(
            teBinary(r, op == BinOpKind::BitAnd ? ast::BinaryOp::And : ast::BinaryOp::Or, x, y),
            TKind::Bool);
      }
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
        unsupported(r, "true division `/` of traced integers (a float array); use `//` or "
                       "lax.div");
      default:
        unsupported(r, fmt::format("`{}` on a traced integer", py::toString(op)));
      }
      return mkTraced(teBinary(r, bop, x, y), TKind::Int);
    }
    fail(r, "python-type",
         fmt::format("TypeError: unsupported operand type(s) for {}: '{}' and '{}'",
                     py::toString(op), typeName(*a), typeName(*b)));
  }

  TE condTE(const V &v, SourceRange r) {
    if (v->k == VK::Bool) {
      auto e = std::make_shared<TExpr>();
      e->k = TExpr::K::Bool, e->range = r, e->b = v->b;
      return e;
    }
    if (v->k == VK::Traced && v->tk == TKind::Bool)
      return v->te;
    fail(r, "python-type", fmt::format("expected a condition, got {}", typeName(*v)));
  }

  V valueBinop(py::BinOpKind op, const V &a, const V &b, SourceRange r) {
    auto operand = [&](const V &v) -> TE {
      if (v->k == VK::Traced && v->tk == TKind::Value)
        return v->te;
      if (v->k == VK::Int)
        return teInt(r, v->i);
      if (v->k == VK::Float) {
        auto e = std::make_shared<TExpr>();
        e->k = TExpr::K::Float, e->range = r, e->f = v->f, e->text = v->s;
        return e;
      }
      fail(r, "python-type",
           fmt::format("an operand of arithmetic on loaded values must be a loaded ref or a "
                       "number, got {}",
                       typeName(*v)));
    };
    ast::BinaryOp bop;
    switch (op) {
    case py::BinOpKind::Add:
      bop = ast::BinaryOp::Add;
      break;
    case py::BinOpKind::Sub:
      bop = ast::BinaryOp::Sub;
      break;
    case py::BinOpKind::Mult:
      bop = ast::BinaryOp::Mul;
      break;
    case py::BinOpKind::Div:
      bop = ast::BinaryOp::Div;
      break;
    case py::BinOpKind::MatMult:
      return computeValue(ast::ComputeOp::Dot, {a, b}, std::nullopt, std::nullopt, r, "`@`");
    default:
      unsupported(r, fmt::format("`{}` on loaded values (supported: + - * / @)", py::toString(op)));
    }
    uint64_t stamp = UINT64_MAX;
    for (const V &v : {a, b})
      if (v->k == VK::Traced)
        stamp = std::min(stamp, v->stamp);
    V out = mkTraced(teBinary(r, bop, operand(a), operand(b)), TKind::Value);
    out->stamp = stamp;
    return out;
  }

  V compare(py::CmpOpKind op, const V &a, const V &b, SourceRange r) {
    using py::CmpOpKind;
    if (op != CmpOpKind::Is && op != CmpOpKind::IsNot)
      if (V h = hostResult(a, b, "a comparison", r))
        return h;
    if (op == CmpOpKind::Is || op == CmpOpKind::IsNot) {
      bool same = (a->k == VK::None && b->k == VK::None) || a == b ||
                  (a->k == VK::Bool && b->k == VK::Bool && a->b == b->b);
      return mkBool(op == CmpOpKind::Is ? same : !same);
    }
    if (op == CmpOpKind::In || op == CmpOpKind::NotIn) {
      bool found = false;
      if (b->k == VK::Str && a->k == VK::Str)
        found = b->s.find(a->s) != std::string::npos;
      else
        for (const V &x : iterate(b, r))
          found = found || equal(a, x);
      return mkBool(op == CmpOpKind::In ? found : !found);
    }
    if (a->k == VK::Traced || b->k == VK::Traced) {
      if ((a->k == VK::Traced && a->tk == TKind::Value) ||
          (b->k == VK::Traced && b->tk == TKind::Value))
        unsupported(r, "comparisons of loaded values (element-wise masks)");
      TE x = intTE(a, r, "a comparison operand"), y = intTE(b, r, "a comparison operand");
      ast::BinaryOp bop = op == CmpOpKind::Eq      ? ast::BinaryOp::Eq
                          : op == CmpOpKind::NotEq ? ast::BinaryOp::Ne
                          : op == CmpOpKind::Lt    ? ast::BinaryOp::Lt
                          : op == CmpOpKind::LtE   ? ast::BinaryOp::Le
                          : op == CmpOpKind::Gt    ? ast::BinaryOp::Gt
                                                   : ast::BinaryOp::Ge;
      return mkTraced(teBinary(r, bop, x, y), TKind::Bool);
    }
    if (op == CmpOpKind::Eq)
      return mkBool(equal(a, b));
    if (op == CmpOpKind::NotEq)
      return mkBool(!equal(a, b));
    int64_t x = toInt(a, r, "a comparison operand"), y = toInt(b, r, "a comparison operand");
    switch (op) {
    case CmpOpKind::Lt:
      return mkBool(x < y);
    case CmpOpKind::LtE:
      return mkBool(x <= y);
    case CmpOpKind::Gt:
      return mkBool(x > y);
    default:
      return mkBool(x >= y);
    }
  }

  V attribute(const V &base, const std::string &attr, SourceRange r) {
    switch (base->k) {
    case VK::Module: {
      std::string path = modulePathOf(base->s) + "." + attr;
      auto it = knownModules().find(path);
      if (it != knownModules().end()) {
        V m = mk(VK::Module);
        m->s = it->second;
        return m;
      }
      return mkApi(base->s + "." + attr);
    }
    case VK::Api:
      return mkApi(base->s + "." + attr);
    case VK::Ref:
    case VK::Sem:
      if (attr == "at") {
        V at = mkObj("at");
        at->items = {base};
        return at;
      }
      if (attr == "shape" && base->k == VK::Ref) {
        std::vector<V> dims;
        for (size_t d = 0; d < base->dims.size(); ++d) {
          if (d < base->subs.size() && base->subs[d].kind == ast::Subscript::Kind::Index)
            continue;
          if (d < base->subs.size() && base->subs[d].kind == ast::Subscript::Kind::Range) {
            const TSub &s = base->subs[d];
            int64_t lo = s.lo ? (s.lo->k == TExpr::K::Int ? s.lo->i : -1) : 0;
            int64_t hi = s.hi ? (s.hi->k == TExpr::K::Int ? s.hi->i : -1) : base->dims[d];
            if (lo < 0 || hi < 0)
              unsupported(r, "the shape of a ref view with a per-device slice");
            dims.push_back(mkInt(hi - lo));
          } else {
            dims.push_back(mkInt(base->dims[d]));
          }
        }
        return mkTuple(dims);
      }
      unsupported(r, fmt::format("`.{}` of a {}", attr, typeName(*base)));
    case VK::Traced:
      if (base->tk == TKind::Value && attr == "astype") {
        V m = mkObj("method:astype");
        m->items = {base};
        return m;
      }
      break;
    case VK::Desc:
      if (attr == "start" || attr == "wait" || attr == "wait_send" || attr == "wait_recv") {
        V m = mkObj("method:" + attr);
        m->items = {base};
        return m;
      }
      unsupported(r, fmt::format("`.{}` of a DMA descriptor", attr));
    case VK::List:
      if (attr == "append") {
        V m = mkObj("method:append");
        m->items = {base};
        return m;
      }
      break;
    case VK::Obj:
      if ((base->s == "Array") && (attr == "shape" || attr == "dtype"))
        return attr == "shape" ? base->items[0] : base->kw.at("dtype");
      if (base->s == "Array" && attr == "reshape") {
        V m = mkObj("method:reshape");
        m->items = {base};
        return m;
      }
      if (isHost(base) || (base->s == "Array" && !inKernel_))
        return isHost(base) ? base : hostValue(fmt::format("`.{}` of an array", attr), r);
      // The devices dkv models are TPU devices of no particular generation: the
      // tutorial asserts `"TPU" in jax.devices()[0].device_kind` (docs/python.md).
      if (base->s == "Device" && (attr == "device_kind" || attr == "platform"))
        return mkStr(attr == "platform" ? "tpu" : "TPU");
      if (base->s == "Mesh" && attr == "shape") {
        V d = mk(VK::Dict);
        d->keys = base->items[0]->items;
        d->items = base->items[1]->items;
        return d;
      }
      if (base->s == "Mesh" && attr == "size") {
        int64_t n = 1;
        for (const V &size : base->items[1]->items)
          n *= size->i;
        return mkInt(n);
      }
      // A TensorCore mesh: {axis: cores}, its cores (the guide's len(tc_mesh.devices)).
      if (base->s == "TcMesh" && (attr == "shape" || attr == "num_cores" || attr == "devices")) {
        if (attr == "num_cores")
          return base->items[1];
        V out = mk(attr == "shape" ? VK::Dict : VK::List);
        if (attr == "shape") {
          out->keys = {base->items[0]};
          out->items = {base->items[1]};
        } else {
          for (int64_t c = 0; c < base->items[1]->i; ++c)
            out->items.push_back(mkObj("TensorCore"));
        }
        return out;
      }
      break;
    default:
      break;
    }
    fail(r, "python-attribute",
         fmt::format("AttributeError: '{}' object has no attribute '{}' (or the tracer does not "
                     "support it)",
                     typeName(*base), attr));
  }

  V subscript(const V &base, const py::Expr &slice, const std::shared_ptr<Scope> &scope,
              SourceRange r) {
    if (base->k == VK::Obj && base->s == "at")
      return view(base->items[0], indexItems(slice, scope), slice.range);
    if (V h = hostResult(base, nullptr, "indexing", r))
      return h;
    if (base->k == VK::Sem)
      return view(base, indexItems(slice, scope), slice.range);
    if (base->k == VK::Ref && base->table)
      return tableRead(base, indexItems(slice, scope), r, slice.range);
    if (base->k == VK::Ref) {
      V v = view(base, indexItems(slice, scope), slice.range);
      V out = mkTraced(refTE(*v, r), TKind::Value);
      out->stamp = emitted_;
      return out;
    }
    V key = eval(slice, scope);
    if (base->k == VK::Tuple || base->k == VK::List) {
      int64_t n = static_cast<int64_t>(base->items.size());
      if (key->k == VK::Slice) {
        auto bound = [&](const V &b, int64_t dflt) {
          if (b->k == VK::None)
            return dflt;
          int64_t i = toInt(b, r, "a slice bound");
          if (i < 0)
            i += n;
          return std::clamp<int64_t>(i, 0, n);
        };
        if (key->items[2]->k != VK::None)
          unsupported(r, "a slice with a step");
        int64_t lo = bound(key->items[0], 0), hi = bound(key->items[1], n);
        V out = mk(base->k);
        for (int64_t i = lo; i < hi; ++i)
          out->items.push_back(base->items[static_cast<size_t>(i)]);
        return out;
      }
      int64_t i = toInt(key, slice.range, "a sequence index");
      if (i < 0)
        i += n;
      if (i < 0 || i >= n)
        fail(slice.range, "python-index",
             fmt::format("IndexError: {} index out of range", typeName(*base)));
      return base->items[static_cast<size_t>(i)];
    }
    if (base->k == VK::Dict) {
      for (size_t i = 0; i < base->keys.size(); ++i)
        if (equal(base->keys[i], key))
          return base->items[i];
      fail(slice.range, "python-index", "KeyError: the key is not in the dict");
    }
    fail(r, "python-type",
         fmt::format("TypeError: '{}' object is not subscriptable", typeName(*base)));
  }

  V eval(const py::Expr &e, const std::shared_ptr<Scope> &scope) {
    if (++depth_ > 400) {
      --depth_;
      fail(e.range, "python-too-deep", "the trace nests calls more than 400 deep");
    }
    V v = evalInner(e, scope);
    --depth_;
    return v;
  }

  V evalInner(const py::Expr &e, const std::shared_ptr<Scope> &scope) {
    using py::ExprKind;
    switch (e.kind) {
    case ExprKind::Name:
      return lookup(py::cast<py::Name>(e).id, scope, e.range);
    case ExprKind::Constant: {
      const auto &c = py::cast<py::Constant>(e);
      switch (c.constKind) {
      case py::ConstKind::Int:
        if (!c.intValue)
          fail(e.range, "python-overflow", "integer literal outside the 64-bit range");
        return mkInt(*c.intValue);
      case py::ConstKind::Float: {
        V v = mk(VK::Float);
        v->f = std::stod(c.text);
        v->s = c.text;
        return v;
      }
      case py::ConstKind::String:
        return mkStr(c.str);
      case py::ConstKind::True:
        return mkBool(true);
      case py::ConstKind::False:
        return mkBool(false);
      case py::ConstKind::None:
        return mkNone();
      case py::ConstKind::Ellipsis:
        return mk(VK::Ellipsis);
      default:
        unsupported(e.range, "bytes and imaginary literals");
      }
    }
    case ExprKind::UnaryOp: {
      const auto &u = py::cast<py::UnaryOp>(e);
      V v = eval(*u.operand, scope);
      switch (u.op) {
      case py::UnaryOpKind::Not:
        return mkBool(!truth(v, e.range, "`not` on it"));
      case py::UnaryOpKind::UAdd:
        return v;
      case py::UnaryOpKind::USub:
        if (V h = hostResult(v, nullptr, "unary `-`", e.range))
          return h;
        if (v->k == VK::Int)
          return mkInt(checked(-static_cast<__int128>(v->i), e.range));
        if (v->k == VK::Float) {
          V f = mk(VK::Float);
          f->f = -v->f;
          f->s = "-" + v->s;
          return f;
        }
        if (v->k == VK::Traced && v->tk != TKind::Bool) {
          V out = mkTraced(teUnary(e.range, ast::UnaryOp::Neg, v->te), v->tk);
          out->stamp = v->stamp;
          return out;
        }
        break;
      case py::UnaryOpKind::Invert:
        if (V h = hostResult(v, nullptr, "`~`", e.range))
          return h;
        if (v->k == VK::Int)
          return mkInt(~v->i);
        if (v->k == VK::Bool)
          return mkInt(~static_cast<int64_t>(v->b));
        if (v->k == VK::Traced && v->tk == TKind::Bool)
          return mkTraced(teUnary(e.range, ast::UnaryOp::Not, v->te), TKind::Bool);
        break;
      }
      fail(e.range, "python-type",
           fmt::format("TypeError: bad operand type for unary {}: '{}'", py::toString(u.op),
                       typeName(*v)));
    }
    case ExprKind::BinOp: {
      const auto &b = py::cast<py::BinOp>(e);
      V l = eval(*b.left, scope);
      V r = eval(*b.right, scope);
      return binop(b.op, l, r, e.range);
    }
    case ExprKind::BoolOp: {
      const auto &b = py::cast<py::BoolOp>(e);
      V v;
      for (const py::ExprPtr &x : b.values) {
        v = eval(*x, scope);
        bool t = truth(v, x->range, b.op == py::BoolOpKind::And ? "`and` on it" : "`or` on it");
        if ((b.op == py::BoolOpKind::And) != t)
          return v;
      }
      return v;
    }
    case ExprKind::Compare: {
      const auto &c = py::cast<py::Compare>(e);
      V left = eval(*c.left, scope);
      V result;
      for (size_t i = 0; i < c.ops.size(); ++i) {
        V right = eval(*c.comparators[i], scope);
        result = compare(c.ops[i], left, right, e.range);
        if (i + 1 < c.ops.size() && !truth(result, e.range, "a chained comparison"))
          return result;
        left = right;
      }
      return result;
    }
    case ExprKind::Call:
      return evalCall(py::cast<py::Call>(e), scope);
    case ExprKind::Attribute: {
      const auto &a = py::cast<py::Attribute>(e);
      return attribute(eval(*a.value, scope), a.attr, e.range);
    }
    case ExprKind::Subscript: {
      const auto &s = py::cast<py::Subscript>(e);
      return subscript(eval(*s.value, scope), *s.slice, scope, e.range);
    }
    case ExprKind::Slice: {
      const auto &s = py::cast<py::Slice>(e);
      V v = mk(VK::Slice);
      for (const py::ExprPtr *p : {&s.lower, &s.upper, &s.step})
        v->items.push_back(*p ? eval(**p, scope) : mkNone());
      return v;
    }
    case ExprKind::Tuple:
    case ExprKind::List: {
      const auto &elts =
          e.kind == ExprKind::Tuple ? py::cast<py::Tuple>(e).elts : py::cast<py::List>(e).elts;
      V v = mk(e.kind == ExprKind::Tuple ? VK::Tuple : VK::List);
      for (const py::ExprPtr &x : elts) {
        if (x->kind == ExprKind::Starred) {
          for (const V &item : iterate(eval(*py::cast<py::Starred>(*x).value, scope), x->range))
            v->items.push_back(item);
        } else {
          v->items.push_back(eval(*x, scope));
        }
      }
      return v;
    }
    case ExprKind::Dict: {
      const auto &d = py::cast<py::Dict>(e);
      V v = mk(VK::Dict);
      for (size_t i = 0; i < d.keys.size(); ++i) {
        if (!d.keys[i])
          unsupported(e.range, "`**` in a dict display");
        v->keys.push_back(eval(*d.keys[i], scope));
        v->items.push_back(eval(*d.values[i], scope));
      }
      return v;
    }
    case ExprKind::ListComp:
    case ExprKind::GeneratorExp: {
      const auto &c = e.kind == ExprKind::ListComp
                          ? static_cast<const py::Comp<ExprKind::ListComp> &>(e).generators
                          : static_cast<const py::Comp<ExprKind::GeneratorExp> &>(e).generators;
      const py::Expr &elt = e.kind == ExprKind::ListComp ? *py::cast<py::ListComp>(e).elt
                                                         : *py::cast<py::GeneratorExp>(e).elt;
      V out = mk(VK::List);
      auto inner = std::make_shared<Scope>();
      inner->parent = scope;
      comprehension(c, 0, inner, [&] { out->items.push_back(eval(elt, inner)); });
      return out;
    }
    case ExprKind::DictComp: {
      const auto &c = py::cast<py::DictComp>(e);
      V out = mk(VK::Dict);
      auto inner = std::make_shared<Scope>();
      inner->parent = scope;
      comprehension(c.generators, 0, inner, [&] {
        out->keys.push_back(eval(*c.key, inner));
        out->items.push_back(eval(*c.value, inner));
      });
      return out;
    }
    case ExprKind::Lambda: {
      const auto &l = py::cast<py::Lambda>(e);
      auto fn = std::make_shared<Function>();
      fn->name = "<lambda>";
      fn->range = e.range;
      fn->params = &l.params;
      fn->lambda = l.body.get();
      fn->env = scope;
      for (const py::Param &p : l.params)
        fn->defaults.push_back(p.default_ ? eval(*p.default_, scope) : nullptr);
      V f = mk(VK::Func);
      f->func = fn;
      return f;
    }
    case ExprKind::IfExp: {
      const auto &i = py::cast<py::IfExp>(e);
      return truth(eval(*i.test, scope), i.test->range, "a conditional expression on it")
                 ? eval(*i.body, scope)
                 : eval(*i.orelse, scope);
    }
    default:
      unsupported(e.range, fmt::format("the `{}` expression is not supported by the tracer",
                                       py::toString(e.kind)));
    }
  }

  template <typename F>
  void comprehension(const std::vector<py::Comprehension> &gens, size_t i,
                     const std::shared_ptr<Scope> &scope, F &&body) {
    if (i == gens.size()) {
      if (++steps_ > kMaxSteps)
        fail(gens.back().range, "python-overflow",
             fmt::format("the trace runs more than {} Python statements (comprehensions)",
                         kMaxSteps));
      body();
      return;
    }
    const py::Comprehension &g = gens[i];
    for (const V &item : iterate(eval(*g.iter, scope), g.iter->range)) {
      assign(*g.target, item, scope, g.range);
      bool keep = true;
      for (const py::ExprPtr &cond : g.ifs)
        keep = keep && truth(eval(*cond, scope), cond->range, "a comprehension `if` on it");
      if (keep)
        comprehension(gens, i + 1, scope, body);
    }
  }

  V evalCall(const py::Call &c, const std::shared_ptr<Scope> &scope) {
    std::string hint = nameHint_;
    nameHint_.clear();
    V fn = eval(*c.func, scope);
    Args args;
    for (const py::ExprPtr &a : c.args) {
      if (a->kind == py::ExprKind::Starred) {
        for (const V &item : iterate(eval(*py::cast<py::Starred>(*a).value, scope), a->range))
          args.pos.push_back(item);
      } else {
        args.pos.push_back(eval(*a, scope));
      }
    }
    for (const py::Keyword &k : c.keywords) {
      if (k.name.empty()) {
        V d = eval(*k.value, scope);
        if (d->k != VK::Dict)
          fail(k.range, "python-type", "argument after ** must be a mapping");
        for (size_t i = 0; i < d->keys.size(); ++i) {
          if (d->keys[i]->k != VK::Str)
            fail(k.range, "python-type", "keywords must be strings");
          args.kw.emplace_back(d->keys[i]->s, d->items[i]);
        }
      } else {
        args.kw.emplace_back(k.name, eval(*k.value, scope));
      }
    }
    nameHint_ = hint;
    // A call of a Python function inside the kernel is inlined: record it, so that the
    // statements it emits name it (emit()).
    const Function *callee = fn->k == VK::Func                               ? fn->func.get()
                             : fn->k == VK::Partial && fn->fn->k == VK::Func ? fn->fn->func.get()
                                                                             : nullptr;
    uint32_t outer = inlined_;
    if (callee && inKernel_ && options_.sources) {
      support::SourceLoc site = c.range.begin;
      site.inlined = outer;
      inlined_ = options_.sources->addInlineContext(site, callee->name);
    }
    V out;
    try {
      out = call(fn, std::move(args), c.range);
    } catch (...) {
      inlined_ = outer;
      throw;
    }
    inlined_ = outer;
    nameHint_.clear();
    return out;
  }

  //--- calls --------------------------------------------------------------

  V call(const V &fn, Args args, SourceRange r) {
    switch (fn->k) {
    case VK::Func:
      return callFunction(*fn->func, std::move(args), r);
    case VK::Partial: {
      Args all;
      all.pos = fn->items;
      all.pos.insert(all.pos.end(), args.pos.begin(), args.pos.end());
      for (const auto &[k, v] : fn->kw)
        all.kw.emplace_back(k, v);
      for (auto &kv : args.kw) {
        bool replaced = false;
        for (auto &old : all.kw)
          if (old.first == kv.first)
            old.second = kv.second, replaced = true;
        if (!replaced)
          all.kw.push_back(kv);
      }
      return call(fn->fn, std::move(all), r);
    }
    case VK::Api:
      return callApi(fn->s, std::move(args), r);
    case VK::Obj:
      return callObj(fn, std::move(args), r);
    default:
      fail(r, "python-type", fmt::format("TypeError: '{}' object is not callable", typeName(*fn)));
    }
  }

  V callFunction(const Function &f, Args args, SourceRange r) {
    try {
      return callFunctionBody(f, std::move(args), r);
    } catch (TraceError &e) {
      if (e.notes.size() < kMaxNotes)
        e.notes.emplace_back(r, fmt::format("in {}(), called here", f.name));
      else
        ++e.elided;
      throw;
    }
  }

  V callFunctionBody(const Function &f, Args args, SourceRange r) {
    auto local = std::make_shared<Scope>();
    local->parent = f.env;
    const auto &params = *f.params;
    size_t next = 0;
    V varargs;
    V varkw;
    for (size_t i = 0; i < params.size(); ++i) {
      const py::Param &p = params[i];
      if (p.kind == py::ParamKind::VarArgs) {
        varargs = mk(VK::Tuple);
        while (next < args.pos.size())
          varargs->items.push_back(args.pos[next++]);
        local->vars[p.name] = varargs;
      } else if (p.kind == py::ParamKind::VarKeywords) {
        varkw = mk(VK::Dict);
        local->vars[p.name] = varkw;
      } else if (p.kind != py::ParamKind::KeywordOnly && next < args.pos.size()) {
        local->vars[p.name] = args.pos[next++];
      }
    }
    if (next < args.pos.size())
      fail(r, "python-call",
           fmt::format("TypeError: {}() takes {} positional arguments but {} were given", f.name,
                       next, args.pos.size()));
    for (auto &[k, v] : args.kw) {
      bool found = false;
      for (const py::Param &p : params)
        if (p.name == k && p.kind != py::ParamKind::PositionalOnly &&
            p.kind != py::ParamKind::VarArgs && p.kind != py::ParamKind::VarKeywords) {
          if (local->vars.count(k))
            fail(r, "python-call",
                 fmt::format("TypeError: {}() got multiple values for argument '{}'", f.name, k));
          local->vars[k] = v;
          found = true;
        }
      if (!found) {
        if (!varkw)
          fail(r, "python-call",
               fmt::format("TypeError: {}() got an unexpected keyword argument '{}'", f.name, k));
        varkw->keys.push_back(mkStr(k));
        varkw->items.push_back(v);
      }
    }
    for (size_t i = 0; i < params.size(); ++i) {
      const py::Param &p = params[i];
      if (p.kind == py::ParamKind::VarArgs || p.kind == py::ParamKind::VarKeywords ||
          local->vars.count(p.name))
        continue;
      if (!f.defaults[i])
        fail(r, "python-call",
             fmt::format("TypeError: {}() missing required argument: '{}'", f.name, p.name));
      local->vars[p.name] = f.defaults[i];
    }
    if (f.lambda)
      return eval(*f.lambda, local);
    V ret = mkNone();
    Flow fl = execBody(*f.body, local, ret);
    (void)fl;
    return ret;
  }

  // Keyword and positional arguments of an API call, by parameter name.
  struct Bound {
    std::map<std::string, V> named;
    std::vector<V> rest;
  };
  Bound bind(const std::string &api, const Args &args, std::initializer_list<const char *> names,
             SourceRange r, bool allowRest = false) {
    Bound b;
    std::vector<std::string> params(names.begin(), names.end());
    for (size_t i = 0; i < args.pos.size(); ++i) {
      if (i < params.size())
        b.named[params[i]] = args.pos[i];
      else if (allowRest)
        b.rest.push_back(args.pos[i]);
      else
        fail(r, "python-call", fmt::format("{}: too many positional arguments", api));
    }
    for (const auto &[k, v] : args.kw) {
      if (std::find(params.begin(), params.end(), k) == params.end())
        unsupported(r, fmt::format("argument `{}` of {} is not supported by the tracer", k, api));
      if (b.named.count(k))
        fail(r, "python-call", fmt::format("{}: multiple values for argument '{}'", api, k));
      b.named[k] = v;
    }
    return b;
  }
  static V opt(const Bound &b, const std::string &name) {
    auto it = b.named.find(name);
    return it == b.named.end() ? nullptr : it->second;
  }
  V need(const Bound &b, const std::string &api, const std::string &name, SourceRange r) {
    V v = opt(b, name);
    if (!v)
      fail(r, "python-call", fmt::format("{}: missing argument '{}'", api, name));
    return v;
  }

  std::vector<int64_t> shapeOf(const V &v, SourceRange r, std::string_view what) {
    std::vector<int64_t> out;
    if (v->k == VK::Int) {
      out.push_back(v->i);
      return out;
    }
    if (v->k != VK::Tuple && v->k != VK::List)
      fail(r, "python-unknown-fact",
           fmt::format("{}: expected a shape (a tuple of ints), got {}", what, typeName(*v)));
    for (const V &d : v->items)
      out.push_back(toInt(d, r, what));
    return out;
  }

  ast::DType dtypeArg(const V &v, SourceRange r) {
    if (!v)
      return ast::DType::F32;
    auto d = dtypeOf(*v);
    if (!d)
      unsupported(r, fmt::format("the element type {} (dkv supports jnp.float32, bfloat16, "
                                 "float16, int32, int16, int8, uint8, uint32)",
                                 typeName(*v)));
    return *d;
  }

  V makeArray(std::vector<int64_t> shape, ast::DType dtype) {
    V a = mkObj("Array");
    std::vector<V> dims;
    for (int64_t d : shape)
      dims.push_back(mkInt(d));
    a->items = {mkTuple(dims)};
    static const std::map<ast::DType, std::string> names = {
        {ast::DType::F32, "jnp.float32"}, {ast::DType::BF16, "jnp.bfloat16"},
        {ast::DType::F16, "jnp.float16"}, {ast::DType::I32, "jnp.int32"},
        {ast::DType::I16, "jnp.int16"},   {ast::DType::I8, "jnp.int8"},
        {ast::DType::U8, "jnp.uint8"},    {ast::DType::U32, "jnp.uint32"}};
    a->kw["dtype"] = mkApi(names.at(dtype));
    return a;
  }

  // Whether a call outside every kernel may be a host value: a jax, jnp, lax or numpy
  // function (or a method of a host value) that is given no Python function. A call
  // given a function (`jax.vmap(f)`, `jax.checkpoint(f)`) could run a kernel, so it
  // stays an error: false.
  bool hostCall(const std::string &name, const Args &args, SourceRange r) {
    static const std::vector<std::string> prefixes = {"jax.", "jnp.", "lax.", "np."};
    bool known = name.find('.') == std::string::npos; // a method of a host value
    for (const std::string &p : prefixes)
      known = known || name.rfind(p, 0) == 0;
    if (!known || name.rfind("jax.experimental.pallas", 0) == 0)
      return false;
    auto function = [](const V &v) { return v->k == VK::Func || v->k == VK::Partial; };
    for (const V &v : args.pos)
      if (function(v))
        fail(r, "python-unknown-api",
             fmt::format("`{}` is given a function: dkv does not know whether it runs a "
                         "kernel (docs/python.md lists the API it models; nothing is "
                         "dropped silently)",
                         name));
    for (const auto &kv : args.kw)
      if (function(kv.second))
        fail(r, "python-unknown-api",
             fmt::format("`{}` is given a function: dkv does not know whether it runs a "
                         "kernel (docs/python.md lists the API it models; nothing is "
                         "dropped silently)",
                         name));
    return true;
  }

  // `array.reshape(d0, d1, ...)` or `array.reshape((d0, d1, ...))` of a host array: the
  // same elements in row-major order, one dimension may be -1.
  V reshapeArray(const V &array, const Args &args, SourceRange r) {
    if (!args.kw.empty() || args.pos.empty())
      fail(r, "python-call",
           "`.reshape` takes the new shape (keyword arguments such as "
           "`order` are not supported)");
    V shapeV = args.pos.size() == 1 && (args.pos[0]->k == VK::Tuple || args.pos[0]->k == VK::List)
                   ? args.pos[0]
                   : mkTuple(args.pos);
    std::vector<int64_t> shape;
    for (const V &d : iterate(shapeV, r))
      shape.push_back(toInt(d, r, "a dimension of `.reshape`"));
    int64_t total = 1;
    for (int64_t d : shapeOf(array->items[0], r, "the array shape"))
      total *= d;
    int64_t known = 1, unknownAt = -1;
    for (size_t i = 0; i < shape.size(); ++i) {
      if (shape[i] == -1 && unknownAt < 0)
        unknownAt = static_cast<int64_t>(i);
      else if (shape[i] < 0)
        fail(r, "python-call",
             "ValueError: `.reshape` takes one -1 at most and no other negative "
             "dimension");
      else
        known *= shape[i];
    }
    if (unknownAt >= 0 && known > 0 && total % known == 0)
      shape[unknownAt] = total / known;
    int64_t product = 1;
    for (int64_t d : shape)
      product *= d;
    if (product != total || (unknownAt >= 0 && known == 0))
      fail(r, "python-call",
           fmt::format("ValueError: cannot reshape an array of {} elements into shape ({})", total,
                       fmt::join(shape, ", ")));
    V out = makeArray(shape, *dtypeOf(*array->kw.at("dtype")));
    for (const char *k : {"contents", "deviceContents"})
      if (array->kw.count(k))
        out->kw[k] = array->kw.at(k);
    return out;
  }

  V callObj(const V &fn, Args args, SourceRange r) {
    const std::string &k = fn->s;
    if (isHost(fn)) {
      hostCall("method", args, r); // an error when it is given a function
      return fn;
    }
    if (k == "method:reshape")
      return reshapeArray(fn->items[0], args, r);
    if (k == "when") {
      if (args.pos.size() != 1 || !args.kw.empty() || args.pos[0]->k != VK::Func)
        fail(r, "python-call", "pl.when(...) decorates a function without parameters");
      V cond = fn->items[0];
      if (cond->k != VK::Traced) {
        if (truth(cond, r, "pl.when"))
          callFunction(*args.pos[0]->func, {}, r);
        return mkNone();
      }
      TE c = condTE(cond, r);
      auto body = std::make_unique<std::vector<ast::StmtPtr>>();
      blocks_.push_back(body.get());
      callFunction(*args.pos[0]->func, {}, r);
      blocks_.pop_back();
      SourceRange fr = args.pos[0]->func->range;
      std::vector<ast::IfStmt::Branch> branches;
      branches.push_back({build(*c), std::make_unique<ast::Block>(fr, std::move(*body))});
      emit(std::make_unique<ast::IfStmt>(r, std::move(branches), nullptr));
      return mkNone();
    }
    if (k == "loop") {
      // @pl.loop(lo, hi) / @pl.loop(lo, hi, init_carry=c): runs the decorated body.
      if (args.pos.size() != 1 || !args.kw.empty())
        fail(r, "python-call", "pl.loop(...) decorates one function");
      bool carried = fn->items[2]->k != VK::None;
      return forLoop("pl.loop", fn->items[0], fn->items[1], args.pos[0], fn->items[2], carried, r);
    }
    if (k.rfind("method:", 0) == 0) {
      std::string m = k.substr(7);
      V self = fn->items[0];
      if (m == "astype") {
        if (args.pos.size() != 1 || !args.kw.empty())
          fail(r, "python-call", "`.astype(dtype)` takes one element type");
        return computeValue(ast::ComputeOp::AsType, {self}, dtypeArg(args.pos[0], r), std::nullopt,
                            r, "astype");
      }
      if (m == "append") {
        if (args.pos.size() != 1)
          fail(r, "python-call", "list.append takes one argument");
        self->items.push_back(args.pos[0]);
        return mkNone();
      }
      // `.start(priority=p)` (AsyncCopyDescriptor.start(priority=0, *, add=False)): the
      // priority, a Python int; sema checks it (0 or 1, and 0 on a remote copy).
      ast::ExprPtr priority;
      if (m == "start" && args.pos.size() + args.kw.size() == 1 &&
          (args.kw.empty() || args.kw[0].first == "priority")) {
        const V &p = args.pos.empty() ? args.kw[0].second : args.pos[0];
        priority = std::make_unique<ast::IntLiteral>(r, toInt(p, r, "the DMA priority"));
        args.pos.clear();
        args.kw.clear();
      }
      if (!args.pos.empty() || !args.kw.empty())
        unsupported(r, fmt::format("arguments of `.{}()`", m));
      ast::DmaMethod dm = m == "start"       ? ast::DmaMethod::Start
                          : m == "wait"      ? ast::DmaMethod::Wait
                          : m == "wait_send" ? ast::DmaMethod::WaitSend
                                             : ast::DmaMethod::WaitRecv;
      if (dm != ast::DmaMethod::Start && dm != ast::DmaMethod::Wait && !self->desc->remote)
        fail(r, "python-call",
             fmt::format("`.{}()` needs a remote copy (pltpu.make_async_remote_copy)", m));
      emit(std::make_unique<ast::DmaStmt>(r, std::make_unique<ast::NameExpr>(r, self->desc->let),
                                          dm, std::move(priority)));
      return mkNone();
    }
    if (k == "ShardMap")
      return callShardMap(fn, std::move(args), r);
    if (k == "PallasCall")
      return callPallas(fn, std::move(args), r);
    if (k == "PlKernel")
      return callPlKernel(fn, std::move(args), r);
    if (k == "SemType") {
      // pltpu.SemaphoreType.DMA((n,)) : an array of semaphores.
      V out = mkObj("SemArray");
      out->items = {fn->items[0], args.pos.empty() ? mkTuple({}) : args.pos[0]};
      return out;
    }
    if (k == "DirectiveConst") { // `# dkv: set NAME()=VALUE`
      if (!args.pos.empty() || !args.kw.empty())
        fail(r, "python-call",
             fmt::format("{}() takes no arguments ('# dkv: set {}()=VALUE')", fn->name, fn->name));
      return fn->items[0];
    }
    fail(r, "python-type", fmt::format("TypeError: '{}' object is not callable", k));
  }

  V callApi(const std::string &name, Args args, SourceRange r);
  // Loops, lax.cond, select, semaphore_read, sync_copy and compute on values (issue 13);
  // nullopt: not one of these.
  std::optional<V> callControlOrCompute(const std::string &name, const Args &args, SourceRange r);
  V forLoop(const std::string &api, const V &loV, const V &hiV, const V &body, const V &init,
            bool loopApi, SourceRange r);
  V condBranches(const V &pred, const V &t, const V &f, const std::vector<V> &ops, SourceRange r);
  V computeValue(ast::ComputeOp op, std::vector<V> operands, std::optional<ast::DType> dtype,
                 std::optional<int64_t> axis, SourceRange r, std::string_view api);
  V callShardMap(const V &sm, Args args, SourceRange r);
  V callPallas(const V &pc, Args args, SourceRange r);
  V callPlKernel(const V &k, Args args, SourceRange r);
  TE deviceTE(const V &id, const V &type, SourceRange r);
  V semArg(const V &v, SourceRange r, std::string_view what);
  V refArg(const V &v, SourceRange r, std::string_view what);
  std::unique_ptr<ast::Decl> scratchDecl(const V &spec, const std::string &name, SourceRange r,
                                         ast::Storage storage, V &bound);

  // Tables: SMEM integer inputs and scalar-prefetch operands (docs/python.md "Tables").
  V knownArray(const V &data, const V &dtype, SourceRange r);
  static void fillContents(const V &array, int64_t value);
  void shardContents(const V &global, const V &local, const V &spec, const V &mesh,
                     const std::vector<int64_t> &globalShape,
                     const std::vector<int64_t> &localShape, SourceRange r);
  void makeTable(ast::BufferDecl &decl, const V &arr, const std::vector<int64_t> &shape,
                 SourceRange r, bool scalarPrefetch);
  V tableRead(const V &table, const std::vector<V> &items, SourceRange r, SourceRange sr);
  /// pltpu.CompilerParams(collective_id=..., skip_device_barrier=...) of pallas_call or
  /// pl.kernel (nullptr: not given).
  struct CompilerParams {
    int64_t collective = -1; ///< -1: no collective_id
    bool skipBarrier = false;
  };
  CompilerParams compilerParams(const V &cp, SourceRange r);
  /// A kernel parameter for the operand or output `arr` (a jax.ShapeDtypeStruct or array):
  /// its declaration, appended to `bufs`, and the ref the kernel body is called with.
  V paramBuffer(const V &arr, const std::string &name, SourceRange pr, ast::Direction dir,
                ast::MemSpace space, SourceRange r,
                std::vector<std::unique_ptr<ast::BufferDecl>> &bufs);
  void beginKernel();
  void finishKernel(const Function &kf, SourceRange r,
                    std::vector<std::unique_ptr<ast::BufferDecl>> bufs,
                    std::vector<std::unique_ptr<ast::Decl>> scratchDecls, Args kargs,
                    int64_t collective, bool skipBarrier);
  // `# dkv:` directives (pytrace/Directives.h).
  void applySets();
  void traceEntry(const Entry &entry);
  std::string kernelCandidates() const;
};

V Tracer::semArg(const V &v, SourceRange r, std::string_view what) {
  if (v->k != VK::Sem)
    fail(r, "python-type", fmt::format("{}: expected a semaphore, got {}", what, typeName(*v)));
  return v;
}
V Tracer::refArg(const V &v, SourceRange r, std::string_view what) {
  if (v->k != VK::Ref)
    fail(r, "python-type", fmt::format("{}: expected a ref, got {}", what, typeName(*v)));
  return v;
}

TE Tracer::deviceTE(const V &id, const V &type, SourceRange r) {
  if (type && !(type->k == VK::Api &&
                (type->s == "pltpu.DeviceIdType.MESH" || type->s == "pltpu.DeviceIdType.LOGICAL" ||
                 type->s == "pl.DeviceIdType.MESH" || type->s == "pl.DeviceIdType.LOGICAL")))
    unsupported(r, "device_id_type other than pltpu.DeviceIdType.MESH or LOGICAL");
  bool logical = type && type->s.find("LOGICAL") != std::string::npos;
  if (id->k == VK::Tuple || id->k == VK::List) {
    if (logical)
      fail(r, "python-call", "a LOGICAL device id is one integer, not a tuple");
    auto e = std::make_shared<TExpr>();
    e->k = TExpr::K::Tuple, e->range = r;
    for (const V &c : id->items)
      e->kids.push_back(intTE(c, r, "a device coordinate"));
    return e;
  }
  if (id->k == VK::Dict) {
    auto e = std::make_shared<TExpr>();
    e->k = TExpr::K::Mapping, e->range = r;
    for (size_t i = 0; i < id->keys.size(); ++i) {
      if (id->keys[i]->k != VK::Str)
        fail(r, "python-type", "the keys of a device id dict are axis names");
      e->keys.push_back(id->keys[i]->s);
      e->kids.push_back(intTE(id->items[i], r, "a device coordinate"));
    }
    return e;
  }
  return intTE(id, r, "a device id");
}

std::unique_ptr<ast::Decl> Tracer::scratchDecl(const V &spec, const std::string &name,
                                               SourceRange r, ast::Storage storage, V &bound) {
  ast::SemKind sk;
  if (spec->k == VK::Api && isSemType(spec->s, sk)) {
    bound = mk(VK::Sem);
    bound->name = name, bound->semKind = sk;
    return std::make_unique<ast::SemDecl>(r, name, r, storage, sk, std::vector<ast::ExprPtr>{});
  }
  if (spec->k == VK::Obj && spec->s == "SemArray") {
    isSemType(spec->items[0]->s, sk);
    std::vector<int64_t> dims = shapeOf(spec->items[1], r, "a semaphore array shape");
    bound = mk(VK::Sem);
    bound->name = name, bound->semKind = sk, bound->dims = dims;
    std::vector<ast::ExprPtr> de;
    for (int64_t d : dims)
      de.push_back(std::make_unique<ast::IntLiteral>(r, d));
    return std::make_unique<ast::SemDecl>(r, name, r, storage, sk, std::move(de));
  }
  if (spec->k == VK::Obj && spec->s == "MemRef") {
    std::vector<int64_t> dims = shapeOf(spec->items[0], r, "a scratch shape");
    ast::DType dt = dtypeArg(spec->items[1], r);
    bound = mk(VK::Ref);
    bound->name = name, bound->dims = dims, bound->dtype = dt;
    std::vector<ast::ExprPtr> de;
    for (int64_t d : dims)
      de.push_back(std::make_unique<ast::IntLiteral>(r, d));
    return std::make_unique<ast::BufferDecl>(r, name, r, storage, ast::Direction::None,
                                             *memSpaceOf(spec->kw.at("space")->s), dt,
                                             std::move(de));
  }
  unsupported(r, fmt::format("the scratch shape {} (supported: pltpu.SemaphoreType.DMA / "
                             "REGULAR, with a shape, and pltpu.VMEM / SMEM(shape, dtype))",
                             typeName(*spec)));
}

V Tracer::callApi(const std::string &name, Args args, SourceRange r) {
  // Python builtins.
  if (name == "builtins.range") {
    std::vector<int64_t> a;
    for (const V &v : args.pos)
      a.push_back(toInt(v, r, "range()"));
    if (a.empty() || a.size() > 3 || !args.kw.empty())
      fail(r, "python-call", "range() takes 1 to 3 integer arguments");
    int64_t lo = a.size() > 1 ? a[0] : 0, hi = a.size() > 1 ? a[1] : a[0];
    int64_t step = a.size() > 2 ? a[2] : 1;
    if (step == 0)
      fail(r, "python-call", "ValueError: range() arg 3 must not be zero");
    V out = mk(VK::List);
    for (int64_t i = lo; step > 0 ? i < hi : i > hi; i += step) {
      if (out->items.size() >= 100000)
        fail(r, "python-overflow", "range() longer than 100000 elements");
      out->items.push_back(mkInt(i));
    }
    return out;
  }
  if (name == "builtins.len") {
    if (args.pos.size() != 1)
      fail(r, "python-call", "len() takes one argument");
    const V &v = args.pos[0];
    if (v->k == VK::Str)
      return mkInt(static_cast<int64_t>(v->s.size()));
    if (v->k == VK::Dict)
      return mkInt(static_cast<int64_t>(v->keys.size()));
    return mkInt(static_cast<int64_t>(iterate(v, r).size()));
  }
  if (name == "builtins.enumerate" || name == "builtins.zip" || name == "builtins.list" ||
      name == "builtins.tuple" || name == "builtins.reversed") {
    V out = mk(name == "builtins.tuple" ? VK::Tuple : VK::List);
    if (name == "builtins.enumerate") {
      if (args.pos.empty())
        fail(r, "python-call", "enumerate() takes an iterable");
      int64_t i = args.pos.size() > 1 ? toInt(args.pos[1], r, "enumerate start") : 0;
      for (const V &v : iterate(args.pos[0], r))
        out->items.push_back(mkTuple({mkInt(i++), v}));
    } else if (name == "builtins.zip") {
      std::vector<std::vector<V>> lists;
      size_t n = SIZE_MAX;
      for (const V &a : args.pos) {
        lists.push_back(iterate(a, r));
        n = std::min(n, lists.back().size());
      }
      for (size_t i = 0; !lists.empty() && i < n; ++i) {
        std::vector<V> t;
        for (auto &l : lists)
          t.push_back(l[i]);
        out->items.push_back(mkTuple(t));
      }
    } else if (!args.pos.empty()) {
      out->items = iterate(args.pos[0], r);
      if (name == "builtins.reversed")
        std::reverse(out->items.begin(), out->items.end());
    }
    return out;
  }
  if (name == "builtins.print" || name == "jax.debug.print" || name == "pl.debug_print")
    return mkNone();
  if (name == "builtins.int" || name == "builtins.bool") {
    if (args.pos.size() != 1)
      fail(r, "python-call", "int() / bool() take one argument here");
    if (name == "builtins.bool")
      return mkBool(truth(args.pos[0], r, "bool() on it"));
    return mkInt(toInt(args.pos[0], r, "int()"));
  }
  if (name == "builtins.min" || name == "builtins.max" || name == "builtins.sum" ||
      name == "builtins.abs") {
    std::vector<V> items =
        args.pos.size() == 1 && name != "builtins.abs" ? iterate(args.pos[0], r) : args.pos;
    if (items.empty())
      fail(r, "python-call", fmt::format("{}() of nothing", name.substr(9)));
    int64_t acc = name == "builtins.sum" ? 0 : toInt(items[0], r, name.substr(9) + "()");
    if (name == "builtins.abs")
      return mkInt(acc < 0 ? -acc : acc);
    for (size_t i = name == "builtins.sum" ? 0 : 1; i < items.size(); ++i) {
      int64_t x = toInt(items[i], r, name.substr(9) + "()");
      acc = name == "builtins.min"   ? std::min(acc, x)
            : name == "builtins.max" ? std::max(acc, x)
                                     : checked(static_cast<__int128>(acc) + x, r);
    }
    return mkInt(acc);
  }
  if (name == "builtins.dict") {
    V d = mk(VK::Dict);
    for (auto &[k, v] : args.kw)
      d->keys.push_back(mkStr(k)), d->items.push_back(v);
    return d;
  }
  // functools.
  if (name == "functools.partial") {
    if (args.pos.empty())
      fail(r, "python-call", "functools.partial takes a function");
    V p = mk(VK::Partial);
    p->fn = args.pos[0];
    p->items.assign(args.pos.begin() + 1, args.pos.end());
    for (auto &[k, v] : args.kw)
      p->kw[k] = v;
    return p;
  }
  // Host side: devices, meshes, arrays.
  if (name == "jax.device_count" || name == "jax.local_device_count")
    return mkInt(options_.devices);
  if (name == "jax.devices" || name == "jax.local_devices") {
    V l = mk(VK::List);
    for (int64_t i = 0; i < options_.devices; ++i)
      l->items.push_back(mkObj("Device"));
    return l;
  }
  if (name == "jax.experimental.mesh_utils.create_device_mesh") {
    if (args.pos.empty())
      fail(r, "python-call", "create_device_mesh takes a shape");
    std::vector<int64_t> shape = shapeOf(args.pos[0], r, "the device mesh shape");
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    if (n != options_.devices)
      fail(r, "python-unknown-fact",
           fmt::format("create_device_mesh({}) needs {} devices, and --devices is {}",
                       fmt::join(shape, ", "), n, options_.devices));
    V m = mkObj("DeviceMesh");
    m->items = {args.pos[0]};
    return m;
  }
  if (name == "jax.sharding.Mesh" || name == "jax.make_mesh") {
    Bound b = name == "jax.make_mesh"
                  ? bind(name, args, {"axis_shapes", "axis_names", "devices", "axis_types"}, r)
                  : bind(name, args, {"devices", "axis_names", "axis_types"}, r);
    V names = need(b, name, "axis_names", r);
    std::vector<int64_t> shape;
    if (name == "jax.make_mesh") {
      shape = shapeOf(need(b, name, "axis_shapes", r), r, "the mesh shape");
    } else {
      V devs = need(b, name, "devices", r);
      if (devs->k == VK::Obj && devs->s == "DeviceMesh")
        shape = shapeOf(devs->items[0], r, "the mesh shape");
      else if (devs->k == VK::List || devs->k == VK::Tuple)
        shape = {static_cast<int64_t>(devs->items.size())};
      else
        fail(r, "python-unknown-fact",
             "Mesh(devices, ...): the devices must come from "
             "mesh_utils.create_device_mesh or jax.devices()");
    }
    std::vector<V> axisNames = names->k == VK::Str ? std::vector<V>{names} : iterate(names, r);
    if (axisNames.size() != shape.size())
      fail(r, "python-call", "the mesh has a different number of axis names and sizes");
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    if (n != options_.devices)
      fail(r, "python-unknown-fact",
           fmt::format("the mesh has {} devices, and --devices is {}", n, options_.devices));
    V m = mkObj("Mesh");
    std::vector<V> sizes;
    for (int64_t d : shape)
      sizes.push_back(mkInt(d));
    for (const V &a : axisNames)
      if (a->k != VK::Str)
        fail(r, "python-type", "mesh axis names are strings");
    m->items = {mkTuple(axisNames), mkTuple(sizes)};
    return m;
  }
  if (name == "jax.sharding.PartitionSpec" || name == "jax.P") {
    V p = mkObj("P");
    p->items = args.pos;
    return p;
  }
  if (name == "jax.sharding.NamedSharding")
    return mkObj("NamedSharding");
  if (name == "jax.device_put") {
    if (args.pos.empty())
      fail(r, "python-call", "jax.device_put takes an array");
    return args.pos[0];
  }
  if (name == "jax.jit") {
    if (args.pos.size() != 1)
      unsupported(r, "jax.jit other than `jax.jit(f)`");
    return args.pos[0];
  }
  if (name == "jax.random.key" || name == "jax.random.PRNGKey")
    return mkObj("Key");
  if (name == "jax.random.uniform" || name == "jax.random.normal") {
    Bound b = bind(name, args, {"key", "shape", "dtype", "minval", "maxval"}, r);
    V shape = opt(b, "shape");
    if (!shape)
      fail(r, "python-unknown-fact", fmt::format("{}: the shape is not given", name));
    return makeArray(shapeOf(shape, r, "the array shape"), dtypeArg(opt(b, "dtype"), r));
  }
  if ((name == "jnp.zeros" || name == "jnp.ones" || name == "jnp.empty" ||
       name == "jax.ShapeDtypeStruct") &&
      !(inKernel_ && name != "jax.ShapeDtypeStruct")) {
    Bound b = bind(name, args, {"shape", "dtype"}, r);
    V a = makeArray(shapeOf(need(b, name, "shape", r), r, "the array shape"),
                    dtypeArg(opt(b, "dtype"), r));
    if ((name == "jnp.zeros" || name == "jnp.ones") && ast::isInteger(*dtypeOf(*a->kw.at("dtype"))))
      fillContents(a, name == "jnp.ones" ? 1 : 0); // a table of known values
    return a;
  }
  if (name == "jnp.array" || name == "jnp.asarray" || name == "np.array" || name == "np.asarray") {
    Bound b = bind(name, args, {"object", "dtype"}, r);
    return knownArray(need(b, name, "object", r), opt(b, "dtype"), r);
  }
  if (name == "jnp.arange") {
    Bound b = bind(name, args, {"stop", "dtype"}, r);
    return makeArray({toInt(need(b, name, "stop", r), r, "jnp.arange")},
                     b.named.count("dtype") ? dtypeArg(b.named["dtype"], r) : ast::DType::I32);
  }
  if (name == "jax.experimental.shard_map.shard_map" || name == "jax.shard_map") {
    Bound b =
        bind(name, args,
             {"f", "mesh", "in_specs", "out_specs", "check_rep", "check_vma", "axis_names"}, r);
    V sm = mkObj("ShardMap");
    sm->kw = b.named;
    if (!sm->kw.count("f")) {
      // The decorator form: shard_map(mesh=..., ...)(f).
      V p = mk(VK::Partial);
      p->fn = mkApi(name);
      p->kw = b.named;
      return p;
    }
    return sm;
  }
  // A TensorCore mesh (docs/language.md "TensorCores"): its axis name and core count.
  if (name == "pltpu.create_tensorcore_mesh" || name == "pltpu.TensorCoreMesh") {
    Bound b = bind(name, args, {"axis_name", "devices", "num_cores"}, r);
    V axis = need(b, name, "axis_name", r);
    if (axis->k != VK::Str)
      unsupported(r, "a TensorCore mesh whose axis name is not a string");
    if (V d = opt(b, "devices"); d && d->k != VK::None)
      unsupported(r, fmt::format("{}(devices=...): give num_cores=N", name));
    V n = opt(b, "num_cores");
    if (!n || n->k == VK::None)
      fail(r, "python-unknown-fact",
           fmt::format("{}: the number of TensorCores per chip is unknown to dkv (its devices "
                       "are TPUs of no particular generation); pass num_cores=N",
                       name));
    int64_t cores = toInt(n, r, "num_cores");
    if (cores < 1)
      fail(r, "python-call", "num_cores must be at least 1");
    V m = mkObj("TcMesh");
    m->items = {axis, mkInt(cores)};
    return m;
  }
  if (name == "pl.core_map")
    unsupported(r, "pl.core_map (a body that closes over refs made by jax.new_ref or "
                   "pl.run_state): write the kernel with pl.kernel(body, out_type=..., "
                   "mesh=pltpu.create_tensorcore_mesh(...), scratch_types=...), which dkv traces "
                   "(docs/python.md \"TensorCores\")");
  if (name == "pl.kernel") {
    Bound b = bind(name, args,
                   {"body", "out_type", "mesh", "scratch_types", "compiler_params", "interpret",
                    "cost_estimate", "debug", "name", "metadata"},
                   r);
    V mesh = need(b, name, "mesh", r);
    if (!(mesh->k == VK::Obj && mesh->s == "TcMesh"))
      unsupported(r, fmt::format("pl.kernel over {}: dkv traces pl.kernel over a TensorCore mesh "
                                 "(pltpu.create_tensorcore_mesh)",
                                 typeName(*mesh)));
    V body = opt(b, "body");
    if (!body || body->k == VK::None) {
      // The decorator factory: @pl.kernel(out_type=..., mesh=...) def body(...).
      V p = mk(VK::Partial);
      p->fn = mkApi(name);
      p->kw = b.named;
      p->kw.erase("body");
      return p;
    }
    if (body->k == VK::List || body->k == VK::Tuple)
      unsupported(r, "pl.kernel with several bodies and meshes (MPMD)");
    V k = mkObj("PlKernel");
    k->kw = b.named;
    return k;
  }
  if (name == "pl.pallas_call") {
    Bound b =
        bind(name, args,
             {"kernel", "out_shape", "grid_spec", "grid", "in_specs", "out_specs", "scratch_shapes",
              "compiler_params", "name", "cost_estimate", "debug", "interpret"},
             r);
    V pc = mkObj("PallasCall");
    pc->kw = b.named;
    need(b, name, "kernel", r);
    need(b, name, "out_shape", r);
    return pc;
  }
  if (name == "pltpu.PrefetchScalarGridSpec" || name == "pl.GridSpec") {
    Bound b = bind(name, args,
                   {"num_scalar_prefetch", "grid", "in_specs", "out_specs", "scratch_shapes"}, r);
    if (V n = opt(b, "num_scalar_prefetch"); n && toInt(n, r, "num_scalar_prefetch") < 0)
      fail(r, "python-call", "num_scalar_prefetch must not be negative");
    V g = mkObj("GridSpec");
    g->kw = b.named;
    return g;
  }
  if (name == "pl.BlockSpec") {
    Bound b = bind(name, args, {"block_shape", "index_map", "memory_space"}, r);
    if (opt(b, "block_shape") || opt(b, "index_map"))
      unsupported(r, "a BlockSpec with a block shape or index map (blocked operands); dkv "
                     "traces whole operands: pl.BlockSpec(memory_space=...)");
    V bs = mkObj("BlockSpec");
    bs->kw = b.named;
    return bs;
  }
  if (name == "pltpu.CompilerParams" || name == "pltpu.TPUCompilerParams") {
    Bound b = bind(name, args,
                   {"collective_id", "skip_device_barrier", "dimension_semantics",
                    "vmem_limit_bytes", "has_side_effects"},
                   r);
    V cp = mkObj("CompilerParams");
    cp->kw = b.named;
    return cp;
  }
  if (auto space = memSpaceOf(name)) {
    // pltpu.VMEM((8, 128), jnp.float32): a scratch buffer.
    if (*space == ast::MemSpace::Any || *space == ast::MemSpace::Hbm)
      unsupported(r, fmt::format("{}(...) as a scratch shape", name));
    Bound b = bind(name, args, {"shape", "dtype"}, r);
    V m = mkObj("MemRef");
    m->items = {need(b, name, "shape", r), need(b, name, "dtype", r)};
    m->kw["space"] = mkApi(name);
    return m;
  }
  {
    ast::SemKind sk;
    if (isSemType(name, sk)) {
      V out = mkObj("SemArray");
      out->items = {mkApi(name), args.pos.empty() ? mkTuple({}) : args.pos[0]};
      return out;
    }
  }
  if (name == "jax.named_scope")
    return mkObj("named_scope");
  if (name == "pl.ds" || name == "pl.dslice") {
    Bound b = bind(name, args, {"start", "size"}, r);
    V ds = mkObj("ds");
    ds->items = {need(b, name, "start", r), need(b, name, "size", r)};
    return ds;
  }

  // Inside the kernel.
  if (!inKernel_)
    goto unknown;
  if (name == "lax.axis_index") {
    Bound b = bind(name, args, {"axis_name"}, r);
    V axis = need(b, name, "axis_name", r);
    if (axis->k != VK::Str)
      unsupported(r, "lax.axis_index of several axes (a tuple)");
    bool known = tcMesh_ && tcMesh_->items[0]->s == axis->s; // the core of a pl.kernel
    for (const V &a : mesh_->items[0]->items)
      known = known || a->s == axis->s;
    if (!known)
      fail(r, "python-call",
           fmt::format("NameError: unbound axis name: {} (not an axis of the shard_map's mesh)",
                       axis->s));
    auto e = std::make_shared<TExpr>();
    e->k = TExpr::K::Builtin, e->range = r, e->builtin = ast::Builtin::AxisIndex;
    e->kids = {teName(r, axis->s)};
    return mkTraced(e, TKind::Int);
  }
  if (name == "lax.axis_size" || name == "lax.psum") {
    V axis = args.pos.empty() ? nullptr : args.pos.back();
    if (name == "lax.psum" &&
        (args.pos.size() != 2 || args.pos[0]->k != VK::Int || args.pos[0]->i != 1))
      goto unknown;
    if (!axis || axis->k != VK::Str)
      fail(r, "python-call", fmt::format("{}: expected an axis name", name));
    if (tcMesh_ && tcMesh_->items[0]->s == axis->s)
      return tcMesh_->items[1];
    for (size_t i = 0; i < mesh_->items[0]->items.size(); ++i)
      if (mesh_->items[0]->items[i]->s == axis->s)
        return mkInt(mesh_->items[1]->items[i]->i);
    fail(r, "python-call", fmt::format("NameError: unbound axis name: {}", axis->s));
  }
  if (name == "pl.program_id" || name == "pl.num_programs") {
    Bound b = bind(name, args, {"axis"}, r);
    int64_t d = toInt(need(b, name, "axis", r), r, name);
    if (d < 0 || d >= static_cast<int64_t>(grid_.size()))
      fail(r, "python-call",
           fmt::format("{}({}): the grid has {} dimensions", name, d, grid_.size()));
    if (name == "pl.num_programs")
      return mkInt(grid_[static_cast<size_t>(d)]);
    auto e = std::make_shared<TExpr>();
    e->k = TExpr::K::Builtin, e->range = r, e->builtin = ast::Builtin::ProgramId;
    e->kids = {teInt(r, d)};
    return mkTraced(e, TKind::Int);
  }
  if (name == "lax.rem") {
    if (args.pos.size() != 2 || !args.kw.empty())
      fail(r, "python-call", "lax.rem takes two arguments");
    const V &a = args.pos[0], &b = args.pos[1];
    if (a->k == VK::Int && b->k == VK::Int) {
      if (b->i == 0)
        fail(r, "python-zero-division", "lax.rem by zero");
      return mkInt(b->i == -1 ? 0 : a->i % b->i);
    }
    return mkTraced(teBinary(r, ast::BinaryOp::Rem, intTE(a, r, "lax.rem"), intTE(b, r, "lax.rem")),
                    TKind::Int);
  }
  if (name == "jnp.logical_and" || name == "jnp.logical_or") {
    if (args.pos.size() != 2)
      fail(r, "python-call", fmt::format("{} takes two arguments", name));
    if (args.pos[0]->k != VK::Traced && args.pos[1]->k != VK::Traced)
      return mkBool(name == "jnp.logical_and"
                        ? truth(args.pos[0], r, name) && truth(args.pos[1], r, name)
                        : truth(args.pos[0], r, name) || truth(args.pos[1], r, name));
    return mkTraced(teBinary(r, name == "jnp.logical_and" ? ast::BinaryOp::And : ast::BinaryOp::Or,
                             condTE(args.pos[0], r), condTE(args.pos[1], r)),
                    TKind::Bool);
  }
  if (name == "jnp.logical_not") {
    if (args.pos.size() != 1)
      fail(r, "python-call", "jnp.logical_not takes one argument");
    if (args.pos[0]->k != VK::Traced)
      return mkBool(!truth(args.pos[0], r, name));
    return mkTraced(teUnary(r, ast::UnaryOp::Not, condTE(args.pos[0], r)), TKind::Bool);
  }
  if (name == "pl.when") {
    if (args.pos.size() != 1 || !args.kw.empty())
      fail(r, "python-call", "pl.when takes one condition");
    V w = mkObj("when");
    w->items = {args.pos[0]};
    return w;
  }
  if (std::optional<V> v = callControlOrCompute(name, args, r))
    return *v;
  if (name == "pltpu.make_async_remote_copy" || name == "pltpu.async_remote_copy" ||
      name == "pl.make_async_remote_copy") {
    Bound b =
        bind(name, args,
             {"src_ref", "dst_ref", "send_sem", "recv_sem", "device_id", "device_id_type"}, r);
    V src = refArg(need(b, name, "src_ref", r), r, "src_ref");
    V dst = refArg(need(b, name, "dst_ref", r), r, "dst_ref");
    V send = semArg(need(b, name, "send_sem", r), r, "send_sem");
    V recv = semArg(need(b, name, "recv_sem", r), r, "recv_sem");
    TE dev = deviceTE(need(b, name, "device_id", r), opt(b, "device_id_type"), r);
    bool started = name == "pltpu.async_remote_copy";
    auto expr = std::make_unique<ast::RemoteCopyExpr>(
        r, build(*refTE(*src, r)), build(*refTE(*dst, r)), build(*refTE(*send, r)),
        build(*refTE(*recv, r)), build(*dev), started);
    std::string let = fresh(nameHint_.empty() ? "dma" : nameHint_);
    emit(std::make_unique<ast::LetStmt>(r,
                                        std::make_unique<ast::LetDecl>(r, let, r, std::move(expr))),
         started);
    V d = mk(VK::Desc);
    d->desc = std::make_shared<DescInfo>();
    d->desc->remote = true;
    d->desc->let = let;
    return d;
  }
  if (name == "pltpu.make_async_copy" || name == "pltpu.async_copy" ||
      name == "pl.make_async_copy") {
    Bound b = bind(name, args, {"src_ref", "dst_ref", "sem"}, r);
    V src = refArg(need(b, name, "src_ref", r), r, "src_ref");
    V dst = refArg(need(b, name, "dst_ref", r), r, "dst_ref");
    V sem = semArg(need(b, name, "sem", r), r, "sem");
    bool started = name == "pltpu.async_copy";
    auto expr = std::make_unique<ast::CopyExpr>(r, build(*refTE(*src, r)), build(*refTE(*dst, r)),
                                                build(*refTE(*sem, r)), started);
    std::string let = fresh(nameHint_.empty() ? "dma" : nameHint_);
    emit(std::make_unique<ast::LetStmt>(r,
                                        std::make_unique<ast::LetDecl>(r, let, r, std::move(expr))),
         started);
    V d = mk(VK::Desc);
    d->desc = std::make_shared<DescInfo>();
    d->desc->let = let;
    return d;
  }
  if (name == "pltpu.semaphore_signal" || name == "pl.semaphore_signal") {
    Bound b =
        bind(name, args, {"sem_or_view", "inc", "device_id", "device_id_type", "core_index"}, r);
    V sem = semArg(need(b, name, "sem_or_view", r), r, "the semaphore");
    V inc = opt(b, "inc");
    V dev = opt(b, "device_id");
    V core = opt(b, "core_index");
    ast::ExprPtr incE = inc ? build(*intTE(inc, r, "inc")) : nullptr;
    ast::ExprPtr devE =
        dev && dev->k != VK::None ? build(*deviceTE(dev, opt(b, "device_id_type"), r)) : nullptr;
    ast::ExprPtr coreE =
        core && core->k != VK::None ? build(*intTE(core, r, "core_index")) : nullptr;
    emit(std::make_unique<ast::SignalStmt>(r, build(*refTE(*sem, r)), std::move(incE),
                                           std::move(devE), std::move(coreE)));
    return mkNone();
  }
  if (name == "pltpu.semaphore_wait" || name == "pl.semaphore_wait") {
    Bound b = bind(name, args, {"sem_or_view", "value"}, r);
    V sem = semArg(need(b, name, "sem_or_view", r), r, "the semaphore");
    V value = opt(b, "value");
    emit(std::make_unique<ast::WaitStmt>(r, build(*refTE(*sem, r)),
                                         value ? build(*intTE(value, r, "value")) : nullptr));
    return mkNone();
  }
  if (name == "pltpu.get_barrier_semaphore") {
    if (!hasCollective_)
      fail(r, "python-call",
           "pltpu.get_barrier_semaphore() needs the pallas_call's "
           "compiler_params=pltpu.CompilerParams(collective_id=...)");
    V s = mk(VK::Sem);
    s->name = "barrier";
    s->semKind = ast::SemKind::Barrier;
    return s;
  }
  if (name == "pl.run_scoped" || name == "pltpu.run_scoped") {
    if (args.pos.empty() || args.pos[0]->k != VK::Func)
      fail(r, "python-call", "pl.run_scoped takes the function to run first");
    const Function &f = *args.pos[0]->func;
    Args inner;
    std::vector<std::unique_ptr<ast::Decl>> decls;
    std::vector<std::string> paramNames;
    for (const py::Param &p : *f.params)
      paramNames.push_back(p.name);
    for (size_t i = 1; i < args.pos.size(); ++i) {
      std::string pn = i - 1 < paramNames.size() ? paramNames[i - 1] : "scoped";
      V bound;
      decls.push_back(scratchDecl(args.pos[i], fresh(pn), r, ast::Storage::Scoped, bound));
      inner.pos.push_back(bound);
    }
    for (auto &[k, spec] : args.kw) {
      V bound;
      decls.push_back(scratchDecl(spec, fresh(k), r, ast::Storage::Scoped, bound));
      inner.kw.emplace_back(k, bound);
    }
    auto body = std::make_unique<std::vector<ast::StmtPtr>>();
    blocks_.push_back(body.get());
    V result = callFunction(f, std::move(inner), r);
    blocks_.pop_back();
    emit(std::make_unique<ast::RunScopedStmt>(
        r, std::move(decls), std::make_unique<ast::Block>(f.range, std::move(*body))));
    return result;
  }
unknown:
  if (!inKernel_ && hostCall(name, args, r))
    return hostValue(fmt::format("{}(...)", name), r);
  fail(r, "python-unknown-api",
       fmt::format("`{}` is not supported by dkv's tracer{} (docs/python.md lists the API it "
                   "models; nothing is dropped silently)",
                   name, inKernel_ ? " inside a kernel" : ""));
}

//===----------------------------------------------------------------------===//
// Loops, lax.cond, select, semaphore_read, sync_copy and compute (docs/python.md)
//===----------------------------------------------------------------------===//

// `lax.fori_loop` / `pl.loop` as a kernel-language `for` (the body traced once with a traced
// loop variable, as JAX traces it), or unrolled when the bounds are concrete and a value is
// carried (`init` not None): then the body runs for each concrete index, as before.
V Tracer::forLoop(const std::string &api, const V &loV, const V &hiV, const V &body, const V &init,
                  bool withCarry, SourceRange r) {
  bool concrete = loV->k != VK::Traced && hiV->k != VK::Traced;
  bool carried = withCarry && init->k != VK::None;
  if (concrete && (carried || !inKernel_)) {
    int64_t lo = toInt(loV, r, fmt::format("the lower bound of {}", api));
    int64_t hi = toInt(hiV, r, fmt::format("the upper bound of {}", api));
    if (hi - lo > 100000)
      fail(r, "python-overflow", fmt::format("{} of more than 100000 iterations", api));
    V carry = init;
    for (int64_t i = lo; i < hi; ++i)
      carry = withCarry ? call(body, Args{{mkInt(i), carry}, {}}, r)
                        : call(body, Args{{mkInt(i)}, {}}, r);
    return withCarry ? carry : mkNone();
  }
  TE lo = intTE(loV, r, fmt::format("the lower bound of {}", api));
  TE hi = intTE(hiV, r, fmt::format("the upper bound of {}", api));
  std::string var = "i";
  SourceRange fr = r;
  if (body->k == VK::Func) {
    fr = body->func->range;
    if (body->func->params && !body->func->params->empty())
      var = (*body->func->params)[0].name;
  }
  var = fresh(var);
  auto stmts = std::make_unique<std::vector<ast::StmtPtr>>();
  blocks_.push_back(stmts.get());
  V index = mkTraced(teName(r, var), TKind::Int);
  V out = withCarry ? call(body, Args{{index, init}, {}}, r) : call(body, Args{{index}, {}}, r);
  blocks_.pop_back();
  if (carried && !(out == init || (out->k != VK::Traced && equal(out, init))))
    unsupported(r, fmt::format("{} with a per-device bound whose body changes the carried value "
                               "(dkv writes it as a `for`, which carries no values; with "
                               "concrete bounds it is unrolled)",
                               api));
  if (!carried && out->k != VK::None)
    fail(r, "python-type",
         fmt::format("the body of {} returns a value but the loop carries none (init is None)",
                     api));
  emit(std::make_unique<ast::ForStmt>(r, std::make_unique<ast::LoopVarDecl>(r, var), build(*lo),
                                      build(*hi),
                                      std::make_unique<ast::Block>(fr, std::move(*stmts))));
  return withCarry ? init : mkNone();
}

// `lax.cond(pred, true_fun, false_fun, *operands)`: a concrete predicate calls one branch;
// a traced one traces both into `if pred { ... } else { ... }`. Values returned by the
// branches must be concrete and equal (a kernel-language `if` returns nothing).
V Tracer::condBranches(const V &pred, const V &t, const V &f, const std::vector<V> &ops,
                       SourceRange r) {
  if (pred->k != VK::Traced)
    return call(truth(pred, r, "lax.cond") ? t : f, Args{ops, {}}, r);
  TE c = condTE(pred, r);
  auto tb = std::make_unique<std::vector<ast::StmtPtr>>();
  auto fb = std::make_unique<std::vector<ast::StmtPtr>>();
  blocks_.push_back(tb.get());
  V tv = call(t, Args{ops, {}}, r);
  blocks_.pop_back();
  blocks_.push_back(fb.get());
  V fv = call(f, Args{ops, {}}, r);
  blocks_.pop_back();
  if (tv->k == VK::Traced || fv->k == VK::Traced || !equal(tv, fv))
    unsupported(r, "lax.cond on a per-device predicate whose branches return different or "
                   "per-device values (dkv writes it as `if`/`else`, which returns nothing; "
                   "store results into refs instead)");
  auto range = [&](const V &fn) { return fn->k == VK::Func ? fn->func->range : r; };
  std::vector<ast::IfStmt::Branch> branches;
  branches.push_back({build(*c), std::make_unique<ast::Block>(range(t), std::move(*tb))});
  std::unique_ptr<ast::Block> elseBody;
  if (!fb->empty())
    elseBody = std::make_unique<ast::Block>(range(f), std::move(*fb));
  emit(std::make_unique<ast::IfStmt>(r, std::move(branches), std::move(elseBody)));
  return tv;
}

// A compute statement's value (docs/language.md "Compute on values"): the operands are
// loaded values (at least one), numbers or (where's condition) a per-device condition.
V Tracer::computeValue(ast::ComputeOp op, std::vector<V> operands, std::optional<ast::DType> dtype,
                       std::optional<int64_t> axis, SourceRange r, std::string_view api) {
  auto e = std::make_shared<TExpr>();
  e->k = TExpr::K::Compute, e->range = r, e->cop = op, e->dtype = dtype, e->axis = axis;
  uint64_t stamp = UINT64_MAX;
  bool anyValue = false;
  for (size_t i = 0; i < operands.size(); ++i) {
    const V &v = operands[i];
    if (v->k == VK::Traced && v->tk == TKind::Value) {
      anyValue = true;
      stamp = std::min(stamp, v->stamp);
      e->kids.push_back(v->te);
    } else if (op == ast::ComputeOp::Where && i == 0 &&
               (v->k == VK::Traced && v->tk == TKind::Bool)) {
      e->kids.push_back(v->te);
    } else if (op == ast::ComputeOp::Where && i > 0 && (v->k == VK::Int || v->k == VK::Float)) {
      if (v->k == VK::Int) {
        e->kids.push_back(teInt(r, v->i));
      } else {
        auto f = std::make_shared<TExpr>();
        f->k = TExpr::K::Float, f->range = r, f->f = v->f, f->text = v->s;
        e->kids.push_back(f);
      }
    } else {
      fail(r, "python-type",
           fmt::format("{}: operand {} must be a value loaded from a ref{}, got {}", api, i + 1,
                       op == ast::ComputeOp::Where ? " or a number (the condition: a per-device "
                                                     "condition)"
                                                   : "",
                       typeName(*v)));
    }
  }
  if (!anyValue)
    fail(r, "python-type", fmt::format("{}: no operand is a value loaded from a ref", api));
  V out = mkTraced(e, TKind::Value);
  out->stamp = stamp;
  return out;
}

std::optional<V> Tracer::callControlOrCompute(const std::string &name, const Args &args,
                                              SourceRange r) {
  auto noneOr = [&](const Bound &b, const char *k, const std::string &what) {
    V v = opt(b, k);
    if (v && v->k != VK::None && !(v->k == VK::Bool && !v->b))
      unsupported(r, fmt::format("argument `{}` of {} ({})", k, name, what));
  };
  if (name == "lax.fori_loop") {
    Bound b = bind(name, args, {"lower", "upper", "body_fun", "init_val", "unroll"}, r);
    return forLoop(name, need(b, name, "lower", r), need(b, name, "upper", r),
                   need(b, name, "body_fun", r), need(b, name, "init_val", r), true, r);
  }
  if (name == "pl.loop") {
    Bound b = bind(name, args, {"lower", "upper", "init_carry", "step", "unroll"}, r);
    V step = opt(b, "step");
    if (step && !(step->k == VK::Int && step->i == 1))
      unsupported(r, "pl.loop with a step other than 1");
    V loop = mkObj("loop");
    V init = opt(b, "init_carry");
    loop->items = {need(b, name, "lower", r), need(b, name, "upper", r), init ? init : mkNone()};
    return loop;
  }
  if (name == "lax.cond") {
    if (args.pos.size() < 3 || !args.kw.empty())
      fail(r, "python-call", "lax.cond takes (pred, true_fun, false_fun, *operands)");
    return condBranches(args.pos[0], args.pos[1], args.pos[2],
                        std::vector<V>(args.pos.begin() + 3, args.pos.end()), r);
  }
  if (name == "jnp.where" || name == "lax.select") {
    Bound b = bind(name, args, {"condition", "x", "y"}, r);
    V c = need(b, name, "condition", r), x = need(b, name, "x", r), y = need(b, name, "y", r);
    bool values = (x->k == VK::Traced && x->tk == TKind::Value) ||
                  (y->k == VK::Traced && y->tk == TKind::Value);
    if (c->k != VK::Traced)
      return truth(c, r, name) ? x : y;
    if (values)
      return computeValue(ast::ComputeOp::Where, {c, x, y}, std::nullopt, std::nullopt, r, name);
    auto e = std::make_shared<TExpr>();
    e->k = TExpr::K::Select, e->range = r;
    e->kids = {condTE(c, r), intTE(x, r, name), intTE(y, r, name)};
    return mkTraced(e, TKind::Int);
  }
  if (name == "pltpu.semaphore_read" || name == "pl.semaphore_read") {
    Bound b = bind(name, args, {"sem_or_view"}, r);
    V sem = semArg(need(b, name, "sem_or_view", r), r, "the semaphore");
    std::string let = fresh(nameHint_.empty() ? "value" : nameHint_);
    auto read = std::make_unique<ast::CallExpr>(r, ast::Builtin::Read, build(*refTE(*sem, r)));
    emit(std::make_unique<ast::LetStmt>(r,
                                        std::make_unique<ast::LetDecl>(r, let, r, std::move(read))),
         false);
    return mkTraced(teName(r, let), TKind::Int);
  }
  if (name == "pltpu.sync_copy") {
    // Pallas: run_scoped(sem=DMA) { make_async_copy(src, dst, sem).start(); ....wait() }.
    Bound b = bind(name, args, {"src_ref", "dst_ref", "add"}, r);
    noneOr(b, "add", "an accumulating DMA");
    V src = refArg(need(b, name, "src_ref", r), r, "src_ref");
    V dst = refArg(need(b, name, "dst_ref", r), r, "dst_ref");
    V sem;
    std::vector<std::unique_ptr<ast::Decl>> decls;
    decls.push_back(scratchDecl(mkApi("pltpu.SemaphoreType.DMA"), fresh("sync_sem"), r,
                                ast::Storage::Scoped, sem));
    auto body = std::make_unique<std::vector<ast::StmtPtr>>();
    blocks_.push_back(body.get());
    std::string let = fresh("sync");
    emit(std::make_unique<ast::LetStmt>(
             r,
             std::make_unique<ast::LetDecl>(
                 r, let, r,
                 std::make_unique<ast::CopyExpr>(r, build(*refTE(*src, r)), build(*refTE(*dst, r)),
                                                 build(*refTE(*sem, r)), false))),
         false);
    for (ast::DmaMethod m : {ast::DmaMethod::Start, ast::DmaMethod::Wait})
      emit(std::make_unique<ast::DmaStmt>(r, std::make_unique<ast::NameExpr>(r, let), m));
    blocks_.pop_back();
    emit(std::make_unique<ast::RunScopedStmt>(r, std::move(decls),
                                              std::make_unique<ast::Block>(r, std::move(*body))));
    return mkNone();
  }
  // Compute on values.
  if (inKernel_ && (name == "jnp.zeros" || name == "jnp.zeros_like" || name == "jnp.ones" ||
                    name == "jnp.ones_like")) {
    // A value broadcast to the shape it is stored into: `o[...] = 0`.
    return mkInt(name.rfind("jnp.zeros", 0) == 0 ? 0 : 1);
  }
  if (name == "jnp.dot" || name == "jnp.matmul" || name == "pl.dot") {
    Bound b = name == "pl.dot"
                  ? bind(name, args,
                         {"a", "b", "trans_a", "trans_b", "allow_tf32", "precision",
                          "preferred_element_type"},
                         r)
                  : bind(name, args, {"a", "b", "precision", "preferred_element_type"}, r);
    noneOr(b, "trans_a", "a transposed operand");
    noneOr(b, "trans_b", "a transposed operand");
    noneOr(b, "precision", "dkv models regions, not precision");
    V pt = opt(b, "preferred_element_type");
    std::optional<ast::DType> dt;
    if (pt && pt->k != VK::None)
      dt = dtypeArg(pt, r);
    return computeValue(ast::ComputeOp::Dot, {need(b, name, "a", r), need(b, name, "b", r)}, dt,
                        std::nullopt, r, name);
  }
  if (name == "lax.dot_general") {
    Bound b = bind(name, args,
                   {"lhs", "rhs", "dimension_numbers", "precision", "preferred_element_type"}, r);
    noneOr(b, "precision", "dkv models regions, not precision");
    // Only the plain matmul: (((1,), (0,)), ((), ())).
    auto ints = [&](const V &v) {
      std::vector<int64_t> out;
      if (v->k != VK::Tuple && v->k != VK::List)
        return std::vector<int64_t>{-1};
      for (const V &x : v->items)
        out.push_back(x->k == VK::Int ? x->i : -1);
      return out;
    };
    V dn = need(b, name, "dimension_numbers", r);
    bool plain = (dn->k == VK::Tuple || dn->k == VK::List) && dn->items.size() == 2 &&
                 (dn->items[0]->k == VK::Tuple || dn->items[0]->k == VK::List) &&
                 (dn->items[1]->k == VK::Tuple || dn->items[1]->k == VK::List) &&
                 dn->items[0]->items.size() == 2 && dn->items[1]->items.size() == 2 &&
                 ints(dn->items[0]->items[0]) == std::vector<int64_t>{1} &&
                 ints(dn->items[0]->items[1]) == std::vector<int64_t>{0} &&
                 ints(dn->items[1]->items[0]).empty() && ints(dn->items[1]->items[1]).empty();
    if (!plain)
      unsupported(r, "lax.dot_general with dimension numbers other than (((1,), (0,)), ((), ())) "
                     "(a plain 2-D matmul)");
    V pt = opt(b, "preferred_element_type");
    std::optional<ast::DType> dt;
    if (pt && pt->k != VK::None)
      dt = dtypeArg(pt, r);
    return computeValue(ast::ComputeOp::Dot, {need(b, name, "lhs", r), need(b, name, "rhs", r)}, dt,
                        std::nullopt, r, name);
  }
  if (name == "jnp.astype" || name == "lax.convert_element_type") {
    Bound b = bind(name, args, {"x", "dtype"}, r);
    return computeValue(ast::ComputeOp::AsType, {need(b, name, "x", r)},
                        dtypeArg(need(b, name, "dtype", r), r), std::nullopt, r, name);
  }
  if (name == "jnp.sum" || name == "jnp.max" || name == "jnp.min" || name == "jnp.amax" ||
      name == "jnp.amin") {
    Bound b = bind(name, args, {"a", "axis", "dtype", "out", "keepdims"}, r);
    noneOr(b, "dtype", "a reduction with its own element type");
    noneOr(b, "out", "an output array");
    noneOr(b, "keepdims", "keepdims=True");
    std::optional<int64_t> axis;
    if (V ax = opt(b, "axis"); ax && ax->k != VK::None) {
      if (ax->k != VK::Int)
        unsupported(r, fmt::format("the axis of {} other than one int", name));
      axis = ax->i;
    }
    ast::ComputeOp op = name == "jnp.sum"                         ? ast::ComputeOp::Sum
                        : name == "jnp.max" || name == "jnp.amax" ? ast::ComputeOp::ReduceMax
                                                                  : ast::ComputeOp::ReduceMin;
    return computeValue(op, {need(b, name, "a", r)}, std::nullopt, axis, r, name);
  }
  return std::nullopt;
}

V Tracer::callShardMap(const V &sm, Args args, SourceRange r) {
  V mesh = sm->kw.count("mesh") ? sm->kw.at("mesh") : nullptr;
  if (!mesh || !(mesh->k == VK::Obj && mesh->s == "Mesh"))
    fail(r, "python-unknown-fact",
         "shard_map: the mesh is unknown (give mesh=jax.sharding.Mesh(...) or jax.make_mesh(...) "
         "built in this file)");
  V inSpecs = sm->kw.count("in_specs") ? sm->kw.at("in_specs") : nullptr;
  if (!inSpecs)
    fail(r, "python-unknown-fact", "shard_map: in_specs is not given");
  if (!args.kw.empty())
    unsupported(r, "keyword arguments to a shard_map'ed function");
  std::vector<V> local;
  for (size_t i = 0; i < args.pos.size(); ++i) {
    V arr = args.pos[i];
    if (arr->k == VK::List || arr->k == VK::Tuple)
      arr = knownArray(arr, nullptr, r); // a Python list of ints: a table's values
    if (!(arr->k == VK::Obj && arr->s == "Array"))
      fail(r, "python-unknown-fact",
           fmt::format("shard_map argument {}: its shape and dtype are unknown (got {}); pass an "
                       "array made in this file (jax.random.uniform, jnp.zeros, ...)",
                       i + 1, typeName(*arr)));
    V spec = inSpecs;
    if (inSpecs->k == VK::Tuple || inSpecs->k == VK::List) {
      if (i >= inSpecs->items.size())
        fail(r, "python-call", "shard_map: fewer in_specs than arguments");
      spec = inSpecs->items[i];
    }
    if (!(spec->k == VK::Obj && spec->s == "P"))
      fail(r, "python-unknown-fact", "shard_map: an in_spec is not a PartitionSpec");
    std::vector<int64_t> shape = shapeOf(arr->items[0], r, "the array shape");
    const std::vector<int64_t> global = shape;
    if (spec->items.size() > shape.size())
      fail(r, "python-call", "shard_map: the PartitionSpec has more entries than the array dims");
    for (size_t d = 0; d < spec->items.size(); ++d) {
      const V &entry = spec->items[d];
      if (entry->k == VK::None)
        continue;
      std::vector<V> axes = entry->k == VK::Str ? std::vector<V>{entry} : iterate(entry, r);
      for (const V &ax : axes) {
        int64_t size = -1;
        for (size_t j = 0; j < mesh->items[0]->items.size(); ++j)
          if (mesh->items[0]->items[j]->s == ax->s)
            size = mesh->items[1]->items[j]->i;
        if (size < 0)
          fail(r, "python-call", fmt::format("shard_map: '{}' is not a mesh axis", ax->s));
        if (shape[d] % size != 0)
          fail(r, "python-call",
               fmt::format("shard_map: dimension {} of size {} does not divide over axis '{}' of "
                           "size {}",
                           d, shape[d], ax->s, size));
        shape[d] /= size;
      }
    }
    local.push_back(makeArray(shape, *dtypeOf(*arr->kw.at("dtype"))));
    shardContents(arr, local.back(), spec, mesh, global, shape, r);
  }
  V saved = mesh_;
  mesh_ = mesh;
  V out = call(sm->kw.at("f"), Args{local, {}}, r);
  mesh_ = saved;
  return out;
}

V Tracer::callPallas(const V &pc, Args args, SourceRange r) {
  if (!mesh_)
    fail(r, "python-unknown-fact",
         "pl.pallas_call is called outside a shard_map: dkv takes the mesh of the devices from "
         "the enclosing shard_map(..., mesh=...)");
  if (result_)
    unsupported(r, "a second pallas_call: dkv checks one kernel per file");
  V kernel = pc->kw.at("kernel");
  if (kernel->k != VK::Func)
    unsupported(r, "a pallas_call kernel that is not a Python function");
  const Function &kf = *kernel->func;
  auto kw = [&](const std::string &k) -> V {
    auto it = pc->kw.find(k);
    return it == pc->kw.end() || it->second->k == VK::None ? nullptr : it->second;
  };
  V gridSpec = kw("grid_spec");
  auto field = [&](const std::string &k) -> V {
    if (gridSpec) {
      auto it = gridSpec->kw.find(k);
      if (it != gridSpec->kw.end() && it->second->k != VK::None)
        return it->second;
    }
    return kw(k);
  };
  if (gridSpec && !(gridSpec->k == VK::Obj && gridSpec->s == "GridSpec"))
    fail(r, "python-type", "grid_spec must be a pltpu.PrefetchScalarGridSpec or pl.GridSpec");
  // Grid.
  grid_.clear();
  if (V g = field("grid"))
    grid_ = shapeOf(g, r, "the grid");
  const CompilerParams cparams = compilerParams(kw("compiler_params"), r);
  hasCollective_ = cparams.collective >= 0;
  // Operands.
  std::vector<V> outs;
  V outShape = pc->kw.at("out_shape");
  bool outTuple = outShape->k == VK::Tuple || outShape->k == VK::List;
  for (const V &o : outTuple ? outShape->items : std::vector<V>{outShape}) {
    if (!(o->k == VK::Obj && o->s == "Array"))
      fail(r, "python-unknown-fact",
           fmt::format("pallas_call out_shape: expected jax.ShapeDtypeStruct or an array, got {}",
                       typeName(*o)));
    outs.push_back(o);
  }
  // With an entry directive, the directive's facts replace the call site's: the
  // call is evaluated (its arguments must still be supported) but not traced.
  if (entryMode_)
    return outTuple ? mkTuple(outs) : outs[0];
  auto specs = [&](const std::string &k, size_t n) {
    std::vector<V> out(n, nullptr);
    V s = field(k);
    if (!s)
      return out;
    if (s->k == VK::Tuple || s->k == VK::List) {
      if (s->items.size() != n)
        fail(r, "python-call",
             fmt::format("pallas_call {}: {} specs for {} operands", k, s->items.size(), n));
      return s->items;
    }
    return std::vector<V>(n, s);
  };
  // Scalar prefetch: the first num_scalar_prefetch operands are SMEM tables, before the
  // operands that in_specs describe.
  size_t prefetch = 0;
  if (gridSpec && gridSpec->kw.count("num_scalar_prefetch"))
    prefetch = static_cast<size_t>(
        toInt(gridSpec->kw.at("num_scalar_prefetch"), r, "num_scalar_prefetch"));
  if (prefetch > args.pos.size())
    fail(r, "python-call",
         fmt::format("pallas_call: num_scalar_prefetch={} but only {} operands are passed",
                     prefetch, args.pos.size()));
  for (V &a : args.pos)
    if (a->k == VK::List || a->k == VK::Tuple)
      a = knownArray(a, nullptr, r); // a Python list of ints: a table's values
  std::vector<V> inSpecs = specs("in_specs", args.pos.size() - prefetch);
  std::vector<V> outSpecs = specs("out_specs", outs.size());
  std::vector<V> scratch;
  if (V s = field("scratch_shapes"))
    scratch = iterate(s, r);
  const auto &params = *kf.params;
  size_t total = args.pos.size() + outs.size() + scratch.size();
  for (const py::Param &p : params)
    if (p.kind != py::ParamKind::Positional && p.kind != py::ParamKind::PositionalOnly &&
        p.kind != py::ParamKind::VarArgs)
      unsupported(p.range, "keyword-only parameters of a kernel");
  bool varargs = !params.empty() && params.back().kind == py::ParamKind::VarArgs;
  if ((!varargs && params.size() != total) || (varargs && params.size() - 1 > total))
    fail(kf.range, "python-call",
         fmt::format("the kernel {}() takes {} refs, and pallas_call passes {} ({} inputs, {} "
                     "outputs, {} scratch)",
                     kf.name, params.size(), total, args.pos.size(), outs.size(), scratch.size()));
  auto paramName = [&](size_t i) {
    if (i < params.size() && params[i].kind != py::ParamKind::VarArgs)
      return params[i].name;
    return fmt::format("{}_{}", varargs ? params.back().name : "ref", i);
  };
  auto paramRange = [&](size_t i) { return i < params.size() ? params[i].range : kf.range; };

  beginKernel();
  std::vector<std::unique_ptr<ast::BufferDecl>> bufs;
  Args kargs;
  size_t idx = 0;
  auto addBuffer = [&](const V &arr, const V &spec, ast::Direction dir, bool scalarPrefetch) {
    ast::MemSpace space = scalarPrefetch ? ast::MemSpace::Smem : ast::MemSpace::Vmem;
    if (spec) {
      if (!(spec->k == VK::Obj && spec->s == "BlockSpec"))
        fail(r, "python-type", "in_specs / out_specs entries must be pl.BlockSpec(...)");
      if (spec->kw.count("memory_space")) {
        V ms = spec->kw.at("memory_space");
        auto m = ms->k == VK::Api ? memSpaceOf(ms->s) : std::nullopt;
        if (!m)
          unsupported(r, fmt::format("the memory space {}", typeName(*ms)));
        space = *m;
      }
    }
    SourceRange pr = paramRange(idx);
    V ref = paramBuffer(arr, fresh(paramName(idx)), pr, dir, space, r, bufs);
    if (dir == ast::Direction::In && space == ast::MemSpace::Smem &&
        (ast::isInteger(ref->dtype) || scalarPrefetch)) {
      makeTable(*bufs.back(), arr, ref->dims, pr, scalarPrefetch);
      ref->table = true;
    }
    kargs.pos.push_back(ref);
    ++idx;
  };
  for (size_t i = 0; i < args.pos.size(); ++i) {
    if (!(args.pos[i]->k == VK::Obj && args.pos[i]->s == "Array"))
      fail(r, "python-unknown-fact",
           fmt::format("pallas_call operand {}: its shape and dtype are unknown (got {})", i + 1,
                       typeName(*args.pos[i])));
    addBuffer(args.pos[i], i < prefetch ? nullptr : inSpecs[i - prefetch], ast::Direction::In,
              i < prefetch);
  }
  for (size_t i = 0; i < outs.size(); ++i)
    addBuffer(outs[i], outSpecs[i], ast::Direction::Out, false);
  std::vector<std::unique_ptr<ast::Decl>> scratchDecls;
  for (const V &s : scratch) {
    V bound;
    scratchDecls.push_back(
        scratchDecl(s, fresh(paramName(idx)), paramRange(idx), ast::Storage::Scratch, bound));
    kargs.pos.push_back(bound);
    ++idx;
  }

  finishKernel(kf, r, std::move(bufs), std::move(scratchDecls), std::move(kargs),
               cparams.collective, cparams.skipBarrier);

  // The result: the output arrays, global shape unknown to the caller's code.
  if (!outTuple)
    return outs[0];
  V t = mkTuple(outs);
  return t;
}

// pl.kernel(body, out_type=..., mesh=tc_mesh, scratch_types=..., compiler_params=...)
// called on arrays inside a shard_map (jax/_src/pallas/helpers.py `kernel`, which runs
// mpmd_map over the mesh): the body runs once on every core of every device, with the
// refs of the inputs, then of the outputs, then the scratch, in that order; operands are
// in the TensorCore mesh's default memory space, ANY (jax/_src/pallas/mosaic/core.py). It
// becomes a kernel over `tensorcore_mesh` (docs/language.md "TensorCores").
V Tracer::callPlKernel(const V &pk, Args args, SourceRange r) {
  if (!mesh_)
    fail(r, "python-unknown-fact",
         "pl.kernel is called outside a shard_map: dkv takes the mesh of the devices from the "
         "enclosing shard_map(..., mesh=...)");
  if (result_)
    unsupported(r, "a second kernel: dkv checks one kernel per file");
  V kernel = pk->kw.at("body");
  if (kernel->k != VK::Func)
    unsupported(r, "a pl.kernel body that is not a Python function");
  const Function &kf = *kernel->func;
  auto kw = [&](const std::string &k) -> V {
    auto it = pk->kw.find(k);
    return it == pk->kw.end() || it->second->k == VK::None ? nullptr : it->second;
  };
  const CompilerParams cparams = compilerParams(kw("compiler_params"), r);
  hasCollective_ = cparams.collective >= 0;
  grid_.clear();
  if (!args.kw.empty())
    unsupported(r, "keyword arguments to a pl.kernel");
  std::vector<V> outs;
  V outType = kw("out_type");
  const bool outSeq = outType && (outType->k == VK::Tuple || outType->k == VK::List);
  if (outType)
    for (const V &o : outSeq ? outType->items : std::vector<V>{outType}) {
      if (!(o->k == VK::Obj && o->s == "Array"))
        fail(r, "python-unknown-fact",
             fmt::format("pl.kernel out_type: expected jax.ShapeDtypeStruct or an array, got {}",
                         typeName(*o)));
      outs.push_back(o);
    }
  if (entryMode_)
    return outSeq ? mkTuple(outs) : outs.empty() ? mkNone() : outs[0];
  std::vector<V> scratch;
  if (V st = kw("scratch_types")) {
    if (st->k == VK::Dict)
      unsupported(r, "pl.kernel scratch_types given as a dict (keyword refs)");
    scratch = iterate(st, r);
  }
  const auto &params = *kf.params;
  size_t total = args.pos.size() + outs.size() + scratch.size();
  for (const py::Param &p : params)
    if (p.kind != py::ParamKind::Positional && p.kind != py::ParamKind::PositionalOnly)
      unsupported(p.range, "keyword-only or variadic parameters of a pl.kernel body");
  if (params.size() != total)
    fail(kf.range, "python-call",
         fmt::format("the kernel {}() takes {} refs, and pl.kernel passes {} ({} inputs, {} "
                     "outputs, {} scratch)",
                     kf.name, params.size(), total, args.pos.size(), outs.size(), scratch.size()));
  tcMesh_ = pk->kw.at("mesh");
  beginKernel();
  std::vector<std::unique_ptr<ast::BufferDecl>> bufs;
  Args kargs;
  size_t idx = 0;
  auto addBuffer = [&](const V &arr, ast::Direction dir) {
    if (!(arr->k == VK::Obj && arr->s == "Array"))
      unsupported(r, fmt::format("pl.kernel operand {} of type {} (a pytree of operands is not "
                                 "supported; pass arrays)",
                                 idx + 1, typeName(*arr)));
    kargs.pos.push_back(paramBuffer(arr, fresh(params[idx].name), params[idx].range, dir,
                                    ast::MemSpace::Any, r, bufs));
    ++idx;
  };
  for (const V &a : args.pos)
    addBuffer(a, ast::Direction::In);
  for (const V &o : outs)
    addBuffer(o, ast::Direction::Out);
  std::vector<std::unique_ptr<ast::Decl>> scratchDecls;
  for (const V &sc : scratch) {
    V bound;
    scratchDecls.push_back(
        scratchDecl(sc, fresh(params[idx].name), params[idx].range, ast::Storage::Scratch, bound));
    kargs.pos.push_back(bound);
    ++idx;
  }
  finishKernel(kf, r, std::move(bufs), std::move(scratchDecls), std::move(kargs),
               cparams.collective, cparams.skipBarrier);
  tcMesh_ = nullptr;
  if (outSeq)
    return mkTuple(outs);
  return outs.empty() ? mkNone() : outs[0];
}

Tracer::CompilerParams Tracer::compilerParams(const V &cp, SourceRange r) {
  CompilerParams out;
  if (!cp)
    return out;
  if (!(cp->k == VK::Obj && cp->s == "CompilerParams"))
    unsupported(r, "compiler_params other than pltpu.CompilerParams(...)");
  if (cp->kw.count("collective_id") && cp->kw.at("collective_id")->k != VK::None)
    out.collective = toInt(cp->kw.at("collective_id"), r, "collective_id");
  if (cp->kw.count("skip_device_barrier"))
    out.skipBarrier = truth(cp->kw.at("skip_device_barrier"), r, "skip_device_barrier");
  return out;
}

V Tracer::paramBuffer(const V &arr, const std::string &name, SourceRange pr, ast::Direction dir,
                      ast::MemSpace space, SourceRange r,
                      std::vector<std::unique_ptr<ast::BufferDecl>> &bufs) {
  std::vector<int64_t> shape = shapeOf(arr->items[0], r, "an operand shape");
  ast::DType dt = *dtypeOf(*arr->kw.at("dtype"));
  std::vector<ast::ExprPtr> de;
  for (int64_t d : shape)
    de.push_back(std::make_unique<ast::IntLiteral>(pr, d));
  bufs.push_back(std::make_unique<ast::BufferDecl>(pr, name, pr, ast::Storage::KernelParam, dir,
                                                   space, dt, std::move(de)));
  V ref = mk(VK::Ref);
  ref->name = name, ref->dims = shape, ref->dtype = dt;
  return ref;
}

void Tracer::beginKernel() {
  inKernel_ = true;
  used_.clear();
  for (const V &axis : mesh_->items[0]->items)
    used_.insert(axis->s);
  if (tcMesh_)
    used_.insert(tcMesh_->items[0]->s);
  if (hasCollective_)
    used_.insert("barrier");
}

void Tracer::finishKernel(const Function &kf, SourceRange r,
                          std::vector<std::unique_ptr<ast::BufferDecl>> bufs,
                          std::vector<std::unique_ptr<ast::Decl>> scratchDecls, Args kargs,
                          int64_t collective, bool skipBarrier) {
  std::vector<ast::StmtPtr> body;
  if (!scratchDecls.empty())
    body.push_back(std::make_unique<ast::ScratchStmt>(kf.range, std::move(scratchDecls)));
  blocks_ = {&body};
  emitted_ = 0;
  callFunction(kf, std::move(kargs), r);
  blocks_.clear();
  inKernel_ = false;

  // The module: the mesh, then the kernel.
  std::vector<std::unique_ptr<ast::AxisDecl>> axes;
  for (size_t i = 0; i < mesh_->items[0]->items.size(); ++i)
    axes.push_back(std::make_unique<ast::AxisDecl>(
        r, mesh_->items[0]->items[i]->s, r,
        std::make_unique<ast::IntLiteral>(r, mesh_->items[1]->items[i]->i), i));
  std::vector<ast::ExprPtr> grid;
  for (int64_t g : grid_)
    grid.push_back(std::make_unique<ast::IntLiteral>(r, g));
  ast::ExprPtr cid;
  std::unique_ptr<ast::SemDecl> barrier;
  if (hasCollective_) {
    cid = std::make_unique<ast::IntLiteral>(r, collective);
    barrier = std::make_unique<ast::SemDecl>(r, "barrier", r, ast::Storage::Barrier,
                                             ast::SemKind::Barrier, std::vector<ast::ExprPtr>{});
  }
  auto kernelDecl = std::make_unique<ast::KernelDecl>(
      kf.range, kf.name, std::move(bufs), std::move(grid), std::move(cid), std::move(barrier),
      std::make_unique<ast::Block>(kf.range, std::move(body)));
  if (skipBarrier)
    kernelDecl->setSkipDeviceBarrier(std::make_unique<ast::BoolLiteral>(r, true));
  std::vector<std::unique_ptr<ast::Node>> items;
  items.push_back(std::make_unique<ast::MeshDecl>(r, std::move(axes)));
  if (tcMesh_) {
    std::vector<std::unique_ptr<ast::AxisDecl>> core;
    core.push_back(std::make_unique<ast::AxisDecl>(
        r, tcMesh_->items[0]->s, r, std::make_unique<ast::IntLiteral>(r, tcMesh_->items[1]->i), 0));
    items.push_back(std::make_unique<ast::MeshDecl>(r, std::move(core), /*tensorCore=*/true));
  }
  items.push_back(std::move(kernelDecl));
  result_ = std::make_unique<ast::Module>(kf.range, std::move(items));
}

//--- directives (pytrace/Directives.h) ----------------------------------------

V literalValue(const Literal &l) {
  switch (l.k) {
  case Literal::K::Int:
    return mkInt(l.i);
  case Literal::K::Bool:
    return mkBool(l.b);
  case Literal::K::None:
    return mkNone();
  case Literal::K::Str:
    return mkStr(l.s);
  case Literal::K::Tuple:
  case Literal::K::List: {
    V v = mk(l.k == Literal::K::Tuple ? VK::Tuple : VK::List);
    for (const Literal &item : l.items)
      v->items.push_back(literalValue(item));
    return v;
  }
  }
  return mkNone();
}

void Tracer::applySets() {
  if (!options_.directives)
    return;
  for (const auto &[name, set] : options_.directives->sets) {
    V v = literalValue(set.value);
    if (set.call) {
      V f = mkObj("DirectiveConst");
      f->name = name;
      f->items = {v};
      v = f;
    }
    globals_->vars[name] = v;
    pinned_.insert(name);
  }
}

std::string Tracer::kernelCandidates() const {
  // Functions of the module with a parameter named like a ref: the likely kernels.
  std::vector<std::pair<uint32_t, std::string>> found;
  for (const auto &[name, v] : globals_->vars) {
    if (v->k != VK::Func || !v->func->params)
      continue;
    for (const py::Param &p : *v->func->params)
      if (p.name.size() >= 3 && p.name.compare(p.name.size() - 3, 3, "ref") == 0) {
        found.emplace_back(v->func->range.begin.line, name);
        break;
      }
  }
  if (found.empty())
    return "";
  std::sort(found.begin(), found.end());
  std::string names;
  for (size_t i = 0; i < found.size() && i < 5; ++i)
    names += fmt::format("{}{}()", i ? ", " : "", found[i].second);
  return fmt::format("; functions with ref parameters here: {}{}", names,
                     found.size() > 5 ? ", ..." : "");
}

void Tracer::traceEntry(const Entry &entry) {
  const SourceRange r = entry.range;
  auto it = globals_->vars.find(entry.kernel);
  if (it == globals_->vars.end())
    fail(r, "python-directive",
         fmt::format("'# dkv: entry {}(...)': the file defines no {}{}", entry.kernel, entry.kernel,
                     kernelCandidates()));
  if (it->second->k != VK::Func || !it->second->func->params)
    fail(r, "python-directive",
         fmt::format("'# dkv: entry {}(...)': {} is {}, not a Python function", entry.kernel,
                     entry.kernel, typeName(*it->second)));
  const Function &kf = *it->second->func;
  if (options_.mesh.empty())
    fail(r, "python-unknown-fact",
         fmt::format("no mesh for the entry {}(): add '# dkv: mesh x=N' (the shard_map's mesh: "
                     "its axis names and sizes)",
                     entry.kernel));
  V mesh = mkObj("Mesh");
  std::vector<V> names, sizes;
  for (const auto &[axis, size] : options_.mesh) {
    names.push_back(mkStr(axis));
    sizes.push_back(mkInt(size));
  }
  mesh->items = {mkTuple(names), mkTuple(sizes)};
  mesh_ = mesh;
  grid_ = entry.grid;
  hasCollective_ = entry.collectiveId.has_value();

  // The kernel's parameters, one to one with the entry's (a trailing parameter with a
  // default may be left out: it keeps its default).
  const auto &params = *kf.params;
  auto example = [&](const std::string &name) {
    return fmt::format("'# dkv: entry {}(..., in {}: f32[8, 128] @any, ...)' for an input ('out' "
                       "for an output, '{}: dma_sem' for a semaphore)",
                       entry.kernel, name, name);
  };
  for (size_t i = 0; i < params.size(); ++i) {
    const py::Param &p = params[i];
    if (p.kind == py::ParamKind::VarArgs || p.kind == py::ParamKind::VarKeywords)
      unsupported(p.range, "*args and **kwargs parameters of an entry kernel");
    bool positional =
        p.kind == py::ParamKind::Positional || p.kind == py::ParamKind::PositionalOnly;
    if (positional && i < entry.params.size()) {
      const EntryParam &e = entry.params[i];
      if (e.name != p.name)
        fail(e.range, "python-directive",
             fmt::format("parameter {} of {}() is '{}', and the entry directive names '{}' (the "
                         "entry lists the kernel's parameters in order, by their names)",
                         i + 1, entry.kernel, p.name, e.name));
      if (!e.typed)
        fail(e.range, "python-unknown-fact",
             fmt::format("no shape for parameter '{}' of {}: add its type to the entry, e.g. {}",
                         p.name, entry.kernel, example(p.name)));
      continue;
    }
    if (!(i < kf.defaults.size() && kf.defaults[i]))
      fail(r, "python-unknown-fact",
           fmt::format("no shape for parameter '{}' of {}: add it to the entry, e.g. {}", p.name,
                       entry.kernel, example(p.name)));
  }
  if (entry.params.size() > params.size())
    fail(entry.params[params.size()].range, "python-directive",
         fmt::format("{}() has {} parameters, and the entry directive lists {}", entry.kernel,
                     params.size(), entry.params.size()));
  for (size_t i = 0; i < entry.params.size(); ++i)
    if (params[i].kind != py::ParamKind::Positional &&
        params[i].kind != py::ParamKind::PositionalOnly)
      fail(entry.params[i].range, "python-directive",
           fmt::format("'{}' is a keyword-only parameter of {}(); pallas_call passes refs "
                       "positionally",
                       params[i].name, entry.kernel));

  beginKernel();
  std::vector<std::unique_ptr<ast::BufferDecl>> bufs;
  std::vector<std::unique_ptr<ast::Decl>> scratchDecls;
  Args kargs;
  for (size_t i = 0; i < entry.params.size(); ++i) {
    const EntryParam &e = entry.params[i];
    SourceRange pr = params[i].range;
    std::string n = fresh(e.name);
    std::vector<ast::ExprPtr> de;
    for (int64_t d : e.dims)
      de.push_back(std::make_unique<ast::IntLiteral>(pr, d));
    if (e.isSem) {
      V bound = mk(VK::Sem);
      bound->name = n, bound->semKind = e.semKind, bound->dims = e.dims;
      scratchDecls.push_back(std::make_unique<ast::SemDecl>(pr, n, pr, ast::Storage::Scratch,
                                                            e.semKind, std::move(de)));
      kargs.pos.push_back(bound);
      continue;
    }
    V ref = mk(VK::Ref);
    ref->name = n, ref->dims = e.dims, ref->dtype = e.dtype;
    kargs.pos.push_back(ref);
    if (e.role == EntryParam::Role::Scratch) {
      scratchDecls.push_back(std::make_unique<ast::BufferDecl>(
          pr, n, pr, ast::Storage::Scratch, ast::Direction::None, e.space, e.dtype, std::move(de)));
      continue;
    }
    bufs.push_back(std::make_unique<ast::BufferDecl>(
        pr, n, pr, ast::Storage::KernelParam,
        e.role == EntryParam::Role::In ? ast::Direction::In : ast::Direction::Out, e.space, e.dtype,
        std::move(de)));
  }
  // The mesh and the barrier sit at the kernel's def (the directive may be in a sidecar).
  finishKernel(kf, kf.range, std::move(bufs), std::move(scratchDecls), std::move(kargs),
               entry.collectiveId.value_or(-1), entry.skipDeviceBarrier);
}

//===----------------------------------------------------------------------===//
// Tables: SMEM integer inputs and scalar-prefetch operands
//===----------------------------------------------------------------------===//

// `jnp.array([[0, 1], [2, 3]], dtype=jnp.int32)`, `np.array(...)` or a Python list: an
// array whose values the file states (kw "contents": its elements, row-major). Only
// integer contents are kept (a table's); the default element type is int32, what JAX
// makes of Python ints (and of numpy's int64 without x64).
V Tracer::knownArray(const V &data, const V &dtype, SourceRange r) {
  if (data->k == VK::Obj && data->s == "Array") {
    if (!dtype)
      return data;
    V a = makeArray(shapeOf(data->items[0], r, "the array shape"), dtypeArg(dtype, r));
    for (const char *k : {"contents", "deviceContents"})
      if (data->kw.count(k))
        a->kw[k] = data->kw.at(k);
    return a;
  }
  ast::DType dt = dtype ? dtypeArg(dtype, r) : ast::DType::I32;
  if (!ast::isInteger(dt))
    unsupported(r, "an array of known values with a float element type (dkv keeps the "
                   "values of integer arrays only: the contents of SMEM tables)");
  std::vector<int64_t> shape;
  for (const Value *v = data.get(); v && (v->k == VK::List || v->k == VK::Tuple);
       v = v->items.empty() ? nullptr : v->items[0].get())
    shape.push_back(static_cast<int64_t>(v->items.size()));
  V flat = mk(VK::List);
  std::function<void(const V &, size_t)> walk = [&](const V &v, size_t depth) {
    bool seq = v->k == VK::List || v->k == VK::Tuple;
    if (seq != (depth < shape.size()) ||
        (seq && static_cast<int64_t>(v->items.size()) != shape[depth]))
      fail(r, "python-type",
           "the array's nested lists are ragged (every row needs the same length)");
    if (seq) {
      for (const V &x : v->items)
        walk(x, depth + 1);
      return;
    }
    if (v->k == VK::Int || v->k == VK::Bool) {
      flat->items.push_back(mkInt(v->k == VK::Int ? v->i : v->b));
      return;
    }
    fail(r, "python-type",
         fmt::format("an element of an integer array must be a Python int, got {}", typeName(*v)));
  };
  walk(data, 0);
  V a = makeArray(shape, dt);
  a->kw["contents"] = flat;
  return a;
}

// `jnp.zeros` / `jnp.ones` of an integer type: every element is `value`.
void Tracer::fillContents(const V &array, int64_t value) {
  constexpr int64_t kMaxElements = 100000; // larger arrays stay of unknown contents
  int64_t n = 1;
  for (const V &d : array->items[0]->items) {
    if (d->i < 0 || (d->i > 0 && n > kMaxElements / d->i))
      return;
    n *= d->i;
  }
  V flat = mk(VK::List);
  for (int64_t i = 0; i < n; ++i)
    flat->items.push_back(mkInt(value));
  array->kw["contents"] = flat;
}

// shard_map hands each device its block of an array: the contents stay whole when no
// dimension is divided (a replicated operand); when dimension 0 alone is divided over
// every device (P('x') on a one-axis mesh, P(('x', 'y')) naming every axis in the
// mesh's order), device d gets rows d * n : (d + 1) * n (kw "deviceContents").
void Tracer::shardContents(const V &global, const V &local, const V &spec, const V &mesh,
                           const std::vector<int64_t> &globalShape,
                           const std::vector<int64_t> &localShape, SourceRange r) {
  if (global->kw.count("deviceContents"))
    unsupported(r, "passing a block of a table to a nested shard_map");
  if (!global->kw.count("contents"))
    return;
  const V &flat = global->kw.at("contents");
  if (globalShape == localShape) {
    local->kw["contents"] = flat;
    return;
  }
  std::vector<std::string> axes;
  if (!spec->items.empty()) {
    const V &entry = spec->items[0];
    for (const V &ax : entry->k == VK::Str ? std::vector<V>{entry} : iterate(entry, r))
      axes.push_back(ax->s);
  }
  std::vector<std::string> meshAxes;
  for (const V &ax : mesh->items[0]->items)
    meshAxes.push_back(ax->s);
  bool onlyDim0 = true;
  for (size_t d = 1; d < globalShape.size(); ++d)
    onlyDim0 = onlyDim0 && globalShape[d] == localShape[d];
  if (!onlyDim0 || axes != meshAxes)
    unsupported(r, "an integer array of known values divided by shard_map other than along "
                   "its first dimension over every mesh axis (in the mesh's order); dkv "
                   "keeps the values of replicated (P()) and row-sharded tables");
  size_t chunk = 1;
  for (int64_t d : localShape)
    chunk *= static_cast<size_t>(d);
  V per = mk(VK::List);
  for (int64_t dev = 0; dev < options_.devices; ++dev) {
    V row = mk(VK::List);
    for (size_t j = 0; j < chunk; ++j)
      row->items.push_back(flat->items[static_cast<size_t>(dev) * chunk + j]);
    per->items.push_back(row);
  }
  local->kw["deviceContents"] = per;
}

// A table parameter: its default contents are the call site's values (one row per
// device when shard_map divided them), else the -T / --tables values (sema applies
// those over the defaults either way, and checks shape and range).
void Tracer::makeTable(ast::BufferDecl &decl, const V &arr, const std::vector<int64_t> &shape,
                       SourceRange r, bool scalarPrefetch) {
  std::string role = scalarPrefetch ? "a scalar-prefetch operand" : "an SMEM input";
  if (!ast::isInteger(decl.dtype()))
    unsupported(r, fmt::format("{} '{}' of a float element type (scalar-prefetch operands "
                               "are integer tables)",
                               role, decl.name()));
  auto lit = std::make_unique<ast::TableLiteral>();
  lit->range = r;
  auto add = [&](const V &flat) {
    for (const V &x : flat->items)
      lit->elements.push_back(std::make_unique<ast::IntLiteral>(r, x->i));
  };
  if (arr->kw.count("deviceContents")) {
    lit->shape = {options_.devices};
    lit->shape.insert(lit->shape.end(), shape.begin(), shape.end());
    for (const V &row : arr->kw.at("deviceContents")->items)
      add(row);
  } else if (arr->kw.count("contents")) {
    lit->shape = shape;
    add(arr->kw.at("contents"));
  } else if (auto it = options_.tables.find(decl.name()); it != options_.tables.end()) {
    lit->shape = it->second.shape;
    for (int64_t v : it->second.values)
      lit->elements.push_back(std::make_unique<ast::IntLiteral>(r, v));
  } else {
    fail(r, "python-table-contents",
         fmt::format("the contents of table '{}' ({}) are unknown: the call site passes an "
                     "array whose values this file does not state; give them with -T {}=[...] "
                     "or --tables FILE (docs/python.md \"Tables\")",
                     decl.name(), role, decl.name()));
  }
  decl.setTableInit(std::move(lit));
}

// `sizes_ref[i, j]`: one element of a table, an integer the kernel language reads as
// `sizes[i, j]` in any integer expression.
V Tracer::tableRead(const V &table, const std::vector<V> &items, SourceRange r, SourceRange sr) {
  V v = view(table, items, sr);
  for (size_t d = 0; d < v->dims.size(); ++d)
    if (d >= v->subs.size() || v->subs[d].kind != ast::Subscript::Kind::Index)
      unsupported(r, fmt::format("reading table '{}' other than one element at a time (one "
                                 "index per dimension: it has {})",
                                 table->name, v->dims.size()));
  return mkTraced(refTE(*v, r), TKind::Int);
}

} // namespace

std::unique_ptr<ast::Module> traceModule(const py::Module &module, const support::SourceFile &file,
                                         const TraceOptions &options,
                                         support::DiagnosticEngine &diags) {
  Tracer tracer(file, options);
  try {
    return tracer.run(module);
  } catch (const TraceError &e) {
    support::Diagnostic &d = diags.error(e.range, e.id, e.message);
    for (const auto &[range, text] : e.notes)
      d.notes.push_back(support::Diagnostic{support::Severity::Note, range, text, {}, {}});
    if (e.elided)
      d.notes.push_back(support::Diagnostic{
          support::Severity::Note, {}, fmt::format("... and {} more calls", e.elided), {}, {}});
    return nullptr;
  }
}

} // namespace dkv::pytrace
