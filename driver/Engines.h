// The engine table: every engine of `dkv check` registered by name, and the one path
// that turns any engine's result into a verdict (findings built by the semantics,
// confirmed in the executor, joined to the static pre-check).
#pragma once

#include "report/Finding.h"
#include "semantics/Closure.h"
#include "semantics/Machine.h"
#include "semantics/Witness.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace dkv::driver {

/// `--engine auto` runs explore first on meshes of fewer devices than this; on larger
/// ones explore cannot search the state space within its budget, and the closure engine
/// decides at once.
inline constexpr int32_t kAutoExploreBelow = 16;
/// ... and within at most this many bytes of states as well as `autoStates` states: an
/// instance whose states are large (many devices and DMAs) is searched slowly, and
/// every example explore decides fits (docs/performance.md "--engine auto").
inline constexpr uint64_t kAutoExploreBytes = uint64_t{16} << 20;

/// `dkv check` options; each engine reads the ones it understands.
struct CheckOptions {
  std::string engine = "auto";    ///< a registered engine's name
  uint64_t maxStates = 2'000'000; ///< explore's state budget
  /// explore's budget under `--engine auto` before the closure engine takes over (`--max-states`
  /// sets both; the default decides every 2- and 3-device example with explore, docs/smt.md)
  uint64_t autoStates = 200'000;
  /// Breadth-first witnesses for spin's and z3's findings: explore within this many
  /// states finds a shortest schedule of the properties it reaches, which stands in for
  /// the engine's own when it is not longer (0: off; docs/model.md "Short witnesses")
  uint64_t shortestStates = 100'000;
  /// The time limit of each instance, from loading to verdict, for every engine (a
  /// watchdog stops the instance at it, docs/design.md "Robustness budgets"); also
  /// spin's and z3's own limit for what is left of it.
  double timeoutSeconds = 600;
  /// The time limit of a file's verified-fix search (all its repairs' checks together,
  /// and never more than timeoutSeconds; docs/explain.md "Verified fixes").
  double fixTimeoutSeconds = 60;
  /// The ceiling of dkv's resident memory (the watchdog stops every running instance
  /// at it; explore's visited states get what is left of it when explore starts), and
  /// pan's and Z3's own memory limits.
  int64_t memoryMb = 4096;
  /// Z3's deterministic resource limit per check (`rlimit`; 0: none).
  int64_t z3Rlimit = 0;
  bool confirm = true;         ///< replay witnesses in the executor
  std::string keepDir;         ///< spin: keep the work directory here
  bool timing = false;         ///< print time statistics (not byte-identical)
  bool explain = false;        ///< --explain: the pattern and usual fix of each finding
  std::string color = "auto";  ///< --color auto|always|never (text report only)
  std::string format = "text"; ///< text | short | json | sarif
  bool fix = true;             ///< search for a verified fix of every root cause (driver/Fix.h)
  std::string output;          ///< -o: write the report here (empty: standard output)
  unsigned jobs = 1;           ///< -j: instances checked in parallel
  /// Threads inside one instance (the closure engine's independent closures): -j when
  /// one instance is checked, else 1 (the instances run in parallel instead).
  unsigned engineJobs = 1;
  /// `--window auto|on|off`: the closure engine decides windows of devices first
  /// (semantics::ClosureOptions::window, docs/closure.md "Windows").
  semantics::ClosureOptions::Window window = semantics::ClosureOptions::Window::Auto;
  /// `--property ID`: decide this property only (the closure engine plans its checks
  /// alone; the other engines decide the instance and the verdict keeps it). Empty: all.
  std::string property;
  bool devicesFromAnnotations = false; ///< every device count of `// devices:`
  std::string toolVersion = "0";       ///< dkv's version, for SARIF's tool.driver.version
  std::string traceSvg;                ///< --trace-svg: the one finding's trace as SVG
  std::string traceHtml;               ///< --trace-html: the same as a page stepping through it
  std::string traceDir;                ///< --trace-dir: an SVG and an HTML page per finding here
  std::string finding;      ///< --finding: the finding --trace-svg / --trace-html draw (its id)
  bool stopAtFirst = false; ///< --stop-at-first: stop at the first finding
  std::string progress = "auto"; ///< --progress auto|always|never (standard error)
  size_t width = 100;            ///< the columns the text report's traces fit (driver::textWidth)
};

/// One engine: it returns witnesses (property, schedule) and nothing else; the
/// finding texts, traces and the confirmation are the shared path's (runEngine).
/// Each engine passes `events` to its search, which reports every witness, its
/// progress and polls for cancellation through it (semantics::EngineEvents).
struct Engine {
  std::string name;
  std::string description; ///< one line, for `dkv engines` and --help
  std::function<semantics::EngineResult(const semantics::Machine &, const CheckOptions &,
                                        const semantics::EngineEvents &)>
      run;
  /// Its witnesses are breadth-first (shortest) already: runEngine looks for no
  /// shorter one (CheckOptions::shortestStates).
  bool breadthFirst = false;
};

/// Every registered engine, in registration order (explore, spin, z3, closure, auto,
/// then any added). `auto` (the default) runs explore with the budget `autoStates`
/// and, when explore stops before the end of the state space (or on a mesh of
/// kAutoExploreBelow devices or more), the closure engine (docs/closure.md); its
/// verdict's statistics say which engine decided and why.
const std::vector<Engine> &engines();
/// The name of the phase of an instance that `engine` checks, for the reason of a stop
/// ("checking with explore"; support::StopToken::setPhase).
const char *checkingPhase(const std::string &engine);
/// Adds an engine (the test suite registers one that replays a fixed schedule).
/// Precondition: no engine of that name is registered.
void registerEngine(Engine engine);
/// The engine called `name`, or nullptr.
const Engine *findEngine(const std::string &name);

/// Runs `engine` on the machine's instance and builds its verdict the same way for
/// every engine. Each property's finding is made once, from the first witness the
/// engine reports for it, as the engine reports it: semantics::shortFinding (a witness
/// that does not replay to its property makes the verdict an internal error; for spin
/// and z3, explore's breadth-first witness of the property within
/// `options.shortestStates` states stands in for the engine's when it is not longer),
/// executor::confirmFinding unless `options.confirm` is false (a race's wrong value
/// included), report::addPrecheckNotes; it names the engine working then (under
/// `auto`, explore or z3). semantics::buildVerdict then sorts these findings (by kind,
/// location and property id, whatever the order they were found in) and
/// report::mergePrecheck adds the static pre-check's findings that no engine finding
/// is at the place of.
///
/// With `events`, findings stream: each finding is passed to `events->finding` as
/// soon as it is made, once per property, in the order the engine found them; false
/// from it stops the engine (`--stop-at-first`). Every step of making a finding
/// depends on its witness alone, so the verdict's finding of a property is the one
/// streamed, byte for byte, and the verdict is the same with or without `events`.
struct RunEvents {
  std::function<bool(const report::Finding &)> finding;
  std::function<void(const semantics::EngineProgress &)> progress;
  std::function<bool()> cancelled;
  /// The instance's stop request (time limit, memory ceiling, signal), passed to the
  /// engine (semantics::EngineEvents::stop) and to the searches of runEngine itself.
  const support::StopToken *stop = nullptr;
};
report::Verdict runEngine(const Engine &engine, const semantics::Machine &machine,
                          const CheckOptions &options, const RunEvents *events = nullptr);

} // namespace dkv::driver
