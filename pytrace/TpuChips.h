// The facts of TPU generations that Pallas kernels and their tests ask JAX for
// (`jax.devices()[0].num_cores`, `pltpu.get_tpu_info()`, the default core count of
// `pltpu.TensorCoreMesh`, `jtu.is_device_tpu(...)`): a table, one row per chip, chosen by
// `--tpu NAME` or `# dkv: tpu NAME` (docs/python.md "TPU generations and the platform").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace dkv::pytrace {

struct TpuChip {
  const char *name;       ///< `--tpu NAME`: "v5e", "v5p", ...
  int64_t generation;     ///< TpuInfo.generation; jtu.is_device_tpu's version
  const char *variant;    ///< jtu.is_device_tpu's variant ("e", "p", "x"; "" for none)
  const char *deviceKind; ///< jax.Device.device_kind
  /// TensorCores per JAX device (`Device.num_cores`, `TpuInfo.num_cores`): 2 on a chip
  /// in megacore mode (JAX's default where the chip supports it), else 1.
  int64_t coresPerDevice;
  int64_t physicalCores; ///< TensorCores per chip
  int64_t sparseCores;   ///< TpuInfo.sparse_core.num_cores; 0: sparse_core is None
  bool lite;             ///< TpuInfo.is_lite
  /// A DMA may signal regular semaphores (pltpu.SemaphoreType.REGULAR), incremented by 1
  /// when its side completes: TPU v6 and later (JAX's own tests skip on earlier chips,
  /// "Regular semaphore DMA requires TPU v6+").
  bool regularSemaphoreDma;
  /// TpuInfo's figures, per TensorCore, as JAX states them (tpu_info.py
  /// `_get_tpu_info_impl`; the same in megacore and split mode).
  struct Figures {
    int64_t numLanes, numSublanes, mxuColumnSize, numMxus, numAccumulators;
    int64_t vmemCapacityBytes, cmemCapacityBytes, smemCapacityBytes, hbmCapacityBytes;
    int64_t memBwBytesPerSecond, bf16OpsPerSecond, int8OpsPerSecond, fp8OpsPerSecond,
        int4OpsPerSecond;
  } figures;
  /// TpuInfo.sparse_core's figures where it has one (sparseCores > 0).
  struct SparseFigures {
    int64_t numSubcores, numLanes, vmemCapacityBytes, dmaGranuleSizeBytes;
  } sparse;
};

/// The row named `name` (or one of its aliases), or null.
const TpuChip *findTpuChip(std::string_view name);
/// The names `--tpu` accepts, for messages: "v2, v3, v4, ...".
std::string tpuChipNames();

} // namespace dkv::pytrace
