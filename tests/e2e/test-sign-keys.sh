#!/bin/bash
# ingot keys: generated files and modes, no private material on stdout,
# no overwrite, passphrases (fd and environment, never argv), key files
# readable by group/other refused, keyring add/list and their errors.
. "$(dirname "$0")/lib.sh"
cd "$T" || exit 1
umask 022
unset INGOT_KEY_PASSPHRASE

cat > m.json <<'JSON'
{"schema":"ingot.manifest/v1","ingot_version":"0.1.0",
 "recipe":{"name":"demo","version":"1","file":"demo.yaml","sha256":"1111111111111111111111111111111111111111111111111111111111111111"},
 "epoch":0,"serial":1,"expires":null,"tuple":null,"artifacts":[],"files":[],
 "image":{"file":"demo.sqfs","sha256":"2222222222222222222222222222222222222222222222222222222222222222","size":4096,"compression":"zstd","level":0,"block_size":131072},
 "verity":{"file":"demo.verity","format":1,"hash_algorithm":"sha256","data_block_size":4096,"hash_block_size":4096,"data_blocks":1,"hash_offset":4096,"salt":"33","root_hash":"4444444444444444444444444444444444444444444444444444444444444444","uuid":"00000000-0000-0000-0000-000000000000"},
 "measurement":{"pcr":15,"event_type":13,"event_data":"ingot:v1","content_digest":"5555555555555555555555555555555555555555555555555555555555555555","digests":{},"predicted":{}}}
JSON

note "generate"
expect_exit 0 "(ed25519)" "$INGOT" keys generate -o k1
assert_eq "$(stat -c %a k1.key)" 600 "private key mode"
assert_eq "$(stat -c %a k1.pub)" 644 "public key mode"
case "$OUT" in *PRIVATE*|*BEGIN*) fail "generate printed key material: $OUT" ;; esac
head -1 k1.key | grep -q 'BEGIN PRIVATE KEY' || fail "k1.key is not PKCS#8 PEM"
openssl pkey -in k1.key -noout || fail "openssl cannot read k1.key"
before=$(sha256 k1.key)
expect_exit 1 "already exists" "$INGOT" keys generate -o k1
assert_eq "$before" "$(sha256 k1.key)" "k1.key after refused overwrite"
expect_exit 0 "(p256)" "$INGOT" keys generate --type p256 -o k2
expect_exit 64 "--type" "$INGOT" keys generate --type rsa -o k3
expect_exit 64 "-o PREFIX" "$INGOT" keys generate
assert_no_file k3.key

note "passphrase"
echo 'open sesame' > pass.txt
expect_exit 0 "" "$INGOT" keys generate -o enc --passphrase-fd 3 3<pass.txt
head -1 enc.key | grep -q 'BEGIN ENCRYPTED PRIVATE KEY' || fail "enc.key not encrypted"
openssl pkey -in enc.key -passin pass:'open sesame' -noout || fail "openssl cannot decrypt enc.key"
expect_exit 1 "no passphrase given" "$INGOT" sign m.json --key enc.key -o e.json
echo 'wrong' > wrong.txt
expect_exit 1 "wrong passphrase" "$INGOT" sign m.json --key enc.key -o e.json --passphrase-fd 3 3<wrong.txt
assert_no_file e.json
expect_exit 0 "signed by" "$INGOT" sign m.json --key enc.key -o e.json --passphrase-fd 3 3<pass.txt
rm e.json
INGOT_KEY_PASSPHRASE='open sesame' expect_exit 0 "signed by" "$INGOT" sign m.json --key enc.key -o e.json

note "permissions"
for mode in 640 604 644 660 666; do
	cp k1.key loose.key && chmod $mode loose.key
	expect_exit 1 "mode 0$mode gives group/other access" "$INGOT" sign m.json --key loose.key -o l.json
	assert_no_file l.json
done
chmod 400 loose.key
expect_exit 0 "signed by" "$INGOT" sign m.json --key loose.key -o l.json
chmod 600 m.json
expect_exit 1 "expected a PEM private key" "$INGOT" sign m.json --key m.json -o l2.json
expect_exit 1 "cannot open private key" "$INGOT" sign m.json --key nope.key

note "id"
expect_exit 0 "k1.pub (ed25519)" "$INGOT" keys id k1.pub k2.pub
assert_contains "$OUT" "k2.pub (p256)"
expect_exit 1 "expected a PEM public key" "$INGOT" keys id m.json
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:1024 2>/dev/null | openssl pkey -pubout > rsa.pub
expect_exit 1 "expected an Ed25519 or ECDSA P-256 key, got RSA" "$INGOT" keys id rsa.pub

note "keyring"
expect_exit 0 "added release-1 to ring.json" "$INGOT" keys keyring add ring.json k1.pub --name release-1
expect_exit 1 "already in the keyring" "$INGOT" keys keyring add ring.json k1.pub --name again
expect_exit 1 "already in the keyring" "$INGOT" keys keyring add ring.json k2.pub --name release-1
expect_exit 1 "--threshold: expected 1..2" "$INGOT" keys keyring add ring.json k2.pub --name r2 --threshold 3
expect_exit 1 "got RSA" "$INGOT" keys keyring add ring.json rsa.pub --name rsa
expect_exit 0 "added" "$INGOT" keys keyring add ring.json k2.pub --name release-2 --threshold 2
expect_exit 0 "threshold 2 of 2" "$INGOT" keys keyring list ring.json
assert_contains "$OUT" "$("$INGOT" keys id k2.pub | cut -d' ' -f1)  p256     release-2"
expect_exit 64 "--name" "$INGOT" keys keyring add ring.json k2.pub
expect_exit 64 "--threshold" "$INGOT" keys keyring add ring.json k2.pub --name x --threshold 0
python3 -c 'import json; r = json.load(open("ring.json")); r["keys"][0]["keyid"] = "0" * 64; json.dump(r, open("forged.json", "w"))'
expect_exit 1 "keys[0]: keyid: the public key's id is" "$INGOT" keys keyring list forged.json

note "help and usage"
expect_exit 0 "SYNOPSIS" "$INGOT" keys --help
assert_contains "$OUT" "EXIT STATUS"
expect_exit 0 "EXAMPLES" "$INGOT" keys generate --help
expect_exit 64 "unknown subcommand" "$INGOT" keys frobnicate
expect_exit 64 "subcommand" "$INGOT" keys
echo "keys ok"
