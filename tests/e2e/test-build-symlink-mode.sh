#!/bin/bash
# Symlinks are stored as every tool writes them: mode 0777 in the image and
# the manifest, whatever mode the archive claims (here 0755, as the verify
# layer's systemd unit links were).  No extractor can set a symlink's mode,
# so `ingot verify --root` on an unsquashfs of the image must pass.
. "$(dirname "$0")/lib.sh"
command -v unsquashfs >/dev/null || skip "unsquashfs not installed"
cd "$T"

python3 - <<'PY'
import hashlib, io, tarfile
with tarfile.open("a.tar", "w", format=tarfile.GNU_FORMAT) as t:
    d = tarfile.TarInfo("etc/systemd/system/multi-user.target.wants")
    d.type = tarfile.DIRTYPE; d.mode = 0o755
    t.addfile(d)
    f = tarfile.TarInfo("usr/lib/systemd/system/ingot-verify.service")
    f.size = 2; f.mode = 0o644
    t.addfile(f, io.BytesIO(b"x\n"))
    for name, mode in (("ingot-verify.service", 0o755), ("rel.service", 0o644)):
        l = tarfile.TarInfo("etc/systemd/system/multi-user.target.wants/" + name)
        l.type = tarfile.SYMTYPE; l.mode = mode
        l.linkname = "/usr/lib/systemd/system/ingot-verify.service"
        t.addfile(l)
h = hashlib.sha256(open("a.tar", "rb").read()).hexdigest()
open("r.yaml", "w").write(f"""name: ln
version: "1"
epoch: 0
artifacts:
  - name: a
    source: a.tar
    kind: tar
    sha256: {h}
""")
PY
tar -tvf a.tar | grep -q '^lrwxr-xr-x .*wants/ingot-verify.service' || fail "fixture: link not 0755 in the tar"

note "build"
"$INGOT" build r.yaml -o out --store st --no-lint >/dev/null

note "the manifest and the image say 0777"
modes=$(python3 -c 'import json,sys
print(" ".join(f["mode"] for f in json.load(open("out/ln.manifest.json"))["files"] if f["type"] == "symlink"))')
assert_eq "0777 0777" "$modes" "manifest modes of the symlinks"
links=$("$INGOT" inspect out/ln.sqfs | grep -c '^lrwxrwxrwx' || true)
assert_eq 2 "$links" "symlinks stored 0777 in the image (ingot inspect)"

note "ingot verify --root on the unsquashfs'd image passes"
unsquashfs -q -n -d u out/ln.sqfs >/dev/null
expect_exit 0 "pass  files" "$INGOT" verify --manifest out/ln.manifest.json --allow-unsigned \
	--root u --tcti none
echo "ok"
