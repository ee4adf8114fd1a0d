// Reading spin's results: pan's statistics and a trail replay mapped back to a trace.
#pragma once

#include "report/Finding.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dkv::promela {

/// What pan printed, as far as dkv cares. Numbers are -1 when absent.
struct PanReport {
  bool sawSummary = false; ///< the "State-vector ..., errors: N" line was found
  int64_t errors = -1;
  bool assertionViolated = false; ///< "assertion violated"
  std::string assertionText;      ///< the failed expression, as pan printed it
  bool invalidEndState = false;   ///< "invalid end state"
  bool depthTooSmall = false;     ///< "max search depth too small"
  bool outOfMemory = false;       ///< "out of memory" or "-DMEMLIM bound"
  bool searchNotCompleted = false;
  int64_t stateVectorBytes = -1;
  int64_t depthReached = -1;
  int64_t statesStored = -1;
  int64_t statesMatched = -1;
  int64_t transitions = -1;
  /// pan printed a count above 999999 in "%g" form (six significant digits): the
  /// counts are then its rounding, not exact.
  bool countsRounded = false;
  double memoryMb = -1;       ///< "total actual memory usage"
  double elapsedSeconds = -1; ///< "pan: elapsed time"
};

/// Parses pan's standard output. Never throws; unknown text is ignored.
PanReport parsePanOutput(const std::string &text);

/// One step of a replayed trail, from the model's `DKV` printf lines.
struct ReplayStep {
  enum class Kind { Device, Send, Land };
  Kind kind = Kind::Device;
  int32_t id = 0;    ///< DeviceId (Device) or DmaId (Send, Land)
  int32_t event = 0; ///< Device: the event index
};

/// The engine-neutral schedule of replayed steps (report::Schedule), for replaying
/// spin's counterexample in the executor. One ScheduleStep per ReplayStep, in order.
report::Schedule toSchedule(const std::vector<ReplayStep> &steps);

/// What `spin -T -t MODEL` printed when replaying pan's trail.
struct Replay {
  std::vector<ReplayStep> steps;
  int assertLine = 0;     ///< Promela line of the failed assert; 0 if none
  std::string assertText; ///< "assert(...)" as spin printed it
};

/// Parses the replay output (printf lines "DKV d DEV EV ...", "DKV s DMA ...",
/// "DKV l DMA ..." and spin's "MODEL:LINE, Error: assertion violated").
Replay parseReplay(const std::string &text);

} // namespace dkv::promela
