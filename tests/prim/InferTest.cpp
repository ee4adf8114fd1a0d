// Shape and type inference over the catalogue: NumPy's broadcasting, JAX's typing of
// Python scalars, and each shape rule.
#include "prim/Infer.h"

#include <gtest/gtest.h>

namespace dkv::prim {
namespace {

using Shape = std::vector<int64_t>;
const ElemType f32{DType::F32}, i32{DType::I32}, bf16{DType::BF16};

TypeResult infer(Op op, std::vector<ValueType> operands, Attrs attrs = {}) {
  return inferType(op, operands, attrs, "op");
}

TEST(Broadcast, FollowsNumPy) {
  EXPECT_EQ(broadcastShapes({8, 128}, {}), (Shape{8, 128}));
  EXPECT_EQ(broadcastShapes({}, {8, 128}), (Shape{8, 128}));
  EXPECT_EQ(broadcastShapes({128}, {8, 128}), (Shape{8, 128}));
  EXPECT_EQ(broadcastShapes({8, 1}, {1, 128}), (Shape{8, 128}));
  EXPECT_EQ(broadcastShapes({2, 1, 4}, {3, 1}), (Shape{2, 3, 4}));
  EXPECT_EQ(broadcastShapes({1, 1}, {1}), (Shape{1, 1}));
  EXPECT_EQ(broadcastShapes({8}, {8, 128}), std::nullopt);
  EXPECT_EQ(broadcastShapes({kDynamic, 128}, {8, 128}), (Shape{8, 128}));
  EXPECT_EQ(broadcastShapes({kDynamic}, {1}), (Shape{kDynamic}));
}

TEST(Broadcast, SumOfAllPlusArrayAndAxisReductionPlusArray) {
  // o[...] = sum(a[...]) + a[...]
  TypeResult all = infer(Op::Sum, {ValueType::array(f32, {8, 128})});
  ASSERT_FALSE(all.error);
  EXPECT_EQ(all.type.shape, Shape{});
  TypeResult add = infer(Op::Add, {all.type, ValueType::array(f32, {8, 128})});
  ASSERT_FALSE(add.error) << add.error->message;
  EXPECT_EQ(add.type.shape, (Shape{8, 128}));
  // sum(a[...], axis = 0) + a[...]: [128] with [8, 128]
  Attrs axis0;
  axis0.axis = 0;
  TypeResult col = infer(Op::Sum, {ValueType::array(f32, {8, 128})}, axis0);
  EXPECT_EQ(col.type.shape, Shape{128});
  EXPECT_EQ(col.axis, 0);
  add = infer(Op::Add, {col.type, ValueType::array(f32, {8, 128})});
  ASSERT_FALSE(add.error);
  EXPECT_EQ(add.type.shape, (Shape{8, 128}));
  // sum(a, axis = 1) + a does not broadcast ([8] with [8, 128]).
  Attrs axis1;
  axis1.axis = 1;
  TypeResult row = infer(Op::Sum, {ValueType::array(f32, {8, 128})}, axis1);
  add = infer(Op::Add, {row.type, ValueType::array(f32, {8, 128})});
  ASSERT_TRUE(add.error);
  EXPECT_EQ(add.error->id, "shape-mismatch");
  EXPECT_EQ(add.error->message, "operands of op have shapes [8] and [8, 128], which do not "
                                "broadcast");
  // ... but with keepdims it does.
  axis1.keepdims = true;
  row = infer(Op::Sum, {ValueType::array(f32, {8, 128})}, axis1);
  EXPECT_EQ(row.type.shape, (Shape{8, 1}));
  EXPECT_FALSE(infer(Op::Add, {row.type, ValueType::array(f32, {8, 128})}).error);
}

TEST(Typing, PythonScalarsAreWeak) {
  // 2.0 * int32_array is float32; int32_array + 1 stays int32.
  TypeResult t = infer(Op::Mul, {ValueType::scalar(kWeakFloat), ValueType::array(i32, {8})});
  EXPECT_EQ(t.type.elem.dtype, DType::F32);
  t = infer(Op::Add, {ValueType::array(i32, {8}), ValueType::scalar(kWeakInt)});
  EXPECT_EQ(t.type.elem, i32);
  t = infer(Op::Mul, {ValueType::array(bf16, {8}), ValueType::scalar(kWeakFloat)});
  EXPECT_EQ(t.type.elem, bf16);
  // True division and exp of integers give float32.
  t = infer(Op::Div, {ValueType::array(i32, {8}), ValueType::array(i32, {8})});
  EXPECT_EQ(t.type.elem, f32);
  t = infer(Op::Exp, {ValueType::array(i32, {8})});
  EXPECT_EQ(t.type.elem, f32);
  t = infer(Op::Abs, {ValueType::array(i32, {8})});
  EXPECT_EQ(t.type.elem, i32);
  // Mixed arrays promote.
  t = infer(Op::Add, {ValueType::array(i32, {8}), ValueType::array(bf16, {8})});
  EXPECT_EQ(t.type.elem, bf16);
  // A number with a number stays a number.
  t = infer(Op::Add, {ValueType::scalar(kWeakFloat), ValueType::scalar(kWeakInt)});
  EXPECT_EQ(t.type.kind, ValueType::Kind::Scalar);
}

TEST(Typing, ComparisonsAreMasksAndWhereSelects) {
  TypeResult m = infer(Op::Gt, {ValueType::array(f32, {8, 128}), ValueType::scalar(kWeakFloat)});
  ASSERT_FALSE(m.error);
  EXPECT_EQ(m.type.kind, ValueType::Kind::Mask);
  TypeResult w =
      infer(Op::Where, {m.type, ValueType::array(i32, {128}), ValueType::scalar(kWeakFloat)});
  ASSERT_FALSE(w.error);
  EXPECT_EQ(w.type.shape, (Shape{8, 128}));
  EXPECT_EQ(w.type.elem, kWeakFloat);
  // where(mask, 1.0, 0.0): an array of the mask's shape (NumPy).
  w = infer(Op::Where, {m.type, ValueType::scalar(kWeakFloat), ValueType::scalar(kWeakFloat)});
  EXPECT_EQ(w.type.kind, ValueType::Kind::Array);
  EXPECT_EQ(w.type.shape, (Shape{8, 128}));
  // A per-device condition with numbers is a number.
  w = infer(Op::Where,
            {ValueType::cond(), ValueType::scalar(kWeakFloat), ValueType::scalar(kWeakInt)});
  EXPECT_EQ(w.type.kind, ValueType::Kind::Scalar);
  // The condition must be a mask or a condition.
  w = infer(Op::Where, {ValueType::array(f32, {8}), ValueType::scalar(kWeakFloat),
                        ValueType::scalar(kWeakInt)});
  ASSERT_TRUE(w.error);
  EXPECT_EQ(w.error->at, InferError::At::Operand);
  EXPECT_TRUE(infer(Op::And, {m.type, m.type}).type.kind == ValueType::Kind::Mask);
}

TEST(Typing, AstypeOfAMaskIsAnArrayOfTheNewType) {
  // mask.astype(jnp.int32), as MoE kernels count routed tokens: JAX's booleans, an array
  // of the mask's shape and the new type.
  TypeResult m = infer(Op::Eq, {ValueType::array(i32, {8, 128}), ValueType::array(i32, {8, 1})});
  ASSERT_EQ(m.type.kind, ValueType::Kind::Mask);
  Attrs to;
  to.dtype = DType::I32;
  TypeResult a = infer(Op::AsType, {m.type}, to);
  ASSERT_FALSE(a.error) << a.error->message;
  EXPECT_EQ(a.type.kind, ValueType::Kind::Array);
  EXPECT_EQ(a.type.elem, i32);
  EXPECT_EQ(a.type.shape, (Shape{8, 128}));
  to.dtype = DType::BF16;
  EXPECT_EQ(infer(Op::AsType, {m.type}, to).type.elem, bf16);
  // Only astype takes a mask as a value: arithmetic on a mask, and astype of a per-device
  // condition, are still errors.
  EXPECT_TRUE(infer(Op::Add, {m.type, ValueType::scalar(kWeakInt)}).error);
  EXPECT_TRUE(infer(Op::Neg, {m.type}).error);
  EXPECT_TRUE(infer(Op::AsType, {ValueType::cond()}, to).error);
  EXPECT_EQ(arity(Op::AsType), 1);
  EXPECT_EQ(operandKind(Op::AsType, 0), ParamKind::Value);
}

TEST(Shapes, ContractReshapeConcatSplitCreate) {
  TypeResult d = infer(Op::Dot, {ValueType::array(bf16, {8, 4}), ValueType::array(bf16, {4, 2})});
  EXPECT_EQ(d.type.shape, (Shape{8, 2}));
  EXPECT_EQ(d.type.elem, bf16);
  Attrs pref;
  pref.dtype = DType::F32;
  d = infer(Op::Dot, {ValueType::array(bf16, {8, 4}), ValueType::array(bf16, {4, 2})}, pref);
  EXPECT_EQ(d.type.elem, f32);
  d = infer(Op::Dot, {ValueType::array(f32, {8, 4}), ValueType::array(f32, {3, 2})});
  ASSERT_TRUE(d.error);
  EXPECT_EQ(d.error->message,
            "op of [8, 4] and [3, 2]: the contracted dimensions differ (4 and 3)");

  Attrs to;
  to.dims = {4, 256};
  EXPECT_EQ(infer(Op::Reshape, {ValueType::array(f32, {8, 128})}, to).type.shape, (Shape{4, 256}));
  to.dims = {4, 4};
  EXPECT_EQ(infer(Op::Reshape, {ValueType::array(f32, {8, 128})}, to).error->id, "reshape-size");

  Attrs last;
  last.axis = -1;
  TypeResult c =
      infer(Op::Concatenate, {ValueType::array(f32, {8, 4}), ValueType::array(i32, {8, 2})}, last);
  ASSERT_FALSE(c.error);
  EXPECT_EQ(c.type.shape, (Shape{8, 6}));
  EXPECT_EQ(c.axis, 1);
  c = infer(Op::Concatenate, {ValueType::array(f32, {8, 4}), ValueType::array(f32, {4, 2})}, last);
  ASSERT_TRUE(c.error);
  EXPECT_EQ(c.error->operand, 1u);

  Attrs two;
  two.dims = {2};
  two.axis = -1;
  EXPECT_EQ(infer(Op::Split, {ValueType::array(f32, {8, 6})}, two).type.shape, (Shape{8, 3}));
  two.dims = {4};
  EXPECT_EQ(infer(Op::Split, {ValueType::array(f32, {8, 6})}, two).error->id, "shape-mismatch");

  Attrs iota;
  iota.dtype = DType::I32;
  iota.dims = {8, 128};
  iota.axis = 2;
  EXPECT_EQ(infer(Op::Iota, {}, iota).error->id, "axis-out-of-range");
  iota.axis = 1;
  EXPECT_EQ(infer(Op::Iota, {}, iota).type.elem, i32);

  Attrs axis;
  axis.axis = 2;
  TypeResult r = infer(Op::ReduceMax, {ValueType::array(f32, {8, 128})}, axis);
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->message, "op over axis 2 of a 2-D value (axes -2..1)");
  EXPECT_EQ(r.error->at, InferError::At::Axis);
}

TEST(Shapes, BitcastNeedsTheSameWidth) {
  Attrs to;
  to.dtype = DType::I32;
  EXPECT_EQ(infer(Op::Bitcast, {ValueType::array(f32, {8})}, to).type.elem, i32);
  to.dtype = DType::I16;
  EXPECT_EQ(infer(Op::Bitcast, {ValueType::array(f32, {8})}, to).error->id, "unsupported");
}

} // namespace
} // namespace dkv::prim
