// Small helpers of JAX that library kernels use (docs/python.md "Modules"; jax.nn.softmax
// in a kernel, written with the compute catalogue):
// `jax._src.dtypes` (`itemsize_bits`, `bit_width`; its other names are opaque, like every
// name of a modelled module that dkv does not model), `pl.cdiv`, and `jnp.issubdtype`
// with NumPy's abstract scalar types (`jnp.floating`, ...).
#include "pytrace/Interp.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

namespace dkv::pytrace {

namespace {

// The bits of one element of a dtype argument (a dtype, a scalar type such as
// jnp.float32, or anything with a `.dtype`), as jax._src.dtypes computes them.
V itemsizeBits(Interp &in, CallCtx &c) {
  auto a = c.bind(in, {"dtype"});
  if (!a[0])
    in.raise("TypeError",
             fmt::format("{}() missing 1 required positional argument: 'dtype'", c.fn->name),
             c.range);
  V d = a[0];
  if (auto *h = dynCast<HostArrayV>(d))
    return integer(8 * static_cast<int64_t>(ast::byteSize(h->dtype)));
  if (isa<OpaqueV>(d))
    return in.opaque(fmt::format("{}() of it", c.fn->name), c.range, d);
  return integer(8 * static_cast<int64_t>(ast::byteSize(in.dtypeArg(d, c.range))));
}

// `pl.cdiv(a, b)`: JAX's `-(-a // b)` on two Python ints, else `lax.div(a + b - 1, b)`,
// whose truncating quotient is written exactly as `(x - lax.rem(x, b)) // b` (the
// kernel language's `/` floors; the dividend is then a multiple of b).
V cdiv(Interp &in, CallCtx &c) {
  auto a = c.bind(in, {"a", "b"});
  if (!a[0] || !a[1])
    in.raise("TypeError", "cdiv() missing a required positional argument", c.range);
  using B = py::BinOpKind;
  auto isInt = [](const V &v) { return isa<IntV>(v) || isa<BoolV>(v); };
  if (isInt(a[0]) && isInt(a[1])) {
    V neg = in.unary(py::UnaryOpKind::USub, a[0], c.range);
    return in.unary(py::UnaryOpKind::USub, in.binop(B::FloorDiv, neg, a[1], c.range), c.range);
  }
  V x = in.binop(B::Sub, in.binop(B::Add, a[0], a[1], c.range), integer(1), c.range);
  const ApiRow *rem = Registry::get().find("jax.lax.rem");
  V r = in.callBuiltin(rem->fn, nullptr, Args{{x, a[1]}, {}}, c.range);
  return in.binop(B::FloorDiv, in.binop(B::Sub, x, r, c.range), a[1], c.range);
}

// `jnp.dtype(x)` / `np.dtype(x)`: the dtype of a dtype or scalar type (jnp.float32), or
// of one of the names dkv models ("float32", "bfloat16", ...).
V dtypeOf(Interp &in, CallCtx &c) {
  auto a = c.bind(in, {"dtype", "align", "copy"});
  if (!a[0])
    in.raise("TypeError", "dtype() missing required argument 'dtype' (pos 0)", c.range);
  if (auto *d = apiAs<DTypeObj>(a[0])) // np.dtype(np.int32): the dtype of a scalar type
    return d->form == DTypeForm::Dtype ? a[0]
                                       : makeApi(DTypeObj{d->dtype, d->name, DTypeForm::Dtype});
  if (isa<OpaqueV>(a[0]))
    return in.opaque("jnp.dtype() of it", c.range, a[0]);
  if (auto *s = dynCast<StrV>(a[0])) {
    V d = dtypeConstant(s->s);
    if (apiAs<DTypeObj>(d)->dtype)
      return d;
    unsupported(c.range, fmt::format("the dtype name '{}' (dkv knows float32, bfloat16, "
                                     "float16, int32, int16, int8, uint8, uint32)",
                                     s->s));
  }
  if (isa<HostArrayV>(a[0]))
    in.raise("TypeError", "Cannot interpret an array as a data type", c.range);
  unsupported(c.range, fmt::format("jnp.dtype() of a {}", typeName(*a[0])));
}

// `jnp.pad(x, pad_width, ...)` on the host: the padded array's shape (numpy's pad_width
// forms: n, (before, after), or one pair per dimension); its values are not kept.
V pad(Interp &in, CallCtx &c) {
  auto a = c.bind(in, {"array", "pad_width", "mode", "*", "constant_values", "stat_length",
                       "end_values", "reflect_type"});
  if (!a[0] || !a[1])
    in.raise("TypeError", "pad() missing a required argument", c.range);
  if (!in.inKernel_ && isa<OpaqueV>(a[0]))
    return in.opaque("jnp.pad() of it", c.range, a[0]);
  auto *x = dynCast<HostArrayV>(a[0]);
  if (!x)
    unsupported(c.range, fmt::format("jnp.pad of a {}", typeName(*a[0])));
  size_t n = x->shape.size();
  // Each dimension's (before, after).
  std::vector<std::pair<int64_t, int64_t>> widths;
  auto pairOf = [&](const V &v) -> std::pair<int64_t, int64_t> {
    if (isa<IntV>(v)) {
      int64_t w = in.toIndex(v, c.range, "a pad width");
      return {w, w};
    }
    std::vector<V> p = in.toVector(v, c.range);
    if (p.size() == 1)
      p.push_back(p[0]);
    if (p.size() != 2)
      in.raise("ValueError", "operands could not be broadcast together", c.range);
    return {in.toIndex(p[0], c.range, "a pad width"), in.toIndex(p[1], c.range, "a pad width")};
  };
  if (isa<OpaqueV>(a[1]))
    in.opaqueNeeded(a[1], c.range, "the pad widths of jnp.pad");
  if (isa<IntV>(a[1])) {
    widths.assign(n, pairOf(a[1]));
  } else {
    std::vector<V> items = in.toVector(a[1], c.range);
    bool nested = !items.empty() && !isa<IntV>(items[0]);
    if (!nested) {
      widths.assign(n, pairOf(a[1]));
    } else if (items.size() == 1) {
      widths.assign(n, pairOf(items[0]));
    } else {
      if (items.size() != n)
        in.raise("ValueError", "operands could not be broadcast together", c.range);
      for (const V &it : items)
        widths.push_back(pairOf(it));
    }
  }
  std::vector<int64_t> shape = x->shape;
  for (size_t d = 0; d < n; ++d) {
    if (widths[d].first < 0 || widths[d].second < 0)
      in.raise("ValueError", "index can't contain negative values", c.range);
    shape[d] += widths[d].first + widths[d].second;
  }
  auto out = std::make_shared<HostArrayV>(shape, x->dtype);
  out->numpy = x->numpy;
  out->x64 = x->x64;
  return out;
}

// `pl.empty(shape, dtype)` on the host: an array of that shape (uninitialized, no values).
V plEmpty(Interp &in, CallCtx &c) {
  auto a = c.bind(in, {"shape", "dtype", "*", "memory_space", "interpret"});
  if (in.inKernel_)
    unsupported(c.range, "pl.empty inside a kernel");
  if (!a[0] || !a[1])
    in.raise("TypeError", "empty() missing a required argument", c.range);
  return in.makeArray(in.shapeOf(a[0], c.range, "the array shape"), in.dtypeArg(a[1], c.range));
}

// `pltpu.with_memory_space_constraint(x, space)`: x itself (a placement hint to XLA; the
// pallas_call's BlockSpec gives the kernel's ref its memory space).
V withMemorySpace(Interp &in, CallCtx &c) {
  auto a = c.bind(in, {"x", "memory_space"});
  if (!a[0] || !a[1])
    in.raise("TypeError", "with_memory_space_constraint() missing a required argument", c.range);
  if (in.inKernel_)
    unsupported(c.range, "pltpu.with_memory_space_constraint inside a kernel");
  return a[0];
}

// `pl.multiple_of(x, m)`: x (a hint to the compiler that x is a multiple of m).
V multipleOf(Interp &in, CallCtx &c) {
  auto a = c.bind(in, {"x", "values"});
  if (!a[0] || !a[1])
    in.raise("TypeError", "multiple_of() missing a required argument", c.range);
  return a[0];
}

// `jax.nn.softmax(x, axis=-1)` in a kernel: JAX's own definition with the catalogue's ops,
// `e = exp(x - max(x, axis, keepdims=True)); e / sum(e, axis, keepdims=True)`.
V softmax(Interp &in, CallCtx &c) {
  auto a = c.bind(in, {"x", "axis", "where", "initial"});
  if (!a[0])
    in.raise("TypeError", "softmax() missing 1 required positional argument: 'x'", c.range);
  if (!in.inKernel_)
    return in.opaque("jax.nn.softmax of an array", c.range);
  if ((a[2] && !isa<NoneV>(a[2])) || (a[3] && !isa<NoneV>(a[3])))
    unsupported(c.range, "jax.nn.softmax with `where` or `initial`");
  int64_t axis = -1;
  if (a[1] && !isa<NoneV>(a[1])) {
    if (!isa<IntV>(a[1]))
      unsupported(c.range, "jax.nn.softmax over several axes");
    axis = cast<IntV>(a[1]).i;
  } else if (a[1]) {
    unsupported(c.range, "jax.nn.softmax over every axis (axis=None)");
  }
  using Op = ast::ComputeOp;
  const std::string api = "jax.nn.softmax";
  V max = in.computeValue(Op::ReduceMax, {a[0]}, std::nullopt, axis, c.range, api,
                          {{"keepdims", true}});
  V e = in.computeValue(Op::Exp, {in.valueBinop("-", a[0], max, c.range)}, std::nullopt,
                        std::nullopt, c.range, api);
  V sum = in.computeValue(Op::Sum, {e}, std::nullopt, axis, c.range, api, {{"keepdims", true}});
  return in.valueBinop("/", e, sum, c.range);
}

// The shape of a kernel value dkv knows (static extents), or a refusal naming `api`.
std::vector<int64_t> knownShape(Interp &in, const V &x, SourceRange r, std::string_view api) {
  std::optional<prim::ValueType> t = in.valueType(x);
  if (!t || t->kind != prim::ValueType::Kind::Array)
    unsupported(r, fmt::format("{} of a kernel value of unknown shape", api));
  for (int64_t d : t->shape)
    if (d < 0)
      unsupported(r, fmt::format("{} of a kernel value of unknown shape", api));
  return t->shape;
}

// `jnp.broadcast_to(x, shape)` in a kernel: `where(broadcasted_iota(i32, shape, 0) >= 0, x,
// x)`, the catalogue's broadcasting of `where` with a mask that is true everywhere (x
// itself when the shape is x's).
V broadcastTo(Interp &in, CallCtx &c) {
  auto a = c.bind(in, {"array", "shape", "*", "out_sharding"});
  if (!a[0] || !a[1])
    in.raise("TypeError", "broadcast_to() missing a required argument", c.range);
  const std::string api = "jnp.broadcast_to";
  if (!in.inKernel_) {
    if (a[0]->kind != Kind::Opaque && a[1]->kind != Kind::Opaque)
      if (V v = in.broadcastArray(a[0], in.shapeOf(a[1], c.range, "the shape"), c.range))
        return v;
    return in.opaque("jnp.broadcast_to of an array", c.range);
  }
  std::vector<int64_t> shape = in.shapeOf(a[1], c.range, "the shape");
  if (knownShape(in, a[0], c.range, api) == shape)
    return a[0];
  if (shape.empty())
    unsupported(c.range, "jnp.broadcast_to of a kernel value to a scalar shape");
  using Op = ast::ComputeOp;
  V iota = in.computeValue(Op::Iota, {}, ast::DType::I32, 0, c.range, api, {}, shape);
  V all = in.valueBinop(">=", iota, integer(0), c.range);
  return in.computeValue(Op::Where, {all, a[0], a[0]}, std::nullopt, std::nullopt, c.range, api);
}

// `jnp.argmax(x, axis=k, keepdims=...)` in a kernel: the first index of the maximum,
// `min(where(x == max(x, axis = k, keepdims = true), broadcasted_iota(i32, shape, k),
// extent), axis = k)`. NaN is compared as the catalogue's `max` compares it (JAX's
// argmax gives a NaN's index; dkv's values of a NaN input may differ, its verdicts not).
V argmax(Interp &in, CallCtx &c) {
  auto a = c.bind(in, {"a", "axis", "out", "keepdims"});
  if (!a[0])
    in.raise("TypeError", "argmax() missing 1 required positional argument: 'a'", c.range);
  if (!in.inKernel_)
    return in.opaque("jnp.argmax of an array", c.range);
  const std::string api = "jnp.argmax";
  if (a[2] && !isa<NoneV>(a[2]))
    unsupported(c.range, "jnp.argmax with `out`");
  if (!a[1] || isa<NoneV>(a[1]))
    unsupported(c.range, "jnp.argmax over every axis (axis=None) in a kernel");
  std::vector<int64_t> shape = knownShape(in, a[0], c.range, api);
  int64_t axis = in.toIndex(a[1], c.range, "axis");
  int64_t rank = static_cast<int64_t>(shape.size());
  if (axis < -rank || axis >= rank)
    in.raise("ValueError",
             fmt::format("axis {} is out of bounds for array of dimension {}", axis, rank),
             c.range);
  if (axis < 0)
    axis += rank;
  bool keepdims = a[3] && in.truth(a[3], c.range, "keepdims");
  using Op = ast::ComputeOp;
  V max = in.computeValue(Op::ReduceMax, {a[0]}, std::nullopt, axis, c.range, api,
                          {{"keepdims", true}});
  V iota = in.computeValue(Op::Iota, {}, ast::DType::I32, axis, c.range, api, {}, shape);
  V at = in.computeValue(
      Op::Where,
      {in.valueBinop("==", a[0], max, c.range), iota, integer(shape[static_cast<size_t>(axis)])},
      std::nullopt, std::nullopt, c.range, api);
  return in.computeValue(Op::ReduceMin, {at}, std::nullopt, axis, c.range, api,
                         {{"keepdims", keepdims}});
}

// `jnp.expand_dims(a, axis)` in a kernel: `reshape` to the shape with an extent of 1 at
// each axis (an int or a tuple; counted in the result's rank, negative from its end), as
// JAX's canonicalize_axis and lax.expand_dims give it.
V expandDims(Interp &in, CallCtx &c) {
  auto a = c.bind(in, {"a", "axis"});
  if (!a[0] || !a[1])
    in.raise("TypeError", "expand_dims() missing a required argument", c.range);
  if (!in.inKernel_)
    return hostExpandDims(in, c, false);
  const std::string api = "jnp.expand_dims";
  std::vector<int64_t> shape = knownShape(in, a[0], c.range, api);
  std::vector<int64_t> axes;
  if (a[1]->kind == Kind::Tuple || a[1]->kind == Kind::List)
    for (const V &x : in.toVector(a[1], c.range))
      axes.push_back(in.toIndex(x, c.range, "axis"));
  else
    axes.push_back(in.toIndex(a[1], c.range, "axis"));
  const int64_t rank = static_cast<int64_t>(shape.size() + axes.size());
  std::vector<bool> one =
      canonicalAxes(in, axes, rank, "repeated axis in lax.expand_dims", c.range);
  std::vector<int64_t> dims;
  size_t next = 0;
  for (int64_t i = 0; i < rank; ++i)
    dims.push_back(one[static_cast<size_t>(i)] ? 1 : shape[next++]);
  return in.computeValue(ast::ComputeOp::Reshape, {a[0]}, std::nullopt, std::nullopt, c.range, api,
                         {}, dims);
}

} // namespace

// `pl.select_ref(idx, *refs)` (jax/_src/pallas/helpers.py): the ref that idx picks at
// run time, for a DMA. A Python int picks it now; a per-device index (a loop index, an
// axis index, a table element and arithmetic on them) becomes the kernel language's
// `select_ref(i, a, b, ...)`, which lowering evaluates per device and iteration.
V selectRef(Interp &in, CallCtx &c) {
  if (!c.args.kw.empty())
    in.raiseId("TypeError", "select_ref() got an unexpected keyword argument", c.range);
  if (c.args.pos.size() <= 2)
    in.raise("ValueError", "At least two refs are required for pl.select_ref.", c.range);
  for (size_t i = 1; i < c.args.pos.size(); ++i) {
    const RefV *ref = dynRef(c.args.pos[i]);
    if (!ref)
      unsupported(c.range, fmt::format("pl.select_ref of a {} (dkv selects among refs and "
                                       "semaphores)",
                                       typeName(*c.args.pos[i])));
    if (ref->selectIndex)
      unsupported(c.range, "pl.select_ref of what another pl.select_ref picks by a per-device "
                           "index (select among the refs themselves)");
    if (ref->table)
      unsupported(c.range, "pl.select_ref of a table (an SMEM integer input read per element; "
                           "dkv selects refs for DMAs)");
  }
  const V &idx = c.args.pos[0];
  if (idx->kind == Kind::Opaque)
    in.opaqueNeeded(idx, c.range, "the index of pl.select_ref");
  if (const auto *t = dynCast<TracedV>(idx)) {
    if (t->tk != TKind::Int)
      unsupported(c.range,
                  t->tk == TKind::Bool
                      ? "pl.select_ref with a per-device condition as its index (give an "
                        "integer: jnp.where(cond, 1, 0))"
                      : "pl.select_ref with an index loaded from a ref whose contents dkv does "
                        "not know (known only when the kernel runs; an SMEM input with its "
                        "values at the call site is a table dkv reads)");
    const RefV &first = *dynRef(c.args.pos[1]);
    auto out = std::make_shared<RefV>(c.args.pos[1]->kind);
    out->name = first.name, out->dims = first.dims, out->subs = first.subs;
    out->dtype = first.dtype, out->semKind = first.semKind;
    out->selectIndex = t->te;
    out->choices.assign(c.args.pos.begin() + 1, c.args.pos.end());
    return out;
  }
  if (idx->kind != Kind::Int && idx->kind != Kind::Bool)
    unsupported(c.range, fmt::format("pl.select_ref with a {} as its index", typeName(*idx)));
  int64_t k = in.toIndex(idx, c.range, "the index of pl.select_ref");
  if (k < 0 || static_cast<size_t>(k) + 1 >= c.args.pos.size())
    unsupported(c.range, fmt::format("pl.select_ref with the index {} of {} refs (what the "
                                     "hardware does then is not documented)",
                                     k, c.args.pos.size() - 1));
  return c.args.pos[static_cast<size_t>(k) + 1];
}

namespace {

// NumPy's scalar type hierarchy: each type's abstract bases, nearest first (bool's is
// `generic` alone; complex types are not modelled).
const std::vector<std::string_view> *basesOf(std::string_view name) {
  static const std::vector<std::string_view> kFloating = {"floating", "inexact", "number",
                                                          "generic"},
                                             kSigned = {"signedinteger", "integer", "number",
                                                        "generic"},
                                             kUnsigned = {"unsignedinteger", "integer", "number",
                                                          "generic"},
                                             kBool = {"generic"},
                                             kAbsFloating = {"inexact", "number", "generic"},
                                             kAbsInteger = {"number", "generic"},
                                             kAbsNumber = {"generic"}, kNone = {};
  static const std::map<std::string_view, const std::vector<std::string_view> *> kTable = {
      {"float16", &kFloating},
      {"float32", &kFloating},
      {"float64", &kFloating},
      {"bfloat16", &kFloating},
      {"float8_e4m3fn", &kFloating},
      {"float8_e5m2", &kFloating},
      {"int4", &kSigned},
      {"int8", &kSigned},
      {"int16", &kSigned},
      {"int32", &kSigned},
      {"int64", &kSigned},
      {"uint8", &kUnsigned},
      {"uint16", &kUnsigned},
      {"uint32", &kUnsigned},
      {"uint64", &kUnsigned},
      {"bool", &kBool},
      {"floating", &kAbsFloating},
      {"signedinteger", &kAbsInteger},
      {"unsignedinteger", &kAbsInteger},
      {"integer", &kAbsInteger},
      {"inexact", &kAbsNumber},
      {"number", &kAbsNumber},
      {"generic", &kNone},
  };
  auto it = kTable.find(name);
  return it == kTable.end() ? nullptr : it->second;
}

// A scalar type's name as basesOf knows it: NumPy's (`np.bool_`'s dtype is `bool`).
std::string canonicalScalar(std::string name) {
  static const std::map<std::string, std::string, std::less<>> kAliases = {{"bool_", "bool"}};
  auto it = kAliases.find(name);
  return it == kAliases.end() ? name : it->second;
}

// JAX's own types, which NumPy's hierarchy does not place (ml_dtypes).
bool jaxOnlyScalar(std::string_view name) {
  static const std::set<std::string_view> kJaxOnly = {"bfloat16", "int4", "float8_e4m3fn",
                                                      "float8_e5m2"};
  return kJaxOnly.count(name) != 0;
}

// The name of the scalar type an argument of issubdtype names, as `np.dtype(x)` reads
// it (a dtype, an abstract type, an array's `.dtype`, a Python type, a dtype's name);
// nullopt for what dkv does not model.
std::optional<std::string> scalarTypeName(Interp &in, const V &v, SourceRange r) {
  if (auto *d = apiAs<DTypeObj>(v))
    return canonicalScalar(d->name);
  if (auto *k = apiAs<DTypeKindObj>(v))
    return k->name;
  if (auto *h = dynCast<HostArrayV>(v))
    return h->dtypeName(); // "float32", "float64" of a NumPy float64 array
  if (auto *c = dynCast<ClassV>(v)) {
    // np.dtype(int) is int64 (a C long on Linux), np.dtype(float) float64.
    if (c == in.builtinClass(ClassRole::Int).get())
      return std::string("int64");
    if (c == in.builtinClass(ClassRole::Float).get())
      return std::string("float64");
    if (c == in.builtinClass(ClassRole::Bool).get())
      return std::string("bool");
    return std::nullopt;
  }
  if (auto *s = dynCast<StrV>(v))
    if (basesOf(canonicalScalar(s->s)))
      return canonicalScalar(s->s);
  (void)r;
  return std::nullopt;
}

// `jnp.issubdtype(a, b)` (jax/_src/dtypes.py `issubdtype`): a's scalar type is b's or
// below it in NumPy's hierarchy. JAX places its own types (bfloat16, float8_*, int4) in
// the hierarchy; NumPy does not (`np.issubdtype(jnp.bfloat16, np.floating)` is False:
// they are below `generic` only).
V issubdtype(Interp &in, CallCtx &c) {
  auto a = c.bind(in, {"arg1", "arg2"});
  if (!a[0] || !a[1])
    in.raise("TypeError",
             fmt::format("issubdtype() missing 1 required positional argument: '{}'",
                         a[0] ? "arg2" : "arg1"),
             c.range);
  std::optional<std::string> x, y;
  for (size_t i = 0; i < 2; ++i) {
    if (a[i]->kind == Kind::Opaque)
      return in.opaque(fmt::format("{} of it", c.fn->name), c.range, a[i]);
    (i ? y : x) = scalarTypeName(in, a[i], c.range);
    if (!(i ? y : x))
      return in.opaque(
          fmt::format("{} of a {} (a type dkv does not model)", c.fn->name, typeName(*a[i])),
          c.range);
  }
  if (*x == *y)
    return boolean(true);
  const auto *bases = basesOf(*x);
  if (jaxOnlyScalar(*x) && c.fn->name.rfind("np.", 0) == 0)
    return boolean(basesOf(*y)->empty()); // np.generic alone
  return boolean(std::find(bases->begin(), bases->end(), *y) != bases->end());
}

} // namespace

// `jax.extend.core.concrete_or_error(force, val, context="")` (jax/_src/core.py): force(val)
// (val itself when force is None) where val is concrete; a tracer whose value JAX does
// not know raises ConcretizationTypeError. dkv's host values are concrete (an int, a
// host array, `lax.psum(1, axis)` inside shard_map: the axis size); a kernel's traced
// value is a tracer, whose concrete value dkv does not compute either (refused, naming
// JAX's error).
V concreteOrError(Interp &in, CallCtx &c) {
  auto a = c.bind(in, {"force", "val", "context"});
  if (!a[0] || !a[1])
    in.raise("TypeError",
             fmt::format("concrete_or_error() missing 1 required positional argument: '{}'",
                         a[0] ? "val" : "force"),
             c.range);
  if (a[1]->kind == Kind::Opaque)
    return in.opaque("jax.extend.core.concrete_or_error of it", c.range, a[1]);
  if (a[1]->kind == Kind::Traced)
    unsupported(c.range, "concrete_or_error of a value the kernel computes (a tracer: JAX "
                         "raises ConcretizationTypeError unless it knows the value)");
  if (a[0]->kind == Kind::None)
    return a[1];
  return in.call(a[0], Args{{a[1]}, {}}, c.range);
}

void registerJaxSrc(Registry &reg) {
  reg.addRow(ApiRow{{"jax.extend.core.concrete_or_error", "jax._src.core.concrete_or_error"},
                    BuiltinFn{"concrete_or_error", concreteOrError, "", false},
                    nullptr});
  reg.addRemoved("jax.core.concrete_or_error",
                 "jax.core.concrete_or_error was deprecated in JAX v0.10.0 and removed in JAX "
                 "v0.11.0.  Use jax.extend.core.concrete_or_error.");
  reg.addRow(ApiRow{{"jax.numpy.issubdtype", "jax.dtypes.issubdtype"},
                    BuiltinFn{"jnp.issubdtype", issubdtype, "", false},
                    nullptr});
  reg.addRow(
      ApiRow{{"numpy.issubdtype"}, BuiltinFn{"np.issubdtype", issubdtype, "", false}, nullptr});
  // NumPy's abstract scalar types (jnp's are NumPy's).
  using K = V (*)(Interp &);
  const std::pair<const char *, K> kinds[] = {
      {"floating", [](Interp &) { return makeApi(DTypeKindObj{"floating"}); }},
      {"integer", [](Interp &) { return makeApi(DTypeKindObj{"integer"}); }},
      {"signedinteger", [](Interp &) { return makeApi(DTypeKindObj{"signedinteger"}); }},
      {"unsignedinteger", [](Interp &) { return makeApi(DTypeKindObj{"unsignedinteger"}); }},
      {"inexact", [](Interp &) { return makeApi(DTypeKindObj{"inexact"}); }},
      {"number", [](Interp &) { return makeApi(DTypeKindObj{"number"}); }},
      {"generic", [](Interp &) { return makeApi(DTypeKindObj{"generic"}); }},
  };
  for (const auto &[name, make] : kinds)
    reg.addRow(ApiRow{
        {std::string("jax.numpy.") + name, std::string("numpy.") + name}, BuiltinFn{}, make});
  reg.addRow(ApiRow{{"jax.experimental.pallas.select_ref"},
                    BuiltinFn{"pl.select_ref", selectRef, "the ref an index picks", true},
                    nullptr});
  reg.addRow(ApiRow{{"jax.nn.softmax"}, BuiltinFn{"jax.nn.softmax", softmax, "", false}, nullptr});
  reg.addRow(ApiRow{
      {"jax.numpy.broadcast_to"}, BuiltinFn{"jnp.broadcast_to", broadcastTo, "", false}, nullptr});
  reg.addRow(ApiRow{{"jax.numpy.argmax"}, BuiltinFn{"jnp.argmax", argmax, "", false}, nullptr});
  reg.addRow(ApiRow{
      {"jax.numpy.expand_dims"}, BuiltinFn{"jnp.expand_dims", expandDims, "", false}, nullptr});
  reg.addRow(ApiRow{{"jax.experimental.pallas.multiple_of"},
                    BuiltinFn{"pl.multiple_of", multipleOf, "", false},
                    nullptr});
  reg.addRow(ApiRow{{"jax.experimental.pallas.tpu.with_memory_space_constraint"},
                    BuiltinFn{"pltpu.with_memory_space_constraint", withMemorySpace, "", false},
                    nullptr});
  reg.addRow(ApiRow{
      {"jax.experimental.pallas.empty"}, BuiltinFn{"pl.empty", plEmpty, "", false}, nullptr});
  reg.addRow(ApiRow{{"jax.numpy.pad", "numpy.pad"}, BuiltinFn{"jnp.pad", pad, "", false}, nullptr});
  reg.addModule("jax._src.dtypes");
  reg.addRow(ApiRow{{"jax._src.dtypes.itemsize_bits", "jax.dtypes.itemsize_bits"},
                    BuiltinFn{"dtypes.itemsize_bits", itemsizeBits, "", false},
                    nullptr});
  reg.addRow(ApiRow{
      {"jax.numpy.dtype", "numpy.dtype"}, BuiltinFn{"jnp.dtype", dtypeOf, "", false}, nullptr});
  reg.addRow(
      ApiRow{{"jax.experimental.pallas.cdiv"}, BuiltinFn{"pl.cdiv", cdiv, "", false}, nullptr});
  reg.addRow(ApiRow{{"jax._src.dtypes.bit_width"},
                    BuiltinFn{"dtypes.bit_width", itemsizeBits, "", false},
                    nullptr});
}

} // namespace dkv::pytrace
