// Pictures of a finding's trace: a self-contained SVG sequence diagram, and an HTML
// page that steps through it (docs/traces.md). They draw only what the trace holds
// (report::Trace, built by semantics::replaySchedule for every engine): no semantics
// is derived here.
#pragma once

#include "report/Finding.h"
#include "support/Source.h"

#include <iosfwd>
#include <string>

namespace dkv::report {

/// What a picture says about where the finding comes from.
struct PictureHeading {
  std::string instance; ///< e.g. "kernel k on mesh x=2"
  std::string command;  ///< how to check it again, e.g. "k.dk --devices 2"
};

/// A sequence diagram of `finding`'s trace, as one SVG document (no external
/// resources): a title with the finding's kind, property, message, location, the
/// instance, engine and the command that checks it again, the witness, a legend, then one lane per
/// device with time downwards, one row per trace step (numbered as in the text trace):
///   - a device's step is a dot on its lane with its text and source line;
///   - a DMA is an arrow from its start on the issuer to each landing on the target,
///     labelled with its id and bytes left of the target's lane in the landing's row
///     (its regions are in the start's text); each DMA still in flight after the last
///     step is a dashed arrow in a row of its own below the end line;
///   - a wait or barrier that blocked is a bar on its lane from where it blocked to
///     where it returned; a device still blocked after the last step gets a bar to
///     the bottom and a box saying what it waits for (the stuck waits of a deadlock);
///   - the semaphore values a step changed follow its text; under the end line, the
///     ones the trace left non-zero;
///   - the steps the finding is about (Trace::marks) are highlighted and labelled with
///     their source line.
/// Elements carry classes for tests and scripts: "lane" (one per device), "step"
/// (data-step = 1-based step number), "dma" (an arrow, data-dma), "mark" (data-line),
/// "blocked" (data-device). Deterministic: the same finding gives the same bytes.
void renderTraceSvg(std::ostream &out, const Finding &finding,
                    const support::SourceManager *sources, const PictureHeading &heading);

/// A self-contained HTML page (no external resources) with the SVG of
/// renderTraceSvg and controls that step through the trace: buttons and the keys
/// Left/Right (previous/next step), Home/End; later steps are dimmed, and a panel
/// shows the current step's text and every semaphore value up to it.
void renderTraceHtml(std::ostream &out, const Finding &finding,
                     const support::SourceManager *sources, const PictureHeading &heading);

/// `text` with the XML special characters (& < > " ') escaped.
std::string xmlEscape(const std::string &text);

} // namespace dkv::report
