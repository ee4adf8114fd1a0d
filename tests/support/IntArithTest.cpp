// Tests of the checked integer arithmetic every stage evaluates with.
#include "support/IntArith.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace dkv::support {
namespace {

testing::AssertionResult is(IntResult r, int64_t value) {
  if (!r.ok())
    return testing::AssertionFailure() << "error " << static_cast<int>(r.error);
  if (r.value != value)
    return testing::AssertionFailure() << "value " << r.value << ", expected " << value;
  return testing::AssertionSuccess();
}

TEST(IntArith, FloorDivisionAndModuloFollowTheDivisor) {
  EXPECT_TRUE(is(floorDiv(-7, 2), -4));
  EXPECT_TRUE(is(floorDiv(7, -2), -4));
  EXPECT_TRUE(is(floorDiv(-7, -2), 3));
  EXPECT_TRUE(is(floorDiv(6, 3), 2));
  EXPECT_TRUE(is(floorMod(-7, 3), 2));
  EXPECT_TRUE(is(floorMod(7, -3), -2));
  EXPECT_TRUE(is(floorMod(-7, -3), -1));
  EXPECT_TRUE(is(floorMod(6, 3), 0));
  // a == (a / b) * b + a % b wherever both exist.
  for (int64_t a : std::vector<int64_t>{-9, -1, 0, 1, 9, INT64_MAX, INT64_MIN + 1})
    for (int64_t b : std::vector<int64_t>{-4, -1, 1, 3, INT64_MAX}) {
      IntResult q = floorDiv(a, b);
      IntResult r = floorMod(a, b);
      ASSERT_TRUE(q.ok() && r.ok()) << a << " " << b;
      // In 128 bits: q * b alone may not fit (INT64_MAX floor-divided by -4).
      EXPECT_TRUE(static_cast<__int128>(q.value) * b + r.value == a) << a << " " << b;
    }
}

TEST(IntArith, MinimumModuloMinusOneIsZero) {
  // The mathematical remainder is 0 and fits: not an overflow (C++'s `%` traps here).
  EXPECT_TRUE(is(floorMod(INT64_MIN, -1), 0));
  EXPECT_TRUE(is(floorMod(INT64_MIN, 1), 0));
  EXPECT_TRUE(is(floorMod(INT64_MIN, INT64_MIN), 0));
  EXPECT_TRUE(is(floorMod(INT64_MAX, INT64_MIN), -1));
}

TEST(IntArith, MinimumDividedByMinusOneOverflows) {
  EXPECT_EQ(floorDiv(INT64_MIN, -1).error, IntError::Overflow);
  EXPECT_TRUE(is(floorDiv(INT64_MIN, 1), INT64_MIN));
  EXPECT_TRUE(is(floorDiv(INT64_MIN, 2), INT64_MIN / 2));
}

TEST(IntArith, DivisionByZeroIsAnError) {
  EXPECT_EQ(floorDiv(1, 0).error, IntError::DivisionByZero);
  EXPECT_EQ(floorMod(1, 0).error, IntError::DivisionByZero);
  EXPECT_EQ(floorDiv(INT64_MIN, 0).error, IntError::DivisionByZero);
  EXPECT_EQ(floorMod(0, 0).error, IntError::DivisionByZero);
}

TEST(IntArith, OverflowIsAnErrorNeverAWrap) {
  EXPECT_EQ(checkedAdd(INT64_MAX, 1).error, IntError::Overflow);
  EXPECT_EQ(checkedSub(INT64_MIN, 1).error, IntError::Overflow);
  EXPECT_EQ(checkedMul(INT64_MAX, 2).error, IntError::Overflow);
  EXPECT_EQ(checkedMul(INT64_MIN, -1).error, IntError::Overflow);
  EXPECT_EQ(checkedNeg(INT64_MIN).error, IntError::Overflow);
  EXPECT_TRUE(is(checkedAdd(INT64_MAX, INT64_MIN), -1));
  EXPECT_TRUE(is(checkedSub(-1, INT64_MAX), INT64_MIN));
  EXPECT_TRUE(is(checkedMul(-1, INT64_MAX), -INT64_MAX));
  EXPECT_TRUE(is(checkedNeg(INT64_MAX), -INT64_MAX));
}

TEST(IntArith, CheckedProduct) {
  EXPECT_TRUE(is(checkedProduct(std::vector<int64_t>{}), 1));
  EXPECT_TRUE(is(checkedProduct(std::vector<int64_t>{2, 3, 7}), 42));
  EXPECT_EQ(checkedProduct(std::vector<int64_t>{int64_t{1} << 32, int64_t{1} << 31}).error,
            IntError::Overflow);
}

TEST(IntArith, TruncatingRemainderHasTheSignOfTheDividend) {
  EXPECT_TRUE(is(truncRem(7, 3), 1));
  EXPECT_TRUE(is(truncRem(-7, 3), -1)); // floorMod gives 2
  EXPECT_TRUE(is(truncRem(7, -3), 1));  // floorMod gives -2
  EXPECT_TRUE(is(truncRem(-7, -3), -1));
  EXPECT_TRUE(is(truncRem(INT64_MIN, -1), 0));
  EXPECT_EQ(truncRem(5, 0).error, IntError::DivisionByZero);
}

TEST(IntArith, ShiftsAreExactAndRefuseBadAmounts) {
  EXPECT_TRUE(is(shiftLeft(1, 3), 8));
  EXPECT_TRUE(is(shiftLeft(-3, 2), -12));
  EXPECT_TRUE(is(shiftLeft(1, 62), int64_t{1} << 62));
  EXPECT_TRUE(is(shiftLeft(-1, 63), INT64_MIN));
  EXPECT_EQ(shiftLeft(1, 63).error, IntError::Overflow); // 2^63
  EXPECT_EQ(shiftLeft(3, 62).error, IntError::Overflow);
  EXPECT_TRUE(is(shiftLeft(0, 63), 0));
  EXPECT_EQ(shiftLeft(1, 64).error, IntError::InvalidShift);
  EXPECT_EQ(shiftLeft(1, -1).error, IntError::InvalidShift);
  EXPECT_TRUE(is(shiftRight(9, 1), 4));
  EXPECT_TRUE(is(shiftRight(-9, 1), -5)); // floor, an arithmetic shift
  EXPECT_TRUE(is(shiftRight(INT64_MIN, 63), -1));
  EXPECT_EQ(shiftRight(1, 64).error, IntError::InvalidShift);
  EXPECT_EQ(shiftRight(1, -2).error, IntError::InvalidShift);
}

TEST(IntArith, BitOperationsOnTwosComplement) {
  EXPECT_TRUE(is(bitXor(5, 1), 4));
  EXPECT_TRUE(is(bitXor(6, 4), 2));
  EXPECT_TRUE(is(bitAnd(6, 3), 2));
  EXPECT_TRUE(is(bitOr(4, 1), 5));
  EXPECT_TRUE(is(bitAnd(-1, 12), 12));
  EXPECT_TRUE(is(bitXor(-1, 0), -1));
}

} // namespace
} // namespace dkv::support
