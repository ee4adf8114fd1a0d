// The dkv parser: input checks, ANTLR lexing and parsing, and the parse-tree -> AST transformer.
#include "frontend/Parser.h"
#include "frontend/Sema.h"
#include "prim/Bind.h"
#include "support/Invariant.h"
#include "support/Suggest.h"

#include "DkvLexer.h"
#include "DkvParser.h"
#include "antlr4-runtime.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <exception>
#include <fmt/format.h>
#include <optional>
#include <set>
#include <span>
#include <string_view>

namespace dkv::frontend {

namespace {

using grammar::DkvLexer;
using grammar::DkvParser;
using support::DiagnosticEngine;
using support::SourceFile;
using support::SourceLoc;
using support::SourceRange;

//===----------------------------------------------------------------------===//
// Token positions and descriptions
//===----------------------------------------------------------------------===//

// The parser reads a sanitised copy of the file in which every byte is one
// character, so ANTLR's character indices are byte offsets of the original file.
SourceRange tokenRange(const SourceFile &file, const antlr4::Token *token) {
  if (!token)
    return {};
  size_t start = token->getStartIndex();
  size_t stop = token->getStopIndex();
  if (token->getType() == antlr4::Token::EOF || stop + 1 < start + 1 ||
      start > file.text().size()) {
    // EOF (start > stop): an empty range at the end of the file.
    SourceLoc end = file.locForOffset(std::min(start, file.text().size()));
    return {end, end};
  }
  return {file.locForOffset(start), file.locForOffset(std::min(stop + 1, file.text().size()))};
}

SourceRange ctxRange(const SourceFile &file, antlr4::ParserRuleContext *ctx) {
  SourceRange begin = tokenRange(file, ctx->getStart());
  const antlr4::Token *stopToken = ctx->getStop();
  // An empty rule match has stop before start.
  if (!stopToken || stopToken->getTokenIndex() < ctx->getStart()->getTokenIndex())
    return {begin.begin, begin.begin};
  return {begin.begin, tokenRange(file, stopToken).end};
}

SourceRange join(SourceRange a, SourceRange b) { return {a.begin, b.end}; }

std::string describeTokenType(const antlr4::dfa::Vocabulary &vocabulary, size_t type) {
  switch (type) {
  case antlr4::Token::EOF:
    return "end of file";
  case DkvLexer::ID:
    return "identifier";
  case DkvLexer::INT:
    return "integer";
  case DkvLexer::FLOAT:
    return "number";
  default:
    break;
  }
  std::string literal = vocabulary.getLiteralName(type);
  return literal.empty() ? vocabulary.getDisplayName(type) : literal;
}

std::string describeToken(const antlr4::Token *token) {
  if (!token || token->getType() == antlr4::Token::EOF)
    return "end of file";
  std::string text = token->getText();
  if (text.size() > 40)
    text = text.substr(0, 40) + "...";
  return "'" + text + "'";
}

//===----------------------------------------------------------------------===//
// Syntax error reporting
//===----------------------------------------------------------------------===//

// Turns ANTLR's recognition errors into short messages. The default messages list
// every expected token ("expecting {'param', 'const', ...}"); we list at most a few.
class ErrorStrategy final : public antlr4::DefaultErrorStrategy {
protected:
  void reportNoViableAlternative(antlr4::Parser *parser,
                                 const antlr4::NoViableAltException &e) override {
    report(parser, e.getOffendingToken(), "unexpected " + describeToken(e.getOffendingToken()),
           parser->getExpectedTokens());
  }
  void reportInputMismatch(antlr4::Parser *parser,
                           const antlr4::InputMismatchException &e) override {
    report(parser, e.getOffendingToken(), "unexpected " + describeToken(e.getOffendingToken()),
           e.getExpectedTokens());
  }
  void reportFailedPredicate(antlr4::Parser *parser,
                             const antlr4::FailedPredicateException &e) override {
    report(parser, e.getOffendingToken(), "unexpected " + describeToken(e.getOffendingToken()), {});
  }
  void reportUnwantedToken(antlr4::Parser *parser) override {
    if (inErrorRecoveryMode(parser))
      return;
    beginErrorCondition(parser);
    antlr4::Token *t = parser->getCurrentToken();
    report(parser, t, "unexpected " + describeToken(t), getExpectedTokens(parser));
  }
  void reportMissingToken(antlr4::Parser *parser) override {
    if (inErrorRecoveryMode(parser))
      return;
    beginErrorCondition(parser);
    antlr4::Token *t = parser->getCurrentToken();
    antlr4::misc::IntervalSet expected = getExpectedTokens(parser);
    parser->notifyErrorListeners(
        t, "expected " + describeSet(parser, expected, 4) + " before " + describeToken(t), nullptr);
  }

private:
  static std::string describeSet(antlr4::Parser *parser, const antlr4::misc::IntervalSet &set,
                                 size_t max) {
    std::vector<std::string> names;
    // Every expression can start with these: name the category, not the tokens.
    if (set.contains(static_cast<size_t>(DkvLexer::INT)) &&
        set.contains(static_cast<size_t>(DkvLexer::LPAREN)) &&
        set.contains(static_cast<size_t>(DkvLexer::MINUS)))
      return "an expression";
    for (ssize_t type : set.toList()) {
      if (type == -1)
        names.push_back("end of file");
      else if (type > 0)
        names.push_back(describeTokenType(parser->getVocabulary(), static_cast<size_t>(type)));
    }
    if (names.empty() || names.size() > max)
      return {};
    std::string out;
    for (size_t i = 0; i < names.size(); ++i) {
      if (i > 0)
        out += i + 1 == names.size() ? " or " : ", ";
      out += names[i];
    }
    return out;
  }

  void report(antlr4::Parser *parser, antlr4::Token *token, std::string message,
              const antlr4::misc::IntervalSet &expected) {
    std::string list = describeSet(parser, expected, 5);
    if (!list.empty())
      message += "; expected " + list;
    parser->notifyErrorListeners(token, message, nullptr);
  }
};

class ErrorListener final : public antlr4::BaseErrorListener {
public:
  ErrorListener(const SourceFile &file, DiagnosticEngine &diags) : file_(file), diags_(diags) {}

  void syntaxError(antlr4::Recognizer *, antlr4::Token *offending, size_t line,
                   size_t charPositionInLine, const std::string &msg, std::exception_ptr) override {
    SourceRange range = offending
                            ? tokenRange(file_, offending)
                            : SourceRange{file_.loc(static_cast<uint32_t>(line),
                                                    static_cast<uint32_t>(charPositionInLine + 1)),
                                          {}};
    diags_.error(range, "syntax", msg);
    ++count_;
  }
  size_t count() const { return count_; }

private:
  const SourceFile &file_;
  DiagnosticEngine &diags_;
  size_t count_ = 0;
};

//===----------------------------------------------------------------------===//
// The transformer: parse tree -> AST
//===----------------------------------------------------------------------===//

// Builds the AST from a parse tree without syntax errors (so every mandatory child
// context exists). Reports what the grammar leaves open: unknown functions, types,
// attributes and methods, argument lists, literal ranges and expression depth.
// Recursion follows the parse tree, whose depth the nesting pre-scan bounds;
// operator chains are folded in loops, and the resulting AST depth is bounded by
// ParseLimits::maxExprDepth.
class Transformer {
public:
  Transformer(const SourceFile &file, DiagnosticEngine &diags, const ParseLimits &limits)
      : file_(file), diags_(diags), limits_(limits) {}

  std::vector<std::unique_ptr<ast::Node>> module(DkvParser::ModuleContext *ctx) {
    std::vector<std::unique_ptr<ast::Node>> items;
    for (auto *item : ctx->topItem())
      if (auto node = topItem(item))
        items.push_back(std::move(node));
    return items;
  }

private:
  const SourceFile &file_;
  DiagnosticEngine &diags_;
  const ParseLimits &limits_;
  bool depthReported_ = false;

  SourceRange range(antlr4::ParserRuleContext *ctx) const { return ctxRange(file_, ctx); }
  SourceRange range(antlr4::tree::TerminalNode *node) const {
    return tokenRange(file_, node->getSymbol());
  }
  SourceRange range(const antlr4::Token *token) const { return tokenRange(file_, token); }

  // --- Top level -----------------------------------------------------------

  std::unique_ptr<ast::Node> topItem(DkvParser::TopItemContext *ctx) {
    if (auto *p = dynamic_cast<DkvParser::ParamDeclContext *>(ctx))
      return std::make_unique<ast::ParamDecl>(range(p), p->ID()->getText(), range(p->ID()),
                                              p->expr() ? expr(p->expr()) : nullptr);
    if (auto *c = dynamic_cast<DkvParser::ConstDeclContext *>(ctx))
      return std::make_unique<ast::ConstDecl>(range(c), c->ID()->getText(), range(c->ID()),
                                              expr(c->expr()));
    if (auto *m = dynamic_cast<DkvParser::MeshDeclContext *>(ctx)) {
      std::vector<std::unique_ptr<ast::AxisDecl>> axes;
      for (auto *axis : m->meshAxis())
        axes.push_back(std::make_unique<ast::AxisDecl>(range(axis), axis->ID()->getText(),
                                                       range(axis->ID()), expr(axis->expr()),
                                                       axes.size()));
      return std::make_unique<ast::MeshDecl>(range(m), std::move(axes));
    }
    if (auto *m = dynamic_cast<DkvParser::TensorcoreMeshDeclContext *>(ctx)) {
      std::vector<std::unique_ptr<ast::AxisDecl>> axes;
      DkvParser::MeshAxisContext *axis = m->meshAxis();
      axes.push_back(std::make_unique<ast::AxisDecl>(range(axis), axis->ID()->getText(),
                                                     range(axis->ID()), expr(axis->expr()), 0));
      return std::make_unique<ast::MeshDecl>(range(m), std::move(axes), /*tensorCore=*/true);
    }
    if (auto *k = dynamic_cast<DkvParser::KernelDeclContext *>(ctx))
      return kernel(k);
    if (auto *q = dynamic_cast<DkvParser::SequenceDeclContext *>(ctx))
      return sequence(q);
    return nullptr; // ';'
  }

  std::optional<ast::MemSpace> memSpace(antlr4::Token *token) {
    std::string s = token->getText();
    if (auto space = prim::memSpaceFromDk(s))
      return space;
    diags_.error(range(token), "unknown-type",
                 fmt::format("unknown memory space '{}'; expected hbm, vmem, smem or any", s));
    return std::nullopt;
  }

  std::optional<ast::DType> dtype(antlr4::Token *token) {
    return dtypeNamed(token->getText(), range(token));
  }

  std::optional<ast::DType> dtypeNamed(const std::string &s, SourceRange r) {
    if (auto type = prim::dtypeFromDk(s))
      return type;
    diags_.error(r, "unknown-type",
                 fmt::format("unknown element type '{}'; expected f32, bf16, f16, i32, i16, i8, "
                             "u8 or u32",
                             s));
    return std::nullopt;
  }

  // An element type given as an argument (`astype(x, bf16)`), or nullopt after a
  // diagnostic.
  std::optional<ast::DType> dtypeArg(const ast::Expr &e) {
    if (const auto *n = ast::dynCast<ast::NameExpr>(&e))
      return dtypeNamed(n->name(), n->range());
    diags_.error(e.range(), "unknown-type", "expected an element type (f32, bf16, i32, ...)");
    return std::nullopt;
  }

  std::vector<ast::ExprPtr> shape(DkvParser::ShapeContext *ctx) {
    std::vector<ast::ExprPtr> dims;
    if (ctx)
      for (auto *e : ctx->expr())
        dims.push_back(expr(e));
    return dims;
  }

  // `[[0, 8], [8, 0]]`: elements row-major and the nesting; a list whose entries
  // differ in shape is a `table-shape` error (the literal is then dropped).
  std::unique_ptr<ast::TableLiteral> tableLiteral(DkvParser::TableLitContext *ctx) {
    auto lit = std::make_unique<ast::TableLiteral>();
    lit->range = range(ctx);
    if (!tableLevel(ctx, *lit, lit->shape))
      return nullptr;
    return lit;
  }

  bool tableLevel(DkvParser::TableLitContext *ctx, ast::TableLiteral &lit,
                  std::vector<int64_t> &shape) {
    auto elems = ctx->tableElem();
    shape.assign(1, static_cast<int64_t>(elems.size()));
    std::optional<std::vector<int64_t>> inner;
    for (auto *e : elems) {
      std::vector<int64_t> sub;
      if (e->tableLit()) {
        if (!tableLevel(e->tableLit(), lit, sub))
          return false;
      } else {
        lit.elements.push_back(expr(e->expr()));
      }
      if (inner && *inner != sub) {
        diags_.error(range(e), "table-shape",
                     "the entries of a table literal must all have the same shape");
        return false;
      }
      inner = sub;
    }
    if (inner)
      shape.insert(shape.end(), inner->begin(), inner->end());
    return true;
  }

  /// Kernel or sequence parameters: buffers (tables included) and semaphores, and
  /// all of them in source order.
  struct Params {
    std::vector<std::unique_ptr<ast::BufferDecl>> buffers;
    std::vector<std::unique_ptr<ast::SemDecl>> sems;
    std::vector<ast::Decl *> order;
  };

  Params params(DkvParser::KernelParamsContext *ctx) {
    Params out;
    if (!ctx)
      return out;
    for (auto *p : ctx->kernelParam()) {
      if (auto *sp = dynamic_cast<DkvParser::SemParamContext *>(p)) {
        auto decl = std::make_unique<ast::SemDecl>(
            range(sp), sp->name->getText(), range(sp->name), ast::Storage::KernelParam,
            sp->semKind->getType() == DkvLexer::SEM ? ast::SemKind::Regular : ast::SemKind::Dma,
            sp->shape() ? shape(sp->shape()) : std::vector<ast::ExprPtr>{});
        out.order.push_back(decl.get());
        out.sems.push_back(std::move(decl));
        continue;
      }
      auto *bp = dynamic_cast<DkvParser::BufferParamContext *>(p);
      if (!bp)
        continue;
      ast::Direction dir = bp->dir->getType() == DkvLexer::IN    ? ast::Direction::In
                           : bp->dir->getType() == DkvLexer::OUT ? ast::Direction::Out
                                                                 : ast::Direction::InOut;
      auto space = memSpace(bp->space);
      auto type = dtype(bp->dtype);
      auto decl = std::make_unique<ast::BufferDecl>(
          range(bp), bp->name->getText(), range(bp->name), ast::Storage::KernelParam, dir,
          space.value_or(ast::MemSpace::Any), type.value_or(ast::DType::F32), shape(bp->shape()));
      if (bp->tableLit())
        decl->setTableInit(tableLiteral(bp->tableLit()));
      out.order.push_back(decl.get());
      out.buffers.push_back(std::move(decl));
    }
    return out;
  }

  std::unique_ptr<ast::SequenceDecl> sequence(DkvParser::SequenceDeclContext *ctx) {
    Params p = params(ctx->kernelParams());
    std::vector<ast::SequenceCall> calls;
    for (auto *c : ctx->seqCall()) {
      auto *call = dynamic_cast<DkvParser::CallKernelContext *>(c);
      if (!call)
        continue; // ';'
      ast::SequenceCall out;
      out.range = range(call);
      out.kernel = call->kernel->getText();
      out.kernelRange = range(call->kernel);
      std::vector<antlr4::tree::TerminalNode *> ids = call->ID();
      for (size_t i = 1; i < ids.size(); ++i) // ID(0) is the kernel
        out.args.push_back({ids[i]->getText(), range(ids[i])});
      calls.push_back(std::move(out));
    }
    return std::make_unique<ast::SequenceDecl>(range(ctx), std::move(p.buffers), std::move(p.sems),
                                               std::move(p.order), std::move(calls));
  }

  std::unique_ptr<ast::KernelDecl> kernel(DkvParser::KernelDeclContext *ctx) {
    Params p = params(ctx->kernelParams());
    std::vector<std::unique_ptr<ast::BufferDecl>> params = std::move(p.buffers);
    std::vector<ast::ExprPtr> grid;
    ast::ExprPtr collectiveId;
    std::unique_ptr<ast::SemDecl> barrier;
    bool sawGrid = false;
    ast::ExprPtr skipDeviceBarrier;
    for (auto *attr : ctx->kernelAttr()) {
      std::string name = attr->ID()->getText();
      auto exprs = attr->expr();
      if (name == "grid") {
        if (sawGrid) {
          diags_.error(range(attr), "bad-attribute", "duplicate grid attribute");
          continue;
        }
        sawGrid = true;
        if (exprs.empty())
          diags_.error(range(attr), "arg-count", "grid needs at least one dimension");
        for (auto *e : exprs)
          grid.push_back(expr(e));
      } else if (name == "collective_id") {
        if (collectiveId) {
          diags_.error(range(attr), "bad-attribute", "duplicate collective_id attribute");
          continue;
        }
        if (exprs.size() != 1) {
          diags_.error(range(attr), "arg-count",
                       fmt::format("collective_id takes 1 argument, got {}", exprs.size()));
          continue;
        }
        collectiveId = expr(exprs[0]);
        barrier = std::make_unique<ast::SemDecl>(range(attr), "barrier", range(attr->ID()),
                                                 ast::Storage::Barrier, ast::SemKind::Barrier,
                                                 std::vector<ast::ExprPtr>{});
      } else if (name == "skip_device_barrier") {
        if (skipDeviceBarrier) {
          diags_.error(range(attr), "bad-attribute", "duplicate skip_device_barrier attribute");
          continue;
        }
        if (exprs.size() != 1) {
          diags_.error(range(attr), "arg-count",
                       fmt::format("skip_device_barrier takes 1 argument, got {}", exprs.size()));
          continue;
        }
        skipDeviceBarrier = expr(exprs[0]);
      } else {
        diags_.error(range(attr->ID()), "bad-attribute",
                     fmt::format("unknown kernel attribute '{}'; expected grid, collective_id or "
                                 "skip_device_barrier",
                                 name));
      }
    }
    auto kernel = std::make_unique<ast::KernelDecl>(
        range(ctx), ctx->ID()->getText(), std::move(params), std::move(grid),
        std::move(collectiveId), std::move(barrier), block(ctx->block()));
    kernel->setSkipDeviceBarrier(std::move(skipDeviceBarrier));
    kernel->setSemParams(std::move(p.sems));
    kernel->setParamOrder(std::move(p.order));
    return kernel;
  }

  // --- Statements ----------------------------------------------------------

  std::unique_ptr<ast::Block> block(DkvParser::BlockContext *ctx) {
    std::vector<ast::StmtPtr> stmts;
    for (auto *s : ctx->stmt()) {
      if (auto *let = dynamic_cast<DkvParser::LetStmtContext *>(s); let && let->ID().size() > 1) {
        tupleLet(let, stmts);
        continue;
      }
      if (auto node = stmt(s))
        stmts.push_back(std::move(node));
    }
    return std::make_unique<ast::Block>(range(ctx), std::move(stmts));
  }

  std::vector<std::unique_ptr<ast::Decl>>
  scratchItems(const std::vector<DkvParser::ScratchItemContext *> &items, ast::Storage storage) {
    std::vector<std::unique_ptr<ast::Decl>> decls;
    for (auto *item : items) {
      if (auto *s = dynamic_cast<DkvParser::SemItemContext *>(item)) {
        ast::SemKind kind =
            s->semKind->getType() == DkvLexer::SEM ? ast::SemKind::Regular : ast::SemKind::Dma;
        decls.push_back(std::make_unique<ast::SemDecl>(range(s), s->ID()->getText(), range(s->ID()),
                                                       storage, kind, shape(s->shape())));
      } else if (auto *b = dynamic_cast<DkvParser::BufferItemContext *>(item)) {
        auto space = memSpace(b->space);
        auto type = dtype(b->dtype);
        decls.push_back(std::make_unique<ast::BufferDecl>(
            range(b), b->name->getText(), range(b->name), storage, ast::Direction::None,
            space.value_or(ast::MemSpace::Any), type.value_or(ast::DType::F32), shape(b->shape())));
      }
    }
    return decls;
  }

  /// `let a, b = split(x, 2, axis = k)`: one LetStmt per name, each binding its part of
  /// the split (the operand is built once per part from the same source).
  void tupleLet(DkvParser::LetStmtContext *s, std::vector<ast::StmtPtr> &out) {
    std::vector<antlr4::tree::TerminalNode *> names = s->ID();
    for (size_t i = 0; i < names.size(); ++i) {
      ast::ExprPtr init = expr(s->expr());
      auto *split = ast::dynCast<ast::ComputeExpr>(init.get());
      if (!split || split->op() != ast::ComputeOp::Split) {
        if (!ast::isa<ast::ErrorExpr>(init.get()))
          diags_.error(range(s->expr()), "bad-let",
                       fmt::format("a let binds {} names only to the parts of split(x, {}, axis "
                                   "= k) (jnp.split); bind one name otherwise",
                                   names.size(), names.size()));
        return;
      }
      split->setPart(static_cast<int64_t>(i));
      auto decl = std::make_unique<ast::LetDecl>(range(s), names[i]->getText(), range(names[i]),
                                                 std::move(init));
      auto let = std::make_unique<ast::LetStmt>(range(s), std::move(decl), i, names.size());
      std::vector<std::string> all;
      for (auto *n : names)
        all.push_back(n->getText());
      let->setTupleNames(std::move(all));
      out.push_back(std::move(let));
    }
  }

  ast::StmtPtr stmt(DkvParser::StmtContext *ctx) {
    if (auto *s = dynamic_cast<DkvParser::ScratchStmtContext *>(ctx))
      return std::make_unique<ast::ScratchStmt>(
          range(s), scratchItems(s->scratchItem(), ast::Storage::Scratch));
    if (auto *s = dynamic_cast<DkvParser::RunScopedStmtContext *>(ctx))
      return std::make_unique<ast::RunScopedStmt>(
          range(s), scratchItems(s->scratchItem(), ast::Storage::Scoped), block(s->block()));
    if (auto *s = dynamic_cast<DkvParser::LetStmtContext *>(ctx)) {
      ast::ExprPtr init = expr(s->expr());
      if (auto *split = ast::dynCast<ast::ComputeExpr>(init.get());
          split && split->op() == ast::ComputeOp::Split) {
        diags_.error(range(s->expr()), "bad-let",
                     "split(x, n, axis = k) makes n parts: bind them with one name each, "
                     "'let a, b = split(x, 2, axis = k)' (Python's tuple unpacking)");
        return nullptr;
      }
      auto decl = std::make_unique<ast::LetDecl>(range(s), s->ID(0)->getText(), range(s->ID(0)),
                                                 std::move(init));
      return std::make_unique<ast::LetStmt>(range(s), std::move(decl));
    }
    if (auto *s = dynamic_cast<DkvParser::VarStmtContext *>(ctx)) {
      std::vector<std::unique_ptr<ast::VarDecl>> decls;
      for (auto *item : s->varItem()) {
        if (item->expr() && item->shape()) {
          diags_.error(range(item), "bad-var",
                       "an integer variable ('var n = 0') is one integer; an array of integers "
                       "the kernel writes and reads is SMEM scratch ('scratch t: smem i32[4]')");
          continue;
        }
        decls.push_back(std::make_unique<ast::VarDecl>(
            range(item), item->ID()->getText(), range(item->ID()), shape(item->shape()),
            item->expr() ? expr(item->expr()) : nullptr));
      }
      return std::make_unique<ast::VarStmt>(range(s), std::move(decls));
    }
    if (auto *s = dynamic_cast<DkvParser::IfStmtContext *>(ctx)) {
      auto conds = s->expr();
      auto blocks = s->block();
      std::vector<ast::IfStmt::Branch> branches;
      for (size_t i = 0; i < conds.size(); ++i)
        branches.push_back({expr(conds[i]), block(blocks[i])});
      std::unique_ptr<ast::Block> elseBody;
      if (blocks.size() > conds.size())
        elseBody = block(blocks.back());
      return std::make_unique<ast::IfStmt>(range(s), std::move(branches), std::move(elseBody));
    }
    if (auto *s = dynamic_cast<DkvParser::ForStmtContext *>(ctx)) {
      auto bounds = s->expr();
      auto var = std::make_unique<ast::LoopVarDecl>(range(s->ID()), s->ID()->getText());
      return std::make_unique<ast::ForStmt>(range(s), std::move(var), expr(bounds[0]),
                                            expr(bounds[1]), block(s->block()));
    }
    if (auto *s = dynamic_cast<DkvParser::StoreStmtContext *>(ctx))
      return std::make_unique<ast::StoreStmt>(range(s), refTarget(s->refTarget()),
                                              s->op->getType() == DkvLexer::PLUS_ASSIGN,
                                              expr(s->expr()));
    if (auto *s = dynamic_cast<DkvParser::MethodStmtContext *>(ctx))
      return methodStmt(s);
    if (auto *s = dynamic_cast<DkvParser::CallStmtContext *>(ctx))
      return callStmt(s);
    if (auto *s = dynamic_cast<DkvParser::PipelineStmtContext *>(ctx))
      return pipelineStmt(s);
    return nullptr; // ';'
  }

  std::vector<ast::ExprPtr> exprs(const std::vector<DkvParser::ExprContext *> &list) {
    std::vector<ast::ExprPtr> out;
    for (auto *e : list)
      out.push_back(expr(e));
    return out;
  }

  /// `emit_pipeline(grid = (...), in_specs = [...], out_specs = [...])(refs...) lambda
  /// blocks... { body }` (docs/language.md "Pipelines").
  ast::StmtPtr pipelineStmt(DkvParser::PipelineStmtContext *ctx) {
    SourceRange r = range(ctx);
    std::vector<ast::ExprPtr> grid;
    bool haveGrid = false;
    std::vector<ast::PipelineOperand> ins, outs;
    std::set<std::string> seen;
    bool ok = true;
    for (auto *opt : ctx->pipelineOption()) {
      std::string name;
      antlr4::tree::TerminalNode *id = nullptr;
      if (auto *t = dynamic_cast<DkvParser::TupleOptionContext *>(opt))
        id = t->ID();
      else
        id = dynamic_cast<DkvParser::SpecsOptionContext *>(opt)->ID();
      name = id->getText();
      if (!seen.insert(name).second) {
        diags_.error(range(id), "bad-argument",
                     fmt::format("emit_pipeline argument '{}' is given twice", name));
        ok = false;
        continue;
      }
      if (auto *t = dynamic_cast<DkvParser::TupleOptionContext *>(opt)) {
        if (name != "grid") {
          diags_.error(
              range(id), "bad-argument",
              name == "in_specs" || name == "out_specs"
                  ? fmt::format("emit_pipeline argument '{}' is a list of BlockSpec(...)", name)
                  : fmt::format("unknown emit_pipeline argument '{}' (known: grid, "
                                "in_specs, out_specs)",
                                name));
          ok = false;
          continue;
        }
        grid = exprs(t->expr());
        haveGrid = true;
        continue;
      }
      auto *specs = dynamic_cast<DkvParser::SpecsOptionContext *>(opt);
      if (name != "in_specs" && name != "out_specs") {
        diags_.error(range(id), "bad-argument",
                     name == "grid"
                         ? std::string("emit_pipeline's grid is a tuple, e.g. 'grid = (4,)'")
                         : fmt::format("unknown emit_pipeline argument '{}' (known: grid, "
                                       "in_specs, out_specs)",
                                       name));
        ok = false;
        continue;
      }
      for (auto *spec : specs->blockSpec()) {
        if (spec->ID(0)->getText() != "BlockSpec") {
          diags_.error(range(spec->ID(0)), "unsupported",
                       fmt::format("'{}' in {}: an emit_pipeline operand is a "
                                   "BlockSpec(block_shape, index_map)",
                                   spec->ID(0)->getText(), name));
          ok = false;
          continue;
        }
        // `memory_space = vmem` is the space Pallas gives the block buffers by default
        // (pipeline.py, BufferedRef.create: `VMEM if spec.memory_space is None`):
        // accepted as written. Any other keyword or space is not modelled.
        bool specOk = true;
        for (auto *kw : spec->specKeyword()) {
          std::string key = kw->key->getText(), value = kw->value->getText();
          if (key == "memory_space" && value == "vmem")
            continue;
          diags_.error(range(kw), "unsupported",
                       key == "memory_space"
                           ? fmt::format("BlockSpec memory_space = {}: only vmem, the "
                                         "default space of the block buffers, is modelled "
                                         "(docs/language.md \"Pipelines\")",
                                         value)
                           : fmt::format("BlockSpec argument '{}' is not modelled (known: "
                                         "memory_space = vmem)",
                                         key));
          specOk = false;
        }
        if (!specOk) {
          ok = false;
          continue;
        }
        ast::PipelineOperand op;
        op.output = name == "out_specs";
        op.specRange = range(spec);
        auto allExprs = spec->expr();
        // The block shape's expressions come before the lambda's ':' token.
        size_t colon = spec->COLON()->getSymbol()->getTokenIndex();
        std::vector<ast::ExprPtr> shape;
        for (auto *e : allExprs) {
          if (e->getStart()->getTokenIndex() < colon)
            shape.push_back(expr(e));
          else
            op.mapResult.push_back(expr(e));
        }
        auto ids = spec->ID();
        for (size_t i = 1; i < ids.size(); ++i)
          op.mapParams.push_back(
              std::make_unique<ast::LoopVarDecl>(range(ids[i]), ids[i]->getText()));
        op.mapRange = SourceRange{range(spec->LAMBDA()).begin, range(spec).end};
        op.block = std::make_unique<ast::BufferDecl>(
            op.specRange, std::string(), op.specRange, ast::Storage::PipelineBlock,
            ast::Direction::None, ast::MemSpace::Vmem, ast::DType::F32, std::move(shape));
        (op.output ? outs : ins).push_back(std::move(op));
      }
    }
    if (!haveGrid && ok) {
      diags_.error(r, "arg-count", "emit_pipeline needs a grid, e.g. 'grid = (4,)'");
      ok = false;
    }
    std::vector<ast::PipelineOperand> operands;
    for (auto &op : ins)
      operands.push_back(std::move(op));
    for (auto &op : outs)
      operands.push_back(std::move(op));
    auto refs = ctx->refTarget();
    auto names = ctx->ID();
    if (ok && refs.size() != operands.size()) {
      diags_.error(r, "arg-count",
                   fmt::format("emit_pipeline has {} block spec{} ({} in, {} out) but is applied "
                               "to {} ref{}",
                               operands.size(), operands.size() == 1 ? "" : "s",
                               operands.size() - outs.size(), outs.size(), refs.size(),
                               refs.size() == 1 ? "" : "s"));
      ok = false;
    }
    if (ok && names.size() != operands.size()) {
      diags_.error(range(ctx->LAMBDA()), "arg-count",
                   fmt::format("the emit_pipeline body takes one block ref per block spec ({}) "
                               "but names {}",
                               operands.size(), names.size()));
      ok = false;
    }
    auto body = block(ctx->block());
    if (!ok)
      return nullptr;
    for (size_t i = 0; i < operands.size(); ++i) {
      operands[i].ref = refTarget(refs[i]);
      auto &old = *operands[i].block;
      operands[i].block = std::make_unique<ast::BufferDecl>(
          range(names[i]), names[i]->getText(), range(names[i]), ast::Storage::PipelineBlock,
          ast::Direction::None, ast::MemSpace::Vmem, ast::DType::F32, std::move(old.shape()));
    }
    return std::make_unique<ast::EmitPipelineStmt>(r, std::move(grid), std::move(operands),
                                                   std::move(body));
  }

  ast::ExprPtr refTarget(DkvParser::RefTargetContext *target) {
    auto name = std::make_unique<ast::NameExpr>(range(target->ID()), target->ID()->getText());
    if (target->subscripts())
      return indexExpr(range(target), std::move(name), target->subscripts());
    return name;
  }

  ast::StmtPtr methodStmt(DkvParser::MethodStmtContext *ctx) {
    antlr4::tree::TerminalNode *methodId = ctx->ID();
    std::string method = methodId->getText();
    static const std::pair<std::string_view, ast::DmaMethod> methods[] = {
        {"start", ast::DmaMethod::Start},
        {"wait", ast::DmaMethod::Wait},
        {"wait_send", ast::DmaMethod::WaitSend},
        {"wait_recv", ast::DmaMethod::WaitRecv}};
    std::optional<ast::DmaMethod> found;
    for (const auto &[name, m] : methods)
      if (method == name)
        found = m;
    if (!found) {
      const std::string suggestion =
          support::didYouMean(method, {"start", "wait", "wait_send", "wait_recv"});
      diags_.error(range(methodId), "unknown-method",
                   suggestion.empty()
                       ? fmt::format("unknown descriptor method '{}'; expected start, wait, "
                                     "wait_send or wait_recv",
                                     method)
                       : fmt::format("unknown descriptor method '{}'{}", method, suggestion));
      return nullptr;
    }
    ast::ExprPtr priority;
    if (ctx->args() && *found == ast::DmaMethod::Start) {
      // Pallas' AsyncCopyDescriptor.start(priority=0, *, add=False): dkv takes the
      // priority (docs/language.md); `add` is not supported.
      static const ArgSpec spec[] = {{"priority", false}};
      std::vector<ast::ExprPtr> args;
      if (!bindArgs("start", range(ctx), ctx->args(), spec, args))
        return nullptr;
      priority = std::move(args[0]);
    } else if (ctx->args()) {
      diags_.error(range(ctx->args()), "arg-count", fmt::format("{}() takes no arguments", method));
      return nullptr;
    }
    return std::make_unique<ast::DmaStmt>(range(ctx), refTarget(ctx->refTarget()), *found,
                                          std::move(priority));
  }

  ast::StmtPtr callStmt(DkvParser::CallStmtContext *ctx) {
    std::string name = ctx->ID()->getText();
    SourceRange r = range(ctx);
    if (name == "signal") {
      static const ArgSpec spec[] = {
          {"sem", true}, {"inc", false}, {"device", false}, {"core_index", false}};
      std::vector<ast::ExprPtr> args;
      if (!bindArgs(name, r, ctx->args(), spec, args))
        return nullptr;
      return std::make_unique<ast::SignalStmt>(r, std::move(args[0]), std::move(args[1]),
                                               std::move(args[2]), std::move(args[3]));
    }
    if (name == "wait") {
      static const ArgSpec spec[] = {{"sem", true}, {"value", false}};
      std::vector<ast::ExprPtr> args;
      if (!bindArgs(name, r, ctx->args(), spec, args))
        return nullptr;
      return std::make_unique<ast::WaitStmt>(r, std::move(args[0]), std::move(args[1]));
    }
    if (isExprFunction(name)) {
      diags_.error(range(ctx->ID()), "misplaced-expr",
                   name == "copy" || name == "remote_copy"
                       ? fmt::format("'{}(...)' builds a descriptor; bind it with "
                                     "'let c = {}(...)' and call c.start()",
                                     name, name)
                   : name == "async_copy" || name == "async_remote_copy"
                       ? fmt::format("'{}(...)' starts a DMA and returns its descriptor; bind it "
                                     "with 'let c = {}(...)' to wait on it",
                                     name, name)
                       : fmt::format("the result of '{}(...)' is unused", name));
      return nullptr;
    }
    std::vector<std::string_view> known = {"signal", "wait"};
    for (std::string_view f : exprFunctionNames())
      known.push_back(f);
    const std::string suggestion = support::didYouMean(name, known);
    diags_.error(range(ctx->ID()), "unknown-function",
                 suggestion.empty()
                     ? fmt::format("unknown statement '{}'; expected signal or wait", name)
                     : fmt::format("unknown statement '{}'{}", name, suggestion));
    return nullptr;
  }

  // --- Arguments -----------------------------------------------------------

  struct ArgSpec {
    std::string_view name;
    bool required;
  };

  static bool isExprFunction(std::string_view name) {
    for (std::string_view f : kExprFunctions)
      if (name == f)
        return true;
    return !prim::findOpsByDkName(name).empty(); // compute (prim/Ops.def)
  }

  /// The functions of expressions that are not compute ops (docs/language.md); the
  /// compute ops are the catalogue's (prim/Ops.def).
  static constexpr std::string_view kExprFunctions[] = {"axis_index",
                                                        "axis_size",
                                                        "program_id",
                                                        "num_programs",
                                                        "read",
                                                        "min",
                                                        "max",
                                                        "copy",
                                                        "remote_copy",
                                                        "async_copy",
                                                        "async_remote_copy",
                                                        "rem",
                                                        "select",
                                                        "select_ref"};

  /// Every function name of expressions, for "did you mean".
  static std::vector<std::string_view> exprFunctionNames() {
    std::vector<std::string_view> names(std::begin(kExprFunctions), std::end(kExprFunctions));
    for (const prim::OpRecord &r : prim::records())
      for (const prim::Signature &s : prim::dkSignatures(r.id))
        if (std::find(names.begin(), names.end(), s.name) == names.end())
          names.push_back(s.name);
    return names;
  }

  // Binds positional and named arguments to `spec` (prim::bindArguments, the binder
  // the Python tracer shares). On success `out` has one entry per spec entry (null for
  // an absent optional one).
  bool bindArgs(std::string_view callee, SourceRange callRange, DkvParser::ArgsContext *ctx,
                std::span<const ArgSpec> spec, std::vector<ast::ExprPtr> &out) {
    prim::Signature sig;
    sig.name = callee;
    for (const ArgSpec &a : spec)
      sig.params.push_back(
          {a.name, prim::ParamKind::Array, false, false, a.required ? "" : "None"});
    return bindArgs(sig, callRange, ctx, out);
  }

  bool bindArgs(const prim::Signature &sig, SourceRange callRange, DkvParser::ArgsContext *ctx,
                std::vector<ast::ExprPtr> &out) {
    std::vector<DkvParser::ArgContext *> given;
    if (ctx)
      given = ctx->arg();
    std::vector<std::string> keywords;
    for (auto *arg : given)
      keywords.push_back(arg->ID() ? arg->ID()->getText() : "");
    std::vector<prim::Arg> args;
    for (const std::string &k : keywords)
      args.push_back({k});
    prim::BindResult bound = prim::bindArguments(sig, args);
    for (const prim::BindError &e : bound.errors) {
      SourceRange at = e.kind == prim::BindError::Kind::Missing          ? callRange
                       : e.kind == prim::BindError::Kind::UnknownKeyword ? range(given[e.arg]->ID())
                                                                         : range(given[e.arg]);
      diags_.error(at, std::string(prim::dkErrorId(e)), prim::dkErrorMessage(e, sig, args));
    }
    if (!bound.ok())
      return false;
    out.clear();
    out.resize(sig.params.size());
    // In argument order, as written (their diagnostics come in that order).
    for (size_t a = 0; a < given.size(); ++a)
      for (size_t p = 0; p < sig.params.size(); ++p)
        if (bound.slot[p] == static_cast<int>(a))
          out[p] = argValue(given[a]->argValue());
    return true;
  }

  ast::ExprPtr argValue(DkvParser::ArgValueContext *ctx) {
    if (auto *e = dynamic_cast<DkvParser::ExprArgContext *>(ctx))
      return expr(e->expr());
    if (auto *t = dynamic_cast<DkvParser::TupleArgContext *>(ctx)) {
      std::vector<ast::ExprPtr> elements;
      for (auto *e : t->expr())
        elements.push_back(expr(e));
      return std::make_unique<ast::TupleExpr>(range(t), std::move(elements));
    }
    if (auto *l = dynamic_cast<DkvParser::ListArgContext *>(ctx)) {
      std::vector<ast::ExprPtr> elements;
      for (auto *e : l->expr())
        elements.push_back(expr(e));
      return std::make_unique<ast::TupleExpr>(range(l), std::move(elements), /*list=*/true);
    }
    auto *m = dynamic_cast<DkvParser::MappingArgContext *>(ctx);
    std::vector<ast::MappingExpr::Entry> entries;
    for (auto *entry : m->mapEntry())
      entries.push_back(
          {std::make_unique<ast::NameExpr>(range(entry->ID()), entry->ID()->getText()),
           expr(entry->expr())});
    return std::make_unique<ast::MappingExpr>(range(m), std::move(entries));
  }

  // --- Expressions ---------------------------------------------------------

  // A call whose operands nest `depth` levels deep: reported once (`too-deep`) past the
  // limit.
  bool tooDeep(unsigned depth, SourceRange r) {
    if (depth <= limits_.maxExprDepth)
      return false;
    if (!depthReported_)
      diags_.error(r, "too-deep", "expression too deep");
    depthReported_ = true;
    return true;
  }

  // Depth of the expression tree rooted at `e` (children were checked when built).
  static unsigned depthOf(const ast::Expr &e) {
    unsigned d = 1;
    if (auto *u = ast::dynCast<ast::UnaryExpr>(&e))
      d = 1 + depthOf(u->operand());
    else if (auto *b = ast::dynCast<ast::BinaryExpr>(&e))
      d = 1 + std::max(depthOf(b->lhs()), depthOf(b->rhs()));
    else if (auto *sel = ast::dynCast<ast::SelectExpr>(&e))
      d = 1 + std::max({depthOf(sel->cond()), depthOf(sel->ifTrue()), depthOf(sel->ifFalse())});
    return d;
  }

  // Folds `lhs op rhs`, keeping the AST depth within limits (a very long chain
  // `1 + 1 + ... + 1` would otherwise make every later walker recurse deeply).
  ast::ExprPtr binary(ast::BinaryOp op, ast::ExprPtr lhs, ast::ExprPtr rhs, unsigned &depth,
                      unsigned rhsDepth) {
    depth = std::max(depth, rhsDepth) + 1;
    SourceRange r = join(lhs->range(), rhs->range());
    if (depth > limits_.maxExprDepth) {
      if (!depthReported_)
        diags_.error(r, "too-deep",
                     fmt::format("expression too deep (more than {} nested operations)",
                                 limits_.maxExprDepth));
      depthReported_ = true;
      depth = 1;
      return std::make_unique<ast::ErrorExpr>(r);
    }
    return std::make_unique<ast::BinaryExpr>(r, op, std::move(lhs), std::move(rhs));
  }

  ast::ExprPtr expr(DkvParser::ExprContext *ctx) {
    unsigned depth = 0;
    return orExpr(ctx, depth);
  }

  // The loop levels below return the built expression and its depth in `depth`.
  ast::ExprPtr orExpr(DkvParser::ExprContext *ctx, unsigned &depth) {
    auto operands = ctx->andExpr();
    ast::ExprPtr result = andExpr(operands[0], depth);
    for (size_t i = 1; i < operands.size(); ++i) {
      unsigned d = 0;
      ast::ExprPtr rhs = andExpr(operands[i], d);
      result = binary(ast::BinaryOp::Or, std::move(result), std::move(rhs), depth, d);
    }
    return result;
  }

  ast::ExprPtr andExpr(DkvParser::AndExprContext *ctx, unsigned &depth) {
    auto operands = ctx->notExpr();
    ast::ExprPtr result = notExpr(operands[0], depth);
    for (size_t i = 1; i < operands.size(); ++i) {
      unsigned d = 0;
      ast::ExprPtr rhs = notExpr(operands[i], d);
      result = binary(ast::BinaryOp::And, std::move(result), std::move(rhs), depth, d);
    }
    return result;
  }

  ast::ExprPtr notExpr(DkvParser::NotExprContext *ctx, unsigned &depth) {
    if (ctx->NOT()) {
      ast::ExprPtr operand = notExpr(ctx->notExpr(), depth);
      ++depth;
      return std::make_unique<ast::UnaryExpr>(range(ctx), ast::UnaryOp::Not, std::move(operand));
    }
    return compExpr(ctx->compExpr(), depth);
  }

  ast::ExprPtr compExpr(DkvParser::CompExprContext *ctx, unsigned &depth) {
    auto operands = ctx->bitOrExpr();
    ast::ExprPtr result = bitOrExpr(operands[0], depth);
    if (operands.size() == 2) {
      ast::BinaryOp op = ast::BinaryOp::Eq;
      switch (ctx->op->getType()) {
      case DkvLexer::EQ:
        op = ast::BinaryOp::Eq;
        break;
      case DkvLexer::NE:
        op = ast::BinaryOp::Ne;
        break;
      case DkvLexer::LT:
        op = ast::BinaryOp::Lt;
        break;
      case DkvLexer::LE:
        op = ast::BinaryOp::Le;
        break;
      case DkvLexer::GT:
        op = ast::BinaryOp::Gt;
        break;
      default:
        op = ast::BinaryOp::Ge;
        break;
      }
      unsigned d = 0;
      ast::ExprPtr rhs = bitOrExpr(operands[1], d);
      result = binary(op, std::move(result), std::move(rhs), depth, d);
    }
    return result;
  }

  // One loop level of left-associative operators: `operands` of the next level,
  // each joined with `op`.
  template <typename Ctx, typename Next>
  ast::ExprPtr chain(const std::vector<Ctx *> &operands, ast::BinaryOp (*opOf)(size_t),
                     const std::vector<size_t> &ops, Next next, unsigned &depth) {
    ast::ExprPtr result = next(operands[0], depth);
    for (size_t i = 1; i < operands.size(); ++i) {
      unsigned d = 0;
      ast::ExprPtr rhs = next(operands[i], d);
      result = binary(opOf(ops[i - 1]), std::move(result), std::move(rhs), depth, d);
    }
    return result;
  }

  ast::ExprPtr bitOrExpr(DkvParser::BitOrExprContext *ctx, unsigned &depth) {
    return chain(
        ctx->bitXorExpr(), +[](size_t) { return ast::BinaryOp::BitOr; }, operatorTypes(ctx),
        [this](DkvParser::BitXorExprContext *c, unsigned &d) { return bitXorExpr(c, d); }, depth);
  }

  ast::ExprPtr bitXorExpr(DkvParser::BitXorExprContext *ctx, unsigned &depth) {
    return chain(
        ctx->bitAndExpr(), +[](size_t) { return ast::BinaryOp::BitXor; }, operatorTypes(ctx),
        [this](DkvParser::BitAndExprContext *c, unsigned &d) { return bitAndExpr(c, d); }, depth);
  }

  ast::ExprPtr bitAndExpr(DkvParser::BitAndExprContext *ctx, unsigned &depth) {
    return chain(
        ctx->shiftExpr(), +[](size_t) { return ast::BinaryOp::BitAnd; }, operatorTypes(ctx),
        [this](DkvParser::ShiftExprContext *c, unsigned &d) { return shiftExpr(c, d); }, depth);
  }

  ast::ExprPtr shiftExpr(DkvParser::ShiftExprContext *ctx, unsigned &depth) {
    return chain(
        ctx->addExpr(),
        +[](size_t t) { return t == DkvLexer::SHL ? ast::BinaryOp::Shl : ast::BinaryOp::Shr; },
        operatorTypes(ctx),
        [this](DkvParser::AddExprContext *c, unsigned &d) { return addExpr(c, d); }, depth);
  }

  // Operator tokens of a loop level, in order (children alternate operand, operator).
  static std::vector<size_t> operatorTypes(antlr4::ParserRuleContext *ctx) {
    std::vector<size_t> ops;
    for (auto *child : ctx->children)
      if (auto *t = dynamic_cast<antlr4::tree::TerminalNode *>(child))
        ops.push_back(t->getSymbol()->getType());
    return ops;
  }

  ast::ExprPtr addExpr(DkvParser::AddExprContext *ctx, unsigned &depth) {
    auto operands = ctx->mulExpr();
    auto ops = operatorTypes(ctx);
    ast::ExprPtr result = mulExpr(operands[0], depth);
    for (size_t i = 1; i < operands.size(); ++i) {
      unsigned d = 0;
      ast::ExprPtr rhs = mulExpr(operands[i], d);
      ast::BinaryOp op = ops[i - 1] == DkvLexer::PLUS ? ast::BinaryOp::Add : ast::BinaryOp::Sub;
      result = binary(op, std::move(result), std::move(rhs), depth, d);
    }
    return result;
  }

  ast::ExprPtr mulExpr(DkvParser::MulExprContext *ctx, unsigned &depth) {
    auto operands = ctx->unaryExpr();
    auto ops = operatorTypes(ctx);
    ast::ExprPtr result = unaryExpr(operands[0], depth);
    for (size_t i = 1; i < operands.size(); ++i) {
      unsigned d = 0;
      ast::ExprPtr rhs = unaryExpr(operands[i], d);
      ast::BinaryOp op = ops[i - 1] == DkvLexer::STAR    ? ast::BinaryOp::Mul
                         : ops[i - 1] == DkvLexer::SLASH ? ast::BinaryOp::Div
                                                         : ast::BinaryOp::Mod;
      result = binary(op, std::move(result), std::move(rhs), depth, d);
    }
    return result;
  }

  ast::ExprPtr unaryExpr(DkvParser::UnaryExprContext *ctx, unsigned &depth) {
    if (ctx->unaryExpr()) {
      // `-5` is a literal, so that the most negative integer is writable and the AST
      // stays small; other operands get a UnaryExpr.
      if (auto *lit = dynamic_cast<DkvParser::IntLitContext *>(ctx->unaryExpr()->primary())) {
        depth = 1;
        return intLiteral(range(ctx), "-" + lit->INT()->getText());
      }
      ast::ExprPtr operand = unaryExpr(ctx->unaryExpr(), depth);
      ++depth;
      return std::make_unique<ast::UnaryExpr>(range(ctx), ast::UnaryOp::Neg, std::move(operand));
    }
    return primary(ctx->primary(), depth);
  }

  ast::ExprPtr intLiteral(SourceRange r, const std::string &text) {
    int64_t value = 0;
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || ptr != text.data() + text.size()) {
      diags_.error(r, "literal-out-of-range",
                   fmt::format("integer literal {} does not fit in 64 bits", text));
      return std::make_unique<ast::ErrorExpr>(r);
    }
    return std::make_unique<ast::IntLiteral>(r, value);
  }

  ast::ExprPtr primary(DkvParser::PrimaryContext *ctx, unsigned &depth) {
    depth = 1;
    SourceRange r = range(ctx);
    if (auto *p = dynamic_cast<DkvParser::IntLitContext *>(ctx))
      return intLiteral(r, p->INT()->getText());
    if (auto *p = dynamic_cast<DkvParser::FloatLitContext *>(ctx)) {
      std::string text = p->FLOAT()->getText();
      errno = 0;
      double value = std::strtod(text.c_str(), nullptr);
      if (errno == ERANGE) {
        diags_.error(r, "literal-out-of-range",
                     fmt::format("float literal {} is out of range", text));
        return std::make_unique<ast::ErrorExpr>(r);
      }
      return std::make_unique<ast::FloatLiteral>(r, value, text);
    }
    if (auto *p = dynamic_cast<DkvParser::BoolLitContext *>(ctx))
      return std::make_unique<ast::BoolLiteral>(r, p->TRUE() != nullptr);
    if (dynamic_cast<DkvParser::BarrierRefContext *>(ctx))
      return std::make_unique<ast::NameExpr>(r, "barrier");
    if (auto *p = dynamic_cast<DkvParser::NameRefContext *>(ctx))
      return std::make_unique<ast::NameExpr>(r, p->ID()->getText());
    if (auto *p = dynamic_cast<DkvParser::ParenExprContext *>(ctx)) {
      unsigned d = 0;
      ast::ExprPtr inner = orExpr(p->expr(), d);
      depth = d;
      return inner;
    }
    if (auto *p = dynamic_cast<DkvParser::IndexExprContext *>(ctx))
      return indexExpr(r, std::make_unique<ast::NameExpr>(range(p->ID()), p->ID()->getText()),
                       p->subscripts());
    auto *call = dynamic_cast<DkvParser::CallExprContext *>(ctx);
    return callExpr(call, depth);
  }

  ast::ExprPtr indexExpr(SourceRange r, std::unique_ptr<ast::NameExpr> base,
                         DkvParser::SubscriptsContext *ctx) {
    if (dynamic_cast<DkvParser::EllipsisSubscriptsContext *>(ctx))
      return std::make_unique<ast::IndexExpr>(r, std::move(base), std::vector<ast::Subscript>{},
                                              true);
    auto *list = dynamic_cast<DkvParser::ListSubscriptsContext *>(ctx);
    std::vector<ast::Subscript> subscripts;
    for (auto *s : list->subscript()) {
      ast::Subscript sub;
      sub.range = range(s);
      if (auto *rs = dynamic_cast<DkvParser::RangeSubscriptContext *>(s)) {
        if (rs->lo)
          sub.lo = expr(rs->lo);
        if (rs->hi)
          sub.hi = expr(rs->hi);
        sub.kind = sub.lo || sub.hi ? ast::Subscript::Kind::Range : ast::Subscript::Kind::Full;
      } else {
        sub.kind = ast::Subscript::Kind::Index;
        sub.lo = expr(dynamic_cast<DkvParser::IndexSubscriptContext *>(s)->expr());
      }
      subscripts.push_back(std::move(sub));
    }
    return std::make_unique<ast::IndexExpr>(r, std::move(base), std::move(subscripts), false);
  }

  // Compute on values (docs/language.md "Compute on values"): a call of a catalogue op
  // (prim/Ops.def), its arguments bound to the op's `.dk` signature and kept by their
  // parameter's kind (ast::ComputeExpr). Overloads of a name are tried in order and the
  // first that binds is taken; a name that is also an operator (`max(a, b)`) falls back
  // to it when none binds. Null if `name` is no op's (or the operator's call); an
  // ErrorExpr after a diagnostic.
  ast::ExprPtr computeExpr(DkvParser::CallExprContext *ctx, const std::string &name, SourceRange r,
                           unsigned &depth) {
    const std::vector<prim::Op> ops = prim::findOpsByDkName(name);
    if (ops.empty())
      return nullptr;
    std::vector<DkvParser::ArgContext *> given;
    if (ctx->args())
      given = ctx->args()->arg();
    std::vector<std::string> keywords;
    for (auto *a : given)
      keywords.push_back(a->ID() ? a->ID()->getText() : "");
    std::vector<prim::Arg> bindable;
    for (const std::string &k : keywords)
      bindable.push_back({k});
    const prim::Signature *sig = nullptr;
    prim::Op op = ops.front();
    for (prim::Op candidate : ops)
      for (const prim::Signature &s : prim::dkSignatures(candidate))
        if (s.name == name && !sig && prim::bindArguments(s, bindable).ok())
          sig = &s, op = candidate;
    if (!sig) {
      if (prim::findOpByDkOperator(name, 2))
        return nullptr; // `max(a, b)`: the operator's call
      for (const prim::Signature &s : prim::dkSignatures(op))
        if (s.name == name && !sig)
          sig = &s; // report against the first overload
    }
    auto error = [&] { return std::make_unique<ast::ErrorExpr>(r); };
    std::vector<ast::ExprPtr> args;
    if (!bindArgs(*sig, r, ctx->args(), args))
      return error();
    std::vector<ast::ExprPtr> operands;
    std::optional<ast::DType> dtype;
    ast::ExprPtr axis;
    std::vector<ast::ExprPtr> dims;
    std::vector<std::pair<std::string, bool>> flags;
    for (size_t p = 0; p < sig->params.size(); ++p) {
      if (!args[p])
        continue; // absent: its default
      const prim::Param &param = sig->params[p];
      ast::ExprPtr &arg = args[p];
      switch (param.kind) {
      case prim::ParamKind::Array:
      case prim::ParamKind::Cond:
      case prim::ParamKind::Value:
        operands.push_back(std::move(arg));
        break;
      case prim::ParamKind::Arrays: {
        auto *list = ast::dynCast<ast::TupleExpr>(arg.get());
        if (!list || list->elements().empty()) {
          diags_.error(
              arg->range(), "bad-argument",
              fmt::format("{}() takes a list of arrays as '{}': [a, b]", name, param.name));
          return error();
        }
        operands = std::move(list->elements());
        break;
      }
      case prim::ParamKind::Axis:
        axis = std::move(arg);
        break;
      case prim::ParamKind::Int:
        dims.push_back(std::move(arg));
        break;
      case prim::ParamKind::DType:
        if (!(dtype = dtypeArg(*arg)))
          return error();
        break;
      case prim::ParamKind::Shape: {
        auto *tuple = ast::dynCast<ast::TupleExpr>(arg.get());
        if (!tuple) {
          diags_.error(arg->range(), "bad-argument",
                       fmt::format("{}() takes the shape as a tuple: (4, 256) or (1024,)", name));
          return error();
        }
        dims = std::move(tuple->elements());
        break;
      }
      case prim::ParamKind::Bool: {
        auto *b = ast::dynCast<ast::BoolLiteral>(arg.get());
        if (!b) {
          diags_.error(arg->range(), "bad-argument",
                       fmt::format("{}()'s {} is true or false", name, param.name));
          return error();
        }
        flags.emplace_back(std::string(param.name), b->value());
        break;
      }
      case prim::ParamKind::Unsupported:
        DKV_UNREACHABLE("no .dk signature has an unsupported parameter");
      }
    }
    // Operands are whole expressions (bounded by the nesting pre-scan); count the
    // call as one more level.
    depth = 1;
    for (const auto &o : operands)
      depth = std::max(depth, depthOf(*o) + 1);
    if (tooDeep(depth, r))
      return error();
    auto compute = std::make_unique<ast::ComputeExpr>(r, op, std::move(operands), dtype,
                                                      std::move(axis), std::move(dims));
    for (auto &[flagName, value] : flags)
      compute->setFlag(std::move(flagName), value);
    return compute;
  }

  ast::ExprPtr callExpr(DkvParser::CallExprContext *ctx, unsigned &depth) {
    std::string name = ctx->ID()->getText();
    SourceRange r = range(ctx);
    auto error = [&] { return std::make_unique<ast::ErrorExpr>(r); };
    static const std::pair<std::string_view, ast::Builtin> builtins[] = {
        {"axis_index", ast::Builtin::AxisIndex},
        {"axis_size", ast::Builtin::AxisSize},
        {"program_id", ast::Builtin::ProgramId},
        {"num_programs", ast::Builtin::NumPrograms},
        {"read", ast::Builtin::Read}};
    std::vector<ast::ExprPtr> args;
    for (const auto &[builtinName, builtin] : builtins)
      if (name == builtinName) {
        static const ArgSpec axisSpec[] = {{"axis", true}};
        static const ArgSpec dimSpec[] = {{"dim", true}};
        static const ArgSpec semSpec[] = {{"sem", true}};
        std::span<const ArgSpec> spec =
            builtin == ast::Builtin::Read ? std::span(semSpec)
            : builtin == ast::Builtin::AxisIndex || builtin == ast::Builtin::AxisSize
                ? std::span(axisSpec)
                : std::span(dimSpec);
        if (!bindArgs(name, r, ctx->args(), spec, args))
          return error();
        return std::make_unique<ast::CallExpr>(r, builtin, std::move(args[0]));
      }
    if (ast::ExprPtr compute = computeExpr(ctx, name, r, depth))
      return compute;
    if (name == "select") {
      static const ArgSpec spec[] = {{"cond", true}, {"a", true}, {"b", true}};
      if (!bindArgs(name, r, ctx->args(), spec, args))
        return error();
      depth = std::max({depthOf(*args[0]), depthOf(*args[1]), depthOf(*args[2])}) + 1;
      if (tooDeep(depth, r))
        return error();
      return std::make_unique<ast::SelectExpr>(r, std::move(args[0]), std::move(args[1]),
                                               std::move(args[2]));
    }
    if (name == "select_ref") {
      // `select_ref(i, a, b, ...)`: positional only, as Pallas' `select_ref(idx, *refs)`.
      std::vector<DkvParser::ArgContext *> given;
      if (ctx->args())
        given = ctx->args()->arg();
      for (auto *arg : given)
        if (arg->ID()) {
          diags_.error(range(arg->ID()), "bad-argument",
                       "select_ref() takes its index and refs positionally: select_ref(i, a, b)");
          return error();
        }
      if (given.size() < 3) {
        diags_.error(r, "arg-count",
                     fmt::format("select_ref() takes an index and at least two refs or semaphores "
                                 "to select from ({} argument{} given)",
                                 given.size(), given.size() == 1 ? "" : "s"));
        return error();
      }
      for (auto *arg : given)
        args.push_back(argValue(arg->argValue()));
      depth = 1;
      for (const auto &a : args)
        depth = std::max(depth, depthOf(*a) + 1);
      if (tooDeep(depth, r))
        return error();
      ast::ExprPtr index = std::move(args.front());
      args.erase(args.begin());
      return std::make_unique<ast::SelectRefExpr>(r, std::move(index), std::move(args));
    }
    if (name == "min" || name == "max" || name == "rem") {
      static const ArgSpec spec[] = {{"a", true}, {"b", true}};
      if (!bindArgs(name, r, ctx->args(), spec, args))
        return error();
      // Operands are whole expressions (bounded by the nesting pre-scan); count the
      // call as one more level.
      depth = std::max(depthOf(*args[0]), depthOf(*args[1])) + 1;
      if (tooDeep(depth, r))
        return error();
      ast::BinaryOp op = name == "min"   ? ast::BinaryOp::Min
                         : name == "max" ? ast::BinaryOp::Max
                                         : ast::BinaryOp::Rem;
      return std::make_unique<ast::BinaryExpr>(r, op, std::move(args[0]), std::move(args[1]));
    }
    if (name == "copy" || name == "async_copy") {
      static const ArgSpec spec[] = {{"src", true}, {"dst", true}, {"sem", true}};
      if (!bindArgs(name, r, ctx->args(), spec, args))
        return error();
      return std::make_unique<ast::CopyExpr>(r, std::move(args[0]), std::move(args[1]),
                                             std::move(args[2]), name == "async_copy");
    }
    if (name == "remote_copy" || name == "async_remote_copy") {
      static const ArgSpec spec[] = {
          {"src", true}, {"dst", true}, {"send_sem", true}, {"recv_sem", true}, {"device", true}};
      if (!bindArgs(name, r, ctx->args(), spec, args))
        return error();
      return std::make_unique<ast::RemoteCopyExpr>(r, std::move(args[0]), std::move(args[1]),
                                                   std::move(args[2]), std::move(args[3]),
                                                   std::move(args[4]), name == "async_remote_copy");
    }
    if (name == "signal" || name == "wait") {
      diags_.error(range(ctx->ID()), "misplaced-expr",
                   fmt::format("'{}' is a statement, not an expression", name));
      return error();
    }
    diags_.error(range(ctx->ID()), "unknown-function",
                 fmt::format("unknown function '{}'{}", name,
                             support::didYouMean(name, exprFunctionNames())));
    return error();
  }
};

//===----------------------------------------------------------------------===//
// Input checks before parsing
//===----------------------------------------------------------------------===//

// The characters the lexer may see. Anything else (control bytes, NUL, non-ASCII
// bytes) becomes \x01, which only ERROR_CHAR and comments accept; this keeps
// ANTLR's UTF-8 decoding away from invalid input and makes character indices equal
// byte offsets. The original bytes are still used for messages.
std::string sanitise(const std::string &text) {
  std::string out = text;
  for (char &c : out) {
    unsigned char u = static_cast<unsigned char>(c);
    if (!(u == '\t' || u == '\n' || u == '\r' || (u >= 0x20 && u < 0x7f)))
      c = '\x01';
  }
  return out;
}

std::string describeByte(unsigned char c) {
  if (c >= 0x20 && c < 0x7f)
    return fmt::format("character '{}'", static_cast<char>(c));
  return fmt::format("byte 0x{:02X}", c);
}

// Scans the default-channel tokens for nesting that would make the generated
// recursive-descent parser recurse deeply: brackets, and chains of prefix operators.
// Returns the offending token, or null.
/// After a syntax error: the innermost bracket that is never closed, if any. A closing
/// bracket that matches an opener deeper in the stack leaves the ones above it
/// unclosed; a stray closing bracket that matches nothing is not this function's
/// concern (the parser reports it).
const antlr4::Token *findUnclosedBracket(const std::vector<antlr4::Token *> &tokens) {
  auto opener = [](size_t closing) -> size_t {
    switch (closing) {
    case DkvLexer::RPAREN:
      return DkvLexer::LPAREN;
    case DkvLexer::RBRACK:
      return DkvLexer::LBRACK;
    case DkvLexer::RBRACE:
      return DkvLexer::LBRACE;
    default:
      return 0;
    }
  };
  std::vector<const antlr4::Token *> open;
  for (const antlr4::Token *t : tokens) {
    if (t->getChannel() != antlr4::Token::DEFAULT_CHANNEL)
      continue;
    size_t type = t->getType();
    if (type == DkvLexer::LPAREN || type == DkvLexer::LBRACK || type == DkvLexer::LBRACE) {
      open.push_back(t);
      continue;
    }
    size_t want = opener(type);
    if (want == 0)
      continue;
    auto match = std::find_if(open.rbegin(), open.rend(),
                              [&](const antlr4::Token *o) { return o->getType() == want; });
    if (match == open.rend())
      continue; // a stray closing bracket
    if (match != open.rbegin())
      return open.back();
    open.pop_back();
  }
  return open.empty() ? nullptr : open.back();
}

const antlr4::Token *findTooDeep(const std::vector<antlr4::Token *> &tokens, unsigned limit) {
  unsigned brackets = 0;
  unsigned prefixRun = 0;
  for (const antlr4::Token *t : tokens) {
    if (t->getChannel() != antlr4::Token::DEFAULT_CHANNEL)
      continue;
    switch (t->getType()) {
    case DkvLexer::LPAREN:
    case DkvLexer::LBRACK:
    case DkvLexer::LBRACE:
      ++brackets;
      prefixRun = 0;
      break;
    case DkvLexer::RPAREN:
    case DkvLexer::RBRACK:
    case DkvLexer::RBRACE:
      if (brackets > 0)
        --brackets;
      prefixRun = 0;
      break;
    case DkvLexer::MINUS:
    case DkvLexer::NOT:
      ++prefixRun;
      break;
    default:
      prefixRun = 0;
      break;
    }
    if (brackets + prefixRun > limit)
      return t;
  }
  return nullptr;
}

void reportLexicalProblems(const SourceFile &file, const std::vector<antlr4::Token *> &tokens,
                           DiagnosticEngine &diags, std::vector<ast::Comment> &comments) {
  const std::string &text = file.text();
  size_t lastErrorEnd = std::string::npos;
  for (const antlr4::Token *t : tokens) {
    switch (t->getType()) {
    case DkvLexer::ERROR_CHAR: {
      size_t offset = t->getStartIndex();
      // One diagnostic per run of bad characters (e.g. a multi-byte UTF-8 character
      // or a block of binary garbage).
      if (offset != lastErrorEnd) {
        unsigned char c = static_cast<unsigned char>(text[offset]);
        diags.error(tokenRange(file, t), "invalid-character",
                    c >= 0x80 ? "unexpected non-ASCII character outside a comment"
                              : fmt::format("unexpected {}", describeByte(c)));
      }
      lastErrorEnd = offset + 1;
      break;
    }
    case DkvLexer::UNTERMINATED_COMMENT: {
      SourceLoc begin = file.locForOffset(t->getStartIndex());
      diags.error({begin, file.loc(begin.line, begin.col + 2)}, "unterminated-comment",
                  "unterminated /* comment");
      break;
    }
    case DkvLexer::LINE_COMMENT: {
      std::string_view body = std::string_view(text).substr(
          t->getStartIndex() + 2, t->getStopIndex() - t->getStartIndex() - 1);
      // A comment alone on its line applies to the next line (suppressions).
      size_t lineStart = text.rfind('\n', t->getStartIndex());
      lineStart = lineStart == std::string::npos ? 0 : lineStart + 1;
      bool alone = text.find_first_not_of(" \t", lineStart) == t->getStartIndex();
      comments.push_back({std::string(body), tokenRange(file, t), alone});
      break;
    }
    default:
      break;
    }
  }
}

} // namespace

namespace {

std::unique_ptr<ast::Module> emptyModule(const SourceFile &file,
                                         std::vector<ast::Comment> comments) {
  SourceLoc end = file.locForOffset(file.text().size());
  auto module =
      std::make_unique<ast::Module>(SourceRange{file.loc(1, 1), end},
                                    std::vector<std::unique_ptr<ast::Node>>{}, std::move(comments));
  module->setComplete(false);
  return module;
}

std::unique_ptr<ast::Module> parseImpl(const SourceFile &file, DiagnosticEngine &diags,
                                       const ParseLimits &limits) {
  const std::string &text = file.text();
  if (text.size() > limits.maxSourceBytes || file.truncated()) {
    // A truncated file was longer than what was read (or endless, like /dev/zero).
    diags.error({file.loc(1, 1), file.loc(1, 1)}, "file-too-large",
                fmt::format("file too large ({}{} bytes; the limit is {} bytes)",
                            file.truncated() ? "more than " : "", text.size(),
                            limits.maxSourceBytes));
    return emptyModule(file, {});
  }

  antlr4::ANTLRInputStream input(sanitise(text));
  DkvLexer lexer(&input);
  lexer.removeErrorListeners(); // ERROR_CHAR matches every character: no lexer errors
  antlr4::CommonTokenStream tokens(&lexer);
  tokens.fill();

  // The line comments go with the module: the parser gives them no meaning, readers of
  // directives in them do (frontend/Annotations.h).
  std::vector<ast::Comment> comments;
  reportLexicalProblems(file, tokens.getTokens(), diags, comments);

  if (const antlr4::Token *deep = findTooDeep(tokens.getTokens(), limits.maxNesting)) {
    diags.error(tokenRange(file, deep), "too-deep",
                fmt::format("nesting too deep (more than {} levels of brackets and prefix "
                            "operators)",
                            limits.maxNesting));
    return emptyModule(file, std::move(comments));
  }

  DkvParser parser(&tokens);
  parser.removeErrorListeners();
  ErrorListener listener(file, diags);
  parser.addErrorListener(&listener);
  parser.setErrorHandler(std::make_shared<ErrorStrategy>());
  // Two-stage parsing: the fast SLL mode is exact for this grammar on valid input;
  // fall back to full LL only to get precise error reports.
  parser.getInterpreter<antlr4::atn::ParserATNSimulator>()->setPredictionMode(
      antlr4::atn::PredictionMode::SLL);
  DkvParser::ModuleContext *tree = nullptr;
  {
    auto bail = std::make_shared<antlr4::BailErrorStrategy>();
    parser.setErrorHandler(bail);
    parser.removeErrorListeners();
    try {
      tree = parser.module();
    } catch (const antlr4::ParseCancellationException &) {
      tree = nullptr;
    }
  }
  if (!tree) {
    tokens.seek(0);
    parser.reset();
    parser.addErrorListener(&listener);
    parser.setErrorHandler(std::make_shared<ErrorStrategy>());
    parser.getInterpreter<antlr4::atn::ParserATNSimulator>()->setPredictionMode(
        antlr4::atn::PredictionMode::LL);
    tree = parser.module();
  }
  if (listener.count() > 0) {
    // Where the parser gave up is often far from the cause: point at the bracket.
    if (const antlr4::Token *open = findUnclosedBracket(tokens.getTokens()))
      diags.error(tokenRange(file, open), "unclosed-bracket",
                  fmt::format("this '{}' is never closed", open->getText()));
    return emptyModule(file, std::move(comments));
  }

  Transformer transformer(file, diags, limits);
  auto items = transformer.module(tree);
  SourceLoc end = file.locForOffset(text.size());
  return std::make_unique<ast::Module>(SourceRange{file.loc(1, 1), end}, std::move(items),
                                       std::move(comments));
}

} // namespace

bool isKeyword(std::string_view word) {
  static const std::set<std::string, std::less<>> words = [] {
    // Every token that is one literal word ('kernel', 'let', ...), and `inf`, a word that
    // the FLOAT token spells.
    std::set<std::string, std::less<>> out{"inf"};
    antlr4::ANTLRInputStream empty("");
    DkvLexer lexer(&empty);
    const antlr4::dfa::Vocabulary &v = lexer.getVocabulary();
    for (size_t t = 0; t <= v.getMaxTokenType(); ++t) {
      std::string lit = v.getLiteralName(t);
      if (lit.size() > 2 && lit.front() == '\'' && lit.back() == '\'' &&
          std::all_of(lit.begin() + 1, lit.end() - 1, [](char c) {
            return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
          }))
        out.insert(lit.substr(1, lit.size() - 2));
    }
    return out;
  }();
  return words.count(word) > 0;
}

std::unique_ptr<ast::Module> parseModule(const SourceFile &file, DiagnosticEngine &diags,
                                         const ParseLimits &limits) {
  // Exceptions never leave the frontend: an unexpected one (e.g. bad_alloc, or an
  // ANTLR runtime error) becomes a diagnostic.
  try {
    return parseImpl(file, diags, limits);
  } catch (const std::exception &e) {
    diags.error({}, "internal", fmt::format("internal parser error: {}", e.what()));
  } catch (...) {
    diags.error({}, "internal", "internal parser error");
  }
  return emptyModule(file, {});
}

} // namespace dkv::frontend
