// The Python parser: input checks, ANTLR lexing, the layout pass (INDENT/DEDENT,
// implicit line joining, soft keywords), parsing, CPython-style errors, and the
// parse-tree -> AST transformer.
#include "pyfront/Parser.h"

#include "PythonLexer.h"
#include "PythonParser.h"
#include "antlr4-runtime.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <fmt/format.h>
#include <optional>
#include <string_view>
#include <unordered_map>

namespace dkv::pyfront {

namespace {

using pygrammar::PythonLexer;
using pygrammar::PythonParser;
using support::DiagnosticEngine;
using support::SourceFile;
using support::SourceLoc;
using support::SourceRange;
using P = PythonParser;

/// The one error of a file; thrown inside this file only, caught by parseModule.
struct SyntaxError {
  SourceRange range;
  std::string id;
  std::string message;
  /// For errors of the layout pass (CPython's tokenizer): whether it replaces a parse
  /// error earlier in the file. CPython tokenizes the rest of the file after a parse
  /// error (other than "unexpected indent"), and the tokenizer errors that raise at
  /// once win: unterminated strings, invalid characters, bracket mismatches, too many
  /// nested brackets. Indentation errors and a stray `\` do not. A bracket still open at
  /// the end (Unclosed) wins if the parse error is on a later line than the bracket.
  enum class Precedence { Later, Overrides, Unclosed } precedence = Precedence::Later;
};

[[noreturn]] void fail(SourceRange range, std::string id, std::string message) {
  throw SyntaxError{range, std::move(id), std::move(message)};
}

//===----------------------------------------------------------------------===//
// Input checks and the lexer's view of the text
//===----------------------------------------------------------------------===//

// CPython reads source as UTF-8; report the first invalid sequence in its words.
void checkEncoding(const SourceFile &file) {
  const std::string &t = file.text();
  size_t nul = t.find('\0');
  if (nul != std::string::npos) {
    SourceLoc at = file.locForOffset(nul);
    fail({at, at}, "python-encoding", "source code cannot contain null bytes");
  }
  size_t i = 0;
  while (i < t.size()) {
    unsigned char c = static_cast<unsigned char>(t[i]);
    size_t len = c < 0x80           ? 1
                 : (c >> 5) == 0x6  ? 2
                 : (c >> 4) == 0xE  ? 3
                 : (c >> 3) == 0x1E ? 4
                                    : 0;
    const char *why = nullptr;
    if (len == 0 || (len == 2 && c < 0xC2) || (len == 4 && c > 0xF4))
      why = "invalid start byte";
    for (size_t k = 1; !why && k < len; ++k) {
      if (i + k >= t.size())
        why = "unexpected end of data";
      else if ((static_cast<unsigned char>(t[i + k]) & 0xC0) != 0x80)
        why = "invalid continuation byte";
    }
    if (why) {
      // CPython's message for a file that is not UTF-8 (no coding declarations are read).
      SourceLoc at = file.locForOffset(i);
      fail({at, at}, "python-encoding",
           fmt::format("Non-UTF-8 code starting with '\\x{:02x}' on line {}, but no encoding "
                       "declared; see https://peps.python.org/pep-0263/ for details",
                       c, at.line));
    }
    i += len;
  }
}

// The lexer reads a copy in which every byte is one character, so ANTLR's character
// indices are byte offsets: a leading UTF-8 BOM becomes \x03 bytes (skipped by the
// lexer), other non-ASCII bytes \x01 and control bytes \x02 (both accepted inside
// strings and comments only; elsewhere ERROR_CHAR, reported with the original bytes).
std::string lexerText(const std::string &text) {
  std::string out = text;
  size_t start = 0;
  if (out.compare(0, 3, "\xEF\xBB\xBF") == 0) {
    out.replace(0, 3, "\x03\x03\x03");
    start = 3;
  }
  for (size_t i = start; i < out.size(); ++i) {
    unsigned char u = static_cast<unsigned char>(out[i]);
    if (u >= 0x80)
      out[i] = '\x01';
    else if (u < 0x20 && u != '\t' && u != '\n' && u != '\r' && u != '\f')
      out[i] = '\x02';
    else if (u == 0x7F)
      out[i] = '\x02';
  }
  return out;
}

SourceRange offsetRange(const SourceFile &file, size_t begin, size_t end) {
  begin = std::min(begin, file.text().size());
  end = std::min(std::max(begin, end), file.text().size());
  return {file.locForOffset(begin), file.locForOffset(end)};
}

SourceRange tokenRange(const SourceFile &file, const antlr4::Token *t) {
  size_t start = t->getStartIndex();
  size_t stop = t->getStopIndex();
  if (t->getType() == antlr4::Token::EOF || stop + 1 <= start)
    return offsetRange(file, start, start);
  return offsetRange(file, start, stop + 1);
}

//===----------------------------------------------------------------------===//
// The layout pass: logical lines, INDENT / DEDENT, brackets, soft keywords
//===----------------------------------------------------------------------===//

class Layout {
public:
  Layout(const SourceFile &file, const std::string &lexed, const ParseLimits &limits)
      : file_(file), lexed_(lexed), limits_(limits) {}

  /// Turns the lexer's tokens into the parser's. Stops at the first layout error: the
  /// tokens before it are returned followed by EOF, and error() holds it.
  std::vector<std::unique_ptr<antlr4::Token>> run(const std::vector<antlr4::Token *> &in) {
    try {
      process(in);
    } catch (const SyntaxError &e) {
      error_ = e;
      if (truncatedAt_ == SIZE_MAX)
        emitEof(file_.text().size());
    }
    return std::move(out_);
  }

  const std::optional<SyntaxError> &error() const { return error_; }

  /// Index (in the returned tokens) of the EOF that replaced the rest of the file after
  /// a layout error; parse errors at or after it are the layout error's consequence.
  size_t truncatedAt() const { return truncatedAt_; }

private:
  const SourceFile &file_;
  const std::string &lexed_;
  const ParseLimits &limits_;
  std::vector<std::unique_ptr<antlr4::Token>> out_;
  std::optional<SyntaxError> error_;
  size_t truncatedAt_ = SIZE_MAX;

  struct Indent {
    unsigned col;    // tabs to multiples of 8
    unsigned altCol; // tabs as one column (CPython's check for inconsistent tabs)
  };

  bool isLiteral(const antlr4::Token *t, std::string_view text) const {
    return t->getType() != PythonLexer::STRING && t->getType() != PythonLexer::NAME &&
           t->getText() == text;
  }

  void emit(size_t type, size_t start, size_t stop, std::string text, const antlr4::Token *like) {
    auto token = std::make_unique<antlr4::CommonToken>(type);
    token->setStartIndex(start);
    token->setStopIndex(stop);
    token->setText(std::move(text));
    if (like) {
      token->setLine(like->getLine());
      token->setCharPositionInLine(like->getCharPositionInLine());
    }
    token->setTokenIndex(out_.size());
    out_.push_back(std::move(token));
  }
  void copy(const antlr4::Token *t, size_t type) {
    emit(type, t->getStartIndex(), t->getStopIndex(), t->getText(), t);
  }
  // Zero-width synthetic token at `offset` (start > stop, like ANTLR's EOF).
  void synth(size_t type, size_t offset, std::string text) {
    emit(type, offset, offset - 1, std::move(text), nullptr);
  }
  void emitEof(size_t offset) {
    truncatedAt_ = out_.size();
    synth(antlr4::Token::EOF, offset, "<EOF>");
  }

  // Indentation of the physical line that `t` starts.
  Indent indentOf(const antlr4::Token *t) const {
    size_t start = t->getStartIndex();
    size_t line = start;
    while (line > 0 && lexed_[line - 1] != '\n' && lexed_[line - 1] != '\r')
      --line;
    Indent in{0, 0};
    for (size_t i = line; i < start; ++i) {
      char c = lexed_[i];
      if (c == ' ') {
        ++in.col;
        ++in.altCol;
      } else if (c == '\t') {
        in.col = (in.col / 8 + 1) * 8;
        ++in.altCol;
      } else if (c == '\f') {
        in = {0, 0};
      }
      // \x03 (a BOM) has no width.
    }
    return in;
  }

  [[noreturn]] void tabError(const antlr4::Token *t) {
    fail(tokenRange(file_, t), "python-indentation",
         "inconsistent use of tabs and spaces in indentation");
  }

  void checkCharacter(const antlr4::Token *t) {
    size_t offset = t->getStartIndex();
    const std::string &text = file_.text();
    unsigned char c = static_cast<unsigned char>(text[offset]);
    SourceRange at = tokenRange(file_, t);
    if (c == '\'' || c == '"') {
      // An unterminated string: the lexer matched no STRING from this quote. A
      // triple-quoted one lexes as an empty string `''` followed by this quote.
      bool triple = !out_.empty() && out_.back()->getType() == PythonLexer::STRING &&
                    out_.back()->getStopIndex() + 1 == offset &&
                    out_.back()->getText().size() >= 2 &&
                    out_.back()->getText().substr(out_.back()->getText().size() - 2) ==
                        std::string(2, static_cast<char>(c));
      if (triple) {
        SourceRange begin = tokenRange(file_, out_.back().get());
        // CPython counts the lines it read: one per newline, plus an unterminated last.
        size_t lastLine = static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
        if (text.empty() || text.back() != '\n')
          ++lastLine;
        throw SyntaxError{
            {begin.begin, begin.begin},
            "python-string",
            fmt::format("unterminated triple-quoted string literal (detected at line {})",
                        lastLine),
            SyntaxError::Precedence::Overrides};
      }
      // Detected at the end of the quote's line (a backslash-newline inside the
      // string continues it).
      size_t end = offset + 1;
      while (end < text.size() && text[end] != '\n' && text[end] != '\r') {
        if (text[end] == '\\' && end + 1 < text.size())
          ++end;
        ++end;
      }
      throw SyntaxError{at, "python-string",
                        fmt::format("unterminated string literal (detected at line {})",
                                    file_.locForOffset(std::min(end, text.size())).line),
                        SyntaxError::Precedence::Overrides};
    }
    if (c == '\\')
      fail(offsetRange(file_, offset + 1, offset + 1), "python-syntax",
           "unexpected character after line continuation character");
    if (c >= 0x80) {
      // Decode the (valid, checked before lexing) UTF-8 character for the message.
      size_t len = (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : 4;
      uint32_t cp = c & (len == 2 ? 0x1F : len == 3 ? 0x0F : 0x07);
      for (size_t k = 1; k < len && offset + k < text.size(); ++k)
        cp = (cp << 6) | (static_cast<unsigned char>(text[offset + k]) & 0x3F);
      throw SyntaxError{
          at, "python-character",
          fmt::format("invalid character '{}' (U+{:04X})", text.substr(offset, len), cp),
          SyntaxError::Precedence::Overrides};
    }
    if (c < 0x20 || c == 0x7F)
      throw SyntaxError{at, "python-character",
                        fmt::format("invalid non-printable character U+{:04X}", c),
                        SyntaxError::Precedence::Overrides};
    // `$`, `?`, `!` and a lone backtick: CPython's tokenizer passes them on and the
    // parser rejects them.
    fail(at, "python-syntax", "invalid syntax");
  }

  // A `match` or `case` at the start of a logical line is a soft keyword if the line
  // ends with ':' (no other statement starting with a name can).
  bool softKeyword(const std::vector<antlr4::Token *> &in, size_t i) const {
    int depth = 0;
    const antlr4::Token *last = nullptr;
    size_t count = 0;
    for (size_t j = i + 1; j < in.size(); ++j) {
      const antlr4::Token *t = in[j];
      if (t->getChannel() != antlr4::Token::DEFAULT_CHANNEL)
        continue;
      if (t->getType() == antlr4::Token::EOF ||
          (t->getType() == PythonLexer::NEWLINE && depth == 0))
        break;
      if (t->getType() == PythonLexer::NEWLINE || t->getType() == PythonLexer::ERROR_CHAR)
        continue;
      if (isLiteral(t, "(") || isLiteral(t, "[") || isLiteral(t, "{"))
        ++depth;
      else if (isLiteral(t, ")") || isLiteral(t, "]") || isLiteral(t, "}"))
        --depth;
      if (count == 0 && (isLiteral(t, ":") || isLiteral(t, "=") || isLiteral(t, ".")))
        return false;
      last = t;
      ++count;
    }
    return last && count >= 2 && depth == 0 && isLiteral(last, ":");
  }

  // `type` at the start of a logical line followed by a name and `=` or `[` begins a
  // type alias statement (Python 3.12); elsewhere it is a name.
  bool typeAlias(const std::vector<antlr4::Token *> &in, size_t i) const {
    const antlr4::Token *next[2] = {nullptr, nullptr};
    size_t found = 0;
    for (size_t j = i + 1; j < in.size() && found < 2; ++j)
      if (in[j]->getChannel() == antlr4::Token::DEFAULT_CHANNEL)
        next[found++] = in[j];
    return found == 2 && next[0]->getType() == PythonLexer::NAME &&
           (isLiteral(next[1], "=") || isLiteral(next[1], "["));
  }

  static bool isOperand(const antlr4::Token *t) {
    size_t type = t->getType();
    if (type == PythonLexer::NAME || type == PythonLexer::NUMBER || type == PythonLexer::STRING)
      return true;
    std::string s = t->getText();
    return s == ")" || s == "]" || s == "}" || s == "None" || s == "True" || s == "False" ||
           s == "...";
  }

  void process(const std::vector<antlr4::Token *> &in) {
    std::vector<Indent> indents{{0, 0}};
    std::vector<const antlr4::Token *> open;
    // Per bracket level: operators of this logical line that the grammar nests by
    // recursion (see ParseLimits::maxNesting).
    std::vector<unsigned> nested{0};
    unsigned nestedSum = 0;
    bool lineStart = true;
    bool lineHasTokens = false;
    const antlr4::Token *prev = nullptr;
    for (size_t i = 0; i < in.size(); ++i) {
      const antlr4::Token *t = in[i];
      if (t->getChannel() != antlr4::Token::DEFAULT_CHANNEL)
        continue;
      size_t type = t->getType();
      if (type == antlr4::Token::EOF)
        break;
      if (type == PythonLexer::NEWLINE) {
        if (open.empty() && lineHasTokens) {
          copy(t, PythonLexer::NEWLINE);
          lineHasTokens = false;
          lineStart = true;
          nestedSum = 0;
          nested.assign(1, 0);
          prev = nullptr;
        }
        continue;
      }
      if (type == PythonLexer::ERROR_CHAR)
        checkCharacter(t);
      if (lineStart && open.empty()) {
        Indent cur = indentOf(t);
        const Indent &top = indents.back();
        if (cur.col > top.col) {
          if (cur.altCol <= top.altCol)
            tabError(t);
          if (indents.size() > limits_.maxIndent)
            fail(tokenRange(file_, t), "python-too-deep", "too many levels of indentation");
          indents.push_back(cur);
          synth(PythonParser::INDENT, t->getStartIndex(), "<INDENT>");
        } else {
          while (cur.col < indents.back().col) {
            indents.pop_back();
            synth(PythonParser::DEDENT, t->getStartIndex(), "<DEDENT>");
          }
          if (cur.col != indents.back().col)
            fail(tokenRange(file_, t), "python-indentation",
                 "unindent does not match any outer indentation level");
          if (cur.altCol != indents.back().altCol)
            tabError(t);
        }
        lineStart = false;
        if (type == PythonLexer::NAME && t->getText() == "type" && typeAlias(in, i)) {
          copy(t, PythonParser::TYPE);
          lineHasTokens = true;
          prev = t;
          continue;
        }
        if (type == PythonLexer::NAME && (t->getText() == "match" || t->getText() == "case") &&
            softKeyword(in, i)) {
          copy(t, t->getText() == "match" ? PythonParser::MATCH : PythonParser::CASE);
          lineHasTokens = true;
          prev = t;
          continue;
        }
      }
      std::string text = t->getText();
      bool isString = type == PythonLexer::STRING;
      if (!isString && (text == "(" || text == "[" || text == "{")) {
        open.push_back(t);
        nested.push_back(0);
        if (open.size() > limits_.maxNesting)
          throw SyntaxError{tokenRange(file_, t), "python-too-deep", "too many nested parentheses",
                            SyntaxError::Precedence::Overrides};
      } else if (!isString && (text == ")" || text == "]" || text == "}")) {
        if (open.empty())
          throw SyntaxError{tokenRange(file_, t), "python-syntax",
                            fmt::format("unmatched '{}'", text),
                            SyntaxError::Precedence::Overrides};
        std::string want = open.back()->getText() == "("   ? ")"
                           : open.back()->getText() == "[" ? "]"
                                                           : "}";
        if (text != want) {
          const antlr4::Token *o = open.back();
          uint32_t openLine = tokenRange(file_, o).begin.line;
          std::string where = openLine != tokenRange(file_, t).begin.line
                                  ? fmt::format(" on line {}", openLine)
                                  : "";
          throw SyntaxError{tokenRange(file_, t), "python-syntax",
                            fmt::format("closing parenthesis '{}' does not match opening "
                                        "parenthesis '{}'{}",
                                        text, o->getText(), where),
                            SyntaxError::Precedence::Overrides};
        }
        open.pop_back();
        nestedSum -= nested.back();
        nested.pop_back();
      } else if (!isString && text == ",") {
        nestedSum -= nested.back();
        nested.back() = 0;
      } else if (!isString &&
                 (text == "not" || text == "lambda" || text == "**" || text == "else" ||
                  type == PythonLexer::AWAIT ||
                  ((text == "-" || text == "+" || text == "~") && !(prev && isOperand(prev))))) {
        ++nested.back();
        ++nestedSum;
      }
      if (open.size() + nestedSum > limits_.maxNesting)
        fail(tokenRange(file_, t), "python-too-deep",
             fmt::format("expression too deeply nested (more than {} levels of brackets and "
                         "operators)",
                         limits_.maxNesting));
      copy(t, type);
      lineHasTokens = true;
      prev = t;
    }
    size_t end = file_.text().size();
    if (!open.empty()) {
      // The parser decides first: an error before the end of the file is reported
      // as such; failing at the end, CPython names the bracket.
      const antlr4::Token *o = open.back();
      emitEof(end);
      throw SyntaxError{tokenRange(file_, o), "python-syntax",
                        fmt::format("'{}' was never closed", o->getText()),
                        SyntaxError::Precedence::Unclosed};
    }
    if (lineHasTokens)
      synth(PythonLexer::NEWLINE, end, "<NEWLINE>");
    for (size_t k = 1; k < indents.size(); ++k)
      synth(PythonParser::DEDENT, end, "<DEDENT>");
    synth(antlr4::Token::EOF, end, "<EOF>");
  }
};

//===----------------------------------------------------------------------===//
// Parse errors in CPython's words
//===----------------------------------------------------------------------===//

/// What the parser saw at its first error.
struct ParseFailure {
  const antlr4::Token *offending = nullptr;
  antlr4::misc::IntervalSet expected;
};

// Records the first error and stops the parse: dkv reports one error per file, as
// CPython does, and ANTLR's recovery would only invent follow-up errors.
class FirstErrorStrategy final : public antlr4::DefaultErrorStrategy {
public:
  explicit FirstErrorStrategy(ParseFailure &failure) : failure_(failure) {}

  void reportError(antlr4::Parser *parser, const antlr4::RecognitionException &e) override {
    record(e.getOffendingToken() ? e.getOffendingToken() : parser->getCurrentToken(),
           parser->getExpectedTokens());
  }
  void recover(antlr4::Parser *parser, std::exception_ptr) override {
    record(parser->getCurrentToken(), parser->getExpectedTokens());
  }
  antlr4::Token *recoverInline(antlr4::Parser *parser) override {
    record(parser->getCurrentToken(), parser->getExpectedTokens());
    return nullptr;
  }
  void sync(antlr4::Parser *) override {}

private:
  ParseFailure &failure_;

  [[noreturn]] void record(const antlr4::Token *offending, antlr4::misc::IntervalSet expected) {
    if (!failure_.offending) {
      failure_.offending = offending;
      failure_.expected = std::move(expected);
    }
    throw antlr4::ParseCancellationException();
  }
};

// "function definition", "'if' statement", ...: what the block after the ':' that
// ends the header before token index `at` belongs to, and the header's line.
std::pair<std::string, uint32_t> headerBefore(const SourceFile &file,
                                              const std::vector<antlr4::Token *> &toks, size_t at) {
  // The header is the logical line before the NEWLINE that precedes `at`.
  size_t i = at;
  while (i > 0 && toks[i - 1]->getType() != PythonLexer::NEWLINE)
    --i;
  if (i == 0)
    return {"statement", 0};
  size_t newline = i - 1;
  size_t start = newline;
  while (start > 0 && toks[start - 1]->getType() != PythonLexer::NEWLINE &&
         toks[start - 1]->getType() != PythonParser::INDENT &&
         toks[start - 1]->getType() != PythonParser::DEDENT)
    --start;
  // Skip a one-line compound statement's earlier parts: the last keyword that opens a
  // block on this line wins (`else:` after `if x: pass` is on its own line anyway).
  const antlr4::Token *head = toks[start];
  if (head->getText() == "async" && start + 1 < newline)
    head = toks[start + 1];
  uint32_t line = tokenRange(file, head).begin.line;
  std::string kw = head->getText();
  if (kw == "def")
    return {"function definition", line};
  if (kw == "class")
    return {"class definition", line};
  static const char *const keywords[] = {"if",  "elif",   "else",    "for",   "while", "with",
                                         "try", "except", "finally", "match", "case"};
  for (const char *k : keywords)
    if (kw == k)
      return {fmt::format("'{}' statement", k), line};
  return {"statement", line};
}

SyntaxError describeFailure(const SourceFile &file, const ParseFailure &f,
                            const std::vector<antlr4::Token *> &toks,
                            const antlr4::dfa::Vocabulary &vocab) {
  const antlr4::Token *t = f.offending;
  SourceRange at = tokenRange(file, t);
  size_t type = t->getType();
  // Synthetic tokens at the end of a file that ends with a newline: CPython points at
  // the end of the last line.
  const std::string &text = file.text();
  if (t->getStartIndex() >= text.size() && !text.empty() && text.back() == '\n') {
    size_t end = text.size() - 1;
    if (end > 0 && text[end - 1] == '\r')
      --end;
    at = offsetRange(file, end, end);
  }
  if (type == PythonParser::INDENT)
    return {at, "python-indentation", "unexpected indent"};
  if (f.expected.contains(static_cast<size_t>(PythonParser::INDENT))) {
    auto [what, line] = headerBefore(file, toks, t->getTokenIndex());
    // CPython points at the first token of the line that should be indented.
    return {{at.begin, at.begin},
            "python-indentation",
            fmt::format("expected an indented block after {} on line {}", what, line)};
  }
  if (type == PythonLexer::NEWLINE || type == antlr4::Token::EOF) {
    for (size_t k = 0; k <= vocab.getMaxTokenType(); ++k)
      if (vocab.getLiteralName(k) == "':'" && f.expected.contains(static_cast<size_t>(k)))
        return {{at.begin, at.begin}, "python-syntax", "expected ':'"};
  }
  if (type == PythonParser::DEDENT || type == antlr4::Token::EOF)
    return {{at.begin, at.begin}, "python-syntax", "invalid syntax"};
  return {at, "python-syntax", "invalid syntax"};
}

//===----------------------------------------------------------------------===//
// The transformer: parse tree -> AST
//===----------------------------------------------------------------------===//

// Follows a parse tree without errors; recursion follows the tree, whose depth the
// layout pass bounds. Operator and trailer chains fold in loops; every expression's
// height is tracked (heights_) so that the AST's depth stays below
// ParseLimits::maxExprDepth. The checks CPython's parser makes beyond its grammar
// (assignment targets, parameter and argument order) are made here, in its words.
class Transformer {
public:
  Transformer(const SourceFile &file, const ParseLimits &limits) : file_(file), limits_(limits) {}

  std::unique_ptr<py::Module> module(P::File_inputContext *ctx) {
    auto m = std::make_unique<py::Module>();
    m->range = offsetRange(file_, 0, file_.text().size());
    for (auto *s : ctx->stmt())
      stmt(s, m->body);
    return m;
  }

private:
  const SourceFile &file_;
  const ParseLimits &limits_;
  std::unordered_map<const py::Expr *, unsigned> heights_;

  SourceRange range(antlr4::ParserRuleContext *ctx) const {
    SourceRange b = tokenRange(file_, ctx->getStart());
    const antlr4::Token *stop = ctx->getStop();
    if (!stop || stop->getTokenIndex() < ctx->getStart()->getTokenIndex())
      return {b.begin, b.begin};
    return {b.begin, tokenRange(file_, stop).end};
  }
  SourceRange range(antlr4::tree::TerminalNode *n) const {
    return tokenRange(file_, n->getSymbol());
  }
  static SourceRange join(SourceRange a, SourceRange b) { return {a.begin, b.end}; }

  static bool isTerminal(antlr4::tree::ParseTree *p, std::string_view text) {
    auto *t = dynamic_cast<antlr4::tree::TerminalNode *>(p);
    return t && t->getSymbol()->getType() != PythonLexer::STRING && t->getText() == text;
  }

  // --- heights -------------------------------------------------------------

  unsigned height(const py::Expr *e) const {
    if (!e)
      return 0;
    auto it = heights_.find(e);
    return it == heights_.end() ? 1 : it->second;
  }
  template <typename T> std::unique_ptr<T> done(std::unique_ptr<T> e, unsigned childHeight) {
    unsigned h = childHeight + 1;
    if (h > limits_.maxExprDepth)
      fail(e->range, "python-too-deep",
           fmt::format("expression too deeply nested (more than {} levels)", limits_.maxExprDepth));
    heights_[e.get()] = h;
    return e;
  }
  unsigned maxHeight(const std::vector<py::ExprPtr> &v) const {
    unsigned h = 0;
    for (const auto &e : v)
      h = std::max(h, height(e.get()));
    return h;
  }

  // --- statements ----------------------------------------------------------

  void stmt(P::StmtContext *ctx, py::Body &out) {
    if (auto *s = ctx->simple_stmts())
      simpleStmts(s, out);
    else
      out.push_back(compound(ctx->compound_stmt()));
  }

  void simpleStmts(P::Simple_stmtsContext *ctx, py::Body &out) {
    for (auto *s : ctx->simple_stmt())
      out.push_back(simple(s));
  }

  py::Body block(P::BlockContext *ctx) {
    py::Body body;
    if (auto *s = ctx->simple_stmts())
      simpleStmts(s, body);
    else
      for (auto *s : ctx->stmt())
        stmt(s, body);
    return body;
  }

  py::StmtPtr simple(P::Simple_stmtContext *ctx) {
    SourceRange r = range(ctx);
    if (dynamic_cast<P::PassStmtContext *>(ctx))
      return std::make_unique<py::Pass>(r);
    if (dynamic_cast<P::BreakStmtContext *>(ctx))
      return std::make_unique<py::Break>(r);
    if (dynamic_cast<P::ContinueStmtContext *>(ctx))
      return std::make_unique<py::Continue>(r);
    if (auto *s = dynamic_cast<P::ReturnStmtContext *>(ctx))
      return std::make_unique<py::Return>(r, s->testlist_star() ? testlistStar(s->testlist_star())
                                                                : nullptr);
    if (auto *s = dynamic_cast<P::RaiseStmtContext *>(ctx)) {
      auto tests = s->test();
      return std::make_unique<py::Raise>(r, tests.size() > 0 ? test(tests[0]) : nullptr,
                                         tests.size() > 1 ? test(tests[1]) : nullptr);
    }
    if (auto *s = dynamic_cast<P::GlobalStmtContext *>(ctx))
      return std::make_unique<py::Global>(r, names(s->NAME()));
    if (auto *s = dynamic_cast<P::NonlocalStmtContext *>(ctx))
      return std::make_unique<py::Nonlocal>(r, names(s->NAME()));
    if (auto *s = dynamic_cast<P::DelStmtContext *>(ctx)) {
      std::vector<py::ExprPtr> targets;
      py::ExprPtr list = exprlist(s->exprlist());
      if (auto *t = py::dynCast<py::Tuple>(list.get()); t && hasComma(s->exprlist()))
        targets = std::move(t->elts);
      else
        targets.push_back(std::move(list));
      for (auto &t : targets)
        checkTarget(*t, "delete");
      return std::make_unique<py::Delete>(r, std::move(targets));
    }
    if (auto *s = dynamic_cast<P::AssertStmtContext *>(ctx)) {
      auto tests = s->test();
      return std::make_unique<py::Assert>(r, test(tests[0]),
                                          tests.size() > 1 ? test(tests[1]) : nullptr);
    }
    if (auto *s = dynamic_cast<P::ImportStmtContext *>(ctx)) {
      auto imp = std::make_unique<py::Import>(r);
      for (auto *d : s->dotted_as_name())
        imp->names.push_back(
            {range(d), d->dotted_name()->getText(), d->NAME() ? d->NAME()->getText() : ""});
      return imp;
    }
    if (auto *s = dynamic_cast<P::FromImportStmtContext *>(ctx)) {
      auto imp = std::make_unique<py::ImportFrom>(r);
      for (auto *child : s->children) {
        if (isTerminal(child, "."))
          imp->level += 1;
        else if (isTerminal(child, "..."))
          imp->level += 3;
      }
      if (s->dotted_name())
        imp->module = s->dotted_name()->getText();
      auto *targets = s->import_targets();
      if (targets->import_as_name().empty())
        imp->names.push_back({range(targets), "*", ""});
      for (auto *a : targets->import_as_name()) {
        auto ns = a->NAME();
        imp->names.push_back({range(a), ns[0]->getText(), ns.size() > 1 ? ns[1]->getText() : ""});
      }
      return imp;
    }
    if (auto *s = dynamic_cast<P::AnnAssignStmtContext *>(ctx)) {
      py::ExprPtr target = testlistStar(s->testlist_star());
      if (!py::isa<py::Name>(*target) && !py::isa<py::Attribute>(*target) &&
          !py::isa<py::Subscript>(*target)) {
        if (py::isa<py::Tuple>(*target))
          fail(target->range, "python-syntax", "only single target (not tuple) can be annotated");
        if (py::isa<py::List>(*target))
          fail(target->range, "python-syntax", "only single target (not list) can be annotated");
        fail(target->range, "python-syntax", "illegal target for annotation");
      }
      auto *a = s->annassign();
      py::ExprPtr value;
      if (a->yield_expr())
        value = yieldExpr(a->yield_expr());
      else if (a->testlist_star())
        value = testlistStar(a->testlist_star());
      return std::make_unique<py::AnnAssign>(r, std::move(target), test(a->test()),
                                             std::move(value));
    }
    if (auto *s = dynamic_cast<P::AugAssignStmtContext *>(ctx)) {
      auto lists = s->testlist_star();
      py::ExprPtr target = testlistStar(lists[0]);
      if (!py::isa<py::Name>(*target) && !py::isa<py::Attribute>(*target) &&
          !py::isa<py::Subscript>(*target))
        fail(target->range, "python-syntax",
             fmt::format("'{}' is an illegal expression for augmented assignment",
                         describe(*target)));
      py::ExprPtr value = s->yield_expr() ? yieldExpr(s->yield_expr()) : testlistStar(lists[1]);
      std::string op = s->augassign()->getText();
      op.pop_back();
      return std::make_unique<py::AugAssign>(r, std::move(target), binOpKind(op), std::move(value));
    }
    if (auto *s = dynamic_cast<P::TypeAliasStmtContext *>(ctx)) {
      auto t = std::make_unique<py::TypeAlias>(r, s->NAME()->getText(), nullptr);
      if (s->type_params())
        t->typeParams = typeParams(s->type_params());
      t->value = test(s->test());
      return t;
    }
    // ExprOrAssign and Yield statements: `a = b = value` or a bare expression.
    std::vector<py::ExprPtr> parts;
    for (auto *child : ctx->children) {
      if (auto *l = dynamic_cast<P::Testlist_starContext *>(child))
        parts.push_back(testlistStar(l));
      else if (auto *y = dynamic_cast<P::Yield_exprContext *>(child))
        parts.push_back(yieldExpr(y));
    }
    if (parts.size() == 1)
      return std::make_unique<py::ExprStmt>(r, std::move(parts[0]));
    py::ExprPtr value = std::move(parts.back());
    parts.pop_back();
    for (size_t i = 0; i < parts.size(); ++i)
      checkTarget(*parts[i], "assign to",
                  i + 1 < parts.size() ? Hint::None
                  : parts.size() == 1  ? Hint::Whole
                                       : Hint::TupleTail);
    return std::make_unique<py::Assign>(r, std::move(parts), std::move(value));
  }

  static bool hasComma(antlr4::ParserRuleContext *ctx) {
    for (auto *child : ctx->children)
      if (isTerminal(child, ","))
        return true;
    return false;
  }

  std::vector<std::string> names(const std::vector<antlr4::tree::TerminalNode *> &ns) {
    std::vector<std::string> out;
    for (auto *n : ns)
      out.push_back(n->getText());
    return out;
  }

  // What CPython calls an expression in "cannot assign to ..." messages.
  static std::string describe(const py::Expr &e) {
    switch (e.kind) {
    case py::ExprKind::Call:
      return "function call";
    case py::ExprKind::Constant: {
      auto k = py::cast<py::Constant>(e).constKind;
      if (k == py::ConstKind::True)
        return "True";
      if (k == py::ConstKind::False)
        return "False";
      if (k == py::ConstKind::None)
        return "None";
      if (k == py::ConstKind::Ellipsis)
        return "ellipsis";
      return "literal";
    }
    case py::ExprKind::Lambda:
      return "lambda";
    case py::ExprKind::IfExp:
      return "conditional expression";
    case py::ExprKind::Compare:
      return "comparison";
    case py::ExprKind::Tuple:
      return "tuple";
    case py::ExprKind::List:
      return "list";
    case py::ExprKind::Set:
      return "set display";
    case py::ExprKind::Dict:
      return "dict literal";
    case py::ExprKind::ListComp:
      return "list comprehension";
    case py::ExprKind::SetComp:
      return "set comprehension";
    case py::ExprKind::DictComp:
      return "dict comprehension";
    case py::ExprKind::GeneratorExp:
      return "generator expression";
    case py::ExprKind::NamedExpr:
      return "named expression";
    case py::ExprKind::Await:
      return "await expression";
    case py::ExprKind::Yield:
    case py::ExprKind::YieldFrom:
      return "yield expression";
    case py::ExprKind::Starred:
      return "starred";
    case py::ExprKind::Name:
      return "name";
    case py::ExprKind::Attribute:
      return "attribute";
    case py::ExprKind::Subscript:
      return "subscript";
    default:
      return "expression";
    }
  }

  // Assignment, for and del targets: names, attributes, subscripts, tuples and lists
  // of targets, starred targets (not for del).
  // Where CPython adds "here. Maybe you meant '==' instead of '='?": when the bad
  // target starts an expression that is followed by `= value` and nothing more, i.e.
  // the only target of an `=` statement (Whole), or the last element of an unbracketed
  // tuple that is the last target (TupleTail, and Whole for that element).
  enum class Hint { None, Whole, TupleTail };

  bool parenthesised(const py::Expr &e) const {
    std::string_view text = file_.lineText(e.range.begin.line);
    size_t col = e.range.begin.col;
    return col >= 1 && col <= text.size() && (text[col - 1] == '(' || text[col - 1] == '[');
  }

  void checkTarget(const py::Expr &e, std::string_view verb, Hint hint = Hint::None) {
    switch (e.kind) {
    case py::ExprKind::Name:
    case py::ExprKind::Attribute:
    case py::ExprKind::Subscript:
      return;
    case py::ExprKind::Tuple:
    case py::ExprKind::List: {
      const auto &elts =
          e.kind == py::ExprKind::Tuple ? py::cast<py::Tuple>(e).elts : py::cast<py::List>(e).elts;
      bool tail = hint != Hint::None && !parenthesised(e);
      for (size_t i = 0; i < elts.size(); ++i)
        checkTarget(*elts[i], verb, tail && i + 1 == elts.size() ? Hint::Whole : Hint::None);
      return;
    }
    case py::ExprKind::Starred:
      if (verb != "delete") {
        checkTarget(*py::cast<py::Starred>(e).value, verb);
        return;
      }
      break;
    default:
      break;
    }
    bool operand = false;
    switch (e.kind) {
    case py::ExprKind::Call:
    case py::ExprKind::BinOp:
    case py::ExprKind::Dict:
    case py::ExprKind::Set:
    case py::ExprKind::ListComp:
    case py::ExprKind::SetComp:
    case py::ExprKind::DictComp:
    case py::ExprKind::Await:
      operand = true;
      break;
    case py::ExprKind::UnaryOp:
      operand = py::cast<py::UnaryOp>(e).op != py::UnaryOpKind::Not;
      break;
    case py::ExprKind::Constant: {
      auto k = py::cast<py::Constant>(e).constKind;
      operand = k != py::ConstKind::True && k != py::ConstKind::False && k != py::ConstKind::None;
      break;
    }
    default:
      break;
    }
    std::string what = e.kind == py::ExprKind::BinOp || e.kind == py::ExprKind::UnaryOp ||
                               e.kind == py::ExprKind::BoolOp
                           ? std::string("expression")
                           : describe(e);
    if (hint == Hint::Whole && operand)
      fail(e.range, "python-syntax",
           fmt::format("cannot {} {} here. Maybe you meant '==' instead of '='?", verb, what));
    fail(e.range, "python-syntax", fmt::format("cannot {} {}", verb, what));
  }

  py::StmtPtr compound(P::Compound_stmtContext *ctx) {
    if (auto *s = ctx->if_stmt())
      return ifStmt(s);
    if (auto *s = ctx->while_stmt()) {
      auto w = std::make_unique<py::While>(range(s), namedexprTest(s->namedexpr_test()));
      w->body = block(s->block());
      if (s->else_clause())
        w->orelse = block(s->else_clause()->block());
      return w;
    }
    if (auto *s = ctx->for_stmt())
      return forStmt(s);
    if (auto *s = ctx->try_stmt())
      return tryStmt(s);
    if (auto *s = ctx->with_stmt()) {
      auto w = std::make_unique<py::With>(range(s));
      w->isAsync = s->ASYNC() != nullptr;
      for (auto *item : s->with_item()) {
        py::ExprPtr vars;
        if (item->expr()) {
          vars = expr(item->expr());
          checkTarget(*vars, "assign to");
        }
        w->items.push_back({test(item->test()), std::move(vars)});
      }
      w->body = block(s->block());
      return w;
    }
    if (auto *s = ctx->funcdef())
      return funcdef(s, range(s));
    if (auto *s = ctx->classdef())
      return classdef(s, range(s));
    if (auto *s = ctx->decorated()) {
      std::vector<py::ExprPtr> decorators;
      for (auto *d : s->decorator())
        decorators.push_back(namedexprTest(d->namedexpr_test()));
      // As in CPython, the definition starts at `def` / `class`, not at a decorator.
      if (s->funcdef()) {
        auto f = funcdef(s->funcdef(), range(s->funcdef()));
        f->decorators = std::move(decorators);
        return f;
      }
      auto c = classdef(s->classdef(), range(s->classdef()));
      c->decorators = std::move(decorators);
      return c;
    }
    return matchStmt(ctx->match_stmt());
  }

  py::StmtPtr ifStmt(P::If_stmtContext *s) {
    auto top = std::make_unique<py::If>(range(s), namedexprTest(s->namedexpr_test()));
    top->body = block(s->block());
    py::If *last = top.get();
    for (auto *e : s->elif_clause()) {
      auto elif =
          std::make_unique<py::If>(join(range(e), range(s)), namedexprTest(e->namedexpr_test()));
      elif->body = block(e->block());
      py::If *next = elif.get();
      last->orelse.push_back(std::move(elif));
      last = next;
    }
    if (s->else_clause())
      last->orelse = block(s->else_clause()->block());
    return top;
  }

  py::StmtPtr forStmt(P::For_stmtContext *s) {
    py::ExprPtr target = exprlist(s->exprlist());
    checkTarget(*target, "assign to");
    auto f =
        std::make_unique<py::For>(range(s), std::move(target), testlistStar(s->testlist_star()));
    f->isAsync = s->ASYNC() != nullptr;
    f->body = block(s->block());
    if (s->else_clause())
      f->orelse = block(s->else_clause()->block());
    return f;
  }

  py::StmtPtr tryStmt(P::Try_stmtContext *s) {
    auto t = std::make_unique<py::Try>(range(s));
    t->body = block(s->block());
    bool sawStar = false, sawPlain = false;
    for (auto *e : s->except_clause()) {
      py::ExceptHandler h;
      h.range = range(e);
      bool star = false;
      for (auto *child : e->children)
        star = star || isTerminal(child, "*");
      (star ? sawStar : sawPlain) = true;
      if (sawStar && sawPlain)
        fail(range(e), "python-syntax",
             "cannot have both 'except' and 'except*' on the same 'try'");
      if (e->test())
        h.type = test(e->test());
      else if (star)
        fail(range(e), "python-syntax", "expected one or more exception types");
      if (e->NAME())
        h.name = e->NAME()->getText();
      h.body = block(e->block());
      t->handlers.push_back(std::move(h));
    }
    t->isStar = sawStar;
    if (s->else_clause())
      t->orelse = block(s->else_clause()->block());
    if (s->finally_clause())
      t->finalbody = block(s->finally_clause()->block());
    return t;
  }

  std::unique_ptr<py::FunctionDef> funcdef(P::FuncdefContext *s, SourceRange r) {
    auto f = std::make_unique<py::FunctionDef>(r, s->NAME()->getText(), range(s->NAME()));
    f->isAsync = s->ASYNC() != nullptr;
    if (s->type_params())
      f->typeParams = typeParams(s->type_params());
    if (s->parameters())
      f->params = parameters(s->parameters()->param_item(), range(s->parameters()));
    if (s->test())
      f->returns = test(s->test());
    f->body = block(s->block());
    return f;
  }

  std::unique_ptr<py::ClassDef> classdef(P::ClassdefContext *s, SourceRange r) {
    auto c = std::make_unique<py::ClassDef>(r, s->NAME()->getText(), range(s->NAME()));
    if (s->type_params())
      c->typeParams = typeParams(s->type_params());
    if (s->arglist())
      arglist(s->arglist(), c->bases, c->keywords);
    c->body = block(s->block());
    return c;
  }

  std::vector<py::TypeParam> typeParams(P::Type_paramsContext *ctx) {
    std::vector<py::TypeParam> out;
    for (auto *p : ctx->type_param()) {
      py::TypeParam tp;
      tp.range = range(p);
      if (auto *v = dynamic_cast<P::TypeVarParamContext *>(p)) {
        tp.name = v->NAME()->getText();
        // `T: bound = default`: the tests in order after ':' and '='.
        bool afterEq = false;
        for (auto *child : v->children) {
          if (isTerminal(child, "="))
            afterEq = true;
          else if (auto *t = dynamic_cast<P::TestContext *>(child))
            (afterEq ? tp.default_ : tp.bound) = test(t);
        }
      } else if (auto *v = dynamic_cast<P::TypeVarTupleParamContext *>(p)) {
        tp.kind = py::TypeParamKind::TypeVarTuple;
        tp.name = v->NAME()->getText();
        if (v->test())
          tp.default_ = test(v->test());
      } else {
        auto *q = static_cast<P::ParamSpecParamContext *>(p);
        tp.kind = py::TypeParamKind::ParamSpec;
        tp.name = q->NAME()->getText();
        if (q->test())
          tp.default_ = test(q->test());
      }
      out.push_back(std::move(tp));
    }
    return out;
  }

  // Parameter lists of def and lambda, checked as CPython checks them.
  template <typename Item>
  std::vector<py::Param> parameters(const std::vector<Item *> &items, SourceRange listRange) {
    std::vector<py::Param> params;
    bool afterStar = false, sawDefault = false, sawSlash = false, sawKwargs = false;
    bool bareStar = false;
    for (auto *item : items) {
      SourceRange r = range(item);
      if (sawKwargs)
        fail(r, "python-syntax", "arguments cannot follow var-keyword argument");
      py::Param p;
      p.range = r;
      std::string text = item->getStart()->getText();
      if (text == "/" && item->children.size() == 1) {
        if (sawSlash)
          fail(r, "python-syntax", "/ may appear only once");
        if (afterStar)
          fail(r, "python-syntax", "/ must be ahead of *");
        if (params.empty())
          fail(r, "python-syntax", "at least one argument must precede /");
        sawSlash = true;
        for (auto &q : params)
          q.kind = py::ParamKind::PositionalOnly;
        continue;
      }
      if (text == "*") {
        if (afterStar)
          fail(r, "python-syntax", "* argument may appear only once");
        afterStar = true;
        if (!paramName(item, p)) {
          bareStar = true;
          continue;
        }
        p.kind = py::ParamKind::VarArgs;
        params.push_back(std::move(p));
        continue;
      }
      if (text == "**") {
        paramName(item, p);
        p.kind = py::ParamKind::VarKeywords;
        sawKwargs = true;
        params.push_back(std::move(p));
        continue;
      }
      paramName(item, p);
      p.kind = afterStar ? py::ParamKind::KeywordOnly : py::ParamKind::Positional;
      if (auto *d = paramDefault(item))
        p.default_ = test(d);
      if (!afterStar) {
        if (p.default_)
          sawDefault = true;
        else if (sawDefault)
          fail(r, "python-syntax", "non-default argument follows default argument");
      }
      bareStar = false;
      params.push_back(std::move(p));
    }
    if (bareStar)
      fail(listRange, "python-syntax", "named arguments must follow bare *");
    for (size_t i = 0; i < params.size(); ++i)
      for (size_t j = 0; j < i; ++j)
        if (params[i].name == params[j].name)
          fail(params[i].range, "python-syntax",
               fmt::format("duplicate argument '{}' in function definition", params[i].name));
    return params;
  }

  bool paramName(P::Param_itemContext *item, py::Param &p) {
    P::TparamContext *t = nullptr;
    if (auto *s = dynamic_cast<P::StarParamContext *>(item))
      t = s->tparam();
    else if (auto *d = dynamic_cast<P::DoubleStarParamContext *>(item))
      t = d->tparam();
    else if (auto *q = dynamic_cast<P::PlainParamContext *>(item))
      t = q->tparam();
    if (!t)
      return false;
    p.range = range(t); // the name and its annotation, as CPython's `arg`
    p.name = t->NAME()->getText();
    if (t->test())
      p.annotation = test(t->test());
    return true;
  }
  bool paramName(P::Lambda_paramContext *item, py::Param &p) {
    antlr4::tree::TerminalNode *n = nullptr;
    if (auto *s = dynamic_cast<P::LambdaStarParamContext *>(item))
      n = s->NAME();
    else if (auto *d = dynamic_cast<P::LambdaDoubleStarParamContext *>(item))
      n = d->NAME();
    else if (auto *q = dynamic_cast<P::LambdaPlainParamContext *>(item))
      n = q->NAME();
    if (!n)
      return false;
    p.range = range(n);
    p.name = n->getText();
    return true;
  }
  P::TestContext *paramDefault(P::Param_itemContext *item) {
    auto *q = dynamic_cast<P::PlainParamContext *>(item);
    return q ? q->test() : nullptr;
  }
  P::TestContext *paramDefault(P::Lambda_paramContext *item) {
    auto *q = dynamic_cast<P::LambdaPlainParamContext *>(item);
    return q ? q->test() : nullptr;
  }

  // --- match ---------------------------------------------------------------

  py::StmtPtr matchStmt(P::Match_stmtContext *s) {
    auto m = std::make_unique<py::Match>(range(s), testlistStar(s->testlist_star()));
    for (auto *c : s->case_block()) {
      py::MatchCase mc;
      mc.range = range(c);
      mc.pattern = patterns(c->patterns(), false);
      if (c->namedexpr_test())
        mc.guard = namedexprTest(c->namedexpr_test());
      mc.body = block(c->block());
      m->cases.push_back(std::move(mc));
    }
    return m;
  }

  // `case a, b:` is a sequence pattern; so is `(a, b)` but not `(a)`.
  py::PatternPtr patterns(P::PatternsContext *ctx, bool bracketed) {
    auto ps = ctx->pattern();
    bool comma = false;
    for (auto *child : ctx->children)
      comma = comma || isTerminal(child, ",");
    if (ps.size() == 1 && !comma && !bracketed)
      return pattern(ps[0]);
    auto seq = std::make_unique<py::Pattern>(py::PatternKind::Sequence, range(ctx));
    for (auto *p : ps)
      seq->children.push_back(pattern(p));
    return seq;
  }

  py::PatternPtr pattern(P::PatternContext *ctx) {
    auto alts = ctx->or_pattern()->closed_pattern();
    py::PatternPtr p;
    if (alts.size() == 1) {
      p = closedPattern(alts[0]);
    } else {
      p = std::make_unique<py::Pattern>(py::PatternKind::Or, range(ctx->or_pattern()));
      for (auto *a : alts)
        p->children.push_back(closedPattern(a));
    }
    if (ctx->NAME()) {
      auto as = std::make_unique<py::Pattern>(py::PatternKind::As, range(ctx));
      as->name = ctx->NAME()->getText();
      as->children.push_back(std::move(p));
      return as;
    }
    return p;
  }

  py::ExprPtr dottedName(const std::vector<antlr4::tree::TerminalNode *> &parts) {
    py::ExprPtr e = done(std::make_unique<py::Name>(range(parts[0]), parts[0]->getText()), 0);
    for (size_t i = 1; i < parts.size(); ++i) {
      unsigned h = height(e.get());
      SourceRange r = join(e->range, range(parts[i]));
      e = done(
          std::make_unique<py::Attribute>(r, std::move(e), parts[i]->getText(), range(parts[i])),
          h);
    }
    return e;
  }

  py::PatternPtr closedPattern(P::Closed_patternContext *ctx) {
    SourceRange r = range(ctx);
    if (auto *l = dynamic_cast<P::LiteralPatternContext *>(ctx)) {
      auto p = std::make_unique<py::Pattern>(py::PatternKind::Value, r);
      auto nums = l->NUMBER();
      py::ExprPtr e = number(nums[0]);
      if (isTerminal(l->children[0], "-")) {
        SourceRange nr =
            join(range(static_cast<antlr4::tree::TerminalNode *>(l->children[0])), range(nums[0]));
        e = done(std::make_unique<py::UnaryOp>(nr, py::UnaryOpKind::USub, std::move(e)), 1);
      }
      if (nums.size() > 1) {
        bool minus = false;
        for (auto *child : l->children)
          if (child != l->children[0] && isTerminal(child, "-"))
            minus = true;
        e = done(std::make_unique<py::BinOp>(r, minus ? py::BinOpKind::Sub : py::BinOpKind::Add,
                                             std::move(e), number(nums[1])),
                 2);
      }
      p->value = std::move(e);
      return p;
    }
    if (auto *s = dynamic_cast<P::StringPatternContext *>(ctx)) {
      auto p = std::make_unique<py::Pattern>(py::PatternKind::Value, r);
      p->value = strings(s->STRING(), r);
      return p;
    }
    if (dynamic_cast<P::SingletonPatternContext *>(ctx)) {
      auto p = std::make_unique<py::Pattern>(py::PatternKind::Singleton, r);
      std::string t = ctx->getText();
      p->value = done(std::make_unique<py::Constant>(r,
                                                     t == "None"   ? py::ConstKind::None
                                                     : t == "True" ? py::ConstKind::True
                                                                   : py::ConstKind::False,
                                                     t),
                      0);
      return p;
    }
    if (auto *s = dynamic_cast<P::StarPatternContext *>(ctx)) {
      auto p = std::make_unique<py::Pattern>(py::PatternKind::Star, r);
      if (s->NAME()->getText() != "_")
        p->name = s->NAME()->getText();
      return p;
    }
    if (auto *c = dynamic_cast<P::ClassPatternContext *>(ctx)) {
      auto p = std::make_unique<py::Pattern>(py::PatternKind::Class, r);
      p->value = dottedName(c->NAME());
      if (c->pattern_args())
        for (auto *a : c->pattern_args()->pattern_arg()) {
          if (a->NAME()) {
            p->kwNames.push_back(a->NAME()->getText());
            p->kwPatterns.push_back(pattern(a->pattern()));
          } else {
            if (!p->kwNames.empty())
              fail(range(a), "python-syntax", "positional patterns follow keyword patterns");
            p->children.push_back(pattern(a->pattern()));
          }
        }
      return p;
    }
    if (auto *v = dynamic_cast<P::ValuePatternContext *>(ctx)) {
      auto p = std::make_unique<py::Pattern>(py::PatternKind::Value, r);
      p->value = dottedName(v->NAME());
      return p;
    }
    if (auto *c = dynamic_cast<P::CapturePatternContext *>(ctx)) {
      auto p = std::make_unique<py::Pattern>(py::PatternKind::As, r);
      if (c->NAME()->getText() != "_")
        p->name = c->NAME()->getText();
      return p;
    }
    if (auto *g = dynamic_cast<P::GroupPatternContext *>(ctx)) {
      if (!g->patterns())
        return std::make_unique<py::Pattern>(py::PatternKind::Sequence, r);
      // `(p)` is p itself; `(p, q)` a sequence whose range includes the parentheses.
      auto p = patterns(g->patterns(), false);
      if (p->kind == py::PatternKind::Sequence)
        p->range = r;
      return p;
    }
    if (auto *s = dynamic_cast<P::SequencePatternContext *>(ctx)) {
      if (!s->patterns())
        return std::make_unique<py::Pattern>(py::PatternKind::Sequence, r);
      auto p = patterns(s->patterns(), true);
      p->range = r;
      return p;
    }
    auto *m = dynamic_cast<P::MappingPatternContext *>(ctx);
    auto p = std::make_unique<py::Pattern>(py::PatternKind::Mapping, r);
    for (auto *item : m->mapping_item()) {
      if (item->NAME()) {
        p->name = item->NAME()->getText();
        continue;
      }
      py::PatternPtr key = closedPattern(item->closed_pattern());
      if (key->kind != py::PatternKind::Value && key->kind != py::PatternKind::Singleton)
        fail(key->range, "python-syntax",
             "mapping pattern keys may only match literals and attribute lookups");
      p->keys.push_back(std::move(key->value));
      p->children.push_back(pattern(item->pattern()));
    }
    return p;
  }

  // --- expressions -----------------------------------------------------------

  py::ExprPtr testlistStar(P::Testlist_starContext *ctx) { return tupleOf(ctx, ctx->children); }
  py::ExprPtr exprlist(P::ExprlistContext *ctx) { return tupleOf(ctx, ctx->children); }

  // `a` alone, or `a, b` / `a,` as a Tuple.
  py::ExprPtr tupleOf(antlr4::ParserRuleContext *ctx,
                      const std::vector<antlr4::tree::ParseTree *> &children) {
    std::vector<py::ExprPtr> elts;
    bool comma = false;
    for (auto *child : children) {
      if (isTerminal(child, ","))
        comma = true;
      else if (auto *c = dynamic_cast<antlr4::ParserRuleContext *>(child))
        elts.push_back(anyExpr(c));
    }
    if (elts.size() == 1 && !comma)
      return std::move(elts[0]);
    unsigned h = maxHeight(elts);
    return done(std::make_unique<py::Tuple>(range(ctx), std::move(elts)), h);
  }

  // One element of a list: test, star_expr, expr or namedexpr_test.
  py::ExprPtr anyExpr(antlr4::ParserRuleContext *c) {
    if (auto *t = dynamic_cast<P::TestContext *>(c))
      return test(t);
    if (auto *t = dynamic_cast<P::Star_exprContext *>(c))
      return starExpr(t);
    if (auto *t = dynamic_cast<P::ExprContext *>(c))
      return expr(t);
    if (auto *t = dynamic_cast<P::Namedexpr_testContext *>(c))
      return namedexprTest(t);
    throw std::logic_error("pyfront: unexpected list element");
  }

  py::ExprPtr starExpr(P::Star_exprContext *ctx) {
    py::ExprPtr v = expr(ctx->expr());
    unsigned h = height(v.get());
    return done(std::make_unique<py::Starred>(range(ctx), std::move(v)), h);
  }

  py::ExprPtr namedexprTest(P::Namedexpr_testContext *ctx) {
    auto tests = ctx->test();
    py::ExprPtr target = test(tests[0]);
    if (tests.size() == 1)
      return target;
    if (!py::isa<py::Name>(*target))
      fail(target->range, "python-syntax",
           fmt::format("cannot use assignment expressions with {}", describe(*target)));
    py::ExprPtr value = test(tests[1]);
    unsigned h = height(value.get());
    return done(std::make_unique<py::NamedExpr>(range(ctx), std::move(target), std::move(value)),
                h);
  }

  py::ExprPtr test(P::TestContext *ctx) {
    if (ctx->lambdef())
      return lambda(ctx->lambdef()->lambda_params(), range(ctx->lambdef()),
                    [&] { return test(ctx->lambdef()->test()); });
    auto ors = ctx->or_test();
    py::ExprPtr body = orTest(ors[0]);
    if (ors.size() == 1)
      return body;
    py::ExprPtr cond = orTest(ors[1]);
    py::ExprPtr orelse = test(ctx->test());
    unsigned h = std::max({height(body.get()), height(cond.get()), height(orelse.get())});
    return done(std::make_unique<py::IfExp>(range(ctx), std::move(cond), std::move(body),
                                            std::move(orelse)),
                h);
  }

  py::ExprPtr testNocond(P::Test_nocondContext *ctx) {
    if (auto *l = ctx->lambdef_nocond())
      return lambda(l->lambda_params(), range(l), [&] { return testNocond(l->test_nocond()); });
    return orTest(ctx->or_test());
  }

  template <typename F> py::ExprPtr lambda(P::Lambda_paramsContext *params, SourceRange r, F body) {
    auto l = std::make_unique<py::Lambda>(r);
    if (params)
      l->params = parameters(params->lambda_param(), range(params));
    l->body = body();
    unsigned h = height(l->body.get());
    for (const auto &p : l->params)
      h = std::max(h, height(p.default_.get()));
    return done(std::move(l), h);
  }

  template <typename Ctx, typename Sub, typename F>
  py::ExprPtr boolChain(Ctx *ctx, const std::vector<Sub *> &parts, py::BoolOpKind op, F sub) {
    if (parts.size() == 1)
      return sub(parts[0]);
    std::vector<py::ExprPtr> values;
    for (auto *p : parts)
      values.push_back(sub(p));
    unsigned h = maxHeight(values);
    return done(std::make_unique<py::BoolOp>(range(ctx), op, std::move(values)), h);
  }

  py::ExprPtr orTest(P::Or_testContext *ctx) {
    return boolChain(ctx, ctx->and_test(), py::BoolOpKind::Or,
                     [&](P::And_testContext *a) { return andTest(a); });
  }
  py::ExprPtr andTest(P::And_testContext *ctx) {
    return boolChain(ctx, ctx->not_test(), py::BoolOpKind::And,
                     [&](P::Not_testContext *n) { return notTest(n); });
  }
  py::ExprPtr notTest(P::Not_testContext *ctx) {
    if (ctx->comparison())
      return comparison(ctx->comparison());
    py::ExprPtr operand = notTest(ctx->not_test());
    unsigned h = height(operand.get());
    return done(std::make_unique<py::UnaryOp>(range(ctx), py::UnaryOpKind::Not, std::move(operand)),
                h);
  }

  py::ExprPtr comparison(P::ComparisonContext *ctx) {
    auto exprs = ctx->expr();
    py::ExprPtr left = expr(exprs[0]);
    if (exprs.size() == 1)
      return left;
    auto cmp = std::make_unique<py::Compare>(range(ctx), std::move(left));
    unsigned h = height(cmp->left.get());
    auto ops = ctx->comp_op();
    for (size_t i = 0; i < ops.size(); ++i) {
      std::string op;
      for (auto *child : ops[i]->children)
        op += (op.empty() ? "" : " ") + child->getText();
      static const std::pair<std::string_view, py::CmpOpKind> table[] = {
          {"==", py::CmpOpKind::Eq}, {"!=", py::CmpOpKind::NotEq},
          {"<", py::CmpOpKind::Lt},  {"<=", py::CmpOpKind::LtE},
          {">", py::CmpOpKind::Gt},  {">=", py::CmpOpKind::GtE},
          {"is", py::CmpOpKind::Is}, {"is not", py::CmpOpKind::IsNot},
          {"in", py::CmpOpKind::In}, {"not in", py::CmpOpKind::NotIn}};
      for (const auto &[text, kind] : table)
        if (op == text)
          cmp->ops.push_back(kind);
      cmp->comparators.push_back(expr(exprs[i + 1]));
      h = std::max(h, height(cmp->comparators.back().get()));
    }
    return done(std::move(cmp), h);
  }

  static py::BinOpKind binOpKind(std::string_view op) {
    static const std::pair<std::string_view, py::BinOpKind> table[] = {
        {"+", py::BinOpKind::Add},      {"-", py::BinOpKind::Sub},
        {"*", py::BinOpKind::Mult},     {"@", py::BinOpKind::MatMult},
        {"/", py::BinOpKind::Div},      {"%", py::BinOpKind::Mod},
        {"**", py::BinOpKind::Pow},     {"<<", py::BinOpKind::LShift},
        {">>", py::BinOpKind::RShift},  {"|", py::BinOpKind::BitOr},
        {"^", py::BinOpKind::BitXor},   {"&", py::BinOpKind::BitAnd},
        {"//", py::BinOpKind::FloorDiv}};
    for (const auto &[text, kind] : table)
      if (op == text)
        return kind;
    throw std::logic_error("pyfront: unknown binary operator");
  }

  // Left-associative chains: operands are rule contexts, operators terminals or
  // one-token rule contexts, alternating in `children`.
  // Ranges span the operand contexts, so that a parenthesised first operand is
  // included, as in CPython.
  template <typename F> py::ExprPtr leftChain(antlr4::ParserRuleContext *ctx, F operand) {
    py::ExprPtr result;
    std::string op;
    size_t index = 0;
    SourceRange first;
    for (auto *child : ctx->children) {
      if (index++ % 2 == 1) {
        op = child->getText();
        continue;
      }
      py::ExprPtr rhs = operand(child);
      SourceRange childRange = range(static_cast<antlr4::ParserRuleContext *>(child));
      if (!result) {
        result = std::move(rhs);
        first = childRange;
        continue;
      }
      unsigned h = std::max(height(result.get()), height(rhs.get()));
      SourceRange r = join(first, childRange);
      result =
          done(std::make_unique<py::BinOp>(r, binOpKind(op), std::move(result), std::move(rhs)), h);
    }
    return result;
  }

  py::ExprPtr expr(P::ExprContext *ctx) {
    return leftChain(ctx, [&](antlr4::tree::ParseTree *c) {
      return xorExpr(static_cast<P::Xor_exprContext *>(c));
    });
  }
  py::ExprPtr xorExpr(P::Xor_exprContext *ctx) {
    return leftChain(ctx, [&](antlr4::tree::ParseTree *c) {
      return andExpr(static_cast<P::And_exprContext *>(c));
    });
  }
  py::ExprPtr andExpr(P::And_exprContext *ctx) {
    return leftChain(ctx, [&](antlr4::tree::ParseTree *c) {
      return shiftExpr(static_cast<P::Shift_exprContext *>(c));
    });
  }
  py::ExprPtr shiftExpr(P::Shift_exprContext *ctx) {
    return leftChain(ctx, [&](antlr4::tree::ParseTree *c) {
      return arithExpr(static_cast<P::Arith_exprContext *>(c));
    });
  }
  py::ExprPtr arithExpr(P::Arith_exprContext *ctx) {
    return leftChain(
        ctx, [&](antlr4::tree::ParseTree *c) { return term(static_cast<P::TermContext *>(c)); });
  }
  py::ExprPtr term(P::TermContext *ctx) {
    return leftChain(ctx, [&](antlr4::tree::ParseTree *c) {
      return factor(static_cast<P::FactorContext *>(c));
    });
  }

  py::ExprPtr factor(P::FactorContext *ctx) {
    if (ctx->power())
      return power(ctx->power());
    std::string op = ctx->children[0]->getText();
    py::ExprPtr operand = factor(ctx->factor());
    unsigned h = height(operand.get());
    py::UnaryOpKind kind = op == "-"   ? py::UnaryOpKind::USub
                           : op == "+" ? py::UnaryOpKind::UAdd
                                       : py::UnaryOpKind::Invert;
    return done(std::make_unique<py::UnaryOp>(range(ctx), kind, std::move(operand)), h);
  }

  py::ExprPtr power(P::PowerContext *ctx) {
    py::ExprPtr base = atomExpr(ctx->atom_expr());
    if (!ctx->factor())
      return base;
    py::ExprPtr exp = factor(ctx->factor());
    unsigned h = std::max(height(base.get()), height(exp.get()));
    return done(std::make_unique<py::BinOp>(range(ctx), py::BinOpKind::Pow, std::move(base),
                                            std::move(exp)),
                h);
  }

  py::ExprPtr atomExpr(P::Atom_exprContext *ctx) {
    py::ExprPtr e = atom(ctx->atom());
    SourceRange atomRange = range(ctx->atom());
    for (auto *t : ctx->trailer()) {
      unsigned h = height(e.get());
      SourceRange r = join(atomRange, range(t));
      if (auto *c = dynamic_cast<P::CallTrailerContext *>(t)) {
        auto call = std::make_unique<py::Call>(r, std::move(e));
        if (c->arglist()) {
          arglist(c->arglist(), call->args, call->keywords);
          // A generator expression that is the only argument includes the call's
          // parentheses (CPython's position).
          if (call->args.size() == 1 && call->keywords.empty() &&
              py::isa<py::GeneratorExp>(*call->args[0]) && c->arglist()->argument().size() == 1)
            call->args[0]->range = range(c);
        }
        h = std::max(h, maxHeight(call->args));
        for (const auto &k : call->keywords)
          h = std::max(h, height(k.value.get()));
        e = done(std::move(call), h);
      } else if (auto *s = dynamic_cast<P::SubscriptTrailerContext *>(t)) {
        py::ExprPtr index = subscriptList(s->subscriptlist());
        h = std::max(h, height(index.get()));
        e = done(std::make_unique<py::Subscript>(r, std::move(e), std::move(index)), h);
      } else {
        auto *a = static_cast<P::AttrTrailerContext *>(t);
        e = done(std::make_unique<py::Attribute>(r, std::move(e), a->NAME()->getText(),
                                                 range(a->NAME())),
                 h);
      }
    }
    if (ctx->AWAIT()) {
      unsigned h = height(e.get());
      e = done(std::make_unique<py::Await>(range(ctx), std::move(e)), h);
    }
    return e;
  }

  py::ExprPtr subscriptList(P::SubscriptlistContext *ctx) {
    std::vector<py::ExprPtr> elts;
    bool comma = false;
    for (auto *child : ctx->children) {
      if (isTerminal(child, ",")) {
        comma = true;
        continue;
      }
      auto *s = static_cast<P::SubscriptContext *>(child);
      if (auto *i = dynamic_cast<P::IndexSubContext *>(s)) {
        elts.push_back(namedexprTest(i->namedexpr_test()));
      } else if (auto *st = dynamic_cast<P::StarSubContext *>(s)) {
        elts.push_back(starExpr(st->star_expr()));
      } else {
        // test? ':' test? (':' test?)?: place each test by the colons before it.
        py::ExprPtr parts[3];
        size_t slot = 0;
        for (auto *c : s->children) {
          if (isTerminal(c, ":"))
            ++slot;
          else
            parts[slot] = test(static_cast<P::TestContext *>(c));
        }
        unsigned h =
            std::max({height(parts[0].get()), height(parts[1].get()), height(parts[2].get())});
        elts.push_back(done(std::make_unique<py::Slice>(range(s), std::move(parts[0]),
                                                        std::move(parts[1]), std::move(parts[2])),
                            h));
      }
    }
    // `x[*a]` is a one-element tuple (PEP 646), as in CPython.
    if (elts.size() == 1 && !comma && !py::isa<py::Starred>(*elts[0]))
      return std::move(elts[0]);
    unsigned h = maxHeight(elts);
    return done(std::make_unique<py::Tuple>(range(ctx), std::move(elts)), h);
  }

  void arglist(P::ArglistContext *ctx, std::vector<py::ExprPtr> &args,
               std::vector<py::Keyword> &keywords) {
    bool sawKeyword = false, sawKwUnpack = false;
    auto list = ctx->argument();
    for (auto *a : list) {
      SourceRange r = range(a);
      if (auto *k = dynamic_cast<P::KeywordArgContext *>(a)) {
        sawKeyword = true;
        std::string name = k->NAME()->getText();
        for (const auto &prev : keywords)
          if (prev.name == name)
            fail(r, "python-syntax", fmt::format("keyword argument repeated: {}", name));
        keywords.push_back({r, name, test(k->test())});
      } else if (auto *s = dynamic_cast<P::StarArgContext *>(a)) {
        if (sawKwUnpack)
          fail(r, "python-syntax",
               "iterable argument unpacking follows keyword argument unpacking");
        py::ExprPtr v = test(s->test());
        unsigned h = height(v.get());
        args.push_back(done(std::make_unique<py::Starred>(r, std::move(v)), h));
      } else if (auto *d = dynamic_cast<P::DoubleStarArgContext *>(a)) {
        sawKwUnpack = true;
        keywords.push_back({r, "", test(d->test())});
      } else {
        auto *p = static_cast<P::PositionalArgContext *>(a);
        if (sawKwUnpack)
          fail(r, "python-syntax", "positional argument follows keyword argument unpacking");
        if (sawKeyword)
          fail(r, "python-syntax", "positional argument follows keyword argument");
        py::ExprPtr v = namedexprTest(p->namedexpr_test());
        if (p->comp_for()) {
          if (list.size() > 1)
            fail(r, "python-syntax", "Generator expression must be parenthesized");
          auto g = std::make_unique<py::GeneratorExp>(r, std::move(v));
          unsigned h = height(g->elt.get());
          compFor(p->comp_for(), g->generators, h);
          v = done(std::move(g), h);
        }
        args.push_back(std::move(v));
      }
    }
  }

  void compFor(P::Comp_forContext *ctx, std::vector<py::Comprehension> &out, unsigned &h) {
    py::Comprehension c;
    c.range = range(ctx);
    c.isAsync = ctx->ASYNC() != nullptr;
    c.target = exprlist(ctx->exprlist());
    checkTarget(*c.target, "assign to");
    c.iter = orTest(ctx->or_test());
    h = std::max({h, height(c.target.get()), height(c.iter.get())});
    std::vector<P::Comp_forContext *> nested;
    for (auto *it : ctx->comp_iter()) {
      if (it->comp_for()) {
        nested.push_back(it->comp_for());
        continue;
      }
      c.ifs.push_back(testNocond(it->test_nocond()));
      h = std::max(h, height(c.ifs.back().get()));
    }
    out.push_back(std::move(c));
    for (auto *n : nested)
      compFor(n, out, h);
  }

  py::ExprPtr yieldExpr(P::Yield_exprContext *ctx) {
    if (ctx->test()) {
      py::ExprPtr v = test(ctx->test());
      unsigned h = height(v.get());
      return done(std::make_unique<py::YieldFrom>(range(ctx), std::move(v)), h);
    }
    py::ExprPtr v = ctx->testlist_star() ? testlistStar(ctx->testlist_star()) : nullptr;
    unsigned h = height(v.get());
    return done(std::make_unique<py::Yield>(range(ctx), std::move(v)), h);
  }

  py::ExprPtr atom(P::AtomContext *ctx) {
    SourceRange r = range(ctx);
    if (auto *p = dynamic_cast<P::ParenAtomContext *>(ctx)) {
      if (p->yield_expr())
        return yieldExpr(p->yield_expr());
      if (!p->testlist_comp())
        return done(std::make_unique<py::Tuple>(r, std::vector<py::ExprPtr>{}), 0);
      auto *tc = p->testlist_comp();
      if (tc->comp_for()) {
        py::ExprPtr elt = anyExpr(static_cast<antlr4::ParserRuleContext *>(tc->children[0]));
        if (py::isa<py::Starred>(*elt))
          fail(elt->range, "python-syntax", "iterable unpacking cannot be used in comprehension");
        auto g = std::make_unique<py::GeneratorExp>(r, std::move(elt));
        unsigned h = height(g->elt.get());
        compFor(tc->comp_for(), g->generators, h);
        return done(std::move(g), h);
      }
      py::ExprPtr e = tupleOf(tc, tc->children);
      if (py::isa<py::Tuple>(*e))
        e->range = r;
      else if (py::isa<py::Starred>(*e))
        fail(e->range, "python-syntax", "cannot use starred expression here");
      return e;
    }
    if (auto *l = dynamic_cast<P::ListAtomContext *>(ctx)) {
      auto *tc = l->testlist_comp();
      if (tc && tc->comp_for()) {
        py::ExprPtr elt = anyExpr(static_cast<antlr4::ParserRuleContext *>(tc->children[0]));
        if (py::isa<py::Starred>(*elt))
          fail(elt->range, "python-syntax", "iterable unpacking cannot be used in comprehension");
        auto c = std::make_unique<py::ListComp>(r, std::move(elt));
        unsigned h = height(c->elt.get());
        compFor(tc->comp_for(), c->generators, h);
        return done(std::move(c), h);
      }
      std::vector<py::ExprPtr> elts;
      if (tc)
        for (auto *child : tc->children)
          if (auto *c = dynamic_cast<antlr4::ParserRuleContext *>(child))
            elts.push_back(anyExpr(c));
      unsigned h = maxHeight(elts);
      return done(std::make_unique<py::List>(r, std::move(elts)), h);
    }
    if (auto *b = dynamic_cast<P::BraceAtomContext *>(ctx))
      return braces(b->dictorsetmaker(), r);
    if (auto *n = dynamic_cast<P::NameAtomContext *>(ctx))
      return done(std::make_unique<py::Name>(r, n->NAME()->getText()), 0);
    if (auto *n = dynamic_cast<P::NumberAtomContext *>(ctx))
      return number(n->NUMBER());
    if (auto *s = dynamic_cast<P::StringAtomContext *>(ctx))
      return strings(s->STRING(), r);
    std::string t = ctx->getText();
    py::ConstKind k = t == "None"    ? py::ConstKind::None
                      : t == "True"  ? py::ConstKind::True
                      : t == "False" ? py::ConstKind::False
                                     : py::ConstKind::Ellipsis;
    return done(std::make_unique<py::Constant>(r, k, t), 0);
  }

  py::ExprPtr braces(P::DictorsetmakerContext *ctx, SourceRange r) {
    if (!ctx)
      return done(std::make_unique<py::Dict>(r), 0);
    auto items = ctx->dict_item();
    if (!items.empty()) {
      if (ctx->comp_for()) {
        auto *item = items[0];
        if (!item->test().empty() && item->test().size() == 2) {
          auto c = std::make_unique<py::DictComp>(r, test(item->test(0)), test(item->test(1)));
          unsigned h = std::max(height(c->key.get()), height(c->value.get()));
          compFor(ctx->comp_for(), c->generators, h);
          return done(std::move(c), h);
        }
        fail(range(item), "python-syntax", "dict unpacking cannot be used in dict comprehension");
      }
      auto d = std::make_unique<py::Dict>(r);
      unsigned h = 0;
      for (auto *item : items) {
        if (item->expr()) {
          d->keys.push_back(nullptr);
          d->values.push_back(expr(item->expr()));
        } else {
          d->keys.push_back(test(item->test(0)));
          d->values.push_back(test(item->test(1)));
          h = std::max(h, height(d->keys.back().get()));
        }
        h = std::max(h, height(d->values.back().get()));
      }
      return done(std::move(d), h);
    }
    if (ctx->comp_for()) {
      py::ExprPtr elt = anyExpr(static_cast<antlr4::ParserRuleContext *>(ctx->children[0]));
      if (py::isa<py::Starred>(*elt))
        fail(elt->range, "python-syntax", "iterable unpacking cannot be used in comprehension");
      auto c = std::make_unique<py::SetComp>(r, std::move(elt));
      unsigned h = height(c->elt.get());
      compFor(ctx->comp_for(), c->generators, h);
      return done(std::move(c), h);
    }
    std::vector<py::ExprPtr> elts;
    for (auto *child : ctx->children)
      if (auto *c = dynamic_cast<antlr4::ParserRuleContext *>(child))
        elts.push_back(anyExpr(c));
    unsigned h = maxHeight(elts);
    return done(std::make_unique<py::Set>(r, std::move(elts)), h);
  }

  py::ExprPtr number(antlr4::tree::TerminalNode *n) {
    std::string text = n->getText();
    SourceRange r = range(n);
    char last = text.back();
    if (last == 'j' || last == 'J')
      return done(std::make_unique<py::Constant>(r, py::ConstKind::Imaginary, text), 0);
    std::string digits;
    for (char c : text)
      if (c != '_')
        digits += c;
    int base = 10;
    std::string_view body = digits;
    if (digits.size() > 2 && digits[0] == '0' &&
        std::string_view("xXoObB").find(digits[1]) != std::string_view::npos) {
      char b = static_cast<char>(std::tolower(static_cast<unsigned char>(digits[1])));
      base = b == 'x' ? 16 : b == 'o' ? 8 : 2;
      body.remove_prefix(2);
    } else if (digits.find_first_of(".eE") != std::string::npos) {
      return done(std::make_unique<py::Constant>(r, py::ConstKind::Float, text), 0);
    } else if (digits.size() > 1 && digits[0] == '0' &&
               digits.find_first_not_of('0') != std::string::npos) {
      fail(r, "python-syntax",
           "leading zeros in decimal integer literals are not permitted; use an 0o prefix for "
           "octal integers");
    }
    auto c = std::make_unique<py::Constant>(r, py::ConstKind::Int, text);
    int64_t v = 0;
    auto [ptr, ec] = std::from_chars(body.data(), body.data() + body.size(), v, base);
    if (ec == std::errc() && ptr == body.data() + body.size())
      c->intValue = v;
    return done(std::move(c), 0);
  }

  // Adjacent literals concatenate; bytes and str do not mix.
  py::ExprPtr strings(const std::vector<antlr4::tree::TerminalNode *> &parts, SourceRange r) {
    std::string text;
    std::string value;
    bool bytes = false, fstr = false;
    std::vector<py::Constant::Part> partList;
    for (size_t i = 0; i < parts.size(); ++i) {
      // The original bytes: the lexer saw non-ASCII bytes as placeholders.
      const antlr4::Token *tok = parts[i]->getSymbol();
      std::string s =
          file_.text().substr(tok->getStartIndex(), tok->getStopIndex() - tok->getStartIndex() + 1);
      size_t q = s.find_first_of("'\"");
      std::string prefix = s.substr(0, q);
      bool isBytes = false, raw = false;
      for (char c : prefix) {
        char l = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        isBytes = isBytes || l == 'b';
        raw = raw || l == 'r';
        fstr = fstr || l == 'f';
      }
      if (i > 0 && isBytes != bytes)
        fail(r, "python-syntax", "cannot mix bytes and nonbytes literals");
      bytes = isBytes;
      size_t quoteLen = s.compare(q, 3, std::string(3, s[q])) == 0 && s.size() - q >= 6 ? 3 : 1;
      std::string_view body = std::string_view(s).substr(q + quoteLen, s.size() - q - 2 * quoteLen);
      value += raw ? std::string(body) : unescape(body, isBytes);
      text += (i > 0 ? " " : "") + s;
      partList.push_back({prefix.find_first_of("fF") != std::string::npos, raw, std::string(body)});
    }
    auto c = std::make_unique<py::Constant>(r, bytes ? py::ConstKind::Bytes : py::ConstKind::String,
                                            text);
    c->str = std::move(value);
    c->fString = fstr;
    if (fstr)
      c->parts = std::move(partList);
    return done(std::move(c), 0);
  }

  static void appendUtf8(std::string &out, uint32_t cp) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

public:
  // Python's escapes (str: \x is a code point, bytes: a byte; \u and \U only in
  // str). \N{...} and unknown escapes are kept as written, as CPython keeps unknown ones.
  static std::string unescape(std::string_view s, bool bytes) {
    std::string out;
    auto hex = [&](size_t at, size_t n, uint32_t &v) {
      if (at + n > s.size())
        return false;
      v = 0;
      for (size_t k = 0; k < n; ++k) {
        char c = s[at + k];
        if (!std::isxdigit(static_cast<unsigned char>(c)))
          return false;
        v = v * 16 +
            static_cast<uint32_t>(std::isdigit(static_cast<unsigned char>(c))
                                      ? c - '0'
                                      : std::tolower(static_cast<unsigned char>(c)) - 'a' + 10);
      }
      return true;
    };
    for (size_t i = 0; i < s.size(); ++i) {
      if (s[i] != '\\' || i + 1 == s.size()) {
        out += s[i];
        continue;
      }
      char c = s[++i];
      uint32_t v = 0;
      switch (c) {
      case '\n':
        break;
      case '\r':
        if (i + 1 < s.size() && s[i + 1] == '\n')
          ++i;
        break;
      case 'n':
        out += '\n';
        break;
      case 't':
        out += '\t';
        break;
      case 'r':
        out += '\r';
        break;
      case 'a':
        out += '\a';
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'v':
        out += '\v';
        break;
      case '\\':
      case '\'':
      case '"':
        out += c;
        break;
      case 'x':
        if (hex(i + 1, 2, v)) {
          if (bytes)
            out += static_cast<char>(v);
          else
            appendUtf8(out, v);
          i += 2;
        } else {
          out += "\\x";
        }
        break;
      case 'u':
      case 'U': {
        size_t n = c == 'u' ? 4 : 8;
        if (!bytes && hex(i + 1, n, v) && v <= 0x10FFFF) {
          appendUtf8(out, v);
          i += n;
        } else {
          out += '\\';
          out += c;
        }
        break;
      }
      default:
        if (c >= '0' && c <= '7') {
          v = static_cast<uint32_t>(c - '0');
          for (int k = 0; k < 2 && i + 1 < s.size() && s[i + 1] >= '0' && s[i + 1] <= '7'; ++k)
            v = v * 8 + static_cast<uint32_t>(s[++i] - '0');
          if (bytes)
            out += static_cast<char>(v & 0xFF);
          else
            appendUtf8(out, v);
        } else {
          out += '\\';
          out += c;
        }
        break;
      }
    }
    return out;
  }
};

//===----------------------------------------------------------------------===//
// Driver
//===----------------------------------------------------------------------===//

std::unique_ptr<py::Module> parseImpl(const SourceFile &file, const ParseLimits &limits) {
  const std::string &text = file.text();
  if (text.size() > limits.maxSourceBytes || file.truncated()) {
    SourceLoc at = file.loc(1, 1);
    fail({at, at}, "file-too-large",
         fmt::format("file too large ({}{} bytes; the limit is {} bytes)",
                     file.truncated() ? "more than " : "", text.size(), limits.maxSourceBytes));
  }
  checkEncoding(file);
  std::string lexed = lexerText(text);
  antlr4::ANTLRInputStream input(lexed);
  PythonLexer lexer(&input);
  lexer.removeErrorListeners(); // ERROR_CHAR matches any character: no lexer errors
  antlr4::CommonTokenStream all(&lexer);
  all.fill();

  Layout layout(file, lexed, limits);
  std::vector<std::unique_ptr<antlr4::Token>> tokens = layout.run(all.getTokens());

  antlr4::ListTokenSource source(std::move(tokens));
  antlr4::CommonTokenStream stream(&source);
  stream.fill();
  PythonParser parser(&stream);
  parser.removeErrorListeners();
  // SLL first (fast, exact on valid input), then LL for the error's position.
  parser.getInterpreter<antlr4::atn::ParserATNSimulator>()->setPredictionMode(
      antlr4::atn::PredictionMode::SLL);
  parser.setErrorHandler(std::make_shared<antlr4::BailErrorStrategy>());
  PythonParser::File_inputContext *tree = nullptr;
  try {
    tree = parser.file_input();
  } catch (const antlr4::ParseCancellationException &) {
    tree = nullptr;
  }
  if (!tree) {
    ParseFailure failure;
    stream.seek(0);
    parser.reset();
    parser.setErrorHandler(std::make_shared<FirstErrorStrategy>(failure));
    parser.getInterpreter<antlr4::atn::ParserATNSimulator>()->setPredictionMode(
        antlr4::atn::PredictionMode::LL);
    try {
      tree = parser.file_input();
    } catch (const antlr4::ParseCancellationException &) {
      tree = nullptr;
    }
    if (failure.offending) {
      // A parse error at or after the point where the layout pass stopped is the
      // layout error's consequence; one before it comes first in the file, unless
      // CPython lets the layout error take precedence.
      if (layout.error() && failure.offending->getTokenIndex() >= layout.truncatedAt())
        throw *layout.error();
      SyntaxError parseError =
          describeFailure(file, failure, stream.getTokens(), lexer.getVocabulary());
      if (layout.error() && parseError.message != "unexpected indent") {
        const SyntaxError &e = *layout.error();
        if (e.precedence == SyntaxError::Precedence::Overrides ||
            (e.precedence == SyntaxError::Precedence::Unclosed &&
             parseError.range.begin.line > e.range.begin.line))
          throw e;
      }
      throw parseError;
    }
    if (!tree)
      throw std::logic_error("pyfront: parse failed without an error");
  }
  if (layout.error())
    throw *layout.error();
  Transformer transformer(file, limits);
  return transformer.module(tree);
}

} // namespace

std::string decodeEscapes(std::string_view body, bool bytes) {
  return Transformer::unescape(body, bytes);
}

std::unique_ptr<py::Module> parseModule(const SourceFile &file, DiagnosticEngine &diags,
                                        const ParseLimits &limits) {
  try {
    return parseImpl(file, limits);
  } catch (const SyntaxError &e) {
    diags.error(e.range, e.id, e.message);
  } catch (const std::exception &e) {
    diags.error({}, "internal", fmt::format("internal parser error: {}", e.what()));
  } catch (...) {
    diags.error({}, "internal", "internal parser error");
  }
  return nullptr;
}

} // namespace dkv::pyfront
