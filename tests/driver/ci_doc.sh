#!/usr/bin/env bash
# docs/ci.md stays correct: its GitHub Actions workflow and its pre-commit hook, run
# as written on sample kernels.
#   ci_doc.sh DKV REPO_DIR
# - The workflow (the yaml block under "## GitHub Actions") parses; it runs in the
#   Debian container the packages are for; the scripts it calls exist and take the
#   options it gives; its dkv path is where the build puts the binary; the SARIF
#   upload runs even when the check fails. Its check command, with `kernels/` a
#   directory holding a racy and a clean kernel, exits 10 and writes a SARIF 2.1.0 log
#   with the race as a result at a location relative to the working directory.
# - The hook (the bash block under "## A pre-commit hook"), installed in a scratch git
#   repository, lets a clean kernel, a file with a space in its name and files that are
#   no kernels (a README, a .py without pallas) be committed and refuses a racy kernel.
set -u
dkv=$1 repo=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() {
  echo "FAIL: $1"
  [ -f "$tmp/log" ] && cat "$tmp/log"
  exit 1
}
doc=$repo/docs/ci.md

# The fenced block of language $2 after the heading $1.
block() {
  awk -v heading="$1" -v fence="\`\`\`$2" '
    $0 == heading { inside = 1; next }
    inside && /^## / { exit }
    inside && $0 == fence { code = 1; next }
    code && /^```/ { exit }
    code { print }' "$doc"
}

# --- the workflow ---
block "## GitHub Actions" yaml >"$tmp/workflow.yml"
[ -s "$tmp/workflow.yml" ] || fail "no yaml block under '## GitHub Actions' in $doc"
python3 - "$tmp/workflow.yml" "$tmp/check.sh" <<'EOF' || fail "the workflow"
import sys, yaml
w = yaml.safe_load(open(sys.argv[1]))
job = next(iter(w["jobs"].values()))
assert job.get("container") == "debian:12", f"container {job.get('container')}"
assert w["permissions"].get("security-events") == "write", "security-events: write"
steps = job["steps"]
names = [s.get("name", s.get("uses", "")) for s in steps]
check = [s for s in steps if s.get("name") == "check the kernels"]
assert len(check) == 1, f"one 'check the kernels' step: {names}"
upload = [s for s in steps if "upload-sarif" in s.get("uses", "")]
assert len(upload) == 1 and upload[0].get("if") == "always()", "upload-sarif with if: always()"
assert upload[0]["with"]["sarif_file"] == "dkv.sarif"
assert steps.index(check[0]) < steps.index(upload[0]), "upload after the check"
runs = "\n".join(s.get("run", "") for s in steps)
assert "bash dkv/scripts/install-deps.sh --no-sarif-schema" in runs, "install-deps"
assert "cmake --build dkv/build --target dkv" in runs, "build the dkv target"
open(sys.argv[2], "w").write(check[0]["run"] + "\n")
EOF
grep -q -- '--no-sarif-schema) schema=0' "$repo/scripts/install-deps.sh" ||
  fail "scripts/install-deps.sh does not take --no-sarif-schema"
case $dkv in */driver/dkv) ;; *) fail "the build's dkv is $dkv, not BUILD/driver/dkv" ;; esac
mkdir -p "$tmp/ws/kernels" "$tmp/ws/dkv/build/driver"
cp "$repo/examples/zero_dst_race.dk" "$repo/examples/right_permute.dk" "$tmp/ws/kernels/"
ln -s "$dkv" "$tmp/ws/dkv/build/driver/dkv"
(cd "$tmp/ws" && bash -e "$tmp/check.sh") >"$tmp/log" 2>&1
status=$?
[ $status -eq 10 ] || fail "the workflow's check command exits $status, not 10"
python3 - "$tmp/ws/dkv.sarif" <<'EOF' || fail "dkv.sarif"
import json, sys
log = json.load(open(sys.argv[1]))
assert log["version"] == "2.1.0", log["version"]
results = log["runs"][0]["results"]
races = [r for r in results if r["ruleId"] == "race"]
assert races, [r["ruleId"] for r in results]
uri = races[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
assert uri == "kernels/zero_dst_race.dk", uri
EOF
echo "ok: the workflow's check command exits 10 with the race in dkv.sarif"

# --- the hook ---
block "## A pre-commit hook" bash >"$tmp/pre-commit"
[ -s "$tmp/pre-commit" ] || fail "no bash block under '## A pre-commit hook' in $doc"
git init -q "$tmp/git" || fail "git init"
cd "$tmp/git" || exit 1
install -m 755 "$tmp/pre-commit" .git/hooks/pre-commit
export DKV=$dkv
commit() { git -c user.name=t -c user.email=t@example.org commit -q -m "$1" >"$tmp/log" 2>&1; }
printf 'notes\n' >README.md
printf 'import numpy\n' >tool.py
git add README.md tool.py
commit "no kernels" || fail "the hook refused a commit without kernels"
cp "$repo/examples/right_permute.dk" "clean kernel.dk"
git add "clean kernel.dk"
commit "a clean kernel" || fail "the hook refused a clean kernel (with a space in its name)"
cp "$repo/examples/zero_dst_race.dk" racy.dk
git add racy.dk
if commit "a racy kernel"; then fail "the hook let a racy kernel be committed"; fi
grep -q "commit refused" "$tmp/log" || fail "the hook did not say why"
grep -q "race:" "$tmp/log" || fail "the hook did not show the finding"
echo "ok: the hook commits a clean kernel and files that are no kernels, refuses a racy one"
