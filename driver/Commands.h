// The subcommands of `dkv`; each returns the process exit code.
#pragma once

#include "driver/Engines.h"
#include "driver/Pipeline.h"

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>

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
};

void addRunOptions(CLI::App *cmd, RunOptions &options);
void addCheckOptions(CLI::App *cmd, CheckOptions &options);

int parseCommand(const InstanceOptions &instance, std::ostream &out, std::ostream &err);
/// `dkv parse FILE --annotations`: the file's annotations (frontend/Annotations.h).
int annotationsCommand(const std::string &file, std::ostream &out, std::ostream &err);
int modelCommand(const InstanceOptions &instance, std::ostream &out, std::ostream &err);
int runCommand(const InstanceOptions &instance, const RunOptions &run, std::ostream &out,
               std::ostream &err);
int checkCommand(const InstanceOptions &instance, const CheckOptions &check, std::ostream &out,
                 std::ostream &err);
int dumpPromelaCommand(const InstanceOptions &instance, const std::string &outPath,
                       std::ostream &out, std::ostream &err);
/// `dkv dump-smt` (driver/SmtCommand.h) after loading the instance.
int dumpSmtCommand(const InstanceOptions &instance, const std::string &propertyId,
                   const std::string &outPath, std::ostream &out, std::ostream &err);
/// `dkv properties`: the property list of an instance (docs/model.md, "Properties"):
/// a summary line, then per property its id, location, message and obligation count.
int propertiesCommand(const InstanceOptions &instance, std::ostream &out, std::ostream &err);
/// `dkv engines`: one line per registered engine, "NAME  description".
int enginesCommand(std::ostream &out);

/// Runs one schedule of the machine's program and prints its findings (with traces)
/// or the inputs and final outputs to `out`. Returns the exit code (0 ok, 10 findings,
/// 2 bad schedule file, 1 unwritable file).
int runSchedule(const semantics::Machine &machine, const support::SourceFile &source,
                const RunOptions &options, std::ostream &out, std::ostream &err);

} // namespace dkv::driver
