#!/usr/bin/env bash
# Golden test of one example's whole report in the three formats:
#   example_reports.sh DKV EXAMPLE GOLDEN_DIR
# Checks EXAMPLE (a path under examples/) at the first device count of its
# `// devices:` annotation (or its first `// mesh:`; 2 devices when it has neither),
# with its `// options:`, using `--engine explore` (deterministic, no timing), as text,
# JSON and SARIF, and compares each with GOLDEN_DIR/NAME.{txt,json,sarif} (NAME: the
# path under examples/ without .dk, '/' as '.') through golden.sh: exit code and
# standard output byte for byte. With DKV_UPDATE_GOLDEN=1 the goldens are rewritten:
#   DKV_UPDATE_GOLDEN=1 ctest --test-dir build -R '^golden\.example\.'
set -u
# The text report fits its traces to COLUMNS (driver::textWidth): the goldens are at
# the default width.
unset COLUMNS
dkv=$1 example=$2 dir=$3
here=$(cd "$(dirname "$0")" && pwd)
if ! annotations=$("$dkv" parse "$example" --annotations 2>&1); then
  echo "FAIL: $example: malformed annotations"
  echo "$annotations"
  exit 1
fi
instance=(--devices 2)
devices=$(echo "$annotations" | awk '$1 == "devices" { print $2; exit }')
mesh=$(echo "$annotations" | awk '$1 == "mesh" { print $2; exit }')
if [ -n "$devices" ]; then
  instance=(--devices "$devices")
elif [ -n "$mesh" ]; then
  instance=(--mesh "$mesh")
fi
read -r -a options <<<"$(echo "$annotations" | awk '$1 == "options" { $1 = ""; print substr($0, 2) }')"
name=${example#*examples/}
name=${name%.dk}
name=${name//\//.}
status=0
for format in text json sarif; do
  ext=$format
  [ "$format" = text ] && ext=txt
  golden=$dir/$name.$ext
  if [ ! -f "$golden" ] && [ "${DKV_UPDATE_GOLDEN:-0}" != 1 ]; then
    echo "FAIL: no golden $golden (run with DKV_UPDATE_GOLDEN=1 to create it)"
    status=1
    continue
  fi
  bash "$here/golden.sh" "$golden" "$dkv" check "$example" "${instance[@]}" "${options[@]}" \
    --engine explore --format "$format" || status=1
  # The text report prints each finding once (a root cause's heading or one of its
  # notes): as many finding lines as the verdict line counts, none twice.
  if [ "$format" = text ] && [ -f "$golden" ]; then
    headings=$(awk -f "$here/../report/finding_lines.awk" "$golden")
    count=$(printf '%s\n' "$headings" | grep -c .)
    verdict=$(sed -n 's/^\([0-9]*\) findings\{0,1\}, .*/\1/p' "$golden" | head -1)
    if [ -n "$(printf '%s\n' "$headings" | sort | uniq -d)" ] ||
      { [ -n "$verdict" ] && [ "$count" != "$verdict" ]; }; then
      echo "FAIL: $golden: $count finding headings (some twice?), the verdict line says '$verdict'"
      status=1
    fi
  fi
done
exit $status
