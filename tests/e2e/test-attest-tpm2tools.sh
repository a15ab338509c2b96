#!/bin/bash
# Interoperability with tpm2-tools: tpm2_checkquote accepts the quotes
# ingot produces (ECC and RSA AKs), and ingot's verifier accepts a quote
# made by tpm2_quote with a key made by tpm2_create, on the same swtpm.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/swtpm.sh"
. "$(dirname "$0")/attest-lib.sh"
command -v tpm2_checkquote >/dev/null || skip "tpm2-tools not installed"
swtpm_start
NONCE=5eed0123456789abcdef
tpm2_pcrextend "15:sha256=$(printf ingot | sha256sum | cut -c1-64),sha1=$(printf ingot | sha1sum | cut -c1-40)"

# split_quote Q DIR: the files tpm2_checkquote reads, from ingot's quote:
# msg (TPMS_ATTEST), sig (TPMT_SIGNATURE), ak.pem, pcrs (values in
# selection order, tpm2-tools' "values" format).
split_quote() {
	mkdir -p "$2"
	json_get "$1" .attest | base64 -d >"$2/msg"
	json_get "$1" .signature | base64 -d >"$2/sig"
	jq -j .ak_pub "$1" >"$2/ak.pem"
	: >"$2/pcrs"
	for pcr in 0 7 15; do json_get "$1" ".pcrs.sha256.\"$pcr\"" | xxd -r -p >>"$2/pcrs"; done
}

for alg in ecc rsa; do
	note "tpm2_checkquote accepts ingot's quote ($alg AK)"
	"$INGOT" attest ak create --alg $alg -o "$T/ak-$alg" >/dev/null
	"$INGOT" attest quote --nonce $NONCE --pcrs sha256:0,7,15 --ak "$T/ak-$alg" -o "$T/q-$alg.json"
	split_quote "$T/q-$alg.json" "$T/cq-$alg"
	tpm2_checkquote -u "$T/cq-$alg/ak.pem" -m "$T/cq-$alg/msg" -s "$T/cq-$alg/sig" \
		-f "$T/cq-$alg/pcrs" -l sha256:0,7,15 -g sha256 -q $NONCE >"$T/cq.out" ||
		fail "tpm2_checkquote refused ingot's $alg quote"
	# ... and refuses it for another nonce (so the acceptance means something).
	if tpm2_checkquote -u "$T/cq-$alg/ak.pem" -m "$T/cq-$alg/msg" -s "$T/cq-$alg/sig" \
		-f "$T/cq-$alg/pcrs" -l sha256:0,7,15 -g sha256 -q 00$NONCE >/dev/null 2>&1; then
		fail "tpm2_checkquote accepted a wrong nonce"
	fi
	cmp -s "$T/cq-$alg/ak.pem" "$T/ak-$alg/ak.pub.pem" || fail "quote's ak_pub differs from ak.pub.pem"
done

note "ingot leaves no transient object behind (swtpm has no resource manager)"
assert_eq "" "$(tpm2_getcap handles-transient)" "transient handles"

note "ingot verifies a quote made by tpm2_quote"
tpm2tools_signing_key "$T/k"
tpm2_quote -c "$T/k.ctx" -l sha256:0,15+sha1:15 -q $NONCE -m "$T/tq.msg" -s "$T/tq.sig" \
	-o "$T/tq.pcrs" -F values -g sha256 -Q
tpm2_flushcontext -t
# Assemble ingot's quote document from tpm2_quote's outputs; the values
# file holds the PCRs in selection order.
python3 - "$T" "$NONCE" <<'PY'
import base64, json, sys
T, nonce = sys.argv[1], sys.argv[2]
raw = open(T + "/tq.pcrs", "rb").read()
assert len(raw) == 32 + 32 + 20, len(raw)
doc = {"format": "ingot.quote/v1", "nonce": nonce,
       "attest": base64.b64encode(open(T + "/tq.msg", "rb").read()).decode(),
       "signature": base64.b64encode(open(T + "/tq.sig", "rb").read()).decode(),
       "pcrs": {"sha256": {"0": raw[0:32].hex(), "15": raw[32:64].hex()},
                "sha1": {"15": raw[64:84].hex()}},
       "ak_pub": open(T + "/k.pem").read()}
json.dump(doc, open(T + "/tq.json", "w"))
PY
expect_exit 0 "quote ok: nonce $NONCE" "$INGOT" attest verify-quote "$T/tq.json" --nonce $NONCE --ak-pub "$T/k.pem"
assert_eq "$(tpm_pcr sha256 15)" "$(json_get "$T/tq.json" '.pcrs.sha256."15"')" "tpm2_quote's PCR 15"
expect_exit 2 "wrong-ak" "$INGOT" attest verify-quote "$T/tq.json" --nonce $NONCE --ak-pub "$T/ak-ecc/ak.pub.pem"
expect_exit 2 "nonce-mismatch" "$INGOT" attest verify-quote "$T/tq.json" --nonce 00$NONCE --ak-pub "$T/k.pem"
jq '.pcrs.sha1."15" = "'"$(printf '%040d' 0)"'"' "$T/tq.json" >"$T/tq-bad.json"
expect_exit 2 "pcr-digest-mismatch" "$INGOT" attest verify-quote "$T/tq-bad.json" --nonce $NONCE --ak-pub "$T/k.pem"
echo ok
