// The annotations of an example kernel, read once for every tool and test script.
#include "frontend/Annotations.h"

#include "frontend/Parser.h"
#include "frontend/Sema.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <ostream>
#include <set>

namespace dkv::frontend {

using support::DiagnosticEngine;
using support::SourceRange;

std::string_view toString(ExpectedVerdict verdict) {
  switch (verdict) {
  case ExpectedVerdict::Ok:
    return "ok";
  case ExpectedVerdict::Race:
    return "race";
  case ExpectedVerdict::Deadlock:
    return "deadlock";
  case ExpectedVerdict::ExitViolation:
    return "exit-violation";
  case ExpectedVerdict::LifetimeViolation:
    return "lifetime-violation";
  case ExpectedVerdict::StaticError:
    return "static-error";
  }
  return "?";
}

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

std::optional<int64_t> parseInt(std::string_view s) {
  s = trim(s);
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size() || s.empty())
    return std::nullopt;
  return v;
}

std::vector<std::string_view> splitWords(std::string_view s) {
  std::vector<std::string_view> words;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t'))
      ++i;
    size_t j = i;
    while (j < s.size() && s[j] != ' ' && s[j] != '\t')
      ++j;
    if (j > i)
      words.push_back(s.substr(i, j - i));
    i = j;
  }
  return words;
}

// Largest device count accepted in a `// devices:` range (the mesh limit of the driver).
constexpr int64_t kMaxDevices = 4096;

/// A device-count list: `A..B` (inclusive) or `A, B, ...`; ascending, without
/// duplicates. False with the reason in `error`.
bool parseDeviceSpec(std::string_view spec, std::vector<int64_t> &devices, std::string &error) {
  size_t dots = spec.find("..");
  if (dots != std::string_view::npos) {
    std::optional<int64_t> lo = parseInt(trim(spec.substr(0, dots)));
    std::optional<int64_t> hi = parseInt(trim(spec.substr(dots + 2)));
    if (!lo || !hi) {
      error = "invalid range";
      return false;
    }
    if (*lo < 1 || *hi > kMaxDevices || *lo > *hi) {
      error = fmt::format("range must satisfy 1 <= A <= B <= {}", kMaxDevices);
      return false;
    }
    for (int64_t d = *lo; d <= *hi; ++d)
      devices.push_back(d);
  } else {
    size_t start = 0;
    while (start <= spec.size()) {
      size_t comma = spec.find(',', start);
      std::string_view item =
          spec.substr(start, comma == std::string_view::npos ? spec.npos : comma - start);
      std::optional<int64_t> d = parseInt(trim(item));
      if (!d) {
        error = fmt::format("invalid device count '{}'", trim(item));
        return false;
      }
      if (*d < 1 || *d > kMaxDevices) {
        error = fmt::format("device count {} outside 1..{}", *d, kMaxDevices);
        return false;
      }
      devices.push_back(*d);
      if (comma == std::string_view::npos)
        break;
      start = comma + 1;
    }
  }
  std::sort(devices.begin(), devices.end());
  devices.erase(std::unique(devices.begin(), devices.end()), devices.end());
  return true;
}

/// A `--devices` case needs a file without a mesh comment, a `--mesh` case one without a
/// devices comment (checked again whenever either comment or a case is read, whatever
/// their order in the file).
void checkCases(const Annotations &annotations, SourceRange range, DiagnosticEngine &diags,
                const Annotations::Case *only = nullptr) {
  for (const Annotations::Case &c : annotations.cases) {
    if (only && &c != only)
      continue;
    if (!c.devices.empty() && !annotations.meshes.empty())
      diags.error(range, "bad-annotation",
                  "an expect comment with '--devices' in a file with a mesh comment: give "
                  "'--mesh' instead");
    if (!c.meshes.empty() && !annotations.devices.empty())
      diags.error(range, "bad-annotation",
                  "an expect comment with '--mesh' in a file with a devices comment: give "
                  "'--devices' instead");
  }
}

/// `// dkv: allow KIND -- reason`; `alone`: nothing but blanks precede the comment on
/// its line (then it applies to the next line).
void parseSuppression(std::string_view body, SourceRange range, bool alone,
                      Annotations &annotations, DiagnosticEngine &diags) {
  static const char *const kinds[] = {"race", "deadlock", "exit-violation", "lifetime-violation"};
  const std::string_view form = "expected '// dkv: allow KIND -- reason' with KIND one of race, "
                                "deadlock, exit-violation, lifetime-violation";
  size_t dashes = body.find("--");
  auto words = splitWords(body.substr(0, dashes));
  if (words.empty() || words[0] != "allow") {
    diags.error(range, "bad-suppression", fmt::format("malformed dkv comment; {}", form));
    return;
  }
  if (words.size() != 2 || std::none_of(std::begin(kinds), std::end(kinds),
                                        [&](const char *k) { return words[1] == k; })) {
    diags.error(range, "bad-suppression",
                words.size() < 2
                    ? fmt::format("suppression without a finding kind; {}", form)
                    : fmt::format("unknown finding kind '{}' in suppression; {}", words[1], form));
    return;
  }
  std::string_view reason = dashes == std::string_view::npos ? "" : trim(body.substr(dashes + 2));
  if (reason.empty()) {
    diags.error(range, "bad-suppression",
                fmt::format("suppression of a {} without a reason: write why it is accepted "
                            "after '--', e.g. '// dkv: allow {} -- the host zeroes this buffer "
                            "between calls'",
                            words[1], words[1]));
    return;
  }
  annotations.suppressions.push_back(
      {std::string(words[1]), std::string(reason), range.begin.line + (alone ? 1u : 0u), range});
}

void parseAnnotation(std::string_view body, SourceRange range, bool alone, Annotations &annotations,
                     DiagnosticEngine &diags) {
  body = trim(body);
  auto startsWith = [&](std::string_view prefix) {
    return body.substr(0, prefix.size()) == prefix;
  };
  if (startsWith("dkv:")) {
    parseSuppression(body.substr(4), range, alone, annotations, diags);
    return;
  }
  if (startsWith("expect:")) {
    auto words = splitWords(body.substr(7));
    static const std::pair<std::string_view, ExpectedVerdict> verdicts[] = {
        {"ok", ExpectedVerdict::Ok},
        {"race", ExpectedVerdict::Race},
        {"deadlock", ExpectedVerdict::Deadlock},
        {"exit-violation", ExpectedVerdict::ExitViolation},
        {"lifetime-violation", ExpectedVerdict::LifetimeViolation},
        {"static-error", ExpectedVerdict::StaticError}};
    Annotations::Expect expect;
    expect.range = range;
    bool known = false;
    if (!words.empty())
      for (const auto &[name, verdict] : verdicts)
        if (words[0] == name) {
          expect.verdict = verdict;
          known = true;
        }
    if (!known) {
      diags.error(range, "bad-annotation",
                  words.empty() ? std::string("missing verdict in expect comment")
                                : fmt::format("unknown verdict '{}' in expect comment; expected "
                                              "ok, race, deadlock, exit-violation, "
                                              "lifetime-violation or static-error",
                                              words[0]));
      return;
    }
    // `with OPTIONS...`: the verdict under other options (a case).
    auto with = std::find(words.begin(), words.end(), std::string_view("with"));
    std::vector<std::string_view> head(words.begin(), with);
    if (head.size() == 3 && head[1] == "at") {
      std::optional<int64_t> line = parseInt(head[2]);
      if (!line || *line < 1 || *line > 100'000'000) {
        diags.error(range, "bad-annotation",
                    fmt::format("invalid line '{}' in expect comment", head[2]));
        return;
      }
      expect.line = static_cast<uint32_t>(*line);
    } else if (head.size() != 1) {
      diags.error(range, "bad-annotation",
                  "malformed expect comment; expected '// expect: VERDICT [at LINE] [with "
                  "OPTIONS...]'");
      return;
    }
    if (with == words.end()) {
      if (annotations.expect) {
        diags.error(range, "bad-annotation", "duplicate expect comment");
        return;
      }
      annotations.expect = expect;
      return;
    }
    Annotations::Case c;
    c.expect = expect;
    for (auto w = with + 1; w != words.end(); ++w) {
      bool devices = *w == "--devices", mesh = *w == "--mesh";
      std::string_view value;
      if (w->starts_with("--devices=") || w->starts_with("--mesh=")) {
        devices = w->starts_with("--devices=");
        mesh = !devices;
        value = w->substr(w->find('=') + 1);
      } else if (devices || mesh) {
        if (w + 1 == words.end()) {
          diags.error(range, "bad-annotation", fmt::format("{} needs a value", *w));
          return;
        }
        value = *++w;
      }
      if (devices) {
        std::string error;
        std::vector<int64_t> counts;
        if (!c.devices.empty() || !parseDeviceSpec(value, counts, error)) {
          diags.error(range, "bad-annotation",
                      c.devices.empty()
                          ? fmt::format("malformed '--devices {}' in expect comment: {}; "
                                        "expected a count, A..B or A,B,...",
                                        value, error)
                          : std::string("'--devices' given twice in an expect comment"));
          return;
        }
        c.devices = std::move(counts);
      } else if (mesh) {
        frontend::MeshSizes sizes;
        std::string error;
        if (!frontend::parseMeshSizes(value, sizes, error)) {
          diags.error(range, "bad-annotation",
                      fmt::format("malformed '--mesh {}' in expect comment: {}", value, error));
          return;
        }
        c.meshes.push_back(frontend::meshSizesText(sizes));
      } else {
        c.options.emplace_back(*w);
      }
    }
    if (!c.devices.empty() && !c.meshes.empty()) {
      diags.error(range, "bad-annotation",
                  "an expect comment has '--devices' or '--mesh', not both");
      return;
    }
    if (c.devices.empty() && c.meshes.empty() && c.options.empty()) {
      diags.error(range, "bad-annotation",
                  "empty options after 'with' in expect comment; expected e.g. '// expect: ok "
                  "with --dma-order link'");
      return;
    }
    for (const Annotations::Case &o : annotations.cases)
      if (o.devices == c.devices && o.meshes == c.meshes && o.options == c.options) {
        diags.error(range, "bad-annotation", "duplicate expect comment for these options");
        return;
      }
    annotations.cases.push_back(std::move(c));
    checkCases(annotations, range, diags, &annotations.cases.back());
    return;
  }
  // The devices or the mesh comment: once per file, and not both.
  auto setInstances = [&](auto &field, auto values, SourceRange &at, const char *what,
                          bool otherGiven) {
    if (!field.empty()) {
      diags.error(range, "bad-annotation", fmt::format("duplicate {} comment", what));
      return;
    }
    field = std::move(values);
    at = range;
    if (otherGiven)
      diags.error(range, "bad-annotation",
                  "a file has a devices comment or a mesh comment, not both");
    checkCases(annotations, range, diags);
  };
  if (startsWith("devices:")) {
    std::vector<int64_t> devices;
    std::string error;
    if (!parseDeviceSpec(trim(body.substr(8)), devices, error)) {
      diags.error(range, "bad-annotation",
                  fmt::format("malformed devices comment: {}; expected '// devices: A..B' or "
                              "'// devices: A, B, ...'",
                              error));
      return;
    }
    setInstances(annotations.devices, std::move(devices), annotations.devicesRange, "devices",
                 !annotations.meshes.empty());
    return;
  }
  if (startsWith("mesh:")) {
    auto words = splitWords(body.substr(5));
    if (words.empty()) {
      diags.error(range, "bad-annotation",
                  "empty mesh comment; expected '// mesh: x=2,y=2' (one or more meshes)");
      return;
    }
    std::vector<std::string> meshes;
    for (std::string_view w : words) {
      frontend::MeshSizes sizes;
      std::string error;
      if (!frontend::parseMeshSizes(w, sizes, error)) {
        diags.error(range, "bad-annotation", fmt::format("malformed mesh comment: {}", error));
        return;
      }
      meshes.push_back(frontend::meshSizesText(sizes));
    }
    setInstances(annotations.meshes, std::move(meshes), annotations.meshRange, "mesh",
                 !annotations.devices.empty());
    return;
  }
  if (startsWith("options:")) {
    auto words = splitWords(body.substr(8));
    if (words.empty()) {
      diags.error(range, "bad-annotation", "empty options comment");
      return;
    }
    for (std::string_view w : words)
      annotations.options.emplace_back(w);
    if (!annotations.optionsRange.begin.valid())
      annotations.optionsRange = range;
  }
}

/// The name a `-D NAME=V` / `-T NAME=JSON` option word sets (also `-DNAME=V`,
/// `--define NAME=V`, `--table NAME=...`), or "" for another word. `words[i]` is the
/// option; a separate value is `words[i + 1]`.
std::string definedName(const std::vector<std::string> &words, size_t i, char &kind) {
  const std::string &w = words[i];
  std::string value;
  if ((w == "-D" || w == "--define" || w == "-T" || w == "--table") && i + 1 < words.size()) {
    kind = w == "-D" || w == "--define" ? 'D' : 'T';
    value = words[i + 1];
  } else if ((w.starts_with("-D") || w.starts_with("-T")) && w.size() > 2 && w[1] != '-') {
    kind = w[1];
    value = w.substr(2);
  } else if (w.starts_with("--define=") || w.starts_with("--table=")) {
    kind = w.starts_with("--define=") ? 'D' : 'T';
    value = w.substr(w.find('=') + 1);
  } else {
    return "";
  }
  return value.substr(0, value.find('='));
}

} // namespace

/// A case may not set a param (-D) or table (-T) that the options comment sets: the
/// command line refuses a table set twice, so the instance could not be checked from
/// the command line as the annotations name it (docs/examples.md "Verdicts under
/// options"). Scalar options (--invocations, ...) may be overridden: the last counts.
void checkCaseOverrides(const Annotations &annotations, DiagnosticEngine &diags) {
  std::set<std::pair<char, std::string>> fileSets;
  for (size_t i = 0; i < annotations.options.size(); ++i) {
    char kind = 0;
    std::string name = definedName(annotations.options, i, kind);
    if (!name.empty())
      fileSets.insert({kind, name});
  }
  for (const Annotations::Case &c : annotations.cases)
    for (size_t i = 0; i < c.options.size(); ++i) {
      char kind = 0;
      std::string name = definedName(c.options, i, kind);
      if (!name.empty() && fileSets.count({kind, name}))
        diags.error(c.expect.range, "bad-annotation",
                    fmt::format("the expect comment sets {} '{}', which the options comment "
                                "sets too: set it in the expect comments only",
                                kind == 'D' ? "param" : "table", name));
    }
}

void parseAnnotationComment(std::string_view body, SourceRange range, bool alone,
                            Annotations &annotations, DiagnosticEngine &diags) {
  parseAnnotation(body, range, alone, annotations, diags);
}

namespace {

/// The annotations of a Python file: its comment lines (nothing but blanks before `#`)
/// `# expect: ...`, `# devices: ...`, `# mesh: ...`, `# options: ...`, read as the `//`
/// comments of a `.dk` file. `# dkv:` lines are the tracer's directives
/// (pytrace/Directives.h), not annotations.
Annotations readPythonAnnotations(const support::SourceFile &file,
                                  support::DiagnosticEngine &diags) {
  Annotations annotations;
  for (uint32_t line = 1; line <= file.lineCount(); ++line) {
    std::string_view text = file.lineText(line);
    size_t hash = text.find_first_not_of(" \t\f");
    if (hash == std::string_view::npos || text[hash] != '#')
      continue;
    std::string_view body = text.substr(hash + 1);
    size_t word = body.find_first_not_of(" \t");
    if (word != std::string_view::npos && body.substr(word, 4) == "dkv:")
      continue;
    while (!body.empty() && (body.back() == '\r' || body.back() == ' '))
      body.remove_suffix(1);
    support::SourceRange range{file.loc(line, static_cast<uint32_t>(hash + 1)),
                               file.loc(line, static_cast<uint32_t>(hash + 2 + body.size()))};
    parseAnnotationComment(body, range, true, annotations, diags);
  }
  checkCaseOverrides(annotations, diags);
  return annotations;
}

bool isPython(const support::SourceFile &file) {
  const std::string &n = file.name();
  return n.size() > 3 && n.compare(n.size() - 3, 3, ".py") == 0;
}

} // namespace

Annotations annotationsOf(const ast::Module &module, DiagnosticEngine &diags) {
  Annotations annotations;
  for (const ast::Comment &c : module.comments())
    parseAnnotationComment(c.text, c.range, c.alone, annotations, diags);
  checkCaseOverrides(annotations, diags);
  return annotations;
}

Annotations readAnnotations(const support::SourceFile &file, DiagnosticEngine &diags) {
  if (isPython(file))
    return readPythonAnnotations(file, diags);
  // The parser hands the comment tokens over, also when the file has syntax errors;
  // keep a file too large to read them (and the annotations' own errors) only.
  support::DiagnosticEngine all(diags.sources());
  std::unique_ptr<ast::Module> module = parseModule(file, all);
  for (const support::Diagnostic &d : all.diagnostics())
    if (d.id == "file-too-large")
      diags.report(d);
  return annotationsOf(*module, diags);
}

void printAnnotations(const Annotations &annotations, std::ostream &out) {
  if (annotations.expect) {
    out << "expect " << toString(annotations.expect->verdict);
    if (annotations.expect->line)
      out << " " << *annotations.expect->line;
    out << "\n";
  }
  for (const Annotations::Case &c : annotations.cases) {
    out << "expect-with " << toString(c.expect.verdict) << " ";
    out << (c.expect.line ? std::to_string(*c.expect.line) : std::string("-")) << " ";
    if (!c.devices.empty())
      out << fmt::format("{}", fmt::join(c.devices, ","));
    else if (!c.meshes.empty())
      out << fmt::format("mesh:{}", fmt::join(c.meshes, "/"));
    else
      out << "-";
    for (const std::string &w : c.options)
      out << " " << w;
    out << "\n";
  }
  if (!annotations.devices.empty())
    out << fmt::format("devices {}\n", fmt::join(annotations.devices, " "));
  if (!annotations.meshes.empty())
    out << fmt::format("mesh {}\n", fmt::join(annotations.meshes, " "));
  if (!annotations.options.empty())
    out << fmt::format("options {}\n", fmt::join(annotations.options, " "));
}

} // namespace dkv::frontend
