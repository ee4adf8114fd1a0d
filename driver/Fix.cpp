// Verified fixes: local repairs of the kernel source, each checked with the same engine
// at the kernel's instances (docs/explain.md "Verified fixes").
#include "driver/Fix.h"

#include "driver/Commands.h"
#include "driver/PythonCommand.h"
#include "frontend/AST.h"
#include "frontend/Annotations.h"
#include "report/Explain.h"
#include "support/Invariant.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <ostream>
#include <regex>
#include <set>
#include <sstream>

namespace dkv::driver {

namespace {

using report::LineEdit;
using support::SourceLoc;
using What = report::FindingFacts::What;

/// A candidate repair: what it does in words, where, and its line edits.
struct Repair {
  std::string summary;
  SourceLoc loc;
  std::vector<LineEdit> edits;
};

/// The lines of a file's text (without their newlines) and whether it ends in one.
struct Lines {
  std::vector<std::string> lines;
  bool finalNewline = true;
  explicit Lines(std::string_view text) {
    size_t begin = 0;
    while (begin < text.size()) {
      size_t end = text.find('\n', begin);
      if (end == std::string_view::npos) {
        lines.emplace_back(text.substr(begin));
        finalNewline = false;
        return;
      }
      lines.emplace_back(text.substr(begin, end - begin));
      begin = end + 1;
    }
  }
  const std::string &at(uint32_t line) const { return lines[line - 1]; }
};

std::string indentOf(const std::string &line) {
  return line.substr(0, line.find_first_not_of(" \t") == std::string::npos
                            ? line.size()
                            : line.find_first_not_of(" \t"));
}

std::string trimmed(std::string text) {
  size_t a = text.find_first_not_of(" \t");
  if (a == std::string::npos)
    return "";
  size_t b = text.find_last_not_of(" \t\r");
  return text.substr(a, b - a + 1);
}

/// `text` with the line edits applied, and for every new line the old line it was (0:
/// inserted by an edit).
struct Applied {
  std::string text;
  std::vector<uint32_t> oldLine; ///< [new line - 1]
};
Applied applyEdits(const Lines &old, const std::vector<LineEdit> &edits) {
  Applied out;
  std::vector<std::string> lines;
  uint32_t next = 1; // the next old line to copy
  for (const LineEdit &e : edits) {
    for (; next < e.firstLine; ++next) {
      lines.push_back(old.at(next));
      out.oldLine.push_back(next);
    }
    for (const std::string &l : e.lines) {
      lines.push_back(l);
      out.oldLine.push_back(0);
    }
    next = std::max(next, e.lastLine + 1);
  }
  for (; next <= old.lines.size(); ++next) {
    lines.push_back(old.at(next));
    out.oldLine.push_back(next);
  }
  for (size_t i = 0; i < lines.size(); ++i)
    out.text += lines[i] + (i + 1 < lines.size() || old.finalNewline ? "\n" : "");
  return out;
}

/// A unified diff of the edits (three lines of context), `--- a/FILE` / `+++ b/FILE`.
std::string unifiedDiff(const std::string &file, const Lines &old,
                        const std::vector<LineEdit> &edits) {
  // git's a/ and b/ prefixes for a relative path; an absolute one as it is.
  const bool absolute = !file.empty() && file.front() == '/';
  std::string out = absolute ? fmt::format("--- {}\n+++ {}\n", file, file)
                             : fmt::format("--- a/{}\n+++ b/{}\n", file, file);
  constexpr uint32_t kContext = 3;
  const uint32_t count = static_cast<uint32_t>(old.lines.size());
  int64_t shift = 0; // new line numbers minus old ones before the hunk
  for (size_t i = 0; i < edits.size();) {
    // A hunk: the edits whose context windows touch.
    size_t j = i;
    while (j + 1 < edits.size() && edits[j + 1].firstLine <= edits[j].lastLine + 2 * kContext + 1)
      ++j;
    const uint32_t from = edits[i].firstLine > kContext ? edits[i].firstLine - kContext : 1;
    const uint32_t to = std::min(count, edits[j].lastLine + kContext);
    std::string body;
    uint32_t oldCount = 0, newCount = 0;
    uint32_t line = from;
    for (size_t k = i; k <= j; ++k) {
      for (; line < edits[k].firstLine; ++line, ++oldCount, ++newCount)
        body += " " + old.at(line) + "\n";
      for (; line <= edits[k].lastLine; ++line, ++oldCount)
        body += "-" + old.at(line) + "\n";
      for (const std::string &l : edits[k].lines) {
        body += "+" + l + "\n";
        ++newCount;
      }
    }
    for (; line <= to; ++line, ++oldCount, ++newCount)
      body += " " + old.at(line) + "\n";
    const int64_t newFrom = static_cast<int64_t>(from) + shift;
    out += fmt::format("@@ -{},{} +{},{} @@\n", from, oldCount, newFrom, newCount);
    out += body;
    shift += static_cast<int64_t>(newCount) - static_cast<int64_t>(oldCount);
    i = j + 1;
  }
  return out;
}

// ---- The statements of a .dk kernel, with where they are. ----

struct StmtRef {
  const ast::Stmt *stmt = nullptr;
  const ast::Block *block = nullptr;
  size_t index = 0;
  const ast::ForStmt *loop = nullptr; ///< the innermost enclosing for loop
  const ast::KernelDecl *kernel = nullptr;
  int depth = 0;
};

void walk(const ast::Block &block, const ast::ForStmt *loop, const ast::KernelDecl *kernel,
          int depth, std::vector<StmtRef> &out) {
  for (size_t i = 0; i < block.stmts().size(); ++i) {
    const ast::Stmt *s = block.stmts()[i].get();
    out.push_back({s, &block, i, loop, kernel, depth});
    if (const auto *r = ast::dynCast<ast::RunScopedStmt>(s))
      walk(r->body(), loop, kernel, depth + 1, out);
    else if (const auto *f = ast::dynCast<ast::ForStmt>(s))
      walk(f->body(), f, kernel, depth + 1, out);
    else if (const auto *p = ast::dynCast<ast::EmitPipelineStmt>(s))
      walk(p->body(), loop, kernel, depth + 1, out);
    else if (const auto *c = ast::dynCast<ast::IfStmt>(s)) {
      for (const ast::IfStmt::Branch &b : c->branches())
        walk(*b.body, loop, kernel, depth + 1, out);
      if (c->elseBody())
        walk(*c->elseBody(), loop, kernel, depth + 1, out);
    }
  }
}

bool contains(const support::SourceRange &range, SourceLoc loc) {
  return range.begin.file == loc.file && !(loc < range.begin) && loc < range.end;
}

/// The statements containing `loc`, innermost first.
std::vector<const StmtRef *> containing(const std::vector<StmtRef> &all, SourceLoc loc) {
  std::vector<const StmtRef *> out;
  for (const StmtRef &r : all)
    if (contains(r.stmt->range(), loc))
      out.push_back(&r);
  std::sort(out.begin(), out.end(),
            [](const StmtRef *a, const StmtRef *b) { return a->depth > b->depth; });
  return out;
}

/// The source text of `range` (on one line), or "" when it spans lines.
std::string textOf(const Lines &lines, const support::SourceRange &range) {
  if (range.begin.line != range.end.line || range.begin.line == 0 ||
      range.begin.line > lines.lines.size())
    return "";
  const std::string &line = lines.at(range.begin.line);
  if (range.end.col < range.begin.col || range.end.col - 1 > line.size())
    return "";
  return line.substr(range.begin.col - 1, range.end.col - range.begin.col);
}

/// The statement occupies whole lines: nothing else starts or ends on its lines.
bool wholeLines(const Lines &lines, const ast::Stmt &stmt) {
  const support::SourceRange &r = stmt.range();
  if (r.begin.line == 0 || r.end.line > lines.lines.size())
    return false;
  const std::string &first = lines.at(r.begin.line);
  if (r.begin.col != indentOf(first).size() + 1)
    return false;
  std::string rest =
      lines.at(r.end.line).substr(std::min<size_t>(r.end.col - 1, lines.at(r.end.line).size()));
  rest = trimmed(rest);
  return rest.empty() || rest.starts_with("//");
}

bool hasWait(const ast::Stmt &stmt) {
  if (const auto *d = ast::dynCast<ast::DmaStmt>(&stmt))
    return d->method() != ast::DmaMethod::Start;
  if (ast::isa<ast::WaitStmt>(&stmt))
    return true;
  if (const auto *c = ast::dynCast<ast::IfStmt>(&stmt)) {
    bool any = false;
    auto block = [&](const ast::Block &b) {
      for (const ast::StmtPtr &s : b.stmts())
        any = any || hasWait(*s);
    };
    for (const ast::IfStmt::Branch &b : c->branches())
      block(*b.body);
    if (c->elseBody())
      block(*c->elseBody());
    return any;
  }
  return false;
}

/// A name not used as a word anywhere in `text`, from `base`.
std::string freshName(const std::string &text, const std::string &base) {
  for (int n = 0;; ++n) {
    std::string name = n == 0 ? base : fmt::format("{}{}", base, n + 1);
    std::regex word("\\b" + name + "\\b");
    if (!std::regex_search(text, word))
      return name;
  }
}

// ---- The repairs. ----

/// What a root cause's findings say, for the repairs.
struct CauseFacts {
  std::optional<SourceLoc> dma; ///< an unwaited DMA's start
  bool send = false, recv = false, local = false;
  const report::Finding *exitSemaphore = nullptr; ///< a regular semaphore left non-zero
  /// DMA sides open at an exit that add a unit to a regular semaphore (TPU v6+), when no
  /// finding of the cause says what the semaphore holds there: the first, and how many.
  const report::Finding *unitSide = nullptr;
  int64_t unitSides = 0;
  const report::Finding *race = nullptr;
  const report::Finding *outside = nullptr; ///< a lifetime finding
  std::string explain;
};

CauseFacts factsOf(const std::vector<report::Finding> &findings, const report::RootCause &cause) {
  CauseFacts c;
  c.explain = report::explainFinding(findings[cause.findings.front()]).id;
  for (size_t i : cause.findings) {
    const report::Finding &f = findings[i];
    const report::FindingFacts &x = f.facts;
    if (x.what == What::ExitDma && x.unitSemaphore) {
      // Waited on the semaphore, never through the descriptor (which would take bytes).
      c.unitSide = c.unitSide ? c.unitSide : &f;
      ++c.unitSides;
    } else if (x.what == What::ExitDma) {
      c.dma = x.dma;
      (x.dst ? c.recv : c.send) = true;
      c.local = c.local || x.local;
    } else if (x.what == What::ExitSemaphore && x.dmaSemaphore && x.countedBy.size() == 1) {
      c.dma = x.countedBy[0];
      (x.countedDst[0] ? c.recv : c.send) = true;
    } else if (x.what == What::ExitSemaphore && !x.dmaSemaphore) {
      c.exitSemaphore = c.exitSemaphore ? c.exitSemaphore : &f;
    } else if (x.what == What::Race) {
      c.race = c.race ? c.race : &f;
    } else if (x.what == What::LandOutside || x.what == What::SignalOutside) {
      c.outside = c.outside ? c.outside : &f;
    }
  }
  return c;
}

/// Repairs of a .dk kernel for one root cause, most likely first.
std::vector<Repair> dkRepairs(const CauseFacts &c, const ast::Module &module, const Lines &lines,
                              const std::string &text) {
  std::vector<StmtRef> all;
  for (const ast::KernelDecl *k : module.kernels())
    walk(k->body(), nullptr, k, 0, all);
  std::vector<Repair> out;
  auto insertAfter = [&](uint32_t line, std::string content, std::string summary, SourceLoc at) {
    out.push_back({std::move(summary), at, {LineEdit{line + 1, line, {std::move(content)}}}});
  };

  // Insert the missing wait of a DMA: at the end of the block that starts it (the latest
  // place the descriptor is in scope), or right after the start.
  if (c.dma) {
    std::vector<const StmtRef *> at = containing(all, *c.dma);
    const StmtRef *start = nullptr;
    std::string descriptor;
    for (const StmtRef *r : at) {
      if (const auto *d = ast::dynCast<ast::DmaStmt>(r->stmt);
          d && d->method() == ast::DmaMethod::Start)
        descriptor = textOf(lines, d->descriptor().range());
      else if (const auto *l = ast::dynCast<ast::LetStmt>(r->stmt))
        descriptor = l->decl().name();
      else if (const auto *s = ast::dynCast<ast::StoreStmt>(r->stmt))
        descriptor = textOf(lines, s->target().range());
      if (!descriptor.empty()) {
        start = r;
        break;
      }
    }
    if (start && wholeLines(lines, *start->stmt)) {
      const char *method = c.local || (c.send && c.recv) ? "wait()"
                           : c.recv                      ? "wait_recv()"
                                                         : "wait_send()";
      const std::string call = descriptor + "." + method;
      const std::string indent = indentOf(lines.at(start->stmt->range().begin.line));
      const ast::Stmt &last = *start->block->stmts().back();
      if (&last != start->stmt && wholeLines(lines, last))
        insertAfter(last.range().end.line, indent + call,
                    fmt::format("insert '{}' after line {}", call, last.range().end.line),
                    last.range().begin);
      insertAfter(start->stmt->range().end.line, indent + call,
                  fmt::format("insert '{}' after line {}", call, start->stmt->range().end.line),
                  start->stmt->range().begin);
    }
  }

  // A regular semaphore left non-zero: wait for what is left before the exit (or, for
  // DMA sides that add units to one and no value known, one unit per open side).
  const report::Finding *left =
      c.exitSemaphore && c.exitSemaphore->facts.leftOver > 0 ? c.exitSemaphore : c.unitSide;
  if (left) {
    const report::FindingFacts &x = left->facts;
    const int64_t units = left == c.exitSemaphore ? x.leftOver : c.unitSides;
    const uint32_t exitLine = x.exit.line;
    if (exitLine > 1 && exitLine <= lines.lines.size()) {
      std::string call = fmt::format("wait({}, {})", x.semaphoreElement, units);
      std::string indent = indentOf(lines.at(exitLine)) + "  ";
      out.push_back({fmt::format("insert '{}' before line {}", call, exitLine),
                     x.exit,
                     {LineEdit{exitLine, exitLine - 1, {indent + call}}}});
      // In a kernel with a grid the body ends after every grid step, the kernel after
      // the last: the clean-up wait belongs to the last step.
      const ast::KernelDecl *kernel = nullptr;
      for (const ast::KernelDecl *k : module.kernels())
        if (k->range().end.line == exitLine ||
            (k->range().begin.line <= exitLine && exitLine <= k->range().end.line))
          kernel = k;
      if (x.kernelExit && kernel && !kernel->grid().empty()) {
        std::string last;
        for (size_t d = 0; d < kernel->grid().size(); ++d)
          last += fmt::format("{}program_id({}) == num_programs({}) - 1", d ? " and " : "", d, d);
        out.push_back(
            {fmt::format("insert '{}' in the last grid step, before line {}", call, exitLine),
             x.exit,
             {LineEdit{exitLine,
                       exitLine - 1,
                       {indent + "if " + last + " {", indent + "  " + call, indent + "}"}}}});
      }
    }
  }

  // An access racing with a DMA: move a wait that follows it (in the same block) to
  // before it, so that the access happens after the wait (nearest waits first). Not for
  // two writes: which one lands last is the kernel's meaning, and ordering them anew
  // could make a race-free kernel that computes something else.
  const bool twoWrites =
      c.race &&
      (c.race->facts.accessRole == "store" || c.race->facts.accessRole == "dma-destination") &&
      c.race->facts.dst;
  if (c.race && !twoWrites) {
    const report::FindingFacts &x = c.race->facts;
    for (SourceLoc access : {x.access, x.dma}) {
      for (const StmtRef *r : containing(all, access)) {
        if (!wholeLines(lines, *r->stmt))
          continue;
        const auto &stmts = r->block->stmts();
        for (size_t j = r->index + 1; j < stmts.size() && j <= r->index + 6; ++j) {
          const ast::Stmt &w = *stmts[j];
          if (!hasWait(w) || !wholeLines(lines, w))
            continue;
          const uint32_t a = r->stmt->range().begin.line, b = w.range().begin.line,
                         e = w.range().end.line;
          // The wait's lines, re-indented to the access's statement.
          const std::string from = indentOf(lines.at(b)), to = indentOf(lines.at(a));
          std::vector<std::string> moved;
          for (uint32_t l = b; l <= e; ++l) {
            std::string line = lines.at(l);
            if (line.starts_with(from))
              line = to + line.substr(from.size());
            moved.push_back(line);
          }
          // "move 'c.wait()' (line 18) before line 15", or for a statement of several
          // lines "move lines 35..37 ('if s < 3 { c.wait() }') before line 33".
          std::string what;
          for (uint32_t l = b; l <= e; ++l) {
            std::string part = lines.at(l);
            if (size_t comment = part.find("//"); comment != std::string::npos)
              part = part.substr(0, comment);
            part = trimmed(part);
            what += what.empty() || part.empty() ? part : " " + part;
          }
          if (what.size() > 70)
            what = what.substr(0, 67) + "...";
          Repair repair;
          repair.summary =
              b == e ? fmt::format("move '{}' (line {}) before line {}", what, b, a)
                     : fmt::format("move lines {}..{} ('{}') before line {}", b, e, what, a);
          repair.loc = r->stmt->range().begin;
          repair.edits = {LineEdit{a, a - 1, moved}, LineEdit{b, e, {}}};
          out.push_back(std::move(repair));
        }
        break; // the innermost statement on whole lines only
      }
    }
  }

  // A buffer prepared (stored to, or filled by a local copy) while another device's DMA
  // may already land in it: a barrier of all devices right after the preparation, so
  // that no device starts its DMA before every device has prepared (each device signals
  // every device on a new regular semaphore and waits for all of them). Only on a mesh
  // without a TensorCore axis, whose devices are 0 .. the product of its axis sizes.
  if (c.race && c.race->facts.dst && !c.race->facts.local &&
      (c.race->facts.accessRole == "store" || c.race->facts.accessRole == "dma-destination") &&
      module.mesh() && !module.tensorCoreMesh()) {
    std::string size;
    for (const auto &axis : module.mesh()->axes()) {
      const std::string text = textOf(lines, axis->sizeExpr().range());
      if (text.empty()) {
        size.clear();
        break;
      }
      size += (size.empty() ? "" : " * ") +
              (text.find_first_of(" +-*/%") == std::string::npos ? text : "(" + text + ")");
    }
    std::vector<const StmtRef *> at = containing(all, c.race->facts.access);
    if (!size.empty() && !at.empty() && wholeLines(lines, *at.front()->stmt) &&
        !at.front()->kernel->body().stmts().empty()) {
      const StmtRef &s = *at.front();
      const std::string ready = freshName(text, "ready");
      const std::string d = freshName(text, "d");
      const std::string indent = indentOf(lines.at(s.stmt->range().begin.line));
      const uint32_t after = s.stmt->range().end.line;
      const uint32_t firstLine = s.kernel->body().stmts().front()->range().begin.line;
      Repair repair;
      repair.summary = fmt::format("insert a barrier of all devices on a new semaphore '{}' "
                                   "after line {}",
                                   ready, after);
      repair.loc = s.stmt->range().begin;
      repair.edits.push_back({firstLine,
                              firstLine - 1,
                              {indentOf(lines.at(firstLine)) + "scratch " + ready + ": sem"}});
      repair.edits.push_back({after + 1,
                              after,
                              {fmt::format("{}for {} in 0 .. {} {{", indent, d, size),
                               fmt::format("{}  signal({}, 1, device = {})", indent, ready, d),
                               indent + "}", fmt::format("{}wait({}, {})", indent, ready, size)}});
      if (firstLine <= s.stmt->range().begin.line)
        out.push_back(std::move(repair));
    }
  }

  // Two DMAs counting on one semaphore: give the racing DMA a semaphore of its own
  // (an array indexed by the loop or grid step when it is made in one).
  if (c.race && c.explain == "shared-semaphore" && c.race->facts.descriptor.valid()) {
    const report::FindingFacts &x = c.race->facts;
    for (const StmtRef *r : containing(all, x.descriptor)) {
      const ast::Expr *init = nullptr;
      if (const auto *l = ast::dynCast<ast::LetStmt>(r->stmt))
        init = &l->decl().init();
      else if (const auto *s = ast::dynCast<ast::StoreStmt>(r->stmt))
        init = &s->value();
      const ast::Expr *sem = nullptr;
      if (const auto *rc = ast::dynCast<ast::RemoteCopyExpr>(init))
        sem = x.dst ? &rc->recvSem() : &rc->sendSem();
      else if (const auto *cc = ast::dynCast<ast::CopyExpr>(init))
        sem = &cc->sem();
      if (!sem || ast::isa<ast::SelectRefExpr>(sem))
        continue;
      const std::string semText = textOf(lines, sem->range());
      if (semText.empty())
        break;
      std::string base = semText.substr(0, semText.find('['));
      std::string name = freshName(text, base + "_own");
      std::string decl, use;
      if (r->loop) {
        const std::string var = r->loop->var().name();
        const std::string lo = textOf(lines, r->loop->lo().range());
        const std::string hi = textOf(lines, r->loop->hi().range());
        if (lo.empty() || hi.empty())
          break;
        decl = lo == "0" ? fmt::format("{}: dma_sem[{}]", name, hi)
                         : fmt::format("{}: dma_sem[({}) - ({})]", name, hi, lo);
        use = lo == "0" ? fmt::format("{}[{}]", name, var)
                        : fmt::format("{}[{} - ({})]", name, var, lo);
      } else if (!r->kernel->grid().empty()) {
        const std::string g = textOf(lines, r->kernel->grid().front()->range());
        if (g.empty())
          break;
        decl = fmt::format("{}: dma_sem[{}]", name, g);
        use = fmt::format("{}[program_id(0)]", name);
      } else {
        decl = name + ": dma_sem";
        use = name;
      }
      // The declaration: before the loop (its bounds may use names of the body), or at
      // the start of the kernel's body.
      const ast::Block &body = r->kernel->body();
      if (body.stmts().empty())
        break;
      const uint32_t firstLine =
          r->loop ? r->loop->range().begin.line : body.stmts().front()->range().begin.line;
      const uint32_t semLine = sem->range().begin.line;
      std::string changed = lines.at(semLine);
      changed.replace(sem->range().begin.col - 1, semText.size(), use);
      Repair repair;
      repair.summary =
          fmt::format("give the dma started at line {} its own semaphore '{}'", x.dma.line, use);
      repair.loc = sem->range().begin;
      repair.edits.push_back(
          {firstLine, firstLine - 1, {indentOf(lines.at(firstLine)) + "scratch " + decl}});
      repair.edits.push_back({semLine, semLine, {changed}});
      if (firstLine < semLine)
        out.push_back(std::move(repair));
      break;
    }
  }

  // A one-round barrier over several invocations: a second round, on a regular
  // semaphore of its own, after the first (the double barrier of the Pallas TPU
  // distributed tutorial).
  if (c.explain == "one-round-barrier") {
    std::regex barrier("\\bbarrier\\b");
    for (const ast::KernelDecl *k : module.kernels()) {
      const auto &stmts = k->body().stmts();
      size_t first = stmts.size(), last = stmts.size();
      for (size_t i = 0; i < stmts.size(); ++i) {
        std::string stmtText;
        for (uint32_t l = stmts[i]->range().begin.line; l <= stmts[i]->range().end.line; ++l)
          stmtText += lines.at(l) + "\n";
        if (std::regex_search(stmtText, barrier)) {
          first = first == stmts.size() ? i : first;
          last = i;
        }
      }
      if (first == stmts.size() || stmts.empty() || !wholeLines(lines, *stmts[last]))
        continue;
      const std::string name = freshName(text, "second_round");
      std::vector<std::string> round;
      for (uint32_t l = stmts[first]->range().begin.line; l <= stmts[last]->range().end.line; ++l) {
        // The comments of the first round do not describe the second.
        std::string line = lines.at(l);
        if (trimmed(line).starts_with("//"))
          continue;
        if (size_t comment = line.find("//"); comment != std::string::npos)
          line = line.substr(0, line.find_last_not_of(" \t", comment - 1) + 1);
        round.push_back(std::regex_replace(line, barrier, name));
      }
      const uint32_t after = stmts[last]->range().end.line;
      const uint32_t firstLine = stmts.front()->range().begin.line;
      Repair repair;
      repair.summary = fmt::format(
          "add a second barrier round on a new semaphore '{}' after line {}", name, after);
      repair.loc = stmts[last]->range().begin;
      repair.edits.push_back({firstLine,
                              firstLine - 1,
                              {indentOf(lines.at(firstLine)) + "scratch " + name + ": sem"}});
      repair.edits.push_back({after + 1, after, round});
      if (firstLine <= stmts[first]->range().begin.line)
        out.push_back(std::move(repair));
    }
  }
  return out;
}

/// Repairs of a Python kernel: inserting the missing wait of a DMA started by a line
/// `NAME.start()` (the one construct that maps 1:1 onto a line), after that line.
std::vector<Repair> pythonRepairs(const CauseFacts &c, const Lines &lines) {
  std::vector<Repair> out;
  if (!c.dma || c.dma->file != 0 || c.dma->line == 0 || c.dma->line > lines.lines.size())
    return out;
  static const std::regex start(
      R"(^([ \t]*)([A-Za-z_][A-Za-z_0-9]*(\[[^\]]*\])?)\.start\(\)[ \t]*(#.*)?$)");
  std::smatch m;
  const std::string &line = lines.at(c.dma->line);
  if (!std::regex_match(line, m, start))
    return out;
  const char *method = c.local || (c.send && c.recv) ? "wait()"
                       : c.recv                      ? "wait_recv()"
                                                     : "wait_send()";
  const std::string call = m[2].str() + "." + method;
  out.push_back({fmt::format("insert '{}' after line {}", call, c.dma->line),
                 *c.dma,
                 {LineEdit{c.dma->line + 1, c.dma->line, {m[1].str() + call}}}});
  return out;
}

/// Why no repair applies to a root cause (none generated).
std::string noRepairReason(const CauseFacts &c, const report::RootCause &cause, bool python) {
  if (python && !c.dma)
    return "dkv repairs a Python kernel only by inserting the missing wait of a DMA started "
           "on a line of its own ('NAME.start()'); fix this one by hand (the pattern's usual "
           "fix below)";
  if (python)
    return "the DMA is not started by a line 'NAME.start()' of its own, the one form dkv "
           "repairs in a Python kernel";
  if (cause.kind == report::FindingKind::Deadlock)
    return "no local repair applies to a deadlock: a missing or misdirected signal or DMA "
           "needs the author's intent";
  if (c.explain == "two-writers")
    return "no local repair applies: two DMAs write the same elements (check each DMA's "
           "target device and destination index)";
  if (c.explain == "run-ahead")
    return "no local repair applies: the usual fix is a capacity handshake between rounds";
  return "no local repair applies to this pattern (see its usual fix)";
}

std::set<std::string> keysOf(const std::vector<report::Finding> &findings,
                             const support::SourceManager *sources,
                             const report::LocMap &map = {}) {
  std::set<std::string> keys;
  for (const report::RootCause &c : report::rootCauses(findings, sources, map))
    keys.insert(c.key);
  return keys;
}

} // namespace

std::vector<report::Suppression> suppressionsOf(const Loaded &loaded) {
  std::vector<report::Suppression> out;
  if (!loaded.module)
    return out;
  support::DiagnosticEngine reported(&loaded.sources);
  for (const frontend::Annotations::Suppression &s :
       frontend::annotationsOf(*loaded.module, reported).suppressions)
    for (report::FindingKind kind :
         {report::FindingKind::Race, report::FindingKind::Deadlock,
          report::FindingKind::ExitViolation, report::FindingKind::LifetimeViolation})
      if (s.kind == report::findingKindName(kind))
        out.push_back({kind, s.reason, s.line, s.range.begin});
  return out;
}

FixOutcome searchFix(const report::FileCause &cause,
                     const std::vector<report::InstanceReport> &reports,
                     const std::vector<FixInstance> &instances, const CheckOptions &check,
                     support::StopToken *stop) {
  FixOutcome outcome;
  if (support::stopRequested(stop)) {
    outcome.noFix = fmt::format("not searched: the fix search stopped ({})", stop->reason());
    return outcome;
  }
  const FixInstance &first = instances[cause.first];
  const report::Verdict &verdict = *first.verdict;
  const support::SourceFile &file = first.loaded->sources.file(0);
  const Lines lines(file.text());
  const bool python = isPythonFile(first.options.file);
  const CauseFacts facts = factsOf(verdict.findings, cause.cause);
  std::vector<Repair> repairs =
      python ? pythonRepairs(facts, lines)
             : (first.loaded->module
                    ? dkRepairs(facts, *first.loaded->module, lines, std::string(file.text()))
                    : std::vector<Repair>{});
  if (repairs.empty()) {
    outcome.noFix = noRepairReason(facts, cause.cause, python);
    return outcome;
  }
  // The same edits reached twice (an access and the DMA in one statement) once.
  for (size_t i = 0; i < repairs.size(); ++i)
    for (size_t j = repairs.size(); j-- > i + 1;) {
      bool same = repairs[i].edits.size() == repairs[j].edits.size();
      for (size_t k = 0; same && k < repairs[i].edits.size(); ++k)
        same = repairs[i].edits[k].firstLine == repairs[j].edits[k].firstLine &&
               repairs[i].edits[k].lastLine == repairs[j].edits[k].lastLine &&
               repairs[i].edits[k].lines == repairs[j].edits[k].lines;
      if (same)
        repairs.erase(repairs.begin() + static_cast<std::ptrdiff_t>(j));
    }
  if (repairs.size() > kMaxRepairs)
    repairs.resize(kMaxRepairs);

  // Where to check: the instances that have the cause first, then the other instances
  // that loaded; the same engine and options, without the executor's replay.
  // (An instance whose own check was incomplete or failed says nothing about a repair:
  // it is left out, and the fix names the instances it was verified at.)
  auto complete = [&](size_t n) {
    const report::Verdict *v = instances[n].verdict;
    return v && (v->status == report::Verdict::Status::Verified ||
                 (v->status == report::Verdict::Status::Findings && v->reason.empty()));
  };
  std::vector<size_t> order;
  for (size_t n : cause.instances)
    if (complete(n))
      order.push_back(n);
  if (order.empty()) {
    outcome.noFix = "not searched: the checks that found it are incomplete";
    return outcome;
  }
  for (size_t n = 0; n < instances.size(); ++n)
    if (complete(n) && std::find(order.begin(), order.end(), n) == order.end())
      order.push_back(n);
  CheckOptions options = check;
  options.confirm = false;
  options.stopAtFirst = false;
  const Engine *engine = findEngine(check.engine);
  DKV_INVARIANT(engine, "the command line checks the engine name");

  RunEvents events;
  events.stop = stop;
  std::vector<std::string> failures;
  for (Repair &repair : repairs) {
    if (support::stopRequested(stop))
      break;
    std::sort(repair.edits.begin(), repair.edits.end(),
              [](const LineEdit &a, const LineEdit &b) { return a.firstLine < b.firstLine; });
    const Applied applied = applyEdits(lines, repair.edits);
    const report::LocMap map = [&](SourceLoc &loc) {
      if (loc.line == 0 || loc.line > applied.oldLine.size() || applied.oldLine[loc.line - 1] == 0)
        return false;
      loc.line = applied.oldLine[loc.line - 1];
      return true;
    };
    std::string why;
    bool verifies = true;
    size_t remaining = 0;
    std::vector<size_t> checked;
    for (size_t n : order) {
      const FixInstance &inst = instances[n];
      InstanceOptions o = inst.options;
      o.text = applied.text;
      Loaded loaded;
      std::ostringstream err;
      if (load(o, Stage::Model, loaded, err, stop) != support::kExitOk) {
        if (support::stopRequested(stop))
          break;
        why = "the repaired kernel does not load";
        for (const support::Diagnostic &d : loaded.diagnostics)
          if (d.severity == support::Severity::Error) {
            why += fmt::format(": {} at line {}", d.message, d.range.begin.line);
            break;
          }
        break;
      }
      report::Verdict v = runEngine(*engine, loaded.instance->machine(), options, &events);
      if (support::stopRequested(stop))
        break;
      report::applySuppressions(v, suppressionsOf(loaded));
      const std::string where = report::describeInstances(reports, {n});
      if (v.status == report::Verdict::Status::Inconclusive ||
          v.status == report::Verdict::Status::Error ||
          (v.status == report::Verdict::Status::Findings && !v.reason.empty())) {
        why = "its check is inconclusive at " + where;
        break;
      }
      const std::set<std::string> before = keysOf(inst.verdict->findings, reports[n].sources);
      bool same = false, added = false;
      std::string addedText;
      for (const report::RootCause &c : report::rootCauses(v.findings, &loaded.sources, map)) {
        if (c.key == cause.cause.key)
          same = true;
        else if (!before.count(c.key) && !added) {
          added = true;
          addedText =
              fmt::format("{} at line {}", report::findingKindName(c.kind), c.primary.loc.line);
        }
      }
      if (same) {
        why = "the finding remains at " + where;
        break;
      }
      if (added) {
        why = "it adds a " + addedText + " at " + where;
        break;
      }
      if (v.status != report::Verdict::Status::Verified)
        verifies = false;
      if (n == cause.first)
        remaining = report::activeRootCauses(v, &loaded.sources);
      checked.push_back(n);
    }
    if (support::stopRequested(stop))
      break;
    if (!why.empty()) {
      failures.push_back(repair.summary + ": " + why);
      continue;
    }
    report::Fix fix;
    fix.summary = repair.summary;
    fix.loc = repair.loc;
    fix.file = first.options.file;
    fix.edits = repair.edits;
    fix.diff = unifiedDiff(first.options.file, lines, repair.edits);
    std::sort(checked.begin(), checked.end());
    fix.verifiedAt = report::describeInstances(reports, checked);
    fix.kernelVerifies = verifies;
    fix.remaining = verifies ? 0 : remaining;
    outcome.fix = std::move(fix);
    return outcome;
  }
  if (support::stopRequested(stop)) {
    // What the checks finished says no; the repair being checked and those after it
    // were not decided.
    outcome.noFix = fmt::format("the fix search stopped ({}) after {} of {} repairs",
                                stop->reason(), failures.size(), repairs.size());
    if (!failures.empty())
      outcome.noFix += fmt::format(" ({})", fmt::join(failures, "; "));
    return outcome;
  }
  outcome.noFix = fmt::format("none of the {} repair{} tried verifies ({})", failures.size(),
                              failures.size() == 1 ? "" : "s", fmt::join(failures, "; "));
  return outcome;
}

namespace {

/// Writes `text` to `path` whole or not at all: a temporary file next to it, renamed
/// over it.
bool writeWhole(const std::string &path, const std::string &text, std::ostream &err) {
  namespace fs = std::filesystem;
  const std::string temp = path + ".dkv-fix.tmp";
  {
    std::ofstream out(temp, std::ios::binary);
    out << text;
    out.flush();
    if (!out) {
      err << "dkv: error: cannot write '" << temp << "'\n";
      std::error_code ec;
      fs::remove(temp, ec);
      return false;
    }
  }
  std::error_code ec;
  fs::rename(temp, path, ec);
  if (ec) {
    err << "dkv: error: cannot write '" << path << "': " << ec.message() << "\n";
    fs::remove(temp, ec);
    return false;
  }
  return true;
}

} // namespace

int fixCommand(const std::vector<std::string> &paths, const InstanceOptions &base,
               const CheckOptions &check, const std::string &output, std::ostream &out,
               std::ostream &err) {
  if (paths.size() != 1 || std::filesystem::is_directory(paths[0])) {
    err << "dkv: error: dkv fix takes one kernel file\n";
    return support::kExitUsage;
  }
  CheckOptions options = check;
  options.fix = true;
  options.format = "text";
  options.output.clear();
  options.progress = check.progress;
  // The fixes of every root cause, the instances checked, and the file's text.
  struct Cause {
    std::string heading;
    std::optional<report::Fix> fix;
    std::string noFix;
  };
  std::vector<Cause> causes;
  std::vector<InstanceOptions> instances;
  std::string text;
  bool loadedAll = true;
  FileHook hook = [&](const std::string &, const std::vector<report::InstanceReport> &reports,
                      const std::vector<report::FileCause> &fileCauses,
                      const std::vector<FixInstance> &fixInstances) {
    for (const FixInstance &i : fixInstances) {
      instances.push_back(i.options);
      loadedAll = loadedAll && i.loaded;
      if (i.loaded && text.empty())
        text = std::string(i.loaded->sources.file(0).text());
    }
    for (const report::FileCause &c : fileCauses) {
      const report::Finding &main = reports[c.first].verdict->findings[c.mainFinding.front()];
      if (!main.suppressed.empty())
        continue;
      std::ostringstream heading;
      support::renderHeading(heading, reports[c.first].sources, c.cause.primary.loc,
                             report::findingKindName(c.cause.kind), c.cause.message);
      causes.push_back({heading.str(), main.fix, main.noFix});
    }
  };
  std::ostringstream report;
  const int code = checkPathsCommand(paths, base, options, report, err, hook);
  if (code == support::kExitOk) {
    out << paths[0] << ": nothing to fix: the kernel verifies\n";
    return code;
  }
  if (code != support::kExitFindings || !loadedAll) {
    out << report.str();
    err << "dkv: error: dkv fix repairs findings; this check ended with exit code " << code << "\n";
    return code;
  }
  // Every root cause needs its verified fix; then all of them together must verify.
  std::vector<LineEdit> edits;
  std::vector<std::string> summaries;
  bool missing = false;
  for (const Cause &c : causes) {
    if (!c.fix) {
      out << c.heading << "\n  no verified fix: " << c.noFix << "\n";
      missing = true;
      continue;
    }
    summaries.push_back(c.fix->summary);
    edits.insert(edits.end(), c.fix->edits.begin(), c.fix->edits.end());
  }
  if (missing) {
    out << paths[0] << ": not written: a root cause has no verified fix\n";
    return support::kExitFindings;
  }
  std::stable_sort(edits.begin(), edits.end(),
                   [](const LineEdit &a, const LineEdit &b) { return a.firstLine < b.firstLine; });
  // Two insertions at one place: one after the other.
  for (size_t i = 1; i < edits.size();) {
    LineEdit &a = edits[i - 1];
    const LineEdit &b = edits[i];
    if (a.firstLine == b.firstLine && a.lastLine + 1 == a.firstLine &&
        b.lastLine + 1 == b.firstLine) {
      a.lines.insert(a.lines.end(), b.lines.begin(), b.lines.end());
      edits.erase(edits.begin() + static_cast<std::ptrdiff_t>(i));
    } else {
      ++i;
    }
  }
  for (size_t i = 1; i < edits.size(); ++i)
    if (edits[i].firstLine <= edits[i - 1].lastLine ||
        (edits[i].firstLine == edits[i - 1].firstLine)) {
      out << paths[0]
          << ": not written: two fixes edit the same lines (fix one, then run dkv "
             "fix again)\n";
      return support::kExitFindings;
    }
  const Lines lines(text);
  const Applied applied = applyEdits(lines, edits);
  const Engine *engine = findEngine(options.engine);
  DKV_INVARIANT(engine, "the command line checks the engine name");
  CheckOptions verify = options;
  verify.confirm = false;
  for (InstanceOptions o : instances) {
    o.text = applied.text;
    Loaded loaded;
    std::ostringstream loadErr;
    report::Verdict v;
    if (load(o, Stage::Model, loaded, loadErr) == support::kExitOk) {
      v = runEngine(*engine, loaded.instance->machine(), verify);
      report::applySuppressions(v, suppressionsOf(loaded));
    } else {
      v.status = report::Verdict::Status::Error;
    }
    if (v.status == report::Verdict::Status::Error ||
        v.status == report::Verdict::Status::Inconclusive || report::activeFindings(v) > 0) {
      out << paths[0] << ": not written: the fixes together do not verify at " << commandOf(o)
          << "\n";
      return support::kExitFindings;
    }
  }
  const std::string target = output.empty() ? paths[0] : output;
  if (!writeWhole(target, applied.text, err))
    return support::kExitUsage;
  out << fmt::format("{}: wrote {}: {} (verified: the kernel then verifies at every instance "
                     "checked)\n",
                     paths[0], target, fmt::join(summaries, "; "));
  out << unifiedDiff(paths[0], lines, edits);
  return support::kExitOk;
}

} // namespace dkv::driver
