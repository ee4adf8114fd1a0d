// The argument binder: positional and keyword arguments of a call to the parameters of
// a signature, for the `.dk` parser and the Python tracer alike.
#pragma once

#include "prim/Op.h"

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace dkv::prim {

/// One argument of a call: positional (empty `keyword`) or `keyword = value`.
struct Arg {
  std::string_view keyword;
};

/// Why a call does not bind.
struct BindError {
  enum class Kind {
    UnknownKeyword,         ///< `arg`'s keyword names no parameter
    Duplicate,              ///< `arg` binds parameter `param` a second time
    PositionalAfterKeyword, ///< `arg` is positional after a keyword argument
    TooMany,                ///< `arg` is one positional argument too many
    Missing,                ///< required parameter `param` is not given
  };
  Kind kind;
  size_t arg = 0;   ///< the argument at fault (not for Missing)
  size_t param = 0; ///< Duplicate, Missing: the parameter
};

struct BindResult {
  /// Per parameter: the index of its argument, or -1 (absent: its default applies).
  std::vector<int> slot;
  /// The arguments taken by the variadic parameter (`*shape`), in order.
  std::vector<size_t> rest;
  /// Every problem, in argument order; binding stops at TooMany, and Missing is
  /// reported only when nothing else is.
  std::vector<BindError> errors;
  bool ok() const { return errors.empty(); }
};

/// Binds `args` to `sig` as Python does: positional arguments fill the parameters that
/// are not keyword-only in order (a variadic one takes the rest), keyword arguments
/// name theirs; no parameter is bound twice; every required parameter is bound.
BindResult bindArguments(const Signature &sig, std::span<const Arg> args);

/// The `.dk` diagnostic of an error: its id (`bad-argument`, `arg-count`) and message.
std::string_view dkErrorId(const BindError &error);
std::string dkErrorMessage(const BindError &error, const Signature &sig, std::span<const Arg> args);

} // namespace dkv::prim
