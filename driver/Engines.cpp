// The engine table and the shared path from an engine's witnesses to a verdict.
#include "driver/Engines.h"

#include "executor/Executor.h"
#include "model/Precheck.h"
#include "promela/Spin.h"
#include "smt/Smt.h"
#include "support/Invariant.h"

namespace dkv::driver {

namespace {

std::vector<Engine> &table() {
  static std::vector<Engine> engines = {
      {"explore", "exhaustive exploration of every schedule (with partial-order reduction)",
       [](const semantics::Machine &machine, const CheckOptions &o) {
         executor::ExploreOptions options;
         options.maxStates = o.maxStates;
         return executor::explore(machine, options);
       }},
      {"spin", "the spin model checker on the emitted Promela model",
       [](const semantics::Machine &machine, const CheckOptions &o) {
         promela::SpinOptions options;
         options.timeoutSeconds = o.timeoutSeconds;
         options.memoryMb = o.memoryMb;
         options.keepDir = o.keepDir;
         return promela::checkWithSpin(machine, options);
       }},
      {"z3", "the Z3 SMT solver on a partial-order encoding of the runs (docs/smt.md)",
       [](const semantics::Machine &machine, const CheckOptions &o) {
         smt::SmtOptions options;
         options.timeoutSeconds = o.timeoutSeconds;
         options.memoryMb = o.memoryMb;
         return smt::checkWithZ3(machine, options);
       }},
  };
  return engines;
}

} // namespace

const std::vector<Engine> &engines() { return table(); }

void registerEngine(Engine engine) {
  DKV_INVARIANT(findEngine(engine.name) == nullptr, "engine names are unique");
  table().push_back(std::move(engine));
}

const Engine *findEngine(const std::string &name) {
  for (const Engine &e : table())
    if (e.name == name)
      return &e;
  return nullptr;
}

report::Verdict runEngine(const Engine &engine, const semantics::Machine &machine,
                          const CheckOptions &options) {
  report::Verdict verdict =
      semantics::buildVerdict(machine, engine.run(machine, options), engine.name);
  if (verdict.status == report::Verdict::Status::Error)
    return verdict;
  // Every witness replays in the executor with real data, which confirms it and shows
  // the wrong value a race produces.
  if (options.confirm)
    executor::confirmFindings(machine, verdict.findings);
  // The static pre-check's findings hold without a search; they join the engine's,
  // which carry the witness schedules.
  report::mergePrecheck(verdict, model::precheck(machine.program()));
  return verdict;
}

} // namespace dkv::driver
