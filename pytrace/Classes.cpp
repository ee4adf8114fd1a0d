// Classes, instances and exceptions: the built-in type objects (for isinstance and
// construction), user classes with CPython's MRO (C3), attribute lookup with
// descriptors (methods, property, staticmethod, classmethod), dataclasses and enums,
// and the exception hierarchy that `try`/`except` catches by.
#include "pytrace/Interp.h"
#include "pytrace/Text.h"

#include <fmt/format.h>

#include <algorithm>

namespace dkv::pytrace {

V Namespace::get(const std::string &name) const {
  auto it = index.find(name);
  return it == index.end() ? nullptr : items[it->second].second;
}
void Namespace::set(const std::string &name, V value) {
  auto it = index.find(name);
  if (it != index.end()) {
    items[it->second].second = std::move(value);
    return;
  }
  index[name] = items.size();
  items.emplace_back(name, std::move(value));
}
bool Namespace::erase(const std::string &name) {
  auto it = index.find(name);
  if (it == index.end())
    return false;
  items.erase(items.begin() + static_cast<long>(it->second));
  index.clear();
  for (size_t i = 0; i < items.size(); ++i)
    index[items[i].first] = i;
  return true;
}

ClassP Interp::makeClass(std::string name, std::vector<ClassP> bases, ClassRole role,
                         std::string module) {
  auto c = track(std::make_shared<ClassV>());
  c->name = std::move(name);
  c->module = std::move(module);
  c->role = role;
  c->bases = std::move(bases);
  c->mro.push_back(c);
  for (const ClassP &b : c->bases)
    for (const ClassP &m : b->mro)
      if (std::find(c->mro.begin(), c->mro.end(), m) == c->mro.end())
        c->mro.push_back(m);
  return c;
}

void Interp::initClasses() {
  ClassP object = makeClass("object", {}, ClassRole::Object);
  roleClasses_[ClassRole::Object] = object;
  auto add = [&](const char *name, ClassRole role, ClassP base) {
    ClassP c = makeClass(name, {base}, role);
    roleClasses_[role] = c;
    builtinClasses_[name] = c;
    return c;
  };
  builtinClasses_["object"] = object;
  add("type", ClassRole::Type, object);
  add("NoneType", ClassRole::NoneType, object);
  ClassP intC = add("int", ClassRole::Int, object);
  add("bool", ClassRole::Bool, intC);
  add("float", ClassRole::Float, object);
  add("str", ClassRole::Str, object);
  add("tuple", ClassRole::Tuple, object);
  add("list", ClassRole::List, object);
  add("dict", ClassRole::Dict, object);
  add("set", ClassRole::Set, object);
  add("frozenset", ClassRole::FrozenSet, object);
  add("slice", ClassRole::Slice, object);
  add("range", ClassRole::Range, object);
  add("function", ClassRole::Function, object);
  ClassP base = add("BaseException", ClassRole::BaseException, object);
  auto exc = [&](const char *name, const ClassP &parent) {
    ClassP c = makeClass(name, {parent}, ClassRole::BaseException);
    builtinClasses_[name] = c;
    return c;
  };
  ClassP exception = exc("Exception", base);
  exc("SystemExit", base);
  exc("KeyboardInterrupt", base);
  exc("GeneratorExit", base);
  ClassP arith = exc("ArithmeticError", exception);
  exc("ZeroDivisionError", arith);
  exc("OverflowError", arith);
  exc("FloatingPointError", arith);
  exc("AssertionError", exception);
  ClassP attr = exc("AttributeError", exception);
  ClassP lookup = exc("LookupError", exception);
  exc("IndexError", lookup);
  exc("KeyError", lookup);
  ClassP name = exc("NameError", exception);
  exc("UnboundLocalError", name);
  ClassP runtime = exc("RuntimeError", exception);
  exc("NotImplementedError", runtime);
  exc("RecursionError", runtime);
  exc("TypeError", exception);
  ClassP value = exc("ValueError", exception);
  exc("UnicodeError", value);
  ClassP import = exc("ImportError", exception);
  exc("ModuleNotFoundError", import);
  exc("StopIteration", exception);
  ClassP os = exc("OSError", exception);
  ClassP syntax = exc("SyntaxError", exception);
  ClassP warning = exc("Warning", exception);
  exc("UserWarning", warning);
  exc("DeprecationWarning", warning);
  exc("RuntimeWarning", warning);
  exc("FutureWarning", warning);
  // The rest of CPython's built-in exceptions (its hierarchy, Objects/exceptions.c), so
  // that a file naming one (in an `except` clause, say) finds it.
  ClassP group = exc("BaseExceptionGroup", base);
  builtinClasses_["ExceptionGroup"] =
      makeClass("ExceptionGroup", {group, exception}, ClassRole::BaseException);
  for (const char *name : {"BufferError", "EOFError", "MemoryError", "ReferenceError",
                           "StopAsyncIteration", "SystemError"})
    exc(name, exception);
  for (const char *name :
       {"BlockingIOError", "ChildProcessError", "FileExistsError", "FileNotFoundError",
        "InterruptedError", "IsADirectoryError", "NotADirectoryError", "PermissionError",
        "ProcessLookupError", "TimeoutError"})
    exc(name, os);
  ClassP connection = exc("ConnectionError", os);
  for (const char *name : {"BrokenPipeError", "ConnectionAbortedError", "ConnectionRefusedError",
                           "ConnectionResetError"})
    exc(name, connection);
  builtinClasses_["IOError"] = os; // aliases of OSError, one class
  builtinClasses_["EnvironmentError"] = os;
  exc("TabError", exc("IndentationError", syntax));
  for (const char *name : {"UnicodeDecodeError", "UnicodeEncodeError", "UnicodeTranslateError"})
    exc(name, builtinClasses_["UnicodeError"]);
  for (const char *name :
       {"BytesWarning", "EncodingWarning", "ImportWarning", "PendingDeprecationWarning",
        "ResourceWarning", "SyntaxWarning", "UnicodeWarning"})
    exc(name, warning);
  // unittest.SkipTest and dataclasses.FrozenInstanceError (their modules bind them).
  ClassP skip = exc("SkipTest", exception);
  skip->module = "unittest";
  ClassP frozen = exc("FrozenInstanceError", attr);
  frozen->module = "dataclasses";
  // absl's parameterized.NoTestsError and hypothesis.errors.InvalidArgument.
  exc("NoTestsError", exception)->module = "absl.testing.parameterized";
  exc("InvalidArgument", exception)->module = "hypothesis.errors";
  exc("Unsatisfiable", exception)->module = "hypothesis.errors";
  // JAX's and NumPy's classes (jax/_src/basearray.py, jaxlib's ArrayImpl, a subclass of
  // jax.Array; jax/_src/partition_spec.py `class P` with __module__ 'jax', no tuple).
  arrayClass_ = makeClass("Array", {object}, ClassRole::User, "jax");
  ndarrayClass_ = makeClass("ndarray", {object}, ClassRole::User, "numpy");
  arrayImplClass_ = makeClass("ArrayImpl", {arrayClass_}, ClassRole::User, "jaxlib._jax");
  scalarMetaClass_ = makeClass("_ScalarMeta", {builtinClass(ClassRole::Type)}, ClassRole::User,
                               "jax._src.numpy.scalar_types");
  pspecClass_ = makeClass("P", {object}, ClassRole::User, "jax");
  structClass_ = makeClass("ShapeDtypeStruct", {object}, ClassRole::User, "jax._src.core");
  keyArrayClass_ = makeClass("PRNGKeyArray", {arrayClass_}, ClassRole::User, "jax._src.prng");
  unionClass_ = makeClass("UnionType", {object}, ClassRole::User, "types");
  // A tracer with an array's aval is an instance of jax.Array (jaxlib's __instancecheck__).
  tracerClass_ = makeClass("Tracer", {arrayClass_}, ClassRole::User, "jax._src.core");
}

bool Interp::hiddenClass(const ClassP &c) const {
  return c == pspecClass_ || c == structClass_ || c == keyArrayClass_ || c == tracerClass_;
}

ClassP Interp::builtinClass(ClassRole role) const { return roleClasses_.at(role); }

ClassP Interp::exceptionClass(const std::string &name) const { return builtinClasses_.at(name); }

ClassP Interp::typeOf(const V &v) const {
  switch (v->kind) {
  case Kind::None:
    return builtinClass(ClassRole::NoneType);
  case Kind::Bool:
    return builtinClass(ClassRole::Bool);
  case Kind::Int:
    return builtinClass(ClassRole::Int);
  case Kind::Float:
    return builtinClass(ClassRole::Float);
  case Kind::Str:
    return builtinClass(ClassRole::Str);
  case Kind::Tuple:
    if (const ClassP &cls = cast<TupleV>(v).cls)
      return cls;
    return builtinClass(ClassRole::Tuple);
  case Kind::List:
    return builtinClass(ClassRole::List);
  case Kind::Dict:
    return builtinClass(ClassRole::Dict);
  case Kind::Set:
    return builtinClass(cast<SetV>(v).frozen ? ClassRole::FrozenSet : ClassRole::Set);
  case Kind::Slice:
    return builtinClass(ClassRole::Slice);
  case Kind::Range:
    return builtinClass(ClassRole::Range);
  case Kind::Function:
    return builtinClass(ClassRole::Function);
  case Kind::Class:
    return builtinClass(ClassRole::Type);
  case Kind::Instance:
    return cast<InstanceV>(v).cls;
  case Kind::HostArray: {
    const auto &h = cast<HostArrayV>(v);
    return h.isStruct ? structClass_
           : h.numpy  ? ndarrayClass_
           : h.key    ? keyArrayClass_
                      : arrayImplClass_;
  }
  case Kind::Traced:
    return tracerClass_;
  case Kind::Api:
    if (apiAs<PSpecObj>(v))
      return pspecClass_;
    if (apiAs<DeviceArrayObj>(v))
      return ndarrayClass_;
    if (apiAs<HeldSemObj>(v))
      return arrayImplClass_;
    if (apiAs<DTypeKindObj>(v))
      return builtinClass(ClassRole::Type);
    if (auto *d = apiAs<DTypeObj>(v))
      return d->form == DTypeForm::NumpyType ? builtinClass(ClassRole::Type)
             : d->form == DTypeForm::JnpType ? scalarMetaClass_
                                             : nullptr;
    return nullptr;
  default:
    return nullptr;
  }
}

bool Interp::isSubclass(const ClassP &c, const ClassP &base) const {
  if (!c || !base)
    return false;
  return std::find(c->mro.begin(), c->mro.end(), base) != c->mro.end();
}

namespace {

enum class Tri { No, Yes, Unknown };
Tri tri(bool b) { return b ? Tri::Yes : Tri::No; }

// Whether `v` may be an instance of a class dkv does not model (an opaque one): objects
// of the API, arrays, tracers and refs are of JAX's classes (an opaque class may be one
// of them or a base), and so are instances of a class with an opaque base. Values of
// Python's built-in types are not (docs/python.md "isinstance and type").
bool ofUnmodelledClass(const V &v) {
  switch (v->kind) {
  case Kind::Api:
  case Kind::HostArray:
  case Kind::Traced:
  case Kind::Ref:
  case Kind::Sem:
  case Kind::Desc:
    return true;
  case Kind::Instance:
    for (const ClassP &k : cast<InstanceV>(v).cls->mro)
      if (k->opaqueBase)
        return true;
    return false;
  case Kind::Int:
  case Kind::Float:
  case Kind::Bool:
    return scalarOfType(v); // np.int32(3), np.int32(1) < 2: of NumPy's class
  default:
    return false;
  }
}

// isinstance(v, T) for T one of NumPy's scalar types (np.integer, np.int32, jnp.int32:
// JAX's __instancecheck__ is NumPy's type's). No value dkv computes is a NumPy scalar
// but its ints, floats and bools, which may be one (np.int32(3), an element of a NumPy
// array): unknown. A NumPy array of shape () may be a scalar too (`a[0]`).
Tri numpyScalarIs(const V &v) {
  switch (v->kind) {
  case Kind::Int:
  case Kind::Float:
  case Kind::Bool:
    return Tri::Unknown;
  case Kind::HostArray: {
    const auto &h = cast<HostArrayV>(v);
    return h.numpy && h.shape.empty() ? Tri::Unknown : Tri::No;
  }
  default:
    return Tri::No;
  }
}

// The registry's callables that are classes in JAX / NumPy, and which of dkv's values
// are their instances (isinstance(x, P), isinstance(x, jax.ShapeDtypeStruct), ...).
struct ApiClassRow {
  const char *row; ///< the registry row's canonical name
  Tri (*test)(const V &v);
};
const ApiClassRow kApiClasses[] = {
    {"jax.sharding.PartitionSpec", [](const V &v) { return tri(apiAs<PSpecObj>(v)); }},
    {"jax.sharding.NamedSharding", [](const V &v) { return tri(apiAs<NamedShardingObj>(v)); }},
    {"jax.sharding.Mesh", [](const V &v) { return tri(apiAs<MeshObj>(v)); }},
    {"jax.ShapeDtypeStruct",
     [](const V &v) {
       auto *h = dynCast<HostArrayV>(v);
       return tri(h && h->isStruct);
     }},
    {"jax.experimental.pallas.BlockSpec", [](const V &v) { return tri(apiAs<BlockSpecObj>(v)); }},
    // pltpu.PrefetchScalarGridSpec (a subclass of pl.GridSpec) and pl.GridSpec are one
    // row, and dkv's grid specs do not keep which class made them: unknown.
    {"jax.experimental.pallas.GridSpec",
     [](const V &v) { return apiAs<GridSpecObj>(v) ? Tri::Unknown : Tri::No; }},
    {"jax.experimental.pallas.tpu.CompilerParams",
     [](const V &v) { return tri(apiAs<CompilerParamsObj>(v)); }},
    // np.dtype (jnp.dtype is NumPy's): dtype instances, not the scalar types.
    {"jax.numpy.dtype",
     [](const V &v) {
       auto *d = apiAs<DTypeObj>(v);
       if (!d)
         return Tri::No;
       return d->form == DTypeForm::Unknown ? Tri::Unknown : tri(d->form == DTypeForm::Dtype);
     }},
};

const ApiClassRow *apiClassRow(const BuiltinV &b) {
  for (const ApiClassRow &row : kApiClasses)
    if (const ApiRow *api = Registry::get().find(row.row); api && b.fn == &api->fn)
      return &row;
  return nullptr;
}

// A function of the registry (JAX's, NumPy's, the standard library's), not a builtin of
// Python's: in Python it may be a class.
bool apiCallable(const BuiltinV &b) {
  if (b.self)
    return false;
  for (const ApiRow &row : Registry::get().rows())
    if (b.fn == &row.fn)
      return true;
  return false;
}

} // namespace

bool Interp::isInstance(const V &v, const V &cls, SourceRange r) {
  if (auto *u = dynCast<InstanceV>(cls); u && u->cls == unionClass_)
    return isInstance(v, u->attrs->get("__args__"), r);
  if (auto *t = dynCast<TupleV>(cls)) {
    // CPython checks the classes in order and stops at the first match: a later class
    // that certainly matches decides where an earlier one is unknown to dkv (refused
    // otherwise, and where a later one raises: CPython may have stopped before it).
    std::optional<TraceError> unknown;
    for (const V &c : t->items) {
      try {
        if (isInstance(v, c, r))
          return true;
      } catch (TraceError &e) {
        if (!unknown)
          unknown = std::move(e);
      } catch (PyRaise &) {
        if (unknown)
          throw *unknown;
        throw;
      }
    }
    if (unknown)
      throw *unknown;
    return false;
  }
  auto decide = [&](Tri t, const std::string &with, const std::string &why) {
    if (t == Tri::Unknown)
      unsupported(r, fmt::format("isinstance() of a value of type {} with {}: {}", typeName(*v),
                                 with, why));
    return t == Tri::Yes;
  };
  if (cls->kind == Kind::Opaque) {
    // isinstance(x, SomeUnknownClass): false for a value of Python's built-in types (not
    // of a class dkv does not model), unknown for an opaque one or one of JAX's classes.
    if (v->kind == Kind::Opaque)
      opaqueNeeded(cls, r, "isinstance() with it");
    if (ofUnmodelledClass(v))
      opaqueNeeded(cls, r, fmt::format("isinstance() of a value of type {} with it", typeName(*v)));
    return false;
  }
  // NumPy's scalar types and JAX's (jnp.int32 is a class whose instances are np.int32's).
  bool scalarType = apiAs<DTypeKindObj>(cls) != nullptr;
  if (auto *d = apiAs<DTypeObj>(cls)) {
    if (d->form == DTypeForm::Dtype)
      raise("TypeError", "isinstance() arg 2 must be a type, a tuple of types, or a union", r);
    if (d->form == DTypeForm::Unknown)
      unsupported(r, "isinstance() with a dtype or scalar type that dkv does not tell apart");
    scalarType = true;
  }
  if (scalarType) {
    if (v->kind == Kind::Opaque)
      opaqueNeeded(v, r, "isinstance() of it with a NumPy scalar type");
    return decide(numpyScalarIs(v), "a NumPy scalar type",
                  "dkv does not tell NumPy's scalars (np.int32(3), an element of a NumPy array) "
                  "from Python's numbers or 0-d arrays");
  }
  if (auto *b = dynCast<BuiltinV>(cls)) {
    const ApiClassRow *row = b->self ? nullptr : apiClassRow(*b);
    if (!row)
      unsupported(r, fmt::format("isinstance() with `{}` (a class in Python that dkv models as a "
                                 "function, or no class)",
                                 b->fn->name));
    if (v->kind == Kind::Opaque)
      opaqueNeeded(v, r, fmt::format("isinstance() of it with {}", b->fn->name));
    return decide(row->test(v), fmt::format("`{}`", b->fn->name),
                  "dkv does not keep which of its classes made it");
  }
  if (cls->kind == Kind::Api || (cls->kind == Kind::Module && cast<ModuleV>(cls).modelled))
    unsupported(r, fmt::format("isinstance() with a {} object of the API (a class in Python "
                               "that dkv does not model as one, or no class)",
                               typeName(*cls)));
  auto *c = dynCast<ClassV>(cls);
  if (!c)
    raise("TypeError", "isinstance() arg 2 must be a type, a tuple of types, or a union", r);
  if (v->kind == Kind::Opaque) {
    if (c->role == ClassRole::Object)
      return true;
    opaqueNeeded(v, r, fmt::format("isinstance() of it with {}", c->name));
  }
  // A class with an opaque base: an object of JAX's classes may be its instance (unknown).
  bool opaqueBase = false;
  for (const ClassP &k : c->mro)
    opaqueBase = opaqueBase || k->opaqueBase;
  if (opaqueBase && ofUnmodelledClass(v) && v->kind != Kind::Instance)
    unsupported(
        r,
        fmt::format("isinstance() of a value of type {} with {}, a class with a base dkv does not "
                    "model",
                    typeName(*v), c->name));
  // `np.int32(3)`, `jnp.float32(2)`: kept as a number, of NumPy's or JAX's class. Of
  // Python's number classes only np.float64 is an instance (of float); np.int64 is no
  // int, np.bool_ no bool, a JAX array none (asked under NumPy 1's and NumPy 2's types).
  if (const ScalarType *st = scalarTypeOf(v);
      st &&
      (c->role == ClassRole::Int || c->role == ClassRole::Bool || c->role == ClassRole::Float)) {
    auto floatIn = [&](const ScalarType::T &t) {
      return st->from == ScalarType::From::NumPy && v->kind == Kind::Float && t.x64;
    };
    if (floatIn(st->v1) == floatIn(st->v2))
      return c->role == ClassRole::Float && floatIn(st->v1);
  }
  if (scalarOfType(v) && c->role != ClassRole::Object)
    unsupported(r, fmt::format("isinstance() of a value a scalar type made (a NumPy scalar or a "
                               "JAX array, kept as a number) with {}",
                               c->name));
  // A NumPy value of shape (): an array or a NumPy scalar (np.float64 is a float).
  if (auto *h = dynCast<HostArrayV>(v);
      h && h->numpy && h->shape.empty() && c->role != ClassRole::Object)
    unsupported(r, fmt::format("isinstance() of a NumPy value of shape () with {}: dkv does not "
                               "tell a 0-d array from a NumPy scalar",
                               c->name));
  ClassP t = typeOf(v);
  if (!t) {
    // Objects of the API: `object`, and enum.Enum for the members of JAX's enums
    // (MemorySpace, SemaphoreType, DeviceIdType, CoreType, AxisType: enum.Enum subclasses).
    if (c->role == ClassRole::Object)
      return true;
    auto *a = dynCast<ApiObject>(v);
    bool enumMember = a && (std::holds_alternative<MemSpaceObj>(a->data) ||
                            std::holds_alternative<SemTypeObj>(a->data) ||
                            std::holds_alternative<DeviceIdTypeObj>(a->data) ||
                            std::holds_alternative<CoreTypeObj>(a->data) ||
                            std::holds_alternative<AxisTypeObj>(a->data));
    if (c->role == ClassRole::Enum && c->bases.size() == 1 &&
        c->bases[0]->role == ClassRole::Object && c->module == "enum")
      return enumMember;
    // A callable of the API: a class (type) or a function, known for those of
    // kApiClasses; no instance of Python's other built-in classes.
    if (auto *b = dynCast<BuiltinV>(v);
        b && (c->role == ClassRole::Type || c->role == ClassRole::Function) && apiCallable(*b)) {
      if (apiClassRow(*b))
        return c->role == ClassRole::Type;
      unsupported(r, fmt::format("isinstance() of `{}` with {}: in Python it may be a class or a "
                                 "function, and dkv does not model which",
                                 b->fn->name, c->name));
    }
    if (auto *d = apiAs<DTypeObj>(v); d && d->form == DTypeForm::Unknown)
      unsupported(r, fmt::format("isinstance() of a dtype or scalar type that dkv does not tell "
                                 "apart with {}",
                                 c->name));
    return false;
  }
  return isSubclass(t, std::static_pointer_cast<ClassV>(cls));
}

V Interp::unionOf(const V &a, const V &b, SourceRange r) {
  bool anyClass = false, unknown = false;
  std::vector<V> members;
  auto add = [&](const V &x) {
    if (auto *u = dynCast<InstanceV>(x); u && u->cls == unionClass_) {
      anyClass = true;
      for (const V &m : cast<TupleV>(u->attrs->get("__args__")).items)
        members.push_back(m);
      return true;
    }
    if (x->kind == Kind::None) {
      members.push_back(builtinClass(ClassRole::NoneType));
      return true;
    }
    if (x->kind == Kind::Opaque) { // a class dkv does not model, or no class
      members.push_back(x);
      return true;
    }
    if (x->kind == Kind::Class) {
      anyClass = true;
      members.push_back(x);
      return true;
    }
    // NumPy's and JAX's scalar types and the API's classes (isinstance tests them); a
    // dtype is none (CPython's TypeError); other callables of the API may be (unknown).
    auto *d = apiAs<DTypeObj>(x);
    auto *b = dynCast<BuiltinV>(x);
    if (apiAs<DTypeKindObj>(x) ||
        (d && (d->form == DTypeForm::NumpyType || d->form == DTypeForm::JnpType)) ||
        (b && !b->self && apiClassRow(*b))) {
      anyClass = true;
      members.push_back(x);
      return true;
    }
    if ((d && d->form == DTypeForm::Unknown) || (b && apiCallable(*b))) {
      unknown = true;
      return true;
    }
    return false;
  };
  if (!add(a) || !add(b))
    return nullptr;
  if (unknown)
    unsupported(r, "`|` of a callable of the API: a union (types.UnionType) if it is a class in "
                   "Python, a TypeError if it is a function; dkv does not model which");
  if (!anyClass)
    return nullptr;
  std::vector<V> unique;
  for (const V &m : members)
    if (std::find(unique.begin(), unique.end(), m) == unique.end())
      unique.push_back(m);
  if (unique.size() == 1)
    return unique[0]; // `int | int` is int
  auto u = std::make_shared<InstanceV>(unionClass_);
  u->attrs->set("__args__", tuple(std::move(unique)));
  return u;
}

V Interp::lookupClassAttr(const ClassP &c, const std::string &name) const {
  for (const ClassP &k : c->mro)
    if (V v = k->dict->get(name))
      return v;
  return nullptr;
}

//===----------------------------------------------------------------------===//
// Exceptions
//===----------------------------------------------------------------------===//

V Interp::makeException(const ClassP &cls, Args args) {
  auto e = std::make_shared<InstanceV>(cls);
  exceptionArgs(*e, std::move(args.pos));
  return e;
}

void Interp::exceptionArgs(InstanceV &e, std::vector<V> pos) {
  // BaseException's args, and the attributes CPython's __init__ of these classes sets:
  // SystemExit.code (None, the argument, or the tuple of several), StopIteration.value.
  if (isSubclass(e.cls, exceptionClass("SystemExit")))
    e.attrs->set("code", pos.empty() ? none() : pos.size() == 1 ? pos[0] : tuple(pos));
  if (isSubclass(e.cls, exceptionClass("StopIteration")))
    e.attrs->set("value", pos.empty() ? none() : pos[0]);
  e.attrs->set("args", tuple(std::move(pos)));
}

void Interp::raise(const std::string &cls, const std::string &message, SourceRange r) {
  Args args;
  args.pos.push_back(string(message));
  throw PyRaise{makeException(exceptionClass(cls), std::move(args)), r, "", {}, 0};
}

void Interp::raiseId(const std::string &cls, const std::string &message, SourceRange r) {
  Args args;
  args.pos.push_back(string(message));
  throw PyRaise{makeException(exceptionClass(cls), std::move(args)),
                r,
                cls == "RecursionError" ? "python-too-deep" : "python-call",
                {},
                0};
}

std::string Interp::exceptionText(const V &exc) {
  const auto &inst = cast<InstanceV>(exc);
  std::string text;
  try {
    if (auto s = str(exc, {}))
      text = *s;
    else
      text = "(a message dkv does not compute)";
  } catch (PyRaise &) {
    text = "(a message dkv does not compute)";
  }
  return text.empty() ? inst.cls->name : inst.cls->name + ": " + text;
}

//===----------------------------------------------------------------------===//
// Class statements
//===----------------------------------------------------------------------===//

namespace {

// C3 linearization (CPython's MRO); empty when the bases have no consistent order.
std::vector<ClassP> c3(const ClassP &c) {
  std::vector<std::vector<ClassP>> seqs;
  for (const ClassP &b : c->bases)
    seqs.push_back(b->mro);
  seqs.push_back(c->bases);
  std::vector<ClassP> out{c};
  while (true) {
    seqs.erase(std::remove_if(seqs.begin(), seqs.end(), [](auto &s) { return s.empty(); }),
               seqs.end());
    if (seqs.empty())
      return out;
    ClassP head;
    for (const auto &s : seqs) {
      ClassP cand = s[0];
      bool inTail = false;
      for (const auto &t : seqs)
        inTail = inTail || std::find(t.begin() + 1, t.end(), cand) != t.end();
      if (!inTail) {
        head = cand;
        break;
      }
    }
    if (!head)
      return {};
    out.push_back(head);
    for (auto &s : seqs)
      if (!s.empty() && s[0] == head)
        s.erase(s.begin());
  }
}

} // namespace

V Interp::classDef(const py::ClassDef &cd, Frame &f) {
  if (!cd.typeParams.empty())
    unsupported(cd.range, "type parameters of a class (PEP 695)");
  std::vector<V> decorators;
  for (const py::ExprPtr &d : cd.decorators)
    decorators.push_back(eval(*d, f));
  auto cls = track(std::make_shared<ClassV>());
  cls->name = cd.name;
  cls->range = cd.range;
  V mod = f.globals->dict->get("__name__");
  cls->module = mod && mod->kind == Kind::Str ? cast<StrV>(mod).s : f.globals->name;
  bool namedTuple = false;
  for (const py::ExprPtr &b : cd.bases) {
    if (b->kind == py::ExprKind::Starred)
      unsupported(b->range, "`*` in a class's bases");
    V base = eval(*b, f);
    // `class C(NamedTuple):` makes a subclass of tuple with the annotated names as fields
    // (typing.NamedTuple's __mro_entries__); with any other base CPython refuses it.
    static const ApiRow *const kNamedTuple = Registry::get().find("typing.NamedTuple");
    if (auto *fn = dynCast<BuiltinV>(base); fn && kNamedTuple && fn->fn == &kNamedTuple->fn) {
      if (cd.bases.size() != 1)
        raise("TypeError", "can only inherit from a NamedTuple type and Generic", b->range);
      namedTuple = true;
      cls->bases.push_back(builtinClass(ClassRole::Tuple));
      continue;
    }
    if (auto *bc = dynCast<ClassV>(base)) {
      switch (bc->role) {
      case ClassRole::User:
      case ClassRole::Object:
      case ClassRole::BaseException:
      case ClassRole::TestCase:
      case ClassRole::Enum:
        break;
      default:
        if (bc->namedTupleFields)
          unsupported(b->range,
                      fmt::format("a class deriving from the NamedTuple class `{}`", bc->name));
        unsupported(b->range,
                    fmt::format("a class deriving from the built-in type `{}`", bc->name));
      }
      cls->bases.push_back(std::static_pointer_cast<ClassV>(base));
      if (bc->opaqueBase)
        cls->opaqueBase = bc->opaqueBase;
      continue;
    }
    if (base->kind == Kind::Opaque) {
      cls->opaqueBase = base; // a class of a module dkv does not model
      continue;
    }
    // A base dkv models as a function, and which may be a class (or have
    // `__mro_entries__`, as typing.NamedTuple has) in CPython: not modelled, never a
    // TypeError CPython would not raise.
    if (auto *fn = dynCast<BuiltinV>(base))
      unsupported(b->range,
                  fmt::format("a class deriving from {}: dkv does not model `{}` as a base class",
                              quoted(b->range, "`" + fn->fn->name + "`"), fn->fn->name));
    raise("TypeError", "bases must be types", b->range);
  }
  for (const py::Keyword &k : cd.keywords) {
    V v = eval(*k.value, f);
    if (k.name == "metaclass" && v->kind == Kind::Opaque)
      continue; // abc.ABCMeta and the like: no effect dkv models
    unsupported(k.range, fmt::format("the class keyword `{}`", k.name));
  }
  if (namedTuple && !decorators.empty())
    unsupported(cd.decorators[0]->range, "a decorator on a NamedTuple class");
  if (cls->bases.empty())
    cls->bases.push_back(builtinClass(ClassRole::Object));
  cls->mro = c3(cls);
  if (cls->mro.empty())
    raise("TypeError", "Cannot create a consistent method resolution order (MRO) for bases",
          cd.range);
  for (const ClassP &b : cls->mro)
    if (b->role != ClassRole::User && b->role != ClassRole::Object && cls->role == ClassRole::User)
      cls->role = b->role;
  // The body runs in a namespace of its own.
  Frame cf;
  cf.scope = &scopeOf(&cd, f.globals);
  cf.globals = f.globals;
  cf.classNs = cls->dict;
  std::map<std::string, CellP> closure;
  for (const std::string &n : cf.scope->frees) {
    if (auto it = f.cells.find(n); it != f.cells.end())
      closure[n] = it->second;
    else if (f.closure && f.closure->count(n))
      closure[n] = f.closure->at(n);
  }
  cf.closure = &closure;
  cf.function = f.function;
  cls->dict->set("__module__", string(cls->module));
  std::string qual = f.function ? f.function->qualname + ".<locals>." + cd.name : cd.name;
  if (f.scope && f.scope->type == ScopeInfo::Type::Class)
    if (auto *q = dynCast<StrV>(f.classNs->get("__qualname__")))
      qual = q->s + "." + cd.name;
  cls->dict->set("__qualname__", string(qual));
  execBody(cd.body, cf);
  if (namedTuple)
    namedTupleFields(cls, cd.range);
  for (auto &[n, v] : cls->dict->items) {
    FunctionV *fn = dynCast<FunctionV>(v);
    if (!fn)
      if (auto *w = dynCast<WrapperV>(v))
        fn = dynCast<FunctionV>(w->fn);
    if (fn && fn->definingClass.expired())
      fn->definingClass = cls;
  }
  if (cls->role == ClassRole::Enum) {
    // Enum members: every plain attribute of the body becomes an instance of the class
    // with its name and value, in definition order.
    auto members = std::make_shared<DictV>();
    int64_t next = 1;
    std::vector<std::pair<std::string, V>> plain;
    for (const auto &[n, v] : cls->dict->items) {
      if (n.size() > 1 && n[0] == '_')
        continue;
      if (v->kind == Kind::Function || v->kind == Kind::Wrapper || v->kind == Kind::Builtin)
        continue;
      plain.emplace_back(n, v);
    }
    for (auto &[n, v] : plain) {
      V value = v;
      if (apiAs<AutoObj>(v))
        value = integer(next);
      if (auto *i = dynCast<IntV>(value))
        next = i->i + 1;
      // A repeated value is an alias of the first member with it.
      V member;
      for (const Table::Entry &e : members->table.entries)
        if (e.live &&
            equal(cast<InstanceV>(e.value).attrs->get("_value_"), value, cd.range).value_or(false))
          member = e.value;
      if (!member) {
        auto inst = track(std::make_shared<InstanceV>(cls));
        inst->attrs->set("_name_", string(n));
        inst->attrs->set("_value_", value);
        inst->attrs->set("name", string(n));
        inst->attrs->set("value", value);
        member = inst;
      }
      dictSet(members->table, string(n), member, cd.range);
      cls->dict->set(n, member);
    }
    cls->dict->set("_member_map_", members);
  }
  V out = cls;
  for (size_t i = decorators.size(); i-- > 0;)
    out = call(decorators[i], Args{{out}, {}}, cd.decorators[i]->range);
  return out;
}

//===----------------------------------------------------------------------===//
// Instances
//===----------------------------------------------------------------------===//

V Interp::callClass(const ClassP &c, Args args, SourceRange r) {
  if (c->namedTupleFields)
    return newNamedTuple(c, std::move(args), r);
  switch (c->role) {
  case ClassRole::User:
  case ClassRole::TestCase:
  case ClassRole::BaseException:
    return newInstance(c, std::move(args), r);
  case ClassRole::Enum: {
    if (args.pos.size() != 1 || !args.kw.empty())
      unsupported(r, "calling an Enum class other than with one value (a lookup)");
    V members = lookupClassAttr(c, "_member_map_");
    if (auto *d = dynCast<DictV>(members))
      for (const Table::Entry &e : d->table.entries)
        if (e.live &&
            equal(cast<InstanceV>(e.value).attrs->get("_value_"), args.pos[0], r).value_or(false))
          return e.value;
    auto text = repr(args.pos[0], r);
    raise("ValueError", fmt::format("{} is not a valid {}", text ? *text : "the value", c->name),
          r);
  }
  default:
    return constructBuiltin(c->role, std::move(args), r);
  }
}

//===----------------------------------------------------------------------===//
// typing.NamedTuple classes (what CPython's typing.NamedTupleMeta makes of a class body)
//===----------------------------------------------------------------------===//

namespace {

const ClassP &namedTupleClass(const V &v) { return cast<TupleV>(v).cls; }

// `x._replace(**fields)`: a copy with those fields replaced.
const BuiltinFn kReplace{
    "_replace", +[](Interp &in, CallCtx &c) -> V {
      const ClassP &cls = namedTupleClass(c.self);
      if (!c.args.pos.empty())
        in.raiseId("TypeError",
                   fmt::format("{}._replace() takes 1 positional argument but {} were given",
                               cls->name, c.args.pos.size() + 1),
                   c.range);
      std::vector<V> items = cast<TupleV>(c.self).items;
      std::vector<std::string> unknown;
      for (const auto &[k, v] : c.args.kw) {
        const auto &fields = *cls->namedTupleFields;
        auto it = std::find(fields.begin(), fields.end(), k);
        if (it == fields.end())
          unknown.push_back("'" + k + "'");
        else
          items[static_cast<size_t>(it - fields.begin())] = v;
      }
      if (!unknown.empty())
        in.raiseId("ValueError",
                   fmt::format("Got unexpected field names: [{}]", fmt::join(unknown, ", ")),
                   c.range);
      return tupleOfClass(std::move(items), cls);
    }};

// `x._asdict()`: a dict of the fields, in order.
const BuiltinFn kAsDict{
    "_asdict", +[](Interp &in, CallCtx &c) -> V {
      const ClassP &cls = namedTupleClass(c.self);
      if (!c.args.pos.empty() || !c.args.kw.empty())
        in.raiseId("TypeError", fmt::format("{}._asdict() takes 1 positional argument", cls->name),
                   c.range);
      const auto &items = cast<TupleV>(c.self).items;
      Args pairs;
      for (size_t i = 0; i < items.size(); ++i)
        pairs.kw.emplace_back((*cls->namedTupleFields)[i], items[i]);
      return in.constructBuiltin(ClassRole::Dict, std::move(pairs), c.range);
    }};

// `C._make(iterable)`: an instance of the iterable's items.
const BuiltinFn kMake{
    "_make", +[](Interp &in, CallCtx &c) -> V {
      const ClassP cls = std::static_pointer_cast<ClassV>(c.self);
      if (c.args.pos.size() != 1 || !c.args.kw.empty())
        in.raiseId("TypeError", fmt::format("{}._make() takes one iterable", cls->name), c.range);
      std::vector<V> items = in.toVector(c.args.pos[0], c.range);
      if (items.size() != cls->namedTupleFields->size())
        in.raiseId("TypeError",
                   fmt::format("Expected {} arguments, got {}", cls->namedTupleFields->size(),
                               items.size()),
                   c.range);
      return tupleOfClass(std::move(items), cls);
    }};

} // namespace

void Interp::namedTupleFields(const ClassP &cls, SourceRange r) {
  std::vector<std::string> fields;
  std::vector<V> names;
  Args defaults;
  if (auto *ann = dynCast<DictV>(cls->dict->get("__annotations__")))
    for (const V &k : tableKeys(ann->table)) {
      const std::string &name = cast<StrV>(k).s;
      if (!name.empty() && name[0] == '_')
        raiseId("ValueError",
                fmt::format("Field names cannot start with an underscore: '{}'", name), r);
      if (V dflt = cls->dict->get(name)) {
        cls->fieldDefault[name] = dflt;
        defaults.kw.emplace_back(name, dflt);
      } else if (!fields.empty() && cls->fieldDefault.count(fields.back())) {
        raiseId("TypeError",
                fmt::format("Non-default namedtuple field {} cannot follow default field {}", name,
                            fields.back()),
                r);
      }
      fields.push_back(name);
      names.push_back(string(name));
      // The class attribute is a descriptor of the field (_tuplegetter), not its default.
      cls->dict->set(name, opaque(fmt::format("the class attribute `{}.{}` (a field's "
                                              "_tuplegetter)",
                                              cls->name, name),
                                  r));
    }
  cls->dict->set("_fields", tuple(names));
  cls->dict->set("__match_args__", tuple(std::move(names)));
  cls->dict->set("_field_defaults", constructBuiltin(ClassRole::Dict, std::move(defaults), r));
  cls->dict->set("_make", std::make_shared<BuiltinV>(&kMake, cls));
  cls->namedTupleFields = std::move(fields);
}

V Interp::newNamedTuple(const ClassP &c, Args args, SourceRange r) {
  const auto &fields = *c->namedTupleFields;
  const std::string who = c->name + ".__new__()";
  if (args.pos.size() > fields.size()) {
    size_t required = 0;
    for (const std::string &f : fields)
      required += c->fieldDefault.count(f) ? 0 : 1;
    std::string takes = required == fields.size()
                            ? std::to_string(fields.size() + 1)
                            : fmt::format("from {} to {}", required + 1, fields.size() + 1);
    raiseId("TypeError",
            fmt::format("{} takes {} positional arguments but {} were given", who, takes,
                        args.pos.size() + 1),
            r);
  }
  std::vector<V> items(fields.size());
  for (size_t i = 0; i < args.pos.size(); ++i)
    items[i] = args.pos[i];
  for (const auto &[k, v] : args.kw) {
    auto it = std::find(fields.begin(), fields.end(), k);
    if (it == fields.end())
      raiseId("TypeError", fmt::format("{} got an unexpected keyword argument '{}'", who, k), r);
    V &slot = items[static_cast<size_t>(it - fields.begin())];
    if (slot)
      raiseId("TypeError", fmt::format("{} got multiple values for argument '{}'", who, k), r);
    slot = v;
  }
  std::vector<std::string> missing;
  for (size_t i = 0; i < fields.size(); ++i)
    if (!items[i]) {
      if (auto it = c->fieldDefault.find(fields[i]); it != c->fieldDefault.end())
        items[i] = it->second;
      else
        missing.push_back("'" + fields[i] + "'");
    }
  if (!missing.empty()) {
    std::string list = missing.back();
    if (missing.size() > 1) {
      std::vector<std::string> head(missing.begin(), missing.end() - 1);
      list = fmt::format("{}{} and {}", fmt::join(head, ", "), missing.size() > 2 ? "," : "",
                         missing.back());
    }
    raiseId("TypeError",
            fmt::format("{} missing {} required positional argument{}: {}", who, missing.size(),
                        missing.size() == 1 ? "" : "s", list),
            r);
  }
  return tupleOfClass(std::move(items), c);
}

V Interp::newInstance(const ClassP &c, Args args, SourceRange r) {
  auto inst = track(std::make_shared<InstanceV>(c));
  V self = inst;
  if (c->role == ClassRole::BaseException)
    inst->attrs->set("args", tuple(args.pos));
  // A dataclass's generated __init__, unless a class of it defines one.
  bool ownInit = false;
  for (const ClassP &k : c->mro)
    if (k->role != ClassRole::Object && k->dict->get("__init__"))
      ownInit = true;
  if (c->dataclassFields && !ownInit) {
    // The __init__ dataclasses generates: the fields in order, with their defaults.
    std::vector<std::string> fields;
    for (const std::string &n : *c->dataclassFields)
      if (std::find(c->noInit.begin(), c->noInit.end(), n) == c->noInit.end())
        fields.push_back(n);
    if (args.pos.size() > fields.size())
      raiseId("TypeError",
              fmt::format("{}.__init__() takes {} positional argument{} but {} were given", c->name,
                          fields.size() + 1, fields.size() + 1 == 1 ? "" : "s",
                          args.pos.size() + 1),
              r);
    std::map<std::string, V> given;
    for (size_t i = 0; i < args.pos.size(); ++i)
      given[fields[i]] = args.pos[i];
    for (auto &[k, v] : args.kw) {
      if (std::find(fields.begin(), fields.end(), k) == fields.end())
        raiseId("TypeError",
                fmt::format("{}.__init__() got an unexpected keyword argument '{}'", c->name, k),
                r);
      if (given.count(k))
        raiseId("TypeError",
                fmt::format("{}.__init__() got multiple values for argument '{}'", c->name, k), r);
      given[k] = v;
    }
    for (const std::string &n : *c->dataclassFields) {
      V v;
      if (auto it = given.find(n); it != given.end())
        v = it->second;
      else if (auto d = c->fieldDefault.find(n); d != c->fieldDefault.end())
        v = d->second;
      else if (auto fac = c->fieldFactory.find(n); fac != c->fieldFactory.end())
        v = call(fac->second, Args{}, r);
      else if (std::find(c->noInit.begin(), c->noInit.end(), n) != c->noInit.end())
        continue;
      else
        raiseId(
            "TypeError",
            fmt::format("{}.__init__() missing 1 required positional argument: '{}'", c->name, n),
            r);
      inst->attrs->set(n, v);
    }
    if (lookupClassAttr(c, "__post_init__"))
      call(getAttr(self, "__post_init__", r), Args{}, r);
    return self;
  }
  V init = lookupClassAttr(c, "__init__");
  if (init && init->kind == Kind::Function) {
    V res = call(std::make_shared<BoundMethodV>(self, init), std::move(args), r);
    if (res->kind != Kind::None)
      raise("TypeError", fmt::format("__init__() should return None, not '{}'", typeName(*res)), r);
    return self;
  }
  if (init && init->kind == Kind::Builtin) {
    callBuiltin(*cast<BuiltinV>(init).fn, self, std::move(args), r);
    return self;
  }
  if (c->opaqueBase)
    return self; // the base's __init__ is not modelled: its attributes stay opaque
  if (c->role == ClassRole::User && (!args.pos.empty() || !args.kw.empty()))
    raise("TypeError", fmt::format("{}() takes no arguments", c->name), r);
  return self;
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

namespace {

// The value of an attribute found on a class, seen through an instance (`bound`) or the
// class itself: functions become bound methods, classmethods bind the class.
V bindDescriptor(Interp &in, const V &attr, const V &self, const ClassP &cls, SourceRange r) {
  (void)in;
  (void)r;
  switch (attr->kind) {
  case Kind::Function:
    return self ? std::make_shared<BoundMethodV>(self, attr) : attr;
  case Kind::Builtin: {
    const auto &b = cast<BuiltinV>(attr);
    return self && !b.self ? std::make_shared<BuiltinV>(b.fn, self) : attr;
  }
  case Kind::Wrapper: {
    const auto &w = cast<WrapperV>(attr);
    switch (w.w) {
    case WrapperV::W::StaticMethod:
      return w.fn;
    case WrapperV::W::ClassMethod:
      return std::make_shared<BoundMethodV>(cls, w.fn);
    case WrapperV::W::Property:
      return attr;
    case WrapperV::W::LruCache: // binds as a function does (CPython's wrapper has __get__)
      return self ? std::make_shared<BoundMethodV>(self, attr) : attr;
    }
    return attr;
  }
  default:
    return attr;
  }
}

// The attributes of each object kind that dkv models (CPython's names); any other
// falls back to the kind's own lookup below.
const AttrRow<InstanceV> kInstanceAttrs[] = {
    {"__class__", [](auto &, auto &o, auto &, auto) -> V { return o.cls; }},
    {"__dict__",
     [](auto &in, auto &, auto &, auto r) { return in.opaque("an instance's __dict__", r); }},
};
const AttrRow<ClassV> kClassAttrs[] = {
    {"__name__", [](auto &, auto &c, auto &, auto) { return string(c.name); }},
    {"__qualname__",
     [](auto &, auto &c, auto &, auto) {
       V q = c.dict->get("__qualname__");
       return q ? q : string(c.name);
     }},
    {"__module__", [](auto &, auto &c, auto &, auto) { return string(c.module); }},
    {"__mro__", [](auto &, auto &c, auto &,
                   auto) { return tuple(std::vector<V>(c.mro.begin(), c.mro.end())); }},
    {"__bases__", [](auto &, auto &c, auto &,
                     auto) { return tuple(std::vector<V>(c.bases.begin(), c.bases.end())); }},
};
const AttrRow<FunctionV> kFunctionAttrs[] = {
    {"__name__", [](auto &, auto &f, auto &, auto) { return string(f.name); }},
    {"__qualname__", [](auto &, auto &f, auto &, auto) { return string(f.qualname); }},
    {"__module__", [](auto &, auto &f, auto &, auto) { return f.globals->dict->get("__name__"); }},
    {"__doc__", [](auto &, auto &, auto &, auto) { return none(); }},
};
const AttrRow<BoundMethodV> kBoundMethodAttrs[] = {
    {"__self__", [](auto &, auto &m, auto &, auto) { return m.self; }},
    {"__func__", [](auto &, auto &m, auto &, auto) { return m.fn; }},
};
const AttrRow<BuiltinV> kBuiltinAttrs[] = {
    {"__name__", [](auto &, auto &b, auto &,
                    auto) { return string(b.fn->name.substr(b.fn->name.rfind('.') + 1)); }},
};
const AttrRow<PartialV> kPartialAttrs[] = {
    {"func", [](auto &, auto &p, auto &, auto) { return p.fn; }},
    {"args", [](auto &, auto &p, auto &, auto) { return tuple(p.pos); }},
    {"keywords",
     [](auto &in, auto &p, auto &, auto r) {
       std::vector<std::pair<V, V>> items;
       for (const auto &[k, v] : p.kw)
         items.emplace_back(string(k), v);
       return in.newDict(items, r);
     }},
};
const AttrRow<WrapperV> kWrapperAttrs[] = {
    {"setter",
     [](auto &in, auto &w, auto &self, auto) -> V {
       return w.w == WrapperV::W::Property ? builtinValue(*in.builtinMethod(self, "setter"), self)
                                           : nullptr;
     }},
    {"__func__", [](auto &, auto &w, auto &, auto) { return w.fn; }},
    {"fget", [](auto &, auto &w, auto &, auto) { return w.fn; }},
    // An lru_cache wrapper: functools.update_wrapper's attributes, and its methods.
    {"__wrapped__",
     [](auto &, auto &w, auto &, auto) -> V {
       return w.w == WrapperV::W::LruCache ? w.fn : nullptr;
     }},
    {"__name__",
     [](auto &in, auto &w, auto &, auto r) -> V {
       return w.w == WrapperV::W::LruCache ? in.getAttr(w.fn, "__name__", r) : nullptr;
     }},
    {"__qualname__",
     [](auto &in, auto &w, auto &, auto r) -> V {
       return w.w == WrapperV::W::LruCache ? in.getAttr(w.fn, "__qualname__", r) : nullptr;
     }},
    {"cache_clear",
     [](auto &in, auto &w, auto &self, auto) -> V {
       return w.w == WrapperV::W::LruCache
                  ? builtinValue(*in.builtinMethod(self, "cache_clear"), self)
                  : nullptr;
     }},
    {"cache_info",
     [](auto &in, auto &w, auto &, auto r) -> V {
       return w.w == WrapperV::W::LruCache
                  ? in.opaque("cache_info() of an lru_cache (its counts are not kept)", r)
                  : nullptr;
     }},
};
const AttrRow<SliceV> kSliceAttrs[] = {
    {"start", [](auto &, auto &s, auto &, auto) { return s.lower; }},
    {"stop", [](auto &, auto &s, auto &, auto) { return s.upper; }},
    {"step", [](auto &, auto &s, auto &, auto) { return s.step; }},
};
const AttrRow<RangeV> kRangeAttrs[] = {
    {"start", [](auto &, auto &g, auto &, auto) { return integer(g.start); }},
    {"stop", [](auto &, auto &g, auto &, auto) { return integer(g.stop); }},
    {"step", [](auto &, auto &g, auto &, auto) { return integer(g.step); }},
};

} // namespace

namespace {
const AttrRow<TupleV> kNamedTupleAttrs[] = {
    {"_replace",
     [](auto &, auto &, const V &self, auto) -> V {
       return std::make_shared<BuiltinV>(&kReplace, self);
     }},
    {"_asdict",
     [](auto &, auto &, const V &self, auto) -> V {
       return std::make_shared<BuiltinV>(&kAsDict, self);
     }},
};
} // namespace

V Interp::namedTupleAttr(const V &obj, const std::string &name, SourceRange r) {
  const ClassP &cls = namedTupleClass(obj);
  const auto &fields = *cls->namedTupleFields;
  if (auto it = std::find(fields.begin(), fields.end(), name); it != fields.end())
    return cast<TupleV>(obj).items[static_cast<size_t>(it - fields.begin())];
  if (V v = readAttr(kNamedTupleAttrs, *this, obj, name, r))
    return v;
  V clsAttr = lookupClassAttr(cls, name);
  if (auto *w = dynCast<WrapperV>(clsAttr); w && w->w == WrapperV::W::Property)
    return call(w->fn, Args{{obj}, {}}, r);
  if (clsAttr && cls->dict->has(name))
    return bindDescriptor(*this, clsAttr, obj, cls, r);
  return nullptr; // tuple's own (count, index) and object's
}

// The attributes every object has: `x.__class__` is `type(x)` (opaque where that is).
// An instance's, a class's, a module's and an opaque value's are their kinds' own.
const AttrRow<Value> kValueAttrs[] = {
    {"__class__",
     [](auto &in, auto &, auto &self, auto r) {
       return in.constructBuiltin(ClassRole::Type, Args{{self}, {}}, r);
     }},
};

V Interp::getAttrOpt(const V &obj, const std::string &name, SourceRange r) {
  if (obj->kind != Kind::Instance && obj->kind != Kind::Class && obj->kind != Kind::Module &&
      obj->kind != Kind::Opaque)
    if (auto *a = findAttr(kValueAttrs, name))
      return a->get(*this, *obj, obj, r);
  switch (obj->kind) {
  case Kind::Tuple:
    if (cast<TupleV>(obj).cls)
      if (V v = namedTupleAttr(obj, name, r))
        return v;
    break;
  case Kind::Instance: {
    const auto &inst = cast<InstanceV>(obj);
    if (auto *a = findAttr(kInstanceAttrs, name))
      return a->get(*this, inst, obj, r);
    V clsAttr = lookupClassAttr(inst.cls, name);
    if (auto *w = dynCast<WrapperV>(clsAttr); w && w->w == WrapperV::W::Property)
      return call(w->fn, Args{{obj}, {}}, r);
    if (V v = inst.attrs->get(name))
      return v;
    if (clsAttr)
      return bindDescriptor(*this, clsAttr, obj, inst.cls, r);
    if (V ga = lookupClassAttr(inst.cls, "__getattr__"))
      return call(std::make_shared<BoundMethodV>(obj, ga), Args{{string(name)}, {}}, r);
    if (inst.cls->opaqueBase)
      return opaque(fmt::format("the attribute `.{}` of a `{}` object (its class derives from one "
                                "dkv does not model)",
                                name, inst.cls->name),
                    r, inst.cls->opaqueBase);
    return nullptr;
  }
  case Kind::Class: {
    ClassP cls = std::static_pointer_cast<ClassV>(obj);
    if (auto *a = findAttr(kClassAttrs, name))
      return a->get(*this, *cls, obj, r);
    if (V v = lookupClassAttr(cls, name))
      return bindDescriptor(*this, v, nullptr, cls, r);
    if (cls->opaqueBase)
      return opaque(fmt::format("the attribute `.{}` of class `{}` (it derives from a class dkv "
                                "does not model)",
                                name, cls->name),
                    r, cls->opaqueBase);
    return nullptr;
  }
  case Kind::Module:
    return moduleAttr(std::static_pointer_cast<ModuleV>(obj), name, r);
  case Kind::Function: {
    const auto &fn = cast<FunctionV>(obj);
    if (auto *a = findAttr(kFunctionAttrs, name))
      return a->get(*this, fn, obj, r);
    if (V v = fn.attrs->get(name))
      return v;
    return nullptr;
  }
  case Kind::BoundMethod: {
    const auto &m = cast<BoundMethodV>(obj);
    if (auto *a = findAttr(kBoundMethodAttrs, name))
      return a->get(*this, m, obj, r);
    return getAttrOpt(m.fn, name, r);
  }
  case Kind::Builtin: {
    if (V v = readAttr(kBuiltinAttrs, *this, obj, name, r))
      return v;
    // A function or class of JAX or NumPy that dkv models as a function: the library has
    // attributes dkv does not model (`jax.ShapeDtypeStruct.like`), so an unknown one is
    // opaque, never an AttributeError Python would not raise. The standard library's and
    // Python's own builtins are modelled whole: their unknown attributes do not exist.
    const std::string &fn = cast<BuiltinV>(obj).fn->name;
    // A class method of the registry (`jax.ShapeDtypeStruct.like`).
    if (!cast<BuiltinV>(obj).self)
      if (const ApiRow *row = Registry::get().find(fn + "." + std::string(name));
          row && row->fn.handler)
        return builtinValue(row->fn);
    for (std::string_view library : {"jax.", "jnp.", "lax.", "pl.", "pltpu.", "np.", "numpy."})
      if (fn.rfind(library, 0) == 0 && !cast<BuiltinV>(obj).self)
        return opaque(fmt::format("`{}.{}`, which dkv does not model", fn, name), r);
    return nullptr;
  }
  case Kind::Partial:
    return readAttr(kPartialAttrs, *this, obj, name, r);
  case Kind::Wrapper:
    return readAttr(kWrapperAttrs, *this, obj, name, r);
  case Kind::Slice:
    return readAttr(kSliceAttrs, *this, obj, name, r);
  case Kind::Range:
    if (auto *a = findAttr(kRangeAttrs, name))
      return a->get(*this, cast<RangeV>(obj), obj, r);
    break;
  case Kind::Opaque: {
    V v = opaque(fmt::format("its attribute `.{}`", name), r, obj);
    auto origin = std::make_shared<Origin>(*cast<OpaqueV>(v).origin);
    origin->attr = name;
    // An attribute of a module dkv does not model (`jax.numpy.linalg.norm`) is named by
    // its dotted path, so that the hint of an error offers what `--set` can give: the
    // call's value, `set jax.numpy.linalg.norm()=VALUE`, not the module.
    // `--set jax.numpy.linalg.norm()=VALUE` gives it, as for an attribute of a module dkv
    // models (moduleAttr).
    const std::string &parent = cast<OpaqueV>(obj).origin->settable;
    if (!parent.empty() && parent.back() != ')') {
      origin->settable = parent + "." + name;
      if (const SetDirective *set = findSet(origin->settable))
        return directiveValue(*set, main_);
    }
    return std::make_shared<OpaqueV>(origin);
  }
  case Kind::Ref:
  case Kind::Sem:
    return refAttr(obj, name, r);
  case Kind::HostArray:
    return hostArrayAttr(obj, name, r);
  case Kind::Api:
    return apiAttr(obj, cast<ApiObject>(obj), name, r);
  default:
    break;
  }
  if (obj->kind == Kind::Traced)
    if (V v = tracedAttr(obj, name, r))
      return v;
  if (const BuiltinFn *m = builtinMethod(obj, name))
    return builtinValue(*m, obj);
  // A kernel value is a jax.Array, which has attributes (`.shape`, `.T`, ...) that dkv does
  // not model: refused, never CPython's AttributeError that JAX would not raise.
  if (obj->kind == Kind::Traced)
    unsupported(r, fmt::format("`.{}` of a {} (of a value computed in a kernel, dkv models "
                               "`.shape`, `.ndim`, `.size` and `.dtype` where it knows its shape, "
                               "and no other attribute)",
                               name, typeName(*obj)));
  return nullptr;
}

V Interp::getAttr(const V &obj, const std::string &name, SourceRange r) {
  if (V v = getAttrOpt(obj, name, r))
    return v;
  if (obj->kind == Kind::Module)
    raise("AttributeError",
          fmt::format("module '{}' has no attribute '{}'", cast<ModuleV>(obj).name, name), r);
  if (obj->kind == Kind::Class)
    raise("AttributeError",
          fmt::format("type object '{}' has no attribute '{}'", cast<ClassV>(obj).name, name), r);
  raise("AttributeError", fmt::format("'{}' object has no attribute '{}'", typeName(*obj), name),
        r);
}

void Interp::setAttr(const V &obj, const std::string &name, const V &value, SourceRange r) {
  switch (obj->kind) {
  case Kind::Instance: {
    auto &inst = cast<InstanceV>(obj);
    V clsAttr = lookupClassAttr(inst.cls, name);
    if (auto *w = dynCast<WrapperV>(clsAttr); w && w->w == WrapperV::W::Property) {
      if (!w->setter)
        raise("AttributeError",
              fmt::format("property '{}' of '{}' object has no setter", name, inst.cls->name), r);
      call(w->setter, Args{{obj, value}, {}}, r);
      return;
    }
    if (inst.cls->frozen)
      raise("FrozenInstanceError", fmt::format("cannot assign to field '{}'", name), r);
    if (V sa = lookupClassAttr(inst.cls, "__setattr__"); sa && sa->kind == Kind::Function) {
      call(std::make_shared<BoundMethodV>(obj, sa), Args{{string(name), value}, {}}, r);
      return;
    }
    inst.attrs->set(name, value);
    return;
  }
  case Kind::Class:
    cast<ClassV>(obj).dict->set(name, value);
    return;
  case Kind::Module:
    cast<ModuleV>(obj).dict->set(name, value);
    return;
  case Kind::Function:
    cast<FunctionV>(obj).attrs->set(name, value);
    return;
  case Kind::Opaque:
    return;
  default:
    break;
  }
  raise("AttributeError", fmt::format("'{}' object has no attribute '{}'", typeName(*obj), name),
        r);
}

void Interp::delAttr(const V &obj, const std::string &name, SourceRange r) {
  bool ok = false;
  switch (obj->kind) {
  case Kind::Instance:
    if (cast<InstanceV>(obj).cls->frozen)
      raise("FrozenInstanceError", fmt::format("cannot delete field '{}'", name), r);
    ok = cast<InstanceV>(obj).attrs->erase(name);
    break;
  case Kind::Class:
    ok = cast<ClassV>(obj).dict->erase(name);
    break;
  case Kind::Module:
    ok = cast<ModuleV>(obj).dict->erase(name);
    break;
  case Kind::Function:
    ok = cast<FunctionV>(obj).attrs->erase(name);
    break;
  case Kind::Opaque:
    return;
  default:
    break;
  }
  if (!ok)
    raise("AttributeError", fmt::format("'{}' object has no attribute '{}'", typeName(*obj), name),
          r);
}

} // namespace dkv::pytrace
