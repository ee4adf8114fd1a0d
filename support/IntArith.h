// Checked 64-bit integer arithmetic: the one definition of dkv's integer operators.
#pragma once

#include <cstdint>
#include <span>

namespace dkv::support {

/// Why an integer operation has no result.
enum class IntError {
  None,
  /// The mathematical result does not fit in 64 bits (e.g. INT64_MIN / -1).
  Overflow,
  /// The divisor of `/` or `%` is 0.
  DivisionByZero,
};

/// The result of a checked operation: `value` is meaningful iff `error` is None.
struct IntResult {
  int64_t value = 0;
  IntError error = IntError::None;

  bool ok() const { return error == IntError::None; }
};

/// The operators of dkv's integer expressions (docs/language.md, "Arithmetic").
/// Every operation is exact: it fails with Overflow iff its mathematical result does
/// not fit in 64 bits, never wraps. `/` and `%` are floored (Python semantics: the
/// sign of `a % b` follows `b`, and a == (a / b) * b + a % b); so INT64_MIN % -1 is 0
/// but INT64_MIN / -1 overflows.
IntResult checkedAdd(int64_t a, int64_t b);
IntResult checkedSub(int64_t a, int64_t b);
IntResult checkedMul(int64_t a, int64_t b);
IntResult checkedNeg(int64_t a);
IntResult floorDiv(int64_t a, int64_t b);
IntResult floorMod(int64_t a, int64_t b);

/// The product of `values` (1 for none), or Overflow.
IntResult checkedProduct(std::span<const int64_t> values);

} // namespace dkv::support
