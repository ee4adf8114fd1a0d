// Tests of the compute on values (docs/executor.md "Compute"): each operation on
// fixed arrays, then whole kernels whose outputs are checked against values computed
// here from the executor's inputs.
#include "executor/Executor.h"
#include "tests/executor/ExecutorFixtures.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>

namespace dkv::executor {
namespace {

using model::DType;
using model::ValueExpr;
using model::ValueNode;
using Op = ValueNode::Op;

/// Builds a value tree: loads of buffers whose contents the test gives.
struct Tree {
  ValueExpr expr;
  std::map<model::BufferId, std::vector<double>> data;

  int32_t push(ValueNode n) {
    expr.nodes.push_back(std::move(n));
    expr.root = static_cast<int32_t>(expr.nodes.size() - 1);
    return expr.root;
  }
  int32_t load(std::vector<double> values, std::vector<int64_t> shape) {
    ValueNode n;
    n.op = Op::Load;
    n.region.buffer = static_cast<model::BufferId>(data.size());
    n.shape = std::move(shape);
    data[n.region.buffer] = std::move(values);
    return push(n);
  }
  int32_t constant(double c) {
    ValueNode n;
    n.constant = c;
    return push(n);
  }
  int32_t node(Op op, int32_t lhs, int32_t rhs, std::vector<int64_t> shape) {
    ValueNode n;
    n.op = op;
    n.lhs = lhs;
    n.rhs = rhs;
    n.shape = std::move(shape);
    return push(n);
  }
  std::vector<double> eval() {
    return evaluateValue(
        expr, [&](const model::Region &r) { return data.at(r.buffer); },
        [](model::RegisterId) { return 0.0; });
  }
};

TEST(Compute, DotContractsTheInnerDimension) {
  Tree t;
  int32_t a = t.load({1, 2, 3, 4, 5, 6}, {2, 3});    // [[1 2 3] [4 5 6]]
  int32_t b = t.load({7, 8, 9, 10, 11, 12}, {3, 2}); // [[7 8] [9 10] [11 12]]
  t.node(Op::Dot, a, b, {2, 2});
  EXPECT_EQ(t.eval(), (std::vector<double>{58, 64, 139, 154}));
}

// jnp.concatenate and the parts of jnp.split (a Slice along the axis), row-major.
TEST(Compute, ConcatenateAndSliceAlongAnAxis) {
  Tree t;
  int32_t a = t.load({1, 2, 3, 4}, {2, 2}); // [[1 2] [3 4]]
  int32_t b = t.load({5, 6}, {2, 1});       // [[5] [6]]
  ValueNode cat;
  cat.op = Op::Concatenate;
  cat.lhs = a;
  cat.rhs = b;
  cat.axis = 1;
  cat.shape = {2, 3};
  int32_t c = t.push(cat);
  EXPECT_EQ(t.eval(), (std::vector<double>{1, 2, 5, 3, 4, 6}));
  ValueNode slice;
  slice.op = Op::Split;
  slice.lhs = c;
  slice.axis = 1;
  slice.begin = 1;
  slice.end = 3;
  slice.shape = {2, 2};
  t.push(slice);
  EXPECT_EQ(t.eval(), (std::vector<double>{2, 5, 4, 6}));
  // Along axis 0, and a broadcast constant operand (jnp.zeros) of its shape.
  Tree u;
  int32_t x = u.load({1, 2}, {1, 2});
  ValueNode zeros;
  zeros.shape = {2, 2};
  int32_t z = u.push(zeros);
  ValueNode cat0;
  cat0.op = Op::Concatenate;
  cat0.lhs = x;
  cat0.rhs = z;
  cat0.axis = 0;
  cat0.shape = {3, 2};
  u.push(cat0);
  EXPECT_EQ(u.eval(), (std::vector<double>{1, 2, 0, 0, 0, 0}));
}

// jax.nn.silu, jax.nn.sigmoid and jax.nn.gelu (tanh form, the default, and erf form).
TEST(Compute, ActivationsFollowJaxNn) {
  auto unary = [](Op op, double x, bool approximate = true) {
    Tree t;
    int32_t in = t.load({x}, {1});
    ValueNode n;
    n.op = op;
    n.lhs = in;
    n.shape = {1};
    n.approximate = approximate;
    t.push(n);
    return t.eval()[0];
  };
  EXPECT_DOUBLE_EQ(unary(Op::Sigmoid, 0.0), 0.5);
  // The node's element type (f32 here) holds the result, as JAX computes in it.
  EXPECT_EQ(unary(Op::Sigmoid, 2.0), prim::roundTo(1.0 / (1.0 + std::exp(-2.0)), DType::F32));
  EXPECT_EQ(unary(Op::Silu, 2.0), prim::roundTo(2.0 / (1.0 + std::exp(-2.0)), DType::F32));
  EXPECT_DOUBLE_EQ(unary(Op::Silu, 0.0), 0.0);
  // gelu(1) = 0.8411920 (tanh form), 0.8413447 (erf form).
  EXPECT_NEAR(unary(Op::Gelu, 1.0), 0.8411920, 1e-6);
  EXPECT_NEAR(unary(Op::Gelu, 1.0, false), 0.8413447, 1e-6);
}

// lax.broadcasted_iota and the logical and / or of masks.
TEST(Compute, IotaAndMaskLogic) {
  Tree t;
  ValueNode iota;
  iota.op = Op::Iota;
  iota.axis = 0;
  iota.shape = {3, 2};
  int32_t i0 = t.push(iota);
  EXPECT_EQ(t.eval(), (std::vector<double>{0, 0, 1, 1, 2, 2}));
  iota.axis = 1;
  int32_t i1 = t.push(iota);
  EXPECT_EQ(t.eval(), (std::vector<double>{0, 1, 0, 1, 0, 1}));
  int32_t a = t.node(Op::Ge, i0, t.constant(1), {3, 2}); // rows 1, 2
  int32_t b = t.node(Op::Eq, i1, t.constant(0), {3, 2}); // column 0
  t.node(Op::And, a, b, {3, 2});
  EXPECT_EQ(t.eval(), (std::vector<double>{0, 0, 1, 0, 1, 0}));
  t.node(Op::Or, a, b, {3, 2});
  EXPECT_EQ(t.eval(), (std::vector<double>{1, 0, 1, 1, 1, 1}));
}

TEST(Compute, ReductionsOverOneAxisOrAll) {
  std::vector<double> x = {1, 7, 3, 4, 2, 9}; // [[1 7 3] [4 2 9]]
  auto reduce = [&](Op op, int32_t axis, std::vector<int64_t> shape) {
    Tree t;
    int32_t in = t.load(x, {2, 3});
    ValueNode n;
    n.op = op;
    n.lhs = in;
    n.axis = axis;
    n.shape = std::move(shape);
    t.push(n);
    return t.eval();
  };
  EXPECT_EQ(reduce(Op::Sum, 0, {3}), (std::vector<double>{5, 9, 12}));
  EXPECT_EQ(reduce(Op::Sum, 1, {2}), (std::vector<double>{11, 15}));
  EXPECT_EQ(reduce(Op::Sum, -1, {}), (std::vector<double>{26}));
  EXPECT_EQ(reduce(Op::ReduceMax, 1, {2}), (std::vector<double>{7, 9}));
  EXPECT_EQ(reduce(Op::ReduceMin, 0, {3}), (std::vector<double>{1, 2, 3}));
  EXPECT_EQ(reduce(Op::ReduceMax, -1, {}), (std::vector<double>{9}));
}

TEST(Compute, WhereSelectsElementWiseWithBroadcast) {
  Tree t;
  int32_t x = t.load({-2, 3, 0, 5}, {4});
  int32_t zero = t.constant(0);
  int32_t cond = t.node(Op::Gt, x, zero, {4});
  ValueNode sel;
  sel.op = Op::Where;
  sel.lhs = cond;
  sel.rhs = x;
  sel.third = t.constant(-1);
  sel.shape = {4};
  t.push(sel);
  EXPECT_EQ(t.eval(), (std::vector<double>{-1, 3, -1, 5}));
}

TEST(Compute, AsTypeRoundsLikeAStore) {
  auto astype = [](double v, DType to) {
    Tree t;
    ValueNode n;
    n.op = Op::AsType;
    n.lhs = t.constant(v);
    n.dtype = to;
    t.push(n);
    return t.eval()[0];
  };
  // bf16 keeps 8 significant bits, rounding to nearest even.
  EXPECT_EQ(astype(1.0 + std::ldexp(1, -8), DType::BF16), 1.0);
  EXPECT_EQ(astype(1.0 + 3 * std::ldexp(1, -8), DType::BF16), 1.0 + std::ldexp(1, -6));
  EXPECT_EQ(astype(324, DType::BF16), 324);
  EXPECT_EQ(astype(325, DType::BF16), 324);
  EXPECT_EQ(astype(327, DType::BF16), 328);
  EXPECT_EQ(astype(0.1, DType::F32), static_cast<double>(0.1f));
  EXPECT_EQ(astype(-2.7, DType::I32), -2);
  EXPECT_EQ(astype(300, DType::U8), 44);
}

TEST(Compute, BitcastReadsTheBits) {
  EXPECT_EQ(prim::bitcast(1.0, DType::F32, DType::I32), 1065353216); // 0x3f800000
  EXPECT_EQ(prim::bitcast(1065353216, DType::I32, DType::F32), 1.0);
  EXPECT_EQ(prim::bitcast(-1, DType::I32, DType::U32), 4294967295.0);
  EXPECT_EQ(prim::bitcast(1.0, DType::BF16, DType::I16), 16256);   // 0x3f80
  EXPECT_EQ(prim::bitcast(-16512, DType::I16, DType::BF16), -1.0); // 0xbf80
  EXPECT_EQ(prim::bitcast(-1, DType::I8, DType::U8), 255);
  EXPECT_EQ(prim::bitcast(200, DType::U8, DType::I8), -56);
  // The operand is first rounded to its own type.
  EXPECT_EQ(prim::bitcast(1.0 + std::ldexp(1, -30), DType::F32, DType::I32), 1065353216);
}

TEST(Compute, ReshapeKeepsTheRowMajorElements) {
  Tree t;
  int32_t x = t.load({1, 2, 3, 4, 5, 6}, {2, 3});
  int32_t r = t.node(Op::Reshape, x, -1, {3, 2});
  int32_t s = t.node(Op::Sum, r, -1, {3}); // sum over axis 0 of [[1 2] [3 4] [5 6]]
  t.expr.nodes[s].axis = 0;
  t.expr.nodes[s].shape = {2};
  EXPECT_EQ(t.eval(), (std::vector<double>{9, 12}));
}

// The epilogue kernel's outputs, from the neighbour's input as the executor fills it.
TEST(Compute, EpilogueKernelComputesRealValues) {
  std::optional<model::Program> p = testing::lowerExample("compute_epilogue.dk", 2);
  ASSERT_TRUE(p);
  RunOptions o;
  o.inputSeed = 4;
  RunResult r = runOnce(*p, o);
  ASSERT_TRUE(r.completed);
  EXPECT_TRUE(r.findings.empty());
  // Buffers: input 0, relu 1, row_max 2, row_sum 3, flat 4, half 5, bits 6, total 7.
  for (model::DeviceId d = 0; d < 2; ++d) {
    auto in = [&](int64_t e) { return inputValue(4, 1 - d, 0, e); };
    const auto &m = r.memory[d];
    double total = 0;
    for (int64_t row = 0; row < 4; ++row) {
      double mx = -1e9, sum = 0;
      for (int64_t col = 0; col < 8; ++col) {
        int64_t e = row * 8 + col;
        double v = in(e);
        EXPECT_EQ(m[1][e], std::max(v - 5.0, 0.0));
        EXPECT_EQ(m[4][e], v); // reshape keeps the row-major order
        EXPECT_EQ(m[5][e], prim::roundTo(prim::roundTo(v / 3.0, DType::F32), DType::BF16));
        EXPECT_EQ(m[6][e], prim::bitcast(v, DType::F32, DType::I32));
        mx = std::max(mx, v);
        sum += v;
      }
      EXPECT_EQ(m[2][row], mx);
      EXPECT_EQ(m[3][row], sum);
      total += sum;
    }
    EXPECT_EQ(m[7][0], total);
  }
}

// The all-gather matmul: block b of the output on device d is the bf16 rounding of
// lhs(device b) x rhs(device d), whatever schedule ran.
TEST(Compute, CollectiveMatmulMultipliesEveryBlock) {
  for (int64_t n : {2, 3}) {
    std::optional<model::Program> p = testing::lowerExample("collective_matmul.dk", n);
    ASSERT_TRUE(p);
    for (Policy policy : {Policy::Random, Policy::RoundRobin, Policy::Priority}) {
      RunOptions o;
      o.policy = policy;
      o.seed = 11;
      o.inputSeed = 2;
      RunResult r = runOnce(*p, o);
      ASSERT_TRUE(r.completed);
      EXPECT_TRUE(r.findings.empty());
      bool rounded = false;
      for (model::DeviceId d = 0; d < n; ++d)
        for (int64_t b = 0; b < n; ++b)
          for (int64_t i = 0; i < 2; ++i)
            for (int64_t j = 0; j < 4; ++j) {
              double sum = 0;
              for (int64_t k = 0; k < 8; ++k)
                sum += inputValue(2, static_cast<model::DeviceId>(b), 0, i * 8 + k) *
                       inputValue(2, d, 1, k * 4 + j);
              double expected = prim::roundTo(sum, DType::BF16);
              rounded = rounded || expected != sum;
              EXPECT_EQ(r.memory[d][2][(b * 2 + i) * 4 + j], expected)
                  << "device " << d << " block " << b;
            }
      EXPECT_TRUE(rounded) << "no product needed bf16 rounding: the test shows less than it "
                              "should";
    }
  }
}

} // namespace
} // namespace dkv::executor
