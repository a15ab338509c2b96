#!/bin/bash
# Trust roles (issue 35 item 7): each signed statement is verified against
# the keys of its own role only.  The image pipeline's manifest key cannot
# mint an enrolment record for a software AK (whose quote would then be
# admitted), the enrolment key is no manifest signer, and an untyped
# keyring vouches only for the role it is named for: by
# `ingot attest boot-check`, `firmware-ref`, `audit` and `ingot serve`.
. "$(dirname "$0")/lib.sh"
. "$SRC/tests/e2e/serve-lib.sh"
serve_fixture   # in $T/v: the evidence; its one-key keyring is replaced below
N=00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff
for k in m v f; do "$INGOT" keys generate -o "$k" >/dev/null; done
rm -f keyring.json
# One root of trust, TUF-like: the pipeline's key signs manifests, the
# verifier's enrolment records, the platform team's firmware references.
"$INGOT" keys keyring add keyring.json m.pub --name pipeline --role manifest >/dev/null
"$INGOT" keys keyring add keyring.json v.pub --name verifier --role enrolment >/dev/null
"$INGOT" keys keyring add keyring.json f.pub --name platform --role firmware-ref >/dev/null
# The same keys as untyped keyrings, one a file.
"$INGOT" keys keyring add m.ring m.pub --name pipeline >/dev/null
"$INGOT" keys keyring add v.ring v.pub --name verifier >/dev/null
"$INGOT" sign boot.manifest.json --key m.key -o boot.dsse.json >/dev/null
"$INGOT" sign boot.manifest.json --key v.key -o boot-by-v.dsse.json >/dev/null
"$MKENROL" v.key node-1 ak/ak-0.pub enrolments/node-1.json
rm -f enrolments/node-2.json
# The attack: the manifest key enrols the software AK (ak-1) of quote-soft.
"$MKENROL" m.key node-1 ak/ak-1.pub enrol-soft-by-m.json
"$INGOT" attest firmware-ref quote-good.json log-good.bin --platform ovmf-test --nonce "$N" \
	--enrolment enrolments/node-1.json --keyring keyring.json --key f.key -o firmware/ovmf.json >/dev/null ||
	fail "firmware-ref failed"
"$INGOT" attest firmware-ref quote-good.json log-good.bin --platform ovmf-test --nonce "$N" \
	--enrolment enrolments/node-1.json --keyring keyring.json --key m.key -o fw-by-m.json >/dev/null ||
	fail "firmware-ref (signed by the manifest key) failed"

note "keys keyring list shows each role's keys and threshold"
expect_exit 0 "role enrolment: threshold 1 of verifier" "$INGOT" keys keyring list keyring.json
assert_contains "$OUT" "role manifest: threshold 1 of pipeline"
assert_contains "$OUT" "role promotion: no keys (it verifies nothing)"

bc() { # QUOTE-CASE [OPTIONS...]: boot-check of the case's evidence
	local c=$1; shift
	"$INGOT" attest boot-check "quote-$c.json" "log-$c.bin" --nonce "$N" --node node-1 "$@"
}
G=(--manifest boot.dsse.json --firmware-ref firmware/ovmf.json)

note "each statement by its role's key: admitted"
expect_exit 0 "boot admit" bc good "${G[@]}" --keyring keyring.json --enrolment enrolments/node-1.json

note "the manifest key enrols a software AK: refused, by the enrolment role"
expect_exit 2 "enrol-soft-by-m.json: signatures: 0 valid from distinct trusted keys, threshold 1 (keyring keyring.json, role enrolment)" \
	bc soft "${G[@]}" --keyring keyring.json --enrolment enrol-soft-by-m.json
# An untyped keyring of the manifest key is the manifest's only.
expect_exit 2 "m.ring: an untyped keyring (no \"roles\") vouches only for the statements it is named for, and it was not named for the enrolment role" \
	bc soft --manifest boot.dsse.json --keyring m.ring --enrolment enrol-soft-by-m.json --accept-weak unknown-firmware
expect_exit 2 "(keyring v.ring, role enrolment)" \
	bc soft --manifest boot.dsse.json --keyring m.ring --enrolment-keyring v.ring --enrolment enrol-soft-by-m.json \
	--accept-weak unknown-firmware
# Named for the role, an untyped keyring serves it.
expect_exit 0 "boot admit" bc good --manifest boot.dsse.json --keyring m.ring --enrolment-keyring v.ring \
	--enrolment enrolments/node-1.json --accept-weak unknown-firmware

note "the enrolment key signs a manifest: refused, by the manifest role"
expect_exit 2 "boot-by-v.dsse.json: signatures: 0 valid from distinct trusted keys, threshold 1 (keyring keyring.json, role manifest)" \
	bc good --manifest boot-by-v.dsse.json --firmware-ref firmware/ovmf.json --keyring keyring.json \
	--enrolment enrolments/node-1.json
expect_exit 3 "is not in the keyring for role manifest" "$INGOT" verify-manifest boot-by-v.dsse.json --keyring keyring.json
expect_exit 2 "(keyring m.ring, role manifest)" bc good --manifest boot-by-v.dsse.json --keyring m.ring \
	--enrolment-keyring v.ring --enrolment enrolments/node-1.json --accept-weak unknown-firmware

note "the manifest key signs a firmware reference: refused, by the firmware-ref role"
expect_exit 2 "fw-by-m.json: signatures: 0 valid from distinct trusted keys, threshold 1 (keyring keyring.json, role firmware-ref)" \
	bc good --manifest boot.dsse.json --firmware-ref fw-by-m.json --keyring keyring.json --enrolment enrolments/node-1.json

note "fail closed: a role with no keys verifies nothing, and says so"
"$INGOT" keys keyring add noen.json m.pub --name pipeline --role manifest,firmware-ref >/dev/null
expect_exit 2 "noen.json: roles: no \"enrolment\" role: no key is trusted for enrolment statements" \
	bc good --manifest boot.dsse.json --keyring noen.json --enrolment enrolments/node-1.json
expect_exit 2 "no keyring is named for the manifest role" \
	bc good --manifest boot.dsse.json --enrolment-keyring v.ring --enrolment enrolments/node-1.json
badring() { jq "$1" keyring.json >bad.json || fail "jq $1"; }
badring '.threshold = 1'
expect_exit 1 "bad.json: threshold: a keyring with roles sets a threshold per role" "$INGOT" keys keyring list bad.json
badring '.roles.enrolment.keys = ["nobody"]'
expect_exit 1 "bad.json: roles.enrolment.keys[0]: expected the name of one of the file's keys" \
	"$INGOT" keys keyring list bad.json
badring '.roles.root = .roles.manifest'
expect_exit 1 "bad.json: roles.root: unknown role" "$INGOT" keys keyring list bad.json
badring '.roles.manifest.threshold = 2'
expect_exit 1 "bad.json: roles.manifest.threshold: expected 1..1" "$INGOT" keys keyring list bad.json
badring '.roles.manifest.keys += ["pipeline"] | .roles.manifest.threshold = 2'
expect_exit 1 "is named twice" "$INGOT" keys keyring list bad.json
# A malformed keyring is an error, never "no key for the role".
expect_exit 1 "bad.json: roles.manifest.keys[1]: \"pipeline\" is named twice" bc good "${G[@]}" --keyring bad.json \
	--enrolment enrolments/node-1.json
expect_exit 1 "a keyring with roles: name the roles the key is trusted for (--role)" \
	"$INGOT" keys keyring add keyring.json k.pub --name other
expect_exit 1 "an untyped keyring (no \"roles\"): --role applies" \
	"$INGOT" keys keyring add m.ring k.pub --name other --role enrolment

note "audit: an enrolment record by the manifest key is refused by its role"
mkdir -p audit/m audit/r audit/en
cp boot.dsse.json audit/m/boot.manifest.dsse.json && cp boot.manifest.json audit/m/
cp enrol-soft-by-m.json audit/en/
expect_exit 3 "enrol-soft-by-m.json: signatures: 0 valid from distinct trusted keys, threshold 1 (keyring keyring.json, role enrolment)" \
	"$INGOT" audit --keyring keyring.json --manifests audit/m --reports audit/r --enrolments audit/en
expect_exit 3 "it was not named for the enrolment role" \
	"$INGOT" audit --keyring m.ring --manifests audit/m --reports audit/r --enrolments audit/en

note "ingot serve: the config names each role's keys; a record of the wrong role stops it"
serve_config
expect_exit 0 "" "$INGOT" serve --config serve.conf --check
cp enrol-soft-by-m.json enrolments/node-3.json
expect_exit 1 "enrolments/node-3.json: signatures: 0 valid from distinct trusted keys, threshold 1 (keyring ./keyring.json, role enrolment)" \
	"$INGOT" serve --config serve.conf --check
# An untyped keyring names the manifest role only; per-role keyrings
# name the rest.
sed -i 's/^keyring = .*/keyring = m.ring/' serve.conf
expect_exit 1 "m.ring: an untyped keyring (no \"roles\") vouches only for the statements it is named for, and it was not named for the enrolment role" \
	"$INGOT" serve --config serve.conf --check
rm enrolments/node-3.json
expect_exit 1 "it was not named for the enrolment role" "$INGOT" serve --config serve.conf --check
serve_config "keyring = m.ring" "enrolment-keyring = v.ring" "firmware-ref-keyring = keyring.json"
expect_exit 0 "" "$INGOT" serve --config serve.conf --check
cp enrol-soft-by-m.json enrolments/node-3.json
expect_exit 1 "(keyring ./v.ring, role enrolment)" "$INGOT" serve --config serve.conf --check
rm enrolments/node-3.json
serve_config "manifest = boot-by-v.dsse.json"
expect_exit 1 "boot-by-v.dsse.json: signatures: 0 valid from distinct trusted keys, threshold 1 (keyring ./keyring.json, role manifest)" \
	"$INGOT" serve --config serve.conf --check
serve_config "enrolment-threshold = 2"
expect_exit 1 "enrolment threshold 2: the keyring has 1 keys for the role" "$INGOT" serve --config serve.conf --check

note "ingot serve: the enrolled node admitted, the software AK's quote refused"
serve_config
serve_start
evidence good node-1 "$(nonce_for node-1)"
expect_http 200 '"verdict":"admit"' POST /v1/evidence ev.json
evidence soft node-1 "$(nonce_for node-1)"
expect_http 200 '"verdict":"refuse"' POST /v1/evidence ev.json
assert_contains "$BODY" "wrong-ak"

note "the operator's override: admit or drain, with the token only"
printf '{"reason":"burn-in passed"}' >op.json
expect_http 401 "admit: expected an Authorization: Bearer TOKEN header" POST /v1/nodes/node-2/admit op.json
expect_http 403 "admit: the token is not the verifier's" POST /v1/nodes/node-2/admit op.json \
	-H "Authorization: Bearer not-the-token-0123456789"
assert_eq "" "$(db "SELECT state FROM nodes WHERE node='node-2'")" "node-2 after refused overrides"
expect_http 200 '"reason":"operator: burn-in passed","verdict":"admit"' POST /v1/nodes/node-2/admit op.json \
	-H "Authorization: Bearer $(cat token)"
assert_eq "admit" "$(db "SELECT state FROM nodes WHERE node='node-2'")" "node-2 after the operator's admit"
assert_eq "node-2|admit|operator: burn-in passed" "$(tail -1 hook.log)" "hook arguments"
expect_http 200 '"reason":"operator: drained","verdict":"drain"' POST /v1/nodes/node-2/drain "" \
	-H "Authorization: Bearer $(cat token)"
expect_http 405 "expected POST" GET /v1/nodes/node-2/admit
serve_stop
