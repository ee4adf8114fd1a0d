// Lowering of a checked kernel to the concurrency model of one mesh instance.
//
// Every device walks the kernel body with its own environment (coordinates, grid
// point, loop variables, lets) and appends events to its process. Nothing here
// guesses: a value that is not known when the instance is built, in a place that
// decides control flow, a device or an address, is an `unsupported` error.
#include "lower/Lower.h"

#include "frontend/AST.h"
#include "frontend/IntEval.h"
#include "frontend/Sema.h"
#include "model/Builder.h"
#include "prim/Infer.h"
#include "support/Invariant.h"

#include <fmt/format.h>

#include <functional>

#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>
#include <variant>

namespace dkv::lower {

namespace {

using model::DeviceId;
using model::Region;
using model::SemId;

model::SourceLoc locOf(const ast::Node &node) { return node.range().begin; }

/// Where a block ends: its closing `}` (a range's end is one past its last character),
/// or its start when the parser gave no end.
model::SourceLoc closingLocOf(const ast::Node &node) {
  model::SourceLoc end = node.range().end;
  if (!end.valid())
    return node.range().begin;
  if (end.col > 1)
    --end.col;
  return end;
}

model::SemKind toModel(ast::SemKind k) {
  switch (k) {
  case ast::SemKind::Regular:
    return model::SemKind::Regular;
  case ast::SemKind::Dma:
    return model::SemKind::Dma;
  case ast::SemKind::Barrier:
    return model::SemKind::Barrier;
  }
  DKV_UNREACHABLE("semaphore kind");
}

/// A slice outside its buffer, found when a descriptor was made: an error only if the
/// descriptor is started (a wait reads no memory, only the semaphores and the byte count
/// of the views: Pallas' wait helpers wait on descriptors whose views are never accessed).
struct DeferredBoundsError {
  support::SourceRange range;
  std::string message;
};

/// An evaluated DMA descriptor (`let c = copy(...)` / `remote_copy(...)`). Indices,
/// semaphores and the device are fixed when the descriptor is made, as in Pallas.
struct Descriptor : model::DmaDescriptor {
  /// A view of it runs past the end of its buffer: its region is clipped to the buffer
  /// and `bytes` counts the view as written (docs/model.md "Waits on a descriptor").
  std::optional<DeferredBoundsError> outOfBounds;
};

/// A region and its shape after dropping the dimensions a single index selects.
struct Slice {
  Region region;
  std::vector<int64_t> shape;
  /// The dimensions of `region` that `shape` keeps (not dropped by a single index).
  std::vector<size_t> kept;
};

/// What an emit_pipeline block ref names at one step: a region of a buffer whose `kept`
/// dimensions are the block ref's dimensions (the others are fixed: the slot index of a
/// pipeline buffer, or single indices of the operand).
struct View {
  model::BufferId buffer = 0;
  std::vector<model::Range> ranges;
  std::vector<size_t> kept;
};

/// The model objects of one emit_pipeline operand (docs/model.md "emit_pipeline").
struct PipelineSlots {
  /// false: the operand is in VMEM and the block ref is a view of it (no copies).
  bool buffered = false;
  /// Trivial windowing: one buffer of the operand's whole shape, copied synchronously
  /// (tpu_helpers.sync_copy in its own run_scoped scope with one DMA semaphore).
  bool trivial = false;
  model::BufferId window = 0; ///< [2, block...] (trivial: [block...])
  SemId sems = 0;             ///< sem_recvs / sem_sends[2] (trivial: the sync_copy's one)
  model::ScopeId syncScope = 0;
};

/// A value read from a semaphore at run time (only usable as stored data).
struct RuntimeValue {
  model::RegisterId reg = 0;
};

using Value = std::variant<int64_t, bool, Descriptor, RuntimeValue>;

/// One element of a descriptor variable (`var c` has one, `var cs[n]` n) that has been
/// assigned on the path lowering walks; an element without a slot holds no descriptor
/// (Python's None).
struct VarSlot {
  Descriptor descriptor;
  /// The assignment failed (already reported): uses stay silent.
  bool poisoned = false;
};
/// The assigned elements of one descriptor variable, by index (empty for `var c`).
using VarSlots = std::map<std::vector<int64_t>, VarSlot>;

/// What lowering knows about one element of an integer scratch (docs/language.md
/// "Integer scratch") on the device it walks: nothing stored yet in this invocation, the
/// integer a store wrote, or data (a semaphore value or a load, stored at `where`).
struct ScratchInt {
  enum class State { Unset, Known, Data };
  State state = State::Unset;
  int64_t value = 0;
  support::SourceRange where;
};

/// Thrown inside one statement's lowering after a diagnostic was reported, to skip
/// the rest of that statement. Never leaves this file.
struct StatementError {};
/// Thrown when the instance exceeds the limits; stops lowering with an
/// `instance-too-large` error at `range`.
struct TooLarge {
  support::SourceRange range;
  std::string message;
};

class Lowering {
public:
  Lowering(const ast::Module &module, const std::string &file, const model::Options &options,
           support::DiagnosticEngine &diags, const model::BuildLimits &limits)
      : module_(module), diags_(diags), requestedInvocations_(options.invocations),
        builder_(file, programName(module), kernelOptions(module, options),
                 !module.sequence() && module.kernel() && module.kernel()->collectiveId(), limits) {
  }

  std::optional<model::Program> run() {
    const ast::KernelDecl *kernel = module_.kernel();
    const ast::MeshDecl *mesh = module_.mesh();
    DKV_INVARIANT(kernel && mesh, "lowering needs a checked module with a mesh and a kernel");
    kernel_ = kernel;
    const ast::SequenceDecl *sequence = module_.sequence();

    std::vector<model::MeshAxis> axes;
    for (const auto &axis : mesh->axes()) {
      DKV_INVARIANT(axis->size().has_value(), "sema sets every axis size");
      axes.push_back({axis->name(), *axis->size()});
    }
    std::optional<model::MeshAxis> cores;
    if (const ast::AxisDecl *core = module_.coreAxis()) {
      DKV_INVARIANT(core->size().has_value(), "sema sets the size of the TensorCore axis");
      cores = model::MeshAxis{core->name(), *core->size()};
    }
    if (std::optional<model::BuildError> error = builder_.setMesh(std::move(axes), cores)) {
      diags_.error(mesh->range(), error->id, error->message);
      return std::nullopt;
    }
    if (std::optional<model::BuildError> error = builder_.checkOptions()) {
      // A command-line option: no position, but about the module's file.
      support::SourceLoc noPosition{0, 0, module_.range().begin.file};
      diags_.error({noPosition, {}}, error->id, error->message);
      return std::nullopt;
    }
    try {
      if (sequence)
        declareSequence(*sequence);
      else
        declare(*kernel);
      for (DeviceId d = 0; d < builder_.deviceCount(); ++d)
        lowerDevice(d);
    } catch (const TooLarge &e) {
      diags_.error(e.range, "instance-too-large", e.message);
      return std::nullopt;
    }
    if (diags_.hasErrors())
      return std::nullopt;
    return builder_.finish();
  }

private:
  /// The options of the instance: a kernel with `skip_device_barrier(true)` has no
  /// entry barrier, as with --no-entry-barrier (docs/model.md "Entry barrier").
  static model::Options kernelOptions(const ast::Module &module, model::Options options) {
    if (!module.sequence() && module.kernel() && module.kernel()->skipDeviceBarrierValue())
      options.entryBarrier = false;
    return options;
  }

  /// The kernel's name; for a sequence the names of its calls, joined by '+'.
  static std::string programName(const ast::Module &module) {
    if (const ast::SequenceDecl *q = module.sequence()) {
      std::vector<std::string> names;
      for (const ast::SequenceCall &c : q->calls())
        names.push_back(c.kernel);
      return fmt::format("{}", fmt::join(names, "+"));
    }
    return module.kernel() ? module.kernel()->name() : std::string();
  }

  /// A sequence (docs/model.md "Kernel sequences"): its arrays live on every device
  /// from the first to the last call that takes them; each called kernel's scratch,
  /// scoped allocations and barrier semaphore are its own (named `kernel.name`), and
  /// its parameters are the arrays its calls pass. A kernel called twice has one set
  /// of scratch, as with --invocations.
  void declareSequence(const ast::SequenceDecl &q) {
    const std::vector<ast::SequenceCall> &calls = q.calls();
    auto liveOf = [&](const ast::Decl *array) {
      int32_t first = -1, last = -1;
      for (size_t i = 0; i < calls.size(); ++i)
        for (const ast::Decl *a : calls[i].argDecls)
          if (a == array) {
            if (first < 0)
              first = static_cast<int32_t>(i);
            last = static_cast<int32_t>(i);
          }
      // An array no call takes: it receives nothing (every kernel names only its own).
      return std::make_pair(std::max(first, 0), std::max(last, 0));
    };
    for (const ast::Decl *array : q.order()) {
      auto [first, last] = liveOf(array);
      if (const auto *b = ast::dynCast<ast::BufferDecl>(array)) {
        declareBuffer(*b, model::kKernelScope);
        if (!b->isTable()) // a table is instance data, no buffer
          builder_.setBufferOwner(bufferOf_.at(b), -1, first, last);
      } else if (const auto *sd = ast::dynCast<ast::SemDecl>(array)) {
        declareSem(*sd, model::kKernelScope);
        const std::vector<int64_t> &dims = sd->dimValues();
        int64_t count = 1;
        for (int64_t d : dims)
          count *= d;
        for (int64_t e = 0; e < count; ++e)
          builder_.setSemOwner(semBase_.at(sd) + static_cast<SemId>(e), -1, first, last);
      }
    }
    std::vector<std::string> names;
    std::vector<model::Call> modelCalls;
    std::map<const ast::KernelDecl *, int32_t> index;
    for (const ast::SequenceCall &call : calls) {
      DKV_INVARIANT(call.decl && call.argDecls.size() == call.decl->paramOrder().size(),
                    "sema resolves every call of a sequence");
      const ast::KernelDecl &k = *call.decl;
      auto [it, fresh] = index.emplace(&k, static_cast<int32_t>(names.size()));
      if (fresh) {
        names.push_back(k.name());
        declareCalled(k, it->second);
      }
      model::Call c;
      c.kernel = it->second;
      c.implicitBarrier = !k.collectiveId() && !k.skipDeviceBarrierValue();
      c.loc = call.range.begin;
      modelCalls.push_back(c);
      std::vector<const ast::Decl *> params = k.paramOrder();
      for (size_t i = 0; i < params.size(); ++i)
        bindings_[modelCalls.size() - 1].push_back({params[i], call.argDecls[i]});
    }
    // --invocations K runs the whole sequence K times in a row (docs/model.md "Kernel
    // sequences"): a jitted step of consecutive pallas_calls called in a loop.
    builder_.setSequence(std::move(names), std::move(modelCalls), requestedInvocations_);
  }

  /// Scratch, scoped allocations and the barrier semaphore of kernel `k` (index `kernel`
  /// of the sequence), named `k.name`.
  void declareCalled(const ast::KernelDecl &k, int32_t kernel) {
    const size_t buffers = program().buffers.size();
    const size_t sems = program().semaphores.size();
    prefix_ = k.name() + ".";
    if (const ast::SemDecl *barrier = k.barrier())
      semBase_[barrier] = builder_.addBarrierSemaphore(locOf(*barrier), prefix_ + "barrier");
    declareBlock(k.body(), model::kKernelScope);
    prefix_.clear();
    for (size_t b = buffers; b < program().buffers.size(); ++b)
      builder_.setBufferOwner(static_cast<model::BufferId>(b), kernel, -1, -1);
    for (size_t x = sems; x < program().semaphores.size(); ++x)
      builder_.setSemOwner(static_cast<SemId>(x), kernel, -1, -1);
  }

  /// Binds kernel parameters to the arrays call `call` passes.
  void bindCall(size_t call) {
    for (const auto &[param, array] : bindings_[call]) {
      if (const auto *b = ast::dynCast<ast::BufferDecl>(param); b && b->tableFromCall())
        tableOf_[b] = &ast::cast<ast::BufferDecl>(*array); // a table: its contents, no buffer
      else if (b)
        bufferOf_[b] = bufferOf_.at(&ast::cast<ast::BufferDecl>(*array));
      else if (const auto *sd = ast::dynCast<ast::SemDecl>(param))
        semBase_[sd] = semBase_.at(&ast::cast<ast::SemDecl>(*array));
    }
  }

  // ---- Declarations: buffers, semaphores, scopes (the same on every device). ----

  const model::Program &program() const { return builder_.program(); }

  void declare(const ast::KernelDecl &kernel) {
    for (const auto &param : kernel.params())
      declareBuffer(*param, model::kKernelScope);
    if (const ast::SemDecl *barrier = kernel.barrier()) {
      semBase_[barrier] = builder_.addBarrierSemaphore(locOf(*barrier));
    }
    declareBlock(kernel.body(), model::kKernelScope);
  }

  void declareBlock(const ast::Block &block, model::ScopeId scope) {
    for (const auto &stmt : block.stmts()) {
      if (const auto *s = ast::dynCast<ast::LetStmt>(stmt.get())) {
        declareValue(s->decl(), s->decl().init().type(), scope);
      } else if (const auto *s = ast::dynCast<ast::VarStmt>(stmt.get())) {
        for (const auto &v : s->decls())
          if (v->isValue())
            declareValue(*v, v->init()->type(), scope);
      } else if (const auto *s = ast::dynCast<ast::ScratchStmt>(stmt.get())) {
        for (const auto &decl : s->decls())
          declareDecl(*decl, scope);
      } else if (const auto *s = ast::dynCast<ast::RunScopedStmt>(stmt.get())) {
        model::ScopeId id =
            builder_.addScope(fmt::format("run_scoped@{}", locOf(*s).line), scope, locOf(*s));
        scopeOf_[s] = id;
        for (const auto &decl : s->decls())
          declareDecl(*decl, id);
        declareBlock(s->body(), id);
      } else if (const auto *s = ast::dynCast<ast::IfStmt>(stmt.get())) {
        for (const auto &branch : s->branches())
          declareBlock(*branch.body, scope);
        if (s->elseBody())
          declareBlock(*s->elseBody(), scope);
      } else if (const auto *s = ast::dynCast<ast::ForStmt>(stmt.get())) {
        declareBlock(s->body(), scope);
      } else if (const auto *s = ast::dynCast<ast::EmitPipelineStmt>(stmt.get())) {
        declarePipeline(*s, scope);
      }
    }
  }

  /// True if `expr` uses `decl` (a syntactic test, as Pallas' jaxpr test of an index map).
  static bool mentions(const ast::Expr &expr, const ast::Decl *decl) {
    switch (expr.kind()) {
    case ast::Node::Kind::NameExpr:
      return ast::cast<ast::NameExpr>(expr).decl() == decl;
    case ast::Node::Kind::UnaryExpr:
      return mentions(ast::cast<ast::UnaryExpr>(expr).operand(), decl);
    case ast::Node::Kind::BinaryExpr: {
      const auto &b = ast::cast<ast::BinaryExpr>(expr);
      return mentions(b.lhs(), decl) || mentions(b.rhs(), decl);
    }
    case ast::Node::Kind::SelectExpr: {
      const auto &c = ast::cast<ast::SelectExpr>(expr);
      return mentions(c.cond(), decl) || mentions(c.ifTrue(), decl) || mentions(c.ifFalse(), decl);
    }
    case ast::Node::Kind::CallExpr:
      return mentions(ast::cast<ast::CallExpr>(expr).arg(), decl);
    case ast::Node::Kind::IndexExpr: {
      const auto &ix = ast::cast<ast::IndexExpr>(expr);
      for (const ast::Subscript &sub : ix.subscripts())
        if ((sub.lo && mentions(*sub.lo, decl)) || (sub.hi && mentions(*sub.hi, decl)))
          return true;
      return false;
    }
    default:
      return false;
    }
  }

  /// Pallas' `_spec_has_trivial_windowing`: the block is the whole operand and the index
  /// map uses no grid index of a dimension larger than 1.
  static bool trivialWindowing(const ast::EmitPipelineStmt &p, const ast::PipelineOperand &op,
                               const std::vector<int64_t> &fullShape) {
    if (op.block->shapeValues() != fullShape)
      return false;
    const std::vector<int64_t> &grid = p.gridValues();
    for (size_t d = 0; d < op.mapParams.size() && d < grid.size(); ++d)
      if (grid[d] != 1)
        for (const auto &e : op.mapResult)
          if (mentions(*e, op.mapParams[d].get()))
            return false;
    return true;
  }

  /// The run_scoped allocations of an emit_pipeline (pipeline.py
  /// `_make_pipeline_allocations` / `BufferedRef.create`): per operand outside VMEM a
  /// VMEM buffer of two blocks and two DMA semaphores (sem_recvs for an input,
  /// sem_sends for an output); with trivial windowing one whole-operand buffer.
  void declarePipeline(const ast::EmitPipelineStmt &p, model::ScopeId parent) {
    model::ScopeId id =
        builder_.addScope(fmt::format("emit_pipeline@{}", locOf(p).line), parent, locOf(p));
    pipelineScope_[&p] = id;
    for (const ast::PipelineOperand &op : p.operands()) {
      const auto *src = ast::dynCast<ast::BufferDecl>(baseDecl(*op.ref));
      DKV_INVARIANT(src, "sema checks emit_pipeline operands");
      PipelineSlots slots;
      if (src->space() != ast::MemSpace::Vmem) {
        slots.buffered = true;
        // The operand's static shape (a sliced operand keeps its kept dimensions).
        std::vector<int64_t> full = op.ref->type().shape;
        slots.trivial = trivialWindowing(p, op, full);
        model::Buffer window;
        window.name = op.block->name();
        window.space = model::MemSpace::Vmem;
        window.dtype = op.block->dtype();
        window.shape = op.block->shapeValues();
        if (!slots.trivial)
          window.shape.insert(window.shape.begin(), 2);
        window.role = model::BufferRole::Scratch;
        window.scope = id;
        window.loc = locOf(*op.block);
        model::Built<model::BufferId> w = builder_.addBuffer(std::move(window));
        if (!w.ok())
          throw TooLarge{op.specRange, w.error().message};
        slots.window = *w;
        model::ScopeId semScope = id;
        std::vector<int64_t> semDims{2};
        std::string semName = op.block->name() + (op.output ? "_sem_sends" : "_sem_recvs");
        if (slots.trivial) {
          semScope = builder_.addScope(fmt::format("sync_copy@{}", locOf(*op.ref).line), id,
                                       locOf(*op.ref));
          slots.syncScope = semScope;
          semDims.clear();
          semName = op.block->name() + "_sync_sem";
        }
        model::Built<SemId> sems = builder_.addSemaphores(semName, semDims, model::SemKind::Dma,
                                                          semScope, op.specRange.begin);
        if (!sems.ok())
          throw TooLarge{op.specRange, sems.error().message};
        slots.sems = *sems;
      }
      pipelineSlots_[&op] = slots;
    }
    declareBlock(p.body(), id);
  }

  /// A let bound to an array value, or a value variable (docs/language.md "Values in
  /// names"), holds it in a buffer of its own, named after it, that only its let or
  /// assignments write: the loads of its value happen there, as when Python binds
  /// `x = ref[...]`.
  void declareValue(const ast::Decl &let, const ast::Type &t, model::ScopeId scope) {
    if (t.kind != ast::TypeKind::Value && t.kind != ast::TypeKind::Ref)
      return;
    model::Buffer buffer;
    buffer.name = prefix_ + let.name();
    buffer.space = model::MemSpace::Vmem;
    buffer.dtype = t.dtype;
    buffer.shape = t.shape;
    for (int64_t d : buffer.shape)
      DKV_INVARIANT(d >= 1, "sema checks that a value let has a static shape");
    buffer.role = model::BufferRole::Scratch;
    buffer.scope = scope;
    buffer.loc = locOf(let);
    model::Built<model::BufferId> id = builder_.addBuffer(std::move(buffer));
    if (!id.ok())
      throw TooLarge{let.range(), id.error().message};
    valueBuf_[&let] = *id;
  }

  void declareDecl(const ast::Decl &decl, model::ScopeId scope) {
    if (const auto *b = ast::dynCast<ast::BufferDecl>(&decl))
      declareBuffer(*b, scope);
    else if (const auto *s = ast::dynCast<ast::SemDecl>(&decl))
      declareSem(*s, scope);
  }

  void declareBuffer(const ast::BufferDecl &b, model::ScopeId scope) {
    if (b.isTable()) {
      // Its values are fixed for the instance and read while lowering; no accesses.
      builder_.addTable(b.name(), tableText(b));
      return;
    }
    model::Buffer buffer;
    buffer.name = prefix_ + b.name();
    buffer.space = b.space();
    buffer.dtype = b.dtype();
    buffer.shape = b.shapeValues();
    DKV_INVARIANT(buffer.shape.size() == b.shape().size(), "sema sets every buffer shape");
    switch (b.direction()) {
    case ast::Direction::In:
      buffer.role = model::BufferRole::Input;
      break;
    case ast::Direction::Out:
      buffer.role = model::BufferRole::Output;
      break;
    case ast::Direction::InOut:
      buffer.role = model::BufferRole::InOut;
      break;
    case ast::Direction::None:
      buffer.role = model::BufferRole::Scratch;
      break;
    }
    buffer.scope = scope;
    buffer.loc = locOf(b);
    model::Built<model::BufferId> id = builder_.addBuffer(std::move(buffer));
    if (!id.ok())
      throw TooLarge{b.range(), id.error().message};
    bufferOf_[&b] = *id;
  }

  void declareSem(const ast::SemDecl &s, model::ScopeId scope) {
    const std::vector<int64_t> &dims = s.dimValues();
    DKV_INVARIANT(dims.size() == s.dims().size(), "sema sets every semaphore array size");
    model::Built<SemId> first =
        builder_.addSemaphores(prefix_ + s.name(), dims, toModel(s.semKind()), scope, locOf(s));
    if (!first.ok())
      throw TooLarge{s.range(), first.error().message};
    semBase_[&s] = *first;
  }

  /// The contents of a table as the report names them: `[0, 8]` (every device) or
  /// `[[0, 8], [8, 0]]` (one row per device), nested as the table's shape.
  static std::string tableText(const ast::BufferDecl &b) {
    const std::vector<int64_t> &shape = b.shapeValues();
    auto rowText = [&](const std::vector<int64_t> &row) {
      // Nest the row-major elements by the shape, innermost first.
      std::vector<std::string> items;
      for (int64_t v : row)
        items.push_back(std::to_string(v));
      for (size_t k = shape.size(); k-- > 0;) {
        std::vector<std::string> grouped;
        for (size_t i = 0; i < items.size(); i += static_cast<size_t>(shape[k]))
          grouped.push_back(fmt::format(
              "[{}]", fmt::join(items.begin() + static_cast<std::ptrdiff_t>(i),
                                items.begin() + static_cast<std::ptrdiff_t>(i + shape[k]), ", ")));
        items = std::move(grouped);
      }
      return items.empty() ? std::string("[]") : items[0];
    };
    const auto &rows = b.tableRows();
    if (rows.size() == 1)
      return rowText(rows[0]);
    std::vector<std::string> texts;
    for (const auto &row : rows)
      texts.push_back(rowText(row));
    return fmt::format("[{}]", fmt::join(texts, ", "));
  }

  // ---- Per-device walk. ----

  void lowerDevice(DeviceId device) {
    device_ = device;
    coords_ = builder_.beginDevice(device);
    chip_ = device / program().coresPerDevice();
    core_ = device % program().coresPerDevice();
    if (const ast::SequenceDecl *q = module_.sequence()) {
      // Run r of the sequence is invocations r * C .. r * C + C - 1 (C calls).
      const size_t length = q->calls().size();
      for (int32_t run = 0; run < program().sequenceRuns(); ++run)
        for (size_t i = 0; i < length; ++i) {
          kernel_ = q->calls()[i].decl;
          callName_ = kernel_->name();
          bindCall(i);
          lowerInvocation(static_cast<int32_t>(static_cast<size_t>(run) * length + i));
        }
      return;
    }
    for (int32_t inv = 0; inv < program().options.invocations; ++inv)
      lowerInvocation(inv);
  }

  /// Invocation `inv` of kernel_ on the current device: its grid points in order.
  void lowerInvocation(int32_t inv) {
    const std::vector<int64_t> &grid = kernel_->gridValues();
    DKV_INVARIANT(grid.size() == kernel_->grid().size(), "sema sets every grid size");
    // Sema checked each dimension; their product may still be absurd.
    support::IntResult product = support::checkedProduct(grid);
    int64_t points = product.ok() ? product.value : INT64_MAX;
    invocation_ = inv;
    spendIterations(points, kernel_->range());
    programIds_.clear();
    loopVars_.clear();
    // Scratch is allocated anew for every invocation: its integers start unset.
    scratchInts_.clear();
    setContext();
    built(builder_.enterKernel(inv, locOf(*kernel_), context()), *kernel_);
    std::vector<int64_t> point(grid.size(), 0);
    for (int64_t p = 0; p < points; ++p) {
      programIds_ = point;
      env_.clear();
      vars_.clear();
      poisoned_.clear();
      setContext();
      lowerBlock(kernel_->body());
      for (size_t k = grid.size(); k-- > 0;) {
        if (++point[k] < grid[k])
          break;
        point[k] = 0;
      }
    }
    programIds_.clear();
    setContext();
    built(builder_.exitKernel(inv, closingLocOf(*kernel_), context()), *kernel_);
  }

  /// The context (invocation, grid point, loop variables) changed; its name is made
  /// when the next event needs it, so that iterations without events stay cheap.
  void setContext() { contextDirty_ = true; }

  void refreshContext() {
    contextDirty_ = false;
    std::string text = callName_.empty() ? fmt::format("inv {}", invocation_)
                                         : fmt::format("call {} {}", invocation_, callName_);
    if (!programIds_.empty())
      text += fmt::format(", grid ({})", fmt::join(programIds_, ", "));
    for (const auto &[name, value] : loopVars_)
      text += fmt::format(", {}={}", name, value);
    context_ = builder_.context(text, programIds_);
  }

  /// The context of the next event.
  model::ContextId context() {
    if (contextDirty_)
      refreshContext();
    return context_;
  }

  /// Reports what the builder refused at `node` (an instance too large stops lowering).
  void built(std::optional<model::BuildError> error, const ast::Node &node) {
    if (!error)
      return;
    if (error->fatal)
      throw TooLarge{kernel_->range(), error->message};
    fail(node, error->id, error->message);
  }

  void emit(model::EventKind event, model::SourceLoc loc) {
    // The only error of append is the event limit; it names the whole kernel.
    if (std::optional<model::BuildError> error = builder_.append(std::move(event), loc, context()))
      throw TooLarge{kernel_->range(), error->message};
  }

  void lowerBlock(const ast::Block &block) {
    for (const auto &stmt : block.stmts()) {
      try {
        lowerStmt(*stmt);
      } catch (const StatementError &) {
        // The diagnostic is reported; go on with the next statement so that one
        // run shows every error.
      }
    }
  }

  void lowerStmt(const ast::Stmt &stmt) {
    switch (stmt.kind()) {
    case ast::Node::Kind::ScratchStmt:
      return; // declared once for all devices
    case ast::Node::Kind::RunScopedStmt: {
      const auto &s = ast::cast<ast::RunScopedStmt>(stmt);
      model::ScopeId scope = scopeOf_.at(&s);
      for (const auto &decl : s.decls())
        if (const auto *b = ast::dynCast<ast::BufferDecl>(decl.get()))
          scratchInts_.erase(bufferOf_.at(b));
      emit(model::ScopeEnter{scope}, locOf(s));
      lowerBlock(s.body());
      emit(model::ScopeExit{scope}, closingLocOf(s));
      return;
    }
    case ast::Node::Kind::LetStmt:
      return lowerLet(ast::cast<ast::LetStmt>(stmt));
    case ast::Node::Kind::VarStmt:
      // Python's `c = None` (or `cs = [None] * n`): every element unassigned; an integer
      // variable takes its initial value.
      for (const auto &decl : ast::cast<ast::VarStmt>(stmt).decls()) {
        if (decl->isValue()) {
          storeValue(*decl, *decl->init(), stmt);
          continue;
        }
        if (const ast::Expr *init = decl->init()) {
          try {
            env_[decl.get()] = evalInt(*init);
          } catch (const StatementError &) {
            env_.erase(decl.get());
            poisoned_.insert(decl.get());
          }
          continue;
        }
        vars_[decl.get()].clear();
      }
      return;
    case ast::Node::Kind::IfStmt: {
      const auto &s = ast::cast<ast::IfStmt>(stmt);
      for (const auto &branch : s.branches())
        if (evalBool(*branch.cond)) {
          lowerBlock(*branch.body);
          return;
        }
      if (s.elseBody())
        lowerBlock(*s.elseBody());
      return;
    }
    case ast::Node::Kind::ForStmt: {
      const auto &s = ast::cast<ast::ForStmt>(stmt);
      int64_t lo = evalInt(s.lo());
      int64_t hi = evalInt(s.hi());
      int64_t count = 0;
      if (hi > lo && __builtin_sub_overflow(hi, lo, &count))
        count = INT64_MAX;
      // Before unrolling: a huge loop with an empty body would otherwise just spin.
      spendIterations(count, s.range());
      const ast::LoopVarDecl *var = &s.var();
      for (int64_t i = lo; i < hi; ++i) {
        env_[var] = i;
        loopVars_.emplace_back(var->name(), i);
        setContext();
        lowerBlock(s.body());
        loopVars_.pop_back();
      }
      env_.erase(var);
      setContext();
      return;
    }
    case ast::Node::Kind::StoreStmt:
      return lowerStore(ast::cast<ast::StoreStmt>(stmt));
    case ast::Node::Kind::EmitPipelineStmt:
      return lowerPipeline(ast::cast<ast::EmitPipelineStmt>(stmt));
    case ast::Node::Kind::DmaStmt:
      return lowerDma(ast::cast<ast::DmaStmt>(stmt));
    case ast::Node::Kind::SignalStmt: {
      const auto &s = ast::cast<ast::SignalStmt>(stmt);
      SemId sem = evalSem(s.sem());
      int64_t amount = s.inc() ? evalInt(*s.inc()) : 1;
      if (amount < 0)
        fail(*s.inc(), "negative-amount",
             fmt::format("signal increment is {} (on {}); it must be >= 0", amount, here()));
      checkAmount(s.inc(), amount, "signal increment");
      DeviceId target = evalTarget(s.device(), s.coreIndex(), s);
      emit(model::Signal{target, sem, amount}, locOf(s));
      return;
    }
    case ast::Node::Kind::WaitStmt: {
      const auto &s = ast::cast<ast::WaitStmt>(stmt);
      SemId sem = evalSem(s.sem());
      int64_t amount = s.value() ? evalInt(*s.value()) : 1;
      if (amount < 0)
        fail(*s.value(), "negative-amount",
             fmt::format("wait value is {} (on {}); it must be >= 0", amount, here()));
      checkAmount(s.value(), amount, "wait value");
      emit(model::SemWait{sem, amount, model::WaitOrigin::Wait}, locOf(s));
      return;
    }
    default:
      DKV_UNREACHABLE("statement kind");
    }
  }

  /// Counts `count` grid points or loop iterations against the instance's budget.
  void spendIterations(int64_t count, support::SourceRange where) {
    if (std::optional<model::BuildError> error = builder_.spendIterations(count))
      throw TooLarge{where, error->message};
  }

  /// Amounts beyond the 32-bit semaphores of a TPU (sema checks constant ones).
  void checkAmount(const ast::Expr *expr, int64_t amount, std::string_view what) {
    if (expr && amount > frontend::kMaxSemaphoreAmount)
      fail(*expr, "amount-too-large",
           fmt::format("{} is {} (on {}); it must be at most {}", what, amount, here(),
                       frontend::kMaxSemaphoreAmount));
  }

  void lowerLet(const ast::LetStmt &stmt) {
    try {
      lowerLetInit(stmt);
    } catch (const StatementError &) {
      // The binding has no value: later uses of it fail silently instead of
      // repeating the error as "not defined here".
      poisoned_.insert(&stmt.decl());
      throw;
    }
  }

  /// The descriptor a `copy(...)` / `remote_copy(...)` makes in statement `stmt` (its
  /// location is the descriptor's); `async_copy` / `async_remote_copy` also start it
  /// there, as Pallas' `async_copy` is `make_async_copy(...).start()`.
  Descriptor makeDescriptor(const ast::Expr &expr, const ast::Stmt &stmt) {
    Descriptor d;
    bool started = false;
    if (const auto *c = ast::dynCast<ast::CopyExpr>(&expr)) {
      Slice src = evalSlice(c->src(), &d.outOfBounds);
      Slice dst = evalSlice(c->dst(), &d.outOfBounds);
      d.src = src.region;
      d.dst = dst.region;
      d.recvSem = evalSem(c->sem());
      d.target = device_;
      d.loc = locOf(stmt);
      d.bytes = checkCopyShapes(*c, src, dst);
      started = c->started();
    } else {
      const auto &r = ast::cast<ast::RemoteCopyExpr>(expr);
      d.remote = true;
      Slice src = evalSlice(r.src(), &d.outOfBounds);
      Slice dst = evalSlice(r.dst(), &d.outOfBounds);
      d.src = src.region;
      d.dst = dst.region;
      d.sendSem = evalSem(r.sendSem());
      d.recvSem = evalSem(r.recvSem());
      d.target = evalTarget(&r.device(), nullptr, r);
      d.loc = locOf(stmt);
      d.bytes = checkCopyShapes(r, src, dst);
      started = r.started();
    }
    if (started)
      startDma(d, stmt);
    return d;
  }

  void lowerLetInit(const ast::LetStmt &stmt) {
    const ast::LetDecl &decl = stmt.decl();
    const ast::Expr &init = decl.init();
    if (ast::isa<ast::CopyExpr>(init) || ast::isa<ast::RemoteCopyExpr>(init)) {
      env_[&decl] = makeDescriptor(init, stmt);
      return;
    }
    if (const auto *call = ast::dynCast<ast::CallExpr>(&init);
        call && call->builtin() == ast::Builtin::Read) {
      SemId sem = evalSem(call->arg());
      auto it = registerOf_.find(&decl);
      if (it == registerOf_.end())
        it = registerOf_.emplace(&decl, builder_.addRegister()).first;
      emit(model::SemRead{sem, it->second}, locOf(stmt));
      env_[&decl] = RuntimeValue{it->second};
      return;
    }
    if (valueBuf_.count(&decl))
      return storeValue(decl, init, stmt);
    if (init.type().kind == ast::TypeKind::Bool)
      env_[&decl] = evalBool(init);
    else
      env_[&decl] = evalInt(init);
  }

  /// An array value bound to a let or a value variable: stored into its buffer at
  /// `stmt`, where its loads happen.
  void storeValue(const ast::Decl &decl, const ast::Expr &init, const ast::Stmt &stmt) {
    model::Store store;
    const model::BufferId id = valueBuf_.at(&decl);
    const model::Buffer &buffer = program().buffers[id];
    store.dst.buffer = id;
    for (int64_t d : buffer.shape)
      store.dst.ranges.push_back({0, d});
    nodeTypes_.clear();
    int32_t value = buildValue(init, store);
    const std::vector<int64_t> &shape = store.value.nodes[value].shape;
    if (elements(shape) != 1 && shape != buffer.shape)
      fail(init, "store-shape-mismatch",
           fmt::format("the value has shape {} but '{}' has shape {} (on {})", shapeText(shape),
                       decl.name(), shapeText(buffer.shape), here()));
    store.value.root = value;
    emit(std::move(store), locOf(stmt));
  }

  int64_t checkCopyShapes(const ast::Expr &copy, const Slice &srcSlice, const Slice &dstSlice) {
    const Region &src = srcSlice.region;
    const Region &dst = dstSlice.region;
    const std::vector<int64_t> &srcShape = srcSlice.shape;
    const std::vector<int64_t> &dstShape = dstSlice.shape;
    const model::Buffer &sb = program().buffers[src.buffer];
    const model::Buffer &db = program().buffers[dst.buffer];
    if (srcShape != dstShape || sb.dtype != db.dtype)
      fail(copy, "copy-shape-mismatch",
           fmt::format("copy source {} is {}{} but destination {} is {}{} (on {})",
                       program().regionName(src), prim::dkName(sb.dtype), shapeText(srcShape),
                       program().regionName(dst), prim::dkName(db.dtype), shapeText(dstShape),
                       here()));
    // The view as written (a clipped view of a descriptor that is only waited on counts
    // its whole extent, as Pallas' byte count does).
    int64_t elements = 1;
    for (int64_t d : srcShape)
      elements *= d;
    int64_t bytes = elements * prim::byteSize(sb.dtype);
    if (std::optional<model::BuildError> error = builder_.checkDmaBytes(bytes))
      fail(copy, error->id, error->message);
    return bytes;
  }

  static std::string shapeText(const std::vector<int64_t> &shape) {
    return fmt::format("[{}]", fmt::join(shape, ", "));
  }

  /// The element of a descriptor variable that `expr` (`c` or `cs[i, j]`) names: the
  /// variable and the index, checked against its dimensions.
  std::pair<const ast::VarDecl *, std::vector<int64_t>> varElement(const ast::Expr &expr) {
    const auto *decl = ast::dynCast<ast::VarDecl>(baseDecl(expr));
    DKV_INVARIANT(decl, "sema checks descriptor variables");
    const std::vector<int64_t> &dims = decl->dimValues();
    std::vector<int64_t> index;
    if (const auto *ix = ast::dynCast<ast::IndexExpr>(&expr))
      for (const ast::Subscript &s : ix->subscripts()) {
        DKV_INVARIANT(s.kind == ast::Subscript::Kind::Index && s.lo,
                      "sema checks descriptor array indices");
        index.push_back(evalInt(*s.lo));
      }
    DKV_INVARIANT(index.size() == dims.size(), "sema checks descriptor array indices");
    for (size_t k = 0; k < dims.size(); ++k)
      if (index[k] < 0 || index[k] >= dims[k])
        fail(expr, "index-out-of-bounds",
             fmt::format("index {} of descriptor array '{}' is out of range [0, {}) (on {})",
                         index[k], decl->name(), dims[k], here()));
    return {decl, std::move(index)};
  }

  /// "c" or "cs[1, 2]".
  static std::string elementName(const ast::VarDecl &decl, const std::vector<int64_t> &index) {
    if (index.empty())
      return decl.name();
    return fmt::format("{}[{}]", decl.name(), fmt::join(index, ", "));
  }

  /// The slot of a descriptor variable's element, or null when it holds no descriptor.
  const VarSlot *varSlot(const ast::VarDecl *decl, const std::vector<int64_t> &index) {
    auto v = vars_.find(decl);
    if (v == vars_.end())
      return nullptr;
    auto slot = v->second.find(index);
    return slot == v->second.end() ? nullptr : &slot->second;
  }

  /// The descriptor `expr` names (a descriptor let, a descriptor variable or an element
  /// of a descriptor array) on this device and path, or an error at `where`.
  Descriptor descriptorOf(const ast::Expr &expr, const ast::Node &where) {
    const ast::Decl *decl = baseDecl(expr);
    if (ast::isa<ast::VarDecl>(decl)) {
      auto [var, index] = varElement(expr);
      const VarSlot *slot = varSlot(var, index);
      if (!slot)
        fail(where, "unassigned-descriptor",
             fmt::format("'{}' holds no descriptor here on {} ({}): it is not assigned on "
                         "this path (in Python it would be None)",
                         elementName(*var, index), here(), program().contexts[context()]));
      if (slot->poisoned)
        throw StatementError{};
      return slot->descriptor;
    }
    if (poisoned_.count(decl))
      throw StatementError{};
    auto it = env_.find(decl);
    if (it == env_.end() || !std::holds_alternative<Descriptor>(it->second))
      fail(where, "unsupported",
           fmt::format("descriptor '{}' is not defined here on {}",
                       decl ? decl->name() : std::string("?"), here()));
    return std::get<Descriptor>(it->second);
  }

  /// `v = copy(...)`, `v = c`, `vs[i] = async_remote_copy(...)`.
  void lowerAssign(const ast::StoreStmt &stmt) {
    auto [var, index] = varElement(stmt.target());
    const ast::Expr &value = stmt.value();
    try {
      Descriptor d = ast::isa<ast::CopyExpr>(value) || ast::isa<ast::RemoteCopyExpr>(value)
                         ? makeDescriptor(value, stmt)
                         : descriptorOf(value, value);
      vars_[var][index] = VarSlot{std::move(d), false};
    } catch (const StatementError &) {
      vars_[var][index] = VarSlot{Descriptor{}, true};
      throw;
    }
  }

  void lowerDma(const ast::DmaStmt &stmt) {
    const Descriptor d = descriptorOf(stmt.descriptor(), stmt);
    switch (stmt.method()) {
    case ast::DmaMethod::Start:
      return startDma(d, stmt, static_cast<int32_t>(stmt.priorityValue()));
    case ast::DmaMethod::Wait:
      return built(builder_.waitDma(d, model::DmaWait::Both, locOf(stmt), context()), stmt);
    case ast::DmaMethod::WaitSend:
      return built(builder_.waitDma(d, model::DmaWait::Send, locOf(stmt), context()), stmt);
    case ast::DmaMethod::WaitRecv:
      return built(builder_.waitDma(d, model::DmaWait::Recv, locOf(stmt), context()), stmt);
    }
  }

  /// `n = e` / `n += e` on an integer variable: its new value on this device.
  void lowerIntegerAssign(const ast::StoreStmt &stmt, const ast::VarDecl &var) {
    try {
      int64_t v = evalInt(stmt.value());
      if (stmt.accumulate()) {
        auto it = env_.find(&var);
        if (it == env_.end() || !std::holds_alternative<int64_t>(it->second))
          throw StatementError{}; // its initial value failed (reported)
        support::IntResult sum = support::checkedAdd(std::get<int64_t>(it->second), v);
        if (!sum.ok())
          fail(stmt, "integer-overflow", fmt::format("integer overflow on {}", here()));
        v = sum.value;
      }
      env_[&var] = v;
      poisoned_.erase(&var);
    } catch (const StatementError &) {
      env_.erase(&var);
      poisoned_.insert(&var);
      throw;
    }
  }

  /// The integer a store writes into an integer scratch element, evaluated before the
  /// store (it may read the element itself), or nullopt for data (a value read from a
  /// semaphore or loaded from a ref).
  std::optional<int64_t> scratchStoreValue(const ast::StoreStmt &stmt) {
    const ast::Type &t = stmt.value().type();
    if (t.kind != ast::TypeKind::Int || t.runtime)
      return std::nullopt;
    return evalInt(stmt.value());
  }

  /// Records what a store to an integer scratch wrote into the elements of `region`:
  /// `value` (added to each element for `+=`), or data.
  void trackScratchStore(const ast::StoreStmt &stmt, const ast::BufferDecl &decl,
                         const Region &region, std::optional<int64_t> value) {
    const model::Buffer &buffer = program().buffers[region.buffer];
    std::vector<ScratchInt> &elements = scratchElements(region.buffer);
    forEachElement(buffer, region, [&](int64_t flat) {
      ScratchInt &e = elements[static_cast<size_t>(flat)];
      std::optional<int64_t> v = value;
      if (v && stmt.accumulate()) {
        support::IntResult sum = e.state == ScratchInt::State::Known
                                     ? support::checkedAdd(e.value, *v)
                                     : support::IntResult{};
        v = e.state == ScratchInt::State::Known && sum.ok() ? std::optional(sum.value)
                                                            : std::nullopt;
      }
      if (v && !fitsScratch(*v, decl.dtype()))
        fail(stmt.value(), "integer-overflow",
             fmt::format("{} does not fit in the element type {} of integer scratch '{}' (on "
                         "{})",
                         *v, ast::toString(decl.dtype()), decl.name(), here()));
      if (v) {
        e.state = ScratchInt::State::Known;
        e.value = *v;
      } else {
        e.state = ScratchInt::State::Data;
        e.where = stmt.range();
      }
    });
  }

  static bool fitsScratch(int64_t v, ast::DType t) {
    switch (t) {
    case ast::DType::I32:
      return v >= INT32_MIN && v <= INT32_MAX;
    case ast::DType::I16:
      return v >= INT16_MIN && v <= INT16_MAX;
    case ast::DType::I8:
      return v >= INT8_MIN && v <= INT8_MAX;
    case ast::DType::U8:
      return v >= 0 && v <= UINT8_MAX;
    case ast::DType::U32:
      return v >= 0 && v <= UINT32_MAX;
    default:
      return false;
    }
  }

  /// Calls `f` with the row-major index of every element of `region` in `buffer`.
  template <typename F>
  static void forEachElement(const model::Buffer &buffer, const Region &r, F f) {
    const size_t rank = buffer.shape.size();
    for (size_t k = 0; k < rank; ++k)
      if (r.ranges[k].begin >= r.ranges[k].end)
        return;
    std::vector<int64_t> idx(rank);
    for (size_t k = 0; k < rank; ++k)
      idx[k] = r.ranges[k].begin;
    while (true) {
      int64_t flat = 0;
      for (size_t k = 0; k < rank; ++k)
        flat = flat * buffer.shape[k] + idx[k];
      f(flat);
      size_t k = rank;
      while (k-- > 0) {
        if (++idx[k] < r.ranges[k].end)
          break;
        idx[k] = r.ranges[k].begin;
      }
      if (k == static_cast<size_t>(-1))
        return;
    }
  }

  std::vector<ScratchInt> &scratchElements(model::BufferId buffer) {
    auto [it, fresh] = scratchInts_.try_emplace(buffer);
    if (fresh)
      it->second.resize(static_cast<size_t>(elements(program().buffers[buffer].shape)));
    return it->second;
  }

  void lowerStore(const ast::StoreStmt &stmt) {
    if (const auto *var = ast::dynCast<ast::VarDecl>(baseDecl(stmt.target()));
        var && !var->isValue()) {
      if (var->isInteger())
        return lowerIntegerAssign(stmt, *var);
      return lowerAssign(stmt);
    }
    const auto *scratch = ast::dynCast<ast::BufferDecl>(baseDecl(stmt.target()));
    if (scratch && !scratch->isIntegerScratch())
      scratch = nullptr;
    std::optional<int64_t> scratchValue;
    if (scratch)
      scratchValue = scratchStoreValue(stmt);
    model::Store store;
    Slice dst = evalSlice(stmt.target());
    store.dst = dst.region;
    const std::vector<int64_t> &dstShape = dst.shape;
    store.accumulate = stmt.accumulate();
    nodeTypes_.clear();
    int32_t value = buildValue(stmt.value(), store);
    const std::vector<int64_t> &shape = store.value.nodes[value].shape;
    if (elements(shape) != 1 && shape != dstShape) {
      const model::ValueNode &root = store.value.nodes[value];
      fail(stmt.value(), "store-shape-mismatch",
           root.op == model::ValueNode::Op::Load
               ? fmt::format("{} has shape {} but the store writes shape {} (on {})",
                             program().regionName(root.region), shapeText(shape),
                             shapeText(dstShape), here())
               : fmt::format("the value has shape {} but the store writes shape {} (on {})",
                             shapeText(shape), shapeText(dstShape), here()));
    }
    if (stmt.accumulate()) {
      // `dst += v` is `dst = dst + v` (Python's in-place add on a ref).
      model::ValueNode load;
      load.op = model::ValueNode::Op::Load;
      load.region = store.dst;
      load.shape = dstShape;
      load.dtype = program().buffers[store.dst.buffer].dtype;
      const int32_t current = push(store, load, prim::ValueType::array({load.dtype}, dstShape));
      store.reads.push_back(store.dst);
      value = elementwise(stmt.value(), prim::Op::Add, "'+='", {current, value}, store);
    }
    store.value.root = value;
    // On a TensorCore mesh of several cores, hbm / any buffers are shared by the cores
    // and reached only by DMAs: a TensorCore loads and stores VMEM and SMEM ("Loads are
    // only allowed on VMEM and SMEM references", jax/_src/pallas/mosaic/lowering.py), and
    // the model has no rule for two cores' stores (docs/model.md "TensorCores").
    auto sharedAccess = [&](const Region &r, const ast::Node &at, const char *what) {
      if (program().sharedByCores(r.buffer))
        fail(at, "unsupported",
             fmt::format("{} '{}' in {}: on a TensorCore mesh the cores of a device share its "
                         "hbm / any buffers and reach them only by DMA (a TensorCore loads and "
                         "stores VMEM and SMEM); copy it with copy(...) / async_copy(...)",
                         what, program().buffers[r.buffer].name,
                         prim::dkName(program().buffers[r.buffer].space)));
    };
    sharedAccess(store.dst, stmt.target(), "a store to");
    for (const Region &r : store.reads)
      sharedAccess(r, stmt.value(), "a load of");
    Region written = store.dst;
    emit(std::move(store), locOf(stmt));
    if (scratch)
      trackScratchStore(stmt, *scratch, written, scratchValue);
  }

  static int64_t elements(const std::vector<int64_t> &shape) {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d; // shapes of a lowered instance are bounded by its buffers
    return n;
  }

  // ---- Values: each node's shape and element type are the catalogue's
  // (prim::inferType with this device's shapes), as sema's were with the static ones.

  /// Appends `node` of catalogue type `type` to the value; returns its index.
  int32_t push(model::Store &store, model::ValueNode node, prim::ValueType type) {
    store.value.nodes.push_back(std::move(node));
    nodeTypes_.push_back(std::move(type));
    return static_cast<int32_t>(store.value.nodes.size() - 1);
  }

  /// The type of `op` on the nodes `operands` with `attrs`, or a diagnostic on this
  /// device (an extent known only per device that breaks the op's rule).
  prim::TypeResult infer(const ast::Node &at, prim::Op op, const std::vector<int32_t> &operands,
                         const prim::Attrs &attrs, std::string_view spelled) {
    std::vector<prim::ValueType> types;
    for (int32_t o : operands)
      types.push_back(nodeTypes_[static_cast<size_t>(o)]);
    prim::TypeResult t = prim::inferType(op, types, attrs, spelled);
    if (t.error)
      fail(at, t.error->id == "reshape-size" ? "reshape-size" : "store-shape-mismatch",
           fmt::format("{} on {}", t.error->message, here()));
    return t;
  }

  /// A node of `op` on the nodes `operands` (element-wise ops, dot: up to three).
  int32_t apply(const ast::Node &at, prim::Op op, std::string_view spelled,
                const std::vector<int32_t> &operands, const prim::Attrs &attrs, model::Store &store,
                const std::function<void(model::ValueNode &)> &more = {}) {
    prim::TypeResult t = infer(at, op, operands, attrs, spelled);
    model::ValueNode node;
    node.op = op;
    node.lhs = operands.size() > 0 ? operands[0] : -1;
    node.rhs = operands.size() > 1 ? operands[1] : -1;
    node.third = operands.size() > 2 ? operands[2] : -1;
    node.shape = t.type.shape;
    node.dtype = t.type.elem.dtype;
    if (t.axis)
      node.axis = static_cast<int32_t>(*t.axis);
    if (more)
      more(node);
    return push(store, std::move(node), t.type);
  }

  int32_t elementwise(const ast::Node &at, prim::Op op, std::string_view spelled,
                      const std::vector<int32_t> &operands, model::Store &store) {
    return apply(at, op, spelled, operands, {}, store);
  }

  /// Appends the nodes of `expr` to `store.value`; returns the index of its root.
  int32_t buildValue(const ast::Expr &expr, model::Store &store) {
    using Op = model::ValueNode::Op;
    // A number: a Python number's weak type (an integer computed per device too).
    auto constant = [&](double value, prim::ElemType type) {
      model::ValueNode node;
      node.constant = value;
      node.dtype = type.dtype;
      return push(store, std::move(node), prim::ValueType::scalar(type));
    };
    if (expr.type().kind == ast::TypeKind::Bool) {
      // A per-device condition (e.g. the condition of `where(me == 0, a, b)`): 1 or 0.
      model::ValueNode node;
      node.constant = evalBool(expr) ? 1.0 : 0.0;
      return push(store, std::move(node), prim::ValueType::cond());
    }
    switch (expr.kind()) {
    case ast::Node::Kind::FloatLiteral:
      return constant(ast::cast<ast::FloatLiteral>(expr).value(), prim::kWeakFloat);
    case ast::Node::Kind::IntLiteral:
      return constant(static_cast<double>(ast::cast<ast::IntLiteral>(expr).value()),
                      prim::kWeakInt);
    case ast::Node::Kind::NameExpr:
    case ast::Node::Kind::IndexExpr: {
      const ast::Decl *decl = baseDecl(expr);
      if (const auto *b = ast::dynCast<ast::BufferDecl>(decl);
          (b && !b->isTable()) || valueBuf_.count(decl)) {
        model::ValueNode node;
        node.op = Op::Load;
        Slice slice = evalSlice(expr);
        node.region = slice.region;
        node.shape = slice.shape;
        node.dtype = program().buffers[node.region.buffer].dtype;
        store.reads.push_back(node.region);
        prim::ElemType elem{node.dtype, expr.type().weak};
        std::vector<int64_t> shape = node.shape;
        return push(store, std::move(node), prim::ValueType::array(elem, std::move(shape)));
      }
      if (auto it = env_.find(decl);
          it != env_.end() && std::holds_alternative<RuntimeValue>(it->second)) {
        model::ValueNode node;
        node.op = Op::Register;
        node.reg = std::get<RuntimeValue>(it->second).reg;
        node.dtype = prim::kWeakInt.dtype;
        return push(store, std::move(node), prim::ValueType::scalar(prim::kWeakInt));
      }
      return constant(static_cast<double>(evalInt(expr)), prim::kWeakInt);
    }
    case ast::Node::Kind::UnaryExpr: {
      const auto &u = ast::cast<ast::UnaryExpr>(expr);
      auto op = prim::findOpByDkOperator(ast::toString(u.op()), 1);
      if (!op)
        fail(expr, "unsupported", "only '-' applies to stored values");
      const int32_t operand = buildValue(u.operand(), store);
      return elementwise(expr, *op, fmt::format("'{}'", ast::toString(u.op())), {operand}, store);
    }
    case ast::Node::Kind::BinaryExpr: {
      const auto &b = ast::cast<ast::BinaryExpr>(expr);
      auto op = prim::findOpByDkOperator(ast::toString(b.op()), 2);
      if ((b.type().kind == ast::TypeKind::Int && !b.type().runtime && !b.type().scratch) || !op) {
        // An integer sub-expression (e.g. `me % 2`) is a constant per device.
        return constant(static_cast<double>(evalInt(expr)), prim::kWeakInt);
      }
      const int32_t lhs = buildValue(b.lhs(), store);
      const int32_t rhs = buildValue(b.rhs(), store);
      return elementwise(expr, *op, fmt::format("'{}'", ast::toString(b.op())), {lhs, rhs}, store);
    }
    case ast::Node::Kind::ComputeExpr:
      return buildCompute(ast::cast<ast::ComputeExpr>(expr), store);
    default:
      return constant(static_cast<double>(evalInt(expr)), prim::kWeakInt);
    }
  }

  /// A compute call by its op's shape rule (prim/Ops.def); sema checked its static
  /// shapes, this device's are checked again by the same inference.
  int32_t buildCompute(const ast::ComputeExpr &c, model::Store &store) {
    using Op = model::ValueNode::Op;
    const prim::OpRecord &rec = prim::record(c.op());
    const std::string fn = fmt::format("{}()", prim::name(c.op()));
    prim::Attrs attrs;
    attrs.axis = c.axisValue();
    attrs.dtype = c.dtype();
    attrs.dims = c.dimValues();
    switch (rec.shape) {
    case prim::ShapeRule::Leaf:
      DKV_UNREACHABLE("a leaf is not a call");
    case prim::ShapeRule::Create: {
      // No operand: a constant 0 broadcast to the shape (zeros), or each element's
      // index along the axis (iota).
      prim::TypeResult t = infer(c, c.op(), {}, attrs, fn);
      model::ValueNode node;
      node.op = rec.fn ? c.op() : Op::Const;
      node.shape = t.type.shape;
      node.dtype = t.type.elem.dtype;
      if (t.axis)
        node.axis = static_cast<int32_t>(*t.axis);
      return push(store, std::move(node), t.type);
    }
    case prim::ShapeRule::Concat: {
      // A left fold of binary concatenations along the axis.
      int32_t acc = buildValue(*c.operands()[0], store);
      for (size_t i = 1; i < c.operands().size(); ++i) {
        const int32_t next = buildValue(*c.operands()[i], store);
        acc = apply(c, c.op(), fn, {acc, next}, attrs, store);
      }
      return acc;
    }
    case prim::ShapeRule::Split: {
      const int32_t x = buildValue(*c.operands()[0], store);
      return apply(c, c.op(), fn, {x}, attrs, store, [&](model::ValueNode &node) {
        const int64_t len = node.shape[static_cast<size_t>(node.axis)];
        node.begin = c.part() * len;
        node.end = node.begin + len;
      });
    }
    case prim::ShapeRule::Reduce: {
      // `keepdims`: the reduction, then a reshape keeping the axis as 1 (the same
      // elements in the same order).
      const int32_t x = buildValue(*c.operands()[0], store);
      const int32_t reduced = apply(c, c.op(), fn, {x}, attrs, store);
      if (!c.keepdims())
        return reduced;
      attrs.keepdims = true;
      prim::TypeResult kept = infer(c, c.op(), {x}, attrs, fn);
      prim::Attrs reshape;
      reshape.dims = kept.type.shape;
      return apply(c, Op::Reshape, fn, {reduced}, reshape, store);
    }
    case prim::ShapeRule::Broadcast:
    case prim::ShapeRule::Contract:
    case prim::ShapeRule::Reshape:
      break;
    }
    std::vector<int32_t> operands;
    for (const auto &o : c.operands())
      operands.push_back(buildValue(*o, store));
    return apply(c, c.op(), fn, operands, attrs, store, [&](model::ValueNode &node) {
      node.approximate = c.approximate();
      if (rec.type == prim::TypeRule::Reinterpret)
        node.from = store.value.nodes[static_cast<size_t>(operands[0])].dtype;
    });
  }

  // ---- Evaluation. ----

  /// Starts a DMA: the only place a DMA writes its destination, so the place where a
  /// destination that is an 'in' parameter is refused (a descriptor into one may be
  /// made and waited on: Pallas' dummy-descriptor idiom).
  void startDma(const Descriptor &d, const ast::Node &where, int32_t priority = 0) {
    if (d.outOfBounds)
      failAt(d.outOfBounds->range, "slice-out-of-bounds", d.outOfBounds->message);
    const model::Buffer &dst = builder_.program().buffers[d.dst.buffer];
    if (dst.role == model::BufferRole::Input)
      fail(where, "write-to-input",
           fmt::format("cannot start a DMA into '{}': it is an 'in' parameter (a descriptor "
                       "into it may be made and waited on, but not started)",
                       dst.name));
    built(builder_.startDma(d, invocation_, locOf(where), context(), priority), where);
  }

  [[noreturn]] void fail(const ast::Node &node, const std::string &id, std::string message) {
    failAt(node.range(), id, std::move(message));
  }

  [[noreturn]] void failAt(support::SourceRange range, const std::string &id, std::string message) {
    report(range, id, std::move(message));
    throw StatementError{};
  }

  void report(support::SourceRange range, const std::string &id, std::string message) {
    // Devices usually share a mistake: report each place once, for the first device.
    if (reported_.insert({range.begin.line, range.begin.col, id}).second)
      diags_.error(range, id, std::move(message));
  }

  const ast::Decl *baseDecl(const ast::Expr &expr) {
    if (const auto *n = ast::dynCast<ast::NameExpr>(&expr))
      return n->decl();
    if (const auto *i = ast::dynCast<ast::IndexExpr>(&expr))
      return i->base().decl();
    return nullptr;
  }

  int64_t evalInt(const ast::Expr &expr) { return evalInteger(expr, false); }

  bool evalBool(const ast::Expr &expr) { return evalInteger(expr, true) != 0; }

  /// The value of an integer or boolean expression on this device (booleans are 1 and
  /// 0), with the operators every stage shares (frontend::evalIntExpr).
  int64_t evalInteger(const ast::Expr &expr, bool condition) {
    frontend::IntEvalResult r = frontend::evalIntExpr(
        expr, [this](const ast::Expr &e, bool cond) { return evalLeaf(e, cond); }, condition);
    switch (r.status) {
    case frontend::IntEvalStatus::Ok:
      return *r.value;
    case frontend::IntEvalStatus::NotConstant:
      // evalLeaf reported why (or the name's binding failed, already reported).
      throw StatementError{};
    case frontend::IntEvalStatus::DivisionByZero:
      fail(*r.where, "division-by-zero", fmt::format("division by zero on {}", here()));
    case frontend::IntEvalStatus::Overflow:
      fail(*r.where, "integer-overflow", fmt::format("integer overflow on {}", here()));
    case frontend::IntEvalStatus::InvalidShift:
      fail(*r.where, "invalid-shift", fmt::format("shift amount outside [0, 63] on {}", here()));
    }
    DKV_UNREACHABLE("evaluation status");
  }

  /// The value of a name or call on this device, or nullopt after reporting why it
  /// has none (nothing is reported for a binding whose initialiser already failed).
  /// Never throws: frontend::evalIntExpr is not exception-neutral by contract.
  std::optional<int64_t> evalLeaf(const ast::Expr &expr, bool condition) {
    if (const auto *v = ast::dynCast<ast::VarDecl>(baseDecl(expr)); v && !v->isInteger()) {
      // `if c`, `not cs[i]`: whether the element holds a descriptor (sema allows a
      // descriptor variable only as a condition).
      if (!condition) {
        report(expr.range(), "unsupported", "expected an integer here");
        return std::nullopt;
      }
      try {
        auto [var, index] = varElement(expr);
        const VarSlot *slot = varSlot(var, index);
        if (slot && slot->poisoned)
          return std::nullopt;
        return slot ? 1 : 0;
      } catch (const StatementError &) {
        return std::nullopt; // reported
      }
    }
    switch (expr.kind()) {
    case ast::Node::Kind::NameExpr: {
      const ast::Decl *decl = ast::cast<ast::NameExpr>(expr).decl();
      DKV_INVARIANT(decl, "sema resolves every name");
      if (const auto *p = ast::dynCast<ast::ParamDecl>(decl)) {
        DKV_INVARIANT(p->value().has_value(), "sema sets every param");
        return *p->value();
      }
      if (const auto *c = ast::dynCast<ast::ConstDecl>(decl)) {
        DKV_INVARIANT(c->value().has_value(), "sema sets every const");
        return *c->value();
      }
      if (auto it = env_.find(decl); it != env_.end()) {
        const Value &v = it->second;
        if (const auto *i = std::get_if<int64_t>(&v))
          return *i;
        if (const auto *b = std::get_if<bool>(&v))
          return *b ? 1 : 0;
        if (std::holds_alternative<RuntimeValue>(v)) {
          if (condition)
            report(expr.range(), "unsupported",
                   "this condition depends on a semaphore value read at run time; dkv needs "
                   "control flow that is known when the kernel is instantiated");
          else
            report(expr.range(), "unsupported",
                   "this value is read from a semaphore at run time; it can only be stored, not "
                   "decide control flow, a device or an index");
          return std::nullopt;
        }
        report(expr.range(), "unsupported",
               condition ? "expected a condition here" : "expected an integer here");
        return std::nullopt;
      }
      if (poisoned_.count(decl))
        return std::nullopt;
      report(expr.range(), "unsupported",
             fmt::format("'{}' has no value here on {}", ast::cast<ast::NameExpr>(expr).name(),
                         here()));
      return std::nullopt;
    }
    case ast::Node::Kind::CallExpr: {
      const auto &call = ast::cast<ast::CallExpr>(expr);
      switch (call.builtin()) {
      case ast::Builtin::AxisIndex:
      case ast::Builtin::AxisSize: {
        const auto *axis = ast::dynCast<ast::AxisDecl>(baseDecl(call.arg()));
        DKV_INVARIANT(axis, "sema checks that axis_index names an axis");
        if (axis->isCore()) // the TensorCore axis: this process's core
          return call.builtin() == ast::Builtin::AxisIndex ? core_ : program().coresPerDevice();
        if (call.builtin() == ast::Builtin::AxisIndex)
          return coords_[axis->index()];
        return program().mesh[axis->index()].size;
      }
      case ast::Builtin::ProgramId:
      case ast::Builtin::NumPrograms: {
        int64_t dim = 0;
        try {
          dim = evalInt(call.arg());
        } catch (const StatementError &) {
          return std::nullopt; // reported
        }
        const std::vector<int64_t> &grid = pipelineGrid_ ? *pipelineGrid_ : kernel_->gridValues();
        if (dim < 0 || static_cast<size_t>(dim) >= grid.size()) {
          report(
              call.range(), "program-id-dim",
              fmt::format("grid dimension {} does not exist (the grid has {})", dim, grid.size()));
          return std::nullopt;
        }
        if (call.builtin() == ast::Builtin::NumPrograms)
          return grid[dim];
        const std::vector<int64_t> &ids = pipelineGrid_ ? pipelineIds_ : programIds_;
        if (ids.empty()) {
          report(call.range(), "program-id-dim", "program_id outside the grid");
          return std::nullopt;
        }
        return ids[dim];
      }
      case ast::Builtin::Read:
        report(call.range(), "unsupported",
               "read(sem) is only supported as the value of a let (`let v = read(s)`)");
        return std::nullopt;
      }
      DKV_UNREACHABLE("builtin");
    }
    case ast::Node::Kind::IndexExpr:
      if (const auto *t = ast::dynCast<ast::BufferDecl>(baseDecl(expr)); t && t->isTable())
        return tableElement(ast::cast<ast::IndexExpr>(expr), *t);
      if (const auto *b = ast::dynCast<ast::BufferDecl>(baseDecl(expr));
          b && b->isIntegerScratch() && expr.type().kind == ast::TypeKind::Int)
        return scratchElement(ast::cast<ast::IndexExpr>(expr), *b);
      report(expr.range(), "unsupported", "this expression has no integer value");
      return std::nullopt;
    default:
      report(expr.range(), "unsupported", "this expression has no integer value");
      return std::nullopt;
    }
  }

  /// `t[i, j]`: the element of this device's contents of table t, or nullopt after
  /// reporting an index out of bounds. Never throws (called from evalLeaf).
  std::optional<int64_t> tableElement(const ast::IndexExpr &ix, const ast::BufferDecl &param) {
    // A kernel parameter that the sequence passes a table reads this call's argument.
    const ast::BufferDecl &table = param.tableFromCall() ? *tableOf_.at(&param) : param;
    const std::vector<int64_t> &shape = table.shapeValues();
    const auto &rows = table.tableRows();
    DKV_INVARIANT(!rows.empty() && ix.subscripts().size() == shape.size(),
                  "sema sets the contents of every table and checks its indices");
    int64_t flat = 0;
    for (size_t k = 0; k < shape.size(); ++k) {
      const ast::Subscript &s = ix.subscripts()[k];
      int64_t i = 0;
      try {
        i = evalInt(*s.lo);
      } catch (const StatementError &) {
        return std::nullopt; // reported
      }
      if (i < 0 || i >= shape[k]) {
        report(s.range, "table-index-out-of-bounds",
               fmt::format("index {} is out of bounds for dimension {} of table '{}' (size {}) "
                           "on {}",
                           i, k, param.name(), shape[k], here()));
        return std::nullopt;
      }
      flat = flat * shape[k] + i;
    }
    // Row d is device d's shard: on a TensorCore mesh every core of device d reads it.
    const std::vector<int64_t> &row = rows.size() == 1 ? rows[0] : rows[chip_];
    return row[static_cast<size_t>(flat)];
  }

  /// `meta[i, j]` on an integer scratch: the integer this device stored there last in
  /// this invocation, or nullopt after reporting why it has none (never written, data,
  /// a DMA writes the buffer). Never throws (called from evalLeaf).
  std::optional<int64_t> scratchElement(const ast::IndexExpr &ix, const ast::BufferDecl &decl) {
    std::string name;
    Region region;
    try {
      Slice slice = evalSlice(ix);
      region = slice.region;
    } catch (const StatementError &) {
      return std::nullopt; // reported
    }
    std::vector<int64_t> index;
    for (const model::Range &r : region.ranges)
      index.push_back(r.begin);
    name = fmt::format("{}[{}]", decl.name(), fmt::join(index, ", "));
    if (decl.dmaWritten()) {
      report(ix.range(), "unsupported",
             fmt::format("{} is read as an integer, but a DMA writes integer scratch '{}': its "
                         "values are data known only at run time, and dkv needs the integers "
                         "that decide control flow, addresses and devices when the kernel is "
                         "instantiated",
                         name, decl.name()));
      return std::nullopt;
    }
    const model::Buffer &buffer = program().buffers[region.buffer];
    int64_t flat = 0;
    for (size_t k = 0; k < index.size(); ++k)
      flat = flat * buffer.shape[k] + index[k];
    const std::vector<ScratchInt> &elements = scratchElements(region.buffer);
    const ScratchInt &e = elements[static_cast<size_t>(flat)];
    switch (e.state) {
    case ScratchInt::State::Known:
      return e.value;
    case ScratchInt::State::Unset:
      report(ix.range(), "uninitialized-scratch",
             fmt::format("{} is read before it is stored to in this invocation (on "
                         "{}, {}): scratch starts uninitialised",
                         name, here(), program().contexts[context()]));
      return std::nullopt;
    case ScratchInt::State::Data:
      report(ix.range(), "unsupported",
             fmt::format("{} holds data stored at line {} (a value read from a semaphore or "
                         "loaded from a ref, known only at run time); dkv needs the integers that "
                         "decide control flow, addresses and devices when the kernel is "
                         "instantiated (on {})",
                         name, e.where.begin.line, here()));
      return std::nullopt;
    }
    return std::nullopt;
  }

  /// The process a DMA or signal reaches (docs/model.md "TensorCores"): the device
  /// `device = ...` names (this device without one) and the core named by its mapping's
  /// TensorCore axis (`{core: c}`) or by `core_index = i`. A local signal (neither) reaches
  /// this process. A target that names a device but no core is refused on a mesh of several
  /// cores (`unnamed-core`: which core it reaches is undocumented); with one core it is 0.
  DeviceId evalTarget(const ast::Expr *device, const ast::Expr *coreIndex, const ast::Node &where) {
    const int64_t cores = program().coresPerDevice();
    std::optional<int64_t> core;
    int64_t chip = chip_;
    if (device)
      chip = evalDevice(*device, core);
    if (coreIndex)
      core = evalInt(*coreIndex);
    if (!core) {
      if (!device)
        core = core_;
      else if (cores > 1)
        fail(*device, "unnamed-core",
             fmt::format("this names a device but no core of the TensorCore axis '{}' ({} cores): "
                         "which core it reaches is not documented (Mosaic passes no core id; "
                         "JAX's interpret mode sends a DMA to the issuing core's index and a "
                         "signal to core 0); name the core, e.g. `device = {{{}: c, ...}}`{}",
                         program().cores->name, cores, program().cores->name,
                         ast::isa<ast::SignalStmt>(where) ? " or `core_index = c`" : ""));
      else
        core = 0;
    }
    if (*core < 0 || *core >= cores)
      fail(coreIndex ? *coreIndex : *device, "core-out-of-range",
           fmt::format("core {} is out of range: the TensorCore axis '{}' has {} core{} (on {})",
                       *core, program().cores ? program().cores->name : std::string("core"), cores,
                       cores == 1 ? "" : "s", here()));
    return static_cast<DeviceId>(chip * cores + *core);
  }

  /// The device a `device = ...` names, checked against the mesh; `core` is set when its
  /// mapping names the TensorCore axis.
  int64_t evalDevice(const ast::Expr &expr, std::optional<int64_t> &core) {
    std::vector<int64_t> coords;
    if (const auto *t = ast::dynCast<ast::TupleExpr>(&expr)) {
      if (t->elements().size() != program().mesh.size())
        fail(expr, "device-arity",
             fmt::format("device coordinates have {} entries, the mesh has {} axes",
                         t->elements().size(), program().mesh.size()));
      for (const auto &e : t->elements())
        coords.push_back(evalInt(*e));
    } else if (const auto *m = ast::dynCast<ast::MappingExpr>(&expr)) {
      coords = coords_;
      for (const auto &entry : m->entries()) {
        const auto *axis = ast::dynCast<ast::AxisDecl>(entry.axis->decl());
        DKV_INVARIANT(axis, "sema resolves mapping keys to axes");
        if (axis->isCore())
          core = evalInt(*entry.value);
        else
          coords[axis->index()] = evalInt(*entry.value);
      }
    } else {
      int64_t id = evalInt(expr);
      int64_t count = 1;
      for (const auto &axis : program().mesh)
        count *= axis.size;
      if (id < 0 || id >= count)
        fail(expr, "device-out-of-range",
             fmt::format("device id {} is out of range: the mesh has {} device{} (on {})", id,
                         count, count == 1 ? "" : "s", here()));
      return id;
    }
    int64_t id = 0;
    for (size_t a = 0; a < coords.size(); ++a) {
      if (coords[a] < 0 || coords[a] >= program().mesh[a].size)
        fail(expr, "device-out-of-range",
             fmt::format("coordinate {} on axis {} is out of range [0, {}) (on {})", coords[a],
                         program().mesh[a].name, program().mesh[a].size, here()));
      id = id * program().mesh[a].size + coords[a];
    }
    return id;
  }

  /// The choice of `select_ref(i, a, b, ...)` that its index picks on this device and
  /// iteration (docs/language.md "Selected refs").
  const ast::Expr &selected(const ast::SelectRefExpr &sel) {
    const int64_t k = evalInt(sel.index());
    const size_t n = sel.choices().size();
    if (k < 0 || static_cast<uint64_t>(k) >= n)
      fail(sel.index(), "index-out-of-bounds",
           fmt::format("select_ref index {} is out of range [0, {}) on {} ({}): there are {} "
                       "choices",
                       k, n, here(), program().contexts[context()], n));
    return *sel.choices()[static_cast<size_t>(k)];
  }

  /// The semaphore an expression names: `s`, `recv[i]`, `caps[i, j]`, `barrier`, or the
  /// one a `select_ref(...)` picks.
  SemId evalSem(const ast::Expr &expr) {
    if (const auto *sel = ast::dynCast<ast::SelectRefExpr>(&expr))
      return evalSem(selected(*sel));
    const auto *decl = ast::dynCast<ast::SemDecl>(baseDecl(expr));
    if (!decl)
      fail(expr, "unsupported", "expected a semaphore here");
    SemId base = semBase_.at(decl);
    const std::vector<int64_t> &dims = decl->dimValues();
    std::vector<int64_t> index;
    if (const auto *ix = ast::dynCast<ast::IndexExpr>(&expr)) {
      for (const ast::Subscript &s : ix->subscripts()) {
        if (s.kind != ast::Subscript::Kind::Index || !s.lo)
          fail(expr, "unsupported", "a semaphore array takes single indices");
        index.push_back(evalInt(*s.lo));
      }
    }
    if (index.size() != dims.size())
      fail(expr, "sem-index-arity",
           fmt::format("'{}' has {} dimensions; {} indices name one semaphore", decl->name(),
                       dims.size(), index.size()));
    for (size_t k = 0; k < dims.size(); ++k)
      if (index[k] < 0 || index[k] >= dims[k])
        fail(expr, "index-out-of-bounds",
             fmt::format("index {} of semaphore array '{}' is out of range [0, {}) (on {})",
                         index[k], decl->name(), dims[k], here()));
    return model::Builder::element(base, dims, index);
  }

  // --- emit_pipeline (docs/model.md "emit_pipeline") ------------------------

  /// One operand's evaluated state: its source view, block indices per step, slots.
  struct PipelineOperandState {
    const ast::PipelineOperand *op = nullptr;
    PipelineSlots slots;
    View source;                                              ///< the operand ref as passed
    std::vector<std::vector<int64_t>> blocks;                 ///< block indices at each step
    int64_t copyIn = 0, waitIn = 0, copyOut = 0, waitOut = 0; ///< pipeline.py's slot counters
  };

  /// The region of block `bi` of an operand.
  View blockView(const PipelineOperandState &st, const std::vector<int64_t> &bi) const {
    View v = st.source;
    const std::vector<int64_t> &bs = st.op->block->shapeValues();
    for (size_t j = 0; j < bs.size(); ++j) {
      model::Range &r = v.ranges[st.source.kept[j]];
      r.begin += bi[j] * bs[j];
      r.end = r.begin + bs[j];
    }
    return v;
  }

  /// Slot `slot` of an operand's pipeline buffer (the whole buffer for trivial windowing).
  View windowView(const PipelineOperandState &st, int64_t slot) const {
    View v;
    v.buffer = st.slots.window;
    const std::vector<int64_t> &bs = st.op->block->shapeValues();
    if (!st.slots.trivial)
      v.ranges.push_back({slot, slot + 1});
    size_t first = v.ranges.size();
    for (size_t j = 0; j < bs.size(); ++j) {
      v.ranges.push_back({0, bs[j]});
      v.kept.push_back(first + j);
    }
    return v;
  }

  /// A local copy descriptor `make_async_copy(src, dst, sem)` made at `loc`.
  Descriptor pipelineCopy(const View &src, const View &dst, SemId sem, const ast::Node &where) {
    Descriptor d;
    d.src = Region{src.buffer, src.ranges};
    d.dst = Region{dst.buffer, dst.ranges};
    d.recvSem = sem;
    d.target = device_;
    d.loc = locOf(where);
    d.bytes = d.src.elementCount() * prim::byteSize(program().buffers[src.buffer].dtype);
    if (std::optional<model::BuildError> error = builder_.checkDmaBytes(d.bytes))
      fail(where, error->id, error->message);
    return d;
  }

  void pipelineStart(const Descriptor &d, const ast::Node &where) {
    built(builder_.startDma(d, invocation_, locOf(where), context()), where);
  }
  void pipelineWait(const Descriptor &d, const ast::Node &where) {
    built(builder_.waitDma(d, model::DmaWait::Both, locOf(where), context()), where);
  }

  /// tpu_helpers.sync_copy: a run_scoped DMA semaphore, start, wait.
  void pipelineSyncCopy(const PipelineOperandState &st, const View &src, const View &dst,
                        const ast::Node &where) {
    emit(model::ScopeEnter{st.slots.syncScope}, locOf(where));
    Descriptor d = pipelineCopy(src, dst, st.slots.sems, where);
    pipelineStart(d, where);
    pipelineWait(d, where);
    emit(model::ScopeExit{st.slots.syncScope}, locOf(where));
  }

  /// The schedule of pipeline.py's `_emit_pipeline` with two buffers per operand
  /// (`Scheduler`: initialize_step, copy_in, wait_in, body, copy_out, wait_out,
  /// advance_slots; finalize), every predicate evaluated on this device.
  void lowerPipeline(const ast::EmitPipelineStmt &p) {
    const std::vector<int64_t> &grid = p.gridValues();
    int64_t steps = 1;
    for (int64_t g : grid)
      if (__builtin_mul_overflow(steps, g, &steps))
        steps = INT64_MAX;
    spendIterations(steps, p.range());
    std::vector<std::vector<int64_t>> indices;
    std::vector<int64_t> point(grid.size(), 0);
    for (int64_t t = 0; t < steps; ++t) {
      indices.push_back(point);
      for (size_t k = grid.size(); k-- > 0;) {
        if (++point[k] < grid[k])
          break;
        point[k] = 0;
      }
    }
    // Index maps run in the pipeline's grid environment, like the body.
    const std::vector<int64_t> *outerGrid = pipelineGrid_;
    std::vector<int64_t> outerIds = pipelineIds_;
    pipelineGrid_ = &grid;
    // Restored however this statement ends (a diagnostic throws StatementError).
    struct Restore {
      Lowering &l;
      const std::vector<int64_t> *grid;
      std::vector<int64_t> ids;
      size_t loopVars;
      ~Restore() {
        l.pipelineGrid_ = grid;
        l.pipelineIds_ = ids;
        l.loopVars_.resize(loopVars);
        l.setContext();
      }
    } restore{*this, outerGrid, outerIds, loopVars_.size()};

    std::vector<PipelineOperandState> ops;
    for (const ast::PipelineOperand &op : p.operands()) {
      PipelineOperandState st;
      st.op = &op;
      st.slots = pipelineSlots_.at(&op);
      Slice src = evalSlice(*op.ref);
      st.source = View{src.region.buffer, src.region.ranges, src.kept};
      const std::vector<int64_t> &bs = op.block->shapeValues();
      if (src.shape.size() != bs.size())
        fail(*op.ref, "pipeline-block-rank",
             fmt::format("the operand has {} dimensions but the block shape has {} (on {})",
                         src.shape.size(), bs.size(), here()));
      for (int64_t t = 0; t < steps; ++t) {
        for (size_t d = 0; d < grid.size(); ++d)
          env_[op.mapParams[d].get()] = indices[t][d];
        pipelineIds_ = indices[t];
        std::vector<int64_t> bi;
        for (size_t j = 0; j < op.mapResult.size(); ++j) {
          int64_t b = evalInt(*op.mapResult[j]);
          int64_t lo = 0, hi = 0;
          if (__builtin_mul_overflow(b, bs[j], &lo) || __builtin_add_overflow(lo, bs[j], &hi) ||
              lo < 0 || hi > src.shape[j])
            fail(*op.mapResult[j], "pipeline-block-out-of-range",
                 fmt::format("block index {} of dimension {} at pipeline step ({}) is outside the "
                             "operand: blocks of {} in a dimension of size {} are 0..{} (on "
                             "{})",
                             b, j, fmt::join(indices[t], ", "), bs[j], src.shape[j],
                             src.shape[j] / bs[j] - 1, here()));
          bi.push_back(b);
        }
        st.blocks.push_back(std::move(bi));
      }
      for (const auto &param : op.mapParams)
        env_.erase(param.get());
      ops.push_back(std::move(st));
    }

    model::ScopeId scope = pipelineScope_.at(&p);
    emit(model::ScopeEnter{scope}, locOf(p));
    const ast::Node &at = p;
    auto changed = [&](const PipelineOperandState &st, int64_t a, int64_t b) {
      return st.blocks[a] != st.blocks[b];
    };
    if (steps > 0) {
      // Prologue: trivially windowed inputs are copied in synchronously; then the first
      // block of every buffered input is fetched into slot 0 (initialize_step, step 0).
      for (PipelineOperandState &st : ops)
        if (!st.op->output && st.slots.buffered && st.slots.trivial)
          pipelineSyncCopy(st, st.source, windowView(st, 0), *st.op->ref);
      for (PipelineOperandState &st : ops)
        if (!st.op->output && st.slots.buffered && !st.slots.trivial) {
          pipelineStart(pipelineCopy(blockView(st, st.blocks[0]), windowView(st, 0),
                                     st.slots.sems + 0, *st.op->ref),
                        *st.op->ref);
          st.copyIn = 1;
        }
      std::string stepName = fmt::format("emit_pipeline@{}", locOf(p).line);
      for (int64_t t = 0; t < steps; ++t) {
        bool first = t == 0, last = t == steps - 1;
        loopVars_.emplace_back(stepName, t);
        pipelineIds_ = indices[t];
        setContext();
        // copy_in: the next block, when it differs from this one, into the other slot.
        for (PipelineOperandState &st : ops)
          if (!st.op->output && st.slots.buffered && !st.slots.trivial && !last &&
              changed(st, t, t + 1)) {
            int64_t slot = st.copyIn % 2;
            pipelineStart(pipelineCopy(blockView(st, st.blocks[t + 1]), windowView(st, slot),
                                       st.slots.sems + static_cast<SemId>(slot), *st.op->ref),
                          *st.op->ref);
            ++st.copyIn;
          }
        // wait_in: this block, on the first step or when it changed.
        for (PipelineOperandState &st : ops)
          if (!st.op->output && st.slots.buffered && !st.slots.trivial &&
              (first || changed(st, t, t - 1))) {
            int64_t slot = st.waitIn % 2;
            pipelineWait(pipelineCopy(blockView(st, st.blocks[t]), windowView(st, slot),
                                      st.slots.sems + static_cast<SemId>(slot), *st.op->ref),
                         *st.op->ref);
          }
        // The body on the current blocks.
        for (PipelineOperandState &st : ops) {
          View v;
          if (!st.slots.buffered)
            v = blockView(st, st.blocks[t]);
          else if (st.slots.trivial)
            v = windowView(st, 0);
          else
            v = windowView(st, (st.op->output ? st.copyOut : st.waitIn) % 2);
          views_[st.op->block.get()] = std::move(v);
        }
        lowerBlock(p.body());
        // copy_out: this block, when the next differs or on the last step.
        for (PipelineOperandState &st : ops)
          if (st.op->output && st.slots.buffered && !st.slots.trivial &&
              (last || changed(st, t, t + 1))) {
            int64_t slot = st.copyOut % 2;
            pipelineStart(pipelineCopy(windowView(st, slot), blockView(st, st.blocks[t]),
                                       st.slots.sems + static_cast<SemId>(slot), *st.op->ref),
                          *st.op->ref);
            ++st.copyOut;
          }
        // wait_out: the previous step's copy_out, when the block changed.
        for (PipelineOperandState &st : ops)
          if (st.op->output && st.slots.buffered && !st.slots.trivial && !first &&
              changed(st, t, t - 1)) {
            int64_t slot = st.waitOut % 2;
            pipelineWait(pipelineCopy(windowView(st, slot), blockView(st, st.blocks[t - 1]),
                                      st.slots.sems + static_cast<SemId>(slot), *st.op->ref),
                         *st.op->ref);
            ++st.waitOut;
          }
        // advance_slots: the input slot moves on when the block will change.
        for (PipelineOperandState &st : ops)
          if (!st.op->output && (last || changed(st, t, t + 1)))
            ++st.waitIn;
        loopVars_.pop_back();
      }
      setContext();
      pipelineIds_ = outerIds;
      // Epilogue: finalize waits for the last copy_out; then trivially windowed outputs
      // are copied out synchronously.
      for (PipelineOperandState &st : ops)
        if (st.op->output && st.slots.buffered && !st.slots.trivial) {
          int64_t slot = st.waitOut % 2;
          pipelineWait(pipelineCopy(windowView(st, slot), blockView(st, st.blocks[steps - 1]),
                                    st.slots.sems + static_cast<SemId>(slot), *st.op->ref),
                       *st.op->ref);
        }
      for (PipelineOperandState &st : ops)
        if (st.op->output && st.slots.buffered && st.slots.trivial)
          pipelineSyncCopy(st, windowView(st, 0), st.source, *st.op->ref);
    }
    for (PipelineOperandState &st : ops)
      views_.erase(st.op->block.get());
    emit(model::ScopeExit{scope}, closingLocOf(at));
  }

  Region evalRegion(const ast::Expr &expr) { return evalSlice(expr).region; }

  /// The region a ref expression names, checked against the buffer's bounds.
  /// The region and shape `expr` names. With `deferred` (the views of a descriptor), a
  /// slice that runs past the end of its dimension is clipped to it, its shape kept as
  /// written, and the error recorded there instead of reported.
  Slice evalSlice(const ast::Expr &expr, std::optional<DeferredBoundsError> *deferred = nullptr) {
    if (const auto *sel = ast::dynCast<ast::SelectRefExpr>(&expr))
      return evalSlice(selected(*sel), deferred);
    const ast::Decl *base = baseDecl(expr);
    const auto *decl = ast::dynCast<ast::BufferDecl>(base);
    if (!decl && !valueBuf_.count(base))
      fail(expr, "unsupported", "expected a buffer here");
    View view;
    if (!decl) {
      // A let bound to an array value or a value variable: its buffer, whole.
      view.buffer = valueBuf_.at(base);
      for (size_t k = 0; k < program().buffers[view.buffer].shape.size(); ++k) {
        view.ranges.push_back({0, program().buffers[view.buffer].shape[k]});
        view.kept.push_back(k);
      }
    } else if (decl->storage() == ast::Storage::PipelineBlock) {
      auto it = views_.find(decl);
      DKV_INVARIANT(it != views_.end(), "an emit_pipeline block ref is used only in its body");
      view = it->second;
    } else {
      view.buffer = bufferOf_.at(decl);
      for (size_t k = 0; k < program().buffers[view.buffer].shape.size(); ++k) {
        view.ranges.push_back({0, program().buffers[view.buffer].shape[k]});
        view.kept.push_back(k);
      }
    }
    std::vector<int64_t> shape;
    for (size_t k : view.kept)
      shape.push_back(view.ranges[k].size());
    Slice slice{Region{view.buffer, view.ranges}, {}, {}};
    const auto *ix = ast::dynCast<ast::IndexExpr>(&expr);
    size_t given = ix ? ix->subscripts().size() : 0;
    const std::string &name = base->name();
    if (given > shape.size())
      fail(expr, "slice-arity",
           fmt::format("'{}' has {} dimensions but {} subscripts are given", name, shape.size(),
                       given));
    for (size_t k = 0; k < shape.size(); ++k) {
      int64_t lo = 0;
      int64_t hi = shape[k];
      bool single = false;
      if (k < given) {
        const ast::Subscript &s = ix->subscripts()[k];
        switch (s.kind) {
        case ast::Subscript::Kind::Full:
          break;
        case ast::Subscript::Kind::Index:
          lo = evalInt(*s.lo);
          // `lo + 1` must not overflow: an index past the end fails below anyway.
          hi = lo < shape[k] ? lo + 1 : shape[k] + 1;
          single = true;
          break;
        case ast::Subscript::Kind::Range:
          if (s.lo)
            lo = evalInt(*s.lo);
          if (s.hi)
            hi = evalInt(*s.hi);
          break;
        }
        if (!decl && !single) {
          // A value bound to a name is sliced as NumPy slices an array: the bounds clamp
          // to the extent (`x[:, 0:256]` of a [m, 128] value is all of it).
          if (hi > shape[k])
            hi = shape[k];
          if (lo > hi && hi >= 0)
            lo = hi;
        }
        // A slice a:a is legal and empty (a table row of size 0) wherever it starts: it
        // names no element, as Python's slices (docs/model.md "Zero-size slices and
        // DMAs"); its region is the empty range at the end of the dimension.
        if (!single && lo == hi && lo > shape[k])
          lo = hi = shape[k];
        if (lo < 0 || hi > shape[k] || lo > hi || (single && lo >= hi)) {
          std::string message =
              single ? fmt::format("index {} is out of bounds for dimension {} of '{}' (size {}) "
                                   "on {}",
                                   lo, k, name, shape[k], here())
                     : fmt::format("slice {}:{} is {} for dimension {} of '{}' (size {}) on {}", lo,
                                   hi, lo > hi ? "reversed" : "out of bounds", k, name, shape[k],
                                   here());
          // Only a view that starts inside the dimension and runs past its end is
          // deferred: its region is the part inside, its shape the whole.
          if (!deferred || single || lo < 0 || lo > hi || lo > shape[k])
            failAt(s.range, "slice-out-of-bounds", std::move(message));
          if (!*deferred)
            *deferred = DeferredBoundsError{s.range, std::move(message)};
          int64_t base = view.ranges[view.kept[k]].begin;
          slice.region.ranges[view.kept[k]] = {base + lo, base + shape[k]};
          slice.shape.push_back(hi - lo);
          slice.kept.push_back(view.kept[k]);
          continue;
        }
      }
      int64_t base = view.ranges[view.kept[k]].begin;
      slice.region.ranges[view.kept[k]] = {base + lo, base + hi};
      if (!single) {
        slice.shape.push_back(hi - lo);
        slice.kept.push_back(view.kept[k]);
      }
    }
    return slice;
  }

  const ast::Module &module_;
  support::DiagnosticEngine &diags_;
  int32_t requestedInvocations_ = 1;
  model::Builder builder_;
  /// A sequence: the (parameter, array) bindings of each call, the called kernel's
  /// name, and the prefix of the names of its scratch while declaring it.
  std::map<size_t, std::vector<std::pair<const ast::Decl *, const ast::Decl *>>> bindings_;
  std::string callName_;
  std::string prefix_;
  const ast::KernelDecl *kernel_ = nullptr;

  std::unordered_map<const ast::BufferDecl *, model::BufferId> bufferOf_;
  /// The sequence's table bound to each table parameter of a called kernel in the
  /// current call (bindCall).
  std::unordered_map<const ast::BufferDecl *, const ast::BufferDecl *> tableOf_;
  std::unordered_map<const ast::SemDecl *, SemId> semBase_;
  std::unordered_map<const ast::RunScopedStmt *, model::ScopeId> scopeOf_;
  std::unordered_map<const ast::EmitPipelineStmt *, model::ScopeId> pipelineScope_;
  std::unordered_map<const ast::PipelineOperand *, PipelineSlots> pipelineSlots_;
  /// What each emit_pipeline block ref names at the current step.
  std::unordered_map<const ast::BufferDecl *, View> views_;
  /// Inside an emit_pipeline (index maps and body): its grid and indices, which
  /// program_id / num_programs refer to.
  const std::vector<int64_t> *pipelineGrid_ = nullptr;
  std::vector<int64_t> pipelineIds_;
  std::unordered_map<const ast::LetDecl *, model::RegisterId> registerOf_;
  /// The buffer of each let bound to an array value and of each value variable.
  std::unordered_map<const ast::Decl *, model::BufferId> valueBuf_;
  /// The catalogue type of each node of the value being built (parallel to its nodes).
  std::vector<prim::ValueType> nodeTypes_;
  std::set<std::tuple<uint32_t, uint32_t, std::string>> reported_;

  // Per-device state (per process: a (device, core) pair on a TensorCore mesh).
  DeviceId device_ = 0;
  std::vector<int64_t> coords_; ///< the device's mesh coordinates
  int64_t chip_ = 0;            ///< the device (device_ / cores)
  int64_t core_ = 0;            ///< the core on it (0 without a TensorCore mesh)
  /// The process in messages: "device 3", or "device 1 core 0" on a TensorCore mesh.
  std::string here() const { return program().processName(device_); }
  int32_t invocation_ = 0;
  std::vector<int64_t> programIds_;
  std::vector<std::pair<std::string, int64_t>> loopVars_;
  std::unordered_map<const ast::Decl *, Value> env_;
  /// Descriptor variables declared in this grid point (a grid step runs the body anew,
  /// as Pallas traces it once and the grid repeats it).
  std::unordered_map<const ast::VarDecl *, VarSlots> vars_;
  /// Bindings whose initialiser failed (already reported) in this grid point.
  std::unordered_set<const ast::Decl *> poisoned_;
  /// The elements of the integer scratch buffers this device has stored to in this
  /// invocation (scratch persists across grid steps, not invocations).
  std::unordered_map<model::BufferId, std::vector<ScratchInt>> scratchInts_;
  model::ContextId context_ = 0;
  bool contextDirty_ = true;
};

} // namespace

std::optional<model::Program> lower(const ast::Module &module, const std::string &file,
                                    const model::Options &options, support::DiagnosticEngine &diags,
                                    const model::BuildLimits &limits) {
  return Lowering(module, file, options, diags, limits).run();
}

} // namespace dkv::lower
