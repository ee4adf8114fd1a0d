// The subcommands of `dkv`; each returns the process exit code.
#pragma once

#include "driver/Pipeline.h"
#include "executor/Executor.h"

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>

namespace CLI {
class App;
}

namespace dkv::driver {

/// `dkv run` options: the executor's own.
using RunOptions = executor::RunConfig;

struct CheckOptions {
  std::string engine = "explore"; ///< explore | spin
  uint64_t maxStates = 2'000'000; ///< explore's state budget
  double timeoutSeconds = 600;    ///< spin's time limit
  int64_t memoryMb = 4096;        ///< pan's memory limit
  bool confirm = true;            ///< replay counterexamples in the executor
  std::string keepDir;            ///< spin: keep the work directory here
  bool timing = false;            ///< print time statistics (not byte-identical)
  std::string format = "text";    ///< text | json
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

} // namespace dkv::driver
