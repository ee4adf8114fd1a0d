// The tracer's entry points: discovering a file's instances and tracing one of them, each
// in a fresh interpreter on a thread with room for CPython's recursion depth.
#include "pytrace/Tracer.h"

#include "pyfront/Parser.h"
#include "pytrace/Interp.h"

#include <fmt/format.h>

#include <pthread.h>

#include <functional>

namespace dkv::pytrace {

namespace {

// Runs `work` on a thread with a large stack: 1000 nested Python calls, each several C++
// frames deep, need more than a default thread's stack (the memory is reserved, not
// committed, until used).
void withLargeStack(const std::function<void()> &work) {
  constexpr size_t kStack = size_t{1} << 30;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, kStack);
  pthread_t thread;
  auto *fn = new std::function<void()>(work);
  auto trampoline = [](void *p) -> void * {
    auto *f = static_cast<std::function<void()> *>(p);
    (*f)();
    return nullptr;
  };
  if (pthread_create(&thread, &attr, trampoline, fn) != 0) {
    pthread_attr_destroy(&attr);
    (*fn)(); // no thread: run here (a deep recursion then reaches the stack's end sooner)
    delete fn;
    return;
  }
  pthread_attr_destroy(&attr);
  pthread_join(thread, nullptr);
  delete fn;
}

std::string idOfException(Interp &in, const PyRaise &e) {
  if (!e.id.empty())
    return e.id;
  const ClassP &cls = cast<InstanceV>(e.exc).cls;
  static const std::vector<std::pair<const char *, const char *>> ids = {
      {"RecursionError", "python-too-deep"},  {"TypeError", "python-type"},
      {"IndexError", "python-index"},         {"KeyError", "python-index"},
      {"NameError", "python-name"},           {"ZeroDivisionError", "python-zero-division"},
      {"AttributeError", "python-attribute"}, {"AssertionError", "python-assert"},
      {"OverflowError", "python-overflow"},   {"SyntaxError", "python-syntax"},
      {"ImportError", "python-import"}};
  for (const auto &[name, id] : ids)
    if (in.isSubclass(cls, in.exceptionClass(name)))
      return id;
  return "python-exception";
}

// One run of the interpreter: the top level, then an entry; the errors it stopped at.
struct Run {
  std::optional<TraceError> error;
};

void report(const TraceError &e, support::DiagnosticEngine &diags) {
  support::Diagnostic &d = diags.error(e.range, e.id, e.message);
  for (const auto &[range, text] : e.extra)
    d.notes.push_back(support::Diagnostic{support::Severity::Note, range, text, {}, {}});
  for (const auto &[range, text] : e.notes)
    d.notes.push_back(support::Diagnostic{support::Severity::Note, range, text, {}, {}});
  if (e.elided)
    d.notes.push_back(support::Diagnostic{
        support::Severity::Note, {}, fmt::format("... and {} more calls", e.elided), {}, {}});
}

// Runs `body` and turns what stops it into a TraceError (a Python exception uncaught by
// the file is one, in CPython's words).
std::optional<TraceError> guarded(Interp &in, const std::function<void()> &body) {
  std::optional<TraceError> out;
  withLargeStack([&] {
    try {
      body();
    } catch (StopRun &) {
    } catch (TraceError &e) {
      out = std::move(e);
    } catch (PyRaise &e) {
      TraceError t{e.range, idOfException(in, e), in.exceptionText(e.exc), e.notes, e.elided, {}};
      out = std::move(t);
    }
  });
  return out;
}

// `--call 'f(...)'`: a Python expression evaluated in the module's globals, with the
// names a call of a Pallas library function is written with (jax, jnp, np, pl, pltpu,
// functools) where the module does not bind them (a module that imports jax only inside
// its functions). The globals are a copy of the module's, so that these names never
// become the module's own: its functions still see only what it binds.
void runCall(Interp &in, const std::string &text) {
  if (!in.sources_)
    fail({}, "python-entry", "--call needs the run's source manager");
  const py::Expr &expr = in.parseExpression(
      "--call", text + "\n", [](SourceRange r) { return r; }, "--call", "python-entry",
      "--call takes one Python expression (a call)");
  auto globals = std::make_shared<ModuleV>(in.main_->name);
  globals->file = in.main_->file;
  for (const auto &[name, value] : in.main_->dict->items)
    globals->dict->set(name, value);
  static const std::pair<const char *, const char *> kNames[] = {
      {"jax", "jax"},
      {"jnp", "jax.numpy"},
      {"np", "numpy"},
      {"pl", "jax.experimental.pallas"},
      {"pltpu", "jax.experimental.pallas.tpu"},
      {"functools", "functools"}};
  for (const auto &[name, module] : kNames)
    if (!globals->dict->has(name))
      globals->dict->set(name, in.importModule(module, nullptr, 0, expr.range));
  in.moduleSymtable_[globals.get()] = in.moduleSymtable_.at(in.main_.get());
  Frame f = in.moduleFrame(in.main_);
  f.globals = globals;
  in.eval(expr, f);
}

std::pair<std::string, size_t> splitId(const std::string &id) {
  size_t hash = id.rfind('#');
  if (hash == std::string::npos || id.find(']', hash) != std::string::npos)
    return {id, 1};
  std::string num = id.substr(hash + 1);
  if (num.empty() || num.find_first_not_of("0123456789") != std::string::npos)
    return {id, 1};
  return {id.substr(0, hash), static_cast<size_t>(std::stoul(num))};
}

std::string callOf(const TraceOptions &o) {
  if (!o.call.empty())
    return o.call;
  return o.directives ? o.directives->call : "";
}

} // namespace

std::vector<FoundInstance> discoverInstances(const py::Module &module,
                                             const support::SourceFile &file,
                                             const TraceOptions &options, const std::string &want) {
  std::vector<FoundInstance> out;
  // The k-th kernel (from 1) of an entry: the entry itself for the first, `entry#k` after.
  auto idOf = [](const std::string &entry, size_t k) {
    return k == 1 ? entry : fmt::format("{}#{}", entry, k);
  };
  auto add = [&](const std::string &entry, const EntryResult &res, bool failed) {
    for (size_t k = 0; k < res.kernels.size(); ++k)
      out.push_back({idOf(entry, k + 1), res.kernels[k].name, std::nullopt, false, res.note});
    // An entry that stops at an error after tracing some kernels: they are instances, and
    // the error is the next one's (checking `entry#k` traces up to it and reports it), so
    // it is never lost behind the verdicts of the kernels before it.
    if (failed)
      out.push_back({idOf(entry, res.kernels.size() + 1), "", std::nullopt, true, res.note});
    else if (res.kernels.empty())
      out.push_back({entry, "", res.skipped, false, res.note});
  };
  const std::string call = callOf(options);
  const bool entryDirective = options.directives && options.directives->entry;
  std::vector<std::string> tests;
  {
    Interp in(options, options.sources);
    in.traceKernels_ = call.empty() && !entryDirective;
    in.entryMode_ = entryDirective;
    auto err = guarded(in, [&] {
      in.runMain(module, file, /*asScript=*/call.empty() && !entryDirective);
      if (entryDirective) {
        in.traceEntryDirective(*options.directives->entry);
      } else if (!call.empty()) {
        in.traceKernels_ = true;
        runCall(in, call);
      }
      in.loweredOnly();
    });
    if (err) {
      add("", in.result_, true);
      return out;
    }
    add("", in.result_, false);
    if (entryDirective || !call.empty()) {
      if (in.result_.kernels.empty())
        out = {{"", "", std::nullopt, true, ""}};
      return out;
    }
    std::optional<TraceError> listErr = guarded(in, [&] { tests = in.testEntries(want); });
    if (listErr)
      tests.clear();
  }
  for (const std::string &t : tests) {
    Interp in(options, options.sources);
    in.traceKernels_ = false;
    auto err = guarded(in, [&] {
      in.runMain(module, file, /*asScript=*/false);
      in.traceKernels_ = true;
      in.runEntry(t);
      in.loweredOnly();
    });
    add(t, in.result_, err.has_value());
  }
  bool any = false;
  for (const FoundInstance &f : out)
    any = any || f.failed || f.skipped || !f.kernel.empty();
  if (!any)
    out.insert(out.begin(), FoundInstance{"", "", std::nullopt, true, ""});
  return out;
}

std::unique_ptr<ast::Module> traceModule(const py::Module &module, const support::SourceFile &file,
                                         const TraceOptions &options,
                                         support::DiagnosticEngine &diags, const std::string &id,
                                         std::optional<std::string> *skipped, std::string *note) {
  auto [entry, k] = splitId(id);
  const std::string call = callOf(options);
  const bool entryDirective = options.directives && options.directives->entry;
  Interp in(options, options.sources);
  const bool topLevel = entry.empty() && call.empty() && !entryDirective;
  in.traceKernels_ = topLevel;
  in.stopAfter_ = topLevel ? k : 0;
  in.entryMode_ = entryDirective;
  std::vector<std::string> tests;
  auto err = guarded(in, [&] {
    in.runMain(module, file, /*asScript=*/topLevel);
    if (entryDirective && entry.empty()) {
      in.traceEntryDirective(*options.directives->entry);
    } else if (!call.empty() && entry.empty()) {
      in.traceKernels_ = true;
      in.stopAfter_ = k;
      runCall(in, call);
    } else if (!entry.empty()) {
      in.traceKernels_ = true;
      in.stopAfter_ = k;
      in.result_.kernels.clear();
      in.lowered_.reset();
      in.runEntry(entry);
    } else if (in.result_.kernels.size() < k) {
      tests = in.testEntries();
    }
    in.loweredOnly();
  });
  if (note)
    *note = in.result_.note;
  if (err) {
    report(*err, diags);
    return nullptr;
  }
  if (in.result_.kernels.size() >= k)
    return std::move(in.result_.kernels[k - 1].module);
  if (in.result_.skipped) {
    if (skipped)
      *skipped = *in.result_.skipped;
    return nullptr;
  }
  std::string hint;
  if (!tests.empty()) {
    hint = fmt::format("; its entries are test methods: check the file as a whole ('dkv check "
                       "{}') or one of them ('{}::{}')",
                       file.name(), file.name(), tests[0]);
  } else if (entry.empty() && call.empty()) {
    hint = fmt::format("; for a library kernel whose call site is elsewhere, give the call with "
                       "--call 'f(...)' or add '# dkv: entry KERNEL(in x: f32[8, 128] @any, ...)' "
                       "(docs/python.md \"Entries\", \"Directives\"){}",
                       in.kernelCandidates());
  }
  std::string what = !call.empty()    ? fmt::format("the call `{}`", call)
                     : !entry.empty() ? fmt::format("the entry '{}'", entry)
                                      : std::string("the file's top level");
  diags.error(module.range, "python-no-kernel",
              k > 1 ? fmt::format("{} traces {} kernel{}, not {}", what, in.result_.kernels.size(),
                                  in.result_.kernels.size() == 1 ? "" : "s", k)
                    : fmt::format("no kernel was traced: {} never calls a `shard_map` of a "
                                  "`pl.pallas_call` on arrays{}",
                                  what, hint));
  return nullptr;
}

} // namespace dkv::pytrace
