// Host-side element-wise math (`jnp.sqrt(x)`, `np.exp(x)`, `jnp.abs(x)`, `-x`, ...) on
// arrays and Python scalars: the shape kept, the element type by JAX's (or NumPy's)
// rules, integer values where they are known (docs/python.md "Host arrays").
#include "pytrace/Interp.h"

#include <fmt/format.h>

#include <cstdlib>
#include <limits>

namespace dkv::pytrace {

namespace {

/// How a function's result type follows its operand's.
enum class MathRule {
  /// Floats: an integer operand becomes a float (JAX: float32, jax/_src/dtypes.py
  /// `_dtype_to_inexact`; NumPy: the smallest float holding it, int8/uint8 float16,
  /// int16/uint16 float32, int32/uint32 float64); a float operand keeps its type.
  Inexact,
  /// The operand's type (abs, sign, square, floor, ceil of an integer or a float).
  Same,
};

/// One function: its names without the module (`sqrt`), the rule, the values of an
/// integer operand (null: a float result, whose values dkv does not keep) and whether
/// NumPy spells it too with the same rule.
struct MathFn {
  const char *name;
  MathRule rule;
  int64_t (*value)(int64_t);
  bool numpy;
};

int64_t absValue(int64_t x) { return x < 0 ? -x : x; }
int64_t signValue(int64_t x) { return (x > 0) - (x < 0); }
int64_t squareValue(int64_t x) {
  // Operands have at most 32 bits; a square beyond 63 bits is out of every type's range.
  return absValue(x) > 3037000499 ? std::numeric_limits<int64_t>::max() : x * x;
}
int64_t sameValue(int64_t x) { return x; }

// jax/_src/numpy/ufuncs.py at the pinned JAX: the inexact ones call
// `promote_args_inexact`; `absolute` returns unsigned operands as they are (their
// values are their absolute values), `square` promotes to a numeric type, `floor` and
// `ceil` return integer operands unchanged. NumPy's `reciprocal` keeps integers (JAX's
// gives floats) and its `floor` / `ceil` of integers give floats in NumPy 1 and
// integers in NumPy 2, so NumPy spells neither here.
const MathFn kMathFns[] = {
    {"sqrt", MathRule::Inexact, nullptr, true},
    {"cbrt", MathRule::Inexact, nullptr, true},
    {"exp", MathRule::Inexact, nullptr, true},
    {"exp2", MathRule::Inexact, nullptr, true},
    {"expm1", MathRule::Inexact, nullptr, true},
    {"log", MathRule::Inexact, nullptr, true},
    {"log2", MathRule::Inexact, nullptr, true},
    {"log10", MathRule::Inexact, nullptr, true},
    {"log1p", MathRule::Inexact, nullptr, true},
    {"sin", MathRule::Inexact, nullptr, true},
    {"cos", MathRule::Inexact, nullptr, true},
    {"tan", MathRule::Inexact, nullptr, true},
    {"arcsin", MathRule::Inexact, nullptr, true},
    {"arccos", MathRule::Inexact, nullptr, true},
    {"arctan", MathRule::Inexact, nullptr, true},
    {"sinh", MathRule::Inexact, nullptr, true},
    {"cosh", MathRule::Inexact, nullptr, true},
    {"tanh", MathRule::Inexact, nullptr, true},
    {"arcsinh", MathRule::Inexact, nullptr, true},
    {"arccosh", MathRule::Inexact, nullptr, true},
    {"arctanh", MathRule::Inexact, nullptr, true},
    {"fabs", MathRule::Inexact, nullptr, true},
    {"reciprocal", MathRule::Inexact, nullptr, false},
    {"abs", MathRule::Same, absValue, true},
    {"absolute", MathRule::Same, absValue, true},
    {"sign", MathRule::Same, signValue, true},
    {"square", MathRule::Same, squareValue, true},
    {"floor", MathRule::Same, sameValue, false},
    {"ceil", MathRule::Same, sameValue, false},
};

const MathFn *findMathFn(std::string_view shortName, bool &numpy) {
  numpy = shortName.rfind("np.", 0) == 0;
  std::string_view base = shortName.substr(shortName.find('.') + 1);
  for (const MathFn &f : kMathFns)
    if (base == f.name && (!numpy || f.numpy))
      return &f;
  return nullptr;
}

bool inRange(int64_t v, ast::DType t) {
  switch (t) {
  case ast::DType::I32:
    return v >= std::numeric_limits<int32_t>::min() && v <= std::numeric_limits<int32_t>::max();
  case ast::DType::I16:
    return v >= std::numeric_limits<int16_t>::min() && v <= std::numeric_limits<int16_t>::max();
  case ast::DType::I8:
    return v >= std::numeric_limits<int8_t>::min() && v <= std::numeric_limits<int8_t>::max();
  case ast::DType::U8:
    return v >= 0 && v <= std::numeric_limits<uint8_t>::max();
  case ast::DType::U32:
    return v >= 0 && v <= std::numeric_limits<uint32_t>::max();
  default:
    return false;
  }
}

/// `f` over integer values of type `t`; nullopt when a result leaves `t` (JAX and NumPy
/// wrap around there, which dkv does not reproduce: the values are then unknown).
std::optional<std::vector<int64_t>> mapValues(const std::vector<int64_t> &in, int64_t (*f)(int64_t),
                                              ast::DType t) {
  std::vector<int64_t> out;
  out.reserve(in.size());
  for (int64_t x : in) {
    int64_t y = f(x);
    if (!inRange(y, t))
      return std::nullopt;
    out.push_back(y);
  }
  return out;
}

/// `out`'s values: `f` of `a`'s (each device's), where every result stays in out's type.
void setValues(HostArrayV &out, const HostArrayV &a, int64_t (*f)(int64_t)) {
  if (a.deviceContents) {
    std::vector<std::vector<int64_t>> per;
    for (const auto &d : *a.deviceContents) {
      auto m = mapValues(d, f, out.dtype);
      if (!m)
        return;
      per.push_back(std::move(*m));
    }
    out.deviceContents = std::move(per);
  } else if (a.contents) {
    out.contents = mapValues(*a.contents, f, out.dtype);
  }
}

/// The result of `f` (NumPy's rule when `numpy`) on an array of type `t`, or nullopt
/// when it is a type dkv does not model (NumPy's float64, bfloat16 in NumPy).
std::optional<ast::DType> resultType(MathRule rule, ast::DType t, bool numpy) {
  if (numpy && t == ast::DType::BF16)
    return std::nullopt; // ml_dtypes' own ufuncs: not modelled
  if (rule == MathRule::Same || !ast::isInteger(t))
    return t;
  if (!numpy)
    return ast::DType::F32;
  switch (t) {
  case ast::DType::I8:
  case ast::DType::U8:
    return ast::DType::F16;
  case ast::DType::I16:
    return ast::DType::F32;
  default:
    return std::nullopt; // int32, uint32: float64
  }
}

} // namespace

V Interp::hostMath(CallCtx &c) {
  bool numpy = false;
  const MathFn *f = findMathFn(c.fn->name, numpy);
  if (!f)
    return nullptr;
  // The ufuncs take `x` positionally only (`/`); NumPy's also take out=, where=, dtype=,
  // ..., which dkv does not model.
  if (!c.args.kw.empty()) {
    if (numpy)
      return opaque(fmt::format("{} with keyword arguments", c.fn->name), c.range);
    const std::string &k = c.args.kw[0].first;
    raiseId("TypeError",
            k == "x" ? fmt::format("{}() got some positional-only arguments passed as keyword "
                                   "arguments: 'x'",
                                   f->name)
                     : fmt::format("{}() got an unexpected keyword argument '{}'", f->name, k),
            c.range);
  }
  if (c.args.pos.size() != 1) {
    if (numpy)
      return opaque(fmt::format("{} of {} operands", c.fn->name, c.args.pos.size()), c.range);
    raiseId("TypeError",
            fmt::format("{}() takes 1 positional argument but {} were given", f->name,
                        c.args.pos.size()),
            c.range);
  }
  const V &x = c.args.pos[0];
  if (x->kind == Kind::Opaque)
    return opaque(fmt::format("{} of it", c.fn->name), c.range, x);
  if (x->kind == Kind::Int || x->kind == Kind::Float) {
    // A Python scalar: NumPy gives a NumPy scalar (float64 / int64), which dkv does not
    // model; JAX a 0-d array of the weak type's canonical type (int32, float32), whose
    // weakness dkv does not keep (arithmetic of it with an array of another float type
    // stays unknown: Interp::arrayBinop).
    if (numpy)
      return opaque(fmt::format("{} of a Python number (a NumPy scalar)", c.fn->name), c.range);
    if (x->kind == Kind::Float || f->rule == MathRule::Inexact)
      return makeArray({}, ast::DType::F32);
    int64_t v = cast<IntV>(x).i;
    if (!inRange(v, ast::DType::I32))
      return opaque(fmt::format("{} of a Python int beyond int32", c.fn->name), c.range);
    auto out = std::make_shared<HostArrayV>(std::vector<int64_t>{}, ast::DType::I32);
    out->contents = mapValues({v}, f->value, ast::DType::I32);
    return out;
  }
  auto *a = dynCast<HostArrayV>(x);
  if (!a || a->isStruct)
    return opaque(fmt::format("{} of a {}", c.fn->name, typeName(*x)), c.range);
  // NumPy's float64 and int64 arrays (HostArrayV::x64) give float64, or int64 where the
  // rule keeps the type.
  bool x64 = numpy && a->x64;
  std::optional<ast::DType> t = x64 ? (f->rule == MathRule::Same ? a->dtype : ast::DType::F32)
                                    : resultType(f->rule, a->dtype, numpy);
  // NumPy's float64 of an int32 or uint32 array.
  if (numpy && !t && (a->dtype == ast::DType::I32 || a->dtype == ast::DType::U32))
    t = ast::DType::F32, x64 = true;
  if (!t)
    return opaque(fmt::format("{} of a {} array (a type dkv does not model)", c.fn->name,
                              ast::toString(a->dtype)),
                  c.range);
  auto out = std::make_shared<HostArrayV>(a->shape, *t);
  out->numpy = numpy;
  out->x64 = x64;
  // An element-wise function keeps the sharding (JAX's explicit sharding).
  if (!numpy)
    out->sharding = a->sharding;
  if (f->value && ast::isInteger(*t) && !x64) // int64 values: unknown (no wrap modelled)
    setValues(*out, *a, f->value);
  return out;
}

V Interp::signedArray(const HostArrayV &a, bool negate) {
  auto out = std::make_shared<HostArrayV>(a.shape, a.dtype);
  out->numpy = a.numpy;
  out->x64 = a.x64;
  out->sharding = a.sharding;
  setValues(*out, a, negate ? +[](int64_t x) { return -x; } : sameValue);
  return out;
}

void registerHostMath(Registry &reg) {
  // The functions the compute catalogue does not spell (jnp.exp and jnp.abs are its
  // rows: KernelApi.cpp's catalogueCall asks Interp::hostMath outside a kernel).
  for (const MathFn &f : kMathFns)
    for (bool numpy : {false, true}) {
      if (numpy && !f.numpy)
        continue;
      std::string name = std::string(numpy ? "numpy." : "jax.numpy.") + f.name;
      if (reg.find(name))
        continue;
      reg.addRow(ApiRow{{name},
                        BuiltinFn{std::string(numpy ? "np." : "jnp.") + f.name,
                                  +[](Interp &in, CallCtx &c) -> V {
                                    if (V v = in.hostMath(c))
                                      return v;
                                    return in.opaque(fmt::format("{} of it", c.fn->name), c.range);
                                  },
                                  "", false},
                        nullptr});
    }
}

} // namespace dkv::pytrace
