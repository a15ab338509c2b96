#!/bin/bash
# Real TPM evidence as firmware and clouds produce it (issue 16): SHA1
# (TCG 1.2 format) event logs replay exactly as tpm2_eventlog replays
# them; a quote signed over SHA-1 (RSASSA) and one without qualifying
# data (tpm2_quote without -q) verify with tpm2_checkquote and with
# ingot, which reports the weakness and refuses it unless accepted.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/swtpm.sh"
. "$(dirname "$0")/attest-lib.sh"
command -v tpm2_eventlog >/dev/null || skip "tpm2-tools not installed"
MKLOG="python3 $SRC/tests/e2e/attest-mklog.py"

note "ingot attest eventlog prints tpm2_eventlog's pcrs: exactly (real firmware logs)"
for log in "$SRC"/tests/fixtures/tcg-eventlogs/*.bin; do
	tpm2_eventlog "$log" 2>/dev/null | sed -n '/^pcrs:/,$p' >"$T/tel"
	[ -s "$T/tel" ] || fail "$(basename "$log"): tpm2_eventlog printed no pcrs"
	"$INGOT" attest eventlog "$log" | diff -u "$T/tel" - || fail "$(basename "$log"): differs from tpm2_eventlog"
done

note "no empty bank headings: a log extending nothing prints 'pcrs:' alone, as tpm2_eventlog"
$MKLOG empty "$T/empty.bin"
tpm2_eventlog "$T/empty.bin" 2>/dev/null | sed -n '/^pcrs:/,$p' >"$T/tel"
"$INGOT" attest eventlog "$T/empty.bin" | diff -u "$T/tel" - || fail "empty log differs from tpm2_eventlog"
assert_eq "pcrs:" "$("$INGOT" attest eventlog "$T/empty.bin")" "empty log output"

note "SHA1 (TCG 1.2 format) logs replay as tpm2_eventlog replays them"
for kind in sha1-only sha1-log; do
	$MKLOG $kind "$T/$kind.bin" "$T/$kind.extends"
	tpm2_eventlog "$T/$kind.bin" 2>/dev/null | sed -n '/^pcrs:/,$p' >"$T/tel"
	grep -q sha1: "$T/tel" || fail "$kind: tpm2_eventlog printed no sha1 bank"
	"$INGOT" attest eventlog "$T/$kind.bin" | diff -u "$T/tel" - || fail "$kind: differs from tpm2_eventlog"
done
"$INGOT" attest eventlog --json "$T/sha1-log.bin" >"$T/sha1.json"
assert_eq sha1 "$(jq -r .format "$T/sha1.json")" "log format"
assert_eq 7 "$(jq '.events | length' "$T/sha1.json")" "SHA1 log events"
$MKLOG sha1-truncated "$T/st.bin"; expect_exit 1 "truncated log" "$INGOT" attest eventlog "$T/st.bin"
$MKLOG sha1-bad-pcr "$T/sp.bin";   expect_exit 1 "PCR index: expected 0-23, got 24" "$INGOT" attest eventlog "$T/sp.bin"

swtpm_start
note "the SHA1 log's extends on swtpm: the replay matches a quote of the sha1 bank"
while read -r spec; do tpm2_pcrextend "$spec"; done <"$T/sha1-log.extends"
"$INGOT" attest ak create -o "$T/ak" >/dev/null
N1=00112233445566778899aabbccddeeff
"$INGOT" attest quote --nonce $N1 --pcrs sha1:0,4,7,16,23 --ak "$T/ak" -o "$T/q1.json"
expect_exit 0 "replay matches" "$INGOT" attest eventlog "$T/sha1-log.bin" --against "$T/q1.json" --nonce $N1
assert_eq "$(tpm_pcr sha1 4)" "$(jq -r '.pcrs.sha1."4"' "$T/sha1.json")" "sha1 PCR 4"
tpm2_pcrextend "16:sha1=$(printf x | sha1sum | cut -c1-40)"
"$INGOT" attest quote --nonce $N1 --pcrs sha1:16 --ak "$T/ak" -o "$T/q2.json"
expect_exit 2 "sha1 PCR 16" "$INGOT" attest eventlog "$T/sha1-log.bin" --against "$T/q2.json" --nonce $N1 \
	--pcrs sha1:16

note "measure never appends ingot's crypto-agile records to a SHA1 log"
make_manifest "$T/m.json" img 1
cp "$T/sha1-log.bin" "$T/fw.bin"
before=$(tpm_pcr sha256 15)
expect_exit 1 "expected a crypto-agile log to append to, got a SHA1-format (TCG 1.2) log" \
	"$INGOT" attest measure --manifest "$T/m.json" --log "$T/fw.bin"
cmp -s "$T/fw.bin" "$T/sha1-log.bin" || fail "measure changed the SHA1 log"
assert_eq "$before" "$(tpm_pcr sha256 15)" "PCR 15 after a refused measure"

note "an RSA AK signing RSASSA over SHA-1 (tpm2_createak -g sha1), as some cloud TPMs"
# swtpm has no resource manager: flush transient objects and sessions.
tpm2_createek -c "$T/ek.ctx" -G rsa -u "$T/ek.pub" -Q
tpm2_flushcontext -t
tpm2_createak -C "$T/ek.ctx" -c "$T/ak1.ctx" -G rsa -g sha1 -s rsassa -u "$T/ak1.pem" -f pem \
	-n "$T/ak1.name" -Q
tpm2_flushcontext -t
tpm2_flushcontext -s
NONCE=5eed0123456789abcdef

# quote_doc NAME NONCE: tpm2_quote's outputs ($T/NAME.msg/.sig/.pcrs,
# values of sha1:0,15+sha256:15 in selection order) as an ingot quote.
quote_doc() {
	python3 - "$T" "$1" "$2" <<'PY'
import base64, json, sys
T, name, nonce = sys.argv[1:4]
raw = open("%s/%s.pcrs" % (T, name), "rb").read()
assert len(raw) == 20 + 20 + 32, len(raw)
doc = {"format": "ingot.quote/v1", "nonce": nonce,
       "attest": base64.b64encode(open("%s/%s.msg" % (T, name), "rb").read()).decode(),
       "signature": base64.b64encode(open("%s/%s.sig" % (T, name), "rb").read()).decode(),
       "pcrs": {"sha1": {"0": raw[0:20].hex(), "15": raw[20:40].hex()},
                "sha256": {"15": raw[40:72].hex()}},
       "ak_pub": open(T + "/ak1.pem").read()}
json.dump(doc, open("%s/%s.json" % (T, name), "w"))
PY
}

tpm2_quote -c "$T/ak1.ctx" -l sha1:0,15+sha256:15 -q $NONCE -g sha1 -m "$T/s1.msg" -s "$T/s1.sig" \
	-o "$T/s1.pcrs" -F values -Q
tpm2_flushcontext -t
tpm2_checkquote -u "$T/ak1.pem" -m "$T/s1.msg" -s "$T/s1.sig" -f "$T/s1.pcrs" -l sha1:0,15+sha256:15 \
	-g sha1 -q $NONCE >/dev/null || fail "tpm2_checkquote refuses the SHA-1 quote"
quote_doc s1 $NONCE
expect_exit 2 "weak evidence refused by policy: sha1-signature" \
	"$INGOT" attest verify-quote "$T/s1.json" --nonce $NONCE --ak-pub "$T/ak1.pem"
assert_contains "$OUT" "(weak)"
expect_exit 0 "accepted weaknesses sha1-signature" \
	"$INGOT" attest verify-quote "$T/s1.json" --nonce $NONCE --ak-pub "$T/ak1.pem" --accept-weak sha1-signature
"$INGOT" attest verify-quote "$T/s1.json" --nonce $NONCE --accept-weak sha1-signature --json >"$T/v1.json"
assert_eq '["sha1-signature"]' "$(jq -c .weaknesses "$T/v1.json")" "reported weaknesses"
assert_eq "$(openssl pkey -pubin -in "$T/ak1.pem" -outform DER | sha256sum | cut -c1-64)" \
	"$(jq -r .ak_id "$T/v1.json")" "AK id (sha256 of the DER public key)"
expect_exit 2 "nonce-mismatch" "$INGOT" attest verify-quote "$T/s1.json" --nonce 00$NONCE \
	--ak-pub "$T/ak1.pem" --accept-weak sha1-signature
jq '.pcrs.sha1."15" = "'"$(printf '%040d' 1)"'"' "$T/s1.json" >"$T/s1-bad.json"
expect_exit 2 "pcr-digest-mismatch" "$INGOT" attest verify-quote "$T/s1-bad.json" --nonce $NONCE \
	--accept-weak sha1-signature

note "a quote without qualifying data (tpm2_quote without -q): no freshness"
tpm2_quote -c "$T/ak1.ctx" -l sha1:0,15+sha256:15 -g sha1 -m "$T/s0.msg" -s "$T/s0.sig" \
	-o "$T/s0.pcrs" -F values -Q
tpm2_flushcontext -t
tpm2_checkquote -u "$T/ak1.pem" -m "$T/s0.msg" -s "$T/s0.sig" -f "$T/s0.pcrs" -l sha1:0,15+sha256:15 \
	-g sha1 >/dev/null || fail "tpm2_checkquote refuses the quote without nonce"
quote_doc s0 ""
expect_exit 64 "--nonce is required (or --accept-weak no-nonce)" \
	"$INGOT" attest verify-quote "$T/s0.json" --ak-pub "$T/ak1.pem" --accept-weak sha1-signature
expect_exit 2 "weak evidence refused by policy: sha1-signature" \
	"$INGOT" attest verify-quote "$T/s0.json" --ak-pub "$T/ak1.pem" --accept-weak no-nonce
expect_exit 0 "quote ok: nonce (none)" "$INGOT" attest verify-quote "$T/s0.json" --ak-pub "$T/ak1.pem" \
	--accept-weak no-nonce,sha1-signature
assert_contains "$OUT" "accepted weaknesses sha1-signature,no-nonce"
expect_exit 2 "nonce-mismatch" "$INGOT" attest verify-quote "$T/s0.json" --nonce $NONCE --ak-pub "$T/ak1.pem" \
	--accept-weak sha1-signature
expect_exit 64 "--accept-weak: expected sha1-signature or no-nonce" \
	"$INGOT" attest verify-quote "$T/s0.json" --accept-weak sha1
echo ok
