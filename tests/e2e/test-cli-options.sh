#!/bin/bash
# The table-driven option parser (cli/parse-options.c): every converted
# command refuses a repeated single-value option, an unknown option and
# a missing argument with exit 64 and one line naming it; --help prints
# the table's options; a repeatable option (--key) repeats.
. "$(dirname "$0")/lib.sh"

usage() {   # usage EXPECTED-TEXT ARGS...: exit 64 and the text on stderr
	local want=$1; shift
	set +e
	"$INGOT" "$@" >"$T/out" 2>"$T/err"
	local rc=$?
	set -e
	[ "$rc" = 64 ] || fail "ingot $*: exit $rc, expected 64 ($(cat "$T/err"))"
	grep -qF -- "$want" "$T/err" || fail "ingot $*: stderr lacks '$want': $(cat "$T/err")"
	[ ! -s "$T/out" ] || fail "ingot $*: wrote to stdout on a usage error"
}

usage "--output given more than once" build "$SRC/recipes/demo.yaml" -o "$T/a" -o "$T/b"
usage "--workers given more than once" build "$SRC/recipes/demo.yaml" -o "$T/a" -j 2 -j 2
usage "--key given more than once" sign m.json --key a.key --key b.key
usage "--keyring given more than once" verify-manifest e.json --keyring a --keyring b
usage "--now given more than once" verify-manifest e.json --now 0 --now 1
usage "--rules given more than once" lint "$SRC/recipes/demo.yaml" --rules a --rules b
usage "--output given more than once" keys generate -o a -o b
usage "--name given more than once" keys keyring add k.json p.pub --name a --name b
usage "--manifest given more than once" evidence add --manifest a --manifest b
usage "--ring given more than once" promote --ring a --ring b
usage "--keyring given more than once" verify --manifest m --keyring a --keyring b
usage "--reports given more than once" audit --keyring k --manifests m --reports a --reports b
usage "--nonce given more than once" attest verify-quote q.json --nonce 00 --nonce 11
usage "--store given more than once" store gc --store a --store b r.yaml
usage "--state given more than once" attest enroll finish a.json --state a --state b --key k -o r
usage "--message given more than once" attest import -m a -m b -s s -f f -u u -o o
usage "--public given more than once" attest import -m a -s s -f f -u u --public v -o o
usage "unexpected argument 'x'" attest import -m a -s s -f f -u u -o o x
usage "gc: expected at least one RECIPE to keep" store gc --store a
usage "unknown subcommand 'prune' (expected gc or verify)" store prune
usage "unknown option '--bogus'" diff --bogus a b
usage "unknown option '-z'" inspect -z x
usage "option '--output' needs an argument" build "$SRC/recipes/demo.yaml" --output
usage "--workers: expected an integer in [1, 64], got '0'" build "$SRC/recipes/demo.yaml" -o "$T/a" -j 0
usage "--passphrase-fd: expected a file descriptor number, got 'x'" sign m.json --key k --passphrase-fd x
usage "--threshold: expected 1..256, got '0'" keys keyring add k.json p.pub --name a --threshold 0
usage "generate: --name and --threshold are for keyring add" keys generate -o "$T/k" --name a
usage "generate: --role is for keyring add" keys generate -o "$T/k" --role manifest
usage "--role: expected a comma-separated list of manifest, enrolment, firmware-ref, evidence, promotion, got 'root'" keys keyring add k.json p.pub --name a --role root

# --help comes from the same table: every option, then -h, --help.
for cmd in build lint inspect keys sign verify-manifest diff evidence promote verify audit attest store; do
	"$INGOT" $cmd --help >"$T/help" || fail "ingot $cmd --help failed"
	grep -q '^OPTIONS$' "$T/help" || fail "ingot $cmd --help: no OPTIONS"
	grep -q '^    -h, --help  *show this help$' "$T/help" || fail "ingot $cmd --help: no -h, --help row"
done
"$INGOT" attest import --help >"$T/help" || fail "ingot attest import --help failed"
grep -q '^    -u, --public AK_PUB ' "$T/help" || fail "attest import --help: no -u row"
# The top-level and attest help name what exists, as it is optional.
"$INGOT" --help | grep -q '^    keys generate|id|keyring ' || fail "ingot --help omits keys keyring"
"$INGOT" attest --help | grep -q '^    ingot attest verify-quote QUOTE --accept-weak no-nonce' ||
	fail "attest --help shows verify-quote's --nonce as always required"
"$INGOT" build --help | grep -q -- '--max-unpacked-bytes N\[K|M|G|T\]$' || fail "build --help lost a row"
"$INGOT" evidence --help | grep -q -- '--key KEY ' || fail "evidence --help lost --key"

# A repeatable option repeats (two --key reach the key loader: the
# second missing file is what fails, not the parser).
set +e
"$INGOT" evidence add --manifest "$T/m" --kind custom --from "$T/f" --key "$T/k1" --key "$T/k2" 2>"$T/err"
rc=$?
set -e
[ "$rc" != 64 ] || fail "a repeated --key was refused as a usage error: $(cat "$T/err")"
echo "ok: cli options"
