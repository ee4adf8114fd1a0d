// Tests of the Promela emitter: structure, line map, scaling and golden models.
#include "promela/Emit.h"
#include "PromelaFixtures.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace dkv::promela {
namespace {

using testing::rightPermute;
using testing::sharedRecvSemaphore;

std::string lineOf(const std::string &text, int line) {
  std::istringstream in(text);
  std::string l;
  for (int i = 0; i < line && std::getline(in, l); ++i) {
  }
  return l;
}

TEST(Emit, OneProctypePerDeviceAndADmaLoop) {
  std::string text = emitPromela(rightPermute(2), {}, nullptr);
  EXPECT_NE(text.find("active proctype dev0()"), std::string::npos);
  EXPECT_NE(text.find("active proctype dev1()"), std::string::npos);
  EXPECT_NE(text.find("active proctype dmas()"), std::string::npos);
  EXPECT_NE(text.find("#define NDEV 2"), std::string::npos);
  EXPECT_NE(text.find("#define DMA_CHUNKS 1"), std::string::npos);
  EXPECT_NE(text.find("/* fixture.dk:5 start dma 0"), std::string::npos);
  EXPECT_NE(text.find("printf(\"DKV d 0 "), std::string::npos);
  EXPECT_EQ(text, emitPromela(rightPermute(2), {}, nullptr)); // deterministic
}

TEST(Emit, LineMapPointsAssertsAtTheirChecks) {
  LineMap map;
  std::string text = emitPromela(sharedRecvSemaphore(), {}, &map);
  ASSERT_FALSE(map.checkAtLine.empty());
  int races = 0;
  for (const auto &[line, index] : map.checkAtLine) {
    EXPECT_NE(lineOf(text, line).find("assert("), std::string::npos) << line;
    const Check &check = map.checks[index];
    if (check.kind == report::FindingKind::Race) {
      ++races;
      EXPECT_TRUE(check.primary.loc.valid());
      EXPECT_FALSE(check.secondary.empty());
    }
  }
  // The loads of a on device 1 (line 16) and of b (line 18) each race with one DMA.
  EXPECT_EQ(races, 2);
  // Every line is mapped; statement lines carry their kernel line.
  int lines = static_cast<int>(std::count(text.begin(), text.end(), '\n'));
  ASSERT_EQ(static_cast<int>(map.source.size()), lines);
}

TEST(Emit, ScalesSemaphoresByTheirGcd) {
  LineMap map;
  std::string text = emitPromela(rightPermute(2), {}, &map);
  ASSERT_EQ(map.semScale.size(), 2u);
  EXPECT_EQ(map.semScale[0], 32); // every amount on send is 32 units
  EXPECT_NE(text.find("byte sem_send[NDEV];"), std::string::npos);
  EXPECT_NE(text.find("sem_recv[0] >= 1 -> printf("), std::string::npos);
  EXPECT_NE(text.find("sem_recv[0] = sem_recv[0] - 1 }"), std::string::npos);
  EXPECT_GT(map.depthBound, 0);
}

TEST(Emit, ChunksCarryTheRemainderFirst) {
  model::Options o;
  o.dmaChunks = 3; // 16 units: 6, 5, 5
  LineMap map;
  std::string text = emitPromela(sharedRecvSemaphore(o), {}, &map);
  EXPECT_NE(text.find("(DMA_CHUNKS - snd[0] < 1 -> 6 : 5)"), std::string::npos) << text;
}

/// Exact comparison with tests/golden/promela/NAME; DKV_UPDATE_GOLDEN=1 rewrites it.
/// The examples' goldens (NAME.nN.pml, from `dkv dump-promela`) are checked by
/// tests/golden; this one covers what no example uses: chunks and a semaphore unit.
void expectGolden(const std::string &name, const std::string &text) {
  std::string path = std::string(DKV_SOURCE_DIR) + "/tests/golden/promela/" + name;
  if (const char *update = std::getenv("DKV_UPDATE_GOLDEN"); update && std::string(update) == "1") {
    std::ofstream(path, std::ios::binary) << text;
    return;
  }
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in) << "missing golden file " << path << " (run with DKV_UPDATE_GOLDEN=1)";
  std::stringstream expected;
  expected << in.rdbuf();
  EXPECT_EQ(text, expected.str()) << "golden " << path << " differs (DKV_UPDATE_GOLDEN=1)";
}

TEST(EmitGolden, SharedReceiveSemaphoreTwoChunks) {
  model::Options o;
  o.dmaChunks = 2;
  o.semUnit = 4;
  EmitOptions options;
  options.modelFileName = "fixture_shared_recv_sem_chunks.pml";
  expectGolden("fixture_shared_recv_sem_chunks.pml",
               emitPromela(sharedRecvSemaphore(o), options, nullptr));
}

} // namespace
} // namespace dkv::promela
