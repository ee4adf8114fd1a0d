// The catalogue's table (prim/Ops.def), its parsed signatures and lookups.
#include "prim/Op.h"

#include "support/Invariant.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <string>

namespace dkv::prim {

namespace {

constexpr OpRecord kRecords[] = {
#define DKV_OP(Id, ...) OpRecord{.id = Op::Id, __VA_ARGS__},
#include "prim/Ops.def"
#undef DKV_OP
};

constexpr bool recordsInOrder() {
  for (size_t i = 0; i < std::size(kRecords); ++i)
    if (static_cast<size_t>(kRecords[i].id) != i)
      return false;
  return true;
}
static_assert(recordsInOrder(), "the rows of Ops.def define Op in order");

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())))
    s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())))
    s.remove_suffix(1);
  return s;
}

// Splits at `sep` outside parentheses.
std::vector<std::string_view> splitTop(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '(')
      ++depth;
    else if (s[i] == ')')
      --depth;
    else if (s[i] == sep && depth == 0) {
      out.push_back(trim(s.substr(start, i - start)));
      start = i + 1;
    }
  }
  if (start < s.size() || !out.empty())
    out.push_back(trim(s.substr(start)));
  return out;
}

std::optional<ParamKind> kindOf(std::string_view word) {
  static constexpr std::pair<std::string_view, ParamKind> kinds[] = {
      {"array", ParamKind::Array}, {"cond", ParamKind::Cond},
      {"value", ParamKind::Value}, {"arrays", ParamKind::Arrays},
      {"axis", ParamKind::Axis},   {"int", ParamKind::Int},
      {"dtype", ParamKind::DType}, {"shape", ParamKind::Shape},
      {"bool", ParamKind::Bool},   {"unsupported", ParamKind::Unsupported}};
  for (auto [name, kind] : kinds)
    if (name == word)
      return kind;
  return std::nullopt;
}

struct Parsed {
  std::vector<std::vector<Signature>> dk;
  std::vector<std::vector<PySpelling>> python;
  /// The operand parameters (`array`, `cond`, `value`) of each op's first signature (`.dk`,
  /// else Python).
  std::vector<std::vector<ParamKind>> operands;
};

const Parsed &parsed() {
  static const Parsed p = [] {
    Parsed out;
    out.dk.resize(std::size(kRecords));
    out.python.resize(std::size(kRecords));
    for (const OpRecord &r : kRecords) {
      const size_t i = static_cast<size_t>(r.id);
      for (std::string_view text : splitTop(r.dk, ';')) {
        auto sig = parseSignature(text);
        DKV_INVARIANT(sig.has_value(), "a .dk signature of prim/Ops.def is malformed");
        out.dk[i].push_back(std::move(*sig));
      }
      for (std::string_view text : splitTop(r.python, ';')) {
        auto sig = parseSignature(text);
        DKV_INVARIANT(sig.has_value(), "a Python signature of prim/Ops.def is malformed");
        // `jnp.max|jnp.amax(...)`: one spelling per name.
        std::string_view names = sig->name;
        while (true) {
          size_t bar = names.find('|');
          Signature one = *sig;
          one.name = names.substr(0, bar);
          out.python[i].push_back({r.id, one.name, std::move(one)});
          if (bar == std::string_view::npos)
            break;
          names.remove_prefix(bar + 1);
        }
      }
      const Signature *first = !out.dk[i].empty()       ? &out.dk[i].front()
                               : !out.python[i].empty() ? &out.python[i].front().signature
                                                        : nullptr;
      out.operands.emplace_back();
      if (first)
        for (const Param &p : first->params)
          if (p.kind == ParamKind::Array || p.kind == ParamKind::Cond || p.kind == ParamKind::Value)
            out.operands.back().push_back(p.kind);
    }
    return out;
  }();
  return p;
}

} // namespace

int Signature::find(std::string_view n) const {
  for (size_t i = 0; i < params.size(); ++i)
    if (params[i].name == n)
      return static_cast<int>(i);
  return -1;
}

size_t Signature::positionalCount() const {
  size_t n = 0;
  for (const Param &p : params)
    n += !p.keywordOnly;
  return n;
}

std::optional<Signature> parseSignature(std::string_view text) {
  text = trim(text);
  size_t open = text.find('(');
  if (open == std::string_view::npos || open == 0 || text.back() != ')')
    return std::nullopt;
  Signature sig;
  sig.name = trim(text.substr(0, open));
  std::string_view body = text.substr(open + 1, text.size() - open - 2);
  bool keywordOnly = false;
  for (std::string_view item : splitTop(body, ',')) {
    if (item.empty())
      return std::nullopt;
    if (item == "*") {
      keywordOnly = true;
      continue;
    }
    Param p;
    p.keywordOnly = keywordOnly;
    if (item.front() == '*') {
      p.variadic = true;
      item.remove_prefix(1);
    }
    size_t colon = item.find(':');
    if (colon == std::string_view::npos)
      return std::nullopt;
    p.name = trim(item.substr(0, colon));
    std::string_view rest = item.substr(colon + 1);
    size_t eq = rest.find('=');
    auto kind = kindOf(trim(rest.substr(0, eq)));
    if (!kind || p.name.empty())
      return std::nullopt;
    p.kind = *kind;
    if (eq != std::string_view::npos) {
      p.defaultValue = trim(rest.substr(eq + 1));
      if (p.defaultValue.empty())
        return std::nullopt;
    } else if (p.kind == ParamKind::Unsupported) {
      return std::nullopt; // accepted only at its default: it needs one
    }
    sig.params.push_back(p);
  }
  return sig;
}

std::span<const OpRecord> records() { return kRecords; }

const OpRecord &record(Op op) { return kRecords[static_cast<size_t>(op)]; }

std::string_view name(Op op) {
  const auto sigs = dkSignatures(op);
  if (!sigs.empty())
    return sigs.front().name;
  if (!record(op).dkOperator.empty())
    return record(op).dkOperator;
  return record(op).model;
}

std::span<const Signature> dkSignatures(Op op) { return parsed().dk[static_cast<size_t>(op)]; }

std::span<const PySpelling> pythonSpellings(Op op) {
  return parsed().python[static_cast<size_t>(op)];
}

int arity(Op op) { return static_cast<int>(parsed().operands[static_cast<size_t>(op)].size()); }

ParamKind operandKind(Op op, size_t i) {
  const std::vector<ParamKind> &kinds = parsed().operands[static_cast<size_t>(op)];
  return i < kinds.size() ? kinds[i] : ParamKind::Array;
}

std::vector<Op> findOpsByDkName(std::string_view n) {
  std::vector<Op> out;
  for (const OpRecord &r : kRecords)
    for (const Signature &s : dkSignatures(r.id))
      if (s.name == n && (out.empty() || out.back() != r.id))
        out.push_back(r.id);
  return out;
}

std::optional<Op> findOpByDkOperator(std::string_view op, int operands) {
  for (const OpRecord &r : kRecords)
    if (r.dkOperator == op && arity(r.id) == operands)
      return r.id;
  return std::nullopt;
}

const PySpelling *findPythonSpelling(std::string_view n) {
  for (const auto &spellings : parsed().python)
    for (const PySpelling &s : spellings)
      if (s.name == n)
        return &s;
  return nullptr;
}

std::optional<Op> findOpByPythonName(std::string_view n) {
  if (const PySpelling *s = findPythonSpelling(n))
    return s->op;
  return std::nullopt;
}

std::optional<Op> findOpByPythonOperator(std::string_view op, int operands) {
  for (const OpRecord &r : kRecords)
    if (r.pyOperator == op && arity(r.id) == operands)
      return r.id;
  return std::nullopt;
}

} // namespace dkv::prim
