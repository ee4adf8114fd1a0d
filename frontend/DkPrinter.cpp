// The kernel-language printer: AST -> `.dk` source.
#include "frontend/DkPrinter.h"
#include "frontend/Parser.h"

#include <ostream>
#include <string>

namespace dkv::frontend {

namespace {

using namespace ast;

// Recursion follows the AST, whose depth its producers bound.
class Printer {
public:
  Printer(std::ostream &out, const std::function<std::string(const SourceRange &)> &comment)
      : out_(out), comment_(comment) {}

  void module(const Module &m) {
    for (const auto &item : m.items()) {
      if (auto *p = dynCast<ParamDecl>(item.get())) {
        out_ << "param " << p->name();
        if (p->defaultValue())
          out_ << " = " << expr(*p->defaultValue());
        end(p->range());
      } else if (auto *c = dynCast<ConstDecl>(item.get())) {
        out_ << "const " << c->name() << " = " << expr(c->init());
        end(c->range());
      } else if (auto *mesh = dynCast<MeshDecl>(item.get())) {
        out_ << (mesh->isTensorCore() ? "tensorcore_mesh " : "mesh ");
        for (size_t i = 0; i < mesh->axes().size(); ++i)
          out_ << (i ? ", " : "") << mesh->axes()[i]->name() << " = "
               << expr(mesh->axes()[i]->sizeExpr());
        end(mesh->range());
      } else if (auto *k = dynCast<KernelDecl>(item.get())) {
        kernel(*k);
      } else if (auto *q = dynCast<SequenceDecl>(item.get())) {
        sequence(*q);
      }
    }
  }

private:
  std::ostream &out_;
  const std::function<std::string(const SourceRange &)> &comment_;
  int depth_ = 0;

  void indent() { out_ << std::string(static_cast<size_t>(depth_) * 2, ' '); }
  void end(const SourceRange &r) {
    if (comment_) {
      std::string c = comment_(r);
      if (!c.empty())
        out_ << "  // " << c;
    }
    out_ << "\n";
  }

  std::string shape(const std::vector<ExprPtr> &dims) {
    std::string s = "[";
    for (size_t i = 0; i < dims.size(); ++i)
      s += (i ? ", " : "") + expr(*dims[i]);
    return s + "]";
  }

  std::string table(const TableLiteral &t, size_t dim, size_t &next) {
    std::string s = "[";
    int64_t n = dim < t.shape.size() ? t.shape[dim] : 0;
    for (int64_t i = 0; i < n; ++i) {
      s += i ? ", " : "";
      if (dim + 1 == t.shape.size())
        s += expr(*t.elements[next++]);
      else
        s += table(t, dim + 1, next);
    }
    return s + "]";
  }

  std::string buffer(const BufferDecl &b) {
    std::string s;
    if (b.direction() != Direction::None)
      s += std::string(toString(b.direction())) + " ";
    s += b.name() + ": " + std::string(toString(b.space())) + " " +
         std::string(toString(b.dtype())) + shape(b.shape());
    if (b.tableInit()) {
      size_t next = 0;
      s += " = " + table(*b.tableInit(), 0, next);
    }
    return s;
  }

  std::string decl(const Decl &d) {
    if (auto *b = dynCast<BufferDecl>(&d))
      return buffer(*b);
    const auto &s = cast<SemDecl>(d);
    std::string text = s.name() + ": " + (s.semKind() == SemKind::Dma ? "dma_sem" : "sem");
    if (!s.dims().empty())
      text += shape(s.dims());
    return text;
  }

  /// A kernel's name as the grammar reads it back: a Python function named `kernel`
  /// (a keyword) is `kernel_`.
  static std::string kernelName(const std::string &name) {
    return isKeyword(name) ? name + "_" : name;
  }

  void kernel(const KernelDecl &k) {
    out_ << "\nkernel " << kernelName(k.name()) << "(";
    std::vector<const Decl *> params = k.paramOrder();
    for (size_t i = 0; i < params.size(); ++i)
      out_ << (i ? ",\n    " : "") << param(*params[i]);
    out_ << ")";
    if (!k.grid().empty()) {
      out_ << " grid(";
      for (size_t i = 0; i < k.grid().size(); ++i)
        out_ << (i ? ", " : "") << expr(*k.grid()[i]);
      out_ << ")";
    }
    if (k.collectiveId())
      out_ << " collective_id(" << expr(*k.collectiveId()) << ")";
    if (k.skipDeviceBarrier())
      out_ << " skip_device_barrier(" << expr(*k.skipDeviceBarrier()) << ")";
    out_ << " {";
    end(k.range());
    ++depth_;
    for (const auto &s : k.body().stmts())
      stmt(*s);
    --depth_;
    out_ << "}\n";
  }

  // A kernel or sequence parameter: a buffer, or a semaphore (`in s: sem`; the
  // direction has no meaning for a semaphore).
  std::string param(const Decl &d) {
    if (auto *b = dynCast<BufferDecl>(&d))
      return buffer(*b);
    return "in " + decl(d);
  }

  void sequence(const SequenceDecl &q) {
    out_ << "\nsequence(";
    for (size_t i = 0; i < q.order().size(); ++i)
      out_ << (i ? ",\n    " : "") << param(*q.order()[i]);
    out_ << ") {";
    end(q.range());
    ++depth_;
    for (const SequenceCall &c : q.calls()) {
      indent();
      out_ << kernelName(c.kernel) << "(";
      for (size_t i = 0; i < c.args.size(); ++i)
        out_ << (i ? ", " : "") << c.args[i].first;
      out_ << ")";
      end(c.range);
    }
    --depth_;
    out_ << "}\n";
  }

  // A block; the comment of the statement that opens it goes after its `{`.
  void block(const Block &b, const SourceRange &opener) {
    out_ << "{";
    end(opener);
    ++depth_;
    for (const auto &s : b.stmts())
      stmt(*s);
    --depth_;
    indent();
    out_ << "}";
  }

  // `(a, b)`, `(a,)`: a tuple as Python writes it.
  std::string tuple(const std::vector<ExprPtr> &items) {
    std::string t = "(";
    for (size_t i = 0; i < items.size(); ++i)
      t += (i ? ", " : "") + expr(*items[i]);
    return t + (items.size() == 1 ? ",)" : ")");
  }

  // `emit_pipeline(grid = (...), in_specs = [...], out_specs = [...])(refs) lambda
  // blocks { body }` (docs/language.md "Pipelines").
  void pipeline(const EmitPipelineStmt &p) {
    out_ << "emit_pipeline(grid = " << tuple(p.grid());
    for (bool output : {false, true}) {
      std::string specs;
      for (const PipelineOperand &op : p.operands()) {
        if (op.output != output)
          continue;
        specs += std::string(specs.empty() ? "" : ", ") + "BlockSpec(" + tuple(op.block->shape()) +
                 ", lambda";
        for (size_t i = 0; i < op.mapParams.size(); ++i)
          specs += (i ? ", " : " ") + op.mapParams[i]->name();
        specs += ": " + tuple(op.mapResult) + ")";
      }
      if (!specs.empty())
        out_ << (output ? ", out_specs = [" : ", in_specs = [") << specs << "]";
    }
    out_ << ")(";
    for (size_t i = 0; i < p.operands().size(); ++i)
      out_ << (i ? ", " : "") << expr(*p.operands()[i].ref);
    out_ << ") lambda";
    for (size_t i = 0; i < p.operands().size(); ++i)
      out_ << (i ? ", " : " ") << p.operands()[i].block->name();
    out_ << " ";
    block(p.body(), p.range());
  }

  void stmt(const Stmt &s) {
    // The names after the first of a tuple let are printed with the first.
    if (const auto *l = dynCast<LetStmt>(&s); l && l->tupleIndex() > 0)
      return;
    indent();
    bool compound =
        isa<IfStmt>(s) || isa<ForStmt>(s) || isa<RunScopedStmt>(s) || isa<EmitPipelineStmt>(s);
    switch (s.kind()) {
    case Node::Kind::ScratchStmt: {
      out_ << "scratch ";
      const auto &decls = cast<ScratchStmt>(s).decls();
      for (size_t i = 0; i < decls.size(); ++i)
        out_ << (i ? ", " : "") << decl(*decls[i]);
      break;
    }
    case Node::Kind::RunScopedStmt: {
      const auto &r = cast<RunScopedStmt>(s);
      out_ << "run_scoped(";
      for (size_t i = 0; i < r.decls().size(); ++i)
        out_ << (i ? ", " : "") << decl(*r.decls()[i]);
      out_ << ") ";
      block(r.body(), s.range());
      break;
    }
    case Node::Kind::LetStmt: {
      const auto &l = cast<LetStmt>(s);
      if (l.tupleSize() > 1 && l.tupleNames().size() == l.tupleSize()) {
        out_ << "let ";
        for (size_t i = 0; i < l.tupleNames().size(); ++i)
          out_ << (i ? ", " : "") << l.tupleNames()[i];
        out_ << " = " << expr(l.decl().init());
        break;
      }
      out_ << "let " << l.decl().name() << " = " << expr(l.decl().init());
      break;
    }
    case Node::Kind::VarStmt: {
      out_ << "var ";
      const auto &decls = cast<VarStmt>(s).decls();
      for (size_t i = 0; i < decls.size(); ++i) {
        out_ << (i ? ", " : "") << decls[i]->name();
        if (!decls[i]->dims().empty())
          out_ << shape(decls[i]->dims());
        if (decls[i]->init())
          out_ << " = " << expr(*decls[i]->init());
      }
      break;
    }
    case Node::Kind::IfStmt: {
      const auto &i = cast<IfStmt>(s);
      for (size_t b = 0; b < i.branches().size(); ++b) {
        out_ << (b ? " else if " : "if ") << expr(*i.branches()[b].cond) << " ";
        block(*i.branches()[b].body, b ? i.branches()[b].cond->range() : s.range());
      }
      if (i.elseBody()) {
        out_ << " else ";
        block(*i.elseBody(), i.elseBody()->range());
      }
      break;
    }
    case Node::Kind::ForStmt: {
      const auto &f = cast<ForStmt>(s);
      out_ << "for " << f.var().name() << " in " << expr(f.lo()) << " .. " << expr(f.hi()) << " ";
      block(f.body(), s.range());
      break;
    }
    case Node::Kind::StoreStmt: {
      const auto &st = cast<StoreStmt>(s);
      out_ << expr(st.target()) << (st.accumulate() ? " += " : " = ") << expr(st.value());
      break;
    }
    case Node::Kind::DmaStmt: {
      const auto &d = cast<DmaStmt>(s);
      out_ << expr(d.descriptor()) << "." << toString(d.method()) << "(";
      if (d.priority())
        out_ << "priority = " << expr(*d.priority());
      out_ << ")";
      break;
    }
    case Node::Kind::SignalStmt: {
      const auto &sig = cast<SignalStmt>(s);
      out_ << "signal(" << expr(sig.sem());
      if (sig.inc() || sig.device())
        out_ << ", " << (sig.inc() ? expr(*sig.inc()) : std::string("1"));
      if (sig.device())
        out_ << ", device = " << expr(*sig.device());
      if (sig.coreIndex())
        out_ << ", core_index = " << expr(*sig.coreIndex());
      out_ << ")";
      break;
    }
    case Node::Kind::WaitStmt: {
      const auto &w = cast<WaitStmt>(s);
      out_ << "wait(" << expr(w.sem());
      if (w.value())
        out_ << ", " << expr(*w.value());
      out_ << ")";
      break;
    }
    case Node::Kind::EmitPipelineStmt:
      pipeline(cast<EmitPipelineStmt>(s));
      break;
    default:
      out_ << "/* ? */";
    }
    if (compound)
      out_ << "\n";
    else
      end(s.range());
  }

  // An operand: atoms as they are, anything compound in parentheses.
  std::string operand(const Expr &e) {
    bool atom = isa<IntLiteral>(e) || isa<FloatLiteral>(e) || isa<BoolLiteral>(e) ||
                isa<NameExpr>(e) || isa<IndexExpr>(e) || isa<CallExpr>(e) || isa<ComputeExpr>(e) ||
                isa<SelectExpr>(e) || isa<SelectRefExpr>(e) ||
                (isa<BinaryExpr>(e) && (cast<BinaryExpr>(e).op() == BinaryOp::Min ||
                                        cast<BinaryExpr>(e).op() == BinaryOp::Max ||
                                        cast<BinaryExpr>(e).op() == BinaryOp::Rem));
    return atom ? expr(e) : "(" + expr(e) + ")";
  }

  std::string subscript(const Subscript &s) {
    switch (s.kind) {
    case Subscript::Kind::Index:
      return expr(*s.lo);
    case Subscript::Kind::Range:
      return (s.lo ? expr(*s.lo) : "") + ":" + (s.hi ? expr(*s.hi) : "");
    case Subscript::Kind::Full:
      return ":";
    }
    return ":";
  }

  std::string expr(const Expr &e) {
    switch (e.kind()) {
    case Node::Kind::IntLiteral: {
      int64_t v = cast<IntLiteral>(e).value();
      return v < 0 ? "(" + std::to_string(v) + ")" : std::to_string(v);
    }
    case Node::Kind::FloatLiteral:
      return cast<FloatLiteral>(e).text();
    case Node::Kind::BoolLiteral:
      return cast<BoolLiteral>(e).value() ? "true" : "false";
    case Node::Kind::NameExpr:
      return cast<NameExpr>(e).name();
    case Node::Kind::UnaryExpr: {
      const auto &u = cast<UnaryExpr>(e);
      return (u.op() == UnaryOp::Neg ? "-" : "not ") + operand(u.operand());
    }
    case Node::Kind::BinaryExpr: {
      const auto &b = cast<BinaryExpr>(e);
      if (b.op() == BinaryOp::Min || b.op() == BinaryOp::Max || b.op() == BinaryOp::Rem)
        return std::string(ast::toString(b.op())) + "(" + expr(b.lhs()) + ", " + expr(b.rhs()) +
               ")";
      return operand(b.lhs()) + " " + std::string(ast::toString(b.op())) + " " + operand(b.rhs());
    }
    case Node::Kind::SelectExpr: {
      const auto &s = cast<SelectExpr>(e);
      return "select(" + expr(s.cond()) + ", " + expr(s.ifTrue()) + ", " + expr(s.ifFalse()) + ")";
    }
    case Node::Kind::SelectRefExpr: {
      const auto &s = cast<SelectRefExpr>(e);
      std::string text = "select_ref(" + expr(s.index());
      for (const ExprPtr &choice : s.choices())
        text += ", " + expr(*choice);
      return text + ")";
    }
    case Node::Kind::CallExpr: {
      const auto &c = cast<CallExpr>(e);
      return std::string(toString(c.builtin())) + "(" + expr(c.arg()) + ")";
    }
    case Node::Kind::IndexExpr: {
      const auto &i = cast<IndexExpr>(e);
      if (i.ellipsis())
        return i.base().name() + "[...]";
      std::string s = i.base().name() + "[";
      for (size_t k = 0; k < i.subscripts().size(); ++k)
        s += (k ? ", " : "") + subscript(i.subscripts()[k]);
      return s + "]";
    }
    case Node::Kind::TupleExpr: {
      const auto &t = cast<TupleExpr>(e);
      std::string s = t.list() ? "[" : "(";
      for (size_t k = 0; k < t.elements().size(); ++k)
        s += (k ? ", " : "") + expr(*t.elements()[k]);
      if (t.list())
        return s + "]";
      return s + (t.elements().size() == 1 ? ",)" : ")");
    }
    case Node::Kind::MappingExpr: {
      const auto &m = cast<MappingExpr>(e);
      std::string s = "{";
      for (size_t k = 0; k < m.entries().size(); ++k)
        s += (k ? ", " : "") + m.entries()[k].axis->name() + ": " + expr(*m.entries()[k].value);
      return s + "}";
    }
    case Node::Kind::CopyExpr: {
      const auto &c = cast<CopyExpr>(e);
      return std::string(c.started() ? "async_copy(" : "copy(") + expr(c.src()) + ", " +
             expr(c.dst()) + ", " + expr(c.sem()) + ")";
    }
    case Node::Kind::RemoteCopyExpr: {
      const auto &c = cast<RemoteCopyExpr>(e);
      return std::string(c.started() ? "async_remote_copy(" : "remote_copy(") + expr(c.src()) +
             ", " + expr(c.dst()) + ", " + expr(c.sendSem()) + ", " + expr(c.recvSem()) +
             ", device = " + expr(c.device()) + ")";
    }
    case Node::Kind::ComputeExpr: {
      // By the op's `.dk` signature: required parameters positionally, optional ones
      // that are given as `name = value`.
      const auto &c = cast<ComputeExpr>(e);
      const prim::Signature &sig = prim::dkSignatures(c.op()).front();
      auto tuple = [&](const std::vector<ExprPtr> &items, bool list) {
        std::string t = list ? "[" : "(";
        for (size_t k = 0; k < items.size(); ++k)
          t += (k ? ", " : "") + expr(*items[k]);
        return t + (list ? "]" : items.size() == 1 ? ",)" : ")");
      };
      std::vector<std::string> args;
      size_t operand = 0;
      for (const prim::Param &p : sig.params) {
        std::string value;
        switch (p.kind) {
        case prim::ParamKind::Array:
        case prim::ParamKind::Cond:
        case prim::ParamKind::Value:
          value = expr(*c.operands()[operand++]);
          break;
        case prim::ParamKind::Arrays:
          value = tuple(c.operands(), true);
          break;
        case prim::ParamKind::Axis:
          if (c.axis())
            value = expr(*c.axis());
          break;
        case prim::ParamKind::Int:
          value = expr(*c.dims()[0]);
          break;
        case prim::ParamKind::DType:
          if (c.dtype())
            value = std::string(toString(*c.dtype()));
          break;
        case prim::ParamKind::Shape:
          value = tuple(c.dims(), false);
          break;
        case prim::ParamKind::Bool:
          if (auto f = c.flag(p.name))
            value = *f ? "true" : "false";
          break;
        case prim::ParamKind::Unsupported:
          break;
        }
        if (value.empty())
          continue;
        args.push_back(p.required() ? value : std::string(p.name) + " = " + value);
      }
      std::string s = std::string(sig.name) + "(";
      for (size_t k = 0; k < args.size(); ++k)
        s += (k ? ", " : "") + args[k];
      return s + ")";
    }
    default:
      return "/* ? */";
    }
  }
};

} // namespace

void printDk(const Module &module, std::ostream &out,
             const std::function<std::string(const SourceRange &)> &comment) {
  Printer(out, comment).module(module);
}

} // namespace dkv::frontend
