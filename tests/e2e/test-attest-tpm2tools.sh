#!/bin/bash
# Interoperability with tpm2-tools: tpm2_checkquote accepts the quotes
# ingot produces (ECC and RSA AKs), and `ingot attest import` turns a quote
# made by tpm2_quote (ECC and RSA-PSS keys made by tpm2_create, on the same
# swtpm; PCR files in both forms) into a quote document verify-quote
# accepts, refusing files that do not belong together.
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

note "ingot attest import turns tpm2_quote's files into a quote document that verifies"
tpm2tools_signing_key "$T/k"
tpm2_quote -c "$T/k.ctx" -l sha256:0,15+sha1:15 -q $NONCE -m "$T/tq.msg" -s "$T/tq.sig" \
	-o "$T/tq.pcrs" -F values -g sha256 -Q
tpm2_flushcontext -t
"$INGOT" attest import -m "$T/tq.msg" -s "$T/tq.sig" -f "$T/tq.pcrs" -u "$T/k.tpm2b" -o "$T/tq.json"
assert_eq "$NONCE" "$(jq -r .nonce "$T/tq.json")" "imported nonce (the signed extraData)"
assert_eq "$(cat "$T/k.pem")" "$(jq -j .ak_pub "$T/tq.json" | sed '$a\')" "imported ak_pub from TPM2B_PUBLIC"
expect_exit 0 "quote ok: nonce $NONCE" "$INGOT" attest verify-quote "$T/tq.json" --nonce $NONCE --ak-pub "$T/k.pem"
assert_eq "$(tpm_pcr sha256 15)" "$(json_get "$T/tq.json" '.pcrs.sha256."15"')" "tpm2_quote's PCR 15"
assert_eq "$(tpm_pcr sha1 15)" "$(json_get "$T/tq.json" '.pcrs.sha1."15"')" "tpm2_quote's sha1 PCR 15"
expect_exit 2 "wrong-ak" "$INGOT" attest verify-quote "$T/tq.json" --nonce $NONCE --ak-pub "$T/ak-ecc/ak.pub.pem"
expect_exit 2 "nonce-mismatch" "$INGOT" attest verify-quote "$T/tq.json" --nonce 00$NONCE --ak-pub "$T/k.pem"
jq '.pcrs.sha1."15" = "'"$(printf '%040d' 0)"'"' "$T/tq.json" >"$T/tq-bad.json"
expect_exit 2 "pcr-digest-mismatch" "$INGOT" attest verify-quote "$T/tq-bad.json" --nonce $NONCE --ak-pub "$T/k.pem"

note "import: tpm2_quote's default (serialized) PCR file, and a PEM AK, give the same document"
tpm2_load -C "$T/k.prim.ctx" -u "$T/k.pub" -r "$T/k.priv" -c "$T/k2.ctx" -Q
tpm2_flushcontext -t
tpm2_quote -c "$T/k2.ctx" -l sha256:0,15+sha1:15 -q $NONCE -m "$T/ts.msg" -s "$T/ts.sig" -o "$T/ts.pcrs" -g sha256 -Q
tpm2_flushcontext -t
"$INGOT" attest import -m "$T/ts.msg" -s "$T/ts.sig" -f "$T/ts.pcrs" -u "$T/k.pem" -o "$T/ts.json"
assert_ne "$(stat -c %s "$T/tq.pcrs")" "$(stat -c %s "$T/ts.pcrs")" "serialized and values PCR files"
assert_eq "$(jq -c .pcrs "$T/tq.json")" "$(jq -c .pcrs "$T/ts.json")" "PCRs from the serialized file"
expect_exit 0 "quote ok" "$INGOT" attest verify-quote "$T/ts.json" --nonce $NONCE --ak-pub "$T/k.pem"

note "import refuses files that do not belong together, and writes nothing"
expect_exit 1 "does not verify" "$INGOT" attest import -m "$T/tq.msg" -s "$T/ts.sig" -f "$T/tq.pcrs" -u "$T/k.pem" -o "$T/x.json"
{ head -c 52 "$T/tq.pcrs"; head -c 32 /dev/zero; } >"$T/zeroed.pcrs"   # a file: a pipe is refused
expect_exit 1 "do not hash to the signed pcrDigest" "$INGOT" attest import -m "$T/tq.msg" -s "$T/tq.sig" \
	-f "$T/zeroed.pcrs" -u "$T/k.pem" -o "$T/x.json"
expect_exit 1 "$T/tq.sig: expected a TPMS_ATTEST of a quote" "$INGOT" attest import -m "$T/tq.sig" -s "$T/tq.sig" \
	-f "$T/tq.pcrs" -u "$T/k.pem" -o "$T/x.json"
head -c 83 "$T/tq.pcrs" >"$T/short.pcrs"
expect_exit 1 "expected the quoted PCRs' values (84 bytes" "$INGOT" attest import -m "$T/tq.msg" -s "$T/tq.sig" \
	-f "$T/short.pcrs" -u "$T/k.pem" -o "$T/x.json"
expect_exit 1 "expected a PEM public key or a marshalled TPM2B_PUBLIC" "$INGOT" attest import -m "$T/tq.msg" \
	-s "$T/tq.sig" -f "$T/tq.pcrs" -u "$T/tq.msg" -o "$T/x.json"
expect_exit 64 "-m MSG, -s SIG, -f PCRS, -u AK_PUB and -o FILE are required" "$INGOT" attest import -m "$T/tq.msg"
assert_no_file "$T/x.json"

note "an RSA-PSS AK made by tpm2-tools: its quote verifies, a changed byte does not"
tpm2_create -C "$T/k.prim.ctx" -G rsa2048:rsapss-sha256:null -g sha256 \
	-a "fixedtpm|fixedparent|sensitivedataorigin|userwithauth|restricted|sign" -u "$T/pss.pub" -r "$T/pss.priv" -Q
tpm2_flushcontext -t
tpm2_load -C "$T/k.prim.ctx" -u "$T/pss.pub" -r "$T/pss.priv" -c "$T/pss.ctx" -Q
tpm2_flushcontext -t
tpm2_readpublic -c "$T/pss.ctx" -o "$T/pss.tpm2b" -Q
tpm2_flushcontext -t
tpm2_readpublic -c "$T/pss.ctx" -f pem -o "$T/pss.pem" -Q
tpm2_flushcontext -t
tpm2_quote -c "$T/pss.ctx" -l sha256:0,15 -q $NONCE -m "$T/pq.msg" -s "$T/pq.sig" -o "$T/pq.pcrs" -g sha256 \
	--scheme rsapss -Q
tpm2_flushcontext -t
assert_eq "0016" "$(xxd -p -l 2 "$T/pq.sig")" "tpm2_quote's signature scheme (TPM2_ALG_RSAPSS)"
# tpm2_checkquote 5.4 verifies RSA signatures as PKCS#1 v1.5 only: openssl
# is the independent check that this is a PSS signature over the message
# (TPMT_SIGNATURE: sigAlg, hash, size, then the signature bytes).
tail -c +7 "$T/pq.sig" >"$T/pq.raw"
openssl dgst -sha256 -verify "$T/pss.pem" -sigopt rsa_padding_mode:pss -sigopt rsa_pss_saltlen:auto \
	-signature "$T/pq.raw" "$T/pq.msg" >/dev/null || fail "openssl refused the RSA-PSS quote"
"$INGOT" attest import -m "$T/pq.msg" -s "$T/pq.sig" -f "$T/pq.pcrs" -u "$T/pss.tpm2b" -o "$T/pq.json"
expect_exit 0 "quote ok: nonce $NONCE" "$INGOT" attest verify-quote "$T/pq.json" --nonce $NONCE --ak-pub "$T/pss.pem"
flip_signature_byte "$T/pq.json"
expect_exit 2 "bad-signature" "$INGOT" attest verify-quote "$T/pq.json.bad" --nonce $NONCE --ak-pub "$T/pss.pem"
echo ok
