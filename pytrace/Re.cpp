// Python's `re` (docs/python.md "Regular expressions"): a backtracking matcher with the
// semantics of CPython's sre for a subset of the syntax: literals and escapes, `.`, the
// classes `\d \w \s` (and their negations) and `[...]`, the anchors `^ $ \A \Z \b \B`,
// groups (capturing, `(?:...)`, `(?P<name>...)`), `|`, and the quantifiers `* + ? {m}
// {m,} {,n} {m,n}`, greedy or lazy. A pattern outside it, flags, non-ASCII text and a
// repeated part that can match the empty string are refused (python-unsupported), never
// matched differently from CPython. tests/python/re_diff.py compares with python3.
#include "pytrace/Re.h"

#include "pytrace/Interp.h"

#include <fmt/format.h>

#include <functional>

namespace dkv::pytrace {

namespace {

enum class N : uint8_t {
  Char,  ///< one character
  Any,   ///< `.`: anything but '\n'
  Class, ///< `[...]`, `\d`, ...
  Seq,
  Alt,
  Repeat,
  Group, ///< capturing (index > 0) or not (index 0)
  Bol,   ///< `^` and `\A`: the start of the string
  Eol,   ///< `$`: the end, or before a final '\n'
  End,   ///< `\Z`
  WordB,
  NotWordB,
};

struct Node {
  explicit Node(N kind) : kind(kind) {}
  N kind;
  char c = 0;
  // Class: ranges of characters, and whether it is negated.
  std::vector<std::pair<unsigned char, unsigned char>> ranges;
  bool negate = false;
  std::vector<std::unique_ptr<Node>> kids; ///< Seq items, Alt branches, the Repeat/Group body
  int64_t min = 0, max = -1;               ///< Repeat: max -1 is unbounded
  bool greedy = true;
  int index = 0; ///< Group
};
using NodeP = std::unique_ptr<Node>;

bool isWord(unsigned char c) { return std::isalnum(c) || c == '_'; }

} // namespace

struct ReProgram {
  std::string pattern;
  NodeP root;
  int groups = 0;
  std::vector<std::pair<std::string, int>> names; ///< in definition order
};

namespace {

// The ASCII sets of CPython's str patterns on ASCII text: \d is [0-9], \w is
// [a-zA-Z0-9_], \s is what str.isspace() accepts (with \x1c-\x1f).
void addClass(Node &n, char which) {
  switch (which) {
  case 'd':
    n.ranges.push_back({'0', '9'});
    break;
  case 'w':
    n.ranges.insert(n.ranges.end(), {{'a', 'z'}, {'A', 'Z'}, {'0', '9'}, {'_', '_'}});
    break;
  case 's':
    n.ranges.insert(n.ranges.end(), {{'\t', '\r'}, {0x1c, 0x1f}, {' ', ' '}});
    break;
  }
}
bool inClass(const Node &n, unsigned char c) {
  bool in = false;
  for (const auto &[lo, hi] : n.ranges)
    if (c >= lo && c <= hi)
      in = true;
  return in != n.negate;
}
// A negated class escape inside `[...]` (`[\D]`): the complement of its ranges.
void addComplement(Node &n, char which) {
  Node tmp(N::Class);
  addClass(tmp, which);
  for (int c = 0; c < 128; ++c) {
    bool in = false;
    for (const auto &[lo, hi] : tmp.ranges)
      if (c >= lo && c <= hi)
        in = true;
    if (!in)
      n.ranges.push_back({static_cast<unsigned char>(c), static_cast<unsigned char>(c)});
  }
}

/// The escapes of one character that mean that character (`\n`, `\.`, ...), or -1.
int simpleEscape(char e) {
  switch (e) {
  case 'n':
    return '\n';
  case 't':
    return '\t';
  case 'r':
    return '\r';
  case 'f':
    return '\f';
  case 'v':
    return '\v';
  case 'a':
    return '\a';
  default:
    // Any ASCII punctuation or space escapes itself; letters and digits are not simple.
    if (!std::isalnum(static_cast<unsigned char>(e)) && static_cast<unsigned char>(e) < 128)
      return e;
    return -1;
  }
}

class Parser {
public:
  Parser(Interp &in, const std::string &p, SourceRange r) : in_(in), p_(p), r_(r) {}

  std::shared_ptr<ReProgram> parse() {
    auto prog = std::make_shared<ReProgram>();
    prog_ = prog.get();
    prog->pattern = p_;
    prog->root = alt();
    if (i_ < p_.size())
      refuse(p_[i_] == ')' ? "an unbalanced ')' (re.error)" : "this syntax");
    prog->groups = groups_;
    return prog;
  }

private:
  [[noreturn]] void refuse(const std::string &what) {
    unsupported(r_, fmt::format("the regular expression {} at position {}: {} (docs/python.md "
                                "\"Regular expressions\" lists the syntax dkv models)",
                                quote(), i_, what));
  }
  std::string quote() const {
    return p_.size() <= 60 ? "'" + p_ + "'" : "'" + p_.substr(0, 57) + "...'";
  }
  bool at(char c) const { return i_ < p_.size() && p_[i_] == c; }

  NodeP alt() {
    auto first = seq();
    if (!at('|'))
      return first;
    auto n = std::make_unique<Node>(N::Alt);
    n->kids.push_back(std::move(first));
    while (at('|')) {
      ++i_;
      n->kids.push_back(seq());
    }
    return n;
  }

  NodeP seq() {
    auto n = std::make_unique<Node>(N::Seq);
    while (i_ < p_.size() && !at('|') && !at(')')) {
      NodeP a = atom();
      a = quantified(std::move(a));
      n->kids.push_back(std::move(a));
    }
    return n;
  }

  // `{m}`, `{m,}`, `{,n}`, `{m,n}` at i_ (at '{'), or false (then '{' is a literal).
  bool braces(int64_t &lo, int64_t &hi) {
    size_t j = i_ + 1;
    auto num = [&](int64_t &out) {
      size_t s = j;
      out = 0;
      while (j < p_.size() && std::isdigit(static_cast<unsigned char>(p_[j]))) {
        out = out * 10 + (p_[j] - '0');
        if (out > 1000000)
          refuse("a repeat count this large");
        ++j;
      }
      return j > s;
    };
    bool hasLo = num(lo);
    if (!hasLo)
      lo = 0;
    if (j < p_.size() && p_[j] == '}') {
      if (!hasLo)
        return false;
      hi = lo;
    } else if (j < p_.size() && p_[j] == ',') {
      ++j;
      if (!num(hi))
        hi = -1;
      if (j >= p_.size() || p_[j] != '}')
        return false;
    } else {
      return false;
    }
    i_ = j + 1;
    return true;
  }

  NodeP quantified(NodeP a) {
    while (i_ < p_.size()) {
      int64_t lo = 0, hi = -1;
      size_t start = i_;
      char c = p_[i_];
      if (c == '*') {
        ++i_;
      } else if (c == '+') {
        lo = 1, ++i_;
      } else if (c == '?') {
        hi = 1, ++i_;
      } else if (c == '{') {
        if (!braces(lo, hi))
          return a;
        if (hi >= 0 && hi < lo)
          refuse("a repeat with min > max (re.error)");
      } else {
        return a;
      }
      if (a->kind == N::Repeat)
        refuse("a repeat of a repeat (re.error: multiple repeat)");
      if (a->kind == N::Bol || a->kind == N::Eol || a->kind == N::End || a->kind == N::WordB ||
          a->kind == N::NotWordB) {
        i_ = start;
        refuse("a repeated anchor");
      }
      bool greedy = true;
      if (at('?'))
        greedy = false, ++i_;
      else if (at('+'))
        refuse("a possessive repeat");
      if (nullable(*a))
        refuse("a repeated part that can match the empty string");
      auto n = std::make_unique<Node>(N::Repeat);
      n->min = lo;
      n->max = hi;
      n->greedy = greedy;
      n->kids.push_back(std::move(a));
      a = std::move(n);
    }
    return a;
  }

  static bool nullable(const Node &n) {
    switch (n.kind) {
    case N::Char:
    case N::Any:
    case N::Class:
      return false;
    case N::Seq:
      for (const auto &k : n.kids)
        if (!nullable(*k))
          return false;
      return true;
    case N::Alt:
      for (const auto &k : n.kids)
        if (nullable(*k))
          return true;
      return false;
    case N::Repeat:
      return n.min == 0 || nullable(*n.kids[0]);
    case N::Group:
      return nullable(*n.kids[0]);
    default:
      return true; // anchors
    }
  }

  NodeP atom() {
    char c = p_[i_];
    switch (c) {
    case '(':
      return group();
    case '[':
      return charClass();
    case '.':
      ++i_;
      return std::make_unique<Node>(N::Any);
    case '^':
      ++i_;
      return std::make_unique<Node>(N::Bol);
    case '$':
      ++i_;
      return std::make_unique<Node>(N::Eol);
    case '*':
    case '+':
    case '?':
      refuse("nothing to repeat (re.error)");
    case '{': {
      int64_t lo, hi;
      if (braces(lo, hi)) {
        refuse("nothing to repeat (re.error)");
      }
      break;
    }
    case '\\':
      return escape();
    default:
      break;
    }
    if (static_cast<unsigned char>(c) >= 128)
      refuse("a non-ASCII character");
    ++i_;
    auto n = std::make_unique<Node>(N::Char);
    n->c = c;
    return n;
  }

  NodeP escape() {
    ++i_;
    if (i_ >= p_.size())
      refuse("a bad escape at the end of the pattern (re.error)");
    char e = p_[i_++];
    auto n = std::make_unique<Node>(N::Class);
    switch (e) {
    case 'd':
    case 'w':
    case 's':
      addClass(*n, e);
      return n;
    case 'D':
    case 'W':
    case 'S':
      addClass(*n, static_cast<char>(std::tolower(e)));
      n->negate = true;
      return n;
    case 'A':
      return std::make_unique<Node>(N::Bol);
    case 'Z':
      return std::make_unique<Node>(N::End);
    case 'b':
      return std::make_unique<Node>(N::WordB);
    case 'B':
      return std::make_unique<Node>(N::NotWordB);
    default:
      break;
    }
    int ch = simpleEscape(e);
    if (ch < 0) {
      i_ -= 2;
      refuse(std::isdigit(static_cast<unsigned char>(e)) ? "a back reference or octal escape"
                                                         : fmt::format("the escape '\\{}'", e));
    }
    auto lit = std::make_unique<Node>(N::Char);
    lit->c = static_cast<char>(ch);
    return lit;
  }

  NodeP group() {
    size_t open = i_++;
    if (++nesting_ > kMaxNesting)
      refuse(fmt::format("groups nested more than {} deep", kMaxNesting));
    int index = 0;
    if (at('?')) {
      ++i_;
      if (at(':')) {
        ++i_;
      } else if (at('P') && i_ + 1 < p_.size() && p_[i_ + 1] == '<') {
        i_ += 2;
        size_t s = i_;
        while (i_ < p_.size() && (isWord(static_cast<unsigned char>(p_[i_]))))
          ++i_;
        std::string name = p_.substr(s, i_ - s);
        if (!at('>') || name.empty() || std::isdigit(static_cast<unsigned char>(name[0])))
          refuse("a bad group name (re.error)");
        ++i_;
        for (const auto &[n, g] : prog_->names)
          if (n == name)
            refuse("a group name defined twice (re.error)");
        index = ++groups_;
        prog_->names.emplace_back(name, index);
      } else {
        i_ = open;
        refuse("this group extension (lookarounds, flags, named references, conditionals)");
      }
    } else {
      index = ++groups_;
    }
    auto n = std::make_unique<Node>(N::Group);
    n->index = index;
    n->kids.push_back(alt());
    if (!at(')')) {
      i_ = open;
      refuse("a missing ')' (re.error)");
    }
    ++i_;
    --nesting_;
    return n;
  }

  // One item of `[...]`: a character (set `ch`) or a class escape (added to n).
  bool classItem(Node &n, int &ch) {
    char c = p_[i_];
    if (static_cast<unsigned char>(c) >= 128)
      refuse("a non-ASCII character");
    if (c != '\\') {
      ++i_;
      ch = static_cast<unsigned char>(c);
      return true;
    }
    if (i_ + 1 >= p_.size())
      refuse("a bad escape at the end of the pattern (re.error)");
    char e = p_[i_ + 1];
    i_ += 2;
    if (e == 'd' || e == 'w' || e == 's') {
      addClass(n, e);
      return false;
    }
    if (e == 'D' || e == 'W' || e == 'S') {
      addComplement(n, static_cast<char>(std::tolower(e)));
      return false;
    }
    if (e == 'b') {
      ch = '\b';
      return true;
    }
    int s = simpleEscape(e);
    if (s < 0) {
      i_ -= 2;
      refuse(fmt::format("the escape '\\{}' in a set", e));
    }
    ch = s;
    return true;
  }

  NodeP charClass() {
    size_t open = i_++;
    auto n = std::make_unique<Node>(N::Class);
    if (at('^'))
      n->negate = true, ++i_;
    bool first = true;
    while (true) {
      if (i_ >= p_.size()) {
        i_ = open;
        refuse("an unterminated set (re.error)");
      }
      if (at(']') && !first)
        break;
      if (at('[') || (i_ + 1 < p_.size() && p_.compare(i_, 2, "--") == 0) ||
          (i_ + 1 < p_.size() && (p_.compare(i_, 2, "&&") == 0 || p_.compare(i_, 2, "~~") == 0 ||
                                  p_.compare(i_, 2, "||") == 0)))
        refuse("a set that CPython warns may change meaning (FutureWarning)");
      first = false;
      int lo = 0;
      if (!classItem(*n, lo)) {
        if (at('-') && i_ + 1 < p_.size() && p_[i_ + 1] != ']')
          refuse("a range from a class escape (re.error: bad character range)");
        continue;
      }
      if (at('-') && i_ + 1 < p_.size() && p_[i_ + 1] != ']') {
        ++i_;
        int hi = 0;
        if (!classItem(*n, hi))
          refuse("a range with a class escape (re.error)");
        if (hi < lo)
          refuse("a bad character range (re.error)");
        n->ranges.push_back({static_cast<unsigned char>(lo), static_cast<unsigned char>(hi)});
      } else {
        n->ranges.push_back({static_cast<unsigned char>(lo), static_cast<unsigned char>(lo)});
      }
    }
    ++i_;
    return n;
  }

  Interp &in_;
  const std::string &p_;
  SourceRange r_;
  size_t i_ = 0;
  int groups_ = 0;
  int nesting_ = 0;
  static constexpr int kMaxNesting = 200;
  ReProgram *prog_ = nullptr;
};

/// One match attempt (sre's SRE(match) from one start position).
class Matcher {
public:
  Matcher(const ReProgram &prog, const std::string &s, SourceRange r)
      : prog_(prog), s_(s), r_(r), spans_(2 * (prog.groups + 1), -1) {}

  using K = std::function<bool(size_t)>;

  /// A match starting at `start`: sre's top-level success tests (`fullmatch` needs the
  /// end of the string; after an empty match, findall/sub need progress).
  bool at(size_t start, bool all, bool mustAdvance) {
    std::fill(spans_.begin(), spans_.end(), -1);
    return m(*prog_.root, start, [&](size_t end) {
      if (all && end != s_.size())
        return false;
      if (mustAdvance && end == start)
        return false;
      spans_[0] = static_cast<int64_t>(start);
      spans_[1] = static_cast<int64_t>(end);
      return true;
    });
  }
  const std::vector<int64_t> &spans() const { return spans_; }

private:
  void tick() {
    if (++steps_ > kMaxSteps)
      unsupported(r_, fmt::format("a regular expression that needs more than {} steps on this "
                                  "string (catastrophic backtracking)",
                                  kMaxSteps));
  }

  bool m(const Node &n, size_t i, const K &k) {
    tick();
    struct Depth {
      int &d;
      Depth(int &d, SourceRange r) : d(d) {
        if (++d > kMaxDepth)
          unsupported(r, "a regular expression that nests its backtracking more than 2000 deep "
                         "(a long repeat)");
      }
      ~Depth() { --d; }
    } depth(depth_, r_);
    switch (n.kind) {
    case N::Char:
      return i < s_.size() && s_[i] == n.c && k(i + 1);
    case N::Any:
      return i < s_.size() && s_[i] != '\n' && k(i + 1);
    case N::Class:
      return i < s_.size() && inClass(n, static_cast<unsigned char>(s_[i])) && k(i + 1);
    case N::Bol:
      return i == 0 && k(i);
    case N::Eol:
      return (i == s_.size() || (i + 1 == s_.size() && s_[i] == '\n')) && k(i);
    case N::End:
      return i == s_.size() && k(i);
    case N::WordB:
    case N::NotWordB: {
      bool before = i > 0 && isWord(static_cast<unsigned char>(s_[i - 1]));
      bool after = i < s_.size() && isWord(static_cast<unsigned char>(s_[i]));
      return ((before != after) == (n.kind == N::WordB)) && k(i);
    }
    case N::Seq:
      return seq(n, 0, i, k);
    case N::Alt:
      for (const auto &b : n.kids)
        if (m(*b, i, k))
          return true;
      return false;
    case N::Group: {
      if (n.index == 0)
        return m(*n.kids[0], i, k);
      size_t g = 2 * static_cast<size_t>(n.index);
      return m(*n.kids[0], i, [&, g, i](size_t j) {
        int64_t os = spans_[g], oe = spans_[g + 1];
        spans_[g] = static_cast<int64_t>(i);
        spans_[g + 1] = static_cast<int64_t>(j);
        if (k(j))
          return true;
        spans_[g] = os;
        spans_[g + 1] = oe;
        return false;
      });
    }
    case N::Repeat:
      return rep(n, 0, i, k);
    }
    return false;
  }

  bool seq(const Node &n, size_t idx, size_t i, const K &k) {
    if (idx == n.kids.size())
      return k(i);
    return m(*n.kids[idx], i, [&, idx](size_t j) { return seq(n, idx + 1, j, k); });
  }

  // The body never matches empty (the parser refuses a nullable one), so each iteration
  // advances and the recursion ends.
  bool rep(const Node &n, int64_t count, size_t i, const K &k) {
    bool more = n.max < 0 || count < n.max;
    if (!n.greedy && count >= n.min && k(i))
      return true;
    if (more && m(*n.kids[0], i, [&, count](size_t j) { return rep(n, count + 1, j, k); }))
      return true;
    if (n.greedy && count >= n.min)
      return k(i);
    return false;
  }

  static constexpr uint64_t kMaxSteps = 1000000;
  static constexpr int kMaxDepth = 2000;
  const ReProgram &prog_;
  const std::string &s_;
  SourceRange r_;
  std::vector<int64_t> spans_;
  uint64_t steps_ = 0;
  int depth_ = 0;
};

bool ascii(const std::string &s) {
  for (char c : s)
    if (static_cast<unsigned char>(c) >= 128)
      return false;
  return true;
}

/// The program of a pattern argument (a str or a compiled Pattern), or null when it is
/// opaque (the caller's result is then opaque).
std::shared_ptr<const ReProgram> program(Interp &in, const V &p, const V &flags, CallCtx &c) {
  if (flags && !(isa<IntV>(flags) && cast<IntV>(flags).i == 0)) {
    if (isa<OpaqueV>(flags) || isa<IntV>(flags))
      unsupported(c.range,
                  fmt::format("{}() with flags (dkv models patterns without flags)", c.fn->name));
    in.raise("TypeError",
             fmt::format("unsupported operand type(s) for &: '{}' and 'int'", typeName(*flags)),
             c.range);
  }
  if (auto *po = apiAs<RePatternObj>(p)) {
    if (flags && isa<IntV>(flags) && cast<IntV>(flags).i != 0)
      in.raise("ValueError", "cannot process flags argument with a compiled pattern", c.range);
    return po->prog;
  }
  if (isa<OpaqueV>(p))
    return nullptr;
  auto *s = dynCast<StrV>(p);
  if (!s)
    in.raise("TypeError", "first argument must be string or compiled pattern", c.range);
  if (!ascii(s->s))
    unsupported(c.range, "a regular expression with non-ASCII characters");
  return Parser(in, s->s, c.range).parse();
}

const std::string *subject(Interp &in, const V &s, CallCtx &c) {
  if (isa<OpaqueV>(s))
    return nullptr;
  auto *str = dynCast<StrV>(s);
  if (!str)
    in.raise("TypeError",
             fmt::format("expected string or bytes-like object, got '{}'", typeName(*s)), c.range);
  if (!ascii(str->s))
    unsupported(c.range, "a regular expression on a string with non-ASCII characters");
  return &str->s;
}

V opaqueResult(Interp &in, CallCtx &c, const V &p, const V &s) {
  return in.opaque(fmt::format("{}() of it", c.fn->name), c.range, isa<OpaqueV>(p) ? p : s);
}

enum class Mode { Search, Match, Full };

/// The first match from `from` (search) or at `from` (match, fullmatch), its spans.
std::optional<std::vector<int64_t>> find(const ReProgram &prog, const std::string &s, size_t from,
                                         Mode mode, bool mustAdvance, SourceRange r) {
  Matcher mt(prog, s, r);
  for (size_t start = from; start <= s.size(); ++start) {
    if (mt.at(start, mode == Mode::Full, mustAdvance && start == from))
      return mt.spans();
    if (mode != Mode::Search)
      break;
  }
  return std::nullopt;
}

V matchValue(const std::shared_ptr<const ReProgram> &prog, const V &subj,
             std::vector<int64_t> spans) {
  return makeApi(ReMatchObj{prog, subj, std::move(spans)});
}

V doMatch(Interp &in, CallCtx &c, Mode mode, const V &p, const V &s, const V &flags) {
  auto prog = program(in, p, flags, c);
  const std::string *str = subject(in, s, c);
  if (!prog || !str)
    return opaqueResult(in, c, p, s);
  auto spans = find(*prog, *str, 0, mode, false, c.range);
  if (!spans)
    return none();
  return matchValue(prog, s, std::move(*spans));
}

/// Every match of findall / sub, with sre's rule after an empty match (the next one must
/// not be empty at the same place).
template <class F>
void eachMatch(Interp &in, const ReProgram &prog, const std::string &s, int64_t count,
               SourceRange r, F f) {
  size_t pos = 0;
  bool mustAdvance = false;
  int64_t n = 0;
  while (pos <= s.size() && (count <= 0 || n < count)) {
    in.step(r);
    auto spans = find(prog, s, pos, Mode::Search, mustAdvance, r);
    if (!spans)
      break;
    f(*spans);
    ++n;
    mustAdvance = (*spans)[0] == (*spans)[1];
    pos = static_cast<size_t>((*spans)[1]);
  }
}

V groupStr(const std::string &s, const std::vector<int64_t> &spans, size_t g, V dflt) {
  if (spans[2 * g] < 0)
    return dflt;
  return string(s.substr(static_cast<size_t>(spans[2 * g]),
                         static_cast<size_t>(spans[2 * g + 1] - spans[2 * g])));
}

V findall(Interp &in, CallCtx &c, const V &p, const V &s, const V &flags) {
  auto prog = program(in, p, flags, c);
  const std::string *str = subject(in, s, c);
  if (!prog || !str)
    return opaqueResult(in, c, p, s);
  std::vector<V> out;
  eachMatch(in, *prog, *str, 0, c.range, [&](const std::vector<int64_t> &spans) {
    if (prog->groups == 0) {
      out.push_back(groupStr(*str, spans, 0, string("")));
    } else if (prog->groups == 1) {
      out.push_back(groupStr(*str, spans, 1, string("")));
    } else {
      std::vector<V> t;
      for (int g = 1; g <= prog->groups; ++g)
        t.push_back(groupStr(*str, spans, static_cast<size_t>(g), string("")));
      out.push_back(tuple(std::move(t)));
    }
  });
  return list(std::move(out));
}

/// The expansion of a `sub` template (`\1`, `\g<name>`, `\n`, ...) for one match.
std::string expand(Interp &in, const ReProgram &prog, const std::string &tmpl, const std::string &s,
                   const std::vector<int64_t> &spans, SourceRange r) {
  std::string out;
  auto group = [&](int64_t g) {
    if (g < 0 || g > prog.groups)
      unsupported(r, fmt::format("a template that refers to group {} of a pattern with {} "
                                 "(re.error: invalid group reference)",
                                 g, prog.groups));
    if (spans[2 * g] >= 0)
      out += s.substr(static_cast<size_t>(spans[2 * g]),
                      static_cast<size_t>(spans[2 * g + 1] - spans[2 * g]));
  };
  for (size_t i = 0; i < tmpl.size(); ++i) {
    char ch = tmpl[i];
    if (ch != '\\') {
      out += ch;
      continue;
    }
    if (i + 1 >= tmpl.size())
      unsupported(r, "a template ending in a backslash (re.error: bad escape)");
    char e = tmpl[++i];
    if (std::isdigit(static_cast<unsigned char>(e))) {
      auto oct = [](char d) { return d >= '0' && d <= '7'; };
      if (e == '0' || (i + 2 < tmpl.size() && oct(e) && oct(tmpl[i + 1]) && oct(tmpl[i + 2])))
        unsupported(r, "an octal escape in a template");
      int64_t g = e - '0';
      if (i + 1 < tmpl.size() && std::isdigit(static_cast<unsigned char>(tmpl[i + 1])))
        g = g * 10 + (tmpl[++i] - '0');
      group(g);
    } else if (e == 'g') {
      size_t close = tmpl.find('>', i);
      if (i + 1 >= tmpl.size() || tmpl[i + 1] != '<' || close == std::string::npos)
        unsupported(r, "a malformed \\g<...> in a template (re.error)");
      std::string name = tmpl.substr(i + 2, close - i - 2);
      i = close;
      bool digits = !name.empty();
      for (char d : name)
        digits = digits && std::isdigit(static_cast<unsigned char>(d));
      if (digits) {
        if (name.size() > 6)
          unsupported(r, "a group number this large in a template");
        group(std::stoll(name));
        continue;
      }
      int64_t g = -1;
      for (const auto &[n, idx] : prog.names)
        if (n == name)
          g = idx;
      if (g < 0)
        in.raise("IndexError", fmt::format("unknown group name '{}'", name), r);
      group(g);
    } else if (int c = simpleEscape(e); c >= 0 && std::isalpha(static_cast<unsigned char>(e))) {
      out += static_cast<char>(c);
    } else if (e == '\\') {
      out += '\\';
    } else if (std::isalpha(static_cast<unsigned char>(e))) {
      unsupported(r, fmt::format("the escape '\\{}' in a template (re.error: bad escape)", e));
    } else {
      out += '\\';
      out += e; // CPython keeps an unknown non-letter escape as it is
    }
  }
  return out;
}

V sub(Interp &in, CallCtx &c, const V &p, const V &repl, const V &s, const V &count,
      const V &flags) {
  auto prog = program(in, p, flags, c);
  const std::string *str = subject(in, s, c);
  if (!prog || !str)
    return opaqueResult(in, c, p, s);
  int64_t n = 0;
  if (count) {
    if (isa<OpaqueV>(count))
      return opaqueResult(in, c, count, count);
    n = in.toIndex(count, c.range, "the count of re.sub");
  }
  const std::string *tmpl = nullptr;
  if (auto *t = dynCast<StrV>(repl)) {
    tmpl = &t->s;
    if (!ascii(*tmpl))
      unsupported(c.range, "a template with non-ASCII characters");
  } else if (isa<OpaqueV>(repl)) {
    return opaqueResult(in, c, repl, repl);
  }
  std::string out;
  size_t last = 0;
  bool opaquePart = false;
  V opaqueFrom;
  eachMatch(in, *prog, *str, n, c.range, [&](const std::vector<int64_t> &spans) {
    out += str->substr(last, static_cast<size_t>(spans[0]) - last);
    if (tmpl) {
      out += expand(in, *prog, *tmpl, *str, spans, c.range);
    } else {
      V r = in.call(repl, Args{{matchValue(prog, s, spans)}, {}}, c.range);
      if (auto *rs = dynCast<StrV>(r)) {
        out += rs->s;
      } else if (isa<OpaqueV>(r)) {
        opaquePart = true;
        opaqueFrom = r;
      } else {
        in.raise("TypeError", fmt::format("expected str instance, {} found", typeName(*r)),
                 c.range);
      }
    }
    last = static_cast<size_t>(spans[1]);
  });
  if (opaquePart)
    return in.opaque("re.sub() of it", c.range, opaqueFrom);
  out += str->substr(last);
  return string(out);
}

// The methods of Pattern and Match objects.
const ReMatchObj &matchOf(const V &self) { return *apiAs<ReMatchObj>(self); }
const std::string &matchStr(const ReMatchObj &m) { return cast<StrV>(m.subject).s; }

/// The index of a group argument (an int or a group name), or an IndexError.
size_t groupIndex(Interp &in, const ReMatchObj &m, const V &g, SourceRange r) {
  if (auto *s = dynCast<StrV>(g)) {
    for (const auto &[n, idx] : m.prog->names)
      if (n == s->s)
        return static_cast<size_t>(idx);
    in.raise("IndexError", "no such group", r);
  }
  if (isa<IntV>(g) || isa<BoolV>(g)) {
    int64_t i = isa<IntV>(g) ? cast<IntV>(g).i : cast<BoolV>(g).b;
    if (i < 0 || i > m.prog->groups)
      in.raise("IndexError", "no such group", r);
    return static_cast<size_t>(i);
  }
  if (isa<OpaqueV>(g))
    in.opaqueNeeded(g, r, "a group of a match");
  in.raise("IndexError", "no such group", r);
}

const BuiltinFn kGroup{
    "group", +[](Interp &in, CallCtx &c) -> V {
      if (!c.args.kw.empty())
        in.raise("TypeError", "group() takes no keyword arguments", c.range);
      const ReMatchObj &m = matchOf(c.self);
      if (c.args.pos.empty())
        return groupStr(matchStr(m), m.spans, 0, none());
      std::vector<V> out;
      for (const V &g : c.args.pos)
        out.push_back(groupStr(matchStr(m), m.spans, groupIndex(in, m, g, c.range), none()));
      if (out.size() == 1)
        return out[0];
      return tuple(std::move(out));
    }};
const BuiltinFn kGroups{
    "groups", +[](Interp &in, CallCtx &c) -> V {
      auto a = c.bind(in, {"default"});
      const ReMatchObj &m = matchOf(c.self);
      std::vector<V> out;
      for (int g = 1; g <= m.prog->groups; ++g)
        out.push_back(groupStr(matchStr(m), m.spans, static_cast<size_t>(g), a[0] ? a[0] : none()));
      return tuple(std::move(out));
    }};
const BuiltinFn kGroupDict{"groupdict", +[](Interp &in, CallCtx &c) -> V {
                             auto a = c.bind(in, {"default"});
                             const ReMatchObj &m = matchOf(c.self);
                             std::vector<std::pair<V, V>> items;
                             for (const auto &[n, g] : m.prog->names)
                               items.emplace_back(string(n), groupStr(matchStr(m), m.spans,
                                                                      static_cast<size_t>(g),
                                                                      a[0] ? a[0] : none()));
                             return in.newDict(items, c.range);
                           }};
template <int What> V spanPart(Interp &in, CallCtx &c) {
  auto a = c.bind(in, {"group"});
  const ReMatchObj &m = matchOf(c.self);
  size_t g = a[0] ? groupIndex(in, m, a[0], c.range) : 0;
  int64_t s = m.spans[2 * g], e = m.spans[2 * g + 1];
  if (What == 0)
    return integer(s);
  if (What == 1)
    return integer(e);
  return tuple({integer(s), integer(e)});
}
const BuiltinFn kStart{"start", spanPart<0>};
const BuiltinFn kEnd{"end", spanPart<1>};
const BuiltinFn kSpan{"span", spanPart<2>};

// Pattern methods: the module functions with the pattern bound.
V patSearch(Interp &in, CallCtx &c, Mode mode) {
  auto a = c.bind(in, {"string", "pos", "endpos"});
  if (!a[0])
    in.raise("TypeError",
             fmt::format("{}() missing required argument 'string' (pos 1)", c.fn->name), c.range);
  if (a[1] || a[2])
    unsupported(c.range, fmt::format("Pattern.{}() with pos or endpos", c.fn->name));
  return doMatch(in, c, mode, c.self, a[0], nullptr);
}
const BuiltinFn kPSearch{
    "search", +[](Interp &in, CallCtx &c) -> V { return patSearch(in, c, Mode::Search); }};
const BuiltinFn kPMatch{"match",
                        +[](Interp &in, CallCtx &c) -> V { return patSearch(in, c, Mode::Match); }};
const BuiltinFn kPFull{"fullmatch",
                       +[](Interp &in, CallCtx &c) -> V { return patSearch(in, c, Mode::Full); }};
const BuiltinFn kPFindall{
    "findall", +[](Interp &in, CallCtx &c) -> V {
      auto a = c.bind(in, {"string", "pos", "endpos"});
      if (!a[0])
        in.raise("TypeError", "findall() missing required argument 'string' (pos 1)", c.range);
      if (a[1] || a[2])
        unsupported(c.range, "Pattern.findall() with pos or endpos");
      return findall(in, c, c.self, a[0], nullptr);
    }};
const BuiltinFn kPSub{"sub", +[](Interp &in, CallCtx &c) -> V {
                        auto a = c.bind(in, {"repl", "string", "count"});
                        if (!a[0] || !a[1])
                          in.raise("TypeError",
                                   fmt::format("sub() missing required argument '{}' (pos {})",
                                               a[0] ? "string" : "repl", a[0] ? 2 : 1),
                                   c.range);
                        return sub(in, c, c.self, a[0], a[1], a[2], nullptr);
                      }};

} // namespace

namespace {

/// The attributes of a match object and of a compiled pattern (CPython's re).
const AttrRow<ReMatchObj> kMatchAttrs[] = {
    {"group", [](auto &, auto &, auto &self, auto) { return builtinValue(kGroup, self); }},
    {"groups", [](auto &, auto &, auto &self, auto) { return builtinValue(kGroups, self); }},
    {"groupdict", [](auto &, auto &, auto &self, auto) { return builtinValue(kGroupDict, self); }},
    {"start", [](auto &, auto &, auto &self, auto) { return builtinValue(kStart, self); }},
    {"end", [](auto &, auto &, auto &self, auto) { return builtinValue(kEnd, self); }},
    {"span", [](auto &, auto &, auto &self, auto) { return builtinValue(kSpan, self); }},
    {"string", [](auto &, auto &m, auto &, auto) { return m.subject; }},
    {"re", [](auto &, auto &m, auto &, auto) { return makeApi(RePatternObj{m.prog}); }},
    {"pos", [](auto &, auto &, auto &, auto) { return integer(0); }},
    {"endpos", [](auto &, auto &m, auto &,
                  auto) { return integer(static_cast<int64_t>(matchStr(m).size())); }},
};
const AttrRow<RePatternObj> kPatternAttrs[] = {
    {"search", [](auto &, auto &, auto &self, auto) { return builtinValue(kPSearch, self); }},
    {"match", [](auto &, auto &, auto &self, auto) { return builtinValue(kPMatch, self); }},
    {"fullmatch", [](auto &, auto &, auto &self, auto) { return builtinValue(kPFull, self); }},
    {"findall", [](auto &, auto &, auto &self, auto) { return builtinValue(kPFindall, self); }},
    {"sub", [](auto &, auto &, auto &self, auto) { return builtinValue(kPSub, self); }},
    {"pattern", [](auto &, auto &p, auto &, auto) { return string(p.prog->pattern); }},
    {"groups", [](auto &, auto &p, auto &, auto) { return integer(p.prog->groups); }},
    // re.UNICODE, what CPython gives a str pattern.
    {"flags", [](auto &, auto &, auto &, auto) { return integer(32); }},
};

} // namespace

V reObjectAttr(Interp &in, const V &obj, const std::string &name, SourceRange r, bool &isRe) {
  isRe = false;
  if (auto *m = apiAs<ReMatchObj>(obj)) {
    isRe = true;
    const AttrRow<ReMatchObj> *a = findAttr(kMatchAttrs, name);
    return a ? a->get(in, *m, obj, r) : nullptr;
  }
  if (auto *p = apiAs<RePatternObj>(obj)) {
    isRe = true;
    const AttrRow<RePatternObj> *a = findAttr(kPatternAttrs, name);
    return a ? a->get(in, *p, obj, r) : nullptr;
  }
  return nullptr;
}

namespace {

/// CPython's TypeError for required parameters not given: "search() missing 1 required
/// positional argument: 'string'" (2: "'pattern' and 'string'").
void required(Interp &in, CallCtx &c, const std::vector<V> &a,
              std::initializer_list<const char *> names) {
  std::vector<std::string> missing;
  size_t i = 0;
  for (const char *n : names)
    if (!a[i++])
      missing.push_back(fmt::format("'{}'", n));
  if (missing.empty())
    return;
  std::string list = missing.back();
  if (missing.size() > 1) {
    list = missing[0];
    for (size_t k = 1; k + 1 < missing.size(); ++k)
      list += ", " + missing[k];
    list += (missing.size() > 2 ? ", and " : " and ") + missing.back();
  }
  std::string name = c.fn->name.substr(c.fn->name.find('.') + 1);
  in.raise("TypeError",
           fmt::format("{}() missing {} required positional argument{}: {}", name, missing.size(),
                       missing.size() == 1 ? "" : "s", list),
           c.range);
}

template <Mode M> V moduleMatch(Interp &in, CallCtx &c) {
  auto a = c.bind(in, {"pattern", "string", "flags"});
  required(in, c, a, {"pattern", "string"});
  return doMatch(in, c, M, a[0], a[1], a[2]);
}

} // namespace

void registerRe(Registry &reg) {
  auto fn = [&](std::vector<std::string> names, V (*h)(Interp &, CallCtx &)) {
    std::string shortName = names[0];
    reg.addRow(ApiRow{std::move(names), BuiltinFn{shortName, h, "", false}, nullptr});
  };
  fn({"re.search"}, moduleMatch<Mode::Search>);
  fn({"re.match"}, moduleMatch<Mode::Match>);
  fn({"re.fullmatch"}, moduleMatch<Mode::Full>);
  fn(
      {"re.findall"}, +[](Interp &in, CallCtx &c) -> V {
        auto a = c.bind(in, {"pattern", "string", "flags"});
        required(in, c, a, {"pattern", "string"});
        return findall(in, c, a[0], a[1], a[2]);
      });
  fn(
      {"re.sub"}, +[](Interp &in, CallCtx &c) -> V {
        auto a = c.bind(in, {"pattern", "repl", "string", "count", "flags"});
        required(in, c, a, {"pattern", "repl", "string"});
        return sub(in, c, a[0], a[1], a[2], a[3], a[4]);
      });
  fn(
      {"re.compile"}, +[](Interp &in, CallCtx &c) -> V {
        auto a = c.bind(in, {"pattern", "flags"});
        required(in, c, a, {"pattern"});
        if (apiAs<RePatternObj>(a[0])) {
          program(in, a[0], a[1], c); // flags with a compiled pattern: ValueError
          return a[0];
        }
        auto prog = program(in, a[0], a[1], c);
        if (!prog)
          return opaqueResult(in, c, a[0], a[0]);
        return makeApi(RePatternObj{prog});
      });
}

} // namespace dkv::pytrace
