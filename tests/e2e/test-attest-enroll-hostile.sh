#!/bin/bash
# Hostile input to the verifier's enrolment steps (challenge, finish,
# check), no TPM needed: the request is made here from an EK certificate
# of a local CA and an AK public area marshalled by hand.  Refused are a
# --state directory or state file others can write (a planted state would
# have finish sign for an AK never challenged), a state that is a symbolic
# link or a FIFO (before the challenge is burnt), documents and records
# that are FIFOs, /dev/zero or too large, RSA AKs with a bad exponent or a
# modulus keyBits does not describe, a keyedhash "AK" (exit 2), and every
# repeated option (exit 64).
. "$(dirname "$0")/lib.sh"
command -v openssl >/dev/null || skip "no openssl"

E() { "$INGOT" attest enroll "$@"; }
umask 022
"$INGOT" keys generate -o "$T/verifier" >/dev/null
"$INGOT" keys keyring add "$T/keyring.json" "$T/verifier.pub" --name verifier >/dev/null

# A CA and an RSA-2048 EK certificate it issued.
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$T/ca.key" -out "$T/ca.pem" -days 3650 \
	-subj /CN=test-tpm-ca 2>/dev/null
openssl req -newkey rsa:2048 -nodes -keyout "$T/ek.key" -out "$T/ek.csr" -subj /CN=ek 2>/dev/null
openssl x509 -req -in "$T/ek.csr" -CA "$T/ca.pem" -CAkey "$T/ca.key" -CAcreateserial \
	-days 3650 -outform DER -out "$T/ek.der" 2>/dev/null
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$T/ak.key" 2>/dev/null
openssl pkey -in "$T/ak.key" -pubout -out "$T/ak.pub.pem"

# mkreq OUT [type=rsa|keyedhash] [exponent] [keyBits]: a request whose AK
# public area has the attestation key attributes and the AK's modulus.
mkreq() {
	python3 - "$T/ek.der" "$T/ak.key" "$@" <<'PY'
import base64, json, struct, subprocess, sys
ek, akkey, out = sys.argv[1:4]
kind = sys.argv[4] if len(sys.argv) > 4 else "rsa"
exp = int(sys.argv[5]) if len(sys.argv) > 5 else 0
bits = int(sys.argv[6]) if len(sys.argv) > 6 else 2048
txt = subprocess.run(["openssl", "pkey", "-in", akkey, "-noout", "-text"], capture_output=True,
                     text=True, check=True).stdout
hexmod = txt.split("modulus:")[1].split("publicExponent")[0]
n = bytes.fromhex("".join(hexmod.split()).replace(":", "")).lstrip(b"\0")
attrs = 0x2 | 0x10 | 0x20 | 0x40 | 0x10000 | 0x40000
if kind == "rsa":
    area = struct.pack(">HHIH", 0x0001, 0x000b, attrs, 0)
    area += struct.pack(">HHHHI", 0x0010, 0x0014, 0x000b, bits, exp)
    area += struct.pack(">H", len(n)) + n
else:   # keyedhash: scheme null, unique a digest
    area = struct.pack(">HHIH", 0x0008, 0x000b, attrs, 0) + struct.pack(">H", 0x0010)
    area += struct.pack(">H", 32) + b"\x11" * 32
pub = struct.pack(">H", len(area)) + area
json.dump({"format": "ingot.enroll-request/v1", "node": "node-a",
           "ek_certificate": base64.b64encode(open(ek, "rb").read()).decode(),
           "ak_public": base64.b64encode(pub).decode()}, open(out, "w"))
PY
}
# plant DIR ID: a state for ID as challenge writes it, for the AK above,
# sealed to the credential 32 zero bytes (the answer in $T/ans-ID.json).
plant() {
	python3 - "$T/ak.pub.pem" "$1" "$2" "$T/ans-$2.json" <<'PY'
import hashlib, json, subprocess, sys
pem, d, i, ans = sys.argv[1:5]
der = subprocess.run(["openssl", "pkey", "-pubin", "-in", pem, "-outform", "DER"],
                     capture_output=True, check=True).stdout
json.dump({"format": "ingot.enroll-state/v1", "id": i, "expires": "2099-01-01T00:00:00Z",
           "credential_sha256": hashlib.sha256(bytes(32)).hexdigest(), "node": "node-x",
           "ak_id": hashlib.sha256(der).hexdigest(), "ak_name": "000b" + "00" * 32,
           "ak_public_key": open(pem).read(), "ek_certificate_sha256": "e" * 64,
           "ca_bundle_sha256": "c" * 64}, open(f"{d}/{i}.json", "w"))
json.dump({"format": "ingot.enroll-answer/v1", "id": i, "credential": "00" * 32}, open(ans, "w"))
PY
}
ID1=11111111111111111111111111111111
ID2=22222222222222222222222222222222
ID3=33333333333333333333333333333333
ID4=44444444444444444444444444444444
ID5=55555555555555555555555555555555
fin() { E finish "$T/ans-$2.json" --state "$1" --key "$T/verifier.key" -o "$T/rec-$2.dsse.json"; }

note "the request made here is challenged"
mkreq "$T/req.json"
expect_exit 0 "challenge " E challenge "$T/req.json" --ca "$T/ca.pem" --state "$T/st" -o "$T/chal.json"
[ "$(stat -c %a "$T/st")" = 700 ] || fail "state directory is not mode 0700"

note "a state written by its owner in a private directory is signed (the trust boundary)"
plant "$T/st" $ID1
chmod 600 "$T/st/$ID1.json"
expect_exit 0 "enrolled node node-x" fin "$T/st" $ID1
expect_exit 0 "enrolment ok: node node-x" E check "$T/rec-$ID1.dsse.json" --keyring "$T/keyring.json"

note "a --state directory others can write: refused by challenge and by finish"
mkdir -m 0777 "$T/open"
chmod 0777 "$T/open"
plant "$T/open" $ID2   # what anyone could have planted there
expect_exit 2 "$T/open: enrolment state: expected a directory owned by uid" \
	fin "$T/open" $ID2
assert_no_file "$T/rec-$ID2.dsse.json"
assert_file "$T/open/$ID2.json"
expect_exit 2 "not writable by group or others" \
	E challenge "$T/req.json" --ca "$T/ca.pem" --state "$T/open" -o "$T/chal-open.json"
assert_no_file "$T/chal-open.json"
chmod 0770 "$T/open"
expect_exit 2 "mode 0770" fin "$T/open" $ID2
ln -s "$T/st" "$T/st-link"
expect_exit 1 "enrolment state: expected a directory" fin "$T/st-link" $ID2

note "a state file others can write, a symbolic link, a FIFO: refused before it is taken"
plant "$T/st" $ID2
chmod 0622 "$T/st/$ID2.json"
expect_exit 2 "$T/st/$ID2.json: expected a file owned by uid" fin "$T/st" $ID2
assert_file "$T/st/$ID2.json"
plant "$T" $ID3
ln -s "$T/$ID3.json" "$T/st/$ID3.json"
expect_exit 1 "$T/st/$ID3.json: expected a regular file, got a symbolic link" fin "$T/st" $ID3
assert_no_file "$T/rec-$ID3.dsse.json"
plant "$T/st" $ID4
rm "$T/st/$ID4.json"
mkfifo -m 0600 "$T/st/$ID4.json"
expect_exit 1 "$T/st/$ID4.json: expected a regular file, got a FIFO" timeout 10 "$INGOT" \
	attest enroll finish "$T/ans-$ID4.json" --state "$T/st" --key "$T/verifier.key" -o "$T/r.json"
[ -p "$T/st/$ID4.json" ] || fail "the FIFO state was taken (renamed) before it was checked"
assert_no_file "$T/st/$ID4.used"
head -c 70000 /dev/zero >"$T/st/$ID5.json"
chmod 600 "$T/st/$ID5.json"
plant "$T" $ID5
expect_exit 1 "expected at most 65536" fin "$T/st" $ID5

note "a state that names one AK and carries another"
plant "$T/st" $ID5
python3 - "$T/st/$ID5.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1])); s["ak_id"] = "a" * 64; json.dump(s, open(sys.argv[1], "w"))
PY
chmod 600 "$T/st/$ID5.json"
expect_exit 1 "ak_id: expected" fin "$T/st" $ID5
assert_no_file "$T/rec-$ID5.dsse.json"

note "documents and records: FIFOs, /dev/zero, too large"
mkfifo "$T/fifo"
expect_exit 1 "$T/fifo: expected a regular file, got a FIFO" \
	timeout 10 "$INGOT" attest enroll challenge "$T/fifo" --ca "$T/ca.pem" --state "$T/st" -o "$T/c.json"
expect_exit 1 "$T/fifo: expected a regular file, got a FIFO" \
	timeout 10 "$INGOT" attest enroll finish "$T/fifo" --state "$T/st" --key "$T/verifier.key" -o "$T/c.json"
expect_exit 1 "$T/fifo: expected a regular file, got a FIFO" \
	timeout 10 "$INGOT" attest enroll check "$T/fifo" --keyring "$T/keyring.json"
ln -s /dev/zero "$T/zero.dsse.json"
expect_exit 1 "$T/zero.dsse.json: expected a regular file, got a character device" \
	timeout 10 "$INGOT" attest enroll check "$T/zero.dsse.json" --keyring "$T/keyring.json"
head -c 70000 /dev/zero | tr '\0' ' ' >"$T/big.dsse.json"
cat "$T/rec-$ID1.dsse.json" >>"$T/big.dsse.json"
expect_exit 1 "expected at most 65536" E check "$T/big.dsse.json" --keyring "$T/keyring.json"
# A record behind a symbolic link to a regular file is still read.
ln -s "$T/rec-$ID1.dsse.json" "$T/rec-link.dsse.json"
expect_exit 0 "enrolment ok" E check "$T/rec-link.dsse.json" --keyring "$T/keyring.json"

note "AKs that are no sane key: refused before a challenge (exit 2)"
mkreq "$T/req-e1.json" rsa 1
expect_exit 2 "exponent: expected an odd RSA public exponent >= 3 (or 0 for 65537), got 1" \
	E challenge "$T/req-e1.json" --ca "$T/ca.pem" --state "$T/st" -o "$T/c.json"
mkreq "$T/req-e4.json" rsa 65536
expect_exit 2 "got 65536" E challenge "$T/req-e4.json" --ca "$T/ca.pem" --state "$T/st" -o "$T/c.json"
mkreq "$T/req-bits.json" rsa 0 3072
expect_exit 2 "unique.rsa: expected a 3072-bit modulus (keyBits), got 256 bytes" \
	E challenge "$T/req-bits.json" --ca "$T/ca.pem" --state "$T/st" -o "$T/c.json"
mkreq "$T/req-1024.json" rsa 0 1024
expect_exit 2 "keyBits: expected 2048, 3072 or 4096, got 1024" \
	E challenge "$T/req-1024.json" --ca "$T/ca.pem" --state "$T/st" -o "$T/c.json"
mkreq "$T/req-kh.json" keyedhash
expect_exit 2 "type: expected RSA (0x0001) or ECC (0x0023), got 0x0008" \
	E challenge "$T/req-kh.json" --ca "$T/ca.pem" --state "$T/st" -o "$T/c.json"
mkreq "$T/req-e3.json" rsa 3
expect_exit 0 "challenge " E challenge "$T/req-e3.json" --ca "$T/ca.pem" --state "$T/st" -o "$T/c.json"

note "a repeated option is a usage error"
usage() { expect_exit 64 "$1 given more than once" E "${@:2}"; }
usage --node request --node a --node b -o r.json
usage --ak request --node a --ak x --ak y -o r.json
usage --ek-cert request --node a --ek-cert x --ek-cert y -o r.json
usage --tcti request --node a --tcti x --tcti y -o r.json
usage --output request --node a -o x -o y
usage --ca challenge "$T/req.json" --ca "$T/ca.pem" --ca "$T/ca.pem" --state "$T/st" -o "$T/c.json"
usage --state challenge "$T/req.json" --ca "$T/ca.pem" --state "$T/st" --state "$T/open" -o "$T/c.json"
usage --ttl challenge "$T/req.json" --ca "$T/ca.pem" --state "$T/st" --ttl 5 --ttl 6 -o "$T/c.json"
usage --output challenge "$T/req.json" --ca "$T/ca.pem" --state "$T/st" -o "$T/c.json" --output "$T/d.json"
usage --state finish a.json --state "$T/st" --state "$T/open" --key k -o r.json
usage --key finish a.json --state "$T/st" --key k --key l -o r.json
usage --keyring check r.json --keyring a --keyring b
expect_exit 64 "finish: option --ca does not apply" E finish a.json --state s --key k -o r --ca x
expect_exit 64 "challenge: --state is required" E challenge r.json --ca x -o c.json
expect_exit 64 "--ttl: expected 1-86400 seconds" E challenge r.json --ca x --state s --ttl 0 -o c
expect_exit 64 "unknown step" E frobnicate
echo "enrolment (hostile): ok"
