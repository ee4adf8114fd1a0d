#!/usr/bin/env python3
"""Runs the steps of dkv's GitHub Action (action.yml) as GitHub runs a composite action.

    action_steps.py REPO WORK_DIR (--dkv DKV | --build)

Each `run:` step runs under `bash --noprofile --norc -eo pipefail` (GitHub's `shell:
bash`), in a workspace with a `kernels/` directory, with GITHUB_ACTION_PATH (the
repository), RUNNER_TEMP, GITHUB_PATH (its lines are put on PATH for the later steps)
and GITHUB_OUTPUT, and `${{ inputs.NAME }}` replaced by the scenario's inputs (the
action's defaults otherwise). The `uses:` step (the SARIF upload) cannot run outside
GitHub: its condition and inputs are checked instead.
  --build: the install and build steps run for real (install-deps.sh --tool, a Release
           build of the dkv target, cmake --install), once; the check step then runs
           the dkv they installed.
  --dkv DKV: the install step runs (every package it names is there already in CI, so
           it installs nothing), the build step runs with a `cmake` that checks its
           arguments, configures the tool build for real (no googletest looked up) and
           installs DKV as RUNNER_TEMP/dkv/bin/dkv instead of building.
Scenarios: a racy and a clean kernel (exit 10, exit-code=10, the race in the SARIF log);
the clean kernel alone (0); an inconclusive check (a tiny --max-states) fails, and
passes with allow-inconclusive (exit-code=5 either way).
"""
import json
import os
import re
import shutil
import subprocess
import sys

import yaml

FAKE_CMAKE = r"""#!/usr/bin/env bash
# A cmake for the Action's build step: checks what the step asks, configures the tool
# build for real, installs the given dkv instead of building it.
set -eu
log=$RUNNER_TEMP/cmake.log
echo "cmake $*" >>"$log"
case "$1" in
  -S)
    case " $* " in *" -DDKV_BUILD_TESTS=OFF "*) ;; *) echo "no -DDKV_BUILD_TESTS=OFF" >&2; exit 1 ;; esac
    [ -f "$2/CMakeLists.txt" ] || { echo "-S $2 is not dkv's source" >&2; exit 1; }
    exec "$REAL_CMAKE" "$@" >"$RUNNER_TEMP/configure.log"
    ;;
  --build)
    case " $* " in *" --target dkv "*) ;; *) echo "the build step builds more than dkv" >&2; exit 1 ;; esac
    [ -f "$2/CMakeCache.txt" ] || { echo "--build $2: not configured" >&2; exit 1; }
    ;;
  --install)
    [ "$3" = --prefix ] || { echo "--install without --prefix" >&2; exit 1; }
    mkdir -p "$4/bin"
    ln -sf "$FAKE_DKV" "$4/bin/dkv"
    ;;
  *) echo "unexpected cmake $*" >&2; exit 1 ;;
esac
"""


def substitute(text, inputs):
    def value(m):
        expr = m.group(1).strip()
        if expr.startswith("inputs."):
            return str(inputs[expr[len("inputs."):]])
        if expr.startswith("steps."):
            return ""
        raise SystemExit(f"action_steps.py: an expression it does not know: {expr}")
    return re.sub(r"\$\{\{(.*?)\}\}", value, text)


def run_steps(action, repo, work, inputs, env, skip_build, fake):
    """Runs the action's run steps; returns (exit code of the first failing step or 0,
    the outputs written to GITHUB_OUTPUT)."""
    temp = os.path.join(work, "runner-temp")
    os.makedirs(temp, exist_ok=True)
    path_file = os.path.join(temp, "github_path")
    output_file = os.path.join(temp, "github_output")
    open(path_file, "w").close()
    open(output_file, "w").close()
    base = dict(env, GITHUB_ACTION_PATH=repo, RUNNER_TEMP=temp, GITHUB_PATH=path_file,
                GITHUB_OUTPUT=output_file)
    for step in action["runs"]["steps"]:
        if "uses" in step:
            continue
        if skip_build and step["name"] in skip_build:
            continue
        assert step.get("shell") == "bash", f"{step['name']}: shell {step.get('shell')}"
        step_env = dict(base)
        extra = [line.strip() for line in open(path_file) if line.strip()]
        step_env["PATH"] = os.pathsep.join(extra + ([fake] if fake else []) + [env["PATH"]])
        for key, value in step.get("env", {}).items():
            step_env[key] = substitute(str(value), inputs)
        script = substitute(step["run"], inputs)
        run = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script],
                             cwd=os.path.join(work, "ws"), env=step_env,
                             capture_output=True, text=True)
        if run.returncode != 0:
            outputs = dict(line.strip().split("=", 1) for line in open(output_file) if "=" in line)
            return run.returncode, outputs, step["name"], run.stdout + run.stderr
    outputs = dict(line.strip().split("=", 1) for line in open(output_file) if "=" in line)
    return 0, outputs, None, ""


def main():
    repo, work = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    build = "--build" in sys.argv
    dkv = sys.argv[sys.argv.index("--dkv") + 1] if "--dkv" in sys.argv else None
    if not build and not dkv:
        sys.exit("usage: action_steps.py REPO WORK_DIR (--dkv DKV | --build)")
    action = yaml.safe_load(open(os.path.join(repo, "action.yml")))
    assert action["runs"]["using"] == "composite", action["runs"]["using"]
    defaults = {name: spec.get("default", "") for name, spec in action["inputs"].items()}
    names = [s.get("name") for s in action["runs"]["steps"]]
    upload = [s for s in action["runs"]["steps"] if "upload-sarif" in s.get("uses", "")]
    assert len(upload) == 1, names
    assert "always()" in upload[0]["if"] and "inputs.upload" in upload[0]["if"], upload[0]["if"]
    assert upload[0]["with"]["sarif_file"] == "${{ inputs.sarif }}", upload[0]["with"]
    assert action["outputs"]["exit-code"]["value"] == "${{ steps.check.outputs.exit-code }}"
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    env = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    fake = None
    if dkv:
        fake = os.path.join(work, "fake")
        os.makedirs(fake)
        with open(os.path.join(fake, "cmake"), "w") as f:
            f.write(FAKE_CMAKE)
        os.chmod(os.path.join(fake, "cmake"), 0o755)
        env["REAL_CMAKE"] = shutil.which("cmake")
        env["FAKE_DKV"] = os.path.abspath(dkv)
    examples = os.path.join(repo, "examples")

    def workspace(*kernels):
        ws = os.path.join(work, "ws")
        shutil.rmtree(ws, ignore_errors=True)
        os.makedirs(os.path.join(ws, "kernels"))
        for k in kernels:
            shutil.copy(os.path.join(examples, k), os.path.join(ws, "kernels"))
        return ws

    errors = []
    # 1. A racy and a clean kernel: the job fails with the race in the SARIF log.
    ws = workspace("zero_dst_race.dk", "right_permute.dk")
    inputs = dict(defaults, paths="kernels")
    code, outputs, failed, log = run_steps(action, repo, work, inputs, env, None, fake)
    if failed != "check the kernels" or code != 10 or outputs.get("exit-code") != "10":
        errors.append(f"racy kernel: step {failed!r} exit {code}, outputs {outputs}\n{log}")
        print("FAIL:", errors[-1])
        return 1
    else:
        sarif = json.load(open(os.path.join(ws, "dkv.sarif")))
        uris = [r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
                for r in sarif["runs"][0]["results"] if r["ruleId"] == "race"]
        if not uris or set(uris) != {"kernels/zero_dst_race.dk"}:
            errors.append(f"racy kernel: race results at {uris}")
    if dkv:
        cache = open(os.path.join(work, "runner-temp", "dkv-build", "CMakeCache.txt")).read()
        if re.search(r"^GTest_DIR|^GTEST_", cache, re.M):
            errors.append("the build step's configure looked for googletest")
    # Later scenarios reuse the dkv the build step installed.
    skip = {"install what building dkv needs (Debian packages)", "build and install dkv"}
    prefix = [os.path.join(work, "runner-temp", "dkv", "bin")]
    env2 = dict(env, PATH=os.pathsep.join(prefix + [env["PATH"]]))
    # 2. The clean kernel alone: the job passes.
    workspace("right_permute.dk")
    code, outputs, failed, log = run_steps(action, repo, work, inputs, env2, skip, None)
    if code != 0 or outputs.get("exit-code") != "0":
        errors.append(f"clean kernel: step {failed!r} exit {code}, outputs {outputs}\n{log}")
    # 3. Inconclusive: fails, unless allowed.
    workspace("right_permute.dk")
    tiny = dict(inputs, args="--devices 4 --engine explore --max-states 3")
    code, outputs, failed, log = run_steps(action, repo, work, tiny, env2, skip, None)
    if code != 5 or outputs.get("exit-code") != "5":
        errors.append(f"inconclusive: step {failed!r} exit {code}, outputs {outputs}\n{log}")
    code, outputs, failed, log = run_steps(
        action, repo, work, dict(tiny, **{"allow-inconclusive": "true"}), env2, skip, None)
    if code != 0 or outputs.get("exit-code") != "5":
        errors.append(f"allowed inconclusive: step {failed!r} exit {code}, outputs {outputs}\n{log}")
    for e in errors:
        print("FAIL:", e)
    if not errors:
        print("ok: the Action's steps (racy: 10, clean: 0, inconclusive: 5, allowed: passes)")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
