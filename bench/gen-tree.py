#!/usr/bin/env python3
"""Generate the benchmark input deterministically: a driver/toolkit-like
tree and the same tree packed as pinned artifacts plus a recipe.

    gen-tree.py SIZE_MB OUTDIR [LEVEL] [BLOCK]

OUTDIR/tree/       the unpacked tree (what mksquashfs and gensquashfs pack)
OUTDIR/art/        headers.tar.gz, python.tar.gz, python-v2.tar.gz,
                   libs.tar.gz, blobs.tar
OUTDIR/bench.yaml  the recipe pinning them
OUTDIR/bench-v2.yaml  the same with python-v2.tar.gz (one file changed)

Shape (fractions of SIZE_MB): ~10 % many small files (C headers of 1-12
KiB, Python modules of 1-24 KiB), ~50 % shared libraries of 1-24 MiB,
~40 % a few large firmware/data blobs.  Contents are pseudo-random bytes
mapped onto small alphabets, so they compress like real code and data:
headers and Python compress about 2x, libraries and blobs 1.1-1.3x with zstd."""
import hashlib, io, os, random, subprocess, sys, tarfile

SIZE = int(sys.argv[1]) << 20
OUT = sys.argv[2]
LEVEL = int(sys.argv[3]) if len(sys.argv) > 3 else 3
BLOCK = int(sys.argv[4]) if len(sys.argv) > 4 else 131072
EPOCH = 1760000000
rnd = random.Random(20261001)

ALPHA = b" \n_(){};=aeinrst"   # 16 symbols: 4 bits of entropy a byte
TEXT_TABLE = bytes(ALPHA[i % len(ALPHA)] for i in range(256))
CODE_TABLE = bytes((i * 37) & 0x1f | 0x40 for i in range(256))   # 32 symbols: 5 bits


def text(n):
    return rnd.randbytes(n).translate(TEXT_TABLE)


def code(n):
    # Shared-library-like: runs of "instructions" (compressible) and
    # random data (constants, compressed sections).
    out, left = [], n
    while left > 0:
        k = min(left, rnd.randint(4096, 65536))
        b = rnd.randbytes(k)
        out.append(b.translate(CODE_TABLE) if rnd.random() < 0.7 else b)
        left -= k
    return b"".join(out)


def randbytes(n):
    # random.randbytes() stops at 256 MiB (2^31 bits); in pieces beyond
    # that (the 4 GiB input's blobs), as one call below (the same bytes).
    if n < 1 << 27:
        return rnd.randbytes(n)
    return b"".join(rnd.randbytes(min(1 << 26, n - i)) for i in range(0, n, 1 << 26))


def blob(n):
    half = n // 2
    return randbytes(half) + code(n - half)


tree = os.path.join(OUT, "tree")
art = os.path.join(OUT, "art")
os.makedirs(art, exist_ok=True)
files = {}   # group -> [path], in generation order; contents go straight to disk


def add(group, path, data):
    files.setdefault(group, []).append(path)
    p = os.path.join(tree, path)
    os.makedirs(os.path.dirname(p), exist_ok=True)
    with open(p, "wb") as f:
        f.write(data)
    os.utime(p, (EPOCH, EPOCH))


budget = SIZE
small = budget // 10
i = 0
while small > 0:
    n = rnd.randint(1024, 12288)
    add("headers", "usr/include/cuda-bench/%s/h%05d.h" % ("abcdefgh"[i % 8], i), text(n))
    small -= n
    if i % 2 == 0:
        m = rnd.randint(1024, 24576)
        add("python", "usr/lib/python3/dist-packages/benchpkg/m%d/mod%05d.py" % (i % 16, i), text(m))
        small -= m
    i += 1
libs = budget // 2
j = 0
while libs > 0:
    n = min(libs, rnd.randint(1 << 20, 24 << 20))
    add("libs", "usr/lib/x86_64-linux-gnu/libbench%03d.so.580.95.05" % j, code(n))
    libs -= n
    j += 1
blobs = budget - budget // 10 - budget // 2
k = 0
while blobs > 0:
    n = min(blobs, max(1 << 20, budget // 8))
    add("blobs", "lib/firmware/bench/gsp_%02d.bin" % k, blob(n))
    blobs -= n
    k += 1


def pack(name, paths, compress, patch=None):
    """Stream a deterministic tar (sorted, fixed owner and times) of paths
    from the tree, through gzip -1 -n when compress; patch = (path, extra
    bytes appended to that file in the archive only)."""
    with open(os.path.join(art, name), "wb") as f:
        gz = subprocess.Popen(["gzip", "-1", "-n", "-c"], stdin=subprocess.PIPE, stdout=f) if compress else None
        sink = gz.stdin if gz else f
        with tarfile.open(fileobj=sink, mode="w|", format=tarfile.GNU_FORMAT) as t:
            dirs = set()
            for path in sorted(paths):
                parts = path.split("/")
                for d in range(1, len(parts)):
                    dp = "/".join(parts[:d])
                    if dp not in dirs:
                        dirs.add(dp)
                        ti = tarfile.TarInfo(dp); ti.type = tarfile.DIRTYPE; ti.mode = 0o755; ti.mtime = EPOCH
                        t.addfile(ti)
                extra = patch[1] if patch and patch[0] == path else b""
                ti = tarfile.TarInfo(path)
                ti.size = os.path.getsize(os.path.join(tree, path)) + len(extra)
                ti.mode = 0o644; ti.mtime = EPOCH
                with open(os.path.join(tree, path), "rb") as src:
                    t.addfile(ti, io.BytesIO(src.read() + extra) if extra else src)
        if gz:
            gz.stdin.close()
            if gz.wait() != 0:
                raise SystemExit("gen-tree: gzip failed")
    h = hashlib.sha256()
    with open(os.path.join(art, name), "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


shas = {}
shas["headers"] = pack("headers.tar.gz", files["headers"], True)
shas["python"] = pack("python.tar.gz", files["python"], True)
# bench-v2: the same but one Python file patched (the tree matches v1)
shas["python-v2"] = pack("python-v2.tar.gz", files["python"], True, (files["python"][0], b"\n# patched\n"))
shas["libs"] = pack("libs.tar.gz", files["libs"], True)
shas["blobs"] = pack("blobs.tar", files["blobs"], False)


def recipe(name, python):
    s = (f'name: bench\nversion: "1"\nepoch: {EPOCH}\nserial: 1\n'
         f"compression:\n  algorithm: zstd\n  level: {LEVEL}\n  block-size: {BLOCK}\n"
         "artifacts:\n")
    for a, src in (("headers", "headers.tar.gz"), ("python", python), ("libs", "libs.tar.gz"),
                   ("blobs", "blobs.tar")):
        key = "python-v2" if src == "python-v2.tar.gz" else a
        s += f"  - name: {a}\n    kind: tar\n    source: art/{src}\n    sha256: {shas[key]}\n"
    with open(os.path.join(OUT, name), "w") as f:
        f.write(s)


recipe("bench.yaml", "python.tar.gz")
recipe("bench-v2.yaml", "python-v2.tar.gz")
nfiles = sum(len(v) for v in files.values())
print(f"tree: {nfiles} files, {SIZE >> 20} MiB; headers {len(files['headers'])}, "
      f"python {len(files['python'])}, libs {len(files['libs'])}, blobs {len(files['blobs'])}")
