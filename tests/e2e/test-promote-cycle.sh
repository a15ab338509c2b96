#!/bin/bash
# The full promotion cycle: an image (squashfs + verity made by mksquashfs
# and veritysetup, manifest signed by ingot sign) gets signed evidence
# parsed from nccl-tests and dcgmi outputs, is promoted lab -> canary ->
# production under recipes/rings/*.yaml, and `ingot verify --ring` admits
# it on a canary node and refuses it for production until it is promoted
# there.  A second image then shows the rollback rule: the ring's previous
# image stays admissible until the candidate's rollback drill retires it.
# Every refusal is checked for its reason.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/verify-lib.sh"
command -v mksquashfs >/dev/null || skip "mksquashfs not installed"
command -v veritysetup >/dev/null || skip "veritysetup not installed"
FX=$SRC/tests/fixtures/evidence
cd "$T"

note "keys: release, two test runners, a promoter, and a stranger"
for k in rel run1 run2 prom stranger; do "$INGOT" keys generate -o "$k" >/dev/null; done
"$INGOT" keys keyring add release.json rel.pub --name release >/dev/null
mkdir -p rings/keyrings
cp "$SRC"/recipes/rings/*.yaml rings/
"$INGOT" keys keyring add rings/keyrings/runners.json run1.pub --name runner-1 >/dev/null
"$INGOT" keys keyring add rings/keyrings/runners.json run2.pub --name runner-2 >/dev/null
"$INGOT" keys keyring add rings/keyrings/promoters.json prom.pub --name promoter >/dev/null

note "build: image v1 (the h100 pool) and sign its manifest"
make_pool h100 pool --image-out "$T/pool.sqfs" --verity-out "$T/pool.verity"
"$INGOT" sign pool.manifest.json --key rel.key -o v1.dsse.json >/dev/null
IMG1=$(sha256 pool.sqfs)

T0=2026-11-01T00:00:00Z
ev() { # DIR OUT KIND FROM [args]: evidence about v1 signed by run1
	local dir=$1 out=$2 kind=$3 from=$4
	shift 4
	mkdir -p "$dir"
	"$INGOT" evidence add --manifest v1.dsse.json --kind "$kind" --from "$from" --key run1.key \
		-o "$dir/$out.evidence.dsse.json" --date "$T0" "$@" >/dev/null
}
promote() { # RING EVIDENCE-DIR NOW [manifest]
	"$INGOT" promote --manifest "${4:-v1.dsse.json}" --ring "$1" --evidence "$2" --key prom.key \
		--rings rings --promotions promo --now "$3"
}

note "evidence: parsed from real-format outputs, subject = the image"
ev lab nccl nccl-tests "$FX/all_reduce_perf-1node.txt" --topology "1x HGX H100"
ev lab dcgm dcgm-diag "$FX/dcgmi-diag-r2.json" --level 2
python3 - lab/nccl.evidence.dsse.json "$IMG1" <<'PY' || fail "nccl evidence statement"
import base64, json, sys
st = json.loads(base64.b64decode(json.load(open(sys.argv[1]))["payload"]))
assert st["subject"][0]["digest"]["sha256"] == sys.argv[2], st["subject"]
p = st["predicate"]
assert p["kind"] == "nccl-tests" and p["node"] == "gpu-a01" and p["topology"]["ranks"] == 8, p
assert p["nccl_version"] is None and p["tuple_nccl"] == "2.27.7", p   # 1-node log: no version line
r = p["result"]
assert len(r["rows"]) == 31 and r["rows"][-1]["size"] == 8589934592, len(r["rows"])
assert r["rows"][-1]["in_place"]["busbw"] > 400 and r["out_of_bounds_ok"] is True, r["rows"][-1]
PY
# Bad input: refused with file, line and what was expected; nothing written.
expect_exit 2 "all_reduce_perf-2node-slow.txt:1:1: invalid JSON" "$INGOT" evidence add \
	--manifest v1.dsse.json --kind dcgm-diag --level 3 --from "$FX/all_reduce_perf-2node-slow.txt" \
	--key run1.key -o x.json
head -n 40 "$FX/all_reduce_perf-2node.txt" >cut.txt
expect_exit 2 "cut.txt: no \"# Avg bus bandwidth\" line" "$INGOT" evidence add --manifest v1.dsse.json \
	--kind nccl-tests --from cut.txt --key run1.key -o x.json
sed '35s/ 0 *$/ oops/' "$FX/all_reduce_perf-2node.txt" >garbled.txt
expect_exit 2 "garbled.txt:35: expected numbers for time, algbw, busbw" "$INGOT" evidence add \
	--manifest v1.dsse.json --kind nccl-tests --from garbled.txt --key run1.key -o x.json
assert_no_file x.json

note "lab: nothing promoted yet; canary is refused for every reason at once"
expect_exit 3 "soak: image" promote canary lab $T0
assert_contains "$OUT" "dcgm-diag: lab/dcgm.evidence.dsse.json: diagnostic level 2, policy needs >= 3" "canary refusal"
assert_contains "$OUT" "nccl-tests: lab/nccl.evidence.dsse.json: ran on 1 node(s), policy needs 2" "canary refusal"
assert_no_file promo
expect_exit 0 "promoted to lab, serial 1" promote lab lab $T0
assert_file promo/lab-0001.promotion.dsse.json

note "canary: evidence from two nodes and DCGM level 3, after 24 h in lab"
ev canary nccl nccl-tests "$FX/all_reduce_perf-2node.txt"
ev canary dcgm dcgm-diag "$FX/dcgmi-diag-r3.json" --level 3
expect_exit 3 "policy needs 24 h (not before 2026-11-02T00:00:00Z)" promote canary canary 2026-11-01T02:00:00Z
# The bars: a slow fabric, a failed GPU, a stranger's signature.
mkdir bad1 bad2 bad3
cp canary/dcgm.evidence.dsse.json bad1/
ev bad1 nccl nccl-tests "$FX/all_reduce_perf-2node-slow.txt"
expect_exit 3 "busbw 288.26 GB/s out-of-place at 1073741824 bytes, policy needs >= 360.00" \
	promote canary bad1 2026-11-02T01:00:00Z
mkdir bad4
cp canary/dcgm.evidence.dsse.json bad4/
sed '27s/0$/2/' "$FX/all_reduce_perf-2node.txt" >wrong.txt    # 2 wrong values, in place, at 8 B
ev bad4 nccl nccl-tests wrong.txt
expect_exit 3 "2 wrong values at 8 bytes" promote canary bad4 2026-11-02T01:00:00Z
cp canary/nccl.evidence.dsse.json bad2/
ev bad2 dcgm dcgm-diag "$FX/dcgmi-diag-r3-fail.json" --level 3
expect_exit 3 "diagnostic did not pass (1 failed)" promote canary bad2 2026-11-02T01:00:00Z
cp canary/nccl.evidence.dsse.json bad3/
"$INGOT" evidence add --manifest v1.dsse.json --kind dcgm-diag --level 3 --from "$FX/dcgmi-diag-r3.json" \
	--key stranger.key -o bad3/dcgm.evidence.dsse.json >/dev/null
expect_exit 3 "dcgm-diag: no evidence signed by 1 of rings/keyrings/runners.json" \
	promote canary bad3 2026-11-02T01:00:00Z
assert_contains "$OUT" "is not in the keyring" "stranger's evidence"
expect_exit 3 "of the given keys are in the promotion keyring" "$INGOT" promote --manifest v1.dsse.json \
	--ring canary --evidence canary --key run1.key --rings rings --promotions promo --now 2026-11-02T01:00:00Z
expect_exit 0 "promoted to canary, serial 1, 2 evidence" promote canary canary 2026-11-02T01:00:00Z

note "verify: a canary node admits v1; a production node refuses it"
vfy() { # RING [extra]
	local ring=$1
	shift
	"$INGOT" verify --manifest v1.dsse.json --keyring release.json --root "$T/h100.root" \
		--image pool.sqfs --verity pool.verity --tcti none --now 2026-11-10T00:00:00Z \
		--ring "$ring" --promotions promo --promotion-keyring rings/keyrings/promoters.json "$@"
}
expect_exit 0 "ring canary: promoted to ring canary, serial 1" vfy canary
expect_exit 15 "ring production: no promotion to this ring verifies" vfy production
vfy production --report prod.json >/dev/null || true
validate prod.json
assert_eq fail "$(check_status prod.json ring)" "ring check status"
assert_eq none "$(jget prod.json "[c['details']['standing'] for c in r['checks'] if c['name']=='ring'][0]")" "standing"
# A forged promotion (canary's, edited to say production) is never used.
python3 - promo/canary-0001.promotion.dsse.json promo/production-0009.promotion.dsse.json <<'PY'
import base64, json, sys
env = json.load(open(sys.argv[1]))
st = json.loads(base64.b64decode(env["payload"]))
st["predicate"]["ring"] = "production"
env["payload"] = base64.b64encode(json.dumps(st).encode()).decode()
json.dump(env, open(sys.argv[2], "w"))
PY
expect_exit 15 "(1 refused: promo/production-0009.promotion.dsse.json: signatures: 0 valid" vfy production
rm promo/production-0009.promotion.dsse.json
expect_exit 20 "needs --promotions DIR" "$INGOT" verify --manifest v1.dsse.json --keyring release.json \
	--root "$T/h100.root" --tcti none --ring canary --brief

note "production: four nodes, 72 h in canary"
ev prod nccl nccl-tests "$FX/all_reduce_perf-4node.txt"
cp canary/dcgm.evidence.dsse.json prod/
expect_exit 3 "policy needs 72 h" promote production prod 2026-11-04T00:00:00Z
expect_exit 0 "promoted to production, serial 1" promote production prod 2026-11-05T02:00:00Z
expect_exit 0 "promoted to ring production, serial 1" vfy production
expect_exit 0 "" vfy canary

note "rollback: v2 replaces v1 in canary; v1 stays until v2's rollback is drilled"
mkdir -p v2root && cp -a "$T/h100.root/." v2root/ && echo v2 >v2root/usr/ingot-v2
$MKMANIFEST v2root --name pool --tuple "$T/h100.tuple.json" --serial 2 -o v2.manifest.json \
	--image-out v2.sqfs --verity-out v2.verity
"$INGOT" sign v2.manifest.json --key rel.key -o v2.dsse.json >/dev/null
IMG2=$(sha256 v2.sqfs)
assert_ne "$IMG1" "$IMG2" "v2 image digest"
ev2() { # DIR OUT KIND FROM [args]: evidence about v2, signed by the second runner
	local dir=$1 out=$2 kind=$3 from=$4
	shift 4
	mkdir -p "$dir"
	"$INGOT" evidence add --manifest v2.dsse.json --kind "$kind" --from "$from" --key run2.key \
		-o "$dir/$out.evidence.dsse.json" "$@" >/dev/null
}
ev2 v2lab nccl nccl-tests "$FX/all_reduce_perf-1node.txt"
ev2 v2lab dcgm dcgm-diag "$FX/dcgmi-diag-r2.json" --level 2
ev2 v2canary nccl nccl-tests "$FX/all_reduce_perf-2node.txt"
ev2 v2canary dcgm dcgm-diag "$FX/dcgmi-diag-r3.json" --level 3
expect_exit 0 "promoted to lab, serial 2" promote lab v2lab 2026-11-06T00:00:00Z v2.dsse.json
expect_exit 0 "promoted to canary, serial 2" promote canary v2canary 2026-11-07T01:00:00Z v2.dsse.json
vfy2() { # RING [extra]
	local ring=$1
	shift
	"$INGOT" verify --manifest "${MANIFEST:-v2.dsse.json}" --keyring release.json --root "$T/v2root" \
	--image v2.sqfs --tcti none --no-files --now 2026-11-10T00:00:00Z --ring "$ring" --promotions promo \
	--promotion-keyring rings/keyrings/promoters.json "$@"; }
expect_exit 0 "promoted to ring canary, serial 2" vfy2 canary
expect_exit 0 "previous image of ring canary (serial 1), admissible until the rollback" vfy canary
expect_exit 3 "already ring canary's current image" promote canary v2canary 2026-11-08T00:00:00Z v2.dsse.json
printf '{"result":"pass","rolled_back_to":"%s","nodes":["gpu-a01"]}\n' "$IMG1" >drill.json
"$INGOT" evidence add --manifest v2.dsse.json --kind rollback --from drill.json --key run1.key \
	--key run2.key -o v2canary/rollback.evidence.dsse.json >/dev/null
assert_eq 2 "$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["signatures"]))' \
	v2canary/rollback.evidence.dsse.json)" "signatures on the drill"
expect_exit 0 "retired $(printf %.16s "$IMG1")" promote canary v2canary 2026-11-08T00:00:00Z v2.dsse.json
expect_exit 15 "retired by serial 3 after the rollback" vfy canary
expect_exit 0 "promoted to ring canary, serial 3" vfy2 canary
# production still runs v1: v2 was never promoted there
expect_exit 15 "was never promoted to ring production" vfy2 production

note "ring rollback: --state records each ring's highest promotion serial; an older promotions directory is refused"
vfy_old() { # PROMOTIONS-DIR [extra]: v1 on a canary node
	local dir=$1
	shift
	"$INGOT" verify --manifest v1.dsse.json --keyring release.json --root "$T/h100.root" \
		--image pool.sqfs --verity pool.verity --tcti none --now 2026-11-10T00:00:00Z \
		--ring canary --promotions "$dir" --promotion-keyring rings/keyrings/promoters.json "$@"
}
mkdir old-promo && cp promo/canary-0001.promotion.dsse.json old-promo/
# without state, the superseded promotion served alone re-admits v1 (the attack)
expect_exit 0 "promoted to ring canary, serial 1" vfy_old old-promo
# a state file written before promotion serials were recorded still reads
printf '{"schema":"ingot.verify-state/v1","serials":{"pool":1}}\n' >ring-state.json
expect_exit 15 "retired by serial 3 after the rollback" vfy_old promo --state ring-state.json
assert_eq 3 "$(python3 -c 'import json; print(json.load(open("ring-state.json"))["promotions"]["canary"])')" \
	"canary's promotion serial recorded"
assert_eq 1 "$(python3 -c 'import json; print(json.load(open("ring-state.json"))["serials"]["pool"])')" \
	"manifest serials kept"
expect_exit 15 "ring canary: the promotions verified reach serial 1, serial 3 was seen before (state file ring-state.json): refusing a rollback of the ring" \
	vfy_old old-promo --state ring-state.json --json
assert_eq 1 "$(python3 -c 'import json,sys; r=json.loads(sys.stdin.read()); print([c["details"]["ring_serial"] for c in r["checks"] if c["name"]=="ring"][0])' <<<"$OUT")" "served serial in the report"
assert_eq 3 "$(python3 -c 'import json; print(json.load(open("ring-state.json"))["promotions"]["canary"])')" \
	"the recorded serial is never lowered"

note "first boot: no state file yet is a fresh state; the verdict is reached, the file written"
state() { python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))[sys.argv[2]][sys.argv[3]])' "$@"; }
mkdir boot
expect_exit 0 "promoted to ring canary, serial 3" vfy2 canary --state boot/state.json
assert_eq 3 "$(state boot/state.json promotions canary)" "first boot: canary's promotion serial recorded"
assert_eq 2 "$(state boot/state.json serials pool)" "first boot: the manifest serial recorded"
assert_eq "boot/state.json" "$(find boot -type f)" "the state file alone (written atomically)"
# the second boot reads it: v1 (serial 1) and the superseded promotion
# served alone are rollbacks now, of the manifest and of the ring
expect_exit 10 'serial 1 is older than serial 2 last seen for "pool" (state file boot/state.json)' \
	vfy_old old-promo --state boot/state.json
assert_contains "$OUT" "serial 3 was seen before (state file boot/state.json): refusing a rollback of the ring"
# as a boot with an empty state file records
printf '{"schema":"ingot.verify-state/v1","serials":{}}\n' >later.json
expect_exit 0 "promoted to ring canary, serial 3" vfy2 canary --state later.json
python3 -c 'import json, sys; a, b = (json.load(open(f)) for f in sys.argv[1:]); assert a == b, (a, b)' \
	boot/state.json later.json || fail "the first boot recorded other than a boot with an empty state file"
# a plain manifest records no serial: the ring's serial is the first record
mkdir boot2
MANIFEST=v2.manifest.json expect_exit 0 "promoted to ring canary, serial 3" vfy2 canary --allow-unsigned \
	--state boot2/state.json
assert_eq 3 "$(state boot2/state.json promotions canary)" "first record: canary's promotion serial"
# only a missing file is a fresh state: any other error stays one
expect_exit 20 "boot: expected a regular file, got a directory" vfy2 canary --state boot
assert_eq "boot/state.json" "$(find boot -type f)" "nothing written beside the state file"

note "diff: v1 -> v2 keeps the tuple; a candidate that moves NCCL alone is warned about"
expect_exit 1 "" "$INGOT" diff v1.dsse.json v2.dsse.json
case "$OUT" in *"never upgrade one component alone"*) fail "v1 -> v2 warned: $OUT" ;; esac
python3 - pool.manifest.json v3.manifest.json <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
m["tuple"]["nccl"]["version"] = "2.28.3"
json.dump(m, open(sys.argv[2], "w"))
PY
expect_exit 1 "warning: nccl.version changes alone (2.27.7 -> 2.28.3): never upgrade one component alone" \
	"$INGOT" diff pool.manifest.json v3.manifest.json
assert_contains "$OUT" "tuple-one-component-alone; tuple-facts.md" "diff warning source"
