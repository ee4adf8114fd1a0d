// `dkv check PATH...`: the instances of every kernel named (files, directories, the
// device counts of `// devices:` annotations), checked one by one or by a pool of
// threads, reported in input order as text, JSON or SARIF, with one summary.
#include "driver/Commands.h"

#include "driver/Console.h"
#include "driver/PythonCommand.h"
#include "driver/TracePictures.h"
#include "frontend/Annotations.h"
#include "report/Json.h"
#include "report/Render.h"
#include "report/Sarif.h"
#include "support/Color.h"
#include "support/Diagnostics.h"
#include "support/Invariant.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <optional>
#include <ostream>
#include <set>
#include <sstream>
#include <thread>

namespace dkv::driver {

namespace {

namespace fs = std::filesystem;

/// One instance to check, or one that failed before loading (bad annotations).
struct Planned {
  InstanceOptions options;
  std::string command; ///< "FILE --devices N ..." (how to check it alone)
  /// Set when planning already failed: the exit code, the rendered diagnostics and
  /// the diagnostics themselves (in `sources`).
  std::optional<int> failed;
  std::string failText;
  std::vector<support::Diagnostic> diagnostics;
  std::shared_ptr<support::SourceManager> sources;
};

struct Result {
  int code = support::kExitOk;
  std::string err; ///< what load() rendered (diagnostics, warnings)
  Loaded loaded;
  std::optional<report::Verdict> verdict;
  report::VerdictHeading heading;
  double seconds = 0;
  /// The text report's findings printed as they were found, by property id (each as
  /// renderFindingBlock and an empty line), and per finding of the verdict whether
  /// that text is its text (then it is not printed again).
  std::map<std::string, std::string> streamed;
  std::vector<bool> shown;
};

/// `--stop-at-first` over several instances: the first instance (in input order) with
/// a finding; the instances after it are not started, and stopped if running.
class FirstFinding {
public:
  void found(size_t i) {
    size_t seen = first_.load();
    while (i < seen && !first_.compare_exchange_weak(seen, i)) {
    }
  }
  /// Instance `i` need not be checked (or finished).
  bool after(size_t i) const { return i > first_.load(); }

private:
  std::atomic<size_t> first_{SIZE_MAX};
};

/// How one instance reports while it runs.
struct Reporting {
  size_t index = 0;
  bool several = false;
  bool colorOut = false;
  bool colorErr = false;
  Console *console = nullptr;
  FirstFinding *first = nullptr;
};

/// The options of a `// options:` annotation, parsed like the command line's instance
/// options: --invocations K, --dma-chunks K, --sem-unit B, --no-entry-barrier, --dma-order O,
/// -D NAME=V, -T NAME=JSON (also -DNAME=V, --define NAME=V and the --opt=value forms).
bool parseOptionWords(const std::vector<std::string> &words, InstanceOptions &o,
                      std::string &error) {
  auto number = [&](const std::string &name, const std::string &text, int64_t lo, int64_t hi,
                    int64_t &value) {
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || ec != std::errc() || ptr != text.data() + text.size() || value < lo ||
        value > hi) {
      error = fmt::format("{} takes a number from {} to {}, got '{}'", name, lo, hi, text);
      return false;
    }
    return true;
  };
  for (size_t i = 0; i < words.size(); ++i) {
    std::string word = words[i];
    std::optional<std::string> value;
    if (size_t eq = word.find('='); word.starts_with("--") && eq != std::string::npos) {
      value = word.substr(eq + 1);
      word = word.substr(0, eq);
    } else if (word.starts_with("-D") && word.size() > 2) {
      value = word.substr(2);
      word = "-D";
    } else if (word.starts_with("-T") && word.size() > 2) {
      value = word.substr(2);
      word = "-T";
    }
    if (word == "--no-entry-barrier") {
      o.model.entryBarrier = false;
      continue;
    }
    bool known = word == "--invocations" || word == "--dma-chunks" || word == "--sem-unit" ||
                 word == "--dma-order" || word == "--entry-barrier-cores" || word == "-D" ||
                 word == "--define" || word == "-T" || word == "--table";
    if (!known) {
      error = fmt::format("unknown option '{}' (an options annotation takes --invocations, "
                          "--dma-chunks, --sem-unit, --no-entry-barrier, --dma-order, "
                          "--entry-barrier-cores, -D and -T)",
                          words[i]);
      return false;
    }
    if (!value) {
      if (i + 1 >= words.size()) {
        error = fmt::format("{} needs a value", word);
        return false;
      }
      value = words[++i];
    }
    int64_t n = 0;
    if (word == "--invocations") {
      if (!number(word, *value, 1, 16, n))
        return false;
      o.model.invocations = static_cast<int32_t>(n);
    } else if (word == "--dma-chunks") {
      if (!number(word, *value, 1, 64, n))
        return false;
      o.model.dmaChunks = static_cast<int32_t>(n);
    } else if (word == "--dma-order") {
      if (*value == "any") {
        o.model.dmaOrder = model::DmaOrder::Any;
      } else if (*value == "link") {
        o.model.dmaOrder = model::DmaOrder::Link;
      } else {
        error = fmt::format("--dma-order takes any or link, got '{}'", *value);
        return false;
      }
    } else if (word == "--entry-barrier-cores") {
      if (*value == "none") {
        o.model.entryBarrierCores = model::EntryBarrierCores::None;
      } else if (*value == "all") {
        o.model.entryBarrierCores = model::EntryBarrierCores::All;
      } else {
        error = fmt::format("--entry-barrier-cores takes none or all, got '{}'", *value);
        return false;
      }
    } else if (word == "--sem-unit") {
      if (!number(word, *value, 1, int64_t{1} << 30, n))
        return false;
      o.model.semUnit = n;
    } else if (word == "-T" || word == "--table") {
      // The annotation's contents of a table replace the command line's.
      std::string name = value->substr(0, value->find('='));
      std::erase_if(o.tables,
                    [&](const std::string &t) { return t.substr(0, t.find('=')) == name; });
      o.tables.push_back(*value);
    } else {
      o.defines.push_back(*value);
    }
  }
  return true;
}

/// How to check `o` alone: "FILE --devices N [--invocations K] ... [-D X=V]".
std::string commandOf(const InstanceOptions &o) {
  std::string text = o.file;
  if (!o.entry.empty())
    text += (o.entry[0] == '#' ? "" : "::") + o.entry;
  if (o.devices)
    text += fmt::format(" --devices {}", *o.devices);
  if (!o.mesh.empty())
    text += fmt::format(" --mesh {}", o.mesh);
  if (o.model.invocations != 1)
    text += fmt::format(" --invocations {}", o.model.invocations);
  if (o.model.dmaChunks != 1)
    text += fmt::format(" --dma-chunks {}", o.model.dmaChunks);
  if (o.model.semUnit != 1)
    text += fmt::format(" --sem-unit {}", o.model.semUnit);
  if (!o.model.entryBarrier)
    text += " --no-entry-barrier";
  if (o.model.dmaOrder != model::DmaOrder::Any)
    text += fmt::format(" --dma-order {}", model::dmaOrderName(o.model.dmaOrder));
  if (o.model.entryBarrierCores != model::EntryBarrierCores::None)
    text += fmt::format(" --entry-barrier-cores {}",
                        model::entryBarrierCoresName(o.model.entryBarrierCores));
  for (const std::string &d : o.defines)
    text += " -D " + d;
  for (const std::string &t : o.tables)
    text += " -T '" + t + "'";
  if (!o.tablesFile.empty())
    text += " --tables " + o.tablesFile;
  if (!o.directives.empty())
    text += " --directives " + o.directives;
  if (!o.call.empty())
    text += " --call '" + o.call + "'";
  for (const std::string &set : o.sets)
    text += " --set " + set;
  for (const std::string &dir : o.pythonPath)
    text += " --python-path " + dir;
  return text;
}

/// True if the Python file at `path` may hold a Pallas kernel: its text mentions
/// `pallas` (every kernel imports it) or has a `# dkv:` directive. An unreadable file
/// counts (its error is reported when it is checked).
bool isPallasPython(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return true;
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return text.find("pallas") != std::string::npos || text.find("dkv:") != std::string::npos;
}

/// The kernel files of `paths`: a directory gives every `*.dk` under it and every `*.py`
/// that mentions `pallas` or `dkv:` (recursively, sorted); anything else is taken as a
/// file. False (with a message on `err`) for a directory without kernels.
bool expandPaths(const std::vector<std::string> &paths, std::vector<std::string> &files,
                 std::ostream &err) {
  bool ok = true;
  for (const std::string &path : paths) {
    std::error_code ec;
    if (!fs::is_directory(path, ec)) {
      files.push_back(path);
      continue;
    }
    std::vector<std::string> found;
    for (auto it = fs::recursive_directory_iterator(path, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
      if ((it->path().extension() == ".dk" ||
           (it->path().extension() == ".py" && isPallasPython(it->path().string()))) &&
          it->is_regular_file(ec))
        found.push_back(it->path().lexically_normal().generic_string());
    if (ec) {
      err << path << ": error: " << ec.message() << "\n";
      ok = false;
    } else if (found.empty()) {
      err << path
          << ": error: no *.dk file (nor *.py file mentioning pallas) under this directory\n";
      ok = false;
    }
    std::sort(found.begin(), found.end());
    files.insert(files.end(), found.begin(), found.end());
  }
  return ok;
}

/// Adds `p` to the plan: for a Python file, one instance per kernel its entries trace (its
/// top level, each test case, its --call; docs/python.md "Entries"), a skipped test case
/// and an entry that stops at an error each as one instance too.
void pushPlanned(Planned p, std::vector<Planned> &plan) {
  if (!isPythonFile(p.options.file)) {
    plan.push_back(std::move(p));
    return;
  }
  std::vector<PythonInstance> found = discoverPythonInstances(p.options);
  size_t before = plan.size();
  for (const PythonInstance &f : found) {
    if (f.kernel.empty() && !f.failed && !f.skipped)
      continue; // an entry without a kernel: nothing to check (`dkv list` shows it)
    Planned q = p;
    q.options.entry = f.entry;
    q.command = commandOf(q.options);
    plan.push_back(std::move(q));
  }
  if (plan.size() == before)
    plan.push_back(std::move(p)); // loading it reports why there is nothing to check
}

/// The instances of `file` at the device counts and with the options of its
/// annotations (the command line's instance options apply first, an annotation's
/// override them).
void planFromAnnotations(const std::string &file, const InstanceOptions &base,
                         std::vector<Planned> &plan) {
  auto sources = std::make_shared<support::SourceManager>();
  Planned failed;
  failed.options = base;
  failed.options.file = file;
  failed.command = file;
  failed.sources = sources;
  failed.failed = support::kExitInputError;
  std::string error;
  std::optional<support::FileId> id = sources->load(file, error);
  if (!id) {
    failed.failText = file + ": error: " + error + "\n";
    failed.diagnostics.push_back(
        support::Diagnostic{support::Severity::Error, {}, error, "unreadable-file", {}});
    plan.push_back(std::move(failed));
    return;
  }
  support::DiagnosticEngine diags(sources.get());
  ast::Annotations annotations = frontend::readAnnotations(sources->file(*id), diags);
  InstanceOptions options = base;
  options.file = file;
  if (!diags.hasErrors() && annotations.devices.empty() && annotations.meshes.empty())
    diags.error(support::SourceRange{sources->file(*id).loc(1, 1), sources->file(*id).loc(1, 1)},
                "no-devices-annotation",
                "no '// devices:' or '// mesh:' annotation: --devices-from-annotations needs "
                "one (or check the file with --devices N or --mesh AXIS=SIZE,...)");
  if (!diags.hasErrors() && !parseOptionWords(annotations.options, options, error))
    diags.error(annotations.optionsRange, "bad-annotation", error);
  // Each `// expect: VERDICT with OPTIONS` adds the instances checked under its options
  // (after the options comment's, overriding them), at its own counts or meshes if it
  // gives them, else at the file's (docs/examples.md "Verdicts under options").
  std::vector<InstanceOptions> caseOptions;
  for (const ast::Annotations::Case &c : annotations.cases) {
    InstanceOptions o = options;
    if (!diags.hasErrors() && !parseOptionWords(c.options, o, error))
      diags.error(c.expect.range, "bad-annotation", error);
    caseOptions.push_back(std::move(o));
  }
  if (diags.hasErrors()) {
    std::ostringstream text;
    diags.render(text);
    failed.failText = text.str();
    failed.diagnostics = diags.diagnostics();
    plan.push_back(std::move(failed));
    return;
  }
  auto instances = [&](const InstanceOptions &o, const std::vector<int64_t> &devices,
                       const std::vector<std::string> &meshes) {
    for (int64_t n : devices) {
      Planned p;
      p.options = o;
      p.options.devices = n;
      p.command = commandOf(p.options);
      pushPlanned(std::move(p), plan);
    }
    for (const std::string &mesh : meshes) {
      Planned p;
      p.options = o;
      p.options.mesh = mesh;
      p.command = commandOf(p.options);
      pushPlanned(std::move(p), plan);
    }
  };
  instances(options, annotations.devices, annotations.meshes);
  for (size_t i = 0; i < annotations.cases.size(); ++i) {
    const ast::Annotations::Case &c = annotations.cases[i];
    if (!c.devices.empty() || !c.meshes.empty())
      instances(caseOptions[i], c.devices, c.meshes);
    else
      instances(caseOptions[i], annotations.devices, annotations.meshes);
  }
}

/// The `// dkv: allow KIND -- reason` comments of the checked file (the parser has
/// checked their form).
std::vector<report::Suppression> suppressionsOf(const Loaded &loaded) {
  std::vector<report::Suppression> out;
  if (!loaded.module)
    return out;
  for (const ast::Annotations::Suppression &s : loaded.module->annotations().suppressions)
    for (report::FindingKind kind :
         {report::FindingKind::Race, report::FindingKind::Deadlock,
          report::FindingKind::ExitViolation, report::FindingKind::LifetimeViolation})
      if (s.kind == report::findingKindName(kind))
        out.push_back({kind, s.reason, s.line, s.range.begin});
  return out;
}

/// The beginning of an instance's block in a text report of several instances.
std::string blockHeader(size_t index, const Planned &p, const std::string &err) {
  return (index ? "\n" : "") + std::string("== ") + p.command + " ==\n" + err;
}

Result runInstance(const Planned &p, const CheckOptions &check, const Reporting &rep) {
  auto start = std::chrono::steady_clock::now();
  Result r;
  std::ostringstream err;
  r.code = load(p.options, Stage::Model, r.loaded, err);
  if (r.code == support::kExitUsage && r.loaded.diagnostics.empty()) {
    // A bad -D: a usage error on the command line, an input error in an annotation.
    std::string message = err.str();
    if (message.starts_with("dkv: error: "))
      message = message.substr(12);
    while (!message.empty() && message.back() == '\n')
      message.pop_back();
    r.loaded.diagnostics.push_back(
        support::Diagnostic{support::Severity::Error, {}, message, "bad-define", {}});
  }
  r.err = err.str();
  // The text report begins before the search: the instance's header (or, for one
  // instance, its diagnostics on standard error), then its findings as they come.
  const bool text = check.format == "text";
  if (text && rep.several)
    rep.console->write(rep.index, rep.colorOut ? support::colorize(blockHeader(rep.index, p, r.err))
                                               : blockHeader(rep.index, p, r.err));
  else if (text)
    rep.console->writeErr(rep.colorErr ? support::colorize(r.err) : r.err);
  if (r.code == support::kExitOk && !r.loaded.skipped) {
    const Engine *engine = findEngine(check.engine);
    DKV_INVARIANT(engine, "the command line checks the engine name");
    const std::vector<report::Suppression> suppressions = suppressionsOf(r.loaded);
    const support::SourceManager *sources = &r.loaded.sources;
    RunEvents events;
    events.finding = [&](const report::Finding &found) {
      report::Verdict one;
      one.findings.push_back(found);
      report::applySuppressions(one, suppressions);
      const report::Finding &f = one.findings[0];
      if (text) {
        std::string block = report::renderFindingBlock(f, sources, check.explain) + "\n";
        r.streamed[f.property] = block;
        rep.console->write(rep.index, rep.colorOut ? support::colorize(block) : block);
      }
      // A merge check wants a yes or no: the first finding that fails the check (not
      // accepted by a suppression, and reproduced by the executor) ends the run.
      const bool stop =
          check.stopAtFirst && f.suppressed.empty() && (f.confirmed || !check.confirm);
      if (stop)
        rep.first->found(rep.index);
      return !stop;
    };
    events.progress = [&](const semantics::EngineProgress &progress) {
      rep.console->progress(rep.index, progress);
    };
    if (check.stopAtFirst)
      events.cancelled = [&] { return rep.first->after(rep.index); };
    r.verdict = runEngine(*engine, r.loaded.instance->machine(), check, &events);
    report::applySuppressions(*r.verdict, suppressions);
    for (const report::Finding &f : r.verdict->findings) {
      auto it = r.streamed.find(f.property);
      r.shown.push_back(it != r.streamed.end() &&
                        it->second == report::renderFindingBlock(f, sources, check.explain) + "\n");
    }
    r.heading = {check.engine, describeInstance(r.loaded.instance->program()), check.timing,
                 check.explain};
    const model::Program &program = r.loaded.instance->program();
    r.heading.assumptions = {{"dma_order", model::dmaOrderName(program.options.dmaOrder)}};
    // On a TensorCore mesh of several cores, which cores the entry barrier joins is an
    // assumption too (docs/model.md "TensorCores").
    if (program.coresPerDevice() > 1)
      r.heading.assumptions.push_back(
          {"entry_barrier_cores", model::entryBarrierCoresName(program.options.entryBarrierCores)});
    r.heading.cores = program.cores ? program.coresPerDevice() : 0;
    switch (r.verdict->status) {
    case report::Verdict::Status::Verified:
      r.code = support::kExitOk;
      break;
    case report::Verdict::Status::Findings:
      // Findings that `// dkv: allow` comments accept do not fail the check.
      r.code = report::activeFindings(*r.verdict) ? support::kExitFindings
               : r.verdict->reason.empty()        ? support::kExitOk
                                                  : support::kExitInconclusive;
      break;
    case report::Verdict::Status::Inconclusive:
      r.code = support::kExitInconclusive;
      break;
    case report::Verdict::Status::Error:
      r.code = support::kExitInternal;
      break;
    }
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

/// How bad an exit code is: internal error > usage > input error > findings >
/// inconclusive > ok.
int severityOf(int code) {
  switch (code) {
  case support::kExitInternal:
    return 5;
  case support::kExitUsage:
    return 4;
  case support::kExitInputError:
    return 3;
  case support::kExitFindings:
    return 2;
  case support::kExitInconclusive:
    return 1;
  default:
    return 0;
  }
}

} // namespace

int worstExitCode(int a, int b) { return severityOf(b) > severityOf(a) ? b : a; }

int checkPathsCommand(const std::vector<std::string> &paths, const InstanceOptions &base,
                      const CheckOptions &check, std::ostream &stdOut, std::ostream &err) {
  auto start = std::chrono::steady_clock::now();
  if (!findEngine(check.engine)) {
    err << "dkv: error: no engine called '" << check.engine << "'\n";
    return support::kExitUsage;
  }
  std::vector<std::string> files;
  if (!expandPaths(paths, files, err))
    return support::kExitInputError;

  std::vector<Planned> plan;
  for (const std::string &path : files) {
    // `FILE.py::Class::test_x[case]`, `FILE.py#2`: instances of a Python file.
    std::string file, entry;
    splitPythonTarget(path, file, entry);
    InstanceOptions options = base;
    options.entry = entry;
    if (check.devicesFromAnnotations) {
      planFromAnnotations(file, options, plan);
      continue;
    }
    Planned p;
    p.options = options;
    p.options.file = file;
    p.command = commandOf(p.options);
    pushPlanned(std::move(p), plan);
  }
  const bool several = plan.size() != 1;
  if (int code = checkTraceOptions(check, plan.size(), err); code != support::kExitOk)
    return code;

  std::ofstream fileOut;
  if (!check.output.empty()) {
    fileOut.open(check.output, std::ios::binary);
    if (!fileOut) {
      err << "dkv: error: cannot write '" << check.output << "'\n";
      return support::kExitUsage;
    }
  }
  std::ostream &out = check.output.empty() ? stdOut : fileOut;
  // Colours only for the text report, on a terminal (or --color always).
  const bool colorOut =
      check.format == "text" && support::colorWanted(check.color, check.output.empty() ? 1 : -1);
  const bool colorErr = check.format == "text" && support::colorWanted(check.color, 2);

  // Workers take instances in order; the main thread reports them in order, through
  // the console, which prints the findings of the instance being reported as they are
  // found and keeps those of later instances until their turn.
  std::vector<std::string> labels;
  for (const Planned &p : plan)
    labels.push_back(p.command);
  Console console(out, err, labels, Console::wanted(check.progress));
  FirstFinding first;
  auto reporting = [&](size_t i) {
    return Reporting{i, several, colorOut, colorErr, &console, &first};
  };
  std::vector<std::optional<Result>> results(plan.size());
  std::mutex mutex;
  std::condition_variable ready;
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < plan.size(); i = next++) {
      if (plan[i].failed || first.after(i))
        continue;
      Result r = runInstance(plan[i], check, reporting(i));
      console.done(i);
      std::lock_guard lock(mutex);
      results[i] = std::move(r);
      ready.notify_all();
    }
  };
  std::vector<std::thread> pool;
  unsigned jobs = std::max(1u, std::min<unsigned>(check.jobs, static_cast<unsigned>(plan.size())));
  if (jobs > 1)
    for (unsigned t = 0; t < jobs; ++t)
      pool.emplace_back(work);

  report::SarifLog sarif(check.toolVersion);
  std::vector<nlohmann::json> jsonInstances;
  report::RunSummary summary;
  std::set<std::string> kernels;
  std::set<std::string> pictures; ///< --trace-dir: the file names written
  int code = support::kExitOk;
  for (size_t i = 0; i < plan.size(); ++i) {
    // --stop-at-first: an instance before this one has a finding; this one and the
    // rest are not checked (those running are stopped, their output dropped), so the
    // report is the same for every -j.
    if (check.stopAtFirst && first.after(i)) {
      summary.stoppedEarly = true;
      summary.notChecked = plan.size() - i;
      break;
    }
    const Planned &p = plan[i];
    kernels.insert(p.options.file);
    console.begin(i);
    Result r;
    if (p.failed) {
      r.code = *p.failed;
      r.err = p.failText;
      r.loaded.diagnostics = p.diagnostics;
      if (check.format == "text" && several)
        console.write(i, colorOut ? support::colorize(blockHeader(i, p, r.err))
                                  : blockHeader(i, p, r.err));
      else if (check.format == "text")
        console.writeErr(colorErr ? support::colorize(r.err) : r.err);
    } else if (jobs > 1) {
      std::unique_lock lock(mutex);
      ready.wait(lock, [&] { return results[i].has_value(); });
      r = std::move(*results[i]);
      results[i].reset();
    } else {
      r = runInstance(p, check, reporting(i));
      console.done(i);
    }
    const support::SourceManager *sources = p.sources ? p.sources.get() : &r.loaded.sources;
    code = worstExitCode(code, r.code);
    ++summary.instances;
    if (r.loaded.skipped) {
      // A Python test case that skipped itself: reported with its reason, never verified.
      ++summary.skipped;
      if (check.format == "json") {
        nlohmann::json j = {{"dkv_format", 1},
                            {"status", "skipped"},
                            {"file", p.options.file},
                            {"instance", p.command},
                            {"reason", *r.loaded.skipped}};
        if (several)
          jsonInstances.push_back(j);
        else
          out << j.dump(2) << "\n";
      } else if (check.format == "sarif") {
        sarif.addNotification("note", p.command + ": skipped: " + *r.loaded.skipped,
                              p.options.file);
      }
      continue;
    }
    switch (r.code) {
    case support::kExitOk:
      ++summary.verified;
      break;
    case support::kExitFindings:
      ++summary.withFindings;
      break;
    case support::kExitInconclusive:
      ++summary.inconclusive;
      break;
    case support::kExitInternal:
      ++summary.internalErrors;
      break;
    default:
      ++summary.staticErrors;
    }
    if (r.verdict)
      for (const report::Finding &f : r.verdict->findings)
        ++(f.suppressed.empty() ? summary.findingsByKind[f.kind] : summary.suppressed);
    if (r.verdict) {
      std::ostringstream pictureErr;
      code = worstExitCode(code,
                           writeTracePictures(check, *r.verdict, p.options.file,
                                              r.loaded.instance->machine().deviceCount(), sources,
                                              r.heading.instance, p.command, pictures, pictureErr));
      console.writeErr(pictureErr.str());
    }

    if (check.format == "text") {
      // The header, the diagnostics and the findings found during the search are
      // printed already; the verdict follows them.
      std::ostringstream block;
      if (several && !r.verdict && r.err.empty())
        block << "error: exit code " << r.code << "\n";
      if (r.verdict)
        report::renderVerdict(block, *r.verdict, sources, r.heading, &r.shown);
      console.write(i, colorOut ? support::colorize(block.str()) : block.str());
    } else if (check.format == "json") {
      console.writeErr(r.err);
      if (r.verdict && !several)
        report::renderVerdictJson(out, *r.verdict, p.options.file, sources, r.heading);
      else if (r.verdict)
        jsonInstances.push_back(
            report::verdictJson(*r.verdict, p.options.file, sources, r.heading));
      else if (several)
        jsonInstances.push_back(
            report::staticErrorJson(p.options.file, p.command, r.loaded.diagnostics, sources));
    } else { // sarif
      console.writeErr(r.err);
      if (r.verdict)
        sarif.addVerdict(*r.verdict, p.options.file, sources, r.heading.instance);
      else if (r.code == support::kExitInternal)
        sarif.addNotification("error", p.command + ": internal error: " + r.err, p.options.file);
      else
        sarif.addDiagnostics(r.loaded.diagnostics, p.options.file, sources, p.command);
    }
    if (check.stopAtFirst && r.code == support::kExitFindings)
      first.found(i);
  }
  for (std::thread &t : pool)
    t.join();
  console.finish();
  summary.kernels = kernels.size();
  summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  if (check.format == "sarif") {
    if (summary.stoppedEarly)
      sarif.addNotification("warning",
                            fmt::format("stopped at the first finding (--stop-at-first): {} "
                                        "instance{} not checked",
                                        summary.notChecked, summary.notChecked == 1 ? "" : "s"),
                            plan[summary.instances - 1].options.file);
    sarif.write(out);
  }
  if (several && check.format == "json")
    report::renderRunJson(out, jsonInstances, summary, code, check.timing);
  if (several) {
    // The summary line: after the text report, or (JSON, SARIF) on standard output
    // when the report goes to a file, else on standard error.
    if (check.format == "text") {
      std::ostringstream line;
      report::renderSummary(line, summary, check.timing);
      out << "\n" << (colorOut ? support::colorize(line.str()) : line.str());
    } else {
      std::ostringstream line;
      report::renderSummary(line, summary, check.timing);
      (check.output.empty() ? err : stdOut) << line.str();
    }
  }
  out.flush();
  if (!check.output.empty() && !fileOut) {
    err << "dkv: error: cannot write '" << check.output << "'\n";
    return worstExitCode(code, support::kExitUsage);
  }
  return code;
}

int checkCommand(const InstanceOptions &instance, const CheckOptions &check, std::ostream &out,
                 std::ostream &err) {
  return checkPathsCommand({instance.file}, instance, check, out, err);
}

} // namespace dkv::driver
