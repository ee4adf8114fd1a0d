// The API tables of the docs against the catalogue: docs/language.md's table of compute
// ops is the catalogue's `doc` rows (generated: DKV_UPDATE_GOLDEN=1 rewrites it), and
// each compute-op row of docs/python.md's Pallas API table names only Python spellings
// of the op it maps to.
#include "prim/Op.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

namespace dkv::prim {
namespace {

std::string read(const std::string &path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

const std::string kBegin = "<!-- catalogue table: generated from prim/Ops.def -->\n";
const std::string kEnd = "<!-- end of catalogue table -->\n";

std::string table() {
  std::string t = "| op | `.dk` | Pallas / JAX | result |\n|---|---|---|---|\n";
  for (const OpRecord &r : records())
    if (!r.doc.empty())
      t += std::string(r.doc) + "\n";
  return t;
}

TEST(Docs, LanguageTableIsTheCatalogue) {
  const std::string path = std::string(DKV_SOURCE_DIR) + "/docs/language.md";
  std::string doc = read(path);
  size_t begin = doc.find(kBegin), end = doc.find(kEnd);
  ASSERT_NE(begin, std::string::npos) << "docs/language.md has no '" << kBegin << "'";
  ASSERT_NE(end, std::string::npos);
  begin += kBegin.size();
  const std::string expected = table();
  if (const char *update = std::getenv("DKV_UPDATE_GOLDEN"); update && std::string(update) == "1") {
    doc.replace(begin, end - begin, expected);
    std::ofstream(path) << doc;
    return;
  }
  EXPECT_EQ(doc.substr(begin, end - begin), expected)
      << "regenerate: DKV_UPDATE_GOLDEN=1 ctest --test-dir build -R Docs.LanguageTable";
}

// Each row's documented Python names are its spellings, all of them (methods aside).
TEST(Docs, RowsNameEveryPythonSpelling) {
  const std::regex pyName(R"(((?:jnp|lax|pl|pltpu|jax\.nn)\.[a-z_]+))");
  for (const OpRecord &r : records()) {
    if (r.doc.empty())
      continue;
    // | op | .dk | Python | result |
    std::string doc(r.doc);
    size_t a = doc.find(" | "), b = doc.find(" | ", a + 3), c = doc.find(" | ", b + 3);
    ASSERT_NE(c, std::string::npos) << doc;
    const std::string python = doc.substr(b + 3, c - b - 3);
    std::set<std::string> named;
    for (std::sregex_iterator m(python.begin(), python.end(), pyName), e; m != e; ++m) {
      named.insert((*m)[1].str());
      if (auto op = findOpByPythonName((*m)[1].str())) {
        EXPECT_EQ(*op, r.id) << (*m)[1] << " in the doc row of " << name(r.id);
      }
    }
    for (const PySpelling &s : pythonSpellings(r.id))
      if (s.name.front() != '.') {
        EXPECT_TRUE(named.count(std::string(s.name)))
            << s.name << " is not in the doc row of " << name(r.id);
      }
  }
}

// Rows of docs/python.md's API table whose kernel-language column calls a catalogue op:
// every catalogue Python name in the row is a spelling of an op called there.
TEST(Docs, PythonRowsNameTheirOps) {
  const std::string doc = read(std::string(DKV_SOURCE_DIR) + "/docs/python.md");
  std::istringstream lines(doc);
  std::string line;
  const std::regex call(R"(`([a-z_]+)\()"), pyName(R"(((?:jnp|lax|pl|pltpu|jax\.nn)\.[a-z_]+))");
  int checked = 0;
  while (std::getline(lines, line)) {
    if (line.rfind("| ", 0) != 0)
      continue;
    const size_t split = line.find(" | ", 2);
    if (split == std::string::npos)
      continue;
    const std::string python = line.substr(0, split), kernel = line.substr(split);
    std::vector<Op> called;
    for (std::sregex_iterator m(kernel.begin(), kernel.end(), call), e; m != e; ++m)
      for (Op op : findOpsByDkName((*m)[1].str()))
        called.push_back(op);
    if (called.empty())
      continue;
    for (std::sregex_iterator m(python.begin(), python.end(), pyName), e; m != e; ++m) {
      auto op = findOpByPythonName((*m)[1].str());
      if (!op)
        continue; // not a compute op (a control-flow or DMA API of the same row)
      ++checked;
      EXPECT_NE(std::find(called.begin(), called.end(), *op), called.end())
          << (*m)[1] << " is " << name(*op) << " in the catalogue; docs/python.md: " << line;
    }
  }
  EXPECT_GT(checked, 5) << "docs/python.md's compute rows were not found";
}

} // namespace
} // namespace dkv::prim
