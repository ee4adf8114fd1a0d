// `dkv check PATH...`: the instances of every kernel named (files, directories, the
// device counts of `// devices:` annotations), checked one by one or by a pool of
// threads, reported in input order as text, JSON or SARIF, with one summary.
#include "driver/Commands.h"

#include "driver/Console.h"
#include "driver/Fix.h"
#include "driver/Output.h"
#include "driver/PythonCommand.h"
#include "driver/TracePictures.h"
#include "frontend/Annotations.h"
#include "report/Json.h"
#include "report/Render.h"
#include "report/RootCause.h"
#include "report/Sarif.h"
#include "support/Color.h"
#include "support/Diagnostics.h"
#include "support/Invariant.h"
#include "support/Suggest.h"

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
#include <numeric>
#include <optional>
#include <ostream>
#include <set>
#include <sstream>
#include <thread>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

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
      error =
          fmt::format("unknown option '{}'{} (an options annotation takes --invocations, "
                      "--dma-chunks, --sem-unit, --no-entry-barrier, --dma-order, "
                      "--entry-barrier-cores, -D and -T)",
                      words[i],
                      support::didYouMean(word, {"--invocations", "--dma-chunks", "--sem-unit",
                                                 "--no-entry-barrier", "--dma-order",
                                                 "--entry-barrier-cores", "--define", "--table"}));
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

} // namespace

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
  if (!o.tpu.empty())
    text += " --tpu " + o.tpu;
  if (o.hypothesisSeed)
    text += fmt::format(" --hypothesis-seed {}", *o.hypothesisSeed);
  return text;
}

namespace {

/// What a directory holds for `dkv check DIR`.
enum class Collected { Kernel, NotKernel, NotRegular };

/// Whether the file at `path` under a directory is a kernel to check: a regular file
/// (symbolic links followed; a FIFO, a device or a socket is never opened, so nothing
/// blocks or reads forever) named `*.dk`, or `*.py` whose text mentions `pallas` (every
/// kernel imports it) or has a `# dkv:` directive. A Python file is read up to the limit
/// of a kernel file (16 MiB); a longer one counts, and its check reports it as too
/// large; so does an unreadable one.
Collected collect(const fs::path &path) {
  const bool dk = path.extension() == ".dk", py = path.extension() == ".py";
  if (!dk && !py)
    return Collected::NotKernel;
  std::error_code ec;
  if (!fs::is_regular_file(path, ec))
    return Collected::NotRegular;
  if (dk)
    return Collected::Kernel;
  // O_NONBLOCK: should the file have become a FIFO since, opening it does not wait.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    return Collected::Kernel;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return Collected::NotRegular;
  }
  std::string text;
  char buffer[1 << 16];
  const size_t limit = support::SourceFile::kMaxLoadBytes;
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n <= 0)
      break;
    text.append(buffer, static_cast<size_t>(n));
    if (text.size() > limit)
      break;
  }
  ::close(fd);
  if (text.size() > limit)
    return Collected::Kernel;
  return text.find("pallas") != std::string::npos || text.find("dkv:") != std::string::npos
             ? Collected::Kernel
             : Collected::NotKernel;
}

/// The kernel files of `paths`: a directory gives every `*.dk` under it and every `*.py`
/// that mentions `pallas` or `dkv:` (recursively, sorted; regular files only, collect);
/// anything else is taken as a file. False (with a message on `err`) for a directory
/// without kernels.
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
      if (collect(it->path()) == Collected::Kernel)
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
  frontend::Annotations annotations = frontend::readAnnotations(sources->file(*id), diags);
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
  for (const frontend::Annotations::Case &c : annotations.cases) {
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
    const frontend::Annotations::Case &c = annotations.cases[i];
    if (!c.devices.empty() || !c.meshes.empty())
      instances(caseOptions[i], c.devices, c.meshes);
    else
      instances(caseOptions[i], annotations.devices, annotations.meshes);
  }
}

/// The verdict of an instance its stop request ended before an engine gave one (during
/// loading, lowering or the setup): inconclusive, with the reason and the phase.
report::Verdict stoppedVerdict(const support::StopToken &stop) {
  report::Verdict v;
  v.status = report::Verdict::Status::Inconclusive;
  v.reason = fmt::format("{} while {}", stop.reason(), stop.phase());
  return v;
}

void checkInstance(const Planned &p, const CheckOptions &check, const Reporting &rep, Result &r,
                   support::StopToken &stop);

Result runInstance(const Planned &p, const CheckOptions &check, const Reporting &rep) {
  auto start = std::chrono::steady_clock::now();
  Result r;
  // The instance's stop request: its time limit (--timeout, from here to the verdict),
  // the memory ceiling (--memory) and SIGINT / SIGTERM / SIGHUP, which the watchdog
  // turns into a request (support/Stop.h).
  support::StopToken stop;
  {
    std::optional<support::Watchdog::Watch> watch;
    if (support::Watchdog *dog = support::Watchdog::current())
      watch.emplace(dog->watch(stop, check.timeoutSeconds));
    else
      stop.setTimeLimit(check.timeoutSeconds);
    try {
      checkInstance(p, check, rep, r, stop);
    } catch (const std::bad_alloc &) {
      // Out of memory anywhere in the instance (the new-handler's reserve is spent): an
      // inconclusive verdict, never an internal error.
      stop.request(support::StopCause::Memory, "out of memory: an allocation failed");
      r.loaded = Loaded();
      r.verdict.reset();
    } catch (const std::exception &e) {
      // Any other exception is a dkv bug (a std::logic_error, an out_of_range): exit
      // code 6 with its message, never an input error's 2 or a verdict.
      r.loaded = Loaded();
      r.verdict.reset();
      r.code = support::kExitInternal;
      r.err = fmt::format("dkv: internal error: {}\n", e.what());
      if (!rep.several)
        rep.console->writeErr(r.err);
    }
  }
  if (stop.requested() && !r.verdict) {
    support::rearmAllocationReserve();
    r.verdict = stoppedVerdict(stop);
    r.code = support::kExitInconclusive;
    r.heading = {check.engine, p.command, check.timing, check.explain};
    r.heading.assumptions = {{"dma_order", model::dmaOrderName(p.options.model.dmaOrder)}};
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

void checkInstance(const Planned &p, const CheckOptions &check, const Reporting &rep, Result &r,
                   support::StopToken &stop) {
  std::ostringstream err;
  r.code = load(p.options, Stage::Model, r.loaded, err, &stop);
  if (r.code == support::kExitInconclusive)
    return; // stopped: runInstance makes the verdict
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
  // A single instance's diagnostics go to standard error at once; the report of several
  // shows each file's diagnostics once, in its block (checkPathsCommand).
  const bool text = check.format == "text" || check.format == "short";
  if (text && !rep.several)
    rep.console->writeErr(rep.colorErr ? support::colorize(r.err) : r.err);
  if (r.code == support::kExitOk && !r.loaded.skipped && !check.property.empty() &&
      !r.loaded.instance->properties().find(check.property)) {
    // --property names one of the instance's properties (`dkv properties` lists them).
    std::string message = fmt::format("no property '{}' in this instance (dkv properties "
                                      "lists them)",
                                      check.property);
    r.err += "dkv: error: " + message + "\n";
    r.loaded.diagnostics.push_back(
        support::Diagnostic{support::Severity::Error, {}, message, "unknown-property", {}});
    r.code = support::kExitUsage;
    if (text)
      rep.console->writeErr(r.err);
  }
  if (r.code == support::kExitOk && !r.loaded.skipped) {
    const Engine *engine = findEngine(check.engine);
    DKV_INVARIANT(engine, "the command line checks the engine name");
    const std::vector<report::Suppression> suppressions = suppressionsOf(r.loaded);
    RunEvents events;
    events.finding = [&](const report::Finding &found) {
      report::Verdict one;
      one.findings.push_back(found);
      report::applySuppressions(one, suppressions);
      const report::Finding &f = one.findings[0];
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
    events.stop = &stop;
    stop.setPhase(checkingPhase(engine->name));
    r.verdict = runEngine(*engine, r.loaded.instance->machine(), check, &events);
    report::applySuppressions(*r.verdict, suppressions);
    r.heading = {check.engine, describeInstance(r.loaded.instance->program()), check.timing,
                 check.explain};
    r.heading.width = check.width;
    if (!r.loaded.note.empty())
      r.heading.instance += ", " + r.loaded.note;
    if (!check.property.empty())
      r.heading.instance += fmt::format(", property {} only", check.property);
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
}

/// How bad an exit code is: internal error > output error > usage > input error >
/// findings > inconclusive > ok.
int severityOf(int code) {
  switch (code) {
  case support::kExitInternal:
    return 6;
  case support::kExitOutput:
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

namespace {

/// The options of an instance's command but its --devices (what a report of several
/// instances groups device counts by): "" or e.g. "--invocations 2".
std::string variantOf(const InstanceOptions &o) {
  InstanceOptions v = o;
  v.devices.reset();
  std::string text = commandOf(v).substr(o.file.size());
  return text.empty() ? text : text.substr(1);
}

/// The command of an instance without its file: "--devices 2 --invocations 2".
std::string argsOf(const Planned &p) {
  std::string args = p.command.substr(std::min(p.command.size(), p.options.file.size()));
  return args.empty() ? args : args.substr(1);
}

/// One line per failing instance at the end of the summary.
std::string failingLine(const report::InstanceReport &r) {
  auto firstError = [&]() -> std::string {
    for (const support::Diagnostic &d : r.diagnostics)
      if (d.severity == support::Severity::Error)
        return d.range.begin.line > 0 ? fmt::format(" [{}] at line {}", d.id, d.range.begin.line)
                                      : fmt::format(" [{}]", d.id);
    return "";
  };
  switch (r.code) {
  case support::kExitFindings: {
    std::map<report::FindingKind, size_t> kinds;
    size_t causes = 0;
    for (const report::RootCause &c : report::rootCauses(r.verdict->findings, r.sources))
      if (r.verdict->findings[c.findings.front()].suppressed.empty()) {
        ++kinds[c.kind];
        ++causes;
      }
    std::vector<std::string> parts;
    for (const auto &[kind, n] : kinds)
      parts.push_back(fmt::format("{} {}", n, report::findingKindName(kind)));
    return fmt::format("{}: {} root cause{} ({})", r.command, causes, causes == 1 ? "" : "s",
                       fmt::join(parts, ", "));
  }
  case support::kExitInconclusive:
    return r.command + ": inconclusive";
  case support::kExitInternal:
    return r.command + ": internal error";
  case support::kExitUsage:
    return r.command + ": usage error" + firstError();
  default:
    return r.command + ": static error" + firstError();
  }
}

/// The diagnostics of a file's instances, each distinct one (severity, id and place)
/// once, in order, with the instances that have it.
struct SeenDiagnostic {
  const support::Diagnostic *diagnostic = nullptr;
  const support::SourceManager *sources = nullptr;
  std::string text; ///< an instance's error text without diagnostics
  std::vector<size_t> instances;
};
std::vector<SeenDiagnostic>
distinctDiagnostics(const std::vector<report::InstanceReport> &reports) {
  std::vector<SeenDiagnostic> out;
  std::map<std::string, size_t> index;
  for (size_t n = 0; n < reports.size(); ++n) {
    const report::InstanceReport &r = reports[n];
    auto add = [&](const std::string &key, SeenDiagnostic seen) {
      auto [it, fresh] = index.emplace(key, out.size());
      if (fresh)
        out.push_back(std::move(seen));
      out[it->second].instances.push_back(n);
    };
    for (const support::Diagnostic &d : r.diagnostics) {
      const support::SourceFile *f = r.sources ? r.sources->find(d.range.begin.file) : nullptr;
      add(fmt::format("{}|{}|{}|{}:{}", static_cast<int>(d.severity), d.id,
                      f ? f->name() : std::string(), d.range.begin.line, d.range.begin.col),
          {&d, r.sources, "", {}});
    }
    if (r.diagnostics.empty() && !r.errText.empty() && !r.verdict)
      add("text|" + r.errText, {nullptr, nullptr, r.errText, {}});
  }
  return out;
}

/// "at 3..8 devices (not at 2)": where a root cause (or diagnostic) of a file of several
/// instances occurs; "" for a file of one instance.
std::string atText(const std::vector<report::InstanceReport> &reports,
                   const std::vector<size_t> &which, bool notAt) {
  if (reports.size() < 2)
    return "";
  std::string text = report::describeInstances(reports, which);
  if (!notAt)
    return text;
  std::vector<size_t> others;
  for (size_t n = 0; n < reports.size(); ++n)
    if (reports[n].verdict && std::find(which.begin(), which.end(), n) == which.end())
      others.push_back(n);
  if (!others.empty())
    text += " (not at " + report::describeInstances(reports, others) + ")";
  return text;
}

} // namespace

int checkPathsCommand(const std::vector<std::string> &paths, const InstanceOptions &base,
                      const CheckOptions &options, std::ostream &stdOut, std::ostream &err,
                      const FileHook &hook) {
  auto start = std::chrono::steady_clock::now();
  CheckOptions check = options;
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
  // -j: one instance gets the threads inside it, several run side by side.
  check.engineJobs = several ? 1 : std::max(1u, check.jobs);
  if (int code = checkTraceOptions(check, plan.size(), err); code != support::kExitOk)
    return code;

  // -o: the report appears complete or not at all (a temporary file renamed at the end).
  AtomicFile fileOut;
  if (!check.output.empty()) {
    std::string error;
    if (!fileOut.open(check.output, error)) {
      err << "dkv: error: " << error << "\n";
      return support::kExitOutput;
    }
  }
  std::ostream &out = check.output.empty() ? stdOut : fileOut.stream();
  const bool textFormat = check.format == "text" || check.format == "short";
  // Colours only for the text reports, on a terminal (or --color always).
  const bool colorOut =
      textFormat && support::colorWanted(check.color, check.output.empty() ? 1 : -1);
  const bool colorErr = textFormat && support::colorWanted(check.color, 2);

  // Workers take instances in order; the main thread reports them in order, one kernel
  // file at a time once all its instances are checked (its root causes are grouped over
  // them), through the console, which keeps text of later instances until their turn.
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
  std::vector<nlohmann::json> jsonInstances, jsonCauses;
  report::RunSummary summary;
  std::set<std::string> kernels;
  std::set<std::string> pictures; ///< --trace-dir: the file names written
  int code = support::kExitOk;
  bool firstBlock = true;

  // The instances of the kernel file being reported (consecutive in the plan).
  std::vector<size_t> blockPlan;
  std::vector<Result> blockResults;
  auto sourcesOf = [&](size_t planIndex, const Result &r) -> const support::SourceManager * {
    return plan[planIndex].sources ? plan[planIndex].sources.get() : &r.loaded.sources;
  };
  // A block is one kernel: a file, or one entry of a Python file (a test case, a call),
  // its instances consecutive in the plan.
  auto lastOfBlock = [&](size_t i) {
    return i + 1 == plan.size() || plan[i + 1].options.file != plan[i].options.file ||
           plan[i + 1].options.entry != plan[i].options.entry;
  };
  // Reports the file's block: its root causes over its instances, their fixes, pictures
  // and the report in the chosen format.
  auto finishFile = [&](size_t consoleIndex) {
    if (blockPlan.empty())
      return;
    const std::string &file = plan[blockPlan.front()].options.file;
    std::vector<report::InstanceReport> reports;
    std::vector<FixInstance> fixInstances;
    for (size_t k = 0; k < blockPlan.size(); ++k) {
      const Planned &p = plan[blockPlan[k]];
      Result &r = blockResults[k];
      report::InstanceReport ir;
      ir.command = p.command;
      ir.devices = p.options.devices;
      ir.variant = variantOf(p.options);
      ir.code = r.code;
      ir.verdict = r.verdict ? &*r.verdict : nullptr;
      ir.sources = sourcesOf(blockPlan[k], r);
      ir.heading = r.heading;
      ir.diagnostics = r.loaded.diagnostics;
      ir.errText = r.err;
      reports.push_back(std::move(ir));
      fixInstances.push_back(
          {p.options, r.verdict ? &r.loaded : nullptr, r.verdict ? &*r.verdict : nullptr});
    }
    std::vector<report::FileCause> causes = report::fileCauses(reports);
    // Verified fixes, one search per root cause that fails the check.
    // (Not for --stop-at-first, which wants a yes or no: a fix needs complete checks;
    // nor for the one-line report.)
    if (check.fix && !check.stopAtFirst && check.format != "short") {
      // The search's own stop request: its time limit (--fix-timeout, at most
      // --timeout), the memory ceiling and signals, as an instance's.
      support::StopToken fixStop;
      fixStop.setPhase("the fix search");
      std::optional<support::Watchdog::Watch> fixWatch;
      const double fixLimit = std::min(check.fixTimeoutSeconds, check.timeoutSeconds);
      if (support::Watchdog *dog = support::Watchdog::current())
        fixWatch.emplace(dog->watch(fixStop, fixLimit));
      else
        fixStop.setTimeLimit(fixLimit);
      size_t searched = 0;
      for (const report::FileCause &c : causes) {
        const report::Verdict &v = *reports[c.first].verdict;
        if (!v.findings[c.mainFinding.front()].suppressed.empty())
          continue;
        FixOutcome outcome;
        if (searched++ < kMaxSearchedCauses)
          outcome = searchFix(c, reports, fixInstances, check, &fixStop);
        else
          outcome.noFix = fmt::format("not searched (dkv searches the first {} root causes of "
                                      "a kernel)",
                                      kMaxSearchedCauses);
        // On every finding of the cause at every instance (a picture of any of them can
        // show the fix).
        for (size_t o = 0; o < c.instances.size(); ++o) {
          report::Verdict &v = *blockResults[c.instances[o]].verdict;
          const std::vector<report::RootCause> here =
              report::rootCauses(v.findings, reports[c.instances[o]].sources);
          for (size_t i : here[c.causeIndex[o]].findings) {
            v.findings[i].fix = outcome.fix;
            v.findings[i].noFix = outcome.noFix;
          }
        }
      }
      fixWatch.reset();
      // A signal during the search: the process ends by it, as during a check.
      if (int sig = support::caughtSignal(); sig != 0) {
        console.finish();
        support::dieBySignal(sig);
      }
    }
    for (const report::FileCause &c : causes)
      if (reports[c.first].verdict->findings[c.mainFinding.front()].suppressed.empty())
        ++summary.rootCausesByKind[c.cause.kind];
    for (const report::InstanceReport &r : reports)
      if (r.code != support::kExitOk)
        summary.failing.push_back(failingLine(r));
    if (hook)
      hook(file, reports, causes, fixInstances);
    // Pictures (after the fix search: a page can show the fix).
    for (size_t k = 0; k < blockPlan.size(); ++k) {
      const Result &r = blockResults[k];
      if (!r.verdict || !r.loaded.instance) // no picture of an instance stopped before its check
        continue;
      std::ostringstream pictureErr;
      code = worstExitCode(code, writeTracePictures(check, *r.verdict, file,
                                                    r.loaded.instance->machine().deviceCount(),
                                                    reports[k].sources, r.heading.instance,
                                                    reports[k].command, pictures, pictureErr));
      console.writeErr(pictureErr.str());
    }

    const bool shortFormat = check.format == "short";
    std::vector<SeenDiagnostic> diagnostics = distinctDiagnostics(reports);
    if (textFormat) {
      std::ostringstream block;
      if (several && !shortFormat)
        block << (firstBlock ? "" : "\n") << "== "
              << (reports.size() == 1 ? reports[0].command
                                      : fmt::format("{}: {} instances, {}", file, reports.size(),
                                                    report::describeInstances(
                                                        reports,
                                                        [&] {
                                                          std::vector<size_t> all(reports.size());
                                                          std::iota(all.begin(), all.end(), 0);
                                                          return all;
                                                        }())))
              << " ==\n";
      if (several) {
        // Each distinct diagnostic once, with the instances it occurs at.
        for (const SeenDiagnostic &d : diagnostics) {
          std::string at = atText(reports, d.instances, false);
          if (!d.diagnostic) {
            block << d.text;
          } else if (shortFormat) {
            support::renderHeading(block, d.sources, d.diagnostic->range.begin,
                                   d.diagnostic->severity == support::Severity::Error ? "error"
                                   : d.diagnostic->severity == support::Severity::Warning
                                       ? "warning"
                                       : "note",
                                   d.diagnostic->message);
            block << " [" << d.diagnostic->id << "]" << (at.empty() ? "" : " at " + at) << "\n";
            continue;
          } else {
            support::renderDiagnostic(block, d.sources, *d.diagnostic);
          }
          if (!at.empty())
            block << "  at " << at << "\n";
        }
      }
      for (const report::FileCause &c : causes) {
        const report::InstanceReport &r = reports[c.first];
        std::string at = atText(reports, c.instances, true);
        block << (shortFormat ? report::shortLine(r.verdict->findings, c.cause, r.sources, at)
                              : report::renderCauseBlock(r.verdict->findings, c.cause, r.sources,
                                                         check.explain, at, check.width) +
                                    "\n");
      }
      for (size_t k = 0; k < reports.size(); ++k) {
        const report::InstanceReport &r = reports[k];
        if (shortFormat && several)
          continue; // the summary and its list of failing instances follow
        // The instance's options, unless the block's header names its one instance.
        const std::string prefix =
            several && reports.size() > 1 ? argsOf(plan[blockPlan[k]]) + ": " : "";
        if (r.verdict)
          report::renderVerdictStatus(block, *r.verdict, r.sources, r.heading, prefix);
        else if (several && reports.size() > 1)
          block << prefix
                << (r.code == support::kExitInternal ? "internal error"
                    : r.code == support::kExitUsage  ? "usage error"
                                                     : "static error")
                << " (exit code " << r.code << ")\n";
      }
      firstBlock = false;
      console.write(consoleIndex, colorOut ? support::colorize(block.str()) : block.str());
    } else if (check.format == "json") {
      for (const report::InstanceReport &r : reports)
        console.writeErr(r.errText);
      if (!several && reports[0].verdict) {
        report::renderVerdictJson(out, *reports[0].verdict, file, reports[0].sources,
                                  reports[0].heading);
      } else if (several) {
        const size_t base = jsonInstances.size();
        for (const report::InstanceReport &r : reports)
          jsonInstances.push_back(
              r.verdict ? report::verdictJson(*r.verdict, file, r.sources, r.heading, false)
                        : report::staticErrorJson(file, r.command, r.diagnostics, r.sources));
        for (const report::FileCause &c : causes)
          jsonCauses.push_back(
              report::fileCauseJson(c, reports, file, base, jsonCauses.size(), jsonInstances));
      } else { // one instance that did not load: its object, as in a report of several
        out << report::staticErrorJson(file, reports[0].command, reports[0].diagnostics,
                                       reports[0].sources)
                   .dump(2)
            << "\n";
      }
    } else { // sarif
      for (const report::InstanceReport &r : reports)
        console.writeErr(r.errText);
      for (const report::FileCause &c : causes) {
        std::vector<std::string> commands;
        for (size_t n : c.instances)
          commands.push_back(reports[n].command);
        const report::InstanceReport &r = reports[c.first];
        sarif.addCause(r.verdict->findings, c.cause, file, r.sources, commands,
                       atText(reports, c.instances, true));
      }
      for (const report::InstanceReport &r : reports)
        if (r.verdict)
          sarif.addVerdict(*r.verdict, file, r.sources, r.heading.instance);
        else if (r.code == support::kExitInternal)
          sarif.addNotification("error", r.command + ": internal error: " + r.errText, file);
      for (const SeenDiagnostic &d : diagnostics) {
        if (!d.diagnostic)
          continue;
        std::vector<std::string> commands;
        for (size_t n : d.instances)
          commands.push_back(reports[n].command);
        sarif.addDiagnostics({*d.diagnostic}, file, d.sources,
                             fmt::format("{}", fmt::join(commands, "; ")));
      }
    }
    blockPlan.clear();
    blockResults.clear();
  };

  for (size_t i = 0; i < plan.size(); ++i) {
    // --stop-at-first: an instance before this one has a finding; this one and the
    // rest are not checked (those running are stopped, their output dropped), so the
    // report is the same for every -j.
    if (check.stopAtFirst && first.after(i)) {
      summary.stoppedEarly = true;
      summary.notChecked = plan.size() - i;
      finishFile(i - 1);
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
      if (textFormat && !several)
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
    // SIGINT, SIGTERM or SIGHUP stopped the run: no verdict, the process ends by the
    // signal (as a shell expects: it stops a script), after removing the -o file's
    // temporary and spin's work directories (support/Stop.h).
    if (int sig = support::caughtSignal(); sig != 0) {
      console.finish();
      support::dieBySignal(sig);
    }
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
      } else if (several) { // (one instance: its message went to standard error)
        console.write(i, std::string(firstBlock ? "" : "\n") + "== " + p.command + " ==\n" + r.err);
        firstBlock = false;
      }
      if (lastOfBlock(i))
        finishFile(i);
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
    if (check.stopAtFirst && r.code == support::kExitFindings)
      first.found(i);
    blockPlan.push_back(i);
    blockResults.push_back(std::move(r));
    if (lastOfBlock(i))
      finishFile(i);
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
    report::renderRunJson(out, jsonInstances, jsonCauses, summary, code, check.timing);
  if (several) {
    // The summary line: after the text report, or (JSON, SARIF) on standard output
    // when the report goes to a file, else on standard error.
    std::ostringstream line;
    report::renderSummary(line, summary, check.timing);
    if (textFormat)
      out << "\n" << (colorOut ? support::colorize(line.str()) : line.str());
    else
      (check.output.empty() ? err : stdOut) << line.str();
  }
  if (!check.output.empty()) {
    std::string error;
    if (!fileOut.commit(error)) {
      err << "dkv: error: " << error << "\n";
      return worstExitCode(code, support::kExitOutput);
    }
  } else if (!flushed(stdOut, err, "standard output")) {
    return worstExitCode(code, support::kExitOutput);
  }
  return code;
}

int checkCommand(const InstanceOptions &instance, const CheckOptions &check, std::ostream &out,
                 std::ostream &err) {
  return checkPathsCommand({instance.file}, instance, check, out, err);
}

} // namespace dkv::driver
