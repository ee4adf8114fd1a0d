#!/usr/bin/env python3
"""The text traces cut no cell (report::renderTrace, docs/traces.md "Text traces").

    trace_text_check.py DKV EXAMPLES_DIR

Checks every example at 4 and at 8 devices: `dkv check EXAMPLES_DIR --devices N
--format json` gives every finding's trace, then the text report of the instances
with findings (`COLUMNS=160` at 4 devices: a table of one column per device; the
default width, 100, at 8: one row per step) must
  - have no line of a trace wider than the width;
  - in a table, keep every row's column separators where the header has them, and
    put each step in its device's column only;
  - show each step whole: the cell's (or row's) wrapped lines, put back together, are
    the step's text and `@LINE` (a DMA's step prefixed with `dma K: `), then its notes
    in brackets (starting with its context where that changes), then the labels of
    the steps the finding is about (`^ racing access`), each such step marked `>`;
  - have one numbered step per step of the JSON trace, in order.
Exit 0 when every check holds.
"""
import json
import os
import re
import subprocess
import sys

HEADING = re.compile(r"^\S.*: (race|deadlock|exit-violation|lifetime-violation): .* \[([\w.-]+)\]$")


def squash(text):
    return re.sub(r"\s+", "", text)


def trace_blocks(report):
    """{(file, property): [trace lines]} from a text report of several instances."""
    blocks = {}
    file = prop = None
    lines = report.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        m = re.match(r"^== (\S+) ", line)
        if m:
            file = m.group(1)
        m = HEADING.match(line)
        if m and ": note: " not in line:  # a root cause's other findings are notes
            prop = m.group(2)
        m = re.match(r"^  trace of (\S+) \(", line)
        if m:
            prop = m.group(1)  # a root cause's trace: the finding it is of
        if (line.startswith("  trace (") or m) and file and prop:
            body = []
            i += 1
            while i < len(lines) and lines[i].startswith("  "):
                body.append(lines[i])
                i += 1
            blocks[(file, prop)] = body
            continue
        i += 1
    return blocks


def expected_text(step):
    text = step["text"]
    if step["actor"] == "dma" and not text.startswith(f"dma {step['id']} "):
        text = f"dma {step['id']}: " + text
    if step.get("line"):
        # A step in another file names it (@file:L); the examples have one file each.
        text += f" @{step['line']}"
    return text


def check_trace(where, body, trace, width, errors):
    for line in body:
        if len(line) > width:
            errors.append(f"{where}: a line of {len(line)} characters (width {width}): {line!r}")
    number = re.compile(r"^  ([ >])\s*(\d+)\.  ")
    # A table has a header of process names (report::renderTrace: when every column
    # gets 24 characters), a list starts with step 1.
    table = bool(body) and not number.match(body[0])
    # A trace of more than 400 steps shows its first 20, its last 60 and 8 around each
    # marked step; a line says how many steps each gap leaves out.
    gap = re.compile(r"^\s+\.\.\. (\d+) steps not shown \(every step: --format json, --trace-html\) \.\.\.$")
    gaps = {}  # the step number after a gap -> the steps it leaves out
    steps = []  # [(marked, device or None, [pieces], number)]
    columns = None
    names = []
    start = 0
    for line in body:
        if table and columns is None:
            # The header: the first column starts at the prefix, then " | " separators.
            if "device 0" not in line:
                errors.append(f"{where}: neither a header nor step 1: {line!r}")
                return
            start = line.index("device 0")
            columns = [start] + [m.start() + 3 for m in re.finditer(r" \| ", line)]
            names = [n.strip() for n in line[start:].split(" | ")]
            continue
        m = number.match(line)
        if "stuck after step" in line and not m:
            continue
        g = gap.match(line)
        if g:
            gaps[len(steps)] = int(g.group(1))
            continue
        prefix = line[:start] if table else line[:len(m.group(0))] if m else ""
        if m:
            steps.append([m.group(1) == ">", None, [], int(m.group(2))])
        elif not steps:
            errors.append(f"{where}: a trace line before the first step: {line!r}")
            return
        if table:
            cells = []
            for c, begin in enumerate(columns):
                end = columns[c + 1] - 3 if c + 1 < len(columns) else None
                cell = line[begin:end] if end is not None else line[begin:]
                if end is not None and len(line) > end and line[end:end + 3].rstrip() != " |":
                    errors.append(f"{where}: a separator out of place: {line!r}")
                    return
                cells.append(cell.strip())
            filled = [c for c, text in enumerate(cells) if text]
            if len(filled) > 1:
                errors.append(f"{where}: one row line fills several columns: {line!r}")
                return
            if filled:
                if steps[-1][1] is None:
                    steps[-1][1] = filled[0]
                elif steps[-1][1] != filled[0]:
                    errors.append(f"{where}: a step in two columns: {line!r}")
                    return
                steps[-1][2].append(cells[filled[0]])
        else:
            steps[-1][2].append(line[len(prefix):].strip() if m else line.strip())
    numbers = [s[3] for s in steps]
    if len(trace) <= 400:
        if numbers != list(range(1, len(trace) + 1)) or gaps:
            errors.append(f"{where}: {len(steps)} numbered steps for {len(trace)} trace steps")
            return
    else:
        marks = [n for (marked, _, _, n) in steps if marked]
        want = set(range(1, 21)) | set(range(len(trace) - 59, len(trace) + 1))
        for n in marks:
            want |= set(range(max(1, n - 8), min(len(trace), n + 8) + 1))
        if numbers != sorted(want):
            errors.append(f"{where}: steps {numbers[:5]}... shown of {len(trace)}, not the head, "
                          f"tail and marked steps")
            return
        for i in range(1, len(numbers)):
            left_out = numbers[i] - numbers[i - 1] - 1
            if gaps.get(i, 0) != left_out:
                errors.append(f"{where}: before step {numbers[i]}: a gap of {gaps.get(i)} "
                              f"for {left_out} steps left out")
                return
    for (marked, column, pieces, k) in steps:
        step = trace[k - 1]
        shown = squash(" ".join(pieces))
        want = squash(expected_text(step))
        process = f"device {step['device']}" + (f" core {step['core']}" if "core" in step else "")
        if not table:
            want = squash(process + ": ") + want
        elif names[column] != process:
            errors.append(f"{where}: step {k} in the column of {names[column]}, not {process}")
        if not shown.startswith(want):
            errors.append(f"{where}: step {k} shows {' / '.join(pieces)!r}, not {expected_text(step)!r}")
            continue
        rest = shown[len(want):]
        # The notes (brackets may nest: `[recv_sem[0]@5 = 0]`), then the labels.
        cut = rest.find("^")
        note, labels = (rest, "") if cut < 0 else (rest[:cut], rest[cut:])
        if note and not (note.startswith("[") and note.endswith("]")):
            errors.append(f"{where}: step {k}: unexpected {rest!r} after its text")
            continue
        if bool(labels) != marked:
            errors.append(f"{where}: step {k}: marked {marked} but labels {labels!r}")


def main():
    dkv, examples = sys.argv[1], sys.argv[2]
    errors = []
    traces = tables = 0
    for devices, width in ((4, 160), (8, 100)):
        run = subprocess.run([dkv, "check", examples, "--devices", str(devices), "--format", "json",
                              "-j", "2"], capture_output=True, text=True)
        report = json.loads(run.stdout)
        # Findings are listed under their root causes, per instance.
        with_findings = [{"file": cause["file"], "findings": inst["findings"]}
                         for cause in report["root_causes"] for inst in cause["instances"]
                         if inst.get("findings")]
        files = sorted({i["file"] for i in with_findings
                        if any(f.get("trace") for f in i["findings"])})
        env = dict(os.environ, COLUMNS=str(width))
        text = subprocess.run([dkv, "check", *files, "--devices", str(devices), "-j", "2"],
                              capture_output=True, text=True, env=env).stdout
        blocks = trace_blocks(text)
        for inst in with_findings:
            for f in inst["findings"]:
                if not f.get("trace"):
                    continue
                where = f"{inst['file']} --devices {devices} [{f['property']}]"
                body = blocks.get((inst["file"], f["property"]))
                if not body:
                    # One trace per root cause: the cause's other findings are notes.
                    continue
                check_trace(where, body, f["trace"], width, errors)
                traces += 1
                tables += not re.match(r"^  [ >]\s*\d+\.", body[0])
    for e in errors:
        print("FAIL:", e)
    # One trace per root cause (85 traces, 37 of them tables, when this was written).
    if traces < 70 or tables < 30:
        print(f"FAIL: only {traces} traces checked, {tables} of them tables")
        return 1
    print(f"{traces} traces checked at 4 and 8 devices ({tables} tables), {len(errors)} problems")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
