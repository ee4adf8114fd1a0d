#!/usr/bin/env bash
# The explain entry of every finding of every example (docs/explain.md; examples/ and its
# subdirectories): each example
# at the two smallest device counts of its `// devices:` annotation, with its
# `// options:`, checked with the auto engine (explore decides them); one line per instance,
#   EXAMPLE --devices N [OPTIONS]: PROPERTY=ENTRY ...   (a pre-check finding: KIND@LINE=ENTRY)
# compared with tests/report/explain_examples.txt. It fails whenever the classifier
# (report/Explain.cpp) or a finding's shape (semantics::findingShape) changes what an
# example maps to. DKV_UPDATE_GOLDEN=1 rewrites the list (review its diff).
# Usage: explain_examples.sh DKV EXPECTED_LIST EXAMPLES_DIR [ENGINE]
# ENGINE (default auto, which decides these examples by explore) is passed as
# --engine.
set -euo pipefail
dkv=$1
expected=$2
examples=$3
engine=${4:-auto}
actual=$(mktemp)
trap 'rm -f "$actual"' EXIT
# The examples and their annotations from the one reader (tests/examples/annotations.py,
# which asks dkv itself); a malformed annotation fails the test.
listing=$(python3 "$(dirname "$0")/../examples/annotations.py" "$dkv" "$examples")
while IFS=$'\x1f' read -r name devices options _; do
  file=$examples/$name
  counts=$(tr ' ' '\n' <<<"$devices" | head -n 2)
  for n in $counts; do
    # shellcheck disable=SC2086 # the options are words
    json=$("$dkv" check "$file" --devices "$n" --engine "$engine" --no-fix $options --format json 2>/dev/null) || true
    entries=$(python3 -c '
import json, sys
text = sys.stdin.read()
if not text.strip():
    print("(no report)")
    sys.exit(0)
report = json.loads(text)
out = []
for f in report.get("findings", []):
    key = f.get("property") or "%s@%d" % (f["kind"], f["primary"]["line"])
    out.append("%s=%s" % (key, f["explain"]))
print(" ".join(out) if out else "(%s)" % report["status"])
' <<<"$json")
    echo "$name --devices $n${options:+ $options}: $entries" >>"$actual"
  done
done <<<"$listing"
if [[ "${DKV_UPDATE_GOLDEN:-}" == 1 ]]; then
  cp "$actual" "$expected"
  exit 0
fi
diff -u "$expected" "$actual"
