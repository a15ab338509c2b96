# Shared by test-build-filecache.sh and test-store-gc.sh (sourced after
# lib.sh): three generated artifacts, a second version of the last one,
# recipes v1.yaml / v2.yaml in $T and build RECIPE OUT STORE.
note "generate three artifacts and a second version of one"
mkdir -p "$T/art"
python3 - "$T/art" <<'EOF'
import io, os, random, sys, tarfile
out = sys.argv[1]
def blob(seed, n):
    r = random.Random(seed)
    return bytes(r.choice(b"abcdefghij \n") if i % 3 else r.randrange(256) for i in range(n))
def tar(name, files, gz):
    with tarfile.open(os.path.join(out, name), "w:gz" if gz else "w", format=tarfile.GNU_FORMAT) as t:
        for path, data in files:
            ti = tarfile.TarInfo(path)
            ti.size, ti.mode, ti.mtime, ti.uid, ti.gid = len(data), 0o644, 1, 0, 0
            t.addfile(ti, io.BytesIO(data))
tar("base.tar.gz", [("usr/lib/libbig.so", blob(1, 700000)), ("usr/lib/shadowed", blob(2, 300000)),
                    ("usr/share/small", blob(3, 900))], True)
tar("mid.tar", [("usr/lib/libmid.so", blob(4, 400000)), ("usr/lib/shadowed", blob(5, 200000))], False)
for v in (1, 2):
    tar(f"top-v{v}.tar.gz", [("usr/bin/tool", blob(10 + v, 150000)), ("usr/share/note", blob(6, 5000))], True)
EOF
recipe() { # recipe FILE TOPVERSION
	{ recipe_head fc; cat <<EOF; } >"$1"
  block-size: 65536
artifacts:
  - name: base
    kind: tar
    source: art/base.tar.gz
    sha256: $(sha256 "$T/art/base.tar.gz")
  - name: mid
    kind: tar
    source: art/mid.tar
    replace: true
    sha256: $(sha256 "$T/art/mid.tar")
  - name: top
    kind: tar
    source: art/top-v$2.tar.gz
    sha256: $(sha256 "$T/art/top-v$2.tar.gz")
EOF
}
recipe "$T/v1.yaml" 1
recipe "$T/v2.yaml" 2
build() { (cd "$T" && "$INGOT" build "$1" -o "$2" --store "$3" --workers 2 --no-lint); }
