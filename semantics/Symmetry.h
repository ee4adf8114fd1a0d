// Rotation symmetry of an instance (docs/closure.md "Symmetry"): a mesh axis along
// which moving every device one step (coordinate + 1, modulo the axis size) maps the
// program onto itself. The map is checked on the instance, event by event, never
// assumed from the kernel's text: each device's events equal the rotated device's
// (the same kinds, source locations, semaphores, amounts and invocations; signal
// targets and DMAs rotated), each DMA its rotated DMA's (issuer, target, semaphores,
// chunks), and every region its image under one cyclic shift per buffer dimension (the
// same for every device: shifts keep overlaps). Data (stored values) is not compared:
// no check reads it.
#pragma once

#include "model/Model.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dkv::semantics {

/// One rotation that maps the instance onto itself.
struct Rotation {
  int32_t axis = 0;
  std::vector<model::DeviceId> device; ///< [d]: the device d moves to
  std::vector<model::DmaId> dma;       ///< [k]: the DMA k moves to (-1: k never starts)
  /// [buffer][dimension]: the element shift, modulo the dimension's size.
  std::vector<std::vector<int64_t>> shift;
  std::vector<std::vector<int64_t>> size; ///< [buffer][dimension]: the buffer's shape

  /// The image of a region (nullopt if it wraps around a dimension's end, which no
  /// region of the program does).
  std::optional<model::Region> apply(const model::Region &region) const;
};

/// The rotations of an instance's mesh axes that are symmetries of it.
struct Symmetry {
  std::vector<Rotation> rotations;
  /// Devices with coordinate 0 on every rotated axis: one in every orbit of the group
  /// the rotations generate.
  std::vector<bool> representative;

  /// A region every rotation maps to itself.
  bool invariant(const model::Region &region) const;
  /// "rotation of x" / "rotations of x, y".
  std::string describe(const model::Program &program) const;
};

/// The rotations of `program`'s mesh axes (of size 2 or more) that map it onto itself;
/// nullopt when there is none (or on a TensorCore mesh of several cores, whose cores
/// are not rotated).
std::optional<Symmetry> findSymmetry(const model::Program &program);

} // namespace dkv::semantics
