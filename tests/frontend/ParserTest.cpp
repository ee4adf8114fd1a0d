// Unit tests of the parser: the AST built for each construct.
#include "TestUtil.h"
#include "frontend/Annotations.h"

#include <gtest/gtest.h>

#include <sstream>

namespace dkv::frontend {
namespace {

using namespace ast;
using test::parseOnly;

const Block &body(const test::Run &r) { return r.module->kernel()->body(); }

TEST(Parser, TopLevelItemsInOrder) {
  auto r = parseOnly("param N = 4\nparam M\nconst S = N - 1\nmesh x = N, y = 2\n"
                     "kernel k(in a: hbm f32[8, 128], out o: any bf16[4], inout c: vmem i32)"
                     " grid(S, 2) collective_id(3) {}\n");
  ASSERT_TRUE(r.ok) << r.rendered();
  ASSERT_EQ(r.module->items().size(), 5u);
  EXPECT_EQ(r.module->params().size(), 2u);
  EXPECT_EQ(r.module->params()[1]->defaultValue(), nullptr);
  EXPECT_EQ(r.module->consts().size(), 1u);
  ASSERT_EQ(r.module->mesh()->axes().size(), 2u);
  EXPECT_EQ(r.module->mesh()->axes()[1]->name(), "y");
  EXPECT_EQ(r.module->mesh()->axes()[1]->index(), 1u);
  const KernelDecl *k = r.module->kernel();
  ASSERT_EQ(k->params().size(), 3u);
  EXPECT_EQ(k->params()[0]->direction(), Direction::In);
  EXPECT_EQ(k->params()[1]->space(), MemSpace::Any);
  EXPECT_EQ(k->params()[1]->dtype(), DType::BF16);
  EXPECT_EQ(k->params()[2]->direction(), Direction::InOut);
  EXPECT_TRUE(k->params()[2]->shape().empty());
  EXPECT_EQ(k->grid().size(), 2u);
  ASSERT_NE(k->barrier(), nullptr);
  EXPECT_EQ(k->barrier()->semKind(), SemKind::Barrier);
  EXPECT_EQ(k->barrier()->name(), "barrier");
}

TEST(Parser, StatementsAndRanges) {
  auto r = parseOnly("mesh x = 2\nkernel k(out o: hbm f32[2, 8]) {\n"
                     "  scratch b: vmem f32[2, 8], s: sem, d: dma_sem[2, 3]; let i = 1\n"
                     "  run_scoped(t: smem i32[4], u: dma_sem) { o[0, :] = b[1] }\n"
                     "  if i == 0 { } else if i < 3 { } else if true { } else { }\n"
                     "  for j in 0 .. 2 { o[j, 1:4] += 2.5 }\n"
                     "  signal(s, 2, device = 1)\n  wait(s, value = 2)\n"
                     "}\n");
  ASSERT_TRUE(r.ok) << r.rendered();
  const auto &stmts = body(r).stmts();
  ASSERT_EQ(stmts.size(), 7u);
  const auto &scratch = cast<ScratchStmt>(*stmts[0]);
  ASSERT_EQ(scratch.decls().size(), 3u);
  EXPECT_EQ(cast<SemDecl>(*scratch.decls()[2]).dims().size(), 2u);
  EXPECT_EQ(cast<SemDecl>(*scratch.decls()[2]).semKind(), SemKind::Dma);
  EXPECT_EQ(scratch.range().begin, (support::SourceLoc{3, 3}));
  EXPECT_TRUE(isa<LetStmt>(*stmts[1]));
  const auto &scoped = cast<RunScopedStmt>(*stmts[2]);
  EXPECT_EQ(cast<BufferDecl>(*scoped.decls()[0]).storage(), Storage::Scoped);
  const auto &ifs = cast<IfStmt>(*stmts[3]);
  EXPECT_EQ(ifs.branches().size(), 3u); // else-if chains stay flat
  EXPECT_NE(ifs.elseBody(), nullptr);
  const auto &loop = cast<ForStmt>(*stmts[4]);
  EXPECT_EQ(loop.var().name(), "j");
  const auto &store = cast<StoreStmt>(*loop.body().stmts()[0]);
  EXPECT_TRUE(store.accumulate());
  const auto &target = cast<IndexExpr>(store.target());
  ASSERT_EQ(target.subscripts().size(), 2u);
  EXPECT_EQ(target.subscripts()[0].kind, Subscript::Kind::Index);
  EXPECT_EQ(target.subscripts()[1].kind, Subscript::Kind::Range);
  const auto &sig = cast<SignalStmt>(*stmts[5]);
  ASSERT_NE(sig.inc(), nullptr);
  ASSERT_NE(sig.device(), nullptr);
  const auto &w = cast<WaitStmt>(*stmts[6]);
  ASSERT_NE(w.value(), nullptr);
}

TEST(Parser, Precedence) {
  auto r = parseOnly("mesh x = 2\nkernel k() { let a = not 1 + 2 * 3 < 4 and true or false }");
  ASSERT_TRUE(r.ok) << r.rendered();
  const auto &init = cast<LetStmt>(*body(r).stmts()[0]).decl().init();
  const auto &orE = cast<BinaryExpr>(init);
  EXPECT_EQ(orE.op(), BinaryOp::Or);
  const auto &andE = cast<BinaryExpr>(orE.lhs());
  EXPECT_EQ(andE.op(), BinaryOp::And);
  const auto &notE = cast<UnaryExpr>(andE.lhs());
  EXPECT_EQ(notE.op(), UnaryOp::Not);
  const auto &lt = cast<BinaryExpr>(notE.operand());
  EXPECT_EQ(lt.op(), BinaryOp::Lt);
  const auto &add = cast<BinaryExpr>(lt.lhs());
  EXPECT_EQ(add.op(), BinaryOp::Add);
  EXPECT_EQ(cast<BinaryExpr>(add.rhs()).op(), BinaryOp::Mul);
}

TEST(Parser, LeftAssociativeAndNegativeLiterals) {
  auto r = parseOnly("mesh x = 2\nkernel k() { let a = 10 - 3 - 2\n let b = -9223372036854775808\n"
                     " let c = -(a) }");
  ASSERT_TRUE(r.ok) << r.rendered();
  const auto &a = cast<BinaryExpr>(cast<LetStmt>(*body(r).stmts()[0]).decl().init());
  EXPECT_EQ(cast<BinaryExpr>(a.lhs()).op(), BinaryOp::Sub);
  EXPECT_EQ(cast<IntLiteral>(cast<LetStmt>(*body(r).stmts()[1]).decl().init()).value(), INT64_MIN);
  EXPECT_TRUE(isa<UnaryExpr>(cast<LetStmt>(*body(r).stmts()[2]).decl().init()));
}

TEST(Parser, CallsAndDescriptors) {
  auto r = parseOnly("mesh x = 2, y = 2\nkernel k(in a: hbm f32[8], out o: hbm f32[8]) {\n"
                     " scratch s: dma_sem, t: dma_sem\n"
                     " let m = min(axis_index(x), max(axis_size(y), program_id(0)))\n"
                     " let c = copy(a, o, s)\n"
                     " let d = remote_copy(a, o, s, t, device = (1, 0))\n"
                     " let e = remote_copy(src = a, dst = o, send_sem = s, recv_sem = t,"
                     " device = {y: 1})\n"
                     " let v = read(s)\n c.start(); d.wait_send(); d.wait_recv(); c.wait()\n}\n");
  ASSERT_TRUE(r.ok) << r.rendered();
  const auto &s = body(r).stmts();
  const auto &m = cast<BinaryExpr>(cast<LetStmt>(*s[1]).decl().init());
  EXPECT_EQ(m.op(), BinaryOp::Min);
  EXPECT_EQ(cast<CallExpr>(m.lhs()).builtin(), Builtin::AxisIndex);
  EXPECT_EQ(cast<BinaryExpr>(m.rhs()).op(), BinaryOp::Max);
  EXPECT_TRUE(isa<CopyExpr>(cast<LetStmt>(*s[2]).decl().init()));
  const auto &d = cast<RemoteCopyExpr>(cast<LetStmt>(*s[3]).decl().init());
  EXPECT_EQ(cast<TupleExpr>(d.device()).elements().size(), 2u);
  const auto &e = cast<RemoteCopyExpr>(cast<LetStmt>(*s[4]).decl().init());
  EXPECT_EQ(cast<MappingExpr>(e.device()).entries()[0].axis->name(), "y");
  EXPECT_EQ(cast<CallExpr>(cast<LetStmt>(*s[5]).decl().init()).builtin(), Builtin::Read);
  EXPECT_EQ(cast<DmaStmt>(*s[6]).method(), DmaMethod::Start);
  EXPECT_EQ(cast<DmaStmt>(*s[7]).method(), DmaMethod::WaitSend);
  EXPECT_EQ(cast<DmaStmt>(*s[8]).method(), DmaMethod::WaitRecv);
  EXPECT_EQ(cast<DmaStmt>(*s[9]).method(), DmaMethod::Wait);
}

TEST(Parser, DescriptorVariablesAndAsyncCopies) {
  auto r = parseOnly("mesh x = 2\nkernel k(in a: hbm f32[8], out o: hbm f32[8]) {\n"
                     " scratch s: dma_sem, t: dma_sem\n"
                     " var c, cs[2, 3]\n"
                     " c = async_copy(a, o, s)\n"
                     " cs[1, 2] = async_remote_copy(a, o, s, t, device = 1)\n"
                     " cs[1, 2].wait_send(); c.wait()\n}\n");
  ASSERT_TRUE(r.ok) << r.rendered();
  const auto &s = body(r).stmts();
  const auto &vars = cast<VarStmt>(*s[1]).decls();
  ASSERT_EQ(vars.size(), 2u);
  EXPECT_EQ(vars[0]->name(), "c");
  EXPECT_TRUE(vars[0]->dims().empty());
  EXPECT_EQ(vars[1]->dims().size(), 2u);
  const auto &assign = cast<StoreStmt>(*s[2]);
  EXPECT_EQ(cast<NameExpr>(assign.target()).name(), "c");
  EXPECT_TRUE(cast<CopyExpr>(assign.value()).started());
  const auto &element = cast<StoreStmt>(*s[3]);
  EXPECT_EQ(cast<IndexExpr>(element.target()).subscripts().size(), 2u);
  EXPECT_TRUE(cast<RemoteCopyExpr>(element.value()).started());
  const auto &wait = cast<DmaStmt>(*s[4]);
  EXPECT_EQ(wait.method(), DmaMethod::WaitSend);
  EXPECT_EQ(wait.descriptorName().name(), "cs");
  EXPECT_TRUE(isa<IndexExpr>(wait.descriptor()));
  EXPECT_EQ(cast<DmaStmt>(*s[5]).descriptorName().name(), "c");
  // `var` is reserved.
  EXPECT_FALSE(parseOnly("mesh x = 2\nkernel k() {\n let var = 1\n}\n").ok);
}

TEST(Parser, Subscripts) {
  auto r =
      parseOnly("mesh x = 2\nkernel k(out o: hbm f32[4, 4, 4]) { o[...] = 0; o[1:, :2, :] = 1 }");
  ASSERT_TRUE(r.ok) << r.rendered();
  const auto &a = cast<IndexExpr>(cast<StoreStmt>(*body(r).stmts()[0]).target());
  EXPECT_TRUE(a.ellipsis());
  const auto &b = cast<IndexExpr>(cast<StoreStmt>(*body(r).stmts()[1]).target());
  ASSERT_EQ(b.subscripts().size(), 3u);
  EXPECT_NE(b.subscripts()[0].lo, nullptr);
  EXPECT_EQ(b.subscripts()[0].hi, nullptr);
  EXPECT_EQ(b.subscripts()[1].lo, nullptr);
  EXPECT_NE(b.subscripts()[1].hi, nullptr);
  EXPECT_EQ(b.subscripts()[2].kind, Subscript::Kind::Full);
}

TEST(Parser, SyntaxErrorsAllReported) {
  auto r = parseOnly("mesh x = 2\nkernel k() {\n  let = 1\n  let b = 2 +\n  wait(\n}\n");
  EXPECT_FALSE(r.ok);
  EXPECT_GE(r.ids().size(), 2u);
  for (const auto &id : r.ids())
    EXPECT_TRUE(id == "syntax" || id == "unclosed-bracket") << id;
  EXPECT_FALSE(r.module->complete());
  EXPECT_NE(r.rendered().find("test.dk:3:7: error: expected identifier before '=' [syntax]"),
            std::string::npos)
      << r.rendered();
  // The `wait(` the parser gave up after is named where it opens.
  EXPECT_NE(r.rendered().find("test.dk:5:7: error: this '(' is never closed [unclosed-bracket]"),
            std::string::npos)
      << r.rendered();
}

TEST(Parser, TransformerErrors) {
  struct Case {
    const char *body;
    const char *id;
  } cases[] = {
      {"foo(1)", "unknown-function"},
      {"let a = foo(1)", "unknown-function"},
      {"let a = signal(s)", "misplaced-expr"},
      {"copy(a, a, s)", "misplaced-expr"},
      {"c.stop()", "unknown-method"},
      {"c.wait(1)", "arg-count"},
      {"signal()", "arg-count"},
      {"wait(s, 1, 2)", "arg-count"},
      {"let a = axis_index(x, 1)", "arg-count"},
      {"signal(s, amount = 2)", "bad-argument"},
      {"signal(s, inc = 1, inc = 2)", "bad-argument"},
      {"signal(inc = 2, s)", "bad-argument"},
      {"let a = 99999999999999999999", "literal-out-of-range"},
      {"let a = 1.0e999", "literal-out-of-range"},
      {"scratch b: dram f32[2]", "unknown-type"},
      {"scratch b: vmem f64[2]", "unknown-type"},
  };
  for (const Case &c : cases) {
    auto r = parseOnly(std::string("mesh x = 2\nkernel k() {\n") + c.body + "\n}\n");
    EXPECT_EQ(r.ids(), std::vector<std::string>{c.id}) << c.body << "\n" << r.rendered();
    EXPECT_TRUE(r.module->complete());
  }
  auto attr = parseOnly("mesh x = 2\nkernel k() grid(2) grid(3) {}");
  EXPECT_EQ(attr.ids(), std::vector<std::string>{"bad-attribute"});
  EXPECT_EQ(parseOnly("mesh x = 2\nkernel k() tiles(2) {}").ids(),
            std::vector<std::string>{"bad-attribute"});
  EXPECT_EQ(parseOnly("mesh x = 2\nkernel k() collective_id() {}").ids(),
            std::vector<std::string>{"arg-count"});
}

TEST(Parser, FloorDivisionIsSlash) {
  // `//` always starts a comment; `/` on integers is floor division.
  auto r = parseOnly("mesh x = 2\nkernel k() { let a = 7 / 2 // 2\n}");
  ASSERT_TRUE(r.ok) << r.rendered();
  EXPECT_EQ(cast<BinaryExpr>(cast<LetStmt>(*body(r).stmts()[0]).decl().init()).op(), BinaryOp::Div);
}

} // namespace
} // namespace dkv::frontend
