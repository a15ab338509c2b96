#!/bin/bash
# ingot audit of a generated pool of ~500 reports (scripts/gen-reports.py
# bulk), with a duplicate report and a replayed quote added: one worker
# and two give byte-identical JSON, table and HTML, and every node gets
# the verdict the generator intended (the fleet-scale path: rows kept as
# text, AKs parsed once per thread, output streamed; docs/audit.md).
. "$(dirname "$0")/lib.sh"

MKQUOTE=$BUILD_DIR/tools/mkquote
[ -x "$MKQUOTE" ] || fail "missing $MKQUOTE (make all builds it)"
G=$T/pool
python3 "$SRC/scripts/gen-reports.py" --ingot "$INGOT" --mkquote "$MKQUOTE" --out "$G" \
	--scenario bulk --nodes 500 --aks 16 >/dev/null
NOW=1796083200
audit() { "$INGOT" audit --keyring "$G/keyring.json" --manifests "$G/manifests" --now $NOW \
	--reports "$G/reports" --nonces "$G/nonces.txt" --aks "$G/aks.txt" --nodes "$G/nodes.txt" "$@"; }

note "an older second report of h100-00001 and a quote of h100-00002 replayed by h100-00003"
python3 - "$G" <<'PY'
import json, sys
g = sys.argv[1] + "/reports/"
r = json.load(open(g + "h100-00001.json"))
r["time"] = "2026-11-30T00:00:00Z"
json.dump(r, open(g + "h100-00001-old.json", "w"))
src = json.load(open(g + "h100-00002.json"))
r = json.load(open(g + "h100-00003.json"))
r["attestation"] = src["attestation"]
json.dump(r, open(g + "h100-00003.json", "w"))
PY

for j in 1 2; do
	rc=0
	audit --jobs $j --json "$T/j$j.json" >"$T/j$j.txt" || rc=$?
	assert_eq 2 "$rc" "exit status with --jobs $j (a replayed quote is forged)"
	rc=0
	audit --jobs $j --html "$T/j$j.html" >/dev/null || rc=$?
	assert_eq 2 "$rc" "exit status with --jobs $j --html"
	rc=0
	audit --jobs $j --json - >"$T/j$j-stdout.json" || rc=$?
	assert_eq 2 "$rc" "exit status with --jobs $j --json -"
done
note "one worker and two: the same bytes"
cmp "$T/j1.json" "$T/j2.json" || fail "--json differs between 1 and 2 workers"
cmp "$T/j1.txt" "$T/j2.txt" || fail "the table differs between 1 and 2 workers"
cmp "$T/j1.html" "$T/j2.html" || fail "the HTML differs between 1 and 2 workers"
cmp "$T/j1.json" "$T/j1-stdout.json" || fail "--json - and --json FILE differ"

note "every verdict as intended"
python3 - "$T/j2.json" "$G/expected.json" <<'PY'
import json, sys
res = json.load(open(sys.argv[1]))
exp = json.load(open(sys.argv[2]))
rows = {r["node"]: r for r in res["nodes"]}
assert len(rows) == 500 == len(exp), (len(rows), len(exp))
# h100-00002 holds the nonce issued to it: the original, still healthy.
exp["h100-00003"]["verdict"] = "nonce-reused"   # and not the nonce issued to it
bad = ["%s: expected %s, got %s %s" % (n, w["verdict"], rows[n]["verdict"], rows[n]["findings"])
       for n, w in sorted(exp.items()) if rows[n]["verdict"] != w["verdict"]]
assert not bad, "\n".join(bad[:20])
codes = [f["code"] for f in rows["h100-00003"]["findings"]]
assert codes == ["nonce-mismatch", "nonce-reused"], codes
assert "also in the report of h100-00002" in rows["h100-00003"]["findings"][1]["detail"]
assert res["ignored_reports"] == ["h100-00001-old.json"], res["ignored_reports"]
assert rows["h100-00001"]["report"] == "h100-00001.json"
want = {}
for w in exp.values():
    want[w["verdict"]] = want.get(w["verdict"], 0) + 1
assert res["summary"] == want, (res["summary"], want)
assert want.get("drifted", 0) > 0 and want["healthy"] > 400, want
order = [(r["group"], -{0: 0, 3: 1, 1: 2, 2: 3}[r["class"]], r["node"]) for r in res["nodes"]]
assert order == sorted(order), "rows not in group, severity, node order"
PY
grep -q '^500 nodes\|^ingot audit: 500 nodes:' "$T/j1.txt" || fail "table summary: $(head -1 "$T/j1.txt")"
