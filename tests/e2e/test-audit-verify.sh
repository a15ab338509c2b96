#!/bin/bash
# The audit reads what `ingot verify --json` really writes: reports of a
# healthy fake node and of one whose driver was upgraded behind the
# image's back, made without a TPM (--tcti none).  The audit must list
# both as unquoted (no evidence), keep the healthy one free of drift, and
# name driver.version for the other - from the facts, not from the node's
# own verdict.  A third node's own files check failed (its nvidia.ko was
# replaced over the image): the audit believes that refusal and lists the
# path as drift.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/verify-lib.sh"

make_pool h100 h100-r580-ltsb
node h100 drv driver=580.105.08
node h100 ko ko-garbage
mkdir -p "$T/reports" "$T/manifests"
for n in h100.root:gpu-001 drv:gpu-002 ko:gpu-003; do
	root=${n%%:*} id=${n##*:}
	"$INGOT" verify --manifest "$T/h100-r580-ltsb.manifest.json" --allow-unsigned --root "$T/$root" \
		--tcti none --node-id "$id" --now 2026-11-01T00:00:00Z --report "$T/reports/$id.json" \
		>/dev/null 2>&1 || true
	assert_file "$T/reports/$id.json"
done
"$INGOT" keys generate -o "$T/release" >/dev/null
"$INGOT" keys keyring add "$T/keyring.json" "$T/release.pub" --name release >/dev/null
"$INGOT" sign "$T/h100-r580-ltsb.manifest.json" --key "$T/release.key" \
	-o "$T/manifests/h100-r580-ltsb.manifest.dsse.json" >/dev/null || fail "ingot sign failed"

expect_exit 1 "" "$INGOT" audit --keyring "$T/keyring.json" --manifests "$T/manifests" \
	--reports "$T/reports" --now 2026-11-01T00:10:00Z --max-age 1h --json "$T/audit.json"
echo "$OUT"
python3 - "$T/audit.json" <<'PY'
import json, sys
res = json.load(open(sys.argv[1]))
assert [m["status"] for m in res["manifests"]] == ["ok"], res["manifests"]
rows = {r["node"]: r for r in res["nodes"]}
assert sorted(rows) == ["gpu-001", "gpu-002", "gpu-003"], rows
for r in rows.values():
    assert r["verdict"] == "unquoted", r
    assert r["pool"] == "h100-r580-ltsb", r
assert rows["gpu-001"]["drift"] == [], rows["gpu-001"]["drift"]
d = {x["field"]: x for x in rows["gpu-002"]["drift"]}
assert d["driver.version"]["expected"] == "580.95.05" and d["driver.version"]["actual"] == "580.105.08", d
assert any(f["code"] == "drifted" for f in rows["gpu-002"]["findings"])
assert not any("own files check" in f["detail"] for f in rows["gpu-001"]["findings"] + rows["gpu-002"]["findings"])
ko = rows["gpu-003"]
assert any(f["code"] == "drifted" and f["detail"].startswith("the node's own files check failed: ")
           for f in ko["findings"]), ko["findings"]
d = [x for x in ko["drift"] if x["field"].endswith("/nvidia.ko sha256")]
assert len(d) == 1 and d[0]["expected"] != d[0]["actual"], ko["drift"]
PY
