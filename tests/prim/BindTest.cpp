// The argument binder: positional, keyword, keyword-only, variadic and defaults, and
// its `.dk` diagnostics.
#include "prim/Bind.h"

#include <gtest/gtest.h>

namespace dkv::prim {
namespace {

Signature sig(std::string_view text) { return *parseSignature(text); }

TEST(Bind, PositionalAndKeyword) {
  Signature s = sig("sum(x: array, axis: axis = None, *, keepdims: bool = false)");
  std::vector<Arg> args = {{""}, {"keepdims"}, {"axis"}};
  BindResult b = bindArguments(s, args);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b.slot, (std::vector<int>{0, 2, 1}));
  args = {{""}, {""}};
  b = bindArguments(s, args);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b.slot, (std::vector<int>{0, 1, -1}));
}

TEST(Bind, KeywordOnlyParametersTakeNoPositionalArgument) {
  // max(a, b) is not the reduction max(x, *, axis): the .dk overloads rely on it.
  Signature s = sig("max(x: array, *, axis: axis = None, keepdims: bool = false)");
  std::vector<Arg> args = {{""}, {""}};
  BindResult b = bindArguments(s, args);
  ASSERT_EQ(b.errors.size(), 1u);
  EXPECT_EQ(b.errors[0].kind, BindError::Kind::TooMany);
  EXPECT_EQ(dkErrorMessage(b.errors[0], s, args),
            "too many positional arguments to max(): it takes at most 1");
}

TEST(Bind, ErrorsInDkWords) {
  Signature s = sig("where(cond: cond, a: array, b: array)");
  std::vector<Arg> args = {{""}, {"c"}, {"a"}, {"a"}, {""}};
  BindResult b = bindArguments(s, args);
  ASSERT_EQ(b.errors.size(), 3u);
  EXPECT_EQ(dkErrorMessage(b.errors[0], s, args), "where() has no argument named 'c'");
  EXPECT_EQ(dkErrorMessage(b.errors[1], s, args), "argument 'a' of where() given twice");
  EXPECT_EQ(dkErrorMessage(b.errors[2], s, args), "positional argument after a named argument");
  EXPECT_EQ(dkErrorId(b.errors[2]), "bad-argument");
  args = {{""}};
  b = bindArguments(s, args);
  ASSERT_EQ(b.errors.size(), 1u);
  EXPECT_EQ(dkErrorId(b.errors[0]), "arg-count");
  EXPECT_EQ(dkErrorMessage(b.errors[0], s, args), "missing argument 'a' of where() (it takes 3 "
                                                  "arguments)");
  Signature g = sig("gelu(x: array, approximate: bool = true)");
  args = {};
  b = bindArguments(g, args);
  EXPECT_EQ(dkErrorMessage(b.errors[0], g, args),
            "missing argument 'x' of gelu() (it takes at least 1 argument)");
  args = {{""}, {""}, {""}};
  b = bindArguments(g, args);
  EXPECT_EQ(dkErrorMessage(b.errors[0], g, args),
            "too many arguments to gelu(): it takes at most 2");
}

TEST(Bind, VariadicTakesTheRest) {
  Signature s = sig(".reshape(*shape: shape)");
  std::vector<Arg> args = {{""}, {""}};
  BindResult b = bindArguments(s, args);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b.rest, (std::vector<size_t>{0, 1}));
}

} // namespace
} // namespace dkv::prim
