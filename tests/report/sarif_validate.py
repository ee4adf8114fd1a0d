#!/usr/bin/env python3
"""Validates dkv's SARIF against the SARIF 2.1.0 JSON schema.

    sarif_validate.py DKV SCHEMA EXAMPLES_DIR [--all]

For every example kernel, `dkv check EXAMPLE --devices N --format sarif` (N: the
smallest count of its `// devices:` annotation, with its `// options:`, i.e.
`--devices-from-annotations` restricted to one count) must validate and hold one
result per root cause of the JSON report, with what code scanning needs (rules' full
descriptions, markdown help, help URIs, tags, precision and security-severity; each
result's fingerprint, end columns, related locations linked from its message, and the
root cause's verified fix as `fixes`), and the same fingerprints in a second run; a
comment added at the top of right_permute_no_wait.dk (every line moved) keeps its
fingerprints. With --all, also one call over the whole
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


def fingerprints(log):
    return sorted(r["partialFingerprints"]["dkvRootCause/v1"] for r in log["runs"][0]["results"]
                  if "dkvRootCause/v1" in r.get("partialFingerprints", {}))


def shape_problems(log, causes):
    """What code scanning needs of the log: rules with full descriptions, markdown help,
    a help URI and ranking properties; one result per root cause (`causes`, the JSON
    report's), each with a fingerprint, end columns, related locations linked from its
    message, and the root cause's verified fix as `fixes`."""
    problems = []
    run_ = log["runs"][0]
    for rule in run_["tool"]["driver"]["rules"]:
        for key in ("fullDescription", "help", "helpUri", "properties"):
            if key not in rule:
                problems.append(f"rule {rule['id']} has no {key}")
        if "markdown" not in rule.get("help", {}):
            problems.append(f"rule {rule['id']} has no markdown help")
        props = rule.get("properties", {})
        if not props.get("tags") or "precision" not in props or "security-severity" not in props:
            problems.append(f"rule {rule['id']} lacks tags, precision or security-severity")
    results = [r for r in run_["results"] if "dkvRootCause/v1" in r.get("partialFingerprints", {})]
    if len(results) != len(causes):
        problems.append(f"{len(results)} results for {len(causes)} root causes")
    for r, c in zip(results, causes):
        region = r["locations"][0]["physicalLocation"].get("region", {})
        if "startColumn" in region and region.get("endColumn", 0) <= region["startColumn"] - 1:
            problems.append(f"result {r['ruleId']} has no end column")
        text = r["message"]["text"]
        for rel in r.get("relatedLocations", []):
            if f"]({rel['id']})" not in text:
                problems.append(f"related location {rel['id']} is not linked from the message")
        if "fix" in c:
            fixes = r.get("fixes", [])
            if not fixes or not fixes[0]["artifactChanges"][0]["replacements"]:
                problems.append(f"root cause {c['id']} has a fix, its result has no fixes")
            elif fixes[0]["description"]["text"] != c["fix"]["summary"]:
                problems.append(f"the fix of {c['id']} is described differently")
        elif "fixes" in r:
            problems.append(f"a result has fixes, root cause {c['id']} has none")
    return problems


def moved_lines_keep_fingerprints(dkv, example):
    text = example.read_text()
    with tempfile.TemporaryDirectory() as tmp:
        moved = pathlib.Path(tmp) / example.name
        moved.write_text("// a comment that moves every line\n\n" + text)
        original = pathlib.Path(tmp) / ("orig_" + example.name)
        original.write_text(text)
        a = run([dkv, "check", str(original), "--devices", "2", "--format", "sarif"])
        b = run([dkv, "check", str(moved), "--devices", "2", "--format", "sarif"])
        fa, fb = fingerprints(json.loads(a.stdout)), fingerprints(json.loads(b.stdout))
        # The file name is part of a fingerprint: compare the two copies' own names out.
        if not fa or len(fa) != len(fb):
            print(f"FAIL: {example.name}: {len(fa)} and {len(fb)} fingerprints")
            return 1
        c = run([dkv, "check", str(moved), "--devices", "2", "--format", "sarif"])
        if fingerprints(json.loads(c.stdout)) != fb:
            print(f"FAIL: {example.name}: the fingerprints differ between two runs")
            return 1
        # The same file name, lines moved: copy the moved text over the original's name.
        original.write_text(moved.read_text())
        d = run([dkv, "check", str(original), "--devices", "2", "--format", "sarif"])
        if fingerprints(json.loads(d.stdout)) != fa:
            print(f"FAIL: {example.name}: moving the lines changes the fingerprints")
            return 1
    return 0


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
        elif report.stdout and json.loads(report.stdout).get("status") == "static-error":
            # a kernel that does not load: its diagnostics are results
            if not results:
                print(f"FAIL: {what}: exit {sarif.returncode} without results")
                failures += 1
        elif report.stdout:
            causes = json.loads(report.stdout)["root_causes"]
            problems = shape_problems(log, causes)
            if problems:
                print(f"FAIL: {what}: " + "; ".join(problems[:5]))
                failures += 1
            again = run([dkv, "check", str(example), "--devices", n, "--format", "sarif"] + options)
            if fingerprints(json.loads(again.stdout)) != fingerprints(log):
                print(f"FAIL: {what}: the fingerprints differ between two runs")
                failures += 1
        checked += 1
    # Fingerprints do not depend on line numbers: a comment added at the top of a kernel
    # moves every line and changes none of them.
    failures += moved_lines_keep_fingerprints(dkv, examples / "right_permute_no_wait.dk")
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
