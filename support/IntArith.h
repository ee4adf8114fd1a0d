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
  /// The shift amount of `<<` or `>>` is outside [0, 63].
  InvalidShift,
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
/// `rem(a, b)` (lax.rem, C's `%`): the remainder of the division truncated towards
/// zero, with the sign of `a`; INT64_MIN rem -1 is 0.
IntResult truncRem(int64_t a, int64_t b);
/// `a << b` is a * 2^b (Overflow if that does not fit); `a >> b` is floor(a / 2^b)
/// (an arithmetic shift). Both fail with InvalidShift unless 0 <= b <= 63.
IntResult shiftLeft(int64_t a, int64_t b);
IntResult shiftRight(int64_t a, int64_t b);
/// Bitwise `&`, `|`, `^` on the two's complement representation (never fail).
IntResult bitAnd(int64_t a, int64_t b);
IntResult bitOr(int64_t a, int64_t b);
IntResult bitXor(int64_t a, int64_t b);

/// The product of `values` (1 for none), or Overflow.
IntResult checkedProduct(std::span<const int64_t> values);

/// a + b for counts that only grow (semaphore units): saturates at INT64_MAX for b > 0
/// (b <= 0 is added as is).
inline int64_t saturatingAdd(int64_t a, int64_t b) {
  if (b > 0 && a > INT64_MAX - b)
    return INT64_MAX;
  return a + b;
}

} // namespace dkv::support
