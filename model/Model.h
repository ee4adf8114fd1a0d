// The concurrency model (IR): one instance of a kernel for one mesh. docs/model.md
// is the meaning of every type here; the Promela emitter, the SMT encoder and the
// executor implement that table and nothing else.
#pragma once

#include "prim/DType.h"
#include "prim/Op.h"
#include "support/Source.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace dkv::model {

using support::SourceLoc;

/// Small integer ids; cross references in the model are never pointers.
using DeviceId = int32_t;
using BufferId = int32_t;
using SemId = int32_t;
using DmaId = int32_t;
using ScopeId = int32_t;
using ContextId = int32_t;
using RegisterId = int32_t;

constexpr ScopeId kKernelScope = -1;

/// Memory spaces and element types: the catalogue's (prim/DType.h).
using prim::DType;
using prim::MemSpace;
enum class SemKind { Regular, Dma, Barrier };
/// How a buffer comes into the kernel: parameters exist on every device for the
/// whole run (allocated by the caller); scratch only while its owner is inside.
enum class BufferRole { Input, Output, InOut, Scratch };

const char *semKindName(SemKind kind);

/// Half-open interval of indices [begin, end) along one dimension.
struct Range {
  int64_t begin = 0;
  int64_t end = 0;
  int64_t size() const { return end - begin; }
  friend bool operator==(const Range &, const Range &) = default;
};

/// A box of elements of one buffer: one Range per dimension of the buffer (a single
/// index is a Range of size 1). The device is given by context (the event's device,
/// or a DMA's issuer for its source and target for its destination).
struct Region {
  BufferId buffer = 0;
  std::vector<Range> ranges;

  int64_t elementCount() const;
  /// True if both regions are of the same buffer and share at least one element.
  bool overlaps(const Region &other) const;
  friend bool operator==(const Region &, const Region &) = default;
};

struct Buffer {
  std::string name;
  MemSpace space = MemSpace::Any;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  BufferRole role = BufferRole::Scratch;
  /// The run_scoped block that allocates it, or kKernelScope.
  ScopeId scope = kKernelScope;
  SourceLoc loc;
  /// A sequence of kernels (Program::calls): the kernel whose scratch or scoped
  /// buffer this is (index into Program::kernels), -1 for one kernel or an array of
  /// the sequence.
  int32_t kernel = -1;
  /// An array of the sequence lives on every device from its entry into call
  /// liveFirst to its exit from call liveLast of each run of the sequence (the first
  /// and last calls that take it, counted in one run: 0 <= liveFirst <= liveLast <
  /// Program::sequenceLength; docs/model.md "Kernel sequences"); -1: a buffer of the
  /// invocation that uses it.
  int32_t liveFirst = -1;
  int32_t liveLast = -1;

  int64_t elementCount() const;
  int64_t byteSize() const { return elementCount() * prim::byteSize(dtype); }
};

/// One semaphore (an array of semaphores is flattened: one entry per element, with
/// its index). Every device has its own instance of each semaphore.
struct Semaphore {
  std::string name;
  std::vector<int64_t> index; ///< empty for a scalar semaphore
  SemKind kind = SemKind::Regular;
  ScopeId scope = kKernelScope;
  SourceLoc loc;
  /// As Buffer::kernel, liveFirst, liveLast.
  int32_t kernel = -1;
  int32_t liveFirst = -1;
  int32_t liveLast = -1;
};

/// A run_scoped block (allocation lifetime). Nested scopes name their parent.
struct Scope {
  std::string name; ///< e.g. "run_scoped@12"
  ScopeId parent = kKernelScope;
  SourceLoc loc;
};

/// The value a store writes, as a flat expression tree of arrays. Nodes refer to
/// earlier nodes by index; `root` is the last node evaluated. Every node has a shape
/// (row-major; empty: one element) and an element type. The operation is an op of the
/// catalogue (prim/Ops.def: its record says how the shape follows from the operands'
/// and what one element is; docs/model.md "Values"); element-wise operations broadcast
/// their operands as NumPy does (lowering gives each operand its broadcast shape's
/// rank; an operand of one element is broadcast).
struct ValueNode {
  using Op = prim::Op;
  /// Const (`constant`), Load (`region` on the storing device, row-major), Register (a
  /// value read from a semaphore), or a computing op: element-wise (Neg, Add, ..., Where:
  /// `lhs`, `rhs`, `third`), Dot, AsType, Bitcast, reductions (Sum, ReduceMax, ReduceMin
  /// over `axis`, -1: every axis), Reshape (to `shape`), Concatenate (`lhs` and `rhs`
  /// along `axis`), Split (`lhs`'s elements `begin` .. `end` along `axis`), Iota.
  Op op = Op::Const;
  double constant = 0; ///< Op::Const (broadcast to the node's shape)
  Region region;       ///< Op::Load (on the storing device)
  RegisterId reg = -1; ///< Op::Register (a value read from a semaphore)
  int32_t lhs = -1;    ///< operands: indices into ValueExpr::nodes
  int32_t rhs = -1;
  int32_t third = -1;         ///< Op::Where: the value where the condition is 0
  std::vector<int64_t> shape; ///< the node's shape (empty: one element)
  /// The node's element type (JAX's typing, prim::inferType; masks: unused). A computed
  /// node's elements are rounded to it (prim::roundTo); AsType, Bitcast: the type
  /// converted to.
  DType dtype = DType::F32;
  DType from = DType::F32; ///< Op::Bitcast: the operand's element type
  int32_t axis = -1;       ///< reductions: the axis of lhs reduced, -1 every axis; Concatenate,
                           ///< Split, Iota: the axis
  int64_t begin = 0;       ///< Op::Split: the first element along `axis`
  int64_t end = 0;         ///< Op::Split: one past the last
  bool approximate = true; ///< Op::Gelu
};
/// A Load region has the element count of its node's shape.
struct ValueExpr {
  std::vector<ValueNode> nodes;
  int32_t root = -1;
};

/// One DMA: created by one DmaStart event (a descriptor started in a loop gives
/// one Dma per start). A local copy has target == issuer and no send semaphore.
struct Dma {
  DmaId id = 0;
  DeviceId issuer = 0;
  DeviceId target = 0;
  Region src;                   ///< on the issuer
  Region dst;                   ///< on the target
  std::optional<SemId> sendSem; ///< on the issuer; none for a local copy
  SemId recvSem = 0;            ///< on the target
  int64_t bytes = 0;            ///< src byte count (== dst byte count)
  /// Semaphore units each chunk adds, per side (each of size Options::dmaChunks): send
  /// chunk c adds sendUnits[c] to the send semaphore, land chunk c adds landUnits[c] to
  /// the receive semaphore. A side whose semaphore is a DMA semaphore counts bytes: its
  /// units sum to bytes / Options::semUnit (model::chunkUnits). A side whose semaphore
  /// is regular adds exactly 1, with its last chunk: {0, ..., 0, 1} (docs/model.md
  /// "Regular semaphores on a DMA"). A local copy has no send semaphore; its sendUnits
  /// count bytes and add to nothing.
  std::vector<int64_t> sendUnits, landUnits;
  /// The chunks of each side (Options::dmaChunks; at least 1).
  int32_t chunks() const { return std::max<int32_t>(1, static_cast<int32_t>(landUnits.size())); }
  /// The units of one side: landUnits when `land`, else sendUnits.
  const std::vector<int64_t> &units(bool land) const { return land ? landUnits : sendUnits; }
  bool local = false;
  /// `start(priority = p)`: 0 or 1, and 1 only on a local copy (Mosaic); the DMA order
  /// `link` orders only DMAs of one priority (docs/model.md "DMA order").
  int32_t priority = 0;
  int32_t invocation = 0;
  SourceLoc loc;           ///< the start() call
  SourceLoc descriptorLoc; ///< where the descriptor was made
};

// ---- Events: the closed set of things a device does, in program order. ----

/// The device enters invocation `invocation` of the kernel (0-based).
struct KernelEnter {
  int32_t invocation = 0;
};
/// The device leaves the invocation: the exit rule is checked here.
struct KernelExit {
  int32_t invocation = 0;
};
/// All devices rendezvous: blocks until every device has reached its
/// DeviceBarrier of the same invocation (the implicit entry barrier).
struct DeviceBarrier {
  int32_t invocation = 0;
};
struct ScopeEnter {
  ScopeId scope = 0;
};
struct ScopeExit {
  ScopeId scope = 0;
};
/// dst := value, element-wise, on this device; reads `reads` and writes `dst`
/// atomically (the loads of a statement happen at its store).
struct Store {
  Region dst;
  ValueExpr value;
  std::vector<Region> reads; ///< every Load region of `value`, in node order
  bool accumulate = false;   ///< `+=` (then `value` already includes the load of dst)
};
struct DmaStart {
  DmaId dma = 0;
};
/// Why a wait exists; only for messages and traces.
enum class WaitOrigin { Wait, DmaWaitSend, DmaWaitRecv, DmaWaitLocal };
/// Blocks until this device's `sem` >= amount, then subtracts amount.
struct SemWait {
  SemId sem = 0;
  int64_t amount = 0; ///< in semaphore units
  WaitOrigin origin = WaitOrigin::Wait;
};
/// Adds `amount` to `sem` on device `target` (may be this device). Non-blocking.
struct Signal {
  DeviceId target = 0;
  SemId sem = 0;
  int64_t amount = 0;
};
/// Reads this device's `sem` into register `reg` (a racy observation, no effect).
struct SemRead {
  SemId sem = 0;
  RegisterId reg = 0;
};

using EventKind = std::variant<KernelEnter, KernelExit, DeviceBarrier, ScopeEnter, ScopeExit, Store,
                               DmaStart, SemWait, Signal, SemRead>;

struct Event {
  EventKind kind;
  SourceLoc loc;
  /// Where in the unrolled program this event is (invocation, grid point, loop
  /// variables), as an index into Program::contexts.
  ContextId context = 0;
};

/// One process: a device, or on a TensorCore mesh one (device, core) pair (docs/model.md
/// "TensorCores"); its device's mesh coordinates, its core and its events in program order.
/// Everything in the model indexed by a DeviceId (program counters, semaphores, DMA issuers
/// and targets, obligations) is indexed by the process.
struct Process {
  DeviceId device = 0; ///< the process id: device * cores + core
  std::vector<int64_t> coords;
  std::vector<Event> events;
  int32_t core = 0; ///< the core on its device (0 without a TensorCore mesh)
};

struct MeshAxis {
  std::string name;
  int64_t size = 1;
};

/// The order in which DMAs land (docs/model.md, "DMA order"): an assumption about the
/// hardware that the user chooses.
enum class DmaOrder {
  Any,  ///< DMAs land in any order (the default: nothing assumed)
  Link, ///< remote DMAs from one device to another land in the order they were started
};

/// "any" / "link" (the word of --dma-order).
const char *dmaOrderName(DmaOrder order);

/// Which cores the runtime's implicit entry barrier joins in a kernel over a TensorCore
/// mesh of more than one core (docs/model.md "TensorCores"): an assumption the user
/// chooses, the sources being silent.
enum class EntryBarrierCores {
  None, ///< it orders nothing: the kernel is checked without it (the default)
  All,  ///< every core of every device (JAX's TPU interpret mode)
};

/// "none" / "all" (the word of --entry-barrier-cores).
const char *entryBarrierCoresName(EntryBarrierCores cores);

/// Options that change the model (docs/model.md "Options").
struct Options {
  int32_t invocations = 1;           ///< back-to-back runs of the kernel on every device
  int32_t dmaChunks = 1;             ///< each DMA side progresses in this many steps
  int64_t semUnit = 1;               ///< bytes per DMA-semaphore unit
  bool entryBarrier = true;          ///< implicit device barrier at entry without collective_id
  DmaOrder dmaOrder = DmaOrder::Any; ///< --dma-order
  /// --entry-barrier-cores (only read for a TensorCore mesh of more than one core)
  EntryBarrierCores entryBarrierCores = EntryBarrierCores::None;
};

/// One call of a sequence of kernels: invocation i of the program runs
/// Program::calls[i] (docs/model.md "Kernel sequences").
struct Call {
  int32_t kernel = 0; ///< index into Program::kernels
  /// The kernel has the runtime's implicit entry barrier (no collective_id, no
  /// skip_device_barrier): a DeviceBarrier follows its KernelEnter when
  /// Options::entryBarrier is on.
  bool implicitBarrier = false;
  SourceLoc loc; ///< the call in the sequence
};

/// The lifetime window [first, last] of a resource (in invocations): a device may
/// receive units or bytes for it from its entry into invocation `first` to its exit
/// from invocation `last`.
struct Window {
  int32_t first = 0;
  int32_t last = 0;
};

/// One increment of a semaphore (Program::increments): a Signal event of device `who`
/// at pc `index`, or chunk `index` of DMA `who` on its send side (the issuer's send
/// semaphore) or its land side (the target's receive semaphore).
struct Increment {
  enum class Source { Signal, Send, Land };
  Source source = Source::Signal;
  int32_t who = 0;
  int32_t index = 0;
  int64_t units = 0;
};

struct Program {
  std::string file;           ///< source file name, for locations
  std::string kernel;         ///< kernel name (of a sequence: the names of its calls)
  std::vector<MeshAxis> mesh; ///< the axes of devices
  /// The TensorCore axis when the kernel runs over a TensorCore mesh (`tensorcore_mesh core
  /// = C`, pltpu.create_tensorcore_mesh): every device runs one process per core, process
  /// d * C + c being core c of device d (docs/model.md "TensorCores").
  std::optional<MeshAxis> cores;
  Options options;
  bool hasCollectiveId = false;
  std::vector<Buffer> buffers;
  std::vector<Semaphore> semaphores;
  std::vector<Scope> scopes;
  std::vector<Dma> dmas;
  std::vector<std::string> contexts; ///< e.g. "inv 0, grid (1, 0), i=2"
  /// Per context, its grid point (program ids; empty outside the grid: the kernel's entry
  /// and exit): what the lockstep argument of docs/parametric.md cuts the program at.
  std::vector<std::vector<int64_t>> contextGrid;
  int32_t registerCount = 0;      ///< per device
  std::vector<Process> processes; ///< index == DeviceId
  /// The tables (scalar-prefetch contents) the instance was built for, in declaration
  /// order: name and contents text, e.g. {"sizes", "[[0, 8], [8, 0]]"}. Their values are
  /// already in the events; a verdict holds for these contents only.
  std::vector<std::pair<std::string, std::string>> tables;
  /// A sequence of kernels: their names, and one call per invocation (empty for one
  /// kernel run `options.invocations` times).
  std::vector<std::string> kernels;
  std::vector<Call> calls;
  /// A sequence: the number of calls in one run of it; `calls` repeats them once per
  /// run (--invocations, docs/model.md "Kernel sequences"). 0 for one kernel.
  int32_t sequenceLength = 0;

  /// The number of runs of the sequence (calls.size() / sequenceLength), 1 for one kernel.
  int32_t sequenceRuns() const;

  /// The number of processes (devices, or (device, core) pairs on a TensorCore mesh).
  int32_t deviceCount() const { return static_cast<int32_t>(processes.size()); }
  /// Processes per device: the TensorCore axis's size, 1 without one.
  int32_t coresPerDevice() const { return cores ? static_cast<int32_t>(cores->size) : 1; }
  /// Whether process p's accesses to buffer b touch one instance shared by the cores of
  /// its device: an `hbm` / `any` buffer on a TensorCore mesh of more than one core; every
  /// other buffer has one instance per process (docs/model.md "TensorCores").
  bool sharedByCores(BufferId b) const;
  /// The memory instance of buffer b that process p touches, named by a process: the
  /// first process of p's device for a buffer shared by the cores, else p itself. Two
  /// accesses can conflict only on the same instance.
  DeviceId memoryOf(DeviceId p, BufferId b) const;
  /// Whether a kernel with the runtime's implicit entry barrier (no collective_id, no
  /// skip_device_barrier) gets its DeviceBarrier: Options::entryBarrier, and on a
  /// TensorCore mesh of more than one core Options::entryBarrierCores == All
  /// (docs/model.md "TensorCores": which cores the barrier joins is the user's assumption).
  bool implicitBarrierOn() const {
    return options.entryBarrier &&
           (coresPerDevice() <= 1 || options.entryBarrierCores == EntryBarrierCores::All);
  }
  /// "device 3", or "device 1 core 0" on a TensorCore mesh (report::processName).
  std::string processName(DeviceId p) const;
  /// Where buffer b's instance of process p lives, for messages: processName, or the
  /// device alone ("device 1") for a buffer its cores share.
  std::string memoryName(DeviceId p, BufferId b) const;
  /// The semaphore for the kernel's barrier, if it has a collective_id (in a
  /// sequence: the first kernel's with one; each such kernel has its own).
  std::optional<SemId> barrierSemaphore() const;
  bool isBarrier(SemId sem) const { return semaphores[sem].kind == SemKind::Barrier; }
  /// Whether a DMA side whose semaphore is `sem` counts completion, not bytes: `sem` is
  /// regular, and the side adds exactly 1 to it with its last chunk (Dma::sendUnits;
  /// docs/model.md "Regular semaphores on a DMA"). A DMA semaphore counts bytes.
  bool countsCompletion(SemId sem) const { return semaphores[sem].kind == SemKind::Regular; }
  /// Where semaphore `sem` / buffer `b` can take units or bytes that invocation
  /// `invocation` sends it: [invocation, invocation], or an array's calls in the run
  /// of the sequence that `invocation` belongs to.
  Window semWindow(SemId sem, int32_t invocation) const;
  Window bufferWindow(BufferId b, int32_t invocation) const;
  /// Whether device-side exits of invocation i check semaphore `sem` (the exit rule):
  /// every non-barrier semaphore for one kernel; in a sequence the kernel's own ones
  /// and the arrays whose last call (in a run) is i's call.
  bool exitChecks(SemId sem, int32_t invocation) const;
  /// "name" or "name[1, 2]".
  std::string semName(SemId sem) const;
  /// "buf[0:4, 2]" in the buffer's own dimensions.
  std::string regionName(const Region &region) const;
  /// Who adds units to each semaphore of each device: the one definition that the
  /// static pre-check (incrementTotals), explore's reduction (semantics::Machine), the
  /// static order (semantics::MustOrder) and the SMT encoding read. Indexed [device *
  /// semaphores.size() + sem]; in each, the signals in program order (device by device),
  /// then the DMAs' chunks (DMA by DMA, chunk by chunk, the send side's before the land
  /// side's). Every DMA is listed, started or not; amounts and units may be 0.
  std::vector<std::vector<Increment>> increments() const;
  /// The units that can ever reach each semaphore of each device, whether or not the
  /// events that add them run: the sum of increments() (negative amounts count 0),
  /// saturating at INT64_MAX. The one tally of the static pre-check, the step table's
  /// bound (semantics::Machine::semBound) and the findings' shapes.
  std::vector<int64_t> incrementTotals() const;
};

/// The totals of `increments` (what Program::increments gave): per entry, the sum of
/// its units (negative amounts count 0), saturating at INT64_MAX.
std::vector<int64_t> incrementTotals(const std::vector<std::vector<Increment>> &increments);

} // namespace dkv::model
