// The registry of the Python API dkv models: one row per function or constant, with its
// qualified names (the canonical one first, then aliases across JAX versions and
// re-exporting modules), its handler and the kernel-language construct it becomes.
// Adding a function is adding a row (docs/python.md "The Pallas API table").
#include "pytrace/Interp.h"

#include <fmt/format.h>

namespace dkv::pytrace {

// Each concern registers its rows (HostJax.cpp, KernelApi.cpp, HostMath.cpp, Pipeline.cpp,
// Stdlib.cpp, Testing.cpp, CoreMap.cpp).
void registerHostJax(Registry &reg);
void registerKernelApi(Registry &reg);
void registerHostMath(Registry &reg);
void registerStdlib(Registry &reg);
void registerRe(Registry &reg);
void registerJaxSrc(Registry &reg);
void registerTesting(Registry &reg);
void registerPipeline(Registry &reg);
void registerHypothesis(Registry &reg);
void registerCoreMap(Registry &reg);

const Registry &Registry::get() {
  static const Registry reg = [] {
    Registry r;
    registerHostJax(r);
    registerKernelApi(r);
    registerHostMath(r); // after the catalogue's rows, which it does not replace
    registerStdlib(r);
    registerRe(r);
    registerJaxSrc(r);
    registerTesting(r);
    registerPipeline(r);
    registerHypothesis(r);
    registerCoreMap(r);
    return r;
  }();
  return reg;
}

void Registry::addRow(ApiRow row) {
  size_t at = rows_.size();
  for (const std::string &n : row.names) {
    // Every enclosing module of a row is a module dkv models (so that attribute chains
    // like `pltpu.SemaphoreType.DMA` resolve through it).
    for (size_t dot = n.find('.'); dot != std::string::npos; dot = n.find('.', dot + 1)) {
      std::string prefix = n.substr(0, dot);
      if (!moduleAliases_.count(prefix))
        modules_.insert(prefix);
    }
    byName_[n] = at;
  }
  rows_.push_back(std::move(row));
}

void Registry::addModule(std::string path, std::vector<std::string> aliases) {
  for (size_t dot = path.find('.'); dot != std::string::npos; dot = path.find('.', dot + 1))
    modules_.insert(path.substr(0, dot));
  for (std::string &a : aliases) {
    for (size_t dot = a.find('.'); dot != std::string::npos; dot = a.find('.', dot + 1))
      modules_.insert(a.substr(0, dot));
    moduleAliases_[a] = path;
  }
  modules_.insert(std::move(path));
}

void Registry::addRemoved(std::string qualified, const char *message) {
  for (size_t dot = qualified.find('.'); dot != std::string::npos;
       dot = qualified.find('.', dot + 1))
    modules_.insert(qualified.substr(0, dot));
  removed_[std::move(qualified)] = message;
}

const char *Registry::removed(const std::string &qualified) const {
  auto it = removed_.find(qualified);
  return it == removed_.end() ? nullptr : it->second;
}

const ApiRow *Registry::find(const std::string &qualified) const {
  auto it = byName_.find(qualified);
  return it == byName_.end() ? nullptr : &rows_[it->second];
}

std::optional<std::string> Registry::module(const std::string &path) const {
  if (auto it = moduleAliases_.find(path); it != moduleAliases_.end())
    return it->second;
  // A path under an alias: `jax._src.shard_map.X` -> its canonical module's X.
  for (const auto &[alias, canon] : moduleAliases_)
    if (path.size() > alias.size() && path.compare(0, alias.size(), alias) == 0 &&
        path[alias.size()] == '.') {
      std::string mapped = canon + path.substr(alias.size());
      if (modules_.count(mapped))
        return mapped;
    }
  if (modules_.count(path))
    return path;
  return std::nullopt;
}

} // namespace dkv::pytrace
