#!/bin/bash
# Interoperability with openssl(1), which nobody here wrote:
#  - `ingot keys id` equals sha256 of `openssl pkey -outform DER`;
#  - our Ed25519 and ECDSA P-256 envelope signatures verify with
#    `openssl pkeyutl -verify` over PAE bytes rebuilt here with printf;
#  - signatures made by `openssl pkeyutl -sign` with keys made by
#    `openssl genpkey`, inserted into an envelope, verify in ingot;
#  - Ed25519 envelopes are byte-identical across runs;
#  - one P-256 key written by `openssl ec` as compressed point or with
#    explicit curve parameters is still one key: one id, one keyring
#    entry, one signer (it used to meet threshold 2 alone);
#  - envelopes as other DSSE signers write them verify: ECDSA signatures as
#    raw r||s (IEEE P1363), URL-safe base64, keyids in another convention
#    (a hint: each trusted key still counts once); anything else stays
#    refused (mixed or unpadded base64, a keyid naming another trusted key).
. "$(dirname "$0")/lib.sh"
cd "$T" || exit 1

cat > m.json <<'JSON'
{"schema":"ingot.manifest/v1","ingot_version":"0.1.0",
 "recipe":{"name":"demo","version":"1","file":"demo.yaml","sha256":"1111111111111111111111111111111111111111111111111111111111111111"},
 "epoch":0,"serial":1,"expires":null,"tuple":null,"artifacts":[],
 "files":[{"path":"/etc","type":"dir","mode":"0755","uid":0,"gid":0}],
 "image":{"file":"demo.sqfs","sha256":"2222222222222222222222222222222222222222222222222222222222222222","size":4096,"compression":"zstd","level":0,"block_size":131072},
 "verity":{"file":"demo.verity","format":1,"hash_algorithm":"sha256","data_block_size":4096,"hash_block_size":4096,"data_blocks":1,"hash_offset":4096,"salt":"33","root_hash":"4444444444444444444444444444444444444444444444444444444444444444","uuid":"00000000-0000-0000-0000-000000000000"},
 "measurement":{"pcr":15,"event_type":13,"event_data":"ingot:v1","content_digest":"5555555555555555555555555555555555555555555555555555555555555555","digests":{},"predicted":{}}}
JSON

# field ENVELOPE EXPR: print a string from the envelope (python: json only)
field() { python3 -c 'import json,sys; e=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }

# pae ENVELOPE OUT: the DSSE PAE bytes, built with printf from the fields
pae() {
	local type payload_len
	type=$(field "$1" 'e["payloadType"]')
	field "$1" 'e["payload"]' | base64 -d > "$2.body"
	payload_len=$(stat -c %s "$2.body")
	{ printf 'DSSEv1 %d %s %d ' "${#type}" "$type" "$payload_len"; cat "$2.body"; } > "$2"
}

note "key ids"
for t in ed25519 p256; do
	"$INGOT" keys generate --type $t -o $t >/dev/null
	want=$(openssl pkey -pubin -in $t.pub -outform DER | sha256sum | cut -d' ' -f1)
	got=$("$INGOT" keys id $t.pub | cut -d' ' -f1)
	assert_eq "$want" "$got" "$t key id"
	# our private key files are plain PKCS#8 that openssl reads
	openssl pkey -in $t.key -pubout | cmp - $t.pub || fail "$t.key and $t.pub disagree for openssl"
done

note "openssl verifies ingot's signatures"
"$INGOT" sign m.json --key ed25519.key -o env.json >/dev/null
"$INGOT" sign env.json --key p256.key >/dev/null
pae env.json pae.bin
field env.json 'e["signatures"][0]["sig"]' | base64 -d > sig-ed25519
field env.json 'e["signatures"][1]["sig"]' | base64 -d > sig-p256
assert_eq "$("$INGOT" keys id ed25519.pub | cut -d' ' -f1)" "$(field env.json 'e["signatures"][0]["keyid"]')" "keyid"
openssl pkeyutl -verify -pubin -inkey ed25519.pub -rawin -in pae.bin -sigfile sig-ed25519 \
	|| fail "openssl rejects our Ed25519 signature"
openssl pkeyutl -verify -pubin -inkey p256.pub -rawin -digest sha256 -in pae.bin -sigfile sig-p256 \
	|| fail "openssl rejects our P-256 signature"
openssl dgst -sha256 -verify p256.pub -signature sig-p256 pae.bin >/dev/null \
	|| fail "openssl dgst rejects our P-256 signature"
# and the check is real: one changed byte of PAE fails
sed 's/"serial":1/"serial":2/' pae.bin > pae-bad.bin
cmp -s pae.bin pae-bad.bin && fail "tampering the PAE changed nothing"
if openssl pkeyutl -verify -pubin -inkey ed25519.pub -rawin -in pae-bad.bin -sigfile sig-ed25519 >/dev/null 2>&1; then
	fail "openssl accepted a tampered PAE"
fi

note "ingot verifies openssl's signatures"
openssl genpkey -algorithm ed25519 -out o-ed.key 2>/dev/null
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out o-ec.key 2>/dev/null
openssl pkey -in o-ed.key -pubout -out o-ed.pub
openssl pkey -in o-ec.key -pubout -out o-ec.pub
"$INGOT" keys keyring add ring.json o-ed.pub --name openssl-ed >/dev/null
"$INGOT" keys keyring add ring.json o-ec.pub --name openssl-ec --threshold 2 >/dev/null
openssl pkeyutl -sign -inkey o-ed.key -rawin -in pae.bin -out o-sig-ed
openssl pkeyutl -sign -inkey o-ec.key -rawin -digest sha256 -in pae.bin -out o-sig-ec
python3 - env.json o-env.json "$(base64 -w0 o-sig-ed)" "$(base64 -w0 o-sig-ec)" \
	"$(openssl pkey -pubin -in o-ed.pub -outform DER | sha256sum | cut -d' ' -f1)" <<'PY'
import json, sys
e = json.load(open(sys.argv[1]))
e["signatures"] = [{"keyid": sys.argv[5], "sig": sys.argv[3]}, {"sig": sys.argv[4]}]
json.dump(e, open(sys.argv[2], "w"))
PY
expect_exit 0 "2 of 2 required signatures (openssl-ed, openssl-ec)" \
	"$INGOT" verify-manifest o-env.json --keyring ring.json --now 0
# ingot signs with a key openssl generated (after tightening its mode)
chmod 600 o-ed.key
"$INGOT" sign m.json --key o-ed.key -o o2.json >/dev/null
expect_exit 3 "1 valid" "$INGOT" verify-manifest o2.json --keyring ring.json --now 0

note "one key in three encodings is one signer"
openssl ec -pubin -in o-ec.pub -conv_form compressed -pubout -out o-ec-comp.pub 2>/dev/null
openssl ec -pubin -in o-ec.pub -param_enc explicit -pubout -out o-ec-expl.pub 2>/dev/null
cmp -s o-ec.pub o-ec-comp.pub && fail "openssl wrote the same bytes for the compressed key"
cmp -s o-ec.pub o-ec-expl.pub && fail "openssl wrote the same bytes for the explicit key"
id_plain=$("$INGOT" keys id o-ec.pub | cut -d' ' -f1)
for f in o-ec-comp.pub o-ec-expl.pub; do
	assert_eq "$id_plain" "$("$INGOT" keys id $f | cut -d' ' -f1)" "key id of $f"
done
"$INGOT" keys keyring add one.json o-ec.pub --name plain >/dev/null
expect_exit 1 "already in the keyring" "$INGOT" keys keyring add one.json o-ec-comp.pub --name comp
expect_exit 1 "already in the keyring" "$INGOT" keys keyring add one.json o-ec-expl.pub --name expl
# A keyring written by hand (or by an older ingot) with the key twice, each
# entry carrying the id of its own encoding, and threshold 2; the envelope
# carries the one signature twice, once under each id.
comp_id=$(openssl pkey -pubin -in o-ec-comp.pub -outform DER | sha256sum | cut -d' ' -f1)
python3 - env.json twice-env.json twice-ring.json "$(base64 -w0 o-sig-ec)" "$id_plain" "$comp_id" 	o-ec.pub o-ec-comp.pub <<'PY2'
import json, sys
env, out_env, out_ring, sig, id1, id2, pem1, pem2 = sys.argv[1:]
e = json.load(open(env))
e["signatures"] = [{"keyid": id1, "sig": sig}, {"keyid": id2, "sig": sig}]
json.dump(e, open(out_env, "w"))
ring = {"keys": [{"name": "plain", "keyid": id1, "public_key": open(pem1).read()},
                 {"name": "comp", "keyid": id2, "public_key": open(pem2).read()}],
        "threshold": 2}
json.dump(ring, open(out_ring, "w"))
PY2
expect_exit 2 "keys[1]: duplicate of keys[0] (same key)" \
	"$INGOT" verify-manifest twice-env.json --keyring twice-ring.json --now 0
# With an honest keyring (the key once, another key beside it), the doubled
# signature still counts once.
"$INGOT" keys keyring add one.json o-ed.pub --name other --threshold 2 >/dev/null
expect_exit 3 "1 valid from distinct trusted keys, threshold 2" \
	"$INGOT" verify-manifest twice-env.json --keyring one.json --now 0

note "envelopes from other DSSE signers"
"$INGOT" keys keyring add ring-ec.json o-ec.pub --name openssl-ec >/dev/null
ed_id=$(openssl pkey -pubin -in o-ed.pub -outform DER | sha256sum | cut -d' ' -f1)
# foreign OUT SIGFILE ENCODING KEYID [KEYID2]: env.json's payload and the DER
# signature SIGFILE re-encoded: ENCODING is der-std, raw-url, raw-url-nopad,
# raw-mixed or raw63; one signature per KEYID.
foreign() {
	python3 - env.json "$@" <<'PY2'
import base64, json, sys
env, out, sigfile, enc, *kids = sys.argv[1:]
der = open(sigfile, "rb").read()
assert der[0] == 0x30 and der[2] == 0x02
rl = der[3]; r = der[4:4 + rl]
assert der[4 + rl] == 0x02
s = der[6 + rl:6 + rl + der[5 + rl]]
raw = r.lstrip(b"\0").rjust(32, b"\0") + s.lstrip(b"\0").rjust(32, b"\0")
e = json.load(open(env))
body = base64.b64decode(e["payload"])
url = lambda b: base64.urlsafe_b64encode(b).decode()
if enc == "der-std":
    sig = base64.b64encode(der).decode()
elif enc == "raw-url":
    sig = url(raw)
    e["payload"] = url(body)
elif enc == "raw-url-nopad":
    sig = url(raw).rstrip("=")
elif enc == "raw-mixed":
    sig = "+_" + url(raw)[2:]
elif enc == "raw63":
    sig = url(raw[:63])
e["signatures"] = [{"keyid": k, "sig": sig} for k in kids]
json.dump(e, open(out, "w"))
PY2
}
verify_ec() { "$INGOT" verify-manifest "$1" --keyring "${2:-ring-ec.json}" --now 0; }
# A signature whose URL-safe base64 has a '-' or '_' (about 94 % do; the
# payload, ASCII JSON, may have none), so the URL-safe alphabet is tested.
urlsafe() { python3 -c 'import json,sys; e=json.load(open(sys.argv[1]))
sys.exit(not set("-_") & set(e["signatures"][0]["sig"]))' "$1"; }
for _ in $(seq 40); do
	openssl pkeyutl -sign -inkey o-ec.key -rawin -digest sha256 -in pae.bin -out o-sig-ec
	foreign f1.json o-sig-ec raw-url "SHA256:openssl-ec-2026"
	urlsafe f1.json && break
done
urlsafe f1.json || fail "no URL-safe character in 40 signatures' base64"
expect_exit 0 "1 of 1 required signatures (openssl-ec)" verify_ec f1.json
foreign f2.json o-sig-ec raw-url ""
expect_exit 0 "1 of 1 required signatures (openssl-ec)" verify_ec f2.json
foreign f3.json o-sig-ec der-std "projects/x/keys/ec/1"
expect_exit 0 "1 of 1 required signatures (openssl-ec)" verify_ec f3.json
# ingot sign sees that the key already signed, whatever keyid it used
chmod 600 o-ec.key
expect_exit 1 "already signed by key" "$INGOT" sign f1.json --key o-ec.key
# one key under two foreign keyids is still one signer (threshold 2: o-ed, o-ec)
foreign f4.json o-sig-ec raw-url "kid-1" "kid-2"
expect_exit 3 "duplicate signature by openssl-ec, counted once" verify_ec f4.json ring.json
# strict otherwise
foreign f5.json o-sig-ec raw-url-nopad "kid"
expect_exit 3 "sig is not base64" verify_ec f5.json
foreign f6.json o-sig-ec raw-mixed "kid"
expect_exit 3 "sig is not base64" verify_ec f6.json
foreign f7.json o-sig-ec raw63 "kid"
expect_exit 3 "no trusted key verifies it" verify_ec f7.json
# a keyid that names a trusted key is binding: no fallback to other keys
foreign f8.json o-sig-ec raw-url "$ed_id"
expect_exit 3 "invalid signature by openssl-ed" verify_ec f8.json ring.json

note "determinism"
"$INGOT" sign m.json --key ed25519.key -o d1.json >/dev/null
"$INGOT" sign m.json --key ed25519.key -o d2.json >/dev/null
cmp d1.json d2.json || fail "Ed25519 envelopes differ between runs"
echo "openssl interop ok"
