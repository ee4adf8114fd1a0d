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
