#!/bin/bash
# The audit's HTML page, rendered by a real browser (headless Chromium):
# the DOM Chromium builds must hold one row per node with the verdict the
# generator intended, and the page must be self-contained (no scripts, no
# external resources).  Skips only when chromium is not installed.
. "$(dirname "$0")/lib.sh"

CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
[ -n "$CHROMIUM" ] || skip "chromium not installed (Debian package chromium)"
MKQUOTE=$BUILD_DIR/tools/mkquote
[ -x "$MKQUOTE" ] || fail "missing $MKQUOTE (make all builds it)"
G=$T/pool
python3 "$SRC/scripts/gen-reports.py" --ingot "$INGOT" --mkquote "$MKQUOTE" --out "$G" >/dev/null

expect_exit 2 "" "$INGOT" audit --keyring "$G/keyring.json" --manifests "$G/manifests" \
	--reports "$G/reports" --nonces "$G/nonces.txt" --aks "$G/aks.txt" --nodes "$G/nodes.txt" \
	--max-age 1h --now 1796083200 --html "$T/audit.html"
assert_file "$T/audit.html"
if grep -qiE '<script|<link|src=|https?://' "$T/audit.html"; then
	fail "HTML page is not self-contained"
fi

note "render with headless chromium"
export HOME=$T/home   # chromium writes its profile there
mkdir -p "$HOME"
chrome() { timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --no-first-run \
	--user-data-dir="$T/profile" "$@" 2>>"$T/chromium.err"; }
chrome --dump-dom "file://$T/audit.html" >"$T/dom.html" || fail "chromium --dump-dom failed: $(tail -5 "$T/chromium.err")"
python3 - "$T/dom.html" "$G/expected.json" <<'PY'
import json, sys
from html.parser import HTMLParser

class Rows(HTMLParser):
    def __init__(self):
        super().__init__()
        self.rows, self.cur, self.cell, self.text = [], None, None, ""
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "tr" and "node" in (a.get("class") or "").split():
            self.cur = {"data-verdict": a.get("data-verdict"), "cells": []}
        elif tag == "td" and self.cur is not None:
            self.cell, self.text = True, ""
    def handle_endtag(self, tag):
        if tag == "td" and self.cur is not None and self.cell:
            self.cur["cells"].append(self.text.strip())
            self.cell = None
        elif tag == "tr" and self.cur is not None:
            self.rows.append(self.cur)
            self.cur = None
    def handle_data(self, d):
        if self.cell:
            self.text += d

p = Rows()
p.feed(open(sys.argv[1]).read())
exp = json.load(open(sys.argv[2]))
got = {r["cells"][0]: r["cells"][3] for r in p.rows}
assert len(p.rows) == len(exp), (len(p.rows), len(exp))
for node, want in exp.items():
    assert got.get(node) == want["verdict"], (node, got.get(node), want["verdict"])
flavor = [r for r in p.rows if r["cells"][0] == "h100-d-flavor"][0]
assert "driver.flavor: manifest open, node proprietary" in flavor["cells"][4], flavor
PY

note "screenshot"
(cd "$T" && chrome --window-size=1400,1200 --screenshot="$T/audit.png" "file://$T/audit.html" >/dev/null) ||
	fail "chromium --screenshot failed"
assert_file "$T/audit.png"
assert_eq "89504e470d0a1a0a" "$(head -c 8 "$T/audit.png" | od -An -tx1 | tr -d ' \n')" "PNG signature"
[ "$(stat -c %s "$T/audit.png")" -gt 10000 ] || fail "screenshot suspiciously small"
