#!/bin/bash
# The writer streams: packing 160 MiB of incompressible data (with its
# dm-verity tree) stays under 64 MiB of peak RSS, far less than the image.
. "$(dirname "$0")/lib.sh"
TOOL=$BUILD_DIR/tools/sqfs-from-dir
[ -x "$TOOL" ] || skip "no $TOOL (make first)"
[ -x /usr/bin/time ] || skip "no /usr/bin/time"
# AddressSanitizer's shadow memory and quarantine would be measured too
grep -q __asan_init "$TOOL" && skip "sanitizer build: RSS not meaningful"
prand() { openssl enc -aes-128-ctr -K "$(printf %032x "$2")" -iv 0 < /dev/zero 2>/dev/null | head -c "$1"; }

mkdir -p "$T/src/a" "$T/src/b"
prand $((100 << 20)) 1 > "$T/src/a/big1"
prand $((60 << 20)) 2 > "$T/src/b/big2"
/usr/bin/time -f '%M' -o "$T/rss" "$TOOL" -s "$T/store" -c lz4 -b 1048576 -j 2 \
	-V "$T/img.verity" "$T/src" "$T/img.sqfs" > "$T/info"
rss=$(tail -n 1 "$T/rss")
size=$(stat -c %s "$T/img.sqfs")
echo "peak RSS ${rss} KiB for a ${size}-byte image"
[ "$size" -gt $((160 << 20)) ] || fail "image smaller than its incompressible input: $size"
[ "$rss" -lt $((64 << 10)) ] || fail "peak RSS ${rss} KiB, expected < 65536 KiB"
assert_eq "$(sha256 "$T/img.sqfs")" "$(sed -n 's/^sha256=//p' "$T/info")" "image sha256"
