// "Did you mean" in the kernel language's diagnostics (support/Suggest.h): misspelt
// names, functions, statements and descriptor methods get the closest known one.
#include "TestUtil.h"

#include <gtest/gtest.h>

namespace dkv::frontend {
namespace {

std::vector<std::string> messages(const test::Run &r) {
  std::vector<std::string> out;
  for (const support::Diagnostic &d : r.diags->diagnostics())
    out.push_back(d.message + " [" + d.id + "]");
  return out;
}

TEST(Suggestion, NamesFunctionsStatementsMethods) {
  auto r = test::load("mesh x = 2\n"
                      "kernel k(in input: hbm f32[8], out output: hbm f32[8]) {\n"
                      "  scratch send: dma_sem, recv: dma_sem\n"
                      "  let right = (axis_index(x) + 1) % 2\n"
                      "  let c = remote_cpy(input, output, send, recv, device = right)\n"
                      "  let d = remote_copy(input, output, send, recv, device = rigth)\n"
                      "  d.strat()\n"
                      "  d.wait()\n"
                      "  sginal(send)\n"
                      "}\n");
  EXPECT_EQ(messages(r),
            (std::vector<std::string>{
                "unknown function 'remote_cpy'; did you mean 'remote_copy'? [unknown-function]",
                "unknown descriptor method 'strat'; did you mean 'start'? [unknown-method]",
                "unknown statement 'sginal'; did you mean 'signal'? [unknown-function]",
                "unknown name 'rigth'; did you mean 'right'? [unknown-name]"}))
      << r.rendered();
  auto s = test::load("mesh x = 2\n"
                      "kernel k(in input: hbm f32[8], out output: hbm f32[8]) {\n"
                      "  scratch send: dma_sem, recv: dma_sem\n"
                      "  let right = (axis_index(x) + 1) % 2\n"
                      "  let d = remote_copy(input, output, send, recv, device = rigth)\n"
                      "  d.start()\n"
                      "  d.wait()\n"
                      "  let q = Right + 1\n"
                      "}\n");
  EXPECT_EQ(messages(s), (std::vector<std::string>{
                             "unknown name 'rigth'; did you mean 'right'? [unknown-name]",
                             "unknown name 'Right'; did you mean 'right'? [unknown-name]"}))
      << s.rendered();
}

TEST(Suggestion, NothingCloseGivesThePlainMessage) {
  auto r = test::load("mesh x = 2\n"
                      "kernel k(in input: hbm f32[8]) {\n"
                      "  let q = zzzz + 1\n"
                      "  frobnicate(q)\n"
                      "}\n");
  EXPECT_EQ(messages(r),
            (std::vector<std::string>{"unknown statement 'frobnicate'; expected signal or wait "
                                      "[unknown-function]",
                                      "unknown name 'zzzz' [unknown-name]"}))
      << r.rendered();
  auto s = test::load("mesh x = 2\n"
                      "kernel k(in input: hbm f32[8]) {\n"
                      "  let q = zzzz + 1\n"
                      "}\n");
  EXPECT_EQ(messages(s), (std::vector<std::string>{"unknown name 'zzzz' [unknown-name]"}))
      << s.rendered();
}

} // namespace
} // namespace dkv::frontend
