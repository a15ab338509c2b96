#!/bin/bash
# ingot verify with a signed manifest (ingot keys / ingot sign) and a real
# image: mksquashfs (squashfs-tools) packs the fake root's image part,
# veritysetup (cryptsetup) writes its dm-verity tree.  Tampering with the
# envelope, the keyring, the serial, the expiry, the image or the hash
# tree is refused with the signature (10) or image (11) status.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/verify-lib.sh"
command -v mksquashfs >/dev/null || skip "mksquashfs (squashfs-tools) not installed"
command -v veritysetup >/dev/null || skip "veritysetup (cryptsetup-bin) not installed"

make_pool h100 h100 --serial 7 --expires 2027-06-30T00:00:00Z \
	--image-out "$T/h100.sqfs" --verity-out "$T/h100.verity"
"$INGOT" keys generate -o "$T/release" >/dev/null
"$INGOT" keys generate -o "$T/rogue" >/dev/null
"$INGOT" keys keyring add "$T/keyring.json" "$T/release.pub" --name release >/dev/null
"$INGOT" sign "$T/h100.manifest.json" --key "$T/release.key" -o "$T/h100.dsse.json" >/dev/null
"$INGOT" sign "$T/h100.manifest.json" --key "$T/rogue.key" -o "$T/rogue.dsse.json" >/dev/null

NOW=2026-11-01T00:00:00Z
verify() { # WANT_EXIT REASON ENVELOPE [args...]
	local want=$1 reason=$2 env=$3 rc=0
	shift 3
	"$INGOT" verify --manifest "$env" --keyring "$T/keyring.json" --root "$T/h100.root" \
		--tcti none --now "$NOW" --report "$T/r.json" --brief "$@" >"$T/out" 2>"$T/err" || rc=$?
	[ "$rc" = "$want" ] || fail "expected exit $want, got $rc: $(cat "$T/out" "$T/err")"
	assert_contains "$(cat "$T/out")" "$reason"
	validate "$T/r.json"
}

note "signed manifest, image and hash tree all match: admit"
verify 0 "admit (0)" "$T/h100.dsse.json" --image "$T/h100.sqfs" --verity "$T/h100.verity" \
	--state "$T/serials.json"
assert_eq pass "$(check_status "$T/r.json" signature)" "signature"
assert_eq pass "$(check_status "$T/r.json" image)" "image"
assert_eq "$(sha256 "$T/h100.dsse.json")" "$(jget "$T/r.json" "r['manifest']['sha256']")" "manifest sha256"
assert_eq "$("$INGOT" keys id "$T/release.pub" | cut -d' ' -f1)" \
	"$(jget "$T/r.json" "[c for c in r['checks'] if c['name']=='signature'][0]['details']['signers'][0]")" "signer"

note "signed by a key the keyring does not trust: refuse (10)"
verify 10 "refuse (10)" "$T/rogue.dsse.json"

note "payload byte changed: refuse (10)"
python3 - "$T/h100.dsse.json" "$T/forged.dsse.json" <<'PY'
import base64, json, sys
env = json.load(open(sys.argv[1]))
st = json.loads(base64.b64decode(env["payload"]))
st["predicate"]["tuple"]["driver"]["version"] = "580.105.08"
env["payload"] = base64.b64encode(json.dumps(st, sort_keys=True, separators=(",", ":")).encode()).decode()
json.dump(env, open(sys.argv[2], "w"))
PY
verify 10 "refuse (10)" "$T/forged.dsse.json"

note "expired at --now: refuse (10)"
NOW=2027-07-01T00:00:00Z verify 10 "refuse (10)" "$T/h100.dsse.json"

note "older serial than the one recorded: refuse (10)"
$MKMANIFEST "$T/h100.root" --name h100 --tuple "$T/h100.tuple.json" -o "$T/old.manifest.json" --serial 6
"$INGOT" sign "$T/old.manifest.json" --key "$T/release.key" -o "$T/old.dsse.json" >/dev/null
verify 10 "refuse (10)" "$T/old.dsse.json" --state "$T/serials.json"
assert_contains "$(jget "$T/r.json" "r['reason']")" "serial"

note "no keyring for an envelope: could not check (20)"
rc=0; "$INGOT" verify --manifest "$T/h100.dsse.json" --root "$T/h100.root" --tcti none --now "$NOW" \
	--brief >"$T/out" 2>&1 || rc=$?
assert_eq 20 "$rc" "exit without keyring"

note "image with one byte changed: refuse (11)"
cp "$T/h100.sqfs" "$T/bad.sqfs"
printf 'X' | dd of="$T/bad.sqfs" bs=1 seek=100 conv=notrunc status=none
verify 11 "refuse (11)" "$T/h100.dsse.json" --image "$T/bad.sqfs" --verity "$T/h100.verity"
assert_eq fail "$(check_status "$T/r.json" image)" "image check"

note "hash tree with one byte changed: refuse (11)"
cp "$T/h100.verity" "$T/bad.verity"
printf 'X' | dd of="$T/bad.verity" bs=1 seek=4200 conv=notrunc status=none
verify 11 "refuse (11)" "$T/h100.dsse.json" --image "$T/h100.sqfs" --verity "$T/bad.verity"
# veritysetup agrees that this tree does not verify.
! veritysetup verify "$T/h100.sqfs" "$T/bad.verity" \
	"$(jget "$T/h100.manifest.json" "r['verity']['root_hash']")" >/dev/null 2>&1 ||
	fail "veritysetup accepted the damaged hash tree"
echo "signed verify ok"
