#!/bin/bash
# .tar.gz artifacts are decompressed by ingot (ISA-L, builder/gunzip.c)
# and read as plain tar: GNU gzip's output, a file of several gzip members
# (as `cat a.gz b.gz` makes) and one with bytes after its member give the
# image the plain tar gives; a bad CRC-32 or size in a trailer, even after
# tar's end marker, and a cut stream fail the build with a message.  So
# do headers gzip -t refuses (reserved flag bits, another method, a wrong
# FHCRC), in any member, while FNAME, FCOMMENT and FEXTRA longer than
# gunzip's buffer build, the same every run.
. "$(dirname "$0")/lib.sh"
command -v gzip >/dev/null || skip "no gzip"
cd "$T"
python3 - <<'PY'
import io, random, tarfile
r = random.Random(5)
def add(t, path, data):
    ti = tarfile.TarInfo(path)
    ti.size, ti.mode, ti.mtime = len(data), 0o644, 1
    t.addfile(ti, io.BytesIO(data))
with tarfile.open("plain.tar", "w", format=tarfile.GNU_FORMAT) as t:
    for i in range(40):
        add(t, f"usr/lib/f{i}", bytes(r.choice(b"nccl cuda \n") for _ in range(r.randrange(1, 90000))))
# the same members split in two tars whose concatenation (minus the first
# one's end marker) is the plain tar: tar reads the second part on
data = open("plain.tar", "rb").read()
cut = 512 * 40
open("part1", "wb").write(data[:cut])
open("part2", "wb").write(data[cut:])
PY
gzip -9 -n -c plain.tar >one.tar.gz
{ gzip -1 -n -c part1; gzip -6 -n -c part2; } >two.tar.gz
{ cat one.tar.gz; printf 'not a member'; } >trailing.tar.gz
recipe() { # recipe NAME FILE
	{ recipe_head gz; cat <<EOR; } >"$1.yaml"
artifacts:
  - name: a
    kind: tar
    source: $2
    sha256: $(sha256 "$2")
EOR
}
build() { "$INGOT" build "$1.yaml" -o "out-$1" --store store --no-lint -q; }
for n in plain one two trailing; do
	f=$n.tar.gz
	[ "$n" = plain ] && f=plain.tar
	recipe "$n" "$f"
	build "$n" || fail "build of $f failed"
done
want=$(sha256 out-plain/gz.sqfs)
for n in one two trailing; do
	assert_eq "$want" "$(sha256 "out-$n/gz.sqfs")" "image from $n.tar.gz against the plain tar"
done
unsquashfs -q -d x out-two/gz.sqfs >/dev/null && cmp -s x/usr/lib/f39 <(tar -xOf plain.tar usr/lib/f39) ||
	fail "unsquashfs of the two-member image: usr/lib/f39 differs"

note "damaged trailers and a cut stream"
python3 - <<'PY'
d = bytearray(open("one.tar.gz", "rb").read())
crc = bytearray(d); crc[-8] ^= 1; open("crc.tar.gz", "wb").write(crc)
size = bytearray(d); size[-2] ^= 1; open("size.tar.gz", "wb").write(size)
open("cut.tar.gz", "wb").write(d[:len(d) * 2 // 3])
# the second member's trailer: after tar's end marker, which is in part 2
t = bytearray(open("two.tar.gz", "rb").read()); t[-7] ^= 0x40; open("crc2.tar.gz", "wb").write(t)
PY
for n in crc size crc2; do
	recipe "$n" "$n.tar.gz"
	expect_exit 1 "gzip: the trailer does not match the data (CRC-32 or size)" build "$n"
	assert_contains "$OUT" "ingot: a: " "the artifact named"
	assert_no_file "out-$n/gz.sqfs"
done
# 4 MiB of zeros after tar's end marker, then a bad trailer: refused
# whoever reads that far (libarchive 3.6 reads on to the end of the stream;
# unpack_source_finish checks what it leaves, test_gunzip covers that)
{ cat plain.tar; head -c 4194304 /dev/zero; } | gzip -n -c >late.tar.gz
python3 -c 'import sys; d = bytearray(open("late.tar.gz", "rb").read()); d[-8] ^= 1; open("late.tar.gz", "wb").write(d)'
recipe late late.tar.gz
expect_exit 1 "a: late.tar.gz: gzip: the trailer does not match the data" build late
recipe cut cut.tar.gz
expect_exit 1 "unexpected end of data (truncated or corrupt archive)" build cut
note "headers: a 1 MiB FNAME, all fields and FHCRC; reserved flags, method, FHCRC"
# members made here from plain.tar's deflate data (GNU gzip writes no
# FEXTRA, FCOMMENT or FHCRC): gzip -t takes the good ones and refuses
# the bad ones, as ingot must
python3 - <<'PY'
import struct, zlib
raw = open("plain.tar", "rb").read()
c = zlib.compressobj(6, zlib.DEFLATED, -15)
body = c.compress(raw) + c.flush() + struct.pack("<II", zlib.crc32(raw), len(raw))
def member(flg, extra=b"", name=b"", comment=b"", hcrc=True, cm=8):
    h = bytes([0x1f, 0x8b, cm, flg, 0, 0, 0, 0, 0, 3])
    if flg & 4: h += struct.pack("<H", len(extra)) + extra
    if flg & 8: h += name + b"\0"
    if flg & 16: h += comment + b"\0"
    if flg & 2: h += struct.pack("<H", (zlib.crc32(h) ^ (0 if hcrc else 1)) & 0xffff)
    return h + body
open("fname.tar.gz", "wb").write(member(8, name=b"n" * (1 << 20)))
open("fields.tar.gz", "wb").write(member(0x1e, extra=b"x" * 65535, name=b"n" * 300000, comment=b"c" * 300000))
open("reserved.tar.gz", "wb").write(member(0x28, name=b"f"))
open("method.tar.gz", "wb").write(member(0, cm=7))
open("hcrc.tar.gz", "wb").write(member(0x0a, name=b"f", hcrc=False))
open("second.tar.gz", "wb").write(open("one.tar.gz", "rb").read() + member(0x80))
PY
for n in fname fields; do
	gzip -t "$n.tar.gz" || fail "gzip -t refuses $n.tar.gz"
	recipe "$n" "$n.tar.gz"
	# the same verdict every run (it once depended on ISA-L's stack)
	for i in 1 2 3; do
		rm -rf "out-$n"
		build "$n" || fail "build of $n.tar.gz failed (run $i)"
		assert_eq "$want" "$(sha256 "out-$n/gz.sqfs")" "image from $n.tar.gz against the plain tar"
	done
done
for c in "reserved:member 1: header: reserved flag bits set (FLG 0x28" \
	 "method:member 1: header: compression method 7, expected 8 (deflate)" \
	 "hcrc:member 1: header: CRC-16 (FHCRC) is" \
	 "second:member 2: header: reserved flag bits set (FLG 0x80"; do
	n=${c%%:*}
	! gzip -t "$n.tar.gz" 2>/dev/null || fail "gzip -t takes $n.tar.gz"
	recipe "$n" "$n.tar.gz"
	expect_exit 1 "ingot: a: $n.tar.gz: gzip: ${c#*:}" build "$n"
	assert_eq 1 "$(printf '%s\n' "$OUT" | grep -c .)" "one line for $n.tar.gz"
	assert_no_file "out-$n/gz.sqfs"
done
echo "gzip: ok"
