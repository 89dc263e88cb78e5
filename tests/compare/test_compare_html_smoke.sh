#!/usr/bin/env bash
# The compare report of a hand-built result (test_compare_reports
# --write-html) in headless Chromium (Debian's `chromium`): the DOM it
# parsed still has both SVG charts with one bar per result, and its
# screenshot matches reference_report.png as check_screenshot.py compares
# them. Exit 77 (ctest: skipped) where chromium is not installed.
#   test_compare_html_smoke.sh TEST_COMPARE_REPORTS SOURCE_DIR_OF_THIS_TEST
set -euo pipefail
writer=$1
here=$2
browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
  echo "SKIP: chromium is not installed (apt-get install chromium; cmake/install-deps.sh does it)"
  exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Chromium writes crash-report settings under $HOME/.config whatever its
# profile folder; the suite's HOME is read-only and must stay empty.
export HOME="$work/home"
mkdir -p "$HOME"
"$writer" --write-html "$work/report.html"
# No network: the page must render from the file alone.
flags=(--headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$work/profile"
       --window-size=1200,1600 --proxy-server=127.0.0.1:9 --proxy-bypass-list='<-loopback>')
timeout 60 "$browser" "${flags[@]}" --dump-dom "file://$work/report.html" > "$work/dom.html" 2> "$work/log" ||
  { cat "$work/log"; exit 1; }
timeout 60 "$browser" "${flags[@]}" --screenshot="$work/shot.png" "file://$work/report.html" >> "$work/log" 2>&1 ||
  { cat "$work/log"; exit 1; }
python3 - "$work/dom.html" <<'PY'
import re, sys
dom = open(sys.argv[1], encoding="utf-8").read()
svgs = re.findall(r"<svg .*?</svg>", dom, re.S)
bars = sum(len(re.findall(r'<rect class="bar"', s)) for s in svgs)
# 3 timed (task, device) pairs and 3 benchmarked packages.
if len(svgs) != 2 or bars != 6:
    sys.exit(f"the parsed DOM has {len(svgs)} charts and {bars} bars, want 2 and 6")
if "&lt;conv&amp;1&gt;" not in dom:
    sys.exit("the node named <conv&1> did not survive as text")
print(f"DOM: {len(svgs)} charts, {bars} bars")
PY
if [ -n "${HETC_UPDATE_REFERENCE:-}" ]; then
  cp "$work/shot.png" "$here/reference_report.png"
  echo "reference updated: $here/reference_report.png"
fi
python3 "$here/check_screenshot.py" "$work/shot.png" "$here/reference_report.png"
