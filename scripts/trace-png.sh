#!/usr/bin/env bash
# Renders a trace picture (an SVG or a stepper page of --trace-svg, --trace-html,
# --trace-dir) to a PNG in headless Chromium, to look at it as a browser shows it
# (docs/traces.md, "Looked at in a browser"). A developer's tool: Chromium is installed
# by `scripts/install-deps.sh --dev`, CI does not use it.
#   trace-png.sh PICTURE.svg|PAGE.html OUT.png [WIDTH HEIGHT]
# The window is the SVG's own size (a page's: its SVG's plus the source panel) unless
# WIDTH and HEIGHT are given.
set -euo pipefail
in=$1 out=$2
browser=$(command -v chromium || command -v chromium-browser || true)
[ -n "$browser" ] || { echo "trace-png: no chromium (scripts/install-deps.sh --dev)" >&2; exit 1; }
if [ $# -ge 4 ]; then
  width=$3 height=$4
else
  read -r width height < <(python3 - "$in" <<'EOF'
import re, sys
text = open(sys.argv[1], encoding="utf-8").read()
m = re.search(r'<svg[^>]*width="([\d.]+)" height="([\d.]+)"', text)
w, h = float(m.group(1)), float(m.group(2))
page = sys.argv[1].endswith(".html")
# A page: the source panel (560 px) left of the SVG, the step bar (about 90 px) above.
print(int(w + (600 if page else 20)), int(h + (120 if page else 20)))
EOF
)
fi
"$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars \
  --window-size="$width,$height" --screenshot="$(realpath -m "$out")" \
  "file://$(realpath "$in")" >/dev/null 2>&1
[ -s "$out" ] || { echo "trace-png: chromium wrote no $out" >&2; exit 1; }
echo "$out (${width}x$height)"
