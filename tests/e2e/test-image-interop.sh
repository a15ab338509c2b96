#!/bin/bash
# Images written by ingot's squashfs writer (through tests/tools/sqfs-from-dir)
# read back by tools nobody here wrote: unsquashfs (squashfs-tools) and
# sqfs2tar (squashfs-tools-ng) list exactly the source tree with its modes,
# owners and mtime = epoch; extracted contents hash to what `ingot inspect`
# prints; superblock, data and fragment blocks are byte-identical to
# gensquashfs' at the same settings, and the size is within 1 %.
. "$(dirname "$0")/lib.sh"
# Deterministic incompressible bytes: prand COUNT SEED
prand() { openssl enc -aes-128-ctr -K "$(printf %032x "$2")" -iv 0 < /dev/zero 2>/dev/null | head -c "$1"; }
TOOL=$BUILD_DIR/tools/sqfs-from-dir
[ -x "$TOOL" ] || skip "no $TOOL (make first)"
for t in unsquashfs sqfs2tar gensquashfs; do
	command -v $t >/dev/null || skip "$t not installed"
done
EPOCH=1700000000
export TZ=UTC

note "source tree"
D=$T/src
mkdir -p "$D/etc/ssl" "$D/usr/lib/x86_64" "$D/a-c" "$D/a/b" "$D/empty" "$D/dev"
printf 'hello\n' > "$D/a/b/x"
prand 300000 1 > "$D/usr/lib/x86_64/libbig.so.1"
seq 1 200000 > "$D/usr/lib/seq.txt"
head -c 131072 /dev/zero > "$D/usr/lib/zeros"
: > "$D/etc/empty.conf"
for i in $(seq 1 40); do printf 'line %d\n' "$i" > "$D/etc/ssl/cert$i.pem"; done
printf 'name with spaces\n' > "$D/etc/with space"
ln -s ../a/b/x "$D/a-c/link"
ln -s /nonexistent/abs "$D/dangling"
mkfifo "$D/dev/fifo"
chmod 4755 "$D/a/b/x"; chmod 0600 "$D/etc/ssl/cert7.pem"; chmod 1777 "$D/empty"
if [ "$(id -u)" = 0 ]; then
	mknod "$D/dev/null" c 1 3
	mknod "$D/dev/sda1" b 8 1
	chown 1000:2000 "$D/usr/lib/x86_64/libbig.so.1"
	chown 65534:65534 "$D/etc/ssl"
fi

note "build with ingot's writer and with gensquashfs"
"$TOOL" -s "$T/store" -m $EPOCH -j 2 "$D" "$T/ingot.sqfs" > "$T/info"
gensquashfs -q -D "$D" -d mtime=$EPOCH -c zstd -j 1 "$T/gen.sqfs"
size=$(stat -c %s "$T/ingot.sqfs")
assert_eq 0 $((size % 4096)) "image size multiple of 4096"

note "unsquashfs -lln lists the source tree, owners and mtimes"
when=$(date -d @$EPOCH '+%Y-%m-%d %H:%M')
unsquashfs -lln "$T/ingot.sqfs" > "$T/ours.full" || fail "unsquashfs -lln failed"
grep squashfs-root "$T/ours.full" > "$T/ours.lln"
# mode, owner, path from the source tree (find), mtime forced to the epoch
(cd "$D" && find . -printf '%M %U/%G %p\n') | sed 's| \./| squashfs-root/|; s| \.$| squashfs-root|' |
	LC_ALL=C sort -k3 > "$T/want"
sed -E 's/^(\S+) (\S+) .* [0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2} (squashfs-root.*)$/\1 \2 \3/; s/ -> .*//' "$T/ours.lln" |
	LC_ALL=C sort -k3 > "$T/got"
diff -u "$T/want" "$T/got" || fail "unsquashfs listing differs from the source tree"
bad=$(grep -v " $when squashfs-root" "$T/ours.lln" || true)
[ -z "$bad" ] || fail "mtime not $when: $bad"
grep -q 'squashfs-root/a-c/link -> ../a/b/x$' "$T/ours.lln" || fail "symlink target"
if [ "$(id -u)" = 0 ]; then
	grep -q '^crw-r--r-- 0/0 *1, *3 ' "$T/ours.lln" || fail "char device 1,3"
	grep -q '^-rw-r--r-- 1000/2000 *300000 ' "$T/ours.lln" || fail "owner 1000/2000"
fi
# gensquashfs' image lists the same (no nlink in -lln: see docs/image.md)
unsquashfs -lln "$T/gen.sqfs" | grep squashfs-root > "$T/gen.lln"
diff -u "$T/gen.lln" "$T/ours.lln" || fail "listing differs from gensquashfs'"

note "sqfs2tar reads it; contents and tar metadata match the source"
sqfs2tar "$T/ingot.sqfs" > "$T/img.tar" || fail "sqfs2tar failed"
tar --numeric-owner --full-time -tvf "$T/img.tar" > "$T/tar.lst"
bad=$(awk -v w="$(date -d @$EPOCH '+%Y-%m-%d %H:%M:%S')" '$4" "$5 != w' "$T/tar.lst")
[ -z "$bad" ] || fail "tar mtimes not the epoch: $bad"
mkdir "$T/x"
tar -C "$T/x" -xf "$T/img.tar"
listing() { (cd "$1" && find . -printf '%y %m %U/%G %s %l %p\n' | grep -v '^d' | LC_ALL=C sort -k7); }
diff -u <(listing "$D") <(listing "$T/x") || fail "sqfs2tar entries differ from the source"
(cd "$D" && find . -type f -exec sha256sum {} + | LC_ALL=C sort -k2) > "$T/src.sums"
(cd "$T/x" && sha256sum -c --quiet "$T/src.sums") || fail "sqfs2tar contents differ"

note "unsquashfs-extracted files hash to what ingot inspect prints"
unsquashfs -q -n -d "$T/u" "$T/ingot.sqfs" >/dev/null 2>&1 || true
"$INGOT" inspect "$T/ingot.sqfs" > "$T/inspect.txt"
n=0
while read -r mode owner fsize sha path; do
	[ "${mode:0:1}" = - ] || continue
	assert_eq "$(sha256 "$T/u$path")" "$sha" "sha256 of $path"
	assert_eq "$(stat -c %s "$T/u$path")" "$fsize" "size of $path"
	n=$((n + 1))
done < <(grep -v ' -> ' "$T/inspect.txt" | grep -v 'with space')
[ "$n" -ge 40 ] || fail "expected >= 40 files checked, got $n"
assert_eq "$(sha256 "$D/etc/with space")" \
	"$(grep ' /etc/with space$' "$T/inspect.txt" | cut -d' ' -f4)" "sha256 of a name with a space"
assert_eq "$(wc -l < "$T/inspect.txt")" "$(( $(wc -l < "$T/ours.lln") - 1 ))" "inspect lines"

note "superblock, data and fragments byte-identical to gensquashfs; size within 1 %"
itab=$(od -An -t u8 -j 64 -N 8 "$T/ingot.sqfs" | tr -d ' ')
gtab=$(od -An -t u8 -j 64 -N 8 "$T/gen.sqfs" | tr -d ' ')
assert_eq "$gtab" "$itab" "inode_table_start"
# magic .. version (the table offsets after them move with directory nlink)
cmp -n 32 "$T/ingot.sqfs" "$T/gen.sqfs" >/dev/null || fail "superblock fields differ"
cmp -i 96:96 -n $((itab - 96)) "$T/ingot.sqfs" "$T/gen.sqfs" || fail "data blocks differ"
gsize=$(stat -c %s "$T/gen.sqfs")
diff=$(( size > gsize ? size - gsize : gsize - size ))
[ $((diff * 100)) -le "$gsize" ] || fail "size $size vs gensquashfs $gsize: more than 1 % apart"
echo "ok: ingot $size bytes, gensquashfs $gsize bytes"

note "every compressor a recipe accepts gives images unsquashfs and sqfs2tar read"
# Many incompressible names: metadata blocks that do not shrink (libsquashfs'
# LZ4 stored them "compressed" and larger, and unsquashfs refused the image).
M=$T/meta
mkdir -p "$M/d"
for i in $(seq 1 300); do prand 3 $((i + 7)) > "$M/d/$(prand 24 "$i" | od -An -tx1 | tr -d ' \n')"; done
(cd "$M" && find . -type f -exec sha256sum {} + | LC_ALL=C sort -k2) > "$T/meta.sums"
for c in zstd xz gzip lz4; do
	rm -rf "$T/mu" "$T/mt"
	"$TOOL" -s "$T/store" -m $EPOCH -c $c "$M" "$T/$c.sqfs" > /dev/null || fail "$c: build failed"
	unsquashfs -q -n -d "$T/mu" "$T/$c.sqfs" > /dev/null 2>&1 || fail "$c: unsquashfs refuses the image"
	(cd "$T/mu" && sha256sum -c --quiet "$T/meta.sums") || fail "$c: unsquashfs contents differ"
	mkdir "$T/mt"
	sqfs2tar "$T/$c.sqfs" | tar -C "$T/mt" -xf - || fail "$c: sqfs2tar refuses the image"
	(cd "$T/mt" && sha256sum -c --quiet "$T/meta.sums") || fail "$c: sqfs2tar contents differ"
done
echo "ok: zstd, xz, gzip, lz4 read back by unsquashfs and sqfs2tar"
