// Imports as Python resolves them (docs/python.md "Modules"): modules dkv models (JAX,
// Pallas, numpy and the standard library that kernel files use) come from the registry;
// the file's own package and its siblings are read from disk (the package root found
// through `__init__.py`, `--python-path` roots after it); anything else is an opaque
// module. Cycles see the partially initialized module, as in CPython.
#include "pyfront/Parser.h"
#include "pytrace/Interp.h"

#include <fmt/format.h>

#include <filesystem>

namespace dkv::pytrace {

namespace fs = std::filesystem;

namespace {
constexpr int kMaxImportDepth = 64;
constexpr size_t kMaxModules = 256;
} // namespace

ModuleP Interp::modelledModule(const std::string &canonical, const std::string &name) {
  auto m = std::make_shared<ModuleV>(name);
  m->modelled = true;
  m->dict->set("__name__", string(name));
  m->dict->set("__dkv_canonical__", string(canonical));
  return m;
}

const SetDirective *Interp::findSet(const std::string &name) const {
  const SetDirective *set = nullptr;
  if (options_.directives)
    if (auto it = options_.directives->sets.find(name); it != options_.directives->sets.end())
      set = &it->second;
  for (const SetDirective &s : options_.sets)
    if (s.name == name)
      set = &s;
  return set;
}

const py::Expr &Interp::parseExpression(const std::string &name, const std::string &text,
                                        const std::function<SourceRange(SourceRange)> &place,
                                        const std::string &what, const char *shapeId,
                                        const std::string &shapeMessage) {
  support::FileId id = sources_->add(name, text);
  support::DiagnosticEngine diags(sources_);
  std::unique_ptr<py::Module> parsed = pyfront::parseModule(sources_->file(id), diags);
  if (!parsed || diags.hasErrors()) {
    const support::Diagnostic &d = diags.diagnostics().front();
    fail(place(d.range), d.id, what + ": " + d.message);
  }
  if (parsed->body.size() != 1 || parsed->body[0]->kind != py::StmtKind::ExprStmt)
    fail(place(parsed->range), shapeId, shapeMessage);
  const py::Expr &expr = *py::cast<py::ExprStmt>(*parsed->body[0]).value;
  symtables_[parsed.get()] = std::make_unique<Symtable>(*parsed);
  parsedModules_.push_back(std::move(parsed));
  return expr;
}

V Interp::directiveValue(const SetDirective &set, const ModuleP &globals) {
  if (!set.call)
    return literalValue(set.value);
  DirectiveConstObj obj;
  obj.name = set.name;
  if (set.expression.empty()) {
    obj.value = literalValue(set.value);
  } else {
    if (!sources_)
      fail(set.range, "python-directive", "a 'set' expression needs the run's source manager");
    // Parsed on its own line (the directive's line number, from column 1); a syntax error
    // is shown where it stands in the directive.
    const std::string text = std::string(set.exprLine - 1, '\n') + set.expression + "\n";
    auto inDirective = [&](SourceRange at) {
      const support::SourceFile &file = sources_->file(set.range.begin.file);
      const uint32_t col = set.exprCol + (at.begin.line == set.exprLine ? at.begin.col - 1 : 0);
      support::SourceLoc loc = file.loc(set.exprLine, col);
      return SourceRange{loc, loc};
    };
    obj.expr =
        &parseExpression(std::string(sources_->name(set.range.begin.file)), text, inDirective,
                         "'set " + set.name + "()=EXPR'", "python-directive",
                         fmt::format("'set {}()=EXPR' takes one Python expression", set.name));
    obj.globals = globals;
  }
  return makeApi(std::move(obj));
}

Frame Interp::moduleFrame(const ModuleP &m) const {
  Frame f;
  f.scope = &moduleSymtable_.at(m.get())->module();
  f.globals = m;
  return f;
}

V Interp::moduleAttr(const ModuleP &m, const std::string &name, SourceRange r) {
  if (V v = m->dict->get(name))
    return v;
  if (!m->modelled) {
    // PEP 562: a module's own `__getattr__(name)` gives the attributes it lacks.
    if (V hook = m->dict->get("__getattr__"))
      return call(hook, Args{{string(name)}, {}}, r);
    return nullptr;
  }
  // `--set module.NAME=VALUE` / `# dkv: set module.NAME()=VALUE`: a fact of a module dkv
  // models or does not know, given on the command line or in a directive.
  std::string dotted = m->name + "." + name;
  if (const SetDirective *set = findSet(dotted)) {
    V v = directiveValue(*set, main_);
    m->dict->set(name, v);
    return v;
  }
  const std::string &canonical = cast<StrV>(m->dict->get("__dkv_canonical__")).s;
  std::string q = canonical + "." + name;
  const Registry &reg = Registry::get();
  // A name JAX removed but still lists in its module's deprecations: reading it raises
  // the AttributeError JAX's `deprecation_getattr` raises (jax/_src/deprecations.py).
  if (const char *message = reg.removed(q))
    raise("AttributeError", message, r);
  if (const ApiRow *row = reg.find(q)) {
    V v;
    if (row->fn.handler) {
      v = builtinValue(row->fn);
    } else {
      V &cached = constants_[row];
      if (!cached)
        cached = row->constant ? row->constant(*this) : dtypeConstant(row->names[0]);
      v = cached;
    }
    m->dict->set(name, v);
    return v;
  }
  if (reg.isModule(q)) {
    ModuleP sub = importModule(m->name + "." + name, nullptr, 0, r);
    return sub;
  }
  // A name of a modelled module that dkv does not model: opaque (an error only where it
  // decides something; a call inside a kernel or given a function is an error).
  V v = m->dict->get("__dkv_opaque__")
            ? opaque(fmt::format("`{}.{}` of the module `{}`, which dkv does not model (not "
                                 "found beside the file nor on --python-path)",
                                 m->name, name, m->name),
                     r)
            : opaque(fmt::format("{}, which dkv does not model",
                                 quoted(r, "`" + m->name + "." + name + "`")),
                     r);
  auto origin = std::make_shared<Origin>(*cast<OpaqueV>(v).origin);
  origin->settable = dotted;
  return std::make_shared<OpaqueV>(origin);
}

std::optional<std::pair<std::string, bool>> Interp::findOnDisk(const std::string &name) const {
  std::string rel;
  for (char c : name)
    rel += c == '.' ? '/' : c;
  std::error_code ec;
  for (const std::string &root : searchPath_) {
    fs::path base = (fs::path(root) / rel).lexically_normal();
    if (fs::is_regular_file(base / "__init__.py", ec))
      return std::make_pair((base / "__init__.py").string(), true);
    fs::path file = base;
    file += ".py";
    if (fs::is_regular_file(file, ec))
      return std::make_pair(file.string(), false);
    if (fs::is_directory(base, ec))
      return std::make_pair(base.string(), true); // a namespace package (no __init__.py)
  }
  return std::nullopt;
}

ModuleP Interp::loadFromDisk(const std::string &name, const std::string &path, bool package,
                             SourceRange r) {
  auto m = std::make_shared<ModuleV>(name);
  m->file = path;
  m->dict->set("__name__", string(name));
  m->dict->set("__file__", string(path));
  std::string pkg =
      package ? name : name.substr(0, name.rfind('.') == std::string::npos ? 0 : name.rfind('.'));
  m->dict->set("__package__", string(pkg));
  if (package)
    m->dict->set("__path__", list({string(path)}));
  noteModule(name, m);
  std::error_code ec;
  if (fs::is_directory(path, ec))
    return m; // a namespace package: no code
  if (!sources_)
    fail(r, "python-import",
         fmt::format("cannot read module '{}' ({}): no source manager", name, path));
  if (modules_.size() > kMaxModules)
    fail(r, "python-import",
         fmt::format("more than {} modules imported (a package this large is not a kernel's)",
                     kMaxModules));
  std::string error;
  std::optional<support::FileId> id = sources_->load(path, error);
  if (!id)
    fail(r, "python-import", fmt::format("cannot read module '{}' ({}): {}", name, path, error));
  support::DiagnosticEngine diags(sources_);
  std::unique_ptr<py::Module> parsed = pyfront::parseModule(sources_->file(*id), diags);
  if (!parsed || diags.hasErrors()) {
    // The module's own syntax error, at its position, with the import as a note.
    const support::Diagnostic &d = diags.diagnostics().front();
    TraceError err{d.range, d.id, d.message, {}, 0, {}};
    err.extra.emplace_back(r, fmt::format("in the module '{}', imported here", name));
    throw err;
  }
  auto table = std::make_unique<Symtable>(*parsed);
  moduleSymtable_[m.get()] = table.get();
  const py::Module &code = *parsed;
  symtables_[parsed.get()] = std::move(table);
  parsedModules_.push_back(std::move(parsed));
  if (callDepth_ + 1 > kMaxDepth)
    raiseId("RecursionError", "maximum recursion depth exceeded while importing", r);
  ++callDepth_;
  m->initializing = true;
  // `--set MODULE.NAME=VALUE` / `MODULE.f()=VALUE` for a module read from disk: its
  // global NAME is that value whatever the module assigns (as `# dkv: set` fixes a global
  // of the checked file), so its own functions see it too.
  auto pin = [&](const SetDirective &set) {
    if (set.name.size() <= name.size() + 1 || set.name.compare(0, name.size(), name) != 0 ||
        set.name[name.size()] != '.' || set.name.find('.', name.size() + 1) != std::string::npos)
      return;
    V v = directiveValue(set, m);
    m->dict->set(set.name.substr(name.size() + 1), v);
    pinned_.insert(set.name);
  };
  if (options_.directives)
    for (const auto &[key, set] : options_.directives->sets)
      pin(set);
  for (const SetDirective &set : options_.sets)
    pin(set);
  Frame f = moduleFrame(m);
  try {
    execBody(code.body, f);
  } catch (TraceError &e) {
    --callDepth_;
    e.notes.emplace_back(r, fmt::format("in the module '{}', imported here", name));
    throw;
  } catch (PyRaise &e) {
    --callDepth_;
    modules_.erase(name); // CPython removes a module whose import failed
    if (sysModules_)
      dictDel(sysModules_->table, string(name), r);
    e.notes.emplace_back(r, fmt::format("in the module '{}', imported here", name));
    throw;
  }
  --callDepth_;
  m->initializing = false;
  return m;
}

void Interp::noteModule(const std::string &name, const ModuleP &m) {
  modules_[name] = m;
  if (!sysModules_)
    sysModules_ = std::make_shared<DictV>();
  dictSet(sysModules_->table, string(name), m, SourceRange{});
}

V Interp::sysModules() {
  sysModulesRead_ = true;
  if (!sysModules_)
    sysModules_ = std::make_shared<DictV>();
  return sysModules_;
}

ModuleP Interp::loadedModule(const std::string &name, SourceRange r) {
  if (!sysModulesRead_) {
    auto it = modules_.find(name);
    return it == modules_.end() ? nullptr : it->second;
  }
  // Once the file has sys.modules, it is what CPython's import looks in first: an entry
  // the file added is imported, one it deleted is loaded again.
  V v = dictGet(sysModules_->table, string(name), r);
  if (!v) {
    modules_.erase(name);
    return nullptr;
  }
  if (isa<ModuleV>(v)) {
    auto m = std::static_pointer_cast<ModuleV>(v);
    modules_[name] = m;
    return m;
  }
  if (isa<NoneV>(v))
    raise("ModuleNotFoundError", fmt::format("import of {} halted; None in sys.modules", name), r);
  unsupported(r, fmt::format("importing '{}', which sys.modules maps to a {} (dkv imports "
                             "modules only)",
                             name, typeName(*v)));
}

ModuleP Interp::importModule(const std::string &rawName, const ModuleP &from, unsigned level,
                             SourceRange r) {
  std::string name = rawName;
  if (level > 0) {
    // A relative import: from the importing module's package.
    std::string pkg;
    if (from)
      if (auto *p = dynCast<StrV>(from->dict->get("__package__")))
        pkg = p->s;
    if (pkg.empty())
      raise("ImportError", "attempted relative import with no known parent package", r);
    for (unsigned l = 1; l < level; ++l) {
      size_t dot = pkg.rfind('.');
      if (dot == std::string::npos)
        raise("ImportError", "attempted relative import beyond top-level package", r);
      pkg = pkg.substr(0, dot);
    }
    name = rawName.empty() ? pkg : pkg + "." + rawName;
  }
  if (ModuleP loaded = loadedModule(name, r))
    return loaded;
  if (++importDepth_ > kMaxImportDepth) {
    --importDepth_;
    fail(r, "python-import",
         fmt::format("imports nest more than {} deep (importing '{}')", kMaxImportDepth, name));
  }
  struct Leave {
    int &d;
    ~Leave() { --d; }
  } leave{importDepth_};
  // Parents first: `import a.b.c` imports a, then a.b, then a.b.c.
  ModuleP parent;
  size_t dot = name.rfind('.');
  if (dot != std::string::npos)
    parent = importModule(name.substr(0, dot), nullptr, 0, r);
  if (ModuleP loaded = loadedModule(name, r))
    return loaded;
  ModuleP m;
  if (auto canon = Registry::get().module(name)) {
    m = modelledModule(*canon, name);
    noteModule(name, m);
  } else if (parent && (!parent->modelled || !Registry::get().module(parent->name)) &&
             parent->dict->get("__path__")) {
    // A submodule of a package read from disk: in the package's directory.
    std::string rel = name.substr(dot + 1);
    std::error_code ec;
    fs::path dir = cast<StrV>(cast<ListV>(parent->dict->get("__path__")).items[0]).s;
    if (!fs::is_directory(dir, ec))
      dir = dir.parent_path();
    fs::path pkgInit = dir / rel / "__init__.py", file = dir / (rel + ".py");
    if (fs::is_regular_file(pkgInit, ec))
      m = loadFromDisk(name, pkgInit.string(), true, r);
    else if (fs::is_regular_file(file, ec))
      m = loadFromDisk(name, file.string(), false, r);
    else if (fs::is_directory(dir / rel, ec))
      m = loadFromDisk(name, (dir / rel).string(), true, r);
  } else if (!parent || !parent->modelled || !parent->dict->get("__dkv_opaque__")) {
    // Not modelled: from disk, also a submodule of a modelled package that dkv does not
    // model (`jax.experimental.pallas.ops.tpu.all_gather` of a JAX checkout on
    // --python-path); found nowhere, it is opaque (below).
    if (auto found = findOnDisk(name))
      m = loadFromDisk(name, found->first, found->second, r);
  }
  if (!m) {
    // Not modelled and not found: an opaque module (absl.flags, an uninstalled package).
    m = std::make_shared<ModuleV>(name);
    m->modelled = true;
    m->dict->set("__name__", string(name));
    m->dict->set("__dkv_canonical__", string("<opaque>." + name));
    m->dict->set("__dkv_opaque__", boolean(true));
    noteModule(name, m);
  }
  if (parent)
    parent->dict->set(name.substr(dot + 1), m);
  return m;
}

void Interp::execImport(const py::Stmt &s, Frame &f) {
  if (s.kind == py::StmtKind::Import) {
    for (const py::Alias &a : py::cast<py::Import>(s).names) {
      ModuleP m = importModule(a.name, nullptr, 0, a.range);
      if (!a.asname.empty()) {
        bind(a.asname, m, f, a.range);
      } else {
        std::string top = a.name.substr(0, a.name.find('.'));
        bind(top, importModule(top, nullptr, 0, a.range), f, a.range);
      }
    }
    return;
  }
  const auto &imp = py::cast<py::ImportFrom>(s);
  ModuleP m = importModule(imp.module, f.globals, imp.level, s.range);
  for (const py::Alias &a : imp.names) {
    if (a.name == "*") {
      if (m->modelled)
        unsupported(a.range, fmt::format("`from {} import *` of a module dkv models (its names "
                                         "are not listed)",
                                         m->name));
      V all = m->dict->get("__all__");
      if (all) {
        for (const V &n : toVector(all, a.range))
          if (auto *ns = dynCast<StrV>(n))
            bind(ns->s, getAttr(m, ns->s, a.range), f, a.range);
      } else {
        for (const auto &[n, v] : std::vector<std::pair<std::string, V>>(m->dict->items))
          if (!n.empty() && n[0] != '_')
            bind(n, v, f, a.range);
      }
      continue;
    }
    std::string bound = a.asname.empty() ? a.name : a.asname;
    V v = m->dict->get(a.name);
    if (!v && !m->modelled && m->dict->get("__getattr__")) {
      // PEP 562: CPython asks the module's `__getattr__` before importing a submodule.
      try {
        v = moduleAttr(m, a.name, a.range);
      } catch (PyRaise &e) {
        if (!isSubclass(cast<InstanceV>(e.exc).cls, exceptionClass("AttributeError")))
          throw;
      }
    }
    if (!v && !m->modelled) {
      // A submodule not imported yet.
      std::string sub = m->name + "." + a.name;
      if (m->dict->get("__path__"))
        if (ModuleP sm = importModule(sub, nullptr, 0, a.range);
            sm && !sm->dict->get("__dkv_opaque__"))
          v = sm;
    }
    if (!v && m->modelled) {
      std::string opaqueFlag;
      if (m->dict->get("__dkv_opaque__"))
        v = opaque(fmt::format("`{}` of module `{}`, which dkv does not model (not found beside "
                               "the file nor on --python-path)",
                               a.name, m->name),
                   a.range);
      else if (Registry::get().isModule(cast<StrV>(m->dict->get("__dkv_canonical__")).s + "." +
                                        a.name) ||
               Registry::get().module(m->name + "." + a.name))
        v = importModule(m->name + "." + a.name, nullptr, 0, a.range);
      else
        try {
          v = moduleAttr(m, a.name, a.range);
        } catch (PyRaise &e) {
          // `from m import x` of a name m's `__getattr__` refuses: an ImportError.
          if (!isSubclass(cast<InstanceV>(e.exc).cls, exceptionClass("AttributeError")))
            throw;
        }
    }
    if (!v)
      raise("ImportError",
            fmt::format("cannot import name '{}' from '{}' ({})", a.name, m->name,
                        m->file.empty() ? "unknown location" : m->file),
            a.range);
    bind(bound, v, f, a.range);
  }
}

} // namespace dkv::pytrace
