// "Did you mean" (support/Suggest.h): the distance, the threshold and the pick, and
// the same suggestions as CPython itself on a few thousand misspellings.
#include "support/Suggest.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace dkv::support {
namespace {

TEST(Suggest, Distance) {
  const size_t any = 1000;
  EXPECT_EQ(editDistance("right", "right", any), 0u);
  EXPECT_EQ(editDistance("rigth", "right", any), 4u); // two replacements
  EXPECT_EQ(editDistance("Right", "right", any), 1u); // a case flip
  EXPECT_EQ(editDistance("chek", "check", any), 2u);  // one insertion
  EXPECT_EQ(editDistance("", "abc", any), 6u);
  EXPECT_EQ(editDistance("kitten", "sitting", any), 6u);
  // Past the limit the answer is only "too far".
  EXPECT_GT(editDistance("kitten", "sitting", 3), 3u);
  // Long strings (after the common prefix and suffix) are never close.
  EXPECT_GT(editDistance(std::string(41, 'a') + "x", std::string(41, 'b') + "x", any), any);
}

TEST(Suggest, Threshold) {
  EXPECT_EQ(suggestThreshold("rigth", "right"), 4u); // (5 + 5 + 3) * 2 / 6
  EXPECT_EQ(suggestThreshold("z4", "z3"), 2u);
}

TEST(Suggest, Pick) {
  EXPECT_EQ(closestName("rigth", {"left", "right"}), "right");
  EXPECT_EQ(closestName("chek", {"parse", "check", "model"}), "check");
  EXPECT_EQ(closestName("--device", {"--devices", "--mesh"}), "--devices");
  EXPECT_EQ(closestName("remote_cpy", {"copy", "remote_copy", "async_remote_copy"}), "remote_copy");
  EXPECT_EQ(closestName("xyz", {"check", "parse"}), std::nullopt);
  EXPECT_EQ(closestName("check", {"check"}), std::nullopt); // the name itself is skipped
  // Of equally close candidates, the first.
  EXPECT_EQ(closestName("ab", {"abc", "abd"}), "abc");
  EXPECT_EQ(closestName("ab", {"abd", "abc"}), "abd");
  EXPECT_EQ(didYouMean("rigth", {"right"}), "; did you mean 'right'?");
  EXPECT_EQ(didYouMean("xyz", {"right"}), "");
  std::vector<std::string> owned = {"send_sem", "recv_sem"};
  EXPECT_EQ(closestName("recv_semm", owned), "recv_sem");
}

// CPython as the oracle: misspellings of a vocabulary (deletions, insertions,
// replacements, swaps, case flips, and unrelated words), each asked of a module whose
// attributes are the vocabulary (tests/support/cpython_suggest.py); dkv must suggest
// exactly what CPython suggests.
TEST(Suggest, AgreesWithCPython) {
  std::vector<std::string> vocabulary = {"check",
                                         "parse",
                                         "model",
                                         "run",
                                         "properties",
                                         "engines",
                                         "translate",
                                         "dump-promela",
                                         "dump-smt",
                                         "right",
                                         "left",
                                         "send_sem",
                                         "recv_sem",
                                         "remote_copy",
                                         "async_remote_copy",
                                         "copy",
                                         "axis_index",
                                         "program_id",
                                         "wait_recv",
                                         "wait_send",
                                         "signal",
                                         "wait",
                                         "barrier",
                                         "devices",
                                         "dma_chunks",
                                         "invocations",
                                         "make_async_remote_copy",
                                         "make_async_copy",
                                         "semaphore_signal",
                                         "x",
                                         "ab",
                                         "abc",
                                         "Output",
                                         "output"};
  // The attributes every module has, which CPython also considers.
  std::vector<std::string> candidates = vocabulary;
  for (const char *dunder : {"__doc__", "__loader__", "__name__", "__package__", "__spec__"})
    candidates.push_back(dunder);
  std::sort(candidates.begin(), candidates.end()); // dir() order
  uint64_t state = 12345;
  auto next = [&](uint64_t bound) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<size_t>((state >> 33) % bound);
  };
  const std::string letters = "abcdefghijklmnopqrstuvwxyz_ABCDEFGHIJKLMNOPQRSTUVWXYZ-";
  std::vector<std::string> names;
  for (int round = 0; round < 40; ++round)
    for (const std::string &word : vocabulary) {
      std::string w = word;
      int edits = 1 + static_cast<int>(next(3));
      for (int e = 0; e < edits && !w.empty(); ++e) {
        size_t at = next(w.size());
        switch (next(5)) {
        case 0:
          w.erase(at, 1);
          break;
        case 1:
          w.insert(w.begin() + static_cast<long>(at), letters[next(letters.size())]);
          break;
        case 2:
          w[at] = letters[next(letters.size())];
          break;
        case 3:
          if (at + 1 < w.size())
            std::swap(w[at], w[at + 1]);
          break;
        default:
          w[at] = static_cast<char>(std::isupper(static_cast<unsigned char>(w[at]))
                                        ? std::tolower(static_cast<unsigned char>(w[at]))
                                        : std::toupper(static_cast<unsigned char>(w[at])));
        }
      }
      // Python attribute names: no '-' and not empty; CPython has its own message for
      // a name that exists.
      std::replace(w.begin(), w.end(), '-', '_');
      if (!w.empty() && std::find(candidates.begin(), candidates.end(), w) == candidates.end() &&
          !std::isdigit(static_cast<unsigned char>(w[0])))
        names.push_back(w);
    }
  ASSERT_GT(names.size(), 1000u);
  const std::string input = std::string(DKV_BINARY_DIR) + "/suggest_cases.txt";
  {
    std::ofstream out(input);
    for (const std::string &n : names) {
      out << n;
      for (const std::string &c : vocabulary)
        if (c.find('-') == std::string::npos)
          out << " " << c;
      out << "\n";
    }
  }
  std::vector<std::string> pythonCandidates;
  for (const std::string &c : candidates)
    if (c.find('-') == std::string::npos)
      pythonCandidates.push_back(c);
  const std::string command =
      "python3 " + std::string(DKV_SOURCE_DIR) + "/tests/support/cpython_suggest.py < " + input;
  FILE *pipe = popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string output;
  char buffer[4096];
  for (size_t n; (n = fread(buffer, 1, sizeof buffer, pipe)) > 0;)
    output.append(buffer, n);
  ASSERT_EQ(pclose(pipe), 0) << output;
  std::istringstream lines(output);
  std::string expected;
  size_t suggested = 0;
  for (const std::string &n : names) {
    ASSERT_TRUE(std::getline(lines, expected)) << "python printed too few lines";
    std::optional<std::string> ours = closestName(n, pythonCandidates);
    EXPECT_EQ(ours.value_or("-"), expected) << "for '" << n << "'";
    suggested += expected != "-";
  }
  // Both kinds of answer occur.
  EXPECT_GT(suggested, names.size() / 4);
  EXPECT_LT(suggested, names.size());
}

} // namespace
} // namespace dkv::support
