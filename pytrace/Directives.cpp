// `# dkv:` directives (docs/python.md "Directives"): a small hand-written reader of one
// line each; values are Python literals, types the kernel language's spellings.
#include "pytrace/Directives.h"
#include "pytrace/TpuChips.h"

#include "frontend/Sema.h"

#include <fmt/format.h>

#include <cctype>
#include <limits>
#include <set>

namespace dkv::pytrace {
namespace {

using support::SourceRange;

struct DirectiveError {
  uint32_t col; // 1-based byte column in the line
  std::string message;
};

/// A cursor over one directive line (its text from the first byte of the line, so
/// columns are the line's).
class Line {
public:
  Line(std::string_view text, size_t pos) : text_(text), pos_(pos) {}

  void blanks() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t'))
      ++pos_;
  }
  bool atEnd() {
    blanks();
    return pos_ >= text_.size();
  }
  /// The column of the next non-blank byte (blanks are skipped).
  uint32_t col() {
    blanks();
    return static_cast<uint32_t>(pos_ + 1);
  }
  char peek() {
    blanks();
    return pos_ < text_.size() ? text_[pos_] : '\0';
  }
  bool accept(char c) {
    if (peek() != c)
      return false;
    ++pos_;
    return true;
  }
  void expect(char c, std::string_view what) {
    if (!accept(c))
      fail(fmt::format("expected '{}' {}", c, what));
  }
  /// Fails at column `col` (of a token read before).
  [[noreturn]] void failAt(uint32_t col, std::string message) {
    pos_ = col - 1;
    fail(std::move(message));
  }
  [[noreturn]] void fail(std::string message) const {
    throw DirectiveError{static_cast<uint32_t>(std::min(pos_, text_.size()) + 1),
                         std::move(message)};
  }
  std::string word() {
    blanks();
    size_t start = pos_;
    while (pos_ < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_'))
      ++pos_;
    return std::string(text_.substr(start, pos_ - start));
  }
  std::string name(std::string_view what) {
    blanks();
    if (pos_ >= text_.size() ||
        !(std::isalpha(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_'))
      fail(fmt::format("expected {}", what));
    return word();
  }
  int64_t integer(std::string_view what) {
    blanks();
    bool neg = pos_ < text_.size() && text_[pos_] == '-';
    if (neg)
      ++pos_;
    size_t start = pos_;
    numCol_ = static_cast<uint32_t>(start + (neg ? 0 : 1));
    __int128 v = 0;
    while (pos_ < text_.size() &&
           (std::isdigit(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) {
      if (text_[pos_] != '_')
        v = v * 10 + (text_[pos_] - '0');
      if (v > std::numeric_limits<int64_t>::max())
        failAt(numCol_, fmt::format("{} does not fit in 64 bits", what));
      ++pos_;
    }
    if (pos_ == start)
      fail(fmt::format("expected {}", what));
    return neg ? -static_cast<int64_t>(v) : static_cast<int64_t>(v);
  }
  std::string rest() {
    blanks();
    std::string_view r = text_.substr(std::min(pos_, text_.size()));
    while (!r.empty() && (r.back() == ' ' || r.back() == '\t' || r.back() == '\r'))
      r.remove_suffix(1);
    return std::string(r);
  }
  std::string_view text_;
  size_t pos_;
  uint32_t numCol_ = 1; ///< the column of the last integer read (its sign)
};

Literal literal(Line &in, int depth) {
  if (depth > 50)
    in.fail("the value is nested too deeply (50 levels)");
  Literal v;
  char c = in.peek();
  if (c == '(' || c == '[') {
    char close = c == '(' ? ')' : ']';
    in.accept(c);
    v.k = c == '(' ? Literal::K::Tuple : Literal::K::List;
    bool comma = false;
    while (!in.accept(close)) {
      if (in.atEnd())
        in.fail(fmt::format("expected '{}'", close));
      v.items.push_back(literal(in, depth + 1));
      comma = in.accept(',');
      if (!comma && in.peek() != close)
        in.fail(fmt::format("expected ',' or '{}'", close));
    }
    if (v.k == Literal::K::Tuple && v.items.size() == 1 && !comma)
      return v.items[0]; // (x) is x
    return v;
  }
  if (c == '\'' || c == '"') {
    in.accept(c);
    v.k = Literal::K::Str;
    while (in.pos_ < in.text_.size() && in.text_[in.pos_] != c) {
      if (in.text_[in.pos_] == '\\')
        in.fail("escapes in strings of directives are not supported");
      v.s += in.text_[in.pos_++];
    }
    if (in.pos_ >= in.text_.size())
      in.fail("unterminated string");
    ++in.pos_;
    return v;
  }
  if (c == '-' || std::isdigit(static_cast<unsigned char>(c))) {
    v.k = Literal::K::Int;
    v.i = in.integer("an integer");
    return v;
  }
  uint32_t col = in.col();
  std::string w = in.word();
  if (w == "True" || w == "False") {
    v.k = Literal::K::Bool;
    v.b = w == "True";
    return v;
  }
  if (w == "None")
    return v;
  in.pos_ = col - 1;
  in.fail("expected a Python literal: an integer, True, False, None, a string, or a tuple or "
          "list of them");
}

std::optional<ast::DType> dtypeNamed(std::string_view w) {
  for (ast::DType d : {ast::DType::F32, ast::DType::BF16, ast::DType::F16, ast::DType::I32,
                       ast::DType::I16, ast::DType::I8, ast::DType::U8, ast::DType::U32})
    if (ast::toString(d) == w)
      return d;
  return std::nullopt;
}

std::vector<int64_t> dimList(Line &in, char open, char close, std::string_view what) {
  std::vector<int64_t> dims;
  in.expect(open, fmt::format("before {}", what));
  while (!in.accept(close)) {
    int64_t d = in.integer(fmt::format("a size in {}", what));
    if (d < 1 || d > (int64_t{1} << 30))
      in.failAt(in.numCol_, fmt::format("a size in {} must be 1..2^30, got {}", what, d));
    dims.push_back(d);
    if (!in.accept(',') && in.peek() != close)
      in.fail(fmt::format("expected ',' or '{}' in {}", close, what));
  }
  return dims;
}

EntryParam entryParam(Line &in, const support::SourceFile &file, uint32_t line) {
  EntryParam p;
  uint32_t begin = in.col();
  std::string first = in.name("a parameter ('in NAME: f32[8, 128] @any', 'out NAME: ...', "
                              "'NAME: dma_sem', ...)");
  bool role = false;
  if (first == "in" || first == "out" || first == "scratch") {
    role = true;
    p.role = first == "in"    ? EntryParam::Role::In
             : first == "out" ? EntryParam::Role::Out
                              : EntryParam::Role::Scratch;
    p.name = in.name(fmt::format("the parameter's name after '{}'", first));
  } else {
    p.name = first;
  }
  p.range = SourceRange{file.loc(line, begin), file.loc(line, in.col())};
  if (!in.accept(':'))
    return p; // untyped: an error when the kernel is traced (it names this directive)
  p.typed = true;
  uint32_t typeCol = in.col();
  std::string t = in.name("a type: a dtype with a shape (f32[8, 128]), dma_sem or sem");
  if (t == "dma_sem" || t == "sem") {
    p.isSem = true;
    p.semKind = t == "dma_sem" ? ast::SemKind::Dma : ast::SemKind::Regular;
    if (in.peek() == '[')
      p.dims = dimList(in, '[', ']', "a semaphore array's shape");
    if (role && p.role != EntryParam::Role::Scratch) {
      in.pos_ = typeCol - 1;
      in.fail(fmt::format("a semaphore parameter is scratch (pallas_call's scratch_shapes), not "
                          "'{}'",
                          first));
    }
    p.role = EntryParam::Role::Scratch;
  } else if (auto dt = dtypeNamed(t)) {
    p.dtype = *dt;
    p.dims = dimList(in, '[', ']', "the shape");
    if (p.dims.empty())
      in.fail("a buffer needs at least one dimension");
    if (in.accept('@')) {
      uint32_t spaceCol = in.col();
      std::string s = in.name("a memory space after '@': any, vmem or smem");
      if (s == "any")
        p.space = ast::MemSpace::Any;
      else if (s == "vmem")
        p.space = ast::MemSpace::Vmem;
      else if (s == "smem")
        p.space = ast::MemSpace::Smem;
      else {
        in.pos_ = spaceCol - 1;
        in.fail(fmt::format("unknown memory space '{}': any, vmem or smem", s));
      }
    }
    if (!role) {
      in.pos_ = begin - 1;
      in.fail(fmt::format("say whether buffer '{}' is an input, an output or scratch: 'in {}: "
                          "...', 'out {}: ...' or 'scratch {}: ...' (pallas_call's operands, "
                          "out_shape, scratch_shapes)",
                          p.name, p.name, p.name, p.name));
    }
    if (p.role == EntryParam::Role::Scratch && p.space == ast::MemSpace::Any) {
      in.pos_ = typeCol - 1;
      in.fail("a scratch buffer is in vmem or smem (pltpu.VMEM / pltpu.SMEM), not any");
    }
  } else {
    in.pos_ = typeCol - 1;
    in.fail(fmt::format("unknown type '{}': f32, bf16, f16, i32, i16, i8, u8, u32 with a shape "
                        "(f32[8, 128]), dma_sem or sem",
                        t));
  }
  p.range.end = file.loc(line, in.col());
  return p;
}

Entry entryDirective(Line &in, const support::SourceFile &file, uint32_t line) {
  Entry e;
  uint32_t begin = in.col();
  e.kernel = in.name("the kernel function's name after 'entry'");
  in.expect('(', "after the kernel's name");
  int order = 0;
  while (!in.accept(')')) {
    if (in.atEnd())
      in.fail("expected ')' closing the parameters");
    uint32_t pcol = in.col();
    EntryParam p = entryParam(in, file, line);
    for (const EntryParam &q : e.params)
      if (q.name == p.name) {
        in.pos_ = pcol - 1;
        in.fail(fmt::format("duplicate parameter '{}'", p.name));
      }
    int o = static_cast<int>(p.role);
    if (p.typed && o < order) {
      in.pos_ = pcol - 1;
      in.fail("the parameters are in pallas_call's order: inputs (in), then outputs (out), then "
              "scratch (scratch and semaphores)");
    }
    if (p.typed)
      order = o;
    e.params.push_back(std::move(p));
    if (!in.accept(',') && in.peek() != ')')
      in.fail("expected ',' or ')' after a parameter");
  }
  e.range = SourceRange{file.loc(line, begin), file.loc(line, in.col())};
  std::set<std::string> seen;
  while (!in.atEnd()) {
    uint32_t kcol = in.col();
    std::string k = in.name("collective_id=N, grid=(N, ...) or skip_device_barrier=True");
    if (seen.count(k)) {
      in.pos_ = kcol - 1;
      in.fail(fmt::format("duplicate '{}'", k));
    }
    seen.insert(k);
    in.expect('=', fmt::format("after '{}'", k));
    if (k == "collective_id") {
      e.collectiveId = in.integer("the collective id");
      if (*e.collectiveId < 0)
        in.failAt(in.numCol_, "collective_id must not be negative");
    } else if (k == "grid") {
      if (in.peek() == '(')
        e.grid = dimList(in, '(', ')', "the grid");
      else {
        int64_t g = in.integer("the grid (N or (N, ...))");
        if (g < 1 || g > (int64_t{1} << 30))
          in.failAt(in.numCol_, fmt::format("a grid size must be 1..2^30, got {}", g));
        e.grid = {g};
      }
    } else if (k == "skip_device_barrier") {
      std::string b = in.word();
      if (b != "True" && b != "False")
        in.fail("expected True or False");
      e.skipDeviceBarrier = b == "True";
    } else {
      in.pos_ = kcol - 1;
      in.fail(
          fmt::format("unknown entry option '{}': collective_id, grid or skip_device_barrier", k));
    }
  }
  return e;
}

void directive(Line &in, const support::SourceFile &file, uint32_t line, Directives &out,
               support::DiagnosticEngine &diags) {
  uint32_t begin = in.col();
  std::string kind = in.word();
  SourceRange whole{file.loc(line, begin), file.loc(line, static_cast<uint32_t>(in.text_.size()))};
  if (kind == "devices") {
    int64_t n = in.integer("the device count");
    if (n < 1 || n > 4096)
      in.failAt(in.numCol_, fmt::format("the device count must be 1..4096, got {}", n));
    if (!in.atEnd())
      in.fail("expected the end of the line after '# dkv: devices N'");
    out.devices = n;
    out.devicesRange = whole;
  } else if (kind == "mesh") {
    uint32_t col = in.col();
    std::string text = in.rest();
    frontend::MeshSizes mesh;
    std::string error;
    if (!frontend::parseMeshSizes(text, mesh, error)) {
      in.pos_ = col - 1;
      in.fail(fmt::format("malformed mesh: {}; expected '# dkv: mesh x=2,y=4'", error));
    }
    out.mesh = mesh;
    out.meshRange = whole;
  } else if (kind == "entry") {
    out.entry = entryDirective(in, file, line);
  } else if (kind == "set") {
    SetDirective s;
    uint32_t ncol = in.col();
    s.name = in.name("a name after 'set' ('# dkv: set NAME=VALUE' or 'set NAME()=VALUE')");
    // A dotted name sets an attribute of a module (`jax._src.test_util.is_device_tpu()`).
    while (in.accept('.'))
      s.name += "." + in.name("a name after '.'");
    s.range = SourceRange{file.loc(line, ncol), file.loc(line, in.col())};
    if (in.accept('(')) {
      in.expect(')', "after '(': a 'set NAME()=VALUE' function takes no arguments");
      s.call = true;
    }
    in.expect('=', "after the name");
    // A function's value may be any Python expression, evaluated in the module's globals
    // at each call (`set make_mesh()=jax.make_mesh((4,), ("x",))`); a global's is a
    // literal.
    const uint32_t vcol = in.col();
    bool isLiteral = true;
    try {
      s.value = literal(in, 0);
      if (!in.atEnd())
        in.fail("expected the end of the line after the value");
    } catch (DirectiveError &e) {
      if (!s.call) {
        e.message += " (a Python expression is taken by the function form, 'set NAME()=EXPR')";
        throw;
      }
      isLiteral = false;
    }
    if (!isLiteral) {
      in.pos_ = vcol - 1;
      s.expression = in.rest();
      s.exprLine = line;
      s.exprCol = vcol;
    }
    out.sets[s.name] = std::move(s);
  } else if (kind == "tpu") {
    // `tpu NAME`: the chip whose facts JAX's device queries answer (as --tpu).
    uint32_t col = in.col();
    std::string name = in.rest();
    if (!findTpuChip(name))
      in.failAt(col, fmt::format("unknown TPU '{}': expected one of {}", name, tpuChipNames()));
    out.tpu = findTpuChip(name)->name;
  } else if (kind == "call") {
    // `call f(...)`: a Python call, the entry of a library function (as --call).
    std::string text = in.rest();
    if (text.find_first_not_of(" \t") == std::string::npos)
      in.fail("expected a Python call after 'call' ('# dkv: call f(x, axis_name=\"x\")')");
    out.call = text;
    out.callRange = whole;
  } else if (kind == "table") {
    // `table NAME=[...]`: a rectangular nested list of ints, as -T NAME=JSON.
    std::string name = in.name("a table (kernel parameter) name");
    in.expect('=', "after the table name");
    Literal value = literal(in, 0);
    if (!in.atEnd())
      in.fail("expected the end of the line after the table's contents");
    frontend::TableValue table;
    table.origin = "'# dkv: table'";
    for (const Literal *l = &value; l->k == Literal::K::List || l->k == Literal::K::Tuple;
         l = l->items.empty() ? nullptr : &l->items[0]) {
      table.shape.push_back(static_cast<int64_t>(l->items.size()));
      if (l->items.empty())
        break;
    }
    bool ok = !table.shape.empty();
    auto flatten = [&](auto &self, const Literal &l, size_t depth) -> void {
      if (depth == table.shape.size()) {
        if (l.k != Literal::K::Int)
          ok = false;
        else
          table.values.push_back(l.i);
        return;
      }
      if ((l.k != Literal::K::List && l.k != Literal::K::Tuple) ||
          static_cast<int64_t>(l.items.size()) != table.shape[depth]) {
        ok = false;
        return;
      }
      for (const Literal &item : l.items)
        self(self, item, depth + 1);
    };
    if (ok)
      flatten(flatten, value, 0);
    if (!ok)
      diags.error(whole, "python-directive",
                  fmt::format("'# dkv: table {}=...' needs a rectangular nested list of "
                              "integers (as -T {}=JSON)",
                              name, name));
    else
      out.tables[name] = std::move(table);
  } else {
    in.pos_ = begin - 1;
    in.fail(
        kind.empty()
            ? std::string("expected a directive after '# dkv:': entry, call, devices, "
                          "mesh, set, table or tpu")
            : fmt::format("unknown directive '{}': entry, call, devices, mesh, set, table or tpu",
                          kind));
  }
}

} // namespace

bool readDirectives(const support::SourceFile &file, bool sidecar, Directives &out,
                    support::DiagnosticEngine &diags) {
  size_t errors = diags.errorCount();
  for (uint32_t line = 1; line <= file.lineCount(); ++line) {
    std::string_view text = file.lineText(line);
    size_t hash = text.find_first_not_of(" \t\f\r");
    if (hash == std::string_view::npos)
      continue;
    if (text[hash] != '#') {
      if (sidecar)
        diags.error(SourceRange{file.loc(line, static_cast<uint32_t>(hash + 1)),
                                file.loc(line, static_cast<uint32_t>(hash + 2))},
                    "python-directive",
                    "a directives file holds '# dkv: ...' lines, comments and blank lines only");
      if (sidecar)
        return false; // one error: the file may not be a directives file at all
      continue;
    }
    size_t pos = text.find_first_not_of(" \t", hash + 1);
    if (pos == std::string_view::npos || text.substr(pos, 4) != "dkv:") {
      continue;
    }
    Line in(text, pos + 4);
    try {
      directive(in, file, line, out, diags);
    } catch (const DirectiveError &e) {
      diags.error(SourceRange{file.loc(line, e.col), file.loc(line, e.col + 1)}, "python-directive",
                  e.message);
    }
  }
  return diags.errorCount() == errors;
}

std::string paramTypeText(const EntryParam &p) {
  std::string dims;
  for (size_t i = 0; i < p.dims.size(); ++i)
    dims += fmt::format("{}{}", i ? ", " : "", p.dims[i]);
  if (p.isSem)
    return fmt::format("{}{}", p.semKind == ast::SemKind::Dma ? "dma_sem" : "sem",
                       p.dims.empty() ? "" : "[" + dims + "]");
  return fmt::format("{} {}[{}]", ast::toString(p.space), ast::toString(p.dtype), dims);
}

} // namespace dkv::pytrace
