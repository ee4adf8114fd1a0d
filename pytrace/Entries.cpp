// What `dkv check FILE.py` runs (docs/python.md "Entries"): the module's top level, each
// test method of its unittest / absltest classes (one run per case of absl's
// parameterized decorators, named `Class::test_x[case]`), a module-level function
// (`FILE.py::func`) or a call written in Python (`--call`).
#include "pyfront/Parser.h"
#include "pytrace/Interp.h"

#include <fmt/format.h>

#include <exception>
#include <filesystem>

namespace dkv::pytrace {

namespace fs = std::filesystem;

Interp::Interp(const TraceOptions &options, support::SourceManager *sources)
    : options_(options), sources_(sources) {
  // --tpu: JAX's device predicates answer as that chip (Testing.cpp).
  if (!options.tpu.empty() && (chip_ = findTpuChip(options.tpu))) {
    tpuGeneration_.version = chip_->generation;
    tpuGeneration_.variant = chip_->variant;
  }
  initClasses();
  initBuiltins();
}

Interp::~Interp() {
  auto clear = [](Namespace &ns) {
    ns.items.clear();
    ns.index.clear();
  };
  for (const std::weak_ptr<Value> &w : made_) {
    std::shared_ptr<Value> v = w.lock();
    if (!v)
      continue;
    if (auto *c = dynCast<ClassV>(v)) {
      c->mro.clear();
      c->bases.clear();
      clear(*c->dict);
      c->opaqueBase.reset();
      c->fieldDefault.clear();
      c->fieldFactory.clear();
    } else if (auto *f = dynCast<FunctionV>(v)) {
      f->globals.reset();
      f->closure.clear();
      f->defaults.clear();
      clear(*f->attrs);
    } else if (auto *i = dynCast<InstanceV>(v)) {
      clear(*i->attrs);
    }
  }
  for (const auto &[name, m] : modules_)
    clear(*m->dict);
  if (main_)
    clear(*main_->dict);
  if (sysModules_)
    sysModules_->table = Table{};
}

void Interp::runMain(const py::Module &module, const support::SourceFile &file, bool asScript) {
  // The search path: the file's directory (as `python FILE.py` has), the directory above
  // the file's package (its root found through `__init__.py`), then --python-path.
  // Paths stay relative to the working directory when the file's is (messages and
  // traces name imported modules by these paths: the same on every machine).
  std::error_code ec;
  fs::path dir = fs::path(file.name()).parent_path();
  if (dir.empty())
    dir = ".";
  searchPath_.push_back(dir.string());
  std::string package;
  fs::path root = fs::absolute(dir, ec).lexically_normal();
  while (root.has_relative_path() && fs::is_regular_file(root / "__init__.py", ec)) {
    package = package.empty() ? root.filename().string() : root.filename().string() + "." + package;
    root = root.parent_path();
  }
  if (!package.empty())
    searchPath_.push_back(fs::proximate(root, ec).string());
  for (const std::string &p : options_.pythonPath)
    searchPath_.push_back(p);

  // As a script, `__name__` is "__main__": `if __name__ == "__main__":` blocks run (in a
  // test file they call absltest.main(), which does nothing here; the entries are
  // discovered after the top level). Imported, it is the file's dotted name, and the
  // module is in the table of loaded modules, so that its package importing it gets it.
  std::string stem = fs::path(file.name()).stem().string();
  std::string name = asScript          ? std::string("__main__")
                     : package.empty() ? stem
                                       : package + "." + stem;
  main_ = std::make_shared<ModuleV>(name);
  main_->file = file.name();
  if (!asScript)
    modules_[name] = main_;
  main_->dict->set("__name__", string(name));
  main_->dict->set("__file__", string(file.name()));
  main_->dict->set("__package__", package.empty() ? none() : string(package));
  auto table = std::make_unique<Symtable>(module);
  moduleSymtable_[main_.get()] = table.get();
  symtables_[&module] = std::move(table);
  applySets();
  Frame f = moduleFrame(main_);
  ++callDepth_;
  execBody(module.body, f);
  --callDepth_;
}

std::optional<std::string> Interp::skipReasonOf(const V &v, SourceRange r) {
  (void)r;
  NamespaceP ns;
  if (auto *f = dynCast<FunctionV>(v))
    ns = f->attrs;
  else if (auto *c = dynCast<ClassV>(v))
    ns = c->dict;
  if (!ns)
    return std::nullopt;
  V skip = ns->get("__unittest_skip__");
  if (!skip || !(skip->kind == Kind::Bool && cast<BoolV>(skip).b))
    return std::nullopt;
  V why = ns->get("__unittest_skip_why__");
  return why && why->kind == Kind::Str ? cast<StrV>(why).s : std::string();
}

std::vector<Interp::TestCaseRef> Interp::collectTests(const std::string &want) {
  std::vector<TestCaseRef> out;
  ClassP base = testCaseClass("unittest");
  for (const auto &[name, v] : main_->dict->items) {
    auto *cls = dynCast<ClassV>(v);
    if (!cls || !isSubclass(std::static_pointer_cast<ClassV>(v), base) ||
        cls->role != ClassRole::TestCase)
      continue;
    ClassP c = std::static_pointer_cast<ClassV>(v);
    if (c->module != main_->name)
      continue; // a test class imported from elsewhere is that module's
    std::vector<std::string> seen;
    for (const ClassP &k : c->mro) {
      for (const auto &[m, mv] : k->dict->items) {
        if (m.rfind("test", 0) != 0 || std::find(seen.begin(), seen.end(), m) != seen.end())
          continue;
        seen.push_back(m);
        const std::string method = fmt::format("{}::{}", name, m);
        if (!want.empty() && want.compare(0, method.size(), method) != 0)
          continue; // not the entry asked for (its examples are not drawn)
        // A `@hypothesis.given` test: one instance per example (Hypothesis.cpp). Drawing
        // them can fail (a strategy dkv does not model, an error in a composite): then the
        // method is one entry that stops at that error, the file's other tests run.
        std::exception_ptr failure;
        auto examples = [&](const V &fn) {
          std::vector<HypothesisExample> ex;
          if (auto *g = apiAs<GivenObj>(fn)) {
            try {
              ex = hypothesisExamples(*g, c->range);
            } catch (const TraceError &) {
              failure = std::current_exception();
            } catch (const PyRaise &) {
              failure = std::current_exception();
            }
          }
          return ex;
        };
        auto failed = [&](const std::optional<ParameterizedObj::Case> &cs) {
          TestCaseRef t{c, m, method, "", cs, std::nullopt, failure};
          out.push_back(std::move(t));
        };
        if (auto *p = apiAs<ParameterizedObj>(mv)) {
          std::vector<HypothesisExample> ex = examples(p->fn);
          if (failure) {
            failed(std::nullopt);
            continue;
          }
          for (const ParameterizedObj::Case &cs : p->cases) {
            std::string id = fmt::format("{}::{}[{}]", name, m, cs.label);
            std::string absl = fmt::format(
                "{}::{}", name, cs.absltestName.empty() ? m + cs.label : cs.absltestName);
            if (ex.empty())
              out.push_back({c, m, id, absl, cs, std::nullopt, nullptr});
            for (const HypothesisExample &e : ex)
              out.push_back({c, m, fmt::format("{}[{}]", id, e.label), "", cs, e, nullptr});
          }
          continue;
        }
        if (apiAs<GivenObj>(mv)) {
          std::vector<HypothesisExample> ex = examples(mv);
          if (failure)
            failed(std::nullopt);
          for (const HypothesisExample &e : ex)
            out.push_back(
                {c, m, fmt::format("{}::{}[{}]", name, m, e.label), "", std::nullopt, e, nullptr});
          continue;
        }
        if (mv->kind != Kind::Function)
          continue;
        out.push_back(
            {c, m, fmt::format("{}::{}", name, m), "", std::nullopt, std::nullopt, nullptr});
      }
    }
  }
  return out;
}

std::vector<std::string> Interp::testEntries(const std::string &want) {
  // The test cases `want` can select (all without it): its own id or absl name, the
  // cases of a method it names (`Class::test_x` selects `Class::test_x[case]`), or the
  // case whose kernel or example it names (`Class::test_x[case]#2`, `...[case][example]`).
  const std::string w = want.substr(0, want.find('#'));
  auto extends = [](const std::string &longer, const std::string &prefix) {
    return longer.size() > prefix.size() && longer.compare(0, prefix.size(), prefix) == 0 &&
           longer[prefix.size()] == '[';
  };
  std::vector<std::string> ids;
  for (const TestCaseRef &t : collectTests(want))
    if (w.empty() || t.id == w || t.absltestId == w || extends(t.id, w) || extends(w, t.id))
      ids.push_back(t.id);
  return ids;
}

void Interp::runTest(const TestCaseRef &t) {
  if (t.failure)
    std::rethrow_exception(t.failure);
  SourceRange r = t.cls->range;
  if (auto why = skipReasonOf(t.cls, r)) {
    result_.skipped = *why;
    return;
  }
  V method = lookupClassAttr(t.cls, t.method);
  V fn = method;
  if (auto *p = apiAs<ParameterizedObj>(method))
    fn = p->fn;
  if (auto *g = apiAs<GivenObj>(fn))
    fn = g->fn;
  if (t.example)
    result_.note = t.example->note;
  if (auto why = skipReasonOf(fn, r)) {
    result_.skipped = *why;
    return;
  }
  if (auto *f = dynCast<FunctionV>(fn))
    r = f->range;
  // jtu.with_config(jax_pallas_auto_assign_collective_ids=...) on the method or its class.
  autoCollectiveIds_.clear();
  V autoIds = lookupClassAttr(t.cls, kAutoCollectiveIdsAttr);
  if (auto *f = dynCast<FunctionV>(fn); f && f->attrs->has(kAutoCollectiveIdsAttr))
    autoIds = f->attrs->get(kAutoCollectiveIdsAttr);
  if (auto *s = dynCast<StrV>(autoIds))
    autoCollectiveIds_ = s->s;
  else if (autoIds)
    autoCollectiveIds_ = "?"; // a value dkv does not compute: not 'override'
  try {
    if (V suc = getAttrOpt(t.cls, "setUpClass", r))
      call(suc, Args{}, r);
    V inst = callClass(t.cls, Args{{string(t.method)}, {}}, r);
    call(getAttr(inst, "setUp", r), Args{}, r);
    Args args;
    args.pos.push_back(inst);
    if (t.params) {
      args.pos.insert(args.pos.end(), t.params->args.pos.begin(), t.params->args.pos.end());
      args.kw = t.params->args.kw;
    }
    if (t.example)
      args.kw.insert(args.kw.end(), t.example->kw.begin(), t.example->kw.end());
    call(fn, std::move(args), r);
    call(getAttr(inst, "tearDown", r), Args{}, r);
    if (auto *i = dynCast<InstanceV>(inst))
      if (V cleanups = i->attrs->get("__dkv_cleanups__"))
        for (auto it = cast<ListV>(cleanups).items.rbegin();
             it != cast<ListV>(cleanups).items.rend(); ++it)
          call(*it, Args{}, r);
  } catch (PyRaise &e) {
    if (isSubclass(cast<InstanceV>(e.exc).cls, exceptionClass("SkipTest"))) {
      auto text = str(e.exc, r);
      result_.skipped = text ? *text : std::string("(a reason dkv does not compute)");
      return;
    }
    throw;
  }
}

void Interp::loweredOnly() {
  if (!lowered_ || !result_.kernels.empty() || result_.skipped)
    return;
  result_.skipped =
      fmt::format("the entry only lowers `{0}` (line {1}, `{0}.lower(...)`) and never calls "
                  "it: no kernel runs",
                  lowered_->first, lowered_->second);
}

void Interp::runEntry(const std::string &entry) {
  if (entry.empty())
    return;
  for (const TestCaseRef &t : collectTests(entry))
    if (t.id == entry || (!t.absltestId.empty() && t.absltestId == entry)) {
      runTest(t);
      return;
    }
  // `FILE.py::func`: a module-level function, called without arguments.
  if (entry.find("::") == std::string::npos && entry.find('(') == std::string::npos) {
    V f = main_->dict->get(entry);
    if (!f)
      fail({}, "python-entry",
           fmt::format("no entry '{}' in the file: it is neither a test (Class::test_x[case]) "
                       "nor a module-level function",
                       entry));
    call(f, Args{}, {});
    return;
  }
  fail({}, "python-entry", fmt::format("no test '{}' in the file", entry));
}

} // namespace dkv::pytrace
