// Names of AST enumerations, type rendering and Module accessors.
#include "frontend/AST.h"

#include <utility>

namespace dkv::ast {

std::string_view toString(Direction direction) {
  switch (direction) {
  case Direction::None:
    return "none";
  case Direction::In:
    return "in";
  case Direction::Out:
    return "out";
  case Direction::InOut:
    return "inout";
  }
  return "?";
}

std::string_view toString(SemKind kind) {
  switch (kind) {
  case SemKind::Regular:
    return "sem";
  case SemKind::Dma:
    return "dma_sem";
  case SemKind::Barrier:
    return "barrier_sem";
  }
  return "?";
}

std::string_view toString(UnaryOp op) {
  switch (op) {
  case UnaryOp::Neg:
    return "-";
  case UnaryOp::Not:
    return "not";
  }
  return "?";
}

std::string_view toString(BinaryOp op) {
  switch (op) {
  case BinaryOp::Add:
    return "+";
  case BinaryOp::Sub:
    return "-";
  case BinaryOp::Mul:
    return "*";
  case BinaryOp::Div:
    return "/";
  case BinaryOp::Mod:
    return "%";
  case BinaryOp::Min:
    return "min";
  case BinaryOp::Max:
    return "max";
  case BinaryOp::Eq:
    return "==";
  case BinaryOp::Ne:
    return "!=";
  case BinaryOp::Lt:
    return "<";
  case BinaryOp::Le:
    return "<=";
  case BinaryOp::Gt:
    return ">";
  case BinaryOp::Ge:
    return ">=";
  case BinaryOp::And:
    return "and";
  case BinaryOp::Or:
    return "or";
  case BinaryOp::Rem:
    return "rem";
  case BinaryOp::BitAnd:
    return "&";
  case BinaryOp::BitOr:
    return "|";
  case BinaryOp::BitXor:
    return "^";
  case BinaryOp::Shl:
    return "<<";
  case BinaryOp::Shr:
    return ">>";
  }
  return "?";
}

std::string_view toString(Builtin builtin) {
  switch (builtin) {
  case Builtin::AxisIndex:
    return "axis_index";
  case Builtin::AxisSize:
    return "axis_size";
  case Builtin::ProgramId:
    return "program_id";
  case Builtin::NumPrograms:
    return "num_programs";
  case Builtin::Read:
    return "read";
  }
  return "?";
}

std::string_view toString(DmaMethod method) {
  switch (method) {
  case DmaMethod::Start:
    return "start";
  case DmaMethod::Wait:
    return "wait";
  case DmaMethod::WaitSend:
    return "wait_send";
  case DmaMethod::WaitRecv:
    return "wait_recv";
  }
  return "?";
}

std::string_view toString(TypeKind kind) {
  switch (kind) {
  case TypeKind::Error:
    return "<error>";
  case TypeKind::Int:
    return "int";
  case TypeKind::Bool:
    return "bool";
  case TypeKind::Float:
    return "float";
  case TypeKind::Value:
    return "value";
  case TypeKind::Mask:
    return "mask";
  case TypeKind::Ref:
    return "ref";
  case TypeKind::Sem:
    return "semaphore";
  case TypeKind::Descriptor:
    return "descriptor";
  case TypeKind::DescriptorVar:
    return "descriptor variable";
  case TypeKind::Axis:
    return "axis";
  case TypeKind::Device:
    return "device";
  }
  return "?";
}

namespace {
std::string shapeString(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      s += ", ";
    s += shape[i] == Type::kDynamic ? std::string("?") : std::to_string(shape[i]);
  }
  return s + "]";
}
} // namespace

std::string Type::str() const {
  switch (kind) {
  case TypeKind::Int:
    return runtime ? "int (run time)" : "int";
  case TypeKind::Value:
    return "value " + std::string(toString(dtype)) + shapeString(shape);
  case TypeKind::Mask:
    return "mask" + shapeString(shape);
  case TypeKind::Ref:
    return "ref " + std::string(toString(dtype)) + shapeString(shape);
  case TypeKind::Sem: {
    std::string s(toString(semKind));
    if (semRank > 0)
      s += " array (" + std::to_string(semRank) + (semRank == 1 ? " dim)" : " dims)");
    return s;
  }
  case TypeKind::Descriptor:
    return remote ? "remote copy descriptor" : "copy descriptor";
  case TypeKind::DescriptorVar:
    if (semRank > 0)
      return "descriptor array (" + std::to_string(semRank) + (semRank == 1 ? " dim)" : " dims)");
    return "descriptor variable";
  default:
    return std::string(toString(kind));
  }
}

std::string_view toString(Node::Kind kind) {
  switch (kind) {
#define DKV_KIND(K)                                                                                \
  case Node::Kind::K:                                                                              \
    return #K;
    DKV_KIND(ParamDecl)
    DKV_KIND(ConstDecl)
    DKV_KIND(AxisDecl)
    DKV_KIND(BufferDecl)
    DKV_KIND(SemDecl)
    DKV_KIND(LetDecl)
    DKV_KIND(VarDecl)
    DKV_KIND(LoopVarDecl)
    DKV_KIND(ScratchStmt)
    DKV_KIND(RunScopedStmt)
    DKV_KIND(LetStmt)
    DKV_KIND(VarStmt)
    DKV_KIND(IfStmt)
    DKV_KIND(ForStmt)
    DKV_KIND(StoreStmt)
    DKV_KIND(DmaStmt)
    DKV_KIND(SignalStmt)
    DKV_KIND(WaitStmt)
    DKV_KIND(EmitPipelineStmt)
    DKV_KIND(ErrorExpr)
    DKV_KIND(IntLiteral)
    DKV_KIND(FloatLiteral)
    DKV_KIND(BoolLiteral)
    DKV_KIND(NameExpr)
    DKV_KIND(UnaryExpr)
    DKV_KIND(BinaryExpr)
    DKV_KIND(CallExpr)
    DKV_KIND(IndexExpr)
    DKV_KIND(TupleExpr)
    DKV_KIND(MappingExpr)
    DKV_KIND(CopyExpr)
    DKV_KIND(RemoteCopyExpr)
    DKV_KIND(ComputeExpr)
    DKV_KIND(SelectExpr)
    DKV_KIND(SelectRefExpr)
    DKV_KIND(Block)
    DKV_KIND(MeshDecl)
    DKV_KIND(KernelDecl)
    DKV_KIND(SequenceDecl)
    DKV_KIND(Module)
#undef DKV_KIND
  }
  return "?";
}

const NameExpr &DmaStmt::descriptorName() const {
  if (const auto *ix = dynCast<IndexExpr>(descriptor_.get()))
    return ix->base();
  return cast<NameExpr>(*descriptor_);
}

const MeshDecl *Module::mesh() const {
  for (const auto &item : items_)
    if (auto *m = dynCast<MeshDecl>(item.get()); m && !m->isTensorCore())
      return m;
  return nullptr;
}

const MeshDecl *Module::tensorCoreMesh() const {
  for (const auto &item : items_)
    if (auto *m = dynCast<MeshDecl>(item.get()); m && m->isTensorCore())
      return m;
  return nullptr;
}

const AxisDecl *Module::coreAxis() const {
  const MeshDecl *m = tensorCoreMesh();
  return m && !m->axes().empty() ? m->axes().front().get() : nullptr;
}

const KernelDecl *Module::kernel() const {
  for (const auto &item : items_)
    if (auto *k = dynCast<KernelDecl>(item.get()))
      return k;
  return nullptr;
}

MeshDecl *Module::mesh() { return const_cast<MeshDecl *>(std::as_const(*this).mesh()); }
KernelDecl *Module::kernel() { return const_cast<KernelDecl *>(std::as_const(*this).kernel()); }

std::vector<const KernelDecl *> Module::kernels() const {
  std::vector<const KernelDecl *> out;
  for (const auto &item : items_)
    if (auto *k = dynCast<KernelDecl>(item.get()))
      out.push_back(k);
  return out;
}

const SequenceDecl *Module::sequence() const {
  for (const auto &item : items_)
    if (auto *s = dynCast<SequenceDecl>(item.get()))
      return s;
  return nullptr;
}

std::vector<const ParamDecl *> Module::params() const {
  std::vector<const ParamDecl *> out;
  for (const auto &item : items_)
    if (auto *p = dynCast<ParamDecl>(item.get()))
      out.push_back(p);
  return out;
}

std::vector<const ConstDecl *> Module::consts() const {
  std::vector<const ConstDecl *> out;
  for (const auto &item : items_)
    if (auto *c = dynCast<ConstDecl>(item.get()))
      out.push_back(c);
  return out;
}

} // namespace dkv::ast
