# The common start of the driver's test scripts (sourced, after `set -u`): a scratch
# directory `tmp` removed at exit, `fail MESSAGE` (prints it, and the script exits 1 at
# its end: `exit "$status"`), and wall-clock helpers for the scripts that time dkv.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
fail() {
  echo "FAIL: $*"
  status=1
}
# Seconds since the epoch, with nanoseconds.
now() { date +%s.%N; }
# Whether A > B (decimals).
longer() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a > b) }'; }
