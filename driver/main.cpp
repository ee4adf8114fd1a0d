// The `dkv` command: options, subcommands and exit codes.
#include "driver/Commands.h"
#include "driver/Pipeline.h"
#include "driver/PythonCommand.h"
#include "frontend/Sema.h"
#include "support/Invariant.h"

#include <CLI/CLI.hpp>

#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>
#include <map>
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
                                std::vector<std::string> *paths = nullptr) {
  if (paths)
    cmd->add_option("paths", *paths,
                    "kernel files (.dk, .py) and directories (every *.dk under them, and every "
                    "*.py that mentions pallas, sorted)")
        ->required();
  else
    cmd->add_option("file", o.file, "kernel file (.dk)")->required();
  auto *devices = cmd->add_option("--devices", o.devices, "size of the (one-axis) mesh")
                      ->check(CLI::Range(1, 4096));
  cmd->add_option("--mesh", o.mesh, "sizes of the mesh axes: AXIS=SIZE,... (e.g. x=2,y=4)")
      ->excludes(devices)
      ->check(CLI::Validator(
          [](std::string &text) {
            frontend::MeshSizes mesh;
            std::string error;
            return frontend::parseMeshSizes(text, mesh, error) ? std::string() : error;
          },
          "AXIS=SIZE,..."));
  cmd->add_option("-D,--define", o.defines, "set a param: NAME=VALUE")->allow_extra_args(false);
  cmd->add_option("-T,--table", o.tables,
                  "set a table's contents: NAME=JSON, e.g. sizes=[[0,8],[8,0]] (one row per "
                  "device) or sizes=[0,8] (every device)")
      ->allow_extra_args(false);
  cmd->add_option("--tables", o.tablesFile, "a JSON file {\"NAME\": [...], ...} of table contents");
  cmd->add_option("--directives", o.directives,
                  "for a Python file: a file of `# dkv:` directive lines, instead of its sidecar "
                  "FILE.py.dkv (docs/python.md)");
  cmd->add_option("--call", o.call,
                  "for a Python file: the entry is this Python call, evaluated after the file's "
                  "top level, e.g. 'all_gather(jax.ShapeDtypeStruct((8, 128), jnp.float32), "
                  "axis_name=\"x\")' (docs/python.md \"Entries\")");
  cmd->add_option("--set", o.sets,
                  "for a Python file: the module global NAME is VALUE (a Python literal), as "
                  "'# dkv: set NAME=VALUE'")
      ->allow_extra_args(false);
  cmd->add_option("--python-path", o.pythonPath,
                  "for a Python file: a directory to import modules from, after the file's own "
                  "package")
      ->allow_extra_args(false);
  if (!modelOptions)
    return devices;
  cmd->add_option("--invocations", o.model.invocations,
                  "back-to-back runs of the kernel (default 1)")
      ->check(CLI::Range(1, 16))
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  cmd->add_option("--dma-chunks", o.model.dmaChunks, "steps per DMA side (default 1)")
      ->check(CLI::Range(1, 64))
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  cmd->add_option("--sem-unit", o.model.semUnit, "bytes per DMA-semaphore unit (default 1)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 30))
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  cmd->add_flag("!--no-entry-barrier", o.model.entryBarrier,
                "no implicit device barrier at entry for kernels without collective_id");
  cmd->add_option("--dma-order", o.model.dmaOrder,
                  "any (default): DMAs land in any order; link: remote DMAs from one device "
                  "to another land in the order they were started (an assumption about the "
                  "hardware, docs/model.md)")
      ->transform(CLI::CheckedTransformer(std::map<std::string, model::DmaOrder>{
          {"any", model::DmaOrder::Any}, {"link", model::DmaOrder::Link}}))
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  cmd->add_option("--entry-barrier-cores", o.model.entryBarrierCores,
                  "for a kernel over a TensorCore mesh of several cores without collective_id: "
                  "which cores the implicit entry barrier joins; none (default): it orders "
                  "nothing, all: every core of every device (an assumption, docs/model.md "
                  "\"TensorCores\")")
      ->transform(CLI::CheckedTransformer(std::map<std::string, model::EntryBarrierCores>{
          {"none", model::EntryBarrierCores::None}, {"all", model::EntryBarrierCores::All}}))
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  return devices;
}

int realMain(int argc, char **argv) {
  CLI::App app{"dkv: static race and deadlock verifier for distributed accelerator kernels"};
  app.set_version_flag("--version", std::string("dkv ") + DKV_VERSION);
  app.require_subcommand(1);
  app.footer("Exit codes: 0 ok, 10 findings, 5 inconclusive, 1 usage error, 2 input error, "
             "6 internal error; `dkv check` over several instances returns the worst "
             "(6 > 1 > 2 > 10 > 5 > 0).");

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
  translateCmd->add_option("-o,--output", translateOut, "output file (default: standard output)");

  CLI::App *modelCmd = app.add_subcommand("model", "print the concurrency model of an instance");
  addInstanceOptions(modelCmd, instance, true);

  CLI::App *runCmd = app.add_subcommand("run", "run one schedule on simulated devices");
  addInstanceOptions(runCmd, instance, true);
  driver::addRunOptions(runCmd, run);

  CLI::App *checkCmd =
      app.add_subcommand("check", "verify kernels (files, directories: every *.dk) with an engine");
  std::vector<std::string> checkPaths;
  CLI::Option *checkDevices = addInstanceOptions(checkCmd, instance, true, &checkPaths);
  driver::addCheckOptions(checkCmd, check);
  checkCmd
      ->add_flag("--devices-from-annotations", check.devicesFromAnnotations,
                 "check each kernel at every device count of its `// devices:` annotation, "
                 "with its `// options:`")
      ->excludes(checkDevices)
      ->excludes(checkCmd->get_option("--mesh"));
  check.toolVersion = DKV_VERSION;

  CLI::App *propertiesCmd = app.add_subcommand(
      "properties", "list the properties (checks, with their ids) of an instance");
  addInstanceOptions(propertiesCmd, instance, true);

  CLI::App *enginesCmd = app.add_subcommand("engines", "list the engines of dkv check");

  CLI::App *listCmd = app.add_subcommand(
      "list", "list the instances of a Python file that dkv check checks (kernels, test cases)");
  addInstanceOptions(listCmd, instance, false);

  CLI::App *promelaCmd =
      app.add_subcommand("dump-promela", "write the Promela model of an instance for spin");
  addInstanceOptions(promelaCmd, instance, true);
  promelaCmd->add_option("-o,--output", promelaOut, "output file (default: standard output)");

  CLI::App *smtCmd = app.add_subcommand(
      "dump-smt", "write the Z3 engine's queries of an instance as SMT-LIB2 for the z3 command");
  addInstanceOptions(smtCmd, instance, true);
  std::string smtOut, smtProperty;
  smtCmd->add_option("--property", smtProperty,
                     "only this property's query, ending in (check-sat) (default: every "
                     "property, each announced by its id)");
  smtCmd->add_option("-o,--output", smtOut, "output file (default: standard output)");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    int code = app.exit(e);
    return code == 0 ? support::kExitOk : support::kExitUsage;
  }

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
  if (checkCmd->parsed())
    return driver::checkPathsCommand(checkPaths, instance, check, std::cout, std::cerr);
  if (propertiesCmd->parsed())
    return driver::propertiesCommand(instance, std::cout, std::cerr);
  if (enginesCmd->parsed())
    return driver::enginesCommand(std::cout);
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
    std::cout.flush();
    return code;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "dkv: internal error: %s\n", e.what());
    return dkv::support::kExitInternal;
  } catch (...) {
    std::fprintf(stderr, "dkv: internal error: unknown exception\n");
    return dkv::support::kExitInternal;
  }
}
