#!/bin/bash
# The image on a block device (a loop device over the image followed by
# other data, as on a partition at boot): `verify-manifest` and `verify`
# give the same answer, through the one image check, reading exactly the
# manifest's image size from the device.  Before, verify-manifest hashed
# the whole device (digest mismatch) and verify refused devices outright.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/verify-lib.sh"
command -v mksquashfs >/dev/null || skip "mksquashfs (squashfs-tools) not installed"
command -v veritysetup >/dev/null || skip "veritysetup (cryptsetup-bin) not installed"
command -v losetup >/dev/null || skip "losetup not installed"

make_pool h100 h100 --serial 7 --image-out "$T/h100.sqfs" --verity-out "$T/h100.verity"
"$INGOT" keys generate -o "$T/release" >/dev/null
"$INGOT" keys keyring add "$T/keyring.json" "$T/release.pub" --name release >/dev/null
"$INGOT" sign "$T/h100.manifest.json" --key "$T/release.key" -o "$T/h100.dsse.json" >/dev/null

# The partition: the image, then 64 KiB of other bytes.
cp "$T/h100.sqfs" "$T/part"
head -c 65536 /dev/urandom >>"$T/part"
LOOP=$(losetup -f --show "$T/part" 2>/dev/null) || skip "cannot attach a loop device here"
at_exit "losetup -d $LOOP"
[ -b "$LOOP" ] || skip "$LOOP is not a block device"

NOW=2026-11-01T00:00:00Z
vm() { "$INGOT" verify-manifest "$T/h100.dsse.json" --keyring "$T/keyring.json" --now "$NOW" "$@"; }
node() { # WANT_EXIT IMAGE_STATUS [args...]
	local want=$1 st=$2 rc=0
	shift 2
	"$INGOT" verify --manifest "$T/h100.dsse.json" --keyring "$T/keyring.json" \
		--root "$T/h100.root" --tcti none --now "$NOW" --report "$T/r.json" --brief "$@" \
		>"$T/out" 2>&1 || rc=$?
	[ "$rc" = "$want" ] || fail "verify: expected exit $want, got $rc: $(cat "$T/out")"
	assert_eq "$st" "$(check_status "$T/r.json" image)" "image check status"
}

note "device holding the image: both commands accept it, with and without the tree"
expect_exit 0 "image sha256" vm --image "$LOOP" --verity "$T/h100.verity"
expect_exit 0 "image sha256" vm --image "$LOOP"
node 0 pass --image "$LOOP" --verity "$T/h100.verity"
node 0 pass --image "$LOOP"
assert_contains "$(jget "$T/r.json" "[c for c in r['checks'] if c['name']=='image'][0]['evidence']")" \
	"$(stat -c %s "$T/h100.sqfs") bytes" "bytes read from the device"

note "the hash tree on a device too (a node's hash partition): both accept it"
cp "$T/h100.verity" "$T/hpart"
head -c 65536 /dev/zero >>"$T/hpart"
HLOOP=$(losetup -f --show "$T/hpart") || skip "cannot attach a loop device for the tree"
at_exit "losetup -d $HLOOP"
expect_exit 0 "image sha256" vm --image "$LOOP" --verity "$HLOOP"
node 0 pass --image "$LOOP" --verity "$HLOOP"
mkfifo "$T/fifo"
expect_exit 1 "expected a regular file or a block device, got a FIFO" vm --image "$LOOP" --verity "$T/fifo"

note "one byte changed inside the image on the device: both refuse"
printf 'X' | dd of="$LOOP" bs=1 seek=5000 conv=notrunc status=none
sync
expect_exit 6 "but the signed manifest says" vm --image "$LOOP"
expect_exit 6 "" vm --image "$LOOP" --verity "$T/h100.verity"
node 11 fail --image "$LOOP"
node 11 fail --image "$LOOP" --verity "$T/h100.verity"

note "a device shorter than the image does not hold it: refused"
truncate -s 8192 "$T/short"
SHORT=$(losetup -f --show "$T/short") || skip "cannot attach a second loop device"
at_exit "losetup -d $SHORT"
expect_exit 6 "expected at least" vm --image "$SHORT"
