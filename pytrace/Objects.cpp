// Operators, truth, equality, hashing, attributes, items, iteration and repr of the
// tracer's values, as CPython defines them for its built-in types (docs/python.md
// "Object model"). Per-device values go to the kernel side (KernelApi.cpp), opaque ones
// stay opaque until they decide something.
#include "pytrace/ApiObjects.h"
#include "pytrace/Interp.h"
#include "pytrace/Text.h"
#include "support/IntArith.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <set>

namespace dkv::pytrace {

namespace {

bool isNumber(const V &v) {
  return v->kind == Kind::Int || v->kind == Kind::Bool || v->kind == Kind::Float;
}
bool isIntLike(const V &v) { return v->kind == Kind::Int || v->kind == Kind::Bool; }
int64_t intOf(const V &v) {
  return v->kind == Kind::Int ? cast<IntV>(v).i : static_cast<int64_t>(cast<BoolV>(v).b);
}
double floatOf(const V &v) {
  return v->kind == Kind::Float ? cast<FloatV>(v).f : static_cast<double>(intOf(v));
}

[[noreturn]] void overflow(SourceRange r) {
  fail(r, "python-overflow",
       "an integer result beyond 64 bits: dkv computes integers exactly within 64 bits and "
       "refuses larger ones rather than wrap them (CPython's integers are unbounded)");
}

int64_t checked(support::IntResult res, SourceRange r) {
  if (!res.ok())
    overflow(r);
  return res.value;
}

// CPython's exact comparison of an int and a float: -1, 0, 1, or 2 when the float is NaN.
int cmpIntFloat(int64_t i, double f) {
  if (std::isnan(f))
    return 2;
  long double a = static_cast<long double>(i), b = f; // x86's long double holds any int64
  return a < b ? -1 : a > b ? 1 : 0;
}

} // namespace

std::string floatRepr(double f) {
  if (std::isnan(f))
    return "nan";
  if (std::isinf(f))
    return f > 0 ? "inf" : "-inf";
  if (f == 0)
    return std::signbit(f) ? "-0.0" : "0.0";
  // The shortest digits that round-trip (CPython's repr), placed as CPython places them:
  // positional when the exponent is in [-4, 16), else scientific.
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, f, std::chars_format::scientific);
  std::string sci(buf, res.ptr);
  bool neg = sci[0] == '-';
  if (neg)
    sci = sci.substr(1);
  size_t e = sci.find('e');
  std::string mant = sci.substr(0, e);
  int exp = std::stoi(sci.substr(e + 1));
  std::string digits;
  for (char c : mant)
    if (c != '.')
      digits += c;
  while (digits.size() > 1 && digits.back() == '0')
    digits.pop_back();
  std::string out;
  if (exp >= -4 && exp < 16) {
    if (exp < 0) {
      out = "0." + std::string(static_cast<size_t>(-exp - 1), '0') + digits;
    } else if (static_cast<size_t>(exp) + 1 >= digits.size()) {
      out = digits + std::string(static_cast<size_t>(exp) + 1 - digits.size(), '0') + ".0";
    } else {
      out = digits.substr(0, static_cast<size_t>(exp) + 1) + "." +
            digits.substr(static_cast<size_t>(exp) + 1);
    }
  } else {
    out = digits.substr(0, 1);
    if (digits.size() > 1)
      out += "." + digits.substr(1);
    out += fmt::format("e{}{:02d}", exp < 0 ? '-' : '+', std::abs(exp));
  }
  return neg ? "-" + out : out;
}

//===----------------------------------------------------------------------===//
// Opaque values
//===----------------------------------------------------------------------===//

V Interp::opaque(std::string what, SourceRange r, const V &from) {
  auto o = std::make_shared<Origin>();
  o->what = std::move(what);
  o->range = r;
  if (auto *f = dynCast<OpaqueV>(from)) {
    o->from = f->origin;
    o->global = f->origin->global;
  }
  return std::make_shared<OpaqueV>(o);
}

std::string Interp::snippet(SourceRange r) const {
  if (!sources_ || !r.begin.valid() || r.begin.line != r.end.line || r.end.col <= r.begin.col ||
      r.end.col - r.begin.col > 70)
    return "";
  const support::SourceFile *f = sources_->find(r.begin.file);
  if (!f)
    return "";
  std::string_view line = f->lineText(r.begin.line);
  if (r.end.col - 1 > line.size())
    return "";
  return std::string(line.substr(r.begin.col - 1, r.end.col - r.begin.col));
}

std::string Interp::quoted(SourceRange r, const std::string &fallback) const {
  std::string s = snippet(r);
  return s.empty() ? fallback : "`" + s + "`";
}

void Interp::opaqueNeeded(const V &v, SourceRange r, std::string_view what) {
  const auto &o = cast<OpaqueV>(v);
  const Origin *root = o.origin.get();
  std::string global = o.origin->global;
  while (root->from)
    root = root->from.get();
  std::string outer = global.empty() ? quoted(o.origin->range, "this value")
                                     : fmt::format("the global `{}`", global);
  std::string need(what);
  if (need.size() > 6 && need.compare(need.size() - 6, 6, " on it") == 0)
    need = need.substr(0, need.size() - 6);
  std::string message =
      root == o.origin.get() && global.empty()
          ? fmt::format("{} needs a value dkv does not compute: {}", need, root->what)
          : fmt::format("{} needs a value dkv does not compute: {} comes from {}", need, outer,
                        root->what);
  std::string settable;
  for (const Origin *p = o.origin.get(); p && settable.empty(); p = p->from.get())
    settable = p->settable;
  std::string name = !global.empty() ? global : settable;
  std::string given;
  for (const Origin *p = o.origin.get(); p && given.empty(); p = p->from.get())
    given = p->hint;
  std::string hint =
      !given.empty() ? given
      : name.empty()
          ? "give the fact it stands for in the file itself, or through --call or a directive "
            "(docs/python.md \"Opaque values\")"
          : fmt::format("give it with '# dkv: set {}=VALUE' or '--set {}=VALUE' (docs/python.md "
                        "\"Opaque values\")",
                        name, name);
  std::vector<std::pair<SourceRange, std::string>> notes;
  if (root->range.begin.valid() && !(root->range == r))
    notes.emplace_back(root->range, "the value dkv does not compute comes from here");
  TraceError err{r, "python-opaque", message + "; " + hint, {}, 0, std::move(notes)};
  throw err;
}

void Interp::requireConcrete(const V &v, SourceRange r, std::string_view what) {
  if (v->kind == Kind::Opaque)
    opaqueNeeded(v, r, what);
}

//===----------------------------------------------------------------------===//
// Truth
//===----------------------------------------------------------------------===//

bool Interp::truth(const V &v, SourceRange r, std::string_view what) {
  switch (v->kind) {
  case Kind::None:
    return false;
  case Kind::Bool:
    return cast<BoolV>(v).b;
  case Kind::Int:
    return cast<IntV>(v).i != 0;
  case Kind::Float:
    return cast<FloatV>(v).f != 0;
  case Kind::Str:
    return !cast<StrV>(v).s.empty();
  case Kind::Tuple:
    return !cast<TupleV>(v).items.empty();
  case Kind::List:
    return !cast<ListV>(v).items.empty();
  case Kind::Dict:
    return cast<DictV>(v).table.size != 0;
  case Kind::Set:
    return cast<SetV>(v).table.size != 0;
  case Kind::Range:
    return cast<RangeV>(v).length() != 0;
  case Kind::Traced:
    tracedBool(cast<TracedV>(v), r, what);
  case Kind::Opaque:
    opaqueNeeded(v, r, what);
  case Kind::HostArray: {
    const auto &a = cast<HostArrayV>(v);
    if (a.size() != 1)
      raise("ValueError",
            "The truth value of an array with more than one element is ambiguous. Use a.any() or "
            "a.all()",
            r);
    opaqueNeeded(opaque("the element of a one-element array", r), r, what);
  }
  case Kind::Instance: {
    const auto &inst = cast<InstanceV>(v);
    if (V b = lookupClassAttr(inst.cls, "__bool__")) {
      V res = call(getAttr(v, "__bool__", r), Args{}, r);
      if (res->kind != Kind::Bool)
        raise("TypeError", fmt::format("__bool__ should return bool, returned {}", typeName(*res)),
              r);
      return cast<BoolV>(res).b;
    }
    if (V l = lookupClassAttr(inst.cls, "__len__"))
      return toIndex(call(getAttr(v, "__len__", r), Args{}, r), r, "__len__") != 0;
    if (inst.cls->opaqueBase)
      opaqueNeeded(opaque(fmt::format("the truth of a `{}` object (its class derives from one "
                                      "dkv does not model)",
                                      inst.cls->name),
                          r),
                   r, what);
    return true;
  }
  case Kind::Api:
    if (auto *p = apiAs<PSpecObj>(v))
      return !p->entries.empty();
    return true;
  default:
    return true;
  }
}

//===----------------------------------------------------------------------===//
// Arithmetic
//===----------------------------------------------------------------------===//

namespace {

const char *dunder(py::BinOpKind op) {
  switch (op) {
  case py::BinOpKind::Add:
    return "add";
  case py::BinOpKind::Sub:
    return "sub";
  case py::BinOpKind::Mult:
    return "mul";
  case py::BinOpKind::MatMult:
    return "matmul";
  case py::BinOpKind::Div:
    return "truediv";
  case py::BinOpKind::Mod:
    return "mod";
  case py::BinOpKind::Pow:
    return "pow";
  case py::BinOpKind::LShift:
    return "lshift";
  case py::BinOpKind::RShift:
    return "rshift";
  case py::BinOpKind::BitOr:
    return "or";
  case py::BinOpKind::BitXor:
    return "xor";
  case py::BinOpKind::BitAnd:
    return "and";
  case py::BinOpKind::FloorDiv:
    return "floordiv";
  }
  return "";
}

} // namespace

V Interp::binop(py::BinOpKind op, const V &a, const V &b, SourceRange r) {
  using py::BinOpKind;
  // `int | None`: a union of classes (types.UnionType), which may hold a class dkv does
  // not model (opaque).
  if (op == BinOpKind::BitOr)
    if (V u = unionOf(a, b, r))
      return u;
  // Arithmetic on a number a scalar type made (np.int32(3) + 1): NumPy's or JAX's, in
  // its type (Scalars.cpp).
  if (const ScalarType *sa = scalarTypeOf(a), *sb = scalarTypeOf(b); sa || sb) {
    if (V v = scalarBinop(op, a, b, r))
      return v;
    const ScalarType &s = sa ? *sa : *sb;
    const V &other = sa ? b : a;
    // With a JAX array of its type the scalar's strong type changes nothing (JAX's
    // promotion); with another array, a NumPy array, an np.bool_ or a number of a type
    // JAX does not take weakly, the result type is not modelled.
    auto *h = dynCast<HostArrayV>(other);
    bool sameType = h && !h->numpy && !s.v1.x64 && s.v1 == s.v2 && h->dtype == s.v1.dtype;
    bool boolean =
        (a->kind == Kind::Bool && scalarOfType(a)) || (b->kind == Kind::Bool && scalarOfType(b));
    if ((!sameType && other->kind != Kind::Traced && other->kind != Kind::Opaque) || boolean)
      return opaque(fmt::format("`{}` on a number of a scalar type and a {}", py::toString(op),
                                typeName(*other)),
                    r);
    return binop(op, withScalar(a, ScalarType{}), withScalar(b, ScalarType{}), r);
  }
  // Opaque operands give an opaque result: it errors only where it decides something.
  if (a->kind == Kind::Opaque || b->kind == Kind::Opaque)
    return opaque(fmt::format("`{}` on it", py::toString(op)), r, a->kind == Kind::Opaque ? a : b);
  if (a->kind == Kind::Traced || b->kind == Kind::Traced)
    return tracedBinop(op, a, b, r);
  if (a->kind == Kind::HostArray || b->kind == Kind::HostArray) {
    for (const V &x : {a, b})
      if (auto *h = dynCast<HostArrayV>(x); h && h->key)
        unsupported(r, fmt::format("`{}` on a PRNG key array (JAX's key arrays take no "
                                   "arithmetic; dkv keeps them as shapes)",
                                   py::toString(op)));
    if (V v = arrayBinop(op, a, b, r))
      return v;
    return opaque(fmt::format("`{}` on an array (dkv keeps arrays as shapes)", py::toString(op)),
                  r);
  }
  // Numbers.
  if (isNumber(a) && isNumber(b)) {
    bool ints = isIntLike(a) && isIntLike(b);
    if (ints) {
      int64_t x = intOf(a), y = intOf(b);
      switch (op) {
      case BinOpKind::Add:
        return integer(checked(support::checkedAdd(x, y), r));
      case BinOpKind::Sub:
        return integer(checked(support::checkedSub(x, y), r));
      case BinOpKind::Mult:
        return integer(checked(support::checkedMul(x, y), r));
      case BinOpKind::FloorDiv:
        if (y == 0)
          raise("ZeroDivisionError", "integer division or modulo by zero", r);
        return integer(checked(support::floorDiv(x, y), r));
      case BinOpKind::Mod:
        if (y == 0)
          raise("ZeroDivisionError", "integer modulo by zero", r);
        return integer(checked(support::floorMod(x, y), r));
      case BinOpKind::Div: {
        if (y == 0)
          raise("ZeroDivisionError", "division by zero", r);
        constexpr int64_t exact = int64_t{1} << 53;
        if (std::abs(static_cast<double>(x)) > exact || std::abs(static_cast<double>(y)) > exact)
          unsupported(r, "true division of integers beyond 2**53 (CPython rounds the exact "
                         "quotient; dkv does not compute it)");
        return floating(static_cast<double>(x) / static_cast<double>(y));
      }
      case BinOpKind::Pow: {
        if (y < 0) {
          if (x == 0)
            raise("ZeroDivisionError", "0.0 cannot be raised to a negative power", r);
          return floating(std::pow(static_cast<double>(x), static_cast<double>(y)));
        }
        int64_t p = 1, base = x;
        for (int64_t e = y; e > 0; e >>= 1) {
          if (e & 1)
            p = checked(support::checkedMul(p, base), r);
          if (e > 1)
            base = checked(support::checkedMul(base, base), r);
        }
        return integer(p);
      }
      case BinOpKind::LShift:
        if (y < 0)
          raise("ValueError", "negative shift count", r);
        if (x == 0)
          return integer(0);
        if (y > 63)
          overflow(r);
        {
          __int128 v = static_cast<__int128>(x) << y;
          if (v > INT64_MAX || v < INT64_MIN)
            overflow(r);
          return integer(static_cast<int64_t>(v));
        }
      case BinOpKind::RShift:
        if (y < 0)
          raise("ValueError", "negative shift count", r);
        return integer(x >> std::min<int64_t>(y, 63));
      case BinOpKind::BitAnd:
      case BinOpKind::BitOr:
      case BinOpKind::BitXor: {
        int64_t v = op == BinOpKind::BitAnd ? (x & y) : op == BinOpKind::BitOr ? (x | y) : (x ^ y);
        if (a->kind == Kind::Bool && b->kind == Kind::Bool)
          return boolean(v != 0);
        return integer(v);
      }
      case BinOpKind::MatMult:
        break;
      }
    } else {
      double x = floatOf(a), y = floatOf(b);
      switch (op) {
      case BinOpKind::Add:
        return floating(x + y);
      case BinOpKind::Sub:
        return floating(x - y);
      case BinOpKind::Mult:
        return floating(x * y);
      case BinOpKind::Div:
        if (y == 0)
          raise("ZeroDivisionError", "float division by zero", r);
        return floating(x / y);
      case BinOpKind::FloorDiv:
      case BinOpKind::Mod: {
        if (y == 0)
          raise("ZeroDivisionError",
                op == BinOpKind::Mod ? "float modulo" : "float floor division by zero", r);
        // CPython's float_divmod.
        double mod = std::fmod(x, y);
        double div = (x - mod) / y;
        if (mod != 0) {
          if ((y < 0) != (mod < 0)) {
            mod += y;
            div -= 1.0;
          }
        } else {
          mod = std::copysign(0.0, y);
        }
        double floordiv;
        if (div != 0) {
          floordiv = std::floor(div);
          if (div - floordiv > 0.5)
            floordiv += 1.0;
        } else {
          floordiv = std::copysign(0.0, x / y);
        }
        return floating(op == BinOpKind::Mod ? mod : floordiv);
      }
      case BinOpKind::Pow: {
        if (x == 0 && y < 0)
          raise("ZeroDivisionError", "0.0 cannot be raised to a negative power", r);
        if (x < 0 && y != std::floor(y))
          unsupported(r, "a negative number raised to a fractional power (a complex number)");
        double p = std::pow(x, y);
        if (std::isinf(p) && std::isfinite(x) && std::isfinite(y))
          raise("OverflowError", "(34, 'Numerical result out of range')", r);
        return floating(p);
      }
      default:
        break;
      }
    }
  }
  // Sequences.
  auto seqItems = [](const V &v) -> const std::vector<V> * {
    if (auto *l = dynCast<ListV>(v))
      return &l->items;
    if (auto *t = dynCast<TupleV>(v))
      return &t->items;
    return nullptr;
  };
  if (op == BinOpKind::Add) {
    if (a->kind == Kind::Str) {
      if (b->kind != Kind::Str)
        raise("TypeError",
              fmt::format("can only concatenate str (not \"{}\") to str", typeName(*b)), r);
      const std::string &x = cast<StrV>(a).s, &y = cast<StrV>(b).s;
      alloc(x.size() + y.size(), r);
      return string(x + y);
    }
    if ((a->kind == Kind::List || a->kind == Kind::Tuple)) {
      if (b->kind != a->kind)
        raise("TypeError",
              fmt::format("can only concatenate {} (not \"{}\") to {}", typeName(*a), typeName(*b),
                          typeName(*a)),
              r);
      alloc(seqItems(a)->size() + seqItems(b)->size(), r); // before copying
      std::vector<V> items = *seqItems(a);
      const std::vector<V> &more = *seqItems(b);
      items.insert(items.end(), more.begin(), more.end());
      return a->kind == Kind::List ? list(std::move(items)) : tuple(std::move(items));
    }
  }
  if (op == BinOpKind::Mult) {
    const V &seq = (a->kind == Kind::Str || seqItems(a)) ? a : b;
    const V &n = seq == a ? b : a;
    if (seq->kind == Kind::Str || seqItems(seq)) {
      if (!isIntLike(n)) {
        if (n->kind == Kind::Instance && !lookupClassAttr(cast<InstanceV>(n).cls, "__index__"))
          ; // falls through to the dunder methods
        else
          raise("TypeError",
                fmt::format("can't multiply sequence by non-int of type '{}'", typeName(*n)), r);
      } else {
        int64_t count = std::max<int64_t>(intOf(n), 0);
        size_t unit = seq->kind == Kind::Str ? cast<StrV>(seq).s.size() : seqItems(seq)->size();
        if (unit != 0 && static_cast<uint64_t>(count) > kMaxAlloc / unit)
          alloc(kMaxAlloc + 1, r);
        alloc(unit * static_cast<uint64_t>(count), r);
        if (seq->kind == Kind::Str) {
          std::string out;
          for (int64_t i = 0; i < count; ++i)
            out += cast<StrV>(seq).s;
          return string(std::move(out));
        }
        std::vector<V> items;
        for (int64_t i = 0; i < count; ++i)
          items.insert(items.end(), seqItems(seq)->begin(), seqItems(seq)->end());
        return seq->kind == Kind::List ? list(std::move(items)) : tuple(std::move(items));
      }
    }
  }
  if (op == BinOpKind::Mod && a->kind == Kind::Str)
    return opaque("a string formatted with `%` (dkv does not format strings)", r);
  // Dicts and sets.
  if (op == BinOpKind::BitOr && a->kind == Kind::Dict && b->kind == Kind::Dict) {
    auto out = std::make_shared<DictV>();
    for (const V &d : {a, b})
      for (const Table::Entry &e : cast<DictV>(d).table.entries)
        if (e.live)
          dictSet(out->table, e.key, e.value, r);
    return out;
  }
  if (a->kind == Kind::Set && b->kind == Kind::Set &&
      (op == BinOpKind::BitOr || op == BinOpKind::BitAnd || op == BinOpKind::Sub ||
       op == BinOpKind::BitXor)) {
    const Table &x = cast<SetV>(a).table, &y = cast<SetV>(b).table;
    auto out = std::make_shared<SetV>(cast<SetV>(a).frozen);
    auto in = [&](const Table &t, const Table::Entry &e) {
      return tableFind(t, e.key, e.hash, r).has_value();
    };
    for (const Table::Entry &e : x.entries) {
      if (!e.live)
        continue;
      bool inY = in(y, e);
      if (op == BinOpKind::BitOr || (op == BinOpKind::BitAnd && inY) ||
          ((op == BinOpKind::Sub || op == BinOpKind::BitXor) && !inY))
        dictSet(out->table, e.key, nullptr, r);
    }
    if (op == BinOpKind::BitOr || op == BinOpKind::BitXor)
      for (const Table::Entry &e : y.entries)
        if (e.live && !in(x, e))
          dictSet(out->table, e.key, nullptr, r);
    return out;
  }
  // User classes: __op__, then the reflected __rop__.
  std::string name = dunder(op);
  if (auto *ia = dynCast<InstanceV>(a))
    if (lookupClassAttr(ia->cls, "__" + name + "__"))
      return call(getAttr(a, "__" + name + "__", r), Args{{b}, {}}, r);
  if (auto *ib = dynCast<InstanceV>(b))
    if (lookupClassAttr(ib->cls, "__r" + name + "__"))
      return call(getAttr(b, "__r" + name + "__", r), Args{{a}, {}}, r);
  if (a->kind == Kind::Instance && cast<InstanceV>(a).cls->opaqueBase)
    return opaque(fmt::format("`{}` on a `{}` object", py::toString(op), typeName(*a)), r);
  // `str | None`, `int | float`: type.__or__ / __ror__ make a types.UnionType when both
  // sides are classes or None (not both None), as in annotations and type aliases
  // evaluated at run time. dkv does not model the union itself: the value is opaque.
  if (op == BinOpKind::BitOr && (a->kind == Kind::Class || b->kind == Kind::Class) &&
      (a->kind == Kind::Class || a->kind == Kind::None) &&
      (b->kind == Kind::Class || b->kind == Kind::None))
    return opaque(fmt::format("the union type `{} | {}` (types.UnionType)",
                              a->kind == Kind::None ? "None" : cast<ClassV>(a).name,
                              b->kind == Kind::None ? "None" : cast<ClassV>(b).name),
                  r);
  // `pltpu.SemaphoreType.DMA(()) @ mesh`, `pltpu.VMEM @ mesh`: JAX's memory space of one
  // core mesh (pallas CoreMemorySpace), for kernels of several meshes (MPMD).
  if (op == BinOpKind::MatMult && apiAs<TcMeshObj>(b) &&
      (apiAs<SemTypeObj>(a) || apiAs<SemArrayObj>(a) || apiAs<MemSpaceObj>(a)))
    unsupported(r, fmt::format("`{} @ {}`: a memory space tied to a core mesh (JAX's "
                               "CoreMemorySpace, for kernels over several meshes) is not "
                               "modelled",
                               typeName(*a), typeName(*b)));
  raise("TypeError",
        fmt::format("unsupported operand type(s) for {}: '{}' and '{}'", py::toString(op),
                    typeName(*a), typeName(*b)),
        r);
}

V Interp::inplace(py::BinOpKind op, const V &a, const V &b, SourceRange r) {
  using py::BinOpKind;
  // CPython's in-place operators: a list's `+=` is extend (the object changes, every
  // name for it sees the change), `*=` repeats in place; sets and dicts update in
  // place; immutable values (ints, strs, tuples) rebind to the binary result.
  if (auto *l = dynCast<ListV>(a)) {
    if (op == BinOpKind::Add) {
      if (b->kind == Kind::Opaque)
        opaqueNeeded(b, r, "extending a list with it");
      std::vector<V> more = toVector(b, r);
      alloc(more.size(), r);
      l->items.insert(l->items.end(), more.begin(), more.end());
      return a;
    }
    if (op == BinOpKind::Mult && isIntLike(b)) {
      int64_t count = std::max<int64_t>(intOf(b), 0);
      std::vector<V> items = l->items;
      if (!items.empty() && static_cast<uint64_t>(count) > kMaxAlloc / items.size())
        alloc(kMaxAlloc + 1, r);
      alloc(items.size() * static_cast<uint64_t>(count), r);
      l->items.clear();
      for (int64_t i = 0; i < count; ++i)
        l->items.insert(l->items.end(), items.begin(), items.end());
      return a;
    }
  }
  if (auto *s = dynCast<SetV>(a); s && !s->frozen && b->kind == Kind::Set) {
    V res = binop(op == BinOpKind::Sub ? BinOpKind::Sub : op, a, b, r);
    s->table = cast<SetV>(res).table;
    ++s->table.version;
    return a;
  }
  if (auto *d = dynCast<DictV>(a); d && op == BinOpKind::BitOr) {
    if (auto *src = dynCast<DictV>(b)) {
      for (const Table::Entry &e : std::vector<Table::Entry>(src->table.entries))
        if (e.live)
          dictSet(d->table, e.key, e.value, r);
      return a;
    }
  }
  if (auto *ia = dynCast<InstanceV>(a)) {
    std::string name = std::string("__i") + dunder(op) + "__";
    if (lookupClassAttr(ia->cls, name))
      return call(getAttr(a, name, r), Args{{b}, {}}, r);
  }
  return binop(op, a, b, r);
}

V Interp::unary(py::UnaryOpKind op, const V &v, SourceRange r) {
  using py::UnaryOpKind;
  if (op == UnaryOpKind::Not)
    return boolean(!truth(v, r, "`not` on it"));
  if (v->kind == Kind::Opaque)
    return opaque(fmt::format("unary `{}` on it", py::toString(op)), r, v);
  if (scalarOfType(v)) {
    if (V x = scalarUnary(op, v, r))
      return x;
    return opaque(fmt::format("unary `{}` on a number of a scalar type", py::toString(op)), r);
  }
  if (auto *a = dynCast<HostArrayV>(v); a && !a->isStruct) {
    if (op == UnaryOpKind::USub || op == UnaryOpKind::UAdd)
      return signedArray(*a, op == UnaryOpKind::USub);
    return opaque("a unary operator on an array", r);
  }
  if (v->kind == Kind::HostArray)
    return opaque("a unary operator on an array", r);
  if (auto *t = dynCast<TracedV>(v)) {
    if (op == UnaryOpKind::USub && t->tk != TKind::Bool)
      return typed(
          std::make_shared<TracedV>(teUnary(r, ast::UnaryOp::Neg, t->te), t->tk, t->stamp, t->span),
          t->tk == TKind::Value ? valueType(v) : std::nullopt); // negation keeps the type
    if (op == UnaryOpKind::UAdd)
      return v;
    if (op == UnaryOpKind::Invert && t->tk == TKind::Bool)
      return std::make_shared<TracedV>(teUnary(r, ast::UnaryOp::Not, t->te), TKind::Bool);
  }
  if (isIntLike(v)) {
    int64_t x = intOf(v);
    switch (op) {
    case UnaryOpKind::USub:
      return integer(checked(support::checkedNeg(x), r));
    case UnaryOpKind::UAdd:
      return integer(x);
    case UnaryOpKind::Invert:
      return integer(~x);
    default:
      break;
    }
  }
  if (auto *f = dynCast<FloatV>(v)) {
    if (op == UnaryOpKind::USub)
      return floating(-f->f);
    if (op == UnaryOpKind::UAdd)
      return v;
  }
  if (auto *inst = dynCast<InstanceV>(v)) {
    std::string name = op == UnaryOpKind::USub   ? "__neg__"
                       : op == UnaryOpKind::UAdd ? "__pos__"
                                                 : "__invert__";
    if (lookupClassAttr(inst->cls, name))
      return call(getAttr(v, name, r), Args{}, r);
  }
  raise("TypeError",
        fmt::format("bad operand type for unary {}: '{}'", py::toString(op), typeName(*v)), r);
}

//===----------------------------------------------------------------------===//
// Comparisons
//===----------------------------------------------------------------------===//

std::optional<bool> Interp::equal(const V &a, const V &b, SourceRange r) {
  compareWork(r);
  if (auto *x = dynCast<HostArrayV>(a), *y = dynCast<HostArrayV>(b);
      x && y && x->isStruct && y->isStruct && !x->structExtras && !y->structExtras)
    return x->shape == y->shape && x->dtype == y->dtype; // JAX's ShapeDtypeStruct.__eq__
  if (a->kind == Kind::Opaque || b->kind == Kind::Opaque || a->kind == Kind::Traced ||
      b->kind == Kind::Traced || a->kind == Kind::HostArray || b->kind == Kind::HostArray)
    return std::nullopt;
  if (isNumber(a) && isNumber(b)) {
    if (isIntLike(a) && isIntLike(b))
      return intOf(a) == intOf(b);
    if (a->kind == Kind::Float && b->kind == Kind::Float)
      return cast<FloatV>(a).f == cast<FloatV>(b).f;
    const V &i = a->kind == Kind::Float ? b : a;
    const V &f = a->kind == Kind::Float ? a : b;
    return cmpIntFloat(intOf(i), cast<FloatV>(f).f) == 0;
  }
  // Elements of containers compare by identity first (CPython's PyObject_RichCompareBool).
  auto elementsEqual = [&](const std::vector<V> &x,
                           const std::vector<V> &y) -> std::optional<bool> {
    if (x.size() != y.size())
      return false;
    for (size_t i = 0; i < x.size(); ++i) {
      if (x[i] == y[i])
        continue;
      std::optional<bool> e = equal(x[i], y[i], r);
      if (!e || !*e)
        return e;
    }
    return true;
  };
  if (a->kind != b->kind) {
    if (a->kind == Kind::Instance || b->kind == Kind::Instance) {
      const V &inst = a->kind == Kind::Instance ? a : b;
      const V &other = inst == a ? b : a;
      if (lookupClassAttr(cast<InstanceV>(inst).cls, "__eq__") &&
          cast<InstanceV>(inst).cls->role == ClassRole::User &&
          !cast<InstanceV>(inst).cls->dataclassFields)
        return truth(call(getAttr(inst, "__eq__", r), Args{{other}, {}}, r), r, "__eq__");
    }
    // PartitionSpec is a tuple in JAX.
    if (auto *p = apiAs<PSpecObj>(a); p && b->kind == Kind::Tuple)
      return elementsEqual(p->entries, cast<TupleV>(b).items);
    return false;
  }
  switch (a->kind) {
  case Kind::Str:
    return cast<StrV>(a).s == cast<StrV>(b).s;
  case Kind::Tuple:
    return elementsEqual(cast<TupleV>(a).items, cast<TupleV>(b).items);
  case Kind::List:
    return elementsEqual(cast<ListV>(a).items, cast<ListV>(b).items);
  case Kind::Dict: {
    const Table &x = cast<DictV>(a).table, &y = cast<DictV>(b).table;
    if (x.size != y.size)
      return false;
    for (const Table::Entry &e : x.entries) {
      if (!e.live)
        continue;
      auto at = tableFind(y, e.key, e.hash, r);
      if (!at)
        return false;
      const V &other = y.entries[*at].value;
      if (other == e.value)
        continue;
      std::optional<bool> eq = equal(e.value, other, r);
      if (!eq || !*eq)
        return eq;
    }
    return true;
  }
  case Kind::Set: {
    const Table &x = cast<SetV>(a).table, &y = cast<SetV>(b).table;
    if (x.size != y.size)
      return false;
    for (const Table::Entry &e : x.entries)
      if (e.live && !tableFind(y, e.key, e.hash, r))
        return false;
    return true;
  }
  case Kind::Range: {
    const auto &x = cast<RangeV>(a), &y = cast<RangeV>(b);
    int64_t n = x.length();
    if (n != y.length())
      return false;
    if (n == 0)
      return true;
    if (x.start != y.start)
      return false;
    return n == 1 || x.step == y.step;
  }
  case Kind::Slice: {
    const auto &x = cast<SliceV>(a), &y = cast<SliceV>(b);
    return elementsEqual({x.lower, x.upper, x.step}, {y.lower, y.upper, y.step});
  }
  case Kind::Instance: {
    const auto &x = cast<InstanceV>(a);
    if (x.cls == unionClass_) {
      // Unions are equal when they hold the same classes, in any order.
      if (cast<InstanceV>(b).cls != x.cls)
        return false;
      const auto &ma = cast<TupleV>(x.attrs->get("__args__")).items;
      const auto &mb = cast<TupleV>(cast<InstanceV>(b).attrs->get("__args__")).items;
      return ma.size() == mb.size() && std::all_of(ma.begin(), ma.end(), [&](const V &m) {
               return std::find(mb.begin(), mb.end(), m) != mb.end();
             });
    }
    if (x.cls->dataclassFields) {
      if (cast<InstanceV>(b).cls != x.cls)
        return false;
      std::vector<V> fa, fb;
      for (const std::string &n : *x.cls->dataclassFields) {
        fa.push_back(x.attrs->get(n));
        fb.push_back(cast<InstanceV>(b).attrs->get(n));
        if (!fa.back() || !fb.back())
          return false;
      }
      return elementsEqual(fa, fb);
    }
    if (lookupClassAttr(x.cls, "__eq__") && x.cls->role == ClassRole::User)
      return truth(call(getAttr(a, "__eq__", r), Args{{b}, {}}, r), r, "__eq__");
    return a == b;
  }
  case Kind::Builtin: {
    const auto &x = cast<BuiltinV>(a), &y = cast<BuiltinV>(b);
    return x.fn == y.fn && x.self == y.self;
  }
  case Kind::BoundMethod: {
    const auto &x = cast<BoundMethodV>(a), &y = cast<BoundMethodV>(b);
    return x.self == y.self && x.fn == y.fn;
  }
  case Kind::Api: {
    const auto &x = cast<ApiObject>(a).data, &y = cast<ApiObject>(b).data;
    if (x.index() != y.index())
      return false;
    if (auto *d = std::get_if<DTypeObj>(&x))
      return d->name == std::get<DTypeObj>(y).name;
    if (auto *d = std::get_if<DTypeKindObj>(&x))
      return d->name == std::get<DTypeKindObj>(y).name;
    if (auto *m = std::get_if<MemSpaceObj>(&x))
      return m->space == std::get<MemSpaceObj>(y).space &&
             m->semaphore == std::get<MemSpaceObj>(y).semaphore;
    if (auto *s = std::get_if<SemTypeObj>(&x))
      return s->kind == std::get<SemTypeObj>(y).kind;
    if (auto *t = std::get_if<DeviceIdTypeObj>(&x))
      return t->logical == std::get<DeviceIdTypeObj>(y).logical;
    if (auto *t = std::get_if<AxisTypeObj>(&x))
      return t->kind == std::get<AxisTypeObj>(y).kind;
    if (auto *t = std::get_if<CoreTypeObj>(&x))
      return t->name == std::get<CoreTypeObj>(y).name;
    if (auto *p = std::get_if<PSpecObj>(&x))
      return elementsEqual(p->entries, std::get<PSpecObj>(y).entries);
    if (auto *m = std::get_if<MeshObj>(&x)) {
      const auto &n = std::get<MeshObj>(y);
      // JAX compares the axis names, sizes and types and the devices in order: a mesh
      // whose device order dkv does not know against one whose order it knows is unknown.
      if (m->names != n.names || m->sizes != n.sizes || m->axisTypes != n.axisTypes)
        return false;
      if (m->deviceIds.empty() != n.deviceIds.empty())
        return std::nullopt;
      return m->deviceIds == n.deviceIds;
    }
    if (auto *d = std::get_if<DeviceObj>(&x)) {
      int64_t e = std::get<DeviceObj>(y).id;
      if (d->id < 0 || e < 0) // a device of an order dkv does not know
        return a == b ? std::optional<bool>(true) : std::nullopt;
      return d->id == e;
    }
    return a == b;
  }
  default:
    return a == b;
  }
}

bool Interp::less(const V &a, const V &b, SourceRange r) {
  compareWork(r);
  if (isNumber(a) && isNumber(b)) {
    if (isIntLike(a) && isIntLike(b))
      return intOf(a) < intOf(b);
    if (a->kind == Kind::Float && b->kind == Kind::Float)
      return cast<FloatV>(a).f < cast<FloatV>(b).f;
    if (a->kind == Kind::Float)
      return cmpIntFloat(intOf(b), cast<FloatV>(a).f) == 1;
    return cmpIntFloat(intOf(a), cast<FloatV>(b).f) == -1;
  }
  if (a->kind == Kind::Str && b->kind == Kind::Str)
    return cast<StrV>(a).s < cast<StrV>(b).s; // UTF-8 byte order is code point order
  if ((a->kind == Kind::Tuple || a->kind == Kind::List) && a->kind == b->kind) {
    const std::vector<V> &x = a->kind == Kind::Tuple ? cast<TupleV>(a).items : cast<ListV>(a).items;
    const std::vector<V> &y = b->kind == Kind::Tuple ? cast<TupleV>(b).items : cast<ListV>(b).items;
    for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
      if (x[i] == y[i])
        continue;
      std::optional<bool> eq = equal(x[i], y[i], r);
      if (!eq)
        opaqueNeeded(x[i]->kind == Kind::Opaque ? x[i] : y[i], r, "an ordering comparison");
      if (!*eq)
        return less(x[i], y[i], r);
    }
    return x.size() < y.size();
  }
  if (auto *ia = dynCast<InstanceV>(a))
    if (lookupClassAttr(ia->cls, "__lt__"))
      return truth(call(getAttr(a, "__lt__", r), Args{{b}, {}}, r), r, "__lt__");
  raise("TypeError",
        fmt::format("'<' not supported between instances of '{}' and '{}'", typeName(*a),
                    typeName(*b)),
        r);
}

V Interp::compare(py::CmpOpKind op, const V &a, const V &b, SourceRange r) {
  using py::CmpOpKind;
  if (op == CmpOpKind::Is || op == CmpOpKind::IsNot) {
    // Identity. CPython caches small ints and interns some strings, so `is` on other
    // ints, floats and strs depends on the implementation: refused, never guessed.
    bool same = a.get() == b.get();
    // NumPy's scalars are objects of their own (np.True_ is a singleton, other ones are
    // made by each operation): `is` between two of them is not modelled.
    if (!same && scalarOfType(a) && scalarOfType(b))
      unsupported(r, "`is` between two numbers of a scalar type (use `==`)");
    auto cached = [](const V &v) {
      return v->kind == Kind::Float || v->kind == Kind::Str ||
             (v->kind == Kind::Int && (cast<IntV>(v).i < -5 || cast<IntV>(v).i > 256));
    };
    if (!same && cached(a) && cached(b) && a->kind == b->kind)
      unsupported(r, fmt::format("`is` between two {} objects: the answer depends on CPython's "
                                 "caching of values (use `==`)",
                                 typeName(*a)));
    if (a->kind == Kind::Opaque || b->kind == Kind::Opaque) {
      const V &o = a->kind == Kind::Opaque ? a : b;
      const V &other = o == a ? b : a;
      if (!same)
        return opaque(fmt::format("`{}` on it", py::toString(op)), r, o);
      (void)other;
    }
    return boolean(op == CmpOpKind::Is ? same : !same);
  }
  // A comparison of a number of a scalar type: NumPy's np.bool_ or JAX's bool array
  // (Scalars.cpp); of an np.bool_, not modelled.
  if (op != CmpOpKind::In && op != CmpOpKind::NotIn && (scalarOfType(a) || scalarOfType(b))) {
    if (V v = scalarCompare(op, a, b, r))
      return v;
    if ((a->kind == Kind::Bool && scalarOfType(a)) || (b->kind == Kind::Bool && scalarOfType(b)))
      return opaque(fmt::format("`{}` of an np.bool_", py::toString(op)), r);
  }
  if (op == CmpOpKind::In || op == CmpOpKind::NotIn) {
    bool found = false;
    if (b->kind == Kind::Opaque) {
      // A str known to start with a prefix holds every substring of the prefix.
      const std::string &prefix = cast<OpaqueV>(b).origin->strPrefix;
      if (!prefix.empty() && a->kind == Kind::Str &&
          prefix.find(cast<StrV>(a).s) != std::string::npos)
        return boolean(op == CmpOpKind::In);
      return opaque(fmt::format("`{}` on it", py::toString(op)), r, b);
    }
    if (b->kind == Kind::Str) {
      if (a->kind != Kind::Str) {
        if (a->kind == Kind::Opaque)
          return opaque("`in` on it", r, a);
        raise("TypeError",
              fmt::format("'in <string>' requires string as left operand, not {}", typeName(*a)),
              r);
      }
      found = cast<StrV>(b).s.find(cast<StrV>(a).s) != std::string::npos;
    } else if (b->kind == Kind::Dict || b->kind == Kind::Set ||
               (apiAs<DictViewObj>(b) && apiAs<DictViewObj>(b)->what == DictViewObj::What::Keys)) {
      const Table &t = b->kind == Kind::Dict  ? cast<DictV>(b).table
                       : b->kind == Kind::Set ? cast<SetV>(b).table
                                              : cast<DictV>(apiAs<DictViewObj>(b)->dict).table;
      found = tableFind(t, a, hashOf(a, r), r).has_value();
    } else if (auto *rg = dynCast<RangeV>(b)) {
      if (isIntLike(a)) {
        int64_t x = intOf(a), n = rg->length();
        found = n > 0 &&
                (rg->step > 0 ? x >= rg->start && x < rg->stop : x <= rg->start && x > rg->stop) &&
                (x - rg->start) % rg->step == 0;
      } else {
        for (const V &item : toVector(b, r))
          found = found || equal(a, item, r).value_or(false);
      }
    } else if (auto *inst = dynCast<InstanceV>(b);
               inst && lookupClassAttr(inst->cls, "__contains__")) {
      found = truth(call(getAttr(b, "__contains__", r), Args{{a}, {}}, r), r, "__contains__");
    } else {
      V it = iter(b, r);
      while (V item = next(it, r)) {
        if (item == a) {
          found = true;
          break;
        }
        std::optional<bool> eq = equal(a, item, r);
        if (!eq) {
          const V &o = a->kind == Kind::Opaque || a->kind == Kind::Traced ? a : item;
          if (o->kind == Kind::Traced)
            tracedBool(cast<TracedV>(o), r, "`in` on it");
          return opaque("`in` on it", r, o);
        }
        if (*eq) {
          found = true;
          break;
        }
      }
    }
    return boolean(op == CmpOpKind::In ? found : !found);
  }
  if (a->kind == Kind::Traced || b->kind == Kind::Traced)
    return tracedCompare(op, a, b, r);
  if (a->kind == Kind::Opaque || b->kind == Kind::Opaque)
    return opaque(fmt::format("`{}` on it", py::toString(op)), r, a->kind == Kind::Opaque ? a : b);
  if (a->kind == Kind::HostArray || b->kind == Kind::HostArray) {
    // Two jax.ShapeDtypeStructs made without sharding, weak_type or vma compare by shape
    // and dtype (JAX's __eq__); others are unknown to dkv.
    auto *x = dynCast<HostArrayV>(a), *y = dynCast<HostArrayV>(b);
    if ((op == CmpOpKind::Eq || op == CmpOpKind::NotEq) && x && y && x->isStruct && y->isStruct &&
        !x->structExtras && !y->structExtras)
      return boolean((x->shape == y->shape && x->dtype == y->dtype) == (op == CmpOpKind::Eq));
    return opaque("a comparison of arrays", r);
  }
  switch (op) {
  case CmpOpKind::Eq:
  case CmpOpKind::NotEq: {
    std::optional<bool> eq = equal(a, b, r);
    if (!eq)
      return opaque("`==` on it", r);
    return boolean(op == CmpOpKind::Eq ? *eq : !*eq);
  }
  case CmpOpKind::Lt:
    return boolean(less(a, b, r));
  case CmpOpKind::Gt:
    return boolean(less(b, a, r));
  case CmpOpKind::LtE:
  case CmpOpKind::GtE: {
    const V &x = op == CmpOpKind::LtE ? a : b, &y = op == CmpOpKind::LtE ? b : a;
    if (isNumber(x) && isNumber(y))
      return boolean(!less(y, x, r) && !(x->kind == Kind::Float && std::isnan(cast<FloatV>(x).f)) &&
                     !(y->kind == Kind::Float && std::isnan(cast<FloatV>(y).f)));
    if (less(x, y, r))
      return boolean(true);
    std::optional<bool> eq = equal(x, y, r);
    return boolean(eq.value_or(false));
  }
  default:
    break;
  }
  return boolean(false);
}

//===----------------------------------------------------------------------===//
// Hashing and tables
//===----------------------------------------------------------------------===//

Hash Interp::hashOf(const V &v, SourceRange r) {
  auto mix = [](Hash h, Hash x) { return h ^ (x + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2)); };
  switch (v->kind) {
  case Kind::None:
  case Kind::Ellipsis:
    return reinterpret_cast<uintptr_t>(v.get());
  case Kind::Bool:
  case Kind::Int:
    return std::hash<int64_t>{}(intOf(v));
  case Kind::Float: {
    double f = cast<FloatV>(v).f;
    if (f == std::floor(f) && std::abs(f) < 9.2e18)
      return std::hash<int64_t>{}(static_cast<int64_t>(f));
    return std::hash<double>{}(f);
  }
  case Kind::Str:
    return std::hash<std::string>{}(cast<StrV>(v).s);
  case Kind::Tuple: {
    Hash h = 0x345678;
    for (const V &x : cast<TupleV>(v).items)
      h = mix(h, hashOf(x, r));
    return h;
  }
  case Kind::Set:
    if (cast<SetV>(v).frozen) {
      Hash h = 0;
      for (const Table::Entry &e : cast<SetV>(v).table.entries)
        if (e.live)
          h ^= e.hash * 0x100000001b3ULL;
      return h;
    }
    break;
  case Kind::List:
  case Kind::Dict:
  case Kind::Slice:
    break;
  case Kind::Range:
    return mix(std::hash<int64_t>{}(cast<RangeV>(v).start),
               std::hash<int64_t>{}(cast<RangeV>(v).length()));
  case Kind::Opaque:
    opaqueNeeded(v, r, "using it as a dict key or set element");
  case Kind::Traced:
    unsupported(r, "a per-device value as a dict key or set element");
  case Kind::Instance: {
    const auto &inst = cast<InstanceV>(v);
    if (inst.cls->dataclassFields) {
      if (!inst.cls->frozen)
        break;
      Hash h = 0x1234;
      for (const std::string &n : *inst.cls->dataclassFields)
        if (V x = inst.attrs->get(n))
          h = mix(h, hashOf(x, r));
      return h;
    }
    if (V hf = lookupClassAttr(inst.cls, "__hash__")) {
      if (hf->kind == Kind::None)
        break;
      return static_cast<Hash>(toIndex(call(getAttr(v, "__hash__", r), Args{}, r), r, "__hash__"));
    }
    if (lookupClassAttr(inst.cls, "__eq__") && inst.cls->role == ClassRole::User)
      break;
    return reinterpret_cast<uintptr_t>(v.get());
  }
  case Kind::Api: {
    const auto &a = cast<ApiObject>(v).data;
    if (auto *d = std::get_if<DTypeObj>(&a))
      return std::hash<std::string>{}(d->name);
    if (auto *m = std::get_if<MemSpaceObj>(&a))
      return static_cast<Hash>(m->space) + (m->semaphore ? 55 : 77);
    if (auto *s = std::get_if<SemTypeObj>(&a))
      return static_cast<Hash>(s->kind) + 99;
    if (auto *t = std::get_if<CoreTypeObj>(&a)) // equal by name (above)
      return std::hash<std::string>{}(t->name);
    if (auto *d = std::get_if<DeviceObj>(&a); d && d->id >= 0) // equal by id (above)
      return std::hash<int64_t>{}(d->id) + 0x5bd1e995;
    if (auto *p = std::get_if<PSpecObj>(&a)) {
      Hash h = 0x345678;
      for (const V &x : p->entries)
        h = mix(h, hashOf(x, r));
      return h;
    }
    // The objects that compare by value (Interp::equal) hash by the same value, as
    // CPython requires of `__eq__` and `__hash__`: a mesh by its axis names, sizes and
    // types (JAX hashes its devices too; equal meshes have equal devices, and dkv
    // does not always know their order), the enum-like objects by their member.
    if (auto *m = std::get_if<MeshObj>(&a)) {
      Hash h = 0x6d657368;
      for (const std::string &n : m->names)
        h = mix(h, std::hash<std::string>{}(n));
      for (int64_t s : m->sizes)
        h = mix(h, std::hash<int64_t>{}(s));
      for (AxisKind k : m->axisTypes)
        h = mix(h, static_cast<Hash>(k));
      return h;
    }
    if (auto *d = std::get_if<DTypeKindObj>(&a))
      return mix(0x6b696e64, std::hash<std::string>{}(d->name));
    if (auto *t = std::get_if<DeviceIdTypeObj>(&a))
      return t->logical ? 0x1d1 : 0x1d2;
    if (auto *t = std::get_if<AxisTypeObj>(&a))
      return mix(0x617874, static_cast<Hash>(t->kind));
    return reinterpret_cast<uintptr_t>(v.get());
  }
  case Kind::HostArray: {
    // A jax.ShapeDtypeStruct hashes by its fields (JAX's __hash__ of shape, dtype,
    // sharding, layout, weak_type): the shape and dtype are a hash consistent with its
    // equality. Arrays are unhashable, as in JAX and NumPy.
    const auto &h = cast<HostArrayV>(v);
    if (!h.isStruct)
      break;
    Hash out = mix(0x73647473, static_cast<Hash>(h.dtype));
    for (int64_t d : h.shape)
      out = mix(out, std::hash<int64_t>{}(d));
    return out;
  }
  default:
    return reinterpret_cast<uintptr_t>(v.get());
  }
  raise("TypeError", fmt::format("unhashable type: '{}'", typeName(*v)), r);
}

std::optional<size_t> Interp::tableFind(const Table &t, const V &key, Hash h, SourceRange r) {
  auto [lo, hi] = t.index.equal_range(h);
  for (auto it = lo; it != hi; ++it) {
    const Table::Entry &e = t.entries[it->second];
    if (!e.live)
      continue;
    if (e.key == key)
      return it->second;
    // Keys of one hash whose equality dkv does not know (a mesh whose device order it
    // does not know against one whose order it knows): which entry the key is would be
    // a guess.
    std::optional<bool> same = equal(e.key, key, r);
    if (!same)
      unsupported(r, fmt::format("a dict key or set element ({}) that may or may not equal "
                                 "another (a {}): dkv does not know whether they are equal",
                                 typeName(*key), typeName(*e.key)));
    if (*same)
      return it->second;
  }
  return std::nullopt;
}

V Interp::dictGet(const Table &t, const V &key, SourceRange r) {
  auto at = tableFind(t, key, hashOf(key, r), r);
  return at ? t.entries[*at].value : nullptr;
}

void Interp::dictSet(Table &t, const V &key, const V &value, SourceRange r) {
  Hash h = hashOf(key, r);
  if (auto at = tableFind(t, key, h, r)) {
    t.entries[*at].value = value;
    return;
  }
  alloc(1, r);
  t.entries.push_back(Table::Entry{key, value, h, true});
  t.index.emplace(h, t.entries.size() - 1);
  ++t.size;
  ++t.version;
}

bool Interp::dictDel(Table &t, const V &key, SourceRange r) {
  Hash h = hashOf(key, r);
  auto at = tableFind(t, key, h, r);
  if (!at)
    return false;
  t.entries[*at].live = false;
  t.entries[*at].key = nullptr;
  t.entries[*at].value = nullptr;
  auto [lo, hi] = t.index.equal_range(h);
  for (auto it = lo; it != hi; ++it)
    if (it->second == *at) {
      t.index.erase(it);
      break;
    }
  --t.size;
  ++t.version;
  // Compact when most entries are dead, so iteration stays proportional to the size.
  if (t.entries.size() > 32 && t.size * 4 < t.entries.size()) {
    std::vector<Table::Entry> live;
    for (Table::Entry &e : t.entries)
      if (e.live)
        live.push_back(std::move(e));
    t.entries = std::move(live);
    t.index.clear();
    for (size_t i = 0; i < t.entries.size(); ++i)
      t.index.emplace(t.entries[i].hash, i);
  }
  return true;
}

std::vector<V> Interp::tableKeys(const Table &t) const {
  std::vector<V> out;
  for (const Table::Entry &e : t.entries)
    if (e.live)
      out.push_back(e.key);
  return out;
}

V Interp::newDict(const std::vector<std::pair<V, V>> &items, SourceRange r) {
  auto d = std::make_shared<DictV>();
  for (const auto &[k, v] : items)
    dictSet(d->table, k, v, r);
  return d;
}

//===----------------------------------------------------------------------===//
// Indexes and slices
//===----------------------------------------------------------------------===//

int64_t Interp::toIndex(const V &v, SourceRange r, std::string_view what) {
  if (isIntLike(v))
    return intOf(v);
  if (auto *t = dynCast<TracedV>(v))
    tracedIndex(*t, r, what);
  if (v->kind == Kind::Opaque)
    opaqueNeeded(v, r, what);
  if (auto *inst = dynCast<InstanceV>(v))
    if (lookupClassAttr(inst->cls, "__index__"))
      return toIndex(call(getAttr(v, "__index__", r), Args{}, r), r, what);
  // A JAX or NumPy array's __index__ (JAX's defers to NumPy's): a 0-d integer array is its
  // value, any other array NumPy's TypeError.
  if (auto *h = dynCast<HostArrayV>(v); h && !h->isStruct && !h->key) {
    if (!h->shape.empty() || !ast::isInteger(h->dtype))
      raise("TypeError", "only integer scalar arrays can be converted to a scalar index", r);
    if (h->contents && h->contents->size() == 1)
      return (*h->contents)[0];
    opaqueNeeded(opaque("the value of the array", r, v), r, what);
  }
  raise("TypeError", fmt::format("'{}' object cannot be interpreted as an integer", typeName(*v)),
        r);
}

namespace {

struct SliceBounds {
  int64_t start, stop, step, length;
};

} // namespace

// CPython's PySlice_Unpack and PySlice_AdjustIndices.
static SliceBounds adjustSlice(Interp &in, const SliceV &s, int64_t len, SourceRange r) {
  int64_t step = 1;
  if (s.step->kind != Kind::None) {
    step = in.toIndex(s.step, r, "a slice step");
    if (step == 0)
      in.raise("ValueError", "slice step cannot be zero", r);
  }
  const int64_t big = std::numeric_limits<int64_t>::max();
  int64_t start =
      s.lower->kind == Kind::None ? (step < 0 ? big : 0) : in.toIndex(s.lower, r, "a slice start");
  int64_t stop = s.upper->kind == Kind::None
                     ? (step < 0 ? std::numeric_limits<int64_t>::min() : big)
                     : in.toIndex(s.upper, r, "a slice end");
  auto adjust = [&](int64_t &x) {
    if (x < 0) {
      x = x < -len ? (step < 0 ? -1 : 0) : x + len;
    } else if (x >= len) {
      x = step < 0 ? len - 1 : len;
    }
  };
  adjust(start);
  adjust(stop);
  int64_t length = 0;
  if (step < 0) {
    if (stop < start)
      length = (start - stop - 1) / (-step) + 1;
  } else if (start < stop) {
    length = (stop - start - 1) / step + 1;
  }
  return {start, stop, step, length};
}

int64_t RangeV::length() const {
  if (step > 0 ? start >= stop : start <= stop)
    return 0;
  __int128 span =
      step > 0 ? static_cast<__int128>(stop) - start - 1 : static_cast<__int128>(start) - stop - 1;
  __int128 st = step > 0 ? step : -static_cast<__int128>(step);
  return static_cast<int64_t>(span / st + 1);
}

int64_t HostArrayV::size() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

std::string HostArrayV::dtypeName() const {
  if (x64)
    return ast::isInteger(dtype) ? "int64" : "float64";
  std::string_view py = prim::pythonName(dtype); // jnp.float32: its name is float32
  return std::string(py.substr(py.find('.') + 1));
}

V Interp::getItem(const V &obj, const V &key, SourceRange r) {
  switch (obj->kind) {
  case Kind::Ref:
  case Kind::Sem: {
    std::vector<V> items = indexItems(key);
    auto &ref = static_cast<RefV &>(*obj);
    if (obj->kind == Kind::Sem)
      return view(obj, items, r);
    if (ref.table)
      return tableRead(obj, items, r);
    V v = view(obj, items, r);
    const auto &viewRef = static_cast<RefV &>(*v);
    std::optional<prim::ValueType> type;
    if (std::optional<std::vector<int64_t>> shape = viewShape(viewRef))
      type = prim::ValueType::array(prim::ElemType{viewRef.dtype, false}, *shape);
    LoadSpan span{emitted_, emitted_, blocks_.size(), blockIds_.empty() ? 0 : blockIds_.back()};
    return typed(std::make_shared<TracedV>(refTE(viewRef, r), TKind::Value, emitted_, span), type);
  }
  case Kind::List:
  case Kind::Tuple:
  case Kind::Str: {
    const std::vector<V> *items = obj->kind == Kind::List    ? &cast<ListV>(obj).items
                                  : obj->kind == Kind::Tuple ? &cast<TupleV>(obj).items
                                                             : nullptr;
    std::vector<V> chars;
    std::vector<char32_t> cps;
    bool ascii = true;
    int64_t len;
    if (!items) {
      const std::string &s = cast<StrV>(obj).s;
      ascii = isAscii(s);
      if (!ascii)
        cps = codePoints(s);
      len = ascii ? static_cast<int64_t>(s.size()) : static_cast<int64_t>(cps.size());
    } else {
      len = static_cast<int64_t>(items->size());
    }
    auto charAt = [&](int64_t i) -> std::string {
      return ascii ? std::string(1, cast<StrV>(obj).s[static_cast<size_t>(i)])
                   : toUtf8(cps[static_cast<size_t>(i)]);
    };
    if (auto *s = dynCast<SliceV>(key)) {
      SliceBounds b = adjustSlice(*this, *s, len, r);
      alloc(static_cast<uint64_t>(b.length), r);
      if (!items) {
        std::string out;
        for (int64_t k = 0, i = b.start; k < b.length; ++k, i += b.step)
          out += charAt(i);
        return string(std::move(out));
      }
      std::vector<V> out;
      for (int64_t k = 0, i = b.start; k < b.length; ++k, i += b.step)
        out.push_back((*items)[static_cast<size_t>(i)]);
      return obj->kind == Kind::List ? list(std::move(out)) : tuple(std::move(out));
    }
    if (key->kind == Kind::Opaque)
      return opaque("indexing with it", r, key);
    if (!isIntLike(key) && key->kind != Kind::Traced && key->kind != Kind::Instance &&
        key->kind != Kind::HostArray)
      raise("TypeError",
            fmt::format("{} indices must be integers or slices, not {}", typeName(*obj),
                        typeName(*key)),
            r);
    int64_t i = toIndex(key, r, fmt::format("a {} index", typeName(*obj)));
    if (i < 0)
      i += len;
    if (i < 0 || i >= len)
      raise("IndexError", fmt::format("{} index out of range", typeName(*obj)), r);
    return items ? (*items)[static_cast<size_t>(i)] : string(charAt(i));
  }
  case Kind::Range: {
    const auto &rg = cast<RangeV>(obj);
    int64_t len = rg.length();
    if (auto *s = dynCast<SliceV>(key)) {
      SliceBounds b = adjustSlice(*this, *s, len, r);
      int64_t start = rg.at(b.start), step = rg.step * b.step;
      return std::make_shared<RangeV>(start, start + b.length * step, step);
    }
    int64_t i = toIndex(key, r, "a range index");
    if (i < 0)
      i += len;
    if (i < 0 || i >= len)
      raise("IndexError", "range object index out of range", r);
    return integer(rg.at(i));
  }
  case Kind::Dict: {
    if (key->kind == Kind::Opaque)
      return opaque("a dict item at it", r, key);
    V v = dictGet(cast<DictV>(obj).table, key, r);
    if (!v) {
      auto text = repr(key, r);
      raise("KeyError", text ? *text : "", r);
    }
    return v;
  }
  case Kind::Opaque:
    return opaque("indexing it", r, obj);
  case Kind::HostArray:
    if (V v = indexArray(cast<HostArrayV>(obj), key, r))
      return v;
    return opaque("indexing an array (dkv keeps arrays as shapes)", r);
  case Kind::Instance: {
    if (lookupClassAttr(cast<InstanceV>(obj).cls, "__getitem__"))
      return call(getAttr(obj, "__getitem__", r), Args{{key}, {}}, r);
    if (cast<InstanceV>(obj).cls->opaqueBase)
      return opaque("indexing it", r);
    break;
  }
  case Kind::Class: {
    const auto &c = cast<ClassV>(obj);
    if (c.role == ClassRole::Enum ||
        lookupClassAttr(std::static_pointer_cast<ClassV>(obj), "_member_map_")) {
      V members = lookupClassAttr(std::static_pointer_cast<ClassV>(obj), "_member_map_");
      if (auto *d = dynCast<DictV>(members)) {
        if (V v = dictGet(d->table, key, r))
          return v;
        auto text = repr(key, r);
        raise("KeyError", text ? *text : "", r);
      }
    }
    // `list[int]`, `tuple[int, ...]`: typing's generic aliases.
    return opaque(fmt::format("the generic alias `{}[...]`", c.name), r);
  }
  case Kind::Api:
    if (auto *at = apiAs<AtObj>(obj))
      return view(at->ref, indexItems(key), r);
    if (apiAs<StateRefObj>(obj))
      stateRefMisused(obj, r, "the ref read here");
    if (auto *p = apiAs<PSpecObj>(obj))
      return getItem(tuple(p->entries), key, r);
    if (apiAs<DeviceArrayObj>(obj))
      return deviceArrayIndex(obj, key, r, false);
    break;
  case Kind::Iterator:
    if (V arr = flatIterArray(obj)) // `devs.flat[i]`
      return deviceArrayIndex(arr, key, r, true);
    break;
  case Kind::Traced:
    return indexValue(obj, key, r);
  default:
    break;
  }
  raise("TypeError", fmt::format("'{}' object is not subscriptable", typeName(*obj)), r);
}

V Interp::mapContents(const HostArrayV &a, std::vector<int64_t> shape,
                      const std::function<std::vector<int64_t>(const std::vector<int64_t> &)> &f) {
  auto out = std::make_shared<HostArrayV>(std::move(shape), a.dtype);
  out->numpy = a.numpy;
  out->x64 = a.x64;
  if (a.deviceContents) {
    std::vector<std::vector<int64_t>> per;
    for (const auto &c : *a.deviceContents)
      per.push_back(f(c));
    out->deviceContents = std::move(per);
  } else if (a.contents) {
    out->contents = f(*a.contents);
  }
  return out;
}

namespace {

/// A shape as Python prints the tuple: `(4,)`, `(4, 8)`.
std::string shapeText(const std::vector<int64_t> &shape) {
  if (shape.size() == 1)
    return fmt::format("({},)", shape[0]);
  return fmt::format("({})", fmt::join(shape, ", "));
}

/// The entries of a PartitionSpec sharding, one per dimension of a `rank`-dimensional
/// array (a spec may name fewer: the rest are None); nullopt when it is unknown.
std::optional<std::vector<V>> specEntries(const HostArrayV &a) {
  const auto *p = a.sharding ? apiAs<PSpecObj>(a.sharding) : nullptr;
  if (!p || p->entries.size() > a.shape.size())
    return std::nullopt;
  std::vector<V> out = p->entries;
  while (out.size() < a.shape.size())
    out.push_back(none());
  return out;
}

/// Whether a spec entry shards its dimension (None does not).
bool shards(const V &entry) { return entry->kind != Kind::None; }

/// The sharding of `a[items]` (only None, slices and ints): a whole slice keeps its
/// dimension's entry, None adds an unsharded dimension, an int drops an unsharded one;
/// anything else on a sharded dimension leaves the sharding unknown (null).
V indexedSharding(const HostArrayV &a, const std::vector<V> &items) {
  std::optional<std::vector<V>> entries = specEntries(a);
  if (!entries)
    return nullptr;
  std::vector<V> out;
  size_t dim = 0;
  for (const V &k : items) {
    if (k->kind == Kind::None) {
      out.push_back(none());
      continue;
    }
    if (dim >= entries->size())
      return nullptr;
    const V &entry = (*entries)[dim++];
    if (const auto *sl = dynCast<SliceV>(k)) {
      const bool whole = sl->lower->kind == Kind::None && sl->upper->kind == Kind::None &&
                         sl->step->kind == Kind::None;
      if (!whole && shards(entry))
        return nullptr;
      out.push_back(entry);
    } else if (shards(entry)) {
      return nullptr;
    }
  }
  for (; dim < entries->size(); ++dim)
    out.push_back((*entries)[dim]);
  return makeApi(PSpecObj{std::move(out)});
}

/// NumPy's broadcasting of two shapes (right-aligned, equal or 1); nullopt when they
/// do not broadcast.
std::optional<std::vector<int64_t>> broadcastShapes(const std::vector<int64_t> &x,
                                                    const std::vector<int64_t> &y) {
  const size_t n = std::max(x.size(), y.size());
  std::vector<int64_t> out(n, 1);
  for (size_t i = 0; i < n; ++i) {
    const int64_t a = i < n - x.size() ? 1 : x[i - (n - x.size())];
    const int64_t b = i < n - y.size() ? 1 : y[i - (n - y.size())];
    if (a != b && a != 1 && b != 1)
      return std::nullopt;
    out[i] = a == 1 ? b : a;
  }
  return out;
}

/// The sharding of an array of `outShape` that `a` is broadcast into (right-aligned):
/// its entries on the dimensions it keeps, None on the dimensions added; unknown when a
/// sharded dimension is stretched.
V broadcastSharding(const HostArrayV &a, const std::vector<int64_t> &outShape) {
  std::optional<std::vector<V>> entries = specEntries(a);
  if (!entries || outShape.size() < a.shape.size())
    return nullptr;
  const size_t lead = outShape.size() - a.shape.size();
  std::vector<V> out(lead, none());
  for (size_t i = 0; i < a.shape.size(); ++i) {
    if (a.shape[i] != outShape[lead + i] && shards((*entries)[i]))
      return nullptr;
    out.push_back((*entries)[i]);
  }
  return makeApi(PSpecObj{std::move(out)});
}

/// The values of `x` (row-major, of shape `from`) broadcast to `to`.
std::vector<int64_t> broadcastValues(const std::vector<int64_t> &x,
                                     const std::vector<int64_t> &from,
                                     const std::vector<int64_t> &to) {
  const size_t lead = to.size() - from.size();
  int64_t total = 1;
  for (int64_t d : to)
    total *= d;
  std::vector<int64_t> out(static_cast<size_t>(total));
  for (int64_t flat = 0; flat < total; ++flat) {
    int64_t rest = flat, src = 0, stride = 1;
    for (size_t d = to.size(); d-- > 0;) {
      const int64_t i = rest % to[d];
      rest /= to[d];
      if (d >= lead) {
        const int64_t len = from[d - lead];
        src += (len == 1 ? 0 : i) * stride;
        stride *= len;
      }
    }
    out[static_cast<size_t>(flat)] = x[static_cast<size_t>(src)];
  }
  return out;
}

int64_t elements(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

} // namespace

V Interp::hostMatmul(const V &a, const V &b) {
  // Two jax arrays of one element type, (m, k) @ (k, n): an (m, n) array of that type
  // (jax.numpy.matmul; the data is not computed, as for every float array). Other ranks,
  // mixed types and NumPy arrays are not modelled (null: the caller's opaque value).
  const auto *x = dynCast<HostArrayV>(a);
  const auto *y = dynCast<HostArrayV>(b);
  if (!x || !y || x->numpy || y->numpy || x->isStruct || y->isStruct || x->key || y->key ||
      x->dtype != y->dtype || x->shape.size() != 2 || y->shape.size() != 2 ||
      x->shape[1] != y->shape[0])
    return nullptr;
  return std::make_shared<HostArrayV>(std::vector<int64_t>{x->shape[0], y->shape[1]}, x->dtype);
}

V Interp::arrayBinop(py::BinOpKind op, const V &a, const V &b, SourceRange r) {
  using py::BinOpKind;
  if (op == BinOpKind::MatMult)
    return hostMatmul(a, b);
  if (op != BinOpKind::Add && op != BinOpKind::Sub && op != BinOpKind::Mult &&
      op != BinOpKind::Div && op != BinOpKind::FloorDiv && op != BinOpKind::Mod)
    return nullptr;
  const auto *x = dynCast<HostArrayV>(a);
  const auto *y = dynCast<HostArrayV>(b);
  // jax arrays only (NumPy's promotion differs: int64, float64), and no ShapeDtypeStruct.
  for (const HostArrayV *h : {x, y})
    if (h && (h->numpy || h->isStruct))
      return nullptr;
  for (const V &v : {a, b})
    if (v->kind != Kind::HostArray && !isNumber(v))
      return nullptr;
  static const std::vector<int64_t> scalar;
  const std::vector<int64_t> &xs = x ? x->shape : scalar, &ys = y ? y->shape : scalar;
  std::optional<std::vector<int64_t>> shape = broadcastShapes(xs, ys);
  if (!shape) {
    // JAX's errors: arrays of one rank reach lax's check of the operation, arrays of
    // two ranks NumPy's rank promotion (jax/_src/numpy/util.py promote_shapes).
    if (xs.size() != ys.size())
      raise("ValueError",
            fmt::format("Incompatible shapes for broadcasting: shapes=[{}, {}]", shapeText(xs),
                        shapeText(ys)),
            r);
    const char *lax = op == BinOpKind::Add    ? "add"
                      : op == BinOpKind::Sub  ? "sub"
                      : op == BinOpKind::Mult ? "mul"
                      : op == BinOpKind::Mod  ? "rem"
                                              : "div";
    raise("TypeError",
          fmt::format("{} got incompatible shapes for broadcasting: {}, {}.", lax, shapeText(xs),
                      shapeText(ys)),
          r);
  }
  // The dtype: JAX's promotion, a Python scalar weakly typed (it takes the array's
  // type, an int array and a float scalar give float32); true division of integers
  // gives float32. Two arrays of different types: only int with float is modelled.
  ast::DType dtype;
  auto isInt = [](ast::DType t) { return ast::isInteger(t); };
  if (x && y) {
    if (x->dtype == y->dtype)
      dtype = x->dtype;
    else if (isInt(x->dtype) != isInt(y->dtype))
      dtype = isInt(x->dtype) ? y->dtype : x->dtype;
    else
      return nullptr;
  } else {
    const HostArrayV &arr = x ? *x : *y;
    const V &other = x ? b : a;
    dtype = isInt(arr.dtype) && other->kind == Kind::Float ? ast::DType::F32 : arr.dtype;
  }
  if (op == BinOpKind::Div && isInt(dtype))
    dtype = ast::DType::F32;
  auto out = std::make_shared<HostArrayV>(*shape, dtype);
  // Values: integers, both sides known (one set, not per device), every result in int32.
  auto values = [&](const HostArrayV *h, const V &v) -> std::optional<std::vector<int64_t>> {
    if (h)
      return h->contents && !h->deviceContents
                 ? std::optional(broadcastValues(*h->contents, h->shape, *shape))
                 : std::nullopt;
    if (!isIntLike(v))
      return std::nullopt;
    return std::vector<int64_t>(static_cast<size_t>(elements(*shape)), intOf(v));
  };
  if (dtype == ast::DType::I32 && elements(*shape) <= (int64_t{1} << 16)) {
    std::optional<std::vector<int64_t>> l = values(x, a), rv = values(y, b);
    if (l && rv) {
      std::vector<int64_t> res(l->size());
      bool ok = true;
      for (size_t i = 0; i < res.size() && ok; ++i) {
        const int64_t p = (*l)[i], q = (*rv)[i];
        switch (op) {
        case BinOpKind::Add:
          res[i] = p + q;
          break;
        case BinOpKind::Sub:
          res[i] = p - q;
          break;
        case BinOpKind::Mult:
          res[i] = p * q; // both in int32: no 64-bit overflow
          break;
        case BinOpKind::FloorDiv:
        case BinOpKind::Mod: {
          if (q == 0) {
            ok = false;
            break;
          }
          int64_t quo = p / q, rem = p % q;
          if (rem != 0 && ((rem < 0) != (q < 0))) {
            --quo;
            rem += q;
          }
          res[i] = op == BinOpKind::FloorDiv ? quo : rem;
          break;
        }
        default:
          ok = false;
        }
        ok = ok && res[i] >= std::numeric_limits<int32_t>::min() &&
             res[i] <= std::numeric_limits<int32_t>::max();
      }
      if (ok)
        out->contents = std::move(res);
    }
  }
  // The sharding: a scalar keeps the array's; two arrays the one they share, or the
  // sharded one's when the other is only broadcast along unsharded dimensions.
  auto text = [&](const V &s) -> std::optional<std::string> {
    return s ? repr(s, r) : std::nullopt;
  };
  if (!x || !y) {
    out->sharding = broadcastSharding(x ? *x : *y, *shape);
  } else {
    V sx = broadcastSharding(*x, *shape), sy = broadcastSharding(*y, *shape);
    std::optional<std::string> tx = text(sx), ty = text(sy);
    if (tx && ty && *tx == *ty)
      out->sharding = sx;
  }
  return out;
}

V Interp::broadcastArray(const V &v, const std::vector<int64_t> &shape, SourceRange r) {
  const auto *x = dynCast<HostArrayV>(v);
  if ((!x && !isNumber(v)) || (x && (x->numpy || x->isStruct)))
    return nullptr;
  static const std::vector<int64_t> scalar;
  const std::vector<int64_t> &from = x ? x->shape : scalar;
  if (from.size() > shape.size())
    raise("ValueError",
          fmt::format("Cannot broadcast to shape with fewer dimensions: arr_shape={} shape={}",
                      shapeText(from), shapeText(shape)),
          r);
  bool ok = true;
  for (size_t i = 0; ok && i < from.size(); ++i) {
    const int64_t want = shape[shape.size() - from.size() + i];
    ok = from[i] == want || from[i] == 1;
  }
  for (int64_t d : shape)
    if (d < 0)
      raise("ValueError",
            fmt::format("negative dimensions are not allowed in shape {}", shapeText(shape)), r);
  if (!ok)
    raise("ValueError",
          fmt::format("Incompatible types for broadcasting: input shape {} and requested shape {}",
                      shapeText(from), shapeText(shape)),
          r);
  const ast::DType dtype = x                        ? x->dtype
                           : v->kind == Kind::Float ? ast::DType::F32
                                                    : ast::DType::I32;
  auto out = std::make_shared<HostArrayV>(shape, dtype);
  if (elements(shape) <= (int64_t{1} << 16)) {
    if (x && x->contents && !x->deviceContents)
      out->contents = broadcastValues(*x->contents, from, shape);
    else if (!x && isIntLike(v))
      out->contents = std::vector<int64_t>(static_cast<size_t>(elements(shape)), intOf(v));
  }
  if (x)
    out->sharding = broadcastSharding(*x, shape);
  return out;
}

V Interp::indexArray(const HostArrayV &a, const V &key, SourceRange r) {
  std::vector<V> items = key->kind == Kind::Tuple ? toVector(key, r) : std::vector<V>{key};
  // The devices whose values differ: the array's, or the key's per-device ints.
  size_t devices = a.deviceContents ? a.deviceContents->size() : 0;
  for (const V &k : items) {
    auto *h = dynCast<HostArrayV>(k);
    if (!h)
      continue;
    if (!h->shape.empty() || !h->deviceContents || !ast::isInteger(h->dtype))
      return nullptr; // advanced indexing by an array: not modelled
    if (devices && devices != h->deviceContents->size())
      return nullptr;
    devices = h->deviceContents->size();
  }
  for (const V &k : items)
    if (!(k->kind == Kind::None || k->kind == Kind::Slice || k->kind == Kind::HostArray ||
          isIntLike(k)))
      return nullptr;
  // An array of shape only, indexed by ints, slices and None (`x[0]`, `x[:, 1:]`): the
  // shape of the result, its data unknown as the array's.
  const bool shapeOnly = !a.contents && !a.deviceContents;
  if (shapeOnly && (devices || a.isStruct))
    return nullptr;
  // One device's selection: for each source dimension the indices taken, and whether
  // the dimension stays; None adds a dimension of 1.
  auto select = [&](size_t dev, std::vector<int64_t> &shape,
                    std::vector<std::vector<int64_t>> &picks) {
    shape.clear();
    picks.clear();
    size_t dim = 0;
    for (const V &k : items) {
      if (k->kind == Kind::None) {
        shape.push_back(1);
        continue;
      }
      if (dim >= a.shape.size())
        raise("IndexError",
              fmt::format("too many indices for array: array is {}-dimensional, but {} were "
                          "indexed",
                          a.shape.size(), dim + 1),
              r);
      int64_t len = a.shape[dim];
      if (auto *sl = dynCast<SliceV>(k)) {
        SliceBounds b = adjustSlice(*this, *sl, len, r);
        std::vector<int64_t> idx;
        for (int64_t i = 0, x = b.start; i < b.length; ++i, x += b.step)
          idx.push_back(x);
        shape.push_back(b.length);
        picks.push_back(std::move(idx));
      } else {
        int64_t i;
        if (auto *h = dynCast<HostArrayV>(k)) {
          i = (*h->deviceContents)[dev][0];
          if (i < -len || i >= len)
            unsupported(r, "a per-device index out of the array's bounds (JAX clamps it)");
        } else {
          i = intOf(k);
          if (i < -len || i >= len)
            raise("IndexError",
                  fmt::format("index {} is out of bounds for axis {} with size {}", i, dim, len),
                  r);
        }
        picks.push_back({i < 0 ? i + len : i});
      }
      ++dim;
    }
    for (; dim < a.shape.size(); ++dim) {
      std::vector<int64_t> idx;
      for (int64_t i = 0; i < a.shape[dim]; ++i)
        idx.push_back(i);
      shape.push_back(a.shape[dim]);
      picks.push_back(std::move(idx));
    }
  };
  auto gather = [&](const std::vector<int64_t> &src,
                    const std::vector<std::vector<int64_t>> &picks) {
    std::vector<int64_t> strides(a.shape.size(), 1);
    for (size_t d = a.shape.size(); d-- > 1;)
      strides[d - 1] = strides[d] * a.shape[d];
    std::vector<int64_t> out{0}; // flat source offsets, built dimension by dimension
    for (size_t d = 0; d < picks.size(); ++d) {
      std::vector<int64_t> next;
      alloc(out.size() * picks[d].size(), r);
      for (int64_t base : out)
        for (int64_t i : picks[d])
          next.push_back(base + i * strides[d]);
      out = std::move(next);
    }
    for (int64_t &x : out)
      x = src[static_cast<size_t>(x)];
    return out;
  };
  std::vector<int64_t> shape;
  std::vector<std::vector<int64_t>> picks;
  if (!devices) {
    select(0, shape, picks);
    auto out = std::make_shared<HostArrayV>(shape, a.dtype);
    out->numpy = a.numpy;
    out->x64 = a.x64;
    out->key = a.key;
    if (!shapeOnly)
      out->contents = gather(*a.contents, picks);
    out->sharding = indexedSharding(a, items);
    return out;
  }
  std::vector<std::vector<int64_t>> per;
  for (size_t dev = 0; dev < devices; ++dev) {
    select(dev, shape, picks);
    per.push_back(gather(a.deviceContents ? (*a.deviceContents)[dev] : *a.contents, picks));
  }
  auto out = std::make_shared<HostArrayV>(shape, a.dtype);
  out->numpy = a.numpy;
  out->x64 = a.x64;
  out->deviceContents = std::move(per);
  return out;
}

void Interp::setItem(const V &obj, const V &key, const V &value, SourceRange r) {
  switch (obj->kind) {
  case Kind::Ref:
    store(obj, key, value, false, r, r);
    return;
  case Kind::List: {
    auto &l = cast<ListV>(obj);
    int64_t len = static_cast<int64_t>(l.items.size());
    if (auto *s = dynCast<SliceV>(key)) {
      if (value->kind == Kind::Opaque)
        opaqueNeeded(value, r, "assigning it to a list slice");
      std::vector<V> items = toVector(value, r); // `a[:] = a` reads all first
      SliceBounds b = adjustSlice(*this, *s, len, r);
      if (b.step == 1) {
        int64_t stop = std::max(b.stop, b.start);
        l.items.erase(l.items.begin() + b.start, l.items.begin() + stop);
        l.items.insert(l.items.begin() + b.start, items.begin(), items.end());
        alloc(items.size(), r);
        return;
      }
      if (static_cast<int64_t>(items.size()) != b.length)
        raise("ValueError",
              fmt::format("attempt to assign sequence of size {} to extended slice of size {}",
                          items.size(), b.length),
              r);
      for (int64_t k = 0, i = b.start; k < b.length; ++k, i += b.step)
        l.items[static_cast<size_t>(i)] = items[static_cast<size_t>(k)];
      return;
    }
    if (key->kind == Kind::Opaque)
      opaqueNeeded(key, r, "a list index");
    if (!isIntLike(key) && key->kind != Kind::Traced && key->kind != Kind::Instance &&
        key->kind != Kind::HostArray)
      raise("TypeError",
            fmt::format("list indices must be integers or slices, not {}", typeName(*key)), r);
    int64_t i = toIndex(key, r, "a list index");
    if (i < 0)
      i += len;
    if (i < 0 || i >= len)
      raise("IndexError", "list assignment index out of range", r);
    l.items[static_cast<size_t>(i)] = value;
    return;
  }
  case Kind::Dict:
    dictSet(cast<DictV>(obj).table, key, value, r);
    return;
  case Kind::Opaque:
    return; // an opaque container: what it holds is not computed either
  case Kind::Instance:
    if (lookupClassAttr(cast<InstanceV>(obj).cls, "__setitem__")) {
      call(getAttr(obj, "__setitem__", r), Args{{key, value}, {}}, r);
      return;
    }
    break;
  case Kind::HostArray:
    unsupported(r, "assigning into an array (JAX arrays are immutable; numpy arrays are kept as "
                   "shapes by dkv)");
  case Kind::Api:
    if (apiAs<StateRefObj>(obj))
      stateRefMisused(obj, r, "the ref written here");
    break;
  default:
    break;
  }
  raise("TypeError", fmt::format("'{}' object does not support item assignment", typeName(*obj)),
        r);
}

void Interp::delItem(const V &obj, const V &key, SourceRange r) {
  switch (obj->kind) {
  case Kind::List: {
    auto &l = cast<ListV>(obj);
    int64_t len = static_cast<int64_t>(l.items.size());
    if (auto *s = dynCast<SliceV>(key)) {
      SliceBounds b = adjustSlice(*this, *s, len, r);
      std::vector<bool> drop(l.items.size(), false);
      for (int64_t k = 0, i = b.start; k < b.length; ++k, i += b.step)
        drop[static_cast<size_t>(i)] = true;
      std::vector<V> kept;
      for (size_t i = 0; i < l.items.size(); ++i)
        if (!drop[i])
          kept.push_back(l.items[i]);
      l.items = std::move(kept);
      return;
    }
    int64_t i = toIndex(key, r, "a list index");
    if (i < 0)
      i += len;
    if (i < 0 || i >= len)
      raise("IndexError", "list assignment index out of range", r);
    l.items.erase(l.items.begin() + i);
    return;
  }
  case Kind::Dict:
    if (!dictDel(cast<DictV>(obj).table, key, r)) {
      auto text = repr(key, r);
      raise("KeyError", text ? *text : "", r);
    }
    return;
  case Kind::Opaque:
    return;
  case Kind::Instance:
    if (lookupClassAttr(cast<InstanceV>(obj).cls, "__delitem__")) {
      call(getAttr(obj, "__delitem__", r), Args{{key}, {}}, r);
      return;
    }
    break;
  default:
    break;
  }
  raise("TypeError", fmt::format("'{}' object doesn't support item deletion", typeName(*obj)), r);
}

//===----------------------------------------------------------------------===//
// Iteration
//===----------------------------------------------------------------------===//

namespace {

// A list's iterator reads the live list by index: items appended while a loop runs
// are visited, as in CPython.
struct SeqIter final : IterState {
  V seq;
  size_t i = 0;
  V next(Interp &, SourceRange) override {
    const std::vector<V> &items =
        seq->kind == Kind::List ? cast<ListV>(seq).items : cast<TupleV>(seq).items;
    if (i >= items.size())
      return nullptr;
    return items[i++];
  }
};
struct RangeIter final : IterState {
  int64_t cur, step, left;
  V next(Interp &, SourceRange) override {
    if (left <= 0)
      return nullptr;
    --left;
    int64_t v = cur;
    cur += step;
    return integer(v);
  }
};
struct StrIter final : IterState {
  std::vector<char32_t> cps;
  size_t i = 0;
  V next(Interp &, SourceRange) override {
    if (i >= cps.size())
      return nullptr;
    return string(toUtf8(cps[i++]));
  }
};
// A dict's keys (or values, items), in insertion order; a change of size while
// iterating is CPython's RuntimeError.
struct DictIter final : IterState {
  V dict;
  enum class What { Keys, Values, Items } what = What::Keys;
  size_t i = 0;
  uint64_t version = 0;
  size_t size = 0;
  V next(Interp &in, SourceRange r) override {
    const Table &t = cast<DictV>(dict).table;
    if (t.size != size)
      in.raise("RuntimeError", "dictionary changed size during iteration", r);
    while (i < t.entries.size() && !t.entries[i].live)
      ++i;
    if (i >= t.entries.size())
      return nullptr;
    const Table::Entry &e = t.entries[i++];
    switch (what) {
    case What::Keys:
      return e.key;
    case What::Values:
      return e.value;
    case What::Items:
      return tuple({e.key, e.value});
    }
    return nullptr;
  }
};
struct UserIter final : IterState {
  V obj;
  V next(Interp &in, SourceRange r) override {
    try {
      return in.call(in.getAttr(obj, "__next__", r), Args{}, r);
    } catch (PyRaise &e) {
      if (in.isSubclass(cast<InstanceV>(e.exc).cls, in.exceptionClass("StopIteration")))
        return nullptr;
      throw;
    }
  }
};

} // namespace

V Interp::iter(const V &v, SourceRange r) {
  switch (v->kind) {
  case Kind::List:
  case Kind::Tuple: {
    auto s = std::make_unique<SeqIter>();
    s->seq = v;
    return std::make_shared<IteratorV>(v->kind == Kind::List ? "list_iterator" : "tuple_iterator",
                                       std::move(s));
  }
  case Kind::Range: {
    const auto &rg = cast<RangeV>(v);
    auto s = std::make_unique<RangeIter>();
    s->cur = rg.start, s->step = rg.step, s->left = rg.length();
    return std::make_shared<IteratorV>("range_iterator", std::move(s));
  }
  case Kind::Str: {
    auto s = std::make_unique<StrIter>();
    s->cps = codePoints(cast<StrV>(v).s);
    return std::make_shared<IteratorV>("str_ascii_iterator", std::move(s));
  }
  case Kind::Dict: {
    auto s = std::make_unique<DictIter>();
    s->dict = v;
    s->size = cast<DictV>(v).table.size;
    return std::make_shared<IteratorV>("dict_keyiterator", std::move(s));
  }
  case Kind::Set: {
    // CPython iterates a set in its hash table's order, which dkv does not reproduce.
    const Table &t = cast<SetV>(v).table;
    if (t.size > 1)
      unsupported(r, "iterating over a set of several elements (the order is CPython's hash "
                     "order, which dkv does not reproduce; use sorted(s) or a list)");
    auto s = std::make_unique<SeqIter>();
    s->seq = tuple(tableKeys(t));
    return std::make_shared<IteratorV>("set_iterator", std::move(s));
  }
  case Kind::Iterator:
    return v;
  case Kind::Instance: {
    const auto &inst = cast<InstanceV>(v);
    if (lookupClassAttr(inst.cls, "__iter__")) {
      V it = call(getAttr(v, "__iter__", r), Args{}, r);
      if (it->kind == Kind::Iterator)
        return it;
      auto s = std::make_unique<UserIter>();
      s->obj = it;
      return std::make_shared<IteratorV>(typeName(*it), std::move(s));
    }
    if (V members = lookupClassAttr(inst.cls, "_member_map_"))
      (void)members;
    break;
  }
  case Kind::Class: {
    // Iterating an Enum class gives its members in definition order.
    V members = lookupClassAttr(std::static_pointer_cast<ClassV>(v), "_member_map_");
    if (auto *d = dynCast<DictV>(members)) {
      std::vector<V> values;
      for (const Table::Entry &e : d->table.entries)
        if (e.live)
          values.push_back(e.value);
      return iter(tuple(std::move(values)), r);
    }
    break;
  }
  case Kind::Module: {
    // JAX's enum classes that dkv keeps as namespaces of their members: iterating one
    // gives the members in definition order, as iterating the Enum class does.
    struct EnumNamespace {
      std::string_view name;
      std::vector<std::string> members;
    };
    static const EnumNamespace kEnums[] = {
        {"jax.experimental.pallas.tpu.CoreType", {"TC", "SC_SCALAR_SUBCORE", "SC_VECTOR_SUBCORE"}},
        {"jax.experimental.pallas.tpu.SemaphoreType", {"REGULAR", "DMA", "BARRIER"}},
        {"jax.experimental.pallas.SemaphoreType", {"REGULAR", "DMA", "BARRIER"}},
        {"jax.experimental.pallas.tpu.DeviceIdType", {"MESH", "LOGICAL"}},
        {"jax.experimental.pallas.DeviceIdType", {"MESH", "LOGICAL"}},
    };
    const std::string &name = cast<ModuleV>(v).name;
    for (const EnumNamespace &e : kEnums)
      if (e.name == name) {
        std::vector<V> values;
        for (const std::string &m : e.members)
          values.push_back(getAttr(v, m, r));
        return iter(tuple(std::move(values)), r);
      }
    break;
  }
  case Kind::Opaque:
    opaqueNeeded(v, r, "iterating over it");
  case Kind::Traced:
    fail(r, "python-traced-branch",
         fmt::format("iteration over a traced array with shape {}: its length depends on the "
                     "device (JAX raises TracerIntegerConversionError here)",
                     cast<TracedV>(v).tk == TKind::Bool ? "bool[]" : "int32[]"));
  case Kind::HostArray: {
    // An array of known values: its rows, as indexing gives them.
    const auto &a = cast<HostArrayV>(v);
    if (a.shape.empty())
      raise("TypeError", "iteration over a 0-d array", r);
    // Its rows, as indexing gives them: of known values, or (an array kept as its
    // shape, `k1, k2 = jax.random.split(key)`) of the row's shape.
    std::vector<V> rows;
    alloc(static_cast<uint64_t>(a.shape[0]), r);
    for (int64_t i = 0; i < a.shape[0]; ++i) {
      V row = indexArray(a, integer(i), r);
      if (!row)
        opaqueNeeded(opaque("the rows of an array (dkv keeps arrays as shapes)", r), r,
                     "iterating over it");
      rows.push_back(row);
    }
    return iter(tuple(std::move(rows)), r);
  }
  case Kind::Api:
    if (auto *p = apiAs<PSpecObj>(v))
      return iter(tuple(p->entries), r);
    if (auto *d = apiAs<DeviceArrayObj>(v)) {
      if (d->shape.empty())
        raise("TypeError", "iteration over a 0-d array", r);
      auto s = std::make_unique<SeqIter>();
      s->seq = tuple(deviceArrayRows(v));
      return std::make_shared<IteratorV>("iterator", std::move(s));
    }
    if (auto *d = apiAs<DictViewObj>(v)) {
      auto s = std::make_unique<DictIter>();
      s->dict = d->dict;
      s->size = cast<DictV>(d->dict).table.size;
      s->what = d->what == DictViewObj::What::Keys     ? DictIter::What::Keys
                : d->what == DictViewObj::What::Values ? DictIter::What::Values
                                                       : DictIter::What::Items;
      return std::make_shared<IteratorV>(d->what == DictViewObj::What::Keys ? "dict_keyiterator"
                                         : d->what == DictViewObj::What::Values
                                             ? "dict_valueiterator"
                                             : "dict_itemiterator",
                                         std::move(s));
    }
    break;
  default:
    break;
  }
  raise("TypeError", fmt::format("'{}' object is not iterable", typeName(*v)), r);
}

V Interp::next(const V &it, SourceRange r) {
  auto &i = cast<IteratorV>(it);
  if (i.done)
    return nullptr;
  V v = i.state->next(*this, r);
  if (!v)
    i.done = true;
  return v;
}

std::vector<V> Interp::elementsOf(const V &v, SourceRange r) {
  // A set's elements where their order does not matter (set operations, set()).
  if (auto *s = dynCast<SetV>(v))
    return tableKeys(s->table);
  return toVector(v, r);
}

std::vector<V> Interp::toVector(const V &v, SourceRange r) {
  if (auto *l = dynCast<ListV>(v))
    return l->items;
  if (auto *t = dynCast<TupleV>(v))
    return t->items;
  std::vector<V> out;
  V it = iter(v, r);
  while (V x = next(it, r)) {
    alloc(1, r);
    out.push_back(std::move(x));
  }
  return out;
}

std::optional<int64_t> Interp::lenOf(const V &v, SourceRange r) {
  switch (v->kind) {
  case Kind::Str:
    return strLength(cast<StrV>(v).s);
  case Kind::List:
    return static_cast<int64_t>(cast<ListV>(v).items.size());
  case Kind::Tuple:
    return static_cast<int64_t>(cast<TupleV>(v).items.size());
  case Kind::Dict:
    return static_cast<int64_t>(cast<DictV>(v).table.size);
  case Kind::Set:
    return static_cast<int64_t>(cast<SetV>(v).table.size);
  case Kind::Range:
    return cast<RangeV>(v).length();
  case Kind::HostArray: {
    const auto &a = cast<HostArrayV>(v);
    if (a.shape.empty())
      raise("TypeError", "len() of unsized object", r);
    return a.shape[0];
  }
  case Kind::Instance:
    if (lookupClassAttr(cast<InstanceV>(v).cls, "__len__"))
      return toIndex(call(getAttr(v, "__len__", r), Args{}, r), r, "__len__");
    break;
  case Kind::Class:
    if (V members = lookupClassAttr(std::static_pointer_cast<ClassV>(v), "_member_map_"))
      if (auto *d = dynCast<DictV>(members))
        return static_cast<int64_t>(d->table.size);
    break;
  case Kind::Api:
    if (auto *p = apiAs<PSpecObj>(v))
      return static_cast<int64_t>(p->entries.size());
    if (auto *d = apiAs<DeviceArrayObj>(v)) {
      if (d->shape.empty())
        raise("TypeError", "len() of unsized object", r);
      return d->shape[0];
    }
    if (auto *d = apiAs<DictViewObj>(v))
      return static_cast<int64_t>(cast<DictV>(d->dict).table.size);
    break;
  case Kind::Iterator:
    if (V arr = flatIterArray(v)) { // len(devs.flat): every device
      int64_t n = 1;
      for (int64_t x : apiAs<DeviceArrayObj>(arr)->shape)
        n *= x;
      return n;
    }
    break;
  case Kind::Traced:
    tracedIndex(cast<TracedV>(v), r, "len() of it");
  case Kind::Opaque:
    return std::nullopt;
  default:
    break;
  }
  raise("TypeError", fmt::format("object of type '{}' has no len()", typeName(*v)), r);
}

//===----------------------------------------------------------------------===//
// repr and str
//===----------------------------------------------------------------------===//

std::optional<std::string> Interp::repr(const V &v, SourceRange r) {
  static thread_local std::set<const Value *> active; // `[...]` for a list inside itself
  auto join = [&](const std::vector<V> &items, std::string open, std::string close,
                  bool oneTuple) -> std::optional<std::string> {
    if (active.count(v.get()))
      return open + "..." + close;
    active.insert(v.get());
    std::string out = open;
    for (size_t i = 0; i < items.size(); ++i) {
      auto t = repr(items[i], r);
      if (!t) {
        active.erase(v.get());
        return std::nullopt;
      }
      out += (i ? ", " : "") + *t;
      alloc(t->size(), r);
    }
    active.erase(v.get());
    if (oneTuple && items.size() == 1)
      out += ",";
    return out + close;
  };
  // NumPy's repr of its scalars (`np.int32(6)`) and JAX's of arrays are theirs.
  if (scalarOfType(v))
    return std::nullopt;
  switch (v->kind) {
  case Kind::None:
    return "None";
  case Kind::Bool:
    return cast<BoolV>(v).b ? "True" : "False";
  case Kind::Int:
    return std::to_string(cast<IntV>(v).i);
  case Kind::Float:
    return floatRepr(cast<FloatV>(v).f);
  case Kind::Str:
    return strRepr(cast<StrV>(v).s);
  case Kind::Ellipsis:
    return "Ellipsis";
  case Kind::Tuple: {
    const auto &t = cast<TupleV>(v);
    if (!t.cls)
      return join(t.items, "(", ")", true);
    // A NamedTuple's repr: `C(a=1, b=2)`.
    std::string out = t.cls->name + "(";
    for (size_t i = 0; i < t.items.size(); ++i) {
      auto x = repr(t.items[i], r);
      if (!x)
        return std::nullopt;
      out += (i ? ", " : "") + (*t.cls->namedTupleFields)[i] + "=" + *x;
    }
    return out + ")";
  }
  case Kind::List:
    return join(cast<ListV>(v).items, "[", "]", false);
  case Kind::Dict: {
    if (active.count(v.get()))
      return "{...}";
    active.insert(v.get());
    std::string out = "{";
    bool first = true;
    for (const Table::Entry &e : cast<DictV>(v).table.entries) {
      if (!e.live)
        continue;
      auto k = repr(e.key, r), x = repr(e.value, r);
      if (!k || !x) {
        active.erase(v.get());
        return std::nullopt;
      }
      out += (first ? "" : ", ") + *k + ": " + *x;
      first = false;
    }
    active.erase(v.get());
    return out + "}";
  }
  case Kind::Set: {
    const auto &s = cast<SetV>(v);
    if (s.table.size == 0)
      return s.frozen ? "frozenset()" : "set()";
    if (s.table.size > 1)
      return std::nullopt; // CPython's hash order
    auto t = join(tableKeys(s.table), "{", "}", false);
    if (!t)
      return t;
    return s.frozen ? "frozenset(" + *t + ")" : *t;
  }
  case Kind::Range: {
    const auto &rg = cast<RangeV>(v);
    return rg.step == 1 ? fmt::format("range({}, {})", rg.start, rg.stop)
                        : fmt::format("range({}, {}, {})", rg.start, rg.stop, rg.step);
  }
  case Kind::Slice: {
    const auto &s = cast<SliceV>(v);
    auto a = repr(s.lower, r), b = repr(s.upper, r), c = repr(s.step, r);
    if (!a || !b || !c)
      return std::nullopt;
    return fmt::format("slice({}, {}, {})", *a, *b, *c);
  }
  case Kind::Class: {
    const auto &c = cast<ClassV>(v);
    return fmt::format("<class '{}{}'>", c.module == "builtins" ? "" : c.module + ".", c.name);
  }
  case Kind::Module:
    return std::nullopt;
  case Kind::Instance: {
    const auto &inst = cast<InstanceV>(v);
    if (V rf = lookupClassAttr(inst.cls, "__repr__"); rf && rf->kind == Kind::Function) {
      V res = call(getAttr(v, "__repr__", r), Args{}, r);
      if (auto *s = dynCast<StrV>(res))
        return s->s;
      return std::nullopt;
    }
    if (isSubclass(inst.cls, builtinClass(ClassRole::BaseException))) {
      V args = inst.attrs->get("args");
      auto t = args ? repr(args, r) : std::optional<std::string>("()");
      if (!t)
        return t;
      std::string a = *t;
      if (auto *tp = dynCast<TupleV>(args); tp && tp->items.size() == 1)
        a = a.substr(0, a.size() - 2) + ")";
      return inst.cls->name + a;
    }
    if (inst.cls->dataclassFields) {
      std::string out = inst.cls->name + "(";
      bool first = true;
      for (const std::string &n : *inst.cls->dataclassFields) {
        V x = inst.attrs->get(n);
        auto t = x ? repr(x, r) : std::nullopt;
        if (!t)
          return std::nullopt;
        out += (first ? "" : ", ") + n + "=" + *t;
        first = false;
      }
      return out + ")";
    }
    if (V name = inst.attrs->get("_name_"); name && lookupClassAttr(inst.cls, "_member_map_")) {
      V value = inst.attrs->get("_value_");
      auto t = value ? repr(value, r) : std::nullopt;
      if (!t)
        return std::nullopt;
      return fmt::format("<{}.{}: {}>", inst.cls->name, cast<StrV>(name).s, *t);
    }
    return std::nullopt;
  }
  case Kind::Api:
    if (auto *d = apiAs<DTypeObj>(v)) {
      // NumPy's and JAX's scalar types are classes (JAX's __module__ is jax.numpy); the
      // name of NumPy's bool type depends on NumPy's version (bool_, bool since 2.0).
      if (d->form != DTypeForm::Dtype && d->name.rfind("bool", 0) == 0)
        return std::nullopt;
      switch (d->form) {
      case DTypeForm::NumpyType:
        return fmt::format("<class 'numpy.{}'>", d->name);
      case DTypeForm::JnpType:
        return fmt::format("<class 'jax.numpy.{}'>", d->name);
      case DTypeForm::Dtype:
        return fmt::format("dtype('{}')", d->name);
      case DTypeForm::Unknown:
        return std::nullopt;
      }
      return std::nullopt;
    }
    if (auto *t = apiAs<AxisTypeObj>(v))
      return axisKindName(t->kind); // AxisType.__repr__ returns the member's name
    if (auto *t = apiAs<CoreTypeObj>(v))
      return t->name; // CoreType.__repr__ returns the member's name
    if (auto *k = apiAs<DTypeKindObj>(v))
      return fmt::format("<class 'numpy.{}'>", k->name);
    if (auto *p = apiAs<PSpecObj>(v)) {
      auto t = join(p->entries, "PartitionSpec(", ")", false);
      return t;
    }
    return std::nullopt;
  default:
    return std::nullopt;
  }
}

std::optional<std::string> Interp::str(const V &v, SourceRange r) {
  // str() of an integer NumPy scalar or JAX array is its digits; a float's is printed at
  // its type's precision (np.float32(1/3) is 0.33333334), not kept here.
  if (auto *i = dynCast<IntV>(v); i && i->scalar.any())
    return std::to_string(i->i);
  if (scalarOfType(v))
    return std::nullopt;
  switch (v->kind) {
  case Kind::Str:
    return cast<StrV>(v).s;
  case Kind::Instance: {
    const auto &inst = cast<InstanceV>(v);
    if (V sf = lookupClassAttr(inst.cls, "__str__"); sf && sf->kind == Kind::Function) {
      V res = call(getAttr(v, "__str__", r), Args{}, r);
      if (auto *s = dynCast<StrV>(res))
        return s->s;
      return std::nullopt;
    }
    if (isSubclass(inst.cls, builtinClass(ClassRole::BaseException))) {
      V args = inst.attrs->get("args");
      auto *t = dynCast<TupleV>(args);
      if (!t || t->items.empty())
        return "";
      if (t->items.size() == 1)
        return str(t->items[0], r);
      return repr(args, r);
    }
    if (V name = inst.attrs->get("_name_"); name && lookupClassAttr(inst.cls, "_member_map_"))
      return fmt::format("{}.{}", inst.cls->name, cast<StrV>(name).s);
    return repr(v, r);
  }
  case Kind::Api:
    if (auto *d = apiAs<DTypeObj>(v))
      return d->name;
    if (auto *t = apiAs<AxisTypeObj>(v))
      return fmt::format("AxisType.{}", axisKindName(t->kind)); // enum.Enum.__str__
    if (auto *t = apiAs<CoreTypeObj>(v)) { // CoreType.__str__ returns the member's value
      std::string value = t->name;
      std::transform(value.begin(), value.end(), value.begin(),
                     [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
      return value;
    }
    return repr(v, r);
  default:
    return repr(v, r);
  }
}

} // namespace dkv::pytrace
