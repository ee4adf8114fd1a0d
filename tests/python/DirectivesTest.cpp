// pytrace's `# dkv:` directive reader (pytrace/Directives.h): the forms of every
// directive, a sidecar's facts replacing the file's, and errors at their columns.
#include "pytrace/Directives.h"

#include <gtest/gtest.h>

#include <sstream>

namespace dkv::pytrace {
namespace {

struct Read {
  support::SourceManager sources;
  support::DiagnosticEngine diags{&sources};
  Directives d;
  bool ok = false;

  std::string rendered() const {
    std::ostringstream s;
    diags.render(s);
    return s.str();
  }
};

void read(Read &r, const std::string &name, const std::string &text, bool sidecar = false) {
  const support::SourceFile &file = r.sources.file(r.sources.add(name, text));
  r.ok = readDirectives(file, sidecar, r.d, r.diags);
}

TEST(Directives, Entry) {
  Read r;
  read(r, "k.py",
       "import jax\n"
       "  #   dkv: entry k(in x: f32[8, 128] @any, out o: bf16[2,4], s: dma_sem, "
       "scratch t: sem[2, 3], scratch b: i32[16] @smem) collective_id=7 grid=(2, 3)\n"
       "# a comment\n");
  ASSERT_TRUE(r.ok) << r.rendered();
  ASSERT_TRUE(r.d.entry);
  const Entry &e = *r.d.entry;
  EXPECT_EQ(e.kernel, "k");
  EXPECT_EQ(e.collectiveId, 7);
  EXPECT_EQ(e.grid, (std::vector<int64_t>{2, 3}));
  EXPECT_FALSE(e.skipDeviceBarrier);
  ASSERT_EQ(e.params.size(), 5u);
  EXPECT_EQ(paramTypeText(e.params[0]), "any f32[8, 128]");
  EXPECT_EQ(e.params[0].role, EntryParam::Role::In);
  EXPECT_EQ(paramTypeText(e.params[1]), "vmem bf16[2, 4]"); // vmem without a space
  EXPECT_EQ(e.params[1].role, EntryParam::Role::Out);
  EXPECT_EQ(paramTypeText(e.params[2]), "dma_sem");
  EXPECT_EQ(e.params[2].role, EntryParam::Role::Scratch);
  EXPECT_EQ(paramTypeText(e.params[3]), "sem[2, 3]");
  EXPECT_EQ(paramTypeText(e.params[4]), "smem i32[16]");
  EXPECT_EQ(e.params[4].role, EntryParam::Role::Scratch);
  EXPECT_EQ(e.params[0].range.begin.line, 2u);
  EXPECT_EQ(e.params[0].range.begin.col, 20u); // at `in`
}

TEST(Directives, UntypedParameterIsKeptForTheTracer) {
  Read r;
  read(r, "k.py", "# dkv: entry k(x, o) grid=4 skip_device_barrier=True\n");
  ASSERT_TRUE(r.ok) << r.rendered();
  ASSERT_EQ(r.d.entry->params.size(), 2u);
  EXPECT_FALSE(r.d.entry->params[0].typed);
  EXPECT_EQ(r.d.entry->grid, (std::vector<int64_t>{4}));
  EXPECT_TRUE(r.d.entry->skipDeviceBarrier);
}

TEST(Directives, SetValues) {
  Read r;
  read(r, "k.py",
       "# dkv: set A=-3\n# dkv: set B=(1, [True, None], 'x')\n# dkv: set C=(5)\n"
       "# dkv: set chips()=4\n# dkv: set D=(7,)\n");
  ASSERT_TRUE(r.ok) << r.rendered();
  const auto &s = r.d.sets;
  EXPECT_EQ(s.at("A").value.k, Literal::K::Int);
  EXPECT_EQ(s.at("A").value.i, -3);
  const Literal &b = s.at("B").value;
  ASSERT_EQ(b.k, Literal::K::Tuple);
  ASSERT_EQ(b.items.size(), 3u);
  EXPECT_EQ(b.items[1].k, Literal::K::List);
  EXPECT_TRUE(b.items[1].items[0].b);
  EXPECT_EQ(b.items[1].items[1].k, Literal::K::None);
  EXPECT_EQ(b.items[2].s, "x");
  EXPECT_EQ(s.at("C").value.k, Literal::K::Int); // (5) is 5
  EXPECT_EQ(s.at("D").value.k, Literal::K::Tuple);
  EXPECT_TRUE(s.at("chips").call);
  EXPECT_FALSE(s.at("A").call);
}

TEST(Directives, SidecarReplacesTheFilesFacts) {
  Read r;
  read(r, "k.py", "# dkv: mesh x=2\n# dkv: set N=1\n# dkv: set M=1\n# dkv: devices 2\n");
  read(r, "k.py.dkv", "# directives\n\n# dkv: mesh y=4,z=2\n# dkv: set N=9\n", true);
  ASSERT_TRUE(r.ok) << r.rendered();
  EXPECT_EQ(r.d.mesh, (std::vector<std::pair<std::string, int64_t>>{{"y", 4}, {"z", 2}}));
  EXPECT_EQ(r.d.sets.at("N").value.i, 9);
  EXPECT_EQ(r.d.sets.at("M").value.i, 1);
  EXPECT_EQ(r.d.devices, 2);
}

TEST(Directives, ErrorsAtTheirColumns) {
  struct Case {
    std::string line;
    uint32_t col;
    std::string id;
  };
  for (const Case &c : std::vector<Case>{
           {"# dkv: entry k(in x: f32[8] @hbm)", 30, "python-directive"},
           {"# dkv: entry k(in x: f32[0])", 26, "python-directive"},
           {"# dkv: entry k(out o: f32[8], in x: f32[8])", 31, "python-directive"},
           {"# dkv: entry k(in s: dma_sem)", 22, "python-directive"},
           {"# dkv: entry k(x: f32[8])", 16, "python-directive"},
           {"# dkv: entry k(in x: f32[8], in x: f32[8])", 30, "python-directive"},
           {"# dkv: entry k() grid=(2,) grid=(3,)", 28, "python-directive"},
           {"# dkv: devices 0", 16, "python-directive"},
           {"# dkv: devices 99999999999999999999", 16, "python-directive"},
           {"# dkv: mesh x", 13, "python-directive"},
           {"# dkv: set X=1 2", 16, "python-directive"},
           {"# dkv: set X='a\\n'", 16, "python-directive"},
           {"# dkv:", 7, "python-directive"},
           {"# dkv: table t=[[1], [2, 3]]", 8, "python-directive"},
           {"# dkv: table t=[1, None]", 8, "python-directive"},
       }) {
    Read r;
    read(r, "k.py", c.line + "\n");
    EXPECT_FALSE(r.ok) << c.line;
    ASSERT_EQ(r.diags.diagnostics().size(), 1u) << c.line << "\n" << r.rendered();
    const support::Diagnostic &d = r.diags.diagnostics()[0];
    EXPECT_EQ(d.id, c.id) << c.line;
    EXPECT_EQ(d.range.begin.line, 1u) << c.line;
    EXPECT_EQ(d.range.begin.col, c.col) << c.line << "\n" << r.rendered();
  }
}

TEST(Directives, SidecarHoldsDirectivesOnly) {
  Read r;
  read(r, "k.py.dkv", "# ok\nx = 1\ny = 2\n", true);
  EXPECT_FALSE(r.ok);
  ASSERT_EQ(r.diags.diagnostics().size(), 1u); // one error, not one per line
  EXPECT_EQ(r.diags.diagnostics()[0].range.begin.line, 2u);
  // In a .py file, code lines are the file's own.
  Read p;
  read(p, "k.py", "x = 1\n# dkvx: not a directive\n# dkv is great\n");
  EXPECT_TRUE(p.ok) << p.rendered();
  EXPECT_FALSE(p.d.entry);
}

} // namespace
} // namespace dkv::pytrace
