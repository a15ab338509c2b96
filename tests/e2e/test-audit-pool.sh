#!/bin/bash
# ingot audit on a generated pool of ~30 nodes: healthy, drifted in each
# tuple field, on an older image, forged (AK not enrolled, replayed nonce,
# altered quote, PCR values changed after quoting, PCR without a matching
# event log, unsigned image), stale, unquoted and missing.  Every node must
# get the verdict the generator intended, drift must name the field, and
# the exit status must follow the worst verdict.
. "$(dirname "$0")/lib.sh"

MKQUOTE=$BUILD_DIR/tools/mkquote
[ -x "$MKQUOTE" ] || fail "missing $MKQUOTE (make all builds it)"
G=$T/pool
python3 "$SRC/scripts/gen-reports.py" --ingot "$INGOT" --mkquote "$MKQUOTE" --out "$G" >/dev/null
NOW=1796083200
audit() { "$INGOT" audit --keyring "$G/keyring.json" --manifests "$G/manifests" --now $NOW "$@"; }
ALL=(--reports "$G/reports" --nonces "$G/nonces.txt" --aks "$G/aks.txt" --nodes "$G/nodes.txt" --max-age 1h)

note "the generated quotes are TPM quotes to tpm2_checkquote, AK ids agree with openssl"
python3 - "$G/reports/h100-001.json" "$T" <<'PY'
import base64, json, sys
q = json.load(open(sys.argv[1]))["attestation"]["quote"]
open(sys.argv[2] + "/q.msg", "wb").write(base64.b64decode(q["attest"]))
open(sys.argv[2] + "/q.sig", "wb").write(base64.b64decode(q["signature"]))
open(sys.argv[2] + "/q.pem", "w").write(q["ak_pub"])
open(sys.argv[2] + "/q.nonce", "w").write(q["nonce"])
PY
if command -v tpm2_checkquote >/dev/null; then
	tpm2_checkquote -u "$T/q.pem" -m "$T/q.msg" -s "$T/q.sig" -q "$(cat "$T/q.nonce")" -g sha256 >/dev/null ||
		fail "tpm2_checkquote refuses a generated quote"
	! tpm2_checkquote -u "$T/q.pem" -m "$T/q.msg" -s "$T/q.sig" -q "00$(cat "$T/q.nonce")" -g sha256 \
		>/dev/null 2>&1 || fail "tpm2_checkquote accepts a wrong nonce"
fi
AKID=$(openssl pkey -pubin -in "$T/q.pem" -outform DER | sha256sum | cut -d' ' -f1)
grep -qx "$AKID" "$G/aks.txt" || fail "aks.txt lacks the openssl key id $AKID"

note "full pool: forged nodes make it exit 2"
expect_exit 2 "" audit "${ALL[@]}" --json "$T/audit.json"
echo "$OUT" | head -60
python3 - "$T/audit.json" "$G/expected.json" "$AKID" <<'PY'
import json, sys
res = json.load(open(sys.argv[1]))
exp = json.load(open(sys.argv[2]))
rows = {r["node"]: r for r in res["nodes"]}
assert len(exp) >= 20, len(exp)
assert sorted(rows) == sorted(exp), (sorted(set(rows) ^ set(exp)))
bad = []
for node, want in sorted(exp.items()):
    r = rows[node]
    if r["verdict"] != want["verdict"]:
        bad.append("%s: expected %s, got %s %s" % (node, want["verdict"], r["verdict"], r["findings"]))
    if want["field"]:
        fields = [d["field"] for d in r["drift"]]
        # tuple paths as the manifest spells them, or the probe's spelling
        alt = want["field"].replace("-", "_")
        if want["field"] not in fields and alt not in fields:
            bad.append("%s: drift fields %s lack %s" % (node, fields, want["field"]))
    if want["verdict"] == "healthy" and (r["findings"] or r["drift"]):
        bad.append("%s: healthy with findings %s" % (node, r["findings"]))
assert not bad, "\n".join(bad)
# every verdict class the issue asks for is exercised
seen = {r["verdict"] for r in res["nodes"]}
for v in ("healthy", "drifted", "ak-not-enrolled", "nonce-reused", "forged-quote",
          "pcr-mismatch", "log-mismatch", "unknown-image", "stale", "unquoted", "missing",
          "expired-manifest"):
    assert v in seen, v
# the original holder of the replayed nonce stays healthy
assert rows["h100-001"]["verdict"] == "healthy"
# drifted and failing nodes come before healthy ones within a tuple group
# (by severity: healthy 0 < unverified 3 < drift 1 < forged 2)
sev = {0: 0, 3: 1, 1: 2, 2: 3}
order = [(r["group"], sev[r["class"]]) for r in res["nodes"]]
for (g1, c1), (g2, c2) in zip(order, order[1:]):
    assert g1 < g2 or (g1 == g2 and c1 >= c2), order
# a node's own refusal is kept: its changed nvidia.ko is drift, with the
# path, never the "unverified" of a clean node without a GPU
ko = [r for r in res["nodes"] if r["node"] == "h100-d-ko"][0]
nogpu = rows["h100-u-nogpu"]
assert nogpu["verdict"] == "unverified" and nogpu["drift"] == [], nogpu
assert [f["code"] for f in nogpu["findings"]] == ["unverified"], nogpu["findings"]
assert ko["class"] == 1 and ko["verdict"] == "drifted", ko
assert any(f["code"] == "drifted" and "the node's own files check failed: root / differs" in f["detail"]
           for f in ko["findings"]), ko["findings"]
d = [x for x in ko["drift"] if x["field"].endswith("/nvidia.ko sha256")]
assert len(d) == 1 and d[0]["expected"] != d[0]["actual"], ko["drift"]
assert rows["h100-001"]["ak"] == sys.argv[3], (rows["h100-001"]["ak"], sys.argv[3])
assert res["summary"]["healthy"] == sum(1 for v in exp.values() if v["verdict"] == "healthy")
PY

note "the result does not depend on the thread count"
for j in 1 3; do
	audit "${ALL[@]}" --jobs $j --json "$T/audit-j$j.json" >/dev/null || [ $? -eq 2 ] || fail "--jobs $j"
	cmp "$T/audit.json" "$T/audit-j$j.json" || fail "--jobs $j changes the result"
done

note "table names drifted fields and forged evidence"
assert_contains "$OUT" "h100-d-flavor"
assert_contains "$OUT" "~ driver.flavor: manifest open, node proprietary"
assert_contains "$OUT" "~ rocm.version: manifest 7.2.0, node 7.1.1"
assert_contains "$OUT" "! drifted: boots serial 6, pool's current is 7"
assert_contains "$OUT" "! ak-not-enrolled: AK "
assert_contains "$OUT" "! missing: no report from this node"
assert_contains "$OUT" "h100-candidate.manifest.json, which nobody signed"
assert_contains "$OUT" "manifest h100-candidate.manifest.json: unsigned"
assert_contains "$OUT" "! stale: report is 172800 s old, limit 3600 s"
assert_contains "$OUT" "~ /lib/modules/6.8.0-45-generic/kernel/drivers/video/nvidia.ko sha256: manifest "

note "healthy reports only: exit 0; with drift: exit 1"
mkdir "$T/healthy" "$T/drift"
for n in h100-001 h100-002 mi300-001; do cp "$G/reports/$n.json" "$T/healthy/"; done
cp "$T"/healthy/*.json "$G/reports/h100-d-nccl.json" "$G/reports/h100-stale.json" "$T/drift/"
expect_exit 0 "3 nodes: 3 healthy" audit --reports "$T/healthy" --nonces "$G/nonces.txt" --aks "$G/aks.txt"
expect_exit 1 "~ nccl.version: manifest 2.27.7, node 2.26.2" audit --reports "$T/drift" --max-age 1h
assert_contains "$OUT" "stale"

note "a node's refusal cannot grow its row: 8 paths at most, each check once"
mkdir "$T/refusals"
python3 - "$G/reports/h100-d-ko.json" "$T/refusals/h100-d-ko.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
c = r["checks"][0]
c["details"]["changed"] = [{"path": "/x%d" % i, "field": "sha256", "expected": "a", "got": "b"} for i in range(100)]
r["checks"] = [c] * 50
json.dump(r, open(sys.argv[2], "w"))
PY
expect_exit 1 "" audit --reports "$T/refusals" --nonces "$G/nonces.txt" --aks "$G/aks.txt" --json -
python3 -c '
import json, sys
r = json.load(sys.stdin)["nodes"][0]
assert r["verdict"] == "drifted" and len(r["drift"]) == 8, r
assert sum(1 for f in r["findings"] if "own files check" in f["detail"]) == 1, r["findings"]
' <<<"$OUT"

note "without --nonces both holders of a reused nonce are suspect"
expect_exit 2 "" audit --reports "$G/reports" --json -
python3 -c '
import json, sys
rows = {r["node"]: r for r in json.load(sys.stdin)["nodes"]}
assert rows["h100-001"]["verdict"] == "nonce-reused", rows["h100-001"]
assert rows["h100-f-replay"]["verdict"] == "nonce-reused"
' <<<"$OUT"

note "a manifest signed by an untrusted key is not trusted"
"$INGOT" keys generate -o "$T/other" >/dev/null
"$INGOT" keys keyring add "$T/other.keyring.json" "$T/other.pub" --name other >/dev/null
expect_exit 2 "unknown-image" "$INGOT" audit --keyring "$T/other.keyring.json" --manifests "$G/manifests" \
	--reports "$T/healthy" --now $NOW
assert_contains "$OUT" "manifest h100.manifest.dsse.json: invalid"

note "inputs the audit cannot start without: exit 3"
expect_exit 3 "cannot" audit --reports "$T/nonexistent"
printf 'h100-001 not-hex\n' >"$T/bad-nonces"
expect_exit 3 "bad-nonces" audit --reports "$T/healthy" --nonces "$T/bad-nonces"
printf 'abc\n' >"$T/bad-aks"
expect_exit 3 "bad-aks:1" audit --reports "$T/healthy" --aks "$T/bad-aks"

note "two reports from one node: the newest counts, the older is listed"
mkdir "$T/dup"
cp "$T"/healthy/*.json "$T/dup/"
python3 - "$G/reports/h100-002.json" "$T/dup/h100-002-old.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
r["time"] = "2026-11-30T00:00:00Z"
for f in r["probe"]["facts"]:
    if f["key"] == "nccl.version":
        f["value"] = "2.20.1"
json.dump(r, open(sys.argv[2], "w"))
PY
expect_exit 0 "ignored older report h100-002-old.json" audit --reports "$T/dup" --nonces "$G/nonces.txt" \
	--aks "$G/aks.txt"

note "fail closed: without enrolled AKs a quote any software key signed is unverified, never healthy"
expect_exit 4 "3 nodes: 3 unverified" audit --reports "$T/healthy" --nonces "$G/nonces.txt"
assert_contains "$OUT" "no enrolled AKs (--aks)"
expect_exit 4 "" audit --reports "$T/healthy" --nonces "$G/nonces.txt" --json -
python3 -c '
import json, sys
res = json.load(sys.stdin)
assert res["summary"] == {"unverified": 3}, res["summary"]
assert all(r["verdict"] == "unverified" and r["class"] == 3 for r in res["nodes"]), res["nodes"]
' <<<"$OUT"
expect_exit 4 "" audit --reports "$T/healthy" --nonces "$G/nonces.txt" --html "$T/unverified.html"
grep -q 'data-verdict="unverified"' "$T/unverified.html" || fail "HTML lacks the unverified verdict"
note "without issued nonces the quotes are not shown fresh: unverified unless accepted"
expect_exit 4 "weak evidence refused by policy: no-nonce" audit --reports "$T/healthy" --aks "$G/aks.txt"
expect_exit 0 "3 nodes: 3 healthy" audit --reports "$T/healthy" --aks "$G/aks.txt" --accept-weak no-nonce
expect_exit 64 "--accept-weak: expected sha1-signature or no-nonce" audit --reports "$T/healthy" --accept-weak md5

note "--aks may list the AKs' PEM public keys instead of their ids"
for i in 0 1 2 3 4 5 6 7; do cat "$G/aks/ak-$i.pub"; done >"$T/aks.pem"
expect_exit 2 "" audit --reports "$G/reports" --nonces "$G/nonces.txt" --aks "$T/aks.pem" --json -
python3 -c '
import json, sys
rows = {r["node"]: r for r in json.load(sys.stdin)["nodes"]}
assert rows["h100-f-ak"]["verdict"] == "ak-not-enrolled", rows["h100-f-ak"]
assert rows["h100-002"]["verdict"] == "healthy", rows["h100-002"]
' <<<"$OUT"
head -n 3 "$G/aks/ak-0.pub" >"$T/aks-cut.pem"
expect_exit 3 "aks-cut.pem:3: expected -----END PUBLIC KEY-----" audit --reports "$T/healthy" --aks "$T/aks-cut.pem"

note "an enrolled AK smuggled beside the signing one does not pass as enrolled"
mkdir "$T/smuggle"
python3 - "$G/reports/h100-f-ak.json" "$G/aks/ak-0.pub" "$T/smuggle/h100-f-ak.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
enrolled = open(sys.argv[2]).read()
q = r["attestation"]["quote"]
# A mid-line block the PEM reader skips, then the real (rogue) key.
q["ak_pub"] = "x" + enrolled + q["ak_pub"]
json.dump(r, open(sys.argv[3], "w"))
PY
expect_exit 2 "expected exactly one PEM PUBLIC KEY block" audit --reports "$T/smuggle" --aks "$G/aks.txt" \
	--nonces "$G/nonces.txt"

note "a report that is not JSON is listed, not dropped"
cp -r "$T/healthy" "$T/broken"
printf '{"schema":' >"$T/broken/zz-broken.json"
expect_exit 1 "zz-broken.json" audit --reports "$T/broken"
assert_contains "$OUT" "malformed"
python3 - "$G/reports/h100-002.json" "$T/broken/zz-escape.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
r["node"]["id"] = "evil\n  h100-009  h100  healthy\x1b[2J"
json.dump(r, open(sys.argv[2], "w"))
PY
expect_exit 1 "zz-escape.json: node.id: expected 1-255 printable characters" audit --reports "$T/broken"
case "$OUT" in *"evil"*|*$'\x1b'*) fail "a node id with control characters reached the table: $OUT" ;; esac

note "usage"
expect_exit 64 "required" "$INGOT" audit --reports "$T/healthy"
expect_exit 64 "--max-age" audit --reports "$T/healthy" --max-age soon
expect_exit 64 "not both" audit --reports "$T/healthy" --json a --html b
expect_exit 64 "--jobs" audit --reports "$T/healthy" --jobs 0
expect_exit 0 "EXIT STATUS" "$INGOT" audit --help
