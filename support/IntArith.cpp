// Checked 64-bit integer arithmetic.
#include "support/IntArith.h"

namespace dkv::support {

namespace {

IntResult fromBuiltin(bool overflow, int64_t value) {
  if (overflow)
    return {0, IntError::Overflow};
  return {value, IntError::None};
}

} // namespace

IntResult checkedAdd(int64_t a, int64_t b) {
  int64_t out = 0;
  // The flag is computed before `out` is read: function arguments are unsequenced.
  bool overflow = __builtin_add_overflow(a, b, &out);
  return fromBuiltin(overflow, out);
}

IntResult checkedSub(int64_t a, int64_t b) {
  int64_t out = 0;
  bool overflow = __builtin_sub_overflow(a, b, &out);
  return fromBuiltin(overflow, out);
}

IntResult checkedMul(int64_t a, int64_t b) {
  int64_t out = 0;
  bool overflow = __builtin_mul_overflow(a, b, &out);
  return fromBuiltin(overflow, out);
}

IntResult checkedNeg(int64_t a) {
  if (a == INT64_MIN)
    return {0, IntError::Overflow};
  return {-a, IntError::None};
}

IntResult floorDiv(int64_t a, int64_t b) {
  if (b == 0)
    return {0, IntError::DivisionByZero};
  if (a == INT64_MIN && b == -1)
    return {0, IntError::Overflow}; // 2^63
  int64_t q = a / b;
  if (a % b != 0 && ((a < 0) != (b < 0)))
    --q;
  return {q, IntError::None};
}

IntResult floorMod(int64_t a, int64_t b) {
  if (b == 0)
    return {0, IntError::DivisionByZero};
  // The remainder of any division by -1 is 0, INT64_MIN included; C++'s `%` would
  // overflow computing it.
  if (b == -1)
    return {0, IntError::None};
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0)))
    r += b;
  return {r, IntError::None};
}

IntResult truncRem(int64_t a, int64_t b) {
  if (b == 0)
    return {0, IntError::DivisionByZero};
  if (b == -1)
    return {0, IntError::None}; // C++'s `%` would overflow on INT64_MIN
  return {a % b, IntError::None};
}

IntResult shiftLeft(int64_t a, int64_t b) {
  if (b < 0 || b > 63)
    return {0, IntError::InvalidShift};
  // Exact: a * 2^b must fit, checked by shifting back.
  if (a == 0 || b == 0)
    return {a, IntError::None};
  int64_t limit = INT64_MAX >> b; // the largest a whose shift fits
  if (a > limit || a < -limit - 1)
    return {0, IntError::Overflow};
  return {static_cast<int64_t>(static_cast<uint64_t>(a) << b), IntError::None};
}

IntResult shiftRight(int64_t a, int64_t b) {
  if (b < 0 || b > 63)
    return {0, IntError::InvalidShift};
  // C++20 defines `>>` on negative values as an arithmetic shift (floor).
  return {a >> b, IntError::None};
}

IntResult bitAnd(int64_t a, int64_t b) { return {a & b, IntError::None}; }
IntResult bitOr(int64_t a, int64_t b) { return {a | b, IntError::None}; }
IntResult bitXor(int64_t a, int64_t b) { return {a ^ b, IntError::None}; }

IntResult checkedProduct(std::span<const int64_t> values) {
  int64_t product = 1;
  for (int64_t v : values) {
    IntResult next = checkedMul(product, v);
    if (!next.ok())
      return next;
    product = next.value;
  }
  return {product, IntError::None};
}

} // namespace dkv::support
