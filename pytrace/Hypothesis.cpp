// Property-based tests (docs/python.md "Hypothesis"): `hypothesis.given` test methods
// become one instance per example. The strategies of `hypothesis.strategies` that test
// files use are modelled as choices: every draw picks one of N alternatives, so an
// example is a sequence of choices (as Hypothesis itself represents its test data). When
// the strategies have at most max_examples examples, every example is enumerated (the
// choice sequences in lexicographic order, as parameterized.product lists its cases);
// otherwise max_examples are drawn with a seeded PRNG whose seed the verdict names.
#include "pytrace/Interp.h"

#include <fmt/format.h>

#include <algorithm>
#include <random>
#include <set>

namespace dkv::pytrace {

/// The choices of one example: those of `prefix` first, then the first alternative (when
/// enumerating) or a random one (when drawing).
struct Interp::Chooser {
  std::vector<uint64_t> prefix;
  std::vector<uint64_t> choices, sizes;
  std::mt19937_64 *rng = nullptr;
  uint64_t choose(uint64_t n) {
    uint64_t c = 0;
    if (choices.size() < prefix.size()) {
      c = prefix[choices.size()];
    } else if (rng && n > 1) {
      // Uniform without modulo bias: reject the top partial block of 2^64.
      const uint64_t limit = UINT64_MAX - UINT64_MAX % n;
      uint64_t x = (*rng)();
      while (x >= limit)
        x = (*rng)();
      c = x % n;
    }
    choices.push_back(c);
    sizes.push_back(n);
    return c;
  }
};

namespace {

/// A filter rejected the example being drawn (hypothesis's UnsatisfiedAssumption).
struct Rejected {};

/// Hypothesis's default `max_examples` (hypothesis.settings.default).
constexpr int64_t kDefaultMaxExamples = 100;
/// Runs of the strategies per example before dkv gives up finding max_examples of them
/// (filters rejecting, repeated draws).
constexpr int64_t kRunsPerExample = 10;

V strategy(StrategyObj s) { return makeApi(std::move(s)); }

const StrategyObj &asStrategy(Interp &in, const V &v, SourceRange r) {
  if (auto *s = apiAs<StrategyObj>(v))
    return *s;
  if (v->kind == Kind::Opaque)
    in.opaqueNeeded(v, r, "a hypothesis strategy");
  in.raise("InvalidArgument",
           fmt::format("Expected a SearchStrategy but got {}",
                       in.repr(v, r).value_or("<" + typeName(*v) + ">")),
           r);
}

int64_t intArg(Interp &in, const V &v, SourceRange r, std::string_view what) {
  if (v->kind == Kind::Int)
    return cast<IntV>(v).i;
  if (v->kind == Kind::Bool)
    return cast<BoolV>(v).b ? 1 : 0;
  if (v->kind == Kind::Opaque)
    in.opaqueNeeded(v, r, what);
  in.raise("InvalidArgument", fmt::format("{} must be an integer", what), r);
}

std::string reprOf(Interp &in, const V &v, SourceRange r) {
  return in.repr(v, r).value_or("<" + typeName(*v) + ">");
}

/// The strategies of `tuples(...)` / `one_of(...)` (one_of also takes one list of them).
std::vector<V> strategies(Interp &in, const CallCtx &c, bool oneList) {
  std::vector<V> items = c.args.pos;
  if (oneList && items.size() == 1 && !apiAs<StrategyObj>(items[0]))
    items = in.toVector(items[0], c.range);
  for (const V &s : items)
    asStrategy(in, s, c.range);
  return items;
}

std::string joinText(Interp &in, const std::vector<V> &items, SourceRange r) {
  std::string out;
  for (const V &v : items)
    out += (out.empty() ? "" : ", ") + reprOf(in, v, r);
  return out;
}

std::optional<int64_t> maxExamplesArg(Interp &in, const CallCtx &c) {
  for (const auto &[k, v] : c.args.kw)
    if (k == "max_examples") {
      int64_t n = intArg(in, v, c.range, "max_examples");
      if (n < 1)
        in.raise("InvalidArgument", fmt::format("max_examples={} should be at least one", n),
                 c.range);
      return n;
    }
  return std::nullopt;
}

} // namespace

V Interp::hypothesisDraw(const V &sv, SourceRange r) {
  if (!chooser_)
    raise("InvalidArgument",
          "draw() is only valid while hypothesis draws an example (dkv draws them for a "
          "@given test)",
          r);
  const StrategyObj &s = asStrategy(*this, sv, r);
  if (!s.refusal.empty())
    unsupported(s.at, s.refusal);
  switch (s.k) {
  case StrategyObj::K::SampledFrom:
    return s.items[chooser_->choose(s.items.size())];
  case StrategyObj::K::Booleans:
    return boolean(chooser_->choose(2) == 1);
  case StrategyObj::K::Just:
    return s.value;
  case StrategyObj::K::Integers:
    return integer(s.lo +
                   static_cast<int64_t>(chooser_->choose(static_cast<uint64_t>(s.hi - s.lo) + 1)));
  case StrategyObj::K::Tuples: {
    std::vector<V> out;
    for (const V &e : s.items)
      out.push_back(hypothesisDraw(e, r));
    return tuple(std::move(out));
  }
  case StrategyObj::K::Lists: {
    int64_t n =
        s.lo + static_cast<int64_t>(chooser_->choose(static_cast<uint64_t>(s.hi - s.lo) + 1));
    std::vector<V> out;
    for (int64_t i = 0; i < n; ++i)
      out.push_back(hypothesisDraw(s.items[0], r));
    return list(std::move(out));
  }
  case StrategyObj::K::OneOf:
    return hypothesisDraw(s.items[chooser_->choose(s.items.size())], r);
  case StrategyObj::K::Composite: {
    Args args = s.args;
    args.pos.insert(args.pos.begin(), makeApi(DrawObj{}));
    return call(s.value, std::move(args), r);
  }
  case StrategyObj::K::Map:
    return call(s.value, Args{{hypothesisDraw(s.inner, r)}, {}}, r);
  case StrategyObj::K::Filter: {
    V v = hypothesisDraw(s.inner, r);
    if (!truth(call(s.value, Args{{v}, {}}, r), r, "the predicate of a hypothesis filter"))
      throw Rejected{};
    return v;
  }
  }
  return none();
}

std::vector<HypothesisExample> Interp::hypothesisExamples(const GivenObj &g, SourceRange r) {
  const int64_t maxExamples =
      g.maxExamples.value_or(hypothesisMaxExamples_.value_or(kDefaultMaxExamples));
  // The parameters the positional strategies fill: the rightmost positional ones, as
  // hypothesis binds them (by name).
  std::vector<std::string> names;
  if (!g.pos.empty()) {
    auto *f = dynCast<FunctionV>(g.fn);
    if (!f)
      unsupported(r, "@hypothesis.given with positional strategies on a callable that is not a "
                     "Python function");
    std::vector<std::string> params;
    for (const py::Param &p : *f->params)
      if (p.kind == py::ParamKind::PositionalOnly || p.kind == py::ParamKind::Positional)
        params.push_back(p.name);
    if (g.pos.size() > params.size())
      raise("InvalidArgument",
            fmt::format("Too many positional arguments for {}() were passed to @given - "
                        "expected at most {} arguments, but got {}",
                        f->name, params.size(), g.pos.size()),
            r);
    names.assign(params.end() - static_cast<std::ptrdiff_t>(g.pos.size()), params.end());
  }
  struct Drawn {
    std::vector<uint64_t> choices;
    std::vector<std::pair<std::string, V>> kw;
  };
  // One run of the strategies; nullopt when a filter rejects it.
  auto run = [&](Chooser &ch) -> std::optional<Drawn> {
    Chooser *saved = chooser_;
    chooser_ = &ch;
    struct Restore {
      Chooser *&slot, *saved;
      ~Restore() { slot = saved; }
    } restore{chooser_, saved};
    Drawn d;
    try {
      for (size_t i = 0; i < g.pos.size(); ++i)
        d.kw.emplace_back(names[i], hypothesisDraw(g.pos[i], r));
      for (const auto &[k, s] : g.kw)
        d.kw.emplace_back(k, hypothesisDraw(s, r));
    } catch (Rejected &) {
      return std::nullopt;
    }
    d.choices = ch.choices;
    return d;
  };
  const int64_t maxRuns = maxExamples * kRunsPerExample;
  std::vector<Drawn> found;
  // Enumerate the choice sequences in lexicographic order (an odometer over a tree whose
  // branching each run reports) until the space is exhausted or exceeds max_examples.
  bool whole = true;
  {
    std::vector<uint64_t> prefix;
    int64_t runs = 0;
    while (true) {
      Chooser ch;
      ch.prefix = prefix;
      std::optional<Drawn> d = run(ch);
      if (d)
        found.push_back(std::move(*d));
      if (static_cast<int64_t>(found.size()) > maxExamples || ++runs > maxRuns) {
        whole = false;
        break;
      }
      size_t i = ch.choices.size();
      while (i > 0 && ch.choices[i - 1] + 1 >= ch.sizes[i - 1])
        --i;
      if (i == 0)
        break;
      prefix.assign(ch.choices.begin(), ch.choices.begin() + static_cast<std::ptrdiff_t>(i));
      ++prefix.back();
    }
  }
  const uint64_t seed = options_.hypothesisSeed;
  if (!whole) {
    // Too many examples: max_examples of them, the simplest (every first alternative, the
    // example hypothesis shrinks towards) then drawn uniformly per choice, distinct.
    // (The first run of the enumeration is the simplest; a filter may have rejected it.)
    const bool simplest =
        !found.empty() && std::all_of(found[0].choices.begin(), found[0].choices.end(),
                                      [](uint64_t c) { return c == 0; });
    found.resize(simplest ? 1 : 0);
    std::set<std::vector<uint64_t>> seen;
    for (const Drawn &d : found)
      seen.insert(d.choices);
    std::mt19937_64 rng(seed);
    for (int64_t runs = 0; static_cast<int64_t>(found.size()) < maxExamples && runs < maxRuns;
         ++runs) {
      Chooser ch;
      ch.rng = &rng;
      std::optional<Drawn> d = run(ch);
      if (d && seen.insert(d->choices).second)
        found.push_back(std::move(*d));
    }
  }
  if (found.empty())
    raise("Unsatisfiable",
          fmt::format("Unable to satisfy assumptions of the test: every one of {} runs of its "
                      "strategies was rejected by a filter",
                      maxRuns),
          r);
  std::vector<HypothesisExample> out;
  for (size_t i = 0; i < found.size(); ++i) {
    HypothesisExample e;
    e.kw = found[i].kw;
    e.label = std::to_string(i);
    std::string values;
    for (const auto &[k, v] : e.kw)
      values += fmt::format("{}{}={}", values.empty() ? "" : ", ", k, reprOf(*this, v, r));
    e.note = whole ? fmt::format("hypothesis example {} of all {} ({})", i, found.size(), values)
                   : fmt::format("hypothesis example {} of {} drawn with seed {} ({}; this "
                                 "example only, not the rest of its strategies)",
                                 i, found.size(), seed, values);
    out.push_back(std::move(e));
  }
  return out;
}

V Interp::callHypothesisObject(ApiObject &a, Args &args, SourceRange r) {
  if (std::get_if<DrawObj>(&a.data)) {
    if (args.pos.size() != 1 || !args.kw.empty())
      raise("TypeError", "draw() takes one strategy", r);
    return hypothesisDraw(args.pos[0], r);
  }
  if (auto *c = std::get_if<CompositeObj>(&a.data)) {
    StrategyObj s;
    s.k = StrategyObj::K::Composite;
    s.value = c->fn;
    s.args = args;
    auto *f = dynCast<FunctionV>(c->fn);
    s.text = fmt::format("{}()", f ? f->name : "composite");
    return strategy(std::move(s));
  }
  if (auto *s = std::get_if<SettingsObj>(&a.data)) {
    // `@settings(...)` on a test, under or over `@given`.
    if (args.pos.size() != 1 || !args.kw.empty())
      raise("TypeError", "settings() as a decorator takes the test", r);
    if (auto *g = apiAs<GivenObj>(args.pos[0])) {
      GivenObj out = *g;
      if (s->maxExamples)
        out.maxExamples = s->maxExamples;
      return makeApi(std::move(out));
    }
    if (auto *f = dynCast<FunctionV>(args.pos[0])) {
      if (s->maxExamples)
        f->attrs->set("__dkv_hypothesis_max_examples__", integer(*s->maxExamples));
      return args.pos[0];
    }
    unsupported(r, "@hypothesis.settings on something that is not a test function");
  }
  if (auto *g = std::get_if<GivenObj>(&a.data)) {
    if (g->fn)
      unsupported(r, "calling a @hypothesis.given test directly (dkv runs its examples as the "
                     "test's instances)");
    if (args.pos.size() != 1 || !args.kw.empty())
      raise("TypeError", "given() as a decorator takes the test", r);
    GivenObj out = *g;
    out.fn = args.pos[0];
    if (auto *f = dynCast<FunctionV>(out.fn))
      if (V m = f->attrs->get("__dkv_hypothesis_max_examples__"))
        out.maxExamples = cast<IntV>(m).i;
    return makeApi(std::move(out));
  }
  return nullptr;
}

namespace {

// `s.map(f)` / `s.filter(f)`: a strategy drawing from `s`, then mapping or filtering.
V derived(Interp &in, CallCtx &c, StrategyObj::K k) {
  if (c.args.pos.size() != 1 || !c.args.kw.empty())
    in.raise("TypeError", fmt::format("{}() takes one function", c.fn->name), c.range);
  StrategyObj m;
  m.k = k;
  m.inner = c.self;
  m.value = c.args.pos[0];
  m.text = fmt::format("{}.{}(...)", std::get<StrategyObj>(cast<ApiObject>(c.self).data).text,
                       k == StrategyObj::K::Map ? "map" : "filter");
  return strategy(std::move(m));
}

const BuiltinFn kMap{
    "map", +[](Interp &in, CallCtx &c) -> V { return derived(in, c, StrategyObj::K::Map); }};
const BuiltinFn kFilter{
    "filter", +[](Interp &in, CallCtx &c) -> V { return derived(in, c, StrategyObj::K::Filter); }};

const AttrRow<ApiObject> kStrategyAttrs[] = {
    {"map",
     [](Interp &, const ApiObject &, const V &self, SourceRange) -> V {
       return builtinValue(kMap, self);
     }},
    {"filter",
     [](Interp &, const ApiObject &, const V &self, SourceRange) -> V {
       return builtinValue(kFilter, self);
     }},
};

} // namespace

V Interp::hypothesisAttr(const V &obj, ApiObject &a, const std::string &name, SourceRange r) {
  if (!std::get_if<StrategyObj>(&a.data))
    return nullptr;
  return readAttr(kStrategyAttrs, *this, obj, name, r);
}

void registerHypothesis(Registry &reg) {
  auto fn = [&](std::vector<std::string> names, V (*h)(Interp &, CallCtx &)) {
    std::string shortName = names[0].substr(names[0].rfind('.') + 1);
    reg.addRow(ApiRow{std::move(names), BuiltinFn{shortName, h, "", false}, nullptr});
  };
  reg.addModule("hypothesis");
  reg.addModule("hypothesis.strategies");
  reg.addModule("jax._src.hypothesis_test_util");

  fn(
      {"hypothesis.strategies.sampled_from"}, +[](Interp &in, CallCtx &c) -> V {
        std::vector<V> a = c.bind(in, {"elements"});
        if (!a[0])
          in.raiseId("TypeError",
                     "sampled_from() missing 1 required positional argument: "
                     "'elements'",
                     c.range);
        if (a[0]->kind == Kind::Set)
          unsupported(c.range, "sampled_from() of a set (its order is CPython's hash order)");
        StrategyObj s;
        s.k = StrategyObj::K::SampledFrom;
        s.items = in.toVector(a[0], c.range);
        if (s.items.empty())
          in.raise("InvalidArgument", "sampled_from() of an empty collection draws nothing",
                   c.range);
        s.text = fmt::format("sampled_from([{}])", joinText(in, s.items, c.range));
        return strategy(std::move(s));
      });
  fn(
      {"hypothesis.strategies.booleans"}, +[](Interp &in, CallCtx &c) -> V {
        c.bind(in, {});
        StrategyObj s;
        s.k = StrategyObj::K::Booleans;
        s.text = "booleans()";
        return strategy(std::move(s));
      });
  fn(
      {"hypothesis.strategies.just"}, +[](Interp &in, CallCtx &c) -> V {
        std::vector<V> a = c.bind(in, {"value"});
        if (!a[0])
          in.raiseId("TypeError", "just() missing 1 required positional argument: 'value'",
                     c.range);
        StrategyObj s;
        s.k = StrategyObj::K::Just;
        s.value = a[0];
        s.text = fmt::format("just({})", reprOf(in, a[0], c.range));
        return strategy(std::move(s));
      });
  fn(
      {"hypothesis.strategies.integers"}, +[](Interp &in, CallCtx &c) -> V {
        std::vector<V> a = c.bind(in, {"min_value", "max_value"});
        StrategyObj s;
        s.k = StrategyObj::K::Integers;
        s.at = c.range;
        if (!a[0] || !a[1] || a[0]->kind == Kind::None || a[1]->kind == Kind::None) {
          s.refusal = "hypothesis.strategies.integers() without both bounds (dkv draws from a "
                      "finite range only: give min_value and max_value)";
          s.text = "integers()";
          return strategy(std::move(s));
        }
        s.lo = intArg(in, a[0], c.range, "min_value");
        s.hi = intArg(in, a[1], c.range, "max_value");
        if (s.lo > s.hi)
          in.raise("InvalidArgument",
                   fmt::format("Cannot have max_value={} < min_value={}", s.hi, s.lo), c.range);
        if (static_cast<uint64_t>(s.hi) - static_cast<uint64_t>(s.lo) >= (uint64_t{1} << 62))
          unsupported(c.range, "hypothesis.strategies.integers() over more than 2**62 values");
        s.text = fmt::format("integers({}, {})", s.lo, s.hi);
        return strategy(std::move(s));
      });
  fn(
      {"hypothesis.strategies.tuples"}, +[](Interp &in, CallCtx &c) -> V {
        if (!c.args.kw.empty())
          in.raiseId("TypeError", "tuples() takes no keyword arguments", c.range);
        StrategyObj s;
        s.k = StrategyObj::K::Tuples;
        s.items = strategies(in, c, false);
        s.text = fmt::format("tuples({})", joinText(in, s.items, c.range));
        return strategy(std::move(s));
      });
  fn(
      {"hypothesis.strategies.one_of"}, +[](Interp &in, CallCtx &c) -> V {
        if (!c.args.kw.empty())
          in.raiseId("TypeError", "one_of() takes no keyword arguments", c.range);
        StrategyObj s;
        s.k = StrategyObj::K::OneOf;
        s.items = strategies(in, c, true);
        if (s.items.empty())
          unsupported(c.range, "one_of() of no strategies (hypothesis's nothing())");
        s.text = fmt::format("one_of({})", joinText(in, s.items, c.range));
        return strategy(std::move(s));
      });
  fn(
      {"hypothesis.strategies.lists"}, +[](Interp &in, CallCtx &c) -> V {
        std::vector<V> a =
            c.bind(in, {"elements", "min_size", "max_size", "*", "unique_by", "unique"});
        if (!a[0])
          in.raiseId("TypeError", "lists() missing 1 required positional argument: 'elements'",
                     c.range);
        if ((a[3] && a[3]->kind != Kind::None) ||
            (a[4] && !(a[4]->kind == Kind::Bool && !cast<BoolV>(a[4]).b)))
          unsupported(c.range, "lists() with unique elements");
        StrategyObj s;
        s.k = StrategyObj::K::Lists;
        s.items = {a[0]};
        s.at = c.range;
        asStrategy(in, a[0], c.range);
        if (!a[2] || a[2]->kind == Kind::None) {
          s.refusal = "hypothesis.strategies.lists() without max_size (dkv draws lists of "
                      "bounded size only)";
          s.text = "lists()";
          return strategy(std::move(s));
        }
        s.lo = a[1] ? intArg(in, a[1], c.range, "min_size") : 0;
        s.hi = intArg(in, a[2], c.range, "max_size");
        if (s.lo < 0 || s.hi < s.lo)
          in.raise("InvalidArgument",
                   fmt::format("Cannot have max_size={} < min_size={}", s.hi, s.lo), c.range);
        if (s.hi > 4096)
          unsupported(c.range, "hypothesis.strategies.lists() of more than 4096 elements");
        s.text = fmt::format("lists({}, min_size={}, max_size={})", reprOf(in, a[0], c.range), s.lo,
                             s.hi);
        return strategy(std::move(s));
      });
  fn(
      {"hypothesis.strategies.composite"}, +[](Interp &in, CallCtx &c) -> V {
        if (c.args.pos.size() != 1 || !c.args.kw.empty())
          in.raiseId("TypeError", "composite() takes one function", c.range);
        if (c.args.pos[0]->kind != Kind::Function)
          unsupported(c.range, "@hypothesis.strategies.composite on a callable that is not a "
                               "Python function");
        return makeApi(CompositeObj{c.args.pos[0]});
      });
  fn(
      {"hypothesis.given"}, +[](Interp &in, CallCtx &c) -> V {
        if (!c.args.pos.empty() && !c.args.kw.empty())
          in.raise("InvalidArgument", "Cannot mix positional and keyword arguments for examples",
                   c.range);
        if (c.args.pos.empty() && c.args.kw.empty())
          in.raise("InvalidArgument", "given must be called with at least one argument", c.range);
        GivenObj g;
        g.pos = c.args.pos;
        g.kw = c.args.kw;
        for (const V &s : g.pos)
          asStrategy(in, s, c.range);
        for (const auto &kv : g.kw)
          asStrategy(in, kv.second, c.range);
        return makeApi(std::move(g));
      });
  fn(
      {"hypothesis.settings"}, +[](Interp &in, CallCtx &c) -> V {
        if (!c.args.pos.empty())
          unsupported(c.range, "hypothesis.settings with a parent settings object");
        return makeApi(SettingsObj{maxExamplesArg(in, c)});
      });
  // JAX's hypothesis_test_util: setup_hypothesis(max_examples=N) loads the profile JAX's
  // tests run with (max_examples N; its other settings change nothing dkv models).
  fn(
      {"jax._src.hypothesis_test_util.setup_hypothesis"}, +[](Interp &in, CallCtx &c) -> V {
        std::vector<V> a = c.bind(in, {"max_examples"});
        in.hypothesisMaxExamples_ = a[0] ? intArg(in, a[0], c.range, "max_examples") : int64_t{30};
        if (*in.hypothesisMaxExamples_ < 1)
          in.raise("InvalidArgument", "max_examples should be at least one", c.range);
        return none();
      });
  // Whether hypothesis runs tests on several threads: it decides only whether JAX runs the
  // class on one thread, which no verdict depends on.
  fn(
      {"jax._src.hypothesis_test_util.hypothesis_is_thread_safe"},
      +[](Interp &in, CallCtx &c) -> V {
        c.bind(in, {});
        return boolean(true);
      });
  // `hijax.register_hitype(cls, f)`: registers how JAX types a value of `cls` (f maps it to
  // its type); a registration, not a kernel run, and nothing dkv models depends on it
  // (docs/python.md "Opaque values").
  reg.addModule("jax._src.hijax");
  fn(
      {"jax._src.hijax.register_hitype"}, +[](Interp &in, CallCtx &c) -> V {
        c.bind(in, {"type", "fn"});
        return none();
      });
  reg.addRow(ApiRow{{"jax._src.hypothesis_test_util.HypothesisShardedTestCase"},
                    BuiltinFn{},
                    +[](Interp &in) -> V { return in.testCaseClass("jax"); }});
}

} // namespace dkv::pytrace
