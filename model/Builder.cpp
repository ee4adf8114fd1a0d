// Building a valid model::Program.
#include "model/Builder.h"

#include "support/IntArith.h"
#include "support/Invariant.h"

#include <fmt/format.h>

namespace dkv::model {

namespace {

BuildError tooLarge(std::string message) {
  return BuildError{"instance-too-large", std::move(message), /*fatal=*/true};
}

} // namespace

Builder::Builder(std::string file, std::string kernel, const Options &options, bool hasCollectiveId,
                 const BuildLimits &limits)
    : limits_(limits) {
  program_.file = std::move(file);
  program_.kernel = std::move(kernel);
  program_.options = options;
  program_.hasCollectiveId = hasCollectiveId;
}

std::optional<BuildError> Builder::checkOptions() const {
  const Options &o = program_.options;
  if (o.semUnit < 1 || o.dmaChunks < 1 || o.invocations < 1)
    return BuildError{"bad-option", "invocations, dma chunks and semaphore unit must be >= 1"};
  return std::nullopt;
}

std::optional<BuildError> Builder::setMesh(std::vector<MeshAxis> axes,
                                           std::optional<MeshAxis> cores) {
  int64_t devices = 1;
  if (cores)
    axes.push_back(*cores); // counted as the last axis: process = device * C + core
  for (const MeshAxis &axis : axes) {
    DKV_INVARIANT(axis.size >= 1, "a mesh axis has at least one device");
    // Checked after every axis, so the product stays below maxDevices^2.
    devices *= axis.size;
    if (devices > limits_.maxDevices)
      return tooLarge(fmt::format("the mesh has more than {} devices", limits_.maxDevices));
  }
  if (cores)
    axes.pop_back();
  program_.mesh = std::move(axes);
  program_.cores = std::move(cores);
  devices_ = devices;
  program_.processes.reserve(static_cast<size_t>(devices));
  return std::nullopt;
}

Built<BufferId> Builder::addBuffer(Buffer buffer) {
  // Every device holds every buffer: bound the total before anything (the executor's
  // memory, a region's element or byte count) can grow with it.
  support::IntResult elements = support::checkedProduct(buffer.shape);
  if (!elements.ok() || __builtin_add_overflow(totalElements_, elements.value, &totalElements_) ||
      totalElements_ > limits_.maxElements / devices_)
    return tooLarge(fmt::format("the buffers have more than {} elements over all {} device(s) "
                                "(at '{}', {}); use smaller shapes or fewer devices",
                                limits_.maxElements, devices_, buffer.name,
                                elements.ok() ? fmt::format("{} elements", elements.value)
                                              : std::string("more than 2^63 elements")));
  auto id = static_cast<BufferId>(program_.buffers.size());
  program_.buffers.push_back(std::move(buffer));
  return id;
}

Built<SemId> Builder::addSemaphores(const std::string &name, const std::vector<int64_t> &dims,
                                    SemKind kind, ScopeId scope, SourceLoc loc) {
  support::IntResult product = support::checkedProduct(dims);
  if (!product.ok() || __builtin_add_overflow(totalSems_, product.value, &totalSems_) ||
      totalSems_ > limits_.maxSemaphores / devices_)
    return tooLarge(fmt::format("the instance has more than {} semaphores over all {} "
                                "device(s) (at '{}', {}); use smaller semaphore arrays or fewer "
                                "devices",
                                limits_.maxSemaphores, devices_, name,
                                product.ok() ? fmt::format("{} semaphores", product.value)
                                             : std::string("more than 2^63 semaphores")));
  auto first = static_cast<SemId>(program_.semaphores.size());
  std::vector<int64_t> index(dims.size(), 0);
  for (int64_t i = 0; i < product.value; ++i) {
    program_.semaphores.push_back({name, index, kind, scope, loc});
    for (size_t k = dims.size(); k-- > 0;) {
      if (++index[k] < dims[k])
        break;
      index[k] = 0;
    }
  }
  return first;
}

SemId Builder::addBarrierSemaphore(SourceLoc loc, const std::string &name) {
  auto id = static_cast<SemId>(program_.semaphores.size());
  program_.semaphores.push_back({name, {}, SemKind::Barrier, kKernelScope, loc});
  return id;
}

void Builder::setSequence(std::vector<std::string> kernels, std::vector<Call> calls, int32_t runs) {
  program_.kernels = std::move(kernels);
  program_.sequenceLength = static_cast<int32_t>(calls.size());
  program_.calls.clear();
  for (int32_t r = 0; r < runs; ++r)
    program_.calls.insert(program_.calls.end(), calls.begin(), calls.end());
  program_.options.invocations = static_cast<int32_t>(program_.calls.size());
}

void Builder::setBufferOwner(BufferId b, int32_t kernel, int32_t liveFirst, int32_t liveLast) {
  Buffer &buf = program_.buffers[b];
  buf.kernel = kernel;
  buf.liveFirst = liveFirst;
  buf.liveLast = liveLast;
}

void Builder::setSemOwner(SemId s, int32_t kernel, int32_t liveFirst, int32_t liveLast) {
  Semaphore &sem = program_.semaphores[s];
  sem.kernel = kernel;
  sem.liveFirst = liveFirst;
  sem.liveLast = liveLast;
}

ScopeId Builder::addScope(std::string name, ScopeId parent, SourceLoc loc) {
  auto id = static_cast<ScopeId>(program_.scopes.size());
  program_.scopes.push_back({std::move(name), parent, loc});
  return id;
}

SemId Builder::element(SemId first, const std::vector<int64_t> &dims,
                       const std::vector<int64_t> &index) {
  DKV_INVARIANT(index.size() == dims.size(), "one index per semaphore array dimension");
  int64_t offset = 0;
  for (size_t k = 0; k < dims.size(); ++k) {
    DKV_INVARIANT(index[k] >= 0 && index[k] < dims[k], "semaphore index in range");
    offset = offset * dims[k] + index[k];
  }
  return first + static_cast<SemId>(offset);
}

RegisterId Builder::addRegister() { return program_.registerCount++; }

const std::vector<int64_t> &Builder::beginDevice(DeviceId device) {
  DKV_INVARIANT(device == program_.deviceCount() && device < devices_,
                "devices begin in order, once each");
  const int32_t cores = program_.coresPerDevice();
  std::vector<int64_t> coords(program_.mesh.size(), 0);
  int64_t rest = device / cores;
  for (size_t a = program_.mesh.size(); a-- > 0;) {
    coords[a] = rest % program_.mesh[a].size;
    rest /= program_.mesh[a].size;
  }
  // No reallocation: setMesh reserved every process.
  program_.processes.push_back({device, std::move(coords), {}, device % cores});
  return program_.processes.back().coords;
}

ContextId Builder::context(const std::string &text, const std::vector<int64_t> &grid) {
  auto [it, inserted] =
      contextIds_.try_emplace(text, static_cast<ContextId>(program_.contexts.size()));
  if (inserted) {
    program_.contexts.push_back(text);
    program_.contextGrid.push_back(grid);
  }
  return it->second;
}

std::optional<BuildError> Builder::spendIterations(int64_t count) {
  if (support::stopRequested(limits_.stop))
    return tooLarge(limits_.stop->reason());
  if (__builtin_add_overflow(iterationCount_, count, &iterationCount_) ||
      iterationCount_ > limits_.maxIterations)
    return tooLarge(fmt::format("the instance has more than {} grid points and loop "
                                "iterations over all devices; use fewer devices, grid "
                                "steps or loop iterations",
                                limits_.maxIterations));
  return std::nullopt;
}

std::optional<BuildError> Builder::append(EventKind kind, SourceLoc loc, ContextId context) {
  DKV_INVARIANT(!program_.processes.empty(), "an event needs a device: call beginDevice");
  if (support::stopRequested(limits_.stop))
    return tooLarge(limits_.stop->reason());
  if (++eventCount_ > limits_.maxEvents)
    return tooLarge(fmt::format("the instance has more than {} events; use fewer devices, grid "
                                "steps or loop iterations",
                                limits_.maxEvents));
  program_.processes.back().events.push_back(Event{std::move(kind), loc, context});
  return std::nullopt;
}

std::optional<BuildError> Builder::enterKernel(int32_t invocation, SourceLoc loc,
                                               ContextId context) {
  if (auto error = append(KernelEnter{invocation}, loc, context))
    return error;
  // docs/model.md "Entry barrier": without a barrier semaphore the runtime keeps a
  // kernel from DMAing into a peer that has not started it.
  // On a TensorCore mesh it joins every core of every device, and only when the user
  // assumes so (docs/model.md "TensorCores"); Program::implicitBarrierOn.
  const bool barrier = program_.calls.empty()
                           ? !program_.hasCollectiveId && program_.implicitBarrierOn()
                           : invocation < static_cast<int32_t>(program_.calls.size()) &&
                                 program_.calls[invocation].implicitBarrier &&
                                 program_.implicitBarrierOn();
  if (barrier)
    return append(DeviceBarrier{invocation}, loc, context);
  return std::nullopt;
}

std::optional<BuildError> Builder::exitKernel(int32_t invocation, SourceLoc loc,
                                              ContextId context) {
  return append(KernelExit{invocation}, loc, context);
}

std::optional<BuildError> Builder::checkDmaBytes(int64_t bytes) const {
  if (bytes % program_.options.semUnit != 0)
    return BuildError{"dma-size-unit",
                      fmt::format("the DMA moves {} bytes, not a multiple of the semaphore unit {}",
                                  bytes, program_.options.semUnit)};
  return std::nullopt;
}

std::optional<BuildError> Builder::startDma(const DmaDescriptor &d, int32_t invocation,
                                            SourceLoc loc, ContextId context, int32_t priority) {
  DKV_INVARIANT(d.bytes % program_.options.semUnit == 0, "checkDmaBytes accepted the descriptor");
  // Mosaic's EnqueueDMAOp::verify (jaxlib/mosaic/dialect/tpu/tpu_ops.cc).
  if (priority != 0 && priority != 1)
    return BuildError{"invalid-priority",
                      fmt::format("DMA priority {}: Mosaic supports priority 0 or 1", priority)};
  if (priority != 0 && d.remote)
    return BuildError{"invalid-priority", "priority 1 on a remote DMA: Mosaic supports a "
                                          "non-zero priority only on local DMAs"};
  Dma dma;
  dma.id = static_cast<DmaId>(program_.dmas.size());
  dma.issuer = program_.processes.back().device;
  dma.target = d.target;
  dma.src = d.src;
  dma.dst = d.dst;
  dma.sendSem = d.sendSem;
  dma.recvSem = d.recvSem;
  dma.bytes = d.bytes;
  dma.local = !d.remote;
  dma.priority = priority;
  dma.invocation = invocation;
  dma.loc = loc;
  dma.descriptorLoc = d.loc;
  // Each side counts its own way (docs/model.md "Regular semaphores on a DMA"): bytes on
  // a DMA semaphore, 1 on completion on a regular one.
  const int64_t units = d.bytes / program_.options.semUnit;
  const int32_t chunks = program_.options.dmaChunks;
  auto side = [&](std::optional<SemId> sem) {
    return sem && program_.countsCompletion(*sem) ? completionUnits(chunks)
                                                  : chunkUnits(units, chunks);
  };
  dma.sendUnits = side(d.sendSem);
  dma.landUnits = side(d.recvSem);
  if (auto error = append(DmaStart{dma.id}, loc, context))
    return error;
  program_.dmas.push_back(std::move(dma));
  return std::nullopt;
}

std::optional<BuildError> Builder::waitDma(const DmaDescriptor &d, DmaWait which, SourceLoc loc,
                                           ContextId context) {
  int64_t units = d.bytes / program_.options.semUnit;
  // A regular semaphore on a DMA gets 1 on completion, not the byte count a descriptor
  // wait takes (docs/model.md "Regular semaphores on a DMA"); sema refuses such waits
  // where it knows the descriptor, this catches a descriptor variable.
  const bool regular =
      program_.countsCompletion(d.recvSem) || (d.sendSem && program_.countsCompletion(*d.sendSem));
  if (regular)
    return BuildError{"sem-kind", regularDescriptorWaitMessage(which)};
  if (!d.remote) {
    if (which != DmaWait::Both)
      return BuildError{
          "local-copy-wait",
          "a local copy has one semaphore: use wait(), not wait_send() or wait_recv()"};
    return append(SemWait{d.recvSem, units, WaitOrigin::DmaWaitLocal}, loc, context);
  }
  DKV_INVARIANT(d.sendSem.has_value(), "a remote descriptor has a send semaphore");
  if (which != DmaWait::Recv)
    if (auto error = append(SemWait{*d.sendSem, units, WaitOrigin::DmaWaitSend}, loc, context))
      return error;
  if (which != DmaWait::Send)
    return append(SemWait{d.recvSem, units, WaitOrigin::DmaWaitRecv}, loc, context);
  return std::nullopt;
}

std::vector<int64_t> chunkUnits(int64_t units, int32_t chunks) {
  // docs/model.md "Semaphore units and chunks": chunk c brings bytes [c B / K,
  // (c + 1) B / K) and the units whose bytes are then all in, floor((c + 1) U / K) -
  // floor(c U / K), computed as U / K + the same of U mod K (no product of U).
  DKV_INVARIANT(units >= 0 && chunks >= 1, "units >= 0, chunks >= 1");
  const int64_t q = units / chunks, r = units % chunks;
  std::vector<int64_t> out;
  out.reserve(static_cast<size_t>(chunks));
  for (int64_t c = 0; c < chunks; ++c)
    out.push_back(q + (c + 1) * r / chunks - c * r / chunks);
  return out;
}

std::string regularDescriptorWaitMessage(DmaWait which) {
  const char *method = which == DmaWait::Send   ? "wait_send"
                       : which == DmaWait::Recv ? "wait_recv"
                                                : "wait";
  return fmt::format("cannot {}() a DMA whose semaphores are regular (sem): such a DMA adds 1 to "
                     "each when its side completes, not its byte count; wait(sem, 1) on the "
                     "semaphore instead",
                     method);
}

std::vector<int64_t> completionUnits(int32_t chunks) {
  DKV_INVARIANT(chunks >= 1, "chunks >= 1");
  std::vector<int64_t> out(static_cast<size_t>(chunks), 0);
  out.back() = 1;
  return out;
}

Program Builder::finish() {
  DKV_INVARIANT(program_.deviceCount() == devices_, "every device began");
  return std::move(program_);
}

} // namespace dkv::model
