// Tables: the integer arrays (scalar-prefetch operands, SMEM integer inputs) whose
// contents decide DMA targets, sizes and offsets; their contents from the call site, a
// shard_map's division of them, `-T` / `--tables`, and their reads in the kernel
// (docs/python.md "Tables").
#include "pytrace/Interp.h"

#include <algorithm>

#include <fmt/format.h>

namespace dkv::pytrace {

// shard_map hands each device its block of an array: the contents stay whole when no
// dimension is divided (a replicated operand); when dimension 0 alone is divided over
// every device (P('x') on a one-axis mesh, P(('x', 'y')) naming every axis in the
// mesh's order), device d gets rows d * n : (d + 1) * n.
void Interp::shardContents(const HostArrayV &global, HostArrayV &local, const PSpecObj &spec,
                           const MeshObj &mesh, SourceRange r) {
  if (global.deviceContents)
    unsupported(r, "passing a block of a table to a nested shard_map");
  if (!global.contents)
    return;
  if (global.shape == local.shape) {
    local.contents = global.contents;
    return;
  }
  std::vector<std::string> axes;
  if (!spec.entries.empty()) {
    const V &entry = spec.entries[0];
    for (const V &ax : entry->kind == Kind::Str ? std::vector<V>{entry} : toVector(entry, r))
      if (auto *s = dynCast<StrV>(ax))
        axes.push_back(s->s);
  }
  bool onlyDim0 = true;
  for (size_t d = 1; d < global.shape.size(); ++d)
    onlyDim0 = onlyDim0 && global.shape[d] == local.shape[d];
  if (!onlyDim0 || axes != mesh.names)
    unsupported(r, "an integer array of known values divided by shard_map other than along "
                   "its first dimension over every mesh axis (in the mesh's order); dkv "
                   "keeps the values of replicated (P()) and row-sharded tables");
  size_t chunk = 1;
  for (int64_t d : local.shape)
    chunk *= static_cast<size_t>(d);
  std::vector<std::vector<int64_t>> per;
  for (int64_t dev = 0; dev < mesh.devices(); ++dev)
    per.emplace_back(global.contents->begin() + static_cast<long>(static_cast<size_t>(dev) * chunk),
                     global.contents->begin() +
                         static_cast<long>(static_cast<size_t>(dev + 1) * chunk));
  local.deviceContents = std::move(per);
}

// A table parameter: its default contents are the call site's values (one row per
// device when shard_map divided them), else the -T / --tables values (sema applies
// those over the defaults either way, and checks shape and range).
void Interp::makeTable(ast::BufferDecl &decl, const HostArrayV &arr,
                       const std::vector<int64_t> &shape, SourceRange r, bool scalarPrefetch) {
  std::string role = scalarPrefetch ? "a scalar-prefetch operand" : "an SMEM input";
  if (!ast::isInteger(decl.dtype()))
    unsupported(r, fmt::format("{} '{}' of a float element type (scalar-prefetch operands "
                               "are integer tables)",
                               role, decl.name()));
  auto lit = std::make_unique<ast::TableLiteral>();
  lit->range = r;
  auto add = [&](const std::vector<int64_t> &flat) {
    for (int64_t x : flat)
      lit->elements.push_back(std::make_unique<ast::IntLiteral>(r, x));
  };
  if (arr.deviceContents) {
    lit->shape = {static_cast<int64_t>(arr.deviceContents->size())};
    lit->shape.insert(lit->shape.end(), shape.begin(), shape.end());
    for (const auto &row : *arr.deviceContents)
      add(row);
  } else if (arr.contents) {
    lit->shape = shape;
    add(*arr.contents);
  } else if (auto it = options_.tables.find(decl.name()); it != options_.tables.end()) {
    lit->shape = it->second.shape;
    add(it->second.values);
  } else {
    fail(r, "python-table-contents",
         fmt::format("the contents of table '{}' ({}) are unknown: the call site passes an "
                     "array whose values this file does not state; give them with -T {}=[...] "
                     "or --tables FILE (docs/python.md \"Tables\")",
                     decl.name(), role, decl.name()));
  }
  decl.setTableInit(std::move(lit));
}

// `sizes_ref[i, j]`: one element of a table, an integer the kernel language reads as
// `sizes[i, j]` in any integer expression.
V Interp::tableRead(const V &table, const std::vector<V> &items, SourceRange r) {
  V v = view(table, items, r);
  const RefV &ref = *dynRef(v);
  // `idx_ref[...]` of a 0-d table: its one element, `idx_ref[0]` in the kernel language
  // (the table is declared with one element, Interp::callPallas).
  if (ref.dims.empty()) {
    auto e = std::make_shared<TExpr>();
    e->k = TExpr::K::Index, e->range = r, e->text = ref.name;
    e->subs.push_back(TSub{ast::Subscript::Kind::Index, teInt(r, 0), nullptr});
    return std::make_shared<TracedV>(e, TKind::Int);
  }
  // `ids = ids_ref[:]` / `ids_ref[...]`: the whole table, whose elements are then read
  // one at a time (`ids[i, 0]`), as the same table reads.
  if (std::all_of(ref.subs.begin(), ref.subs.end(),
                  [](const TSub &s) { return s.kind == ast::Subscript::Kind::Full; }))
    return v;
  for (size_t d = 0; d < ref.dims.size(); ++d)
    if (d >= ref.subs.size() || ref.subs[d].kind != ast::Subscript::Kind::Index)
      unsupported(r, fmt::format("reading table '{}' other than one element at a time (one "
                                 "index per dimension: it has {})",
                                 ref.name, ref.dims.size()));
  return std::make_shared<TracedV>(refTE(ref, r), TKind::Int);
}

} // namespace dkv::pytrace
