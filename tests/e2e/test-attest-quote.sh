#!/bin/bash
# measure -> quote -> verify-quote on a private swtpm, and every way a
# quote must be refused: another nonce, a changed PCR value, another AK,
# a flipped TPMS_ATTEST byte, a reused nonce, a quote missing PCRs.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/swtpm.sh"
. "$(dirname "$0")/attest-lib.sh"
swtpm_start

make_manifest "$T/m.json" a100-pool q
N1=00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff
N2=ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100

note "AK create (ECC, owner) and quote after measure"
"$INGOT" attest ak create -o "$T/ak" >/dev/null
for f in ak.json ak.pub ak.priv ak.pub.pem; do assert_file "$T/ak/$f"; done
assert_eq 600 "$(stat -c %a "$T/ak/ak.priv")" "ak.priv mode"
cp "$T/ak/ak.pub.pem" "$T/ak1.pem"
expect_exit 1 "already exists" "$INGOT" attest ak create -o "$T/ak"
cmp -s "$T/ak/ak.pub.pem" "$T/ak1.pem" || fail "an existing AK was replaced"
openssl pkey -pubin -in "$T/ak/ak.pub.pem" -noout -text | grep -q "NIST CURVE: P-256" || fail "AK is not P-256"
"$INGOT" attest measure --manifest "$T/m.json" --log "$T/log.bin" >/dev/null
"$INGOT" attest quote --nonce $N1 --pcrs sha256:0,15+sha1:15 --ak "$T/ak" -o "$T/q.json"
assert_eq "$(json_get "$T/m.json" .measurement.predicted.sha256)" "$(json_get "$T/q.json" '.pcrs.sha256."15"')" "quoted PCR 15"
assert_eq "$N1" "$(json_get "$T/q.json" .nonce)" "nonce"

note "verify ok, with the trusted AK and with the quote's own"
expect_exit 0 "quote ok: nonce $N1" "$INGOT" attest verify-quote "$T/q.json" --nonce $N1 --ak-pub "$T/ak/ak.pub.pem"
expect_exit 0 "quote ok" "$INGOT" attest verify-quote "$T/q.json" --nonce $N1
"$INGOT" attest verify-quote "$T/q.json" --nonce $N1 --json >"$T/v.json"
assert_eq true "$(json_get "$T/v.json" .valid)" "valid"
assert_eq "$(json_get "$T/q.json" '.pcrs.sha1."15"')" "$(json_get "$T/v.json" '.pcrs.sha1."15"')" "json pcrs"
expect_exit 0 "" "$INGOT" attest eventlog "$T/log.bin" --against "$T/q.json" --nonce $N1 --ak-pub "$T/ak/ak.pub.pem"

note "different nonce"
expect_exit 2 "nonce-mismatch" "$INGOT" attest verify-quote "$T/q.json" --nonce $N2 --ak-pub "$T/ak/ak.pub.pem"
jq --arg n $N2 '.nonce = $n' "$T/q.json" >"$T/q-nonce.json"
expect_exit 2 "nonce-mismatch" "$INGOT" attest verify-quote "$T/q-nonce.json" --nonce $N2

note "changed PCR value"
jq '.pcrs.sha256."15" = "'"$(printf '%064d' 1)"'"' "$T/q.json" >"$T/q-pcr.json"
expect_exit 2 "pcr-digest-mismatch" "$INGOT" attest verify-quote "$T/q-pcr.json" --nonce $N1 --ak-pub "$T/ak/ak.pub.pem"
jq 'del(.pcrs.sha1)' "$T/q.json" >"$T/q-sel.json"
expect_exit 2 "pcr-selection-mismatch" "$INGOT" attest verify-quote "$T/q-sel.json" --nonce $N1

note "different AK"
"$INGOT" attest ak create -o "$T/ak2" >/dev/null
expect_exit 2 "wrong-ak" "$INGOT" attest verify-quote "$T/q.json" --nonce $N1 --ak-pub "$T/ak2/ak.pub.pem"
jq --rawfile k "$T/ak2/ak.pub.pem" '.ak_pub = $k' "$T/q.json" >"$T/q-ak.json"
expect_exit 2 "bad-signature" "$INGOT" attest verify-quote "$T/q-ak.json" --nonce $N1

note "flipped TPMS_ATTEST byte (each region: magic, signer, nonce, clock, PCR digest)"
len=$(json_get "$T/q.json" .attest | base64 -d | wc -c)
for off in 0 10 40 60 $((len - 1)); do
	json_get "$T/q.json" .attest | base64 -d >"$T/attest.bin"
	python3 -c 'import sys; p=sys.argv[1]; o=int(sys.argv[2]); b=bytearray(open(p,"rb").read()); b[o]^=1; open(p,"wb").write(b)' "$T/attest.bin" $off
	jq --arg a "$(base64 -w0 "$T/attest.bin")" '.attest = $a' "$T/q.json" >"$T/q-flip.json"
	rc=0; OUT=$("$INGOT" attest verify-quote "$T/q-flip.json" --nonce $N1 --ak-pub "$T/ak/ak.pub.pem" 2>&1) || rc=$?
	assert_eq 2 "$rc" "flipped byte $off exit"
	case "$OUT" in *"(bad-signature)"*|*"(malformed)"*) ;; *) fail "flipped byte $off: $OUT" ;; esac
done
jq '.signature = "AAAA"' "$T/q.json" >"$T/q-sig.json"
expect_exit 2 "malformed" "$INGOT" attest verify-quote "$T/q-sig.json" --nonce $N1
jq '.attest = "not base64!"' "$T/q.json" >"$T/q-b64.json"
expect_exit 2 "malformed" "$INGOT" attest verify-quote "$T/q-b64.json" --nonce $N1

note "nonce reuse: refused once recorded"
expect_exit 0 "quote ok" "$INGOT" attest verify-quote "$T/q.json" --nonce $N1 --seen-nonces "$T/seen"
assert_eq "$N1" "$(cat "$T/seen")" "seen-nonces file"
expect_exit 3 "already used" "$INGOT" attest verify-quote "$T/q.json" --nonce $N1 --seen-nonces "$T/seen"
"$INGOT" attest quote --nonce $N2 --pcrs sha256:15 --ak "$T/ak" -o "$T/q2.json"
expect_exit 0 "quote ok" "$INGOT" attest verify-quote "$T/q2.json" --nonce $N2 --seen-nonces "$T/seen"
assert_eq 2 "$(wc -l <"$T/seen")" "seen-nonces lines"

note "a corrupt seen-nonces file (CRLF, NUL) is refused, not read around"
printf '%s\r\n' $N1 >"$T/seen-crlf"
expect_exit 1 "seen-crlf:1:65: expected one lower-case hex nonce" \
	"$INGOT" attest verify-quote "$T/q.json" --nonce $N1 --seen-nonces "$T/seen-crlf"
assert_contains "$OUT" "CRLF"
printf '0011\0\n%s\n' $N1 >"$T/seen-nul"
cp "$T/seen-nul" "$T/seen-nul.orig"
expect_exit 1 "seen-nul:1:5:" "$INGOT" attest verify-quote "$T/q.json" --nonce $N1 --seen-nonces "$T/seen-nul"
assert_contains "$OUT" "NUL"
cmp -s "$T/seen-nul" "$T/seen-nul.orig" || fail "a refused seen-nonces file was rewritten"

note "--pcrs: the quote must cover them"
expect_exit 2 "got no sha256:7" "$INGOT" attest verify-quote "$T/q.json" --nonce $N1 --pcrs sha256:7,15

note "RSA-2048 AK in the endorsement hierarchy"
"$INGOT" attest ak create --alg rsa --hierarchy endorsement -o "$T/akr" >/dev/null
openssl pkey -pubin -in "$T/akr/ak.pub.pem" -noout -text | grep -q "2048 bit" || fail "AK is not RSA-2048"
"$INGOT" attest quote --nonce 0101010101010101 --pcrs sha256:15 --ak "$T/akr" -o "$T/qr.json"
expect_exit 0 "quote ok" "$INGOT" attest verify-quote "$T/qr.json" --nonce 0101010101010101 --ak-pub "$T/akr/ak.pub.pem"
expect_exit 2 "wrong-ak" "$INGOT" attest verify-quote "$T/qr.json" --nonce 0101010101010101 --ak-pub "$T/ak/ak.pub.pem"

note "many quotes in a row: transient objects are flushed (no 0x902)"
for i in $(seq 12); do
	"$INGOT" attest quote --nonce "$(printf '%016x' "$i")" --pcrs sha256:15 --ak "$T/ak" -o "$T/qn.json"
done

note "help: man-page sections on stdout, exit 0"
"$INGOT" attest --help >"$T/help"
for section in NAME SYNOPSIS DESCRIPTION OPTIONS "EXIT STATUS" EXAMPLES; do
	grep -q "^$section\$" "$T/help" || fail "attest --help lacks $section"
done
"$INGOT" attest quote --help | cmp -s - "$T/help" || fail "attest quote --help differs"

note "clear errors: missing AK, bad nonce, unknown bank, usage"
expect_exit 4 "no AK in" "$INGOT" attest quote --nonce 0101010101010101 --pcrs sha256:15 --ak "$T/none" -o "$T/x.json"
expect_exit 64 "nonce: expected" "$INGOT" attest quote --nonce 0 --pcrs sha256:15 --ak "$T/ak" -o "$T/x.json"
expect_exit 64 "expected a bank" "$INGOT" attest quote --nonce 0101010101010101 --pcrs md5:15 --ak "$T/ak" -o "$T/x.json"
expect_exit 64 "required" "$INGOT" attest verify-quote "$T/q.json"
expect_exit 64 "unknown subcommand" "$INGOT" attest frobnicate
expect_exit 1 "" "$INGOT" attest verify-quote "$T/nonexistent.json" --nonce 0101010101010101
assert_no_file "$T/x.json"
echo ok
