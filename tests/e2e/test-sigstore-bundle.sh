#!/bin/bash
# Sigstore bundles and in-toto v0.1, made by an independent implementation
# (@sigstore/sign, the Sigstore project's JS signer, with a local key;
# tests/sigstore/): verify-manifest accepts a bundle whose dsseEnvelope a
# keyring key signed, with either payloadType spelling and Statement v1
# or v0.1, under the same subject and threshold rules as a bare DSSE
# envelope; a tampered bundle, an untrusted key, a keyless (certificate)
# bundle and a wrong subject are refused.  The review readers (inspect)
# and the evidence readers (promote) read bundles too.
. "$(dirname "$0")/lib.sh"
command -v node >/dev/null && command -v npm >/dev/null || skip "node/npm not installed"

# npm ci into the build directory (git-ignored), once per lock file.
NM=$BUILD_DIR/sigstore-npm
if ! cmp -s "$SRC/tests/sigstore/package-lock.json" "$NM/package-lock.json" || [ ! -d "$NM/node_modules/@sigstore/sign" ]; then
	rm -rf "$NM" && mkdir -p "$NM"
	cp "$SRC/tests/sigstore/package.json" "$SRC/tests/sigstore/package-lock.json" "$NM/"
	(cd "$NM" && npm ci --no-audit --no-fund --loglevel=error >/dev/null) || fail "npm ci failed"
fi
cp "$SRC/tests/sigstore/mk-bundle.js" "$NM/"
bundle() { node "$NM/mk-bundle.js" "$@" || fail "@sigstore/sign failed"; }

note "a signed build to wrap"
cat >"$T/r.yaml" <<YAML
name: sig
version: "1"
epoch: 1700000000
files:
  - {path: /etc/hello, content: "hello\n"}
YAML
"$INGOT" keys generate -o "$T/k" >/dev/null
"$INGOT" keys generate --type p256 -o "$T/p" >/dev/null
"$INGOT" keys generate -o "$T/other" >/dev/null
"$INGOT" keys keyring add "$T/ring.json" "$T/k.pub" --name release >/dev/null
"$INGOT" keys keyring add "$T/ring.json" "$T/p.pub" --name release-p256 >/dev/null
"$INGOT" build "$T/r.yaml" -o "$T/out" --store "$T/store" --key "$T/k.key" --no-lint -q
D=$T/out/sig.manifest.dsse.json
jq -r .payload "$D" | base64 -d >"$T/st.json"
# the bundles are made in $T, away from the file list the statement binds
vm() { "$INGOT" verify-manifest "$@" --keyring "$T/ring.json" --image "$T/out/sig.sqfs" --verity "$T/out/sig.verity" \
	--file-list "$T/out/sig.manifest.json"; }

note "a bundle by @sigstore/sign verifies (Ed25519 and P-256 keys)"
bundle "$T/st.json" "$T/k.key" application/vnd.in-toto+json "$T/b.json"
assert_contains "$(jq -r .mediaType "$T/b.json")" "application/vnd.dev.sigstore.bundle" "mediaType"
assert_eq "ingot-test" "$(jq -r .verificationMaterial.publicKey.hint "$T/b.json")" "public-key material"
expect_exit 0 "signature" vm "$T/b.json"
bundle "$T/st.json" "$T/p.key" application/vnd.in-toto+json "$T/bp.json"
expect_exit 0 "" vm "$T/bp.json"

note "the other payloadType spelling and Statement v0.1 (cosign attest's)"
jq -c '._type = "https://in-toto.io/Statement/v0.1"' "$T/st.json" >"$T/st01.json"
bundle "$T/st01.json" "$T/k.key" application/vnd.in-toto.v1+json "$T/b01.json"
expect_exit 0 "" vm "$T/b01.json"
# the same payload as a bare DSSE envelope: the bundle is only a wrapper
jq .dsseEnvelope "$T/b01.json" >"$T/e01.json"
expect_exit 0 "" vm "$T/e01.json"
cp "$T/out/sig.manifest.json" "$T/"   # inspect reads it beside the bundle
expect_exit 0 "sig" "$INGOT" inspect "$T/b01.json"

note "tampered bundles are refused"
jq --arg p "$(jq -c '.predicate.serial = 99' "$T/st.json" | base64 -w0)" '.dsseEnvelope.payload = $p' \
	"$T/b.json" >"$T/t1.json"
expect_exit 3 "signatures: 0 valid" vm "$T/t1.json"
jq '.dsseEnvelope.payloadType = "application/vnd.in-toto.v1+json"' "$T/b.json" >"$T/t2.json"
expect_exit 3 "signatures: 0 valid" vm "$T/t2.json"
python3 - "$T/b.json" "$T/t3.json" <<'PY'
import base64, json, sys
b = json.load(open(sys.argv[1]))
s = bytearray(base64.b64decode(b["dsseEnvelope"]["signatures"][0]["sig"])); s[0] ^= 1
b["dsseEnvelope"]["signatures"][0]["sig"] = base64.b64encode(bytes(s)).decode()
json.dump(b, open(sys.argv[2], "w"))
PY
expect_exit 3 "signatures: 0 valid" vm "$T/t3.json"

note "the same rules as a bare envelope: trusted key, threshold, subject"
bundle "$T/st.json" "$T/other.key" application/vnd.in-toto+json "$T/u.json"
expect_exit 3 "no trusted key verifies it" vm "$T/u.json"
jq '.threshold = 2' "$T/ring.json" >"$T/ring2.json"
expect_exit 3 "1 valid from distinct trusted keys, threshold 2" \
	"$INGOT" verify-manifest "$T/b.json" --keyring "$T/ring2.json"
jq -c '.subject[0].digest.sha256 = "'"$(printf '%064d' 0)"'"' "$T/st.json" >"$T/stbad.json"
bundle "$T/stbad.json" "$T/k.key" application/vnd.in-toto+json "$T/sb.json"
expect_exit 2 "statement.subject[0].digest.sha256" vm "$T/sb.json"
jq -c '._type = "https://in-toto.io/Statement/v0.2"' "$T/st.json" >"$T/st02.json"
bundle "$T/st02.json" "$T/k.key" application/vnd.in-toto+json "$T/b02.json"
expect_exit 2 "statement._type" vm "$T/b02.json"
bundle "$T/st.json" "$T/k.key" text/plain "$T/bt.json"
expect_exit 2 "payloadType: expected" vm "$T/bt.json"

note "evidence readers: test evidence as Sigstore bundles promotes the image"
FX=$SRC/tests/fixtures/evidence
"$INGOT" keys generate -o "$T/run" >/dev/null
"$INGOT" keys generate -o "$T/prom" >/dev/null
mkdir -p "$T/rings/keyrings" "$T/ev" "$T/evb"
cp "$SRC/recipes/rings/lab.yaml" "$T/rings/"
"$INGOT" keys keyring add "$T/rings/keyrings/runners.json" "$T/run.pub" --name runner >/dev/null
"$INGOT" keys keyring add "$T/rings/keyrings/promoters.json" "$T/prom.pub" --name promoter >/dev/null
"$INGOT" evidence add --manifest "$D" --kind nccl-tests --from "$FX/all_reduce_perf-1node.txt" \
	--key "$T/run.key" -o "$T/ev/nccl.evidence.dsse.json" >/dev/null
"$INGOT" evidence add --manifest "$D" --kind dcgm-diag --level 2 --from "$FX/dcgmi-diag-r2.json" \
	--key "$T/run.key" -o "$T/ev/dcgm.evidence.dsse.json" >/dev/null
for f in nccl dcgm; do
	jq -r .payload "$T/ev/$f.evidence.dsse.json" | base64 -d >"$T/ev-$f.json"
	bundle "$T/ev-$f.json" "$T/run.key" application/vnd.in-toto+json "$T/evb/$f.evidence.dsse.json"
done
expect_exit 0 "promoted to lab" "$INGOT" promote --manifest "$D" --ring lab --evidence "$T/evb" \
	--key "$T/prom.key" --rings "$T/rings" --promotions "$T/promo" --now 1796000000
# ... and a bundle by a key the ring does not trust is not evidence
bundle "$T/ev-nccl.json" "$T/other.key" application/vnd.in-toto+json "$T/evb/nccl.evidence.dsse.json"
expect_exit 3 "nccl-tests: no evidence signed by 1 of" "$INGOT" promote --manifest "$D" --ring lab --evidence "$T/evb" \
	--key "$T/prom.key" --rings "$T/rings" --promotions "$T/promo2" --now 1796000000

note "keyless and malformed bundles: one line each, refused"
jq '.verificationMaterial = {"x509CertificateChain": {"certificates": [{"rawBytes": "AA=="}]}}' "$T/b.json" >"$T/kl.json"
expect_exit 2 "keyless (Fulcio certificate) bundle" vm "$T/kl.json"
jq '.mediaType = "application/vnd.example+json"' "$T/b.json" >"$T/m1.json"
expect_exit 2 "mediaType: expected a Sigstore bundle v0.1 to v0.3" vm "$T/m1.json"
jq 'del(.dsseEnvelope) | .messageSignature = {}' "$T/b.json" >"$T/m2.json"
expect_exit 2 "a messageSignature bundle signs a blob" vm "$T/m2.json"
echo ok
