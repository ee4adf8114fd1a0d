// Unit tests of the annotations in comments (frontend/Annotations.h): the parser hands
// the comments over with the module, annotationsOf reads them.
#include "frontend/Annotations.h"
#include "TestUtil.h"

#include <gtest/gtest.h>

#include <sstream>

namespace dkv::frontend {
namespace {

/// Parses `text` and reads the annotations of its comments into the same diagnostics.
struct Annotated : test::Run {
  Annotations annotations;
};

Annotated annotate(const std::string &text) {
  Annotated a;
  static_cast<test::Run &>(a) = test::parseOnly(text);
  a.annotations = annotationsOf(*a.module, *a.diags);
  a.ok = !a.diags->hasErrors();
  return a;
}

// The parser keeps each line comment, its text after `//` and whether it is alone on its
// line; it gives them no meaning (a malformed annotation is no parse error).
TEST(Annotations, TheParserHandsCommentsOver) {
  auto r = test::parseOnly("// expect: maybe\nmesh x = 2 // two\n/* block */\n");
  ASSERT_TRUE(r.ok) << r.rendered();
  const auto &c = r.module->comments();
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0].text, " expect: maybe");
  EXPECT_TRUE(c[0].alone);
  EXPECT_EQ(c[1].text, " two");
  EXPECT_FALSE(c[1].alone);
  EXPECT_EQ(c[1].range.begin.line, 2u);
}

TEST(Annotations, Annotations) {
  auto r = annotate("// expect: deadlock at 14\n// devices: 2..4\n// options: --invocations 2\n"
                    "// options: --dma-chunks 2\nmesh x = 2\nkernel k() {}\n");
  ASSERT_TRUE(r.ok) << r.rendered();
  const Annotations &a = r.annotations;
  ASSERT_TRUE(a.expect.has_value());
  EXPECT_EQ(a.expect->verdict, ExpectedVerdict::Deadlock);
  EXPECT_EQ(a.expect->line, 14u);
  EXPECT_EQ(a.devices, (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(a.options, (std::vector<std::string>{"--invocations", "2", "--dma-chunks", "2"}));
  auto list = annotate("// devices: 8, 2, 4\n// expect: exit-violation\n");
  EXPECT_EQ(list.annotations.devices, (std::vector<int64_t>{2, 4, 8}));
  EXPECT_EQ(list.annotations.expect->verdict, ExpectedVerdict::ExitViolation);
}

TEST(Annotations, MeshAnnotation) {
  auto r =
      annotate("// expect: ok\n// mesh: x=2,y=2   x=1,y=4\nmesh x = 2, y = 2\nkernel k() {}\n");
  ASSERT_TRUE(r.ok) << r.rendered();
  EXPECT_EQ(r.annotations.meshes, (std::vector<std::string>{"x=2,y=2", "x=1,y=4"}));
  EXPECT_TRUE(r.annotations.devices.empty());
}

// `// expect: VERDICT [at LINE] with OPTIONS`: the verdict under other options, with
// its own device counts or meshes (docs/examples.md "Verdicts under options").
TEST(Annotations, ExpectWithOptions) {
  auto r = annotate("// expect: race at 9\n// expect: ok with --dma-order link --devices 3\n"
                    "// expect: deadlock at 4 with --devices=2..4 -T t=[1,2]\n"
                    "// expect: ok with --invocations 1\n// devices: 3..4\n"
                    "// options: --invocations 2\nmesh x = 2\nkernel k() {}\n");
  ASSERT_TRUE(r.ok) << r.rendered();
  const Annotations &a = r.annotations;
  ASSERT_TRUE(a.expect.has_value());
  EXPECT_EQ(a.expect->verdict, ExpectedVerdict::Race);
  ASSERT_EQ(a.cases.size(), 3u);
  EXPECT_EQ(a.cases[0].expect.verdict, ExpectedVerdict::Ok);
  EXPECT_FALSE(a.cases[0].expect.line.has_value());
  EXPECT_EQ(a.cases[0].devices, (std::vector<int64_t>{3}));
  EXPECT_EQ(a.cases[0].options, (std::vector<std::string>{"--dma-order", "link"}));
  EXPECT_EQ(a.cases[1].expect.line, 4u);
  EXPECT_EQ(a.cases[1].devices, (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(a.cases[1].options, (std::vector<std::string>{"-T", "t=[1,2]"}));
  EXPECT_TRUE(a.cases[2].devices.empty());
  std::ostringstream printed;
  printAnnotations(a, printed);
  EXPECT_EQ(printed.str(), "expect race 9\nexpect-with ok - 3 --dma-order link\n"
                           "expect-with deadlock 4 2,3,4 -T t=[1,2]\n"
                           "expect-with ok - - --invocations 1\ndevices 3 4\n"
                           "options --invocations 2\n");
  auto mesh = annotate("// expect: ok\n// mesh: x=2,y=2\n// expect: race with --mesh x=1,y=2\n");
  ASSERT_TRUE(mesh.ok) << mesh.rendered();
  EXPECT_EQ(mesh.annotations.cases[0].meshes, (std::vector<std::string>{"x=1,y=2"}));
  for (const char *text :
       {"// expect: ok with\n", "// expect: ok at with --invocations 2\n",
        "// expect: ok with --devices\n", "// expect: ok with --devices 0\n",
        "// expect: ok with --devices 2 --devices 3\n", "// expect: ok with --mesh x=0\n",
        "// expect: ok with --devices 2 --mesh x=2\n",
        "// expect: ok with --invocations 2\n// expect: race with --invocations 2\n",
        "// mesh: x=2\n// expect: ok with --devices 2\n",
        "// expect: ok with --mesh x=2\n// devices: 2\n",
        "// options: -T t=[1]\n// expect: ok with -T t=[2]\n",
        "// options: -DN=2\n// expect: ok with --define N=3\n"}) {
    auto bad = annotate(text);
    EXPECT_EQ(bad.ids(), std::vector<std::string>{"bad-annotation"}) << text;
  }
}

TEST(Annotations, MalformedAnnotations) {
  for (const char *text :
       {"// expect: maybe\n", "// expect:\n", "// expect: ok at x\n", "// expect: ok extra\n",
        "// devices: 4..2\n", "// devices: two\n", "// devices: 0\n", "// options:\n",
        "// expect: ok\n// expect: race\n", "// mesh:\n", "// mesh: x=0\n", "// mesh: x=2,x=2\n",
        "// mesh: x\n", "// mesh: x=2\n// mesh: x=3\n", "// devices: 2\n// mesh: x=2\n",
        "// mesh: x=2\n// devices: 2\n"}) {
    auto r = annotate(text);
    EXPECT_EQ(r.ids(), std::vector<std::string>{"bad-annotation"}) << text;
  }
  // Other comments mentioning the words are ignored.
  EXPECT_TRUE(annotate("// we expect: nothing\n/* expect: x */\n").ok);
}

TEST(Annotations, Suppressions) {
  auto r = annotate("mesh x = 2\nkernel k() {\n  // dkv: allow race -- known, see issue 7\n"
                    "  let a = 1  //dkv:  allow   exit-violation   --  kept  \n}\n");
  ASSERT_TRUE(r.ok) << r.rendered();
  const auto &s = r.annotations.suppressions;
  ASSERT_EQ(s.size(), 2u);
  // Alone on its line: the next line; after code: its own line.
  EXPECT_EQ(s[0].kind, "race");
  EXPECT_EQ(s[0].reason, "known, see issue 7");
  EXPECT_EQ(s[0].line, 4u);
  EXPECT_EQ(s[0].range.begin.line, 3u);
  EXPECT_EQ(s[1].kind, "exit-violation");
  EXPECT_EQ(s[1].reason, "kept");
  EXPECT_EQ(s[1].line, 4u);
  // The first line of the file, alone: line 2.
  EXPECT_EQ(annotate("// dkv: allow deadlock -- x\n").annotations.suppressions[0].line, 2u);
}

TEST(Annotations, MalformedSuppressions) {
  for (const char *text :
       {"// dkv: allow race\n", "// dkv: allow race --   \n", "// dkv: allow races -- r\n",
        "// dkv: allow -- r\n", "// dkv: deny race -- r\n", "// dkv: allow race deadlock -- r\n",
        "// dkv:\n"}) {
    auto r = annotate(text);
    EXPECT_EQ(r.ids(), std::vector<std::string>{"bad-suppression"}) << text;
    EXPECT_TRUE(r.annotations.suppressions.empty()) << text;
  }
  auto r = annotate("mesh x = 2\n  let a = 1 // dkv: allow race\n");
  EXPECT_NE(r.rendered().find("test.dk:2:13: error: suppression of a race without a reason"),
            std::string::npos)
      << r.rendered();
  // Comments that only mention dkv are not suppressions.
  EXPECT_TRUE(annotate("// checked by dkv: allow race -- no\n").ok);
}

} // namespace
} // namespace dkv::frontend
