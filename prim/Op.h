// The catalogue of compute ops: every operation on array values, each one record (its
// `.dk` and Python spellings, signature, typing, shape rule and value function) that
// the frontends, lowering, the model's printer and verifier and the executor ask.
#pragma once

#include "prim/DType.h"

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

/// The catalogue (docs/design.md "The catalogue of primitives").
///
/// Each op is one row of prim/Ops.def (MLIR's ODS and clang's Builtins.td are the
/// model: an op is a record, and every pass asks the record, never the op's name):
/// - `dk`: its `.dk` call signature(s), `name(param: kind = default, ...)`, several
///   separated by `;` (overloads are tried in order: `max(x)` is the reduction, `max(a,
///   b)` with two positional operands the element-wise one); `dkOperator`: the operator
///   that spells it (`+`, `min` for the integer-or-value `min(a, b)`), if any;
/// - `python`: its Python spellings with their signatures (`jnp.max|jnp.amax(a: array,
///   ...)`: names separated by `|` share a signature, signatures by `;`; a name with a
///   leading `.` is a method of an array: `.astype(dtype: dtype)`); `pyOperator` the
///   Python operator;
/// - `shape`, `type`: the shape and element-type rules (`inferType`, Infer.h);
/// - `fn`: the executor's function of one element (the combiner of a reduction);
/// - `model`: its name in the model printer; `doc`: its line in docs/language.md.
///
/// Parameter kinds in signatures: `array` (an array value or a number), `cond` (where's
/// condition: a mask or a per-device condition), `value` (an array value, a number or a
/// mask: astype's operand, a mask converting as JAX converts booleans), `arrays` (a list of
/// arrays), `axis` and `int` (a compile-time integer), `dtype`, `shape` (a tuple of compile-time
/// integers), `bool` (a literal), `unsupported` (Python only: accepted only when absent
/// or equal to its default). A `*` entry makes the parameters after it keyword-only.
///
/// API for the frontends (stable; the Python tracer builds its op handling on it):
///   const OpRecord &r = prim::record(op);                // the row of an op
///   std::optional<Op> op = prim::findOpByPythonName("jnp.maximum");  // Op::Max
///   const PySpelling *s = prim::findPythonSpelling("jnp.amax");  // name + signature
///   std::vector<Op> ops = prim::findOpsByDkName("max");  // overloads, in order
///   std::optional<Op> op = prim::findOpByDkOperator("+", 2);  // Op::Add
///   prim::BindResult b = prim::bindArguments(signature, args);    // Bind.h
///   prim::TypeResult t = prim::inferType(op, operands, attrs);  // Infer.h
namespace dkv::prim {

/// Every compute op (and the three leaves of a value: a constant, a load, a register).
enum class Op : uint8_t {
#define DKV_OP(Id, ...) Id,
#include "prim/Ops.def"
#undef DKV_OP
};

/// How an op's result shape follows from its operands and attributes (Infer.h).
enum class ShapeRule : uint8_t {
  Leaf,      ///< a constant, load or register: the shape is given
  Broadcast, ///< element-wise: NumPy broadcasting of the operands
  Reduce,    ///< the operand without `axis` (every axis if none); `keepdims` keeps it as 1
  Contract,  ///< [M, K] x [K, N] -> [M, N]
  Reshape,   ///< the same elements in `dims`
  Concat,    ///< the operands joined along `axis`
  Split,     ///< one of `dims[0]` equal parts along `axis`
  Create,    ///< no operand: the shape `dims`
};

/// How an op's element type follows from its operands' (JAX's type promotion, DType.h).
enum class TypeRule : uint8_t {
  Leaf,        ///< given
  Promote,     ///< the promotion of the (array) operands
  Inexact,     ///< the promotion, integer types becoming float32 (true division, exp, ...)
  Mask,        ///< a boolean mask (comparisons, logical and / or)
  Sum,         ///< the operand's, narrow integers widened (jnp.sum)
  Explicit,    ///< the `dtype` attribute
  Reinterpret, ///< the `dtype` attribute, of the operand's width (bitcast)
  Contract,    ///< the promotion, or the `preferred_element_type` attribute if given
  First,       ///< the first operand's
};

/// Attributes of one application of an op that its value function needs.
struct ElemAttrs {
  DType dtype = DType::F32; ///< astype / bitcast: the result type
  DType from = DType::F32;  ///< bitcast: the operand's type
  bool approximate = true;  ///< gelu: the tanh form
};
/// The value of one element from the operands' elements (unused ones are 0).
using ElementFn = double (*)(double x, double y, double z, const ElemAttrs &attrs);

/// One row of the catalogue (prim/Ops.def documents the fields).
struct OpRecord {
  Op id;
  std::string_view dk;
  std::string_view dkOperator = "";
  std::string_view python = "";
  std::string_view pyOperator = "";
  std::string_view model = "";
  ShapeRule shape = ShapeRule::Broadcast;
  TypeRule type = TypeRule::Promote;
  ElementFn fn = nullptr;
  std::string_view doc = "";
};

/// What a parameter takes.
enum class ParamKind : uint8_t {
  Array,
  Cond,
  Value,
  Arrays,
  Axis,
  Int,
  DType,
  Shape,
  Bool,
  Unsupported
};

struct Param {
  std::string_view name;
  ParamKind kind = ParamKind::Array;
  bool keywordOnly = false;
  /// `*name`: takes every remaining positional argument (Python methods such as
  /// `.reshape(4, 256)`).
  bool variadic = false;
  /// The default as written (`None`, `0`, `true`, `False`, ...); empty: required.
  std::string_view defaultValue;
  bool required() const { return defaultValue.empty(); }
};

/// One signature: `name(params)`.
struct Signature {
  std::string_view name;
  std::vector<Param> params;
  /// The index of the parameter named `name`, or -1.
  int find(std::string_view name) const;
  /// Parameters that can be given positionally.
  size_t positionalCount() const;
};

/// One Python spelling of an op: its dotted name (`jnp.maximum`; `.astype` for a method)
/// and signature.
struct PySpelling {
  Op op;
  std::string_view name;
  Signature signature;
};

/// Every row, in the order of `Op`.
std::span<const OpRecord> records();
const OpRecord &record(Op op);
/// The `.dk` name of an op's first signature (`sum`), else its operator, else its model
/// name (`load`).
std::string_view name(Op op);
inline std::string_view toString(Op op) { return name(op); }
/// An op's `.dk` call signatures (none for operators and leaves), in overload order.
std::span<const Signature> dkSignatures(Op op);
/// An op's Python spellings.
std::span<const PySpelling> pythonSpellings(Op op);

/// The ops with a `.dk` call signature of this name, in overload order (the order of
/// the rows): `max` -> {ReduceMax}; the element-wise `max(a, b)` is the operator `max`.
std::vector<Op> findOpsByDkName(std::string_view name);
/// The op spelled by a `.dk` operator (`+`, `min`, `and`) with `arity` operands.
std::optional<Op> findOpByDkOperator(std::string_view op, int arity);
/// The op a dotted Python name spells (`jnp.maximum`, `lax.max`, `.astype`), or nullopt.
std::optional<Op> findOpByPythonName(std::string_view name);
/// The spelling (with its signature) of a dotted Python name, or null.
const PySpelling *findPythonSpelling(std::string_view name);
/// The op a Python operator (`+`, `@`, unary `-`) spells with `arity` operands.
std::optional<Op> findOpByPythonOperator(std::string_view op, int arity);

/// Parses one signature `name(a: kind, b: kind = default, *, c: kind = d)`; nullopt if
/// malformed (the catalogue's are checked at start-up and by tests/prim).
std::optional<Signature> parseSignature(std::string_view text);

/// Number of operands of an element-wise op (1, 2 or 3): the `array`, `cond` and `value`
/// parameters of its first signature (`.dk`, else Python).
int arity(Op op);
/// The kind (`Array`, `Cond` or `Value`) of operand `i` of an element-wise op.
ParamKind operandKind(Op op, size_t i);

} // namespace dkv::prim
