// `pl.core_map` over a TensorCore mesh with the host refs its body closes over
// (`pl.run_state(f)(init)`, `jax.new_ref(x)` / `jax.freeze(ref)`): the rows and the call
// that traces the body into a kernel over `tensorcore_mesh` (docs/python.md
// "TensorCores", docs/model.md "TensorCores").
//
// JAX's `core_map(mesh, **params)(f)` (jax/_src/pallas/core.py) traces `f()` to a jaxpr
// whose constants are the refs it closes over, and runs it once on every core of every
// device with those refs as its operands; `f` takes nothing and returns nothing. So the
// kernel's parameters are exactly the refs the body's free variables hold: each is an
// `inout` buffer in HBM (`any`, shared by the cores of a device), named after the variable,
// in the order the refs were made. A ref that reaches a kernel any other way (a container,
// a global, an argument, a pallas_call kernel that closes over it) is refused where it is
// used, as is a read or write of one outside a kernel.
#include "pytrace/Interp.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <string_view>

namespace dkv::pytrace {

namespace {

bool given(const V &v) { return v && v->kind != Kind::None; }

/// Whether `v` holds a host ref somewhere in its tuples and lists (looking at no more
/// than `budget` values, so that a cyclic or huge container ends the search).
bool holdsStateRef(const V &v, int &budget) {
  if (!v || --budget < 0)
    return false;
  if (apiAs<StateRefObj>(v))
    return true;
  const std::vector<V> *items = nullptr;
  if (auto *t = dynCast<TupleV>(v))
    items = &t->items;
  else if (auto *l = dynCast<ListV>(v))
    items = &l->items;
  if (items)
    for (const V &x : *items)
      if (holdsStateRef(x, budget))
        return true;
  return false;
}

// `pl.core_map(mesh, ...)` returns this decorator: called on the body, it runs the kernel.
const BuiltinFn kCoreMapApply{
    "pl.core_map(...)",
    +[](Interp &in, CallCtx &c) -> V {
      // pos: the mesh and compiler_params core_map was given, then the body.
      if (c.args.pos.size() != 3 || !c.args.kw.empty())
        in.raiseId("TypeError", "pl.core_map(...) takes the function to run (1 argument)", c.range);
      return in.callCoreMap(c.args.pos[0], c.args.pos[2], c.args.pos[1], c.range);
    },
    "", false};

// `pl.run_state(f)` returns this callable: called on the initial values, it runs `f` on
// refs of them and returns their final values.
const BuiltinFn kRunStateCall{
    "pl.run_state(...)",
    +[](Interp &in, CallCtx &c) -> V {
      if (c.args.pos.size() != 2 || !c.args.kw.empty())
        in.raiseId("TypeError", "the function pl.run_state returns takes 1 positional argument",
                   c.range);
      return in.callRunState(c.args.pos[0], c.args.pos[1], c.range);
    },
    "", false};

} // namespace

[[noreturn]] void Interp::stateRefMisused(const V &ref, SourceRange r, std::string_view what) {
  const auto *s = apiAs<StateRefObj>(ref);
  const std::string maker = s ? s->maker : "pl.run_state or jax.new_ref";
  if (inKernel_)
    unsupported(r, fmt::format("{} is a ref made by {} that reaches this kernel other than as a "
                               "variable of a pl.core_map body: dkv models such a ref only as "
                               "an operand of the pl.core_map kernel whose body (or a function "
                               "nested in it) names it; a pallas_call or pl.kernel kernel that "
                               "closes over it, or a ref reached through a container, a global "
                               "or an argument, is not traced (docs/python.md \"TensorCores\")",
                               what, maker));
  unsupported(r, fmt::format("{} is a ref made by {}, used outside a kernel: dkv models such a "
                             "ref only as an operand of a pl.core_map kernel whose body closes "
                             "over it (its value after the kernel is jax.freeze(ref), or what "
                             "pl.run_state returns; docs/python.md \"TensorCores\")",
                             what, maker));
}

V Interp::callRunState(const V &f, const V &init, SourceRange r) {
  std::vector<V> made;
  // The refs, in the pytree structure of `init` (tuples, lists, None), one per array.
  std::function<V(const V &, int)> refs = [&](const V &v, int depth) -> V {
    if (depth > 64)
      unsupported(r, "pl.run_state over a pytree nested more than 64 deep");
    switch (v->kind) {
    case Kind::None:
      return v;
    case Kind::Tuple:
    case Kind::List: {
      std::vector<V> items;
      for (const V &x : toVector(v, r))
        items.push_back(refs(x, depth + 1));
      return v->kind == Kind::Tuple ? tuple(std::move(items)) : list(std::move(items));
    }
    case Kind::HostArray: {
      V ref = makeApi(StateRefObj{v, ++stateRefSerial_, "pl.run_state"});
      made.push_back(ref);
      return ref;
    }
    case Kind::Opaque:
      opaqueNeeded(v, r, "an initial value of pl.run_state");
    default:
      unsupported(r, fmt::format("pl.run_state over a {} (dkv makes refs of arrays, in tuples "
                                 "and lists)",
                                 typeName(*v)));
    }
  };
  V tree = refs(init, 0);
  call(f, Args{{tree}, {}}, r);
  for (const V &ref : made)
    apiAs<StateRefObj>(ref)->live = false;
  // The final values: a new array per ref, of its shape and element type (its data is
  // what the kernels wrote, which dkv does not compute).
  size_t next = 0;
  std::function<V(const V &)> finals = [&](const V &v) -> V {
    switch (v->kind) {
    case Kind::Tuple:
    case Kind::List: {
      std::vector<V> items;
      for (const V &x : toVector(v, r))
        items.push_back(finals(x));
      return v->kind == Kind::Tuple ? tuple(std::move(items)) : list(std::move(items));
    }
    case Kind::None:
      return v;
    default: {
      const auto &a = cast<HostArrayV>(apiAs<StateRefObj>(made[next++])->array);
      return std::make_shared<HostArrayV>(a.shape, a.dtype);
    }
    }
  };
  return finals(init);
}

V Interp::callCoreMap(const V &mesh, const V &body, const V &cp, SourceRange r) {
  if (mesh->kind == Kind::Opaque)
    opaqueNeeded(mesh, r, "the mesh of pl.core_map");
  if (!apiAs<TcMeshObj>(mesh))
    unsupported(r, fmt::format("pl.core_map over {}: dkv traces pl.core_map over a TensorCore "
                               "mesh (pltpu.TensorCoreMesh, pltpu.create_tensorcore_mesh) or a "
                               "SparseCore plsc.ScalarSubcoreMesh",
                               typeName(*mesh)));
  // Outside a shard_map the kernel runs on one device (its cores), as a pallas_call.
  OneDeviceScope one(*this);
  if (inKernel_)
    unsupported(r, "a pl.core_map inside a kernel");
  KernelFn kfn = kernelFunction(body, r, "pl.core_map");
  const FunctionV &kf = *kfn.fn;
  const CompilerParams cparams = compilerParams(given(cp) ? cp : nullptr, r);
  if (entryMode_ || !traceKernels_)
    return none();

  std::vector<std::unique_ptr<ast::BufferDecl>> bufs;
  ClosedRefs closed = takeClosedRefs(kf, r, bufs, "the pl.core_map body", false);
  auto restore = [&] {
    closed.restore();
    tcMesh_ = nullptr;
  };
  // The kernel is named after the body unless that is `_` or a lambda.
  auto named = track(std::make_shared<FunctionV>());
  static const std::set<std::string_view> kAnonymous{"_", "<lambda>"};
  named->name = kAnonymous.count(kf.name) ? std::string("core_map") : kf.name;
  named->qualname = kf.qualname;
  named->range = kf.range;
  named->params = kf.params;
  named->body = kf.body;
  named->lambda = kf.lambda;
  named->scope = kf.scope;
  named->globals = kf.globals;
  named->closure = kf.closure;
  named->defaults = kf.defaults;
  named->definingClass = kf.definingClass;
  named->attrs = kf.attrs;
  grid_.clear();
  hasCollective_ = cparams.collective >= 0;
  tcMesh_ = mesh;
  beginKernel();
  try {
    finishKernel(*named, r, std::move(bufs), {}, kfn.bound, cparams.collective,
                 cparams.skipBarrier);
  } catch (...) {
    restore();
    throw;
  }
  restore();
  closed.used(false);
  return none();
}

void Interp::ClosedRefs::restore() {
  for (auto &[cell, old] : swapped)
    cell->value = old;
  swapped.clear();
}

void Interp::ClosedRefs::used(bool inSequence) {
  for (const V &h : hostRefs)
    ++(inSequence ? apiAs<StateRefObj>(h)->sequenceUses : apiAs<StateRefObj>(h)->kernels);
}

Interp::ClosedRefs Interp::takeClosedRefs(const FunctionV &kf, SourceRange r,
                                          std::vector<std::unique_ptr<ast::BufferDecl>> &bufs,
                                          std::string_view what, bool inSequence) {
  // The refs the function closes over, each one buffer, in the order they were made.
  ClosedRefs out;
  std::vector<std::string> names;
  for (const auto &[name, cell] : kf.closure) {
    if (!cell->value)
      continue;
    if (auto *s = apiAs<StateRefObj>(cell->value)) {
      if (std::find(out.hostRefs.begin(), out.hostRefs.end(), cell->value) != out.hostRefs.end())
        continue;
      if (!s->live)
        unsupported(r, fmt::format("{} closes over `{}`, a ref of a pl.run_state that has "
                                   "returned",
                                   what, name));
      if (s->kernels > 0 || (!inSequence && s->sequenceUses > 0))
        unsupported(r, fmt::format("{} closes over `{}`, a ref that an earlier kernel took: "
                                   "dkv checks each kernel as an instance of its own (unless "
                                   "semaphores they pass make them one sequence), and the "
                                   "devices are not in step between kernels, so a race "
                                   "between the two kernels on this ref would be missed",
                                   what, name));
      out.hostRefs.push_back(cell->value);
      names.push_back(name);
    } else if (int budget = 4096; holdsStateRef(cell->value, budget)) {
      unsupported(r, fmt::format("{} closes over `{}`, a container of refs made by "
                                 "pl.run_state or jax.new_ref: bind each ref to a name outside "
                                 "it (`x_ref, y_ref = refs`)",
                                 what, name));
    }
  }
  std::vector<size_t> order(out.hostRefs.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return apiAs<StateRefObj>(out.hostRefs[a])->serial <
           apiAs<StateRefObj>(out.hostRefs[b])->serial;
  });
  std::vector<V> sorted;
  std::vector<V> refs;
  for (size_t i : order) {
    const auto &arr = cast<HostArrayV>(apiAs<StateRefObj>(out.hostRefs[i])->array);
    refs.push_back(
        paramBuffer(arr, fresh(names[i]), r, ast::Direction::InOut, ast::MemSpace::Any, bufs));
    out.decls.push_back(bufs.back().get());
    sorted.push_back(out.hostRefs[i]);
  }
  out.hostRefs = std::move(sorted);
  // The function (and the functions nested in it, which share its cells) sees the
  // kernel's refs while it is traced; restore() gives the cells their host refs back.
  for (const auto &[name, cell] : kf.closure)
    for (size_t i = 0; i < out.hostRefs.size(); ++i)
      if (cell->value == out.hostRefs[i]) {
        out.swapped.emplace_back(cell, cell->value);
        cell->value = refs[i];
      }
  return out;
}

void registerCoreMap(Registry &reg) {
  reg.addRow(ApiRow{
      {"jax.experimental.pallas.core_map"},
      BuiltinFn{"pl.core_map",
                +[](Interp &in, CallCtx &c) -> V {
                  std::vector<V> a = c.bind(in, {"mesh", "*", "compiler_params", "interpret",
                                                 "debug", "cost_estimate", "name", "metadata"});
                  if (!a[0])
                    in.raiseId("TypeError",
                               "core_map() missing 1 required positional argument: 'mesh'",
                               c.range);
                  auto p = std::make_shared<PartialV>();
                  p->fn = builtinValue(kCoreMapApply);
                  p->pos = {a[0], a[1] ? a[1] : none()};
                  return p;
                },
                "a kernel over tensorcore_mesh", false},
      nullptr});
  reg.addRow(ApiRow{{"jax.experimental.pallas.run_state", "jax._src.state.discharge.run_state"},
                    BuiltinFn{"pl.run_state",
                              +[](Interp &in, CallCtx &c) -> V {
                                std::vector<V> a = c.bind(in, {"f"});
                                if (!a[0])
                                  in.raiseId("TypeError",
                                             "run_state() missing 1 required positional "
                                             "argument: 'f'",
                                             c.range);
                                auto p = std::make_shared<PartialV>();
                                p->fn = builtinValue(kRunStateCall);
                                p->pos = {a[0]};
                                return p;
                              },
                              "the inout buffers of the kernels it runs", false},
                    nullptr});
  reg.addRow(ApiRow{
      {"jax.new_ref", "jax.ref.new_ref"},
      BuiltinFn{"jax.new_ref",
                +[](Interp &in, CallCtx &c) -> V {
                  std::vector<V> a = c.bind(in, {"init_val", "*", "memory_space", "kind"});
                  if (!a[0])
                    in.raiseId("TypeError",
                               "new_ref() missing 1 required positional argument: 'init_val'",
                               c.range);
                  if (given(a[1]) || given(a[2]))
                    unsupported(c.range, "jax.new_ref with a memory_space or kind: dkv makes "
                                         "refs in the device's HBM");
                  if (a[0]->kind == Kind::Opaque)
                    in.opaqueNeeded(a[0], c.range, "the initial value of jax.new_ref");
                  if (!dynCast<HostArrayV>(a[0]))
                    unsupported(c.range, fmt::format("jax.new_ref of a {} (dkv makes refs of "
                                                     "arrays)",
                                                     typeName(*a[0])));
                  return makeApi(StateRefObj{a[0], ++in.stateRefSerial_, "jax.new_ref"});
                },
                "an inout buffer of the kernels that take it", false},
      nullptr});
  reg.addRow(ApiRow{
      {"jax.freeze", "jax.ref.freeze"},
      BuiltinFn{"jax.freeze",
                +[](Interp &in, CallCtx &c) -> V {
                  std::vector<V> a = c.bind(in, {"ref"});
                  if (!a[0])
                    in.raiseId("TypeError",
                               "freeze() missing 1 required positional argument: 'ref'", c.range);
                  auto *s = apiAs<StateRefObj>(a[0]);
                  if (!s)
                    unsupported(c.range, fmt::format("jax.freeze of a {} (dkv knows the refs of "
                                                     "jax.new_ref)",
                                                     typeName(*a[0])));
                  // Its value now: an array of its shape and element type.
                  const auto &arr = cast<HostArrayV>(s->array);
                  return std::make_shared<HostArrayV>(arr.shape, arr.dtype);
                },
                "", false},
      nullptr});
}

} // namespace dkv::pytrace
