// The standard library that kernel files use (docs/python.md "Modules"): functools,
// math, itertools, dataclasses, enum, typing, collections(.abc), abc, copy, and enough
// of time, os, sys, json, logging, re and warnings for a module to load (what they
// return is opaque). Every name of these modules that dkv does not model is opaque.
#include "pytrace/Interp.h"

#include <fmt/format.h>

#include <cmath>
#include <numeric>

namespace dkv::pytrace {

namespace {

bool isIntLike(const V &v) { return v->kind == Kind::Int || v->kind == Kind::Bool; }
double toDouble(Interp &in, const V &v, SourceRange r) {
  if (auto *f = dynCast<FloatV>(v))
    return f->f;
  if (isIntLike(v))
    return static_cast<double>(v->kind == Kind::Int ? cast<IntV>(v).i : cast<BoolV>(v).b);
  if (v->kind == Kind::Opaque)
    in.opaqueNeeded(v, r, "a math function of it");
  in.raise("TypeError", fmt::format("must be real number, not {}", typeName(*v)), r);
}
V one(Interp &in, CallCtx &c) {
  if (c.args.pos.size() != 1 || !c.args.kw.empty())
    in.raise(
        "TypeError",
        fmt::format("{}() takes exactly one argument ({} given)", c.fn->name, c.args.pos.size()),
        c.range);
  return c.args.pos[0];
}
V floorCeil(Interp &in, CallCtx &c, bool ceil) {
  V x = one(in, c);
  if (isIntLike(x))
    return integer(x->kind == Kind::Int ? cast<IntV>(x).i : cast<BoolV>(x).b);
  if (x->kind == Kind::Opaque)
    return in.opaque(fmt::format("{}() of it", c.fn->name), c.range, x);
  double f = toDouble(in, x, c.range);
  if (std::isinf(f))
    in.raise("OverflowError", "cannot convert float infinity to integer", c.range);
  if (std::isnan(f))
    in.raise("ValueError", "cannot convert float NaN to integer", c.range);
  double v = ceil ? std::ceil(f) : std::floor(f);
  if (std::fabs(v) >= 9.2e18)
    fail(c.range, "python-overflow", "an integer result beyond 64 bits");
  return integer(static_cast<int64_t>(v));
}

// itertools' iterators.
struct ProductIter final : IterState {
  std::vector<std::vector<V>> pools;
  std::vector<size_t> idx;
  bool started = false, done = false;
  V next(Interp &, SourceRange) override {
    if (done)
      return nullptr;
    if (!started) {
      started = true;
      for (const auto &p : pools)
        if (p.empty()) {
          done = true;
          return nullptr;
        }
      idx.assign(pools.size(), 0);
    } else {
      size_t i = pools.size();
      while (i > 0) {
        --i;
        if (++idx[i] < pools[i].size())
          break;
        idx[i] = 0;
        if (i == 0) {
          done = true;
          return nullptr;
        }
      }
      if (pools.empty()) {
        done = true;
        return nullptr;
      }
    }
    std::vector<V> items;
    for (size_t i = 0; i < pools.size(); ++i)
      items.push_back(pools[i][idx[i]]);
    return tuple(std::move(items));
  }
};
struct ChainIter final : IterState {
  std::vector<V> iterables;
  V outer; ///< chain.from_iterable: the iterator of iterables
  size_t i = 0;
  V cur;
  V next(Interp &in, SourceRange r) override {
    while (true) {
      if (cur)
        if (V x = in.next(cur, r))
          return x;
      if (outer) {
        V it = in.next(outer, r);
        if (!it)
          return nullptr;
        cur = in.iter(it, r);
        continue;
      }
      if (i >= iterables.size())
        return nullptr;
      cur = in.iter(iterables[i++], r);
    }
  }
};
struct CountIter final : IterState {
  V cur, step;
  V next(Interp &in, SourceRange r) override {
    V v = cur;
    cur = in.binop(py::BinOpKind::Add, cur, step, r);
    return v;
  }
};
struct RepeatIter final : IterState {
  V value;
  int64_t left = -1;
  V next(Interp &, SourceRange) override {
    if (left == 0)
      return nullptr;
    if (left > 0)
      --left;
    return value;
  }
};
struct IsliceIter final : IterState {
  V it;
  int64_t next_ = 0, stop = -1, step = 1, pos = 0;
  V next(Interp &in, SourceRange r) override {
    while (stop < 0 || pos < stop) {
      V x = in.next(it, r);
      if (!x)
        return nullptr;
      int64_t at = pos++;
      if (at == next_) {
        next_ += step;
        return x;
      }
    }
    return nullptr;
  }
};
struct ListIter final : IterState {
  std::vector<V> items;
  size_t i = 0;
  V next(Interp &, SourceRange) override { return i < items.size() ? items[i++] : nullptr; }
};

V iterOf(std::string name, std::unique_ptr<IterState> s) {
  return std::make_shared<IteratorV>(std::move(name), std::move(s));
}

// functools.lru_cache(user_function) / lru_cache(maxsize=128, typed=False) / cache:
// a wrapper that calls the function once per distinct arguments (equal and of equal
// hash, as a dict key; with `typed` their types too) and returns the kept result after,
// the least recently used dropped beyond maxsize (CPython's functools).
// dataclasses.asdict / astuple: CPython's recursion (_asdict_inner): a dataclass
// instance becomes a dict (a tuple) of its fields' values, lists, tuples (NamedTuples
// keep their class) and dicts are rebuilt with their items converted, and anything else
// is `copy.deepcopy`'d: numbers, strs, None and bools are their own deep copies; of any
// other value the copy is unknown to dkv (opaque).
V deepConvert(Interp &in, const V &v, bool asDict, SourceRange r, int depth) {
  if (depth > 1000)
    in.raiseId("RecursionError", "maximum recursion depth exceeded", r);
  if (auto *inst = dynCast<InstanceV>(v); inst && inst->cls->dataclassFields) {
    if (asDict) {
      auto out = std::make_shared<DictV>();
      for (const std::string &f : *inst->cls->dataclassFields)
        in.dictSet(out->table, string(f),
                   deepConvert(in, in.getAttr(v, f, r), asDict, r, depth + 1), r);
      return out;
    }
    std::vector<V> items;
    for (const std::string &f : *inst->cls->dataclassFields)
      items.push_back(deepConvert(in, in.getAttr(v, f, r), asDict, r, depth + 1));
    return tuple(std::move(items));
  }
  switch (v->kind) {
  case Kind::List:
  case Kind::Tuple: {
    std::vector<V> items;
    for (const V &x : in.toVector(v, r))
      items.push_back(deepConvert(in, x, asDict, r, depth + 1));
    return sameSequence(v, std::move(items));
  }
  case Kind::Dict: {
    auto out = std::make_shared<DictV>();
    for (const Table::Entry &e : cast<DictV>(v).table.entries)
      if (e.live)
        in.dictSet(out->table, deepConvert(in, e.key, asDict, r, depth + 1),
                   deepConvert(in, e.value, asDict, r, depth + 1), r);
    return out;
  }
  case Kind::None:
  case Kind::Bool:
  case Kind::Int:
  case Kind::Float:
  case Kind::Str:
    return v;
  default:
    return in.opaque(fmt::format("copy.deepcopy of a {} (in dataclasses.{})", typeName(*v),
                                 asDict ? "asdict" : "astuple"),
                     r, v);
  }
}

V dataclassValues(Interp &in, CallCtx &c, bool asDict) {
  if (c.args.pos.size() != 1 || !c.args.kw.empty())
    return in.opaque(fmt::format("dataclasses.{} with a factory", asDict ? "asdict" : "astuple"),
                     c.range);
  auto *inst = dynCast<InstanceV>(c.args.pos[0]);
  if (!inst || !inst->cls->dataclassFields)
    in.raise(
        "TypeError",
        fmt::format("{}() should be called on dataclass instances", asDict ? "asdict" : "astuple"),
        c.range);
  return deepConvert(in, c.args.pos[0], asDict, c.range, 0);
}

// What lru_cache accepts as its function (an opaque value too: its calls are opaque).
bool cacheable(Interp &in, const V &f) {
  switch (f->kind) {
  case Kind::Function:
  case Kind::BoundMethod:
  case Kind::Builtin:
  case Kind::Partial:
  case Kind::Class:
  case Kind::Wrapper:
  case Kind::Opaque:
  case Kind::Api:
    return true;
  case Kind::Instance:
    return in.lookupClassAttr(cast<InstanceV>(f).cls, "__call__") != nullptr;
  default:
    return false;
  }
}

V lruWrapper(Interp &in, const V &f, std::optional<int64_t> maxsize, bool typed, SourceRange r) {
  if (!cacheable(in, f))
    in.raiseId("TypeError", "the first argument must be callable", r);
  auto w = std::make_shared<WrapperV>(WrapperV::W::LruCache, f);
  w->cache = std::make_shared<DictV>();
  w->maxsize = maxsize;
  w->typed = typed;
  return w;
}

V lruCache(Interp &in, CallCtx &c) {
  // lru_cache(f): the wrapper with maxsize 128; else a decorator.
  if (c.args.pos.size() == 1 && c.args.kw.empty() && cacheable(in, c.args.pos[0]) &&
      c.args.pos[0]->kind != Kind::Int)
    return lruWrapper(in, c.args.pos[0], 128, false, c.range);
  std::vector<V> a = c.bind(in, {"maxsize", "typed"});
  std::optional<int64_t> maxsize = 128;
  if (a[0]) {
    if (a[0]->kind == Kind::None)
      maxsize = std::nullopt;
    else if (a[0]->kind == Kind::Int || a[0]->kind == Kind::Bool)
      maxsize = std::max<int64_t>(0, in.toIndex(a[0], c.range, "maxsize"));
    else
      in.raiseId("TypeError", "Expected first argument to be an integer, a callable, or None",
                 c.range);
  }
  bool typed = a[1] && in.truth(a[1], c.range, "typed");
  static const BuiltinFn decorate{
      "functools.lru_cache.<decorator>",
      +[](Interp &i2, CallCtx &c2) -> V {
        if (c2.args.pos.size() != 1 || !c2.args.kw.empty())
          i2.raiseId("TypeError", "decorating_function() takes 1 positional argument", c2.range);
        const auto &cfg = cast<TupleV>(c2.self).items;
        std::optional<int64_t> size;
        if (cfg[0]->kind != Kind::None)
          size = cast<IntV>(cfg[0]).i;
        return lruWrapper(i2, c2.args.pos[0], size, cast<BoolV>(cfg[1]).b, c2.range);
      },
      "", false};
  return builtinValue(decorate, tuple({maxsize ? integer(*maxsize) : none(), boolean(typed)}));
}

// A decorator that returns what it decorates (typing.overload, typing.final, ...).
V identity(Interp &in, CallCtx &c) {
  if (c.args.pos.size() == 1 && c.args.kw.empty() &&
      (c.args.pos[0]->kind == Kind::Function || c.args.pos[0]->kind == Kind::Class ||
       c.args.pos[0]->kind == Kind::Partial))
    return c.args.pos[0];
  // A decorator factory (`functools.lru_cache(maxsize=None)`): returns itself.
  (void)in;
  return builtinValue(*c.fn);
}

// dataclasses.dataclass on a class: its fields (annotated names, the bases' first), their
// defaults and factories; the generated __init__, __eq__ and __repr__ are the
// interpreter's (Classes.cpp).
V dataclassOf(Interp &in, const V &clsV, bool frozen, SourceRange r) {
  auto *cls = dynCast<ClassV>(clsV);
  if (!cls)
    in.raise("TypeError", "dataclass() should be called on a class", r);
  std::vector<std::string> fields;
  for (auto it = cls->mro.rbegin(); it != cls->mro.rend(); ++it) {
    const ClassP &b = *it;
    if (b.get() == cls || !b->dataclassFields)
      continue;
    for (const std::string &f : *b->dataclassFields)
      if (std::find(fields.begin(), fields.end(), f) == fields.end())
        fields.push_back(f);
    for (const auto &[k, v] : b->fieldDefault)
      cls->fieldDefault[k] = v;
    for (const auto &[k, v] : b->fieldFactory)
      cls->fieldFactory[k] = v;
  }
  if (auto *ann = dynCast<DictV>(cls->dict->get("__annotations__")))
    for (const V &k : in.tableKeys(ann->table)) {
      const std::string &name = cast<StrV>(k).s;
      if (std::find(fields.begin(), fields.end(), name) == fields.end())
        fields.push_back(name);
      V dflt = cls->dict->get(name);
      if (!dflt)
        continue;
      if (auto *f = apiAs<FieldObj>(dflt)) {
        if (f->dflt)
          cls->fieldDefault[name] = f->dflt;
        if (f->factory)
          cls->fieldFactory[name] = f->factory;
        if (!f->init)
          cls->noInit.push_back(name);
        if (f->dflt)
          cls->dict->set(name, f->dflt);
        else
          cls->dict->erase(name);
        continue;
      }
      if (dflt->kind == Kind::List || dflt->kind == Kind::Dict || dflt->kind == Kind::Set)
        in.raise("ValueError",
                 fmt::format("mutable default {} for field {} is not allowed: use default_factory",
                             typeName(*dflt), name),
                 r);
      cls->fieldDefault[name] = dflt;
    }
  cls->dataclassFields = fields;
  cls->frozen = frozen || cls->frozen;
  std::vector<V> matchArgs;
  for (const std::string &f : fields)
    matchArgs.push_back(string(f));
  cls->dict->set("__match_args__", tuple(std::move(matchArgs)));
  return clsV;
}

// collections.abc classes: isinstance is decided by the built-in type of the value.
V abcClass(Interp &in, const char *name, std::vector<ClassRole> roles) {
  ClassP c =
      in.makeClass(name, {in.builtinClass(ClassRole::Object)}, ClassRole::User, "collections.abc");
  for (ClassRole role : roles)
    in.builtinClass(role)->bases.push_back(c), in.builtinClass(role)->mro.push_back(c);
  return c;
}

// itertools.combinations and, with `perm`, itertools.permutations (r defaults to the
// pool's length there; combinations requires it).
V combinations(Interp &in, CallCtx &c, bool perm) {
  std::vector<V> a = c.bind(in, {"iterable", "r"});
  std::vector<V> pool = in.toVector(a[0], c.range);
  int64_t n = static_cast<int64_t>(pool.size());
  int64_t r = a[1] && a[1]->kind != Kind::None ? in.toIndex(a[1], c.range, "r") : (perm ? n : -1);
  if (r < 0)
    in.raiseId("TypeError", "combinations() missing required argument 'r'", c.range);
  auto s = std::make_unique<ListIter>();
  std::vector<size_t> pick;
  std::vector<bool> used(pool.size(), false);
  std::function<void()> rec = [&]() {
    if (static_cast<int64_t>(pick.size()) == r) {
      std::vector<V> t;
      for (size_t i : pick)
        t.push_back(pool[i]);
      in.alloc(t.size(), c.range);
      s->items.push_back(tuple(std::move(t)));
      return;
    }
    size_t from = perm || pick.empty() ? 0 : pick.back() + 1;
    for (size_t i = from; i < pool.size(); ++i) {
      if (perm && used[i])
        continue;
      used[i] = true;
      pick.push_back(i);
      rec();
      pick.pop_back();
      used[i] = false;
    }
  };
  if (r <= n)
    rec();
  return iterOf(perm ? "permutations" : "combinations", std::move(s));
}

} // namespace

void registerStdlib(Registry &reg) {
  auto fn = [&](std::vector<std::string> names, V (*h)(Interp &, CallCtx &)) {
    std::string shortName = names[0];
    reg.addRow(ApiRow{std::move(names), BuiltinFn{shortName, h, "", false}, nullptr});
  };
  auto constant = [&](std::vector<std::string> names, V (*c)(Interp &)) {
    reg.addRow(ApiRow{std::move(names), BuiltinFn{}, c});
  };
  for (const char *m :
       {"functools", "math",        "itertools",       "dataclasses", "enum",
        "typing",    "collections", "collections.abc", "abc",         "copy",
        "time",      "os",          "os.path",         "sys",         "json",
        "logging",   "re",          "warnings",        "__future__",  "operator",
        "types",     "contextlib",  "inspect",         "string",      "random",
        "pathlib",   "textwrap",    "traceback",       "numbers",     "typing_extensions"})
    reg.addModule(m);

  // functools.
  fn(
      {"functools.partial"}, +[](Interp &in, CallCtx &c) -> V {
        if (c.args.pos.empty())
          in.raiseId("TypeError", "type 'partial' takes at least one argument", c.range);
        auto p = std::make_shared<PartialV>();
        p->fn = c.args.pos[0];
        p->pos.assign(c.args.pos.begin() + 1, c.args.pos.end());
        p->kw = c.args.kw;
        if (auto *inner = dynCast<PartialV>(p->fn)) {
          // partial(partial(f, a), b) flattens, as CPython's does.
          auto flat = std::make_shared<PartialV>();
          flat->fn = inner->fn;
          flat->pos = inner->pos;
          flat->pos.insert(flat->pos.end(), p->pos.begin(), p->pos.end());
          flat->kw = inner->kw;
          for (auto &kv : p->kw) {
            bool replaced = false;
            for (auto &old : flat->kw)
              if (old.first == kv.first)
                old.second = kv.second, replaced = true;
            if (!replaced)
              flat->kw.push_back(kv);
          }
          return flat;
        }
        return p;
      });
  fn(
      {"functools.wraps"}, +[](Interp &in, CallCtx &c) -> V {
        if (c.args.pos.empty())
          in.raiseId("TypeError", "wraps() missing 1 required positional argument: 'wrapped'",
                     c.range);
        static const BuiltinFn apply{"functools.wraps.<decorator>",
                                     +[](Interp &i2, CallCtx &c2) -> V {
                                       if (c2.args.pos.size() != 1)
                                         i2.raiseId("TypeError", "a decorator takes one function",
                                                    c2.range);
                                       V wrapper = c2.args.pos[0];
                                       if (auto *w = dynCast<FunctionV>(wrapper)) {
                                         if (auto *f = dynCast<FunctionV>(c2.self)) {
                                           w->name = f->name;
                                           w->qualname = f->qualname;
                                         }
                                         w->attrs->set("__wrapped__", c2.self);
                                       }
                                       return wrapper;
                                     },
                                     "", false};
        return builtinValue(apply, c.args.pos[0]);
      });
  fn(
      {"functools.cache"}, +[](Interp &in, CallCtx &c) -> V {
        if (c.args.pos.size() != 1 || !c.args.kw.empty())
          in.raiseId("TypeError", "cache() takes exactly one argument", c.range);
        return lruWrapper(in, c.args.pos[0], std::nullopt, false, c.range);
      });
  fn({"functools.lru_cache"}, lruCache);
  fn({"typing.overload", "typing.final", "typing.no_type_check", "typing.runtime_checkable",
      "typing_extensions.override", "typing.override", "abc.abstractmethod", "enum.unique",
      "functools.total_ordering"},
     identity);
  fn(
      {"functools.reduce"}, +[](Interp &in, CallCtx &c) -> V {
        if (c.args.pos.size() < 2 || c.args.pos.size() > 3)
          in.raiseId("TypeError", "reduce expected 2 or 3 arguments", c.range);
        V it = in.iter(c.args.pos[1], c.range);
        V acc = c.args.pos.size() == 3 ? c.args.pos[2] : in.next(it, c.range);
        if (!acc)
          in.raise("TypeError", "reduce() of empty iterable with no initial value", c.range);
        while (V x = in.next(it, c.range))
          acc = in.call(c.args.pos[0], Args{{acc, x}, {}}, c.range);
        return acc;
      });
  fn(
      {"functools.cached_property"}, +[](Interp &in, CallCtx &c) -> V {
        return std::make_shared<WrapperV>(WrapperV::W::Property, one(in, c));
      });

  // math.
  fn(
      {"math.floor"}, +[](Interp &in, CallCtx &c) -> V { return floorCeil(in, c, false); });
  fn(
      {"math.ceil"}, +[](Interp &in, CallCtx &c) -> V { return floorCeil(in, c, true); });
  fn(
      {"math.trunc"}, +[](Interp &in, CallCtx &c) -> V {
        return in.constructBuiltin(ClassRole::Int, Args{{one(in, c)}, {}}, c.range);
      });
  fn(
      {"math.sqrt"}, +[](Interp &in, CallCtx &c) -> V {
        double x = toDouble(in, one(in, c), c.range);
        if (x < 0)
          in.raise("ValueError", "math domain error", c.range);
        return floating(std::sqrt(x));
      });
  fn(
      {"math.log2"}, +[](Interp &in, CallCtx &c) -> V {
        double x = toDouble(in, one(in, c), c.range);
        if (x <= 0)
          in.raise("ValueError", "math domain error", c.range);
        return floating(std::log2(x));
      });
  fn(
      {"math.log"}, +[](Interp &in, CallCtx &c) -> V {
        if (c.args.pos.empty() || c.args.pos.size() > 2)
          in.raiseId("TypeError", "log expected 1 or 2 arguments", c.range);
        double x = toDouble(in, c.args.pos[0], c.range);
        if (x <= 0)
          in.raise("ValueError", "math domain error", c.range);
        if (c.args.pos.size() == 2) {
          double b = toDouble(in, c.args.pos[1], c.range);
          if (b <= 0)
            in.raise("ValueError", "math domain error", c.range);
          if (b == 1)
            in.raise("ZeroDivisionError", "float division by zero", c.range);
          return floating(std::log(x) / std::log(b));
        }
        return floating(std::log(x));
      });
  fn(
      {"math.exp"}, +[](Interp &in, CallCtx &c) -> V {
        double v = std::exp(toDouble(in, one(in, c), c.range));
        if (std::isinf(v))
          in.raise("OverflowError", "math range error", c.range);
        return floating(v);
      });
  fn(
      {"math.fabs"}, +[](Interp &in, CallCtx &c) -> V {
        return floating(std::fabs(toDouble(in, one(in, c), c.range)));
      });
  fn(
      {"math.isnan"}, +[](Interp &in, CallCtx &c) -> V {
        return boolean(std::isnan(toDouble(in, one(in, c), c.range)));
      });
  fn(
      {"math.isinf"}, +[](Interp &in, CallCtx &c) -> V {
        return boolean(std::isinf(toDouble(in, one(in, c), c.range)));
      });
  fn(
      {"math.isfinite"}, +[](Interp &in, CallCtx &c) -> V {
        return boolean(std::isfinite(toDouble(in, one(in, c), c.range)));
      });
  fn(
      {"math.gcd"}, +[](Interp &in, CallCtx &c) -> V {
        int64_t g = 0;
        for (const V &v : c.args.pos)
          g = std::gcd(g, in.toIndex(v, c.range, "math.gcd()"));
        return integer(g < 0 ? -g : g);
      });
  fn(
      {"math.lcm"}, +[](Interp &in, CallCtx &c) -> V {
        int64_t l = 1;
        for (const V &v : c.args.pos) {
          int64_t x = in.toIndex(v, c.range, "math.lcm()");
          if (x == 0)
            return integer(0);
          __int128 res = static_cast<__int128>(l) / std::gcd(l, x) * (x < 0 ? -x : x);
          if (res > INT64_MAX)
            fail(c.range, "python-overflow", "an integer result beyond 64 bits (math.lcm)");
          l = static_cast<int64_t>(res);
        }
        return integer(l);
      });
  fn(
      {"math.isqrt"}, +[](Interp &in, CallCtx &c) -> V {
        int64_t n = in.toIndex(one(in, c), c.range, "math.isqrt()");
        if (n < 0)
          in.raise("ValueError", "isqrt() argument must be nonnegative", c.range);
        int64_t x = static_cast<int64_t>(std::sqrt(static_cast<double>(n)));
        while (static_cast<__int128>(x) * x > n)
          --x;
        while (static_cast<__int128>(x + 1) * (x + 1) <= n)
          ++x;
        return integer(x);
      });
  fn(
      {"math.prod"}, +[](Interp &in, CallCtx &c) -> V {
        std::vector<V> a = c.bind(in, {"iterable", "*", "start"});
        V acc = a[1] ? a[1] : integer(1);
        V it = in.iter(a[0], c.range);
        while (V x = in.next(it, c.range))
          acc = in.binop(py::BinOpKind::Mult, acc, x, c.range);
        return acc;
      });
  fn(
      {"math.isclose"}, +[](Interp &in, CallCtx &c) -> V {
        std::vector<V> a = c.bind(in, {"a", "b", "*", "rel_tol", "abs_tol"});
        double x = toDouble(in, a[0], c.range), y = toDouble(in, a[1], c.range);
        double rel = a[2] ? toDouble(in, a[2], c.range) : 1e-9,
               ab = a[3] ? toDouble(in, a[3], c.range) : 0;
        if (x == y)
          return boolean(true);
        if (std::isinf(x) || std::isinf(y))
          return boolean(false);
        double diff = std::fabs(y - x);
        return boolean(diff <= std::fabs(rel * y) || diff <= std::fabs(rel * x) || diff <= ab);
      });
  constant(
      {"math.pi", "jax.numpy.pi", "numpy.pi"}, +[](Interp &) { return floating(M_PI); });
  constant(
      {"math.e", "jax.numpy.e", "numpy.e"}, +[](Interp &) { return floating(M_E); });
  constant(
      {"math.inf", "jax.numpy.inf", "numpy.inf"}, +[](Interp &) { return floating(INFINITY); });
  constant(
      {"math.nan", "jax.numpy.nan", "numpy.nan"}, +[](Interp &) { return floating(NAN); });

  // itertools.
  fn(
      {"itertools.product"}, +[](Interp &in, CallCtx &c) -> V {
        auto s = std::make_unique<ProductIter>();
        int64_t repeat = 1;
        for (const auto &[k, v] : c.args.kw) {
          if (k != "repeat")
            in.raiseId("TypeError",
                       fmt::format("product() got an unexpected keyword argument '{}'", k),
                       c.range);
          repeat = in.toIndex(v, c.range, "repeat");
        }
        std::vector<std::vector<V>> pools;
        for (const V &a : c.args.pos)
          pools.push_back(in.toVector(a, c.range));
        for (int64_t k = 0; k < repeat; ++k)
          s->pools.insert(s->pools.end(), pools.begin(), pools.end());
        if (s->pools.empty()) {
          auto l = std::make_unique<ListIter>();
          l->items = {tuple({})};
          return iterOf("product", std::move(l));
        }
        return iterOf("product", std::move(s));
      });
  fn(
      {"itertools.chain"}, +[](Interp &, CallCtx &c) -> V {
        auto s = std::make_unique<ChainIter>();
        s->iterables = c.args.pos;
        return iterOf("chain", std::move(s));
      });
  fn(
      {"itertools.chain.from_iterable"}, +[](Interp &in, CallCtx &c) -> V {
        auto s = std::make_unique<ChainIter>();
        s->outer = in.iter(one(in, c), c.range);
        return iterOf("chain", std::move(s));
      });
  fn(
      {"itertools.count"}, +[](Interp &in, CallCtx &c) -> V {
        std::vector<V> a = c.bind(in, {"start", "step"});
        auto s = std::make_unique<CountIter>();
        s->cur = a[0] ? a[0] : integer(0);
        s->step = a[1] ? a[1] : integer(1);
        return iterOf("count", std::move(s));
      });
  fn(
      {"itertools.repeat"}, +[](Interp &in, CallCtx &c) -> V {
        std::vector<V> a = c.bind(in, {"object", "times"});
        auto s = std::make_unique<RepeatIter>();
        s->value = a[0];
        if (a[1])
          s->left = std::max<int64_t>(0, in.toIndex(a[1], c.range, "times"));
        return iterOf("repeat", std::move(s));
      });
  fn(
      {"itertools.islice"}, +[](Interp &in, CallCtx &c) -> V {
        if (c.args.pos.size() < 2 || c.args.pos.size() > 4)
          in.raiseId("TypeError", "islice expected 2 to 4 arguments", c.range);
        auto s = std::make_unique<IsliceIter>();
        s->it = in.iter(c.args.pos[0], c.range);
        auto idx = [&](const V &v, int64_t d) {
          return v->kind == Kind::None ? d : in.toIndex(v, c.range, "islice()");
        };
        if (c.args.pos.size() == 2) {
          s->stop = idx(c.args.pos[1], -1);
        } else {
          s->next_ = idx(c.args.pos[1], 0);
          s->stop = idx(c.args.pos[2], -1);
          if (c.args.pos.size() == 4)
            s->step = idx(c.args.pos[3], 1);
        }
        return iterOf("islice", std::move(s));
      });
  fn(
      {"itertools.accumulate"}, +[](Interp &in, CallCtx &c) -> V {
        std::vector<V> a = c.bind(in, {"iterable", "func", "*", "initial"});
        auto s = std::make_unique<ListIter>();
        V acc = a[2];
        if (acc)
          s->items.push_back(acc);
        V it = in.iter(a[0], c.range);
        while (V x = in.next(it, c.range)) {
          acc = !acc ? x
                : (a[1] && a[1]->kind != Kind::None)
                    ? in.call(a[1], Args{{acc, x}, {}}, c.range)
                    : in.binop(py::BinOpKind::Add, acc, x, c.range);
          s->items.push_back(acc);
        }
        return iterOf("accumulate", std::move(s));
      });
  fn(
      {"itertools.zip_longest"}, +[](Interp &in, CallCtx &c) -> V {
        V fill = none();
        for (const auto &[k, v] : c.args.kw)
          if (k == "fillvalue")
            fill = v;
        std::vector<std::vector<V>> lists;
        size_t n = 0;
        for (const V &x : c.args.pos) {
          lists.push_back(in.toVector(x, c.range));
          n = std::max(n, lists.back().size());
        }
        auto s = std::make_unique<ListIter>();
        for (size_t i = 0; i < n; ++i) {
          std::vector<V> t;
          for (const auto &l : lists)
            t.push_back(i < l.size() ? l[i] : fill);
          s->items.push_back(tuple(std::move(t)));
        }
        return iterOf("zip_longest", std::move(s));
      });
  fn(
      {"itertools.combinations"},
      +[](Interp &in, CallCtx &c) -> V { return combinations(in, c, false); });
  fn(
      {"itertools.permutations"},
      +[](Interp &in, CallCtx &c) -> V { return combinations(in, c, true); });

  // dataclasses.
  fn(
      {"dataclasses.dataclass"}, +[](Interp &in, CallCtx &c) -> V {
        bool frozen = false;
        for (const auto &[k, v] : c.args.kw) {
          if (k == "frozen")
            frozen = in.truth(v, c.range, "frozen");
          else if (k == "kw_only" || k == "slots" || k == "match_args")
            if (in.truth(v, c.range, k))
              unsupported(c.range, fmt::format("dataclass({}=True)", k));
        }
        if (c.args.pos.empty()) {
          // dataclass(frozen=True) as a factory.
          auto p = std::make_shared<PartialV>();
          p->fn = builtinValue(*c.fn);
          p->kw = c.args.kw;
          return p;
        }
        return dataclassOf(in, c.args.pos[0], frozen, c.range);
      });
  fn(
      {"dataclasses.field"}, +[](Interp &in, CallCtx &c) -> V {
        std::vector<V> a = c.bind(in, {"*", "default", "default_factory", "init", "repr", "hash",
                                       "compare", "metadata", "kw_only"});
        FieldObj f;
        f.dflt = a[0];
        f.factory = a[1];
        f.init = !a[2] || in.truth(a[2], c.range, "init");
        return makeApi(f);
      });
  fn(
      {"dataclasses.replace"}, +[](Interp &in, CallCtx &c) -> V {
        if (c.args.pos.size() != 1)
          in.raiseId("TypeError", "replace() takes 1 positional argument", c.range);
        auto *inst = dynCast<InstanceV>(c.args.pos[0]);
        if (!inst || !inst->cls->dataclassFields)
          in.raise("TypeError", "replace() should be called on dataclass instances", c.range);
        Args args;
        for (const std::string &f : *inst->cls->dataclassFields) {
          V v = inst->attrs->get(f);
          for (const auto &[k, x] : c.args.kw)
            if (k == f)
              v = x;
          args.kw.emplace_back(f, v);
        }
        return in.callClass(inst->cls, std::move(args), c.range);
      });
  // dataclasses.fields(obj or class): a Field per field, in order (its `name`, `init`,
  // `default`; the rest opaque).
  fn(
      {"dataclasses.fields"}, +[](Interp &in, CallCtx &c) -> V {
        V x = one(in, c);
        ClassP cls = x->kind == Kind::Class      ? std::static_pointer_cast<ClassV>(x)
                     : x->kind == Kind::Instance ? cast<InstanceV>(x).cls
                                                 : nullptr;
        if (!cls || !cls->dataclassFields)
          in.raise("TypeError", "must be called with a dataclass type or instance", c.range);
        std::vector<V> out;
        for (const std::string &f : *cls->dataclassFields) {
          FieldObj field;
          field.name = f;
          if (auto it = cls->fieldDefault.find(f); it != cls->fieldDefault.end())
            field.dflt = it->second;
          if (auto it = cls->fieldFactory.find(f); it != cls->fieldFactory.end())
            field.factory = it->second;
          field.init = std::find(cls->noInit.begin(), cls->noInit.end(), f) == cls->noInit.end();
          out.push_back(makeApi(std::move(field)));
        }
        return tuple(std::move(out));
      });
  fn(
      {"dataclasses.asdict"},
      +[](Interp &in, CallCtx &c) -> V { return dataclassValues(in, c, true); });
  fn(
      {"dataclasses.astuple"},
      +[](Interp &in, CallCtx &c) -> V { return dataclassValues(in, c, false); });
  fn(
      {"dataclasses.is_dataclass"}, +[](Interp &in, CallCtx &c) -> V {
        V x = one(in, c);
        if (auto *cl = dynCast<ClassV>(x))
          return boolean(cl->dataclassFields.has_value());
        if (auto *i = dynCast<InstanceV>(x))
          return boolean(i->cls->dataclassFields.has_value());
        return boolean(false);
      });
  constant(
      {"dataclasses.FrozenInstanceError"},
      +[](Interp &in) -> V { return in.exceptionClass("FrozenInstanceError"); });

  // enum.
  constant(
      {"enum.Enum"}, +[](Interp &in) -> V {
        return in.makeClass("Enum", {in.builtinClass(ClassRole::Object)}, ClassRole::Enum, "enum");
      });
  fn(
      {"enum.auto"}, +[](Interp &, CallCtx &) -> V { return makeApi(AutoObj{}); });
  fn(
      {"enum.IntEnum", "enum.Flag", "enum.IntFlag", "enum.StrEnum"},
      +[](Interp &, CallCtx &c) -> V {
        unsupported(c.range, fmt::format("{} (an enum mixed with a data type)", c.fn->name));
      });

  // typing.
  constant(
      {"typing.TYPE_CHECKING"}, +[](Interp &) { return boolean(false); });
  fn(
      {"typing.cast"}, +[](Interp &in, CallCtx &c) -> V {
        if (c.args.pos.size() != 2)
          in.raiseId("TypeError", "cast() takes 2 arguments", c.range);
        return c.args.pos[1];
      });
  fn(
      {"typing.TypeVar", "typing.NewType", "typing.ParamSpec"}, +[](Interp &in, CallCtx &c) -> V {
        return in.opaque(fmt::format("a {} (typing)", c.fn->name), c.range);
      });

  // collections.
  fn(
      {"collections.OrderedDict"}, +[](Interp &in, CallCtx &c) -> V {
        return in.constructBuiltin(ClassRole::Dict, c.args, c.range);
      });
  fn(
      {"collections.namedtuple", "collections.defaultdict", "collections.Counter",
       "collections.deque"},
      +[](Interp &, CallCtx &c) -> V {
        unsupported(c.range, fmt::format("{} is not modelled by dkv", c.fn->name));
      });
  fn(
      {"typing.NamedTuple"}, +[](Interp &, CallCtx &c) -> V {
        unsupported(c.range, fmt::format("{} is not modelled by dkv", c.fn->name));
      });
  constant(
      {"collections.abc.Sequence", "typing.Sequence"}, +[](Interp &in) -> V {
        return abcClass(in, "Sequence",
                        {ClassRole::List, ClassRole::Tuple, ClassRole::Str, ClassRole::Range});
      });
  constant(
      {"collections.abc.Mapping", "typing.Mapping"},
      +[](Interp &in) -> V { return abcClass(in, "Mapping", {ClassRole::Dict}); });

  // abc.
  constant(
      {"abc.ABC"}, +[](Interp &in) -> V {
        return in.makeClass("ABC", {in.builtinClass(ClassRole::Object)}, ClassRole::User, "abc");
      });

  // copy.
  fn(
      {"copy.copy"}, +[](Interp &in, CallCtx &c) -> V {
        V x = one(in, c);
        switch (x->kind) {
        case Kind::List:
          return list(cast<ListV>(x).items);
        case Kind::Dict:
        case Kind::Set:
          return in.call(in.getAttr(x, "copy", c.range), Args{}, c.range);
        case Kind::Instance: {
          auto &src = cast<InstanceV>(x);
          auto out = in.track(std::make_shared<InstanceV>(src.cls));
          *out->attrs = *src.attrs;
          return out;
        }
        default:
          return x;
        }
      });

  // time, os, sys, logging, warnings: enough for a module to load.
  fn(
      {"time.sleep", "logging.basicConfig", "warnings.warn", "warnings.filterwarnings",
       "warnings.simplefilter"},
      +[](Interp &, CallCtx &) -> V { return none(); });
  fn(
      {"sys.exit"}, +[](Interp &in, CallCtx &c) -> V {
        Args args;
        if (!c.args.pos.empty())
          args.pos.push_back(c.args.pos[0]);
        throw PyRaise{
            in.makeException(in.exceptionClass("SystemExit"), std::move(args)), c.range, "", {}, 0};
      });
  constant(
      {"sys.maxsize"}, +[](Interp &) { return integer(INT64_MAX); });
  // sys.modules: the modules the file loaded so far (docs/python.md "Modules").
  constant(
      {"sys.modules"}, +[](Interp &in) { return in.sysModules(); });
  fn(
      {"types.ModuleType"}, +[](Interp &in, CallCtx &c) -> V {
        auto a = c.bind(in, {"name", "doc"});
        auto *name = a[0] ? dynCast<StrV>(a[0]) : nullptr;
        if (!a[0])
          in.raise("TypeError", "module.__init__() missing required argument 'name' (pos 1)",
                   c.range);
        if (!name)
          in.raise(
              "TypeError",
              fmt::format("module.__init__() argument 'name' must be str, not {}", typeName(*a[0])),
              c.range);
        auto m = std::make_shared<ModuleV>(name->s);
        m->dict->set("__name__", a[0]);
        m->dict->set("__doc__", a[1] ? a[1] : none());
        m->dict->set("__package__", none());
        m->dict->set("__loader__", none());
        m->dict->set("__spec__", none());
        return m;
      });
}

V Interp::cachedCall(WrapperV &w, Args args, SourceRange r) {
  if (w.maxsize && *w.maxsize == 0) // no cache: every call runs
    return call(w.fn, std::move(args), r);
  // The key, as CPython's functools builds it (_make_key): one positional argument of
  // exactly int or str is its own key; other calls without keywords the tuple of their
  // arguments; with keywords the arguments, a marker and each keyword and value in order
  // (f(a=1) and f(1) are two calls); with `typed` the arguments' types after. So f(1) and
  // f(1.0) are two calls (1 against the tuple (1.0,)), f(1, 2) and f(1.0, 2) one.
  static const BuiltinFn kwdMarkFn{"functools._kwd_mark", nullptr, "", false};
  static const V kwdMark = builtinValue(kwdMarkFn);
  V key;
  if (args.kw.empty() && !w.typed) {
    const V &one = args.pos.size() == 1 ? args.pos[0] : nullptr;
    if (one && (one->kind == Kind::Int || one->kind == Kind::Str) && !scalarOfType(one))
      key = one;
    else
      key = tuple(args.pos);
  } else {
    std::vector<V> items = args.pos;
    if (!args.kw.empty()) {
      items.push_back(kwdMark);
      for (const auto &[k, v] : args.kw) {
        items.push_back(string(k));
        items.push_back(v);
      }
    }
    if (w.typed) {
      auto typeV = [&](const V &v) -> V {
        ClassP c = typeOf(v);
        if (!c)
          unsupported(r, fmt::format("lru_cache(typed=True) of an argument whose type dkv does "
                                     "not know (a {})",
                                     typeName(*v)));
        return c;
      };
      for (const V &v : args.pos)
        items.push_back(typeV(v));
      for (const auto &kv : args.kw)
        items.push_back(typeV(kv.second));
    }
    key = tuple(std::move(items));
  }
  Table &t = cast<DictV>(w.cache).table;
  Hash h = hashOf(key, r); // an unhashable argument is CPython's TypeError too
  if (auto at = tableFind(t, key, h, r)) {
    V result = t.entries[*at].value;
    if (w.maxsize) { // now the most recently used
      dictDel(t, key, r);
      dictSet(t, key, result, r);
    }
    return result;
  }
  V cache = w.cache; // a cache_clear() inside the call replaces it
  V result = call(w.fn, std::move(args), r);
  Table &now = cast<DictV>(w.cache).table;
  if (w.cache == cache && tableFind(now, key, h, r)) // a recursive call kept it first
    return result;
  if (w.maxsize && static_cast<int64_t>(now.size) >= *w.maxsize)
    for (const Table::Entry &e : now.entries)
      if (e.live) {
        V oldest = e.key;
        dictDel(now, oldest, r);
        break;
      }
  dictSet(now, key, result, r);
  return result;
}

} // namespace dkv::pytrace
