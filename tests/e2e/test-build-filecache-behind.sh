#!/bin/bash
# The file cache's new segment is written behind: the thread that reads
# the packs and feeds the compressors (the build's main thread) makes no
# write to the segment's data (a write-behind thread does), and the
# index records go out gathered, not one write(2) per file.  The cache
# written this way serves a rebuild that reuses every file and writes the
# same outputs as a build with a fresh store.  At level 3 the fragment
# blocks (the small files and every tail) come from the block cache too:
# the rebuild compresses nothing.
. "$(dirname "$0")/lib.sh"
command -v strace >/dev/null || skip "strace not installed"

note "an artifact of 400 small files and 3 of several blocks"
mkdir -p "$T/art"
python3 - "$T/art/a.tar.gz" <<'EOF'
import io, random, sys, tarfile
r = random.Random(7)
def blob(n):
    return bytes(r.choice(b"abcdefgh \n") if i % 4 else r.randrange(256) for i in range(n))
with tarfile.open(sys.argv[1], "w:gz", format=tarfile.GNU_FORMAT) as t:
    files = [("usr/share/s/%03d" % i, blob(500 + i)) for i in range(400)]
    files += [("usr/lib/big%d.so" % i, blob(300000 + 7 * i)) for i in range(3)]
    for path, data in files:
        ti = tarfile.TarInfo(path)
        ti.size, ti.mode, ti.mtime = len(data), 0o644, 1
        t.addfile(ti, io.BytesIO(data))
EOF
{ recipe_head fb; cat <<EOF; } >"$T/r.yaml"
  block-size: 65536
artifacts:
  - name: a
    kind: tar
    source: art/a.tar.gz
    sha256: $(sha256 "$T/art/a.tar.gz")
EOF
build() { (cd "$T" && "$INGOT" build r.yaml -o "$1" --store "$2" --workers 2 --no-lint); }

note "cold build, its writes traced"
# (LeakSanitizer cannot run under ptrace: the untraced builds below check leaks)
(cd "$T" && ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" strace -f -qq -y -e trace=execve,write,pwrite64 -e signal=none -o "$T/trace" \
	"$INGOT" build r.yaml -o "$T/o1" --store "$T/store" --workers 2 --no-lint >/dev/null) ||
	fail "the traced build failed"
main=$(grep -m1 ' execve(' "$T/trace" | awk '{print $1}')   # the build's main thread
[ -n "$main" ] || fail "no execve in the trace"
seg_data=$(grep -cE '^[0-9]+ +(write|pwrite64)\([0-9]+</[^>]*/tmp/[0-9]+\.files\.' "$T/trace" || true)
[ "$seg_data" -gt 0 ] || fail "no write to the file cache's segment was traced: $(head -n3 "$T/trace")"
by_main=$(grep -cE "^$main +(write|pwrite64)\([0-9]+</[^>]*/tmp/[0-9]+\.files\." "$T/trace" || true)
assert_eq 0 "$by_main" "writes to the segment's data by the feeding thread (of $seg_data)"
idx=$(grep -cE '^[0-9]+ +(write|pwrite64)\([0-9]+</[^>]*/tmp/[0-9]+\.files-idx\.' "$T/trace" || true)
[ "$idx" -le 2 ] || fail "expected the 403 index records in at most 2 writes (head and records), got $idx"

note "the segment serves a rebuild: every file reused, the same outputs"
build "$T/o2" "$T/store" >"$T/warm.out"
assert_contains "$(cat "$T/warm.out")" "reused    403 files from the file cache" "rebuild summary"
grep -qE '^blocks +0 compressed, [1-9][0-9]* from the block cache$' "$T/warm.out" ||
	fail "expected every fragment block from the block cache, got: $(grep '^blocks' "$T/warm.out")"
build "$T/o3" "$T/fresh" >/dev/null
for n in fb.sqfs fb.verity fb.manifest.json fb.spdx.json; do
	assert_eq "$(sha256 "$T/o3/$n")" "$(sha256 "$T/o2/$n")" "$n from the written-behind cache and from a fresh store"
	assert_eq "$(sha256 "$T/o1/$n")" "$(sha256 "$T/o2/$n")" "$n cold and warm"
done
exit 0
