#!/bin/bash
# Reproducibility of `ingot build` on the demo recipe: two builds with a
# different TZ, locale, umask, wall clock, store and worker count give
# byte-identical outputs (image, verity, manifest, signed envelope); tars
# of the same tree written by GNU tar in another order, with other owners
# and times, give the same image; a changed epoch changes the image; a
# changed artifact byte is refused for its pin and leaves no output.
. "$(dirname "$0")/lib.sh"

note "generate the demo artifacts"
mkdir -p "$T/r"
INGOT_DEMO_ONLY=1 "$SRC/scripts/gen-artifacts.sh" "$BUILD_DIR" "$T/r/artifacts" >/dev/null
cp "$SRC/recipes/demo.yaml" "$T/r/demo.yaml"
"$INGOT" keys generate -o "$T/k" >/dev/null

build() { # build OUT STORE WORKERS TZ LC_ALL UMASK
	(cd "$T" && umask "$6" && TZ=$4 LC_ALL=$5 "$INGOT" build r/demo.yaml -o "$1" --store "$2" \
		--workers "$3" --key "$T/k.key" --no-lint --quiet)
}
NAMES="demo-h100.sqfs demo-h100.verity demo-h100.manifest.json demo-h100.spdx.json demo-h100.manifest.dsse.json"

note "build A: UTC, C, umask 022, 1 worker"
build "$T/a" "$T/store-a" 1 UTC C 022
sleep 1
note "build B: Asia/Kolkata, C.UTF-8, umask 077, 2 workers, other store"
build "$T/b" "$T/store-b" 2 Asia/Kolkata C.UTF-8 077
note "build C: warm store (listings from the unpack cache)"
build "$T/c" "$T/store-a" 2 America/New_York C 027
# Another filesystem: on tmpfs the image's drop-behind and its O_DIRECT
# read-back (image/sqfs-io.c, image/verity.c) act differently (older
# kernels refuse O_DIRECT there: the cached read is used), same bytes
D="$T/c"
if [ -w /dev/shm ] && [ "$(stat -f -c %T /dev/shm)" = tmpfs ]; then
	note "build D: output on tmpfs"
	D=$(mktemp -d /dev/shm/ingot-repro.XXXXXX)
	build "$D/d" "$T/store-d" 2 UTC C 022
	D="$D/d"
fi
for n in $NAMES; do
	assert_file "$T/a/$n"
	assert_eq "$(sha256 "$T/a/$n")" "$(sha256 "$D/$n")" "$n on tmpfs"
	if [ "$(sha256 "$T/a/$n")" != "$(sha256 "$T/b/$n")" ] || [ "$(sha256 "$T/a/$n")" != "$(sha256 "$T/c/$n")" ]; then
		if command -v diffoscope >/dev/null; then diffoscope "$T/a/$n" "$T/b/$n" | head -n 60 || true; fi
		fail "$n differs between builds"
	fi
done
case $D in /dev/shm/*) rm -rf "${D%/d}" ;; esac
assert_eq "-rw-r--r--" "$(stat -c %A "$T/b/demo-h100.sqfs")" "output mode under umask 077"
ls -A "$T/a" | sort >"$T/list"
assert_eq "$(printf '%s\n' $NAMES | sort)" "$(cat "$T/list")" "output files (no temporaries left)"

note "image is readable by unsquashfs and the verity tree by veritysetup"
root=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["verity"]["root_hash"])' "$T/a/demo-h100.manifest.json")
veritysetup verify "$T/a/demo-h100.sqfs" "$T/a/demo-h100.verity" "$root" || fail "veritysetup verify"
# the whole image, as unsquashfs sees it: mode, owner, path (-> target)
list_image() {
	unsquashfs -lln "$1" | awk '{l=$1" "$2" "$6; if ($7=="->") l=l" -> "$8; print l}' |
		sed 's| squashfs-root| |; s|^\(.*\) $|\1 /|' | sed 's|  /|/|'
}
list_image "$T/a/demo-h100.sqfs" >"$T/listing"
cat >"$T/expected" <<'EOF'
drwxr-xr-x 0/0 /
drwxr-xr-x 0/0 /etc
drwxr-xr-x 0/0 /etc/ingot
-rw-r--r-- 0/0 /etc/ingot/pool
drwxr-xr-x 0/0 /etc/modprobe.d
-rw-r--r-- 0/0 /etc/modprobe.d/nvidia.conf
drwxr-xr-x 0/0 /etc/nvidia-container-runtime
-rw-r----- 0/0 /etc/nvidia-container-runtime/config.toml
drwxr-xr-x 0/0 /etc/systemd
drwxr-xr-x 0/0 /etc/systemd/system
drwxr-xr-x 0/0 /etc/systemd/system/multi-user.target.wants
lrwxrwxrwx 0/0 /etc/systemd/system/multi-user.target.wants/nvidia-fabricmanager.service -> /lib/systemd/system/nvidia-fabricmanager.service
drwxr-xr-x 0/0 /lib
drwxr-xr-x 0/0 /lib/firmware
drwxr-xr-x 0/0 /lib/firmware/nvidia
drwxr-xr-x 0/0 /lib/firmware/nvidia/580.95.05
-rw-r--r-- 0/0 /lib/firmware/nvidia/580.95.05/gsp_ga10x.bin
-rw-r--r-- 0/0 /lib/firmware/nvidia/580.95.05/gsp_tu10x.bin
drwxr-xr-x 0/0 /lib/modules
drwxr-xr-x 0/0 /lib/modules/6.8.0-45-generic
drwxr-xr-x 0/0 /lib/modules/6.8.0-45-generic/kernel
drwxr-xr-x 0/0 /lib/modules/6.8.0-45-generic/kernel/drivers
drwxr-xr-x 0/0 /lib/modules/6.8.0-45-generic/kernel/drivers/video
-rw-r--r-- 0/0 /lib/modules/6.8.0-45-generic/kernel/drivers/video/nvidia-drm.ko
-rw-r--r-- 0/0 /lib/modules/6.8.0-45-generic/kernel/drivers/video/nvidia-modeset.ko
-rw-r--r-- 0/0 /lib/modules/6.8.0-45-generic/kernel/drivers/video/nvidia-peermem.ko
-rw-r--r-- 0/0 /lib/modules/6.8.0-45-generic/kernel/drivers/video/nvidia-uvm.ko
-rw-r--r-- 0/0 /lib/modules/6.8.0-45-generic/kernel/drivers/video/nvidia.ko
drwxr-xr-x 0/0 /lib/systemd
drwxr-xr-x 0/0 /lib/systemd/system
-rw-r--r-- 0/0 /lib/systemd/system/nvidia-fabricmanager.service
drwxr-xr-x 0/0 /run
drwxr-xr-x 0/0 /run/nvidia-fabricmanager
drwxr-xr-x 0/0 /usr
drwxr-xr-x 0/0 /usr/bin
-rwxr-xr-x 0/0 /usr/bin/nv-fabricmanager
-rwxr-xr-x 0/0 /usr/bin/nvidia-cdi-hook
-rwxr-xr-x 0/0 /usr/bin/nvidia-container-runtime
-rwxr-xr-x 0/0 /usr/bin/nvidia-container-runtime-hook
-rwxr-xr-x 0/0 /usr/bin/nvidia-ctk
drwxr-xr-x 0/0 /usr/lib
drwxr-xr-x 0/0 /usr/lib/x86_64-linux-gnu
lrwxrwxrwx 0/0 /usr/lib/x86_64-linux-gnu/libnccl.so -> libnccl.so.2
lrwxrwxrwx 0/0 /usr/lib/x86_64-linux-gnu/libnccl.so.2 -> libnccl.so.2.27.7
-rw-r--r-- 0/0 /usr/lib/x86_64-linux-gnu/libnccl.so.2.27.7
drwxr-xr-x 0/0 /usr/share
drwxr-xr-x 0/0 /usr/share/nvidia
drwxr-xr-x 0/0 /usr/share/nvidia/nvswitch
-rw-r--r-- 0/0 /usr/share/nvidia/nvswitch/fabricmanager.cfg
drwxr-xr-x 0/0 /var
drwxr-xr-x 0/0 /var/lib
drwx------ 0/0 /var/lib/ingot
EOF
diff -u "$T/expected" "$T/listing" || fail "image listing differs from the expected set"
# ... and the manifest lists exactly the same entries, modes and types
python3 - "$T/a/demo-h100.manifest.json" >"$T/mlist" <<'EOF'
import json, sys
t = {"dir": "d", "file": "-", "symlink": "l", "char": "c", "block": "b", "fifo": "p", "socket": "s"}
def perm(m):
    s = ""
    for i in range(3):
        b = (m >> (6 - 3 * i)) & 7
        s += ("r" if b & 4 else "-") + ("w" if b & 2 else "-") + ("x" if b & 1 else "-")
    return s
for f in json.load(open(sys.argv[1]))["files"]:
    line = t[f["type"]] + perm(int(f["mode"], 8)) + " %d/%d %s" % (f["uid"], f["gid"], f["path"])
    if f["type"] == "symlink":
        line += " -> " + f["target"]
    print(line)
EOF
grep -v ' /$' "$T/listing" | diff -u - "$T/mlist" || fail "manifest files differ from the image"
if grep -q "usr/share/doc\|/include" "$T/listing"; then fail "excluded paths reached the image"; fi
unsquashfs -q -d "$T/x" "$T/a/demo-h100.sqfs" >/dev/null
cmp "$T/x/lib/firmware/nvidia/580.95.05/gsp_ga10x.bin" "$T/r/artifacts/gsp_ga10x.bin" || fail "firmware content"
# every file's bytes, as unsquashfs extracts them, match the manifest's sha256
python3 - "$T/a/demo-h100.manifest.json" "$T/x" <<'EOF' || fail "extracted content differs from the manifest"
import hashlib, json, sys
bad = [f["path"] for f in json.load(open(sys.argv[1]))["files"] if f["type"] == "file" and
       hashlib.sha256(open(sys.argv[2] + f["path"], "rb").read()).hexdigest() != f["sha256"]]
print("\n".join(bad)); sys.exit(1 if bad else 0)
EOF
assert_eq "$(printf 'pool=demo-h100\ntuple=nvidia-580.95.05-open/cuda-13.0/nccl-2.27.7/ctk-1.17.8')" \
	"$(cat "$T/x/etc/ingot/pool")" "inline file"

note "the same tree archived by GNU tar in another order, owner and time: same image"
mkdir -p "$T/t1" "$T/t2"
(cd "$T/t1" && tar -xf "$T/r/artifacts/nvidia-open-kmod-580.95.05-6.8.0-45.tar.xz")
# recreate the tree in reverse order, other mtimes, then archive unsorted as another user
(cd "$T/t1" && find . -type d | sort -r | while read -r d; do mkdir -p "$T/t2/$d"; done
 find . -type f | sort -r | while read -r f; do cp "$f" "$T/t2/$f"; touch -d @$((RANDOM * 1000)) "$T/t2/$f"; done)
(cd "$T/t2" && tar --owner=4242 --group=4242 --mtime=@1234567890 -cJf "$T/r/artifacts/kmod-gnu.tar.xz" .)
new=$(sha256 "$T/r/artifacts/kmod-gnu.tar.xz")
old=$(sha256 "$T/r/artifacts/nvidia-open-kmod-580.95.05-6.8.0-45.tar.xz")
assert_ne "$old" "$new" "GNU tar bytes"
sed -e "s|nvidia-open-kmod-580.95.05-6.8.0-45.tar.xz|kmod-gnu.tar.xz|" -e "s|$old|$new|" \
	"$T/r/demo.yaml" >"$T/r/demo-gnu.yaml"
(cd "$T" && TZ=Europe/Berlin "$INGOT" build r/demo-gnu.yaml -o "$T/g" --store "$T/store-a" --no-lint --quiet)
assert_eq "$(sha256 "$T/a/demo-h100.sqfs")" "$(sha256 "$T/g/demo-h100.sqfs")" "image from GNU-tar artifact"

note "a different epoch gives a different image"
sed 's/^epoch: 1760000000/epoch: 1760000001/' "$T/r/demo.yaml" >"$T/r/demo-epoch.yaml"
(cd "$T" && "$INGOT" build r/demo-epoch.yaml -o "$T/e" --store "$T/store-a" --no-lint --quiet)
assert_ne "$(sha256 "$T/a/demo-h100.sqfs")" "$(sha256 "$T/e/demo-h100.sqfs")" "image digest after epoch change"

note "SOURCE_DATE_EPOCH is ignored unless the recipe allows it"
(cd "$T" && SOURCE_DATE_EPOCH=1 "$INGOT" build r/demo.yaml -o "$T/s" --store "$T/store-a" --no-lint --quiet)
assert_eq "$(sha256 "$T/a/demo-h100.sqfs")" "$(sha256 "$T/s/demo-h100.sqfs")" "image with SOURCE_DATE_EPOCH set"

note "one changed artifact byte: refused for its pin, no outputs"
cp "$T/r/artifacts/gsp_tu10x.bin" "$T/gsp.orig"
printf 'X' | dd of="$T/r/artifacts/gsp_tu10x.bin" bs=1 seek=1000 conv=notrunc status=none
expect_exit 1 "gsp-tu10x: sha256 mismatch: recipe pins" \
	"$INGOT" build "$T/r/demo.yaml" -o "$T/m" --store "$T/store-m" --no-lint
for n in $NAMES; do assert_no_file "$T/m/$n"; done
# the warm store does not shadow a changed source either
expect_exit 1 "gsp-tu10x: sha256 mismatch" \
	"$INGOT" build "$T/r/demo.yaml" -o "$T/a" --store "$T/store-a" --no-lint
assert_eq "$(sha256 "$T/b/demo-h100.sqfs")" "$(sha256 "$T/a/demo-h100.sqfs")" "previous outputs untouched"
echo "ok"
