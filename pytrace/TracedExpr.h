// Traced expressions: the kernel-language expressions a per-device Python value stands
// for, under construction (shared and immutable), and their conversion to the AST.
#pragma once

#include "frontend/AST.h"
#include "support/Source.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace dkv::pytrace {

struct TExpr;
using TE = std::shared_ptr<const TExpr>;

/// One subscript of a ref view: an index, a range or the whole dimension.
struct TSub {
  ast::Subscript::Kind kind = ast::Subscript::Kind::Full;
  TE lo, hi;
};

struct TExpr {
  enum class K {
    Int,
    Float,
    Bool,
    Name,
    Unary,
    Binary,
    Builtin,
    Index,
    Tuple,
    Mapping,
    Select,
    Compute,
    SelectRef ///< kids: the index, then the choices (refs or semaphores)
  };
  K k = K::Int;
  support::SourceRange range;
  int64_t i = 0;
  double f = 0;
  std::string text; ///< Float: as written; Name / Index: the name
  bool b = false;
  ast::UnaryOp uop = ast::UnaryOp::Neg;
  ast::BinaryOp bop = ast::BinaryOp::Add;
  ast::Builtin builtin = ast::Builtin::AxisIndex;
  std::vector<TE> kids;
  std::vector<TSub> subs;
  bool ellipsis = false;
  std::vector<std::string> keys; ///< Mapping: axis names
  /// Compute: the operation, its element type and reduction axis (kids: the operands).
  ast::ComputeOp cop = ast::ComputeOp::Dot;
  std::optional<ast::DType> dtype;
  std::optional<int64_t> axis;
  std::vector<std::pair<std::string, bool>> flags; ///< Compute: its `bool` arguments given
  std::vector<int64_t> dims; ///< Compute: its `shape` argument (reshape, broadcasted_iota)
};

TE teInt(support::SourceRange r, int64_t v);
TE teFloat(support::SourceRange r, double v, std::string text);
TE teBool(support::SourceRange r, bool v);
TE teName(support::SourceRange r, std::string name);
TE teBinary(support::SourceRange r, ast::BinaryOp op, TE a, TE b);
TE teUnary(support::SourceRange r, ast::UnaryOp op, TE a);

/// The AST expression `e` stands for.
ast::ExprPtr build(const TExpr &e);

} // namespace dkv::pytrace
