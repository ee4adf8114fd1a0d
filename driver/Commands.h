// The subcommands of `dkv`; each returns the process exit code.
#pragma once

#include "driver/Engines.h"
#include "driver/Fix.h"
#include "driver/Pipeline.h"

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace dkv::driver {

/// `dkv run` options.
struct RunOptions {
  std::optional<uint64_t> seed; ///< random policy with this seed (printed)
  std::string scheduleFile;     ///< replay this schedule file
  bool roundRobin = false;      ///< round-robin policy
  std::string writeSchedule;    ///< write the schedule taken to this file
  std::string traceSvg;         ///< --trace-svg: the run's schedule as an SVG sequence diagram
  std::string traceHtml;        ///< --trace-html: the same as a page stepping through it
  size_t width = 100;           ///< the columns its traces fit (driver::textWidth)
  std::string command;          ///< how to run the instance again (for the picture's title)
};

void addRunOptions(CLI::App *cmd, RunOptions &options);
void addCheckOptions(CLI::App *cmd, CheckOptions &options);
/// --trace-svg FILE and --trace-html FILE (of `dkv check` and `dkv run`), drawing `what`.
void addTraceOptions(CLI::App *cmd, std::string &svg, std::string &html, const std::string &what);

int parseCommand(const InstanceOptions &instance, std::ostream &out, std::ostream &err);
/// `dkv parse FILE --annotations`: the file's annotations (frontend/Annotations.h).
int annotationsCommand(const std::string &file, std::ostream &out, std::ostream &err);
int modelCommand(const InstanceOptions &instance, std::ostream &out, std::ostream &err);
int runCommand(const InstanceOptions &instance, const RunOptions &run, std::ostream &out,
               std::ostream &err);
/// `dkv check FILE`: checkPathsCommand on one file with `instance`'s options.
int checkCommand(const InstanceOptions &instance, const CheckOptions &check, std::ostream &out,
                 std::ostream &err);
/// `dkv check PATH...`: every kernel file named (a directory: every `*.dk` under it,
/// recursively, sorted), at `base.devices` or (check.devicesFromAnnotations) at every
/// device count of its `// devices:` annotation with the options of its `// options:`
/// annotation over `base`'s. One report per instance in input order (check.jobs
/// threads check them), then, for several instances, a summary. One instance prints
/// exactly what a single-file check always printed. Returns the worst exit code of all
/// instances (worstExitCode).
/// Called once per kernel file after its instances are checked and its fixes searched
/// (`dkv fix` collects the fixes through it).
using FileHook = std::function<void(
    const std::string &file, const std::vector<report::InstanceReport> &reports,
    const std::vector<report::FileCause> &causes, const std::vector<FixInstance> &instances)>;
int checkPathsCommand(const std::vector<std::string> &paths, const InstanceOptions &base,
                      const CheckOptions &check, std::ostream &out, std::ostream &err,
                      const FileHook &hook = {});
/// How to check one instance alone: "FILE --devices N [--invocations K] ... [-D X=V]".
std::string commandOf(const InstanceOptions &o);
/// The worse of two exit codes: 6 internal > 3 output error > 1 usage > 2 input error >
/// 10 findings > 5 inconclusive > 0 ok.
int worstExitCode(int a, int b);
/// What a verdict is about: the kernel, the mesh and the options that change the
/// model (a "verified" holds for exactly this instance), e.g. "kernel k on mesh x=2,
/// 2 invocations".
std::string describeInstance(const model::Program &program);
int dumpPromelaCommand(const InstanceOptions &instance, const std::string &outPath,
                       std::ostream &out, std::ostream &err);
/// `dkv dump-smt` (driver/SmtCommand.h) after loading the instance.
int dumpSmtCommand(const InstanceOptions &instance, const std::string &propertyId,
                   const std::string &outPath, std::ostream &out, std::ostream &err);
/// `dkv properties`: the property list of an instance (docs/model.md, "Properties"):
/// a summary line, then per property its id, location, message and obligation count.
int propertiesCommand(const InstanceOptions &instance, std::ostream &out, std::ostream &err);
/// Writes a dumped model: to `out` when `path` is empty, else to the file `path`
/// (complete or not at all: driver/Output.h), then `hint` (how to run the tool on it)
/// to `err`. kExitOk, or kExitOutput when it cannot be written.
int writeDump(const std::string &text, const std::string &path, const std::string &hint,
              std::ostream &out, std::ostream &err);
/// `dkv merge FILE.json...`: the reports of `dkv check --property ID --format json` on one
/// instance, one property each, as one verdict (text, or `format` "json"): findings if
/// any report has one, verified only when every property of the instance has a
/// verified report, else inconclusive. Exit code as `dkv check`; 2 for a file that is
/// not such a report or is about another instance.
int mergeCommand(const std::vector<std::string> &files, const std::string &format,
                 std::ostream &out, std::ostream &err);
/// `dkv engines`: one line per registered engine, "NAME  description".
int enginesCommand(std::ostream &out);

/// Runs one schedule of the machine's program and prints its findings (with traces,
/// located in `sources`) or the inputs and final outputs to `out`. Returns the exit
/// code (0 ok, 10 findings, 2 bad schedule file, 1 unwritable file).
int runSchedule(const semantics::Machine &machine, const support::SourceManager &sources,
                const RunOptions &options, std::ostream &out, std::ostream &err);

} // namespace dkv::driver
