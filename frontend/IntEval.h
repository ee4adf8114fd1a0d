// The one evaluator of integer expressions, shared by sema, `--devices` and lowering.
#pragma once

#include "frontend/AST.h"
#include "support/IntArith.h"

#include <cstdint>
#include <functional>
#include <optional>

namespace dkv::frontend {

/// `op v` on an integer (a boolean is 1 or 0): `-` is support::checkedNeg, `not` gives
/// 1 or 0.
support::IntResult applyUnary(ast::UnaryOp op, int64_t v);
/// `l op r` on integers (booleans are 1 or 0): arithmetic as support/IntArith.h (floored
/// `/` and `%`, overflow and division by zero are errors), comparisons and logic give
/// 1 or 0. `and` and `or` here take both values; evalIntExpr short-circuits them.
support::IntResult applyBinary(ast::BinaryOp op, int64_t l, int64_t r);

/// Why evalIntExpr has no value.
enum class IntEvalStatus { Ok, NotConstant, DivisionByZero, Overflow, InvalidShift };

struct IntEvalResult {
  std::optional<int64_t> value; ///< set iff status is Ok
  IntEvalStatus status = IntEvalStatus::Ok;
  const ast::Expr *where = nullptr; ///< the sub-expression that failed
};

/// The value of an expression that is not a literal, unary or binary expression (a
/// name, a call, ...), or nullopt if it has none here. `condition` is true where the
/// value is used as a condition (operands of `not`, `and`, `or`, and the root if the
/// caller says so), for the caller's messages.
using IntLeaf = std::function<std::optional<int64_t>(const ast::Expr &expr, bool condition)>;

/// Evaluates `expr` left to right: literals (true and false are 1 and 0), unary and
/// binary operators with applyUnary / applyBinary, `select(c, a, b)` (all three
/// operands evaluated, then `a` or `b`), everything else through `leaf`.
/// `a and b` and `a or b` evaluate `b` only when `a` does not decide the result (as in
/// Python). Stops at the first failure: NotConstant where `leaf` gave nullopt,
/// DivisionByZero, Overflow or InvalidShift at the operator. The recursion follows the AST, whose
/// depth the parser bounds.
IntEvalResult evalIntExpr(const ast::Expr &expr, const IntLeaf &leaf, bool condition = false);

} // namespace dkv::frontend
