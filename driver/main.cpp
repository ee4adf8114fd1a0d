// The `dkv` command: options, subcommands and exit codes.
#include "driver/Cli.h"
#include "driver/Commands.h"
#include "driver/Parametric.h"
#include "driver/Pipeline.h"
#include "driver/PythonCommand.h"
#include "frontend/Sema.h"
#include "pytrace/TpuChips.h"
#include "support/Invariant.h"
#include "support/Stop.h"

#include <CLI/CLI.hpp>

#include <charconv>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <fmt/format.h>
#include <iostream>
#include <map>
#include <new>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

using namespace dkv;

// Internal errors (an invariant's abort, a crash) end with exit code 6 and a
// one-line message instead of a core dump or a stack trace.
void onFatalSignal(int signal) {
  const char *message =
      signal == SIGABRT ? "dkv: internal error (aborted)\n" : "dkv: internal error (crashed)\n";
  ssize_t ignored = write(STDERR_FILENO, message, std::strlen(message));
  (void)ignored;
  _exit(support::kExitInternal);
}

void installFatalHandlers() {
  // An alternate stack so that a stack overflow still reaches the handler.
  static char altStack[1 << 16];
  stack_t ss{};
  ss.ss_sp = altStack;
  ss.ss_size = sizeof(altStack);
  sigaltstack(&ss, nullptr);
  struct sigaction sa {};
  sa.sa_handler = onFatalSignal;
  sa.sa_flags = SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  for (int s : {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL})
    sigaction(s, &sa, nullptr);
}

CLI::Option *addInstanceOptions(CLI::App *cmd, driver::InstanceOptions &o, bool modelOptions,
                                std::vector<std::string> *paths = nullptr,
                                std::string *everyN = nullptr) {
  using driver::integerIn;
  using driver::metavar;
  using driver::oneOf;
  // Unknown options are reported by driver::parseCommandLine, with a suggestion.
  cmd->allow_extras();
  if (paths)
    metavar(cmd->add_option("paths", *paths,
                            "kernel files (.dk, .py) and directories (every *.dk under them, and "
                            "every *.py that mentions pallas, sorted)"),
            "PATH...")
        ->required();
  else
    metavar(cmd->add_option("file", o.file, "kernel file (.dk, .py)"), "FILE")->required();
  CLI::Option *devices =
      everyN
          // `dkv check`: a count, or A.. for every count from A on (docs/parametric.md).
          ? metavar(cmd->add_option("--devices", *everyN,
                                    "size of the (one-axis) mesh, 1 to 4096; A.. (e.g. 2..): "
                                    "every size from A on, where the argument of "
                                    "docs/parametric.md holds"),
                    "N|A..")
                ->check(CLI::Validator(
                    [count = integerIn(1, 4096)](std::string &text) {
                      std::string copy = text;
                      if (count(copy).empty())
                        return std::string();
                      return driver::parseEveryN(text)
                                 ? std::string()
                                 : fmt::format("takes a number from 1 to 4096, or A.. (every "
                                               "number from A on), got '{}'",
                                               text);
                    },
                    ""))
          : metavar(
                cmd->add_option("--devices", o.devices, "size of the (one-axis) mesh, 1 to 4096"),
                "N")
                ->check(integerIn(1, 4096));
  metavar(cmd->add_option("--mesh", o.mesh,
                          "sizes of the mesh axes, e.g. x=2,y=4 (instead of --devices)"),
          "AXIS=SIZE,...")
      ->excludes(devices)
      ->check(CLI::Validator(
          [](std::string &text) {
            frontend::MeshSizes mesh;
            std::string error;
            return frontend::parseMeshSizes(text, mesh, error) ? std::string() : error;
          },
          ""));
  metavar(cmd->add_option("-D,--define", o.defines, "set a param"), "NAME=VALUE")
      ->allow_extra_args(false);
  metavar(cmd->add_option("-T,--table", o.tables,
                          "set a table's contents, e.g. sizes=[[0,8],[8,0]] (one row per "
                          "device) or sizes=[0,8] (every device)"),
          "NAME=JSON")
      ->allow_extra_args(false);
  metavar(cmd->add_option("--tables", o.tablesFile,
                          "a JSON file {\"NAME\": [...], ...} of table contents"),
          "FILE");
  metavar(cmd->add_option("--directives", o.directives,
                          "for a Python file: a file of `# dkv:` directive lines, instead of its "
                          "sidecar FILE.py.dkv (docs/python.md)"),
          "FILE");
  metavar(cmd->add_option("--call", o.call,
                          "for a Python file: the entry is this Python call, evaluated after the "
                          "file's top level, e.g. 'all_gather(jax.ShapeDtypeStruct((8, 128), "
                          "jnp.float32), axis_name=\"x\")' (docs/python.md \"Entries\")"),
          "CALL");
  metavar(cmd->add_option("--set", o.sets,
                          "for a Python file: the module global NAME is VALUE (a Python "
                          "literal), as '# dkv: set NAME=VALUE'"),
          "NAME=VALUE")
      ->allow_extra_args(false);
  metavar(cmd->add_option("--python-path", o.pythonPath,
                          "for a Python file: a directory to import modules from, after the "
                          "file's own package"),
          "DIR")
      ->allow_extra_args(false);
  metavar(cmd->add_option("--hypothesis-seed", o.hypothesisSeed,
                          "for a Python file: the seed of the examples dkv draws for a "
                          "@hypothesis.given test whose strategies have more examples than it "
                          "runs (default 0; docs/python.md \"Hypothesis\")"),
          "N");
  metavar(cmd->add_option("--tpu", o.tpu,
                          "for a Python file: the TPU chip whose facts JAX's device queries "
                          "answer (cores per device, SparseCores, generation), as '# dkv: tpu "
                          "NAME': " +
                              pytrace::tpuChipNames()),
          "NAME")
      ->check(CLI::Validator(
          [](std::string &text) {
            return pytrace::findTpuChip(text)
                       ? std::string()
                       : "unknown TPU '" + text + "': expected one of " + pytrace::tpuChipNames();
          },
          ""))
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  if (!modelOptions)
    return devices;
  metavar(cmd->add_option("--invocations", o.model.invocations,
                          "back-to-back runs of the kernel, 1 to 16 (default 1)"),
          "K")
      ->check(integerIn(1, 16))
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  metavar(
      cmd->add_option("--dma-chunks", o.model.dmaChunks, "steps per DMA side, 1 to 64 (default 1)"),
      "K")
      ->check(integerIn(1, 64))
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  metavar(cmd->add_option("--sem-unit", o.model.semUnit,
                          "bytes per DMA-semaphore unit, 1 to 2^30 (default 1)"),
          "BYTES")
      ->check(integerIn(1, int64_t{1} << 30))
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  cmd->add_flag_callback(
      "--no-entry-barrier", [&o] { o.model.entryBarrier = false; },
      "no implicit device barrier at entry for kernels without collective_id");
  metavar(cmd->add_option_function<std::string>(
              "--dma-order",
              [&o](const std::string &v) {
                o.model.dmaOrder = v == "link" ? model::DmaOrder::Link : model::DmaOrder::Any;
              },
              "any (default): DMAs land in any order; link: remote DMAs from one device to "
              "another land in the order they were started (an assumption about the hardware, "
              "docs/model.md)"),
          "any|link")
      ->check(oneOf({"any", "link"}))
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  metavar(cmd->add_option_function<std::string>(
              "--entry-barrier-cores",
              [&o](const std::string &v) {
                o.model.entryBarrierCores =
                    v == "all" ? model::EntryBarrierCores::All : model::EntryBarrierCores::None;
              },
              "for a kernel over a TensorCore mesh of several cores without collective_id: "
              "which cores the implicit entry barrier joins; none (default): it orders "
              "nothing, all: every core of every device (an assumption, docs/model.md "
              "\"TensorCores\")"),
          "none|all")
      ->check(oneOf({"none", "all"}))
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  return devices;
}

void addSymmetryOption(CLI::App *cmd, driver::InstanceOptions &o) {
  cmd->add_option("--symmetry", o.symmetry,
                  "reduce the race obligations by the instance's rotation symmetry, checked on "
                  "the instance (docs/closure.md): auto (default: from 16 devices on), on or off")
      ->transform(CLI::CheckedTransformer(std::map<std::string, driver::InstanceOptions::Symmetry>{
          {"auto", driver::InstanceOptions::Symmetry::Auto},
          {"on", driver::InstanceOptions::Symmetry::On},
          {"off", driver::InstanceOptions::Symmetry::Off}}));
}

/// `--devices-from-annotations` of `check` and `fix` (instead of --devices or --mesh).
void addDevicesFromAnnotations(CLI::App *cmd, CLI::Option *devices, bool &flag) {
  cmd->add_flag("--devices-from-annotations", flag,
                "check each kernel at every device count of its `// devices:` annotation, "
                "with its `// options:` (instead of --devices or --mesh)")
      ->excludes(devices)
      ->excludes(cmd->get_option("--mesh"));
}

int realMain(int argc, char **argv) {
  CLI::App app{"dkv: static race and deadlock verifier for distributed accelerator kernels", "dkv"};
  app.set_version_flag("--version", std::string("dkv ") + DKV_VERSION,
                       "print dkv's version and exit");
  app.set_help_flag("-h,--help", "print this help and exit");
  app.require_subcommand(1);
  driver::useHelpFormatter(app);
  app.footer(driver::wrapHelp(
      "Exit codes: 0 ok, 10 findings, 5 inconclusive (a limit of states, time or memory was "
      "reached), 1 usage error, 2 input error, 3 the report could not be written, 6 internal "
      "error; `dkv check` over several instances returns the worst (6 > 3 > 1 > 2 > 10 > 5 > "
      "0). SIGINT, SIGTERM and SIGHUP stop the run and end dkv by the signal."));

  driver::InstanceOptions instance;
  driver::CheckOptions check;
  driver::RunOptions run;
  std::string promelaOut;

  CLI::App *parseCmd = app.add_subcommand("parse", "parse and check a kernel, print its AST");
  addInstanceOptions(parseCmd, instance, false);
  bool annotations = false;
  parseCmd->add_flag("--annotations", annotations,
                     "print only the file's expect / devices / options annotations");

  CLI::App *translateCmd = app.add_subcommand(
      "translate", "print a kernel (a traced Python kernel) in the kernel language");
  addInstanceOptions(translateCmd, instance, false);
  std::string translateOut;
  driver::metavar(translateCmd->add_option("-o,--output", translateOut,
                                           "output file (default: standard output)"),
                  "FILE");

  CLI::App *modelCmd = app.add_subcommand("model", "print the concurrency model of an instance");
  addInstanceOptions(modelCmd, instance, true);

  CLI::App *runCmd = app.add_subcommand("run", "run one schedule on simulated devices");
  addInstanceOptions(runCmd, instance, true);
  driver::addRunOptions(runCmd, run);

  CLI::App *checkCmd =
      app.add_subcommand("check", "verify kernels (files, directories: every *.dk) with an engine");
  std::vector<std::string> checkPaths;
  std::string checkDevicesText;
  CLI::Option *checkDevices =
      addInstanceOptions(checkCmd, instance, true, &checkPaths, &checkDevicesText);
  driver::addCheckOptions(checkCmd, check);
  addSymmetryOption(checkCmd, instance);
  addDevicesFromAnnotations(checkCmd, checkDevices, check.devicesFromAnnotations);
  check.toolVersion = DKV_VERSION;
  check.width = driver::textWidth();
  run.width = check.width;

  CLI::App *fixCmd = app.add_subcommand(
      "fix", "check a kernel and write it with the verified fixes of its findings applied");
  std::vector<std::string> fixPaths;
  std::string fixOut;
  CLI::Option *fixDevices = addInstanceOptions(fixCmd, instance, true, &fixPaths);
  driver::addCheckOptions(fixCmd, check);
  addSymmetryOption(fixCmd, instance);
  addDevicesFromAnnotations(fixCmd, fixDevices, check.devicesFromAnnotations);
  fixCmd->remove_option(fixCmd->get_option("-o"));
  fixCmd->add_option("-o,--output", fixOut, "write the fixed kernel here instead of over the file");

  CLI::App *propertiesCmd = app.add_subcommand(
      "properties", "list the properties (checks, with their ids) of an instance");
  addInstanceOptions(propertiesCmd, instance, true);
  addSymmetryOption(propertiesCmd, instance);

  CLI::App *enginesCmd = app.add_subcommand("engines", "list the engines of dkv check");
  enginesCmd->allow_extras();

  CLI::App *mergeCmd = app.add_subcommand(
      "merge", "merge the JSON reports of `dkv check --property ID --format json` on one "
               "instance into one verdict");
  std::vector<std::string> mergeFiles;
  std::string mergeFormat = "text";
  mergeCmd->add_option("files", mergeFiles, "the reports (one property each)")->required();
  mergeCmd->add_option("--format", mergeFormat, "output: text (default) or json")
      ->check(CLI::IsMember({"text", "json"}));

  CLI::App *listCmd = app.add_subcommand(
      "list", "list the instances of a Python file that dkv check checks (kernels, test cases)");
  addInstanceOptions(listCmd, instance, false);

  CLI::App *promelaCmd =
      app.add_subcommand("dump-promela", "write the Promela model of an instance for spin");
  addInstanceOptions(promelaCmd, instance, true);
  addSymmetryOption(promelaCmd, instance);
  driver::metavar(
      promelaCmd->add_option("-o,--output", promelaOut, "output file (default: standard output)"),
      "FILE");

  CLI::App *smtCmd = app.add_subcommand(
      "dump-smt", "write the Z3 engine's queries of an instance as SMT-LIB2 for z3");
  addInstanceOptions(smtCmd, instance, true);
  addSymmetryOption(smtCmd, instance);
  std::string smtOut, smtProperty;
  driver::metavar(smtCmd->add_option("--property", smtProperty,
                                     "only this property's query, ending in (check-sat) "
                                     "(default: every property, each announced by its id)"),
                  "ID");
  driver::metavar(
      smtCmd->add_option("-o,--output", smtOut, "output file (default: standard output)"), "FILE");

  if (int code = driver::parseCommandLine(app, argc, argv, std::cout, std::cerr); code >= 0)
    return code == 0 ? support::kExitOk : support::kExitUsage;

  // Every command runs under the watchdog: signals stop it (and remove a half-written
  // -o file), and for `check` it enforces each instance's --timeout and the --memory
  // ceiling (support/Stop.h).
  support::Watchdog::Options limits;
  if (checkCmd->parsed())
    limits.memoryMb = check.memoryMb;
  support::Watchdog watchdog(limits);

  // `FILE.py::Class::test_x[case]`, `FILE.py#2`: one instance of a Python file.
  {
    std::string file, entry;
    driver::splitPythonTarget(instance.file, file, entry);
    if (!entry.empty()) {
      instance.file = file;
      instance.entry = entry;
    }
  }
  if (listCmd->parsed())
    return driver::listCommand(instance, std::cout, std::cerr);
  if (parseCmd->parsed() && annotations)
    return driver::annotationsCommand(instance.file, std::cout, std::cerr);
  if (parseCmd->parsed())
    return driver::parseCommand(instance, std::cout, std::cerr);
  if (translateCmd->parsed())
    return driver::translateCommand(instance, translateOut, std::cout, std::cerr);
  if (modelCmd->parsed())
    return driver::modelCommand(instance, std::cout, std::cerr);
  if (runCmd->parsed())
    return driver::runCommand(instance, run, std::cout, std::cerr);
  if (checkCmd->parsed()) {
    if (std::optional<int64_t> first = driver::parseEveryN(checkDevicesText)) {
      if (checkPaths.size() != 1) {
        std::cerr << "dkv: error: --devices " << checkDevicesText << " checks one file\n";
        return support::kExitUsage;
      }
      instance.file = checkPaths[0];
      return driver::checkEveryN(instance, *first, check, std::cout, std::cerr);
    }
    if (!checkDevicesText.empty())
      instance.devices = std::stoll(checkDevicesText);
    return driver::checkPathsCommand(checkPaths, instance, check, std::cout, std::cerr);
  }
  if (fixCmd->parsed())
    return driver::fixCommand(fixPaths, instance, check, fixOut, std::cout, std::cerr);
  if (propertiesCmd->parsed())
    return driver::propertiesCommand(instance, std::cout, std::cerr);
  if (enginesCmd->parsed())
    return driver::enginesCommand(std::cout);
  if (mergeCmd->parsed())
    return driver::mergeCommand(mergeFiles, mergeFormat, std::cout, std::cerr);
  if (promelaCmd->parsed())
    return driver::dumpPromelaCommand(instance, promelaOut, std::cout, std::cerr);
  if (smtCmd->parsed())
    return driver::dumpSmtCommand(instance, smtProperty, smtOut, std::cout, std::cerr);
  return support::kExitUsage;
}

} // namespace

int main(int argc, char **argv) {
  installFatalHandlers();
  try {
    int code = realMain(argc, argv);
    // Standard output must have taken the whole report (a full disk, /dev/full): a
    // report cut short is an error, never a success.
    std::cout.flush();
    if (!std::cout && code != dkv::support::kExitOutput) {
      std::fprintf(stderr, "dkv: error: cannot write to standard output: a write error; the "
                           "output is incomplete\n");
      return dkv::support::kExitOutput;
    }
    return code;
  } catch (const std::bad_alloc &) {
    // Out of memory outside any instance's own handling: inconclusive, never a crash.
    std::fprintf(stderr, "dkv: out of memory: an allocation failed; no verdict (inconclusive)\n");
    return dkv::support::kExitInconclusive;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "dkv: internal error: %s\n", e.what());
    return dkv::support::kExitInternal;
  } catch (...) {
    std::fprintf(stderr, "dkv: internal error: unknown exception\n");
    return dkv::support::kExitInternal;
  }
}
