#!/bin/bash
# Enrolment over the verifier's API (docs/verifier.md "Enrolment"), a real
# `ingot serve` (SQLite) and swtpm with an EK certificate from a local CA:
# the node enrols with `ingot attest enroll --verifier`, which proves its
# TPM but admits nothing; the operator approves with the token; the
# verifier signs the record, and the node gets nonces and is judged by
# its AK without a restart (as it is when another replica approved it, or
# an operator put a record in the enrolments directory).  Refused, each with its status and no state
# change: an unknown EK CA, a second request while one is pending, a
# wrong secret, a replayed answer, an expired challenge, an approval
# without or with a wrong token or before the proof, an oversized body.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/swtpm.sh"
. "$(dirname "$0")/serve-lib.sh"

E() { "$INGOT" attest enroll "$@"; }
swtpm_manufacture a "$T/ca1"
swtpm_manufacture b "$T/ca2"

serve_fixture
note "the configuration: all of enrolment's keys, and a key the enrolment role trusts"
serve_config "enrolment-ca = $T/ca1/bundle.pem"
expect_exit 1 "enrolment-key: expected it to be set" "$INGOT" serve --config serve.conf --check
"$INGOT" keys generate -o other >/dev/null
serve_config "enrolment-ca = $T/ca1/bundle.pem" "enrolment-key = other.key"
expect_exit 1 "which it does not trust" "$INGOT" serve --config serve.conf --check
serve_config "enrolment-ca = $T/ca1/bundle.pem" "enrolment-key = k.key"
expect_exit 0 "" "$INGOT" serve --config serve.conf --check
serve_start
status_of() { db "SELECT status FROM enrolments WHERE id = '$1'"; }

note "TPM b (another CA): its request is refused, nothing stored"
swtpm_start b
"$INGOT" attest ak create -o "$T/ak-b" >/dev/null
E request --node node-b --ak "$T/ak-b" -o req-b.json
swtpm_stop
expect_http 403 'chains to the CA bundle' POST /v1/enrolments req-b.json
assert_eq 0 "$(db "SELECT count(*) FROM enrolments")" "enrolments stored after an unknown CA"

swtpm_start a
"$INGOT" attest ak create -o "$T/ak-a" >/dev/null
"$INGOT" attest ak create -o "$T/ak-c" >/dev/null

note "a node not enrolled gets no nonce"
printf '{"node":"node-a"}' >nreq.json
expect_http 404 'not enrolled' POST /v1/nonce nreq.json

note "the node enrols: proven, not admitted"
expect_exit 0 "proven; awaiting the operator's approval" \
	E --verifier "$URL" --node node-a --ak "$T/ak-a"
id=$(sed -n 's/^enrolment \([0-9a-f]*\): .*/\1/p' <<<"$OUT")
assert_eq 32 "${#id}" "enrolment id"
assert_eq 2 "$(status_of "$id")" "status after the answer (proven)"
expect_http 404 'not enrolled' POST /v1/nonce nreq.json
assert_no_file enrolments/node-a.json

note "approval needs the token"
echo '{}' >empty.json
expect_http 401 'Authorization: Bearer' POST "/v1/enrolments/$id/approve" empty.json
expect_http 403 'not the verifier' POST "/v1/enrolments/$id/approve" empty.json \
	-H 'Authorization: Bearer wrong-token-0123456789abcdef'
(umask 077 && echo "wrong-token-0123456789abcdef" >wrong.token)
expect_exit 2 "HTTP 403" E approve "$id" --verifier "$URL" --token-file wrong.token
assert_eq 2 "$(status_of "$id")" "status after refused approvals"
assert_no_file enrolments/node-a.json

note "the operator approves: a signed record, and nonces without a restart"
expect_exit 0 "enrolment $id approved: node node-a" E approve "$id" --verifier "$URL" --token-file token
assert_file enrolments/node-a.json
assert_eq 3 "$(status_of "$id")" "status after the approval"
expect_exit 0 "enrolment ok: node node-a" E check enrolments/node-a.json --keyring keyring.json
ak_id=$(sed -n 's/.*AK \([0-9a-f]*\),.*/\1/p' <<<"$OUT")
expect_http 200 '"nonce"' POST /v1/nonce nreq.json
expect_http 409 'already approved' POST "/v1/enrolments/$id/approve" empty.json \
	-H "Authorization: Bearer $(cat token)"
# Judged with the enrolled AK: the quote's AK is the record's.
"$INGOT" attest push --verifier "$URL" --node node-a --ak "$T/ak-a" --eventlog log-good.bin >push.out 2>&1 || true
jq -r '.history[0].ak_id' <(curl -sS "$URL/v1/nodes/node-a") >akid.out
assert_eq "$ak_id" "$(cat akid.out)" "the verdict's AK id"
# A second enrolment of an enrolled node is refused before its request is judged.
E request --node node-a --ak "$T/ak-c" -o req-a2.json
expect_http 409 'already enrolled' POST /v1/enrolments req-a2.json

note "step by step: one pending per node, a wrong secret, a replay, an expired challenge"
E request --node node-c --ak "$T/ak-c" -o req-c.json
expect_http 200 '"credential_blob"' POST /v1/enrolments req-c.json
cp resp.out chal-c.json
cid=$(jq -r .id chal-c.json)
expect_http 409 'pending or awaiting approval' POST /v1/enrolments req-c.json
assert_eq 1 "$(db "SELECT count(*) FROM enrolments WHERE node = 'node-c'")" "node-c's enrolments"
expect_http 409 'not proven yet' POST "/v1/enrolments/$cid/approve" empty.json \
	-H "Authorization: Bearer $(cat token)"
E answer chal-c.json --ak "$T/ak-c" -o ans-c.json
jq '.credential = ("00" * 32)' ans-c.json >ans-wrong.json
expect_http 403 'not activated by that TPM' POST "/v1/enrolments/$cid/answer" ans-wrong.json
assert_eq 1 "$(status_of "$cid")" "status after a wrong secret (pending)"
jq --arg id 0123456789abcdef0123456789abcdef '.id = $id' ans-c.json >ans-other.json
expect_http 400 'answer: id: expected' POST "/v1/enrolments/$cid/answer" ans-other.json
expect_http 404 'no enrolment' POST /v1/enrolments/0123456789abcdef0123456789abcdef/answer ans-other.json
expect_http 200 '"proven"' POST "/v1/enrolments/$cid/answer" ans-c.json
expect_http 409 'replayed answer' POST "/v1/enrolments/$cid/answer" ans-c.json
assert_eq 2 "$(status_of "$cid")" "status after a replay (proven)"

E request --node node-d --ak "$T/ak-c" -o req-d.json
expect_http 200 '"credential_blob"' POST /v1/enrolments req-d.json
cp resp.out chal-d.json
did=$(jq -r .id chal-d.json)
E answer chal-d.json --ak "$T/ak-c" -o ans-d.json
# Its expiry moved into the past, as time would.
db "UPDATE enrolments SET state = json_set(state, '\$.expires', '2000-01-01T00:00:00Z') WHERE id = '$did'"
expect_http 410 'expired at' POST "/v1/enrolments/$did/answer" ans-d.json
assert_eq 1 "$(status_of "$did")" "status after an expired answer"

note "a record another replica approved (or an operator put there) counts without a restart"
"$MKENROL" other.key node-f ak/ak-0.pub enrolments/node-f.json
printf '{"node":"node-f"}' >nreq-f.json
expect_http 404 'not enrolled' POST /v1/nonce nreq-f.json   # not the enrolment role's key
assert_contains "$(cat serve.out serve.err)" "node-f.json" "the refused record is logged"
"$MKENROL" k.key node-e ak/ak-0.pub enrolments/node-e.json
printf '{"node":"node-e"}' >nreq-e.json
expect_http 200 '"nonce"' POST /v1/nonce nreq-e.json
rm enrolments/node-f.json

note "bounded and typed"
head -c 70000 /dev/zero | tr '\0' 'x' >big.json
expect_http 413 'expected at most' POST /v1/enrolments big.json
echo '[1]' >arr.json
expect_http 400 'expected a JSON object' POST /v1/enrolments arr.json
expect_http 400 'id: expected 32' POST /v1/enrolments/XYZ/answer ans-c.json
expect_http 405 'expected POST' GET /v1/enrolments

note "the record outlives the process"
serve_stop
serve_start
expect_http 200 '"nonce"' POST /v1/nonce nreq.json
serve_stop
echo "ok"
