// Plain-text rendering of findings, traces and verdicts: what a kernel author reads.
#pragma once

#include "report/Finding.h"
#include "support/Source.h"

#include <iosfwd>
#include <string>

namespace dkv::report {

/// Renders one finding in the clang style, then its trace:
///
///   file:L:C: race: message
///     <source line>
///     ^
///   file:L:C: note: label            (one per secondary span)
///     <source line>
///     ^
///   wrong value: ...                 (when shown)
///   trace (N steps, engine E[, confirmed by the executor]):
///   <timeline, one column per device>
///
/// `source` may be null (then locations print as line:col only, without snippets).
void renderFinding(std::ostream &out, const Finding &finding, const support::SourceFile *source);

/// Renders a trace as a timeline: a step number, then one column per device; a
/// device's steps and the steps of DMAs drawn on that device's column (a DMA is
/// drawn in the column of the device whose memory it changes), each with the source
/// line, then the semaphore values that changed.
void renderTrace(std::ostream &out, const Trace &trace);

/// Renders a verdict: its first line starts with "verified", "inconclusive" or
/// "N finding(s)", names the engine and gives its statistics; findings follow.
void renderVerdict(std::ostream &out, const Verdict &verdict, const support::SourceFile *source,
                   const std::string &engine);

} // namespace dkv::report
