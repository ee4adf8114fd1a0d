// `dkv check --explain`: a catalogue of the bug patterns dkv finds, each with a short
// plain-language explanation and the usual fix, and the classifier that picks a
// finding's entry from its shape (report::FindingShape), never from file or kernel
// names. docs/explain.md is this catalogue for readers; tests/report/ExplainTest.cpp
// checks that the two say the same, word for word.
#pragma once

#include "report/Finding.h"

#include <iosfwd>
#include <string>
#include <vector>

namespace dkv::report {

struct ExplainEntry {
  const char *id;    ///< stable, e.g. "run-ahead" (JSON `explain`, SARIF `properties.explain`)
  FindingKind kind;  ///< the kind of finding the pattern shows as
  const char *title; ///< one line, lowercase start, no period
  const char *what;  ///< what goes wrong, a few sentences
  const char *fix;   ///< the usual fix, a few sentences
};

/// Every entry, in the order of docs/explain.md.
const std::vector<ExplainEntry> &explainCatalogue();

/// The entry of `id`, or null.
const ExplainEntry *findExplainEntry(const std::string &id);

/// The entry that explains `finding`, picked from `finding.shape` (for a finding
/// without a shape, FindingShape::Check::None, the general entry of its kind). Never
/// null.
const ExplainEntry &explainFinding(const Finding &finding);

/// Renders the explanation of `finding` as the text report prints it after the
/// finding: "  explain [ID]: title", then the two paragraphs, wrapped at 88 columns
/// and indented by four spaces.
void renderExplanation(std::ostream &out, const Finding &finding);

} // namespace dkv::report
