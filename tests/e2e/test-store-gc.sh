#!/bin/bash
# ingot store gc: keeps what builds of the named recipes use and removes
# the rest; the kept recipe rebuilds from the store alone (every artifact
# and every file from the caches, same bytes), a removed one costs a
# rebuild (same bytes too); a dry run, a recipe that does not resolve and
# a store a build holds change nothing; a file cache past the 256
# segments a build reads is what a build warns about and gc cures; a
# symlink planted anywhere gc walks is never followed: nothing outside
# the store is removed, and the entry is left in place and reported.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fc-fixture.sh"

S=$T/store
listing() { (cd "$S" && find . -type f ! -name lock -printf '%p %s\n' | sort); }
summary() { grep "^$1 " "$T/gc.out" | head -1; }

note "build v1 and v2 into one store"
build v1.yaml "$T/o1" "$S" >/dev/null
build v2.yaml "$T/o2" "$S" >/dev/null
before=$(listing)
assert_contains "$before" "./unpacked/$(sha256 "$T/art/top-v1.tar.gz").pack" "v1's top in the store"

note "dry run: counts, removes nothing"
(cd "$T" && "$INGOT" store gc --store "$S" --dry-run v2.yaml) >"$T/gc.out" || fail "dry run failed"
assert_contains "$(cat "$T/gc.out")" "dry run: nothing removed" "dry-run summary"
assert_eq "artifacts 3 kept, 1 removed" "$(summary artifacts)" "dry-run artifact counts"
assert_eq "$before" "$(listing)" "store after a dry run"

note "a recipe that does not resolve: nothing removed"
expect_exit 1 "missing.yaml" bash -c "cd '$T' && '$INGOT' store gc --store '$S' v2.yaml missing.yaml"
assert_eq "$before" "$(listing)" "store after a failed gc"

note "a store a build holds: refused"
exec 9<"$S/lock"
flock -s 9
expect_exit 1 "store in use by another ingot process" bash -c "cd '$T' && '$INGOT' store gc --store '$S' v2.yaml"
exec 9<&-
assert_eq "$before" "$(listing)" "store after a refused gc"

note "gc keeping v2"
(cd "$T" && "$INGOT" store gc --store "$S" v2.yaml) >"$T/gc.out" || fail "gc failed: $(cat "$T/gc.out")"
assert_eq "artifacts 3 kept, 1 removed" "$(summary artifacts)" "artifact counts"
# v1's build recorded its 6 image files, v2's the new tool: v1's tool goes
assert_contains "$(summary files)" "6 file-cache entries kept, 1 removed" "file-cache counts"
after=$(listing)
[ ! -e "$S/unpacked/$(sha256 "$T/art/top-v1.tar.gz").pack" ] || fail "v1's top pack survived gc"
[ "$(find "$S/files" -name '*.idx' | wc -l)" = 1 ] || fail "file cache not compacted to one segment: $(find "$S/files")"
[ "$(find "$S/files" -name '*.data' | wc -l)" = 1 ] || fail "file cache data segments: $(find "$S/files")"
"$INGOT" store verify --store "$S" >/dev/null || fail "store verify after gc"

note "v2 rebuilds from the store alone, same bytes"
mv "$T/art" "$T/art.away"   # nothing may be read from the artifacts
build v2.yaml "$T/o2b" "$S" >"$T/b.out" 2>"$T/b.err" || fail "rebuild of v2 failed: $(cat "$T/b.err")"
mv "$T/art.away" "$T/art"
assert_contains "$(cat "$T/b.out")" "artifacts 3 (3 from cache)" "v2 rebuild artifacts"
assert_contains "$(cat "$T/b.out")" "reused    6 files from the file cache" "v2 rebuild files"
for n in fc.sqfs fc.verity fc.manifest.json fc.spdx.json; do
	assert_eq "$(sha256 "$T/o2/$n")" "$(sha256 "$T/o2b/$n")" "$n of v2 after gc"
done

note "v1, removed, rebuilds: same bytes"
build v1.yaml "$T/o1b" "$S" >"$T/b.out" || fail "rebuild of v1 failed"
assert_contains "$(cat "$T/b.out")" "artifacts 3 (2 from cache)" "v1 rebuild artifacts"
assert_contains "$(cat "$T/b.out")" "reused    5 files from the file cache" "v1 rebuild files"
assert_eq "$(sha256 "$T/o1/fc.sqfs")" "$(sha256 "$T/o1b/fc.sqfs")" "v1 image after gc"

note "300 segments before the real ones: the build reads 256 and says so"
real=$(find "$S/files" -name '*.idx' | head -1)
dir=$(dirname "$real")
for i in $(seq 100 399); do
	head -c 16 "$real" >"$dir/0000000000000$i-1.idx"   # the magic alone: valid, empty
	: >"$dir/0000000000000$i-1.data"
done
build v2.yaml "$T/o2c" "$S" >"$T/b.out" 2>"$T/b.err" || fail "build with 300 segments failed"
assert_contains "$(cat "$T/b.err")" "segments more than a build reads (256)" "segment warning"
if grep -q "^reused" "$T/b.out"; then fail "the files past 256 segments were reused: $(cat "$T/b.out")"; fi
assert_eq "$(sha256 "$T/o2/fc.sqfs")" "$(sha256 "$T/o2c/fc.sqfs")" "v2 image with too many segments"
(cd "$T" && "$INGOT" store gc --store "$S" v2.yaml) >"$T/gc.out" || fail "gc of 300 segments failed"
assert_contains "$(summary files)" "30" "segments read"
[ "$(find "$S/files" -name '*.idx' | wc -l)" = 1 ] || fail "not compacted: $(find "$S/files" -name '*.idx' | wc -l) segments"
build v2.yaml "$T/o2d" "$S" >"$T/b.out" 2>"$T/b.err" || fail "build after gc failed"
[ ! -s "$T/b.err" ] || fail "a warning after gc: $(cat "$T/b.err")"
assert_contains "$(cat "$T/b.out")" "reused    6 files from the file cache" "reuse after compaction"

note "a stray file in files/ is removed; a damaged segment is dropped whole, the block cache removed"
: >"$S/files/stray"
sed 's/level: 3/level: 19/' "$T/v2.yaml" >"$T/v2-19.yaml"
build v2-19.yaml "$T/o19" "$S" >/dev/null || fail "level-19 build failed"
[ -n "$(find "$S/blocks" -name '*.idx')" ] || fail "no block cache at level 19"
seg=$(find "$S/files" -name '*.idx' | head -1)
printf '\xff\xff\xff\xff' | dd of="$seg" bs=1 seek=56 conv=notrunc status=none   # first record's call count
(cd "$T" && "$INGOT" store gc --store "$S" v2.yaml v2-19.yaml) >"$T/gc.out" || fail "gc failed"
assert_contains "$(summary files)" "1 damaged" "damaged segment counted"
assert_contains "$(summary blocks)" "block-cache segments removed" "block summary"
[ ! -e "$S/files/stray" ] || fail "a stray file in files/ survived gc"
[ ! -e "$S/blocks" ] || [ -z "$(find "$S/blocks" -type f)" ] || fail "block cache survived: $(find "$S/blocks" -type f)"
build v2-19.yaml "$T/o19b" "$S" >"$T/b.out" || fail "level-19 rebuild failed"
assert_eq "$(sha256 "$T/o19/fc.sqfs")" "$(sha256 "$T/o19b/fc.sqfs")" "level-19 image after gc"

note "symlinks planted at every level gc walks: not followed, nothing outside the store removed"
O=$T/outside
hex=$(printf '%064d' 0)   # a name gc removes when it is a store file
mkdir -p "$O/sub"
for f in a sub/b "$hex" "$hex.pack" "$hex.jsonl" 0000000000000001-1.idx 0000000000000001-1.data; do
	echo "$f" >"$O/$f"
done
outside() { (cd "$O" && find . -printf '%p %y %s\n' | sort); }
o_before=$(outside)
cid=$(ls "$S/files" | head -1)
[ -d "$S/files/$cid" ] || fail "no file-cache directory: $(ls -la "$S/files")"
mkdir -p "$S/blocks/b0" "$S/blobs/zz"
planted="blocks/planted blocks/b0/planted files/planted files/$cid/0000000000000001-1.idx
	files/$cid/0000000000000001-1.data blobs/00 blobs/zz/$hex unpacked/$hex.pack unpacked/$hex.jsonl"
for p in $planted; do
	case $p in
	*/"$hex"*|*.idx|*.data) ln -s "$O/$(basename "$p")" "$S/$p" ;;
	*) ln -s "$O" "$S/$p" ;;
	esac
done
mkfifo "$S/files/$cid/0000000000000002-1.idx" "$S/blocks/b0/fifo"   # never opened blocking
timeout 60 bash -c "cd '$T' && '$INGOT' store gc --store '$S' v2.yaml v2-19.yaml" >"$T/gc.out" 2>"$T/gc.err" ||
	fail "gc with planted symlinks failed ($?): $(cat "$T/gc.err")"
assert_eq "$o_before" "$(outside)" "the directory outside the store after gc"
for p in $planted; do [ -L "$S/$p" ] || fail "planted $p not left in place"; done
assert_eq "skipped   11 entries not the store's (symbolic links, special files), left in place" \
	"$(summary skipped)" "skipped entries"
assert_contains "$(cat "$T/gc.err")" "ingot: warning: store gc: $S/" "warning names the entry"
assert_contains "$(cat "$T/gc.err")" ": a symbolic link, not followed and left in place (11 such entries" "warning"
"$INGOT" store verify --store "$S" >/dev/null 2>&1 && fail "store verify passed a store with planted symlinks"
build v2.yaml "$T/o2e" "$S" >/dev/null 2>&1 || fail "build with planted symlinks failed"
assert_eq "$(sha256 "$T/o2/fc.sqfs")" "$(sha256 "$T/o2e/fc.sqfs")" "v2 image with planted symlinks"

note "files/ and blocks/ themselves symlinks: not followed"
rm "$S/blobs/00" "$S/blobs/zz/$hex" "$S/unpacked/$hex.pack" "$S/unpacked/$hex.jsonl"
mv "$S/files" "$T/files.away"
mv "$S/blocks" "$T/blocks.away"
ln -s "$O" "$S/files"
ln -s "$O" "$S/blocks"
timeout 60 bash -c "cd '$T' && '$INGOT' store gc --store '$S' v2.yaml" >"$T/gc.out" 2>"$T/gc.err" ||
	fail "gc with files/ and blocks/ symlinks failed: $(cat "$T/gc.err")"
assert_eq "$o_before" "$(outside)" "the directory outside the store after gc of symlinked caches"
assert_contains "$(summary skipped)" "skipped   2 entries" "skipped entries"
assert_contains "$(cat "$T/gc.err")" "$S/files: a symbolic link, not followed and left in place (2 such" "warning"
[ -L "$S/files" ] && [ -L "$S/blocks" ] || fail "files/ or blocks/ symlink not left in place"

note "blobs/ or unpacked/ a symlink: the store is refused, nothing removed"
for d in blobs unpacked; do
	mv "$S/$d" "$T/$d.away"
	ln -s "$O" "$S/$d"
	expect_exit 1 "$S/$d" bash -c "cd '$T' && timeout 60 '$INGOT' store gc --store '$S' v2.yaml"
	assert_eq "$o_before" "$(outside)" "the directory outside the store after gc with $d/ a symlink"
	rm "$S/$d"
	mv "$T/$d.away" "$S/$d"
done
echo "store gc: ok"
