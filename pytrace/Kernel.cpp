// Tracing a kernel: shard_map's division of operands, pallas_call's and pl.kernel's
// operands, outputs and scratch as the kernel's parameters, the kernel function run once
// with them (its statements emitted as the kernel language's), and the `# dkv: entry`
// directive that stands for a call site (docs/python.md "Tracing", "Directives").
#include "pytrace/Interp.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>
#include <set>

namespace dkv::pytrace {

Interp::KernelFn Interp::kernelFunction(const V &k, SourceRange r, std::string_view api) {
  KernelFn out;
  V fn = k;
  // functools.partial(kernel, axis_name=..., mesh=...): the bound arguments go with the
  // refs; jax.jit and jax.named_call wrap the function they call (in any nesting).
  for (;;) {
    if (auto *p = dynCast<PartialV>(fn)) {
      out.bound.pos.insert(out.bound.pos.begin(), p->pos.begin(), p->pos.end());
      for (const auto &kv : p->kw)
        out.bound.kw.push_back(kv);
      fn = p->fn;
    } else if (auto *j = apiAs<JitObj>(fn)) {
      fn = j->fn;
    } else {
      break;
    }
  }
  out.fn = dynCast<FunctionV>(fn);
  if (!out.fn) {
    if (fn->kind == Kind::Opaque)
      opaqueNeeded(fn, r, fmt::format("the kernel function of {}", api));
    unsupported(
        r, fmt::format("a {} kernel that is not a Python function (got {})", api, typeName(*fn)));
  }
  return out;
}

V Interp::callShardMap(const ShardMapObj &sm, Args args, SourceRange r) {
  // Without mesh=, the mesh jax.set_mesh set (JAX reads it when the function is traced).
  V meshV = sm.mesh && sm.mesh->kind != Kind::None ? sm.mesh : contextMesh_;
  auto *mesh = apiAs<MeshObj>(meshV);
  if (!mesh) {
    if (meshV && meshV->kind == Kind::Opaque)
      opaqueNeeded(meshV, r, "the mesh of shard_map");
    fail(r, "python-unknown-fact",
         "shard_map: the mesh is unknown (give mesh=jax.sharding.Mesh(...) or jax.make_mesh(...) "
         "built in this file, or call jax.set_mesh(mesh) before it)");
  }
  // Without in_specs (JAX's default, `jax.sharding.Infer`), shard_map takes each
  // argument's in_spec from its sharding, which it requires every mesh axis to be
  // Explicit for (jax/_src/shard_map.py, `_shmap_checks` raises the TypeError below):
  // dkv knows it where the file states it (docs/python.md "shard_map without in_specs").
  const bool infer = !sm.inSpecs;
  if (infer && !mesh->explicitAxes()) {
    if (mesh->axisTypes.empty())
      fail(r, "python-unknown-fact",
           "shard_map without in_specs takes them from the arguments' shardings (jax.sharding."
           "Infer), which JAX does only when every mesh axis is Explicit: dkv does not know the "
           "axis types of this mesh; give in_specs=");
    // JAX names the axes as a frozenset (one axis: `frozenset({'x'})`; several are in
    // the set's hash order, which dkv does not reproduce: here in the mesh's order).
    std::string names, types;
    for (size_t i = 0; i < mesh->names.size(); ++i) {
      names += fmt::format("{}'{}'", i ? ", " : "", mesh->names[i]);
      types += fmt::format("{}AxisType.{}", i ? ", " : "", axisKindName(mesh->axisTypes[i]));
    }
    raiseId("TypeError",
            fmt::format("shard_map in_specs argument must be a pytree of "
                        "`jax.sharding.PartitionSpec` instances, but it was `None` when "
                        "axis_names=frozenset({{{}}}) are of type {}",
                        names, types),
            r);
  }
  if (!args.kw.empty())
    unsupported(r, "keyword arguments to a shard_map'ed function");
  std::vector<V> local;
  for (size_t i = 0; i < args.pos.size(); ++i) {
    V arr = args.pos[i];
    if (arr->kind == Kind::None) {
      local.push_back(arr); // an empty pytree (an optional operand not given): no leaves
      continue;
    }
    if (infer) {
      auto *h = dynCast<HostArrayV>(arr);
      if (arr->kind == Kind::Opaque)
        opaqueNeeded(arr, r,
                     fmt::format("shard_map argument {} (without in_specs, its sharding is its "
                                 "in_spec)",
                                 i + 1));
      if (!h || !h->sharding)
        fail(r, "python-unknown-fact",
             fmt::format("shard_map without in_specs takes argument {}'s in_spec from its "
                         "sharding, which dkv knows only for an array made with "
                         "out_sharding=P(...) (jnp.arange) or by jax.device_put(x, "
                         "NamedSharding(mesh, P(...))); give in_specs=",
                         i + 1));
    }
    if (arr->kind == Kind::List || arr->kind == Kind::Tuple)
      arr = knownArray(arr, nullptr, r); // a Python list of ints: a table's values
    auto *a = dynCast<HostArrayV>(arr);
    if (!a) {
      if (arr->kind == Kind::Opaque)
        opaqueNeeded(arr, r, fmt::format("shard_map argument {} (its shape and dtype)", i + 1));
      fail(r, "python-unknown-fact",
           fmt::format("shard_map argument {}: its shape and dtype are unknown (got {}); pass an "
                       "array made in this file (jax.random.uniform, jnp.zeros, ...)",
                       i + 1, typeName(*arr)));
    }
    V spec = infer ? cast<HostArrayV>(arr).sharding : sm.inSpecs;
    if (!infer && (sm.inSpecs->kind == Kind::Tuple || sm.inSpecs->kind == Kind::List)) {
      std::vector<V> specs = toVector(sm.inSpecs, r);
      if (i >= specs.size())
        fail(r, "python-call", "shard_map: fewer in_specs than arguments");
      spec = specs[i];
    }
    // `None` as an in_spec is P(): the argument is replicated (JAX's shard_map).
    static const PSpecObj replicated{};
    const PSpecObj *ps = spec->kind == Kind::None ? &replicated : apiAs<PSpecObj>(spec);
    if (!ps)
      fail(r, "python-unknown-fact", "shard_map: an in_spec is not a PartitionSpec");
    std::vector<int64_t> shape = a->shape;
    if (ps->entries.size() > shape.size())
      fail(r, "python-call", "shard_map: the PartitionSpec has more entries than the array dims");
    for (size_t d = 0; d < ps->entries.size(); ++d) {
      const V &entry = ps->entries[d];
      if (entry->kind == Kind::None)
        continue;
      std::vector<V> axes = entry->kind == Kind::Str ? std::vector<V>{entry} : toVector(entry, r);
      for (const V &ax : axes) {
        auto *axName = dynCast<StrV>(ax);
        if (!axName)
          fail(r, "python-type", "a PartitionSpec entry names mesh axes");
        int64_t size = -1;
        for (size_t j = 0; j < mesh->names.size(); ++j)
          if (mesh->names[j] == axName->s)
            size = mesh->sizes[j];
        if (size < 0)
          fail(r, "python-call", fmt::format("shard_map: '{}' is not a mesh axis", axName->s));
        if (shape[d] % size != 0)
          fail(r, "python-call",
               fmt::format("shard_map: dimension {} of size {} does not divide over axis '{}' of "
                           "size {}",
                           d, shape[d], axName->s, size));
        shape[d] /= size;
      }
    }
    auto l = std::make_shared<HostArrayV>(shape, a->dtype, a->isStruct);
    shardContents(*a, *l, *ps, *mesh, r);
    local.push_back(l);
  }
  V saved = mesh_;
  mesh_ = meshV;
  BodyKernels kernels;
  BodyKernels *outer = body_;
  body_ = &kernels;
  V out;
  try {
    out = call(sm.f, Args{local, {}}, r);
  } catch (...) {
    mesh_ = saved;
    body_ = outer;
    throw;
  }
  body_ = outer;
  // The body's kernels linked by semaphores: a sequence each (traced on the body's mesh).
  if (!kernels.pending.empty()) {
    try {
      sequences(kernels, r);
    } catch (...) {
      mesh_ = saved;
      throw;
    }
  }
  mesh_ = saved;
  // The result outside: each per-device output concatenated along the dimensions its
  // out_spec names (their shapes; the data is not computed).
  auto global = [&](const V &v, const V &spec) -> V {
    auto *a = dynCast<HostArrayV>(v);
    auto *ps = spec ? apiAs<PSpecObj>(spec) : nullptr;
    if (!a || !ps || ps->entries.size() > a->shape.size())
      return opaque("the result of a shard_map'ed function (dkv knows its per-device shape)", r);
    std::vector<int64_t> shape = a->shape;
    for (size_t d = 0; d < ps->entries.size(); ++d) {
      const V &entry = ps->entries[d];
      if (entry->kind == Kind::None)
        continue;
      for (const V &ax : entry->kind == Kind::Str ? std::vector<V>{entry} : toVector(entry, r)) {
        auto *name = dynCast<StrV>(ax);
        if (!name)
          return opaque("the result of a shard_map'ed function", r);
        for (size_t j = 0; j < mesh->names.size(); ++j)
          if (mesh->names[j] == name->s)
            shape[d] *= mesh->sizes[j];
      }
    }
    return std::make_shared<HostArrayV>(shape, a->dtype);
  };
  if (out->kind == Kind::Tuple || out->kind == Kind::List) {
    std::vector<V> items = toVector(out, r);
    std::vector<V> specs;
    if (sm.outSpecs && (sm.outSpecs->kind == Kind::Tuple || sm.outSpecs->kind == Kind::List))
      specs = toVector(sm.outSpecs, r);
    std::vector<V> res;
    for (size_t i = 0; i < items.size(); ++i)
      res.push_back(global(items[i], i < specs.size() ? specs[i] : sm.outSpecs));
    return out->kind == Kind::Tuple ? tuple(std::move(res)) : list(std::move(res));
  }
  return global(out, sm.outSpecs);
}

namespace {

const char *const kDictOutShape =
    "a pallas_call out_shape holding a dict (a pytree of outputs that JAX flattens in the "
    "order of its sorted keys, which out_specs and input_output_aliases count in); dkv takes "
    "arrays and semaphore arrays, and tuples and lists of them";

// The leaves of a pytree of specs (tuples, lists and dicts of scratch types).
void leaves(Interp &in, const V &v, std::vector<V> &out, SourceRange r) {
  if (v->kind == Kind::Tuple || v->kind == Kind::List) {
    for (const V &x : in.toVector(v, r))
      leaves(in, x, out, r);
    return;
  }
  if (auto *d = dynCast<DictV>(v)) {
    for (const Table::Entry &e : d->table.entries)
      if (e.live)
        leaves(in, e.value, out, r);
    return;
  }
  out.push_back(v);
}

} // namespace

OneDeviceScope::OneDeviceScope(Interp &in)
    : in_(in), saved_(in.mesh_), was_(in.singleDevice_), active_(!in.mesh_) {
  if (!active_)
    return;
  in_.mesh_ = makeApi(MeshObj{});
  in_.singleDevice_ = true;
}

OneDeviceScope::~OneDeviceScope() {
  if (!active_)
    return;
  in_.mesh_ = saved_;
  in_.singleDevice_ = was_;
}

void Interp::betweenCalls(SourceRange r, SourceRange before) {
  unsupported(r, fmt::format("a pallas_call that passes no semaphore, among the calls of a "
                             "kernel sequence (after its call at line {}, while a semaphore it "
                             "returned is still to be handed on): a DMA that semaphore counts "
                             "may be in flight while this call runs, and dkv checks a kernel "
                             "sequence without the calls between its calls",
                             before.begin.line));
}

V Interp::callJit(const JitObj &j, Args args, SourceRange r) {
  // A Python int or float argument of a jitted function is traced, as a weakly typed
  // 0-d array (int32, float32): `i[None]` is an array of one element, not a TypeError.
  if (!j.named && !j.staticArgs && !inKernel_) {
    auto traced = [&](V &v) {
      if (v->kind == Kind::Int) {
        auto a = std::make_shared<HostArrayV>(std::vector<int64_t>{}, ast::DType::I32);
        a->contents = std::vector<int64_t>{cast<IntV>(v).i};
        v = a;
      } else if (v->kind == Kind::Float) {
        v = std::make_shared<HostArrayV>(std::vector<int64_t>{}, ast::DType::F32);
      }
    };
    for (V &v : args.pos)
      traced(v);
    for (auto &kw : args.kw)
      traced(kw.second);
  }
  if (j.named || mesh_ || body_ || inKernel_)
    return call(j.fn, std::move(args), r);
  BodyKernels kernels;
  body_ = &kernels;
  V out;
  try {
    out = call(j.fn, std::move(args), r);
  } catch (...) {
    body_ = nullptr;
    throw;
  }
  body_ = nullptr;
  if (!kernels.pending.empty()) {
    OneDeviceScope one(*this);
    sequences(kernels, r);
  }
  return out;
}

V Interp::callPallas(const PallasCallObj &pc, Args args, SourceRange r) {
  // Outside a shard_map the call runs on one device (jax.jit, or eagerly).
  OneDeviceScope one(*this);
  if (inKernel_)
    unsupported(r, "a pallas_call inside a kernel");
  KernelFn kfn = kernelFunction(pc.kernel, r, "pallas_call");
  const FunctionV &kf = *kfn.fn;
  auto given = [](const V &v) { return v && v->kind != Kind::None ? v : nullptr; };
  GridSpecObj *gridSpec = nullptr;
  if (given(pc.gridSpec)) {
    gridSpec = apiAs<GridSpecObj>(pc.gridSpec);
    if (!gridSpec)
      fail(r, "python-type", "grid_spec must be a pltpu.PrefetchScalarGridSpec or pl.GridSpec");
  }
  auto field = [&](V GridSpecObj::*gs, const V &direct) -> V {
    if (gridSpec && given(gridSpec->*gs))
      return gridSpec->*gs;
    return given(direct);
  };
  std::vector<int64_t> grid;
  if (V g = field(&GridSpecObj::grid, pc.grid))
    grid = shapeOf(g, r, "the grid");
  const CompilerParams cparams = compilerParams(given(pc.compilerParams), r);
  checkParallelGrid(given(pc.compilerParams), grid, r);
  // Outputs.
  std::vector<V> outs;
  V outShape = pc.outShape;
  bool outTuple = outShape->kind == Kind::Tuple || outShape->kind == Kind::List;
  // The results: a new array per output, of its out_shape's shape and element type (its
  // data is what the kernel writes, which dkv does not compute), and a semaphore array
  // per semaphore output (`pltpu.SemaphoreType.REGULAR(())`), each the caller's.
  std::vector<V> results;
  // An out_shape typed by its memory space (`pltpu.ANY(shape, dtype)`, `pltpu.VMEM(...)`):
  // an output in that memory unless its out_specs entry names another.
  std::map<size_t, ast::MemSpace> outSpace;
  // A top-level output that is a tuple or list of them (`(pltpu.SemaphoreType.DMA(()),) * 2`,
  // JAX's tests) is a pytree: its leaves are outputs in order (tree_flatten), the kernel
  // gets one argument per top-level output holding its leaves' refs in that shape, and the
  // result has that shape too. A dict would be flattened in its keys' sorted order, which
  // input_output_aliases and out_specs then count in: refused.
  std::vector<V> tops = outTuple ? toVector(outShape, r) : std::vector<V>{outShape};
  std::vector<size_t> groupSize; // leaves of each top-level output (0: one plain output)
  std::vector<V> flatOuts;
  for (const V &t : tops) {
    if (outTuple && (t->kind == Kind::Tuple || t->kind == Kind::List)) {
      // Tuples and lists only: a dict inside stays a leaf, refused below.
      std::vector<V> parts;
      std::function<void(const V &)> flatten = [&](const V &v) {
        if (v->kind != Kind::Tuple && v->kind != Kind::List)
          return parts.push_back(v);
        for (const V &x : toVector(v, r))
          flatten(x);
      };
      flatten(t);
      if (parts.empty())
        unsupported(r, "a pallas_call out_shape that nests an empty tuple or list (an output "
                       "of no arrays)");
      groupSize.push_back(parts.size());
      flatOuts.insert(flatOuts.end(), parts.begin(), parts.end());
    } else {
      groupSize.push_back(0);
      flatOuts.push_back(t);
    }
  }
  for (V o : flatOuts) {
    if (auto *sc = apiAs<ScratchObj>(o)) {
      outSpace[outs.size()] = sc->space;
      o = std::make_shared<HostArrayV>(shapeOf(sc->shape, r, "an out_shape's shape"),
                                       dtypeArg(sc->dtype, r), true);
    }
    if (auto *st = apiAs<SemTypeObj>(o); st && st->kind == ast::SemKind::Barrier)
      barrierScratch(r);
    if (auto *sa = apiAs<SemArrayObj>(o)) {
      if (sa->kind == ast::SemKind::Barrier)
        barrierScratch(r);
      outs.push_back(o);
      results.push_back(
          makeApi(HeldSemObj{sa->kind, shapeOf(sa->shape, r, "a semaphore output's shape")}));
      continue;
    }
    auto *a = dynCast<HostArrayV>(o);
    if (!a) {
      if (o->kind == Kind::Opaque)
        opaqueNeeded(o, r, "a pallas_call out_shape");
      if (o->kind == Kind::Dict)
        unsupported(r, kDictOutShape);
      fail(r, "python-unknown-fact",
           fmt::format("pallas_call out_shape: expected jax.ShapeDtypeStruct, an array or "
                       "pltpu.SemaphoreType.REGULAR / DMA(shape), got {}",
                       typeName(*o)));
    }
    outs.push_back(o);
    results.push_back(std::make_shared<HostArrayV>(a->shape, a->dtype));
  }
  // The results in the out_shape's shape (a nested tuple or list rebuilt around them).
  // `shape` (nested tuples and lists) with the values of `flat` from `next` at its leaves.
  std::function<V(const V &, const std::vector<V> &, size_t &)> rebuildTree =
      [&](const V &shape, const std::vector<V> &flat, size_t &next) -> V {
    if (shape->kind != Kind::Tuple && shape->kind != Kind::List)
      return flat[next++];
    std::vector<V> items;
    for (const V &x : toVector(shape, r))
      items.push_back(rebuildTree(x, flat, next));
    return shape->kind == Kind::Tuple ? tuple(std::move(items)) : list(std::move(items));
  };
  auto rebuildGroup = [&](size_t g, const std::vector<V> &flat, size_t &next) -> V {
    return groupSize[g] ? rebuildTree(tops[g], flat, next) : flat[next++];
  };
  auto regroup = [&](const std::vector<V> &flat) -> std::vector<V> {
    std::vector<V> grouped;
    size_t next = 0;
    for (size_t g = 0; g < tops.size(); ++g)
      grouped.push_back(rebuildGroup(g, flat, next));
    return grouped;
  };
  auto result = [&]() -> V {
    std::vector<V> grouped = regroup(results);
    // A list at the top is made a tuple (pallas_call canonicalizes it), nested ones stay.
    return outTuple ? tuple(std::move(grouped)) : grouped[0];
  };
  // With an entry directive, the directive's facts replace the call site's: the call is
  // evaluated (its arguments must still be supported) but not traced; likewise for a
  // pallas_call that is not the instance being traced.
  if (entryMode_ || !traceKernels_)
    return result();
  auto specs = [&](V GridSpecObj::*gs, const V &direct, size_t n, const char *what) {
    std::vector<V> out(n, nullptr);
    V s = field(gs, direct);
    if (!s)
      return out;
    if (s->kind == Kind::Tuple || s->kind == Kind::List) {
      std::vector<V> items = toVector(s, r);
      if (items.size() != n)
        fail(r, "python-call",
             fmt::format("pallas_call {}: {} specs for {} operands", what, items.size(), n));
      return items;
    }
    return std::vector<V>(n, s);
  };
  // Scalar prefetch: the first num_scalar_prefetch operands are SMEM tables, before the
  // operands that in_specs describe.
  size_t prefetch = gridSpec ? static_cast<size_t>(gridSpec->numScalarPrefetch) : 0;
  if (prefetch > args.pos.size())
    fail(r, "python-call",
         fmt::format("pallas_call: num_scalar_prefetch={} but only {} operands are passed",
                     prefetch, args.pos.size()));
  for (size_t i = 0; i < args.pos.size(); ++i) {
    V &a = args.pos[i];
    if (a->kind == Kind::Dict)
      unsupported(r, fmt::format("pallas_call operand {}: a dict of arrays (a pytree of "
                                 "operands, passed to the kernel as a pytree of refs); dkv "
                                 "takes one array per operand",
                                 i + 1));
    if (a->kind != Kind::List && a->kind != Kind::Tuple)
      continue;
    // A (nested) Python list of numbers is a table's values; a tuple or list holding an
    // array is a pytree of operands, which dkv does not take apart.
    std::function<const Value *(const V &)> nonNumber = [&](const V &v) -> const Value * {
      if (v->kind == Kind::List || v->kind == Kind::Tuple) {
        for (const V &e : toVector(v, r))
          if (const Value *bad = nonNumber(e))
            return bad;
        return nullptr;
      }
      bool number = v->kind == Kind::Int || v->kind == Kind::Bool || v->kind == Kind::Float;
      return number ? nullptr : v.get();
    };
    if (nonNumber(a))
      continue; // a pytree of operands (below) or a refusal
    a = knownArray(a, nullptr, r);
  }
  // A tuple or list of arrays and semaphore arrays is a pytree of operands: its leaves are
  // operands in order (tree_flatten; input_output_aliases counts them), and the kernel
  // gets one argument holding their refs in its shape. A dict would be flattened in its
  // sorted keys' order, None leaves would vanish: both refused, as is a pytree among the
  // scalar-prefetch operands.
  std::vector<V> inTops = args.pos;
  std::vector<size_t> inGroup(inTops.size(), 0); // leaves of each operand (0: plain)
  {
    std::vector<V> flat;
    for (size_t i = 0; i < inTops.size(); ++i) {
      const V &a = inTops[i];
      if (a->kind != Kind::Tuple && a->kind != Kind::List) {
        flat.push_back(a);
        continue;
      }
      std::vector<V> parts;
      std::function<void(const V &)> flatten = [&](const V &v) {
        if (v->kind == Kind::Tuple || v->kind == Kind::List) {
          for (const V &x : toVector(v, r))
            flatten(x);
          return;
        }
        if (!dynCast<HostArrayV>(v) && !apiAs<HeldSemObj>(v)) {
          if (v->kind == Kind::Opaque)
            opaqueNeeded(v, r, fmt::format("pallas_call operand {} (a leaf of it)", i + 1));
          unsupported(r, fmt::format("pallas_call operand {}: a {} with a leaf of type {} (a "
                                     "pytree of operands); dkv takes arrays and semaphore "
                                     "arrays, and tuples and lists of them",
                                     i + 1, typeName(*a), typeName(*v)));
        }
        parts.push_back(v);
      };
      flatten(a);
      if (parts.empty())
        unsupported(r, fmt::format("pallas_call operand {}: an empty {} (an operand of no "
                                   "arrays)",
                                   i + 1, typeName(*a)));
      if (i < prefetch)
        unsupported(r, fmt::format("pallas_call operand {}: a pytree of scalar-prefetch "
                                   "operands",
                                   i + 1));
      inGroup[i] = parts.size();
      flat.insert(flat.end(), parts.begin(), parts.end());
    }
    args.pos = std::move(flat);
  }
  std::vector<V> inSpecs;
  if (V s = field(&GridSpecObj::inSpecs, pc.inSpecs);
      s && inTops.size() != args.pos.size() && (s->kind == Kind::Tuple || s->kind == Kind::List)) {
    // A pytree of operands: in_specs has the operands' tree, one spec per leaf.
    std::vector<V> items = toVector(s, r);
    if (items.size() != inTops.size() - prefetch)
      fail(r, "python-call",
           fmt::format("pallas_call in_specs: {} specs for {} operands", items.size(),
                       inTops.size() - prefetch));
    for (size_t g = prefetch; g < inTops.size(); ++g) {
      std::vector<V> parts;
      leaves(*this, items[g - prefetch], parts, r);
      if (parts.size() != (inGroup[g] ? inGroup[g] : 1))
        fail(r, "python-call",
             fmt::format("pallas_call in_specs: the pytree of operand {} does not match the "
                         "operand",
                         g + 1));
      inSpecs.insert(inSpecs.end(), parts.begin(), parts.end());
    }
  } else {
    inSpecs = specs(&GridSpecObj::inSpecs, pc.inSpecs, args.pos.size() - prefetch, "in_specs");
  }
  std::vector<V> outSpecs;
  if (V s = field(&GridSpecObj::outSpecs, pc.outSpecs);
      s && tops.size() != outs.size() && (s->kind == Kind::Tuple || s->kind == Kind::List)) {
    // Nested outputs: out_specs is a pytree of the out_shape's structure (JAX flattens
    // both and requires the same tree), one spec per leaf.
    std::vector<V> items = toVector(s, r);
    if (items.size() != tops.size())
      fail(
          r, "python-call",
          fmt::format("pallas_call out_specs: {} specs for {} outputs", items.size(), tops.size()));
    for (size_t g = 0; g < tops.size(); ++g) {
      std::vector<V> parts;
      leaves(*this, items[g], parts, r);
      if (parts.size() != (groupSize[g] ? groupSize[g] : 1))
        fail(r, "python-call",
             fmt::format("pallas_call out_specs: the pytree of output {} does not match its "
                         "out_shape",
                         g));
      outSpecs.insert(outSpecs.end(), parts.begin(), parts.end());
    }
  } else {
    outSpecs = specs(&GridSpecObj::outSpecs, pc.outSpecs, outs.size(), "out_specs");
  }
  std::vector<V> scratch;
  if (V s = field(&GridSpecObj::scratchShapes, pc.scratchShapes))
    scratch = toVector(s, r);
  const auto &params = *kf.params;
  size_t total = inTops.size() + tops.size() + scratch.size();
  size_t positional = 0;
  bool varargs = false;
  for (const py::Param &p : params) {
    if (p.kind == py::ParamKind::Positional || p.kind == py::ParamKind::PositionalOnly)
      ++positional;
    else if (p.kind == py::ParamKind::VarArgs)
      varargs = true;
  }
  size_t boundPos = kfn.bound.pos.size();
  size_t free = positional >= boundPos ? positional - boundPos : 0;
  // Keyword-only parameters must come from the partial; positional ones left over keep
  // their defaults or are given by the partial's keywords.
  auto boundByKeyword = [&](const py::Param &p) {
    for (const auto &kw : kfn.bound.kw)
      if (kw.first == p.name)
        return true;
    return false;
  };
  size_t required = 0;
  for (size_t i = boundPos; i < params.size(); ++i)
    if ((params[i].kind == py::ParamKind::Positional ||
         params[i].kind == py::ParamKind::PositionalOnly) &&
        !kf.defaults[i] && !boundByKeyword(params[i]))
      ++required;
  if ((!varargs && (total > free || total < required)) || (varargs && total < required))
    fail(kf.range, "python-call",
         fmt::format("the kernel {}() takes {} refs, and pallas_call passes {} ({} inputs, {} "
                     "outputs, {} scratch)",
                     kf.name, free, total, inTops.size(), tops.size(), scratch.size()));
  auto paramName = [&](size_t i) {
    size_t p = i + boundPos;
    if (p < params.size() && params[p].kind != py::ParamKind::VarArgs &&
        params[p].kind != py::ParamKind::KeywordOnly &&
        params[p].kind != py::ParamKind::VarKeywords)
      return params[p].name;
    std::string base = "ref";
    for (const py::Param &q : params)
      if (q.kind == py::ParamKind::VarArgs)
        base = q.name;
    return fmt::format("{}_{}", base, i);
  };
  auto paramRange = [&](size_t i) {
    size_t p = i + boundPos;
    return p < params.size() ? params[p].range : kf.range;
  };

  grid_ = grid;
  hasCollective_ = cparams.collective >= 0;
  beginKernel();
  std::vector<std::unique_ptr<ast::BufferDecl>> bufs;
  CallArrays call;
  Args kargs = kfn.bound;
  size_t idx = 0;
  auto blockSpec = [&](const V &spec) -> BlockSpecObj * {
    if (!spec)
      return nullptr;
    auto *bs = apiAs<BlockSpecObj>(spec);
    if (!bs)
      fail(r, "python-type", "in_specs / out_specs entries must be pl.BlockSpec(...)");
    return bs;
  };
  // A semaphore operand or output (`pl.BlockSpec(memory_space=pltpu.SEMAPHORE)`): a
  // semaphore parameter of the kernel, the caller's array `arrV`.
  // Each adds one parameter (named `leaf` when it is a leaf of a nested output) and
  // returns its ref; pushArg passes it to the kernel.
  auto pushArg = [&](const V &ref) {
    kargs.pos.insert(kargs.pos.begin() + static_cast<long>(boundPos + idx), ref);
    ++idx;
  };
  auto addSem = [&](const V &arrV, const V &spec, bool withData,
                    const std::string &leaf = {}) -> V {
    const auto &held = *apiAs<HeldSemObj>(arrV);
    if (auto *bs = blockSpec(spec); bs && (!bs->semaphore || bs->blocked()))
      fail(bs->range, "python-type",
           fmt::format("pallas_call operand {}: a semaphore array takes "
                       "pl.BlockSpec(memory_space=pltpu.SEMAPHORE) (no block shape, no index "
                       "map)",
                       idx + 1));
    SourceRange pr = paramRange(idx);
    std::string name = fresh(leaf.empty() ? paramName(idx) : leaf);
    auto sem = std::make_shared<RefV>(Kind::Sem);
    sem->name = name, sem->semKind = held.kind, sem->dims = held.dims;
    std::vector<ast::ExprPtr> de;
    for (int64_t d : held.dims)
      de.push_back(std::make_unique<ast::IntLiteral>(pr, d));
    call.sems.push_back(std::make_unique<ast::SemDecl>(pr, name, pr, ast::Storage::KernelParam,
                                                       held.kind, std::move(de)));
    call.order.push_back(call.sems.back().get());
    call.arrays.push_back(body_ ? body_->buffer(arrV) : arrV);
    call.withData.push_back(withData);
    return sem;
  };
  auto addBuffer = [&](const V &arrV, const V &spec, ast::Direction dir, bool scalarPrefetch,
                       ast::MemSpace space, const std::string &leaf = {}) -> V {
    const auto &arr = cast<HostArrayV>(arrV);
    if (scalarPrefetch)
      space = ast::MemSpace::Smem;
    if (spec) {
      auto *bs = blockSpec(spec);
      if (bs->semaphore)
        fail(bs->range, "python-type",
             fmt::format("pallas_call operand {}: pl.BlockSpec(memory_space=pltpu.SEMAPHORE) on "
                         "an array of {} (a SEMAPHORE block spec is for a semaphore array: the "
                         "result of a pallas_call with out_shape=pltpu.SemaphoreType...)",
                         idx + 1, ast::toString(arr.dtype)));
      if (bs->blocked() && !wholeBlock(*bs, arr.shape, grid, prefetch))
        unsupported(bs->range,
                    "a BlockSpec with blocks smaller than the operand, or that move over the "
                    "grid, on a pallas_call operand (Pallas' outer pipeline over the grid); "
                    "dkv traces whole operands here (pl.BlockSpec(memory_space=...), or the "
                    "whole block at block 0 on every step), and blocked specs in "
                    "pltpu.emit_pipeline (docs/python.md \"Pipelines\")");
      if (bs->space)
        space = *bs->space;
    }
    SourceRange pr = paramRange(idx);
    V ref = paramBuffer(arr, fresh(leaf.empty() ? paramName(idx) : leaf), pr, dir, space, bufs);
    auto &rv = static_cast<RefV &>(*ref);
    if (dir == ast::Direction::In && space == ast::MemSpace::Smem &&
        (ast::isInteger(rv.dtype) || scalarPrefetch)) {
      // A 0-d table (`jnp.array(0, jnp.int32)`, read as `idx_ref[...]`) is declared with
      // one element, `smem i32[1]`, and read as `idx_ref[0]` (tableRead); the ref keeps
      // its Python shape ().
      std::vector<int64_t> tableShape = rv.dims;
      if (tableShape.empty()) {
        tableShape.push_back(1);
        bufs.back()->shape().push_back(std::make_unique<ast::IntLiteral>(pr, 1));
      }
      makeTable(*bufs.back(), arr, tableShape, pr, scalarPrefetch);
      rv.table = true;
    }
    call.order.push_back(bufs.back().get());
    call.arrays.push_back(body_ ? body_->buffer(arrV) : arrV);
    call.withData.push_back(dir == ast::Direction::In);
    return ref;
  };
  // input_output_aliases={i: o}: operand i is output o's buffer (JAX donates it), so the
  // kernel's parameter for operand i is bound to the output's ref: every access through
  // either name is an access to the one buffer. Its data is not carried over.
  std::map<size_t, size_t> aliasOf; // operand index -> output index
  if (given(pc.aliases)) {
    auto *d = dynCast<DictV>(pc.aliases);
    if (!d)
      fail(r, "python-type", "pallas_call input_output_aliases must be a dict");
    std::set<size_t> outsTaken;
    for (const Table::Entry &e : d->table.entries) {
      if (!e.live)
        continue;
      int64_t i = toIndex(e.key, r, "an input_output_aliases key");
      int64_t o = toIndex(e.value, r, "an input_output_aliases value");
      if (i < 0 || static_cast<size_t>(i) >= args.pos.size() || o < 0 ||
          static_cast<size_t>(o) >= outs.size())
        fail(r, "python-call",
             fmt::format("pallas_call input_output_aliases {{{}: {}}}: there are {} operands and "
                         "{} outputs",
                         i, o, args.pos.size(), outs.size()));
      if (!outsTaken.insert(static_cast<size_t>(o)).second)
        fail(r, "python-call",
             fmt::format("pallas_call input_output_aliases: output {} is aliased twice", o));
      const auto *in = dynCast<HostArrayV>(args.pos[static_cast<size_t>(i)]);
      const auto *out = dynCast<HostArrayV>(outs[static_cast<size_t>(o)]);
      if (!in || !out)
        unsupported(r, "input_output_aliases of an operand or output that is not an array");
      if (in->shape != out->shape || in->dtype != out->dtype)
        raise("ValueError",
              fmt::format("input_output_aliases: operand {} and output {} differ in shape or "
                          "dtype",
                          i, o),
              r);
      if (static_cast<size_t>(i) < prefetch)
        unsupported(r, "aliasing a scalar-prefetch operand to an output");
      aliasOf[static_cast<size_t>(i)] = static_cast<size_t>(o);
    }
  }
  std::vector<std::pair<size_t, size_t>> aliasSlots; // kargs position, output index
  std::map<size_t, size_t> donor;                    // output index -> operand index
  // None (an empty pytree: an optional operand or scratch not given) has no leaves; the
  // kernel gets None in its place, as Pallas unflattens it.
  auto noneArg = [&]() {
    kargs.pos.insert(kargs.pos.begin() + static_cast<long>(boundPos + idx), none());
    ++idx;
  };
  // The operand leaves' refs; those of a pytree operand go to the kernel together, in
  // its tree.
  std::vector<V> groupRefs;
  for (size_t i = 0, g = 0, k = 0; i < args.pos.size(); ++i) {
    const bool grouped = inGroup[g] != 0;
    std::string leaf = grouped ? fmt::format("{}_{}", paramName(idx), k) : "";
    auto give = [&](const V &ref) {
      if (!grouped) {
        pushArg(ref);
        ++g;
        return;
      }
      groupRefs.push_back(ref);
      if (++k < inGroup[g])
        return;
      size_t next = 0;
      pushArg(rebuildTree(inTops[g], groupRefs, next));
      groupRefs.clear();
      ++g, k = 0;
    };
    if (auto it = aliasOf.find(i); it != aliasOf.end()) {
      if (grouped)
        unsupported(r, fmt::format("input_output_aliases of operand {}, a leaf of a pytree "
                                   "operand",
                                   i));
      aliasSlots.emplace_back(boundPos + idx, it->second);
      donor[it->second] = i;
      kargs.pos.insert(kargs.pos.begin() + static_cast<long>(boundPos + idx), nullptr);
      ++idx, ++g;
      continue;
    }
    if (args.pos[i]->kind == Kind::None && i >= prefetch) {
      noneArg();
      ++g;
      continue;
    }
    if (apiAs<HeldSemObj>(args.pos[i]) && i >= prefetch) {
      give(addSem(args.pos[i], inSpecs[i - prefetch], true, leaf));
      continue;
    }
    if (!dynCast<HostArrayV>(args.pos[i])) {
      if (args.pos[i]->kind == Kind::Opaque)
        opaqueNeeded(args.pos[i], r,
                     fmt::format("pallas_call operand {} (its shape and dtype)", i + 1));
      fail(r, "python-unknown-fact",
           fmt::format("pallas_call operand {}: its shape and dtype are unknown (got {})", i + 1,
                       typeName(*args.pos[i])));
    }
    give(addBuffer(args.pos[i], i < prefetch ? nullptr : inSpecs[i - prefetch], ast::Direction::In,
                   i < prefetch, ast::MemSpace::Vmem, leaf));
  }
  const size_t firstOutParam = call.arrays.size();
  std::vector<V> outRefs; // one per output leaf
  for (size_t i = 0, g = 0, k = 0; i < outs.size(); ++i) {
    // The leaf's name: `sems_0`, `sems_1` for the parameter `sems` of a nested output.
    std::string leaf = groupSize[g] ? fmt::format("{}_{}", paramName(idx), k) : "";
    auto advance = [&] {
      if (groupSize[g] && ++k < groupSize[g])
        return;
      if (groupSize[g]) {
        std::vector<V> mine(outRefs.end() - static_cast<long>(groupSize[g]), outRefs.end());
        size_t next = 0;
        pushArg(rebuildGroup(g, mine, next));
      } else {
        pushArg(outRefs.back());
      }
      ++g, k = 0;
    };
    if (apiAs<HeldSemObj>(results[i])) {
      outRefs.push_back(addSem(results[i], outSpecs[i], false, leaf));
      advance();
      continue;
    }
    auto sp = outSpace.find(i);
    outRefs.push_back(addBuffer(outs[i], outSpecs[i], ast::Direction::Out, false,
                                sp == outSpace.end() ? ast::MemSpace::Vmem : sp->second, leaf));
    advance();
    // The caller's array is the call's result; an output aliased to an operand is the
    // operand's buffer (donated), which the body's later calls see through the result.
    call.arrays.back() = results[i];
    if (auto d = donor.find(i); d != donor.end() && body_) {
      V buf = body_->buffer(args.pos[d->second]);
      call.arrays.back() = buf;
      body_->donated[results[i].get()] = buf;
      body_->kept.push_back(results[i]);
    }
  }
  for (const auto &[slot, o] : aliasSlots) {
    kargs.pos[slot] = outRefs[o];
    call.withData[firstOutParam + o] = true; // the operand's data, donated
  }
  std::vector<std::unique_ptr<ast::Decl>> scratchDecls;
  for (const V &s : scratch) {
    if (s->kind == Kind::None) {
      noneArg();
      continue;
    }
    std::vector<V> parts;
    leaves(*this, s, parts, r);
    bool tree = s->kind == Kind::Tuple || s->kind == Kind::List || s->kind == Kind::Dict;
    std::vector<V> bounds;
    for (size_t k = 0; k < parts.size(); ++k) {
      V bound;
      std::string base = paramName(idx);
      scratchDecls.push_back(scratchDecl(parts[k],
                                         fresh(tree ? fmt::format("{}_{}", base, k) : base),
                                         paramRange(idx), ast::Storage::Scratch, bound));
      bounds.push_back(bound);
    }
    V arg;
    if (!tree) {
      arg = bounds[0];
    } else {
      // Rebuild the pytree with the refs at its leaves.
      size_t next = 0;
      std::function<V(const V &)> rebuild = [&](const V &v) -> V {
        if (v->kind == Kind::Tuple || v->kind == Kind::List) {
          std::vector<V> items;
          for (const V &x : toVector(v, r))
            items.push_back(rebuild(x));
          return v->kind == Kind::Tuple ? tuple(std::move(items)) : list(std::move(items));
        }
        if (auto *d = dynCast<DictV>(v)) {
          auto out = std::make_shared<DictV>();
          for (const Table::Entry &e : d->table.entries)
            if (e.live)
              dictSet(out->table, e.key, rebuild(e.value), r);
          return out;
        }
        return bounds[next++];
      };
      arg = rebuild(s);
    }
    kargs.pos.insert(kargs.pos.begin() + static_cast<long>(boundPos + idx), arg);
    ++idx;
  }
  // Refs of pl.run_state / jax.new_ref the kernel closes over (JAX's stateful async
  // copies): operands of the kernel, the caller's arrays (one array per ref: a sequence's
  // kernels that take one ref share it), holding data.
  const bool inSequence = !call.sems.empty();
  ClosedRefs closed = takeClosedRefs(kf, r, bufs, "the pallas_call kernel", inSequence);
  for (size_t i = 0; i < closed.hostRefs.size(); ++i) {
    call.order.push_back(closed.decls[i]);
    call.arrays.push_back(closed.hostRefs[i]);
    call.withData.push_back(true);
  }
  try {
    finishKernel(kf, r, std::move(bufs), std::move(scratchDecls), std::move(kargs),
                 cparams.collective, cparams.skipBarrier, std::move(call));
  } catch (...) {
    closed.restore();
    throw;
  }
  closed.restore();
  closed.used(inSequence);
  return result();
}

// pl.kernel(body, out_type=..., mesh=tc_mesh, scratch_types=..., compiler_params=...)
// called on arrays inside a shard_map (jax/_src/pallas/helpers.py `kernel`, which runs
// mpmd_map over the mesh): the body runs once on every core of every device, with the
// refs of the inputs, then of the outputs, then the scratch, in that order; operands are
// in the mesh's default memory space: ANY on a TensorCore mesh, HBM on a SparseCore
// ScalarSubcoreMesh (`default_memory_space`, jax/_src/pallas/mosaic/sc_core.py). It
// becomes a kernel over `tensorcore_mesh` (docs/language.md "TensorCores"; a
// ScalarSubcoreMesh's scalar subcores are its cores, docs/python.md "SparseCores").
V Interp::callPlKernel(const PlKernelObj &pk, Args args, SourceRange r) {
  // Outside a shard_map the kernel runs on one device (its cores), as a pallas_call.
  OneDeviceScope one(*this);
  if (inKernel_)
    unsupported(r, "a pl.kernel inside a kernel");
  KernelFn kfn = kernelFunction(pk.body, r, "pl.kernel");
  const FunctionV &kf = *kfn.fn;
  auto given = [](const V &v) { return v && v->kind != Kind::None ? v : nullptr; };
  const CompilerParams cparams = compilerParams(given(pk.compilerParams), r);
  if (!args.kw.empty())
    unsupported(r, "keyword arguments to a pl.kernel");
  std::vector<V> outs;
  // Each output's memory space: the mesh's default, `any`, or the one an out_type typed by
  // its memory space names (`pltpu.VMEM(shape, dtype)`, as pallas_call's out_shape).
  std::vector<ast::MemSpace> outSpaces;
  const auto *coreMesh = apiAs<TcMeshObj>(pk.mesh);
  const ast::MemSpace defaultSpace =
      coreMesh && coreMesh->sparse ? ast::MemSpace::Hbm : ast::MemSpace::Any;
  if (coreMesh && coreMesh->sparse)
    if (auto *p = apiAs<CompilerParamsObj>(given(pk.compilerParams));
        p && p->dimensionSemantics && p->dimensionSemantics->kind != Kind::None)
      raiseId("ValueError", "ScalarSubcoreMesh does not support dimension_semantics=", r);
  V outType = given(pk.outType);
  const bool outSeq = outType && (outType->kind == Kind::Tuple || outType->kind == Kind::List);
  if (outType)
    for (V o : outSeq ? toVector(outType, r) : std::vector<V>{outType}) {
      ast::MemSpace space = defaultSpace;
      if (auto *sc = apiAs<ScratchObj>(o)) {
        space = sc->space;
        o = std::make_shared<HostArrayV>(shapeOf(sc->shape, r, "an out_type's shape"),
                                         dtypeArg(sc->dtype, r));
      }
      if (o->kind == Kind::Opaque)
        opaqueNeeded(o, r, "a pl.kernel out_type");
      if (!dynCast<HostArrayV>(o))
        unsupported(r, fmt::format("pl.kernel out_type {}: dkv reads a jax.ShapeDtypeStruct, an "
                                   "array or pltpu.VMEM / ANY(shape, dtype), or a list of them",
                                   typeName(*o)));
      outs.push_back(o);
      outSpaces.push_back(space);
    }
  auto result = [&]() -> V { return outSeq ? tuple(outs) : outs.empty() ? none() : outs[0]; };
  if (entryMode_ || !traceKernels_)
    return result();
  std::vector<V> scratch;
  // scratch_types as a dict (`dict(tmp_ref=pltpu.VMEM(...))`): JAX's mpmd_map passes its
  // refs as keyword arguments, by name, after the inputs and outputs.
  std::vector<std::pair<std::string, V>> scratchKw;
  if (V st = given(pk.scratchTypes)) {
    if (auto *d = dynCast<DictV>(st)) {
      for (const Table::Entry &e : d->table.entries) {
        if (!e.live)
          continue;
        auto *key = dynCast<StrV>(e.key);
        if (!key)
          raise("TypeError", "keywords must be strings", r);
        if (e.value->kind == Kind::Tuple || e.value->kind == Kind::List ||
            e.value->kind == Kind::Dict)
          unsupported(r, fmt::format("pl.kernel scratch_types['{}']: a pytree of scratch types "
                                     "under one keyword",
                                     key->s));
        scratchKw.emplace_back(key->s, e.value);
      }
    } else {
      scratch = toVector(st, r);
    }
  }
  const auto &params = *kf.params;
  size_t total = args.pos.size() + outs.size() + scratch.size();
  for (const py::Param &p : params)
    if (p.kind != py::ParamKind::Positional && p.kind != py::ParamKind::PositionalOnly &&
        !(p.kind == py::ParamKind::KeywordOnly && !scratchKw.empty()))
      unsupported(p.range, "keyword-only or variadic parameters of a pl.kernel body");
  // Keyword scratch refs bind by name (the call below raises Python's TypeError for a
  // name the body lacks).
  if (params.size() != total + kfn.bound.pos.size() + scratchKw.size())
    fail(kf.range, "python-call",
         fmt::format("the kernel {}() takes {} refs, and pl.kernel passes {} ({} inputs, {} "
                     "outputs, {} scratch)",
                     kf.name, params.size(), total + scratchKw.size(), args.pos.size(), outs.size(),
                     scratch.size() + scratchKw.size()));
  grid_.clear();
  hasCollective_ = cparams.collective >= 0;
  tcMesh_ = pk.mesh;
  beginKernel();
  std::vector<std::unique_ptr<ast::BufferDecl>> bufs;
  Args kargs = kfn.bound;
  size_t idx = kfn.bound.pos.size();
  auto addBuffer = [&](const V &arr, ast::Direction dir, ast::MemSpace space) {
    if (!dynCast<HostArrayV>(arr))
      unsupported(r, fmt::format("pl.kernel operand {} of type {} (a pytree of operands is not "
                                 "supported; pass arrays)",
                                 idx + 1, typeName(*arr)));
    kargs.pos.push_back(paramBuffer(cast<HostArrayV>(arr), fresh(params[idx].name),
                                    params[idx].range, dir, space, bufs));
    ++idx;
  };
  for (const V &a : args.pos)
    addBuffer(a, ast::Direction::In, defaultSpace);
  for (size_t i = 0; i < outs.size(); ++i)
    addBuffer(outs[i], ast::Direction::Out, outSpaces[i]);
  std::vector<std::unique_ptr<ast::Decl>> scratchDecls;
  for (const V &sc : scratch) {
    V bound;
    scratchDecls.push_back(
        scratchDecl(sc, fresh(params[idx].name), params[idx].range, ast::Storage::Scratch, bound));
    kargs.pos.push_back(bound);
    ++idx;
  }
  for (const auto &[name, sc] : scratchKw) {
    V bound;
    SourceRange pr = kf.range;
    for (const py::Param &p : params)
      if (p.name == name)
        pr = p.range;
    scratchDecls.push_back(scratchDecl(sc, fresh(name), pr, ast::Storage::Scratch, bound));
    kargs.kw.emplace_back(name, bound);
  }
  try {
    finishKernel(kf, r, std::move(bufs), std::move(scratchDecls), std::move(kargs),
                 cparams.collective, cparams.skipBarrier);
  } catch (...) {
    tcMesh_ = nullptr;
    throw;
  }
  tcMesh_ = nullptr;
  return result();
}

void Interp::sharedCollective(int64_t id, SourceRange r, SourceRange first) {
  unsupported(r, fmt::format("a second kernel with collective_id {} in this body (the first at "
                             "line {}): Pallas does not say whether the two get one barrier "
                             "semaphore, and if they do a device still in the first kernel can "
                             "take a signal that another sends in the second; dkv gives each "
                             "kernel a barrier semaphore of its own, so it does not check this "
                             "pair; give each kernel its own collective_id, or run with JAX's "
                             "jax_pallas_auto_assign_collective_ids='override' (for a test, "
                             "jtu.with_config on its class), which gives each its own",
                             id, first.begin.line));
}

Interp::CompilerParams Interp::compilerParams(const V &cp, SourceRange r) {
  CompilerParams out;
  if (!cp)
    return out;
  auto *p = apiAs<CompilerParamsObj>(cp);
  if (!p)
    unsupported(r, "compiler_params other than pltpu.CompilerParams(...)");
  if (p->collectiveId)
    out.collective = *p->collectiveId;
  out.skipBarrier = p->skipDeviceBarrier;
  return out;
}

void Interp::checkParallelGrid(const V &cp, const std::vector<int64_t> &grid, SourceRange r) {
  auto *p = cp ? apiAs<CompilerParamsObj>(cp) : nullptr;
  if (!p || !p->dimensionSemantics)
    return;
  const SourceRange at = p->semanticsAt.begin.line ? p->semanticsAt : r;
  std::vector<V> entries = toVector(p->dimensionSemantics, at);
  for (size_t d = 0; d < entries.size() && d < grid.size(); ++d) {
    const V &e = entries[d];
    const bool arbitrary = e->kind == Kind::Str && cast<StrV>(e).s == "arbitrary";
    if (arbitrary || grid[d] <= 1)
      continue;
    const std::string what = e->kind == Kind::Str ? fmt::format("'{}'", cast<StrV>(e).s)
                                                  : std::string("not 'arbitrary'");
    if (!chip_)
      fail(at, "python-unknown-fact",
           fmt::format("grid dimension {} of this pallas_call is {} (dimension_semantics): on a "
                       "chip with two TensorCores per device (megacore: TPU v4, v5p) they split "
                       "it between them, which dkv does not model; name a chip with one "
                       "TensorCore per device with --tpu NAME or '# dkv: tpu NAME' (v5e, v6e, "
                       "7x: the grid runs in order there, as dkv checks it), or mark the "
                       "dimension 'arbitrary'",
                       d, what));
    if (chip_->coresPerDevice > 1)
      unsupported(at, fmt::format("grid dimension {} of this pallas_call is {} "
                                  "(dimension_semantics): the two TensorCores of a {} device "
                                  "(megacore) split it between them, which dkv does not model",
                                  d, what, chip_->name));
  }
}

V Interp::paramBuffer(const HostArrayV &arr, const std::string &name, SourceRange pr,
                      ast::Direction dir, ast::MemSpace space,
                      std::vector<std::unique_ptr<ast::BufferDecl>> &bufs) {
  std::vector<ast::ExprPtr> de;
  for (int64_t d : arr.shape)
    de.push_back(std::make_unique<ast::IntLiteral>(pr, d));
  bufs.push_back(std::make_unique<ast::BufferDecl>(pr, name, pr, ast::Storage::KernelParam, dir,
                                                   space, arr.dtype, std::move(de)));
  auto ref = std::make_shared<RefV>(Kind::Ref);
  ref->name = name, ref->dims = arr.shape, ref->dtype = arr.dtype;
  return ref;
}

void Interp::beginKernel() {
  inKernel_ = true;
  used_.clear();
  emitted_ = 0;
  kernelStmts_ = 0;
  for (const std::string &axis : apiAs<MeshObj>(mesh_)->names)
    used_.insert(axis);
  if (singleDevice_)
    used_.insert(kSingleAxis);
  if (auto *tc = apiAs<TcMeshObj>(tcMesh_))
    used_.insert(tc->axis);
  if (hasCollective_)
    used_.insert("barrier");
}

void Interp::finishKernel(const FunctionV &kf, SourceRange r,
                          std::vector<std::unique_ptr<ast::BufferDecl>> bufs,
                          std::vector<std::unique_ptr<ast::Decl>> scratchDecls, Args kargs,
                          int64_t collective, bool skipBarrier, CallArrays call) {
  // Two kernels of one body with one collective_id: Pallas does not say whether they get
  // one barrier semaphore ("using the same collective_id does not guarantee that the same
  // barrier semaphore will be allocated between kernels", jax/_src/pallas/mosaic/core.py).
  // If they do, a device still in the first can take a signal a faster device sends in
  // the second; dkv gives every kernel its own, so it refuses the second kernel. Under
  // JAX's jax_pallas_auto_assign_collective_ids='override' each kernel gets an id (and a
  // barrier semaphore) of its own.
  if (collective >= 0 && body_) {
    auto &ids = body_->collectives;
    if (autoCollectiveIds_ == "override") {
      while (ids.count(collective))
        collective = ids.rbegin()->first + 1;
    } else if (auto it = ids.find(collective); it != ids.end()) {
      sharedCollective(collective, r, it->second);
    }
    ids.emplace(collective, r);
  }
  std::vector<ast::StmtPtr> body;
  if (!scratchDecls.empty())
    body.push_back(std::make_unique<ast::ScratchStmt>(kf.range, std::move(scratchDecls)));
  blocks_ = {&body};
  blockIds_ = {++blockSerial_};
  writeAt_.clear();
  snapshotScratch_.clear();
  emitted_ = 0;
  try {
    callFunction(const_cast<FunctionV &>(kf), std::move(kargs), r);
  } catch (...) {
    blocks_.clear();
    blockIds_.clear();
    inKernel_ = false;
    throw;
  }
  blocks_.clear();
  blockIds_.clear();
  inKernel_ = false;
  // The snapshots of values stored after later operations: VMEM scratch of their own.
  if (!snapshotScratch_.empty())
    body.insert(body.begin(),
                std::make_unique<ast::ScratchStmt>(kf.range, std::move(snapshotScratch_)));
  snapshotScratch_.clear();

  std::vector<ast::ExprPtr> grid;
  for (int64_t g : grid_)
    grid.push_back(std::make_unique<ast::IntLiteral>(r, g));
  ast::ExprPtr cid;
  std::unique_ptr<ast::SemDecl> barrier;
  if (hasCollective_) {
    cid = std::make_unique<ast::IntLiteral>(r, collective);
    barrier = std::make_unique<ast::SemDecl>(r, "barrier", r, ast::Storage::Barrier,
                                             ast::SemKind::Barrier, std::vector<ast::ExprPtr>{});
  }
  // A kernel of a sequence is named once in its file: a second pallas_call of the same
  // function in the body is `name_2` (a kernel of its own, with its own scratch).
  const bool inSequence = !call.sems.empty();
  std::string name = kf.name;
  if (inSequence && body_) {
    auto taken = [&](const std::string &n) {
      for (const PendingKernel &p : body_->pending)
        if (p.kernel->name() == n)
          return true;
      return false;
    };
    for (int k = 2; taken(name); ++k)
      name = fmt::format("{}_{}", kf.name, k);
  }
  auto kernelDecl = std::make_unique<ast::KernelDecl>(
      kf.range, name, std::move(bufs), std::move(grid), std::move(cid), std::move(barrier),
      std::make_unique<ast::Block>(kf.range, std::move(body)));
  if (skipBarrier)
    kernelDecl->setSkipDeviceBarrier(std::make_unique<ast::BoolLiteral>(r, true));
  if (inSequence) {
    // A semaphore is handed from one kernel to another: the kernel waits for the body's
    // end, where the semaphores that link it make its sequence.
    if (!body_)
      unsupported(r, "a kernel with semaphore operands or outputs outside a shard_map body or "
                     "a jax.jit'ed function (dkv makes a sequence of the calls of one of them)");
    kernelDecl->setSemParams(std::move(call.sems));
    kernelDecl->setParamOrder(call.order);
    body_->pending.push_back(PendingKernel{std::move(kernelDecl), std::move(call), r});
    return;
  }
  if (body_) {
    // A semaphore a pending call returned that no later call has taken yet may count a
    // DMA still in flight: this kernel would run during it (below, sequences()).
    std::set<const Value *> open;
    for (const PendingKernel &p : body_->pending)
      for (size_t i = 0; i < p.call.arrays.size(); ++i)
        if (apiAs<HeldSemObj>(p.call.arrays[i])) {
          if (p.call.withData[i])
            open.erase(p.call.arrays[i].get());
          else
            open.insert(p.call.arrays[i].get());
        }
    if (!open.empty())
      betweenCalls(r, body_->pending.back().range);
    body_->between.emplace_back(body_->pending.size(), r);
  }
  std::vector<std::unique_ptr<ast::Node>> items = meshItems(r);
  items.push_back(std::move(kernelDecl));
  addTraced(std::make_unique<ast::Module>(kf.range, std::move(items)), kf.name);
}

std::vector<std::unique_ptr<ast::Node>> Interp::meshItems(SourceRange r) {
  const auto &mesh = *apiAs<MeshObj>(mesh_);
  std::vector<std::unique_ptr<ast::AxisDecl>> axes;
  for (size_t i = 0; i < mesh.names.size(); ++i)
    axes.push_back(std::make_unique<ast::AxisDecl>(
        r, mesh.names[i], r, std::make_unique<ast::IntLiteral>(r, mesh.sizes[i]), i));
  if (singleDevice_)
    axes.push_back(std::make_unique<ast::AxisDecl>(r, kSingleAxis, r,
                                                   std::make_unique<ast::IntLiteral>(r, 1), 0));
  std::vector<std::unique_ptr<ast::Node>> items;
  items.push_back(std::make_unique<ast::MeshDecl>(r, std::move(axes)));
  if (auto *tc = apiAs<TcMeshObj>(tcMesh_)) {
    if (std::find(mesh.names.begin(), mesh.names.end(), tc->axis) != mesh.names.end())
      unsupported(r, fmt::format("a TensorCore mesh axis and a device mesh axis that are both "
                                 "named {} in the kernel language",
                                 tc->axis));
    std::vector<std::unique_ptr<ast::AxisDecl>> core;
    core.push_back(std::make_unique<ast::AxisDecl>(
        r, tc->axis, r, std::make_unique<ast::IntLiteral>(r, tc->cores), 0));
    items.push_back(std::make_unique<ast::MeshDecl>(r, std::move(core), /*tensorCore=*/true));
  }
  return items;
}

void Interp::addTraced(std::unique_ptr<ast::Module> module, std::string name) {
  result_.kernels.push_back(TracedKernel{std::move(module), std::move(name)});
  if (stopAfter_ && !insideAssertRaises_ && result_.kernels.size() >= stopAfter_)
    throw StopRun{};
}

// The kernels of one shard_map body that take or return semaphores, grouped by the
// semaphores they pass on: kernels j < k are in one sequence when k takes a semaphore
// that j returned (transitively). Each sequence is one instance, in the order of its
// first call, with the calls in program order; its arrays are the caller's arrays the
// calls bind (operands and results, identified by identity), each alive from the first
// call that takes it to the last (docs/model.md "Kernel sequences").
void Interp::sequences(BodyKernels &body, SourceRange r) {
  std::vector<PendingKernel> &ks = body.pending;
  std::vector<size_t> group(ks.size());
  for (size_t k = 0; k < ks.size(); ++k)
    group[k] = k;
  auto root = [&](size_t k) {
    while (group[k] != k)
      k = group[k];
    return k;
  };
  std::map<const Value *, size_t> producer; // a semaphore result -> the kernel returning it
  for (size_t k = 0; k < ks.size(); ++k) {
    const CallArrays &c = ks[k].call;
    for (size_t p = 0; p < c.arrays.size(); ++p) {
      if (!apiAs<HeldSemObj>(c.arrays[p]))
        continue;
      if (!c.withData[p]) {
        producer[c.arrays[p].get()] = k;
        continue;
      }
      auto it = producer.find(c.arrays[p].get());
      if (it == producer.end())
        unsupported(ks[k].range,
                    fmt::format("pallas_call operand {}: a semaphore array that no earlier "
                                "pallas_call of this shard_map body returned (a semaphore "
                                "passed between shard_map bodies or jitted functions)",
                                p + 1));
      group[root(k)] = root(it->second);
    }
  }
  // Sequences whose calls interleave in program order are one: a DMA of one may be in
  // flight while a call of the other runs (two copy_starts, then their copy_dones).
  for (bool merged = true; merged;) {
    merged = false;
    std::map<size_t, std::pair<size_t, size_t>> span; // root -> first, last call
    for (size_t k = 0; k < ks.size(); ++k) {
      auto [it, fresh] = span.try_emplace(root(k), k, k);
      if (!fresh)
        it->second.second = k;
    }
    for (auto a = span.begin(); a != span.end() && !merged; ++a)
      for (auto b = std::next(a); b != span.end() && !merged; ++b)
        if (a->second.first < b->second.second && b->second.first < a->second.second) {
          group[root(b->first)] = root(a->first);
          merged = true;
        }
  }
  // A kernel that passes no semaphore, called between two calls of a sequence, runs while
  // the sequence's DMAs may be in flight: dkv does not check it with them.
  for (const auto &[pos, range] : body.between)
    for (size_t k = 0; k < pos && k < ks.size(); ++k)
      for (size_t l = pos; l < ks.size(); ++l)
        if (root(k) == root(l))
          betweenCalls(range, ks[k].range);
  // A ref of pl.run_state / jax.new_ref that kernels of two sequences close over: the
  // sequences are checked apart, so a race between them on it would be missed.
  std::map<const Value *, size_t> refUser;
  for (size_t k = 0; k < ks.size(); ++k)
    for (const V &a : ks[k].call.arrays)
      if (apiAs<StateRefObj>(a)) {
        auto [it, added] = refUser.emplace(a.get(), k);
        if (!added && root(it->second) != root(k))
          unsupported(ks[k].range, fmt::format("this kernel and the one at line {} close over "
                                               "one ref of pl.run_state or jax.new_ref, and "
                                               "pass no semaphore that makes them one "
                                               "sequence: dkv checks the two apart and would "
                                               "miss a race between them on the ref",
                                               ks[it->second].range.begin.line));
      }
  std::vector<bool> done(ks.size(), false);
  for (size_t first = 0; first < ks.size(); ++first) {
    if (done[first])
      continue;
    std::vector<size_t> members;
    for (size_t k = first; k < ks.size(); ++k)
      if (root(k) == root(first)) {
        members.push_back(k);
        done[k] = true;
      }
    // The sequence's arrays, named after the parameters that take them (the first that
    // is not `_`), distinct from the mesh axes, the kernels and each other.
    std::set<std::string> used;
    for (const std::string &axis : apiAs<MeshObj>(mesh_)->names)
      used.insert(axis);
    if (singleDevice_)
      used.insert(kSingleAxis);
    for (size_t k : members)
      used.insert(ks[k].kernel->name());
    std::map<const Value *, ast::Decl *> arrayOf;
    std::vector<std::unique_ptr<ast::BufferDecl>> buffers;
    std::vector<std::unique_ptr<ast::SemDecl>> sems;
    std::vector<ast::Decl *> order;
    std::map<const Value *, std::string> baseName;
    for (size_t k : members) {
      const CallArrays &c = ks[k].call;
      for (size_t p = 0; p < c.arrays.size(); ++p) {
        std::string &b = baseName[c.arrays[p].get()];
        if (b.empty() || b == "v")
          b = c.order[p]->name();
      }
    }
    std::vector<ast::SequenceCall> calls;
    std::string names;
    for (size_t k : members) {
      PendingKernel &pk = ks[k];
      ast::SequenceCall sc;
      sc.range = pk.range;
      sc.kernel = pk.kernel->name();
      sc.kernelRange = pk.kernel->range();
      names += (names.empty() ? "" : "+") + sc.kernel;
      std::set<const Value *> passed;
      for (size_t p = 0; p < pk.call.arrays.size(); ++p) {
        const Value *a = pk.call.arrays[p].get();
        ast::Decl *param = pk.call.order[p];
        if (!passed.insert(a).second)
          unsupported(pk.range,
                      fmt::format("an array passed twice to one pallas_call of a kernel sequence "
                                  "(parameter '{}')",
                                  param->name()));
        auto *pb = dynCast<ast::BufferDecl>(param);
        auto it = arrayOf.find(a);
        if (it == arrayOf.end()) {
          std::string n = freshName(baseName[a], used);
          ast::Decl *decl;
          if (pb) {
            std::vector<ast::ExprPtr> de;
            for (const auto &d : pb->shape())
              de.push_back(std::make_unique<ast::IntLiteral>(
                  param->range(), static_cast<const ast::IntLiteral &>(*d).value()));
            auto b = std::make_unique<ast::BufferDecl>(
                param->range(), n, param->range(), ast::Storage::KernelParam,
                apiAs<StateRefObj>(pk.call.arrays[p]) ? ast::Direction::InOut // a ref
                : pk.call.withData[p]                 ? ast::Direction::In
                                                      : ast::Direction::Out,
                pb->tableInit() ? ast::MemSpace::Smem : ast::MemSpace::Any, pb->dtype(),
                std::move(de));
            b->setTableInit(pb->releaseTableInit());
            decl = b.get();
            buffers.push_back(std::move(b));
          } else {
            const auto &ps = cast<ast::SemDecl>(*param);
            std::vector<ast::ExprPtr> de;
            for (const auto &d : ps.dims())
              de.push_back(std::make_unique<ast::IntLiteral>(
                  param->range(), static_cast<const ast::IntLiteral &>(*d).value()));
            auto sd = std::make_unique<ast::SemDecl>(param->range(), n, param->range(),
                                                     ast::Storage::KernelParam, ps.semKind(),
                                                     std::move(de));
            decl = sd.get();
            sems.push_back(std::move(sd));
          }
          order.push_back(decl);
          it = arrayOf.emplace(a, decl).first;
        }
        // A table's contents are the sequence's (docs/language.md "Kernel sequences"): the
        // first call's, moved to the sequence's array above; a later call's are the same
        // array's.
        if (pb && pb->tableInit())
          pb->releaseTableInit();
        sc.args.emplace_back(it->second->name(), pk.range);
      }
      calls.push_back(std::move(sc));
    }
    std::vector<std::unique_ptr<ast::Node>> items = meshItems(r);
    SourceRange moduleRange = ks[members[0]].kernel->range();
    for (size_t k : members)
      items.push_back(std::move(ks[k].kernel));
    items.push_back(std::make_unique<ast::SequenceDecl>(r, std::move(buffers), std::move(sems),
                                                        std::move(order), std::move(calls)));
    addTraced(std::make_unique<ast::Module>(moduleRange, std::move(items)), names);
  }
}

//===----------------------------------------------------------------------===//
// Directives (pytrace/Directives.h)
//===----------------------------------------------------------------------===//

void Interp::applySets() {
  auto apply = [&](const SetDirective &set) {
    if (set.name.find('.') != std::string::npos)
      return; // a module's attribute (moduleAttr)
    V v = directiveValue(set, main_);
    main_->dict->set(set.name, v);
    pinned_.insert(set.name);
  };
  if (options_.directives)
    for (const auto &[name, set] : options_.directives->sets)
      apply(set);
  for (const SetDirective &set : options_.sets)
    apply(set);
}

std::string Interp::kernelCandidates() const {
  // Functions of the module with a parameter named like a ref: the likely kernels.
  std::vector<std::pair<uint32_t, std::string>> found;
  for (const auto &[name, v] : main_->dict->items) {
    auto *f = dynCast<FunctionV>(v);
    if (!f || !f->params || f->globals != main_)
      continue;
    for (const py::Param &p : *f->params)
      if (p.name.size() >= 3 && p.name.compare(p.name.size() - 3, 3, "ref") == 0) {
        found.emplace_back(f->range.begin.line, name);
        break;
      }
  }
  if (found.empty())
    return "";
  std::sort(found.begin(), found.end());
  std::string names;
  for (size_t i = 0; i < found.size() && i < 5; ++i)
    names += fmt::format("{}{}()", i ? ", " : "", found[i].second);
  return fmt::format("; functions with ref parameters here: {}{}", names,
                     found.size() > 5 ? ", ..." : "");
}

void Interp::traceEntryDirective(const Entry &entry) {
  const SourceRange r = entry.range;
  V kv = main_->dict->get(entry.kernel);
  if (!kv)
    fail(r, "python-directive",
         fmt::format("'# dkv: entry {}(...)': the file defines no {}{}", entry.kernel, entry.kernel,
                     kernelCandidates()));
  auto *kfp = dynCast<FunctionV>(kv);
  if (!kfp || !kfp->params)
    fail(r, "python-directive",
         fmt::format("'# dkv: entry {}(...)': {} is {}, not a Python function", entry.kernel,
                     entry.kernel, typeName(*kv)));
  const FunctionV &kf = *kfp;
  if (options_.mesh.empty())
    fail(r, "python-unknown-fact",
         fmt::format("no mesh for the entry {}(): add '# dkv: mesh x=N' (the shard_map's mesh: "
                     "its axis names and sizes)",
                     entry.kernel));
  MeshObj mesh;
  for (const auto &[axis, size] : options_.mesh) {
    mesh.names.push_back(axis);
    mesh.sizes.push_back(size);
  }
  mesh_ = makeApi(std::move(mesh));
  grid_ = entry.grid;
  hasCollective_ = entry.collectiveId.has_value();

  // The kernel's parameters, one to one with the entry's (a trailing parameter with a
  // default may be left out: it keeps its default).
  const auto &params = *kf.params;
  auto example = [&](const std::string &name) {
    return fmt::format("'# dkv: entry {}(..., in {}: f32[8, 128] @any, ...)' for an input ('out' "
                       "for an output, '{}: dma_sem' for a semaphore)",
                       entry.kernel, name, name);
  };
  for (size_t i = 0; i < params.size(); ++i) {
    const py::Param &p = params[i];
    if (p.kind == py::ParamKind::VarArgs || p.kind == py::ParamKind::VarKeywords)
      unsupported(p.range, "*args and **kwargs parameters of an entry kernel");
    bool positional =
        p.kind == py::ParamKind::Positional || p.kind == py::ParamKind::PositionalOnly;
    if (positional && i < entry.params.size()) {
      const EntryParam &e = entry.params[i];
      if (e.name != p.name)
        fail(e.range, "python-directive",
             fmt::format("parameter {} of {}() is '{}', and the entry directive names '{}' (the "
                         "entry lists the kernel's parameters in order, by their names)",
                         i + 1, entry.kernel, p.name, e.name));
      if (!e.typed)
        fail(e.range, "python-unknown-fact",
             fmt::format("no shape for parameter '{}' of {}: add its type to the entry, e.g. {}",
                         p.name, entry.kernel, example(p.name)));
      continue;
    }
    if (!(i < kf.defaults.size() && kf.defaults[i]))
      fail(r, "python-unknown-fact",
           fmt::format("no shape for parameter '{}' of {}: add it to the entry, e.g. {}", p.name,
                       entry.kernel, example(p.name)));
  }
  if (entry.params.size() > params.size())
    fail(entry.params[params.size()].range, "python-directive",
         fmt::format("{}() has {} parameters, and the entry directive lists {}", entry.kernel,
                     params.size(), entry.params.size()));
  for (size_t i = 0; i < entry.params.size(); ++i)
    if (params[i].kind != py::ParamKind::Positional &&
        params[i].kind != py::ParamKind::PositionalOnly)
      fail(entry.params[i].range, "python-directive",
           fmt::format("'{}' is a keyword-only parameter of {}(); pallas_call passes refs "
                       "positionally",
                       params[i].name, entry.kernel));

  beginKernel();
  std::vector<std::unique_ptr<ast::BufferDecl>> bufs;
  std::vector<std::unique_ptr<ast::Decl>> scratchDecls;
  Args kargs;
  for (size_t i = 0; i < entry.params.size(); ++i) {
    const EntryParam &e = entry.params[i];
    SourceRange pr = params[i].range;
    std::string n = fresh(e.name);
    std::vector<ast::ExprPtr> de;
    for (int64_t d : e.dims)
      de.push_back(std::make_unique<ast::IntLiteral>(pr, d));
    if (e.isSem) {
      auto bound = std::make_shared<RefV>(Kind::Sem);
      bound->name = n, bound->semKind = e.semKind, bound->dims = e.dims;
      scratchDecls.push_back(std::make_unique<ast::SemDecl>(pr, n, pr, ast::Storage::Scratch,
                                                            e.semKind, std::move(de)));
      kargs.pos.push_back(bound);
      continue;
    }
    auto ref = std::make_shared<RefV>(Kind::Ref);
    ref->name = n, ref->dims = e.dims, ref->dtype = e.dtype;
    kargs.pos.push_back(ref);
    if (e.role == EntryParam::Role::Scratch) {
      scratchDecls.push_back(std::make_unique<ast::BufferDecl>(
          pr, n, pr, ast::Storage::Scratch, ast::Direction::None, e.space, e.dtype, std::move(de)));
      continue;
    }
    bufs.push_back(std::make_unique<ast::BufferDecl>(
        pr, n, pr, ast::Storage::KernelParam,
        e.role == EntryParam::Role::In ? ast::Direction::In : ast::Direction::Out, e.space, e.dtype,
        std::move(de)));
  }
  // The mesh and the barrier sit at the kernel's def (the directive may be in a sidecar).
  finishKernel(kf, kf.range, std::move(bufs), std::move(scratchDecls), std::move(kargs),
               entry.collectiveId.value_or(-1), entry.skipDeviceBarrier);
}

} // namespace dkv::pytrace
