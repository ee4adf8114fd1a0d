// The subcommands: each runs the pipeline to the stage it needs, then one engine.
#include "driver/Commands.h"

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
        return "expected a number from 0 to 18446744073709551615, got '" + text + "'";
      return {};
    },
    "UINT64");

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
  auto *seed = cmd->add_option("--seed", o.seed, "random schedule with this seed")->check(kUint64);
  auto *schedule = cmd->add_option("--schedule", o.scheduleFile, "replay a schedule file");
  auto *rr = cmd->add_flag("--round-robin", o.roundRobin, "round-robin schedule");
  seed->excludes(schedule)->excludes(rr);
  schedule->excludes(rr);
  cmd->add_option("--write-schedule", o.writeSchedule, "write the schedule taken to this file");
}

void addCheckOptions(CLI::App *cmd, CheckOptions &o) {
  std::vector<std::string> names;
  for (const Engine &e : engines())
    names.push_back(e.name);
  cmd->add_option("--engine", o.engine,
                  fmt::format("engine: {} (default auto: explore within {} states, then z3; "
                              "`dkv engines` lists them)",
                              fmt::join(names, ", "), o.autoStates))
      ->check(CLI::IsMember(names));
  cmd->add_option_function<uint64_t>(
         "--max-states",
         [&o](uint64_t states) {
           o.maxStates = states;
           o.autoStates = states;
         },
         fmt::format("explore: state budget (default {}; with --engine auto, explore's budget "
                     "before z3 takes over, default {})",
                     o.maxStates, o.autoStates))
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 40));
  cmd->add_option("--timeout", o.timeoutSeconds,
                  "spin, z3: time limit in seconds (auto: z3 gets what explore left of it)")
      ->check(CLI::Range(1.0, 86400.0));
  cmd->add_option("--memory", o.memoryMb, "spin, z3: memory limit in MB (pan's, Z3's)")
      ->check(CLI::Range(int64_t{16}, int64_t{1} << 20));
  cmd->add_option("--keep", o.keepDir, "spin: keep the model, pan and trail in this directory");
  cmd->add_flag("--no-confirm{false}", o.confirm,
                "do not replay witnesses in the executor (no confirmation, no wrong value)");
  cmd->add_option("--format", o.format, "output: text (default), json or sarif (SARIF 2.1.0)")
      ->check(CLI::IsMember({"text", "json", "sarif"}));
  cmd->add_option("-o,--output", o.output, "write the report to this file instead of stdout");
  cmd->add_option("-j,--jobs", o.jobs, "check this many instances in parallel (default 1)")
      ->check(CLI::Range(1u, 256u));
  cmd->add_flag("--timing", o.timing,
                "print the engine's time statistics and z3's per-query figures (they differ from "
                "run to run)");
  cmd->add_option("--trace-svg", o.traceSvg,
                  "write the trace of the one finding as an SVG sequence diagram to this file");
  cmd->add_option("--trace-html", o.traceHtml,
                  "write a page that steps through the trace of the one finding to this file");
  cmd->add_option("--trace-dir", o.traceDir,
                  "write one SVG per finding into this directory (KERNEL-N<devices>-PROPERTY.svg)");
  cmd->add_flag("--explain", o.explain,
                "after each finding, explain its pattern and the usual fix (docs/explain.md)");
  cmd->add_option("--color", o.color,
                  "colour the text report: auto (default: on a terminal, unless NO_COLOR is "
                  "set), always or never")
      ->check(CLI::IsMember({"auto", "always", "never"}));
  cmd->add_flag("--stop-at-first", o.stopAtFirst,
                "stop at the first finding (of any kind, in any instance): the properties and "
                "instances not checked by then are reported as not checked (docs/ci.md)");
  cmd->add_option("--progress", o.progress,
                  "a progress line on standard error: auto (default: when it is a terminal), "
                  "always or never")
      ->check(CLI::IsMember({"auto", "always", "never"}));
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
  ast::Annotations annotations = frontend::readAnnotations(sources.file(*id), diags);
  diags.render(err);
  if (diags.hasErrors())
    return support::kExitInputError;
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
  Loaded loaded;
  int code = load(instance, Stage::Model, loaded, err);
  if (code != support::kExitOk || loaded.skipped)
    return code;
  return runSchedule(loaded.instance->machine(), loaded.sources, run, out, err);
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
    return out ? support::kExitOk : support::kExitUsage;
  }
  std::ofstream file(path, std::ios::binary);
  file << text;
  file.close();
  if (!file) {
    err << "dkv: cannot write " << path << "\n";
    return support::kExitUsage;
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
