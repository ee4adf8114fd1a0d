// SVG sequence diagrams of traces, and the HTML page that steps through one.
#include "report/Svg.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <ostream>
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
constexpr double kLeft = 56; // the step numbers
// Left of lane 0: room for the label of a DMA landing on device 0 (labels go left of
// the target's lane, in the landing's row, where no other text is).
constexpr double kLabelRoom = 110;
constexpr double kInFlightH = 22; // one row per DMA still in flight after the last step
constexpr double kRight = 240;    // room for the last lane's texts
constexpr double kLineH = 15;     // one text line in a row
constexpr double kRowPad = 9;     // space between rows
constexpr double kTitleFont = 15;
constexpr double kTitleCharWidth = 8.6;

const char *kFontFamily = "DejaVu Sans Mono, Menlo, Consolas, monospace";

// Colours (also named in the legend).
const char *kDmaColour = "#1f5fbf";
const char *kBlockColour = "#e8900c";
const char *kMarkColour = "#c8102e";
const char *kSemColour = "#7a3aa0";
const char *kContextColour = "#6b6b6b";

std::string num(double v) { return fmt::format("{:.1f}", v); }

/// `text` cut to `chars` characters, the last one an ellipsis when cut.
std::string cut(const std::string &text, size_t chars) {
  if (chars < 2)
    chars = 2;
  if (text.size() <= chars)
    return text;
  return text.substr(0, chars - 1) + "\u2026";
}

/// `text` broken into lines of at most `chars` characters, at spaces when possible.
std::vector<std::string> wrap(const std::string &text, size_t chars) {
  std::vector<std::string> lines;
  if (chars < 8)
    chars = 8;
  size_t pos = 0;
  while (pos < text.size()) {
    if (text.size() - pos <= chars) {
      lines.push_back(text.substr(pos));
      break;
    }
    size_t space = text.rfind(' ', pos + chars);
    size_t end = space != std::string::npos && space > pos ? space : pos + chars;
    lines.push_back(text.substr(pos, end - pos));
    pos = end;
    while (pos < text.size() && text[pos] == ' ')
      ++pos;
  }
  if (lines.empty())
    lines.push_back("");
  return lines;
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

/// Everything placed in one row of the diagram.
struct Row {
  std::string text;    // the step's text
  std::string sems;    // semaphore values the step changed
  std::string context; // the context (invocation, grid point), where it changes
  std::vector<const TraceMark *> marks;
  double top = 0, height = 0;
  double y() const { return top + kLineH - 3; } // the baseline of the first line
  double mid() const { return top + kLineH / 2 - 4; }
  double bottom() const { return top + height - kRowPad + 2; }
};

class Picture {
public:
  Picture(const Finding &finding, const support::SourceManager *sources,
          const PictureHeading &heading)
      : f_(finding), trace_(finding.trace), sources_(sources), heading_(heading) {
    n_ = std::max<int32_t>(trace_.deviceCount, 1);
    for (const TraceStep &step : trace_.steps)
      n_ = std::max(n_, step.actor.device + 1);
    laneW_ = n_ <= 2 ? 430 : n_ <= 4 ? 320 : 235;
    width_ = kLeft + kLabelRoom + n_ * laneW_ + kRight;
    layout();
  }

  void write(std::ostream &out, bool interactive) const;
  double width() const { return width_; }
  double height() const { return height_; }

private:
  double laneX(int32_t d) const { return kLeft + kLabelRoom + d * laneW_ + 18; }
  /// Characters of normal text that fit right of device d's lane line: a row holds one
  /// step, so its text may reach into the next lane.
  size_t textChars(int32_t d, double charWidth) const {
    double room = (d + 1 < n_ ? 2 * laneW_ : laneW_ + kRight) - 40;
    return static_cast<size_t>(room / charWidth);
  }
  void layout();
  void title(std::string &svg) const;
  void legend(std::string &svg) const;
  void lanes(std::string &svg) const;
  void rows(std::string &svg) const;
  void arrows(std::string &svg) const;
  void waits(std::string &svg) const;
  void ending(std::string &svg) const;
  /// A DMA's arrow from lane `from` at y1 (the start's row, whose bottom is y1b) to
  /// lane `to` at y2 (the landing's row, whose top is y2t).
  void arrow(std::string &svg, int32_t from, double y1, double y1b, int32_t to, double y2t,
             double y2, const std::string &label, int32_t dma, size_t step) const;
  /// The `index`-th DMA still in flight after the last step: a dashed arrow from its
  /// issuer's lane to its target's lane in its own row below the end line.
  void inFlight(std::string &svg, size_t index, int32_t from, int32_t to, const std::string &label,
                int32_t dma, size_t step, bool marked) const;

  const Finding &f_;
  const Trace &trace_;
  const support::SourceManager *sources_;
  const PictureHeading &heading_;
  int32_t n_ = 1;
  double laneW_ = 300, width_ = 0, height_ = 0;
  std::vector<std::pair<std::string, double>> titleLines_; // text, font size
  double legendTop_ = 0, lanesTop_ = 0, rowsTop_ = 0, endY_ = 0, inFlightTop_ = 0, boxesTop_ = 0;
  std::vector<Row> rows_;
  std::vector<std::vector<std::string>> boxes_; // per Trace::blocked entry: its lines
  std::vector<std::string> endSems_;            // the semaphore values after the last step
};

void Picture::layout() {
  // Title: kind, message, property; where; witness; wrong value; notes.
  const size_t titleChars = static_cast<size_t>((width_ - 40) / kTitleCharWidth);
  const size_t smallChars = static_cast<size_t>((width_ - 40) / kCharWidth);
  std::string head = fmt::format("{}: {}", findingKindName(f_.kind), f_.message);
  if (!f_.property.empty())
    head += fmt::format(" [{}]", f_.property);
  for (const std::string &line : wrap(head, titleChars))
    titleLines_.push_back({line, kTitleFont});
  std::string where;
  if (f_.primary.loc.valid()) {
    std::string_view file = sources_ ? sources_->name(f_.primary.loc.file) : "";
    where = fmt::format("{}:{}:{}", file.empty() ? "line" : file, f_.primary.loc.line,
                        f_.primary.loc.col);
  }
  std::vector<std::string> parts;
  for (const std::string &p :
       {where, heading_.instance, f_.engine.empty() ? std::string() : "engine " + f_.engine})
    if (!p.empty())
      parts.push_back(p);
  if (f_.confirmed)
    parts.push_back("replayed in the executor");
  std::string info;
  for (const std::string &p : parts)
    info += (info.empty() ? "" : "  \u00b7  ") + p;
  for (const std::string &line : wrap(info, smallChars))
    titleLines_.push_back({line, kFont});
  auto add = [&](const std::string &text) {
    for (const std::string &line : wrap(text, smallChars))
      titleLines_.push_back({line, kFont});
  };
  if (!heading_.command.empty())
    add("check it again: dkv check " + heading_.command);
  if (!f_.detail.empty())
    add("witness: " + f_.detail);
  if (!f_.wrongValue.empty())
    add("wrong value: " + f_.wrongValue);
  for (const Span &span : f_.secondary)
    add(fmt::format("note ({}): {}", lineOf(span.loc, sources_), span.label));
  if (trace_.steps.empty())
    add("no trace: this finding holds without a schedule (static pre-check)");
  double y = 20;
  for (const auto &[text, size] : titleLines_)
    y += size + 6;
  legendTop_ = y + 6;
  lanesTop_ = legendTop_ + 2 * 22 + 12;
  rowsTop_ = lanesTop_ + 34;

  // Rows: the step's text on the first line, semaphore values and context on a second,
  // a mark's label on a third.
  std::map<int32_t, std::string> lastContext;
  y = rowsTop_;
  rows_.resize(trace_.steps.size());
  for (const TraceMark &m : trace_.marks)
    if (m.step >= 0 && static_cast<size_t>(m.step) < rows_.size())
      rows_[m.step].marks.push_back(&m);
  for (size_t i = 0; i < trace_.steps.size(); ++i) {
    const TraceStep &step = trace_.steps[i];
    Row &row = rows_[i];
    row.text = stepText(step, sources_);
    for (const auto &[name, value] : step.semValues)
      row.sems += fmt::format("{}{} = {}", row.sems.empty() ? "" : "   ", name, value);
    std::string &last = lastContext[step.actor.device];
    if (step.actor.kind == Actor::Kind::Device && !step.context.empty() && step.context != last) {
      row.context = "[" + step.context + "]";
      last = step.context;
    }
    row.top = y;
    row.height = kLineH + (row.sems.empty() && row.context.empty() ? 0 : kLineH - 2) +
                 (row.marks.empty() ? 0 : kLineH * row.marks.size()) + kRowPad;
    y += row.height;
  }
  endY_ = y + 14;
  // Below the end line: "after step N", the semaphores the trace left non-zero, one row
  // per DMA still in flight, then the boxes of the blocked devices.
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
  for (const TraceStep &b : trace_.blocked) {
    std::string text = b.text;
    if (b.loc.valid())
      text += " (" + lineOf(b.loc, sources_) + ")";
    boxes_.push_back(wrap(text, static_cast<size_t>((laneW_ - 24) / kSmallCharWidth)));
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
                       size == kTitleFont ? fmt::format(R"( fill="{}")", kMarkColour) : "",
                       xmlEscape(text));
    first = false;
  }
}

void Picture::legend(std::string &svg) const {
  // Each item: a symbol in 28 units, then its text; items wrap onto a second line.
  struct Item {
    std::string symbol;
    std::string text;
  };
  auto at = [](double x, double y, const std::string &shape) {
    return fmt::format(R"~(<g transform="translate({},{})">{}</g>)~", num(x), num(y), shape);
  };
  std::vector<Item> items = {
      {fmt::format(R"(<circle cx="10" cy="-4" r="4" fill="#333"/>)"),
       "device step (@L: its source line)"},
      {fmt::format(R"(<line x1="0" y1="-4" x2="22" y2="-4" stroke="{}" stroke-width="2" )"
                   R"~(marker-end="url(#arrow)"/>)~",
                   kDmaColour),
       "dma: start -> landing"},
      {fmt::format(R"(<rect x="6" y="-8" width="8" height="8" fill="{}"/>)", kDmaColour),
       "dma sent: source read, send sem +="},
      {fmt::format(R"(<line x1="0" y1="-4" x2="20" y2="-4" stroke="{}" stroke-width="1.3" )"
                   R"~(marker-end="url(#sigarrow)"/>)~",
                   kSemColour),
       "signal: sem += on another device"},
      {fmt::format(R"(<line x1="0" y1="-4" x2="22" y2="-4" stroke="{}" stroke-width="2" )"
                   R"~(stroke-dasharray="5,3" marker-end="url(#arrow)"/>)~",
                   kDmaColour),
       "dma still in flight at the end"},
      {fmt::format(R"(<rect x="7" y="-12" width="6" height="16" fill="{}" opacity="0.6"/>)",
                   kBlockColour),
       "blocked wait (until it returns)"},
      {fmt::format(R"(<rect x="0" y="-12" width="22" height="16" fill="{}" opacity="0.15" )"
                   R"(stroke="{}"/>)",
                   kMarkColour, kMarkColour),
       "what the finding is about"},
      {fmt::format(R"(<text x="0" y="0" font-size="{}" fill="{}">s@1</text>)", num(kSmallFont),
                   kSemColour),
       "semaphore s on device 1 after the step"},
  };
  double x = 20, y = legendTop_ + 14;
  svg += R"(<g class="legend">)"
         "\n";
  for (const Item &item : items) {
    double w = 30 + item.text.size() * kCharWidth + 26;
    if (x + w > width_ - 10 && x > 20) {
      x = 20;
      y += 22;
    }
    svg += at(x, y, item.symbol);
    svg += fmt::format(R"(<text x="{}" y="{}">{}</text>)"
                       "\n",
                       num(x + 30), num(y), xmlEscape(item.text));
    x += w;
  }
  svg += "</g>\n";
}

void Picture::lanes(std::string &svg) const {
  double bottom = height_ - 16;
  for (int32_t d = 0; d < n_; ++d) {
    double x = laneX(d);
    // "device 1", or "device 1 core 0" on a TensorCore mesh (a wider box).
    const std::string name = processName(d, trace_.cores);
    const double box = std::max(80.0, static_cast<double>(name.size()) * kCharWidth + 14);
    svg += fmt::format(R"(<g class="lane" data-device="{}">)", d);
    svg += fmt::format(R"(<line x1="{0}" y1="{1}" x2="{0}" y2="{2}" stroke="#9a9a9a" )"
                       R"(stroke-width="1.5"/>)",
                       num(x), num(lanesTop_ + 24), num(bottom));
    svg += fmt::format(R"(<rect x="{}" y="{}" width="{}" height="24" rx="4" fill="#eef2f8" )"
                       R"(stroke="#9a9a9a"/>)",
                       num(x - box / 2), num(lanesTop_), num(box));
    svg += fmt::format(R"(<text x="{}" y="{}" text-anchor="middle" font-weight="bold">)"
                       R"({}</text></g>)"
                       "\n",
                       num(x), num(lanesTop_ + 16), name);
  }
}

void Picture::rows(std::string &svg) const {
  for (size_t i = 0; i < rows_.size(); ++i) {
    const TraceStep &step = trace_.steps[i];
    const Row &row = rows_[i];
    const int32_t d = step.actor.device;
    const double x = laneX(d);
    svg += fmt::format(R"(<g class="step" data-step="{}" data-device="{}">)", i + 1, d);
    // The background of the row (the HTML page colours the current one), and a
    // tint for a marked one.
    svg +=
        fmt::format(R"(<rect class="rowbg" x="{}" y="{}" width="{}" height="{}" )"
                    R"(fill="{}" fill-opacity="{}"{}/>)",
                    num(4), num(row.top - 3), num(width_ - 8), num(row.height - 3),
                    row.marks.empty() ? "#ffffff" : kMarkColour, row.marks.empty() ? "0" : "0.08",
                    row.marks.empty() ? "" : fmt::format(R"( stroke="{}")", kMarkColour));
    svg += fmt::format(R"(<text x="{}" y="{}" text-anchor="end" fill="{}">{}.</text>)", num(36),
                       num(row.y()), kContextColour, i + 1);
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
      svg += fmt::format(R"(<circle cx="{}" cy="{}" r="4" fill="#333"/>)", num(x), num(row.mid()));
    }
    const size_t chars = textChars(d, kCharWidth);
    std::string shown = cut(row.text, chars);
    svg += fmt::format(
        R"(<text class="halo" x="{}" y="{}"{}>{})", num(x + 10), num(row.y()),
        step.actor.kind == Actor::Kind::Dma ? fmt::format(R"( fill="{}")", kDmaColour) : "",
        xmlEscape(shown));
    if (shown != row.text)
      svg += fmt::format("<title>{}</title>", xmlEscape(row.text));
    svg += "</text>";
    double y = row.y();
    if (!row.sems.empty() || !row.context.empty()) {
      y += kLineH - 2;
      // Semaphore values first (purple), then the context (grey), cut to the room.
      const size_t room = textChars(d, kSmallCharWidth);
      std::string sems = cut(row.sems, room);
      size_t left = room > sems.size() + 3 ? room - sems.size() - 3 : 0;
      svg += fmt::format(R"(<text class="halo" x="{}" y="{}" font-size="{}">)", num(x + 10), num(y),
                         num(kSmallFont));
      if (!sems.empty())
        svg +=
            fmt::format(R"(<tspan class="sem" fill="{}">{}</tspan>)", kSemColour, xmlEscape(sems));
      if (!row.context.empty() && left > 4)
        svg += fmt::format(R"(<tspan class="context" fill="{}">{}{}</tspan>)", kContextColour,
                           sems.empty() ? "" : "   ", xmlEscape(cut(row.context, left)));
      svg += "</text>";
    }
    for (const TraceMark *m : row.marks) {
      y += kLineH;
      std::string label = fmt::format("\u25b2 {}", m->label);
      if (step.loc.valid())
        label += ", " + lineOf(step.loc, sources_);
      svg += fmt::format(R"(<text class="halo mark" x="{}" y="{}" data-line="{}" )"
                         R"(font-weight="bold" fill="{}">{}</text>)",
                         num(x + 10), num(y), step.loc.valid() ? step.loc.line : 0, kMarkColour,
                         xmlEscape(cut(label, chars)));
    }
    svg += "</g>\n";
  }
}

void Picture::arrow(std::string &svg, int32_t from, double y1, double y1b, int32_t to, double y2t,
                    double y2, const std::string &label, int32_t dma, size_t step) const {
  double x1 = laneX(from), x2 = laneX(to);
  std::string style = fmt::format(
      R"~(fill="none" stroke="{}" stroke-width="2" marker-end="url(#arrow)")~", kDmaColour);
  svg += fmt::format(R"(<g class="dma" data-dma="{}" data-step="{}">)", dma, step);
  double lx = 0, ly = 0;
  std::string shown = label;
  if (from == to) {
    // A local copy: a loop left of the lane, where no step's text is; its label is its
    // tooltip (the landing's text names the DMA and the units).
    double bulge = 24;
    svg += fmt::format(R"(<path d="M {} {} C {} {} {} {} {} {}" {}><title>{}</title></path>)",
                       num(x1 - 5), num(y1), num(x1 - bulge), num(y1), num(x1 - bulge), num(y2),
                       num(x1 - 6), num(y2), style, xmlEscape(label));
  } else {
    // Down the issuer's lane to the bottom of the start's row (y1), across to the top
    // of the landing's row (y2), down the target's lane to the landing: the texts
    // right of the lanes in those two rows stay clear.
    svg += fmt::format(R"(<path d="M {} {} V {} L {} {} V {}" {}/>)", num(x1), num(y1 + 5),
                       num(y1b), num(x2), num(y2t), num(y2 - 3), style);
    // A landing's row holds only the landing's text, right of the target's lane: the
    // label goes left of the lane in that row (lane 0 has kLabelRoom for it), where it
    // meets no other text; cut when it is wider than that (the landing's text is whole).
    shown = cut(label, static_cast<size_t>((x2 - 14 - kLeft - 6) / kSmallCharWidth));
    double w = shown.size() * kSmallCharWidth + 6;
    lx = x2 - 10 - w / 2;
    ly = y2 + 4;
  }
  if (!shown.empty() && from != to) {
    // On a white ground, so that lines under it do not cross its letters.
    double w = shown.size() * kSmallCharWidth + 6, left = lx - w / 2;
    svg += fmt::format(R"(<rect x="{}" y="{}" width="{}" height="{}" fill="#ffffff" )"
                       R"(fill-opacity="0.9"/>)",
                       num(left), num(ly - kSmallFont), num(w), num(kSmallFont + 4));
    svg += fmt::format(R"(<text x="{}" y="{}" font-size="{}" fill="{}" text-anchor="middle">)"
                       R"({}</text>)",
                       num(lx), num(ly), num(kSmallFont), kDmaColour, xmlEscape(shown));
  }
  svg += "</g>\n";
}

void Picture::arrows(std::string &svg) const {
  // Each DMA's start row; an arrow to each of its landings, and a dashed one below the
  // end line for a DMA still in flight after the last step.
  std::map<int32_t, size_t> start;
  std::map<int32_t, const TraceStep *> startStep;
  for (size_t i = 0; i < trace_.steps.size(); ++i)
    if (trace_.steps[i].what == What::DmaStart) {
      start[trace_.steps[i].dma] = i;
      startStep[trace_.steps[i].dma] = &trace_.steps[i];
    }
  auto label = [](const TraceStep &s) {
    std::string text = fmt::format("dma {}: {} B", s.dma, s.bytes);
    if (s.chunks > 1)
      text += fmt::format(", chunk {}/{}", s.chunk + 1, s.chunks);
    return text;
  };
  for (size_t i = 0; i < trace_.steps.size(); ++i) {
    const TraceStep &s = trace_.steps[i];
    if (s.what != What::Land)
      continue;
    auto it = start.find(s.dma);
    if (it == start.end())
      continue; // cannot happen: a DMA lands after its start, which is in the trace
    const TraceStep &from = trace_.steps[it->second];
    const Row &a = rows_[it->second], &b = rows_[i];
    arrow(svg, from.actor.device, a.mid(), a.bottom(), s.actor.device, b.top - 2, b.mid(), label(s),
          s.dma, i + 1);
  }
  // A signal to another device: a thin purple arrow from the signalling device's dot,
  // down to the bottom of its row and across to the target's lane (below the row's
  // texts), so that who signals whom reads like the DMAs' arrows.
  for (size_t i = 0; i < trace_.steps.size(); ++i) {
    const TraceStep &s = trace_.steps[i];
    if (s.what != What::Signal || s.actor.kind != Actor::Kind::Device || s.peer < 0 ||
        s.peer == s.actor.device || s.peer >= n_)
      continue;
    const Row &row = rows_[i];
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
    const TraceStep &from = *startStep[k];
    // The DMA the finding is about (its start is marked) keeps the mark's colour here.
    const bool marked = !rows_[it->second].marks.empty();
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
    svg +=
        fmt::format(R"(<path d="M {} {} H {}" {}/>)", num(x1 - 30), num(y + 3), num(x1 - 5), style);
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

void Picture::waits(std::string &svg) const {
  // A bar from the row where the device was first found blocked to the row where the
  // wait returned.
  auto barTop = [&](int32_t since) {
    if (since < 0)
      return rowsTop_;
    // Blocked since the last step: the bar starts below the last row.
    return static_cast<size_t>(since) < rows_.size() ? rows_[since].top - 3 : endY_ - 8;
  };
  for (size_t i = 0; i < trace_.steps.size(); ++i) {
    const TraceStep &s = trace_.steps[i];
    if (s.actor.kind != Actor::Kind::Device || s.blockedSince < 0)
      continue;
    double x = laneX(s.actor.device);
    double top = barTop(s.blockedSince), bottom = rows_[i].mid();
    svg += fmt::format(R"(<rect class="wait" data-device="{}" data-step="{}" x="{}" y="{}" )"
                       R"(width="6" height="{}" fill="{}" opacity="0.6">)"
                       R"(<title>{} blocked at: {}</title></rect>)"
                       "\n",
                       s.actor.device, s.blockedSince + 1, num(x - 3), num(top),
                       num(std::max(2.0, bottom - top)), kBlockColour,
                       processName(s.actor.device, trace_.cores), xmlEscape(s.text));
  }
  const bool deadlock = f_.kind == FindingKind::Deadlock;
  for (const TraceStep &b : trace_.blocked) {
    double x = laneX(b.actor.device);
    double top = barTop(b.blockedSince);
    svg += fmt::format(R"(<rect class="wait" data-device="{}" data-step="{}" x="{}" y="{}" )"
                       R"(width="6" height="{}" fill="{}" opacity="0.6"/>)"
                       "\n",
                       b.actor.device, b.blockedSince + 1, num(x - 3), num(top),
                       num(std::max(2.0, boxesTop_ - top)), deadlock ? kMarkColour : kBlockColour);
  }
}

void Picture::ending(std::string &svg) const {
  const size_t last = trace_.steps.size();
  svg += fmt::format(R"(<g class="end" data-step="{}">)", last);
  svg += fmt::format(R"(<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="#9a9a9a" )"
                     R"(stroke-dasharray="2,3"/>)",
                     num(8), num(endY_), num(width_ - 8), num(endY_));
  svg += fmt::format(R"(<text x="{}" y="{}" text-anchor="end" fill="{}" font-size="{}">)"
                     R"(after step {}{}</text>)",
                     num(width_ - 10), num(endY_ + 13), kContextColour, num(kSmallFont), last,
                     trace_.inFlight.empty() && trace_.blocked.empty() ? ""
                     : trace_.blocked.empty()                          ? ": dmas in flight below"
                     : trace_.inFlight.empty()                         ? ": blocked devices below"
                                               : ": dmas in flight and blocked devices below");
  for (size_t i = 0; i < endSems_.size(); ++i)
    svg += fmt::format(R"(<text class="endsems" x="{}" y="{}" font-size="{}" fill="{}">{}</text>)",
                       num(20), num(endY_ + 13 + i * kLineH), num(kSmallFont), kSemColour,
                       xmlEscape(endSems_[i]));
  svg += "</g>\n";
  const bool deadlock = f_.kind == FindingKind::Deadlock;
  for (size_t i = 0; i < trace_.blocked.size(); ++i) {
    const TraceStep &b = trace_.blocked[i];
    const std::vector<std::string> &lines = boxes_[i];
    double x = laneX(b.actor.device) - 8;
    double h = lines.size() * (kSmallFont + 4) + 26;
    const char *colour = deadlock ? kMarkColour : kBlockColour;
    svg += fmt::format(R"(<g class="blocked{}" data-device="{}" data-step="{}"{}>)",
                       deadlock ? " mark" : "", b.actor.device, last,
                       b.loc.valid() ? fmt::format(R"( data-line="{}")", b.loc.line) : "");
    svg += fmt::format(R"(<rect x="{}" y="{}" width="{}" height="{}" rx="5" fill="{}" )"
                       R"(fill-opacity="0.1" stroke="{}" stroke-width="{}"/>)",
                       num(x), num(boxesTop_), num(laneW_ - 12), num(h), colour, colour,
                       deadlock ? "2" : "1");
    double y = boxesTop_ + 16;
    svg += fmt::format(R"(<text x="{}" y="{}" font-weight="bold" fill="{}">{}</text>)", num(x + 8),
                       num(y), colour, deadlock ? "\u25b2 stuck" : "blocked");
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
  svg += fmt::format("<title>{}</title>\n",
                     xmlEscape(fmt::format("{}: {}{}", findingKindName(f_.kind), f_.message,
                                           f_.property.empty() ? "" : " [" + f_.property + "]")));
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
  // Row backgrounds first, then lanes, bars and arrows, then the rows' texts on top.
  std::string rowText;
  rows(rowText);
  lanes(svg);
  waits(svg);
  arrows(svg);
  svg += rowText;
  ending(svg);
  svg += "</svg>\n";
  out << svg;
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
  Picture(finding, sources, heading).write(out, false);
}

void renderTraceHtml(std::ostream &out, const Finding &finding,
                     const support::SourceManager *sources, const PictureHeading &heading) {
  // The steps for the panel: actor, text, the semaphore values it changed.
  nlohmann::json steps = nlohmann::json::array();
  for (const TraceStep &step : finding.trace.steps) {
    nlohmann::json values = nlohmann::json::array();
    for (const auto &[name, value] : step.semValues)
      values.push_back({name, value});
    steps.push_back({{"device", step.actor.device},
                     {"who", processName(step.actor.device, finding.trace.cores)},
                     {"text", stepText(step, sources)},
                     {"context", step.context},
                     {"sems", values}});
  }
  // In a <script>, "</" would end it: JSON lets "<\/" stand for it.
  std::string data = steps.dump();
  for (size_t pos = data.find("</"); pos != std::string::npos; pos = data.find("</", pos + 3))
    data.replace(pos, 2, "<\\/");
  std::string titleText =
      fmt::format("dkv: {}: {}{}", findingKindName(finding.kind), finding.message,
                  finding.property.empty() ? "" : " [" + finding.property + "]");
  out << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>"
      << xmlEscape(titleText) << "</title>\n";
  out << R"(<style>
body { font-family: DejaVu Sans Mono, Menlo, Consolas, monospace; margin: 0; }
#bar { position: sticky; top: 0; background: #f4f6fa; border-bottom: 1px solid #ccc;
       padding: 8px 12px; z-index: 1; }
#bar button { font: inherit; margin-right: 4px; }
#now { margin-top: 6px; white-space: pre-wrap; }
#sems { color: #7a3aa0; margin-top: 4px; white-space: pre-wrap; }
#trace [data-step] { transition: opacity 0.15s; }
#trace .current .rowbg { fill: #ffd400; fill-opacity: 0.3; }
</style>
</head>
<body>
<div id="bar">
<button id="first" title="Home">|&lt;</button><button id="prev" title="Left arrow">&lt; previous</button><button id="next" title="Right arrow">next &gt;</button><button id="last" title="End">&gt;|</button>
<span id="pos"></span> (keys: Left / Right, Home / End)
<div id="now"></div>
<div id="sems"></div>
</div>
)";
  Picture(finding, sources, heading).write(out, true);
  out << "<script>\nconst steps = " << data << ";\n";
  out << R"(let current = steps.length;
function show(k) {
  current = Math.max(0, Math.min(steps.length, k));
  for (const e of document.querySelectorAll('#trace [data-step]')) {
    const s = Number(e.getAttribute('data-step'));
    e.style.opacity = s <= current ? "" : 0.12;
    e.classList.toggle('current', s === current && e.classList.contains('step'));
  }
  document.getElementById('pos').textContent = 'step ' + current + ' of ' + steps.length;
  const now = current > 0 ? steps[current - 1] : null;
  document.getElementById('now').textContent =
      now ? now.who + ': ' + now.text + (now.context ? '   [' + now.context + ']' : '')
          : 'before the first step';
  const values = new Map();
  for (let i = 0; i < current; ++i)
    for (const [name, value] of steps[i].sems) values.set(name, value);
  const names = [...values.keys()].sort();
  document.getElementById('sems').textContent =
      names.length ? 'semaphores: ' + names.map(n => n + ' = ' + values.get(n)).join('   ') : '';
  const row = document.querySelector('#trace .step[data-step="' + current + '"]');
  if (row && row.scrollIntoView) row.scrollIntoView({block: 'nearest'});
}
document.getElementById('first').onclick = () => show(0);
document.getElementById('prev').onclick = () => show(current - 1);
document.getElementById('next').onclick = () => show(current + 1);
document.getElementById('last').onclick = () => show(steps.length);
document.addEventListener('keydown', e => {
  if (e.key === 'ArrowRight') show(current + 1);
  else if (e.key === 'ArrowLeft') show(current - 1);
  else if (e.key === 'Home') show(0);
  else if (e.key === 'End') show(steps.length);
  else return;
  e.preventDefault();
});
show(steps.length);
</script>
</body>
</html>
)";
}

} // namespace dkv::report
