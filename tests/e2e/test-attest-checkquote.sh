#!/bin/bash
# docs/attest.md's tpm2_checkquote recipe, run exactly as written (the
# block after "<!-- e2e: tpm2-checkquote -->"), on ingot quotes over 10
# and 24 PCRs in two banks: tpm2-tools 5.4's "values" form fails from 8
# PCRs on, the serialized PCR file works, and it is byte for byte the file
# tpm2_quote -o writes for the same selection.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/swtpm.sh"
. "$(dirname "$0")/attest-lib.sh"
command -v tpm2_checkquote >/dev/null || skip "tpm2-tools not installed"

sed -n '/^<!-- e2e: tpm2-checkquote -->$/,/^```$/p' "$SRC/docs/attest.md" | sed '1,2d;$d' >"$T/recipe.sh"
grep -q '^tpm2_checkquote ' "$T/recipe.sh" || fail "docs/attest.md: no tpm2_checkquote recipe found"

swtpm_start
tpm2_pcrextend "3:sha256=$(printf a | sha256sum | cut -c1-64),sha1=$(printf a | sha1sum | cut -c1-40)"
"$INGOT" attest ak create -o "$T/ak" >/dev/null
NONCE=00112233445566778899aabbccddeeff
L=0,1,2,3,4,5,6,7,8,9

note "the values form fails with 10 PCRs (the reason for the recipe)"
"$INGOT" attest quote --nonce $NONCE --pcrs sha256:$L --ak "$T/ak" -o "$T/q10.json"
jq -r .attest "$T/q10.json" | base64 -d >"$T/msg"
jq -r .signature "$T/q10.json" | base64 -d >"$T/sig"
: >"$T/values"
for p in ${L//,/ }; do json_get "$T/q10.json" ".pcrs.sha256.\"$p\"" | xxd -r -p >>"$T/values"; done
if tpm2_checkquote -u "$T/ak/ak.pub.pem" -m "$T/msg" -s "$T/sig" -f "$T/values" -l sha256:$L \
	-g sha256 -q $NONCE >/dev/null 2>&1; then
	note "(this tpm2-tools accepts the values form for 10 PCRs)"
fi

for sel in "sha256:$L" "sha1:0-23+sha256:all"; do
	note "the documented recipe accepts an ingot quote over $sel"
	mkdir -p "$T/r" && rm -f "$T/r"/*
	"$INGOT" attest quote --nonce $NONCE --pcrs "$sel" --ak "$T/ak" -o "$T/r/q.json"
	(cd "$T/r" && Q=q.json NONCE=$NONCE bash -e "$T/recipe.sh") >"$T/out" 2>&1 ||
		{ cat "$T/out"; fail "the documented tpm2_checkquote recipe refused a quote over $sel"; }
	note "... and refuses it for another nonce"
	if (cd "$T/r" && Q=q.json NONCE=00$NONCE bash -e "$T/recipe.sh") >/dev/null 2>&1; then
		fail "the recipe accepted a wrong nonce"
	fi
done

note "its PCR file is the one tpm2_quote -o writes (serialized) for the same PCRs"
tpm2tools_signing_key "$T/k"
tpm2_quote -c "$T/k.ctx" -l sha256:$L -q $NONCE -m "$T/t.msg" -s "$T/t.sig" -o "$T/t.pcrs" -g sha256 -Q
tpm2_flushcontext -t
tpm2_checkquote -u "$T/k.pem" -m "$T/t.msg" -s "$T/t.sig" -f "$T/t.pcrs" -g sha256 -q $NONCE >/dev/null ||
	fail "tpm2_checkquote refuses tpm2_quote's own serialized file"
mkdir -p "$T/r10" && cp "$T/q10.json" "$T/r10/q.json"
(cd "$T/r10" && Q=q.json NONCE=$NONCE bash -e "$T/recipe.sh") >/dev/null 2>&1 || fail "recipe on the 10-PCR quote"
cmp "$T/r10/quote.pcrs" "$T/t.pcrs" || fail "the recipe's PCR file differs from tpm2_quote -o's"
echo ok
