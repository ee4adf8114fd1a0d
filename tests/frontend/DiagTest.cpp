// Expected-diagnostic tests (clang -verify style): every `// diag: ID` comment in
// tests/frontend/diag/*.dk expects an error with that id on its line (`// diag: A B`
// expects two); the file must produce exactly the expected errors.
#include "TestUtil.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace dkv::frontend {
namespace {

namespace fs = std::filesystem;

std::multiset<std::pair<uint32_t, std::string>> expectedDiagnostics(const std::string &text) {
  std::multiset<std::pair<uint32_t, std::string>> out;
  std::istringstream in(text);
  std::string line;
  uint32_t number = 0;
  while (std::getline(in, line)) {
    ++number;
    size_t at = line.find("// diag:");
    if (at == std::string::npos)
      continue;
    std::istringstream ids(line.substr(at + 8));
    std::string id;
    while (ids >> id)
      out.insert({number, id});
  }
  return out;
}

TEST(Diag, ExpectedDiagnostics) {
  fs::path dir = fs::path(DKV_SOURCE_DIR) / "tests/frontend/diag";
  int count = 0;
  for (const auto &entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".dk")
      continue;
    ++count;
    std::ifstream in(entry.path(), std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    auto expected = expectedDiagnostics(s.str());
    auto r = test::load(s.str());
    std::multiset<std::pair<uint32_t, std::string>> actual;
    for (const auto &d : r.diags->diagnostics())
      if (d.severity == support::Severity::Error)
        actual.insert({d.range.begin.line, d.id});
    EXPECT_EQ(actual, expected) << entry.path() << "\n" << r.rendered();
  }
  EXPECT_GE(count, 1);
}

} // namespace
} // namespace dkv::frontend
