#!/bin/bash
# The store's file cache through `ingot build`: a rebuild after one
# artifact changed takes every unchanged file's compressed blocks from the
# store (at level 3, where the block cache keeps the fragment blocks only) and writes the same
# image, verity tree, manifest and SBOM as a build with a fresh store; a
# file replaced by a later artifact is still the later one's; a damaged
# cache segment is not used and changes nothing.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fc-fixture.sh"

note "cold build of v1, then v2 with the same store"
build v1.yaml "$T/o1" "$T/store" >"$T/cold.out"
if grep -q "^reused" "$T/cold.out"; then fail "a cold build reused files: $(cat "$T/cold.out")"; fi
build v2.yaml "$T/o2" "$T/store" >"$T/warm.out"
# libbig, small, libmid, mid's shadowed (base's is not in the image, so
# never recorded) and top's unchanged note: all but usr/bin/tool
assert_contains "$(cat "$T/warm.out")" "reused    5 files from the file cache" "rebuild summary"
note "v2 with a fresh store: the same outputs"
build v2.yaml "$T/o3" "$T/fresh" >/dev/null
for n in fc.sqfs fc.verity fc.manifest.json fc.spdx.json; do
	assert_eq "$(sha256 "$T/o3/$n")" "$(sha256 "$T/o2/$n")" "$n with the file cache warm and cold"
done
note "the later artifact's file wins"
unsquashfs -q -d "$T/x" "$T/o2/fc.sqfs" usr/lib/shadowed >/dev/null
python3 - "$T/art/mid.tar" "$T/x/usr/lib/shadowed" <<'EOF' || fail "usr/lib/shadowed is not mid's"
import sys, tarfile
want = tarfile.open(sys.argv[1]).extractfile("usr/lib/shadowed").read()
sys.exit(0 if open(sys.argv[2], "rb").read() == want else 1)
EOF

damage() { # damage START: flip a byte every 4 KiB of every file-cache segment, from START
	for f in "$T"/store/files/*/*.data; do
		python3 -c 'import sys
d = bytearray(open(sys.argv[1], "rb").read())
for o in range(int(sys.argv[2]), len(d), 4096):
    d[o] ^= 0x20
open(sys.argv[1], "r+b").write(d)' "$f" "$1"
	done
}
note "a damaged segment: detected, the files compressed again, same outputs"
damage 0
rm -rf "$T/o2"
build v2.yaml "$T/o2" "$T/store" >"$T/damaged.out"
for n in fc.sqfs fc.verity fc.manifest.json fc.spdx.json; do
	assert_eq "$(sha256 "$T/o3/$n")" "$(sha256 "$T/o2/$n")" "$n with a damaged file cache"
done
if grep -q "^reused    5 " "$T/damaged.out"; then fail "damaged entries were used: $(cat "$T/damaged.out")"; fi
note "damaged segments and a damaged pack: the fallback checks the pack, the build fails"
damage 1000   # (not 0 again: that would undo the first damage)
pack="$T/store/unpacked/$(sha256 "$T/art/base.tar.gz").pack"
assert_file "$pack"
python3 -c 'import sys; f=open(sys.argv[1],"r+b"); f.seek(100); b=f.read(1); f.seek(100); f.write(bytes([b[0]^1]))' "$pack"
if build v2.yaml "$T/o4" "$T/store" >"$T/bad.out" 2>"$T/bad.err"; then fail "a damaged pack was not noticed: $(cat "$T/bad.out")"; fi
assert_contains "$(cat "$T/bad.err")" "expected" "the damaged pack's message"
assert_no_file "$T/o4/fc.sqfs"
exit 0
