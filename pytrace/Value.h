// The tracer's Python values: a closed set of value classes (docs/python.md "Object
// model"), shared by reference as CPython's objects are.
#pragma once

#include "frontend/AST.h"
#include "pyfront/PyAST.h"
#include "pytrace/TracedExpr.h"
#include "support/Source.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

namespace dkv::pytrace {

struct Value;
/// Every Python object is held by a shared pointer: assignment, argument passing and
/// storing into containers share the object (CPython's references), so a mutation
/// through one name is seen through every other.
using V = std::shared_ptr<Value>;

/// The classes of values. Each has its own C++ struct (below); `isa`/`cast` dispatch on
/// the kind, and every switch over it names every kind.
enum class Kind : uint8_t {
  None,
  Bool,
  Int,
  Float,
  Str,
  Tuple,
  List,
  Dict,
  Set, ///< set and frozenset
  Slice,
  Ellipsis,
  Range,
  Iterator,
  Function,
  BoundMethod,
  Builtin, ///< a function or method implemented by the tracer (a registry row)
  Partial, ///< functools.partial / jax.tree_util.Partial
  Class,
  Instance,
  Module,
  Wrapper, ///< property, staticmethod, classmethod
  Opaque,  ///< a value dkv does not compute (docs/python.md "Opaque values")
  Traced,  ///< a per-device value of the kernel: a traced scalar or a loaded array
  Ref,     ///< a kernel ref (a buffer or a view of one)
  Sem,     ///< a semaphore (or an array of them, or a view)
  Desc,    ///< a DMA descriptor
  HostArray,
  Api, ///< an object of the Pallas / JAX API (a mesh, a spec, ...): ApiObject
};

/// CPython's type name of a value (`type(x).__name__`), for messages.
std::string typeName(const Value &v);

struct Value {
  explicit Value(Kind kind) : kind(kind) {}
  Value(const Value &) = delete;
  Value &operator=(const Value &) = delete;
  virtual ~Value() = default;
  const Kind kind;
};

template <typename T> bool isa(const V &v) { return v && v->kind == T::kKind; }
template <typename T> T &cast(const V &v) { return static_cast<T &>(*v); }
template <typename T> T *dynCast(const V &v) {
  return v && v->kind == T::kKind ? static_cast<T *>(v.get()) : nullptr;
}

//===----------------------------------------------------------------------===//
// Scalars
//===----------------------------------------------------------------------===//

struct NoneV final : Value {
  static constexpr Kind kKind = Kind::None;
  NoneV() : Value(kKind) {}
};
struct EllipsisV final : Value {
  static constexpr Kind kKind = Kind::Ellipsis;
  EllipsisV() : Value(kKind) {}
};
/// The type of a number a scalar type made (`np.float32(x)`: a NumPy scalar,
/// `jnp.int32(3)`: a JAX array of shape ()), of arithmetic on such numbers, and of their
/// comparisons (`np.bool_`, a JAX bool array). Such a number is kept as its value, already
/// rounded or wrapped to its type; type() of it is refused, isinstance with Python's number
/// classes answered (np.float64 is a float, np.int64 no int). NumPy 1 and
/// NumPy 2 (NEP 50) type arithmetic with a Python number differently (`np.int32(1) + 1` is
/// int64 in one, int32 in the other): `v1` and `v2` are its type under each, and dkv keeps
/// a result only where both give the same value (pytrace/Scalars.cpp).
struct ScalarType {
  enum class From : uint8_t { None, NumPy, Jax };
  struct T {
    ast::DType dtype = ast::DType::F32;
    bool x64 = false; ///< NumPy's float64 / int64 (`dtype` F32 / I32), as HostArrayV's
    friend bool operator==(const T &, const T &) = default;
  };
  From from = From::None;
  T v1, v2; ///< under NumPy 1 and NumPy 2; JAX's: both the same
  bool any() const { return from != From::None; }
};

struct BoolV final : Value {
  static constexpr Kind kKind = Kind::Bool;
  explicit BoolV(bool b) : Value(kKind), b(b) {}
  const bool b;
  /// A comparison of scalars of a type (`np.int32(1) < 2`: an `np.bool_`), not a Python
  /// bool: `v1`/`v2` unused.
  ScalarType scalar;
};
/// A Python int. dkv computes integers exactly within 64 bits and refuses (an error
/// with a location) any result beyond them, never wraps (docs/python.md).
struct IntV final : Value {
  static constexpr Kind kKind = Kind::Int;
  explicit IntV(int64_t i) : Value(kKind), i(i) {}
  const int64_t i;
  /// Made by a scalar type (ScalarType); none for a Python int.
  ScalarType scalar;
};
struct FloatV final : Value {
  static constexpr Kind kKind = Kind::Float;
  explicit FloatV(double f) : Value(kKind), f(f) {}
  const double f;
  ScalarType scalar; ///< as IntV's
};
struct StrV final : Value {
  static constexpr Kind kKind = Kind::Str;
  explicit StrV(std::string s) : Value(kKind), s(std::move(s)) {}
  const std::string s;
};

//===----------------------------------------------------------------------===//
// Containers
//===----------------------------------------------------------------------===//

struct ClassV;
struct TupleV final : Value {
  static constexpr Kind kKind = Kind::Tuple;
  explicit TupleV(std::vector<V> items) : Value(kKind), items(std::move(items)) {}
  const std::vector<V> items;
  /// An instance of a typing.NamedTuple class (a tuple subclass with named fields, its
  /// `namedTupleFields`); null for a plain tuple.
  std::shared_ptr<ClassV> cls;
};
struct ListV final : Value {
  static constexpr Kind kKind = Kind::List;
  explicit ListV(std::vector<V> items = {}) : Value(kKind), items(std::move(items)) {}
  std::vector<V> items;
};

/// The hash of a hashable value (equal values hash equal: 1, 1.0 and True), or nullopt
/// for an unhashable one (lists, dicts, sets, ...). Computed by the interpreter
/// (Interp::hashOf), which knows user classes.
using Hash = uint64_t;

/// An insertion-ordered hash table of (key, value): CPython's dict (and, without
/// values, set). Keys are compared with the interpreter's equality, so lookups go
/// through Interp (dictFind, ...); this struct only stores.
struct Table {
  struct Entry {
    V key;
    V value;
    Hash hash = 0;
    bool live = true;
  };
  std::vector<Entry> entries;
  std::unordered_multimap<Hash, size_t> index;
  size_t size = 0;
  /// Bumped by every insertion or removal: iteration over a dict that changes size is
  /// CPython's RuntimeError.
  uint64_t version = 0;
};

struct DictV final : Value {
  static constexpr Kind kKind = Kind::Dict;
  DictV() : Value(kKind) {}
  Table table;
};
struct SetV final : Value {
  static constexpr Kind kKind = Kind::Set;
  explicit SetV(bool frozen) : Value(kKind), frozen(frozen) {}
  const bool frozen;
  Table table;
};

struct SliceV final : Value {
  static constexpr Kind kKind = Kind::Slice;
  SliceV(V lower, V upper, V step)
      : Value(kKind), lower(std::move(lower)), upper(std::move(upper)), step(std::move(step)) {}
  const V lower, upper, step; ///< NoneV when absent
};

/// `range(start, stop, step)`, never materialized.
struct RangeV final : Value {
  static constexpr Kind kKind = Kind::Range;
  RangeV(int64_t start, int64_t stop, int64_t step)
      : Value(kKind), start(start), stop(stop), step(step) {}
  const int64_t start, stop, step;
  int64_t length() const;
  int64_t at(int64_t i) const { return start + i * step; }
};

class Interp;
/// The state of one iterator (a list's, a generator expression's, zip's, ...).
struct IterState {
  virtual ~IterState() = default;
  /// The next item, or null at the end. May throw the interpreter's errors.
  virtual V next(Interp &interp, support::SourceRange r) = 0;
};
struct IteratorV final : Value {
  static constexpr Kind kKind = Kind::Iterator;
  IteratorV(std::string typeName, std::unique_ptr<IterState> state)
      : Value(kKind), typeName(std::move(typeName)), state(std::move(state)) {}
  const std::string typeName; ///< CPython's: "list_iterator", "generator", "zip", ...
  std::unique_ptr<IterState> state;
  bool done = false;
};

//===----------------------------------------------------------------------===//
// Functions, classes, instances, modules
//===----------------------------------------------------------------------===//

/// A variable that closures share (CPython's cell); value null: unbound.
struct Cell {
  V value;
};
using CellP = std::shared_ptr<Cell>;

/// A namespace in definition order: a module's globals, a class's attributes, an
/// instance's, a function's `__dict__`.
struct Namespace {
  std::vector<std::pair<std::string, V>> items;
  std::unordered_map<std::string, size_t> index;
  V get(const std::string &name) const;
  void set(const std::string &name, V value);
  bool erase(const std::string &name);
  bool has(const std::string &name) const { return index.count(name) != 0; }
};
using NamespaceP = std::shared_ptr<Namespace>;

struct ModuleV;
struct ClassV;
struct ScopeInfo;

/// A `def` or `lambda` (or a comprehension's implicit function).
struct FunctionV final : Value {
  static constexpr Kind kKind = Kind::Function;
  FunctionV() : Value(kKind) {}
  std::string name;
  std::string qualname;
  support::SourceRange range; ///< from `def` to the end of its last statement
  const std::vector<py::Param> *params = nullptr;
  const py::Body *body = nullptr;   ///< def
  const py::Expr *lambda = nullptr; ///< lambda body
  const ScopeInfo *scope = nullptr;
  std::shared_ptr<ModuleV> globals;
  std::map<std::string, CellP> closure; ///< the free variables, by name
  std::vector<V> defaults;              ///< one per param (null: none)
  /// The class whose body defined it (zero-argument super()), or null.
  std::weak_ptr<ClassV> definingClass;
  NamespaceP attrs = std::make_shared<Namespace>(); ///< `f.attr = x`
};

/// A callable bound to its first argument (`obj.method`).
struct BoundMethodV final : Value {
  static constexpr Kind kKind = Kind::BoundMethod;
  BoundMethodV(V self, V fn) : Value(kKind), self(std::move(self)), fn(std::move(fn)) {}
  const V self;
  const V fn;
};

/// Positional and keyword arguments of a call, in order.
struct Args {
  std::vector<V> pos;
  std::vector<std::pair<std::string, V>> kw;
};

struct BuiltinFn;
/// A function implemented by the tracer: a builtin, a method of a built-in type, a row of
/// the Pallas / JAX API registry. `self` is the bound object of a method (or null).
struct BuiltinV final : Value {
  static constexpr Kind kKind = Kind::Builtin;
  BuiltinV(const BuiltinFn *fn, V self) : Value(kKind), fn(fn), self(std::move(self)) {}
  const BuiltinFn *const fn;
  const V self;
};

struct PartialV final : Value {
  static constexpr Kind kKind = Kind::Partial;
  PartialV() : Value(kKind) {}
  V fn;
  std::vector<V> pos;
  std::vector<std::pair<std::string, V>> kw;
};

/// What a class is beyond its Python attributes: a built-in type (for isinstance and
/// construction) or a stand-in the tracer implements.
enum class ClassRole : uint8_t {
  User,
  Object,
  Type,
  NoneType,
  Int,
  Bool,
  Float,
  Str,
  Tuple,
  List,
  Dict,
  Set,
  FrozenSet,
  Slice,
  Range,
  Function,
  BaseException, ///< BaseException and every built-in exception class
  TestCase,      ///< unittest.TestCase's stand-in (docs/python.md "Test files")
  Enum,          ///< enum.Enum and its kin
};

struct ClassV final : Value {
  static constexpr Kind kKind = Kind::Class;
  ClassV() : Value(kKind) {}
  std::string name;
  std::string module;
  ClassRole role = ClassRole::User;
  std::vector<std::shared_ptr<ClassV>> bases;
  std::vector<std::shared_ptr<ClassV>> mro; ///< C3 linearization, starting with this class
  NamespaceP dict = std::make_shared<Namespace>();
  /// A base is an opaque value (a class of a module dkv does not model): attributes
  /// that the MRO does not define are opaque instead of an AttributeError.
  V opaqueBase;
  /// A dataclass: its fields in order (dataclasses.dataclass), their defaults and
  /// default factories, and the fields `__init__` does not take (`field(init=False)`).
  std::optional<std::vector<std::string>> dataclassFields;
  std::map<std::string, V> fieldDefault, fieldFactory;
  std::vector<std::string> noInit;
  bool frozen = false;
  /// A typing.NamedTuple class: its fields in order (their defaults in fieldDefault); its
  /// instances are tuples (TupleV::cls).
  std::optional<std::vector<std::string>> namedTupleFields;
  support::SourceRange range;
};
using ClassP = std::shared_ptr<ClassV>;

struct InstanceV final : Value {
  static constexpr Kind kKind = Kind::Instance;
  explicit InstanceV(ClassP cls) : Value(kKind), cls(std::move(cls)) {}
  const ClassP cls;
  NamespaceP attrs = std::make_shared<Namespace>();
};

/// A module: one loaded from disk, or a model of a standard or JAX module whose
/// attributes come from the registry (`modelled`, with its canonical dotted name).
struct ModuleV final : Value {
  static constexpr Kind kKind = Kind::Module;
  explicit ModuleV(std::string name) : Value(kKind), name(std::move(name)) {}
  const std::string name;
  NamespaceP dict = std::make_shared<Namespace>();
  bool modelled = false;
  /// Executing its top level (an import cycle sees the partial module, as in CPython).
  bool initializing = false;
  std::string file; ///< its path, for a module read from disk
};
using ModuleP = std::shared_ptr<ModuleV>;

struct WrapperV final : Value {
  static constexpr Kind kKind = Kind::Wrapper;
  /// LruCache: `functools.lru_cache` / `functools.cache` of `fn` (Stdlib.cpp).
  enum class W : uint8_t { Property, StaticMethod, ClassMethod, LruCache };
  WrapperV(W w, V fn) : Value(kKind), w(w), fn(std::move(fn)) {}
  const W w;
  const V fn; ///< the getter of a property
  V setter;   ///< property.setter
  /// LruCache: the results by call (a DictV, oldest use first), the bound (none:
  /// unbounded), whether the arguments' types are part of the key.
  V cache;
  std::optional<int64_t> maxsize;
  bool typed = false;
};

//===----------------------------------------------------------------------===//
// Opaque values (docs/python.md "Opaque values")
//===----------------------------------------------------------------------===//

/// Where an opaque value came from: what made it, where, and the value it was made from
/// (the chain an error names).
struct Origin {
  std::string what; ///< "the call `jtu.device_under_test()`", "module `absl.flags`", ...
  support::SourceRange range;
  std::shared_ptr<const Origin> from;
  /// The module global that held it, if the chain passed through one: the NAME of the
  /// `# dkv: set NAME=VALUE` that gives it.
  std::string global;
  /// The dotted name of the module attribute it is (`jax._src.test_util.is_device_tpu`), or
  /// of the call of one (with `()`): what `--set NAME=VALUE` would give.
  std::string settable;
  /// How to give the value when it is no module attribute (`--tpu NAME` for a fact of
  /// the TPU chip): the hint of the error where it decides something.
  std::string hint;
  /// The attribute of an opaque value it is (`def_abstract_eval` of `p.def_abstract_eval`),
  /// or empty.
  std::string attr;
  /// What is known of it, when it is a str: it starts with this (a device's `device_kind`
  /// without the chip starts with "TPU"), so `"TPU" in it` is true. Not passed on.
  std::string strPrefix;
};
using OriginP = std::shared_ptr<const Origin>;

struct OpaqueV final : Value {
  static constexpr Kind kKind = Kind::Opaque;
  explicit OpaqueV(OriginP origin) : Value(kKind), origin(std::move(origin)) {}
  const OriginP origin;
};

//===----------------------------------------------------------------------===//
// Kernel values
//===----------------------------------------------------------------------===//

/// A per-device value: an integer or condition (lax.axis_index, pl.program_id, a table
/// element, ... and arithmetic on them), or an array loaded from refs.
enum class TKind : uint8_t { Int, Bool, Value };
/// Where a loaded value's refs were read: the counts of kernel operations that may write
/// a ref at its earliest and latest load (UINT64_MAX and 0: no load), and the innermost
/// block of the kernel being traced that a load was in (its depth and serial number).
struct LoadSpan {
  uint64_t lo = UINT64_MAX, hi = 0;
  size_t depth = 0;
  uint64_t block = 0;
  bool any() const { return lo != UINT64_MAX; }
  /// The span of a value computed from values of spans `a` and `b`.
  static LoadSpan merge(const LoadSpan &a, const LoadSpan &b) {
    if (!a.any())
      return b;
    if (!b.any())
      return a;
    LoadSpan out{std::min(a.lo, b.lo), std::max(a.hi, b.hi), a.depth, a.block};
    if (b.depth > a.depth)
      out.depth = b.depth, out.block = b.block;
    else if (b.depth == a.depth && b.block != a.block)
      out.block = UINT64_MAX; // loads in two sibling blocks: no one place has both
    return out;
  }
};

struct TracedV final : Value {
  static constexpr Kind kKind = Kind::Traced;
  TracedV(TE te, TKind tk, uint64_t stamp = 0, LoadSpan span = {})
      : Value(kKind), te(std::move(te)), tk(tk), stamp(stamp), span(span) {}
  const TE te;
  const TKind tk;
  /// A loaded value: the count of kernel operations when its refs were read (a load
  /// may only be stored before any other operation runs, or through a snapshot).
  const uint64_t stamp;
  const LoadSpan span;
};

/// A ref (kind Ref) or a semaphore (kind Sem): its declaration's name and extents and
/// the subscripts applied so far.
struct RefV final : Value {
  static constexpr Kind kKind = Kind::Ref;
  RefV(Kind k) : Value(k) {}
  std::string name;
  std::vector<int64_t> dims;
  std::vector<TSub> subs;
  ast::DType dtype = ast::DType::F32;
  ast::SemKind semKind = ast::SemKind::Dma;
  /// A table: an SMEM integer input or a scalar-prefetch operand, read per element.
  bool table = false;
  /// `pl.select_ref(idx, *refs)` with a per-device index: the index and the refs it
  /// picks from (the fields above are the first one's); only a DMA operand.
  TE selectIndex;
  std::vector<V> choices;
};
inline RefV *dynRef(const V &v) {
  return v && (v->kind == Kind::Ref || v->kind == Kind::Sem) ? static_cast<RefV *>(v.get())
                                                             : nullptr;
}

struct DescV final : Value {
  static constexpr Kind kKind = Kind::Desc;
  DescV(bool remote, std::string let) : Value(kKind), remote(remote), let(std::move(let)) {}
  const bool remote;
  const std::string let; ///< the kernel-language let the descriptor is bound to
};

/// An array outside the kernel: its shape and element type (a jax.Array, numpy array or
/// jax.ShapeDtypeStruct), and its integer contents when the file states them (tables).
struct HostArrayV final : Value {
  static constexpr Kind kKind = Kind::HostArray;
  HostArrayV(std::vector<int64_t> shape, ast::DType dtype, bool isStruct = false)
      : Value(kKind), shape(std::move(shape)), dtype(dtype), isStruct(isStruct) {}
  const std::vector<int64_t> shape;
  const ast::DType dtype;
  const bool isStruct; ///< a jax.ShapeDtypeStruct (no data)
  /// A jax.ShapeDtypeStruct made with sharding, weak_type, vma or manual_axis_type, which
  /// dkv does not keep (its equality with another struct is then unknown).
  bool structExtras = false;
  bool numpy = false; ///< a numpy array (np.array, np.zeros, ...), not a jax.Array
  /// A NumPy array of float64 or int64 (NumPy's types for Python floats and ints:
  /// `np.zeros(shape)`, `np.array([1, 2])`, `np.arange(4)`); `dtype` is then F32 or I32,
  /// the type JAX gives it where it enters JAX (`jnp.asarray`, a jitted or pallas_call
  /// operand: JAX without x64 converts 64-bit arrays to 32 bits). NumPy's views of it
  /// (`.dtype`, `np.issubdtype`) are 64-bit. A flag of the host array, not a member of
  /// ast::DType, because no 64-bit value ever reaches a kernel: the kernel language and
  /// every engine know only the types JAX lets in, and a jax.Array is never 64-bit here.
  bool x64 = false;
  /// A typed PRNG key array (`jax.random.key`, `split` of one): elements of JAX's key
  /// type (`key<fry>`), kept as the shape only (`dtype` is not theirs).
  bool key = false;
  /// Row-major contents (integer arrays only).
  std::optional<std::vector<int64_t>> contents;
  /// After shard_map divided a table by rows: each device's contents.
  std::optional<std::vector<std::vector<int64_t>>> deviceContents;
  /// The PartitionSpec of its sharding where the file states it (`out_sharding=` under
  /// jax.set_mesh, `jax.device_put(x, NamedSharding(mesh, spec))`): what a shard_map
  /// without in_specs takes as its in_spec. Null: unknown.
  V sharding;
  int64_t size() const;
  /// NumPy's name of its element type (`float32`, `float64` for an x64 float array).
  std::string dtypeName() const;
};

} // namespace dkv::pytrace
