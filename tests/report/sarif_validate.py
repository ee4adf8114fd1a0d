#!/usr/bin/env python3
"""Validates dkv's SARIF against the SARIF 2.1.0 JSON schema.

    sarif_validate.py DKV SCHEMA EXAMPLES_DIR [--all]

For every example kernel, `dkv check EXAMPLE --devices N --format sarif` (N: the
smallest count of its `// devices:` annotation, with its `// options:`, i.e.
`--devices-from-annotations` restricted to one count) must validate and hold one
result per finding of the JSON report. With --all, also one call over the whole
directory with --devices-from-annotations -j 2 --engine explore --max-states 20000. The schema comes from
scripts/install-deps.sh (.deps/sarif/); the validator is Debian's python3-jsonschema.
"""
import json
import pathlib
import subprocess
import sys
import tempfile

import jsonschema


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True, check=False)


def annotations(dkv, example):
    out = run([dkv, "parse", str(example), "--annotations"]).stdout
    devices, options = [], []
    for line in out.splitlines():
        words = line.split()
        if words and words[0] == "devices":
            devices = [int(w) for w in words[1:]]
        if words and words[0] == "options":
            options += words[1:]
    return devices, options


def validate(validator, text, what):
    try:
        log = json.loads(text)
    except json.JSONDecodeError as e:
        print(f"FAIL: {what}: not JSON: {e}")
        return None
    errors = sorted(validator.iter_errors(log), key=lambda e: list(e.path))
    for e in errors[:5]:
        print(f"FAIL: {what}: {'/'.join(map(str, e.path))}: {e.message[:300]}")
    return None if errors else log


def main():
    dkv, schema_path, examples = sys.argv[1], pathlib.Path(sys.argv[2]), pathlib.Path(sys.argv[3])
    if not schema_path.is_file():
        print(f"FAIL: no SARIF schema at {schema_path}: run scripts/install-deps.sh")
        return 1
    schema = json.loads(schema_path.read_text())
    validator = jsonschema.Draft4Validator(schema)
    failures = 0
    checked = 0
    for example in sorted(examples.rglob("*.dk")):
        devices, options = annotations(dkv, example)
        n = str(devices[0] if devices else 2)
        sarif = run([dkv, "check", str(example), "--devices", n, "--format", "sarif"] + options)
        what = f"{example.relative_to(examples)} --devices {n}"
        log = validate(validator, sarif.stdout, what)
        if log is None:
            failures += 1
            continue
        results = log["runs"][0]["results"]
        report = run([dkv, "check", str(example), "--devices", n, "--format", "json"] + options)
        if report.returncode != sarif.returncode:
            print(f"FAIL: {what}: exit {sarif.returncode} with SARIF, {report.returncode} with JSON")
            failures += 1
        elif json.loads(report.stdout).get("status") == "static-error":
            # a kernel that does not load: its diagnostics are results
            if not results:
                print(f"FAIL: {what}: exit {sarif.returncode} without results")
                failures += 1
        else:
            findings = json.loads(report.stdout)["findings"]
            if len(findings) != len(results):
                print(f"FAIL: {what}: {len(results)} results for {len(findings)} findings")
                failures += 1
        checked += 1
    if "--all" in sys.argv:
        with tempfile.TemporaryDirectory() as tmp:
            out = pathlib.Path(tmp) / "dkv.sarif"
            # explore with a small state budget: the large instances end inconclusive
            # quickly, which also puts inconclusive notifications into the log (the
            # default engine, auto, would hand them to z3 instead).
            r = run([dkv, "check", str(examples), "--devices-from-annotations", "-j", "2",
                     "--engine", "explore", "--max-states", "20000", "--format", "sarif",
                     "-o", str(out)])
            if validate(validator, out.read_text() if out.exists() else "", "directory run") is None:
                failures += 1
            elif "summary:" not in r.stdout:
                print(f"FAIL: directory run: no summary line on stdout: {r.stdout!r}")
                failures += 1
            checked += 1
    print(f"{checked - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
