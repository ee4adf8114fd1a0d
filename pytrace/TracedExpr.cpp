// Traced expressions and their conversion to the kernel language's AST.
#include "pytrace/TracedExpr.h"

namespace dkv::pytrace {

using support::SourceRange;

TE teInt(SourceRange r, int64_t v) {
  auto e = std::make_shared<TExpr>();
  e->k = TExpr::K::Int, e->range = r, e->i = v;
  return e;
}
TE teName(SourceRange r, std::string name) {
  auto e = std::make_shared<TExpr>();
  e->k = TExpr::K::Name, e->range = r, e->text = std::move(name);
  return e;
}
TE teFloat(SourceRange r, double v, std::string text) {
  auto e = std::make_shared<TExpr>();
  e->k = TExpr::K::Float, e->range = r, e->f = v, e->text = std::move(text);
  return e;
}
TE teBool(SourceRange r, bool v) {
  auto e = std::make_shared<TExpr>();
  e->k = TExpr::K::Bool, e->range = r, e->b = v;
  return e;
}
TE teBinary(SourceRange r, ast::BinaryOp op, TE a, TE b) {
  auto e = std::make_shared<TExpr>();
  e->k = TExpr::K::Binary, e->range = r, e->bop = op, e->kids = {std::move(a), std::move(b)};
  return e;
}
TE teUnary(SourceRange r, ast::UnaryOp op, TE a) {
  auto e = std::make_shared<TExpr>();
  e->k = TExpr::K::Unary, e->range = r, e->uop = op, e->kids = {std::move(a)};
  return e;
}

ast::ExprPtr build(const TExpr &e) {
  switch (e.k) {
  case TExpr::K::Int:
    return std::make_unique<ast::IntLiteral>(e.range, e.i);
  case TExpr::K::Float:
    return std::make_unique<ast::FloatLiteral>(e.range, e.f, e.text);
  case TExpr::K::Bool:
    return std::make_unique<ast::BoolLiteral>(e.range, e.b);
  case TExpr::K::Name:
    return std::make_unique<ast::NameExpr>(e.range, e.text);
  case TExpr::K::Unary:
    return std::make_unique<ast::UnaryExpr>(e.range, e.uop, build(*e.kids[0]));
  case TExpr::K::Binary:
    return std::make_unique<ast::BinaryExpr>(e.range, e.bop, build(*e.kids[0]), build(*e.kids[1]));
  case TExpr::K::Builtin:
    return std::make_unique<ast::CallExpr>(e.range, e.builtin, build(*e.kids[0]));
  case TExpr::K::Index: {
    std::vector<ast::Subscript> subs;
    for (const TSub &s : e.subs) {
      ast::Subscript sub;
      sub.kind = s.kind;
      sub.range = e.range;
      if (s.lo)
        sub.lo = build(*s.lo);
      if (s.hi)
        sub.hi = build(*s.hi);
      subs.push_back(std::move(sub));
    }
    bool ellipsis = subs.empty() && e.ellipsis;
    return std::make_unique<ast::IndexExpr>(
        e.range, std::make_unique<ast::NameExpr>(e.range, e.text), std::move(subs), ellipsis);
  }
  case TExpr::K::Tuple: {
    std::vector<ast::ExprPtr> elements;
    for (const TE &k : e.kids)
      elements.push_back(build(*k));
    return std::make_unique<ast::TupleExpr>(e.range, std::move(elements));
  }
  case TExpr::K::Mapping: {
    std::vector<ast::MappingExpr::Entry> entries;
    for (size_t i = 0; i < e.kids.size(); ++i)
      entries.push_back({std::make_unique<ast::NameExpr>(e.range, e.keys[i]), build(*e.kids[i])});
    return std::make_unique<ast::MappingExpr>(e.range, std::move(entries));
  }
  case TExpr::K::Select:
    return std::make_unique<ast::SelectExpr>(e.range, build(*e.kids[0]), build(*e.kids[1]),
                                             build(*e.kids[2]));
  case TExpr::K::SelectRef: {
    std::vector<ast::ExprPtr> choices;
    for (size_t k = 1; k < e.kids.size(); ++k)
      choices.push_back(build(*e.kids[k]));
    return std::make_unique<ast::SelectRefExpr>(e.range, build(*e.kids[0]), std::move(choices));
  }
  case TExpr::K::Compute: {
    std::vector<ast::ExprPtr> operands;
    for (const TE &k : e.kids)
      operands.push_back(build(*k));
    ast::ExprPtr axis;
    if (e.axis) {
      axis = *e.axis < 0 ? ast::ExprPtr(std::make_unique<ast::UnaryExpr>(
                               e.range, ast::UnaryOp::Neg,
                               std::make_unique<ast::IntLiteral>(e.range, -*e.axis)))
                         : std::make_unique<ast::IntLiteral>(e.range, *e.axis);
    }
    std::vector<ast::ExprPtr> dims;
    for (int64_t d : e.dims)
      dims.push_back(std::make_unique<ast::IntLiteral>(e.range, d));
    auto out = std::make_unique<ast::ComputeExpr>(e.range, e.cop, std::move(operands), e.dtype,
                                                  std::move(axis), std::move(dims));
    for (const auto &[name, value] : e.flags)
      out->setFlag(name, value);
    return out;
  }
  }
  return std::make_unique<ast::ErrorExpr>(e.range);
}

} // namespace dkv::pytrace
