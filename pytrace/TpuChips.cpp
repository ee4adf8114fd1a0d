// The TPU generations table (docs/python.md "TPU generations and the platform"). The
// facts are JAX's own, as its public `jax/_src/tpu_info.py` states them (JAX cec06d116c05):
// the `ChipVersion` table (physical TensorCores per chip, lite chips, megacore support),
// `chip_version_from_device_kind` (the device kinds), and the `SparseCoreInfo` of each
// `TpuInfo` (v5p: 4 SparseCores, v6e and 7x: 2, none listed for the others). A chip that
// supports megacore (v4, v5p) is one JAX device of 2 TensorCores by default; the others
// are one TensorCore per device (the `core_map` guide: "every JAX device may contain 2
// TensorCores (v4, v5p)"). DMAs signalling regular semaphores are a v6-and-later feature
// (JAX's tests/pallas/tpu_pallas_distributed_test.py skips its test of them before v6).
#include "pytrace/TpuChips.h"

namespace dkv::pytrace {

namespace {

const TpuChip kChips[] = {
    // name, generation, variant, device kind, cores/device, cores/chip, SparseCores, lite,
    // DMAs signalling regular semaphores
    {"v2", 2, "", "TPU v2", 1, 2, 0, false, false},
    {"v3", 3, "", "TPU v3", 1, 2, 0, false, false},
    {"v4", 4, "", "TPU v4", 2, 2, 0, false, false},
    {"v5e", 5, "e", "TPU v5 lite", 1, 1, 0, true, false},
    {"v5p", 5, "p", "TPU v5", 2, 2, 4, false, false},
    {"v6e", 6, "e", "TPU v6 lite", 1, 1, 2, true, true},
    {"7x", 7, "x", "TPU7x", 1, 2, 2, false, true},
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
