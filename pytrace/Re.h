// Python's `re` as CPython's sre runs it, for a documented subset of the pattern syntax
// (docs/python.md "Regular expressions"); any other syntax is a located refusal.
#pragma once

#include "pytrace/Value.h"
#include "support/Source.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace dkv::pytrace {

class Interp;
struct ReProgram;

/// `re.compile(pattern)`: a compiled pattern.
struct RePatternObj {
  std::shared_ptr<const ReProgram> prog;
};
/// A match object: the subject and each group's span (-1: the group did not take part).
struct ReMatchObj {
  std::shared_ptr<const ReProgram> prog;
  V subject;                  ///< the str searched
  std::vector<int64_t> spans; ///< 2 per group, group 0 first
};

/// The attribute `name` of a Pattern or Match object (null if `obj` is neither, or if it
/// has no such attribute: an AttributeError).
V reObjectAttr(Interp &in, const V &obj, const std::string &name, support::SourceRange r,
               bool &isRe);

} // namespace dkv::pytrace
