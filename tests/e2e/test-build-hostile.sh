#!/bin/bash
# Hostile and conflicting artifacts: `ingot build` refuses each with a
# clear message, exit 1, and leaves nothing under the output names (nor
# temporaries) in the output directory.
. "$(dirname "$0")/lib.sh"

# mktar OUT SPEC...: a tar written by Python's tarfile (which, unlike GNU
# tar, writes whatever it is told).  SPEC is TYPE:NAME[:ARG] with TYPE
# f (file, ARG content), l (symlink, ARG target), h (hardlink, ARG
# target), c (char device), d (dir).
mktar() {
	python3 - "$@" <<'EOF'
import io, sys, tarfile
out, specs = sys.argv[1], sys.argv[2:]
with tarfile.open(out, "w", format=tarfile.PAX_FORMAT) as tf:
    for s in specs:
        t, name, arg = (s.split(":", 2) + [""])[:3]
        name = name.encode("utf-8", "surrogateescape").decode("utf-8", "surrogateescape")
        ti = tarfile.TarInfo(name)
        ti.mode = 0o644
        if t == "f":
            data = arg.encode()
            ti.size = len(data)
            tf.addfile(ti, io.BytesIO(data))
            continue
        if t == "l":
            ti.type, ti.linkname = tarfile.SYMTYPE, arg
        elif t == "h":
            ti.type, ti.linkname = tarfile.LNKTYPE, arg
        elif t == "c":
            ti.type, ti.devmajor, ti.devminor = tarfile.CHRTYPE, 8, 0
        elif t == "d":
            ti.type, ti.mode = tarfile.DIRTYPE, 0o755
        tf.addfile(ti)
EOF
}

# recipe FILE ARTIFACT-TAR [EXTRA-YAML]: a recipe with one tar artifact "bad"
recipe() {
	cat >"$1" <<EOF
name: hostile
version: "1"
epoch: 1700000000
artifacts:
  - name: bad
    kind: tar
    source: $(basename "$2")
    sha256: $(sha256 "$2")
${3:-}
EOF
}

# refused NAME MESSAGE SPEC...: build must fail with MESSAGE, no outputs
refused() {
	local name=$1 msg=$2
	shift 2
	note "$name"
	mktar "$T/$name.tar" "$@"
	recipe "$T/$name.yaml" "$T/$name.tar"
	expect_exit 1 "$msg" "$INGOT" build "$T/$name.yaml" -o "$T/out" --store "$T/store" --quiet
	[ -z "$(ls -A "$T/out" 2>/dev/null)" ] || fail "$name: output directory not empty: $(ls -A "$T/out")"
}

refused absolute "bad: archive entry '/etc/passwd': expected a relative path, got an absolute one" \
	"f:/etc/passwd:root::0:0"
refused dotdot "bad: archive entry 'usr/../../etc/cron.d/evil': path: '.' or '..' component" \
	"d:usr" "f:usr/../../etc/cron.d/evil:* * * * * root sh"
refused symlink-through "bad: archive entry 'lib/passwd': path goes through '/lib', which is a symlink from 'bad', not a directory" \
	"l:lib:/etc" "f:lib/passwd:evil"
refused device "bad: archive entry 'dev/sda': expected no device nodes, got a character device 8:0 (set 'allow-devices: true' to allow)" \
	"c:dev/sda"
refused hardlink-absolute "bad: hardlink target of '/etc/shadow': expected a relative path, got an absolute one" \
	"f:x:1" "h:y:/etc/shadow"
refused hardlink-outside "bad: hardlink target of '../outside': path: '.' or '..' component" \
	"f:x:1" "h:y:../outside"
refused hardlink-missing "bad: archive entry 'y': hardlink target 'nothere': expected a regular file earlier in the same artifact, got nothing" \
	"f:x:1" "h:y:nothere"
refused duplicate "bad: archive entry 'etc/conf': expected each path once, got it twice" \
	"f:etc/conf:one" "f:etc/conf:two"
refused non-utf8 "expected a UTF-8 name, got invalid bytes" \
	"f:caf$(printf '\xe9'):latin-1"

note "allow-devices: true lets the device through"
mktar "$T/dev.tar" "c:dev/sda"
recipe "$T/dev.yaml" "$T/dev.tar" "    allow-devices: true"
"$INGOT" build "$T/dev.yaml" -o "$T/dev-out" --store "$T/store" --quiet
unsquashfs -lln "$T/dev-out/hostile.sqfs" | grep -q '^crw-r--r-- 0/0 *8, *0 .*squashfs-root/dev/sda$' ||
	fail "device node missing from image: $(unsquashfs -lln "$T/dev-out/hostile.sqfs")"

note "two artifacts on one path: refused, unless the later one says replace"
mktar "$T/one.tar" "f:etc/motd:one"
mktar "$T/two.tar" "f:etc/motd:two"
cat >"$T/conflict.yaml" <<EOF
name: conflict
version: "1"
epoch: 1700000000
artifacts:
  - name: one
    kind: tar
    source: one.tar
    sha256: $(sha256 "$T/one.tar")
  - name: two
    kind: tar
    source: two.tar
    sha256: $(sha256 "$T/two.tar")
EOF
expect_exit 1 "two: path 'etc/motd' also written by 'one' (mark one artifact 'replace: true' to say which wins)" \
	"$INGOT" build "$T/conflict.yaml" -o "$T/out" --store "$T/store"
assert_no_file "$T/out/conflict.sqfs"
printf '    replace: true\n' >>"$T/conflict.yaml"
"$INGOT" build "$T/conflict.yaml" -o "$T/out2" --store "$T/store" --quiet
unsquashfs -q -cat "$T/out2/conflict.sqfs" etc/motd >"$T/motd"
assert_eq "two" "$(cat "$T/motd")" "replaced content"

note "an inline file on an artifact's path names the recipe line"
cat >>"$T/conflict.yaml" <<EOF
files:
  - path: /etc/motd
    content: "three"
EOF
expect_exit 1 "conflict.yaml:15:5: files[0]: files: path 'etc/motd' also written by 'two'" \
	"$INGOT" build "$T/conflict.yaml" -o "$T/out3" --store "$T/store"
[ -z "$(ls -A "$T/out3" 2>/dev/null)" ] || fail "outputs after a failed build: $(ls -A "$T/out3")"

note "nothing hostile reached the store's blobs under a wrong name"
for b in "$T"/store/blobs/*/*; do
	assert_eq "$(basename "$b")" "$(sha256 "$b")" "blob name"
done
echo "ok"
