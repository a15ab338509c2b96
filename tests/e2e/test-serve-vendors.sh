#!/bin/bash
# One verifier serves one pool: manifests of two GPU vendors (an AMD and an
# NVIDIA image) stop it, naming both, unless `mixed-vendors = allow`; then
# each node is judged against the manifest its quote's PCR 15 claims, and
# the verdict names which.
. "$(dirname "$0")/lib.sh"
. "$SRC/tests/e2e/serve-lib.sh"
serve_fixture

# An NVIDIA image beside the fixture's AMD one: its own verity root, so its
# own PCR 15, and evidence (case nv) of a node that booted it.
python3 - <<'PY' || fail "the NVIDIA manifest and evidence"
import hashlib, json, shutil
sha = lambda b: hashlib.sha256(b).digest()
m = json.load(open("boot.manifest.json"))
root = "6" * 64
ev = f"ingot:boot:v1 image=bootn verity={root}"
p15 = sha(b"\0" * 32 + sha(ev.encode())).hex()
m["recipe"]["name"] = "bootn"
m["verity"]["root_hash"] = root
m["boot"]["pcr15"] = {"event_data": ev, "predicted": {"sha256": p15}}
m["tuple"] = {"vendor": "nvidia", "smi": "nvidia-smi", "nccl": {"version": "2.27.7"}}
json.dump(m, open("nv.manifest.json", "w"), indent=1)
q = json.load(open("quote-good.json"))
q["pcrs"]["sha256"]["15"] = p15
json.dump(q, open("quote-nv.json", "w"))
shutil.copy("log-good.bin", "log-nv.bin")
PY
"$INGOT" attest predict --manifest nv.manifest.json >meas.json
jq --slurpfile m meas.json '.measurement = $m[0]' nv.manifest.json >m.tmp && mv m.tmp nv.manifest.json
"$INGOT" sign nv.manifest.json --key k.key -o nv.dsse.json >/dev/null || fail "sign nv.manifest.json"

note "two vendors in one pool: refused at start and by --check, naming both manifests and vendors"
serve_config "manifest = nv.dsse.json"
# (bounded: a service that wrongly starts would never exit)
for how in "" --check; do
	expect_exit 1 "boot.dsse.json declares vendor amd" timeout 20 "$INGOT" serve --config serve.conf $how
	assert_contains "$OUT" "nv.dsse.json vendor nvidia"
	assert_contains "$OUT" "mixed-vendors = allow"
done
serve_config "manifest = nv.dsse.json" "mixed-vendors = refuse"
expect_exit 1 "nv.dsse.json vendor nvidia" "$INGOT" serve --config serve.conf --check
serve_config "mixed-vendors = sometimes"
expect_exit 1 "serve.conf:11: mixed-vendors: expected allow or refuse, got \"sometimes\"" \
	"$INGOT" serve --config serve.conf --check
note "one vendor's manifests only: mixed-vendors changes nothing"
serve_config
expect_exit 0 "configuration ok" "$INGOT" serve --config serve.conf --check

note "allowed: each node judged against its own vendor's manifest, the verdict names it"
serve_config "manifest = nv.dsse.json" "mixed-vendors = allow"
serve_start
evidence good node-1 "$(nonce_for node-1)"
with_report node-1
expect_http 200 '"verdict":"admit"' POST /v1/evidence ev.json
assert_eq "bootv 1 amd" "$(jq -r '.manifest | "\(.pool) \(.serial) \(.vendor)"' resp.out)" "AMD node's manifest"
evidence nv node-2 "$(nonce_for node-2)"
with_report node-2 vendor=nvidia smi=nvidia-smi nccl.version=2.27.7
expect_http 200 '"verdict":"admit"' POST /v1/evidence ev.json
assert_eq "bootn 1 nvidia" "$(jq -r '.manifest | "\(.pool) \(.serial) \(.vendor)"' resp.out)" "NVIDIA node's manifest"
# The NVIDIA node's report judged against the NVIDIA manifest, not the
# AMD one: AMD facts from it are drift.
evidence nv node-2 "$(nonce_for node-2)"
with_report node-2
expect_http 200 '"verdict":"refuse"' POST /v1/evidence ev.json
assert_contains "$BODY" "vendor"
assert_eq "nvidia" "$(jq -r .manifest.vendor resp.out)" "the manifest a drifted NVIDIA node was judged against"
serve_stop
