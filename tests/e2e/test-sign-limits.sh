#!/bin/bash
# One set of envelope limits: `ingot verify` and `ingot verify-manifest`
# read an envelope the same way (before, verify stopped at 64 MiB while
# verify-manifest read up to 96 MiB, so the two disagreed on a 70 MiB
# envelope).  The writer side (a manifest too large for its readers is
# refused at build time) is tests/unit/test_manifest.c test_limits.
. "$(dirname "$0")/lib.sh"
cd "$T" || exit 1

"$INGOT" keys generate -o release >/dev/null
"$INGOT" keys keyring add ring.json release.pub --name release >/dev/null
mkdir root

# reason FILE: what each command says about envelope FILE.
vm_reason() { "$INGOT" verify-manifest "$1" --keyring ring.json 2>&1 | sed "s|$T/||g"; }
node_reason() {
	"$INGOT" verify --manifest "$1" --keyring ring.json --root root --tcti none \
		--report r.json >/dev/null 2>&1
	python3 -c 'import json,sys; r=json.load(open("r.json"))
print([c for c in r["checks"] if c["name"]=="signature"][0]["summary"])'
}

note "70 MiB envelope (over the manifest limit, under the envelope limit): both read it"
truncate -s 70M big.json
expect_exit 2 "invalid JSON" "$INGOT" verify-manifest big.json --keyring ring.json
assert_contains "$(node_reason big.json)" "invalid JSON" "verify on a 70 MiB envelope"

note "97 MiB envelope: both refuse it before reading, with the same limit"
truncate -s 97M huge.json
expect_exit 2 "file too large" "$INGOT" verify-manifest huge.json --keyring ring.json
limit=$(vm_reason huge.json | grep -o 'limit [0-9]*')
assert_contains "$(node_reason huge.json)" "$limit" "verify's limit equals verify-manifest's"
