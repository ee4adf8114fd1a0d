#!/usr/bin/env python3
"""Checks the trace pictures of every example with a finding (docs/traces.md).

    svg_check.py DKV EXAMPLES_DIR [--all-counts]

For each example whose `// expect:` is a finding, at the smallest device count of its
`// devices:` annotation (every count with --all-counts) and with its `// options:`,
runs `dkv check --trace-dir DIR --format json` and checks every SVG written:
  - it is well-formed XML (xml.etree) with an <svg> root;
  - there is one SVG per finding, named KERNEL-N<devices>-PROPERTY.svg;
  - one lane per device (class "lane"), one row per trace step (class "step");
  - one solid arrow (class "dma", not "inflight") per DMA landing in the trace, each
    from a DMA that started in the trace; one signal arrow (class "signal") per
    signal to another device, from its lane to the target's;
  - the highlighted elements (class "mark") carry source lines (data-line) and
    include the finding's primary line; a race also marks the line of the DMA it
    races with (its "the dma started here" note), a deadlock marks its stuck waits;
  - no two texts overlap and none leaves the picture: each <text>'s box is computed
    from its position, font size, anchor and length with the renderer's monospace
    character widths (report/Svg.cpp), as the layout places it.
Also: --trace-svg refuses a run with several findings (exit 1) and --trace-html
writes a page whose embedded SVG parses. Exit 0 when every check holds.
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))
import annotations as example_annotations  # noqa: E402 (tests/examples/annotations.py)

SVG = "{http://www.w3.org/2000/svg}"


def annotations(dkv, path):
    """(last expected verdict or None, device counts, options), from the one reader."""
    a = example_annotations.read(dkv, path)
    return (a.expect[-1][0] if a.expect else None), a.devices, a.options


def classes(element):
    return set(element.get("class", "").split())


# The renderer's monospace character width at each font size (report/Svg.cpp:
# kCharWidth, kSmallCharWidth, kTitleCharWidth); 0.61 em otherwise.
CHAR_WIDTH = {12.0: 7.3, 10.5: 6.4, 15.0: 8.6}


def text_boxes(root):
    """(x0, y0, x1, y1, text) of every <text> element, from its attributes: the baseline
    at y, ascent 0.8 em and descent 0.2 em, the width from the character count."""
    boxes = []

    def walk(element, dx, dy, size):
        m = re.match(r"translate\(([-\d.]+),([-\d.]+)\)", element.get("transform", ""))
        if m:
            dx, dy = dx + float(m.group(1)), dy + float(m.group(2))
        size = float(element.get("font-size", size))
        if element.tag == SVG + "text":
            text = "".join(element.itertext())
            if text.strip():
                width = len(text) * CHAR_WIDTH.get(size, 0.61 * size)
                x, y = dx + float(element.get("x")), dy + float(element.get("y"))
                anchor = element.get("text-anchor", "start")
                x0 = x - width if anchor == "end" else x - width / 2 if anchor == "middle" else x
                boxes.append((x0, y - 0.8 * size, x0 + width, y + 0.2 * size, text))
            return
        for child in element:
            walk(child, dx, dy, size)

    walk(root, 0.0, 0.0, 12.0)
    return boxes


def check_layout(root, where, errors):
    """No two texts overlap (by more than half a pixel) and every text is inside."""
    width, height = float(root.get("width")), float(root.get("height"))
    boxes = sorted(text_boxes(root), key=lambda b: b[1])
    for i, a in enumerate(boxes):
        if a[0] < -0.5 or a[2] > width + 0.5 or a[1] < -0.5 or a[3] > height + 0.5:
            errors.append(f"{where}: text {a[4]!r} leaves the picture")
        for b in boxes[i + 1:]:
            if b[1] >= a[3] - 0.5:
                break  # sorted by top: no later box reaches up into a
            if min(a[2], b[2]) - max(a[0], b[0]) > 0.5 and min(a[3], b[3]) - max(a[1], b[1]) > 0.5:
                errors.append(f"{where}: texts overlap: {a[4]!r} and {b[4]!r}")


def check_svg(path, finding, devices, errors):
    where = os.path.basename(path)
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as e:
        errors.append(f"{where}: not well-formed: {e}")
        return
    if root.tag != SVG + "svg":
        errors.append(f"{where}: root is {root.tag}, not svg")
        return
    check_layout(root, where, errors)
    everything = list(root.iter())
    lanes = [e for e in everything if "lane" in classes(e)]
    if len(lanes) != devices:
        errors.append(f"{where}: {len(lanes)} lanes for {devices} devices")
    steps = [e for e in everything if "step" in classes(e)]
    trace = finding.get("trace", [])
    if len(steps) != len(trace):
        errors.append(f"{where}: {len(steps)} step rows for {len(trace)} trace steps")
    lands = [s for s in trace if s["actor"] == "dma" and " lands in " in s["text"]]
    arrows = [e for e in everything if "dma" in classes(e) and "inflight" not in classes(e)]
    if len(arrows) != len(lands):
        errors.append(f"{where}: {len(arrows)} dma arrows for {len(lands)} landings")
    started = {int(m.group(1)) for s in trace
               for m in [re.match(r"start dma (\d+)", s["text"])] if m}
    for a in arrows:
        if int(a.get("data-dma", -1)) not in started:
            errors.append(f"{where}: an arrow of dma {a.get('data-dma')} that never started")
    # One purple arrow (class "signal") per signal to another device, from the
    # signalling device's lane to the target's.
    signals = {(i + 1, s["device"], int(m.group(1))) for i, s in enumerate(trace)
               for m in [re.match(r"signal \S+ \+= \d+ on device (\d+)", s["text"])]
               if m and s["actor"] == "device" and int(m.group(1)) != s["device"]}
    drawn = {(int(e.get("data-step")), int(e.get("data-device")), int(e.get("data-target")))
             for e in everything if "signal" in classes(e)}
    if drawn != signals:
        errors.append(f"{where}: signal arrows {sorted(drawn)}, signals {sorted(signals)}")
    if not trace:
        return  # a static finding: no schedule to draw
    marks = [e for e in everything if "mark" in classes(e)]
    lines = {int(e.get("data-line", 0)) for e in marks}
    want = {finding["primary"]["line"]}
    if finding["kind"] == "race":
        want |= {s["line"] for s in finding["secondary"] if s["label"].startswith("the dma")}
    if finding["kind"] == "deadlock" and not any("blocked" in classes(e) for e in marks):
        errors.append(f"{where}: a deadlock without a highlighted stuck wait")
    if not want <= lines:
        errors.append(f"{where}: highlighted lines {sorted(lines)} miss {sorted(want - lines)}")


def main():
    dkv, examples = sys.argv[1], sys.argv[2]
    all_counts = "--all-counts" in sys.argv[3:]
    errors, pictures, kernels = [], 0, 0
    several = None  # (path, devices, options) of an instance with several findings
    with tempfile.TemporaryDirectory() as tmp:
        for path in example_annotations.examples(examples, recursive=False):
            name = os.path.basename(path)
            expect, counts, options = annotations(dkv, path)
            if expect not in ("race", "deadlock", "exit-violation", "lifetime-violation") or not counts:
                continue
            kernels += 1
            for n in counts if all_counts else counts[:1]:
                out = os.path.join(tmp, f"{name}-{n}")
                report = os.path.join(tmp, f"{name}-{n}.json")
                cmd = [dkv, "check", path, "--devices", str(n), *options, "--format", "json",
                       "-o", report, "--trace-dir", out]
                run = subprocess.run(cmd, capture_output=True, text=True)
                if run.returncode != 10:
                    errors.append(f"{' '.join(cmd)}: exit {run.returncode}: {run.stderr}")
                    continue
                findings = json.load(open(report))["findings"]
                files = sorted(os.listdir(out))
                stem = name[:-3]
                expected = sorted(
                    f"{stem}-N{n}-{f['property'] or f['kind'] + '-L' + str(f['primary']['line'])}.svg"
                    for f in findings)
                if files != expected:
                    errors.append(f"{name} N={n}: pictures {files}, expected {expected}")
                    continue
                for f in findings:
                    what = f["property"] or f"{f['kind']}-L{f['primary']['line']}"
                    check_svg(os.path.join(out, f"{stem}-N{n}-{what}.svg"), f, n, errors)
                    pictures += 1
                if len(findings) > 1 and several is None:
                    several = (path, n, options)
        if several:
            path, n, options = several
            svg = os.path.join(tmp, "one.svg")
            run = subprocess.run([dkv, "check", path, "--devices", str(n), *options,
                                  "--trace-svg", svg], capture_output=True, text=True)
            if run.returncode != 1 or "--trace-dir" not in run.stderr or os.path.exists(svg):
                errors.append(f"--trace-svg on {path} (several findings): exit "
                              f"{run.returncode}, {run.stderr!r}")
        html = os.path.join(tmp, "page.html")
        zero = os.path.join(examples, "zero_dst_race.dk")
        run = subprocess.run([dkv, "check", zero, "--devices", "2", "--trace-html", html],
                             capture_output=True, text=True)
        if run.returncode != 10 or not os.path.exists(html):
            errors.append(f"--trace-html: exit {run.returncode}: {run.stderr}")
        else:
            page = open(html, encoding="utf-8").read()
            svg = page[page.index("<svg"):page.index("</svg>") + 6]
            ET.fromstring(svg)  # raises when not well-formed
            if "http" in page.replace("http://www.w3.org/2000/svg", ""):
                errors.append("--trace-html: the page names an external resource")
    for e in errors:
        print("FAIL:", e)
    print(f"{kernels} kernels with findings, {pictures} pictures checked, {len(errors)} errors")
    return 1 if errors or pictures == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
