// The static scopes of a Python file (CPython's symtable): which names of a function,
// class body or comprehension are local, global, nonlocal or free, decided before the
// code runs, as CPython's compiler decides them (docs/python.md "Object model").
#pragma once

#include "pyfront/PyAST.h"

#include <map>
#include <memory>
#include <set>
#include <string>

namespace dkv::pytrace {

struct ScopeInfo {
  enum class Type { Module, Function, Class, Comprehension };
  Type type = Type::Function;
  /// Names bound in the scope (assigned, imported, defined, parameters, loop and
  /// `with`/`except` targets, deleted), minus those declared global or nonlocal.
  std::set<std::string> locals;
  std::set<std::string> globals;   ///< `global` declarations
  std::set<std::string> nonlocals; ///< `nonlocal` declarations
  /// Names this scope or a scope nested in it reads or declares nonlocal but does not
  /// bind: the variables a closure made here captures from the enclosing functions.
  std::set<std::string> frees;
  /// A comprehension's `:=` targets, bound in the enclosing function (PEP 572).
  std::set<std::string> walrus;
  bool generator = false; ///< contains `yield` / `yield from` / `await`
  /// The `nonlocal` statement of a name no enclosing function binds (CPython's
  /// SyntaxError), or null.
  const py::Stmt *badNonlocal = nullptr;
  std::string badNonlocalName;
};

/// The scopes of one module, computed once.
class Symtable {
public:
  explicit Symtable(const py::Module &module);
  /// The scope of a FunctionDef, ClassDef, Lambda, ListComp, SetComp, DictComp or
  /// GeneratorExp node of the module (or of the module itself).
  const ScopeInfo &of(const void *node) const;
  const ScopeInfo &module() const { return *moduleScope_; }
  bool has(const void *node) const { return scopes_.count(node) != 0; }

private:
  std::map<const void *, std::unique_ptr<ScopeInfo>> scopes_;
  ScopeInfo *moduleScope_ = nullptr;
};

} // namespace dkv::pytrace
