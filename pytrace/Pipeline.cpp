// `pltpu.emit_pipeline` from Python: the row that reads its arguments and the call that
// traces the pipeline into the kernel language's `emit_pipeline` statement
// (docs/language.md "Pipelines", docs/python.md "Pipelines"). Lowering expands that
// statement into Pallas' schedule (docs/model.md "emit_pipeline"); the tracer only
// evaluates the block specs' index maps and the body, as JAX traces them.
#include "pytrace/Interp.h"

#include <fmt/format.h>

namespace dkv::pytrace {

namespace {

bool given(const V &v) { return v && v->kind != Kind::None; }

/// The parameter names of a Python function (for the names of the traced values), or
/// `fallback_i` for a callable whose parameters dkv does not see.
std::vector<std::string> paramNames(const V &fn, size_t n, const std::string &fallback) {
  std::vector<std::string> out;
  auto *f = dynCast<FunctionV>(fn);
  for (size_t i = 0; i < n; ++i) {
    std::string name = fmt::format("{}{}", fallback, i);
    if (f && f->params && i < f->params->size()) {
      const py::Param &p = (*f->params)[i];
      if (p.kind == py::ParamKind::Positional || p.kind == py::ParamKind::PositionalOnly)
        name = p.name;
    }
    out.push_back(name);
  }
  return out;
}

/// in_specs / out_specs as emit_pipeline normalises them: a list or tuple of specs, a
/// single spec, or None (no operand).
std::vector<BlockSpecObj> specList(Interp &in, const V &v, SourceRange r, const char *what) {
  std::vector<BlockSpecObj> out;
  if (!given(v))
    return out;
  std::vector<V> items;
  if (v->kind == Kind::List || v->kind == Kind::Tuple)
    items = in.toVector(v, r);
  else
    items = {v};
  for (const V &s : items) {
    auto *bs = apiAs<BlockSpecObj>(s);
    if (!bs) {
      if (s->kind == Kind::Opaque)
        in.opaqueNeeded(s, r, fmt::format("an emit_pipeline {} entry", what));
      unsupported(r, fmt::format("an emit_pipeline {} entry that is a {} (dkv reads a flat list "
                                 "of pl.BlockSpec(block_shape, index_map))",
                                 what, typeName(*s)));
    }
    out.push_back(*bs);
  }
  return out;
}

/// Calls `fn` with the kernel statements it emits going to `into` (an index map, which may
/// emit none, or the pipeline's body).
V callInto(Interp &in, const V &fn, std::vector<V> args, SourceRange r,
           std::vector<ast::StmtPtr> &into, bool indexMap) {
  in.pushBlock(&into);
  bool inline_ = in.inlineLets_;
  in.inlineLets_ = indexMap;
  V result;
  try {
    result = in.call(fn, Args{std::move(args), {}}, r);
  } catch (...) {
    in.popBlock();
    in.inlineLets_ = inline_;
    throw;
  }
  in.popBlock();
  in.inlineLets_ = inline_;
  return result;
}

} // namespace

// Calling the pipeline on refs: one `emit_pipeline` statement. The block specs' index
// maps are called with the grid indices as traced names (the statement's lambda
// parameters) and the body with one VMEM block ref per operand, in the pipeline's grid
// environment (`pl.program_id` / `pl.num_programs` are the pipeline's, as in Pallas).
V Interp::callPipeline(const PipelineObj &p, Args args, SourceRange r) {
  // Each operand's copies and waits are located at its ref in the call, as in .dk.
  std::vector<SourceRange> refRanges = argRanges_;
  if (refRanges.size() != args.pos.size())
    refRanges.assign(args.pos.size(), r);
  // The pipeline function's keywords (pipeline.py `pipeline(*refs, scratches=None, ...)`):
  // none is modelled; each one given is refused by name.
  for (const auto &[k, v] : args.kw) {
    static const char *const known[] = {"scratches",  "allocations",       "first_cycle",
                                        "last_cycle", "init_accumulators", "prefetch",
                                        "postyeet",   "schedule",          "body_prologue"};
    bool isKnown = false;
    for (const char *n : known)
      isKnown = isKnown || k == n;
    if (!isKnown)
      raiseId("TypeError", fmt::format("pipeline() got an unexpected keyword argument '{}'", k), r);
    if (given(v))
      unsupported(r, fmt::format("calling an emit_pipeline with {}= (scratches, allocations "
                                 "kept across pipelines and the cycle, prefetch and postyeet "
                                 "hooks are not modelled; docs/model.md \"emit_pipeline\")",
                                 k));
  }
  std::vector<BlockSpecObj> ins = specList(*this, p.inSpecs, p.range, "in_specs");
  std::vector<BlockSpecObj> outs = specList(*this, p.outSpecs, p.range, "out_specs");
  size_t n = ins.size() + outs.size();
  if (args.pos.size() != n)
    fail(r, "python-call",
         fmt::format("the emit_pipeline has {} block spec{} ({} in, {} out) but is called on {} "
                     "ref{}",
                     n, n == 1 ? "" : "s", ins.size(), outs.size(), args.pos.size(),
                     args.pos.size() == 1 ? "" : "s"));

  // The grid: Python ints (Pallas also takes per-device sizes; the kernel language's
  // pipeline grid is a compile-time size).
  std::vector<V> gridItems;
  if (p.grid->kind == Kind::List || p.grid->kind == Kind::Tuple)
    gridItems = toVector(p.grid, p.range);
  else
    fail(p.range, "python-type", "emit_pipeline's grid must be a tuple of sizes");
  std::vector<int64_t> grid;
  std::vector<ast::ExprPtr> gridE;
  for (const V &g : gridItems) {
    if (g->kind == Kind::Traced)
      unsupported(p.range, "an emit_pipeline grid size that depends on the device (dkv's "
                           "pipeline grid is a compile-time size)");
    int64_t size = toIndex(g, p.range, "an emit_pipeline grid size");
    if (size <= 0)
      raise("ValueError",
            fmt::format("All elements in the grid must be strictly positive, but got {}", size),
            p.range);
    grid.push_back(size);
    gridE.push_back(std::make_unique<ast::IntLiteral>(p.range, size));
  }

  // Index maps and the body run in the pipeline's grid environment.
  std::vector<int64_t> outerGrid = grid_;
  grid_ = grid;
  struct Restore {
    Interp &in;
    std::vector<int64_t> grid;
    ~Restore() { in.grid_ = grid; }
  } restore{*this, outerGrid};

  std::vector<ast::PipelineOperand> operands;
  std::vector<V> blocks;
  std::vector<std::string> blockNames = paramNames(p.body, n, "block");
  for (size_t i = 0; i < n; ++i) {
    const BlockSpecObj &bs = i < ins.size() ? ins[i] : outs[i - ins.size()];
    ast::PipelineOperand op;
    op.output = i >= ins.size();
    op.specRange = bs.range;
    if (bs.pipelineMode)
      unsupported(bs.range, "a BlockSpec with pipeline_mode in emit_pipeline (other buffer "
                            "counts and lookahead are not modelled; docs/model.md "
                            "\"emit_pipeline\")");
    if ((bs.space && *bs.space != ast::MemSpace::Vmem) || bs.semaphore)
      unsupported(bs.range, "an emit_pipeline BlockSpec whose memory_space is not VMEM (the "
                            "block buffers are VMEM; another space is not modelled)");
    const V &refV = args.pos[i];
    auto *ref = dynCast<RefV>(refV);
    if (ref && ref->selectIndex)
      unsupported(r, "an emit_pipeline operand that pl.select_ref picks by a per-device index "
                     "(Pallas selects refs only for DMAs)");
    if (!ref || refV->kind != Kind::Ref) {
      if (refV->kind == Kind::Opaque)
        opaqueNeeded(refV, r, fmt::format("emit_pipeline operand {}", i + 1));
      fail(r, "python-type",
           fmt::format("emit_pipeline operand {}: expected a ref, got {}", i + 1, typeName(*refV)));
    }
    std::optional<std::vector<int64_t>> shape = viewShape(*ref);
    // The block shape: Python ints, or the whole operand without one (Pallas' default).
    std::vector<int64_t> block;
    if (bs.blockShape) {
      if (bs.blockShape->kind != Kind::Tuple && bs.blockShape->kind != Kind::List)
        fail(bs.range, "python-type", "a BlockSpec's block_shape must be a tuple of sizes");
      for (const V &d : toVector(bs.blockShape, bs.range)) {
        if (d->kind == Kind::None)
          unsupported(bs.range, "a squeezed (None) block dimension in emit_pipeline");
        if (d->kind == Kind::Traced)
          unsupported(bs.range, "a block size that depends on the device");
        if (d->kind != Kind::Int)
          unsupported(bs.range,
                      fmt::format("the block dimension {} in emit_pipeline (pl.Squeezed, "
                                  "pl.Element, pl.BoundedSlice and other block kinds are not "
                                  "modelled; a block dimension is an int)",
                                  typeName(*d)));
        block.push_back(cast<IntV>(d).i);
      }
    } else {
      if (!shape)
        unsupported(bs.range, "a BlockSpec without block_shape on an operand whose shape is "
                              "not static");
      block = *shape;
    }
    // The index map: one traced name per grid dimension; without one, block 0 everywhere.
    size_t rank = block.size();
    std::vector<std::string> mapNames = paramNames(bs.indexMap, grid.size(), "i");
    std::vector<V> mapArgs;
    for (size_t d = 0; d < grid.size(); ++d) {
      std::string name = fresh(mapNames[d]);
      op.mapParams.push_back(std::make_unique<ast::LoopVarDecl>(bs.range, name));
      mapArgs.push_back(std::make_shared<TracedV>(teName(bs.range, name), TKind::Int));
    }
    op.mapRange = bs.range;
    if (bs.indexMap) {
      if (auto *f = dynCast<FunctionV>(bs.indexMap))
        op.mapRange = f->range;
      // An index map is an expression of its parameters: a per-device value it assigns
      // to a name stays an expression (inlineLets_), and a statement it would emit (a
      // semaphore read, a DMA) would be outside the lambda.
      std::vector<ast::StmtPtr> emitted;
      V result = callInto(*this, bs.indexMap, mapArgs, op.mapRange, emitted, true);
      if (!emitted.empty())
        unsupported(emitted.front()->range(),
                    "an index map that emits a kernel statement (a semaphore read, a DMA, "
                    "...): an index map is an expression of the grid indices");
      std::vector<V> idx;
      if (result->kind == Kind::Tuple || result->kind == Kind::List)
        idx = toVector(result, op.mapRange);
      else
        unsupported(op.mapRange, fmt::format("an index map that returns a {} (dkv reads a "
                                             "tuple of block indices, one per dimension)",
                                             typeName(*result)));
      for (const V &e : idx)
        op.mapResult.push_back(build(*intTE(e, op.mapRange, "a block index")));
    } else {
      for (size_t d = 0; d < rank; ++d)
        op.mapResult.push_back(std::make_unique<ast::IntLiteral>(bs.range, 0));
    }
    SourceRange rr = refRanges[i];
    op.ref = ref->subs.empty() ? build(*teName(rr, ref->name)) : build(*refTE(*ref, rr));
    // The body's block ref: VMEM, the block shape, the operand's element type.
    std::string blockName = fresh(blockNames[i]);
    std::vector<ast::ExprPtr> dims;
    for (int64_t d : block)
      dims.push_back(std::make_unique<ast::IntLiteral>(bs.range, d));
    op.block = std::make_unique<ast::BufferDecl>(bs.range, blockName, bs.range,
                                                 ast::Storage::PipelineBlock, ast::Direction::None,
                                                 ast::MemSpace::Vmem, ref->dtype, std::move(dims));
    auto blk = std::make_shared<RefV>(Kind::Ref);
    blk->name = blockName, blk->dims = block, blk->dtype = ref->dtype;
    blocks.push_back(blk);
    operands.push_back(std::move(op));
  }

  auto body = std::make_unique<std::vector<ast::StmtPtr>>();
  V result = callInto(*this, p.body, blocks, r, *body, false);
  if (result->kind != Kind::None)
    raise("ValueError", "The emit_pipeline body function must return None.", r);
  SourceRange bodyRange = r;
  if (auto *f = dynCast<FunctionV>(p.body))
    bodyRange = f->range;
  emit(std::make_unique<ast::EmitPipelineStmt>(
      r, std::move(gridE), std::move(operands),
      std::make_unique<ast::Block>(bodyRange, std::move(*body))));
  return none();
}

// A blocked spec on a pallas_call operand is accepted when it is the spec Pallas gives an
// operand without one (`pallas_call` with in_specs=None: the whole array, index map
// returning zeros): the block is the whole operand and its index map gives block 0 at
// every point of the grid, so the block never changes and Pallas copies it in before the
// first step and out after the last, which is what a whole VMEM operand is in the model.
// The index map is called with each grid point's indices as Python ints.
bool Interp::wholeBlock(const BlockSpecObj &bs, const std::vector<int64_t> &shape,
                        const std::vector<int64_t> &grid, size_t prefetch) {
  if (bs.pipelineMode || prefetch > 0)
    return false;
  if (bs.blockShape) {
    if (bs.blockShape->kind != Kind::Tuple && bs.blockShape->kind != Kind::List)
      return false;
    std::vector<V> dims = toVector(bs.blockShape, bs.range);
    if (dims.size() != shape.size())
      return false;
    for (size_t d = 0; d < dims.size(); ++d)
      if (dims[d]->kind != Kind::Int || cast<IntV>(dims[d]).i != shape[d])
        return false;
  }
  if (!bs.indexMap)
    return true;
  int64_t points = 1;
  for (int64_t g : grid) {
    if (g < 1)
      return false;
    points *= g;
    if (points > 4096)
      return false;
  }
  std::vector<int64_t> at(grid.size(), 0);
  for (int64_t p = 0; p < points; ++p) {
    std::vector<V> idx;
    for (int64_t a : at)
      idx.push_back(integer(a));
    std::vector<ast::StmtPtr> emitted;
    V result = callInto(*this, bs.indexMap, idx, bs.range, emitted, true);
    if (!emitted.empty() || (result->kind != Kind::Tuple && result->kind != Kind::List))
      return false;
    std::vector<V> blockIdx = toVector(result, bs.range);
    if (blockIdx.size() != shape.size())
      return false;
    for (const V &b : blockIdx)
      if (b->kind != Kind::Int || cast<IntV>(b).i != 0)
        return false;
    // The next grid point, the last dimension fastest.
    for (size_t d = grid.size(); d-- > 0;) {
      if (++at[d] < grid[d])
        break;
      at[d] = 0;
    }
  }
  return true;
}

void registerPipeline(Registry &reg) {
  // pltpu.emit_pipeline's keywords across JAX versions (should_accumulate_out was removed
  // in jax-ml/jax 79c328ee27, tiling and _explicit_indices added later): each one that
  // would change the schedule is refused when given; the others are read.
  reg.addRow(ApiRow{
      {"jax.experimental.pallas.tpu.emit_pipeline"},
      BuiltinFn{"pltpu.emit_pipeline",
                +[](Interp &in, CallCtx &c) -> V {
                  std::vector<V> a = c.bind(
                      in, {"body", "*", "grid", "in_specs", "out_specs", "should_accumulate_out",
                           "tiling", "core_axis", "core_axis_name", "dimension_semantics",
                           "trace_scopes", "no_pipelining", "_explicit_indices"});
                  if (!a[0])
                    in.raiseId("TypeError",
                               "emit_pipeline() missing 1 required positional argument: 'body'",
                               c.range);
                  if (!a[1])
                    in.raiseId("TypeError",
                               "emit_pipeline() missing 1 required keyword-only argument: 'grid'",
                               c.range);
                  auto refuse = [&](const V &v, const char *name, const char *why) {
                    if (given(v) && in.truth(v, c.range, name))
                      unsupported(c.range, fmt::format("emit_pipeline({}=...): {}", name, why));
                  };
                  refuse(a[4], "should_accumulate_out",
                         "accumulating outputs are not modelled (pipeline.py removed them)");
                  if (given(a[5]))
                    unsupported(c.range, "emit_pipeline(tiling=...): the block buffers' tiling "
                                         "is not modelled");
                  if (given(a[6]) || given(a[7]))
                    unsupported(c.range, "emit_pipeline with core_axis / core_axis_name (the grid "
                                         "partitioned over TensorCores) is not modelled");
                  refuse(a[10], "no_pipelining", "synchronous copies are not modelled");
                  refuse(a[11], "_explicit_indices",
                         "a body that takes the pipeline step is not modelled");
                  // dimension_semantics only matters with a core axis (pipeline.py
                  // `_partition_grid` returns the grid unchanged without one): read and
                  // ignored; trace_scopes only names regions.
                  return makeApi(PipelineObj{a[0], a[1], a[2], a[3], c.range});
                },
                "emit_pipeline(grid = ..., in_specs = [...], out_specs = [...])(refs) "
                "lambda blocks { body }",
                false},
      nullptr});
}

} // namespace dkv::pytrace
