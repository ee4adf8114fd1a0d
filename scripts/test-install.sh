#!/usr/bin/env bash
# Installs dkv the ways docs/ci.md describes and checks that each gives a working dkv
# (too slow for CI: it builds dkv twice and installs Debian packages; docs/ci.md
# "Installing dkv" has its last run). Needs root (chroot), network access to the Debian
# mirror, and `install-deps.sh --dev` (debootstrap, pre-commit).
#   test-install.sh [WORK_DIR]        (default: .deps/install-test; its build is reused)
# DKV_CMAKE_ARGS: more arguments for the tool build's configure (e.g. a compiler
# launcher: -DCMAKE_CXX_COMPILER_LAUNCHER=ccache).
# It tests the repository's HEAD, copied into WORK_DIR/src.
# 1. The tool build (install-deps.sh --tool; -DDKV_BUILD_TESTS=OFF, from pre-generated
#    parsers, scripts/generate-grammar.sh): configures without googletest, builds the
#    dkv target alone, `cmake --install` gives a dkv that checks an example.
# 2. `cpack` makes dkv_VERSION_ARCH.deb: it holds bin/dkv, docs and examples and depends
#    on the runtime libraries only (no compiler, test tool, Java, Python or npm).
# 3. A clean Debian 12 root (debootstrap --variant=minbase into .deps/debian-root, made
#    once): `dpkg -i` of the package (then `apt-get -f install` for its dependencies)
#    gives a dkv that finds the race of an installed example (exit 10) and verifies a
#    correct one (exit 0); the root has no compiler.
# 4. The GitHub Action (action.yml): its steps run as GitHub runs a composite action
#    (bash -eo pipefail, GITHUB_ACTION_PATH, RUNNER_TEMP, GITHUB_PATH, GITHUB_OUTPUT),
#    on a directory of a racy and a clean kernel: the build step installs dkv, the check
#    step exits 10 with exit-code=10 and a SARIF log; with a clean kernel only, 0.
# 5. The pre-commit framework (.pre-commit-hooks.yaml): `pre-commit try-repo` of this
#    repository in a scratch git repository refuses a staged racy kernel and lets a clean
#    one and a Python file without pallas through.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
work=${1:-$repo/.deps/install-test}
debroot=$repo/.deps/debian-root
mkdir -p "$work"
rm -rf "$work/prefix" "$work/root" "$work/action" "$work/grammar" "$work/src.new" "$work/hookrepo"
# The committed state (HEAD) of the repository, so that edits in progress do not mix in.
# A file that did not change since the last run keeps its time, so that the build of
# the last run is reused.
git -C "$repo" archive HEAD | (mkdir -p "$work/src.new" && tar -x -C "$work/src.new")
if [ -d "$work/src" ]; then
  (cd "$work/src.new" && find . -type f) | while IFS= read -r f; do
    cmp -s "$work/src.new/$f" "$work/src/$f" ||
      { mkdir -p "$(dirname "$work/src/$f")" && cp "$work/src.new/$f" "$work/src/$f"; }
  done
  rm -rf "$work/src.new"
else
  mv "$work/src.new" "$work/src"
fi
root=$work/src
step() { echo; echo "== $*"; }
fail() { echo "FAIL: $*" >&2; exit 1; }

step "1. the tool build: no tests, pre-generated parsers"
bash "$root/scripts/install-deps.sh" --tool
bash "$root/scripts/generate-grammar.sh" "$work/grammar"
cmake -S "$root" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DDKV_BUILD_TESTS=OFF \
  -DDKV_GRAMMAR_DIR="$work/grammar" ${DKV_CMAKE_ARGS:-} >"$work/configure.log"
grep -qi gtest "$work/build/CMakeCache.txt" && fail "the tool build looked for googletest"
grep -q "^ANTLR4_TOOL:" "$work/build/CMakeCache.txt" && fail "the tool build looked for antlr4"
cmake --build "$work/build" --target dkv -j "$(nproc)"
cmake --install "$work/build" --prefix "$work/prefix" >/dev/null
"$work/prefix/bin/dkv" --version
set +e
"$work/prefix/bin/dkv" check "$work/prefix/share/doc/dkv/examples/zero_dst_race.dk" --devices 2 >/dev/null
status=$?
set -e
[ "$status" = 10 ] || fail "the installed dkv: exit $status on zero_dst_race.dk, not 10"
echo "ok: cmake --install gives a dkv that finds the race"

step "2. the Debian package"
rm -f "$work"/build/dkv_*.deb
(cd "$work/build" && cpack --config CPackConfig.cmake >/dev/null)
deb=$(ls "$work"/build/dkv_*.deb)
dpkg-deb -I "$deb"
depends=$(dpkg-deb -f "$deb" Depends)
for tool in g++ gcc cmake googletest libgtest clang-format python3 npm java jre antlr4 z3 spin; do
  grep -qE "(^|[ ,])$tool([ ,(]|$)" <<<"$depends" && fail "the package depends on $tool: $depends"
done
contents=$(dpkg-deb -c "$deb")
for f in ./usr/bin/dkv ./usr/share/dkv/pre-commit-hook.sh ./usr/share/doc/dkv/docs/ci.md \
  ./usr/share/doc/dkv/examples/zero_dst_race.dk; do
  grep -q " $f\$" <<<"$contents" || fail "no ${f#.} in the package"
done
echo "ok: $deb depends on $depends"

step "3. dpkg -i on a clean Debian 12 root"
if [ ! -x "$debroot/bin/bash" ]; then
  debootstrap --variant=minbase bookworm "$debroot" http://deb.debian.org/debian >"$work/debootstrap.log"
fi
# A copy of the clean root for this run, so that every run starts clean.
rm -rf "$work/root"
cp -a "$debroot" "$work/root"
cp "$deb" "$work/root/tmp/"
cp /etc/resolv.conf "$work/root/etc/resolv.conf"
mount -t proc proc "$work/root/proc"
trap 'umount "$work/root/proc" 2>/dev/null || true' EXIT
in_root() { chroot "$work/root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root "$@"; }
in_root sh -c 'command -v g++ cc gcc java python3' && fail "the clean root has a compiler or runtime"
in_root dpkg -i "/tmp/$(basename "$deb")" || true # its dependencies are not there yet
in_root apt-get update -qq
DEBIAN_FRONTEND=noninteractive in_root apt-get install -f -y -qq --no-install-recommends >/dev/null
in_root dkv --version
set +e
in_root dkv check /usr/share/doc/dkv/examples/zero_dst_race.dk --devices 2 >"$work/race.txt"
race=$?
in_root dkv check /usr/share/doc/dkv/examples/right_permute.dk --devices 4 >"$work/ok.txt"
ok=$?
set -e
[ "$race" = 10 ] || fail "in the clean root: exit $race on zero_dst_race.dk, not 10"
[ "$ok" = 0 ] || fail "in the clean root: exit $ok on right_permute.dk, not 0"
grep -q "^verified: kernel right_permute" "$work/ok.txt" || fail "no verdict: $(cat "$work/ok.txt")"
in_root sh -c 'dpkg -l | grep -E "^ii +(g\+\+|gcc|cmake|default-jre|googletest|clang-format|python3) "' &&
  fail "installing the package brought build or test tools"
umount "$work/root/proc"
trap - EXIT
echo "ok: dpkg -i of $(basename "$deb") on a clean Debian root gives a working dkv"

step "4. the GitHub Action's steps"
# CMake takes CMAKE_CXX_COMPILER_LAUNCHER from the environment: a compiler cache, when
# DKV_CMAKE_ARGS names one, speeds up the Action's own build too.
case ${DKV_CMAKE_ARGS:-} in
  *COMPILER_LAUNCHER=ccache*) export CMAKE_CXX_COMPILER_LAUNCHER=ccache CMAKE_C_COMPILER_LAUNCHER=ccache ;;
esac
python3 "$root/tests/driver/action_steps.py" "$root" "$work/action" --build
echo "ok: the Action's steps"

step "5. the pre-commit framework's hook"
# `pre-commit try-repo` reads a git repository: a clone of the tested HEAD.
rm -rf "$work/hookrepo"
git clone -q --no-hardlinks "$repo" "$work/hookrepo"
git -C "$work/hookrepo" checkout -q "$(git -C "$repo" rev-parse HEAD)"
bash "$root/tests/driver/hook_check.sh" "$work/prefix/bin/dkv" "$work/hookrepo" --framework
echo
echo "all install checks passed"
