#!/usr/bin/env bash
# docs/ci.md stays correct: its GitHub Actions workflow, the Action it uses and the
# pre-commit hook, run as written on sample kernels.
#   ci_doc.sh DKV REPO_DIR
# - The workflow (the yaml block under "## GitHub Actions") parses; it runs in the
#   Debian container the packages are for, may write security events, checks out the
#   code before it uses the Action, and gives the Action only inputs action.yml has.
# - The Action's steps run as GitHub runs them (tests/driver/action_steps.py, with a
#   stand-in for the build that configures the tool build for real and installs DKV).
# - The hooks: the framework's yaml block names the hook of .pre-commit-hooks.yaml,
#   whose entry is the hook script; the plain hook block runs the script the package
#   installs, which tests/driver/hook_check.sh runs in a scratch repository.
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

# The fenced block of language $2 after the heading $1 (its first, or its $3-th).
block() {
  awk -v heading="$1" -v fence="$2" -v nth="${3:-1}" '
    $0 == heading { inside = 1; next }
    inside && /^## / { exit }
    inside && !code && $0 ~ "^ *```" fence "$" { if (++seen == nth) { code = 1; indent = index($0, "`") - 1 }; next }
    code && $0 ~ "^ *```" { exit }
    code { print substr($0, indent + 1) }' "$doc"
}

# --- the workflow ---
block "## GitHub Actions" yaml >"$tmp/workflow.yml"
[ -s "$tmp/workflow.yml" ] || fail "no yaml block under '## GitHub Actions' in $doc"
python3 - "$tmp/workflow.yml" "$repo/action.yml" <<'PY' || fail "the workflow"
import sys, yaml
w = yaml.safe_load(open(sys.argv[1]))
action = yaml.safe_load(open(sys.argv[2]))
job = next(iter(w["jobs"].values()))
assert job.get("container") == "debian:12", f"container {job.get('container')}"
assert w["permissions"].get("security-events") == "write", "security-events: write"
steps = job["steps"]
uses = [s.get("uses", "") for s in steps]
dkv = [s for s in steps if s.get("uses", "").startswith("YOUR-ORG/dkv@")]
assert len(dkv) == 1, f"one step uses the dkv Action: {uses}"
checkout = [i for i, u in enumerate(uses) if u.startswith("actions/checkout@")]
assert checkout and checkout[0] < steps.index(dkv[0]), "the checkout comes first"
unknown = set(dkv[0].get("with", {})) - set(action["inputs"])
assert not unknown, f"inputs action.yml does not have: {unknown}"
PY
echo "ok: the workflow uses the Action with its inputs"
python3 "$repo/tests/driver/action_steps.py" "$repo" "$tmp/action" --dkv "$dkv" >"$tmp/log" 2>&1 ||
  fail "the Action's steps"
cat "$tmp/log"
rm -f "$tmp/log"

# --- the hooks ---
block "## A pre-commit hook" yaml >"$tmp/config.yaml"
python3 - "$tmp/config.yaml" "$repo/.pre-commit-hooks.yaml" "$repo" <<'PY' || fail "the framework's hook"
import os, sys, yaml
config = yaml.safe_load(open(sys.argv[1]))
hooks = yaml.safe_load(open(sys.argv[2]))
ids = [h["id"] for r in config["repos"] for h in r["hooks"]]
assert ids == ["dkv"], ids
hook = next(h for h in hooks if h["id"] == "dkv")
assert hook["language"] == "script", hook["language"]
entry = os.path.join(sys.argv[3], hook["entry"])
assert os.access(entry, os.X_OK), f"{hook['entry']} is not an executable file"
PY
block "## A pre-commit hook" bash >"$tmp/pre-commit"
grep -qx 'exec /usr/share/dkv/pre-commit-hook.sh "$@"' "$tmp/pre-commit" ||
  fail "the plain hook does not run /usr/share/dkv/pre-commit-hook.sh"
grep -q 'DESTINATION ${CMAKE_INSTALL_DATADIR}/dkv' "$repo/packaging/Packaging.cmake" ||
  fail "the package does not install the hook into /usr/share/dkv"
bash "$repo/tests/driver/hook_check.sh" "$dkv" "$repo" || exit 1
