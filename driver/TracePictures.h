// `dkv check --trace-svg FILE | --trace-dir DIR | --trace-html FILE`: pictures of the
// findings' traces (report/Svg.h), written after each instance's report; `dkv run
// --trace-svg | --trace-html`: the picture of the run's schedule.
#pragma once

#include "driver/Commands.h"
#include "driver/Engines.h"
#include "report/Finding.h"
#include "support/Source.h"

#include <cstddef>
#include <iosfwd>
#include <set>
#include <string>

namespace dkv::executor {
struct RunResult;
}

namespace dkv::driver {

/// Checks the picture options before any instance runs: --trace-svg and --trace-html
/// draw one finding, so they refuse a run of several instances (`instances`); --finding
/// needs one of them. Returns exit code 0, or 1 (usage) with a message on `err`.
int checkTraceOptions(const CheckOptions &check, size_t instances, std::ostream &err);

/// The id of a finding in picture names and for --finding: its property ("race.0"), or
/// `KIND-L<line>` for a finding of the static pre-check, which has none.
std::string findingId(const report::Finding &finding);

/// Writes the pictures the options ask for of one instance's verdict: --trace-svg and
/// --trace-html its one finding, or the one --finding names (an error when it has
/// several and none is named, or the named one is not among them: the message lists
/// them, with "did you mean"), --trace-dir an SVG and an HTML page per finding named
/// `<kernel file stem>-N<devices>-<finding id>.svg` and `.html` (a name already written
/// in this call gets "-2", "-3", ...; `written` holds them). Returns exit code 0, or 1
/// (usage: a file cannot be written, no finding picked) with a message on `err`.
int writeTracePictures(const CheckOptions &check, const report::Verdict &verdict,
                       const std::string &file, int32_t devices,
                       const support::SourceManager *sources, const std::string &instance,
                       const std::string &command, std::set<std::string> &written,
                       std::ostream &err);

/// `dkv run --trace-svg FILE | --trace-html FILE`: the picture of the schedule `run` took
/// (report::renderScheduleSvg), correct or not, titled with the instance, the run's
/// length and end, `policy` (e.g. "random schedule") and its input seed, and the
/// findings of the run. Returns exit code 0, or 1 when a file cannot be written.
int writeRunPictures(const semantics::Machine &machine, const support::SourceManager &sources,
                     const RunOptions &config, const executor::RunResult &run,
                     const std::string &policy, uint64_t inputSeed, std::ostream &err);

} // namespace dkv::driver
