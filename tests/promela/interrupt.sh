#!/usr/bin/env bash
# A signal to dkv while spin's tools run (Ctrl-C, a CI timeout's SIGTERM) stops them
# and removes the work directory: the tools run in their own process group, out of
# reach of the terminal's SIGINT, so dkv must stop them itself (promela/Process.h,
# InterruptScope). dkv still dies by the signal (status 128 + N).
#   interrupt.sh DKV EXAMPLES_DIR
set -u
dkv=$1 dir=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
set -m # background jobs get their own process group and SIGINT is not ignored
status=0
for sig in INT TERM; do
  for delay in 0.2 1.5; do
    mkdir "$tmp/$sig$delay"
    # all_reduce at N = 6: spin runs for minutes (compiling pan.c, then the search).
    TMPDIR=$tmp/$sig$delay "$dkv" check "$dir/all_reduce.dk" --devices 6 --engine spin \
      >"$tmp/out" 2>&1 &
    pid=$!
    sleep "$delay"
    kill -"$sig" "$pid"
    wait "$pid"
    got=$?
    want=$((128 + $(kill -l "$sig")))
    if [ "$got" -ne "$want" ]; then
      echo "FAIL: SIG$sig after $delay s: dkv exited $got, expected $want"
      cat "$tmp/out"
      status=1
    fi
    sleep 0.2
    left=$(ls -A "$tmp/$sig$delay")
    if [ -n "$left" ]; then
      echo "FAIL: SIG$sig after $delay s left in TMPDIR: $left"
      status=1
    fi
    for p in $(pgrep -x pan; pgrep -x cc1; pgrep -x spin); do
      case $(readlink "/proc/$p/cwd" 2>/dev/null) in
      "$tmp"/*)
        echo "FAIL: SIG$sig after $delay s left process $p running: $(tr '\0' ' ' </proc/$p/cmdline)"
        kill -9 "$p"
        status=1
        ;;
      esac
    done
  done
done
[ "$status" -eq 0 ] && echo "ok: SIGINT and SIGTERM stop spin's tools and remove the work directory"
exit "$status"
