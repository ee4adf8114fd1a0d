// Tests of the terminal colours of text reports (support/Color.h).
#include "support/Color.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <unistd.h>

namespace dkv::support {
namespace {

TEST(Color, HeadingsCaretsAndFindingLabels) {
  EXPECT_EQ(colorize("a.dk:15:3: race: store races [race.0]\n"),
            "\033[1ma.dk:15:3:\033[0m \033[1;31mrace:\033[0m\033[1m store races [race.0]\033[0m\n");
  EXPECT_EQ(colorize("a.dk:2:1: warning: unused\n"),
            "\033[1ma.dk:2:1:\033[0m \033[1;35mwarning:\033[0m\033[1m unused\033[0m\n");
  EXPECT_EQ(colorize("a.dk:2:1: note: here"),
            "\033[1ma.dk:2:1:\033[0m \033[1;36mnote:\033[0m\033[1m here\033[0m");
  EXPECT_EQ(colorize("    ^\n"), "    \033[1;32m^\033[0m\n");
  EXPECT_EQ(colorize("  witness: x\n"), "\033[36m  witness:\033[0m x\n");
  EXPECT_EQ(colorize("  explain [two-writers]: t\n"),
            "\033[36m  explain [two-writers]:\033[0m\033[1m t\033[0m\n");
  EXPECT_EQ(colorize("2 findings, 1 suppressed (engine explore)\n"),
            "\033[1;31m2 findings, 1 suppressed\033[0m (engine explore)\n");
  EXPECT_EQ(colorize("verified: ok\n"), "\033[1;32mverified:\033[0m ok\n");
}

TEST(Color, OtherLinesAreUnchanged) {
  for (const char *line : {"   1.  device 0: signal s @12", "    landing[...] = 0",
                           "a b: race: not a location", "  trace", "", "x: y"})
    EXPECT_EQ(colorize(line), line) << line;
}

TEST(Color, ModesAndNoColor) {
  EXPECT_TRUE(colorWanted("always", -1));
  EXPECT_FALSE(colorWanted("never", 1));
  EXPECT_FALSE(colorWanted("auto", -1)); // not a terminal
  // NO_COLOR set and non-empty: never in auto mode; `always` overrides it.
  ::setenv("NO_COLOR", "1", 1);
  EXPECT_FALSE(colorWanted("auto", 1));
  EXPECT_TRUE(colorWanted("always", 1));
  ::unsetenv("NO_COLOR");
}

} // namespace
} // namespace dkv::support
