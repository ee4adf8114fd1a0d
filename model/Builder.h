// Building a valid model::Program: the rules of docs/model.md that every frontend follows.
#pragma once

#include "model/Model.h"
#include "support/Stop.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace dkv::model {

/// Limits that keep the instances of pathological inputs bounded.
struct BuildLimits {
  /// Total events over all devices; a larger instance is an `instance-too-large` error.
  int64_t maxEvents = 4'000'000;
  int64_t maxDevices = 4096;
  /// Grid points plus loop iterations over all devices and invocations (a loop whose
  /// body makes no event still takes time to unroll).
  int64_t maxIterations = 4'000'000;
  /// Buffer elements over all devices (the executor stores every element of every
  /// buffer of every device).
  int64_t maxElements = int64_t{1} << 26;
  /// Semaphores over all devices.
  int64_t maxSemaphores = int64_t{1} << 22;
  /// The run's stop request (its time limit, memory ceiling, a signal: support/Stop.h),
  /// polled at every event and loop iteration: once requested, building stops as at a
  /// limit (a fatal BuildError). The caller tells the two apart by the token. May be
  /// null.
  const support::StopToken *stop = nullptr;
};

/// A rule of the model that the input breaks. The frontend reports it as an error
/// diagnostic with `id` and `message` (docs/diagnostics.md) at the construct it built
/// the failing part from.
struct BuildError {
  std::string id;
  std::string message;
  /// The instance exceeds a limit (`instance-too-large`): building cannot go on.
  bool fatal = false;
};

/// A value or the BuildError that prevented it.
template <class T> class Built {
public:
  Built(T value) : value_(std::move(value)) {}
  Built(BuildError error) : error_(std::move(error)) {}
  bool ok() const { return value_.has_value(); }
  /// Precondition: ok().
  const T &operator*() const { return *value_; }
  /// Precondition: !ok().
  const BuildError &error() const { return *error_; }

private:
  std::optional<T> value_;
  std::optional<BuildError> error_;
};

/// An evaluated DMA descriptor (a Pallas `make_async_copy` / `make_async_remote_copy`):
/// everything `start()` and the waits on it need. Fixed when the descriptor is made.
struct DmaDescriptor {
  bool remote = false;
  Region src; ///< on the issuer
  Region dst; ///< on the target
  DeviceId target = 0;
  std::optional<SemId> sendSem; ///< remote only
  SemId recvSem = 0;            ///< the one semaphore of a local copy
  int64_t bytes = 0;            ///< checked with Builder::checkDmaBytes
  SourceLoc loc;                ///< where the descriptor was made
};

/// Which wait on a descriptor: `wait()`, `wait_send()`, `wait_recv()`.
enum class DmaWait { Both, Send, Recv };

/// Builds one Program. Use in this order: setMesh (and checkOptions), the
/// declarations (buffers, semaphores, scopes; the same on every device), then for each
/// device 0..N-1 in turn beginDevice and its events in program order, and finish().
/// Every method that can break a rule of the model returns the BuildError instead of
/// building something invalid; nothing here throws or reports diagnostics itself.
class Builder {
public:
  Builder(std::string file, std::string kernel, const Options &options, bool hasCollectiveId,
          const BuildLimits &limits = {});

  /// `bad-option` unless invocations, DMA chunks and the semaphore unit are >= 1.
  std::optional<BuildError> checkOptions() const;
  /// Sets the mesh (axes of devices in row-major order) and, for a kernel over a
  /// TensorCore mesh, its core axis: then every device has one process per core, process
  /// d * C + c for core c of device d (docs/model.md "TensorCores"). Fatal
  /// `instance-too-large` when there are more than BuildLimits::maxDevices processes.
  std::optional<BuildError> setMesh(std::vector<MeshAxis> axes,
                                    std::optional<MeshAxis> cores = std::nullopt);
  /// The number of processes (devices times cores).
  int64_t deviceCount() const { return devices_; }

  // ---- Declarations: the same on every device. ----

  /// Adds a buffer; fatal `instance-too-large` when the buffers of all devices would
  /// exceed BuildLimits::maxElements.
  Built<BufferId> addBuffer(Buffer buffer);
  /// Adds the semaphore array `name` with dimensions `dims` (empty: one semaphore),
  /// flattened row-major into one semaphore per element; returns the id of the first
  /// (see element()). Fatal `instance-too-large` past BuildLimits::maxSemaphores.
  Built<SemId> addSemaphores(const std::string &name, const std::vector<int64_t> &dims,
                             SemKind kind, ScopeId scope, SourceLoc loc);
  /// The barrier semaphore of a kernel with a collective_id (named `name`).
  SemId addBarrierSemaphore(SourceLoc loc, const std::string &name = "barrier");
  /// Makes the program a sequence of kernels (docs/model.md "Kernel sequences"):
  /// `kernels` named, run `runs` times in a row (--invocations): invocation r * C + i
  /// runs `calls[i]` (C = calls.size()); sets Options::invocations to runs * C. Call
  /// before the first beginDevice. Then buffers and semaphores carry their kernel or
  /// their window within one run (Buffer::kernel, liveFirst, liveLast).
  void setSequence(std::vector<std::string> kernels, std::vector<Call> calls, int32_t runs);
  /// Sets the kernel or the window of buffers and semaphores added already.
  void setBufferOwner(BufferId b, int32_t kernel, int32_t liveFirst, int32_t liveLast);
  void setSemOwner(SemId s, int32_t kernel, int32_t liveFirst, int32_t liveLast);
  ScopeId addScope(std::string name, ScopeId parent, SourceLoc loc);
  /// The id of element `index` of the array added as `first` with `dims`.
  /// Precondition: index has one in-range entry per dimension.
  static SemId element(SemId first, const std::vector<int64_t> &dims,
                       const std::vector<int64_t> &index);
  /// A new register of every device, for a SemRead.
  RegisterId addRegister();
  /// Records that the instance holds for table `name` with `contents` (Program::tables).
  void addTable(std::string name, std::string contents) {
    program_.tables.emplace_back(std::move(name), std::move(contents));
  }

  // ---- Per device, in program order. ----

  /// Starts process `device` (the next one: 0, 1, ...); returns the mesh coordinates of
  /// its device (the row-major de-linearisation of device / cores); its core is
  /// device % cores (Process::core).
  const std::vector<int64_t> &beginDevice(DeviceId device);
  /// The id of a context text ("inv 0, grid (1, 0), i=2"), added on first use.
  ContextId context(const std::string &text, const std::vector<int64_t> &grid = {});
  /// Counts `count` grid points or loop iterations against BuildLimits::maxIterations
  /// (fatal `instance-too-large`). Call before unrolling them.
  std::optional<BuildError> spendIterations(int64_t count);

  /// Each appending method below fails only with the fatal `instance-too-large` of
  /// BuildLimits::maxEvents, unless it says otherwise.
  std::optional<BuildError> append(EventKind kind, SourceLoc loc, ContextId context);
  /// KernelEnter{invocation}, then the entry barrier DeviceBarrier{invocation} if the
  /// kernel has no collective_id and Options::entryBarrier is on (in a sequence: if
  /// the call's Call::implicitBarrier is set and Options::entryBarrier is on).
  std::optional<BuildError> enterKernel(int32_t invocation, SourceLoc loc, ContextId context);
  std::optional<BuildError> exitKernel(int32_t invocation, SourceLoc loc, ContextId context);

  /// `dma-size-unit` unless `bytes` is a multiple of Options::semUnit. Check every
  /// descriptor with it when it is made.
  std::optional<BuildError> checkDmaBytes(int64_t bytes) const;
  /// A new Dma for one start() of `d` on the current device in `invocation`, with its
  /// chunk units (docs/model.md "Semaphore units and chunks"), and its DmaStart event.
  /// `priority` is Pallas' `start(priority=...)`: 0 or 1, and 1 only on a local copy
  /// (`invalid-priority` otherwise, as Mosaic's verifier).
  std::optional<BuildError> startDma(const DmaDescriptor &d, int32_t invocation, SourceLoc loc,
                                     ContextId context, int32_t priority = 0);
  /// The SemWaits of a wait on `d` (docs/model.md "Waits on a descriptor"): wait() on a
  /// remote copy waits for the send semaphore, then the receive semaphore; on a local
  /// copy for its one semaphore. `local-copy-wait` for wait_send() or wait_recv() on a
  /// local copy.
  std::optional<BuildError> waitDma(const DmaDescriptor &d, DmaWait which, SourceLoc loc,
                                    ContextId context);

  /// The program so far (for names, shapes and options while building).
  const Program &program() const { return program_; }
  /// The built program. Precondition: every device began and no fatal error occurred.
  Program finish();

private:
  BuildLimits limits_;
  Program program_;
  int64_t devices_ = 1;
  int64_t eventCount_ = 0;
  int64_t iterationCount_ = 0;
  int64_t totalElements_ = 0; ///< per device
  int64_t totalSems_ = 0;     ///< per device
  std::map<std::string, ContextId> contextIds_;
};

/// The semaphore units each of a DMA's `chunks` chunks carries, for a DMA of `units`
/// units (docs/model.md "Semaphore units and chunks"): chunk c carries the units whose
/// bytes have all arrived with it, floor((c + 1) U / K) - floor(c U / K). They sum to
/// `units`, and the last chunk carries at least one when `units` > 0: a DMA's last unit
/// arrives with its last byte, so no wait for its units returns while it is open.
/// Preconditions: units >= 0, chunks >= 1.
std::vector<int64_t> chunkUnits(int64_t units, int32_t chunks);
/// The units a side whose semaphore is regular adds over `chunks` chunks: 1 with the
/// last chunk, when the side completes, whatever the byte count ({0, ..., 0, 1};
/// docs/model.md "Regular semaphores on a DMA"). Precondition: chunks >= 1.
std::vector<int64_t> completionUnits(int32_t chunks);
/// Why waiting (`which`) a DMA descriptor whose semaphores are regular is refused (such a
/// DMA adds 1, not its byte count): Builder::waitDma's error.
std::string regularDescriptorWaitMessage(DmaWait which);

} // namespace dkv::model
