#!/bin/bash
# `ingot attest import` on hostile and unusual inputs (issue 34): an ECC
# P-384 AK made by tpm2-tools imports as TPM2B_PUBLIC and as PEM alike and
# its quote (ECDSA over sha384) verifies, as tpm2_checkquote says (P-521
# too); files that do not belong together are named; a serialized PCR
# file whose counts do not fit is refused; tpm2-tss prints nothing of its
# own (the repeated-option check is in test-cli-options.sh).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/swtpm.sh"
. "$(dirname "$0")/attest-lib.sh"
command -v tpm2_checkquote >/dev/null || skip "tpm2-tools not installed"
swtpm_start
NONCE=5eed0123456789abcdef
K=$T/p384

note "a P-384 AK made by tpm2-tools: TPM2B_PUBLIC and PEM both import, tpm2_checkquote agrees"
tpm2tools_signing_key "$K" ecc384:ecdsa-sha384:null sha384
tpm2_quote -c "$K.ctx" -l sha256:0,15 -q $NONCE -m "$T/q.msg" -s "$T/q.sig" -o "$T/q.pcrs" -g sha384 -Q
tpm2_flushcontext -t
# TPMT_SIGNATURE: sigAlg ECDSA (0x0018), hash sha384 (0x000c).
assert_eq "0018000c" "$(xxd -p -l 4 "$T/q.sig")" "tpm2_quote's signature scheme and hash"
tpm2_checkquote -u "$K.pem" -m "$T/q.msg" -s "$T/q.sig" -f "$T/q.pcrs" -g sha384 -q $NONCE >/dev/null ||
	fail "tpm2_checkquote refused the P-384 quote"
expect_exit 0 "" "$INGOT" attest import -m "$T/q.msg" -s "$T/q.sig" -f "$T/q.pcrs" -u "$K.tpm2b" -o "$T/bin.json"
assert_eq "" "$OUT" "import's output (tpm2-tss warnings included)"
"$INGOT" attest import -m "$T/q.msg" -s "$T/q.sig" -f "$T/q.pcrs" -u "$K.pem" -o "$T/pem.json"
assert_eq "$(jq -S . "$T/pem.json")" "$(jq -S . "$T/bin.json")" "the documents from TPM2B_PUBLIC and PEM"
assert_eq "$(cat "$K.pem")" "$(jq -j .ak_pub "$T/bin.json" | sed '$a\')" "ak_pub from the P-384 TPM2B_PUBLIC"
expect_exit 0 "quote ok: nonce $NONCE" "$INGOT" attest verify-quote "$T/bin.json" --nonce $NONCE --ak-pub "$K.pem"
flip_signature_byte "$T/bin.json"
expect_exit 2 "bad-signature" "$INGOT" attest verify-quote "$T/bin.json.bad" --nonce $NONCE --ak-pub "$K.pem"

note "a P-521 AK (ECDSA-SHA512): TPM2B_PUBLIC and PEM give the same document"
tpm2tools_signing_key "$T/p521" ecc521:ecdsa-sha512:null sha512
tpm2_quote -c "$T/p521.ctx" -l sha256:15 -q $NONCE -m "$T/q5.msg" -s "$T/q5.sig" -o "$T/q5.pcrs" -g sha512 -Q
tpm2_flushcontext -t
"$INGOT" attest import -m "$T/q5.msg" -s "$T/q5.sig" -f "$T/q5.pcrs" -u "$T/p521.tpm2b" -o "$T/q5-bin.json"
"$INGOT" attest import -m "$T/q5.msg" -s "$T/q5.sig" -f "$T/q5.pcrs" -u "$T/p521.pem" -o "$T/q5-pem.json"
cmp -s "$T/q5-bin.json" "$T/q5-pem.json" || fail "P-521: the documents from TPM2B_PUBLIC and PEM differ"

note "files that do not belong together: the refusal names them"
jq -r .signature "$T/bin.json.bad" | base64 -d >"$T/bad.sig"
expect_exit 1 "ingot: $T/q.msg, $T/bad.sig, $T/q.pcrs, $K.tpm2b: quote: signature: does not verify" \
	"$INGOT" attest import -m "$T/q.msg" -s "$T/bad.sig" -f "$T/q.pcrs" -u "$K.tpm2b" -o "$T/x.json"
head -c 64 /dev/zero | tr "\0" "\377" >"$T/ff.pcrs"   # sha256 PCRs 0 and 15 (all 0 here), -F values
expect_exit 1 "ingot: $T/q.msg, $T/q.sig, $T/ff.pcrs, $K.pem: quote: pcrs: the reported PCR values do not hash" \
	"$INGOT" attest import -m "$T/q.msg" -s "$T/q.sig" -f "$T/ff.pcrs" -u "$K.pem" -o "$T/x.json"

note "tpm2-tss prints nothing of its own on a message it cannot unmarshal"
# The quote's TPML_PCR_SELECTION count set to 0xffffffff (after magic,
# type, qualifiedSigner, extraData, clockInfo, firmwareVersion): tpm2-tss
# warns on stderr unless told not to.
python3 - "$T/q.msg" "$T/bad.msg" <<'PY'
import sys
m = bytearray(open(sys.argv[1], "rb").read())
o = 6
for _ in range(2):
    o += 2 + int.from_bytes(m[o:o + 2], "big")
o += 17 + 8
m[o:o + 4] = b"\xff" * 4
open(sys.argv[2], "wb").write(m)
PY
# (swtpm.sh silences tpm2-tss for tpm2-tools: not for ingot here.)
expect_exit 1 "$T/bad.msg: expected a TPMS_ATTEST of a quote" env -u TSS2_LOG "$INGOT" attest import -m "$T/bad.msg" \
	-s "$T/q.sig" -f "$T/q.pcrs" -u "$K.pem" -o "$T/x.json"
assert_eq 1 "$(printf '%s\n' "$OUT" | wc -l)" "lines on stderr ($OUT)"

note "a serialized PCR file whose counts do not fit is refused, naming the field"
# tpm2-tools' layout (little-endian): TPML_PCR_SELECTION (132 bytes,
# count first), a UINT32 count of TPML_DIGESTs, each 532 bytes (count,
# then 8 TPM2B_DIGESTs of 66 bytes).
patch_pcrs() { # OFFSET HEX-BYTES OUT
	cp "$T/q.pcrs" "$3"
	printf '%s' "$2" | xxd -r -p | dd of="$3" bs=1 seek="$1" conv=notrunc status=none
}
patch_pcrs 0 ffffffff "$T/sel.pcrs"
patch_pcrs 4 0400 "$T/hash.pcrs"
patch_pcrs 136 ffffffff "$T/list.pcrs"
patch_pcrs 136 09000000 "$T/list9.pcrs"
patch_pcrs 140 1400 "$T/size.pcrs"
for c in "sel:TPML_PCR_SELECTION count: expected 1 (the quote's selection), got 4294967295" \
	"hash:TPML_PCR_SELECTION entry 0: expected the quote's (hash 0xb" \
	"list:TPML_DIGEST 0: count: expected 1 to 2 (of the 2 quoted PCRs left), got 4294967295" \
	"list9:TPML_DIGEST 0: count: expected 1 to 2 (of the 2 quoted PCRs left), got 9" \
	"size:TPML_DIGEST 0: digest 0: expected 32 bytes (its bank's), got 20"; do
	expect_exit 1 "$T/${c%%:*}.pcrs: ${c#*:}" "$INGOT" attest import -m "$T/q.msg" -s "$T/q.sig" \
		-f "$T/${c%%:*}.pcrs" -u "$K.pem" -o "$T/x.json"
done
{ head -c 132 "$T/q.pcrs"; printf '\2\0\0\0'; tail -c +137 "$T/q.pcrs"; } >"$T/lists2.pcrs"
expect_exit 1 "TPML_DIGEST count: expected the 1 lists the file's 668 bytes hold, got 2" \
	"$INGOT" attest import -m "$T/q.msg" -s "$T/q.sig" -f "$T/lists2.pcrs" -u "$K.pem" -o "$T/x.json"
assert_no_file "$T/x.json"
echo ok
