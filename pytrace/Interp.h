// The tracer's interpreter: CPython's semantics over pyfront's AST (values, scopes,
// calls, classes, exceptions, imports), with the Pallas / JAX API as a registry of rows
// and the kernel being traced emitted as the kernel language's AST. Internal to
// pytrace/; split by concern like clang's Sema: Interp.cpp (statements, expressions),
// Objects.cpp (operators, attributes, items, equality, hashing), Builtins.cpp
// (builtins and the methods of built-in types), Classes.cpp (classes, instances,
// exceptions), Modules.cpp (the module loader and the standard library), Api.cpp (the
// registry), HostJax.cpp (host-side JAX), HostMath.cpp (its element-wise math), KernelApi.cpp
// (kernel-side API), JaxSrc.cpp (small helpers library kernels use), Pipeline.cpp
// (`pltpu.emit_pipeline`), Re.cpp (`re`), Kernel.cpp (pallas_call and pl.kernel: tracing a kernel),
// Tables.cpp, Entries.cpp (entry discovery: test classes, parameterized cases).
#pragma once

#include "frontend/AST.h"
#include "frontend/Sema.h"
#include "prim/Infer.h"
#include "pytrace/ApiObjects.h"
#include "pytrace/Directives.h"
#include "pytrace/Symtable.h"
#include "pytrace/TpuChips.h"
#include "pytrace/Tracer.h"
#include "pytrace/Value.h"
#include "support/Diagnostics.h"
#include "support/Source.h"

#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace dkv::pytrace {

using support::SourceRange;

/// A dkv error: the trace stops (an unsupported construct, an opaque value deciding the
/// model, a budget). Never caught by the Python code being run.
struct TraceError {
  SourceRange range;
  std::string id;
  std::string message;
  /// The chain of Python calls that led there, innermost first.
  std::vector<std::pair<SourceRange, std::string>> notes;
  size_t elided = 0; ///< calls beyond the first kMaxNotes, counted only
  std::vector<std::pair<SourceRange, std::string>> extra; ///< other notes (origins)
};
constexpr size_t kMaxNotes = 8;
[[noreturn]] void fail(SourceRange r, std::string id, std::string message);
[[noreturn]] void unsupported(SourceRange r, const std::string &what);

/// A Python exception in flight: `try`/`except` in the file may catch it; uncaught, it
/// is a dkv error (its id by the exception's class, docs/diagnostics.md).
struct PyRaise {
  V exc; ///< an instance of a BaseException class
  SourceRange range;
  std::string id; ///< the diagnostic id when uncaught (empty: by the exception's class)
  std::vector<std::pair<SourceRange, std::string>> notes;
  size_t elided = 0;
};

/// Stops the run of an entry once the kernel it was asked for is traced.
struct StopRun {};

/// The arguments of a call of a BuiltinFn, with Python's binding to its parameters.
struct CallCtx {
  Args args;
  SourceRange range;
  V self; ///< the bound object of a method, or null
  const struct BuiltinFn *fn = nullptr;
  std::string hint; ///< the name the result is assigned to (`x = f(...)`), for lets

  /// Binds the arguments to `names` as Python binds them to a signature (positional
  /// then keyword, `*` marks keyword-only names); a keyword that is not a parameter is a
  /// TypeError, as is a positional argument too many. Returns one value per name (null:
  /// not given).
  std::vector<V> bind(Interp &in, std::initializer_list<std::string_view> names) const;
};

/// One function of the registry: a Python builtin, a method of a built-in type, or an
/// API function (docs/python.md "The Pallas API table").
struct BuiltinFn {
  BuiltinFn() = default;
  BuiltinFn(std::string name, V (*handler)(Interp &, CallCtx &), std::string construct = "",
            bool kernelOnly = false)
      : name(std::move(name)), handler(handler), construct(std::move(construct)),
        kernelOnly(kernelOnly) {}
  std::string name; ///< the Python name, for messages ("len", "list.append", "pl.ds")
  V (*handler)(Interp &, CallCtx &) = nullptr;
  /// The kernel language's construct it becomes, for docs (empty: host only).
  std::string construct;
  /// Only meaningful inside a kernel (an error elsewhere).
  bool kernelOnly = false;
};

/// One row of the API registry: the qualified Python names (the first is canonical,
/// the others aliases across JAX versions and re-exporting modules), and either a
/// function or a constant.
struct ApiRow {
  std::vector<std::string> names;
  BuiltinFn fn;                      ///< a function (fn.handler set)
  V (*constant)(Interp &) = nullptr; ///< or a constant's value (null: a dtype, by its name)
};

/// One attribute of an object kind (`Obj`, held by the value `self`): its name and its
/// getter. Each kind's attributes are one table (`__name__` of a class, `.shape` of a
/// mesh, ...) that getAttrOpt and apiAttr look up once.
template <class Obj> struct AttrRow {
  std::string_view name;
  V (*get)(Interp &in, const Obj &obj, const V &self, SourceRange r);
};
/// The row of `name` in a kind's table, or null (the kind's fallback applies: its
/// class's attributes, an opaque value, an AttributeError).
template <class Obj, size_t N>
const AttrRow<Obj> *findAttr(const AttrRow<Obj> (&rows)[N], std::string_view name) {
  for (const AttrRow<Obj> &row : rows)
    if (row.name == name)
      return &row;
  return nullptr;
}
/// The attribute `name` of `self` (an `Obj`) by its kind's table, or null if it has none.
template <class Obj, size_t N>
V readAttr(const AttrRow<Obj> (&rows)[N], Interp &in, const V &self, std::string_view name,
           SourceRange r) {
  const AttrRow<Obj> *a = findAttr(rows, name);
  return a ? a->get(in, static_cast<const Obj &>(*self), self, r) : nullptr;
}

/// The registry: rows by name, the modules dkv models, their aliases.
class Registry {
public:
  static const Registry &get();
  /// The function or constant `qualified` (a canonical module path + "." + name), or null.
  const ApiRow *find(const std::string &qualified) const;
  /// The canonical path of a module dkv models (resolving aliases such as
  /// `jax._src.shard_map`), or nullopt.
  std::optional<std::string> module(const std::string &path) const;
  bool isModule(const std::string &canonical) const { return modules_.count(canonical) != 0; }
  void addRow(ApiRow row);
  void addModule(std::string path, std::vector<std::string> aliases = {});
  /// A name JAX removed (a deprecation finalized): reading it raises an AttributeError
  /// with `message`, JAX's.
  void addRemoved(std::string qualified, const char *message);
  /// The message of a removed name, or null.
  const char *removed(const std::string &qualified) const;
  const std::vector<ApiRow> &rows() const { return rows_; }

private:
  std::vector<ApiRow> rows_;
  std::map<std::string, const char *> removed_;
  std::map<std::string, size_t> byName_;
  std::set<std::string> modules_;
  std::map<std::string, std::string> moduleAliases_;
};

enum class Flow { Normal, Return, Break, Continue };

/// One activation: a module's top level, a function call, a class body.
struct Frame {
  const ScopeInfo *scope = nullptr;
  ModuleP globals;
  /// A function's local variables (every name of scope->locals has a cell).
  std::map<std::string, CellP> cells;
  const std::map<std::string, CellP> *closure = nullptr;
  NamespaceP classNs; ///< a class body's namespace
  FunctionV *function = nullptr;
  V firstArg; ///< the function's first argument (zero-argument super())
  V ret;      ///< the value of `return`
};

/// A kernel the run traced.
struct TracedKernel {
  std::unique_ptr<ast::Module> module;
  std::string name;
};

/// What JAX's TPU-generation predicates have answered in one run: a lower bound, or one
/// generation (`jtu.is_device_tpu(5, "e")`).
struct TpuGeneration {
  int64_t atLeast = 0;
  std::optional<int64_t> version;
  std::string variant;
};

/// What one entry's run produced.
struct EntryResult {
  std::vector<TracedKernel> kernels;
  std::optional<std::string> skipped; ///< the reason of a skipped test
  /// What the instance covers beyond its id (a hypothesis example: drawn or enumerated).
  std::string note;
};

/// One example of a `@hypothesis.given` test (Hypothesis.cpp): its arguments by name, its
/// label in the instance id and what the instance covers.
struct HypothesisExample {
  std::vector<std::pair<std::string, V>> kw;
  std::string label;
  std::string note;
};

/// `base` made a kernel-language name not in `used` (a reserved word gets `_`, `_` and ""
/// become `v`, a taken one `base_1`, `base_2`, ...), added to `used`.
std::string freshName(std::string base, std::set<std::string> &used);

class Interp {
public:
  Interp(const TraceOptions &options, support::SourceManager *sources);
  /// Frees what the run made: CPython's collector frees reference cycles (a class in its
  /// own MRO, a function in its module's globals, an enum member in its class); here the
  /// references of the objects the run made are cut when it ends, so that the runs of a
  /// test file's entries, each an Interp of its own, do not all stay in memory.
  ~Interp();
  Interp(const Interp &) = delete;
  Interp &operator=(const Interp &) = delete;

  //--- running --------------------------------------------------------------------
  /// Runs the main module's top level (`file`, parsed as `module`).
  /// Runs the checked file's top level: as a script (`python FILE.py`, `__name__` is
  /// "__main__") for its own top-level kernels, or imported as a module (`__name__` is its
  /// dotted name, so `if __name__ == "__main__":` blocks do not run) for a test entry and
  /// for `--call`, as pytest and `import` load it.
  void runMain(const py::Module &module, const support::SourceFile &file, bool asScript);
  /// The entries after the top level: test methods (with their cases) of the module's
  /// test classes, by id "Class::test_x[case]".
  std::vector<std::string> testEntries(const std::string &want = "");
  /// Runs one entry: "" (nothing more: the top level ran), a test id, a function name,
  /// or the call text of --call.
  void runEntry(const std::string &entry);

  TraceOptions options_;
  support::SourceManager *sources_;
  /// Kernels are traced (false: a pallas_call is evaluated, its body not traced).
  bool traceKernels_ = true;
  /// Stop the run (StopRun) when this many kernels are traced (0: never).
  size_t stopAfter_ = 0;
  /// Inside `with self.assertRaises(...)`: its kernels are kept until it ends.
  int insideAssertRaises_ = 0;
  EntryResult result_;
  /// The TPU generation the answers of JAX's device predicates fixed (Testing.cpp).
  TpuGeneration tpuGeneration_;
  /// The first `jitted.lower(...)` of the entry while kernels are traced: its function's
  /// name and line. An entry that lowers a function and traces no kernel is skipped
  /// (loweredOnly()).
  std::optional<std::pair<std::string, uint32_t>> lowered_;
  /// After an entry's run: when it traced no kernel, was not skipped and lowered a jitted
  /// function, it is skipped with a reason naming that (it runs no kernel).
  void loweredOnly();
  /// f-strings (FString.cpp): each one's pieces and parsed fields, read once.
  struct FStringCache {
    bool ok = false;
    std::shared_ptr<void> pieces;
    std::vector<std::set<std::string>> names; ///< the names each field reads
    std::vector<std::shared_ptr<void>> keep;  ///< the fields' syntax trees and scopes
  };
  std::map<const py::Constant *, std::shared_ptr<FStringCache>> fstrings_;
  V evalFString(const py::Constant &c, Frame &f, SourceRange r);
  /// `format(v, spec)` for ints, bools and strs with a spec, anything str() knows with
  /// none; nullopt for the rest (the caller keeps the value opaque).
  std::optional<std::string> formatValue(const V &v, const std::string &spec, SourceRange r);
  /// The chip of --tpu / `# dkv: tpu` (null: none; its facts are opaque).
  const TpuChip *chip_ = nullptr;
  /// A fact of the TPU chip without --tpu: opaque, its error naming --tpu; a str known to
  /// start with `strPrefix` when that is not empty (Origin::strPrefix).
  V chipFact(std::string what, SourceRange r, std::string strPrefix = {});

  //--- statements and expressions (Interp.cpp) ---------------------------------
  Flow execBody(const py::Body &body, Frame &f);
  Flow exec(const py::Stmt &s, Frame &f);
  V eval(const py::Expr &e, Frame &f);
  V evalInner(const py::Expr &e, Frame &f);
  void assign(const py::Expr &target, const V &v, Frame &f, SourceRange r);
  void del(const py::Expr &target, Frame &f, SourceRange r);
  V lookup(const std::string &id, Frame &f, SourceRange r);
  void bind(const std::string &id, V v, Frame &f, SourceRange r);
  void unbind(const std::string &id, Frame &f, SourceRange r);
  V evalCall(const py::Call &c, Frame &f);
  V makeFunction(const std::string &name, const void *node, const std::vector<py::Param> &params,
                 const py::Body *body, const py::Expr *lambda, SourceRange range, Frame &f);
  V comprehension(const py::Expr &e, Frame &f);
  V comprehensionValue(const py::Expr &e, IterState &state);
  Flow execTry(const py::Try &t, Frame &f);
  Flow execWith(const py::With &w, size_t i, Frame &f);
  Flow execMatch(const py::Match &m, Frame &f);
  bool matchPattern(const py::Pattern &p, const V &v, Frame &f);
  void execImport(const py::Stmt &s, Frame &f);
  V classDef(const py::ClassDef &c, Frame &f);

  //--- calls ------------------------------------------------------------------------
  V call(const V &fn, Args args, SourceRange r);
  V callFunction(FunctionV &fn, Args args, SourceRange r);
  V callBuiltin(const BuiltinFn &fn, const V &self, Args args, SourceRange r);
  /// Binds `args` to a function's parameters as CPython does (TypeErrors in its words).
  void bindParams(FunctionV &fn, Args args, Frame &frame, SourceRange r);
  int callDepth_ = 0;
  std::string nameHint_;
  uint32_t inlined_ = 0; ///< the helper call being traced (SourceLoc::inlined), 0: none

  //--- objects (Objects.cpp) -----------------------------------------------------------
  V binop(py::BinOpKind op, const V &a, const V &b, SourceRange r);
  //--- numbers of a scalar type (Scalars.cpp) ------------------------------------------
  /// `a op b` where one is a number of a scalar type (ScalarType) and the other a number
  /// or bool: NumPy's or JAX's result, or an opaque value naming why it is not computed;
  /// null when an operand is no number (an array: the caller's rules).
  V scalarBinop(py::BinOpKind op, const V &a, const V &b, SourceRange r);
  /// A comparison of such numbers: an `np.bool_` (a bool with a ScalarType), opaque, or null.
  V scalarCompare(py::CmpOpKind op, const V &a, const V &b, SourceRange r);
  /// Unary `-`, `+`, `~` of such a number, opaque or null (`not`: the caller's).
  V scalarUnary(py::UnaryOpKind op, const V &v, SourceRange r);
  /// abs() of such a number, in its type (np.int32's wraps around), or opaque.
  V scalarAbs(const V &v, SourceRange r);
  /// `np.float32(x)`, `jnp.int32(x)` of a number: its value in the type, or opaque.
  V makeScalar(const DTypeObj &d, const V &x, SourceRange r);
  V inplace(py::BinOpKind op, const V &a, const V &b, SourceRange r);
  V unary(py::UnaryOpKind op, const V &v, SourceRange r);
  V compare(py::CmpOpKind op, const V &a, const V &b, SourceRange r);
  /// `a == b` on concrete values (containers element by element, counted against the
  /// comparison budget), or nullopt when one side is opaque or traced.
  std::optional<bool> equal(const V &a, const V &b, SourceRange r);
  /// `a < b` (and the other orders) on concrete values; TypeError otherwise.
  bool less(const V &a, const V &b, SourceRange r);
  bool truth(const V &v, SourceRange r, std::string_view what);
  Hash hashOf(const V &v, SourceRange r);
  V getAttr(const V &obj, const std::string &name, SourceRange r);
  /// getattr that returns null instead of raising AttributeError.
  V getAttrOpt(const V &obj, const std::string &name, SourceRange r);
  void setAttr(const V &obj, const std::string &name, const V &value, SourceRange r);
  void delAttr(const V &obj, const std::string &name, SourceRange r);
  V getItem(const V &obj, const V &key, SourceRange r);
  void setItem(const V &obj, const V &key, const V &value, SourceRange r);
  void delItem(const V &obj, const V &key, SourceRange r);
  int64_t toIndex(const V &v, SourceRange r, std::string_view what);
  /// An iterator over `v` (CPython's iter()).
  V iter(const V &v, SourceRange r);
  /// The next item of an iterator, null at its end.
  V next(const V &it, SourceRange r);
  /// Every item of an iterable (a budget counts them).
  std::vector<V> toVector(const V &v, SourceRange r);
  /// Every item, a set's in any order: for consumers whose result does not depend on it.
  std::vector<V> elementsOf(const V &v, SourceRange r);
  std::optional<int64_t> lenOf(const V &v, SourceRange r);
  /// repr(v) / str(v); nullopt when dkv does not know the text (an opaque str is made).
  std::optional<std::string> repr(const V &v, SourceRange r);
  std::optional<std::string> str(const V &v, SourceRange r);
  // Dicts and sets.
  V dictGet(const Table &t, const V &key, SourceRange r);
  void dictSet(Table &t, const V &key, const V &value, SourceRange r);
  bool dictDel(Table &t, const V &key, SourceRange r);
  std::optional<size_t> tableFind(const Table &t, const V &key, Hash h, SourceRange r);
  std::vector<V> tableKeys(const Table &t) const;
  V newDict(const std::vector<std::pair<V, V>> &items, SourceRange r);

  //--- classes and exceptions (Classes.cpp) --------------------------------------------
  ClassP builtinClass(ClassRole role) const;
  ClassP exceptionClass(const std::string &name) const;
  ClassP typeOf(const V &v) const;
  /// A call of a `functools.lru_cache` wrapper: the cached result of equal arguments, or
  /// the function's, kept (Stdlib.cpp).
  V cachedCall(WrapperV &w, Args args, SourceRange r);
  /// Sets an exception's `args` and the attributes its class's __init__ sets (Classes.cpp).
  void exceptionArgs(InstanceV &e, std::vector<V> pos);
  bool isSubclass(const ClassP &c, const ClassP &base) const;
  bool isInstance(const V &v, const V &cls, SourceRange r);
  V lookupClassAttr(const ClassP &c, const std::string &name) const;
  V newInstance(const ClassP &c, Args args, SourceRange r);
  /// typing.NamedTuple classes: the fields of a class body (its annotated names, their
  /// defaults), an instance made from a call's arguments, and an instance's attributes.
  void namedTupleFields(const ClassP &cls, SourceRange r);
  V newNamedTuple(const ClassP &c, Args args, SourceRange r);
  V namedTupleAttr(const V &obj, const std::string &name, SourceRange r);
  V callClass(const ClassP &c, Args args, SourceRange r);
  ClassP makeClass(std::string name, std::vector<ClassP> bases, ClassRole role,
                   std::string module = "builtins");
  /// Calls a built-in type (int(x), list(it), ...): Builtins.cpp.
  V constructBuiltin(ClassRole role, Args args, SourceRange r);
  /// The method `name` of a value of a built-in type (list.append, str.join, ...), or
  /// null: Builtins.cpp.
  const BuiltinFn *builtinMethod(const V &self, const std::string &name) const;
  /// Classes of the API that isinstance knows: jax.Array, np.ndarray, the class of JAX's
  /// arrays (ArrayImpl) and of jnp.int32 & co. (_ScalarMeta), whose `type(x)` is them;
  /// PartitionSpec's, ShapeDtypeStruct's, PRNG key arrays' and tracers', which the file
  /// names as the registry's callables (or not at all), so `type(x)` of them is opaque.
  ClassP arrayClass_, ndarrayClass_, arrayImplClass_, scalarMetaClass_;
  ClassP pspecClass_, structClass_, keyArrayClass_, tracerClass_;
  /// types.UnionType (`int | None`): instances hold their classes in `__args__`.
  ClassP unionClass_;
  /// `a | b` of classes (or None): their union (refused where one may be a class of the
  /// API that dkv does not model as one); null where neither is a class (no union).
  V unionOf(const V &a, const V &b, SourceRange r);
  /// `type(x)` is a class the file cannot name otherwise (isinstance-only classes).
  bool hiddenClass(const ClassP &c) const;
  /// The frames being run, innermost last (zero-argument super()).
  std::vector<Frame *> frames_;
  /// The exceptions being handled, innermost last (a bare `raise`).
  std::vector<V> handling_;
  [[noreturn]] void raise(const std::string &cls, const std::string &message, SourceRange r);
  [[noreturn]] void raiseId(const std::string &cls, const std::string &message, SourceRange r);
  V makeException(const ClassP &cls, Args args);
  std::string exceptionText(const V &exc);
  std::map<std::string, ClassP> builtinClasses_;
  std::map<ClassRole, ClassP> roleClasses_;
  void initClasses();

  //--- opaque values ----------------------------------------------------------------
  V opaque(std::string what, SourceRange r, const V &from = nullptr);
  /// The source text of `r` when it is on one line and short (for messages), else "".
  std::string snippet(SourceRange r) const;
  /// `text` of `r` in backquotes, or `fallback`.
  std::string quoted(SourceRange r, const std::string &fallback) const;
  /// The error for an opaque value that decides what the model needs.
  [[noreturn]] void opaqueNeeded(const V &v, SourceRange r, std::string_view what);
  /// If `v` is opaque, the error; used where a concrete value is required.
  void requireConcrete(const V &v, SourceRange r, std::string_view what);

  //--- modules (Modules.cpp) ----------------------------------------------------------
  /// `import name` (level 0) or a relative import from `from`: the module object (its
  /// top-level package when `top`).
  ModuleP importModule(const std::string &name, const ModuleP &from, unsigned level, SourceRange r);
  ModuleP loadFromDisk(const std::string &name, const std::string &path, bool package,
                       SourceRange r);
  std::optional<std::pair<std::string, bool>> findOnDisk(const std::string &name) const;
  ModuleP modelledModule(const std::string &canonical, const std::string &name);
  V moduleAttr(const ModuleP &m, const std::string &name, SourceRange r);
  std::map<std::string, ModuleP> modules_; ///< the modules loaded, by name
  /// The classes, functions and instances the run made (~Interp cuts their references);
  /// `track` adds one, dropping the dead ones when the list has doubled.
  std::vector<std::weak_ptr<Value>> made_;
  size_t madeCompacted_ = 64;
  template <class T> std::shared_ptr<T> track(std::shared_ptr<T> v) {
    if (made_.size() >= 2 * madeCompacted_) {
      std::erase_if(made_, [](const std::weak_ptr<Value> &w) { return w.expired(); });
      madeCompacted_ = std::max<size_t>(64, made_.size());
    }
    made_.push_back(v);
    return v;
  }
  /// `sys.modules`: the modules loaded so far in load order, a dict the file may read
  /// and change (made at the first load; an import looks in it once the file has read it).
  std::shared_ptr<DictV> sysModules_;
  bool sysModulesRead_ = false;
  /// Records a module loaded (modules_ and sys.modules).
  void noteModule(const std::string &name, const ModuleP &m);
  /// The module `name` of sys.modules (CPython's first step of an import), or null.
  ModuleP loadedModule(const std::string &name, SourceRange r);
  /// `sys.modules` as the file sees it.
  V sysModules();
  /// The value of each constant row, made once per run (two aliases give one object).
  std::map<const ApiRow *, V> constants_;
  /// unittest.TestCase's stand-in and its subclasses (Testing.cpp).
  std::map<std::string, ClassP> testClasses_;
  ClassP testCaseClass(const std::string &which);
  std::vector<std::string> searchPath_;
  std::vector<std::unique_ptr<py::Module>> parsedModules_;
  std::map<const py::Module *, std::unique_ptr<Symtable>> symtables_;
  const ScopeInfo &scopeOf(const void *node, const ModuleP &m);
  std::map<const ModuleV *, const Symtable *> moduleSymtable_;
  int importDepth_ = 0;
  ModuleP main_;
  NamespaceP builtins_;
  void initBuiltins();

  //--- budgets ----------------------------------------------------------------------
  void step(SourceRange r);
  void alloc(uint64_t units, SourceRange r);
  void compareWork(SourceRange r);
  uint64_t steps_ = 0, allocated_ = 0, compared_ = 0;
  static constexpr uint64_t kMaxSteps = 1000000;
  static constexpr uint64_t kMaxAlloc = uint64_t{1} << 23;   ///< elements and bytes built
  static constexpr uint64_t kMaxCompare = uint64_t{1} << 24; ///< element comparisons
  static constexpr int kMaxDepth = 1000;                     ///< CPython's default recursion limit

  //--- the kernel being traced (Kernel.cpp, KernelApi.cpp) ----------------------------
  bool inKernel_ = false;
  std::vector<std::vector<ast::StmtPtr> *> blocks_;
  /// The serial number of each block of blocks_ (a block is never numbered twice).
  std::vector<uint64_t> blockIds_;
  uint64_t blockSerial_ = 0;
  /// Opens (pushBlock) and closes (popBlock) a block of kernel statements.
  void pushBlock(std::vector<ast::StmtPtr> *b) {
    blocks_.push_back(b);
    blockIds_.push_back(++blockSerial_);
  }
  void popBlock() {
    blocks_.pop_back();
    blockIds_.pop_back();
  }
  /// Where each statement that may write a ref was emitted (emitted_ - 1 is the last):
  /// per open block, its serial number and the statement's index there (for enclosing
  /// blocks, the index the statement holding the nested block takes).
  std::vector<std::vector<std::pair<uint64_t, size_t>>> writeAt_;
  /// A loaded value stored after operations that may write a ref ran since its load:
  /// the kernel-language expression of a snapshot of it taken where it was loaded (a
  /// VMEM scratch `snapshot` of `shape` and `dtype`, stored right before the first of
  /// those operations), or
  /// null when there is no such place (docs/python.md "Values stored later").
  TE snapshot(const TracedV &t, const std::vector<int64_t> &shape, ast::DType dtype, SourceRange r);
  /// `v`, or when it is a loaded value whose refs were read before operations that may
  /// write a ref ran since, a read of its snapshot (so that values loaded at different
  /// times combine).
  V current(const V &v, SourceRange r);
  std::vector<std::unique_ptr<ast::Decl>> snapshotScratch_;
  std::set<std::string> used_;
  uint64_t emitted_ = 0; ///< statements that may write a ref
  uint64_t kernelStmts_ = 0;
  static constexpr uint64_t kMaxKernelStmts = 20000;
  V mesh_; ///< the mesh of the enclosing shard_map (MeshObj)
  /// A pallas_call outside any shard_map runs on one device: mesh_ is then a MeshObj
  /// without axes, emitted as the one-device mesh `kSingleAxis = 1`.
  bool singleDevice_ = false;
  static constexpr const char *kSingleAxis = "single_device";
  /// A jitted function called outside any shard_map: its pallas_calls run on one device,
  /// and those that pass semaphores make sequences when it returns.
  V callJit(const JitObj &j, Args args, SourceRange r);
  /// The refusal of a kernel without semaphores run among the calls of a sequence.
  [[noreturn]] void betweenCalls(SourceRange r, SourceRange before);
  V contextMesh_; ///< the mesh jax.set_mesh set (MeshObj), or null
  V tcMesh_;      ///< the TensorCore mesh of the pl.kernel being traced, or null
  std::vector<int64_t> grid_;
  /// The ranges of the positional arguments of the call being made (evalCall), empty
  /// when unknown.
  std::vector<SourceRange> argRanges_;
  /// Inside an index map: a per-device value assigned to a name stays an expression (a
  /// `let` would be outside the index map's lambda).
  bool inlineLets_ = false;
  bool hasCollective_ = false;
  bool entryMode_ = false;       ///< an entry directive replaces the call site's pallas_call
  std::set<std::string> pinned_; ///< globals fixed by `# dkv: set` (NAME; MODULE.NAME)

  std::string fresh(std::string base);
  void emit(ast::StmtPtr s, bool writes = true);
  V letTraced(const V &v, const std::string &hint, SourceRange r);
  [[noreturn]] void tracedBool(const TracedV &v, SourceRange r, std::string_view what);
  [[noreturn]] void tracedIndex(const TracedV &v, SourceRange r, std::string_view what);
  TE intTE(const V &v, SourceRange r, std::string_view what);
  TE condTE(const V &v, SourceRange r);
  TE predTE(const V &v, SourceRange r);
  V valueBinop(std::string_view op, const V &a, const V &b, SourceRange r);
  V tracedBinop(py::BinOpKind op, const V &a, const V &b, SourceRange r);
  V tracedCompare(py::CmpOpKind op, const V &a, const V &b, SourceRange r);
  V view(const V &base, const std::vector<V> &items, SourceRange r);
  std::vector<V> indexItems(const V &key);
  TE refTE(const RefV &ref, SourceRange r);
  void store(const V &ref, const V &key, const V &value, bool accumulate, SourceRange r,
             SourceRange indexRange);
  V refAttr(const V &ref, const std::string &name, SourceRange r);
  V tableRead(const V &table, const std::vector<V> &items, SourceRange r);
  /// The element type and shape of kernel values where dkv knows them (a load of a ref
  /// view with static bounds, and the catalogue's inference over compute on them): what
  /// `.shape`, `.ndim`, `.size` and `.dtype` of a kernel value give.
  std::map<const TExpr *, std::pair<TE, prim::ValueType>> valueTypes_;
  std::optional<prim::ValueType> valueType(const V &v) const;
  /// Records the type of a kernel value (nothing if unknown); returns the value.
  V typed(V v, std::optional<prim::ValueType> t);
  /// The type of `op` on `operands`, if dkv knows every operand's.
  std::optional<prim::ValueType> inferValue(ast::ComputeOp op, const std::vector<V> &operands,
                                            const prim::Attrs &attrs, std::string_view api) const;
  V tracedAttr(const V &v, const std::string &name, SourceRange r);
  /// `x[i, a:b]` of a kernel value of known shape: split, concatenate and reshape.
  V indexValue(const V &x, const V &key, SourceRange r);
  V computeValue(ast::ComputeOp op, std::vector<V> operands, std::optional<ast::DType> dtype,
                 std::optional<int64_t> axis, SourceRange r, std::string_view api,
                 std::vector<std::pair<std::string, bool>> flags = {},
                 std::vector<int64_t> dims = {});
  V forLoop(const std::string &api, const V &lo, const V &hi, const V &body, const V &init,
            bool withCarry, SourceRange r);
  V condBranches(const V &pred, const V &t, const V &f, const std::vector<V> &ops, SourceRange r);
  V callShardMap(const ShardMapObj &sm, Args args, SourceRange r);
  V callPallas(const PallasCallObj &pc, Args args, SourceRange r);
  V callPlKernel(const PlKernelObj &pk, Args args, SourceRange r);
  /// `pl.core_map(mesh, compiler_params=...)(body)`: the body as a kernel over the
  /// TensorCore mesh, its operands the host refs it closes over (CoreMap.cpp).
  V callCoreMap(const V &mesh, const V &body, const V &compilerParams, SourceRange r);
  /// `pl.run_state(f)(init)`: `f` on refs of `init`'s arrays; their final values.
  V callRunState(const V &f, const V &init, SourceRange r);
  /// The refusal of a host ref (`StateRefObj`) used other than as a pl.core_map operand.
  [[noreturn]] void stateRefMisused(const V &ref, SourceRange r, std::string_view what);
  uint64_t stateRefSerial_ = 0; ///< refs made by pl.run_state / jax.new_ref
  /// The host refs a kernel function closes over, made its parameters (CoreMap.cpp).
  struct ClosedRefs {
    std::vector<V> hostRefs;                  ///< the StateRefObjs, in the order they were made
    std::vector<ast::BufferDecl *> decls;     ///< the parameter of each
    std::vector<std::pair<CellP, V>> swapped; ///< the cells holding the kernel's refs
    void restore();
    /// Counts the kernel among the refs' users (a kernel of a sequence, or an instance).
    void used(bool inSequence);
  };
  /// Makes each host ref that `kf`'s closure holds an `inout` parameter in `any` (in
  /// `bufs`) and puts the kernel's ref in its cell; refuses a ref that another instance
  /// took, one of a returned pl.run_state, and a container of refs (`what` names the
  /// function in messages).
  ClosedRefs takeClosedRefs(const FunctionV &kf, SourceRange r,
                            std::vector<std::unique_ptr<ast::BufferDecl>> &bufs,
                            std::string_view what, bool inSequence);
  /// JAX's `jax_pallas_auto_assign_collective_ids` for the test being run, as
  /// `jtu.with_config` on its class or method sets it ("" when not set): with
  /// "override" JAX gives every kernel a collective id of its own, whatever the kernel
  /// asks for, so two kernels of one body never share a barrier semaphore.
  std::string autoCollectiveIds_;
  static constexpr const char *kAutoCollectiveIdsAttr = "__dkv_auto_assign_collective_ids__";
  V callWhen(const WhenObj &w, Args args, SourceRange r);
  V callPipeline(const PipelineObj &p, Args args, SourceRange r);
  /// Whether a blocked BlockSpec of a pallas_call operand is Pallas' default one: the
  /// whole operand, block 0 at every grid point (Pipeline.cpp).
  bool wholeBlock(const BlockSpecObj &bs, const std::vector<int64_t> &shape,
                  const std::vector<int64_t> &grid, size_t prefetch);
  TE deviceTE(const V &id, const V &type, SourceRange r);
  /// Refuses `pltpu.SemaphoreType.BARRIER` as a scratch shape or output (KernelApi.cpp).
  [[noreturn]] void barrierScratch(SourceRange r);
  /// Refuses a DMA or signal target in a kernel over a ScalarSubcoreMesh of several
  /// cores, whose core Mosaic drops (KernelApi.cpp).
  void subcoreTarget(SourceRange r, const std::string &what);
  std::unique_ptr<ast::Decl> scratchDecl(const V &spec, const std::string &name, SourceRange r,
                                         ast::Storage storage, V &bound);
  struct CompilerParams {
    int64_t collective = -1;
    bool skipBarrier = false;
  };
  CompilerParams compilerParams(const V &cp, SourceRange r);
  /// A pallas_call's grid with `dimension_semantics`: a dimension that may be 'parallel'
  /// (any entry but 'arbitrary') of more than one point is split between the
  /// TensorCores of a megacore chip, which the model does not do; refused unless
  /// `--tpu` names a chip with one TensorCore per device, where the grid runs in order.
  void checkParallelGrid(const V &cp, const std::vector<int64_t> &grid, SourceRange r);
  V paramBuffer(const HostArrayV &arr, const std::string &name, SourceRange pr, ast::Direction dir,
                ast::MemSpace space, std::vector<std::unique_ptr<ast::BufferDecl>> &bufs);
  void beginKernel();
  /// A pallas_call's parameters as the caller's arrays: its semaphore parameters (a
  /// `pltpu.SEMAPHORE` operand or a semaphore output), every parameter in order, and
  /// the caller's array each binds (an operand, or the call's result).
  struct CallArrays {
    std::vector<std::unique_ptr<ast::SemDecl>> sems;
    std::vector<ast::Decl *> order;
    std::vector<V> arrays;
    std::vector<bool> withData; ///< the array holds data when the call starts
  };
  void finishKernel(const FunctionV &kf, SourceRange r,
                    std::vector<std::unique_ptr<ast::BufferDecl>> bufs,
                    std::vector<std::unique_ptr<ast::Decl>> scratchDecls, Args kargs,
                    int64_t collective, bool skipBarrier, CallArrays call = {});
  /// The mesh declarations of the kernel being traced (the devices', then the
  /// TensorCores' if any).
  std::vector<std::unique_ptr<ast::Node>> meshItems(SourceRange r);
  /// Adds a traced instance (a module) to the run's, stopping the run when it is the one
  /// asked for.
  void addTraced(std::unique_ptr<ast::Module> module, std::string name);
  /// A kernel traced in a shard_map body that takes or returns a semaphore: it runs in a
  /// sequence with the kernels of the body the semaphores link it to, made when the body
  /// returns (sequences(); docs/python.md "Kernel sequences").
  struct PendingKernel {
    std::unique_ptr<ast::KernelDecl> kernel;
    CallArrays call;
    SourceRange range; ///< the pallas_call
  };
  /// The refusal of a kernel whose collective_id an earlier kernel of the body has
  /// (Kernel.cpp finishKernel).
  [[noreturn]] void sharedCollective(int64_t id, SourceRange r, SourceRange first);
  struct BodyKernels {
    std::vector<PendingKernel> pending;
    /// The kernels of the body that pass no semaphore (instances of their own): where
    /// each ran among the pending ones (pending.size() then) and its pallas_call.
    std::vector<std::pair<size_t, SourceRange>> between;
    /// A pallas_call result aliased to an operand (input_output_aliases) -> the array it
    /// is: the operand's buffer, donated (the result is kept alive in `kept`).
    std::map<const Value *, V> donated;
    std::vector<V> kept;
    /// The collective_id of each kernel of the body that has one: where it was first given.
    std::map<int64_t, SourceRange> collectives;
    /// The array a value of the body is: through `donated`, else itself.
    V buffer(const V &v) const {
      auto it = donated.find(v.get());
      return it == donated.end() ? v : it->second;
    }
  };
  BodyKernels *body_ = nullptr; ///< the innermost shard_map body being run, or null
  /// The sequences of a shard_map body's pending kernels, one instance each.
  void sequences(BodyKernels &body, SourceRange r);
  /// The kernel function of a pallas_call / pl.kernel (a Python function, or a
  /// functools.partial of one whose bound arguments are passed along).
  struct KernelFn {
    FunctionV *fn = nullptr;
    Args bound;
  };
  KernelFn kernelFunction(const V &k, SourceRange r, std::string_view api);

  //--- host JAX (HostJax.cpp) -------------------------------------------------------
  V makeArray(std::vector<int64_t> shape, ast::DType dtype, bool isStruct = false);
  std::vector<int64_t> shapeOf(const V &v, SourceRange r, std::string_view what);
  ast::DType dtypeArg(const V &v, SourceRange r);
  /// The element type a NumPy function's `dtype=` names: those of dtypeArg, and NumPy's
  /// float64 and int64 (`np.float64`, `'int64'`, Python's `float` and `int`) as F32 / I32
  /// with `x64` set (HostArrayV::x64).
  std::pair<ast::DType, bool> numpyDtypeArg(const V &v, SourceRange r);
  /// `np.array(data, dtype)` (numpy) or `jnp.array(data, dtype)`: NumPy makes float64 /
  /// int64 of Python floats and ints, JAX float32 / int32.
  V knownArray(const V &data, const V &dtype, SourceRange r, bool numpy = false);
  /// `a @ b` / jnp.matmul on the host: the (m, n) array of two 2-d jax arrays of one
  /// element type, (m, k) and (k, n) (shape and type; no data); null for anything else.
  V hostMatmul(const V &a, const V &b);
  /// The rows of an array of devices (sub-arrays, or devices when it is 1-d), as NumPy
  /// iterates over it.
  std::vector<V> deviceArrayRows(const V &arr);
  /// `devs[key]` (`flat`: `devs.flat[key]`) for an int or a tuple of ints, with NumPy's
  /// IndexError out of bounds; any other key is refused (opaque).
  V deviceArrayIndex(const V &arr, const V &key, SourceRange r, bool flat);
  /// `devs.flat`: NumPy's flatiter over the devices (iteration, next(), len(), int index).
  V deviceFlatIter(const V &arr);
  /// The array of a flatiter made by deviceFlatIter, or null for any other iterator.
  static V flatIterArray(const V &it);
  V reshapeArray(const HostArrayV &a, const Args &args, SourceRange r);
  /// `a[key]` on an array of known integer values (per device after shard_map or a
  /// host `lax.axis_index`): ints, per-device ints, slices and None; null when the
  /// values are unknown or the key is another kind (the caller keeps it opaque).
  V indexArray(const HostArrayV &a, const V &key, SourceRange r);
  /// `a op b` with a jax array operand (the other a Python number or a jax array):
  /// NumPy broadcasting of the shapes, JAX's promotion of the dtype (a Python scalar is
  /// weakly typed), integer values where both are known and the result fits int32, the
  /// sharding where it is plain; null where dkv does not model it (the caller keeps it
  /// opaque).
  V arrayBinop(py::BinOpKind op, const V &a, const V &b, SourceRange r);
  /// `jnp.broadcast_to(x, shape)` of a host array or Python number (JAX's checks).
  V broadcastArray(const V &x, const std::vector<int64_t> &shape, SourceRange r);
  /// Apply `f` to the values of each device (or to the one set of values).
  V mapContents(const HostArrayV &a, std::vector<int64_t> shape,
                const std::function<std::vector<int64_t>(const std::vector<int64_t> &)> &f);
  /// An element-wise math function of the host (HostMath.cpp: `jnp.sqrt`, `np.exp`,
  /// `jnp.abs`, ...) on a host array or Python scalar, by `c.fn`'s name; null when the
  /// name is not one of them.
  V hostMath(CallCtx &c);
  /// `-a` (`negate`) or `+a` of a host array: a new array of its shape, type and
  /// sharding, integer values negated (unknown where one leaves the type).
  V signedArray(const HostArrayV &a, bool negate);
  /// `jnp.split(x, n, axis)` of a host array: a list of its n equal parts.
  V splitArray(const HostArrayV &arr, const V &sections, const V &axis, SourceRange r);
  /// `jnp.concatenate(arrays, axis)` (`np.concatenate`: `numpy`) of host arrays (HostJax.cpp).
  V concatArrays(const V &arrays, const V &axis, SourceRange r, bool numpy = false);
  V hostArrayAttr(const V &arr, const std::string &name, SourceRange r);
  V apiAttr(const V &obj, ApiObject &a, const std::string &name, SourceRange r);
  V callApiObject(const V &obj, ApiObject &a, Args args, SourceRange r);

  //--- tables (Tables.cpp) ----------------------------------------------------------
  void shardContents(const HostArrayV &global, HostArrayV &local, const PSpecObj &spec,
                     const MeshObj &mesh, SourceRange r);
  void makeTable(ast::BufferDecl &decl, const HostArrayV &arr, const std::vector<int64_t> &shape,
                 SourceRange r, bool scalarPrefetch);

  //--- directives -------------------------------------------------------------------
  void applySets();
  /// The `--set` (or, failing that, the `# dkv: set`) of `name`, or null: the command
  /// line wins over the file's directives, and of two `--set` of one name the last.
  /// Every lookup of a set goes through here, so one rule holds everywhere.
  const SetDirective *findSet(const std::string &name) const;
  /// The platform under test (Testing.cpp): "tpu", unless `--set
  /// 'jax._src.test_util.device_under_test()="cpu"'` (or the same `# dkv: set`) names
  /// another: what `jtu.device_under_test()` returns.
  std::string platformUnderTest() const;
  /// Its backend's platform name (`jax.default_backend()`, a device's `.platform`): the
  /// platform under test, "gpu" for "cuda" and "rocm".
  std::string backendPlatform() const;
  /// The value a `set` directive gives its name: the literal, or for `NAME()=VALUE` a
  /// function of any arguments returning it, whose expression, if it has one, each call
  /// evaluates in `globals`.
  V directiveValue(const SetDirective &set, const ModuleP &globals);
  /// The frame of module m's top level (its globals are its locals): where a module body,
  /// `--call` and `set NAME()=EXPR` run.
  Frame moduleFrame(const ModuleP &m) const;
  /// One Python expression parsed from `text` (a source named `name`), kept for the run
  /// with its symbol table: `--call` and `set NAME()=EXPR`. A syntax error is reported at
  /// `place(range)` prefixed with `what`; text that is not one expression is `shapeId`.
  const py::Expr &parseExpression(const std::string &name, const std::string &text,
                                  const std::function<SourceRange(SourceRange)> &place,
                                  const std::string &what, const char *shapeId,
                                  const std::string &shapeMessage);
  void traceEntryDirective(const Entry &entry);
  std::string kernelCandidates() const;

  //--- hypothesis (Hypothesis.cpp) ---------------------------------------------------
  /// `htu.setup_hypothesis(max_examples=N)`: the profile's max_examples (hypothesis's
  /// default 100 without one).
  std::optional<int64_t> hypothesisMaxExamples_;
  struct Chooser;
  /// The choices of the example being drawn (null: no draw is under way).
  Chooser *chooser_ = nullptr;
  V hypothesisDraw(const V &strategy, SourceRange r);
  /// The examples of a `@given` test: every example when the strategies have at most
  /// max_examples, else max_examples drawn with the seed (docs/python.md "Hypothesis").
  std::vector<HypothesisExample> hypothesisExamples(const GivenObj &g, SourceRange r);
  /// Calls and attributes of hypothesis's objects; null when `a` is none of them.
  V callHypothesisObject(ApiObject &a, Args &args, SourceRange r);
  V hypothesisAttr(const V &obj, ApiObject &a, const std::string &name, SourceRange r);

  //--- entries (Entries.cpp) ----------------------------------------------------------
  struct TestCaseRef {
    ClassP cls;
    std::string method;     ///< the method's name in the class
    std::string id;         ///< "Class::test_x[case]"
    std::string absltestId; ///< "Class::test_x_case" (absl's generated name)
    std::optional<ParameterizedObj::Case> params;
    std::optional<HypothesisExample> example; ///< a `@given` test's example
    std::exception_ptr failure;               ///< drawing its examples failed: running it rethrows
  };
  /// The test cases of the module's test classes; with `want` (an entry id) only those of
  /// the methods it can name.
  std::vector<TestCaseRef> collectTests(const std::string &want = "");
  void runTest(const TestCaseRef &t);
  std::optional<std::string> skipReasonOf(const V &fnOrClass, SourceRange r);
};

//--- helpers shared by the files of the interpreter ------------------------------------
V none();
V boolean(bool b);
V integer(int64_t i);
/// A number or bool a scalar type made (`np.int32(3)`, IntV::scalar).
bool scalarOfType(const V &v);
/// Its ScalarType where it is a number or bool a scalar type made, or null.
const ScalarType *scalarTypeOf(const V &v);
/// The number or bool `v` with scalar type `t` (none: a plain Python number).
V withScalar(const V &v, const ScalarType &t);
/// `np.expand_dims` / `jnp.expand_dims` of a host array (HostJax.cpp).
V hostExpandDims(Interp &in, CallCtx &c, bool numpy);
V floating(double f);
V string(std::string s);
V tuple(std::vector<V> items);
/// A tuple of class `cls` (a NamedTuple's; null: a plain tuple).
V tupleOfClass(std::vector<V> items, ClassP cls);
/// A list when `like` is not a tuple, else a tuple of the class of `like` (what copying a
/// sequence item by item makes: a NamedTuple stays one).
V sameSequence(const V &like, std::vector<V> items);
V list(std::vector<V> items);
V ellipsis();
V builtinValue(const BuiltinFn &fn, V self = nullptr);
/// CPython's repr of a float.
std::string floatRepr(double f);
/// A constant's value for `# dkv: set` (pytrace/Directives.h).
V literalValue(const Literal &l);
/// The value of a dtype constant of the registry (`jnp.float32`: a DTypeObj by its name).
V dtypeConstant(const std::string &qualified);
/// The shape of a ref view, or nullopt when a per-device slice leaves it unknown.
std::optional<std::vector<int64_t>> viewShape(const RefV &ref);
/// Axes of a kernel value's `rank` dimensions as JAX canonicalises them (negative from the
/// end, normalised in place): which are named, or JAX's ValueError for an axis out of
/// range or named twice (`repeated`: the message).
std::vector<bool> canonicalAxes(Interp &in, std::vector<int64_t> &axes, int64_t rank,
                                const char *repeated, SourceRange r);
/// The methods of kernel values (a DMA descriptor's start/wait, a loaded value's astype).
const BuiltinFn *kernelMethod(const V &self, const std::string &name);

/// While a kernel outside any shard_map is traced (a pallas_call, pl.kernel or
/// pl.core_map under jax.jit or eagerly, or the sequences of a jitted function's calls
/// are made): the one-device mesh (docs/python.md "One device"). Inside a shard_map it
/// changes nothing.
struct OneDeviceScope {
  explicit OneDeviceScope(Interp &in);
  ~OneDeviceScope();
  OneDeviceScope(const OneDeviceScope &) = delete;
  OneDeviceScope &operator=(const OneDeviceScope &) = delete;

private:
  Interp &in_;
  V saved_;
  bool was_;
  bool active_;
};

} // namespace dkv::pytrace
