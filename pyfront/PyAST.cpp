// Names of the Python AST's node kinds and operators.
#include "pyfront/PyAST.h"

namespace dkv::py {

std::string_view toString(ExprKind kind) {
  switch (kind) {
  case ExprKind::Name:
    return "Name";
  case ExprKind::Constant:
    return "Constant";
  case ExprKind::UnaryOp:
    return "UnaryOp";
  case ExprKind::BinOp:
    return "BinOp";
  case ExprKind::BoolOp:
    return "BoolOp";
  case ExprKind::Compare:
    return "Compare";
  case ExprKind::Call:
    return "Call";
  case ExprKind::Attribute:
    return "Attribute";
  case ExprKind::Subscript:
    return "Subscript";
  case ExprKind::Slice:
    return "Slice";
  case ExprKind::Tuple:
    return "Tuple";
  case ExprKind::List:
    return "List";
  case ExprKind::Set:
    return "Set";
  case ExprKind::Dict:
    return "Dict";
  case ExprKind::ListComp:
    return "ListComp";
  case ExprKind::SetComp:
    return "SetComp";
  case ExprKind::DictComp:
    return "DictComp";
  case ExprKind::GeneratorExp:
    return "GeneratorExp";
  case ExprKind::Lambda:
    return "Lambda";
  case ExprKind::IfExp:
    return "IfExp";
  case ExprKind::NamedExpr:
    return "NamedExpr";
  case ExprKind::Starred:
    return "Starred";
  case ExprKind::Await:
    return "Await";
  case ExprKind::Yield:
    return "Yield";
  case ExprKind::YieldFrom:
    return "YieldFrom";
  }
  return "?";
}

std::string_view toString(StmtKind kind) {
  switch (kind) {
  case StmtKind::FunctionDef:
    return "FunctionDef";
  case StmtKind::ClassDef:
    return "ClassDef";
  case StmtKind::Return:
    return "Return";
  case StmtKind::Delete:
    return "Delete";
  case StmtKind::Assign:
    return "Assign";
  case StmtKind::AugAssign:
    return "AugAssign";
  case StmtKind::AnnAssign:
    return "AnnAssign";
  case StmtKind::For:
    return "For";
  case StmtKind::While:
    return "While";
  case StmtKind::If:
    return "If";
  case StmtKind::With:
    return "With";
  case StmtKind::Match:
    return "Match";
  case StmtKind::Raise:
    return "Raise";
  case StmtKind::Try:
    return "Try";
  case StmtKind::Assert:
    return "Assert";
  case StmtKind::Import:
    return "Import";
  case StmtKind::ImportFrom:
    return "ImportFrom";
  case StmtKind::Global:
    return "Global";
  case StmtKind::Nonlocal:
    return "Nonlocal";
  case StmtKind::ExprStmt:
    return "Expr";
  case StmtKind::TypeAlias:
    return "TypeAlias";
  case StmtKind::Pass:
    return "Pass";
  case StmtKind::Break:
    return "Break";
  case StmtKind::Continue:
    return "Continue";
  }
  return "?";
}

std::string_view toString(PatternKind kind) {
  switch (kind) {
  case PatternKind::Value:
    return "MatchValue";
  case PatternKind::Singleton:
    return "MatchSingleton";
  case PatternKind::Sequence:
    return "MatchSequence";
  case PatternKind::Mapping:
    return "MatchMapping";
  case PatternKind::Class:
    return "MatchClass";
  case PatternKind::Star:
    return "MatchStar";
  case PatternKind::As:
    return "MatchAs";
  case PatternKind::Or:
    return "MatchOr";
  }
  return "?";
}

std::string_view toString(UnaryOpKind op) {
  switch (op) {
  case UnaryOpKind::Not:
    return "not";
  case UnaryOpKind::Invert:
    return "~";
  case UnaryOpKind::UAdd:
    return "+";
  case UnaryOpKind::USub:
    return "-";
  }
  return "?";
}

std::string_view toString(BinOpKind op) {
  switch (op) {
  case BinOpKind::Add:
    return "+";
  case BinOpKind::Sub:
    return "-";
  case BinOpKind::Mult:
    return "*";
  case BinOpKind::MatMult:
    return "@";
  case BinOpKind::Div:
    return "/";
  case BinOpKind::Mod:
    return "%";
  case BinOpKind::Pow:
    return "**";
  case BinOpKind::LShift:
    return "<<";
  case BinOpKind::RShift:
    return ">>";
  case BinOpKind::BitOr:
    return "|";
  case BinOpKind::BitXor:
    return "^";
  case BinOpKind::BitAnd:
    return "&";
  case BinOpKind::FloorDiv:
    return "//";
  }
  return "?";
}

std::string_view toString(BoolOpKind op) { return op == BoolOpKind::And ? "and" : "or"; }

std::string_view toString(CmpOpKind op) {
  switch (op) {
  case CmpOpKind::Eq:
    return "==";
  case CmpOpKind::NotEq:
    return "!=";
  case CmpOpKind::Lt:
    return "<";
  case CmpOpKind::LtE:
    return "<=";
  case CmpOpKind::Gt:
    return ">";
  case CmpOpKind::GtE:
    return ">=";
  case CmpOpKind::Is:
    return "is";
  case CmpOpKind::IsNot:
    return "is not";
  case CmpOpKind::In:
    return "in";
  case CmpOpKind::NotIn:
    return "not in";
  }
  return "?";
}

std::string_view toString(ParamKind kind) {
  switch (kind) {
  case ParamKind::PositionalOnly:
    return "positional-only";
  case ParamKind::Positional:
    return "positional";
  case ParamKind::VarArgs:
    return "*args";
  case ParamKind::KeywordOnly:
    return "keyword-only";
  case ParamKind::VarKeywords:
    return "**kwargs";
  }
  return "?";
}

} // namespace dkv::py
