#!/bin/bash
# ingot's dm-verity tree against cryptsetup's veritysetup: `veritysetup
# verify` accepts it and refuses the image after one flipped byte; the root
# hash and the whole hash file equal what `veritysetup format` writes with
# the same salt and UUID.
. "$(dirname "$0")/lib.sh"
# Deterministic incompressible bytes: prand COUNT SEED
prand() { openssl enc -aes-128-ctr -K "$(printf %032x "$2")" -iv 0 < /dev/zero 2>/dev/null | head -c "$1"; }
TOOL=$BUILD_DIR/tools/sqfs-from-dir
[ -x "$TOOL" ] || skip "no $TOOL (make first)"
command -v veritysetup >/dev/null || skip "veritysetup not installed"

SALT=5f1e0c0ffee0ddba11c0ffee0ddba11c0ffee0ddba11c0ffee0ddba11c0ffee0
mkdir -p "$T/src/lib"
# > 128 data blocks so the tree has two levels
prand 700000 1 > "$T/src/lib/blob.bin"
seq 1 50000 > "$T/src/lib/seq"
echo hi > "$T/src/hello"
"$TOOL" -s "$T/store" -m 1 -b 65536 -V "$T/img.verity" --salt $SALT "$T/src" "$T/img.sqfs" > "$T/info"
val() { sed -n "s/^$1=//p" "$T/info"; }
ROOT=$(val root_hash)
UUID=$(val uuid)
assert_eq "$SALT" "$(val salt)" "salt"
assert_eq "$(sha256 "$T/img.sqfs")" "$(val sha256)" "image sha256 from the same pass"
blocks=$(val data_blocks)
[ "$blocks" -gt 128 ] || fail "expected > 128 data blocks, got $blocks"
assert_eq $(( $(stat -c %s "$T/img.sqfs") / 4096 )) "$blocks" "data_blocks"

note "veritysetup verify accepts our tree"
veritysetup verify "$T/img.sqfs" "$T/img.verity" "$ROOT" || fail "veritysetup verify refused our tree"
dump=$(veritysetup dump "$T/img.verity")
assert_contains "$dump" "$UUID" "veritysetup dump UUID"
assert_contains "$dump" "Hash type:       	1" "hash type"

note "veritysetup format with the same salt and UUID: same root, same bytes"
cp "$T/img.sqfs" "$T/copy.sqfs"
veritysetup format --format=1 --hash=sha256 --data-block-size=4096 --hash-block-size=4096 \
	--salt=$SALT --uuid="$UUID" "$T/copy.sqfs" "$T/theirs.verity" > "$T/format.out"
theirs=$(sed -n 's/^Root hash:[[:space:]]*//p' "$T/format.out")
assert_eq "$theirs" "$ROOT" "root hash vs veritysetup format"
cmp "$T/theirs.verity" "$T/img.verity" || fail "hash file differs from veritysetup's"

note "one flipped byte in the image is refused"
printf '\x5a' | dd of="$T/copy.sqfs" bs=1 seek=$((4096 * 100 + 7)) conv=notrunc status=none
cmp -s "$T/copy.sqfs" "$T/img.sqfs" && fail "the byte did not change"
if veritysetup verify "$T/copy.sqfs" "$T/img.verity" "$ROOT" 2>/dev/null; then
	fail "veritysetup verify accepted a modified image"
fi
note "one flipped byte in the hash tree is refused"
cp "$T/img.verity" "$T/bad.verity"
printf '\x5a' | dd of="$T/bad.verity" bs=1 seek=$((4096 + 3)) conv=notrunc status=none
if veritysetup verify "$T/img.sqfs" "$T/bad.verity" "$ROOT" 2>/dev/null; then
	fail "veritysetup verify accepted a modified hash tree"
fi
