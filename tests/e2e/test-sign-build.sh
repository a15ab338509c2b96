#!/bin/bash
# The signed manifest of a real build (recipes/demo.yaml): two builds give
# byte-identical manifests and Ed25519 envelopes; the manifest's digests
# agree with sha256sum, unsquashfs(1) and veritysetup(8); the envelope
# verifies with the image and verity tree and refuses a swapped image.
. "$(dirname "$0")/lib.sh"
command -v unsquashfs >/dev/null || skip "unsquashfs not installed"
command -v veritysetup >/dev/null || skip "veritysetup not installed"
[ -f "$SRC/recipes/demo.yaml" ] || skip "recipes/demo.yaml not present"

"$INGOT" keys generate -o "$T/rel" >/dev/null
"$INGOT" keys generate --type p256 -o "$T/backup" >/dev/null
"$INGOT" keys keyring add "$T/ring.json" "$T/rel.pub" --name release >/dev/null
"$INGOT" keys keyring add "$T/ring.json" "$T/backup.pub" --name backup >/dev/null

# build OUTDIR: the demo recipe, signed with rel.key, each with its own store
RECIPE=$SRC/recipes/demo.yaml
build() {
	# --no-lint: the tuple rules are tested elsewhere; this test is about the manifest.
	"$INGOT" build "$RECIPE" -o "$1" --store "$1.store" --key "$T/rel.key" --no-lint --quiet >"$1.log" 2>&1
}
# The artifacts are generated files (make demo-artifacts); reuse them when
# they match the pins, else generate a private copy.
if ! build "$T/out1"; then
	note "generating demo artifacts"
	mkdir -p "$T/recipes"
	cp "$SRC/recipes/demo.yaml" "$T/recipes/"
	"$SRC/scripts/gen-artifacts.sh" "$BUILD_DIR" "$T/recipes/artifacts" >/dev/null 2>&1 \
		|| fail "scripts/gen-artifacts.sh failed"
	RECIPE=$T/recipes/demo.yaml
	rm -rf "$T/out1" "$T/out1.store"
	build "$T/out1" || fail "ingot build failed: $(cat "$T/out1.log")"
fi
build "$T/out2" || fail "second ingot build failed: $(cat "$T/out2.log")"

N=demo-h100
O=$T/out1
assert_file "$O/$N.manifest.dsse.json"

note "determinism"
cmp "$O/$N.manifest.json" "$T/out2/$N.manifest.json" || fail "manifests differ between builds"
cmp "$O/$N.manifest.dsse.json" "$T/out2/$N.manifest.dsse.json" || fail "envelopes differ between builds"
# signing the manifest again gives the same envelope as the build did
"$INGOT" sign "$O/$N.manifest.json" --key "$T/rel.key" -o "$T/resigned.json" >/dev/null
cmp "$O/$N.manifest.dsse.json" "$T/resigned.json" || fail "ingot sign differs from ingot build --key"

note "digests against real tools"
unsquashfs -q -n -d "$T/root" "$O/$N.sqfs" >/dev/null || fail "unsquashfs cannot extract the image"
python3 - "$O/$N.manifest.json" "$O/$N.sqfs" "$T/root" <<'PY' || fail "manifest disagrees with the image"
import hashlib, json, os, stat, sys
m = json.load(open(sys.argv[1]))
img, root = sys.argv[2], sys.argv[3]
def die(msg):
    print(msg); sys.exit(1)
data = open(img, "rb").read()
if m["image"]["sha256"] != hashlib.sha256(data).hexdigest(): die("image.sha256")
if m["image"]["size"] != len(data): die("image.size")
paths = [f["path"] for f in m["files"]]
if paths != sorted(paths, key=lambda p: p.encode()): die("files not sorted")
on_disk = set()
for d, dirs, files in os.walk(root):
    for n in dirs + files:
        on_disk.add(os.path.join(d, n)[len(root):])
if set(paths) != on_disk: die("file sets differ: %s" % sorted(set(paths) ^ on_disk))
for f in m["files"]:
    p = root + f["path"]
    st = os.lstat(p)
    kind = {stat.S_IFDIR: "dir", stat.S_IFREG: "file", stat.S_IFLNK: "symlink"}.get(stat.S_IFMT(st.st_mode), "?")
    if kind != f["type"]: die("%s: type %s vs %s" % (f["path"], kind, f["type"]))
    if kind != "symlink" and "%04o" % stat.S_IMODE(st.st_mode) != f["mode"]: die("%s: mode" % f["path"])
    if kind == "file":
        b = open(p, "rb").read()
        if hashlib.sha256(b).hexdigest() != f["sha256"] or len(b) != f["size"]: die("%s: content" % f["path"])
    if kind == "symlink" and os.readlink(p) != f["target"]: die("%s: target" % f["path"])
print("checked %d entries" % len(paths))
PY
ROOT=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["verity"]["root_hash"])' "$O/$N.manifest.json")
veritysetup verify "$O/$N.sqfs" "$O/$N.verity" "$ROOT" || fail "veritysetup rejects the manifest's root hash"

note "verify-manifest"
NOW=--now=2026-01-01T00:00:00Z
expect_exit 0 "OK: demo-h100 serial 1, 1 of 1 required signatures (release)" \
	"$INGOT" verify-manifest "$O/$N.manifest.dsse.json" --keyring "$T/ring.json" $NOW \
	--image "$O/$N.sqfs" --verity "$O/$N.verity" --state "$T/state.json"
assert_contains "$OUT" "verity root matches"
expect_exit 0 "" "$INGOT" verify-manifest "$O/$N.manifest.dsse.json" --keyring "$T/ring.json" $NOW \
	--print-manifest
printf '%s\n' "$OUT" | cmp - "$O/$N.manifest.json" || fail "--print-manifest differs from the manifest"
expect_exit 4 "manifest expired at 2027-04-01T00:00:00Z" \
	"$INGOT" verify-manifest "$O/$N.manifest.dsse.json" --keyring "$T/ring.json" --now 2027-04-01T00:00:00Z
cp "$O/$N.sqfs" "$T/swapped.sqfs"
printf '\1' | dd of="$T/swapped.sqfs" bs=1 seek=100 conv=notrunc status=none
expect_exit 6 "swapped.sqfs: sha256" "$INGOT" verify-manifest "$O/$N.manifest.dsse.json" \
	--keyring "$T/ring.json" $NOW --image "$T/swapped.sqfs"

note "a second signer"
cp "$O/$N.manifest.dsse.json" "$T/two.json"
# the file list travels beside the envelope (bound by its digest)
cp "$O/$N.manifest.json" "$T/"
"$INGOT" sign "$T/two.json" --key "$T/backup.key" >/dev/null
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); r["threshold"]=2; json.dump(r, open(sys.argv[1], "w"))' "$T/ring.json"
expect_exit 3 "threshold 2" "$INGOT" verify-manifest "$O/$N.manifest.dsse.json" --keyring "$T/ring.json" $NOW
expect_exit 0 "2 of 2 required signatures (release, backup)" \
	"$INGOT" verify-manifest "$T/two.json" --keyring "$T/ring.json" $NOW

# ingot inspect describes the manifest and the envelope (signers unverified)
KEYID=$("$INGOT" keys id "$T/rel.pub" | cut -d" " -f1)
IMG_SHA=$(sha256 "$O/$N.sqfs")
expect_exit 0 "$IMG_SHA" "$INGOT" inspect "$O/$N.manifest.json"
expect_exit 0 "$KEYID" "$INGOT" inspect "$T/two.json"
assert_contains "$OUT" "not verified" "inspect envelope"
"$INGOT" inspect --json "$T/two.json" | python3 -c 'import json,sys; json.load(sys.stdin)' \
	|| fail "inspect --json of an envelope is not JSON"
echo "signed build ok"
