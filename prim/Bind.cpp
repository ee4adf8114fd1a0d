// The argument binder shared by the `.dk` parser and the Python tracer.
#include "prim/Bind.h"

#include <fmt/format.h>

namespace dkv::prim {

BindResult bindArguments(const Signature &sig, std::span<const Arg> args) {
  BindResult out;
  out.slot.assign(sig.params.size(), -1);
  size_t positional = 0;
  bool sawKeyword = false;
  for (size_t a = 0; a < args.size(); ++a) {
    if (!args[a].keyword.empty()) {
      sawKeyword = true;
      int p = sig.find(args[a].keyword);
      if (p < 0 || sig.params[static_cast<size_t>(p)].variadic) {
        out.errors.push_back({BindError::Kind::UnknownKeyword, a, 0});
        continue;
      }
      if (out.slot[static_cast<size_t>(p)] >= 0) {
        out.errors.push_back({BindError::Kind::Duplicate, a, static_cast<size_t>(p)});
        continue;
      }
      out.slot[static_cast<size_t>(p)] = static_cast<int>(a);
      continue;
    }
    if (sawKeyword) {
      out.errors.push_back({BindError::Kind::PositionalAfterKeyword, a, 0});
      continue;
    }
    // The next parameter that takes positional arguments.
    while (positional < sig.params.size() && sig.params[positional].keywordOnly)
      ++positional;
    if (positional >= sig.params.size()) {
      out.errors.push_back({BindError::Kind::TooMany, a, 0});
      return out;
    }
    if (sig.params[positional].variadic) {
      out.rest.push_back(a);
      continue;
    }
    out.slot[positional++] = static_cast<int>(a);
  }
  if (!out.errors.empty())
    return out;
  for (size_t p = 0; p < sig.params.size(); ++p)
    if (sig.params[p].required() && !sig.params[p].variadic && out.slot[p] < 0) {
      out.errors.push_back({BindError::Kind::Missing, 0, p});
      break;
    }
  return out;
}

std::string_view dkErrorId(const BindError &error) {
  switch (error.kind) {
  case BindError::Kind::UnknownKeyword:
  case BindError::Kind::Duplicate:
  case BindError::Kind::PositionalAfterKeyword:
    return "bad-argument";
  case BindError::Kind::TooMany:
  case BindError::Kind::Missing:
    return "arg-count";
  }
  return "bad-argument";
}

std::string dkErrorMessage(const BindError &error, const Signature &sig,
                           std::span<const Arg> args) {
  switch (error.kind) {
  case BindError::Kind::UnknownKeyword:
    return fmt::format("{}() has no argument named '{}'", sig.name, args[error.arg].keyword);
  case BindError::Kind::Duplicate:
    return fmt::format("argument '{}' of {}() given twice", sig.params[error.param].name, sig.name);
  case BindError::Kind::PositionalAfterKeyword:
    return "positional argument after a named argument";
  case BindError::Kind::TooMany: {
    const size_t n = sig.positionalCount();
    if (n == sig.params.size())
      return fmt::format("too many arguments to {}(): it takes at most {}", sig.name, n);
    return fmt::format("too many positional arguments to {}(): it takes at most {}", sig.name, n);
  }
  case BindError::Kind::Missing: {
    size_t required = 0;
    for (const Param &p : sig.params)
      required += p.required();
    return fmt::format("missing argument '{}' of {}() (it takes {}{} argument{})",
                       sig.params[error.param].name, sig.name,
                       required == sig.params.size() ? "" : "at least ", required,
                       required == 1 ? "" : "s");
  }
  }
  return "";
}

} // namespace dkv::prim
