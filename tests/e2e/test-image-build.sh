#!/bin/bash
# The image and hash tree `ingot build` writes for the demo recipe, read by
# tools nobody here wrote: unsquashfs, sqfs2tar and veritysetup agree with
# the manifest on every path, mode, owner, mtime (= epoch) and content
# digest, and on the verity root; `ingot inspect --json` lists exactly the
# manifest's files.
. "$(dirname "$0")/lib.sh"
for t in unsquashfs sqfs2tar veritysetup python3; do
	command -v $t >/dev/null || skip "$t not installed"
done
[ -x "$SRC/scripts/gen-artifacts.sh" ] || skip "no scripts/gen-artifacts.sh"

mkdir -p "$T/r"
INGOT_DEMO_ONLY=1 "$SRC/scripts/gen-artifacts.sh" "$BUILD_DIR" "$T/r/artifacts" >/dev/null
cp "$SRC/recipes/demo.yaml" "$T/r/"
"$INGOT" build "$T/r/demo.yaml" -o "$T/out" --store "$T/store" --date 2026-10-15 >/dev/null
M=$T/out/demo-h100.manifest.json
IMG=$T/out/demo-h100.sqfs
VER=$T/out/demo-h100.verity
assert_file "$M"; assert_file "$IMG"; assert_file "$VER"

note "unsquashfs extraction, sqfs2tar and ingot inspect against the manifest"
unsquashfs -q -n -d "$T/u" "$IMG" >/dev/null 2>&1 || true
[ -d "$T/u" ] || fail "unsquashfs extracted nothing"
TZ=UTC unsquashfs -lln "$IMG" > "$T/lln" || fail "unsquashfs -lln failed"
sqfs2tar "$IMG" > "$T/img.tar" || fail "sqfs2tar failed"
tar --numeric-owner --full-time -tvf "$T/img.tar" > "$T/tar.lst"
"$INGOT" inspect --json "$IMG" > "$T/inspect.json"
python3 - "$M" "$T/u" "$T/lln" "$T/tar.lst" "$T/inspect.json" <<'PY' || fail "image and manifest disagree"
import datetime, hashlib, json, os, stat, sys
m = json.load(open(sys.argv[1])); root = sys.argv[2]
epoch = m["epoch"]
when = datetime.datetime.fromtimestamp(epoch, datetime.timezone.utc)
files = {f["path"]: f for f in m["files"]}
# unsquashfs extraction: every path, type, mode, content
seen = {}
for dp, dns, fns in os.walk(root):
    for n in dns + fns:
        p = os.path.join(dp, n); seen["/" + os.path.relpath(p, root)] = os.lstat(p)
assert set(seen) == set(files), sorted(set(seen) ^ set(files))
kinds = {"dir": stat.S_ISDIR, "file": stat.S_ISREG, "symlink": stat.S_ISLNK}
for path, f in files.items():
    st = seen[path]
    assert kinds[f["type"]](st.st_mode), (path, f["type"])
    if f["type"] != "symlink":
        assert "%04o" % stat.S_IMODE(st.st_mode) == f["mode"], (path, f["mode"])
    if f["type"] == "file":
        d = hashlib.sha256(open(root + path, "rb").read()).hexdigest()
        assert d == f["sha256"] and st.st_size == f["size"], path
    if f["type"] == "symlink":
        assert os.readlink(root + path) == f["target"], path
# unsquashfs -lln: owners and mtimes
stamp = when.strftime("%Y-%m-%d %H:%M")
n = 0
for line in open(sys.argv[3]):
    if "squashfs-root/" not in line:
        continue
    head, path = line.rstrip("\n").split(" squashfs-root", 1)
    path = path.split(" -> ")[0]
    f = files[path]; n += 1
    assert head.split()[1] == "%d/%d" % (f["uid"], f["gid"]), line
    assert head.endswith(stamp), (line, stamp)
assert n == len(files), (n, len(files))
# sqfs2tar: owners and mtimes
tstamp = when.strftime("%Y-%m-%d %H:%M:%S")
n = 0
for line in open(sys.argv[4]):
    parts = line.split()
    path = "/" + line.split(tstamp + " ", 1)[1].rstrip("\n").split(" -> ")[0].rstrip("/")
    if path == "/.":
        continue
    f = files[path]; n += 1
    assert parts[1] == "%d/%d" % (f["uid"], f["gid"]), line
assert n == len(files), (n, len(files))
# ingot inspect --json lists the manifest's files, field for field
ins = json.load(open(sys.argv[5]))
got = [{k: v for k, v in f.items() if k not in ("mtime", "major", "minor")} for f in ins["files"]]
assert got == m["files"], "inspect --json differs from manifest files"
assert all(f["mtime"] == epoch for f in ins["files"])
assert ins["image"]["mtime"] == epoch and ins["image"]["size"] == m["image"]["size"]
assert ins["image"]["compression"] == m["image"]["compression"]
assert ins["image"]["block_size"] == m["image"]["block_size"]
print("manifest ok:", len(files), "entries")
PY

note "veritysetup agrees with the manifest's verity section"
val() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))$1)" "$M"; }
ROOT=$(val '["verity"]["root_hash"]')
assert_eq "$(sha256 "$IMG")" "$(val '["image"]["sha256"]')" "image sha256"
veritysetup verify "$IMG" "$VER" "$ROOT" || fail "veritysetup verify refused the built tree"
cp "$IMG" "$T/copy.sqfs"
veritysetup format --salt="$(val '["verity"]["salt"]')" --uuid="$(val '["verity"]["uuid"]')" \
	"$T/copy.sqfs" "$T/theirs.verity" > "$T/fmt"
assert_eq "$ROOT" "$(sed -n 's/^Root hash:[[:space:]]*//p' "$T/fmt")" "veritysetup format root"
cmp "$T/theirs.verity" "$VER" || fail "hash file differs from veritysetup's"
