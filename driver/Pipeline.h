// The one linear pipeline of dkv: file -> AST -> checked AST -> model.
#pragma once

#include "model/Model.h"
#include "semantics/Machine.h"
#include "semantics/Properties.h"
#include "support/Diagnostics.h"
#include "support/Source.h"
#include "support/Stop.h"

#include <cstdint>
#include <iosfwd>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace dkv::ast {
class Module;
}

namespace dkv::driver {

/// What identifies one instance of a kernel: the file, the mesh size and the
/// options that change the model.
struct InstanceOptions {
  std::string file;
  std::optional<int64_t> devices;   ///< --devices
  std::string mesh;                 ///< --mesh x=2,y=4, as typed (empty: none)
  std::vector<std::string> defines; ///< -D NAME=V, as typed
  std::vector<std::string> tables;  ///< -T NAME=JSON, as typed (table contents)
  std::string tablesFile;           ///< --tables FILE: a JSON object {"NAME": [...], ...}
  std::string directives; ///< --directives FILE: `# dkv:` lines for a Python file (docs/python.md)
  /// For a Python file: the instance in it, as `dkv check FILE.py::ENTRY` names it
  /// ("Class::test_x[case]", "func", "#2" for the top level's second kernel); "" is the
  /// file's top level (docs/python.md "Entries").
  std::string entry;
  std::string call;                    ///< --call 'f(...)': a Python file's entry
  std::vector<std::string> sets;       ///< --set NAME=VALUE, as typed
  std::vector<std::string> pythonPath; ///< --python-path DIR
  std::string tpu;                     ///< --tpu NAME: the TPU chip (pytrace/TpuChips.h)
  /// --hypothesis-seed N: the seed of the examples drawn for a `@hypothesis.given` test
  /// (docs/python.md "Hypothesis"); unset: 0.
  std::optional<uint64_t> hypothesisSeed;
  model::Options model; ///< --invocations, --dma-chunks, ...
  /// --symmetry: reduce the race obligations by the instance's rotation symmetry
  /// (semantics::Instance, docs/closure.md "Symmetry"): on, off, or auto (on from
  /// kSymmetryFrom devices).
  enum class Symmetry { Auto, On, Off };
  Symmetry symmetry = Symmetry::Auto;
  /// The file's contents, when they are not to be read from `file` (a repaired kernel
  /// that the fix search checks, driver/Fix.h); `file` still names it.
  std::optional<std::string> text;
};

/// `--symmetry auto` reduces by symmetry from this many devices on: below it every
/// obligation is kept, so the reports of small instances (and the goldens) name the
/// devices the engines find.
inline constexpr int32_t kSymmetryFrom = 16;

/// Everything the stages produced for one file. Owns the sources (the file is id 0)
/// and the AST.
struct Loaded {
  Loaded();
  ~Loaded();
  Loaded(Loaded &&) noexcept;
  Loaded &operator=(Loaded &&) noexcept;

  support::SourceManager sources;
  std::unique_ptr<ast::Module> module;
  /// Stage::Model: the program of the instance with its properties and step table.
  std::unique_ptr<semantics::Instance> instance;
  /// Every diagnostic load() rendered (errors and warnings, with their notes), for
  /// reports that list them (SARIF, several-instance JSON). An unreadable file gives
  /// one position-less error with id `unreadable-file`.
  std::vector<support::Diagnostic> diagnostics;
  /// A Python test case that skipped itself (self.skipTest, unittest.skipIf, ...): its
  /// reason; then there is no module and load() returns kExitOk.
  std::optional<std::string> skipped;
  /// What a Python instance covers beyond its id (a hypothesis example), or empty: the
  /// verdict's heading names it.
  std::string note;
};

/// The stage to stop after.
enum class Stage { Sema, Model };

/// Runs the pipeline up to `stage`. Diagnostics go to `err`. Returns an exit code:
/// kExitOk, kExitUsage (bad -D or -T syntax) or kExitInputError (unreadable file,
/// malformed tables file, syntax or semantic errors, unsupported constructs), or
/// kExitInconclusive when `stop` (may be null: the run's time limit, memory ceiling or
/// a signal, support/Stop.h) was requested during lowering or the setup of the
/// instance, or an allocation failed (then nothing is rendered: the caller reports the
/// token's reason; `out.instance` is not set). The phases poll `stop` (lowering at every
/// event and loop iteration, the property list per event) and name themselves with
/// StopToken::setPhase.
int load(const InstanceOptions &options, Stage stage, Loaded &out, std::ostream &err,
         support::StopToken *stop = nullptr);

} // namespace dkv::driver
