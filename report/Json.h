// JSON rendering of verdicts, for tools that read dkv's results (pre-merge checks).
#pragma once

#include "report/Finding.h"
#include "report/Render.h"

#include <iosfwd>
#include <string>

namespace dkv::report {

/// Writes `verdict` as one JSON object (format version 1, keys sorted, two-space
/// indent, a final newline): status ("verified" | "findings" | "inconclusive"),
/// instance, engine, file (`file`: the file checked), reason, stats (times only with
/// `heading.timing`), and findings, each with kind, message, primary and secondary locations,
/// engine, confirmed, wrong_value, the trace steps and the schedule (in the schedule file's step
/// syntax, so it can be replayed with `dkv run --schedule`). Each location's "file" is the name of
/// its own file (SourceLoc::file) in `sources`; `file` if `sources` is null or has no such file.
/// The same verdict gives byte-identical output.
void renderVerdictJson(std::ostream &out, const Verdict &verdict, const std::string &file,
                       const support::SourceManager *sources, const VerdictHeading &heading);

} // namespace dkv::report
