#!/usr/bin/env python3
"""Trace lengths per engine, before and after witness shortening (docs/performance.md).

    python3 bench/trace_lengths.py build/driver/dkv [--counts 2,3,4] [--timeout S] [CASE...]

A CASE is EXAMPLE:N:ENGINE[,ENGINE...] (e.g. right_permute_no_wait:8:z3,spin); the
default is every example with a finding at N = 2 and 3 (--counts: those counts) with
explore, spin and z3; --timeout is each run's `--timeout` (600). The last lines sum the steps per engine over the rows in which
every engine gave a result.
Runs `dkv check --format json` with the example's `// options:` and prints one
Markdown row per instance and engine: the findings, the engines' own schedule lengths
(`witness_steps`, or the trace's length when shortening left it as it was) and the
shortened trace lengths, as sums over the findings. Run from the source directory.
"""
import json
import pathlib
import subprocess
import sys


def annotations(dkv, path):
    out = subprocess.run([dkv, "parse", str(path), "--annotations"], capture_output=True,
                         text=True, check=True).stdout
    ann = {"expect": [], "devices": [], "options": []}
    for line in out.splitlines():
        words = line.split()
        if words and words[0] in ann:
            ann[words[0]] += words[1:]
    return ann


def lengths(dkv, path, n, engine, options, timeout):
    run = subprocess.run([dkv, "check", str(path), "--devices", str(n), "--engine", engine,
                          "--format", "json", "--timeout", str(timeout), *options],
                         capture_output=True, text=True)
    if run.returncode not in (0, 10):
        return None
    report = json.loads(run.stdout)
    before = after = count = 0
    for f in report.get("findings", []):
        if not f.get("trace"):
            continue  # static pre-check
        count += 1
        after += len(f["trace"])
        before += f.get("witness_steps", len(f["trace"]))
    return count, before, after


def main():
    dkv = sys.argv[1]
    args = sys.argv[2:]
    counts = (2, 3)
    timeout = 600
    while args[:1] in (["--counts"], ["--timeout"]):
        if args[0] == "--counts":
            counts = tuple(int(c) for c in args[1].split(","))
        else:
            timeout = int(args[1])
        args = args[2:]
    cases = []
    if args:
        for arg in args:
            name, n, engines = arg.split(":")
            cases.append((name, int(n), engines.split(",")))
    else:
        for path in sorted(pathlib.Path("examples").glob("*.dk")):
            ann = annotations(dkv, path)
            if not ann["expect"] or ann["expect"][0] in ("ok", "static-error"):
                continue
            for n in counts:
                if ann["devices"] and str(n) not in ann["devices"]:
                    continue
                cases.append((path.stem, n, ["explore", "spin", "z3"]))
    print("| example | N | engine | findings | steps before | steps after |")
    print("|---|---|---|---|---|---|")
    sums = {}
    for name, n, engines in cases:
        path = pathlib.Path("examples") / f"{name}.dk"
        options = annotations(dkv, path)["options"]
        row = {}
        for engine in engines:
            result = lengths(dkv, path, n, engine, options, timeout)
            if result is None:
                print(f"| {name} | {n} | {engine} | (no result) | | |")
                continue
            count, before, after = result
            row[engine] = (before, after)
            print(f"| {name} | {n} | {engine} | {count} | {before} | {after} |")
        if len(row) == len(engines):
            for engine, (before, after) in row.items():
                total = sums.setdefault(engine, [0, 0, 0])
                total[0] += before
                total[1] += after
                total[2] += 1
        sys.stdout.flush()
    print()
    for engine, (before, after, rows) in sums.items():
        print(f"{engine}: {before} -> {after} steps over {rows} rows")


if __name__ == "__main__":
    main()
