#!/bin/bash
# Promotion on the real demo build: `ingot build recipes/demo.yaml --key`
# signs the manifest; evidence parsed from nccl-tests and dcgmi outputs is
# about the demo image (subject = its sha256); the demo is promoted to lab,
# and the promotion statement verifies with openssl over the DSSE PAE.  A
# run made with another NCCL than the image carries is refused by name.
. "$(dirname "$0")/lib.sh"
[ -f "$SRC/recipes/demo.yaml" ] || skip "recipes/demo.yaml not present"
FX=$SRC/tests/fixtures/evidence
cd "$T"
for k in rel run prom; do "$INGOT" keys generate -o "$k" >/dev/null; done
RECIPE=$SRC/recipes/demo.yaml
build() { "$INGOT" build "$RECIPE" -o out --store store --key rel.key --quiet >build.log 2>&1; }
if ! build; then
	mkdir -p recipes
	cp "$SRC/recipes/demo.yaml" recipes/
	"$SRC/scripts/gen-artifacts.sh" "$BUILD_DIR" "$T/recipes/artifacts" >/dev/null 2>&1 ||
		skip "demo artifacts cannot be generated"
	RECIPE=$T/recipes/demo.yaml
	rm -rf out store
	build || fail "ingot build failed: $(cat build.log)"
fi
M=out/demo-h100.manifest.dsse.json
IMG=$(sha256 out/demo-h100.sqfs)
mkdir -p rings/keyrings ev
cp "$SRC"/recipes/rings/*.yaml rings/
"$INGOT" keys keyring add rings/keyrings/runners.json run.pub --name runner >/dev/null
"$INGOT" keys keyring add rings/keyrings/promoters.json prom.pub --name promoter >/dev/null

note "evidence about the demo image"
"$INGOT" evidence add --manifest $M --kind nccl-tests --from "$FX/all_reduce_perf-2node.txt" \
	--key run.key -o nccl-2node.evidence.dsse.json --topology "2x HGX H100, 8x400G NDR" >/dev/null
"$INGOT" evidence add --manifest $M --kind nccl-tests --from "$FX/all_reduce_perf-1node.txt" \
	--key run.key -o ev/nccl.evidence.dsse.json >/dev/null
"$INGOT" evidence add --manifest $M --kind dcgm-diag --level 2 --from "$FX/dcgmi-diag-r2.json" \
	--key run.key -o ev/dcgm.evidence.dsse.json >/dev/null
python3 - nccl-2node.evidence.dsse.json "$IMG" <<'PY' || fail "evidence subject"
import base64, json, sys
st = json.loads(base64.b64decode(json.load(open(sys.argv[1]))["payload"]))
assert st["subject"] == [{"name": "demo-h100.sqfs", "digest": {"sha256": sys.argv[2]}}], st["subject"]
p = st["predicate"]
assert p["nccl_version"] == "2.27.7" and p["tuple_nccl"] == "2.27.7", p
assert p["topology"] == {"label": "2x HGX H100, 8x400G NDR", "nodes": 2, "ranks": 16,
                         "gpus": ["NVIDIA H100 80GB HBM3"]}, p["topology"]
assert p["recipe"] == "demo-h100" and p["result"]["nodes"] == ["gpu-a01", "gpu-a02"], p
PY

note "promote the demo to lab; the statement verifies with openssl"
expect_exit 0 "promoted to lab, serial 1" "$INGOT" promote --manifest $M --ring lab --evidence ev \
	--key prom.key --rings rings --promotions promo --now 2026-11-01T00:00:00Z
P=promo/lab-0001.promotion.dsse.json
python3 - $P <<'PY'
import base64, json, sys
env = json.load(open(sys.argv[1]))
body = base64.b64decode(env["payload"])
t = env["payloadType"].encode()
pae = b"DSSEv1 %d %s %d %s" % (len(t), t, len(body), body)
open("pae.bin", "wb").write(pae)
open("sig.bin", "wb").write(base64.b64decode(env["signatures"][0]["sig"]))
PY
openssl pkeyutl -verify -pubin -inkey prom.pub -rawin -in pae.bin -sigfile sig.bin >/dev/null ||
	fail "openssl does not verify the promotion signature"
assert_eq "$IMG" "$(python3 -c 'import base64,json,sys; print(json.loads(base64.b64decode(json.load(open(sys.argv[1]))["payload"]))["subject"][0]["digest"]["sha256"])' $P)" "promotion subject"

note "a run with another NCCL than the image's is refused"
sed '/^# Using devices/a gpu-a01:41230:41230 [0] NCCL INFO NCCL version 2.21.5+cuda12.4' \
	"$FX/all_reduce_perf-1node.txt" >other-nccl.txt
mkdir ev2
cp ev/dcgm.evidence.dsse.json ev2/
"$INGOT" evidence add --manifest $M --kind nccl-tests --from other-nccl.txt --key run.key \
	-o ev2/nccl.evidence.dsse.json >/dev/null
rm -rf promo2
expect_exit 3 "ran NCCL 2.21.5, but the image carries NCCL 2.27.7" "$INGOT" promote --manifest $M \
	--ring lab --evidence ev2 --key prom.key --rings rings --promotions promo2 --now 2026-11-01T00:00:00Z
assert_no_file promo2
