// Pictures of a trace: a self-contained SVG sequence diagram, and an HTML page that
// steps through it next to the kernel source (docs/traces.md). They draw a finding's
// trace, or the schedule of a run (`dkv run --trace-svg`), and only what the trace
// holds (report::Trace, built by semantics::replaySchedule for every engine): no
// semantics is derived here.
#pragma once

#include "report/Finding.h"
#include "support/Source.h"

#include <iosfwd>
#include <string>
#include <vector>

namespace dkv::report {

/// What a picture says about where its trace comes from.
struct PictureHeading {
  std::string instance; ///< e.g. "kernel k on mesh x=2"
  std::string command;  ///< how to check (or run) it again, e.g. "check k.dk --devices 2"
};

/// A sequence diagram of `finding`'s trace, as one SVG document (no external
/// resources): a title with the finding's kind, property, message, location, the
/// instance, engine and the command that checks it again, the witness, a legend of the
/// marks it uses, then one lane per device with time downwards and a row per trace
/// step (numbered as in the text trace):
///   - a device's step is a dot on its lane with its text and source line, wrapped
///     within its lane's column: no text crosses another lane;
///   - a DMA is an arrow from its start on the issuer to each landing on the target:
///     across in the gap below the start's row, down in the gutter left of the
///     target's lane, into the lane at the landing, labelled with its id and bytes left
///     of that lane in the landing's row, so it crosses no text; each DMA still in
///     flight after the last step is a dashed arrow in a row of its own below the end
///     line;
///   - devices that take no part (only entering, passing barriers and leaving; no DMA,
///     signal or mark reaches them) are folded into one narrow lane per run of them,
///     their equal steps in a row ("all 4: enter invocation 0");
///   - a deadlock's stuck waits are bars on their lanes to the bottom and boxes saying
///     what each waits for; no other picture draws blocked waits (the HTML page says
///     how long a wait waited);
///   - the semaphore values a step changed follow its text; under the end line, the
///     ones the trace left non-zero;
///   - the steps the finding is about (Trace::marks) are highlighted and labelled with
///     their source line.
/// Elements carry classes for tests and scripts: "lane" (data-devices: the devices it
/// holds, e.g. "3" or "4-7"; "folded" when several), "step" (data-step, data-last: the
/// 1-based steps of its row), "dma" (an arrow, data-dma), "signal", "mark" (data-line),
/// "blocked" (data-device). Deterministic: the same finding gives the same bytes.
void renderTraceSvg(std::ostream &out, const Finding &finding,
                    const support::SourceManager *sources, const PictureHeading &heading);

/// A self-contained HTML page (no external resources): controls that step through the
/// trace from step 1 (buttons, the keys Left/Right, Home/End), the current step's text
/// and every semaphore value up to it; the kernel source with the current step's line
/// highlighted and the finding's lines marked; the finding's explanation and usual fix
/// (report/Explain.h); the SVG of renderTraceSvg, its later steps dimmed.
void renderTraceHtml(std::ostream &out, const Finding &finding,
                     const support::SourceManager *sources, const PictureHeading &heading);

/// What a run's picture says in its title (`dkv run --trace-svg`): `title`, e.g.
/// "run of kernel k on mesh x=2: 23 steps, every device finished", then `notes` (the
/// schedule's seed, its findings).
struct ScheduleHeading {
  PictureHeading where;
  std::string title;
  std::vector<std::string> notes;
  /// The run ended with no step enabled: the devices blocked after it are stuck.
  bool stuck = false;
};

/// The picture of a schedule with no finding (a run's): as renderTraceSvg, titled by
/// `heading`.
void renderScheduleSvg(std::ostream &out, const Trace &trace, const support::SourceManager *sources,
                       const ScheduleHeading &heading);
/// Its page, as renderTraceHtml (no explanation).
void renderScheduleHtml(std::ostream &out, const Trace &trace,
                        const support::SourceManager *sources, const ScheduleHeading &heading);

/// `text` with the XML special characters (& < > " ') escaped.
std::string xmlEscape(const std::string &text);

} // namespace dkv::report
