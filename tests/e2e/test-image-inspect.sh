#!/bin/bash
# `ingot inspect`: help, usage errors, the text and JSON listings against
# unsquashfs' extraction, and one clear line for truncated, corrupted or
# foreign files.
. "$(dirname "$0")/lib.sh"
# Deterministic incompressible bytes: prand COUNT SEED
prand() { openssl enc -aes-128-ctr -K "$(printf %032x "$2")" -iv 0 < /dev/zero 2>/dev/null | head -c "$1"; }
TOOL=$BUILD_DIR/tools/sqfs-from-dir
[ -x "$TOOL" ] || skip "no $TOOL (make first)"

expect_exit 0 "SYNOPSIS" "$INGOT" inspect --help
for s in NAME DESCRIPTION OPTIONS "EXIT STATUS" EXAMPLES; do assert_contains "$OUT" "$s"; done
expect_exit 64 "expected one IMAGE" "$INGOT" inspect
expect_exit 64 "unknown option" "$INGOT" inspect --bogus x
expect_exit 64 "" "$INGOT" inspect a b

mkdir -p "$T/src/etc" "$T/src/bin"
printf 'root:x:0:0::/root:/bin/sh\n' > "$T/src/etc/passwd"
prand 200000 1 > "$T/src/bin/tool"
chmod 0755 "$T/src/bin/tool"
ln -s tool "$T/src/bin/alias"
printf 'x' > "$T/src/"$'new\nline'
"$TOOL" -s "$T/store" -m 86400 -b 16384 --all-root "$T/src" "$T/img.sqfs" >/dev/null

note "text listing"
expect_exit 0 "" "$INGOT" inspect "$T/img.sqfs"
echo "$OUT"
assert_contains "$OUT" "-rwxr-xr-x 0/0 200000 $(sha256 "$T/src/bin/tool") /bin/tool"
assert_contains "$OUT" "lrwxrwxrwx 0/0 0 - /bin/alias -> tool"
assert_contains "$OUT" "drwxr-xr-x 0/0 0 - /etc"
assert_contains "$OUT" "/new\\012line"
assert_eq "/bin /bin/alias /bin/tool /etc /etc/passwd /new\\012line" \
	"$(echo "$OUT" | awk '{print $5}' | tr '\n' ' ' | sed 's/ $//')" "paths in byte order"

note "JSON listing matches unsquashfs' extraction"
"$INGOT" inspect --json "$T/img.sqfs" > "$T/l.json"
unsquashfs -q -n -d "$T/u" "$T/img.sqfs" >/dev/null 2>&1 || true
python3 - "$T/l.json" "$T/u" <<'PY' || fail "JSON listing differs from the extraction"
import hashlib, json, os, stat, sys
doc = json.load(open(sys.argv[1])); root = sys.argv[2]
assert doc["image"]["compression"] == "zstd" and doc["image"]["block_size"] == 16384, doc["image"]
assert doc["image"]["mtime"] == 86400 and doc["image"]["root"]["mode"] == "0755", doc["image"]
paths = [f["path"] for f in doc["files"]]
assert paths == sorted(paths, key=lambda p: p.encode()), paths
seen = set()
for dp, dns, fns in os.walk(root):
    for n in dns + fns:
        seen.add("/" + os.path.relpath(os.path.join(dp, n), root))
assert seen == set(paths), (seen, paths)
for f in doc["files"]:
    p = root + f["path"]; st = os.lstat(p)
    assert f["mode"] == "%04o" % stat.S_IMODE(st.st_mode), f
    assert f["uid"] == 0 and f["gid"] == 0 and f["mtime"] == 86400, f
    if f["type"] == "file":
        assert f["sha256"] == hashlib.sha256(open(p, "rb").read()).hexdigest(), f
        assert f["size"] == st.st_size, f
    if f["type"] == "symlink":
        assert f["target"] == os.readlink(p), f
print("json ok:", len(paths), "entries")
PY

note "damaged and foreign files: exit 1, one line"
size=$(stat -c %s "$T/img.sqfs")
head -c $((size - 8192)) "$T/img.sqfs" > "$T/trunc.sqfs"
expect_exit 1 "truncated" "$INGOT" inspect "$T/trunc.sqfs"
assert_eq 1 "$(echo "$OUT" | wc -l)" "one line"
head -c 100 /dev/zero > "$T/zero.sqfs"
expect_exit 1 "zero.sqfs" "$INGOT" inspect "$T/zero.sqfs"
assert_eq 1 "$(echo "$OUT" | wc -l)" "one line"
# damage the compressed inode table
cp "$T/img.sqfs" "$T/bad.sqfs"
itab=$(od -An -t u8 -j 64 -N 8 "$T/bad.sqfs" | tr -d ' ')
printf '\xff\xff\xff\xff\xff\xff\xff\xff' | dd of="$T/bad.sqfs" bs=1 seek=$((itab + 6)) conv=notrunc status=none
expect_exit 1 "bad.sqfs: corrupted inode table: compressor error" "$INGOT" inspect "$T/bad.sqfs"
assert_eq 1 "$(echo "$OUT" | wc -l)" "one line"
# /bin/tool is the first file and incompressible, so its first block is
# stored raw right after the 96-byte superblock: damage there shows in
# its digest (squashfs has no data checksums: that is dm-verity's job)
cp "$T/img.sqfs" "$T/bad2.sqfs"
printf '\x00\x01' | dd of="$T/bad2.sqfs" bs=1 seek=1000 conv=notrunc status=none
cmp -s "$T/img.sqfs" "$T/bad2.sqfs" && fail "damage did not change the image"
expect_exit 0 "/bin/tool" "$INGOT" inspect "$T/bad2.sqfs"
assert_ne "$(sha256 "$T/src/bin/tool")" "$(echo "$OUT" | awk '$5=="/bin/tool"{print $4}')" "damaged digest"
expect_exit 1 "No such file" "$INGOT" inspect "$T/missing.sqfs"
echo '{"schema": "ingot.manifest/v1"}' > "$T/m.json"
expect_exit 1 'recipe: missing, expected an object' "$INGOT" inspect "$T/m.json"
