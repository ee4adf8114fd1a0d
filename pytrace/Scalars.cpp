// Numbers of a scalar type (`np.float32(x)`, `np.int32(3)`, `jnp.int32(3)`): their
// construction, arithmetic and comparisons with NumPy's and JAX's types (ScalarType).
//
// NumPy computes a scalar's arithmetic in its type: float32 rounds every result, int32
// wraps around (with an overflow warning, no error). With a Python number the type of the
// result depends on the NumPy version: NumPy 1 turns a Python int into int64 and a float
// into float64 (`np.int32(1) + 1` is int64, `np.float32(1) * 2` float64), NumPy 2 (NEP 50)
// keeps the scalar's type (int32, float32). dkv does not know which NumPy a file runs
// with, so it computes both and keeps the result only where both give the same value
// (refusing, located, where they differ). JAX's scalar types make 0-d arrays, typed by
// JAX's promotion with Python numbers weakly typed (prim::promote).
#include "pytrace/ApiObjects.h"
#include "pytrace/Interp.h"
#include "support/IntArith.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

namespace dkv::pytrace {

namespace {

using T = ScalarType::T;

bool isInt(const T &t) { return ast::isInteger(t.dtype); }
int bytesOf(const T &t) { return t.x64 ? 8 : static_cast<int>(ast::byteSize(t.dtype)); }
bool isSigned(const T &t) { return prim::info(t.dtype).isSigned; }
// The types whose arithmetic dkv computes exactly: 32-bit floats and float64, integers.
bool modelled(const T &t) { return isInt(t) || t.dtype == ast::DType::F32; }
std::string nameOf(const T &t) {
  if (t.x64)
    return isInt(t) ? "int64" : "float64";
  std::string_view py = prim::pythonName(t.dtype);
  return std::string(py.substr(py.find('.') + 1));
}
T signedOfBytes(int bytes) {
  switch (bytes) {
  case 1:
    return {ast::DType::I8, false};
  case 2:
    return {ast::DType::I16, false};
  case 4:
    return {ast::DType::I32, false};
  default:
    return {ast::DType::I32, true};
  }
}
T floatOfBytes(int bytes) {
  return bytes <= 4 ? T{ast::DType::F32, false} : T{ast::DType::F32, true};
}

// NumPy's promote_types on the types dkv models (np.result_type of two scalars of a type):
// the smallest type of the larger kind that holds both; nullopt for uint64.
std::optional<T> promoteNumpy(const T &a, const T &b) {
  if (a == b)
    return a;
  if (isInt(a) && isInt(b)) {
    if (isSigned(a) == isSigned(b)) {
      if (!isSigned(a)) // u8 with u32
        return bytesOf(a) >= bytesOf(b) ? a : b;
      return bytesOf(a) >= bytesOf(b) ? a : b;
    }
    const T &s = isSigned(a) ? a : b, &u = isSigned(a) ? b : a;
    if (bytesOf(u) < bytesOf(s))
      return s;
    if (bytesOf(u) >= 8)
      return std::nullopt; // uint64 with a signed type: float64 (not modelled here)
    return signedOfBytes(2 * bytesOf(u));
  }
  if (!isInt(a) && !isInt(b))
    return bytesOf(a) >= bytesOf(b) ? a : b;
  const T &i = isInt(a) ? a : b, &f = isInt(a) ? b : a;
  // The float that holds the integer type: 8 and 16 bits float16 / float32, wider float64.
  int need = bytesOf(i) == 1 ? 2 : bytesOf(i) == 2 ? 4 : 8;
  if (need == 2)
    need = 4; // float16 with float32 or wider is the wider (dkv models no float16 scalar)
  return floatOfBytes(std::max(need, bytesOf(f)));
}

// What an operand is: a number of a scalar type, or a Python int / float / bool.
struct Operand {
  const ScalarType *st = nullptr;
  bool pyInt = false, pyFloat = false, pyBool = false;
  int64_t i = 0;
  double f = 0;
  bool integer() const { return st ? isInt(st->v1) : pyInt || pyBool; }
};

std::optional<Operand> operandOf(const V &v) {
  Operand o;
  o.st = scalarTypeOf(v);
  if (auto *b = dynCast<BoolV>(v)) {
    if (o.st)
      return std::nullopt; // np.bool_: its arithmetic is logical (not modelled)
    o.pyBool = true, o.i = b->b, o.f = b->b;
  } else if (auto *i = dynCast<IntV>(v)) {
    o.pyInt = !o.st, o.i = i->i, o.f = static_cast<double>(i->i);
  } else if (auto *f = dynCast<FloatV>(v)) {
    o.pyFloat = !o.st, o.f = f->f;
  } else {
    return std::nullopt;
  }
  return o;
}

// The type a Python number takes in an operation with a scalar of type `t`, under NumPy
// 1 (`legacy`: int64 / float64, a bool the weakest) or NumPy 2 (NEP 50: weak, the
// scalar's type of its kind; an int that does not fit it is NumPy 2's OverflowError,
// nullopt here).
std::optional<T> pythonType(const Operand &o, const T &t, bool legacy) {
  if (o.pyBool)
    return t;
  if (legacy)
    return o.pyInt ? T{ast::DType::I32, true} : T{ast::DType::F32, true};
  if (o.pyFloat)
    return isInt(t) ? T{ast::DType::F32, true} : t;
  if (!isInt(t))
    return t;
  if (!t.x64 && prim::roundTo(static_cast<double>(o.i), t.dtype) != static_cast<double>(o.i))
    return std::nullopt;
  return t;
}

// `x` wrapped to integer type `t` (two's complement), as NumPy's and JAX's integers wrap.
int64_t wrapInt(__int128 x, const T &t) {
  int bits = 8 * bytesOf(t);
  if (bits == 64)
    return static_cast<int64_t>(static_cast<uint64_t>(static_cast<unsigned __int128>(x)));
  uint64_t mask = (uint64_t{1} << bits) - 1;
  uint64_t u = static_cast<uint64_t>(x) & mask;
  if (isSigned(t) && (u >> (bits - 1)) != 0)
    return static_cast<int64_t>(u) - static_cast<int64_t>(uint64_t{1} << bits);
  return static_cast<int64_t>(u);
}

// A result: an integer or a float value, or a reason it is not computed.
struct Result {
  bool integer = false;
  int64_t i = 0;
  double f = 0;
  std::string refused;
};

double asType(double x, const T &t) { return t.x64 ? x : prim::roundTo(x, t.dtype); }

// `a op b` computed in type `t` (both operands converted to it): exact arithmetic, then
// wrapped or rounded once (a float32 sum, difference, product or quotient computed in
// double and rounded is the float32 result: double has more than twice float32's bits).
Result compute(py::BinOpKind op, const Operand &a, const Operand &b, const T &t) {
  using B = py::BinOpKind;
  Result out;
  if (isInt(t) && op != B::Div) {
    out.integer = true;
    __int128 x = a.i, y = b.i, v = 0;
    switch (op) {
    case B::Add:
      v = x + y;
      break;
    case B::Sub:
      v = x - y;
      break;
    case B::Mult:
      v = x * y;
      break;
    case B::FloorDiv:
    case B::Mod: {
      if (y == 0) {
        out.refused = "integer division by zero (NumPy's result is 0 with a warning)";
        return out;
      }
      __int128 q = x / y;
      if ((x % y != 0) && ((x < 0) != (y < 0)))
        --q;
      v = op == B::FloorDiv ? q : x - q * y;
      break;
    }
    case B::Pow: {
      if (y < 0) {
        out.refused = "an integer to a negative power (NumPy's ValueError)";
        return out;
      }
      // Wrapping is a ring homomorphism: multiply wrapped, as NumPy does.
      __int128 p = 1, base = wrapInt(x, t);
      for (__int128 e = y; e > 0; e >>= 1) {
        if (e & 1)
          p = wrapInt(p * base, t);
        base = wrapInt(base * base, t);
      }
      v = p;
      break;
    }
    case B::BitAnd:
      v = x & y;
      break;
    case B::BitOr:
      v = x | y;
      break;
    case B::BitXor:
      v = x ^ y;
      break;
    default:
      out.refused = fmt::format("`{}` on it", py::toString(op));
      return out;
    }
    out.i = wrapInt(v, t); // NumPy's and JAX's integers wrap around (a warning, no error)
    return out;
  }
  // Floats (and true division of integers, which is float64 in NumPy).
  T ft = isInt(t) ? T{ast::DType::F32, true} : t;
  constexpr double kExact = 9007199254740992.0; // 2**53
  for (const Operand *o : {&a, &b})
    if (o->integer() && std::abs(static_cast<double>(o->i)) > kExact) {
      out.refused = "an integer beyond 2**53 in float arithmetic";
      return out;
    }
  double x = asType(a.integer() ? static_cast<double>(a.i) : a.f, ft);
  double y = asType(b.integer() ? static_cast<double>(b.i) : b.f, ft);
  double v;
  switch (op) {
  case B::Add:
    v = x + y;
    break;
  case B::Sub:
    v = x - y;
    break;
  case B::Mult:
    v = x * y;
    break;
  case B::Div:
    if (y == 0) {
      out.refused = "a division by zero (NumPy's inf or nan with a warning)";
      return out;
    }
    v = x / y;
    break;
  default:
    out.refused = fmt::format("`{}` on a float of a scalar type", py::toString(op));
    return out;
  }
  out.f = asType(v, ft);
  return out;
}

bool sameResult(const Result &a, const Result &b) {
  if (a.integer != b.integer)
    return false;
  return a.integer ? a.i == b.i
                   : (a.f == b.f && std::signbit(a.f) == std::signbit(b.f)) ||
                         (std::isnan(a.f) && std::isnan(b.f));
}

// The JAX type of an operand: its own (strong), or a Python number's weak type.
prim::ElemType jaxType(const Operand &o) {
  if (o.st)
    return {o.st->v1.dtype, false};
  return o.pyFloat ? prim::kWeakFloat : prim::kWeakInt;
}

// A Python int operand of JAX's arithmetic holds in `t` (else JAX raises OverflowError).
bool pythonIntFits(const Operand &o, ast::DType t) {
  return !o.pyInt || !ast::isInteger(t) || wrapInt(o.i, T{t, false}) == o.i;
}

} // namespace

V Interp::scalarBinop(py::BinOpKind op, const V &a, const V &b, SourceRange r) {
  auto refuse = [&](const std::string &why) -> V {
    return opaque(fmt::format("`{}` on a number of a scalar type: {}", py::toString(op), why), r);
  };
  std::optional<Operand> x = operandOf(a), y = operandOf(b);
  if (!x || !y)
    return nullptr; // an array, a traced value, np.bool_: the caller's rules
  const ScalarType &s = x->st ? *x->st : *y->st;
  if (x->st && y->st && x->st->from != y->st->from)
    return refuse("a NumPy scalar with a JAX array");
  for (const Operand *o : {&*x, &*y})
    if (o->st && (!modelled(o->st->v1) || !modelled(o->st->v2)))
      return refuse(fmt::format("its type {} is one dkv does not compute with", nameOf(o->st->v1)));
  ScalarType out;
  out.from = s.from;
  Result res;
  if (s.from == ScalarType::From::Jax) {
    prim::ElemType t = prim::promote(jaxType(*x), jaxType(*y));
    if (op == py::BinOpKind::Div)
      t = prim::toInexact(t);
    if (t.weak || !modelled({t.dtype, false}))
      return refuse("a weakly typed or unmodelled JAX result type");
    if (!pythonIntFits(*x, t.dtype) || !pythonIntFits(*y, t.dtype))
      return refuse("a Python int beyond the type (JAX's OverflowError)");
    out.v1 = out.v2 = {t.dtype, false};
    res = compute(op, *x, *y, out.v1);
  } else {
    // NumPy 1 and NumPy 2: the type each gives, the value in it; kept where they agree.
    Result per[2];
    T types[2];
    for (int v = 0; v < 2; ++v) {
      bool legacy = v == 0;
      auto typeOf = [&](const Operand &o, const Operand &other) -> std::optional<T> {
        if (o.st)
          return legacy ? o.st->v1 : o.st->v2;
        return pythonType(o, legacy ? other.st->v1 : other.st->v2, legacy);
      };
      std::optional<T> tx = typeOf(*x, *y), ty = typeOf(*y, *x);
      std::optional<T> t = tx && ty ? promoteNumpy(*tx, *ty) : std::nullopt;
      if (!t)
        return refuse(legacy ? "a type NumPy 1 gives that dkv does not model"
                             : "NumPy 2 raises OverflowError for a Python int beyond the type");
      if (op == py::BinOpKind::Div && isInt(*t))
        t = T{ast::DType::F32, true}; // NumPy's true division of integers: float64
      if (!modelled(*t))
        return refuse(fmt::format("its type {} is one dkv does not compute with", nameOf(*t)));
      types[v] = *t;
      per[v] = compute(op, *x, *y, *t);
      if (!per[v].refused.empty())
        return refuse(per[v].refused);
    }
    if (!sameResult(per[0], per[1]))
      return refuse(fmt::format("NumPy 1 gives {} and NumPy 2 (NEP 50) {} (dkv does not know "
                                "which NumPy the file runs with)",
                                nameOf(types[0]), nameOf(types[1])));
    out.v1 = types[0], out.v2 = types[1];
    res = per[0];
  }
  if (!res.refused.empty())
    return refuse(res.refused);
  return withScalar(res.integer ? integer(res.i) : floating(res.f), out);
}

V Interp::scalarCompare(py::CmpOpKind op, const V &a, const V &b, SourceRange r) {
  using C = py::CmpOpKind;
  auto refuse = [&](const std::string &why) -> V {
    return opaque(fmt::format("`{}` of a number of a scalar type: {}", py::toString(op), why), r);
  };
  std::optional<Operand> x = operandOf(a), y = operandOf(b);
  if (!x || !y)
    return nullptr;
  const ScalarType &s = x->st ? *x->st : *y->st;
  if (x->st && y->st && x->st->from != y->st->from)
    return refuse("a NumPy scalar with a JAX array");
  // Each side converted to the type of the comparison (NumPy 1's and NumPy 2's, or
  // JAX's), then compared exactly.
  std::optional<bool> answer[2];
  int versions = s.from == ScalarType::From::Jax ? 1 : 2;
  for (int v = 0; v < versions; ++v) {
    std::optional<T> t;
    if (s.from == ScalarType::From::Jax) {
      prim::ElemType e = prim::promote(jaxType(*x), jaxType(*y));
      if (!pythonIntFits(*x, e.dtype) || !pythonIntFits(*y, e.dtype))
        return refuse("a Python int beyond the type (JAX's OverflowError)");
      if (modelled({e.dtype, false}))
        t = T{e.dtype, false};
    } else {
      bool legacy = v == 0;
      auto typeOf = [&](const Operand &o, const Operand &other) -> std::optional<T> {
        if (o.st)
          return legacy ? o.st->v1 : o.st->v2;
        // NumPy 2 compares a Python int beyond the type by its value (exact).
        if (o.pyInt && !legacy && isInt(other.st->v2))
          return T{ast::DType::I32, true};
        return pythonType(o, legacy ? other.st->v1 : other.st->v2, legacy);
      };
      std::optional<T> tx = typeOf(*x, *y), ty = typeOf(*y, *x);
      if (tx && ty)
        t = promoteNumpy(*tx, *ty);
    }
    if (!t || !modelled(*t))
      return refuse("a type dkv does not compute with");
    int c;
    if (isInt(*t)) {
      c = x->i < y->i ? -1 : x->i > y->i ? 1 : 0;
    } else {
      constexpr double kExact = 9007199254740992.0;
      for (const Operand *o : {&*x, &*y})
        if (o->integer() && std::abs(static_cast<double>(o->i)) > kExact)
          return refuse("an integer beyond 2**53 compared as a float");
      double p = asType(x->integer() ? static_cast<double>(x->i) : x->f, *t);
      double q = asType(y->integer() ? static_cast<double>(y->i) : y->f, *t);
      if (std::isnan(p) || std::isnan(q))
        c = 2; // unordered
      else
        c = p < q ? -1 : p > q ? 1 : 0;
    }
    bool holds = false;
    switch (op) {
    case C::Eq:
      holds = c == 0;
      break;
    case C::NotEq:
      holds = c != 0;
      break;
    case C::Lt:
      holds = c == -1;
      break;
    case C::LtE:
      holds = c == -1 || c == 0;
      break;
    case C::Gt:
      holds = c == 1;
      break;
    case C::GtE:
      holds = c == 1 || c == 0;
      break;
    default:
      return nullptr;
    }
    answer[v] = holds;
  }
  if (versions == 2 && answer[0] != answer[1])
    return refuse("NumPy 1 and NumPy 2 (NEP 50) answer differently (dkv does not know which "
                  "NumPy the file runs with)");
  ScalarType out;
  out.from = s.from;
  return withScalar(boolean(*answer[0]), out);
}

V Interp::scalarUnary(py::UnaryOpKind op, const V &v, SourceRange r) {
  const ScalarType *s = scalarTypeOf(v);
  auto refuse = [&](const std::string &why) -> V {
    return opaque(fmt::format("unary `{}` on a number of a scalar type: {}", py::toString(op), why),
                  r);
  };
  if (v->kind == Kind::Bool)
    return refuse("np.bool_ (not modelled)");
  if (!modelled(s->v1) || !modelled(s->v2))
    return refuse("a type dkv does not compute with");
  if (op == py::UnaryOpKind::UAdd)
    return v;
  if (auto *i = dynCast<IntV>(v)) {
    if (op != py::UnaryOpKind::USub && op != py::UnaryOpKind::Invert)
      return nullptr;
    __int128 x = i->i;
    __int128 y = op == py::UnaryOpKind::USub ? -x : ~x;
    int64_t a = wrapInt(y, s->v1), b = wrapInt(y, s->v2);
    if (a != b)
      return refuse("NumPy 1 and NumPy 2 (NEP 50) give different values");
    return withScalar(integer(a), *s);
  }
  if (op != py::UnaryOpKind::USub)
    return nullptr;
  return withScalar(floating(-cast<FloatV>(v).f), *s);
}

V Interp::scalarAbs(const V &v, SourceRange r) {
  const ScalarType *s = scalarTypeOf(v);
  if (v->kind == Kind::Bool || !modelled(s->v1) || !modelled(s->v2))
    return opaque("abs() of a number of a type dkv does not compute with", r);
  if (auto *i = dynCast<IntV>(v)) {
    __int128 y = i->i < 0 ? -static_cast<__int128>(i->i) : i->i;
    int64_t a = wrapInt(y, s->v1), b = wrapInt(y, s->v2);
    if (a != b)
      return opaque("abs() of a number NumPy 1 and NumPy 2 give different values", r);
    return withScalar(integer(a), *s);
  }
  return withScalar(floating(std::fabs(cast<FloatV>(v).f)), *s);
}

V Interp::makeScalar(const DTypeObj &d, const V &x, SourceRange r) {
  // The type: NumPy's (np.float64, np.int64 are 64-bit) or JAX's (jnp.float64 is float32
  // without x64, as JAX canonicalizes it).
  static const std::pair<std::string_view, T> kWide[] = {{"float64", {ast::DType::F32, true}},
                                                         {"int64", {ast::DType::I32, true}}};
  std::optional<T> t;
  if (d.dtype)
    t = T{*d.dtype, false};
  for (const auto &[name, wide] : kWide)
    if (d.name == name)
      t = T{wide.dtype, d.form != DTypeForm::JnpType};
  if (!t || !modelled(*t))
    return opaque(fmt::format("{}() of a number (a scalar type dkv does not model)", d.name), r);
  ScalarType st;
  st.from = d.form == DTypeForm::JnpType ? ScalarType::From::Jax : ScalarType::From::NumPy;
  st.v1 = st.v2 = *t;
  double f = 0;
  if (auto *b = dynCast<BoolV>(x))
    f = b->b;
  else if (auto *i = dynCast<IntV>(x))
    f = static_cast<double>(i->i);
  else if (auto *fl = dynCast<FloatV>(x))
    f = fl->f;
  else
    return opaque(fmt::format("{}() of a {}", d.name, typeName(*x)), r);
  if (isInt(*t)) {
    int64_t v;
    if (auto *i = dynCast<IntV>(x)) {
      v = i->i;
    } else {
      // A float truncates toward zero (C's conversion); beyond the type it is undefined.
      if (!std::isfinite(f) || std::abs(f) >= 9.2e18)
        return opaque(fmt::format("{}() of a float out of its range", d.name), r);
      v = static_cast<int64_t>(std::trunc(f));
    }
    if (!t->x64 && wrapInt(v, *t) != v)
      return opaque(fmt::format("{}() of a value out of its range (NumPy 1 wraps it, NumPy 2 "
                                "raises OverflowError)",
                                d.name),
                    r);
    return withScalar(integer(v), st);
  }
  if (auto *i = dynCast<IntV>(x); i && std::abs(f) > 9007199254740992.0)
    return opaque(fmt::format("{}() of an int beyond 2**53", d.name), r);
  return withScalar(floating(asType(f, *t)), st);
}

} // namespace dkv::pytrace
