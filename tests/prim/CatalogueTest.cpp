// The catalogue's rows: every signature parses, every spelling finds its op, element
// types and memory spaces by their spellings, and JAX's type promotion.
#include "prim/DType.h"
#include "prim/Op.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>

namespace dkv::prim {
namespace {

TEST(Catalogue, EveryRowParsesAndEverySpellingFindsItsOp) {
  std::set<std::string> python;
  for (const OpRecord &r : records()) {
    (void)dkSignatures(r.id); // parses every signature (an invariant otherwise)
    for (const PySpelling &s : pythonSpellings(r.id)) {
      EXPECT_TRUE(python.insert(std::string(s.name)).second) << "two ops spelled " << s.name;
      EXPECT_EQ(findOpByPythonName(s.name), r.id) << s.name;
    }
    for (const Signature &s : dkSignatures(r.id)) {
      std::vector<Op> ops = findOpsByDkName(s.name);
      EXPECT_NE(std::find(ops.begin(), ops.end(), r.id), ops.end()) << s.name;
    }
    if (r.shape == ShapeRule::Leaf) {
      EXPECT_TRUE(r.dk.empty() && r.python.empty()) << r.model;
      continue;
    }
    // Every op is reachable from `.dk` (a call or an operator) and documented.
    EXPECT_TRUE(!dkSignatures(r.id).empty() || !r.dkOperator.empty()) << r.model;
    EXPECT_FALSE(r.doc.empty()) << r.model;
    EXPECT_FALSE(r.model.empty());
    // Element-wise ops and reductions compute with their row's function.
    if (r.shape == ShapeRule::Broadcast || r.shape == ShapeRule::Reduce) {
      EXPECT_NE(r.fn, nullptr) << r.model;
    }
  }
}

TEST(Catalogue, LookupsByPythonNameOperatorAndDkName) {
  EXPECT_EQ(findOpByPythonName("jnp.maximum"), Op::Max);
  EXPECT_EQ(findOpByPythonName("lax.max"), Op::Max);
  EXPECT_EQ(findOpByPythonName("jnp.amax"), Op::ReduceMax);
  EXPECT_EQ(findOpByPythonName("jax.nn.swish"), Op::Silu);
  EXPECT_EQ(findOpByPythonName(".astype"), Op::AsType);
  EXPECT_EQ(findOpByPythonName("jnp.frobnicate"), std::nullopt);
  EXPECT_EQ(findOpByPythonOperator("@", 2), Op::Dot);
  EXPECT_EQ(findOpByPythonOperator("-", 1), Op::Neg);
  EXPECT_EQ(findOpByPythonOperator("-", 2), Op::Sub);
  EXPECT_EQ(findOpByDkOperator("-", 1), Op::Neg);
  EXPECT_EQ(findOpByDkOperator("max", 2), Op::Max);
  EXPECT_EQ(findOpsByDkName("max"), std::vector<Op>{Op::ReduceMax});
  EXPECT_EQ(findOpsByDkName("maximum"), std::vector<Op>{Op::Max});
  EXPECT_EQ(name(Op::Iota), "broadcasted_iota");
  EXPECT_EQ(name(Op::Add), "+");
  const PySpelling *dot = findPythonSpelling("pl.dot");
  ASSERT_NE(dot, nullptr);
  EXPECT_EQ(dot->signature.params[2].name, "trans_a");
  EXPECT_EQ(dot->signature.params[2].kind, ParamKind::Unsupported);
  EXPECT_EQ(arity(Op::Where), 3);
  EXPECT_EQ(operandKind(Op::Where, 0), ParamKind::Cond);
  EXPECT_EQ(arity(Op::Neg), 1);
}

TEST(Catalogue, SignaturesParseAsPythonWritesThem) {
  auto sig = parseSignature("max(x: array, *, axis: axis = None, keepdims: bool = false)");
  ASSERT_TRUE(sig);
  EXPECT_EQ(sig->name, "max");
  ASSERT_EQ(sig->params.size(), 3u);
  EXPECT_TRUE(sig->params[0].required());
  EXPECT_FALSE(sig->params[0].keywordOnly);
  EXPECT_TRUE(sig->params[1].keywordOnly);
  EXPECT_EQ(sig->params[2].defaultValue, "false");
  EXPECT_EQ(sig->positionalCount(), 1u);
  auto method = parseSignature(".reshape(*shape: shape)");
  ASSERT_TRUE(method);
  EXPECT_TRUE(method->params[0].variadic);
  EXPECT_FALSE(parseSignature("f(x)"));              // no kind
  EXPECT_FALSE(parseSignature("f(x: frob)"));        // unknown kind
  EXPECT_FALSE(parseSignature("f(x: unsupported)")); // needs a default
  EXPECT_FALSE(parseSignature("f x: array"));
}

TEST(DTypes, SpellingsAndSizes) {
  EXPECT_EQ(dtypeFromDk("bf16"), DType::BF16);
  EXPECT_EQ(dtypeFromPython("jnp.bfloat16"), DType::BF16);
  EXPECT_EQ(dtypeFromPython("np.uint8"), DType::U8);
  EXPECT_EQ(dtypeFromPython("np.bfloat16"), std::nullopt);
  EXPECT_EQ(pythonName(DType::I32), "jnp.int32");
  EXPECT_EQ(byteSize(DType::BF16), 2);
  EXPECT_TRUE(isInteger(DType::U32));
  EXPECT_FALSE(isInteger(DType::F16));
  EXPECT_EQ(memSpaceFromPython("pltpu.TPUMemorySpace.ANY"), MemSpace::Any);
  EXPECT_EQ(memSpaceFromPython("pl.ANY"), MemSpace::Any);
  EXPECT_EQ(memSpaceFromPython("pltpu.MemorySpace.HBM"), MemSpace::Hbm);
  EXPECT_EQ(memSpaceFromDk("smem"), MemSpace::Smem);
  EXPECT_EQ(memSpaceFromDk("SMEM"), std::nullopt);
}

// JAX's promotion table (jax.numpy.promote_types, x64 disabled) on the types dkv has.
TEST(DTypes, PromotionFollowsJaxsLattice) {
  auto p = [](ElemType a, ElemType b) { return promote(a, b); };
  const ElemType f32{DType::F32}, bf16{DType::BF16}, f16{DType::F16}, i32{DType::I32},
      i16{DType::I16}, i8{DType::I8}, u8{DType::U8}, u32{DType::U32};
  EXPECT_EQ(p(i32, kWeakInt), i32);          // int32_array + 1 stays int32
  EXPECT_EQ(p(kWeakFloat, i32), kWeakFloat); // 2.0 * int32_array: a weak float32
  EXPECT_EQ(p(bf16, kWeakFloat), bf16);
  EXPECT_EQ(p(u8, kWeakInt), u8);
  EXPECT_EQ(p(kWeakInt, kWeakFloat), kWeakFloat);
  EXPECT_EQ(p(kWeakInt, kWeakInt), kWeakInt);
  EXPECT_EQ(p(i32, f32), f32);
  EXPECT_EQ(p(i32, bf16), bf16);
  EXPECT_EQ(p(bf16, f16), f32);
  EXPECT_EQ(p(u8, i8), i16);
  EXPECT_EQ(p(u32, i32), i32); // int64, canonicalised
  EXPECT_EQ(p(u8, u32), u32);
  EXPECT_EQ(p(i16, u8), i16);
  EXPECT_EQ(p(f16, f32), f32);
  for (const DTypeInfo &a : dtypes())
    for (const DTypeInfo &b : dtypes())
      EXPECT_EQ(p({a.id}, {b.id}), p({b.id}, {a.id})) << a.dk << " " << b.dk;
  EXPECT_EQ(toInexact(i32), f32);
  EXPECT_EQ(toInexact(kWeakInt), kWeakFloat);
  EXPECT_EQ(toInexact(bf16), bf16);
  EXPECT_EQ(sumType(i8), i32);
  EXPECT_EQ(sumType(u8), u32);
  EXPECT_EQ(sumType(bf16), bf16);
}

TEST(DTypes, ConversionsRoundAsAStoreDoes) {
  EXPECT_EQ(roundTo(1.0 + std::ldexp(1, -8), DType::BF16), 1.0);
  EXPECT_EQ(roundTo(300, DType::U8), 44);
  EXPECT_EQ(roundTo(-1, DType::U32), 4294967295.0);
  EXPECT_EQ(roundTo(2147483648.0, DType::I32), -2147483648.0);
  EXPECT_EQ(roundTo(-2.7, DType::I8), -2);
  EXPECT_EQ(bitcast(1.0, DType::F32, DType::I32), 1065353216.0);
  EXPECT_EQ(bitcast(1065353216.0, DType::I32, DType::F32), 1.0);
}

} // namespace
} // namespace dkv::prim
