#!/bin/bash
# Inputs that are not regular files: a FIFO (whose open blocks until a
# writer comes) and a symlink to /dev/zero (endless) where a file is read.
# Each is refused at once with one line naming the file, nothing read:
# store verify (a blob), audit (--firmware-refs, --reports, --keyring),
# verify-manifest, inspect, sign's private key.  `timeout 10`: a
# regression fails instead of hanging.
. "$(dirname "$0")/lib.sh"
cd "$T"

# refused WHAT STATUS NEEDLE CMD...: exits STATUS within 10 s, one line
# on stderr that contains NEEDLE
refused() {
	local what=$1 want=$2 needle=$3 rc=0
	shift 3
	timeout 10 "$@" >"$T/out" 2>"$T/err" || rc=$?
	[ "$rc" != 124 ] || fail "$what: hung (killed after 10 s)"
	[ "$rc" = "$want" ] || fail "$what: expected exit $want, got $rc: $(cat "$T/err")"
	assert_contains "$(cat "$T/err")" "$needle" "$what"
	[ "$(wc -l <"$T/err")" = 1 ] || fail "$what: expected one line, got: $(cat "$T/err")"
}

note "store verify: a blob that is a FIFO, or a symlink to /dev/zero"
S=$T/store
"$INGOT" store verify --store "$S" >/dev/null || fail "store verify of an empty store"
mkdir -p "$S/blobs/00"
b=$S/blobs/00/00$(printf '%062d' 0)
mkfifo "$b"
refused "FIFO blob" 1 "$b: expected a regular file, got a FIFO" "$INGOT" store verify --store "$S"
rm "$b"
ln -s /dev/zero "$b"
refused "blob symlink to /dev/zero" 1 "$b: expected a regular file, got a symbolic link" \
	"$INGOT" store verify --store "$S"
rm "$b"
printf x >"$T/x"
ln -s "$T/x" "$b"
refused "blob symlink to a file" 1 "$b: expected a regular file, got a symbolic link" "$INGOT" store verify --store "$S"
rm "$b"
mkdir "$T/outside"
ln -s "$T/outside" "$S/blobs/11"
refused "blob directory a symlink" 1 "$S/blobs/11: expected a directory of blobs, got a symbolic link" \
	"$INGOT" store verify --store "$S"
rm "$S/blobs/11"

note "audit: a FIFO or a symlink to /dev/zero in --firmware-refs and --reports"
"$INGOT" keys generate -o k >/dev/null
"$INGOT" keys keyring add keyring.json k.pub --name release >/dev/null
mkdir -p m r fw
AUDIT=("$INGOT" audit --keyring keyring.json --firmware-ref-keyring keyring.json --manifests m --reports r
	--now 2026-12-01T00:00:00Z)
expect_exit 0 "" timeout 10 "${AUDIT[@]}" --firmware-refs fw
for kind in fifo zero; do
	if [ $kind = fifo ]; then mkfifo fw/a.json; else ln -s /dev/zero fw/a.json; fi
	got=$([ $kind = fifo ] && echo FIFO || echo "character device")
	refused "firmware ref $kind" 3 "fw/a.json: expected a regular file, got a $got" \
		"${AUDIT[@]}" --firmware-refs fw
	rm fw/a.json
done
for kind in fifo zero; do
	if [ $kind = fifo ]; then mkfifo r/n1.json; else ln -s /dev/zero r/n1.json; fi
	got=$([ $kind = fifo ] && echo FIFO || echo "character device")
	rc=0
	timeout 10 "${AUDIT[@]}" --json "$T/a.json" >"$T/out" 2>"$T/err" || rc=$?
	[ "$rc" != 124 ] || fail "report $kind: audit hung"
	[ "$rc" != 0 ] || fail "report $kind: audit passed"
	assert_eq "malformed" "$(jq -r '.nodes[0].verdict' "$T/a.json")" "report $kind verdict"
	assert_contains "$(jq -r '.nodes[0].findings[0]' "$T/a.json")" \
		"r/n1.json: expected a regular file, got a $got" "report $kind finding"
	rm r/n1.json
done
mkfifo kr.fifo
refused "keyring FIFO" 3 "kr.fifo: expected a regular file, got a FIFO" \
	"$INGOT" audit --keyring kr.fifo --manifests m --reports r

note "verify-manifest, inspect, sign: a FIFO where a file is read"
mkfifo in.fifo
refused "envelope FIFO" 1 "in.fifo: expected a regular file, got a FIFO" \
	"$INGOT" verify-manifest in.fifo --keyring keyring.json
refused "inspect FIFO" 1 "in.fifo: expected a regular file, got a FIFO" "$INGOT" inspect in.fifo
cp "$SRC/tests/fixtures/envelope-v1/demo.manifest.json" m.json
refused "sign with a FIFO key" 1 "in.fifo: private key: expected a regular file, got a FIFO" \
	"$INGOT" sign m.json --key in.fifo -o m.dsse.json
assert_no_file m.dsse.json
echo "hostile files: ok"
