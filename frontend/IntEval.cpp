// The one evaluator of integer expressions.
#include "frontend/IntEval.h"

namespace dkv::frontend {

using support::IntError;
using support::IntResult;

IntResult applyUnary(ast::UnaryOp op, int64_t v) {
  switch (op) {
  case ast::UnaryOp::Neg:
    return support::checkedNeg(v);
  case ast::UnaryOp::Not:
    return {v == 0 ? 1 : 0, IntError::None};
  }
  return {0, IntError::Overflow}; // unreachable: every operator is handled
}

IntResult applyBinary(ast::BinaryOp op, int64_t l, int64_t r) {
  auto truth = [](bool b) { return IntResult{b ? 1 : 0, IntError::None}; };
  switch (op) {
  case ast::BinaryOp::Add:
    return support::checkedAdd(l, r);
  case ast::BinaryOp::Sub:
    return support::checkedSub(l, r);
  case ast::BinaryOp::Mul:
    return support::checkedMul(l, r);
  case ast::BinaryOp::Div:
    return support::floorDiv(l, r);
  case ast::BinaryOp::Mod:
    return support::floorMod(l, r);
  case ast::BinaryOp::Min:
    return {std::min(l, r), IntError::None};
  case ast::BinaryOp::Max:
    return {std::max(l, r), IntError::None};
  case ast::BinaryOp::Eq:
    return truth(l == r);
  case ast::BinaryOp::Ne:
    return truth(l != r);
  case ast::BinaryOp::Lt:
    return truth(l < r);
  case ast::BinaryOp::Le:
    return truth(l <= r);
  case ast::BinaryOp::Gt:
    return truth(l > r);
  case ast::BinaryOp::Ge:
    return truth(l >= r);
  case ast::BinaryOp::And:
    return truth(l != 0 && r != 0);
  case ast::BinaryOp::Or:
    return truth(l != 0 || r != 0);
  case ast::BinaryOp::Rem:
    return support::truncRem(l, r);
  case ast::BinaryOp::BitAnd:
    return support::bitAnd(l, r);
  case ast::BinaryOp::BitOr:
    return support::bitOr(l, r);
  case ast::BinaryOp::BitXor:
    return support::bitXor(l, r);
  case ast::BinaryOp::Shl:
    return support::shiftLeft(l, r);
  case ast::BinaryOp::Shr:
    return support::shiftRight(l, r);
  }
  return {0, IntError::Overflow}; // unreachable: every operator is handled
}

namespace {

IntEvalResult failure(IntEvalStatus status, const ast::Expr &where) {
  return {std::nullopt, status, &where};
}

IntEvalResult fromInt(IntResult r, const ast::Expr &where) {
  switch (r.error) {
  case IntError::None:
    return {r.value};
  case IntError::Overflow:
    return failure(IntEvalStatus::Overflow, where);
  case IntError::DivisionByZero:
    return failure(IntEvalStatus::DivisionByZero, where);
  case IntError::InvalidShift:
    return failure(IntEvalStatus::InvalidShift, where);
  }
  return failure(IntEvalStatus::Overflow, where);
}

} // namespace

IntEvalResult evalIntExpr(const ast::Expr &expr, const IntLeaf &leaf, bool condition) {
  switch (expr.kind()) {
  case ast::Node::Kind::IntLiteral:
    return {ast::cast<ast::IntLiteral>(expr).value()};
  case ast::Node::Kind::BoolLiteral:
    return {ast::cast<ast::BoolLiteral>(expr).value() ? 1 : 0};
  case ast::Node::Kind::UnaryExpr: {
    const auto &u = ast::cast<ast::UnaryExpr>(expr);
    IntEvalResult v = evalIntExpr(u.operand(), leaf, u.op() == ast::UnaryOp::Not);
    if (!v.value)
      return v;
    return fromInt(applyUnary(u.op(), *v.value), expr);
  }
  case ast::Node::Kind::BinaryExpr: {
    const auto &b = ast::cast<ast::BinaryExpr>(expr);
    bool logic = b.op() == ast::BinaryOp::And || b.op() == ast::BinaryOp::Or;
    IntEvalResult l = evalIntExpr(b.lhs(), leaf, logic);
    if (!l.value)
      return l;
    if (b.op() == ast::BinaryOp::And && *l.value == 0)
      return {0};
    if (b.op() == ast::BinaryOp::Or && *l.value != 0)
      return {1};
    IntEvalResult r = evalIntExpr(b.rhs(), leaf, logic);
    if (!r.value)
      return r;
    return fromInt(applyBinary(b.op(), *l.value, *r.value), expr);
  }
  case ast::Node::Kind::SelectExpr: {
    // jnp.where evaluates both operands: a failure in either is one, whichever is chosen.
    const auto &sel = ast::cast<ast::SelectExpr>(expr);
    IntEvalResult c = evalIntExpr(sel.cond(), leaf, true);
    if (!c.value)
      return c;
    IntEvalResult a = evalIntExpr(sel.ifTrue(), leaf, condition);
    if (!a.value)
      return a;
    IntEvalResult b = evalIntExpr(sel.ifFalse(), leaf, condition);
    if (!b.value)
      return b;
    return *c.value != 0 ? a : b;
  }
  default:
    if (std::optional<int64_t> v = leaf(expr, condition))
      return {*v};
    return failure(IntEvalStatus::NotConstant, expr);
  }
}

} // namespace dkv::frontend
