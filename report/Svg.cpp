// SVG sequence diagrams of traces, and the HTML page that steps through one.
#include "report/Svg.h"

#include "report/Explain.h"
#include "report/Wrap.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <ostream>
#include <set>
#include <vector>

namespace dkv::report {

namespace {

using What = TraceStep::What;

// Geometry, in SVG user units (pixels at 100 %). Texts are monospace, so their width
// is known from their length: kCharWidth per character at kFont.
constexpr double kFont = 12;
constexpr double kCharWidth = 7.3;
constexpr double kSmallFont = 10.5;
constexpr double kSmallCharWidth = 6.4;
constexpr double kLeft = 66; // the step numbers
// Left of lane 0: room for the label of a DMA landing on device 0 (labels go left of
// the target's lane, in the landing's row, where no other text is).
constexpr double kLabelRoom = 110;
constexpr double kInFlightH = 22; // one row per DMA still in flight after the last step
constexpr double kLineH = 15;     // one text line in a row
constexpr double kSmallLineH = 13;
constexpr double kRowPad = 9; // space between rows
constexpr double kTitleFont = 15;
constexpr double kTitleCharWidth = 8.6;
// Left of each lane, a gutter where DMA arrows run down to their target: no text is
// there. Each arrow in flight at a time takes a slot of its own.
constexpr double kGutter = 24;
constexpr double kSlot = 5;
constexpr int kSlots = 4;
constexpr double kTextLeft = 10; // a step's text starts this far right of its lane
constexpr double kFoldedW = 190; // a lane of folded devices

const char *kFontFamily = "DejaVu Sans Mono, Menlo, Consolas, monospace";

// Colours (also named in the legend).
const char *kDmaColour = "#1f5fbf";
const char *kMarkColour = "#c8102e";
const char *kSemColour = "#7a3aa0";
const char *kContextColour = "#6b6b6b";

std::string num(double v) { return fmt::format("{:.1f}", v); }

/// `text` cut to `chars` characters, the last one an ellipsis when cut (only the
/// title's command and a DMA label too wide for a narrow lane are ever cut; their full
/// text is in the tooltip and the trace).
std::string cut(const std::string &text, size_t chars) {
  if (chars < 2)
    chars = 2;
  if (text.size() <= chars)
    return text;
  return text.substr(0, chars - 1) + "\u2026";
}

/// `text` wrapped to `chars` characters a line (report/Wrap.h).
std::vector<std::string> wrap(const std::string &text, size_t chars) {
  return wrapText(text, std::max<size_t>(chars, 8));
}

std::string lineOf(const SourceLoc &loc, const support::SourceManager *sources) {
  if (!loc.valid())
    return "";
  std::string_view file = loc.file != 0 && sources ? sources->name(loc.file) : "";
  return file.empty() ? fmt::format("line {}", loc.line)
                      : fmt::format("{} line {}", file, loc.line);
}

/// The text of a step as the text trace shows it: a DMA step names its DMA, then
/// `@L` (or `@file:L`) for its source line.
std::string stepText(const TraceStep &step, const support::SourceManager *sources) {
  std::string who = fmt::format("dma {}", step.actor.id);
  std::string text = step.actor.kind == Actor::Kind::Dma && step.text.rfind(who + " ", 0) != 0
                         ? who + ": " + step.text
                         : step.text;
  if (step.loc.valid()) {
    std::string_view file = step.loc.file != 0 && sources ? sources->name(step.loc.file) : "";
    text += file.empty() ? fmt::format(" @{}", step.loc.line)
                         : fmt::format(" @{}:{}", file, step.loc.line);
  }
  return text;
}

/// "1-3, 5" for {1, 2, 3, 5}.
std::string ranges(const std::vector<int32_t> &values) {
  std::string text;
  for (size_t i = 0; i < values.size();) {
    size_t j = i;
    while (j + 1 < values.size() && values[j + 1] == values[j] + 1)
      ++j;
    text += (i ? ", " : "") + std::to_string(values[i]) +
            (j > i ? (j == i + 1 ? ", " : "-") + std::to_string(values[j]) : "");
    i = j + 1;
  }
  return text;
}

/// The name of a folded lane of several processes: "devices 4-7"; on a TensorCore mesh
/// (`cores` per device) "devices 1-2" when it holds their every core, else the
/// processes' names.
std::string foldedName(const std::vector<int32_t> &processes, int32_t cores) {
  if (cores <= 0)
    return "devices " + ranges(processes);
  std::vector<int32_t> devices;
  for (int32_t p : processes)
    if (devices.empty() || devices.back() != p / cores)
      devices.push_back(p / cores);
  if (static_cast<int32_t>(processes.size()) == static_cast<int32_t>(devices.size()) * cores &&
      processes.front() % cores == 0)
    return (devices.size() == 1 ? "device " : "devices ") + ranges(devices);
  std::string text;
  for (int32_t p : processes)
    text += (text.empty() ? "" : ", ") + processName(p, cores);
  return text;
}

/// A lane: one device, or a run of devices that take no part (folded).
struct Column {
  std::vector<int32_t> devices;
  bool folded = false;
  double x = 0;     // the lane's line
  double width = 0; // to the next lane's line
  std::string name;
};

/// Everything placed in one row of the diagram: one step, or in a folded lane the
/// equal steps of several of its devices that follow each other.
struct Row {
  size_t first = 0, last = 0; // the steps (indices into Trace::steps)
  size_t column = 0;
  std::string full;                // the text, unwrapped (a tooltip when wrapped)
  std::vector<std::string> lines;  // the text, wrapped within the lane's column
  std::vector<std::string> small;  // semaphore values, then context, wrapped
  size_t semLines = 0;             // how many of `small` are semaphore values
  std::vector<std::string> labels; // the marks' labels, wrapped
  std::vector<uint32_t> markLines; // per label line: the mark's source line
  bool marked = false;
  double top = 0, height = 0;
  double y() const { return top + kLineH - 3; } // the baseline of the first line
  double mid() const { return top + kLineH / 2 - 4; }
  // Below the last text line, above the next row: arrows run across here.
  double bottom() const { return top + height - kRowPad + 2; }
};

/// What a picture is of: a finding's trace, or a run's schedule.
struct Subject {
  const Finding *finding = nullptr;
  const Trace &trace;
  const ScheduleHeading *schedule = nullptr;
  PictureHeading heading;
  /// The devices blocked after the last step are stuck (a deadlock, a stuck run).
  bool stuck = false;
};

class Picture {
public:
  Picture(const Subject &subject, const support::SourceManager *sources)
      : s_(subject), trace_(subject.trace), sources_(sources) {
    n_ = std::max<int32_t>(trace_.deviceCount, 1);
    for (const TraceStep &step : trace_.steps)
      n_ = std::max(n_, step.actor.device + 1);
    columns();
    layout();
  }

  void write(std::ostream &out, bool interactive) const;
  double width() const { return width_; }
  const std::vector<Row> &rowList() const { return rows_; }

private:
  size_t columnOf(int32_t device) const {
    return device >= 0 && static_cast<size_t>(device) < columnOf_.size() ? columnOf_[device] : 0;
  }
  double laneX(int32_t device) const { return cols_[columnOf(device)].x; }
  /// Characters of text at `charWidth` that fit in column c, between the lane and the
  /// gutter of the next one.
  size_t textChars(size_t c, double charWidth) const {
    return static_cast<size_t>((cols_[c].width - kTextLeft - kGutter - 4) / charWidth);
  }
  void columns();
  void layout();
  void title(std::string &svg) const;
  void legend(std::string &svg) const;
  void lanes(std::string &svg) const;
  void rows(std::string &svg) const;
  void arrows(std::string &svg) const;
  void stuckBars(std::string &svg) const;
  void ending(std::string &svg) const;
  /// The `index`-th DMA still in flight after the last step: a dashed arrow from its
  /// issuer's lane to its target's lane in its own row below the end line.
  void inFlight(std::string &svg, size_t index, int32_t from, int32_t to, const std::string &label,
                int32_t dma, size_t step, bool marked) const;

  const Subject &s_;
  const Trace &trace_;
  const support::SourceManager *sources_;
  int32_t n_ = 1;
  std::vector<Column> cols_;
  std::vector<size_t> columnOf_; // per device
  std::vector<size_t> rowOf_;    // per step
  double width_ = 0, height_ = 0;
  std::vector<std::pair<std::string, double>> titleLines_; // text, font size
  struct LegendItem {
    std::string symbol, text;
  };
  std::vector<LegendItem> legendItems_;
  double legendTop_ = 0, lanesTop_ = 0, rowsTop_ = 0, endY_ = 0, inFlightTop_ = 0, boxesTop_ = 0;
  std::vector<Row> rows_;
  std::vector<std::vector<std::string>> boxes_; // per Trace::blocked entry: its lines
  std::vector<std::string> endSems_;            // the semaphore values after the last step
};

void Picture::columns() {
  // A device takes part when it does more than enter, pass barriers and leave, or a
  // DMA or signal reaches it, or the finding is about one of its steps.
  std::vector<bool> part(static_cast<size_t>(n_), false);
  auto takesPart = [&](int32_t d) {
    if (d >= 0 && d < n_)
      part[d] = true;
  };
  std::map<int32_t, const TraceStep *> starts;
  for (const TraceStep &step : trace_.steps) {
    const bool bookkeeping =
        step.actor.kind == Actor::Kind::Device &&
        (step.what == What::Enter || step.what == What::Barrier || step.what == What::Exit);
    if (!bookkeeping)
      takesPart(step.actor.device);
    if (step.what == What::DmaStart || step.what == What::Signal || step.what == What::Send ||
        step.what == What::Land)
      takesPart(step.peer);
    if (step.what == What::DmaStart)
      starts[step.dma] = &step;
  }
  for (const TraceMark &m : trace_.marks)
    if (m.step >= 0 && static_cast<size_t>(m.step) < trace_.steps.size())
      takesPart(trace_.steps[m.step].actor.device);
  for (const TraceStep &b : trace_.blocked)
    takesPart(b.actor.device);
  for (int32_t k : trace_.inFlight)
    if (auto it = starts.find(k); it != starts.end()) {
      takesPart(it->second->actor.device);
      takesPart(it->second->peer);
    }
  // Folding pays from three lanes on, and only when some lane stays.
  const bool fold = n_ >= 3 && std::count(part.begin(), part.end(), true) > 0;
  columnOf_.assign(static_cast<size_t>(n_), 0);
  for (int32_t d = 0; d < n_; ++d) {
    const bool idle = fold && !part[d];
    if (idle && !cols_.empty() && cols_.back().folded)
      cols_.back().devices.push_back(d);
    else
      cols_.push_back({{d}, idle, 0, 0, ""});
    columnOf_[d] = cols_.size() - 1;
  }
  size_t active = 0;
  for (const Column &c : cols_)
    active += !c.folded;
  const double laneW = active <= 2 ? 430 : active <= 4 ? 340 : 280;
  double x = kLeft + kLabelRoom + 18;
  for (Column &c : cols_) {
    c.x = x;
    c.width = c.folded ? kFoldedW : laneW;
    x += c.width;
    if (!c.folded)
      c.name = processName(c.devices[0], trace_.cores);
    else if (c.devices.size() == 1)
      c.name = processName(c.devices[0], trace_.cores) + " (idle)";
    else
      c.name = foldedName(c.devices, trace_.cores);
  }
  width_ = std::max(x + 10, 760.0);
}

void Picture::layout() {
  const Finding *f = s_.finding;
  // Title: kind, message, property; where; witness; wrong value; notes (a run's: its
  // title and notes).
  const size_t titleChars = static_cast<size_t>((width_ - 40) / kTitleCharWidth);
  const size_t smallChars = static_cast<size_t>((width_ - 40) / kCharWidth);
  auto add = [&](const std::string &text) {
    for (const std::string &line : wrap(text, smallChars))
      titleLines_.push_back({line, kFont});
  };
  if (f) {
    std::string head = fmt::format("{}: {}", findingKindName(f->kind), f->message);
    if (!f->property.empty())
      head += fmt::format(" [{}]", f->property);
    for (const std::string &line : wrap(head, titleChars))
      titleLines_.push_back({line, kTitleFont});
    std::string where;
    if (f->primary.loc.valid()) {
      std::string_view file = sources_ ? sources_->name(f->primary.loc.file) : "";
      where = fmt::format("{}:{}:{}", file.empty() ? "line" : file, f->primary.loc.line,
                          f->primary.loc.col);
    }
    std::string info;
    for (const std::string &p :
         {where, s_.heading.instance, f->engine.empty() ? std::string() : "engine " + f->engine,
          std::string(f->confirmed ? "replayed in the executor" : "")})
      if (!p.empty())
        info += (info.empty() ? "" : "  \u00b7  ") + p;
    add(info);
    if (!s_.heading.command.empty())
      add("check it again: dkv " + s_.heading.command);
    if (!f->detail.empty())
      add("witness: " + f->detail);
    if (!f->wrongValue.empty())
      add("wrong value: " + f->wrongValue);
    for (const Span &span : f->secondary)
      add(fmt::format("note ({}): {}", lineOf(span.loc, sources_), span.label));
    if (trace_.steps.empty())
      add("no trace: this finding holds without a schedule (static pre-check)");
  } else {
    for (const std::string &line : wrap(s_.schedule->title, titleChars))
      titleLines_.push_back({line, kTitleFont});
    if (!s_.heading.command.empty())
      add("run it again: dkv " + s_.heading.command);
    for (const std::string &note : s_.schedule->notes)
      add(note);
  }
  double y = 20;
  for (const auto &[text, size] : titleLines_)
    y += size + 6;
  legendTop_ = y + 6;

  // The legend names the marks this picture uses.
  bool lands = false, sends = false, signals = false, sems = false;
  for (const TraceStep &step : trace_.steps) {
    lands = lands || step.what == What::Land;
    sends = sends || step.what == What::Send;
    signals = signals || (step.what == What::Signal && step.actor.kind == Actor::Kind::Device &&
                          step.peer >= 0 && step.peer != step.actor.device && step.peer < n_);
    sems = sems || !step.semValues.empty();
  }
  bool folded = false;
  for (const Column &c : cols_)
    folded = folded || c.folded;
  legendItems_.push_back(
      {R"(<circle cx="10" cy="-4" r="4" fill="#333"/>)", "device step (@L: its source line)"});
  if (lands)
    legendItems_.push_back(
        {fmt::format(R"(<line x1="0" y1="-4" x2="22" y2="-4" stroke="{}" stroke-width="2" )"
                     R"~(marker-end="url(#arrow)"/>)~",
                     kDmaColour),
         "dma: start -> landing"});
  if (sends)
    legendItems_.push_back(
        {fmt::format(R"(<rect x="6" y="-8" width="8" height="8" fill="{}"/>)", kDmaColour),
         "dma sent: source read, send sem +="});
  if (signals)
    legendItems_.push_back(
        {fmt::format(R"(<line x1="0" y1="-4" x2="20" y2="-4" stroke="{}" stroke-width="1.3" )"
                     R"~(marker-end="url(#sigarrow)"/>)~",
                     kSemColour),
         "signal: sem += on another device"});
  if (!trace_.inFlight.empty())
    legendItems_.push_back(
        {fmt::format(R"(<line x1="0" y1="-4" x2="22" y2="-4" stroke="{}" stroke-width="2" )"
                     R"~(stroke-dasharray="5,3" marker-end="url(#arrow)"/>)~",
                     kDmaColour),
         "dma still in flight at the end"});
  if (s_.stuck && !trace_.blocked.empty())
    legendItems_.push_back(
        {fmt::format(R"(<rect x="7" y="-12" width="6" height="16" fill="{}" opacity="0.6"/>)",
                     kMarkColour),
         "stuck wait (never returns)"});
  if (!trace_.marks.empty())
    legendItems_.push_back(
        {fmt::format(R"(<rect x="0" y="-12" width="22" height="16" fill="{}" opacity="0.15" )"
                     R"(stroke="{}"/>)",
                     kMarkColour, kMarkColour),
         "what the finding is about"});
  if (sems)
    legendItems_.push_back({fmt::format(R"(<text x="0" y="0" font-size="{}" fill="{}">s@1</text>)",
                                        num(kSmallFont), kSemColour),
                            "semaphore s on device 1 after the step"});
  if (folded)
    legendItems_.push_back(
        {R"(<line x1="11" y1="-12" x2="11" y2="4" stroke="#9a9a9a" stroke-dasharray="3,3"/>)",
         "devices with no part in it, folded"});
  double lx = 20, lines = 1;
  for (const LegendItem &item : legendItems_) {
    double w = 30 + item.text.size() * kCharWidth + 26;
    if (lx + w > width_ - 10 && lx > 20) {
      lx = 20;
      ++lines;
    }
    lx += w;
  }
  lanesTop_ = legendTop_ + lines * 22 + 12;
  rowsTop_ = lanesTop_ + 34;

  // Rows: one per step; in a folded lane, equal steps of its devices in a row.
  std::map<int32_t, std::string> lastContext;
  std::vector<std::vector<const TraceMark *>> marksOf(trace_.steps.size());
  for (const TraceMark &m : trace_.marks)
    if (m.step >= 0 && static_cast<size_t>(m.step) < trace_.steps.size())
      marksOf[m.step].push_back(&m);
  rowOf_.assign(trace_.steps.size(), 0);
  std::vector<std::vector<int32_t>> devicesOf; // per row, for a folded lane's prefix
  for (size_t i = 0; i < trace_.steps.size(); ++i) {
    const TraceStep &step = trace_.steps[i];
    const size_t c = columnOf(step.actor.device);
    const std::string text = stepText(step, sources_);
    if (cols_[c].folded && !rows_.empty() && rows_.back().column == c &&
        rows_.back().last + 1 == i && rows_.back().full == text) {
      rows_.back().last = i;
      devicesOf.back().push_back(step.actor.device);
      rowOf_[i] = rows_.size() - 1;
      continue;
    }
    Row row;
    row.first = row.last = i;
    row.column = c;
    row.full = text;
    rows_.push_back(row);
    devicesOf.push_back({step.actor.device});
    rowOf_[i] = rows_.size() - 1;
  }
  y = rowsTop_;
  for (size_t r = 0; r < rows_.size(); ++r) {
    Row &row = rows_[r];
    const Column &col = cols_[row.column];
    std::string text = row.full;
    if (col.devices.size() > 1) {
      std::vector<int32_t> ds = devicesOf[r];
      std::sort(ds.begin(), ds.end());
      ds.erase(std::unique(ds.begin(), ds.end()), ds.end());
      text = (ds.size() == col.devices.size()
                  ? fmt::format("all {}", ds.size())
                  : fmt::format("{} {}", ds.size() == 1 ? "device" : "devices", ranges(ds))) +
             ": " + text;
    }
    row.full = text;
    row.lines = wrap(text, textChars(row.column, kCharWidth));
    std::string sems, context;
    for (size_t i = row.first; i <= row.last; ++i) {
      const TraceStep &step = trace_.steps[i];
      for (const auto &[name, value] : step.semValues)
        sems += fmt::format("{}{} = {}", sems.empty() ? "" : "   ", name, value);
      std::string &last = lastContext[step.actor.device];
      if (step.actor.kind == Actor::Kind::Device && !step.context.empty() && step.context != last) {
        if (i == row.first)
          context = "[" + step.context + "]";
        last = step.context;
      }
    }
    const size_t smallChars = textChars(row.column, kSmallCharWidth);
    if (!sems.empty())
      row.small = wrap(sems, smallChars);
    row.semLines = row.small.size();
    if (!context.empty()) {
      // After the semaphore values on their last line when it fits there.
      if (!row.small.empty() && row.small.back().size() + 3 + context.size() <= smallChars)
        row.small.back() += "   " + context;
      else
        for (const std::string &l : wrap(context, smallChars))
          row.small.push_back(l);
    }
    for (size_t i = row.first; i <= row.last; ++i)
      for (const TraceMark *m : marksOf[i]) {
        const TraceStep &step = trace_.steps[i];
        std::string label = fmt::format("\u25b2 {}", m->label);
        if (step.loc.valid())
          label += ", " + lineOf(step.loc, sources_);
        for (const std::string &l : wrap(label, textChars(row.column, kCharWidth))) {
          row.labels.push_back(l);
          row.markLines.push_back(step.loc.valid() ? step.loc.line : 0);
        }
        row.marked = true;
      }
    row.top = y;
    row.height = row.lines.size() * kLineH + row.small.size() * kSmallLineH +
                 row.labels.size() * kLineH + kRowPad;
    y += row.height;
  }
  endY_ = y + 14;
  // Below the end line: "after step N", the semaphores the trace left non-zero, one row
  // per DMA still in flight, then the boxes of the stuck devices.
  std::map<std::string, int64_t> last;
  for (const TraceStep &step : trace_.steps)
    for (const auto &[name, value] : step.semValues)
      last[name] = value;
  std::string nonZero;
  for (const auto &[name, value] : last)
    if (value != 0)
      nonZero += fmt::format("{}{} = {}", nonZero.empty() ? "" : "   ", name, value);
  if (!last.empty()) {
    // Left of the "after step N" text, which is at most 60 characters at the right.
    const size_t chars =
        static_cast<size_t>((width_ - 40 - 60 * kSmallCharWidth) / kSmallCharWidth);
    endSems_ =
        wrap(nonZero.empty() ? std::string("every semaphore the trace changed is 0 at the end")
                             : "non-zero at the end: " + nonZero,
             chars);
  }
  inFlightTop_ = endY_ + 20 + (endSems_.empty() ? 0 : endSems_.size() * kLineH);
  boxesTop_ = inFlightTop_ + trace_.inFlight.size() * kInFlightH + 10;
  double boxes = 0;
  if (s_.stuck)
    for (const TraceStep &b : trace_.blocked) {
      std::string text = b.text;
      if (b.loc.valid())
        text += " (" + lineOf(b.loc, sources_) + ")";
      const double w = cols_[columnOf(b.actor.device)].width - 12;
      boxes_.push_back(wrap(text, static_cast<size_t>((w - 16) / kSmallCharWidth)));
      boxes = std::max(boxes, boxes_.back().size() * (kSmallFont + 4) + 28);
    }
  height_ = boxesTop_ + boxes + 24;
}

void Picture::title(std::string &svg) const {
  double y = 20;
  bool first = true;
  for (const auto &[text, size] : titleLines_) {
    y += size + (first ? 0 : 6);
    svg += fmt::format(R"(<text x="20" y="{}" font-size="{}"{}{}>{}</text>)"
                       "\n",
                       num(y), num(size), size == kTitleFont ? R"( font-weight="bold")" : "",
                       size == kTitleFont && s_.finding ? fmt::format(R"( fill="{}")", kMarkColour)
                                                        : "",
                       xmlEscape(text));
    first = false;
  }
}

void Picture::legend(std::string &svg) const {
  // Each item: a symbol in 28 units, then its text; items wrap onto further lines.
  double x = 20, y = legendTop_ + 14;
  svg += R"(<g class="legend">)"
         "\n";
  for (const LegendItem &item : legendItems_) {
    double w = 30 + item.text.size() * kCharWidth + 26;
    if (x + w > width_ - 10 && x > 20) {
      x = 20;
      y += 22;
    }
    svg += fmt::format(R"~(<g transform="translate({},{})">{}</g>)~", num(x), num(y), item.symbol);
    svg += fmt::format(R"(<text x="{}" y="{}">{}</text>)"
                       "\n",
                       num(x + 30), num(y), xmlEscape(item.text));
    x += w;
  }
  svg += "</g>\n";
}

void Picture::lanes(std::string &svg) const {
  double bottom = height_ - 16;
  for (const Column &c : cols_) {
    const double box = std::min(
        c.width - 20, std::max(80.0, static_cast<double>(c.name.size()) * kCharWidth + 14));
    const std::string devices = c.devices.size() == 1
                                    ? std::to_string(c.devices[0])
                                    : fmt::format("{}-{}", c.devices.front(), c.devices.back());
    svg +=
        fmt::format(R"(<g class="lane{}" data-devices="{}">)", c.folded ? " folded" : "", devices);
    svg += fmt::format(R"(<line x1="{0}" y1="{1}" x2="{0}" y2="{2}" stroke="#9a9a9a" )"
                       R"(stroke-width="1.5"{3}/>)",
                       num(c.x), num(lanesTop_ + 24), num(bottom),
                       c.folded ? R"( stroke-dasharray="3,3")" : "");
    svg +=
        fmt::format(R"(<rect x="{}" y="{}" width="{}" height="24" rx="4" fill="{}" )"
                    R"(stroke="#9a9a9a"/>)",
                    num(c.x - box / 2), num(lanesTop_), num(box), c.folded ? "#f6f6f6" : "#eef2f8");
    svg += fmt::format(R"(<text x="{}" y="{}" text-anchor="middle"{}>)"
                       R"({}</text></g>)"
                       "\n",
                       num(c.x), num(lanesTop_ + 16),
                       c.folded ? fmt::format(R"( fill="{}")", kContextColour)
                                : std::string(R"( font-weight="bold")"),
                       xmlEscape(cut(c.name, static_cast<size_t>((box - 8) / kCharWidth))));
  }
}

void Picture::rows(std::string &svg) const {
  for (const Row &row : rows_) {
    const TraceStep &step = trace_.steps[row.first];
    const Column &col = cols_[row.column];
    const double x = col.x;
    svg += fmt::format(R"(<g class="step" data-step="{}" data-last="{}" data-device="{}">)",
                       row.first + 1, row.last + 1, step.actor.device);
    // The background of the row (the HTML page colours the current one), and a
    // tint for a marked one.
    svg += fmt::format(R"(<rect class="rowbg" x="{}" y="{}" width="{}" height="{}" )"
                       R"(fill="{}" fill-opacity="{}"{}/>)",
                       num(4), num(row.top - 3), num(width_ - 8), num(row.height - 3),
                       row.marked ? kMarkColour : "#ffffff", row.marked ? "0.08" : "0",
                       row.marked ? fmt::format(R"( stroke="{}")", kMarkColour) : "");
    svg += fmt::format(R"(<text x="{}" y="{}" text-anchor="end" fill="{}"{}>{}.</text>)",
                       num(kLeft - 8), num(row.y()), kContextColour,
                       row.last > row.first ? fmt::format(R"( font-size="{}")", num(kSmallFont))
                                            : std::string(),
                       row.last > row.first ? fmt::format("{}-{}", row.first + 1, row.last + 1)
                                            : std::to_string(row.first + 1));
    // The marker on the lane: a dot for a device's step, a square for a DMA's send,
    // nothing for a landing (the arrow's head is there).
    switch (step.what) {
    case What::Send:
      svg += fmt::format(R"(<rect x="{}" y="{}" width="8" height="8" fill="{}"/>)", num(x - 4),
                         num(row.mid() - 4), kDmaColour);
      break;
    case What::Land:
      break;
    case What::DmaStart:
      svg += fmt::format(R"(<circle cx="{}" cy="{}" r="5" fill="{}"/>)", num(x), num(row.mid()),
                         kDmaColour);
      break;
    default:
      svg += fmt::format(R"(<circle cx="{}" cy="{}" r="4" fill="{}"/>)", num(x), num(row.mid()),
                         col.folded ? "#9a9a9a" : "#333");
    }
    double y = row.y();
    const std::string fill = step.actor.kind == Actor::Kind::Dma
                                 ? fmt::format(R"( fill="{}")", kDmaColour)
                             : col.folded ? fmt::format(R"( fill="{}")", kContextColour)
                                          : std::string();
    for (size_t k = 0; k < row.lines.size(); ++k) {
      svg += fmt::format(R"(<text class="halo" x="{}" y="{}"{}>{})", num(x + kTextLeft), num(y),
                         fill, xmlEscape(row.lines[k]));
      if (k == 0 && row.lines.size() > 1)
        svg += fmt::format("<title>{}</title>", xmlEscape(row.full));
      svg += "</text>";
      y += kLineH;
    }
    y -= kLineH - kSmallLineH;
    for (size_t k = 0; k < row.small.size(); ++k) {
      // Semaphore values (purple), then the context (grey).
      svg += fmt::format(
          R"(<text class="halo {}" x="{}" y="{}" font-size="{}" fill="{}">{}</text>)",
          k < row.semLines ? "sem" : "context", num(x + kTextLeft), num(y), num(kSmallFont),
          k < row.semLines ? kSemColour : kContextColour, xmlEscape(row.small[k]));
      y += kSmallLineH;
    }
    y += kLineH - kSmallLineH;
    for (size_t k = 0; k < row.labels.size(); ++k) {
      svg += fmt::format(R"(<text class="halo mark" x="{}" y="{}" data-line="{}" )"
                         R"(font-weight="bold" fill="{}">{}</text>)",
                         num(x + kTextLeft), num(y), row.markLines[k], kMarkColour,
                         xmlEscape(row.labels[k]));
      y += kLineH;
    }
    svg += "</g>\n";
  }
}

void Picture::arrows(std::string &svg) const {
  // Each DMA's start step; an arrow to each of its landings, and a dashed one below the
  // end line for a DMA still in flight after the last step.
  std::map<int32_t, size_t> start;
  for (size_t i = 0; i < trace_.steps.size(); ++i)
    if (trace_.steps[i].what == What::DmaStart)
      start[trace_.steps[i].dma] = i;
  auto label = [](const TraceStep &s) {
    std::string text = fmt::format("dma {}: {} B", s.dma, s.bytes);
    if (s.chunks > 1)
      text += fmt::format(", chunk {}/{}", s.chunk + 1, s.chunks);
    return text;
  };
  // Per lane, per gutter slot: the spans of the arrows running down it.
  std::vector<std::vector<std::vector<std::pair<double, double>>>> slots(
      cols_.size(), std::vector<std::vector<std::pair<double, double>>>(kSlots));
  for (size_t i = 0; i < trace_.steps.size(); ++i) {
    const TraceStep &s = trace_.steps[i];
    if (s.what != What::Land)
      continue;
    auto it = start.find(s.dma);
    if (it == start.end())
      continue; // cannot happen: a DMA lands after its start, which is in the trace
    const TraceStep &from = trace_.steps[it->second];
    const Row &a = rows_[rowOf_[it->second]], &b = rows_[rowOf_[i]];
    const size_t to = columnOf(s.actor.device);
    const double x1 = laneX(from.actor.device), x2 = cols_[to].x;
    const double y1 = a.mid(), across = a.bottom(), y2 = b.mid();
    // The first slot of the target's gutter free over the arrow's way down.
    int slot = kSlots - 1;
    for (int k = 0; k < kSlots; ++k) {
      bool free = true;
      for (const auto &[top, end] : slots[to][k])
        free = free && (end < across - 1 || top > y2 + 1);
      if (free) {
        slot = k;
        break;
      }
    }
    slots[to][slot].push_back({across, y2});
    const double down = x2 - 6 - slot * kSlot;
    // Down the issuer's lane to below the start's row, across in the gap between rows
    // (no text is there), down the gutter left of the target's lane (no text is there
    // either), into the lane at the landing: the arrow crosses no step's text.
    svg += fmt::format(R"(<g class="dma" data-dma="{}" data-step="{}">)", s.dma, i + 1);
    svg +=
        fmt::format(R"(<path d="M {} {} V {} H {} V {} H {}" fill="none" stroke="{}" )"
                    R"~(stroke-width="2" marker-end="url(#arrow)"/>)~",
                    num(x1), num(y1 + 5), num(across), num(down), num(y2), num(x2 - 4), kDmaColour);
    // A landing's row holds only the landing's text, right of the target's lane: the
    // label goes left of the lane's gutter in that row (lane 0 has kLabelRoom for it),
    // where it meets no other text; cut when it is wider than that (the landing's text
    // is whole).
    const double right = x2 - kGutter - 2;
    const double left = to == 0 ? kLeft + 4 : cols_[to - 1].x + kTextLeft;
    const std::string full = label(s);
    const std::string shown = cut(full, static_cast<size_t>((right - left - 6) / kSmallCharWidth));
    const double w = shown.size() * kSmallCharWidth + 6;
    svg += fmt::format(R"(<rect x="{}" y="{}" width="{}" height="{}" fill="#ffffff" )"
                       R"(fill-opacity="0.9"/>)",
                       num(right - w), num(y2 + 4 - kSmallFont), num(w), num(kSmallFont + 4));
    svg += fmt::format(R"(<text x="{}" y="{}" font-size="{}" fill="{}" text-anchor="end">)"
                       R"({}{}</text>)",
                       num(right - 3), num(y2 + 4), num(kSmallFont), kDmaColour, xmlEscape(shown),
                       shown != full ? fmt::format("<title>{}</title>", xmlEscape(full)) : "");
    svg += "</g>\n";
  }
  // A signal to another device: a thin purple arrow from the signalling device's dot,
  // down to the bottom of its row and across to the target's lane (below the row's
  // texts), so that who signals whom reads like the DMAs' arrows.
  for (size_t i = 0; i < trace_.steps.size(); ++i) {
    const TraceStep &s = trace_.steps[i];
    if (s.what != What::Signal || s.actor.kind != Actor::Kind::Device || s.peer < 0 ||
        s.peer == s.actor.device || s.peer >= n_)
      continue;
    const Row &row = rows_[rowOf_[i]];
    const double x1 = laneX(s.actor.device), x2 = laneX(s.peer), y = row.bottom() - 1;
    svg += fmt::format(R"(<g class="signal" data-step="{}" data-device="{}" data-target="{}">)"
                       R"(<path d="M {} {} V {} H {}" fill="none" stroke="{}" )"
                       R"~(stroke-width="1.3" marker-end="url(#sigarrow)"/></g>)~"
                       "\n",
                       i + 1, s.actor.device, s.peer, num(x1), num(row.mid() + 4), num(y),
                       num(x2 + (x2 > x1 ? -3 : 3)), kSemColour);
  }
  for (size_t j = 0; j < trace_.inFlight.size(); ++j) {
    const int32_t k = trace_.inFlight[j];
    auto it = start.find(k);
    if (it == start.end())
      continue;
    const TraceStep &from = trace_.steps[it->second];
    // The DMA the finding is about (its start is marked) keeps the mark's colour here.
    const bool marked = rows_[rowOf_[it->second]].marked;
    inFlight(svg, j, from.actor.device, from.peer,
             fmt::format("{}dma {}: {} B in flight since step {}", marked ? "\u25b2 " : "", k,
                         from.bytes, it->second + 1),
             k, it->second + 1, marked);
  }
}

void Picture::inFlight(std::string &svg, size_t index, int32_t from, int32_t to,
                       const std::string &label, int32_t dma, size_t step, bool marked) const {
  // Drawn below the end line, one row each, so that neither the arrows nor their labels
  // cross the steps' texts or each other; the label names the step that started it.
  const double y = inFlightTop_ + index * kInFlightH + 12;
  const double x1 = laneX(from), x2 = laneX(to);
  svg += fmt::format(R"(<g class="dma inflight" data-dma="{}" data-step="{}">)", dma, step);
  std::string style = fmt::format(R"(fill="none" stroke="{}" stroke-width="1.6" )"
                                  R"~(stroke-dasharray="6,4" marker-end="url(#arrow)")~",
                                  kDmaColour);
  if (from == to)
    svg += fmt::format(R"(<path d="M {} {} H {}" {}/>)", num(x1 - kGutter), num(y + 3), num(x1 - 5),
                       style);
  else
    svg += fmt::format(R"(<circle cx="{}" cy="{}" r="3.5" fill="{}"/>)"
                       R"(<path d="M {} {} H {}" {}/>)",
                       num(x1), num(y + 3), kDmaColour, num(x1), num(y + 3),
                       num(x2 + (x2 > x1 ? -4 : 4)), style);
  const double lx = std::min(x1, x2) + 10;
  const size_t room = static_cast<size_t>((width_ - 10 - lx) / kSmallCharWidth);
  svg += fmt::format(R"(<text class="halo" x="{}" y="{}" font-size="{}" fill="{}"{}>{}</text>)",
                     num(lx), num(y - 3), num(kSmallFont), marked ? kMarkColour : kDmaColour,
                     marked ? R"( font-weight="bold")" : "", xmlEscape(cut(label, room)));
  svg += "</g>\n";
}

void Picture::stuckBars(std::string &svg) const {
  // A stuck device's bar runs from the row where it was first found blocked to its box.
  if (!s_.stuck)
    return;
  for (const TraceStep &b : trace_.blocked) {
    const double x = laneX(b.actor.device);
    const double top =
        b.blockedSince < 0 ? rowsTop_
        : static_cast<size_t>(b.blockedSince) < trace_.steps.size()
            ? rows_[rowOf_[b.blockedSince]].top - 3
            : endY_ - 8; // blocked since the last step: the bar starts below the last row
    svg += fmt::format(R"(<rect class="wait" data-device="{}" data-step="{}" x="{}" y="{}" )"
                       R"(width="6" height="{}" fill="{}" opacity="0.6"/>)"
                       "\n",
                       b.actor.device, b.blockedSince + 1, num(x - 3), num(top),
                       num(std::max(2.0, boxesTop_ - top)), kMarkColour);
  }
}

void Picture::ending(std::string &svg) const {
  const size_t last = trace_.steps.size();
  const bool boxes = s_.stuck && !trace_.blocked.empty();
  svg += fmt::format(R"(<g class="end" data-step="{}">)", last);
  svg += fmt::format(R"(<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="#9a9a9a" )"
                     R"(stroke-dasharray="2,3"/>)",
                     num(8), num(endY_), num(width_ - 8), num(endY_));
  svg += fmt::format(R"(<text x="{}" y="{}" text-anchor="end" fill="{}" font-size="{}">)"
                     R"(after step {}{}</text>)",
                     num(width_ - 10), num(endY_ + 13), kContextColour, num(kSmallFont), last,
                     trace_.inFlight.empty() && !boxes ? ""
                     : !boxes                          ? ": dmas in flight below"
                     : trace_.inFlight.empty()         ? ": stuck devices below"
                                               : ": dmas in flight and stuck devices below");
  for (size_t i = 0; i < endSems_.size(); ++i)
    svg += fmt::format(R"(<text class="endsems" x="{}" y="{}" font-size="{}" fill="{}">{}</text>)",
                       num(20), num(endY_ + 13 + i * kLineH), num(kSmallFont), kSemColour,
                       xmlEscape(endSems_[i]));
  svg += "</g>\n";
  if (!boxes)
    return;
  for (size_t i = 0; i < trace_.blocked.size(); ++i) {
    const TraceStep &b = trace_.blocked[i];
    const std::vector<std::string> &lines = boxes_[i];
    const Column &col = cols_[columnOf(b.actor.device)];
    const double x = col.x - 8;
    const double h = lines.size() * (kSmallFont + 4) + 26;
    svg +=
        fmt::format(R"(<g class="blocked mark" data-device="{}" data-step="{}"{}>)", b.actor.device,
                    last, b.loc.valid() ? fmt::format(R"( data-line="{}")", b.loc.line) : "");
    svg +=
        fmt::format(R"(<rect x="{}" y="{}" width="{}" height="{}" rx="5" fill="{}" )"
                    R"(fill-opacity="0.1" stroke="{}" stroke-width="2"/>)",
                    num(x), num(boxesTop_), num(col.width - 12), num(h), kMarkColour, kMarkColour);
    double y = boxesTop_ + 16;
    svg += fmt::format(R"(<text x="{}" y="{}" font-weight="bold" fill="{}">)"
                       R"(&#x25b2; stuck: {}</text>)",
                       num(x + 8), num(y), kMarkColour,
                       xmlEscape(processName(b.actor.device, trace_.cores)));
    for (const std::string &line : lines) {
      y += kSmallFont + 4;
      svg += fmt::format(R"(<text x="{}" y="{}" font-size="{}">{}</text>)", num(x + 8), num(y),
                         num(kSmallFont), xmlEscape(line));
    }
    svg += "</g>\n";
  }
}

void Picture::write(std::ostream &out, bool interactive) const {
  std::string svg;
  svg += fmt::format(R"(<svg xmlns="http://www.w3.org/2000/svg" width="{0}" height="{1}" )"
                     R"(viewBox="0 0 {0} {1}" font-family="{2}" font-size="{3}"{4}>)"
                     "\n",
                     num(width_), num(height_), kFontFamily, num(kFont),
                     interactive ? R"( id="trace")" : "");
  const std::string name =
      s_.finding
          ? fmt::format("{}: {}{}", findingKindName(s_.finding->kind), s_.finding->message,
                        s_.finding->property.empty() ? "" : " [" + s_.finding->property + "]")
          : s_.schedule->title;
  svg += fmt::format("<title>{}</title>\n", xmlEscape(name));
  svg += fmt::format(R"(<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" )"
                     R"(markerWidth="7" markerHeight="7" orient="auto-start-reverse">)"
                     R"(<path d="M 0 0 L 10 5 L 0 10 z" fill="{0}"/></marker>)"
                     R"(<marker id="sigarrow" viewBox="0 0 10 10" refX="9" refY="5" )"
                     R"(markerWidth="6" markerHeight="6" orient="auto-start-reverse">)"
                     R"(<path d="M 0 0 L 10 5 L 0 10 z" fill="{1}"/></marker>)"
                     R"(<style>.halo{{paint-order:stroke;stroke:#ffffff;stroke-width:4px;)"
                     R"(stroke-linejoin:round}}</style></defs>)"
                     "\n",
                     kDmaColour, kSemColour);
  svg += fmt::format(R"(<rect width="100%" height="100%" fill="#ffffff"/>)"
                     "\n");
  title(svg);
  legend(svg);
  // Row backgrounds and texts last, over the lanes, bars and arrows.
  lanes(svg);
  stuckBars(svg);
  arrows(svg);
  rows(svg);
  ending(svg);
  svg += "</svg>\n";
  out << svg;
}

/// The steps for the page's panel and source view, as JSON: actor, text, context, the
/// semaphore values it changed, its source location, how long it had waited.
std::string stepsJson(const Trace &trace, const support::SourceManager *sources) {
  nlohmann::json steps = nlohmann::json::array();
  for (const TraceStep &step : trace.steps) {
    nlohmann::json values = nlohmann::json::array();
    for (const auto &[name, value] : step.semValues)
      values.push_back({name, value});
    std::string waited;
    if (step.actor.kind == Actor::Kind::Device && step.blockedSince >= 0)
      waited = step.blockedSince == 0
                   ? "it had waited since the start"
                   : fmt::format("it had waited since step {}", step.blockedSince);
    steps.push_back({{"who", processName(step.actor.device, trace.cores)},
                     {"text", stepText(step, sources)},
                     {"context", step.context},
                     {"sems", values},
                     {"file", step.loc.file},
                     {"line", step.loc.valid() ? step.loc.line : 0},
                     {"waited", waited}});
  }
  // In a <script>, "</" would end it: JSON lets "<\/" stand for it.
  std::string data = steps.dump();
  for (size_t pos = data.find("</"); pos != std::string::npos; pos = data.find("</", pos + 3))
    data.replace(pos, 2, "<\\/");
  return data;
}

/// The source files the trace and the finding point into, each line an element
/// `f<FILE>-L<LINE>` for the page to highlight; the finding's lines marked "hit".
std::string sourcePanel(const Trace &trace, const Finding *finding,
                        const support::SourceManager *sources) {
  if (!sources)
    return "";
  std::set<support::FileId> files;
  std::set<std::pair<support::FileId, uint32_t>> hits;
  for (const TraceStep &step : trace.steps)
    if (step.loc.valid())
      files.insert(step.loc.file);
  for (const TraceMark &m : trace.marks)
    if (m.step >= 0 && static_cast<size_t>(m.step) < trace.steps.size() &&
        trace.steps[m.step].loc.valid())
      hits.insert({trace.steps[m.step].loc.file, trace.steps[m.step].loc.line});
  if (finding) {
    for (const Span *span : {&finding->primary}) {
      if (span->loc.valid()) {
        files.insert(span->loc.file);
        hits.insert({span->loc.file, span->loc.line});
      }
    }
    for (const Span &span : finding->secondary)
      if (span.loc.valid()) {
        files.insert(span.loc.file);
        hits.insert({span.loc.file, span.loc.line});
      }
    if (finding->kind == FindingKind::Deadlock)
      for (const TraceStep &b : trace.blocked)
        if (b.loc.valid())
          hits.insert({b.loc.file, b.loc.line});
  }
  std::string html;
  for (support::FileId id : files) {
    const support::SourceFile *file = sources->find(id);
    if (!file)
      continue;
    html +=
        fmt::format("<div class=\"head\">{}</div>\n<pre class=\"src\">", xmlEscape(file->name()));
    const size_t digits = std::to_string(file->lineCount()).size();
    for (uint32_t line = 1; line <= file->lineCount(); ++line)
      html += fmt::format("<span class=\"ln{}\" id=\"f{}-L{}\"><span class=\"no\">{:>{}}</span> "
                          "{}</span>",
                          hits.count({id, line}) ? " hit" : "", id, line, line, digits,
                          xmlEscape(std::string(file->lineText(line))));
    html += "</pre>\n";
  }
  return html;
}

const char *kPageStyle = R"(<style>
body { font-family: DejaVu Sans Mono, Menlo, Consolas, monospace; margin: 0; font-size: 13px; }
#bar { position: sticky; top: 0; background: #f4f6fa; border-bottom: 1px solid #ccc;
       padding: 8px 12px; z-index: 1; }
#bar button { font: inherit; margin-right: 4px; }
#now { margin-top: 6px; white-space: pre-wrap; }
#sems { color: #7a3aa0; margin-top: 4px; white-space: pre-wrap; }
#main { display: flex; align-items: flex-start; }
#side { flex: 0 0 560px; max-width: 560px; border-right: 1px solid #ccc; padding: 0 12px 8px;
        box-sizing: border-box; position: sticky; top: 70px; max-height: calc(100vh - 70px);
        overflow: auto; }
#picture { flex: 1 1 auto; overflow: auto; }
.head { font-weight: bold; margin: 8px 0 4px; }
pre.src { margin: 0; font: inherit; line-height: 1.35; white-space: pre-wrap;
          overflow-wrap: anywhere; }
pre.src .ln { display: block; border-left: 4px solid transparent; padding-left: 4px; }
pre.src .no { color: #8a8a8a; }
pre.src .hit { border-left-color: #c8102e; }
pre.src .current { background: #ffe97a; }
#explain p, #fix p { margin: 4px 0 8px; white-space: pre-wrap; }
#fix pre { background: #f4f6fa; padding: 6px; white-space: pre-wrap; }
#trace [data-step] { transition: opacity 0.15s; }
#trace .current .rowbg { fill: #ffd400; fill-opacity: 0.3; }
</style>
)";

const char *kPageScript = R"(let current = 0;
function show(k) {
  current = Math.max(0, Math.min(steps.length, k));
  for (const e of document.querySelectorAll('#trace [data-step]')) {
    const first = Number(e.getAttribute('data-step'));
    const last = Number(e.getAttribute('data-last') || first);
    e.style.opacity = first <= current ? "" : 0.12;
    e.classList.toggle('current',
                       e.classList.contains('step') && first <= current && current <= last);
  }
  document.getElementById('pos').textContent = 'step ' + current + ' of ' + steps.length;
  const now = current > 0 ? steps[current - 1] : null;
  document.getElementById('now').textContent =
      now ? now.who + ': ' + now.text + (now.context ? '   [' + now.context + ']' : '') +
                (now.waited ? '   (' + now.waited + ')' : '')
          : 'before the first step';
  const values = new Map();
  for (let i = 0; i < current; ++i)
    for (const [name, value] of steps[i].sems) values.set(name, value);
  const names = [...values.keys()].sort();
  document.getElementById('sems').textContent =
      names.length ? 'semaphores: ' + names.map(n => n + ' = ' + values.get(n)).join('   ') : '';
  for (const e of document.querySelectorAll('pre.src .current')) e.classList.remove('current');
  const line = now && now.line ? document.getElementById('f' + now.file + '-L' + now.line) : null;
  if (line) {
    line.classList.add('current');
    if (line.scrollIntoView) line.scrollIntoView({block: 'nearest'});
  }
  const row = document.querySelector('#trace .step.current');
  if (row && row.scrollIntoView) row.scrollIntoView({block: 'nearest'});
}
document.getElementById('first').onclick = () => show(1);
document.getElementById('prev').onclick = () => show(current - 1);
document.getElementById('next').onclick = () => show(current + 1);
document.getElementById('last').onclick = () => show(steps.length);
document.addEventListener('keydown', e => {
  if (e.key === 'ArrowRight') show(current + 1);
  else if (e.key === 'ArrowLeft') show(current - 1);
  else if (e.key === 'Home') show(1);
  else if (e.key === 'End') show(steps.length);
  else return;
  e.preventDefault();
});
show(steps.length ? 1 : 0);
</script>
</body>
</html>
)";

/// The page of renderTraceHtml and renderScheduleHtml.
void writePage(std::ostream &out, const Subject &subject, const support::SourceManager *sources,
               const std::string &titleText) {
  const Finding *f = subject.finding;
  out << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>"
      << xmlEscape(titleText) << "</title>\n"
      << kPageStyle << "</head>\n<body>\n";
  out << R"(<div id="bar">
<button id="first" title="Home">|&lt;</button><button id="prev" title="Left arrow">&lt; previous</button><button id="next" title="Right arrow">next &gt;</button><button id="last" title="End">&gt;|</button>
<span id="pos"></span> (keys: Left / Right, Home / End)
<div id="now"></div>
<div id="sems"></div>
</div>
<div id="main">
<div id="side">
)";
  if (f) {
    const ExplainEntry &e = explainFinding(*f);
    out << fmt::format("<div id=\"explain\"><div class=\"head\">explain [{}]: {}</div>\n"
                       "<p>{}</p>\n<p>Usual fix: {}</p></div>\n",
                       xmlEscape(e.id), xmlEscape(e.title), xmlEscape(e.what), xmlEscape(e.fix));
  }
  out << sourcePanel(subject.trace, f, sources);
  out << "</div>\n<div id=\"picture\">\n";
  Picture(subject, sources).write(out, true);
  out << "</div>\n</div>\n<script>\nconst steps = " << stepsJson(subject.trace, sources) << ";\n"
      << kPageScript;
}

std::string findingTitle(const Finding &f) {
  return fmt::format("dkv: {}: {}{}", findingKindName(f.kind), f.message,
                     f.property.empty() ? "" : " [" + f.property + "]");
}

} // namespace

std::string xmlEscape(const std::string &text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
    case '&':
      out += "&amp;";
      break;
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '"':
      out += "&quot;";
      break;
    case '\'':
      out += "&apos;";
      break;
    default:
      // Control characters are not allowed in XML 1.0 text.
      if (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t')
        out += ' ';
      else
        out += c;
    }
  }
  return out;
}

void renderTraceSvg(std::ostream &out, const Finding &finding,
                    const support::SourceManager *sources, const PictureHeading &heading) {
  out << R"(<?xml version="1.0" encoding="UTF-8"?>)"
      << "\n";
  const Subject subject{&finding, finding.trace, nullptr, heading,
                        finding.kind == FindingKind::Deadlock};
  Picture(subject, sources).write(out, false);
}

void renderTraceHtml(std::ostream &out, const Finding &finding,
                     const support::SourceManager *sources, const PictureHeading &heading) {
  const Subject subject{&finding, finding.trace, nullptr, heading,
                        finding.kind == FindingKind::Deadlock};
  writePage(out, subject, sources, findingTitle(finding));
}

void renderScheduleSvg(std::ostream &out, const Trace &trace, const support::SourceManager *sources,
                       const ScheduleHeading &heading) {
  out << R"(<?xml version="1.0" encoding="UTF-8"?>)"
      << "\n";
  const Subject subject{nullptr, trace, &heading, heading.where, heading.stuck};
  Picture(subject, sources).write(out, false);
}

void renderScheduleHtml(std::ostream &out, const Trace &trace,
                        const support::SourceManager *sources, const ScheduleHeading &heading) {
  const Subject subject{nullptr, trace, &heading, heading.where, heading.stuck};
  writePage(out, subject, sources, "dkv: " + heading.title);
}

} // namespace dkv::report
