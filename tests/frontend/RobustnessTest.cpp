// Robustness: pathological inputs give diagnostics with a position, never a crash or hang.
#include "TestUtil.h"

#include "frontend/AstPrinter.h"

#include <gtest/gtest.h>

#include <chrono>
#include <random>

namespace dkv::frontend {
namespace {

// Runs the whole frontend (and the printer, if it got that far) on `text`: there
// must be an error with a line and column, within two seconds.
void expectDiagnosed(const std::string &text) {
  auto start = std::chrono::steady_clock::now();
  auto r = test::load(text);
  if (r.module) {
    std::ostringstream sink;
    printAst(*r.module, sink);
  }
  std::string rendered = r.rendered();
  auto seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 2.0);
  EXPECT_FALSE(r.ok);
  bool positioned = false;
  for (const auto &d : r.diags->diagnostics())
    positioned = positioned || (d.severity == support::Severity::Error && d.range.begin.valid());
  EXPECT_TRUE(positioned) << rendered.substr(0, 2000);
  EXPECT_LE(r.diags->diagnostics().size(), 101u); // the error limit holds
}

TEST(Robustness, EmptyFile) { expectDiagnosed(""); }

TEST(Robustness, OnlyComments) { expectDiagnosed("// nothing\n/* here */\n"); }

TEST(Robustness, RandomBinaryGarbage) {
  std::mt19937 rng(12345);
  for (int round = 0; round < 5; ++round) {
    std::string text(4096, '\0');
    for (char &c : text)
      c = static_cast<char>(rng() & 0xff);
    expectDiagnosed(text);
  }
}

TEST(Robustness, RandomTokenSoup) {
  std::mt19937 rng(7);
  const char *words[] = {"kernel",  "k",    "(",  ")",     "{",      "}",    "[",       "]",
                         "let",     "=",    "1",  "+",     "mesh",   "x",    ",",       ":",
                         "if",      "for",  "in", "..",    "signal", "wait", "scratch", "sem",
                         "dma_sem", "copy", ".",  "start", ";",      "\n"};
  for (int round = 0; round < 20; ++round) {
    std::string text = "mesh x = 2\nkernel k() {\n";
    for (int i = 0; i < 300; ++i)
      text += std::string(words[rng() % std::size(words)]) + " ";
    auto r = test::load(text);
    SUCCEED(); // must not crash; a random soup may occasionally be valid
  }
}

TEST(Robustness, NulBytesAndInvalidUtf8) {
  expectDiagnosed(std::string("mesh x = 2\nkernel k() {\0}\n", 25));
  expectDiagnosed("mesh x = 2\nkernel k() { let a = \xff\xfe }\n");
  // Non-ASCII inside comments is fine.
  EXPECT_TRUE(test::load("// caf\xc3\xa9 \xff\nmesh x = 2\nkernel k() {}\n").ok);
}

TEST(Robustness, TenMegabyteFile) {
  std::string text = "mesh x = 2\nkernel k() {\n";
  while (text.size() < 10u << 20)
    text += "  let a = 1 + 2\n";
  text += "}\n";
  auto r = test::load(text);
  EXPECT_TRUE(r.has("file-too-large"));
  expectDiagnosed(text);
}

TEST(Robustness, LargeValidFileParses) {
  std::string text = "mesh x = 2\nkernel k(out o: hbm f32[8]) {\n";
  for (int i = 0; i < 2000; ++i)
    text += "  o[" + std::to_string(i % 8) + "] = " + std::to_string(i) + "\n";
  text += "}\n";
  auto start = std::chrono::steady_clock::now();
  auto r = test::load(text);
  EXPECT_TRUE(r.ok) << r.rendered().substr(0, 1000);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 2.0);
}

TEST(Robustness, DeeplyNestedParens) {
  std::string text = "mesh x = 2\nkernel k() { let a = " + std::string(100000, '(') + "1" +
                     std::string(100000, ')') + " }";
  expectDiagnosed(text);
  EXPECT_TRUE(test::load(text).has("too-deep"));
  // Unbalanced, too.
  expectDiagnosed("mesh x = 2\nkernel k() { let a = " + std::string(100000, '('));
}

TEST(Robustness, ModerateNestingIsFine) {
  std::string text = "mesh x = 2\nkernel k() { let a = " + std::string(150, '(') + "1" +
                     std::string(150, ')') + " }";
  EXPECT_TRUE(test::load(text).ok);
}

TEST(Robustness, DeeplyNestedBlocks) {
  std::string text = "mesh x = 2\nkernel k() {\n";
  for (int i = 0; i < 10000; ++i)
    text += "if true {\n";
  for (int i = 0; i < 10000; ++i)
    text += "}\n";
  text += "}\n";
  expectDiagnosed(text);
}

TEST(Robustness, LongPrefixAndOperatorChains) {
  expectDiagnosed("mesh x = 2\nkernel k() { let a = " + std::string(100000, '-') + "1 }");
  std::string notChain = "mesh x = 2\nkernel k() { let a = ";
  for (int i = 0; i < 20000; ++i)
    notChain += "not ";
  expectDiagnosed(notChain + "true }");
  // A long flat chain parses in a loop but would nest the AST: too-deep.
  std::string sum = "mesh x = 2\nkernel k() { let a = 1";
  for (int i = 0; i < 50000; ++i)
    sum += "+1";
  expectDiagnosed(sum + " }");
  EXPECT_TRUE(test::load(sum + " }").has("too-deep"));
  std::string elifs = "mesh x = 2\nkernel k() { if false {}";
  for (int i = 0; i < 20000; ++i)
    elifs += " else if false {}";
  EXPECT_TRUE(test::load(elifs + " }").ok); // flat: no nesting
}

TEST(Robustness, UnterminatedCommentAndBlock) {
  expectDiagnosed("mesh x = 2\nkernel k() { /* never closed\n let a = 1 }\n");
  EXPECT_TRUE(test::load("mesh x = 2\n/* never closed").has("unterminated-comment"));
  expectDiagnosed("mesh x = 2\nkernel k() { let a = 1\n");
  expectDiagnosed("mesh x = 2\nkernel k() { let a = \"str\" }");
}

TEST(Robustness, UnknownCharacters) {
  auto r = test::load("mesh x = 2 @ # $ ` ~ ? !\nkernel k() {}");
  EXPECT_TRUE(r.has("invalid-character"));
  expectDiagnosed("mesh x = 2 @\nkernel k() {}");
}

TEST(Robustness, ManyErrorsAreCapped) {
  std::string text;
  for (int i = 0; i < 5000; ++i)
    text += "$ ";
  expectDiagnosed(text);
  std::string lines = "mesh x = 2\nkernel k() {\n";
  for (int i = 0; i < 5000; ++i)
    lines += "let = \n";
  expectDiagnosed(lines + "}");
}

TEST(Robustness, MeshSizeOverflowingInt64IsInvalidSize) {
  // The product of the axis sizes overflows 64 bits: still a mesh that is too large.
  auto r = test::load("mesh x = 4294967296, y = 4294967296\nkernel k() {}\n");
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(r.has("invalid-size")) << r.rendered();
  auto many = test::load("mesh a = 65536, b = 65536, c = 65536, d = 65536, e = 2\nkernel k() {}\n");
  EXPECT_TRUE(many.has("invalid-size")) << many.rendered();
  EXPECT_TRUE(test::load("mesh x = 64, y = 64\nkernel k() {}\n").ok);
}

TEST(Robustness, HugeSemaphoreAmountsAreInvalid) {
  const std::string head = "mesh x = 2\nkernel k() {\n  scratch s: sem\n";
  auto signal = test::load(head + "  signal(s, 9223372036854775807)\n  wait(s)\n}\n");
  EXPECT_TRUE(signal.has("invalid-value")) << signal.rendered();
  auto wait = test::load(head + "  signal(s)\n  wait(s, 2147483648)\n}\n");
  EXPECT_TRUE(wait.has("invalid-value")) << wait.rendered();
  EXPECT_TRUE(test::load(head + "  signal(s, 2147483647)\n  wait(s, 2147483647)\n}\n").ok);
}

// Files on disk: directories, missing files and endless files are errors, not an empty
// kernel or an unbounded read.
TEST(Robustness, LoadingADirectoryIsAnError) {
  std::string error;
  auto file = support::SourceFile::load(::testing::TempDir(), error);
  EXPECT_FALSE(file.has_value());
  EXPECT_NE(error.find("directory"), std::string::npos) << error;
}

TEST(Robustness, LoadingAMissingFileSaysWhy) {
  std::string error;
  EXPECT_FALSE(support::SourceFile::load("/nonexistent/dir/k.dk", error).has_value());
  EXPECT_NE(error.find("No such file"), std::string::npos) << error;
}

TEST(Robustness, EndlessFileIsReadUpToTheLimit) {
  std::string error;
  auto start = std::chrono::steady_clock::now();
  auto file = support::SourceFile::load("/dev/zero", error, 1000);
  ASSERT_TRUE(file.has_value()) << error;
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 2.0);
  EXPECT_TRUE(file->truncated());
  EXPECT_EQ(file->text().size(), 1000u);
  support::DiagnosticEngine diags(nullptr);
  parseModule(*file, diags);
  ASSERT_TRUE(diags.hasErrors());
  EXPECT_EQ(diags.diagnostics().front().id, "file-too-large");
  EXPECT_NE(diags.diagnostics().front().message.find("more than 1000 bytes"), std::string::npos)
      << diags.diagnostics().front().message;
}

} // namespace
} // namespace dkv::frontend
