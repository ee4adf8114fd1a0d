// The dkv abstract syntax tree: what the parser builds, sema annotates and lowering reads.
#pragma once

#include "prim/DType.h"
#include "prim/Infer.h"
#include "prim/Op.h"
#include "support/Source.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

/// The AST of one `.dk` file.
///
/// Shape (in the style of MLIR Toy / Souffle):
/// - Every node derives from `Node`, has a `Kind` and a `support::SourceRange`, owns its
///   children through `std::unique_ptr` and cannot be copied. Children are never null
///   (the parser substitutes an `ErrorExpr` when it recovers from an error); optional
///   children are documented as "may be null".
/// - Use `isa<T>`, `cast<T>` and `dynCast<T>` (below) to inspect a node's class.
///
/// How a name reaches its declaration (filled in by `frontend::analyze`, see Sema.h):
/// - Every use of a name is a `NameExpr`. After sema succeeds, `NameExpr::decl()` points
///   to the declaring node, which is one of the `Decl` subclasses: `ParamDecl`,
///   `ConstDecl`, `AxisDecl`, `BufferDecl` (kernel parameter, scratch or run_scoped
///   buffer), `SemDecl` (scratch / run_scoped semaphore, or the implicit barrier
///   semaphore owned by `KernelDecl::barrier()`), `LetDecl`, `VarDecl` or `LoopVarDecl`.
///   The pointer is non-owning; declarations outlive every use (they are owned by the
///   same Module). Declarations have stable addresses, so lowering may key maps on them.
/// - `Expr::type()` holds the type computed by sema (TypeKind::Error before sema or
///   where sema reported an error).
/// - Compile-time values: `ParamDecl::value()`, `ConstDecl::value()`, `AxisDecl::size()`,
///   `BufferDecl::shapeValues()`, `SemDecl::dimValues()`, `KernelDecl::gridValues()` and
///   `KernelDecl::collectiveIdValue()` are set by sema. `frontend::evalConst` (Sema.h)
///   evaluates any expression that only depends on them.
/// - Per-device values (`axis_index`, `program_id`, loop variables, lets) are left to
///   lowering, which walks the expression tree itself.
namespace dkv::ast {

using support::SourceRange;

//===----------------------------------------------------------------------===//
// Enumerations
//===----------------------------------------------------------------------===//

/// Memory spaces of buffers and element types: the catalogue's (prim/DType.h).
using prim::DType;
using prim::MemSpace;
/// Direction of a kernel parameter; `None` for scratch and run_scoped buffers.
enum class Direction { None, In, Out, InOut };
/// Semaphore kinds.
enum class SemKind { Regular, Dma, Barrier };
/// Where a buffer or semaphore lives.
/// `PipelineBlock`: a block ref of an `emit_pipeline` body (a view of a pipeline buffer
/// slot or of a VMEM operand, never a buffer of its own).
enum class Storage { KernelParam, Scratch, Scoped, Barrier, PipelineBlock };

using prim::toString; // DType, MemSpace, ComputeOp
std::string_view toString(Direction direction);
std::string_view toString(SemKind kind);
using prim::byteSize;
using prim::isInteger;

/// Unary operators.
enum class UnaryOp { Neg, Not };
/// Binary operators. `Div` is floor division on integers and true division on values;
/// `Mod` has the sign of the divisor (Python). `Min`/`Max` come from `min(a, b)`/`max(a, b)`,
/// `Rem` (truncating remainder, lax.rem) from `rem(a, b)`. `BitAnd`, `BitOr`, `BitXor`,
/// `Shl`, `Shr` are `&`, `|`, `^`, `<<`, `>>` (integers only).
enum class BinaryOp {
  Add,
  Sub,
  Mul,
  Div,
  Mod,
  Min,
  Max,
  Eq,
  Ne,
  Lt,
  Le,
  Gt,
  Ge,
  And,
  Or,
  Rem,
  BitAnd,
  BitOr,
  BitXor,
  Shl,
  Shr,
};
std::string_view toString(UnaryOp op);
std::string_view toString(BinaryOp op);

/// Built-in functions that yield an integer.
enum class Builtin {
  AxisIndex,   ///< axis_index(axis): this device's coordinate (per device)
  AxisSize,    ///< axis_size(axis): the axis size (compile time)
  ProgramId,   ///< program_id(d): grid index along dimension d (per grid step)
  NumPrograms, ///< num_programs(d): grid size along dimension d (compile time)
  Read,        ///< read(sem): the semaphore's current value (run time; only as a let init)
};
std::string_view toString(Builtin builtin);

/// Compute on values (jnp / lax / pltpu functions on loaded refs), only in values
/// stored to refs: the catalogue's ops (prim/Ops.def, docs/language.md "Compute").
using ComputeOp = prim::Op;

/// Methods of a DMA descriptor.
enum class DmaMethod { Start, Wait, WaitSend, WaitRecv };
std::string_view toString(DmaMethod method);

//===----------------------------------------------------------------------===//
// Types (computed by sema)
//===----------------------------------------------------------------------===//

enum class TypeKind {
  Error,         ///< not computed, or an error was reported
  Int,           ///< an integer
  Bool,          ///< a condition
  Float,         ///< a scalar float literal (value expressions only)
  Value,         ///< an array value (a loaded ref or arithmetic on them)
  Ref,           ///< a (sliced) reference to a buffer
  Sem,           ///< a semaphore or a (partly indexed) semaphore array
  Descriptor,    ///< a DMA descriptor (copy / remote_copy)
  DescriptorVar, ///< a descriptor variable (`var c`, or `var cs[n]` with `semRank` dims)
  Axis,          ///< a mesh axis name
  Device,        ///< a device tuple or mapping
  Mask,          ///< an element-wise comparison of values (only as the condition of where)
};
std::string_view toString(TypeKind kind);

/// The type of an expression.
struct Type {
  /// A dimension whose extent is not a compile-time constant (e.g. `a:b` with a
  /// per-device `a`); shape checks skip it and lowering checks it per device.
  static constexpr int64_t kDynamic = prim::kDynamic;

  TypeKind kind = TypeKind::Error;
  DType dtype = DType::F32;   ///< Value, Ref
  std::vector<int64_t> shape; ///< Value, Ref, Mask: extents after dropping single-index dims
  SemKind semKind = SemKind::Regular; ///< Sem
  size_t semRank = 0;                 ///< Sem, DescriptorVar: array dims not yet indexed (0: one)
  bool remote = false;                ///< Descriptor: remote_copy
  bool regular = false;               ///< Descriptor: its semaphores are regular (sem)
  bool runtime = false;               ///< Int: depends on read(sem), known only at run time
  /// Value: weakly typed (JAX): computed from Python numbers and weak values only by
  /// promotion, so it takes the type of what it meets (`where(m, 1.0, 0.0)`).
  bool weak = false;
  /// Int: reads an element of an integer SMEM scratch (BufferDecl::isIntegerScratch): in
  /// a value stored to a ref that read is a load of the element; everywhere else
  /// lowering evaluates the value stored there.
  bool scratch = false;

  static Type error() { return Type{}; }
  static Type simple(TypeKind kind) {
    Type t;
    t.kind = kind;
    return t;
  }
  bool isError() const { return kind == TypeKind::Error; }
  /// Renders the type for diagnostics and the AST printer, e.g. `ref f32[8, 128]`.
  std::string str() const;
};

//===----------------------------------------------------------------------===//
// Node base and RTTI helpers
//===----------------------------------------------------------------------===//

class Node {
public:
  /// Every concrete node class. Ranges First*/Last* group the abstract classes.
  enum class Kind {
    // Declarations.
    ParamDecl,
    ConstDecl,
    AxisDecl,
    BufferDecl,
    SemDecl,
    LetDecl,
    VarDecl,
    LoopVarDecl,
    // Statements.
    ScratchStmt,
    RunScopedStmt,
    LetStmt,
    VarStmt,
    IfStmt,
    ForStmt,
    StoreStmt,
    DmaStmt,
    SignalStmt,
    WaitStmt,
    EmitPipelineStmt,
    // Expressions.
    ErrorExpr,
    IntLiteral,
    FloatLiteral,
    BoolLiteral,
    NameExpr,
    UnaryExpr,
    BinaryExpr,
    CallExpr,
    IndexExpr,
    TupleExpr,
    MappingExpr,
    CopyExpr,
    RemoteCopyExpr,
    ComputeExpr,
    SelectExpr,
    SelectRefExpr,
    // Others.
    Block,
    MeshDecl,
    KernelDecl,
    SequenceDecl,
    Module,

    FirstDecl = ParamDecl,
    LastDecl = LoopVarDecl,
    FirstStmt = ScratchStmt,
    LastStmt = EmitPipelineStmt,
    FirstExpr = ErrorExpr,
    LastExpr = SelectRefExpr,
  };

  Node(const Node &) = delete;
  Node &operator=(const Node &) = delete;
  virtual ~Node() = default;

  Kind kind() const { return kind_; }
  const SourceRange &range() const { return range_; }
  void setRange(SourceRange range) { range_ = range; }

protected:
  Node(Kind kind, SourceRange range) : kind_(kind), range_(range) {}

private:
  const Kind kind_;
  SourceRange range_;
};

std::string_view toString(Node::Kind kind);

/// True if `node` is a `T` (LLVM-style; `T::classof` decides).
template <typename T> bool isa(const Node *node) { return node && T::classof(node); }
template <typename T> bool isa(const Node &node) { return T::classof(&node); }
/// Casts to `T`; the caller guarantees `isa<T>`.
template <typename T> T &cast(Node &node) { return static_cast<T &>(node); }
template <typename T> const T &cast(const Node &node) { return static_cast<const T &>(node); }
/// Casts to `T` or returns null.
template <typename T> T *dynCast(Node *node) {
  return isa<T>(node) ? static_cast<T *>(node) : nullptr;
}
template <typename T> const T *dynCast(const Node *node) {
  return isa<T>(node) ? static_cast<const T *>(node) : nullptr;
}

#define DKV_AST_CLASSOF(K)                                                                         \
  static bool classof(const Node *n) { return n->kind() == Kind::K; }
#define DKV_AST_CLASSOF_RANGE(First, Last)                                                         \
  static bool classof(const Node *n) { return n->kind() >= Kind::First && n->kind() <= Kind::Last; }

class Expr;
class Block;
using ExprPtr = std::unique_ptr<Expr>;

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

/// Base of all expressions; carries the type sema computed.
class Expr : public Node {
public:
  const Type &type() const { return type_; }
  void setType(Type type) { type_ = std::move(type); }
  DKV_AST_CLASSOF_RANGE(FirstExpr, LastExpr)

protected:
  using Node::Node;

private:
  Type type_;
};

/// Stands for an expression the parser could not build (an error was reported).
class ErrorExpr final : public Expr {
public:
  explicit ErrorExpr(SourceRange range) : Expr(Kind::ErrorExpr, range) {}
  DKV_AST_CLASSOF(ErrorExpr)
};

/// `42`.
class IntLiteral final : public Expr {
public:
  IntLiteral(SourceRange range, int64_t value) : Expr(Kind::IntLiteral, range), value_(value) {}
  int64_t value() const { return value_; }
  DKV_AST_CLASSOF(IntLiteral)

private:
  int64_t value_;
};

/// `1.5`, `2.0e-3` (value expressions only). `text()` is the literal as written.
class FloatLiteral final : public Expr {
public:
  FloatLiteral(SourceRange range, double value, std::string text)
      : Expr(Kind::FloatLiteral, range), value_(value), text_(std::move(text)) {}
  double value() const { return value_; }
  const std::string &text() const { return text_; }
  DKV_AST_CLASSOF(FloatLiteral)

private:
  double value_;
  std::string text_;
};

/// `true` / `false`.
class BoolLiteral final : public Expr {
public:
  BoolLiteral(SourceRange range, bool value) : Expr(Kind::BoolLiteral, range), value_(value) {}
  bool value() const { return value_; }
  DKV_AST_CLASSOF(BoolLiteral)

private:
  bool value_;
};

class Decl;

/// A use of a name (including the keyword `barrier`). `decl()` is set by sema.
class NameExpr final : public Expr {
public:
  NameExpr(SourceRange range, std::string name)
      : Expr(Kind::NameExpr, range), name_(std::move(name)) {}
  const std::string &name() const { return name_; }
  /// The declaration this name resolves to; null before sema or if unresolved.
  const Decl *decl() const { return decl_; }
  void setDecl(const Decl *decl) { decl_ = decl; }
  DKV_AST_CLASSOF(NameExpr)

private:
  std::string name_;
  const Decl *decl_ = nullptr;
};

/// `-e`, `not e`.
class UnaryExpr final : public Expr {
public:
  UnaryExpr(SourceRange range, UnaryOp op, ExprPtr operand)
      : Expr(Kind::UnaryExpr, range), op_(op), operand_(std::move(operand)) {}
  UnaryOp op() const { return op_; }
  const Expr &operand() const { return *operand_; }
  Expr &operand() { return *operand_; }
  DKV_AST_CLASSOF(UnaryExpr)

private:
  UnaryOp op_;
  ExprPtr operand_;
};

/// `a + b`, `a == b`, `a and b`, `min(a, b)`, ...
class BinaryExpr final : public Expr {
public:
  BinaryExpr(SourceRange range, BinaryOp op, ExprPtr lhs, ExprPtr rhs)
      : Expr(Kind::BinaryExpr, range), op_(op), lhs_(std::move(lhs)), rhs_(std::move(rhs)) {}
  BinaryOp op() const { return op_; }
  const Expr &lhs() const { return *lhs_; }
  const Expr &rhs() const { return *rhs_; }
  Expr &lhs() { return *lhs_; }
  Expr &rhs() { return *rhs_; }
  DKV_AST_CLASSOF(BinaryExpr)

private:
  BinaryOp op_;
  ExprPtr lhs_, rhs_;
};

/// `select(c, a, b)` (jnp.where / lax.select on scalars): `a` if `c` holds, else `b`.
/// Integers only; both operands are evaluated (as jnp.where does).
class SelectExpr final : public Expr {
public:
  SelectExpr(SourceRange range, ExprPtr cond, ExprPtr a, ExprPtr b)
      : Expr(Kind::SelectExpr, range), cond_(std::move(cond)), a_(std::move(a)), b_(std::move(b)) {}
  const Expr &cond() const { return *cond_; }
  Expr &cond() { return *cond_; }
  const Expr &ifTrue() const { return *a_; }
  Expr &ifTrue() { return *a_; }
  const Expr &ifFalse() const { return *b_; }
  Expr &ifFalse() { return *b_; }
  DKV_AST_CLASSOF(SelectExpr)

private:
  ExprPtr cond_, a_, b_;
};

/// `select_ref(i, a, b, ...)` (Pallas `pl.select_ref(idx, *refs)`): the ref or semaphore
/// that the integer `i` picks, evaluated per device and loop iteration where a DMA is
/// made (only as an operand of copy / remote_copy; docs/language.md "Selected refs").
/// Every choice has the type of the first; the parser guarantees at least two.
class SelectRefExpr final : public Expr {
public:
  SelectRefExpr(SourceRange range, ExprPtr index, std::vector<ExprPtr> choices)
      : Expr(Kind::SelectRefExpr, range), index_(std::move(index)), choices_(std::move(choices)) {}
  const Expr &index() const { return *index_; }
  Expr &index() { return *index_; }
  const std::vector<ExprPtr> &choices() const { return choices_; }
  std::vector<ExprPtr> &choices() { return choices_; }
  DKV_AST_CLASSOF(SelectRefExpr)

private:
  ExprPtr index_;
  std::vector<ExprPtr> choices_;
};

/// `axis_index(x)`, `axis_size(x)`, `program_id(0)`, `num_programs(0)`, `read(s)`.
/// The parser guarantees exactly one argument.
class CallExpr final : public Expr {
public:
  CallExpr(SourceRange range, Builtin builtin, ExprPtr arg)
      : Expr(Kind::CallExpr, range), builtin_(builtin), arg_(std::move(arg)) {}
  Builtin builtin() const { return builtin_; }
  const Expr &arg() const { return *arg_; }
  Expr &arg() { return *arg_; }
  /// Set by sema for the compile-time builtins `axis_size` and `num_programs`.
  std::optional<int64_t> value() const { return value_; }
  void setValue(std::optional<int64_t> value) { value_ = value; }
  DKV_AST_CLASSOF(CallExpr)

private:
  Builtin builtin_;
  ExprPtr arg_;
  std::optional<int64_t> value_;
};

/// One subscript of an IndexExpr: `i` (Index: `lo` set), `a:b` (Range: `lo`/`hi` may
/// each be null for an open end) or `:` (Full: both null).
struct Subscript {
  enum class Kind { Index, Range, Full };
  Kind kind = Kind::Full;
  SourceRange range;
  ExprPtr lo; ///< Index: the index; Range: the start (null: 0)
  ExprPtr hi; ///< Range: the end, exclusive (null: the dimension's size)
};

/// `name[s1, ..., sk]` or `name[...]`: a slice of a ref (omitted trailing dims are
/// whole) or an element / sub-array of a semaphore array (`recv[s]`).
class IndexExpr final : public Expr {
public:
  IndexExpr(SourceRange range, std::unique_ptr<NameExpr> base, std::vector<Subscript> subscripts,
            bool ellipsis)
      : Expr(Kind::IndexExpr, range), base_(std::move(base)), subscripts_(std::move(subscripts)),
        ellipsis_(ellipsis) {}
  const NameExpr &base() const { return *base_; }
  NameExpr &base() { return *base_; }
  const std::vector<Subscript> &subscripts() const { return subscripts_; }
  std::vector<Subscript> &subscripts() { return subscripts_; }
  /// `name[...]` (then subscripts() is empty).
  bool ellipsis() const { return ellipsis_; }
  DKV_AST_CLASSOF(IndexExpr)

private:
  std::unique_ptr<NameExpr> base_;
  std::vector<Subscript> subscripts_;
  bool ellipsis_;
};

/// `(a, b)`: mesh coordinates of a device, one per axis (only as a `device =`), or a
/// shape argument; `[a, b]` (`list()`): the operands of concatenate.
class TupleExpr final : public Expr {
public:
  TupleExpr(SourceRange range, std::vector<ExprPtr> elements, bool list = false)
      : Expr(Kind::TupleExpr, range), elements_(std::move(elements)), list_(list) {}
  const std::vector<ExprPtr> &elements() const { return elements_; }
  std::vector<ExprPtr> &elements() { return elements_; }
  /// Written with brackets (a Python list).
  bool list() const { return list_; }
  DKV_AST_CLASSOF(TupleExpr)

private:
  std::vector<ExprPtr> elements_;
  bool list_;
};

/// `{y: 1}`: mesh coordinates by axis; unnamed axes are the caller's own (only as a
/// `device =`). Each key is a NameExpr resolved to an AxisDecl by sema.
class MappingExpr final : public Expr {
public:
  struct Entry {
    std::unique_ptr<NameExpr> axis;
    ExprPtr value;
  };
  MappingExpr(SourceRange range, std::vector<Entry> entries)
      : Expr(Kind::MappingExpr, range), entries_(std::move(entries)) {}
  const std::vector<Entry> &entries() const { return entries_; }
  std::vector<Entry> &entries() { return entries_; }
  DKV_AST_CLASSOF(MappingExpr)

private:
  std::vector<Entry> entries_;
};

/// `copy(src, dst, sem)`: a local DMA descriptor (only as a let init or the value of a
/// descriptor assignment). `async_copy(...)` (Pallas `pltpu.async_copy`) is the same
/// descriptor, started where it is made: `started()`.
class CopyExpr final : public Expr {
public:
  CopyExpr(SourceRange range, ExprPtr src, ExprPtr dst, ExprPtr sem, bool started = false)
      : Expr(Kind::CopyExpr, range), src_(std::move(src)), dst_(std::move(dst)),
        sem_(std::move(sem)), started_(started) {}
  bool started() const { return started_; }
  const Expr &src() const { return *src_; }
  const Expr &dst() const { return *dst_; }
  const Expr &sem() const { return *sem_; }
  Expr &src() { return *src_; }
  Expr &dst() { return *dst_; }
  Expr &sem() { return *sem_; }
  DKV_AST_CLASSOF(CopyExpr)

private:
  ExprPtr src_, dst_, sem_;
  bool started_;
};

/// `remote_copy(src, dst, send, recv, device = d)`: a remote DMA descriptor (only as a
/// let init or the value of a descriptor assignment). `dst` and `recv` are resolved on
/// the target device. `async_remote_copy(...)` (Pallas `pltpu.async_remote_copy`) is the
/// same descriptor, started where it is made: `started()`.
class RemoteCopyExpr final : public Expr {
public:
  RemoteCopyExpr(SourceRange range, ExprPtr src, ExprPtr dst, ExprPtr sendSem, ExprPtr recvSem,
                 ExprPtr device, bool started = false)
      : Expr(Kind::RemoteCopyExpr, range), src_(std::move(src)), dst_(std::move(dst)),
        sendSem_(std::move(sendSem)), recvSem_(std::move(recvSem)), device_(std::move(device)),
        started_(started) {}
  bool started() const { return started_; }
  const Expr &src() const { return *src_; }
  const Expr &dst() const { return *dst_; }
  const Expr &sendSem() const { return *sendSem_; }
  const Expr &recvSem() const { return *recvSem_; }
  /// An integer (logical id), a TupleExpr or a MappingExpr.
  const Expr &device() const { return *device_; }
  Expr &src() { return *src_; }
  Expr &dst() { return *dst_; }
  Expr &sendSem() { return *sendSem_; }
  Expr &recvSem() { return *recvSem_; }
  Expr &device() { return *device_; }
  DKV_AST_CLASSOF(RemoteCopyExpr)

private:
  ExprPtr src_, dst_, sendSem_, recvSem_, device_;
  bool started_;
};

/// An application of a catalogue op written as a call (prim/Ops.def): `dot(a, b)`,
/// `astype(x, bf16)`, `sum(x, axis = 1)`, `where(x > 0.0, x, 0.0)`, `maximum(a, b)`,
/// `concatenate([a, b], axis = 1)`, `split(x, 2, axis = -1)` (one part, in a tuple let),
/// `gelu(x, approximate = false)`, `zeros((4, 8), f32)`, `broadcasted_iota(i32, (4, 8),
/// 0)`, ...: compute on values (only in a value stored to a ref or bound by a let). The
/// arguments are bound to the op's `.dk` signature and kept by the kind of their
/// parameter (prim::ParamKind): `operands` the `array` / `cond` / `arrays` ones in order
/// (none for zeros and broadcasted_iota); `dtype` the `dtype` one (the target /
/// preferred / created element type); `axis` the `axis` one (null: its default: every
/// axis of a reduction, axis 0 of concatenate and split); `dims` the `shape` one (the new
/// shape of a reshape, zeros and broadcasted_iota) or the `int` one (the section count
/// of split, one element); `flag(name)` the `bool` ones given (gelu's `approximate`, a
/// reduction's `keepdims`).
class ComputeExpr final : public Expr {
public:
  ComputeExpr(SourceRange range, ComputeOp op, std::vector<ExprPtr> operands,
              std::optional<DType> dtype, ExprPtr axis, std::vector<ExprPtr> dims)
      : Expr(Kind::ComputeExpr, range), op_(op), operands_(std::move(operands)), dtype_(dtype),
        axis_(std::move(axis)), dims_(std::move(dims)) {}
  ComputeOp op() const { return op_; }
  const std::vector<ExprPtr> &operands() const { return operands_; }
  std::vector<ExprPtr> &operands() { return operands_; }
  std::optional<DType> dtype() const { return dtype_; }
  const Expr *axis() const { return axis_.get(); }
  Expr *axis() { return axis_.get(); }
  const std::vector<ExprPtr> &dims() const { return dims_; }
  std::vector<ExprPtr> &dims() { return dims_; }
  /// Set by sema: the reduction axis in 0..rank-1 (a negative axis counts from the end).
  std::optional<int64_t> axisValue() const { return axisValue_; }
  void setAxisValue(std::optional<int64_t> v) { axisValue_ = v; }
  /// Set by sema: the shape of a reshape, zeros or broadcasted_iota; for split the
  /// section count.
  const std::vector<int64_t> &dimValues() const { return dimValues_; }
  void setDimValues(std::vector<int64_t> v) { dimValues_ = std::move(v); }
  /// Split: which part of the operand this expression is (the position of its name in
  /// the tuple let).
  int64_t part() const { return part_; }
  void setPart(int64_t part) { part_ = part; }
  /// A `bool` argument as given (nullopt: absent, its default applies).
  std::optional<bool> flag(std::string_view name) const {
    for (const auto &[n, v] : flags_)
      if (n == name)
        return v;
    return std::nullopt;
  }
  void setFlag(std::string name, bool value) {
    for (auto &[n, v] : flags_)
      if (n == name) {
        v = value;
        return;
      }
    flags_.emplace_back(std::move(name), value);
  }
  const std::vector<std::pair<std::string, bool>> &flags() const { return flags_; }
  /// Gelu: the tanh approximation (jax.nn.gelu's default, approximate=True) or erf.
  bool approximate() const { return flag("approximate").value_or(true); }
  void setApproximate(bool a) { setFlag("approximate", a); }
  /// Reductions: keep the reduced axis with extent 1 (jnp.sum(keepdims=True)).
  bool keepdims() const { return flag("keepdims").value_or(false); }
  DKV_AST_CLASSOF(ComputeExpr)

private:
  ComputeOp op_;
  std::vector<ExprPtr> operands_;
  std::optional<DType> dtype_;
  ExprPtr axis_;
  std::vector<ExprPtr> dims_;
  std::optional<int64_t> axisValue_;
  std::vector<int64_t> dimValues_;
  int64_t part_ = 0;
  std::vector<std::pair<std::string, bool>> flags_;
};

//===----------------------------------------------------------------------===//
// Declarations
//===----------------------------------------------------------------------===//

/// Base of everything a NameExpr can resolve to.
class Decl : public Node {
public:
  const std::string &name() const { return name_; }
  /// Range of the declared name only (for "declared here" notes).
  const SourceRange &nameRange() const { return nameRange_; }
  DKV_AST_CLASSOF_RANGE(FirstDecl, LastDecl)

protected:
  Decl(Kind kind, SourceRange range, std::string name, SourceRange nameRange)
      : Node(kind, range), name_(std::move(name)), nameRange_(nameRange) {}

private:
  std::string name_;
  SourceRange nameRange_;
};

/// `param N = 4` or `param N` (then a -D / --devices value is required).
class ParamDecl final : public Decl {
public:
  ParamDecl(SourceRange range, std::string name, SourceRange nameRange, ExprPtr defaultValue)
      : Decl(Kind::ParamDecl, range, std::move(name), nameRange),
        defaultValue_(std::move(defaultValue)) {}
  /// May be null.
  const Expr *defaultValue() const { return defaultValue_.get(); }
  Expr *defaultValue() { return defaultValue_.get(); }
  /// The value in effect (a define or the default); set by sema.
  std::optional<int64_t> value() const { return value_; }
  void setValue(std::optional<int64_t> value) { value_ = value; }
  DKV_AST_CLASSOF(ParamDecl)

private:
  ExprPtr defaultValue_;
  std::optional<int64_t> value_;
};

/// `const STEPS = N - 1`.
class ConstDecl final : public Decl {
public:
  ConstDecl(SourceRange range, std::string name, SourceRange nameRange, ExprPtr init)
      : Decl(Kind::ConstDecl, range, std::move(name), nameRange), init_(std::move(init)) {}
  const Expr &init() const { return *init_; }
  Expr &init() { return *init_; }
  std::optional<int64_t> value() const { return value_; }
  void setValue(std::optional<int64_t> value) { value_ = value; }
  DKV_AST_CLASSOF(ConstDecl)

private:
  ExprPtr init_;
  std::optional<int64_t> value_;
};

/// One axis `x = N` of the mesh.
class AxisDecl final : public Decl {
public:
  AxisDecl(SourceRange range, std::string name, SourceRange nameRange, ExprPtr sizeExpr,
           size_t index)
      : Decl(Kind::AxisDecl, range, std::move(name), nameRange), sizeExpr_(std::move(sizeExpr)),
        index_(index) {}
  const Expr &sizeExpr() const { return *sizeExpr_; }
  Expr &sizeExpr() { return *sizeExpr_; }
  /// Position of the axis in the mesh (0 = major); 0 for the TensorCore axis.
  size_t index() const { return index_; }
  /// The axis of a `tensorcore_mesh` (the cores of each device), not an axis of devices.
  bool isCore() const { return core_; }
  void setCore(bool core) { core_ = core; }
  /// The size; set by sema.
  std::optional<int64_t> size() const { return size_; }
  void setSize(std::optional<int64_t> size) { size_ = size; }
  DKV_AST_CLASSOF(AxisDecl)

private:
  ExprPtr sizeExpr_;
  size_t index_;
  bool core_ = false;
  std::optional<int64_t> size_;
};

/// A nested list literal `[[0, 8], [8, 0]]` (table contents): `elements` row-major,
/// `shape` the list's nesting (outermost first). The parser checks that it is
/// rectangular.
struct TableLiteral {
  SourceRange range;
  std::vector<int64_t> shape;
  std::vector<ExprPtr> elements;
};

/// A buffer: a kernel parameter (`in x: hbm f32[8, 128]`), a scratch buffer
/// (`scratch buf: vmem f32[2, 8]`) or a run_scoped one. An empty shape is a scalar ref.
class BufferDecl final : public Decl {
public:
  BufferDecl(SourceRange range, std::string name, SourceRange nameRange, Storage storage,
             Direction direction, MemSpace space, DType dtype, std::vector<ExprPtr> shape)
      : Decl(Kind::BufferDecl, range, std::move(name), nameRange), storage_(storage),
        direction_(direction), space_(space), dtype_(dtype), shape_(std::move(shape)) {}
  Storage storage() const { return storage_; }
  /// Direction::None unless storage() is KernelParam.
  Direction direction() const { return direction_; }
  MemSpace space() const { return space_; }
  DType dtype() const { return dtype_; }
  /// Sema sets the element type of an emit_pipeline block ref (its operand's).
  void setDType(DType dtype) { dtype_ = dtype; }
  const std::vector<ExprPtr> &shape() const { return shape_; }
  std::vector<ExprPtr> &shape() { return shape_; }
  /// One extent per dimension; set by sema (empty if the shape had errors).
  const std::vector<int64_t> &shapeValues() const { return shapeValues_; }
  void setShapeValues(std::vector<int64_t> values) { shapeValues_ = std::move(values); }

  /// A kernel parameter with contents (`in sizes: smem i32[4] = [...]`) is a table:
  /// a scalar-prefetch / SMEM integer array whose values the instance fixes. So is a
  /// parameter of a kernel that a sequence calls with one of its tables (no contents of
  /// its own: each call binds the sequence's table, docs/language.md "Kernel sequences").
  bool isTable() const { return tableInit_ != nullptr || tableFromCall_; }
  /// True for a kernel parameter that the sequence's calls pass a table (set by sema
  /// before the kernels are checked; its contents are the argument's, per call).
  bool tableFromCall() const { return tableFromCall_; }
  void setTableFromCall(bool fromCall) { tableFromCall_ = fromCall; }
  /// The default contents as written (may be null).
  const TableLiteral *tableInit() const { return tableInit_.get(); }
  TableLiteral *tableInit() { return tableInit_.get(); }
  void setTableInit(std::unique_ptr<TableLiteral> init) { tableInit_ = std::move(init); }
  std::unique_ptr<TableLiteral> releaseTableInit() { return std::move(tableInit_); }
  /// The contents in effect, set by sema: `rows` rows of the table's element count, row
  /// d for device d, or one row for every device (row-major elements). Empty for a
  /// table from a call (tableFromCall): lowering reads the argument's.
  const std::vector<std::vector<int64_t>> &tableRows() const { return tableRows_; }
  void setTableRows(std::vector<std::vector<int64_t>> rows) { tableRows_ = std::move(rows); }
  /// An SMEM scratch (or run_scoped) buffer of an integer element type: the kernel's
  /// integer metadata (Pallas `pltpu.SMEM((n,), jnp.int32)` scratch). Its elements read
  /// with one single index per dimension are integers lowering evaluates, from the values
  /// stored there in program order (docs/language.md "Integer scratch").
  bool isIntegerScratch() const {
    return (storage_ == Storage::Scratch || storage_ == Storage::Scoped) &&
           space_ == MemSpace::Smem && !shape_.empty() && isInteger(dtype_);
  }
  /// Set by sema for an integer scratch that a DMA writes: its elements hold data then,
  /// and lowering refuses to evaluate them.
  bool dmaWritten() const { return dmaWritten_; }
  void setDmaWritten(bool w) { dmaWritten_ = w; }
  /// Where the contents came from: "default", "-T" or a file name (for reports).
  const std::string &tableOrigin() const { return tableOrigin_; }
  void setTableOrigin(std::string origin) { tableOrigin_ = std::move(origin); }
  DKV_AST_CLASSOF(BufferDecl)

private:
  std::unique_ptr<TableLiteral> tableInit_;
  bool tableFromCall_ = false;
  bool dmaWritten_ = false;
  std::vector<std::vector<int64_t>> tableRows_;
  std::string tableOrigin_;
  Storage storage_;
  Direction direction_;
  MemSpace space_;
  DType dtype_;
  std::vector<ExprPtr> shape_;
  std::vector<int64_t> shapeValues_;
};

/// A semaphore or semaphore array: `scratch s: sem`, `scratch r: dma_sem[N - 1]`, a
/// run_scoped one, or the kernel's implicit `barrier` (Storage::Barrier, kind Barrier).
class SemDecl final : public Decl {
public:
  SemDecl(SourceRange range, std::string name, SourceRange nameRange, Storage storage,
          SemKind semKind, std::vector<ExprPtr> dims)
      : Decl(Kind::SemDecl, range, std::move(name), nameRange), storage_(storage),
        semKind_(semKind), dims_(std::move(dims)) {}
  Storage storage() const { return storage_; }
  SemKind semKind() const { return semKind_; }
  /// Array dimensions (empty: one semaphore).
  const std::vector<ExprPtr> &dims() const { return dims_; }
  std::vector<ExprPtr> &dims() { return dims_; }
  /// One extent per dimension; set by sema.
  const std::vector<int64_t> &dimValues() const { return dimValues_; }
  void setDimValues(std::vector<int64_t> values) { dimValues_ = std::move(values); }
  DKV_AST_CLASSOF(SemDecl)

private:
  Storage storage_;
  SemKind semKind_;
  std::vector<ExprPtr> dims_;
  std::vector<int64_t> dimValues_;
};

/// `let name = init`: an integer, a condition, a `read(sem)` or a DMA descriptor
/// (`copy(...)` / `remote_copy(...)`). Owned by its LetStmt.
class LetDecl final : public Decl {
public:
  LetDecl(SourceRange range, std::string name, SourceRange nameRange, ExprPtr init)
      : Decl(Kind::LetDecl, range, std::move(name), nameRange), init_(std::move(init)) {}
  const Expr &init() const { return *init_; }
  Expr &init() { return *init_; }
  DKV_AST_CLASSOF(LetDecl)

private:
  ExprPtr init_;
};

/// `var name` or `var name[d1, ...]`: a descriptor variable (a Python variable that
/// holds a DMA descriptor or None, or a list of them). Unassigned (None) where it is
/// declared; `name = copy(...)` / `name[i] = c` assign it, `if name` tests whether it is
/// assigned. `var name = expr` (with an initial value) is an integer variable instead (a
/// Python variable rebound to integers, e.g. a `lax.fori_loop` carry), or, when the
/// value is an array, a value variable (a Python name rebound to arrays: `acc = acc +
/// x`); `name = expr` and `name += expr` rebind it. Owned by its VarStmt.
class VarDecl final : public Decl {
public:
  VarDecl(SourceRange range, std::string name, SourceRange nameRange, std::vector<ExprPtr> dims,
          ExprPtr init = nullptr)
      : Decl(Kind::VarDecl, range, std::move(name), nameRange), dims_(std::move(dims)),
        init_(std::move(init)) {}
  /// The initial value of an integer or value variable; null for a descriptor variable.
  const Expr *init() const { return init_.get(); }
  Expr *init() { return init_.get(); }
  /// An integer variable (an initial value that is not an array).
  bool isInteger() const { return init_ != nullptr && !isValue_; }
  /// A value variable: set by sema when the initial value is an array.
  bool isValue() const { return isValue_; }
  void setIsValue(bool v) { isValue_ = v; }
  /// Array dimensions (empty: one descriptor).
  const std::vector<ExprPtr> &dims() const { return dims_; }
  std::vector<ExprPtr> &dims() { return dims_; }
  /// One extent per dimension; set by sema.
  const std::vector<int64_t> &dimValues() const { return dimValues_; }
  void setDimValues(std::vector<int64_t> values) { dimValues_ = std::move(values); }
  DKV_AST_CLASSOF(VarDecl)

private:
  std::vector<ExprPtr> dims_;
  ExprPtr init_;
  bool isValue_ = false;
  std::vector<int64_t> dimValues_;
};

/// The variable of a `for` loop. Owned by its ForStmt.
class LoopVarDecl final : public Decl {
public:
  LoopVarDecl(SourceRange range, std::string name)
      : Decl(Kind::LoopVarDecl, range, std::move(name), range) {}
  DKV_AST_CLASSOF(LoopVarDecl)
};

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

class Stmt : public Node {
public:
  DKV_AST_CLASSOF_RANGE(FirstStmt, LastStmt)

protected:
  using Node::Node;
};
using StmtPtr = std::unique_ptr<Stmt>;

/// `{ stmt* }`.
class Block final : public Node {
public:
  Block(SourceRange range, std::vector<StmtPtr> stmts)
      : Node(Kind::Block, range), stmts_(std::move(stmts)) {}
  const std::vector<StmtPtr> &stmts() const { return stmts_; }
  std::vector<StmtPtr> &stmts() { return stmts_; }
  DKV_AST_CLASSOF(Block)

private:
  std::vector<StmtPtr> stmts_;
};

/// `scratch a: vmem f32[8], s: dma_sem[2]`: declarations visible until the end of the
/// enclosing block; each is a BufferDecl or a SemDecl (Storage::Scratch). Scratch
/// persists across grid steps.
class ScratchStmt final : public Stmt {
public:
  ScratchStmt(SourceRange range, std::vector<std::unique_ptr<Decl>> decls)
      : Stmt(Kind::ScratchStmt, range), decls_(std::move(decls)) {}
  const std::vector<std::unique_ptr<Decl>> &decls() const { return decls_; }
  std::vector<std::unique_ptr<Decl>> &decls() { return decls_; }
  DKV_AST_CLASSOF(ScratchStmt)

private:
  std::vector<std::unique_ptr<Decl>> decls_;
};

/// `run_scoped(tmp: vmem f32[8], s: dma_sem) { ... }`: buffers and semaphores
/// (Storage::Scoped) that live only during the block.
class RunScopedStmt final : public Stmt {
public:
  RunScopedStmt(SourceRange range, std::vector<std::unique_ptr<Decl>> decls,
                std::unique_ptr<Block> body)
      : Stmt(Kind::RunScopedStmt, range), decls_(std::move(decls)), body_(std::move(body)) {}
  const std::vector<std::unique_ptr<Decl>> &decls() const { return decls_; }
  std::vector<std::unique_ptr<Decl>> &decls() { return decls_; }
  const Block &body() const { return *body_; }
  Block &body() { return *body_; }
  DKV_AST_CLASSOF(RunScopedStmt)

private:
  std::vector<std::unique_ptr<Decl>> decls_;
  std::unique_ptr<Block> body_;
};

/// `let name = init`.
/// `let a, b = split(x, 2, axis = k)` (Python's tuple unpacking of jnp.split) is one
/// LetStmt per name, in order, each binding its part (ComputeExpr::part) of the split;
/// `tupleSize()` is the number of names (1 for a plain let) and `tupleIndex()` this
/// name's position, so that printers write the statement as it was written.
class LetStmt final : public Stmt {
public:
  LetStmt(SourceRange range, std::unique_ptr<LetDecl> decl, size_t tupleIndex = 0,
          size_t tupleSize = 1)
      : Stmt(Kind::LetStmt, range), decl_(std::move(decl)), tupleIndex_(tupleIndex),
        tupleSize_(tupleSize) {}
  const LetDecl &decl() const { return *decl_; }
  LetDecl &decl() { return *decl_; }
  size_t tupleIndex() const { return tupleIndex_; }
  size_t tupleSize() const { return tupleSize_; }
  /// Every name of the tuple let, in order (set on each of its LetStmts).
  const std::vector<std::string> &tupleNames() const { return tupleNames_; }
  void setTupleNames(std::vector<std::string> names) { tupleNames_ = std::move(names); }
  DKV_AST_CLASSOF(LetStmt)

private:
  std::unique_ptr<LetDecl> decl_;
  size_t tupleIndex_;
  size_t tupleSize_;
  std::vector<std::string> tupleNames_;
};

/// `var a, b[n]`: descriptor variables, unassigned, visible until the end of the block.
class VarStmt final : public Stmt {
public:
  VarStmt(SourceRange range, std::vector<std::unique_ptr<VarDecl>> decls)
      : Stmt(Kind::VarStmt, range), decls_(std::move(decls)) {}
  const std::vector<std::unique_ptr<VarDecl>> &decls() const { return decls_; }
  std::vector<std::unique_ptr<VarDecl>> &decls() { return decls_; }
  DKV_AST_CLASSOF(VarStmt)

private:
  std::vector<std::unique_ptr<VarDecl>> decls_;
};

/// `if c1 { } else if c2 { } else { }`: the branches in order (at least one) and an
/// optional else block. Else-if chains stay flat.
class IfStmt final : public Stmt {
public:
  struct Branch {
    ExprPtr cond;
    std::unique_ptr<Block> body;
  };
  IfStmt(SourceRange range, std::vector<Branch> branches, std::unique_ptr<Block> elseBody)
      : Stmt(Kind::IfStmt, range), branches_(std::move(branches)), elseBody_(std::move(elseBody)) {}
  const std::vector<Branch> &branches() const { return branches_; }
  std::vector<Branch> &branches() { return branches_; }
  /// May be null.
  const Block *elseBody() const { return elseBody_.get(); }
  Block *elseBody() { return elseBody_.get(); }
  DKV_AST_CLASSOF(IfStmt)

private:
  std::vector<Branch> branches_;
  std::unique_ptr<Block> elseBody_;
};

/// `for i in lo .. hi { }` (half-open).
class ForStmt final : public Stmt {
public:
  ForStmt(SourceRange range, std::unique_ptr<LoopVarDecl> var, ExprPtr lo, ExprPtr hi,
          std::unique_ptr<Block> body)
      : Stmt(Kind::ForStmt, range), var_(std::move(var)), lo_(std::move(lo)), hi_(std::move(hi)),
        body_(std::move(body)) {}
  const LoopVarDecl &var() const { return *var_; }
  LoopVarDecl &var() { return *var_; }
  const Expr &lo() const { return *lo_; }
  const Expr &hi() const { return *hi_; }
  Expr &lo() { return *lo_; }
  Expr &hi() { return *hi_; }
  const Block &body() const { return *body_; }
  Block &body() { return *body_; }
  DKV_AST_CLASSOF(ForStmt)

private:
  std::unique_ptr<LoopVarDecl> var_;
  ExprPtr lo_, hi_;
  std::unique_ptr<Block> body_;
};

/// `target = value` or `target += value` (accumulate). `target` is a NameExpr or an
/// IndexExpr naming a ref, or (`=` only) a descriptor variable or one element of a
/// descriptor array, and then `value` is a descriptor (sema: `isDescriptorAssign`).
class StoreStmt final : public Stmt {
public:
  StoreStmt(SourceRange range, ExprPtr target, bool accumulate, ExprPtr value)
      : Stmt(Kind::StoreStmt, range), target_(std::move(target)), accumulate_(accumulate),
        value_(std::move(value)) {}
  const Expr &target() const { return *target_; }
  Expr &target() { return *target_; }
  bool accumulate() const { return accumulate_; }
  const Expr &value() const { return *value_; }
  Expr &value() { return *value_; }
  DKV_AST_CLASSOF(StoreStmt)

private:
  ExprPtr target_;
  bool accumulate_;
  ExprPtr value_;
};

/// `c.start()`, `c.wait()`, `c.wait_send()`, `c.wait_recv()` on a descriptor let, a
/// descriptor variable (`c`, a NameExpr) or an element of a descriptor array (`cs[i]`,
/// an IndexExpr).
class DmaStmt final : public Stmt {
public:
  DmaStmt(SourceRange range, ExprPtr descriptor, DmaMethod method, ExprPtr priority = nullptr)
      : Stmt(Kind::DmaStmt, range), descriptor_(std::move(descriptor)), method_(method),
        priority_(std::move(priority)) {}
  /// `c.start(priority = p)` (Pallas `AsyncCopyDescriptor.start(priority=...)`); may be
  /// null (priority 0). Only on start().
  const Expr *priority() const { return priority_.get(); }
  Expr *priority() { return priority_.get(); }
  /// Set by sema: the priority's value (0 without one).
  int64_t priorityValue() const { return priorityValue_; }
  void setPriorityValue(int64_t p) { priorityValue_ = p; }
  const Expr &descriptor() const { return *descriptor_; }
  Expr &descriptor() { return *descriptor_; }
  /// The name the descriptor expression starts with.
  const NameExpr &descriptorName() const;
  DmaMethod method() const { return method_; }
  DKV_AST_CLASSOF(DmaStmt)

private:
  ExprPtr descriptor_;
  DmaMethod method_;
  ExprPtr priority_;
  int64_t priorityValue_ = 0;
};

/// `signal(sem, inc, device = d)`.
class SignalStmt final : public Stmt {
public:
  SignalStmt(SourceRange range, ExprPtr sem, ExprPtr inc, ExprPtr device,
             ExprPtr coreIndex = nullptr)
      : Stmt(Kind::SignalStmt, range), sem_(std::move(sem)), inc_(std::move(inc)),
        device_(std::move(device)), coreIndex_(std::move(coreIndex)) {}
  const Expr &sem() const { return *sem_; }
  Expr &sem() { return *sem_; }
  /// May be null (increment 1).
  const Expr *inc() const { return inc_.get(); }
  Expr *inc() { return inc_.get(); }
  /// May be null (the local device). Else an integer, a TupleExpr or a MappingExpr.
  const Expr *device() const { return device_.get(); }
  Expr *device() { return device_.get(); }
  /// May be null. `core_index = i` (Pallas' `core_index=`): core i of the target device.
  const Expr *coreIndex() const { return coreIndex_.get(); }
  Expr *coreIndex() { return coreIndex_.get(); }
  DKV_AST_CLASSOF(SignalStmt)

private:
  ExprPtr sem_, inc_, device_, coreIndex_;
};

/// `wait(sem, value)`.
class WaitStmt final : public Stmt {
public:
  WaitStmt(SourceRange range, ExprPtr sem, ExprPtr value)
      : Stmt(Kind::WaitStmt, range), sem_(std::move(sem)), value_(std::move(value)) {}
  const Expr &sem() const { return *sem_; }
  Expr &sem() { return *sem_; }
  /// May be null (value 1).
  const Expr *value() const { return value_.get(); }
  Expr *value() { return value_.get(); }
  DKV_AST_CLASSOF(WaitStmt)

private:
  ExprPtr sem_, value_;
};

/// One operand of `emit_pipeline`: `BlockSpec((b0, ...), lambda i, j: (e0, ...))` in
/// `in_specs` or `out_specs`, the ref passed for it, and the body's block ref.
struct PipelineOperand {
  bool output = false;   ///< from out_specs
  SourceRange specRange; ///< the BlockSpec(...)
  /// The index map's parameters (one per grid dimension), its result (block indices).
  std::vector<std::unique_ptr<LoopVarDecl>> mapParams;
  std::vector<ExprPtr> mapResult;
  SourceRange mapRange; ///< the lambda
  /// The ref passed to the pipeline (a NameExpr or IndexExpr naming a buffer).
  ExprPtr ref;
  /// The body's block ref (Storage::PipelineBlock, vmem): its shape expressions are the
  /// BlockSpec's block shape; sema sets its element type to the operand's.
  std::unique_ptr<BufferDecl> block;
};

/// `emit_pipeline(grid = (g0, ...), in_specs = [...], out_specs = [...])(refs...)
/// lambda blk0, blk1 { body }`: Pallas' `pltpu.emit_pipeline(body, grid=..., in_specs=...,
/// out_specs=...)(refs...)`. Operands are the in_specs' in order, then the out_specs';
/// lowering expands it into the copies, semaphores and waits Pallas emits
/// (docs/model.md "emit_pipeline").
class EmitPipelineStmt final : public Stmt {
public:
  EmitPipelineStmt(SourceRange range, std::vector<ExprPtr> grid,
                   std::vector<PipelineOperand> operands, std::unique_ptr<Block> body)
      : Stmt(Kind::EmitPipelineStmt, range), grid_(std::move(grid)), operands_(std::move(operands)),
        body_(std::move(body)) {}
  const std::vector<ExprPtr> &grid() const { return grid_; }
  std::vector<ExprPtr> &grid() { return grid_; }
  /// One extent per grid dimension; set by sema.
  const std::vector<int64_t> &gridValues() const { return gridValues_; }
  void setGridValues(std::vector<int64_t> values) { gridValues_ = std::move(values); }
  const std::vector<PipelineOperand> &operands() const { return operands_; }
  std::vector<PipelineOperand> &operands() { return operands_; }
  const Block &body() const { return *body_; }
  Block &body() { return *body_; }
  DKV_AST_CLASSOF(EmitPipelineStmt)

private:
  std::vector<ExprPtr> grid_;
  std::vector<int64_t> gridValues_;
  std::vector<PipelineOperand> operands_;
  std::unique_ptr<Block> body_;
};

//===----------------------------------------------------------------------===//
// Top level
//===----------------------------------------------------------------------===//

/// `mesh x = 2, y = 2` (axes of devices), or `tensorcore_mesh core = 2` (the one axis of
/// a TensorCore mesh, pltpu.create_tensorcore_mesh: the cores of each device, whose
/// AxisDecl isCore()).
class MeshDecl final : public Node {
public:
  MeshDecl(SourceRange range, std::vector<std::unique_ptr<AxisDecl>> axes, bool tensorCore = false)
      : Node(Kind::MeshDecl, range), axes_(std::move(axes)), tensorCore_(tensorCore) {
    for (auto &axis : axes_)
      axis->setCore(tensorCore);
  }
  const std::vector<std::unique_ptr<AxisDecl>> &axes() const { return axes_; }
  std::vector<std::unique_ptr<AxisDecl>> &axes() { return axes_; }
  bool isTensorCore() const { return tensorCore_; }
  DKV_AST_CLASSOF(MeshDecl)

private:
  std::vector<std::unique_ptr<AxisDecl>> axes_;
  bool tensorCore_ = false;
};

/// `kernel name(params) grid(...) collective_id(k) { body }`.
class KernelDecl final : public Node {
public:
  KernelDecl(SourceRange range, std::string name, std::vector<std::unique_ptr<BufferDecl>> params,
             std::vector<ExprPtr> grid, ExprPtr collectiveId, std::unique_ptr<SemDecl> barrier,
             std::unique_ptr<Block> body)
      : Node(Kind::KernelDecl, range), name_(std::move(name)), params_(std::move(params)),
        grid_(std::move(grid)), collectiveId_(std::move(collectiveId)),
        barrier_(std::move(barrier)), body_(std::move(body)) {}
  const std::string &name() const { return name_; }
  /// Buffers with Storage::KernelParam, in order.
  const std::vector<std::unique_ptr<BufferDecl>> &params() const { return params_; }
  std::vector<std::unique_ptr<BufferDecl>> &params() { return params_; }
  /// Semaphore parameters (`in s: dma_sem`; Storage::KernelParam), in order: a
  /// semaphore the caller passes in, as a Pallas `SEMAPHORE` operand or a
  /// `pltpu.SemaphoreType` output of a kernel run in a `sequence`.
  const std::vector<std::unique_ptr<SemDecl>> &semParams() const { return semParams_; }
  std::vector<std::unique_ptr<SemDecl>> &semParams() { return semParams_; }
  void setSemParams(std::vector<std::unique_ptr<SemDecl>> s) { semParams_ = std::move(s); }
  /// Every parameter (buffer or semaphore) in source order: what a `sequence` call
  /// binds its arguments to, positionally.
  /// (Set by the parser; a kernel built in code without it lists its buffers, then
  /// its semaphores.)
  std::vector<const Decl *> paramOrder() const {
    if (paramOrder_.size() == params_.size() + semParams_.size())
      return {paramOrder_.begin(), paramOrder_.end()};
    std::vector<const Decl *> out;
    for (const auto &p : params_)
      out.push_back(p.get());
    for (const auto &p : semParams_)
      out.push_back(p.get());
    return out;
  }
  void setParamOrder(std::vector<Decl *> order) { paramOrder_ = std::move(order); }
  /// Grid dimensions (empty: no grid, one step).
  const std::vector<ExprPtr> &grid() const { return grid_; }
  std::vector<ExprPtr> &grid() { return grid_; }
  /// Set by sema: one size per grid dimension.
  const std::vector<int64_t> &gridValues() const { return gridValues_; }
  void setGridValues(std::vector<int64_t> values) { gridValues_ = std::move(values); }
  /// May be null (no collective_id).
  const Expr *collectiveId() const { return collectiveId_.get(); }
  Expr *collectiveId() { return collectiveId_.get(); }
  std::optional<int64_t> collectiveIdValue() const { return collectiveIdValue_; }
  void setCollectiveIdValue(std::optional<int64_t> v) { collectiveIdValue_ = v; }
  /// `skip_device_barrier(c)` (Pallas `CompilerParams(skip_device_barrier=...)`); may be
  /// null (false).
  const Expr *skipDeviceBarrier() const { return skipDeviceBarrier_.get(); }
  Expr *skipDeviceBarrier() { return skipDeviceBarrier_.get(); }
  void setSkipDeviceBarrier(ExprPtr e) { skipDeviceBarrier_ = std::move(e); }
  /// Set by sema: whether the runtime's default device barrier at entry is skipped.
  bool skipDeviceBarrierValue() const { return skipDeviceBarrierValue_; }
  void setSkipDeviceBarrierValue(bool v) { skipDeviceBarrierValue_ = v; }
  /// The implicit barrier semaphore `barrier`; non-null iff collectiveId() is.
  const SemDecl *barrier() const { return barrier_.get(); }
  SemDecl *barrier() { return barrier_.get(); }
  const Block &body() const { return *body_; }
  Block &body() { return *body_; }
  DKV_AST_CLASSOF(KernelDecl)

private:
  std::string name_;
  std::vector<std::unique_ptr<BufferDecl>> params_;
  std::vector<std::unique_ptr<SemDecl>> semParams_;
  std::vector<Decl *> paramOrder_;
  std::vector<ExprPtr> grid_;
  std::vector<int64_t> gridValues_;
  ExprPtr collectiveId_;
  std::optional<int64_t> collectiveIdValue_;
  ExprPtr skipDeviceBarrier_;
  bool skipDeviceBarrierValue_ = false;
  std::unique_ptr<SemDecl> barrier_;
  std::unique_ptr<Block> body_;
};

/// A line comment as the lexer saw it (`// text`): the parser hands comments over with
/// the module and gives them no meaning; tools that read directives in them do (the
/// example annotations and suppressions, frontend/Annotations.h).
struct Comment {
  std::string text;   ///< after the `//`
  SourceRange range;  ///< the whole comment
  bool alone = false; ///< nothing but blanks precede it on its line
};

/// One call of a `sequence`: `kernel(arg, ...)`, every argument an array of the
/// sequence. Sema resolves the kernel and the arguments.
struct SequenceCall {
  SourceRange range;
  std::string kernel;
  SourceRange kernelRange;
  std::vector<std::pair<std::string, SourceRange>> args;
  const KernelDecl *decl = nullptr;   ///< set by sema
  std::vector<const Decl *> argDecls; ///< set by sema: the sequence's arrays
};

/// `sequence(in x: hbm f32[8], out s: dma_sem, ...) { k1(x, s); k2(x, s) }`: several
/// kernels run one after the other on every device, as consecutive `pallas_call`s in
/// one `shard_map` body; the parameters are the caller's arrays (shard_map operands
/// and kernel outputs, semaphores included) that the calls pass from one kernel to
/// the next (docs/language.md "Kernel sequences").
class SequenceDecl final : public Node {
public:
  SequenceDecl(SourceRange range, std::vector<std::unique_ptr<BufferDecl>> buffers,
               std::vector<std::unique_ptr<SemDecl>> sems, std::vector<Decl *> order,
               std::vector<SequenceCall> calls)
      : Node(Kind::SequenceDecl, range), buffers_(std::move(buffers)), sems_(std::move(sems)),
        order_(std::move(order)), calls_(std::move(calls)) {}
  const std::vector<std::unique_ptr<BufferDecl>> &buffers() const { return buffers_; }
  std::vector<std::unique_ptr<BufferDecl>> &buffers() { return buffers_; }
  const std::vector<std::unique_ptr<SemDecl>> &sems() const { return sems_; }
  std::vector<std::unique_ptr<SemDecl>> &sems() { return sems_; }
  /// The arrays in source order.
  const std::vector<Decl *> &order() const { return order_; }
  const std::vector<SequenceCall> &calls() const { return calls_; }
  std::vector<SequenceCall> &calls() { return calls_; }
  DKV_AST_CLASSOF(SequenceDecl)

private:
  std::vector<std::unique_ptr<BufferDecl>> buffers_;
  std::vector<std::unique_ptr<SemDecl>> sems_;
  std::vector<Decl *> order_;
  std::vector<SequenceCall> calls_;
};

/// A whole file. Top-level items are kept in source order: ParamDecl, ConstDecl,
/// MeshDecl and KernelDecl nodes (params and consts are evaluated in this order).
class Module final : public Node {
public:
  Module(SourceRange range, std::vector<std::unique_ptr<Node>> items,
         std::vector<Comment> comments = {})
      : Node(Kind::Module, range), items_(std::move(items)), comments_(std::move(comments)) {}
  const std::vector<std::unique_ptr<Node>> &items() const { return items_; }
  std::vector<std::unique_ptr<Node>> &items() { return items_; }
  /// The first mesh (of devices) / kernel, or null (sema reports missing or duplicate
  /// ones).
  const MeshDecl *mesh() const;
  const KernelDecl *kernel() const;
  MeshDecl *mesh();
  KernelDecl *kernel();
  /// The first `tensorcore_mesh`, or null; its axis (checked by sema: exactly one).
  const MeshDecl *tensorCoreMesh() const;
  const AxisDecl *coreAxis() const;
  /// Every kernel in source order, and the first `sequence`, or null.
  std::vector<const KernelDecl *> kernels() const;
  const SequenceDecl *sequence() const;
  /// Top-level params and consts in source order.
  std::vector<const ParamDecl *> params() const;
  std::vector<const ConstDecl *> consts() const;
  /// The file's line comments in order (none for a module the Python tracer made).
  const std::vector<Comment> &comments() const { return comments_; }
  /// False if syntax errors (or input limits) left the module empty; sema must not run
  /// then. Other parse errors (unknown functions, types, ...) leave a complete module
  /// without the offending constructs, which sema may still check.
  bool complete() const { return complete_; }
  void setComplete(bool complete) { complete_ = complete; }
  DKV_AST_CLASSOF(Module)

private:
  std::vector<std::unique_ptr<Node>> items_;
  std::vector<Comment> comments_;
  bool complete_ = true;
};

#undef DKV_AST_CLASSOF
#undef DKV_AST_CLASSOF_RANGE

} // namespace dkv::ast
