// Type and shape inference over the catalogue (one case per shape rule, never per op).
#include "prim/Infer.h"

#include <fmt/format.h>

namespace dkv::prim {

std::string shapeText(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + (shape[i] == kDynamic ? std::string("?") : std::to_string(shape[i]));
  return s + "]";
}

int64_t elementCount(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d == kDynamic)
      return kDynamic;
    if (__builtin_mul_overflow(n, d, &n))
      return kDynamic;
  }
  return n;
}

std::optional<std::vector<int64_t>> broadcastShapes(const std::vector<int64_t> &a,
                                                    const std::vector<int64_t> &b) {
  const size_t rank = std::max(a.size(), b.size());
  std::vector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    // Aligned at the trailing dimension; a missing leading dimension is 1.
    const int64_t x = i + a.size() >= rank ? a[i + a.size() - rank] : 1;
    const int64_t y = i + b.size() >= rank ? b[i + b.size() - rank] : 1;
    if (x == 1)
      out[i] = y;
    else if (y == 1 || x == y)
      out[i] = x;
    else if (x == kDynamic || y == kDynamic)
      out[i] = x == kDynamic ? y : x; // the dynamic one must be 1 or equal: lowering checks
    else
      return std::nullopt;
  }
  return out;
}

namespace {

using Kind = ValueType::Kind;

bool isArray(const ValueType &t) { return t.kind == Kind::Array; }
bool isNumeric(const ValueType &t) { return t.kind == Kind::Array || t.kind == Kind::Scalar; }

struct Inference {
  Op op;
  std::span<const ValueType> operands;
  const Attrs &attrs;
  std::string_view spelled;
  TypeResult result;

  TypeResult &fail(std::string id, std::string message, InferError::At at = InferError::At::Call,
                   size_t operand = 0) {
    result.error = InferError{std::move(id), std::move(message), at, operand};
    return result;
  }

  // The axis of a reduction, concatenate, split or iota in 0..rank-1, or nullopt after an
  // error. `verb`: "over" (reductions), "along" (concatenate, split).
  std::optional<int64_t> axisIn(int64_t axis, int64_t rank, std::string_view verb) {
    if (rank == 0 || axis < -rank || axis >= rank) {
      fail("axis-out-of-range",
           rank == 0
               ? (verb == "over" ? fmt::format("{} over axis {} of a 0-D value", spelled, axis)
                                 : fmt::format("{} of a 0-D value", spelled))
               : fmt::format("{} {} axis {} of a {}-D value (axes {}..{})", spelled, verb, axis,
                             rank, -rank, rank - 1),
           attrs.axis ? InferError::At::Axis : InferError::At::Call);
      return std::nullopt;
    }
    return axis < 0 ? axis + rank : axis;
  }

  ElemType promoted(size_t first = 0) {
    std::optional<ElemType> t;
    for (size_t i = first; i < operands.size(); ++i)
      if (isNumeric(operands[i]))
        t = t ? promote(*t, operands[i].elem) : operands[i].elem;
    return t.value_or(kWeakFloat);
  }

  TypeResult &broadcast() {
    const OpRecord &r = record(op);
    // The operands that take values, and the shape they broadcast to.
    std::vector<int64_t> shape;
    bool anyArray = false;
    size_t conditions = 0;
    for (size_t i = 0; i < operands.size(); ++i) {
      const ValueType &t = operands[i];
      if (operandKind(op, i) == ParamKind::Cond) {
        ++conditions;
        if (t.kind != Kind::Mask && t.kind != Kind::Cond)
          return fail("type-mismatch",
                      fmt::format("{} takes a comparison of values (x > 0.0) or a condition as "
                                  "operand {}",
                                  spelled, i + 1),
                      InferError::At::Operand, i);
      } else if (operandKind(op, i) == ParamKind::Value && t.kind == Kind::Mask) {
        // A mask converted (astype): JAX's booleans, true 1 and false 0.
      } else if (!isNumeric(t)) {
        return fail("type-mismatch", fmt::format("invalid operands to {}", spelled));
      }
      if (t.kind == Kind::Array || t.kind == Kind::Mask) {
        auto b = anyArray ? broadcastShapes(shape, t.shape) : std::optional(t.shape);
        if (!b)
          return fail("shape-mismatch",
                      fmt::format("operands of {} have shapes {} and {}, which do not broadcast",
                                  spelled, shapeText(shape), shapeText(t.shape)));
        shape = std::move(*b);
        anyArray = true;
      }
    }
    if (r.type == TypeRule::Mask) {
      // A comparison of numbers is an integer condition (sema's); of values, a mask.
      if (!anyArray)
        return fail("type-mismatch", fmt::format("invalid operands to {}", spelled));
      result.type = ValueType::mask(std::move(shape));
      return result;
    }
    ElemType elem = promoted(conditions);
    if (r.type == TypeRule::Inexact)
      elem = toInexact(elem);
    else if (r.type == TypeRule::Explicit || r.type == TypeRule::Reinterpret)
      elem = {*attrs.dtype};
    if (r.type == TypeRule::Reinterpret) {
      const DType from = operands[0].elem.dtype, to = *attrs.dtype;
      if (from == DType::F16 || to == DType::F16)
        return fail("unsupported",
                    fmt::format("{} from or to f16 is not supported: the executor holds f16 "
                                "values at f32 precision, so their bits are not modelled",
                                spelled));
      if (byteSize(from) != byteSize(to))
        return fail("unsupported",
                    fmt::format("{} from {} to {}: element types of different widths change "
                                "the shape by the TPU's packing, which is not modelled; bitcast "
                                "between types of the same width",
                                spelled, dkName(from), dkName(to)));
    }
    result.type = anyArray ? ValueType::array(elem, std::move(shape)) : ValueType::scalar(elem);
    return result;
  }

  TypeResult &contract() {
    const ValueType &a = operands[0], &b = operands[1];
    if (a.shape.size() != 2 || b.shape.size() != 2)
      return fail("shape-mismatch",
                  fmt::format("{} contracts two 2-D arrays; the operands have shapes {} and {}",
                              spelled, shapeText(a.shape), shapeText(b.shape)));
    if (a.shape[1] != kDynamic && b.shape[0] != kDynamic && a.shape[1] != b.shape[0])
      return fail("shape-mismatch",
                  fmt::format("{} of {} and {}: the contracted dimensions differ ({} and {})",
                              spelled, shapeText(a.shape), shapeText(b.shape), a.shape[1],
                              b.shape[0]));
    ElemType elem = attrs.dtype ? ElemType{*attrs.dtype} : promoted();
    result.type = ValueType::array(elem, {a.shape[0], b.shape[1]});
    return result;
  }

  TypeResult &reduce() {
    const ValueType &x = operands[0];
    ElemType elem = record(op).type == TypeRule::Sum ? sumType(x.elem) : x.elem;
    std::vector<int64_t> shape;
    if (!attrs.axis) {
      if (attrs.keepdims)
        shape.assign(x.shape.size(), 1);
    } else {
      auto axis = axisIn(*attrs.axis, static_cast<int64_t>(x.shape.size()), "over");
      if (!axis)
        return result;
      result.axis = axis;
      shape = x.shape;
      if (attrs.keepdims)
        shape[static_cast<size_t>(*axis)] = 1;
      else
        shape.erase(shape.begin() + *axis);
    }
    result.type = ValueType::array(elem, std::move(shape));
    return result;
  }

  TypeResult &reshape() {
    const ValueType &x = operands[0];
    const int64_t from = elementCount(x.shape), to = elementCount(attrs.dims);
    if (to == kDynamic)
      return fail("invalid-size", fmt::format("{} to a shape whose size overflows", spelled));
    if (from != kDynamic && from != to)
      return fail("reshape-size",
                  fmt::format("{} of a value of shape {} ({} elements) to {} ({} "
                              "elements)",
                              spelled, shapeText(x.shape), from, shapeText(attrs.dims), to));
    result.type = ValueType::array(x.elem, attrs.dims);
    return result;
  }

  TypeResult &concat() {
    auto axis =
        axisIn(attrs.axis.value_or(0), static_cast<int64_t>(operands[0].shape.size()), "along");
    if (!axis)
      return result;
    result.axis = axis;
    std::vector<int64_t> shape = operands[0].shape;
    const size_t k = static_cast<size_t>(*axis);
    for (size_t i = 1; i < operands.size(); ++i) {
      const std::vector<int64_t> &p = operands[i].shape;
      bool same = p.size() == shape.size();
      for (size_t d = 0; same && d < p.size(); ++d)
        same = d == k || p[d] == kDynamic || shape[d] == kDynamic || p[d] == shape[d];
      if (!same)
        return fail("shape-mismatch",
                    fmt::format("operands of {} have shapes {} and {}: they may differ only "
                                "along axis {}",
                                spelled, shapeText(operands[0].shape), shapeText(p), *axis),
                    InferError::At::Operand, i);
      if (shape[k] == kDynamic || p[k] == kDynamic)
        shape[k] = kDynamic;
      else if (__builtin_add_overflow(shape[k], p[k], &shape[k]))
        return fail("invalid-size", fmt::format("{} of extents whose sum overflows", spelled));
    }
    result.type = ValueType::array(promoted(), std::move(shape));
    return result;
  }

  TypeResult &split() {
    const ValueType &x = operands[0];
    const int64_t n = attrs.dims.at(0);
    auto axis = axisIn(attrs.axis.value_or(0), static_cast<int64_t>(x.shape.size()), "along");
    if (!axis)
      return result;
    result.axis = axis;
    std::vector<int64_t> shape = x.shape;
    int64_t &extent = shape[static_cast<size_t>(*axis)];
    if (extent == kDynamic || extent % n != 0)
      return fail("shape-mismatch",
                  fmt::format("{} of a value of shape {} into {} equal parts along axis {}: the "
                              "extent {} is not a multiple of {}",
                              spelled, shapeText(x.shape), n, *axis,
                              extent == kDynamic ? std::string("?") : std::to_string(extent), n));
    extent /= n;
    result.type = ValueType::array(x.elem, std::move(shape));
    return result;
  }

  TypeResult &create() {
    if (attrs.dims.empty())
      return fail("invalid-size", fmt::format("{} needs a shape", spelled));
    if (elementCount(attrs.dims) == kDynamic)
      return fail("invalid-size", fmt::format("{} of a shape whose size overflows", spelled));
    if (attrs.axis) {
      const int64_t rank = static_cast<int64_t>(attrs.dims.size());
      if (*attrs.axis < 0 || *attrs.axis >= rank)
        return fail(
            "axis-out-of-range",
            fmt::format("{} along dimension {} of a {}-D shape", spelled, *attrs.axis, rank),
            InferError::At::Axis);
      result.axis = attrs.axis;
    }
    result.type = ValueType::array({*attrs.dtype}, attrs.dims);
    return result;
  }

  TypeResult &run() {
    // Operands other than where's condition and the logic ops' masks are arrays of the
    // rules below (element-wise ops also take numbers).
    const OpRecord &r = record(op);
    if (r.shape != ShapeRule::Broadcast)
      for (size_t i = 0; i < operands.size(); ++i)
        if (!isArray(operands[i]))
          return fail("type-mismatch",
                      fmt::format("{} needs an array value (a ref or compute on refs)", spelled),
                      InferError::At::Operand, i);
    switch (r.shape) {
    case ShapeRule::Leaf:
      return fail("internal", fmt::format("{} is not an operation", spelled));
    case ShapeRule::Broadcast:
      return broadcast();
    case ShapeRule::Contract:
      return contract();
    case ShapeRule::Reduce:
      return reduce();
    case ShapeRule::Reshape:
      return reshape();
    case ShapeRule::Concat:
      return concat();
    case ShapeRule::Split:
      return split();
    case ShapeRule::Create:
      return create();
    }
    return result;
  }
};

} // namespace

TypeResult inferType(Op op, std::span<const ValueType> operands, const Attrs &attrs,
                     std::string_view spelled) {
  Inference inference{op, operands, attrs, spelled, {}};
  return inference.run();
}

} // namespace dkv::prim
