#!/usr/bin/env bash
# The tracer dispatches on names through tables (the API registry, AttrRow tables of
# pytrace/Interp.h), never through chains of `name == "..."` comparisons (issue 22): this
# lists every such comparison in pytrace/ and allows only the two single checks of
# Python's own syntax (a class's `metaclass=` keyword, `from M import *`).
#   no_name_chains.sh SOURCE_DIR
set -u
allowed='k\.name == "metaclass"|a\.name == "\*"'
found=$(grep -n 'name == "' "$1"/pytrace/*.cpp "$1"/pytrace/*.h | grep -Ev "$allowed")
if [ -n "$found" ]; then
  echo "FAIL: name comparisons in pytrace/ (put them in a table):"
  echo "$found"
  exit 1
fi
echo "ok: no name chain in pytrace/"
