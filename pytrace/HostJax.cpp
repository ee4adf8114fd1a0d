// Host-side JAX: devices and meshes, arrays as shape and dtype (with the contents of
// small integer arrays: tables), shard_map, jit, pallas_call and its specs, the dtypes,
// memory spaces and semaphore types, as rows of the registry (docs/python.md "At the
// call site").
#include "pytrace/Interp.h"
#include "support/IntArith.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <functional>
#include <limits>
#include <set>

namespace dkv::pytrace {

namespace {

bool given(const V &v) { return v && v->kind != Kind::None; }

V need(Interp &in, const CallCtx &c, const std::vector<V> &a, size_t i, const char *name) {
  if (!a[i])
    in.raiseId("TypeError", fmt::format("{}() missing required argument: '{}'", c.fn->name, name),
               c.range);
  return a[i];
}

} // namespace

//===----------------------------------------------------------------------===//
// Arrays
//===----------------------------------------------------------------------===//

V Interp::makeArray(std::vector<int64_t> shape, ast::DType dtype, bool isStruct) {
  return std::make_shared<HostArrayV>(std::move(shape), dtype, isStruct);
}

std::vector<int64_t> Interp::shapeOf(const V &v, SourceRange r, std::string_view what) {
  std::vector<int64_t> out;
  if (v->kind == Kind::Int) {
    out.push_back(cast<IntV>(v).i);
    return out;
  }
  if (v->kind == Kind::Opaque)
    opaqueNeeded(v, r, what);
  if (v->kind != Kind::Tuple && v->kind != Kind::List)
    fail(r, "python-unknown-fact",
         fmt::format("{}: expected a shape (a tuple of ints), got {}", what, typeName(*v)));
  for (const V &d : toVector(v, r))
    out.push_back(toIndex(d, r, what));
  return out;
}

namespace {
// NumPy's 64-bit types: the 32-bit type JAX without x64 makes of each
// (dtypes.canonicalize_dtype), and whether dkv models NumPy's arrays of it (x64).
struct WideType {
  std::string_view name;
  ast::DType jax;
  bool numpy;
};
constexpr WideType kWideTypes[] = {{"float64", ast::DType::F32, true},
                                   {"int64", ast::DType::I32, true},
                                   {"uint64", ast::DType::U32, false}};
// The 64-bit type a dtype argument names (`np.float64`, `'int64'`, Python's `float` and
// `int`: NumPy's float64 and C long), or null.
const WideType *wideType(const V &v) {
  std::string name;
  if (auto *str = dynCast<StrV>(v))
    name = str->s;
  else if (auto *d = apiAs<DTypeObj>(v); d && !d->dtype)
    name = d->name;
  else if (auto *c = dynCast<ClassV>(v))
    name = c->role == ClassRole::Int ? "int64" : c->role == ClassRole::Float ? "float64" : "";
  for (const WideType &w : kWideTypes)
    if (w.name == name)
      return &w;
  return nullptr;
}
} // namespace

ast::DType Interp::dtypeArg(const V &v, SourceRange r) {
  if (!v || v->kind == Kind::None)
    return ast::DType::F32;
  if (v->kind == Kind::Opaque)
    opaqueNeeded(v, r, "an element type");
  // A dtype's name (`x.astype('float32')`), as NumPy's dtype() reads it.
  if (auto *str = dynCast<StrV>(v))
    if (auto t = prim::dtypeFromPython("jnp." + str->s))
      return *t;
  // JAX without x64 makes a 64-bit type its 32-bit one wherever a type is asked for
  // (dtypes.canonicalize_dtype: `jnp.zeros(n, jnp.float64)` is float32, `dtype=int`
  // int32).
  if (const WideType *w = wideType(v))
    return w->jax;
  auto *d = apiAs<DTypeObj>(v);
  if (!d || !d->dtype)
    unsupported(r, fmt::format("the element type {} (dkv supports jnp.float32, bfloat16, "
                               "float16, int32, int16, int8, uint8, uint32)",
                               d ? d->name : typeName(*v)));
  return *d->dtype;
}

namespace {
// Whether every integer holds in `dt` (int64 where `x64`) unchanged.
bool fitsType(const std::optional<std::vector<int64_t>> &values, ast::DType dt, bool x64) {
  if (!values || x64)
    return true;
  return std::all_of(values->begin(), values->end(), [&](int64_t v) {
    return prim::roundTo(static_cast<double>(v), dt) == static_cast<double>(v);
  });
}
// Whether the integer contents of `a` (all devices') hold in `dt` unchanged.
bool contentsFit(const HostArrayV &a, ast::DType dt, bool x64) {
  if (!fitsType(a.contents, dt, x64))
    return false;
  return !a.deviceContents ||
         std::all_of(a.deviceContents->begin(), a.deviceContents->end(),
                     [&](const std::vector<int64_t> &c) { return fitsType(c, dt, x64); });
}
} // namespace

std::pair<ast::DType, bool> Interp::numpyDtypeArg(const V &v, SourceRange r) {
  const WideType *w = wideType(v);
  if (!w)
    return {dtypeArg(v, r), false};
  if (!w->numpy)
    unsupported(r, fmt::format("the NumPy element type {} (dkv models NumPy's float64 and "
                               "int64 arrays, not {})",
                               w->name, w->name));
  return {w->jax, true};
}

// `jnp.array([[0, 1], [2, 3]], dtype=jnp.int32)`, `np.array(...)` or a Python list: an
// array whose values the file states. Only integer contents are kept (a table's); the
// default element type is int32, what JAX makes of Python ints (int64 for NumPy's).
V Interp::knownArray(const V &data, const V &dtype, SourceRange r, bool numpy) {
  auto typeArg = [&](const V &t) {
    return numpy ? numpyDtypeArg(t, r) : std::pair{dtypeArg(t, r), false};
  };
  if (auto *a = dynCast<HostArrayV>(data)) {
    if (!given(dtype))
      return data;
    auto [dt, x64] = typeArg(dtype);
    auto out = std::make_shared<HostArrayV>(a->shape, dt, a->isStruct);
    out->x64 = x64;
    // Integer contents are kept where every value fits the new type (NumPy's and JAX's
    // casts wrap the others, which dkv does not model here: unknown values).
    if (ast::isInteger(dt) && ast::isInteger(a->dtype) && contentsFit(*a, dt, x64)) {
      out->contents = a->contents;
      out->deviceContents = a->deviceContents;
    }
    return out;
  }
  if (apiAs<DeviceArrayObj>(data))
    return data; // np.array(jax.devices()[:n])
  // A list of devices: np.array(jax.devices()).
  if (data->kind == Kind::List || data->kind == Kind::Tuple) {
    std::vector<V> items = toVector(data, r);
    if (!items.empty() && apiAs<DeviceObj>(items[0])) {
      // The ids in the list's order (`np.array(jax.devices()[::-1])`), unless one of
      // them is unknown.
      std::vector<int64_t> ids;
      for (const V &d : items) {
        auto *dev = apiAs<DeviceObj>(d);
        if (!dev || dev->id < 0) {
          ids.clear();
          break;
        }
        ids.push_back(dev->id);
      }
      return makeApi(DeviceArrayObj{{static_cast<int64_t>(items.size())}, std::move(ids)});
    }
  }
  if (data->kind == Kind::Opaque)
    return opaque("an array made of it", r, data);
  auto [dt, x64] = given(dtype) ? typeArg(dtype) : std::pair{ast::DType::I32, numpy};
  std::vector<int64_t> shape;
  for (const Value *v = data.get(); v && (v->kind == Kind::List || v->kind == Kind::Tuple);) {
    const std::vector<V> &items = v->kind == Kind::List ? static_cast<const ListV *>(v)->items
                                                        : static_cast<const TupleV *>(v)->items;
    shape.push_back(static_cast<int64_t>(items.size()));
    v = items.empty() ? nullptr : items[0].get();
  }
  bool floats = false;
  size_t bools = 0;
  std::vector<int64_t> flat;
  std::function<void(const V &, size_t)> walk = [&](const V &v, size_t depth) {
    bool seq = v->kind == Kind::List || v->kind == Kind::Tuple;
    if (seq != (depth < shape.size()) ||
        (seq && static_cast<int64_t>(toVector(v, r).size()) != shape[depth]))
      raise("ValueError",
            "setting an array element with a sequence. The requested array has an inhomogeneous "
            "shape",
            r);
    if (seq) {
      for (const V &x : toVector(v, r))
        walk(x, depth + 1);
      return;
    }
    if (v->kind == Kind::Int || v->kind == Kind::Bool) {
      bools += v->kind == Kind::Bool;
      flat.push_back(v->kind == Kind::Int ? cast<IntV>(v).i : cast<BoolV>(v).b);
      return;
    }
    if (v->kind == Kind::Float) {
      floats = true;
      return;
    }
    if (v->kind == Kind::Opaque)
      opaqueNeeded(v, r, "an element of an array");
    fail(r, "python-type",
         fmt::format("an element of an array must be a number, got {}", typeName(*v)));
  };
  walk(data, 0);
  // No element, or a float among them: floats (NumPy's float64, JAX's float32).
  if ((floats || flat.empty()) && !given(dtype))
    dt = ast::DType::F32;
  // Only bools: NumPy's and JAX's bool arrays, a type dkv does not model.
  if (!given(dtype) && !flat.empty() && !floats && bools == flat.size())
    return opaque("an array of bools (a type dkv does not model)", r);
  auto a = std::make_shared<HostArrayV>(shape, dt);
  a->x64 = x64;
  if (ast::isInteger(dt) && !floats)
    a->contents = std::move(flat);
  return a;
}

// `array.reshape(d0, d1, ...)` or `array.reshape((d0, d1, ...))`: the same elements in
// row-major order, one dimension may be -1.
V Interp::reshapeArray(const HostArrayV &array, const Args &args, SourceRange r) {
  if (!args.kw.empty() || args.pos.empty())
    fail(r, "python-call",
         "`.reshape` takes the new shape (keyword arguments such as `order` are not supported)");
  V shapeV =
      args.pos.size() == 1 && (args.pos[0]->kind == Kind::Tuple || args.pos[0]->kind == Kind::List)
          ? args.pos[0]
          : tuple(args.pos);
  std::vector<int64_t> shape;
  for (const V &d : toVector(shapeV, r))
    shape.push_back(toIndex(d, r, "a dimension of `.reshape`"));
  int64_t total = array.size();
  int64_t known = 1, unknownAt = -1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1 && unknownAt < 0)
      unknownAt = static_cast<int64_t>(i);
    else if (shape[i] < 0)
      raise("ValueError", "can only specify one unknown dimension", r);
    else
      known *= shape[i];
  }
  if (unknownAt >= 0 && known > 0 && total % known == 0)
    shape[static_cast<size_t>(unknownAt)] = total / known;
  int64_t product = 1;
  for (int64_t d : shape)
    product *= d;
  if (product != total || (unknownAt >= 0 && known == 0))
    raise("ValueError",
          fmt::format("cannot reshape array of size {} into shape ({})", total,
                      fmt::join(shape, ", ")),
          r);
  auto out = std::make_shared<HostArrayV>(shape, array.dtype, array.isStruct);
  out->numpy = array.numpy;
  out->x64 = array.x64;
  out->contents = array.contents;
  out->deviceContents = array.deviceContents;
  return out;
}

namespace {

const BuiltinFn &arrayReshape() {
  static const BuiltinFn fn{"ndarray.reshape",
                            +[](Interp &in, CallCtx &c) -> V {
                              return in.reshapeArray(cast<HostArrayV>(c.self), c.args, c.range);
                            },
                            "", false};
  return fn;
}
const BuiltinFn &arrayAstype() {
  static const BuiltinFn fn{
      "ndarray.astype",
      +[](Interp &in, CallCtx &c) -> V {
        std::vector<V> a = c.bind(in, {"dtype"});
        const auto &arr = cast<HostArrayV>(c.self);
        const V &t = need(in, c, a, 0, "dtype");
        auto [dt, x64] =
            arr.numpy ? in.numpyDtypeArg(t, c.range) : std::pair{in.dtypeArg(t, c.range), false};
        auto out = std::make_shared<HostArrayV>(arr.shape, dt);
        out->numpy = arr.numpy;
        out->x64 = x64;
        // Values that do not fit wrap around: left unknown.
        if (ast::isInteger(out->dtype) && ast::isInteger(arr.dtype) && contentsFit(arr, dt, x64)) {
          out->contents = arr.contents;
          out->deviceContents = arr.deviceContents;
        }
        return out;
      },
      "", false};
  return fn;
}

std::vector<int64_t> stridesOf(const std::vector<int64_t> &shape) {
  std::vector<int64_t> st(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;)
    st[d - 1] = st[d] * shape[d];
  return st;
}

// An axis argument as numpy normalizes it (negative from the end).
int64_t axisArg(Interp &in, const V &v, size_t ndim, SourceRange r) {
  int64_t ax = in.toIndex(v, r, "an axis");
  int64_t n = static_cast<int64_t>(ndim);
  if (ax < -n || ax >= n)
    in.raise("ValueError", fmt::format("axis {} is out of bounds for array of dimension {}", ax, n),
             r);
  return ax < 0 ? ax + n : ax;
}

// The array of `arr`'s elements with its dimensions in the order `perm` (a permutation):
// integer values kept, the sharding unknown.
V transposeArray(Interp &in, const HostArrayV &arr, const std::vector<size_t> &perm,
                 SourceRange r) {
  size_t n = arr.shape.size();
  std::vector<int64_t> shape;
  for (size_t p : perm)
    shape.push_back(arr.shape[p]);
  std::vector<int64_t> src = stridesOf(arr.shape), dst = stridesOf(shape);
  in.alloc(static_cast<uint64_t>(arr.size()), r);
  return in.mapContents(arr, shape, [&](const std::vector<int64_t> &v) {
    std::vector<int64_t> out(v.size());
    for (size_t flat = 0; flat < out.size(); ++flat) {
      size_t from = 0;
      for (size_t d = 0; d < n; ++d)
        from +=
            static_cast<size_t>((static_cast<int64_t>(flat) / dst[d]) % shape[d] * src[perm[d]]);
      out[flat] = v[from];
    }
    return out;
  });
}

// `a.transpose(axes)` / `a.transpose(*axes)` / `a.T`-like reversal without axes.
const BuiltinFn &arrayTranspose() {
  static const BuiltinFn fn{
      "ndarray.transpose",
      +[](Interp &in, CallCtx &c) -> V {
        const auto &arr = cast<HostArrayV>(c.self);
        if (!c.args.kw.empty())
          in.raiseId("TypeError", "transpose() takes no keyword arguments", c.range);
        std::vector<V> axes = c.args.pos;
        if (axes.size() == 1 && (axes[0]->kind == Kind::Tuple || axes[0]->kind == Kind::List))
          axes = in.toVector(axes[0], c.range);
        else if (axes.size() == 1 && axes[0]->kind == Kind::None)
          axes.clear();
        size_t n = arr.shape.size();
        std::vector<size_t> perm;
        if (axes.empty())
          for (size_t d = n; d-- > 0;)
            perm.push_back(d);
        else
          for (const V &ax : axes)
            perm.push_back(static_cast<size_t>(axisArg(in, ax, n, c.range)));
        std::vector<bool> seen(n, false);
        for (size_t p : perm) {
          if (perm.size() != n || seen[p])
            in.raise("ValueError", "axes don't match array", c.range);
          seen[p] = true;
        }
        return transposeArray(in, arr, perm, c.range);
      },
      "", false};
  return fn;
}

// `jnp.swapaxes(a, axis1, axis2)` (jax/_src/numpy/lax_numpy.py: the identity permutation
// with the two entries swapped, indexed as a NumPy array is, so an axis out of range is
// its IndexError) and NumPy's, whose out-of-range axes (an AxisError) dkv refuses.
V swapAxes(Interp &in, const HostArrayV &arr, const V &axis1, const V &axis2, bool numpy,
           SourceRange r) {
  int64_t n = static_cast<int64_t>(arr.shape.size());
  std::vector<size_t> perm(arr.shape.size());
  for (size_t d = 0; d < perm.size(); ++d)
    perm[d] = d;
  int64_t ax[2];
  for (int k = 0; k < 2; ++k) {
    ax[k] = in.toIndex(k ? axis2 : axis1, r, k ? "axis2" : "axis1");
    if (ax[k] < -n || ax[k] >= n) {
      if (numpy)
        unsupported(r, fmt::format("np.swapaxes with an axis out of range (NumPy's AxisError)"));
      in.raise("IndexError",
               fmt::format("index {} is out of bounds for axis 0 with size {}", ax[k], n), r);
    }
    if (ax[k] < 0)
      ax[k] += n;
  }
  std::swap(perm[static_cast<size_t>(ax[0])], perm[static_cast<size_t>(ax[1])]);
  V out = transposeArray(in, arr, perm, r);
  auto &h = cast<HostArrayV>(out);
  h.numpy = numpy;
  if (!numpy && h.x64) { // jnp's of a NumPy float64 / int64 array: JAX's 32-bit one
    h.x64 = false;
    if (!contentsFit(h, h.dtype, false))
      h.contents.reset(), h.deviceContents.reset();
  }
  return out;
}

// `a.swapaxes(axis1, axis2)`.
const BuiltinFn &arraySwapaxes() {
  static const BuiltinFn fn{"ndarray.swapaxes",
                            +[](Interp &in, CallCtx &c) -> V {
                              std::vector<V> a = c.bind(in, {"axis1", "axis2"});
                              const auto &arr = cast<HostArrayV>(c.self);
                              return swapAxes(in, arr, need(in, c, a, 0, "axis1"),
                                              need(in, c, a, 1, "axis2"), arr.numpy, c.range);
                            },
                            "", false};
  return fn;
}

// The array of `arr`'s elements in row-major order under another shape (expand_dims,
// squeeze, ravel, stack's parts): integer values kept (JAX's 32-bit where they fit), the
// sharding unknown.
V reshaped(const HostArrayV &arr, std::vector<int64_t> shape, bool numpy) {
  auto out = std::make_shared<HostArrayV>(std::move(shape), arr.dtype);
  out->numpy = numpy;
  out->x64 = numpy && arr.x64;
  if (arr.contents && !arr.deviceContents) {
    out->contents = arr.contents;
    if (!contentsFit(*out, out->dtype, out->x64))
      out->contents.reset();
  }
  return out;
}

// The host array a shape function takes (`a`), or null: other values are opaque to it.
const HostArrayV *shapeOperand(Interp &in, CallCtx &c, const V &v) {
  if (in.inKernel_)
    unsupported(c.range, fmt::format("{} in a kernel (not in the compute catalogue; reshape "
                                     "the value or index the ref)",
                                     c.fn->name));
  auto *h = dynCast<HostArrayV>(v);
  return h && !h->isStruct && !h->key ? h : nullptr;
}

// `np.expand_dims(a, axis)` / jnp's: a dimension of 1 at each axis (an int or a tuple,
// negative from the end of the result), NumPy's ValueErrors for one out of range or
// repeated.
V expandDims(Interp &in, CallCtx &c, bool numpy) {
  std::vector<V> a = c.bind(in, {"a", "axis"});
  const HostArrayV *h = shapeOperand(in, c, need(in, c, a, 0, "a"));
  if (!h)
    return in.opaque("expand_dims of a value that is no host array", c.range, a[0]);
  const V &axisV = need(in, c, a, 1, "axis");
  std::vector<V> axes = axisV->kind == Kind::Tuple || axisV->kind == Kind::List
                            ? in.toVector(axisV, c.range)
                            : std::vector<V>{axisV};
  size_t ndim = h->shape.size() + axes.size();
  std::vector<bool> isNew(ndim, false);
  for (const V &ax : axes) {
    auto d = static_cast<size_t>(axisArg(in, ax, ndim, c.range));
    if (isNew[d])
      in.raise("ValueError", "repeated axis", c.range);
    isNew[d] = true;
  }
  std::vector<int64_t> shape;
  size_t k = 0;
  for (size_t d = 0; d < ndim; ++d)
    shape.push_back(isNew[d] ? 1 : h->shape[k++]);
  return reshaped(*h, std::move(shape), numpy);
}

// `np.squeeze(a, axis=None)` / jnp's: the dimensions of 1 removed (the given ones only,
// NumPy's ValueError for one that is not 1).
V squeezeDims(Interp &in, CallCtx &c, bool numpy) {
  std::vector<V> a = c.bind(in, {"a", "axis"});
  const HostArrayV *h = shapeOperand(in, c, need(in, c, a, 0, "a"));
  if (!h)
    return in.opaque("squeeze of a value that is no host array", c.range, a[0]);
  std::vector<bool> drop(h->shape.size(), false);
  if (given(a[1])) {
    for (const V &ax : a[1]->kind == Kind::Tuple || a[1]->kind == Kind::List
                           ? in.toVector(a[1], c.range)
                           : std::vector<V>{a[1]}) {
      auto d = static_cast<size_t>(axisArg(in, ax, h->shape.size(), c.range));
      if (h->shape[d] != 1)
        in.raise("ValueError",
                 "cannot select an axis to squeeze out which has size not equal to one", c.range);
      drop[d] = true;
    }
  } else {
    for (size_t d = 0; d < drop.size(); ++d)
      drop[d] = h->shape[d] == 1;
  }
  std::vector<int64_t> shape;
  for (size_t d = 0; d < drop.size(); ++d)
    if (!drop[d])
      shape.push_back(h->shape[d]);
  return reshaped(*h, std::move(shape), numpy);
}

// `np.ravel(a)` / jnp's: the elements in one dimension.
V ravelArray(Interp &in, CallCtx &c, bool numpy) {
  std::vector<V> a = c.bind(in, {"a", "order"});
  const HostArrayV *h = shapeOperand(in, c, need(in, c, a, 0, "a"));
  if (!h || given(a[1]))
    return in.opaque("ravel of a value that is no host array, or in another order", c.range);
  return reshaped(*h, {h->size()}, numpy);
}

// `np.stack(arrays, axis=0)` / jnp's: the arrays (one shape and element type) along a new
// axis; NumPy's ValueError for different shapes or no array.
V stackArrays(Interp &in, CallCtx &c, bool numpy) {
  std::vector<V> a = c.bind(in, {"arrays", "axis"});
  std::vector<V> items = in.toVector(need(in, c, a, 0, "arrays"), c.range);
  if (items.empty())
    in.raise("ValueError", "need at least one array to stack", c.range);
  std::vector<const HostArrayV *> parts;
  for (const V &x : items) {
    const HostArrayV *h = shapeOperand(in, c, x);
    if (!h)
      return in.opaque("stack of a value that is no host array", c.range, x);
    if (!parts.empty() && h->shape != parts[0]->shape)
      in.raise("ValueError", "all input arrays must have the same shape", c.range);
    if (!parts.empty() && (h->dtype != parts[0]->dtype || h->x64 != parts[0]->x64))
      return in.opaque("stack of arrays of different element types", c.range);
    parts.push_back(h);
  }
  std::vector<int64_t> one = parts[0]->shape;
  size_t axis = given(a[1]) ? static_cast<size_t>(axisArg(in, a[1], one.size() + 1, c.range)) : 0;
  // Each part as a slab of extent 1 at `axis`, joined along it.
  std::vector<V> slabs;
  std::vector<int64_t> slab = one;
  slab.insert(slab.begin() + static_cast<long>(axis), 1);
  for (const HostArrayV *p : parts)
    slabs.push_back(reshaped(*p, slab, numpy));
  return in.concatArrays(list(std::move(slabs)), integer(static_cast<int64_t>(axis)), c.range,
                         numpy);
}

// `jnp.tile(a, reps)` / `np.tile(a, reps)` of a host array (NumPy's rule, JAX's the same):
// the shorter of a's shape and reps is padded with leading 1s, the result's extents are
// their products, element i is a's at i modulo its shape.
V tileArray(Interp &in, CallCtx &c, bool numpy) {
  std::vector<V> a = c.bind(in, {"A", "reps"});
  if (in.inKernel_)
    unsupported(c.range, "jnp.tile in a kernel (not in the compute catalogue; tile a host "
                         "array, or build the block with jnp.concatenate)");
  const V &x = need(in, c, a, 0, "A");
  auto *h = dynCast<HostArrayV>(x);
  if (!h || h->isStruct || h->key)
    return in.opaque(fmt::format("jnp.tile of a {}", typeName(*x)), c.range, x);
  const V &repsV = need(in, c, a, 1, "reps");
  std::vector<int64_t> reps;
  for (const V &v : repsV->kind == Kind::Tuple || repsV->kind == Kind::List
                        ? in.toVector(repsV, c.range)
                        : std::vector<V>{repsV}) {
    int64_t k = in.toIndex(v, c.range, "reps");
    if (k < 0)
      in.raise("ValueError", "negative dimensions are not allowed", c.range);
    reps.push_back(k);
  }
  std::vector<int64_t> from = h->shape;
  while (from.size() < reps.size())
    from.insert(from.begin(), 1);
  while (reps.size() < from.size())
    reps.insert(reps.begin(), 1);
  std::vector<int64_t> shape(from.size());
  for (size_t d = 0; d < shape.size(); ++d)
    shape[d] = from[d] * reps[d];
  auto out = std::make_shared<HostArrayV>(shape, h->dtype);
  out->numpy = numpy;
  out->x64 = numpy && h->x64;
  if (h->contents && !h->deviceContents) {
    int64_t size = out->size();
    in.alloc(static_cast<uint64_t>(size), c.range);
    std::vector<int64_t> dst = stridesOf(shape), src = stridesOf(from),
                         values(static_cast<size_t>(size));
    for (int64_t flat = 0; flat < size; ++flat) {
      int64_t at = 0;
      for (size_t d = 0; d < shape.size(); ++d)
        at += flat / dst[d] % shape[d] % from[d] * src[d];
      values[static_cast<size_t>(flat)] = (*h->contents)[static_cast<size_t>(at)];
    }
    out->contents = std::move(values);
    if (!contentsFit(*out, out->dtype, out->x64))
      out->contents.reset();
  }
  return out;
}

V dtypeLimits(Interp &in, CallCtx &c, bool floats) {
  std::vector<V> a = c.bind(in, {floats ? "dtype" : "int_type"});
  const V &t = need(in, c, a, 0, floats ? "dtype" : "int_type");
  if (auto *h = dynCast<HostArrayV>(t); h && !h->isStruct)
    return makeApi(DTypeLimitsObj{h->dtype, h->x64}); // of an array: its type's
  auto [dt, x64] = in.numpyDtypeArg(t, c.range);
  if (ast::isInteger(dt) == floats)
    in.raise(
        "ValueError",
        fmt::format("data type {} not {}",
                    x64 ? std::string(floats ? "<class 'numpy.int64'>" : "<class 'numpy.float64'>")
                        : fmt::format("<class '{}'>", prim::pythonName(dt)),
                    floats ? "inexact" : "an integer type"),
        c.range);
  return makeApi(DTypeLimitsObj{dt, x64});
}

// `jnp.promote_types(a, b)` and `jnp.result_type(*args)`: JAX's promotion lattice
// (prim::promote) over dtypes, host arrays (their type) and Python numbers (weak), the
// result a dtype. 64-bit NumPy types, bools and traced values are unknown to dkv here.
V promoteTypes(Interp &in, CallCtx &c, bool pairOnly) {
  if (!c.args.kw.empty() || (pairOnly && c.args.pos.size() != 2) || c.args.pos.empty())
    return in.opaque(pairOnly ? "jnp.promote_types with other than two types"
                              : "jnp.result_type with keywords or no argument",
                     c.range);
  std::optional<prim::ElemType> out;
  for (const V &x : c.args.pos) {
    prim::ElemType t;
    if (x->kind == Kind::Int && !scalarOfType(x) && !pairOnly) {
      t = prim::kWeakInt;
    } else if (x->kind == Kind::Float && !scalarOfType(x) && !pairOnly) {
      t = prim::kWeakFloat;
    } else if (auto *h = dynCast<HostArrayV>(x)) {
      if (h->x64 || h->key)
        return in.opaque("the promotion of a 64-bit NumPy array's type", c.range);
      t = {h->dtype, false};
    } else if (apiAs<DTypeObj>(x) || x->kind == Kind::Class || x->kind == Kind::Str) {
      auto [dt, x64] = in.numpyDtypeArg(x, c.range);
      if (x64)
        return in.opaque("the promotion of a 64-bit type", c.range);
      t = {dt, false};
    } else {
      return in.opaque(fmt::format("the promotion of a {}", typeName(*x)), c.range, x);
    }
    out = out ? prim::promote(*out, t) : t;
  }
  std::string name(prim::pythonName(out->dtype));
  return makeApi(
      DTypeObj{out->dtype, name.substr(name.find('.') + 1), DTypeForm::Dtype}); // np.dtype
}

// `np.prod(shape)`, `np.sum(sizes)` of a tuple or list of Python ints (a size from a
// shape, the common host use): NumPy's int64 scalar, exact (beyond 64 bits NumPy wraps;
// dkv leaves that unknown). Floats, arrays, `axis=` and the rest are unknown to dkv
// (NumPy sums floats pairwise, so even their rounding is its own).
V intReduce(Interp &in, CallCtx &c, bool prod) {
  const char *name = prod ? "np.prod" : "np.sum";
  if (c.args.pos.size() != 1 || !c.args.kw.empty())
    return in.opaque(fmt::format("{} with more than one argument", name), c.range);
  const V &x = c.args.pos[0];
  if (x->kind != Kind::Tuple && x->kind != Kind::List)
    return in.opaque(fmt::format("{} of a {}", name, typeName(*x)), c.range, x);
  std::vector<V> items = in.toVector(x, c.range);
  if (items.empty()) // NumPy's empty array is float64: 1.0 and 0.0
    return in.opaque(fmt::format("{} of an empty sequence (a float64)", name), c.range);
  __int128 acc = prod ? 1 : 0;
  for (const V &item : items) {
    if (item->kind != Kind::Int || scalarOfType(item))
      return in.opaque(fmt::format("{} of a sequence holding a {}", name, typeName(*item)), c.range,
                       item);
    __int128 v = cast<IntV>(item).i;
    acc = prod ? acc * v : acc + v;
    if (acc > INT64_MAX || acc < INT64_MIN)
      return in.opaque(fmt::format("{} beyond 64 bits (NumPy wraps it)", name), c.range);
  }
  ScalarType st;
  st.from = ScalarType::From::NumPy;
  st.v1 = st.v2 = ScalarType::T{ast::DType::I32, true};
  return withScalar(integer(static_cast<int64_t>(acc)), st);
}

// Sums (exact) of an integer array of type `from` as the array NumPy (`numpy`) or JAX
// gives: NumPy's sum of a signed integer array is an int64 array (its platform integer),
// JAX's widens to int32 / uint32 (jnp.sum), where a sum that does not fit wraps (left
// unknown).
V sumResult(const HostArrayV &sums, ast::DType from, bool numpy) {
  ast::DType t = numpy ? ast::DType::I32 : prim::sumType({from, false}).dtype;
  auto out = std::make_shared<HostArrayV>(sums.shape, t);
  out->numpy = numpy;
  out->x64 = numpy;
  if (contentsFit(sums, t, out->x64)) {
    out->contents = sums.contents;
    out->deviceContents = sums.deviceContents;
  }
  return out;
}

// `a.sum(axis=None, dtype=None, out=None, keepdims=False)` of an integer array.
const BuiltinFn &arraySum() {
  static const BuiltinFn fn{
      "ndarray.sum",
      +[](Interp &in, CallCtx &c) -> V {
        const auto &arr = cast<HostArrayV>(c.self);
        std::vector<V> a = c.bind(in, {"axis", "dtype", "out", "keepdims"});
        if (given(a[1]) || given(a[2]))
          unsupported(c.range, "sum(dtype=..., out=...) of an array");
        if (!ast::isInteger(arr.dtype))
          return in.opaque("the sum of a float array (dkv keeps its shape)", c.range);
        size_t n = arr.shape.size();
        std::vector<bool> reduce(n, !given(a[0]));
        if (given(a[0]))
          for (const V &ax : a[0]->kind == Kind::Tuple || a[0]->kind == Kind::List
                                 ? in.toVector(a[0], c.range)
                                 : std::vector<V>{a[0]}) {
            size_t d = static_cast<size_t>(axisArg(in, ax, n, c.range));
            if (reduce[d])
              in.raise("ValueError", "duplicate value in 'axis'", c.range);
            reduce[d] = true;
          }
        bool keep = a[3] && in.truth(a[3], c.range, "keepdims");
        std::vector<int64_t> shape, outDims(n);
        for (size_t d = 0; d < n; ++d) {
          outDims[d] = reduce[d] ? 1 : arr.shape[d];
          if (!reduce[d] || keep)
            shape.push_back(outDims[d]);
        }
        std::vector<int64_t> src = stridesOf(arr.shape), dst = stridesOf(outDims);
        int64_t outSize = 1;
        for (int64_t x : outDims)
          outSize *= x;
        // NumPy's sum of an unsigned array is uint64, not modelled (sumResult).
        if (arr.numpy && !prim::info(arr.dtype).isSigned)
          return in.opaque("the sum of an unsigned NumPy array (uint64, which dkv does not model)",
                           c.range);
        V sums = in.mapContents(arr, shape, [&](const std::vector<int64_t> &v) {
          std::vector<int64_t> out(static_cast<size_t>(outSize), 0);
          for (size_t flat = 0; flat < v.size(); ++flat) {
            size_t to = 0;
            for (size_t d = 0; d < n; ++d)
              if (!reduce[d])
                to += static_cast<size_t>((static_cast<int64_t>(flat) / src[d]) % arr.shape[d] *
                                          dst[d]);
            auto sum = support::checkedAdd(out[to], v[flat]);
            if (!sum.ok())
              fail(c.range, "python-overflow", "an array sum beyond 64 bits");
            out[to] = sum.value;
          }
          return out;
        });
        return sumResult(cast<HostArrayV>(sums), arr.dtype, arr.numpy);
      },
      "", false};
  return fn;
}

// JAX's pytrees as dkv knows them: tuples, lists and dicts are nodes (a dict's children
// in sorted key order), None is a node with no children, anything else a leaf. An
// instance of a class may be a registered pytree node, which dkv does not track: refused.
// `isLeaf` is the is_leaf= predicate, or null.
std::vector<const Table::Entry *> sortedEntries(Interp &in, const DictV &d, SourceRange r) {
  std::vector<const Table::Entry *> es;
  bool strs = true, ints = true;
  for (const Table::Entry &e : d.table.entries)
    if (e.live) {
      es.push_back(&e);
      strs = strs && e.key->kind == Kind::Str;
      ints = ints && e.key->kind == Kind::Int;
    }
  if (!strs && !ints)
    unsupported(r, "a pytree dict whose keys are not all strings or all ints");
  std::stable_sort(es.begin(), es.end(), [&](const Table::Entry *a, const Table::Entry *b) {
    return strs ? cast<StrV>(a->key).s < cast<StrV>(b->key).s
                : cast<IntV>(a->key).i < cast<IntV>(b->key).i;
  });
  (void)in;
  return es;
}

bool treeLeaf(Interp &in, const V &v, const V &isLeaf, SourceRange r) {
  if (isLeaf && in.truth(in.call(isLeaf, Args{{v}, {}}, r), r, "is_leaf"))
    return true;
  if (v->kind == Kind::Instance)
    unsupported(r, "a pytree holding an instance of a class (it may be a registered pytree "
                   "node, jax.tree_util.register_pytree_node_class, whose instances dkv does "
                   "not flatten)");
  return !(v->kind == Kind::Tuple || v->kind == Kind::List || v->kind == Kind::Dict ||
           v->kind == Kind::None);
}

// The leaves of `v`; false if an opaque value stands where the structure is decided.
bool treeLeaves(Interp &in, const V &v, const V &isLeaf, std::vector<V> &out, SourceRange r) {
  if (v->kind == Kind::Opaque)
    return false;
  if (treeLeaf(in, v, isLeaf, r)) {
    out.push_back(v);
    return true;
  }
  if (v->kind == Kind::None)
    return true;
  if (auto *d = dynCast<DictV>(v)) {
    for (const Table::Entry *e : sortedEntries(in, *d, r))
      if (!treeLeaves(in, e->value, isLeaf, out, r))
        return false;
    return true;
  }
  for (const V &x : in.toVector(v, r))
    if (!treeLeaves(in, x, isLeaf, out, r))
      return false;
  return true;
}

// jax.tree.map: `f` on the leaves of `tree` and the subtrees of `rest` at the same places.
V treeMap(Interp &in, const V &f, const V &tree, const std::vector<V> &rest, const V &isLeaf,
          SourceRange r) {
  for (const V &x : rest)
    if (x->kind == Kind::Opaque)
      return in.opaque("jax.tree.map over a value dkv does not compute", r, x);
  if (tree->kind == Kind::Opaque)
    return in.opaque("jax.tree.map over a value dkv does not compute", r, tree);
  if (treeLeaf(in, tree, isLeaf, r)) {
    std::vector<V> args{tree};
    args.insert(args.end(), rest.begin(), rest.end());
    return in.call(f, Args{std::move(args), {}}, r);
  }
  for (const V &x : rest)
    if (x->kind != tree->kind)
      unsupported(r, "jax.tree.map over trees of different structure");
  if (tree->kind == Kind::None)
    return tree;
  if (auto *d = dynCast<DictV>(tree)) {
    auto out = std::make_shared<DictV>();
    for (const Table::Entry *e : sortedEntries(in, *d, r)) {
      std::vector<V> sub;
      for (const V &x : rest) {
        V v = in.dictGet(cast<DictV>(x).table, e->key, r);
        if (!v || cast<DictV>(x).table.size != d->table.size)
          unsupported(r, "jax.tree.map over trees of different structure");
        sub.push_back(v);
      }
      in.dictSet(out->table, e->key, treeMap(in, f, e->value, sub, isLeaf, r), r);
    }
    return out;
  }
  std::vector<V> items = in.toVector(tree, r);
  std::vector<std::vector<V>> others;
  for (const V &x : rest) {
    others.push_back(in.toVector(x, r));
    if (others.back().size() != items.size())
      unsupported(r, "jax.tree.map over trees of different structure");
  }
  std::vector<V> out;
  for (size_t i = 0; i < items.size(); ++i) {
    std::vector<V> sub;
    for (const auto &o : others)
      sub.push_back(o[i]);
    out.push_back(treeMap(in, f, items[i], sub, isLeaf, r));
  }
  return sameSequence(tree, std::move(out));
}

// tree_flatten (leaves and structure) / tree_structure (the structure).
V treeFlatten(Interp &in, CallCtx &c, bool structureOnly) {
  std::vector<V> a = c.bind(in, {"tree", "is_leaf"});
  V tree = need(in, c, a, 0, "tree");
  V isLeaf = given(a[1]) ? a[1] : nullptr;
  std::vector<V> out;
  if (!treeLeaves(in, tree, isLeaf, out, c.range))
    return in.opaque("the pytree structure of a value dkv does not compute", c.range, tree);
  V def = makeApi(TreeDefObj{tree, isLeaf, static_cast<int64_t>(out.size())});
  return structureOnly ? def : tuple({list(std::move(out)), def});
}

// `tree_unflatten`: the structure of `tree` with the leaves in order (treeLeaves' order).
V treeRebuild(Interp &in, const V &tree, const V &isLeaf, const std::vector<V> &leaves, size_t &at,
              SourceRange r) {
  if (treeLeaf(in, tree, isLeaf, r))
    return leaves[at++];
  if (tree->kind == Kind::None)
    return tree;
  if (auto *d = dynCast<DictV>(tree)) {
    auto out = std::make_shared<DictV>();
    for (const Table::Entry *e : sortedEntries(in, *d, r))
      in.dictSet(out->table, e->key, treeRebuild(in, e->value, isLeaf, leaves, at, r), r);
    return out;
  }
  std::vector<V> out;
  for (const V &x : in.toVector(tree, r))
    out.push_back(treeRebuild(in, x, isLeaf, leaves, at, r));
  return sameSequence(tree, std::move(out));
}

V dtypeValue(std::optional<ast::DType> dt, std::string name) {
  return makeApi(DTypeObj{dt, std::move(name), DTypeForm::Dtype});
}

V dims(const std::vector<int64_t> &shape) {
  std::vector<V> out;
  for (int64_t d : shape)
    out.push_back(integer(d));
  return tuple(std::move(out));
}

// The attributes of host-side objects dkv models; any other is opaque.
const AttrRow<HostArrayV> kHostArrayAttrs[] = {
    {"shape", [](auto &, auto &a, auto &, auto) { return dims(a.shape); }},
    {"dtype",
     [](auto &in, auto &a, auto &, auto r) -> V {
       if (a.key)
         return in.opaque("the element type of a PRNG key array (key<fry>)", r);
       // NumPy's float64 / int64 are no type dkv computes with: a dtype of that name.
       return dtypeValue(a.x64 ? std::nullopt : std::optional(a.dtype), a.dtypeName());
     }},
    {"ndim",
     [](auto &, auto &a, auto &, auto) { return integer(static_cast<int64_t>(a.shape.size())); }},
    {"size", [](auto &, auto &a, auto &, auto) { return integer(a.size()); }},
    {"itemsize",
     [](auto &, auto &a, auto &, auto) -> V {
       return a.key || a.isStruct ? nullptr : integer(a.x64 ? 8 : ast::byteSize(a.dtype));
     }},
    {"nbytes",
     [](auto &, auto &a, auto &, auto) -> V {
       return a.key || a.isStruct ? nullptr
                                  : integer(a.size() * (a.x64 ? 8 : ast::byteSize(a.dtype)));
     }},
    {"reshape",
     [](auto &, auto &, auto &self, auto) { return builtinValue(arrayReshape(), self); }},
    {"astype", [](auto &, auto &, auto &self, auto) { return builtinValue(arrayAstype(), self); }},
    {"transpose",
     [](auto &, auto &, auto &self, auto) { return builtinValue(arrayTranspose(), self); }},
    // `.T`: the axes reversed (NumPy's and JAX's), the contents moved with them.
    {"T",
     [](auto &in, auto &a, auto &, auto r) -> V {
       if (a.key || a.isStruct)
         return nullptr;
       std::vector<size_t> perm(a.shape.size());
       for (size_t d = 0; d < perm.size(); ++d)
         perm[d] = perm.size() - 1 - d;
       return transposeArray(in, a, perm, r);
     }},
    {"swapaxes",
     [](auto &, auto &, auto &self, auto) { return builtinValue(arraySwapaxes(), self); }},
    {"sum", [](auto &, auto &, auto &self, auto) { return builtinValue(arraySum(), self); }},
};
// The name of the Python function a jitted function calls (through shard_map, partial
// and jit wrappers), or "".
std::string jittedName(const V &fn) {
  V f = fn;
  for (int depth = 0; depth < 16 && f; ++depth) {
    if (auto *p = dynCast<FunctionV>(f))
      return p->name;
    if (auto *j = apiAs<JitObj>(f))
      f = j->fn;
    else if (auto *sm = apiAs<ShardMapObj>(f))
      f = sm->f;
    else if (auto *pa = dynCast<PartialV>(f))
      f = pa->fn;
    else
      break;
  }
  return "";
}
// `jitted.lower(*args)`: JAX traces and lowers the function without running it; dkv
// neither traces nor runs it (the entry runs no kernel through it: Interp::loweredOnly).
V jitLower(Interp &in, CallCtx &c) {
  std::string name = jittedName(std::get<JitObj>(cast<ApiObject>(c.self).data).fn);
  if (name.empty())
    name = "a jitted function";
  if (in.traceKernels_ && !in.lowered_)
    in.lowered_ = std::make_pair(name, c.range.begin.line);
  return makeApi(LoweredObj{name, false});
}
const BuiltinFn kJitLower{"jit.lower", jitLower, "", false};
const BuiltinFn kLoweredCompile{
    "Lowered.compile",
    +[](Interp &, CallCtx &c) -> V {
      return makeApi(LoweredObj{std::get<LoweredObj>(cast<ApiObject>(c.self).data).name, true});
    },
    "", false};

const AttrRow<JitObj> kJitAttrs[] = {
    {"lower", [](auto &, auto &, auto &self, auto) { return builtinValue(kJitLower, self); }},
};
const AttrRow<LoweredObj> kLoweredAttrs[] = {
    {"compile", [](auto &, auto &l, auto &self,
                   auto) { return l.compiled ? V() : builtinValue(kLoweredCompile, self); }},
};

// `mesh.abstract_mesh.update(abstract_device=...)`: an abstract mesh with the same axes
// (dkv's mesh is its axes); new axis names or sizes are not modelled.
const BuiltinFn kMeshUpdate{
    "AbstractMesh.update",
    +[](Interp &in, CallCtx &c) -> V {
      std::vector<V> a = c.bind(in, {"axis_sizes", "axis_names", "axis_types", "abstract_device"});
      if (a[0] || a[1])
        return in.opaque("an abstract mesh with new axes", c.range);
      return c.self;
    },
    "", false};
const AttrRow<MeshObj> kMeshAttrs[] = {
    {"abstract_mesh", [](auto &, auto &, auto &self, auto) { return self; }},
    {"update", [](auto &, auto &, auto &self, auto) { return builtinValue(kMeshUpdate, self); }},
    {"shape",
     [](auto &in, auto &m, auto &, auto r) -> V {
       auto d = std::make_shared<DictV>();
       for (size_t i = 0; i < m.names.size(); ++i)
         in.dictSet(d->table, string(m.names[i]), integer(m.sizes[i]), r);
       return d;
     }},
    {"size", [](auto &, auto &m, auto &, auto) { return integer(m.devices()); }},
    {"axis_names",
     [](auto &, auto &m, auto &, auto) {
       std::vector<V> names;
       for (const std::string &n : m.names)
         names.push_back(string(n));
       return tuple(std::move(names));
     }},
    {"axis_sizes", [](auto &, auto &m, auto &, auto) { return dims(m.sizes); }},
    {"devices",
     [](auto &in, auto &m, auto &, auto r) -> V {
       // The mesh dkv makes for a kernel outside any shard_map has no axes of the file's.
       if (m.names.empty())
         return in.opaque("`.devices` of the mesh of a kernel outside a shard_map", r);
       return makeApi(DeviceArrayObj{m.sizes, m.deviceIds});
     }},
    {"axis_types",
     [](auto &in, auto &m, auto &, auto r) -> V {
       if (m.axisTypes.empty())
         return in.opaque("`.axis_types` of a mesh whose axis types dkv does not know", r);
       std::vector<V> types;
       for (AxisKind k : m.axisTypes)
         types.push_back(makeApi(AxisTypeObj{k}));
       return tuple(std::move(types));
     }},
};
const AttrRow<TcMeshObj> kTcMeshAttrs[] = {
    {"num_cores", [](auto &, auto &t, auto &, auto) { return integer(t.cores); }},
    {"axis_name", [](auto &, auto &t, auto &, auto) { return t.name; }},
    // ScalarSubcoreMesh.size (sc_core.py): its number of cores.
    {"size", [](auto &, auto &t, auto &, auto) -> V { return t.sparse ? integer(t.cores) : V(); }},
    {"shape",
     [](auto &in, auto &t, auto &, auto r) -> V {
       auto d = std::make_shared<DictV>();
       in.dictSet(d->table, t.name, integer(t.cores), r);
       return d;
     }},
    {"devices",
     [](auto &, auto &t, auto &, auto) -> V {
       if (t.sparse)
         return nullptr;
       std::vector<V> cores;
       for (int64_t c = 0; c < t.cores; ++c)
         cores.push_back(makeApi(DeviceObj{c}));
       return list(std::move(cores));
     }},
};
// The devices dkv models are TPU devices of no particular generation: their kind is a
// fact of the chip, a str known only to start with "TPU" (every TPU's does: "TPU v4",
// "TPU v5 lite", "TPU7x"), so the tutorial's `assert "TPU" in
// jax.devices()[0].device_kind` holds and whatever reads the generation out of it is a
// located refusal naming --tpu (docs/python.md). `--set 'jax.Device.device_kind="TPU v6
// lite"'` (or the same `# dkv: set`) names one. With --tpu, the kind of that chip (JAX's
// `chip_version_from_device_kind` reads it back).
V deviceKind(Interp &in, SourceRange r) {
  const SetDirective *set = in.findSet("jax.Device.device_kind");
  if (set && !set->call)
    return literalValue(set->value);
  if (in.chip_)
    return string(in.chip_->deviceKind);
  return in.chipFact("`.device_kind` of a device (the TPU generation)", r, "TPU");
}
const AttrRow<DeviceObj> kDeviceAttrs[] = {
    {"device_kind", [](auto &in, auto &, auto &, auto r) { return deviceKind(in, r); }},
    {"num_cores",
     [](auto &in, auto &, auto &, auto r) {
       return in.chip_ ? integer(in.chip_->coresPerDevice)
                       : in.chipFact("`.num_cores` of a device (TensorCores per device)", r);
     }},
    {"platform", [](auto &in, auto &, auto &, auto) { return string(in.backendPlatform()); }},
    {"id",
     [](auto &in, auto &d, auto &, auto r) {
       return d.id >= 0 ? integer(d.id)
                        : in.opaque("`.id` of a device of a mesh whose device order follows the "
                                    "TPU's topology (jax.make_mesh, create_device_mesh); build "
                                    "the mesh from np.array(jax.devices()).reshape(...) to "
                                    "state it",
                                    r);
     }},
};
// The bits of an element of a dtype (jax.dtypes.itemsize_bits), also of those dkv does
// not model as element types (int4, float8, 64-bit ones); none for anything else.
std::optional<int64_t> itemsizeBits(Interp &in, const V &v, SourceRange r) {
  if (v->kind == Kind::Opaque)
    in.opaqueNeeded(v, r, "an element type");
  if (auto *str = dynCast<StrV>(v))
    if (auto t = prim::dtypeFromPython("jnp." + str->s))
      return ast::byteSize(*t) * 8;
  auto *d = apiAs<DTypeObj>(v);
  if (!d)
    return std::nullopt;
  if (d->dtype)
    return ast::byteSize(*d->dtype) * 8;
  static const std::pair<std::string_view, int64_t> kBits[] = {
      {"int4", 4},    {"uint4", 4},    {"float8_e4m3fn", 8}, {"float8_e5m2", 8}, {"bool_", 8},
      {"uint16", 16}, {"float64", 64}, {"int64", 64},        {"uint64", 64}};
  for (const auto &[name, bits] : kBits)
    if (d->name == name)
      return bits;
  return std::nullopt;
}
// `TpuInfo.get_sublane_tiling(dtype)` (tpu_info.py): the sublanes of a tile of that
// element type, by the chip's generation (before 7x, 16- and 32-bit types keep the
// sublane count and others pack 32 // bits per sublane; from 7x all pack).
const BuiltinFn kTpuSublaneTiling{
    "TpuInfo.get_sublane_tiling",
    +[](Interp &in, CallCtx &c) -> V {
      std::vector<V> a = c.bind(in, {"dtype"});
      const V dtype = need(in, c, a, 0, "dtype");
      const TpuChip &chip = *apiAs<TpuInfoObj>(c.self)->chip;
      std::optional<int64_t> bits = itemsizeBits(in, dtype, c.range);
      if (!bits)
        unsupported(c.range, fmt::format("get_sublane_tiling of {} (not an element type dkv "
                                         "knows the width of)",
                                         typeName(*dtype)));
      const int64_t sublanes = chip.figures.numSublanes;
      if (chip.generation < 7)
        return integer(*bits == 16 || *bits == 32 ? sublanes : sublanes * (32 / *bits));
      if (chip.generation == 7 || chip.generation == 8)
        return integer(sublanes * (32 / *bits));
      in.raiseId("NotImplementedError", "TPU generation is not supported", c.range);
    },
    "", false};
// `pltpu.get_tpu_info()`: tpu_info.py's TpuInfo of the chip (its fields and properties,
// `get_sublane_tiling`; `chip_version` and the other methods are opaque).
#define DKV_TPU_FIGURE(field, member)                                                              \
  {                                                                                                \
    field, [](auto &, auto &t, auto &, auto) { return integer(t.chip->figures.member); }           \
  }
// np.iinfo / np.finfo: an integer type's bounds are Python ints; a float type's are
// scalars of that type (NumPy's float32 / float64; float16 and bfloat16 scalars are no
// type dkv computes with, so theirs are opaque).
V floatLimit(Interp &in, const DTypeLimitsObj &l, double f32, double f64, const char *what,
             SourceRange r) {
  if (l.dtype != ast::DType::F32)
    return in.opaque(fmt::format("finfo({}).{} (a scalar of a type dkv does not compute with)",
                                 prim::pythonName(l.dtype), what),
                     r);
  ScalarType st;
  st.from = ScalarType::From::NumPy;
  st.v1 = st.v2 = ScalarType::T{ast::DType::F32, l.x64};
  return withScalar(floating(l.x64 ? f64 : f32), st);
}
int64_t intBits(const DTypeLimitsObj &l) { return l.x64 ? 64 : 8 * ast::byteSize(l.dtype); }
const AttrRow<DTypeLimitsObj> kDTypeLimitsAttrs[] = {
    {"bits", [](auto &, auto &l, auto &, auto) -> V { return integer(intBits(l)); }},
    {"dtype",
     [](auto &, auto &l, auto &, auto) -> V {
       if (l.x64)
         return dtypeValue(std::nullopt, ast::isInteger(l.dtype) ? "int64" : "float64");
       std::string name(prim::pythonName(l.dtype));
       return dtypeValue(l.dtype, name.substr(name.find('.') + 1));
     }},
    {"min",
     [](auto &in, auto &l, auto &, auto r) -> V {
       if (!ast::isInteger(l.dtype))
         return floatLimit(in, l, -3.4028234663852886e+38, -1.7976931348623157e+308, "min", r);
       if (!prim::info(l.dtype).isSigned)
         return integer(0);
       return integer(intBits(l) == 64 ? INT64_MIN : -(int64_t{1} << (intBits(l) - 1)));
     }},
    {"max",
     [](auto &in, auto &l, auto &, auto r) -> V {
       if (!ast::isInteger(l.dtype))
         return floatLimit(in, l, 3.4028234663852886e+38, 1.7976931348623157e+308, "max", r);
       if (!prim::info(l.dtype).isSigned)
         return integer((int64_t{1} << intBits(l)) - 1);
       return integer(intBits(l) == 64 ? INT64_MAX : (int64_t{1} << (intBits(l) - 1)) - 1);
     }},
    {"eps",
     [](auto &in, auto &l, auto &, auto r) -> V {
       return ast::isInteger(l.dtype)
                  ? nullptr
                  : floatLimit(in, l, 1.1920928955078125e-07, 2.220446049250313e-16, "eps", r);
     }},
    {"tiny",
     [](auto &in, auto &l, auto &, auto r) -> V {
       return ast::isInteger(l.dtype)
                  ? nullptr
                  : floatLimit(in, l, 1.1754943508222875e-38, 2.2250738585072014e-308, "tiny", r);
     }},
    {"smallest_normal",
     [](auto &in, auto &l, auto &, auto r) -> V {
       return ast::isInteger(l.dtype) ? nullptr
                                      : floatLimit(in, l, 1.1754943508222875e-38,
                                                   2.2250738585072014e-308, "smallest_normal", r);
     }},
};
const AttrRow<TpuInfoObj> kTpuInfoAttrs[] = {
    {"generation", [](auto &, auto &t, auto &, auto) { return integer(t.chip->generation); }},
    {"num_cores", [](auto &, auto &t, auto &, auto) { return integer(t.chip->coresPerDevice); }},
    DKV_TPU_FIGURE("num_lanes", numLanes),
    DKV_TPU_FIGURE("num_sublanes", numSublanes),
    DKV_TPU_FIGURE("mxu_column_size", mxuColumnSize),
    DKV_TPU_FIGURE("num_mxus", numMxus),
    DKV_TPU_FIGURE("num_accumulators", numAccumulators),
    DKV_TPU_FIGURE("vmem_capacity_bytes", vmemCapacityBytes),
    DKV_TPU_FIGURE("cmem_capacity_bytes", cmemCapacityBytes),
    DKV_TPU_FIGURE("smem_capacity_bytes", smemCapacityBytes),
    DKV_TPU_FIGURE("hbm_capacity_bytes", hbmCapacityBytes),
    DKV_TPU_FIGURE("mem_bw_bytes_per_second", memBwBytesPerSecond),
    DKV_TPU_FIGURE("bf16_ops_per_second", bf16OpsPerSecond),
    DKV_TPU_FIGURE("int8_ops_per_second", int8OpsPerSecond),
    DKV_TPU_FIGURE("fp8_ops_per_second", fp8OpsPerSecond),
    DKV_TPU_FIGURE("int4_ops_per_second", int4OpsPerSecond),
    {"sparse_core",
     [](auto &, auto &t, auto &, auto) -> V {
       return t.chip->sparseCores ? makeApi(SparseCoreObj{t.chip}) : none();
     }},
    {"is_lite", [](auto &, auto &t, auto &, auto) { return boolean(t.chip->lite); }},
    {"is_megacore",
     [](auto &, auto &t, auto &, auto) { return boolean(t.chip->coresPerDevice > 1); }},
    {"is_split_chip",
     [](auto &, auto &t, auto &, auto) {
       return boolean(t.chip->coresPerDevice == 1 && t.chip->physicalCores > 1);
     }},
    {"get_sublane_tiling",
     [](auto &, auto &, auto &self, auto) { return builtinValue(kTpuSublaneTiling, self); }},
    {"chip_version", [](auto &, auto &t, auto &, auto) { return makeApi(ChipVersionObj{t.chip}); }},
};
// Its `chip_version` (tpu_info.py ChipVersion): the chip's properties.
const AttrRow<ChipVersionObj> kChipVersionAttrs[] = {
    {"num_physical_tensor_cores_per_chip",
     [](auto &, auto &v, auto &, auto) { return integer(v.chip->physicalCores); }},
    {"supports_megacore",
     [](auto &, auto &v, auto &, auto) { return boolean(v.chip->coresPerDevice > 1); }},
    {"is_lite", [](auto &, auto &v, auto &, auto) { return boolean(v.chip->lite); }},
};
#undef DKV_TPU_FIGURE
const AttrRow<SparseCoreObj> kSparseCoreAttrs[] = {
    {"num_cores", [](auto &, auto &s, auto &, auto) { return integer(s.chip->sparseCores); }},
    {"num_subcores",
     [](auto &, auto &s, auto &, auto) { return integer(s.chip->sparse.numSubcores); }},
    {"num_lanes", [](auto &, auto &s, auto &, auto) { return integer(s.chip->sparse.numLanes); }},
    {"vmem_capacity_bytes",
     [](auto &, auto &s, auto &, auto) { return integer(s.chip->sparse.vmemCapacityBytes); }},
    {"dma_granule_size_bytes",
     [](auto &, auto &s, auto &, auto) { return integer(s.chip->sparse.dmaGranuleSizeBytes); }},
};
// The draws of a NumPy Generator (numpy.random.Generator): an ndarray of the `size`
// shape and the dtype asked for, its values unknown. NumPy's default element types,
// float64 and int64, are not types dkv models: such a draw is opaque, as is one without
// a size (a NumPy scalar). `kind` picks the signature.
enum class RngDraw { Random, StandardNormal, Normal, Uniform, Integers };
V rngDraw(Interp &in, CallCtx &c, RngDraw kind) {
  std::vector<V> a;
  V size, dtype;
  switch (kind) {
  case RngDraw::Random:
  case RngDraw::StandardNormal:
    a = c.bind(in, {"size", "dtype", "out"});
    size = a[0], dtype = a[1];
    if (given(a[2]))
      return in.opaque(fmt::format("{}(out=...)", c.fn->name), c.range);
    break;
  case RngDraw::Normal:
    a = c.bind(in, {"loc", "scale", "size"});
    size = a[2];
    break;
  case RngDraw::Uniform:
    a = c.bind(in, {"low", "high", "size"});
    size = a[2];
    break;
  case RngDraw::Integers:
    a = c.bind(in, {"low", "high", "size", "dtype", "endpoint"});
    need(in, c, a, 0, "low");
    size = a[2], dtype = a[3];
    break;
  }
  if (!given(size))
    return in.opaque(fmt::format("{}() without a size (a NumPy scalar)", c.fn->name), c.range);
  std::vector<int64_t> shape = in.shapeOf(size, c.range, "the size of a random draw");
  if (!given(dtype))
    return in.opaque(fmt::format("{}() of NumPy's default type ({}, which dkv does not model)",
                                 c.fn->name, kind == RngDraw::Integers ? "int64" : "float64"),
                     c.range);
  if (dtype->kind == Kind::Opaque)
    return in.opaque(fmt::format("{}() of it", c.fn->name), c.range, dtype);
  auto *d = apiAs<DTypeObj>(dtype);
  if (!d || !d->dtype)
    return in.opaque(fmt::format("{}() of a type dkv does not model", c.fn->name), c.range);
  bool integer = ast::isInteger(*d->dtype);
  if (integer != (kind == RngDraw::Integers) ||
      (!integer && *d->dtype != ast::DType::F32)) // Generator draws floats of 32 or 64 bits
    in.raise("TypeError",
             fmt::format("Unsupported dtype dtype('{}') for {}", d->name,
                         c.fn->name.substr(c.fn->name.find('.') + 1)),
             c.range);
  auto out = std::make_shared<HostArrayV>(shape, *d->dtype);
  out->numpy = true;
  return out;
}
const BuiltinFn kRngRandom{"Generator.random",
                           +[](Interp &in, CallCtx &c) { return rngDraw(in, c, RngDraw::Random); },
                           "", false};
const BuiltinFn kRngStandardNormal{
    "Generator.standard_normal",
    +[](Interp &in, CallCtx &c) { return rngDraw(in, c, RngDraw::StandardNormal); }, "", false};
const BuiltinFn kRngNormal{"Generator.normal",
                           +[](Interp &in, CallCtx &c) { return rngDraw(in, c, RngDraw::Normal); },
                           "", false};
const BuiltinFn kRngUniform{
    "Generator.uniform", +[](Interp &in, CallCtx &c) { return rngDraw(in, c, RngDraw::Uniform); },
    "", false};
const BuiltinFn kRngIntegers{
    "Generator.integers", +[](Interp &in, CallCtx &c) { return rngDraw(in, c, RngDraw::Integers); },
    "", false};
const AttrRow<NpRngObj> kNpRngAttrs[] = {
    {"random", [](auto &, auto &, auto &self, auto) { return builtinValue(kRngRandom, self); }},
    {"standard_normal",
     [](auto &, auto &, auto &self, auto) { return builtinValue(kRngStandardNormal, self); }},
    {"normal", [](auto &, auto &, auto &self, auto) { return builtinValue(kRngNormal, self); }},
    {"uniform", [](auto &, auto &, auto &self, auto) { return builtinValue(kRngUniform, self); }},
    {"integers", [](auto &, auto &, auto &self, auto) { return builtinValue(kRngIntegers, self); }},
};
// An array of devices as NumPy holds it: its shape and its devices in row-major order
// (DeviceObj{-1} where the order is not known: `.id` of one is refused, never guessed).
V deviceAt(const DeviceArrayObj &d, size_t flat) {
  return makeApi(DeviceObj{d.ids.empty() ? -1 : d.ids[flat]});
}
int64_t deviceCount(const DeviceArrayObj &d) {
  int64_t n = 1;
  for (int64_t x : d.shape)
    n *= x;
  return n;
}
// NumPy's flatiter (`devs.flat`): an iterator that can also be indexed and measured.
struct FlatIter final : IterState {
  V arr; ///< the DeviceArrayObj
  size_t i = 0;
  V next(Interp &, SourceRange) override {
    const auto &d = *apiAs<DeviceArrayObj>(arr);
    if (static_cast<int64_t>(i) >= deviceCount(d))
      return nullptr;
    return deviceAt(d, i++);
  }
};

// `devs.tolist()`: nested lists of the devices.
V deviceList(Interp &in, const V &arr) {
  std::vector<V> rows = in.deviceArrayRows(arr);
  for (V &row : rows)
    if (apiAs<DeviceArrayObj>(row))
      row = deviceList(in, row);
  return list(std::move(rows));
}
const AttrRow<DeviceArrayObj> kDeviceArrayAttrs[] = {
    {"shape", [](auto &, auto &d, auto &, auto) { return dims(d.shape); }},
    {"reshape",
     [](auto &, auto &, auto &self, auto) {
       static const BuiltinFn fn{
           "ndarray.reshape",
           +[](Interp &in, CallCtx &c) -> V {
             const auto &devs = *apiAs<DeviceArrayObj>(c.self);
             HostArrayV tmp(devs.shape, ast::DType::I32);
             V res = in.reshapeArray(tmp, c.args, c.range);
             return makeApi(DeviceArrayObj{cast<HostArrayV>(res).shape, devs.ids});
           },
           "", false};
       return builtinValue(fn, self);
     }},
    {"size",
     [](auto &, auto &d, auto &, auto) {
       int64_t n = 1;
       for (int64_t x : d.shape)
         n *= x;
       return integer(n);
     }},
    {"ndim",
     [](auto &, auto &d, auto &, auto) { return integer(static_cast<int64_t>(d.shape.size())); }},
    {"flat", [](auto &in, auto &, auto &self, auto) { return in.deviceFlatIter(self); }},
    {"tolist",
     [](auto &, auto &, auto &self, auto) {
       static const BuiltinFn fn{"ndarray.tolist",
                                 +[](Interp &in, CallCtx &c) -> V {
                                   c.bind(in, {});
                                   return deviceList(in, c.self);
                                 },
                                 "", false};
       return builtinValue(fn, self);
     }},
};
// `f.defvjp(fwd, bwd)` returns None, `f.defjvp(jvp)` returns jvp (a decorator), as JAX's;
// the rules only matter to differentiation, which dkv does not model.
const BuiltinFn kDefvjp{"defvjp", +[](Interp &, CallCtx &) -> V { return none(); }, "", false};
const BuiltinFn kDefjvp{"defjvp",
                        +[](Interp &in, CallCtx &c) -> V {
                          if (c.args.pos.size() != 1)
                            in.raiseId("TypeError", "defjvp() takes one jvp function", c.range);
                          return c.args.pos[0];
                        },
                        "", false};
/// The attributes of `jax.custom_vjp(fun)` / `jax.custom_jvp(fun)`.
const AttrRow<CustomDerivObj> kCustomDerivAttrs[] = {
    {"fun", [](auto &, auto &cd, auto &, auto) { return cd.fn; }},
    {"defvjp", [](auto &, auto &cd, auto &, auto) { return cd.vjp ? builtinValue(kDefvjp) : V(); }},
    {"defjvp", [](auto &, auto &cd, auto &, auto) { return cd.vjp ? V() : builtinValue(kDefjvp); }},
    {"defjvps",
     [](auto &, auto &cd, auto &, auto) { return cd.vjp ? V() : builtinValue(kDefvjp); }},
};
const AttrRow<DTypeObj> kDTypeAttrs[] = {
    {"name", [](auto &, auto &d, auto &, auto) { return string(d.name); }},
    {"itemsize",
     [](auto &, auto &d, auto &, auto) -> V {
       if (d.dtype)
         return integer(ast::byteSize(*d.dtype));
       // NumPy's 64-bit types (a NumPy float64 / int64 array's dtype).
       static const std::set<std::string_view> kWide{"float64", "int64", "uint64"};
       return kWide.count(d.name) ? integer(8) : nullptr;
     }},
};

} // namespace

V Interp::hostArrayAttr(const V &arr, const std::string &name, SourceRange r) {
  if (V v = readAttr(kHostArrayAttrs, *this, arr, name, r))
    return v;
  return opaque(fmt::format("`.{}` of an array (dkv keeps arrays as shapes)", name), r);
}

//===----------------------------------------------------------------------===//
// Attributes and calls of API objects
//===----------------------------------------------------------------------===//

V Interp::apiAttr(const V &obj, ApiObject &a, const std::string &name, SourceRange r) {
  if (V v = hypothesisAttr(obj, a, name, r))
    return v;
  if (auto *s = std::get_if<StateRefObj>(&a.data)) {
    // A host ref: its shape and element type; anything else (`.at`, `.get`) uses it.
    static const std::set<std::string_view> kArrayAttrs{"shape", "dtype", "ndim", "size"};
    if (kArrayAttrs.count(name))
      return getAttr(s->array, name, r);
    stateRefMisused(obj, r, fmt::format("the ref whose `.{}` is taken", name));
  }
  if (auto *s = std::get_if<SuperObj>(&a.data)) {
    // super(): the MRO of the object's class, after the class that called it.
    ClassP cls =
        s->self->kind == Kind::Class ? std::static_pointer_cast<ClassV>(s->self) : typeOf(s->self);
    if (!cls)
      return nullptr;
    auto it = std::find(cls->mro.begin(), cls->mro.end(), s->start);
    if (it == cls->mro.end())
      raise("TypeError", "super(type, obj): obj must be an instance or subtype of type", r);
    for (++it; it != cls->mro.end(); ++it)
      if (V v = (*it)->dict->get(name)) {
        if (v->kind == Kind::Function)
          return std::make_shared<BoundMethodV>(s->self, v);
        if (auto *b = dynCast<BuiltinV>(v))
          return std::make_shared<BuiltinV>(b->fn, s->self);
        if (auto *w = dynCast<WrapperV>(v)) {
          if (w->w == WrapperV::W::ClassMethod)
            return std::make_shared<BoundMethodV>(cls, w->fn);
          if (w->w == WrapperV::W::StaticMethod)
            return w->fn;
          if (w->w == WrapperV::W::LruCache)
            return std::make_shared<BoundMethodV>(s->self, v);
          return call(w->fn, Args{{s->self}, {}}, r);
        }
        return v;
      }
    if (cls->opaqueBase)
      return opaque(fmt::format("super().{} (the base class is not modelled)", name), r);
    return nullptr;
  }
  if (auto *m = std::get_if<MeshObj>(&a.data)) {
    if (auto *at = findAttr(kMeshAttrs, name))
      return at->get(*this, *m, obj, r);
    return opaque(fmt::format("`.{}` of a mesh", name), r);
  }
  if (auto *t = std::get_if<TcMeshObj>(&a.data)) {
    if (auto *at = findAttr(kTcMeshAttrs, name))
      if (V v = at->get(*this, *t, obj, r))
        return v;
    return opaque(
        fmt::format("`.{}` of a {}", name, t->sparse ? "ScalarSubcoreMesh" : "TensorCore mesh"), r);
  }
  if (auto *d = std::get_if<DeviceObj>(&a.data)) {
    if (auto *at = findAttr(kDeviceAttrs, name))
      return at->get(*this, *d, obj, r);
    return opaque(fmt::format("`.{}` of a device (its TPU generation is not modelled)", name), r);
  }
  if (auto *g = std::get_if<NpRngObj>(&a.data)) {
    if (auto *at = findAttr(kNpRngAttrs, name))
      return at->get(*this, *g, obj, r);
    return opaque(fmt::format("`.{}` of a NumPy Generator (not modelled)", name), r);
  }
  if (auto *f = std::get_if<FieldObj>(&a.data); f && !f->name.empty()) {
    // A Field of dataclasses.fields(): its name, init, default and default_factory (the
    // MISSING sentinel where there is none is not modelled).
    static const AttrRow<FieldObj> kFieldAttrs[] = {
        {"name", [](auto &, auto &x, auto &, auto) { return string(x.name); }},
        {"init", [](auto &, auto &x, auto &, auto) { return boolean(x.init); }},
        {"default", [](auto &, auto &x, auto &, auto) -> V { return x.dflt; }},
        {"default_factory", [](auto &, auto &x, auto &, auto) -> V { return x.factory; }},
    };
    if (auto *at = findAttr(kFieldAttrs, name))
      if (V v = at->get(*this, *f, obj, r))
        return v;
    return opaque(fmt::format("`.{}` of a dataclasses.Field (not modelled)", name), r);
  }
  if (auto *t = std::get_if<TreeDefObj>(&a.data)) {
    static const AttrRow<TreeDefObj> kTreeDefAttrs[] = {
        {"num_leaves", [](auto &, auto &d, auto &, auto) { return integer(d.leaves); }},
    };
    if (auto *at = findAttr(kTreeDefAttrs, name))
      return at->get(*this, *t, obj, r);
    return opaque(fmt::format("`.{}` of a PyTreeDef (not modelled)", name), r);
  }
  if (auto *l = std::get_if<DTypeLimitsObj>(&a.data)) {
    if (auto *at = findAttr(kDTypeLimitsAttrs, name))
      if (V v = at->get(*this, *l, obj, r))
        return v;
    raise("AttributeError", fmt::format("'{}' object has no attribute '{}'", typeName(*obj), name),
          r);
  }
  if (auto *t = std::get_if<TpuInfoObj>(&a.data)) {
    if (auto *at = findAttr(kTpuInfoAttrs, name))
      return at->get(*this, *t, obj, r);
    return opaque(fmt::format("`.{}` of pltpu.get_tpu_info() (not modelled)", name), r);
  }
  if (auto *v = std::get_if<ChipVersionObj>(&a.data)) {
    if (auto *at = findAttr(kChipVersionAttrs, name))
      return at->get(*this, *v, obj, r);
    return opaque(fmt::format("`.{}` of pltpu.get_tpu_info().chip_version (not modelled)", name),
                  r);
  }
  if (auto *s = std::get_if<SparseCoreObj>(&a.data)) {
    if (auto *at = findAttr(kSparseCoreAttrs, name))
      return at->get(*this, *s, obj, r);
    return opaque(fmt::format("`.{}` of a SparseCoreInfo (not modelled)", name), r);
  }
  if (auto *d = std::get_if<DeviceArrayObj>(&a.data)) {
    if (auto *at = findAttr(kDeviceArrayAttrs, name))
      return at->get(*this, *d, obj, r);
    return opaque(fmt::format("`.{}` of an array of devices", name), r);
  }
  if (auto *d = std::get_if<DTypeObj>(&a.data)) {
    if (auto *at = findAttr(kDTypeAttrs, name))
      if (V v = at->get(*this, *d, obj, r)) // itemsize: none for an unknown type
        return v;
    return opaque(fmt::format("`.{}` of a dtype", name), r);
  }
  if (auto *p = std::get_if<PSpecObj>(&a.data)) {
    (void)p;
    if (const BuiltinFn *m = builtinMethod(tuple(std::get<PSpecObj>(a.data).entries), name))
      return builtinValue(*m, tuple(std::get<PSpecObj>(a.data).entries));
  }
  if (auto *cd = std::get_if<CustomDerivObj>(&a.data))
    if (auto *at = findAttr(kCustomDerivAttrs, name))
      if (V v = at->get(*this, *cd, obj, r)) // defvjp of a custom_jvp: none
        return v;
  if (auto *j = std::get_if<JitObj>(&a.data))
    if (auto *at = findAttr(kJitAttrs, name))
      return at->get(*this, *j, obj, r);
  if (auto *l = std::get_if<LoweredObj>(&a.data)) {
    if (auto *at = findAttr(kLoweredAttrs, name))
      if (V v = at->get(*this, *l, obj, r)) // compile of a compiled one: opaque below
        return v;
    return opaque(fmt::format("`.{}` of the {} computation of `{}` (its HLO is not modelled)", name,
                              l->compiled ? "compiled" : "lowered", l->name),
                  r);
  }
  if (std::holds_alternative<JitObj>(a.data) || std::holds_alternative<ShardMapObj>(a.data) ||
      std::holds_alternative<PallasCallObj>(a.data))
    return opaque(fmt::format("`.{}` of a jitted or traced function (lowering and tracing are "
                              "not modelled)",
                              name),
                  r);
  if (auto *v = std::get_if<DictViewObj>(&a.data)) {
    (void)v;
    return nullptr;
  }
  bool isRe = false;
  if (V v = reObjectAttr(*this, obj, name, r, isRe); v || isRe)
    return v; // null: an AttributeError, as CPython's

  return opaque(fmt::format("`.{}` of a {} object", name, apiTypeName(a)), r);
}

V Interp::callApiObject(const V &obj, ApiObject &a, Args args, SourceRange r) {
  if (V v = callHypothesisObject(a, args, r))
    return v;
  if (auto *pc = std::get_if<PallasCallObj>(&a.data))
    return callPallas(*pc, std::move(args), r);
  if (auto *sm = std::get_if<ShardMapObj>(&a.data))
    return callShardMap(*sm, std::move(args), r);
  if (auto *pk = std::get_if<PlKernelObj>(&a.data))
    return callPlKernel(*pk, std::move(args), r);
  if (auto *j = std::get_if<JitObj>(&a.data))
    return callJit(*j, std::move(args), r);
  if (auto *l = std::get_if<LoweredObj>(&a.data))
    unsupported(r, fmt::format("calling the {} computation of `{}` (jax.jit(f).lower(...){}): "
                               "call `{}` itself",
                               l->compiled ? "compiled" : "lowered", l->name,
                               l->compiled ? ".compile()" : "", l->name));
  if (auto *cd = std::get_if<CustomDerivObj>(&a.data))
    return call(cd->fn, std::move(args), r);
  if (auto *ck = std::get_if<CheckifyObj>(&a.data)) {
    V result = call(ck->fn, std::move(args), r);
    return tuple(
        {opaque("the error of checkify (JAX's run-time checks are not modelled)", r), result});
  }
  if (auto *w = std::get_if<WhenObj>(&a.data))
    return callWhen(*w, std::move(args), r);
  if (auto *p = std::get_if<PipelineObj>(&a.data))
    return callPipeline(*p, std::move(args), r);
  if (auto *l = std::get_if<LoopObj>(&a.data)) {
    if (args.pos.size() != 1 || !args.kw.empty())
      fail(r, "python-call", "pl.loop(...) decorates one function");
    bool carried = l->init->kind != Kind::None;
    return forLoop("pl.loop", l->lo, l->hi, args.pos[0], l->init, carried, r);
  }
  if (auto *s = std::get_if<SemTypeObj>(&a.data)) {
    // pltpu.SemaphoreType.DMA((n,)) or DMA(shape=(n,)): an array of semaphores (JAX's
    // `SemaphoreType.__call__(self, shape)`).
    CallCtx c;
    c.args = std::move(args);
    c.range = r;
    static const BuiltinFn fn{"SemaphoreType.__call__", nullptr, "", false};
    c.fn = &fn;
    std::vector<V> b = c.bind(*this, {"shape"});
    return makeApi(SemArrayObj{s->kind, need(*this, c, b, 0, "shape")});
  }
  if (auto *m = std::get_if<MemSpaceObj>(&a.data)) {
    // pltpu.VMEM((8, 128), jnp.float32): a scratch buffer.
    if (m->semaphore)
      unsupported(r, "pltpu.SEMAPHORE(shape, dtype); a semaphore scratch or output is "
                     "pltpu.SemaphoreType.REGULAR / DMA, with a shape");
    // pltpu.ANY / HBM(shape, dtype): a buffer in that memory, as a pallas_call's
    // out_shape (a scratch shape in ANY memory is refused where it is used).
    CallCtx c;
    c.args = args;
    c.range = r;
    static const BuiltinFn fn{"pltpu.VMEM", nullptr, "", false};
    c.fn = &fn;
    std::vector<V> b = c.bind(*this, {"shape", "dtype"});
    if (!b[0] || !b[1])
      raiseId("TypeError", "a scratch type takes a shape and a dtype", r);
    return makeApi(ScratchObj{m->space, b[0], b[1]});
  }
  if (auto *d = std::get_if<DTypeObj>(&a.data)) {
    // `jnp.int32(x)`: a scalar of that type; a kernel's per-device value keeps its value.
    if (args.pos.size() != 1 || !args.kw.empty())
      fail(r, "python-call", fmt::format("{}() takes one value", d->name));
    const V &x = args.pos[0];
    bool isInt = d->dtype && ast::isInteger(*d->dtype);
    if (x->kind == Kind::Traced || x->kind == Kind::Opaque)
      return x;
    if (auto *h = dynCast<HostArrayV>(x)) {
      if (!d->dtype)
        return opaque(fmt::format("an array of dtype {}", d->name), r);
      // np.int32(a) is a NumPy array, jnp.int32(a) a JAX one; values that do not fit the
      // type wrap around: left unknown.
      auto out = std::make_shared<HostArrayV>(h->shape, *d->dtype);
      out->numpy = d->form == DTypeForm::NumpyType;
      if (isInt && ast::isInteger(h->dtype) && contentsFit(*h, *d->dtype, false)) {
        out->contents = h->contents;
        out->deviceContents = h->deviceContents;
      }
      return out;
    }
    // Of a number: its value in the type (Scalars.cpp).
    if (x->kind == Kind::Int || x->kind == Kind::Bool || isa<FloatV>(x))
      return makeScalar(*d, x, r);
    return opaque(fmt::format("{}() of a {}", d->name, typeName(*x)), r);
  }
  if (std::holds_alternative<NamedScopeObj>(a.data)) {
    // `@jax.named_scope("name")` on a function: the function itself.
    if (args.pos.size() == 1 && args.kw.empty())
      return args.pos[0];
    raise("TypeError", "named_scope object takes a function as a decorator", r);
  }
  if (auto *d = std::get_if<DirectiveConstObj>(&a.data)) {
    if (d->expr) {
      // `set NAME()=EXPR`: evaluated at each call in the module's globals, as the body
      // `return EXPR` of a function defined there would be.
      // A call like any other: an expression that calls itself (`set f()=f()`) ends in
      // CPython's RecursionError.
      if (callDepth_ + 1 > kMaxDepth)
        raiseId("RecursionError", "maximum recursion depth exceeded", r);
      ++callDepth_;
      struct Leave {
        int &d;
        ~Leave() { --d; }
      } leave{callDepth_};
      Frame f = moduleFrame(d->globals);
      return eval(*d->expr, f);
    }
    return d->value;
  }
  if (auto *s = std::get_if<SkipDecoratorObj>(&a.data)) {
    if (args.pos.size() != 1)
      raise("TypeError", "a skip decorator takes one function or class", r);
    const V &target = args.pos[0];
    if (s->skip) {
      if (auto *f = dynCast<FunctionV>(target)) {
        f->attrs->set("__unittest_skip__", boolean(true));
        f->attrs->set("__unittest_skip_why__", string(s->reason));
      } else if (auto *c = dynCast<ClassV>(target)) {
        c->dict->set("__unittest_skip__", boolean(true));
        c->dict->set("__unittest_skip_why__", string(s->reason));
      }
    }
    return target;
  }
  if (auto *p = std::get_if<ParameterizedObj>(&a.data)) {
    if (p->fn)
      raise("RuntimeError",
            "You appear to be running a parameterized test case without having inherited from "
            "parameterized.TestCase.",
            r);
    if (args.pos.size() != 1 || !args.kw.empty())
      raise("TypeError", "a parameterized decorator takes the test method", r);
    ParameterizedObj out = *p;
    out.fn = args.pos[0];
    if (args.pos[0]->kind == Kind::Class)
      unsupported(r, "parameterizing a whole test class (decorate its methods instead)");
    // absl's names: `test_x_name` for a named case (no `_` when the name starts with one or
    // the method does not start with `test_`), `test_x{index}` for the others.
    std::string method;
    V target = args.pos[0];
    if (auto *g = apiAs<GivenObj>(target))
      target = g->fn; // parameterized over a @hypothesis.given test
    if (auto *f = dynCast<FunctionV>(target))
      method = f->name;
    for (ParameterizedObj::Case &c : out.cases) {
      bool named = c.absltestName == "named";
      std::string sep =
          named && method.rfind("test_", 0) == 0 && !c.label.empty() && c.label[0] != '_' ? "_"
                                                                                          : "";
      c.absltestName = method + sep + c.label;
    }
    return makeApi(std::move(out));
  }
  if (auto *at = std::get_if<AssertRaisesObj>(&a.data)) {
    (void)at;
    raise("TypeError", "'_AssertRaisesContext' object is not callable", r);
  }
  raise("TypeError", fmt::format("'{}' object is not callable", apiTypeName(a)), r);
}

//===----------------------------------------------------------------------===//
// The rows
//===----------------------------------------------------------------------===//

namespace {

/// A mesh's axis types as JAX's `_normalize_axis_types` (jax/_src/mesh.py) reads the
/// `axis_types` argument: None is `dflt` on every axis, a non-tuple is a tuple of one,
/// each entry must be an AxisType, one per axis name.
std::vector<AxisKind> axisTypesArg(Interp &in, const CallCtx &c, const V &types, size_t n,
                                   AxisKind dflt) {
  if (!given(types))
    return std::vector<AxisKind>(n, dflt);
  if (types->kind == Kind::Opaque)
    in.opaqueNeeded(types, c.range, "the axis types of a mesh");
  std::vector<V> items =
      types->kind == Kind::Tuple ? cast<TupleV>(types).items : std::vector<V>{types};
  std::vector<AxisKind> out;
  for (const V &t : items) {
    if (t->kind == Kind::Opaque)
      in.opaqueNeeded(t, c.range, "an axis type of a mesh");
    if (auto *a = apiAs<AxisTypeObj>(t)) {
      out.push_back(a->kind);
      continue;
    }
    V tup = tuple(items);
    std::string classes;
    for (const V &x : items)
      classes += fmt::format("{}<class '{}'>", classes.empty() ? "" : ", ", typeName(*x));
    if (items.size() == 1)
      classes += ",";
    in.raiseId("TypeError",
               fmt::format("axis_types passed to Mesh must be of type `jax.sharding.AxisType`. "
                           "Got {} of type ({})",
                           in.repr(tup, c.range).value_or("(...)"), classes),
               c.range);
  }
  if (out.size() != n)
    in.raise("ValueError",
             fmt::format("Number of axis names should match the number of axis_types. Got {} "
                         "axis names and {} axis_types",
                         n, out.size()),
             c.range);
  return out;
}

V meshFrom(Interp &in, const CallCtx &c, std::vector<int64_t> shape, const V &names, const V &types,
           AxisKind dflt, std::vector<int64_t> ids = {}) {
  std::vector<V> axisNames =
      names->kind == Kind::Str ? std::vector<V>{names} : in.toVector(names, c.range);
  if (apiAs<PSpecObj>(names))
    axisNames = apiAs<PSpecObj>(names)->entries; // Mesh(devices, P('x')): a tuple of names
  if (axisNames.size() != shape.size())
    in.raise("ValueError",
             fmt::format("Mesh requires the ndim of its first argument ({}) to equal the length of "
                         "its second argument ({})",
                         shape.size(), axisNames.size()),
             c.range);
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  if (n > in.options_.devices)
    fail(c.range, "python-unknown-fact",
         fmt::format("the mesh has {} devices, and --devices is {}", n, in.options_.devices));
  MeshObj m;
  m.sizes = shape;
  m.deviceIds = std::move(ids);
  for (const V &a : axisNames) {
    if (a->kind == Kind::Opaque)
      in.opaqueNeeded(a, c.range, "a mesh axis name");
    auto *s = dynCast<StrV>(a);
    if (!s)
      fail(c.range, "python-type", "mesh axis names are strings");
    m.names.push_back(s->s);
  }
  m.axisTypes = axisTypesArg(in, c, types, m.names.size(), dflt);
  return makeApi(std::move(m));
}

/// A mesh of `shape` over every device (`jax.make_mesh`): the shape must use them all.
V meshOfShape(Interp &in, const CallCtx &c, const V &shapeV, const V &names, const V &types,
              AxisKind dflt) {
  std::vector<int64_t> shape = in.shapeOf(shapeV, c.range, "the mesh shape");
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  if (n != in.options_.devices)
    fail(c.range, "python-unknown-fact",
         fmt::format("the mesh has {} devices, and --devices is {}", n, in.options_.devices));
  return meshFrom(in, c, shape, names, types, dflt);
}

/// `pltpu.create_tensorcore_mesh(axis_name, devices, num_cores)` and the dataclass
/// `pltpu.TensorCoreMesh(axis_name, num_cores)`.
V tensorCoreMesh(Interp &in, CallCtx &c, bool dataclass) {
  std::vector<V> a = dataclass ? c.bind(in, {"axis_name", "num_cores"})
                               : c.bind(in, {"axis_name", "devices", "num_cores"});
  if (dataclass)
    a.insert(a.begin() + 1, nullptr);
  V axis = a[0];
  if (!axis)
    in.raiseId("TypeError", fmt::format("{}() missing 'axis_name'", c.fn->name), c.range);
  // JAX types it `str`, but any hashable name works there; a tuple of strings
  // (JAX's own tests write `axis_name=('x',)`) is a name no string equals, so the
  // kernel cannot name that axis by a string (`lax.axis_index(('x',))` means the
  // axes named 'x', JAX's joint axes).
  std::string dkName;
  if (axis->kind == Kind::Str) {
    dkName = cast<StrV>(axis).s;
  } else if (axis->kind == Kind::Tuple) {
    dkName = "tc";
    for (const V &part : cast<TupleV>(axis).items) {
      if (part->kind != Kind::Str)
        unsupported(c.range, "a TensorCore mesh whose axis name is a tuple of non-strings");
      dkName += "_" + cast<StrV>(part).s;
    }
  } else {
    unsupported(c.range, "a TensorCore mesh whose axis name is neither a string nor a "
                         "tuple of strings");
  }
  if (given(a[1]))
    unsupported(c.range, fmt::format("{}(devices=...): give num_cores=N", c.fn->name));
  // Without num_cores, JAX's default: the TensorCores of one device.
  if (!given(a[2]) && !in.chip_)
    fail(c.range, "python-unknown-fact",
         fmt::format("{}: the number of TensorCores per device is unknown to dkv (its "
                     "devices are TPUs of no particular generation); pass num_cores=N, or "
                     "name the chip with --tpu NAME or '# dkv: tpu NAME' ({})",
                     c.fn->name, tpuChipNames()));
  int64_t cores = given(a[2]) ? in.toIndex(a[2], c.range, "num_cores") : in.chip_->coresPerDevice;
  if (cores < 1)
    fail(c.range, "python-call", "num_cores must be at least 1");
  return makeApi(TcMeshObj{dkName, cores, axis, axis->kind == Kind::Str});
}

/// The key argument of a jax.random function: one key, typed (shape (), `jax.random.key`)
/// or raw (a uint32 array of shape (2,), `PRNGKey`), as JAX's `_check_prng_key` and its
/// "accepts a single key" check take it (`batched`: `key_data` takes arrays of keys).
const HostArrayV &prngKey(Interp &in, CallCtx &c, const V &key, std::string_view fn,
                          bool batched = false) {
  if (key->kind == Kind::Opaque)
    in.opaqueNeeded(key, c.range, fmt::format("the key of jax.random.{}", fn));
  auto *k = dynCast<HostArrayV>(key);
  if (!k || (!k->key && (k->dtype != ast::DType::U32 || k->shape.empty() || k->shape.back() != 2)))
    unsupported(c.range, fmt::format("jax.random.{} of a {}: dkv models the keys of "
                                     "jax.random.key and PRNGKey (and of split)",
                                     fn, k ? "array that is not a key" : typeName(*key)));
  // The shape of the keys: a raw key's last dimension is its data.
  std::vector<int64_t> keys = k->shape;
  if (!k->key)
    keys.pop_back();
  if (!batched && !keys.empty())
    in.raiseId("TypeError",
               fmt::format("{} accepts a single key, but was given a key array of shape ({}{}) "
                           "!= (). Use jax.vmap for batching.",
                           fn, fmt::join(keys, ", "), keys.size() == 1 ? "," : ""),
               c.range);
  return *k;
}

/// `plsc.ScalarSubcoreMesh(axis_name=..., num_cores=N)` (jax/_src/pallas/mosaic/sc_core.py, a
/// keyword-only dataclass): one axis of `num_cores` cores, the scalar subcores of the chip's
/// SparseCores (by default all of them), each running the body as a core of a TensorCore
/// mesh does (docs/python.md "SparseCores"). Its `__post_init__` asks the chip for its
/// SparseCores: without --tpu the mesh is a fact of the chip; a chip without SparseCores
/// raises JAX's RuntimeError, more cores than the chip has its ValueError.
V scalarSubcoreMesh(Interp &in, CallCtx &c) {
  std::vector<V> a = c.bind(in, {"*", "axis_name", "num_cores"});
  V axis = a[0];
  if (!axis)
    in.raiseId("TypeError",
               "ScalarSubcoreMesh.__init__() missing 1 required keyword-only "
               "argument: 'axis_name'",
               c.range);
  if (!in.chip_)
    return in.chipFact("`plsc.ScalarSubcoreMesh(...)` (the SparseCores of the chip)", c.range);
  if (!in.chip_->sparseCores)
    in.raiseId("RuntimeError", "The current TPU does not have SparseCores", c.range);
  int64_t cores = given(a[1]) ? in.toIndex(a[1], c.range, "num_cores") : in.chip_->sparseCores;
  if (cores > in.chip_->sparseCores)
    in.raiseId("ValueError",
               fmt::format("Mesh has {} cores, but the current TPU chip has only {} SparseCores",
                           cores, in.chip_->sparseCores),
               c.range);
  if (cores < 1)
    fail(c.range, "python-call", "num_cores must be at least 1");
  if (axis->kind != Kind::Str)
    unsupported(c.range, "a ScalarSubcoreMesh whose axis name is not a string");
  TcMeshObj m{cast<StrV>(axis).s, cores, axis, true};
  m.sparse = true;
  return makeApi(std::move(m));
}

V memSpace(ast::MemSpace s, const char *name) { return makeApi(MemSpaceObj{s, name}); }

} // namespace

void registerHostJax(Registry &reg) {
  auto addFn = [&](std::vector<std::string> names, V (*h)(Interp &, CallCtx &),
                   std::string construct) {
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
    reg.addRow(
        ApiRow{std::move(names), BuiltinFn{shortName, h, std::move(construct), false}, nullptr});
  };
  // A row naming both jnp's and NumPy's spelling is two: a handler tells them apart by
  // the short name (`np.` makes NumPy arrays).
  auto fn = [&](std::vector<std::string> names, V (*h)(Interp &, CallCtx &),
                std::string construct = "") {
    auto numpyEnd = std::stable_partition(
        names.begin(), names.end(), [](const std::string &n) { return n.rfind("numpy.", 0) != 0; });
    if (numpyEnd != names.begin() && numpyEnd != names.end()) {
      addFn(std::vector<std::string>(numpyEnd, names.end()), h, construct);
      names.erase(numpyEnd, names.end());
    }
    addFn(std::move(names), h, std::move(construct));
  };
  auto constant = [&](std::vector<std::string> names, V (*c)(Interp &)) {
    reg.addRow(ApiRow{std::move(names), BuiltinFn{}, c});
  };
  for (const char *m :
       {"jax", "jax.numpy", "jax.lax", "jax.random", "jax.sharding", "jax.experimental",
        "jax.experimental.pallas", "jax.experimental.pallas.tpu", "jax.experimental.mesh_utils",
        "jax.tree_util", "jax.tree", "jax.debug", "jax.nn", "numpy", "numpy.testing",
        "jax.experimental.checkify"})
    reg.addModule(m);
  reg.addModule("jax.experimental.shard_map", {"jax._src.shard_map"});
  reg.addModule("jax.experimental.pallas.tpu_sc", {"jax._src.pallas.mosaic.sc_core"});

  fn(
      {"jax.device_count", "jax.local_device_count"},
      +[](Interp &in, CallCtx &) -> V { return integer(in.options_.devices); });
  // `jax.default_backend()`: the platform of the devices ("tpu": dkv checks TPU kernels;
  // another where the run says the test runs there: Interp::backendPlatform).
  fn(
      {"jax.default_backend"}, +[](Interp &in, CallCtx &c) -> V {
        c.bind(in, {});
        return string(in.backendPlatform());
      });
  fn(
      {"jax.devices", "jax.local_devices"}, +[](Interp &in, CallCtx &) -> V {
        std::vector<V> devs;
        for (int64_t i = 0; i < in.options_.devices; ++i)
          devs.push_back(makeApi(DeviceObj{i}));
        return list(std::move(devs));
      });
  fn(
      {"jax.experimental.mesh_utils.create_device_mesh"}, +[](Interp &in, CallCtx &c) -> V {
        std::vector<V> a = c.bind(
            in, {"mesh_shape", "devices", "contiguous_submeshes", "allow_split_physical_axes"});
        std::vector<int64_t> shape =
            in.shapeOf(need(in, c, a, 0, "mesh_shape"), c.range, "the device mesh shape");
        int64_t n = 1;
        for (int64_t d : shape)
          n *= d;
        if (n > in.options_.devices)
          fail(c.range, "python-unknown-fact",
               fmt::format("create_device_mesh({}) needs {} devices, and --devices is {}",
                           fmt::join(shape, ", "), n, in.options_.devices));
        return makeApi(DeviceArrayObj{shape, {}});
      });
  fn(
      {"jax.sharding.Mesh"}, +[](Interp &in, CallCtx &c) -> V {
        std::vector<V> a = c.bind(in, {"devices", "axis_names", "axis_types"});
        V devs = need(in, c, a, 0, "devices");
        std::vector<int64_t> shape;
        std::vector<int64_t> ids;
        if (devs->kind == Kind::List || devs->kind == Kind::Tuple) {
          std::vector<V> items = in.toVector(devs, c.range);
          if (!items.empty() && apiAs<DeviceObj>(items[0]))
            devs = in.knownArray(devs, nullptr, c.range); // the devices' order kept
        }
        if (auto *d = apiAs<DeviceArrayObj>(devs))
          shape = d->shape, ids = d->ids;
        else if (devs->kind == Kind::List || devs->kind == Kind::Tuple)
          shape = {static_cast<int64_t>(in.toVector(devs, c.range).size())};
        else if (devs->kind == Kind::Opaque)
          in.opaqueNeeded(devs, c.range, "the devices of a mesh");
        else
          fail(c.range, "python-unknown-fact",
               "Mesh(devices, ...): the devices must come from mesh_utils.create_device_mesh, "
               "jax.devices() or np.array(jax.devices()).reshape(...)");
        return meshFrom(in, c, shape, need(in, c, a, 1, "axis_names"), a[2], AxisKind::Auto,
                        std::move(ids));
      });
  fn(
      {"jax.make_mesh"}, +[](Interp &in, CallCtx &c) -> V {
        // make_mesh(axis_sizes, axis_names, axis_types=None, *, devices=None)
        // (jax/_src/sharding_impls.py): every axis Explicit when axis_types is None.
        std::vector<V> a = c.bind(in, {"axis_sizes", "axis_names", "axis_types", "*", "devices"});
        return meshOfShape(in, c, need(in, c, a, 0, "axis_sizes"), need(in, c, a, 1, "axis_names"),
                           a[2], AxisKind::Explicit);
      });
  // JAX's test utility `jtu.create_mesh(mesh_shape, axis_names, iota_order, axis_types)`:
  // a mesh of every device, as jax.make_mesh makes it (the device order is no fact dkv
  // models: device ids are mesh positions).
  fn(
      {"jax._src.test_util.create_mesh"}, +[](Interp &in, CallCtx &c) -> V {
        // Its axis types default to Auto (both of its branches).
        std::vector<V> a = c.bind(in, {"mesh_shape", "axis_names", "iota_order", "axis_types"});
        return meshOfShape(in, c, need(in, c, a, 0, "mesh_shape"), need(in, c, a, 1, "axis_names"),
                           a[3], AxisKind::Auto);
      });
  // `jax.set_mesh(mesh)`: the mesh of a shard_map without mesh= from here on (its
  // function form; a later set_mesh replaces it). `use_mesh` / `use_abstract_mesh` (in
  // `with`) restore the previous mesh on leaving, which dkv does not model: only the mesh
  // already set (the same axes, so entering changes nothing) is accepted.
  fn(
      {"jax.set_mesh", "jax.sharding.set_mesh"}, +[](Interp &in, CallCtx &c) -> V {
        std::vector<V> a = c.bind(in, {"mesh"});
        V m = need(in, c, a, 0, "mesh");
        if (m->kind == Kind::Opaque)
          in.opaqueNeeded(m, c.range, "the mesh of jax.set_mesh");
        if (!apiAs<MeshObj>(m))
          unsupported(c.range, fmt::format("jax.set_mesh of a {}", typeName(*m)));
        in.contextMesh_ = m;
        return m;
      });
  fn(
      {"jax.sharding.use_mesh", "jax.sharding.use_abstract_mesh"},
      +[](Interp &in, CallCtx &c) -> V {
        std::vector<V> a = c.bind(in, {"mesh"});
        V m = need(in, c, a, 0, "mesh");
        if (m->kind == Kind::Opaque)
          in.opaqueNeeded(m, c.range, fmt::format("the mesh of {}", c.fn->name));
        if (!apiAs<MeshObj>(m) || !in.contextMesh_ ||
            !in.equal(m, in.contextMesh_, c.range).value_or(false))
          unsupported(c.range,
                      fmt::format("{} of another mesh than jax.set_mesh's (a mesh set for a "
                                  "`with` block only is not modelled: give shard_map mesh=)",
                                  c.fn->name));
        return m;
      });
  fn(
      {"jax.sharding.PartitionSpec", "jax.P", "jax.sharding.P"},
      +[](Interp &, CallCtx &c) -> V { return makeApi(PSpecObj{c.args.pos}); });
  fn(
      {"jax.sharding.NamedSharding", "jax.NamedSharding"}, +[](Interp &in, CallCtx &c) -> V {
        std::vector<V> a = c.bind(in, {"mesh", "spec", "*", "memory_kind"});
        return makeApi(NamedShardingObj{a[0], a[1]});
      });
  fn(
      {"jax.device_put"}, +[](Interp &in, CallCtx &c) -> V {
        std::vector<V> a = c.bind(in, {"x", "device", "*", "src", "donate", "may_alias"});
        V x = need(in, c, a, 0, "x");
        // With a NamedSharding, the array's sharding is known (a shard_map without in_specs
        // takes it); its shape, element type and contents are x's.
        auto *h = dynCast<HostArrayV>(x);
        auto *ns = given(a[1]) ? apiAs<NamedShardingObj>(a[1]) : nullptr;
        if (h && ns && ns->spec && apiAs<PSpecObj>(ns->spec)) {
          auto out = std::make_shared<HostArrayV>(h->shape, h->dtype, h->isStruct);
          out->contents = h->contents;
          out->deviceContents = h->deviceContents;
          out->sharding = ns->spec;
          return out;
        }
        return x;
      });
  fn(
      {"jax.block_until_ready"}, +[](Interp &in, CallCtx &c) -> V {
        std::vector<V> a = c.bind(in, {"x"});
        return need(in, c, a, 0, "x");
      });
  fn(
      {"jax.experimental.checkify.checkify"}, +[](Interp &in, CallCtx &c) -> V {
        std::vector<V> a = c.bind(in, {"f", "errors"});
        return makeApi(CheckifyObj{need(in, c, a, 0, "f")});
      });
  // `jax.custom_vjp(fun, nondiff_argnums=...)`, `jax.custom_jvp(...)`: calling it calls fun.
  fn(
      {"jax.custom_vjp"}, +[](Interp &in, CallCtx &c) -> V {
        std::vector<V> a = c.bind(in, {"fun", "nondiff_argnums"});
        return makeApi(CustomDerivObj{need(in, c, a, 0, "fun"), true});
      });
  fn(
      {"jax.custom_jvp"}, +[](Interp &in, CallCtx &c) -> V {
        std::vector<V> a = c.bind(in, {"fun", "nondiff_argnums"});
        return makeApi(CustomDerivObj{need(in, c, a, 0, "fun"), false});
      });
  // Arguments JAX does not trace: `static_argnums=` / `static_argnames=`.
  static bool (*hasStatic)(const CallCtx &) = [](const CallCtx &c) {
    for (const auto &kw : c.args.kw)
      if (kw.first == "static_argnums" || kw.first == "static_argnames")
        return true;
    return false;
  };
  fn(
      {"jax.jit"}, +[](Interp &in, CallCtx &c) -> V {
        if (c.args.pos.empty()) {
          // `functools.partial(jax.jit, static_argnames=...)` or `@jax.jit(...)` factories.
          auto p = std::make_shared<PartialV>();
          static const BuiltinFn self{
              "jax.jit",
              +[](Interp &i2, CallCtx &c2) -> V {
                if (c2.args.pos.empty())
                  i2.raiseId("TypeError", "jit() missing 'fun'", c2.range);
                return makeApi(JitObj{c2.args.pos[0], false, hasStatic(c2)});
              },
              "", false};
          p->fn = builtinValue(self);
          p->kw = c.args.kw;
          return p;
        }
        if (c.args.pos.size() != 1)
          in.raiseId("TypeError", "jit() takes 1 positional argument", c.range);
        return makeApi(JitObj{c.args.pos[0], false, hasStatic(c)});
      });
  // `jax.named_call(fun, *, name=None)` (a decorator too): a call is a call of `fun` under
  // a name for profiles, which dkv does not model.
  fn(
      {"jax.named_call"}, +[](Interp &in, CallCtx &c) -> V {
        std::vector<V> a = c.bind(in, {"fun", "*", "name"});
        return makeApi(JitObj{need(in, c, a, 0, "fun"), true});
      });
  // Host PRNG keys (jax/_src/random.py), kept as shapes: their values are not computed.
  // `jax.random.key(seed)` is a typed key array of shape () (element type key<fry>);
  // `PRNGKey(seed)` a legacy raw key, a uint32 array of shape (2,) (threefry's).
  fn(
      {"jax.random.key"}, +[](Interp &in, CallCtx &c) -> V {
        std::vector<V> a = c.bind(in, {"seed", "*", "impl"});
        need(in, c, a, 0, "seed");
        if (given(a[1]))
          unsupported(c.range, "jax.random.key(..., impl=...): dkv models the default "
                               "(threefry) keys");
        auto k = std::make_shared<HostArrayV>(std::vector<int64_t>{}, ast::DType::U32);
        k->key = true;
        return k;
      });
  fn(
      {"jax.random.PRNGKey"}, +[](Interp &in, CallCtx &c) -> V {
        std::vector<V> a = c.bind(in, {"seed", "*", "impl"});
        need(in, c, a, 0, "seed");
        if (given(a[1]))
          unsupported(c.range, "jax.random.PRNGKey(..., impl=...): dkv models the default "
                               "(threefry) keys");
        return in.makeArray({2}, ast::DType::U32);
      });
  // `split(key, num=2)`: `num` keys (num an int or a shape), of the key's kind: a typed
  // key array of shape `num`, or raw keys of shape `num + (2,)`. JAX takes one key only.
  fn(
      {"jax.random.split"}, +[](Interp &in, CallCtx &c) -> V {
        std::vector<V> a = c.bind(in, {"key", "num"});
        const HostArrayV &key = prngKey(in, c, need(in, c, a, 0, "key"), "split");
        std::vector<int64_t> shape =
            given(a[1]) ? in.shapeOf(a[1], c.range, "the number of keys") : std::vector<int64_t>{2};
        for (int64_t d : shape)
          if (d < 0)
            in.raiseId("ValueError", "negative dimensions are not allowed", c.range);
        if (key.key) {
          auto k = std::make_shared<HostArrayV>(shape, ast::DType::U32);
          k->key = true;
          return k;
        }
        shape.push_back(2);
        return in.makeArray(shape, ast::DType::U32);
      });
  fn(
      {"jax.random.fold_in"}, +[](Interp &in, CallCtx &c) -> V {
        std::vector<V> a = c.bind(in, {"key", "data"});
        const HostArrayV &key = prngKey(in, c, need(in, c, a, 0, "key"), "fold_in");
        need(in, c, a, 1, "data");
        auto k = std::make_shared<HostArrayV>(key.shape, ast::DType::U32);
        k->key = key.key;
        return k;
      });
  // `key_data(keys)`: the uint32 data of typed keys, shape + (2,).
  fn(
      {"jax.random.key_data"}, +[](Interp &in, CallCtx &c) -> V {
        std::vector<V> a = c.bind(in, {"keys"});
        const HostArrayV &key = prngKey(in, c, need(in, c, a, 0, "keys"), "key_data", true);
        std::vector<int64_t> shape = key.shape;
        if (key.key)
          shape.push_back(2);
        return in.makeArray(shape, ast::DType::U32);
      });
  // Samples of one key: an array of `shape` (JAX's default ()) and `dtype`, its values not
  // computed.
  fn(
      {"jax.random.uniform", "jax.random.normal"}, +[](Interp &in, CallCtx &c) -> V {
        std::vector<V> a = c.bind(in, {"key", "shape", "dtype", "minval", "maxval"});
        prngKey(in, c, need(in, c, a, 0, "key"), c.fn->name);
        return in.makeArray(given(a[1]) ? in.shapeOf(a[1], c.range, "the array shape")
                                        : std::vector<int64_t>{},
                            in.dtypeArg(a[2], c.range));
      });
  fn(
      {"jax.random.randint"}, +[](Interp &in, CallCtx &c) -> V {
        std::vector<V> a = c.bind(in, {"key", "shape", "minval", "maxval", "dtype"});
        prngKey(in, c, need(in, c, a, 0, "key"), "randint");
        need(in, c, a, 2, "minval"), need(in, c, a, 3, "maxval");
        return in.makeArray(in.shapeOf(need(in, c, a, 1, "shape"), c.range, "the array shape"),
                            given(a[4]) ? in.dtypeArg(a[4], c.range) : ast::DType::I32);
      });
  fn(
      {"jax.ShapeDtypeStruct"}, +[](Interp &in, CallCtx &c) -> V {
        std::vector<V> a =
            c.bind(in, {"shape", "dtype", "*", "sharding", "weak_type", "vma", "manual_axis_type"});
        V s = in.makeArray(in.shapeOf(need(in, c, a, 0, "shape"), c.range, "the array shape"),
                           in.dtypeArg(need(in, c, a, 1, "dtype"), c.range), true);
        for (size_t i = 2; i < a.size(); ++i) // sharding, weak_type, vma, manual_axis_type
          if (given(a[i]))
            cast<HostArrayV>(s).structExtras = true;
        return s;
      });
  // `jax.ShapeDtypeStruct.like(x)`: a struct of x's shape and dtype.
  fn(
      {"jax.ShapeDtypeStruct.like"}, +[](Interp &in, CallCtx &c) -> V {
        std::vector<V> a = c.bind(in, {"x"});
        V x = need(in, c, a, 0, "x");
        auto *h = dynCast<HostArrayV>(x);
        if (!h) {
          if (x->kind == Kind::Opaque)
            return in.opaque("jax.ShapeDtypeStruct.like of a value dkv does not compute", c.range,
                             x);
          return in.opaque(fmt::format("jax.ShapeDtypeStruct.like of a {}", typeName(*x)), c.range);
        }
        return in.makeArray(h->shape, h->dtype, true);
      });
  fn(
      {"jax.numpy.array", "jax.numpy.asarray", "numpy.array", "numpy.asarray"},
      +[](Interp &in, CallCtx &c) -> V {
        std::vector<V> a = c.bind(in, {"object", "dtype", "*", "copy", "order", "ndmin"});
        bool numpy = c.fn->name.rfind("np.", 0) == 0;
        V out = in.knownArray(need(in, c, a, 0, "object"), a[1], c.range, numpy);
        // np.array / np.asarray make a NumPy array, jnp's a JAX array (of either): a
        // copy where the given array is of the other kind.
        auto *h = dynCast<HostArrayV>(out);
        if (!h || (h->numpy == numpy && !(h->x64 && !numpy)) || h->isStruct || h->key)
          return out;
        if (out == a[0] || (h->x64 && !numpy)) {
          // A JAX array of a NumPy float64 / int64 one is float32 / int32 (JAX without
          // x64); integer values that do not fit are left unknown.
          auto copy = std::make_shared<HostArrayV>(h->shape, h->dtype);
          if (contentsFit(*h, h->dtype, false)) {
            copy->contents = h->contents;
            copy->deviceContents = h->deviceContents;
          }
          out = copy;
        }
        cast<HostArrayV>(out).numpy = numpy;
        return out;
      });
  // `np.random.default_rng(seed=None)`: a Generator (its draws: rngDraw).
  fn(
      {"numpy.random.default_rng"}, +[](Interp &in, CallCtx &c) -> V {
        c.bind(in, {"seed"});
        return makeApi(NpRngObj{});
      });
  fn(
      {"jax.numpy.swapaxes", "numpy.swapaxes"}, +[](Interp &in, CallCtx &c) -> V {
        std::vector<V> a = c.bind(in, {"a", "axis1", "axis2"});
        V x = need(in, c, a, 0, "a");
        bool numpy = c.fn->name.rfind("np.", 0) == 0;
        if (x->kind == Kind::Opaque)
          return in.opaque(fmt::format("{} of it", c.fn->name), c.range, x);
        auto *h = dynCast<HostArrayV>(x);
        if (!h || h->isStruct)
          return in.opaque(fmt::format("{} of a {}", c.fn->name, typeName(*x)), c.range);
        return swapAxes(in, *h, need(in, c, a, 1, "axis1"), need(in, c, a, 2, "axis2"), numpy,
                        c.range);
      });
  // `lax.reshape(operand, new_sizes, dimensions=None, *, out_sharding=None)`
  // (jax/_src/lax/lax.py) of a host array or Python number: the same elements in
  // row-major order. A new size must keep the element count (JAX's shape rule does not
  // check it; dkv refuses it), `dimensions` (a transpose first) and `out_sharding` are
  // not modelled.
  fn(
      {"jax.lax.reshape"}, +[](Interp &in, CallCtx &c) -> V {
        std::vector<V> a = c.bind(in, {"operand", "new_sizes", "dimensions", "*", "out_sharding"});
        V x = need(in, c, a, 0, "operand");
        V sizes = need(in, c, a, 1, "new_sizes");
        if (in.inKernel_)
          return in.opaque("lax.reshape inside a kernel (not in the compute catalogue: "
                           "jnp.reshape is)",
                           c.range);
        if (x->kind == Kind::Opaque)
          return in.opaque("lax.reshape of it", c.range, x);
        if (given(a[2]) || given(a[3]))
          return in.opaque("lax.reshape with dimensions= or out_sharding=", c.range);
        std::vector<int64_t> shape = in.shapeOf(sizes, c.range, "lax.reshape's new_sizes");
        for (int64_t d : shape)
          if (d < 0)
            in.raise("TypeError",
                     fmt::format("reshape new_sizes must all be positive, got ({}{}).",
                                 fmt::join(shape, ", "), shape.size() == 1 ? "," : ""),
                     c.range);
        std::shared_ptr<HostArrayV> from;
        if (auto *h = dynCast<HostArrayV>(x); h && !h->isStruct) {
          from = std::make_shared<HostArrayV>(h->shape, h->dtype);
          if (contentsFit(*h, h->dtype, false)) { // a NumPy int64 array's JAX int32 values
            from->contents = h->contents;
            from->deviceContents = h->deviceContents;
          }
        } else if (x->kind == Kind::Int && cast<IntV>(x).i >= std::numeric_limits<int32_t>::min() &&
                   cast<IntV>(x).i <= std::numeric_limits<int32_t>::max()) {
          from = std::make_shared<HostArrayV>(std::vector<int64_t>{}, ast::DType::I32);
          from->contents = std::vector<int64_t>{cast<IntV>(x).i};
        } else if (x->kind == Kind::Float) {
          from = std::make_shared<HostArrayV>(std::vector<int64_t>{}, ast::DType::F32);
        } else {
          return in.opaque(fmt::format("lax.reshape of a {}", typeName(*x)), c.range);
        }
        int64_t total = 1;
        for (int64_t d : shape)
          total *= d;
        if (total != from->size())
          unsupported(c.range, fmt::format("lax.reshape of {} elements to a shape of {}",
                                           from->size(), total));
        auto out = std::make_shared<HostArrayV>(shape, from->dtype);
        out->contents = from->contents;
        out->deviceContents = from->deviceContents;
        return out;
      });
  fn(
      {"jax.numpy.cumulative_sum", "numpy.cumulative_sum"}, +[](Interp &in, CallCtx &c) -> V {
        // numpy 2 / the array API: cumulative_sum(x, /, *, axis=None, dtype=None,
        // include_initial=False); axis may be left out for a 1-d array only.
        std::vector<V> a = c.bind(in, {"x", "*", "axis", "dtype", "include_initial"});
        auto *arr = dynCast<HostArrayV>(need(in, c, a, 0, "x"));
        if (!arr)
          return in.opaque("jnp.cumulative_sum of a value that is not an array", c.range);
        if (given(a[2]))
          unsupported(c.range, "cumulative_sum(dtype=...)");
        size_t n = arr->shape.size();
        if (n == 0)
          in.raise("ValueError", "The input must be non-scalar to take a cumulative sum", c.range);
        if (!given(a[1]) && n != 1)
          in.raise("ValueError",
                   "axis must be specified in cumulative_sum for more than one dimension", c.range);
        size_t axis = given(a[1]) ? static_cast<size_t>(axisArg(in, a[1], n, c.range)) : 0;
        bool initial = a[3] && in.truth(a[3], c.range, "include_initial");
        if (!ast::isInteger(arr->dtype))
          return in.opaque("the cumulative sum of a float array", c.range);
        std::vector<int64_t> shape = arr->shape;
        if (initial)
          ++shape[axis];
        std::vector<int64_t> src = stridesOf(arr->shape), dst = stridesOf(shape);
        int64_t outSize = 1;
        for (int64_t x : shape)
          outSize *= x;
        in.alloc(static_cast<uint64_t>(outSize), c.range);
        bool numpy = c.fn->name.rfind("np.", 0) == 0;
        if (numpy && !prim::info(arr->dtype).isSigned)
          return in.opaque("the cumulative sum of an unsigned NumPy array (uint64, which dkv "
                           "does not model)",
                           c.range);
        V sums = in.mapContents(*arr, shape, [&](const std::vector<int64_t> &v) {
          std::vector<int64_t> out(static_cast<size_t>(outSize), 0);
          for (size_t flat = 0; flat < out.size(); ++flat) {
            int64_t pos = (static_cast<int64_t>(flat) / dst[axis]) % shape[axis];
            int64_t from = initial ? pos - 1 : pos;
            if (from < 0)
              continue; // the initial zero
            size_t base = 0;
            for (size_t d = 0; d < n; ++d)
              if (d != axis)
                base +=
                    static_cast<size_t>((static_cast<int64_t>(flat) / dst[d]) % shape[d] * src[d]);
            // Row-major order: the previous element along the axis is already summed.
            int64_t prev = pos > 0 ? out[flat - static_cast<size_t>(dst[axis])] : 0;
            auto sum = support::checkedAdd(prev, v[base + static_cast<size_t>(from * src[axis])]);
            if (!sum.ok())
              fail(c.range, "python-overflow", "a cumulative sum beyond 64 bits");
            out[flat] = sum.value;
          }
          return out;
        });
        return sumResult(cast<HostArrayV>(sums), arr->dtype, numpy);
      });
  fn(
      {"jax.numpy.tile"}, +[](Interp &in, CallCtx &c) -> V { return tileArray(in, c, false); });
  // np.iinfo(t) / np.finfo(t) (jnp's are the same objects, ml_dtypes' for the narrow
  // floats): of an integer type iinfo, of a float type finfo, NumPy's ValueError else.
  fn(
      {"jax.numpy.promote_types"},
      +[](Interp &in, CallCtx &c) -> V { return promoteTypes(in, c, true); });
  fn(
      {"jax.numpy.result_type"},
      +[](Interp &in, CallCtx &c) -> V { return promoteTypes(in, c, false); });
  fn(
      {"numpy.iinfo", "jax.numpy.iinfo"},
      +[](Interp &in, CallCtx &c) -> V { return dtypeLimits(in, c, false); });
  fn(
      {"numpy.finfo", "jax.numpy.finfo"},
      +[](Interp &in, CallCtx &c) -> V { return dtypeLimits(in, c, true); });
  fn(
      {"numpy.tile"}, +[](Interp &in, CallCtx &c) -> V { return tileArray(in, c, true); });
  fn(
      {"numpy.expand_dims"}, +[](Interp &in, CallCtx &c) -> V { return expandDims(in, c, true); });
  fn(
      {"jax.numpy.squeeze"},
      +[](Interp &in, CallCtx &c) -> V { return squeezeDims(in, c, false); });
  fn(
      {"numpy.squeeze"}, +[](Interp &in, CallCtx &c) -> V { return squeezeDims(in, c, true); });
  fn(
      {"jax.numpy.ravel"}, +[](Interp &in, CallCtx &c) -> V { return ravelArray(in, c, false); });
  fn(
      {"numpy.ravel"}, +[](Interp &in, CallCtx &c) -> V { return ravelArray(in, c, true); });
  fn(
      {"jax.numpy.stack"}, +[](Interp &in, CallCtx &c) -> V { return stackArrays(in, c, false); });
  fn(
      {"numpy.stack"}, +[](Interp &in, CallCtx &c) -> V { return stackArrays(in, c, true); });
  fn(
      {"numpy.concatenate"}, +[](Interp &in, CallCtx &c) -> V {
        std::vector<V> a = c.bind(in, {"arrays", "axis", "out", "*", "dtype", "casting"});
        if (given(a[2]) || given(a[3]) || given(a[4])) // out, dtype, casting ("*" has no slot)
          return in.opaque("np.concatenate with out=, dtype= or casting=", c.range);
        return in.concatArrays(need(in, c, a, 0, "arrays"), a[1], c.range, true);
      });
  fn(
      {"numpy.prod"}, +[](Interp &in, CallCtx &c) -> V { return intReduce(in, c, true); });
  fn(
      {"numpy.sum"}, +[](Interp &in, CallCtx &c) -> V { return intReduce(in, c, false); });
  fn(
      {"jax.numpy.arange", "numpy.arange"}, +[](Interp &in, CallCtx &c) -> V {
        // jnp.arange(start, stop, step, dtype, *, device, out_sharding); NumPy's has
        // `device` and `like` after the `*`. Where the array lives is no fact dkv models.
        bool numpy = c.fn->name.rfind("np.", 0) == 0;
        std::vector<V> a = c.bind(
            in, {"start", "stop", "step", "dtype", "*", "device", numpy ? "like" : "out_sharding"});
        V start = a[1] ? a[0] : integer(0), stop = a[1] ? a[1] : a[0];
        if (!stop)
          in.raiseId("TypeError", "arange() missing required argument 'start'", c.range);
        V step = a[2] ? a[2] : integer(1);
        bool floats = false;
        for (const V &v : {start, stop, step}) {
          if (v->kind == Kind::Opaque)
            in.opaqueNeeded(v, c.range, "the length of jnp.arange");
          floats = floats || v->kind == Kind::Float;
        }
        int64_t n;
        if (floats) {
          auto f = [](const V &v) {
            return v->kind == Kind::Float
                       ? cast<FloatV>(v).f
                       : static_cast<double>(v->kind == Kind::Int ? cast<IntV>(v).i
                                                                  : cast<BoolV>(v).b);
          };
          double len = std::ceil((f(stop) - f(start)) / f(step));
          n = len > 0 ? static_cast<int64_t>(len) : 0;
        } else {
          int64_t lo = in.toIndex(start, c.range, "jnp.arange"),
                  hi = in.toIndex(stop, c.range, "jnp.arange");
          int64_t st = in.toIndex(step, c.range, "jnp.arange");
          if (st == 0)
            in.raise("ZeroDivisionError", "division by zero", c.range);
          n = std::max<int64_t>(0, (hi - lo + st + (st > 0 ? -1 : 1)) / st);
        }
        // NumPy's default types are float64 and int64, JAX's float32 and int32.
        auto [dt, x64] = given(a[3]) ? (numpy ? in.numpyDtypeArg(a[3], c.range)
                                              : std::pair{in.dtypeArg(a[3], c.range), false})
                                     : std::pair{floats ? ast::DType::F32 : ast::DType::I32, numpy};
        auto out = std::make_shared<HostArrayV>(std::vector<int64_t>{n}, dt);
        out->numpy = numpy;
        out->x64 = x64;
        // out_sharding=P(...) (under jax.set_mesh) or a NamedSharding: its sharding.
        if (!out->numpy && given(a[5])) {
          if (apiAs<PSpecObj>(a[5]))
            out->sharding = a[5];
          else if (auto *ns = apiAs<NamedShardingObj>(a[5]); ns && apiAs<PSpecObj>(ns->spec))
            out->sharding = ns->spec;
        }
        return out;
      });
  fn(
      {"jax.experimental.shard_map.shard_map", "jax.shard_map"}, +[](Interp &in, CallCtx &c) -> V {
        std::vector<V> a = c.bind(in, {"f", "*", "mesh", "in_specs", "out_specs", "check_rep",
                                       "check_vma", "axis_names", "auto"});
        if (!a[0]) {
          // The decorator form: shard_map(mesh=..., ...)(f).
          auto p = std::make_shared<PartialV>();
          p->fn = builtinValue(*c.fn);
          p->kw = c.args.kw;
          return p;
        }
        return makeApi(ShardMapObj{a[0], a[1], a[2], a[3]});
      });
  // Positional mesh/in_specs/out_specs of the older shard_map.
  fn(
      {"jax.experimental.pallas.tpu.create_tensorcore_mesh"},
      +[](Interp &in, CallCtx &c) -> V { return tensorCoreMesh(in, c, false); });
  fn(
      {"jax.experimental.pallas.tpu.TensorCoreMesh"},
      +[](Interp &in, CallCtx &c) -> V { return tensorCoreMesh(in, c, true); });
  fn({"jax.experimental.pallas.tpu_sc.ScalarSubcoreMesh"}, scalarSubcoreMesh);
  fn(
      {"jax.experimental.pallas.tpu_sc.VectorSubcoreMesh"}, +[](Interp &, CallCtx &c) -> V {
        unsupported(c.range, "plsc.VectorSubcoreMesh: dkv models the scalar subcores of "
                             "SparseCores (plsc.ScalarSubcoreMesh), not their vector subcores "
                             "(docs/python.md \"SparseCores\")");
      });
  fn(
      {"jax.experimental.pallas.tpu_sc.get_sparse_core_info"}, +[](Interp &in, CallCtx &c) -> V {
        if (!c.args.pos.empty() || !c.args.kw.empty())
          in.raiseId("TypeError", "get_sparse_core_info() takes 0 positional arguments", c.range);
        if (!in.chip_)
          return in.chipFact("`plsc.get_sparse_core_info()`", c.range);
        if (!in.chip_->sparseCores)
          in.raiseId("RuntimeError", "The current TPU does not have SparseCores", c.range);
        return makeApi(SparseCoreObj{in.chip_});
      });
  fn(
      {"jax.experimental.pallas.tpu.get_tpu_info"}, +[](Interp &in, CallCtx &c) -> V {
        if (!c.args.pos.empty() || !c.args.kw.empty())
          in.raiseId("TypeError", "get_tpu_info() takes 0 positional arguments", c.range);
        if (!in.chip_)
          return in.chipFact("`pltpu.get_tpu_info()`", c.range);
        return makeApi(TpuInfoObj{in.chip_});
      });
  fn(
      {"jax.experimental.pallas.kernel"}, +[](Interp &in, CallCtx &c) -> V {
        std::vector<V> a =
            c.bind(in, {"body", "out_type", "*", "mesh", "scratch_types", "compiler_params",
                        "interpret", "cost_estimate", "debug", "name", "metadata"});
        V mesh = a[2];
        if (!mesh)
          in.raiseId("TypeError", "pl.kernel() missing 'mesh'", c.range);
        if (mesh->kind == Kind::Opaque)
          in.opaqueNeeded(mesh, c.range, "the mesh of pl.kernel");
        if (!apiAs<TcMeshObj>(mesh))
          unsupported(c.range,
                      fmt::format("pl.kernel over {}: dkv traces pl.kernel over a TensorCore "
                                  "mesh (pltpu.create_tensorcore_mesh) or a SparseCore "
                                  "plsc.ScalarSubcoreMesh",
                                  typeName(*mesh)));
        if (!given(a[0])) {
          // The decorator factory: @pl.kernel(out_type=..., mesh=...) def body(...).
          auto p = std::make_shared<PartialV>();
          p->fn = builtinValue(*c.fn);
          p->kw = c.args.kw;
          for (size_t i = 1; i < c.args.pos.size(); ++i)
            p->kw.emplace_back("out_type", c.args.pos[i]);
          return p;
        }
        if (a[0]->kind == Kind::List || a[0]->kind == Kind::Tuple)
          unsupported(c.range, "pl.kernel with several bodies and meshes (MPMD)");
        return makeApi(PlKernelObj{a[0], a[1], a[2], a[3], a[4]});
      });
  fn(
      {"jax.experimental.pallas.pallas_call"}, +[](Interp &in, CallCtx &c) -> V {
        std::vector<V> a =
            c.bind(in, {"kernel", "out_shape", "*", "grid_spec", "grid", "in_specs", "out_specs",
                        "scratch_shapes", "input_output_aliases", "compiler_params", "interpret",
                        "debug", "name", "cost_estimate", "backend", "metadata"});
        need(in, c, a, 0, "kernel");
        need(in, c, a, 1, "out_shape");
        return makeApi(PallasCallObj{a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[8], a[7]});
      });
  fn(
      {"jax.experimental.pallas.tpu.PrefetchScalarGridSpec", "jax.experimental.pallas.GridSpec"},
      +[](Interp &in, CallCtx &c) -> V {
        std::vector<V> a =
            c.bind(in, {"num_scalar_prefetch", "grid", "in_specs", "out_specs", "scratch_shapes"});
        GridSpecObj g{a[1], a[2], a[3], a[4], 0};
        if (given(a[0])) {
          g.numScalarPrefetch = in.toIndex(a[0], c.range, "num_scalar_prefetch");
          if (g.numScalarPrefetch < 0)
            fail(c.range, "python-call", "num_scalar_prefetch must not be negative");
        }
        return makeApi(std::move(g));
      });
  fn(
      {"jax.experimental.pallas.BlockSpec"}, +[](Interp &in, CallCtx &c) -> V {
        std::vector<V> a =
            c.bind(in, {"block_shape", "index_map", "*", "memory_space", "pipeline_mode"});
        // Blocked specs are read where they are used (emit_pipeline: Pipeline.cpp).
        BlockSpecObj b{std::nullopt, given(a[0]) ? a[0] : nullptr, given(a[1]) ? a[1] : nullptr,
                       given(a[3]) ? a[3] : nullptr, c.range};
        if (given(a[2])) {
          auto *m = apiAs<MemSpaceObj>(a[2]);
          if (!m)
            unsupported(c.range, fmt::format("the memory space {}", typeName(*a[2])));
          if (m->semaphore)
            b.semaphore = true;
          else
            b.space = m->space;
        }
        return makeApi(b);
      });
  fn(
      {"jax.experimental.pallas.tpu.CompilerParams",
       "jax.experimental.pallas.tpu.TPUCompilerParams"},
      +[](Interp &in, CallCtx &c) -> V {
        std::vector<V> a = c.bind(
            in, {"dimension_semantics", "allow_input_fusion", "vmem_limit_bytes", "collective_id",
                 "flags", "serialization_format", "internal_scratch_in_bytes",
                 "disable_bounds_checks", "has_side_effects", "skip_device_barrier", "kernel_type",
                 "allow_collective_id_without_custom_barrier", "disable_semaphore_checks",
                 "shape_invariant_numerics", "use_tc_tiling_on_sc", "needs_layout_passes",
                 "fuse_transposed_lhs_in_matmul", "opt_level"});
        CompilerParamsObj p;
        if (given(a[3]))
          p.collectiveId = in.toIndex(a[3], c.range, "collective_id");
        if (a[9])
          p.skipDeviceBarrier = in.truth(a[9], c.range, "skip_device_barrier");
        if (given(a[0])) {
          p.dimensionSemantics = a[0];
          p.semanticsAt = c.range;
        }
        return makeApi(p);
      });
  fn(
      {"jax.named_scope"}, +[](Interp &, CallCtx &) -> V { return makeApi(NamedScopeObj{}); });
  fn(
      {"jax.experimental.pallas.ds", "jax.experimental.pallas.dslice"},
      +[](Interp &in, CallCtx &c) -> V {
        // jax/_src/indexing.py dslice: `ds(None)` is `:`, `ds(j)` is `:j` (`0:j`),
        // `ds(None, n)` is `0:n`, `ds(i, n)` is `i:i+n`.
        std::vector<V> a = c.bind(in, {"start", "size", "stride"});
        if (given(a[2]))
          unsupported(c.range, "pl.ds with a stride");
        V start = need(in, c, a, 0, "start");
        if (!a[1]) {
          if (start->kind == Kind::None)
            return std::make_shared<SliceV>(none(), none(), none());
          return makeApi(DSliceObj{integer(0), start});
        }
        return makeApi(DSliceObj{start->kind == Kind::None ? integer(0) : start, a[1]});
      });
  fn(
      {"jax.debug.print", "jax.experimental.pallas.debug_print"},
      +[](Interp &, CallCtx &) -> V { return none(); });
  fn(
      {"jax.tree.map", "jax.tree_util.tree_map"}, +[](Interp &in, CallCtx &c) -> V {
        if (c.args.pos.size() < 2)
          in.raiseId("TypeError", "map() missing required arguments: 'f' and 'tree'", c.range);
        V isLeaf;
        for (const auto &[k, v] : c.args.kw) {
          if (k != "is_leaf")
            in.raiseId("TypeError", fmt::format("map() got an unexpected keyword argument '{}'", k),
                       c.range);
          isLeaf = given(v) ? v : nullptr;
        }
        std::vector<V> rest(c.args.pos.begin() + 2, c.args.pos.end());
        return treeMap(in, c.args.pos[0], c.args.pos[1], rest, isLeaf, c.range);
      });
  // tree_flatten / tree_structure / tree_unflatten: the leaves in jax.tree.leaves' order
  // and the structure they fill (dicts by sorted keys, NamedTuples keep their class).
  fn(
      {"jax.tree.flatten", "jax.tree_util.tree_flatten"},
      +[](Interp &in, CallCtx &c) -> V { return treeFlatten(in, c, false); });
  fn(
      {"jax.tree.structure", "jax.tree_util.tree_structure"},
      +[](Interp &in, CallCtx &c) -> V { return treeFlatten(in, c, true); });
  fn(
      {"jax.tree.unflatten", "jax.tree_util.tree_unflatten"}, +[](Interp &in, CallCtx &c) -> V {
        std::vector<V> a = c.bind(in, {"treedef", "leaves"});
        auto *def = apiAs<TreeDefObj>(need(in, c, a, 0, "treedef"));
        if (!def)
          return in.opaque("tree_unflatten of a structure dkv does not compute", c.range);
        std::vector<V> leaves = in.toVector(need(in, c, a, 1, "leaves"), c.range);
        auto want = static_cast<size_t>(def->leaves);
        if (leaves.size() != want)
          in.raiseId("ValueError",
                     fmt::format("Too {} leaves for PyTreeDef; expected {}, got {}.",
                                 leaves.size() < want ? "few" : "many", want, leaves.size()),
                     c.range);
        size_t at = 0;
        return treeRebuild(in, def->tree, def->isLeaf, leaves, at, c.range);
      });
  fn(
      {"jax.tree.leaves", "jax.tree_util.tree_leaves"}, +[](Interp &in, CallCtx &c) -> V {
        std::vector<V> a = c.bind(in, {"tree", "is_leaf"});
        V tree = need(in, c, a, 0, "tree");
        std::vector<V> out;
        if (!treeLeaves(in, tree, given(a[1]) ? a[1] : nullptr, out, c.range))
          return in.opaque("jax.tree.leaves of a value dkv does not compute", c.range, tree);
        return list(std::move(out));
      });
  fn(
      {"jax.tree_util.Partial"}, +[](Interp &in, CallCtx &c) -> V {
        if (c.args.pos.empty())
          in.raiseId("TypeError", "Partial() missing the function", c.range);
        auto p = std::make_shared<PartialV>();
        p->fn = c.args.pos[0];
        p->pos.assign(c.args.pos.begin() + 1, c.args.pos.end());
        p->kw = c.args.kw;
        return p;
      });
  // `jax.tree_util.register_pytree_node_class(cls)` (a class decorator) returns `cls`,
  // registering it as a pytree node flattened by `tree_flatten` and rebuilt by
  // `cls.tree_unflatten` (read here, as JAX reads it: its AttributeError if missing);
  // `register_pytree_node(cls, flatten, unflatten)` returns None. dkv does not flatten
  // instances: a pytree operation on one stays refused (treeLeaf).
  fn(
      {"jax.tree_util.register_pytree_node_class", "jax.tree_util.register_pytree_with_keys_class"},
      +[](Interp &in, CallCtx &c) -> V {
        std::vector<V> a = c.bind(in, {"cls"});
        V cls = need(in, c, a, 0, "cls");
        if (cls->kind == Kind::Opaque)
          return cls;
        in.getAttr(cls, "tree_unflatten", c.range);
        return cls;
      });
  // `jax.tree_util.register_dataclass(cls, data_fields=None, meta_fields=None,
  // drop_fields=())` returns `cls` (a class decorator). Without the field lists the class
  // must be a dataclass (JAX's TypeErrors otherwise); as for the classes above, dkv does
  // not flatten the instances.
  fn(
      {"jax.tree_util.register_dataclass"}, +[](Interp &in, CallCtx &c) -> V {
        std::vector<V> a = c.bind(in, {"nodetype", "data_fields", "meta_fields", "drop_fields"});
        V cls = need(in, c, a, 0, "nodetype");
        const bool data = given(a[1]), meta = given(a[2]);
        if (data != meta)
          in.raiseId("TypeError",
                     "register_dataclass: data_fields and meta_fields must both be specified "
                     "when either is specified.",
                     c.range);
        if (cls->kind == Kind::Opaque || data)
          return cls;
        auto *k = dynCast<ClassV>(cls);
        if (!k || !k->dataclassFields)
          in.raiseId("TypeError",
                     "register_dataclass: data_fields and meta_fields are required when "
                     "nodetype is not a dataclass.",
                     c.range);
        return cls;
      });
  fn(
      {"jax.tree_util.register_pytree_node"}, +[](Interp &in, CallCtx &c) -> V {
        std::vector<V> a =
            c.bind(in, {"nodetype", "flatten_func", "unflatten_func", "flatten_with_keys_func"});
        need(in, c, a, 0, "nodetype"), need(in, c, a, 1, "flatten_func");
        need(in, c, a, 2, "unflatten_func");
        return none();
      });
  // `jnp.ndarray` is jax.Array (jax/numpy/__init__.py); `np.ndarray` NumPy's array class
  // (isinstance of an ndarray with it is true: were it opaque, isinstance would be false).
  constant(
      {"jax.Array", "jax.numpy.ndarray"}, +[](Interp &in) -> V { return in.arrayClass_; });
  constant(
      {"numpy.ndarray"}, +[](Interp &in) -> V { return in.ndarrayClass_; });
  constant(
      {"jax.numpy.newaxis", "numpy.newaxis"}, +[](Interp &) -> V { return none(); });

  // Memory spaces, semaphore types, device id types (aliases across JAX versions).
  constant(
      {"jax.experimental.pallas.tpu.ANY", "jax.experimental.pallas.ANY",
       "jax.experimental.pallas.tpu.TPUMemorySpace.ANY",
       "jax.experimental.pallas.tpu.MemorySpace.ANY", "jax.experimental.pallas.MemorySpace.ANY"},
      +[](Interp &) { return memSpace(ast::MemSpace::Any, "ANY"); });
  constant(
      {"jax.experimental.pallas.tpu.VMEM", "jax.experimental.pallas.tpu.TPUMemorySpace.VMEM",
       "jax.experimental.pallas.tpu.MemorySpace.VMEM"},
      +[](Interp &) { return memSpace(ast::MemSpace::Vmem, "VMEM"); });
  constant(
      {"jax.experimental.pallas.tpu.SMEM", "jax.experimental.pallas.tpu.TPUMemorySpace.SMEM",
       "jax.experimental.pallas.tpu.MemorySpace.SMEM"},
      +[](Interp &) { return memSpace(ast::MemSpace::Smem, "SMEM"); });
  constant(
      {"jax.experimental.pallas.tpu.HBM", "jax.experimental.pallas.tpu.MemorySpace.HBM"},
      +[](Interp &) { return memSpace(ast::MemSpace::Hbm, "HBM"); });
  constant(
      {"jax.experimental.pallas.tpu.SEMAPHORE", "jax.experimental.pallas.tpu.MemorySpace.SEMAPHORE",
       "jax.experimental.pallas.tpu.TPUMemorySpace.SEMAPHORE"},
      +[](Interp &) {
        return makeApi(MemSpaceObj{ast::MemSpace::Any, "SEMAPHORE", true});
      });
  constant(
      {"jax.experimental.pallas.tpu.SemaphoreType.DMA",
       "jax.experimental.pallas.SemaphoreType.DMA"},
      +[](Interp &) { return makeApi(SemTypeObj{ast::SemKind::Dma}); });
  constant(
      {"jax.experimental.pallas.tpu.SemaphoreType.REGULAR",
       "jax.experimental.pallas.SemaphoreType.REGULAR"},
      +[](Interp &) { return makeApi(SemTypeObj{ast::SemKind::Regular}); });
  // A kernel's own barrier semaphore (with CompilerParams(collective_id=...,
  // allow_collective_id_without_custom_barrier=True)): a value, refused where it would
  // become a semaphore (scratchDecl, a semaphore output).
  constant(
      {"jax.experimental.pallas.tpu.SemaphoreType.BARRIER",
       "jax.experimental.pallas.SemaphoreType.BARRIER"},
      +[](Interp &) { return makeApi(SemTypeObj{ast::SemKind::Barrier}); });
  constant(
      {"jax.experimental.pallas.tpu.DeviceIdType.MESH",
       "jax.experimental.pallas.DeviceIdType.MESH"},
      +[](Interp &) { return makeApi(DeviceIdTypeObj{false}); });
  constant(
      {"jax.experimental.pallas.tpu.DeviceIdType.LOGICAL",
       "jax.experimental.pallas.DeviceIdType.LOGICAL"},
      +[](Interp &) { return makeApi(DeviceIdTypeObj{true}); });
  constant(
      {"jax.sharding.AxisType.Auto"},
      +[](Interp &) { return makeApi(AxisTypeObj{AxisKind::Auto}); });
  constant(
      {"jax.sharding.AxisType.Explicit"},
      +[](Interp &) { return makeApi(AxisTypeObj{AxisKind::Explicit}); });
  constant(
      {"jax.sharding.AxisType.Manual"},
      +[](Interp &) { return makeApi(AxisTypeObj{AxisKind::Manual}); });
  // pltpu.CoreType's members: one object each per run (a test compares them with `is`).
  constant(
      {"jax.experimental.pallas.tpu.CoreType.TC"},
      +[](Interp &) { return makeApi(CoreTypeObj{"TC"}); });
  constant(
      {"jax.experimental.pallas.tpu.CoreType.SC_SCALAR_SUBCORE"},
      +[](Interp &) { return makeApi(CoreTypeObj{"SC_SCALAR_SUBCORE"}); });
  constant(
      {"jax.experimental.pallas.tpu.CoreType.SC_VECTOR_SUBCORE"},
      +[](Interp &) { return makeApi(CoreTypeObj{"SC_VECTOR_SUBCORE"}); });
  // Element types (jnp and np spellings); those dkv does not model are still values.
  struct D {
    const char *name;
    std::optional<ast::DType> dt;
  };
  static const D dtypes[] = {
      {"float32", ast::DType::F32}, {"bfloat16", ast::DType::BF16},  {"float16", ast::DType::F16},
      {"int32", ast::DType::I32},   {"int16", ast::DType::I16},      {"int8", ast::DType::I8},
      {"uint8", ast::DType::U8},    {"uint32", ast::DType::U32},     {"float64", std::nullopt},
      {"int64", std::nullopt},      {"uint16", std::nullopt},        {"uint64", std::nullopt},
      {"bool_", std::nullopt},      {"float8_e4m3fn", std::nullopt}, {"float8_e5m2", std::nullopt},
      {"int4", std::nullopt}};
  // `jnp.int32` (a class of metaclass _ScalarMeta, jax/_src/numpy/scalar_types.py) and
  // `np.int32` (NumPy's scalar type) are distinct objects: one row each.
  for (const D &d : dtypes) {
    reg.addRow(ApiRow{{std::string("jax.numpy.") + d.name}, BuiltinFn{}, nullptr});
    if (std::string(d.name) != "bfloat16" && std::string(d.name).rfind("float8", 0) != 0 &&
        std::string(d.name) != "int4")
      reg.addRow(ApiRow{{std::string("numpy.") + d.name}, BuiltinFn{}, nullptr});
  }
}

/// The value of a dtype constant (registered without a factory: DTypeObj by its name):
/// `jax.numpy.int32` is JAX's scalar type, `numpy.int32` NumPy's, a bare name (`np.dtype(
/// "int32")`) a dtype.
V dtypeConstant(const std::string &qualified) {
  std::string name = qualified.substr(qualified.rfind('.') + 1);
  static const std::map<std::string, ast::DType> known = {
      {"float32", ast::DType::F32}, {"bfloat16", ast::DType::BF16}, {"float16", ast::DType::F16},
      {"int32", ast::DType::I32},   {"int16", ast::DType::I16},     {"int8", ast::DType::I8},
      {"uint8", ast::DType::U8},    {"uint32", ast::DType::U32}};
  auto it = known.find(name);
  DTypeForm form = qualified.rfind("jax.numpy.", 0) == 0 ? DTypeForm::JnpType
                   : qualified.rfind("numpy.", 0) == 0   ? DTypeForm::NumpyType
                                                         : DTypeForm::Dtype;
  return makeApi(
      DTypeObj{it == known.end() ? std::nullopt : std::optional(it->second), name, form});
}

// `jnp.split(x, n, axis)` / `np.split` of a host array into n equal parts (NumPy's rule:
// a ValueError when n does not divide the axis); integer contents are kept.
V Interp::splitArray(const HostArrayV &arr, const V &sections, const V &axisV, SourceRange r) {
  if (sections->kind != Kind::Int && sections->kind != Kind::Bool)
    return opaque("jnp.split at a list of indices", r);
  int64_t n = toIndex(sections, r, "indices_or_sections");
  if (arr.shape.empty())
    raise("IndexError", "tuple index out of range", r);
  size_t axis = given(axisV) ? static_cast<size_t>(axisArg(*this, axisV, arr.shape.size(), r)) : 0;
  if (n <= 0)
    raise("ValueError", "number sections must be larger than 0.", r);
  if (arr.shape[axis] % n != 0)
    raise("ValueError", "array split does not result in an equal division", r);
  std::vector<int64_t> shape = arr.shape;
  shape[axis] /= n;
  std::vector<int64_t> src = stridesOf(arr.shape), dst = stridesOf(shape);
  int64_t partSize = 1;
  for (int64_t x : shape)
    partSize *= x;
  std::vector<V> parts;
  for (int64_t k = 0; k < n; ++k) {
    V part = mapContents(arr, shape, [&](const std::vector<int64_t> &v) {
      std::vector<int64_t> out(static_cast<size_t>(partSize));
      for (int64_t flat = 0; flat < partSize; ++flat) {
        int64_t from = 0;
        for (size_t d = 0; d < shape.size(); ++d) {
          int64_t i = flat / dst[d] % shape[d];
          from += (d == axis ? i + k * shape[d] : i) * src[d];
        }
        out[static_cast<size_t>(flat)] = v[static_cast<size_t>(from)];
      }
      return out;
    });
    parts.push_back(part);
  }
  return list(std::move(parts));
}

// `jnp.concatenate(arrays, axis=0)` of host arrays (NumPy's rules, which JAX's follow):
// one rank, the extents added along the axis and equal elsewhere; the values kept where
// every part's are known. Mixed element types and `axis=None` are unknown to dkv.
V Interp::concatArrays(const V &arrays, const V &axisV, SourceRange r, bool numpy) {
  if (arrays->kind != Kind::List && arrays->kind != Kind::Tuple)
    return opaque(fmt::format("jnp.concatenate of a {}", typeName(*arrays)), r, arrays);
  std::vector<V> items = toVector(arrays, r);
  if (items.empty())
    raise("ValueError", "need at least one array to concatenate", r);
  std::vector<const HostArrayV *> parts;
  for (const V &x : items) {
    auto *h = dynCast<HostArrayV>(x);
    if (!h || h->isStruct || h->key)
      return opaque(fmt::format("jnp.concatenate of a {}", typeName(*x)), r, x);
    parts.push_back(h);
  }
  const HostArrayV &first = *parts[0];
  if (first.shape.empty())
    raise("ValueError", "zero-dimensional arrays cannot be concatenated", r);
  if (given(axisV) && axisV->kind == Kind::None)
    return opaque("jnp.concatenate(axis=None) (the arrays flattened)", r);
  size_t n = first.shape.size();
  size_t axis = given(axisV) ? static_cast<size_t>(axisArg(*this, axisV, n, r)) : 0;
  std::vector<int64_t> shape = first.shape;
  shape[axis] = 0;
  for (size_t i = 0; i < parts.size(); ++i) {
    const HostArrayV &p = *parts[i];
    if (p.shape.size() != n)
      raise("ValueError",
            fmt::format("all the input array dimensions except for the concatenation axis must "
                        "match exactly, but along dimension 0, the array at index 0 has {} "
                        "dimension(s) and the array at index {} has {} dimension(s)",
                        n, i, p.shape.size()),
            r);
    for (size_t d = 0; d < n; ++d)
      if (d != axis && p.shape[d] != first.shape[d])
        raise("ValueError",
              fmt::format("all the input array dimensions except for the concatenation axis "
                          "must match exactly, but along dimension {}, the array at index 0 "
                          "has size {} and the array at index {} has size {}",
                          d, first.shape[d], i, p.shape[d]),
              r);
    if (p.dtype != first.dtype || p.x64 != first.x64)
      return opaque("jnp.concatenate of arrays of different element types", r);
    shape[axis] += p.shape[axis];
  }
  auto out = std::make_shared<HostArrayV>(shape, first.dtype);
  // JAX's result is 32-bit, its values kept where they fit (a NumPy int64 part's may
  // not); NumPy's keeps the parts' type.
  out->numpy = numpy;
  out->x64 = numpy && first.x64;
  bool known = true;
  for (const HostArrayV *p : parts)
    known = known && p->contents && !p->deviceContents;
  if (known) {
    int64_t size = out->size();
    alloc(static_cast<uint64_t>(size), r);
    std::vector<int64_t> dst = stridesOf(shape), values(static_cast<size_t>(size));
    for (int64_t flat = 0; flat < size; ++flat) {
      std::vector<int64_t> at(n);
      for (size_t d = 0; d < n; ++d)
        at[d] = flat / dst[d] % shape[d];
      size_t k = 0;
      while (at[axis] >= parts[k]->shape[axis])
        at[axis] -= parts[k++]->shape[axis];
      std::vector<int64_t> src = stridesOf(parts[k]->shape);
      int64_t from = 0;
      for (size_t d = 0; d < n; ++d)
        from += at[d] * src[d];
      values[static_cast<size_t>(flat)] = (*parts[k]->contents)[static_cast<size_t>(from)];
    }
    out->contents = std::move(values);
    if (!contentsFit(*out, out->dtype, out->x64))
      out->contents.reset();
  }
  return out;
}

V Interp::chipFact(std::string what, SourceRange r, std::string strPrefix) {
  auto o = std::make_shared<Origin>();
  o->strPrefix = std::move(strPrefix);
  o->what = std::move(what) + ", a fact of the TPU chip";
  o->range = r;
  o->hint = fmt::format("name the chip with --tpu NAME or '# dkv: tpu NAME' ({}; docs/python.md "
                        "\"TPU generations and the platform\")",
                        tpuChipNames());
  return std::make_shared<OpaqueV>(o);
}

std::vector<V> Interp::deviceArrayRows(const V &arr) {
  const auto &d = *apiAs<DeviceArrayObj>(arr);
  std::vector<V> rows;
  if (d.shape.empty())
    return rows;
  if (d.shape.size() == 1) {
    for (int64_t i = 0; i < d.shape[0]; ++i)
      rows.push_back(deviceAt(d, static_cast<size_t>(i)));
    return rows;
  }
  DeviceArrayObj row{std::vector<int64_t>(d.shape.begin() + 1, d.shape.end()), {}};
  size_t per = static_cast<size_t>(deviceCount(row));
  for (int64_t i = 0; i < d.shape[0]; ++i) {
    DeviceArrayObj r = row;
    if (!d.ids.empty())
      r.ids.assign(d.ids.begin() + static_cast<ptrdiff_t>(i * per),
                   d.ids.begin() + static_cast<ptrdiff_t>((i + 1) * per));
    rows.push_back(makeApi(std::move(r)));
  }
  return rows;
}

V Interp::deviceArrayIndex(const V &arr, const V &key, SourceRange r, bool flat) {
  const auto &d = *apiAs<DeviceArrayObj>(arr);
  // Only plain ints (a bool is NumPy's mask, a float its IndexError): anything else is
  // an index dkv does not model on an array of devices.
  std::vector<V> keys =
      key->kind == Kind::Tuple && !flat ? cast<TupleV>(key).items : std::vector<V>{key};
  std::vector<int64_t> shape = flat ? std::vector<int64_t>{deviceCount(d)} : d.shape;
  if (keys.empty() || keys.size() > shape.size())
    return opaque("an index of an array of devices other than its ints", r);
  for (const V &k : keys)
    if (k->kind != Kind::Int)
      return opaque("an index of an array of devices other than its ints", r);
  size_t offset = 0;
  size_t stride = static_cast<size_t>(deviceCount(DeviceArrayObj{shape, {}}));
  for (size_t axis = 0; axis < keys.size(); ++axis) {
    int64_t i = cast<IntV>(keys[axis]).i, n = shape[axis];
    if (i < -n || i >= n)
      raise("IndexError",
            fmt::format("index {} is out of bounds for axis {} with size {}", i, axis, n), r);
    stride /= static_cast<size_t>(n);
    offset += static_cast<size_t>(i < 0 ? i + n : i) * stride;
  }
  if (keys.size() == shape.size())
    return deviceAt(d, offset);
  DeviceArrayObj sub{
      std::vector<int64_t>(shape.begin() + static_cast<ptrdiff_t>(keys.size()), shape.end()), {}};
  if (!d.ids.empty())
    sub.ids.assign(d.ids.begin() + static_cast<ptrdiff_t>(offset),
                   d.ids.begin() + static_cast<ptrdiff_t>(offset + stride));
  return makeApi(std::move(sub));
}

V Interp::deviceFlatIter(const V &arr) {
  auto s = std::make_unique<FlatIter>();
  s->arr = arr;
  return std::make_shared<IteratorV>("flatiter", std::move(s));
}

V Interp::flatIterArray(const V &it) {
  auto *i = dynCast<IteratorV>(it);
  auto *f = i ? dynamic_cast<FlatIter *>(i->state.get()) : nullptr;
  return f ? f->arr : nullptr;
}

V hostExpandDims(Interp &in, CallCtx &c, bool numpy) { return expandDims(in, c, numpy); }

} // namespace dkv::pytrace
