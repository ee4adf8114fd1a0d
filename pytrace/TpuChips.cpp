// The TPU generations table (docs/python.md "TPU generations and the platform"). The
// facts are JAX's own, as its public `jax/_src/tpu_info.py` states them (JAX cec06d116c05):
// the `ChipVersion` table (physical TensorCores per chip, lite chips, megacore support),
// `chip_version_from_device_kind` (the device kinds), the figures of each `TpuInfo`
// (`_get_tpu_info_impl`: lanes, memory capacities, bandwidth, ...) and its `SparseCoreInfo`
// (v5p: 4 SparseCores, v6e and 7x: 2, none listed for the others). A chip that
// supports megacore (v4, v5p) is one JAX device of 2 TensorCores by default; the others
// are one TensorCore per device (the `core_map` guide: "every JAX device may contain 2
// TensorCores (v4, v5p)"). DMAs signalling regular semaphores are a v6-and-later feature
// (JAX's tests/pallas/tpu_pallas_distributed_test.py skips its test of them before v6).
#include "pytrace/TpuChips.h"

namespace dkv::pytrace {

namespace {

// The figures are `_get_tpu_info_impl`'s, its expressions evaluated as Python does
// (`int(7.16e11 // 2)`: a float floored, then an int; the divisor is the physical
// TensorCores per chip).
const TpuChip kChips[] = {
    // name, generation, variant, device kind, cores/device, cores/chip, SparseCores, lite,
    // DMAs signalling regular semaphores,
    // {lanes, sublanes, MXU columns, MXUs, accumulators, VMEM, CMEM, SMEM, HBM bytes,
    //  HBM bandwidth, bf16 / int8 / fp8 / int4 ops per second},
    // {SparseCore subcores, lanes, VMEM bytes, DMA granule bytes}
    {"v2",
     2,
     "",
     "TPU v2",
     1,
     2,
     0,
     false,
     false,
     {128, 8, 128, 1, 0, 16777216, 0, 16384, 8000000000, 358000000000, 23000000000000, 0, 0, 0},
     {0, 0, 0, 0}},
    {"v3",
     3,
     "",
     "TPU v3",
     1,
     2,
     0,
     false,
     false,
     {128, 8, 128, 2, 0, 16777216, 0, 16384, 17200000000, 412500000000, 70000000000000, 0, 0, 0},
     {0, 0, 0, 0}},
    {"v4",
     4,
     "",
     "TPU v4",
     2,
     2,
     0,
     false,
     false,
     {128, 8, 128, 4, 0, 16777216, 67000000, 1048576, 17200000000, 615000000000, 137500000000000, 0,
      0, 0},
     {0, 0, 0, 0}},
    {"v5e",
     5,
     "e",
     "TPU v5 lite",
     1,
     1,
     0,
     true,
     false,
     {128, 8, 128, 4, 0, 134217728, 0, 1048576, 17200000000, 820000000000, 197000000000000,
      394000000000000, 0, 788000000000000},
     {0, 0, 0, 0}},
    {"v5p",
     5,
     "p",
     "TPU v5",
     2,
     2,
     4,
     false,
     false,
     {128, 8, 128, 4, 0, 67108864, 0, 1048576, 51500000000, 1230000000000, 229500000000000,
      459000000000000, 0, 920000000000000},
     {16, 8, 524288, 32}},
    {"v6e",
     6,
     "e",
     "TPU v6 lite",
     1,
     1,
     2,
     true,
     true,
     {128, 8, 256, 2, 0, 134217728, 0, 1048576, 34400000000, 1640000000000, 920000000000000,
      1840000000000000, 920000000000000, 3680000000000000},
     {16, 8, 262144, 32}},
    {"7x",
     7,
     "x",
     "TPU7x",
     1,
     2,
     2,
     false,
     true,
     {128, 8, 256, 2, 128, 67108864, 0, 1048576, 103000000000, 3700000000000, 1155000000000000, 0,
      2300000000000000, 0},
     {16, 16, 524288, 32}},
};

struct Alias {
  const char *alias, *name;
};
const Alias kAliases[] = {{"v7x", "7x"}};

} // namespace

const TpuChip *findTpuChip(std::string_view name) {
  for (const Alias &a : kAliases)
    if (name == a.alias)
      name = a.name;
  for (const TpuChip &c : kChips)
    if (name == c.name)
      return &c;
  return nullptr;
}

std::string tpuChipNames() {
  std::string out;
  for (const TpuChip &c : kChips)
    out += (out.empty() ? "" : ", ") + std::string(c.name);
  return out + "/v7x";
}

} // namespace dkv::pytrace
