#!/usr/bin/env python3
"""Checks the trace pictures of every example with a finding (docs/traces.md).

    svg_check.py DKV EXAMPLES_DIR [--all-counts]

For each example whose `// expect:` is a finding, at the smallest device count of its
`// devices:` annotation (every count with --all-counts) and with its `// options:`,
runs `dkv check --trace-dir DIR --format json` and checks every picture written:
  - an SVG and an HTML page per finding, named KERNEL-N<devices>-ID.svg / .html (ID:
    the property, or KIND-L<line> for a static finding);
  - the SVG is well-formed XML (xml.etree) with an <svg> root;
  - its lanes (class "lane", data-devices "3" or "4-7" for folded ones) hold every
    device once, in order; its rows (class "step", data-step to data-last) hold every
    trace step once, in order;
  - one solid arrow (class "dma", not "inflight") per DMA landing in the trace, each
    from a DMA that started in the trace; one signal arrow (class "signal") per
    signal to another device, from its lane to the target's;
  - the highlighted elements (class "mark") carry source lines (data-line) and
    include the finding's primary line; a race also marks the line of the DMA it
    races with (its "the dma started here" note), a deadlock marks its stuck waits
    (class "blocked"); no other finding draws blocked devices;
  - no two texts overlap and none leaves the picture: each <text>'s box is computed
    from its position, font size, anchor and length with the renderer's monospace
    character widths (report/Svg.cpp), as the layout places it;
  - no arrow (DMA or signal) crosses a text: each segment of its path against every
    text box but its own label's;
  - the HTML page's SVG parses, it starts at step 1, and it holds the kernel source
    with the finding's primary line marked and the explanation of the finding.
Also: --trace-svg with several findings refuses without --finding (exit 1, naming the
ids and --finding), draws the one --finding names, and suggests the closest id for a
misspelt one. Exit 0 when every check holds.
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
            # A tooltip (<title>) is not drawn.
            text = (element.text or "") + "".join(
                "".join(c.itertext()) + (c.tail or "") if c.tag != SVG + "title" else (c.tail or "")
                for c in element)
            if text.strip():
                width = len(text) * CHAR_WIDTH.get(size, 0.61 * size)
                x, y = dx + float(element.get("x")), dy + float(element.get("y"))
                anchor = element.get("text-anchor", "start")
                x0 = x - width if anchor == "end" else x - width / 2 if anchor == "middle" else x
                boxes.append((x0, y - 0.8 * size, x0 + width, y + 0.2 * size, text, element))
            return
        for child in element:
            walk(child, dx, dy, size)

    walk(root, 0.0, 0.0, 12.0)
    return boxes


def check_layout(root, where, errors):
    """No two texts overlap (by more than half a pixel) and every text is inside."""
    width, height = float(root.get("width")), float(root.get("height"))
    boxes = sorted((b[:5] for b in text_boxes(root)), key=lambda b: b[1])
    for i, a in enumerate(boxes):
        if a[0] < -0.5 or a[2] > width + 0.5 or a[1] < -0.5 or a[3] > height + 0.5:
            errors.append(f"{where}: text {a[4]!r} leaves the picture")
        for b in boxes[i + 1:]:
            if b[1] >= a[3] - 0.5:
                break  # sorted by top: no later box reaches up into a
            if min(a[2], b[2]) - max(a[0], b[0]) > 0.5 and min(a[3], b[3]) - max(a[1], b[1]) > 0.5:
                errors.append(f"{where}: texts overlap: {a[4]!r} and {b[4]!r}")


def segments(d):
    """The axis-parallel segments of a path "M x y (V y | H x)..." ((x0, y0, x1, y1))."""
    words = d.replace(",", " ").split()
    out, x, y, i = [], 0.0, 0.0, 0
    while i < len(words):
        op = words[i]
        if op == "M":
            x, y = float(words[i + 1]), float(words[i + 2])
            i += 3
        elif op == "V":
            ny = float(words[i + 1])
            out.append((x, y, x, ny))
            y = ny
            i += 2
        elif op == "H":
            nx = float(words[i + 1])
            out.append((x, y, nx, y))
            x = nx
            i += 2
        elif op == "L":
            nx, ny = float(words[i + 1]), float(words[i + 2])
            out.append((x, y, nx, ny))
            x, y = nx, ny
            i += 3
        else:
            return None  # a curve: not an arrow of this renderer
    return out


def crosses(seg, box, margin=0.5):
    """Whether the segment runs through the box shrunk by `margin` (Liang-Barsky)."""
    (x0, y0, x1, y1), (bx0, by0, bx1, by1) = seg, box
    bx0, by0, bx1, by1 = bx0 + margin, by0 + margin, bx1 - margin, by1 - margin
    if bx0 >= bx1 or by0 >= by1:
        return False
    t0, t1 = 0.0, 1.0
    dx, dy = x1 - x0, y1 - y0
    for p, q in ((-dx, x0 - bx0), (dx, bx1 - x0), (-dy, y0 - by0), (dy, by1 - y0)):
        if p == 0:
            if q < 0:
                return False
        else:
            t = q / p
            if p < 0:
                t0 = max(t0, t)
            else:
                t1 = min(t1, t)
    return t0 < t1


def check_crossings(root, where, errors):
    """No segment of a DMA's or signal's arrow runs through a text (but its label)."""
    every = text_boxes(root)
    for group in root.iter(SVG + "g"):
        cls = classes(group)
        if not ({"dma", "signal"} & cls) or "inflight" in cls:
            continue
        own = {id(t) for t in group.iter(SVG + "text")}
        for path in group.iter(SVG + "path"):
            segs = segments(path.get("d", ""))
            if segs is None:
                errors.append(f"{where}: an arrow that is not of straight segments")
                continue
            for seg in segs:
                for (bx0, by0, bx1, by1, text, element) in every:
                    if id(element) not in own and crosses(seg, (bx0, by0, bx1, by1)):
                        who = f"dma {group.get('data-dma')}" if "dma" in cls else "a signal"
                        errors.append(f"{where}: the arrow of {who} (step "
                                      f"{group.get('data-step')}) crosses {text!r}")


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
    check_crossings(root, where, errors)
    everything = list(root.iter())
    held = []
    for lane in (e for e in everything if "lane" in classes(e)):
        first, _, last = lane.get("data-devices", "-1").partition("-")
        held += list(range(int(first), int(last or first) + 1))
    processes = devices * max(1, len({s.get("core", 0) for s in finding.get("trace", [])}))
    if held != list(range(len(held))) or len(held) not in (devices, processes):
        errors.append(f"{where}: lanes hold {held} for {devices} devices")
    trace = finding.get("trace", [])
    covered = []
    for row in (e for e in everything if "step" in classes(e)):
        first, last = int(row.get("data-step")), int(row.get("data-last"))
        covered += list(range(first, last + 1))
    if covered != list(range(1, len(trace) + 1)):
        errors.append(f"{where}: rows hold steps {covered[:12]}... for {len(trace)} trace steps")
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
    if finding["kind"] != "deadlock" and any("blocked" in classes(e) for e in everything):
        errors.append(f"{where}: a {finding['kind']} that draws blocked devices")
    if not want <= lines:
        errors.append(f"{where}: highlighted lines {sorted(lines)} miss {sorted(want - lines)}")


def check_page(path, finding, errors):
    """The stepper page: its SVG parses, it opens at step 1, it shows the kernel source
    with the finding's primary line marked, and the explanation."""
    where = os.path.basename(path)
    page = open(path, encoding="utf-8").read()
    try:
        ET.fromstring(page[page.index("<svg"):page.index("</svg>") + 6])
    except (ValueError, ET.ParseError) as e:
        errors.append(f"{where}: its SVG does not parse: {e}")
        return
    if "http" in page.replace("http://www.w3.org/2000/svg", ""):
        errors.append(f"{where}: the page names an external resource")
    if "show(steps.length ? 1 : 0);" not in page:
        errors.append(f"{where}: does not open at step 1")
    line = finding["primary"].get("line")
    if line and not re.search(rf'<span class="ln hit" id="f\d+-L{line}">', page):
        errors.append(f"{where}: the source does not mark line {line}")
    if f'explain [{finding["explain"]}]' not in page:
        errors.append(f"{where}: no explanation [{finding['explain']}]")


def main():
    dkv, examples = sys.argv[1], sys.argv[2]
    all_counts = "--all-counts" in sys.argv[3:]
    errors, pictures, kernels = [], 0, 0
    several = None  # (path, devices, options) of an instance with several findings
    with tempfile.TemporaryDirectory() as tmp:
        for path in example_annotations.examples(examples, recursive=all_counts):
            name = os.path.relpath(path, examples).replace(os.sep, ".")
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
                stem = os.path.basename(path)[:-3]
                expected = sorted(
                    f"{stem}-N{n}-{f['property'] or f['kind'] + '-L' + str(f['primary']['line'])}.{ext}"
                    for f in findings for ext in ("svg", "html"))
                if files != expected:
                    errors.append(f"{name} N={n}: pictures {files}, expected {expected}")
                    continue
                for f in findings:
                    what = f["property"] or f"{f['kind']}-L{f['primary']['line']}"
                    check_svg(os.path.join(out, f"{stem}-N{n}-{what}.svg"), f, n, errors)
                    check_page(os.path.join(out, f"{stem}-N{n}-{what}.html"), f, errors)
                    pictures += 1
                if len(findings) > 1 and several is None and all(f["property"] for f in findings):
                    several = (path, n, options, [f["property"] for f in findings])
        if several:
            path, n, options, ids = several
            svg = os.path.join(tmp, "one.svg")
            base = [dkv, "check", path, "--devices", str(n), *options, "--trace-svg", svg]
            run = subprocess.run(base, capture_output=True, text=True)
            if run.returncode != 1 or "--finding" not in run.stderr or ids[0] not in run.stderr \
                    or os.path.exists(svg):
                errors.append(f"--trace-svg on {path} (several findings): exit "
                              f"{run.returncode}, {run.stderr!r}")
            run = subprocess.run(base + ["--finding", ids[-1]], capture_output=True, text=True)
            if run.returncode != 10 or not os.path.exists(svg) or \
                    f"[{ids[-1]}]</title>" not in open(svg, encoding="utf-8").read():
                errors.append(f"--finding {ids[-1]} on {path}: exit {run.returncode}, {run.stderr!r}")
            typo = ids[-1] + "0" if ids[-1][-1] != "0" else ids[-1][:-1] + "1"
            if typo not in ids:
                run = subprocess.run(base + ["--finding", typo], capture_output=True, text=True)
                if run.returncode != 1 or "did you mean" not in run.stderr:
                    errors.append(f"--finding {typo} on {path}: exit {run.returncode}, {run.stderr!r}")
    for e in errors:
        print("FAIL:", e)
    print(f"{kernels} kernels with findings, {pictures} pictures checked, {len(errors)} errors")
    return 1 if errors or pictures == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
