// `dkv check --trace-svg FILE | --trace-dir DIR | --trace-html FILE`: pictures of the
// findings' traces (report/Svg.h), written after each instance's report.
#pragma once

#include "driver/Engines.h"
#include "report/Finding.h"
#include "support/Source.h"

#include <cstddef>
#include <iosfwd>
#include <set>
#include <string>

namespace dkv::driver {

/// Checks the picture options before any instance runs: --trace-svg and --trace-html
/// draw one finding, so they refuse a run of several instances (`instances`).
/// Returns exit code 0, or 1 (usage) with a message on `err`.
int checkTraceOptions(const CheckOptions &check, size_t instances, std::ostream &err);

/// Writes the pictures the options ask for of one instance's verdict: --trace-svg and
/// --trace-html its one finding (an error when it has several: use --trace-dir),
/// --trace-dir one SVG per finding named `<kernel file stem>-N<devices>-<property>.svg`
/// (`<kind>-L<line>` for a static finding without a property; a name already written
/// in this call gets "-2", "-3", ...; `written` holds them). Returns exit code 0, or 1
/// (usage: the file cannot be written, several findings) with a message on `err`.
int writeTracePictures(const CheckOptions &check, const report::Verdict &verdict,
                       const std::string &file, int32_t devices,
                       const support::SourceManager *sources, const std::string &instance,
                       const std::string &command, std::set<std::string> &written,
                       std::ostream &err);

} // namespace dkv::driver
