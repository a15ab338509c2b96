#!/bin/bash
# Inputs of the bad-input table's enroll-* rows, made in the current
# directory without a TPM: two CAs (openssl), EK certificates they issue,
# AK public areas (TPM2B_PUBLIC, marshalled here) with good and bad
# attributes, the requests built from them, and enrolment records signed
# with openssl pkeyutl over the DSSE PAE by k.key (trusted) and other.key.
# Run by tests/e2e/test-bad-input.sh after it made k.key/other.key.
set -eu
ca() { # NAME
	openssl req -x509 -newkey rsa:2048 -nodes -keyout "$1.key" -out "$1.pem" -subj "/CN=$1" \
		-days 3650 2>/dev/null
}
ek() { # OUT CA ALG...
	local out=$1 ca=$2
	shift 2
	openssl genpkey "$@" -out "$out.key" 2>/dev/null
	openssl req -new -key "$out.key" -subj "/CN=ek" 2>/dev/null |
		openssl x509 -req -CA "$ca.pem" -CAkey "$ca.key" -set_serial 7 -days 365 \
			-outform DER -out "$out.der" 2>/dev/null
}
ca enroll-ca1
ca enroll-ca2
ek enroll-ek1 enroll-ca1 -algorithm RSA -pkeyopt rsa_keygen_bits:2048
ek enroll-ek2 enroll-ca2 -algorithm RSA -pkeyopt rsa_keygen_bits:2048
ek enroll-ek-ecc enroll-ca1 -algorithm EC -pkeyopt ec_paramgen_curve:P-256
ek enroll-ek-3072 enroll-ca1 -algorithm RSA -pkeyopt rsa_keygen_bits:3072
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out enroll-ak.key 2>/dev/null
openssl pkey -in enroll-ak.key -pubout -out enroll-ak.pem 2>/dev/null
openssl pkey -in enroll-ak.key -pubout -outform DER -out enroll-ak.der 2>/dev/null
python3 - <<'PY'
import base64, hashlib, json, struct, subprocess

spki = open("enroll-ak.der", "rb").read()
x, y = spki[-64:-32], spki[-32:]          # uncompressed P-256 point at the end

AK = 0x00050472   # fixedTPM fixedParent sensitiveDataOrigin userWithAuth noDA restricted sign
def ak_public(attrs=AK, name_alg=0x000B):
    area = struct.pack(">HHI", 0x0023, name_alg, attrs) + struct.pack(">H", 0)  # no authPolicy
    area += struct.pack(">HHHHH", 0x0010, 0x0018, 0x000B, 0x0003, 0x0010)      # ECDSA-SHA256 P-256
    area += struct.pack(">H", 32) + x + struct.pack(">H", 32) + y
    return struct.pack(">H", len(area)) + area

def b64(b):
    return base64.b64encode(b).decode()

def request(name, ek="enroll-ek1.der", node="node-1", pub=None, **over):
    r = {"format": "ingot.enroll-request/v1", "node": node,
         "ek_certificate": b64(open(ek, "rb").read()), "ak_public": b64(pub or ak_public())}
    r.update(over)
    json.dump(r, open(name, "w"))

request("enroll-good.json")
request("enroll-other-ca.json", ek="enroll-ek2.der")
request("enroll-ecc-ek.json", ek="enroll-ek-ecc.der")
request("enroll-rsa3072-ek.json", ek="enroll-ek-3072.der")
request("enroll-unrestricted.json", pub=ak_public(AK & ~0x10000))
request("enroll-not-fixedtpm.json", pub=ak_public(AK & ~0x2))
request("enroll-decrypt.json", pub=ak_public(AK | 0x20000))
request("enroll-sha1-name.json", pub=ak_public(name_alg=0x0004))
request("enroll-format.json", format="ingot.enroll-request/v0")
request("enroll-not-b64.json", ek_certificate="!!not base64!!")
request("enroll-node.json", node="../../etc")
request("enroll-ak-garbage.json", ak_public=b64(b"\x00\x10garbage"))
request("enroll-extra.json", extra="x")
json.dump({"format": "ingot.enroll-answer/v1", "id": "0" * 32, "credential": "00" * 32},
          open("enroll-answer-unknown.json", "w"))
json.dump({"format": "ingot.enroll-answer/v1", "id": "../x", "credential": "00"},
          open("enroll-answer-bad-id.json", "w"))

pem = open("enroll-ak.pem").read()
ak_id = hashlib.sha256(spki).hexdigest()
def record(name, key, ak_id=ak_id, tamper=None):
    st = {"_type": "https://in-toto.io/Statement/v1",
          "subject": [{"name": "node-1", "digest": {"sha256": ak_id}}],
          "predicateType": "https://ingot.dev/enrolment/v1",
          "predicate": {"node": "node-1", "ak_id": ak_id, "ak_name": "000b" + "0" * 64,
                        "ak_public_key": pem, "ek_certificate_sha256": "1" * 64,
                        "ca_bundle_sha256": "2" * 64, "enrolled": "2026-12-01T00:00:00Z"}}
    body = json.dumps(st, sort_keys=True, separators=(",", ":")).encode()
    t = b"application/vnd.in-toto+json"
    open("pae.bin", "wb").write(b"DSSEv1 %d %s %d %s" % (len(t), t, len(body), body))
    subprocess.run(["openssl", "pkeyutl", "-sign", "-inkey", key, "-rawin", "-in", "pae.bin",
                    "-out", "sig.bin"], check=True)
    if tamper:
        tamper(st)
        body = json.dumps(st).encode()
    env = {"payloadType": t.decode(), "payload": b64(body),
           "signatures": [{"keyid": "", "sig": b64(open("sig.bin", "rb").read())}]}
    json.dump(env, open(name, "w"))

record("enroll-rec.dsse.json", "k.key")
record("enroll-rec-other.dsse.json", "other.key")
record("enroll-rec-tampered.dsse.json", "k.key",
       tamper=lambda st: st["predicate"].update(ek_certificate_sha256="3" * 64))
record("enroll-rec-wrong-id.dsse.json", "k.key", ak_id="4" * 64)
PY
rm -f pae.bin sig.bin
