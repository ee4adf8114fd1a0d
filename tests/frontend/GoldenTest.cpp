// Golden tests: `tests/golden/parse/X.dk` printed after sema must equal `X.ast` exactly.
// DKV_UPDATE_GOLDEN=1 rewrites the .ast files instead.
#include "TestUtil.h"

#include "frontend/AstPrinter.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace dkv::frontend {
namespace {

namespace fs = std::filesystem;

std::string readFile(const fs::path &path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(Golden, ParseOutputs) {
  fs::path dir = fs::path(DKV_SOURCE_DIR) / "tests/golden/parse";
  bool update = std::getenv("DKV_UPDATE_GOLDEN") != nullptr;
  int count = 0;
  std::vector<fs::path> files;
  for (const auto &entry : fs::directory_iterator(dir))
    if (entry.path().extension() == ".dk")
      files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  for (const fs::path &dk : files) {
    ++count;
    auto r = test::load(readFile(dk));
    ASSERT_TRUE(r.ok) << dk << "\n" << r.rendered();
    std::ostringstream out;
    printAst(*r.module, out);
    fs::path golden = dk;
    golden.replace_extension(".ast");
    if (update) {
      std::ofstream(golden, std::ios::binary) << out.str();
      continue;
    }
    ASSERT_TRUE(fs::exists(golden)) << golden << " missing; run with DKV_UPDATE_GOLDEN=1";
    EXPECT_EQ(out.str(), readFile(golden)) << dk;
  }
  EXPECT_GE(count, 2);
}

} // namespace
} // namespace dkv::frontend
