// Unit tests of --devices handling (applyDevices) and -D parsing.
#include "TestUtil.h"

#include <gtest/gtest.h>

namespace dkv::frontend {
namespace {

using test::load;

TEST(Devices, SetsTheParamNamingTheAxisSize) {
  auto r = load("param N = 4\nmesh x = N\nkernel k() {}", {}, 8);
  ASSERT_TRUE(r.ok) << r.rendered();
  EXPECT_EQ(r.module->mesh()->axes()[0]->size(), 8);
}

TEST(Devices, LiteralSizeMustAgree) {
  EXPECT_TRUE(load("mesh x = 4\nkernel k() {}", {}, 4).ok);
  auto r = load("mesh x = 4\nkernel k() {}", {}, 2);
  EXPECT_EQ(r.ids(), std::vector<std::string>{"devices-mismatch"});
  EXPECT_TRUE(load("param N = 2\nconst M = N * 2\nmesh x = M\nkernel k() {}", {}, 4).ok);
}

TEST(Devices, SeveralAxesOrConflictingDefine) {
  EXPECT_EQ(load("mesh x = 2, y = 2\nkernel k() {}", {}, 4).ids(),
            std::vector<std::string>{"devices-mismatch"});
  EXPECT_EQ(load("param N = 4\nmesh x = N\nkernel k() {}", {{"N", 2}}, 4).ids(),
            std::vector<std::string>{"devices-mismatch"});
  EXPECT_TRUE(load("param N = 4\nmesh x = N\nkernel k() {}", {{"N", 4}}, 4).ok);
}

// --mesh sizes every axis, through the params they name or checking literal sizes.
TEST(Mesh, SetsEveryAxisThroughItsParam) {
  auto r = test::loadMesh("param X = 2\nparam Y = 2\nmesh x = X, y = Y\nkernel k() {}",
                          {{"y", 4}, {"x", 3}});
  ASSERT_TRUE(r.ok) << r.rendered();
  EXPECT_EQ(r.module->mesh()->axes()[0]->size(), 3);
  EXPECT_EQ(r.module->mesh()->axes()[1]->size(), 4);
  // A literal size must agree; a one-axis mesh takes --mesh too.
  EXPECT_TRUE(
      test::loadMesh("param Y = 2\nmesh x = 2, y = Y\nkernel k() {}", {{"x", 2}, {"y", 8}}).ok);
  EXPECT_EQ(
      test::loadMesh("param Y = 2\nmesh x = 2, y = Y\nkernel k() {}", {{"x", 4}, {"y", 8}}).ids(),
      std::vector<std::string>{"mesh-mismatch"});
  auto one = test::loadMesh("param N = 2\nmesh x = N\nkernel k() {}", {{"x", 5}});
  ASSERT_TRUE(one.ok) << one.rendered();
  EXPECT_EQ(one.module->mesh()->axes()[0]->size(), 5);
}

TEST(Mesh, UnknownMissingAndConflictingAxes) {
  const char *text = "param X = 2\nparam Y = 2\nmesh x = X, y = Y\nkernel k() {}";
  EXPECT_EQ(test::loadMesh(text, {{"x", 2}}).ids(), std::vector<std::string>{"mesh-mismatch"});
  EXPECT_EQ(test::loadMesh(text, {{"x", 2}, {"y", 2}, {"z", 2}}).ids(),
            std::vector<std::string>{"mesh-mismatch"});
  EXPECT_EQ(test::loadMesh(text, {{"x", 2}, {"y", 2}}, {{"X", 3}}).ids(),
            std::vector<std::string>{"mesh-mismatch"});
  EXPECT_TRUE(test::loadMesh(text, {{"x", 3}, {"y", 2}}, {{"X", 3}}).ok);
  // Two axes sized by one param must get one size.
  const char *same = "param N = 2\nmesh x = N, y = N\nkernel k() {}";
  EXPECT_TRUE(test::loadMesh(same, {{"x", 3}, {"y", 3}}).ok);
  EXPECT_EQ(test::loadMesh(same, {{"x", 2}, {"y", 4}}).ids(),
            std::vector<std::string>{"mesh-mismatch"});
  // The product of the sizes is limited as for any mesh.
  EXPECT_EQ(test::loadMesh(text, {{"x", 4096}, {"y", 2}}).ids(),
            std::vector<std::string>{"invalid-size"});
}

TEST(Mesh, Parsing) {
  MeshSizes m;
  std::string error;
  EXPECT_TRUE(parseMeshSizes("x=2,y=4", m, error));
  EXPECT_EQ(m, (MeshSizes{{"x", 2}, {"y", 4}}));
  EXPECT_EQ(meshSizesText(m), "x=2,y=4");
  EXPECT_TRUE(parseMeshSizes("core_axis=1", m, error));
  EXPECT_FALSE(parseMeshSizes("x=0", m, error));
  EXPECT_NE(error.find("outside 1..4096"), std::string::npos) << error;
  EXPECT_FALSE(parseMeshSizes("x=-1", m, error));
  EXPECT_FALSE(parseMeshSizes("x=4097", m, error));
  EXPECT_FALSE(parseMeshSizes("x=2,x=2", m, error));
  EXPECT_FALSE(parseMeshSizes("x=2,", m, error));
  EXPECT_FALSE(parseMeshSizes("x", m, error));
  EXPECT_FALSE(parseMeshSizes("2x=2", m, error));
  EXPECT_FALSE(parseMeshSizes("x=2y", m, error));
  EXPECT_FALSE(parseMeshSizes("", m, error));
}

TEST(Defines, Parsing) {
  Defines d;
  std::string error;
  EXPECT_TRUE(parseDefine("N=4", d, error));
  EXPECT_TRUE(parseDefine("M_2=-3", d, error));
  EXPECT_EQ(d["M_2"], -3);
  EXPECT_TRUE(parseDefine("N=4", d, error));
  EXPECT_FALSE(parseDefine("N=5", d, error));
  EXPECT_FALSE(parseDefine("N", d, error));
  EXPECT_FALSE(parseDefine("=4", d, error));
  EXPECT_FALSE(parseDefine("2N=4", d, error));
  EXPECT_FALSE(parseDefine("N=4x", d, error));
  EXPECT_FALSE(parseDefine("N=99999999999999999999", d, error));
}

} // namespace
} // namespace dkv::frontend
