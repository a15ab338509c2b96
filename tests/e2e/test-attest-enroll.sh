#!/bin/bash
# AK enrolment against swtpm with an EK certificate from a local CA
# (swtpm_setup --create-ek-cert, swtpm_localca): a genuine TPM's AK is
# enrolled and the record names the AK quotes are signed by; refused are
# an EK certificate from another CA, an AK with the wrong attributes, an
# AK of another TPM (activation fails), a replayed answer, an expired
# challenge, and records signed by an unknown key or altered.  The node's
# ActivateCredential is cross-checked against tpm2_makecredential's
# software MakeCredential.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/swtpm.sh"

E() { "$INGOT" attest enroll "$@"; }
swtpm_manufacture a "$T/ca1"
swtpm_manufacture b "$T/ca2"
"$INGOT" keys generate -o "$T/verifier" >/dev/null
"$INGOT" keys generate -o "$T/other" >/dev/null
"$INGOT" keys keyring add "$T/keyring.json" "$T/verifier.pub" --name verifier >/dev/null
CA=$T/ca1/bundle.pem
ST=$T/state

note "TPM b (other CA): its AK and request"
swtpm_start b
"$INGOT" attest ak create -o "$T/ak-b" >/dev/null
E request --node node-b --ak "$T/ak-b" -o "$T/req-b.json"
swtpm_stop

swtpm_start a
"$INGOT" attest ak create -o "$T/ak-a" >/dev/null

note "a genuine TPM's AK is enrolled"
E request --node node-a --ak "$T/ak-a" -o "$T/req-a.json"
expect_exit 0 "challenge " E challenge "$T/req-a.json" --ca "$CA" --state "$ST" -o "$T/chal.json"
id=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["id"])' "$T/chal.json")
assert_file "$ST/$id.json"
[ "$(stat -c %a "$ST/$id.json")" = 600 ] || fail "challenge state is not mode 0600"
E answer "$T/chal.json" --ak "$T/ak-a" -o "$T/ans.json"
expect_exit 0 "enrolled node node-a: AK " \
	E finish "$T/ans.json" --state "$ST" --key "$T/verifier.key" -o "$T/rec.dsse.json"
assert_file "$ST/$id.used"
assert_no_file "$ST/$id.json"
expect_exit 0 "enrolment ok: node node-a" E check "$T/rec.dsse.json" --keyring "$T/keyring.json"
# The record's AK id is the id a quote by that AK reports.
nonce=$(openssl rand -hex 16)
"$INGOT" attest quote --nonce "$nonce" --pcrs sha256:15 --ak "$T/ak-a" -o "$T/q.json" >/dev/null
qid=$("$INGOT" attest verify-quote "$T/q.json" --nonce "$nonce" --ak-pub "$T/ak-a/ak.pub.pem" |
	sed -n 's/.* ak \([0-9a-f]*\)$/\1/p')
assert_eq 64 "${#qid}" "quote AK id"
assert_contains "$OUT" "AK $qid" "record AK id"
# The EK certificate digest is that of the TPM's NV certificate.
tpm2_nvread 0x01c00002 -o "$T/ek-a.der" 2>/dev/null || fail "tpm2_nvread of the EK certificate"
ek_sha=$(openssl x509 -inform DER -in "$T/ek-a.der" -outform DER | sha256sum | cut -d' ' -f1)
assert_contains "$OUT" "EK certificate sha256 $ek_sha" "record EK digest"

note "a replayed answer: the challenge was taken by the first finish"
expect_exit 2 "already answered" \
	E finish "$T/ans.json" --state "$ST" --key "$T/verifier.key" -o "$T/rec2.dsse.json"
assert_no_file "$T/rec2.dsse.json"

note "an expired challenge"
E challenge "$T/req-a.json" --ca "$CA" --state "$ST" --ttl 1 -o "$T/chal-ttl.json" >/dev/null
E answer "$T/chal-ttl.json" --ak "$T/ak-a" -o "$T/ans-ttl.json"
sleep 2
expect_exit 2 "expired at" \
	E finish "$T/ans-ttl.json" --state "$ST" --key "$T/verifier.key" -o "$T/rec3.dsse.json"
assert_no_file "$T/rec3.dsse.json"

note "an EK certificate from another CA"
expect_exit 2 "chains to the CA bundle" \
	E challenge "$T/req-b.json" --ca "$CA" --state "$ST" -o "$T/chal-b.json"
assert_no_file "$T/chal-b.json"
# ... which its own CA accepts.
expect_exit 0 "challenge " \
	E challenge "$T/req-b.json" --ca "$T/ca2/bundle.pem" --state "$ST" -o "$T/chal-b.json"

note "an AK with the wrong attributes"
# objectAttributes sit after size, type and nameAlg in the TPM2B_PUBLIC.
attr_req() { # OUT CLEAR_MASK SET_MASK
	python3 - "$T/req-a.json" "$1" "$2" "$3" <<'PY'
import base64, json, struct, sys
r = json.load(open(sys.argv[1]))
pub = bytearray(base64.b64decode(r["ak_public"]))
a = struct.unpack(">I", pub[6:10])[0]
a = (a & ~int(sys.argv[3], 0)) | int(sys.argv[4], 0)
pub[6:10] = struct.pack(">I", a)
r["ak_public"] = base64.b64encode(bytes(pub)).decode()
json.dump(r, open(sys.argv[2], "w"))
PY
}
attr_req "$T/req-unrestricted.json" 0x10000 0
expect_exit 2 "expected restricted set" \
	E challenge "$T/req-unrestricted.json" --ca "$CA" --state "$ST" -o "$T/c.json"
attr_req "$T/req-movable.json" 0x2 0
expect_exit 2 "expected fixedTPM set" \
	E challenge "$T/req-movable.json" --ca "$CA" --state "$ST" -o "$T/c.json"
attr_req "$T/req-decrypt.json" 0 0x20000
expect_exit 2 "expected decrypt clear" \
	E challenge "$T/req-decrypt.json" --ca "$CA" --state "$ST" -o "$T/c.json"
assert_no_file "$T/c.json"

note "an AK of another TPM: the genuine EK's certificate with b's AK"
python3 - "$T/req-a.json" "$T/req-b.json" "$T/req-mixed.json" <<'PY'
import json, sys
a, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
a["ak_public"] = b["ak_public"]
json.dump(a, open(sys.argv[3], "w"))
PY
E challenge "$T/req-mixed.json" --ca "$CA" --state "$ST" -o "$T/chal-mixed.json" >/dev/null
# TPM a holds the EK but not that AK: its own AK has another name.
expect_exit 2 "ActivateCredential refused" E answer "$T/chal-mixed.json" --ak "$T/ak-a" -o "$T/x.json"
assert_no_file "$T/x.json"
swtpm_stop
# TPM b holds the AK but not the EK.
swtpm_start b
expect_exit 2 "ActivateCredential refused" E answer "$T/chal-mixed.json" --ak "$T/ak-b" -o "$T/x.json"
swtpm_stop
# A guessed answer.
python3 - "$T/chal-mixed.json" "$T/guess.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
json.dump({"format": "ingot.enroll-answer/v1", "id": c["id"], "credential": "00" * 32},
          open(sys.argv[2], "w"))
PY
expect_exit 2 "the AK was not activated by that TPM" \
	E finish "$T/guess.json" --state "$ST" --key "$T/verifier.key" -o "$T/rec4.dsse.json"
assert_no_file "$T/rec4.dsse.json"

note "records: signed by an unknown key, altered"
"$INGOT" keys keyring add "$T/other-ring.json" "$T/other.pub" --name other >/dev/null
expect_exit 2 "threshold 1" E check "$T/rec.dsse.json" --keyring "$T/other-ring.json"
python3 - "$T/rec.dsse.json" "$T/rec-tampered.dsse.json" <<'PY'
import base64, json, sys
env = json.load(open(sys.argv[1]))
st = json.loads(base64.b64decode(env["payload"]))
st["predicate"]["node"] = "node-z"
st["subject"][0]["name"] = "node-z"
env["payload"] = base64.b64encode(json.dumps(st).encode()).decode()
json.dump(env, open(sys.argv[2], "w"))
PY
expect_exit 2 "signatures: 0 valid" E check "$T/rec-tampered.dsse.json" --keyring "$T/keyring.json"

note "cross-check: tpm2_makecredential's credential, activated by ingot"
if command -v tpm2_makecredential >/dev/null; then
	swtpm_start a
	openssl x509 -inform DER -in "$T/ek-a.der" -pubkey -noout >"$T/ek-a.pem"
	ak_name=$(python3 - "$T/req-a.json" <<'PY'
import base64, hashlib, json, sys
pub = base64.b64decode(json.load(open(sys.argv[1]))["ak_public"])
print("000b" + hashlib.sha256(pub[2:]).hexdigest())
PY
)
	openssl rand 32 >"$T/secret.bin"
	tpm2_makecredential --tcti none -G rsa -u "$T/ek-a.pem" -s "$T/secret.bin" -n "$ak_name" \
		-o "$T/mc.out" >/dev/null 2>&1 || fail "tpm2_makecredential failed"
	python3 - "$T/mc.out" "$T/chal-tools.json" <<'PY'
import base64, json, struct, sys
d = open(sys.argv[1], "rb").read()
assert d[:8] == b"\xba\xdc\xc0\xde\x00\x00\x00\x01", "tpm2_makecredential header"
n = 2 + struct.unpack(">H", d[8:10])[0]
blob, secret = d[8:8 + n], d[8 + n:]
json.dump({"format": "ingot.enroll-challenge/v1", "id": "ab" * 16,
           "expires": "2099-01-01T00:00:00Z",
           "credential_blob": base64.b64encode(blob).decode(),
           "secret": base64.b64encode(secret).decode()}, open(sys.argv[2], "w"))
PY
	E answer "$T/chal-tools.json" --ak "$T/ak-a" -o "$T/ans-tools.json"
	got=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["credential"])' "$T/ans-tools.json")
	assert_eq "$(xxd -p -c 64 "$T/secret.bin")" "$got" "credential activated from tpm2_makecredential"
	swtpm_stop
fi
echo "enrolment: ok"
