#!/bin/bash
# Large files through the cold build's threads (issue 39): a gzip
# artifact inflated ahead of the tar reader, the SBOM's SHA-1 of files of
# 1 MiB and more made on a thread beside the feed.  Sizes around that
# threshold and the block size: every file's SHA-1 and SHA-256 in the
# SPDX document are its bytes' (unsquashfs), the outputs are the same
# bytes with 1 and 3 workers, and a rebuild from the warm file cache
# writes the same SBOM.
. "$(dirname "$0")/lib.sh"

note "generate a gzip and a plain tar artifact with files of 0 B to 3 MiB"
mkdir -p "$T/art"
python3 - "$T/art" <<'EOF'
import io, os, random, sys, tarfile
out = sys.argv[1]
def blob(seed, n):
    r = random.Random(seed)
    return bytes(r.choice(b"abcdefgh\n") if (i >> 12) % 2 else r.randrange(256) for i in range(n))
M, B = 1 << 20, 65536
sizes = [0, 1, B - 1, B, M - 1, M, M + 1, 3 * M + 12345, 2 * M]
def tar(name, files, gz):
    with tarfile.open(os.path.join(out, name), "w:gz" if gz else "w", format=tarfile.GNU_FORMAT) as t:
        for path, data in files:
            ti = tarfile.TarInfo(path)
            ti.size, ti.mode, ti.mtime, ti.uid, ti.gid = len(data), 0o644, 1, 0, 0
            t.addfile(ti, io.BytesIO(data))
tar("big.tar.gz", [(f"usr/lib/f{n}", blob(n, n)) for n in sizes], True)
tar("plain.tar", [("usr/share/p", blob(7, M + B + 3)), ("usr/share/q", blob(8, 100))], False)
EOF
{ recipe_head large; cat <<EOF; } >"$T/r.yaml"
  block-size: 65536
artifacts:
  - name: big
    kind: tar
    source: art/big.tar.gz
    sha256: $(sha256 "$T/art/big.tar.gz")
  - name: plain
    kind: tar
    source: art/plain.tar
    sha256: $(sha256 "$T/art/plain.tar")
EOF
build() { (cd "$T" && "$INGOT" build r.yaml -o "$1" --store "$2" --workers "$3" --no-lint -q); }

note "cold builds with 1 and 3 workers: the same outputs"
build "$T/o1" "$T/s1" 1
build "$T/o3" "$T/s3" 3
for n in large.sqfs large.verity large.manifest.json large.spdx.json; do
	assert_eq "$(sha256 "$T/o3/$n")" "$(sha256 "$T/o1/$n")" "$n with 1 and 3 workers"
done

note "every file's SHA-1 and SHA-256 are its bytes'"
unsquashfs -q -n -d "$T/x" "$T/o3/large.sqfs" >/dev/null
python3 - "$T/o3/large.spdx.json" "$T/x" <<'PY' || fail "SPDX checksums differ from the bytes"
import hashlib, json, sys
doc = json.load(open(sys.argv[1]))
n = 0
for f in doc["files"]:
    data = open(sys.argv[2] + "/" + f["fileName"], "rb").read()
    sums = {c["algorithm"]: c["checksumValue"] for c in f["checksums"]}
    assert sums == {"SHA1": hashlib.sha1(data).hexdigest(), "SHA256": hashlib.sha256(data).hexdigest()}, f["fileName"]
    n += len(data) >= 1 << 20
assert n == 5, n   # the files that took the SHA-1 thread
PY

note "a rebuild from the warm store: the same SBOM and image"
rm -rf "$T/o1"
build "$T/o1" "$T/s3" 2
for n in large.sqfs large.spdx.json; do
	assert_eq "$(sha256 "$T/o1/$n")" "$(sha256 "$T/o3/$n")" "$n from the warm store"
done
exit 0
