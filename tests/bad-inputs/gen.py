#!/usr/bin/env python3
"""Generate the inputs of the bad-input table (tests/bad-inputs/cases.txt)
into DIR, deterministically:

    gen.py DIR

Archives are built with tarfile (plain tar, so no timestamps from gzip),
recipes pin them by their real sha256 unless the case is about a wrong
pin.  TPM event logs are written byte by byte in the TCG crypto-agile
format (TCG PC Client PFP, section 10).  Inputs that need ingot itself
(keys, envelopes, quotes) are made by test-bad-input.sh with the binary."""
import hashlib, io, json, os, struct, sys, tarfile

D = sys.argv[1]
os.makedirs(D, exist_ok=True)


def write(name, data, mode=0o644):
    p = os.path.join(D, name)
    os.makedirs(os.path.dirname(p), exist_ok=True)
    with open(p, "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())
    os.chmod(p, mode)
    return hashlib.sha256(data if isinstance(data, bytes) else data.encode()).hexdigest()


def tar(entries):
    """entries: (name, kind, payload); name may be bytes (non-UTF-8)."""
    bio = io.BytesIO()
    with tarfile.open(fileobj=bio, mode="w", format=tarfile.GNU_FORMAT, encoding="utf-8",
                      errors="surrogateescape") as t:
        for name, kind, payload in entries:
            if isinstance(name, bytes):
                name = name.decode("utf-8", "surrogateescape")
            ti = tarfile.TarInfo(name)
            ti.mtime = 1
            ti.mode = 0o755 if kind == "dir" else 0o644
            if kind == "file":
                ti.size = len(payload)
                t.addfile(ti, io.BytesIO(payload))
                continue
            ti.type = {"dir": tarfile.DIRTYPE, "sym": tarfile.SYMTYPE, "hard": tarfile.LNKTYPE,
                       "chr": tarfile.CHRTYPE, "blk": tarfile.BLKTYPE}[kind]
            if kind in ("sym", "hard"):
                ti.linkname = payload
            if kind in ("chr", "blk"):
                ti.devmajor, ti.devminor = 8, 0
            t.addfile(ti)
    return bio.getvalue()


def recipe(name, artifacts="", extra="", head=None):
    body = head if head is not None else 'name: bad\nversion: "1"\nepoch: 1760000000\nserial: 3\n'
    if artifacts:
        body += "artifacts:\n" + artifacts
    body += extra
    write(name, body)


def art(name, source, sha, kind="tar", more=""):
    return (f"  - name: {name}\n    kind: {kind}\n    source: {source}\n"
            f"    sha256: {sha}\n" + more)


GOOD = [("usr", "dir", None), ("usr/lib", "dir", None),
        ("usr/lib/libgood.so.1", "file", b"\x7fELF good library\n" * 64),
        ("usr/lib/libgood.so", "sym", "libgood.so.1"),
        ("etc/good.conf", "file", b"ok=1\n")]
good = write("good.tar", tar(GOOD))
recipe("good.yaml", art("good", "good.tar", good))

# --- recipe syntax and schema
recipe("yaml-syntax.yaml", "", head='name: bad\nversion: "1"\nepoch: [1, 2\n')
recipe("wrong-type.yaml", "", head='name: bad\nversion: "1"\nepoch: yesterday\n')
recipe("unknown-key.yaml", art("good", "good.tar", good), extra="colour: red\n")
recipe("unknown-artifact-key.yaml", art("good", "good.tar", good, more="    checksum: md5\n"))
recipe("bad-name.yaml", "", head='name: "Bad Name!"\nversion: "1"\nepoch: 1\n')
recipe("block-size.yaml", art("good", "good.tar", good),
       extra="compression:\n  algorithm: zstd\n  block-size: 100000\n")
recipe("compressor.yaml", art("good", "good.tar", good), extra="compression:\n  algorithm: brotli\n")
recipe("epoch-range.yaml", "", head='name: bad\nversion: "1"\nepoch: 99999999999\n')
recipe("missing-sha.yaml", "  - name: good\n    kind: tar\n    source: good.tar\n")
recipe("short-sha.yaml", art("good", "good.tar", good[:40]))
recipe("wrong-sha.yaml", art("good", "good.tar", hashlib.sha256(b"something else").hexdigest()))
recipe("missing-artifact.yaml", art("gone", "no-such-file.tar", good))
recipe("dup-artifact.yaml", art("good", "good.tar", good) + art("good", "good.tar", good))
recipe("inline-traversal.yaml", "", extra='files:\n  - path: /etc/../../x\n    content: "x"\n')
recipe("dest-traversal.yaml", art("good", "good.tar", good, more="    dest: /opt/../../escape\n"))
recipe("bad-mode.yaml", "", extra='files:\n  - path: /etc/x\n    content: "x"\n    mode: 0999\n')
# Nothing to put in the image: no sections, or every section empty.
recipe("empty-recipe.yaml", "")
recipe("empty-sections.yaml", "", extra="artifacts: []\nfiles: []\ndirectories: []\nsymlinks: []\n")

# --- hostile archives
def hostile(case, entries, kind="tar", more=""):
    sha = write(case + ".tar", tar(entries))
    recipe(case + ".yaml", art(case, case + ".tar", sha, kind=kind, more=more))

hostile("traversal", [("usr/../../etc/shadow", "file", b"x")])
hostile("absolute", [("/etc/shadow", "file", b"x")])
hostile("symlink-escape", [("usr", "sym", "/etc"), ("usr/passwd", "file", b"root::0:0::/:/bin/sh\n")])
hostile("symlink-dotdot", [("lib", "sym", "../../.."), ("lib/x", "file", b"x")])
hostile("device", [("dev/sda", "blk", None)])
hostile("chardev", [("dev/mem", "chr", None)])
hostile("dup-path", [("etc/a.conf", "file", b"1"), ("etc/a.conf", "file", b"2")])
hostile("non-utf8", [(b"etc/caf\xe9.conf", "file", b"x")])
hostile("hardlink-missing", [("etc/b", "hard", "etc/nothing")])
hostile("hardlink-outside", [("etc/b", "hard", "../../etc/passwd")])
# Two artifacts with the same path, no `replace:`: a conflict, not a silent win.
a1 = write("conflict1.tar", tar([("etc/x.conf", "file", b"one")]))
a2 = write("conflict2.tar", tar([("etc/x.conf", "file", b"two")]))
recipe("conflict.yaml", art("one", "conflict1.tar", a1) + art("two", "conflict2.tar", a2))
# A file where the next artifact needs a directory.
a3 = write("notdir.tar", tar([("opt", "file", b"file")]))
a4 = write("underfile.tar", tar([("opt/x", "file", b"x")]))
recipe("file-as-dir.yaml", art("f", "notdir.tar", a3) + art("g", "underfile.tar", a4))
# An empty file is not a tar archive ...
empty = write("empty.tar", b"")
recipe("zero-byte.yaml", art("empty", "empty.tar", empty))
# A giant file count (an archive bomb of empty files): refused at the
# entry limit (lowered from its default 1048576 to keep the table fast).
giant = write("giant.tar", tar([(f"d/f{i:05d}", "file", b"") for i in range(5000)]))
recipe("giant.yaml", art("giant", "giant.tar", giant))
# An archive with no entries, and one whose include matches nothing: an
# artifact that adds nothing to the image is refused, not built empty.
noent = write("noentries.tar", tar([]))
recipe("no-entries.yaml", art("none", "noentries.tar", noent))
recipe("include-nothing.yaml", art("good", "good.tar", good, more="    include: [\"usr/lib64/*\"]\n"))
# ... and garbage is not one either.
garbage = write("garbage.tar", b"this is not an archive\n" * 40)
recipe("garbage.yaml", art("garbage", "garbage.tar", garbage))
deb = write("garbage.deb", b"!<arch>\nnot really\n")
recipe("bad-deb.yaml", art("deb", "garbage.deb", deb, kind="deb"))

# --- recipe boot: sections (the UKI inputs; recipes/boot.c, builder/uki.c)
notpe = write("notpe.efi", b"MZ" + b"\0" * 100)
def boot(name, body):
    recipe(name, art("good", "good.tar", good), extra="boot:\n" + body)
def pin(path, sha):
    return "{source: %s, sha256: %s}" % (path, sha)
boot("boot-missing-init.yaml", "  kernel: %s\n  stub: %s\n" % (pin("notpe.efi", notpe), pin("notpe.efi", notpe)))
boot("boot-bad-module.yaml", "  kernel: %s\n  stub: %s\n  init: %s\n  modules: [\"dm verity\"]\n"
     % (pin("notpe.efi", notpe), pin("notpe.efi", notpe), pin("notpe.efi", notpe)))
boot("boot-not-pe.yaml", "  kernel: %s\n  stub: %s\n  init: %s\n"
     % (pin("notpe.efi", notpe), pin("notpe.efi", notpe), pin("notpe.efi", notpe)))
boot("boot-wrong-pin.yaml", "  kernel: %s\n  stub: %s\n  init: %s\n"
     % (pin("notpe.efi", good), pin("notpe.efi", notpe), pin("notpe.efi", notpe)))
# Hostile systemd-stubs (issue 24): the writer checks every PE header field
# it uses before using it.  The PE images come from the fuzz seeds' maker.
import importlib.util
_spec = importlib.util.spec_from_file_location(
    "gen_seeds", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fuzz", "gen-seeds.py"))
_seeds = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_seeds)
vmlinuz = write("vmlinuz.efi", _seeds.pe_image())
for case, kw in (("no-sections", dict(nsections=0)), ("no-section-data", dict(raw=0)),
                 ("falign-2g", dict(file_align=0x80000000)), ("salign-small", dict(sect_align=0x100))):
    stub = write("stub-%s.efi" % case, _seeds.pe_image(**kw))
    boot("boot-stub-%s.yaml" % case, "  kernel: %s\n  stub: %s\n  init: %s\n"
         % (pin("vmlinuz.efi", vmlinuz), pin("stub-%s.efi" % case, stub), pin("notpe.efi", notpe)))
# nccl-tests stdout with numbers it never prints (issue 24): a hex float,
# a negative bandwidth, nan as the average.  Also the fuzz seeds.
NCCL_HEAD = ("# nThread 1 nGpus 1 minBytes 1073741824 maxBytes 1073741824 step: 2(factor)\n"
             "#  Rank  0 Group  0 Pid   101 on      nodeA device  0 [0x18] NVIDIA H100 80GB HBM3\n"
             "#       size         count      type   redop    root     time   algbw   busbw #wrong"
             "     time   algbw   busbw #wrong\n")
def nccl(busbw="368.15", avg="368.0"):
    return (NCCL_HEAD + "  1073741824     268435456     float     sum      -1   5468.6  196.35  %s      0"
            "   5473.0  196.19  367.86      0\n# Out of bounds values : 0 OK\n"
            "# Avg bus bandwidth    : %s\n" % (busbw, avg))
write("nccl-hex.txt", nccl(busbw="0x1p30"))
write("nccl-negative.txt", nccl(busbw="-368.15"))
write("nccl-avg-nan.txt", nccl(avg="nan"))
write("nccl-avg-inf.txt", nccl(avg="inf"))
BOOT3 = "  kernel: %s\n  stub: %s\n  init: %s\n" % (pin("notpe.efi", notpe), pin("notpe.efi", notpe), pin("notpe.efi", notpe))
boot("boot-sb-no-cert.yaml", BOOT3 + "  secure-boot: {key: %s}\n" % pin("notpe.efi", notpe))
boot("boot-sb-unknown.yaml", BOOT3 + "  secure-boot: {key: %s, cert: %s, crt: x}\n"
     % (pin("notpe.efi", notpe), pin("notpe.efi", notpe)))
# --- artifact sources that are not regular files (issue 13.6): refused at
# once, never read.  special/ holds the FIFO (made by test-bad-input.sh;
# the table's snapshot skips that directory: reading a FIFO would block).
ANY = hashlib.sha256(b"anything").hexdigest()
recipe("src-devzero.yaml", art("zero", "/dev/zero", ANY))
recipe("src-devzero-file.yaml", art("zero", "/dev/zero", ANY, kind="file", more="    dest: /zero\n"))
recipe("src-fifo.yaml", art("fifo", "special/src.fifo", ANY))
recipe("src-dir.yaml", art("dir", "special", ANY, kind="deb"))
# Boot inputs follow the same source rules (issue 24), and a module is
# listed once.
for case, init in (("fifo", "special/src.fifo"), ("zero", "/dev/zero")):
    boot("boot-init-%s.yaml" % case, "  kernel: %s\n  stub: %s\n  init: %s\n"
         % (pin("notpe.efi", notpe), pin("notpe.efi", notpe), pin(init, ANY)))
boot("boot-module-twice.yaml", "  kernel: %s\n  stub: %s\n  init: %s\n  modules: [dm-mod, dm_mod]\n"
     % (pin("notpe.efi", notpe), pin("notpe.efi", notpe), pin("notpe.efi", notpe)))

# --- expensive work only after the pin (issue 13.7).  A bz2 bomb (a tar
# of one 256 MiB file of zeros, ~200 bytes) with a wrong pin is refused
# before it is decompressed, and with its right pin at a recipe limit of
# 64 MiB; a 1 PiB sparse entry (PAX GNU.sparse 0.1, 10 bytes of data in a
# 10 KiB tar) at the default limit, from its declared size.
import bz2
def one_file_tar(size):
    bio = io.BytesIO()
    with tarfile.open(fileobj=bio, mode="w", format=tarfile.GNU_FORMAT) as t:
        ti = tarfile.TarInfo("zeros.bin")
        ti.size, ti.mtime = size, 1
        t.addfile(ti, io.BytesIO(b"\0" * size))
    return bio.getvalue()
bomb = write("bomb.tar.bz2", bz2.compress(one_file_tar(256 << 20), 9))
recipe("bomb-wrong-pin.yaml", art("bomb", "bomb.tar.bz2", hashlib.sha256(b"not the bomb").hexdigest()))
recipe("bomb-limit.yaml", art("bomb", "bomb.tar.bz2", bomb), extra="max-unpacked-bytes: 67108864\n")
recipe("bad-limit.yaml", art("good", "good.tar", good), extra="max-unpacked-bytes: -1\n")
def sparse_tar(realsize):
    bio = io.BytesIO()
    with tarfile.open(fileobj=bio, mode="w", format=tarfile.PAX_FORMAT) as t:
        ti = tarfile.TarInfo("sparse.bin")
        ti.size, ti.mtime = 10, 1
        ti.pax_headers = {"GNU.sparse.major": "0", "GNU.sparse.minor": "1",
                          "GNU.sparse.name": "sparse.bin", "GNU.sparse.size": str(realsize),
                          "GNU.sparse.map": "%d,10" % (realsize - 10)}
        t.addfile(ti, io.BytesIO(b"x" * 10))
    return bio.getvalue()
sp = write("sparse-pib.tar", sparse_tar(1 << 50))
recipe("sparse-pib.yaml", art("sparse", "sparse-pib.tar", sp))
# Two artifacts, each under the limit, together over it.
recipe("limit-total.yaml", art("good", "good.tar", good) + art("one", "conflict1.tar", a1))

# --- .deb as strict as dpkg-deb (issue 13.12): debian-binary "2.N\n"
# first, then control.tar*, then data.tar*; only "_*" members in between.
def ar(members):
    out = b"!<arch>\n"
    for name, data in members:
        out += b"%-16s%-12d%-6d%-6d%-8s%-10d`\n" % (name.encode(), 0, 0, 0, b"100644", len(data))
        out += data + (b"\n" if len(data) % 2 else b"")
    return out
def gz(data):
    import gzip
    return gzip.compress(data, mtime=0)
CTL = gz(tar([("control", "file", b"Package: p\nVersion: 1.0-1\nArchitecture: all\n")]))
DATA = gz(tar(GOOD))
def deb(case, members):
    sha = write(case + ".deb", ar(members))
    recipe(case + ".yaml", art("deb", case + ".deb", sha, kind="deb"))
BIN = ("debian-binary", b"2.0\n")
deb("deb-good", [BIN, ("_gpgorigin", b"sig"), ("control.tar.gz", CTL), ("data.tar.gz", DATA)])
deb("deb-premature", [BIN, ("junk", b"x"), ("control.tar.gz", CTL), ("data.tar.gz", DATA)])
deb("deb-two-control", [BIN, ("control.tar.gz", CTL), ("control.tar.gz", CTL), ("data.tar.gz", DATA)])
deb("deb-name-junk", [BIN, ("control.tar.gz~", CTL), ("data.tar.gz", DATA)])
deb("deb-data-first", [BIN, ("data.tar.gz", DATA), ("control.tar.gz", CTL)])
deb("deb-version-3", [("debian-binary", b"3.0\n"), ("control.tar.gz", CTL), ("data.tar.gz", DATA)])
deb("deb-not-first", [("control.tar.gz", CTL), BIN, ("data.tar.gz", DATA)])
deb("deb-wrong-filter", [BIN, ("control.tar.gz", CTL), ("data.tar.xz", DATA)])
deb("deb-no-version", [BIN, ("control.tar.gz", gz(tar([("control", "file", b"Package: p\n")]))),
                       ("data.tar.gz", DATA)])
# the SBOM's purl is made of Package and Architecture: a name outside
# Debian's characters is refused, not escaped into a label
deb("deb-bad-package", [BIN, ("control.tar.gz", gz(tar([("control", "file",
                        b"Package: p?arch=all\nVersion: 1.0-1\nArchitecture: all\n")]))), ("data.tar.gz", DATA)])

# --- compression (issue 13.13): a gzip stream cut before its trailer gets
# a message (libarchive has none: it printed "(null)"); lzo is refused in
# the recipe, at its line:col.
import gzip as _gz
cut = write("notrailer.tar.gz", _gz.compress(tar(GOOD), mtime=0)[:-8])
recipe("gzip-no-trailer.yaml", art("cut", "notrailer.tar.gz", cut))
# gzip headers that gzip -t refuses (RFC 1952; issue 34): a reserved flag
# bit, another method than deflate, a wrong FHCRC, FEXTRA past the end
import zlib as _zl
_g = _gz.compress(tar(GOOD), mtime=0)
def gzhdr(case, flg, cm=8, more=b"", crc=None, body=_g[10:]):
    h = bytes([0x1F, 0x8B, cm, flg]) + _g[4:10] + more
    if crc is not None:
        h += struct.pack("<H", crc(h))
    recipe(case + ".yaml", art("hdr", case + ".tar.gz", write(case + ".tar.gz", h + body)))
gzhdr("gzip-reserved-flag", 0x20)
gzhdr("gzip-method", 0, cm=7)
gzhdr("gzip-fhcrc", 0x02, crc=lambda h: (_zl.crc32(h) & 0xFFFF) ^ 1)
gzhdr("gzip-fextra-past-end", 0x04, more=struct.pack("<H", 65535) + b"x" * 100, body=b"")
recipe("lzo.yaml", art("good", "good.tar", good), extra="compression:\n  algorithm: lzo\n")

# --- envelopes: JSON variants of a good one are made by the test script.

# --- TCG event logs
ALGS = {0x0004: 20, 0x000B: 32}


def spec_id(algs, event_size=None):
    ev = b"Spec ID Event03\0" + struct.pack("<IBBBB", 0, 0, 2, 0, 2)
    ev += struct.pack("<I", len(algs)) + b"".join(struct.pack("<HH", a, s) for a, s in algs)
    ev += b"\0"
    size = len(ev) if event_size is None else event_size
    return struct.pack("<II", 0, 3) + b"\0" * 20 + struct.pack("<I", size) + ev


def event2(pcr, typ, data, algs=((0x000B, 32),), size=None):
    rec = struct.pack("<III", pcr, typ, len(algs))
    for a, s in algs:
        rec += struct.pack("<H", a) + hashlib.new("sha256" if s == 32 else "sha1", data).digest()[:s]
    return rec + struct.pack("<I", len(data) if size is None else size) + data


base = spec_id([(0x000B, 32)])
write("log-good.bin", base + event2(15, 0x0D, b"ingot:v1 image=bad"))
write("log-huge-event.bin", base + event2(15, 0x0D, b"ingot", size=0xFFFFFFF0))
write("log-big-event.bin", base + event2(15, 0x0D, b"ingot", size=(1 << 20) + 1))
write("log-unknown-alg.bin", spec_id([(0x0099, 32)]) + event2(15, 0x0D, b"x", algs=((0x0099, 32),)))
write("log-truncated.bin", (base + event2(15, 0x0D, b"ingot:v1 image=bad"))[:-7])
write("log-no-specid.bin", struct.pack("<II", 0, 3) + b"\0" * 20 + struct.pack("<I", 4) + b"abcd")
write("log-undeclared-alg.bin", base + event2(15, 0x0D, b"x", algs=((0x0004, 20),)))
write("log-empty.bin", b"")

# --- names that would forge lines or run terminal sequences (issue 13.11):
# refused, the message one line with the name escaped.
ctl = write("ctl-name.tar", tar(GOOD + [("usr/lib/a\nERROR: forged\x1b[31m", "file", b"x")]))
recipe("ctl-name.yaml", art("ctl", "ctl-name.tar", ctl))
