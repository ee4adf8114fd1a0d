// f-strings (docs/python.md "Object model"): the fields of `f'...'` evaluated in the
// current frame and formatted with CPython's semantics for the values dkv knows:
// conversions `!s`, `!r`, `!a`, the `=` specifier, `format(v, '')` (str(v)), and format
// specs of ints, bools and strs (fill, align, sign, `#`, `0`, width, grouping, precision
// of a str, types d x X o b s), and a class's own `__format__`. Anything else (a float with
// a spec, `c` or `n`, a spec CPython rejects) makes the whole string opaque, as
// before: never a value CPython would not produce, never an error it would not raise.
#include "pyfront/Parser.h"
#include "pytrace/Interp.h"

#include <fmt/format.h>

namespace dkv::pytrace {

namespace {

/// One piece of an f-string: literal text (decoded) or a replacement field.
struct Field;
struct Piece {
  std::string literal;
  std::shared_ptr<Field> field;
};
struct Field {
  std::string expr;  ///< the expression's source text
  std::string debug; ///< `{x = }`: the text before the value ("x = ")
  char conv = 0;     ///< 's', 'r', 'a' or 0
  std::vector<Piece> spec;
  const py::Expr *parsed = nullptr; ///< set when the field's expression is parsed
};

bool isWordChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

/// Parses the pieces of one f-string part's body from `i` (as written, escapes not yet
/// decoded); `inSpec`: a format spec, which ends at its field's `}`. False: a construct
/// dkv does not read (the string stays opaque).
bool parsePieces(std::string_view s, bool raw, size_t &i, bool inSpec, std::vector<Piece> &out,
                 int depth = 0) {
  // CPython nests replacement fields in format specs two levels deep at most.
  if (depth > 2)
    return false;
  std::string lit;
  auto flush = [&] {
    if (!lit.empty())
      out.push_back({raw ? lit : pyfront::decodeEscapes(lit, false), nullptr});
    lit.clear();
  };
  while (i < s.size()) {
    char c = s[i];
    if (!raw && c == '\\' && i + 1 < s.size()) {
      if (s[i + 1] == 'N' && i + 2 < s.size() && s[i + 2] == '{') {
        size_t end = s.find('}', i);
        if (end == std::string_view::npos)
          return false;
        lit += s.substr(i, end + 1 - i);
        i = end + 1;
      } else {
        lit += s.substr(i, 2);
        i += 2;
      }
      continue;
    }
    if (c == '{') {
      if (!inSpec && i + 1 < s.size() && s[i + 1] == '{') {
        lit += '{';
        i += 2;
        continue;
      }
      flush();
      auto f = std::make_shared<Field>();
      size_t start = ++i;
      int brackets = 0;
      char quote = 0;
      bool debug = false;
      for (; i < s.size(); ++i) {
        char d = s[i];
        if (quote) {
          if (d == quote)
            quote = 0;
          continue;
        }
        if (d == '\'' || d == '"') {
          quote = d;
          continue;
        }
        if (d == '\\')
          return false; // a backslash in a field: not before Python 3.12
        if (d == '(' || d == '[' || d == '{') {
          ++brackets;
          continue;
        }
        if (d == ')' || d == ']' || d == '}') {
          if (brackets == 0)
            break;
          --brackets;
          continue;
        }
        if (brackets > 0)
          continue;
        char next = i + 1 < s.size() ? s[i + 1] : '\0';
        char prev = i > start ? s[i - 1] : '\0';
        if (d == '!' && next != '=')
          break;
        if (d == ':')
          break;
        if (d == '=' && next != '=' && prev != '=' && prev != '!' && prev != '<' && prev != '>') {
          debug = true;
          break;
        }
      }
      if (i >= s.size() || quote)
        return false;
      f->expr = std::string(s.substr(start, i - start));
      if (f->expr.find_first_not_of(" \t\r\n") == std::string::npos)
        return false;
      if (debug) {
        ++i;
        while (i < s.size() && (s[i] == ' ' || s[i] == '\t'))
          ++i;
        f->debug = std::string(s.substr(start, i - start));
      }
      if (i < s.size() && s[i] == '!') {
        if (i + 1 >= s.size() || std::string_view("sra").find(s[i + 1]) == std::string_view::npos)
          return false;
        f->conv = s[i + 1];
        i += 2;
      }
      if (i < s.size() && s[i] == ':') {
        ++i;
        if (!parsePieces(s, raw, i, true, f->spec, depth + 1))
          return false;
      } else if (debug && !f->conv) {
        f->conv = 'r'; // `{x=}` without a spec or conversion is repr's
      }
      if (i >= s.size() || s[i] != '}')
        return false;
      ++i;
      out.push_back({"", f});
      continue;
    }
    if (c == '}') {
      if (inSpec)
        break;
      if (i + 1 < s.size() && s[i + 1] == '}') {
        lit += '}';
        i += 2;
        continue;
      }
      return false;
    }
    lit += c;
    ++i;
  }
  flush();
  return true;
}

/// The number of code points of UTF-8 text.
size_t codePoints(std::string_view s) {
  size_t n = 0;
  for (char c : s)
    n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

/// `ascii(x)`: repr's text with non-ASCII code points escaped.
std::string asciiOf(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    auto b = static_cast<unsigned char>(s[i]);
    if (b < 0x80) {
      out += s[i++];
      continue;
    }
    int len = b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : 2;
    uint32_t cp = b & (len == 4 ? 0x07 : len == 3 ? 0x0F : 0x1F);
    for (int k = 1; k < len && i + k < s.size(); ++k)
      cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
    i += len;
    out += cp < 0x100     ? fmt::format("\\x{:02x}", cp)
           : cp < 0x10000 ? fmt::format("\\u{:04x}", cp)
                          : fmt::format("\\U{:08x}", cp);
  }
  return out;
}

struct Spec {
  std::string fill = " ";
  char align = 0, sign = 0, grouping = 0, type = 0;
  bool alt = false, fillGiven = false;
  int64_t width = -1, precision = -1;
};

/// The standard format spec mini-language, as CPython's parser reads it; nullopt for a
/// spec dkv does not format (`z`, a non-ASCII fill, widths beyond 10**6).
std::optional<Spec> parseSpec(std::string_view s) {
  Spec sp;
  size_t i = 0;
  auto isAlign = [](char c) { return c == '<' || c == '>' || c == '=' || c == '^'; };
  if (s.size() >= 2 && isAlign(s[1])) {
    if (static_cast<unsigned char>(s[0]) >= 0x80)
      return std::nullopt;
    sp.fill = std::string(1, s[0]);
    sp.fillGiven = true;
    sp.align = s[1];
    i = 2;
  } else if (!s.empty() && isAlign(s[0])) {
    sp.align = s[0];
    i = 1;
  }
  if (i < s.size() && (s[i] == '+' || s[i] == '-' || s[i] == ' '))
    sp.sign = s[i++];
  if (i < s.size() && s[i] == 'z')
    return std::nullopt;
  if (i < s.size() && s[i] == '#') {
    sp.alt = true;
    ++i;
  }
  if (i < s.size() && s[i] == '0') {
    if (!sp.fillGiven) {
      sp.fill = "0";
      sp.fillGiven = true;
      sp.align = sp.align ? sp.align : 'Z'; // '=' for numbers, the default for strs
    }
    ++i;
  }
  auto digits = [&](int64_t &v) {
    size_t start = i;
    v = 0;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
      v = v * 10 + (s[i++] - '0');
      if (v > 1000000)
        return false;
    }
    if (i == start)
      v = -1;
    return true;
  };
  if (!digits(sp.width))
    return std::nullopt;
  if (i < s.size() && (s[i] == ',' || s[i] == '_'))
    sp.grouping = s[i++];
  if (i < s.size() && s[i] == '.') {
    ++i;
    if (!digits(sp.precision) || sp.precision < 0)
      return std::nullopt;
  }
  if (i < s.size())
    sp.type = s[i++];
  if (i != s.size())
    return std::nullopt;
  return sp;
}

std::string pad(const std::string &body, const std::string &lead, const Spec &sp, char align) {
  size_t len = codePoints(lead) + codePoints(body);
  if (sp.width < 0 || static_cast<size_t>(sp.width) <= len)
    return lead + body;
  size_t n = static_cast<size_t>(sp.width) - len;
  auto fill = [&](size_t k) {
    std::string out;
    for (size_t j = 0; j < k; ++j)
      out += sp.fill;
    return out;
  };
  switch (align) {
  case '<':
    return lead + body + fill(n);
  case '^':
    return fill(n / 2) + lead + body + fill(n - n / 2);
  case '=':
    return lead + fill(n) + body;
  default:
    return fill(n) + lead + body;
  }
}

std::optional<std::string> formatInt(int64_t v, const Spec &sp) {
  char type = sp.type ? sp.type : 'd';
  int base = type == 'd' ? 10 : type == 'x' || type == 'X' ? 16 : type == 'o' ? 8 : 2;
  if (std::string_view("dxXob").find(type) == std::string_view::npos || sp.precision >= 0)
    return std::nullopt;
  if (sp.grouping == ',' && type != 'd')
    return std::nullopt;
  uint64_t mag = v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  std::string digits;
  const char *set = type == 'X' ? "0123456789ABCDEF" : "0123456789abcdef";
  do {
    digits.insert(digits.begin(), set[mag % static_cast<uint64_t>(base)]);
    mag /= static_cast<uint64_t>(base);
  } while (mag);
  char align = sp.align == 'Z' ? '=' : sp.align ? sp.align : '>';
  std::string lead = v < 0 ? "-" : sp.sign == '+' ? "+" : sp.sign == ' ' ? " " : "";
  if (sp.alt && base != 10)
    lead += type == 'x' ? "0x" : type == 'X' ? "0X" : type == 'o' ? "0o" : "0b";
  if (sp.grouping) {
    size_t every = base == 10 ? 3 : 4;
    // Zero padding with separators (CPython's rule for a '0' fill aligned with '='): the
    // fewest digits whose grouped text fills the width after the sign and prefix.
    if (sp.fill == "0" && align == '=' && sp.width > static_cast<int64_t>(lead.size())) {
      size_t minWidth = static_cast<size_t>(sp.width) - lead.size();
      size_t d = digits.size();
      while (d + (d - 1) / every < minWidth)
        ++d;
      digits.insert(0, d - digits.size(), '0');
    }
    std::string grouped;
    for (size_t k = 0; k < digits.size(); ++k) {
      if (k && (digits.size() - k) % every == 0)
        grouped += sp.grouping;
      grouped += digits[k];
    }
    digits = grouped;
  }
  return pad(digits, lead, sp, align);
}

std::optional<std::string> formatStr(const std::string &s, const Spec &sp) {
  if ((sp.type && sp.type != 's') || sp.sign || sp.alt || sp.grouping || sp.align == '=')
    return std::nullopt;
  std::string body = s;
  if (sp.precision >= 0 && codePoints(s) > static_cast<size_t>(sp.precision)) {
    size_t n = 0, k = 0;
    for (; k < s.size(); ++k)
      if ((static_cast<unsigned char>(s[k]) & 0xC0) != 0x80 &&
          n++ == static_cast<size_t>(sp.precision))
        break;
    body = s.substr(0, k);
  }
  return pad(body, "", sp, sp.align == 'Z' || !sp.align ? '<' : sp.align);
}

} // namespace

/// `format(v, spec)` for the values and specs dkv formats; nullopt otherwise.
std::optional<std::string> Interp::formatValue(const V &v, const std::string &spec, SourceRange r) {
  if (auto *inst = dynCast<InstanceV>(v)) {
    // A class's own __format__ is called with the spec, as format() calls it.
    V own = lookupClassAttr(inst->cls, "__format__");
    if (own && own->kind == Kind::Function) {
      V res = call(getAttr(v, "__format__", r), Args{{string(spec)}, {}}, r);
      if (auto *s = dynCast<StrV>(res))
        return s->s;
      if (res->kind == Kind::Opaque)
        return std::nullopt;
      raise("TypeError", fmt::format("__format__ must return a str, not {}", typeName(*res)), r);
    }
  }
  if (spec.empty()) {
    if (v->kind == Kind::Opaque || v->kind == Kind::Traced)
      return std::nullopt;
    return str(v, r);
  }
  std::optional<Spec> sp = parseSpec(spec);
  if (!sp)
    return std::nullopt;
  if (auto *i = dynCast<IntV>(v))
    return formatInt(i->i, *sp);
  if (auto *b = dynCast<BoolV>(v))
    return formatInt(b->b, *sp);
  if (auto *s = dynCast<StrV>(v))
    return formatStr(s->s, *sp);
  return std::nullopt;
}

V Interp::evalFString(const py::Constant &c, Frame &f, SourceRange r) {
  auto give_up = [&](const char *why = "dkv formats ints, bools and strs with a format spec, "
                                       "other values without one") {
    size_t cut = 57; // on a UTF-8 character boundary
    while (cut > 0 && c.text.size() > 60 &&
           (static_cast<unsigned char>(c.text[cut]) & 0xC0) == 0x80)
      --cut;
    std::string text = c.text.size() > 60 ? c.text.substr(0, cut) + "..." : c.text;
    return opaque(fmt::format("the f-string `{}` ({})", text, why), r);
  };
  auto &cache = fstrings_[&c];
  if (!cache) {
    cache = std::make_shared<FStringCache>();
    auto pieces = std::make_shared<std::vector<Piece>>();
    bool ok = true;
    for (const py::Constant::Part &p : c.parts) {
      if (!p.f) {
        pieces->push_back({p.raw ? p.body : pyfront::decodeEscapes(p.body, false), nullptr});
        continue;
      }
      size_t i = 0;
      ok = ok && parsePieces(p.body, p.raw, i, false, *pieces) && i == p.body.size();
    }
    // Each field's expression, parsed as `lambda: (EXPR)`, whose free names are the
    // names it reads (a field with its own scope, a walrus or a yield is not read).
    std::function<bool(std::vector<Piece> &)> parse = [&](std::vector<Piece> &ps) {
      for (Piece &p : ps) {
        if (!p.field)
          continue;
        Field &fd = *p.field;
        for (const char *kw : {"lambda", "for", "yield", "await"}) {
          size_t at = fd.expr.find(kw);
          size_t n = std::string_view(kw).size();
          if (at != std::string::npos && (at == 0 || !isWordChar(fd.expr[at - 1])) &&
              (at + n == fd.expr.size() || !isWordChar(fd.expr[at + n])))
            return false;
        }
        if (fd.expr.find(":=") != std::string::npos || !sources_)
          return false;
        const support::SourceFile *file = sources_->find(r.begin.file);
        support::FileId id =
            sources_->add(fmt::format("{} (f-string field at line {})",
                                      file ? file->name() : "<f-string>", r.begin.line),
                          "lambda: (" + fd.expr + "\n)\n");
        support::DiagnosticEngine quiet(sources_);
        auto module = pyfront::parseModule(sources_->file(id), quiet);
        if (!module || module->body.size() != 1 || module->body[0]->kind != py::StmtKind::ExprStmt)
          return false;
        const auto &lam = py::cast<py::Lambda>(*py::cast<py::ExprStmt>(*module->body[0]).value);
        auto table = std::make_shared<Symtable>(*module);
        const ScopeInfo &scope = table->of(&lam);
        if (!scope.locals.empty() || scope.generator)
          return false;
        fd.parsed = lam.body.get();
        cache->names.push_back(scope.frees);
        cache->keep.push_back(std::shared_ptr<void>(std::move(module)));
        cache->keep.push_back(table);
        if (!parse(fd.spec))
          return false;
      }
      return true;
    };
    ok = ok && parse(*pieces);
    cache->ok = ok;
    cache->pieces = pieces;
  }
  if (!cache->ok)
    return give_up();
  // A name CPython would find in an enclosing function (a free variable of this
  // function only through the f-string) is not looked up as a global: not formatted.
  bool nested = f.scope && f.scope->type != ScopeInfo::Type::Module &&
                (!f.function || f.function->qualname.find("<locals>") != std::string::npos);
  if (nested)
    for (const auto &names : cache->names)
      for (const std::string &n : names)
        if (!f.scope->locals.count(n) && !f.scope->frees.count(n) && !f.scope->globals.count(n))
          return give_up("a field reads a name that may be an enclosing function's variable, "
                         "which dkv does not look up from inside an f-string");
  const auto &pieces = *std::static_pointer_cast<std::vector<Piece>>(cache->pieces);
  // Every field is evaluated, in order, as CPython does, even after one that dkv cannot
  // format (the string is then opaque).
  bool failed = false;
  std::function<std::string(const std::vector<Piece> &)> render =
      [&](const std::vector<Piece> &ps) -> std::string {
    std::string out;
    for (const Piece &p : ps) {
      if (!p.field) {
        out += p.literal;
        continue;
      }
      const Field &fd = *p.field;
      V v = eval(*fd.parsed, f);
      std::string spec = render(fd.spec);
      if (failed)
        continue;
      std::optional<std::string> t;
      if (fd.conv && v->kind != Kind::Opaque && v->kind != Kind::Traced)
        if (std::optional<std::string> c = fd.conv == 's' ? str(v, r) : repr(v, r))
          t = formatValue(string(fd.conv == 'a' ? asciiOf(*c) : *c), spec, r);
      if (!fd.conv)
        t = formatValue(v, spec, r);
      if (!t) {
        failed = true;
        continue;
      }
      out += fd.debug + *t;
      alloc(out.size(), r);
    }
    return out;
  };
  std::string s = render(pieces);
  if (failed)
    return give_up();
  return string(std::move(s));
}

} // namespace dkv::pytrace
