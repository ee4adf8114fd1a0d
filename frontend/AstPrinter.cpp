// The AST printer: one line per node, indented by depth.
#include "frontend/AstPrinter.h"

#include <ostream>
#include <string>

namespace dkv::frontend {

namespace {

using namespace ast;

std::string loc(const SourceRange &r) {
  return "@" + std::to_string(r.begin.line) + ":" + std::to_string(r.begin.col);
}

std::string ints(const std::vector<int64_t> &values) {
  std::string s = "[";
  for (size_t i = 0; i < values.size(); ++i)
    s += (i ? ", " : "") + std::to_string(values[i]);
  return s + "]";
}

// Recursion follows the AST, whose depth the parser bounds (ParseLimits).
class Printer {
public:
  explicit Printer(std::ostream &out) : out_(out) {}

  void module(const Module &m) {
    // Comments are not part of the tree (`dkv parse --annotations` prints the
    // annotations in them).
    line(0, "", "Module", m.range());
    for (const auto &item : m.items())
      node(1, "", *item);
  }

private:
  std::ostream &out_;

  void line(int depth, std::string_view role, const std::string &text, const SourceRange &r) {
    out_ << std::string(static_cast<size_t>(depth) * 2, ' ');
    if (!role.empty())
      out_ << role << ": ";
    out_ << text << " " << loc(r) << "\n";
  }

  void node(int depth, std::string_view role, const Node &n) {
    if (auto *e = dynCast<Expr>(&n))
      return expr(depth, role, *e);
    if (auto *s = dynCast<Stmt>(&n))
      return stmt(depth, role, *s);
    if (auto *d = dynCast<Decl>(&n))
      return decl(depth, role, *d);
    switch (n.kind()) {
    case Node::Kind::Block: {
      line(depth, role, "Block", n.range());
      for (const auto &s : cast<Block>(n).stmts())
        stmt(depth + 1, "", *s);
      return;
    }
    case Node::Kind::MeshDecl:
      line(depth, role, cast<MeshDecl>(n).isTensorCore() ? "MeshDecl tensorcore" : "MeshDecl",
           n.range());
      for (const auto &axis : cast<MeshDecl>(n).axes())
        decl(depth + 1, "", *axis);
      return;
    case Node::Kind::KernelDecl: {
      const auto &k = cast<KernelDecl>(n);
      line(depth, role, "KernelDecl " + k.name(), k.range());
      for (const Decl *p : k.paramOrder())
        decl(depth + 1, "param", *p);
      if (!k.grid().empty()) {
        std::string s = "Grid";
        if (!k.gridValues().empty())
          s += " = " + ints(k.gridValues());
        line(depth + 1, "", s, k.grid().front()->range());
        for (const auto &g : k.grid())
          expr(depth + 2, "", *g);
      }
      if (k.collectiveId()) {
        std::string s = "CollectiveId";
        if (k.collectiveIdValue())
          s += " = " + std::to_string(*k.collectiveIdValue());
        line(depth + 1, "", s, k.collectiveId()->range());
        expr(depth + 2, "", *k.collectiveId());
        decl(depth + 1, "implicit", *k.barrier());
      }
      if (const Expr *skip = k.skipDeviceBarrier()) {
        line(depth + 1, "",
             std::string("SkipDeviceBarrier = ") + (k.skipDeviceBarrierValue() ? "true" : "false"),
             skip->range());
        expr(depth + 2, "", *skip);
      }
      node(depth + 1, "body", k.body());
      return;
    }
    case Node::Kind::SequenceDecl: {
      const auto &q = cast<SequenceDecl>(n);
      line(depth, role, "SequenceDecl", q.range());
      for (const Decl *p : q.order())
        decl(depth + 1, "array", *p);
      for (const SequenceCall &c : q.calls()) {
        std::string s = "Call " + c.kernel + "(";
        for (size_t i = 0; i < c.args.size(); ++i)
          s += (i ? ", " : "") + c.args[i].first;
        line(depth + 1, "", s + ")", c.range);
      }
      return;
    }
    default:
      line(depth, role, std::string(toString(n.kind())), n.range());
      return;
    }
  }

  void decl(int depth, std::string_view role, const Decl &d) {
    std::string head = std::string(toString(d.kind())) + " " + d.name();
    switch (d.kind()) {
    case Node::Kind::ParamDecl: {
      const auto &p = cast<ParamDecl>(d);
      if (p.value())
        head += " = " + std::to_string(*p.value());
      line(depth, role, head, d.range());
      if (p.defaultValue())
        expr(depth + 1, "default", *p.defaultValue());
      return;
    }
    case Node::Kind::ConstDecl: {
      const auto &c = cast<ConstDecl>(d);
      if (c.value())
        head += " = " + std::to_string(*c.value());
      line(depth, role, head, d.range());
      expr(depth + 1, "", c.init());
      return;
    }
    case Node::Kind::AxisDecl: {
      const auto &a = cast<AxisDecl>(d);
      head += " #" + std::to_string(a.index());
      if (a.size())
        head += " = " + std::to_string(*a.size());
      line(depth, role, head, d.range());
      expr(depth + 1, "size", a.sizeExpr());
      return;
    }
    case Node::Kind::BufferDecl: {
      const auto &b = cast<BufferDecl>(d);
      if (b.direction() != Direction::None)
        head += " " + std::string(toString(b.direction()));
      head += " " + std::string(toString(b.space())) + " " + std::string(toString(b.dtype()));
      if (!b.shapeValues().empty() || b.shape().empty())
        head += ints(b.shapeValues());
      if (b.tableInit())
        head +=
            " table" + ints(b.tableInit()->shape) + (b.tableRows().size() > 1 ? " per device" : "");
      else if (b.tableFromCall())
        head += " table from the sequence";
      line(depth, role, head, d.range());
      for (const auto &e : b.shape())
        expr(depth + 1, "dim", *e);
      if (b.tableInit())
        for (const auto &e : b.tableInit()->elements)
          expr(depth + 1, "element", *e);
      return;
    }
    case Node::Kind::SemDecl: {
      const auto &s = cast<SemDecl>(d);
      head += " " + std::string(toString(s.semKind()));
      if (!s.dimValues().empty())
        head += ints(s.dimValues());
      line(depth, role, head, d.range());
      for (const auto &e : s.dims())
        expr(depth + 1, "dim", *e);
      return;
    }
    case Node::Kind::LetDecl:
      line(depth, role, head, d.range());
      expr(depth + 1, "", cast<LetDecl>(d).init());
      return;
    case Node::Kind::VarDecl: {
      const auto &v = cast<VarDecl>(d);
      if (!v.dimValues().empty())
        head += ints(v.dimValues());
      if (v.isInteger())
        head += " integer";
      line(depth, role, head, d.range());
      for (const auto &e : v.dims())
        expr(depth + 1, "dim", *e);
      if (v.init())
        expr(depth + 1, "init", *v.init());
      return;
    }
    default:
      line(depth, role, head, d.range());
      return;
    }
  }

  void stmt(int depth, std::string_view role, const Stmt &s) {
    switch (s.kind()) {
    case Node::Kind::ScratchStmt:
      line(depth, role, "ScratchStmt", s.range());
      for (const auto &d : cast<ScratchStmt>(s).decls())
        decl(depth + 1, "", *d);
      return;
    case Node::Kind::RunScopedStmt: {
      const auto &r = cast<RunScopedStmt>(s);
      line(depth, role, "RunScopedStmt", s.range());
      for (const auto &d : r.decls())
        decl(depth + 1, "", *d);
      node(depth + 1, "body", r.body());
      return;
    }
    case Node::Kind::LetStmt:
      line(depth, role, "LetStmt", s.range());
      decl(depth + 1, "", cast<LetStmt>(s).decl());
      return;
    case Node::Kind::VarStmt:
      line(depth, role, "VarStmt", s.range());
      for (const auto &d : cast<VarStmt>(s).decls())
        decl(depth + 1, "", *d);
      return;
    case Node::Kind::IfStmt: {
      const auto &i = cast<IfStmt>(s);
      line(depth, role, "IfStmt", s.range());
      for (const auto &b : i.branches()) {
        expr(depth + 1, "cond", *b.cond);
        node(depth + 1, "then", *b.body);
      }
      if (i.elseBody())
        node(depth + 1, "else", *i.elseBody());
      return;
    }
    case Node::Kind::ForStmt: {
      const auto &f = cast<ForStmt>(s);
      line(depth, role, "ForStmt", s.range());
      decl(depth + 1, "var", f.var());
      expr(depth + 1, "lo", f.lo());
      expr(depth + 1, "hi", f.hi());
      node(depth + 1, "body", f.body());
      return;
    }
    case Node::Kind::EmitPipelineStmt: {
      const auto &ep = cast<EmitPipelineStmt>(s);
      line(depth, role, "EmitPipelineStmt" + ints(ep.gridValues()), s.range());
      for (const auto &g : ep.grid())
        expr(depth + 1, "grid", *g);
      for (const auto &op : ep.operands()) {
        line(depth + 1, "", op.output ? "out_spec" : "in_spec", op.specRange);
        expr(depth + 2, "ref", *op.ref);
        for (const auto &p : op.mapParams)
          decl(depth + 2, "index_map param", *p);
        for (const auto &e : op.mapResult)
          expr(depth + 2, "block index", *e);
        decl(depth + 2, "block", *op.block);
      }
      node(depth + 1, "body", ep.body());
      return;
    }
    case Node::Kind::StoreStmt: {
      const auto &st = cast<StoreStmt>(s);
      line(depth, role, st.accumulate() ? "StoreStmt +=" : "StoreStmt =", s.range());
      expr(depth + 1, "target", st.target());
      expr(depth + 1, "value", st.value());
      return;
    }
    case Node::Kind::DmaStmt: {
      const auto &d = cast<DmaStmt>(s);
      line(depth, role, "DmaStmt " + std::string(toString(d.method())), s.range());
      expr(depth + 1, "descriptor", d.descriptor());
      if (d.priority())
        expr(depth + 1, "priority", *d.priority());
      return;
    }
    case Node::Kind::SignalStmt: {
      const auto &sg = cast<SignalStmt>(s);
      line(depth, role, "SignalStmt", s.range());
      expr(depth + 1, "sem", sg.sem());
      if (sg.inc())
        expr(depth + 1, "inc", *sg.inc());
      if (sg.device())
        expr(depth + 1, "device", *sg.device());
      if (sg.coreIndex())
        expr(depth + 1, "core_index", *sg.coreIndex());
      return;
    }
    case Node::Kind::WaitStmt: {
      const auto &w = cast<WaitStmt>(s);
      line(depth, role, "WaitStmt", s.range());
      expr(depth + 1, "sem", w.sem());
      if (w.value())
        expr(depth + 1, "value", *w.value());
      return;
    }
    default:
      line(depth, role, std::string(toString(s.kind())), s.range());
      return;
    }
  }

  static std::string typeSuffix(const Expr &e) {
    return e.type().isError() ? std::string() : " : " + e.type().str();
  }

  void expr(int depth, std::string_view role, const Expr &e) {
    std::string head(toString(e.kind()));
    switch (e.kind()) {
    case Node::Kind::IntLiteral:
      head += " " + std::to_string(cast<IntLiteral>(e).value());
      break;
    case Node::Kind::FloatLiteral:
      head += " " + cast<FloatLiteral>(e).text();
      break;
    case Node::Kind::BoolLiteral:
      head += cast<BoolLiteral>(e).value() ? " true" : " false";
      break;
    case Node::Kind::NameExpr: {
      const auto &n = cast<NameExpr>(e);
      head += " " + n.name();
      if (n.decl())
        head += " -> " + std::string(toString(n.decl()->kind())) + loc(n.decl()->range());
      break;
    }
    case Node::Kind::UnaryExpr:
      head += " " + std::string(toString(cast<UnaryExpr>(e).op()));
      break;
    case Node::Kind::BinaryExpr:
      head += " " + std::string(toString(cast<BinaryExpr>(e).op()));
      break;
    case Node::Kind::CallExpr:
      head += " " + std::string(toString(cast<CallExpr>(e).builtin()));
      if (auto v = cast<CallExpr>(e).value())
        head += " = " + std::to_string(*v);
      break;
    case Node::Kind::IndexExpr:
      if (cast<IndexExpr>(e).ellipsis())
        head += " [...]";
      break;
    case Node::Kind::ComputeExpr: {
      const auto &c = cast<ComputeExpr>(e);
      head += " " + std::string(toString(c.op()));
      if (c.dtype())
        head += " " + std::string(toString(*c.dtype()));
      if (c.axisValue())
        head += " axis " + std::to_string(*c.axisValue());
      if (prim::record(c.op()).shape == prim::ShapeRule::Split)
        head += " part " + std::to_string(c.part());
      for (const auto &[flag, value] : c.flags())
        head += " " + flag + (value ? " true" : " false");
      break;
    }
    case Node::Kind::CopyExpr:
      if (cast<CopyExpr>(e).started())
        head += " started";
      break;
    case Node::Kind::RemoteCopyExpr:
      if (cast<RemoteCopyExpr>(e).started())
        head += " started";
      break;
    default:
      break;
    }
    line(depth, role, head + typeSuffix(e), e.range());
    switch (e.kind()) {
    case Node::Kind::UnaryExpr:
      expr(depth + 1, "", cast<UnaryExpr>(e).operand());
      break;
    case Node::Kind::BinaryExpr:
      expr(depth + 1, "", cast<BinaryExpr>(e).lhs());
      expr(depth + 1, "", cast<BinaryExpr>(e).rhs());
      break;
    case Node::Kind::CallExpr:
      expr(depth + 1, "", cast<CallExpr>(e).arg());
      break;
    case Node::Kind::IndexExpr: {
      const auto &ix = cast<IndexExpr>(e);
      expr(depth + 1, "base", ix.base());
      for (const Subscript &s : ix.subscripts()) {
        switch (s.kind) {
        case Subscript::Kind::Index:
          expr(depth + 1, "index", *s.lo);
          break;
        case Subscript::Kind::Full:
          line(depth + 1, "", "Full", s.range);
          break;
        case Subscript::Kind::Range:
          line(depth + 1, "", "Range", s.range);
          if (s.lo)
            expr(depth + 2, "lo", *s.lo);
          if (s.hi)
            expr(depth + 2, "hi", *s.hi);
          break;
        }
      }
      break;
    }
    case Node::Kind::TupleExpr:
      for (const auto &el : cast<TupleExpr>(e).elements())
        expr(depth + 1, "", *el);
      break;
    case Node::Kind::SelectRefExpr:
      expr(depth + 1, "index", cast<SelectRefExpr>(e).index());
      for (const auto &choice : cast<SelectRefExpr>(e).choices())
        expr(depth + 1, "", *choice);
      break;
    case Node::Kind::SelectExpr:
      expr(depth + 1, "cond", cast<SelectExpr>(e).cond());
      expr(depth + 1, "", cast<SelectExpr>(e).ifTrue());
      expr(depth + 1, "", cast<SelectExpr>(e).ifFalse());
      break;
    case Node::Kind::MappingExpr:
      for (const auto &entry : cast<MappingExpr>(e).entries()) {
        expr(depth + 1, "axis", *entry.axis);
        expr(depth + 2, "", *entry.value);
      }
      break;
    case Node::Kind::CopyExpr: {
      const auto &c = cast<CopyExpr>(e);
      expr(depth + 1, "src", c.src());
      expr(depth + 1, "dst", c.dst());
      expr(depth + 1, "sem", c.sem());
      break;
    }
    case Node::Kind::RemoteCopyExpr: {
      const auto &c = cast<RemoteCopyExpr>(e);
      expr(depth + 1, "src", c.src());
      expr(depth + 1, "dst", c.dst());
      expr(depth + 1, "send", c.sendSem());
      expr(depth + 1, "recv", c.recvSem());
      expr(depth + 1, "device", c.device());
      break;
    }
    case Node::Kind::ComputeExpr: {
      const auto &c = cast<ComputeExpr>(e);
      for (const auto &op : c.operands())
        expr(depth + 1, "", *op);
      if (c.axis())
        expr(depth + 1, "axis", *c.axis());
      for (const auto &d : c.dims())
        expr(depth + 1, "dim", *d);
      break;
    }
    default:
      break;
    }
  }
};

} // namespace

void printAst(const ast::Module &module, std::ostream &out) { Printer(out).module(module); }

} // namespace dkv::frontend
