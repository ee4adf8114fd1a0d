// Python's builtins and the methods of its built-in types (list, dict, set, str, tuple,
// int, float), as CPython defines them. A real method dkv does not model is
// `python-unsupported` naming it, never an AttributeError Python would not raise.
#include "pytrace/Interp.h"
#include "pytrace/Text.h"
#include "support/IntArith.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <map>

namespace dkv::pytrace {

namespace {

using H = V (*)(Interp &, CallCtx &);

bool isIntLike(const V &v) { return v->kind == Kind::Int || v->kind == Kind::Bool; }
int64_t intOf(const V &v) {
  return v->kind == Kind::Int ? cast<IntV>(v).i : static_cast<int64_t>(cast<BoolV>(v).b);
}

void argCount(Interp &in, const CallCtx &c, size_t lo, size_t hi) {
  if (!c.args.kw.empty())
    in.raise("TypeError", fmt::format("{}() takes no keyword arguments", c.fn->name), c.range);
  size_t n = c.args.pos.size();
  if (n < lo || n > hi) {
    std::string name = c.fn->name.substr(c.fn->name.rfind('.') + 1);
    if (lo == hi)
      in.raise("TypeError",
               fmt::format("{}() takes exactly {} argument{} ({} given)", name, lo,
                           lo == 1 ? "" : "s", n),
               c.range);
    in.raise("TypeError",
             fmt::format("{} expected {} {} argument{}, got {}", name,
                         n < lo ? "at least" : "at most", n < lo ? lo : hi,
                         (n < lo ? lo : hi) == 1 ? "" : "s", n),
             c.range);
  }
}

//===----------------------------------------------------------------------===//
// Lazy iterators of the builtins
//===----------------------------------------------------------------------===//

struct EnumerateIter final : IterState {
  V it;
  int64_t i = 0;
  V next(Interp &in, SourceRange r) override {
    V x = in.next(it, r);
    if (!x)
      return nullptr;
    return tuple({integer(i++), x});
  }
};
struct ZipIter final : IterState {
  std::vector<V> its;
  bool strict = false;
  V next(Interp &in, SourceRange r) override {
    if (its.empty())
      return nullptr;
    std::vector<V> items;
    for (size_t k = 0; k < its.size(); ++k) {
      V x = in.next(its[k], r);
      if (!x) {
        if (strict && k > 0)
          in.raise("ValueError", fmt::format("zip() argument {} is shorter than argument 1", k + 1),
                   r);
        if (strict && k == 0)
          for (size_t j = 1; j < its.size(); ++j)
            if (in.next(its[j], r))
              in.raise("ValueError",
                       fmt::format("zip() argument {} is longer than argument 1", j + 1), r);
        return nullptr;
      }
      items.push_back(std::move(x));
    }
    return tuple(std::move(items));
  }
};
struct MapIter final : IterState {
  V fn;
  std::vector<V> its;
  V next(Interp &in, SourceRange r) override {
    Args args;
    for (const V &it : its) {
      V x = in.next(it, r);
      if (!x)
        return nullptr;
      args.pos.push_back(std::move(x));
    }
    return in.call(fn, std::move(args), r);
  }
};
struct FilterIter final : IterState {
  V fn, it;
  V next(Interp &in, SourceRange r) override {
    while (V x = in.next(it, r)) {
      V keep = fn->kind == Kind::None ? x : in.call(fn, Args{{x}, {}}, r);
      if (in.truth(keep, r, "filter()"))
        return x;
    }
    return nullptr;
  }
};
// reversed(list) reads the live list from its end, as CPython's listreverseiterator.
struct ReversedIter final : IterState {
  V seq;
  int64_t i;
  V next(Interp &in, SourceRange r) override {
    if (i < 0)
      return nullptr;
    if (auto *l = dynCast<ListV>(seq)) {
      if (i >= static_cast<int64_t>(l->items.size())) {
        i = -1;
        return nullptr;
      }
      return l->items[static_cast<size_t>(i--)];
    }
    return in.getItem(seq, integer(i--), r);
  }
};
struct ValuesIter final : IterState {
  std::vector<V> items;
  size_t i = 0;
  V next(Interp &, SourceRange) override { return i < items.size() ? items[i++] : nullptr; }
};

V makeIter(std::string name, std::unique_ptr<IterState> s) {
  return std::make_shared<IteratorV>(std::move(name), std::move(s));
}

//===----------------------------------------------------------------------===//
// Number parsing
//===----------------------------------------------------------------------===//

std::optional<int64_t> parseInt(const std::string &text, int base) {
  std::string s;
  size_t b = text.find_first_not_of(" \t\n\r\f\v"), e = text.find_last_not_of(" \t\n\r\f\v");
  if (b == std::string::npos)
    return std::nullopt;
  s = text.substr(b, e - b + 1);
  bool neg = false;
  size_t i = 0;
  if (s[i] == '+' || s[i] == '-')
    neg = s[i++] == '-';
  if (base == 0 || base == 16 || base == 8 || base == 2) {
    if (i + 1 < s.size() && s[i] == '0') {
      char p = static_cast<char>(std::tolower(s[i + 1]));
      int pb = p == 'x' ? 16 : p == 'o' ? 8 : p == 'b' ? 2 : 0;
      if (pb && (base == 0 || base == pb)) {
        base = pb;
        i += 2;
        if (i < s.size() && s[i] == '_')
          ++i;
      }
    }
    if (base == 0) {
      base = 10;
      if (s.size() - i > 1 && s[i] == '0' && s.find_first_not_of("0_", i) != std::string::npos)
        return std::nullopt; // leading zeros
    }
  }
  if (i >= s.size())
    return std::nullopt;
  __int128 v = 0;
  bool lastUnderscore = true;
  for (; i < s.size(); ++i) {
    char c = s[i];
    if (c == '_') {
      if (lastUnderscore)
        return std::nullopt;
      lastUnderscore = true;
      continue;
    }
    int d = std::isdigit(static_cast<unsigned char>(c)) ? c - '0'
            : std::isalpha(static_cast<unsigned char>(c))
                ? std::tolower(static_cast<unsigned char>(c)) - 'a' + 10
                : 99;
    if (d >= base)
      return std::nullopt;
    v = v * base + d;
    if (v > (static_cast<__int128>(1) << 64))
      return std::nullopt;
    lastUnderscore = false;
  }
  if (lastUnderscore)
    return std::nullopt;
  if (neg)
    v = -v;
  if (v > INT64_MAX || v < INT64_MIN)
    return std::nullopt;
  return static_cast<int64_t>(v);
}

std::optional<double> parseFloat(const std::string &text) {
  size_t b = text.find_first_not_of(" \t\n\r\f\v"), e = text.find_last_not_of(" \t\n\r\f\v");
  if (b == std::string::npos)
    return std::nullopt;
  std::string s = text.substr(b, e - b + 1), clean;
  std::string low;
  for (char c : s)
    low += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::string body = low[0] == '+' || low[0] == '-' ? low.substr(1) : low;
  double sign = low[0] == '-' ? -1 : 1;
  if (body == "inf" || body == "infinity")
    return sign * INFINITY;
  if (body == "nan")
    return sign * NAN;
  bool prevDigit = false;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '_') {
      if (!prevDigit || i + 1 >= s.size() || !std::isdigit(static_cast<unsigned char>(s[i + 1])))
        return std::nullopt;
      continue;
    }
    if (!(std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == 'e' || c == 'E' ||
          c == '+' || c == '-'))
      return std::nullopt;
    prevDigit = std::isdigit(static_cast<unsigned char>(c));
    clean += c;
  }
  char *end = nullptr;
  errno = 0;
  double v = std::strtod(clean.c_str(), &end);
  if (end != clean.c_str() + clean.size() || clean.empty())
    return std::nullopt;
  return v;
}

//===----------------------------------------------------------------------===//
// Sorting
//===----------------------------------------------------------------------===//

void sortValues(Interp &in, std::vector<V> &items, const V &key, bool reverse, SourceRange r) {
  std::vector<V> keys;
  for (const V &x : items)
    keys.push_back(key && key->kind != Kind::None ? in.call(key, Args{{x}, {}}, r) : x);
  std::vector<size_t> order(items.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  // CPython's sort is stable; with reverse=True it keeps equal elements in their order.
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return reverse ? in.less(keys[b], keys[a], r) : in.less(keys[a], keys[b], r);
  });
  std::vector<V> out;
  for (size_t i : order)
    out.push_back(items[i]);
  items = std::move(out);
}

V minMax(Interp &in, CallCtx &c, bool isMax) {
  V key, dflt;
  bool hasDefault = false;
  for (const auto &[k, v] : c.args.kw) {
    if (k == "key")
      key = v;
    else if (k == "default")
      dflt = v, hasDefault = true;
    else
      in.raise(
          "TypeError",
          fmt::format("{}() got an unexpected keyword argument '{}'", isMax ? "max" : "min", k),
          c.range);
  }
  if (c.args.pos.empty())
    in.raise("TypeError",
             fmt::format("{} expected at least 1 argument, got 0", isMax ? "max" : "min"), c.range);
  std::vector<V> items = c.args.pos.size() == 1 ? in.toVector(c.args.pos[0], c.range) : c.args.pos;
  if (items.empty()) {
    if (hasDefault)
      return dflt;
    in.raise("ValueError", fmt::format("{}() arg is an empty sequence", isMax ? "max" : "min"),
             c.range);
  }
  V best = items[0];
  V bestKey = key && key->kind != Kind::None ? in.call(key, Args{{best}, {}}, c.range) : best;
  for (size_t i = 1; i < items.size(); ++i) {
    V k = key && key->kind != Kind::None ? in.call(key, Args{{items[i]}, {}}, c.range) : items[i];
    if (k->kind == Kind::Opaque || bestKey->kind == Kind::Opaque)
      in.opaqueNeeded(k->kind == Kind::Opaque ? k : bestKey, c.range,
                      isMax ? "max() of it" : "min() of it");
    if (isMax ? in.less(bestKey, k, c.range) : in.less(k, bestKey, c.range)) {
      best = items[i];
      bestKey = k;
    }
  }
  return best;
}

// site's exit() / quit(): sys.exit's SystemExit.
V siteExit(Interp &in, CallCtx &c) {
  const ApiRow *exit = Registry::get().find("sys.exit");
  return in.callBuiltin(exit->fn, nullptr, c.args, c.range);
}

// hex(), oct(), bin(): the integer's digits in that base after the prefix, the sign first.
V radixString(Interp &in, CallCtx &c, const char *name, unsigned base, const char *prefix) {
  argCount(in, c, 1, 1);
  int64_t i = in.toIndex(c.args.pos[0], c.range, fmt::format("{}()", name));
  uint64_t u = i < 0 ? ~static_cast<uint64_t>(i) + 1 : static_cast<uint64_t>(i);
  std::string digits;
  do {
    digits.insert(digits.begin(), "0123456789abcdef"[u % base]);
    u /= base;
  } while (u);
  return string(fmt::format("{}{}{}", i < 0 ? "-" : "", prefix, digits));
}

//===----------------------------------------------------------------------===//
// The builtins
//===----------------------------------------------------------------------===//

V opaqueOf(Interp &in, CallCtx &c, std::string what) { return in.opaque(std::move(what), c.range); }

const std::vector<BuiltinFn> &builtinFunctions() {
  static const std::vector<BuiltinFn> fns = {
      {"len",
       +[](Interp &in, CallCtx &c) -> V {
         argCount(in, c, 1, 1);
         auto n = in.lenOf(c.args.pos[0], c.range);
         if (!n)
           return in.opaque("len() of it", c.range, c.args.pos[0]);
         return integer(*n);
       }},
      {"abs",
       +[](Interp &in, CallCtx &c) -> V {
         argCount(in, c, 1, 1);
         const V &v = c.args.pos[0];
         // abs() of a number of a scalar type is its type's (np.int32's wraps around).
         if (scalarOfType(v))
           return in.scalarAbs(v, c.range);
         if (isIntLike(v)) {
           int64_t x = intOf(v);
           if (x == INT64_MIN)
             fail(c.range, "python-overflow", "an integer result beyond 64 bits (abs)");
           return integer(x < 0 ? -x : x);
         }
         if (auto *f = dynCast<FloatV>(v))
           return floating(std::fabs(f->f));
         if (v->kind == Kind::Opaque || v->kind == Kind::HostArray)
           return in.opaque("abs() of it", c.range, v);
         if (v->kind == Kind::Instance)
           return in.call(in.getAttr(v, "__abs__", c.range), Args{}, c.range);
         in.raise("TypeError", fmt::format("bad operand type for abs(): '{}'", typeName(*v)),
                  c.range);
       }},
      {"all",
       +[](Interp &in, CallCtx &c) -> V {
         argCount(in, c, 1, 1);
         V it = in.iter(c.args.pos[0], c.range);
         while (V x = in.next(it, c.range))
           if (!in.truth(x, c.range, "all() on it"))
             return boolean(false);
         return boolean(true);
       }},
      {"any",
       +[](Interp &in, CallCtx &c) -> V {
         argCount(in, c, 1, 1);
         V it = in.iter(c.args.pos[0], c.range);
         while (V x = in.next(it, c.range))
           if (in.truth(x, c.range, "any() on it"))
             return boolean(true);
         return boolean(false);
       }},
      {"callable",
       +[](Interp &in, CallCtx &c) -> V {
         argCount(in, c, 1, 1);
         const V &v = c.args.pos[0];
         switch (v->kind) {
         case Kind::Function:
         case Kind::BoundMethod:
         case Kind::Builtin:
         case Kind::Partial:
         case Kind::Class:
           return boolean(true);
         case Kind::Instance:
           return boolean(in.lookupClassAttr(cast<InstanceV>(v).cls, "__call__") != nullptr);
         case Kind::Opaque:
           return in.opaque("callable() of it", c.range, v);
         case Kind::Api:
           return boolean(apiAs<PallasCallObj>(v) || apiAs<ShardMapObj>(v) || apiAs<JitObj>(v) ||
                          apiAs<PlKernelObj>(v) || apiAs<DTypeObj>(v));
         default:
           return boolean(false);
         }
       }},
      // site's exit() and quit(): SystemExit, as sys.exit() raises it.
      {"exit", siteExit},
      {"quit", siteExit},
      // Built-ins for the interactive prompt and asynchronous iteration: no value dkv models.
      {"help", +[](Interp &in, CallCtx &c) -> V { return in.opaque("help()", c.range); }},
      {"aiter",
       +[](Interp &, CallCtx &c) -> V {
         unsupported(c.range, "aiter() (asynchronous iteration)");
       }},
      {"anext",
       +[](Interp &, CallCtx &c) -> V {
         unsupported(c.range, "anext() (asynchronous iteration)");
       }},
      {"hex", +[](Interp &in, CallCtx &c) -> V { return radixString(in, c, "hex", 16, "0x"); }},
      {"oct", +[](Interp &in, CallCtx &c) -> V { return radixString(in, c, "oct", 8, "0o"); }},
      {"bin", +[](Interp &in, CallCtx &c) -> V { return radixString(in, c, "bin", 2, "0b"); }},
      {"ascii",
       +[](Interp &in, CallCtx &c) -> V {
         // repr() with every non-ASCII code point escaped as \xNN, \uNNNN or \UNNNNNNNN.
         argCount(in, c, 1, 1);
         std::optional<std::string> text = in.repr(c.args.pos[0], c.range);
         if (!text)
           return in.opaque("ascii() of it", c.range, c.args.pos[0]);
         std::string out;
         for (char32_t cp : codePoints(*text)) {
           if (cp < 0x80)
             out += static_cast<char>(cp);
           else if (cp <= 0xff)
             out += fmt::format("\\x{:02x}", static_cast<uint32_t>(cp));
           else if (cp <= 0xffff)
             out += fmt::format("\\u{:04x}", static_cast<uint32_t>(cp));
           else
             out += fmt::format("\\U{:08x}", static_cast<uint32_t>(cp));
         }
         return string(std::move(out));
       }},
      {"chr",
       +[](Interp &in, CallCtx &c) -> V {
         argCount(in, c, 1, 1);
         int64_t i = in.toIndex(c.args.pos[0], c.range, "chr()");
         if (i < 0 || i > 0x10ffff)
           in.raise("ValueError", "chr() arg not in range(0x110000)", c.range);
         return string(toUtf8(static_cast<char32_t>(i)));
       }},
      {"ord",
       +[](Interp &in, CallCtx &c) -> V {
         argCount(in, c, 1, 1);
         auto *s = dynCast<StrV>(c.args.pos[0]);
         if (!s)
           in.raise("TypeError",
                    fmt::format("ord() expected string of length 1, but {} found",
                                typeName(*c.args.pos[0])),
                    c.range);
         auto cps = codePoints(s->s);
         if (cps.size() != 1)
           in.raise(
               "TypeError",
               fmt::format("ord() expected a character, but string of length {} found", cps.size()),
               c.range);
         return integer(cps[0]);
       }},
      {"divmod",
       +[](Interp &in, CallCtx &c) -> V {
         argCount(in, c, 2, 2);
         V q = in.binop(py::BinOpKind::FloorDiv, c.args.pos[0], c.args.pos[1], c.range);
         V m = in.binop(py::BinOpKind::Mod, c.args.pos[0], c.args.pos[1], c.range);
         return tuple({q, m});
       }},
      {"pow",
       +[](Interp &in, CallCtx &c) -> V {
         std::vector<V> a = c.bind(in, {"base", "exp", "mod"});
         if (!a[0] || !a[1])
           in.raise("TypeError", "pow() missing required argument", c.range);
         if (!a[2] || a[2]->kind == Kind::None)
           return in.binop(py::BinOpKind::Pow, a[0], a[1], c.range);
         if (!isIntLike(a[0]) || !isIntLike(a[1]) || !isIntLike(a[2]))
           in.raise("TypeError", "pow() 3rd argument not allowed unless all arguments are integers",
                    c.range);
         int64_t b = intOf(a[0]), e = intOf(a[1]), m = intOf(a[2]);
         if (m == 0)
           in.raise("ValueError", "pow() 3rd argument cannot be 0", c.range);
         if (e < 0)
           unsupported(c.range, "pow() with a negative exponent and a modulus");
         __int128 res = 1 % static_cast<__int128>(m), base = support::floorMod(b, m).value;
         for (int64_t k = e; k > 0; k >>= 1) {
           if (k & 1)
             res = res * base % m;
           base = base * base % m;
         }
         return integer(support::floorMod(static_cast<int64_t>(res), m).value);
       }},
      {"round",
       +[](Interp &in, CallCtx &c) -> V {
         std::vector<V> a = c.bind(in, {"number", "ndigits"});
         if (!a[0])
           in.raise("TypeError", "round() missing required argument 'number' (pos 1)", c.range);
         bool digits = a[1] && a[1]->kind != Kind::None;
         if (a[0]->kind == Kind::Opaque || a[0]->kind == Kind::HostArray)
           return in.opaque("round() of it", c.range, a[0]);
         // NumPy's and JAX's rounding of their scalars is their own (not modelled).
         if (scalarOfType(a[0]))
           return in.opaque("round() of a number of a scalar type", c.range);
         if (isIntLike(a[0])) {
           if (!digits || in.toIndex(a[1], c.range, "ndigits") >= 0)
             return integer(intOf(a[0]));
           unsupported(c.range, "round() of an int to negative digits");
         }
         auto *f = dynCast<FloatV>(a[0]);
         if (!f)
           in.raise("TypeError",
                    fmt::format("type {} doesn't define __round__ method", typeName(*a[0])),
                    c.range);
         if (!digits) {
           if (std::isinf(f->f))
             in.raise("OverflowError", "cannot convert float infinity to integer", c.range);
           if (std::isnan(f->f))
             in.raise("ValueError", "cannot convert float NaN to integer", c.range);
           double v = std::nearbyint(f->f); // round half to even
           if (std::fabs(v) >= 9.2e18)
             fail(c.range, "python-overflow", "an integer result beyond 64 bits (round)");
           return integer(static_cast<int64_t>(v));
         }
         int64_t n = in.toIndex(a[1], c.range, "ndigits");
         if (!std::isfinite(f->f) || n > 300)
           return a[0];
         if (n < 0)
           unsupported(c.range, "round() of a float to negative digits");
         // CPython rounds through the correctly rounded decimal string.
         std::string text = fmt::format("{:.{}f}", f->f, n);
         return floating(std::strtod(text.c_str(), nullptr));
       }},
      {"getattr",
       +[](Interp &in, CallCtx &c) -> V {
         argCount(in, c, 2, 3);
         auto *name = dynCast<StrV>(c.args.pos[1]);
         if (!name) {
           if (c.args.pos[1]->kind == Kind::Opaque)
             in.opaqueNeeded(c.args.pos[1], c.range, "getattr() with it as the name");
           in.raise("TypeError", "attribute name must be string", c.range);
         }
         if (c.args.pos.size() == 2)
           return in.getAttr(c.args.pos[0], name->s, c.range);
         try {
           return in.getAttr(c.args.pos[0], name->s, c.range);
         } catch (PyRaise &e) {
           if (!in.isSubclass(cast<InstanceV>(e.exc).cls, in.exceptionClass("AttributeError")))
             throw;
           return c.args.pos[2];
         }
       }},
      {"hasattr",
       +[](Interp &in, CallCtx &c) -> V {
         argCount(in, c, 2, 2);
         auto *name = dynCast<StrV>(c.args.pos[1]);
         if (!name)
           in.raise("TypeError", "attribute name must be string", c.range);
         if (c.args.pos[0]->kind == Kind::Opaque)
           return in.opaque("hasattr() of it", c.range, c.args.pos[0]);
         try {
           in.getAttr(c.args.pos[0], name->s, c.range);
           return boolean(true);
         } catch (PyRaise &e) {
           if (!in.isSubclass(cast<InstanceV>(e.exc).cls, in.exceptionClass("AttributeError")))
             throw;
           return boolean(false);
         }
       }},
      {"setattr",
       +[](Interp &in, CallCtx &c) -> V {
         argCount(in, c, 3, 3);
         auto *name = dynCast<StrV>(c.args.pos[1]);
         if (!name)
           in.raise("TypeError", "attribute name must be string", c.range);
         in.setAttr(c.args.pos[0], name->s, c.args.pos[2], c.range);
         return none();
       }},
      {"delattr",
       +[](Interp &in, CallCtx &c) -> V {
         argCount(in, c, 2, 2);
         auto *name = dynCast<StrV>(c.args.pos[1]);
         if (!name)
           in.raise("TypeError", "attribute name must be string", c.range);
         in.delAttr(c.args.pos[0], name->s, c.range);
         return none();
       }},
      {"hash",
       +[](Interp &in, CallCtx &c) -> V {
         argCount(in, c, 1, 1);
         in.hashOf(c.args.pos[0], c.range); // a TypeError for an unhashable value
         return opaqueOf(in, c, "hash() (CPython's hash values are not reproduced)");
       }},
      {"id",
       +[](Interp &in, CallCtx &c) -> V {
         argCount(in, c, 1, 1);
         return opaqueOf(in, c, "id() (an address)");
       }},
      {"isinstance",
       +[](Interp &in, CallCtx &c) -> V {
         argCount(in, c, 2, 2);
         return boolean(in.isInstance(c.args.pos[0], c.args.pos[1], c.range));
       }},
      {"issubclass",
       +[](Interp &in, CallCtx &c) -> V {
         argCount(in, c, 2, 2);
         const V &arg = c.args.pos[0];
         if (arg->kind == Kind::Opaque)
           in.opaqueNeeded(arg, c.range, "issubclass() of it");
         // The API's classes that dkv models as other objects (np.int32, np.integer,
         // jax.sharding.PartitionSpec, pltpu.SemaphoreType, ...): unknown.
         auto apiClass = [](const V &x) {
           auto *b = dynCast<BuiltinV>(x);
           auto *m = dynCast<ModuleV>(x);
           return x->kind == Kind::Api || (b && !b->self) || (m && m->modelled);
         };
         auto *a = dynCast<ClassV>(arg);
         if (!a && apiClass(arg))
           unsupported(c.range, fmt::format("issubclass() of a {} object of the API (a class in "
                                            "Python that dkv does not model as one, or no class)",
                                            typeName(*arg)));
         if (!a)
           in.raise("TypeError", "issubclass() arg 1 must be a class", c.range);
         ClassP cls = std::static_pointer_cast<ClassV>(arg);
         bool opaqueBase = false;
         for (const ClassP &k : a->mro)
           opaqueBase = opaqueBase || k->opaqueBase;
         V second = c.args.pos[1];
         if (auto *u = dynCast<InstanceV>(second); u && u->cls == in.unionClass_)
           second = u->attrs->get("__args__"); // `int | str`: each of its classes
         std::vector<V> bases =
             second->kind == Kind::Tuple ? cast<TupleV>(second).items : std::vector<V>{second};
         for (const V &b : bases) {
           // A class dkv does not model: a subclass of it only through an opaque base.
           if (b->kind == Kind::Opaque) {
             if (opaqueBase)
               in.opaqueNeeded(b, c.range, fmt::format("issubclass() of {} with it", a->name));
             continue;
           }
           if (auto *d = apiAs<DTypeObj>(b); d && d->form == DTypeForm::Dtype)
             in.raise("TypeError",
                      "issubclass() arg 2 must be a class, a tuple of classes, or a union",
                      c.range);
           if (apiClass(b)) {
             // No class of the file's nor a built-in one subclasses JAX's or NumPy's.
             if (opaqueBase)
               unsupported(c.range, fmt::format("issubclass() of {}, a class with a base dkv "
                                                "does not model, with a class of the API",
                                                a->name));
             continue;
           }
           if (!dynCast<ClassV>(b))
             in.raise("TypeError",
                      "issubclass() arg 2 must be a class, a tuple of classes, or a union",
                      c.range);
           if (in.isSubclass(cls, std::static_pointer_cast<ClassV>(b)))
             return boolean(true);
         }
         return boolean(false);
       }},
      {"iter",
       +[](Interp &in, CallCtx &c) -> V {
         argCount(in, c, 1, 1);
         return in.iter(c.args.pos[0], c.range);
       }},
      {"next",
       +[](Interp &in, CallCtx &c) -> V {
         argCount(in, c, 1, 2);
         if (c.args.pos[0]->kind == Kind::Opaque)
           in.opaqueNeeded(c.args.pos[0], c.range, "next() of it");
         if (c.args.pos[0]->kind != Kind::Iterator) {
           if (c.args.pos[0]->kind == Kind::Instance)
             return in.call(in.getAttr(c.args.pos[0], "__next__", c.range), Args{}, c.range);
           in.raise("TypeError",
                    fmt::format("'{}' object is not an iterator", typeName(*c.args.pos[0])),
                    c.range);
         }
         V x = in.next(c.args.pos[0], c.range);
         if (x)
           return x;
         if (c.args.pos.size() == 2)
           return c.args.pos[1];
         in.raise("StopIteration", "", c.range);
       }},
      {"enumerate",
       +[](Interp &in, CallCtx &c) -> V {
         std::vector<V> a = c.bind(in, {"iterable", "start"});
         if (!a[0])
           in.raise("TypeError", "enumerate() missing required argument 'iterable' (pos 1)",
                    c.range);
         auto s = std::make_unique<EnumerateIter>();
         s->it = in.iter(a[0], c.range);
         s->i = a[1] ? in.toIndex(a[1], c.range, "enumerate()'s start") : 0;
         return makeIter("enumerate", std::move(s));
       }},
      {"zip",
       +[](Interp &in, CallCtx &c) -> V {
         auto s = std::make_unique<ZipIter>();
         for (const auto &[k, v] : c.args.kw) {
           if (k != "strict")
             in.raise("TypeError", fmt::format("zip() got an unexpected keyword argument '{}'", k),
                      c.range);
           s->strict = in.truth(v, c.range, "zip()'s strict");
         }
         for (const V &a : c.args.pos)
           s->its.push_back(in.iter(a, c.range));
         return makeIter("zip", std::move(s));
       }},
      {"map",
       +[](Interp &in, CallCtx &c) -> V {
         if (c.args.pos.size() < 2)
           in.raise("TypeError", "map() must have at least two arguments.", c.range);
         auto s = std::make_unique<MapIter>();
         s->fn = c.args.pos[0];
         for (size_t i = 1; i < c.args.pos.size(); ++i)
           s->its.push_back(in.iter(c.args.pos[i], c.range));
         return makeIter("map", std::move(s));
       }},
      {"filter",
       +[](Interp &in, CallCtx &c) -> V {
         argCount(in, c, 2, 2);
         auto s = std::make_unique<FilterIter>();
         s->fn = c.args.pos[0];
         s->it = in.iter(c.args.pos[1], c.range);
         return makeIter("filter", std::move(s));
       }},
      {"reversed",
       +[](Interp &in, CallCtx &c) -> V {
         argCount(in, c, 1, 1);
         const V &v = c.args.pos[0];
         if (v->kind == Kind::Dict) {
           auto s = std::make_unique<ValuesIter>();
           s->items = in.tableKeys(cast<DictV>(v).table);
           std::reverse(s->items.begin(), s->items.end());
           return makeIter("dict_reversekeyiterator", std::move(s));
         }
         if (v->kind == Kind::Opaque)
           in.opaqueNeeded(v, c.range, "reversed() of it");
         auto n = in.lenOf(v, c.range);
         if (!(v->kind == Kind::List || v->kind == Kind::Tuple || v->kind == Kind::Range ||
               v->kind == Kind::Str || v->kind == Kind::Instance))
           in.raise("TypeError", fmt::format("'{}' object is not reversible", typeName(*v)),
                    c.range);
         auto s = std::make_unique<ReversedIter>();
         s->seq = v;
         s->i = *n - 1;
         return makeIter(v->kind == Kind::List ? "list_reverseiterator" : "reversed", std::move(s));
       }},
      {"sorted",
       +[](Interp &in, CallCtx &c) -> V {
         if (c.args.pos.size() != 1)
           in.raise("TypeError",
                    fmt::format("sorted expected 1 argument, got {}", c.args.pos.size()), c.range);
         V key;
         bool reverse = false;
         for (const auto &[k, v] : c.args.kw) {
           if (k == "key")
             key = v;
           else if (k == "reverse")
             reverse = in.truth(v, c.range, "sorted()'s reverse");
           else
             in.raise("TypeError", fmt::format("sort() got an unexpected keyword argument '{}'", k),
                      c.range);
         }
         if (c.args.pos[0]->kind == Kind::Set) {
           std::vector<V> items = in.tableKeys(cast<SetV>(c.args.pos[0]).table);
           sortValues(in, items, key, reverse, c.range);
           return list(std::move(items));
         }
         std::vector<V> items = in.toVector(c.args.pos[0], c.range);
         sortValues(in, items, key, reverse, c.range);
         return list(std::move(items));
       }},
      {"sum",
       +[](Interp &in, CallCtx &c) -> V {
         std::vector<V> a = c.bind(in, {"iterable", "start"});
         if (!a[0])
           in.raise("TypeError", "sum() takes at least 1 positional argument (0 given)", c.range);
         V acc = a[1] ? a[1] : integer(0);
         if (acc->kind == Kind::Str)
           in.raise("TypeError", "sum() can't sum strings [use ''.join(seq) instead]", c.range);
         V it = in.iter(a[0], c.range);
         while (V x = in.next(it, c.range))
           acc = in.binop(py::BinOpKind::Add, acc, x, c.range);
         return acc;
       }},
      {"min", +[](Interp &in, CallCtx &c) -> V { return minMax(in, c, false); }},
      {"max", +[](Interp &in, CallCtx &c) -> V { return minMax(in, c, true); }},
      {"print", +[](Interp &, CallCtx &) -> V { return none(); }},
      {"repr",
       +[](Interp &in, CallCtx &c) -> V {
         argCount(in, c, 1, 1);
         auto t = in.repr(c.args.pos[0], c.range);
         if (!t)
           return in.opaque("repr() of it", c.range, c.args.pos[0]);
         in.alloc(t->size(), c.range);
         return string(*t);
       }},
      {"format",
       +[](Interp &in, CallCtx &c) -> V {
         argCount(in, c, 1, 2);
         if (c.args.pos.size() == 2 &&
             !(c.args.pos[1]->kind == Kind::Str && cast<StrV>(c.args.pos[1]).s.empty()))
           return opaqueOf(in, c, "format() with a format spec (dkv does not format strings)");
         auto t = in.str(c.args.pos[0], c.range);
         if (!t)
           return in.opaque("format() of it", c.range, c.args.pos[0]);
         return string(*t);
       }},
      {"property",
       +[](Interp &in, CallCtx &c) -> V {
         std::vector<V> a = c.bind(in, {"fget", "fset", "fdel", "doc"});
         auto w = std::make_shared<WrapperV>(WrapperV::W::Property, a[0] ? a[0] : none());
         if (a[1])
           w->setter = a[1];
         return w;
       }},
      {"staticmethod",
       +[](Interp &in, CallCtx &c) -> V {
         argCount(in, c, 1, 1);
         return std::make_shared<WrapperV>(WrapperV::W::StaticMethod, c.args.pos[0]);
       }},
      {"classmethod",
       +[](Interp &in, CallCtx &c) -> V {
         argCount(in, c, 1, 1);
         return std::make_shared<WrapperV>(WrapperV::W::ClassMethod, c.args.pos[0]);
       }},
      {"super",
       +[](Interp &in, CallCtx &c) -> V {
         if (c.args.pos.size() == 2) {
           auto *cls = dynCast<ClassV>(c.args.pos[0]);
           if (!cls)
             in.raise("TypeError", "super() argument 1 must be a type", c.range);
           return makeApi(SuperObj{std::static_pointer_cast<ClassV>(c.args.pos[0]), c.args.pos[1]});
         }
         if (!c.args.pos.empty() || in.frames_.empty() || !in.frames_.back()->function)
           in.raise("RuntimeError", "super(): no arguments", c.range);
         Frame &f = *in.frames_.back();
         ClassP cls = f.function->definingClass.lock();
         if (!cls)
           in.raise("RuntimeError", "super(): __class__ cell not found", c.range);
         if (!f.firstArg)
           in.raise("RuntimeError", "super(): no arguments", c.range);
         return makeApi(SuperObj{cls, f.firstArg});
       }},
      {"vars", +[](Interp &in, CallCtx &c) -> V { return opaqueOf(in, c, "vars()"); }},
      {"globals", +[](Interp &in, CallCtx &c) -> V { return opaqueOf(in, c, "globals()"); }},
      {"locals", +[](Interp &in, CallCtx &c) -> V { return opaqueOf(in, c, "locals()"); }},
      {"dir", +[](Interp &in, CallCtx &c) -> V { return opaqueOf(in, c, "dir()"); }},
      {"open", +[](Interp &in, CallCtx &c) -> V { return opaqueOf(in, c, "open() (a file)"); }},
      {"input", +[](Interp &in, CallCtx &c) -> V { return opaqueOf(in, c, "input()"); }},
      {"exec", +[](Interp &, CallCtx &c) -> V { unsupported(c.range, "exec()"); }},
      {"eval", +[](Interp &, CallCtx &c) -> V { unsupported(c.range, "eval()"); }},
      {"compile", +[](Interp &, CallCtx &c) -> V { unsupported(c.range, "compile()"); }},
      {"__import__", +[](Interp &, CallCtx &c) -> V { unsupported(c.range, "__import__()"); }},
      {"breakpoint", +[](Interp &, CallCtx &) -> V { return none(); }},
  };
  return fns;
}

//===----------------------------------------------------------------------===//
// Methods of built-in types
//===----------------------------------------------------------------------===//

ListV &selfList(CallCtx &c) { return cast<ListV>(c.self); }

V dictView(CallCtx &c, DictViewObj::What what) { return makeApi(DictViewObj{c.self, what}); }

V strSplit(Interp &in, CallCtx &c, bool right) {
  std::vector<V> a = c.bind(in, {"sep", "maxsplit"});
  const std::string &s = cast<StrV>(c.self).s;
  int64_t maxsplit = a[1] ? in.toIndex(a[1], c.range, "maxsplit") : -1;
  std::vector<std::string> parts;
  if (!a[0] || a[0]->kind == Kind::None) {
    // Runs of whitespace separate; leading and trailing whitespace is dropped.
    std::vector<std::pair<size_t, size_t>> words;
    size_t i = 0;
    while (i < s.size()) {
      while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i])))
        ++i;
      if (i >= s.size())
        break;
      size_t j = i;
      while (j < s.size() && !std::isspace(static_cast<unsigned char>(s[j])))
        ++j;
      words.emplace_back(i, j);
      i = j;
    }
    if (maxsplit < 0 || static_cast<size_t>(maxsplit) + 1 >= words.size()) {
      for (auto [b, e] : words)
        parts.push_back(s.substr(b, e - b));
    } else if (!right) {
      for (int64_t k = 0; k < maxsplit; ++k)
        parts.push_back(s.substr(words[k].first, words[k].second - words[k].first));
      size_t rest = words[static_cast<size_t>(maxsplit)].first;
      size_t end = s.find_last_not_of(" \t\n\r\f\v");
      parts.push_back(s.substr(rest, end + 1 - rest));
    } else {
      size_t keep = words.size() - static_cast<size_t>(maxsplit);
      size_t begin = s.find_first_not_of(" \t\n\r\f\v");
      parts.push_back(s.substr(begin, words[keep - 1].second - begin));
      for (size_t k = keep; k < words.size(); ++k)
        parts.push_back(s.substr(words[k].first, words[k].second - words[k].first));
    }
  } else {
    auto *sep = dynCast<StrV>(a[0]);
    if (!sep)
      in.raise("TypeError", fmt::format("must be str or None, not {}", typeName(*a[0])), c.range);
    if (sep->s.empty())
      in.raise("ValueError", "empty separator", c.range);
    std::vector<std::string> all;
    size_t pos = 0;
    while (true) {
      size_t at = s.find(sep->s, pos);
      if (at == std::string::npos) {
        all.push_back(s.substr(pos));
        break;
      }
      all.push_back(s.substr(pos, at - pos));
      pos = at + sep->s.size();
    }
    if (maxsplit < 0 || static_cast<size_t>(maxsplit) + 1 >= all.size()) {
      parts = all;
    } else if (!right) {
      for (int64_t k = 0; k < maxsplit; ++k)
        parts.push_back(all[static_cast<size_t>(k)]);
      std::string rest;
      for (size_t k = static_cast<size_t>(maxsplit); k < all.size(); ++k)
        rest += (k > static_cast<size_t>(maxsplit) ? sep->s : "") + all[k];
      parts.push_back(rest);
    } else {
      size_t keep = all.size() - static_cast<size_t>(maxsplit);
      std::string first;
      for (size_t k = 0; k < keep; ++k)
        first += (k ? sep->s : "") + all[k];
      parts.push_back(first);
      for (size_t k = keep; k < all.size(); ++k)
        parts.push_back(all[k]);
    }
  }
  std::vector<V> out;
  for (std::string &p : parts)
    out.push_back(string(std::move(p)));
  in.alloc(out.size() + s.size(), c.range);
  return list(std::move(out));
}

V strStrip(Interp &in, CallCtx &c, bool left, bool right) {
  argCount(in, c, 0, 1);
  const std::string &s = cast<StrV>(c.self).s;
  std::string chars = " \t\n\r\f\v";
  if (!c.args.pos.empty() && c.args.pos[0]->kind != Kind::None) {
    auto *cs = dynCast<StrV>(c.args.pos[0]);
    if (!cs)
      in.raise("TypeError", "strip arg must be None or str", c.range);
    if (!isAscii(cs->s))
      unsupported(c.range, "strip() of non-ASCII characters");
    chars = cs->s;
  }
  size_t b = 0, e = s.size();
  if (left)
    while (b < e && chars.find(s[b]) != std::string::npos)
      ++b;
  if (right)
    while (e > b && chars.find(s[e - 1]) != std::string::npos)
      --e;
  return string(s.substr(b, e - b));
}

struct MethodTable {
  std::map<std::string, BuiltinFn> fns;
  std::set<std::string> unmodelled; ///< real methods of the type that dkv does not model
};

const MethodTable &listMethods() {
  static const MethodTable t = [] {
    MethodTable m;
    auto add = [&](const char *n, H h) {
      m.fns[n] = BuiltinFn{std::string("list.") + n, h, "", false};
    };
    add(
        "append", +[](Interp &in, CallCtx &c) -> V {
          argCount(in, c, 1, 1);
          in.alloc(1, c.range);
          selfList(c).items.push_back(c.args.pos[0]);
          return none();
        });
    add(
        "extend", +[](Interp &in, CallCtx &c) -> V {
          argCount(in, c, 1, 1);
          if (c.args.pos[0]->kind == Kind::Opaque)
            in.opaqueNeeded(c.args.pos[0], c.range, "extending a list with it");
          std::vector<V> more = in.toVector(c.args.pos[0], c.range);
          in.alloc(more.size(), c.range);
          auto &items = selfList(c).items;
          items.insert(items.end(), more.begin(), more.end());
          return none();
        });
    add(
        "insert", +[](Interp &in, CallCtx &c) -> V {
          argCount(in, c, 2, 2);
          auto &items = selfList(c).items;
          int64_t n = static_cast<int64_t>(items.size());
          int64_t i = in.toIndex(c.args.pos[0], c.range, "list.insert()'s index");
          if (i < 0)
            i = std::max<int64_t>(i + n, 0);
          i = std::min(i, n);
          in.alloc(1, c.range);
          items.insert(items.begin() + i, c.args.pos[1]);
          return none();
        });
    add(
        "pop", +[](Interp &in, CallCtx &c) -> V {
          argCount(in, c, 0, 1);
          auto &items = selfList(c).items;
          if (items.empty())
            in.raise("IndexError", "pop from empty list", c.range);
          int64_t n = static_cast<int64_t>(items.size());
          int64_t i =
              c.args.pos.empty() ? n - 1 : in.toIndex(c.args.pos[0], c.range, "list.pop()'s index");
          if (i < 0)
            i += n;
          if (i < 0 || i >= n)
            in.raise("IndexError", "pop index out of range", c.range);
          V v = items[static_cast<size_t>(i)];
          items.erase(items.begin() + i);
          return v;
        });
    add(
        "remove", +[](Interp &in, CallCtx &c) -> V {
          argCount(in, c, 1, 1);
          auto &items = selfList(c).items;
          for (size_t i = 0; i < items.size(); ++i) {
            if (items[i] == c.args.pos[0] ||
                in.equal(items[i], c.args.pos[0], c.range).value_or(false)) {
              items.erase(items.begin() + static_cast<long>(i));
              return none();
            }
          }
          in.raise("ValueError", "list.remove(x): x not in list", c.range);
        });
    add(
        "index", +[](Interp &in, CallCtx &c) -> V {
          argCount(in, c, 1, 3);
          const auto &items = selfList(c).items;
          int64_t n = static_cast<int64_t>(items.size());
          int64_t lo = c.args.pos.size() > 1 ? in.toIndex(c.args.pos[1], c.range, "start") : 0;
          int64_t hi = c.args.pos.size() > 2 ? in.toIndex(c.args.pos[2], c.range, "stop") : n;
          if (lo < 0)
            lo = std::max<int64_t>(lo + n, 0);
          if (hi < 0)
            hi = std::max<int64_t>(hi + n, 0);
          for (int64_t i = lo; i < std::min(hi, n); ++i)
            if (items[static_cast<size_t>(i)] == c.args.pos[0] ||
                in.equal(items[static_cast<size_t>(i)], c.args.pos[0], c.range).value_or(false))
              return integer(i);
          auto t = in.repr(c.args.pos[0], c.range);
          in.raise("ValueError", fmt::format("{} is not in list", t ? *t : "the value"), c.range);
        });
    add(
        "count", +[](Interp &in, CallCtx &c) -> V {
          argCount(in, c, 1, 1);
          int64_t n = 0;
          for (const V &x : selfList(c).items)
            n += x == c.args.pos[0] || in.equal(x, c.args.pos[0], c.range).value_or(false);
          return integer(n);
        });
    add(
        "clear", +[](Interp &in, CallCtx &c) -> V {
          argCount(in, c, 0, 0);
          selfList(c).items.clear();
          return none();
        });
    add(
        "copy", +[](Interp &in, CallCtx &c) -> V {
          argCount(in, c, 0, 0);
          in.alloc(selfList(c).items.size(), c.range);
          return list(selfList(c).items);
        });
    add(
        "reverse", +[](Interp &in, CallCtx &c) -> V {
          argCount(in, c, 0, 0);
          std::reverse(selfList(c).items.begin(), selfList(c).items.end());
          return none();
        });
    add(
        "sort", +[](Interp &in, CallCtx &c) -> V {
          if (!c.args.pos.empty())
            in.raise("TypeError", "sort() takes no positional arguments", c.range);
          V key;
          bool reverse = false;
          for (const auto &[k, v] : c.args.kw) {
            if (k == "key")
              key = v;
            else if (k == "reverse")
              reverse = in.truth(v, c.range, "sort()'s reverse");
            else
              in.raise("TypeError",
                       fmt::format("sort() got an unexpected keyword argument '{}'", k), c.range);
          }
          std::vector<V> items = selfList(c).items;
          sortValues(in, items, key, reverse, c.range);
          selfList(c).items = std::move(items);
          return none();
        });
    return m;
  }();
  return t;
}

const MethodTable &tupleMethods() {
  static const MethodTable t = [] {
    MethodTable m;
    m.fns["index"] = BuiltinFn{"tuple.index",
                               +[](Interp &in, CallCtx &c) -> V {
                                 argCount(in, c, 1, 1);
                                 const auto &items = cast<TupleV>(c.self).items;
                                 for (size_t i = 0; i < items.size(); ++i)
                                   if (items[i] == c.args.pos[0] ||
                                       in.equal(items[i], c.args.pos[0], c.range).value_or(false))
                                     return integer(static_cast<int64_t>(i));
                                 in.raise("ValueError", "tuple.index(x): x not in tuple", c.range);
                               },
                               "", false};
    m.fns["count"] = BuiltinFn{"tuple.count",
                               +[](Interp &in, CallCtx &c) -> V {
                                 argCount(in, c, 1, 1);
                                 int64_t n = 0;
                                 for (const V &x : cast<TupleV>(c.self).items)
                                   n += x == c.args.pos[0] ||
                                        in.equal(x, c.args.pos[0], c.range).value_or(false);
                                 return integer(n);
                               },
                               "", false};
    return m;
  }();
  return t;
}

const MethodTable &dictMethods() {
  static const MethodTable t = [] {
    MethodTable m;
    auto add = [&](const char *n, H h) {
      m.fns[n] = BuiltinFn{std::string("dict.") + n, h, "", false};
    };
    auto table = [](CallCtx &c) -> Table & { return cast<DictV>(c.self).table; };
    (void)table;
    add(
        "get", +[](Interp &in, CallCtx &c) -> V {
          argCount(in, c, 1, 2);
          if (c.args.pos[0]->kind == Kind::Opaque)
            return in.opaque("dict.get() with it", c.range, c.args.pos[0]);
          V v = in.dictGet(cast<DictV>(c.self).table, c.args.pos[0], c.range);
          return v ? v : c.args.pos.size() > 1 ? c.args.pos[1] : none();
        });
    add(
        "keys", +[](Interp &in, CallCtx &c) -> V {
          argCount(in, c, 0, 0);
          return dictView(c, DictViewObj::What::Keys);
        });
    add(
        "values", +[](Interp &in, CallCtx &c) -> V {
          argCount(in, c, 0, 0);
          return dictView(c, DictViewObj::What::Values);
        });
    add(
        "items", +[](Interp &in, CallCtx &c) -> V {
          argCount(in, c, 0, 0);
          return dictView(c, DictViewObj::What::Items);
        });
    add(
        "update", +[](Interp &in, CallCtx &c) -> V {
          if (c.args.pos.size() > 1)
            in.raise("TypeError",
                     fmt::format("update expected at most 1 argument, got {}", c.args.pos.size()),
                     c.range);
          Table &t = cast<DictV>(c.self).table;
          if (!c.args.pos.empty()) {
            const V &src = c.args.pos[0];
            if (auto *d = dynCast<DictV>(src)) {
              for (const Table::Entry &e : std::vector<Table::Entry>(d->table.entries))
                if (e.live)
                  in.dictSet(t, e.key, e.value, c.range);
            } else {
              if (src->kind == Kind::Opaque)
                in.opaqueNeeded(src, c.range, "dict.update() with it");
              V it = in.iter(src, c.range);
              int64_t i = 0;
              while (V pair = in.next(it, c.range)) {
                std::vector<V> kv = in.toVector(pair, c.range);
                if (kv.size() != 2)
                  in.raise("ValueError",
                           fmt::format("dictionary update sequence element #{} has length {}; 2 is "
                                       "required",
                                       i, kv.size()),
                           c.range);
                in.dictSet(t, kv[0], kv[1], c.range);
                ++i;
              }
            }
          }
          for (const auto &[k, v] : c.args.kw)
            in.dictSet(t, string(k), v, c.range);
          return none();
        });
    add(
        "setdefault", +[](Interp &in, CallCtx &c) -> V {
          argCount(in, c, 1, 2);
          Table &t = cast<DictV>(c.self).table;
          if (V v = in.dictGet(t, c.args.pos[0], c.range))
            return v;
          V d = c.args.pos.size() > 1 ? c.args.pos[1] : none();
          in.dictSet(t, c.args.pos[0], d, c.range);
          return d;
        });
    add(
        "pop", +[](Interp &in, CallCtx &c) -> V {
          argCount(in, c, 1, 2);
          Table &t = cast<DictV>(c.self).table;
          if (V v = in.dictGet(t, c.args.pos[0], c.range)) {
            in.dictDel(t, c.args.pos[0], c.range);
            return v;
          }
          if (c.args.pos.size() > 1)
            return c.args.pos[1];
          auto text = in.repr(c.args.pos[0], c.range);
          in.raise("KeyError", text ? *text : "", c.range);
        });
    add(
        "popitem", +[](Interp &in, CallCtx &c) -> V {
          argCount(in, c, 0, 0);
          Table &t = cast<DictV>(c.self).table;
          for (size_t i = t.entries.size(); i-- > 0;)
            if (t.entries[i].live) {
              V k = t.entries[i].key, v = t.entries[i].value;
              in.dictDel(t, k, c.range);
              return tuple({k, v});
            }
          in.raise("KeyError", "'popitem(): dictionary is empty'", c.range);
        });
    add(
        "clear", +[](Interp &in, CallCtx &c) -> V {
          argCount(in, c, 0, 0);
          Table &t = cast<DictV>(c.self).table;
          t.entries.clear();
          t.index.clear();
          t.size = 0;
          ++t.version;
          return none();
        });
    add(
        "copy", +[](Interp &in, CallCtx &c) -> V {
          argCount(in, c, 0, 0);
          auto d = std::make_shared<DictV>();
          for (const Table::Entry &e : cast<DictV>(c.self).table.entries)
            if (e.live)
              in.dictSet(d->table, e.key, e.value, c.range);
          return d;
        });
    m.unmodelled = {"fromkeys"};
    return m;
  }();
  return t;
}

const MethodTable &setMethods() {
  static const MethodTable t = [] {
    MethodTable m;
    auto add = [&](const char *n, H h) {
      m.fns[n] = BuiltinFn{std::string("set.") + n, h, "", false};
    };
    add(
        "add", +[](Interp &in, CallCtx &c) -> V {
          argCount(in, c, 1, 1);
          in.dictSet(cast<SetV>(c.self).table, c.args.pos[0], nullptr, c.range);
          return none();
        });
    add(
        "discard", +[](Interp &in, CallCtx &c) -> V {
          argCount(in, c, 1, 1);
          in.dictDel(cast<SetV>(c.self).table, c.args.pos[0], c.range);
          return none();
        });
    add(
        "remove", +[](Interp &in, CallCtx &c) -> V {
          argCount(in, c, 1, 1);
          if (!in.dictDel(cast<SetV>(c.self).table, c.args.pos[0], c.range)) {
            auto text = in.repr(c.args.pos[0], c.range);
            in.raise("KeyError", text ? *text : "", c.range);
          }
          return none();
        });
    add(
        "update", +[](Interp &in, CallCtx &c) -> V {
          for (const V &src : c.args.pos)
            for (const V &x : in.elementsOf(src, c.range))
              in.dictSet(cast<SetV>(c.self).table, x, nullptr, c.range);
          return none();
        });
    add(
        "clear", +[](Interp &in, CallCtx &c) -> V {
          argCount(in, c, 0, 0);
          Table &t = cast<SetV>(c.self).table;
          t.entries.clear();
          t.index.clear();
          t.size = 0;
          ++t.version;
          return none();
        });
    add(
        "copy", +[](Interp &in, CallCtx &c) -> V {
          argCount(in, c, 0, 0);
          auto s = std::make_shared<SetV>(cast<SetV>(c.self).frozen);
          s->table = cast<SetV>(c.self).table;
          return s;
        });
    auto binary = [&](const char *n, py::BinOpKind op) {
      (void)op;
      m.fns[n] = BuiltinFn{std::string("set.") + n, nullptr, "", false};
    };
    (void)binary;
    add(
        "union", +[](Interp &in, CallCtx &c) -> V {
          V acc = c.self;
          for (const V &o : c.args.pos) {
            auto s = std::make_shared<SetV>(false);
            for (const V &x : in.elementsOf(o, c.range))
              in.dictSet(s->table, x, nullptr, c.range);
            acc = in.binop(py::BinOpKind::BitOr, acc, s, c.range);
          }
          return acc == c.self ? in.call(in.getAttr(c.self, "copy", c.range), Args{}, c.range)
                               : acc;
        });
    add(
        "intersection", +[](Interp &in, CallCtx &c) -> V {
          V acc = c.self;
          for (const V &o : c.args.pos) {
            auto s = std::make_shared<SetV>(false);
            for (const V &x : in.elementsOf(o, c.range))
              in.dictSet(s->table, x, nullptr, c.range);
            acc = in.binop(py::BinOpKind::BitAnd, acc, s, c.range);
          }
          return acc == c.self ? in.call(in.getAttr(c.self, "copy", c.range), Args{}, c.range)
                               : acc;
        });
    add(
        "difference", +[](Interp &in, CallCtx &c) -> V {
          V acc = c.self;
          for (const V &o : c.args.pos) {
            auto s = std::make_shared<SetV>(false);
            for (const V &x : in.elementsOf(o, c.range))
              in.dictSet(s->table, x, nullptr, c.range);
            acc = in.binop(py::BinOpKind::Sub, acc, s, c.range);
          }
          return acc == c.self ? in.call(in.getAttr(c.self, "copy", c.range), Args{}, c.range)
                               : acc;
        });
    add(
        "issubset", +[](Interp &in, CallCtx &c) -> V {
          argCount(in, c, 1, 1);
          auto s = std::make_shared<SetV>(false);
          for (const V &x : in.elementsOf(c.args.pos[0], c.range))
            in.dictSet(s->table, x, nullptr, c.range);
          for (const Table::Entry &e : cast<SetV>(c.self).table.entries)
            if (e.live && !in.tableFind(s->table, e.key, e.hash, c.range))
              return boolean(false);
          return boolean(true);
        });
    add(
        "issuperset", +[](Interp &in, CallCtx &c) -> V {
          argCount(in, c, 1, 1);
          for (const V &x : in.elementsOf(c.args.pos[0], c.range))
            if (!in.tableFind(cast<SetV>(c.self).table, x, in.hashOf(x, c.range), c.range))
              return boolean(false);
          return boolean(true);
        });
    add(
        "pop", +[](Interp &in, CallCtx &c) -> V {
          argCount(in, c, 0, 0);
          Table &t = cast<SetV>(c.self).table;
          if (t.size == 0)
            in.raise("KeyError", "'pop from an empty set'", c.range);
          if (t.size > 1)
            unsupported(c.range,
                        "set.pop() on a set of several elements (which one is CPython's hash "
                        "order)");
          V k = in.tableKeys(t)[0];
          in.dictDel(t, k, c.range);
          return k;
        });
    m.unmodelled = {"symmetric_difference", "isdisjoint", "difference_update",
                    "intersection_update", "symmetric_difference_update"};
    return m;
  }();
  return t;
}

const MethodTable &strMethods() {
  static const MethodTable t = [] {
    MethodTable m;
    auto add = [&](const char *n, H h) {
      m.fns[n] = BuiltinFn{std::string("str.") + n, h, "", false};
    };
    add(
        "join", +[](Interp &in, CallCtx &c) -> V {
          argCount(in, c, 1, 1);
          std::string out;
          const std::string &sep = cast<StrV>(c.self).s;
          if (c.args.pos[0]->kind == Kind::Opaque)
            return in.opaque("str.join() of it", c.range, c.args.pos[0]);
          std::vector<V> items = in.toVector(c.args.pos[0], c.range);
          for (size_t i = 0; i < items.size(); ++i) {
            if (items[i]->kind == Kind::Opaque)
              return in.opaque("str.join() of it", c.range, items[i]);
            auto *s = dynCast<StrV>(items[i]);
            if (!s)
              in.raise("TypeError",
                       fmt::format("sequence item {}: expected str instance, {} found", i,
                                   typeName(*items[i])),
                       c.range);
            out += (i ? sep : "") + s->s;
          }
          in.alloc(out.size(), c.range);
          return string(std::move(out));
        });
    add(
        "split", +[](Interp &in, CallCtx &c) -> V { return strSplit(in, c, false); });
    add(
        "rsplit", +[](Interp &in, CallCtx &c) -> V { return strSplit(in, c, true); });
    add(
        "strip", +[](Interp &in, CallCtx &c) -> V { return strStrip(in, c, true, true); });
    add(
        "lstrip", +[](Interp &in, CallCtx &c) -> V { return strStrip(in, c, true, false); });
    add(
        "rstrip", +[](Interp &in, CallCtx &c) -> V { return strStrip(in, c, false, true); });
    auto affix = [](Interp &in, CallCtx &c, bool start) -> V {
      argCount(in, c, 1, 1);
      const std::string &s = cast<StrV>(c.self).s;
      std::vector<V> options = c.args.pos[0]->kind == Kind::Tuple
                                   ? cast<TupleV>(c.args.pos[0]).items
                                   : std::vector<V>{c.args.pos[0]};
      for (const V &o : options) {
        if (o->kind == Kind::Opaque)
          return in.opaque("str.startswith()/endswith() with it", c.range, o);
        auto *p = dynCast<StrV>(o);
        if (!p)
          in.raise("TypeError",
                   fmt::format("{} first arg must be str or a tuple of str, not {}",
                               start ? "startswith" : "endswith", typeName(*o)),
                   c.range);
        if (p->s.size() <= s.size() &&
            (start ? s.compare(0, p->s.size(), p->s) == 0
                   : s.compare(s.size() - p->s.size(), p->s.size(), p->s) == 0))
          return boolean(true);
      }
      return boolean(false);
    };
    (void)affix;
    add(
        "startswith", +[](Interp &in, CallCtx &c) -> V {
          argCount(in, c, 1, 1);
          const std::string &s = cast<StrV>(c.self).s;
          std::vector<V> options = c.args.pos[0]->kind == Kind::Tuple
                                       ? cast<TupleV>(c.args.pos[0]).items
                                       : std::vector<V>{c.args.pos[0]};
          for (const V &o : options) {
            auto *p = dynCast<StrV>(o);
            if (!p)
              in.raise("TypeError", "startswith first arg must be str or a tuple of str", c.range);
            if (s.compare(0, p->s.size(), p->s) == 0 && p->s.size() <= s.size())
              return boolean(true);
          }
          return boolean(false);
        });
    add(
        "endswith", +[](Interp &in, CallCtx &c) -> V {
          argCount(in, c, 1, 1);
          const std::string &s = cast<StrV>(c.self).s;
          std::vector<V> options = c.args.pos[0]->kind == Kind::Tuple
                                       ? cast<TupleV>(c.args.pos[0]).items
                                       : std::vector<V>{c.args.pos[0]};
          for (const V &o : options) {
            auto *p = dynCast<StrV>(o);
            if (!p)
              in.raise("TypeError", "endswith first arg must be str or a tuple of str", c.range);
            if (p->s.size() <= s.size() &&
                s.compare(s.size() - p->s.size(), p->s.size(), p->s) == 0)
              return boolean(true);
          }
          return boolean(false);
        });
    add(
        "replace", +[](Interp &in, CallCtx &c) -> V {
          argCount(in, c, 2, 3);
          auto *a = dynCast<StrV>(c.args.pos[0]), *b = dynCast<StrV>(c.args.pos[1]);
          if (!a || !b)
            in.raise("TypeError", "replace() arguments must be str", c.range);
          int64_t count = c.args.pos.size() > 2 ? in.toIndex(c.args.pos[2], c.range, "count") : -1;
          const std::string &s = cast<StrV>(c.self).s;
          if (a->s.empty())
            unsupported(c.range, "str.replace() of the empty string");
          std::string out;
          size_t pos = 0;
          for (int64_t n = 0; count < 0 || n < count; ++n) {
            size_t at = s.find(a->s, pos);
            if (at == std::string::npos)
              break;
            out += s.substr(pos, at - pos) + b->s;
            pos = at + a->s.size();
            in.alloc(b->s.size(), c.range);
          }
          out += s.substr(pos);
          return string(std::move(out));
        });
    add(
        "upper", +[](Interp &in, CallCtx &c) -> V {
          argCount(in, c, 0, 0);
          std::string s = cast<StrV>(c.self).s;
          if (!isAscii(s))
            unsupported(c.range, "str.upper() of non-ASCII text");
          for (char &ch : s)
            ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
          return string(s);
        });
    add(
        "lower", +[](Interp &in, CallCtx &c) -> V {
          argCount(in, c, 0, 0);
          std::string s = cast<StrV>(c.self).s;
          if (!isAscii(s))
            unsupported(c.range, "str.lower() of non-ASCII text");
          for (char &ch : s)
            ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
          return string(s);
        });
    add(
        "find", +[](Interp &in, CallCtx &c) -> V {
          argCount(in, c, 1, 1);
          auto *a = dynCast<StrV>(c.args.pos[0]);
          if (!a)
            in.raise("TypeError", "must be str", c.range);
          const std::string &s = cast<StrV>(c.self).s;
          if (!isAscii(s))
            unsupported(c.range, "str.find() in non-ASCII text");
          size_t at = s.find(a->s);
          return integer(at == std::string::npos ? -1 : static_cast<int64_t>(at));
        });
    add(
        "count", +[](Interp &in, CallCtx &c) -> V {
          argCount(in, c, 1, 1);
          auto *a = dynCast<StrV>(c.args.pos[0]);
          if (!a)
            in.raise("TypeError", "must be str", c.range);
          const std::string &s = cast<StrV>(c.self).s;
          if (a->s.empty())
            return integer(strLength(s) + 1);
          int64_t n = 0;
          for (size_t at = s.find(a->s); at != std::string::npos;
               at = s.find(a->s, at + a->s.size()))
            ++n;
          return integer(n);
        });
    add(
        "isdigit", +[](Interp &in, CallCtx &c) -> V {
          argCount(in, c, 0, 0);
          const std::string &s = cast<StrV>(c.self).s;
          if (!isAscii(s))
            unsupported(c.range, "str.isdigit() of non-ASCII text");
          return boolean(!s.empty() && std::all_of(s.begin(), s.end(), [](char ch) {
            return std::isdigit(static_cast<unsigned char>(ch));
          }));
        });
    add(
        "format", +[](Interp &in, CallCtx &c) -> V {
          return in.opaque("str.format() (dkv does not format strings)", c.range);
        });
    m.unmodelled = {"capitalize", "casefold",     "center",       "encode",    "expandtabs",
                    "format_map", "index",        "isalnum",      "isalpha",   "isascii",
                    "isdecimal",  "isidentifier", "islower",      "isnumeric", "isprintable",
                    "isspace",    "istitle",      "isupper",      "ljust",     "maketrans",
                    "partition",  "removeprefix", "removesuffix", "rfind",     "rindex",
                    "rjust",      "rpartition",   "splitlines",   "swapcase",  "title",
                    "translate",  "zfill"};
    return m;
  }();
  return t;
}

const MethodTable &intMethods() {
  static const MethodTable t = [] {
    MethodTable m;
    m.fns["bit_length"] = BuiltinFn{"int.bit_length",
                                    +[](Interp &in, CallCtx &c) -> V {
                                      argCount(in, c, 0, 0);
                                      int64_t x = intOf(c.self);
                                      uint64_t u = x < 0 ? static_cast<uint64_t>(-(x + 1)) + 1
                                                         : static_cast<uint64_t>(x);
                                      int64_t n = 0;
                                      while (u) {
                                        ++n;
                                        u >>= 1;
                                      }
                                      return integer(n);
                                    },
                                    "", false};
    m.unmodelled = {"to_bytes", "from_bytes", "as_integer_ratio", "conjugate", "bit_count"};
    return m;
  }();
  return t;
}

const MethodTable &floatMethods() {
  static const MethodTable t = [] {
    MethodTable m;
    m.fns["is_integer"] = BuiltinFn{"float.is_integer",
                                    +[](Interp &in, CallCtx &c) -> V {
                                      argCount(in, c, 0, 0);
                                      double f = cast<FloatV>(c.self).f;
                                      return boolean(std::isfinite(f) && f == std::floor(f));
                                    },
                                    "", false};
    m.unmodelled = {"as_integer_ratio", "hex", "fromhex", "conjugate"};
    return m;
  }();
  return t;
}

const BuiltinFn &propertySetter() {
  static const BuiltinFn fn{"property.setter",
                            +[](Interp &in, CallCtx &c) -> V {
                              argCount(in, c, 1, 1);
                              const auto &w = cast<WrapperV>(c.self);
                              auto out = std::make_shared<WrapperV>(WrapperV::W::Property, w.fn);
                              out->setter = c.args.pos[0];
                              return out;
                            },
                            "", false};
  return fn;
}

// A property's (and any wrapper's) methods.
const MethodTable &wrapperMethods() {
  static const MethodTable t{{{"setter", propertySetter()},
                              {"cache_clear", BuiltinFn{"functools._lru_cache_wrapper.cache_clear",
                                                        +[](Interp &in, CallCtx &c) -> V {
                                                          argCount(in, c, 0, 0);
                                                          auto &w = cast<WrapperV>(c.self);
                                                          w.cache = std::make_shared<DictV>();
                                                          return none();
                                                        },
                                                        "", false}}},
                             {}};
  return t;
}

// The methods of a number a scalar type made (np.float32(1.5), jnp.int32(3)) that a
// Python number lacks: `.item()` is the Python number (NumPy's scalars and JAX's 0-d
// arrays alike).
const MethodTable &scalarMethods() {
  static const MethodTable t{{{"item", BuiltinFn{"item",
                                                 +[](Interp &in, CallCtx &c) -> V {
                                                   argCount(in, c, 0, 0);
                                                   return withScalar(c.self, ScalarType{});
                                                 },
                                                 "", false}}},
                             {}};
  return t;
}

} // namespace

const BuiltinFn *Interp::builtinMethod(const V &self, const std::string &name) const {
  if (scalarOfType(self))
    if (auto it = scalarMethods().fns.find(name); it != scalarMethods().fns.end())
      return &it->second;
  const MethodTable *t = nullptr;
  switch (self->kind) {
  case Kind::List:
    t = &listMethods();
    break;
  case Kind::Tuple:
    t = &tupleMethods();
    break;
  case Kind::Dict:
    t = &dictMethods();
    break;
  case Kind::Set:
    t = &setMethods();
    break;
  case Kind::Str:
    t = &strMethods();
    break;
  case Kind::Int:
  case Kind::Bool:
    t = &intMethods();
    break;
  case Kind::Float:
    t = &floatMethods();
    break;
  case Kind::Wrapper:
    t = &wrapperMethods();
    break;
  case Kind::Desc:
  case Kind::Traced:
    if (const BuiltinFn *k = kernelMethod(self, name))
      return k;
    if (self->kind == Kind::Desc)
      fail({}, "python-unsupported", fmt::format("`.{}` of a DMA descriptor", name));
    return nullptr;
  default:
    return nullptr;
  }
  auto it = t->fns.find(name);
  if (it != t->fns.end())
    return &it->second;
  if (t->unmodelled.count(name))
    fail({}, "python-unsupported",
         fmt::format("the method {}.{}() is not modelled by dkv", typeName(*self), name));
  return nullptr;
}

//===----------------------------------------------------------------------===//
// Constructors of built-in types
//===----------------------------------------------------------------------===//

V Interp::constructBuiltin(ClassRole role, Args args, SourceRange r) {
  auto one = [&](const char *name) -> V {
    if (!args.kw.empty())
      raise("TypeError", fmt::format("{}() takes no keyword arguments", name), r);
    if (args.pos.size() > 1)
      raise("TypeError",
            fmt::format("{} expected at most 1 argument, got {}", name, args.pos.size()), r);
    return args.pos.empty() ? nullptr : args.pos[0];
  };
  switch (role) {
  case ClassRole::Object:
    if (!args.pos.empty() || !args.kw.empty())
      raise("TypeError", "object() takes no arguments", r);
    return std::make_shared<InstanceV>(builtinClass(ClassRole::Object));
  case ClassRole::Type: {
    if (args.pos.size() != 1)
      unsupported(r, "type() with three arguments (making a class)");
    const V &v = args.pos[0];
    if (v->kind == Kind::Opaque)
      return opaque("type() of it", r, v);
    // A NumPy value of shape () may be a NumPy scalar (`a[0]`), an int or float a NumPy
    // scalar (np.int32(3)) too: their classes are not known.
    if (auto *h = dynCast<HostArrayV>(v); h && h->numpy && h->shape.empty())
      return opaque("the type of a NumPy value of shape () (an array or a NumPy scalar)", r);
    if (scalarOfType(v))
      return opaque("the type of a value a scalar type made (np.int32(3): a NumPy scalar, "
                    "jnp.int32(3): a JAX array)",
                    r);
    if (ClassP c = typeOf(v); c && !hiddenClass(c))
      return c;
    return opaque(fmt::format("the type of a {} object", typeName(*v)), r);
  }
  case ClassRole::Int: {
    if (args.pos.empty() && args.kw.empty())
      return integer(0);
    V v = args.pos.empty() ? nullptr : args.pos[0];
    V base = args.pos.size() > 1 ? args.pos[1] : nullptr;
    for (const auto &[k, x] : args.kw) {
      if (k == "base")
        base = x;
      else
        raise("TypeError", fmt::format("'{}' is an invalid keyword argument for int()", k), r);
    }
    if (!v)
      raise("TypeError", "int() missing string argument", r);
    if (base) {
      auto *s = dynCast<StrV>(v);
      if (!s)
        raise("TypeError", "int() can't convert non-string with explicit base", r);
      int64_t b = toIndex(base, r, "int()'s base");
      auto n = parseInt(s->s, static_cast<int>(b));
      if (!n)
        raise("ValueError",
              fmt::format("invalid literal for int() with base {}: {}", b, strRepr(s->s)), r);
      return integer(*n);
    }
    switch (v->kind) {
    case Kind::Int:
    case Kind::Bool:
      return integer(intOf(v));
    case Kind::Float: {
      double f = cast<FloatV>(v).f;
      if (std::isinf(f))
        raise("OverflowError", "cannot convert float infinity to integer", r);
      if (std::isnan(f))
        raise("ValueError", "cannot convert float NaN to integer", r);
      double t = std::trunc(f);
      if (std::fabs(t) >= 9.223372036854775807e18)
        fail(r, "python-overflow", "an integer result beyond 64 bits (int of a float)");
      return integer(static_cast<int64_t>(t));
    }
    case Kind::Str: {
      auto n = parseInt(cast<StrV>(v).s, 10);
      if (!n)
        raise("ValueError",
              fmt::format("invalid literal for int() with base 10: {}", strRepr(cast<StrV>(v).s)),
              r);
      return integer(*n);
    }
    case Kind::HostArray: {
      // A 0-d array of one known value (not one that differs per device).
      const auto &a = cast<HostArrayV>(v);
      if (a.shape.empty() && a.contents && a.contents->size() == 1)
        return integer((*a.contents)[0]);
      return opaque("int() of it", r, v);
    }
    case Kind::Opaque:
      return opaque("int() of it", r, v);
    case Kind::Traced:
      tracedIndex(cast<TracedV>(v), r, "int() of it");
    case Kind::Instance:
      for (const char *m : {"__int__", "__index__"})
        if (lookupClassAttr(cast<InstanceV>(v).cls, m))
          return call(getAttr(v, m, r), Args{}, r);
      break;
    default:
      break;
    }
    raise("TypeError",
          fmt::format("int() argument must be a string, a bytes-like object or a real number, not "
                      "'{}'",
                      typeName(*v)),
          r);
  }
  case ClassRole::Bool: {
    V v = one("bool");
    return boolean(v ? truth(v, r, "bool() on it") : false);
  }
  case ClassRole::Float: {
    V v = one("float");
    if (!v)
      return floating(0.0);
    switch (v->kind) {
    case Kind::Int:
    case Kind::Bool:
      return floating(static_cast<double>(intOf(v)));
    case Kind::Float:
      return withScalar(v, ScalarType{}); // float(np.float32(2)) is a float
    case Kind::Str: {
      auto f = parseFloat(cast<StrV>(v).s);
      if (!f)
        raise("ValueError",
              fmt::format("could not convert string to float: {}", strRepr(cast<StrV>(v).s)), r);
      return floating(*f);
    }
    case Kind::Opaque:
    case Kind::HostArray:
      return opaque("float() of it", r, v);
    case Kind::Traced:
      tracedBool(cast<TracedV>(v), r, "float() of it");
    default:
      break;
    }
    raise("TypeError",
          fmt::format("float() argument must be a string or a real number, not '{}'", typeName(*v)),
          r);
  }
  case ClassRole::Str: {
    V v = one("str");
    if (!v)
      return string("");
    auto t = str(v, r);
    if (!t)
      return opaque("str() of it", r, v);
    alloc(t->size(), r);
    return string(*t);
  }
  case ClassRole::Tuple: {
    V v = one("tuple");
    if (!v)
      return tuple({});
    if (v->kind == Kind::Tuple)
      return v;
    if (v->kind == Kind::Opaque)
      return opaque("tuple() of it", r, v);
    return tuple(toVector(v, r));
  }
  case ClassRole::List: {
    V v = one("list");
    if (!v)
      return list({});
    if (v->kind == Kind::Opaque)
      return opaque("list() of it", r, v);
    std::vector<V> items = toVector(v, r);
    alloc(items.size(), r);
    return list(std::move(items));
  }
  case ClassRole::Dict: {
    if (args.pos.size() > 1)
      raise("TypeError", fmt::format("dict expected at most 1 argument, got {}", args.pos.size()),
            r);
    auto d = std::make_shared<DictV>();
    CallCtx c;
    c.args = std::move(args);
    c.range = r;
    c.self = d;
    c.fn = &dictMethods().fns.at("update");
    c.fn->handler(*this, c);
    return d;
  }
  case ClassRole::Set:
  case ClassRole::FrozenSet: {
    V v = one(role == ClassRole::Set ? "set" : "frozenset");
    auto s = std::make_shared<SetV>(role == ClassRole::FrozenSet);
    if (v) {
      if (v->kind == Kind::Opaque)
        return opaque("set() of it", r, v);
      for (const V &x : elementsOf(v, r))
        dictSet(s->table, x, nullptr, r);
    }
    return s;
  }
  case ClassRole::Slice: {
    if (args.pos.empty() || args.pos.size() > 3)
      raise("TypeError", fmt::format("slice expected at least 1 argument, got {}", args.pos.size()),
            r);
    if (args.pos.size() == 1)
      return std::make_shared<SliceV>(none(), args.pos[0], none());
    return std::make_shared<SliceV>(args.pos[0], args.pos[1],
                                    args.pos.size() > 2 ? args.pos[2] : none());
  }
  case ClassRole::Range: {
    if (!args.kw.empty())
      raise("TypeError", "range() takes no keyword arguments", r);
    if (args.pos.empty() || args.pos.size() > 3)
      raise("TypeError",
            fmt::format("range expected at {} 1 argument{}, got {}",
                        args.pos.empty() ? "least" : "most", args.pos.empty() ? "" : "s",
                        args.pos.size()),
            r);
    std::vector<int64_t> a;
    for (const V &v : args.pos) {
      if (v->kind == Kind::Float)
        raise("TypeError", "'float' object cannot be interpreted as an integer", r);
      a.push_back(toIndex(v, r, "range()"));
    }
    int64_t lo = a.size() > 1 ? a[0] : 0, hi = a.size() > 1 ? a[1] : a[0];
    int64_t step = a.size() > 2 ? a[2] : 1;
    if (step == 0)
      raise("ValueError", "range() arg 3 must not be zero", r);
    return std::make_shared<RangeV>(lo, hi, step);
  }
  case ClassRole::NoneType:
    if (!args.pos.empty())
      raise("TypeError", "NoneType takes no arguments", r);
    return none();
  default:
    raise("TypeError", "cannot create instances of this type", r);
  }
}

//===----------------------------------------------------------------------===//
// The builtins namespace
//===----------------------------------------------------------------------===//

void Interp::initBuiltins() {
  builtins_ = std::make_shared<Namespace>();
  for (const BuiltinFn &fn : builtinFunctions())
    builtins_->set(fn.name, builtinValue(fn));
  for (const auto &[name, cls] : builtinClasses_)
    if (name != "NoneType" && name != "function" && cls->module == "builtins")
      builtins_->set(name, cls);
  builtins_->set("object", builtinClass(ClassRole::Object));
  // Built-in types dkv has no values of: their names resolve (isinstance of them is
  // false for every value dkv has), making one is refused.
  static const BuiltinFn noValues{
      "<unmodelled type>.__init__",
      +[](Interp &in, CallCtx &c) -> V {
        unsupported(c.range, fmt::format("a {} value (bytes, bytearray, complex and memoryview "
                                         "values are not modelled)",
                                         typeName(*c.self)));
      },
      "", false};
  for (const char *name : {"bytes", "bytearray", "complex", "memoryview"}) {
    ClassP cls = makeClass(name, {builtinClass(ClassRole::Object)}, ClassRole::User, "builtins");
    cls->dict->set("__init__", builtinValue(noValues));
    builtins_->set(name, cls);
  }
  // The interactive prompt's objects (site): opaque.
  for (const char *name : {"license", "copyright", "credits"})
    builtins_->set(name, opaque(fmt::format("`{}` (the interactive prompt's)", name), {}));
  builtins_->set("Ellipsis", ellipsis());
  builtins_->set("NotImplemented", opaque("NotImplemented (binary operator protocols are not "
                                          "modelled)",
                                          {}));
  builtins_->set("__debug__", boolean(true));
  // BaseException.__init__ / object.__init__ for super().__init__(...) in subclasses.
  static const BuiltinFn excInit{"BaseException.__init__",
                                 +[](Interp &in, CallCtx &c) -> V {
                                   if (auto *i = dynCast<InstanceV>(c.self))
                                     in.exceptionArgs(*i, c.args.pos);
                                   return none();
                                 },
                                 "", false};
  builtinClass(ClassRole::BaseException)->dict->set("__init__", builtinValue(excInit));
  static const BuiltinFn objInit{"object.__init__",
                                 +[](Interp &, CallCtx &) -> V { return none(); }, "", false};
  builtinClass(ClassRole::Object)->dict->set("__init__", builtinValue(objInit));
  static const BuiltinFn objSetattr{"object.__setattr__",
                                    +[](Interp &in, CallCtx &c) -> V {
                                      // object.__setattr__(self, name, value): bypasses a
                                      // frozen dataclass's check, as in CPython.
                                      if (c.args.pos.size() != 3)
                                        in.raise("TypeError", "expected 3 arguments", c.range);
                                      auto *i = dynCast<InstanceV>(c.args.pos[0]);
                                      auto *n = dynCast<StrV>(c.args.pos[1]);
                                      if (!i || !n)
                                        unsupported(c.range, "object.__setattr__ on this value");
                                      i->attrs->set(n->s, c.args.pos[2]);
                                      return none();
                                    },
                                    "", false};
  builtinClass(ClassRole::Object)->dict->set("__setattr__", builtinValue(objSetattr));
}

} // namespace dkv::pytrace
