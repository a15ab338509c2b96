#!/bin/bash
# The one boot verdict (attest/verdict.h) through `ingot attest boot-check`
# and `ingot audit`, on synthetic measured-boot evidence
# (tests/e2e/boot-evidence.py): the good boot under Secure Boot, with an
# enrolled AK and a firmware reference recorded by `attest firmware-ref`,
# is admitted; each attack of issue 23 is refused with one line naming it,
# by both commands alike.
. "$(dirname "$0")/lib.sh"
MKQUOTE=$BUILD_DIR/tools/mkquote MKENROL=$BUILD_DIR/tools/mkenrolment
[ -x "$MKQUOTE" ] && [ -x "$MKENROL" ] || fail "tests/tools not built (make all)"
N=00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff
cd "$T"
python3 "$SRC/tests/e2e/boot-evidence.py" . "$MKQUOTE" "$N" || fail "boot-evidence.py failed"
"$INGOT" keys generate -o k >/dev/null
"$INGOT" keys generate -o rogue >/dev/null
"$INGOT" keys keyring add keyring.json k.pub --name release --role manifest,enrolment,firmware-ref >/dev/null
# A measurement consistent with the content, as the audit requires.
"$INGOT" attest predict --manifest boot.manifest.json >meas.json
jq --slurpfile m meas.json '.measurement = $m[0]' boot.manifest.json >m.tmp && mv m.tmp boot.manifest.json
"$INGOT" sign boot.manifest.json --key k.key -o boot.dsse.json >/dev/null
"$MKENROL" k.key node-1 ak/ak-0.pub enrol.json
"$MKENROL" rogue.key node-1 ak/ak-1.pub enrol-rogue.json

note "firmware-ref records the reference from the good boot (enrolled AK, nonce)"
expect_exit 0 "firmware reference ovmf-test: PCR 0, 2 and 5 Secure Boot variables, 1 authorities" \
	"$INGOT" attest firmware-ref quote-good.json log-good.bin --platform ovmf-test --nonce "$N" \
	--enrolment enrol.json --keyring keyring.json --key k.key -o fw.json
expect_exit 2 "quote refused (wrong-ak)" "$INGOT" attest firmware-ref quote-soft.json log-good.bin \
	--platform ovmf-test --nonce "$N" --enrolment enrol.json --keyring keyring.json --key k.key -o fw2.json
[ ! -e fw2.json ] || fail "a refused reference was written"
expect_exit 2 "log-short-auth.bin: event 12: EV_EFI_VARIABLE_AUTHORITY: expected a UEFI_VARIABLE_DATA holding an EFI_SIGNATURE_DATA" \
	"$INGOT" attest firmware-ref quote-short-auth.json log-short-auth.bin --platform ovmf-test --nonce "$N" \
	--enrolment enrol.json --keyring keyring.json --key k.key -o fw2.json
[ ! -e fw2.json ] || fail "a reference short of an authority was written"

bc() { # CASE [OPTIONS...]: boot-check of CASE's evidence
	local c=$1; shift
	"$INGOT" attest boot-check "quote-$c.json" "log-$c.bin" --manifest boot.dsse.json --keyring keyring.json \
		--nonce "$N" "$@"
}
G=(--enrolment enrol.json --firmware-ref fw.json)

note "the good boot: admitted, under Secure Boot, firmware of the reference, enrolled AK"
expect_exit 0 "boot admit: booted the manifest's UKI (PCR 4, 11, 12) under Secure Boot (PCR 7), firmware of reference ovmf-test" \
	bc good "${G[@]}" --node node-1
assert_eq 1 "$(echo "$OUT" | wc -l)" "one line"

note "fail closed: no enrolled AK is unverified, never admitted; weaknesses refused unless accepted by name"
expect_exit 5 "boot unverified: no enrolled AK" bc good --firmware-ref fw.json
expect_exit 5 "boot unverified" bc good --firmware-ref fw.json --accept-weak unknown-firmware,secure-boot-unjudged
expect_exit 2 "weak evidence refused by policy: PCRs 0 and 2 not judged" bc good --enrolment enrol.json
assert_contains "$OUT" "--accept-weak unknown-firmware"
expect_exit 0 "accepted weaknesses: unknown-firmware" bc good --enrolment enrol.json --accept-weak unknown-firmware

note "hostile evidence: each refused with its reason"
expect_exit 2 "boot refuse: quote refused (wrong-ak): not signed by the enrolled AK" bc soft "${G[@]}"
expect_exit 2 "boot refuse: PCR 4: boot application 1 (event 14, logged as EV_EFI_BOOT_SERVICES_DRIVER)" bc relabel "${G[@]}"
expect_exit 2 "an extra boot application" bc extra-app "${G[@]}"
expect_exit 2 "(EV_EFI_VARIABLE_DRIVER_CONFIG, PCR 7): sha256 digest: expected the hash of the event's data" bc forged "${G[@]}"
expect_exit 2 "PCR 7: event 3: variable SecureBoot has digest" bc sb-off "${G[@]}"
expect_exit 2 "PCR 7: SecureBoot is 0 (Secure Boot off)" bc sb-off --enrolment enrol.json --accept-weak unknown-firmware
expect_exit 2 "PCR 0: sha256" bc other-fw "${G[@]}"
expect_exit 2 "is enrolled for node node-1, not node-2" bc good "${G[@]}" --node node-2
# The AK the evidence carries: an enrolment record signed by no trusted key
# does not count, and --ak-pub no longer applies to boot-check.
expect_exit 2 "enrol-rogue.json" bc soft --enrolment enrol-rogue.json --firmware-ref fw.json
# A firmware reference no trusted key signed does not count either.
"$INGOT" attest firmware-ref quote-other-fw.json log-other-fw.bin --platform evil --nonce "$N" \
	--enrolment enrol.json --keyring keyring.json --key rogue.key -o fw-rogue.json >/dev/null
expect_exit 2 "fw-rogue.json: signatures: 0 valid" bc other-fw --enrolment enrol.json --firmware-ref fw-rogue.json
expect_exit 64 "boot-check: option '--ak-pub' does not apply" bc good --ak-pub ak/ak-0.pub
# The manifest must be a signed envelope, verified against the keyring.
expect_exit 1 "boot.manifest.json" "$INGOT" attest boot-check quote-good.json log-good.bin \
	--manifest boot.manifest.json --keyring keyring.json --nonce "$N" "${G[@]}"

note "--seen-nonces: a refused boot does not use the nonce up; an admitted one does"
expect_exit 2 "PCR 4" bc relabel "${G[@]}" --seen-nonces seen.txt
[ ! -s seen.txt ] || fail "a refused boot recorded its nonce"
expect_exit 0 "boot admit" bc good "${G[@]}" --seen-nonces seen.txt
expect_exit 3 "already used" bc good "${G[@]}" --seen-nonces seen.txt

note "ingot audit gives the same verdict (one function)"
mkdir -p audit/reports audit/manifests audit/enrolments audit/firmware
cp boot.dsse.json audit/manifests/bootv.manifest.dsse.json
cp enrol.json audit/enrolments/ && cp fw.json audit/firmware/
for c in good relabel forged soft; do
	python3 - "$c" "$N" <<'PY'
import base64, json, sys
c, n = sys.argv[1], sys.argv[2]
r = {"schema": "ingot.report/v1", "node": {"id": "node-1" if c == "good" else "node-" + c},
     "time": "2026-12-01T00:00:00Z", "pool": "bootv",
     "attestation": {"mode": "measured-boot", "nonce": n, "quote": json.load(open(f"quote-{c}.json")),
                     "eventlog": base64.b64encode(open(f"log-{c}.bin", "rb").read()).decode()}}
json.dump(r, open(f"audit/reports/{c}.json", "w"))
PY
	echo "node-$c $N" >> audit/nonces
done
echo "node-1 $N" >> audit/nonces
"$MKENROL" k.key node-relabel ak/ak-0.pub audit/enrolments/relabel.json
"$MKENROL" k.key node-forged ak/ak-0.pub audit/enrolments/forged.json
"$MKENROL" k.key node-soft ak/ak-0.pub audit/enrolments/soft.json
rc=0; "$INGOT" audit --keyring keyring.json --manifests audit/manifests --reports audit/reports \
	--nonces audit/nonces --enrolments audit/enrolments --firmware-refs audit/firmware --now 2026-12-01T00:00:00Z \
	--json audit.json >/dev/null 2>&1 || rc=$?
assert_eq 2 "$rc" "audit exit (forged evidence present)"
finding() { jq -r --arg n "$1" '.. | objects | select(.node? == $n) | .findings[] | "\(.code): \(.detail)"' audit.json; }
assert_eq "" "$(finding node-1 | grep -E 'forged|boot-|log-|unverified|ak-' || true)" "good node: no evidence finding"
assert_contains "$(finding node-relabel)" "boot-refused: PCR 4: boot application 1 (event 14, logged as EV_EFI_BOOT_SERVICES_DRIVER)"
assert_contains "$(finding node-forged)" "boot-refused: eventlog: event 3 (EV_EFI_VARIABLE_DRIVER_CONFIG, PCR 7): sha256 digest"
assert_contains "$(finding node-soft)" "ak-not-enrolled: quote refused (wrong-ak)"

note "ingot audit without --nonces: the same evidence, at best weak (no nonce was issued)"
rc=0; "$INGOT" audit --keyring keyring.json --manifests audit/manifests --reports audit/reports \
	--enrolments audit/enrolments --firmware-refs audit/firmware --now 2026-12-01T00:00:00Z \
	--json audit-nononce.json >/dev/null 2>&1 || rc=$?
assert_eq 2 "$rc" "audit exit without --nonces (forged evidence present)"
good=$(jq -r '.. | objects | select(.node? == "node-1") | .findings[] | "\(.code): \(.detail)"' audit-nononce.json)
assert_contains "$good" "unverified: quote refused (weak): quote: weak evidence refused by policy: no-nonce"
echo "boot verdict: admitted the good boot; refused every hostile case alike in boot-check and audit"
