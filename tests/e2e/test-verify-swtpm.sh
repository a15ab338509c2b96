#!/bin/bash
# The full boot path with a real TPM simulator (swtpm): sign the manifest,
# measure the image into PCR 15, then `ingot verify` quotes the TPM with a
# fresh nonce, replays the event log and admits the node.  A tampered
# manifest, image, PCR or event log is refused.  The quote in the report is
# checked again offline by `ingot attest verify-quote` and tpm2-tools'
# reading of the log.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/swtpm.sh"
. "$(dirname "$0")/verify-lib.sh"
command -v mksquashfs >/dev/null || skip "mksquashfs (squashfs-tools) not installed"
command -v veritysetup >/dev/null || skip "veritysetup (cryptsetup-bin) not installed"
swtpm_start

make_pool h100 h100 --serial 3 --image-out "$T/h100.sqfs" --verity-out "$T/h100.verity"
"$INGOT" keys generate -o "$T/release" >/dev/null
"$INGOT" keys keyring add "$T/keyring.json" "$T/release.pub" --name release >/dev/null
"$INGOT" sign "$T/h100.manifest.json" --key "$T/release.key" -o "$T/h100.dsse.json" >/dev/null
"$INGOT" attest ak create -o "$T/ak" >/dev/null
"$INGOT" attest measure --manifest "$T/h100.manifest.json" --log "$T/log.bin" >/dev/null

# IMAGE, VERITY, EVENTLOG (in the environment of one call) replace the
# defaults below: a single-value option given twice is a usage error.
verify() { # WANT_EXIT REASON ENVELOPE [args...]
	local want=$1 reason=$2 env=$3 rc=0
	shift 3
	"$INGOT" verify --manifest "$env" --keyring "$T/keyring.json" --root "$T/h100.root" \
		--image "${IMAGE:-$T/h100.sqfs}" --verity "${VERITY:-$T/h100.verity}" \
		--eventlog "${EVENTLOG:-$T/log.bin}" --ak "$T/ak" \
		--require-tpm --report "$T/r.json" --brief "$@" >"$T/out" 2>"$T/err" || rc=$?
	[ "$rc" = "$want" ] || fail "expected exit $want, got $rc: $(cat "$T/out" "$T/err")"
	assert_contains "$(cat "$T/out")" "$reason"
	validate "$T/r.json"
}

note "measured, signed, untouched: admit with the TPM check passing"
verify 0 "admit (0)" "$T/h100.dsse.json"
assert_eq pass "$(check_status "$T/r.json" tpm)" "tpm check"
# The report carries what the audit needs to redo the TPM check offline.
jget "$T/r.json" "json.dumps(r['attestation']['quote'])" >"$T/quote.json"
nonce=$(jget "$T/r.json" "r['attestation']['nonce']")
assert_eq 64 "${#nonce}" "nonce length"
"$INGOT" attest verify-quote "$T/quote.json" --nonce "$nonce" >/dev/null ||
	fail "ingot attest verify-quote refused the report's quote"
jget "$T/r.json" "r['attestation']['ak_public_key']" >"$T/ak-from-report.pem"
cmp -s <(openssl pkey -pubin -in "$T/ak-from-report.pem" -outform DER) \
	<(openssl pkey -pubin -in "$T/ak/ak.pub.pem" -outform DER) || fail "AK in the report is not the node's AK"
jget "$T/r.json" "r['attestation']['eventlog']" | base64 -d >"$T/log-from-report.bin"
cmp -s "$T/log-from-report.bin" "$T/log.bin" || fail "event log in the report differs from the node's"
if command -v tpm2_eventlog >/dev/null; then
	tpm2_eventlog "$T/log-from-report.bin" | grep -q EV_IPL || fail "tpm2_eventlog cannot read the report's log"
fi
# Each run quotes with a fresh nonce.
verify 0 "admit (0)" "$T/h100.dsse.json"
assert_ne "$nonce" "$(jget "$T/r.json" "r['attestation']['nonce']")" "nonce reuse"

note "a verifier's challenge as the nonce: the quote is over exactly that"
challenge=$(openssl rand -hex 20)
verify 0 "admit (0)" "$T/h100.dsse.json" --nonce "$challenge"
assert_eq "$challenge" "$(jget "$T/r.json" "r['attestation']['nonce']")" "challenge nonce"
jget "$T/r.json" "json.dumps(r['attestation']['quote'])" >"$T/quote2.json"
"$INGOT" attest verify-quote "$T/quote2.json" --nonce "$challenge" >/dev/null ||
	fail "verify-quote refused the challenge quote"
verify 20 "could-not-check (20)" "$T/h100.dsse.json" --nonce "not-hex"

note "another manifest for the same node (re-signed, never measured): refuse (12)"
# Same node, same files, but a new serial and its own image: signed, valid,
# and not what the TPM measured.
python3 "$SRC/tests/tools/mkmanifest.py" "$T/h100.root" --name h100 --tuple "$T/h100.tuple.json" \
	-o "$T/other.manifest.json" --serial 4 --image-out "$T/other.sqfs" --verity-out "$T/other.verity"
"$INGOT" sign "$T/other.manifest.json" --key "$T/release.key" -o "$T/other.dsse.json" >/dev/null
IMAGE="$T/other.sqfs" VERITY="$T/other.verity" verify 12 "refuse (12)" "$T/other.dsse.json" --no-files
assert_contains "$(jget "$T/r.json" "r['reason']")" "manifest predicts"

note "image tampered: refuse (11)"
cp "$T/h100.sqfs" "$T/bad.sqfs"
printf 'X' | dd of="$T/bad.sqfs" bs=1 seek=200 conv=notrunc status=none
IMAGE="$T/bad.sqfs" verify 11 "refuse (11)" "$T/h100.dsse.json"

note "event log with the event data changed: refuse (12)"
cp "$T/log.bin" "$T/log.good"
python3 - "$T/log.bin" <<'PY'
import sys
p = sys.argv[1]; b = bytearray(open(p, "rb").read())
b[-1] ^= 0x01   # last byte of the ingot event's data
open(p, "wb").write(b)
PY
verify 12 "refuse (12)" "$T/h100.dsse.json"
cp "$T/log.good" "$T/log.bin"

note "event log missing: refuse (12)"
EVENTLOG="$T/no-such-log.bin" verify 12 "refuse (12)" "$T/h100.dsse.json"

note "PCR 15 extended once more behind ingot's back: refuse (12)"
tpm2_pcrextend "15:sha256=$(printf 'evil' | sha256sum | cut -c1-64)" >/dev/null 2>&1 ||
	"$INGOT" attest measure --manifest "$T/h100.manifest.json" --log "$T/other-log.bin" >/dev/null
verify 12 "refuse (12)" "$T/h100.dsse.json"
assert_contains "$(jget "$T/r.json" "r['reason']")" "PCR 15 sha256 is"

note "TPM gone: could not check (20) with --require-tpm, skip without"
swtpm_stop
verify 20 "could-not-check (20)" "$T/h100.dsse.json"
rc=0; "$INGOT" verify --manifest "$T/h100.dsse.json" --keyring "$T/keyring.json" --root "$T/h100.root" \
	--brief >"$T/out" 2>/dev/null || rc=$?
assert_eq 0 "$rc" "TPM gone without --require-tpm: $(cat "$T/out")"
echo "swtpm verify ok"
