// Unit tests of the AST printer.
#include "TestUtil.h"

#include "frontend/AstPrinter.h"
#include "frontend/Parser.h"

#include <gtest/gtest.h>

namespace dkv::frontend {
namespace {

std::string print(const test::Run &r) {
  std::ostringstream out;
  printAst(*r.module, out);
  return out.str();
}

TEST(Printer, ParsedOnlyTreeHasNoTypes) {
  auto r = test::parseOnly("mesh x = 2\nkernel k() { let a = 1 + x }\n");
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(print(r), "Module @1:1\n"
                      "  MeshDecl @1:1\n"
                      "    AxisDecl x #0 @1:6\n"
                      "      size: IntLiteral 2 @1:10\n"
                      "  KernelDecl k @2:1\n"
                      "    body: Block @2:12\n"
                      "      LetStmt @2:14\n"
                      "        LetDecl a @2:14\n"
                      "          BinaryExpr + @2:22\n"
                      "            IntLiteral 1 @2:22\n"
                      "            NameExpr x @2:26\n");
}

TEST(Printer, CheckedTreeShowsTypesAndDeclarations) {
  auto r = test::load("mesh x = 2\nkernel k(out o: hbm f32[4]) { o[1:3] = 0 }\n");
  ASSERT_TRUE(r.ok) << r.rendered();
  std::string s = print(r);
  EXPECT_NE(s.find("param: BufferDecl o out hbm f32[4] @2:10"), std::string::npos) << s;
  EXPECT_NE(s.find("target: IndexExpr : ref f32[2] @2:31"), std::string::npos) << s;
  EXPECT_NE(s.find("base: NameExpr o -> BufferDecl@2:10 : ref f32[4] @2:31"), std::string::npos)
      << s;
  EXPECT_NE(s.find("Range @2:33"), std::string::npos) << s;
}

TEST(Printer, InfIsAFloatLiteralAndInfoAName) {
  auto r = test::load("mesh x = 2\nkernel k(out o: vmem f32[4]) { let info = 2\n"
                      "  o[0:info] = -inf\n  o[2:4] = inf }\n");
  ASSERT_TRUE(r.ok) << r.rendered();
  std::string s = print(r);
  EXPECT_NE(s.find("value: UnaryExpr - : float @3:15"), std::string::npos) << s;
  EXPECT_NE(s.find("FloatLiteral inf : float @3:16"), std::string::npos) << s;
  EXPECT_NE(s.find("value: FloatLiteral inf : float @4:12"), std::string::npos) << s;
  EXPECT_NE(s.find("LetDecl info"), std::string::npos) << s;
}

TEST(Printer, KeywordsComeFromTheGrammar) {
  for (const char *w :
       {"param", "const", "mesh",    "tensorcore_mesh", "kernel",        "sequence", "in",
        "out",   "inout", "scratch", "run_scoped",      "let",           "var",      "if",
        "else",  "for",   "sem",     "dma_sem",         "barrier",       "true",     "false",
        "and",   "or",    "not",     "lambda",          "emit_pipeline", "inf"})
    EXPECT_TRUE(isKeyword(w)) << w;
  for (const char *w : {"info", "x", "signal", "copy", "kernel_", "f32", ""})
    EXPECT_FALSE(isKeyword(w)) << w;
}

TEST(Printer, Deterministic) {
  std::string text = "mesh x = 2\nkernel k() grid(2) collective_id(1) { signal(barrier) }\n";
  EXPECT_EQ(print(test::load(text)), print(test::load(text)));
}

} // namespace
} // namespace dkv::frontend
