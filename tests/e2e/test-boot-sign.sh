#!/bin/bash
# Secure Boot signing of the UKI (recipe boot.secure-boot): sbverify
# checks the signature with the certificate and refuses another one; the
# signed bytes are reproducible; the Authenticode digest (PCR 4) is the
# unsigned image's; the manifest records the signer certificate's digest;
# bad keys and certificates are refused with nothing written.  OVMF
# actually running it (and refusing the unsigned one) is in make boot-test.
. "$(dirname "$0")/lib.sh"
STUB=/usr/lib/systemd/boot/efi/linuxx64.efi.stub
INIT=$BUILD_DIR/ingot-init
[ -f "$STUB" ] || skip "systemd-boot-efi missing"
command -v sbverify >/dev/null || skip "sbsigntool missing"
[ -x "$INIT" ] || fail "$INIT not built"

openssl req -x509 -newkey rsa:2048 -nodes -keyout "$T/db.key" -out "$T/db.pem" -subj /CN=ingot-test-db -days 30 2>/dev/null
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$T/other.key" -out "$T/other.pem" -subj /CN=other -days 30 2>/dev/null
recipe() { # FILE [KEY CERT [KEY_SHA]]
	cat > "$1" <<YAML
name: uki-test
version: "1"
epoch: 1700000000
files:
  - {path: /etc/hello, content: "hello\n"}
boot:
  kernel: {source: $STUB, sha256: $(sha256 "$STUB")}
  stub: {source: $STUB, sha256: $(sha256 "$STUB")}
  init: {source: $INIT, sha256: $(sha256 "$INIT")}
  cmdline: "console=ttyS0"
YAML
	[ -z "${2:-}" ] || cat >> "$1" <<YAML
  secure-boot:
    key: {source: $2, sha256: ${4:-$(sha256 "$2")}}
    cert: {source: $3, sha256: $(sha256 "$3")}
YAML
}
recipe "$T/plain.yaml"
recipe "$T/signed.yaml" "$T/db.key" "$T/db.pem"
"$INGOT" build "$T/plain.yaml" -o "$T/plain" --store "$T/store" --no-lint --quiet
"$INGOT" build "$T/signed.yaml" -o "$T/a" --store "$T/store" --no-lint --quiet
"$INGOT" build "$T/signed.yaml" -o "$T/b" --store "$T/store2" --no-lint --quiet
EFI=$T/a/uki-test.efi
M=$T/a/uki-test.manifest.json

note "sbverify: the signature verifies with the db certificate, not with another"
sbverify --cert "$T/db.pem" "$EFI" >"$T/sbv" 2>&1 || fail "sbverify --cert: $(cat "$T/sbv")"
assert_contains "$(cat "$T/sbv")" "Signature verification OK" "sbverify"
if sbverify --cert "$T/other.pem" "$EFI" >"$T/sbv2" 2>&1; then fail "sbverify accepted another certificate"; fi
assert_contains "$(cat "$T/sbv2")" "Signature verification failed" "sbverify with another certificate"
sbverify --list "$EFI" >"$T/list" 2>&1
assert_contains "$(cat "$T/list")" "image signature issuers:
 - /CN=ingot-test-db" "sbverify --list names the signer"

note "reproducible, same Authenticode digest as unsigned, manifest records the signer"
cmp "$EFI" "$T/b/uki-test.efi" || fail "two signed builds gave different bytes"
# The signature's digest, and sbsign's over the image with it removed,
# are the manifest's Authenticode digest (what firmware measures).
p7digest() { openssl asn1parse -inform DER -in "$1" | grep -m1 'l=  32 prim: OCTET STRING' | sed 's/.*://' | tr A-F a-f; }
sbattach --detach "$T/ours.p7" "$EFI" >/dev/null 2>&1 || fail "sbattach --detach"
assert_eq "$(jq -r .boot.uki.authenticode_sha256 "$M")" "$(p7digest "$T/ours.p7")" "digest in our signature"
cp "$EFI" "$T/stripped.efi" && sbattach --remove "$T/stripped.efi" >/dev/null 2>&1 || fail "sbattach --remove"
sbsign --key "$T/db.key" --cert "$T/db.pem" --detached --output "$T/theirs.p7" "$T/stripped.efi" >/dev/null 2>&1
assert_eq "$(jq -r .boot.uki.authenticode_sha256 "$M")" "$(p7digest "$T/theirs.p7")" "sbsign's digest of the image unsigned"
assert_eq "$(sha256 "$EFI")" "$(jq -r .boot.uki.sha256 "$M")" "boot.uki.sha256 is the signed file's"
assert_eq "$(stat -c %s "$EFI")" "$(jq -r .boot.uki.size "$M")" "boot.uki.size is the signed file's"
assert_eq "$(openssl x509 -in "$T/db.pem" -outform DER | sha256sum | cut -d' ' -f1)" \
	"$(jq -r .boot.secure_boot.signer_cert_sha256 "$M")" "boot.secure_boot.signer_cert_sha256"
assert_eq "null" "$(jq -r .boot.secure_boot "$T/plain/uki-test.manifest.json")" "no secure_boot member unsigned"
/usr/bin/python3 - "$EFI" <<'PY' || fail "python3-pefile: checksum of the signed image"
import pefile, sys
p = pefile.PE(sys.argv[1])
assert p.OPTIONAL_HEADER.CheckSum == p.generate_checksum(), 'checksum'
PY

note "bad signing inputs: one line naming the field, nothing written"
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$T/ec.key" 2>/dev/null
openssl req -x509 -key "$T/ec.key" -out "$T/ec.pem" -subj /CN=ec -days 30 2>/dev/null
openssl pkey -in "$T/db.key" -aes256 -passout pass:x -out "$T/enc.key" 2>/dev/null
recipe "$T/bad1.yaml" "$T/ec.key" "$T/ec.pem"
expect_exit 1 "boot.secure-boot: key: expected an RSA key" "$INGOT" build "$T/bad1.yaml" -o "$T/bad" --store "$T/store" --no-lint
recipe "$T/bad2.yaml" "$T/db.key" "$T/other.pem"
expect_exit 1 "boot.secure-boot: cert: expected the certificate of key" "$INGOT" build "$T/bad2.yaml" -o "$T/bad" --store "$T/store" --no-lint
recipe "$T/bad3.yaml" "$T/enc.key" "$T/db.pem"
expect_exit 1 "boot.secure-boot: key: expected an unencrypted PEM private key" "$INGOT" build "$T/bad3.yaml" -o "$T/bad" --store "$T/store" --no-lint </dev/null
recipe "$T/bad4.yaml" "$T/db.key" "$T/db.pem" 0000000000000000000000000000000000000000000000000000000000000000
expect_exit 1 "boot.secure-boot.key: $T/db.key: expected sha256 0000" "$INGOT" build "$T/bad4.yaml" -o "$T/bad" --store "$T/store" --no-lint
assert_no_file "$T/bad/uki-test.efi"
assert_no_file "$T/bad/uki-test.manifest.json"
printf 'name: x\nversion: "1"\nepoch: 1\nfiles: []\nboot:\n  kernel: {source: %s, sha256: %s}\n  stub: {source: %s, sha256: %s}\n  init: {source: %s, sha256: %s}\n  secure-boot: {key: {source: k}}\n' \
	"$STUB" "$(sha256 "$STUB")" "$STUB" "$(sha256 "$STUB")" "$INIT" "$(sha256 "$INIT")" > "$T/bad5.yaml"
expect_exit 1 "boot.secure-boot.key: missing" "$INGOT" build "$T/bad5.yaml" -o "$T/bad" --store "$T/store" --no-lint
echo "PASS"
