// Test files (docs/python.md "Test files"): unittest's and absl's TestCase as a stand-in
// whose assertions are checked on the values dkv computes and skipped on array data it
// does not, skipTest and the skip decorators, absl's parameterized decorators with
// absl's case names, and JAX's test utilities.
#include "pytrace/Interp.h"

#include <fmt/format.h>

#include <algorithm>

namespace dkv::pytrace {

namespace {

bool computed(const V &v) {
  return v->kind != Kind::Opaque && v->kind != Kind::HostArray && v->kind != Kind::Traced;
}

void check(Interp &in, const CallCtx &c, bool ok, const std::string &message, size_t msgArg) {
  if (ok)
    return;
  std::string text = message;
  if (c.args.pos.size() > msgArg && c.args.pos[msgArg]->kind != Kind::None)
    if (auto t = in.str(c.args.pos[msgArg], c.range))
      text += " : " + *t;
  in.raise("AssertionError", text, c.range);
}

std::string show(Interp &in, const V &v, SourceRange r) {
  auto t = in.repr(v, r);
  return t ? *t : fmt::format("<{}>", typeName(*v));
}

V assertEqual(Interp &in, CallCtx &c, bool want) {
  if (c.args.pos.size() < 2)
    in.raiseId("TypeError", fmt::format("{}() missing required arguments", c.fn->name), c.range);
  const V &a = c.args.pos[0], &b = c.args.pos[1];
  if (!computed(a) || !computed(b))
    return none(); // array data dkv does not compute: skipped
  std::optional<bool> eq = in.equal(a, b, c.range);
  if (!eq)
    return none();
  check(in, c, *eq == want,
        fmt::format("{} {} {}", show(in, a, c.range), want ? "!=" : "==", show(in, b, c.range)), 2);
  return none();
}

// assertTupleEqual / assertListEqual / assertDictEqual: unittest's type check of both
// arguments (its failure message), then assertEqual.
V assertTypedEqual(Interp &in, CallCtx &c, Kind kind, const char *message) {
  if (c.args.pos.size() < 2)
    in.raiseId("TypeError", fmt::format("{}() missing required arguments", c.fn->name), c.range);
  const char *which[] = {"First", "Second"};
  for (size_t i = 0; i < 2; ++i)
    if (computed(c.args.pos[i]) && c.args.pos[i]->kind != kind)
      check(in, c, false,
            fmt::format("{} {}: {}", which[i], message, show(in, c.args.pos[i], c.range)), 2);
  return assertEqual(in, c, true);
}

V assertTruth(Interp &in, CallCtx &c, bool want) {
  if (c.args.pos.empty())
    in.raiseId("TypeError", fmt::format("{}() missing required argument", c.fn->name), c.range);
  const V &a = c.args.pos[0];
  if (!computed(a))
    return none();
  check(in, c, in.truth(a, c.range, "an assertion") == want,
        fmt::format("{} is not {}", show(in, a, c.range), want ? "true" : "false"), 1);
  return none();
}

V assertOrder(Interp &in, CallCtx &c, py::CmpOpKind op, const char *words) {
  if (c.args.pos.size() < 2)
    in.raiseId("TypeError", fmt::format("{}() missing required arguments", c.fn->name), c.range);
  const V &a = c.args.pos[0], &b = c.args.pos[1];
  if (!computed(a) || !computed(b))
    return none();
  V res = in.compare(op, a, b, c.range);
  if (res->kind != Kind::Bool)
    return none();
  check(in, c, cast<BoolV>(res).b,
        fmt::format("{} not {} {}", show(in, a, c.range), words, show(in, b, c.range)), 2);
  return none();
}

V skipped(Interp &, CallCtx &) { return none(); }

/// The methods of TestCase that are class methods.
constexpr std::string_view kClassMethods[] = {"setUpClass", "tearDownClass"};

const std::vector<BuiltinFn> &testCaseMethods() {
  static const std::vector<BuiltinFn> fns = {
      {"__init__",
       +[](Interp &in, CallCtx &c) -> V {
         if (auto *i = dynCast<InstanceV>(c.self))
           i->attrs->set("_testMethodName", c.args.pos.empty() ? string("runTest") : c.args.pos[0]);
         (void)in;
         return none();
       }},
      {"setUp", skipped},
      {"tearDown", skipped},
      {"setUpClass", skipped},
      {"tearDownClass", skipped},
      {"skipTest",
       +[](Interp &in, CallCtx &c) -> V {
         Args args;
         if (!c.args.pos.empty())
           args.pos.push_back(c.args.pos[0]);
         throw PyRaise{
             in.makeException(in.exceptionClass("SkipTest"), std::move(args)), c.range, "", {}, 0};
       }},
      {"fail",
       +[](Interp &in, CallCtx &c) -> V {
         std::string msg;
         if (!c.args.pos.empty())
           if (auto t = in.str(c.args.pos[0], c.range))
             msg = *t;
         in.raise("AssertionError", msg, c.range);
       }},
      {"assertEqual", +[](Interp &in, CallCtx &c) -> V { return assertEqual(in, c, true); }},
      {"assertTupleEqual",
       +[](Interp &in, CallCtx &c) -> V {
         return assertTypedEqual(in, c, Kind::Tuple, "sequence is not a tuple");
       }},
      {"assertListEqual",
       +[](Interp &in, CallCtx &c) -> V {
         return assertTypedEqual(in, c, Kind::List, "sequence is not a list");
       }},
      {"assertDictEqual",
       +[](Interp &in, CallCtx &c) -> V {
         return assertTypedEqual(in, c, Kind::Dict, "argument is not a dictionary");
       }},
      {"assertEquals", +[](Interp &in, CallCtx &c) -> V { return assertEqual(in, c, true); }},
      {"assertNotEqual", +[](Interp &in, CallCtx &c) -> V { return assertEqual(in, c, false); }},
      {"assertTrue", +[](Interp &in, CallCtx &c) -> V { return assertTruth(in, c, true); }},
      {"assertFalse", +[](Interp &in, CallCtx &c) -> V { return assertTruth(in, c, false); }},
      {"assertIs",
       +[](Interp &in, CallCtx &c) -> V {
         if (c.args.pos.size() >= 2 && computed(c.args.pos[0]) && computed(c.args.pos[1]))
           check(in, c, c.args.pos[0] == c.args.pos[1],
                 fmt::format("{} is not {}", show(in, c.args.pos[0], c.range),
                             show(in, c.args.pos[1], c.range)),
                 2);
         return none();
       }},
      {"assertIsNot",
       +[](Interp &in, CallCtx &c) -> V {
         if (c.args.pos.size() >= 2 && computed(c.args.pos[0]) && computed(c.args.pos[1]))
           check(in, c, c.args.pos[0] != c.args.pos[1],
                 fmt::format("unexpectedly identical: {}", show(in, c.args.pos[0], c.range)), 2);
         return none();
       }},
      {"assertIsNone",
       +[](Interp &in, CallCtx &c) -> V {
         if (!c.args.pos.empty() && computed(c.args.pos[0]))
           check(in, c, c.args.pos[0]->kind == Kind::None,
                 fmt::format("{} is not None", show(in, c.args.pos[0], c.range)), 1);
         return none();
       }},
      {"assertIsNotNone",
       +[](Interp &in, CallCtx &c) -> V {
         if (!c.args.pos.empty() && computed(c.args.pos[0]))
           check(in, c, c.args.pos[0]->kind != Kind::None, "unexpectedly None", 1);
         return none();
       }},
      {"assertIn",
       +[](Interp &in, CallCtx &c) -> V {
         if (c.args.pos.size() >= 2 && computed(c.args.pos[0]) && computed(c.args.pos[1])) {
           V res = in.compare(py::CmpOpKind::In, c.args.pos[0], c.args.pos[1], c.range);
           if (res->kind == Kind::Bool)
             check(in, c, cast<BoolV>(res).b,
                   fmt::format("{} not found in {}", show(in, c.args.pos[0], c.range),
                               show(in, c.args.pos[1], c.range)),
                   2);
         }
         return none();
       }},
      {"assertNotIn",
       +[](Interp &in, CallCtx &c) -> V {
         if (c.args.pos.size() >= 2 && computed(c.args.pos[0]) && computed(c.args.pos[1])) {
           V res = in.compare(py::CmpOpKind::NotIn, c.args.pos[0], c.args.pos[1], c.range);
           if (res->kind == Kind::Bool)
             check(in, c, cast<BoolV>(res).b,
                   fmt::format("{} unexpectedly found in {}", show(in, c.args.pos[0], c.range),
                               show(in, c.args.pos[1], c.range)),
                   2);
         }
         return none();
       }},
      {"assertIsInstance",
       +[](Interp &in, CallCtx &c) -> V {
         if (c.args.pos.size() >= 2 && computed(c.args.pos[0]) &&
             c.args.pos[1]->kind != Kind::Opaque)
           check(in, c, in.isInstance(c.args.pos[0], c.args.pos[1], c.range),
                 fmt::format("{} is not an instance of {}", show(in, c.args.pos[0], c.range),
                             show(in, c.args.pos[1], c.range)),
                 2);
         return none();
       }},
      {"assertGreater",
       +[](Interp &in, CallCtx &c) -> V {
         return assertOrder(in, c, py::CmpOpKind::Gt, "greater than");
       }},
      {"assertGreaterEqual",
       +[](Interp &in, CallCtx &c) -> V {
         return assertOrder(in, c, py::CmpOpKind::GtE, "greater than or equal to");
       }},
      {"assertLess",
       +[](Interp &in, CallCtx &c) -> V {
         return assertOrder(in, c, py::CmpOpKind::Lt, "less than");
       }},
      {"assertLessEqual",
       +[](Interp &in, CallCtx &c) -> V {
         return assertOrder(in, c, py::CmpOpKind::LtE, "less than or equal to");
       }},
      {"assertLen",
       +[](Interp &in, CallCtx &c) -> V {
         if (c.args.pos.size() >= 2 && computed(c.args.pos[0]) && computed(c.args.pos[1])) {
           auto n = in.lenOf(c.args.pos[0], c.range);
           if (n)
             check(in, c, in.equal(integer(*n), c.args.pos[1], c.range).value_or(true),
                   fmt::format("{} has length of {}, expected {}", show(in, c.args.pos[0], c.range),
                               *n, show(in, c.args.pos[1], c.range)),
                   2);
         }
         return none();
       }},
      // Array comparisons: data dkv does not compute.
      {"assertAlmostEqual", skipped},
      {"assertAllClose", skipped},
      {"assertArraysEqual", skipped},
      {"assertArraysAllClose", skipped},
      {"assertEmpty", skipped},
      {"assertNotEmpty", skipped},
      {"assertRaises",
       +[](Interp &in, CallCtx &c) -> V {
         if (c.args.pos.empty())
           in.raiseId("TypeError", "assertRaises() missing the exception class", c.range);
         if (c.args.pos.size() > 1)
           unsupported(c.range, "assertRaises with a callable (use it as a context manager)");
         return makeApi(AssertRaisesObj{c.args.pos[0], c.range});
       }},
      {"assertRaisesRegex",
       +[](Interp &in, CallCtx &c) -> V {
         if (c.args.pos.empty())
           in.raiseId("TypeError", "assertRaisesRegex() missing the exception class", c.range);
         if (c.args.pos.size() > 2)
           unsupported(c.range, "assertRaisesRegex with a callable (use it as a context manager)");
         return makeApi(AssertRaisesObj{c.args.pos[0], c.range});
       }},
      {"subTest", +[](Interp &, CallCtx &) -> V { return makeApi(NamedScopeObj{}); }},
      {"addCleanup",
       +[](Interp &in, CallCtx &c) -> V {
         if (auto *i = dynCast<InstanceV>(c.self)) {
           V cleanups = i->attrs->get("__dkv_cleanups__");
           if (!cleanups) {
             cleanups = list({});
             i->attrs->set("__dkv_cleanups__", cleanups);
           }
           auto p = std::make_shared<PartialV>();
           if (c.args.pos.empty())
             in.raiseId("TypeError", "addCleanup() missing the function", c.range);
           p->fn = c.args.pos[0];
           p->pos.assign(c.args.pos.begin() + 1, c.args.pos.end());
           p->kw = c.args.kw;
           cast<ListV>(cleanups).items.push_back(p);
         }
         return none();
       }},
      {"enter_context",
       +[](Interp &in, CallCtx &c) -> V {
         if (c.args.pos.size() != 1)
           in.raiseId("TypeError", "enter_context() takes one context manager", c.range);
         const V &cm = c.args.pos[0];
         if (apiAs<MeshObj>(cm) || apiAs<NamedScopeObj>(cm))
           return cm;
         if (cm->kind == Kind::Opaque)
           return in.opaque("the value of enter_context()", c.range, cm);
         if (cm->kind == Kind::Instance)
           return in.call(in.getAttr(cm, "__enter__", c.range), Args{}, c.range);
         unsupported(c.range, "enter_context() of this context manager");
       }},
      {"id", +[](Interp &in, CallCtx &c) -> V { return in.opaque("the test's id()", c.range); }},
  };
  return fns;
}

// `parameterized.parameters(...)`, `named_parameters(...)`, `product(...)`: a decorator
// holding the cases (absl's naming: the index, or the name of a named case).
V parameterized(Interp &in, CallCtx &c, bool named) {
  std::vector<V> cases = c.args.pos;
  // A single non-tuple, non-mapping argument is an iterable of cases.
  if (cases.size() == 1 && cases[0]->kind != Kind::Tuple && cases[0]->kind != Kind::Dict)
    cases = in.toVector(cases[0], c.range);
  if (cases.empty())
    in.raise("NoTestsError", "parameterized test decorators did not generate any tests", c.range);
  ParameterizedObj p;
  for (size_t i = 0; i < cases.size(); ++i) {
    ParameterizedObj::Case cs;
    const V &x = cases[i];
    if (named) {
      if (auto *d = dynCast<DictV>(x)) {
        V name = in.dictGet(d->table, string("testcase_name"), c.range);
        if (!name)
          in.raise("RuntimeError", "Dict for named tests must contain key \"testcase_name\"",
                   c.range);
        auto t = in.str(name, c.range);
        if (!t)
          in.opaqueNeeded(name, c.range, "a test case name");
        cs.label = *t;
        for (const Table::Entry &e : d->table.entries)
          if (e.live && !(e.key->kind == Kind::Str && cast<StrV>(e.key).s == "testcase_name"))
            cs.args.kw.emplace_back(cast<StrV>(e.key).s, e.value);
      } else if (x->kind == Kind::Tuple || x->kind == Kind::List) {
        std::vector<V> items = in.toVector(x, c.range);
        if (items.empty() || items[0]->kind != Kind::Str)
          in.raise("RuntimeError",
                   "The first element of named test parameters is the test name suffix and must "
                   "be a string",
                   c.range);
        cs.label = cast<StrV>(items[0]).s;
        cs.args.pos.assign(items.begin() + 1, items.end());
      } else {
        in.raise("RuntimeError", "Named tests must be passed a dict or non-string iterable.",
                 c.range);
      }
      cs.absltestName = "named";
    } else {
      cs.label = std::to_string(i);
      if (auto *d = dynCast<DictV>(x)) {
        for (const Table::Entry &e : d->table.entries)
          if (e.live) {
            auto *k = dynCast<StrV>(e.key);
            if (!k)
              in.raise("TypeError", "keywords must be strings", c.range);
            cs.args.kw.emplace_back(k->s, e.value);
          }
      } else if (x->kind == Kind::Tuple || x->kind == Kind::List) {
        cs.args.pos = in.toVector(x, c.range);
      } else {
        cs.args.pos = {x};
      }
    }
    p.cases.push_back(std::move(cs));
  }
  return makeApi(std::move(p));
}

// jax._src.test_util.sanitize_test_name: each run of the characters of
// `[ "'\[\](){}<>=,._]+` becomes one "_".
std::string sanitizeTestName(std::string_view s) {
  static constexpr std::string_view kReplaced = " \"'[](){}<>=,._";
  std::string out;
  for (size_t i = 0; i < s.size();) {
    if (kReplaced.find(s[i]) == std::string_view::npos) {
      out.push_back(s[i++]);
      continue;
    }
    out.push_back('_');
    while (i < s.size() && kReplaced.find(s[i]) != std::string_view::npos)
      ++i;
  }
  return out;
}

// `jtu.parameterized_filterable(kwargs=[dict(...), ...], testcase_name=f,
// one_containing=s)` (jax/_src/test_util.py): named_parameters over the dicts, each named
// by `testcase_name(kw)`, else its own "testcase_name" key, else "k=v" of its keys sorted
// and joined by "_", sanitized; `one_containing` keeps the first case whose name holds it,
// renamed "" (the test's own name).
V parameterizedFilterable(Interp &in, CallCtx &c) {
  std::vector<V> a = c.bind(in, {"*", "kwargs", "testcase_name", "one_containing"});
  if (!a[0])
    in.raiseId("TypeError",
               "parameterized_filterable() missing 1 required keyword-only argument: 'kwargs'",
               c.range);
  const V key = string("testcase_name");
  auto strOf = [&](const V &v, const char *what) {
    if (v->kind == Kind::Opaque)
      in.opaqueNeeded(v, c.range, what);
    auto t = in.str(v, c.range);
    if (!t)
      in.opaqueNeeded(v, c.range, what);
    return *t;
  };
  std::vector<V> cases;
  for (const V &kw : in.toVector(a[0], c.range)) {
    auto *d = dynCast<DictV>(kw);
    if (!d)
      unsupported(c.range, fmt::format("a case of jtu.parameterized_filterable that is a {}, "
                                       "not a dict of the test's keyword arguments",
                                       typeName(*kw)));
    std::string name;
    if (a[1] && a[1]->kind != Kind::None) {
      // dict(testcase_name=sanitize(str(testcase_name(kw))), **kw): a new dict.
      name = sanitizeTestName(strOf(in.call(a[1], Args{{kw}, {}}, c.range), "a test case name"));
      if (in.dictGet(d->table, key, c.range))
        in.raiseId("TypeError", "dict() got multiple values for keyword argument 'testcase_name'",
                   c.range);
      auto out = std::make_shared<DictV>();
      in.dictSet(out->table, key, string(name), c.range);
      for (const Table::Entry &e : d->table.entries)
        if (e.live)
          in.dictSet(out->table, e.key, e.value, c.range);
      cases.push_back(out);
      continue;
    }
    // kw["testcase_name"] = sanitize(kw.get("testcase_name") or the joined keys): in place.
    if (V own = in.dictGet(d->table, key, c.range); own && own->kind != Kind::None) {
      if (own->kind != Kind::Str)
        in.raiseId("TypeError",
                   fmt::format("expected string or bytes-like object, got '{}'", typeName(*own)),
                   c.range);
      name = cast<StrV>(own).s;
    } else {
      std::vector<std::string> keys;
      for (const Table::Entry &e : d->table.entries)
        if (e.live) {
          if (e.key->kind != Kind::Str)
            unsupported(c.range, "a case of jtu.parameterized_filterable with a key that is "
                                 "not a string");
          keys.push_back(cast<StrV>(e.key).s);
        }
      std::sort(keys.begin(), keys.end());
      for (size_t i = 0; i < keys.size(); ++i)
        name += (i ? "_" : "") + keys[i] + "=" +
                strOf(in.dictGet(d->table, string(keys[i]), c.range), "a test case name");
    }
    in.dictSet(d->table, key, string(sanitizeTestName(name)), c.range);
    cases.push_back(kw);
  }
  if (a[2] && a[2]->kind != Kind::None) {
    const std::string want = strOf(a[2], "one_containing");
    V chosen;
    for (const V &kw : cases)
      if (cast<StrV>(in.dictGet(cast<DictV>(kw).table, key, c.range)).s.find(want) !=
          std::string::npos) {
        chosen = kw;
        break;
      }
    if (!chosen) {
      std::string names;
      for (const V &kw : cases)
        names += (names.empty() ? "" : "\n  ") +
                 cast<StrV>(in.dictGet(cast<DictV>(kw).table, key, c.range)).s;
      in.raiseId("AssertionError",
                 fmt::format("No testcase_name contains '{}'. The testcase_name values are\n  {}",
                             want, names),
                 c.range);
    }
    in.dictSet(cast<DictV>(chosen).table, key, string(""), c.range);
    cases = {chosen};
  }
  CallCtx named = c;
  named.args = Args{{list(std::move(cases))}, {}};
  return parameterized(in, named, true);
}

// JAX's Pallas test bases (jax/_src/pallas/pallas_test_util.py), which JAX's Pallas TPU
// tests derive from: `PallasTest` (class attribute INTERPRET = False; setUp skips an
// interpret test off the CPU and a compiled one on the CPU, and stops on a CUDA GPU, whose
// compute capability dkv does not know; `self.pallas_call(...)` is pl.pallas_call with
// `interpret=self.INTERPRET`) and `PallasTPUTest` (setUp skips a compiled test off a TPU,
// then PallasTest's).
bool interpretOf(Interp &in, CallCtx &c) {
  return in.truth(in.getAttr(c.self, "INTERPRET", c.range), c.range, "INTERPRET");
}
[[noreturn]] void skipWith(Interp &in, CallCtx &c, const char *reason) {
  Args args;
  args.pos.push_back(string(reason));
  throw PyRaise{
      in.makeException(in.exceptionClass("SkipTest"), std::move(args)), c.range, "", {}, 0};
}
V pallasSetUp(Interp &in, CallCtx &c) {
  const bool interpret = interpretOf(in, c);
  const std::string platform = in.platformUnderTest();
  if (platform != "cpu" && interpret)
    skipWith(in, c, "Only run interpret tests on CPU.");
  if (!interpret) {
    if (platform == "cpu")
      skipWith(in, c, "On CPU the test works only in interpret mode");
    if (platform == "cuda")
      unsupported(c.range, "PallasTest.setUp on a CUDA GPU (it skips by the GPU's compute "
                           "capability, which dkv does not know)");
  }
  return none(); // JaxTestCase.setUp
}
const BuiltinFn kPallasTpuSetUp{"PallasTPUTest.setUp",
                                +[](Interp &in, CallCtx &c) -> V {
                                  if (in.platformUnderTest() != "tpu" && !interpretOf(in, c))
                                    skipWith(in, c, "Test requires TPUs");
                                  return pallasSetUp(in, c);
                                },
                                "", false};
const std::vector<BuiltinFn> &pallasTestMethods() {
  static const std::vector<BuiltinFn> fns = {
      {"PallasTest.setUp", pallasSetUp},
      {"PallasTest.pallas_call",
       +[](Interp &in, CallCtx &c) -> V {
         static const ApiRow *const kPallasCall =
             Registry::get().find("jax.experimental.pallas.pallas_call");
         Args args = c.args;
         for (const auto &kv : args.kw)
           if (kv.first == "interpret")
             in.raiseId("TypeError",
                        "jax._src.pallas.pallas_call.pallas_call() got multiple values for "
                        "keyword argument 'interpret'",
                        c.range);
         args.kw.emplace_back("interpret", in.getAttr(c.self, "INTERPRET", c.range));
         return in.callBuiltin(kPallasCall->fn, nullptr, std::move(args), c.range);
       }},
  };
  return fns;
}

} // namespace

// The platform of the devices under test: "tpu", or what `--set
// 'jax._src.test_util.device_under_test()="cpu"'` (or the same `# dkv: set`) gives.
std::string Interp::platformUnderTest() const {
  const SetDirective *set = findSet("jax._src.test_util.device_under_test");
  if (set && set->call && set->value.k == Literal::K::Str)
    return set->value.s;
  return "tpu";
}

std::string Interp::backendPlatform() const {
  std::string p = platformUnderTest();
  return p == "cuda" || p == "rocm" ? "gpu" : p; // JAX's GPU backends are platform "gpu"
}

ClassP Interp::testCaseClass(const std::string &which) {
  if (auto it = testClasses_.find(which); it != testClasses_.end())
    return it->second;
  ClassP c;
  if (which == "unittest") {
    c = makeClass("TestCase", {builtinClass(ClassRole::Object)}, ClassRole::TestCase, "unittest");
    for (const BuiltinFn &fn : testCaseMethods()) {
      V v = builtinValue(fn);
      if (std::find(std::begin(kClassMethods), std::end(kClassMethods), fn.name) !=
          std::end(kClassMethods))
        v = std::make_shared<WrapperV>(WrapperV::W::ClassMethod, v);
      c->dict->set(fn.name, v);
    }
  } else if (which == "absltest") {
    c = makeClass("TestCase", {testCaseClass("unittest")}, ClassRole::TestCase,
                  "absl.testing.absltest");
  } else if (which == "parameterized") {
    c = makeClass("TestCase", {testCaseClass("absltest")}, ClassRole::TestCase,
                  "absl.testing.parameterized");
  } else if (which == "pallas") {
    c = makeClass("PallasTest", {testCaseClass("jax")}, ClassRole::TestCase,
                  "jax._src.pallas.pallas_test_util");
    c->dict->set("INTERPRET", boolean(false));
    for (const BuiltinFn &fn : pallasTestMethods())
      c->dict->set(fn.name.substr(fn.name.find('.') + 1), builtinValue(fn));
  } else if (which == "pallas_tpu") {
    c = makeClass("PallasTPUTest", {testCaseClass("pallas")}, ClassRole::TestCase,
                  "jax._src.pallas.pallas_test_util");
    c->dict->set("setUp", builtinValue(kPallasTpuSetUp));
  } else {
    c = makeClass("JaxTestCase", {testCaseClass("parameterized")}, ClassRole::TestCase,
                  "jax._src.test_util");
  }
  testClasses_[which] = c;
  return c;
}

void registerTesting(Registry &reg) {
  auto fn = [&](std::vector<std::string> names, V (*h)(Interp &, CallCtx &)) {
    std::string shortName = names[0];
    reg.addRow(ApiRow{std::move(names), BuiltinFn{shortName, h, "", false}, nullptr});
  };
  auto constant = [&](std::vector<std::string> names, V (*c)(Interp &)) {
    reg.addRow(ApiRow{std::move(names), BuiltinFn{}, c});
  };
  reg.addModule("unittest");
  reg.addModule("absl.testing.absltest");
  reg.addModule("absl.testing.parameterized");
  reg.addModule("jax._src.test_util");
  reg.addModule("jax._src");

  constant(
      {"unittest.TestCase"}, +[](Interp &in) -> V { return in.testCaseClass("unittest"); });
  constant(
      {"absl.testing.absltest.TestCase"},
      +[](Interp &in) -> V { return in.testCaseClass("absltest"); });
  constant(
      {"absl.testing.parameterized.TestCase"},
      +[](Interp &in) -> V { return in.testCaseClass("parameterized"); });
  constant(
      {"jax._src.test_util.JaxTestCase"}, +[](Interp &in) -> V { return in.testCaseClass("jax"); });
  reg.addModule("jax._src.pallas.pallas_test_util");
  constant(
      {"jax._src.pallas.pallas_test_util.PallasTest"},
      +[](Interp &in) -> V { return in.testCaseClass("pallas"); });
  constant(
      {"jax._src.pallas.pallas_test_util.PallasTPUTest"},
      +[](Interp &in) -> V { return in.testCaseClass("pallas_tpu"); });
  constant(
      {"unittest.SkipTest", "absl.testing.absltest.SkipTest"},
      +[](Interp &in) -> V { return in.exceptionClass("SkipTest"); });
  fn(
      {"unittest.skip", "absl.testing.absltest.skip"}, +[](Interp &in, CallCtx &c) -> V {
        std::string reason;
        if (!c.args.pos.empty())
          if (auto t = in.str(c.args.pos[0], c.range))
            reason = *t;
        if (!c.args.pos.empty() && c.args.pos[0]->kind == Kind::Function) {
          auto &f = cast<FunctionV>(c.args.pos[0]);
          f.attrs->set("__unittest_skip__", boolean(true));
          f.attrs->set("__unittest_skip_why__", string(""));
          return c.args.pos[0];
        }
        return makeApi(SkipDecoratorObj{true, reason});
      });
  fn(
      {"unittest.skipIf", "absl.testing.absltest.skipIf"}, +[](Interp &in, CallCtx &c) -> V {
        std::vector<V> a = c.bind(in, {"condition", "reason"});
        bool skip = in.truth(a[0], c.range, "the condition of skipIf");
        auto t = a[1] ? in.str(a[1], c.range) : std::optional<std::string>("");
        return makeApi(SkipDecoratorObj{skip, t ? *t : "(a reason dkv does not compute)"});
      });
  fn(
      {"unittest.skipUnless", "absl.testing.absltest.skipUnless"},
      +[](Interp &in, CallCtx &c) -> V {
        std::vector<V> a = c.bind(in, {"condition", "reason"});
        bool skip = !in.truth(a[0], c.range, "the condition of skipUnless");
        auto t = a[1] ? in.str(a[1], c.range) : std::optional<std::string>("");
        return makeApi(SkipDecoratorObj{skip, t ? *t : "(a reason dkv does not compute)"});
      });
  fn(
      {"unittest.expectedFailure"}, +[](Interp &in, CallCtx &c) -> V {
        if (c.args.pos.size() == 1)
          if (auto *f = dynCast<FunctionV>(c.args.pos[0])) {
            f->attrs->set("__unittest_skip__", boolean(true));
            f->attrs->set("__unittest_skip_why__",
                          string("an expected failure (unittest.expectedFailure)"));
          }
        (void)in;
        return c.args.pos.empty() ? none() : c.args.pos[0];
      });
  fn(
      {"unittest.main", "absl.testing.absltest.main"},
      +[](Interp &, CallCtx &) -> V { return none(); });
  fn(
      {"absl.testing.parameterized.parameters"},
      +[](Interp &in, CallCtx &c) -> V { return parameterized(in, c, false); });
  fn(
      {"absl.testing.parameterized.named_parameters"},
      +[](Interp &in, CallCtx &c) -> V { return parameterized(in, c, true); });
  fn(
      {"absl.testing.parameterized.product"}, +[](Interp &in, CallCtx &c) -> V {
        // absl: the cartesian product of the positional sequences of kwarg dicts and of the
        // keyword grid (in that order), each case the merged dict; named by index.
        std::vector<std::vector<std::vector<std::pair<std::string, V>>>> axes;
        for (const V &seq : c.args.pos) {
          std::vector<std::vector<std::pair<std::string, V>>> opts;
          for (const V &d : in.toVector(seq, c.range)) {
            auto *dict = dynCast<DictV>(d);
            if (!dict)
              in.raise("TypeError", "product() positional arguments are sequences of dicts",
                       c.range);
            std::vector<std::pair<std::string, V>> kv;
            for (const Table::Entry &e : dict->table.entries)
              if (e.live)
                kv.emplace_back(cast<StrV>(e.key).s, e.value);
            opts.push_back(std::move(kv));
          }
          axes.push_back(std::move(opts));
        }
        for (const auto &[k, vals] : c.args.kw) {
          std::vector<std::vector<std::pair<std::string, V>>> opts;
          for (const V &v : in.toVector(vals, c.range))
            opts.push_back({{k, v}});
          axes.push_back(std::move(opts));
        }
        std::vector<std::vector<std::pair<std::string, V>>> cases = {{}};
        for (const auto &axis : axes) {
          std::vector<std::vector<std::pair<std::string, V>>> next;
          for (const auto &partial : cases)
            for (const auto &opt : axis) {
              auto merged = partial;
              for (const auto &kv : opt) {
                bool replaced = false;
                for (auto &m : merged)
                  if (m.first == kv.first)
                    m.second = kv.second, replaced = true;
                if (!replaced)
                  merged.push_back(kv);
              }
              next.push_back(std::move(merged));
            }
          cases = std::move(next);
        }
        ParameterizedObj p;
        for (size_t i = 0; i < cases.size(); ++i) {
          ParameterizedObj::Case cs;
          cs.label = std::to_string(i);
          cs.args.kw = cases[i];
          p.cases.push_back(std::move(cs));
        }
        return makeApi(std::move(p));
      });
  fn(
      {"jax._src.test_util.parameterized_filterable"},
      +[](Interp &in, CallCtx &c) -> V { return parameterizedFilterable(in, c); });
  // JAX's test utilities: decorators that change configuration, and device queries. The
  // TPU generation is not a fact dkv models: such queries are opaque.
  fn(
      {"jax._src.test_util.with_config", "jax._src.test_util.skip_on_devices",
       "jax._src.test_util.run_on_devices", "jax._src.test_util.thread_unsafe_test_class",
       "jax._src.test_util.thread_unsafe_test"},
      +[](Interp &, CallCtx &c) -> V {
        static const BuiltinFn id{"jtu.<decorator>",
                                  +[](Interp &, CallCtx &c2) -> V {
                                    return c2.args.pos.empty() ? none() : c2.args.pos[0];
                                  },
                                  "", false};
        // `with_config(jax_pallas_auto_assign_collective_ids=...)` on a test class or
        // method: the value is recorded on it, and its tests run with it (Entries.cpp
        // runTest; Kernel.cpp finishKernel reads it).
        static const BuiltinFn record{
            "jtu.with_config(...)",
            +[](Interp &, CallCtx &c2) -> V {
              if (c2.args.pos.size() != 2)
                return c2.args.pos.empty() ? none() : c2.args.pos.back();
              const V &target = c2.args.pos[1];
              if (auto *cls = dynCast<ClassV>(target))
                cls->dict->set(Interp::kAutoCollectiveIdsAttr, c2.args.pos[0]);
              else if (auto *f = dynCast<FunctionV>(target))
                f->attrs->set(Interp::kAutoCollectiveIdsAttr, c2.args.pos[0]);
              return target;
            },
            "", false};
        if (c.fn->name.find("with_config") != std::string::npos)
          for (const auto &[k, v] : c.args.kw)
            if (k == "jax_pallas_auto_assign_collective_ids" && c.args.pos.empty()) {
              auto p = std::make_shared<PartialV>();
              p->fn = builtinValue(record);
              p->pos = {v};
              return p;
            }
        if (c.args.pos.size() == 1 &&
            (c.args.pos[0]->kind == Kind::Class || c.args.pos[0]->kind == Kind::Function))
          return c.args.pos[0];
        return builtinValue(id);
      });
  fn(
      {"jax._src.test_util.device_under_test"}, +[](Interp &in, CallCtx &c) -> V {
        c.bind(in, {});
        return string(in.platformUnderTest());
      });
  // `jtu.test_device_matches(["cpu", ...])`: JAX's "gpu" also matches CUDA and ROCm.
  fn(
      {"jax._src.test_util.test_device_matches"}, +[](Interp &in, CallCtx &c) -> V {
        std::vector<V> a = c.bind(in, {"device_types"});
        if (!a[0])
          in.raiseId("TypeError",
                     "test_device_matches() missing 1 required positional argument: "
                     "'device_types'",
                     c.range);
        std::string platform = in.platformUnderTest();
        for (const V &d : in.toVector(a[0], c.range)) {
          if (d->kind != Kind::Str)
            return in.opaque("`jtu.test_device_matches` of a value that is not a str", c.range);
          const std::string &s = cast<StrV>(d).s;
          if (s == platform || (s == "gpu" && (platform == "cuda" || platform == "rocm")))
            return boolean(true);
        }
        return boolean(false);
      });
  // The TPU generation: the kernel is verified on the TPU the test targets (docs/python.md
  // "TPU generations"). `is_device_tpu_at_least(v)` is true unless an earlier answer fixed
  // an older generation; `is_device_tpu(v, variant)` fixes the generation unless an
  // earlier answer excludes it. So the answers are those of one TPU, and a test skipped on
  // every generation (v5e and v6+) is skipped. Both bind their arguments as JAX's
  // signatures do (`version=` by keyword too).
  fn(
      {"jax._src.test_util.is_device_tpu_at_least"}, +[](Interp &in, CallCtx &c) -> V {
        std::vector<V> a = c.bind(in, {"version"});
        if (!a[0])
          in.raiseId("TypeError",
                     "is_device_tpu_at_least() missing 1 required positional argument: "
                     "'version'",
                     c.range);
        if (in.platformUnderTest() != "tpu")
          return boolean(false);
        if (a[0]->kind != Kind::Int)
          return in.opaque("`jtu.is_device_tpu_at_least` of a value that is not an int", c.range);
        int64_t v = cast<IntV>(a[0]).i;
        TpuGeneration &g = in.tpuGeneration_;
        if (g.version)
          return boolean(*g.version >= v);
        g.atLeast = std::max(g.atLeast, v);
        return boolean(true);
      });
  fn(
      {"jax._src.test_util.is_device_tpu"}, +[](Interp &in, CallCtx &c) -> V {
        std::vector<V> a = c.bind(in, {"version", "variant"});
        V version = a[0] ? a[0] : none();
        V variant = a[1] ? a[1] : string("");
        if (in.platformUnderTest() != "tpu")
          return boolean(false);
        if ((version->kind != Kind::Int && version->kind != Kind::None) ||
            variant->kind != Kind::Str)
          return in.opaque("`jtu.is_device_tpu` of a version that is not an int", c.range);
        if (version->kind == Kind::None)
          return boolean(true);
        int64_t v = cast<IntV>(version).i;
        const std::string &var = cast<StrV>(variant).s;
        TpuGeneration &g = in.tpuGeneration_;
        if (g.version)
          return boolean(*g.version == v && (var.empty() || g.variant == var));
        if (v < g.atLeast)
          return boolean(false);
        g.version = v;
        g.variant = var;
        return boolean(true);
      });
}

} // namespace dkv::pytrace
