// The Python syntax tree of pyfront: what pyfront::parseModule builds from a `.py` file.
#pragma once

#include "support/Source.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

/// The AST of one Python file, in the shape of CPython's `ast` module (the same node
/// names and children, so that Python's documentation describes it), with these
/// differences:
/// - Every node has a `support::SourceRange` (its file, first and last position);
///   positions are byte columns, 1-based.
/// - Constants keep their source spelling (`Constant::text`) besides the value the
///   tracer needs (`intValue` for integers that fit 64 bits, `str` for strings with
///   escapes decoded; f-strings are plain strings whose `{...}` parts are not parsed).
/// - Function and lambda parameters are one list of `Param` with a kind, instead of
///   CPython's `arguments` with parallel default lists.
/// - `elif` is an `If` inside the `orelse` of an `If`, as in CPython.
/// Nodes own their children through `std::unique_ptr`; a child documented as
/// "may be null" is optional, every other child is present after a successful parse.
/// Use `isa<T>`, `cast<T>` and `dynCast<T>` to inspect a node's class.
namespace dkv::py {

using support::SourceRange;

struct Expr;
struct Stmt;
struct Pattern;
using ExprPtr = std::unique_ptr<Expr>;
using StmtPtr = std::unique_ptr<Stmt>;
using PatternPtr = std::unique_ptr<Pattern>;
using Body = std::vector<StmtPtr>;

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

enum class ExprKind {
  Name,
  Constant,
  UnaryOp,
  BinOp,
  BoolOp,
  Compare,
  Call,
  Attribute,
  Subscript,
  Slice,
  Tuple,
  List,
  Set,
  Dict,
  ListComp,
  SetComp,
  DictComp,
  GeneratorExp,
  Lambda,
  IfExp,
  NamedExpr,
  Starred,
  Await,
  Yield,
  YieldFrom,
};

/// Base of all expressions.
struct Expr {
  Expr(ExprKind kind, SourceRange range) : kind(kind), range(range) {}
  Expr(const Expr &) = delete;
  Expr &operator=(const Expr &) = delete;
  virtual ~Expr() = default;

  const ExprKind kind;
  SourceRange range;
};

/// A use of a name (load, store or del context is decided by the position).
struct Name final : Expr {
  static constexpr ExprKind kKind = ExprKind::Name;
  Name(SourceRange r, std::string id) : Expr(kKind, r), id(std::move(id)) {}
  std::string id;
};

enum class ConstKind { Int, Float, Imaginary, String, Bytes, True, False, None, Ellipsis };

/// A literal. Adjacent string literals are one Constant (implicit concatenation).
struct Constant final : Expr {
  static constexpr ExprKind kKind = ExprKind::Constant;
  Constant(SourceRange r, ConstKind constKind, std::string text)
      : Expr(kKind, r), constKind(constKind), text(std::move(text)) {}
  ConstKind constKind;
  /// The source spelling (all parts of a concatenated string, joined by a space).
  std::string text;
  /// Int: the value if it fits in int64_t.
  std::optional<int64_t> intValue;
  /// String, Bytes: the value, escapes decoded (raw strings kept as written).
  std::string str;
  /// String: some part was an f-string (its `{...}` fields are kept as text).
  bool fString = false;
  /// String with an f-string part: each part as written between its quotes (escapes not
  /// decoded), for the tracer, which formats the fields (pytrace/FString.cpp).
  struct Part {
    bool f = false, raw = false;
    std::string body;
  };
  std::vector<Part> parts;
};

enum class UnaryOpKind { Not, Invert, UAdd, USub };
enum class BinOpKind {
  Add,
  Sub,
  Mult,
  MatMult,
  Div,
  Mod,
  Pow,
  LShift,
  RShift,
  BitOr,
  BitXor,
  BitAnd,
  FloorDiv
};
enum class BoolOpKind { And, Or };
enum class CmpOpKind { Eq, NotEq, Lt, LtE, Gt, GtE, Is, IsNot, In, NotIn };

struct UnaryOp final : Expr {
  static constexpr ExprKind kKind = ExprKind::UnaryOp;
  UnaryOp(SourceRange r, UnaryOpKind op, ExprPtr operand)
      : Expr(kKind, r), op(op), operand(std::move(operand)) {}
  UnaryOpKind op;
  ExprPtr operand;
};

struct BinOp final : Expr {
  static constexpr ExprKind kKind = ExprKind::BinOp;
  BinOp(SourceRange r, BinOpKind op, ExprPtr left, ExprPtr right)
      : Expr(kKind, r), op(op), left(std::move(left)), right(std::move(right)) {}
  BinOpKind op;
  ExprPtr left;
  ExprPtr right;
};

/// `a and b and c` is one BoolOp with three values.
struct BoolOp final : Expr {
  static constexpr ExprKind kKind = ExprKind::BoolOp;
  BoolOp(SourceRange r, BoolOpKind op, std::vector<ExprPtr> values)
      : Expr(kKind, r), op(op), values(std::move(values)) {}
  BoolOpKind op;
  std::vector<ExprPtr> values;
};

/// `a < b <= c`: left a, ops [<, <=], comparators [b, c].
struct Compare final : Expr {
  static constexpr ExprKind kKind = ExprKind::Compare;
  Compare(SourceRange r, ExprPtr left) : Expr(kKind, r), left(std::move(left)) {}
  ExprPtr left;
  std::vector<CmpOpKind> ops;
  std::vector<ExprPtr> comparators;
};

/// `name=value` in a call or class header; `**value` has an empty name.
struct Keyword {
  SourceRange range;
  std::string name;
  ExprPtr value;
};

/// A call. `*x` arguments are Starred entries of `args`, in source order with the
/// positional ones; `name=x` and `**x` are `keywords`, in source order.
struct Call final : Expr {
  static constexpr ExprKind kKind = ExprKind::Call;
  Call(SourceRange r, ExprPtr func) : Expr(kKind, r), func(std::move(func)) {}
  ExprPtr func;
  std::vector<ExprPtr> args;
  std::vector<Keyword> keywords;
};

struct Attribute final : Expr {
  static constexpr ExprKind kKind = ExprKind::Attribute;
  Attribute(SourceRange r, ExprPtr value, std::string attr, SourceRange attrRange)
      : Expr(kKind, r), value(std::move(value)), attr(std::move(attr)), attrRange(attrRange) {}
  ExprPtr value;
  std::string attr;
  SourceRange attrRange;
};

/// `value[slice]`; several comma-separated indices are one Tuple (as in CPython).
struct Subscript final : Expr {
  static constexpr ExprKind kKind = ExprKind::Subscript;
  Subscript(SourceRange r, ExprPtr value, ExprPtr slice)
      : Expr(kKind, r), value(std::move(value)), slice(std::move(slice)) {}
  ExprPtr value;
  ExprPtr slice;
};

/// `lower:upper:step` inside a subscript; each part may be null.
struct Slice final : Expr {
  static constexpr ExprKind kKind = ExprKind::Slice;
  Slice(SourceRange r, ExprPtr lower, ExprPtr upper, ExprPtr step)
      : Expr(kKind, r), lower(std::move(lower)), upper(std::move(upper)), step(std::move(step)) {}
  ExprPtr lower;
  ExprPtr upper;
  ExprPtr step;
};

/// Tuple, List and Set displays.
template <ExprKind K> struct Sequence final : Expr {
  static constexpr ExprKind kKind = K;
  Sequence(SourceRange r, std::vector<ExprPtr> elts) : Expr(kKind, r), elts(std::move(elts)) {}
  std::vector<ExprPtr> elts;
};
using Tuple = Sequence<ExprKind::Tuple>;
using List = Sequence<ExprKind::List>;
using Set = Sequence<ExprKind::Set>;

/// `{k: v, **d}`: a `**d` entry has a null key.
struct Dict final : Expr {
  static constexpr ExprKind kKind = ExprKind::Dict;
  explicit Dict(SourceRange r) : Expr(kKind, r) {}
  std::vector<ExprPtr> keys;
  std::vector<ExprPtr> values;
};

/// One `for target in iter if cond...` clause of a comprehension.
struct Comprehension {
  SourceRange range;
  ExprPtr target;
  ExprPtr iter;
  std::vector<ExprPtr> ifs;
  bool isAsync = false;
};

/// ListComp, SetComp and GeneratorExp: `elt` for each clause of `generators`.
template <ExprKind K> struct Comp final : Expr {
  static constexpr ExprKind kKind = K;
  Comp(SourceRange r, ExprPtr elt) : Expr(kKind, r), elt(std::move(elt)) {}
  ExprPtr elt;
  std::vector<Comprehension> generators;
};
using ListComp = Comp<ExprKind::ListComp>;
using SetComp = Comp<ExprKind::SetComp>;
using GeneratorExp = Comp<ExprKind::GeneratorExp>;

struct DictComp final : Expr {
  static constexpr ExprKind kKind = ExprKind::DictComp;
  DictComp(SourceRange r, ExprPtr key, ExprPtr value)
      : Expr(kKind, r), key(std::move(key)), value(std::move(value)) {}
  ExprPtr key;
  ExprPtr value;
  std::vector<Comprehension> generators;
};

enum class ParamKind {
  PositionalOnly, ///< before a `/`
  Positional,     ///< positional or keyword
  VarArgs,        ///< `*args`
  KeywordOnly,    ///< after `*` or `*args`
  VarKeywords     ///< `**kwargs`
};

/// A parameter of a def or lambda. `annotation` and `default_` may be null.
struct Param {
  SourceRange range;
  ParamKind kind = ParamKind::Positional;
  std::string name;
  ExprPtr annotation;
  ExprPtr default_;
};

struct Lambda final : Expr {
  static constexpr ExprKind kKind = ExprKind::Lambda;
  explicit Lambda(SourceRange r) : Expr(kKind, r) {}
  std::vector<Param> params;
  ExprPtr body;
};

/// `body if test else orelse`.
struct IfExp final : Expr {
  static constexpr ExprKind kKind = ExprKind::IfExp;
  IfExp(SourceRange r, ExprPtr test, ExprPtr body, ExprPtr orelse)
      : Expr(kKind, r), test(std::move(test)), body(std::move(body)), orelse(std::move(orelse)) {}
  ExprPtr test;
  ExprPtr body;
  ExprPtr orelse;
};

/// `target := value`; the target is a Name.
struct NamedExpr final : Expr {
  static constexpr ExprKind kKind = ExprKind::NamedExpr;
  NamedExpr(SourceRange r, ExprPtr target, ExprPtr value)
      : Expr(kKind, r), target(std::move(target)), value(std::move(value)) {}
  ExprPtr target;
  ExprPtr value;
};

/// `*value` (unpacking in a display, call or assignment target), `await value`,
/// `yield from value`, `yield value` (value may be null for a bare `yield`).
template <ExprKind K> struct Unary final : Expr {
  static constexpr ExprKind kKind = K;
  Unary(SourceRange r, ExprPtr value) : Expr(kKind, r), value(std::move(value)) {}
  ExprPtr value;
};
using Starred = Unary<ExprKind::Starred>;
using Await = Unary<ExprKind::Await>;
using Yield = Unary<ExprKind::Yield>;
using YieldFrom = Unary<ExprKind::YieldFrom>;

//===----------------------------------------------------------------------===//
// Match patterns
//===----------------------------------------------------------------------===//

enum class PatternKind {
  Value,     ///< a literal or dotted name: `value`
  Singleton, ///< None, True, False: `value` (a Constant)
  Sequence,  ///< `[p, *rest]` or `(p, q)`: `children`
  Mapping,   ///< `{k: p, **rest}`: `keys`, `children`, `name` (rest, may be empty)
  Class,     ///< `C(p, kw=q)`: `value` (the class), `children`, `kwNames`, `kwPatterns`
  Star,      ///< `*name` in a sequence (`_` is the wildcard)
  As,        ///< `p as name`, a capture `name` (no child) or the wildcard `_` (no name)
  Or,        ///< `p | q`: `children`
};

struct Pattern {
  Pattern(PatternKind kind, SourceRange range) : kind(kind), range(range) {}
  PatternKind kind;
  SourceRange range;
  ExprPtr value;
  std::string name;
  std::vector<PatternPtr> children;
  std::vector<ExprPtr> keys;
  std::vector<std::string> kwNames;
  std::vector<PatternPtr> kwPatterns;
};

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

enum class StmtKind {
  FunctionDef,
  ClassDef,
  Return,
  Delete,
  Assign,
  AugAssign,
  AnnAssign,
  For,
  While,
  If,
  With,
  Match,
  Raise,
  Try,
  Assert,
  Import,
  ImportFrom,
  Global,
  Nonlocal,
  ExprStmt,
  TypeAlias,
  Pass,
  Break,
  Continue,
};

struct Stmt {
  Stmt(StmtKind kind, SourceRange range) : kind(kind), range(range) {}
  Stmt(const Stmt &) = delete;
  Stmt &operator=(const Stmt &) = delete;
  virtual ~Stmt() = default;

  const StmtKind kind;
  SourceRange range;
};

enum class TypeParamKind { TypeVar, TypeVarTuple, ParamSpec };

/// A PEP 695 type parameter: `T: bound = default`, `*Ts`, `**P` (bound and default may
/// be null).
struct TypeParam {
  SourceRange range;
  TypeParamKind kind = TypeParamKind::TypeVar;
  std::string name;
  ExprPtr bound;
  ExprPtr default_;
};

struct FunctionDef final : Stmt {
  static constexpr StmtKind kKind = StmtKind::FunctionDef;
  FunctionDef(SourceRange r, std::string name, SourceRange nameRange)
      : Stmt(kKind, r), name(std::move(name)), nameRange(nameRange) {}
  std::string name;
  SourceRange nameRange;
  /// Outermost first, as written.
  std::vector<ExprPtr> decorators;
  std::vector<TypeParam> typeParams;
  std::vector<Param> params;
  ExprPtr returns; ///< may be null
  Body body;
  bool isAsync = false;
};

struct ClassDef final : Stmt {
  static constexpr StmtKind kKind = StmtKind::ClassDef;
  ClassDef(SourceRange r, std::string name, SourceRange nameRange)
      : Stmt(kKind, r), name(std::move(name)), nameRange(nameRange) {}
  std::string name;
  SourceRange nameRange;
  std::vector<ExprPtr> decorators;
  std::vector<TypeParam> typeParams;
  std::vector<ExprPtr> bases;
  std::vector<Keyword> keywords;
  Body body;
};

/// `return value` (value may be null).
struct Return final : Stmt {
  static constexpr StmtKind kKind = StmtKind::Return;
  Return(SourceRange r, ExprPtr value) : Stmt(kKind, r), value(std::move(value)) {}
  ExprPtr value;
};

struct Delete final : Stmt {
  static constexpr StmtKind kKind = StmtKind::Delete;
  Delete(SourceRange r, std::vector<ExprPtr> targets)
      : Stmt(kKind, r), targets(std::move(targets)) {}
  std::vector<ExprPtr> targets;
};

/// `t1 = t2 = value`: targets [t1, t2].
struct Assign final : Stmt {
  static constexpr StmtKind kKind = StmtKind::Assign;
  Assign(SourceRange r, std::vector<ExprPtr> targets, ExprPtr value)
      : Stmt(kKind, r), targets(std::move(targets)), value(std::move(value)) {}
  std::vector<ExprPtr> targets;
  ExprPtr value;
};

struct AugAssign final : Stmt {
  static constexpr StmtKind kKind = StmtKind::AugAssign;
  AugAssign(SourceRange r, ExprPtr target, BinOpKind op, ExprPtr value)
      : Stmt(kKind, r), target(std::move(target)), op(op), value(std::move(value)) {}
  ExprPtr target;
  BinOpKind op;
  ExprPtr value;
};

/// `target: annotation = value` (value may be null).
struct AnnAssign final : Stmt {
  static constexpr StmtKind kKind = StmtKind::AnnAssign;
  AnnAssign(SourceRange r, ExprPtr target, ExprPtr annotation, ExprPtr value)
      : Stmt(kKind, r), target(std::move(target)), annotation(std::move(annotation)),
        value(std::move(value)) {}
  ExprPtr target;
  ExprPtr annotation;
  ExprPtr value;
};

struct For final : Stmt {
  static constexpr StmtKind kKind = StmtKind::For;
  For(SourceRange r, ExprPtr target, ExprPtr iter)
      : Stmt(kKind, r), target(std::move(target)), iter(std::move(iter)) {}
  ExprPtr target;
  ExprPtr iter;
  Body body;
  Body orelse;
  bool isAsync = false;
};

struct While final : Stmt {
  static constexpr StmtKind kKind = StmtKind::While;
  While(SourceRange r, ExprPtr test) : Stmt(kKind, r), test(std::move(test)) {}
  ExprPtr test;
  Body body;
  Body orelse;
};

struct If final : Stmt {
  static constexpr StmtKind kKind = StmtKind::If;
  If(SourceRange r, ExprPtr test) : Stmt(kKind, r), test(std::move(test)) {}
  ExprPtr test;
  Body body;
  Body orelse;
};

struct WithItem {
  ExprPtr context;
  ExprPtr vars; ///< may be null
};

struct With final : Stmt {
  static constexpr StmtKind kKind = StmtKind::With;
  explicit With(SourceRange r) : Stmt(kKind, r) {}
  std::vector<WithItem> items;
  Body body;
  bool isAsync = false;
};

struct MatchCase {
  SourceRange range;
  PatternPtr pattern;
  ExprPtr guard; ///< may be null
  Body body;
};

struct Match final : Stmt {
  static constexpr StmtKind kKind = StmtKind::Match;
  Match(SourceRange r, ExprPtr subject) : Stmt(kKind, r), subject(std::move(subject)) {}
  ExprPtr subject;
  std::vector<MatchCase> cases;
};

/// `raise exc from cause` (both may be null).
struct Raise final : Stmt {
  static constexpr StmtKind kKind = StmtKind::Raise;
  Raise(SourceRange r, ExprPtr exc, ExprPtr cause)
      : Stmt(kKind, r), exc(std::move(exc)), cause(std::move(cause)) {}
  ExprPtr exc;
  ExprPtr cause;
};

struct ExceptHandler {
  SourceRange range;
  ExprPtr type;     ///< may be null (bare except)
  std::string name; ///< empty without `as`
  Body body;
};

struct Try final : Stmt {
  static constexpr StmtKind kKind = StmtKind::Try;
  explicit Try(SourceRange r) : Stmt(kKind, r) {}
  Body body;
  std::vector<ExceptHandler> handlers;
  Body orelse;
  Body finalbody;
  bool isStar = false; ///< `except*`
};

struct Assert final : Stmt {
  static constexpr StmtKind kKind = StmtKind::Assert;
  Assert(SourceRange r, ExprPtr test, ExprPtr msg)
      : Stmt(kKind, r), test(std::move(test)), msg(std::move(msg)) {}
  ExprPtr test;
  ExprPtr msg; ///< may be null
};

/// `a.b.c as d`: name "a.b.c", asname "d" (empty without `as`).
struct Alias {
  SourceRange range;
  std::string name;
  std::string asname;
};

struct Import final : Stmt {
  static constexpr StmtKind kKind = StmtKind::Import;
  explicit Import(SourceRange r) : Stmt(kKind, r) {}
  std::vector<Alias> names;
};

/// `from ..mod import a as b`: module "mod" (may be empty), level 2; `import *` is
/// one Alias named "*".
struct ImportFrom final : Stmt {
  static constexpr StmtKind kKind = StmtKind::ImportFrom;
  explicit ImportFrom(SourceRange r) : Stmt(kKind, r) {}
  std::string module;
  unsigned level = 0;
  std::vector<Alias> names;
};

/// Global and Nonlocal.
template <StmtKind K> struct NameList final : Stmt {
  static constexpr StmtKind kKind = K;
  NameList(SourceRange r, std::vector<std::string> names)
      : Stmt(kKind, r), names(std::move(names)) {}
  std::vector<std::string> names;
};
using Global = NameList<StmtKind::Global>;
using Nonlocal = NameList<StmtKind::Nonlocal>;

/// An expression used as a statement (a call, a docstring).
struct ExprStmt final : Stmt {
  static constexpr StmtKind kKind = StmtKind::ExprStmt;
  ExprStmt(SourceRange r, ExprPtr value) : Stmt(kKind, r), value(std::move(value)) {}
  ExprPtr value;
};

/// `type name[params] = value` (Python 3.12).
struct TypeAlias final : Stmt {
  static constexpr StmtKind kKind = StmtKind::TypeAlias;
  TypeAlias(SourceRange r, std::string name, ExprPtr value)
      : Stmt(kKind, r), name(std::move(name)), value(std::move(value)) {}
  std::string name;
  std::vector<TypeParam> typeParams;
  ExprPtr value;
};

/// pass, break and continue.
template <StmtKind K> struct Simple final : Stmt {
  static constexpr StmtKind kKind = K;
  explicit Simple(SourceRange r) : Stmt(kKind, r) {}
};
using Pass = Simple<StmtKind::Pass>;
using Break = Simple<StmtKind::Break>;
using Continue = Simple<StmtKind::Continue>;

/// A parsed file.
struct Module {
  SourceRange range;
  Body body;
};

//===----------------------------------------------------------------------===//
// Casts and names
//===----------------------------------------------------------------------===//

template <typename T, typename N> bool isa(const N &node) { return node.kind == T::kKind; }
template <typename T, typename N> T &cast(N &node) { return static_cast<T &>(node); }
template <typename T, typename N> const T &cast(const N &node) {
  return static_cast<const T &>(node);
}
template <typename T, typename N> T *dynCast(N *node) {
  return node && node->kind == T::kKind ? static_cast<T *>(node) : nullptr;
}
template <typename T, typename N> const T *dynCast(const N *node) {
  return node && node->kind == T::kKind ? static_cast<const T *>(node) : nullptr;
}

/// CPython's class name of the node kind ("Name", "FunctionDef", ...).
std::string_view toString(ExprKind kind);
std::string_view toString(StmtKind kind);
std::string_view toString(PatternKind kind);
/// The operator as written ("+", "not in", ...).
std::string_view toString(UnaryOpKind op);
std::string_view toString(BinOpKind op);
std::string_view toString(BoolOpKind op);
std::string_view toString(CmpOpKind op);
std::string_view toString(ParamKind kind);

} // namespace dkv::py
