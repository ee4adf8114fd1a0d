// The Promela emitter: implements the step table of docs/model.md in Promela.
//
// Encoding (docs/promela.md has an annotated excerpt):
// - one `active proctype devD()` per device: its events in program order, each event
//   one atomic step (a d_step, guarded when the step can block), grouped into atomic
//   sequences by Lipton's reduction (FUSE_STEPS: waits with the step they lead to);
// - the chunks of a DMA that no step can observe before them run inside its start's
//   d_step (FUSE_DMAS, decided with semantics::MustOrder for the generated options);
// - one `active proctype dmas()` whose do-loop offers, for every DMA, its next send
//   chunk and its next land chunk. A DMA side is an interval: `snd[k]` counts the
//   send chunks still to leave and `rcv[k]` the land chunks still to land; both are 0
//   before the start and after completion, so "send side open" is `snd[k] > 0` and
//   "receive side open" is `rcv[k] > 0` (no per-byte state);
// - semaphores are global arrays indexed by device; a DMA semaphore in units whose
//   amounts the model computes from the live SEM_UNIT and DMA_CHUNKS defines, any
//   other one scaled by the gcd of everything that touches it;
// - the options are #defines: DMA_CHUNKS, SEM_UNIT, ENTRY_BARRIER and (downwards)
//   INVOCATIONS may change without regenerating, NDEV and NDMA may not;
// - findings: races, exit and lifetime rules are asserts; a deadlock is an invalid
//   end state (device processes end only when all their events ran; the DMA loop
//   is labelled `end`).
#include "promela/Emit.h"

#include "model/Printer.h"
#include "semantics/MustOrder.h"
#include "semantics/Obligations.h"
#include "support/Invariant.h"
#include "support/Overloaded.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <numeric>
#include <optional>
#include <set>

namespace dkv::promela {

using namespace model;
using semantics::Obligation;
using semantics::ObligationIndex;

const Check *LineMap::checkAt(int line) const {
  auto it = checkAtLine.find(line);
  if (it == checkAtLine.end())
    return nullptr;
  return &checks[it->second];
}

namespace {

std::string baseName(const std::string &path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

/// Text that is safe inside a Promela string literal and a C comment.
std::string sanitize(const std::string &text) {
  std::string out;
  for (char c : text) {
    if (c == '"' || c == '\\' || c == '%')
      out += '\'';
    else if (c == '\n')
      out += ' ';
    else
      out += c;
  }
  // Never close a comment early.
  size_t pos = 0;
  while ((pos = out.find("*/", pos)) != std::string::npos)
    out.replace(pos, 2, "* /");
  return out;
}

std::string identifier(const std::string &text) {
  std::string out;
  for (char c : text)
    out += (std::isalnum(static_cast<unsigned char>(c)) ? c : '_');
  return out;
}

/// Smallest Promela integer type holding 0..bound, or "int" when none is wide enough
/// (then every increment asserts against overflow).
const char *typeFor(int64_t bound) {
  if (bound <= 255)
    return "byte";
  if (bound <= 32767)
    return "short";
  return "int";
}

constexpr int64_t kIntMax = std::numeric_limits<int32_t>::max();

/// The preprocessor switch guarding the asserts of one kind of finding.
const char *switchFor(report::FindingKind kind) {
  switch (kind) {
  case report::FindingKind::Race:
    return kCheckRaces;
  case report::FindingKind::ExitViolation:
    return kCheckExit;
  case report::FindingKind::LifetimeViolation:
    return kCheckLifetime;
  case report::FindingKind::Deadlock:
    return nullptr;
  }
  return nullptr;
}

/// One atomic step of the model, rendered as a d_step.
struct Step {
  std::string guard; ///< empty when always enabled
  std::string print; ///< the DKV trace line (without newline), empty for none
  std::vector<std::string> printArgs;
  std::vector<std::pair<std::string, int>> asserts; ///< expression, check index
  std::vector<std::string> effects;
  /// Effects compiled in only when a preprocessor condition holds (cond, statement).
  std::vector<std::pair<std::string, std::string>> conditionalEffects;
  /// When non-empty, the whole step is compiled in only when this condition holds.
  std::string onlyIf;
  /// When non-empty, a label before the step (a valid end state for a skipped
  /// deadlock property).
  std::string label;
  SourceLoc loc;
  std::string what; ///< a comment: what the step is
  /// DMA chunks fused into this step (docs/promela.md, "Fused DMA chunks"): run after
  /// its effects, in order, when FUSE_DMAS holds. Each has a print, asserts and effects.
  std::vector<Step> fused;
};

class Emitter {
public:
  Emitter(const semantics::Properties &properties, const EmitOptions &options, LineMap *map)
      : props_(properties), p_(properties.program()), o_(options), map_(map) {}

  std::string run() {
    analyse();
    analyseFusion();
    if (stopped())
      return "";
    header();
    declarations();
    for (const Process &proc : p_.processes)
      device(proc);
    dmaLoop();
    if (map_) {
      map_->semScale = scale_;
      map_->depthBound = depthBound_;
      map_->checks = checks_;
    }
    return out_;
  }

private:
  // ---- Static analysis: names, scales, bounds, depth. ----

  void analyse() {
    const size_t nsem = p_.semaphores.size();
    const size_t ndev = p_.processes.size();
    const int64_t unit = p_.options.semUnit;
    // A semaphore is byte-counted when a DMA adds to it or a DMA wait takes from it:
    // its amounts are byte counts / SEM_UNIT, which the model computes from SEM_UNIT
    // and DMA_CHUNKS (both live), so it is stored unscaled. Every other semaphore
    // only moves by the kernel's constant amounts and is stored divided by their gcd:
    // values start at 0 and only change by these amounts, so the division is exact.
    byteCounted_.assign(nsem, false);
    scale_.assign(nsem, 0);
    std::vector<std::vector<int64_t>> fixedIncr(ndev, std::vector<int64_t>(nsem, 0));
    std::vector<std::vector<int64_t>> byteIncr(ndev, std::vector<int64_t>(nsem, 0));
    // A DMA side on a regular semaphore adds the constant 1 when it completes
    // (Program::countsCompletion): a fixed amount, like a signal's.
    auto dmaSide = [&](SemId s, DeviceId owner, int64_t bytes) {
      if (p_.countsCompletion(s)) {
        scale_[s] = std::gcd(scale_[s], int64_t{1});
        fixedIncr[owner][s] += 1;
        return;
      }
      byteCounted_[s] = true;
      byteIncr[owner][s] += bytes;
    };
    for (const Dma &dma : p_.dmas) {
      dmaSide(dma.recvSem, dma.target, dma.bytes);
      if (dma.sendSem)
        dmaSide(*dma.sendSem, dma.issuer, dma.bytes);
      dmaBytes_.insert(dma.bytes);
    }
    for (const Process &proc : p_.processes)
      for (const Event &e : proc.events) {
        // The amounts that move semaphores: waits and signals (DMA chunks above).
        std::visit(support::Overloaded{
                       [&](const SemWait &w) {
                         scale_[w.sem] = std::gcd(scale_[w.sem], w.amount);
                         if (w.origin != WaitOrigin::Wait) {
                           byteCounted_[w.sem] = true;
                           dmaBytes_.insert(w.amount * unit);
                         }
                       },
                       [&](const Signal &sig) {
                         scale_[sig.sem] = std::gcd(scale_[sig.sem], sig.amount);
                         fixedIncr[sig.target][sig.sem] += sig.amount;
                       },
                       [](const KernelEnter &) {},
                       [](const KernelExit &) {},
                       [](const DeviceBarrier &) {},
                       [](const ScopeEnter &) {},
                       [](const ScopeExit &) {},
                       [](const Store &) {},
                       [](const DmaStart &) {},
                       [](const SemRead &) {},
                   },
                   e.kind);
      }
    fixedBound_.assign(nsem, 0);
    byteBound_.assign(nsem, 0);
    for (size_t s = 0; s < nsem; ++s) {
      if (scale_[s] == 0 || byteCounted_[s])
        scale_[s] = 1;
      for (size_t d = 0; d < ndev; ++d) {
        fixedBound_[s] = std::max(fixedBound_[s], fixedIncr[d][s] / scale_[s]);
        byteBound_[s] = std::max(byteBound_[s], byteIncr[d][s]);
      }
    }
    // Promela names of semaphores, unique.
    std::set<std::string> used;
    for (size_t s = 0; s < nsem; ++s) {
      const Semaphore &sem = p_.semaphores[s];
      std::string name = "sem_" + identifier(sem.name);
      for (int64_t i : sem.index)
        name += fmt::format("_{}", i);
      if (!used.insert(name).second) {
        name += fmt::format("_s{}", s);
        used.insert(name);
      }
      semVar_.push_back(name);
    }
    int64_t steps = 0;
    for (const Process &proc : p_.processes)
      steps += static_cast<int64_t>(proc.events.size());
    // The entry barrier is live (ENTRY_BARRIER) unless the kernel has a collective_id,
    // whose barrier semaphore replaces it. Count its steps whether or not this program
    // has them, so that the depth bound holds for both values.
    barrierLive_ = !p_.hasCollectiveId;
    if (barrierLive_ && !p_.implicitBarrierOn())
      steps += static_cast<int64_t>(ndev) * p_.options.invocations;
    // Every transition of a run is one step above, a DMA chunk or a process ending;
    // doubled plus a constant so that pan never truncates (a truncated search is
    // inconclusive): MAX_DEPTH = depthBase_ + 4 * NDMA * DMA_CHUNKS.
    depthBase_ = 2 * (steps + static_cast<int64_t>(ndev) + 1) + 100;
    depthBound_ = depthBase_ + 4 * static_cast<int64_t>(p_.dmas.size()) * p_.options.dmaChunks;
  }

  /// The largest value semaphore s can reach on any device, as a preprocessor
  /// expression of SEM_UNIT (byte-counted) or a constant; worstBound is its value at
  /// SEM_UNIT = 1, the largest it can be.
  std::string boundExpr(SemId s) const {
    if (!byteCounted_[s] || byteBound_[s] == 0)
      return std::to_string(fixedBound_[s]);
    std::string bytes = fmt::format("{} / SEM_UNIT", byteBound_[s]);
    return fixedBound_[s] ? fmt::format("{} + {}", fixedBound_[s], bytes) : bytes;
  }
  int64_t worstBound(SemId s) const { return fixedBound_[s] + byteBound_[s]; }

  /// Semaphore units of a wait: byte-counted DMA waits as UNITS(bytes), which follows
  /// SEM_UNIT; plain waits their constant amount (scaled).
  std::string waitAmount(const SemWait &w) const {
    if (w.origin != WaitOrigin::Wait)
      return fmt::format("UNITS({})", w.amount * p_.options.semUnit);
    return std::to_string(w.amount / scale_[w.sem]);
  }

  std::string sem(SemId s, DeviceId d) const { return fmt::format("{}[{}]", semVar_[s], d); }
  std::string srcLoc(SourceLoc loc) const {
    return loc.valid() ? fmt::format("{}:{}", file_, loc.line) : file_;
  }
  std::string dmaLabel(const Dma &dma) const {
    return fmt::format("dma {} ({} {} -> {} {})", dma.id, p_.processName(dma.issuer),
                       p_.regionName(dma.src), p_.processName(dma.target), p_.regionName(dma.dst));
  }

  // ---- Output with a line map. ----

  void line(const std::string &text, SourceLoc loc = {}, int check = -1) {
    out_ += text;
    out_ += '\n';
    ++lineNo_;
    if (map_) {
      map_->source.push_back(loc);
      if (check >= 0)
        map_->checkAtLine[lineNo_] = check;
    }
  }

  int addCheck(Check check) {
    check.step = currentStep_;
    checks_.push_back(std::move(check));
    return static_cast<int>(checks_.size()) - 1;
  }

  std::string printfStatement(const Step &step) const {
    std::string args;
    for (const std::string &a : step.printArgs)
      args += ", " + a;
    return fmt::format("printf(\"{}\\n\"{})", step.print, args);
  }

  /// Renders a step: one line when it has no asserts or conditional effects,
  /// otherwise one line per statement so that every assert has its own line (and its
  /// own check) and a preprocessor condition can surround a statement.
  void emitStep(const Step &step, const std::string &indent, const std::string &prefix) {
    if (!step.onlyIf.empty())
      line(fmt::format("#if {}", step.onlyIf), step.loc);
    if (!step.label.empty())
      line(fmt::format("{}:", step.label), step.loc);
    std::vector<std::string> body;
    if (o_.tracePrintfs && !step.print.empty())
      body.push_back(printfStatement(step));
    std::string comment = fmt::format("/* {} {} */", srcLoc(step.loc), sanitize(step.what));
    std::string guard = step.guard.empty() ? "" : step.guard + " -> ";
    if (step.asserts.empty() && step.conditionalEffects.empty() && step.fused.empty()) {
      for (const std::string &e : step.effects)
        body.push_back(e);
      std::string joined;
      for (size_t i = 0; i < body.size(); ++i)
        joined += (i ? "; " : "") + body[i];
      if (joined.empty() && guard.empty())
        joined = "skip";
      else if (joined.empty())
        joined = step.guard, guard.clear();
      line(fmt::format("{}{}d_step {{ {}{} }}  {}", indent, prefix, guard, joined, comment),
           step.loc);
    } else {
      // Promela accepts a `;` after the last statement of a block, so every statement
      // ends in one and a conditional statement needs no separator of its own.
      std::string inner = indent + std::string(prefix.size(), ' ') + "  ";
      line(fmt::format("{}{}d_step {{  {}", indent, prefix, comment), step.loc);
      if (!step.guard.empty())
        line(fmt::format("{}{} ->  /* {} */", inner, step.guard, srcLoc(step.loc)), step.loc);
      for (const std::string &b : body)
        line(fmt::format("{}{};  /* {} */", inner, b, srcLoc(step.loc)), step.loc);
      assertLines(step, inner);
      for (const std::string &e : step.effects)
        line(fmt::format("{}{};  /* {} */", inner, e, srcLoc(step.loc)), step.loc);
      for (const auto &[cond, e] : step.conditionalEffects) {
        line(fmt::format("#if {}", cond), step.loc);
        line(fmt::format("{}{};  /* {} */", inner, e, srcLoc(step.loc)), step.loc);
        line("#endif", step.loc);
      }
      if (!step.fused.empty()) {
        line("#if FUSE_DMAS", step.loc);
        for (const Step &f : step.fused) {
          line(fmt::format("{}/* fused: {} */", inner, sanitize(f.what)), f.loc);
          if (o_.tracePrintfs && !f.print.empty())
            line(fmt::format("{}{};  /* {} */", inner, printfStatement(f), srcLoc(f.loc)), f.loc);
          assertLines(f, inner);
          for (const std::string &e : f.effects)
            line(fmt::format("{}{};  /* {} */", inner, e, srcLoc(f.loc)), f.loc);
        }
        line("#endif", step.loc);
      }
      line(fmt::format("{}{}}}", indent, std::string(prefix.size(), ' ')), step.loc);
    }
    if (!step.onlyIf.empty())
      line("#endif", step.loc);
  }

  /// One line per assert of `step`, each mapped to its check.
  void assertLines(const Step &step, const std::string &inner) {
    for (const auto &[expr, check] : step.asserts) {
      const Check &c = checks_[check];
      std::string cond = expr, comment = c.message;
      if (!c.overflow) {
        const semantics::Property &prop = props_.property(props_.obligation(c.obligation).property);
        if (const char *gate = switchFor(prop.kind))
          cond = fmt::format("!{} || {}", gate, expr);
        comment = fmt::format("{}: {}", prop.id, prop.message);
      }
      line(fmt::format("{}assert({});  /* {} {} */", inner, cond, srcLoc(step.loc),
                       sanitize(comment)),
           step.loc, check);
    }
  }

  // ---- Header and declarations. ----

  void header() {
    file_ = baseName(p_.file);
    const Options &o = p_.options;
    std::vector<std::string> axes;
    for (const MeshAxis &axis : p_.mesh)
      axes.push_back(fmt::format("{}={}", axis.name, axis.size));
    // On a TensorCore mesh of several cores the barrier is on only with
    // --entry-barrier-cores all (Program::implicitBarrierOn).
    std::string barrier = p_.hasCollectiveId       ? "none (collective_id: the barrier semaphore)"
                          : p_.implicitBarrierOn() ? "on"
                          : o.entryBarrier ? "off (--entry-barrier-cores none on a TensorCore mesh)"
                                           : "off (--no-entry-barrier or skip_device_barrier)";
    line(fmt::format("/* Promela model of kernel {} ({}), generated by dkv from docs/model.md.",
                     sanitize(p_.kernel), sanitize(file_)));
    line(" *");
    if (p_.cores)
      line(fmt::format(" * Instance: {} processes (mesh {}, tensorcore mesh {}={}: one process "
                       "per core),",
                       p_.deviceCount(), fmt::join(axes, ", "), p_.cores->name, p_.cores->size));
    line(fmt::format(" * {}{} invocation(s), {} DMA(s),",
                     p_.cores ? ""
                              : fmt::format("Instance: {} devices (mesh {}), ", p_.deviceCount(),
                                            fmt::join(axes, ", ")),
                     o.invocations, p_.dmas.size()));
    line(fmt::format(" * {} chunk(s) per DMA side, semaphore unit {} B, entry barrier {}.",
                     o.dmaChunks, o.semUnit, barrier));
    if (o.dmaOrder == DmaOrder::Link) {
      line(" * DMA order link (--dma-order link, fixed: regenerate to change it): a remote");
      line(" * DMA lands only after every DMA its issuer started before it to the same target.");
    }
    line(" * Each event is one atomic step of its device process; each DMA side is an");
    line(" * interval from its start to its last send / land chunk (no per-byte state).");
    line(" *");
    line(fmt::format(" * Run:    spin -a {0} && gcc -O2 -DSAFETY -o pan pan.c && ./pan -m{1}",
                     o_.modelFileName, depthBound_));
    line(" * Races, exit and lifetime violations are assertion violations; a deadlock is an");
    line(" * invalid end state (a device process that cannot finish its events).");
    line(fmt::format(" * Replay: spin -t -p {}   (with the same -D flags as spin -a, if any)",
                     o_.modelFileName));
    line(" * DKV lines of a replay: d DEVICE EVENT | s DMA | l DMA | b DEVICE INVOCATION.");
    line(" */");
    line("");
    const int entryBarrier = (barrierLive_ && p_.implicitBarrierOn()) ? 1 : 0;
    line("/* Fixed by the instance: every device's events are unrolled for this mesh (the");
    line(" * kernel's control flow, indices and DMA targets were evaluated per device), so");
    line(" * another mesh means regenerating with dkv dump-promela; the #if below stops");
    line(" * spin -a rather than check a model that no longer matches it. */");
    // #ifndef, so that a value given with spin -D is caught by the #if too.
    auto define = [&](const char *name, int64_t value, const std::string &comment) {
      line(fmt::format("#ifndef {}", name));
      line(fmt::format("#define {} {}  /* {} */", name, value, comment));
      line("#endif");
    };
    define("NDEV", p_.deviceCount(), "devices (--devices)");
    define(
        "NDMA", static_cast<int64_t>(p_.dmas.size()),
        fmt::format("DMAs (one per start() and invocation, for {} invocation(s))", o.invocations));
    std::string fixedCheck =
        fmt::format("NDEV != {} || NDMA != {}", p_.deviceCount(), p_.dmas.size());
    if (!barrierLive_) {
      define("ENTRY_BARRIER", 0, "collective_id: its barrier semaphore replaces the entry barrier");
      fixedCheck += " || ENTRY_BARRIER != 0";
    }
    line(fmt::format("#if {}", fixedCheck));
    line("#error \"this model was generated for the values above: regenerate it with dkv "
         "dump-promela and the options you want\"");
    line("#endif");
    line("");
    line("/* Options you may change without regenerating: edit a value here or override it,");
    line(" * e.g. spin -DDMA_CHUNKS=4 -DSEM_UNIT=32 -a ... (the same model as dkv would");
    // A sequence's invocations are its calls: fewer would check a prefix of it.
    const bool sequence = !p_.calls.empty();
    if (sequence) {
      line(" * generate with those options). INVOCATIONS is fixed: the calls of the sequence");
      line(" * are unrolled, and the model checks all of them. */");
    } else {
      line(fmt::format(
          " * generate with those options). INVOCATIONS can go down to 1, not above {}:",
          o.invocations));
      line(" * the invocations are unrolled, and the model has the steps of that many. */");
    }
    define("INVOCATIONS", o.invocations,
           sequence ? fmt::format("the calls of the sequence (fixed: {})", o.invocations)
                    : fmt::format("--invocations: back-to-back runs of the kernel, 1..{}",
                                  o.invocations));
    define("DMA_CHUNKS", o.dmaChunks, "--dma-chunks: steps per DMA side, 1..64");
    define("SEM_UNIT", o.semUnit, "--sem-unit: bytes per DMA-semaphore unit");
    if (barrierLive_)
      define("ENTRY_BARRIER", entryBarrier,
             "1: devices wait at entry until all have entered; 0: --no-entry-barrier");
    std::string bad = fmt::format(
        "INVOCATIONS < {} || INVOCATIONS > {} || DMA_CHUNKS < 1 || DMA_CHUNKS > 64 || SEM_UNIT < 1",
        sequence ? o.invocations : 1, o.invocations);
    if (barrierLive_)
      bad += " || (ENTRY_BARRIER != 0 && ENTRY_BARRIER != 1)";
    line(fmt::format("#if {}", bad));
    line(fmt::format("#error \"INVOCATIONS must be {}..{} (more: regenerate), DMA_CHUNKS 1..64, "
                     "SEM_UNIT >= 1{}\"",
                     sequence ? o.invocations : 1, o.invocations,
                     barrierLive_ ? " and ENTRY_BARRIER 0 or 1" : ""));
    line("#endif");
    if (!dmaBytes_.empty()) {
      // dkv's lowering refuses a DMA whose size is not a multiple of the unit
      // (dma-size-unit); the model refuses the same SEM_UNIT values.
      std::vector<std::string> sizes;
      for (int64_t bytes : dmaBytes_)
        sizes.push_back(fmt::format("{} % SEM_UNIT", bytes));
      line(fmt::format("#if {}", fmt::join(sizes, " || ")));
      line(fmt::format("#error \"SEM_UNIT must divide every DMA size ({} bytes)\"",
                       fmt::join(dmaBytes_, ", ")));
      line("#endif");
      line("/* docs/model.md: a DMA of B bytes adds UNITS(B) units to its semaphores, in");
      line(" * DMA_CHUNKS chunks; chunk c (from 0) carries the units whose bytes are all in");
      line(" * with it, floor((c + 1) U / K) - floor(c U / K) for U = UNITS(B) and K =");
      line(" * DMA_CHUNKS: U / K plus the same of U % K. The last chunk carries the last unit. */");
      line("#define UNITS(B) ((B) / SEM_UNIT)");
      line("#define CHUNK_UNITS(B, c) (UNITS(B) / DMA_CHUNKS + ((c) + 1) * (UNITS(B) % DMA_CHUNKS) "
           "/ DMA_CHUNKS - (c) * (UNITS(B) % DMA_CHUNKS) / DMA_CHUNKS)");
    }
    line("");
    line(fmt::format("/* Longest run in steps, with margin: pan -m ({} with the values above) */",
                     depthBound_));
    line(fmt::format("#define MAX_DEPTH ({} + 4 * NDMA * DMA_CHUNKS)", depthBase_));
    line("");
    line("/* One switch per kind of assert, on by default: spin -DCHECK_RACES=0 -a ... turns");
    line(" * races off to look for the other kinds (deadlocks: ./pan -E). */");
    for (const char *gate : {kCheckRaces, kCheckExit, kCheckLifetime}) {
      line(fmt::format("#ifndef {}", gate));
      line(fmt::format("#define {} 1", gate));
      line("#endif");
    }
    line("");
    line("/* Fused steps (docs/promela.md): FUSE_STEPS runs each device's waits in one atomic");
    line(" * sequence with the step they lead to (Lipton's reduction), for every value of the");
    line(" * options above. FUSE_DMAS runs the DMA chunks that no step can observe before");
    line(" * them inside their DMA's start; it is decided for the options generated with, so");
    line(" * it is off for other values. -DFUSE_STEPS=0 -DFUSE_DMAS=0: every interleaving. */");
    line("#ifndef FUSE_STEPS");
    line("#define FUSE_STEPS 1");
    line("#endif");
    line("#ifndef FUSE_DMAS");
    if (anyFused_)
      line(fmt::format("#define FUSE_DMAS (DMA_CHUNKS == {} && SEM_UNIT == {} && INVOCATIONS == {} "
                       "&& ENTRY_BARRIER == {})",
                       o.dmaChunks, o.semUnit, o.invocations, entryBarrier));
    else
      line("#define FUSE_DMAS 0  /* no DMA chunk of this instance is fused */");
    line("#endif");
    line("");
  }

  void declarations() {
    std::optional<SemId> barrier = p_.barrierSemaphore();
    if (!p_.semaphores.empty()) {
      line("/* Semaphores: one array per semaphore, indexed by device, in units. A semaphore");
      line(" * that only moves by the kernel's constant amounts is stored divided by their gcd");
      line(" * (its scale); a DMA semaphore, whose amounts follow SEM_UNIT, is stored as is.");
      line(" * Each type holds the semaphore's bound, the most any run can add on a device. */");
    }
    // One type per distinct bound of a byte-counted semaphore, chosen by the
    // preprocessor because the bound follows SEM_UNIT.
    std::map<std::string, std::string> typeMacro;
    for (size_t s = 0; s < p_.semaphores.size(); ++s) {
      SemId sid = static_cast<SemId>(s);
      const Semaphore &sem = p_.semaphores[s];
      std::string note = barrier && *barrier == sid ? ", exempt from exit rule" : "";
      std::string bound = boundExpr(sid);
      std::string type = typeFor(worstBound(sid));
      if (byteCounted_[s] && byteBound_[s] > 0) {
        auto [it, fresh] =
            typeMacro.emplace(bound, fmt::format("SEMTYPE_{}", typeMacro.size() + 1));
        if (fresh) {
          line(fmt::format("#if {} <= 255", bound));
          line(fmt::format("#define {} byte", it->second));
          line(fmt::format("#elif {} <= 32767", bound));
          line(fmt::format("#define {} short", it->second));
          line("#else");
          line(fmt::format("#define {} int", it->second));
          line("#endif");
        }
        type = it->second;
      }
      std::string scale = byteCounted_[s] ? "" : fmt::format("scale {}, ", scale_[s]);
      line(fmt::format("{} {}[NDEV];  /* {} {}: {}bound {}{} */", type, semVar_[s],
                       semKindName(sem.kind), sanitize(p_.semName(sid)), scale, bound, note),
           sem.loc);
    }
    if (!p_.dmas.empty()) {
      line("");
      line("/* DMA k: snd[k] send chunks still to leave, rcv[k] chunks still to land (both 0");
      line(" * before its start and after it completed). Source read open <=> snd[k] > 0,");
      line(" * destination write open <=> rcv[k] > 0; chunk c lands after it left: rcv > snd. */");
      line("byte snd[NDMA];");
      line("byte rcv[NDMA];");
    }
    line("");
    line("/* where[d]: 0 outside the kernel, i+1 inside invocation i */");
    line("byte where[NDEV];");
    if (!p_.calls.empty()) {
      line("/* pos[d]: 2i+1 inside invocation i (call i of the sequence), 2i+2 after it */");
      line(fmt::format("{} pos[NDEV];", typeFor(2 * static_cast<int64_t>(p_.calls.size()) + 2)));
    }
    if (barrierLive_) {
      line("#if ENTRY_BARRIER");
      line("/* arrived[i]: devices that reached (are at or past) the barrier of invocation i */");
      line(fmt::format("{} arrived[INVOCATIONS];", typeFor(p_.deviceCount())));
      line("#endif");
    }
    for (size_t b = 0; b < p_.scopes.size(); ++b)
      line(fmt::format("bit inscope{}[NDEV];  /* device is inside {} */", b,
                       sanitize(p_.scopes[b].name)),
           p_.scopes[b].loc);
    line("");
  }

  // ---- Devices. ----

  /// How a device step moves past the steps of other processes (Lipton's reduction;
  /// docs/promela.md, "Fused steps"). A right mover can be delayed past any step of
  /// another process and a left mover taken earlier, with the same effects and the same
  /// outcome of every assert.
  enum class Mover { None, Right, Left, Both };

  Mover moverOf(DeviceId d, int32_t pc, const Event &e) const {
    return std::visit(
        support::Overloaded{
            // Only d's own waits decrease d's semaphores, a decrement enables no step,
            // and only d's events read the value (ExitSemaphore, SlotEnter).
            [&](const SemWait &w) { return w.amount > 0 ? Mover::Right : Mover::Both; },
            // Once open a barrier stays open, and passing it changes nothing another
            // process reads (arriving is the enter step's).
            [](const DeviceBarrier &) { return Mover::Right; },
            // Data only.
            [](const SemRead &) { return Mover::Both; },
            // A store without race asserts (none, or only of skipped properties)
            // changes nothing the model keeps.
            [&](const Store &) {
              const auto &checked = props_.atEvent(d, pc);
              return std::none_of(checked.begin(), checked.end(),
                                  [&](ObligationIndex index) { return live(index); })
                         ? Mover::Both
                         : Mover::None;
            },
            // A signal to d itself: only d's own steps read d's semaphores, where and
            // scopes. One on the barrier semaphore to another device has no check and
            // may enable the target's wait, so it can only be taken earlier.
            [&](const Signal &sig) {
              if (sig.target == d)
                return Mover::Both;
              return p_.isBarrier(sig.sem) ? Mover::Left : Mover::None;
            },
            [](const KernelEnter &) { return Mover::None; },
            [](const KernelExit &) { return Mover::None; },
            [](const ScopeEnter &) { return Mover::None; },
            [](const ScopeExit &) { return Mover::None; },
            [](const DmaStart &) { return Mover::None; },
        },
        e.kind);
  }

  void device(const Process &proc) {
    std::vector<std::string> coords;
    for (size_t a = 0; a < proc.coords.size() && a < p_.mesh.size(); ++a)
      coords.push_back(fmt::format("{}={}", p_.mesh[a].name, proc.coords[a]));
    if (p_.cores)
      coords.push_back(fmt::format("{}={}", p_.cores->name, proc.core));
    line(fmt::format("/* {} ({}): {} events */", p_.processName(proc.device),
                     fmt::join(coords, ", "), proc.events.size()));
    line(fmt::format("active proctype dev{}() {{", proc.device));
    // The steps of the device in order, each with its mover class and the preprocessor
    // lines around it (an invocation's #if before its KernelEnter, #endif after its
    // KernelExit), which no atomic sequence may cross.
    struct Item {
      Step step;
      Mover mover = Mover::None;
      std::string before; ///< a line before the step (an #if), or empty
      std::string after;  ///< a line after it (an #endif), or empty
    };
    std::vector<Item> items;
    int32_t inside = -1;
    for (size_t i = 0; i < proc.events.size(); ++i) {
      const Event &e = proc.events[i];
      Item item;
      item.mover = moverOf(proc.device, static_cast<int32_t>(i), e);
      if (const auto *enter = std::get_if<KernelEnter>(&e.kind)) {
        inside = enter->invocation;
        // Invocation i runs only when INVOCATIONS > i; its DMAs then never start, so
        // their sides stay closed and every assert about them holds.
        if (inside > 0)
          item.before = fmt::format("#if INVOCATIONS > {}", inside);
      }
      Step &step = item.step;
      currentStep_ = {report::ScheduleStep::Kind::Device, proc.device};
      step.loc = e.loc;
      step.what = describeEvent(p_, e);
      step.print = fmt::format("DKV d {} {} {}", proc.device, i, sanitize(step.what));
      eventStep(proc.device, i, e, step);
      // A deadlock property already found: a device blocked here is a valid end
      // state, so that pan looks for the others.
      const ObligationIndex stuck = props_.stuckAt(proc.device, static_cast<int32_t>(i));
      if (stuck >= 0 && o_.skip.count(props_.obligation(stuck).property))
        step.label = fmt::format("end_found_{}", i);
      // The entry barrier (docs/model.md: a DeviceBarrier right after KernelEnter when
      // the kernel has no collective_id) is compiled in with ENTRY_BARRIER. Arriving is
      // folded into the enter step: "reached" means pc at or past the barrier, which
      // becomes true exactly when that step runs.
      const auto *enter = std::get_if<KernelEnter>(&e.kind);
      // In a sequence only the calls of kernels with the implicit barrier have one.
      if (enter && !p_.calls.empty() &&
          (enter->invocation >= static_cast<int32_t>(p_.calls.size()) ||
           !p_.calls[enter->invocation].implicitBarrier))
        enter = nullptr;
      if (enter && barrierLive_)
        step.conditionalEffects.push_back(
            {"ENTRY_BARRIER", fmt::format("arrived[{}]++", enter->invocation)});
      if (std::holds_alternative<DeviceBarrier>(e.kind))
        step.onlyIf = "ENTRY_BARRIER";
      const bool exit = std::holds_alternative<KernelExit>(e.kind);
      if (exit && inside > 0)
        item.after = "#endif";
      if (exit)
        inside = -1;
      items.push_back(std::move(item));
      // Generated without the barrier: its step, for a user who turns it on. It is not
      // an event of dkv's program, so its trace line has its own kind (DKV b).
      bool barrierNext = i + 1 < proc.events.size() &&
                         std::holds_alternative<DeviceBarrier>(proc.events[i + 1].kind);
      if (enter && barrierLive_ && !barrierNext) {
        Item barrier;
        barrier.mover = Mover::Right;
        Step &barrierStep = barrier.step;
        barrierStep.loc = e.loc;
        barrierStep.what = describeEvent(p_, Event{DeviceBarrier{enter->invocation}, e.loc});
        barrierStep.print =
            fmt::format("DKV b {} {} {}", proc.device, enter->invocation, barrierStep.what);
        barrierStep.guard = fmt::format("arrived[{}] == NDEV", enter->invocation);
        barrierStep.onlyIf = "ENTRY_BARRIER";
        items.push_back(std::move(barrier));
      }
    }
    // Lipton's reduction (docs/promela.md, "Fused steps"): right movers, at most one
    // other step, then left movers, as one atomic sequence (movers of both kinds go
    // anywhere). No sequence crosses an #if line.
    std::vector<std::pair<size_t, size_t>> groups; // [begin, end) of items
    size_t begin = 0;
    bool committed = false; // the group has its non-mover or a left mover
    for (size_t i = 0; i < items.size(); ++i) {
      const Mover m = items[i].mover;
      // A labelled step (a skipped deadlock's wait) starts a group: spin takes a label
      // only before an atomic sequence, not on its first statement.
      bool fits = i > begin && items[i].before.empty() && items[i - 1].after.empty() &&
                  items[i].step.label.empty() &&
                  (committed ? (m == Mover::Left || m == Mover::Both) : true);
      if (!fits && i > begin) {
        groups.push_back({begin, i});
        begin = i;
        committed = false;
      }
      if (m == Mover::None || m == Mover::Left)
        committed = true;
    }
    if (begin < items.size())
      groups.push_back({begin, items.size()});
    for (const auto &[from, to] : groups) {
      size_t unconditional = 0;
      for (size_t i = from; i < to; ++i)
        unconditional += items[i].step.onlyIf.empty() ? 1 : 0;
      // (A step under #if, the entry barrier, may be compiled out: keep one that is not.)
      const bool atomic = to - from >= 2 && unconditional >= 1;
      if (!items[from].before.empty())
        line(items[from].before, items[from].step.loc);
      if (atomic) {
        Step &first = items[from].step;
        if (!first.label.empty()) {
          if (!first.onlyIf.empty())
            line(fmt::format("#if {}", first.onlyIf), first.loc);
          line(fmt::format("{}:", first.label), first.loc);
          if (!first.onlyIf.empty())
            line("#endif", first.loc);
          first.label.clear();
        }
        line("#if FUSE_STEPS", items[from].step.loc);
        line("  atomic {", items[from].step.loc);
        line("#endif", items[from].step.loc);
      }
      for (size_t i = from; i < to; ++i)
        emitStep(items[i].step, atomic ? "    " : "  ", "");
      if (atomic) {
        line("#if FUSE_STEPS", items[to - 1].step.loc);
        line("  }", items[to - 1].step.loc);
        line("#endif", items[to - 1].step.loc);
      }
      if (!items[to - 1].after.empty())
        line(items[to - 1].after, items[to - 1].step.loc);
    }
    // Falling off the end is the only valid end state of a device process.
    line("}");
    line("");
  }

  void eventStep(DeviceId d, size_t index, const Event &e, Step &step) {
    checks(props_.atEvent(d, static_cast<int32_t>(index)), step);
    std::visit(
        [&](const auto &ev) {
          using T = std::decay_t<decltype(ev)>;
          if constexpr (std::is_same_v<T, KernelEnter>) {
            step.effects.push_back(fmt::format("where[{}] = {}", d, ev.invocation + 1));
            if (!p_.calls.empty())
              step.effects.push_back(fmt::format("pos[{}] = {}", d, 2 * ev.invocation + 1));
          } else if constexpr (std::is_same_v<T, KernelExit>) {
            step.effects.push_back(fmt::format("where[{}] = 0", d));
            if (!p_.calls.empty())
              step.effects.push_back(fmt::format("pos[{}] = {}", d, 2 * ev.invocation + 2));
          } else if constexpr (std::is_same_v<T, DeviceBarrier>) {
            step.guard = fmt::format("arrived[{}] == NDEV", ev.invocation);
          } else if constexpr (std::is_same_v<T, ScopeEnter>) {
            step.effects.push_back(fmt::format("inscope{}[{}] = 1", ev.scope, d));
          } else if constexpr (std::is_same_v<T, ScopeExit>) {
            step.effects.push_back(fmt::format("inscope{}[{}] = 0", ev.scope, d));
          } else if constexpr (std::is_same_v<T, Store>) {
            // Data is abstracted away: a store only has its race checks.
          } else if constexpr (std::is_same_v<T, DmaStart>) {
            step.effects.push_back(
                fmt::format("snd[{0}] = DMA_CHUNKS; rcv[{0}] = DMA_CHUNKS", ev.dma));
            // The chunks that nothing can observe in between run right after the
            // start: send 0, land 0, send 1, ... (docs/promela.md, "Fused DMA chunks").
            const Dma &dma = p_.dmas[ev.dma];
            for (int32_t c = 0; c < fusedSends_[ev.dma]; ++c) {
              step.fused.push_back(sendStep(dma));
              if (c < fusedLands_[ev.dma])
                step.fused.push_back(landStep(dma, false));
            }
          } else if constexpr (std::is_same_v<T, SemWait>) {
            std::string a = waitAmount(ev);
            if (ev.origin != WaitOrigin::Wait) {
              // The amount follows SEM_UNIT: print the one this compilation waits for.
              std::string fixed = fmt::format(" >= {} (", ev.amount);
              size_t at = step.print.find(fixed);
              DKV_INVARIANT(at != std::string::npos, "describeEvent prints a wait's amount");
              step.print.replace(at, fixed.size(), " >= %d (");
              step.printArgs.push_back(a);
            }
            if (ev.amount > 0) {
              step.guard = fmt::format("{} >= {}", sem(ev.sem, d), a);
              step.effects.push_back(fmt::format("{0} = {0} - {1}", sem(ev.sem, d), a));
            }
          } else if constexpr (std::is_same_v<T, Signal>) {
            increment(ev.sem, ev.target, std::to_string(ev.amount / scale_[ev.sem]), e.loc,
                      fmt::format("signal {} on {}", p_.semName(ev.sem), p_.processName(ev.target)),
                      step);
          } else if constexpr (std::is_same_v<T, SemRead>) {
            // The value read only flows into data, which is abstracted away.
          } else {
            static_assert(sizeof(T) == 0, "every event kind must be emitted");
          }
        },
        e.kind);
  }

  /// sem[target] += amount (scaled). An overflow assert only where the type cannot
  /// hold the bound for some SEM_UNIT (int with a bound beyond 2^31-1); otherwise
  /// wrap-around is impossible because no run adds more than the bound.
  void increment(SemId s, DeviceId target, const std::string &amount, SourceLoc loc,
                 const std::string &what, Step &step) {
    std::string var = sem(s, target);
    if (worstBound(s) > kIntMax) {
      Check c;
      c.overflow = true;
      c.message = fmt::format("semaphore {} on {} exceeds the model's integer range ({}): {}",
                              p_.semName(s), p_.processName(target), kIntMax, what);
      step.asserts.push_back({fmt::format("{} <= {} - {}", var, kIntMax, amount), addCheck(c)});
    }
    step.effects.push_back(fmt::format("{0} = {0} + {1}", var, amount));
  }

  /// The asserts of obligations checked at a step, except those of skipped
  /// properties. Each is evaluated before the step's effects (docs/model.md: a check
  /// reads the state the step runs from).
  void checks(const std::vector<ObligationIndex> &obligations, Step &step) {
    for (ObligationIndex index : obligations) {
      const Obligation &o = props_.obligation(index);
      if (o_.skip.count(o.property))
        continue;
      Check c;
      c.obligation = index;
      step.asserts.push_back({assertion(o), addCheck(c)});
    }
  }

  /// Fact `f` of the state, or its negation, in the encoding above (snd/rcv > 0 while a
  /// side is open, where[d] = invocation + 1, pos[d] counting kernel enters and exits,
  /// inscopeS[d] = 1 inside scope S).
  std::string fact(const semantics::Fact &f, bool negated) const {
    using Kind = semantics::Fact::Kind;
    switch (f.kind) {
    case Kind::SideOpen:
      return fmt::format("{}[{}] {} 0", f.dst ? "rcv" : "snd", f.dma, negated ? "==" : "!=");
    case Kind::SemNonZero:
      return fmt::format("{} {} 0", sem(f.sem, f.device), negated ? "==" : "!=");
    case Kind::Within: {
      if (f.first == f.last)
        return fmt::format("where[{}] {} {}", f.device, negated ? "!=" : "==", f.first + 1);
      // An array a sequence hands on: Properties::withinInvocations on pos[d].
      std::string window = fmt::format("pos[{0}] >= {1} && pos[{0}] <= {2}", f.device,
                                       2 * f.first + 1, 2 * f.last + 1);
      return negated ? "!(" + window + ")" : window;
    }
    case Kind::InScope:
      return fmt::format("inscope{}[{}] == {}", f.scope, f.device, negated ? 0 : 1);
    case Kind::Stuck:
      break; // a deadlock is an invalid end state, not an assert
    }
    DKV_UNREACHABLE("a fact with an assert");
  }

  /// The Promela condition that holds unless obligation `o` is violated: the negation of
  /// its predicate (semantics/Obligations.h), one negated literal per disjunct.
  std::string assertion(const Obligation &o) const {
    std::string out;
    for (const semantics::Literal &l : semantics::violation(o).all)
      out += (out.empty() ? "" : " || ") + fact(l.fact, !l.negated);
    return out;
  }

  // ---- DMAs. ----

  /// The next send chunk of `dma` (docs/model.md): its units to the send semaphore;
  /// the source read closes with the last one.
  /// What the next chunk of one side of `dma` adds to its semaphore `s` (`side`: "snd" or
  /// "rcv", the side's count of chunks still to move): on a DMA semaphore its share of
  /// the bytes, CHUNK_UNITS (which follows SEM_UNIT and DMA_CHUNKS); on a regular one 1
  /// with the last chunk (Program::countsCompletion), whatever DMA_CHUNKS is.
  std::string chunkAmount(const Dma &dma, SemId s, std::string_view side) const {
    if (p_.countsCompletion(s))
      return fmt::format("({}[{}] == 1 -> {} : 0)", side, dma.id, 1 / scale_[s]);
    return fmt::format("CHUNK_UNITS({}, DMA_CHUNKS - {}[{}])", dma.bytes, side, dma.id);
  }

  Step sendStep(const Dma &dma) {
    const report::ScheduleStep outer = currentStep_;
    currentStep_ = {report::ScheduleStep::Kind::Send, dma.id};
    Step send;
    send.loc = dma.loc;
    send.what = fmt::format("dma {} send chunk", dma.id);
    send.guard = fmt::format("snd[{}] > 0", dma.id);
    send.print = fmt::format("DKV s {} {}", dma.id, sanitize(send.what));
    send.print += " %d/%d";
    send.printArgs = {fmt::format("DMA_CHUNKS - snd[{}] + 1", dma.id), "DMA_CHUNKS"};
    if (dma.sendSem)
      increment(*dma.sendSem, dma.issuer, chunkAmount(dma, *dma.sendSem, "snd"), dma.loc,
                fmt::format("dma {} send chunk", dma.id), send);
    send.effects.push_back(fmt::format("snd[{}]--", dma.id));
    currentStep_ = outer;
    return send;
  }

  /// The next land chunk of `dma`: only after that chunk left (and, with --dma-order
  /// link and `linkGuard`, after the DMA started before it on its link has landed); its
  /// units to the receive semaphore, the destination write closes with the last one.
  /// Lifetime: the target must be inside the DMA's invocation (and the scope of a scoped
  /// destination or receive semaphore) at every land.
  Step landStep(const Dma &dma, bool linkGuard) {
    const report::ScheduleStep outer = currentStep_;
    currentStep_ = {report::ScheduleStep::Kind::Land, dma.id};
    Step land;
    land.loc = dma.loc;
    land.what = fmt::format("dma {} land chunk", dma.id);
    land.guard = fmt::format("rcv[{0}] > snd[{0}]", dma.id);
    // --dma-order link: the DMA started before it on its link has landed completely
    // (it started earlier, so rcv 0 means it is done).
    if (const DmaId j = props_.linkPredecessor(dma.id); j >= 0 && linkGuard)
      land.guard += fmt::format(" && rcv[{}] == 0", j);
    land.print = fmt::format("DKV l {} {}", dma.id, sanitize(land.what));
    land.print += " %d/%d";
    land.printArgs = {fmt::format("DMA_CHUNKS - rcv[{}] + 1", dma.id), "DMA_CHUNKS"};
    checks(props_.atLand(dma.id), land);
    increment(dma.recvSem, dma.target, chunkAmount(dma, dma.recvSem, "rcv"), dma.loc,
              fmt::format("dma {} land chunk", dma.id), land);
    land.effects.push_back(fmt::format("rcv[{}]--", dma.id));
    currentStep_ = outer;
    return land;
  }

  void dmaLoop() {
    if (p_.dmas.empty())
      return;
    line("/* The DMA engines: each option moves one chunk of one DMA in flight. Labelled");
    line(" * end: an idle DMA engine is a valid end state, so an invalid end state always");
    line(" * means a device process that cannot finish. */");
    line("active proctype dmas() {");
    line("end:");
    line("  do");
    for (const Dma &dma : p_.dmas) {
      emitStep(sendStep(dma), "  ", ":: ");
      emitStep(landStep(dma, true), "  ", ":: ");
    }
    line("  od");
    line("}");
  }

  // ---- Fused DMA chunks (docs/promela.md). ----

  /// Whether chunk c of `dma`'s send (or land) side is ordered, in every run, with every
  /// step that observes it: each event whose obligations read what the chunk changes
  /// (the semaphore it adds to, if it carries units; its side, if it is the side's last
  /// chunk) or what its own checks read (for a land chunk with lifetime checks, the
  /// target's enter and exit events) runs before the DMA starts or after the chunk
  /// (semantics::MustOrder::after). Then the chunk can run right after the step that enables
  /// it without changing any assert's outcome or any reachable end state.
  bool chunkOrdered(const semantics::MustOrder &order, const Dma &dma, bool land, int32_t c) const {
    const int32_t start = props_.startPc(dma.id);
    if (start < 0)
      return false;
    const int32_t chunks = dma.chunks();
    // Only the asserts in the model observe (a skipped property has none).
    std::vector<semantics::Properties::EventRef> observers;
    auto observedAt = [&](const semantics::Properties::EventRef &at, const auto &reads) {
      for (ObligationIndex index : props_.atEvent(at.first, at.second))
        if (live(index) && reads(props_.obligation(index))) {
          observers.push_back(at);
          return;
        }
    };
    const std::vector<int64_t> &sideUnits = dma.units(land);
    const int64_t units = static_cast<size_t>(c) < sideUnits.size() ? sideUnits[c] : 0;
    if (units != 0 && (land || dma.sendSem)) {
      const DeviceId owner = land ? dma.target : dma.issuer;
      const SemId sem = land ? dma.recvSem : *dma.sendSem;
      for (const auto &at : props_.semReaders(owner, sem))
        observedAt(at, [&](const Obligation &o) {
          return semantics::reads(
              semantics::violation(o), semantics::Fact::Kind::SemNonZero,
              [&](const semantics::Fact &f) { return f.device == owner && f.sem == sem; });
        });
    }
    if (c + 1 == chunks)
      for (const auto &at : props_.sideReaders(dma.id, land))
        observedAt(at, [&](const Obligation &o) {
          return semantics::reads(
              semantics::violation(o), semantics::Fact::Kind::SideOpen,
              [&](const semantics::Fact &f) { return f.dma == dma.id && f.dst == land; });
        });
    const auto &landChecks = props_.atLand(dma.id);
    if (land && std::any_of(landChecks.begin(), landChecks.end(),
                            [&](ObligationIndex index) { return live(index); })) {
      const std::vector<Event> &events = p_.processes[dma.target].events;
      for (size_t i = 0; i < events.size(); ++i) {
        const EventKind &kind = events[i].kind;
        if (std::holds_alternative<KernelEnter>(kind) || std::holds_alternative<KernelExit>(kind) ||
            std::holds_alternative<ScopeEnter>(kind) || std::holds_alternative<ScopeExit>(kind))
          observers.push_back({dma.target, static_cast<int32_t>(i)});
      }
    }
    if (observers.empty())
      return true;
    using Kind = semantics::OrderSource::Kind;
    const std::vector<int32_t> after =
        order.after({land ? Kind::Land : Kind::Send, 0, 0, dma.id, c});
    for (const auto &[e, pc] : observers)
      if (pc < after[e] && !order.before(e, pc, dma.issuer, start))
        return false;
    return true;
  }

  /// Whether the run asked to stop (EmitOptions::stop): the time limit is looked at too.
  bool stopped() const { return o_.stop && o_.stop->poll(); }

  /// Whether obligation `index` has an assert in the model (its property is not skipped).
  bool live(ObligationIndex index) const {
    return !o_.skip.count(props_.obligation(index).property);
  }

  /// fusedSends_ / fusedLands_: per DMA, how many of its first send chunks, and land
  /// chunks, run inside its DmaStart step (send 0, land 0, send 1, ...). A land chunk is
  /// fused only after its send chunk and the land chunks before it, and with --dma-order
  /// link only when the DMA before it on its link lands completely inside its own start.
  void analyseFusion() {
    fusedSends_.assign(p_.dmas.size(), 0);
    fusedLands_.assign(p_.dmas.size(), 0);
    if (p_.dmas.empty())
      return;
    semantics::MustOrder order(props_);
    std::vector<int32_t> chunks(p_.dmas.size());
    for (const Dma &dma : p_.dmas) {
      if (stopped())
        return;
      chunks[dma.id] = dma.chunks();
      int32_t &sends = fusedSends_[dma.id];
      while (sends < chunks[dma.id] && chunkOrdered(order, dma, false, sends))
        ++sends;
      int32_t &lands = fusedLands_[dma.id];
      while (lands < sends && chunkOrdered(order, dma, true, lands))
        ++lands;
    }
    for (bool changed = true; changed;) {
      changed = false;
      for (const Dma &dma : p_.dmas) {
        const DmaId j = props_.linkPredecessor(dma.id);
        if (j >= 0 && fusedLands_[dma.id] > 0 && fusedLands_[j] < chunks[j]) {
          fusedLands_[dma.id] = 0;
          changed = true;
        }
      }
    }
    for (const Dma &dma : p_.dmas)
      anyFused_ = anyFused_ || fusedSends_[dma.id] > 0;
  }

  const semantics::Properties &props_;
  const Program &p_;
  const EmitOptions &o_;
  LineMap *map_;
  std::string out_;
  int lineNo_ = 0;
  std::string file_;
  std::vector<Check> checks_;
  std::vector<int64_t> scale_;
  std::vector<bool> byteCounted_;
  std::vector<int64_t> fixedBound_; ///< per semaphore: constant increments / scale
  std::vector<int64_t> byteBound_;  ///< per semaphore: DMA bytes (units: / SEM_UNIT)
  std::set<int64_t> dmaBytes_;      ///< every DMA size, for the SEM_UNIT guard
  std::vector<std::string> semVar_;
  bool barrierLive_ = false;
  std::vector<int32_t> fusedSends_, fusedLands_; ///< per DMA (analyseFusion)
  bool anyFused_ = false;
  /// The step whose Step is being built: every check added belongs to it (Check::step).
  report::ScheduleStep currentStep_;
  int64_t depthBase_ = 0;
  int64_t depthBound_ = 0;
};

} // namespace

std::string emitPromela(const semantics::Properties &properties, const EmitOptions &options,
                        LineMap *map) {
  if (map)
    *map = LineMap{};
  return Emitter(properties, options, map).run();
}

} // namespace dkv::promela
