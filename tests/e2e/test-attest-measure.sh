#!/bin/bash
# measure: the PCR value ingot predicts for a manifest is what a fresh
# swtpm holds after 'ingot attest measure', in every bank; the formulas
# are recomputed here with jq, sha*sum and xxd; the log ingot writes is
# read by tpm2_eventlog and replays to tpm2_pcrread's values.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/swtpm.sh"
. "$(dirname "$0")/attest-lib.sh"
command -v tpm2_pcrread >/dev/null || skip "tpm2-tools not installed"
swtpm_start

make_manifest "$T/m.json" h100-pool a

note "content digest and event data follow docs/CONTRACTS.md"
content=$(jq -cS 'del(.measurement)' "$T/m.json" | tr -d '\n' | sha256sum | cut -c1-64)
assert_eq "$content" "$(json_get "$T/m.json" .measurement.content_digest)" "content_digest"
ev="ingot:v1 image=h100-pool sha256=$(json_get "$T/m.json" .image.sha256) verity=$(json_get "$T/m.json" .verity.root_hash) manifest=$content"
assert_eq "$ev" "$(json_get "$T/m.json" .measurement.event_data)" "event_data"
assert_eq 15 "$(json_get "$T/m.json" .measurement.pcr)" "pcr"
assert_eq 13 "$(json_get "$T/m.json" .measurement.event_type)" "event_type"
for alg in sha1 sha256 sha384 sha512; do
	d=$(printf '%s' "$ev" | ${alg}sum | cut -d' ' -f1)
	assert_eq "$d" "$(json_get "$T/m.json" .measurement.digests.$alg)" "digest $alg"
	zeros=$(printf '%0*d' ${#d} 0)
	p=$(printf '%s%s' "$zeros" "$d" | xxd -r -p | ${alg}sum | cut -d' ' -f1)
	assert_eq "$p" "$(json_get "$T/m.json" .measurement.predicted.$alg)" "predicted $alg"
done

note "measure into a reset PCR reaches the predicted value in every active bank"
banks=$(tpm2_getcap pcrs | sed -n 's/^ *- \(sha[0-9]*\) *: \[ *[0-9].*/\1/p')
[ -n "$banks" ] || fail "no active banks reported by tpm2_getcap"
"$INGOT" attest measure --manifest "$T/m.json" --log "$T/log.bin" >"$T/out"
for alg in $banks; do
	assert_eq "$(json_get "$T/m.json" .measurement.predicted.$alg)" "$(tpm_pcr "$alg" 15)" "swtpm $alg PCR 15"
	assert_contains "$(cat "$T/out")" "$alg:15=$(tpm_pcr "$alg" 15)" "measure output"
done

note "tpm2_eventlog reads ingot's log and replays it to the TPM's values"
tpm2_eventlog "$T/log.bin" >"$T/tel.yaml"
assert_contains "$(cat "$T/tel.yaml")" "EV_IPL" "tpm2_eventlog"
assert_contains "$(cat "$T/tel.yaml")" "Spec ID Event03" "tpm2_eventlog"
for alg in $banks; do
	assert_eq "0x$(tpm_pcr "$alg" 15)" "$(sed -n "/^  $alg:/,/^  [a-z]/s/^ *15 *: //p" "$T/tel.yaml" | tr 'A-F' 'a-f')" "tpm2_eventlog $alg 15"
done
"$INGOT" attest eventlog "$T/log.bin" >"$T/ours.yaml"
diff <(sed -n '/^pcrs:/,$p' "$T/tel.yaml") "$T/ours.yaml" || fail "ingot's replay differs from tpm2_eventlog's"

note "a second measure appends; the log still replays to the TPM"
make_manifest "$T/m2.json" h100-pool b
"$INGOT" attest measure --manifest "$T/m2.json" --log "$T/log.bin" >/dev/null
assert_eq 2 "$("$INGOT" attest eventlog --json "$T/log.bin" | jq '.events | length')" "events"
tpm2_eventlog "$T/log.bin" | sed -n '/^pcrs:/,$p' >"$T/tel2.yaml"
"$INGOT" attest eventlog "$T/log.bin" | diff "$T/tel2.yaml" - || fail "replay after two measures"
assert_eq "0x$(tpm_pcr sha256 15)" "$(sed -n '/^  sha256:/,$s/^ *15 *: //p' "$T/tel2.yaml" | head -n1 | tr 'A-F' 'a-f')" "sha256 15 after two"

note "--pcr overrides; a PCR outside 0-23 is a usage error"
"$INGOT" attest measure --manifest "$T/m.json" --pcr 16 --log "$T/log16.bin" >/dev/null
assert_eq "$(json_get "$T/m.json" .measurement.predicted.sha256)" "$(tpm_pcr sha256 16)" "PCR 16"
expect_exit 64 "expected 0-23" "$INGOT" attest measure --manifest "$T/m.json" --pcr 24

note "a manifest whose measurement does not follow from its content is refused"
jq '.measurement.event_data = "ingot:v1 image=other"' "$T/m.json" >"$T/bad.json"
expect_exit 1 "measurement" "$INGOT" attest measure --manifest "$T/bad.json" --log "$T/log.bin"
jq '.image.sha256 = "zz"' "$T/m.json" >"$T/bad2.json"
expect_exit 1 "image.sha256" "$INGOT" attest measure --manifest "$T/bad2.json" --log "$T/log.bin"

note "no TPM at the TCTI: exit 4 and a clear error"
expect_exit 4 "cannot load or connect" "$INGOT" attest measure --manifest "$T/m.json" --log "$T/x.bin" \
	--tcti "swtpm:host=127.0.0.1,port=1"
expect_exit 4 "cannot load or connect" "$INGOT" attest measure --manifest "$T/m.json" --log "$T/x.bin" \
	--tcti "nosuchtcti"
assert_no_file "$T/x.bin"

note "PCR banks deallocated (tpm2_pcrallocate + TPM restart)"
tpm2_pcrallocate sha1:all+sha256:all+sha384:none+sha512:none >/dev/null
swtpm_stop
swtpm_start   # same state directory: the new allocation takes effect
"$INGOT" attest ak create -o "$T/ak" >/dev/null
expect_exit 1 "PCR bank sha384: expected active" \
	"$INGOT" attest quote --nonce 0101010101010101 --pcrs sha384:15 --ak "$T/ak" -o "$T/q.json"
assert_no_file "$T/q.json"
# The old log lists four banks; the TPM now has two.
expect_exit 1 "banks: expected sha1,sha256 (the TPM's active banks), got sha1,sha256,sha384,sha512" \
	"$INGOT" attest measure --manifest "$T/m.json" --log "$T/log.bin"
assert_eq "$(printf '%064d' 0)" "$(tpm_pcr sha256 15)" "PCR 15 untouched by the refused measure"
"$INGOT" attest measure --manifest "$T/m.json" --log "$T/log2.bin" >/dev/null
assert_eq '["sha1","sha256"]' "$("$INGOT" attest eventlog --json "$T/log2.bin" | jq -c .banks)" "log banks"
assert_eq "$(json_get "$T/m.json" .measurement.predicted.sha256)" "$(tpm_pcr sha256 15)" "PCR 15 after restart"
echo ok
