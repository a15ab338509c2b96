#!/bin/bash
# ingot audit --promotions: per node, the rings the image it runs (as its
# quote proves) holds.  On the generated pool (scripts/gen-reports.py), the
# h100 pool's old image is promoted to lab, then its current one: nodes on
# the current image hold "lab", nodes still on the old one "lab(previous)",
# other pools "-", and unquoted nodes show no ring at all (not attested).
. "$(dirname "$0")/lib.sh"
MKQUOTE=$BUILD_DIR/tools/mkquote
[ -x "$MKQUOTE" ] || fail "missing $MKQUOTE (make all builds it)"
FX=$SRC/tests/fixtures/evidence
G=$T/pool
python3 "$SRC/scripts/gen-reports.py" --ingot "$INGOT" --mkquote "$MKQUOTE" --out "$G" >/dev/null
cd "$T"
for k in run prom; do "$INGOT" keys generate -o "$k" >/dev/null; done
mkdir -p rings/keyrings
cp "$SRC/recipes/rings/lab.yaml" rings/
"$INGOT" keys keyring add rings/keyrings/runners.json run.pub --name runner >/dev/null
"$INGOT" keys keyring add rings/keyrings/promoters.json prom.pub --name promoter >/dev/null

for img in h100-old h100; do
	M=$G/manifests/$img.manifest.dsse.json
	mkdir "ev-$img"
	"$INGOT" evidence add --manifest "$M" --kind nccl-tests --from "$FX/all_reduce_perf-1node.txt" \
		--key run.key -o "ev-$img/nccl.evidence.dsse.json" >/dev/null
	"$INGOT" evidence add --manifest "$M" --kind dcgm-diag --level 2 --from "$FX/dcgmi-diag-r2.json" \
		--key run.key -o "ev-$img/dcgm.evidence.dsse.json" >/dev/null
	expect_exit 0 "promoted to lab" "$INGOT" promote --manifest "$M" --ring lab --evidence "ev-$img" \
		--key prom.key --rings rings --promotions promo --now 1796000000
done

NOW=1796083200
rc=0
"$INGOT" audit --keyring "$G/keyring.json" --manifests "$G/manifests" --now $NOW --reports "$G/reports" \
	--nonces "$G/nonces.txt" --aks "$G/aks.txt" --nodes "$G/nodes.txt" --max-age 1h \
	--promotions promo --promotion-keyring rings/keyrings/promoters.json --json audit.json >audit.txt || rc=$?
[ "$rc" != 64 ] || fail "audit usage: $(cat audit.txt)"
assert_contains "$(cat audit.txt)" "SERIAL  RING" "audit table header"
python3 - audit.json "$G/expected.json" <<'PY'
import json, sys
res = json.load(open(sys.argv[1]))
rows = {r["node"]: r for r in res["nodes"]}
held = {n: r.get("ring") for n, r in rows.items()}
assert held["h100-001"] == "lab", held["h100-001"]
old = [n for n, r in rows.items() if r.get("ring") == "lab(previous)"]
assert old, "no node on the previous lab image: %s" % held
assert all(rows[n]["pool"] == "h100" for n in old), old
assert held["a100-001"] == "-", held["a100-001"]
unq = [n for n, r in rows.items() if r["verdict"] == "unquoted"]
assert unq and all("ring" not in rows[n] for n in unq), unq
PY
note "without --promotions, the table is unchanged (no RING column)"
"$INGOT" audit --keyring "$G/keyring.json" --manifests "$G/manifests" --now $NOW --reports "$G/reports" \
	>plain.txt 2>&1 || true
case "$(cat plain.txt)" in *RING*) fail "RING column without --promotions" ;; esac
expect_exit 64 "" "$INGOT" audit --keyring "$G/keyring.json" --manifests "$G/manifests" --reports "$G/reports" \
	--promotions

note "a node whose ring evidence went backwards is reported (ring-rollback)"
# h100-001's verifier met promotions up to serial 1 after recording serial 3
# (verify --ring --state); a copy of its report says so in its ring check.
mkdir back && cp -a "$G/reports/." back/
R=$(grep -l '"h100-001"' back/*.json | head -n 1)
[ -n "$R" ] || fail "no report for h100-001"
python3 - "$R" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
r["checks"] = [c for c in r["checks"] if c["name"] != "ring"] + [
    {"name": "ring", "status": "fail", "summary": "ring lab: refusing a rollback of the ring", "evidence": [],
     "details": {"ring": "lab", "standing": "current", "serial": 1, "ring_serial": 1, "ring_serial_seen": 3}}]
json.dump(r, open(sys.argv[1], "w"))
PY
"$INGOT" audit --keyring "$G/keyring.json" --manifests "$G/manifests" --now $NOW --reports back \
	--nonces "$G/nonces.txt" --aks "$G/aks.txt" --nodes "$G/nodes.txt" --max-age 1h \
	--promotions promo --promotion-keyring rings/keyrings/promoters.json --json back.json >back.txt || true
python3 - back.json audit.json <<'PY'
import json, sys
rows = {r["node"]: r for r in json.load(open(sys.argv[1]))["nodes"]}
codes = [f["code"] for f in rows["h100-001"]["findings"]]
assert "ring-rollback" in codes, codes
msg = [f for f in rows["h100-001"]["findings"] if f["code"] == "ring-rollback"][0]
assert "ring lab: verified against promotions up to serial 1, serial 3 was seen before" in json.dumps(msg), msg
# nobody else is flagged
others = [n for n, r in rows.items() if n != "h100-001" and any(f["code"] == "ring-rollback" for f in r["findings"])]
assert not others, others
PY
# Over time: the node's newest report verified against fewer promotions
# than an older one (no --state on the node: the audit still sees it).
mkdir back2 && cp -a "$G/reports/." back2/
R=$(grep -l '"h100-001"' back2/*.json | head -n 1)
python3 - "$R" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
def ring(serial):
    return [c for c in r["checks"] if c["name"] != "ring"] + [
        {"name": "ring", "status": "pass", "summary": "", "evidence": [],
         "details": {"ring": "lab", "standing": "current", "serial": serial, "ring_serial": serial,
                     "ring_serial_seen": None}}]
old = dict(r, checks=ring(3), time="2026-11-30T00:00:00Z")
json.dump(old, open(sys.argv[1][:-5] + "-older.json", "w"))
json.dump(dict(r, checks=ring(1)), open(sys.argv[1], "w"))
PY
"$INGOT" audit --keyring "$G/keyring.json" --manifests "$G/manifests" --now $NOW --reports back2 \
	--nonces "$G/nonces.txt" --aks "$G/aks.txt" --nodes "$G/nodes.txt" \
	--promotions promo --promotion-keyring rings/keyrings/promoters.json --json back2.json >back2.txt || true
python3 - back2.json <<'PY'
import json, sys
rows = {r["node"]: r for r in json.load(open(sys.argv[1]))["nodes"]}
f = [f for f in rows["h100-001"]["findings"] if f["code"] == "ring-rollback"]
assert f and "the newest report verified against promotions up to serial 1, an older one" in json.dumps(f), rows["h100-001"]
PY
