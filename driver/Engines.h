// The engine table: every engine of `dkv check` registered by name, and the one path
// that turns any engine's result into a verdict (findings built by the semantics,
// confirmed in the executor, joined to the static pre-check).
#pragma once

#include "report/Finding.h"
#include "semantics/Machine.h"
#include "semantics/Witness.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace dkv::driver {

/// `dkv check` options; each engine reads the ones it understands.
struct CheckOptions {
  std::string engine = "explore";      ///< a registered engine's name
  uint64_t maxStates = 2'000'000;      ///< explore's state budget
  double timeoutSeconds = 600;         ///< spin's and z3's time limit
  int64_t memoryMb = 4096;             ///< pan's and z3's memory limit
  bool confirm = true;                 ///< replay witnesses in the executor
  std::string keepDir;                 ///< spin: keep the work directory here
  bool timing = false;                 ///< print time statistics (not byte-identical)
  bool explain = false;                ///< --explain: the pattern and usual fix of each finding
  std::string color = "auto";          ///< --color auto|always|never (text report only)
  std::string format = "text";         ///< text | json | sarif
  std::string output;                  ///< -o: write the report here (empty: standard output)
  unsigned jobs = 1;                   ///< -j: instances checked in parallel
  bool devicesFromAnnotations = false; ///< every device count of `// devices:`
  std::string toolVersion = "0";       ///< dkv's version, for SARIF's tool.driver.version
};

/// One engine: it returns witnesses (property, schedule) and nothing else; the
/// finding texts, traces and the confirmation are the shared path's (runEngine).
struct Engine {
  std::string name;
  std::string description; ///< one line, for `dkv engines` and --help
  std::function<semantics::EngineResult(const semantics::Machine &, const CheckOptions &)> run;
};

/// Every registered engine, in registration order (explore, spin, z3, then any added).
const std::vector<Engine> &engines();
/// Adds an engine (the test suite registers one that replays a fixed schedule).
/// Precondition: no engine of that name is registered.
void registerEngine(Engine engine);
/// The engine called `name`, or nullptr.
const Engine *findEngine(const std::string &name);

/// Runs `engine` on the machine's instance and builds its verdict the same way for
/// every engine: semantics::buildVerdict (a witness that does not replay to its
/// property is an internal error), executor::confirmFindings unless
/// `options.confirm` is false, then the static pre-check's findings joined in.
report::Verdict runEngine(const Engine &engine, const semantics::Machine &machine,
                          const CheckOptions &options);

} // namespace dkv::driver
