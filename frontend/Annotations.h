// The annotations of an example kernel (`// expect:`, `// devices:`, `// mesh:`,
// `// options:`) and the suppressions of findings (`// dkv: allow`): directives in the
// comments the parser hands over with a module (ast::Module::comments). Not part of the
// AST: the test harness (`dkv parse --annotations`, tests/examples/) and the check
// command's instance planning and suppressions read them here.
#pragma once

#include "frontend/AST.h"
#include "support/Diagnostics.h"
#include "support/Source.h"

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dkv::frontend {

using support::SourceRange;

/// Verdicts named by `// expect:` comments.
enum class ExpectedVerdict { Ok, Race, Deadlock, ExitViolation, LifetimeViolation, StaticError };
std::string_view toString(ExpectedVerdict verdict);

/// The expectation comments of a file (`// expect:`, `// devices:`, `// options:`).
struct Annotations {
  struct Expect {
    ExpectedVerdict verdict = ExpectedVerdict::Ok;
    std::optional<uint32_t> line; ///< `at LINE`
    SourceRange range;            ///< the comment
  };
  std::optional<Expect> expect;
  /// `// expect: VERDICT [at LINE] with OPTIONS...`: the verdict under other options
  /// (docs/examples.md "Verdicts under options"). `options` are the option words after
  /// `with` (added to those of `// options:`, and overriding them), without a
  /// `--devices SPEC` or `--mesh M` among them, which give `devices` / `meshes` instead
  /// of the file's; in file order.
  struct Case {
    Expect expect;
    std::vector<int64_t> devices;    ///< ascending; empty: the file's devices or meshes
    std::vector<std::string> meshes; ///< normalised `--mesh` values; empty: the file's
    std::vector<std::string> options;
  };
  std::vector<Case> cases;
  /// Device counts from `// devices: 2..8` (inclusive) or `// devices: 2, 4`, ascending,
  /// without duplicates. Empty if there is no devices comment.
  std::vector<int64_t> devices;
  SourceRange devicesRange;
  /// Meshes from `// mesh: x=2,y=2 x=2,y=4` (each one `--mesh` value, normalised to
  /// `x=2,y=2`), in the order given. Empty if there is no mesh comment; a file has a
  /// devices comment or a mesh comment, not both.
  std::vector<std::string> meshes;
  SourceRange meshRange;
  /// Words of `// options: ...` (several options comments accumulate).
  std::vector<std::string> options;
  SourceRange optionsRange;
  /// `// dkv: allow KIND -- reason` (docs/ci.md, "Suppressions"): accepts a finding of
  /// kind KIND ("race", "deadlock", "exit-violation", "lifetime-violation") whose
  /// primary location is on `line`: the comment's own line when code precedes it
  /// there, else the next line.
  struct Suppression {
    std::string kind;
    std::string reason;
    uint32_t line = 0;
    SourceRange range; ///< the comment
  };
  std::vector<Suppression> suppressions;
};

/// The annotations in `module`'s comments (docs/language.md, "Expected verdicts"): a
/// malformed annotation or suppression is a `bad-annotation` / `bad-suppression` error.
Annotations annotationsOf(const ast::Module &module, support::DiagnosticEngine &diags);

/// The annotations of `file` (a `.dk` file's `//` comments as the parser hands them over,
/// a `.py` file's `#` comment lines). Reports to `diags` only malformed or duplicate
/// annotations (`bad-annotation`, with file:line:col) and `file-too-large`: other errors
/// of the file do not matter here (a `static-error` example may not even parse).
Annotations readAnnotations(const support::SourceFile &file, support::DiagnosticEngine &diags);

/// Reads one annotation comment (`expect: ...`, `devices: ...`, `mesh: ...`, `options:
/// ...`, `dkv: allow ...`; `body` is the comment's text after its `//` or `#`) into
/// `annotations`: a malformed annotation is a `bad-annotation` error at `range`; other
/// comments are ignored. `alone`: nothing precedes the comment on its line.
void parseAnnotationComment(std::string_view body, support::SourceRange range, bool alone,
                            Annotations &annotations, support::DiagnosticEngine &diags);

/// After all annotation comments are read: a `// expect: ... with` comment that sets a
/// param (-D) or a table (-T) that the options comment sets too is a `bad-annotation`
/// error (the command line refuses a table set twice).
void checkCaseOverrides(const Annotations &annotations, support::DiagnosticEngine &diags);

/// Prints `annotations` in the stable, line-based form of `dkv parse --annotations`
/// (docs/examples.md), one line per annotation present, in this order:
///   expect VERDICT [LINE]      e.g. `expect race 26`, `expect ok`
///   expect-with VERDICT LINE DEVICES OPTION...   one per `// expect: ... with ...`, in
///                              file order: LINE `-` when none; DEVICES the counts of its
///                              `--devices` joined by ',', `mesh:M1/M2` for its `--mesh`
///                              values, or `-` (the file's); then its other option words,
///                              e.g. `expect-with ok - 3 --dma-order link`
///   devices N...               every listed count ascending, a range expanded
///   mesh M...                  every mesh, normalised (`x=2,y=2`)
///   options WORD...            the words of every options comment, in order
void printAnnotations(const Annotations &annotations, std::ostream &out);

} // namespace dkv::frontend
