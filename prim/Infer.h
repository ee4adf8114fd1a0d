// Type and shape inference over the catalogue: one function that every pass asks for
// the element type and shape of an op's result (sema with compile-time shapes, lowering
// with each device's, the model's verifier to check a lowered value).
#pragma once

#include "prim/Op.h"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace dkv::prim {

/// A dimension whose extent is known only per device (sema); never in lowering.
inline constexpr int64_t kDynamic = -1;

/// The type of an operand or result.
struct ValueType {
  enum class Kind {
    Array,  ///< an array value (a loaded ref or compute on them)
    Scalar, ///< a number (a Python int or float: weak; or a per-device integer)
    Mask,   ///< an element-wise boolean (a comparison of values)
    Cond,   ///< a per-device condition (where's condition)
  };
  Kind kind = Kind::Array;
  ElemType elem;              ///< Array, Scalar
  std::vector<int64_t> shape; ///< Array, Mask (empty: one element)

  static ValueType array(ElemType elem, std::vector<int64_t> shape) {
    return {Kind::Array, elem, std::move(shape)};
  }
  static ValueType scalar(ElemType elem) { return {Kind::Scalar, elem, {}}; }
  static ValueType mask(std::vector<int64_t> shape) { return {Kind::Mask, {}, std::move(shape)}; }
  static ValueType cond() { return {Kind::Cond, {}, {}}; }
};

/// The attributes of one application (the non-operand arguments, evaluated).
struct Attrs {
  std::optional<int64_t> axis; ///< as written (negative: from the end); absent: the default
  bool keepdims = false;
  std::optional<DType> dtype; ///< astype, bitcast, zeros, iota; dot's preferred type
  std::vector<int64_t> dims;  ///< reshape, zeros, iota: the shape; split: {sections}
};

/// A problem with an application: a diagnostic id, its message and where it points.
struct InferError {
  enum class At { Call, Operand, Axis };
  std::string id;
  std::string message;
  At at = At::Call;
  size_t operand = 0; ///< At::Operand
};

struct TypeResult {
  ValueType type;
  /// Reduce, Concat, Split, Iota: the axis in 0..rank-1 (absent: a reduction over every
  /// axis).
  std::optional<int64_t> axis;
  std::optional<InferError> error;
};

/// The result of `op` on `operands` with `attrs`: JAX's type promotion (weak Python
/// scalars) and NumPy's broadcasting for element-wise ops, and each shape rule of
/// Op.h. `spelled` names the op in messages as the user wrote it (`'+'`, `where()`).
/// Extents of kDynamic are not checked (lowering checks them per device).
TypeResult inferType(Op op, std::span<const ValueType> operands, const Attrs &attrs,
                     std::string_view spelled);

/// NumPy's broadcast of two shapes (trailing dimensions equal or 1), or nullopt.
std::optional<std::vector<int64_t>> broadcastShapes(const std::vector<int64_t> &a,
                                                    const std::vector<int64_t> &b);

/// `[8, 128]`.
std::string shapeText(const std::vector<int64_t> &shape);

/// The number of elements of `shape`, or kDynamic if an extent is dynamic or the
/// product overflows.
int64_t elementCount(const std::vector<int64_t> &shape);

} // namespace dkv::prim
