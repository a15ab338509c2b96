#!/bin/bash
# Same tree, same image bytes: whatever the number of compression workers
# and whatever order the input directory was created in (readdir order,
# inode numbers and source mtimes all differ).
. "$(dirname "$0")/lib.sh"
# Deterministic incompressible bytes: prand COUNT SEED
prand() { openssl enc -aes-128-ctr -K "$(printf %032x "$2")" -iv 0 < /dev/zero 2>/dev/null | head -c "$1"; }
TOOL=$BUILD_DIR/tools/sqfs-from-dir
[ -x "$TOOL" ] || skip "no $TOOL (make first)"

files="usr/lib/libz.so.1 usr/lib/liba.so usr/share/doc/README etc/os-release etc/a-b/conf bin/tool"
mkdata() { # deterministic content per name, several blocks for some
	case $1 in
	*.so*) for i in $(seq 1 3000); do printf '%s %d\n' "$1" "$i"; done ;;
	*) printf 'content of %s\n' "$1" ;;
	esac
}
make_tree() { # DIR ORDER...
	local d=$1 f; shift
	for f in "$@"; do
		mkdir -p "$d/$(dirname "$f")"
		mkdata "$f" > "$d/$f"
		touch -d "@$RANDOM" "$d/$f"
	done
	ln -s lib/libz.so.1 "$d/usr/libz"
	chmod 0755 "$d/bin/tool"
}
prand 1500000 1 > "$T/random.bin"   # incompressible: many raw blocks
make_tree "$T/one" $files
cp "$T/random.bin" "$T/one/usr/lib/random.bin"
make_tree "$T/two" $(printf '%s\n' $files | tac)
# different directory creation order too
mkdir -p "$T/two/zz" "$T/one/zz"
cp "$T/random.bin" "$T/two/usr/lib/random.bin"

for c in zstd xz gzip; do
	note "$c: 1 worker vs 2 vs 4 workers, two creation orders"
	"$TOOL" -s "$T/store" -c $c -b 4096 -m 1234 -j 1 "$T/one" "$T/a.sqfs" >/dev/null
	"$TOOL" -s "$T/store" -c $c -b 4096 -m 1234 -j 2 "$T/one" "$T/b.sqfs" >/dev/null
	"$TOOL" -s "$T/store" -c $c -b 4096 -m 1234 -j 4 "$T/two" "$T/c.sqfs" >/dev/null
	cmp "$T/a.sqfs" "$T/b.sqfs" || fail "$c: 1 vs 2 workers differ"
	cmp "$T/a.sqfs" "$T/c.sqfs" || fail "$c: creation order changed the image"
done

note "a different epoch gives a different image"
"$TOOL" -s "$T/store" -b 4096 -m 1235 -j 1 "$T/one" "$T/d.sqfs" >/dev/null
"$TOOL" -s "$T/store" -b 4096 -m 1234 -j 1 "$T/one" "$T/e.sqfs" >/dev/null
cmp -s "$T/d.sqfs" "$T/e.sqfs" && fail "epoch did not change the image"
exit 0
