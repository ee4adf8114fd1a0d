// Tests of the source manager, file ids in locations and rendering through the manager.
#include "support/Diagnostics.h"
#include "support/Invariant.h"
#include "support/Source.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

namespace dkv::support {
namespace {

TEST(SourceManager, IdsCountFromZeroInOrderOfAddition) {
  SourceManager sources;
  EXPECT_EQ(sources.size(), 0u);
  EXPECT_EQ(sources.find(0), nullptr);
  EXPECT_EQ(sources.name(0), "");
  FileId a = sources.add("a.dk", "mesh x = 2\n");
  FileId b = sources.add("b.py", "def k():\n  pass\n");
  EXPECT_EQ(a, 0u);
  EXPECT_EQ(b, 1u);
  EXPECT_EQ(sources.size(), 2u);
  EXPECT_EQ(sources.name(a), "a.dk");
  EXPECT_EQ(sources.name(b), "b.py");
  EXPECT_EQ(sources.text(b), "def k():\n  pass\n");
  EXPECT_EQ(sources.file(b).id(), b);
  EXPECT_EQ(sources.find(b), &sources.file(b));
  EXPECT_EQ(sources.find(2), nullptr);
  EXPECT_EQ(sources.text(2), "");
}

TEST(SourceManager, FilesKeepTheirAddressWhenMoreAreAdded) {
  SourceManager sources;
  const SourceFile *first = &sources.file(sources.add("a.dk", "x"));
  for (int i = 0; i < 100; ++i)
    sources.add("f" + std::to_string(i), "");
  EXPECT_EQ(&sources.file(0), first);
  SourceManager moved = std::move(sources);
  EXPECT_EQ(&moved.file(0), first);
}

TEST(SourceManager, LocationsOfAFileCarryItsId) {
  SourceManager sources;
  sources.add("a.dk", "one\n");
  const SourceFile &b = sources.file(sources.add("b.dk", "one\ntwo\n"));
  EXPECT_EQ(b.locForOffset(5), (SourceLoc{2, 2, 1}));
  EXPECT_EQ(b.loc(1, 3), (SourceLoc{1, 3, 1}));
  // A file outside a manager is file 0, like a location built without one.
  SourceFile alone("c.dk", "x\n");
  EXPECT_EQ(alone.locForOffset(0), (SourceLoc{1, 1}));
}

TEST(SourceLoc, OrdersByFileThenLineThenColumn) {
  EXPECT_LT((SourceLoc{9, 9, 0}), (SourceLoc{1, 1, 1}));
  EXPECT_LT((SourceLoc{1, 9, 1}), (SourceLoc{2, 1, 1}));
  EXPECT_LT((SourceLoc{2, 1, 1}), (SourceLoc{2, 2, 1}));
  EXPECT_NE((SourceLoc{2, 1, 0}), (SourceLoc{2, 1, 1}));
  EXPECT_EQ((SourceLoc{2, 1}), (SourceLoc{2, 1, 0}));
}

TEST(SourceManager, LoadReadsAFileAndRefusesDirectories) {
  std::string path = ::testing::TempDir() + "/dkv_source_manager_test.dk";
  std::ofstream(path) << "mesh x = 2\nkernel k() {\n}\n";
  SourceManager sources;
  sources.add("first.dk", "");
  std::string error;
  std::optional<FileId> id = sources.load(path, error);
  ASSERT_TRUE(id.has_value()) << error;
  EXPECT_EQ(*id, 1u);
  EXPECT_EQ(sources.name(*id), path);
  EXPECT_EQ(sources.file(*id).lineText(2), "kernel k() {");
  EXPECT_FALSE(sources.file(*id).truncated());

  EXPECT_FALSE(sources.load(::testing::TempDir(), error).has_value());
  EXPECT_NE(error.find("directory"), std::string::npos) << error;
  EXPECT_FALSE(sources.load("/nonexistent/dir/k.dk", error).has_value());
  EXPECT_EQ(sources.size(), 2u); // failed loads add nothing
}

TEST(SourceManager, LoadKeepsTheByteLimit) {
  SourceManager sources;
  std::string error;
  std::optional<FileId> id = sources.load("/dev/zero", error, 1000);
  ASSERT_TRUE(id.has_value()) << error;
  EXPECT_TRUE(sources.file(*id).truncated());
  EXPECT_EQ(sources.text(*id).size(), 1000u);
}

TEST(SourceManager, EachLocationRendersWithItsOwnFile) {
  SourceManager sources;
  FileId a = sources.add("kernel.dk", "mesh x = 2\nkernel k() {\n}\n");
  FileId b = sources.add("helpers.py", "def put(ref):\n  pltpu.async_copy(ref)\n");
  std::ostringstream out;
  renderHeading(out, &sources, SourceLoc{2, 3, b}, "note", "started here");
  out << "\n";
  renderSnippet(out, &sources, {SourceLoc{2, 3, b}, SourceLoc{2, 8, b}});
  renderHeading(out, &sources, SourceLoc{2, 1, a}, "error", "here");
  out << "\n";
  renderSnippet(out, &sources, {SourceLoc{2, 1, a}, SourceLoc{2, 7, a}});
  EXPECT_EQ(out.str(), "helpers.py:2:3: note: started here\n"
                       "    pltpu.async_copy(ref)\n"
                       "    ^~~~~\n"
                       "kernel.dk:2:1: error: here\n"
                       "  kernel k() {\n"
                       "  ^~~~~~\n");
}

TEST(SourceManager, NonAsciiLinesPrintTheirUtf8WithTheCaretPerCharacter) {
  SourceManager sources;
  // `x = "é→😀" + y`: é is 2 bytes, → 3, 😀 4; `+` is byte column 17, `y` 19.
  FileId f = sources.add("k.py", "x = \"\xc3\xa9\xe2\x86\x92\xf0\x9f\x98\x80\" + y\n"
                                 "s = '\xff\xc3' + z\n");
  std::ostringstream out;
  renderSnippet(out, &sources, {SourceLoc{1, 17, f}, SourceLoc{1, 20, f}});
  renderSnippet(out, &sources, {SourceLoc{1, 5, f}, SourceLoc{1, 16, f}});
  // Bytes that are no UTF-8 character still print as '?'.
  renderSnippet(out, &sources, {SourceLoc{2, 10, f}, SourceLoc{2, 11, f}});
  EXPECT_EQ(out.str(), "  x = \"\xc3\xa9\xe2\x86\x92\xf0\x9f\x98\x80\" + y\n"
                       "            ^~~\n"
                       "  x = \"\xc3\xa9\xe2\x86\x92\xf0\x9f\x98\x80\" + y\n"
                       "      ^~~~~\n"
                       "  s = '??' + z\n"
                       "           ^\n");
}

TEST(SourceManager, UnknownFileOrNoPositionRendersAsWithoutAManager) {
  SourceManager sources;
  sources.add("kernel.dk", "mesh x = 2\n");
  std::ostringstream out;
  renderHeading(out, &sources, SourceLoc{1, 1, 7}, "error", "unknown file");
  out << "\n";
  renderSnippet(out, &sources, {SourceLoc{1, 1, 7}, {}});
  renderHeading(out, &sources, SourceLoc{}, "error", "command line");
  out << "\n";
  renderHeading(out, nullptr, SourceLoc{1, 1}, "error", "no manager");
  out << "\n";
  EXPECT_EQ(out.str(), "1:1: error: unknown file\n"
                       "kernel.dk: error: command line\n"
                       "1:1: error: no manager\n");
}

TEST(DiagnosticEngine, SortsByFileAndRendersEachInItsFile) {
  SourceManager sources;
  FileId a = sources.add("a.dk", "alpha\nbeta\n");
  FileId b = sources.add("b.dk", "gamma\n");
  DiagnosticEngine diags(&sources);
  Diagnostic &d = diags.error({SourceLoc{1, 1, b}, SourceLoc{1, 6, b}}, "second", "in b");
  d.notes.push_back(Diagnostic{
      Severity::Note, {SourceLoc{2, 1, a}, SourceLoc{2, 5, a}}, "declared in a", "", {}});
  diags.error({SourceLoc{1, 1, a}, SourceLoc{1, 6, a}}, "first", "in a");
  std::ostringstream out;
  diags.render(out);
  EXPECT_EQ(out.str(), "a.dk:1:1: error: in a [first]\n"
                       "  alpha\n"
                       "  ^~~~~\n"
                       "b.dk:1:1: error: in b [second]\n"
                       "  gamma\n"
                       "  ^~~~~\n"
                       "a.dk:2:1: note: declared in a\n"
                       "  beta\n"
                       "  ^~~~\n");
}

// An `internal` error (an exception caught at a library's boundary) is a dkv bug: exit 6,
// never the input error's 2.
TEST(Diagnostics, InternalErrorsExitSix) {
  DiagnosticEngine diags(nullptr);
  EXPECT_EQ(diags.errorExitCode(), kExitInputError);
  diags.error({}, "syntax", "a bad token");
  EXPECT_EQ(diags.errorExitCode(), kExitInputError);
  diags.warning({}, "internal", "a warning is not an error");
  EXPECT_EQ(diags.errorExitCode(), kExitInputError);
  diags.error({}, "internal", "internal parser error: boom");
  EXPECT_EQ(diags.errorExitCode(), kExitInternal);
}

} // namespace
} // namespace dkv::support
