#!/bin/bash
# The EK CA allow-list (ek-ca, docs/verifier.md "Enrolment"): a real
# `ingot serve` and two swtpms whose EK certificates come from two local
# CAs, both in enrolment-ca, one of them in ek-ca.  The TPM whose EK
# certificate chains to ek-ca is approved when it proves its AK, without
# the operator's token; the other is proven and waits for the token (the
# answer says why).  Refused: an expired EK certificate from the allowed
# CA (at the request), and one over another key than the TPM's EK (the
# allowed CA's, so challenged, but the TPM cannot activate it).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/swtpm.sh"
. "$(dirname "$0")/serve-lib.sh"

E() { "$INGOT" attest enroll "$@"; }
swtpm_manufacture a "$T/ca1"
swtpm_manufacture b "$T/ca2"
cat "$T/ca1/bundle.pem" "$T/ca2/bundle.pem" >"$T/both.pem"

serve_fixture
note "ek-ca is part of enrolment over the API"
serve_config "ek-ca = $T/ca1/bundle.pem"
expect_exit 1 "enrolment-ca: expected it to be set" "$INGOT" serve --config serve.conf --check
serve_config "enrolment-ca = $T/both.pem" "enrolment-key = k.key" "ek-ca = $T/ca1/bundle.pem"
serve_start
status_of() { db "SELECT status FROM enrolments WHERE id = '$1'"; }

note "TPM a, its EK certificate from the allowed CA: approved without the token"
swtpm_start a
"$INGOT" attest ak create -o "$T/ak-a" >/dev/null
"$INGOT" attest ak create -o "$T/ak-x" >/dev/null
expect_exit 0 "approved by ek-ca" E --verifier "$URL" --node node-a --ak "$T/ak-a"
id=$(sed -n 's/^enrolment \([0-9a-f]*\): .*/\1/p' <<<"$OUT")
assert_eq 3 "$(status_of "$id")" "status after the answer (approved)"
assert_file enrolments/node-a.json
expect_exit 0 "enrolment ok: node node-a" E check enrolments/node-a.json --keyring keyring.json
printf '{"node":"node-a"}' >nreq-a.json
expect_http 200 '"nonce"' POST /v1/nonce nreq-a.json

note "an expired EK certificate from the allowed CA: refused at the request"
E request --node node-x --ak "$T/ak-x" -o req-x.json
jq -r .ek_certificate req-x.json | base64 -d >ek-a.der
openssl x509 -inform DER -in ek-a.der -pubkey -noout >ek-a.pub
mkdir ca && touch ca/index.txt && echo 01 >ca/serial
cat >ca.cnf <<CNF
[ca]
default_ca = c
[c]
database = ca/index.txt
new_certs_dir = ca
serial = ca/serial
default_md = sha256
policy = p
unique_subject = no
[p]
commonName = optional
CNF
openssl genrsa -out other.pem 2048 2>/dev/null
openssl req -new -key other.pem -subj /CN=ek -out ek.csr
openssl ca -batch -config ca.cnf -cert "$T/ca1/issuercert.pem" -keyfile "$T/ca1/signkey.pem" -in ek.csr \
	-startdate 20200101000000Z -enddate 20210101000000Z -notext -out expired.pem 2>/dev/null
jq --arg c "$(openssl x509 -in expired.pem -outform DER | base64 -w0)" '.ek_certificate = $c' req-x.json >req-exp.json
expect_http 403 'certificate has expired' POST /v1/enrolments req-exp.json
assert_eq 0 "$(db "SELECT count(*) FROM enrolments WHERE node = 'node-x'")" "enrolments stored for an expired EK certificate"

note "a certificate from the allowed CA over another key than the TPM's EK: challenged, never activated"
openssl ca -batch -config ca.cnf -cert "$T/ca1/issuercert.pem" -keyfile "$T/ca1/signkey.pem" -in ek.csr \
	-days 30 -notext -out wrong.pem 2>/dev/null
jq --arg c "$(openssl x509 -in wrong.pem -outform DER | base64 -w0)" '.ek_certificate = $c' req-x.json >req-wrong.json
expect_http 200 '"credential_blob"' POST /v1/enrolments req-wrong.json
cp resp.out chal-w.json
wid=$(jq -r .id chal-w.json)
expect_exit 2 "" E answer chal-w.json --ak "$T/ak-x" -o ans-w.json
assert_eq 1 "$(status_of "$wid")" "status after a certificate over another EK (pending)"
assert_no_file enrolments/node-x.json
swtpm_stop

note "TPM b, its EK certificate from the other CA: proven, the token still needed"
swtpm_start b
"$INGOT" attest ak create -o "$T/ak-b" >/dev/null
expect_exit 0 "awaiting the operator's approval (its EK certificate does not chain to ek-ca)" \
	E --verifier "$URL" --node node-b --ak "$T/ak-b"
bid=$(sed -n 's/^enrolment \([0-9a-f]*\): .*/\1/p' <<<"$OUT")
assert_eq 2 "$(status_of "$bid")" "status after the answer (proven)"
assert_no_file enrolments/node-b.json
printf '{"node":"node-b"}' >nreq-b.json
expect_http 404 'not enrolled' POST /v1/nonce nreq-b.json
expect_exit 0 "enrolment $bid approved: node node-b" E approve "$bid" --verifier "$URL" --token-file token
assert_file enrolments/node-b.json
serve_stop
echo "ok"
