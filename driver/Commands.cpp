// The subcommands: each runs the pipeline to the stage it needs, then one engine.
#include "driver/Commands.h"

#include "driver/Cli.h"
#include "driver/Output.h"
#include "driver/PromelaCommand.h"
#include "driver/PythonCommand.h"
#include "driver/SmtCommand.h"
#include "frontend/AST.h"
#include "frontend/Annotations.h"
#include "frontend/AstPrinter.h"
#include "model/Precheck.h"
#include "model/Printer.h"
#include "report/Json.h"
#include "report/Render.h"
#include "support/Diagnostics.h"
#include "support/Invariant.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <charconv>
#include <fstream>
#include <map>
#include <ostream>

namespace dkv::driver {

namespace {

// CLI11 converts "-1" to 2^64 - 1 and saturates too-large values of unsigned options
// instead of rejecting them; this validator accepts exactly the numbers of uint64_t.
const CLI::Validator kUint64(
    [](std::string &text) -> std::string {
      uint64_t value = 0;
      auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
      if (text.empty() || ec != std::errc() || ptr != text.data() + text.size())
        return "takes a number from 0 to 18446744073709551615, got '" + text + "'";
      return {};
    },
    "");

} // namespace

std::string describeInstance(const model::Program &program) {
  std::vector<std::string> axes;
  for (const model::MeshAxis &axis : program.mesh)
    axes.push_back(fmt::format("{}={}", axis.name, axis.size));
  // A sequence names its calls (kernel a+b+c) and runs each once.
  std::string text = fmt::format("{} {} on mesh {}", program.calls.empty() ? "kernel" : "sequence",
                                 program.kernel, fmt::join(axes, ", "));
  if (program.cores)
    text += fmt::format(", tensorcore mesh {}={}", program.cores->name, program.cores->size);
  const model::Options &o = program.options;
  if (o.invocations != 1 && program.calls.empty())
    text += fmt::format(", {} invocations", o.invocations);
  if (program.sequenceRuns() != 1)
    text += fmt::format(", {} invocations", program.sequenceRuns());
  if (o.dmaChunks != 1)
    text += fmt::format(", {} DMA chunks", o.dmaChunks);
  if (o.semUnit != 1)
    text += fmt::format(", semaphore unit {} B", o.semUnit);
  if (!o.entryBarrier)
    text += ", no entry barrier";
  // The hardware assumption a verdict used (docs/model.md, "DMA order"), named when it
  // is not the default.
  if (o.dmaOrder != model::DmaOrder::Any)
    text += fmt::format(", DMA order {}", model::dmaOrderName(o.dmaOrder));
  // Which cores the implicit entry barrier joins (docs/model.md "TensorCores"): named
  // wherever a kernel of the instance has that barrier and the mesh has several cores.
  bool implicitBarrier = program.calls.empty() && !program.hasCollectiveId;
  for (const model::Call &c : program.calls)
    implicitBarrier = implicitBarrier || c.implicitBarrier;
  if (program.coresPerDevice() > 1 && implicitBarrier && o.entryBarrier)
    text +=
        fmt::format(", entry barrier cores {}", model::entryBarrierCoresName(o.entryBarrierCores));
  for (const auto &[name, contents] : program.tables)
    text += fmt::format(", {} = {}", name, contents);
  return text;
}

void addRunOptions(CLI::App *cmd, RunOptions &o) {
  auto *seed = metavar(cmd->add_option("--seed", o.seed, "random schedule with this seed"), "N")
                   ->check(kUint64);
  auto *schedule =
      metavar(cmd->add_option("--schedule", o.scheduleFile, "replay a schedule file"), "FILE");
  auto *rr = cmd->add_flag("--round-robin", o.roundRobin, "round-robin schedule");
  seed->excludes(schedule)->excludes(rr);
  schedule->excludes(rr);
  metavar(
      cmd->add_option("--write-schedule", o.writeSchedule, "write the schedule taken to this file"),
      "FILE");
  addTraceOptions(cmd, o.traceSvg, o.traceHtml, "the run's schedule");
}

void addCheckOptions(CLI::App *cmd, CheckOptions &o) {
  std::vector<std::string> names;
  for (const Engine &e : engines())
    names.push_back(e.name);
  metavar(cmd->add_option(
              "--engine", o.engine,
              fmt::format("{} (default auto: explore within {} states, then the closure engine; "
                          "`dkv engines` lists them)",
                          orList(names), o.autoStates)),
          "NAME")
      ->check(oneOf(names));
  metavar(cmd->add_option_function<uint64_t>(
              "--max-states",
              [&o](uint64_t states) {
                o.maxStates = states;
                o.autoStates = states;
              },
              fmt::format("explore: state budget (default {}; with --engine auto, explore's "
                          "budget before the closure engine takes over, default {})",
                          o.maxStates, o.autoStates)),
          "N")
      ->check(integerIn(1, int64_t{1} << 40));
  metavar(cmd->add_option("--timeout", o.timeoutSeconds,
                          "time limit of each instance in seconds, 1 to 86400, from loading to "
                          "verdict, for every engine (default 600; at it: inconclusive, exit "
                          "code 5)"),
          "SECONDS")
      ->check(numberIn(1.0, 86400.0));
  metavar(cmd->add_option("--fix-timeout", o.fixTimeoutSeconds,
                          "time limit of the search for verified fixes of a file in seconds, 1 "
                          "to 86400, and never more than --timeout (default 60; at it: the "
                          "root causes not yet repaired say so)"),
          "SECONDS")
      ->check(numberIn(1.0, 86400.0));
  metavar(cmd->add_option("--memory", o.memoryMb,
                          "memory ceiling in MB of dkv, 16 to 2^20 (its resident memory; "
                          "explore, z3 and pan keep within it; default 4096; at it: "
                          "inconclusive, exit code 5)"),
          "MB")
      ->check(integerIn(16, int64_t{1} << 20));
  metavar(cmd->add_option("--z3-rlimit", o.z3Rlimit,
                          "z3: deterministic resource limit (rlimit) per query, 0 for none "
                          "(default); a query that reaches it makes the result inconclusive"),
          "N")
      ->check(integerIn(0, int64_t{0xffffffff}));
  metavar(
      cmd->add_option("--keep", o.keepDir, "spin: keep the model, pan and trail in this directory"),
      "DIR");
  cmd->add_flag_callback(
      "--no-confirm", [&o] { o.confirm = false; },
      "do not replay witnesses in the executor (no confirmation, no wrong value)");
  metavar(cmd->add_option("--format", o.format,
                          "output: text (default), short (one line per root cause), json or "
                          "sarif (SARIF 2.1.0)"),
          "text|short|json|sarif")
      ->check(oneOf({"text", "short", "json", "sarif"}));
  cmd->add_flag_callback(
      "--no-fix", [&o] { o.fix = false; },
      "do not search for verified fixes of the findings (docs/explain.md \"Verified fixes\")");
  metavar(
      cmd->add_option("-o,--output", o.output, "write the report to this file instead of stdout"),
      "FILE");
  metavar(cmd->add_option("-j,--jobs", o.jobs,
                          "check this many instances in parallel, 1 to 256 (default 1)"),
          "K")
      ->check(integerIn(1, 256));
  metavar(cmd->add_option("--property", o.property,
                          "decide this property only (an id of `dkv properties`); with --format "
                          "json the results of one call per property merge into one verdict "
                          "(`dkv merge`)"),
          "ID");
  metavar(
      cmd->add_option("--window", o.window,
                      "closure engine on a rotation-symmetric instance: decide each check in a "
                      "window of the devices around device 0 first, the whole instance only for "
                      "what the window leaves (docs/closure.md \"Windows\"): auto (default: from "
                      "32 devices on), on or off")
          ->transform(
              CLI::CheckedTransformer(std::map<std::string, semantics::ClosureOptions::Window>{
                  {"auto", semantics::ClosureOptions::Window::Auto},
                  {"on", semantics::ClosureOptions::Window::On},
                  {"off", semantics::ClosureOptions::Window::Off}})),
      "auto|on|off");
  cmd->add_flag("--timing", o.timing,
                "print the engine's time statistics and z3's per-query figures (they differ from "
                "run to run)");
  addTraceOptions(cmd, o.traceSvg, o.traceHtml,
                  "the finding's trace (with several, the one --finding names)");
  metavar(cmd->add_option("--trace-dir", o.traceDir,
                          "write a picture of every finding into this directory: an SVG and an "
                          "HTML page each (KERNEL-N<devices>-PROPERTY.svg, .html)"),
          "DIR");
  metavar(cmd->add_option("--finding", o.finding,
                          "the finding --trace-svg and --trace-html draw, by its id (race.0, "
                          "or KIND-L<line> for one without an id) when there are several"),
          "ID");
  cmd->add_flag("--explain", o.explain,
                "after each finding, explain its pattern and the usual fix (docs/explain.md)");
  metavar(cmd->add_option("--color", o.color,
                          "colour the text report: auto (default: on a terminal, unless "
                          "NO_COLOR is set), always or never"),
          "auto|always|never")
      ->check(oneOf({"auto", "always", "never"}));
  cmd->add_flag("--stop-at-first", o.stopAtFirst,
                "stop at the first finding (of any kind, in any instance): the properties and "
                "instances not checked by then are reported as not checked (docs/ci.md)");
  metavar(cmd->add_option("--progress", o.progress,
                          "a progress line on standard error: auto (default: when it is a "
                          "terminal), always or never"),
          "auto|always|never")
      ->check(oneOf({"auto", "always", "never"}));
}

void addTraceOptions(CLI::App *cmd, std::string &svg, std::string &html, const std::string &what) {
  metavar(cmd->add_option("--trace-svg", svg,
                          fmt::format("write {} as an SVG sequence diagram to this file", what)),
          "FILE");
  metavar(cmd->add_option("--trace-html", html,
                          fmt::format("write {} as a page that steps through it, with the "
                                      "kernel source, to this file",
                                      what)),
          "FILE");
}

int parseCommand(const InstanceOptions &instance, std::ostream &out, std::ostream &err) {
  if (isPythonFile(instance.file))
    return parsePythonCommand(instance, out, err);
  Loaded loaded;
  int code = load(instance, Stage::Sema, loaded, err);
  if (code != support::kExitOk || loaded.skipped)
    return code;
  frontend::printAst(*loaded.module, out);
  return support::kExitOk;
}

int annotationsCommand(const std::string &file, std::ostream &out, std::ostream &err) {
  std::string error;
  support::SourceManager sources;
  std::optional<support::FileId> id = sources.load(file, error);
  if (!id) {
    err << file << ": error: " << error << "\n";
    return support::kExitInputError;
  }
  support::DiagnosticEngine diags(&sources);
  frontend::Annotations annotations = frontend::readAnnotations(sources.file(*id), diags);
  diags.render(err);
  if (diags.hasErrors())
    return diags.errorExitCode();
  frontend::printAnnotations(annotations, out);
  return support::kExitOk;
}

int modelCommand(const InstanceOptions &instance, std::ostream &out, std::ostream &err) {
  Loaded loaded;
  int code = load(instance, Stage::Model, loaded, err);
  if (code != support::kExitOk || loaded.skipped)
    return code;
  model::printProgram(loaded.instance->program(), out);
  std::vector<report::Finding> findings = model::precheck(loaded.instance->program());
  if (findings.empty())
    return support::kExitOk;
  out << "\nstatic pre-check:\n";
  for (const report::Finding &f : findings)
    report::renderFinding(out, f, &loaded.sources);
  return support::kExitFindings;
}

int runCommand(const InstanceOptions &instance, const RunOptions &run, std::ostream &out,
               std::ostream &err) {
  // One run reports every race it sees, on every device: no symmetry reduction.
  InstanceOptions whole = instance;
  whole.symmetry = InstanceOptions::Symmetry::Off;
  Loaded loaded;
  int code = load(whole, Stage::Model, loaded, err);
  if (code != support::kExitOk || loaded.skipped)
    return code;
  // How to take the same schedule again, for the picture's title.
  RunOptions options = run;
  options.command = "run " + instance.file;
  if (instance.devices)
    options.command += fmt::format(" --devices {}", *instance.devices);
  if (!instance.mesh.empty())
    options.command += " --mesh " + instance.mesh;
  if (!run.scheduleFile.empty())
    options.command += " --schedule " + run.scheduleFile;
  else if (run.roundRobin)
    options.command += " --round-robin";
  else
    options.command += fmt::format(" --seed {}", run.seed.value_or(0));
  return runSchedule(loaded.instance->machine(), loaded.sources, options, out, err);
}

int dumpPromelaCommand(const InstanceOptions &instance, const std::string &outPath,
                       std::ostream &out, std::ostream &err) {
  Loaded loaded;
  int code = load(instance, Stage::Model, loaded, err);
  if (code != support::kExitOk || loaded.skipped)
    return code;
  return dumpPromelaCommand(loaded.instance->properties(), outPath, out, err);
}

int dumpSmtCommand(const InstanceOptions &instance, const std::string &propertyId,
                   const std::string &outPath, std::ostream &out, std::ostream &err) {
  Loaded loaded;
  int code = load(instance, Stage::Model, loaded, err);
  if (code != support::kExitOk || loaded.skipped)
    return code;
  return dumpSmtCommand(loaded.instance->machine(), propertyId, outPath, out, err);
}

int writeDump(const std::string &text, const std::string &path, const std::string &hint,
              std::ostream &out, std::ostream &err) {
  if (path.empty()) {
    out << text;
    return flushed(out, err, "standard output") ? support::kExitOk : support::kExitOutput;
  }
  std::string error;
  if (!writeFileAtomically(path, text, error)) {
    err << "dkv: error: " << error << "\n";
    return support::kExitOutput;
  }
  err << "wrote " << path << "; run: " << hint << "\n";
  return support::kExitOk;
}

int propertiesCommand(const InstanceOptions &instance, std::ostream &out, std::ostream &err) {
  Loaded loaded;
  int code = load(instance, Stage::Model, loaded, err);
  if (code != support::kExitOk || loaded.skipped)
    return code;
  const semantics::Properties &props = loaded.instance->properties();
  std::map<report::FindingKind, int> perKind;
  for (const semantics::Property &p : props.properties())
    ++perKind[p.kind];
  std::vector<std::string> kinds;
  for (const auto &[kind, count] : perKind)
    kinds.push_back(fmt::format("{} {}", count, report::findingKindName(kind)));
  out << fmt::format("{}: {} properties ({}), {} obligations; {} race pairs pruned (ordered by "
                     "program order or a device barrier)\n",
                     describeInstance(loaded.instance->program()), props.properties().size(),
                     kinds.empty() ? "none" : fmt::format("{}", fmt::join(kinds, ", ")),
                     props.obligations().size(), props.prunedRaces());
  for (const semantics::Property &p : props.properties()) {
    out << "\n";
    support::renderHeading(out, &loaded.sources, p.primary.loc, p.id, p.message);
    out << fmt::format(" ({} obligation{})\n", p.obligations.size(),
                       p.obligations.size() == 1 ? "" : "s");
  }
  return support::kExitOk;
}

int enginesCommand(std::ostream &out) {
  for (const Engine &e : engines())
    out << fmt::format("{:<10} {}\n", e.name, e.description);
  return support::kExitOk;
}

} // namespace dkv::driver
